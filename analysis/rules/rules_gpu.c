// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Rules about the GPU waiting for the host: synchronizations that drain it,
 * launches that cost more than the kernels, copies from pageable memory,
 * and the idle time no other finding explains (gpu_idle, or host_bound when
 * the GPU's activity was not recorded).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "host_topo.h"
#include "htab.h"
#include "rules.h"

#define MIN_SHARE		0.05
/* gpu_idle's native time is the framework's per operation with this many
 * launches and at most this much of it a launch */
#define NATIVE_PER_OP_LAUNCHES	1000
#define NATIVE_PER_OP_NS	100000.0
#define IDLE_SHARE		0.10	/* gpu_idle: idle fraction of the observed time */
#define HOST_BOUND_SYNC_SHARE	0.10	/* host_bound: at most this much of its time waiting for the GPU */
#define HOST_BOUND_MIN_LAUNCHES	10
#define PAGEABLE_MIN_COPIES	10
#define PAGEABLE_MIN_BYTES	65536	/* a copy's, on average: smaller ones are no matter of bandwidth */
#define PAGEABLE_LINK_SHARE	0.80	/* of the PCIe link a pinned copy reaches */

#define CUPTI_MEMCPY_HTOD	1
#define CUPTI_MEMCPY_DTOH	2
#define CUPTI_MEMORY_PAGEABLE	1

/* The Python sites of the synchronization time, as evidence and prose. */
static int sync_sites(const struct rule_ctx *c, struct finding *f)
{
	json_t *arr;
	int err = 0;

	if (!c->py || !c->py->nsync)
		return 0;
	arr = json_array();
	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < c->py->nsync && i < 3; i++) {
		json_t *o = json_object();

		ev_set(o, "site", ev_text(c->py->sync_sites[i].site, sizeof(c->py->sync_sites[i].site)));
		ev_set(o, "calls", ev_u64(c->py->sync_sites[i].calls));
		ev_set(o, "seconds", ev_seconds(c->py->sync_sites[i].time_ns));
		json_array_append_new(arr, o);
	}
	ev_set(f->evidence, "python_sites", arr);
	err |= finding__say(f, " The synchronizations are called at `%s` (%llu calls, %.3f s blocked)",
			    c->py->sync_sites[0].site, (unsigned long long)c->py->sync_sites[0].calls,
			    rule_secs(c->py->sync_sites[0].time_ns));
	if (c->py->nsync > 1)
		err |= finding__say(f, " and %zu other line%s", c->py->nsync - 1, c->py->nsync > 2 ? "s" : "");
	err |= finding__say(f, ".");
	return err ? -ENOMEM : 0;
}

/* --- sync_stall ------------------------------------------------------------------ */

/* Without GPU activity: after a synchronization returns, the GPU has
 * nothing queued until the process submits work again (a launch, a copy, a
 * memset) — time it is certainly idle. It is the synchronization's for
 * what the syncing thread spent running and in CUDA calls (the host's work
 * the synchronization kept from overlapping the GPU's), at most the time
 * it waited for the GPU (the work it waited for is all removing it lets
 * overlap); its other time then (blocked on a producer, waiting for a CPU
 * or the GIL) has causes of its own. An async copy whose call blocked
 * (TL_COPY_BLOCKED_NS) waited for its stream like a synchronization: a copy
 * to pageable memory (`.item()`, `.cpu()`) returns when it is done.
 * Synchronizations with no submission between them wait for the same GPU
 * work: their waits add up. Per syncing thread: that time, the rest, and
 * the time it was blocked. The drains are told while the hot path was on
 * (the budget's windows: the submissions outside them are not seen): a
 * synchronization is judged when it returned, and the next submission was
 * seen, inside a window. Synchronizations are traced whatever the budget,
 * and so are the threads' states: one not judged is estimated at the mean
 * drain of the thread's judged ones, but at most what bounds its own drain,
 * the host work (running, in CUDA calls) its thread did from its return
 * to its next synchronization or the process's next submission seen, and
 * the time it waited for the GPU. A mean alone was wrong where the drains
 * are one phase's: the planted job's 20 drains of 40 ms fell inside a
 * window, and its busy phase's hundreds of synchronizations, each followed
 * at once by the next launches, were given 40 ms each (1.6 s for 0.8). */
struct drain {
	__u32 pid, tid;
	__u64 syncs, judged, groups, drains, drain_ns, other_ns;
	__u64 copy_waits, copy_wait_ns;	/* async copies that waited for the GPU */
	__u64 *bounds;			/* of each synchronization not judged */
	size_t nbounds, bounds_cap;
};
RULE_TALLY_KEY(struct drain, pid, tid);

struct sync_state {
	struct rule_ctx *c;
	struct drain *v;
	size_t n, cap;
	struct pending {
		__u32 pid, tid;
		__u64 ret, waited;	/* its return, and how long it waited for the GPU */
		__u64 nsyncs;		/* the synchronizations that waited for that work */
		struct tl_acc at_ret;	/* the syncing thread's totals at the return */
	} *p;
	size_t np, pcap;
	/* synchronizations not judged, whose bound is told at their thread's
	 * next synchronization or their process's next submission */
	struct pending *u;
	size_t nu, ucap;
	bool hot_on;		/* the hot path's probes are on (the budget's windows) */
	bool copies_on;		/* the async copies' probes are on (their own budget's windows) */
	int err;
};

/* The host work p's thread did from p's return to at, the bound of its
 * drain: running and in CUDA calls, at most the time since and what it
 * waited for. */
static __u64 drain_bound(struct sync_state *s, const struct pending *p, __u64 at)
{
	const struct tl_thread *st = timeline__thread_latest(s->c->tl, p->pid, p->tid);
	__u64 len = at > p->ret ? at - p->ret : 0, work = len;
	struct tl_acc now, in;

	if (st) {
		timeline__thread_acc(s->c->tl, st, at, &now);
		tl_acc__diff(&now, &p->at_ret, &in);
		work = in.ns[TL_RUNNING] + in.ns[TL_CUDA] + in.ns[TL_CUDA_MEM];
	}
	if (work > len)
		work = len;
	return work < p->waited ? work : p->waited;
}

/* The synchronizations not judged of pid (of its thread tid only, when tid
 * is not 0) get their bound at `at`. */
static void unjudged_close(struct sync_state *s, __u32 pid, __u32 tid, __u64 at)
{
	for (size_t i = 0; i < s->nu;) {
		struct pending *u = &s->u[i];
		struct drain *d;

		if (u->pid != pid || (tid && u->tid != tid)) {
			i++;
			continue;
		}
		d = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), u->pid, u->tid);
		if (!d || array__reserve(&d->bounds, &d->bounds_cap, d->nbounds + 1, sizeof(*d->bounds))) {
			s->err = -ENOMEM;
			return;
		}
		d->bounds[d->nbounds++] = drain_bound(s, u, at);
		s->u[i] = s->u[--s->nu];
	}
}

/* p (returned, its next submission not seen) is not judged: its bound
 * comes later. */
static void unjudged_open(struct sync_state *s, const struct pending *p)
{
	if (array__reserve(&s->u, &s->ucap, s->nu + 1, sizeof(*s->u))) {
		s->err = -ENOMEM;
		return;
	}
	s->u[s->nu++] = *p;
}

/* An event that gives the GPU work: the queue is no longer empty. */
static void sync_submitted(struct sync_state *s, const struct pass_event *e, __u32 pid)
{
	unjudged_close(s, pid, 0, e->start);
	if (s->err)
		return;
	for (size_t i = 0; i < s->np; i++) {
		struct pending *p = &s->p[i];
		struct drain *d;

		if (p->pid != pid || !p->ret)
			continue;
		d = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), p->pid, p->tid);
		if (!d) {
			s->err = -ENOMEM;
			return;
		}
		d->judged += p->nsyncs;
		d->groups++;
		if (e->start > p->ret) {
			/* only as much as the GPU work it waited for: the
			 * GPU would have run that meanwhile, then waited
			 * for the host all the same */
			__u64 len = e->start - p->ret, work = drain_bound(s, p, e->start);

			d->drains++;
			d->drain_ns += work;
			d->other_ns += len - work;
		}
		p->ret = 0;
	}
}

/* A call that waited for the GPU returned: the queue is empty from then
 * on. */
static void sync_returned(struct sync_state *s, const struct pass_event *e, const struct tl_thread *th,
			  const struct isr_ev_cuda_call *call, bool copy)
{
	struct pending *p = NULL;
	struct drain *d = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), th->pid, th->tid);

	if (!d) {
		s->err = -ENOMEM;
		return;
	}
	d->syncs++;
	if (copy) {
		d->copy_waits++;
		d->copy_wait_ns += e->end - e->start;
	}
	unjudged_close(s, th->pid, th->tid, e->start);
	if (s->err)
		return;
	for (size_t i = 0; i < s->np; i++)
		if (s->p[i].pid == th->pid)
			p = &s->p[i];
	if (!p) {
		if (s->np == s->pcap) {
			size_t cap = s->pcap ? 2 * s->pcap : 8;
			struct pending *n = reallocarray(s->p, cap, sizeof(*n));

			if (!n) {
				s->err = -ENOMEM;
				return;
			}
			s->p = n;
			s->pcap = cap;
		}
		p = &s->p[s->np++];
		p->pid = th->pid;
		p->ret = 0;
	}
	if (!s->hot_on || !s->copies_on) {
		struct pending u = { .pid = th->pid, .tid = th->tid, .ret = e->end, .waited = e->end - e->start,
				     .nsyncs = 1 };

		timeline__thread_acc(s->c->tl, th, e->start, &u.at_ret);
		u.at_ret.ns[tl_returned_cat(call)] += e->end - e->start;
		unjudged_open(s, &u);
		return;
	}
	if (e->end >= p->ret) {
		/* no submission since the last one returned: it waited for
		 * the same work */
		p->waited = (p->ret ? p->waited : 0) + (e->end - e->start);
		p->nsyncs = (p->ret ? p->nsyncs : 0) + 1;
		p->tid = th->tid;
		p->ret = e->end;
		/* at its entry, and inside it until its return */
		timeline__thread_acc(s->c->tl, th, e->start, &p->at_ret);
		p->at_ret.ns[tl_returned_cat(call)] += e->end - e->start;
	}
}

static void sync_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct sync_state *s = ctx;
	const struct isr_ev_cuda_call *call = (const void *)e->h;
	const struct isr_cuda_fn *fn;
	bool returned;

	if (s->err)
		return;
	if (e->h->type == ISR_EV_SAMPLING) {
		__u32 kind = ((const struct isr_ev_sampling *)e->h)->kind;

		/* a synchronization whose next submission may go unseen is
		 * not judged */
		if (kind == ISR_SAMPLING_OFF || kind == ISR_SAMPLING_ON || kind == ISR_SAMPLING_COPIES_OFF ||
		    kind == ISR_SAMPLING_COPIES_ON) {
			if (kind == ISR_SAMPLING_OFF || kind == ISR_SAMPLING_ON)
				s->hot_on = kind == ISR_SAMPLING_ON;
			else
				s->copies_on = kind == ISR_SAMPLING_COPIES_ON;
			for (size_t i = 0; i < s->np; i++) {
				if (s->p[i].ret)
					unjudged_open(s, &s->p[i]);
				s->p[i].ret = 0;
			}
		}
		return;
	}
	if (!th || e->h->type != ISR_EV_CUDA_CALL)
		return;
	fn = isr_cuda_fn(call->func);
	if (!fn)
		return;
	returned = call->flags & ISR_CUDA_RETURNED;
	if (fn->kind & (ISR_CUDA_K_LAUNCH | ISR_CUDA_K_SET | ISR_CUDA_K_COPY) && !(fn->kind & ISR_CUDA_K_SYNC))
		sync_submitted(s, e, th->pid);
	if (s->err || !returned)
		return;
	if (tl_returned_cat(call) == TL_SYNC)
		sync_returned(s, e, th, call, !(fn->kind & ISR_CUDA_K_SYNC));
}

static void *sync_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct sync_state *s = calloc(1, sizeof(*s));

	if (s) {
		s->c = c;
		s->hot_on = s->copies_on = true;
	}
	obs->event = sync_event;
	return s;
}

/* Claims ns of the running time of t (Python and native, in their
 * proportion). */
static int claim_running(struct rule_ctx *c, const struct attr_thread *t, const __u64 causes[CAUSE_MAX], __u64 ns)
{
	__u64 run = causes[CAUSE_PYTHON] + causes[CAUSE_NATIVE],
	      py = run ? (__u64)((double)ns * (double)causes[CAUSE_PYTHON] / (double)run) : 0;

	return rule_claim_part(c, t->pid, t->tid, CAUSE_PYTHON, py) ?:
	       rule_claim_part(c, t->pid, t->tid, CAUSE_NATIVE, ns - py);
}

/* What d's synchronizations not judged add: each at the mean drain of
 * the judged ones (per group of them that waited for the same work), at
 * most its bound; and, when the copies' own budget switched them off, the
 * copies that waited unseen, each at the mean (*n: how many were
 * estimated). 0 when none was judged: nothing to go by. */
static __u64 unjudged_estimate(const struct rule_ctx *c, const struct drain *d, double *n)
{
	double mean = d->groups ? (double)d->drain_ns / (double)d->groups : 0, est = 0, unseen = 0;

	*n = 0;
	if (!d->groups)
		return 0;
	for (size_t i = 0; i < d->nbounds; i++)
		est += (double)d->bounds[i] < mean ? (double)d->bounds[i] : mean;
	if (c->sum && c->sum->sampling.copies_apart)
		unseen = (double)d->copy_waits * (sampling__copies_scale(&c->sum->sampling, d->pid) - 1);
	*n = (double)d->nbounds + unseen;
	return (__u64)llround(est + unseen * mean);
}

static int sync_finish(void *state, struct rule_ctx *c)
{
	struct sync_state *s = state;
	const struct attr_thread *t;
	__u64 causes[CAUSE_MAX], base;

	if (s->err)
		return s->err;
	for (size_t i = 0; (t = rule_next_critical(c, &i, causes, &base));) {
		bool gpu = attribution__gpu_observed(c->attr, t->pid);
		__u64 cost, drain_ns = 0, drains = 0, syncs = 0, judged = 0;
		__u64 other_ns = 0, copy_waits = 0, copy_wait_ns = 0, est_ns = 0;
		double unjudged = 0;
		bool estimated;
		char who[96];
		struct finding *f;
		int err = 0;

		for (size_t k = 0; k < s->n; k++)
			if (s->v[k].pid == t->pid && s->v[k].tid == t->tid) {
				drain_ns = s->v[k].drain_ns;
				other_ns = s->v[k].other_ns;
				drains = s->v[k].drains;
				syncs = s->v[k].syncs;
				judged = s->v[k].judged;
				copy_waits = s->v[k].copy_waits;
				copy_wait_ns = s->v[k].copy_wait_ns;
				est_ns = unjudged_estimate(c, &s->v[k], &unjudged);
			}
		estimated = !gpu && est_ns;
		cost = gpu ? causes[CAUSE_SYNC_DRAIN] + causes[CAUSE_SYNC] : drain_ns + est_ns;
		if (!rule_matters(c, cost) || !base || (double)cost < MIN_SHARE * (double)base)
			continue;
		f = rule_thread_finding(c, "sync_stall", t, cost, base);
		if (!f || rule_claim(c, t->pid, t->tid, CAUSE_SYNC_DRAIN) || (gpu && rule_claim(c, t->pid, t->tid, CAUSE_SYNC)))
			return -ENOMEM;
		/* without GPU activity the drain is running time of the thread:
		 * host_bound must not count it again */
		if (!gpu && claim_running(c, t, causes, cost))
			return -ENOMEM;
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		ev_set(f->evidence, "blocked_s", ev_seconds(t->window.ns[TL_SYNC]));
		ev_set(f->evidence, "copy_wait_s", ev_seconds(copy_wait_ns));
		ev_set(f->evidence, "synchronizations", ev_u64(syncs));
		ev_set(f->evidence, "copy_waits", ev_u64(copy_waits));
		if (gpu) {
			ev_set(f->evidence, "gpu_idle_after_sync_s", ev_seconds(causes[CAUSE_SYNC_DRAIN]));
			ev_set(f->evidence, "gpu_idle_in_other_sync_s", ev_seconds(causes[CAUSE_SYNC]));
			err |= finding__say(f, "The GPU sat idle %.3f s (%.0f%% of the time it was observed) after "
					       "synchronizations drained its queue, until new work came", rule_secs(cost),
					    rule_pct(cost, base));
			err |= finding__say(f, "; %s was blocked %.3f s in synchronizations in all.", who,
					    rule_secs(t->window.ns[TL_SYNC]));
		} else {
			ev_set(f->evidence, "drains", ev_u64(drains));
			ev_set(f->evidence, "idle_after_sync_s", ev_seconds(cost));
			ev_set(f->evidence, "idle_after_sync_seen_s", ev_seconds(drain_ns));
			ev_set(f->evidence, "idle_after_sync_other_s", ev_seconds(other_ns));
			ev_set(f->evidence, "estimated", json_boolean(estimated));
			ev_set(f->evidence, "synchronizations_judged", ev_u64(judged));
			ev_set(f->evidence, "synchronizations_estimated", ev_u64(llround(unjudged)));
			ev_set(f->evidence, "idle_after_sync_estimated_s", ev_seconds(est_ns));
			err |= finding__say(f, "After %llu of %llu synchronizations%s by %s the GPU had an empty queue "
					       "while the thread did the host's work for the next launches, %s%.3f s in all "
					       "(%.0f%% of its time), work that could have overlapped the GPU's. The thread "
					       "was blocked %.3f s in synchronizations",
					    (unsigned long long)drains, (unsigned long long)(estimated ? judged : syncs),
					    estimated ? " judged" : "", who, estimated ? "≈" : "",
					    rule_secs(cost), rule_pct(cost, base), rule_secs(t->window.ns[TL_SYNC]));
			if (copy_waits)
				err |= finding__say(f, " (%.3f s of it in %llu async copies that waited for the GPU, as a "
						       "copy to pageable memory does: `.item()`, `.cpu()`)",
						    rule_secs(copy_wait_ns), (unsigned long long)copy_waits);
			err |= finding__say(f, ".");
			if (estimated)
				err |= finding__say(f, " The overhead budget let the launches be traced in windows: the "
						       "drains were told after the %llu synchronizations judged inside them; "
						       "the other %s%llu are estimated (≈%.3f s) at their mean drain, but none "
						       "at more than the host work its thread did before its next "
						       "synchronization or submission.",
						    (unsigned long long)judged, unjudged != llround(unjudged) ? "≈" : "",
						    (unsigned long long)llround(unjudged), rule_secs(est_ns));
			if (other_ns)
				err |= finding__say(f, " (%.3f s more of empty queue after synchronizations is not "
						       "theirs: the host's work beyond the GPU work they waited for, or the "
						       "thread blocked, waiting for a CPU or the GIL.)", rule_secs(other_ns));
		}
		err |= sync_sites(c, f);
		err |= finding__suggest(f, "Synchronize less often (`.item()`, `.cpu()`, `torch.cuda.synchronize()`, "
					   "printing a CUDA tensor in the loop all wait for the GPU), or queue the next "
					   "step's work before waiting, so the GPU always has work.");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

static void sync_free(void *state)
{
	struct sync_state *s = state;

	if (s) {
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i].bounds);
		free(s->v);
		free(s->p);
		free(s->u);
	}
	free(s);
}

const struct rule rule_sync_stall = {
	.id = "sync_stall",
	.title = "GPU drained by synchronizations",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_SYNC_DRAIN) | RULE_CAUSE(CAUSE_SYNC) | RULE_CAUSE(CAUSE_PYTHON) | RULE_CAUSE(CAUSE_NATIVE),
	.start = sync_start,
	.finish = sync_finish,
	.free = sync_free,
};

/* --- GPU windows --------------------------------------------------------------- */

/* A device observed in GPU windows (--gpu-windows) saw its idle time only
 * inside them: a cost over the whole run is that times the summary's
 * estimate of idle over the span against idle in the windows (the busy
 * time extrapolated per launch, gpu_summary.c); span / observed when the
 * summary has no estimate for it. */
static double window_scale(const struct rule_ctx *c, const struct attr_device *d)
{
	if (!d->estimated)
		return 1.0;
	for (size_t i = 0; i < c->sum->gpu_device_count; i++)
		if (c->sum->gpu_devices[i].pid == d->pid && c->sum->gpu_devices[i].device == d->device &&
		    c->sum->gpu_devices[i].estimated)
			return c->sum->gpu_devices[i].idle_scale;
	return d->observed_ns ? (double)d->span_ns / (double)d->observed_ns : 1.0;
}

/* Says that f's cost is extrapolated from the windows, when it is. */
static int window_evidence(struct finding *f, const struct attr_device *d)
{
	if (!d->estimated)
		return 0;
	ev_set(f->evidence, "estimated", json_true());
	ev_set(f->evidence, "span_s", ev_seconds(d->span_ns));
	return finding__say(f, " GPU activity was collected in windows covering %.0f%% of the process's %.3f s: the "
			       "cost (≈) is extrapolated from them.", rule_pct(d->observed_ns, d->span_ns), rule_secs(d->span_ns));
}

/* --- launch_bound ----------------------------------------------------------------- */

static int launch_finish(void *state, struct rule_ctx *c)
{
	(void)state;
	if (!rule_gpu_recorded(c))
		return rule_any_launcher(c) ? findings__not_judged(c->out, "launch_bound", "--gpu (kernel durations come from CUPTI)") : 0;
	for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
		const struct attr_device *d = attribution__device_at(c->attr, i);
		__u64 cost = d->idle_ns[CAUSE_LAUNCH_OVERHEAD], kernels = 0, kernel_ns = 0;
		struct finding *f;
		int err = 0;

		if (!rule_matters(c, cost) || (double)cost < IDLE_SHARE * (double)d->active_ns)
			continue;
		for (size_t k = 0; k < c->sum->gpu_kernel_count; k++)
			if (c->sum->gpu_kernels[k].pid == d->pid) {
				kernels += c->sum->gpu_kernels[k].count;
				kernel_ns += c->sum->gpu_kernels[k].total_ns;
			}
		f = findings__add(c->out, "launch_bound", rule_severity(c, cost), rule_secs(cost) * window_scale(c, d),
				  d->pid, 0);
		if (!f || rule_claim(c, d->pid, 0, CAUSE_LAUNCH_OVERHEAD))
			return -ENOMEM;
		ev_set(f->evidence, "pid", ev_u64(d->pid));
		ev_set(f->evidence, "device", ev_u64(d->device));
		ev_set(f->evidence, "cost_s", ev_seconds(cost));
		ev_set(f->evidence, "observed_s", ev_seconds(d->observed_ns));
		ev_set(f->evidence, "kernels", ev_u64(kernels));
		ev_set(f->evidence, "mean_kernel_us", json_real(kernels ? (double)kernel_ns / (double)kernels / 1e3 : 0));
		ev_set(f->evidence, "short_gap_us", ev_u64(ATTR_SHORT_GAP_NS / 1000));
		err |= finding__say(f, "GPU %u of pid %u was idle %.3f s (%.0f%% of %.3f s observed) in gaps shorter than "
				       "%llu us between kernels: %llu kernels ran %.1f us on average (%.0f launched a "
				       "second) — launching each took the host longer than running it.",
				    d->device, d->pid, rule_secs(cost), rule_pct(cost, d->observed_ns), rule_secs(d->observed_ns),
				    ATTR_SHORT_GAP_NS / 1000, (unsigned long long)kernels,
				    kernels ? (double)kernel_ns / (double)kernels / 1e3 : 0,
				    d->observed_ns ? (double)kernels / rule_secs(d->observed_ns) : 0);
		err |= window_evidence(f, d);
		err |= finding__suggest(f, "Launch fewer, larger kernels: capture the step in a CUDA graph "
					   "(torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")), fuse small "
					   "operations (torch.compile), or batch more work per call.");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

const struct rule rule_launch_bound = {
	.id = "launch_bound",
	.title = "Launch-bound: kernels shorter than their launch",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_LAUNCH_OVERHEAD),
	.finish = launch_finish,
};

/* --- pageable_memcpy --------------------------------------------------------------- */

/* Copies between the GPU and pageable host memory. With GPU activity the
 * copy records say so. Without, each copy's host memory is judged in turn
 * by what decides it:
 *  1. pinned memory the recording knows: pinned allocations made while
 *     recording, host memory the program registered (page-locked) while
 *     recording, mappings of the NVIDIA device files in the memory map;
 *  2. for an async copy (its return is probed), how long its call blocked,
 *     less the time its thread waited for a CPU inside it: the driver
 *     stages an async copy from pageable memory through a pinned buffer
 *     before it returns (from the GPU: until the copy is done), while one
 *     from pinned memory returns in microseconds. A call that blocked at
 *     least TL_COPY_BLOCKED_NS and its bytes at PAGEABLE_STAGING_BPS was
 *     staged: pageable. One that returned sooner than its bytes could have
 *     been staged was not: pinned (memory registered before the recording
 *     began). A small copy that returned at once decides nothing (the
 *     driver may stage a small pageable copy in its command queue). A
 *     buffer is pinned or not for its life, while one call's blocking is
 *     a noisy measure of it (interrupts, a virtual machine's stolen time
 *     and a loaded host stall a thread without a context switch): the
 *     blocked calls on a host address at least BUFFER_QUICK_RATIO times
 *     as many of whose calls returned at once are judged as those were
 *     (host_stalls);
 *  3. the memory map: the driver's pinned allocations (cuMemHostAlloc,
 *     torch's pin_memory) are shared mappings of /dev/zero;
 *  4. memory of a process whose every pinning the recording saw (launched)
 *     is pageable; the rest is not known. */
#define PAGEABLE_STAGING_BPS	64e9	/* no staged copy goes faster: a PCIe 5.0 x16 link carries 63 GB/s */

enum pin { PIN_NONE, PIN_KNOWN, PIN_SHARED };

struct region {
	__u32 pid;
	bool shared;	/* a shared mapping of /dev/zero: the driver's pinned allocations look so */
	__u64 lo, hi;
};

struct copy_class {
	__u64 copies, bytes, ns;	/* ns: of the timed ones */
	__u64 timed;			/* with a known duration */
	__u64 htod, dtoh;
};

#define BUFFER_QUICK_RATIO	4

struct copy_tally {
	__u32 pid;
	struct copy_class pageable, unknown;
	__u64 by_blocking;		/* pageable copies told by their call's blocking */
	__u64 pinned_by_return;		/* async copies told pinned by returning at once */
	__u64 host_stalls;		/* blocked calls judged as their buffer's quick ones */
	__u64 pinned_bytes, pinned_ns;	/* pinned synchronous copies: the bandwidth reference */
};

/* The timed pageable copies of one thread: pinning saves its time in them. */
struct copy_thread {
	__u32 pid, tid;
	__u64 ns, bytes;
};
RULE_TALLY_KEY(struct copy_thread, pid, tid);

/* An async copy judged at its end, when its thread's time waiting for a
 * CPU inside it is known. */
struct copy_pending {
	const struct tl_thread *th;
	const struct isr_cuda_fn *fn;
	__u32 pid, tid;
	__u64 start, end, host, bytes;
	__u64 cpu_wait_at_start;
};

/* The async copies of one host address in one process, by how their
 * calls returned: blocked (staged, or the host stalled the thread) or at
 * once. */
struct copy_buffer {
	__u32 pid;
	__u64 host;
	__u64 blocked, quick;
};

static __u64 buffer_hash(const void *e)
{
	const struct copy_buffer *b = e;

	return hash__mix(hash__u64(b->pid), b->host);
}

static bool buffer_equal(const void *a, const void *b)
{
	const struct copy_buffer *x = a, *y = b;

	return x->pid == y->pid && x->host == y->host;
}

struct copy_state {
	struct rule_ctx *c;
	double link_bps;	/* the GPUs' PCIe link, per direction (host_topo.h); 0: unknown */
	struct region *regions;
	size_t nregions, regions_cap;
	struct copy_tally *v;
	size_t n, cap;
	struct copy_thread *threads;
	size_t nthreads, threads_cap;
	struct copy_pending *pending;
	size_t npending, pending_cap;
	struct copy_pending *blocked;	/* judged by blocking, decided at the end (struct copy_buffer) */
	size_t nblocked, blocked_cap;
	struct htab buffers;		/* struct copy_buffer */
	bool maps_read;
	bool gpu_records;
	int err;
};

static struct copy_tally *tally_get(struct copy_state *s, __u32 pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return &s->v[i];
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct copy_tally *n = reallocarray(s->v, cap, sizeof(*n));

		if (!n)
			return NULL;
		s->v = n;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].pid = pid;
	return &s->v[s->n++];
}

static int region_add(struct copy_state *s, __u32 pid, __u64 lo, __u64 hi, bool shared)
{
	if (s->nregions == s->regions_cap) {
		size_t cap = s->regions_cap ? 2 * s->regions_cap : 32;
		struct region *n;

		if (cap > (1u << 20))
			return 0;
		n = reallocarray(s->regions, cap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->regions = n;
		s->regions_cap = cap;
	}
	s->regions[s->nregions++] = (struct region){ pid, shared, lo, hi };
	return 0;
}

static void region_del(struct copy_state *s, __u32 pid, __u64 lo)
{
	for (size_t i = 0; i < s->nregions; i++)
		if (s->regions[i].pid == pid && s->regions[i].lo == lo) {
			s->regions[i] = s->regions[--s->nregions];
			return;
		}
}

/* What the recording knows of addr's memory in pid: pinned by a call or a
 * device mapping (PIN_KNOWN) before a shared mapping of /dev/zero. */
static enum pin pinned(const struct copy_state *s, __u32 pid, __u64 addr)
{
	enum pin p = PIN_NONE;

	for (size_t i = 0; i < s->nregions; i++)
		if (s->regions[i].pid == pid && addr >= s->regions[i].lo && addr < s->regions[i].hi) {
			if (!s->regions[i].shared)
				return PIN_KNOWN;
			p = PIN_SHARED;
		}
	return p;
}

/* In each process's recorded memory map (read when the recording began
 * or the process appeared: what it maps later is not in it, but pinned
 * memory it allocates or registers later is seen as calls): mappings of
 * /dev/nvidia*, and shared mappings of /dev/zero, which is how the driver's
 * pinned allocations (cudaHostAlloc) show ("rw-s ... /dev/zero (deleted)";
 * pageable memory and memory registered with cudaHostRegister are private
 * anonymous). */
static int read_maps(struct copy_state *s)
{
	const struct recording *r = s->c->r;

	for (size_t i = 0; i < r->process_count; i++) {
		const char *m = r->processes[i].maps;

		while (m && *m) {
			const char *nl = strchr(m, '\n');
			size_t len = nl ? (size_t)(nl - m) : strlen(m);
			unsigned long long lo, hi;
			char perms[5];
			bool nv = memmem(m, len, "/dev/nvidia", 11), zero = memmem(m, len, "/dev/zero", 9);

			if ((nv || zero) && sscanf(m, "%llx-%llx %4s", &lo, &hi, perms) == 3 &&
			    (nv || perms[3] == 's') && region_add(s, r->processes[i].pid, lo, hi, !nv))
				return -ENOMEM;
			m += len + (nl ? 1 : 0);
		}
	}
	return 0;
}

static void copy_gpu_record(struct copy_state *s, const struct pass_event *e)
{
	const struct isr_ev_gpu_memcpy *m = (const void *)e->h;
	struct copy_tally *t;
	bool pageable;

	if (m->copy_kind != CUPTI_MEMCPY_HTOD && m->copy_kind != CUPTI_MEMCPY_DTOH)
		return;
	if (!s->gpu_records) {
		/* the records say which copies were pageable: what the calls
		 * before the first one were judged by goes (counted twice, the
		 * planted job's 100 pageable copies were 183) */
		for (size_t i = 0; i < s->n; i++)
			s->v[i] = (struct copy_tally){ .pid = s->v[i].pid };
		s->nthreads = 0;
		s->npending = 0;
		s->nblocked = 0;
		htab__free(&s->buffers);
	}
	s->gpu_records = true;
	t = tally_get(s, m->hdr.pid);
	if (!t) {
		s->err = -ENOMEM;
		return;
	}
	pageable = m->copy_kind == CUPTI_MEMCPY_HTOD ? m->src_kind == CUPTI_MEMORY_PAGEABLE
						      : m->dst_kind == CUPTI_MEMORY_PAGEABLE;
	if (!pageable) {
		t->pinned_bytes += m->bytes;
		t->pinned_ns += e->end - e->start;
		return;
	}
	t->pageable.copies++;
	t->pageable.timed++;
	t->pageable.bytes += m->bytes;
	t->pageable.ns += e->end - e->start;
	if (m->copy_kind == CUPTI_MEMCPY_HTOD)
		t->pageable.htod++;
	else
		t->pageable.dtoh++;
}

/* Whether every pinned allocation and registration of pid's memory is in
 * the recording: a process the recorder launched or that exec'd since, or
 * a child forked since by one of those (it inherits its parent's memory).
 * A process attached to (-p, or its running descendants) may have pinned
 * memory before. */
static bool pinned_all_known(const struct recording *r, __u32 pid)
{
	for (int depth = 0; depth < 64; depth++) {
		const struct rec_process *p = NULL;

		for (size_t i = 0; i < r->process_count && !p; i++)
			if (r->processes[i].pid == pid)
				p = &r->processes[i];
		if (!p)
			return false;
		if (p->origin == ISR_ORIGIN_LAUNCHED || p->origin == ISR_ORIGIN_EXEC)
			return true;
		if (p->origin != ISR_ORIGIN_CHILD || p->ppid == pid)
			return false;
		pid = p->ppid;
	}
	return false;
}

/* Counts a copy that is not known pinned: pageable or not known. */
static void copy_count(struct copy_state *s, struct copy_tally *t, const struct isr_cuda_fn *fn, __u32 tid,
		       bool pageable, __u64 bytes, bool timed, __u64 ns)
{
	struct copy_class *k = pageable ? &t->pageable : &t->unknown;

	k->copies++;
	k->bytes += bytes;
	if (fn->aux == ISR_COPY_HTOD)
		k->htod++;
	else
		k->dtoh++;
	if (!timed)
		return;
	k->timed++;
	k->ns += ns;
	if (pageable) {
		struct copy_thread *th = rule_tally_of(&s->threads, &s->nthreads, &s->threads_cap, sizeof(*s->threads),
						       t->pid, tid);

		if (!th) {
			s->err = -ENOMEM;
			return;
		}
		th->ns += ns;
		th->bytes += bytes;
	}
}

/* A copy that neither a call nor its blocking decided: by the memory map,
 * then by whether the recording saw every pinning of its process. */
static void copy_by_map(struct copy_state *s, struct copy_tally *t, const struct isr_cuda_fn *fn, __u32 tid,
			enum pin pin, __u64 bytes, bool timed, __u64 ns)
{
	if (pin == PIN_SHARED)
		return;
	copy_count(s, t, fn, tid, pinned_all_known(s->c->r, t->pid), bytes, timed, ns);
}

static __u64 staged_ns(__u64 bytes)
{
	return (__u64)((double)bytes / PAGEABLE_STAGING_BPS * 1e9);
}

/* Counts an async copy whose call returned at once (step 2 above). */
static void copy_quick(struct copy_state *s, struct copy_tally *t, const struct copy_pending *p)
{
	if (staged_ns(p->bytes) >= TL_COPY_BLOCKED_NS)
		t->pinned_by_return++;
	else
		copy_by_map(s, t, p->fn, p->tid, pinned(s, p->pid, p->host), p->bytes, true, p->end - p->start);
}

/* Judges an async copy by how long its call blocked (step 2 above): one
 * that returned at once is counted now; one that blocked when its buffer's
 * calls are all in (copy_blocked_judge). */
static void copy_judge(struct copy_state *s, const struct copy_pending *p)
{
	struct copy_tally *t = tally_get(s, p->pid);
	struct copy_buffer key = { .pid = p->pid, .host = p->host }, *b;
	__u64 dur = p->end - p->start, blocked = dur;
	struct tl_acc at_end;
	bool added;

	if (!t || !(b = htab__insert(&s->buffers, &key, &added))) {
		s->err = -ENOMEM;
		return;
	}
	timeline__thread_acc(s->c->tl, p->th, p->end, &at_end);
	if (at_end.cpu_wait_ns > p->cpu_wait_at_start)
		blocked -= at_end.cpu_wait_ns - p->cpu_wait_at_start < dur ? at_end.cpu_wait_ns - p->cpu_wait_at_start
									   : dur;
	if (blocked < TL_COPY_BLOCKED_NS || blocked < staged_ns(p->bytes)) {
		b->quick++;
		copy_quick(s, t, p);
		return;
	}
	b->blocked++;
	if (array__reserve(&s->blocked, &s->blocked_cap, s->nblocked + 1, sizeof(*s->blocked))) {
		s->err = -ENOMEM;
		return;
	}
	s->blocked[s->nblocked++] = *p;
}

/* The copies whose calls blocked: staged (pageable), or, on a buffer whose
 * calls returned at once BUFFER_QUICK_RATIO times as often, stalled by the
 * host and judged as the buffer's other copies. */
static void copy_blocked_judge(struct copy_state *s)
{
	for (size_t i = 0; i < s->nblocked && !s->err; i++) {
		const struct copy_pending *p = &s->blocked[i];
		struct copy_buffer key = { .pid = p->pid, .host = p->host };
		const struct copy_buffer *b = htab__find(&s->buffers, &key);
		struct copy_tally *t = tally_get(s, p->pid);

		if (!t) {
			s->err = -ENOMEM;
		} else if (b && b->quick >= BUFFER_QUICK_RATIO * b->blocked) {
			t->host_stalls++;
			copy_quick(s, t, p);
		} else {
			t->by_blocking++;
			copy_count(s, t, p->fn, p->tid, true, p->bytes, true, p->end - p->start);
		}
	}
	s->nblocked = 0;
}

/* Judges the async copies that ended by ts (all of them: ~0). */
static void copies_ended(struct copy_state *s, __u64 ts)
{
	size_t k = 0;

	for (size_t i = 0; i < s->npending; i++) {
		if (s->pending[i].end <= ts && !s->err)
			copy_judge(s, &s->pending[i]);
		else
			s->pending[k++] = s->pending[i];
	}
	s->npending = s->err ? 0 : k;
}

static void copy_wait_end(struct copy_state *s, const struct pass_event *e, const struct tl_thread *th,
			  const struct isr_cuda_fn *fn, __u64 host)
{
	const struct isr_ev_cuda_call *call = (const void *)e->h;
	struct copy_pending *p;
	struct tl_acc at_start;

	if (s->npending == s->pending_cap) {
		size_t cap = s->pending_cap ? 2 * s->pending_cap : 8;
		struct copy_pending *n = reallocarray(s->pending, cap, sizeof(*n));

		if (!n) {
			s->err = -ENOMEM;
			return;
		}
		s->pending = n;
		s->pending_cap = cap;
	}
	timeline__thread_acc(s->c->tl, th, e->start, &at_start);
	p = &s->pending[s->npending++];
	*p = (struct copy_pending){ th, fn, call->hdr.pid, call->hdr.tid, e->start, e->end, host, call->args[2],
				    at_start.cpu_wait_ns };
}

static void copy_call(struct copy_state *s, const struct pass_event *e, const struct tl_thread *th,
		      const struct isr_ev_cuda_call *call, const struct isr_cuda_fn *fn)
{
	bool ok = !(call->flags & ISR_CUDA_RETURNED) || call->status == 0;
	bool timed = call->flags & ISR_CUDA_RETURNED;
	struct copy_tally *t;
	enum pin pin;
	__u64 host;

	/* pinned by the driver (cuMemHostAlloc, cuMemAllocHost) or
	 * page-locked where the program allocated it (cuMemHostRegister) */
	if (((fn->family == ISR_CUDA_FAM_ALLOC && fn->aux == ISR_ALLOC_HOST) || fn->family == ISR_CUDA_FAM_REGISTER) &&
	    ok && timed) {
		s->err = region_add(s, call->hdr.pid, call->args[0], call->args[0] + call->args[1], false);
		return;
	}
	if (((fn->family == ISR_CUDA_FAM_FREE && fn->aux == ISR_ALLOC_HOST) || fn->family == ISR_CUDA_FAM_UNREGISTER) &&
	    ok) {
		region_del(s, call->hdr.pid, call->args[0]);
		return;
	}
	if (!(fn->kind & ISR_CUDA_K_COPY) ||
	    (fn->aux != ISR_COPY_HTOD && fn->aux != ISR_COPY_DTOH) || s->gpu_records)
		return;
	host = fn->aux == ISR_COPY_HTOD ? call->args[1] : call->args[0];
	t = tally_get(s, call->hdr.pid);
	if (!t) {
		s->err = -ENOMEM;
		return;
	}
	pin = pinned(s, call->hdr.pid, host);
	if (pin == PIN_KNOWN) {
		/* a synchronous copy's call lasts its transfer: the bandwidth
		 * of a pinned copy here (an async one returns before) */
		if (timed && (fn->kind & ISR_CUDA_K_SYNC)) {
			t->pinned_bytes += call->args[2];
			t->pinned_ns += e->end - e->start;
		}
		return;
	}
	if (timed && !(fn->kind & ISR_CUDA_K_SYNC) && th)
		copy_wait_end(s, e, th, fn, host);
	else
		copy_by_map(s, t, fn, call->hdr.tid, pin, call->args[2], timed, e->end - e->start);
}

static void copy_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct copy_state *s = ctx;
	const struct isr_ev_cuda_call *call = (const void *)e->h;
	const struct isr_cuda_fn *fn;

	if (s->err)
		return;
	if (!s->maps_read) {
		s->maps_read = true;
		s->err = read_maps(s);
	}
	if (s->npending)
		copies_ended(s, e->start);
	if (e->h->type == ISR_EV_GPU_MEMCPY && !e->unmapped) {
		copy_gpu_record(s, e);
		return;
	}
	if (e->h->type != ISR_EV_CUDA_CALL)
		return;
	fn = isr_cuda_fn(call->func);
	if (fn)
		copy_call(s, e, th, call, fn);
}

static void *copy_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct copy_state *s = calloc(1, sizeof(*s));

	struct host_topo topo;
	bool ambiguous;
	__u32 mts;
	__u16 width;

	if (!s)
		return NULL;
	s->c = c;
	htab__init(&s->buffers, sizeof(struct copy_buffer), buffer_hash, buffer_equal);
	if (!host_topo__decode(&c->r->host, &topo))
		s->link_bps = host_topo__link_bytes_per_s(&topo, &mts, &width, &ambiguous);
	host_topo__free(&topo);
	obs->event = copy_event;
	return s;
}

/* Without GPU activity, what pinning would save is time the copying
 * threads spent inside the copy calls (CAUSE_SYNC for a copy that blocked,
 * tl_returned_cat; else CAUSE_CUDA): claimed, so that no later rule counts
 * it again; when the hot path was sampled, the copies outside its windows
 * were not seen as calls, and the rest of the extrapolated cost is claimed
 * from their running time. */
static int copy_claim(struct rule_ctx *c, const struct copy_state *s, __u32 pid, double pinned_bw, double scale)
{
	static const enum cause in_calls[] = { CAUSE_SYNC, CAUSE_CUDA }, running[] = { CAUSE_NATIVE, CAUSE_PYTHON };

	for (size_t i = 0; i < s->nthreads; i++) {
		const struct copy_thread *ct = &s->threads[i];
		const struct attr_thread *t = NULL;
		__u64 causes[CAUSE_MAX], seen, want, part;
		double saved;

		if (ct->pid != pid)
			continue;
		for (size_t k = 0; k < attribution__thread_count(c->attr) && !t; k++) {
			const struct attr_thread *a = attribution__thread_at(c->attr, k);

			if (a->pid == ct->pid && a->tid == ct->tid)
				t = a;
		}
		saved = (double)ct->ns - (double)ct->bytes / pinned_bw;
		if (!t || saved <= 0)
			continue;
		rule_thread_causes(c, t, causes);
		want = (__u64)(saved * scale);
		seen = (__u64)saved;
		for (size_t k = 0; k < sizeof(in_calls) / sizeof(in_calls[0]) && seen; k++) {
			part = rule_unclaimed(c, t, causes, in_calls[k]);
			part = part < seen ? part : seen;
			if (rule_claim_part(c, pid, ct->tid, in_calls[k], part))
				return -ENOMEM;
			seen -= part;
			want -= part < want ? part : want;
		}
		for (size_t k = 0; k < sizeof(running) / sizeof(running[0]) && want; k++) {
			part = rule_unclaimed(c, t, causes, running[k]);
			part = part < want ? part : want;
			if (rule_claim_part(c, pid, ct->tid, running[k], part))
				return -ENOMEM;
			want -= part;
		}
	}
	return 0;
}

/* What pid's copies seen stand for: with GPU activity the copy records,
 * every one while it is collected (in GPU windows, the device's span over
 * its time observed); without, the calls the copies' budget
 * let be probed (sampling__copies_scale). The hot path's sampling is not
 * the copies' (a launch-heavy phase switched it off: the planted job's
 * 100 copies, all in CUPTI's records, were scaled to 150). */
static double copy_scale(const struct rule_ctx *c, const struct copy_state *s, __u32 pid)
{
	if (s->gpu_records) {
		for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
			const struct attr_device *d = attribution__device_at(c->attr, i);

			if (d->pid == pid && d->estimated && d->observed_ns)
				return (double)d->span_ns / (double)d->observed_ns;
		}
		return 1;
	}
	return c->sum ? sampling__copies_scale(&c->sum->sampling, pid) : 1;
}

static int copy_finish(void *state, struct rule_ctx *c)
{
	struct copy_state *s = state;

	copies_ended(s, ~0ULL);
	copy_blocked_judge(s);
	if (s->err)
		return s->err;
	for (size_t i = 0; i < s->n; i++) {
		const struct copy_tally *t = &s->v[i];
		bool known = t->pageable.copies >= PAGEABLE_MIN_COPIES &&
			     t->pageable.bytes >= (__u64)PAGEABLE_MIN_BYTES * t->pageable.copies;
		const struct copy_class *k = known ? &t->pageable : &t->unknown;
		double pinned_bw = t->pinned_ns ? (double)t->pinned_bytes / (double)t->pinned_ns : 0;
		double pageable_bw = k->ns ? (double)k->bytes / (double)k->ns : 0;
		double scale = copy_scale(c, s, t->pid);
		__u64 cost = 0;
		struct finding *f;
		int err = 0;

		if (k->copies < PAGEABLE_MIN_COPIES || k->bytes < (__u64)PAGEABLE_MIN_BYTES * k->copies)
			continue;
		/* the time pinned memory would have saved: at the pinned
		 * copies' bandwidth, when the recording has pinned copies, or
		 * at what the PCIe link carries */
		bool from_link = pinned_bw <= pageable_bw && s->link_bps * PAGEABLE_LINK_SHARE > pageable_bw * 1e9;

		if (from_link)
			pinned_bw = s->link_bps * PAGEABLE_LINK_SHARE / 1e9;
		if (pinned_bw > pageable_bw && pageable_bw > 0)
			cost = (__u64)(((double)k->ns - (double)k->bytes * ((double)k->timed / (double)k->copies) / pinned_bw) *
				       scale);
		f = findings__add(c->out, "pageable_memcpy", rule_severity(c, cost), rule_secs(cost), t->pid, 0);
		if (!f)
			return -ENOMEM;
		if (known && !s->gpu_records && cost && copy_claim(c, s, t->pid, pinned_bw, scale))
			return -ENOMEM;
		ev_set(f->evidence, "pid", ev_u64(t->pid));
		ev_set(f->evidence, "copies", ev_u64(llround((double)k->copies * scale)));
		ev_set(f->evidence, "host_to_device", ev_u64(llround((double)k->htod * scale)));
		ev_set(f->evidence, "device_to_host", ev_u64(llround((double)k->dtoh * scale)));
		ev_set(f->evidence, "bytes", ev_u64(llround((double)k->bytes * scale)));
		ev_set(f->evidence, "timed_copies", ev_u64(llround((double)k->timed * scale)));
		ev_set(f->evidence, "copy_s", ev_seconds(llround((double)k->ns * scale)));
		ev_set(f->evidence, "estimated", json_boolean(scale != 1));
		ev_set(f->evidence, "copies_seen", ev_u64(k->copies));
		ev_set(f->evidence, "from_gpu_records", json_boolean(s->gpu_records));
		ev_set(f->evidence, "by_blocking", ev_u64(known ? t->by_blocking : 0));
		ev_set(f->evidence, "pinned_by_return", ev_u64(t->pinned_by_return));
		ev_set(f->evidence, "host_stalls", ev_u64(t->host_stalls));
		ev_set(f->evidence, "not_known_copies", ev_u64(known ? t->unknown.copies : k->copies));
		if (pageable_bw > 0)
			ev_set(f->evidence, "pageable_gbps", json_real(pageable_bw));
		if (pinned_bw > 0)
			ev_set(f->evidence, "pinned_gbps", json_real(pinned_bw));
		ev_set(f->evidence, "classification", json_string(known ? "pageable" : "not_known_pinned"));
		if (known)
			err |= finding__say(f, "Process %u made %s%llu copies between the GPU and pageable host memory (%llu "
					       "to the GPU, %llu from it; %.1f MiB)",
					    t->pid, scale != 1 ? "≈" : "", (unsigned long long)llround((double)k->copies * scale),
					    (unsigned long long)llround((double)k->htod * scale),
					    (unsigned long long)llround((double)k->dtoh * scale),
					    (double)k->bytes * scale / (1 << 20));
		else
			err |= finding__say(f, "Process %u made %s%llu copies between the GPU and host memory it has not "
					       "been seen to pin (%llu to the GPU, %llu from it; %.1f MiB): memory it pinned "
					       "before the recording began looks the same, so record with --gpu to tell "
					       "pageable copies (CUPTI says which) from pinned ones",
					    t->pid, scale != 1 ? "≈" : "", (unsigned long long)llround((double)k->copies * scale),
					    (unsigned long long)llround((double)k->htod * scale),
					    (unsigned long long)llround((double)k->dtoh * scale),
					    (double)k->bytes * scale / (1 << 20));
		if (k->timed)
			err |= finding__say(f, "; %llu of them took %.3f s at %.2f GB/s",
					    (unsigned long long)llround((double)k->timed * scale), rule_secs(k->ns) * scale,
					    pageable_bw);
		if (cost)
			err |= finding__say(f, ", %.3f s more than at the %.2f GB/s of %s", rule_secs(cost), pinned_bw,
					    from_link ? "a pinned copy on its PCIe link (80% of the link)" : "its pinned copies");
		err |= finding__say(f, ".");
		if (known && t->by_blocking)
			err |= finding__say(f, " %llu were told by their calls, which blocked while the driver staged "
					       "them (a copy from pinned memory returns at once).",
					    (unsigned long long)llround((double)t->by_blocking * scale));
		if (known && t->unknown.copies)
			err |= finding__say(f, " %llu more copies were from memory not known to be pinned or pageable.",
					    (unsigned long long)llround((double)t->unknown.copies * scale));
		if (scale != 1)
			err |= finding__say(f, " The overhead budget let the copies be traced in windows: the counts and "
					       "the cost (≈) are extrapolated from them.");
		err |= finding__say(f, " A copy from pageable memory is staged through a pinned buffer by the "
				       "driver and cannot overlap with the host's work.");
		err |= finding__suggest(f, "Copy from and to pinned memory: `pin_memory=True` in the DataLoader, "
					   "`tensor.pin_memory()`, or a reused pinned buffer "
					   "(torch.empty(..., pin_memory=True)), with `non_blocking=True`.");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

static void copy_free(void *state)
{
	struct copy_state *s = state;

	if (s) {
		free(s->regions);
		free(s->v);
		free(s->threads);
		free(s->pending);
		free(s->blocked);
		htab__free(&s->buffers);
	}
	free(s);
}

const struct rule rule_pageable_memcpy = {
	.id = "pageable_memcpy",
	.title = "Copies from pageable memory",
	.phase = RULE_PHASE_PART,
	.claims = RULE_CAUSE(CAUSE_SYNC) | RULE_CAUSE(CAUSE_CUDA) | RULE_CAUSE(CAUSE_PYTHON) | RULE_CAUSE(CAUSE_NATIVE),
	.reads = RULE_CAUSE(CAUSE_SYNC) | RULE_CAUSE(CAUSE_CUDA) | RULE_CAUSE(CAUSE_PYTHON) | RULE_CAUSE(CAUSE_NATIVE),
	.start = copy_start,
	.finish = copy_finish,
	.free = copy_free,
};

/* --- gpu_idle ------------------------------------------------------------------------ */

/* Causes in the order a reader wants them. */
static const enum cause idle_order[] = {
	CAUSE_PYTHON, CAUSE_NATIVE, CAUSE_GIL, CAUSE_RUNQUEUE, CAUSE_BLOCKED, CAUSE_IO, CAUSE_FAULT, CAUSE_RECLAIM,
	CAUSE_CUDA_MEM, CAUSE_CUDA, CAUSE_SYNC, CAUSE_SYNC_DRAIN, CAUSE_LAUNCH_OVERHEAD, CAUSE_LAUNCH_LATENCY,
	CAUSE_UNKNOWN,
};

/* The launching thread with the most idle time of device d, if any. */
static const struct attr_thread *main_launcher(const struct rule_ctx *c, const struct attr_device *d)
{
	const struct attr_thread *best = NULL;
	__u64 best_ns = 0;

	for (size_t i = 0; i < attribution__thread_count(c->attr); i++) {
		const struct attr_thread *t = attribution__thread_at(c->attr, i);
		__u64 ns = 0;

		if (t->pid != d->pid)
			continue;
		for (int k = 0; k < CAUSE_MAX; k++)
			ns += t->idle_ns[k];
		if (!best || ns > best_ns) {
			best = t;
			best_ns = ns;
		}
	}
	return best;
}

/* "at `file:line function`" for the top stack of t, into buf. */
static bool top_site(const struct rule_ctx *c, const struct attr_thread *t, char *buf, size_t len)
{
	for (size_t i = 0; t && i < t->stacks.n; i++)
		if (rule_stack_site(c, (__u32)t->stacks.v[i].key, buf, len))
			return true;
	return false;
}

static int idle_causes_evidence(struct finding *f, const __u64 idle[CAUSE_MAX])
{
	json_t *o = json_object();

	if (!o)
		return -ENOMEM;
	for (int k = 0; k < CAUSE_MAX; k++)
		ev_set(o, cause_name((enum cause)k), ev_seconds(idle[k]));
	ev_set(f->evidence, "idle_by_cause_s", o);
	return 0;
}

/* The idle time of device d by cause that no finding claimed. */
static __u64 unclaimed_idle(const struct rule_ctx *c, const struct attr_device *d, enum cause k)
{
	__u64 part;

	if (rule_claimed_any(c, d->pid, k))
		return 0;
	part = rule_claimed_part(c, d->pid, 0, k);
	return part < d->idle_ns[k] ? d->idle_ns[k] - part : 0;
}

/* The advice for idle time mostly in native code: many launches, each
 * after a little of it, is a framework's work per operation (its
 * dispatch, the launch call itself), which a CUDA graph replays at once;
 * else a slow call to find with a profiler. */
static int native_advice(const struct rule_ctx *c, struct finding *f, const struct attr_device *d,
			 const struct attr_thread *t)
{
	const struct thread_summary *ts = t && c->sum ? summary__thread(c->sum, t->pid, t->tid) : NULL;
	double per = ts && ts->cuda_launches ? (double)d->idle_ns[CAUSE_NATIVE] / (double)ts->cuda_launches : 0;

	if (ts && ts->cuda_launches >= NATIVE_PER_OP_LAUNCHES && per <= NATIVE_PER_OP_NS) {
		ev_set(f->evidence, "native_per_launch_us", json_real(per / 1e3));
		return finding__suggest(f, "The launching thread ran native code between launches, %.0f us a launch "
					   "over its %" PRIu64 " launches: the framework's own work per operation (its "
					   "dispatch, the launch call), not one slow call. Capture the step in a CUDA graph "
					   "(torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")), which "
					   "replays its launches at once, or fuse operations (torch.compile); perf record -g "
					   "-t TID shows where the time goes.", per / 1e3, (uint64_t)ts->cuda_launches);
	}
	return finding__suggest(f, "The launching thread ran native code between launches: profile it (perf record -g "
				   "-t TID) for CPU-side preprocessing or a slow library call, and overlap it with GPU "
				   "work.");
}

static int idle_finish(void *state, struct rule_ctx *c)
{
	(void)state;
	if (!rule_gpu_recorded(c))
		return rule_any_launcher(c) ? findings__not_judged(c->out, "gpu_idle", "--gpu (GPU busy and idle time come from CUPTI)") : 0;
	for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
		const struct attr_device *d = attribution__device_at(c->attr, i);
		const struct attr_thread *t = main_launcher(c, d);
		__u64 idle = 0, cost = 0, explained = 0;
		char site[PY_SITE_LEN], who[96];
		struct finding *f;
		bool first = true;
		int err = 0;

		for (int k = 0; k < CAUSE_MAX; k++) {
			__u64 left = unclaimed_idle(c, d, (enum cause)k);

			idle += d->idle_ns[k];
			explained += d->idle_ns[k] - left;
			cost += left;
		}
		if (!d->active_ns || (double)idle < IDLE_SHARE * (double)d->active_ns || !rule_matters(c, cost) ||
		    (double)cost < MIN_SHARE * (double)d->active_ns)
			continue;
		f = findings__add(c->out, "gpu_idle", rule_severity(c, cost), rule_secs(cost) * window_scale(c, d),
				  d->pid, t ? t->tid : 0);
		if (!f)
			return -ENOMEM;
		ev_set(f->evidence, "pid", ev_u64(d->pid));
		ev_set(f->evidence, "device", ev_u64(d->device));
		ev_set(f->evidence, "observed_s", ev_seconds(d->observed_ns));
		ev_set(f->evidence, "active_s", ev_seconds(d->active_ns));
		ev_set(f->evidence, "busy_s", ev_seconds(d->busy_ns));
		ev_set(f->evidence, "idle_s", ev_seconds(idle));
		ev_set(f->evidence, "idle_share", json_real((double)idle / (double)d->active_ns));
		ev_set(f->evidence, "explained_by_other_findings_s", ev_seconds(explained));
		ev_set(f->evidence, "before_first_work_s", ev_seconds(d->leading_ns));
		ev_set(f->evidence, "after_last_work_s", ev_seconds(d->trailing_ns));
		ev_set(f->evidence, "gaps", ev_u64(d->gaps));
		err |= idle_causes_evidence(f, d->idle_ns);
		err |= finding__say(f, "GPU %u of pid %u was idle %.3f s (%.0f%% of its %.3f s between its first work and "
				       "its last)", d->device, d->pid, rule_secs(idle), rule_pct(idle, d->active_ns),
				    rule_secs(d->active_ns));
		if (t) {
			rule_task_name(c, t->pid, t->tid, who, sizeof(who));
			ev_set(f->evidence, "launcher_tid", ev_u64(t->tid));
			err |= finding__say(f, "; the launching thread is %s", who);
		}
		err |= finding__say(f, ". Not explained by another finding:");
		for (size_t k = 0; k < sizeof(idle_order) / sizeof(idle_order[0]); k++) {
			enum cause cs = idle_order[k];
			__u64 ns = unclaimed_idle(c, d, cs);

			if (!ns || (double)ns < 0.01 * (double)idle)
				continue;
			err |= finding__say(f, "%s %.3f s %s", first ? "" : ";", rule_secs(ns), cause_text(cs));
			if (cs == CAUSE_PYTHON && top_site(c, t, site, sizeof(site))) {
				err |= finding__say(f, " (most at `%s`)", site);
				ev_set(f->evidence, "top_python_site", ev_text(site, sizeof(site)));
			}
			first = false;
		}
		if (explained)
			err |= finding__say(f, " (%.3f s more is explained by the findings above)", rule_secs(explained));
		err |= finding__say(f, ".");
		if (d->leading_ns || d->trailing_ns)
			err |= finding__say(f, " Not counted: %.3f s before its first work and %.3f s after its last (the "
					       "job's set-up and teardown).", rule_secs(d->leading_ns), rule_secs(d->trailing_ns));
		err |= window_evidence(f, d);
		if (d->idle_ns[CAUSE_PYTHON] >= d->idle_ns[CAUSE_NATIVE])
			err |= finding__suggest(f, "Take the Python work between launches off the launching thread "
						   "(DataLoader workers, a background thread or process) or overlap it with "
						   "GPU work (prefetch the next batch, non_blocking copies, CUDA streams); "
						   "torch.compile cuts Python per op.");
		else
			err |= native_advice(c, f, d, t);
		if (err)
			return -ENOMEM;
	}
	return 0;
}

const struct rule rule_gpu_idle = {
	.id = "gpu_idle",
	.title = "GPU idle, waiting for the host",
	.phase = RULE_PHASE_REST,
	.reads = RULE_CAUSES_ALL,
	.finish = idle_finish,
};

/* --- host_bound ----------------------------------------------------------------------- */

#define HOST_BOUND_ON_CPU_SHARE	0.5	/* of its window, on a CPU or waiting for one */

/* A thread's time on a CPU or waiting for one: running, in faults and
 * reclaim, in CUDA calls other than synchronizations, runnable. */
static __u64 on_cpu(const struct tl_acc *a)
{
	return a->ns[TL_RUNNING] + a->ns[TL_FAULT] + a->ns[TL_RECLAIM] + a->ns[TL_CUDA] + a->ns[TL_CUDA_MEM] +
	       a->ns[TL_RUNQUEUE];
}

static int host_finish(void *state, struct rule_ctx *c)
{
	(void)state;
	for (size_t i = 0; i < attribution__thread_count(c->attr); i++) {
		const struct attr_thread *t = attribution__thread_at(c->attr, i);
		__u64 causes[CAUSE_MAX], window = tl_acc__total(&t->window), cost = 0;
		const struct tl_thread *th;
		char who[96], site[PY_SITE_LEN];
		struct finding *f;
		bool first = true;
		int err = 0;

		if (attribution__gpu_observed(c->attr, t->pid) || !window)
			continue;
		th = timeline__thread_latest(c->tl, t->pid, t->tid);
		if (!th || th->launches < HOST_BOUND_MIN_LAUNCHES)
			continue;
		if (!t->critical)
			continue;
		rule_thread_causes(c, t, causes);
		if ((double)causes[CAUSE_SYNC] >= HOST_BOUND_SYNC_SHARE * (double)window)
			continue;
		/* host-bound is a thread on a CPU (or wanting one) most of the
		 * time: a blocked thread is described by what it waited for */
		if ((double)on_cpu(&t->window) < HOST_BOUND_ON_CPU_SHARE * (double)window)
			continue;
		for (int k = 0; k < CAUSE_MAX; k++)
			if (k != CAUSE_SYNC)
				cost += rule_unclaimed(c, t, causes, (enum cause)k);
		if (!rule_matters(c, cost) || (double)cost < MIN_SHARE * (double)window)
			continue;
		f = findings__add(c->out, "host_bound", SEV_WARNING, rule_secs(cost), t->pid, t->tid);
		if (!f)
			return -ENOMEM;
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		ev_set(f->evidence, "pid", ev_u64(t->pid));
		ev_set(f->evidence, "tid", ev_u64(t->tid));
		ev_set(f->evidence, "window_s", ev_seconds(window));
		ev_set(f->evidence, "waiting_for_gpu_s", ev_seconds(causes[CAUSE_SYNC]));
		ev_set(f->evidence, "launches", ev_u64(th->launches));
		ev_set(f->evidence, "gpu_busy_known", json_false());
		err |= finding__say(f, "%s spent %.1f%% of its %.3f s waiting for the GPU (%llu launches): it is "
				       "host-bound, and the GPU likely waits for it. GPU busy time is unknown: record "
				       "with --gpu to measure it. Its time not explained by another finding:",
				    who, rule_pct(causes[CAUSE_SYNC], window), rule_secs(window), (unsigned long long)th->launches);
		for (size_t k = 0; k < sizeof(idle_order) / sizeof(idle_order[0]); k++) {
			enum cause cs = idle_order[k];
			__u64 ns = rule_unclaimed(c, t, causes, cs);

			if (cs == CAUSE_SYNC || !ns || (double)ns < 0.01 * (double)window)
				continue;
			err |= finding__say(f, "%s %.3f s %s", first ? "" : ";", rule_secs(ns), cause_label(cs));
			if (cs == CAUSE_PYTHON && top_site(c, t, site, sizeof(site))) {
				err |= finding__say(f, " (most at `%s`)", site);
				ev_set(f->evidence, "top_python_site", ev_text(site, sizeof(site)));
			}
			first = false;
		}
		err |= finding__say(f, ".");
		err |= finding__suggest(f, "Measure the GPU side with --gpu. To feed the GPU faster: move preprocessing "
					   "off the launching thread (DataLoader workers), cut Python per step "
					   "(torch.compile, larger batches), and capture repeated launches in CUDA graphs.");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

const struct rule rule_host_bound = {
	.id = "host_bound",
	.title = "Host-bound launching thread",
	.phase = RULE_PHASE_REST,
	.reads = RULE_CAUSES_ALL,
	.finish = host_finish,
};

/* --- cuda_errors ------------------------------------------------------------------------ */

#define CUDA_ERROR_OUT_OF_MEMORY	2
#define ERRORS_LISTED			5

static int fn_by_failed_desc(const void *a, const void *b)
{
	const struct cuda_fn_summary *x = *(const struct cuda_fn_summary *const *)a;
	const struct cuda_fn_summary *y = *(const struct cuda_fn_summary *const *)b;

	if (x->failed != y->failed)
		return x->failed > y->failed ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Failed CUDA calls (CUDA_ERROR_NOT_READY from the query functions is
 * their ordinary answer, not a failure): the program saw an error. */
static int errors_finish(void *state, struct rule_ctx *c)
{
	const struct cuda_fn_summary **fns;
	struct finding *f;
	json_t *arr;
	__u64 total = 0;
	bool oom = false;
	size_t n = 0;
	int err = 0;

	(void)state;
	fns = calloc(c->sum->cuda_fn_count ? c->sum->cuda_fn_count : 1, sizeof(*fns));
	if (!fns)
		return -ENOMEM;
	for (size_t i = 0; i < c->sum->cuda_fn_count; i++)
		if (c->sum->cuda_fns[i].failed) {
			fns[n++] = &c->sum->cuda_fns[i];
			total += c->sum->cuda_fns[i].failed;
		}
	if (!n) {
		free(fns);
		return 0;
	}
	qsort(fns, n, sizeof(*fns), fn_by_failed_desc);
	for (size_t i = 0; i < n; i++)
		oom |= fns[i]->last_error == CUDA_ERROR_OUT_OF_MEMORY;
	f = findings__add(c->out, "cuda_errors", oom ? SEV_CRITICAL : SEV_WARNING, 0, 0, 0);
	arr = json_array();
	if (!f || !arr) {
		json_decref(arr);
		free(fns);
		return -ENOMEM;
	}
	err |= finding__say(f, "%llu CUDA call%s failed: ", (unsigned long long)total, total == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const char *name = summary__cuda_error_name(fns[i]->last_error);
		json_t *o = json_object();

		ev_set(o, "function", ev_text(fns[i]->name, sizeof(fns[i]->name)));
		ev_set(o, "failed", ev_u64(fns[i]->failed));
		ev_set(o, "last_error", json_integer(fns[i]->last_error));
		ev_set(o, "last_error_name", name ? json_string(name) : json_null());
		json_array_append_new(arr, o);
		if (i < ERRORS_LISTED)
			err |= finding__say(f, "%s%s %llux (last error %d%s%s)", i ? ", " : "", fns[i]->name,
					    (unsigned long long)fns[i]->failed, fns[i]->last_error, name ? " " : "",
					    name ? name : "");
	}
	if (n > ERRORS_LISTED)
		err |= finding__say(f, ", and %zu more functions", n - ERRORS_LISTED);
	err |= finding__say(f, ".");
	ev_set(f->evidence, "failed_calls", ev_u64(total));
	ev_set(f->evidence, "functions", arr);
	if (oom)
		err |= finding__suggest(f, "CUDA_ERROR_OUT_OF_MEMORY means the GPU ran out of memory (see the peaks "
					   "under CUDA): lower the batch size, free cached memory, or use a GPU with "
					   "more memory.");
	else
		err |= finding__suggest(f, "The program saw these errors: check how it handles them.");
	free(fns);
	return err ? -ENOMEM : 0;
}

const struct rule rule_cuda_errors = {
	.id = "cuda_errors",
	.title = "CUDA calls failed",
	.phase = RULE_PHASE_CAUSE,
	.finish = errors_finish,
};
