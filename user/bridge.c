// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "bridge.h"
#include "inject.h"
#include "proc.h"

/* Whether pid holds a GPU device open (/dev/nvidia0, /dev/nvidia1, ...):
 * the driver opens one when CUDA creates a context. */
static bool gpu_open(pid_t pid)
{
	char dir[64], link[PATH_MAX + 64], target[PATH_MAX];
	struct dirent *d;
	bool found = false;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	fds = opendir(dir);
	if (!fds)
		return false;
	while (!found && (d = readdir(fds))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = !strncmp(target, "/dev/nvidia", 11) && target[11] >= '0' && target[11] <= '9';
	}
	closedir(fds);
	return found;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, e = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		e = -errno;
		close(in);
		return e;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			e = errno ? -errno : -EIO;
			break;
		}
	if (n < 0)
		e = -errno;
	if (close(out) && !e)
		e = -errno;
	close(in);
	return e;
}

/* The bridge as pid sees it: the same path when its mount namespace shows
 * the same file there, else a copy in its /tmp. */
static int visible_path(pid_t pid, const char *bridge, char *out, size_t len, char *msg, size_t msglen)
{
	char there[PATH_MAX + 128], dir[64];
	struct stat a, b;
	int e;

	if (stat(bridge, &a)) {
		e = -errno;
		snprintf(msg, msglen, "cannot read the CUPTI bridge %s: %s", bridge, strerror(-e));
		return e;
	}
	snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, bridge);
	if (!stat(there, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		snprintf(out, len, "%s", bridge);
		return 0;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/root/tmp/inferscope-bpf", (int)pid);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		e = -errno;
		snprintf(msg, msglen, "pid %d cannot see the CUPTI bridge %s (another mount namespace) and a copy "
			 "cannot be made in its /tmp: %s", (int)pid, bridge, strerror(-e));
		return e;
	}
	snprintf(there, sizeof(there), "%s/libinferscope_cupti.so", dir);
	e = copy_file(bridge, there);
	if (e) {
		snprintf(msg, msglen, "cannot copy the CUPTI bridge into the /tmp of pid %d: %s", (int)pid,
			 strerror(-e));
		return e;
	}
	snprintf(out, len, "/tmp/inferscope-bpf/libinferscope_cupti.so");
	return 0;
}

int bridge__inject(pid_t pid, const char *bridge, char *msg, size_t len)
{
	char path[PATH_MAX];
	uint64_t handle;
	int e;

	if (!proc_maps__has((__u32)pid, "/libcuda.so")) {
		snprintf(msg, len, "pid %d runs no CUDA (no libcuda mapped)", (int)pid);
		return -ENODEV;
	}
	if (!gpu_open(pid)) {
		snprintf(msg, len, "pid %d has no GPU open yet (CUDA not initialized), so the CUPTI bridge is not "
			 "loaded into it: attach again once it runs CUDA, or start it under inferscope-bpf record -- CMD",
			 (int)pid);
		return -EAGAIN;
	}
	e = visible_path(pid, bridge, path, sizeof(path), msg, len);
	if (e)
		return e;
	return inject__dlopen(pid, path, &handle, msg, len);
}

static bool is_bridge(const char *file)
{
	const char *base = strrchr(file, '/');

	return base && strcmp(base + 1, BRIDGE_NAME) == 0;
}

int bridge__mapped(__u32 pid, char *path, size_t len)
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

int bridge__locate(const char *explicit_path, char *out, size_t len)
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
		if (!slash || (size_t)(slash - exe) + sizeof("/" BRIDGE_NAME) > sizeof(exe))
			return -ENAMETOOLONG;
		strcpy(slash + 1, BRIDGE_NAME);
	}
	if (access(exe, R_OK))
		return -errno;
	if ((size_t)snprintf(out, len, "%s", exe) >= len)
		return -ENAMETOOLONG;
	return 0;
}
