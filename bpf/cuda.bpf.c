// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUDA driver API calls of target processes, from uprobes on libcuda.
 *
 * Every probed function is one line of format/cuda_funcs.h; its line travels
 * as the attach cookie (format/cuda_cookie.h), so a few programs serve every
 * function: cuda_hot (the entry of every hot-path family), cuda_copy_ret
 * (the return of the async copies), cuda_enter and cuda_ret (entry and
 * return of the "+ret" families), and cuda_learn_enter and cuda_learn_ret
 * (those of cuKernelGetFunction, which the recorder releases once it
 * teaches nothing new). Exactly one entry program runs
 * per probed address (kernel 6.18 loses most hits when two entry programs
 * share an address).
 *
 * The hot-path families (launches, graph launches, async copies, memsets)
 * emit their event at entry: one probe hit per call. They are the calls that
 * can come at 100k/s; the overhead budget switches them on and off together
 * (user/record/budget.h). The async copies (cuMemcpy*Async: no kernel launch
 * comes at that rate with them) are the exception: they are timed like the
 * "+ret" families, entry in cuda_hot and return in cuda_copy_ret, both
 * switched by the budget. An async copy from pageable memory blocks while
 * the driver stages it (and, from the GPU, until the copy is done); one
 * from pinned memory returns at once: the duration tells them apart where
 * the memory map cannot (analysis/rules/rules_gpu.c).
 * "+ret" families remember the entry time and raw arguments per (thread,
 * function) and emit one event at return, with the status, the duration and
 * the out-parameters read from user memory (allocation address, VMM handle).
 * The kernel-name learners emit struct isr_ev_cuda_name instead, only for
 * calls that succeeded.
 *
 * Arguments are read from the x86-64 registers at the first instruction of
 * the function (or right after its endbr64, which changes neither registers
 * nor stack): rdi, rsi, rdx, rcx, r8, r9, then the stack above the return
 * address at [rsp + 8], [rsp + 16], ...
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "regs.bpf.h"
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "cuda_funcs.h"
#include "cuda_cookie.h"
#include "py_stacks.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Python call sites (--py-stacks; 0: none): the Python stack of every
 * synchronization that lasted PY_SYNC_MIN_NS or more, of every
 * py_launch_every-th launch on each CPU, and of device memory allocations
 * (at most PY_ALLOC_PER_WINDOW per PY_ALLOC_WINDOW_NS on each CPU) is
 * emitted with the call's time (bpf/py_stacks.bpf.h). A capture costs about
 * 0.25 us per frame: polling queries that return at once are not worth one;
 * an allocation is (PyTorch's caching allocator calls the driver seldom,
 * and the report names the line that allocated what a process held), but
 * a program that allocates at a high rate (no caching allocator) is not
 * charged a capture for each. */
const volatile __u32 py_launch_every = 0;
#define PY_SYNC_MIN_NS		20000
#define PY_ALLOC_WINDOW_NS	100000000ULL
#define PY_ALLOC_PER_WINDOW	50

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_launch_count SEC(".maps");

struct alloc_window {
	__u64 start;
	__u32 captures;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct alloc_window);
} py_alloc_window SEC(".maps");

/* The stack of a device memory allocation that succeeded, taken with its
 * entry's time, while this CPU's window has captures left. */
static __always_inline void py_at_alloc(__u64 id, __u64 start, __u64 now)
{
	struct alloc_window *w;
	__u32 zero = 0;

	if (!py_launch_every)
		return;
	w = bpf_map_lookup_elem(&py_alloc_window, &zero);
	if (!w)
		return;
	if (now - w->start >= PY_ALLOC_WINDOW_NS) {
		w->start = now;
		w->captures = 0;
	}
	if (w->captures >= PY_ALLOC_PER_WINDOW)
		return;
	w->captures++;
	py_capture(id, start, ISR_PY_KIND_CUDA);
}

static __always_inline void py_at_launch(__u64 id, __u64 ts)
{
	__u32 zero = 0, *n;

	if (!py_launch_every)
		return;
	n = bpf_map_lookup_elem(&py_launch_count, &zero);
	if (!n || ++*n < py_launch_every)
		return;
	*n = 0;
	py_capture(id, ts, ISR_PY_KIND_CUDA);
}

struct cuda_key {
	__u32 tid;
	__u32 func;
};

struct cuda_entry {
	__u64 ts_ns;
	__u64 args[6];	/* rdi, rsi, rdx, rcx, r8, r9 at entry */
};

/* "+ret" calls in flight. Not LRU: an entry is never evicted under a call
 * that is still running; a full map is counted (ISR_SRC_CUDA_INFLIGHT). A
 * thread's next call of the same function replaces a stale entry. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cuda_key);
	__type(value, struct cuda_entry);
} cuda_inflight SEC(".maps");

/* CUmemorytype */
#define CU_MEMORYTYPE_HOST	1
#define CU_MEMORYTYPE_DEVICE	2
#define CU_MEMORYTYPE_ARRAY	3
#define CU_MEMORYTYPE_UNIFIED	4

/* CUlaunchConfig up to hStream (cuda.h, CUDA 13) */
struct cu_launch_config {
	__u32 grid[3];
	__u32 block[3];
	__u32 shared_bytes;
	__u32 pad;
	__u64 stream;
};

/* One side of CUDA_MEMCPY2D / CUDA_MEMCPY3D, from its memory type on. */
struct cu_copy_side {
	__u32 memory_type;
	__u32 pad;
	__u64 host;
	__u64 device;
	__u64 array;
};

/* Offsets in CUDA_MEMCPY2D (128 bytes) and CUDA_MEMCPY3D (200 bytes). */
#define COPY2D_SRC	16
#define COPY2D_DST	72
#define COPY2D_WIDTH	112	/* WidthInBytes, Height */
#define COPY3D_SRC	32
#define COPY3D_DST	120
#define COPY3D_WIDTH	176	/* WidthInBytes, Height, Depth */

static __always_inline struct isr_ev_cuda_call *call_reserve(__u64 id, __u64 cookie, __u64 ts)
{
	struct isr_ev_cuda_call *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(ISR_SRC_CUDA);
		return NULL;
	}
	fill_hdr(&e->hdr, ISR_EV_CUDA_CALL, sizeof(*e), id >> 32, (__u32)id, ts);
	e->func = ISR_CUDA_COOKIE_FUNC(cookie);
	e->flags = ISR_CUDA_COOKIE_FLAGS(cookie);
	e->status = 0;
	e->duration_ns = 0;
	e->args[0] = 0;
	e->args[1] = 0;
	e->args[2] = 0;
	e->args[3] = 0;
	e->args[4] = 0;
	e->args[5] = 0;
	return e;
}

/* --- hot-path families ------------------------------------------------------ */

/* cuLaunchKernel, cuLaunchCooperativeKernel (and _ptsz):
 * (f, gx, gy, gz, bx, by, bz, sharedMem, hStream, params[, extra]) */
static __always_inline void launch(struct pt_regs *ctx, __u64 id, __u64 cookie)
{
	__u64 ts = bpf_ktime_get_ns();
	struct isr_ev_cuda_call *e;
	struct {
		__u64 bz, shared_bytes, stream;	/* unsigned ints fill 8-byte slots */
	} stk;

	e = call_reserve(id, cookie, ts);
	if (!e)
		return;
	if (bpf_probe_read_user(&stk, sizeof(stk), (void *)(PT_REGS_SP(ctx) + 8)))
		__builtin_memset(&stk, 0, sizeof(stk));
	e->args[0] = PT_REGS_PARM1(ctx);
	e->args[1] = (__u32)PT_REGS_PARM2(ctx) | (__u64)(__u32)PT_REGS_PARM3(ctx) << 32;
	e->args[2] = (__u32)PT_REGS_PARM4(ctx) | (__u64)(__u32)PT_REGS_PARM5(ctx) << 32;
	e->args[3] = (__u32)ISR_ARG6(ctx) | (stk.bz & 0xffffffff) << 32;
	e->args[4] = stk.shared_bytes & 0xffffffff;
	e->args[5] = stk.stream;
	submit_bulk(e);
	py_at_launch(id, ts);
}

/* cuLaunchKernelEx (and _ptsz): (const CUlaunchConfig *config, f, params, extra) */
static __always_inline void launch_ex(struct pt_regs *ctx, __u64 id, __u64 cookie)
{
	__u64 ts = bpf_ktime_get_ns();
	struct cu_launch_config cfg;
	struct isr_ev_cuda_call *e;

	e = call_reserve(id, cookie, ts);
	if (!e)
		return;
	if (bpf_probe_read_user(&cfg, sizeof(cfg), (const void *)PT_REGS_PARM1(ctx)))
		__builtin_memset(&cfg, 0, sizeof(cfg));
	e->args[0] = PT_REGS_PARM2(ctx);
	e->args[1] = cfg.grid[0] | (__u64)cfg.grid[1] << 32;
	e->args[2] = cfg.grid[2] | (__u64)cfg.block[0] << 32;
	e->args[3] = cfg.block[1] | (__u64)cfg.block[2] << 32;
	e->args[4] = cfg.shared_bytes;
	e->args[5] = cfg.stream;
	submit_bulk(e);
	py_at_launch(id, ts);
}

/* cuGraphLaunch (and _ptsz): (hGraphExec, hStream) */
static __always_inline void graph(struct pt_regs *ctx, __u64 id, __u64 cookie)
{
	__u64 ts = bpf_ktime_get_ns();
	struct isr_ev_cuda_call *e = call_reserve(id, cookie, ts);

	if (!e)
		return;
	e->args[0] = PT_REGS_PARM1(ctx);
	e->args[5] = PT_REGS_PARM2(ctx);
	submit_bulk(e);
	py_at_launch(id, ts);
}

/* One copy event: direction from the table (aux), the stream only for the
 * stream-ordered variants. */
static __always_inline void emit_copy(__u64 id, __u64 cookie, __u64 dst, __u64 src, __u64 bytes, __u64 stream)
{
	struct isr_ev_cuda_call *e = call_reserve(id, cookie, bpf_ktime_get_ns());

	if (!e)
		return;
	e->args[0] = dst;
	e->args[1] = src;
	e->args[2] = bytes;
	e->args[3] = ISR_CUDA_COOKIE_AUX(cookie);
	if (ISR_CUDA_COOKIE_FLAGS(cookie) & ISR_CUDA_ASYNC)
		e->args[5] = stream;
	submit_bulk(e);
}

static __always_inline __u64 copy_side_address(const struct cu_copy_side *s)
{
	switch (s->memory_type) {
	case CU_MEMORYTYPE_HOST:
		return s->host;
	case CU_MEMORYTYPE_ARRAY:
		return s->array;
	default:
		return s->device;
	}
}

static __always_inline bool copy_side_on_device(__u32 memory_type)
{
	return memory_type == CU_MEMORYTYPE_DEVICE || memory_type == CU_MEMORYTYPE_ARRAY;
}

static __always_inline __u64 copy_direction(__u32 src_type, __u32 dst_type)
{
	if (src_type == CU_MEMORYTYPE_HOST && copy_side_on_device(dst_type))
		return ISR_COPY_HTOD;
	if (copy_side_on_device(src_type) && dst_type == CU_MEMORYTYPE_HOST)
		return ISR_COPY_DTOH;
	if (copy_side_on_device(src_type) && copy_side_on_device(dst_type))
		return ISR_COPY_DTOD;
	return ISR_COPY_DEFAULT; /* unified memory on a side: the driver decides */
}

/* cuMemcpy2D/3D[Async]: (const CUDA_MEMCPY2D/3D *, [hStream]) */
static __always_inline void copy_nd(struct pt_regs *ctx, __u64 id, __u64 cookie, bool three_d)
{
	const char *p = (const char *)PT_REGS_PARM1(ctx);
	struct cu_copy_side src, dst;
	struct isr_ev_cuda_call *e;
	__u64 extent[3] = { 0, 0, 1 };

	e = call_reserve(id, cookie, bpf_ktime_get_ns());
	if (!e)
		return;
	if (bpf_probe_read_user(&src, sizeof(src), p + (three_d ? COPY3D_SRC : COPY2D_SRC)) ||
	    bpf_probe_read_user(&dst, sizeof(dst), p + (three_d ? COPY3D_DST : COPY2D_DST)) ||
	    bpf_probe_read_user(extent, three_d ? 24 : 16, p + (three_d ? COPY3D_WIDTH : COPY2D_WIDTH))) {
		__builtin_memset(&src, 0, sizeof(src));
		__builtin_memset(&dst, 0, sizeof(dst));
		extent[0] = 0;
	}
	e->args[0] = copy_side_address(&dst);
	e->args[1] = copy_side_address(&src);
	e->args[2] = extent[0] * extent[1] * extent[2];
	e->args[3] = copy_direction(src.memory_type, dst.memory_type);
	if (ISR_CUDA_COOKIE_FLAGS(cookie) & ISR_CUDA_ASYNC)
		e->args[5] = PT_REGS_PARM2(ctx);
	submit_bulk(e);
}

/* cuMemsetD8/16/32[Async]: (dst, value, count[, hStream]); aux is the
 * element size, so bytes = count * aux. */
static __always_inline void set(struct pt_regs *ctx, __u64 id, __u64 cookie)
{
	__u64 value = PT_REGS_PARM2(ctx);
	__u8 elem = ISR_CUDA_COOKIE_AUX(cookie);
	struct isr_ev_cuda_call *e;

	e = call_reserve(id, cookie, bpf_ktime_get_ns());
	if (!e)
		return;
	e->args[0] = PT_REGS_PARM1(ctx);
	e->args[1] = elem >= 4 ? value & 0xffffffff : value & ((1ULL << (8 * elem)) - 1);
	e->args[2] = PT_REGS_PARM3(ctx) * elem;
	if (ISR_CUDA_COOKIE_FLAGS(cookie) & ISR_CUDA_ASYNC)
		e->args[5] = PT_REGS_PARM4(ctx);
	submit_bulk(e);
}

/* The entry of a call whose return is probed: remember when and with what,
 * per (thread, function). */
static __always_inline void remember(struct pt_regs *ctx, __u64 id, __u64 cookie)
{
	struct cuda_key key;
	struct cuda_entry ent;

	key.tid = (__u32)id;
	key.func = ISR_CUDA_COOKIE_FUNC(cookie);
	ent.ts_ns = bpf_ktime_get_ns();
	ent.args[0] = PT_REGS_PARM1(ctx);
	ent.args[1] = PT_REGS_PARM2(ctx);
	ent.args[2] = PT_REGS_PARM3(ctx);
	ent.args[3] = PT_REGS_PARM4(ctx);
	ent.args[4] = PT_REGS_PARM5(ctx);
	ent.args[5] = ISR_ARG6(ctx);
	if (bpf_map_update_elem(&cuda_inflight, &key, &ent, BPF_ANY))
		count_drop(ISR_SRC_CUDA_INFLIGHT);
}

/*
 * The entry of every hot-path family: one program, so that the overhead
 * budget switches the whole hot path of a library with one link
 * (user/record/budget.h). The family travels in the attach cookie.
 */
SEC("uprobe")
int cuda_hot(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie;

	if (!is_target(id >> 32))
		return 0;
	cookie = bpf_get_attach_cookie(ctx);
	switch (ISR_CUDA_COOKIE_FAMILY(cookie)) {
	case ISR_CUDA_FAM_LAUNCH:
		launch(ctx, id, cookie);
		break;
	case ISR_CUDA_FAM_LAUNCH_EX:
		launch_ex(ctx, id, cookie);
		break;
	case ISR_CUDA_FAM_GRAPH:
		graph(ctx, id, cookie);
		break;
	case ISR_CUDA_FAM_COPY:
		/* cuMemcpy*Async: (dst, src, bytes, hStream), emitted at
		 * return (cuda_copy_ret) */
		remember(ctx, id, cookie);
		break;
	case ISR_CUDA_FAM_COPY_PEER:
		/* cuMemcpyPeer[Async]: (dst, dstCtx, src, srcCtx, bytes[, hStream]) */
		emit_copy(id, cookie, PT_REGS_PARM1(ctx), PT_REGS_PARM3(ctx), PT_REGS_PARM5(ctx), ISR_ARG6(ctx));
		break;
	case ISR_CUDA_FAM_COPY_2D:
		copy_nd(ctx, id, cookie, false);
		break;
	case ISR_CUDA_FAM_COPY_3D:
		copy_nd(ctx, id, cookie, true);
		break;
	case ISR_CUDA_FAM_SET:
		set(ctx, id, cookie);
		break;
	}
	return 0;
}

/* --- "+ret" families -------------------------------------------------------- */

/* The entry of a "+ret" family. */
static __always_inline int remember_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (is_target(id >> 32))
		remember(ctx, id, bpf_get_attach_cookie(ctx));
	return 0;
}

/* The entry of every "+ret" family but ALIAS. */
SEC("uprobe")
int cuda_enter(struct pt_regs *ctx)
{
	return remember_entry(ctx);
}

static __always_inline __u64 read_user_u64(__u64 addr)
{
	__u64 v;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* The learners: name a kernel handle (NAME) or alias one (ALIAS). */
static __always_inline void emit_name(struct pt_regs *ctx, __u64 id, __u16 func,
				      const struct cuda_entry *ent, bool alias)
{
	struct isr_ev_cuda_name *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_CUDA);
		return;
	}
	fill_hdr(&e->hdr, ISR_EV_CUDA_NAME, sizeof(*e), id >> 32, (__u32)id, ent->ts_ns);
	e->handle = read_user_u64(ent->args[0]);
	e->owner = ent->args[1];
	e->func = func;
	e->pad0 = 0;
	e->pad1 = 0;
	e->name[0] = 0;
	if (!alias && bpf_probe_read_user_str(e->name, sizeof(e->name), (const void *)ent->args[2]) < 0)
		e->name[0] = 0;
	submit_bulk(e);
}

static __always_inline int cuda_return(struct pt_regs *ctx, __u8 family)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx), now, start;
	__u16 func = ISR_CUDA_COOKIE_FUNC(cookie), flags = ISR_CUDA_COOKIE_FLAGS(cookie);
	__u64 aux = ISR_CUDA_COOKIE_AUX(cookie);
	struct isr_ev_cuda_call *e;
	struct cuda_entry *ent;
	struct cuda_key key;
	__s32 status;

	if (!is_target(id >> 32))
		return 0;
	key.tid = (__u32)id;
	key.func = func;
	ent = bpf_map_lookup_elem(&cuda_inflight, &key);
	if (!ent)
		return 0; /* its entry was not remembered: counted there */
	now = bpf_ktime_get_ns();
	status = (__s32)PT_REGS_RC(ctx);
	if (family == ISR_CUDA_FAM_NAME || family == ISR_CUDA_FAM_ALIAS) {
		if (status == 0)
			emit_name(ctx, id, func, ent, family == ISR_CUDA_FAM_ALIAS);
		bpf_map_delete_elem(&cuda_inflight, &key);
		return 0;
	}
	start = ent->ts_ns;
	e = call_reserve(id, cookie, start);
	if (!e) {
		bpf_map_delete_elem(&cuda_inflight, &key);
		return 0;
	}
	e->flags = flags | ISR_CUDA_RETURNED;
	e->status = status;
	e->duration_ns = now - ent->ts_ns;
	switch (family) {
	case ISR_CUDA_FAM_SYNC:
		/* (void), (handle) or (hStream, hEvent, flags) */
		if (func != ISR_CUDA_FN_cuCtxSynchronize)
			e->args[0] = ent->args[0];
		if (func == ISR_CUDA_FN_cuStreamWaitEvent || func == ISR_CUDA_FN_cuStreamWaitEvent_ptsz)
			e->args[1] = ent->args[1];
		break;
	case ISR_CUDA_FAM_ALLOC:
		/* (out_ptr *, bytes[, flags | hStream]) */
		if (status == 0)
			e->args[0] = read_user_u64(ent->args[0]);
		e->args[1] = ent->args[1];
		if (func == ISR_CUDA_FN_cuMemAllocManaged || func == ISR_CUDA_FN_cuMemHostAlloc)
			e->args[2] = (__u32)ent->args[2];
		e->args[3] = aux;
		if (flags & ISR_CUDA_ASYNC)
			e->args[5] = ent->args[2];
		break;
	case ISR_CUDA_FAM_FREE:
		/* (ptr[, hStream]) */
		e->args[0] = ent->args[0];
		e->args[3] = aux;
		if (flags & ISR_CUDA_ASYNC)
			e->args[5] = ent->args[1];
		break;
	case ISR_CUDA_FAM_VMM_CREATE:
		/* (out_handle *, size, prop *, flags) */
		if (status == 0)
			e->args[0] = read_user_u64(ent->args[0]);
		e->args[1] = ent->args[1];
		break;
	case ISR_CUDA_FAM_VMM_RELEASE:
		e->args[0] = ent->args[0];
		break;
	case ISR_CUDA_FAM_VMM_MAP:
		/* (ptr, size, offset, handle, flags) */
		e->args[0] = ent->args[0];
		e->args[1] = ent->args[1];
		e->args[2] = ent->args[2];
		e->args[3] = ent->args[3];
		break;
	case ISR_CUDA_FAM_VMM_UNMAP:
		e->args[0] = ent->args[0];
		e->args[1] = ent->args[1];
		break;
	case ISR_CUDA_FAM_COPY_SYNC:
	case ISR_CUDA_FAM_COPY:
		/* (dst, src, bytes[, hStream]) */
		e->args[0] = ent->args[0];
		e->args[1] = ent->args[1];
		e->args[2] = ent->args[2];
		e->args[3] = aux;
		if (flags & ISR_CUDA_ASYNC)
			e->args[5] = ent->args[3];
		break;
	case ISR_CUDA_FAM_REGISTER:
		/* (p, bytesize, Flags) */
		e->args[0] = ent->args[0];
		e->args[1] = ent->args[1];
		e->args[2] = (__u32)ent->args[2];
		break;
	case ISR_CUDA_FAM_UNREGISTER:
		/* (p) */
		e->args[0] = ent->args[0];
		break;
	}
	bpf_map_delete_elem(&cuda_inflight, &key);
	submit_bulk(e);
	if (py_launch_every && (family == ISR_CUDA_FAM_SYNC || family == ISR_CUDA_FAM_COPY_SYNC) &&
	    now - start >= PY_SYNC_MIN_NS)
		py_capture(id, start, ISR_PY_KIND_CUDA);
	else if (family == ISR_CUDA_FAM_ALLOC && aux != ISR_ALLOC_HOST && status == 0)
		py_at_alloc(id, start, now);
	return 0;
}

/* One return program for every "+ret" family but ALIAS: the family
 * travels in the attach cookie like the function does. */
SEC("uretprobe")
int cuda_ret(struct pt_regs *ctx)
{
	return cuda_return(ctx, ISR_CUDA_COOKIE_FAMILY(bpf_get_attach_cookie(ctx)));
}

/* The return of the async copies (their entry is cuda_hot's): a program
 * of its own, switched with cuda_hot by the overhead budget. */
SEC("uretprobe")
int cuda_copy_ret(struct pt_regs *ctx)
{
	return cuda_return(ctx, ISR_CUDA_FAM_COPY);
}

/*
 * ALIAS (cuKernelGetFunction): the same work in programs of their own.
 * The CUDA runtime calls it once per launch, to learn a handle mapping
 * that never changes: the recorder releases these two once the calls
 * teach nothing new, and attaches them again when a kernel is named or a
 * while later (user/probes/family_cuda.c).
 */
SEC("uprobe")
int cuda_learn_enter(struct pt_regs *ctx)
{
	return remember_entry(ctx);
}

SEC("uretprobe")
int cuda_learn_ret(struct pt_regs *ctx)
{
	return cuda_return(ctx, ISR_CUDA_FAM_ALIAS);
}
