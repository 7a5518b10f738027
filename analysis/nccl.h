/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The NCCL calls of one recording, gathered in its pass (pass.h): the
 * communicators its processes set up, the rank their launcher gave them,
 * every collective's arrival (the host's entry into the call) and every
 * call counted by function. What the cross-rank stage (ranks.h) lines up
 * between processes and recordings.
 *
 * Memory: one fixed-size record per collective call (struct nccl_arrival,
 * 40 bytes), per communicator and per process; point-to-point and group
 * calls are only counted.
 */
#ifndef INFERSCOPE_NCCL_H
#define INFERSCOPE_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pass.h"
#include "nccl_funcs.h"

/* A communicator as one process sees it. */
struct nccl_comm {
	__u32 pid;
	__u64 handle;		/* ncclComm_t */
	__u64 id_hash;		/* set-up seen: the unique id's hash */
	__s32 rank, nranks;	/* set-up seen: this process's rank and the size */
	bool setup_seen;	/* false: first seen in a call (set up before the recording) */
	__u64 collectives;	/* collective calls on it */
};

/* A collective call: when the process arrived. */
struct nccl_arrival {
	__u64 ns;		/* entry, CPU clock (CLOCK_MONOTONIC) */
	__u64 seq;		/* its number in the communicator (1, 2, ...) */
	__u64 bytes;
	__u32 pid, tid;
	__u32 comm;		/* index in nccl_calls.comms */
	__u16 func;		/* ISR_NCCL_FN_* */
	__u16 pad;
};

/* A process's calls, by function. */
struct nccl_proc {
	__u32 pid;
	__s32 env_rank, env_local_rank, env_world_size;	/* -1: not set at attach */
	__u64 calls[ISR_NCCL_FN_MAX];
	__u64 bytes[ISR_NCCL_FN_MAX];
	__u64 unnumbered;	/* collectives without a sequence number (the BPF map was full) */
	__u64 setup_failures;	/* set-ups that returned an error */
};

struct nccl_calls {
	struct nccl_comm *comms;
	size_t ncomms, comms_cap;
	struct nccl_arrival *arrivals;	/* in pass order */
	size_t narrivals, arrivals_cap;
	struct nccl_proc *procs;
	size_t nprocs, procs_cap;
};

/* 0 or -ENOMEM. */
int nccl_calls__event(struct nccl_calls *c, const struct pass_event *e);
void nccl_calls__free(struct nccl_calls *c);

/* The process's counts, NULL when it made no NCCL call and had no rank. */
const struct nccl_proc *nccl_calls__proc(const struct nccl_calls *c, __u32 pid);

/* "ncclAllReduce", ...; "?" for an id this version does not know. */
const char *nccl_func_name(__u16 func);
/* A collective (an entry of nccl_calls.arrivals when it has a sequence number). */
bool nccl_func_is_collective(__u16 func);

#endif
