/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the tracer costs a target thread on this host, measured by the
 * recorder once its probes are live, on threads of its own made a target
 * for the measurement (their events are discarded): nothing is assumed
 * from another machine. A uprobe hit costs 0.5 us on the GPU hosts and 1.2
 * to 12 us on the project's VM, a traced page fault 0.5 to 3 us; the
 * overhead budget (user/record/budget_ctl.h) charges each thing the events tell
 * happened on a target thread at its cost here.
 *
 * Each figure is an A/B measurement: one operation (a call, a page
 * touched, a pipe round trip, a stretch of CPU work) timed one by one with
 * the mechanism off and on, in alternating phases where switching is
 * cheap; the mean of the fastest 90% of each phase (a preemption or an
 * interrupt inside a timing is not the mechanism's; the fastest half for
 * a long op that a busy host preempts often), on minus off.
 */
#ifndef INFERSCOPE_BUDGET_COST_H
#define INFERSCOPE_BUDGET_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "tracer.h"

struct tracer_costs {
	double hit_ns;		/* an entry uprobe hit (the CUDA hot path's program, push %rbp emulated) */
	double pair_ns;		/* an entry and a return probe hit ("+ret" calls) */
	double fault_ns;	/* a page fault of a target thread, traced; 0: faults not traced */
	double sched_ns;	/* a scheduler event of a target thread: a switch or a wakeup */
	double tick_ns;		/* a tick of the CPU-clock sampler on a target thread */
	unsigned int tick_hz;	/* the sampler's rate on every CPU; 0: no sampler */
};

/* One A/B measurement: op timed ops times per phase, set switching the
 * mechanism between phases (off first, unless on_now). */
struct cost_ab {
	void (*op)(void *arg);
	int (*set)(void *arg, bool on);	/* 0 or -errno */
	void *arg;
	unsigned int ops;		/* per phase */
	unsigned int rounds;		/* off and on phases each; 1: off, then on */
	__u64 gap_ns;			/* spin before each op, outside its timing */
	double keep;			/* of each phase's timings, the fastest share averaged; 0: 0.9 */
	bool on_now;			/* the mechanism is on already, and is left on: the phases start
					 * on (on, off, off, on, ...), a switch on fewer where that is
					 * the slow way (attaching a tp_btf program: 10-20 ms) */
};

/* The mechanism's cost per op (on minus off, never below 0) into *ns:
 * 0, or the error of set (the mechanism is left off, or on with
 * on_now). */
int budget_cost__ab(const struct cost_ab *ab, double *ns);

/* Busy CPU work: a loop of that many iterations. */
void budget_cost__spin(unsigned long iterations);
/* Iterations of budget_cost__spin that take about ns here. */
unsigned long budget_cost__spin_calibrate(__u64 ns);

/*
 * The cost of what the tracer core does to any target: a scheduler event
 * (two threads of this process ping-ponging on one CPU, a target or not).
 * The probes', the faults' and the sampler's costs are measured by their
 * families (struct probe_family measure_costs). 0 or -errno with err
 * filled.
 */
int budget_cost__measure_core(struct tracer *t, struct tracer_costs *c, char *err, size_t errlen);

/*
 * What tracing a page fault costs the faulting thread (fresh pages
 * touched) into *ns: traced against not traced at all, the fault programs
 * switched off by set(arg, false) (their tracepoint and perf events fire
 * for every process while attached: a target or not only decides what the
 * program does after it ran). This process is a target meanwhile (the
 * caller's doing: struct probe_family measure_costs). Leaves them
 * switched on (set(arg, true)). 0 or -errno.
 */
int budget_cost__measure_faults(int (*set)(void *arg, bool on), void *arg, double *ns);

/* After the measurements, before any target is added: pid (this process)
 * is no target, its events are dropped, and the tasks the scheduler's
 * program named while it was one are forgotten, so that they are named
 * again when they meet a real target. */
void budget_cost__forget(struct tracer *t, __u32 pid);

#endif
