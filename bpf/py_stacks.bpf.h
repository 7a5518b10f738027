/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPython frame walker shared by the stack sampler (py_stacks.bpf.c) and
 * the CUDA probes (cuda.bpf.c, call sites of synchronizations and a sample
 * of launches). It reads the interpreter of the current process with the
 * layout the recorder validated for it (map py_procs, struct isr_py_layout
 * in events.h): _PyRuntime -> main interpreter -> the thread state whose
 * thread id is the current thread's -> its frame chain, innermost first,
 * and emits one isr_ev_py_frames. Nothing is emitted for a process without
 * a validated layout or a thread without a thread state. A frame whose code
 * is not a code object (ob_type != PyCode_Type) ends the walk, flagged
 * INVALID: a wrong or torn read yields a short stack, never garbage.
 */
#ifndef INFERSCOPE_PY_STACKS_BPF_H
#define INFERSCOPE_PY_STACKS_BPF_H

#include "common.bpf.h"

#define PY_MAX_THREADS	256	/* thread states looked at per lookup */

/* Validated layouts, by tgid (written by the recorder). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ISR_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct isr_py_layout);
} py_procs SEC(".maps");

/* Thread state of a thread, by tid: saves walking the thread list; checked
 * again (its thread id) before every use. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} py_tstates SEC(".maps");

/* The event being built: too large for the BPF stack. Several per CPU,
 * each claimed while in use: a capture can be interrupted on its CPU by
 * another (the CPU-clock sampler's perf event fires in an interrupt, and a
 * uprobe program runs with migration, not preemption, disabled), and with
 * one buffer the interrupting capture overwrote the other's half-built
 * event (a synchronization's stack recorded as a timer sample, one in a
 * few hundred runs under load). A capture that finds every slot in use is
 * counted as dropped (ISR_SRC_PY_STACKS). */
#define PY_SCRATCH_SLOTS	4

struct py_scratch_slot {
	__u64 busy;
	struct isr_ev_py_frames e;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PY_SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct py_scratch_slot);
} py_scratch SEC(".maps");

/* A free slot of this CPU's, claimed; NULL when all are in use. */
static __always_inline struct py_scratch_slot *py_slot_claim(void)
{
	for (__u32 i = 0; i < PY_SCRATCH_SLOTS; i++) {
		struct py_scratch_slot *s = bpf_map_lookup_elem(&py_scratch, &i);

		if (s && __sync_val_compare_and_swap(&s->busy, 0, 1) == 0)
			return s;
	}
	return NULL;
}

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* Where task_struct keeps the thread's fs base (thread.fsbase), from the
 * kernel's BTF that the recorder read once (user/record/tracer.h
 * tracer__task_fsbase_offset): a CO-RE read would make libbpf parse that
 * BTF again for every object that captures stacks. 0: not known. */
const volatile __u32 task_fsbase_offset = 0;

/* The thread id CPython stored for the current thread: its tid (3.11+) or
 * pthread_self(), the thread pointer (3.10, x86-64: the fs base); 0 when
 * it cannot be told. */
static __always_inline __u64 py_current_thread_id(const struct isr_py_layout *l, __u32 tid)
{
	__u64 fsbase = 0;

	if (l->minor >= 11)
		return tid;
	if (!task_fsbase_offset ||
	    bpf_probe_read_kernel(&fsbase, sizeof(fsbase), (const char *)bpf_get_current_task() + task_fsbase_offset))
		return 0;
	return fsbase;
}

struct py_thread_walk {
	const struct isr_py_layout *l;
	__u64 want;		/* the thread id to find */
	__u64 t;		/* thread state looked at; the match when found */
	bool found;
};

static long py_thread_step(__u64 index, void *ctx)
{
	struct py_thread_walk *w = ctx;

	if (!w->t)
		return 1;
	if (py_read_ptr(w->t + w->l->tstate_tid) == w->want) {
		w->found = true;
		return 1;
	}
	w->t = py_read_ptr(w->t + w->l->tstate_next);
	return 0;
}

/* bpf_loop keeps the verifier's work constant whatever the bounds. */
static __always_inline __u64 py_find_tstate(const struct isr_py_layout *l, __u32 tid)
{
	struct py_thread_walk w = { .l = l, .want = py_current_thread_id(l, tid) };
	__u64 *cached, interp;

	cached = bpf_map_lookup_elem(&py_tstates, &tid);
	if (cached && *cached && py_read_ptr(*cached + l->tstate_tid) == w.want)
		return *cached;
	interp = py_read_ptr(l->runtime + l->runtime_interp_head);
	if (!interp)
		return 0;
	w.t = py_read_ptr(interp + l->interp_threads_head);
	bpf_loop(PY_MAX_THREADS, py_thread_step, &w, 0);
	if (!w.found)
		return 0;
	bpf_map_update_elem(&py_tstates, &tid, &w.t, BPF_ANY);
	return w.t;
}

static __always_inline __u64 py_top_frame(const struct isr_py_layout *l, __u64 tstate)
{
	if (l->tstate_cframe) {
		__u64 cframe = py_read_ptr(tstate + l->tstate_cframe);

		return cframe ? py_read_ptr(cframe + l->cframe_frame) : 0;
	}
	return py_read_ptr(tstate + l->tstate_frame);
}

/* The frames taken so far are counted in the event (e->depth, map memory),
 * not here: a count on the BPF stack is a known constant to the verifier,
 * which then checked py_frame_step once per depth (64 times: 45 ms a
 * program that captures, three such programs loaded at attach). */
struct py_frame_walk {
	const struct isr_py_layout *l;
	struct isr_ev_py_frames *e;
	__u64 frame;
};

static long py_frame_step(__u64 index, void *ctx)
{
	struct py_frame_walk *w = ctx;
	const struct isr_py_layout *l = w->l;
	struct isr_ev_py_frames *e = w->e;
	__u64 frame = w->frame, code, instr, idx;
	__u32 n = e->depth;

	if (!frame)
		return 1;
	if (l->frame_owner) {
		__u8 owner = 0;

		bpf_probe_read_user(&owner, 1, (const void *)(frame + l->frame_owner));
		if (owner == l->owner_cstack) { /* a shim frame of the C stack */
			w->frame = py_read_ptr(frame + l->frame_previous);
			return 0;
		}
	}
	if (n >= ISR_PY_MAX_DEPTH) {
		e->flags |= ISR_PY_STACK_TRUNCATED;
		return 1;
	}
	code = py_read_ptr(frame + l->frame_code);
	if (!code || py_read_ptr(code + 8) != l->code_type) {
		e->flags |= ISR_PY_STACK_INVALID;
		return 1;
	}
	if (l->minor == 10) {
		__s32 lasti = -1;

		bpf_probe_read_user(&lasti, sizeof(lasti), (const void *)(frame + l->frame_instr));
		idx = lasti < 0 ? ~0ULL : (__u64)lasti;
	} else {
		instr = py_read_ptr(frame + l->frame_instr);
		idx = instr >= code + l->code_adaptive ? (instr - code - l->code_adaptive) / 2 : ~0ULL;
	}
	e->frames[n & (ISR_PY_MAX_DEPTH - 1)].code = code;
	e->frames[n & (ISR_PY_MAX_DEPTH - 1)].instr = idx > 0x7fffffff ? -1 : (__s32)idx;
	e->frames[n & (ISR_PY_MAX_DEPTH - 1)].pad = 0;
	e->depth = n + 1;
	w->frame = py_read_ptr(frame + l->frame_previous);
	return 0;
}

/* Emits the current thread's Python stack, taken at ts for kind
 * (ISR_PY_KIND_*). Returns without a trace for processes and threads that
 * have none; a full ring buffer is counted (ISR_SRC_PY_STACKS); 0 always.
 * A global function: the verifier checks it once, where an inlined copy
 * at each call site was checked again (cuda_hot's three took 460 ms of a
 * recorder's 825 ms of loading on the project's VM: attach time). */
__noinline int py_capture(__u64 id, __u64 ts, __u16 kind)
{
	__u64 t0 = bpf_ktime_get_ns(), took;
	__u32 tgid = id >> 32, tid = (__u32)id;
	const struct isr_py_layout *l = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_scratch_slot *slot;
	struct py_frame_walk w;
	__u64 tstate;
	__u32 size;

	if (!l)
		return 0;
	tstate = py_find_tstate(l, tid);
	if (!tstate)
		return 0;
	slot = py_slot_claim();
	if (!slot) {
		count_drop(ISR_SRC_PY_STACKS);
		return 0;
	}
	w.e = &slot->e;
	w.l = l;
	w.frame = py_top_frame(l, tstate);
	w.e->kind = kind;
	w.e->flags = 0;
	w.e->depth = 0;
	/* shim frames are skipped within the same bound: twice the depth */
	bpf_loop(2 * ISR_PY_MAX_DEPTH, py_frame_step, &w, 0);
	/* The overhead budget charges it to the thread (user/record/recorder.c). */
	took = bpf_ktime_get_ns() - t0;
	w.e->capture_ns = took > 0xffff ? 0xffff : (__u16)took;
	size = 32 + 16 * (w.e->depth & (2 * ISR_PY_MAX_DEPTH - 1));
	fill_hdr(&w.e->hdr, ISR_EV_PY_FRAMES, size, tgid, tid, ts);
	if (size > sizeof(*w.e) || bpf_ringbuf_output(&events, w.e, size, BPF_RB_NO_WAKEUP))
		count_drop(ISR_SRC_PY_STACKS);
	*(volatile __u64 *)&slot->busy = 0;	/* released: the event is out */
	return 0;
}

#endif
