/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Steps: what users compare ("step 412 took 3x the median"). A timeline
 * observer (timeline.h) that sees every NVTX range and mark and every CUDA
 * synchronization, and at the end tells:
 *
 *   - the NVTX ranges by name (count, total, mean, max, their depth in the
 *     thread's stack of ranges) and the marks by name;
 *   - the steps: the ranges of the NVTX name that repeats at the smallest
 *     depth (ties: the most often) when there are at least STEPS_MIN of
 *     them; without annotations, steps inferred from the trace's own
 *     periodicity: the launching thread (the most launches) synchronizes
 *     once per step, so a step ends at the return of each of its
 *     synchronizations — taken as steps only when the intervals repeat
 *     (their interquartile range under half their median);
 *   - for each step its thread's time by category (timeline categories,
 *     tl_cat) and its launches, and the slowest steps against the median
 *     with the categories that grew the most.
 *
 * Memory is bounded: at most 16384 ranges (depth 0 and 1, and start/end
 * ranges) are kept one by one, the others only as totals by name; at most
 * STEPS_MAX_NAMES range names and as many mark names, those past them
 * counted under STEPS_OTHER_RANGES and STEPS_OTHER_MARKS (never steps); at
 * most STEPS_MAX_OPEN ranges open, on a thread's stack and started, those
 * past it not counted (ranges_dropped); at most 16384 synchronization
 * boundaries a thread, past which two steps become one (syncs_per_step
 * doubles).
 * Pure: a function of the events the timeline feeds it.
 */
#ifndef INFERSCOPE_STEPS_H
#define INFERSCOPE_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"
#include "timeline.h"

#define STEPS_MIN 3		/* fewer repeats make no steps */
#define STEPS_SLOWEST 5		/* the slowest steps compared with the median */
#define STEPS_MAX_NAMES 4096	/* distinct NVTX range names kept; mark names too */
#define STEPS_MAX_OPEN 4096	/* ranges open at once: a thread's stack, or started and not ended */
#define STEPS_OTHER_RANGES "(other ranges)"
#define STEPS_OTHER_MARKS "(other marks)"

enum steps_source { STEPS_NONE, STEPS_NVTX, STEPS_INFERRED };

const char *steps_source_name(enum steps_source s);	/* "none", "nvtx", "inferred" */

/* The NVTX ranges of one name. */
struct nvtx_range_stat {
	char name[ISR_NVTX_NAME_LEN];
	bool thread_stack;	/* push/pop (else start/end) */
	__u16 min_depth;	/* smallest depth seen (0: outermost) */
	__u64 count, total_ns, max_ns;
};

struct nvtx_mark_stat {
	char name[ISR_NVTX_NAME_LEN];
	__u64 count;
};

struct step {
	size_t index;		/* 0-based, in time order */
	__u32 pid, tid;
	__u64 start, end;
	struct tl_acc acc;	/* its thread's time by category during it */
	__u64 launches;		/* launch calls of its thread during it */
};

/* A category whose time grew in a slow step: step minus the median of
 * that category over every step (> 0). */
struct step_diff {
	enum tl_cat cat;	/* TL_CAT_MAX: the launches (count, not time) */
	__s64 extra;		/* ns, or launches */
};

struct step_slow {
	size_t index;		/* into steps */
	double ratio;		/* its duration / the median */
	__u64 extra_ns;		/* its duration - the median */
	struct step_diff diffs[3];	/* the categories that grew most, largest first */
	size_t ndiffs;
};

struct steps_result {
	enum steps_source source;
	char name[ISR_NVTX_NAME_LEN];	/* NVTX: the range name; inferred: the sync function */
	__u32 pid, tid;			/* the thread of the steps (NVTX: of the first) */
	char comm[16];
	struct step *steps;
	size_t count;
	__u64 median_ns, mean_ns, p90_ns, min_ns, max_ns;
	struct tl_acc median_acc;	/* per category, the median over the steps */
	struct step_slow slowest[STEPS_SLOWEST];
	size_t nslowest;
	struct nvtx_range_stat *ranges;	/* by total time, largest first */
	size_t nranges;
	struct nvtx_mark_stat *marks;	/* by count */
	size_t nmarks;
	__u64 syncs_per_step;		/* inferred: synchronizations a step spans (1, or a power of
					 * two when there were too many to keep one a step) */
	__u64 ranges_not_kept;		/* NVTX ranges past the bound kept one by one (not steps) */
	__u64 nvtx_events;		/* every NVTX event seen */
	__u64 unmatched;		/* pops with no open range, ends of unknown ids */
	__u64 names_other;		/* ranges and marks counted under STEPS_OTHER_* */
	__u64 ranges_dropped;		/* ranges opened past STEPS_MAX_OPEN, not counted */
};

struct steps;

/* A steps stage over timeline tl; NULL + errno. */
struct steps *steps__new(struct timeline *tl);
void steps__free(struct steps *s);
/* Its observer, to add with timeline__observe before the pass. */
const struct tl_observer *steps__observer(struct steps *s);
/* After timeline__finish: closes what is open and computes the result.
 * 0 or -errno. */
int steps__finish(struct steps *s);
/* Valid after steps__finish, while s lives. */
const struct steps_result *steps__result(const struct steps *s);

#endif
