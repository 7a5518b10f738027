/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The benchmarks of `inferscope-bpf bench` that run the test build's
 * stand-in libcuda (found beside this executable: tests/workloads and
 * tests/standin of its build folder; skipped, and said, without them):
 *
 * launch_bound: what the defaults cost a launch-bound job attached with
 * -p, the overhead budget's promise. launch_rate's "cpu" loop (8 us of CPU
 * work, then cuLaunchKernel, a synchronization every 1000 launches), each
 * round untraced, traced by a recorder with every default (`-p PID`), and
 * untraced again; the order of the three rotates from round to round. The
 * figure is the launching thread's CPU time per launch, traced over the
 * mean of the two untraced runs around it: what tracing added to the
 * thread, whatever else the machine ran (a busy host makes the launch rate
 * itself too noisy to tell 1% from 10%; the rate is reported beside it).
 * The noise is the change between the two untraced runs of a round. Its
 * own gate: it fails when the median cost is above what the budget allows
 * a run of that length by more than the median noise. The budget allows
 * budget x time, a burst credit of budget x 1 s, and the last window's
 * cost not yet paid back (the hot path on BUDGET_MIN_ON_NS at least, at
 * its cost per launch over the thread's time per launch).
 * The recorder's own account of the cost (user/budget_ctl.h) is reported
 * beside the measurement.
 *
 * attach_time: from the start of a recorder with every default to its
 * probes armed in a Python process that imported 40-odd extension
 * modules and loaded the stand-in libcuda (python3 3.10-3.13 in PATH):
 * loading the BPF objects, attaching and measuring the costs, probing the
 * process; each phase's median over the rounds.
 */
#ifndef INFERSCOPE_BENCH_LAUNCH_H
#define INFERSCOPE_BENCH_LAUNCH_H

#include <jansson.h>
#include "bench.h"
#include "ktap.h"

/* How many of them --only selects (they are not part of --kci). */
unsigned int bench_launch__count(const struct bench_opts *o);

/* Runs the selected ones, rounds rounds each, one KTAP line each on k;
 * their results go into doc (launch_bound, attach_time). 0: each ran (or
 * was skipped) and held; 1: one failed its gate or could not run. */
int bench_launch__run(const struct bench_opts *o, int rounds, struct ktap *k, json_t *doc);

/* Their figures, in Markdown, on stdout. */
void bench_launch__print(json_t *doc);

#endif
