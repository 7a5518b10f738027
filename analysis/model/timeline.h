/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The timeline: what every target thread and every GPU was doing, at every
 * moment, built in one pass over the events in time order (analysis/read/pass.h)
 * with memory that grows with the number of threads and devices, never with
 * the number of events.
 *
 * A thread is, at any moment, in exactly one category (enum tl_cat). The
 * scheduler gives the base (running, waiting for a CPU, blocked, in
 * uninterruptible sleep); intervals known from probed calls lie over it
 * (waiting for the GIL, inside a CUDA call, in direct reclaim, in a page
 * fault), the one of highest priority winning. Each thread keeps the running total of its
 * time per category, so "what was thread T doing during [a, b)" is the
 * difference of two readings (timeline__thread_acc at a and at b), which is
 * how every rule asks it.
 *
 * A GPU device of a process is busy while any of its kernels, copies or
 * memsets runs (times mapped onto the CPU clock); between two busy stretches
 * it is idle. Each idle gap is reported when it closes, with the thread that
 * launched the work that ended it and that thread's categories over the gap.
 *
 * Pure: a function of the events it is fed.
 */
#ifndef INFERSCOPE_TIMELINE_H
#define INFERSCOPE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pass.h"

/* What a thread was doing, highest priority first. */
enum tl_cat {
	TL_GIL,		/* waiting to take the Python GIL */
	TL_SYNC,	/* inside a CUDA synchronization or synchronous copy */
	TL_CUDA_MEM,	/* inside a CUDA allocation or free */
	TL_CUDA,	/* inside another CUDA call whose return was probed */
	TL_RECLAIM,	/* in direct memory reclaim (also inside a fault: what the fault waited for) */
	TL_FAULT,	/* in a page fault */
	TL_RUNQUEUE,	/* runnable, waiting for a CPU */
	TL_IO,		/* uninterruptible sleep (disk, network filesystem, kernel lock) */
	TL_BLOCKED,	/* sleeping until another task or a timer wakes it */
	TL_RUNNING,	/* on a CPU */
	TL_UNKNOWN,	/* before its first event told (attributed at that event) */
	TL_CAT_MAX
};

const char *tl_cat_name(enum tl_cat c);	/* "gil_wait", "cuda_sync", ... */
/* The category a returned CUDA call's own time is in: TL_SYNC for a
 * synchronization, TL_CUDA_MEM for an allocation, a free, a mapping,
 * TL_CUDA for any other (format/cuda_funcs.h, ISR_CUDA_K_*). */
enum tl_cat tl_call_cat(__u16 func);
/* An async copy whose call lasted this long blocked: one from or to pinned
 * memory returns well within it (5-10 us on an H100); one from or to
 * pageable memory waits for its stream's earlier work, is staged by the
 * driver, and from the GPU returns when the copy is done (`.item()`). */
#define TL_COPY_BLOCKED_NS	50000ULL
/* The category of the returned call c's own time: tl_call_cat, but TL_SYNC
 * for an async copy that blocked (TL_COPY_BLOCKED_NS): the thread waited
 * for the GPU as in a synchronous copy. */
enum tl_cat tl_returned_cat(const struct isr_ev_cuda_call *c);

/* Time per category, and the time runnable off a CPU whatever the
 * category (a thread preempted inside a CUDA synchronization is in
 * TL_SYNC, and waited for a CPU): cpu_wait_ns >= ns[TL_RUNQUEUE]. */
struct tl_acc {
	__u64 ns[TL_CAT_MAX];
	__u64 cpu_wait_ns;
};

__u64 tl_acc__total(const struct tl_acc *a);
/* d = b - a, per category (clamped at 0). */
void tl_acc__diff(const struct tl_acc *b, const struct tl_acc *a, struct tl_acc *d);

/* Who else was involved in a span: the waker of a blocked span, the task
 * that took the CPU of a run-queue span, the GIL holder of a GIL wait. */
struct tl_other {
	__u32 pid, tid;		/* tid 0: unknown */
};

struct tl_thread;

/* A finished stretch of one category of one thread. */
struct tl_span {
	const struct tl_thread *thread;
	enum tl_cat cat;
	__u64 start, end;
	struct tl_other other;
	__u16 cuda_fn;		/* TL_SYNC, TL_CUDA_MEM, TL_CUDA: the function (ISR_CUDA_FN_*) */
};

/* An idle gap of a device of a process: no kernel, copy or memset of that
 * process ran on it during [start, end). */
struct tl_gap {
	__u32 pid, device;
	__u64 start, end;
	bool leading;		/* from when the bridge began collecting to the first work */
	bool trailing;		/* closed by no work: the end of the recording, of the process or of a GPU window */
	bool tail;		/* trailing, and after the last work of the process (its end, or the recording's) */
	/* The thread whose launch ended the gap (the launching thread of the
	 * first work after it), when known: */
	__u32 launcher_tid;	/* 0: unknown */
	__u64 launch_ns;	/* when that work was launched (CPU clock); 0: unknown */
	struct tl_acc launcher;	/* that thread's categories during the gap */
	bool launcher_known;	/* launcher holds a reading */
	bool after_sync;	/* the gap began when a synchronization of the process drained the device */
	__u64 sync_entry_ns;	/* that synchronization's entry */
	__u64 sync_return_ns;	/* and its return */
	__u32 sync_tid;
	__u16 sync_fn;
};

struct tl_thread {
	__u32 pid, tid;
	char comm[16];
	__u64 start_ns, end_ns;	/* window: creation (or recording start) to exit (or end) */
	bool created, exited;
	struct tl_acc acc;	/* totals so far (up to `now`) */
	__u64 now;		/* acc covers [start_ns, now) */
	__u64 launches;		/* launch calls seen */
	__u64 last_launch_ns;
	__u64 last_sample_stack;	/* stack id of its latest Python sample (0: none / no frame) */
	__u64 last_sample_ns;
};

struct timeline;

/* Callbacks of the rules and metrics: every field may be NULL. */
struct tl_observer {
	void *ctx;
	void (*span)(void *ctx, const struct tl_span *s);
	void (*gap)(void *ctx, const struct tl_gap *g);
	/* Every event after the timeline took it in, with its thread (NULL
	 * for events of no target thread). */
	void (*event)(void *ctx, const struct pass_event *e, const struct tl_thread *t);
};

/* A timeline of the events of pass p (over recording r). NULL + errno. */
struct timeline *timeline__new(const struct pass *p, const struct recording *r);
void timeline__free(struct timeline *tl);

/* Observers are called in the order they were added. 0 or -ENOMEM. */
int timeline__observe(struct timeline *tl, const struct tl_observer *o);

/* Feeds one event (in pass order). 0 or -errno. */
int timeline__event(struct timeline *tl, const struct pass_event *e);
/* Closes every open interval and gap at the end of the recording. */
int timeline__finish(struct timeline *tl);

/* The thread's totals up to `at` (>= the time of the latest event fed).
 * NULL when tid is not a known live thread of pid. */
const struct tl_thread *timeline__thread(struct timeline *tl, __u32 pid, __u32 tid);
void timeline__thread_acc(struct timeline *tl, const struct tl_thread *t, __u64 at, struct tl_acc *out);

/* The category thread t is in now (at the latest event fed). */
enum tl_cat timeline__thread_cat(const struct tl_thread *t);

/* The latest incarnation of thread (pid, tid), exited or not; NULL when
 * none was seen. */
const struct tl_thread *timeline__thread_latest(const struct timeline *tl, __u32 pid, __u32 tid);

/* Every thread seen, in order of first sight (also exited ones). */
size_t timeline__thread_count(const struct timeline *tl);
const struct tl_thread *timeline__thread_at(const struct timeline *tl, size_t i);

/* A device of a process: its busy time (union of its work) and how long
 * its activity was observed (first work, or the bridge's start, to the
 * process's exit or the end of the recording; with GPU windows, the
 * windows' total length, against its span from the first window to the
 * process's exit or the end: estimated when shorter). Idle gaps lie inside
 * the windows only. Valid after finish. */
struct tl_device {
	__u32 pid, device;
	__u64 busy_ns, observed_ns;
	__u64 span_ns;		/* observed_ns without windows */
	bool estimated;		/* observed in windows that cover less than span_ns */
};

size_t timeline__device_count(const struct timeline *tl);
void timeline__device(const struct timeline *tl, size_t i, struct tl_device *out);

/* Whether a device of pid is idle now (its last gap is open), and since
 * when (the earliest open gap's start). */
bool timeline__gpu_idle(const struct timeline *tl, __u32 pid, __u64 *since);
/* The names of a task that is not a target, from the task_info events fed
 * so far: its thread name (of tid, when tid is a task of pid named) and its
 * process's name (from any task of pid named); "" when not known. False
 * when neither is. */
bool timeline__task_name(const struct timeline *tl, __u32 pid, __u32 tid, char comm[16], char process_comm[16]);

/* Whether GPU activity was seen for pid (kernels, copies or memsets). */
bool timeline__has_gpu(const struct timeline *tl, __u32 pid);

#endif
