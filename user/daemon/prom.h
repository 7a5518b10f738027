/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's figures in the Prometheus text format (0.0.4), for
 * node_exporter's textfile collector: names inferscope_<what>_<unit>,
 * base units (seconds, bytes), counters ending in _total; labels of
 * bounded cardinality (per process: pid, comm, container, pod; a finding's
 * rule and severity on one gauge; causes and states from fixed lists).
 * Written atomically: a temporary file in the same directory, then rename,
 * so that a scrape reads the previous file or the new one, never half.
 */
#ifndef INFERSCOPE_PROM_H
#define INFERSCOPE_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "discover.h"
#include "window.h"

#define PROM_FILE	"inferscope.prom"

enum daemon_error {
	DERR_DISCOVER,		/* /proc could not be read */
	DERR_RECORD,		/* a window could not be recorded */
	DERR_DISK_FULL,		/* the state directory's filesystem was full */
	DERR_ANALYZE,		/* a recording could not be analyzed */
	DERR_STATE_DIR,		/* the state directory could not be listed or cleaned */
	DERR_TEXTFILE,		/* the metrics file could not be written */
	DERR_CONFIG,		/* a reload was refused */
	DERR_MAX
};

const char *daemon_error_name(enum daemon_error e);	/* "record", "disk_full", ... */

/* The daemon's own health, over its life. */
struct daemon_health {
	double start_time;		/* Unix time */
	__u64 windows_recorded;		/* recorded and analyzed */
	__u64 windows_failed;
	__u64 windows_empty;		/* nothing to sample */
	__u64 events_total, drops_total;
	__u64 truncated_total;		/* recordings cut short (a full disk) */
	__u64 errors[DERR_MAX];
	int last_error;			/* enum daemon_error, -1: none */
	double last_error_time;
	__u64 removed_policy, removed_size, removed_age, removed_space;
	__u64 reloads_ok, reloads_refused;
	size_t recordings_kept;
	__u64 recordings_bytes;
	double budget_pct;		/* configured; 0: off */
	bool budget_sampled;		/* the last window's budget sampled the hot path */
	double last_window_time;	/* end of the last window, Unix time; 0: none yet */
	double interval_s, window_s;
};

/* Writes the metrics of the last window (w may be NULL: none yet or it
 * failed), its targets' labels and the daemon's health to f. 0 or -errno. */
int prom__format(FILE *f, const struct window_result *w, const struct discovered *targets, size_t ntargets,
		 const struct daemon_health *h);
/* The same into DIR/inferscope.prom, atomically. 0, or -errno with why in
 * err (the temporary file removed). */
int prom__write(const char *dir, const struct window_result *w, const struct discovered *targets, size_t ntargets,
		const struct daemon_health *h, char *err, size_t errlen);

#endif
