/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What /proc says about a process and the host, packed as record-file
 * property lists (format/isr_format.h). The /proc readers themselves are
 * lib/proc.h.
 */
#ifndef INFERSCOPE_PROCINFO_H
#define INFERSCOPE_PROCINFO_H

#include <linux/types.h>
#include "rec_writer.h"

/* Snapshot of one process: pid, ppid, comm, cmdline, exe, maps, threads.
 * NULL + errno (ESRCH when it is gone). */
struct rec_props *procinfo__snapshot(__u32 pid, __u32 origin, __u64 now_mono_ns);

/* Host properties; argv is the recorder's own command line. */
struct rec_props *procinfo__host(int argc, char **argv, __u64 start_mono_ns, __u64 duration_limit_ns);

#endif
