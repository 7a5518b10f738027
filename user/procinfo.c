// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "procinfo.h"
#include "isr_format.h"

__u64 procinfo__now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Reads a whole file of unknown size (proc files report size 0). */
static int read_whole(const char *path, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;
	int fd, e;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		free(buf);
		return e;
	}
	for (;;) {
		if (n == cap) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				e = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
fail:
	close(fd);
	free(buf);
	return e;
}

int procinfo__read_small(const char *path, char *buf, size_t size)
{
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, size - 1);
	if (r < 0) {
		r = -errno;
		close(fd);
		return (int)r;
	}
	close(fd);
	buf[r] = '\0';
	if (r > 0 && buf[r - 1] == '\n')
		buf[--r] = '\0';
	return (int)r;
}

/* ppid and state from /proc/PID/stat; comm may hold spaces and ')' so
 * parse after the last ')'. */
static int read_stat(__u32 pid, __u32 *ppid, char *state)
{
	char path[64], buf[1024], *p;
	int n, pp;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = procinfo__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2)
		return -EINVAL;
	*ppid = (__u32)pp;
	return 0;
}

bool procinfo__leader_running(__u32 pid)
{
	__u32 ppid;
	char state;

	if (read_stat(pid, &ppid, &state))
		return false;
	return state != 'Z' && state != 'X';
}

/* A leader that called pthread_exit() stays a zombie while its other
 * threads run: the process is alive while any thread is. */
bool procinfo__alive(__u32 pid)
{
	char path[64], stat_path[384], buf[1024], *p;
	struct dirent *de;
	bool alive = false;
	DIR *d;

	if (procinfo__leader_running(pid))
		return true;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!alive && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(stat_path, sizeof(stat_path), "%s/%s/stat", path, de->d_name);
		if (procinfo__read_small(stat_path, buf, sizeof(buf)) < 0)
			continue;
		p = strrchr(buf, ')');
		alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	}
	closedir(d);
	return alive;
}

static int add_threads(struct rec_props *p, __u32 pid)
{
	struct isr_thread_info *ti = NULL, *nt;
	size_t n = 0, cap = 0;
	char path[64], comm_path[96];
	struct dirent *de;
	DIR *d;
	int e;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (de->d_name[0] == '.' || *end)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nt = realloc(ti, cap * sizeof(*ti));
			if (!nt) {
				e = -ENOMEM;
				goto out;
			}
			ti = nt;
		}
		memset(&ti[n], 0, sizeof(ti[n]));
		ti[n].tid = (__u32)tid;
		snprintf(comm_path, sizeof(comm_path), "%s/%lu/comm", path, tid);
		/* A thread that exits meanwhile keeps an empty name. */
		if (procinfo__read_small(comm_path, ti[n].comm, sizeof(ti[n].comm)) < 0)
			ti[n].comm[0] = '\0';
		n++;
	}
	e = rec_props__add(p, ISR_PROP_PROC_THREADS, ti, n * sizeof(*ti));
out:
	closedir(d);
	free(ti);
	return e;
}

static int add_file(struct rec_props *p, __u32 key, const char *path)
{
	size_t len = 0;
	char *buf = NULL;
	int e;

	e = read_whole(path, &buf, &len);
	if (e)
		return e;
	e = rec_props__add(p, key, buf, len);
	free(buf);
	return e;
}

struct rec_props *procinfo__snapshot(__u32 pid, __u32 origin, __u64 now_mono_ns)
{
	char path[64], buf[4096];
	struct rec_props *p;
	__u32 ppid;
	char state;
	ssize_t n;
	int e;

	e = read_stat(pid, &ppid, &state);
	if (e) {
		errno = e == -ENOENT ? ESRCH : -e;
		return NULL;
	}
	p = rec_props__new();
	if (!p)
		return NULL;
	e = rec_props__add_u32(p, ISR_PROP_PROC_PID, pid);
	e = e ?: rec_props__add_u32(p, ISR_PROP_PROC_PPID, ppid);
	e = e ?: rec_props__add_u32(p, ISR_PROP_PROC_ORIGIN, origin);
	e = e ?: rec_props__add_u64(p, ISR_PROP_PROC_SEEN_MONO_NS, now_mono_ns);
	if (e)
		goto fail;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (procinfo__read_small(path, buf, sizeof(buf)) >= 0 &&
	    (e = rec_props__add_str(p, ISR_PROP_PROC_COMM, buf)))
		goto fail;
	/* The rest is best effort: a process may exit while we read, and
	 * kernel threads have no cmdline or exe. */
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	e = add_file(p, ISR_PROP_PROC_CMDLINE, path);
	if (e == -ENOMEM)
		goto fail;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		e = rec_props__add_str(p, ISR_PROP_PROC_EXE, buf);
		if (e)
			goto fail;
	}
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	e = add_file(p, ISR_PROP_PROC_MAPS, path);
	if (e == -ENOMEM)
		goto fail;
	e = add_threads(p, pid);
	if (e == -ENOMEM)
		goto fail;
	return p;
fail:
	rec_props__free(p);
	errno = -e;
	return NULL;
}

char *procinfo__maps_path(char *line, unsigned long long *start, unsigned long long *offset)
{
	unsigned long long s, o;
	char *file, *nl;
	int pos = 0;

	if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %n", &s, &o, &pos) < 2 || !pos)
		return NULL;
	file = line + pos;
	nl = strchr(file, '\n');
	if (nl)
		*nl = 0;
	if (file[0] != '/')
		return NULL;
	if (start)
		*start = s;
	if (offset)
		*offset = o;
	return file;
}

bool procinfo__maps_has(__u32 pid, const char *needle)
{
	char path[64], line[PATH_MAX + 256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

struct rec_props *procinfo__host(int argc, char **argv, __u64 start_mono_ns, __u64 duration_limit_ns)
{
	struct rec_props *p = rec_props__new();
	char boot_id[64], *cmd = NULL;
	struct utsname u;
	size_t len = 0, off = 0;
	long ncpus;
	int e = 0, i;

	if (!p)
		return NULL;
	if (uname(&u) == 0) {
		e = rec_props__add_str(p, ISR_PROP_HOST_NAME, u.nodename);
		e = e ?: rec_props__add_str(p, ISR_PROP_HOST_KERNEL, u.release);
		e = e ?: rec_props__add_str(p, ISR_PROP_HOST_KERNEL_VERSION, u.version);
		e = e ?: rec_props__add_str(p, ISR_PROP_HOST_MACHINE, u.machine);
	}
	if (!e && procinfo__read_small("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id)) > 0)
		e = rec_props__add_str(p, ISR_PROP_HOST_BOOT_ID, boot_id);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	e = e ?: rec_props__add_u32(p, ISR_PROP_HOST_NCPUS, ncpus > 0 ? (__u32)ncpus : 0);
	e = e ?: rec_props__add_str(p, ISR_PROP_HOST_TOOL_VERSION, "inferscope-bpf " ISR_VERSION);
	e = e ?: rec_props__add_u64(p, ISR_PROP_HOST_START_MONO_NS, start_mono_ns);
	e = e ?: rec_props__add_u64(p, ISR_PROP_HOST_DURATION_LIMIT_NS, duration_limit_ns);
	if (e)
		goto fail;
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	cmd = malloc(len ? len : 1);
	if (!cmd) {
		e = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;

		memcpy(cmd + off, argv[i], l);
		off += l;
	}
	e = rec_props__add(p, ISR_PROP_HOST_COMMAND, cmd, len);
	free(cmd);
	if (e)
		goto fail;
	return p;
fail:
	rec_props__free(p);
	errno = -e;
	return NULL;
}
