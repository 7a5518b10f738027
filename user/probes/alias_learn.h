/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When the probes of cuKernelGetFunction are worth their cost. The CUDA
 * runtime calls it once per launch (63,104 times in 15 s of a ResNet
 * training step loop) to map a kernel (CUkernel) to its function in the
 * current context (CUfunction): a mapping that never changes, which the
 * report needs once, to name launches made with the function handle. Each
 * call probed costs two hits (entry and return).
 *
 * So, per process: the probes stay on while calls teach new (kernel,
 * function) pairs; after ALIAS_QUIET_CALLS calls in a row that taught
 * nothing, they are released. They are attached again when the process
 * names a kernel (cuLibraryGetKernel, cuModuleGetFunction: a new kernel
 * whose function it will map), and ALIAS_RELEARN_NS after they were
 * released (a new context maps known kernels to new functions without
 * naming anything), until the calls are quiet again.
 *
 * Pure: the caller switches the probes when told to (user/probes/family_cuda.c),
 * which is what makes it testable without BPF.
 */
#ifndef INFERSCOPE_ALIAS_LEARN_H
#define INFERSCOPE_ALIAS_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "htab.h"

#define ALIAS_QUIET_CALLS	256			/* calls in a row that taught nothing */
#define ALIAS_RELEARN_NS	10000000000ULL		/* released this long: on again */
#define ALIAS_MAX_PAIRS		(1u << 18)		/* pairs remembered, all processes */

enum alias_action {
	ALIAS_KEEP,
	ALIAS_RELEASE,		/* release the process's probes */
	ALIAS_ATTACH,		/* attach them again */
};

struct alias_learn {
	struct htab pairs;	/* (pid, kernel, function) seen */
	struct htab procs;	/* pid -> its state */
};

void alias_learn__init(struct alias_learn *l);
void alias_learn__free(struct alias_learn *l);

/* pid mapped kernel to function (a cuKernelGetFunction that succeeded);
 * -ENOMEM when it cannot be remembered. */
int alias_learn__mapped(struct alias_learn *l, __u32 pid, __u64 kernel, __u64 function, enum alias_action *act);
/* pid named a kernel. */
int alias_learn__named(struct alias_learn *l, __u32 pid, enum alias_action *act);
/* The caller switched pid's probes as told (on: attached). */
void alias_learn__switched(struct alias_learn *l, __u32 pid, bool on, __u64 now);
/* Up to max processes whose probes have been released ALIAS_RELEARN_NS
 * or longer, into pids: to attach again. How many. */
size_t alias_learn__due(const struct alias_learn *l, __u64 now, __u32 *pids, size_t max);
/* pid is a new image (exec) or gone: what was learned of it is void. */
void alias_learn__forget(struct alias_learn *l, __u32 pid);

#endif
