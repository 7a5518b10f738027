// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Page faults of target threads on user memory, minor vs major, with the
 * time spent resolving each; and the direct reclaim of target threads.
 *
 * Entry: the page_fault_user BTF tracepoint (user-mode faults) remembers the
 * start time per thread. Completion: BPF programs on the kernel's software
 * perf events page-faults-min / page-faults-maj, which fire exactly once per
 * successfully resolved fault, after any retries (the kernel's own
 * minor/major accounting), with the faulting address. One event is emitted
 * per fault, at completion. Faults raised in kernel mode on user memory
 * (copy_to_user into a fresh page) have no entry: they are counted without
 * a duration. fentry/fexit on handle_mm_fault would be one hop closer but
 * needs BPF trampolines, which locked-down kernels refuse.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct fault_entry {
	__u64 start_ns;
	__u64 address;
	__u64 error_code;
};

/* Faults in flight, by tid. LRU: an entry whose fault never completes
 * (SIGSEGV) is overwritten by the thread's next fault or evicted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fault_entry);
} fault_start SEC(".maps");

#define X86_PF_WRITE (1 << 1)
#define X86_PF_INSTR (1 << 4)

SEC("tp_btf/page_fault_user")
int BPF_PROG(handle_page_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct fault_entry ent;
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	ent.start_ns = bpf_ktime_get_ns();
	ent.address = address;
	ent.error_code = error_code;
	if (bpf_map_update_elem(&fault_start, &tid, &ent, BPF_ANY))
		count_drop(ISR_SRC_FAULT_START);
	return 0;
}

static __always_inline int fault_done(struct bpf_perf_event_data *ctx, bool major)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	struct isr_ev_page_fault *e;
	struct fault_entry *ent;
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	now = bpf_ktime_get_ns();
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_FAULTS);
		bpf_map_delete_elem(&fault_start, &tid);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_PAGE_FAULT, sizeof(*e), id >> 32, tid, now);
	e->address = ctx->addr;
	e->ip = PT_REGS_IP(&ctx->regs);
	e->duration_ns = 0;
	e->flags = major ? ISR_FAULT_MAJOR : 0;
	e->pad = 0;
	ent = bpf_map_lookup_elem(&fault_start, &tid);
	/* The entry belongs to this fault only if the address matches: a
	 * kernel-mode fault has no entry of its own. */
	if (ent && ent->address == ctx->addr) {
		e->duration_ns = now - ent->start_ns;
		e->flags |= ISR_FAULT_HAS_START;
		if (ent->error_code & X86_PF_WRITE)
			e->flags |= ISR_FAULT_WRITE;
		if (ent->error_code & X86_PF_INSTR)
			e->flags |= ISR_FAULT_INSTR;
		bpf_map_delete_elem(&fault_start, &tid);
	}
	submit_bulk(e);
	return 0;
}

SEC("perf_event")
int handle_fault_minor(struct bpf_perf_event_data *ctx)
{
	return fault_done(ctx, false);
}

SEC("perf_event")
int handle_fault_major(struct bpf_perf_event_data *ctx)
{
	return fault_done(ctx, true);
}

/*
 * Direct reclaim: a target thread that must free memory itself before it
 * can allocate (the page allocator's slow path: mm_vmscan_direct_reclaim_*),
 * or because its memory cgroup is at its limit or over memory.high
 * (mm_vmscan_memcg_reclaim_*, in the charge or on the way back to user
 * space). BTF tracepoints, filtered here to the targets; one event per
 * reclaim, at its end, with its start and the pages it freed. The two
 * kinds do not nest. A kernel without one of them (no memory cgroups) has
 * its programs left out at load (user/probes/family_kernel.c).
 */

/* Reclaims in progress, by tid. LRU: a thread that dies inside one leaves
 * an entry that its tid's next reclaim overwrites or that ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} reclaim_start SEC(".maps");

static __always_inline int reclaim_begin(void)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&reclaim_start, &tid, &now, BPF_ANY))
		count_drop(ISR_SRC_RECLAIM);
	return 0;
}

static __always_inline int reclaim_end(unsigned long nr_reclaimed, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid(), now, *start;
	struct isr_ev_reclaim *e;
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	start = bpf_map_lookup_elem(&reclaim_start, &tid);
	if (!start)
		return 0; /* began before the recording, or not remembered: counted then */
	now = bpf_ktime_get_ns();
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_RECLAIM);
		bpf_map_delete_elem(&reclaim_start, &tid);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_RECLAIM, sizeof(*e), id >> 32, tid, *start);
	e->duration_ns = now - *start;
	e->nr_reclaimed = nr_reclaimed;
	e->kind = kind;
	e->pad = 0;
	bpf_map_delete_elem(&reclaim_start, &tid);
	submit_bulk(e);
	return 0;
}

/* A kind of reclaim's two programs, on its begin and end tracepoints:
 * handle_<kind>_reclaim_begin and _end. */
#define RECLAIM_PROGS(kind, KIND)							\
	SEC("tp_btf/mm_vmscan_" #kind "_reclaim_begin")					\
	int BPF_PROG(handle_##kind##_reclaim_begin)					\
	{										\
		return reclaim_begin();							\
	}										\
	SEC("tp_btf/mm_vmscan_" #kind "_reclaim_end")					\
	int BPF_PROG(handle_##kind##_reclaim_end, unsigned long nr_reclaimed)		\
	{										\
		return reclaim_end(nr_reclaimed, ISR_RECLAIM_##KIND);			\
	}

RECLAIM_PROGS(direct, DIRECT)
RECLAIM_PROGS(memcg, MEMCG)
