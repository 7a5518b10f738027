/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the kernel-CI benchmarks' BPF programs (bpf/bench.bpf.c) and their
 * loader (user/bench/bench_mech.c) share: the counter slots and the record the
 * ring-buffer programs emit. Nothing of it reaches a file: it sits in
 * format/ because it is what BPF and user space agree on, as events.h is.
 */
#ifndef INFERSCOPE_BENCH_EVENTS_H
#define INFERSCOPE_BENCH_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Per-CPU hit counters. Uprobe links carry their slot as attach cookie:
 * BENCH_SLOT_SITE0 + n for the n-th site of a benchmark or check. */
enum {
	BENCH_SLOT_SCHED,		/* sched_switch / sched_wakeup of the target */
	BENCH_SLOT_FAULT,		/* page faults of the target: software perf event */
	BENCH_SLOT_FAULT_TP,		/* page faults of the target: page_fault_user */
	BENCH_SLOT_SAMPLE,		/* CPU-clock samples of the target */
	BENCH_SLOT_EMIT_HITS,		/* hits of an emitting (or counting) program */
	BENCH_SLOT_EMIT_SUBMITTED,	/* records reserved and submitted */
	BENCH_SLOT_EMIT_DROPS,		/* failed reservations */
	BENCH_SLOT_SITE0,
	BENCH_SLOTS = BENCH_SLOT_SITE0 + 128,
};

/* One ring-buffer record: a sequence number that tells lost or repeated
 * records apart, and the thread that emitted it. */
struct bench_record {
	__u64 seq;
	__u32 tid;
	__u32 pad;
};

_Static_assert(sizeof(struct bench_record) == 16, "bench_record layout");

#endif
