// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The timeline (timeline.h): a state machine per thread fed in start order,
 * a busy count per GPU device whose ends are timers fired in time order,
 * and the readings of the launching threads taken when a gap opens.
 *
 * The threads, their incarnations, deaths and scheduler states are the task
 * model's (tasks.h), which the pass feeds before the timeline: a thread here
 * is the task model's thread of the same index, with what the timeline adds
 * (the probed intervals over its state, its time per category, its spans).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "buf.h"
#include "htab.h"
#include "gpu_summary.h"

#define MAX_OVERLAYS	6	/* nested probed intervals of one thread */

/* A synchronization that returns this long after a device went idle is
 * taken to be what drained it (on top of the clock fit's error bound)... */
#define SYNC_DRAIN_SLACK_NS	5000000ull
/* ...and a device seen going idle at most this much later than its return
 * (the clock fit's bound added): later, work launched since ran first. */
#define SYNC_AFTER_TOL_NS	10000ULL
/* API launch records older than this are dropped: their kernels ran long
 * ago or never will. */
#define LAUNCH_RECORD_TTL_NS	30000000000ull
/* The fewest launch records worth a purge of those past the TTL. */
#define LAUNCH_PURGE_MIN	1024

static const char *const cat_names[TL_CAT_MAX] = {
	[TL_GIL] = "gil_wait",
	[TL_SYNC] = "cuda_sync",
	[TL_CUDA_MEM] = "cuda_memory",
	[TL_CUDA] = "cuda_call",
	[TL_FAULT] = "page_fault",
	[TL_RECLAIM] = "reclaim",
	[TL_RUNQUEUE] = "runqueue",
	[TL_IO] = "io_sleep",
	[TL_BLOCKED] = "blocked",
	[TL_RUNNING] = "running",
	[TL_UNKNOWN] = "unknown",
};

const char *tl_cat_name(enum tl_cat c)
{
	return c < TL_CAT_MAX ? cat_names[c] : "?";
}

enum tl_cat tl_call_cat(__u16 func)
{
	return isr_cuda_is(func, ISR_CUDA_K_SYNC) ? TL_SYNC : isr_cuda_is(func, ISR_CUDA_K_MEM) ? TL_CUDA_MEM : TL_CUDA;
}

enum tl_cat tl_returned_cat(const struct isr_ev_cuda_call *c)
{
	if (isr_cuda_is(c->func, ISR_CUDA_K_COPY) && c->duration_ns >= TL_COPY_BLOCKED_NS)
		return TL_SYNC;
	return tl_call_cat(c->func);
}

__u64 tl_acc__total(const struct tl_acc *a)
{
	__u64 t = 0;

	for (int i = 0; i < TL_CAT_MAX; i++)
		t += a->ns[i];
	return t;
}

void tl_acc__diff(const struct tl_acc *b, const struct tl_acc *a, struct tl_acc *d)
{
	for (int i = 0; i < TL_CAT_MAX; i++)
		d->ns[i] = b->ns[i] > a->ns[i] ? b->ns[i] - a->ns[i] : 0;
	d->cpu_wait_ns = b->cpu_wait_ns > a->cpu_wait_ns ? b->cpu_wait_ns - a->cpu_wait_ns : 0;
}

/* --- state ------------------------------------------------------------------------ */

struct overlay {
	enum tl_cat cat;
	__u64 end;
	struct tl_other other;
	__u16 fn;
};

struct thr {
	struct tl_thread pub;
	__u32 ix;			/* in tl->thr: the task model's index */
	enum task_state base;		/* the task model's state as of the latest event about it */
	struct tl_other rq_other;	/* who had the CPU when it became runnable */
	struct overlay ov[MAX_OVERLAYS];
	int nov;
	/* the span being built */
	enum tl_cat cur;
	__u64 span_start;
	struct tl_other span_other;
	__u16 span_fn;
};

/* The reading of one launching thread when a gap opened. */
struct snap {
	__u32 tid;
	struct tl_acc acc;
};

struct gdev {
	__u32 pid, device;
	int active;			/* intervals running now */
	__u64 busy_since, busy_ns;
	__u64 observed_start, observed_end;	/* while its activity was collected */
	bool gap_open, seen_any;
	bool unobserved;		/* its process's window closed: no gap until work in a later one */
	__u64 gap_start;
	bool after_sync;
	__u64 sync_entry_ns, sync_return_ns;
	__u32 sync_tid;
	__u16 sync_fn;
	struct snap *snaps;
	size_t nsnaps, snap_cap;
};

/* A launch API record, until the work it launched came (a kernel; the
 * kernels of a graph launch share its id: it stays) or the TTL passed. */
struct launch_rec {
	__u32 corr, tid;
	__u64 start;
	bool graph;
};

struct proc {
	__u32 pid;
	bool gone;
	bool has_gpu;
	__u64 gpu_enabled_ns;		/* the bridge started collecting (0: not seen) */
	/* GPU activity in windows (isr_ev_gpu_window): collected from the
	 * latest enable, and the closed windows' length so far */
	__u64 window_open_ns;
	bool windowed, window_closed;
	__u64 first_window_ns, last_close_ns, windows_ns;
	bool exited_in_window;
	__u32 *launchers;		/* tids that launched work */
	size_t nlaunchers, launcher_cap;
	struct htab launches;		/* struct launch_rec by correlation id */
	size_t purge_at;		/* records in it at the next purge */
	/* the synchronization in progress (the latest that entered) */
	__u32 sync_tid;
	__u16 sync_fn;
	__u64 sync_entry, sync_return;
};

/* What happens at a time no event marks: a device's work ends, a probed
 * interval of a thread ends (so that every span is reported in time order). */
enum { TIMER_DEV, TIMER_THREAD };

struct timer {
	__u64 t;
	__u32 idx;		/* in devs or thr */
	__u32 kind;		/* TIMER_* */
};

struct timeline {
	const struct recording *r;
	__u64 start, end;
	struct tl_observer *obs;
	size_t nobs;
	const struct tasks *tasks;
	struct thr **thr;		/* by the task model's index, each allocated alone: observers keep pointers */
	size_t nthr, thr_cap;
	struct htab by_pid;		/* pid -> index in procs */
	struct proc *procs;
	size_t nprocs, proc_cap;
	struct htab by_dev;		/* pid << 32 | device + 1 -> index in devs */
	struct gdev *devs;
	size_t ndevs, dev_cap;
	struct timer *timers;		/* min-heap on t */
	size_t ntimers, timer_cap;
	struct tl_other *cpu_curr;	/* the task last seen switched in, per CPU */
	size_t ncpus;
	__u64 now;
	const struct pass *pass;
};

static void *grow(void *arr, size_t n, size_t *cap, size_t sz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 16;
	p = reallocarray(arr, ncap, sz);
	if (p)
		*cap = ncap;
	return p;
}

static __u64 clamp(const struct timeline *tl, __u64 t)
{
	return t < tl->start ? tl->start : t > tl->end ? tl->end : t;
}

/* --- observers ------------------------------------------------------------------- */

int timeline__observe(struct timeline *tl, const struct tl_observer *o)
{
	struct tl_observer *n = reallocarray(tl->obs, tl->nobs + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	tl->obs = n;
	tl->obs[tl->nobs++] = *o;
	return 0;
}

static void emit_span(struct timeline *tl, struct thr *t, __u64 end)
{
	struct tl_span s;

	if (end <= t->span_start)
		return;
	s.thread = &t->pub;
	s.cat = t->cur;
	s.start = t->span_start;
	s.end = end;
	s.other = t->span_other;
	s.cuda_fn = t->span_fn;
	for (size_t i = 0; i < tl->nobs; i++)
		if (tl->obs[i].span)
			tl->obs[i].span(tl->obs[i].ctx, &s);
}

static void emit_gap(struct timeline *tl, const struct tl_gap *g)
{
	if (g->end <= g->start)
		return;
	for (size_t i = 0; i < tl->nobs; i++)
		if (tl->obs[i].gap)
			tl->obs[i].gap(tl->obs[i].ctx, g);
}

static void timer_push(struct timeline *tl, __u64 t, __u32 kind, __u32 idx, int *err);

/* --- threads ---------------------------------------------------------------------- */

static enum tl_cat state_cat(enum task_state s)
{
	switch (s) {
	case TASK_RUNNING:
		return TL_RUNNING;
	case TASK_RUNNABLE:
		return TL_RUNQUEUE;
	case TASK_IO:
		return TL_IO;
	case TASK_BLOCKED:
		return TL_BLOCKED;
	default:
		return TL_UNKNOWN;
	}
}

static enum tl_cat base_cat(const struct thr *t)
{
	return state_cat(t->base);
}

/* The category now, with the span details that go with it. */
static enum tl_cat thr_cat(const struct thr *t, struct tl_other *other, __u16 *fn)
{
	enum tl_cat c = base_cat(t);
	int best = -1;

	/* of two GIL waits (--gil's and the scheduler's), the one that names
	 * the holder */
	for (int i = 0; i < t->nov; i++)
		if (t->ov[i].cat < c || (best >= 0 && t->ov[i].cat == c && !t->ov[best].other.tid &&
					 t->ov[i].other.tid)) {
			c = t->ov[i].cat;
			best = i;
		}
	if (best >= 0) {
		*other = t->ov[best].other;
		*fn = t->ov[best].fn;
	} else {
		*other = c == TL_RUNQUEUE ? t->rq_other : (struct tl_other){ 0, 0 };
		*fn = 0;
	}
	return c;
}

static void thr_integrate(struct thr *t, __u64 to)
{
	if (to > t->pub.now) {
		t->pub.acc.ns[t->cur] += to - t->pub.now;
		if (base_cat(t) == TL_RUNQUEUE)
			t->pub.acc.cpu_wait_ns += to - t->pub.now;
		t->pub.now = to;
	}
}

/* After a change at `at`: ends the span if the category or its details
 * changed. A blocked span keeps the waker set on it by the wakeup. */
static void thr_retarget(struct timeline *tl, struct thr *t, __u64 at)
{
	struct tl_other other;
	__u16 fn;
	enum tl_cat c = thr_cat(t, &other, &fn);

	if (c == t->cur && fn == t->span_fn && (c == TL_BLOCKED || c == TL_IO ||
	    (other.pid == t->span_other.pid && other.tid == t->span_other.tid)))
		return;
	emit_span(tl, t, at);
	t->cur = c;
	t->span_start = at;
	t->span_other = other;
	t->span_fn = fn;
}

/* Brings t's totals to `to`, ending the overlays that end before. */
static void thr_advance(struct timeline *tl, struct thr *t, __u64 to)
{
	for (;;) {
		int k = -1;

		for (int i = 0; i < t->nov; i++)
			if (t->ov[i].end <= to && (k < 0 || t->ov[i].end < t->ov[k].end))
				k = i;
		if (k < 0)
			break;
		{
			__u64 at = t->ov[k].end > t->pub.now ? t->ov[k].end : t->pub.now;

			thr_integrate(t, at);
			t->ov[k] = t->ov[--t->nov];
			thr_retarget(tl, t, at);
		}
	}
	thr_integrate(t, to);
}

/* The first event that tells where t was: the time before it, spent in
 * `implied`, is moved from TL_UNKNOWN. */
static void thr_reveal(struct thr *t, enum task_state implied)
{
	enum tl_cat c = state_cat(implied);

	t->pub.acc.ns[c] += t->pub.acc.ns[TL_UNKNOWN];
	if (c == TL_RUNQUEUE)
		t->pub.acc.cpu_wait_ns += t->pub.acc.ns[TL_UNKNOWN];
	t->pub.acc.ns[TL_UNKNOWN] = 0;
	if (t->cur == TL_UNKNOWN)
		t->cur = c;
}

static void copy_comm(char dst[16], const char *src)
{
	size_t n = strnlen(src, 15);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A timeline thread for each of the task model's threads that has none
 * yet: its window from the task's start, nothing known of it yet. 0 or
 * -ENOMEM. */
static int thr_all(struct timeline *tl)
{
	size_t n = tasks__count(tl->tasks);

	if (array__reserve(&tl->thr, &tl->thr_cap, n ? n : 1, sizeof(*tl->thr)))
		return -ENOMEM;
	for (; tl->nthr < n; tl->nthr++) {
		const struct task_thread *tt = tasks__at(tl->tasks, tl->nthr);
		struct thr *t = calloc(1, sizeof(*t));

		if (!t)
			return -ENOMEM;
		t->ix = tt->ix;
		t->pub.pid = tt->pid;
		t->pub.tid = tt->tid;
		copy_comm(t->pub.comm, tt->comm);
		t->pub.start_ns = t->pub.now = t->span_start = tt->start_ns;
		t->pub.end_ns = tl->end;
		t->base = TASK_UNKNOWN;
		t->cur = TL_UNKNOWN;
		tl->thr[tl->nthr] = t;
	}
	return 0;
}

/* The timeline's thread of the task model's thread tt (thr_all made it). */
static struct thr *thr_of(const struct timeline *tl, const struct task_thread *tt)
{
	return tl->thr[tt->ix];
}

/* The live thread tid of pid; NULL when none. */
static struct thr *live_thread(const struct timeline *tl, __u32 pid, __u32 tid)
{
	const struct task_thread *tt = tasks__thread(tl->tasks, pid, tid);

	return tt ? thr_of(tl, tt) : NULL;
}

static void thr_exit(struct timeline *tl, struct thr *t, __u64 ts)
{
	t->nov = 0;
	emit_span(tl, t, ts);
	t->span_start = ts;
	t->pub.exited = true;
	t->pub.end_ns = ts;
}

/* Brings a thread the event changed up to it (at ts): its time so far in
 * the category it was in, what the event told of the time before, its
 * state and name now; a thread the event created starts there, one it
 * ended ends there. */
static struct thr *thr_sync(struct timeline *tl, const struct task_touch *tc, __u64 ts)
{
	const struct task_thread *tt = tc->t;
	struct thr *t = thr_of(tl, tt);

	if (tc->created) {
		t->pub.start_ns = t->pub.now = t->span_start = tt->start_ns;
		memset(&t->pub.acc, 0, sizeof(t->pub.acc));
		t->pub.created = true;
		t->base = tt->state;
		t->cur = base_cat(t);
	} else {
		thr_advance(tl, t, ts);
		if (t->base == TASK_UNKNOWN && tt->state != TASK_UNKNOWN)
			thr_reveal(t, tc->was);
		t->base = tt->state;
	}
	copy_comm(t->pub.comm, tt->comm);
	if (tc->ended)
		thr_exit(tl, t, ts);
	return t;
}

static int thr_overlay(struct timeline *tl, struct thr *t, enum tl_cat cat, __u64 start, __u64 end,
		       struct tl_other other, __u16 fn)
{
	int err = 0;

	thr_advance(tl, t, start);
	if (end <= start)
		return 0;
	if (t->nov == MAX_OVERLAYS) {
		/* deeper than any real nesting: drop the one that ends first */
		int k = 0;

		for (int i = 1; i < t->nov; i++)
			if (t->ov[i].end < t->ov[k].end)
				k = i;
		t->ov[k] = t->ov[--t->nov];
	}
	t->ov[t->nov++] = (struct overlay){ .cat = cat, .end = end, .other = other, .fn = fn };
	thr_retarget(tl, t, start);
	timer_push(tl, end, TIMER_THREAD, t->ix, &err);
	return err;
}

/* --- processes and devices ------------------------------------------------------------ */

static __u64 launch_rec_hash(const void *e)
{
	return hash__u64(((const struct launch_rec *)e)->corr);
}

static bool launch_rec_equal(const void *a, const void *b)
{
	return ((const struct launch_rec *)a)->corr == ((const struct launch_rec *)b)->corr;
}

static struct proc *proc_get(struct timeline *tl, __u32 pid)
{
	struct proc *n, *p;
	__u64 idx;

	if (htab_u64__get(&tl->by_pid, pid, &idx))
		return &tl->procs[idx];
	n = grow(tl->procs, tl->nprocs, &tl->proc_cap, sizeof(*tl->procs));
	if (!n)
		return NULL;
	tl->procs = n;
	if (htab_u64__put(&tl->by_pid, pid, tl->nprocs))
		return NULL;
	p = &tl->procs[tl->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	htab__init(&p->launches, sizeof(struct launch_rec), launch_rec_hash, launch_rec_equal);
	p->purge_at = LAUNCH_PURGE_MIN;
	return p;
}

static const struct proc *proc_find(const struct timeline *tl, __u32 pid)
{
	__u64 idx;

	return htab_u64__get(&tl->by_pid, pid, &idx) ? &tl->procs[idx] : NULL;
}

static int proc_add_launcher(struct proc *p, __u32 tid)
{
	__u32 *n;

	for (size_t i = 0; i < p->nlaunchers; i++)
		if (p->launchers[i] == tid)
			return 0;
	n = grow(p->launchers, p->nlaunchers, &p->launcher_cap, sizeof(*p->launchers));
	if (!n)
		return -ENOMEM;
	p->launchers = n;
	p->launchers[p->nlaunchers++] = tid;
	return 0;
}

static bool launch_rec_expired(void *e, void *now)
{
	return ((struct launch_rec *)e)->start + LAUNCH_RECORD_TTL_NS < *(__u64 *)now;
}

/* Records past the TTL go once the table doubled since the last purge. */
static int proc_launch_record(struct proc *p, __u32 corr, __u32 tid, __u64 start, bool graph)
{
	struct launch_rec key = { .corr = corr }, *r;
	bool added;

	if (p->launches.len >= p->purge_at) {
		htab__remove_if(&p->launches, launch_rec_expired, &start);
		p->purge_at = 2 * p->launches.len > LAUNCH_PURGE_MIN ? 2 * p->launches.len : LAUNCH_PURGE_MIN;
	}
	r = htab__insert(&p->launches, &key, &added);
	if (!r)
		return -ENOMEM;
	*r = (struct launch_rec){ .corr = corr, .tid = tid, .start = start, .graph = graph };
	return 0;
}

/* The work of launch record corr came: the record goes, unless other work
 * of a graph launch will come. */
static void proc_launch_done(struct proc *p, __u32 corr)
{
	struct launch_rec key = { .corr = corr }, *r;

	r = htab__find(&p->launches, &key);
	if (!r || r->graph)
		return;
	htab__remove(&p->launches, &key, NULL);
}

static struct gdev *dev_get(struct timeline *tl, __u32 pid, __u32 device, __u32 *index)
{
	__u64 key = (__u64)pid << 32 | device, idx;
	struct gdev *n, *d;

	if (htab_u64__get(&tl->by_dev, key, &idx)) {
		*index = (__u32)idx;
		return &tl->devs[idx];
	}
	n = grow(tl->devs, tl->ndevs, &tl->dev_cap, sizeof(*tl->devs));
	if (!n)
		return NULL;
	tl->devs = n;
	if (htab_u64__put(&tl->by_dev, key, tl->ndevs))
		return NULL;
	*index = (__u32)tl->ndevs;
	d = &tl->devs[tl->ndevs++];
	memset(d, 0, sizeof(*d));
	d->pid = pid;
	d->device = device;
	return d;
}

static void timer_push(struct timeline *tl, __u64 t, __u32 kind, __u32 idx, int *err)
{
	struct timer *n = grow(tl->timers, tl->ntimers, &tl->timer_cap, sizeof(*tl->timers));
	size_t i;

	if (!n) {
		*err = -ENOMEM;
		return;
	}
	tl->timers = n;
	i = tl->ntimers++;
	while (i) {
		size_t parent = (i - 1) / 2;

		if (tl->timers[parent].t <= t)
			break;
		tl->timers[i] = tl->timers[parent];
		i = parent;
	}
	tl->timers[i] = (struct timer){ .t = t, .idx = idx, .kind = kind };
}

static struct timer timer_pop(struct timeline *tl)
{
	struct timer top = tl->timers[0], last = tl->timers[--tl->ntimers];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= tl->ntimers)
			break;
		if (c + 1 < tl->ntimers && tl->timers[c + 1].t < tl->timers[c].t)
			c++;
		if (last.t <= tl->timers[c].t)
			break;
		tl->timers[i] = tl->timers[c];
		i = c;
	}
	if (tl->ntimers)
		tl->timers[i] = last;
	return top;
}

/* A device went idle at `at`: remember what each launching thread had done
 * so far, and whether a synchronization drained it. */
static int dev_open_gap(struct timeline *tl, struct gdev *d, __u64 at)
{
	struct proc *p = proc_get(tl, d->pid);
	const struct clock_fit *fit = pass__fit(tl->pass, d->pid);
	__u64 slack = SYNC_DRAIN_SLACK_NS + (fit ? (__u64)fit->bound_ns : 0);

	if (!p)
		return -ENOMEM;
	if (d->unobserved)
		return 0;	/* its work ran past its window's close: not observed idle */
	d->gap_open = true;
	d->gap_start = at;
	d->nsnaps = 0;
	for (size_t i = 0; i < p->nlaunchers; i++) {
		struct thr *t = live_thread(tl, d->pid, p->launchers[i]);
		struct snap *n;

		if (!t)
			continue;
		n = grow(d->snaps, d->nsnaps, &d->snap_cap, sizeof(*d->snaps));
		if (!n)
			return -ENOMEM;
		d->snaps = n;
		thr_advance(tl, t, at);
		d->snaps[d->nsnaps].tid = t->pub.tid;
		d->snaps[d->nsnaps].acc = t->pub.acc;
		d->nsnaps++;
	}
	/* drained by the synchronization: the device went idle before it
	 * returned (it returns once the device is idle), not after work
	 * launched since (a kernel that ran after the return and then left
	 * the device idle is not the synchronization's) */
	d->after_sync = p->sync_entry && p->sync_entry <= at &&
			p->sync_return + SYNC_AFTER_TOL_NS + (fit ? (__u64)fit->bound_ns : 0) >= at &&
			p->sync_return <= at + slack;
	if (d->after_sync) {
		d->sync_entry_ns = p->sync_entry;
		d->sync_return_ns = p->sync_return;
		d->sync_tid = p->sync_tid;
		d->sync_fn = p->sync_fn;
	}
	return 0;
}

/* The gap of d closes at `at` because of work launched by tid at launch_ns
 * (tid 0: unknown). */
static void dev_close_gap(struct timeline *tl, struct gdev *d, __u64 at, __u32 tid, __u64 launch_ns, bool trailing,
			  bool leading, bool tail)
{
	struct tl_gap g;

	memset(&g, 0, sizeof(g));
	g.pid = d->pid;
	g.device = d->device;
	g.start = d->gap_start;
	g.end = at;
	g.trailing = trailing;
	g.tail = tail;
	g.leading = leading;
	g.launcher_tid = tid;
	g.launch_ns = launch_ns;
	g.after_sync = d->after_sync;
	g.sync_entry_ns = d->sync_entry_ns;
	g.sync_return_ns = d->sync_return_ns;
	g.sync_tid = d->sync_tid;
	g.sync_fn = d->sync_fn;
	for (size_t i = 0; i < d->nsnaps && tid; i++) {
		struct thr *t;

		if (d->snaps[i].tid != tid)
			continue;
		t = live_thread(tl, d->pid, tid);
		if (t) {
			thr_advance(tl, t, at);
			tl_acc__diff(&t->pub.acc, &d->snaps[i].acc, &g.launcher);
			g.launcher_known = true;
		}
		break;
	}
	d->gap_open = false;
	emit_gap(tl, &g);
}

static void fire_timers(struct timeline *tl, __u64 upto, int *err)
{
	while (tl->ntimers && tl->timers[0].t <= upto && !*err) {
		struct timer tm = timer_pop(tl);
		struct gdev *d;

		if (tm.kind == TIMER_THREAD) {
			struct thr *t = tl->thr[tm.idx];

			if (!t->pub.exited)
				thr_advance(tl, t, tm.t);
			continue;
		}
		d = &tl->devs[tm.idx];
		if (--d->active > 0)
			continue;
		d->active = 0;
		d->busy_ns += tm.t > d->busy_since ? tm.t - d->busy_since : 0;
		*err = dev_open_gap(tl, d, tm.t);
	}
}

/* The launcher of the work with correlation id corr: from its API record,
 * else the thread of the process that launched last. */
static __u32 work_launcher(struct timeline *tl, __u32 pid, __u32 corr, __u64 at, __u64 *launch_ns)
{
	const struct proc *p = proc_find(tl, pid);
	struct launch_rec key = { .corr = corr };
	const struct launch_rec *r;
	__u32 best = 0;
	__u64 best_t = 0;

	*launch_ns = 0;
	if (!p)
		return 0;
	if (corr && (r = htab__find(&p->launches, &key))) {
		*launch_ns = r->start;
		return r->tid;
	}
	for (size_t i = 0; i < p->nlaunchers; i++) {
		const struct thr *t = live_thread(tl, pid, p->launchers[i]);

		if (t && t->pub.last_launch_ns <= at && t->pub.last_launch_ns >= best_t) {
			best = t->pub.tid;
			best_t = t->pub.last_launch_ns;
		}
	}
	*launch_ns = best_t;
	return best;
}

/* A gap that no work ended (the process exited, the recording did: the
 * tail; or a GPU window closed): the thread that launched last is the one
 * the GPU waited for. */
static void close_trailing(struct timeline *tl, struct gdev *d, __u64 at, bool tail)
{
	__u64 launch_ns;
	__u32 tid = work_launcher(tl, d->pid, 0, at, &launch_ns);

	dev_close_gap(tl, d, at, tid, 0, true, false, tail);
}

/* The end of a device's observation at ts (its process gone, or the
 * recording over): at ts, unless the bridge's records stop before (it did
 * not flush the last of them: pass__gpu_complete_until), when what came
 * after the last delivered record was not observed, neither busy nor idle.
 * An open gap closes there. */
static void dev_observation_end(struct timeline *tl, struct gdev *d, __u64 ts)
{
	__u64 at = ts, until;

	if (pass__gpu_complete_until(tl->pass, d->pid, &until) && clamp(tl, until) < at)
		at = clamp(tl, until);
	if (d->gap_open) {
		if (at > d->gap_start)
			close_trailing(tl, d, at, true);
		else
			d->gap_open = false;
	}
	if (!d->observed_end)
		d->observed_end = at > d->observed_start ? at : d->observed_start;
}

static int on_gpu_work(struct timeline *tl, const struct pass_event *e, const struct isr_gpu_work *w)
{
	__u32 device = w->device, corr = w->correlation;
	struct proc *p = proc_get(tl, e->h->pid);
	struct gdev *d;
	__u32 idx;
	int err = 0;

	if (!p)
		return -ENOMEM;
	p->has_gpu = true;
	if (e->unmapped)
		return 0;
	d = dev_get(tl, e->h->pid, device, &idx);
	if (!d)
		return -ENOMEM;
	if (d->gap_open || !d->seen_any || d->unobserved) {
		__u64 launch_ns, at = clamp(tl, e->start);
		__u32 tid = work_launcher(tl, e->h->pid, corr, at, &launch_ns);
		bool leading = !d->seen_any || d->unobserved;

		if (!d->seen_any)
			d->observed_start = at;
		if (leading) {
			/* idle since the bridge began collecting (in this window),
			 * if that is known */
			__u64 from = d->unobserved ? p->window_open_ns : p->gpu_enabled_ns;

			if (from && from < at) {
				if (!d->seen_any)
					d->observed_start = clamp(tl, from);
				d->gap_start = clamp(tl, from);
				d->gap_open = true;
				d->nsnaps = 0;
			}
			d->unobserved = false;
		}
		if (d->gap_open && at > d->gap_start)
			dev_close_gap(tl, d, at, tid, launch_ns, false, leading, false);
		d->gap_open = false;
	}
	proc_launch_done(proc_get(tl, e->h->pid), corr);	/* the gap's observers may have moved p */
	d->seen_any = true;
	if (d->active++ == 0)
		d->busy_since = clamp(tl, e->start);
	timer_push(tl, clamp(tl, e->end), TIMER_DEV, idx, &err);
	return err;
}

/* A window of collection of process p closed at `at` (the record comes
 * after the window's last work): an open gap of its devices ends there, and
 * nothing is idle until work in a later window. */
static int on_gpu_window(struct timeline *tl, const struct isr_ev_gpu_window *w)
{
	struct proc *p = proc_get(tl, w->hdr.pid);
	__u64 open, close;

	if (!p)
		return -ENOMEM;
	if (w->flags & ISR_GPU_WINDOW_OPEN)
		return 0;	/* still collecting: a later record of it comes */
	open = clamp(tl, w->open_ns);
	close = clamp(tl, w->close_ns);
	if (!p->windowed || open < p->first_window_ns)
		p->first_window_ns = open;
	p->windowed = true;
	p->window_closed = true;
	p->windows_ns += close > open ? close - open : 0;
	if (close > p->last_close_ns)
		p->last_close_ns = close;
	p->exited_in_window |= (w->flags & ISR_GPU_WINDOW_EXIT) != 0;
	for (size_t i = 0; i < tl->ndevs; i++) {
		struct gdev *d = &tl->devs[i];

		if (d->pid != w->hdr.pid)
			continue;
		if (d->gap_open) {
			if (close > d->gap_start)
				close_trailing(tl, d, close, false);
			d->gap_open = false;
		}
		d->unobserved = true;
	}
	return 0;
}

/* The bridge of pid began collecting at ts (a new window). */
static int on_gpu_enabled(struct timeline *tl, __u32 pid, __u64 ts)
{
	struct proc *p = proc_get(tl, pid);

	if (!p)
		return -ENOMEM;
	if (!p->gpu_enabled_ns)
		p->gpu_enabled_ns = ts;
	p->window_open_ns = ts;
	p->window_closed = false;
	return 0;
}

/* Every device of a gone process: busy stretches end, open gaps close. */
static int proc_gone(struct timeline *tl, __u32 pid, __u64 ts)
{
	int err = 0;

	for (size_t i = 0; i < tl->ndevs; i++) {
		struct gdev *d = &tl->devs[i];

		if (d->pid != pid)
			continue;
		dev_observation_end(tl, d, ts);
	}
	{
		struct proc *p = proc_get(tl, pid);

		if (!p)
			return -ENOMEM;
		p->gone = true;
	}
	return err;
}

/* --- events ------------------------------------------------------------------------------ */

static struct tl_other *cpu_slot(struct timeline *tl, __u32 cpu)
{
	if (cpu >= tl->ncpus) {
		size_t n = (size_t)cpu + 1 > 2 * tl->ncpus ? (size_t)cpu + 1 : 2 * tl->ncpus;
		struct tl_other *c;

		if (n > 65536)
			return NULL;
		c = reallocarray(tl->cpu_curr, n, sizeof(*c));
		if (!c)
			return NULL;
		memset(c + tl->ncpus, 0, (n - tl->ncpus) * sizeof(*c));
		tl->cpu_curr = c;
		tl->ncpus = n;
	}
	return &tl->cpu_curr[cpu];
}

/* What the task model does not keep: who took the CPU of a thread switched
 * out (for its run-queue spans). */
static void on_switch(struct timeline *tl, struct thr *prev, const struct isr_ev_sched_switch *e)
{
	struct tl_other *cur = cpu_slot(tl, e->hdr.cpu);

	if (cur)
		*cur = (struct tl_other){ e->next_pid, e->next_tid };
	if (prev)
		prev->rq_other = (struct tl_other){ e->next_pid, e->next_tid };
}

/* A wakeup of a sleeping thread: the waker of its blocked span, and who
 * had the CPU it was queued on. */
static void on_wakeup(struct timeline *tl, struct thr *t, const struct task_touch *tc,
		      const struct isr_ev_sched_wakeup *w)
{
	struct tl_other *owner = cpu_slot(tl, w->target_cpu);

	if (tc->was != TASK_BLOCKED && tc->was != TASK_IO)
		return;
	if (t->cur == TL_BLOCKED || t->cur == TL_IO) {
		__u32 waker = isr_wakeup_waker_tid(w);

		if (waker && waker != t->pub.tid)
			t->span_other = (struct tl_other){ w->waker_pid, waker };
		else
			t->span_other = (struct tl_other){ 0, 0 };
	}
	t->rq_other = owner ? *owner : (struct tl_other){ 0, 0 };
	if (t->rq_other.tid == t->pub.tid)
		t->rq_other = (struct tl_other){ 0, 0 };
}

static int on_cuda_call(struct timeline *tl, struct thr *t, const struct pass_event *e)
{
	const struct isr_ev_cuda_call *c = (const void *)e->h;
	const struct isr_cuda_fn *fn = isr_cuda_fn(c->func);
	__u64 start = clamp(tl, e->start), end = clamp(tl, e->end);
	enum tl_cat cat;
	struct proc *p;

	if (!fn)
		return 0;
	if (fn->kind & ISR_CUDA_K_LAUNCH) {
		t->pub.launches++;
		t->pub.last_launch_ns = start;
		p = proc_get(tl, t->pub.pid);
		return p ? proc_add_launcher(p, t->pub.tid) : -ENOMEM;
	}
	if (!(c->flags & ISR_CUDA_RETURNED))
		return 0;
	cat = tl_returned_cat(c);
	if (cat == TL_SYNC) {
		p = proc_get(tl, t->pub.pid);
		if (!p)
			return -ENOMEM;
		if (end >= p->sync_return) {
			p->sync_tid = t->pub.tid;
			p->sync_fn = c->func;
			p->sync_entry = start;
			p->sync_return = end;
		}
	}
	return thr_overlay(tl, t, cat, start, end, (struct tl_other){ 0, 0 }, c->func);
}

static int on_gpu_api(struct timeline *tl, const struct pass_event *e)
{
	const struct isr_ev_gpu_api *a = (const void *)e->h;
	struct proc *p;

	/* any work: the copy that ends a gap has its caller and time too */
	if (e->unmapped || !gpu_work_cbid(a->api, a->cbid))
		return 0;
	p = proc_get(tl, a->hdr.pid);
	if (!p)
		return -ENOMEM;
	if (a->thread_id) {
		int err = proc_add_launcher(p, a->thread_id);
		struct thr *t;

		if (err)
			return err;
		t = live_thread(tl, a->hdr.pid, a->thread_id);
		if (t && e->start >= t->pub.last_launch_ns) {
			t->pub.last_launch_ns = e->start;
		}
	}
	/* the work is the GPU's once the call has submitted it, at its
	 * return: a launcher preempted inside the call delayed it itself */
	return proc_launch_record(p, a->correlation_id, a->thread_id, e->end, gpu_graph_cbid(a->api, a->cbid));
}

/* What the event adds to the state of its thread t. */
static int on_thread_event(struct timeline *tl, struct thr *t, const struct pass_event *e, __u64 ts)
{
	const struct isr_ev_hdr *h = e->h;

	switch (h->type) {
	case ISR_EV_SCHED_WAKEUP:
	case ISR_EV_SCHED_WAKEUP_NEW:
		on_wakeup(tl, t, &e->tasks->touch[0], (const void *)h);
		return 0;
	case ISR_EV_PAGE_FAULT:
		return thr_overlay(tl, t, TL_FAULT, clamp(tl, e->start), clamp(tl, e->end), (struct tl_other){ 0, 0 },
				   0);
	case ISR_EV_RECLAIM:
		return thr_overlay(tl, t, TL_RECLAIM, clamp(tl, e->start), clamp(tl, e->end), (struct tl_other){ 0, 0 },
				   0);
	case ISR_EV_CUDA_CALL:
		return on_cuda_call(tl, t, e);
	case ISR_EV_GIL:
		return thr_overlay(tl, t, TL_GIL, clamp(tl, e->start), clamp(tl, e->end), (struct tl_other){ 0, 0 },
				   0);
	case ISR_EV_GIL_WAIT: {
		const struct isr_ev_gil_wait *g = (const void *)h;
		struct tl_other holder = { 0, 0 };

		if ((g->flags & ISR_GIL_WAIT_HOLDER) && g->holder_tid && g->holder_tid != t->pub.tid)
			holder = (struct tl_other){ h->pid, g->holder_tid };
		return thr_overlay(tl, t, TL_GIL, clamp(tl, e->start), clamp(tl, e->end), holder, 0);
	}
	case ISR_EV_PY_SAMPLE:
		t->pub.last_sample_stack = ((const struct isr_ev_py_sample *)h)->stack_id;
		t->pub.last_sample_ns = ts;
		return 0;
	default:
		return 0;
	}
}

static void notify_event(struct timeline *tl, const struct pass_event *e, const struct thr *t)
{
	for (size_t i = 0; i < tl->nobs; i++)
		if (tl->obs[i].event)
			tl->obs[i].event(tl->obs[i].ctx, e, t ? &t->pub : NULL);
}

/* The threads the event changed, brought up to it; then what it adds to
 * its own thread; then their spans from here. */
static int on_threads(struct timeline *tl, const struct pass_event *e, __u64 ts)
{
	const struct task_change *c = e->tasks;
	struct thr *touched[3], *t = NULL;
	int err = 0;

	for (size_t i = 0; i < c->ntouch; i++) {
		touched[i] = thr_sync(tl, &c->touch[i], ts);
		if (c->touch[i].t == c->thread)
			t = touched[i];
	}
	if (e->h->type == ISR_EV_SCHED_SWITCH)
		on_switch(tl, t && !t->pub.exited ? t : NULL, (const void *)e->h);
	else if (t && !t->pub.exited)
		err = on_thread_event(tl, t, e, ts);
	for (size_t i = 0; i < c->ntouch; i++)
		if (!touched[i]->pub.exited)
			thr_retarget(tl, touched[i], ts);
	return err;
}

int timeline__event(struct timeline *tl, const struct pass_event *e)
{
	const struct isr_ev_hdr *h = e->h;
	__u64 ts = clamp(tl, e->start);
	const struct task_thread *tt;
	struct isr_gpu_work work;
	int err = 0;

	fire_timers(tl, ts, &err);
	if (err || thr_all(tl))		/* the threads the event made */
		return err ?: -ENOMEM;
	tl->now = ts;
	if (isr_ev_gpu_work(h, &work))
		err = on_gpu_work(tl, e, &work);
	else if (h->type == ISR_EV_GPU_API)
		err = on_gpu_api(tl, e);
	else if (h->type == ISR_EV_GPU_STATUS && ((const struct isr_ev_gpu_status *)h)->state == ISR_GPU_ENABLED)
		err = on_gpu_enabled(tl, h->pid, ts);
	else if (h->type == ISR_EV_GPU_WINDOW)
		err = on_gpu_window(tl, (const void *)h);
	err = err ?: on_threads(tl, e, ts);
	if (!err && e->tasks->image_ended)
		err = proc_gone(tl, e->tasks->image_ended, ts);
	if (err)
		return err;
	/* observers get the event's thread, while it lives */
	tt = e->tasks->thread;
	notify_event(tl, e, tt && !tt->exited ? thr_of(tl, tt) : NULL);
	return 0;
}

int timeline__finish(struct timeline *tl)
{
	int err = 0;

	fire_timers(tl, UINT64_MAX, &err);
	if (err || thr_all(tl))
		return err ?: -ENOMEM;
	for (size_t i = 0; i < tl->nthr; i++) {
		struct thr *t = tl->thr[i];

		if (t->pub.exited)
			continue;
		thr_advance(tl, t, tl->end);
		if (t->base == TASK_UNKNOWN)	/* never told: listed at the start, no event at all */
			thr_reveal(t, TASK_BLOCKED);
		t->base = TASK_BLOCKED;
		emit_span(tl, t, tl->end);
		t->span_start = tl->end;
	}
	for (size_t i = 0; i < tl->ndevs; i++) {
		struct gdev *d = &tl->devs[i];

		if (!proc_find(tl, d->pid)->gone)
			dev_observation_end(tl, d, tl->end);
	}
	return 0;
}

/* --- construction and queries ---------------------------------------------------------- */

struct timeline *timeline__new(const struct pass *pass, const struct recording *r)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->r = r;
	tl->pass = pass;
	tl->tasks = pass__tasks(pass);
	tl->start = pass__start(pass);
	tl->end = pass__end(pass);
	tl->now = tl->start;
	if (thr_all(tl)) {
		timeline__free(tl);
		return NULL;
	}
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nprocs; i++) {
		free(tl->procs[i].launchers);
		htab__free(&tl->procs[i].launches);
	}
	for (size_t i = 0; i < tl->ndevs; i++)
		free(tl->devs[i].snaps);
	for (size_t i = 0; i < tl->nthr; i++)
		free(tl->thr[i]);
	htab__free(&tl->by_pid);
	htab__free(&tl->by_dev);
	free(tl->thr);
	free(tl->procs);
	free(tl->devs);
	free(tl->timers);
	free(tl->cpu_curr);
	free(tl->obs);
	free(tl);
}

const struct tl_thread *timeline__thread(struct timeline *tl, __u32 pid, __u32 tid)
{
	struct thr *t = live_thread(tl, pid, tid);

	return t ? &t->pub : NULL;
}

void timeline__thread_acc(struct timeline *tl, const struct tl_thread *pub, __u64 at, struct tl_acc *out)
{
	struct thr *t = (struct thr *)((char *)pub - offsetof(struct thr, pub));

	if (!t->pub.exited)
		thr_advance(tl, t, at);
	*out = t->pub.acc;
}

enum tl_cat timeline__thread_cat(const struct tl_thread *pub)
{
	const struct thr *t = (const struct thr *)((const char *)pub - offsetof(struct thr, pub));

	return t->cur;
}

const struct tl_thread *timeline__thread_latest(const struct timeline *tl, __u32 pid, __u32 tid)
{
	const struct task_thread *tt = tasks__latest(tl->tasks, pid, tid);

	return tt && tt->ix < tl->nthr ? &tl->thr[tt->ix]->pub : NULL;
}

size_t timeline__thread_count(const struct timeline *tl)
{
	return tl->nthr;
}

const struct tl_thread *timeline__thread_at(const struct timeline *tl, size_t i)
{
	return i < tl->nthr ? &tl->thr[i]->pub : NULL;
}

bool timeline__gpu_idle(const struct timeline *tl, __u32 pid, __u64 *since)
{
	bool idle = false;

	for (size_t i = 0; i < tl->ndevs; i++) {
		const struct gdev *d = &tl->devs[i];

		if (d->pid != pid || !d->gap_open)
			continue;
		if (!idle || d->gap_start < *since)
			*since = d->gap_start;
		idle = true;
	}
	return idle;
}

bool timeline__task_name(const struct timeline *tl, __u32 pid, __u32 tid, char comm[16], char process_comm[16])
{
	return tasks__name_of(tl->tasks, pid, tid, comm, process_comm);
}

bool timeline__has_gpu(const struct timeline *tl, __u32 pid)
{
	const struct proc *p = proc_find(tl, pid);

	return p && p->has_gpu;
}

size_t timeline__device_count(const struct timeline *tl)
{
	return tl->ndevs;
}

void timeline__device(const struct timeline *tl, size_t i, struct tl_device *out)
{
	const struct gdev *d = &tl->devs[i];
	const struct proc *p = proc_find(tl, d->pid);

	out->pid = d->pid;
	out->device = d->device;
	out->busy_ns = d->busy_ns;
	out->observed_ns = d->observed_end > d->observed_start ? d->observed_end - d->observed_start : 0;
	out->span_ns = out->observed_ns;
	out->estimated = false;
	if (p && p->windowed) {
		/* observed: its windows (the last one still open at the end
		 * counts to the end); span: from the first window to the
		 * process's exit or the recording's end */
		__u64 end = d->observed_end, open_tail = 0;

		if (!p->window_closed && p->window_open_ns > p->last_close_ns && end > p->window_open_ns)
			open_tail = end - p->window_open_ns;
		if (p->exited_in_window && p->window_closed && p->last_close_ns < end)
			end = p->last_close_ns;
		out->observed_ns = p->windows_ns + open_tail;
		out->span_ns = end > p->first_window_ns ? end - p->first_window_ns : 0;
		if (out->observed_ns > out->span_ns)
			out->observed_ns = out->span_ns;
		out->estimated = out->observed_ns < out->span_ns;
	}
}
