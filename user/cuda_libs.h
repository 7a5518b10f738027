/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding the CUDA driver library (libcuda) of a process and choosing where
 * to probe each function of format/cuda_funcs.h in it. No BPF here: the loader
 * (user/family_cuda.c) attaches what this module chooses.
 *
 * The promise: a library file is read once (one pass over its .dynsym and
 * .symtab, whatever the number of processes that map it; files are told
 * apart by device and inode), and every site is a file offset where the
 * function's arguments are still in their registers and its stack is as at
 * entry: the symbol itself, or the instruction after a leading endbr64.
 */
#ifndef INFERSCOPE_CUDA_LIBS_H
#define INFERSCOPE_CUDA_LIBS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "cuda_funcs.h"

enum cuda_site_kind {
	CUDA_SITE_ABSENT,	/* the library does not export the function */
	CUDA_SITE_PUSH,		/* first instruction is a push: the kernel emulates it */
	CUDA_SITE_AFTER_ENDBR,	/* endbr64 then a push: probed at +4, the push emulated */
	CUDA_SITE_STEPPED,	/* anything else: single-stepped, about 10x the cost */
};

struct cuda_site {
	const char *name;	/* symbol, from format/cuda_funcs.h */
	__u64 cookie;		/* ISR_CUDA_COOKIE() of its line */
	__u64 offset;		/* file offset of the probe site */
	__u8 family;		/* ISR_CUDA_FAM_* */
	__u8 kind;		/* enum cuda_site_kind */
	__u8 push_reg;		/* register pushed (0-15, x86 numbering) for PUSH / AFTER_ENDBR */
	bool ret;		/* the return is probed too */
};

struct cuda_lib {
	char path[PATH_MAX];	/* the file as first opened */
	dev_t dev;
	ino_t ino;
	struct cuda_site sites[ISR_CUDA_FN_MAX];	/* by ISR_CUDA_FN_* id; [0] unused */
	unsigned int present;	/* functions it exports */
	unsigned int probes;	/* uprobes + uretprobes one process needs */
	__u64 resolve_ns;	/* time the ELF pass took */
};

/* A library as one process sees it: the resolved file and the path that
 * reaches it from here (through /proc/PID/root for a process's mapping, so
 * that libraries inside containers are found). */
struct cuda_mapping {
	const struct cuda_lib *lib;
	char path[PATH_MAX];
};

#define CUDA_MAX_LIBS 8	/* different libcuda files per process */

struct cuda_libs;

struct cuda_libs *cuda_libs__new(void);
void cuda_libs__free(struct cuda_libs *c);

/* Resolves the library at path, or returns the one already resolved for
 * the same file. The result belongs to c. NULL + errno, with err saying
 * what is wrong with the file (EINVAL: not an x86-64 ELF or it exports
 * none of the functions). */
const struct cuda_lib *cuda_libs__resolve(struct cuda_libs *c, const char *path, char *err, size_t errlen);

/* Resolves each of the n files at paths (--cuda-lib) into out (at most
 * max, reached by the path given): how many, or -errno after saying on
 * warn which one cannot be used and why. */
int cuda_libs__resolve_paths(struct cuda_libs *c, const char *const *paths, size_t n, struct cuda_mapping *out,
			     size_t max, FILE *warn);

/* Whether path names a libcuda (its file name begins with libcuda.so). */
bool cuda_libs__is_libcuda(const char *path);
/* The libcuda files pid maps now (deduplicated), resolved: how many were
 * stored in out (at most max), or -errno when its maps cannot be read
 * (-ESRCH: it is gone). A mapped file that cannot be resolved is reported
 * on warn and skipped. */
int cuda_libs__mapped(struct cuda_libs *c, __u32 pid, struct cuda_mapping *out, size_t max, FILE *warn);

/* The libcuda.so.1 files a command about to be launched would load: from
 * LD_LIBRARY_PATH, the executable's RUNPATH/RPATH, /etc/ld.so.cache and the
 * standard library directories, resolved and deduplicated. exe is argv[0]
 * (searched in PATH when it has no slash), or NULL for any process (no
 * RUNPATH then). How many were stored in out; files
 * that exist but cannot be resolved are reported on note (may be NULL). */
int cuda_libs__candidates(struct cuda_libs *c, const char *exe, struct cuda_mapping *out, size_t max,
			  FILE *note);

/* Where to probe a function whose first bytes are code, at file offset
 * off: sets s->kind, s->offset and s->push_reg. The kernel emulates a push
 * (cheap) and single-steps anything else (about 10x); endbr64 changes
 * neither registers nor stack, so the instruction after it sees the same
 * arguments. Shared with user/py_libs.c. */
void cuda_site__choose(struct cuda_site *s, const unsigned char *code, size_t len, __u64 off);

/* "push %rbp, emulated", "after endbr64 (+4), push %rbx emulated",
 * "single-stepped (slow)", "absent" into buf. */
const char *cuda_site__describe(const struct cuda_site *s, char *buf, size_t len);

/* One header line and one line per function of format/cuda_funcs.h. */
void cuda_lib__describe(const struct cuda_lib *lib, const char *path, FILE *out);

#endif
