/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel-CI suite of `inferscope-bpf bench --kci`: what each kernel
 * mechanism the tracer stands on costs, and whether the kernel delivers
 * every event.
 *
 * Mechanisms, each in isolation, in this process: a workload (calls of a
 * probe site of user/bench/bench_sites.h, a pipe ping-pong, page faults, a spin
 * loop, system calls) timed in batches without the mechanism, then with it
 * (bpf/bench.bpf.c's smallest program), in alternating order, round after
 * round. One round gives one figure: the difference of the two phases'
 * median batch times per op, divided by the hits the program counted per
 * op: ns per hit. The ring-buffer mechanisms' base line is a program on the
 * same hook that only counts, so their figure is what reserve + submit
 * add. Attach and detach of 100 uprobes are timed per round.
 *
 * Checks: N calls made, N hits counted, exactly, from several threads at
 * once, with the ring buffer full (hits = records delivered + drops
 * counted), with wakeups from uprobe context, and while other links on
 * the same sites come and go; N page faults made, N counted; a 99 Hz
 * sampler's count against the thread's CPU time.
 *
 * Needs root (or CAP_BPF and CAP_PERFMON) and BTF.
 */
#ifndef INFERSCOPE_BENCH_MECH_H
#define INFERSCOPE_BENCH_MECH_H

#include <jansson.h>
#include "bench_opts.h"
#include "bench_stats.h"
#include "ktap.h"

/* How many tests (mechanisms, then checks) bench_mech__run reports: the
 * plan's share of them. */
unsigned int bench_mech__count(const struct bench_opts *o);

/*
 * Runs them, one KTAP line each on k (figures as diagnostics), appending a
 * result object per test to mechanisms and checks. With a baseline (a
 * results document; NULL: none), a mechanism whose cost regressed against
 * it fails. 0: every test passed or was skipped; 1: one failed.
 */
int bench_mech__run(const struct bench_opts *o, struct ktap *k, json_t *baseline, json_t *mechanisms,
		    json_t *checks);

/* Compares every cost figure of res (one test's results) with the
 * baseline's (NULL: none) and says how each changed, as diagnostics on k,
 * or on stdout when k prints nothing; records the verdicts in res
 * ("vs_baseline"). False when a figure regressed. */
bool bench_mech__vs_baseline(struct ktap *k, json_t *baseline, json_t *res, const struct bench_cmp_opts *o);

/* The mechanism table and the checks' outcomes, in Markdown, on stdout. */
void bench_mech__print(json_t *mechanisms, json_t *checks);

/* Two pipes two threads bounce a byte over (the ping-pong workload: every
 * round trip two wakeups and two context switches). */
struct bench_pipes {
	int ab[2], ba[2];
};

/* The pong thread's main, given the pipes: sends back every byte read
 * from ab on ba, until a 0 byte or an error. */
void *bench_pong(void *pipes);

#endif
