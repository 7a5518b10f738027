/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's targets: the processes of the host that map libcuda, and
 * those whose command line matches one of the configured patterns, each
 * with its cgroup and, when the cgroup path carries them, its container id
 * and Kubernetes pod uid. Processes in containers are found the same way:
 * /proc shows every process of the host's PID namespace.
 */
#ifndef INFERSCOPE_DISCOVER_H
#define INFERSCOPE_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct discovered {
	__u32 pid;
	char comm[16];
	char cgroup[512];	/* its cgroup v2 path (or the first hierarchy's), "" when unknown */
	char container[65];	/* container id (64 hex digits), "" when none */
	char pod[37];		/* Kubernetes pod uid, "" when none */
	bool cuda;		/* it maps libcuda */
	bool matched;		/* its command line matched a pattern */
};

struct discover;

/* Compiles the extended regexes (n may be 0) as settings__compile_match
 * does; cuda: also every process that maps libcuda. NULL with errno set and
 * "PATTERN: reason" in err when one does not compile. */
struct discover *discover__new(bool cuda, const char *const *patterns, size_t n, char *err, size_t errlen);
void discover__free(struct discover *d);	/* safe on NULL */

/* The processes to sample now, by pid, at most max, this process, its
 * ancestors (sudo, a shell: their command lines hold the patterns) and
 * other processes of its executable excluded:
 * how many were stored in out, or -errno when /proc cannot be read. */
int discover__scan(const struct discover *d, struct discovered *out, size_t max);

/* The container id and pod uid a cgroup path carries ("" when it carries
 * none): docker, containerd, CRI-O and podman scopes, cgroupfs and systemd
 * Kubernetes slices (pod uid with '_' for '-'). */
void discover__cgroup_labels(const char *cgroup, char container[65], char pod[37]);

#endif
