/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The overhead budget as a recording tells it (isr_ev_sampling), and the
 * extrapolation of the hot-path CUDA calls it sampled. Pure: a function of
 * the events it is fed, in pass order (pass.h): a window is known when its
 * sampling event comes, before the calls inside it; what the calls of each
 * window extrapolate to is reckoned at the end.
 *
 * Windows: the hot-path probes (entry-only families: launches, async
 * copies, memsets; the async copies apart when they have a switch of
 * their own, below) are on from the recording start to the first OFF event,
 * then from each ON event (the end of the attach) to the next OFF event (the
 * start of the release) or the end. Measured on a steady 100k launches/s:
 * the estimate came within 0.1% of the true count with these edges, 6%
 * under it when windows began at the start of the attach.
 *
 * Extrapolation, per process: the calls in each gap between two windows
 * are its length times the mean call rate of the window before and the
 * window after it (only the one before for a gap that reaches the end); a
 * gap counts only the part of it inside the process's CUDA span, and a
 * window's rate is over the part of it inside that span. The span runs from
 * its first CUDA call of any kind to its last one (synchronizations are
 * never switched off, so it ends with the job's last one, not with its
 * teardown), or, when that last call came at the very end of a window that
 * was then switched off (the calls may have gone on unseen), to the
 * process's exit or the end of the recording. The calls seen in a gap
 * (while the probes were being released or attached: some of them) are
 * left to its extrapolation, and a window's rate counts only the calls
 * inside it. The process's scale is (calls inside the windows + gap
 * estimates) / observed, and every count of its hot-path calls (per
 * function, kernel and thread) is multiplied by it. Exact when the call
 * rate is steady; a change of rate inside a gap is not seen.
 *
 * By calls instead: a job made of steps (a training loop: so many launches,
 * a copy or two and a synchronization a step) launches at the pace of its
 * steps, which a data wait or a burst of ready batches changes from one
 * window to the next, while its launches per always-probed call (the
 * calls of the probes that stay on, and the async copies when they were
 * never switched off) stay put. The gaps' calls are then their
 * always-probed calls x the windows' hot-path calls per such call (pooled).
 * Chosen when it is the steadier of the two across the windows: with at
 * least BY_CALLS_MIN_WINDOWS windows of BY_CALLS_MIN_LEN and
 * BY_CALLS_MIN_CALLS always-probed calls each, the rate's coefficient of
 * variation across them at least BY_CALLS_MIN_CV and the per-call
 * figure's at most half of it (a steady rate keeps the time's way, and so
 * does a job whose always-probed calls come apart from its launches). No
 * slowdown is applied then: it slows both kinds of call alike.
 *
 * The probes slow a launch-bound thread in the windows (by their cost per
 * launch: 10% at 150k launches/s), so a window's rate understates its gaps.
 * The calls of the probes that stay on (synchronizations, allocations) tell
 * by how much: their rate in the gaps over their rate in the windows is the
 * process's slowdown, by which the gaps' rates are raised. It is told only
 * from enough data, with its 95% confidence interval (sampling.c,
 * measure_slowdown: bins of 100 ms, a quasi-Poisson rate ratio), and
 * applied only when that interval lies above 1 and the slowdown is at most
 * 2: with fewer than 2 windows or 2 gaps, 20 calls in each kind or 6
 * bins it is not measured; an interval that holds 1 is no slowdown; one
 * below 1, or a slowdown above 2, is a pace that changed for another reason
 * (the job's phases): none of these is applied.
 */
#ifndef INFERSCOPE_SAMPLING_H
#define INFERSCOPE_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "registry.h"

enum sampling_slowdown {
	SAMPLING_SLOWDOWN_NOT_MEASURED,	/* too few windows, gaps, calls or bins to tell */
	SAMPLING_SLOWDOWN_NONE,		/* measured: its interval holds 1 */
	SAMPLING_SLOWDOWN_APPLIED,	/* measured: slower in the windows, the gaps' rates raised by it */
	SAMPLING_SLOWDOWN_IMPLAUSIBLE,	/* faster in the windows, or more than twice as slow: not applied */
};

/* How a process's gaps were estimated (sampling_builder__finish). */
enum sampling_estimator {
	SAMPLING_BY_TIME,	/* the gap's length x the rate of the windows around it (x the slowdown) */
	SAMPLING_BY_CALLS,	/* the gaps' always-probed calls x the hot-path calls per such call in the windows */
};

struct sampling_process {
	__u32 pid;
	__u64 observed;		/* hot-path calls recorded */
	double estimated;	/* those inside the windows + the gaps' estimates */
	enum sampling_estimator estimator;
	/* The two ways, compared on the windows that had both enough time and
	 * enough always-probed calls (cv_windows of them; 0: not compared):
	 * the coefficient of variation across them of the hot-path calls per
	 * second, and per always-probed call. */
	size_t cv_windows;
	double cv_time, cv_calls;
	double per_call;	/* BY_CALLS: hot-path calls per always-probed call in the windows */
	__u64 calls_windows, calls_gaps;	/* BY_CALLS: the always-probed calls inside the windows, in the gaps */
	double slowdown;	/* the factor applied: slowdown_measured when APPLIED (and BY_TIME), else 1 */
	enum sampling_slowdown slowdown_status;
	double slowdown_measured;	/* unless NOT_MEASURED: gap rate / window rate */
	double slowdown_lo, slowdown_hi;	/* its 95% confidence interval */
	size_t slowdown_windows, slowdown_gaps;	/* blocks that gave a bin */
	__u64 slowdown_calls_windows, slowdown_calls_gaps;	/* always-probed calls in those bins */
	double scale;		/* estimated / observed; 1 when nothing was observed */
};

/* "not_measured", "none", "applied", "implausible". */
const char *sampling_slowdown__name(enum sampling_slowdown s);
/* "time", "calls". */
const char *sampling_estimator__name(enum sampling_estimator e);

/* What tracing cost the targets, as the recorder accounted it
 * (ISR_SAMPLING_COSTS, ISR_SAMPLING_SPENT: user/record/budget_ctl.h). */
struct sampling_overhead {
	bool measured;		/* the costs were measured (COSTS) */
	__u32 tracer_pid;	/* the recorder: its threads are the tracer's */
	__u32 helper_pid;	/* its watcher of held processes, the tracer's too; 0: none */
	__u32 sampler_hz;
	double hit_ns, pair_ns, fault_ns, sched_ns, tick_ns;	/* what each costs a target thread there */
	bool copies_apart;	/* the async copies have a switch of their own (ISR_COSTS_COPIES_APART) */
	bool spent_known;	/* the account at the end (SPENT) */
	__u64 spent_ns;		/* the budget's (busiest per interval) */
	struct isr_sampling_spent spent;	/* the rest of that account as recorded; the fields an older
						 * recording lacks are 0 (faults_spent_ns, copies_spent_ns) */
};

struct sampling {
	struct sampling_overhead overhead;
	bool budget;		/* the recording ran with an overhead budget */
	double budget_pct;
	double hit_cost_ns;	/* measured cost of one probe hit */
	bool sampled;		/* the hot path was switched off at least once */
	size_t windows;		/* on-windows of the hot path */
	__u64 on_ns;		/* time the hot path was on */
	double coverage;	/* on_ns / recording duration */
	__u64 switch_ns_max;	/* slowest attach or release */
	struct sampling_process *procs;	/* processes with hot-path calls, by pid */
	size_t proc_count;
	/* Page-fault tracing, sampled under a budget of its own
	 * (ISR_SAMPLING_FAULTS_ON, _OFF): on from the start to the first
	 * switch off, then in windows. A thread's faults and fault time are
	 * extrapolated over its life from the part of it inside the windows
	 * (sampling__faults_scale). */
	bool faults_sampled;		/* it was switched off at least once */
	size_t fault_windows;
	__u64 faults_on_ns;
	double faults_coverage;		/* faults_on_ns / recording duration */
	__u64 (*fault_on)[2];		/* [start, end) of each window, in order */
	/* The async copies, when they have a switch and a budget of their
	 * own (a recorder that says so: copies_apart; before, they were
	 * switched with the hot path): on from the start to the first
	 * COPIES_OFF, then in windows. A process's copies are extrapolated by
	 * the span of its CUDA calls over the part of it inside the windows
	 * (at most 100: their floor windows keep them on 2% of the time). */
	bool copies_apart;
	bool copies_sampled;		/* they were switched off at least once */
	size_t copy_windows;
	__u64 copies_on_ns;
	double copies_coverage;		/* copies_on_ns / recording duration */
	struct sampling_copies {
		__u32 pid;
		__u64 observed;		/* its async copies recorded */
		double scale;
	} *copy_procs;			/* processes with copies seen, when sampled */
	size_t copy_proc_count;
};

/* The sampling of the events fed, in pass order; [start, end] the
 * recording window. NULL when out of memory. */
struct sampling_builder;
struct sampling_builder *sampling_builder__new(__u64 start, __u64 end);
/* 0 or -ENOMEM. */
int sampling_builder__event(struct sampling_builder *b, const struct isr_ev_hdr *h);
/* Fills out (sampling__free frees it). 0 or -ENOMEM. */
int sampling_builder__finish(struct sampling_builder *b, struct sampling *out);
void sampling_builder__free(struct sampling_builder *b);

/* Whether pid is the tracer's (the recorder or its helper process). */
bool sampling__is_tracer(const struct sampling *s, __u32 pid);
/* The scale of pid's hot-path counts: 1 when not sampled. */
double sampling__scale(const struct sampling *s, __u32 pid);
/* The scale of pid's async copies: its hot-path scale when they were
 * switched with the hot path, else 1 when not sampled. */
double sampling__copies_scale(const struct sampling *s, __u32 pid);
/* The scale of pid's calls of CUDA function func: the copies' for an async
 * copy, the hot path's for another hot-path function, else 1. */
double sampling__call_scale(const struct sampling *s, __u32 pid, __u16 func);
/* Whether the hot path or the async copies were sampled: counts are estimates. */
bool sampling__any(const struct sampling *s);
/* What a thread's fault counts and time are multiplied by, `seen` faults
 * in the oncpu_seen ns of its oncpu ns on a CPU that lay inside the fault
 * windows: a thread faults only while it runs, so its faults per second on
 * a CPU inside the windows are its rate in the gaps too. Tracing slowed it
 * in the windows by the faults' measured cost (a thread that does nothing
 * but fault ran 1.6 times slower traced on the project VM): that time is
 * taken out of the windows' before the rate is told (at most four fifths
 * of it). 1 when faults were not sampled, or when it was never on a CPU
 * inside a window (nothing was seen, nothing is extrapolated). */
double sampling__faults_scale(const struct sampling *s, __u64 oncpu, __u64 oncpu_seen, __u64 seen);
/* How much faster pid ran in the gaps than under the probes, where the
 * recording supports it (slowdown_measured when APPLIED, whichever way its
 * hot-path calls were estimated; else 1): for a rate in time carried into
 * the gaps. */
double sampling__slowdown(const struct sampling *s, __u32 pid);

/* Of [from, to), the time page-fault tracing was on, as the switches fed
 * so far tell (a window still open runs on). */
__u64 sampling_builder__faults_on(const struct sampling_builder *b, __u64 from, __u64 to);
/* The time the hot-path probes were on, in order: [start, end) of window i
 * of sampling_builder__on_count() (one, the whole recording, when the hot
 * path was never switched off). A window's release (its probes being
 * detached) is not on: calls in it may or may not have been seen. Valid
 * until sampling_builder__free(). */
size_t sampling_builder__on_count(const struct sampling_builder *b);
void sampling_builder__on(const struct sampling_builder *b, size_t i, __u64 *start, __u64 *end);
void sampling__free(struct sampling *s);

#endif
