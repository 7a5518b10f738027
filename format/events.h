/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one event format shared by the BPF programs, the CUPTI bridge, the
 * recorder and the analyzer. Every struct here reaches the record file
 * byte for byte, so: fixed-width fields only, explicit padding, sizes
 * multiple of 8, and a static assertion on every size and offset (ISR_LAYOUT,
 * format/layout.h). docs/record-format.md is
 * generated from these definitions (see tests/unit/format_tables.c) and a
 * test fails when the two disagree.
 *
 * Every record starts with struct isr_ev_hdr. Readers skip records whose
 * type they do not know by hdr.size, so new types never break old readers.
 */
#ifndef INFERSCOPE_EVENTS_H
#define INFERSCOPE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "layout.h"

/*
 * The event registry: every event type a recording holds, one line each.
 *
 *   X(ID, name, value, struct, drops, flags, interval, who, cost)
 *
 * ID       the constant ISR_EV_<ID>, the type in isr_ev_hdr.type
 * name     what readers display, and the key of the report's event_counts
 * value    the type number. Part of the file format: never renumber or reuse
 * struct   the record (struct <struct>). Its size is the least a reader
 *          accepts: a later minor version may append fields, and a record
 *          with a variable part says in its struct's comment what follows
 * drops    the drop source (ISR_SRC_*) that counts the records of this type
 *          lost before they reached the recorder; what the recorder itself
 *          fails to write, of every type, is ISR_SRC_WRITER
 * flags    what the record is (ISR_EVF_*, below)
 * interval when it happened (ISR_IV_*, below): an instant, a stretch from
 *          or to hdr.ts_ns, or a stretch on the GPU's clock
 * who      which task it is about, and which other task it names (ISR_WHO_*)
 * cost     what the tracer did on a target thread to make it, for the
 *          overhead budget's account (ISR_COST_*, below)
 *
 * Generated from it: the ISR_EV_* constants (below); the reader's size
 * checks and names, the analysis dispatch and the views every consumer
 * reads an event through: its flags, its interval, its task and the other
 * task it names, the GPU work it stands for, what it cost
 * (format/registry.h); the size
 * switch of the records the CUPTI bridge hands over (bpf/cupti.bpf.c: the
 * types whose drops ISR_SRC_GPU counts) and the event-type table of
 * docs/record-format.md (tests/unit/format_tables.c). A type added without
 * its flags, interval, who and cost does not compile.
 */

/* flags */
#define ISR_EVF_DEFINES		0x1 /* a definition later records refer to (a name, an interned stack or code
				     * object, a communicator, a rank, whether stacks are captured): a window
				     * cut from a longer recording (the flight recorder's) keeps every one */
#define ISR_EVF_ONCPU		0x2 /* tells that its thread was running at the event's start (it emitted it on
				     * a CPU); what a thread did before its first such event, or its first
				     * switch, is attributed from it (analysis/read/tasks.h). The annotations (NVTX,
				     * NCCL calls) are not flagged: a thread seen only through them is unknown */
#define ISR_EVF_ANY_TASK	0x4 /* hdr.pid may be a process that is not traced (a switch's prev) */

/*
 * interval, on the CPU clock unless said (format/registry.h, isr_ev_interval):
 *   ISR_IV_INSTANT			hdr.ts_ns
 *   ISR_IV_SINCE(d)			[ts, ts + d)
 *   ISR_IV_SINCE_IF(d, f, bit)		[ts, ts + d) when bit is set in f, else an instant
 *   ISR_IV_SINCE_IS(d, f, v)		[ts, ts + d) when f == v, else an instant
 *   ISR_IV_UNTIL_IF(d, f, bit)		[ts - d, ts) when bit is set in f (and d <= ts), else an instant
 *   ISR_IV_UNTIL_AT(t)			[ts, t) when t, a time on the CPU clock, is later, else an instant
 *   ISR_IV_GPU(s, e)			[s, e) on the GPU clock of the process's CUPTI bridge
 *   ISR_IV_GPU_WORK(s, e)		the same, for work that occupies a device: its struct has
 *					device_id, context_id, stream_id and correlation_id
 * Each expands to (kind, a, b, mask, want): a is the 64-bit field, b the one
 * tested (f), the stretch holds when (b & mask) == want.
 */
#define ISR_IV_INSTANT			(INSTANT, hdr.ts_ns, hdr.type, 0, 0)
#define ISR_IV_SINCE(d)			(SINCE, d, hdr.type, 0, 0)
#define ISR_IV_SINCE_IF(d, f, bit)	(SINCE, d, f, bit, bit)
#define ISR_IV_SINCE_IS(d, f, v)	(SINCE, d, f, 0xffffffffU, v)
#define ISR_IV_UNTIL_IF(d, f, bit)	(UNTIL, d, f, bit, bit)
#define ISR_IV_UNTIL_AT(t)		(UNTIL_AT, t, hdr.type, 0, 0)
#define ISR_IV_GPU(s, e)		(GPU, s, e, 0, 0)
#define ISR_IV_GPU_WORK(s, e)		(GPU_WORK, s, e, 0, 0)

/*
 * who (format/registry.h, isr_ev_task and isr_ev_peer):
 *   ISR_WHO_NONE			about no task (hdr.pid is 0)
 *   ISR_WHO_PROCESS			process hdr.pid as a whole (hdr.tid is whichever thread handed it over)
 *   ISR_WHO_THREAD			thread hdr.tid of process hdr.pid
 *   ISR_WHO_PEER(pid, tid)		thread hdr.tid of hdr.pid, and it names another task: (pid, tid)
 *   ISR_WHO_PEER_UNLESS(pid, tid, f, bit)	the same, naming none when bit is set in f
 *   ISR_WHO_OF(pid, tid)		the task (pid, tid) of those fields
 * Each expands to (kind, p, t, f, bit): f a 32-bit field, tested when bit is not 0.
 */
#define ISR_WHO_NONE			(NONE, hdr.pid, hdr.tid, hdr.pid, 0)
#define ISR_WHO_PROCESS			(PROCESS, hdr.pid, hdr.tid, hdr.pid, 0)
#define ISR_WHO_THREAD			(THREAD, hdr.pid, hdr.tid, hdr.pid, 0)
#define ISR_WHO_PEER(p, t)		(PEER, p, t, hdr.pid, 0)
#define ISR_WHO_PEER_UNLESS(p, t, f, bit)	(PEER, p, t, f, bit)
#define ISR_WHO_OF(p, t)		(OF, p, t, hdr.pid, 0)

/*
 * cost (format/registry.h, isr_ev_cost): what making the record cost the
 * task it is about, in probe hits (or scheduler events, CUPTI records),
 * and the account that pays it (ISR_SPENT_*, below). The overhead budget
 * charges each hit at what it measured for the account at the start
 * (user/record/budget_ctl.h):
 *   ISR_COST_NONE			nothing the budget counts
 *   ISR_COST_HITS(acct, n)		n hits
 *   ISR_COST_PAIR(acct)		an entry and a return hit (a pair is measured as one)
 *   ISR_COST_PAIR_IF(acct, f, bit)	a pair when bit is set in f, else one hit
 *   ISR_COST_PAIR_IS(acct, f, v)	a pair when f == v, else one hit
 *   ISR_COST_CUDA(func, f, bit)	ISR_COST_PAIR_IF, paid by ISR_SPENT_HOT when the CUDA function
 *					func is on the hot path (ISR_CUDA_K_HOT), else by ISR_SPENT_PROBES
 *   ISR_COST_TOOK(acct, ns)		one, at what the record says it took (ns)
 *   ISR_COST_TOOK_BY(acct, ns, tid)	the same, charged to thread tid of hdr.pid; nothing when ns or
 *					tid is 0
 * Each expands to (kind, account, hits, a, b, mask, want): a the field of a
 * time or a CUDA function, b the one tested (f) or a tid; a pair when
 * (b & mask) == want.
 */
#define ISR_COST_NONE			(NONE, 0, 0, hdr.type, hdr.type, 0, 0)
#define ISR_COST_HITS(acct, n)		(HITS, acct, n, hdr.type, hdr.type, 0, 0)
#define ISR_COST_PAIR(acct)		(PAIR, acct, 2, hdr.type, hdr.type, 0, 0)
#define ISR_COST_PAIR_IF(acct, f, bit)	(PAIR, acct, 2, hdr.type, f, bit, bit)
#define ISR_COST_PAIR_IS(acct, f, v)	(PAIR, acct, 2, hdr.type, f, 0xffffffffU, v)
#define ISR_COST_CUDA(func, f, bit)	(CUDA, ISR_SPENT_PROBES, 2, func, f, bit, bit)
#define ISR_COST_TOOK(acct, ns)		(TOOK, acct, 1, ns, hdr.type, 0, 0)
#define ISR_COST_TOOK_BY(acct, ns, tid)	(TOOK_BY, acct, 1, ns, tid, 0, 0)

/* A GIL wait (isr_ev_gil_wait) costs this many scheduler events: the
 * sched_switch program's GIL path measured 1.2 us against 0.15-0.3 us for
 * a plain switch. */
#define ISR_GIL_WAIT_EVENTS	4

#define ISR_EVENT_TYPES(X)															\
	X(SCHED_SWITCH,		sched_switch,		1,  isr_ev_sched_switch,	ISR_SRC_SCHED,									\
	  ISR_EVF_ANY_TASK,			ISR_IV_INSTANT,						ISR_WHO_PEER(next_pid, next_tid),				\
	  ISR_COST_HITS(ISR_SPENT_SCHED, 1))																\
	X(SCHED_WAKEUP,		sched_wakeup,		2,  isr_ev_sched_wakeup,	ISR_SRC_SCHED,									\
	  0,					ISR_IV_INSTANT,				ISR_WHO_PEER_UNLESS(waker_pid, waker_tid, flags, ISR_WAKE_INTERRUPT),		\
	  ISR_COST_HITS(ISR_SPENT_SCHED, 1))																\
	X(SCHED_WAKEUP_NEW,	sched_wakeup_new,	3,  isr_ev_sched_wakeup,	ISR_SRC_SCHED,									\
	  0,					ISR_IV_INSTANT,				ISR_WHO_PEER_UNLESS(waker_pid, waker_tid, flags, ISR_WAKE_INTERRUPT),		\
	  ISR_COST_HITS(ISR_SPENT_SCHED, 1))																\
	X(PROC_FORK,		sched_process_fork,	4,  isr_ev_proc_fork,		ISR_SRC_PROC,									\
	  ISR_EVF_ONCPU,			ISR_IV_INSTANT,						ISR_WHO_PEER(child_pid, child_tid),				\
	  ISR_COST_NONE)																		\
	X(PROC_EXEC,		sched_process_exec,	5,  isr_ev_proc_exec,		ISR_SRC_PROC,									\
	  ISR_EVF_ONCPU,			ISR_IV_INSTANT,						ISR_WHO_PEER(hdr.pid, old_tid),					\
	  ISR_COST_NONE)																		\
	X(PROC_EXIT,		sched_process_exit,	6,  isr_ev_proc_exit,		ISR_SRC_PROC,									\
	  ISR_EVF_ONCPU,			ISR_IV_INSTANT,						ISR_WHO_THREAD,							\
	  ISR_COST_NONE)																		\
	X(TASK_RENAME,		task_rename,		7,  isr_ev_task_rename,		ISR_SRC_PROC,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_THREAD,							\
	  ISR_COST_NONE)																		\
	X(PAGE_FAULT,		page_fault_user,	8,  isr_ev_page_fault,		ISR_SRC_FAULTS,									\
	  ISR_EVF_ONCPU,			ISR_IV_UNTIL_IF(duration_ns, flags, ISR_FAULT_HAS_START),	ISR_WHO_THREAD,						\
	  ISR_COST_HITS(ISR_SPENT_FAULTS, 1))																\
	X(CUDA_CALL,		cuda_call,		9,  isr_ev_cuda_call,		ISR_SRC_CUDA,									\
	  ISR_EVF_ONCPU,			ISR_IV_SINCE_IF(duration_ns, flags, ISR_CUDA_RETURNED),	ISR_WHO_THREAD,							\
	  ISR_COST_CUDA(func, flags, ISR_CUDA_RETURNED))														\
	X(CUDA_NAME,		cuda_name,		10, isr_ev_cuda_name,		ISR_SRC_CUDA,									\
	  ISR_EVF_DEFINES | ISR_EVF_ONCPU,	ISR_IV_INSTANT,						ISR_WHO_THREAD,							\
	  ISR_COST_PAIR(ISR_SPENT_PROBES))																\
	X(GIL,			gil,			11, isr_ev_gil,			ISR_SRC_PYTHON,									\
	  ISR_EVF_ONCPU,			ISR_IV_SINCE_IS(wait_ns, kind, ISR_GIL_ACQUIRE),		ISR_WHO_THREAD,						\
	  ISR_COST_PAIR_IS(ISR_SPENT_PROBES, kind, ISR_GIL_ACQUIRE))													\
	X(SAMPLING,		sampling,		12, isr_ev_sampling,		ISR_SRC_WRITER,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_NONE,							\
	  ISR_COST_NONE)																		\
	X(GPU_KERNEL,		gpu_kernel,		13, isr_ev_gpu_kernel,		ISR_SRC_GPU,									\
	  0,					ISR_IV_GPU_WORK(start_ns, end_ns),			ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GPU_MEMCPY,		gpu_memcpy,		14, isr_ev_gpu_memcpy,		ISR_SRC_GPU,									\
	  0,					ISR_IV_GPU_WORK(start_ns, end_ns),			ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GPU_MEMSET,		gpu_memset,		15, isr_ev_gpu_memset,		ISR_SRC_GPU,									\
	  0,					ISR_IV_GPU_WORK(start_ns, end_ns),			ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GPU_SYNC,		gpu_sync,		16, isr_ev_gpu_sync,		ISR_SRC_GPU,									\
	  0,					ISR_IV_GPU(start_ns, end_ns),				ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GPU_API,		gpu_api,		17, isr_ev_gpu_api,		ISR_SRC_GPU,									\
	  0,					ISR_IV_GPU(start_ns, end_ns),				ISR_WHO_OF(hdr.pid, thread_id),					\
	  ISR_COST_HITS(ISR_SPENT_CUPTI, 1))																\
	X(GPU_CLOCK,		gpu_clock,		18, isr_ev_gpu_clock,		ISR_SRC_GPU,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GPU_STATUS,		gpu_status,		19, isr_ev_gpu_status,		ISR_SRC_GPU,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GPU_NAME,		gpu_name,		20, isr_ev_gpu_name,		ISR_SRC_GPU,									\
	  ISR_EVF_DEFINES,			ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(PY_SAMPLE,		py_sample,		23, isr_ev_py_sample,		ISR_SRC_PY_STACKS,								\
	  ISR_EVF_ONCPU,			ISR_IV_INSTANT,						ISR_WHO_THREAD,							\
	  ISR_COST_NONE)																		\
	X(PY_STACK,		py_stack,		24, isr_ev_py_stack,		ISR_SRC_PY_STACKS,								\
	  ISR_EVF_DEFINES,			ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(PY_CODE,		py_code,		25, isr_ev_py_code,		ISR_SRC_PY_CODE,								\
	  ISR_EVF_DEFINES,			ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(PY_STATUS,		py_status,		26, isr_ev_py_status,		ISR_SRC_WRITER,									\
	  ISR_EVF_DEFINES,			ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(GIL_WAIT,		gil_wait,		28, isr_ev_gil_wait,		ISR_SRC_PYTHON,									\
	  ISR_EVF_ONCPU,			ISR_IV_SINCE(duration_ns),				ISR_WHO_THREAD,							\
	  ISR_COST_HITS(ISR_SPENT_SCHED, ISR_GIL_WAIT_EVENTS))														\
	X(TASK_INFO,		task_info,		29, isr_ev_task_info,		ISR_SRC_SCHED,									\
	  ISR_EVF_DEFINES,			ISR_IV_INSTANT,						ISR_WHO_OF(task_pid, task_tid),					\
	  ISR_COST_NONE)																		\
	X(RECLAIM,		reclaim,		30, isr_ev_reclaim,		ISR_SRC_RECLAIM,								\
	  ISR_EVF_ONCPU,			ISR_IV_SINCE(duration_ns),				ISR_WHO_THREAD,							\
	  ISR_COST_NONE)																		\
	X(GPU_WINDOW,		gpu_window,		31, isr_ev_gpu_window,		ISR_SRC_GPU,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_TOOK_BY(ISR_SPENT_CUPTI, finalize_ns, finalize_tid))													\
	X(MEM_SAMPLE,		mem_sample,		32, isr_ev_mem_sample,		ISR_SRC_WRITER,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(NCCL_COMM,		nccl_comm,		33, isr_ev_nccl_comm,		ISR_SRC_NCCL,									\
	  ISR_EVF_DEFINES,			ISR_IV_SINCE(duration_ns),				ISR_WHO_THREAD,							\
	  ISR_COST_PAIR(ISR_SPENT_PROBES))																\
	X(NCCL_CALL,		nccl_call,		34, isr_ev_nccl_call,		ISR_SRC_NCCL,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_THREAD,							\
	  ISR_COST_HITS(ISR_SPENT_PROBES, 1))																\
	X(RANK_ENV,		rank_env,		35, isr_ev_rank_env,		ISR_SRC_WRITER,									\
	  ISR_EVF_DEFINES,			ISR_IV_INSTANT,						ISR_WHO_PROCESS,						\
	  ISR_COST_NONE)																		\
	X(NVTX,			nvtx,			36, isr_ev_nvtx,		ISR_SRC_NVTX,									\
	  0,					ISR_IV_INSTANT,						ISR_WHO_THREAD,							\
	  ISR_COST_PAIR_IS(ISR_SPENT_PROBES, kind, ISR_NVTX_START))													\
	X(PROC_HOLD,		proc_hold,		37, isr_ev_proc_hold,		ISR_SRC_PROC,									\
	  0,					ISR_IV_UNTIL_AT(release_ns),				ISR_WHO_THREAD,							\
	  ISR_COST_NONE)

/*
 * The records from BPF to the recorder only, never in a recording (the
 * recorder turns them into registered ones), one line each:
 *
 *   X(ID, value, struct, least, cost)
 *
 * value is taken from the registry's numbers (never registered); least the
 * least hdr.size the recorder reads (a variable part follows); cost as
 * above, of its thread (hdr.pid, hdr.tid). PY_FRAMES: the frames the
 * Python stack walker saw, which become PY_STACK, PY_CODE and PY_SAMPLE
 * records.
 */
#define ISR_RECORDER_TYPES(X)											\
	X(PY_FRAMES,	27,	isr_ev_py_frames,	__builtin_offsetof(struct isr_ev_py_frames, frames),		\
	  ISR_COST_TOOK(ISR_SPENT_STACKS, capture_ns))

#define ISR_EV_ENUM_ROW(ID, name, value, st, drops, ...) ISR_EV_##ID = value,
#define ISR_EV_RECORDER_ENUM_ROW(ID, value, ...) ISR_EV_##ID = value,
enum {
	ISR_EVENT_TYPES(ISR_EV_ENUM_ROW)
	ISR_RECORDER_TYPES(ISR_EV_RECORDER_ENUM_ROW)
	ISR_EV_TYPE_MAX = 38,	/* one past the highest type */
};
#undef ISR_EV_ENUM_ROW
#undef ISR_EV_RECORDER_ENUM_ROW

/*
 * Drop sources: one counter each, kept per CPU in the BPF map "drops" (BPF
 * sources) or by the recorder (user-space sources), written to the record
 * and reported. One line each:
 *
 *   X(ID, name, value, meaning)
 *
 * ID the constant ISR_SRC_<ID>; name what readers display; value part of
 * the file format (sources added later come after the last); meaning what
 * the counter counts (docs/record-format.md). The BPF map has a slot for
 * every source; the recorder's own (WRITER, PY_CODE) stay 0 there.
 */
#define ISR_DROP_SOURCES(X)										\
	X(SCHED,	sched,		0,  "sched_switch / sched_wakeup / task_info ring-buffer reservations")	\
	X(FAULTS,	faults,		1,  "page-fault ring-buffer reservations")				\
	X(PROC,		proc,		2,  "fork/exec/exit/rename on the critical ring buffer")		\
	X(FAULT_START,	fault_start,	3,  "fault entries with no room left to remember their start")	\
	X(TARGETS,	targets,	4,  "children that could not be added to the targets map")		\
	X(CUDA,		cuda,		5,  "CUDA call events the bulk ring buffer had no room for")		\
	X(CUDA_INFLIGHT, cuda_inflight,	6,  "CUDA calls whose entry could not be remembered for their return") \
	X(WRITER,	writer,		7,  "events the recorder could not write (disk full, I/O error)")	\
	X(PYTHON,	python,		8,  "GIL events (--gil, and the GIL waits seen by the scheduler) the bulk ring buffer had no room for, or GIL waits whose start could not be remembered") \
	X(GPU,		gpu,		9,  "GPU activity records (CUPTI bridge) the bulk ring buffer had no room for, or beyond the per-batch bound") \
	X(CUPTI,	cupti,		10, "GPU activity records CUPTI dropped (cuptiActivityGetNumDroppedRecords)") \
	X(PY_STACKS,	py_stacks,	11, "Python stacks (samples, CUDA call sites) the bulk ring buffer had no room for") \
	X(PY_CODE,	py_code,	12, "Python code objects the recorder could not read from the target (gone, or not code), and stacks of a process image replaced by exec before they were read") \
	X(RECLAIM,	reclaim,	13, "direct-reclaim events the bulk ring buffer had no room for, or reclaims whose start could not be remembered") \
	X(NCCL,		nccl,		14, "NCCL call and communicator events the bulk ring buffer had no room for, communicator set-ups whose entry could not be remembered for their return, and communicators beyond the sequence map's bound (their calls carry sequence 0)") \
	X(NVTX,		nvtx,		15, "NVTX ranges and marks the bulk ring buffer had no room for, or range starts that could not be remembered for their return")

#define ISR_SRC_ENUM_ROW(ID, name, value, meaning) ISR_SRC_##ID = value,
enum {
	ISR_DROP_SOURCES(ISR_SRC_ENUM_ROW)
	ISR_SRC_MAX,	/* one past the last source (sources are only appended) */
};
#undef ISR_SRC_ENUM_ROW

/* Common header of every event. pid/tid name the task the event is about. */
struct isr_ev_hdr {
	__u16 type;	/* ISR_EV_* */
	__u16 size;	/* whole record in bytes, a multiple of 8 */
	__u32 cpu;	/* CPU the event was observed on */
	__u64 ts_ns;	/* CLOCK_MONOTONIC */
	__u32 pid;	/* process (tgid) */
	__u32 tid;	/* thread */
};
ISR_LAYOUT(isr_ev_hdr, 24, type, 0, size, 2, cpu, 4, ts_ns, 8, pid, 16, tid, 20);

/* Flags of isr_ev_sched_switch.flags */
#define ISR_SWITCH_PREEMPT	0x1 /* involuntary: the kernel preempted prev */
#define ISR_SWITCH_RUNNABLE	0x2 /* prev stays runnable (preempted or yielded) */

/*
 * A context switch on a CPU where prev or next (or both) belongs to a target.
 * hdr.pid/tid: prev. The task state is the kernel's raw value
 * (TASK_INTERRUPTIBLE 0x1, TASK_UNINTERRUPTIBLE 0x2, ...).
 */
struct isr_ev_sched_switch {
	struct isr_ev_hdr hdr;
	__u32 next_pid;
	__u32 next_tid;
	__u32 prev_state;
	__u32 flags;		/* ISR_SWITCH_* */
};
ISR_LAYOUT(isr_ev_sched_switch, 40, next_pid, 24, next_tid, 28, prev_state, 32, flags, 36);

/*
 * A target thread made runnable (ISR_EV_SCHED_WAKEUP) or a new target thread
 * made runnable for the first time (ISR_EV_SCHED_WAKEUP_NEW).
 * hdr.pid/tid: the woken task; waker_*: the task that woke it, or, with
 * ISR_WAKE_INTERRUPT in flags, the task an interrupt interrupted to wake
 * it (a timer, a device, a packet: no task woke it).
 */
struct isr_ev_sched_wakeup {
	struct isr_ev_hdr hdr;
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 target_cpu;	/* CPU the woken task was queued on */
	__u32 flags;		/* ISR_WAKE_*; 0 in recordings before they were kept */
};
#define ISR_WAKE_INTERRUPT	(1u << 0)	/* woken by an interrupt (a timer, a device), on its stack */
ISR_LAYOUT(isr_ev_sched_wakeup, 40, waker_pid, 24, waker_tid, 28, target_cpu, 32, flags, 36);

/* The task that woke w's thread: 0 when an interrupt did (its waker_* is
 * only the task it interrupted) or none is known. */
static inline __u32 isr_wakeup_waker_tid(const struct isr_ev_sched_wakeup *w)
{
	return (w->flags & ISR_WAKE_INTERRUPT) ? 0 : w->waker_tid;
}

#define ISR_COMM_LEN 16

/*
 * A task that is not a target, named the first time it is seen taking the
 * CPU of a target thread (the next task of a sched_switch whose prev is a
 * target) or waking one (the waker of a sched_wakeup): the scheduler events
 * carry only its pid and tid. hdr.pid/tid: that target thread; hdr.ts_ns:
 * when. Emitted once per task (by tid, remembered in an LRU of 16,384
 * tasks): a task renamed later keeps its first name.
 */
struct isr_ev_task_info {
	struct isr_ev_hdr hdr;
	__u32 task_pid;		/* the task named: its process (tgid) */
	__u32 task_tid;		/* and thread */
	char comm[ISR_COMM_LEN];	/* its thread name, NUL-terminated */
	char process_comm[ISR_COMM_LEN]; /* its process's name: the thread-group leader's */
};
ISR_LAYOUT(isr_ev_task_info, 64, task_pid, 24, task_tid, 28, comm, 32, process_comm, 48);

/* Flags of isr_ev_proc_fork.flags */
#define ISR_FORK_THREAD		0x1 /* child shares the parent's process (a new thread) */
#define ISR_FORK_FOLLOWED	0x2 /* child process was added to the targets */

/* hdr.pid/tid: the parent thread. */
struct isr_ev_proc_fork {
	struct isr_ev_hdr hdr;
	__u32 child_pid;
	__u32 child_tid;
	__u32 flags;		/* ISR_FORK_* */
	__u32 pad;
	char child_comm[ISR_COMM_LEN];
};
ISR_LAYOUT(isr_ev_proc_fork, 56, child_pid, 24, child_tid, 28, flags, 32, pad, 36, child_comm, 40);

#define ISR_FILENAME_LEN 128

/* hdr.pid/tid: the task after exec (the thread-group leader). */
struct isr_ev_proc_exec {
	struct isr_ev_hdr hdr;
	__u32 old_tid;		/* tid of the thread that called exec */
	__u32 pad;
	char comm[ISR_COMM_LEN];
	char filename[ISR_FILENAME_LEN]; /* as passed to exec, truncated */
};
ISR_LAYOUT(isr_ev_proc_exec, 176, old_tid, 24, pad, 28, comm, 32, filename, 48);

/* Flags of isr_ev_proc_exit.flags */
#define ISR_EXIT_GROUP_DEAD	0x1 /* last thread of the process */

/* hdr.pid/tid: the exiting thread. */
struct isr_ev_proc_exit {
	struct isr_ev_hdr hdr;
	__u32 exit_code;	/* task->exit_code: status << 8 | signal */
	__u32 flags;		/* ISR_EXIT_* */
	char comm[ISR_COMM_LEN];
};
ISR_LAYOUT(isr_ev_proc_exit, 48, exit_code, 24, flags, 28, comm, 32);

/* hdr.pid/tid: the renamed thread (prctl(PR_SET_NAME), pthread_setname_np). */
struct isr_ev_task_rename {
	struct isr_ev_hdr hdr;
	char comm[ISR_COMM_LEN];
};
ISR_LAYOUT(isr_ev_task_rename, 40, comm, 24);

/* Reasons of isr_ev_proc_hold.reason */
#define ISR_HOLD_FORK	1 /* a new child of a process that has probes of its own, before it first runs */
#define ISR_HOLD_LIB	2 /* its dynamic loader mapped a library a probe family probes (name), not yet run */
#define ISR_HOLD_EXEC	3 /* its exec: the new image before its first instruction */

/*
 * A target the tracer stopped (SIGSTOP, from BPF) until its probes were
 * armed, so that no call is lost when a process starts or loads a library
 * (bpf/hold.bpf.h): at its exec, when its dynamic loader mapped libcuda,
 * libnccl, libpython, ..., or a child forked by a probed process (its
 * inherited mappings carry none of its parent's per-process probes). BPF
 * sends it to the recorder with release_ns 0; the recorder probes the
 * process, lets it go on (SIGCONT) and writes it with release_ns set.
 * hdr.pid/tid: the held process and its thread that was stopping (FORK:
 * the child). hdr.ts_ns: when it was stopped.
 */
struct isr_ev_proc_hold {
	struct isr_ev_hdr hdr;
	__u64 release_ns;	/* when the recorder let it go on (CLOCK_MONOTONIC) */
	__u32 reason;		/* ISR_HOLD_* */
	__u32 parent_pid;	/* its parent process (FORK: the one that forked it) */
	char name[ISR_COMM_LEN * 3];	/* LIB: the library's file name */
};
ISR_LAYOUT(isr_ev_proc_hold, 88, release_ns, 24, reason, 32, parent_pid, 36, name, 40);

/* Flags of isr_ev_page_fault.flags */
#define ISR_FAULT_MAJOR		0x1 /* needed I/O (the kernel's major-fault accounting) */
#define ISR_FAULT_HAS_START	0x2 /* entry was seen: duration_ns is valid */
#define ISR_FAULT_WRITE		0x4 /* write access (from the x86 error code) */
#define ISR_FAULT_INSTR		0x8 /* instruction fetch (from the x86 error code) */

/*
 * A page fault of a target thread on user memory that the kernel resolved.
 * Emitted when the fault completes; hdr.ts_ns is the completion time and the
 * fault began duration_ns earlier. Faults raised in kernel mode on user
 * memory (copy_to_user into a fresh buffer) are included, without duration.
 */
struct isr_ev_page_fault {
	struct isr_ev_hdr hdr;
	__u64 address;		/* faulting data address */
	__u64 ip;		/* user instruction pointer at the fault */
	__u64 duration_ns;	/* entry to completion, including retries */
	__u32 flags;		/* ISR_FAULT_* */
	__u32 pad;
};
ISR_LAYOUT(isr_ev_page_fault, 56, address, 24, ip, 32, duration_ns, 40, flags, 48, pad, 52);

/* isr_ev_reclaim.kind */
#define ISR_RECLAIM_DIRECT	1 /* the page allocator found too little free memory (mm_vmscan_direct_reclaim_*) */
#define ISR_RECLAIM_MEMCG	2 /* the thread's memory cgroup is at its limit or over memory.high (mm_vmscan_memcg_reclaim_*) */

/*
 * A target thread reclaimed memory itself before it could go on (direct
 * reclaim: the allocator's slow path, or its memory cgroup's limit).
 * hdr.ts_ns is when it began, duration_ns how long it took; emitted when
 * it ended.
 */
struct isr_ev_reclaim {
	struct isr_ev_hdr hdr;
	__u64 duration_ns;
	__u64 nr_reclaimed;	/* pages it freed (the tracepoint's nr_reclaimed) */
	__u32 kind;		/* ISR_RECLAIM_* */
	__u32 pad;
};
ISR_LAYOUT(isr_ev_reclaim, 48, duration_ns, 24, nr_reclaimed, 32, kind, 40, pad, 44);

/* Flags of isr_ev_mem_sample.flags */
#define ISR_MEM_CGROUP		0x1 /* the cgroup fields are its memory cgroup's (cgroup v2) */
#define ISR_MEM_PSI		0x2 /* psi_*: its cgroup's memory.pressure, else /proc/pressure/memory */
#define ISR_MEM_PSI_HOST	0x4 /* psi_* are the host's (/proc/pressure/memory) */
#define ISR_MEM_NUMA		0x8 /* numa_bytes: this sample read numa_maps */

#define ISR_MEM_NODES		8	/* NUMA nodes numa_bytes counts; pages on higher nodes go uncounted */
#define ISR_MEM_UNLIMITED	(~0ULL)	/* cg_high_bytes / cg_max_bytes: "max" */

/*
 * A target process's memory, sampled by the recorder about once a second
 * from /proc and the cgroup filesystem (never per event). hdr.pid is the
 * process, hdr.tid 0, hdr.ts_ns when it was read. Byte counts are what the
 * kernel said at that moment; psi_* are cumulative stall totals (compare
 * two samples); numa_bytes, the process's resident bytes per NUMA node
 * from /proc/PID/numa_maps, read only every tenth sample (it walks the
 * page tables) and flagged ISR_MEM_NUMA.
 */
struct isr_ev_mem_sample {
	struct isr_ev_hdr hdr;
	__u64 rss_anon_bytes;	/* RssAnon of /proc/PID/status */
	__u64 rss_file_bytes;	/* RssFile */
	__u64 rss_shmem_bytes;	/* RssShmem */
	__u64 swap_bytes;	/* VmSwap */
	__u64 psi_some_us;	/* memory pressure: some task stalled, total microseconds */
	__u64 psi_full_us;	/* every non-idle task stalled */
	__u64 cg_current_bytes;	/* its cgroup's memory.current */
	__u64 cg_high_bytes;	/* memory.high, ISR_MEM_UNLIMITED for "max" */
	__u64 cg_max_bytes;	/* memory.max, ISR_MEM_UNLIMITED for "max" */
	__u32 flags;		/* ISR_MEM_* */
	__u32 nnodes;		/* NUMA nodes seen in numa_maps (up to ISR_MEM_NODES) */
	__u64 numa_bytes[ISR_MEM_NODES];
};
ISR_LAYOUT(isr_ev_mem_sample, 168, rss_anon_bytes, 24, rss_file_bytes, 32, rss_shmem_bytes, 40, swap_bytes, 48,
	psi_some_us, 56, psi_full_us, 64, cg_current_bytes, 72, cg_high_bytes, 80, cg_max_bytes, 88, flags, 96,
	nnodes, 100, numa_bytes, 104);

/* Flags of isr_ev_cuda_call.flags (the function's flags of
 * format/cuda_funcs.h, ISR_CUDA_ASYNC, ISR_CUDA_PTDS, ISR_CUDA_RUNTIME and
 * ISR_CUDA_POLL, are copied in as well) */
#define ISR_CUDA_RETURNED	0x1 /* the return was probed: status and duration_ns are valid */

/*
 * One call of a probed CUDA driver/runtime function (format/cuda_funcs.h).
 * hdr.ts_ns is the call's entry. Entry-only families are emitted at entry;
 * families with a return probe are emitted at return, with the entry's
 * time and arguments. args[] by family (docs/events.md has the full table):
 *   LAUNCH, LAUNCH_EX  f, grid x | y << 32, grid z | block x << 32,
 *                      block y | block z << 32, shared bytes, stream
 *   GRAPH              graph exec, -, -, -, -, stream
 *   COPY*, SET         dst, src (SET: value), bytes, direction (ISR_COPY_*), -, stream
 *   SYNC               handle, second handle (cuStreamWaitEvent: event)
 *   ALLOC              address (read at return), bytes, flags, kind (ISR_ALLOC_*), -, stream
 *   FREE               address, -, -, kind, -, stream
 *   VMM_CREATE         handle (read at return), size
 *   VMM_RELEASE        handle
 *   VMM_MAP            address, size, offset, handle
 *   VMM_UNMAP          address, size
 *   REGISTER           address, bytes, flags
 *   UNREGISTER         address
 */
struct isr_ev_cuda_call {
	struct isr_ev_hdr hdr;
	__u16 func;		/* ISR_CUDA_FN_* */
	__u16 flags;		/* ISR_CUDA_* */
	__s32 status;		/* CUresult, when RETURNED */
	__u64 duration_ns;	/* entry to return, when RETURNED */
	__u64 args[6];
};
ISR_LAYOUT(isr_ev_cuda_call, 88, func, 24, flags, 26, status, 28, duration_ns, 32, args, 40);

#define ISR_KERNEL_NAME_LEN 256

/*
 * A kernel handle learned where it was created (cuModuleGetFunction,
 * cuLibraryGetKernel: name is the mangled symbol) or an alias of one
 * (cuKernelGetFunction: owner is the kernel, name empty). Emitted at the
 * return of the call, only when it succeeded.
 */
struct isr_ev_cuda_name {
	struct isr_ev_hdr hdr;
	__u64 handle;		/* the CUfunction / CUkernel returned */
	__u64 owner;		/* CUmodule / CUlibrary, or the CUkernel for an alias */
	__u16 func;		/* ISR_CUDA_FN_* of the call */
	__u16 pad0;
	__u32 pad1;
	char name[ISR_KERNEL_NAME_LEN]; /* mangled, NUL-terminated, may be truncated */
};
ISR_LAYOUT(isr_ev_cuda_name, 304, handle, 24, owner, 32, func, 40, pad0, 42, pad1, 44, name, 48);

/* isr_ev_gil.kind */
#define ISR_GIL_ACQUIRE		1 /* PyEval_RestoreThread returned: the thread took the GIL */
#define ISR_GIL_RELEASE		2 /* PyEval_SaveThread was called: the thread releases the GIL */

/*
 * The GIL of a CPython 3.10-3.13 interpreter taken or released by a thread,
 * from uprobes on PyEval_RestoreThread (entry and return) and
 * PyEval_SaveThread (entry). ACQUIRE: hdr.ts_ns is RestoreThread's entry and
 * wait_ns the time until it returned (the wait to take the GIL). RELEASE:
 * hdr.ts_ns is SaveThread's entry, wait_ns 0. Hand-overs inside the eval
 * loop (the switch interval) call neither function and are not events.
 */
struct isr_ev_gil {
	struct isr_ev_hdr hdr;
	__u64 wait_ns;		/* ACQUIRE: entry to return of PyEval_RestoreThread */
	__u32 kind;		/* ISR_GIL_* */
	__u32 pad;
};
ISR_LAYOUT(isr_ev_gil, 40, wait_ns, 24, kind, 32, pad, 36);

/* Flags of isr_ev_gil_wait.flags */
#define ISR_GIL_WAIT_HOLDER	0x1 /* holder_tid is known */
#define ISR_GIL_WAIT_MUTEX	0x2 /* it blocked on the GIL's mutex, not on its condition variable */

/*
 * A thread of a CPython 3.10-3.13 target blocked waiting for the GIL, seen
 * by the scheduler (bpf/gil_wait.bpf.c, on by default): the thread left its
 * CPU inside futex() on a word of its interpreter's GIL (the condition
 * variable or the mutex of _gil_runtime_state) and came back. hdr.ts_ns:
 * when it left its CPU; duration_ns: until it was switched back in. The
 * holder is gil->last_holder read when it blocked: the thread that held the
 * GIL then. One take_gil that times out (the switch interval) and waits
 * again is several of these, a few microseconds of the waiter's own CPU
 * time apart.
 */
struct isr_ev_gil_wait {
	struct isr_ev_hdr hdr;
	__u64 duration_ns;
	__u32 holder_tid;	/* the GIL holder's kernel tid (flag HOLDER) */
	__u32 flags;		/* ISR_GIL_WAIT_* */
};
ISR_LAYOUT(isr_ev_gil_wait, 40, duration_ns, 24, holder_tid, 32, flags, 36);

/* isr_ev_sampling.kind */
#define ISR_SAMPLING_START	1 /* the budget's settings; the hot-path probes are on */
#define ISR_SAMPLING_ON		2 /* the hot-path probes were attached again */
#define ISR_SAMPLING_OFF	3 /* the hot-path probes were released */
#define ISR_SAMPLING_COSTS	4 /* the tracer and its costs here; struct isr_sampling_costs follows */
#define ISR_SAMPLING_SPENT	5 /* what tracing cost the targets, at the end; struct isr_sampling_spent follows */
#define ISR_SAMPLING_FAULTS_ON	6 /* page-fault tracing was switched on again (faults are traced from the start) */
#define ISR_SAMPLING_FAULTS_OFF	7 /* page-fault tracing was switched off */
#define ISR_SAMPLING_COPIES_ON	8 /* the async copies' probes were attached again (they are on from the start) */
#define ISR_SAMPLING_COPIES_OFF	9 /* the async copies' probes were released */

/*
 * The overhead budget (user/record/budget.h) at the start of the recording and at
 * each switch of the hot-path CUDA probes (the hot-path families:
 * launches, async copies, memsets). Written by the recorder; hdr.pid and
 * hdr.tid are 0 (about no task). hdr.ts_ns: the probes are surely live from this time
 * on (ON: the end of the attach) or until it (OFF: the start of the
 * release). Calls of those families are seen only while the probes are on;
 * the analysis extrapolates their counts over the off time. FAULTS_ON and
 * FAULTS_OFF do the same for page-fault tracing, which has a budget of its
 * own (its spent_ns and credit_ns are that budget's), and COPIES_ON and
 * COPIES_OFF for the async copies (ISR_CUDA_K_ASYNC_COPY) when the costs
 * say they are switched apart (ISR_COSTS_COPIES_APART): then ON and OFF
 * switch the other hot-path families only.
 */
struct isr_ev_sampling {
	struct isr_ev_hdr hdr;
	__u32 kind;		/* ISR_SAMPLING_* */
	__u32 budget_ppm;	/* budget, millionths of the busiest thread's time */
	__u64 hit_cost_ps;	/* measured cost of one probe hit, picoseconds */
	__u64 switch_ns;	/* how long the attach or release took */
	__u64 spent_ns;		/* estimated probe cost so far (busiest thread per interval) */
	__s64 credit_ns;	/* budget credit left; negative: overspent */
};
ISR_LAYOUT(isr_ev_sampling, 64, kind, 24, budget_ppm, 28, hit_cost_ps, 32, switch_ns, 40, spent_ns, 48,
	credit_ns, 56);

/*
 * After an isr_ev_sampling of kind COSTS (hdr.size = 64 + sizeof): who the
 * tracer is and what each thing it does to a target thread costs that
 * thread on this host, measured by the recorder at the start on threads of
 * its own (user/record/budget_cost.h); written with or without a budget. A cost
 * not measured (its probes not in use) is 0.
 */
struct isr_sampling_costs {
	__u32 tracer_pid;	/* the recorder's process: its threads are the tracer's */
	__u32 helper_pid;	/* the recorder's watcher of held processes, also the tracer's; 0: none */
	__u32 sampler_hz;	/* CPU-clock samples a second on every CPU (Python stacks); 0: none */
	__u32 flags;		/* ISR_COSTS_*; 0 before they were written */
	__u64 pair_ps;		/* an entry and a return probe hit (a "+ret" call) */
	__u64 fault_ps;		/* a page fault of a target thread, traced */
	__u64 sched_ps;		/* a scheduler event of a target thread (a switch or a wakeup) */
	__u64 tick_ps;		/* a tick of the CPU-clock sampler on a target thread */
};
ISR_LAYOUT(isr_sampling_costs, 48, flags, 12);
/* isr_sampling_costs.flags */
#define ISR_COSTS_COPIES_APART	0x1 /* the async copies have a switch and a budget of their own (COPIES_ON, _OFF) */
ISR_OFFSETS(isr_sampling_costs, sampler_hz, 8, pair_ps, 16, tick_ps, 40);

/*
 * What tracing cost the target threads, by what (ISR_SPENT_*: the
 * isr_sampling_spent arrays' index). HOT is what the budget switches;
 * the others come whatever it does and are charged to it all the same.
 */
#define ISR_SPENT_KINDS(X)											\
	X(HOT,		hot_probes,	0, "hot-path CUDA probe hits (launches, async copies, memsets): switched by the budget") \
	X(PROBES,	probes,		1, "the other probe hits (synchronizations, allocations, kernel names, GIL, NCCL, NVTX)") \
	X(STACKS,	py_stacks,	2, "Python stack captures (at CUDA calls and sampled)")			\
	X(SAMPLER,	sampler,	3, "CPU-clock sampler ticks on the thread (Python stacks)")		\
	X(FAULTS,	page_faults,	4, "page-fault tracing")							\
	X(SCHED,	scheduler,	5, "scheduler tracing: switches, wakeups, GIL waits")			\
	X(RECORDER,	recorder_cpu,	6, "the recorder's threads running while the thread waited for the CPU they held") \
	X(CUPTI,	cupti,		7, "CUPTI in GPU windows")

#define ISR_SPENT_ENUM_ROW(ID, name, value, meaning) ISR_SPENT_##ID = value,
enum {
	ISR_SPENT_KINDS(ISR_SPENT_ENUM_ROW)
	ISR_SPENT_MAX = 8,
};
#undef ISR_SPENT_ENUM_ROW

/*
 * After an isr_ev_sampling of kind SPENT (hdr.size = 64 + sizeof; 64 + 224
 * before faults_spent_ns and 64 + 232 before copies_spent_ns, which a
 * reader takes as 0), written
 * once at the end (its spent_ns is the busiest thread's total): what
 * tracing cost the target threads, estimated from what each event tells
 * happened and the costs measured at the start (ISR_SAMPLING_COSTS).
 */
struct isr_sampling_spent {
	__u32 busiest_pid;	/* the thread tracing cost most over the recording, for its time on a CPU */
	__u32 busiest_tid;
	__u64 traced_ns;	/* from the budget's start to the end */
	__u64 busiest_oncpu_ns;	/* its time on a CPU meanwhile */
	__u64 allowed_ns;	/* budget x traced_ns + its burst credit (budget x 1 s); 0: no budget */
	__u64 busiest_ns[ISR_SPENT_MAX];	/* the busiest thread's, by kind */
	__u64 busiest_ops[ISR_SPENT_MAX];	/* what was charged to it: hits, captures, ticks, faults, events */
	__u64 all_ns[ISR_SPENT_MAX];	/* all target threads together */
	__u64 faults_spent_ns;	/* page-fault tracing's own budget, charged alike (allowed_ns too); 0: not switched */
	__u64 copies_spent_ns;	/* the async copies' own budget, the same way; 0: not switched apart */
};
ISR_LAYOUT(isr_sampling_spent, 240, copies_spent_ns, 232, faults_spent_ns, 224, busiest_oncpu_ns, 16,
	busiest_ns, 32, busiest_ops, 96, all_ns, 160);
/*
 * GPU activity from the CUPTI bridge (cupti_bridge/, libinferscope_cupti.so).
 * The bridge converts CUPTI's activity records into the structs below and
 * hands a batch of them to BPF with one USDT probe hit (provider
 * "inferscope", probe "gpu_batch"; bpf/cupti.bpf.c copies each record into
 * the bulk ring buffer). The bridge fills type and size of the header; BPF
 * fills cpu, pid, tid (the thread that handed the batch over) and ts_ns
 * (CLOCK_MONOTONIC of the hand-off). GPU times (start_ns, end_ns, gpu_ns)
 * are in CUPTI's clock (cuptiGetTimestamp): the analysis maps them onto
 * CLOCK_MONOTONIC with the fit of the isr_ev_gpu_clock pairs
 * (docs/clock-calibration.md).
 */
#define ISR_GPU_BATCH_MAX_BYTES		65536	/* the largest batch the bridge hands over */
#define ISR_GPU_BATCH_MAX_RECORDS	4096	/* records BPF copies from one batch */
#define ISR_GPU_NAME_LEN		512

/* A kernel ran (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL). */
struct isr_ev_gpu_kernel {
	struct isr_ev_hdr hdr;
	__u64 start_ns;		/* GPU clock */
	__u64 end_ns;		/* GPU clock */
	__u32 correlation_id;	/* of the launch call's DRIVER / RUNTIME API record */
	__u32 name_id;		/* isr_ev_gpu_name.id in the same process; 0: no name */
	__u32 device_id;
	__u32 context_id;
	__u32 stream_id;
	__u16 registers;	/* per thread */
	__u16 pad;
	__s32 grid[3];
	__s32 block[3];
	__u32 static_shared;	/* bytes per block */
	__u32 dynamic_shared;	/* bytes per block */
};
ISR_LAYOUT(isr_ev_gpu_kernel, 96, start_ns, 24, end_ns, 32, correlation_id, 40, name_id, 44, device_id, 48,
	context_id, 52, stream_id, 56, registers, 60, pad, 62, grid, 64, block, 76, static_shared, 88,
	dynamic_shared, 92);

/* A copy ran (CUPTI_ACTIVITY_KIND_MEMCPY). Kinds are CUPTI's:
 * CUpti_ActivityMemcpyKind, CUpti_ActivityMemoryKind. */
struct isr_ev_gpu_memcpy {
	struct isr_ev_hdr hdr;
	__u64 start_ns;
	__u64 end_ns;
	__u64 bytes;
	__u32 correlation_id;
	__u32 device_id;
	__u32 context_id;
	__u32 stream_id;
	__u8 copy_kind;		/* CUPTI_ACTIVITY_MEMCPY_KIND_* (1 HtoD, 2 DtoH, 8 DtoD, ...) */
	__u8 src_kind;		/* CUPTI_ACTIVITY_MEMORY_KIND_* */
	__u8 dst_kind;
	__u8 flags;		/* CUPTI_ACTIVITY_FLAG_MEMCPY_* */
	__u32 pad;
};
ISR_LAYOUT(isr_ev_gpu_memcpy, 72, start_ns, 24, end_ns, 32, bytes, 40, correlation_id, 48, device_id, 52,
	context_id, 56, stream_id, 60, copy_kind, 64, src_kind, 65, dst_kind, 66, flags, 67, pad, 68);

/* A memset ran (CUPTI_ACTIVITY_KIND_MEMSET). */
struct isr_ev_gpu_memset {
	struct isr_ev_hdr hdr;
	__u64 start_ns;
	__u64 end_ns;
	__u64 bytes;
	__u32 correlation_id;
	__u32 device_id;
	__u32 context_id;
	__u32 stream_id;
	__u32 value;
	__u16 memory_kind;	/* CUPTI_ACTIVITY_MEMORY_KIND_* */
	__u16 flags;
};
ISR_LAYOUT(isr_ev_gpu_memset, 72, start_ns, 24, end_ns, 32, bytes, 40, correlation_id, 48, device_id, 52,
	context_id, 56, stream_id, 60, value, 64, memory_kind, 68, flags, 70);

/* A host thread waited for the GPU (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION). */
struct isr_ev_gpu_sync {
	struct isr_ev_hdr hdr;
	__u64 start_ns;
	__u64 end_ns;
	__u32 correlation_id;
	__u32 context_id;
	__u32 stream_id;	/* 0xffffffff: not a stream wait */
	__u32 sync_type;	/* CUpti_ActivitySynchronizationType */
	__u32 cuda_event_id;
	__u32 pad;
};
ISR_LAYOUT(isr_ev_gpu_sync, 64, start_ns, 24, end_ns, 32, correlation_id, 40, context_id, 44, stream_id, 48,
	sync_type, 52, cuda_event_id, 56, pad, 60);

/* isr_ev_gpu_api.api */
#define ISR_GPU_API_DRIVER	1 /* CUPTI_ACTIVITY_KIND_DRIVER: cbid is a CUPTI_DRIVER_TRACE_CBID_* */
#define ISR_GPU_API_RUNTIME	2 /* CUPTI_ACTIVITY_KIND_RUNTIME: cbid is a CUPTI_RUNTIME_TRACE_CBID_* */

/* A driver or runtime API call as CUPTI saw it: the correlation id that
 * joins it to the kernel or copy it started. thread_id is the kernel's tid
 * (the bridge asks CUPTI for system thread ids). */
struct isr_ev_gpu_api {
	struct isr_ev_hdr hdr;
	__u64 start_ns;
	__u64 end_ns;
	__u32 correlation_id;
	__u32 cbid;
	__u32 thread_id;
	__u16 api;		/* ISR_GPU_API_* */
	__u16 pad0;
	__u32 return_value;
	__u32 pad1;
};
ISR_LAYOUT(isr_ev_gpu_api, 64, start_ns, 24, end_ns, 32, correlation_id, 40, cbid, 44, thread_id, 48, api, 52,
	pad0, 54, return_value, 56, pad1, 60);

/* A clock reference pair: CLOCK_MONOTONIC read just before and just after
 * cuptiGetTimestamp(). The pair's CPU time is their midpoint, its
 * uncertainty half their distance. */
struct isr_ev_gpu_clock {
	struct isr_ev_hdr hdr;
	__u64 gpu_ns;		/* cuptiGetTimestamp() */
	__u64 mono_before_ns;
	__u64 mono_after_ns;
};
ISR_LAYOUT(isr_ev_gpu_clock, 48, gpu_ns, 24, mono_before_ns, 32, mono_after_ns, 40);

/* isr_ev_gpu_status.state */
#define ISR_GPU_ENABLED		1 /* a tracer attached: activity collection is on */
#define ISR_GPU_FLUSHED		2 /* every record completed before this one was handed over */
#define ISR_GPU_FAILED		3 /* CUPTI is missing or refused: cupti_error says why */

/* The bridge's state and counters (cumulative since the process started).
 * lost_new: records CUPTI dropped since the previous status record; BPF
 * adds it to drop source ISR_SRC_CUPTI. */
struct isr_ev_gpu_status {
	struct isr_ev_hdr hdr;
	__u64 cupti_dropped;	/* cuptiActivityGetNumDroppedRecords, summed */
	__u64 handed_over;	/* records the bridge handed to BPF before this one */
	__u64 lost_new;
	__u32 state;		/* ISR_GPU_* */
	__s32 cupti_error;	/* CUptiResult of the failure; -1: libcupti.so.13 not found */
};
ISR_LAYOUT(isr_ev_gpu_status, 56, cupti_dropped, 24, handed_over, 32, lost_new, 40, state, 48, cupti_error, 52);

/* Flags of isr_ev_gpu_window.flags */
#define ISR_GPU_WINDOW_OPEN	0x1 /* still collecting: observed up to close_ns so far (the answer to a flush request) */
#define ISR_GPU_WINDOW_EXIT	0x2 /* closed by the process's exit */

/*
 * A window of GPU activity collection: CUPTI's activity was enabled in the
 * process from open_ns to close_ns (CLOCK_MONOTONIC), and every kernel,
 * copy, memset and API record CUPTI made of the calls in it was handed over
 * before this record. Between windows CUPTI is detached from the process
 * (cuptiFinalize): nothing is observed there. A window is sent when it
 * closes, and also while it is still open, when the tracer asks for a flush
 * (flag OPEN); a later record of the same seq replaces it. Without any such
 * record (a bridge older than this type), a process's activity is observed
 * from its first record to the end.
 */
struct isr_ev_gpu_window {
	struct isr_ev_hdr hdr;
	__u64 open_ns;		/* CUPTI activity enabled */
	__u64 close_ns;		/* its disabling began (OPEN: the time of this record) */
	__u64 device_records;	/* kernels, copies and memsets of the window handed over */
	__u64 api_records;	/* driver and runtime API records of the window handed over */
	__u64 finalize_ns;	/* how long detaching CUPTI after the previous window took its thread (0: none) */
	__u32 seq;		/* the window's number in this process, from 1 */
	__u32 flags;		/* ISR_GPU_WINDOW_* */
	__u32 setup_us;		/* attaching CUPTI took the bridge's thread (subscribe, register, enable) */
	__u32 drain_us;		/* disabling to the last record of the window delivered */
	__u32 incomplete;	/* records CUPTI handed back unfinished (kernels still running at the drain's end): not sent */
	__u32 finalize_tid;	/* the application thread that detached CUPTI after the previous window (0: none) */
};
ISR_LAYOUT(isr_ev_gpu_window, 88, open_ns, 24, close_ns, 32, device_records, 40, api_records, 48,
	finalize_ns, 56, seq, 64, flags, 68, setup_us, 72, drain_us, 76, incomplete, 80, finalize_tid, 84);

/* A kernel name, sent before the first kernel record that uses its id
 * (ids are per process, from 1, and start over at each attach). */
struct isr_ev_gpu_name {
	struct isr_ev_hdr hdr;
	__u32 id;
	__u32 pad;
	char name[ISR_GPU_NAME_LEN];	/* mangled as CUPTI gives it, NUL-terminated, may be truncated */
};
ISR_LAYOUT(isr_ev_gpu_name, 544, id, 24, pad, 28, name, 32);

/*
 * Python stacks (CPython 3.10-3.13). The BPF walker (bpf/py_stacks.bpf.h)
 * emits ISR_EV_PY_FRAMES: the frames of one thread at one moment, innermost
 * first. The recorder interns them per process: a stack seen for the first
 * time is written once as ISR_EV_PY_STACK (its id and frames), every code
 * object seen for the first time once as ISR_EV_PY_CODE (read from the live
 * target: file, qualified name, line table), and each capture as
 * ISR_EV_PY_SAMPLE naming its stack. ISR_EV_PY_FRAMES itself never reaches
 * a recording.
 */
#define ISR_PY_MAX_DEPTH	64 /* frames kept per stack, innermost first */

/* What a capture was taken for (isr_ev_py_frames.kind, isr_ev_py_sample.kind) */
#define ISR_PY_KIND_TIMER	1 /* sampled: CPU-clock perf event, --py-stacks HZ */
#define ISR_PY_KIND_CUDA	2 /* at an isr_ev_cuda_call of the same thread and hdr.ts_ns */

/* Flags of a stack (isr_ev_py_frames.flags, isr_ev_py_stack.flags) */
#define ISR_PY_STACK_TRUNCATED	0x1 /* deeper than ISR_PY_MAX_DEPTH: the outermost frames are missing */
#define ISR_PY_STACK_INVALID	0x2 /* the walk met a frame whose code is not a code object and stopped there */

/* One frame: a code object and the instruction being executed. */
struct isr_py_frame {
	__u64 code;		/* address of the PyCodeObject in the target */
	__s32 instr;		/* code-unit index of the instruction (-1: not started) */
	__u32 pad;
};
ISR_LAYOUT(isr_py_frame, 16, code, 0, instr, 8, pad, 12);

/* BPF to recorder: a thread's frames (hdr.size = 32 + 16 * depth). */
struct isr_ev_py_frames {
	struct isr_ev_hdr hdr;
	__u16 kind;		/* ISR_PY_KIND_* */
	__u16 flags;		/* ISR_PY_STACK_* */
	__u16 depth;		/* frames[] that follow */
	__u16 capture_ns;	/* what the capture took the BPF program (saturates at 65535) */
	struct isr_py_frame frames[ISR_PY_MAX_DEPTH];
};
_Static_assert(sizeof(struct isr_ev_py_frames) == 32 + 16 * ISR_PY_MAX_DEPTH, "isr_ev_py_frames size");
ISR_OFFSETS(isr_ev_py_frames, kind, 24, flags, 26, depth, 28, capture_ns, 30, frames, 32);

/* A capture of a thread's Python stack. kind CUDA: taken at the CUDA call
 * of the same tid whose hdr.ts_ns is this hdr.ts_ns. */
struct isr_ev_py_sample {
	struct isr_ev_hdr hdr;
	__u32 stack_id;		/* isr_ev_py_stack.stack_id of the same process */
	__u16 kind;		/* ISR_PY_KIND_* */
	__u16 pad;
};
ISR_LAYOUT(isr_ev_py_sample, 32, stack_id, 24, kind, 28, pad, 30);

/* An interned stack of process hdr.pid, written before the first sample
 * naming it (hdr.size = 32 + 16 * depth). Ids start at 1 per recording. */
struct isr_ev_py_stack {
	struct isr_ev_hdr hdr;
	__u32 stack_id;
	__u16 flags;		/* ISR_PY_STACK_* */
	__u16 depth;
	/* struct isr_py_frame frames[depth], innermost first */
};
ISR_LAYOUT(isr_ev_py_stack, 32, stack_id, 24, flags, 28, depth, 30);

/* A code object of process hdr.pid as the recorder read it when a stack
 * first named it. Followed by filename_len bytes of file name, qualname_len
 * bytes of qualified name (UTF-8, no NUL) and linetable_len bytes of the
 * line table (3.10: co_linetable pairs; 3.11+: the location table), then
 * zeros to a multiple of 8. */
struct isr_ev_py_code {
	struct isr_ev_hdr hdr;
	__u64 code;		/* address in the target */
	__u32 first_line;	/* co_firstlineno */
	__u16 py_minor;		/* 3.<py_minor>: the line-table format */
	__u16 flags;		/* ISR_PY_CODE_* */
	__u16 filename_len;
	__u16 qualname_len;
	__u32 linetable_len;
};
ISR_LAYOUT(isr_ev_py_code, 48, code, 24, first_line, 32, py_minor, 36, flags, 38, filename_len, 40,
	qualname_len, 42, linetable_len, 44);

#define ISR_PY_CODE_LINETABLE_CUT	0x1 /* the line table was longer than a record holds: later lines unknown */

/* isr_ev_py_status.status */
#define ISR_PY_STATUS_SAMPLING		1 /* layout validated: stacks captured (subject STACKS), GIL waits traced (subject GIL) */
#define ISR_PY_STATUS_LAYOUT_MISMATCH	2 /* the interpreter's memory does not match the expected layout: not captured */
#define ISR_PY_STATUS_UNSUPPORTED	3 /* a version or build without a known layout: not captured */

/* isr_ev_py_status.subject */
#define ISR_PY_SUBJECT_STACKS		0 /* the Python stacks (files written before subjects existed hold 0) */
#define ISR_PY_SUBJECT_GIL		1 /* the GIL waits seen by the scheduler (isr_ev_gil_wait) */

/* Whether the Python stacks (or the GIL waits) of process hdr.pid are
 * captured, and why not. */
struct isr_ev_py_status {
	struct isr_ev_hdr hdr;
	__u32 status;		/* ISR_PY_STATUS_* */
	__u16 py_minor;
	__u16 subject;		/* ISR_PY_SUBJECT_* */
	__u64 runtime;		/* address of _PyRuntime in the target */
	char detail[160];	/* what was checked, or what did not match (NUL-terminated) */
};
ISR_LAYOUT(isr_ev_py_status, 200, status, 24, py_minor, 28, subject, 30, runtime, 32, detail, 40);

/* isr_ev_nvtx.kind */
#define ISR_NVTX_PUSH	1 /* nvtxRangePushA/Ex: a range opens on the thread's stack of ranges */
#define ISR_NVTX_POP	2 /* nvtxRangePop: the thread's innermost open range closes */
#define ISR_NVTX_START	3 /* nvtxRangeStartA/Ex returned id: a range that any thread may end */
#define ISR_NVTX_END	4 /* nvtxRangeEnd(id) */
#define ISR_NVTX_MARK	5 /* nvtxMarkA/Ex: an instant */

#define ISR_NVTX_NAME_LEN 64

/*
 * An NVTX annotation of a target thread (uprobes on the NVTX entry points
 * of libnvToolsExt). hdr.ts_ns is the call's entry (for START too, though
 * the event is emitted at its return, where the id is known).
 */
struct isr_ev_nvtx {
	struct isr_ev_hdr hdr;
	__u64 id;		/* START, END: the range id; otherwise 0 */
	__u16 kind;		/* ISR_NVTX_* */
	__u16 flags;		/* ISR_NVTX_F_* */
	__u32 pad;
	char name[ISR_NVTX_NAME_LEN]; /* PUSH, START, MARK: the message, NUL-terminated, may be cut */
};
ISR_LAYOUT(isr_ev_nvtx, 104, id, 24, kind, 32, flags, 34, pad, 36, name, 40);

#define ISR_NVTX_F_EX		0x1 /* from an Ex variant (event attributes) */
#define ISR_NVTX_F_NO_NAME	0x2 /* the message was not ASCII (Unicode, registered string) or unreadable */

/*
 * Where a process's interpreter keeps what the walker reads: the value of
 * the BPF map "py_procs" (tgid -> this), filled by the recorder once the
 * layout is validated. Offsets in bytes; a field a version lacks is 0.
 */
struct isr_py_layout {
	__u64 runtime;		/* address of _PyRuntime */
	__u64 code_type;	/* address of PyCode_Type */
	__u16 minor;		/* 3.<minor> */
	__u16 runtime_interp_head;	/* _PyRuntime.interpreters.head */
	__u16 interp_threads_head;	/* PyInterpreterState: first thread state */
	__u16 tstate_next;
	__u16 tstate_interp;
	__u16 tstate_tid;	/* native_thread_id (3.11+), thread_id = pthread_self (3.10) */
	__u16 tstate_cframe;	/* 3.11, 3.12: tstate->cframe (0: none) */
	__u16 cframe_frame;	/* 3.11, 3.12: cframe->current_frame */
	__u16 tstate_frame;	/* 3.10: tstate->frame; 3.13: tstate->current_frame */
	__u16 frame_previous;	/* f_back (3.10), previous */
	__u16 frame_code;	/* f_code (3.10-3.12), f_executable (3.13) */
	__u16 frame_instr;	/* f_lasti (3.10, an int), prev_instr (3.11, 3.12), instr_ptr (3.13) */
	__u16 frame_owner;	/* 3.12+: owner (0: none) */
	__u16 owner_cstack;	/* owner value of C-stack shim frames, skipped (0xff: none) */
	__u16 code_adaptive;	/* co_code_adaptive: instruction 0 (3.11+) */
	__u16 pad;
};
_Static_assert(sizeof(struct isr_py_layout) == 48, "isr_py_layout size");

/*
 * Where a process's GIL is (the main interpreter's _gil_runtime_state):
 * the value of the BPF map "py_gils" (tgid -> this), filled by the
 * recorder once the GIL's layout is validated (user/probes/py_gil.h). A thread
 * that blocks in futex() on a word in [cond, end) waits for the GIL.
 */
struct isr_py_gil {
	__u64 cond;		/* address of gil->cond: the first word of the GIL's waits */
	__u64 mutex;		/* address of gil->mutex */
	__u64 end;		/* one past gil->mutex (switch_cond, which the dropping holder waits on, is not a GIL wait) */
	__u64 last_holder;	/* address of gil->last_holder (a PyThreadState *) */
	__u16 minor;		/* 3.<minor> */
	__u16 tstate_tid;	/* PyThreadState: native_thread_id (3.11+), thread_id = pthread_self() (3.10) */
	__u16 pthread_tid;	/* 3.10: the kernel tid in glibc's struct pthread (0: holders not named) */
	__u16 pad;
};
_Static_assert(sizeof(struct isr_py_gil) == 40, "isr_py_gil size");

/*
 * A communicator set up by ncclCommInitRank, ncclCommInitRankConfig or
 * ncclCommInitRankScalable (format/nccl_funcs.h), emitted at its return.
 * hdr.ts_ns: the entry. comm is the handle the process's later calls name
 * (0 when the call failed); id_hash (FNV-1a, 64 bits, of the 128-byte
 * ncclUniqueId, the first one for the scalable set-up) is the same in
 * every process of the communicator, which is how recordings of its ranks
 * are matched. The communicator's sequence numbers start again at 1.
 */
struct isr_ev_nccl_comm {
	struct isr_ev_hdr hdr;
	__u64 comm;		/* ncclComm_t */
	__u64 id_hash;
	__u64 duration_ns;	/* entry to return */
	__s32 rank;		/* this process's rank in it */
	__s32 nranks;
	__s32 status;		/* ncclResult_t */
	__u16 func;		/* ISR_NCCL_FN_* */
	__u16 pad;
};
ISR_LAYOUT(isr_ev_nccl_comm, 64, comm, 24, id_hash, 32, duration_ns, 40, rank, 48, nranks, 52, status, 56,
	func, 60, pad, 62);

/*
 * An NCCL collective, point-to-point or group call, at its entry (one probe
 * hit, no return). seq: the call's number among the collectives of its
 * communicator in this process (1, 2, ...; counted in BPF from the
 * communicator's set-up, or from the first call traced), among its
 * point-to-point calls for ncclSend/ncclRecv, 0 for ncclGroupStart/End and
 * when the sequence map was full. Every rank calls a communicator's
 * collectives in the same order, so one seq is one collective on every
 * rank. Bytes are count times the size of dtype.
 */
struct isr_ev_nccl_call {
	struct isr_ev_hdr hdr;
	__u64 comm;		/* ncclComm_t (0: group calls) */
	__u64 count;		/* elements (ncclAllGather: per rank sent; ncclReduceScatter: per rank received) */
	__u64 stream;		/* cudaStream_t */
	__u64 seq;
	__s32 peer;		/* root (ncclBroadcast, ncclBcast, ncclReduce), peer (ncclSend, ncclRecv); -1: none */
	__u16 func;		/* ISR_NCCL_FN_* */
	__u8 dtype;		/* ncclDataType_t */
	__u8 op;		/* ncclRedOp_t (built-in ones; 0xff: none) */
};
ISR_LAYOUT(isr_ev_nccl_call, 64, comm, 24, count, 32, stream, 40, seq, 48, peer, 56, func, 60, dtype, 62, op, 63);

/* Flags of isr_ev_rank_env.flags: which variables were set (as integers) */
#define ISR_RANK_ENV_RANK		0x1 /* RANK */
#define ISR_RANK_ENV_LOCAL_RANK		0x2 /* LOCAL_RANK */
#define ISR_RANK_ENV_WORLD_SIZE		0x4 /* WORLD_SIZE */

/*
 * The rank a launcher (torchrun, mpirun with its wrappers, a job script)
 * gave a target process, from its environment when the recorder first
 * probed it (/proc/PID/environ): these three variables only, never the
 * rest of the environment. hdr.pid: the process; hdr.ts_ns: when it was
 * read. Written only when one of them is set to an integer.
 */
struct isr_ev_rank_env {
	struct isr_ev_hdr hdr;
	__s32 rank;		/* RANK (-1: unset) */
	__s32 local_rank;	/* LOCAL_RANK (-1: unset) */
	__s32 world_size;	/* WORLD_SIZE (-1: unset) */
	__u32 flags;		/* ISR_RANK_ENV_* */
};
ISR_LAYOUT(isr_ev_rank_env, 40, rank, 24, local_rank, 28, world_size, 32, flags, 36);

/* Read-only configuration of the BPF programs (const volatile globals). */
#define ISR_MAX_TARGETS 4096

/* Values of the BPF map "targets" (pid -> a set of these bits). */
#define ISR_TARGET		0x1 /* traced */
#define ISR_TARGET_NO_HOLD	0x2 /* a process the user named (-p): never stopped by the tracer (its parent
				     * may be a shell with job control, which would take a stop for Ctrl-Z) */
#define ISR_TARGET_ARMED	0x4 /* it has uprobes of its own: a child it forks is held until it has its own */

/* File-name prefixes of the libraries whose first mapping holds a target
 * (bpf/hold.bpf.h): how many, and how long each may be. */
#define ISR_HOLD_NAMES		8
#define ISR_HOLD_NAME_LEN	32

/* A value of the BPF map "hold_names": one prefix, as words of 8 bytes
 * (little-endian: byte i is bits 8 * (i % 8) of word i / 8) with the mask
 * of its bytes (all 0: an unused slot). */
struct isr_hold_name {
	__u64 s[ISR_HOLD_NAME_LEN / 8];
	__u64 mask[ISR_HOLD_NAME_LEN / 8];
};
_Static_assert(sizeof(struct isr_hold_name) == 64, "isr_hold_name size");

/* The one value of the BPF map "hold_names". */
struct isr_hold_names {
	struct isr_hold_name n[ISR_HOLD_NAMES];
};

/* Every registered type: a value below ISR_EV_TYPE_MAX that is not
 * ISR_EV_PY_FRAMES, a record a multiple of 8 bytes, a known drop source.
 * (A value used twice is refused by the switch of format/registry.c.) */
#define ISR_EV_CHECK_ROW(ID, name, value, st, drops, ...)					\
	_Static_assert(value > 0 && value < ISR_EV_TYPE_MAX && value != ISR_EV_PY_FRAMES,	\
		       "ISR_EV_" #ID ": value out of range");						\
	_Static_assert(sizeof(struct st) % 8 == 0, "struct " #st ": size not a multiple of 8");	\
	_Static_assert(drops < ISR_SRC_MAX, "ISR_EV_" #ID ": unknown drop source");
ISR_EVENT_TYPES(ISR_EV_CHECK_ROW)
#undef ISR_EV_CHECK_ROW
#define ISR_SRC_CHECK_ROW(ID, name, value, meaning) \
	_Static_assert(value < ISR_SRC_MAX, "ISR_SRC_" #ID ": value out of range");
ISR_DROP_SOURCES(ISR_SRC_CHECK_ROW)
#undef ISR_SRC_CHECK_ROW

#endif /* INFERSCOPE_EVENTS_H */
