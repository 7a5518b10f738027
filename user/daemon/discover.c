// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "discover.h"
#include "probed_lib.h"
#include "proc.h"
#include "settings.h"

struct discover {
	bool cuda;
	regex_t *re;
	size_t n;
};

struct discover *discover__new(bool cuda, const char *const *patterns, size_t n, char *err, size_t errlen)
{
	struct discover *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cuda = cuda;
	d->re = calloc(n ? n : 1, sizeof(*d->re));
	if (!d->re) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	for (; d->n < n; d->n++)
		if (settings__compile_match(&d->re[d->n], patterns[d->n], err, errlen)) {
			discover__free(d);
			errno = EINVAL;
			return NULL;
		}
	return d;
}

void discover__free(struct discover *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		regfree(&d->re[i]);
	free(d->re);
	free(d);
}

static bool hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* A 64-hex-digit container id in one path component: <id>, or a scope
 * such as docker-<id>.scope, cri-containerd-<id>.scope, crio-<id>.scope,
 * libpod-<id>.scope. */
static bool component_container(const char *c, size_t len, char out[65])
{
	const char *dash;
	size_t n = len;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	dash = memrchr(c, '-', n);
	if (dash) {
		n -= (size_t)(dash + 1 - c);
		c = dash + 1;
	}
	if (n != 64 || !hex_run(c, 64))
		return false;
	memcpy(out, c, 64);
	out[64] = '\0';
	return true;
}

/* A pod uid in one component: pod<uid> (cgroupfs) or
 * kubepods-<qos>-pod<uid with '_'>.slice (systemd). */
static bool component_pod(const char *c, size_t len, char out[37])
{
	for (const char *p = c; p + 3 + 36 <= c + len; p++) {
		if (memcmp(p, "pod", 3) || (p != c && p[-1] != '-'))
			continue;
		for (int i = 0; i < 36; i++) {
			char ch = p[3 + i];

			if (i == 8 || i == 13 || i == 18 || i == 23) {
				if (ch != '-' && ch != '_')
					return false;
				ch = '-';
			} else if (!isxdigit((unsigned char)ch)) {
				return false;
			}
			out[i] = (char)tolower((unsigned char)ch);
		}
		out[36] = '\0';
		return true;
	}
	return false;
}

void discover__cgroup_labels(const char *cgroup, char container[65], char pod[37])
{
	const char *c = cgroup;

	container[0] = pod[0] = '\0';
	/* Components are separated by '/', and by ':' in the systemd driver's
	 * "<pod slice>:cri-containerd:<id>" form. */
	while (*c) {
		size_t len = strcspn(c, "/:");

		/* The innermost wins: a pod's container is below its pod. */
		component_container(c, len, container);
		component_pod(c, len, pod);
		c += len;
		if (*c)
			c++;
	}
}

/* Its cgroup v2 path ("0::/path"), else the first hierarchy's. */
static void read_cgroup(__u32 pid, char *out, size_t len)
{
	char path[64], *buf = NULL, *line, *save = NULL;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (proc__read_file(path, &buf, NULL))
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strchr(line, ':');

		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		if (!strncmp(line, "0::", 3) || !out[0])
			snprintf(out, len, "%s", p + 1);
		if (!strncmp(line, "0::", 3))
			break;
	}
	free(buf);
}

static bool maps_libcuda(__u32 pid)
{
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	bool found = false;

	while (maps && !found && proc_maps__next(maps, &m) > 0)
		found = proc_map__is_file(&m) && probed_lib_kind__names(&probed_cuda, m.path) &&
			!strstr(m.path, " (deleted)");
	proc_maps__close(maps);
	return found;
}

static bool cmdline_matches(const struct discover *d, __u32 pid)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	bool hit = false;

	if (!d->n)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	if (proc__read_file(path, &buf, &len) || !len) {
		free(buf);
		return false;
	}
	for (size_t i = 0; i + 1 < len; i++)
		if (!buf[i])
			buf[i] = ' ';
	for (size_t i = 0; i < d->n && !hit; i++)
		hit = regexec(&d->re[i], buf, 0, NULL, 0) == 0;
	free(buf);
	return hit;
}

/* The daemon never watches itself: not its own process, not the
 * processes that started it (sudo, a shell, timeout: their command lines
 * hold its --match patterns), not another inferscope-bpf (the same
 * executable). */
struct self {
	__u32 pids[64];		/* this process and its ancestors */
	size_t n;
	char exe[PATH_MAX];	/* "" when unknown */
};

static void self_of(struct self *me)
{
	__u32 pid = (__u32)getpid(), ppid;
	char state;
	ssize_t len = readlink("/proc/self/exe", me->exe, sizeof(me->exe) - 1);

	me->exe[len > 0 ? len : 0] = '\0';
	me->n = 0;
	while (pid > 1 && me->n < sizeof(me->pids) / sizeof(me->pids[0])) {
		me->pids[me->n++] = pid;
		if (proc__stat(pid, &ppid, &state))
			break;
		pid = ppid;
	}
}

static bool is_self(const struct self *me, __u32 pid)
{
	char path[64], exe[PATH_MAX];
	ssize_t len;

	for (size_t i = 0; i < me->n; i++)
		if (me->pids[i] == pid)
			return true;
	if (!me->exe[0])
		return false;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len <= 0)
		return false;
	exe[len] = '\0';
	return strcmp(exe, me->exe) == 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct discovered *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int discover__scan(const struct discover *d, struct discovered *out, size_t max)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	struct self me;
	size_t n = 0;

	if (!dir)
		return -errno;
	self_of(&me);
	while ((de = readdir(dir)) && n < max) {
		struct discovered *p = &out[n];
		char *end, path[64];
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || is_self(&me, (__u32)pid))
			continue;
		/* A process whose leader exited may be tearing down its
		 * address space: reading its maps could block. */
		if (!proc__leader_running((__u32)pid))
			continue;
		memset(p, 0, sizeof(*p));
		p->pid = (__u32)pid;
		p->cuda = d->cuda && maps_libcuda(p->pid);
		p->matched = cmdline_matches(d, p->pid);
		if (!p->cuda && !p->matched)
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/comm", pid);
		if (proc__read_small(path, p->comm, sizeof(p->comm)) < 0)
			continue;	/* gone meanwhile */
		read_cgroup(p->pid, p->cgroup, sizeof(p->cgroup));
		discover__cgroup_labels(p->cgroup, p->container, p->pod);
		n++;
	}
	closedir(dir);
	qsort(out, n, sizeof(*out), by_pid);
	return (int)n;
}
