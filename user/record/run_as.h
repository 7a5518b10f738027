/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who the launched command (-- CMD) runs as. The tracer needs root; the
 * job does not, and a job run as root by accident can do anything. Under
 * sudo (root with SUDO_UID set) the command runs as the user who invoked
 * sudo, with that user's groups, as perf and strace -u do; --user names
 * another user and --run-as-root keeps root. The promise: the command
 * never holds more than the credentials resolved here (every uid and gid,
 * real, effective and saved, and the supplementary groups), and its
 * environment is the one sudo left with HOME, USER, LOGNAME and SHELL of
 * the user it runs as.
 */
#ifndef INFERSCOPE_RUN_AS_H
#define INFERSCOPE_RUN_AS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_AS_MAX_GROUPS 1024

enum run_as_mode {
	RUN_AS_INVOKER,		/* under sudo the user who ran it; else as the tracer runs */
	RUN_AS_ROOT,		/* --run-as-root: as the tracer runs */
	RUN_AS_USER,		/* --user USER */
};

struct run_as {
	bool change;		/* false: the command keeps the tracer's credentials */
	uid_t uid;
	gid_t gid;
	gid_t groups[RUN_AS_MAX_GROUPS];
	size_t ngroups;
	char user[64];		/* "" when the uid has no name */
	char home[PATH_MAX];	/* "" when unknown: HOME is left as it is */
	char shell[PATH_MAX];
	const char *source;	/* why: "sudo" or "--user" */
	const char *groups_from; /* where the groups came from, for -v */
};

/* Resolves mode (user: the --user argument, NAME or UID[:GID]) into r.
 * 0, or -errno with err saying what is wrong and what to do. */
int run_as__resolve(enum run_as_mode mode, const char *user, struct run_as *r, char *err, size_t errlen);

/* In the forked command, before exec: takes r's credentials for good and
 * sets its environment. 0 or -errno (the command must not run then). */
int run_as__apply(const struct run_as *r);

/* Whether the command, with r's credentials, can read path: 0, or -errno
 * of access(2) made with them (in a child process). */
int run_as__can_read(const struct run_as *r, const char *path);

#endif
