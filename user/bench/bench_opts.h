/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `inferscope-bpf bench` was asked to run (user/bench/bench.h), shared by
 * the benchmarks and the kernel-CI suite (user/bench/bench_mech.h).
 */
#ifndef INFERSCOPE_BENCH_OPTS_H
#define INFERSCOPE_BENCH_OPTS_H

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
	bool kci;			/* the kernel-CI suite (user/bench/bench_mech.h) and the recorder workloads */
	bool quick;			/* with kci: its quick subset, shorter runs, no workloads */
	bool ktap;			/* KTAP on standard output instead of tables */
	const char *baseline;		/* results JSON of an earlier run to compare with, or NULL */
	double max_ratio;		/* baseline: a regression changes a median by more than this factor */
	double alpha;			/* baseline: ... and is significant at this level */
};

/* Whether --only (NULL: everything) names this benchmark or check. */
bool bench_opts__selects(const struct bench_opts *o, const char *name);

#endif
