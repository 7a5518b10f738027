/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Readers of /proc: small files, whole files of unknown size (proc files
 * report size 0), and the one parser of /proc/PID/maps.
 */
#ifndef INFERSCOPE_LIB_PROC_H
#define INFERSCOPE_LIB_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Reads the file into buf (at most size - 1 bytes, NUL-terminated, one
 * trailing newline removed): its length, or -errno. */
int proc__read_small(const char *path, char *buf, size_t size);
/* Reads the whole file into a malloc'ed, NUL-terminated *out of *len
 * bytes (len may be NULL). 0 or -errno. */
int proc__read_file(const char *path, char **out, size_t *len);

/* ppid and state (R, S, D, Z, X, ...) of a task, from /proc/PID/stat. 0 or
 * -errno (-ENOENT: no such task). */
int proc__stat(__u32 pid, __u32 *ppid, char *state);
/* The thread-group leader exists and has not exited. Once it has, the
 * process may be tearing down its address space, and reading
 * /proc/PID/maps can block until that is done (seconds for a process with
 * a GPU context). */
bool proc__leader_running(__u32 pid);
/* The process exists and one of its threads has neither exited nor begun
 * to (a leader that called pthread_exit stays a zombie while its other
 * threads run; a process in exit has already lost its files and address
 * space, and may stay there for seconds while a driver tears its context
 * down: it is past probing). */
bool proc__alive(__u32 pid);
/* Whether a task's /proc stat line tells of one that has neither exited
 * (its state is not a zombie's or a dead task's) nor begun to (its flags,
 * the 9th field, have no PF_EXITING). */
bool proc__stat_running(const char *stat);

/* The live processes descended from any of roots (children, their
 * children, ...; zombies and the roots themselves left out), parents before
 * their children, into out: how many (at most max), or -errno when /proc
 * cannot be listed. A process that forks or exits meanwhile may be missed
 * or listed gone. */
int proc__descendants(const __u32 *roots, size_t nroots, __u32 *out, size_t max);

/* Calls fn for every thread of process pid (/proc/PID/task) until it
 * returns non-zero, and returns that; 0 when it never did, -errno when the
 * threads cannot be listed (-ENOENT: no such process). */
int proc__for_each_thread(__u32 pid, int (*fn)(void *ctx, __u32 pid, __u32 tid), void *ctx);

/* One line of /proc/PID/maps. */
struct proc_map {
	__u64 start, end;
	__u64 offset;		/* file offset of start */
	__u64 inode;
	const char *path;	/* "/..." for a file (" (deleted)" appended when it is),
				 * "[stack]", "[heap]", ...; "" when anonymous */
};

/* Parses one line (its newline, if any, is cut off in place): 0, or
 * -EINVAL when it is not a maps line. m->path points into line. */
int proc_map__parse(char *line, struct proc_map *m);
/* A mapping of a file (its path starts with '/'). */
bool proc_map__is_file(const struct proc_map *m);

struct proc_maps;

/* Opens /proc/PID/maps: NULL with errno set (ESRCH: no such process). */
struct proc_maps *proc_maps__open(__u32 pid);
/* The next mapping: 1 with *m filled (valid until the next call), 0 at the
 * end, -errno. */
int proc_maps__next(struct proc_maps *maps, struct proc_map *m);
void proc_maps__close(struct proc_maps *maps);	/* safe on NULL */

/* Whether a line of /proc/PID/maps contains needle (false when it cannot
 * be read). */
bool proc_maps__has(__u32 pid, const char *needle);

#endif
