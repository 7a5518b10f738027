/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The task model: which threads a recording's events are about, and what
 * each was doing at the scheduler's level, decided once for every stage
 * (the pass feeds it each event before the stages see it: pass.h; `top`'s
 * live metrics feed it as the recorder writes: live.h).
 *
 * Threads. A thread is one incarnation of a tid: a tid maps to its latest
 * incarnation; events of an exited thread are ignored (the kernel reports
 * a dead task's last switch-out after its exit); only a creation event
 * (fork, wakeup_new, exec of a non-leader) starts a new incarnation. A
 * thread listed in the recording's PROCESS chunks existed at the start; a
 * thread of a target first seen in an event existed at the start too;
 * events of tasks that are not targets make none.
 *
 * Death, decided here only: the thread's exit event; its last switch-out
 * (the switch's prev_state TASK_DEAD, and not runnable), which ends it
 * when its exit event was lost; an exec by a thread that is not the
 * leader, which ends the caller and the former leader and starts the
 * leader's tid afresh.
 *
 * States. At every moment a live thread is in one state (enum task_state):
 * running (switched in, until switched out), runnable (switched out still
 * runnable, ISR_SWITCH_RUNNABLE: preempted or yielded; or woken, until
 * switched in), in uninterruptible sleep (switched out in D state, until
 * woken or switched in), blocked (any other sleep). Time before a thread's
 * first event that tells is attributed from that event: a first
 * switch-out, or an event its thread emits itself (ISR_EVF_ONCPU: a page
 * fault, a CUDA call, a GIL event, a Python sample, an exit, ...) means it
 * ran since the start of its window; a first switch-in or wakeup that it
 * was off-CPU; a thread with no such event was blocked all along.
 *
 * Processes: a process's address space ends when it execs (its image is
 * replaced) or when its last thread exits (ISR_EXIT_GROUP_DEAD); what it
 * held there (CUDA memory, GPU devices) goes with it.
 *
 * Names: the latest of the recording's listing, a fork's child name, an
 * exec, a rename, an exit; tasks that are not targets are named by the
 * task_info events.
 *
 * Pure: a function of the events it is fed, with memory per thread, never
 * per event.
 */
#ifndef INFERSCOPE_TASKS_H
#define INFERSCOPE_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"

enum task_state {
	TASK_UNKNOWN,		/* before its first event that tells (then attributed) */
	TASK_RUNNING,		/* on a CPU */
	TASK_RUNNABLE,		/* off a CPU, waiting for one */
	TASK_BLOCKED,		/* sleeping until another task or a timer wakes it */
	TASK_IO,		/* uninterruptible sleep (D state: disk, network filesystem, kernel lock) */
	TASK_STATES
};

struct task_thread {
	__u32 pid, tid;
	__u32 ix;			/* the incarnations in order of first sight: 0, 1, ... */
	char comm[16];			/* its latest name; "" when none was seen */
	__u64 start_ns, end_ns;		/* its window: creation (or the start) to exit (or the end) */
	bool created;			/* created during the recording */
	bool exited;			/* exited during the recording */
	bool seen;			/* an event named it */
	enum task_state state;		/* since `since` */
	__u64 since;
	__u64 ns[TASK_STATES];		/* time in each state from start_ns to `since` */
};

/* What an event did to a thread it names. */
struct task_touch {
	struct task_thread *t;
	enum task_state was;		/* its state until the event (an unknown start attributed) */
	__u64 was_since;
	bool created;			/* came into existence at the event (its window starts there) */
	bool ended;			/* exited at the event */
};

/* What an event did, in the order the changes happened: a switch's prev
 * then next, a fork's parent then child, an exec's caller, former leader
 * and new leader. */
struct task_change {
	__u64 ts;			/* the event's time, clamped to the window */
	struct task_thread *thread;	/* the thread the event is about, if a target's: live, or ended by it */
	struct task_touch touch[3];
	size_t ntouch;
	__u32 image_ended;		/* a process whose address space ended at the event (0: none) */
};

struct tasks_opts {
	__u64 start, end;		/* the window: event times are clamped into it */
	const struct recording *r;	/* threads it lists existed at the start (NULL: none) */
	bool (*is_target)(const void *ctx, __u32 pid);
	const void *ctx;
};

struct tasks;

/* NULL + errno. */
struct tasks *tasks__new(const struct tasks_opts *o);
void tasks__free(struct tasks *tk);
/* Feeds one usable event (format/registry.h) and says what it changed.
 * 0 or -ENOMEM. */
int tasks__event(struct tasks *tk, const struct isr_ev_hdr *h, struct task_change *c);
/* Closes every live thread's time at the end of the window (a thread whose
 * state was never told: blocked). */
void tasks__finish(struct tasks *tk);

/* The live thread tid of pid; NULL when none. */
struct task_thread *tasks__thread(const struct tasks *tk, __u32 pid, __u32 tid);
/* The latest incarnation of (pid, tid), exited or not; NULL when none. */
struct task_thread *tasks__latest(const struct tasks *tk, __u32 pid, __u32 tid);
/* Every thread seen, in order of first sight. */
size_t tasks__count(const struct tasks *tk);
struct task_thread *tasks__at(const struct tasks *tk, size_t ix);

/* t's time in each state up to `at` (no earlier than its latest change). */
void task_thread__ns(const struct task_thread *t, __u64 at, __u64 ns[TASK_STATES]);

/* The names of a task that is not a target, from the task_info events fed
 * so far: its thread name (when tid is a task of pid named) and its
 * process's name (from any task of pid named); "" when not known. False
 * when neither is. */
bool tasks__name_of(const struct tasks *tk, __u32 pid, __u32 tid, char comm[16], char process_comm[16]);

/* A switch-out that ends its task: dead (TASK_DEAD) and not runnable. */
bool task_switch_ends(const struct isr_ev_sched_switch *e);

/* A thread's name as every report shows it: its name, and, when that is
 * only its process's (process: the name of its process's main thread;
 * NULL when unknown), the function its Python thread runs (py_entry,
 * analysis/model/py_report.h; NULL or "" when the stacks do not tell):
 * "python3.11 (Loader.worker_loop)"; a thread the program named keeps its
 * name alone. */
void task_name__format(char *buf, size_t len, const char *comm, const char *process, const char *py_entry);
#define TASK_NAME_LEN	96	/* what task_name__format writes at most (with its NUL) */

#endif
