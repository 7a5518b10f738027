// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attribution (attribution.h): gaps split into causes as they close,
 * spans and samples of the launching threads weighed by how much of them
 * fell into idle time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attribution.h"
#include "htab.h"

#define ITEMS_KEPT	64	/* other tasks or functions kept per list */
#define STACKS_KEPT	512	/* distinct stacks kept per thread */
#define GAP_RING	128	/* closed gaps of a process remembered for overlaps */
#define CPU_ONLY_BUSY_SHARE 0.10	/* of its window running or runnable, or waiting for the GIL: a working thread */

static const char *const names[CAUSE_MAX] = {
	[CAUSE_SYNC_DRAIN] = "sync_drain",
	[CAUSE_GIL] = "gil_wait",
	[CAUSE_SYNC] = "cuda_sync",
	[CAUSE_CUDA_MEM] = "cuda_memory",
	[CAUSE_CUDA] = "cuda_call",
	[CAUSE_FAULT] = "page_fault",
	[CAUSE_RECLAIM] = "reclaim",
	[CAUSE_RUNQUEUE] = "runqueue",
	[CAUSE_IO] = "io_sleep",
	[CAUSE_BLOCKED] = "blocked",
	[CAUSE_PYTHON] = "python",
	[CAUSE_NATIVE] = "native",
	[CAUSE_LAUNCH_LATENCY] = "launch_latency",
	[CAUSE_LAUNCH_OVERHEAD] = "launch_overhead",
	[CAUSE_UNKNOWN] = "unknown",
};

static const char *const texts[CAUSE_MAX] = {
	[CAUSE_SYNC_DRAIN] = "after a synchronization drained the GPU, until new work was launched",
	[CAUSE_GIL] = "the launching thread waited for the GIL",
	[CAUSE_SYNC] = "the launching thread was in another CUDA synchronization",
	[CAUSE_CUDA_MEM] = "the launching thread was allocating or freeing CUDA memory",
	[CAUSE_CUDA] = "the launching thread was in other CUDA calls",
	[CAUSE_FAULT] = "the launching thread was in page faults",
	[CAUSE_RECLAIM] = "the launching thread was reclaiming memory",
	[CAUSE_RUNQUEUE] = "the launching thread waited for a CPU",
	[CAUSE_IO] = "the launching thread was in uninterruptible sleep (I/O)",
	[CAUSE_BLOCKED] = "the launching thread was blocked",
	[CAUSE_PYTHON] = "the launching thread ran Python",
	[CAUSE_NATIVE] = "the launching thread ran native code",
	[CAUSE_LAUNCH_LATENCY] = "work was launched but had not started on the GPU",
	[CAUSE_LAUNCH_OVERHEAD] = "short gaps between kernels: launching each one took longer than running it",
	[CAUSE_UNKNOWN] = "no launching thread could be named",
};

static const char *const labels[CAUSE_MAX] = {
	[CAUSE_SYNC_DRAIN] = "with the GPU drained after a synchronization",
	[CAUSE_GIL] = "waiting for the GIL",
	[CAUSE_SYNC] = "in CUDA synchronizations",
	[CAUSE_CUDA_MEM] = "allocating or freeing CUDA memory",
	[CAUSE_CUDA] = "in other CUDA calls",
	[CAUSE_FAULT] = "in page faults",
	[CAUSE_RECLAIM] = "reclaiming memory",
	[CAUSE_RUNQUEUE] = "waiting for a CPU",
	[CAUSE_IO] = "in uninterruptible sleep (I/O)",
	[CAUSE_BLOCKED] = "blocked",
	[CAUSE_PYTHON] = "running Python",
	[CAUSE_NATIVE] = "running native code",
	[CAUSE_LAUNCH_LATENCY] = "with work launched but not started",
	[CAUSE_LAUNCH_OVERHEAD] = "in short gaps between kernels",
	[CAUSE_UNKNOWN] = "in a state the recording does not tell",
};

const char *cause_label(enum cause c)
{
	return c < CAUSE_MAX ? labels[c] : "?";
}

const char *cause_name(enum cause c)
{
	return c < CAUSE_MAX ? names[c] : "?";
}

const char *cause_text(enum cause c)
{
	return c < CAUSE_MAX ? texts[c] : "?";
}

struct span_range {
	__u64 start, end;
};

/* The closed gaps of a process, for the overlap of its threads' spans. */
struct pgaps {
	__u32 pid;
	struct span_range ring[GAP_RING];
	size_t next, n;
};

/* Time spent running by a launcher during a device's gaps, split into
 * Python and native at the end. */
struct dev_running {
	__u32 tid;
	__u64 ns;
};

struct dev_state {
	struct attr_device pub;
	struct dev_running *running;
	size_t nrunning, running_cap;
};

struct thr_state {
	struct attr_thread pub;
	__u64 running_idle_ns;	/* TL_RUNNING of its gaps: Python or native */
	/* its totals at its first and at its latest CUDA call: the window of
	 * a launcher (attr_thread.window) */
	struct tl_acc at_first_call, at_last_call;
};

struct attribution {
	struct timeline *tl;
	const struct pass *pass;
	struct tl_observer obs;
	struct htab by_thread;	/* pid << 32 | tid -> index */
	struct thr_state **thr;
	size_t nthr, thr_cap;
	struct htab by_dev;		/* (pid << 32 | device) + 1 -> index */
	struct dev_state *dev;
	size_t ndev, dev_cap;
	struct htab by_pid;		/* pid -> index in gaps */
	struct htab stack_depth;	/* Python stack id -> its depth */
	struct htab launching;	/* pids with a launching thread */
	struct pgaps *gaps;
	size_t ngaps, gaps_cap;
	struct attr_gap_hook hook;
	int err;
};

static void *grow(void *arr, size_t n, size_t *cap, size_t sz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 8;
	p = reallocarray(arr, ncap, sz);
	if (p)
		*cap = ncap;
	return p;
}

static void items_add(struct attr_items *l, __u64 key, __u64 ns, size_t kept, int *err)
{
	struct attr_item *n;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].key == key) {
			l->v[i].ns += ns;
			return;
		}
	if (l->n >= kept) {
		l->rest += ns;
		return;
	}
	n = grow(l->v, l->n, &l->cap, sizeof(*l->v));
	if (!n) {
		*err = -ENOMEM;
		return;
	}
	l->v = n;
	l->v[l->n++] = (struct attr_item){ .key = key, .ns = ns };
}

static int item_desc(const void *a, const void *b)
{
	const struct attr_item *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

static void items_sort(struct attr_items *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), item_desc);
}

static void items_free(struct attr_items *l)
{
	free(l->v);
}

bool attribution__gpu_observed(const struct attribution *a, __u32 pid)
{
	return pass__fit(a->pass, pid) != NULL;
}

static struct thr_state *thread_get(struct attribution *a, __u32 pid, __u32 tid)
{
	__u64 key = (__u64)pid << 32 | tid, idx;
	struct thr_state **n, *t;

	if (htab_u64__get(&a->by_thread, key, &idx))
		return a->thr[idx];
	n = grow(a->thr, a->nthr, &a->thr_cap, sizeof(*a->thr));
	if (!n)
		return NULL;
	a->thr = n;
	t = calloc(1, sizeof(*t));
	if (!t || htab_u64__put(&a->by_thread, key, a->nthr)) {
		free(t);
		return NULL;
	}
	t->pub.pid = pid;
	t->pub.tid = tid;
	a->thr[a->nthr++] = t;
	return t;
}

static struct dev_state *device_get(struct attribution *a, __u32 pid, __u32 device)
{
	__u64 key = (__u64)pid << 32 | device, idx;
	struct dev_state *n, *d;

	if (htab_u64__get(&a->by_dev, key, &idx))
		return &a->dev[idx];
	n = grow(a->dev, a->ndev, &a->dev_cap, sizeof(*a->dev));
	if (!n)
		return NULL;
	a->dev = n;
	if (htab_u64__put(&a->by_dev, key, a->ndev))
		return NULL;
	d = &a->dev[a->ndev++];
	memset(d, 0, sizeof(*d));
	d->pub.pid = pid;
	d->pub.device = device;
	return d;
}

static struct pgaps *pgaps_get(struct attribution *a, __u32 pid)
{
	struct pgaps *n;
	__u64 idx;

	if (htab_u64__get(&a->by_pid, pid, &idx))
		return &a->gaps[idx];
	n = grow(a->gaps, a->ngaps, &a->gaps_cap, sizeof(*a->gaps));
	if (!n)
		return NULL;
	a->gaps = n;
	if (htab_u64__put(&a->by_pid, pid, a->ngaps))
		return NULL;
	memset(&a->gaps[a->ngaps], 0, sizeof(*a->gaps));
	a->gaps[a->ngaps].pid = pid;
	return &a->gaps[a->ngaps++];
}

static __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* How much of [start, end) of a thread of pid counts: its overlap with the
 * process's idle GPU time, or all of it when the GPU was not observed. */
static __u64 counted(struct attribution *a, __u32 pid, __u64 start, __u64 end)
{
	__u64 sum = 0, since, idx;

	if (!attribution__gpu_observed(a, pid))
		return end > start ? end - start : 0;
	if (timeline__gpu_idle(a->tl, pid, &since))
		sum += overlap(start, end, since, end);
	if (htab_u64__get(&a->by_pid, pid, &idx)) {
		const struct pgaps *g = &a->gaps[idx];

		for (size_t k = 0; k < g->n; k++) {
			const struct span_range *r = &g->ring[(g->next + GAP_RING - 1 - k) % GAP_RING];

			if (r->end <= start)
				break;
			sum += overlap(start, end, r->start, r->end);
		}
	}
	return sum > end - start ? end - start : sum;
}

static void on_span(void *ctx, const struct tl_span *s)
{
	struct attribution *a = ctx;
	struct thr_state *t;
	__u64 ns;

	if (a->err)
		return;
	ns = counted(a, s->thread->pid, s->start, s->end);
	if (!ns)
		return;
	t = thread_get(a, s->thread->pid, s->thread->tid);
	if (!t) {
		a->err = -ENOMEM;
		return;
	}
	switch (s->cat) {
	case TL_GIL:
		if (s->other.tid)
			items_add(&t->pub.gil_holders, (__u64)s->other.pid << 32 | s->other.tid, ns, ITEMS_KEPT, &a->err);
		break;
	case TL_RUNQUEUE:
		/* an untraced process counts as one, whichever of its threads ran */
		items_add(&t->pub.preemptors, (__u64)s->other.pid << 32 |
			  (timeline__thread(a->tl, s->other.pid, s->other.tid) ? s->other.tid : s->other.pid),
			  ns, ITEMS_KEPT, &a->err);
		break;
	case TL_BLOCKED:
	case TL_IO:
		items_add(&t->pub.wakers, (__u64)s->other.pid << 32 | s->other.tid, ns, ITEMS_KEPT, &a->err);
		break;
	case TL_SYNC:
	case TL_CUDA_MEM:
	case TL_CUDA:
		items_add(&t->pub.cuda_fns, s->cuda_fn, ns, ITEMS_KEPT, &a->err);
		break;
	default:
		break;
	}
}

static void on_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct attribution *a = ctx;
	const struct isr_ev_py_sample *s = (const void *)e->h;
	struct thr_state *t;
	__u64 since;

	if (a->err)
		return;
	if (e->h->type == ISR_EV_PY_STACK) {
		const struct isr_ev_py_stack *st = (const void *)e->h;

		if (st->stack_id && htab_u64__put(&a->stack_depth, st->stack_id, st->depth))
			a->err = -ENOMEM;
		return;
	}
	if (th && e->h->type == ISR_EV_CUDA_CALL) {
		t = thread_get(a, th->pid, th->tid);
		if (!t) {
			a->err = -ENOMEM;
			return;
		}
		if (!t->pub.active_start) {
			t->pub.active_start = e->start;
			timeline__thread_acc(a->tl, th, e->start, &t->at_first_call);
		}
		/* to the call's end: its own time, in the category the
		 * timeline puts it in */
		t->pub.active_end = e->end;
		timeline__thread_acc(a->tl, th, e->start, &t->at_last_call);
		t->at_last_call.ns[tl_returned_cat((const struct isr_ev_cuda_call *)e->h)] += e->end - e->start;
		return;
	}
	if (!th || e->h->type != ISR_EV_PY_SAMPLE || s->kind != ISR_PY_KIND_TIMER)
		return;
	if (attribution__gpu_observed(a, th->pid) && !timeline__gpu_idle(a->tl, th->pid, &since))
		return;
	t = thread_get(a, th->pid, th->tid);
	if (!t) {
		a->err = -ENOMEM;
		return;
	}
	t->pub.samples++;
	{
		__u64 depth;

		if (!htab_u64__get(&a->stack_depth, s->stack_id, &depth) || !depth)
			return;
	}
	{
		t->pub.python_samples++;
		items_add(&t->pub.stacks, s->stack_id, 1, STACKS_KEPT, &a->err);
	}
}

enum cause cause_of_category(enum tl_cat c)
{
	switch (c) {
	case TL_GIL:		return CAUSE_GIL;
	case TL_SYNC:		return CAUSE_SYNC;
	case TL_CUDA_MEM:	return CAUSE_CUDA_MEM;
	case TL_CUDA:		return CAUSE_CUDA;
	case TL_FAULT:		return CAUSE_FAULT;
	case TL_RECLAIM:	return CAUSE_RECLAIM;
	case TL_RUNQUEUE:	return CAUSE_RUNQUEUE;
	case TL_IO:		return CAUSE_IO;
	case TL_BLOCKED:	return CAUSE_BLOCKED;
	case TL_RUNNING:	return CAUSE_NATIVE;	/* split into Python at the end */
	default:		return CAUSE_UNKNOWN;
	}
}

static void dev_running_add(struct dev_state *d, __u32 tid, __u64 ns, int *err)
{
	struct dev_running *n;

	for (size_t i = 0; i < d->nrunning; i++)
		if (d->running[i].tid == tid) {
			d->running[i].ns += ns;
			return;
		}
	n = grow(d->running, d->nrunning, &d->running_cap, sizeof(*d->running));
	if (!n) {
		*err = -ENOMEM;
		return;
	}
	d->running = n;
	d->running[d->nrunning++] = (struct dev_running){ .tid = tid, .ns = ns };
}

/* Of part, the launcher's time in synchronizations over a gap (scaled as
 * its categories are), what it spent preempted in there, waiting for a
 * CPU: the GPU was done, and the call would have returned but for the CPU
 * (runqueue, not the synchronization's). Runnable time inside calls is
 * taken from the synchronizations first. */
static __u64 sync_runqueue(const struct tl_acc *l, __u64 part)
{
	__u64 in_calls = l->cpu_wait_ns > l->ns[TL_RUNQUEUE] ? l->cpu_wait_ns - l->ns[TL_RUNQUEUE] : 0;

	if (!l->ns[TL_SYNC] || !in_calls)
		return 0;
	if (in_calls >= l->ns[TL_SYNC])
		return part;
	return (__u64)((double)part * (double)in_calls / (double)l->ns[TL_SYNC]);
}

/* Splits a gap: the synchronization that drained the device first, then
 * the launching thread's categories until its launch (scaled to fit), the
 * rest launch latency. */
static void on_gap(void *ctx, const struct tl_gap *g)
{
	struct attribution *a = ctx;
	struct dev_state *d = device_get(a, g->pid, g->device);
	struct pgaps *pg = pgaps_get(a, g->pid);
	__u64 len = g->end - g->start, host, split[CAUSE_MAX] = { 0 }, running = 0;
	struct thr_state *t = NULL;

	if (!d || !pg) {
		a->err = -ENOMEM;
		return;
	}
	pg->ring[pg->next] = (struct span_range){ g->start, g->end };
	pg->next = (pg->next + 1) % GAP_RING;
	if (pg->n < GAP_RING)
		pg->n++;
	if (g->leading || g->tail) {
		*(g->leading ? &d->pub.leading_ns : &d->pub.trailing_ns) += len;
		if (a->hook.gap)
			a->hook.gap(a->hook.ctx, g, split);
		return;
	}
	d->pub.gaps++;
	if (g->launcher_tid) {
		t = thread_get(a, g->pid, g->launcher_tid);
		if (!t) {
			a->err = -ENOMEM;
			return;
		}
		t->pub.gaps++;
	}
	if (g->after_sync && !g->launcher_known) {
		__u64 from = g->sync_return_ns > g->start ? g->sync_return_ns : g->start;

		split[CAUSE_SYNC_DRAIN] = g->end > from ? g->end - from : 0;
		split[CAUSE_LAUNCH_LATENCY] = len - split[CAUSE_SYNC_DRAIN];
		d->pub.sync_drain_gaps++;
	} else if (g->after_sync) {
		__u64 total = tl_acc__total(&g->launcher), given = 0, waited, drain = 0, ran = 0;

		host = g->launch_ns && g->launch_ns < g->end && g->launch_ns > g->start ? g->launch_ns - g->start : len;
		for (int c = 0; c < TL_CAT_MAX && total; c++) {
			__u64 part = (__u64)((double)g->launcher.ns[c] / (double)total * (double)host);

			if (c == TL_SYNC) {
				__u64 q = sync_runqueue(&g->launcher, part);

				split[CAUSE_RUNQUEUE] += q;
				drain += part - q;
			}
			else if (c == TL_RUNNING)
				ran += part;
			else
				split[cause_of_category(c)] += part;
			given += part;
		}
		if (!total)
			drain += host, given = host;
		/* The synchronization kept the host's work from overlapping
		 * the GPU's, but only as much GPU work as it waited for (its
		 * time before the device went idle): without it, the GPU would
		 * have run that while the host worked, and then waited for the
		 * host all the same. What the host ran beyond that is its own
		 * (Python or native). */
		waited = g->sync_return_ns > g->sync_entry_ns ? g->sync_return_ns - g->sync_entry_ns : 0;
		waited = waited > drain ? waited - drain : 0;
		split[CAUSE_SYNC_DRAIN] += drain + (ran < waited ? ran : waited);
		running += ran > waited ? ran - waited : 0;
		split[CAUSE_LAUNCH_LATENCY] += len - given;
		d->pub.sync_drain_gaps++;
	} else if (len < ATTR_SHORT_GAP_NS && !g->trailing) {
		split[CAUSE_LAUNCH_OVERHEAD] = len;
	} else if (!g->launcher_known) {
		split[CAUSE_UNKNOWN] = len;
	} else if (g->launch_ns && g->launch_ns <= g->start) {
		split[CAUSE_LAUNCH_LATENCY] = len;
	} else {
		__u64 total = tl_acc__total(&g->launcher), given = 0;

		host = g->launch_ns && g->launch_ns < g->end ? g->launch_ns - g->start : len;
		for (int c = 0; c < TL_CAT_MAX && total; c++) {
			__u64 part = (__u64)((double)g->launcher.ns[c] / (double)total * (double)host);

			if (c == TL_SYNC) {
				__u64 q = sync_runqueue(&g->launcher, part);

				split[CAUSE_RUNQUEUE] += q;
				given += q;
				part -= q;
			}
			if (c == TL_RUNNING)
				running += part;
			else
				split[cause_of_category(c)] += part;
			given += part;
		}
		if (!total)
			split[CAUSE_UNKNOWN] += host, given = host;
		split[CAUSE_LAUNCH_LATENCY] += len - given;
	}
	for (int c = 0; c < CAUSE_MAX; c++) {
		d->pub.idle_ns[c] += split[c];
		if (t)
			t->pub.idle_ns[c] += split[c];
	}
	if (running && t) {
		t->running_idle_ns += running;
		dev_running_add(d, t->pub.tid, running, &a->err);
	}
	if (a->hook.gap) {
		if (t)
			split[CAUSE_NATIVE] += running;
		a->hook.gap(a->hook.ctx, g, split);
	}
}

void attribution__on_gap(struct attribution *a, const struct attr_gap_hook *hook)
{
	a->hook = hook ? *hook : (struct attr_gap_hook){ 0 };
}

struct attribution *attribution__new(struct timeline *tl, const struct pass *p)
{
	struct attribution *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->tl = tl;
	a->pass = p;
	a->obs.ctx = a;
	a->obs.span = on_span;
	a->obs.gap = on_gap;
	a->obs.event = on_event;
	return a;
}

const struct tl_observer *attribution__observer(struct attribution *a)
{
	return &a->obs;
}

/* The share of a thread's running time that was Python, from its samples;
 * 0 without samples. */
static double python_share(const struct thr_state *t)
{
	return t && t->pub.samples ? (double)t->pub.python_samples / (double)t->pub.samples : 0;
}

int attribution__finish(struct attribution *a)
{
	__u64 idx;

	if (a->err)
		return a->err;
	/* every thread of the timeline, with its whole window */
	for (size_t i = 0; i < timeline__thread_count(a->tl); i++) {
		const struct tl_thread *th = timeline__thread_at(a->tl, i);
		struct thr_state *t = thread_get(a, th->pid, th->tid);

		if (!t)
			return -ENOMEM;
		t->pub.launcher |= th->launches > 0;
		if (t->pub.launcher && t->pub.active_end > t->pub.active_start) {
			tl_acc__diff(&t->at_last_call, &t->at_first_call, &t->pub.window);
		} else {
			t->pub.window = th->acc;
			t->pub.active_start = t->pub.active_end = 0;
		}
		if (t->pub.launcher && htab_u64__put(&a->launching, th->pid, 1))
			return -ENOMEM;
	}
	/* where nothing launched GPU work (a job on the CPU), the threads that
	 * did work, or that wanted to run Python and could not (waiting for
	 * the GIL): a thread that only waits (a main thread joining its
	 * workers) costs the job nothing by waiting. Where something did, the
	 * launching threads: another thread matters as far as they waited
	 * for it (the wait chains: input_bound), not by its own waits (a
	 * DataLoader worker's queue feeder blocked on its worker's batches) */
	for (size_t i = 0; i < a->nthr; i++) {
		struct attr_thread *t = &a->thr[i]->pub;
		__u64 busy = t->window.ns[TL_RUNNING] + t->window.ns[TL_RUNQUEUE];
		double least = CPU_ONLY_BUSY_SHARE * (double)tl_acc__total(&t->window);

		t->critical = t->launcher || (!a->launching.len &&
					      ((double)busy >= least || (double)t->window.ns[TL_GIL] >= least));
	}
	for (size_t i = 0; i < a->nthr; i++) {
		struct thr_state *t = a->thr[i];
		__u64 py = (__u64)(python_share(t) * (double)t->running_idle_ns);

		t->pub.idle_ns[CAUSE_PYTHON] += py;
		t->pub.idle_ns[CAUSE_NATIVE] += t->running_idle_ns - py;
		items_sort(&t->pub.gil_holders);
		items_sort(&t->pub.preemptors);
		items_sort(&t->pub.wakers);
		items_sort(&t->pub.cuda_fns);
		items_sort(&t->pub.stacks);
	}
	for (size_t i = 0; i < a->ndev; i++) {
		struct dev_state *d = &a->dev[i];

		for (size_t k = 0; k < d->nrunning; k++) {
			bool known = htab_u64__get(&a->by_thread, (__u64)d->pub.pid << 32 | d->running[k].tid, &idx);
			__u64 py = (__u64)(python_share(known ? a->thr[idx] : NULL) * (double)d->running[k].ns);

			d->pub.idle_ns[CAUSE_PYTHON] += py;
			d->pub.idle_ns[CAUSE_NATIVE] += d->running[k].ns - py;
		}
	}
	for (size_t i = 0; i < timeline__device_count(a->tl); i++) {
		struct tl_device td;
		struct dev_state *d;

		timeline__device(a->tl, i, &td);
		d = device_get(a, td.pid, td.device);
		if (!d)
			return -ENOMEM;
		d->pub.busy_ns = td.busy_ns;
		d->pub.observed_ns = td.observed_ns;
		d->pub.active_ns = td.observed_ns > d->pub.leading_ns + d->pub.trailing_ns ?
				   td.observed_ns - d->pub.leading_ns - d->pub.trailing_ns : 0;
		d->pub.span_ns = td.span_ns;
		d->pub.estimated = td.estimated;
	}
	return 0;
}

void attribution__free(struct attribution *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nthr; i++) {
		struct attr_thread *t = &a->thr[i]->pub;

		items_free(&t->gil_holders);
		items_free(&t->preemptors);
		items_free(&t->wakers);
		items_free(&t->cuda_fns);
		items_free(&t->stacks);
		free(a->thr[i]);
	}
	for (size_t i = 0; i < a->ndev; i++)
		free(a->dev[i].running);
	htab__free(&a->by_thread);
	htab__free(&a->by_dev);
	htab__free(&a->by_pid);
	htab__free(&a->stack_depth);
	htab__free(&a->launching);
	free(a->thr);
	free(a->dev);
	free(a->gaps);
	free(a);
}

size_t attribution__thread_count(const struct attribution *a)
{
	return a->nthr;
}

const struct attr_thread *attribution__thread_at(const struct attribution *a, size_t i)
{
	return i < a->nthr ? &a->thr[i]->pub : NULL;
}

const struct attr_thread *attribution__thread(const struct attribution *a, __u32 pid, __u32 tid)
{
	__u64 idx;

	return htab_u64__get(&a->by_thread, (__u64)pid << 32 | tid, &idx) ? &a->thr[idx]->pub : NULL;
}

size_t attribution__device_count(const struct attribution *a)
{
	return a->ndev;
}

const struct attr_device *attribution__device_at(const struct attribution *a, size_t i)
{
	return i < a->ndev ? &a->dev[i].pub : NULL;
}
