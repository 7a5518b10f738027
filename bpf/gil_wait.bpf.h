/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GIL waits of CPython 3.10-3.13 targets, seen by the scheduler: the BPF
 * half of the Python family's GIL waits (the user-space half: user/probes/py_gil.h
 * and user/probes/family_python.c). No probe in the interpreter: the scheduler's
 * own sched_switch program (bpf/sched.bpf.c) calls these two functions for
 * the target threads it already looks at, so a task that is not a target
 * pays nothing, and a target thread a few loads per context switch.
 *
 * A thread that cannot take the GIL blocks in futex() on a word of its
 * interpreter's _gil_runtime_state: the condition variable take_gil waits
 * on, or the mutex that guards it. When a target thread leaves its CPU to
 * sleep inside the futex system call on a word in [cond, end) of its
 * process's GIL (map py_gils, filled by the recorder once the GIL's layout
 * is validated), the time and the GIL's holder then (gil->last_holder, a
 * PyThreadState, and the thread id it stores) are kept by tid; when the
 * thread is switched back in, one isr_ev_gil_wait is emitted. The holder
 * itself blocking on the GIL's mutex (to drop it) waits for no one and is
 * not kept; nor is the dropping holder waiting on switch_cond, outside the
 * range.
 */
#ifndef INFERSCOPE_GIL_WAIT_BPF_H
#define INFERSCOPE_GIL_WAIT_BPF_H

#include <bpf/bpf_core_read.h>
#include "common.bpf.h"

#define NR_FUTEX	202	/* x86-64: the system call glibc's condition variables and mutexes wait in */

/* Validated GILs, by tgid (written by the recorder, user/probes/py_gil.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ISR_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct isr_py_gil);
} py_gils SEC(".maps");

struct gil_block {
	__u64 start;		/* when it left its CPU */
	__u32 holder;		/* the holder's tid; 0: unknown */
	__u32 flags;		/* ISR_GIL_WAIT_* */
};

/* Threads blocked on the GIL now, by tid. Preallocated (updated with the
 * run-queue lock held); a full map is counted (ISR_SRC_PYTHON). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gil_block);
} gil_blocked SEC(".maps");

/* Entries of gil_blocked: while 0, a switch-in looks nothing up. */
__s64 gil_pending = 0;

/* The kernel tid of the GIL's holder (gil->last_holder), read in the
 * blocking thread's own address space; 0 when it cannot be told. */
static __always_inline __u32 gil_holder(const struct isr_py_gil *g)
{
	__u64 tstate = 0, id = 0;
	__u32 tid = 0;

	if (bpf_probe_read_user(&tstate, sizeof(tstate), (const void *)g->last_holder) || !tstate)
		return 0;
	if (bpf_probe_read_user(&id, sizeof(id), (const void *)(tstate + g->tstate_tid)))
		return 0;
	if (g->minor >= 11)
		return id <= 0xffffffffULL ? (__u32)id : 0;
	/* 3.10 keeps pthread_self(): the tid is in glibc's struct pthread */
	if (!id || !g->pthread_tid || bpf_probe_read_user(&tid, sizeof(tid), (const void *)(id + g->pthread_tid)))
		return 0;
	return tid;
}

/* Target thread (pid, tid), prev of this sched_switch, leaves its CPU to
 * sleep at ts (the current task still): is it blocking on its GIL? */
static __always_inline void gil_blocking(struct task_struct *prev, __u32 pid, __u32 tid, __u64 ts)
{
	struct gil_block b = {};
	const struct isr_py_gil *g;
	struct pt_regs *regs;
	__u64 uaddr;
	long err;

	/* bpf_task_pt_regs came with 5.15: without it, no GIL waits (the
	 * branch is gone before the verifier sees the call) */
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	if (!regs || BPF_CORE_READ(regs, orig_ax) != NR_FUTEX)
		return;
	g = bpf_map_lookup_elem(&py_gils, &pid);
	if (!g)
		return;
	uaddr = BPF_CORE_READ(regs, di);
	if (uaddr < g->cond || uaddr >= g->end)
		return;
	b.holder = gil_holder(g);
	/* the holder itself, taking the mutex to drop the GIL, waits for no one */
	if (b.holder == tid)
		return;
	b.start = ts;
	b.flags = (b.holder ? ISR_GIL_WAIT_HOLDER : 0) | (uaddr >= g->mutex ? ISR_GIL_WAIT_MUTEX : 0);
	err = bpf_map_update_elem(&gil_blocked, &tid, &b, BPF_NOEXIST);
	if (err == -17 /* EEXIST: a wait whose switch-in was not seen */)
		err = bpf_map_update_elem(&gil_blocked, &tid, &b, BPF_EXIST);
	else if (!err)
		__sync_fetch_and_add(&gil_pending, 1);
	if (err)
		count_drop(ISR_SRC_PYTHON);
}

/* Target thread (pid, tid), next of this sched_switch, takes a CPU at ts:
 * the end of its GIL wait, if it was in one. */
static __always_inline void gil_resumed(__u32 pid, __u32 tid, __u64 ts)
{
	struct isr_ev_gil_wait *e;
	struct gil_block *b;

	if (gil_pending <= 0)
		return;
	b = bpf_map_lookup_elem(&gil_blocked, &tid);
	if (!b)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		fill_hdr(&e->hdr, ISR_EV_GIL_WAIT, sizeof(*e), pid, tid, b->start);
		e->duration_ns = ts - b->start;
		e->holder_tid = b->holder;
		e->flags = b->flags;
		submit_bulk(e);
	} else {
		count_drop(ISR_SRC_PYTHON);
	}
	if (bpf_map_delete_elem(&gil_blocked, &tid) == 0)
		__sync_fetch_and_add(&gil_pending, -1);
}

#endif
