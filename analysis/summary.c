// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-thread scheduling summary: fed the pass's events (pass.h) one by one,
 * with a small state machine per thread (see summary.h for the definitions).
 *
 * Threads are looked up by tid in an open-addressing hash table, so a pass
 * costs O(events + threads). A tid can be reused after its thread exited:
 * the table maps a tid to its latest incarnation, events of an exited thread
 * are ignored (the kernel reports the dead task's final switch-out after its
 * exit), and only a creation event (fork, wakeup_new, exec of a non-leader)
 * starts a new incarnation.
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
#include "gpu_summary.h"
#include "buf.h"
#include "htab.h"

/* Raw task states of isr_ev_sched_switch.prev_state */
#define TASK_UNINTERRUPTIBLE	0x2
#define TASK_DEAD		0x80

/* Where a thread is, as far as the events tell. UNKNOWN until its first
 * event that reveals it: the interval from the window start is then
 * attributed from that event's direction. */
enum {
	TS_UNKNOWN,
	TS_ON,
	TS_OFF,
};

struct tstate {
	struct thread_summary s;
	int state;		/* TS_* */
	bool seen;		/* any event about this thread yet */
	bool runnable;		/* OFF and waiting for a CPU since runnable_since */
	bool in_d;		/* OFF in D state since `since`, not woken yet */
	__u64 since;		/* start of the current ON or OFF interval */
	__u64 runnable_since;
	__u64 *sync_ns_by_fn;	/* [ISR_CUDA_FN_MAX], once the thread synchronizes */
	__u64 hot_calls;	/* calls of the entry-only families (scaled when sampled) */
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
	struct gpu_builder *gpu;
	struct htab by_tid;	/* tid -> index of its latest incarnation */
	struct tstate *threads;
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

static bool is_target(const struct ctx *c, __u32 pid)
{
	return pass__is_target(c->pass, pid);
}

/* Appends a thread whose window starts at `start` and maps tid to it.
 * Moves c->threads: pointers to other threads taken before are stale. */
static struct tstate *ctx__add_thread(struct ctx *c, __u32 pid, __u32 tid, __u64 start)
{
	struct tstate *t;
	int err;

	err = array__reserve(&c->threads, &c->cap, c->count + 1, sizeof(*c->threads));
	err = err ?: htab_u64__put(&c->by_tid, tid, c->count);
	if (err) {
		errno = -err;
		return NULL;
	}
	t = &c->threads[c->count++];
	memset(t, 0, sizeof(*t));
	t->s.pid = pid;
	t->s.tid = tid;
	t->s.start_ns = start;
	t->state = TS_UNKNOWN;
	return t;
}

/* The live thread `tid` of a target, created (window from the recording
 * start) on first sight. NULL with *err == 0 when the event is to be ignored:
 * idle task, not a target, or a thread that already exited. */
static struct tstate *ctx__thread(struct ctx *c, __u32 pid, __u32 tid, int *err)
{
	struct tstate *t;
	__u64 idx;

	*err = 0;
	if (!tid)
		return NULL;
	if (htab_u64__get(&c->by_tid, tid, &idx)) {
		t = &c->threads[idx];
		return t->s.exited || t->s.pid != pid ? NULL : t;
	}
	if (!is_target(c, pid))
		return NULL;
	t = ctx__add_thread(c, pid, tid, c->start);
	if (!t)
		*err = -errno;
	return t;
}

/* A thread that comes into existence at ts (fork child, wakeup_new, new
 * exec leader). A live thread already known from events keeps its window;
 * one only listed at start (no events yet) or an exited one with the same
 * tid gives way to a thread created at ts. */
static struct tstate *ctx__created(struct ctx *c, __u32 pid, __u32 tid, __u64 ts, int *err)
{
	struct tstate *t;
	__u64 idx;

	*err = 0;
	if (!tid)
		return NULL;
	if (htab_u64__get(&c->by_tid, tid, &idx)) {
		t = &c->threads[idx];
		if (t->seen && !t->s.exited)
			return t->s.pid == pid ? t : NULL;
		if (!t->s.exited && t->s.pid == pid) {
			t->s.start_ns = ts;
			goto created;
		}
	}
	if (!is_target(c, pid))
		return NULL;
	t = ctx__add_thread(c, pid, tid, ts);
	if (!t) {
		*err = -errno;
		return NULL;
	}
created:
	t->s.created = true;
	t->seen = true;
	t->state = TS_OFF;	/* not running until first switched in */
	t->since = ts;
	return t;
}

static __u64 span(__u64 from, __u64 to)
{
	return to > from ? to - from : 0;
}

/* Closes the open interval at ts. A thread in TS_UNKNOWN was in `implied`
 * since its window start. */
static void thread__close(struct tstate *t, __u64 ts, int implied)
{
	if (t->state == TS_UNKNOWN) {
		t->state = implied;
		t->since = t->s.start_ns;
	}
	if (t->state == TS_ON) {
		t->s.on_cpu_ns += span(t->since, ts);
	} else {
		t->s.off_cpu_ns += span(t->since, ts);
		if (t->runnable)
			t->s.runqueue_wait_ns += span(t->runnable_since, ts);
		if (t->in_d)
			t->s.blocked_io_ns += span(t->since, ts);
	}
	t->runnable = false;
	t->in_d = false;
	t->since = ts;
}

/* An event the thread emits itself (it is on a CPU at ts): a thread seen
 * first this way was running since its window start. */
static void thread__running(struct tstate *t)
{
	if (t->state == TS_UNKNOWN) {
		t->state = TS_ON;
		t->since = t->s.start_ns;
	}
}

static void thread__exit(struct tstate *t, __u64 ts)
{
	thread__running(t);
	thread__close(t, ts, TS_ON);
	t->s.exited = true;
	t->s.end_ns = ts;
}

/* Returns the blocked time the wakeup ended: 0 unless the thread was
 * off-CPU and not runnable. */
static __u64 thread__wakeup(struct tstate *t, __u64 ts)
{
	t->s.wakeups++;
	if (t->state == TS_UNKNOWN) {
		t->state = TS_OFF;
		t->since = t->s.start_ns;
	}
	if (t->state != TS_OFF || t->runnable)
		return 0;
	if (t->in_d) {
		t->s.blocked_io_ns += span(t->since, ts);
		t->in_d = false;
	}
	t->runnable = true;
	t->runnable_since = ts;
	return span(t->since, ts);
}

/* Counts a wakeup of t by another task, with the blocked time it ended. */
static int thread__woken_by(struct tstate *t, __u32 pid, __u32 tid, __u64 blocked_ns)
{
	__u64 key = (__u64)pid << 32 | tid, idx;
	struct waker_summary *w;
	bool added;
	int err;

	if (!tid || tid == t->s.tid)
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

static bool fn_is_query(__u16 func)
{
	return func == ISR_CUDA_FN_cuEventQuery || func == ISR_CUDA_FN_cuStreamQuery ||
	       func == ISR_CUDA_FN_cuStreamQuery_ptsz;
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

static int thread__cuda_call(struct tstate *t, __u16 family, const struct isr_ev_cuda_call *e)
{
	thread__running(t);
	t->s.cuda_calls++;
	t->hot_calls += ISR_CUDA_FAM_ENTRY_ONLY(family);
	if (family == ISR_CUDA_FAM_LAUNCH || family == ISR_CUDA_FAM_LAUNCH_EX ||
	    family == ISR_CUDA_FAM_GRAPH)
		t->s.cuda_launches++;
	if ((family != ISR_CUDA_FAM_SYNC && family != ISR_CUDA_FAM_COPY_SYNC) ||
	    !(e->flags & ISR_CUDA_RETURNED))
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
	__u16 family = fn ? fn->family : 0;
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
	if (ISR_CUDA_FAM_ENTRY_ONLY(family)) {
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
		} else if (e->status == CUDA_ERROR_NOT_READY && fn_is_query(e->func)) {
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
	t = ctx__thread(c, e->hdr.pid, e->hdr.tid, &err);
	if (!t)
		return err;
	t->seen = true;
	return thread__cuda_call(t, family, e);
}

static int on_cuda_name(void *ctx, const struct isr_ev_cuda_name *e)
{
	struct ctx *c = ctx;
	struct cuda_fn_summary *f;
	struct pstate *p;
	struct kstate *k;
	struct tstate *t;
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
	t = ctx__thread(c, e->hdr.pid, e->hdr.tid, &err);
	if (t) {
		t->seen = true;
		thread__running(t);
	}
	return err;
}

/* The event's time, clamped to the window. */
static __u64 ctx__clamp(const struct ctx *c, __u64 ts)
{
	return ts < c->start ? c->start : ts > c->end ? c->end : ts;
}

/* The thread an event is about, marked seen; NULL for a thread that is not
 * summarized (or on error, with *err set). */
static struct tstate *ctx__subject(struct ctx *c, const struct isr_ev_hdr *h, int *err)
{
	struct tstate *t = ctx__thread(c, h->pid, h->tid, err);

	if (t)
		t->seen = true;
	return t;
}

static int on_switch(void *ctx, const struct isr_ev_sched_switch *e)
{
	struct ctx *c = ctx;
	__u64 ts = ctx__clamp(c, e->hdr.ts_ns);
	struct tstate *prev, *next;
	int err = 0;

	prev = ctx__thread(c, e->hdr.pid, e->hdr.tid, &err);
	if (err)
		return err;
	if (prev && (e->prev_state & TASK_DEAD) && !(e->flags & ISR_SWITCH_RUNNABLE)) {
		/* the last switch-out of a thread whose exit event was lost */
		prev->seen = true;
		thread__exit(prev, ts);
	} else if (prev) {
		prev->seen = true;
		thread__close(prev, ts, TS_ON);
		prev->state = TS_OFF;
		if (e->flags & ISR_SWITCH_RUNNABLE) {
			prev->runnable = true;
			prev->runnable_since = ts;
		} else if (e->prev_state & TASK_UNINTERRUPTIBLE) {
			prev->in_d = true;
		}
		if (e->flags & (ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE))
			prev->s.switches_involuntary++;
		else
			prev->s.switches_voluntary++;
	}
	next = ctx__thread(c, e->next_pid, e->next_tid, &err);
	if (next) {
		next->seen = true;
		thread__close(next, ts, TS_OFF);
		next->state = TS_ON;
	}
	return err;
}

static int on_wakeup(void *ctx, const struct isr_ev_sched_wakeup *e)
{
	int err = 0;
	struct tstate *t = ctx__subject(ctx, &e->hdr, &err);
	__u32 waker = isr_wakeup_waker_tid(e);

	if (!t)
		return err;
	return thread__woken_by(t, waker ? e->waker_pid : 0, waker, thread__wakeup(t, ctx__clamp(ctx, e->hdr.ts_ns)));
}

static int on_wakeup_new(void *ctx, const struct isr_ev_sched_wakeup *e)
{
	__u64 ts = ctx__clamp(ctx, e->hdr.ts_ns);
	int err = 0;
	struct tstate *t = ctx__created(ctx, e->hdr.pid, e->hdr.tid, ts, &err);

	if (t)
		thread__wakeup(t, ts);
	return err;
}

static int on_fork(void *ctx, const struct isr_ev_proc_fork *e)
{
	struct ctx *c = ctx;
	int err = 0;
	struct tstate *t = ctx__thread(c, e->hdr.pid, e->hdr.tid, &err);

	if (err)
		return err;
	if (t) {
		t->seen = true;
		thread__running(t);
	}
	t = ctx__created(c, e->child_pid, e->child_tid, ctx__clamp(c, e->hdr.ts_ns), &err);
	if (t)
		copy_comm(t->s.comm, e->child_comm, sizeof(e->child_comm));
	return err;
}

/* A non-leader thread that calls exec takes over the leader's tid: the old
 * tid ends there and the leader tid starts afresh, running. */
static int on_exec(void *ctx, const struct isr_ev_proc_exec *e)
{
	struct ctx *c = ctx;
	__u64 ts = ctx__clamp(c, e->hdr.ts_ns);
	struct tstate *t;
	int err = 0;

	ctx__proc_gone(c, e->hdr.pid);
	if (e->old_tid && e->old_tid != e->hdr.tid) {
		t = ctx__thread(c, e->hdr.pid, e->old_tid, &err);
		if (err)
			return err;
		if (t)
			thread__exit(t, ts);
		t = ctx__thread(c, e->hdr.pid, e->hdr.tid, &err);
		if (err)
			return err;
		if (t)
			thread__exit(t, ts);
		t = ctx__created(c, e->hdr.pid, e->hdr.tid, ts, &err);
		if (t)
			t->state = TS_ON;	/* the caller, on a CPU */
	} else {
		t = ctx__thread(c, e->hdr.pid, e->hdr.tid, &err);
	}
	if (!t)
		return err;
	t->seen = true;
	thread__running(t);
	copy_comm(t->s.comm, e->comm, sizeof(e->comm));
	return 0;
}

static int on_proc_exit(void *ctx, const struct isr_ev_proc_exit *e)
{
	int err = 0;
	struct tstate *t = ctx__subject(ctx, &e->hdr, &err);

	if (!t)
		return err;
	/* its last name, should a rename have been dropped */
	if (e->comm[0])
		copy_comm(t->s.comm, e->comm, ISR_COMM_LEN);
	thread__exit(t, ctx__clamp(ctx, e->hdr.ts_ns));
	if (e->flags & ISR_EXIT_GROUP_DEAD)
		ctx__proc_gone(ctx, e->hdr.pid);
	return 0;
}

/* A thread may be renamed by another one: says nothing of its state. */
static int on_rename(void *ctx, const struct isr_ev_task_rename *e)
{
	int err = 0;
	struct tstate *t = ctx__subject(ctx, &e->hdr, &err);

	if (t)
		copy_comm(t->s.comm, e->comm, ISR_COMM_LEN);
	return err;
}

static int on_fault(void *ctx, const struct isr_ev_page_fault *e)
{
	int err = 0;
	struct tstate *t = ctx__subject(ctx, &e->hdr, &err);

	if (!t)
		return err;
	thread__running(t);
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

/* ACQUIRE: waited, then holds the GIL from the return. RELEASE: held it
 * since the last acquire, or, for a thread first seen releasing it, since
 * its window start. ts: the event's time, clamped to the recording; the
 * part of a wait before the recording start is not in it. */
static void thread__gil(struct tstate *t, const struct isr_ev_gil *e, __u64 ts, __u64 end)
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
			t->s.gil_hold_ns += span(t->s.start_ns, ts);
		t->gil_held_since = 0;
	}
	t->gil_seen = true;
	t->s.gil_hold_measured = true;
}

static int on_gil_wait(void *ctx, const struct isr_ev_gil_wait *e)
{
	struct ctx *c = ctx;
	int err = 0;
	struct tstate *t = ctx__subject(c, &e->hdr, &err);
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
	struct tstate *t = ctx__subject(c, &e->hdr, &err);

	if (!t)
		return err;
	thread__running(t);
	thread__gil(t, e, ctx__clamp(c, e->hdr.ts_ns), c->end);
	return 0;
}

/* The budget's windows are read by analysis/sampling.c. */
static int on_sampling(void *ctx, const struct isr_ev_sampling *e)
{
	(void)ctx;
	(void)e;
	return 0;
}

static const struct isr_ev_handlers summary_handlers = {
	.sched_switch = on_switch,
	.sched_wakeup = on_wakeup,
	.sched_wakeup_new = on_wakeup_new,
	.sched_process_fork = on_fork,
	.sched_process_exec = on_exec,
	.sched_process_exit = on_proc_exit,
	.task_rename = on_rename,
	.page_fault_user = on_fault,
	.cuda_call = on_cuda_call,
	.cuda_name = on_cuda_name,
	.gil = on_gil,
	.gil_wait = on_gil_wait,
	.sampling = on_sampling,
};

/* A registered event this summary has no handler for still tells that its
 * thread exists. */
static int on_event(struct ctx *c, const struct isr_ev_hdr *h)
{
	int err = isr_ev_dispatch(&summary_handlers, c, h);

	if (err == ISR_EV_UNHANDLED) {
		err = 0;
		ctx__subject(c, h, &err);
	}
	return err;
}

/* Threads listed in the PROCESS chunks existed at the start. */
static int ctx__add_listed(struct ctx *c)
{
	const struct recording *r = c->r;

	for (size_t i = 0; i < r->process_count; i++) {
		const struct rec_process *p = &r->processes[i];

		for (size_t j = 0; j < p->thread_count; j++) {
			const struct rec_thread *rt = &p->threads[j];
			struct tstate *t;

			__u64 idx;

			if (!rt->tid || !p->pid || htab_u64__get(&c->by_tid, rt->tid, &idx))
				continue;
			t = ctx__add_thread(c, p->pid, rt->tid, c->start);
			if (!t)
				return -errno;
			copy_comm(t->s.comm, rt->comm, sizeof(rt->comm));
		}
	}
	return 0;
}

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
	const struct isr_cuda_fn *fn = isr_cuda_fn(f->func);
	double est = 0;

	if (!fn || !ISR_CUDA_FAM_ENTRY_ONLY(fn->family))
		return (double)f->calls;
	for (size_t i = 0; i < c->proc_count; i++)
		if (c->procs[i].hot_by_fn)
			est += (double)c->procs[i].hot_by_fn[f->func] * sampling__scale(&s->sampling, c->procs[i].s.pid);
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
		if (s->sampling.sampled && est != (double)f->calls) {
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

static int ctx__finish_threads(struct ctx *c, struct summary *s)
{
	s->threads = calloc(c->count ? c->count : 1, sizeof(*s->threads));
	if (!s->threads)
		return -ENOMEM;
	for (size_t i = 0; i < c->count; i++) {
		struct tstate *t = &c->threads[i];
		double scale = sampling__scale(&s->sampling, t->s.pid);

		if (!t->s.exited) {
			thread__close(t, c->end, TS_OFF);
			t->s.end_ns = c->end;
		}
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
		t->s.cuda_launches_observed = t->s.cuda_launches;
		/* every launch is of an entry-only family */
		if (s->sampling.sampled && t->hot_calls && scale != 1) {
			t->s.cuda_estimated = true;
			t->s.cuda_calls = llround((double)(t->s.cuda_calls - t->hot_calls) +
						  (double)t->hot_calls * scale);
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
	htab__free(&c->by_tid);
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
	gpu_builder__free(c->gpu);
	summary__free(c->s);
	free(b);
}

struct summary_builder *summary_builder__new(const struct pass *p)
{
	struct summary_builder *b = calloc(1, sizeof(*b));
	const struct recording *r = pass__recording(p);
	struct summary *s;
	struct ctx *c;
	int err;

	if (!b)
		return NULL;
	c = &b->c;
	c->r = r;
	c->pass = p;
	c->start = pass__start(p);
	c->end = pass__end(p);
	s = c->s = calloc(1, sizeof(*s));
	c->sampling = sampling_builder__new(c->start, c->end);
	c->gpu = gpu_builder__new(p);
	if (!s || !c->sampling || !c->gpu) {
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
	err = ctx__add_listed(c);
	if (err) {
		summary_builder__free(b);
		errno = -err;
		return NULL;
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
	if (h->type > 0 && h->type < ISR_EV_TYPE_MAX)
		s->event_counts[h->type]++;
	if (!pass__usable(h))
		return 0;
	if (h->type == ISR_EV_GIL && ((const struct isr_ev_gil *)h)->kind == ISR_GIL_ACQUIRE)
		s->gil_acquire_events++;
	else if (h->type == ISR_EV_GIL && ((const struct isr_ev_gil *)h)->kind == ISR_GIL_RELEASE)
		s->gil_release_events++;
	err = sampling_builder__event(c->sampling, h);
	err = err ?: gpu_builder__event(c->gpu, e);
	return err ?: on_event(c, h);
}

int summary_builder__finish(struct summary_builder *b, struct summary **out)
{
	struct ctx *c = &b->c;
	struct summary *s = c->s;
	int err;

	*out = NULL;
	err = sampling_builder__finish(c->sampling, &s->sampling);
	err = err ?: ctx__finish_threads(c, s);
	err = err ?: ctx__finish_cuda(c, s);
	err = err ?: gpu_builder__finish(c->gpu, s, c->sampling);
	if (!err) {
		*out = s;
		c->s = NULL;
	}
	summary_builder__free(b);
	return err;
}

int summary__compute(const struct recording *r, struct summary **out)
{
	struct summary_builder *b = NULL;
	struct pass_event e;
	struct pass *p;
	int err, n;

	*out = NULL;
	err = pass__open(r, &p);
	if (!err) {
		b = summary_builder__new(p);
		if (!b)
			err = -errno;
	}
	while (!err && (n = pass__next(p, &e)) > 0)
		err = summary_builder__event(b, &e);
	if (!err) {
		err = summary_builder__finish(b, out);
		b = NULL;
	}
	summary_builder__free(b);
	pass__free(p);
	return err;
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
	gpu_summary__free(s);
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
