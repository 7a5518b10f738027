// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "steps.h"
#include "htab.h"
#include "registry.h"

/* Ranges kept one by one (the others only as totals by name): those at
 * these depths of a thread's stack, and every start/end range, up to a
 * bound: memory must not grow with the events. */
#define STEPS_KEEP_DEPTH 1
#define STEPS_KEEP_MAX (1u << 14)
/* Synchronization boundaries kept per thread: past it, every second one is
 * dropped (two steps become one) and a boundary is kept every second
 * synchronization from then on. */
#define STEPS_MAX_BOUNDS (1u << 14)

const char *steps_source_name(enum steps_source s)
{
	switch (s) {
	case STEPS_NVTX:
		return "nvtx";
	case STEPS_INFERRED:
		return "inferred";
	default:
		return "none";
	}
}

/* A reading of a thread: its categories and launches at a moment. */
struct reading {
	struct tl_acc acc;
	__u64 launches;
	bool valid;
};

struct open_range {
	char name[ISR_NVTX_NAME_LEN];
	__u64 start;
	__u64 id;		/* start/end ranges */
	__u32 pid, tid;
	struct reading at_start;
};

/* A closed range kept one by one. */
struct kept_range {
	size_t stat;		/* its name's entry in ranges */
	__u32 pid, tid;
	__u64 start, end;
	struct tl_acc acc;
	__u64 launches;
};

/* A synchronization's return on a thread: a step boundary, if steps are
 * inferred. */
struct boundary {
	__u64 at;
	struct reading r;
};

struct sthread {
	__u32 pid, tid;
	const struct tl_thread *t;
	struct open_range *stack;
	size_t depth, stack_cap;
	size_t overflow;	/* pushed past STEPS_MAX_OPEN: not kept, popped first */
	struct boundary *bounds;
	size_t nbounds, bounds_cap;
	__u64 syncs;		/* its synchronizations after its first launch */
	__u64 stride;		/* a boundary every stride of them (a power of two) */
	struct reading first_launch;
	__u64 first_launch_ns;
	__u16 sync_fn;		/* its most recent synchronization's function */
};

struct name_entry {
	char name[ISR_NVTX_NAME_LEN];
	bool stack;
	size_t idx;		/* into ranges or marks */
};

struct steps {
	struct timeline *tl;
	struct tl_observer obs;
	struct sthread *threads;
	size_t nthreads, threads_cap;
	struct open_range *started;	/* start/end ranges open */
	size_t nstarted, started_cap;
	struct kept_range *kept;
	size_t nkept, kept_cap;
	struct htab names;		/* (name, stack) -> ranges index; marks separately */
	struct htab mark_names;
	struct nvtx_range_stat *ranges;
	size_t ranges_cap;
	struct nvtx_mark_stat *marks;
	size_t marks_cap;
	struct steps_result res;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c;
	void *n;

	if (need <= *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	n = realloc(*p, c * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

static __u64 name_hash(const void *e)
{
	const struct name_entry *n = e;

	return hash__mix(hash__str(n->name), n->stack);
}

static bool name_equal(const void *a, const void *b)
{
	const struct name_entry *x = a, *y = b;

	return x->stack == y->stack && strcmp(x->name, y->name) == 0;
}

struct steps *steps__new(struct timeline *tl)
{
	struct steps *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tl = tl;
	htab__init(&s->names, sizeof(struct name_entry), name_hash, name_equal);
	htab__init(&s->mark_names, sizeof(struct name_entry), name_hash, name_equal);
	return s;
}

void steps__free(struct steps *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nthreads; i++) {
		free(s->threads[i].stack);
		free(s->threads[i].bounds);
	}
	free(s->threads);
	free(s->started);
	free(s->kept);
	htab__free(&s->names);
	htab__free(&s->mark_names);
	free(s->ranges);
	free(s->marks);
	free(s->res.steps);
	free(s);
}

static struct sthread *thread_get(struct steps *s, const struct tl_thread *t)
{
	struct sthread *st;

	for (size_t i = s->nthreads; i-- > 0;)
		if (s->threads[i].tid == t->tid && s->threads[i].pid == t->pid) {
			s->threads[i].t = t;	/* a reused tid is a new tl_thread */
			return &s->threads[i];
		}
	if (grow((void **)&s->threads, &s->threads_cap, s->nthreads + 1, sizeof(*s->threads)))
		return NULL;
	st = &s->threads[s->nthreads++];
	memset(st, 0, sizeof(*st));
	st->pid = t->pid;
	st->tid = t->tid;
	st->t = t;
	return st;
}

static void read_thread(struct steps *s, const struct tl_thread *t, __u64 at, struct reading *r)
{
	timeline__thread_acc(s->tl, t, at, &r->acc);
	r->launches = t->launches;
	r->valid = true;
}

static bool other_name(const char *name)
{
	return !strcmp(name, STEPS_OTHER_RANGES) || !strcmp(name, STEPS_OTHER_MARKS);
}

/* The entry of name among the ranges (stack: push/pop ranges) or marks;
 * past STEPS_MAX_NAMES, a new name's is the other ones'. */
static long stat_index(struct steps *s, const char *name, bool stack, bool mark)
{
	struct name_entry key = { .stack = stack }, *e;
	struct htab *h = mark ? &s->mark_names : &s->names;
	bool added;
	size_t n = h->len;

	snprintf(key.name, sizeof(key.name), "%s", name);
	if (h->len >= STEPS_MAX_NAMES && !htab__find(h, &key)) {
		snprintf(key.name, sizeof(key.name), "%s", mark ? STEPS_OTHER_MARKS : STEPS_OTHER_RANGES);
		s->res.names_other++;
	}
	e = htab__insert(h, &key, &added);
	if (!e)
		return -ENOMEM;
	if (!added)
		return (long)e->idx;
	e->idx = n;
	if (mark) {
		if (grow((void **)&s->marks, &s->marks_cap, n + 1, sizeof(*s->marks)))
			return -ENOMEM;
		memset(&s->marks[n], 0, sizeof(s->marks[n]));
		snprintf(s->marks[n].name, sizeof(s->marks[n].name), "%s", key.name);
	} else {
		if (grow((void **)&s->ranges, &s->ranges_cap, n + 1, sizeof(*s->ranges)))
			return -ENOMEM;
		memset(&s->ranges[n], 0, sizeof(s->ranges[n]));
		snprintf(s->ranges[n].name, sizeof(s->ranges[n].name), "%s", key.name);
		s->ranges[n].thread_stack = stack;
		s->ranges[n].min_depth = 0xffff;
	}
	return (long)n;
}

static int close_range(struct steps *s, const struct open_range *o, __u16 depth, bool stack, __u64 end,
		       const struct tl_thread *t)
{
	struct nvtx_range_stat *st;
	long idx = stat_index(s, o->name, stack, false);
	__u64 d = end > o->start ? end - o->start : 0;

	if (idx < 0)
		return (int)idx;
	st = &s->ranges[idx];
	st->count++;
	st->total_ns += d;
	if (d > st->max_ns)
		st->max_ns = d;
	if (depth < st->min_depth)
		st->min_depth = depth;
	if ((!stack || depth <= STEPS_KEEP_DEPTH) && s->nkept == STEPS_KEEP_MAX)
		s->res.ranges_not_kept++;
	if ((!stack || depth <= STEPS_KEEP_DEPTH) && s->nkept < STEPS_KEEP_MAX) {
		struct kept_range *k;
		struct reading r = { 0 };

		if (grow((void **)&s->kept, &s->kept_cap, s->nkept + 1, sizeof(*s->kept)))
			return -ENOMEM;
		k = &s->kept[s->nkept++];
		memset(k, 0, sizeof(*k));
		k->stat = (size_t)idx;
		k->pid = o->pid;
		k->tid = o->tid;
		k->start = o->start;
		k->end = end;
		if (t && o->at_start.valid) {
			read_thread(s, t, end, &r);
			tl_acc__diff(&r.acc, &o->at_start.acc, &k->acc);
			k->launches = r.launches - o->at_start.launches;
		}
	}
	return 0;
}

static int on_nvtx(struct steps *s, const struct pass_event *e, const struct tl_thread *t)
{
	const struct isr_ev_nvtx *n = (const void *)e->h;
	char name[ISR_NVTX_NAME_LEN];
	struct sthread *st = t ? thread_get(s, t) : NULL;
	struct open_range o;

	if (t && !st)
		return -ENOMEM;
	s->res.nvtx_events++;
	memcpy(name, n->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	if (!name[0])
		snprintf(name, sizeof(name), "%s", (n->flags & ISR_NVTX_F_NO_NAME) ? "(unnamed)" : "");
	memset(&o, 0, sizeof(o));
	snprintf(o.name, sizeof(o.name), "%s", name);
	o.start = e->start;
	o.pid = n->hdr.pid;
	o.tid = n->hdr.tid;
	o.id = n->id;
	if (t)
		read_thread(s, t, e->start, &o.at_start);
	switch (n->kind) {
	case ISR_NVTX_PUSH:
		if (!st)
			return 0;
		if (st->depth + st->overflow >= STEPS_MAX_OPEN) {
			st->overflow++;
			s->res.ranges_dropped++;
			return 0;
		}
		if (grow((void **)&st->stack, &st->stack_cap, st->depth + 1, sizeof(*st->stack)))
			return -ENOMEM;
		st->stack[st->depth++] = o;
		return 0;
	case ISR_NVTX_POP:
		if (st && st->overflow) {
			st->overflow--;
			return 0;
		}
		if (!st || !st->depth) {
			s->res.unmatched++;
			return 0;
		}
		st->depth--;
		return close_range(s, &st->stack[st->depth], (__u16)st->depth, true, e->start, t);
	case ISR_NVTX_START:
		if (s->nstarted >= STEPS_MAX_OPEN) {
			s->res.ranges_dropped++;	/* its end is unmatched */
			return 0;
		}
		if (grow((void **)&s->started, &s->started_cap, s->nstarted + 1, sizeof(*s->started)))
			return -ENOMEM;
		s->started[s->nstarted++] = o;
		return 0;
	case ISR_NVTX_END:
		for (size_t i = 0; i < s->nstarted; i++) {
			if (s->started[i].id == n->id && s->started[i].pid == n->hdr.pid) {
				struct open_range r = s->started[i];
				const struct tl_thread *owner = timeline__thread(s->tl, r.pid, r.tid);

				s->started[i] = s->started[--s->nstarted];
				return close_range(s, &r, 0, false, e->start, owner);
			}
		}
		s->res.unmatched++;
		return 0;
	case ISR_NVTX_MARK: {
		long idx = stat_index(s, name, false, true);

		if (idx < 0)
			return (int)idx;
		s->marks[idx].count++;
		return 0;
	}
	default:
		return 0;
	}
}

static int on_cuda(struct steps *s, const struct pass_event *e, const struct tl_thread *t)
{
	const struct isr_ev_cuda_call *c = (const void *)e->h;
	const struct isr_cuda_fn *fn = isr_cuda_fn(c->func);
	struct boundary *b;
	struct sthread *st;

	if (!t || !fn)
		return 0;
	if (fn->kind & ISR_CUDA_K_LAUNCH) {
		st = thread_get(s, t);
		if (!st)
			return -ENOMEM;
		if (!st->first_launch.valid) {
			/* the launch was counted already: the step starts before it */
			read_thread(s, t, e->start, &st->first_launch);
			st->first_launch.launches--;
			st->first_launch_ns = e->start;
		}
		return 0;
	}
	if ((fn->kind & ISR_CUDA_K_SYNC) && (c->flags & ISR_CUDA_RETURNED)) {
		st = thread_get(s, t);
		if (!st)
			return -ENOMEM;
		if (!st->first_launch.valid)
			return 0;	/* a step holds work: none launched yet */
		if (!st->stride)
			st->stride = 1;
		if (++st->syncs % st->stride)
			return 0;
		if (st->nbounds == STEPS_MAX_BOUNDS) {
			/* readings are running totals: dropping a boundary joins two steps */
			for (size_t i = 1, j = 0; i < st->nbounds; i += 2, j++)
				st->bounds[j] = st->bounds[i];
			st->nbounds /= 2;
			st->stride *= 2;
			if (st->syncs % st->stride)
				return 0;
		}
		if (grow((void **)&st->bounds, &st->bounds_cap, st->nbounds + 1, sizeof(*st->bounds)))
			return -ENOMEM;
		b = &st->bounds[st->nbounds++];
		b->at = e->end;
		/* inside the call until its return: the reading there is the one
		 * at its entry plus the call in cuda_sync */
		read_thread(s, t, e->start, &b->r);
		b->r.acc.ns[TL_SYNC] += e->end - e->start;
		st->sync_fn = c->func;
	}
	return 0;
}

static void on_event(void *ctx, const struct pass_event *e, const struct tl_thread *t)
{
	struct steps *s = ctx;

	if (e->h->type == ISR_EV_NVTX)
		on_nvtx(s, e, t);
	else if (e->h->type == ISR_EV_CUDA_CALL)
		on_cuda(s, e, t);
}

const struct tl_observer *steps__observer(struct steps *s)
{
	s->obs.ctx = s;
	s->obs.event = on_event;
	return &s->obs;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_range_total(const void *a, const void *b)
{
	const struct nvtx_range_stat *x = a, *y = b;

	return x->total_ns > y->total_ns ? -1 : x->total_ns < y->total_ns;
}

static int cmp_mark_count(const void *a, const void *b)
{
	const struct nvtx_mark_stat *x = a, *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

static bool step_like(const char *name)
{
	return strcasestr(name, "step") || strcasestr(name, "iter") || strcasestr(name, "batch");
}

/* The NVTX name of the steps: among those repeated STEPS_MIN times, the
 * ones named like steps (step, iter, batch) first, then the smallest depth,
 * then the most repeated. -1: none. */
static long choose_nvtx_name(const struct steps *s)
{
	long best = -1;

	for (size_t i = 0; i < s->names.len; i++) {
		const struct nvtx_range_stat *r = &s->ranges[i], *b;

		if (r->count < STEPS_MIN || other_name(r->name))
			continue;
		if (best < 0) {
			best = (long)i;
			continue;
		}
		b = &s->ranges[best];
		if (step_like(r->name) != step_like(b->name)) {
			if (step_like(r->name))
				best = (long)i;
		} else if (r->min_depth != b->min_depth) {
			if (r->min_depth < b->min_depth)
				best = (long)i;
		} else if (r->count > b->count) {
			best = (long)i;
		}
	}
	return best;
}

static int add_step(struct steps_result *res, size_t *cap, __u32 pid, __u32 tid, __u64 start, __u64 end,
		    const struct tl_acc *acc, __u64 launches)
{
	struct step *st;

	if (grow((void **)&res->steps, cap, res->count + 1, sizeof(*res->steps)))
		return -ENOMEM;
	st = &res->steps[res->count];
	memset(st, 0, sizeof(*st));
	st->index = res->count++;
	st->pid = pid;
	st->tid = tid;
	st->start = start;
	st->end = end;
	st->acc = *acc;
	st->launches = launches;
	return 0;
}

static int nvtx_steps(struct steps *s, long name_idx)
{
	size_t cap = 0;

	for (size_t i = 0; i < s->nkept; i++) {
		const struct kept_range *k = &s->kept[i];
		int e;

		if (k->stat != (size_t)name_idx)
			continue;
		e = add_step(&s->res, &cap, k->pid, k->tid, k->start, k->end, &k->acc, k->launches);
		if (e)
			return e;
	}
	snprintf(s->res.name, sizeof(s->res.name), "%s", s->ranges[name_idx].name);
	s->res.source = STEPS_NVTX;
	return 0;
}

/* Whether the middle half of v (m values, sorted here) lies within
 * share of its median (a median of 0 never does). */
static bool quartiles_repeat(__u64 *v, size_t m, double share)
{
	qsort(v, m, sizeof(*v), cmp_u64);
	return v[m / 2] > 0 && (double)(v[(3 * m) / 4] - v[m / 4]) <= share * (double)v[m / 2];
}

/* The boundaries repeat: the time between them (interquartile range under
 * half the median), or the work (the launches between them, interquartile
 * range within a tenth of the median: a training step launches the same
 * kernels every time, which a host busy with other work does not change,
 * while it stretches the time of some steps by more than half). */
static bool periodic(const struct sthread *st)
{
	size_t n = st->nbounds, m;
	__u64 *iv;
	bool ok;

	if (n < STEPS_MIN + 1)
		return false;
	m = n - 1;
	iv = malloc(m * sizeof(*iv));
	if (!iv)
		return false;
	for (size_t i = 0; i < m; i++)
		iv[i] = st->bounds[i + 1].at - st->bounds[i].at;
	ok = quartiles_repeat(iv, m, 0.5 - 1e-9);
	for (size_t i = 0; i < m && !ok; i++)
		iv[i] = st->bounds[i + 1].r.launches - st->bounds[i].r.launches;
	ok = ok || quartiles_repeat(iv, m, 0.1);
	free(iv);
	return ok;
}

static int inferred_steps(struct steps *s)
{
	const struct sthread *best = NULL;
	struct reading prev;
	__u64 start;
	size_t cap = 0;

	for (size_t i = 0; i < s->nthreads; i++) {
		const struct sthread *st = &s->threads[i];

		if (st->first_launch.valid && st->t && (!best || st->t->launches > best->t->launches))
			best = st;
	}
	if (!best || !periodic(best))
		return 0;
	prev = best->first_launch;
	start = best->first_launch_ns;
	for (size_t i = 0; i < best->nbounds; i++) {
		const struct boundary *b = &best->bounds[i];
		struct tl_acc d;
		int e;

		tl_acc__diff(&b->r.acc, &prev.acc, &d);
		e = add_step(&s->res, &cap, best->pid, best->tid, start, b->at, &d, b->r.launches - prev.launches);
		if (e)
			return e;
		prev = b->r;
		start = b->at;
	}
	s->res.source = STEPS_INFERRED;
	s->res.syncs_per_step = best->stride ? best->stride : 1;
	snprintf(s->res.name, sizeof(s->res.name), "%s",
		 isr_cuda_fn(best->sync_fn) ? isr_cuda_fn(best->sync_fn)->symbol : "synchronization");
	return 0;
}

static int cmp_step_duration_desc(const void *a, const void *b, void *ctx)
{
	const struct step *steps = ctx;
	const struct step *x = &steps[*(const size_t *)a], *y = &steps[*(const size_t *)b];
	__u64 dx = x->end - x->start, dy = y->end - y->start;

	return dx > dy ? -1 : dx < dy ? 1 : x->index < y->index ? -1 : 1;
}

static int cmp_diff_desc(const void *a, const void *b)
{
	const struct step_diff *x = a, *y = b;

	return x->extra > y->extra ? -1 : x->extra < y->extra;
}

static __u64 median_of(__u64 *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median, spread and slowest steps, each with what grew. */
static int compare_steps(struct steps_result *res)
{
	size_t n = res->count, *order;
	__u64 *v = malloc(n * sizeof(*v)), sum = 0, med_launches;

	order = malloc(n * sizeof(*order));
	if (!v || !order) {
		free(v);
		free(order);
		return -ENOMEM;
	}
	for (int c = 0; c < TL_CAT_MAX; c++) {
		for (size_t i = 0; i < n; i++)
			v[i] = res->steps[i].acc.ns[c];
		res->median_acc.ns[c] = median_of(v, n);
	}
	for (size_t i = 0; i < n; i++)
		v[i] = res->steps[i].launches;
	med_launches = median_of(v, n);
	for (size_t i = 0; i < n; i++) {
		v[i] = res->steps[i].end - res->steps[i].start;
		sum += v[i];
		order[i] = i;
	}
	res->median_ns = median_of(v, n);
	res->mean_ns = sum / n;
	res->min_ns = v[0];
	res->max_ns = v[n - 1];
	res->p90_ns = v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
	qsort_r(order, n, sizeof(*order), cmp_step_duration_desc, res->steps);
	for (size_t k = 0; k < n && res->nslowest < STEPS_SLOWEST; k++) {
		const struct step *st = &res->steps[order[k]];
		struct step_slow *sl = &res->slowest[res->nslowest];
		__u64 d = st->end - st->start;

		if (d <= res->median_ns)
			break;
		memset(sl, 0, sizeof(*sl));
		sl->index = order[k];
		sl->ratio = res->median_ns ? (double)d / (double)res->median_ns : 0;
		sl->extra_ns = d - res->median_ns;
		struct step_diff cand[TL_CAT_MAX + 1];
		size_t nc = 0;

		for (int c = 0; c < TL_CAT_MAX; c++) {
			__s64 x = (__s64)st->acc.ns[c] - (__s64)res->median_acc.ns[c];

			/* a time that grew by a tenth of the extra or more */
			if (x > 0 && x * 10 >= (__s64)sl->extra_ns)
				cand[nc++] = (struct step_diff){ (enum tl_cat)c, x };
		}
		qsort(cand, nc, sizeof(*cand), cmp_diff_desc);
		/* launches: more than half the median again */
		if (st->launches > med_launches && (st->launches - med_launches) * 2 > med_launches && nc < 3)
			cand[nc++] = (struct step_diff){ TL_CAT_MAX, (__s64)(st->launches - med_launches) };
		sl->ndiffs = nc < 3 ? nc : 3;
		memcpy(sl->diffs, cand, sl->ndiffs * sizeof(*cand));
		res->nslowest++;
	}
	free(v);
	free(order);
	return 0;
}

int steps__finish(struct steps *s)
{
	long name_idx;
	int e = 0;

	/* ranges still open at the end are not steps: they have no end */
	name_idx = choose_nvtx_name(s);
	if (name_idx >= 0)
		e = nvtx_steps(s, name_idx);
	else
		e = inferred_steps(s);
	if (!e && s->res.count) {
		const struct tl_thread *t = timeline__thread(s->tl, s->res.steps[0].pid, s->res.steps[0].tid);

		s->res.pid = s->res.steps[0].pid;
		s->res.tid = s->res.steps[0].tid;
		for (size_t i = 0; !t && i < timeline__thread_count(s->tl); i++) {
			const struct tl_thread *x = timeline__thread_at(s->tl, i);

			if (x->tid == s->res.tid && x->pid == s->res.pid)
				t = x;
		}
		if (t)
			memcpy(s->res.comm, t->comm, sizeof(s->res.comm));
		e = compare_steps(&s->res);
	}
	if (e)
		return e;
	s->res.nranges = s->names.len;
	s->res.ranges = s->ranges;
	s->res.nmarks = s->mark_names.len;
	s->res.marks = s->marks;
	/* the kept ranges point at the stats by index: sort only now */
	if (s->res.nranges)
		qsort(s->ranges, s->res.nranges, sizeof(*s->ranges), cmp_range_total);
	if (s->res.nmarks)
		qsort(s->marks, s->res.nmarks, sizeof(*s->marks), cmp_mark_count);
	return 0;
}

const struct steps_result *steps__result(const struct steps *s)
{
	return &s->res;
}
