// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ranks.h"
#include "htab.h"
#include "buf.h"

/* --- clocks ----------------------------------------------------------------------------- */

void ranks__clock(const struct recording *rec, struct ranks_clock *out)
{
	const struct isr_clock_pair *best = NULL;
	__s64 lo = 0, hi = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < rec->clock_pair_count; i++) {
		const struct isr_clock_pair *p = &rec->clock_pairs[i];
		__s64 off = (__s64)(p->other_ns - p->mono_ns);

		if (p->clock != ISR_CLOCK_REALTIME)
			continue;
		if (!out->pairs || off < lo)
			lo = off;
		if (!out->pairs || off > hi)
			hi = off;
		if (!best || p->uncertainty_ns < best->uncertainty_ns)
			best = p;
		out->pairs++;
	}
	if (!best)
		return;
	out->offset_ns = (__s64)(best->other_ns - best->mono_ns);
	out->uncertainty_ns = best->uncertainty_ns + ((__u64)hi - (__u64)lo) / 2;	/* hi >= lo: exact */
}

/* --- state ------------------------------------------------------------------------------ */

struct u64s {
	__u64 *v;
	size_t n, cap;
};

static int u64s_push(struct u64s *a, __u64 x)
{
	if (a->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 64;
		__u64 *p = realloc(a->v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = c;
	}
	a->v[a->n++] = x;
	return 0;
}

/* A window before one arrival of a rank. */
struct window {
	__u32 pid, tid;
	__u64 start, end;	/* CPU clock of its recording */
	size_t row;
	bool late;		/* the straggler's window, else another rank's */
	bool opened;
	struct tl_acc at_start;
};

struct windows {
	struct window *v;
	size_t n, cap;
};

struct member {
	size_t row, source;
	__u32 comm;		/* index in its source's nccl_calls.comms */
	size_t *idx;		/* its arrivals, indices in its source's list */
	size_t n, cur;
};

struct group {
	__u64 key;
	bool setup;
	struct member *m;
	size_t nm;
	int size;
};

struct builder {
	const struct ranks_source *src;
	size_t nsrc;
	struct ranks *r;
	struct u64s *lateness;		/* per row (before the rows are sorted) */
	size_t nlateness;
	struct windows *win;		/* per source */
	struct group *groups;
	size_t ngroups;
	size_t *mrow;			/* per member of a collective (ranks.members), its row */
	size_t mrow_cap;
};

static const struct nccl_calls *calls_of(const struct builder *b, size_t s)
{
	return b->src[s].nccl;
}

/* --- rows ------------------------------------------------------------------------------- */

/* The thread of pid that made most of its collectives. */
static __u32 calling_thread(const struct nccl_calls *c, __u32 pid)
{
	struct {
		__u32 tid;
		__u64 n;
	} t[8] = { { 0, 0 } };
	size_t nt = 0, best = 0;

	for (size_t i = 0; i < c->narrivals; i++) {
		size_t k;

		if (c->arrivals[i].pid != pid)
			continue;
		for (k = 0; k < nt && t[k].tid != c->arrivals[i].tid; k++)
			;
		if (k == nt && nt < 8)
			t[nt++].tid = c->arrivals[i].tid;
		if (k < nt)
			t[k].n++;
	}
	for (size_t k = 1; k < nt; k++)
		if (t[k].n > t[best].n)
			best = k;
	return nt ? t[best].tid : pid;
}

static int add_rows(struct builder *b)
{
	struct ranks *r = b->r;
	size_t cap = 0;

	for (size_t s = 0; s < b->nsrc; s++)
		cap += calls_of(b, s)->nprocs;
	r->rows = calloc(cap ? cap : 1, sizeof(*r->rows));
	b->lateness = calloc(cap ? cap : 1, sizeof(*b->lateness));
	b->nlateness = cap;
	if (!r->rows || !b->lateness)
		return -ENOMEM;
	for (size_t s = 0; s < b->nsrc; s++) {
		const struct nccl_calls *c = calls_of(b, s);

		for (size_t i = 0; i < c->nprocs; i++) {
			const struct nccl_proc *p = &c->procs[i];
			struct rank_row *row = &r->rows[r->nrows];
			bool any = false;

			for (size_t k = 0; k < c->ncomms; k++)
				any |= c->comms[k].pid == p->pid && c->comms[k].collectives;
			if (!any)
				continue;
			r->nrows++;
			row->source = s;
			row->pid = p->pid;
			row->tid = calling_thread(c, p->pid);
			row->rank = row->world_size = -1;
			row->local_rank = p->env_local_rank;
			memcpy(row->calls, p->calls, sizeof(row->calls));
			for (size_t k = 0; k < c->ncomms; k++) {
				if (c->comms[k].pid == p->pid && c->comms[k].setup_seen && row->rank < 0) {
					row->rank = c->comms[k].rank;
					row->world_size = c->comms[k].nranks;
					row->rank_from = "communicator";
				}
			}
			if (row->rank < 0 && p->env_rank >= 0) {
				row->rank = p->env_rank;
				row->world_size = p->env_world_size;
				row->rank_from = "environment";
			}
		}
	}
	/* the rest by order: the lowest ranks not taken */
	for (size_t i = 0; i < r->nrows; i++) {
		int k = 0;

		if (r->rows[i].rank >= 0)
			continue;
		for (bool taken = true; taken; k += taken) {
			taken = false;
			for (size_t j = 0; j < r->nrows && !taken; j++)
				taken = r->rows[j].rank == k;
		}
		r->rows[i].rank = k;
		r->rows[i].rank_from = "order";
	}
	return 0;
}

static size_t row_of(const struct builder *b, size_t s, __u32 pid)
{
	for (size_t i = 0; i < b->r->nrows; i++)
		if (b->r->rows[i].source == s && b->r->rows[i].pid == pid)
			return i;
	return SIZE_MAX;
}

/* --- communicators ------------------------------------------------------------------------ */

static int add_member(struct builder *b, __u64 key, bool setup, int size, size_t row, size_t s, __u32 comm)
{
	struct group *g = NULL;
	struct member *m;

	for (size_t i = 0; i < b->ngroups && !g; i++)
		if (b->groups[i].key == key && b->groups[i].setup == setup)
			g = &b->groups[i];
	if (!g) {
		struct group *p = realloc(b->groups, (b->ngroups + 1) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->groups = p;
		g = &b->groups[b->ngroups++];
		*g = (struct group){ .key = key, .setup = setup, .size = size };
	}
	m = realloc(g->m, (g->nm + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	g->m = m;
	g->m[g->nm++] = (struct member){ .row = row, .source = s, .comm = comm };
	return 0;
}

/* Every communicator with collectives, grouped across processes: by the
 * unique id's hash, or (set up before the recording) by the world size and
 * its order of first use in the process. */
static int add_groups(struct builder *b)
{
	for (size_t s = 0; s < b->nsrc; s++) {
		const struct nccl_calls *c = calls_of(b, s);

		for (size_t k = 0; k < c->ncomms; k++) {
			const struct nccl_comm *m = &c->comms[k];
			size_t row = row_of(b, s, m->pid), order = 0;
			int e;

			if (!m->collectives || row == SIZE_MAX)
				continue;
			if (m->setup_seen) {
				e = add_member(b, m->id_hash, true, m->nranks, row, s, (__u32)k);
			} else {
				for (size_t j = 0; j < k; j++)
					order += c->comms[j].pid == m->pid && !c->comms[j].setup_seen &&
						 c->comms[j].collectives;
				e = add_member(b, hash__mix(hash__u64((__u64)(__s64)b->r->rows[row].world_size), order),
					       false, b->r->rows[row].world_size, row, s, (__u32)k);
			}
			if (e)
				return e;
		}
	}
	return 0;
}

static int add_window(struct builder *b, size_t s, const struct rank_row *row, size_t ri, __u64 end, __u64 len,
		      bool late)
{
	struct windows *w = &b->win[s];

	if (!len)
		return 0;

	if (w->n == w->cap) {
		size_t c = w->cap ? w->cap * 2 : 64;
		struct window *p = realloc(w->v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->v = p;
		w->cap = c;
	}
	w->v[w->n++] = (struct window){ .pid = row->pid, .tid = row->tid, .start = end > len ? end - len : 0,
					.end = end, .row = ri, .late = late };
	return 0;
}

/* The collective of the members at positions at (count n) of communicator
 * rc, and each one's kernel where it was joined. */
static int add_collective(struct builder *b, const struct ranks_comm *rc, const struct group *g, const size_t *at,
			  size_t n)
{
	struct ranks *r = b->r;
	struct ranks_collective *col;

	if (array__reserve(&r->colls, &r->colls_cap, r->ncolls + 1, sizeof(*r->colls)) ||
	    array__reserve(&r->members, &r->members_cap, r->nmembers + n, sizeof(*r->members)) ||
	    array__reserve(&b->mrow, &b->mrow_cap, r->nmembers + n, sizeof(*b->mrow)))
		return -ENOMEM;
	col = &r->colls[r->ncolls++];
	*col = (struct ranks_collective){ .comm = (size_t)(rc - r->comms), .first = r->nmembers, .n = n };
	for (size_t i = 0; i < n; i++) {
		const struct member *m = &g->m[at[i]];
		const struct nccl_arrival *a = &calls_of(b, m->source)->arrivals[m->idx[m->cur]];

		if (i == 0) {
			col->seq = a->seq;
			col->func = a->func;
		}
		b->mrow[r->nmembers] = m->row;
		r->members[r->nmembers++] = (struct ranks_member){
			.rank = r->rows[m->row].rank, .joined = a->joined, .grouped = a->grouped,
			.arrival_ns = (__s64)a->ns + r->clocks[m->source].offset_ns,
			.gpu_start_ns = a->gpu_start, .gpu_ns = a->gpu_end > a->gpu_start ? a->gpu_end - a->gpu_start : 0 };
	}
	return 0;
}

/* One collective: the arrivals of the members at positions at (count n).
 * *prev_last: the last arrival at the communicator's previous collective
 * (realtime), when it could complete: the windows start no earlier, so
 * that no rank's wait in the previous collective counts as what it did
 * before this one. */
static int collective(struct builder *b, struct group *g, struct ranks_comm *rc, const size_t *at, size_t n,
		      __s64 *prev_last)
{
	__s64 t[64], first = INT64_MAX, last = INT64_MIN, second = INT64_MIN;
	size_t li = 0, fi = 0;
	struct ranks_collective *col;
	int e = 0;

	for (size_t i = 0; i < n; i++) {
		const struct member *m = &g->m[at[i]];
		const struct nccl_arrival *a = &calls_of(b, m->source)->arrivals[m->idx[m->cur]];

		t[i] = (__s64)a->ns + b->r->clocks[m->source].offset_ns;
		if (t[i] < first) {
			first = t[i];
			fi = i;
		}
		if (t[i] > last) {
			second = last;
			last = t[i];
			li = i;
		} else if (t[i] > second) {
			second = t[i];
		}
		if (i == 0) {
			rc->calls[a->func]++;
			rc->bytes += a->bytes;
		}
	}
	rc->collectives++;
	rc->spread_ns += (__u64)(last - first);
	e = add_collective(b, rc, g, at, n);
	if (e)
		return e;
	col = &b->r->colls[b->r->ncolls - 1];
	col->first_in = fi;
	col->last_in = li;
	col->late = (__u64)(last - second) >= NCCL_LATE_NS;
	for (size_t i = 0; i < n; i++) {
		const struct member *m = &g->m[at[i]];
		struct ranks_arrival *ra = &b->r->arrivals[m->source][m->idx[m->cur]];

		ra->last_ns = (__u64)(last - b->r->clocks[m->source].offset_ns);
		ra->last_rank = b->r->rows[g->m[at[li]].row].rank;
		ra->straggler = i == li;
		ra->late = i == li && (__u64)(last - second) >= NCCL_LATE_NS;
	}
	for (size_t i = 0; i < n && !e; i++) {
		struct rank_row *row = &b->r->rows[g->m[at[i]].row];

		row->collectives++;
		row->lateness_total_ns += (__u64)(t[i] - first);
		e = u64s_push(&b->lateness[g->m[at[i]].row], (__u64)(t[i] - first));
		if (i != li)
			rc->straggler_waits_ns += (__u64)(last - t[i]);
	}
	{
		struct rank_row *row = &b->r->rows[g->m[at[li]].row];

		row->last++;
		if ((__u64)(last - second) < NCCL_LATE_NS) {
			*prev_last = last;
			return e;
		}
		row->late++;
		rc->late++;
		row->late_ns += (__u64)(last - first);
		for (size_t i = 0; i < n; i++)
			if (i != li)
				row->waited_ns += (__u64)(last - t[i]);
	}
	/* what each rank did over the straggler's lateness before its
	 * arrival, since the previous collective could complete */
	for (size_t i = 0; i < n && !e; i++) {
		const struct member *m = &g->m[at[i]];
		const struct nccl_arrival *a = &calls_of(b, m->source)->arrivals[m->idx[m->cur]];
		__s64 from = t[i] - (last - first);

		if (from < *prev_last)
			from = *prev_last;
		e = add_window(b, m->source, &b->r->rows[m->row], m->row, a->ns,
			       t[i] > from ? (__u64)(t[i] - from) : 0, i == li);
	}
	*prev_last = last;
	return e;
}

static int match_group(struct builder *b, struct group *g)
{
	struct ranks_comm *rc;
	__s64 prev_last = INT64_MIN;
	size_t at[64];
	int e = 0;

	if (g->nm < 2)
		return 0;
	rc = &b->r->comms[b->r->ncomms++];
	memset(rc, 0, sizeof(*rc));
	rc->id_hash = g->setup ? g->key : 0;
	rc->nranks = (int)g->nm;
	rc->size = g->size;
	for (size_t i = 0; i < g->nm; i++) {
		struct member *m = &g->m[i];
		const struct nccl_calls *c = calls_of(b, m->source);

		m->idx = malloc((c->comms[m->comm].collectives + 1) * sizeof(*m->idx));
		if (!m->idx)
			return -ENOMEM;
		for (size_t k = 0; k < c->narrivals; k++)
			if (c->arrivals[k].comm == m->comm)
				m->idx[m->n++] = k;
	}
	for (;;) {
		__u64 s = UINT64_MAX;
		size_t n = 0;

		for (size_t i = 0; i < g->nm; i++) {
			const struct member *m = &g->m[i];

			if (m->cur < m->n && calls_of(b, m->source)->arrivals[m->idx[m->cur]].seq < s)
				s = calls_of(b, m->source)->arrivals[m->idx[m->cur]].seq;
		}
		if (s == UINT64_MAX)
			break;
		for (size_t i = 0; i < g->nm && n < 64; i++) {
			const struct member *m = &g->m[i];

			if (m->cur < m->n && calls_of(b, m->source)->arrivals[m->idx[m->cur]].seq == s)
				at[n++] = i;
		}
		if (n >= 2)
			e = collective(b, g, rc, at, n, &prev_last);
		if (e)
			return e;
		for (size_t i = 0; i < g->nm; i++) {
			struct member *m = &g->m[i];

			if (m->cur < m->n && calls_of(b, m->source)->arrivals[m->idx[m->cur]].seq == s)
				m->cur++;
		}
	}
	return 0;
}

/* --- the reason: a second pass over each recording with windows -------------------------- */

struct reason_pass {
	struct builder *b;
	struct timeline *tl;
	struct window **late_by_thread;	/* the late windows, by (tid, start) */
	size_t nlate;
};

static int cmp_start(const void *x, const void *y)
{
	const struct window *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_end(const void *x, const void *y)
{
	const struct window *a = *(const struct window *const *)x, *b = *(const struct window *const *)y;

	return a->end < b->end ? -1 : a->end > b->end;
}

static int cmp_thread_start(const void *x, const void *y)
{
	const struct window *a = *(const struct window *const *)x, *b = *(const struct window *const *)y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static void other_add(struct rank_row *row, __u32 pid, __u32 tid, __u64 ns)
{
	size_t i;

	for (i = 0; i < row->nothers; i++)
		if (row->others[i].pid == pid && row->others[i].tid == tid)
			break;
	if (i == row->nothers) {
		if (row->nothers < RANKS_TOP_OTHERS) {
			row->nothers++;
		} else {
			/* replace the least */
			i = RANKS_TOP_OTHERS - 1;
			for (size_t k = 0; k < RANKS_TOP_OTHERS; k++)
				if (row->others[k].ns < row->others[i].ns)
					i = k;
			if (row->others[i].ns > ns)
				return;
		}
		memset(&row->others[i], 0, sizeof(row->others[i]));
		row->others[i].pid = pid;
		row->others[i].tid = tid;
	}
	row->others[i].ns += ns;
}

/* A finished stretch of a thread: who had its CPU while it waited for one
 * during a late window. */
static void on_span(void *ctx, const struct tl_span *s)
{
	struct reason_pass *rp = ctx;
	size_t lo = 0, hi = rp->nlate;

	if (s->cat != TL_RUNQUEUE || !s->other.tid || !rp->nlate)
		return;
	/* the first late window of the thread that ends after the span starts */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct window *w = rp->late_by_thread[mid];

		if (w->tid < s->thread->tid || (w->tid == s->thread->tid && w->end <= s->start))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < rp->nlate; lo++) {
		const struct window *w = rp->late_by_thread[lo];
		__u64 a, z;

		if (w->tid != s->thread->tid || w->pid != s->thread->pid || w->start >= s->end)
			break;
		a = w->start > s->start ? w->start : s->start;
		z = w->end < s->end ? w->end : s->end;
		if (z > a)
			other_add(&rp->b->r->rows[w->row], s->other.pid, s->other.tid, z - a);
	}
}

static void window_open(struct reason_pass *rp, struct window *w)
{
	const struct tl_thread *t = timeline__thread(rp->tl, w->pid, w->tid);

	if (!t)
		return;
	timeline__thread_acc(rp->tl, t, w->start, &w->at_start);
	w->opened = true;
}

static void window_close(struct reason_pass *rp, struct window *w)
{
	const struct tl_thread *t = timeline__thread(rp->tl, w->pid, w->tid);
	struct rank_row *row = &rp->b->r->rows[w->row];
	struct tl_acc now, d;
	struct tl_acc *sum;

	if (!w->opened || !t)
		return;
	timeline__thread_acc(rp->tl, t, w->end, &now);
	tl_acc__diff(&now, &w->at_start, &d);
	sum = w->late ? &row->when_late : &row->when_on_time;
	for (int c = 0; c < TL_CAT_MAX; c++)
		sum->ns[c] += d.ns[c];
	sum->cpu_wait_ns += d.cpu_wait_ns;
	if (w->late)
		row->late_windows++;
	else
		row->on_time_windows++;
}

static int reason_source(struct builder *b, size_t s, char *err, size_t errlen)
{
	struct windows *w = &b->win[s];
	struct reason_pass rp = { .b = b };
	struct window **by_end = NULL;
	struct tl_observer obs = { .ctx = &rp, .span = on_span };
	struct pass *p = NULL;
	struct pass_event ev;
	size_t is = 0, ie = 0;
	int e, n;

	if (!w->n)
		return 0;
	qsort(w->v, w->n, sizeof(*w->v), cmp_start);
	by_end = malloc(w->n * sizeof(*by_end));
	rp.late_by_thread = malloc(w->n * sizeof(*rp.late_by_thread));
	if (!by_end || !rp.late_by_thread) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < w->n; i++) {
		by_end[i] = &w->v[i];
		if (w->v[i].late)
			rp.late_by_thread[rp.nlate++] = &w->v[i];
	}
	qsort(by_end, w->n, sizeof(*by_end), cmp_end);
	qsort(rp.late_by_thread, rp.nlate, sizeof(*rp.late_by_thread), cmp_thread_start);
	e = pass__reopen(b->src[s].pass, &p, err, errlen);
	if (e)
		goto out;
	rp.tl = timeline__new(p, pass__recording(p));
	if (!rp.tl || timeline__observe(rp.tl, &obs)) {
		e = -ENOMEM;
		goto out;
	}
	while ((n = pass__next(p, &ev)) > 0) {
		while (is < w->n && w->v[is].start <= ev.start)
			window_open(&rp, &w->v[is++]);
		while (ie < w->n && by_end[ie]->end <= ev.start)
			window_close(&rp, by_end[ie++]);
		e = timeline__event(rp.tl, &ev);
		if (e)
			goto out;
	}
	if (n < 0) {
		e = n;
		snprintf(err, errlen, "%s", pass__error(p) ? pass__error(p) : strerror(-n));
		goto out;
	}
	while (is < w->n)
		window_open(&rp, &w->v[is++]);
	while (ie < w->n)
		window_close(&rp, by_end[ie++]);
	e = timeline__finish(rp.tl);
	/* the names of who had the CPU */
	for (size_t i = 0; !e && i < b->r->nrows; i++) {
		struct rank_row *row = &b->r->rows[i];

		if (row->source != s)
			continue;
		for (size_t k = 0; k < row->nothers; k++) {
			struct ranks_other *o = &row->others[k];
			const struct tl_thread *t = timeline__thread_latest(rp.tl, o->pid, o->tid);

			if (t) {
				memcpy(o->comm, t->comm, sizeof(o->comm));
				o->comm[sizeof(o->comm) - 1] = 0;
			} else {
				timeline__task_name(rp.tl, o->pid, o->tid, o->comm, o->process_comm);
			}
		}
	}
out:
	timeline__free(rp.tl);
	pass__free(p);
	free(by_end);
	free(rp.late_by_thread);
	return e;
}

/* --- per rank: its recording's view ------------------------------------------------------- */

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

static void top_finding(struct rank_row *row, const struct findings *fs);

static void row_finish(struct builder *b, size_t i)
{
	struct rank_row *row = &b->r->rows[i];
	const struct ranks_source *src = &b->src[row->source];
	struct u64s *l = &b->lateness[i];
	const struct attr_thread *th;
	const struct nccl_proc *p;

	if (l->n) {
		qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
		row->lateness_p50_ns = l->v[(l->n - 1) / 2];
		row->lateness_p99_ns = l->v[(l->n - 1) * 99 / 100];
	}
	p = nccl_calls__proc(src->nccl, row->pid);
	for (size_t k = 0; k < ISR_NCCL_FN_MAX; k++)
		row->bytes += p->bytes[k];
	row->nccl_gpu_ns = p->gpu_ns;
	row->nccl_joined = p->joined;
	row->nccl_not_joined = p->collectives - p->joined;
	for (size_t k = 0; src->attr && k < attribution__device_count(src->attr); k++) {
		const struct attr_device *d = attribution__device_at(src->attr, k);

		if (d->pid == row->pid) {
			row->gpu_busy_ns += d->busy_ns;
			row->gpu_observed_ns += d->observed_ns;
		}
	}
	th = src->attr ? attribution__thread(src->attr, row->pid, row->tid) : NULL;
	if (th) {
		row->sync_ns = th->window.ns[TL_SYNC];
		row->cpu_wait_ns = th->window.cpu_wait_ns;
	}
	top_finding(row, src->findings);
}

/* Its recording's first finding about its process (not the straggler's). */
static void top_finding(struct rank_row *row, const struct findings *fs)
{
	row->top_rule = NULL;
	row->top_cost_s = 0;
	for (size_t k = 0; fs && k < fs->n; k++) {
		const struct finding *f = &fs->v[k];

		if (f->pid == row->pid && strcmp(f->rule, "nccl_straggler")) {
			row->top_rule = f->rule;
			row->top_cost_s = f->cost_s;
			break;
		}
	}
}

void ranks__top_findings(struct ranks *r, size_t source, const struct findings *fs)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].source == source)
			top_finding(&r->rows[i], fs);
}

static int cmp_others(const void *x, const void *y)
{
	const struct ranks_other *a = x, *b = y;

	return a->ns > b->ns ? -1 : a->ns < b->ns;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct rank_row *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* --- what the late arrivals cost (ranks.h states the measures) -------------------------- */

/* Position among collective y's members of the member of row, or SIZE_MAX. */
static size_t member_of_row(const struct builder *b, const struct ranks_collective *y, size_t row)
{
	for (size_t j = 0; j < y->n; j++)
		if (b->mrow[y->first + j] == row)
			return j;
	return SIZE_MAX;
}

/* The step of collective c's member at position i: from its arrival there to
 * its arrival at the communicator's next collective; 0 when it made none. */
static __u64 step_of(const struct builder *b, size_t c, size_t i)
{
	const struct ranks *r = b->r;
	const struct ranks_collective *x = &r->colls[c], *y;
	size_t j;

	if (c + 1 >= r->ncolls || r->colls[c + 1].comm != x->comm)
		return 0;
	y = &r->colls[c + 1];
	j = member_of_row(b, y, b->mrow[x->first + i]);
	if (j == SIZE_MAX || r->members[y->first + j].arrival_ns <= r->members[x->first + i].arrival_ns)
		return 0;
	return (__u64)(r->members[y->first + j].arrival_ns - r->members[x->first + i].arrival_ns);
}

/* How much longer the others' NCCL kernels ran than the straggler's at
 * collective x (the most of them), or -1 when a member's kernel is not
 * joined or is shared by a group. */
static __s64 gpu_wait(const struct ranks *r, const struct ranks_collective *x)
{
	const struct ranks_member *s = &r->members[x->first + x->last_in];
	__u64 most = 0;

	for (size_t i = 0; i < x->n; i++) {
		const struct ranks_member *m = &r->members[x->first + i];

		if (!m->joined || m->grouped)
			return -1;
		if (i != x->last_in && m->gpu_ns > s->gpu_ns && m->gpu_ns - s->gpu_ns > most)
			most = m->gpu_ns - s->gpu_ns;
	}
	return (__s64)most;
}

static int late_costs(struct builder *b)
{
	struct ranks *r = b->r;
	struct u64s *steps = calloc(r->nrows ? r->nrows : 1, sizeof(*steps));
	int e = 0;

	if (!steps)
		return -ENOMEM;
	/* each row's base: its median step after on-time collectives */
	for (size_t c = 0; c < r->ncolls && !e; c++)
		for (size_t i = 0; !r->colls[c].late && i < r->colls[c].n && !e; i++) {
			__u64 st = step_of(b, c, i);

			if (st)
				e = u64s_push(&steps[b->mrow[r->colls[c].first + i]], st);
		}
	for (size_t k = 0; k < r->nrows; k++)
		if (steps[k].n >= NCCL_STEP_BASE_MIN) {
			qsort(steps[k].v, steps[k].n, sizeof(*steps[k].v), cmp_u64);
			r->rows[k].step_base_ns = steps[k].v[(steps[k].n - 1) / 2];
		}
	for (size_t c = 0; c < r->ncolls && !e; c++) {
		const struct ranks_collective *x = &r->colls[c];
		struct rank_row *row = &r->rows[b->mrow[x->first + x->last_in]];
		__u64 wait = (__u64)(r->members[x->first + x->last_in].arrival_ns -
				     r->members[x->first + x->first_in].arrival_ns);
		__u64 base = r->rows[b->mrow[x->first + x->first_in]].step_base_ns, st, cost;
		__s64 g;

		if (!x->late)
			continue;
		if ((g = gpu_wait(r, x)) >= 0) {
			cost = (__u64)g;
			row->cost_by_gpu++;
		} else if (base && (st = step_of(b, c, x->first_in))) {
			cost = st > base ? st - base : 0;
			row->cost_by_steps++;
			row->cost_step_base_ns = base;
		} else {
			cost = wait;
			row->cost_by_arrival++;
		}
		row->cost_ns += cost < wait ? cost : wait;
	}
	for (size_t k = 0; k < r->nrows; k++)
		free(steps[k].v);
	free(steps);
	return e;
}

int ranks__compute(const struct ranks_source *src, size_t n, struct ranks **res, char *err, size_t errlen)
{
	struct builder b = { .src = src, .nsrc = n };
	struct ranks *r = calloc(1, sizeof(*r));
	int e = -ENOMEM;

	*res = NULL;
	snprintf(err, errlen, "out of memory");
	if (!r)
		return -ENOMEM;
	b.r = r;
	r->nsources = n;
	r->clocks = calloc(n ? n : 1, sizeof(*r->clocks));
	r->names = calloc(n ? n : 1, sizeof(*r->names));
	b.win = calloc(n ? n : 1, sizeof(*b.win));
	r->arrivals = calloc(n ? n : 1, sizeof(*r->arrivals));
	if (!r->clocks || !r->names || !b.win || !r->arrivals)
		goto out;
	for (size_t s = 0; s < n; s++) {
		size_t na = src[s].nccl->narrivals;

		r->arrivals[s] = calloc(na ? na : 1, sizeof(*r->arrivals[s]));
		if (!r->arrivals[s])
			goto out;
		r->names[s] = src[s].name;
		ranks__clock(src[s].r, &r->clocks[s]);
		if (n > 1 && !r->clocks[s].pairs)
			r->unaligned = true;
	}
	if (n > 1) {
		__u64 u1 = 0, u2 = 0;

		for (size_t s = 0; s < n; s++) {
			__u64 u = r->clocks[s].uncertainty_ns;

			if (u > u1) {
				u2 = u1;
				u1 = u;
			} else if (u > u2) {
				u2 = u;
			}
		}
		r->uncertainty_ns = u1 + u2;
	}
	e = add_rows(&b);
	e = e ?: add_groups(&b);
	if (e)
		goto out;
	r->comms = calloc(b.ngroups ? b.ngroups : 1, sizeof(*r->comms));
	if (!r->comms) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t g = 0; g < b.ngroups && !e; g++)
		e = match_group(&b, &b.groups[g]);
	if (e)
		goto out;
	if (r->nrows < 2 || !r->ncomms) {
		e = 0;
		goto out;
	}
	e = late_costs(&b);
	for (size_t s = 0; s < n && !e; s++)
		e = reason_source(&b, s, err, errlen);
	if (e)
		goto out;
	for (size_t i = 0; i < r->nrows; i++) {
		row_finish(&b, i);
		qsort(r->rows[i].others, r->rows[i].nothers, sizeof(r->rows[i].others[0]), cmp_others);
	}
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
	*res = r;
	r = NULL;
out:
	for (size_t g = 0; g < b.ngroups; g++) {
		for (size_t i = 0; i < b.groups[g].nm; i++)
			free(b.groups[g].m[i].idx);
		free(b.groups[g].m);
	}
	free(b.groups);
	free(b.mrow);
	for (size_t i = 0; i < b.nlateness; i++)
		free(b.lateness[i].v);
	free(b.lateness);
	for (size_t s = 0; b.win && s < n; s++)
		free(b.win[s].v);
	free(b.win);
	ranks__free(r);
	return e;
}

void ranks__free(struct ranks *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r->comms);
	free(r->colls);
	free(r->members);
	for (size_t s = 0; r->arrivals && s < r->nsources; s++)
		free(r->arrivals[s]);
	free(r->arrivals);
	free(r->clocks);
	free(r->names);
	free(r);
}
