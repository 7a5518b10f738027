/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The NCCL calls of one recording, gathered in its pass (pass.h): the
 * communicators its processes set up, the rank their launcher gave them,
 * every collective's arrival (the host's entry into the call) and every
 * call counted by function. What the cross-rank stage (ranks.h) lines up
 * between processes and recordings.
 *
 * With GPU activity (the CUPTI bridge), each collective is joined to the
 * NCCL kernel that ran it: the kernel's time on the GPU, which includes
 * its wait for the slowest peer. The rule:
 *  - An NCCL kernel is a kernel whose name starts with "ncclKernel" or
 *    "ncclDevKernel" (NCCL's device kernels).
 *  - A kernel's correlation id names its launch API record (a launch cbid,
 *    gpu_launch_cbid(), not a graph launch: a graph replays collectives
 *    entered at capture), which gives the launching thread and the
 *    launch's start.
 *  - The launch is joined to the latest collective entry of the same pid
 *    and thread at or before the record's start, unless that entry was
 *    already joined or came before the previous NCCL kernel's launch on
 *    that thread. Collectives entered between ncclGroupStart and
 *    ncclGroupEnd (outermost pair, per thread) are launched together at
 *    ncclGroupEnd: when the latest entry is one of a group, every entry
 *    of that group not yet joined shares the kernel (grouped). Older
 *    entries left unjoined stay unjoined: their kernel never came.
 *  - The launches of a thread are decided in the order of their starts:
 *    a launch that is not an NCCL kernel's (another kernel, one without a
 *    name) joins nothing and does not end the collectives' wait, so that a
 *    compute kernel launched between a collective's entry and its own
 *    kernel's launch takes nothing.
 *  - A launch whose kernel has not started NCCL_JOIN_HORIZON_NS after it
 *    (or whose kernel mapped before its record) is not an NCCL kernel's; a
 *    kernel whose name has not come waits for it until the end of the
 *    pass. Records without a clock fit (pass_event.unmapped) join nothing.
 * A grouped kernel's time counts once in its process's NCCL GPU time.
 *
 * Memory: one fixed-size record per collective call (struct nccl_arrival,
 * 56 bytes), per communicator and per process; point-to-point and group
 * calls are only counted. The join holds, per thread, the entries a later
 * launch can still reach (the latest entry or its group, and those of its
 * launches still waiting) and its launch records since its latest entry
 * that wait for their kernel or its name; per process, one entry per
 * kernel name; and one timer per waiting launch: O(events) at worst (a
 * name that never comes keeps its thread's later launches waiting), about
 * the launches of one collective's queueing delay in practice.
 */
#ifndef INFERSCOPE_NCCL_H
#define INFERSCOPE_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pass.h"
#include "nccl_funcs.h"
#include "gpu_summary.h"

/* A communicator as one process sees it. */
struct nccl_comm {
	__u32 pid;
	__u64 handle;		/* ncclComm_t */
	__u64 id_hash;		/* set-up seen: the unique id's hash */
	__s32 rank, nranks;	/* set-up seen: this process's rank and the size */
	bool setup_seen;	/* false: first seen in a call (set up before the recording) */
	__u64 collectives;	/* collective calls on it */
};

/* A launch waits this long (from its record's start, CPU clock) for its
 * kernel to start: the GPU summary's join's horizon. */
#define NCCL_JOIN_HORIZON_NS GPU_JOIN_HORIZON_NS

/* A collective call: when the process arrived, and its kernel. */
struct nccl_arrival {
	__u64 ns;		/* entry, CPU clock (CLOCK_MONOTONIC) */
	__u64 seq;		/* its number in the communicator (1, 2, ...) */
	__u64 bytes;
	__u64 gpu_start, gpu_end;	/* joined: its NCCL kernel, mapped onto the CPU clock */
	__u32 pid, tid;
	__u32 comm;		/* index in nccl_calls.comms */
	__u16 func;		/* ISR_NCCL_FN_* */
	__u8 joined;		/* gpu_start, gpu_end are its kernel's */
	__u8 grouped;		/* joined: entered inside ncclGroupStart/End, the kernel shared by the group */
};

/* A process's calls, by function. */
struct nccl_proc {
	__u32 pid;
	__s32 env_rank, env_local_rank, env_world_size;	/* -1: not set at attach */
	__u64 calls[ISR_NCCL_FN_MAX];
	__u64 bytes[ISR_NCCL_FN_MAX];
	__u64 unnumbered;	/* collectives without a sequence number (the BPF map was full) */
	__u64 setup_failures;	/* set-ups that returned an error */
	__u64 collectives;	/* numbered collectives (its entries in nccl_calls.arrivals) */
	__u64 joined;		/* ... joined to an NCCL kernel (after nccl_calls__finish) */
	__u64 gpu_kernels;	/* NCCL kernels joined (a group's once) */
	__u64 gpu_ns;		/* their time on the GPU, mapped CPU clock */
};

struct nccl_join;

struct nccl_calls {
	struct nccl_comm *comms;
	size_t ncomms, comms_cap;
	struct nccl_arrival *arrivals;	/* in pass order */
	size_t narrivals, arrivals_cap;
	struct nccl_proc *procs;
	size_t nprocs, procs_cap;
	struct nccl_join *join;	/* the kernel join while the pass runs */
};

/* 0 or -ENOMEM. */
int nccl_calls__event(struct nccl_calls *c, const struct pass_event *e);
/* After the pass's last event: the launches still waiting are decided
 * with what came (a kernel that never came, a name that never came: not
 * an NCCL kernel's), the join's state freed. */
void nccl_calls__finish(struct nccl_calls *c);
void nccl_calls__free(struct nccl_calls *c);

/* The process's counts, NULL when it made no NCCL call and had no rank. */
const struct nccl_proc *nccl_calls__proc(const struct nccl_calls *c, __u32 pid);

/* "ncclAllReduce", ...; "?" for an id this version does not know. */
const char *nccl_func_name(__u16 func);
/* A collective (an entry of nccl_calls.arrivals when it has a sequence number). */
bool nccl_func_is_collective(__u16 func);

#endif
