// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-thread scheduling summary: fed the pass's events (pass.h) one by one,
 * with a small state machine per thread (see summary.h for the definitions).
 *
 * The threads, their incarnations and their time on and off a CPU are the
 * task model's (tasks.h), which the pass feeds first: the summary counts
 * per thread (by its index among the task model's threads) what the events
 * add to that, so a pass costs O(events + threads).
 *
 * CUDA events feed three more tables on the same pass: per function (calls,
 * failures, durations), per process (live allocations by address, so a
 * free finds its size; physical VMM handles) and per launch handle of a
 * process (its name and launches). Kernel names are resolved and demangled
 * once at the end, for the launched handles only.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "summary.h"
#include "buf.h"
#include "htab.h"

/* What the summary counts of a thread (struct thread_summary), beyond the
 * task model's. */
struct tstate {
	struct thread_summary s;
	__u64 *sync_ns_by_fn;	/* [ISR_CUDA_FN_MAX], once the thread synchronizes */
	__u64 hot_calls;	/* calls of the entry-only families (scaled when sampled) */
	__u64 copy_calls;	/* of them, the async copies (scaled by their own windows when switched apart) */
	__u64 run_since;	/* on a CPU since, as the last event that touched it told; 0: not */
	__u64 run_faults_on;	/* on a CPU while page-fault tracing was on (sampling.h) */
	bool gil_seen;		/* any GIL event of the thread yet */
	__u64 gil_held_since;	/* holds the GIL since (PyEval_RestoreThread returned); 0: not */
	struct htab waker_idx;	/* pid << 32 | tid of a waker -> index in wakers */
	struct waker_summary *wakers;
	size_t waker_count, waker_cap;
};

/* A process's CUDA state. */
struct pstate {
	struct process_summary s;
	size_t failed_cap;
	struct htab device_allocs;	/* address -> bytes (DEVICE, ASYNC, MANAGED) */
	struct htab host_allocs;	/* address -> bytes (HOST: pinned) */
	struct htab vmm_handles;	/* physical handle -> bytes */
	struct htab kernels;		/* launch handle -> index in ctx.kernels */
	__u64 *hot_by_fn;		/* [ISR_CUDA_FN_MAX]: entry-only calls, once it made one */
};

/* A launch handle of a process. */
struct kstate {
	__u32 pid;
	__u64 handle;
	__u64 owner;		/* unnamed alias: the kernel whose name it takes */
	__u64 launches;		/* all of the entry-only families: scaled when sampled */
	bool has_name;
	char name[ISR_KERNEL_NAME_LEN + 1];
};

struct ctx {
	const struct recording *r;
	const struct pass *pass;
	__u64 start, end;
	struct summary *s;	/* being filled */
	struct sampling_builder *sampling;
	const struct tasks *tasks;
	const struct task_change *chg;	/* the event's (pass_event.tasks) */
	struct tstate *threads;	/* by the task model's index */
	size_t count, cap;
	struct htab fn_by_id;	/* func -> index in fns */
	struct cuda_fn_summary *fns;
	size_t fn_count, fn_cap;
	struct htab proc_by_pid;	/* pid -> index in procs */
	struct pstate *procs;
	size_t proc_count, proc_cap;
	struct kstate *kernels;
	size_t kernel_count, kernel_cap;
	size_t kernels_kept;	/* distinct handles, SUMMARY_MAX_KERNELS at most */
};

/* The handlers' state. */
struct summary_builder {
	struct ctx c;
};

/* The element under key in map, of the array *arrp of *count elements of
 * elem_size (*cap allocated): its index in *idx, the one there or a new
 * zeroed one appended (*added). 0 or -ENOMEM. */
static int pool__index(struct htab *map, __u64 key, void *arrp, size_t *count, size_t *cap, size_t elem_size,
		       __u64 *idx, bool *added)
{
	unsigned char *arr;
	int err;

	*added = false;
	if (htab_u64__get(map, key, idx))
		return 0;
	err = array__reserve(arrp, cap, *count + 1, elem_size);
	err = err ?: htab_u64__put(map, key, *count);
	if (err)
		return err;
	memcpy(&arr, arrp, sizeof(arr));
	memset(arr + *count * elem_size, 0, elem_size);
	*idx = (*count)++;
	*added = true;
	return 0;
}

static void copy_comm(char dst[16], const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen < 15 ? srclen : 15);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The counts of the thread the event is about: NULL when it is not a
 * target's live thread (or on error, with *err set). */
static struct tstate *ctx__tstate(struct ctx *c, const struct task_thread *tt, int *err)
{
	size_t n = tasks__count(c->tasks);

	*err = 0;
	if (!tt)
		return NULL;
	if (c->count < n) {
		*err = array__reserve(&c->threads, &c->cap, n, sizeof(*c->threads));
		if (*err)
			return NULL;
		memset(c->threads + c->count, 0, (n - c->count) * sizeof(*c->threads));
		c->count = n;
	}
	return &c->threads[tt->ix];
}

static struct tstate *ctx__thread(struct ctx *c, int *err)
{
	return ctx__tstate(c, c->chg->thread, err);
}

/* Each thread's time on a CPU while page-fault tracing was on: a running
 * spell that the event ended (most events of a running thread leave it
 * running: its spell goes on), and where it starts one, when. */
static int ctx__running(struct ctx *c)
{
	int err = 0;

	for (size_t i = 0; i < c->chg->ntouch && !err; i++) {
		const struct task_touch *tc = &c->chg->touch[i];
		struct tstate *t = ctx__tstate(c, tc->t, &err);

		if (!t)
			break;
		if (tc->was == TASK_RUNNING && (tc->t->state != TASK_RUNNING || tc->t->since != tc->was_since))
			t->run_faults_on += sampling_builder__faults_on(c->sampling, tc->was_since, c->chg->ts);
		t->run_since = tc->t->state == TASK_RUNNING ? tc->t->since : 0;
	}
	return err;
}

static __u64 span(__u64 from, __u64 to)
{
	return to > from ? to - from : 0;
}

/* Counts a wakeup of t by another task, with the blocked time it ended. */
static int thread__woken_by(struct tstate *t, const struct task_thread *tt, __u32 pid, __u32 tid,
			    __u64 blocked_ns)
{
	__u64 key = (__u64)pid << 32 | tid, idx;
	struct waker_summary *w;
	bool added;
	int err;

	if (!tid || tid == tt->tid)
		return 0;
	err = pool__index(&t->waker_idx, key, &t->wakers, &t->waker_count, &t->waker_cap, sizeof(*t->wakers), &idx,
			  &added);
	if (err)
		return err;
	w = &t->wakers[idx];
	w->pid = pid;
	w->tid = tid;
	w->wakeups++;
	w->blocked_ns += blocked_ns;
	return 0;
}

/* The waker with the most wakeups; of equals, the one that ended the most
 * blocked time, then the first seen. */
static void thread__top_waker(struct tstate *t)
{
	const struct waker_summary *best = NULL;

	for (size_t i = 0; i < t->waker_count; i++) {
		const struct waker_summary *w = &t->wakers[i];

		if (!best || w->wakeups > best->wakeups ||
		    (w->wakeups == best->wakeups && w->blocked_ns > best->blocked_ns))
			best = w;
	}
	if (best)
		t->s.top_waker = *best;
}

/* ---- CUDA ------------------------------------------------------------------ */

#define CUDA_SUCCESS		0
#define CUDA_ERROR_NOT_READY	600

static struct cuda_fn_summary *ctx__fn(struct ctx *c, __u16 func, int *err)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(func);
	struct cuda_fn_summary *f;
	bool added;
	__u64 idx;

	*err = pool__index(&c->fn_by_id, func, &c->fns, &c->fn_count, &c->fn_cap, sizeof(*c->fns), &idx, &added);
	if (*err)
		return NULL;
	f = &c->fns[idx];
	if (!added)
		return f;
	f->func = func;
	if (fn)
		snprintf(f->name, sizeof(f->name), "%s", fn->symbol);
	else
		snprintf(f->name, sizeof(f->name), "cuda_fn_%u", func);
	return f;
}

#define FN_NAME_FITS(id, sym, fam, aux, flags) \
	_Static_assert(sizeof(#sym) <= SUMMARY_FN_NAME_LEN, "cuda_fn_summary.name too short for " #sym);
ISR_CUDA_FUNCS(FN_NAME_FITS)
#undef FN_NAME_FITS

/* The CUDA state of process pid, made on first sight. NULL with *err == 0
 * for pid 0, which no target has (a damaged event). */
static struct pstate *ctx__proc(struct ctx *c, __u32 pid, int *err)
{
	bool added;
	__u64 idx;

	if (!pid)
		return NULL;
	*err = pool__index(&c->proc_by_pid, pid, &c->procs, &c->proc_count, &c->proc_cap, sizeof(*c->procs), &idx,
			   &added);
	if (*err)
		return NULL;
	c->procs[idx].s.pid = pid;
	return &c->procs[idx];
}

static struct kstate *ctx__kernel_find(const struct ctx *c, __u32 pid, __u64 handle)
{
	__u64 idx, k;

	if (!htab_u64__get(&c->proc_by_pid, pid, &idx) || !htab_u64__get(&c->procs[idx].kernels, handle, &k))
		return NULL;
	return &c->kernels[k];
}

/* The state of handle in p: the one there, or a new one while fewer than
 * SUMMARY_MAX_KERNELS are kept; beyond, the process's other kernels
 * (*other) if other is not NULL, else NULL with *err 0. */
static struct kstate *ctx__kernel(struct ctx *c, struct pstate *p, __u64 handle, bool *other, int *err)
{
	struct kstate *k;
	bool added;
	__u64 idx;

	*err = 0;
	if (other)
		*other = false;
	if (!htab_u64__get(&p->kernels, handle, &idx) && c->kernels_kept >= SUMMARY_MAX_KERNELS) {
		if (!other)
			return NULL;
		handle = KERNEL_OTHER_HANDLE;
		*other = true;
	}
	*err = pool__index(&p->kernels, handle, &c->kernels, &c->kernel_count, &c->kernel_cap, sizeof(*c->kernels),
			   &idx, &added);
	if (*err)
		return NULL;
	c->kernels_kept += added && handle != KERNEL_OTHER_HANDLE;
	k = &c->kernels[idx];
	k->pid = p->s.pid;
	k->handle = handle;
	return k;
}

/* The named handle that k is, or is an alias of (following aliases of
 * aliases a few steps); NULL when no name is known. */
static const struct kstate *ctx__kernel_named(const struct ctx *c, const struct kstate *k)
{
	for (int hops = 0; k && hops < 8; hops++) {
		if (k->has_name)
			return k;
		if (!k->owner)
			return NULL;
		k = ctx__kernel_find(c, k->pid, k->owner);
	}
	return NULL;
}

static void kernel__take_name(struct kstate *k, const struct kstate *named)
{
	if (!named || named == k)
		return;
	memcpy(k->name, named->name, sizeof(k->name));
	k->has_name = true;
}

static void memory__add(__u64 *live, __u64 *peak, __u64 bytes)
{
	*live += bytes;
	if (*live > *peak)
		*peak = *live;
}

static int proc__alloc(struct pstate *p, __u64 kind, __u64 addr, __u64 bytes)
{
	bool host = kind == ISR_ALLOC_HOST;
	struct htab *m = host ? &p->host_allocs : &p->device_allocs;
	__u64 *live = host ? &p->s.pinned_host_live_bytes : &p->s.device_live_bytes;
	__u64 *peak = host ? &p->s.pinned_host_peak_bytes : &p->s.device_peak_bytes;
	__u64 old;
	int err;

	if (!addr || kind < ISR_ALLOC_DEVICE || kind > ISR_ALLOC_HOST)
		return 0;
	/* still live at this address: its free was lost */
	if (htab_u64__take(m, addr, &old))
		*live -= old;
	err = htab_u64__put(m, addr, bytes);
	if (!err)
		memory__add(live, peak, bytes);
	return err;
}

static void proc__free(struct pstate *p, __u64 kind, __u64 addr)
{
	bool host = kind == ISR_ALLOC_HOST;
	__u64 bytes;

	if (!addr)	/* freeing NULL does nothing */
		return;
	if (!htab_u64__take(host ? &p->host_allocs : &p->device_allocs, addr, &bytes))
		p->s.unknown_frees++;
	else if (host)
		p->s.pinned_host_live_bytes -= bytes;
	else
		p->s.device_live_bytes -= bytes;
}

static int proc__vmm_create(struct pstate *p, __u64 handle, __u64 bytes)
{
	__u64 old;
	int err;

	if (!handle)
		return 0;
	if (htab_u64__take(&p->vmm_handles, handle, &old))
		p->s.device_live_bytes -= old;
	err = htab_u64__put(&p->vmm_handles, handle, bytes);
	if (!err)
		memory__add(&p->s.device_live_bytes, &p->s.device_peak_bytes, bytes);
	return err;
}

static void proc__vmm_release(struct pstate *p, __u64 handle)
{
	__u64 bytes;

	if (!handle)
		return;
	if (htab_u64__take(&p->vmm_handles, handle, &bytes))
		p->s.device_live_bytes -= bytes;
	else
		p->s.unknown_frees++;
}

/* Exec or exit: the address space and everything CUDA held in it is gone. */
static void ctx__proc_gone(struct ctx *c, __u32 pid)
{
	struct pstate *p;
	__u64 idx;

	if (!htab_u64__get(&c->proc_by_pid, pid, &idx))
		return;
	p = &c->procs[idx];
	htab__free(&p->device_allocs);
	htab__free(&p->host_allocs);
	htab__free(&p->vmm_handles);
	htab__free(&p->kernels);
	p->s.device_held_at_exit_bytes += p->s.device_live_bytes;
	p->s.device_live_bytes = 0;
	p->s.pinned_host_live_bytes = 0;
}

static int proc__count_failure(struct pstate *p, __u16 func)
{
	struct cuda_fn_count *fc;

	for (size_t i = 0; i < p->s.failed_count; i++) {
		if (p->s.failed[i].func == func) {
			p->s.failed[i].count++;
			return 0;
		}
	}
	if (array__reserve(&p->s.failed, &p->failed_cap, p->s.failed_count + 1, sizeof(*p->s.failed)))
		return -ENOMEM;
	fc = &p->s.failed[p->s.failed_count++];
	fc->func = func;
	fc->count = 1;
	return 0;
}

/* Memory effect of a call that succeeded. */
static int proc__apply_call(struct pstate *p, __u16 family, const struct isr_ev_cuda_call *e)
{
	switch (family) {
	case ISR_CUDA_FAM_ALLOC:
		return proc__alloc(p, e->args[3], e->args[0], e->args[1]);
	case ISR_CUDA_FAM_FREE:
		proc__free(p, e->args[3], e->args[0]);
		return 0;
	case ISR_CUDA_FAM_VMM_CREATE:
		return proc__vmm_create(p, e->args[0], e->args[1]);
	case ISR_CUDA_FAM_VMM_RELEASE:
		proc__vmm_release(p, e->args[0]);
		return 0;
	default:
		return 0;
	}
}

static int thread__cuda_call(struct tstate *t, __u16 kind, const struct isr_ev_cuda_call *e)
{
	t->s.cuda_calls++;
	t->hot_calls += (kind & ISR_CUDA_K_HOT) != 0;
	t->copy_calls += (kind & ISR_CUDA_K_ASYNC_COPY) != 0;
	t->s.cuda_launches += (kind & ISR_CUDA_K_LAUNCH) != 0;
	if (!(kind & ISR_CUDA_K_SYNC) || !(e->flags & ISR_CUDA_RETURNED))
		return 0;
	t->s.cuda_sync_ns += e->duration_ns;
	if (!t->sync_ns_by_fn) {
		t->sync_ns_by_fn = calloc(ISR_CUDA_FN_MAX, sizeof(*t->sync_ns_by_fn));
		if (!t->sync_ns_by_fn)
			return -ENOMEM;
	}
	t->sync_ns_by_fn[e->func] += e->duration_ns;	/* a known function: it has a family */
	return 0;
}

static int on_cuda_call(void *ctx, const struct isr_ev_cuda_call *e)
{
	struct ctx *c = ctx;
	const struct isr_cuda_fn *fn = isr_cuda_fn(e->func);
	__u16 family = fn ? fn->family : 0, kind = fn ? fn->kind : 0;
	bool returned = e->flags & ISR_CUDA_RETURNED;
	struct cuda_fn_summary *f;
	struct pstate *p;
	struct tstate *t;
	int err = 0;

	f = ctx__fn(c, e->func, &err);
	if (!f)
		return err;
	f->calls++;
	p = ctx__proc(c, e->hdr.pid, &err);
	if (!p)
		return err;
	/* what a recorded call of the hot path stands for is known at the
	 * end (sampling.h): counted per process and function until then */
	if (kind & ISR_CUDA_K_HOT) {
		if (!p->hot_by_fn) {
			p->hot_by_fn = calloc(ISR_CUDA_FN_MAX, sizeof(*p->hot_by_fn));
			if (!p->hot_by_fn)
				return -ENOMEM;
		}
		p->hot_by_fn[e->func]++;	/* a known function: it has a family */
	}
	if (returned) {
		f->returned++;
		f->total_ns += e->duration_ns;
		if (e->duration_ns > f->max_ns)
			f->max_ns = e->duration_ns;
		if (e->status == CUDA_SUCCESS) {
			err = proc__apply_call(p, family, e);
		} else if (e->status == CUDA_ERROR_NOT_READY && (kind & ISR_CUDA_K_QUERY)) {
			f->not_ready++;
		} else {
			f->failed++;
			f->last_error = e->status;
			err = proc__count_failure(p, e->func);
		}
		if (err)
			return err;
	}
	if ((family == ISR_CUDA_FAM_LAUNCH || family == ISR_CUDA_FAM_LAUNCH_EX) && e->args[0]) {
		bool other;
		struct kstate *k = ctx__kernel(c, p, e->args[0], &other, &err);

		if (!k)
			return err;
		k->launches++;
		c->s->kernel_launches_other += other;
	}
	t = ctx__thread(c, &err);
	if (!t)
		return err;
	return thread__cuda_call(t, kind, e);
}

static int on_cuda_name(void *ctx, const struct isr_ev_cuda_name *e)
{
	struct ctx *c = ctx;
	struct cuda_fn_summary *f;
	struct pstate *p;
	struct kstate *k;
	int err = 0;

	f = ctx__fn(c, e->func, &err);
	if (!f)
		return err;
	f->names++;
	p = ctx__proc(c, e->hdr.pid, &err);
	if (!p)
		return err;
	/* beyond SUMMARY_MAX_KERNELS, a new handle's name is not kept */
	k = e->handle ? ctx__kernel(c, p, e->handle, NULL, &err) : NULL;
	if (err)
		return err;
	c->s->kernel_names_other += e->handle && !k;
	if (k) {
		if (e->name[0]) {
			memcpy(k->name, e->name, sizeof(e->name));
			k->name[sizeof(e->name)] = '\0';
			k->has_name = true;
			k->owner = 0;
		} else {
			/* an alias: named now if its kernel is, else at the end */
			k->has_name = false;
			k->owner = e->owner;
			kernel__take_name(k, ctx__kernel_named(c, k));
		}
	}
	return err;
}

/* A live switch-out: voluntary, or not (preempted, or yielded runnable). */
static int on_switch(void *ctx, const struct isr_ev_sched_switch *e)
{
	int err = 0;
	struct tstate *prev = ctx__thread(ctx, &err);

	if (!prev || ((struct ctx *)ctx)->chg->thread->exited)
		return err;
	if (e->flags & (ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE))
		prev->s.switches_involuntary++;
	else
		prev->s.switches_voluntary++;
	return 0;
}

/* A wakeup, and the waker of the blocked time it ended: from the thread's
 * switch-out (or its window's start) to the wakeup, when it was asleep. */
static int on_wakeup(void *ctx, const struct isr_ev_sched_wakeup *e)
{
	struct ctx *c = ctx;
	int err = 0;
	struct tstate *t = ctx__thread(c, &err);
	const struct task_touch *tc = &c->chg->touch[0];
	__u32 waker = isr_wakeup_waker_tid(e);
	__u64 blocked;

	if (!t)
		return err;
	t->s.wakeups++;
	blocked = tc->was == TASK_BLOCKED || tc->was == TASK_IO ? span(tc->was_since, c->chg->ts) : 0;
	return thread__woken_by(t, c->chg->thread, waker ? e->waker_pid : 0, waker, blocked);
}

static int on_wakeup_new(void *ctx, const struct isr_ev_sched_wakeup *e)
{
	int err = 0;
	struct tstate *t = ctx__thread(ctx, &err);

	(void)e;
	if (t)
		t->s.wakeups++;
	return err;
}

static int on_fault(void *ctx, const struct isr_ev_page_fault *e)
{
	int err = 0;
	struct tstate *t = ctx__thread(ctx, &err);

	if (!t)
		return err;
	if (e->flags & ISR_FAULT_MAJOR)
		t->s.major_faults++;
	else
		t->s.minor_faults++;
	if (!(e->flags & ISR_FAULT_HAS_START))
		return 0;
	t->s.fault_ns += e->duration_ns;
	if (e->flags & ISR_FAULT_MAJOR)
		t->s.major_fault_ns += e->duration_ns;
	return 0;
}

/* The event's time, clamped to the window. */
static __u64 ctx__clamp(const struct ctx *c, __u64 ts)
{
	return ts < c->start ? c->start : ts > c->end ? c->end : ts;
}

/* ACQUIRE: waited, then holds the GIL from the return. RELEASE: held it
 * since the last acquire, or, for a thread first seen releasing it, since
 * its window start. ts: the event's time, clamped to the recording; the
 * part of a wait before the recording start is not in it. */
static void thread__gil(struct tstate *t, const struct task_thread *tt, const struct isr_ev_gil *e, __u64 ts,
			__u64 end)
{
	if (e->kind == ISR_GIL_ACQUIRE) {
		__u64 before = e->hdr.ts_ns < ts ? ts - e->hdr.ts_ns : 0;
		__u64 wait = e->wait_ns > before ? e->wait_ns - before : 0;
		__u64 ret = wait > end - ts ? end : ts + wait;

		t->s.gil_acquisitions++;
		t->s.gil_wait_ns += ret - ts;
		t->gil_held_since = ret;
	} else if (e->kind == ISR_GIL_RELEASE) {
		if (t->gil_held_since)
			t->s.gil_hold_ns += span(t->gil_held_since, ts);
		else if (!t->gil_seen)
			t->s.gil_hold_ns += span(tt->start_ns, ts);
		t->gil_held_since = 0;
	}
	t->gil_seen = true;
	t->s.gil_hold_measured = true;
}

static int on_gil_wait(void *ctx, const struct isr_ev_gil_wait *e)
{
	struct ctx *c = ctx;
	int err = 0;
	struct tstate *t = ctx__thread(c, &err);
	__u64 ts, end;

	if (!t)
		return err;
	ts = ctx__clamp(c, e->hdr.ts_ns);
	end = ctx__clamp(c, e->hdr.ts_ns + e->duration_ns);
	t->s.gil_blocked_ns += span(ts, end);
	t->s.gil_blocks++;
	return 0;
}

static int on_gil(void *ctx, const struct isr_ev_gil *e)
{
	struct ctx *c = ctx;
	int err = 0;
	struct tstate *t = ctx__thread(c, &err);

	if (!t)
		return err;
	thread__gil(t, c->chg->thread, e, ctx__clamp(c, e->hdr.ts_ns), c->end);
	return 0;
}

/* The threads, their names and their states are the task model's; the
 * budget's windows are read by analysis/model/sampling.c. */
static const struct isr_ev_handlers summary_handlers = {
	.sched_switch = on_switch,
	.sched_wakeup = on_wakeup,
	.sched_wakeup_new = on_wakeup_new,
	.page_fault_user = on_fault,
	.cuda_call = on_cuda_call,
	.cuda_name = on_cuda_name,
	.gil = on_gil,
	.gil_wait = on_gil_wait,
};

static const char *process_comm(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->process_count; i++)
		if (r->processes[i].pid == pid && r->processes[i].comm)
			return r->processes[i].comm;
	return NULL;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct thread_summary *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

/* The functions with the most sync time, most first. */
static void thread__top_sync_fns(struct tstate *t)
{
	for (int k = 0; k < SUMMARY_SYNC_FNS && t->sync_ns_by_fn; k++) {
		__u16 best = 0;

		for (__u16 f = 1; f < ISR_CUDA_FN_MAX; f++)
			if (t->sync_ns_by_fn[f] > t->sync_ns_by_fn[best])
				best = f;
		if (!best)
			return;
		t->s.cuda_sync_fns[k] = best;
		t->sync_ns_by_fn[best] = 0;
	}
}

static int fn_cmp(const void *a, const void *b)
{
	const struct cuda_fn_summary *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

static int fn_count_cmp(const void *a, const void *b)
{
	const struct cuda_fn_count *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

static int process_cmp(const void *a, const void *b)
{
	const struct process_summary *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int kernel_cmp(const void *a, const void *b)
{
	const struct kernel_summary *x = a, *y = b;

	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/* What a report shows for a launch handle: the kernel's name, demangled
 * when it is a complete C++ name, marked with "…" when the probe cut it;
 * "kernel@0x..." when it was never named. NULL when out of memory. */
static char *kernel__display_name(const struct kstate *k)
{
	bool cut = strlen(k->name) >= ISR_KERNEL_NAME_LEN - 1;
	char *name;
	int n;

	if (k->handle == KERNEL_OTHER_HANDLE)
		n = asprintf(&name, "%s", SUMMARY_OTHER_KERNELS);
	else if (!k->has_name)
		n = asprintf(&name, "kernel@0x%llx", (unsigned long long)k->handle);
	else if ((name = cplus_demangle(k->name, DMGL_PARAMS | DMGL_ANSI)))
		return name;
	else
		n = asprintf(&name, "%s%s", k->name, cut ? "…" : "");
	return n < 0 ? NULL : name;
}

static int ctx__finish_kernels(struct ctx *c, struct summary *s)
{
	size_t n = 0;
	double scale;

	for (size_t i = 0; i < c->kernel_count; i++)
		n += c->kernels[i].launches > 0;
	s->kernels = calloc(n ? n : 1, sizeof(*s->kernels));
	if (!s->kernels)
		return -ENOMEM;
	for (size_t i = 0; i < c->kernel_count; i++) {
		struct kstate *k = &c->kernels[i];
		struct kernel_summary *ks;

		if (!k->launches)
			continue;
		kernel__take_name(k, ctx__kernel_named(c, k));
		ks = &s->kernels[s->kernel_count++];
		ks->pid = k->pid;
		ks->handle = k->handle;
		ks->launches = k->launches;
		ks->observed_launches = k->launches;
		scale = sampling__scale(&s->sampling, k->pid);
		if (s->sampling.sampled && scale != 1) {
			ks->launches = llround((double)k->launches * scale);
			ks->estimated = true;
		}
		ks->named = k->has_name;
		ks->name = kernel__display_name(k);
		if (!ks->name)
			return -ENOMEM;
	}
	qsort(s->kernels, s->kernel_count, sizeof(*s->kernels), kernel_cmp);
	return 0;
}

/* The calls of function f, its sampled ones scaled by their process's
 * scale. */
static double ctx__fn_estimate(const struct ctx *c, const struct summary *s, const struct cuda_fn_summary *f)
{
	double est = 0;

	if (!isr_cuda_is(f->func, ISR_CUDA_K_HOT))
		return (double)f->calls;
	for (size_t i = 0; i < c->proc_count; i++)
		if (c->procs[i].hot_by_fn)
			est += (double)c->procs[i].hot_by_fn[f->func] *
			       sampling__call_scale(&s->sampling, c->procs[i].s.pid, f->func);
	return est;
}

/* Moves the CUDA tables into s. */
static int ctx__finish_cuda(struct ctx *c, struct summary *s)
{
	s->cuda_fns = c->fns;
	s->cuda_fn_count = c->fn_count;
	c->fns = NULL;
	c->fn_count = 0;
	for (size_t i = 0; i < s->cuda_fn_count; i++) {
		struct cuda_fn_summary *f = &s->cuda_fns[i];
		double est = ctx__fn_estimate(c, s, f);

		f->observed = f->calls;
		if (sampling__any(&s->sampling) && est != (double)f->calls) {
			f->calls = llround(est);
			f->estimated = true;
		}
	}
	if (s->cuda_fn_count)
		qsort(s->cuda_fns, s->cuda_fn_count, sizeof(*s->cuda_fns), fn_cmp);

	s->processes = calloc(c->proc_count ? c->proc_count : 1, sizeof(*s->processes));
	if (!s->processes)
		return -ENOMEM;
	for (size_t i = 0; i < c->proc_count; i++) {
		struct process_summary *ps = &s->processes[s->process_count++];

		*ps = c->procs[i].s;
		c->procs[i].s.failed = NULL;
		if (ps->failed_count)
			qsort(ps->failed, ps->failed_count, sizeof(*ps->failed), fn_count_cmp);
	}
	qsort(s->processes, s->process_count, sizeof(*s->processes), process_cmp);
	return ctx__finish_kernels(c, s);
}

/* The task model's part of a thread's summary: who, when, its time on and
 * off a CPU (tasks.h). */
static void thread__from_task(struct thread_summary *s, const struct task_thread *tt)
{
	s->pid = tt->pid;
	s->tid = tt->tid;
	memcpy(s->comm, tt->comm, sizeof(s->comm));
	s->start_ns = tt->start_ns;
	s->end_ns = tt->end_ns;
	s->created = tt->created;
	s->exited = tt->exited;
	s->on_cpu_ns = tt->ns[TASK_RUNNING];
	s->runqueue_wait_ns = tt->ns[TASK_RUNNABLE];
	s->blocked_io_ns = tt->ns[TASK_IO];
	s->off_cpu_ns = tt->ns[TASK_RUNNABLE] + tt->ns[TASK_BLOCKED] + tt->ns[TASK_IO];
}

/* Faults traced in windows (sampling.h): extrapolated over the thread's
 * time on a CPU from the part of it inside them. */
static void thread__faults_sampled(struct tstate *ts, const struct sampling *sm, const struct sampling_builder *b)
{
	struct thread_summary *t = &ts->s;
	__u64 seen = ts->run_faults_on;
	double k;

	if (ts->run_since)	/* on a CPU at its end */
		seen += sampling_builder__faults_on(b, ts->run_since, t->end_ns);
	k = sampling__faults_scale(sm, t->on_cpu_ns, seen, t->minor_faults + t->major_faults);

	if (k == 1)
		return;
	t->faults_estimated = true;
	t->minor_faults = llround((double)t->minor_faults * k);
	t->major_faults = llround((double)t->major_faults * k);
	t->fault_ns = llround((double)t->fault_ns * k);
	t->major_fault_ns = llround((double)t->major_fault_ns * k);
}

static int ctx__finish_threads(struct ctx *c, struct summary *s)
{
	size_t n = tasks__count(c->tasks);

	s->threads = calloc(n ? n : 1, sizeof(*s->threads));
	if (!s->threads || array__reserve(&c->threads, &c->cap, n ? n : 1, sizeof(*c->threads)))
		return -ENOMEM;
	memset(c->threads + c->count, 0, (n - c->count) * sizeof(*c->threads));
	c->count = n;
	for (size_t i = 0; i < c->count; i++) {
		struct tstate *t = &c->threads[i];
		double scale, copies;

		thread__from_task(&t->s, tasks__at(c->tasks, i));
		scale = sampling__scale(&s->sampling, t->s.pid);
		copies = sampling__copies_scale(&s->sampling, t->s.pid);
		if (t->gil_held_since)
			t->s.gil_hold_ns += span(t->gil_held_since, t->s.end_ns);
		if (!t->s.gil_acquisitions)
			t->s.gil_wait_ns = t->s.gil_blocked_ns;
		if (!t->s.comm[0]) {
			const char *comm = process_comm(c->r, t->s.pid);

			if (comm)
				copy_comm(t->s.comm, comm, strlen(comm));
		}
		thread__top_sync_fns(t);
		thread__top_waker(t);
		thread__faults_sampled(t, &s->sampling, c->sampling);
		t->s.cuda_launches_observed = t->s.cuda_launches;
		/* every launch is of an entry-only family; the async copies
		 * among them have their own scale */
		if (sampling__any(&s->sampling) && t->hot_calls && (scale != 1 || copies != 1)) {
			t->s.cuda_estimated = true;
			t->s.cuda_calls = llround((double)(t->s.cuda_calls - t->hot_calls) +
						  (double)(t->hot_calls - t->copy_calls) * scale +
						  (double)t->copy_calls * copies);
			t->s.cuda_launches = llround((double)t->s.cuda_launches * scale);
		}
		s->threads[i] = t->s;
	}
	s->thread_count = c->count;
	qsort(s->threads, s->thread_count, sizeof(*s->threads), thread_cmp);
	return 0;
}

void summary_builder__free(struct summary_builder *b)
{
	struct ctx *c = b ? &b->c : NULL;

	if (!b)
		return;
	htab__free(&c->fn_by_id);
	htab__free(&c->proc_by_pid);
	for (size_t i = 0; i < c->count; i++) {
		free(c->threads[i].sync_ns_by_fn);
		htab__free(&c->threads[i].waker_idx);
		free(c->threads[i].wakers);
	}
	free(c->threads);
	free(c->fns);
	for (size_t i = 0; i < c->proc_count; i++) {
		struct pstate *p = &c->procs[i];

		free(p->s.failed);
		free(p->hot_by_fn);
		htab__free(&p->device_allocs);
		htab__free(&p->host_allocs);
		htab__free(&p->vmm_handles);
		htab__free(&p->kernels);
	}
	free(c->procs);
	free(c->kernels);
	sampling_builder__free(c->sampling);
	summary__free(c->s);
	free(b);
}

struct summary_builder *summary_builder__new(const struct pass *p)
{
	struct summary_builder *b = calloc(1, sizeof(*b));
	const struct recording *r = pass__recording(p);
	struct summary *s;
	struct ctx *c;

	if (!b)
		return NULL;
	c = &b->c;
	c->r = r;
	c->pass = p;
	c->tasks = pass__tasks(p);
	c->start = pass__start(p);
	c->end = pass__end(p);
	s = c->s = calloc(1, sizeof(*s));
	c->sampling = sampling_builder__new(c->start, c->end);
	if (!s || !c->sampling) {
		summary_builder__free(b);
		errno = ENOMEM;
		return NULL;
	}
	s->start_ns = c->start;
	s->end_ns = c->end;
	s->duration_s = (double)(c->end - c->start) / 1e9;
	s->truncated = r->truncated;
	for (int i = 0; i < ISR_SRC_MAX; i++) {
		s->drops[i] = r->drops[i];
		s->drops_total += r->drops[i];
	}
	return b;
}

int summary_builder__event(struct summary_builder *b, const struct pass_event *e)
{
	const struct isr_ev_hdr *h = e->h;
	struct ctx *c = &b->c;
	struct summary *s = c->s;
	int err;

	s->event_total++;
	s->event_counts[h->type]++;	/* a usable record: a registered type */
	if (h->type == ISR_EV_GIL && ((const struct isr_ev_gil *)h)->kind == ISR_GIL_ACQUIRE)
		s->gil_acquire_events++;
	else if (h->type == ISR_EV_GIL && ((const struct isr_ev_gil *)h)->kind == ISR_GIL_RELEASE)
		s->gil_release_events++;
	c->chg = e->tasks;
	if (c->chg->image_ended)
		ctx__proc_gone(c, c->chg->image_ended);
	err = sampling_builder__event(c->sampling, h);
	err = err ?: ctx__running(c);
	if (!err && (err = isr_ev_dispatch(&summary_handlers, c, h)) == ISR_EV_UNHANDLED)
		err = 0;
	return err;
}

int summary_builder__finish(struct summary_builder *b, struct summary **out)
{
	__u64 unread[ISR_EV_TYPE_MAX];
	struct ctx *c = &b->c;
	struct summary *s = c->s;
	int err;

	*out = NULL;
	/* the events the pass could not read count too */
	s->event_total += pass__unread(c->pass, unread);
	for (int t = 1; t < ISR_EV_TYPE_MAX; t++)
		s->event_counts[t] += unread[t];
	err = sampling_builder__finish(c->sampling, &s->sampling);
	err = err ?: ctx__finish_threads(c, s);
	err = err ?: ctx__finish_cuda(c, s);
	if (!err) {
		*out = s;
		c->s = NULL;
	}
	return err;
}

const struct sampling_builder *summary_builder__sampling(const struct summary_builder *b)
{
	return b->c.sampling;
}

static void summary__free_gpu(struct summary *s)
{
	for (size_t i = 0; i < s->gpu_kernel_count; i++)
		free(s->gpu_kernels[i].name);
	free(s->gpu_kernels);
	free(s->gpu_names);
	free(s->gpu_copies);
	free(s->gpu_streams);
	free(s->gpu_devices);
	free(s->gpu);
}

void summary__free(struct summary *s)
{
	if (!s)
		return;
	free(s->threads);
	free(s->cuda_fns);
	for (size_t i = 0; i < s->process_count; i++)
		free(s->processes[i].failed);
	free(s->processes);
	for (size_t i = 0; i < s->kernel_count; i++)
		free(s->kernels[i].name);
	free(s->kernels);
	sampling__free(&s->sampling);
	summary__free_gpu(s);
	free(s);
}

const struct thread_summary *summary__thread(const struct summary *s, __u32 pid, __u32 tid)
{
	size_t lo = 0, hi = s->thread_count;

	/* the first thread past (pid, tid); its predecessor is the latest incarnation */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct thread_summary *t = &s->threads[mid];

		if (t->pid < pid || (t->pid == pid && t->tid <= tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || s->threads[lo - 1].pid != pid || s->threads[lo - 1].tid != tid)
		return NULL;
	return &s->threads[lo - 1];
}

const char *summary__process_name(const struct summary *s, __u32 pid)
{
	const struct thread_summary *t = s ? summary__thread(s, pid, pid) : NULL;

	return t ? t->comm : NULL;
}

const struct process_summary *summary__process(const struct summary *s, __u32 pid)
{
	struct process_summary key = { .pid = pid };

	if (!s->process_count)
		return NULL;
	return bsearch(&key, s->processes, s->process_count, sizeof(*s->processes), process_cmp);
}

const char *summary__cuda_fn_name(const struct summary *s, __u16 func)
{
	struct cuda_fn_summary key = { .func = func };
	const struct cuda_fn_summary *f;

	if (!s->cuda_fn_count)
		return NULL;
	f = bsearch(&key, s->cuda_fns, s->cuda_fn_count, sizeof(*s->cuda_fns), fn_cmp);
	return f ? f->name : NULL;
}

const char *summary__cuda_error_name(__s32 status)
{
	switch (status) {
	case 1:   return "CUDA_ERROR_INVALID_VALUE";
	case 2:   return "CUDA_ERROR_OUT_OF_MEMORY";
	case 3:   return "CUDA_ERROR_NOT_INITIALIZED";
	case 4:   return "CUDA_ERROR_DEINITIALIZED";
	case 100: return "CUDA_ERROR_NO_DEVICE";
	case 101: return "CUDA_ERROR_INVALID_DEVICE";
	case 201: return "CUDA_ERROR_INVALID_CONTEXT";
	case 400: return "CUDA_ERROR_INVALID_HANDLE";
	case 500: return "CUDA_ERROR_NOT_FOUND";
	case 600: return "CUDA_ERROR_NOT_READY";
	case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
	case 719: return "CUDA_ERROR_LAUNCH_FAILED";
	default:  return NULL;
	}
}

const char *gpu_busy_method_name(enum gpu_busy_method m)
{
	switch (m) {
	case GPU_BUSY_BY_LAUNCHES:
		return "launches";
	case GPU_BUSY_BY_TIME:
		return "time";
	default:
		return "observed";
	}
}

int summary__gpu_name_cmp(const void *a, const void *b)
{
	const struct gpu_kernel_name *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

const char *summary__gpu_kernel_name(const struct summary *s, __u32 pid, __u32 name_id)
{
	struct gpu_kernel_name key = { .pid = pid, .id = name_id };
	const struct gpu_kernel_name *k;

	if (!s->gpu_name_count)
		return NULL;
	k = bsearch(&key, s->gpu_names, s->gpu_name_count, sizeof(*s->gpu_names), summary__gpu_name_cmp);
	if (!k && s->gpu_kernels_other) {
		/* an id past SUMMARY_MAX_KERNELS: counted with the process's other kernels */
		key.id = KERNEL_OTHER_NAME_ID;
		k = bsearch(&key, s->gpu_names, s->gpu_name_count, sizeof(*s->gpu_names), summary__gpu_name_cmp);
	}
	return k ? k->name : NULL;
}
