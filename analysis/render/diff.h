/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What changed from one run to another, from their two analyses. Two runs
 * seldom record the same length of time, so totals are divided by the
 * work each run did: its steps (steps.h) when both have them, else its
 * kernel launches when both launched, else its seconds recorded. The
 * headline leads with the change of throughput (steps or launches per
 * second), then the finding whose cost per unit of work grew most. Then:
 * findings that appeared, vanished or changed cost (most added cost per
 * unit of work first), per-metric figures per unit of work (wall, GPU
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

#define DIFF_SCHEMA_VERSION 2

enum diff_unit { DIFF_SECONDS, DIFF_COUNT, DIFF_BYTES, DIFF_SHARE };

/* The unit of work both runs are compared by. */
enum diff_per { DIFF_PER_STEP, DIFF_PER_LAUNCH, DIFF_PER_SECOND };

const char *diff_per_name(enum diff_per p);	/* "step", "launch", "second" */

/* One run's work. */
struct diff_run {
	double wall_s;			/* the recording's duration */
	double work;			/* steps, launches, or seconds recorded */
	double work_per_s;		/* steps over their span, launches over wall_s; 0 by the second */
	double median_step_s;		/* 0 without steps */
};

struct diff_metric {
	char key[48];			/* "gpu_idle_sync_drain_s" */
	char label[96];
	enum diff_unit unit;
	double base, new_;		/* totals (a level for bytes and shares) */
	bool per_work;			/* base_per and new_per are the totals over the work */
	double base_per, new_per;
};

enum diff_status { DIFF_APPEARED, DIFF_VANISHED, DIFF_CHANGED };

struct diff_finding {
	const char *rule, *title;
	enum diff_status status;
	double base_cost_s, new_cost_s;
	double base_per_s, new_per_s;	/* cost over the work of each run */
	size_t base_count, new_count;
	const char *summary;		/* the new run's first finding of the rule, else the base's */
};

struct diff_kernel {
	char *name;
	__u64 base_ns, new_ns, base_count, new_count;
	double base_per_s, new_per_s;	/* GPU time over the work of each run */
};

struct diff {
	const char *base_path, *new_path;
	enum diff_per per;
	struct diff_run base, new_;
	char headline[640];
	struct diff_metric *metrics;
	size_t nmetrics;
	struct diff_finding *findings;	/* most added cost per unit of work first */
	size_t nfindings;
	struct diff_kernel *kernels;	/* largest change of GPU time per unit of work first */
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
