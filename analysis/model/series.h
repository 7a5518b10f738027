/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Time series of the recording for charts, built by one observer of the
 * explain pass: the recording's window cut into SERIES_BUCKETS buckets of
 * equal width (one pixel of a chart each), so that memory is fixed by the
 * number of devices, threads and processes and never grows with the number
 * of events.
 *
 *   per GPU device of a process: busy time per bucket, and idle time per
 *     bucket by cause, as the attribution split each gap (attribution.h);
 *     the time before its first work apart (SERIES_BEFORE_FIRST)
 *   per target thread: its state in each bucket, as a cause (the category
 *     it spent most of the bucket in, cause_of_category; running split into
 *     Python and native by its stack samples)
 *   per process: the most device memory it held in each bucket (devmem.h)
 *
 * Pure: a function of the pass it observes.
 */
#ifndef INFERSCOPE_SERIES_H
#define INFERSCOPE_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "timeline.h"
#include "attribution.h"

#define SERIES_BUCKETS		1000
#define SERIES_BEFORE_FIRST	CAUSE_MAX	/* idle index: before the device's first work */
#define SERIES_IDLE_KINDS	(CAUSE_MAX + 1)
#define SERIES_NO_STATE		0xff		/* thread state of a bucket outside its life */
#define SERIES_MAX_THREADS	1024		/* threads with a state strip (the first seen) */

struct series_device {
	__u32 pid, device;
	__u64 busy_ns[SERIES_BUCKETS];
	__u64 idle_ns[SERIES_BUCKETS][SERIES_IDLE_KINDS];
};

struct series_thread {
	__u32 pid, tid;
	char comm[16];
	__u8 state[SERIES_BUCKETS];	/* enum cause, or SERIES_NO_STATE */
};

struct series_memory {
	__u32 pid;
	__u64 peak;
	__u64 max_bytes[SERIES_BUCKETS];	/* the most held during the bucket */
};

struct series;

/* A series over the window of pass p, fed by tl and attr (the observer and
 * the gap hook are registered here: add it after the attribution). Running
 * is Python in a bucket where most of the thread's samples had a Python
 * frame (the pass's own stack records tell). NULL + errno. */
struct series *series__new(const struct pass *p, struct timeline *tl, struct attribution *attr);
void series__free(struct series *s);
/* After attribution__finish. 0 or -errno. */
int series__finish(struct series *s);

__u64 series__start(const struct series *s);
__u64 series__bucket_ns(const struct series *s);	/* width of a bucket (>= 1) */
/* The time of bucket b inside the window (0 for buckets past its end). */
__u64 series__bucket_span(const struct series *s, size_t b);

size_t series__device_count(const struct series *s);
const struct series_device *series__device_at(const struct series *s, size_t i);
/* The strip of thread (pid, tid): its latest incarnation; NULL if none. */
const struct series_thread *series__thread(const struct series *s, __u32 pid, __u32 tid);
size_t series__memory_count(const struct series *s);
const struct series_memory *series__memory_at(const struct series *s, size_t i);

#endif
