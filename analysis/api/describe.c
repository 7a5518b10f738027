// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A recording's metadata for a bug report (check --support-bundle): the
 * versions, host, window, event counts by type and drops. Nothing a target
 * wrote or held: no command lines, maps, names or stacks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"
#include "pass.h"
#include "recording.h"
#include "text.h"

int analyze__describe(const char *path, FILE *out)
{
	__u64 counts[256] = { 0 }, total = 0;
	const struct recording *r;
	struct pass_event ev;
	struct pass *p;
	char err[512];
	int e = pass__open_file(path, NULL, &p, err, sizeof(err)), n;

	if (e) {
		fprintf(out, "recording %s cannot be read: %s\n", path, err);
		return e;
	}
	/* streamed, as the analysis reads it: memory for the events near the one read */
	while ((n = pass__next(p, &ev)) > 0) {
		total++;
		if (ev.h->type < 256)
			counts[ev.h->type]++;
	}
	r = pass__recording(p);
	/* the recording's own strings, for a terminal (lib/text.h) */
	fprintf(out, "format %u.%u, written by inferscope-bpf ", r->version_major, r->version_minor);
	text__write(out, r->host.tool_version ? r->host.tool_version : "?", SIZE_MAX, TEXT_TERM);
	fprintf(out, "\nkernel ");
	text__write(out, r->host.kernel ? r->host.kernel : "?", SIZE_MAX, TEXT_TERM);
	fprintf(out, " ");
	text__write(out, r->host.kernel_version ? r->host.kernel_version : "", SIZE_MAX, TEXT_TERM);
	fprintf(out, " (");
	text__write(out, r->host.machine ? r->host.machine : "?", SIZE_MAX, TEXT_TERM);
	fprintf(out, "), %u CPUs\n", r->host.ncpus);
	fprintf(out, "duration %.3f s, %zu processes, %llu events in %zu chunks, %s%s\n",
		pass__end(p) > pass__start(p) ? (pass__end(p) - pass__start(p)) / 1e9 : 0.0, r->process_count,
		(unsigned long long)total, r->chunk_count,
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
	if (n < 0)
		fprintf(out, "reading stopped: %s\n", pass__error(p) ? pass__error(p) : strerror(-n));
	pass__free(p);
	return n < 0 ? n : ferror(out) ? -EIO : 0;
}
