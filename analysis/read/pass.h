/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One pass over a recording's events in the order of their start on the
 * CPU clock: what every analysis stage (summary, Python stacks, timeline,
 * metrics, rules) consumes.
 *
 * An event's interval is [start, end) on CLOCK_MONOTONIC, as its type's
 * line of the registry says (format/events.h, isr_ev_interval): a page
 * fault [ts - duration, ts) when its entry was seen, a CUDA call
 * [entry, entry + duration) when its return was probed, a GIL acquire
 * [entry, entry + wait), a GIL wait, a reclaim, a communicator's set-up
 * [ts, ts + duration); GPU activity (kernels, copies, memsets, syncs, API
 * records) its GPU start and end mapped through the process's clock fit;
 * anything else an instant at hdr.ts_ns. Ties keep file order. A GPU record of a process without clock pairs
 * cannot be placed: it comes at its hand-off time with `unmapped` set.
 *
 * Before the first event the pass knows the recording's window, its target
 * processes and their clock fits.
 *
 * Over a file (pass__open_file) the pass needs memory for the events near
 * the one it serves, not for all of them. The recording is walked three
 * times, one decompressed chunk in memory at a time: the first walk reads
 * the metadata, the targets and the clock pairs (then the fits); the second
 * computes every event's start and, per EVENTS chunk, the least start of
 * the rest of the file and how far the rest runs behind the latest start
 * read before it (none of which the first can know without the fits; a
 * recording without GPU clock pairs needs no second walk); the third copies
 * the events into a buffer ordered by start, from which an event goes out
 * as soon as no event still unread can start before it. A buffer beyond
 * its bound (pass_opts) lets its earliest event go anyway: an event read
 * later that starts before an event already served is out of order, comes
 * at the time of the latest event served, and is counted
 * (pass__out_of_order), never lost.
 */
#ifndef INFERSCOPE_PASS_H
#define INFERSCOPE_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"
#include "clock_fit.h"
#include "tasks.h"

/* The reorder buffer's default bound. */
#define PASS_BUFFER_BYTES	(256U << 20)
/* GPU clock pairs (isr_ev_gpu_clock) kept for the fits, all processes
 * together: the bridge sends about one a second. */
#define PASS_MAX_CLOCK_PAIRS	(1U << 20)
/* Pids and tids at or above this are no Linux task (PID_MAX_LIMIT): never
 * targets, and events that name one as a thread are left out. */
#define PASS_PID_LIMIT		(1U << 22)
/* Distinct threads (tids) the pass lets through, those the recording lists
 * first: each costs every stage and the report a few kilobytes. An event
 * that names another thread (its own, the next of a switch, the waker of a
 * wakeup, a forked child, the caller of an exec, the thread of a CUPTI API
 * record) is left out and counted (pass__thread_events_cut). */
#define PASS_MAX_THREADS	32768

struct pass_event {
	const struct isr_ev_hdr *h;	/* valid until the next pass__next; a usable record */
	__u64 start, end;	/* CPU clock; end == start for an instant */
	bool unmapped;		/* GPU record without a clock fit: start/end are the hand-off time */
	const struct task_change *tasks;	/* what it did to the threads it names (tasks.h) */
};

struct pass_opts {
	size_t buffer_bytes;	/* the reorder buffer's bound; 0: PASS_BUFFER_BYTES */
};

struct pass;

/* A pass over r (its events in memory, in file order). r must outlive the
 * pass. 0 or -errno. */
int pass__open(const struct recording *r, struct pass **out);
/* A pass over the recording at path (opts may be NULL). 0, or -errno with
 * err written: the file cannot be read, is not a recording, or cannot be
 * read a second time (a pipe: -ESPIPE). */
int pass__open_file(const char *path, const struct pass_opts *opts, struct pass **out, char *err,
		    size_t errlen);
/* Another pass over what p passes over, from the start (a second stage
 * that needs what the first found: the Perfetto trace). 0 or -errno with
 * err written, as pass__open_file. */
int pass__reopen(const struct pass *p, struct pass **out, char *err, size_t errlen);
void pass__free(struct pass *p);

/* The next event: 1, 0 at the end, or -errno (pass__error says why: the
 * file changed while it was read, or memory ran out). */
int pass__next(struct pass *p, struct pass_event *e);
/* Why pass__next failed; NULL when it did not. */
const char *pass__error(const struct pass *p);

/* The recording: its metadata, and its events only when in memory. */
const struct recording *pass__recording(const struct pass *p);

/* The recording's window on the CPU clock. */
__u64 pass__start(const struct pass *p);
__u64 pass__end(const struct pass *p);

/* Whether pid is a process the recording traced (named, launched,
 * followed, or the subject of an event only targets have). */
bool pass__is_target(const struct pass *p, __u32 pid);

/* The task model of the pass (tasks.h), fed every event before it is
 * served: the threads of the events served so far, and at the end of the
 * pass their time to the end of the window. */
const struct tasks *pass__tasks(const struct pass *p);

/* The GPU clock fit of pid's CUPTI bridge; NULL when it sent no usable
 * clock pairs. */
const struct clock_fit *pass__fit(const struct pass *p, __u32 pid);

/* Through when pid's GPU activity is known complete (CPU clock), into
 * *until: the end of its latest CUPTI record, or its bridge's latest
 * FLUSHED status or GPU window record (every record completed before it
 * was handed over; after a window's close nothing is collected until the
 * next), whichever is later. A process that ends without its bridge flushing
 * (killed, os._exit) leaves the records of its last buffer undelivered:
 * after *until, its GPU was not observed. false: no GPU record and no
 * flush. */
bool pass__gpu_complete_until(const struct pass *p, __u32 pid, __u64 *until);

/* Events served after an event that starts later (their start raised to
 * it): 0 unless the reorder buffer reached its bound. */
__u64 pass__out_of_order(const struct pass *p);
/* GPU clock pairs beyond PASS_MAX_CLOCK_PAIRS, left out of the fits. */
__u64 pass__clock_pairs_cut(const struct pass *p);
/* Events left out for naming a thread beyond PASS_MAX_THREADS. */
__u64 pass__thread_events_cut(const struct pass *p);

/* Events the pass did not serve because this version cannot read them
 * (isr_event_usable: a type it does not know, or a record too short for
 * its type, which only a recording in memory can hold): their number, and
 * by type (below ISR_EV_TYPE_MAX) in by_type. Every event served is usable:
 * the stages read it as its type's struct without a check. */
__u64 pass__unread(const struct pass *p, __u64 by_type[ISR_EV_TYPE_MAX]);

#endif
