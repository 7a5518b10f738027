// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The verdict: what a recording with no finding of weight says plainly. A
 * healthy job is told that the GPU set the pace and the host kept up, from
 * the busy share of its GPU (with GPU activity) or from the share of the
 * launching thread's active time spent waiting for the GPU in
 * synchronizations (without).
 */
#include <stdio.h>

#include "rules.h"
#include "verdict.h"

static bool weighty(const struct findings *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].severity >= SEV_WARNING)
			return true;
	return false;
}

/* The device observed longest over its active part: its busy share. */
static bool busiest_device(const struct rule_ctx *c, const struct attr_device **out, double *busy)
{
	const struct attr_device *best = NULL;

	for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
		const struct attr_device *d = attribution__device_at(c->attr, i);

		if (d->active_ns && (!best || d->active_ns > best->active_ns))
			best = d;
	}
	if (!best)
		return false;
	if (best->estimated) {
		/* the windows' idle time, scaled as the summary scales it */
		for (size_t i = 0; i < c->sum->gpu_device_count; i++)
			if (c->sum->gpu_devices[i].pid == best->pid && c->sum->gpu_devices[i].device == best->device)
				*busy = 1 - c->sum->gpu_devices[i].idle_fraction;
	} else {
		__u64 idle = 0;

		for (int k = 0; k < CAUSE_MAX; k++)
			idle += best->idle_ns[k];
		*busy = idle < best->active_ns ? 1 - (double)idle / (double)best->active_ns : 0;
	}
	*out = best;
	return true;
}

int verdict__make(const struct rule_ctx *c, char *buf, size_t len)
{
	const struct attr_thread *top = NULL;
	const struct attr_device *d;
	double busy = 0, sync;
	char who[96];

	buf[0] = 0;
	if (weighty(c->out))
		return 0;
	if (busiest_device(c, &d, &busy)) {
		if (busy >= VERDICT_BUSY_SHARE)
			snprintf(buf, len, "GPU %u of pid %u was busy %.0f%% of its active time (%.3f s): the GPU set "
				 "the pace and the host kept up. To go faster, make the GPU's work cheaper (the "
				 "kernels by GPU time say where it went).", d->device, d->pid, 100 * busy,
				 (double)d->active_ns / 1e9);
		return 0;
	}
	for (size_t i = 0; i < attribution__thread_count(c->attr); i++) {
		const struct attr_thread *t = attribution__thread_at(c->attr, i);

		if (t->launcher && (!top || tl_acc__total(&t->window) > tl_acc__total(&top->window)))
			top = t;
	}
	if (!top || !tl_acc__total(&top->window))
		return 0;
	sync = (double)top->window.ns[TL_SYNC] / (double)tl_acc__total(&top->window);
	if (sync < VERDICT_SYNC_SHARE)
		return 0;
	rule_task_name(c, top->pid, top->tid, who, sizeof(who));
	snprintf(buf, len, "%s, which launched the GPU work, waited for the GPU in synchronizations %.0f%% of its "
		 "active time: the GPU set the pace and the host kept up (record with --gpu to measure how busy "
		 "it was).", who, 100 * sync);
	if (buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	return 0;
}
