/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread scheduling and fault summary of a recording. Pure: a function
 * of the recording only.
 *
 * Definitions (docs/report-json.md states them for users):
 *   on-CPU         switched in until switched out.
 *   off-CPU        switched out until switched in again (or exit / end).
 *   run-queue wait the part of off-CPU during which the thread was runnable:
 *                  from a preemption (switched out while runnable) or a
 *                  wakeup until it next ran.
 *   blocked        off-CPU minus run-queue wait.
 * A thread's window runs from the start of the recording (or its creation)
 * to its exit (or the end). Time before its first scheduling event is
 * attributed from that event's direction: a first switch-out means it was
 * running, a first switch-in or wakeup that it was off-CPU.
 */
#ifndef INFERSCOPE_SUMMARY_H
#define INFERSCOPE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"

struct thread_summary {
	__u32 pid, tid;
	char comm[16];
	__u64 start_ns, end_ns;		/* observation window (monotonic) */
	bool created;			/* created during the recording */
	bool exited;			/* exited during the recording */
	__u64 on_cpu_ns;
	__u64 off_cpu_ns;
	__u64 runqueue_wait_ns;
	__u64 blocked_io_ns;		/* off-CPU in uninterruptible sleep (D state) */
	__u64 switches_voluntary, switches_involuntary;
	__u64 wakeups;
	__u64 minor_faults, major_faults;
	__u64 fault_ns;			/* time inside fault handling (faults with a known start) */
	__u64 major_fault_ns;
};

struct summary {
	__u64 start_ns, end_ns;		/* recording window (monotonic) */
	double duration_s;
	bool truncated;
	__u64 drops[ISR_SRC_MAX];
	__u64 drops_total;
	__u64 event_counts[ISR_EV_TYPE_MAX];
	__u64 event_total;
	struct thread_summary *threads;	/* sorted by pid, then tid */
	size_t thread_count;
};

/* r's events must be sorted (recording__sort_events). 0 or -errno. */
int summary__compute(const struct recording *r, struct summary **out);
void summary__free(struct summary *s);

#endif
