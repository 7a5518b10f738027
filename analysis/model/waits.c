// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Wait chains (waits.h): the wakers of every target thread's blocked time,
 * and, bin by bin, what every thread did while each launching thread was
 * blocked.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "htab.h"
#include "waits.h"

#define WAKERS_KEPT	32	/* wakers kept per thread (the rest summed) */

struct waker {
	__u64 key;		/* pid << 32 | tid; 0: not known */
	__u64 ns;
};

/* Blocked time and what ended it. */
struct wakers {
	__u64 blocked_ns;	/* blocked and uninterruptible, in all */
	struct waker v[WAKERS_KEPT];
	size_t n;
	__u64 rest;
};

/* A target thread. */
struct wthread {
	const struct tl_thread *th;
	struct tl_acc prev;	/* its totals at the last bin's close */
	struct tl_acc delta;	/* its time in the bin being closed */
	bool live;
	struct wakers life;	/* over its life */
	/* A launching thread's from its first launch to its last (what it
	 * waited for while it kept the GPU fed, not before, not after): the
	 * blocked time since its latest launch is pending until the next.
	 * While the budget has the hot path's probes off, its launches are
	 * not seen: a CUDA call of it then (a copy, a synchronization) stands
	 * for one, or a recording that ends in such a gap would leave out
	 * everything after the gap began. */
	struct wakers window, pending;
	__u64 launches;		/* its launches when pending was last taken in */
};

struct pair_stack {
	__u32 stack;
	__u64 n;
};

/* What thread t did while waiter w was blocked. */
struct pair {
	__u32 w, t;		/* indices into waits.thr */
	double ns[TL_CAT_MAX];
	__u64 samples;
	struct pair_stack stacks[WAITS_STACKS];
};

struct waits {
	struct timeline *tl;
	struct tl_observer obs;
	struct wthread *thr;
	size_t nthr, cap;
	struct htab by_ptr;	/* tl_thread address -> index */
	size_t *live;		/* indices of the live threads */
	size_t nlive, live_cap;
	struct htab pairs;
	bool truncated;
	size_t seen;		/* the timeline's threads tracked so far (in order of first sight) */
	__u64 bin_start, last_ns;
	bool started;
	bool hot_off;		/* the budget has the hot path's probes off (ISR_SAMPLING_OFF) */
	int err;
};

static __u64 pair_hash(const void *e)
{
	const struct pair *p = e;

	return hash__u64((__u64)p->w << 32 | p->t);
}

static bool pair_equal(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return x->w == y->w && x->t == y->t;
}

/* The index of th, tracked from now on; (size_t)-1 when out of memory. */
static size_t track(struct waits *w, const struct tl_thread *th)
{
	__u64 idx;

	if (htab_u64__get(&w->by_ptr, (__u64)(uintptr_t)th, &idx))
		return (size_t)idx;
	if (array__reserve(&w->thr, &w->cap, w->nthr + 1, sizeof(*w->thr)) ||
	    array__reserve(&w->live, &w->live_cap, w->nlive + 1, sizeof(*w->live)) ||
	    htab_u64__put(&w->by_ptr, (__u64)(uintptr_t)th, w->nthr)) {
		w->err = -ENOMEM;
		return (size_t)-1;
	}
	memset(&w->thr[w->nthr], 0, sizeof(w->thr[0]));
	w->thr[w->nthr].th = th;
	w->thr[w->nthr].live = true;
	/* what it did before it was first seen is not known: from now */
	timeline__thread_acc(w->tl, th, w->last_ns > th->now ? w->last_ns : th->now, &w->thr[w->nthr].prev);
	w->live[w->nlive++] = w->nthr;
	return w->nthr++;
}

/* Every thread the timeline saw since the last call, tracked. */
static void track_new(struct waits *w)
{
	size_t n = timeline__thread_count(w->tl);

	for (; w->seen < n && !w->err; w->seen++) {
		const struct tl_thread *th = timeline__thread_at(w->tl, w->seen);

		if (!th->exited)
			track(w, th);
	}
}

static struct pair *pair_get(struct waits *w, size_t waiter, size_t t)
{
	struct pair key = { .w = (__u32)waiter, .t = (__u32)t }, *p;
	bool added;

	p = htab__find(&w->pairs, &key);
	if (p)
		return p;
	if (w->pairs.len >= WAITS_MAX_PAIRS) {
		w->truncated = true;
		return NULL;
	}
	p = htab__insert(&w->pairs, &key, &added);
	if (!p)
		w->err = -ENOMEM;
	return p;
}

static bool is_waiter(const struct wthread *t)
{
	return t->th->launches > 0;
}

static __u64 blocked_of(const struct tl_acc *a)
{
	return a->ns[TL_BLOCKED] + a->ns[TL_IO];
}

/* Closes the bin [bin_start, now): each live thread's time in it, counted
 * for each waiter as much as the waiter was blocked in it. */
static void close_bin(struct waits *w, __u64 now)
{
	__u64 len = now > w->bin_start ? now - w->bin_start : 0;
	size_t i, j;

	if (!len)
		return;
	track_new(w);
	for (i = 0; i < w->nlive; i++) {
		struct wthread *t = &w->thr[w->live[i]];
		struct tl_acc cur;

		timeline__thread_acc(w->tl, t->th, now, &cur);
		tl_acc__diff(&cur, &t->prev, &t->delta);
		t->prev = cur;
	}
	for (i = 0; i < w->nlive && !w->err; i++) {
		size_t wi = w->live[i];
		const struct wthread *wt = &w->thr[wi];
		double share;

		if (!is_waiter(wt))
			continue;
		share = (double)blocked_of(&wt->delta) / (double)len;
		if (share < 0.001)
			continue;
		if (share > 1)
			share = 1;
		for (j = 0; j < w->nlive; j++) {
			size_t ti = w->live[j];
			const struct wthread *t = &w->thr[ti];
			struct pair *p;

			if (ti == wi || !tl_acc__total(&t->delta))
				continue;
			p = pair_get(w, wi, ti);
			if (!p)
				continue;
			for (int k = 0; k < TL_CAT_MAX; k++)
				p->ns[k] += share * (double)t->delta.ns[k];
		}
	}
	/* the threads that exited have no more time to give */
	for (i = 0; i < w->nlive;) {
		if (w->thr[w->live[i]].th->exited) {
			w->thr[w->live[i]].live = false;
			w->live[i] = w->live[--w->nlive];
		} else {
			i++;
		}
	}
	w->bin_start = now;
}

static void waker_add(struct wakers *w, __u64 key, __u64 ns)
{
	w->blocked_ns += ns;
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].key == key) {
			w->v[i].ns += ns;
			return;
		}
	if (w->n == WAKERS_KEPT) {
		w->rest += ns;
		return;
	}
	w->v[w->n++] = (struct waker){ key, ns };
}

/* A launching thread launched again (or, with launch unseen, made another
 * CUDA call: seen): its pending blocked time is in its window. */
static void window_take(struct wthread *t, bool seen)
{
	if (t->th->launches == t->launches && !(seen && t->th->launches))
		return;
	t->launches = t->th->launches;
	for (size_t i = 0; i < t->pending.n; i++)
		waker_add(&t->window, t->pending.v[i].key, t->pending.v[i].ns);
	t->window.blocked_ns += t->pending.rest;
	t->window.rest += t->pending.rest;
	memset(&t->pending, 0, sizeof(t->pending));
}

static void on_span(void *ctx, const struct tl_span *s)
{
	struct waits *w = ctx;
	__u64 key;
	size_t i;

	if (w->err || (s->cat != TL_BLOCKED && s->cat != TL_IO) || s->end <= s->start)
		return;
	i = track(w, s->thread);
	if (i == (size_t)-1)
		return;
	key = s->other.tid ? (__u64)s->other.pid << 32 | s->other.tid : 0;
	waker_add(&w->thr[i].life, key, s->end - s->start);
	if (w->thr[i].th->launches)
		waker_add(&w->thr[i].pending, key, s->end - s->start);
}

static void stack_add(struct pair *p, __u32 stack)
{
	size_t i, low = 0;

	p->samples++;
	if (!stack)
		return;
	for (i = 0; i < WAITS_STACKS; i++) {
		if (p->stacks[i].stack == stack || !p->stacks[i].n) {
			p->stacks[i].stack = stack;
			p->stacks[i].n++;
			return;
		}
		if (p->stacks[i].n < p->stacks[low].n)
			low = i;
	}
	/* all kept slots hold other stacks: the least sampled gives way once
	 * this one catches up with it */
	if (p->stacks[low].n <= 1)
		p->stacks[low] = (struct pair_stack){ stack, 1 };
	else
		p->stacks[low].n--;
}

/* A Python stack sample of thread ti: counted for every waiter blocked
 * now. */
static void on_sample(struct waits *w, size_t ti, __u32 stack)
{
	for (size_t i = 0; i < w->nlive; i++) {
		size_t wi = w->live[i];
		const struct wthread *wt = &w->thr[wi];
		enum tl_cat c;
		struct pair *p;

		if (wi == ti || !is_waiter(wt))
			continue;
		c = timeline__thread_cat(wt->th);
		if (c != TL_BLOCKED && c != TL_IO)
			continue;
		p = pair_get(w, wi, ti);
		if (p)
			stack_add(p, stack);
	}
}

static void on_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct waits *w = ctx;
	size_t i = (size_t)-1;

	if (w->err)
		return;
	if (!w->started) {
		w->started = true;
		w->bin_start = e->start;
	}
	if (e->start > w->last_ns)
		w->last_ns = e->start;
	track_new(w);
	if (th && !th->exited)
		i = track(w, th);
	if (e->h->type == ISR_EV_SAMPLING) {
		__u32 kind = ((const struct isr_ev_sampling *)e->h)->kind;

		if (kind == ISR_SAMPLING_OFF || kind == ISR_SAMPLING_ON || kind == ISR_SAMPLING_START)
			w->hot_off = kind == ISR_SAMPLING_OFF;
	}
	if (i != (size_t)-1)
		window_take(&w->thr[i], w->hot_off && e->h->type == ISR_EV_CUDA_CALL);
	if (e->start >= w->bin_start + WAITS_BIN_NS)
		close_bin(w, e->start);
	if (i != (size_t)-1 && e->h->type == ISR_EV_PY_SAMPLE) {
		const struct isr_ev_py_sample *s = (const void *)e->h;

		if (s->kind == ISR_PY_KIND_TIMER)
			on_sample(w, i, s->stack_id);
	}
}

struct waits *waits__new(struct timeline *tl)
{
	struct waits *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->tl = tl;
	htab__init(&w->by_ptr, sizeof(struct htab_u64), htab_u64__hash, htab_u64__equal);
	htab__init(&w->pairs, sizeof(struct pair), pair_hash, pair_equal);
	w->obs = (struct tl_observer){ .ctx = w, .span = on_span, .event = on_event };
	return w;
}

void waits__free(struct waits *w)
{
	if (!w)
		return;
	free(w->thr);
	free(w->live);
	htab__free(&w->by_ptr);
	htab__free(&w->pairs);
	free(w);
}

const struct tl_observer *waits__observer(struct waits *w)
{
	return &w->obs;
}

int waits__finish(struct waits *w)
{
	if (!w->err && w->started)
		close_bin(w, w->last_ns);
	return w->err;
}

bool waits__truncated(const struct waits *w)
{
	return w->truncated;
}

/* --- chains ----------------------------------------------------------------- */

/* The grouping key of a task that ended a blocked stretch of a thread of
 * waiter's process (pid): the waiter's own threads one by one, another
 * process's threads by name, sibling processes by parent and name. */
struct group_key {
	enum wait_group group;
	__u32 a, b;
	char comm[16];
};

static const struct wthread *find_thread(const struct waits *w, __u32 pid, __u32 tid)
{
	const struct wthread *best = NULL;

	for (size_t i = 0; i < w->nthr; i++)
		if (w->thr[i].th->pid == pid && w->thr[i].th->tid == tid)
			best = &w->thr[i];	/* the latest incarnation */
	return best;
}

static struct group_key key_of(const struct waits *w, __u32 waiter_pid, __u64 task, waits_parent_fn parent,
			       void *ctx)
{
	__u32 pid = (__u32)(task >> 32), tid = (__u32)task, ppid;
	const struct wthread *t = find_thread(w, pid, tid);
	struct group_key k = { 0 };

	if (!t) {
		k.group = WAIT_GROUP_UNTRACED;
		k.a = pid;
		k.b = tid;
		return k;
	}
	memcpy(k.comm, t->th->comm, sizeof(k.comm));
	if (pid == waiter_pid) {
		k.group = WAIT_GROUP_THREAD;
		k.a = pid;
		k.b = tid;
		return k;
	}
	ppid = parent ? parent(ctx, pid) : 0;
	if (ppid) {
		k.group = WAIT_GROUP_PROCESSES;
		k.a = ppid;
	} else {
		k.group = WAIT_GROUP_THREADS;
		k.a = pid;
	}
	return k;
}

static bool key_equal(const struct group_key *x, const struct group_key *y)
{
	return x->group == y->group && x->a == y->a && x->b == y->b &&
	       (x->group == WAIT_GROUP_UNTRACED || x->group == WAIT_GROUP_THREAD ||
		strncmp(x->comm, y->comm, sizeof(x->comm)) == 0);
}

struct tally {
	struct group_key key;
	__u64 ns;
};

/* The wakers of the members' blocked time, by group: into v (at most max
 * groups); how many. *total: all of the members' blocked time. window: the
 * members are the waiter alone, its window counted. */
static size_t tally_wakers(const struct waits *w, __u32 waiter_pid, const size_t *members, size_t nmembers,
			   bool window, const bool *visited, waits_parent_fn parent, void *ctx, struct tally *v,
			   size_t max, __u64 *total)
{
	size_t n = 0;

	*total = 0;
	for (size_t m = 0; m < nmembers; m++) {
		const struct wthread *t = &w->thr[members[m]];
		const struct wakers *wk = window ? &t->window : &t->life;

		*total += wk->blocked_ns;
		for (size_t k = 0; k < wk->n; k++) {
			const struct wthread *x;
			struct group_key key;
			size_t j;

			if (!wk->v[k].key)
				continue;
			x = find_thread(w, (__u32)(wk->v[k].key >> 32), (__u32)wk->v[k].key);
			if (x && visited[x - w->thr])
				continue;	/* back along the chain */
			key = key_of(w, waiter_pid, wk->v[k].key, parent, ctx);
			for (j = 0; j < n && !key_equal(&v[j].key, &key); j++)
				;
			if (j == n) {
				if (n == max)
					continue;
				v[n++] = (struct tally){ key, 0 };
			}
			v[j].ns += wk->v[k].ns;
		}
	}
	return n;
}

/* Whether thread p.t was mostly doing something while the waiter was
 * blocked (not itself blocked). */
static bool pair_working(const struct pair *p)
{
	double blocked = p->ns[TL_BLOCKED], all = 0;

	for (int c = 0; c < TL_CAT_MAX; c++)
		if (c != TL_UNKNOWN)
			all += p->ns[c];
	return all > 0 && all - blocked >= blocked;
}

/* The link of group g: its members (every tracked task of the group), and
 * what they did while waiter wi was blocked: the members that were mostly
 * doing something then, when some were (a worker's queue feeder thread,
 * blocked on its worker, is no part of what the workers did). */
static void link_fill(const struct waits *w, size_t wi, __u32 waiter_pid, const struct tally *g, waits_parent_fn parent,
		      void *ctx, struct wait_link *l, size_t *members, size_t *nmembers, bool *visited)
{
	struct pair_stack top[WAITS_STACKS * WAITS_NODE_MEMBERS];
	size_t ntop = 0;
	bool working = false;

	memset(l, 0, sizeof(*l));
	l->group = g->key.group;
	memcpy(l->comm, g->key.comm, sizeof(l->comm));
	l->parent = g->key.group == WAIT_GROUP_PROCESSES ? g->key.a : 0;
	*nmembers = 0;
	if (g->key.group == WAIT_GROUP_UNTRACED) {
		l->members[l->nmembers++] = (struct wait_member){ g->key.a, g->key.b };
		return;
	}
	for (size_t i = 0; i < w->nthr; i++) {
		const struct wthread *t = &w->thr[i];
		struct group_key k;
		const struct pair *p;
		struct pair key = { .w = (__u32)wi, .t = (__u32)i };

		if (visited[i])
			continue;
		k = key_of(w, waiter_pid, (__u64)t->th->pid << 32 | t->th->tid, parent, ctx);
		if (!key_equal(&k, &g->key))
			continue;
		visited[i] = true;
		members[(*nmembers)++] = i;
		if (l->nmembers < WAITS_NODE_MEMBERS)
			l->members[l->nmembers++] = (struct wait_member){ t->th->pid, t->th->tid };
		else
			l->more++;
		p = htab__find(&w->pairs, &key);
		working |= p && pair_working(p);
	}
	for (size_t m = 0; m < *nmembers; m++) {
		struct pair key = { .w = (__u32)wi, .t = (__u32)members[m] };
		const struct pair *p = htab__find(&w->pairs, &key);

		if (!p || (working && !pair_working(p)))
			continue;
		for (int c = 0; c < TL_CAT_MAX; c++)
			l->during.ns[c] += (__u64)p->ns[c];
		l->samples += p->samples;
		for (size_t s = 0; s < WAITS_STACKS && p->stacks[s].n; s++) {
			size_t j;

			for (j = 0; j < ntop && top[j].stack != p->stacks[s].stack; j++)
				;
			if (j == ntop && ntop < sizeof(top) / sizeof(top[0]))
				top[ntop++] = (struct pair_stack){ p->stacks[s].stack, 0 };
			if (j < ntop)
				top[j].n += p->stacks[s].n;
		}
	}
	for (size_t j = 0; j < ntop; j++)
		if (top[j].n > l->top_stack_samples) {
			l->top_stack = top[j].stack;
			l->top_stack_samples = top[j].n;
		}
}

int waits__chain(const struct waits *w, __u32 pid, __u32 tid, waits_parent_fn parent, void *ctx,
		 struct wait_chain *out)
{
	const struct wthread *waiter = find_thread(w, pid, tid);
	size_t *members, nmembers = 1, wi;
	bool *visited;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->tid = tid;
	if (!waiter || !is_waiter(waiter))
		return -ENOENT;
	wi = (size_t)(waiter - w->thr);
	out->blocked_ns = waiter->window.blocked_ns;
	members = calloc(w->nthr + 1, sizeof(*members));
	visited = calloc(w->nthr + 1, sizeof(*visited));
	if (!members || !visited) {
		err = -ENOMEM;
		goto out;
	}
	members[0] = wi;
	visited[wi] = true;
	while (out->n < WAITS_CHAIN_MAX) {
		struct tally groups[64];
		struct wait_link *l = &out->links[out->n];
		size_t n, best = 0;
		__u64 total, busy, all;

		n = tally_wakers(w, pid, members, nmembers, out->n == 0, visited, parent, ctx, groups, 64, &total);
		for (size_t g = 1; g < n; g++)
			if (groups[g].ns > groups[best].ns)
				best = g;
		/* nothing ended most of it */
		if (!n || !total || groups[best].ns * 2 < total)
			break;
		link_fill(w, wi, pid, &groups[best], parent, ctx, l, members, &nmembers, visited);
		l->ended_ns = groups[best].ns;
		l->ended_share = (double)groups[best].ns / (double)total;
		out->n++;
		all = tl_acc__total(&l->during);
		/* in I/O is doing something: reading the input, say */
		busy = all - l->during.ns[TL_BLOCKED] - l->during.ns[TL_UNKNOWN];
		if (l->group == WAIT_GROUP_UNTRACED || !all || !nmembers)
			break;
		if (busy * 2 >= all - l->during.ns[TL_UNKNOWN]) {
			out->complete = true;
			break;
		}
	}
out:
	free(members);
	free(visited);
	return err;
}
