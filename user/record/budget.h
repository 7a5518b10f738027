/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The overhead budget: how much of a target thread's time the tracer's
 * uprobes may take (default 1%), and the controller that keeps them there.
 *
 * The cost of the probes is estimated, not measured in the target: each hit
 * costs what one hit of the same program costs in the tracer itself (the
 * recorder measures it at start, user/probes/family_cuda.c), and the hits
 * are counted from the events; a Python stack captured on a thread costs
 * what its BPF program measured the capture took (isr_ev_py_frames
 * capture_ns). What is charged is the busiest thread's
 * cost, interval by interval: a launch thread at 150k launches/s loses
 * about 150k x 0.7 us = 10% of its time to one probe hit per launch,
 * whatever the other threads do.
 *
 * The budget is a credit that grows by `budget` ns per ns of time, up to a
 * cap of budget x period (so that short bursts are traced in full, and so
 * that an idle start, a model loading for a minute, does not bank credit
 * that a busy phase would then spend at full cost), and that every charged
 * hit takes from. While the credit lasts, every probe stays on. When it
 * runs out, the hot-path probes (the entry-only CUDA families: launches,
 * async copies, memsets) are switched off until it is back to zero, then on
 * again for a window sized so that a whole on/off cycle lasts about one
 * period: sampling, with the windows in the recording so that the analysis
 * extrapolates and says so. Probes that
 * cannot be switched (synchronization, allocations, the GIL) are charged
 * too; when they alone exceed the budget, the hot path stays off but for a
 * floor sample: a window of BUDGET_MIN_ON_NS every BUDGET_FLOOR_NS, so that
 * its counts are still extrapolated from the whole run, not from its first
 * window (a job's warm-up). It costs at most BUDGET_MIN_ON_NS /
 * BUDGET_FLOOR_NS (2%) of what the hot path costs traced in full, and
 * only where the budget is already spent by what cannot be switched. Every
 * window, the first one too, lasts at least BUDGET_MIN_ON_NS: long enough
 * to tell the call rate.
 *
 * When the recording's end is known (-d), no window opens whose cost (the
 * last window's whole charge, what cannot be switched included, so more
 * than opening one adds; the cap before any) the credit cannot repay by then:
 * a window at the end would leave the budget overspent by up to its cost
 * (about 0.2% of a 5 s recording at 1%). A floor window still opens.
 *
 * Pure: time and costs come in as arguments, which is what makes it
 * testable without BPF.
 */
#ifndef INFERSCOPE_BUDGET_H
#define INFERSCOPE_BUDGET_H

#include <stdbool.h>
#include <linux/types.h>

#define BUDGET_PERIOD_NS	1000000000ULL	/* one on/off cycle */
#define BUDGET_MIN_ON_NS	100000000ULL	/* shortest on-window */
#define BUDGET_CHECK_NS		20000000ULL	/* decisions at least this often while sampling */
#define BUDGET_FLOOR_NS		5000000000ULL	/* off this long: a floor window, the credit or not */

struct budget {
	double fraction;	/* 0.01 = 1% */
	double hit_cost_ns;	/* one probe hit */
	__u64 last_ns;		/* last charge */
	double credit_ns;	/* what may still be spent; negative: overspent */
	double spent_ns;	/* charged so far */
	bool on;		/* hot-path probes attached */
	bool sampling;		/* they have been switched off at least once */
	__u64 on_since_ns;
	__u64 off_since_ns;	/* when last switched off */
	bool floor;		/* the open window is a floor window */
	__u64 floor_windows;	/* on-windows opened by the floor, credit overspent */
	double window_spent_ns;	/* charged since on_since_ns */
	double last_window_ns;	/* what the last completed window was charged; 0: none yet */
	__u64 end_ns;		/* when the recording ends; 0: not known */
	__u64 switches;
};

enum budget_action {
	BUDGET_KEEP,
	BUDGET_SWITCH_ON,
	BUDGET_SWITCH_OFF,
};

/* Starts the budget at now with the hot-path probes on. */
void budget__init(struct budget *b, double fraction, double hit_cost_ns, __u64 now_ns);
/* The recording ends at end_ns (budget.h: no window it cannot repay). */
void budget__set_end(struct budget *b, __u64 end_ns);
/* Charges what the probes cost the busiest thread since the last call:
 * its hits times hit_cost_ns, plus the Python stacks captured on it (what
 * each capture took its BPF program). */
void budget__charge(struct budget *b, double busiest_cost_ns, __u64 now_ns);
/* What to do now; *next_ns: when to decide again at the latest. The caller
 * switches the probes and then reports it with budget__switched. */
enum budget_action budget__decide(const struct budget *b, __u64 now_ns, __u64 *next_ns);
void budget__switched(struct budget *b, bool on, __u64 now_ns);
/* The most the credit holds: budget x period. */
double budget__cap_ns(const struct budget *b);

#endif
