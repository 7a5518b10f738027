// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The task model (tasks.h): threads looked up by tid in a hash table that
 * maps a tid to its latest incarnation, a state machine per thread that
 * adds the time of each state as it ends, and the names of the tasks that
 * are not targets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks.h"
#include "buf.h"
#include "htab.h"
#include "registry.h"

/* Raw task states of isr_ev_sched_switch.prev_state */
#define TASK_UNINTERRUPTIBLE	0x2
#define TASK_DEAD		0x80

/* A task that is not a target, as a task_info event named it. */
struct task_name {
	__u32 pid, tid;
	char comm[16], process_comm[16];
};

struct tasks {
	struct tasks_opts o;
	struct htab by_tid;		/* tid -> index of its latest incarnation */
	struct task_thread **threads;	/* each allocated alone: pointers stay valid */
	size_t count, cap;
	struct htab name_by_tid;	/* tid -> index in names */
	struct htab name_by_pid;	/* pid -> index in names: the latest of its tasks named */
	struct task_name *names;
	size_t nnames, names_cap;
};

bool task_switch_ends(const struct isr_ev_sched_switch *e)
{
	return (e->prev_state & TASK_DEAD) && !(e->flags & ISR_SWITCH_RUNNABLE);
}

void task_name__format(char *buf, size_t len, const char *comm, const char *process, const char *py_entry)
{
	/* a thread the program named says what it is already */
	if (py_entry && *py_entry && process && !strcmp(comm, process))
		snprintf(buf, len, "%s (%s)", comm, py_entry);
	else
		snprintf(buf, len, "%s", comm);
}

static void copy_comm(char dst[16], const char *src)
{
	size_t n = strnlen(src, 15);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static __u64 span(__u64 from, __u64 to)
{
	return to > from ? to - from : 0;
}

/* ---- threads ------------------------------------------------------------------------- */

static struct task_thread *add(struct tasks *tk, __u32 pid, __u32 tid, __u64 start)
{
	struct task_thread *t;
	int err;

	err = array__reserve(&tk->threads, &tk->cap, tk->count + 1, sizeof(*tk->threads));
	t = err ? NULL : calloc(1, sizeof(*t));
	if (!t || htab_u64__put(&tk->by_tid, tid, tk->count)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	t->ix = (__u32)tk->count;
	t->start_ns = t->since = start;
	t->end_ns = tk->o.end;
	t->state = TASK_UNKNOWN;
	tk->threads[tk->count++] = t;
	return t;
}

static bool is_target(const struct tasks *tk, __u32 pid)
{
	return pid && tk->o.is_target(tk->o.ctx, pid);
}

/* The latest incarnation of tid; NULL when none. */
static struct task_thread *latest_of(const struct tasks *tk, __u32 tid)
{
	__u64 idx;

	return htab_u64__get(&tk->by_tid, tid, &idx) ? tk->threads[idx] : NULL;
}

/* A new incarnation of tid, from start, when pid is a target (NULL with
 * *err 0 when it is not). */
static struct task_thread *add_target(struct tasks *tk, __u32 pid, __u32 tid, __u64 start, int *err)
{
	struct task_thread *t;

	if (!is_target(tk, pid))
		return NULL;
	t = add(tk, pid, tid, start);
	if (!t)
		*err = -ENOMEM;
	return t;
}

/* The live thread tid of a target, made on first sight (its window from
 * the start). NULL with *err 0: the idle task, not a target, or an exited
 * thread. */
static struct task_thread *lookup(struct tasks *tk, __u32 pid, __u32 tid, int *err)
{
	struct task_thread *t;

	*err = 0;
	if (!tid)
		return NULL;
	t = latest_of(tk, tid);
	if (t)
		return t->exited || t->pid != pid ? NULL : t;
	return add_target(tk, pid, tid, tk->o.start, err);
}

/* Ends the state t is in at ts: its time is added; a thread whose state
 * was never told was in `implied` since its window's start. */
static void close_state(struct task_thread *t, __u64 ts, enum task_state implied, struct task_touch *tc)
{
	if (t->state == TASK_UNKNOWN) {
		t->state = implied;
		t->since = t->start_ns;
	}
	if (tc) {
		tc->was = t->state;
		tc->was_since = t->since;
	}
	t->ns[t->state] += span(t->since, ts);
	t->since = ts;
}

static struct task_touch *touch(struct task_change *c, struct task_thread *t)
{
	struct task_touch *tc = &c->touch[c->ntouch++];

	*tc = (struct task_touch){ .t = t, .was = t->state, .was_since = t->since };
	t->seen = true;
	return tc;
}

/* t emits an event itself: it is on a CPU, and ran since its start when
 * nothing told before. */
static void running(struct task_thread *t)
{
	if (t->state == TASK_UNKNOWN) {
		t->state = TASK_RUNNING;
		t->since = t->start_ns;
	}
}

static void set_state(struct task_thread *t, enum task_state s, __u64 ts, struct task_touch *tc)
{
	close_state(t, ts, s == TASK_RUNNING ? TASK_BLOCKED : TASK_RUNNING, tc);
	t->state = s;
}

static void end(struct task_thread *t, __u64 ts, struct task_touch *tc)
{
	running(t);
	close_state(t, ts, TASK_RUNNING, tc);
	t->exited = true;
	t->end_ns = ts;
	tc->ended = true;
}

/* A thread that comes into existence at ts (a fork's child, wakeup_new, a
 * new exec leader). A live thread already known from events keeps its
 * window; one only listed at the start (no events yet) or an exited one
 * with the same tid gives way to a thread created at ts. */
static struct task_thread *create(struct tasks *tk, __u32 pid, __u32 tid, __u64 ts, struct task_change *c,
				  int *err)
{
	struct task_thread *t;
	struct task_touch *tc;

	*err = 0;
	if (!tid)
		return NULL;
	t = latest_of(tk, tid);
	if (t && t->seen && !t->exited) {
		if (t->pid != pid)
			return NULL;
		touch(c, t);
		return t;
	}
	if (t && !t->exited && t->pid == pid)
		memset(t->ns, 0, sizeof(t->ns));
	else if (!(t = add_target(tk, pid, tid, ts, err)))
		return NULL;
	t->start_ns = t->since = ts;
	t->created = true;
	t->state = TASK_BLOCKED;	/* not running until first switched in */
	tc = touch(c, t);
	tc->created = true;
	return t;
}

/* ---- events ------------------------------------------------------------------------- */

static int on_switch(struct tasks *tk, const struct isr_ev_sched_switch *e, struct task_change *c)
{
	struct task_thread *prev, *next;
	struct task_touch *tc;
	int err;

	prev = lookup(tk, e->hdr.pid, e->hdr.tid, &err);
	if (err)
		return err;
	c->thread = prev;
	if (prev && task_switch_ends(e)) {
		/* the last switch-out of a thread whose exit event was lost */
		end(prev, c->ts, touch(c, prev));
	} else if (prev) {
		tc = touch(c, prev);
		set_state(prev, (e->flags & ISR_SWITCH_RUNNABLE) ? TASK_RUNNABLE :
				(e->prev_state & TASK_UNINTERRUPTIBLE) ? TASK_IO : TASK_BLOCKED, c->ts, tc);
	}
	next = lookup(tk, e->next_pid, e->next_tid, &err);
	if (next)
		set_state(next, TASK_RUNNING, c->ts, touch(c, next));
	return err;
}

/* Woken: runnable, unless it was running or runnable already. */
static void wakeup(struct task_thread *t, __u64 ts, struct task_touch *tc)
{
	if (t->state == TASK_UNKNOWN) {
		t->state = TASK_BLOCKED;
		t->since = t->start_ns;
	}
	tc->was = t->state;
	tc->was_since = t->since;
	if (t->state == TASK_BLOCKED || t->state == TASK_IO)
		set_state(t, TASK_RUNNABLE, ts, NULL);
}

/* A non-leader thread that calls exec takes over the leader's tid: the old
 * tid ends there and the leader tid starts afresh, running. */
static int on_exec(struct tasks *tk, const struct isr_ev_proc_exec *e, struct task_change *c)
{
	struct task_thread *t;
	int err;

	if (e->old_tid && e->old_tid != e->hdr.tid) {
		t = lookup(tk, e->hdr.pid, e->old_tid, &err);
		if (t)
			end(t, c->ts, touch(c, t));
		t = err ? NULL : lookup(tk, e->hdr.pid, e->hdr.tid, &err);
		if (t)
			end(t, c->ts, touch(c, t));
		t = err ? NULL : create(tk, e->hdr.pid, e->hdr.tid, c->ts, c, &err);
		if (t)
			t->state = TASK_RUNNING;	/* the caller, on a CPU */
	} else {
		t = lookup(tk, e->hdr.pid, e->hdr.tid, &err);
		if (t) {
			running(t);
			touch(c, t);
		}
	}
	if (!t)
		return err;
	c->thread = t;
	copy_comm(t->comm, e->comm);
	return 0;
}

/* The old image of an exec is gone whatever the thread; a process is gone
 * with the exit of a last thread it traced. */
static __u32 image_ended(const struct isr_ev_hdr *h, const struct task_change *c)
{
	if (h->type == ISR_EV_PROC_EXEC)
		return h->pid;
	if (h->type == ISR_EV_PROC_EXIT && c->thread &&
	    (((const struct isr_ev_proc_exit *)h)->flags & ISR_EXIT_GROUP_DEAD))
		return h->pid;
	return 0;
}

static int on_task_info(struct tasks *tk, const struct isr_ev_task_info *e)
{
	struct task_name *n;
	__u64 idx;

	if (!e->task_tid)
		return 0;
	if (!htab_u64__get(&tk->name_by_tid, e->task_tid, &idx)) {
		if (array__reserve(&tk->names, &tk->names_cap, tk->nnames + 1, sizeof(*tk->names)))
			return -ENOMEM;
		idx = tk->nnames++;
		if (htab_u64__put(&tk->name_by_tid, e->task_tid, idx))
			return -ENOMEM;
	}
	n = &tk->names[idx];
	n->pid = e->task_pid;
	n->tid = e->task_tid;
	copy_comm(n->comm, e->comm);
	copy_comm(n->process_comm, e->process_comm);
	return htab_u64__put(&tk->name_by_pid, e->task_pid, idx) ? -ENOMEM : 0;
}

/* The event's own thread: made on first sight, marked seen, on a CPU when
 * it emitted the event itself. */
static int on_thread_event(struct tasks *tk, const struct isr_ev_hdr *h, struct task_change *c)
{
	struct isr_task who;
	struct task_thread *t;
	int err;

	if (!isr_ev_task(h, &who))
		return 0;
	t = lookup(tk, who.pid, who.tid, &err);
	if (!t)
		return err;
	c->thread = t;
	if (isr_event_flags(h->type) & ISR_EVF_ONCPU)
		running(t);
	touch(c, t);
	switch (h->type) {
	case ISR_EV_SCHED_WAKEUP:
		wakeup(t, c->ts, &c->touch[c->ntouch - 1]);
		return 0;
	case ISR_EV_PROC_EXIT: {
		const struct isr_ev_proc_exit *x = (const void *)h;

		/* its last name, should a rename have been dropped */
		if (x->comm[0])
			copy_comm(t->comm, x->comm);
		end(t, c->ts, &c->touch[c->ntouch - 1]);
		return 0;
	}
	case ISR_EV_TASK_RENAME:
		/* by itself or by another thread: says nothing of its state */
		copy_comm(t->comm, ((const struct isr_ev_task_rename *)h)->comm);
		return 0;
	default:
		return 0;
	}
}

static int change(struct tasks *tk, const struct isr_ev_hdr *h, struct task_change *c);

int tasks__event(struct tasks *tk, const struct isr_ev_hdr *h, struct task_change *c)
{
	int err = change(tk, h, c);

	c->image_ended = image_ended(h, c);
	return err;
}

/* What the event changes of the threads it names. */
static int change(struct tasks *tk, const struct isr_ev_hdr *h, struct task_change *c)
{
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->ts = h->ts_ns < tk->o.start ? tk->o.start : h->ts_ns > tk->o.end ? tk->o.end : h->ts_ns;
	switch (h->type) {
	case ISR_EV_SCHED_SWITCH:
		return on_switch(tk, (const void *)h, c);
	case ISR_EV_SCHED_WAKEUP_NEW:
		c->thread = create(tk, h->pid, h->tid, c->ts, c, &err);
		if (c->thread)
			wakeup(c->thread, c->ts, &c->touch[c->ntouch - 1]);
		return err;
	case ISR_EV_PROC_EXEC:
		return on_exec(tk, (const void *)h, c);
	case ISR_EV_PROC_FORK: {
		const struct isr_ev_proc_fork *f = (const void *)h;
		struct task_thread *child;

		/* the child comes into existence whether or not its parent is traced */
		err = on_thread_event(tk, h, c);
		child = err ? NULL : create(tk, f->child_pid, f->child_tid, c->ts, c, &err);
		if (child)
			copy_comm(child->comm, f->child_comm);
		return err;
	}
	case ISR_EV_TASK_INFO:
		return on_task_info(tk, (const void *)h);
	default:
		return on_thread_event(tk, h, c);
	}
}

void tasks__finish(struct tasks *tk)
{
	for (size_t i = 0; i < tk->count; i++) {
		struct task_thread *t = tk->threads[i];

		if (!t->exited)
			close_state(t, tk->o.end, TASK_BLOCKED, NULL);
	}
}

/* ---- construction and queries --------------------------------------------------------- */

struct tasks *tasks__new(const struct tasks_opts *o)
{
	struct tasks *tk = calloc(1, sizeof(*tk));

	if (!tk)
		return NULL;
	tk->o = *o;
	/* threads listed in the PROCESS chunks existed at the start */
	for (size_t i = 0; o->r && i < o->r->process_count; i++) {
		const struct rec_process *p = &o->r->processes[i];

		for (size_t j = 0; j < p->thread_count; j++) {
			struct task_thread *t;
			__u64 idx;

			if (!p->threads[j].tid || !p->pid || htab_u64__get(&tk->by_tid, p->threads[j].tid, &idx))
				continue;
			t = add(tk, p->pid, p->threads[j].tid, o->start);
			if (!t) {
				tasks__free(tk);
				errno = ENOMEM;
				return NULL;
			}
			copy_comm(t->comm, p->threads[j].comm);
		}
	}
	return tk;
}

void tasks__free(struct tasks *tk)
{
	if (!tk)
		return;
	for (size_t i = 0; i < tk->count; i++)
		free(tk->threads[i]);
	free(tk->threads);
	htab__free(&tk->by_tid);
	htab__free(&tk->name_by_tid);
	htab__free(&tk->name_by_pid);
	free(tk->names);
	free(tk);
}

struct task_thread *tasks__thread(const struct tasks *tk, __u32 pid, __u32 tid)
{
	struct task_thread *t = latest_of(tk, tid);

	return t && t->pid == pid && !t->exited ? t : NULL;
}

struct task_thread *tasks__latest(const struct tasks *tk, __u32 pid, __u32 tid)
{
	__u64 idx;

	if (!htab_u64__get(&tk->by_tid, tid, &idx))
		return NULL;
	/* the tid's latest thread is the last seen; when another process
	 * reused the tid since, an earlier one may be (pid, tid)'s */
	for (size_t i = idx + 1; i-- > 0;)
		if (tk->threads[i]->tid == tid && tk->threads[i]->pid == pid)
			return tk->threads[i];
	return NULL;
}

size_t tasks__count(const struct tasks *tk)
{
	return tk->count;
}

struct task_thread *tasks__at(const struct tasks *tk, size_t ix)
{
	return ix < tk->count ? tk->threads[ix] : NULL;
}

void task_thread__ns(const struct task_thread *t, __u64 at, __u64 ns[TASK_STATES])
{
	memcpy(ns, t->ns, sizeof(t->ns));
	if (!t->exited)
		ns[t->state] += span(t->since, at);
}

bool tasks__name_of(const struct tasks *tk, __u32 pid, __u32 tid, char comm[16], char process_comm[16])
{
	__u64 idx;

	comm[0] = process_comm[0] = '\0';
	if (tid && htab_u64__get(&tk->name_by_tid, tid, &idx) && tk->names[idx].pid == pid) {
		copy_comm(comm, tk->names[idx].comm);
		copy_comm(process_comm, tk->names[idx].process_comm);
	} else if (htab_u64__get(&tk->name_by_pid, pid, &idx)) {
		copy_comm(process_comm, tk->names[idx].process_comm);
	}
	return comm[0] || process_comm[0];
}
