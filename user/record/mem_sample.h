/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A target process's memory as the kernel tells it in /proc and the
 * cgroup filesystem (struct isr_ev_mem_sample): its resident memory by
 * kind and its swap (/proc/PID/status), its memory cgroup's use, limits
 * and pressure stall totals (cgroup v2: /proc/PID/cgroup names it under
 * SYS/fs/cgroup), the host's pressure where the cgroup has none, and,
 * when asked, its resident memory per NUMA node (/proc/PID/numa_maps,
 * which walks the process's page tables: ask rarely). The roots are
 * parameters so that tests can hand it a fake tree.
 */
#ifndef INFERSCOPE_MEM_SAMPLE_H
#define INFERSCOPE_MEM_SAMPLE_H

#include <stdbool.h>
#include "events.h"

/* Fills out (header included but ts_ns and cpu, left 0). 0, or -errno:
 * -ESRCH when the process is gone. A cgroup or pressure file that cannot
 * be read leaves its fields 0 and its flag clear. */
int mem_sample__read(__u32 pid, const char *proc_root, const char *sys_root, bool numa,
		     struct isr_ev_mem_sample *out);

#endif
