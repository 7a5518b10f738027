/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What /proc says about a process and the host, packed as record-file
 * property lists (format/isr_format.h).
 */
#ifndef INFERSCOPE_PROCINFO_H
#define INFERSCOPE_PROCINFO_H

#include <stdbool.h>
#include <linux/types.h>
#include "rec_writer.h"

/* Snapshot of one process: pid, ppid, comm, cmdline, exe, maps, threads.
 * NULL + errno (ESRCH when it is gone). */
struct rec_props *procinfo__snapshot(__u32 pid, __u32 origin, __u64 now_mono_ns);

/* Host properties; argv is the recorder's own command line. */
struct rec_props *procinfo__host(int argc, char **argv, __u64 start_mono_ns, __u64 duration_limit_ns);

/* The process exists and one of its threads has not exited. */
bool procinfo__alive(__u32 pid);
/* The thread-group leader exists and has not exited. Once it has, the
 * process may be tearing down its address space, and reading
 * /proc/PID/maps can block until that is done (seconds for a process with
 * a GPU context). */
bool procinfo__leader_running(__u32 pid);

/* The pathname of one line of /proc/PID/maps ("address perms offset dev
 * inode path"), NUL-terminated in place, or NULL for a line that names no
 * file (anonymous, [heap], [stack]...); *start and *offset, when not NULL,
 * the mapping's address and file offset. */
char *procinfo__maps_path(char *line, unsigned long long *start, unsigned long long *offset);
/* Whether a line of /proc/PID/maps contains needle (false when it cannot
 * be read). */
bool procinfo__maps_has(__u32 pid, const char *needle);

/* Reads a small /proc file into buf (NUL-terminated, trailing newline
 * removed): length or -errno. */
int procinfo__read_small(const char *path, char *buf, size_t size);

__u64 procinfo__now_mono_ns(void);

#endif
