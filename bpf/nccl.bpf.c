// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NCCL calls of target processes, from uprobes on libnccl.so*.
 *
 * Every probed function is one line of format/nccl_funcs.h, which travels
 * as the attach cookie (its id, kind and argument layout). nccl_call serves
 * the collectives, the point-to-point calls and the group calls: one event
 * at entry, one probe hit per call. The host's arrival at a collective is
 * its entry; what the GPU does with it later is the CUPTI bridge's.
 * nccl_init_enter and nccl_init_ret serve the communicator set-ups: the
 * entry remembers the arguments and hashes the ncclUniqueId (which is the
 * same on every rank), the return reads the new handle and emits the
 * communicator.
 *
 * Sequence numbers are counted here, per (process, communicator), so that
 * a call's number does not depend on what the recorder kept: collectives in
 * one sequence, point-to-point calls in another. A set-up starts them again.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "regs.bpf.h"
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "nccl_funcs.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct seq_key {
	__u32 pid;
	__u32 pad;
	__u64 comm;
};

struct seq_val {
	__u64 coll;
	__u64 p2p;
};

/* Per (process, communicator): the last numbers given. A full map leaves
 * new communicators unnumbered (seq 0), counted in ISR_SRC_NCCL. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct seq_key);
	__type(value, struct seq_val);
} nccl_seq SEC(".maps");

struct init_entry {
	__u64 ts_ns;
	__u64 comm_out;		/* ncclComm_t * */
	__u64 id_hash;
	__s32 rank, nranks;
	__u16 func;
	__u16 pad[3];
};

/* Set-ups in flight, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct init_entry);
} nccl_init_inflight SEC(".maps");

/* Scratch for the unique id being hashed (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[ISR_NCCL_UNIQUE_ID_BYTES]);
} nccl_id_buf SEC(".maps");

static __always_inline __u64 stack_arg(struct pt_regs *ctx, int slot)
{
	__u64 v;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8 * slot)))
		return 0;
	return v;
}

static __always_inline __u64 next_seq(__u32 pid, __u64 comm, bool p2p)
{
	struct seq_key key = { .pid = pid, .comm = comm };
	struct seq_val zero = {}, *v;

	v = bpf_map_lookup_elem(&nccl_seq, &key);
	if (!v) {
		/* another thread may insert it first: EEXIST is fine */
		bpf_map_update_elem(&nccl_seq, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&nccl_seq, &key);
		if (!v) {
			count_drop(ISR_SRC_NCCL);
			return 0;
		}
	}
	return p2p ? __sync_add_and_fetch(&v->p2p, 1) : __sync_add_and_fetch(&v->coll, 1);
}

SEC("uprobe")
int nccl_call(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie, ts;
	struct isr_ev_nccl_call *e;
	__u8 kind, layout;

	if (!is_target(id >> 32))
		return 0;
	ts = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	kind = ISR_NCCL_COOKIE_KIND(cookie);
	layout = ISR_NCCL_COOKIE_LAYOUT(cookie);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_NCCL);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_NCCL_CALL, sizeof(*e), id >> 32, (__u32)id, ts);
	e->func = ISR_NCCL_COOKIE_FUNC(cookie);
	e->comm = 0;
	e->count = 0;
	e->stream = 0;
	e->seq = 0;
	e->peer = -1;
	e->dtype = 0;
	e->op = ISR_NCCL_OP_NONE;
	switch (layout) {
	case ISR_NCCL_L_RED:
		e->count = PT_REGS_PARM3(ctx);
		e->dtype = (__u8)PT_REGS_PARM4(ctx);
		e->op = (__u8)PT_REGS_PARM5(ctx);
		e->comm = ISR_ARG6(ctx);
		e->stream = stack_arg(ctx, 1);
		break;
	case ISR_NCCL_L_ROOT:
		e->count = PT_REGS_PARM3(ctx);
		e->dtype = (__u8)PT_REGS_PARM4(ctx);
		e->peer = (__s32)PT_REGS_PARM5(ctx);
		e->comm = ISR_ARG6(ctx);
		e->stream = stack_arg(ctx, 1);
		break;
	case ISR_NCCL_L_REDUCE:
		e->count = PT_REGS_PARM3(ctx);
		e->dtype = (__u8)PT_REGS_PARM4(ctx);
		e->op = (__u8)PT_REGS_PARM5(ctx);
		e->peer = (__s32)ISR_ARG6(ctx);
		e->comm = stack_arg(ctx, 1);
		e->stream = stack_arg(ctx, 2);
		break;
	case ISR_NCCL_L_GATHER:
		e->count = PT_REGS_PARM3(ctx);
		e->dtype = (__u8)PT_REGS_PARM4(ctx);
		e->comm = PT_REGS_PARM5(ctx);
		e->stream = ISR_ARG6(ctx);
		break;
	case ISR_NCCL_L_PEER:
		e->count = PT_REGS_PARM2(ctx);
		e->dtype = (__u8)PT_REGS_PARM3(ctx);
		e->peer = (__s32)PT_REGS_PARM4(ctx);
		e->comm = PT_REGS_PARM5(ctx);
		e->stream = ISR_ARG6(ctx);
		break;
	}
	if (kind == ISR_NCCL_KIND_COLL || kind == ISR_NCCL_KIND_P2P)
		e->seq = next_seq(id >> 32, e->comm, kind == ISR_NCCL_KIND_P2P);
	submit_bulk(e);
	return 0;
}

/* FNV-1a over the 128 bytes of a ncclUniqueId at addr (0 if unreadable). */
static __always_inline __u64 id_hash(__u64 addr)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 zero = 0;
	__u8 *buf;

	buf = bpf_map_lookup_elem(&nccl_id_buf, &zero);
	if (!buf || bpf_probe_read_user(buf, ISR_NCCL_UNIQUE_ID_BYTES, (const void *)addr))
		return 0;
	for (int i = 0; i < ISR_NCCL_UNIQUE_ID_BYTES; i++) {
		h ^= buf[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

SEC("uprobe")
int nccl_init_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tid = (__u32)id;
	struct init_entry ent = {};

	if (!is_target(id >> 32))
		return 0;
	ent.ts_ns = bpf_ktime_get_ns();
	ent.func = ISR_NCCL_COOKIE_FUNC(cookie);
	ent.comm_out = PT_REGS_PARM1(ctx);
	ent.nranks = (__s32)PT_REGS_PARM2(ctx);
	ent.rank = (__s32)PT_REGS_PARM3(ctx);
	if (ISR_NCCL_COOKIE_LAYOUT(cookie) == ISR_NCCL_L_INIT_SCALABLE)
		ent.id_hash = id_hash(PT_REGS_PARM5(ctx));	/* the first of the ids */
	else
		ent.id_hash = id_hash(PT_REGS_SP(ctx) + 8);	/* by value, on the stack */
	if (bpf_map_update_elem(&nccl_init_inflight, &tid, &ent, BPF_ANY))
		count_drop(ISR_SRC_NCCL);
	return 0;
}

SEC("uretprobe")
int nccl_init_ret(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), comm = 0, now;
	struct isr_ev_nccl_comm *e;
	struct init_entry *ent;
	__u32 tid = (__u32)id;
	__s32 status;

	if (!is_target(id >> 32))
		return 0;
	ent = bpf_map_lookup_elem(&nccl_init_inflight, &tid);
	if (!ent)
		return 0;	/* not remembered: counted at the entry */
	now = bpf_ktime_get_ns();
	status = (__s32)PT_REGS_RC(ctx);
	if (bpf_probe_read_user(&comm, sizeof(comm), (const void *)ent->comm_out))
		comm = 0;
	if (comm) {
		struct seq_key key = { .pid = id >> 32, .comm = comm };
		struct seq_val zero = {};

		if (bpf_map_update_elem(&nccl_seq, &key, &zero, BPF_ANY))
			count_drop(ISR_SRC_NCCL);
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_NCCL);
		bpf_map_delete_elem(&nccl_init_inflight, &tid);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_NCCL_COMM, sizeof(*e), id >> 32, tid, ent->ts_ns);
	e->comm = comm;
	e->id_hash = ent->id_hash;
	e->duration_ns = now - ent->ts_ns;
	e->rank = ent->rank;
	e->nranks = ent->nranks;
	e->status = status;
	e->func = ent->func;
	e->pad = 0;
	bpf_map_delete_elem(&nccl_init_inflight, &tid);
	submit_bulk(e);
	return 0;
}
