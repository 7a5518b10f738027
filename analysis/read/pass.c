// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pass (pass.h). In memory: the targets and clock fits first, then
 * every event's interval, sorted by start (file order breaks ties). Over a
 * file: the same targets and fits from a first walk, the bounds of a second,
 * and a min-heap of (start, file order) over copies of the events near the
 * read position.
 *
 * When an event may go (file walk): every event still unread starts no
 * earlier than S, the least start of the current chunk and all after it,
 * and no earlier than (the latest start read so far) - D, where D is the
 * most that any event from the current chunk on starts before the latest
 * start read before it. The heap's least event goes when its start is at
 * most S (an unread event of the same start comes later in file order) or
 * more than D before the latest start read. Both bounds come from the
 * walks before, per chunk (from the first when no clock fit moves an
 * event); D alone would hold the whole file back for one CUDA call written
 * at its return long after its entry, S alone would hold a chunk's worth
 * of events.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"
#include "buf.h"
#include "htab.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Events the pass let go are poisoned: a stage that kept a pointer to one
 * fails the sanitized tests. */
#define POISON(p, n)	ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)	((void)(p), (void)(n))
#define UNPOISON(p, n)	((void)(p), (void)(n))
#endif

/* The buffer's memory comes in segments; a segment is reused once every
 * event in it went. */
#define SEGMENT_BYTES	(1U << 20)

struct pid_fit {
	__u32 pid;
	struct clock_fit fit;
};

/* A GPU clock pair with where it was read, to fit in time order. */
struct clock_ref {
	__u32 pid;
	__u64 ts, idx;
	struct clock_sample s;
};

struct slot {
	__u64 start, end;
	__u64 idx;		/* file order */
	bool unmapped;
};

/* A buffered event of a file walk: what the heap orders, small to move;
 * the rest of its slot is in the buffer, before the copy of the event. */
struct held {
	__u64 start, idx;
	struct held_event *ev;
};

struct held_event {
	__u64 end;
	__u32 seg;
	bool unmapped;
	struct isr_ev_hdr h[];	/* 8-aligned: the struct's size is a multiple of 8 */
};
_Static_assert(sizeof(struct held_event) % 8 == 0, "held_event: events stay 8-aligned");

struct segment {
	unsigned char *mem;
	size_t used;		/* bytes handed out */
	size_t live;		/* events in it not yet let go */
};

/* What the second walk found of one EVENTS chunk, then of it and all after. */
struct chunk_bound {
	__u64 least;		/* least start */
	__u64 behind;		/* most an event starts before the latest start read before it */
};

struct pass {
	const struct recording *r;
	__u64 start, end;
	unsigned char *targets;	/* bitmap over pids below PASS_PID_LIMIT; NULL: none */
	struct pid_fit *fits;	/* sorted by pid */
	size_t nfits;
	struct clock_ref *clocks;	/* collected, until the fits are made */
	size_t nclocks, clocks_cap;
	__u64 clocks_cut;
	unsigned char *tids;	/* bitmap over tids below PASS_PID_LIMIT: let through */
	size_t ntids;
	__u64 thread_events_cut;
	struct tasks *tasks;
	struct task_change change;	/* the latest event's */
	bool finished;			/* the last event was served */
	__u64 unread;		/* events served none: unknown types, or too short for theirs */
	__u64 unread_by_type[ISR_EV_TYPE_MAX];
	__u64 nevents;
	struct htab gpu_last;		/* pid -> the latest GPU end of its CUPTI records (GPU clock) */
	struct htab gpu_flushed;	/* pid -> the latest FLUSHED status of its bridge (CPU clock) */
	char err[512];

	/* in memory */
	struct slot *order;
	size_t n, next;

	/* over a file */
	char *path;		/* for pass__reopen */
	struct rec_file *file;
	struct chunk_bound *bounds;	/* per EVENTS chunk: of it and every chunk after it */
	size_t bounds_cap;
	struct rec_events chunk;	/* being read */
	size_t chunk_pos;
	__u64 chunk_idx;	/* file order of the chunk's next event */
	bool read_all;
	__u64 least, behind;	/* the current chunk's bounds */
	__u64 latest;		/* the latest start read */
	__u64 served;		/* the start of the latest event served */
	struct held *heap;	/* min-heap on (start, idx) */
	size_t nheap, heap_cap;
	struct segment *segs;
	size_t nsegs, segs_cap;
	__u32 *free_segs;
	size_t nfree, free_cap;
	__u32 cur_seg;
	size_t bound;		/* the buffer's bound */
	struct held last;	/* served, let go at the next call */
	bool has_last;
	__u64 out_of_order;
};

/* A record this version reads (the reader refuses a short one of a known
 * type in a file; a recording in memory is checked here). */
static bool usable(const struct isr_ev_hdr *h)
{
	return isr_event_usable(h, h->size);
}

static void pass__fail(struct pass *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tasks_open(struct pass *p);

static void pass__fail(struct pass *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

/* ---- what the first walk collects -------------------------------------------------- */

static int target_add(struct pass *p, __u32 pid)
{
	if (!pid || pid >= PASS_PID_LIMIT)
		return 0;
	if (!p->targets) {
		p->targets = calloc(PASS_PID_LIMIT / 8, 1);
		if (!p->targets)
			return -ENOMEM;
	}
	p->targets[pid / 8] |= (unsigned char)(1U << (pid % 8));
	return 0;
}

bool pass__is_target(const struct pass *p, __u32 pid)
{
	return pid && pid < PASS_PID_LIMIT && p->targets && (p->targets[pid / 8] & (1U << (pid % 8)));
}

/* The GPU interval of a CUPTI record, if h is one: its GPU start and end. */
static bool gpu_times(const struct isr_ev_hdr *h, __u64 *start, __u64 *end)
{
	return usable(h) && isr_ev_interval(h, start, end) == ISR_CLOCK_GPU;
}

/* Raises pid's value in h to v. */
static int raise_to(struct htab *h, __u32 pid, __u64 v)
{
	__u64 old;

	if (htab_u64__get(h, pid, &old) && old >= v)
		return 0;
	return htab_u64__put(h, pid, v);
}

/* Every pid named by the recording's processes, by an event that only
 * targets emit, or as a child the recorder followed; and every GPU clock
 * pair. idx: the event's place in file order. */
static int collect(struct pass *p, const struct isr_ev_hdr *h, __u64 idx)
{
	const struct isr_ev_proc_fork *f = (const void *)h;
	const struct isr_ev_gpu_clock *c = (const void *)h;
	struct clock_ref *ref;
	__u64 g0, g1;
	int err = 0;

	if (!usable(h))
		return 0;
	if (gpu_times(h, &g0, &g1))
		err = raise_to(&p->gpu_last, h->pid, g1 > g0 ? g1 : g0);
	else if ((h->type == ISR_EV_GPU_STATUS && ((const struct isr_ev_gpu_status *)h)->state == ISR_GPU_FLUSHED) ||
		 h->type == ISR_EV_GPU_WINDOW)
		err = raise_to(&p->gpu_flushed, h->pid, h->ts_ns);
	if (err)
		return err;
	if (h->type == ISR_EV_GPU_CLOCK) {
		if (c->mono_after_ns < c->mono_before_ns)
			return 0;
		if (p->nclocks == PASS_MAX_CLOCK_PAIRS) {
			p->clocks_cut++;
			return 0;
		}
		err = array__reserve(&p->clocks, &p->clocks_cap, p->nclocks + 1, sizeof(*p->clocks));
		if (err)
			return err;
		ref = &p->clocks[p->nclocks++];
		ref->pid = h->pid;
		ref->ts = h->ts_ns;
		ref->idx = idx;
		ref->s.gpu_ns = c->gpu_ns;
		ref->s.mono_before_ns = c->mono_before_ns;
		ref->s.mono_after_ns = c->mono_after_ns;
	}
	if (isr_event_flags(h->type) & ISR_EVF_ANY_TASK)
		return 0;
	err = target_add(p, h->pid);
	if (!err && h->type == ISR_EV_PROC_FORK && (f->flags & (ISR_FORK_FOLLOWED | ISR_FORK_THREAD)))
		err = target_add(p, f->child_pid);
	return err;
}

/* Whether events naming thread tid go through: one already let through,
 * or a new one while there is room. */
static bool thread_admit(struct pass *p, __u32 tid)
{
	if (!tid)
		return true;
	if (tid >= PASS_PID_LIMIT)
		return false;
	if (p->tids[tid / 8] & (1U << (tid % 8)))
		return true;
	if (p->ntids == PASS_MAX_THREADS)
		return false;
	p->tids[tid / 8] |= (unsigned char)(1U << (tid % 8));
	p->ntids++;
	return true;
}

/* Whether every thread e names goes through (pass.h: PASS_MAX_THREADS):
 * its own, the one it is about and the other one it names. */
static bool event_admit(struct pass *p, const struct isr_ev_hdr *h)
{
	struct isr_task t = { 0, 0 }, peer = { 0, 0 };

	if (usable(h)) {
		isr_ev_task(h, &t);
		isr_ev_peer(h, &peer);
	}
	if (thread_admit(p, h->tid) && thread_admit(p, t.tid) && thread_admit(p, peer.tid))
		return true;
	p->thread_events_cut++;
	return false;
}

static int fit_cmp(const void *a, const void *b)
{
	const struct pid_fit *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* By process, then in time order (file order breaks ties): the order the
 * GPU summary fitted them in before the pass fitted them for everyone. */
static int clock_cmp(const void *a, const void *b)
{
	const struct clock_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The targets of the recording's processes, the threads they list, and
 * one fit per process from the clock pairs collected. */
static int collect_finish(struct pass *p)
{
	const struct recording *r = p->r;
	struct clock_sample *s = NULL;
	size_t i, j;
	int err = 0;

	p->tids = calloc(PASS_PID_LIMIT / 8, 1);
	if (!p->tids)
		return -ENOMEM;
	for (i = 0; i < r->process_count && !err; i++) {
		err = target_add(p, r->processes[i].pid);
		for (j = 0; j < r->processes[i].thread_count; j++)
			thread_admit(p, r->processes[i].threads[j].tid);
	}
	if (err || !p->nclocks)
		goto out;
	qsort(p->clocks, p->nclocks, sizeof(*p->clocks), clock_cmp);
	s = malloc(p->nclocks * sizeof(*s));
	p->fits = calloc(p->nclocks, sizeof(*p->fits));
	if (!s || !p->fits) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nclocks; i = j) {
		size_t k = 0;

		for (j = i; j < p->nclocks && p->clocks[j].pid == p->clocks[i].pid; j++)
			s[k++] = p->clocks[j].s;
		err = clock_fit__compute(s, k, &p->fits[p->nfits].fit);
		if (err)
			goto out;
		p->fits[p->nfits++].pid = p->clocks[i].pid;
	}
out:
	free(s);
	free(p->clocks);
	p->clocks = NULL;
	p->nclocks = 0;
	return err;
}

bool pass__gpu_complete_until(const struct pass *p, __u32 pid, __u64 *until)
{
	const struct clock_fit *f = pass__fit(p, pid);
	__u64 last = 0, flushed = 0;
	bool any = false;

	if (f && htab_u64__get(&p->gpu_last, pid, &last)) {
		last = clock_fit__apply(f, last);
		any = true;
	}
	if (htab_u64__get(&p->gpu_flushed, pid, &flushed))
		any = true;
	*until = last > flushed ? last : flushed;
	return any;
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

/* ---- intervals --------------------------------------------------------------------- */

/* The event's interval (format/registry.h), a GPU record's mapped through
 * its process's clock fit. */
static void interval_of(const struct pass *p, const struct isr_ev_hdr *h, struct slot *s)
{
	const struct clock_fit *f;
	__u64 a, b;

	s->start = s->end = h->ts_ns;
	s->unmapped = false;
	if (!usable(h))
		return;
	if (isr_ev_interval(h, &a, &b) == ISR_CLOCK_CPU) {
		s->start = a;
		s->end = b;
		return;
	}
	f = pass__fit(p, h->pid);
	if (!f) {
		s->unmapped = true;
		return;
	}
	s->start = clock_fit__apply(f, a);
	s->end = b > a ? clock_fit__apply(f, b) : s->start;
	if (s->end < s->start)
		s->end = s->start;
}

/* The window: the HOST chunk's start (else the first start) to END's time
 * (else the last start). */
static void window(struct pass *p, __u64 first, __u64 last)
{
	p->start = p->r->host.start_mono_ns;
	p->end = p->r->end_mono_ns;
	if (!p->start && p->nevents)
		p->start = first;
	if (!p->end && p->nevents)
		p->end = last;
	if (p->end < p->start)
		p->end = p->start;
}

/* ---- in memory ---------------------------------------------------------------------- */

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

int pass__open(const struct recording *r, struct pass **out)
{
	struct pass *p = calloc(1, sizeof(*p));
	int err = 0;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->r = r;
	p->nevents = r->event_count;
	for (size_t i = 0; i < r->event_count && !err; i++)
		err = collect(p, r->events[i], i);
	err = err ?: collect_finish(p);
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
	window(p, p->n ? p->order[0].start : 0, p->n ? p->order[p->n - 1].start : 0);
	err = tasks_open(p);
	if (err) {
		pass__free(p);
		return err;
	}
	*out = p;
	return 0;
}

/* ---- over a file: the walks before the pass ---------------------------------------- */

/* The events of a chunk one by one: the next, or NULL after the last. */
static const struct isr_ev_hdr *chunk__event(const struct rec_events *c, size_t *pos)
{
	const struct isr_ev_hdr *h;

	if (*pos >= c->len)
		return NULL;
	h = (const void *)(c->data + *pos);
	*pos += h->size;
	return h;
}

/* Per chunk: its least start and how far it runs behind the latest start
 * before it (*latest: the latest start read so far, carried over). */
static void chunk__bounds(const struct pass *p, const struct rec_events *c, __u64 *latest,
			  struct chunk_bound *b, __u64 *first, __u64 *last)
{
	const struct isr_ev_hdr *h;
	size_t pos = 0;
	struct slot s;

	b->least = UINT64_MAX;
	b->behind = 0;
	while ((h = chunk__event(c, &pos))) {
		interval_of(p, h, &s);
		if (s.start < b->least)
			b->least = s.start;
		if (s.start > *latest)
			*latest = s.start;
		else if (*latest - s.start > b->behind)
			b->behind = *latest - s.start;
		if (s.start < *first)
			*first = s.start;
		if (s.start > *last)
			*last = s.start;
	}
}

/* The bounds of the first n EVENTS chunks, *nb of them so far: those not
 * walked yet bound nothing (a chunk the first walk skips, with no events in
 * it, is read again after the rewind: its bound must be there). 0 or
 * -ENOMEM. */
static int bounds_upto(struct pass *p, size_t *nb, size_t n)
{
	if (n <= *nb)
		return 0;
	if (array__reserve(&p->bounds, &p->bounds_cap, n, sizeof(*p->bounds)))
		return -ENOMEM;
	for (; *nb < n; (*nb)++)
		p->bounds[*nb] = (struct chunk_bound){ .least = UINT64_MAX, .behind = 0 };
	return 0;
}

/* Walk 1: the metadata (rec_file), the targets, the clock pairs; the
 * bounds as if no process had a fit, and whether a fit would move an
 * event (a GPU record). */
static int walk_collect(struct pass *p, __u64 *first, __u64 *last, bool *gpu)
{
	struct rec_events c;
	__u64 latest = 0, g0, g1;
	int ret = 0, err = 0;
	size_t nb = 0;

	while (!err && (ret = rec_file__next_events(p->file, &c, p->err, sizeof(p->err))) > 0) {
		const struct isr_ev_hdr *h;
		size_t pos = 0;

		err = bounds_upto(p, &nb, c.index + 1);
		if (err)
			break;
		while (!err && (h = chunk__event(&c, &pos))) {
			err = collect(p, h, p->nevents++);
			*gpu = *gpu || gpu_times(h, &g0, &g1);
		}
		chunk__bounds(p, &c, &latest, &p->bounds[c.index], first, last);
	}
	if (!err && !ret)
		err = bounds_upto(p, &nb, rec_file__events_chunks(p->file));
	if (err) {
		pass__fail(p, "out of memory after %llu events", (unsigned long long)p->nevents);
		return err;
	}
	return ret;
}

/* Walk 2: the bounds with the fits. */
static int walk_bounds(struct pass *p, __u64 *first, __u64 *last)
{
	struct rec_events c;
	__u64 latest = 0;
	int ret;

	*first = UINT64_MAX;
	*last = 0;
	ret = rec_file__rewind(p->file, p->err, sizeof(p->err));
	if (ret)
		return ret;
	while ((ret = rec_file__next_events(p->file, &c, p->err, sizeof(p->err))) > 0)
		chunk__bounds(p, &c, &latest, &p->bounds[c.index], first, last);
	return ret;
}

int pass__open_file(const char *path, const struct pass_opts *opts, struct pass **out, char *err,
		    size_t errlen)
{
	struct pass *p = calloc(1, sizeof(*p));
	__u64 first = UINT64_MAX, last = 0;
	bool gpu = false;
	size_t n;
	int ret;

	*out = NULL;
	if (!p) {
		snprintf(err, errlen, "out of memory before reading");
		return -ENOMEM;
	}
	p->path = strdup(path);
	ret = p->path ? rec_file__open(path, &p->file, err, errlen) : -ENOMEM;
	if (ret) {
		if (!p->path)
			snprintf(err, errlen, "out of memory before reading");
		pass__free(p);
		return ret;
	}
	p->r = rec_file__recording(p->file);
	p->bound = opts && opts->buffer_bytes ? opts->buffer_bytes : PASS_BUFFER_BYTES;
	ret = walk_collect(p, &first, &last, &gpu);
	if (!ret) {
		ret = collect_finish(p);
		if (ret)
			pass__fail(p, "out of memory fitting the GPU clocks");
	}
	if (!ret && gpu && p->nfits)
		ret = walk_bounds(p, &first, &last);
	ret = ret ?: rec_file__rewind(p->file, p->err, sizeof(p->err));
	if (ret) {
		snprintf(err, errlen, "%s", p->err);
		pass__free(p);
		return ret;
	}
	/* from each chunk on: the least start, the most behind */
	n = rec_file__events_chunks(p->file);
	for (size_t i = n; i-- > 1;) {
		if (p->bounds[i].least < p->bounds[i - 1].least)
			p->bounds[i - 1].least = p->bounds[i].least;
		if (p->bounds[i].behind > p->bounds[i - 1].behind)
			p->bounds[i - 1].behind = p->bounds[i].behind;
	}
	window(p, first, last);
	p->read_all = !n;
	if (tasks_open(p)) {
		snprintf(err, errlen, "out of memory with %zu processes", p->r->process_count);
		pass__free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

/* ---- over a file: the buffer --------------------------------------------------------- */

static bool held_before(const struct held *a, const struct held *b)
{
	return a->start < b->start || (a->start == b->start && a->idx < b->idx);
}

static void heap_up(struct held *v, size_t i)
{
	struct held x = v[i];

	while (i) {
		size_t up = (i - 1) / 2;

		if (!held_before(&x, &v[up]))
			break;
		v[i] = v[up];
		i = up;
	}
	v[i] = x;
}

static void heap_down(struct held *v, size_t n, size_t i)
{
	struct held x = v[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && held_before(&v[c + 1], &v[c]))
			c++;
		if (!held_before(&v[c], &x))
			break;
		v[i] = v[c];
		i = c;
	}
	v[i] = x;
}

/* Room for size bytes in the buffer: in the current segment, else in a
 * free one, else in a new one. NULL when out of memory. */
static void *buffer__alloc(struct pass *p, size_t size, __u32 *seg)
{
	struct segment *s = p->nsegs ? &p->segs[p->cur_seg] : NULL;
	void *mem;

	if (!s || s->used + size > SEGMENT_BYTES) {
		if (s && !s->live) {
			s->used = 0;
		} else if (p->nfree) {
			p->cur_seg = p->free_segs[--p->nfree];
		} else {
			if (array__reserve(&p->segs, &p->segs_cap, p->nsegs + 1, sizeof(*p->segs)))
				return NULL;
			s = &p->segs[p->nsegs];
			memset(s, 0, sizeof(*s));
			s->mem = malloc(SEGMENT_BYTES);
			if (!s->mem)
				return NULL;
			POISON(s->mem, SEGMENT_BYTES);
			p->cur_seg = (__u32)p->nsegs++;
		}
		s = &p->segs[p->cur_seg];
	}
	mem = s->mem + s->used;
	UNPOISON(mem, size);
	s->used += size;
	s->live++;
	*seg = p->cur_seg;
	return mem;
}

/* An event served is let go: its segment is free once it holds no other. */
static int buffer__release(struct pass *p, struct held_event *e)
{
	__u32 seg = e->seg;
	struct segment *s = &p->segs[seg];

	POISON(e, sizeof(*e) + e->h->size);
	if (--s->live || seg == p->cur_seg)
		return 0;
	s->used = 0;
	if (array__reserve(&p->free_segs, &p->free_cap, p->nfree + 1, sizeof(*p->free_segs)))
		return -ENOMEM;
	p->free_segs[p->nfree++] = seg;
	return 0;
}

/* Reads the next event into the buffer (the next chunk when this one is
 * done). 0, or -errno. */
static int buffer__read(struct pass *p)
{
	const struct isr_ev_hdr *h;
	struct held e;
	struct slot s;
	__u32 seg;
	int ret;

	while (!(h = chunk__event(&p->chunk, &p->chunk_pos))) {
		ret = rec_file__next_events(p->file, &p->chunk, p->err, sizeof(p->err));
		if (ret < 0)
			return ret;
		if (!ret) {
			p->read_all = true;
			return 0;
		}
		p->chunk_pos = 0;
		p->least = p->bounds[p->chunk.index].least;
		p->behind = p->bounds[p->chunk.index].behind;
	}
	interval_of(p, h, &s);
	if (s.start > p->latest)
		p->latest = s.start;
	if (s.start < p->served) {
		p->out_of_order++;
		s.start = p->served;
		if (s.end < s.start)
			s.end = s.start;
	}
	if (array__reserve(&p->heap, &p->heap_cap, p->nheap + 1, sizeof(*p->heap)))
		goto nomem;
	e.ev = buffer__alloc(p, sizeof(*e.ev) + h->size, &seg);
	if (!e.ev)
		goto nomem;
	e.start = s.start;
	e.idx = p->chunk_idx++;
	e.ev->end = s.end;
	e.ev->seg = seg;
	e.ev->unmapped = s.unmapped;
	memcpy(e.ev->h, h, h->size);
	p->heap[p->nheap++] = e;
	heap_up(p->heap, p->nheap - 1);
	return 0;
nomem:
	pass__fail(p, "out of memory with %zu events buffered", p->nheap);
	return -ENOMEM;
}

/* Whether the buffer's earliest event may go: nothing unread can start
 * before it, or the buffer is at its bound (segments in use and heap). */
static bool buffer__ready(const struct pass *p)
{
	const struct held *top = &p->heap[0];
	size_t used = (p->nsegs - p->nfree) * (size_t)SEGMENT_BYTES + p->nheap * sizeof(*p->heap);

	return p->read_all || top->start <= p->least || p->latest - top->start > p->behind ||
	       used > p->bound;
}

static int pass__next_file(struct pass *p, struct pass_event *e)
{
	int ret;

	if (p->has_last) {
		p->has_last = false;
		ret = buffer__release(p, p->last.ev);
		if (ret) {
			pass__fail(p, "out of memory letting an event go");
			return ret;
		}
	}
	while (!p->nheap || !buffer__ready(p)) {
		if (p->read_all)
			return 0;
		ret = buffer__read(p);
		if (ret)
			return ret;
	}
	p->last = p->heap[0];
	p->has_last = true;
	p->heap[0] = p->heap[--p->nheap];
	if (p->nheap)
		heap_down(p->heap, p->nheap, 0);
	p->served = p->last.start;
	e->h = p->last.ev->h;
	e->start = p->last.start;
	e->end = p->last.ev->end;
	e->unmapped = p->last.ev->unmapped;
	return 1;
}

/* ---- the pass ------------------------------------------------------------------------ */

static int pass__next_memory(struct pass *p, struct pass_event *e)
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

/* An event this version cannot read is counted, not served. */
static bool served(struct pass *p, const struct isr_ev_hdr *h)
{
	if (!event_admit(p, h))
		return false;
	if (usable(h))
		return true;
	p->unread++;
	if (h->type < ISR_EV_TYPE_MAX)
		p->unread_by_type[h->type]++;
	return false;
}

int pass__next(struct pass *p, struct pass_event *e)
{
	int n;

	while ((n = p->file ? pass__next_file(p, e) : pass__next_memory(p, e)) > 0 && !served(p, e->h))
		;
	if (n > 0 && tasks__event(p->tasks, e->h, &p->change)) {
		pass__fail(p, "out of memory with %zu threads known", tasks__count(p->tasks));
		return -ENOMEM;
	}
	e->tasks = &p->change;
	if (!n && !p->finished) {
		tasks__finish(p->tasks);
		p->finished = true;
	}
	return n;
}

const struct tasks *pass__tasks(const struct pass *p)
{
	return p->tasks;
}

static bool target_of(const void *ctx, __u32 pid)
{
	return pass__is_target(ctx, pid);
}

/* The task model, once the window and the targets are known. */
static int tasks_open(struct pass *p)
{
	struct tasks_opts o = { .start = p->start, .end = p->end, .r = p->r, .is_target = target_of, .ctx = p };

	p->tasks = tasks__new(&o);
	return p->tasks ? 0 : -ENOMEM;
}

__u64 pass__unread(const struct pass *p, __u64 by_type[ISR_EV_TYPE_MAX])
{
	memcpy(by_type, p->unread_by_type, sizeof(p->unread_by_type));
	return p->unread;
}

const char *pass__error(const struct pass *p)
{
	return p->err[0] ? p->err : NULL;
}

void pass__free(struct pass *p)
{
	if (!p)
		return;
	free(p->targets);
	free(p->tids);
	free(p->fits);
	free(p->clocks);
	free(p->order);
	rec_file__close(p->file);
	htab__free(&p->gpu_last);
	htab__free(&p->gpu_flushed);
	free(p->path);
	free(p->bounds);
	free(p->heap);
	for (size_t i = 0; i < p->nsegs; i++) {
		UNPOISON(p->segs[i].mem, SEGMENT_BYTES);
		free(p->segs[i].mem);
	}
	free(p->segs);
	free(p->free_segs);
	tasks__free(p->tasks);
	free(p);
}

int pass__reopen(const struct pass *p, struct pass **out, char *err, size_t errlen)
{
	struct pass_opts opts = { .buffer_bytes = p->bound };

	if (!p->path) {
		int ret = pass__open(p->r, out);

		if (ret)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	return pass__open_file(p->path, &opts, out, err, errlen);
}

const struct recording *pass__recording(const struct pass *p)
{
	return p->r;
}

__u64 pass__start(const struct pass *p)
{
	return p->start;
}

__u64 pass__end(const struct pass *p)
{
	return p->end;
}

__u64 pass__out_of_order(const struct pass *p)
{
	return p->out_of_order;
}

__u64 pass__clock_pairs_cut(const struct pass *p)
{
	return p->clocks_cut;
}

__u64 pass__thread_events_cut(const struct pass *p)
{
	return p->thread_events_cut;
}
