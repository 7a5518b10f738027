/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The libraries a family probes by their exported functions, found in a
 * process's maps, given by path, or where a command about to be launched
 * would load them: the CUDA driver (libcuda, every function of
 * format/cuda_funcs.h) and NCCL (libnccl, format/nccl_funcs.h). No BPF
 * here: the families (user/probes/family_lib.h) attach what this module chooses.
 *
 * The promise: a library file is read once (one pass over its .dynsym and
 * .symtab, whatever the number of processes that map it; files are told
 * apart by device and inode), and every site is a file offset where the
 * function's arguments are still in their registers and its stack is as
 * at entry (user/probes/probe_site.h).
 */
#ifndef INFERSCOPE_PROBED_LIB_H
#define INFERSCOPE_PROBED_LIB_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "probe_site.h"

/* One function of a library's table. */
struct probed_func {
	const char *name;
	__u16 id;	/* its index in probed_lib.sites */
	__u8 family;
	bool ret;	/* the return is probed too */
	__u64 cookie;
};

/* A kind of library. */
struct probed_lib_kind {
	const char *what;		/* "CUDA": for messages */
	const char *name;		/* "libcuda": for messages, and the uprobes' kind (user/record/tracer.h) */
	const char *option;		/* "--cuda-lib": the option that names files */
	const char *file_prefix;	/* "libcuda.so": a mapped file is one when its name begins so */
	const char *soname;		/* "libcuda.so.1": the file a command loads */
	const char *std_dirs;		/* ':'-separated: where the loader looks last */
	const char *wheel;		/* a Python wheel's copy: site-packages/<wheel>/<soname> (NULL: none) */
	const char *sym_prefix;		/* every function's name begins so */
	const char *none_hint;		/* said after a file that exports none of the functions ("" or " (...)") */
	const struct probed_func *funcs;
	size_t nr_funcs;
	size_t nr_ids;			/* one past the highest id (at most PROBED_MAX_IDS) */
	size_t max_libs;		/* different files per process (at most PROBED_MAX_LIBS) */
	size_t max_resolved;		/* different files per recording (at most PROBED_MAX_RESOLVED) */
};

extern const struct probed_lib_kind probed_cuda;	/* libcuda.so.1 */
extern const struct probed_lib_kind probed_nccl;	/* libnccl.so.2 */

#define PROBED_MAX_LIBS 8
#define PROBED_MAX_IDS 128	/* function ids per kind */
#define PROBED_MAX_RESOLVED 64

struct probed_lib {
	const struct probed_lib_kind *kind;
	char path[PATH_MAX];	/* the file as first opened */
	dev_t dev;
	ino_t ino;
	unsigned int present;	/* functions it exports */
	unsigned int probes;	/* uprobes + uretprobes one process needs */
	__u64 resolve_ns;	/* time the ELF pass took */
	struct probe_site sites[];	/* kind->nr_ids, by function id; [0] unused */
};

/* A library as one process sees it: the resolved file and the path that
 * reaches it from here (through /proc/PID/root for a process's mapping, so
 * that libraries inside containers are found). */
struct probed_mapping {
	const struct probed_lib *lib;
	char path[PATH_MAX];
};

struct probed_libs;

/* The files of one kind resolved so far. */
struct probed_libs *probed_libs__new(const struct probed_lib_kind *kind);
void probed_libs__free(struct probed_libs *c);

/* Resolves the library at path, or returns the one already resolved for
 * the same file. The result belongs to c. NULL + errno, with err saying
 * what is wrong with the file (EINVAL: not an x86-64 ELF or it exports
 * none of the functions). */
const struct probed_lib *probed_libs__resolve(struct probed_libs *c, const char *path, char *err, size_t errlen);

/* Resolves each of the n files at paths (the kind's option) into out (at
 * most max, reached by the path given): how many, or -errno after saying
 * on warn which one cannot be used and why. */
int probed_libs__resolve_paths(struct probed_libs *c, const char *const *paths, size_t n,
			       struct probed_mapping *out, size_t max, FILE *warn);

/* Whether path names a file of the kind (its file name begins with
 * kind->file_prefix). */
bool probed_lib_kind__names(const struct probed_lib_kind *kind, const char *path);

/* The files of the kind pid maps now (deduplicated), resolved: how many
 * were stored in out (at most max), or -errno when its maps cannot be read
 * (-ESRCH: it is gone). A mapped file that cannot be resolved is reported
 * on warn and skipped. */
int probed_libs__mapped(struct probed_libs *c, __u32 pid, struct probed_mapping *out, size_t max, FILE *warn);

/* The files a command about to be launched would load: where the dynamic
 * loader looks (lib/lib_search.h), and, for a kind a Python wheel ships
 * and a command in a Python environment's bin directory (python,
 * torchrun), the wheel's copy (../lib/python3.*\/site-packages/<wheel>).
 * exe is argv[0] (searched in PATH when it has no slash), or NULL for any
 * process (no RUNPATH then). How many were stored in out; files that exist
 * but cannot be resolved are reported on note (may be NULL). */
int probed_libs__candidates(struct probed_libs *c, const char *exe, struct probed_mapping *out, size_t max,
			    FILE *note);

/* One header line and one line per function of the kind's table. */
void probed_lib__describe(const struct probed_lib *lib, const char *path, FILE *out);

#endif
