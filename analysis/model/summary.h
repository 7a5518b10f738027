/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread scheduling and fault summary of a recording. Pure: a function
 * of the events it is fed in pass order (pass.h), with memory per thread,
 * process, function, kernel and live allocation, never per event.
 *
 * Definitions (docs/report-json.md states them for users):
 *   on-CPU         switched in until switched out.
 *   off-CPU        switched out until switched in again (or exit / end).
 *   run-queue wait the part of off-CPU during which the thread was runnable:
 *                  from a preemption (switched out while runnable) or a
 *                  wakeup until it next ran.
 *   blocked        off-CPU minus run-queue wait.
 *   waker          the task that woke the thread (sched_wakeup's current
 *                  task; for a wakeup from an interrupt, the task it
 *                  interrupted). Wakeups by the idle task (tid 0) and by the
 *                  thread itself are not attributed. A wakeup of a blocked
 *                  thread ends its blocked interval (switch-out to wakeup):
 *                  that interval is the waker's blocked time.
 * A thread's window runs from the start of the recording (or its creation)
 * to its exit (or the end). Time before its first scheduling event is
 * attributed from that event's direction: a first switch-out means it was
 * running, a first switch-in or wakeup that it was off-CPU.
 *
 * CUDA (format/cuda_funcs.h):
 *   device memory  live bytes of a process: successful allocations of kinds
 *                  DEVICE, ASYNC and MANAGED not yet freed, plus physical
 *                  VMM handles (cuMemCreate) not yet released. Pinned host
 *                  memory (kind HOST) is counted apart. A free is matched by
 *                  address to the live allocation; a free of an address not
 *                  allocated during the recording is an unknown free and
 *                  changes nothing. Only calls that returned CUDA_SUCCESS
 *                  change memory; a process's memory is gone when it execs
 *                  or its last thread exits. Peak: the highest live value.
 *   failed         a call whose return was probed with a status other than
 *                  CUDA_SUCCESS, except CUDA_ERROR_NOT_READY from the query
 *                  functions (cuEventQuery, cuStreamQuery): that is their
 *                  ordinary "still running" answer, counted as not_ready.
 *   sync time      duration of a thread's synchronizations: the calls that
 *                  block it until the GPU is done (ISR_CUDA_K_SYNC: the
 *                  blocking SYNC-family calls and the timed synchronous
 *                  copies, family COPY_SYNC; not the queries, which return
 *                  at once, nor cuStreamWaitEvent, which makes a stream wait).
 *   launches       calls of the LAUNCH, LAUNCH_EX and GRAPH families.
 *   kernels        launch handles (args[0] of LAUNCH / LAUNCH_EX) per
 *                  process, named by cuda_name events; an alias (a function
 *                  of a kernel) takes the name of the kernel it belongs to.
 *   sampled        when the overhead budget switched the hot path off
 *                  (analysis/model/sampling.h), the counts of entry-only calls
 *                  (per function, kernel and thread) are estimates: the
 *                  observed calls times their process's scale, rounded;
 *                  `observed` keeps what was recorded.
 *
 * GPU activity (CUPTI bridge, isr_ev_gpu_*):
 *   mapped time    GPU clock times mapped onto CLOCK_MONOTONIC with the
 *                  process's clock fit (analysis/read/clock_fit.h) of its
 *                  isr_ev_gpu_clock pairs. Without pairs, nothing that
 *                  needs CPU time (busy, idle, causality) is computed.
 *   busy           the union of the mapped intervals of a device's
 *                  kernels, copies and memsets of one process, clipped to
 *                  the recording window; idle fraction = 1 - busy / window.
 *   windows        a process whose bridge collected in windows: busy over
 *                  its span is extrapolated per launch (gpu_summary.c,
 *                  busy_by_launches), idle fraction = 1 - that / span.
 *   join           a kernel's correlation id names a launch API record
 *                  (DRIVER: cuLaunchKernel*, cuLaunchCooperativeKernel*,
 *                  cuGraphLaunch*), which is matched to the launch uprobe
 *                  event (isr_ev_cuda_call of family LAUNCH, LAUNCH_EX or
 *                  GRAPH) of the same thread nearest to the record's mapped
 *                  start, within JOIN_WINDOW_NS plus the fit's bound, each
 *                  event used once. A kernel that starts more than 10 s
 *                  after its launch record, or more than 1 s before it, is
 *                  unjoined (gpu_summary.c: the join's state is bounded in
 *                  time).
 *   causality      a joined kernel whose mapped GPU start is before its
 *                  launch call's entry is a violation (the clock mapping or
 *                  the join is wrong); counted, with the worst gap.
 *   launch to start  the median over the joined kernels of a process from
 *                  launch entry to mapped GPU start, from a histogram whose
 *                  buckets span 1/64 of a power of two: the middle of the
 *                  bucket of the exact (lower) median, within 0.8% of it
 *                  (exact below 128 ns).
 *
 * Python (isr_ev_gil, isr_ev_gil_wait):
 *   GIL wait       entry to return of PyEval_RestoreThread: a thread taking
 *                  the GIL back after a call that released it (--gil); for
 *                  a thread with no such return, its GIL blocked time.
 *   GIL blocked    the scheduler's GIL waits: from leaving its CPU inside
 *                  futex() on its interpreter's GIL to being switched back
 *                  in (every take of the GIL that had to wait, the first
 *                  of a new thread's too).
 *   GIL hold       from RestoreThread's return (for a thread whose first
 *                  GIL event is a release: from its window start) to its
 *                  next PyEval_SaveThread, or to its exit / the end. An
 *                  upper bound: hand-overs inside the eval loop (the switch
 *                  interval) are not seen and count as held.
 */
#ifndef INFERSCOPE_SUMMARY_H
#define INFERSCOPE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "recording.h"
#include "pass.h"
#include "sampling.h"
#include "clock_fit.h"

#define SUMMARY_SYNC_FNS	3
#define SUMMARY_FN_NAME_LEN	40

/* The task that woke a thread most often: its wakeups of the thread and the
 * blocked time they ended. */
struct waker_summary {
	__u32 pid, tid;			/* tid 0: no attributed wakeup */
	__u64 wakeups;
	__u64 blocked_ns;
};

struct thread_summary {
	__u32 pid, tid;
	char comm[16];
	__u64 start_ns, end_ns;		/* observation window (monotonic) */
	bool created;			/* created during the recording */
	bool exited;			/* exited during the recording */
	__u64 on_cpu_ns;
	__u64 off_cpu_ns;
	__u64 runqueue_wait_ns;
	__u64 blocked_io_ns;		/* off-CPU in uninterruptible sleep (D state) */
	__u64 switches_voluntary, switches_involuntary;
	__u64 wakeups;
	struct waker_summary top_waker;	/* most wakeups, then most blocked time */
	__u64 minor_faults, major_faults;
	__u64 fault_ns;			/* time inside fault handling (faults with a known start) */
	__u64 major_fault_ns;
	bool faults_estimated;		/* the four above extrapolated from page-fault tracing's windows */
	__u64 cuda_calls;		/* isr_ev_cuda_call events of the thread (estimated when sampled) */
	__u64 cuda_launches;		/* (estimated when sampled) */
	__u64 cuda_launches_observed;
	bool cuda_estimated;		/* its counts include sampled calls */
	__u64 cuda_sync_ns;
	__u16 cuda_sync_fns[SUMMARY_SYNC_FNS];	/* most sync time first; 0 ends the list */
	__u64 gil_wait_ns;		/* waiting for the GIL: --gil's when measured, else gil_blocked_ns */
	__u64 gil_hold_ns;		/* holding the GIL (upper bound, see above) */
	bool gil_hold_measured;		/* an acquire or release (--gil) was seen: else its hold is unknown,
					 * not 0 (a CPU-bound thread hands the GIL over inside the
					 * interpreter, never through PyEval_SaveThread) */
	__u64 gil_acquisitions;		/* PyEval_RestoreThread returns */
	__u64 gil_blocked_ns;		/* blocked on its GIL (isr_ev_gil_wait: the scheduler's) */
	__u64 gil_blocks;		/* isr_ev_gil_wait events */
};

/* The calls of one CUDA function in the whole recording. */
struct cuda_fn_summary {
	__u16 func;			/* ISR_CUDA_FN_* */
	char name[SUMMARY_FN_NAME_LEN];	/* its symbol, or "cuda_fn_<id>" for an unknown id */
	__u64 calls;			/* isr_ev_cuda_call events (estimated when sampled) */
	__u64 observed;			/* isr_ev_cuda_call events */
	bool estimated;			/* an entry-only function of a sampled recording */
	__u64 names;			/* isr_ev_cuda_name events it emitted */
	__u64 returned;			/* calls whose return was probed: duration and status known */
	__u64 failed;
	__u64 not_ready;		/* query calls answered CUDA_ERROR_NOT_READY */
	__s32 last_error;		/* status of the latest failed call */
	__u64 total_ns, max_ns;		/* durations of the returned calls */
};

struct cuda_fn_count {
	__u16 func;
	__u64 count;
};

/* CUDA memory and failures of one process (pid). */
struct process_summary {
	__u32 pid;
	__u64 device_live_bytes, device_peak_bytes;
	__u64 device_held_at_exit_bytes;	/* live when it exited or exec'd (summed over images) */
	__u64 pinned_host_live_bytes, pinned_host_peak_bytes;
	__u64 unknown_frees;		/* frees / releases of memory not allocated while recording */
	struct cuda_fn_count *failed;	/* failed calls by function, sorted by func */
	size_t failed_count;
};

/* A launched kernel handle of a process. */
/* Distinct kernels the analysis keeps, all processes together: launch
 * handles (CUDA) and name ids (CUPTI), each. Those first seen after them
 * are counted together, one entry per process named SUMMARY_OTHER_KERNELS
 * (a launch handle of KERNEL_OTHER_HANDLE; a name id of
 * KERNEL_OTHER_NAME_ID), so that a recording of countless distinct
 * kernels takes bounded memory (the report says so). */
#define SUMMARY_MAX_KERNELS	16384
#define SUMMARY_OTHER_KERNELS	"(other kernels)"
#define KERNEL_OTHER_HANDLE	UINT64_MAX
#define KERNEL_OTHER_NAME_ID	UINT32_MAX

struct kernel_summary {
	__u32 pid;
	__u64 handle;
	char *name;			/* demangled when possible; "kernel@0x<handle>" when never named */
	bool named;
	__u64 launches;			/* estimated when sampled */
	__u64 observed_launches;
	bool estimated;
};

/* Kernels of one name in one process. */
struct gpu_kernel_stat {
	__u32 pid;
	char *name;			/* demangled when possible; "kernel#<id>" when never named */
	__u64 count;
	__u64 total_ns, min_ns, max_ns;	/* GPU durations (end - start) */
};

/* The display name of the kernels of one name id of one process. */
struct gpu_kernel_name {
	__u32 pid, id;
	const char *name;		/* its gpu_kernel_stat's name */
};

/* Copies of one CUPTI memcpy kind in one process. */
struct gpu_copy_stat {
	__u32 pid;
	__u32 copy_kind;		/* CUpti_ActivityMemcpyKind */
	__u64 count, bytes, total_ns;
};

/* Work on one stream of one device of one process. */
struct gpu_stream_stat {
	__u32 pid, device, stream;
	__u32 last_corr;		/* (the builder's: the latest kernel's correlation id) */
	__u64 launches;			/* launch calls whose kernels ran on it: a graph launch's kernels,
					 * one after another with its correlation id, once */
	__u64 kernels, kernel_ns;
	__u64 copies, copy_bytes, copy_ns;
	__u64 memsets, memset_bytes, memset_ns;
};

/* One device as one process used it. */
/* Observed: the process's GPU windows when its bridge sent any
 * (isr_ev_gpu_window), else the recording. */
struct gpu_device_stat {
	__u32 pid, device;
	__u64 busy_ns;			/* union of kernels, copies, memsets recorded */
	double idle_fraction;		/* 1 - busy / observed; estimated: 1 - busy_est / span */
	__u64 busy_est_ns;		/* busy over the process's GPU span (its process's busy_method) */
	bool estimated;			/* busy_est_ns extrapolates over time not observed */
	double idle_scale;		/* estimated idle over the span / idle observed in the windows (1: not estimated) */
};

/* How a process's busy time was extrapolated over the gaps between its GPU
 * windows (gpu_summary.c, busy_by_launches). */
enum gpu_busy_method {
	GPU_BUSY_OBSERVED,		/* not extrapolated: observed all along */
	GPU_BUSY_BY_LAUNCHES,		/* busy per launch in the windows x launches over the span */
	GPU_BUSY_BY_TIME,		/* busy per second in the windows x the span */
};
/* "observed", "launches", "time". */
const char *gpu_busy_method_name(enum gpu_busy_method m);

/* GPU activity of one process. */
struct gpu_process_stat {
	__u32 pid;
	struct clock_fit fit;		/* fit.valid false: no clock pairs */
	__u64 kernels, copies, memsets, syncs, api_records, clock_pairs;
	__u64 joined;			/* kernels joined to their launch uprobe event */
	__u64 unjoined;			/* kernels with no launch API record or no matching uprobe event */
	__u64 causality_violations;
	__u64 worst_violation_ns;	/* the largest launch entry - mapped GPU start */
	__u64 launch_to_start_p50_ns;	/* joined kernels: launch entry to mapped GPU start (within 0.8%) */
	__u64 cupti_dropped;		/* latest gpu_status */
	bool failed;			/* the bridge reported a failure */
	__s32 cupti_error;
	/* When its activity was observed: the windows its bridge collected
	 * in (0: no window records, observed over the recording) and their
	 * total length inside the recording, against its span: from its
	 * first window to its exit or the recording's end. */
	__u64 windows;
	__u64 observed_ns;
	__u64 span_ns;
	bool estimated;			/* observed_ns < span_ns: its busy time is extrapolated */
	__u64 detaches;			/* windows after which CUPTI was detached (finalized) */
	__u64 detach_max_ns;		/* the longest a detach took its application thread */
	__u64 attach_max_ns;		/* the longest attaching CUPTI took the bridge */
	__u64 drain_max_ns;		/* the longest from a window's close to its last record */
	__u64 unfinished;		/* records CUPTI handed back unfinished at a close (not recorded) */
	/* The extrapolation over the gaps: launch calls in the windows (of
	 * the kernels recorded: gpu_stream_stat.launches), launches estimated
	 * in the gaps (from the launch uprobe events there), and the launch
	 * uprobe events and probed time the gaps' rate came from. */
	enum gpu_busy_method busy_method;
	__u64 window_launches;
	double gap_launches;
	__u64 gap_launches_seen;
	__u64 gap_probed_ns;
};

struct summary {
	__u64 start_ns, end_ns;		/* recording window (monotonic) */
	double duration_s;
	bool truncated;
	__u64 drops[ISR_SRC_MAX];
	__u64 drops_total;
	__u64 event_counts[ISR_EV_TYPE_MAX];
	__u64 event_total;
	__u64 gil_acquire_events;	/* isr_ev_gil by kind: PyEval_RestoreThread */
	__u64 gil_release_events;	/* PyEval_SaveThread */
	struct thread_summary *threads;	/* sorted by pid, then tid */
	size_t thread_count;
	struct cuda_fn_summary *cuda_fns; /* functions seen in any CUDA event, sorted by func */
	size_t cuda_fn_count;
	struct process_summary *processes; /* processes with CUDA events, sorted by pid */
	size_t process_count;
	struct kernel_summary *kernels;	/* launched handles, most launches first */
	size_t kernel_count;
	/* Beyond SUMMARY_MAX_KERNELS: the launches and names of handles
	 * counted as SUMMARY_OTHER_KERNELS; the GPU kernels and names of name
	 * ids counted so. */
	__u64 kernel_launches_other, kernel_names_other;
	__u64 gpu_kernels_other, gpu_names_other;
	struct sampling sampling;	/* the overhead budget and what it sampled */
	struct gpu_process_stat *gpu;	/* processes with GPU activity events, by pid */
	size_t gpu_count;
	struct gpu_kernel_stat *gpu_kernels;	/* by pid, then most total time first */
	size_t gpu_kernel_count;
	struct gpu_kernel_name *gpu_names;	/* by pid, then id */
	size_t gpu_name_count;
	struct gpu_copy_stat *gpu_copies;	/* by pid, kind */
	size_t gpu_copy_count;
	struct gpu_stream_stat *gpu_streams;	/* by pid, device, stream */
	size_t gpu_stream_count;
	struct gpu_device_stat *gpu_devices;	/* by pid, device */
	size_t gpu_device_count;
};

/* The summary as a stage of a pass: fed every event of p in its order.
 * NULL + errno when out of memory. */
struct summary_builder;
struct summary_builder *summary_builder__new(const struct pass *p);
/* 0 or -errno. */
int summary_builder__event(struct summary_builder *b, const struct pass_event *e);
/* The summary of the events fed, but for its GPU tables (gpu_summary.h:
 * gpu_builder__finish fills them). 0 or -errno. */
int summary_builder__finish(struct summary_builder *b, struct summary **out);
/* The sampling of the events fed (when the hot path was probed), until b
 * is freed. */
const struct sampling_builder *summary_builder__sampling(const struct summary_builder *b);
void summary_builder__free(struct summary_builder *b);

void summary__free(struct summary *s);

/* The latest incarnation of thread tid of process pid; NULL when it is not
 * one of s->threads. */
const struct thread_summary *summary__thread(const struct summary *s, __u32 pid, __u32 tid);
/* The latest name of pid's main thread; NULL when it is not one of
 * s->threads. */
const char *summary__process_name(const struct summary *s, __u32 pid);
/* The process's CUDA summary; NULL when it had no CUDA events. */
const struct process_summary *summary__process(const struct summary *s, __u32 pid);
/* Name of a function of s->cuda_fns: "cuMemAlloc_v2", or "cuda_fn_<id>" for
 * an id this version does not know. NULL when s has no such function. */
const char *summary__cuda_fn_name(const struct summary *s, __u16 func);

/* Orders gpu_kernel_names by pid, then id (qsort, bsearch). */
int summary__gpu_name_cmp(const void *a, const void *b);
/* The display name of GPU kernel name_id of pid (as in gpu_kernels;
 * SUMMARY_OTHER_KERNELS for an id counted with them); NULL when no kernel
 * of the recording has it. */
const char *summary__gpu_kernel_name(const struct summary *s, __u32 pid, __u32 name_id);

/* The name of a CUresult ("CUDA_ERROR_OUT_OF_MEMORY"); NULL when this
 * version does not know it. */
const char *summary__cuda_error_name(__s32 status);

#endif
