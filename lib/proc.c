// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "proc.h"

int proc__read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return err ? err : (int)len;
}

int proc__read_file(const char *path, char **out, size_t *len)
{
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		err = buf__reserve(&buf, &cap, n + 4096);
		if (err)
			break;
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = (char *)buf;
	if (len)
		*len = n;
	return 0;
}

/* comm may hold spaces and ')': parse after the last ')'. */
int proc__stat(__u32 pid, __u32 *ppid, char *state)
{
	char path[64], buf[1024], *p;
	int n, pp;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = proc__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2)
		return -EINVAL;
	*ppid = (__u32)pp;
	return 0;
}

bool proc__leader_running(__u32 pid)
{
	__u32 ppid;
	char state;

	if (proc__stat(pid, &ppid, &state))
		return false;
	return state != 'Z' && state != 'X';
}

struct pid_parent {
	__u32 pid, ppid;
};

/* Every live process of /proc with its parent: 0 with *out (malloc'ed) of
 * *n, or -errno. */
static int list_processes(struct pid_parent **out, size_t *n)
{
	struct pid_parent *all = NULL;
	size_t cap = 0, count = 0;
	struct dirent *de;
	int e = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!e && (de = readdir(d))) {
		char *end, state;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		__u32 ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || pid > UINT32_MAX)
			continue;
		if (proc__stat((__u32)pid, &ppid, &state) || state == 'Z' || state == 'X')
			continue;	/* gone meanwhile, or exited */
		e = array__reserve(&all, &cap, count + 1, sizeof(*all));
		if (!e) {
			all[count].pid = (__u32)pid;
			all[count].ppid = ppid;
			count++;
		}
	}
	closedir(d);
	if (e) {
		free(all);
		return e;
	}
	*out = all;
	*n = count;
	return 0;
}

static bool pid_listed(const __u32 *pids, size_t n, __u32 pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int proc__descendants(const __u32 *roots, size_t nroots, __u32 *out, size_t max)
{
	struct pid_parent *all = NULL;
	size_t n = 0, found = 0, i, j;
	int e;

	e = list_processes(&all, &n);
	if (e)
		return e;
	/* breadth first: the roots' children, then theirs */
	for (i = 0; i < nroots + found && found < max; i++) {
		__u32 parent = i < nroots ? roots[i] : out[i - nroots];

		for (j = 0; j < n && found < max; j++)
			if (all[j].ppid == parent && !pid_listed(roots, nroots, all[j].pid) &&
			    !pid_listed(out, found, all[j].pid))
				out[found++] = all[j].pid;
	}
	free(all);
	return (int)found;
}

int proc__for_each_thread(__u32 pid, int (*fn)(void *ctx, __u32 pid, __u32 tid), void *ctx)
{
	struct dirent *de;
	char path[64];
	int r = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!r && (de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end)
			continue;
		r = fn(ctx, pid, (__u32)tid);
	}
	closedir(d);
	return r;
}

#define PF_EXITING 0x00000004	/* the kernel's task flag: in do_exit */

bool proc__stat_running(const char *stat)
{
	const char *p = strrchr(stat, ')');
	unsigned long flags;

	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	/* state ppid pgrp session tty_nr tpgid flags */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return !(flags & PF_EXITING);
}

/* 1 when thread tid has not exited nor begun to. */
static int thread_running(void *ctx, __u32 pid, __u32 tid)
{
	char path[96], buf[1024];

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if (proc__read_small(path, buf, sizeof(buf)) < 0)
		return 0;
	return proc__stat_running(buf);
}

bool proc__alive(__u32 pid)
{
	return thread_running(NULL, pid, pid) || proc__for_each_thread(pid, thread_running, NULL) > 0;
}

int proc_map__parse(char *line, struct proc_map *m)
{
	unsigned long long start, end, offset, inode;
	char *nl;
	int pos = 0;

	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	if (sscanf(line, "%llx-%llx %*s %llx %*x:%*x %llu %n", &start, &end, &offset, &inode, &pos) < 4 || !pos)
		return -EINVAL;
	m->start = start;
	m->end = end;
	m->offset = offset;
	m->inode = inode;
	m->path = line + pos;
	return 0;
}

bool proc_map__is_file(const struct proc_map *m)
{
	return m->path[0] == '/';
}

struct proc_maps {
	FILE *f;
	char *line;
	size_t cap;
};

struct proc_maps *proc_maps__open(__u32 pid)
{
	struct proc_maps *maps = calloc(1, sizeof(*maps));
	char path[64];

	if (!maps)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	maps->f = fopen(path, "re");
	if (!maps->f) {
		int e = errno == ENOENT ? ESRCH : errno;

		free(maps);
		errno = e;
		return NULL;
	}
	return maps;
}

int proc_maps__next(struct proc_maps *maps, struct proc_map *m)
{
	for (;;) {
		errno = 0;
		if (getline(&maps->line, &maps->cap, maps->f) < 0)
			return errno ? -errno : 0;
		if (proc_map__parse(maps->line, m) == 0)
			return 1;
	}
}

void proc_maps__close(struct proc_maps *maps)
{
	if (!maps)
		return;
	fclose(maps->f);
	free(maps->line);
	free(maps);
}

bool proc_maps__has(__u32 pid, const char *needle)
{
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	bool found = false;

	while (maps && !found && proc_maps__next(maps, &m) > 0)
		found = strstr(m.path, needle) != NULL;
	proc_maps__close(maps);
	return found;
}
