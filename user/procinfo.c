// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
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
#include "buf.h"
#include "proc.h"

struct thread_list {
	struct isr_thread_info *ti;
	size_t n, cap;
};

static int thread_list__add(void *ctx, __u32 pid, __u32 tid)
{
	struct thread_list *l = ctx;
	char comm_path[96];
	int e;

	e = array__reserve(&l->ti, &l->cap, l->n + 1, sizeof(*l->ti));
	if (e)
		return e;
	memset(&l->ti[l->n], 0, sizeof(l->ti[l->n]));
	l->ti[l->n].tid = tid;
	snprintf(comm_path, sizeof(comm_path), "/proc/%u/task/%u/comm", pid, tid);
	/* A thread that exits meanwhile keeps an empty name. */
	if (proc__read_small(comm_path, l->ti[l->n].comm, sizeof(l->ti[l->n].comm)) < 0)
		l->ti[l->n].comm[0] = '\0';
	l->n++;
	return 0;
}

static int add_threads(struct rec_props *p, __u32 pid)
{
	struct thread_list l = { NULL, 0, 0 };
	int e;

	e = proc__for_each_thread(pid, thread_list__add, &l);
	e = e ?: rec_props__add(p, ISR_PROP_PROC_THREADS, l.ti, l.n * sizeof(*l.ti));
	free(l.ti);
	return e;
}

static int add_file(struct rec_props *p, __u32 key, const char *path)
{
	size_t len = 0;
	char *buf = NULL;
	int e;

	e = proc__read_file(path, &buf, &len);
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

	e = proc__stat(pid, &ppid, &state);
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
	if (proc__read_small(path, buf, sizeof(buf)) >= 0 &&
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
	if (!e && proc__read_small("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id)) > 0)
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
