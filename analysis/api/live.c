// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Live metrics (live.h). The threads, their time on a CPU, waiting for one
 * and asleep are the task model's (tasks.h), fed every event first: an
 * interval's share is the difference of two readings of it. What the task
 * model does not count (launches, synchronizations, GIL waits, faults) is
 * counted here per thread, by the task model's index, and reset at each
 * snapshot. The findings are the report's: each interval's events, copied
 * as they come, are analysed in memory at its snapshot.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "live.h"
#include "analysis.h"
#include "buf.h"
#include "devmem.h"
#include "registry.h"
#include "tasks.h"

/* An interval's events kept for its analysis (past it: window_cut), and
 * the names kept across intervals (kernel, function and Python code
 * names, Python stacks, tasks, communicators: each written once, when
 * first seen, and read by every later interval's analysis). */
#define LIVE_WINDOW_MAX_BYTES	((size_t)LIVE_WINDOW_MAX_MIB << 20)
#define LIVE_NAMES_MAX_BYTES	(8u << 20)

struct evbuf {
	unsigned char *data;
	size_t len, cap, count;
};

/* What the interval added to a thread, and the task model's readings of
 * it at the previous snapshot. */
struct lthread {
	__u64 launches, faults;
	__u64 sync_ns, gil_ns;
	__u64 read[TASK_STATES];
	/* an event told its state: what the task model attributes to the
	 * state it was in before (from its first sight) of the time before the
	 * previous snapshot is the earlier intervals', not the next one's */
	bool told;
	/* the scheduler event that set its state last (0 bytes: none): its
	 * state at the start of an interval, for that interval's analysis */
	union sched_ev {
		struct isr_ev_hdr hdr;
		struct isr_ev_sched_switch sw;
		struct isr_ev_sched_wakeup wk;
	} last_sched;
};

struct lproc {
	__u32 pid;
	bool gpu_seen;
	__u64 gpu_ns;
	__u64 device_bytes;
};

/* What the budget switches (the launch probes, page-fault tracing): on
 * since `since` when on, and on_ns before that in this interval; sampled
 * once switched off. What it counted last, newest at recent_next - 1 (a
 * ring, emptied with the interval's counts): a window ends when the
 * release of its probes began (the switch's timestamp), but its record
 * comes after the release, behind the events made meanwhile, which are
 * then not the window's and are uncounted (counted, they raised a rate
 * extrapolated from the window: 555 launches/s shown for 500, at a release
 * of 10 ms on a loaded host). Those made during the attach come before the
 * window's record and are not counted. */
#define LIVE_RECENT 16384
struct live_switch {
	bool sampled, on;
	__u64 since, on_ns;
	size_t counter;			/* offsetof(struct lthread, the count it keeps) */
	struct recent {
		__u64 ts;
		size_t thread;		/* by the task model's index */
	} *recent;			/* LIVE_RECENT */
	size_t recent_next, recent_n;
};

struct live {
	struct tasks *tasks;		/* from the first event on */
	struct lthread *threads;	/* by the task model's index */
	size_t nthreads, threads_cap;
	struct lproc *procs;
	size_t nprocs, procs_cap;
	struct devmem *dm;
	struct live_switch hot, faults;	/* the launch probes, page-fault tracing */
	__u64 prev_at, first_ts;
	__u64 events;
	struct live_snapshot snap;
	struct live_thread *rows;	/* snap's threads, grouped by process */
	size_t rows_cap;
	__u32 *targets;			/* the traced processes: given, and followed children */
	size_t ntargets, targets_cap;
	__u32 ncpus;
	struct evbuf window, names;	/* this interval's events; the names of every interval */
	__u64 window_cut, names_cut;
};

static bool is_target(const struct live *l, __u32 pid)
{
	for (size_t i = 0; i < l->ntargets; i++)
		if (l->targets[i] == pid)
			return true;
	return false;
}

static int add_target(struct live *l, __u32 pid)
{
	if (is_target(l, pid))
		return 0;
	if (array__reserve(&l->targets, &l->targets_cap, l->ntargets + 1, sizeof(*l->targets)))
		return -ENOMEM;
	l->targets[l->ntargets++] = pid;
	return 0;
}

struct live *live__new(const __u32 *pids, size_t n, __u32 ncpus)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->ncpus = ncpus;
	for (size_t i = 0; i < n; i++)
		if (add_target(l, pids[i])) {
			free(l->targets);
			free(l);
			return NULL;
		}
	l->dm = devmem__new();
	l->hot = (struct live_switch){ .on = true, .counter = offsetof(struct lthread, launches),
				       .recent = calloc(LIVE_RECENT, sizeof(struct recent)) };
	l->faults = (struct live_switch){ .on = true, .counter = offsetof(struct lthread, faults),
					  .recent = calloc(LIVE_RECENT, sizeof(struct recent)) };
	if (!l->dm || !l->hot.recent || !l->faults.recent) {
		devmem__free(l->dm);
		free(l->hot.recent);
		free(l->faults.recent);
		free(l->targets);
		free(l);
		return NULL;
	}
	return l;
}

void live__free(struct live *l)
{
	if (!l)
		return;
	tasks__free(l->tasks);
	free(l->threads);
	devmem__free(l->dm);
	free(l->targets);
	free(l->procs);
	free(l->snap.procs);
	free(l->rows);
	free(l->window.data);
	free(l->names.data);
	free(l->hot.recent);
	free(l->faults.recent);
	free(l);
}

/* Appends one event to b, up to max bytes. false: no room. */
static bool evbuf__append(struct evbuf *b, const struct isr_ev_hdr *h, size_t size, size_t max)
{
	if (b->len + size > max || buf__reserve(&b->data, &b->cap, b->len + size))
		return false;
	memcpy(b->data + b->len, h, size);
	((struct isr_ev_hdr *)(void *)(b->data + b->len))->size = (__u16)size;
	b->len += size;
	b->count++;
	return true;
}

static bool target_of(const void *ctx, __u32 pid)
{
	return is_target(ctx, pid);
}

/* The counts of the task model's thread tt; NULL when out of memory. */
static struct lthread *thread_of(struct live *l, const struct task_thread *tt)
{
	size_t n = tasks__count(l->tasks);

	if (l->nthreads < n) {
		if (array__reserve(&l->threads, &l->threads_cap, n, sizeof(*l->threads)))
			return NULL;
		memset(l->threads + l->nthreads, 0, (n - l->nthreads) * sizeof(*l->threads));
		l->nthreads = n;
	}
	return &l->threads[tt->ix];
}

static struct lproc *proc_of(struct live *l, __u32 pid)
{
	for (size_t i = 0; i < l->nprocs; i++)
		if (l->procs[i].pid == pid)
			return &l->procs[i];
	if (array__reserve(&l->procs, &l->procs_cap, l->nprocs + 1, sizeof(*l->procs)))
		return NULL;
	memset(&l->procs[l->nprocs], 0, sizeof(l->procs[0]));
	l->procs[l->nprocs].pid = pid;
	return &l->procs[l->nprocs++];
}

static __u64 since(__u64 now, __u64 then)
{
	return now > then ? now - then : 0;
}

static void keep_sched(struct lthread *t, const struct isr_ev_hdr *h, size_t size)
{
	memset(&t->last_sched, 0, sizeof(t->last_sched));
	memcpy(&t->last_sched, h, size < sizeof(t->last_sched) ? size : sizeof(t->last_sched));
	t->last_sched.hdr.size = (__u16)(size < sizeof(t->last_sched) ? size : sizeof(t->last_sched));
}

/* What the counts seen in an interval of interval_ns are multiplied by
 * when their probes were on only on_ns of it (1 when not sampled, or
 * never on in it: nothing seen, nothing extrapolated). */
static double on_scale(bool sampling, __u64 on_ns, __u64 interval_ns)
{
	return sampling && on_ns && on_ns < interval_ns ? (double)interval_ns / (double)on_ns : 1.0;
}

/* What the event told of the threads it touched: the state a thread was
 * in since its first sight, told at last (of that time, what came before
 * the previous snapshot is the earlier intervals'). */
static void on_touched(struct live *l, const struct task_change *c)
{
	for (size_t i = 0; i < c->ntouch; i++) {
		const struct task_touch *tc = &c->touch[i];
		struct lthread *t = thread_of(l, tc->t);

		if (!t)
			return;
		if (!t->told && tc->was != TASK_UNKNOWN) {
			t->read[tc->was] += since(l->prev_at, tc->was_since);
			t->told = true;
		}
	}
}

/* An event as each type's entry reads it: what the task model made of it
 * (c), the counts of the thread it is about (t, NULL: none) and the record
 * (h, size bytes). */
struct live_ev {
	struct live *l;
	const struct task_change *c;
	struct lthread *t;
	const struct isr_ev_hdr *h;
	size_t size;
};

/* A scheduler event: kept by each thread it touched, as the one that set
 * its state last. */
static void on_sched(const struct live_ev *e)
{
	for (size_t i = 0; i < e->c->ntouch; i++) {
		struct lthread *t = thread_of(e->l, e->c->touch[i].t);

		if (!t)
			return;
		keep_sched(t, e->h, e->size);
	}
}

/* The count w keeps of e's thread, while w is on: one more. */
static void count_switched(struct live_switch *w, const struct live_ev *e)
{
	if (!w->on)
		return;
	(*(__u64 *)((char *)e->t + w->counter))++;
	w->recent[w->recent_next] = (struct recent){ e->h->ts_ns, (size_t)(e->t - e->l->threads) };
	w->recent_next = (w->recent_next + 1) % LIVE_RECENT;
	if (w->recent_n < LIVE_RECENT)
		w->recent_n++;
}

static void count_cuda(const struct live_ev *e)
{
	const struct isr_ev_cuda_call *c = (const void *)e->h;

	if (!e->t)
		return;
	if (isr_cuda_is(c->func, ISR_CUDA_K_LAUNCH))
		count_switched(&e->l->hot, e);
	else if (isr_cuda_is(c->func, ISR_CUDA_K_SYNC) && (c->flags & ISR_CUDA_RETURNED))
		e->t->sync_ns += c->duration_ns;
}

static void count_fault(const struct live_ev *e)
{
	if (e->t)
		count_switched(&e->l->faults, e);
}

static void count_gil(const struct live_ev *e)
{
	const struct isr_ev_gil *g = (const void *)e->h;

	if (e->t && g->kind == ISR_GIL_ACQUIRE)
		e->t->gil_ns += g->wait_ns;
}

static void switch_to(struct live_switch *w, bool on, __u64 ts)
{
	if (on == w->on)
		return;
	if (on) {
		w->since = ts;
	} else {
		w->sampled = true;
		w->on_ns += since(ts, w->since);
	}
	w->on = on;
}

/* Its time on in this interval, up to now. */
static __u64 switch_on_ns(const struct live_switch *w, __u64 now)
{
	return w->on_ns + (w->on ? since(now, w->since) : 0);
}

/* What w counted after ts, when its probes' release began, uncounted
 * (struct live_switch). */
static void uncount_released(struct live *l, struct live_switch *w, __u64 ts)
{
	while (w->recent_n) {
		size_t i = (w->recent_next + LIVE_RECENT - 1) % LIVE_RECENT;
		const struct recent *r = &w->recent[i];
		__u64 *count;

		if (r->ts <= ts)
			break;
		count = r->thread < l->nthreads ? (__u64 *)((char *)&l->threads[r->thread] + w->counter) : NULL;
		if (count && *count)
			(*count)--;
		w->recent_next = i;
		w->recent_n--;
	}
}

/* The budget switched the launch probes or page-fault tracing. */
static void on_sampling(const struct live_ev *e)
{
	const struct isr_ev_sampling *s = (const void *)e->h;
	struct live_switch *w = s->kind == ISR_SAMPLING_ON || s->kind == ISR_SAMPLING_OFF ? &e->l->hot :
				s->kind == ISR_SAMPLING_FAULTS_ON || s->kind == ISR_SAMPLING_FAULTS_OFF ? &e->l->faults :
				NULL;
	bool on = s->kind == ISR_SAMPLING_ON || s->kind == ISR_SAMPLING_FAULTS_ON;

	if (!w)
		return;
	if (!on)
		uncount_released(e->l, w, s->hdr.ts_ns);
	switch_to(w, on, s->hdr.ts_ns);
}

/* What an event of each type adds to the live counts; the other types add
 * nothing here: the threads' time by state is the task model's, the GPU
 * time the GPU work's (isr_ev_gpu_work), device memory devmem's, and every
 * event, the definitions kept across intervals (ISR_EVF_DEFINES), goes to
 * the interval's analysis, which decides every type. */
static void (*const on_type[ISR_EV_TYPE_MAX])(const struct live_ev *e) = {
	[ISR_EV_SCHED_SWITCH] = on_sched, [ISR_EV_SCHED_WAKEUP] = on_sched, [ISR_EV_SCHED_WAKEUP_NEW] = on_sched,
	[ISR_EV_CUDA_CALL] = count_cuda,  [ISR_EV_PAGE_FAULT] = count_fault,  [ISR_EV_GIL] = count_gil,
	[ISR_EV_SAMPLING] = on_sampling,
};

void live__event(struct live *l, const struct isr_ev_hdr *h, size_t size)
{
	const struct isr_ev_proc_fork *f = (const void *)h;
	struct isr_gpu_work w;
	struct task_change c;
	struct lthread *t;
	__u32 pid;
	__u64 bytes;

	if (!isr_event_usable(h, size))
		return;
	l->events++;
	if (!l->first_ts && h->ts_ns)
		l->first_ts = l->hot.since = l->faults.since = h->ts_ns;
	if (!evbuf__append(&l->window, h, size, LIVE_WINDOW_MAX_BYTES))
		l->window_cut++;
	if ((isr_event_flags(h->type) & ISR_EVF_DEFINES) && !evbuf__append(&l->names, h, size, LIVE_NAMES_MAX_BYTES))
		l->names_cut++;
	if (!l->tasks) {
		struct tasks_opts o = { .start = h->ts_ns, .end = UINT64_MAX, .is_target = target_of, .ctx = l };

		l->tasks = tasks__new(&o);
		if (!l->tasks)
			return;
	}
	/* a followed child is a target from its fork on */
	if (h->type == ISR_EV_PROC_FORK && (f->flags & ISR_FORK_FOLLOWED) && add_target(l, f->child_pid))
		return;
	if (tasks__event(l->tasks, h, &c))
		return;
	on_touched(l, &c);
	t = c.thread ? thread_of(l, c.thread) : NULL;
	if (on_type[h->type])
		on_type[h->type](&(struct live_ev){ .l = l, .c = &c, .t = t, .h = h, .size = size });
	if (isr_ev_gpu_work(h, &w)) {
		struct lproc *p = proc_of(l, h->pid);

		if (p) {
			p->gpu_seen = true;
			p->gpu_ns += since(w.end_ns, w.start_ns);
		}
	}
	if (devmem__event(l->dm, h, &c, &pid, &bytes) > 0) {
		struct lproc *p = proc_of(l, pid);

		if (p)
			p->device_bytes = bytes;
	}
}

static double pct(__u64 ns, __u64 interval)
{
	double v = interval ? 100.0 * (double)ns / (double)interval : 0;

	return v > 100.0 ? 100.0 : v;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct live_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->launches_per_s != y->launches_per_s)
		return x->launches_per_s > y->launches_per_s ? -1 : 1;
	if (x->cpu_pct != y->cpu_pct)
		return x->cpu_pct > y->cpu_pct ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* By time; one switch kept by both its threads is one event. */
static int by_ts(const void *a, const void *b)
{
	const union sched_ev *x = a, *y = b;

	if (x->hdr.ts_ns != y->hdr.ts_ns)
		return x->hdr.ts_ns < y->hdr.ts_ns ? -1 : 1;
	return memcmp(x, y, sizeof(*x));
}

/* The interval's findings, from the rules of `analyze` (docs/rules.md)
 * run on a recording of its events in memory: at its start, the names
 * kept from earlier intervals and each thread's last scheduler event
 * before it (what it was doing then: on a CPU, runnable or asleep, which
 * a thread blocked the whole interval would otherwise not show); then its
 * own events; its traced processes. Each process gets the costliest
 * finding about it. 0 or -errno. */
static int judge(struct live *l, __u64 from, __u64 now)
{
	struct recording r = { .complete = true, .end_mono_ns = now };
	struct analysis *a = NULL;
	size_t count = tasks__count(l->tasks), n = 0, nstarts = 0;
	union sched_ev *starts = calloc(count + 1, sizeof(*starts));
	int err = -ENOMEM;

	r.host.start_mono_ns = r.created_mono_ns = from;
	r.host.ncpus = l->ncpus;
	r.events = calloc(l->names.count + count + l->window.count + 1, sizeof(*r.events));
	r.processes = calloc(l->ntargets + 1, sizeof(*r.processes));
	if (!starts || !r.events || !r.processes)
		goto out;
	for (size_t i = 0; i < count; i++) {
		const struct task_thread *tt = tasks__at(l->tasks, i);
		const struct lthread *t = &l->threads[tt->ix];

		if (!tt->exited && t->last_sched.hdr.size && t->last_sched.hdr.ts_ns <= from)
			starts[nstarts++] = t->last_sched;
	}
	qsort(starts, nstarts, sizeof(*starts), by_ts);
	for (size_t i = 0; i < l->ntargets; i++)
		r.processes[r.process_count++].pid = l->targets[i];
	for (size_t off = 0; off < l->names.len;) {
		struct isr_ev_hdr *h = (void *)(l->names.data + off);

		h->ts_ns = from;	/* known since the interval started */
		r.events[n++] = h;
		off += h->size;
	}
	for (size_t i = 0; i < nstarts; i++)
		if (!i || by_ts(&starts[i - 1], &starts[i]))
			r.events[n++] = &starts[i].hdr;
	for (size_t off = 0; off < l->window.len;) {
		const struct isr_ev_hdr *h = (const void *)(l->window.data + off);

		r.events[n++] = h;
		off += h->size;
	}
	r.event_count = n;
	recording__sort_events(&r);
	for (size_t i = 0; i < nstarts; i++)	/* known since the interval started */
		starts[i].hdr.ts_ns = from;
	err = analysis__run(&r, &a);
	if (err)
		goto out;
	for (size_t i = 0; i < l->snap.nprocs; i++) {
		struct live_process *p = &l->snap.procs[i];

		for (size_t k = 0; k < a->ex->findings.n && !p->finding; k++) {
			const struct finding *f = &a->ex->findings.v[k];

			if (f->pid != p->pid)
				continue;
			p->finding = f->rule;
			p->finding_cost_s = f->cost_s;
			snprintf(p->finding_text, sizeof(p->finding_text), "%s", explain__rule_title(f->rule));
		}
	}
out:
	analysis__free(a);
	free(starts);
	free(r.processes);
	free(r.events);
	return err;
}

int live__snapshot(struct live *l, __u64 now_ns, const struct live_snapshot **out)
{
	__u64 from = l->prev_at ? l->prev_at : l->first_ts, interval;
	size_t n = 0, count = l->tasks ? tasks__count(l->tasks) : 0;
	double scale, fscale;
	int err;

	interval = since(now_ns, from);
	scale = on_scale(l->hot.sampled, switch_on_ns(&l->hot, now_ns), interval);
	fscale = on_scale(l->faults.sampled, switch_on_ns(&l->faults, now_ns), interval);
	free(l->snap.procs);
	memset(&l->snap, 0, sizeof(l->snap));
	l->snap.at_ns = now_ns;
	l->snap.interval_s = (double)interval / 1e9;
	l->snap.events = l->events;
	if (array__reserve(&l->rows, &l->rows_cap, count ? count : 1, sizeof(*l->rows)))
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct task_thread *tt = tasks__at(l->tasks, i);
		struct lthread *t = thread_of(l, tt);
		__u64 ns[TASK_STATES], add[TASK_STATES], cpu_ns, runq_ns, blocked_ns;
		struct live_thread *r;

		if (!t)
			return -ENOMEM;
		task_thread__ns(tt, now_ns, ns);
		for (int k = 0; k < TASK_STATES; k++) {
			add[k] = since(ns[k], t->read[k]);
			t->read[k] = ns[k];
		}
		cpu_ns = add[TASK_RUNNING];
		runq_ns = add[TASK_RUNNABLE];
		blocked_ns = add[TASK_BLOCKED] + add[TASK_IO];
		if (t->launches || cpu_ns || t->sync_ns || t->gil_ns || runq_ns || t->faults || blocked_ns) {
			r = &l->rows[n++];
			r->pid = tt->pid;
			r->tid = tt->tid;
			r->launches_per_s = interval ? (double)t->launches * scale * 1e9 / (double)interval : 0;
			r->sync_pct = pct(t->sync_ns, interval);
			r->gil_pct = pct(t->gil_ns, interval);
			r->runq_pct = pct(runq_ns, interval);
			r->cpu_pct = pct(cpu_ns, interval);
			r->blocked_pct = pct(blocked_ns, interval);
			r->faults_per_s = interval ? (double)t->faults * fscale * 1e9 / (double)interval : 0;
		}
		t->launches = t->faults = t->sync_ns = t->gil_ns = 0;
	}
	qsort(l->rows, n, sizeof(*l->rows), cmp_rows);
	/* one process a run of rows; and processes seen only through the GPU
	 * or memory */
	l->snap.procs = calloc(n + l->nprocs + 1, sizeof(*l->snap.procs));
	if (!l->snap.procs)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		struct live_process *p = &l->snap.procs[l->snap.nprocs++];
		const struct live_thread *lead = &l->rows[i];
		size_t j;

		p->pid = lead->pid;
		p->threads = &l->rows[i];
		/* totals over its threads */
		for (j = i; j < n && l->rows[j].pid == p->pid; j++) {
			p->launches_per_s += l->rows[j].launches_per_s;
			p->faults_per_s += l->rows[j].faults_per_s;
			p->sync_pct += l->rows[j].sync_pct;
			p->gil_pct += l->rows[j].gil_pct;
			p->runq_pct += l->rows[j].runq_pct;
			p->cpu_pct += l->rows[j].cpu_pct;
			p->blocked_pct += l->rows[j].blocked_pct;
		}
		p->nthreads = j - i;
		p->launcher_tid = lead->launches_per_s > 0 ? lead->tid : 0;
		p->launches_estimated = l->hot.sampled && scale > 1.0;
		i = j;
	}
	for (size_t k = 0; k < l->nprocs; k++) {
		struct lproc *lp = &l->procs[k];
		struct live_process *p = NULL;

		for (size_t i = 0; i < l->snap.nprocs && !p; i++)
			if (l->snap.procs[i].pid == lp->pid)
				p = &l->snap.procs[i];
		if (!p) {
			p = &l->snap.procs[l->snap.nprocs++];
			p->pid = lp->pid;
		}
		p->gpu_busy_pct = lp->gpu_seen ? pct(lp->gpu_ns, interval) : -1;
		p->device_bytes = lp->device_bytes;
		lp->gpu_ns = 0;
	}
	for (size_t i = 0; i < l->snap.nprocs; i++) {
		bool known = false;

		for (size_t k = 0; k < l->nprocs; k++)
			known |= l->procs[k].pid == l->snap.procs[i].pid;
		if (!known)
			l->snap.procs[i].gpu_busy_pct = -1;
	}
	l->snap.window_cut = l->window_cut;
	l->snap.names_cut = l->names_cut;
	err = l->snap.nprocs && interval ? judge(l, from, now_ns) : 0;
	l->window.len = l->window.count = 0;
	l->window_cut = 0;
	l->prev_at = now_ns;
	l->hot.on_ns = l->faults.on_ns = 0;
	l->hot.since = l->faults.since = now_ns;
	l->hot.recent_n = l->faults.recent_n = 0;	/* the counts they would uncount are gone */
	*out = &l->snap;
	return err;
}
