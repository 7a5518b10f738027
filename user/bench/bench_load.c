// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "bench_load.h"

static double cpu_seconds(const struct rusage *r)
{
	return (double)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) +
	       (double)(r->ru_utime.tv_usec + r->ru_stime.tv_usec) / 1e6;
}

void bench_load__begin(struct bench_load *l)
{
	unsigned long long v[8] = { 0 };
	struct rusage self, kids;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");

	memset(l, 0, sizeof(*l));
	/* cpu  user nice system idle iowait irq softirq steal */
	if (f && fgets(line, sizeof(line), f) &&
	    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]) == 8) {
		l->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		l->busy = v[0] + v[1] + v[2] + v[5] + v[6];
		l->steal = v[7];
	}
	if (f)
		fclose(f);
	f = fopen("/proc/loadavg", "r");
	if (!f || fscanf(f, "%lf", &l->loadavg) != 1)
		l->loadavg = -1;
	if (f)
		fclose(f);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	l->own_s = cpu_seconds(&self) + cpu_seconds(&kids);
}

json_t *bench_load__end(const struct bench_load *a, char *line, size_t len)
{
	struct bench_load b;
	double hz = (double)sysconf(_SC_CLK_TCK), cpus = (double)sysconf(_SC_NPROCESSORS_ONLN), total, others;

	bench_load__begin(&b);
	total = (double)(b.total - a->total) / hz;	/* CPU seconds of all CPUs */
	if (!(total > 0) || !(cpus > 0)) {
		snprintf(line, len, "machine load: unknown (no /proc/stat)");
		return json_object();
	}
	others = (double)(b.busy - a->busy) / hz - (b.own_s - a->own_s);
	if (others < 0)
		others = 0;
	snprintf(line, len, "machine load: other tasks used %.0f%% of the CPUs over %.0f s, steal %.1f%%, "
		 "load average %.2f then %.2f", 100 * others / total, total / cpus,
		 100 * (double)(b.steal - a->steal) / hz / total, a->loadavg, b.loadavg);
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", "seconds", total / cpus, "other_tasks_cpu_pct",
			 100 * others / total, "steal_pct", 100 * (double)(b.steal - a->steal) / hz / total,
			 "loadavg_start", a->loadavg, "loadavg_end", b.loadavg);
}
