/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `inferscope-bpf bench`: overhead benchmarks that need nothing but this
 * binary, so that kernel CI can run them anywhere. Each benchmark runs a
 * built-in workload in a child process, untraced and traced, interleaved
 * (A B A B ...), and reports medians and spread of both and of their ratio.
 * With thresholds, it is a regression gate: non-zero exit when a metric is
 * past its limit.
 */
#ifndef INFERSCOPE_BENCH_H
#define INFERSCOPE_BENCH_H

struct bench_opts {
	int rounds;			/* A/B pairs per benchmark */
	double seconds;			/* length of one measurement */
	const char *output;		/* JSON results, or NULL */
	const char *thresholds;		/* JSON {"bench.metric": limit}, or NULL */
	const char *only;		/* run only the benchmark of this name, or NULL */
	const char *tmpdir;		/* where recordings go while measuring */
	const char *self_exe;		/* this executable (the CUDA benchmarks probe it) */
};

/* 0: ran (and every threshold held); 1: a threshold was exceeded;
 * negative: could not run (message printed). */
int bench__run(const struct bench_opts *opts);

#endif
