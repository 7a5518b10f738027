/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The overhead budget (user/record/budget.h) as the recorder runs it, and the
 * account of what tracing costs the targets.
 *
 * The account: every event the recorder reads tells of something the
 * tracer did on a target thread, and each is charged to that thread what
 * its line of the registry says it cost (format/events.h: cost;
 * isr_ev_cost), at the costs measured at the start
 * (user/record/budget_cost.h): a probe hit (the CUDA hot path's apart: it
 * is what the budget can switch), an entry and return pair, a Python stack
 * capture (what its BPF program measured it took), a page fault, a
 * scheduler event (a GIL wait as ISR_GIL_WAIT_EVENTS of them); a switch
 * to the side of it that is a target; a tick of the Python stack sampler
 * (the busiest thread is taken to be on CPU: the sampler interrupts
 * whatever runs), the time a thread waited for a CPU that one of the
 * recorder's own threads held (from the switch that preempted it to its
 * next switch in, at most the CPU time the recorder used meanwhile), and
 * with GPU windows (--gpu-windows) each API record CUPTI made,
 * GPU_WINDOW_RECORD_COST_NS, and each detach what it took its finalizing
 * thread. Costs are per thread (DataLoader workers and other descendants
 * are threads of the targets like any other).
 *
 * The budget: what a thread was charged over its time on a CPU (the
 * switches tell when it was off one; a thread that keeps its CPU is on it
 * all the time): a thread that gets half a CPU on a busy host does its
 * work at half the pace, and what tracing adds to each step of it costs it
 * twice the share of the wall clock. The share is the thread's since it
 * was first charged, not the interval's (a worker busy in bursts shorter
 * than an interval would be charged a share of the wall clock). A thread
 * on a CPU less than a quarter of the time is taken to be on it a quarter
 * of the time (a thread that mostly sleeps holds nothing back). The busiest thread of each interval,
 * by that share, is charged to the budget, against budget x time (the
 * busiest of the threads the hot path has hit, nothing before it hits
 * one: switching it off spares no other); when the credit runs out the
 * hot-path probes are
 * switched off (each switch written to the recording, ISR_EV_SAMPLING, for
 * the analysis to extrapolate). What cannot be switched is charged all
 * the same: when it alone exceeds the budget the hot path stays off but
 * for a floor window now and then (user/record/budget.h), and the end says what
 * it was. The account is kept, and written at the end
 * (ISR_SAMPLING_SPENT), with or without a budget.
 */
#ifndef INFERSCOPE_BUDGET_CTL_H
#define INFERSCOPE_BUDGET_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "budget.h"
#include "budget_cost.h"
#include "events.h"
#include "htab.h"
#include "tracer.h"

#define BUDGET_HIT_SLOTS 1024	/* threads charged apart; threads that share a slot are charged together: never less */

/* Writes a record to the recording: 0 or -errno. */
typedef int (*budget_emit_fn)(void *ctx, const void *record, size_t size);

/* What one thread (a slot) was charged, by ISR_SPENT_* kind, and its
 * time on a CPU, from the switches that took it off and put it back. */
struct budget_slot {
	__u32 pid, tid;		/* the last thread charged to it */
	double ns[ISR_SPENT_MAX];
	__u64 ops[ISR_SPENT_MAX];
	double copy_ns;		/* a step's: the async copies' part of ns[ISR_SPENT_HOT] */
	double off_ns;		/* a step's: off a CPU during it */
	double oncpu_ns;	/* the totals': on a CPU since the start */
	double seen_ns;		/* the totals': since it was first charged */
	__u64 out_since;	/* the totals': switched out at; 0: on a CPU, or never seen off */
	__u64 displaced_since;	/* the totals': preempted by a thread of the recorder at; 0: not */
};

/* Tracing sampled under a budget of its own, like the hot path's, and
 * charged with the busiest thread's cost of it alone (any target thread):
 * page faults (what a DataLoader worker pays) and the async copies (a
 * phase of launches that spends the hot path's budget must not hide the
 * copies after it). Their cost is in the hot path's charge too, as every
 * cost is: what one of them spends, the others do not. */
enum budget_own_kind { BUDGET_OWN_FAULTS, BUDGET_OWN_COPIES, BUDGET_OWN_MAX };

struct budget_own {
	int (*fn)(void *arg, bool on);	/* switches it; NULL: not sampled */
	void *arg;
	struct budget b;
	__u64 next_ns;
	bool warned;
};

struct budget_ctl {
	bool accounting;	/* the costs are measured: events are charged */
	bool active;		/* a budget is kept: the hot path is switched */
	double pct;		/* the budget, % of a thread's time */
	struct tracer_costs costs;
	__u32 tracer_pid, helper_pid;	/* the recorder, its watcher of held processes (0: none) */
	struct budget b;
	__u64 start_ns, next_ns, last_ns;
	double recorder_cpu_ns;	/* the recorder's CPU time at the last step */
	struct budget_slot *step;	/* since the last step */
	struct budget_slot *total;	/* since the start */
	double all_ns[ISR_SPENT_MAX];
	struct htab targets;	/* pids seen as targets (htab_u64): a switch is charged to its target side */
	__u64 targets_ns;	/* when they were last read from the tracer */
	bool charge_cupti;	/* --gpu-windows: CUPTI's cost in the windows is charged too */
	__u64 duration_ns;	/* the recording's length (-d), set before the start; 0: not known */
	bool warned;
	/* Tracing sampled under budgets of their own (page faults, the
	 * async copies), when something can switch it and a budget is kept. */
	struct budget_own own[BUDGET_OWN_MAX];
};

/* Starts the account of costs c (tracer: this process; helper: its watcher
 * of held processes, 0: none), and with pct > 0 a budget of pct % (its hot
 * path switched from budget_ctl__start). 0 or -ENOMEM. */
int budget_ctl__init(struct budget_ctl *bc, const struct tracer_costs *c, double pct, __u32 tracer, __u32 helper);
void budget_ctl__free(struct budget_ctl *bc);
/* Samples page-fault tracing (BUDGET_OWN_FAULTS) or the async copies'
 * probes (BUDGET_OWN_COPIES) under a budget of its own, switched by
 * fn(arg, on): a budget like the hot path's, charged with the busiest
 * thread's cost of that kind alone, its switches written
 * (ISR_SAMPLING_FAULTS_ON, _OFF; COPIES_ON, _OFF, and the costs then say
 * ISR_COSTS_COPIES_APART). Before budget_ctl__start; without a budget it
 * does nothing. */
void budget_ctl__sample_own(struct budget_ctl *bc, enum budget_own_kind kind, int (*fn)(void *arg, bool on), void *arg);
/* The recording started at start: writes the costs (COSTS) and the
 * budget's settings (START). */
int budget_ctl__start(struct budget_ctl *bc, __u64 start, budget_emit_fn emit, void *ctx);
/* The costs (COSTS) again, at ts: a flight-recorder window holds them too,
 * whose start is long gone. */
int budget_ctl__write_costs(const struct budget_ctl *bc, __u64 ts, budget_emit_fn emit, void *ctx);
/* Charges what the event tells the tracer did on a target thread. */
void budget_ctl__note(struct budget_ctl *bc, const struct isr_ev_hdr *h, size_t size);
/* How long the recorder may wait for events before the next decision, at
 * most max_ms. */
int budget_ctl__wait_ms(const struct budget_ctl *bc, __u64 now, int max_ms);
/* At or after the time of a step: charges the threads since the last one
 * and switches the hot path of t when the budget says so. 0 or the error
 * of emit. */
int budget_ctl__step(struct budget_ctl *bc, struct tracer *t, __u64 now, budget_emit_fn emit, void *ctx);
/* The recording ends at now, every event charged: the last step and the
 * account (SPENT). 0 or the error of emit. */
int budget_ctl__finish(struct budget_ctl *bc, __u64 now, budget_emit_fn emit, void *ctx);
/* What was spent against what was allowed, by kind, and the sampling if
 * there was any, on stderr. */
void budget_ctl__report(const struct budget_ctl *bc);

#endif
