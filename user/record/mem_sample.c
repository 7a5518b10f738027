// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A target process's memory from /proc and cgroup v2 (user/record/mem_sample.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem_sample.h"

/* The first line of path, without its newline. 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int e = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		e = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return e;
}

/* A cgroup file holding a byte count or "max". 0 or -errno. */
static int read_bytes(const char *dir, const char *name, __u64 *out)
{
	char path[4096], line[64], *end;
	unsigned long long v;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (read_line(path, line, sizeof(line)))
		return -ENOENT;
	if (strcmp(line, "max") == 0) {
		*out = ISR_MEM_UNLIMITED;
		return 0;
	}
	errno = 0;
	v = strtoull(line, &end, 10);
	if (errno || end == line || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=123" and a "full" line. */
static int read_pressure(const char *path, struct isr_ev_mem_sample *m)
{
	FILE *f = fopen(path, "re");
	char line[256];
	int seen = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *t = strstr(line, "total=");
		unsigned long long v;

		if (!t || sscanf(t, "total=%llu", &v) != 1)
			continue;
		if (strncmp(line, "some ", 5) == 0)
			m->psi_some_us = v, seen |= 1;
		else if (strncmp(line, "full ", 5) == 0)
			m->psi_full_us = v, seen |= 2;
	}
	fclose(f);
	return seen & 1 ? 0 : -EINVAL;
}

static int read_status(const char *proc_root, __u32 pid, struct isr_ev_mem_sample *m)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "RssAnon:", offsetof(struct isr_ev_mem_sample, rss_anon_bytes) },
		{ "RssFile:", offsetof(struct isr_ev_mem_sample, rss_file_bytes) },
		{ "RssShmem:", offsetof(struct isr_ev_mem_sample, rss_shmem_bytes) },
		{ "VmSwap:", offsetof(struct isr_ev_mem_sample, swap_bytes) },
	};
	char path[4096], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t kl = strlen(keys[i].key);
			unsigned long long kb;

			if (strncmp(line, keys[i].key, kl) == 0 && sscanf(line + kl, "%llu", &kb) == 1)
				*(__u64 *)((char *)m + keys[i].off) = (__u64)kb << 10;
		}
	}
	fclose(f);
	return 0;
}

/* Its memory cgroup's directory: cgroup v2's ("0::/path" in
 * /proc/PID/cgroup) when v1 is 0, else v1's memory hierarchy's
 * ("N:memory:/path"). 0 or -errno. */
static int cgroup_dir(const char *proc_root, const char *sys_root, __u32 pid, bool v1, char *dir, size_t len)
{
	char path[4096], line[4096];
	FILE *f;
	int e = -ENOENT;

	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (e && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		const char *rel = v1 ? strstr(line, ":memory:/") : NULL;

		if (v1 && rel)
			rel += 8;
		else if (!v1 && strncmp(line, "0::/", 4) == 0)
			rel = line + 3;
		else
			continue;
		if (strstr(rel, "/.."))
			continue;
		e = snprintf(dir, len, "%s/fs/cgroup%s%s", sys_root, v1 ? "/memory" : "", strcmp(rel, "/") ? rel : "") <
				    (int)len ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return e;
}

/* Resident bytes per node: each mapping's "N<node>=<pages>" times its
 * kernelpagesize_kB (4 where it does not say). */
static void read_numa(const char *proc_root, __u32 pid, struct isr_ev_mem_sample *m)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/numa_maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long page_kb = 4, pages[ISR_MEM_NODES] = { 0 };
		char *tok, *save = NULL;

		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			unsigned int node;
			unsigned long long n;

			if (sscanf(tok, "kernelpagesize_kB=%llu", &n) == 1)
				page_kb = n;
			else if (tok[0] == 'N' && sscanf(tok, "N%u=%llu", &node, &n) == 2 && node < ISR_MEM_NODES) {
				pages[node] += n;
				if (node + 1 > m->nnodes)
					m->nnodes = node + 1;
			}
		}
		for (unsigned int i = 0; i < ISR_MEM_NODES; i++)
			m->numa_bytes[i] += (__u64)(pages[i] * page_kb) << 10;
	}
	free(line);
	fclose(f);
	m->flags |= ISR_MEM_NUMA;
}

int mem_sample__read(__u32 pid, const char *proc_root, const char *sys_root, bool numa,
		     struct isr_ev_mem_sample *out)
{
	char dir[4096], path[4200];
	int e;

	memset(out, 0, sizeof(*out));
	out->hdr.type = ISR_EV_MEM_SAMPLE;
	out->hdr.size = sizeof(*out);
	out->hdr.pid = pid;
	e = read_status(proc_root, pid, out);
	if (e)
		return e;
	if (!cgroup_dir(proc_root, sys_root, pid, false, dir, sizeof(dir))) {
		if (!read_bytes(dir, "memory.current", &out->cg_current_bytes)) {
			out->flags |= ISR_MEM_CGROUP;
			if (read_bytes(dir, "memory.high", &out->cg_high_bytes))
				out->cg_high_bytes = ISR_MEM_UNLIMITED;
			if (read_bytes(dir, "memory.max", &out->cg_max_bytes))
				out->cg_max_bytes = ISR_MEM_UNLIMITED;
		}
		snprintf(path, sizeof(path), "%s/memory.pressure", dir);
		if (!read_pressure(path, out))
			out->flags |= ISR_MEM_PSI;
	}
	/* cgroup v1: usage and limit, no pressure of its own */
	if (!(out->flags & ISR_MEM_CGROUP) && !cgroup_dir(proc_root, sys_root, pid, true, dir, sizeof(dir)) &&
	    !read_bytes(dir, "memory.usage_in_bytes", &out->cg_current_bytes)) {
		out->flags |= ISR_MEM_CGROUP;
		out->cg_high_bytes = ISR_MEM_UNLIMITED;
		/* v1 says "no limit" with the largest page-aligned value */
		if (read_bytes(dir, "memory.limit_in_bytes", &out->cg_max_bytes) || out->cg_max_bytes >= 1ULL << 62)
			out->cg_max_bytes = ISR_MEM_UNLIMITED;
	}
	if (!(out->flags & ISR_MEM_PSI)) {
		snprintf(path, sizeof(path), "%s/pressure/memory", proc_root);
		if (!read_pressure(path, out))
			out->flags |= ISR_MEM_PSI | ISR_MEM_PSI_HOST;
	}
	if (numa)
		read_numa(proc_root, pid, out);
	return 0;
}
