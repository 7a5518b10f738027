// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "live.h"
#include "analysis.h"
#include "devmem.h"
#include "htab.h"
#include "registry.h"

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

struct lthread {
	__u32 tid;		/* key */
	__u32 pid;
	__u64 on_since;		/* on a CPU since (0: not) */
	__u64 runq_since;	/* runnable, waiting for a CPU, since (0: not) */
	__u64 blocked_since;	/* off a CPU and not runnable (asleep) since (0: not) */
	__u64 launches, faults;
	__u64 sync_ns, gil_ns, runq_ns, cpu_ns, blocked_ns;
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

struct live {
	struct htab threads;
	struct lproc *procs;
	size_t nprocs, procs_cap;
	struct devmem *dm;
	bool sampling, hot_on;	/* the budget switches the launch probes; they are on now */
	__u64 hot_since, hot_on_ns;
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
	if (l->ntargets == l->targets_cap) {
		size_t cap = l->targets_cap ? l->targets_cap * 2 : 16;
		__u32 *t = realloc(l->targets, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		l->targets = t;
		l->targets_cap = cap;
	}
	l->targets[l->ntargets++] = pid;
	return 0;
}

static __u64 thread_hash(const void *e)
{
	return hash__u64(((const struct lthread *)e)->tid);
}

static bool thread_equal(const void *a, const void *b)
{
	return ((const struct lthread *)a)->tid == ((const struct lthread *)b)->tid;
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
	htab__init(&l->threads, sizeof(struct lthread), thread_hash, thread_equal);
	l->dm = devmem__new();
	if (!l->dm) {
		free(l);
		return NULL;
	}
	l->hot_on = true;
	return l;
}

void live__free(struct live *l)
{
	if (!l)
		return;
	htab__free(&l->threads);
	devmem__free(l->dm);
	free(l->targets);
	free(l->procs);
	free(l->snap.procs);
	free(l->rows);
	free(l->window.data);
	free(l->names.data);
	free(l);
}

/* Appends one event to b, up to max bytes. false: no room. */
static bool evbuf__append(struct evbuf *b, const struct isr_ev_hdr *h, size_t size, size_t max)
{
	if (b->len + size > max)
		return false;
	if (b->len + size > b->cap) {
		size_t cap = b->cap ? b->cap : 1u << 16;
		unsigned char *d;

		while (cap < b->len + size)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d)
			return false;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, h, size);
	((struct isr_ev_hdr *)(void *)(b->data + b->len))->size = (__u16)size;
	b->len += size;
	b->count++;
	return true;
}

/* Events that name what later events refer to, written once. */
static bool is_name(__u16 type)
{
	switch (type) {
	case ISR_EV_CUDA_NAME:
	case ISR_EV_GPU_NAME:
	case ISR_EV_PY_STACK:
	case ISR_EV_PY_CODE:
	case ISR_EV_PY_STATUS:
	case ISR_EV_TASK_INFO:
	case ISR_EV_NCCL_COMM:
	case ISR_EV_RANK_ENV:
		return true;
	default:
		return false;
	}
}

static struct lthread *thread_of(struct live *l, __u32 pid, __u32 tid)
{
	struct lthread key = { .tid = tid }, *t;
	bool added;

	if (!tid)
		return NULL;
	t = htab__insert(&l->threads, &key, &added);
	if (t && pid)
		t->pid = pid;
	return t;
}

static struct lproc *proc_of(struct live *l, __u32 pid)
{
	for (size_t i = 0; i < l->nprocs; i++)
		if (l->procs[i].pid == pid)
			return &l->procs[i];
	if (l->nprocs == l->procs_cap) {
		size_t cap = l->procs_cap ? l->procs_cap * 2 : 16;
		struct lproc *p = realloc(l->procs, cap * sizeof(*p));

		if (!p)
			return NULL;
		l->procs = p;
		l->procs_cap = cap;
	}
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

static void on_switch(struct live *l, const struct isr_ev_sched_switch *s)
{
	struct lthread *prev = is_target(l, s->hdr.pid) ? thread_of(l, s->hdr.pid, s->hdr.tid) : NULL, *next;

	if (prev) {
		keep_sched(prev, &s->hdr, sizeof(*s));
		if (prev->on_since)
			prev->cpu_ns += since(s->hdr.ts_ns, prev->on_since);
		prev->on_since = 0;
		/* preempted (still runnable): it waits for a CPU from now;
		 * else it sleeps (a lock, I/O, a synchronization that sleeps) */
		prev->runq_since = s->prev_state == 0 ? s->hdr.ts_ns : 0;
		prev->blocked_since = s->prev_state == 0 ? 0 : s->hdr.ts_ns;
	}
	next = is_target(l, s->next_pid) ? thread_of(l, s->next_pid, s->next_tid) : NULL;
	if (next) {
		keep_sched(next, &s->hdr, sizeof(*s));
		if (next->runq_since)
			next->runq_ns += since(s->hdr.ts_ns, next->runq_since);
		if (next->blocked_since)	/* its wakeup was not seen */
			next->blocked_ns += since(s->hdr.ts_ns, next->blocked_since);
		next->runq_since = next->blocked_since = 0;
		next->on_since = s->hdr.ts_ns;
	}
}

static void on_cuda(struct live *l, const struct isr_ev_cuda_call *c)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(c->func);
	struct lthread *t = thread_of(l, c->hdr.pid, c->hdr.tid);

	if (!fn || !t)
		return;
	switch (fn->family) {
	case ISR_CUDA_FAM_LAUNCH:
	case ISR_CUDA_FAM_LAUNCH_EX:
	case ISR_CUDA_FAM_GRAPH:
		t->launches++;
		break;
	case ISR_CUDA_FAM_SYNC:
	case ISR_CUDA_FAM_COPY_SYNC:
		if (c->flags & ISR_CUDA_RETURNED)
			t->sync_ns += c->duration_ns;
		break;
	default:
		break;
	}
}

static void on_sampling(struct live *l, const struct isr_ev_sampling *s)
{
	if (s->kind == ISR_SAMPLING_OFF && l->hot_on) {
		l->sampling = true;
		l->hot_on = false;
		l->hot_on_ns += since(s->hdr.ts_ns, l->hot_since);
	} else if (s->kind == ISR_SAMPLING_ON && !l->hot_on) {
		l->hot_on = true;
		l->hot_since = s->hdr.ts_ns;
	}
}

void live__event(struct live *l, const struct isr_ev_hdr *h, size_t size)
{
	__u32 pid;
	__u64 bytes;

	if (size < isr_event_min_size(h->type) || !isr_event_min_size(h->type))
		return;
	l->events++;
	if (!l->first_ts && h->ts_ns)
		l->first_ts = l->hot_since = h->ts_ns;
	if (!evbuf__append(&l->window, h, size, LIVE_WINDOW_MAX_BYTES))
		l->window_cut++;
	if (is_name(h->type) && !evbuf__append(&l->names, h, size, LIVE_NAMES_MAX_BYTES))
		l->names_cut++;
	switch (h->type) {
	case ISR_EV_SCHED_SWITCH:
		on_switch(l, (const void *)h);
		break;
	case ISR_EV_SCHED_WAKEUP:
	case ISR_EV_SCHED_WAKEUP_NEW: {
		struct lthread *t = thread_of(l, h->pid, h->tid);

		if (t)
			keep_sched(t, h, size);
		if (t && !t->on_since && !t->runq_since) {
			if (t->blocked_since)
				t->blocked_ns += since(h->ts_ns, t->blocked_since);
			t->blocked_since = 0;
			t->runq_since = h->ts_ns;
		}
		break;
	}
	case ISR_EV_CUDA_CALL:
		on_cuda(l, (const void *)h);
		break;
	case ISR_EV_PAGE_FAULT: {
		struct lthread *t = thread_of(l, h->pid, h->tid);

		if (t)
			t->faults++;
		break;
	}
	case ISR_EV_GIL: {
		const struct isr_ev_gil *g = (const void *)h;
		struct lthread *t = thread_of(l, h->pid, h->tid);

		if (t && g->kind == ISR_GIL_ACQUIRE)
			t->gil_ns += g->wait_ns;
		break;
	}
	case ISR_EV_GPU_KERNEL:
	case ISR_EV_GPU_MEMCPY:
	case ISR_EV_GPU_MEMSET: {
		/* start and end lead every GPU activity record (format/events.h) */
		const struct isr_ev_gpu_kernel *k = (const void *)h;
		struct lproc *p = proc_of(l, h->pid);

		if (p) {
			p->gpu_seen = true;
			p->gpu_ns += since(k->end_ns, k->start_ns);
		}
		break;
	}
	case ISR_EV_SAMPLING:
		on_sampling(l, (const void *)h);
		break;
	case ISR_EV_PROC_FORK: {
		const struct isr_ev_proc_fork *f = (const void *)h;

		if (f->flags & ISR_FORK_FOLLOWED)
			add_target(l, f->child_pid);
		break;
	}
	case ISR_EV_PROC_EXIT: {
		struct lthread *t = thread_of(l, h->pid, h->tid);

		if (t) {
			t->on_since = 0;
			t->runq_since = 0;
			t->blocked_since = 0;
			t->last_sched.hdr.size = 0;
		}
		break;
	}
	default:
		break;
	}
	if (devmem__event(l->dm, h, &pid, &bytes) > 0) {
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
	union sched_ev *starts = calloc(l->threads.len + 1, sizeof(*starts));
	size_t n = 0, nstarts = 0, pos = 0;
	struct lthread *t;
	int err = -ENOMEM;

	r.host.start_mono_ns = r.created_mono_ns = from;
	r.host.ncpus = l->ncpus;
	r.events = calloc(l->names.count + l->threads.len + l->window.count + 1, sizeof(*r.events));
	r.processes = calloc(l->ntargets + 1, sizeof(*r.processes));
	if (!starts || !r.events || !r.processes)
		goto out;
	while ((t = htab__next(&l->threads, &pos)))
		if (t->last_sched.hdr.size && t->last_sched.hdr.ts_ns <= from)
			starts[nstarts++] = t->last_sched;
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
	__u64 from = l->prev_at ? l->prev_at : l->first_ts, interval, hot_ns;
	size_t pos = 0, n = 0;
	struct lthread *t;
	double scale = 1.0;
	int err;

	interval = since(now_ns, from);
	hot_ns = l->hot_on_ns + (l->hot_on ? since(now_ns, l->hot_since) : 0);
	if (l->sampling && hot_ns && hot_ns < interval)
		scale = (double)interval / (double)hot_ns;
	free(l->snap.procs);
	memset(&l->snap, 0, sizeof(l->snap));
	l->snap.at_ns = now_ns;
	l->snap.interval_s = (double)interval / 1e9;
	l->snap.events = l->events;
	if (l->rows_cap < l->threads.len) {
		struct live_thread *r = realloc(l->rows, l->threads.len * sizeof(*r));

		if (!r)
			return -ENOMEM;
		l->rows = r;
		l->rows_cap = l->threads.len;
	}
	while ((t = htab__next(&l->threads, &pos))) {
		struct live_thread *r;

		if (t->on_since) {
			t->cpu_ns += since(now_ns, t->on_since);
			t->on_since = now_ns;
		}
		if (t->runq_since) {
			t->runq_ns += since(now_ns, t->runq_since);
			t->runq_since = now_ns;
		}
		if (t->blocked_since) {
			t->blocked_ns += since(now_ns, t->blocked_since);
			t->blocked_since = now_ns;
		}
		if (t->pid && (t->launches || t->cpu_ns || t->sync_ns || t->gil_ns || t->runq_ns || t->faults ||
			       t->blocked_ns)) {
			r = &l->rows[n++];
			r->pid = t->pid;
			r->tid = t->tid;
			r->launches_per_s = interval ? (double)t->launches * scale * 1e9 / (double)interval : 0;
			r->sync_pct = pct(t->sync_ns, interval);
			r->gil_pct = pct(t->gil_ns, interval);
			r->runq_pct = pct(t->runq_ns, interval);
			r->cpu_pct = pct(t->cpu_ns, interval);
			r->blocked_pct = pct(t->blocked_ns, interval);
			r->faults_per_s = interval ? (double)t->faults * 1e9 / (double)interval : 0;
		}
		t->launches = t->faults = t->sync_ns = t->gil_ns = t->runq_ns = t->cpu_ns = t->blocked_ns = 0;
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
		p->launches_estimated = l->sampling && scale > 1.0;
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
	l->hot_on_ns = 0;
	l->hot_since = now_ns;
	*out = &l->snap;
	return err;
}
