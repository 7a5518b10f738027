/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Live metrics for `top`: fed every event as the recorder writes it (in
 * ring-buffer order, not sorted), it tells per process and per thread what
 * happened since the previous snapshot: launches a second (extrapolated
 * over the time the overhead budget had the launch probes off), the share
 * of time in CUDA synchronization, waiting for the GIL (--gil), waiting for
 * a CPU, on a CPU, blocked (asleep: a lock, I/O, a synchronization that
 * sleeps), page faults a second, GPU busy (CUPTI bridge), device memory
 * live, and the current top finding: the rules of `analyze`
 * (docs/rules.md) run on a recording of the interval's events in memory.
 * A process's shares are totals over its threads (percent of one CPU's
 * time: 250 is two and a half threads' worth). Pure: it reads no clock;
 * the caller says when a snapshot is taken (CLOCK_MONOTONIC, as the
 * events).
 */
#ifndef INFERSCOPE_LIVE_H
#define INFERSCOPE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct isr_ev_hdr;

/* An interval's events kept for its analysis; past it, window_cut. */
#define LIVE_WINDOW_MAX_MIB	64

struct live_thread {
	__u32 pid, tid;
	double launches_per_s;
	double sync_pct, gil_pct, runq_pct, cpu_pct, blocked_pct;	/* of the interval */
	double faults_per_s;
};

struct live_process {
	__u32 pid;
	__u32 launcher_tid;		/* the thread with the most launches; 0: none launched */
	double launches_per_s;		/* every thread */
	bool launches_estimated;	/* the budget sampled the launch probes */
	double sync_pct, gil_pct, runq_pct, cpu_pct, blocked_pct;	/* its threads' summed */
	double gpu_busy_pct;		/* < 0: no GPU activity seen (no bridge) */
	double faults_per_s;		/* every thread */
	__u64 device_bytes;		/* device memory live */
	const char *finding;		/* rule id of its costliest finding in the interval, or NULL */
	double finding_cost_s;
	char finding_text[160];		/* the rule's title */
	const struct live_thread *threads;	/* its threads active in the interval, most launches first */
	size_t nthreads;
};

struct live_snapshot {
	__u64 at_ns;
	double interval_s;
	struct live_process *procs;	/* by pid */
	size_t nprocs;
	__u64 events;			/* fed since the start */
	__u64 window_cut;		/* the interval's events past what its analysis keeps */
	__u64 names_cut;		/* names past what is kept across intervals (since the start) */
};

struct live;

/* Live metrics of the processes pids (and the children they start that
 * the recorder follows). NULL + errno. */
struct live *live__new(const __u32 *pids, size_t n, __u32 ncpus);
void live__free(struct live *l);
void live__event(struct live *l, const struct isr_ev_hdr *h, size_t size);
/* The interval since the previous snapshot (or the first event) up to
 * now_ns, its findings included. The snapshot is l's until the next call.
 * 0 or -errno (its analysis failed: the figures stand, findings absent). */
int live__snapshot(struct live *l, __u64 now_ns, const struct live_snapshot **out);

#endif
