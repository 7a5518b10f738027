/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How busy other work kept the machine while the benchmarks ran: what makes
 * their figures noisy, told with every run (bench's JSON "machine.load").
 */
#ifndef INFERSCOPE_BENCH_LOAD_H
#define INFERSCOPE_BENCH_LOAD_H

#include <stddef.h>
#include <jansson.h>

struct bench_load {
	unsigned long long busy, total, steal;	/* /proc/stat, all CPUs, USER_HZ ticks */
	double own_s;				/* this process and its reaped children, CPU seconds */
	double loadavg;				/* 1-minute load average, -1 unknown */
};

/* The machine's counters now. */
void bench_load__begin(struct bench_load *l);
/* Since begin: {"seconds", "other_tasks_cpu_pct" (the CPUs' time other
 * processes used), "steal_pct", "loadavg_start", "loadavg_end"}, and the
 * same in words into line. */
json_t *bench_load__end(const struct bench_load *begin, char *line, size_t len);

#endif
