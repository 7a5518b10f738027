// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * device_memory_leak: device memory that keeps growing in the second half
 * of the recording, and memory a process still held when it exited, with
 * the Python lines that allocated it (from the stacks captured at
 * allocations).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "htab.h"

#define GROWTH_MIN_BYTES	(256ull << 20)
#define GROWTH_MIN_SHARE	0.10	/* of the peak */
#define HELD_MIN_BYTES		(64ull << 20)
#define TOP_SITES		3

struct alloc {
	__u32 pid, tid;
	__u64 addr, bytes, ts;
	__u32 stack;		/* Python stack captured at the call; 0: none */
};

struct mem_proc {
	__u32 pid;
	__u64 live, peak, at_mid;
	bool mid_taken, exited;
	__u64 held_at_exit, held_allocs;
	struct site_bytes {
		__u32 stack;
		__u64 bytes, allocs;
	} *sites;
	size_t nsites;
};

struct last_capture {
	__u32 tid;
	__u64 ts;
	__u32 stack;		/* last CUDA-call stack sample of the thread */
	size_t alloc;		/* index + 1 of its last allocation, 0: none */
	__u64 alloc_ts;
};

struct mem_state {
	struct rule_ctx *c;
	struct htab by_addr;		/* struct live: (pid, address) -> index in allocs */
	struct alloc *allocs;
	size_t n, cap;
	struct mem_proc *procs;
	size_t nprocs, procs_cap;
	struct last_capture *last;
	size_t nlast, last_cap;
	__u64 mid;
	int err;
};

/* A live allocation: its address in its process, and where it is in
 * allocs. */
struct live {
	__u32 pid;
	__u64 addr;
	size_t index;
};

static __u64 live_hash(const void *e)
{
	const struct live *l = e;

	return hash__mix(hash__u64(l->pid), l->addr);
}

static bool live_equal(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	return x->pid == y->pid && x->addr == y->addr;
}

static int live_set(struct mem_state *s, __u32 pid, __u64 addr, size_t index)
{
	struct live key = { .pid = pid, .addr = addr }, *l;
	bool added;

	l = htab__insert(&s->by_addr, &key, &added);
	if (!l)
		return -ENOMEM;
	l->index = index;
	return 0;
}

static struct mem_proc *proc_of(struct mem_state *s, __u32 pid)
{
	struct mem_proc *n;

	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (s->nprocs == s->procs_cap) {
		size_t cap = s->procs_cap ? 2 * s->procs_cap : 4;

		n = reallocarray(s->procs, cap, sizeof(*n));
		if (!n)
			return NULL;
		s->procs = n;
		s->procs_cap = cap;
	}
	memset(&s->procs[s->nprocs], 0, sizeof(*s->procs));
	s->procs[s->nprocs].pid = pid;
	return &s->procs[s->nprocs++];
}

static struct last_capture *last_of(struct mem_state *s, __u32 tid)
{
	for (size_t i = 0; i < s->nlast; i++)
		if (s->last[i].tid == tid)
			return &s->last[i];
	if (s->nlast == s->last_cap) {
		size_t cap = s->last_cap ? 2 * s->last_cap : 8;
		struct last_capture *n = reallocarray(s->last, cap, sizeof(*n));

		if (!n)
			return NULL;
		s->last = n;
		s->last_cap = cap;
	}
	memset(&s->last[s->nlast], 0, sizeof(*s->last));
	s->last[s->nlast].tid = tid;
	return &s->last[s->nlast++];
}

static bool device_kind(const struct isr_cuda_fn *fn)
{
	return fn->aux == ISR_ALLOC_DEVICE || fn->aux == ISR_ALLOC_ASYNC || fn->aux == ISR_ALLOC_MANAGED;
}

static void take_mid(struct mem_state *s, struct mem_proc *p, __u64 ts)
{
	if (!p->mid_taken && ts >= s->mid) {
		p->at_mid = p->live;
		p->mid_taken = true;
	}
}

static void on_alloc(struct mem_state *s, const struct isr_ev_cuda_call *call)
{
	struct mem_proc *p = proc_of(s, call->hdr.pid);
	struct last_capture *l = last_of(s, call->hdr.tid);
	struct alloc *n;

	if (!p || !l) {
		s->err = -ENOMEM;
		return;
	}
	take_mid(s, p, call->hdr.ts_ns);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;

		n = reallocarray(s->allocs, cap, sizeof(*n));
		if (!n) {
			s->err = -ENOMEM;
			return;
		}
		s->allocs = n;
		s->cap = cap;
	}
	s->allocs[s->n] = (struct alloc){ .pid = call->hdr.pid, .tid = call->hdr.tid, .addr = call->args[0],
					  .bytes = call->args[1], .ts = call->hdr.ts_ns };
	if (l->ts == call->hdr.ts_ns)
		s->allocs[s->n].stack = l->stack;
	if (live_set(s, call->hdr.pid, call->args[0], s->n)) {
		s->err = -ENOMEM;
		return;
	}
	l->alloc = s->n + 1;
	l->alloc_ts = call->hdr.ts_ns;
	s->n++;
	p->live += call->args[1];
	if (p->live > p->peak)
		p->peak = p->live;
}

static void on_free(struct mem_state *s, __u32 pid, __u64 addr, __u64 ts)
{
	struct live key = { .pid = pid, .addr = addr }, found;
	struct mem_proc *p = proc_of(s, pid);
	size_t i, last;

	if (!p) {
		s->err = -ENOMEM;
		return;
	}
	take_mid(s, p, ts);
	if (!htab__remove(&s->by_addr, &key, &found))
		return;
	i = found.index;
	p->live -= s->allocs[i].bytes;
	last = s->n - 1;
	if (i != last) {
		s->allocs[i] = s->allocs[last];
		if (live_set(s, s->allocs[i].pid, s->allocs[i].addr, i))
			s->err = -ENOMEM;
		for (size_t k = 0; k < s->nlast; k++)
			if (s->last[k].alloc == last + 1)
				s->last[k].alloc = i + 1;
	}
	for (size_t k = 0; k < s->nlast; k++)
		if (s->last[k].alloc == i + 1 && i == last)
			s->last[k].alloc = 0;
	s->n--;
}

/* What pid still holds when it exits, by allocating site. */
static void on_process_exit(struct mem_state *s, __u32 pid)
{
	struct mem_proc *p = proc_of(s, pid);

	if (!p) {
		s->err = -ENOMEM;
		return;
	}
	if (p->exited)
		return;
	p->exited = true;
	for (size_t i = 0; i < s->n; i++) {
		const struct alloc *a = &s->allocs[i];
		struct site_bytes *sb = NULL;

		if (a->pid != pid)
			continue;
		p->held_at_exit += a->bytes;
		p->held_allocs++;
		for (size_t k = 0; k < p->nsites; k++)
			if (p->sites[k].stack == a->stack)
				sb = &p->sites[k];
		if (!sb) {
			struct site_bytes *n = reallocarray(p->sites, p->nsites + 1, sizeof(*n));

			if (!n) {
				s->err = -ENOMEM;
				return;
			}
			p->sites = n;
			sb = &p->sites[p->nsites++];
			sb->stack = a->stack;
			sb->bytes = sb->allocs = 0;
		}
		sb->bytes += a->bytes;
		sb->allocs++;
	}
}

static void mem_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct mem_state *s = ctx;
	const struct isr_ev_hdr *h = e->h;

	(void)th;
	if (s->err)
		return;
	if (h->type == ISR_EV_PY_SAMPLE && ((const struct isr_ev_py_sample *)h)->kind == ISR_PY_KIND_CUDA) {
		struct last_capture *l = last_of(s, h->tid);
		__u32 stack = ((const struct isr_ev_py_sample *)h)->stack_id;

		if (!l) {
			s->err = -ENOMEM;
			return;
		}
		l->ts = h->ts_ns;
		l->stack = stack;
		if (l->alloc && l->alloc_ts == h->ts_ns && !s->allocs[l->alloc - 1].stack)
			s->allocs[l->alloc - 1].stack = stack;
		return;
	}
	if (h->type == ISR_EV_PROC_EXIT && (((const struct isr_ev_proc_exit *)h)->flags & ISR_EXIT_GROUP_DEAD)) {
		on_process_exit(s, h->pid);
		return;
	}
	if (h->type == ISR_EV_CUDA_CALL) {
		const struct isr_ev_cuda_call *call = (const void *)h;
		const struct isr_cuda_fn *fn = isr_cuda_fn(call->func);

		if (!fn || !(call->flags & ISR_CUDA_RETURNED) || call->status != 0)
			return;
		if (fn->family == ISR_CUDA_FAM_ALLOC && device_kind(fn))
			on_alloc(s, call);
		else if (fn->family == ISR_CUDA_FAM_FREE && device_kind(fn))
			on_free(s, h->pid, call->args[0], h->ts_ns);
	}
}

static void *mem_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct mem_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = c;
	htab__init(&s->by_addr, sizeof(struct live), live_hash, live_equal);
	s->mid = c->start + (c->end - c->start) / 2;
	obs->event = mem_event;
	return s;
}

static int site_desc(const void *a, const void *b)
{
	const struct site_bytes *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static int held_finding(struct rule_ctx *c, struct mem_proc *p)
{
	struct finding *f = findings__add(c->out, "device_memory_leak", SEV_INFO, 0, p->pid, 0);
	json_t *arr = json_array();
	char site[PY_SITE_LEN];
	int err = 0;

	if (!f || !arr) {
		json_decref(arr);
		return -ENOMEM;
	}
	qsort(p->sites, p->nsites, sizeof(*p->sites), site_desc);
	ev_set(f->evidence, "pid", ev_u64(p->pid));
	ev_set(f->evidence, "held_at_exit_bytes", ev_u64(p->held_at_exit));
	ev_set(f->evidence, "held_allocations", ev_u64(p->held_allocs));
	err |= finding__say(f, "Process %u exited holding %.1f MiB of device memory in %llu allocations it made "
			       "while recorded (never freed)", p->pid, (double)p->held_at_exit / (1 << 20),
			    (unsigned long long)p->held_allocs);
	for (size_t i = 0; i < p->nsites && i < TOP_SITES; i++) {
		json_t *o = json_object();
		bool named = p->sites[i].stack && rule_stack_site(c, p->sites[i].stack, site, sizeof(site));

		ev_set(o, "site", named ? ev_text(site, sizeof(site)) : json_null());
		ev_set(o, "bytes", ev_u64(p->sites[i].bytes));
		ev_set(o, "allocations", ev_u64(p->sites[i].allocs));
		json_array_append_new(arr, o);
		if (named)
			err |= finding__say(f, "%s %.1f MiB allocated at `%s`", i ? ";" : ":",
					    (double)p->sites[i].bytes / (1 << 20), site);
	}
	ev_set(f->evidence, "sites", arr);
	err |= finding__say(f, ". A caching allocator keeps its pool until exit, so this may be by design; "
			       "memory that grows step after step is a leak.");
	err |= finding__suggest(f, "Free what the job no longer needs (drop references to tensors, `del` "
				   "caches of outputs, call torch.cuda.empty_cache() between phases) and check "
				   "torch.cuda.memory_summary() for what the allocator holds.");
	return err ? -ENOMEM : 0;
}

static int growth_finding(struct rule_ctx *c, const struct mem_proc *p)
{
	__u64 growth = p->live - p->at_mid;
	struct finding *f = findings__add(c->out, "device_memory_leak", SEV_WARNING, 0, p->pid, 0);
	int err = 0;

	if (!f)
		return -ENOMEM;
	ev_set(f->evidence, "pid", ev_u64(p->pid));
	ev_set(f->evidence, "growth_bytes", ev_u64(growth));
	ev_set(f->evidence, "live_at_midpoint_bytes", ev_u64(p->at_mid));
	ev_set(f->evidence, "live_at_end_bytes", ev_u64(p->live));
	ev_set(f->evidence, "peak_bytes", ev_u64(p->peak));
	err |= finding__say(f, "Device memory of process %u grew by %.1f MiB in the second half of the recording "
			       "(%.1f MiB at the midpoint, %.1f MiB at the end) without being freed: it is "
			       "leaking or accumulating.",
			    p->pid, (double)growth / (1 << 20), (double)p->at_mid / (1 << 20), (double)p->live / (1 << 20));
	err |= finding__suggest(f, "Look for tensors kept across steps (lists of losses or outputs that hold the "
				   "graph: use `.item()` or `.detach()`), growing caches, and memory allocated per "
				   "step; torch.cuda.memory_snapshot() shows who allocated what.");
	return err ? -ENOMEM : 0;
}

static int mem_finish(void *state, struct rule_ctx *c)
{
	struct mem_state *s = state;

	if (s->err)
		return s->err;
	for (size_t i = 0; i < s->nprocs; i++) {
		struct mem_proc *p = &s->procs[i];
		int err = 0;

		if (p->mid_taken && p->live > p->at_mid && p->live - p->at_mid >= GROWTH_MIN_BYTES &&
		    (double)(p->live - p->at_mid) >= GROWTH_MIN_SHARE * (double)p->peak)
			err = growth_finding(c, p);
		else if (p->exited && p->held_at_exit >= HELD_MIN_BYTES)
			err = held_finding(c, p);
		if (err)
			return err;
	}
	return 0;
}

static void mem_free(void *state)
{
	struct mem_state *s = state;

	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].sites);
	htab__free(&s->by_addr);
	free(s->allocs);
	free(s->procs);
	free(s->last);
	free(s);
}

const struct rule rule_device_memory_leak = {
	.id = "device_memory_leak",
	.title = "Device memory not freed",
	.phase = RULE_PHASE_CAUSE,
	.start = mem_start,
	.finish = mem_finish,
	.free = mem_free,
};
