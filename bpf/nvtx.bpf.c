// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NVTX annotations of target threads, from uprobes on the NVTX entry
 * points of libnvToolsExt (user/probes/family_nvtx.c finds them):
 *
 *   nvtx_msg    nvtxRangePushA/Ex, nvtxMarkA/Ex (one event at the entry),
 *               nvtxRangeStartA/Ex (entry kept per thread until the return)
 *   nvtx_close  nvtxRangePop, nvtxRangeEnd(id)
 *   nvtx_start_ret  the return of nvtxRangeStartA/Ex: the range id
 *
 * The cookie of each site is ISR_NVTX_* | ISR_NVTX_F_EX << 8 for an Ex
 * variant, whose message is read from its event attributes (the ASCII
 * message only: Unicode and registered strings have no name here).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "regs.bpf.h"
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* nvtxEventAttributes_v2 (nvtx3/nvToolsExt.h): messageType at 32, the
 * message's union at 40. */
#define NVTX_ATTR_MESSAGE_TYPE	32
#define NVTX_ATTR_MESSAGE	40
#define NVTX_MESSAGE_TYPE_ASCII	1

struct nvtx_starting {
	__u64 ts;
	__u16 flags;
	char name[ISR_NVTX_NAME_LEN];
};

/* Range starts in flight, by tid; a full map is counted (ISR_SRC_NVTX). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct nvtx_starting);
} nvtx_starts SEC(".maps");

/* The message of an A variant (arg is the string) or an Ex one (arg is
 * the attributes): its flags. */
static __always_inline __u16 read_message(const void *arg, bool ex, char *name)
{
	const char *msg = arg;
	__s32 type = 0;

	name[0] = '\0';
	if (ex) {
		if (bpf_probe_read_user(&type, sizeof(type), (const char *)arg + NVTX_ATTR_MESSAGE_TYPE) ||
		    type != NVTX_MESSAGE_TYPE_ASCII ||
		    bpf_probe_read_user(&msg, sizeof(msg), (const char *)arg + NVTX_ATTR_MESSAGE))
			return ISR_NVTX_F_EX | ISR_NVTX_F_NO_NAME;
	}
	if (!msg || bpf_probe_read_user_str(name, ISR_NVTX_NAME_LEN, msg) <= 0) {
		name[0] = '\0';
		return (ex ? ISR_NVTX_F_EX : 0) | ISR_NVTX_F_NO_NAME;
	}
	return ex ? ISR_NVTX_F_EX : 0;
}

static __always_inline struct isr_ev_nvtx *reserve(__u64 id, __u64 ts, __u16 kind)
{
	struct isr_ev_nvtx *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(ISR_SRC_NVTX);
		return NULL;
	}
	fill_hdr(&e->hdr, ISR_EV_NVTX, sizeof(*e), id >> 32, (__u32)id, ts);
	e->kind = kind;
	e->flags = 0;
	e->pad = 0;
	e->id = 0;
	__builtin_memset(e->name, 0, ISR_NVTX_NAME_LEN);
	return e;
}

SEC("uprobe")
int nvtx_msg(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx), ts;
	__u16 kind = cookie & 0xff;
	bool ex = (cookie >> 8) & ISR_NVTX_F_EX;
	struct isr_ev_nvtx *e;

	if (!is_target(id >> 32))
		return 0;
	ts = bpf_ktime_get_ns();
	if (kind == ISR_NVTX_START) {
		struct nvtx_starting s = { .ts = ts };
		__u32 tid = (__u32)id;

		s.flags = read_message((const void *)PT_REGS_PARM1(ctx), ex, s.name);
		if (bpf_map_update_elem(&nvtx_starts, &tid, &s, BPF_ANY))
			count_drop(ISR_SRC_NVTX);
		return 0;
	}
	e = reserve(id, ts, kind);
	if (!e)
		return 0;
	e->flags = read_message((const void *)PT_REGS_PARM1(ctx), ex, e->name);
	submit_bulk(e);
	return 0;
}

SEC("uretprobe")
int nvtx_start_ret(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct nvtx_starting *s;
	struct isr_ev_nvtx *e;

	if (!is_target(id >> 32))
		return 0;
	s = bpf_map_lookup_elem(&nvtx_starts, &tid);
	if (!s)
		return 0; /* its entry was not remembered: counted there */
	e = reserve(id, s->ts, ISR_NVTX_START);
	if (e) {
		e->id = PT_REGS_RC(ctx);
		e->flags = s->flags;
		__builtin_memcpy(e->name, s->name, ISR_NVTX_NAME_LEN);
		submit_bulk(e);
	}
	bpf_map_delete_elem(&nvtx_starts, &tid);
	return 0;
}

SEC("uprobe")
int nvtx_close(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	struct isr_ev_nvtx *e;

	if (!is_target(id >> 32))
		return 0;
	e = reserve(id, bpf_ktime_get_ns(), cookie & 0xff);
	if (!e)
		return 0;
	e->name[0] = '\0';
	if ((cookie & 0xff) == ISR_NVTX_END)
		e->id = PT_REGS_PARM1(ctx);
	submit_bulk(e);
	return 0;
}
