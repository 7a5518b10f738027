/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding the NCCL library (libnccl.so*) of a process and choosing where to
 * probe each function of format/nccl_funcs.h in it. No BPF here: the loader
 * (user/family_nccl.c) attaches what this module chooses.
 *
 * The promise, as for libcuda (user/cuda_libs.h): a file is read once,
 * whatever the number of processes that map it (told apart by device and
 * inode), and every site is a file offset where the function's arguments
 * are still in their registers and its stack is as at entry.
 */
#ifndef INFERSCOPE_NCCL_LIBS_H
#define INFERSCOPE_NCCL_LIBS_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "nccl_funcs.h"
#include "cuda_libs.h"

struct nccl_lib {
	char path[PATH_MAX];	/* the file as first opened */
	dev_t dev;
	ino_t ino;
	struct cuda_site sites[ISR_NCCL_FN_MAX];	/* by ISR_NCCL_FN_* id; [0] unused */
	unsigned int present;	/* functions it exports */
	unsigned int probes;	/* uprobes + uretprobes one process needs */
	__u64 resolve_ns;	/* time the ELF pass took */
};

/* A library as one process sees it (through /proc/PID/root for a mapping). */
struct nccl_mapping {
	const struct nccl_lib *lib;
	char path[PATH_MAX];
};

#define NCCL_MAX_LIBS 4	/* different libnccl files per process */

struct nccl_libs;

struct nccl_libs *nccl_libs__new(void);
void nccl_libs__free(struct nccl_libs *c);

/* Resolves the library at path, or returns the one already resolved for
 * the same file (it belongs to c). NULL + errno, with err saying what is
 * wrong with the file (EINVAL: not an x86-64 ELF, or it exports none of
 * the functions). */
const struct nccl_lib *nccl_libs__resolve(struct nccl_libs *c, const char *path, char *err, size_t errlen);

/* Resolves each of the n files at paths (--nccl-lib) into out (at most
 * max): how many, or -errno after saying on warn which one and why. */
int nccl_libs__resolve_paths(struct nccl_libs *c, const char *const *paths, size_t n, struct nccl_mapping *out,
			     size_t max, FILE *warn);

/* The libnccl files pid maps now, resolved: how many (at most max), or
 * -errno when its maps cannot be read (-ESRCH: gone). */
int nccl_libs__mapped(struct nccl_libs *c, __u32 pid, struct nccl_mapping *out, size_t max, FILE *warn);

/* The libnccl.so.2 files a command about to be launched would load: where
 * the dynamic loader looks (user/lib_search.h), and, for a command in a
 * Python environment's bin directory (python, torchrun), the copy a
 * PyTorch wheel ships (../lib/python3.*\/site-packages/nvidia/nccl/lib).
 * exe is argv[0], or NULL for any process. How many were stored in out. */
int nccl_libs__candidates(struct nccl_libs *c, const char *exe, struct nccl_mapping *out, size_t max, FILE *note);

/* One header line and one line per function of format/nccl_funcs.h. */
void nccl_lib__describe(const struct nccl_lib *lib, const char *path, FILE *out);

#endif
