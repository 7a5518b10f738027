/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The overhead budget (user/budget.h) as the recorder runs it: what one
 * probe hit costs, measured before anything is traced; every probe hit and
 * Python stack capture the events tell of, charged to its thread; the
 * hot-path probes switched when the budget says so, each switch written to
 * the recording (ISR_EV_SAMPLING) for the analysis to extrapolate. With GPU
 * windows (--gpu-windows), what CUPTI costs the threads it instruments is
 * charged too: each API record it made, GPU_WINDOW_RECORD_COST_NS to its
 * thread, and each detach what it took its finalizing thread.
 */
#ifndef INFERSCOPE_BUDGET_CTL_H
#define INFERSCOPE_BUDGET_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "budget.h"
#include "events.h"
#include "tracer.h"

#define BUDGET_HIT_SLOTS 1024	/* probe cost per thread since the last step */

/* Writes a record to the recording: 0 or -errno. */
typedef int (*budget_emit_fn)(void *ctx, const void *record, size_t size);

struct budget_ctl {
	bool active;
	double pct;		/* the budget, % of a thread's time */
	struct budget b;
	__u64 next_ns;		/* next decision */
	double cost_ns[BUDGET_HIT_SLOTS];	/* by thread; threads that share a slot are charged together: never less */
	double hits_ns, stacks_ns;	/* charged so far, all threads: probe hits, Python stack captures */
	bool charge_cupti;		/* --gpu-windows: CUPTI's cost in the windows is charged too */
	double cupti_ns;		/* charged so far for it */
	bool warned;
};

/* Starts a budget of pct % for probes whose hit costs hit_ns: active from
 * budget_ctl__start. */
void budget_ctl__init(struct budget_ctl *bc, double pct, double hit_ns);
/* The recording starts at now: writes the budget's settings. */
int budget_ctl__start(struct budget_ctl *bc, __u64 now, budget_emit_fn emit, void *ctx);
/* Charges the probe hits behind an event, and the Python stack captures. */
void budget_ctl__note(struct budget_ctl *bc, const struct isr_ev_hdr *h, size_t size);
/* How long the recorder may wait for events before the next decision, at
 * most max_ms. */
int budget_ctl__wait_ms(const struct budget_ctl *bc, __u64 now, int max_ms);
/* At or after the time of a decision: charges the hits since the last one
 * and switches the hot path of t when the budget says so. 0 or the error
 * of emit. */
int budget_ctl__step(struct budget_ctl *bc, struct tracer *t, __u64 now, budget_emit_fn emit, void *ctx);
/* What was charged, and the sampling if there was any, on stderr. */
void budget_ctl__report(const struct budget_ctl *bc);

#endif
