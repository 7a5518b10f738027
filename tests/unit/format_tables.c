// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prints the generated part of docs/record-format.md: one table per on-disk
 * struct (offsets and sizes from the compiler, not from a person), the
 * tables of constants (event types, drop sources and stop reasons expanded
 * from their registries) and the table of probed CUDA functions (expanded
 * from the X-macro in format/cuda_funcs.h). `make docs` pastes the output
 * into the document and tests/unit/test_format_doc.c fails when the two
 * differ.
 *
 * Every struct's fields must cover it exactly, without gaps or overlap: a
 * field added to a header but not listed here stops this program with an
 * error, and so does an event type of the registry whose struct has no
 * table here, so the document cannot silently miss either.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "cuda_funcs.h"
#include "isr_format.h"

struct field {
	const char *name;
	size_t offset, size;
	const char *type;
	const char *meaning;
};

#define FIELD(s, f, type, meaning) \
	{ #f, offsetof(struct s, f), sizeof(((struct s *)0)->f), type, meaning }

struct struct_doc {
	const char *name;
	size_t size;
	const char *intro;
	const struct field *fields;
	size_t field_count;
};

#define STRUCT(s, intro, fields) \
	{ #s, sizeof(struct s), intro, fields, sizeof(fields) / sizeof(fields[0]) }

struct constant {
	const char *macro;
	unsigned long long value;
	const char *name;	/* shown in the const_doc's name column, if it has one */
	const char *meaning;
};

#define CONST(m, name, meaning) { #m, (unsigned long long)(m), name, meaning }

struct const_doc {
	const char *title;
	const char *intro;
	int hex;
	const char *num_col;	/* heading of the number column */
	const char *name_col;	/* heading of the name column; NULL: no such column */
	const struct constant *items;
	size_t count;
};

#define CONSTS(title, intro, hex, num_col, name_col, items) \
	{ title, intro, hex, num_col, name_col, items, sizeof(items) / sizeof(items[0]) }

/* ---- file structure ---------------------------------------------------------- */

static const struct field file_header[] = {
	FIELD(isr_file_header, magic, "u64", "`ISR_MAGIC`: the bytes `ISRECORD`"),
	FIELD(isr_file_header, version_major, "u16", "`ISR_VERSION_MAJOR` of the writer"),
	FIELD(isr_file_header, version_minor, "u16", "`ISR_VERSION_MINOR` of the writer"),
	FIELD(isr_file_header, header_size, "u32", "bytes of file header; the first chunk starts here"),
	FIELD(isr_file_header, created_real_ns, "u64", "CLOCK_REALTIME when the file was created"),
	FIELD(isr_file_header, created_mono_ns, "u64", "CLOCK_MONOTONIC at the same moment"),
	FIELD(isr_file_header, header_crc32, "u32",
	      "since 1.1: CRC-32 of the `header_size` header bytes with this field as 0"),
	FIELD(isr_file_header, pad, "u32", "zero"),
};

static const struct field chunk_header[] = {
	FIELD(isr_chunk_header, magic, "u32", "`ISR_CHUNK_MAGIC`: the bytes `ICHK`"),
	FIELD(isr_chunk_header, kind, "u16", "`ISR_CHUNK_*`"),
	FIELD(isr_chunk_header, compression, "u16", "`ISR_COMPRESS_*` of the payload"),
	FIELD(isr_chunk_header, stored_size, "u32", "payload bytes that follow in the file"),
	FIELD(isr_chunk_header, raw_size, "u32", "payload bytes after decompression"),
	FIELD(isr_chunk_header, record_count, "u32", "events, pairs, counters, properties or sections inside"),
	FIELD(isr_chunk_header, payload_crc32, "u32", "CRC-32 of the stored payload bytes"),
	FIELD(isr_chunk_header, header_crc32, "u32", "CRC-32 of header bytes 0-23 (the fields above)"),
	FIELD(isr_chunk_header, pad, "u32", "zero"),
	FIELD(isr_chunk_header, seq, "u64", "0, 1, 2, ... in file order"),
};

static const struct field prop[] = {
	FIELD(isr_prop, key, "u32", "`ISR_PROP_*` of the chunk's kind"),
	FIELD(isr_prop, len, "u32", "value bytes that follow, without the zero padding to a multiple of 8"),
};

static const struct field thread_info[] = {
	FIELD(isr_thread_info, tid, "u32", "thread id"),
	FIELD(isr_thread_info, pad, "u32", "zero"),
	FIELD(isr_thread_info, comm, "char[16]", "thread name, NUL-terminated"),
};

static const struct field host_gpu[] = {
	FIELD(isr_host_gpu, pci_address, "char[16]", "PCI address, \"0000:3b:00.0\", NUL-terminated"),
	FIELD(isr_host_gpu, vendor, "u16", "PCI vendor (0x10de)"),
	FIELD(isr_host_gpu, device, "u16", "PCI device id"),
	FIELD(isr_host_gpu, class_code, "u32", "PCI class (0x030200: 3D controller)"),
	FIELD(isr_host_gpu, link_speed_mts, "u32", "current link speed when recording began, MT/s per lane (16000 = 16 GT/s); 0: unknown"),
	FIELD(isr_host_gpu, max_link_speed_mts, "u32", "the GPU's maximum link speed, MT/s"),
	FIELD(isr_host_gpu, link_width, "u16", "current link width, lanes; 0: unknown"),
	FIELD(isr_host_gpu, max_link_width, "u16", "the GPU's maximum link width"),
	FIELD(isr_host_gpu, port_max_speed_mts, "u32", "the upstream port's maximum link speed (the link's other end), MT/s; 0: unknown"),
	FIELD(isr_host_gpu, port_max_width, "u16", "the upstream port's maximum link width"),
	FIELD(isr_host_gpu, pad, "u16", "zero"),
	FIELD(isr_host_gpu, numa_node, "s32", "NUMA node; -1: none"),
};

static const struct field numa_distance[] = {
	FIELD(isr_numa_distance, node, "u32", "the other node"),
	FIELD(isr_numa_distance, distance, "u32", "the kernel's node distance (10: local)"),
};

static const struct field host_numa_node[] = {
	FIELD(isr_host_numa_node, node, "u32", "node id"),
	FIELD(isr_host_numa_node, distance_count, "u32", "struct isr_numa_distance that follow"),
	FIELD(isr_host_numa_node, memory_bytes, "u64", "its MemTotal; 0: unknown"),
};

static const struct field clock_pair[] = {
	FIELD(isr_clock_pair, mono_ns, "u64", "CLOCK_MONOTONIC, midpoint of the readings before and after"),
	FIELD(isr_clock_pair, other_ns, "u64", "the other clock at that moment"),
	FIELD(isr_clock_pair, uncertainty_ns, "u32", "half the window between the two monotonic readings"),
	FIELD(isr_clock_pair, clock, "u32", "`ISR_CLOCK_*`: which clock other_ns is"),
};

static const struct field drop_count[] = {
	FIELD(isr_drop_count, source, "u32", "`ISR_SRC_*`"),
	FIELD(isr_drop_count, pad, "u32", "zero"),
	FIELD(isr_drop_count, count, "u64", "events lost from this source since recording began"),
};

static const struct field end[] = {
	FIELD(isr_end, end_mono_ns, "u64", "CLOCK_MONOTONIC when recording stopped"),
	FIELD(isr_end, event_count, "u64", "events in all EVENTS chunks of the file"),
	FIELD(isr_end, stop_reason, "u32", "`ISR_STOP_*`"),
	FIELD(isr_end, section_count, "u32", "struct isr_section entries that follow"),
};

static const struct field section[] = {
	FIELD(isr_section, offset, "u64", "file offset of the chunk header"),
	FIELD(isr_section, kind, "u32", "`ISR_CHUNK_*` of that chunk"),
	FIELD(isr_section, record_count, "u32", "its record_count"),
};

static const struct field trailer[] = {
	FIELD(isr_trailer, end_offset, "u64", "file offset of the END chunk header"),
	FIELD(isr_trailer, magic, "u64", "`ISR_TRAILER_MAGIC`: the bytes `ISISREND`"),
};

/* ---- events ------------------------------------------------------------------ */

static const struct field ev_hdr[] = {
	FIELD(isr_ev_hdr, type, "u16", "`ISR_EV_*`"),
	FIELD(isr_ev_hdr, size, "u16", "whole record in bytes, a multiple of 8, at least 24"),
	FIELD(isr_ev_hdr, cpu, "u32", "CPU the event was observed on"),
	FIELD(isr_ev_hdr, ts_ns, "u64", "CLOCK_MONOTONIC"),
	FIELD(isr_ev_hdr, pid, "u32", "process (tgid) the event is about"),
	FIELD(isr_ev_hdr, tid, "u32", "thread the event is about"),
};

#define HDR(s) FIELD(s, hdr, "struct isr_ev_hdr", "common header")

static const struct field ev_switch[] = {
	HDR(isr_ev_sched_switch),
	FIELD(isr_ev_sched_switch, next_pid, "u32", "process switched in"),
	FIELD(isr_ev_sched_switch, next_tid, "u32", "thread switched in"),
	FIELD(isr_ev_sched_switch, prev_state, "u32", "kernel task state of prev (0x1 interruptible, 0x2 uninterruptible, ...)"),
	FIELD(isr_ev_sched_switch, flags, "u32", "`ISR_SWITCH_*`"),
};

static const struct field ev_wakeup[] = {
	HDR(isr_ev_sched_wakeup),
	FIELD(isr_ev_sched_wakeup, waker_pid, "u32", "process that woke the task"),
	FIELD(isr_ev_sched_wakeup, waker_tid, "u32", "thread that woke the task"),
	FIELD(isr_ev_sched_wakeup, target_cpu, "u32", "CPU the woken task was queued on"),
	FIELD(isr_ev_sched_wakeup, flags, "u32", "ISR_WAKE_INTERRUPT: woken by an interrupt (waker_*: the task it interrupted)"),
};

static const struct field ev_fork[] = {
	HDR(isr_ev_proc_fork),
	FIELD(isr_ev_proc_fork, child_pid, "u32", "process of the child"),
	FIELD(isr_ev_proc_fork, child_tid, "u32", "thread id of the child"),
	FIELD(isr_ev_proc_fork, flags, "u32", "`ISR_FORK_*`"),
	FIELD(isr_ev_proc_fork, pad, "u32", "zero"),
	FIELD(isr_ev_proc_fork, child_comm, "char[16]", "child's name, NUL-terminated"),
};

static const struct field ev_exec[] = {
	HDR(isr_ev_proc_exec),
	FIELD(isr_ev_proc_exec, old_tid, "u32", "thread that called exec"),
	FIELD(isr_ev_proc_exec, pad, "u32", "zero"),
	FIELD(isr_ev_proc_exec, comm, "char[16]", "name after exec, NUL-terminated"),
	FIELD(isr_ev_proc_exec, filename, "char[128]", "path passed to exec, truncated, NUL-terminated"),
};

static const struct field ev_exit[] = {
	HDR(isr_ev_proc_exit),
	FIELD(isr_ev_proc_exit, exit_code, "u32", "kernel exit_code: status << 8 \\| signal"),
	FIELD(isr_ev_proc_exit, flags, "u32", "`ISR_EXIT_*`"),
	FIELD(isr_ev_proc_exit, comm, "char[16]", "name of the exiting thread, NUL-terminated"),
};

static const struct field ev_task_info[] = {
	HDR(isr_ev_task_info),
	FIELD(isr_ev_task_info, task_pid, "u32", "the task named: its process (tgid)"),
	FIELD(isr_ev_task_info, task_tid, "u32", "the task named: its thread"),
	FIELD(isr_ev_task_info, comm, "char[16]", "its thread name, NUL-terminated"),
	FIELD(isr_ev_task_info, process_comm, "char[16]", "its process's name (the thread-group leader's), NUL-terminated"),
};

static const struct field ev_rename[] = {
	HDR(isr_ev_task_rename),
	FIELD(isr_ev_task_rename, comm, "char[16]", "new name, NUL-terminated"),
};

static const struct field ev_hold[] = {
	HDR(isr_ev_proc_hold),
	FIELD(isr_ev_proc_hold, release_ns, "u64", "when the recorder let it go on (CLOCK_MONOTONIC)"),
	FIELD(isr_ev_proc_hold, reason, "u32", "`ISR_HOLD_*`: why it was held"),
	FIELD(isr_ev_proc_hold, parent_pid, "u32", "its parent process (FORK: the one that forked it)"),
	FIELD(isr_ev_proc_hold, name, "char[48]", "LIB: the library's file name, NUL-terminated"),
};

static const struct field ev_fault[] = {
	HDR(isr_ev_page_fault),
	FIELD(isr_ev_page_fault, address, "u64", "faulting data address"),
	FIELD(isr_ev_page_fault, ip, "u64", "user instruction pointer at the fault"),
	FIELD(isr_ev_page_fault, duration_ns, "u64", "fault entry to completion, including retries; valid with `ISR_FAULT_HAS_START`"),
	FIELD(isr_ev_page_fault, flags, "u32", "`ISR_FAULT_*`"),
	FIELD(isr_ev_page_fault, pad, "u32", "zero"),
};

static const struct field ev_nccl_comm[] = {
	HDR(isr_ev_nccl_comm),
	FIELD(isr_ev_nccl_comm, comm, "u64", "the ncclComm_t the process's later calls name (0 when the set-up failed)"),
	FIELD(isr_ev_nccl_comm, id_hash, "u64", "FNV-1a of the 128-byte ncclUniqueId (the first one of ncclCommInitRankScalable): the same on every rank"),
	FIELD(isr_ev_nccl_comm, duration_ns, "u64", "entry (hdr.ts_ns) to return"),
	FIELD(isr_ev_nccl_comm, rank, "s32", "this process's rank in it"),
	FIELD(isr_ev_nccl_comm, nranks, "s32", "its size"),
	FIELD(isr_ev_nccl_comm, status, "s32", "ncclResult_t"),
	FIELD(isr_ev_nccl_comm, func, "u16", "`ISR_NCCL_FN_*` (`format/nccl_funcs.h`)"),
	FIELD(isr_ev_nccl_comm, pad, "u16", "zero"),
};

static const struct field ev_nccl_call[] = {
	HDR(isr_ev_nccl_call),
	FIELD(isr_ev_nccl_call, comm, "u64", "ncclComm_t (0: group calls)"),
	FIELD(isr_ev_nccl_call, count, "u64", "elements"),
	FIELD(isr_ev_nccl_call, stream, "u64", "cudaStream_t"),
	FIELD(isr_ev_nccl_call, seq, "u64", "its number among the communicator's collectives in this process (1, 2, ...; counted in BPF from the set-up), among its point-to-point calls for ncclSend/ncclRecv; 0 for group calls"),
	FIELD(isr_ev_nccl_call, peer, "s32", "root or peer; -1: none"),
	FIELD(isr_ev_nccl_call, func, "u16", "`ISR_NCCL_FN_*` (`format/nccl_funcs.h`)"),
	FIELD(isr_ev_nccl_call, dtype, "u8", "ncclDataType_t"),
	FIELD(isr_ev_nccl_call, op, "u8", "ncclRedOp_t; 0xff: none"),
};

static const struct field ev_rank_env[] = {
	HDR(isr_ev_rank_env),
	FIELD(isr_ev_rank_env, rank, "s32", "RANK (-1: unset)"),
	FIELD(isr_ev_rank_env, local_rank, "s32", "LOCAL_RANK (-1: unset)"),
	FIELD(isr_ev_rank_env, world_size, "s32", "WORLD_SIZE (-1: unset)"),
	FIELD(isr_ev_rank_env, flags, "u32", "`ISR_RANK_ENV_*`: which were set"),
};

static const struct field ev_mem_sample[] = {
	HDR(isr_ev_mem_sample),
	FIELD(isr_ev_mem_sample, rss_anon_bytes, "u64", "RssAnon of /proc/PID/status"),
	FIELD(isr_ev_mem_sample, rss_file_bytes, "u64", "RssFile"),
	FIELD(isr_ev_mem_sample, rss_shmem_bytes, "u64", "RssShmem"),
	FIELD(isr_ev_mem_sample, swap_bytes, "u64", "VmSwap"),
	FIELD(isr_ev_mem_sample, psi_some_us, "u64", "memory pressure, some tasks stalled: cumulative microseconds (`ISR_MEM_PSI`)"),
	FIELD(isr_ev_mem_sample, psi_full_us, "u64", "memory pressure, every non-idle task stalled: cumulative microseconds"),
	FIELD(isr_ev_mem_sample, cg_current_bytes, "u64", "its memory cgroup's memory.current (`ISR_MEM_CGROUP`)"),
	FIELD(isr_ev_mem_sample, cg_high_bytes, "u64", "memory.high; `ISR_MEM_UNLIMITED` for max"),
	FIELD(isr_ev_mem_sample, cg_max_bytes, "u64", "memory.max; `ISR_MEM_UNLIMITED` for max"),
	FIELD(isr_ev_mem_sample, flags, "u32", "`ISR_MEM_*`"),
	FIELD(isr_ev_mem_sample, nnodes, "u32", "NUMA nodes numa_maps named (at most `ISR_MEM_NODES`)"),
	FIELD(isr_ev_mem_sample, numa_bytes, "u64[8]", "resident bytes per NUMA node from /proc/PID/numa_maps (pages times kernelpagesize_kB; `ISR_MEM_NUMA`)"),
};

static const struct field ev_reclaim[] = {
	HDR(isr_ev_reclaim),
	FIELD(isr_ev_reclaim, duration_ns, "u64", "from the reclaim's begin (hdr.ts_ns) to its end"),
	FIELD(isr_ev_reclaim, nr_reclaimed, "u64", "pages it freed"),
	FIELD(isr_ev_reclaim, kind, "u32", "`ISR_RECLAIM_*`"),
	FIELD(isr_ev_reclaim, pad, "u32", "zero"),
};

static const struct field ev_cuda_call[] = {
	HDR(isr_ev_cuda_call),
	FIELD(isr_ev_cuda_call, func, "u16", "`ISR_CUDA_FN_*`: the function called ([CUDA functions](#cuda-functions))"),
	FIELD(isr_ev_cuda_call, flags, "u16", "`ISR_CUDA_*`"),
	FIELD(isr_ev_cuda_call, status, "s32", "CUresult returned (0 = CUDA_SUCCESS); valid with `ISR_CUDA_RETURNED`"),
	FIELD(isr_ev_cuda_call, duration_ns, "u64", "entry to return; valid with `ISR_CUDA_RETURNED`"),
	FIELD(isr_ev_cuda_call, args, "u64[6]", "arguments, by family: LAUNCH/LAUNCH_EX f, grid x \\| y << 32, grid z \\| block x << 32, block y \\| block z << 32, shared bytes, stream; "
	      "GRAPH graph exec, -, -, -, -, stream; COPY*/SET dst, src (SET: value), bytes, direction (`ISR_COPY_*`), -, stream; "
	      "SYNC handle, second handle; ALLOC address (read at return), bytes, flags, kind (`ISR_ALLOC_*`), -, stream; "
	      "FREE address, -, -, kind, -, stream; VMM_CREATE handle (read at return), size; VMM_RELEASE handle; "
	      "VMM_MAP address, size, offset, handle; VMM_UNMAP address, size; REGISTER address, bytes, flags; "
	      "UNREGISTER address"),
};

static const struct field ev_cuda_name[] = {
	HDR(isr_ev_cuda_name),
	FIELD(isr_ev_cuda_name, handle, "u64", "the CUfunction / CUkernel returned"),
	FIELD(isr_ev_cuda_name, owner, "u64", "CUmodule / CUlibrary, or for an alias (name empty) the CUkernel whose name it takes"),
	FIELD(isr_ev_cuda_name, func, "u16", "`ISR_CUDA_FN_*` of the call that returned the handle"),
	FIELD(isr_ev_cuda_name, pad0, "u16", "zero"),
	FIELD(isr_ev_cuda_name, pad1, "u32", "zero"),
	FIELD(isr_ev_cuda_name, name, "char[256]", "mangled kernel name, NUL-terminated, may be truncated; empty for an alias"),
};

static const struct field ev_gil[] = {
	HDR(isr_ev_gil),
	FIELD(isr_ev_gil, wait_ns, "u64", "ACQUIRE: entry to return of PyEval_RestoreThread, the wait to take the GIL; RELEASE: 0"),
	FIELD(isr_ev_gil, kind, "u32", "`ISR_GIL_*`"),
	FIELD(isr_ev_gil, pad, "u32", "zero"),
};

static const struct field ev_gil_wait[] = {
	HDR(isr_ev_gil_wait),
	FIELD(isr_ev_gil_wait, duration_ns, "u64", "from leaving its CPU, blocked on the GIL, to being switched back in"),
	FIELD(isr_ev_gil_wait, holder_tid, "u32", "the kernel tid of the GIL's holder when it blocked (`gil->last_holder`); valid with `ISR_GIL_WAIT_HOLDER`"),
	FIELD(isr_ev_gil_wait, flags, "u32", "`ISR_GIL_WAIT_*`"),
};

static const struct field ev_sampling[] = {
	HDR(isr_ev_sampling),
	FIELD(isr_ev_sampling, kind, "u32", "`ISR_SAMPLING_*`"),
	FIELD(isr_ev_sampling, budget_ppm, "u32", "the overhead budget, millionths of the busiest thread's time"),
	FIELD(isr_ev_sampling, hit_cost_ps, "u64", "measured cost of one probe hit, picoseconds"),
	FIELD(isr_ev_sampling, switch_ns, "u64", "how long the attach (ON) or release (OFF) took; 0 for START"),
	FIELD(isr_ev_sampling, spent_ns, "u64", "estimated probe cost so far, the busiest thread per interval"),
	FIELD(isr_ev_sampling, credit_ns, "s64", "budget credit left (at most budget × 1 s); negative: overspent"),
};

static const struct field sampling_costs[] = {
	FIELD(isr_sampling_costs, tracer_pid, "u32", "the recorder's process: its threads are the tracer's, never the job's"),
	FIELD(isr_sampling_costs, helper_pid, "u32", "the recorder's watcher of held processes, the tracer's too; 0: none"),
	FIELD(isr_sampling_costs, sampler_hz, "u32", "CPU-clock samples a second on every CPU (Python stacks); 0: none"),
	FIELD(isr_sampling_costs, flags, "u32", "`ISR_COSTS_*`; 0 in recordings made before it"),
	FIELD(isr_sampling_costs, pair_ps, "u64", "an entry and a return probe hit, picoseconds (the entry hit alone: `hit_cost_ps`)"),
	FIELD(isr_sampling_costs, fault_ps, "u64", "a page fault of a target thread, traced; 0: faults not traced"),
	FIELD(isr_sampling_costs, sched_ps, "u64", "a scheduler event of a target thread (a switch or a wakeup)"),
	FIELD(isr_sampling_costs, tick_ps, "u64", "a tick of the CPU-clock sampler on a target thread"),
};

static const struct field sampling_spent[] = {
	FIELD(isr_sampling_spent, busiest_pid, "u32", "the thread tracing cost most over the recording, for its time on a CPU: its process"),
	FIELD(isr_sampling_spent, busiest_tid, "u32", "and its tid"),
	FIELD(isr_sampling_spent, traced_ns, "u64", "from the budget's start to the end"),
	FIELD(isr_sampling_spent, busiest_oncpu_ns, "u64", "the busiest thread's time on a CPU meanwhile (from its switches)"),
	FIELD(isr_sampling_spent, allowed_ns, "u64", "budget × traced_ns + its burst credit (budget × 1 s); 0: no budget"),
	FIELD(isr_sampling_spent, busiest_ns, "u64[8]", "what the busiest thread was charged, by `ISR_SPENT_*`"),
	FIELD(isr_sampling_spent, busiest_ops, "u64[8]", "how many things were charged to it, by `ISR_SPENT_*` (hits, captures, ticks, faults, events)"),
	FIELD(isr_sampling_spent, all_ns, "u64[8]", "what every target thread was charged, by `ISR_SPENT_*`"),
	FIELD(isr_sampling_spent, faults_spent_ns, "u64", "what page-fault tracing's own budget was charged (against the same allowed_ns); 0: not switched. Absent (hdr.size = 64 + 224) in recordings made before it: read as 0"),
	FIELD(isr_sampling_spent, copies_spent_ns, "u64", "what the async copies' own budget was charged (against the same allowed_ns); 0: not switched apart. Absent (hdr.size = 64 + 232) in recordings made before it: read as 0"),
};

#define GPU_TIMES(s) \
	FIELD(s, start_ns, "u64", "start, GPU clock (cuptiGetTimestamp)"), \
	FIELD(s, end_ns, "u64", "end, GPU clock")

static const struct field ev_gpu_kernel[] = {
	HDR(isr_ev_gpu_kernel),
	GPU_TIMES(isr_ev_gpu_kernel),
	FIELD(isr_ev_gpu_kernel, correlation_id, "u32", "of the launch call's gpu_api record"),
	FIELD(isr_ev_gpu_kernel, name_id, "u32", "`isr_ev_gpu_name.id` in the same process; 0: no name"),
	FIELD(isr_ev_gpu_kernel, device_id, "u32", "CUDA device"),
	FIELD(isr_ev_gpu_kernel, context_id, "u32", "CUPTI context id"),
	FIELD(isr_ev_gpu_kernel, stream_id, "u32", "CUPTI stream id"),
	FIELD(isr_ev_gpu_kernel, registers, "u16", "registers per thread"),
	FIELD(isr_ev_gpu_kernel, pad, "u16", "zero"),
	FIELD(isr_ev_gpu_kernel, grid, "s32[3]", "grid x, y, z"),
	FIELD(isr_ev_gpu_kernel, block, "s32[3]", "block x, y, z"),
	FIELD(isr_ev_gpu_kernel, static_shared, "u32", "static shared memory per block, bytes"),
	FIELD(isr_ev_gpu_kernel, dynamic_shared, "u32", "dynamic shared memory per block, bytes"),
};

static const struct field ev_gpu_memcpy[] = {
	HDR(isr_ev_gpu_memcpy),
	GPU_TIMES(isr_ev_gpu_memcpy),
	FIELD(isr_ev_gpu_memcpy, bytes, "u64", "bytes copied"),
	FIELD(isr_ev_gpu_memcpy, correlation_id, "u32", "of the call that started it"),
	FIELD(isr_ev_gpu_memcpy, device_id, "u32", "CUDA device"),
	FIELD(isr_ev_gpu_memcpy, context_id, "u32", "CUPTI context id"),
	FIELD(isr_ev_gpu_memcpy, stream_id, "u32", "CUPTI stream id"),
	FIELD(isr_ev_gpu_memcpy, copy_kind, "u8", "CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ..."),
	FIELD(isr_ev_gpu_memcpy, src_kind, "u8", "CUpti_ActivityMemoryKind of the source"),
	FIELD(isr_ev_gpu_memcpy, dst_kind, "u8", "CUpti_ActivityMemoryKind of the destination"),
	FIELD(isr_ev_gpu_memcpy, flags, "u8", "CUpti_ActivityFlag bits of a memcpy (async)"),
	FIELD(isr_ev_gpu_memcpy, pad, "u32", "zero"),
};

static const struct field ev_gpu_memset[] = {
	HDR(isr_ev_gpu_memset),
	GPU_TIMES(isr_ev_gpu_memset),
	FIELD(isr_ev_gpu_memset, bytes, "u64", "bytes set"),
	FIELD(isr_ev_gpu_memset, correlation_id, "u32", "of the call that started it"),
	FIELD(isr_ev_gpu_memset, device_id, "u32", "CUDA device"),
	FIELD(isr_ev_gpu_memset, context_id, "u32", "CUPTI context id"),
	FIELD(isr_ev_gpu_memset, stream_id, "u32", "CUPTI stream id"),
	FIELD(isr_ev_gpu_memset, value, "u32", "the value set"),
	FIELD(isr_ev_gpu_memset, memory_kind, "u16", "CUpti_ActivityMemoryKind"),
	FIELD(isr_ev_gpu_memset, flags, "u16", "CUpti_ActivityFlag bits of a memset (async)"),
};

static const struct field ev_gpu_sync[] = {
	HDR(isr_ev_gpu_sync),
	GPU_TIMES(isr_ev_gpu_sync),
	FIELD(isr_ev_gpu_sync, correlation_id, "u32", "of the synchronizing call"),
	FIELD(isr_ev_gpu_sync, context_id, "u32", "CUPTI context id"),
	FIELD(isr_ev_gpu_sync, stream_id, "u32", "CUPTI stream id; 0xffffffff: not a stream wait"),
	FIELD(isr_ev_gpu_sync, sync_type, "u32", "CUpti_ActivitySynchronizationType: 1 event, 2 stream wait event, 3 stream, 4 context"),
	FIELD(isr_ev_gpu_sync, cuda_event_id, "u32", "the event waited for, if any"),
	FIELD(isr_ev_gpu_sync, pad, "u32", "zero"),
};

static const struct field ev_gpu_api[] = {
	HDR(isr_ev_gpu_api),
	FIELD(isr_ev_gpu_api, start_ns, "u64", "call entry, GPU clock"),
	FIELD(isr_ev_gpu_api, end_ns, "u64", "call return, GPU clock"),
	FIELD(isr_ev_gpu_api, correlation_id, "u32", "joins the call to the kernel or copy it started"),
	FIELD(isr_ev_gpu_api, cbid, "u32", "CUPTI_DRIVER_TRACE_CBID_* or CUPTI_RUNTIME_TRACE_CBID_*, by api"),
	FIELD(isr_ev_gpu_api, thread_id, "u32", "the calling thread (kernel tid)"),
	FIELD(isr_ev_gpu_api, api, "u16", "`ISR_GPU_API_*`"),
	FIELD(isr_ev_gpu_api, pad0, "u16", "zero"),
	FIELD(isr_ev_gpu_api, return_value, "u32", "CUresult / cudaError_t returned"),
	FIELD(isr_ev_gpu_api, pad1, "u32", "zero"),
};

static const struct field ev_gpu_clock[] = {
	HDR(isr_ev_gpu_clock),
	FIELD(isr_ev_gpu_clock, gpu_ns, "u64", "cuptiGetTimestamp()"),
	FIELD(isr_ev_gpu_clock, mono_before_ns, "u64", "CLOCK_MONOTONIC just before it"),
	FIELD(isr_ev_gpu_clock, mono_after_ns, "u64", "CLOCK_MONOTONIC just after it"),
};

static const struct field ev_gpu_status[] = {
	HDR(isr_ev_gpu_status),
	FIELD(isr_ev_gpu_status, cupti_dropped, "u64", "records CUPTI dropped since the process started (cuptiActivityGetNumDroppedRecords)"),
	FIELD(isr_ev_gpu_status, handed_over, "u64", "records the bridge handed to BPF before this one, since the process started"),
	FIELD(isr_ev_gpu_status, lost_new, "u64", "records CUPTI dropped since the previous status record; added to drop source `ISR_SRC_CUPTI`"),
	FIELD(isr_ev_gpu_status, state, "u32", "`ISR_GPU_*`"),
	FIELD(isr_ev_gpu_status, cupti_error, "s32", "FAILED: the CUptiResult, or -1 when libcupti.so.13 was not found"),
};

static const struct field ev_gpu_name[] = {
	HDR(isr_ev_gpu_name),
	FIELD(isr_ev_gpu_name, id, "u32", "the id kernel records of this process use"),
	FIELD(isr_ev_gpu_name, pad, "u32", "zero"),
	FIELD(isr_ev_gpu_name, name, "char[512]", "kernel name as CUPTI gives it (mangled), NUL-terminated, may be truncated"),
};

static const struct field ev_gpu_window[] = {
	HDR(isr_ev_gpu_window),
	FIELD(isr_ev_gpu_window, open_ns, "u64", "CLOCK_MONOTONIC: CUPTI activity enabled"),
	FIELD(isr_ev_gpu_window, close_ns, "u64", "CLOCK_MONOTONIC: its disabling began (OPEN: the time of this record)"),
	FIELD(isr_ev_gpu_window, device_records, "u64", "kernels, copies and memsets of the window handed over"),
	FIELD(isr_ev_gpu_window, api_records, "u64", "driver and runtime API records of the window handed over"),
	FIELD(isr_ev_gpu_window, finalize_ns, "u64", "how long detaching CUPTI after the previous window took its thread (0: none)"),
	FIELD(isr_ev_gpu_window, seq, "u32", "the window's number in this process, from 1; a later record of the same seq replaces it"),
	FIELD(isr_ev_gpu_window, flags, "u32", "`ISR_GPU_WINDOW_*`"),
	FIELD(isr_ev_gpu_window, setup_us, "u32", "attaching CUPTI took the bridge's thread (thread ids, buffer callbacks, activity kinds)"),
	FIELD(isr_ev_gpu_window, drain_us, "u32", "disabling to the window's last record delivered"),
	FIELD(isr_ev_gpu_window, incomplete, "u32", "records CUPTI handed back unfinished at the close (kernels still running at the drain's end): not sent"),
	FIELD(isr_ev_gpu_window, finalize_tid, "u32", "the application thread that detached CUPTI after the previous window (0: none)"),
};

static const struct field py_frame[] = {
	FIELD(isr_py_frame, code, "u64", "address of the PyCodeObject in the target (`isr_ev_py_code.code`)"),
	FIELD(isr_py_frame, instr, "s32", "code-unit index of the instruction being executed; -1: not started"),
	FIELD(isr_py_frame, pad, "u32", "zero"),
};

static const struct field ev_py_sample[] = {
	HDR(isr_ev_py_sample),
	FIELD(isr_ev_py_sample, stack_id, "u32", "`isr_ev_py_stack.stack_id` of the stack captured"),
	FIELD(isr_ev_py_sample, kind, "u16", "`ISR_PY_KIND_*`"),
	FIELD(isr_ev_py_sample, pad, "u16", "zero"),
};

static const struct field ev_py_stack[] = {
	HDR(isr_ev_py_stack),
	FIELD(isr_ev_py_stack, stack_id, "u32", "1, 2, ... per recording"),
	FIELD(isr_ev_py_stack, flags, "u16", "`ISR_PY_STACK_*`"),
	FIELD(isr_ev_py_stack, depth, "u16", "struct isr_py_frame that follow, innermost first"),
};

static const struct field ev_py_code[] = {
	HDR(isr_ev_py_code),
	FIELD(isr_ev_py_code, code, "u64", "address of the code object in the target"),
	FIELD(isr_ev_py_code, first_line, "u32", "co_firstlineno"),
	FIELD(isr_ev_py_code, py_minor, "u16", "3.<py_minor>: the format of the line table"),
	FIELD(isr_ev_py_code, flags, "u16", "`ISR_PY_CODE_*`"),
	FIELD(isr_ev_py_code, filename_len, "u16", "bytes of co_filename (UTF-8) that follow"),
	FIELD(isr_ev_py_code, qualname_len, "u16", "bytes of co_qualname (3.10: co_name) after the file name"),
	FIELD(isr_ev_py_code, linetable_len, "u32", "bytes of co_linetable after the name (3.10: (bytes, line delta) pairs; 3.11+: the location table)"),
};

static const struct field ev_py_status[] = {
	HDR(isr_ev_py_status),
	FIELD(isr_ev_py_status, status, "u32", "`ISR_PY_STATUS_*`"),
	FIELD(isr_ev_py_status, py_minor, "u16", "3.<py_minor>, 0 when unknown"),
	FIELD(isr_ev_py_status, subject, "u16", "`ISR_PY_SUBJECT_*`: what the status is about (0, the stacks, in files written before it existed)"),
	FIELD(isr_ev_py_status, runtime, "u64", "address of _PyRuntime in the target, 0 when not found"),
	FIELD(isr_ev_py_status, detail, "char[160]", "what was checked, or what did not match; NUL-terminated"),
};

static const struct field ev_nvtx[] = {
	HDR(isr_ev_nvtx),
	FIELD(isr_ev_nvtx, id, "u64", "START, END: the range id nvtxRangeStart returned; otherwise 0"),
	FIELD(isr_ev_nvtx, kind, "u16", "`ISR_NVTX_*`"),
	FIELD(isr_ev_nvtx, flags, "u16", "`ISR_NVTX_F_*`"),
	FIELD(isr_ev_nvtx, pad, "u32", "zero"),
	FIELD(isr_ev_nvtx, name, "char[64]", "PUSH, START, MARK: the message, NUL-terminated, may be cut"),
};

static const struct struct_doc file_structs[] = {
	STRUCT(isr_file_header, "At offset 0 of every recording.", file_header),
	STRUCT(isr_chunk_header, "Starts every chunk; the stored payload follows it.", chunk_header),
	STRUCT(isr_prop, "One property of a HOST or PROCESS chunk; len value bytes and zero padding to a multiple of 8 follow it.", prop),
	STRUCT(isr_thread_info, "One element of the PROCESS property `ISR_PROP_PROC_THREADS`.", thread_info),
	STRUCT(isr_host_gpu, "The value of a HOST property `ISR_PROP_HOST_GPU` (one per NVIDIA GPU), followed by the GPU's local CPU list as text (sysfs local_cpulist, \"0-7,16-23\", no NUL) to the end of the value.", host_gpu),
	STRUCT(isr_host_numa_node, "The value of a HOST property `ISR_PROP_HOST_NUMA_NODE` (one per node), followed by distance_count struct isr_numa_distance, then the node's CPU list as text to the end of the value.", host_numa_node),
	STRUCT(isr_numa_distance, "One distance of a NUMA node, in `ISR_PROP_HOST_NUMA_NODE`.", numa_distance),
	STRUCT(isr_clock_pair, "One element of a CLOCK chunk.", clock_pair),
	STRUCT(isr_drop_count, "One element of a DROPS chunk.", drop_count),
	STRUCT(isr_end, "Start of the END chunk's payload; section_count struct isr_section follow it.", end),
	STRUCT(isr_section, "One entry of the END chunk's section table: every chunk before END, in file order.", section),
	STRUCT(isr_trailer, "The last 16 bytes of a complete file, right after the END chunk.", trailer),
};

static const struct struct_doc event_structs[] = {
	STRUCT(isr_ev_hdr, "Starts every event.", ev_hdr),
	STRUCT(isr_ev_sched_switch, "`ISR_EV_SCHED_SWITCH`: a context switch where prev or next belongs to a target. hdr.pid/tid: prev.", ev_switch),
	STRUCT(isr_ev_sched_wakeup, "`ISR_EV_SCHED_WAKEUP`, `ISR_EV_SCHED_WAKEUP_NEW`: a target thread made runnable (for the first time). hdr.pid/tid: the woken task.", ev_wakeup),
	STRUCT(isr_ev_proc_fork, "`ISR_EV_PROC_FORK`: a new process or thread. hdr.pid/tid: the parent thread.", ev_fork),
	STRUCT(isr_ev_proc_exec, "`ISR_EV_PROC_EXEC`: a new program image. hdr.pid/tid: the task after exec (the thread-group leader).", ev_exec),
	STRUCT(isr_ev_proc_exit, "`ISR_EV_PROC_EXIT`: a thread exits. hdr.pid/tid: the exiting thread.", ev_exit),
	STRUCT(isr_ev_task_info, "`ISR_EV_TASK_INFO`: the name of a task that is not a target, the first time it took a target thread's CPU or woke one. hdr.pid/tid: that target thread.", ev_task_info),
	STRUCT(isr_ev_task_rename, "`ISR_EV_TASK_RENAME`: a thread renamed (prctl(PR_SET_NAME), pthread_setname_np). hdr.pid/tid: that thread.", ev_rename),
	STRUCT(isr_ev_proc_hold, "`ISR_EV_PROC_HOLD`: written by the recorder: a target the tracer stopped (SIGSTOP, from BPF) until its probes were armed, so that no call was lost (bpf/hold.bpf.h): at its exec, when its dynamic loader had mapped a library a probe family probes, or forked by a probed process. hdr.pid/tid: the held process and its thread; hdr.ts_ns: when it was stopped.", ev_hold),
	STRUCT(isr_ev_page_fault, "`ISR_EV_PAGE_FAULT`: a page fault of a target thread on user memory, emitted when it completes; hdr.ts_ns is the completion time.", ev_fault),
	STRUCT(isr_ev_mem_sample, "`ISR_EV_MEM_SAMPLE`: a target process's memory, sampled by the recorder about once a second from /proc and the cgroup filesystem (never per event); hdr.pid the process, hdr.tid 0.", ev_mem_sample),
	STRUCT(isr_ev_reclaim, "`ISR_EV_RECLAIM`: a target thread reclaimed memory itself before it could go on (direct reclaim, or its memory cgroup's); hdr.ts_ns is when it began, emitted when it ended.", ev_reclaim),
	STRUCT(isr_ev_nccl_comm, "`ISR_EV_NCCL_COMM`: a communicator set up (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitRankScalable), emitted at the return; hdr.ts_ns is the entry. Its sequence numbers start again.", ev_nccl_comm),
	STRUCT(isr_ev_nccl_call, "`ISR_EV_NCCL_CALL`: an NCCL collective, point-to-point or group call at its entry (one probe hit, no return): the host's arrival.", ev_nccl_call),
	STRUCT(isr_ev_rank_env, "`ISR_EV_RANK_ENV`: written by the recorder: RANK, LOCAL_RANK and WORLD_SIZE of process hdr.pid, read from /proc/PID/environ when it was first probed (nothing else of the environment); only when one is set to an integer.", ev_rank_env),
	STRUCT(isr_ev_cuda_call, "`ISR_EV_CUDA_CALL`: one call of a probed CUDA function. hdr.ts_ns is the call's entry; families with a return probe are emitted at the return.", ev_cuda_call),
	STRUCT(isr_ev_cuda_name, "`ISR_EV_CUDA_NAME`: a kernel handle learned at the successful return of the call that created it, or an alias of one.", ev_cuda_name),
	STRUCT(isr_ev_sampling, "`ISR_EV_SAMPLING`: written by the recorder (hdr.pid and hdr.tid 0): the overhead budget at the start (START) and each switch of the hot-path CUDA probes (ON: live from hdr.ts_ns, the end of the attach; OFF: live until hdr.ts_ns, the start of the release); each switch of page-fault tracing (FAULTS_ON, FAULTS_OFF: the same times, spent_ns and credit_ns of its own budget; on from the start until the first FAULTS_OFF); each switch of the async copies' probes when the costs say they are switched apart (COPIES_ON, COPIES_OFF, the same way; ON and OFF then switch the other hot-path families); the tracer and its costs here (COSTS, with or without a budget; struct isr_sampling_costs follows) and what tracing cost the targets (SPENT, at the end; struct isr_sampling_spent follows).", ev_sampling),
	STRUCT(isr_sampling_costs, "Follows an `isr_ev_sampling` of kind COSTS (hdr.size = 64 + 48): what each thing the tracer does to a target thread costs it on this host, measured by the recorder at the start on threads of its own (user/record/budget_cost.h); 0: not measured.", sampling_costs),
	STRUCT(isr_sampling_spent, "Follows an `isr_ev_sampling` of kind SPENT (hdr.size = 64 + 240), once, at the end; the event's spent_ns is the budget's figure (the busiest thread of each interval of those the hot path has hit, nothing before it hits one, for its time on a CPU, as a share of the interval): what tracing cost the target threads, from what each event tells and the costs measured at the start.", sampling_spent),
	STRUCT(isr_ev_gil, "`ISR_EV_GIL`: a thread of a CPython 3.10-3.13 target took the GIL (ACQUIRE, at the return of PyEval_RestoreThread; hdr.ts_ns is its entry) or releases it (RELEASE, at the entry of PyEval_SaveThread).", ev_gil),
	STRUCT(isr_ev_gpu_kernel, "`ISR_EV_GPU_KERNEL`: a kernel ran on the GPU (CUPTI bridge). Like every gpu_* event: hdr.ts_ns is when the bridge handed its batch over, hdr.tid the thread that did; GPU times are in CUPTI's clock (docs/clock-calibration.md).", ev_gpu_kernel),
	STRUCT(isr_ev_gpu_memcpy, "`ISR_EV_GPU_MEMCPY`: a copy ran.", ev_gpu_memcpy),
	STRUCT(isr_ev_gpu_memset, "`ISR_EV_GPU_MEMSET`: a memset ran.", ev_gpu_memset),
	STRUCT(isr_ev_gpu_sync, "`ISR_EV_GPU_SYNC`: a host thread waited for the GPU.", ev_gpu_sync),
	STRUCT(isr_ev_gpu_api, "`ISR_EV_GPU_API`: a driver or runtime API call as CUPTI saw it; its correlation id joins it to the kernel or copy it started.", ev_gpu_api),
	STRUCT(isr_ev_gpu_clock, "`ISR_EV_GPU_CLOCK`: a clock reference pair, CUPTI's clock read between two CLOCK_MONOTONIC reads.", ev_gpu_clock),
	STRUCT(isr_ev_gpu_status, "`ISR_EV_GPU_STATUS`: the bridge's state and loss counters.", ev_gpu_status),
	STRUCT(isr_ev_gpu_window, "`ISR_EV_GPU_WINDOW`: a window of GPU activity collection: CUPTI was attached and collecting in process hdr.pid from open_ns to close_ns, and every record of the window was handed over before this one; between windows CUPTI is detached (nothing observed). Sent at the close, and while still open when the tracer asks for a flush (flag OPEN). A process without any: observed from its first GPU record to the end.", ev_gpu_window),
	STRUCT(isr_ev_gpu_name, "`ISR_EV_GPU_NAME`: a kernel name, sent before the first kernel record that uses its id (ids start over at each attach).", ev_gpu_name),
	STRUCT(isr_py_frame, "One Python frame, in `isr_ev_py_stack` (and in the BPF-to-recorder `isr_ev_py_frames`, which never reaches a file).", py_frame),
	STRUCT(isr_ev_py_sample, "`ISR_EV_PY_SAMPLE`: a capture of the Python stack of thread hdr.tid at hdr.ts_ns. Kind CUDA: taken at the `isr_ev_cuda_call` of the same thread with the same hdr.ts_ns.", ev_py_sample),
	STRUCT(isr_ev_py_stack, "`ISR_EV_PY_STACK`: an interned stack of process hdr.pid, written once, before the first sample naming it; depth struct isr_py_frame follow (hdr.size = 32 + 16 x depth).", ev_py_stack),
	STRUCT(isr_ev_py_code, "`ISR_EV_PY_CODE`: a code object of process hdr.pid as read from the live target when a stack first named it; the file name, the qualified name and the line table follow, then zeros to a multiple of 8.", ev_py_code),
	STRUCT(isr_ev_gil_wait, "`ISR_EV_GIL_WAIT`: a thread of a CPython 3.10-3.13 target blocked in futex() on its interpreter's GIL (seen by the scheduler, on by default). hdr.ts_ns: when it left its CPU.", ev_gil_wait),
	STRUCT(isr_ev_py_status, "`ISR_EV_PY_STATUS`: whether the Python stacks (subject STACKS) or the GIL waits (subject GIL) of process hdr.pid are captured, written once per process image and subject when its interpreter was checked.", ev_py_status),
	STRUCT(isr_ev_nvtx, "`ISR_EV_NVTX`: an NVTX range or mark of a target thread (uprobes on libnvToolsExt's entry points). hdr.ts_ns is the call's entry, for START too (emitted at its return, where the id is known).", ev_nvtx),
};

/* ---- constants ---------------------------------------------------------------- */

static const struct constant magics[] = {
	CONST(ISR_MAGIC, NULL, "file header magic: `ISRECORD` read as a little-endian u64"),
	CONST(ISR_MAGIC_SWAPPED, NULL, "what a little-endian reader sees in a file written on a big-endian machine"),
	CONST(ISR_CHUNK_MAGIC, NULL, "chunk header magic: `ICHK`"),
	CONST(ISR_TRAILER_MAGIC, NULL, "trailer magic: `ISISREND`"),
};

static const struct constant versions[] = {
	CONST(ISR_VERSION_MAJOR, NULL, "readers refuse other major versions"),
	CONST(ISR_VERSION_MINOR, NULL, "readers accept any minor version"),
	CONST(ISR_CHUNK_MAX_PAYLOAD, NULL, "largest stored or raw chunk payload a reader accepts (64 MiB)"),
};

static const struct constant chunk_kinds[] = {
	CONST(ISR_CHUNK_HOST, "HOST", "property list: `ISR_PROP_HOST_*`"),
	CONST(ISR_CHUNK_PROCESS, "PROCESS", "property list: `ISR_PROP_PROC_*` of one target process"),
	CONST(ISR_CHUNK_CLOCK, "CLOCK", "array of struct isr_clock_pair"),
	CONST(ISR_CHUNK_EVENTS, "EVENTS", "concatenated events"),
	CONST(ISR_CHUNK_DROPS, "DROPS", "array of struct isr_drop_count, cumulative"),
	CONST(ISR_CHUNK_END, "END", "struct isr_end and the section table"),
};

static const struct constant compressions[] = {
	CONST(ISR_COMPRESS_NONE, NULL, "payload stored as is: stored_size = raw_size"),
	CONST(ISR_COMPRESS_ZSTD, NULL, "payload is one or more zstd frames that decompress to raw_size bytes"),
};

static const struct constant host_props[] = {
	CONST(ISR_PROP_HOST_NAME, "string", "host name"),
	CONST(ISR_PROP_HOST_KERNEL, "string", "kernel release (uname -r)"),
	CONST(ISR_PROP_HOST_KERNEL_VERSION, "string", "kernel version (uname -v)"),
	CONST(ISR_PROP_HOST_MACHINE, "string", "architecture (uname -m)"),
	CONST(ISR_PROP_HOST_BOOT_ID, "string", "/proc/sys/kernel/random/boot_id"),
	CONST(ISR_PROP_HOST_NCPUS, "u32", "CPUs"),
	CONST(ISR_PROP_HOST_TOOL_VERSION, "string", "inferscope-bpf version that recorded"),
	CONST(ISR_PROP_HOST_COMMAND, "strings", "the recorder's argv, NUL-separated"),
	CONST(ISR_PROP_HOST_START_MONO_NS, "u64", "CLOCK_MONOTONIC when recording started"),
	CONST(ISR_PROP_HOST_DURATION_LIMIT_NS, "u64", "the -d limit; 0 = until the targets exit or Ctrl-C"),
	CONST(ISR_PROP_HOST_GPU, "struct isr_host_gpu + text", "an NVIDIA GPU: PCI address, PCIe link, NUMA node, local CPUs (one property per GPU; since minor 2)"),
	CONST(ISR_PROP_HOST_NUMA_NODE, "struct isr_host_numa_node + distances + text", "a NUMA node: memory, distances, CPUs (one property per node; since minor 2)"),
	CONST(ISR_PROP_HOST_TRIGGER, "string", "a flight-recorder window (`record --flight-recorder`): what made the recorder write it (`SIGUSR1`, `sync: cuStreamSynchronize took 512.0 ms (pid 12, tid 13)`, `end of the recording`); absent from a recording written as it went"),
};

static const struct constant proc_props[] = {
	CONST(ISR_PROP_PROC_PID, "u32", "process id (required)"),
	CONST(ISR_PROP_PROC_PPID, "u32", "parent process id"),
	CONST(ISR_PROP_PROC_COMM, "string", "process name"),
	CONST(ISR_PROP_PROC_CMDLINE, "strings", "argv, NUL-separated"),
	CONST(ISR_PROP_PROC_EXE, "string", "readlink of /proc/PID/exe"),
	CONST(ISR_PROP_PROC_MAPS, "string", "text of /proc/PID/maps"),
	CONST(ISR_PROP_PROC_THREADS, "struct isr_thread_info[]", "the threads when the snapshot was taken"),
	CONST(ISR_PROP_PROC_SEEN_MONO_NS, "u64", "CLOCK_MONOTONIC when the snapshot was taken"),
	CONST(ISR_PROP_PROC_ORIGIN, "u32", "`ISR_ORIGIN_*`: how the process became a target"),
};

static const struct constant origins[] = {
	CONST(ISR_ORIGIN_ATTACHED, NULL, "named with -p"),
	CONST(ISR_ORIGIN_LAUNCHED, NULL, "started by the recorder (-- CMD)"),
	CONST(ISR_ORIGIN_CHILD, NULL, "forked by a target after recording began"),
	CONST(ISR_ORIGIN_EXEC, NULL, "a target that called exec (new image)"),
	CONST(ISR_ORIGIN_DESCENDANT, NULL, "a descendant of a -p process, running when recording began"),
};

static const struct constant clocks[] = {
	CONST(ISR_CLOCK_REALTIME, NULL, "other_ns is CLOCK_REALTIME"),
};

/* From the registry (format/events.h), and the one type that never reaches
 * a file. */
#define EVENT_TYPE_ROW(ID, name, value, st, drops, evflags, iv, who, ...) \
	CONST(ISR_EV_##ID, #name, "struct " #st "; lost ones: `" #drops "`; flags `" #evflags "`; `" #iv "`; `" #who "`"),
static const struct constant event_types[] = {
	ISR_EVENT_TYPES(EVENT_TYPE_ROW)
	CONST(ISR_EV_PY_FRAMES, "(none)", "struct isr_ev_py_frames, BPF to recorder only, turned into py_stack / py_code / py_sample: never in a file"),
};
#undef EVENT_TYPE_ROW

static const struct constant gpu_window_flags[] = {
	CONST(ISR_GPU_WINDOW_OPEN, "OPEN", "still collecting: observed up to close_ns so far (the answer to a flush request)"),
	CONST(ISR_GPU_WINDOW_EXIT, "EXIT", "closed by the process's exit"),
};

static const struct constant gpu_states[] = {
	CONST(ISR_GPU_ENABLED, "ENABLED", "a tracer attached and activity collection is on (also sent with new CUPTI drops)"),
	CONST(ISR_GPU_FLUSHED, "FLUSHED", "every record completed before this one was handed over"),
	CONST(ISR_GPU_FAILED, "FAILED", "CUPTI is missing or refused; cupti_error says why"),
};

static const struct constant gpu_apis[] = {
	CONST(ISR_GPU_API_DRIVER, "DRIVER", "CUPTI_ACTIVITY_KIND_DRIVER: cbid is a CUPTI_DRIVER_TRACE_CBID_*"),
	CONST(ISR_GPU_API_RUNTIME, "RUNTIME", "CUPTI_ACTIVITY_KIND_RUNTIME: cbid is a CUPTI_RUNTIME_TRACE_CBID_*"),
};

static const struct constant gpu_limits[] = {
	CONST(ISR_GPU_BATCH_MAX_BYTES, NULL, "the largest batch the bridge hands over in one probe hit"),
	CONST(ISR_GPU_BATCH_MAX_RECORDS, NULL, "records BPF copies from one batch; more are counted in drop source gpu"),
	CONST(ISR_GPU_NAME_LEN, NULL, "bytes of isr_ev_gpu_name.name"),
};

static const struct constant costs_flags[] = {
	CONST(ISR_COSTS_COPIES_APART, NULL, "the async copies have a switch and a budget of their own (COPIES_ON, COPIES_OFF); without it they are switched with the hot path (ON, OFF)"),
};

static const struct constant sampling_kinds[] = {
	CONST(ISR_SAMPLING_START, NULL, "the budget's settings at the start; the hot-path probes are on"),
	CONST(ISR_SAMPLING_ON, NULL, "the hot-path probes were attached again"),
	CONST(ISR_SAMPLING_OFF, NULL, "the hot-path probes were released"),
	CONST(ISR_SAMPLING_COSTS, NULL, "the tracer and what each thing it does costs a target thread here; struct isr_sampling_costs follows"),
	CONST(ISR_SAMPLING_SPENT, NULL, "what tracing cost the target threads, at the end; struct isr_sampling_spent follows"),
	CONST(ISR_SAMPLING_FAULTS_ON, NULL, "page-fault tracing was switched on again (it is on from the start)"),
	CONST(ISR_SAMPLING_FAULTS_OFF, NULL, "page-fault tracing was switched off"),
	CONST(ISR_SAMPLING_COPIES_ON, NULL, "the async copies' probes were attached again (they are on from the start)"),
	CONST(ISR_SAMPLING_COPIES_OFF, NULL, "the async copies' probes were released"),
};

#define SPENT_CONST_ROW(ID, name, value, meaning) CONST(ISR_SPENT_##ID, #name, meaning),
static const struct constant spent_kinds[] = { ISR_SPENT_KINDS(SPENT_CONST_ROW) };
#undef SPENT_CONST_ROW

static const struct constant py_kinds[] = {
	CONST(ISR_PY_KIND_TIMER, "sampled", "CPU-clock sample (--py-stacks HZ)"),
	CONST(ISR_PY_KIND_CUDA, "cuda", "at a CUDA synchronization, a sampled launch (--py-launch-every) or a device memory allocation"),
};

static const struct constant mem_flags[] = {
	CONST(ISR_MEM_CGROUP, NULL, "the cg_* fields are the process's memory cgroup's (cgroup v2)"),
	CONST(ISR_MEM_PSI, NULL, "psi_* were read: the cgroup's memory.pressure, else /proc/pressure/memory"),
	CONST(ISR_MEM_PSI_HOST, NULL, "psi_* are the host's (/proc/pressure/memory)"),
	CONST(ISR_MEM_NUMA, NULL, "numa_bytes was read from /proc/PID/numa_maps in this sample (every tenth)"),
};

static const struct constant reclaim_kinds[] = {
	CONST(ISR_RECLAIM_DIRECT, NULL, "the page allocator found too little free memory (mm_vmscan_direct_reclaim_*)"),
	CONST(ISR_RECLAIM_MEMCG, NULL, "the thread's memory cgroup is at its limit or over memory.high (mm_vmscan_memcg_reclaim_*)"),
};

static const struct constant py_statuses[] = {
	CONST(ISR_PY_STATUS_SAMPLING, "sampling", "layout validated: stacks captured"),
	CONST(ISR_PY_STATUS_LAYOUT_MISMATCH, "layout_mismatch", "the interpreter's memory does not match its version's layout: no stacks"),
	CONST(ISR_PY_STATUS_UNSUPPORTED, "unsupported", "no known layout for this version or build: no stacks"),
};

static const struct constant py_subjects[] = {
	CONST(ISR_PY_SUBJECT_STACKS, "stacks", "the Python stacks: the report's `python.processes[]`"),
	CONST(ISR_PY_SUBJECT_GIL, "gil_waits", "the GIL waits the scheduler sees: the report's `python.gil[]`"),
};

static const struct constant gil_kinds[] = {
	CONST(ISR_GIL_ACQUIRE, "PyEval_RestoreThread", "the thread took the GIL; wait_ns is how long it waited"),
	CONST(ISR_GIL_RELEASE, "PyEval_SaveThread", "the thread releases the GIL"),
};

static const struct constant nvtx_kinds[] = {
	CONST(ISR_NVTX_PUSH, "push", "nvtxRangePushA/Ex: a range opens on the thread's stack of ranges"),
	CONST(ISR_NVTX_POP, "pop", "nvtxRangePop: the thread's innermost open range closes"),
	CONST(ISR_NVTX_START, "start", "nvtxRangeStartA/Ex returned id: a range any thread may end"),
	CONST(ISR_NVTX_END, "end", "nvtxRangeEnd(id)"),
	CONST(ISR_NVTX_MARK, "mark", "nvtxMarkA/Ex: an instant"),
};

static const struct constant nvtx_flags[] = {
	CONST(ISR_NVTX_F_EX, NULL, "from an Ex variant (event attributes)"),
	CONST(ISR_NVTX_F_NO_NAME, NULL, "the message was not ASCII (Unicode, a registered string) or could not be read"),
};

static const struct constant event_flags[] = {
	CONST(ISR_SWITCH_PREEMPT, NULL, "sched_switch: involuntary, the kernel preempted prev"),
	CONST(ISR_SWITCH_RUNNABLE, NULL, "sched_switch: prev stays runnable (preempted or yielded)"),
	CONST(ISR_FORK_THREAD, NULL, "fork: the child is a new thread of the parent's process"),
	CONST(ISR_FORK_FOLLOWED, NULL, "fork: the child process was added to the targets"),
	CONST(ISR_EXIT_GROUP_DEAD, NULL, "exit: last thread of the process"),
	CONST(ISR_HOLD_FORK, NULL, "proc_hold reason: forked by a process with uprobes of its own, held before it first ran"),
	CONST(ISR_HOLD_LIB, NULL, "proc_hold reason: its dynamic loader had mapped a library a probe family probes, not yet run"),
	CONST(ISR_HOLD_EXEC, NULL, "proc_hold reason: its exec, before the new image's first instruction"),
	CONST(ISR_FAULT_MAJOR, NULL, "page fault: needed I/O (the kernel's major-fault accounting)"),
	CONST(ISR_FAULT_HAS_START, NULL, "page fault: entry was seen, duration_ns is valid"),
	CONST(ISR_FAULT_WRITE, NULL, "page fault: write access"),
	CONST(ISR_FAULT_INSTR, NULL, "page fault: instruction fetch"),
	CONST(ISR_CUDA_RETURNED, NULL, "cuda_call: the return was probed, status and duration_ns are valid"),
	CONST(ISR_CUDA_ASYNC, NULL, "cuda_call: a stream-ordered variant (copied from the function table)"),
	CONST(ISR_CUDA_PTDS, NULL, "cuda_call: a per-thread default stream variant, `_ptsz` / `_ptds`"),
	CONST(ISR_CUDA_RUNTIME, NULL, "cuda_call: a CUDA runtime (libcudart) function"),
	CONST(ISR_CUDA_POLL, NULL, "cuda_call: a query, which returns at once whether work finished"),
	CONST(ISR_PY_STACK_TRUNCATED, NULL, "py_stack: deeper than 64 frames, the outermost are missing"),
	CONST(ISR_PY_STACK_INVALID, NULL, "py_stack: the walk met a frame whose code is not a code object and stopped there"),
	CONST(ISR_PY_CODE_LINETABLE_CUT, NULL, "py_code: the line table was cut to fit the record; later lines unknown"),
	CONST(ISR_GIL_WAIT_HOLDER, NULL, "gil_wait: holder_tid is known"),
	CONST(ISR_GIL_WAIT_MUTEX, NULL, "gil_wait: it blocked on the GIL's mutex, not on its condition variable"),
	CONST(ISR_RANK_ENV_RANK, NULL, "rank_env: RANK was set"),
	CONST(ISR_RANK_ENV_LOCAL_RANK, NULL, "rank_env: LOCAL_RANK was set"),
	CONST(ISR_RANK_ENV_WORLD_SIZE, NULL, "rank_env: WORLD_SIZE was set"),
};

#define SOURCE_ROW(ID, name, value, meaning) CONST(ISR_SRC_##ID, #name, meaning),
static const struct constant sources[] = { ISR_DROP_SOURCES(SOURCE_ROW) };
#undef SOURCE_ROW

#define STOP_ROW(ID, name, value, meaning) CONST(ISR_STOP_##ID, #name, meaning),
static const struct constant stop_reasons[] = { ISR_STOP_REASONS(STOP_ROW) };
#undef STOP_ROW

static const struct constant cuda_families[] = {
	CONST(ISR_CUDA_FAM_LAUNCH, "LAUNCH", "kernel launch: (f, grid x, y, z, block x, y, z, shared bytes, stream)"),
	CONST(ISR_CUDA_FAM_LAUNCH_EX, "LAUNCH_EX", "kernel launch with a config: (const CUlaunchConfig *, f, ...)"),
	CONST(ISR_CUDA_FAM_GRAPH, "GRAPH", "graph launch: (CUgraphExec, stream)"),
	CONST(ISR_CUDA_FAM_COPY, "COPY", "copy: (dst, src, bytes[, stream])"),
	CONST(ISR_CUDA_FAM_COPY_PEER, "COPY_PEER", "copy between devices: (dst, dst context, src, src context, bytes[, stream])"),
	CONST(ISR_CUDA_FAM_COPY_2D, "COPY_2D", "2D copy: (const CUDA_MEMCPY2D *[, stream])"),
	CONST(ISR_CUDA_FAM_COPY_3D, "COPY_3D", "3D copy: (const CUDA_MEMCPY3D *[, stream])"),
	CONST(ISR_CUDA_FAM_SET, "SET", "memset: (dst, value, count[, stream])"),
	CONST(ISR_CUDA_FAM_SYNC, "SYNC", "+ret, blocking or polling synchronization: (handle[, handle2])"),
	CONST(ISR_CUDA_FAM_ALLOC, "ALLOC", "+ret, allocation: (out pointer, bytes[, flags or stream])"),
	CONST(ISR_CUDA_FAM_FREE, "FREE", "+ret, free: (pointer[, stream])"),
	CONST(ISR_CUDA_FAM_VMM_CREATE, "VMM_CREATE", "+ret, physical memory: (out handle, size, prop, flags)"),
	CONST(ISR_CUDA_FAM_VMM_RELEASE, "VMM_RELEASE", "+ret, release of physical memory: (handle)"),
	CONST(ISR_CUDA_FAM_VMM_MAP, "VMM_MAP", "+ret, mapping: (pointer, size, offset, handle, flags)"),
	CONST(ISR_CUDA_FAM_VMM_UNMAP, "VMM_UNMAP", "+ret, unmapping: (pointer, size)"),
	CONST(ISR_CUDA_FAM_NAME, "NAME", "+ret, names a kernel: (out handle, owner, const char *name); emits cuda_name"),
	CONST(ISR_CUDA_FAM_ALIAS, "ALIAS", "+ret, a function of a named kernel: (out function, kernel); emits cuda_name"),
	CONST(ISR_CUDA_FAM_COPY_SYNC, "COPY_SYNC", "+ret, synchronous copy, timed: (dst, src, bytes)"),
	CONST(ISR_CUDA_FAM_REGISTER, "REGISTER", "+ret, page-locks host memory the program allocated: (pointer, bytes, flags)"),
	CONST(ISR_CUDA_FAM_UNREGISTER, "UNREGISTER", "+ret, unlocks registered host memory: (pointer)"),
};

static const struct constant copy_directions[] = {
	CONST(ISR_COPY_HTOD, "HTOD", "host to device"),
	CONST(ISR_COPY_DTOH, "DTOH", "device to host"),
	CONST(ISR_COPY_DTOD, "DTOD", "device to device"),
	CONST(ISR_COPY_DEFAULT, "DEFAULT", "unified addressing: direction from the pointers"),
	CONST(ISR_COPY_PEER, "PEER", "between devices"),
};

static const struct constant alloc_kinds[] = {
	CONST(ISR_ALLOC_DEVICE, "DEVICE", "device memory"),
	CONST(ISR_ALLOC_ASYNC, "ASYNC", "device memory from a stream-ordered pool"),
	CONST(ISR_ALLOC_MANAGED, "MANAGED", "managed (unified) memory"),
	CONST(ISR_ALLOC_HOST, "HOST", "page-locked (pinned) host memory"),
};

static const struct const_doc const_tables[] = {
	CONSTS("Magic numbers", NULL, 1, "value", NULL, magics),
	CONSTS("Version and limits", NULL, 0, "value", NULL, versions),
	CONSTS("Chunk kinds (`isr_chunk_header.kind`)", NULL, 0, "kind", "name", chunk_kinds),
	CONSTS("Compression (`isr_chunk_header.compression`)", NULL, 0, "value", NULL, compressions),
	CONSTS("HOST properties (`isr_prop.key` in a HOST chunk)", NULL, 0, "key", "value type", host_props),
	CONSTS("PROCESS properties (`isr_prop.key` in a PROCESS chunk)", NULL, 0, "key", "value type", proc_props),
	CONSTS("Process origins (`ISR_PROP_PROC_ORIGIN`)", NULL, 0, "value", NULL, origins),
	CONSTS("Clocks (`isr_clock_pair.clock`)", NULL, 0, "value", NULL, clocks),
	CONSTS("Event types (`isr_ev_hdr.type`)",
	       "Name: what readers display. Meaning: the record's struct, the drop source that counts the "
	       "lost ones, and the registry's flags, interval and task (format/events.h: `ISR_EVF_*`, "
	       "`ISR_IV_*`, `ISR_WHO_*`), from which readers derive when an event happened and whom it is about.",
	       0, "type", "name", event_types),
	CONSTS("Event flags", NULL, 1, "bit", NULL, event_flags),
	CONSTS("GIL event kinds (`isr_ev_gil.kind`)", "Name: the probed function, the key of the event in the report's event_counts.", 0, "kind", "name", gil_kinds),
	CONSTS("Sampling event kinds (`isr_ev_sampling.kind`)", NULL, 0, "kind", NULL, sampling_kinds),
	CONSTS("Cost flags (`isr_sampling_costs.flags`)", NULL, 1, "bit", NULL, costs_flags),
	CONSTS("What tracing cost, by kind (`isr_sampling_spent` arrays' index)", NULL, 0, "kind", "report key", spent_kinds),
	CONSTS("Reclaim kinds (`isr_ev_reclaim.kind`)", NULL, 0, "kind", NULL, reclaim_kinds),
	CONSTS("Memory sample flags (`isr_ev_mem_sample.flags`)", NULL, 1, "flag", NULL, mem_flags),
	CONSTS("GPU bridge states (`isr_ev_gpu_status.state`)", NULL, 0, "state", "name", gpu_states),
	CONSTS("GPU API kinds (`isr_ev_gpu_api.api`)", NULL, 0, "api", "name", gpu_apis),
	CONSTS("GPU window flags (`isr_ev_gpu_window.flags`)", NULL, 1, "bit", "name", gpu_window_flags),
	CONSTS("GPU batch limits", NULL, 0, "value", NULL, gpu_limits),
	CONSTS("Python capture kinds (`isr_ev_py_sample.kind`)", NULL, 0, "kind", "name", py_kinds),
	CONSTS("Python stack status (`isr_ev_py_status.status`)", "Name: the report's `python.processes[].stacks` (subject STACKS); for subject GIL `sampling` reads `traced` (`python.gil[].gil_waits`).", 0, "status", "name", py_statuses),
	CONSTS("Python status subjects (`isr_ev_py_status.subject`)", NULL, 0, "subject", "name", py_subjects),
	CONSTS("NVTX event kinds (`isr_ev_nvtx.kind`)", NULL, 0, "kind", "name", nvtx_kinds),
	CONSTS("NVTX event flags (`isr_ev_nvtx.flags`)", NULL, 1, "bit", NULL, nvtx_flags),
	CONSTS("Drop sources (`isr_drop_count.source`)", "Name: what readers display.", 0, "source", "name", sources),
	CONSTS("CUDA function families (`format/cuda_funcs.h`)", "+ret: the return is probed too (duration and status known).", 0, "family", "name", cuda_families),
	CONSTS("Copy directions (aux of the COPY families, args[3] of their calls)", NULL, 0, "value", "name", copy_directions),
	CONSTS("Allocation kinds (aux of ALLOC / FREE, args[3] of their calls)", NULL, 0, "value", "name", alloc_kinds),
	CONSTS("Stop reasons (`isr_end.stop_reason`)", "Name: what readers display.", 0, "reason", "name", stop_reasons),
};

/* ---- CUDA functions (format/cuda_funcs.h) ------------------------------------------ */

struct cuda_fn_row {
	unsigned id;
	const char *symbol;
	unsigned family, aux, flags;
};

#define CUDA_FN_ROW(id, sym, fam, aux, flags) { id, #sym, fam, aux, flags },
static const struct cuda_fn_row cuda_fns[] = { ISR_CUDA_FUNCS(CUDA_FN_ROW) };
#undef CUDA_FN_ROW

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The name column of the row of value v in items, or NULL. */
static const char *const__name(const struct constant *items, size_t n, unsigned long long v)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].value == v)
			return items[i].name;
	return NULL;
}

/* aux as its family reads it; "-" when the family has none. */
static void cuda_aux__print(const struct cuda_fn_row *f)
{
	const char *name = NULL;

	switch (f->family) {
	case ISR_CUDA_FAM_COPY:
	case ISR_CUDA_FAM_COPY_PEER:
	case ISR_CUDA_FAM_COPY_SYNC:
		name = const__name(copy_directions, COUNT(copy_directions), f->aux);
		break;
	case ISR_CUDA_FAM_ALLOC:
	case ISR_CUDA_FAM_FREE:
		name = const__name(alloc_kinds, COUNT(alloc_kinds), f->aux);
		break;
	case ISR_CUDA_FAM_SET:
		printf(" %u-byte elements |", f->aux);
		return;
	default:
		break;
	}
	if (name)
		printf(" %s |", name);
	else if (f->aux)
		printf(" %u |", f->aux);
	else
		printf(" - |");
}

static int cuda_fns__print(void)
{
	static const struct { unsigned bit; const char *name; } flags[] = {
		{ ISR_CUDA_ASYNC, "ASYNC" }, { ISR_CUDA_PTDS, "PTDS" }, { ISR_CUDA_RUNTIME, "RUNTIME" },
		{ ISR_CUDA_POLL, "POLL" },
	};
	unsigned prev = 0;

	printf("#### CUDA functions\n\nEvery probed function (`ISR_CUDA_FN_<symbol>`, the `func` of "
	       "cuda_call and cuda_name events). Symbol: the exact ELF symbol, which is also the name "
	       "readers display. Ids are never reused: new functions are appended.\n\n");
	printf("| id | symbol | family | aux | flags |\n| ---: | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < COUNT(cuda_fns); i++) {
		const struct cuda_fn_row *f = &cuda_fns[i];
		const char *family = const__name(cuda_families, COUNT(cuda_families), f->family);
		unsigned shown = 0;

		if (f->id <= prev || !family) {
			fprintf(stderr, "format_tables: format/cuda_funcs.h: %s has id %u after id %u or an "
				"unknown family %u: ids must be unique and ascending, families listed in "
				"tests/unit/format_tables.c\n", f->symbol, f->id, prev, f->family);
			return -1;
		}
		prev = f->id;
		printf("| %u | `%s` | %s |", f->id, f->symbol, family);
		cuda_aux__print(f);
		for (size_t j = 0; j < COUNT(flags); j++)
			if (f->flags & flags[j].bit)
				printf("%s%s", shown++ ? " \\| " : " ", flags[j].name);
		if (f->flags & ~(unsigned)(ISR_CUDA_ASYNC | ISR_CUDA_PTDS | ISR_CUDA_RUNTIME | ISR_CUDA_POLL)) {
			fprintf(stderr, "format_tables: format/cuda_funcs.h: %s has flags 0x%x that "
				"tests/unit/format_tables.c does not know\n", f->symbol, f->flags);
			return -1;
		}
		printf("%s |\n", shown ? "" : " -");
	}
	printf("\n");
	return 0;
}

static int struct__print(const struct struct_doc *s)
{
	size_t i, next = 0;

	printf("#### struct %s (%zu bytes)\n\n%s\n\n", s->name, s->size, s->intro);
	printf("| field | offset | size | type | meaning |\n");
	printf("| --- | ---: | ---: | --- | --- |\n");
	for (i = 0; i < s->field_count; i++) {
		const struct field *f = &s->fields[i];

		if (f->offset != next) {
			fprintf(stderr, "format_tables: struct %s: field %s at offset %zu, expected %zu: "
				"a field is missing from tests/unit/format_tables.c\n",
				s->name, f->name, f->offset, next);
			return -1;
		}
		printf("| `%s` | %zu | %zu | %s | %s |\n", f->name, f->offset, f->size, f->type, f->meaning);
		next = f->offset + f->size;
	}
	if (next != s->size) {
		fprintf(stderr, "format_tables: struct %s: fields end at %zu, the struct at %zu: "
			"a field is missing from tests/unit/format_tables.c\n", s->name, next, s->size);
		return -1;
	}
	printf("\n");
	return 0;
}

/* A table cell: a '|' of the text escaped. */
static void cell__print(const char *text)
{
	for (; *text; text++)
		printf(*text == '|' ? "\\|" : "%c", *text);
}

static void consts__print(const struct const_doc *t)
{
	size_t i;

	printf("#### %s\n\n", t->title);
	if (t->intro)
		printf("%s\n\n", t->intro);
	if (t->name_col)
		printf("| %s | macro | %s | meaning |\n| ---: | --- | --- | --- |\n", t->num_col, t->name_col);
	else
		printf("| %s | macro | meaning |\n| ---: | --- | --- |\n", t->num_col);
	for (i = 0; i < t->count; i++) {
		const struct constant *c = &t->items[i];

		if (t->hex)
			printf("| 0x%llx | `%s` |", c->value, c->macro);
		else
			printf("| %llu | `%s` |", c->value, c->macro);
		if (t->name_col)
			printf(" %s |", c->name);
		printf(" ");
		cell__print(c->meaning);
		printf(" |\n");
	}
	printf("\n");
}

/* Every struct of the event registry has its table in event_structs. */
static int event_structs__check(void)
{
	static const char *const registered[] = {
#define EVENT_STRUCT_NAME(ID, name, value, st, ...) #st,
		ISR_EVENT_TYPES(EVENT_STRUCT_NAME)
#undef EVENT_STRUCT_NAME
	};
	size_t i, j;

	for (i = 0; i < COUNT(registered); i++) {
		for (j = 0; j < COUNT(event_structs) && strcmp(event_structs[j].name, registered[i]); j++)
			;
		if (j == COUNT(event_structs)) {
			fprintf(stderr, "format_tables: struct %s of the event registry (format/events.h) has no "
				"table in event_structs of tests/unit/format_tables.c: list its fields there\n",
				registered[i]);
			return -1;
		}
	}
	return 0;
}

int main(void)
{
	size_t i;

	if (event_structs__check())
		return 1;

	printf("<!-- Generated by tests/unit/format_tables.c from format/events.h, format/cuda_funcs.h and"
	       " format/isr_format.h; edit those and run `make docs`. -->\n\n");
	printf("### File structures\n\n");
	for (i = 0; i < sizeof(file_structs) / sizeof(file_structs[0]); i++)
		if (struct__print(&file_structs[i]))
			return 1;
	printf("### Events\n\n");
	for (i = 0; i < sizeof(event_structs) / sizeof(event_structs[0]); i++)
		if (struct__print(&event_structs[i]))
			return 1;
	printf("### Constants\n\n");
	for (i = 0; i < sizeof(const_tables) / sizeof(const_tables[0]); i++)
		consts__print(&const_tables[i]);
	if (cuda_fns__print())
		return 1;
	if (fflush(stdout) || ferror(stdout)) {
		perror("format_tables: writing the tables");
		return 1;
	}
	return 0;
}
