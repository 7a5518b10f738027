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
 * loop alternates blocks of work with a launch after each piece and
 * blocks of work alone, and times each in the thread's CPU time: their
 * ratio is 1 + what a launch costs the thread, whatever the CPU's speed
 * did meanwhile (the project's VMs share cores: the same work takes 3 to
 * 7 us of CPU from one run to the next, and the launch rate, reported
 * beside it, moves by 25%). The figure is a traced run's ratio over the
 * mean of its two untraced runs': what tracing adds to each launch. What
 * it adds by the second whatever the thread does (sampler ticks,
 * scheduler events) falls on both kinds of block alike and is left out;
 * the recorder's own account, which has it, is reported beside it.
 * The noise is the change between the two untraced runs of a round. Its
 * own gate: it fails when the median cost is above what the budget allows
 * a run of that length by more than the median noise: budget x time, a
 * burst of budget x 1 s, and its last window (the hot path on for
 * BUDGET_MIN_ON_NS at least, at its cost per launch over the thread's CPU
 * time per launch), which the gap after it pays back, after the run.
 * The recorder's own account of the cost (user/record/budget_ctl.h) is reported
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
#include "bench_opts.h"
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
