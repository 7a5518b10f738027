// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cupti_attach.h"
#include "proc.h"

static bool is_bridge(const char *file)
{
	const char *base = strrchr(file, '/');

	return base && strcmp(base + 1, CUPTI_BRIDGE_NAME) == 0;
}

int cupti_bridge__mapped(__u32 pid, char *path, size_t len)
{
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	int r;

	if (!maps)
		return -errno;
	while ((r = proc_maps__next(maps, &m)) > 0) {
		if (!proc_map__is_file(&m) || !is_bridge(m.path) || strstr(m.path, " (deleted)"))
			continue;
		r = (size_t)snprintf(path, len, "/proc/%u/root%s", pid, m.path) >= len ? -ENAMETOOLONG : 1;
		break;
	}
	proc_maps__close(maps);
	return r;
}

int cupti_bridge__locate(const char *explicit_path, char *out, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (explicit_path) {
		if (!realpath(explicit_path, exe))
			return -errno;
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return n < 0 ? -errno : -ENOENT;
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (!slash || (size_t)(slash - exe) + sizeof("/" CUPTI_BRIDGE_NAME) > sizeof(exe))
			return -ENAMETOOLONG;
		strcpy(slash + 1, CUPTI_BRIDGE_NAME);
	}
	if (access(exe, R_OK))
		return -errno;
	if ((size_t)snprintf(out, len, "%s", exe) >= len)
		return -ENAMETOOLONG;
	return 0;
}
