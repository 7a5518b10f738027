// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A recording's metadata for a bug report (check --support-bundle): the
 * versions, host, window, event counts by type and drops. Nothing a target
 * wrote or held: no command lines, maps, names or stacks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"
#include "recording.h"

int analyze__describe(const char *path, FILE *out)
{
	__u64 counts[256] = { 0 };
	struct recording *r;
	char err[512];
	int e = recording__load(path, &r, err, sizeof(err));

	if (e) {
		fprintf(out, "recording %s cannot be read: %s\n", path, err);
		return e;
	}
	for (size_t i = 0; i < r->event_count; i++)
		if (r->events[i]->type < 256)
			counts[r->events[i]->type]++;
	fprintf(out, "format %u.%u, written by inferscope-bpf %s\n", r->version_major, r->version_minor,
		r->host.tool_version ? r->host.tool_version : "?");
	fprintf(out, "kernel %s %s (%s), %u CPUs\n", r->host.kernel ? r->host.kernel : "?",
		r->host.kernel_version ? r->host.kernel_version : "", r->host.machine ? r->host.machine : "?",
		r->host.ncpus);
	fprintf(out, "duration %.3f s, %zu processes, %zu events in %zu chunks, %s%s\n",
		r->end_mono_ns > r->host.start_mono_ns ? (r->end_mono_ns - r->host.start_mono_ns) / 1e9 : 0.0,
		r->process_count, r->event_count, r->chunk_count,
		r->complete ? "stopped: " : "truncated: ",
		r->complete ? (isr_stop_reason_name(r->stop_reason) ? isr_stop_reason_name(r->stop_reason) : "?") :
			      r->truncation);
	fprintf(out, "clock pairs %zu, unknown chunks %zu, unknown events %zu\n", r->clock_pair_count,
		r->unknown_chunks, r->unknown_events);
	for (unsigned int t = 0; t < 256; t++)
		if (counts[t])
			fprintf(out, "events %-20s %llu\n", isr_event_name((__u16)t) ? isr_event_name((__u16)t) : "?",
				(unsigned long long)counts[t]);
	for (unsigned int s = 0; s < ISR_SRC_MAX; s++)
		if (r->drops[s])
			fprintf(out, "drops  %-20s %llu\n", isr_source_name(s), (unsigned long long)r->drops[s]);
	recording__free(r);
	return ferror(out) ? -EIO : 0;
}
