/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wait chains: what a blocked launching thread waited for. Every blocked
 * (and uninterruptible) stretch of a target thread is ended by the task
 * that woke it (sched_wakeup; none when an interrupt did); those wakers,
 * per thread, make a graph (a launching thread's from its first launch to
 * its last: what it waited for while it fed the GPU; while the overhead
 * budget has the hot path's probes off, any CUDA call of it seen stands
 * for a launch). For
 * each launching thread (a waiter), what every other target thread did
 * while the waiter was blocked is measured too: the pass is cut into bins
 * of WAITS_BIN_NS, and a thread's time in a bin counts for a waiter as much
 * as the waiter was blocked in that bin (a bin it was blocked throughout
 * counts whole); the Python stacks a thread was sampled in while the waiter
 * was blocked are counted the same way, sample by sample.
 *
 * A chain starts at the waiter: the task (or the group of tasks: the
 * threads of one process with one name, or sibling processes with one
 * name, as a pool of workers is) that ended most of its blocked time; if
 * those tasks were themselves mostly blocked while the waiter waited, the
 * tasks that ended their blocked time; and so on, until tasks that were
 * doing something (running, waiting for a CPU, in I/O, in page faults) or
 * WAITS_CHAIN_MAX links. Pure; memory grows with the threads, not the
 * events (WAITS_MAX_PAIRS waiter-thread pairs at most).
 */
#ifndef INFERSCOPE_WAITS_H
#define INFERSCOPE_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "timeline.h"

#define WAITS_BIN_NS		50000000ull	/* the bins of "while the waiter was blocked" */
#define WAITS_CHAIN_MAX		4		/* links of a chain */
#define WAITS_NODE_MEMBERS	32		/* tasks of one link */
#define WAITS_MAX_PAIRS		65536		/* waiter-thread pairs measured */
#define WAITS_STACKS		4		/* Python stacks kept per pair */

/* How a link's tasks are grouped. */
enum wait_group {
	WAIT_GROUP_THREAD,	/* one thread */
	WAIT_GROUP_THREADS,	/* threads of one process with one name */
	WAIT_GROUP_PROCESSES,	/* sibling processes (one parent) with one name: a pool of workers */
	WAIT_GROUP_UNTRACED,	/* a task that is not traced (an interrupt's, another program's) */
};

/* Who a task belongs with: its process's parent among the targets (0 when
 * none is known). The caller's (analysis/model/proc_tree.h knows). */
typedef __u32 (*waits_parent_fn)(void *ctx, __u32 pid);

struct wait_member {
	__u32 pid, tid;
};

struct wait_link {
	enum wait_group group;
	char comm[16];			/* the tasks' name */
	__u32 parent;			/* WAIT_GROUP_PROCESSES: their parent */
	struct wait_member members[WAITS_NODE_MEMBERS];
	size_t nmembers, more;		/* members kept, and beyond */
	__u64 ended_ns;			/* the previous link's blocked time these tasks ended */
	double ended_share;		/* of the previous link's blocked time */
	/* The tasks' time while the chain's waiter was blocked, summed over
	 * them (their categories: running, waiting for a CPU, ...): over those
	 * that were mostly not blocked then, when some were (a worker's queue
	 * feeder thread is no part of what the workers did). */
	struct tl_acc during;
	__u64 samples;			/* their Python stack samples while it was blocked */
	__u32 top_stack;		/* the most sampled of them (0: none) */
	__u64 top_stack_samples;
};

struct wait_chain {
	__u32 pid, tid;			/* the waiter */
	__u64 blocked_ns;		/* its blocked time (blocked and uninterruptible) from its first launch to its last */
	struct wait_link links[WAITS_CHAIN_MAX];
	size_t n;
	/* the last link was doing something while the waiter was blocked
	 * (false: the chain ends at tasks that were themselves mostly blocked,
	 * by what no traced task ended: a timer, a device) */
	bool complete;
};

struct waits;

struct waits *waits__new(struct timeline *tl);
void waits__free(struct waits *w);
/* The observer to add to the timeline. */
const struct tl_observer *waits__observer(struct waits *w);
/* After timeline__finish: the last bin. 0 or -errno. */
int waits__finish(struct waits *w);

/* The chain of waiter (pid, tid), a thread that launched GPU work: 0 with
 * out filled (out->n 0: nothing ended most of its blocked time), -ENOENT
 * when (pid, tid) is no waiter. parent groups sibling processes. */
int waits__chain(const struct waits *w, __u32 pid, __u32 tid, waits_parent_fn parent, void *ctx,
		 struct wait_chain *out);
/* Whether the pairs measured reached WAITS_MAX_PAIRS (some threads'
 * time while a waiter was blocked is not measured). */
bool waits__truncated(const struct waits *w);

#endif
