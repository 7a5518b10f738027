// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The baseline comparison of `bench --baseline` (user/bench/bench_stats.c) on
 * planted data: a regression (a baseline with halved costs) fails it,
 * noise alone does not (two sample sets drawn from one distribution, many
 * times over; two real runs of one kernel), a drift of the whole machine
 * smaller than the ratio does not, and too few rounds decide nothing.
 * Every number here is drawn from a seeded generator or read from a file:
 * the same on every run.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench_stats.h"

static const struct bench_cmp_opts defaults = { BENCH_CMP_DEFAULT_RATIO, BENCH_CMP_DEFAULT_ALPHA,
						BENCH_CMP_MIN_ROUNDS };

static uint64_t rng;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gaussian(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Rounds as a shared 2-core machine gives them: 3% noise around the
 * cost, and one round in ten disturbed (30% more). */
static void draw(double *v, size_t n, double cost)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = cost * (1 + 0.03 * gaussian()) * (uniform() < 0.1 ? 1.3 : 1);
}

static void test_summary(void **state)
{
	const double odd[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5 }, even[] = { 4, 1, 3, 2 };
	struct bench_summary s;

	(void)state;
	assert_int_equal(bench_stats__summarize(odd, 9, &s), 0);
	assert_true(s.median == 5 && s.q1 == 3 && s.q3 == 7 && s.min == 1 && s.max == 9);
	assert_int_equal(bench_stats__summarize(even, 4, &s), 0);
	assert_true(s.median == 2.5 && s.q1 == 1.75 && s.q3 == 3.25);
	assert_int_equal(bench_stats__summarize(even, 0, &s), -EINVAL);
}

static void test_mann_whitney(void **state)
{
	const double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 }, tied[] = { 3, 3, 3, 3, 3 };
	const double a[] = { 1, 2, 2, 3, 5, 8 }, b[] = { 2, 3, 4, 5, 9, 9, 11 };
	double p;

	(void)state;
	/* Complete separation of 5 and 5: U = 0, z = (12.5 - 0.5) / sqrt(25 * 11 / 12). */
	p = bench_stats__mann_whitney(lo, 5, hi, 5);
	assert_true(fabs(p - erfc(12 / sqrt(25.0 * 11 / 12) / sqrt(2))) < 1e-12);
	assert_true(p > 0.012 && p < 0.0125);
	/* Symmetric, and 1 where nothing differs. */
	assert_true(bench_stats__mann_whitney(hi, 5, lo, 5) == p);
	assert_true(bench_stats__mann_whitney(lo, 5, lo, 5) == 1);
	assert_true(bench_stats__mann_whitney(tied, 5, tied, 5) == 1);
	assert_true(bench_stats__mann_whitney(lo, 0, hi, 5) == 1);
	/* Ties across the samples: still a probability, still symmetric. */
	p = bench_stats__mann_whitney(a, 6, b, 7);
	assert_true(p > 0.05 && p <= 1);
	assert_true(bench_stats__mann_whitney(b, 7, a, 6) == p);
}

static void test_planted_regression_fails(void **state)
{
	double cur[15], base[15];
	struct bench_change c;
	size_t i;

	(void)state;
	rng = 1;
	draw(cur, 15, 5400);
	/* The baseline: the same costs, halved. */
	for (i = 0; i < 15; i++)
		base[i] = cur[i] / 2;
	bench_stats__compare(base, 15, cur, 15, BENCH_FIG_COST, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_REGRESSED);
	assert_true(fabs(c.ratio - 2) < 1e-9);
	assert_true(c.p < 1e-4);
	/* And the other way round it is an improvement, not a failure. */
	bench_stats__compare(cur, 15, base, 15, BENCH_FIG_COST, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_IMPROVED);
}

static void test_noise_alone_passes(void **state)
{
	double a[15], b[15];
	struct bench_change c;
	unsigned int seed, significant = 0;

	(void)state;
	for (seed = 1; seed <= 1000; seed++) {
		rng = seed * 2654435761u;
		draw(a, 15, 5400);
		draw(b, 15, 5400);
		bench_stats__compare(a, 15, b, 15, BENCH_FIG_COST, &defaults, &c);
		assert_int_not_equal(c.verdict, BENCH_REGRESSED);
		assert_int_not_equal(c.verdict, BENCH_IMPROVED);
		significant += c.p < defaults.alpha;
	}
	/* The test alone is wrong about 1% of the time, as it should be. */
	assert_true(significant < 30);
}

static void test_drift_below_ratio_passes(void **state)
{
	double a[15], b[15];
	struct bench_change c;
	unsigned int seed, significant = 0;
	size_t i;

	(void)state;
	/* A machine 20% slower in the second run (another job, a hotter
	 * host): significant, but within the ratio. */
	for (seed = 1; seed <= 200; seed++) {
		rng = seed * 40503u;
		draw(a, 15, 5400);
		draw(b, 15, 5400);
		for (i = 0; i < 15; i++)
			b[i] *= 1.2;
		bench_stats__compare(a, 15, b, 15, BENCH_FIG_COST, &defaults, &c);
		assert_int_equal(c.verdict, BENCH_SAME);
		significant += c.p < defaults.alpha;
	}
	assert_true(significant > 150);
}

static void test_rounds_needed(void **state)
{
	double a[7], b[7];
	struct bench_change c;
	unsigned int seed;
	size_t i;

	(void)state;
	/* Doubled costs are caught from 7 rounds a side... */
	for (seed = 1; seed <= 200; seed++) {
		rng = seed * 69069u;
		draw(a, 7, 5400);
		draw(b, 7, 5400);
		for (i = 0; i < 7; i++)
			b[i] *= 2;
		bench_stats__compare(a, 7, b, 7, BENCH_FIG_COST, &defaults, &c);
		assert_int_equal(c.verdict, BENCH_REGRESSED);
	}
	/* ... 5 a side can never reach p < 0.01 (0.012 at best) ... */
	bench_stats__compare(a, 5, b, 5, BENCH_FIG_COST, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_SAME);
	assert_true(c.p > 0.012);
	/* ... and fewer decide nothing. */
	bench_stats__compare(a, 4, b, 7, BENCH_FIG_COST, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_UNDECIDED);
	assert_string_equal(c.why_undecided, "too few rounds");
}

static void test_cost_at_noise_floor_undecided(void **state)
{
	const double base[] = { -20, 5, -3, 0, -8, 2, -1 }, cur[] = { 300, 280, 310, 290, 305, 295, 299 };
	struct bench_change c;

	(void)state;
	bench_stats__compare(base, 7, cur, 7, BENCH_FIG_COST, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_UNDECIDED);
	assert_string_equal(c.why_undecided, "baseline median at or below 0");
}

static void test_latency_held_to_ratio_squared(void **state)
{
	double a[15], b[15];
	struct bench_change c;
	size_t i;

	(void)state;
	rng = 99;
	draw(a, 15, 26);
	for (i = 0; i < 15; i++)
		b[i] = a[i] * 2;
	/* Twice the detach time of 100 uprobes: the wall clock's latencies
	 * move that much with the machine... */
	bench_stats__compare(a, 15, b, 15, BENCH_FIG_LATENCY, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_SAME);
	assert_true(c.limit == defaults.max_ratio * defaults.max_ratio);
	/* ... a CPU-time cost does not. */
	bench_stats__compare(a, 15, b, 15, BENCH_FIG_COST, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_REGRESSED);
	for (i = 0; i < 15; i++)
		b[i] = a[i] * 3;
	bench_stats__compare(a, 15, b, 15, BENCH_FIG_LATENCY, &defaults, &c);
	assert_int_equal(c.verdict, BENCH_REGRESSED);
}

static void test_change_within_spread_passes(void **state)
{
	const double old[] = { 10, 11, 12, 13, 14, 15, 16 }, cur[] = { 20, 20, 20, 21, 40, 60, 80 };
	struct bench_change c;

	(void)state;
	/* Every round above every baseline round (p = 0.002), the median 1.6x:
	 * but by less than this run's own interquartile range. */
	bench_stats__compare(old, 7, cur, 7, BENCH_FIG_COST, &defaults, &c);
	assert_true(c.p < 0.01);
	assert_true(c.ratio > defaults.max_ratio);
	assert_true(c.spread == 30);
	assert_int_equal(c.verdict, BENCH_SAME);
}

/* {"mechanisms": [{"name": name, "ns_per_hit": cost figure of v,
 * "base_ns_per_op": a figure that is no cost}]} */
static json_t *doc_of(const char *list, const char *name, const double *v, size_t n)
{
	json_t *t = json_pack("{s:s, s:o, s:o}", "name", name, "ns_per_hit", bench_stats__figure("ns", BENCH_FIG_COST, v, n),
			      "base_ns_per_op", bench_stats__figure("ns", BENCH_FIG_INFO, v, n));

	return json_pack("{s:[o]}", list, t);
}

static void test_compare_documents(void **state)
{
	double cur[15], half[15];
	struct bench_figure_change ch[4];
	json_t *base, *run, *test;
	size_t i;

	(void)state;
	rng = 7;
	draw(cur, 15, 5400);
	for (i = 0; i < 15; i++)
		half[i] = cur[i] / 2;
	run = doc_of("mechanisms", "uprobe_push", cur, 15);
	test = json_array_get(json_object_get(run, "mechanisms"), 0);
	/* Only the cost figure is compared, and the halved baseline fails it. */
	base = doc_of("mechanisms", "uprobe_push", half, 15);
	assert_int_equal(bench_stats__compare_test(base, test, &defaults, ch, 4), 1);
	assert_string_equal(ch[0].figure, "ns_per_hit");
	assert_int_equal(ch[0].change.verdict, BENCH_REGRESSED);
	json_decref(base);
	/* A baseline that holds the run itself: the same. */
	assert_int_equal(bench_stats__compare_test(run, test, &defaults, ch, 4), 1);
	assert_int_equal(ch[0].change.verdict, BENCH_SAME);
	/* The workloads' results are found too; a test the baseline lacks is
	 * not compared. */
	base = doc_of("results", "uprobe_push", half, 15);
	assert_int_equal(bench_stats__compare_test(base, test, &defaults, ch, 4), 1);
	json_decref(base);
	base = doc_of("mechanisms", "uprobe_stepped", half, 15);
	assert_int_equal(bench_stats__compare_test(base, test, &defaults, ch, 4), 0);
	json_decref(base);
	/* A baseline without the rounds (an older bench's) compares nothing. */
	base = doc_of("mechanisms", "uprobe_push", half, 15);
	json_object_del(json_object_get(json_array_get(json_object_get(base, "mechanisms"), 0), "ns_per_hit"),
			"samples");
	assert_int_equal(bench_stats__compare_test(base, test, &defaults, ch, 4), 0);
	json_decref(base);
	/* Samples that are not numbers are refused. */
	base = doc_of("mechanisms", "uprobe_push", half, 15);
	json_array_set_new(json_object_get(json_object_get(json_array_get(json_object_get(base, "mechanisms"), 0),
							   "ns_per_hit"), "samples"), 0, json_string("x"));
	assert_int_equal(bench_stats__compare_test(base, test, &defaults, ch, 4), -EINVAL);
	json_decref(base);
	json_decref(run);
}

/* Every cost figure of run against base: how many regressed, how many
 * were compared. */
static void compare_runs(json_t *base, json_t *run, int *regressed, int *compared)
{
	static const char *const lists[] = { "mechanisms", "results" };
	struct bench_figure_change ch[8];
	json_t *t;
	size_t i, k;
	int n, j;

	*regressed = *compared = 0;
	for (k = 0; k < 2; k++)
		json_array_foreach(json_object_get(run, lists[k]), i, t) {
			n = bench_stats__compare_test(base, t, &defaults, ch, 8);
			assert_true(n >= 0);
			for (j = 0; j < n; j++) {
				*compared += ch[j].change.verdict != BENCH_UNDECIDED;
				*regressed += ch[j].change.verdict == BENCH_REGRESSED;
			}
		}
}

/* The samples of every cost figure of doc multiplied by f. */
static void scale_costs(json_t *doc, double f)
{
	static const char *const lists[] = { "mechanisms", "results" };
	const char *key;
	json_t *t, *fig, *x;
	size_t i, j, k;

	for (k = 0; k < 2; k++)
		json_array_foreach(json_object_get(doc, lists[k]), i, t)
			json_object_foreach(t, key, fig)
				if (json_is_string(json_object_get(fig, "cost")))
					json_array_foreach(json_object_get(fig, "samples"), j, x)
						json_real_set(x, json_number_value(x) * f);
}

static void test_two_real_runs(void **state)
{
	json_error_t jerr;
	json_t *a = json_load_file("tests/bench/kci-run-a.json", 0, &jerr);
	json_t *b = json_load_file("tests/bench/kci-run-b.json", 0, &jerr);
	struct bench_figure_change ch[8];
	int regressed, compared;
	size_t i;
	json_t *t;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	/* Two runs of one kernel on one machine: nothing regressed. */
	compare_runs(a, b, &regressed, &compared);
	assert_int_equal(regressed, 0);
	assert_true(compared >= 10);
	compare_runs(b, a, &regressed, &compared);
	assert_int_equal(regressed, 0);
	/* The baseline's costs halved: every probe-hit cost (CPU time, steady
	 * on this machine) fails, whatever the noise of the others. */
	scale_costs(a, 0.5);
	json_array_foreach(json_object_get(b, "mechanisms"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));

		if (strncmp(name, "uprobe", 6) && strcmp(name, "uretprobe") && strcmp(name, "ringbuf_no_wakeup"))
			continue;
		assert_int_equal(bench_stats__compare_test(a, t, &defaults, ch, 8), 1);
		if (ch[0].change.verdict != BENCH_REGRESSED)
			fail_msg("%s: verdict %d, ratio %.2f, p %.3g", name, ch[0].change.verdict, ch[0].change.ratio,
				 ch[0].change.p);
	}
	compare_runs(a, b, &regressed, &compared);
	assert_true(regressed >= 8);
	json_decref(a);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_mann_whitney),
		cmocka_unit_test(test_planted_regression_fails),
		cmocka_unit_test(test_noise_alone_passes),
		cmocka_unit_test(test_drift_below_ratio_passes),
		cmocka_unit_test(test_rounds_needed),
		cmocka_unit_test(test_cost_at_noise_floor_undecided),
		cmocka_unit_test(test_latency_held_to_ratio_squared),
		cmocka_unit_test(test_change_within_spread_passes),
		cmocka_unit_test(test_compare_documents),
		cmocka_unit_test(test_two_real_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
