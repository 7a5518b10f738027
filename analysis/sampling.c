// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sampling.h"
#include "cuda_funcs.h"
#include "buf.h"

struct window {
	__u64 start, end;
	__u64 released;		/* end of the release: calls may still be seen until then */
};

/* A thread's last call of the probes that stay on, and where it fell. */
struct cold_thread {
	__u32 tid;
	long where;		/* window_where() of last */
	__u64 last;
};

/* A process's hot-path calls per window and the span of its CUDA calls. */
struct proc_acc {
	__u32 pid;
	__u64 first, last;	/* its first and last CUDA call event, then the span's end */
	__u64 exit;		/* its last thread exited; 0: it outlived the recording */
	__u64 *per_window;	/* [nwin], windows it had no call in past the end are 0 */
	size_t nwin;
	__u64 observed;
	/* intervals between a thread's consecutive calls of the probes that
	 * stay on, both inside one window or both inside one gap */
	struct cold_thread *cold;
	size_t ncold, cold_cap;
	double win_sum, gap_sum;
	__u64 win_n, gap_n;
};

/* The fewest intervals of each kind for a slowdown, and its bounds. */
#define SLOWDOWN_MIN_INTERVALS	3
#define SLOWDOWN_MIN		0.5
#define SLOWDOWN_MAX		2.0

static bool is_hot_call(const struct isr_ev_hdr *h)
{
	const struct isr_ev_cuda_call *e = (const void *)h;
	const struct isr_cuda_fn *fn;

	if (h->type != ISR_EV_CUDA_CALL || h->size < sizeof(*e))
		return false;
	fn = isr_cuda_fn(e->func);
	return fn && ISR_CUDA_FAM_ENTRY_ONLY(fn->family);
}

/* The last window starting at or before ts (0 for earlier events). */
static size_t window_of(const struct window *w, size_t n, __u64 ts)
{
	size_t lo = 0, hi = n;

	if (!n)
		return 0;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (w[mid].start <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* 2k: ts is inside window k; 2k + 1: inside the gap after it (from the end
 * of its release); -1: neither (before the first window, or while the
 * probes were being released). */
static long window_where(const struct window *w, size_t n, __u64 ts)
{
	size_t k = window_of(w, n, ts);

	if (!n || ts < w[k].start)
		return -1;
	if (ts < w[k].end)
		return 2 * (long)k;
	if (ts >= w[k].released && (k + 1 >= n || ts < w[k + 1].start))
		return 2 * (long)k + 1;
	return -1;
}

/* A call of a probe that is never switched off (a synchronization, an
 * allocation): the interval since the thread's previous one counts when
 * both lie in the same window, or in the same gap. */
static int cold_call(struct proc_acc *p, const struct window *w, size_t n, const struct isr_ev_hdr *h)
{
	long where = window_where(w, n, h->ts_ns);
	struct cold_thread *c = NULL;

	for (size_t i = 0; i < p->ncold && !c; i++)
		if (p->cold[i].tid == h->tid)
			c = &p->cold[i];
	if (!c) {
		if (p->ncold == p->cold_cap) {
			size_t cap = p->cold_cap ? 2 * p->cold_cap : 8;
			struct cold_thread *nc = reallocarray(p->cold, cap, sizeof(*nc));

			if (!nc)
				return -ENOMEM;
			p->cold = nc;
			p->cold_cap = cap;
		}
		c = &p->cold[p->ncold++];
		c->tid = h->tid;
		c->where = -1;
		c->last = 0;
	}
	if (where >= 0 && where == c->where) {
		if (where % 2 == 0) {
			p->win_sum += (double)(h->ts_ns - c->last);
			p->win_n++;
		} else {
			p->gap_sum += (double)(h->ts_ns - c->last);
			p->gap_n++;
		}
	}
	c->where = where;
	c->last = h->ts_ns;
	return 0;
}

/* How much slower the process ran while its hot path was probed: the mean
 * interval between its threads' calls of the probes that stay on, in
 * windows over in gaps. A launch-bound thread loses the probes' cost per
 * launch in the windows (at 150k launches/s, 10% of its speed), which a
 * rate taken there would carry into every gap; a thread whose pace is set
 * elsewhere (the GPU, a timer) runs alike in both: 1. 1 too when there are
 * too few intervals to tell. */
static double slowdown(const struct proc_acc *p)
{
	double k;

	if (p->win_n < SLOWDOWN_MIN_INTERVALS || p->gap_n < SLOWDOWN_MIN_INTERVALS || p->gap_sum <= 0)
		return 1;
	k = (p->win_sum / (double)p->win_n) / (p->gap_sum / (double)p->gap_n);
	return k < SLOWDOWN_MIN ? SLOWDOWN_MIN : k > SLOWDOWN_MAX ? SLOWDOWN_MAX : k;
}

static __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* The call rate of p in window k (calls per ns), or -1 when p was not
 * alive in it. */
static __u64 calls_in(const struct proc_acc *p, size_t k)
{
	return k < p->nwin ? p->per_window[k] : 0;
}

static double window_rate(const struct proc_acc *p, const struct window *w, size_t k)
{
	__u64 len = overlap(w[k].start, w[k].end, p->first, p->last + 1);

	return len ? (double)calls_in(p, k) / (double)len : -1;
}

/* observed + each gap's length x the rate of the windows around it x
 * gap_speedup (how much faster the process ran in the gaps: slowdown()). */
static double estimate(const struct proc_acc *p, const struct window *w, size_t n, __u64 end, double gap_speedup)
{
	double est = (double)p->observed;

	for (size_t k = 0; k < n; k++) {
		__u64 gap_end = k + 1 < n ? w[k + 1].start : end;
		__u64 gap = overlap(w[k].end, gap_end, p->first, p->last + 1);
		double before, after, rate;

		if (!gap)
			continue;
		before = window_rate(p, w, k);
		after = k + 1 < n ? window_rate(p, w, k + 1) : -1;
		if (before < 0 && after < 0)
			continue;
		rate = before < 0 ? after : after < 0 ? before : (before + after) / 2;
		est += rate * gap_speedup * (double)gap;
	}
	return est;
}

/*
 * Where p's CUDA activity ends, as far as the recording tells. Its last
 * CUDA call in a gap, or one in a window that stopped well before the window
 * did (it was seen to stop), is the end. A last call at the very end of a
 * window that was then switched off says nothing: the process may have gone
 * on calling in the gap, so the end is its exit, or the recording's.
 */
static __u64 activity_end(const struct proc_acc *p, const struct window *w, size_t n, __u64 end)
{
	size_t k = window_of(w, n, p->last);
	__u64 len, interval;

	if (p->last > w[k].released || w[k].end >= end || !calls_in(p, k))
		return p->last;
	len = overlap(w[k].start, w[k].end, p->first, p->last + 1);
	interval = len / calls_in(p, k);
	if (p->last < w[k].end && w[k].end - p->last > 3 * interval + 1000000)
		return p->last;
	return p->exit ? p->exit : end;
}

struct sampling_builder {
	__u64 start, end;	/* the recording window */
	struct sampling s;	/* the budget's settings, as they come */
	struct window *w;	/* every window so far, the last one open when `open` */
	size_t nwin, win_cap;
	bool open;
	struct proc_acc *procs;
	size_t count, cap;
};

static struct proc_acc *proc_get(struct sampling_builder *b, __u32 pid)
{
	for (size_t i = 0; i < b->count; i++)
		if (b->procs[i].pid == pid)
			return &b->procs[i];
	if (array__reserve(&b->procs, &b->cap, b->count + 1, sizeof(*b->procs)))
		return NULL;
	memset(&b->procs[b->count], 0, sizeof(*b->procs));
	b->procs[b->count].pid = pid;
	b->procs[b->count].first = ~0ULL;
	return &b->procs[b->count++];
}

/* The budget's settings, and the windows: from the recording start (or an
 * ON event, the end of an attach) to the next OFF event (the start of a
 * release), or to the end. */
static int on_sampling(struct sampling_builder *b, const struct isr_ev_sampling *e)
{
	struct sampling *s = &b->s;
	__u64 ts = e->hdr.ts_ns < b->start ? b->start : e->hdr.ts_ns > b->end ? b->end : e->hdr.ts_ns;

	if (e->switch_ns > s->switch_ns_max)
		s->switch_ns_max = e->switch_ns;
	if (e->kind == ISR_SAMPLING_START) {
		s->budget = true;
		s->budget_pct = e->budget_ppm / 1e4;
		s->hit_cost_ns = e->hit_cost_ps / 1e3;
		ts = b->start;
	} else if (e->kind == ISR_SAMPLING_ON) {
		ts = e->hdr.ts_ns < b->start ? b->start : e->hdr.ts_ns;
	} else if (e->kind != ISR_SAMPLING_OFF) {
		return 0;
	}
	if (e->kind == ISR_SAMPLING_OFF) {
		s->sampled = true;
		if (b->open) {
			b->w[b->nwin - 1].end = ts;
			b->w[b->nwin - 1].released = ts + e->switch_ns;
		}
		b->open = false;
		return 0;
	}
	if (b->open)
		return 0; /* a second start: the window goes on */
	if (array__reserve(&b->w, &b->win_cap, b->nwin + 1, sizeof(*b->w)))
		return -ENOMEM;
	b->w[b->nwin].start = ts;
	b->w[b->nwin].end = b->end;
	b->w[b->nwin].released = b->end;
	b->nwin++;
	b->open = true;
	return 0;
}

/* The span of each process's CUDA calls (the synchronizations that are
 * never switched off tell when its launching started and ended better than
 * its lifetime: a job loads for a while before it launches, and tears its
 * context down after), and its hot calls per window. A call comes after
 * every window that starts before it: the one it falls in is known. */
static int on_cuda_call(struct sampling_builder *b, const struct isr_ev_hdr *h)
{
	struct proc_acc *p = proc_get(b, h->pid);
	size_t k;

	if (!p)
		return -ENOMEM;
	if (h->ts_ns < p->first)
		p->first = h->ts_ns;
	if (h->ts_ns > p->last)
		p->last = h->ts_ns;
	if (!is_hot_call(h))
		return cold_call(p, b->w, b->nwin, h);
	k = window_of(b->w, b->nwin, h->ts_ns);
	if (k >= p->nwin) {
		size_t cap = p->nwin;

		if (array__reserve(&p->per_window, &cap, b->nwin ? b->nwin : 1, sizeof(*p->per_window)))
			return -ENOMEM;
		memset(p->per_window + p->nwin, 0, (cap - p->nwin) * sizeof(*p->per_window));
		p->nwin = cap;
	}
	p->per_window[k]++;
	p->observed++;
	return 0;
}

struct sampling_builder *sampling_builder__new(__u64 start, __u64 end)
{
	struct sampling_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->start = start;
	b->end = end;
	return b;
}

int sampling_builder__event(struct sampling_builder *b, const struct isr_ev_hdr *h)
{
	struct proc_acc *p;

	if (h->type == ISR_EV_SAMPLING && h->size >= sizeof(struct isr_ev_sampling))
		return on_sampling(b, (const void *)h);
	if (h->type == ISR_EV_PROC_EXIT && h->size >= sizeof(struct isr_ev_proc_exit) &&
	    (((const struct isr_ev_proc_exit *)h)->flags & ISR_EXIT_GROUP_DEAD)) {
		p = proc_get(b, h->pid);
		if (!p)
			return -ENOMEM;
		p->exit = h->ts_ns;
		return 0;
	}
	if (h->type == ISR_EV_CUDA_CALL && h->size >= sizeof(struct isr_ev_cuda_call))
		return on_cuda_call(b, h);
	return 0;
}

int sampling_builder__finish(struct sampling_builder *b, struct sampling *out)
{
	const struct window *w = b->w;
	size_t nwin = b->nwin, i;

	memset(out, 0, sizeof(*out));
	/* the settings and windows, when the hot path was ever switched off */
	out->budget = b->s.budget;
	out->budget_pct = b->s.budget_pct;
	out->hit_cost_ns = b->s.hit_cost_ns;
	out->switch_ns_max = b->s.switch_ns_max;
	out->sampled = b->s.sampled;
	if (!out->sampled || !nwin)
		return 0;
	out->windows = nwin;
	for (i = 0; i < nwin; i++)
		out->on_ns += w[i].end - w[i].start;
	out->coverage = b->end > b->start ? (double)out->on_ns / (double)(b->end - b->start) : 1;
	out->procs = calloc(b->count ? b->count : 1, sizeof(*out->procs));
	if (!out->procs)
		return -ENOMEM;
	for (i = 0; i < b->count; i++) {
		struct proc_acc *p = &b->procs[i];
		struct sampling_process *sp;

		if (!p->observed)
			continue;
		p->last = activity_end(p, w, nwin, b->end);
		sp = &out->procs[out->proc_count++];
		sp->pid = p->pid;
		sp->observed = p->observed;
		sp->slowdown = slowdown(p);
		sp->estimated = estimate(p, w, nwin, b->end, sp->slowdown);
		sp->scale = sp->estimated / (double)sp->observed;
	}
	return 0;
}

void sampling_builder__free(struct sampling_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->count; i++) {
		free(b->procs[i].per_window);
		free(b->procs[i].cold);
	}
	free(b->procs);
	free(b->w);
	free(b);
}

double sampling__scale(const struct sampling *s, __u32 pid)
{
	for (size_t i = 0; i < s->proc_count; i++)
		if (s->procs[i].pid == pid)
			return s->procs[i].scale;
	return 1;
}

void sampling__free(struct sampling *s)
{
	free(s->procs);
	s->procs = NULL;
	s->proc_count = 0;
}
