/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What changed from one run to another, from their two analyses: findings
 * that appeared, vanished or changed cost (most added cost first: the
 * change that explains the slowdown leads), per-metric deltas (wall, GPU
 * busy, GPU idle by cause, the launching threads' time by state, sync,
 * launches, kernels, memory), and the kernels whose GPU time changed most.
 * Kernels and findings are matched by name and rule, not by pid: two runs
 * have different pids. Renderers: Markdown, JSON (docs/report-json.md,
 * "The diff"), HTML.
 */
#ifndef INFERSCOPE_DIFF_H
#define INFERSCOPE_DIFF_H

#include <stdio.h>
#include "analysis.h"

#define DIFF_SCHEMA_VERSION 1

enum diff_unit { DIFF_SECONDS, DIFF_COUNT, DIFF_BYTES, DIFF_SHARE };

struct diff_metric {
	char key[48];			/* "gpu_idle_sync_drain_s" */
	char label[96];
	enum diff_unit unit;
	double base, new_;
};

enum diff_status { DIFF_APPEARED, DIFF_VANISHED, DIFF_CHANGED };

struct diff_finding {
	const char *rule, *title;
	enum diff_status status;
	double base_cost_s, new_cost_s;
	size_t base_count, new_count;
	const char *summary;		/* the new run's first finding of the rule, else the base's */
};

struct diff_kernel {
	char *name;
	__u64 base_ns, new_ns, base_count, new_count;
};

struct diff {
	const char *base_path, *new_path;
	double base_wall_s, new_wall_s;
	char headline[512];
	struct diff_metric *metrics;
	size_t nmetrics;
	struct diff_finding *findings;	/* most added cost first */
	size_t nfindings;
	struct diff_kernel *kernels;	/* largest change of GPU time first */
	size_t nkernels;
};

/* Compares base and new (both must outlive the result). 0 or -errno. */
int diff__compute(const struct analysis *base, const struct analysis *new_, const char *base_path,
		  const char *new_path, struct diff **out);
void diff__free(struct diff *d);

const char *diff_status_name(enum diff_status s);	/* "appeared", "vanished", "changed" */

/* 0 or -errno. */
int diff__write_markdown(FILE *f, const struct diff *d);
int diff__write_json(FILE *f, const struct diff *d);
int diff__write_html(FILE *f, const struct diff *d);

#endif
