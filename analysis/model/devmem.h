/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory of each process at every moment, fed the events in pass
 * order, with the summary's definition (summary.h, "device memory"):
 * successful allocations of kinds DEVICE, ASYNC and MANAGED not yet freed,
 * plus VMM handles not yet released; a process whose address space ended
 * (the task model's: an exec, its last thread's exit) holds nothing. For
 * the charts, the trace and `top` that draw it over time.
 */
#ifndef INFERSCOPE_DEVMEM_H
#define INFERSCOPE_DEVMEM_H

#include <stdbool.h>
#include <linux/types.h>
#include "registry.h"
#include "tasks.h"

struct devmem;

struct devmem *devmem__new(void);
void devmem__free(struct devmem *m);

/* Takes in one usable event (format/registry.h) and what it changed of the
 * tasks (tasks.h). 1 when it changed the live bytes of its process (*pid
 * and *live set), 0 when not, -ENOMEM. */
int devmem__event(struct devmem *m, const struct isr_ev_hdr *h, const struct task_change *c, __u32 *pid,
		  __u64 *live);

#endif
