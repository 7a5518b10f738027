/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What /proc and sysfs say about a process and the host, packed as
 * record-file property lists (format/isr_format.h). The /proc readers
 * themselves are lib/proc.h.
 */
#ifndef INFERSCOPE_PROCINFO_H
#define INFERSCOPE_PROCINFO_H

#include <linux/types.h>
#include "rec_writer.h"

/* Snapshot of one process: pid, ppid, comm, cmdline, exe, maps, threads.
 * NULL + errno (ESRCH when it is gone). */
struct rec_props *procinfo__snapshot(__u32 pid, __u32 origin, __u64 now_mono_ns);

/* Host properties; argv is the recorder's own command line. sysfs_root:
 * where sysfs is mounted (NULL: /sys; tests give a fake tree). */
struct rec_props *procinfo__host(int argc, char **argv, __u64 start_mono_ns, __u64 duration_limit_ns,
				 const char *sysfs_root);
/* Adds the host's NVIDIA GPUs (PCI address, PCIe link, NUMA node, local
 * CPUs: ISR_PROP_HOST_GPU) and NUMA nodes (CPUs, memory, distances:
 * ISR_PROP_HOST_NUMA_NODE) found under sysfs_root (NULL: /sys) to p. What
 * is missing is left out. 0 or -ENOMEM. */
int procinfo__host_topology(struct rec_props *p, const char *sysfs_root);

#endif
