// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel-CI benchmarks' programs (user/bench/bench_mech.c): the smallest
 * program each mechanism can run, so that what is measured is the
 * mechanism (trap, tracepoint, perf-event overflow, ring buffer), not the
 * tracer's own work. Every program counts its hits in a per-CPU slot; the
 * uprobe programs take the slot from their attach cookie, so one loaded
 * object serves every site and link at once. Nothing here is part of a
 * recording: this object shares no map with the tracer's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bench_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Process whose events the global hooks (tracepoints, per-CPU perf events)
 * count; set before load. */
const volatile __u32 target_tgid;

/* bpf_ringbuf_submit flags of the emitting programs; changed between runs
 * (BPF_RB_NO_WAKEUP, 0 for adaptive wakeups, BPF_RB_FORCE_WAKEUP). */
__u64 submit_flags;
/* Sequence number of the next record emitted. */
__u64 next_seq;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BENCH_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

/* Size set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} bench_rb SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *n = bpf_map_lookup_elem(&hits, &slot);

	if (n)
		*n += 1; /* per-CPU slot: no other writer */
}

static __always_inline bool is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/* One hit: counted in BENCH_SLOT_EMIT_HITS, then one record reserved and
 * submitted, or counted as dropped. */
static __always_inline void emit(__u32 tid)
{
	struct bench_record *r;

	count(BENCH_SLOT_EMIT_HITS);
	r = bpf_ringbuf_reserve(&bench_rb, sizeof(*r), 0);
	if (!r) {
		count(BENCH_SLOT_EMIT_DROPS);
		return;
	}
	r->seq = __sync_fetch_and_add(&next_seq, 1);
	r->tid = tid;
	r->pad = 0;
	count(BENCH_SLOT_EMIT_SUBMITTED);
	bpf_ringbuf_submit(r, submit_flags);
}

/* Per-site uprobes and uretprobes (perf-event links; the link says which):
 * the slot is the attach cookie. */
SEC("uprobe")
int BPF_KPROBE(bench_uprobe)
{
	count((__u32)bpf_get_attach_cookie(ctx));
	return 0;
}

/* The same, loaded as uprobe_multi programs (the loader sets their attach
 * type where the kernel has the link type). */
SEC("uprobe")
int BPF_KPROBE(bench_uprobe_multi)
{
	count((__u32)bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(bench_uprobe_emit)
{
	emit((__u32)bpf_get_current_pid_tgid());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(bench_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if ((__u32)BPF_CORE_READ(prev, tgid) == target_tgid || (__u32)BPF_CORE_READ(next, tgid) == target_tgid)
		count(BENCH_SLOT_SCHED);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(bench_sched_wakeup, struct task_struct *p)
{
	if ((__u32)BPF_CORE_READ(p, tgid) == target_tgid)
		count(BENCH_SLOT_SCHED);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(bench_fault_tp, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	if (is_target())
		count(BENCH_SLOT_FAULT_TP);
	return 0;
}

/* Page-fault and CPU-clock software perf events. */
SEC("perf_event")
int bench_perf_fault(struct bpf_perf_event_data *ctx)
{
	if (is_target())
		count(BENCH_SLOT_FAULT);
	return 0;
}

SEC("perf_event")
int bench_perf_sample(struct bpf_perf_event_data *ctx)
{
	if (is_target())
		count(BENCH_SLOT_SAMPLE);
	return 0;
}

/*
 * The ring-buffer benchmarks: loop_count iterations of a bpf_loop, run by
 * BPF_PROG_TEST_RUN, that count only (the base line) or count and emit,
 * so that what reserve + submit cost stands out of next to nothing.
 */
__u32 loop_count;

static long count_one(__u64 i, void *ctx)
{
	count(BENCH_SLOT_EMIT_HITS);
	return 0;
}

static long emit_one(__u64 i, void *ctx)
{
	emit(0);
	return 0;
}

SEC("syscall")
int bench_loop_count(void *ctx)
{
	bpf_loop(loop_count, count_one, NULL, 0);
	return 0;
}

SEC("syscall")
int bench_loop_emit(void *ctx)
{
	bpf_loop(loop_count, emit_one, NULL, 0);
	return 0;
}
