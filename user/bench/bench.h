/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `inferscope-bpf bench`: overhead benchmarks that need nothing but this
 * binary, so that kernel CI can run them anywhere. Each benchmark runs a
 * built-in workload in a child process, untraced and traced, interleaved
 * (A B A B ...), and reports medians and spread of both and of their ratio.
 * With thresholds, it is a regression gate: non-zero exit when a metric is
 * past its limit. With kci, the kernel-CI suite runs first: each kernel
 * mechanism's cost and the exact delivery checks (user/bench/bench_mech.h); with
 * a baseline, every cost is compared with an earlier run's
 * (user/bench/bench_stats.h); with ktap, the results are KTAP (user/bench/ktap.h).
 */
#ifndef INFERSCOPE_BENCH_H
#define INFERSCOPE_BENCH_H

#include "bench_opts.h"

/* 0: ran (and every threshold held, every check passed, nothing regressed
 * against the baseline); 1: something did not; negative: could not run
 * (message printed). */
int bench__run(const struct bench_opts *opts);

#endif
