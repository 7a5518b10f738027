/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the time of the launching threads went, and why the GPU sat idle:
 * the one attribution every rule and every metric takes its numbers from,
 * so that no second of a thread is counted by two findings.
 *
 * With GPU activity, each idle gap of a device (timeline.h) is split into
 * causes by what the host did during it: the time until the launching
 * thread launched the work that ended the gap is split by what that thread
 * was doing (its timeline categories over the gap, running split into
 * Python and native by its stack samples taken while the device was
 * idle), and the rest (work already launched but not yet started) is
 * launch latency. After a synchronization that drained the device, the
 * thread's time inside synchronizations and running (the host's work the
 * synchronization kept from overlapping the GPU's) is the
 * synchronization's (sync_drain); its other time (blocked on a producer,
 * waiting for the GIL, for a CPU, ...) is its own cause as in any gap. A
 * synchronization preempted (the thread runnable inside it, waiting for a
 * CPU) while the device was idle is waiting for a CPU (runqueue): the GPU
 * was done, and only the CPU kept the call from returning. The
 * gaps before the first work and after the last (the job's set-up and
 * teardown) are counted apart and are no cause's. Without GPU activity, a launching thread's whole window
 * is split the same way. Details (who woke it, who had its CPU, who held
 * the GIL, which CUDA functions, which Python lines) come from the spans
 * and samples that overlap the idle time (or the whole window).
 *
 * Launching threads: the threads of a process that launched GPU work (a
 * launch call). The rules look at the critical threads: the launching
 * threads, and where nothing launched GPU work (a job on the CPU) the
 * threads that ran or waited for a CPU at least 10% of their window, or
 * waited for the GIL at least 10% of it. (Where something did, another
 * thread matters as far as a launching thread waited for it: the wait
 * chains, analysis/model/waits.h.)
 */
#ifndef INFERSCOPE_ATTRIBUTION_H
#define INFERSCOPE_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "timeline.h"

/* An idle gap shorter than this (not after a synchronization) is launch
 * overhead: the time one launch takes the host, not a stall. */
#define ATTR_SHORT_GAP_NS	30000ull

enum cause {
	CAUSE_SYNC_DRAIN,	/* idle after a synchronization drained the device */
	CAUSE_GIL,		/* the launcher waited for the GIL */
	CAUSE_SYNC,		/* it was in another synchronization */
	CAUSE_CUDA_MEM,		/* it was in a CUDA allocation or free */
	CAUSE_CUDA,		/* it was in another CUDA call */
	CAUSE_FAULT,		/* it was in a page fault */
	CAUSE_RECLAIM,		/* it was in direct memory reclaim */
	CAUSE_RUNQUEUE,		/* it waited for a CPU */
	CAUSE_IO,		/* it was in uninterruptible sleep */
	CAUSE_BLOCKED,		/* it was blocked (on another thread, a queue, a timer) */
	CAUSE_PYTHON,		/* it ran Python */
	CAUSE_NATIVE,		/* it ran native code (no Python frame, or no stacks) */
	CAUSE_LAUNCH_LATENCY,	/* the work was launched; the GPU had not started it yet */
	CAUSE_LAUNCH_OVERHEAD,	/* gaps under ATTR_SHORT_GAP_NS between work: the launch rate sets the pace */
	CAUSE_UNKNOWN,		/* no launching thread could be named */
	CAUSE_MAX
};

const char *cause_name(enum cause c);		/* "sync_drain", "gil_wait", ... (JSON keys) */
const char *cause_text(enum cause c);		/* "the launching thread waited for the GIL", ... */
const char *cause_label(enum cause c);
/* The cause a thread's timeline category stands for (running: native). */
enum cause cause_of_category(enum tl_cat c);		/* "waiting for the GIL", ... (of a thread's time) */

/* An amount of time attributed to another task, a function or a stack. */
struct attr_item {
	__u64 key;		/* pid << 32 | tid; ISR_CUDA_FN_*; stack id */
	__u64 ns;		/* time (Python stacks: samples) */
};

struct attr_items {
	struct attr_item *v;
	size_t n, cap;
	__u64 rest;		/* beyond the kept items */
};

/* One thread. */
struct attr_thread {
	__u32 pid, tid;
	bool launcher;			/* it launched GPU work */
	bool critical;			/* what the rules look at (above) */
	__u64 idle_ns[CAUSE_MAX];	/* with GPU activity: the gap time attributed to it, by cause */
	/* its window, by timeline category: a launcher's active part, from
	 * its first CUDA call to its last (what came before, the job's
	 * set-up, and after, its teardown, is no finding's cost); another
	 * thread's whole life while recorded */
	struct tl_acc window;
	__u64 active_start, active_end;	/* a launcher's active part (0: its whole life) */
	__u64 samples, python_samples;	/* stack samples counted (while idle, or all) */
	/* details, over idle time (or all time without GPU activity) */
	struct attr_items gil_holders;	/* holder pid<<32|tid -> ns */
	struct attr_items preemptors;	/* task that had its CPU -> ns (an untraced process: pid << 32 | pid) */
	struct attr_items wakers;	/* task that ended its blocked time -> ns */
	struct attr_items cuda_fns;	/* function -> ns inside it */
	struct attr_items stacks;	/* stack id -> samples */
	__u64 gaps;			/* gaps it ended */
};

/* One device of one process. */
struct attr_device {
	__u32 pid, device;
	__u64 busy_ns, observed_ns;
	__u64 span_ns;			/* observed_ns, or with GPU windows the process's span */
	bool estimated;			/* observed in windows: the idle_ns are of the windows (the rules scale them
					 * by the summary's gpu_device_stat.idle_scale) */
	__u64 idle_ns[CAUSE_MAX];	/* every gap, by cause (leading and trailing gaps apart) */
	__u64 leading_ns;		/* from the bridge's start to the first work */
	__u64 trailing_ns;		/* from the last work to the end of the recording or of the process */
	__u64 active_ns;		/* observed_ns without the leading and trailing gaps: what shares are of */
	__u64 gaps;
	__u64 sync_drain_gaps;
};

struct attribution;

struct attribution *attribution__new(struct timeline *tl, const struct pass *p);
void attribution__free(struct attribution *a);
/* The observer to add to the timeline (before the rules'). */
const struct tl_observer *attribution__observer(struct attribution *a);
/* After timeline__finish: the window totals and the Python split. */
int attribution__finish(struct attribution *a);

size_t attribution__thread_count(const struct attribution *a);
const struct attr_thread *attribution__thread_at(const struct attribution *a, size_t i);
const struct attr_thread *attribution__thread(const struct attribution *a, __u32 pid, __u32 tid);
size_t attribution__device_count(const struct attribution *a);
const struct attr_device *attribution__device_at(const struct attribution *a, size_t i);

/* How one idle gap was split, as it closes (leading gaps are not split:
 * split is all zero for them). The launching thread's running time is in
 * split[CAUSE_NATIVE]: its Python share is known only at the end
 * (attr_device.idle_ns[CAUSE_PYTHON] against [CAUSE_NATIVE] then). */
struct attr_gap_hook {
	void *ctx;
	void (*gap)(void *ctx, const struct tl_gap *g, const __u64 split[CAUSE_MAX]);
};

/* Calls hook for every gap from now on (one hook; NULL removes it). */
void attribution__on_gap(struct attribution *a, const struct attr_gap_hook *hook);

/* Whether pid's GPU activity was recorded (it sent clock pairs). */
bool attribution__gpu_observed(const struct attribution *a, __u32 pid);

/* Items sorted by time, most first (after attribution__finish). */

#endif
