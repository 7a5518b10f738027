/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding the CUPTI bridge (libinferscope_cupti.so): in a target process,
 * and the file that record -- CMD hands to the command through
 * CUDA_INJECTION64_PATH. No BPF here (user/tracer.c attaches).
 */
#ifndef INFERSCOPE_CUPTI_ATTACH_H
#define INFERSCOPE_CUPTI_ATTACH_H

#include <stddef.h>
#include <linux/types.h>

#define CUPTI_BRIDGE_NAME "libinferscope_cupti.so"

/* Whether pid maps the bridge: 1 with its path through /proc/PID/root in
 * path, 0 when it does not, -errno when its maps cannot be read (-ESRCH:
 * it is gone). */
int cupti_bridge__mapped(__u32 pid, char *path, size_t len);

/* The bridge for a launched command: explicit (--cupti-bridge) if given,
 * else the file next to this executable. 0 with its absolute path in out,
 * or -errno (-ENOENT: not there). */
int cupti_bridge__locate(const char *explicit_path, char *out, size_t len);

#endif
