/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding the CPython interpreter of a process (libpython3.X.so, or the
 * executable when libpython is linked into it) and choosing where to probe
 * its GIL functions. No BPF here: user/probes/family_python.c attaches what this
 * module chooses.
 *
 * The promise, as for libcuda (user/probes/probed_lib.h): a file is read once,
 * whatever the number of processes that map it (told apart by device and
 * inode, including files that turned out not to be a supported Python), and
 * every site is a file offset where the function's stack is as at entry.
 * Supported: CPython 3.10 to 3.13, the version told by the file's name
 * (libpython3.X.so*, python3.X).
 */
#ifndef INFERSCOPE_PY_LIBS_H
#define INFERSCOPE_PY_LIBS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "probe_site.h"

#define PY_MIN_MINOR 10
#define PY_MAX_MINOR 13

enum py_site_id {
	PY_SITE_RESTORE,	/* PyEval_RestoreThread: entry + return */
	PY_SITE_SAVE,		/* PyEval_SaveThread: entry */
	PY_SITES,
};

struct py_lib {
	char path[PATH_MAX];	/* the file as first opened */
	dev_t dev;
	ino_t ino;
	int minor;		/* 3.<minor>, from the file name; -1 if it does not tell */
	struct probe_site sites[PY_SITES]; /* name, offset, kind, push_reg, ret */
	unsigned int probes;	/* uprobes + uretprobes one process needs */
	__u64 runtime_vaddr;	/* _PyRuntime (0: not found) */
	__u64 code_type_vaddr;	/* PyCode_Type (0: not found) */
	__u64 load_vaddr;	/* the segment at file offset 0: what a mapping's start corresponds to */
	__u64 resolve_ns;	/* time the ELF pass took */
};

/* An interpreter as one process sees it (path through /proc/PID/root). */
struct py_mapping {
	const struct py_lib *lib;
	char path[PATH_MAX];
	char file[PATH_MAX];	/* as named in /proc/PID/maps */
	__u64 base;		/* start of its mapping at file offset 0 (0: not seen) */
};

#define PY_MAX_LIBS 4	/* interpreter files per process */

struct py_libs;

struct py_libs *py_libs__new(void);
void py_libs__free(struct py_libs *c);

/* The interpreter files pid maps now that export the GIL functions of a
 * supported version, resolved: how many were stored in out (at most max),
 * or -errno when its maps cannot be read (-ESRCH: it is gone). A
 * libpython or executable of an unsupported version, or one that cannot
 * be read, is reported on warn once per file and skipped. */
int py_libs__mapped(struct py_libs *c, __u32 pid, struct py_mapping *out, size_t max, FILE *warn);

/* One header line and one line per probed function. */
void py_lib__describe(const struct py_lib *lib, const char *path, FILE *out);

#endif
