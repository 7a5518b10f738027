// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sampling.h"
#include "cuda_funcs.h"

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
	__u64 *per_window;
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

/* The windows from the sampling events into *out (NULL, *n = 0, when the
 * hot path was never switched off, or there was no budget). 0 or -ENOMEM. */
static int collect_windows(const struct recording *r, __u64 start, __u64 end, struct sampling *s,
			   struct window **out, size_t *n)
{
	struct window *w = NULL;
	size_t cap = 0;
	bool open = false;

	*n = 0;
	for (size_t i = 0; i < r->event_count; i++) {
		const struct isr_ev_sampling *e = (const void *)r->events[i];
		__u64 ts;

		if (e->hdr.type != ISR_EV_SAMPLING || e->hdr.size < sizeof(*e))
			continue;
		ts = e->hdr.ts_ns < start ? start : e->hdr.ts_ns > end ? end : e->hdr.ts_ns;
		if (e->switch_ns > s->switch_ns_max)
			s->switch_ns_max = e->switch_ns;
		if (e->kind == ISR_SAMPLING_START) {
			s->budget = true;
			s->budget_pct = e->budget_ppm / 1e4;
			s->hit_cost_ns = e->hit_cost_ps / 1e3;
			ts = start;
		} else if (e->kind == ISR_SAMPLING_ON) {
			ts = e->hdr.ts_ns < start ? start : e->hdr.ts_ns;
		} else if (e->kind != ISR_SAMPLING_OFF) {
			continue;
		}
		if (e->kind == ISR_SAMPLING_OFF) {
			s->sampled = true;
			if (open) {
				w[*n - 1].end = ts;
				w[*n - 1].released = ts + e->switch_ns;
			}
			open = false;
			continue;
		}
		if (open)
			continue; /* a second start: the window goes on */
		if (*n == cap) {
			struct window *nw = reallocarray(w, cap ? 2 * cap : 16, sizeof(*w));

			if (!nw) {
				free(w);
				return -ENOMEM;
			}
			w = nw;
			cap = cap ? 2 * cap : 16;
		}
		w[*n].start = ts;
		w[*n].end = end;
		w[*n].released = end;
		(*n)++;
		open = true;
	}
	if (!s->sampled) {
		free(w);
		w = NULL;
		*n = 0;
	}
	*out = w;
	return 0;
}

/* The last window starting at or before ts (0 for earlier events). */
static size_t window_of(const struct window *w, size_t n, __u64 ts)
{
	size_t lo = 0, hi = n;

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

	if (ts < w[k].start)
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
static double window_rate(const struct proc_acc *p, const struct window *w, size_t k)
{
	__u64 len = overlap(w[k].start, w[k].end, p->first, p->last + 1);

	return len ? (double)p->per_window[k] / (double)len : -1;
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

	if (p->last > w[k].released || w[k].end >= end || !p->per_window[k])
		return p->last;
	len = overlap(w[k].start, w[k].end, p->first, p->last + 1);
	interval = len / p->per_window[k];
	if (p->last < w[k].end && w[k].end - p->last > 3 * interval + 1000000)
		return p->last;
	return p->exit ? p->exit : end;
}

static struct proc_acc *proc_get(struct proc_acc **procs, size_t *count, size_t *cap, __u32 pid, size_t nwin)
{
	for (size_t i = 0; i < *count; i++)
		if ((*procs)[i].pid == pid)
			return &(*procs)[i];
	if (*count == *cap) {
		struct proc_acc *np = reallocarray(*procs, *cap ? 2 * *cap : 8, sizeof(**procs));

		if (!np)
			return NULL;
		*procs = np;
		*cap = *cap ? 2 * *cap : 8;
	}
	memset(&(*procs)[*count], 0, sizeof(**procs));
	(*procs)[*count].pid = pid;
	(*procs)[*count].first = ~0ULL;
	(*procs)[*count].per_window = calloc(nwin, sizeof(__u64));
	if (!(*procs)[*count].per_window)
		return NULL;
	return &(*procs)[(*count)++];
}

int sampling__compute(const struct recording *r, __u64 start, __u64 end, struct sampling *out)
{
	struct proc_acc *procs = NULL;
	size_t nwin, count = 0, cap = 0, i;
	struct window *w;
	int err;

	memset(out, 0, sizeof(*out));
	err = collect_windows(r, start, end, out, &w, &nwin);
	if (err || !w)
		return err;
	out->windows = nwin;
	for (i = 0; i < nwin; i++)
		out->on_ns += w[i].end - w[i].start;
	out->coverage = end > start ? (double)out->on_ns / (double)(end - start) : 1;

	/* The span of each process's CUDA calls (the synchronizations that
	 * are never switched off tell when its launching started and ended
	 * better than its lifetime: a job loads for a while before it
	 * launches, and tears its context down after), and its hot calls. */
	for (i = 0; i < r->event_count && !err; i++) {
		const struct isr_ev_hdr *h = r->events[i];
		struct proc_acc *p;

		if (h->type == ISR_EV_PROC_EXIT && h->size >= sizeof(struct isr_ev_proc_exit) &&
		    (((const struct isr_ev_proc_exit *)h)->flags & ISR_EXIT_GROUP_DEAD)) {
			p = proc_get(&procs, &count, &cap, h->pid, nwin);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			p->exit = h->ts_ns;
			continue;
		}
		if (h->type != ISR_EV_CUDA_CALL || h->size < sizeof(struct isr_ev_cuda_call))
			continue;
		p = proc_get(&procs, &count, &cap, h->pid, nwin);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		if (h->ts_ns < p->first)
			p->first = h->ts_ns;
		if (h->ts_ns > p->last)
			p->last = h->ts_ns;
		if (is_hot_call(h)) {
			p->per_window[window_of(w, nwin, h->ts_ns)]++;
			p->observed++;
		} else {
			err = cold_call(p, w, nwin, h);
		}
	}
	if (!err) {
		out->procs = calloc(count ? count : 1, sizeof(*out->procs));
		if (!out->procs)
			err = -ENOMEM;
	}
	for (i = 0; i < count && !err; i++) {
		struct sampling_process *sp;

		if (!procs[i].observed)
			continue;
		procs[i].last = activity_end(&procs[i], w, nwin, end);
		sp = &out->procs[out->proc_count++];
		sp->pid = procs[i].pid;
		sp->observed = procs[i].observed;
		sp->slowdown = slowdown(&procs[i]);
		sp->estimated = estimate(&procs[i], w, nwin, end, sp->slowdown);
		sp->scale = sp->estimated / (double)sp->observed;
	}
	for (i = 0; i < count; i++) {
		free(procs[i].per_window);
		free(procs[i].cold);
	}
	free(procs);
	free(w);
	if (err)
		sampling__free(out);
	return err;
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
