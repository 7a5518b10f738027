// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nccl.h"
#include "gpu_summary.h"
#include "htab.h"

const char *nccl_func_name(__u16 func)
{
#define NAME_ROW(id, sym, kind, layout) [id] = #sym,
	static const char *const names[ISR_NCCL_FN_MAX] = { ISR_NCCL_FUNCS(NAME_ROW) };
#undef NAME_ROW
	return func < ISR_NCCL_FN_MAX && names[func] ? names[func] : "?";
}

bool nccl_func_is_collective(__u16 func)
{
#define KIND_ROW(id, sym, kind, layout) [id] = kind,
	static const __u8 kinds[ISR_NCCL_FN_MAX] = { ISR_NCCL_FUNCS(KIND_ROW) };
#undef KIND_ROW
	return func < ISR_NCCL_FN_MAX && kinds[func] == ISR_NCCL_KIND_COLL;
}

/* Grows *v (of *cap elements of size sz) to hold n. 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	p = realloc(*v, c * sz);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static struct nccl_proc *proc_get(struct nccl_calls *c, __u32 pid)
{
	struct nccl_proc *p;

	for (size_t i = c->nprocs; i-- > 0;)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	if (grow((void **)&c->procs, &c->procs_cap, c->nprocs + 1, sizeof(*c->procs)))
		return NULL;
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->env_rank = p->env_local_rank = p->env_world_size = -1;
	return p;
}

const struct nccl_proc *nccl_calls__proc(const struct nccl_calls *c, __u32 pid)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	return NULL;
}

/* The latest communicator (pid, handle): its index, or -1. */
static long comm_find(const struct nccl_calls *c, __u32 pid, __u64 handle)
{
	for (size_t i = c->ncomms; i-- > 0;)
		if (c->comms[i].pid == pid && c->comms[i].handle == handle)
			return (long)i;
	return -1;
}

static long comm_add(struct nccl_calls *c, __u32 pid, __u64 handle)
{
	struct nccl_comm *m;

	if (grow((void **)&c->comms, &c->comms_cap, c->ncomms + 1, sizeof(*c->comms)))
		return -1;
	m = &c->comms[c->ncomms];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->handle = handle;
	m->rank = m->nranks = -1;
	return (long)c->ncomms++;
}

/* --- the kernel join (nccl.h states the rule) ------------------------------------- */

/* Where a launch record stands. */
enum { L_WAIT_KERNEL, L_WAIT_NAME, L_OTHER, L_NCCL };

/* A launch record of a thread, from the latest entry on: the entries it
 * can reach are positions [run_begin, run_end) of its thread's entries. */
struct jlaunch {
	__u64 gpu_start, gpu_end;	/* its kernel, mapped */
	size_t run_begin, run_end;
	__u32 corr;
	bool grouped;
	__u8 state;		/* L_* */
};

/* A thread that entered collectives. Entry positions and launch numbers
 * are absolute: position p is arr[p - abase], launch n is l[n - lbase]. */
struct jthread {
	__u32 pid, tid;
	size_t proc;		/* index in nccl_calls.procs */
	__u32 depth;		/* ncclGroupStart nesting */
	__u64 group;		/* the open group's number; 0: none */
	__u64 run_group;	/* the latest entry's group; 0: ungrouped */
	size_t *arr;		/* entries (indices in nccl_calls.arrivals) a launch can still reach */
	size_t ahead, an, acap, abase;
	size_t run_begin;	/* the latest entry's run: it and the entries of its group since */
	size_t joined_to;	/* entries before this position are joined or out of reach */
	struct jlaunch *l;	/* launches waiting or decided, in start order */
	size_t lhead, ln, lcap, lbase;
};

/* A waiting launch by its correlation id. */
struct jcorr {
	__u32 pid, corr;
	__u32 tid;
	size_t launch;
};

/* A kernel name of a process: whether it is NCCL's, or the launches that
 * wait for it. */
struct jname {
	__u32 pid, id;
	bool known, nccl;
	struct jwaiter { __u32 tid; size_t launch; } *w;
	size_t nw, wcap;
};

/* When a launch stops waiting for its kernel. */
struct jtimer {
	__u64 due;
	__u32 pid, tid;
	size_t launch;
};

struct nccl_join {
	struct htab threads;	/* struct jthread by (pid, tid) */
	struct htab corrs;	/* struct jcorr by (pid, correlation id) */
	struct htab names;	/* struct jname by (pid, name id) */
	struct jtimer *timers;	/* in due order: launches come in start order */
	size_t thead, tn, tcap;
	__u64 groups;		/* groups opened */
};

static __u64 key_hash(__u32 a, __u32 b)
{
	return hash__u64((__u64)a << 32 | b);
}

static __u64 jthread_hash(const void *e)
{
	return key_hash(((const struct jthread *)e)->pid, ((const struct jthread *)e)->tid);
}

static bool jthread_equal(const void *a, const void *b)
{
	const struct jthread *x = a, *y = b;

	return x->pid == y->pid && x->tid == y->tid;
}

static __u64 jcorr_hash(const void *e)
{
	return key_hash(((const struct jcorr *)e)->pid, ((const struct jcorr *)e)->corr);
}

static bool jcorr_equal(const void *a, const void *b)
{
	const struct jcorr *x = a, *y = b;

	return x->pid == y->pid && x->corr == y->corr;
}

static __u64 jname_hash(const void *e)
{
	return key_hash(((const struct jname *)e)->pid, ((const struct jname *)e)->id);
}

static bool jname_equal(const void *a, const void *b)
{
	const struct jname *x = a, *y = b;

	return x->pid == y->pid && x->id == y->id;
}

static struct nccl_join *join_get(struct nccl_calls *c)
{
	if (!c->join) {
		c->join = calloc(1, sizeof(*c->join));
		if (!c->join)
			return NULL;
		htab__init(&c->join->threads, sizeof(struct jthread), jthread_hash, jthread_equal);
		htab__init(&c->join->corrs, sizeof(struct jcorr), jcorr_hash, jcorr_equal);
		htab__init(&c->join->names, sizeof(struct jname), jname_hash, jname_equal);
	}
	return c->join;
}

static struct jthread *jthread_find(const struct nccl_join *j, __u32 pid, __u32 tid)
{
	struct jthread key = { .pid = pid, .tid = tid };

	return j ? htab__find(&j->threads, &key) : NULL;
}

/* The thread's entry or launch table with its first `*head` slots dropped
 * once they are half of it (amortized O(1) a slot); *base counts them. */
static void compact(void *v, size_t sz, size_t *head, size_t *n, size_t *base)
{
	if (!*head || *head < *n / 2)
		return;
	memmove(v, (char *)v + *head * sz, (*n - *head) * sz);
	*n -= *head;
	*base += *head;
	*head = 0;
}

static bool launch_waits(const struct jlaunch *l)
{
	return l->state == L_WAIT_KERNEL || l->state == L_WAIT_NAME;
}

/* Launch n of t, NULL when it was decided and dropped. */
static struct jlaunch *launch_at(struct jthread *t, size_t n)
{
	if (n < t->lbase + t->lhead || n >= t->lbase + t->ln)
		return NULL;
	return &t->l[n - t->lbase];
}

/* An NCCL kernel's launch: the entries it reaches that no earlier NCCL
 * launch of the thread took share it. */
static void join_launch(struct nccl_calls *c, struct jthread *t, const struct jlaunch *l)
{
	size_t from = l->run_begin > t->joined_to ? l->run_begin : t->joined_to;
	struct nccl_proc *p = &c->procs[t->proc];

	if (from >= l->run_end)
		return;
	for (size_t pos = from; pos < l->run_end; pos++) {
		struct nccl_arrival *a = &c->arrivals[t->arr[pos - t->abase]];

		a->gpu_start = l->gpu_start;
		a->gpu_end = l->gpu_end;
		a->joined = 1;
		a->grouped = l->grouped;
	}
	p->joined += l->run_end - from;
	p->gpu_kernels++;
	p->gpu_ns += l->gpu_end > l->gpu_start ? l->gpu_end - l->gpu_start : 0;
	t->joined_to = l->run_end;
}

/* The thread's decided launches from the front, in order; then what no
 * launch can reach any more is dropped. */
static void settle(struct nccl_calls *c, struct jthread *t)
{
	size_t keep;

	while (t->lhead < t->ln && !launch_waits(&t->l[t->lhead])) {
		if (t->l[t->lhead].state == L_NCCL)
			join_launch(c, t, &t->l[t->lhead]);
		t->lhead++;
	}
	compact(t->l, sizeof(*t->l), &t->lhead, &t->ln, &t->lbase);
	keep = t->lhead < t->ln && t->l[t->lhead].run_begin < t->run_begin ? t->l[t->lhead].run_begin : t->run_begin;
	if (keep > t->abase + t->ahead)
		t->ahead = keep - t->abase;
	compact(t->arr, sizeof(*t->arr), &t->ahead, &t->an, &t->abase);
}

/* A collective entry (arrivals[i]) of a thread of process proc. */
static int join_entry(struct nccl_calls *c, const struct isr_ev_hdr *h, size_t i, size_t proc)
{
	struct nccl_join *j = join_get(c);
	struct jthread key = { .pid = h->pid, .tid = h->tid }, *t;
	__u64 group;
	bool added;

	t = j ? htab__insert(&j->threads, &key, &added) : NULL;
	if (!t)
		return -ENOMEM;
	t->proc = proc;
	group = t->depth ? t->group : 0;
	/* a new run unless it joins the latest entry's group: the entries
	 * before a new run are out of reach of later launches */
	if (!group || group != t->run_group)
		t->run_begin = t->abase + t->an;
	t->run_group = group;
	if (grow((void **)&t->arr, &t->acap, t->an + 1, sizeof(*t->arr)))
		return -ENOMEM;
	t->arr[t->an++] = i;
	settle(c, t);
	return 0;
}

/* ncclGroupStart or ncclGroupEnd on a thread of process proc. */
static int join_group_call(struct nccl_calls *c, const struct isr_ev_nccl_call *ev, size_t proc)
{
	struct nccl_join *j = join_get(c);
	struct jthread key = { .pid = ev->hdr.pid, .tid = ev->hdr.tid }, *t;
	bool added;

	t = j ? htab__insert(&j->threads, &key, &added) : NULL;
	if (!t)
		return -ENOMEM;
	t->proc = proc;
	if (ev->func == ISR_NCCL_FN_ncclGroupStart) {
		if (!t->depth)
			t->group = ++j->groups;
		if (t->depth < UINT32_MAX)
			t->depth++;
	} else if (t->depth) {
		t->depth--;
	}
	return 0;
}

static int on_launch_record(struct nccl_calls *c, const struct pass_event *e, const struct isr_ev_gpu_api *a)
{
	struct nccl_join *j = c->join;
	struct jthread *t = jthread_find(j, a->hdr.pid, a->thread_id);
	struct jcorr key = { .pid = a->hdr.pid, .corr = a->correlation_id }, *k;
	size_t end;
	bool added;

	if (!t || e->unmapped || !gpu_launch_cbid(a->api, a->cbid) || gpu_graph_cbid(a->api, a->cbid))
		return 0;
	end = t->abase + t->an;
	/* nothing it could take: no entry, or the latest run is taken and no
	 * launch before it waits */
	if (t->run_begin == end || (t->joined_to >= end && t->lhead == t->ln))
		return 0;
	k = htab__insert(&j->corrs, &key, &added);
	if (!k)
		return -ENOMEM;
	if (!added)
		return 0;	/* the same call's other record (runtime and driver) */
	if (grow((void **)&t->l, &t->lcap, t->ln + 1, sizeof(*t->l)) ||
	    grow((void **)&j->timers, &j->tcap, j->tn + 1, sizeof(*j->timers))) {
		htab__remove(&j->corrs, &key, NULL);
		return -ENOMEM;
	}
	k->tid = a->thread_id;
	k->launch = t->lbase + t->ln;
	t->l[t->ln++] = (struct jlaunch){ .run_begin = t->run_begin, .run_end = end, .corr = a->correlation_id,
					  .grouped = t->run_group != 0, .state = L_WAIT_KERNEL };
	j->timers[j->tn++] = (struct jtimer){ .due = e->start + NCCL_JOIN_HORIZON_NS, .pid = a->hdr.pid,
					      .tid = a->thread_id, .launch = k->launch };
	return 0;
}

/* name: a NUL-terminated or ISR_GPU_NAME_LEN-byte field, longer than the
 * prefixes and the mangling's. CUPTI names a kernel by its mangled name:
 * NCCL's are free functions, "_Z", the name's length, the name
 * ("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorage
 * ILm4096EE"); a demangled one starts with the name. */
static bool nccl_kernel_name(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z') {
		name += 2;
		for (int digits = 0; digits < 4 && *name >= '0' && *name <= '9'; digits++)
			name++;
	}
	return !strncmp(name, "ncclKernel", 10) || !strncmp(name, "ncclDevKernel", 13);
}

static int on_kernel(struct nccl_calls *c, const struct pass_event *e, const struct isr_ev_gpu_kernel *k)
{
	struct nccl_join *j = c->join;
	struct jcorr key = { .pid = k->hdr.pid, .corr = k->correlation_id }, jc;
	struct jname nkey = { .pid = k->hdr.pid, .id = k->name_id }, *n;
	struct jthread *t;
	struct jlaunch *l;
	bool added;

	if (!j || e->unmapped || !htab__remove(&j->corrs, &key, &jc))
		return 0;
	t = jthread_find(j, jc.pid, jc.tid);
	l = t ? launch_at(t, jc.launch) : NULL;
	if (!l)
		return 0;
	l->gpu_start = e->start;
	l->gpu_end = e->end;
	l->state = L_OTHER;
	/* past SUMMARY_MAX_KERNELS name ids, one not kept is counted as not
	 * NCCL's, as by the summary with the other kernels */
	if (k->name_id && (j->names.len < SUMMARY_MAX_KERNELS || htab__find(&j->names, &nkey))) {
		n = htab__insert(&j->names, &nkey, &added);
		if (!n)
			return -ENOMEM;
		if (n->known) {
			l->state = n->nccl ? L_NCCL : L_OTHER;
		} else {
			if (grow((void **)&n->w, &n->wcap, n->nw + 1, sizeof(*n->w)))
				return -ENOMEM;
			n->w[n->nw++] = (struct jwaiter){ .tid = jc.tid, .launch = jc.launch };
			l->state = L_WAIT_NAME;
		}
	}
	settle(c, t);
	return 0;
}

static int on_kernel_name(struct nccl_calls *c, const struct isr_ev_gpu_name *ev)
{
	struct nccl_join *j = join_get(c);
	struct jname key = { .pid = ev->hdr.pid, .id = ev->id }, *n;
	bool added;

	if (j && j->names.len >= SUMMARY_MAX_KERNELS && !htab__find(&j->names, &key))
		return 0;	/* not kept */
	n = j ? htab__insert(&j->names, &key, &added) : NULL;
	if (!n)
		return -ENOMEM;
	n->known = true;
	n->nccl = nccl_kernel_name(ev->name);
	for (size_t i = 0; i < n->nw; i++) {
		struct jthread *t = jthread_find(j, ev->hdr.pid, n->w[i].tid);
		struct jlaunch *l = launch_at(t, n->w[i].launch);

		if (!l || l->state != L_WAIT_NAME)
			continue;
		l->state = n->nccl ? L_NCCL : L_OTHER;
		settle(c, t);
	}
	free(n->w);
	n->w = NULL;
	n->nw = n->wcap = 0;
	return 0;
}

/* The launches whose kernel has not started by now: none will be joined. */
static void join_expire(struct nccl_calls *c, __u64 now)
{
	struct nccl_join *j = c->join;

	while (j && j->thead < j->tn && j->timers[j->thead].due < now) {
		const struct jtimer *x = &j->timers[j->thead++];
		struct jthread *t = jthread_find(j, x->pid, x->tid);
		struct jlaunch *l = launch_at(t, x->launch);

		if (!l || l->state != L_WAIT_KERNEL)
			continue;
		htab__remove(&j->corrs, &(struct jcorr){ .pid = x->pid, .corr = l->corr }, NULL);
		l->state = L_OTHER;
		settle(c, t);
	}
	if (j) {
		size_t none = 0;

		compact(j->timers, sizeof(*j->timers), &j->thead, &j->tn, &none);
	}
}

static void join_free(struct nccl_join *j)
{
	struct jthread *t;
	struct jname *n;
	size_t pos = 0;

	if (!j)
		return;
	while ((t = htab__next(&j->threads, &pos))) {
		free(t->arr);
		free(t->l);
	}
	pos = 0;
	while ((n = htab__next(&j->names, &pos)))
		free(n->w);
	htab__free(&j->threads);
	htab__free(&j->corrs);
	htab__free(&j->names);
	free(j->timers);
	free(j);
}

void nccl_calls__finish(struct nccl_calls *c)
{
	struct nccl_join *j = c->join;
	struct jthread *t;
	size_t pos = 0;

	while (j && (t = htab__next(&j->threads, &pos))) {
		for (size_t i = t->lhead; i < t->ln; i++)
			if (launch_waits(&t->l[i]))
				t->l[i].state = L_OTHER;
		settle(c, t);
	}
	join_free(j);
	c->join = NULL;
}

static int on_comm(struct nccl_calls *c, const struct isr_ev_nccl_comm *ev)
{
	struct nccl_proc *p = proc_get(c, ev->hdr.pid);
	long i;

	if (!p)
		return -ENOMEM;
	if (ev->func < ISR_NCCL_FN_MAX)
		p->calls[ev->func]++;
	if (ev->status != 0 || !ev->comm) {
		p->setup_failures++;
		return 0;
	}
	/* a new communicator, even at the address of one destroyed before */
	i = comm_add(c, ev->hdr.pid, ev->comm);
	if (i < 0)
		return -ENOMEM;
	c->comms[i].id_hash = ev->id_hash;
	c->comms[i].rank = ev->rank;
	c->comms[i].nranks = ev->nranks;
	c->comms[i].setup_seen = true;
	return 0;
}

static int on_call(struct nccl_calls *c, const struct pass_event *e, const struct isr_ev_nccl_call *ev)
{
	struct nccl_proc *p = proc_get(c, ev->hdr.pid);
	__u64 bytes = ev->count * ISR_NCCL_DTYPE_SIZE(ev->dtype);
	struct nccl_arrival *a;
	long i;

	if (!p)
		return -ENOMEM;
	if (ev->func < ISR_NCCL_FN_MAX) {
		p->calls[ev->func]++;
		p->bytes[ev->func] += bytes;
	}
	if (ev->func == ISR_NCCL_FN_ncclGroupStart || ev->func == ISR_NCCL_FN_ncclGroupEnd)
		return join_group_call(c, ev, (size_t)(p - c->procs));
	if (!nccl_func_is_collective(ev->func))
		return 0;
	if (!ev->seq) {
		p->unnumbered++;
		return 0;
	}
	i = comm_find(c, ev->hdr.pid, ev->comm);
	if (i < 0)
		i = comm_add(c, ev->hdr.pid, ev->comm);
	if (i < 0 || grow((void **)&c->arrivals, &c->arrivals_cap, c->narrivals + 1, sizeof(*c->arrivals)))
		return -ENOMEM;
	c->comms[i].collectives++;
	p->collectives++;
	a = &c->arrivals[c->narrivals++];
	*a = (struct nccl_arrival){ .ns = e->start, .seq = ev->seq, .bytes = bytes, .pid = ev->hdr.pid,
				    .tid = ev->hdr.tid, .comm = (__u32)i, .func = ev->func };
	return join_entry(c, &ev->hdr, c->narrivals - 1, (size_t)(p - c->procs));
}

static int on_env(struct nccl_calls *c, const struct isr_ev_rank_env *ev)
{
	struct nccl_proc *p = proc_get(c, ev->hdr.pid);

	if (!p)
		return -ENOMEM;
	p->env_rank = ev->flags & ISR_RANK_ENV_RANK ? ev->rank : -1;
	p->env_local_rank = ev->flags & ISR_RANK_ENV_LOCAL_RANK ? ev->local_rank : -1;
	p->env_world_size = ev->flags & ISR_RANK_ENV_WORLD_SIZE ? ev->world_size : -1;
	return 0;
}

int nccl_calls__event(struct nccl_calls *c, const struct pass_event *e)
{
	const struct isr_ev_hdr *h = e->h;

	join_expire(c, e->start);
	switch (h->type) {
	case ISR_EV_GPU_API:
		return on_launch_record(c, e, (const void *)h);
	case ISR_EV_GPU_KERNEL:
		return on_kernel(c, e, (const void *)h);
	case ISR_EV_GPU_NAME:
		return on_kernel_name(c, (const void *)h);
	case ISR_EV_NCCL_COMM:
		return on_comm(c, (const void *)h);
	case ISR_EV_NCCL_CALL:
		return on_call(c, e, (const void *)h);
	case ISR_EV_RANK_ENV:
		return on_env(c, (const void *)h);
	default:
		return 0;
	}
}

void nccl_calls__free(struct nccl_calls *c)
{
	if (!c)
		return;
	free(c->comms);
	free(c->arrivals);
	free(c->procs);
	join_free(c->join);
	memset(c, 0, sizeof(*c));
}
