/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Perfetto trace writer (docs/outputs.md) and what it wrote, for the
 * tests and the figures (bytes per event, export speed).
 */
#ifndef INFERSCOPE_PERFETTO_H
#define INFERSCOPE_PERFETTO_H

#include <stdio.h>
#include <linux/types.h>
#include "analysis.h"

struct perfetto_stats {
	__u64 events;		/* recording events the pass fed */
	__u64 packets;		/* TracePackets of events and tracks */
	__u64 raw_bytes;	/* their bytes with their framing */
	__u64 compressed;	/* packets of compressed_packets that hold them */
	__u64 bytes;		/* the file's bytes */
	__u64 tracks;		/* track descriptors */
	__u64 slices;		/* slices (begin/end pairs, Python frames included) */
	__u64 states;		/* thread states of the timeline */
	__u64 merged_states;	/* of those, the ones in runs of short states */
	__u64 merged_slices;	/* the slices of those runs (the others: one slice each) */
	__u64 instants, counters, flows;
	__u64 unmapped;		/* GPU records without a clock fit: not placed, not written */
};

/* Writes the trace of a's recording to f. stats may be NULL. 0 or -errno. */
int perfetto__write(FILE *f, const struct analysis *a, struct perfetto_stats *stats);
/* Writes one trace of the set's recordings (report.h,
 * report__write_perfetto_set) to f. stats may be NULL. 0 or -errno. */
int perfetto__write_set(FILE *f, const struct analysis_set *set, struct perfetto_stats *stats);

#endif
