// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pass over a recording in memory: the targets and clock fits first,
 * then every event's interval, sorted by start (file order breaks ties).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"

struct pid_fit {
	__u32 pid;
	struct clock_fit fit;
};

struct slot {
	__u64 start, end;
	size_t idx;		/* in r->events: file order */
	bool unmapped;
};

struct pass {
	const struct recording *r;
	__u64 start, end;
	__u32 *targets;		/* sorted, unique */
	size_t ntargets;
	struct pid_fit *fits;	/* sorted by pid */
	size_t nfits;
	struct slot *order;
	size_t n, next;
};

bool pass__usable(const struct isr_ev_hdr *h)
{
	return isr_event_name(h->type) && h->size >= isr_event_min_size(h->type);
}

static int u32_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

/* Every pid named by the recording's processes, by an event that only
 * targets emit, or as a child the recorder followed. */
static int collect_targets(struct pass *p)
{
	const struct recording *r = p->r;
	size_t cap = r->process_count + 16, n = 0;
	__u32 *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < r->process_count; i++)
		if (r->processes[i].pid)
			v[n++] = r->processes[i].pid;
	for (size_t i = 0; i < r->event_count; i++) {
		const struct isr_ev_hdr *h = r->events[i];
		const struct isr_ev_proc_fork *f = (const void *)h;
		__u32 add[2];
		int k = 0;

		if (!pass__usable(h) || h->type == ISR_EV_SCHED_SWITCH || h->type == ISR_EV_SAMPLING)
			continue;
		if (h->pid)
			add[k++] = h->pid;
		if (h->type == ISR_EV_PROC_FORK && f->child_pid && (f->flags & (ISR_FORK_FOLLOWED | ISR_FORK_THREAD)))
			add[k++] = f->child_pid;
		for (int j = 0; j < k; j++) {
			if (n && v[n - 1] == add[j])
				continue;
			if (n == cap) {
				__u32 *nv = reallocarray(v, cap * 2, sizeof(*v));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap *= 2;
			}
			v[n++] = add[j];
		}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), u32_cmp);
	p->ntargets = 0;
	for (size_t i = 0; i < n; i++)
		if (!p->ntargets || v[p->ntargets - 1] != v[i])
			v[p->ntargets++] = v[i];
	p->targets = v;
	return 0;
}

static int fit_cmp(const void *a, const void *b)
{
	const struct pid_fit *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int clock_cmp(const void *a, const void *b)
{
	const struct isr_ev_gpu_clock *x = *(const struct isr_ev_gpu_clock *const *)a;
	const struct isr_ev_gpu_clock *y = *(const struct isr_ev_gpu_clock *const *)b;

	return (x->hdr.pid > y->hdr.pid) - (x->hdr.pid < y->hdr.pid);
}

/* One fit per process from its isr_ev_gpu_clock pairs. */
static int fit_clocks(struct pass *p)
{
	const struct recording *r = p->r;
	const struct isr_ev_gpu_clock **c;
	struct clock_sample *s;
	size_t n = 0, i, j;
	int err = 0;

	for (i = 0; i < r->event_count; i++)
		if (r->events[i]->type == ISR_EV_GPU_CLOCK && pass__usable(r->events[i]))
			n++;
	if (!n)
		return 0;
	c = malloc(n * sizeof(*c));
	s = malloc(n * sizeof(*s));
	p->fits = calloc(n, sizeof(*p->fits));
	if (!c || !s || !p->fits) {
		err = -ENOMEM;
		goto out;
	}
	n = 0;
	for (i = 0; i < r->event_count; i++)
		if (r->events[i]->type == ISR_EV_GPU_CLOCK && pass__usable(r->events[i]))
			c[n++] = (const void *)r->events[i];
	qsort(c, n, sizeof(*c), clock_cmp);
	for (i = 0; i < n; i = j) {
		size_t k = 0;

		for (j = i; j < n && c[j]->hdr.pid == c[i]->hdr.pid; j++) {
			if (c[j]->mono_after_ns < c[j]->mono_before_ns)
				continue;
			s[k].gpu_ns = c[j]->gpu_ns;
			s[k].mono_before_ns = c[j]->mono_before_ns;
			s[k].mono_after_ns = c[j]->mono_after_ns;
			k++;
		}
		if (!k)
			continue;
		err = clock_fit__compute(s, k, &p->fits[p->nfits].fit);
		if (err == -EINVAL) {
			err = 0;
			continue;
		}
		if (err)
			goto out;
		p->fits[p->nfits++].pid = c[i]->hdr.pid;
	}
	qsort(p->fits, p->nfits, sizeof(*p->fits), fit_cmp);
out:
	free(c);
	free(s);
	return err;
}

const struct clock_fit *pass__fit(const struct pass *p, __u32 pid)
{
	struct pid_fit key = { .pid = pid };
	const struct pid_fit *f;

	if (!p->nfits)
		return NULL;
	f = bsearch(&key, p->fits, p->nfits, sizeof(*p->fits), fit_cmp);
	return f && f->fit.valid ? &f->fit : NULL;
}

bool pass__is_target(const struct pass *p, __u32 pid)
{
	return pid && p->ntargets && bsearch(&pid, p->targets, p->ntargets, sizeof(*p->targets), u32_cmp);
}

/* The GPU interval of a CUPTI record, if h is one: its GPU start and end. */
static bool gpu_times(const struct isr_ev_hdr *h, __u64 *start, __u64 *end)
{
	switch (h->type) {
	case ISR_EV_GPU_KERNEL: {
		const struct isr_ev_gpu_kernel *k = (const void *)h;

		*start = k->start_ns, *end = k->end_ns;
		return true;
	}
	case ISR_EV_GPU_MEMCPY: {
		const struct isr_ev_gpu_memcpy *m = (const void *)h;

		*start = m->start_ns, *end = m->end_ns;
		return true;
	}
	case ISR_EV_GPU_MEMSET: {
		const struct isr_ev_gpu_memset *m = (const void *)h;

		*start = m->start_ns, *end = m->end_ns;
		return true;
	}
	case ISR_EV_GPU_SYNC: {
		const struct isr_ev_gpu_sync *m = (const void *)h;

		*start = m->start_ns, *end = m->end_ns;
		return true;
	}
	case ISR_EV_GPU_API: {
		const struct isr_ev_gpu_api *m = (const void *)h;

		*start = m->start_ns, *end = m->end_ns;
		return true;
	}
	default:
		return false;
	}
}

static void interval_of(const struct pass *p, const struct isr_ev_hdr *h, struct slot *s)
{
	__u64 g0, g1;

	s->start = s->end = h->ts_ns;
	s->unmapped = false;
	if (!pass__usable(h))
		return;
	switch (h->type) {
	case ISR_EV_PAGE_FAULT: {
		const struct isr_ev_page_fault *f = (const void *)h;

		if ((f->flags & ISR_FAULT_HAS_START) && f->duration_ns <= h->ts_ns)
			s->start = h->ts_ns - f->duration_ns;
		return;
	}
	case ISR_EV_CUDA_CALL: {
		const struct isr_ev_cuda_call *c = (const void *)h;

		if (c->flags & ISR_CUDA_RETURNED)
			s->end = h->ts_ns + c->duration_ns;
		return;
	}
	case ISR_EV_GIL: {
		const struct isr_ev_gil *g = (const void *)h;

		if (g->kind == ISR_GIL_ACQUIRE)
			s->end = h->ts_ns + g->wait_ns;
		return;
	}
	case ISR_EV_GIL_WAIT:
		s->end = h->ts_ns + ((const struct isr_ev_gil_wait *)h)->duration_ns;
		return;
	default:
		break;
	}
	if (gpu_times(h, &g0, &g1)) {
		const struct clock_fit *f = pass__fit(p, h->pid);

		if (!f) {
			s->unmapped = true;
			return;
		}
		s->start = clock_fit__apply(f, g0);
		s->end = g1 > g0 ? clock_fit__apply(f, g1) : s->start;
		if (s->end < s->start)
			s->end = s->start;
	}
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static void window(struct pass *p)
{
	const struct recording *r = p->r;

	p->start = r->host.start_mono_ns;
	p->end = r->end_mono_ns;
	if (!p->start && p->n)
		p->start = p->order[0].start;
	if (!p->end && p->n)
		p->end = p->order[p->n - 1].start;
	if (p->end < p->start)
		p->end = p->start;
}

int pass__open(const struct recording *r, struct pass **out)
{
	struct pass *p = calloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->r = r;
	err = collect_targets(p);
	if (!err)
		err = fit_clocks(p);
	if (!err && r->event_count) {
		p->order = malloc(r->event_count * sizeof(*p->order));
		if (!p->order)
			err = -ENOMEM;
	}
	if (err) {
		pass__free(p);
		return err;
	}
	for (size_t i = 0; i < r->event_count; i++) {
		interval_of(p, r->events[i], &p->order[i]);
		p->order[i].idx = i;
	}
	p->n = r->event_count;
	if (p->n > 1)
		qsort(p->order, p->n, sizeof(*p->order), slot_cmp);
	window(p);
	*out = p;
	return 0;
}

void pass__free(struct pass *p)
{
	if (!p)
		return;
	free(p->targets);
	free(p->fits);
	free(p->order);
	free(p);
}

int pass__next(struct pass *p, struct pass_event *e)
{
	const struct slot *s;

	if (p->next >= p->n)
		return 0;
	s = &p->order[p->next++];
	e->h = p->r->events[s->idx];
	e->start = s->start;
	e->end = s->end;
	e->unmapped = s->unmapped;
	return 1;
}

__u64 pass__start(const struct pass *p)
{
	return p->start;
}

__u64 pass__end(const struct pass *p)
{
	return p->end;
}
