/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loading the CUPTI bridge into a -p process that runs CUDA without it
 * (user/inject.h does the loading). The promise: it is loaded only into a
 * process that has already opened a GPU (CUDA initialized: the bridge
 * subscribes to CUPTI in a context that exists), from a copy of the bridge
 * the process can see (its own mount namespace: a container gets a copy in
 * its /tmp), and a refusal says why and what to do instead.
 */
#ifndef INFERSCOPE_BRIDGE_INJECT_H
#define INFERSCOPE_BRIDGE_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* 0 once bridge (a path here) is loaded in pid; -errno with msg filled:
 * -ENODEV when pid maps no libcuda, -EAGAIN when it has no GPU open yet, or
 * any refusal of inject__dlopen. */
int bridge__inject(pid_t pid, const char *bridge, char *msg, size_t len);

#endif
