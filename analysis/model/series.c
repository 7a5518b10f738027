// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The series (series.h): gaps spread over the buckets they cover with the
 * attribution's split, thread spans folded into one state per bucket as
 * they come (a thread's spans come in time order), memory carried from
 * bucket to bucket.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"
#include "devmem.h"
#include "htab.h"

struct dev {
	struct series_device pub;
	__u64 first;		/* start of its observation: 0 until known */
	bool started;
};

struct strip {
	struct series_thread pub;
	const struct tl_thread *th;
	size_t cur;			/* the bucket being folded */
	bool open;
	__u64 acc[CAUSE_MAX];
	__u16 samples[SERIES_BUCKETS], python[SERIES_BUCKETS];
};

struct mem {
	struct series_memory pub;
	size_t cur;			/* the latest bucket written */
	__u64 live;
};

struct series {
	const struct pass *pass;
	struct timeline *tl;
	struct attribution *attr;
	struct htab py_stacks;		/* stack id -> 1: the stacks with a Python frame */
	__u64 start, end, width;
	struct htab by_dev;		/* pid << 32 | device -> index */
	struct dev **devs;
	size_t ndevs;
	struct htab by_thread;		/* tl_thread pointer -> index */
	struct strip **strips;
	size_t nstrips;
	struct htab by_pid;		/* pid -> index in mems */
	struct mem **mems;
	size_t nmems;
	struct devmem *dm;
	struct tl_observer obs;
	int err;
};

static size_t bucket(const struct series *s, __u64 t)
{
	__u64 b = t > s->start ? (t - s->start) / s->width : 0;

	return b >= SERIES_BUCKETS ? SERIES_BUCKETS - 1 : (size_t)b;
}

static __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static __u64 bucket_start(const struct series *s, size_t b)
{
	return s->start + (__u64)b * s->width;
}

/* The end of bucket b: the last one runs to the end of the window. */
static __u64 bucket_end(const struct series *s, size_t b)
{
	return b + 1 == SERIES_BUCKETS ? (s->end > s->start ? s->end : s->start + 1) : bucket_start(s, b + 1);
}

/* Grows *arr (of pointers) by one slot; false when out of memory. */
static bool push(void *arr, size_t n, void *item)
{
	void ***a = arr, **v;

	if (n && (n & (n - 1)))	/* room left below the next power of two */
		goto store;
	v = reallocarray(*a, n ? 2 * n : 1, sizeof(**a));
	if (!v)
		return false;
	*a = v;
store:
	(*a)[n] = item;
	return true;
}

static struct dev *dev_of(struct series *s, __u32 pid, __u32 device)
{
	__u64 key = (__u64)pid << 32 | device, idx;
	struct dev *d;

	if (htab_u64__get(&s->by_dev, key, &idx))
		return s->devs[idx];
	d = calloc(1, sizeof(*d));
	if (!d || !push(&s->devs, s->ndevs, d) || htab_u64__put(&s->by_dev, key, s->ndevs)) {
		free(d);
		return NULL;
	}
	s->ndevs++;
	d->pub.pid = pid;
	d->pub.device = device;
	return d;
}

static void dev_started(struct dev *d, __u64 at)
{
	if (!d->started || at < d->first)
		d->first = at;
	d->started = true;
}

static void on_gap(void *ctx, const struct tl_gap *g, const __u64 split[CAUSE_MAX])
{
	struct series *s = ctx;
	struct dev *d;
	__u64 len = g->end - g->start;

	if (s->err || !len)
		return;
	d = dev_of(s, g->pid, g->device);
	if (!d) {
		s->err = -ENOMEM;
		return;
	}
	if (g->leading)
		dev_started(d, g->start);
	for (size_t b = bucket(s, g->start); b <= bucket(s, g->end - 1); b++) {
		double part = (double)overlap(g->start, g->end, bucket_start(s, b), bucket_end(s, b)) / (double)len;

		if (g->leading) {
			d->pub.idle_ns[b][SERIES_BEFORE_FIRST] += (__u64)(part * (double)len);
			continue;
		}
		for (int c = 0; c < CAUSE_MAX; c++)
			if (split[c])
				d->pub.idle_ns[b][c] += (__u64)(part * (double)split[c]);
	}
}

static struct strip *strip_of(struct series *s, const struct tl_thread *th)
{
	__u64 key = (__u64)(uintptr_t)th, idx;
	struct strip *st;

	if (htab_u64__get(&s->by_thread, key, &idx))
		return s->strips[idx];
	if (s->nstrips >= SERIES_MAX_THREADS)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st || !push(&s->strips, s->nstrips, st) || htab_u64__put(&s->by_thread, key, s->nstrips)) {
		free(st);
		s->err = -ENOMEM;
		return NULL;
	}
	s->nstrips++;
	st->th = th;
	st->pub.pid = th->pid;
	st->pub.tid = th->tid;
	memset(st->pub.state, SERIES_NO_STATE, sizeof(st->pub.state));
	return st;
}

/* The state of the folded bucket: the cause it spent most time in. */
static void strip_flush(struct strip *st)
{
	int best = -1;

	if (!st->open)
		return;
	for (int c = 0; c < CAUSE_MAX; c++)
		if (st->acc[c] && (best < 0 || st->acc[c] > st->acc[best]))
			best = c;
	if (best >= 0)
		st->pub.state[st->cur] = (__u8)best;
	memset(st->acc, 0, sizeof(st->acc));
	st->open = false;
}

static void on_span(void *ctx, const struct tl_span *sp)
{
	struct series *s = ctx;
	enum cause c = cause_of_category(sp->cat);
	__u64 a = sp->start < s->start ? s->start : sp->start, e = sp->end > s->end ? s->end : sp->end;
	struct strip *st;

	if (s->err || e <= a)
		return;
	st = strip_of(s, sp->thread);
	if (!st)
		return;
	for (size_t b = bucket(s, a); b <= bucket(s, e - 1); b++) {
		if (st->open && st->cur != b)
			strip_flush(st);
		st->cur = b;
		st->open = true;
		st->acc[c] += overlap(a, e, bucket_start(s, b), bucket_end(s, b));
	}
}

/* Whether stack id has a Python frame: its ISR_EV_PY_STACK came before
 * (the recorder writes a stack just before the first sample naming it, at
 * the same time, and file order breaks ties). */
static bool python_stack(const struct series *s, __u32 id)
{
	__u64 v;

	return htab_u64__get(&s->py_stacks, id, &v);
}

static struct mem *mem_of(struct series *s, __u32 pid)
{
	struct mem *m;
	__u64 idx;

	if (htab_u64__get(&s->by_pid, pid, &idx))
		return s->mems[idx];
	m = calloc(1, sizeof(*m));
	if (!m || !push(&s->mems, s->nmems, m) || htab_u64__put(&s->by_pid, pid, s->nmems)) {
		free(m);
		return NULL;
	}
	s->nmems++;
	m->pub.pid = pid;
	return m;
}

static void mem_set(struct mem *m, size_t b, __u64 live)
{
	for (size_t k = m->cur + 1; k <= b; k++)
		m->pub.max_bytes[k] = m->live;
	if (b > m->cur)
		m->cur = b;
	m->live = live;
	if (live > m->pub.max_bytes[m->cur])
		m->pub.max_bytes[m->cur] = live;
	if (live > m->pub.peak)
		m->pub.peak = live;
}

static void on_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct series *s = ctx;
	const struct isr_ev_hdr *h = e->h;
	struct isr_gpu_work w;
	__u32 pid;
	__u64 live;
	int r;

	if (s->err)
		return;
	if (isr_ev_gpu_work(h, &w)) {
		struct dev *d;

		if (e->unmapped)
			return;
		d = dev_of(s, h->pid, w.device);
		if (!d) {
			s->err = -ENOMEM;
			return;
		}
		dev_started(d, e->start < s->start ? s->start : e->start > s->end ? s->end : e->start);
		return;
	}
	switch (h->type) {
	case ISR_EV_PY_STACK: {
		const struct isr_ev_py_stack *ps = (const void *)h;

		if (ps->depth && htab_u64__put(&s->py_stacks, ps->stack_id, 1))
			s->err = -ENOMEM;
		return;
	}
	case ISR_EV_PY_SAMPLE: {
		const struct isr_ev_py_sample *ps = (const void *)h;
		struct strip *st;
		size_t b;

		if (!th || ps->kind != ISR_PY_KIND_TIMER || !(st = strip_of(s, th)))
			return;
		b = bucket(s, e->start);
		if (st->samples[b] < UINT16_MAX) {
			st->samples[b]++;
			st->python[b] += python_stack(s, ps->stack_id);
		}
		return;
	}
	default:
		break;
	}
	r = devmem__event(s->dm, h, e->tasks, &pid, &live);
	if (r < 0) {
		s->err = r;
	} else if (r) {
		struct mem *m = mem_of(s, pid);

		if (!m)
			s->err = -ENOMEM;
		else
			mem_set(m, bucket(s, e->start), live);
	}
}

struct series *series__new(const struct pass *p, struct timeline *tl, struct attribution *attr)
{
	struct series *s = calloc(1, sizeof(*s));
	struct attr_gap_hook hook;

	if (!s)
		return NULL;
	s->pass = p;
	s->tl = tl;
	s->attr = attr;
	s->start = pass__start(p);
	s->end = pass__end(p);
	s->width = (s->end - s->start + SERIES_BUCKETS - 1) / SERIES_BUCKETS;
	if (!s->width)
		s->width = 1;
	s->dm = devmem__new();
	s->obs = (struct tl_observer){ .ctx = s, .span = on_span, .event = on_event };
	if (!s->dm || timeline__observe(tl, &s->obs)) {
		series__free(s);
		errno = ENOMEM;
		return NULL;
	}
	hook = (struct attr_gap_hook){ .ctx = s, .gap = on_gap };
	attribution__on_gap(attr, &hook);
	return s;
}

/* Running time of a device's gaps into Python and native, with the share
 * the attribution found for the device as a whole. */
static void split_python(struct series *s, struct dev *d)
{
	for (size_t i = 0; i < attribution__device_count(s->attr); i++) {
		const struct attr_device *ad = attribution__device_at(s->attr, i);
		__u64 running = ad->idle_ns[CAUSE_PYTHON] + ad->idle_ns[CAUSE_NATIVE];
		double share;

		if (ad->pid != d->pub.pid || ad->device != d->pub.device)
			continue;
		share = running ? (double)ad->idle_ns[CAUSE_PYTHON] / (double)running : 0;
		for (size_t b = 0; b < SERIES_BUCKETS; b++) {
			__u64 py = (__u64)(share * (double)d->pub.idle_ns[b][CAUSE_NATIVE]);

			d->pub.idle_ns[b][CAUSE_PYTHON] += py;
			d->pub.idle_ns[b][CAUSE_NATIVE] -= py;
		}
	}
}

static void dev_busy(struct series *s, struct dev *d)
{
	__u64 end = s->end;

	for (size_t i = 0; i < timeline__device_count(s->tl); i++) {
		struct tl_device td;

		timeline__device(s->tl, i, &td);
		if (td.pid == d->pub.pid && td.device == d->pub.device)
			end = d->first + td.observed_ns;
	}
	for (size_t b = 0; d->started && b < SERIES_BUCKETS; b++) {
		__u64 span = overlap(d->first, end, bucket_start(s, b), bucket_end(s, b)), idle = 0;

		for (int c = 0; c < SERIES_IDLE_KINDS; c++)
			idle += d->pub.idle_ns[b][c];
		d->pub.busy_ns[b] = span > idle ? span - idle : 0;
	}
}

/* Buckets where the thread mostly ran: Python when most of its samples
 * there had a Python frame; without samples, as the latest bucket with. */
static void strip_finish(struct strip *st)
{
	enum cause last = CAUSE_NATIVE;

	strip_flush(st);
	memcpy(st->pub.comm, st->th->comm, sizeof(st->pub.comm));
	for (size_t b = 0; b < SERIES_BUCKETS; b++) {
		if (st->samples[b])
			last = 2 * st->python[b] >= st->samples[b] ? CAUSE_PYTHON : CAUSE_NATIVE;
		if (st->pub.state[b] == CAUSE_NATIVE)
			st->pub.state[b] = (__u8)last;
	}
}

int series__finish(struct series *s)
{
	if (s->err)
		return s->err;
	for (size_t i = 0; i < s->ndevs; i++) {
		split_python(s, s->devs[i]);
		dev_busy(s, s->devs[i]);
	}
	for (size_t i = 0; i < s->nstrips; i++)
		strip_finish(s->strips[i]);
	for (size_t i = 0; i < s->nmems; i++)
		mem_set(s->mems[i], SERIES_BUCKETS - 1, s->mems[i]->live);
	return 0;
}

void series__free(struct series *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndevs; i++)
		free(s->devs[i]);
	for (size_t i = 0; i < s->nstrips; i++)
		free(s->strips[i]);
	for (size_t i = 0; i < s->nmems; i++)
		free(s->mems[i]);
	free(s->devs);
	free(s->strips);
	free(s->mems);
	htab__free(&s->by_dev);
	htab__free(&s->by_thread);
	htab__free(&s->by_pid);
	htab__free(&s->py_stacks);
	devmem__free(s->dm);
	free(s);
}

__u64 series__start(const struct series *s)
{
	return s->start;
}

__u64 series__bucket_ns(const struct series *s)
{
	return s->width;
}

__u64 series__bucket_span(const struct series *s, size_t b)
{
	return b < SERIES_BUCKETS ? overlap(bucket_start(s, b), bucket_end(s, b), s->start, s->end) : 0;
}

size_t series__device_count(const struct series *s)
{
	return s->ndevs;
}

const struct series_device *series__device_at(const struct series *s, size_t i)
{
	return i < s->ndevs ? &s->devs[i]->pub : NULL;
}

const struct series_thread *series__thread(const struct series *s, __u32 pid, __u32 tid)
{
	for (size_t i = s->nstrips; i-- > 0;)
		if (s->strips[i]->pub.pid == pid && s->strips[i]->pub.tid == tid)
			return &s->strips[i]->pub;
	return NULL;
}

size_t series__memory_count(const struct series *s)
{
	return s->nmems;
}

const struct series_memory *series__memory_at(const struct series *s, size_t i)
{
	return i < s->nmems ? &s->mems[i]->pub : NULL;
}
