// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "gpu_windows.h"

void gpu_windows__init(struct gpu_windows *g, double share, double record_cost_ns, __u64 period_ns)
{
	memset(g, 0, sizeof(*g));
	g->share = share;
	g->record_cost_ns = record_cost_ns;
	g->period_ns = period_ns < 2 * GPU_WINDOW_MIN_NS ? 2 * GPU_WINDOW_MIN_NS : period_ns;
	g->rate = -1;
}

/* The window whose cost, at the measured rate, plus the detach is
 * share x period: w * rate + detach = share * period. */
__u64 gpu_windows__plan(const struct gpu_windows *g)
{
	double w;

	if (g->rate < 0)
		return GPU_WINDOW_FIRST_NS;
	if (g->rate == 0)
		return g->period_ns;
	w = (g->share * (double)g->period_ns - g->detach_ns) / g->rate;
	if (w < GPU_WINDOW_MIN_NS)
		return GPU_WINDOW_MIN_NS;
	return w >= (double)(g->period_ns - GPU_WINDOW_MIN_NS) ? g->period_ns : (__u64)w;
}

enum gpu_window_action gpu_windows__decide(const struct gpu_windows *g, __u64 now_ns, __u64 *next_ns)
{
	__u64 end;

	if (!g->open) {
		*next_ns = g->next_open_ns > now_ns ? g->next_open_ns : now_ns;
		return now_ns >= g->next_open_ns ? GPU_WINDOW_OPEN : GPU_WINDOW_KEEP;
	}
	if (g->continuous) {
		/* Measured again each period: stays open while that still
		 * fits the budget. */
		*next_ns = now_ns + g->period_ns;
		return gpu_windows__plan(g) < g->period_ns ? GPU_WINDOW_CLOSE : GPU_WINDOW_KEEP;
	}
	end = g->opened_ns + g->length_ns;
	*next_ns = end > now_ns ? end : now_ns;
	return now_ns >= end ? GPU_WINDOW_CLOSE : GPU_WINDOW_KEEP;
}

void gpu_windows__switched(struct gpu_windows *g, bool open, __u64 now_ns)
{
	g->open = open;
	if (open) {
		g->opened_ns = now_ns;
		g->length_ns = gpu_windows__plan(g);
		g->continuous = g->length_ns >= g->period_ns;
		g->measured = false;
		g->windows++;
		return;
	}
	g->next_open_ns = g->opened_ns + g->period_ns;
	if (g->next_open_ns < now_ns + GPU_WINDOW_MIN_NS)
		g->next_open_ns = now_ns + GPU_WINDOW_MIN_NS;
}

void gpu_windows__measured(struct gpu_windows *g, __u64 busiest_records, __u64 span_ns, __u64 detach_ns)
{
	double rate;

	/* A window that stayed open for whole periods was measured each
	 * period: the record of its close adds nothing. */
	if (!span_ns || (g->continuous && !g->open))
		return;
	rate = (double)busiest_records * g->record_cost_ns / (double)span_ns;
	if (!g->measured || g->continuous || rate > g->rate)
		g->rate = rate;
	if (!g->measured || (double)detach_ns > g->detach_ns)
		g->detach_ns = (double)detach_ns;
	g->measured = true;
	/* A window that cost more than planned (it closed late, or the
	 * calls sped up) is paid for by a longer gap. */
	if (!g->open && g->share > 0) {
		double cost = (double)busiest_records * g->record_cost_ns + (double)detach_ns;
		__u64 repaid = g->opened_ns + (__u64)(cost / g->share);

		if (repaid > g->next_open_ns)
			g->next_open_ns = repaid;
	}
}
