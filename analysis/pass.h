/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One pass over a recording's events in the order of their start on the
 * CPU clock: what every analysis stage (timeline, metrics, rules) consumes.
 *
 * An event's interval is [start, end) on CLOCK_MONOTONIC:
 *   page fault          [ts - duration, ts) when its entry was seen
 *   CUDA call           [entry, entry + duration) when its return was probed
 *   GIL acquire         [entry, entry + wait)
 *   GPU activity        its GPU start and end mapped through the process's
 *                       clock fit (kernels, copies, memsets, syncs, API records)
 *   anything else       an instant at hdr.ts_ns
 * Ties keep file order. A GPU record of a process without clock pairs
 * cannot be placed: it comes at its hand-off time with `unmapped` set.
 *
 * Before the first event the pass knows the recording's window, its target
 * processes and their clock fits.
 */
#ifndef INFERSCOPE_PASS_H
#define INFERSCOPE_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"
#include "clock_fit.h"

struct pass_event {
	const struct isr_ev_hdr *h;
	__u64 start, end;	/* CPU clock; end == start for an instant */
	bool unmapped;		/* GPU record without a clock fit: start/end are the hand-off time */
};

struct pass;

/* A pass over r (its events in memory, in any order). r must outlive the
 * pass. 0 or -errno. */
int pass__open(const struct recording *r, struct pass **out);
void pass__free(struct pass *p);

/* The next event: 1, or 0 at the end. */
int pass__next(struct pass *p, struct pass_event *e);

/* The recording's window on the CPU clock. */
__u64 pass__start(const struct pass *p);
__u64 pass__end(const struct pass *p);

/* Whether pid is a process the recording traced (named, launched,
 * followed, or the subject of an event only targets have). */
bool pass__is_target(const struct pass *p, __u32 pid);

/* The GPU clock fit of pid's CUPTI bridge; NULL when it sent no usable
 * clock pairs. */
const struct clock_fit *pass__fit(const struct pass *p, __u32 pid);

/* A known event long enough to be read as its type. */
bool pass__usable(const struct isr_ev_hdr *h);

#endif
