// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity from the CUPTI bridge (cupti_bridge/): one USDT probe hit per
 * batch of records (inferscope:gpu_batch(ptr, bytes, count)), copied here
 * record by record into the bulk ring buffer. Each record is one of the
 * isr_ev_gpu_* structs of format/events.h, its header's type and size filled
 * by the bridge; a record whose size does not match its type ends the batch.
 * At most ISR_GPU_BATCH_MAX_RECORDS are copied per batch (the bridge never
 * hands over more); every record not copied is counted (ISR_SRC_GPU).
 *
 * The other programs do nothing: they exist for the reference counters of
 * the probes they are attached to. gpu_flush_request on USDT
 * inferscope:gpu_flush asks the bridge to flush (the tracer does that
 * before it stops); gpu_window_request, a plain uprobe at the bridge's
 * inferscope_gpu_window_site with the reference counter
 * inferscope_gpu_window_semaphore, opens a window of GPU activity, and the
 * same with inferscope_gpu_close_semaphore closes it (cupti_bridge/bridge.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "regs.bpf.h"
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct batch_ctx {
	const char *base;
	__u64 bytes;
	__u64 off;
	__u64 ts;
	__u64 id;
	__u32 copied;
	bool bad;
};

/* The records the bridge hands over: the registered types whose drops
 * ISR_SRC_GPU counts (format/events.h). */
#define FROM_BRIDGE(drops) ((drops) == ISR_SRC_GPU)

#define BRIDGE_SIZE_CASE(ID, name, value, st, drops, ...) \
	case ISR_EV_##ID: return FROM_BRIDGE(drops) ? sizeof(struct st) : 0;
static __always_inline __u32 gpu_record_size(__u16 type)
{
	switch (type) {
	ISR_EVENT_TYPES(BRIDGE_SIZE_CASE)
	default:
		return 0;
	}
}
#undef BRIDGE_SIZE_CASE

/* Copies one record of type T (a constant size) from src: false when it
 * could not be. */
#define COPY_RECORD(T, c, src)								\
	({										\
		T *e_ = bpf_ringbuf_reserve(&events, sizeof(T), 0);			\
		bool ok_ = false;							\
		if (e_) {								\
			if (bpf_probe_read_user(e_, sizeof(T), (src))) {		\
				bpf_ringbuf_discard(e_, BPF_RB_NO_WAKEUP);		\
			} else {							\
				fill_hdr(&e_->hdr, e_->hdr.type, sizeof(T), (c)->id >> 32, \
					 (__u32)(c)->id, (c)->ts);			\
				submit_bulk(e_);					\
				ok_ = true;						\
			}								\
		}									\
		ok_;									\
	})

#define BRIDGE_COPY_CASE(ID, name, value, st, drops, ...) \
	case ISR_EV_##ID: ok = FROM_BRIDGE(drops) && COPY_RECORD(struct st, c, src); break;

static __always_inline void count_drops(__u32 source, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&drops, &source);

	if (v)
		*v += n; /* per-CPU slot: no other writer */
}

static long copy_one(__u64 index, void *arg)
{
	struct batch_ctx *c = arg;
	struct { __u16 type, size; } h;
	const char *src;
	__u64 lost;
	bool ok;

	if (c->off >= c->bytes || c->off > ISR_GPU_BATCH_MAX_BYTES)
		return 1;
	src = c->base + c->off;
	if (bpf_probe_read_user(&h, sizeof(h), src) || !h.size || h.size != gpu_record_size(h.type)) {
		c->bad = true;
		return 1;
	}
	/* The bridge's losses since its previous status record are drops of
	 * the recording. */
	if (h.type == ISR_EV_GPU_STATUS &&
	    !bpf_probe_read_user(&lost, sizeof(lost), src + __builtin_offsetof(struct isr_ev_gpu_status, lost_new)) &&
	    lost)
		count_drops(ISR_SRC_CUPTI, lost);
	switch (h.type) {
	ISR_EVENT_TYPES(BRIDGE_COPY_CASE)
	default:
		ok = false;	/* not reached: the size check took bridge types only */
	}
	if (!ok)
		count_drop(ISR_SRC_GPU);
	c->copied++;	/* copied or counted */
	c->off += h.size;
	return 0;
}

SEC("usdt")
int BPF_USDT(gpu_batch, const void *ptr, __u64 bytes, __u32 count)
{
	struct batch_ctx c = {};

	c.id = bpf_get_current_pid_tgid();
	if (!is_target(c.id >> 32))
		return 0;
	c.base = ptr;
	c.bytes = bytes;
	c.ts = bpf_ktime_get_ns();
	bpf_loop(ISR_GPU_BATCH_MAX_RECORDS, copy_one, &c, 0);
	/* Records not reached: beyond the bound, or after a malformed one. */
	if (count > c.copied)
		count_drops(ISR_SRC_GPU, count - c.copied);
	return 0;
}

SEC("usdt")
int BPF_USDT(gpu_flush_request, __u64 seq)
{
	return 0;
}

SEC("uprobe")
int gpu_window_request(void *ctx)
{
	return 0;
}
