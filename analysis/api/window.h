/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A recording's health in numbers: what the fleet daemon exports for each
 * window (user/daemon/daemon.c). Every figure is read from the one analysis
 * (analysis.h: the summary, the attribution, the ranked findings) that
 * `analyze` reports on; nothing here analyzes anything itself.
 */
#ifndef INFERSCOPE_WINDOW_H
#define INFERSCOPE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define WINDOW_MAX_CAUSES	24	/* GPU idle causes (attribution.h) */
#define WINDOW_MAX_STATES	16	/* thread states (timeline.h) */

/* Severities as findings.h numbers them: 1 info, 2 warning, 3 critical;
 * 0: no finding. */
const char *window_severity_name(int severity);	/* "none", "info", "warning", "critical" */

struct window_amount {
	const char *name;	/* a static string: "sync_drain", "cuda_sync", ... */
	double seconds;
};

/* One traced process of the window. */
struct window_process {
	__u32 pid;
	char comm[16];
	double cpu_s;			/* its threads' on-CPU time */
	double cuda_sync_s;		/* its threads' time in CUDA synchronizations */
	double gil_wait_s;		/* its threads' time waiting for the GIL */
	__u64 cuda_launches;		/* (estimated when the budget sampled them) */
	__u64 device_memory_bytes;	/* device memory live at the end of the window */
	__u64 device_memory_peak_bytes;
	bool gpu_observed;		/* GPU activity was recorded (CUPTI bridge) */
	double gpu_observed_s, gpu_busy_s;	/* summed over its devices */
	struct window_amount gpu_idle[WINDOW_MAX_CAUSES];	/* GPU idle time by cause */
	size_t gpu_idle_count;
	struct window_amount critical[WINDOW_MAX_STATES];	/* its critical threads' time by state */
	size_t critical_count;
	size_t findings;
	int max_severity;
	const char *top_rule;		/* the costliest finding about it, NULL when none */
	int top_severity;
	double top_cost_s;
};

struct window_result {
	double duration_s;
	bool truncated;			/* the file ends early (a full disk, a kill) */
	char truncation[256];
	__u64 events, drops_total;
	bool budget_sampled;		/* the overhead budget switched the hot path off */
	size_t findings;
	int max_severity;
	struct window_process *procs;	/* by pid */
	size_t proc_count;
};

/* Reads and analyzes the recording at path into *out (freed with
 * window_result__free). 0, or -errno with the reason in err. */
int analyze__window(const char *path, struct window_result **out, char *err, size_t errlen);
void window_result__free(struct window_result *w);

#endif
