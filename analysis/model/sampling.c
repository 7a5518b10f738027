// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sampling.h"
#include "cuda_funcs.h"
#include "buf.h"

struct window {
	__u64 start, end;
	__u64 released;		/* end of the release: calls may still be seen until then */
};

/* The calls of the probes that stay on in one bin of a window or a gap:
 * the block's `where` (window_where()) and the bin's index from the block's
 * start, SLOWDOWN_BIN_NS each. */
struct cold_bin {
	long where;
	__u64 idx;
	__u64 calls;
};

/* A process's calls by window k: inside it ([start, end)), and in the
 * gap after it ([end, the next start): its release and the next attach
 * too, where the hot path is partly seen). */
struct win_acc {
	__u64 hot;		/* hot-path calls inside it */
	__u64 cold[2];		/* calls of the probes that stay on: inside it, after it */
	__u64 copies[2];	/* async copies switched apart: the same */
};

/* A process's hot-path calls per window and the span of its CUDA calls. */
struct proc_acc {
	__u32 pid;
	__u64 first, last;	/* its first and last CUDA call event, then the span's end */
	__u64 exit;		/* its last thread exited; 0: it outlived the recording */
	struct win_acc *win;	/* [nwin], windows it had no call in past the end are 0 */
	size_t nwin;
	__u64 observed;
	__u64 last_hot;		/* its latest hot call, and the window it fell in */
	long last_hot_where;
	__u64 longest_pause;	/* between two consecutive hot calls inside one window */
	__u64 copies;		/* async copies seen, when they are switched apart */
	/* calls of the probes that stay on, by bin, in time order */
	struct cold_bin *bins;
	size_t nbins, bins_cap;
};

/*
 * The slowdown: the rate of a process's calls of the probes that stay on
 * (synchronizations, allocations) in the gaps over the same in the
 * windows, from bins of SLOWDOWN_BIN_NS (a bin less than half inside the
 * process's span, or cut shorter by its block's end, is left out). Told only
 * with at least SLOWDOWN_MIN_BLOCKS windows and as many gaps, and
 * SLOWDOWN_MIN_CALLS calls in each kind; applied only when its 95%
 * confidence interval lies above 1 and it is at most SLOWDOWN_MAX.
 */
#define SLOWDOWN_BIN_NS		100000000ULL
#define SLOWDOWN_MIN_BLOCKS	2
#define SLOWDOWN_MIN_CALLS	20
#define SLOWDOWN_MIN_BINS	6
#define SLOWDOWN_MAX		2.0

/* A silence at the end of a window is the process seen to stop only when
 * it is longer than all of these: 3 mean intervals + 1 ms, twice its
 * longest pause inside the windows, and a preemption on a busy machine. */
#define STOP_MIN_SILENCE_NS	20000000ULL

/* Estimating the gaps by calls (sampling.h): the windows compared, and the
 * bar for choosing it. */
#define BY_CALLS_MIN_WINDOWS	3
#define BY_CALLS_MIN_LEN	20000000ULL
#define BY_CALLS_MIN_CALLS	10
#define BY_CALLS_MIN_CV		0.05

/* The largest scale of a process's async copies (sampling__copies_scale). */
#define COPIES_MAX_SCALE	100.0

/* A call of the hot path's windows: of its families, but the async copies
 * when they have a switch of their own (copies_apart). */
static bool is_hot_call(const struct isr_ev_hdr *h, bool copies_apart)
{
	__u16 func = ((const struct isr_ev_cuda_call *)h)->func;

	return isr_cuda_is(func, ISR_CUDA_K_HOT) && !(copies_apart && isr_cuda_is(func, ISR_CUDA_K_ASYNC_COPY));
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

/* Of ts, whose window_of() is k: 2k, inside window k; 2k + 1, inside the
 * gap after it (from the end of its release); -1, neither (before the
 * first window, or while the probes were being released). */
static long window_where(const struct window *w, size_t n, size_t k, __u64 ts)
{
	if (!n || ts < w[k].start)
		return -1;
	if (ts < w[k].end)
		return 2 * (long)k;
	if (ts >= w[k].released && (k + 1 >= n || ts < w[k + 1].start))
		return 2 * (long)k + 1;
	return -1;
}

/* A call of a probe that is never switched off (a synchronization, an
 * allocation), counted in its bin of the window or gap it falls in
 * (window_where()). */
static int cold_call(struct proc_acc *p, const struct window *w, long where, const struct isr_ev_hdr *h)
{
	size_t k = (size_t)(where / 2);
	__u64 block_start, idx;

	if (where < 0)
		return 0;
	block_start = where % 2 ? w[k].released : w[k].start;
	idx = (h->ts_ns - block_start) / SLOWDOWN_BIN_NS;
	if (p->nbins && p->bins[p->nbins - 1].where == where && p->bins[p->nbins - 1].idx == idx) {
		p->bins[p->nbins - 1].calls++;
		return 0;
	}
	if (array__reserve(&p->bins, &p->bins_cap, p->nbins + 1, sizeof(*p->bins)))
		return -ENOMEM;
	p->bins[p->nbins++] = (struct cold_bin){ .where = where, .idx = idx, .calls = 1 };
	return 0;
}

static __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* The 97.5% quantile of Student's t with df degrees of freedom (df >= 1):
 * the table to 30, then within 0.1% of it. */
static double t975(size_t df)
{
	static const double t[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
				    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
				    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };

	if (df >= 1 && df <= 30)
		return t[df - 1];
	return 1.96 + 2.5 / (double)df;
}

/* One bin with calls: its kind (0 window, 1 gap), length inside the span,
 * calls. */
struct bin_obs {
	int gap;
	double t;
	__u64 calls;
};

/* The bins of each kind (0 windows, 1 gaps): those with calls one by one,
 * those without as a count and a length (a quiet bin adds R t to the
 * dispersion whatever its place, and a hostile file's span holds 2^64 ns:
 * they are never walked one by one). */
struct bin_set {
	struct bin_obs *o;	/* the bins with calls, malloc'ed */
	size_t n;
	double quiet_n[2], quiet_t[2];
	size_t blocks[2];	/* the blocks of each kind that gave a bin */
};

/* The length of bin idx of the block [bs, be) inside [lo, hi). */
static __u64 bin_len(__u64 bs, __u64 be, __u64 idx, __u64 lo, __u64 hi)
{
	__u64 b0 = bs + idx * SLOWDOWN_BIN_NS, b1 = b0 + SLOWDOWN_BIN_NS;

	return overlap(b0, b1 < be ? b1 : be, lo, hi);
}

/* Every bin of every block inside p's span [first, last] (p->last is the
 * activity end by now) that is at least half a bin long, with the calls
 * counted in it, into *set. 0 or -ENOMEM. */
static int collect_bins(const struct proc_acc *p, const struct window *w, size_t nwin, __u64 end,
			struct bin_set *set)
{
	size_t cap = 0, next = 0;

	memset(set, 0, sizeof(*set));
	for (size_t k = 0; k < nwin; k++) {
		for (int gap = 0; gap < 2; gap++) {
			long where = 2 * (long)k + gap;
			__u64 bs = gap ? w[k].released : w[k].start;
			__u64 be = gap ? (k + 1 < nwin ? w[k + 1].start : end) : w[k].end;
			__u64 first, last, t;
			double n_all = 0, t_all = 0;

			if (gap && w[k].end >= end)
				continue;	/* the last window ran to the end: no gap */
			/* only the bins that overlap p's span: outside it a bin
			 * counts nothing */
			__u64 lo = p->first > bs ? p->first : bs, hi = p->last + 1 < be ? p->last + 1 : be;

			if (hi <= lo || be <= bs)
				continue;
			first = (lo - bs) / SLOWDOWN_BIN_NS;
			last = (hi - bs - 1) / SLOWDOWN_BIN_NS;
			/* all of them: the first and the last may be cut, those
			 * between are whole */
			t = bin_len(bs, be, first, lo, hi);
			if (2 * t >= SLOWDOWN_BIN_NS)
				n_all++, t_all += (double)t;
			if (last > first) {
				t = bin_len(bs, be, last, lo, hi);
				if (2 * t >= SLOWDOWN_BIN_NS)
					n_all++, t_all += (double)t;
				n_all += (double)(last - first - 1);
				t_all += (double)(last - first - 1) * (double)SLOWDOWN_BIN_NS;
			}
			set->blocks[gap] += n_all > 0;
			/* less those with calls, taken one by one */
			while (next < p->nbins &&
			       (p->bins[next].where < where || (p->bins[next].where == where && p->bins[next].idx < first)))
				next++;
			for (; next < p->nbins && p->bins[next].where == where && p->bins[next].idx <= last; next++) {
				t = bin_len(bs, be, p->bins[next].idx, lo, hi);
				if (2 * t < SLOWDOWN_BIN_NS || !p->bins[next].calls)
					continue;
				if (array__reserve(&set->o, &cap, set->n + 1, sizeof(*set->o))) {
					free(set->o);
					set->o = NULL;
					return -ENOMEM;
				}
				set->o[set->n++] = (struct bin_obs){ .gap = gap, .t = (double)t, .calls = p->bins[next].calls };
				n_all--;
				t_all -= (double)t;
			}
			/* (a bin twice in a hostile file's events is not) */
			set->quiet_n[gap] += n_all > 0 ? n_all : 0;
			set->quiet_t[gap] += t_all > 0 ? t_all : 0;
		}
	}
	return 0;
}

/*
 * How much slower p ran while its hot path was probed, and whether that is
 * told at all. The rate of its calls of the probes that stay on is R_w in
 * the windows and R_g in the gaps (calls over time, of the bins); the
 * slowdown is R_g / R_w. Its uncertainty is that of two rates whose bins
 * scatter around them with a dispersion phi estimated from all the bins
 * (a quasi-Poisson rate ratio: var(c) = phi R t for a bin of length t
 * with c calls): se(log k) = sqrt(phi (1/C_w + 1/C_g)), C the calls of
 * each kind; the interval is k exp(+-t975(bins - 2) se). A launch-bound
 * thread slowed by the probes' cost per launch shows it; a thread whose
 * pace is set elsewhere (the GPU, a timer) runs alike (the interval holds
 * 1); a job whose pace changed with its phases scatters widely.
 */
static void measure_slowdown(const struct proc_acc *p, const struct window *w, size_t nwin, __u64 end,
			     struct sampling_process *sp, int *err)
{
	double cw = 0, cg = 0, tw, tg, rate[2], phi, se, k, q, n;
	struct bin_set set;
	size_t *blocks = set.blocks;

	sp->slowdown = 1;
	sp->slowdown_status = SAMPLING_SLOWDOWN_NOT_MEASURED;
	*err = collect_bins(p, w, nwin, end, &set);
	if (*err)
		return;
	tw = set.quiet_t[0];
	tg = set.quiet_t[1];
	n = set.quiet_n[0] + set.quiet_n[1] + (double)set.n;
	for (size_t i = 0; i < set.n; i++) {
		*(set.o[i].gap ? &cg : &cw) += (double)set.o[i].calls;
		*(set.o[i].gap ? &tg : &tw) += set.o[i].t;
	}
	sp->slowdown_windows = blocks[0];
	sp->slowdown_gaps = blocks[1];
	sp->slowdown_calls_windows = (__u64)cw;
	sp->slowdown_calls_gaps = (__u64)cg;
	if (blocks[0] < SLOWDOWN_MIN_BLOCKS || blocks[1] < SLOWDOWN_MIN_BLOCKS || cw < SLOWDOWN_MIN_CALLS ||
	    cg < SLOWDOWN_MIN_CALLS || n < SLOWDOWN_MIN_BINS) {
		free(set.o);
		return;
	}
	rate[0] = cw / tw;
	rate[1] = cg / tg;
	/* a quiet bin: (0 - R t)^2 / (R t) = R t */
	phi = rate[0] * set.quiet_t[0] + rate[1] * set.quiet_t[1];
	for (size_t i = 0; i < set.n; i++) {
		double mean = rate[set.o[i].gap] * set.o[i].t, d = (double)set.o[i].calls - mean;

		phi += d * d / mean;
	}
	free(set.o);
	phi /= n - 2;
	k = rate[1] / rate[0];
	se = sqrt(phi * (1 / cw + 1 / cg));
	q = t975(n - 2 < 1e9 ? (size_t)(n - 2) : 1000000000);
	sp->slowdown_measured = k;
	sp->slowdown_lo = k * exp(-q * se);
	sp->slowdown_hi = k * exp(q * se);
	if (sp->slowdown_lo <= 1 && sp->slowdown_hi >= 1)
		sp->slowdown_status = SAMPLING_SLOWDOWN_NONE;
	else if (sp->slowdown_hi < 1 || k > SLOWDOWN_MAX)
		sp->slowdown_status = SAMPLING_SLOWDOWN_IMPLAUSIBLE;
	else {
		sp->slowdown_status = SAMPLING_SLOWDOWN_APPLIED;
		sp->slowdown = k;
	}
}

/* p's hot-path calls inside window k. */
static __u64 calls_in(const struct proc_acc *p, size_t k)
{
	return k < p->nwin ? p->win[k].hot : 0;
}

/* The call rate of p in window k (calls per ns), or -1 when p was not
 * alive in it. */
static double window_rate(const struct proc_acc *p, const struct window *w, size_t k)
{
	__u64 len = overlap(w[k].start, w[k].end, p->first, p->last + 1);

	return len ? (double)calls_in(p, k) / (double)len : -1;
}

/* The calls inside the windows + each gap's length x the rate of the
 * windows around it x gap_speedup (how much faster the process ran in the
 * gaps: slowdown()). The calls seen in a gap (while the probes were being
 * released or attached) are left to its extrapolation. */
static double estimate(const struct proc_acc *p, const struct window *w, size_t n, __u64 end, double gap_speedup)
{
	double est = 0;

	for (size_t k = 0; k < n; k++)
		est += (double)calls_in(p, k);
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

/* p's always-probed calls inside window k (after 0) or in the gap after it
 * (after 1): the calls of the probes that stay on, and its async copies
 * when they were never switched off (copies_too). */
static __u64 steady_calls(const struct proc_acc *p, size_t k, int after, bool copies_too)
{
	if (k >= p->nwin)
		return 0;
	return p->win[k].cold[after] + (copies_too ? p->win[k].copies[after] : 0);
}

/* The coefficient of variation of the n values whose sum and sum of
 * squares are given (n >= 2). */
static double cv_of(double sum, double sq, size_t n)
{
	double mean = sum / (double)n, var = (sq - sum * mean) / (double)(n - 1);

	return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
}

/* The two ways of estimating p's gaps compared on its windows (sampling.h),
 * into sp; true, with the estimate by calls in *est, when that way is the
 * steadier. */
static bool estimate_by_calls(const struct proc_acc *p, const struct window *w, size_t n, bool copies_too,
			      struct sampling_process *sp, double *est)
{
	double rs = 0, rq = 0, qs = 0, qq = 0, hot = 0, in = 0, gaps = 0;
	size_t m = 0;

	for (size_t k = 0; k < n; k++) {
		__u64 len = overlap(w[k].start, w[k].end, p->first, p->last + 1), c = steady_calls(p, k, 0, copies_too);

		hot += (double)calls_in(p, k);
		in += (double)c;
		gaps += (double)steady_calls(p, k, 1, copies_too);
		if (len >= BY_CALLS_MIN_LEN && c >= BY_CALLS_MIN_CALLS) {
			double r = (double)calls_in(p, k) / ((double)len / 1e9), q = (double)calls_in(p, k) / (double)c;

			rs += r, rq += r * r, qs += q, qq += q * q;
			m++;
		}
	}
	if (m < BY_CALLS_MIN_WINDOWS)
		return false;
	sp->cv_windows = m;
	sp->cv_time = cv_of(rs, rq, m);
	sp->cv_calls = cv_of(qs, qq, m);
	if (sp->cv_time < BY_CALLS_MIN_CV || sp->cv_calls > sp->cv_time / 2)
		return false;
	sp->per_call = hot / in;
	sp->calls_windows = (__u64)in;
	sp->calls_gaps = (__u64)gaps;
	*est = hot + sp->per_call * gaps;
	return true;
}

/*
 * Where p's CUDA activity ends, as far as the recording tells. Its last
 * CUDA call in a gap, or one in a window that stopped well before the window
 * did (it was seen to stop), is the end. A last call near the end of a
 * window that was then switched off says nothing: the process may have gone
 * on calling in the gap, so the end is its exit, or the recording's. "Well
 * before" is a silence longer than any the process showed while it ran: 3
 * of its mean intervals + 1 ms, twice its longest pause between hot calls
 * inside a window, and STOP_MIN_SILENCE_NS (a launcher preempted just
 * before the window ended on a busy machine has not stopped).
 */
static __u64 activity_end(const struct proc_acc *p, const struct window *w, size_t n, __u64 end)
{
	size_t k = window_of(w, n, p->last);
	__u64 len, threshold;

	if (p->last > w[k].released || w[k].end >= end || !calls_in(p, k))
		return p->last;
	len = overlap(w[k].start, w[k].end, p->first, p->last + 1);
	threshold = 3 * (len / calls_in(p, k)) + 1000000;
	if (threshold < 2 * p->longest_pause)
		threshold = 2 * p->longest_pause;
	if (threshold < STOP_MIN_SILENCE_NS)
		threshold = STOP_MIN_SILENCE_NS;
	if (p->last < w[k].end && w[k].end - p->last > threshold)
		return p->last;
	return p->exit ? p->exit : end;
}

/* The windows of a switch that is on from the start (page-fault tracing,
 * the async copies' probes): [start, end) each, in order, the last one
 * open when `open`. */
struct onoff {
	__u64 (*w)[2];
	size_t n, cap;
	bool open;
	bool switched;		/* switched at least once */
};

struct sampling_builder {
	__u64 start, end;	/* the recording window */
	struct sampling s;	/* the budget's settings, as they come */
	struct window *w;	/* every window so far, the last one open when `open` */
	size_t nwin, win_cap;
	bool open;
	struct onoff faults;	/* page-fault tracing's windows so far */
	struct onoff copies;	/* the async copies' */
	bool copies_apart;	/* the costs say they have a switch of their own */
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
	b->procs[b->count].last_hot_where = -1;
	return &b->procs[b->count++];
}

/* Who the tracer was and what it cost: the records that follow a COSTS
 * and a SPENT event. */
static void on_overhead(struct sampling_overhead *o, const struct isr_ev_sampling *e)
{
	const void *tail = e + 1;

	if (e->kind == ISR_SAMPLING_COSTS && e->hdr.size >= sizeof(*e) + sizeof(struct isr_sampling_costs)) {
		const struct isr_sampling_costs *c = tail;

		o->measured = true;
		o->tracer_pid = c->tracer_pid;
		o->helper_pid = c->helper_pid;
		o->sampler_hz = c->sampler_hz;
		o->hit_ns = e->hit_cost_ps / 1e3;
		o->pair_ns = c->pair_ps / 1e3;
		o->fault_ns = c->fault_ps / 1e3;
		o->sched_ns = c->sched_ps / 1e3;
		o->tick_ns = c->tick_ps / 1e3;
		o->copies_apart = c->flags & ISR_COSTS_COPIES_APART;
	} else if (e->kind == ISR_SAMPLING_SPENT &&
		   e->hdr.size >= sizeof(*e) + offsetof(struct isr_sampling_spent, faults_spent_ns)) {
		size_t len = e->hdr.size - sizeof(*e);

		o->spent_known = true;
		o->spent_ns = e->spent_ns;
		memset(&o->spent, 0, sizeof(o->spent));
		memcpy(&o->spent, tail, len < sizeof(o->spent) ? len : sizeof(o->spent));
	}
}

/* Page-fault tracing's windows, or the async copies': on from the start
 * to the first switch off (a flight-recorder window that begins with a
 * switch on began in a gap), then from each switch on to the next switch
 * off or the end. */
static int onoff_switch(struct onoff *o, bool on, __u64 ts, __u64 start, __u64 end)
{
	o->switched = true;
	if (!on) {
		if (o->open)
			o->w[o->n - 1][1] = ts;
		else if (!o->n && !array__reserve(&o->w, &o->cap, 1, sizeof(*o->w))) {
			o->w[0][0] = start;
			o->w[o->n++][1] = ts;
		} else if (!o->n) {
			return -ENOMEM;
		}
		o->open = false;
		return 0;
	}
	if (o->open)
		return 0;
	if (array__reserve(&o->w, &o->cap, o->n + 1, sizeof(*o->w)))
		return -ENOMEM;
	o->w[o->n][0] = ts;
	o->w[o->n++][1] = end;
	o->open = true;
	return 0;
}

/* The budget's settings, and the windows: from the recording start (or an
 * ON event, the end of an attach) to the next OFF event (the start of a
 * release), or to the end. */
static int on_sampling(struct sampling_builder *b, const struct isr_ev_sampling *e)
{
	struct sampling *s = &b->s;
	__u64 ts = e->hdr.ts_ns < b->start ? b->start : e->hdr.ts_ns > b->end ? b->end : e->hdr.ts_ns;

	if (e->kind == ISR_SAMPLING_COSTS || e->kind == ISR_SAMPLING_SPENT) {
		on_overhead(&s->overhead, e);
		b->copies_apart |= s->overhead.copies_apart;
		return 0;
	}
	if (e->kind == ISR_SAMPLING_FAULTS_ON || e->kind == ISR_SAMPLING_FAULTS_OFF) {
		b->s.faults_sampled = true;
		return onoff_switch(&b->faults, e->kind == ISR_SAMPLING_FAULTS_ON, ts, b->start, b->end);
	}
	if (e->kind == ISR_SAMPLING_COPIES_ON || e->kind == ISR_SAMPLING_COPIES_OFF)
		return onoff_switch(&b->copies, e->kind == ISR_SAMPLING_COPIES_ON, ts, b->start, b->end);

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
	long where;
	size_t k;
	int after;

	if (!p)
		return -ENOMEM;
	if (h->ts_ns < p->first)
		p->first = h->ts_ns;
	if (h->ts_ns > p->last)
		p->last = h->ts_ns;
	k = window_of(b->w, b->nwin, h->ts_ns);
	if (b->nwin && k >= p->nwin) {
		size_t cap = p->nwin;

		if (array__reserve(&p->win, &cap, b->nwin, sizeof(*p->win)))
			return -ENOMEM;
		memset(p->win + p->nwin, 0, (cap - p->nwin) * sizeof(*p->win));
		p->nwin = cap;
	}
	/* inside window k, or in the gap after it (none before the first) */
	after = !b->nwin || h->ts_ns < b->w[k].start ? -1 : h->ts_ns >= b->w[k].end;
	where = window_where(b->w, b->nwin, k, h->ts_ns);
	if (b->copies_apart && isr_cuda_is(((const struct isr_ev_cuda_call *)h)->func, ISR_CUDA_K_ASYNC_COPY)) {
		p->copies++;
		if (after >= 0)
			p->win[k].copies[after]++;
		return 0;
	}
	if (!is_hot_call(h, b->copies_apart)) {
		if (after >= 0)
			p->win[k].cold[after]++;
		return cold_call(p, b->w, where, h);
	}
	if (where >= 0 && where % 2 == 0 && where == p->last_hot_where && h->ts_ns - p->last_hot > p->longest_pause)
		p->longest_pause = h->ts_ns - p->last_hot;
	p->last_hot = h->ts_ns;
	p->last_hot_where = where;
	if (after == 0)
		p->win[k].hot++;
	p->observed++;
	return 0;
}

bool sampling__is_tracer(const struct sampling *s, __u32 pid)
{
	const struct sampling_overhead *o = &s->overhead;

	return pid && o->measured && (pid == o->tracer_pid || pid == o->helper_pid);
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

	if (h->type == ISR_EV_SAMPLING)
		return on_sampling(b, (const void *)h);
	if (h->type == ISR_EV_PROC_EXIT && (((const struct isr_ev_proc_exit *)h)->flags & ISR_EXIT_GROUP_DEAD)) {
		p = proc_get(b, h->pid);
		if (!p)
			return -ENOMEM;
		p->exit = h->ts_ns;
		return 0;
	}
	if (h->type == ISR_EV_CUDA_CALL)
		return on_cuda_call(b, h);
	return 0;
}

/* Of [from, to), the time o's windows cover. They are in time order and
 * apart (the pass is): walked from the latest back to the first that ends
 * before `from`, since the summary asks at the end of each running spell,
 * about the recent past (a walk from the first window made each switch
 * cost every window of an hour's recording). */
static __u64 onoff_overlap(const struct onoff *o, __u64 from, __u64 to)
{
	__u64 on = 0;

	for (size_t i = o->n; i-- > 0 && o->w[i][1] > from;) {
		__u64 a = o->w[i][0] > from ? o->w[i][0] : from, z = o->w[i][1] < to ? o->w[i][1] : to;

		if (z > a)
			on += z - a;
	}
	return on;
}

/* The async copies' windows, when they were switched off at least once,
 * and each process's scale: the span of its CUDA calls over the part of it
 * the windows cover (the copies' budget switches them off only when they
 * come often, and then steadily enough for their rate inside the windows
 * to hold outside them). */
static int copies_finish(const struct sampling_builder *b, struct sampling *out)
{
	size_t i, n = 0;

	if (!b->copies_apart || !b->copies.switched)
		return 0;
	out->copies_sampled = true;
	out->copy_windows = b->copies.n;
	out->copies_on_ns = onoff_overlap(&b->copies, b->start, b->end);
	out->copies_coverage = b->end > b->start ? (double)out->copies_on_ns / (double)(b->end - b->start) : 1;
	out->copy_procs = calloc(b->count ? b->count : 1, sizeof(*out->copy_procs));
	if (!out->copy_procs)
		return -ENOMEM;
	for (i = 0; i < b->count; i++) {
		const struct proc_acc *p = &b->procs[i];
		__u64 end = p->last < UINT64_MAX ? p->last + 1 : p->last;
		__u64 on = p->copies && end > p->first ? onoff_overlap(&b->copies, p->first, end) : 0;
		double scale;

		if (!on)
			continue;
		/* the copies' floor windows keep them on 2% of the time at
		 * least: a larger scale is a damaged recording's */
		scale = (double)(end - p->first) / (double)on;
		out->copy_procs[n].pid = p->pid;
		out->copy_procs[n].observed = p->copies;
		out->copy_procs[n++].scale = scale < COPIES_MAX_SCALE ? scale : COPIES_MAX_SCALE;
	}
	out->copy_proc_count = n;
	return 0;
}

int sampling_builder__finish(struct sampling_builder *b, struct sampling *out)
{
	const struct window *w = b->w;
	size_t nwin = b->nwin, i;
	int e;

	memset(out, 0, sizeof(*out));
	out->overhead = b->s.overhead;
	/* the settings and windows, when the hot path was ever switched off */
	out->budget = b->s.budget;
	out->budget_pct = b->s.budget_pct;
	out->hit_cost_ns = b->s.hit_cost_ns;
	out->switch_ns_max = b->s.switch_ns_max;
	out->sampled = b->s.sampled;
	if (b->s.faults_sampled) {
		out->faults_sampled = true;
		out->fault_windows = b->faults.n;
		out->faults_on_ns = onoff_overlap(&b->faults, b->start, b->end);
		out->faults_coverage = b->end > b->start ? (double)out->faults_on_ns / (double)(b->end - b->start) : 1;
		out->fault_on = malloc((b->faults.n ? b->faults.n : 1) * sizeof(*out->fault_on));
		if (!out->fault_on)
			return -ENOMEM;
		memcpy(out->fault_on, b->faults.w, b->faults.n * sizeof(*out->fault_on));
	}
	out->copies_apart = b->copies_apart;
	e = copies_finish(b, out);
	if (e)
		return e;
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
		measure_slowdown(p, w, nwin, b->end, sp, &e);
		if (e)
			return e;
		if (estimate_by_calls(p, w, nwin, b->copies_apart && !b->copies.switched, sp, &sp->estimated)) {
			sp->estimator = SAMPLING_BY_CALLS;
			sp->slowdown = 1;
		} else {
			sp->estimated = estimate(p, w, nwin, b->end, sp->slowdown);
		}
		/* the calls made are at least those seen (some may have come only
		 * while the probes were being released) */
		if (sp->estimated < (double)sp->observed)
			sp->estimated = (double)sp->observed;
		sp->scale = sp->estimated / (double)sp->observed;
	}
	return 0;
}

void sampling_builder__free(struct sampling_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->count; i++) {
		free(b->procs[i].win);
		free(b->procs[i].bins);
	}
	free(b->procs);
	free(b->w);
	free(b->faults.w);
	free(b->copies.w);
	free(b);
}


__u64 sampling_builder__faults_on(const struct sampling_builder *b, __u64 from, __u64 to)
{
	if (from < b->start)
		from = b->start;
	if (to > b->end)
		to = b->end;
	if (to <= from)
		return 0;
	if (!b->s.faults_sampled)
		return to - from;	/* on from the start, never switched off yet */
	return onoff_overlap(&b->faults, from, to);
}

double sampling__faults_scale(const struct sampling *s, __u64 oncpu, __u64 oncpu_seen, __u64 faults)
{
	double traced = s->overhead.measured ? (double)faults * s->overhead.fault_ns : 0, eff;

	if (!s->faults_sampled || !oncpu_seen || oncpu <= oncpu_seen)
		return 1;
	eff = (double)oncpu_seen - traced;
	if (eff < (double)oncpu_seen / 5)
		eff = (double)oncpu_seen / 5;
	return 1 + (double)(oncpu - oncpu_seen) / eff;
}

const char *sampling_estimator__name(enum sampling_estimator e)
{
	return e == SAMPLING_BY_CALLS ? "calls" : "time";
}

const char *sampling_slowdown__name(enum sampling_slowdown s)
{
	switch (s) {
	case SAMPLING_SLOWDOWN_NONE:
		return "none";
	case SAMPLING_SLOWDOWN_APPLIED:
		return "applied";
	case SAMPLING_SLOWDOWN_IMPLAUSIBLE:
		return "implausible";
	default:
		return "not_measured";
	}
}

static const struct sampling_process *sampling__proc(const struct sampling *s, __u32 pid)
{
	for (size_t i = 0; i < s->proc_count; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

double sampling__scale(const struct sampling *s, __u32 pid)
{
	const struct sampling_process *p = sampling__proc(s, pid);

	return p ? p->scale : 1;
}

double sampling__copies_scale(const struct sampling *s, __u32 pid)
{
	if (!s->copies_apart)
		return sampling__scale(s, pid);
	for (size_t i = 0; i < s->copy_proc_count; i++)
		if (s->copy_procs[i].pid == pid)
			return s->copy_procs[i].scale;
	return 1;
}

double sampling__call_scale(const struct sampling *s, __u32 pid, __u16 func)
{
	if (!isr_cuda_is(func, ISR_CUDA_K_HOT))
		return 1;
	return isr_cuda_is(func, ISR_CUDA_K_ASYNC_COPY) ? sampling__copies_scale(s, pid) : sampling__scale(s, pid);
}

bool sampling__any(const struct sampling *s)
{
	return s->sampled || s->copies_sampled;
}

double sampling__slowdown(const struct sampling *s, __u32 pid)
{
	const struct sampling_process *p = sampling__proc(s, pid);

	return p && p->slowdown_status == SAMPLING_SLOWDOWN_APPLIED ? p->slowdown_measured : 1;
}

size_t sampling_builder__on_count(const struct sampling_builder *b)
{
	return b->s.sampled && b->nwin ? b->nwin : 1;
}

void sampling_builder__on(const struct sampling_builder *b, size_t i, __u64 *start, __u64 *end)
{
	if (!b->s.sampled || !b->nwin) {
		*start = b->start;
		*end = b->end;
		return;
	}
	*start = b->w[i].start;
	*end = b->w[i].end > b->w[i].start ? b->w[i].end : b->w[i].start;
}

void sampling__free(struct sampling *s)
{
	free(s->procs);
	s->procs = NULL;
	s->proc_count = 0;
	free(s->fault_on);
	s->fault_on = NULL;
	s->fault_windows = 0;
	free(s->copy_procs);
	s->copy_procs = NULL;
	s->copy_proc_count = 0;
}
