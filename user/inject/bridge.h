/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CUPTI bridge (cupti_bridge/, libinferscope_cupti.so) as the recorder
 * sees it: found in a target process, located for the command to launch
 * (CUDA_INJECTION64_PATH), and loaded into a -p process that runs CUDA
 * without it (user/inject/inject.h does the loading). No BPF here
 * (user/probes/family_gpu.c attaches). The promise of the loading: only into a
 * process that has already opened a GPU (CUDA initialized: the bridge
 * subscribes to CUPTI in a context that exists), from a copy of the bridge
 * the process can see (its own mount namespace: a container gets a copy in
 * its /tmp), and a refusal says why and what to do instead. A container's
 * filesystem is its user's: every path in it is resolved inside its root
 * without following a link (lib/root_path.h), the copy goes into a fresh
 * directory of the tracer's own under a random name, and right before the
 * target loads it the file is checked to be the one written
 * (docs/security.md).
 */
#ifndef INFERSCOPE_BRIDGE_H
#define INFERSCOPE_BRIDGE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#define BRIDGE_NAME "libinferscope_cupti.so"

/* Whether pid maps the bridge: 1 with its path through /proc/PID/root in
 * path, 0 when it does not, -errno when its maps cannot be read (-ESRCH:
 * it is gone). */
int bridge__mapped(__u32 pid, char *path, size_t len);

/* Where a tracer's window uprobes go in the bridge file at path
 * (cupti_bridge/bridge.c): the file offsets of the site
 * inferscope_gpu_window_site and of the reference counters
 * inferscope_gpu_window_semaphore and inferscope_gpu_close_semaphore. */
struct bridge_window_sites {
	__u64 site;
	__u64 window_ref;
	__u64 close_ref;
};

/* 0, or -errno (-ENOENT: a bridge without them, of an older version). */
int bridge__window_sites(const char *path, struct bridge_window_sites *out);

/* The bridge for a launched command: explicit (--cupti-bridge) if given,
 * else the file next to this executable. 0 with its absolute path in out,
 * or -errno (-ENOENT: not there). */
int bridge__locate(const char *explicit_path, char *out, size_t len);

/* The bridge where pid can load it: path, as pid sees it, names the file
 * (dev, ino) in pid's root directory (root_dev, root_ino). */
struct bridge_placed {
	char path[PATH_MAX];
	dev_t dev, root_dev;
	ino_t ino, root_ino;
};

/* Finds bridge (a path here) at the same path in pid's root, or copies it
 * into a fresh directory of pid's /tmp. 0, or -errno with msg filled. */
int bridge__place(pid_t pid, const char *bridge, struct bridge_placed *p, char *msg, size_t len);
/* 0 while p->path in pid's root is still the file placed; -ESTALE (or
 * -ESRCH: pid is gone) with msg filled. */
int bridge__check_placed(pid_t pid, const struct bridge_placed *p, char *msg, size_t len);

/* 0 once bridge (a path here) is loaded in pid; -errno with msg filled:
 * -ENODEV when pid maps no libcuda, -EAGAIN when it has no GPU open yet, or
 * any refusal of inject__dlopen. */
int bridge__inject(pid_t pid, const char *bridge, char *msg, size_t len);

#endif
