// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-thread scheduling summary: one pass over the time-sorted events with a
 * small state machine per thread (see summary.h for the definitions).
 *
 * Threads are looked up by tid in an open-addressing hash table, so a pass
 * costs O(events + threads). A tid can be reused after its thread exited:
 * the table maps a tid to its latest incarnation, events of an exited thread
 * are ignored (the kernel reports the dead task's final switch-out after its
 * exit), and only a creation event (fork, wakeup_new, exec of a non-leader)
 * starts a new incarnation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

/* Raw task states of isr_ev_sched_switch.prev_state */
#define TASK_UNINTERRUPTIBLE	0x2
#define TASK_DEAD		0x80

/* Where a thread is, as far as the events tell. UNKNOWN until its first
 * event that reveals it: the interval from the window start is then
 * attributed from that event's direction. */
enum {
	TS_UNKNOWN,
	TS_ON,
	TS_OFF,
};

struct tstate {
	struct thread_summary s;
	int state;		/* TS_* */
	bool seen;		/* any event about this thread yet */
	bool runnable;		/* OFF and waiting for a CPU since runnable_since */
	bool in_d;		/* OFF in D state since `since`, not woken yet */
	__u64 since;		/* start of the current ON or OFF interval */
	__u64 runnable_since;
};

/* u32 -> u32 open-addressing hash table; key 0 marks an empty slot (tid 0
 * is the idle task and pid 0 is never a target, so 0 is never a key). */
struct u32_map {
	__u32 *keys;
	__u32 *vals;
	size_t cap;		/* power of two */
	size_t len;
};

static size_t u32_map__slot(const struct u32_map *m, __u32 key)
{
	size_t i = (key * 2654435761U) & (m->cap - 1);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int u32_map__init(struct u32_map *m, size_t cap)
{
	m->cap = cap;
	m->len = 0;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		m->keys = m->vals = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void u32_map__free(struct u32_map *m)
{
	free(m->keys);
	free(m->vals);
}

static const __u32 *u32_map__get(const struct u32_map *m, __u32 key)
{
	size_t i = u32_map__slot(m, key);

	return m->keys[i] ? &m->vals[i] : NULL;
}

static int u32_map__put(struct u32_map *m, __u32 key, __u32 val)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap) {
		struct u32_map bigger;
		int err = u32_map__init(&bigger, m->cap * 2);

		if (err)
			return err;
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			i = u32_map__slot(&bigger, m->keys[j]);
			bigger.keys[i] = m->keys[j];
			bigger.vals[i] = m->vals[j];
		}
		bigger.len = m->len;
		u32_map__free(m);
		*m = bigger;
	}
	i = u32_map__slot(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
	return 0;
}

struct ctx {
	const struct recording *r;
	__u64 start, end;
	struct u32_map targets;	/* pids whose threads are summarized */
	struct u32_map by_tid;	/* tid -> index of its latest incarnation */
	struct tstate *threads;
	size_t count, cap;
};

static void copy_comm(char dst[16], const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen < 15 ? srclen : 15);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool is_target(const struct ctx *c, __u32 pid)
{
	return pid && u32_map__get(&c->targets, pid);
}

/* Appends a thread whose window starts at `start` and maps tid to it.
 * Moves c->threads: pointers to other threads taken before are stale. */
static struct tstate *ctx__add_thread(struct ctx *c, __u32 pid, __u32 tid, __u64 start)
{
	struct tstate *t;
	int err;

	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct tstate *n = reallocarray(c->threads, cap, sizeof(*n));

		if (!n)
			return NULL;
		c->threads = n;
		c->cap = cap;
	}
	err = u32_map__put(&c->by_tid, tid, (__u32)c->count);
	if (err) {
		errno = -err;
		return NULL;
	}
	t = &c->threads[c->count++];
	memset(t, 0, sizeof(*t));
	t->s.pid = pid;
	t->s.tid = tid;
	t->s.start_ns = start;
	t->state = TS_UNKNOWN;
	return t;
}

/* The live thread `tid` of a target, created (window from the recording
 * start) on first sight. NULL with *err == 0 when the event is to be ignored:
 * idle task, not a target, or a thread that already exited. */
static struct tstate *ctx__thread(struct ctx *c, __u32 pid, __u32 tid, int *err)
{
	const __u32 *idx;
	struct tstate *t;

	*err = 0;
	if (!tid)
		return NULL;
	idx = u32_map__get(&c->by_tid, tid);
	if (idx) {
		t = &c->threads[*idx];
		return t->s.exited || t->s.pid != pid ? NULL : t;
	}
	if (!is_target(c, pid))
		return NULL;
	t = ctx__add_thread(c, pid, tid, c->start);
	if (!t)
		*err = -errno;
	return t;
}

/* A thread that comes into existence at ts (fork child, wakeup_new, new
 * exec leader). A live thread already known from events keeps its window;
 * one only listed at start (no events yet) or an exited one with the same
 * tid gives way to a thread created at ts. */
static struct tstate *ctx__created(struct ctx *c, __u32 pid, __u32 tid, __u64 ts, int *err)
{
	const __u32 *idx;
	struct tstate *t;

	*err = 0;
	if (!tid)
		return NULL;
	idx = u32_map__get(&c->by_tid, tid);
	if (idx) {
		t = &c->threads[*idx];
		if (t->seen && !t->s.exited)
			return t->s.pid == pid ? t : NULL;
		if (!t->s.exited && t->s.pid == pid) {
			t->s.start_ns = ts;
			goto created;
		}
	}
	if (!is_target(c, pid))
		return NULL;
	t = ctx__add_thread(c, pid, tid, ts);
	if (!t) {
		*err = -errno;
		return NULL;
	}
created:
	t->s.created = true;
	t->seen = true;
	t->state = TS_OFF;	/* not running until first switched in */
	t->since = ts;
	return t;
}

static __u64 span(__u64 from, __u64 to)
{
	return to > from ? to - from : 0;
}

/* Closes the open interval at ts. A thread in TS_UNKNOWN was in `implied`
 * since its window start. */
static void thread__close(struct tstate *t, __u64 ts, int implied)
{
	if (t->state == TS_UNKNOWN) {
		t->state = implied;
		t->since = t->s.start_ns;
	}
	if (t->state == TS_ON) {
		t->s.on_cpu_ns += span(t->since, ts);
	} else {
		t->s.off_cpu_ns += span(t->since, ts);
		if (t->runnable)
			t->s.runqueue_wait_ns += span(t->runnable_since, ts);
		if (t->in_d)
			t->s.blocked_io_ns += span(t->since, ts);
	}
	t->runnable = false;
	t->in_d = false;
	t->since = ts;
}

/* An event the thread emits itself (it is on a CPU at ts): a thread seen
 * first this way was running since its window start. */
static void thread__running(struct tstate *t)
{
	if (t->state == TS_UNKNOWN) {
		t->state = TS_ON;
		t->since = t->s.start_ns;
	}
}

static void thread__exit(struct tstate *t, __u64 ts)
{
	thread__running(t);
	thread__close(t, ts, TS_ON);
	t->s.exited = true;
	t->s.end_ns = ts;
}

static void thread__wakeup(struct tstate *t, __u64 ts)
{
	t->s.wakeups++;
	if (t->state == TS_UNKNOWN) {
		t->state = TS_OFF;
		t->since = t->s.start_ns;
	}
	if (t->state != TS_OFF || t->runnable)
		return;
	if (t->in_d) {
		t->s.blocked_io_ns += span(t->since, ts);
		t->in_d = false;
	}
	t->runnable = true;
	t->runnable_since = ts;
}

static void on_switch(struct ctx *c, const struct isr_ev_sched_switch *e, __u64 ts, int *err)
{
	struct tstate *prev, *next;

	prev = ctx__thread(c, e->hdr.pid, e->hdr.tid, err);
	if (*err)
		return;
	if (prev && (e->prev_state & TASK_DEAD) && !(e->flags & ISR_SWITCH_RUNNABLE)) {
		/* the last switch-out of a thread whose exit event was lost */
		prev->seen = true;
		thread__exit(prev, ts);
	} else if (prev) {
		prev->seen = true;
		thread__close(prev, ts, TS_ON);
		prev->state = TS_OFF;
		if (e->flags & ISR_SWITCH_RUNNABLE) {
			prev->runnable = true;
			prev->runnable_since = ts;
		} else if (e->prev_state & TASK_UNINTERRUPTIBLE) {
			prev->in_d = true;
		}
		if (e->flags & (ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE))
			prev->s.switches_involuntary++;
		else
			prev->s.switches_voluntary++;
	}
	next = ctx__thread(c, e->next_pid, e->next_tid, err);
	if (next) {
		next->seen = true;
		thread__close(next, ts, TS_OFF);
		next->state = TS_ON;
	}
}

static void on_fork(struct ctx *c, const struct isr_ev_proc_fork *e, __u64 ts, int *err)
{
	struct tstate *t = ctx__thread(c, e->hdr.pid, e->hdr.tid, err);

	if (*err)
		return;
	if (t) {
		t->seen = true;
		thread__running(t);
	}
	t = ctx__created(c, e->child_pid, e->child_tid, ts, err);
	if (t)
		copy_comm(t->s.comm, e->child_comm, sizeof(e->child_comm));
}

/* A non-leader thread that calls exec takes over the leader's tid: the old
 * tid ends there and the leader tid starts afresh, running. */
static void on_exec(struct ctx *c, const struct isr_ev_proc_exec *e, __u64 ts, int *err)
{
	struct tstate *t;

	if (e->old_tid && e->old_tid != e->hdr.tid) {
		t = ctx__thread(c, e->hdr.pid, e->old_tid, err);
		if (*err)
			return;
		if (t)
			thread__exit(t, ts);
		t = ctx__thread(c, e->hdr.pid, e->hdr.tid, err);
		if (*err)
			return;
		if (t)
			thread__exit(t, ts);
		t = ctx__created(c, e->hdr.pid, e->hdr.tid, ts, err);
		if (t)
			t->state = TS_ON;	/* the caller, on a CPU */
	} else {
		t = ctx__thread(c, e->hdr.pid, e->hdr.tid, err);
	}
	if (!t)
		return;
	t->seen = true;
	thread__running(t);
	copy_comm(t->s.comm, e->comm, sizeof(e->comm));
}

static void on_fault(struct tstate *t, const struct isr_ev_page_fault *e)
{
	thread__running(t);
	if (e->flags & ISR_FAULT_MAJOR)
		t->s.major_faults++;
	else
		t->s.minor_faults++;
	if (!(e->flags & ISR_FAULT_HAS_START))
		return;
	t->s.fault_ns += e->duration_ns;
	if (e->flags & ISR_FAULT_MAJOR)
		t->s.major_fault_ns += e->duration_ns;
}

static const size_t min_size[ISR_EV_TYPE_MAX] = {
	[ISR_EV_SCHED_SWITCH] = sizeof(struct isr_ev_sched_switch),
	[ISR_EV_SCHED_WAKEUP] = sizeof(struct isr_ev_sched_wakeup),
	[ISR_EV_SCHED_WAKEUP_NEW] = sizeof(struct isr_ev_sched_wakeup),
	[ISR_EV_PROC_FORK] = sizeof(struct isr_ev_proc_fork),
	[ISR_EV_PROC_EXEC] = sizeof(struct isr_ev_proc_exec),
	[ISR_EV_PROC_EXIT] = sizeof(struct isr_ev_proc_exit),
	[ISR_EV_TASK_RENAME] = sizeof(struct isr_ev_task_rename),
	[ISR_EV_PAGE_FAULT] = sizeof(struct isr_ev_page_fault),
};

/* A known event long enough to read as its type; others are only counted. */
static bool event_usable(const struct isr_ev_hdr *h)
{
	return h->type > 0 && h->type < ISR_EV_TYPE_MAX && h->size >= min_size[h->type];
}

static int on_event(struct ctx *c, const struct isr_ev_hdr *h)
{
	__u64 ts = h->ts_ns < c->start ? c->start : h->ts_ns > c->end ? c->end : h->ts_ns;
	struct tstate *t;
	int err = 0;

	switch (h->type) {
	case ISR_EV_SCHED_SWITCH:
		on_switch(c, (const void *)h, ts, &err);
		return err;
	case ISR_EV_PROC_FORK:
		on_fork(c, (const void *)h, ts, &err);
		return err;
	case ISR_EV_PROC_EXEC:
		on_exec(c, (const void *)h, ts, &err);
		return err;
	case ISR_EV_SCHED_WAKEUP_NEW:
		t = ctx__created(c, h->pid, h->tid, ts, &err);
		if (t)
			thread__wakeup(t, ts);
		return err;
	default:
		break;
	}
	t = ctx__thread(c, h->pid, h->tid, &err);
	if (!t)
		return err;
	t->seen = true;
	switch (h->type) {
	case ISR_EV_SCHED_WAKEUP:
		thread__wakeup(t, ts);
		break;
	case ISR_EV_PROC_EXIT:
		/* its last name, should a rename have been dropped */
		if (((const struct isr_ev_proc_exit *)h)->comm[0])
			copy_comm(t->s.comm, ((const struct isr_ev_proc_exit *)h)->comm, ISR_COMM_LEN);
		thread__exit(t, ts);
		break;
	case ISR_EV_TASK_RENAME:
		/* may be renamed by another thread: says nothing of its state */
		copy_comm(t->s.comm, ((const struct isr_ev_task_rename *)h)->comm, ISR_COMM_LEN);
		break;
	case ISR_EV_PAGE_FAULT:
		on_fault(t, (const void *)h);
		break;
	}
	return 0;
}

/* Target pids: the recording's processes, the subjects of every event that
 * is emitted only for targets, and children the recorder followed. */
static int ctx__collect_targets(struct ctx *c)
{
	const struct recording *r = c->r;
	int err = 0;

	for (size_t i = 0; i < r->process_count && !err; i++)
		if (r->processes[i].pid)
			err = u32_map__put(&c->targets, r->processes[i].pid, 1);
	for (size_t i = 0; i < r->event_count && !err; i++) {
		const struct isr_ev_hdr *h = r->events[i];
		const struct isr_ev_proc_fork *f = (const void *)h;

		if (!event_usable(h) || h->type == ISR_EV_SCHED_SWITCH)
			continue;
		if (h->pid)
			err = u32_map__put(&c->targets, h->pid, 1);
		if (!err && h->type == ISR_EV_PROC_FORK && f->child_pid &&
		    (f->flags & (ISR_FORK_FOLLOWED | ISR_FORK_THREAD)))
			err = u32_map__put(&c->targets, f->child_pid, 1);
	}
	return err;
}

/* Threads listed in the PROCESS chunks existed at the start. */
static int ctx__add_listed(struct ctx *c)
{
	const struct recording *r = c->r;

	for (size_t i = 0; i < r->process_count; i++) {
		const struct rec_process *p = &r->processes[i];

		for (size_t j = 0; j < p->thread_count; j++) {
			const struct rec_thread *rt = &p->threads[j];
			struct tstate *t;

			if (!rt->tid || !p->pid || u32_map__get(&c->by_tid, rt->tid))
				continue;
			t = ctx__add_thread(c, p->pid, rt->tid, c->start);
			if (!t)
				return -errno;
			copy_comm(t->s.comm, rt->comm, sizeof(rt->comm));
		}
	}
	return 0;
}

static const char *process_comm(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->process_count; i++)
		if (r->processes[i].pid == pid && r->processes[i].comm)
			return r->processes[i].comm;
	return NULL;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct thread_summary *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

static void ctx__window(struct ctx *c)
{
	const struct recording *r = c->r;

	c->start = r->host.start_mono_ns;
	c->end = r->end_mono_ns;
	if (!c->start && r->event_count)
		c->start = r->events[0]->ts_ns;
	if (!c->end && r->event_count)
		c->end = r->events[r->event_count - 1]->ts_ns;
	if (c->end < c->start)
		c->end = c->start;
}

static int ctx__run(struct ctx *c, struct summary *s)
{
	const struct recording *r = c->r;
	int err;

	err = u32_map__init(&c->targets, 64);
	if (!err)
		err = u32_map__init(&c->by_tid, 256);
	if (!err)
		err = ctx__collect_targets(c);
	if (!err)
		err = ctx__add_listed(c);
	for (size_t i = 0; i < r->event_count && !err; i++) {
		const struct isr_ev_hdr *h = r->events[i];

		s->event_total++;
		if (h->type > 0 && h->type < ISR_EV_TYPE_MAX)
			s->event_counts[h->type]++;
		if (event_usable(h))
			err = on_event(c, h);
	}
	if (err)
		return err;

	s->threads = calloc(c->count ? c->count : 1, sizeof(*s->threads));
	if (!s->threads)
		return -ENOMEM;
	for (size_t i = 0; i < c->count; i++) {
		struct tstate *t = &c->threads[i];

		if (!t->s.exited) {
			thread__close(t, c->end, TS_OFF);
			t->s.end_ns = c->end;
		}
		if (!t->s.comm[0]) {
			const char *comm = process_comm(r, t->s.pid);

			if (comm)
				copy_comm(t->s.comm, comm, strlen(comm));
		}
		s->threads[i] = t->s;
	}
	s->thread_count = c->count;
	qsort(s->threads, s->thread_count, sizeof(*s->threads), thread_cmp);
	return 0;
}

int summary__compute(const struct recording *r, struct summary **out)
{
	struct ctx c = { .r = r };
	struct summary *s;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ctx__window(&c);
	s->start_ns = c.start;
	s->end_ns = c.end;
	s->duration_s = (double)(c.end - c.start) / 1e9;
	s->truncated = r->truncated;
	for (int i = 0; i < ISR_SRC_MAX; i++) {
		s->drops[i] = r->drops[i];
		s->drops_total += r->drops[i];
	}

	err = ctx__run(&c, s);
	u32_map__free(&c.targets);
	u32_map__free(&c.by_tid);
	free(c.threads);
	if (err) {
		summary__free(s);
		return err;
	}
	*out = s;
	return 0;
}

void summary__free(struct summary *s)
{
	if (!s)
		return;
	free(s->threads);
	free(s);
}
