/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `inferscope-bpf top`: a live view of CUDA processes, refreshed once a
 * second, from a recording made with the same probes and overhead budget
 * as `record` (user/record/recorder.h), its events seen as they are written
 * (analysis/api/live.h). On a terminal an ncurses screen (keys: s sort,
 * arrows select a process, q quit); otherwise, or with --once, plain text
 * for scripts.
 */
#ifndef INFERSCOPE_TOP_H
#define INFERSCOPE_TOP_H

#include <stdbool.h>
#include "config.h"

struct top_opts {
	double interval_s;	/* refresh (default 1) */
	bool once;		/* one snapshot, as text, then exit */
	const char *keep;	/* -o: keep the recording there (default: a temporary file, removed) */
};

/* Runs top over cfg's targets (cfg->targets.pids; none: every process
 * that maps libcuda now). Exit status: 0, 1 when tracing failed, 2 when
 * there is nothing to watch. */
int top__run(struct record_config *cfg, const struct top_opts *o);

#endif
