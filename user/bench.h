/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `inferscope-bpf bench`: overhead benchmarks that need nothing but this
 * binary, so that kernel CI can run them anywhere. Each benchmark runs a
 * built-in workload in a child process, untraced and traced, interleaved
 * (A B A B ...), and reports medians and spread of both and of their ratio.
 * With thresholds, it is a regression gate: non-zero exit when a metric is
 * past its limit. With kci, the kernel-CI suite runs first: each kernel
 * mechanism's cost and the exact delivery checks (user/bench_mech.h); with
 * a baseline, every cost is compared with an earlier run's
 * (user/bench_stats.h); with ktap, the results are KTAP (user/ktap.h).
 */
#ifndef INFERSCOPE_BENCH_H
#define INFERSCOPE_BENCH_H

#include <stdbool.h>
#include "out_file.h"

struct bench_opts {
	int rounds;			/* A/B pairs per benchmark; 0: each part's default */
	double seconds;			/* length of one measurement */
	const char *output;		/* JSON results, or NULL */
	const char *thresholds;		/* JSON {"bench.metric": limit}, or NULL */
	const char *only;		/* run only the benchmarks of these names (comma-separated), or NULL */
	const char *tmpdir;		/* a fresh directory is made here for the recordings made while measuring */
	struct out_file_share share;	/* who may read output besides its owner (--group) */
	const char *self_exe;		/* this executable (the CUDA benchmarks probe it) */
	bool kci;			/* the kernel-CI suite (user/bench_mech.h) and the recorder workloads */
	bool quick;			/* with kci: its quick subset, shorter runs, no workloads */
	bool ktap;			/* KTAP on standard output instead of tables */
	const char *baseline;		/* results JSON of an earlier run to compare with, or NULL */
	double max_ratio;		/* baseline: a regression changes a median by more than this factor */
	double alpha;			/* baseline: ... and is significant at this level */
};

/* Whether --only (NULL: everything) names this benchmark or check. */
bool bench_opts__selects(const struct bench_opts *o, const char *name);

/* 0: ran (and every threshold held, every check passed, nothing regressed
 * against the baseline); 1: something did not; negative: could not run
 * (message printed). */
int bench__run(const struct bench_opts *opts);

#endif
