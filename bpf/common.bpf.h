/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps and helpers shared by every BPF object. Each object declares its own
 * copy of these maps; the loader (user/record/tracer.c) creates them once, with the
 * first object, and makes every later object reuse them (bpf_map__reuse_fd),
 * so all probe families share one target set, one event stream and one set
 * of drop counters.
 */
#ifndef INFERSCOPE_COMMON_BPF_H
#define INFERSCOPE_COMMON_BPF_H

#include "events.h"

/* Target processes (tgid -> 1). Threads of a target are targets. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ISR_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Bulk events. Size set by the loader (--ringbuf-size). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

/* Rare events the analysis cannot do without (fork, exec, exit, rename):
 * kept apart so a flood of bulk events cannot crowd them out. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} critical SEC(".maps");

/* Drop counters, per CPU, indexed by ISR_SRC_*. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ISR_SRC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline bool is_target(__u32 tgid)
{
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void count_drop(__u32 source)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &source);

	if (n)
		*n += 1; /* per-CPU slot: no other writer */
}

static __always_inline void fill_hdr(struct isr_ev_hdr *h, __u16 type, __u16 size,
				     __u32 pid, __u32 tid, __u64 ts)
{
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
}

/*
 * Bulk events never wake the consumer: it drains the ring buffer on a fixed
 * cadence instead (user/record/tracer.c). A wakeup costs an irq_work per event
 * batch, and from uprobe context it was seen to make the kernel skip later
 * hits of the probe (kernel 6.18: 40 of 20,000 calls counted with wakeups,
 * all of them without).
 */
static __always_inline void submit_bulk(void *e)
{
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

#endif
