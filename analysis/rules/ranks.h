/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ranks side by side: the NCCL collectives of one or several recordings
 * (analysis/model/nccl.h, one analysis per recording) lined up by communicator
 * and sequence number on one clock, the straggler of each collective, and
 * the host reason of the rank that kept the others waiting.
 *
 * Clock: each recording's CLOCK_MONOTONIC is mapped to CLOCK_REALTIME
 * through its clock pairs (the narrowest one; the spread of the others is
 * the drift it may have had): the alignment's uncertainty between two
 * recordings is the sum of theirs (0 within one recording).
 *
 * Ranks: a process's rank in a communicator it set up while recorded (the
 * unique id's hash matches the communicator across processes), else the
 * RANK its launcher set, else its order (recordings in the order given,
 * processes by pid). A communicator set up before the recording began is
 * matched across processes by WORLD_SIZE and the order of first use.
 *
 * Per collective (a sequence number that two or more ranks reached): when
 * each rank arrived (entered the call), the last to arrive (the straggler)
 * and how long the others waited for it. A rank's arrival is late when it
 * came last by NCCL_LATE_NS or more over the next-to-last. The host reason
 * comes from a second pass over the straggler's recording (and the
 * others'): what its calling thread did (timeline.h categories) from the
 * first rank's arrival to its own, against what the others' calling
 * threads did over as long a window before their own arrival.
 *
 * With GPU activity, each rank's part of each collective carries its NCCL
 * kernel's time on the GPU where the join (nccl.h) found it: the kernel
 * runs until the slowest peer has arrived, so an early rank's GPU time
 * holds its wait.
 *
 * What a late arrival cost the job is at most the first rank's wait, and
 * less where that rank had work of its own to do meanwhile (its GPU busy
 * with earlier work). Per late collective, the first measure it has:
 * - on the GPU, where every member's NCCL kernel was joined (not shared by
 *   a group): how much longer the others' kernels ran than the
 *   straggler's (they wait on the GPU for it to arrive);
 * - by the first rank's step (its arrival at this collective to its
 *   arrival at the communicator's next) against its median step after
 *   on-time collectives, where it has NCCL_STEP_BASE_MIN of those;
 * - else the first rank's wait itself.
 * Each measure is held between 0 and the first rank's wait.
 */
#ifndef INFERSCOPE_RANKS_H
#define INFERSCOPE_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "findings.h"
#include "timeline.h"
#include "attribution.h"
#include "nccl.h"
#include "nccl_funcs.h"

/* A straggler's arrival that came this much after the next-to-last is late. */
#define NCCL_LATE_NS 1000000ull
/* A straggler finding needs at least this much of the others' waiting. */
#define NCCL_STRAGGLER_MIN_NS 5000000ull
/* A rank's base step (from its arrival at a collective to its arrival at
 * the communicator's next, after collectives that were on time) needs at
 * least this many such steps. */
#define NCCL_STEP_BASE_MIN 8

/* One recording's part: what its analysis found (analysis/run/analysis.h
 * fills it). */
struct ranks_source {
	const struct recording *r;
	const struct pass *pass;		/* reopened for the straggler's reason */
	const struct nccl_calls *nccl;
	const struct attribution *attr;		/* NULL: not explained */
	const struct findings *findings;	/* its findings; NULL: none */
	const char *name;			/* its file, for the report */
};

/* A recording's clock against CLOCK_REALTIME. */
struct ranks_clock {
	__s64 offset_ns;	/* realtime - monotonic */
	__u64 uncertainty_ns;	/* of the offset: the pair's half window plus half the spread of the pairs */
	size_t pairs;		/* realtime pairs read; 0: none (offset 0, the recording cannot be aligned) */
};

#define RANKS_TOP_OTHERS 4

/* A task that had the straggler's CPU while it was late. */
struct ranks_other {
	__u32 pid, tid;
	__u64 ns;
	char comm[16], process_comm[16];
};

struct rank_row {
	size_t source;		/* index of its recording */
	__u32 pid, tid;		/* the process and its calling thread (most collectives) */
	int rank, world_size, local_rank;	/* -1: unknown */
	const char *rank_from;	/* "communicator", "environment" or "order" */
	__u64 collectives;	/* of its collectives that were matched with other ranks */
	__u64 last;		/* collectives it arrived last at */
	__u64 late;		/* ... by NCCL_LATE_NS or more */
	__u64 late_ns;		/* how long the first rank waited for it at those */
	/* what those late arrivals cost the job (the finding's cost): per late
	 * collective, the best measure it has (late_cost()) */
	__u64 cost_ns;
	__u64 cost_by_gpu, cost_by_steps, cost_by_arrival;	/* late collectives measured each way */
	__u64 step_base_ns;	/* its median step after on-time collectives; 0: fewer than NCCL_STEP_BASE_MIN */
	__u64 cost_step_base_ns;	/* cost_by_steps: the first rank's base step (the last one used) */
	__u64 waited_ns;	/* the others' total wait for it there (rank-seconds) */
	__u64 lateness_p50_ns, lateness_p99_ns, lateness_total_ns;	/* after the first rank's arrival */
	__u64 calls[ISR_NCCL_FN_MAX];	/* every NCCL call, by function */
	__u64 bytes;		/* its NCCL calls' (count times element size) */
	__u64 gpu_busy_ns, gpu_observed_ns;
	__u64 sync_ns;		/* its calling thread's time in CUDA synchronizations */
	__u64 cpu_wait_ns;	/* ... waiting for a CPU (tl_acc.cpu_wait_ns) */
	__u64 nccl_gpu_ns;	/* its NCCL kernels' time on the GPU (nccl_proc.gpu_ns) */
	__u64 nccl_joined, nccl_not_joined;	/* its collectives (all, lined up or not) with and without one */
	const char *top_rule;	/* its recording's first finding about its process; NULL: none */
	double top_cost_s;
	/* what its calling thread did before its arrivals */
	struct tl_acc when_late;	/* its late arrivals: from the first rank's arrival to its own */
	__u64 late_windows;
	struct tl_acc when_on_time;	/* others' late arrivals: as long a window before its own */
	__u64 on_time_windows;
	struct ranks_other others[RANKS_TOP_OTHERS];	/* who had its CPU while it was late, most first */
	size_t nothers;
};

/* A communicator and what its collectives cost. */
struct ranks_comm {
	__u64 id_hash;		/* 0: matched by WORLD_SIZE and order (set up before the recording) */
	int nranks;		/* ranks seen */
	int size;		/* its size as set up; -1: unknown */
	__u64 collectives;	/* sequence numbers two or more ranks reached */
	__u64 calls[ISR_NCCL_FN_MAX];	/* of those, by function (once per collective) */
	__u64 bytes;		/* one rank's bytes over those */
	__u64 spread_ns;	/* sum of last minus first arrival */
	__u64 straggler_waits_ns;	/* the others' wait, summed over ranks and collectives */
	__u64 late;		/* collectives with a late straggler */
};

/* One collective call of a rank, as lined up: what a renderer shows at the
 * call (the Perfetto trace's NCCL slices). */
struct ranks_arrival {
	__u64 last_ns;		/* the collective's last arrival, on this recording's CPU clock; 0: not matched */
	__s32 last_rank;	/* who arrived last */
	__u8 straggler;		/* this rank arrived last */
	__u8 late;		/* ... by NCCL_LATE_NS or more over the next-to-last */
	__u16 pad;
};

/* One rank's part in a collective lined up. */
struct ranks_member {
	int rank;
	__s64 arrival_ns;	/* its entry, realtime (the line-up's clock) */
	bool joined;		/* its NCCL kernel is known */
	bool grouped;		/* ... shared by the collectives of its ncclGroupStart/End */
	__u64 gpu_start_ns;	/* joined: the kernel's start, its recording's CPU clock */
	__u64 gpu_ns;		/* joined: the kernel's time on the GPU */
};

/* A collective lined up: a sequence number two or more ranks reached. */
struct ranks_collective {
	size_t comm;		/* index in ranks.comms */
	__u64 seq;
	__u16 func;		/* ISR_NCCL_FN_*, the first rank's */
	size_t first, n;	/* its members: ranks.members[first, first + n) */
	size_t first_in, last_in;	/* the first and the last to arrive, positions among its members */
	bool late;		/* the last came NCCL_LATE_NS or more after the next-to-last */
};

struct ranks {
	struct rank_row *rows;
	size_t nrows;
	struct ranks_comm *comms;
	size_t ncomms;
	struct ranks_collective *colls;	/* by communicator, then sequence number */
	size_t ncolls, colls_cap;
	struct ranks_member *members;
	size_t nmembers, members_cap;
	struct ranks_clock *clocks;	/* one per source */
	size_t nsources;
	const char **names;		/* the sources' names */
	struct ranks_arrival **arrivals;	/* per source, one per its NCCL arrival (nccl_calls.arrivals) */
	__u64 uncertainty_ns;		/* the alignment's, between the two least certain recordings */
	bool unaligned;			/* a recording without realtime clock pairs was lined up as if on one clock */
};

/* Lines up the NCCL collectives of the n sources (the rules of ranks then
 * make their findings: struct rule, finish_ranks). *r is NULL when fewer
 * than two ranks made collectives. 0 or -errno (a second pass failed: err
 * says why). */
int ranks__compute(const struct ranks_source *src, size_t n, struct ranks **r, char *err, size_t errlen);
void ranks__free(struct ranks *r);
/* Each row of recording `source`: its first finding about its process in
 * fs anew (the rules of ranks fold findings into theirs). */
void ranks__top_findings(struct ranks *r, size_t source, const struct findings *fs);

/* The clock of one recording (exposed for tests). */
struct recording;
void ranks__clock(const struct recording *rec, struct ranks_clock *out);

#endif
