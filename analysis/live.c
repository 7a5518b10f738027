// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Live metrics (live.h). The threads, their time on a CPU and waiting for
 * one are the task model's (tasks.h), fed every event first: an interval's
 * share is the difference of two readings of it. What the task model does
 * not count (launches, synchronizations, GIL waits, faults) is counted here
 * per thread, by the task model's index, and reset at each snapshot.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "live.h"
#include "buf.h"
#include "devmem.h"
#include "registry.h"
#include "tasks.h"

/* The thresholds of the interval's finding: the rules' (docs/rules.md)
 * spirit on one interval of one launching thread. */
#define LIVE_GIL_PCT		20.0
#define LIVE_SYNC_PCT		30.0
#define LIVE_RUNQ_PCT		20.0
#define LIVE_FAULTS_PER_S	5000.0
#define LIVE_HOST_CPU_PCT	90.0

/* What the interval added to a thread, and the task model's readings of
 * it at the previous snapshot. */
struct lthread {
	__u64 launches, faults;
	__u64 sync_ns, gil_ns;
	__u64 cpu_read, runq_read;
};

struct lproc {
	__u32 pid;
	bool gpu_seen;
	__u64 gpu_ns;
	__u64 device_bytes;
};

struct live {
	struct tasks *tasks;		/* from the first event on */
	struct lthread *threads;	/* by the task model's index */
	size_t nthreads, threads_cap;
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

struct live *live__new(const __u32 *pids, size_t n)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (add_target(l, pids[i])) {
			free(l->targets);
			free(l);
			return NULL;
		}
	l->dm = devmem__new();
	if (!l->dm) {
		free(l->targets);
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
	tasks__free(l->tasks);
	free(l->threads);
	devmem__free(l->dm);
	free(l->targets);
	free(l->procs);
	free(l->snap.procs);
	free(l->rows);
	free(l);
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

static void on_cuda(struct lthread *t, const struct isr_ev_cuda_call *c)
{
	if (isr_cuda_is(c->func, ISR_CUDA_K_LAUNCH))
		t->launches++;
	else if (isr_cuda_is(c->func, ISR_CUDA_K_SYNC) && (c->flags & ISR_CUDA_RETURNED))
		t->sync_ns += c->duration_ns;
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

/* What the event adds to the counts of its thread t. */
static void on_thread_event(struct lthread *t, const struct isr_ev_hdr *h)
{
	switch (h->type) {
	case ISR_EV_CUDA_CALL:
		on_cuda(t, (const void *)h);
		break;
	case ISR_EV_PAGE_FAULT:
		t->faults++;
		break;
	case ISR_EV_GIL:
		if (((const struct isr_ev_gil *)h)->kind == ISR_GIL_ACQUIRE)
			t->gil_ns += ((const struct isr_ev_gil *)h)->wait_ns;
		break;
	default:
		break;
	}
}

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
		l->first_ts = l->hot_since = h->ts_ns;
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
	t = c.thread ? thread_of(l, c.thread) : NULL;
	if (t)
		on_thread_event(t, h);
	if (isr_ev_gpu_work(h, &w)) {
		struct lproc *p = proc_of(l, h->pid);

		if (p) {
			p->gpu_seen = true;
			p->gpu_ns += since(w.end_ns, w.start_ns);
		}
	}
	if (h->type == ISR_EV_SAMPLING)
		on_sampling(l, (const void *)h);
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

/* The interval's finding of a process: the largest share over its
 * threshold. */
static void judge(struct live_process *p)
{
	struct {
		const char *rule;
		double v, limit;
		const char *what;
	} c[] = {
		{ "gil_contention", p->gil_pct, LIVE_GIL_PCT, "%.0f%% of the launching thread's time waiting for the GIL" },
		{ "sync_stall", p->sync_pct, LIVE_SYNC_PCT, "%.0f%% of the launching thread's time in CUDA synchronization" },
		{ "cpu_contention", p->runq_pct, LIVE_RUNQ_PCT, "%.0f%% of the launching thread's time waiting for a CPU" },
		{ "page_fault_storm", p->faults_per_s / LIVE_FAULTS_PER_S * 100.0, 100.0, "%.0f%% of the fault-rate "
		  "threshold (5000 faults/s)" },
		{ "host_bound", p->launcher_tid && p->gpu_busy_pct < 50 ? p->cpu_pct : 0, LIVE_HOST_CPU_PCT,
		  "the launching thread is %.0f%% on a CPU: the GPU waits for it" },
	};
	double best = 0;

	p->finding = NULL;
	p->finding_text[0] = '\0';
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double over = c[i].v / c[i].limit;

		if (c[i].v >= c[i].limit && over > best) {
			best = over;
			p->finding = c[i].rule;
			snprintf(p->finding_text, sizeof(p->finding_text), c[i].what, c[i].v);
		}
	}
}

int live__snapshot(struct live *l, __u64 now_ns, const struct live_snapshot **out)
{
	__u64 from = l->prev_at ? l->prev_at : l->first_ts, interval, hot_ns;
	size_t n = 0, count = l->tasks ? tasks__count(l->tasks) : 0;
	double scale = 1.0;

	interval = since(now_ns, from);
	hot_ns = l->hot_on_ns + (l->hot_on ? since(now_ns, l->hot_since) : 0);
	if (l->sampling && hot_ns && hot_ns < interval)
		scale = (double)interval / (double)hot_ns;
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
		__u64 ns[TASK_STATES], cpu_ns, runq_ns;
		struct live_thread *r;

		if (!t)
			return -ENOMEM;
		task_thread__ns(tt, now_ns, ns);
		cpu_ns = since(ns[TASK_RUNNING], t->cpu_read);
		runq_ns = since(ns[TASK_RUNNABLE], t->runq_read);
		t->cpu_read = ns[TASK_RUNNING];
		t->runq_read = ns[TASK_RUNNABLE];
		if (t->launches || cpu_ns || t->sync_ns || t->gil_ns || runq_ns || t->faults) {
			r = &l->rows[n++];
			r->pid = tt->pid;
			r->tid = tt->tid;
			r->launches_per_s = interval ? (double)t->launches * scale * 1e9 / (double)interval : 0;
			r->sync_pct = pct(t->sync_ns, interval);
			r->gil_pct = pct(t->gil_ns, interval);
			r->runq_pct = pct(runq_ns, interval);
			r->cpu_pct = pct(cpu_ns, interval);
			r->faults_per_s = interval ? (double)t->faults * 1e9 / (double)interval : 0;
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
		for (j = i; j < n && l->rows[j].pid == p->pid; j++) {
			p->launches_per_s += l->rows[j].launches_per_s;
			p->faults_per_s += l->rows[j].faults_per_s;
		}
		p->nthreads = j - i;
		p->launcher_tid = lead->launches_per_s > 0 ? lead->tid : 0;
		if (!p->launcher_tid)	/* its busiest thread */
			for (size_t k = i; k < j; k++)
				if (l->rows[k].cpu_pct > lead->cpu_pct)
					lead = &l->rows[k];
		p->sync_pct = lead->sync_pct;
		p->gil_pct = lead->gil_pct;
		p->runq_pct = lead->runq_pct;
		p->cpu_pct = lead->cpu_pct;
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
		judge(&l->snap.procs[i]);
	}
	l->prev_at = now_ns;
	l->hot_on_ns = 0;
	l->hot_since = now_ns;
	*out = &l->snap;
	return 0;
}
