/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Statistics of benchmark rounds, and the comparison of a run with a
 * stored one (bench --baseline). Pure functions of the numbers and JSON
 * documents they are given: no clock, no BPF, no randomness.
 *
 * A figure is a cost measured once per round (ns per probe hit, ms to
 * attach 100 probes); the rounds are independent, interleaved samples of
 * it. A change against the baseline is a regression only when the median
 * grew by more than a ratio, by more than either run's interquartile range,
 * and significantly by a two-sided Mann-Whitney U test over the two runs'
 * rounds: rank-based, so one round that the machine disturbed cannot swing
 * it, and free of any assumption about the shape of the rounds'
 * distribution; its normal approximation (with tie and continuity
 * corrections) is deterministic, and at a level of 0.01 needs 6 rounds a
 * side to ever be significant.
 *
 * The test sees the spread within a run, not how far a whole run moves
 * with the state of the machine: that is what the ratio is for. Costs
 * timed in CPU time of the thread that pays them are steady from run to
 * run; latencies timed by the wall clock (detach waiting for an RCU grace
 * period, wakeups, whole workloads) move more, and are held to the ratio
 * squared.
 */
#ifndef INFERSCOPE_BENCH_STATS_H
#define INFERSCOPE_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

struct bench_summary {
	size_t n;
	double median, q1, q3;	/* quartiles: linear interpolation between order statistics */
	double min, max;
};

/* Summary of v[0..n) (n >= 1; v is not modified). 0 or -EINVAL/-ENOMEM. */
int bench_stats__summarize(const double *v, size_t n, struct bench_summary *s);

/* Two-sided p-value of the Mann-Whitney U test that a and b come from one
 * distribution; 1 when it cannot tell (a side empty, every value tied). */
double bench_stats__mann_whitney(const double *a, size_t na, const double *b, size_t nb);

enum bench_figure_kind {
	BENCH_FIG_INFO,		/* shown, never compared */
	BENCH_FIG_COST,		/* a cost in CPU time: held to the ratio */
	BENCH_FIG_LATENCY,	/* a cost by the wall clock: held to the ratio squared */
};

enum bench_verdict {
	BENCH_SAME,		/* within the ratio or the spread, or not significant */
	BENCH_REGRESSED,	/* costlier past the ratio and the spread, and significant */
	BENCH_IMPROVED,		/* cheaper past the ratio and the spread, and significant */
	BENCH_UNDECIDED,	/* too few rounds, or a baseline median at or below 0 */
};

struct bench_cmp_opts {
	double max_ratio;	/* > 1: a change of a cost smaller than this factor is never a regression */
	double alpha;		/* significance level of the test */
	size_t min_rounds;	/* fewer rounds on either side: undecided */
};

#define BENCH_CMP_DEFAULT_RATIO 1.5
#define BENCH_CMP_DEFAULT_ALPHA 0.01
#define BENCH_CMP_MIN_ROUNDS 5

struct bench_change {
	enum bench_verdict verdict;
	double old_median, new_median;
	double ratio;		/* new / old median; 0 when undecided by the baseline */
	double limit;		/* the ratio it was held to */
	double spread;		/* the larger interquartile range of the two */
	double p;
	size_t old_n, new_n;
	const char *why_undecided;	/* BENCH_UNDECIDED: why, in words */
};

/* A figure of kind k (BENCH_FIG_COST or _LATENCY) of a baseline run
 * against this run's. */
void bench_stats__compare(const double *old, size_t old_n, const double *cur, size_t cur_n,
			  enum bench_figure_kind k, const struct bench_cmp_opts *o, struct bench_change *c);

/* A figure as the results JSON holds it: {"unit", "cost", "median", "q1",
 * "q3", "min", "max", "samples": [one value per round, in order]}; a cost
 * (compared against a baseline, lower is better) is "cost": "cpu" or
 * "latency", anything else "cost": false. NULL on error. */
json_t *bench_stats__figure(const char *unit, enum bench_figure_kind k, const double *v, size_t n);

struct bench_figure_change {
	const char *figure;	/* name of the figure in the test's object */
	struct bench_change change;
};

/*
 * Compares every cost figure of test (one result object of this run, with
 * a "name") with the figure of that name of the test of the same name in
 * baseline (a whole results document: its "mechanisms", "checks" or
 * "results"). Fills up to max entries; returns how many figures were
 * compared (0 when the baseline lacks the test, or its rounds: a bench
 * that kept none wrote it), or -EINVAL for a figure whose samples are not
 * numbers.
 */
int bench_stats__compare_test(json_t *baseline, json_t *test, const struct bench_cmp_opts *o,
			      struct bench_figure_change *out, size_t max);

/* "ns_per_hit 7290 -> 14580 ns (x2.00 > x1.5, +7290 > IQR 210, Mann-Whitney
 * p=0.0002 < 0.01, 15/15 rounds): REGRESSION" */
void bench_stats__describe(char *buf, size_t len, const struct bench_figure_change *fc, const char *unit,
			   double alpha);

#endif
