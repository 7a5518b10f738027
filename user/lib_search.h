/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a command about to be launched would find a shared library by its
 * soname, as the dynamic loader looks: LD_LIBRARY_PATH, the executable's
 * RUNPATH (or RPATH, $ORIGIN expanded), /etc/ld.so.cache, then the
 * standard directories given. Shared by the families that probe a library
 * before the command loads it (user/cuda_libs.c, user/nccl_libs.c).
 */
#ifndef INFERSCOPE_LIB_SEARCH_H
#define INFERSCOPE_LIB_SEARCH_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <linux/types.h>

/* Called for each existing file, in the loader's order (a file may come
 * more than once: the caller deduplicates). */
typedef void (*lib_search_fn)(void *ctx, const char *path);

/* Every soname file a command would find: exe is argv[0] (searched in PATH
 * when it has no slash), or NULL for any process (no RUNPATH then);
 * std_dirs a ':'-separated list. A /etc/ld.so.cache this version cannot
 * read is said on note (may be NULL). */
void lib_search__candidates(const char *soname, const char *exe, const char *std_dirs, lib_search_fn found,
			    void *ctx, FILE *note);

/* The executable the kernel will run for argv[0]: as given when it has a
 * slash, else the first executable match in PATH; resolved (realpath)
 * when resolve, else as found. 0 or -errno. */
int lib_search__exe(const char *exe, bool resolve, char out[4096]);

/* --- library files resolved once each ------------------------------------------- */

#define LIB_CACHE_MAX 64

/* Reads the probe sites of the library file open on fd (path, for
 * messages): a malloc'ed library of the family, or NULL with err written
 * and errno set. */
typedef void *(*lib_resolve_fn)(int fd, const char *path, const struct stat *st, char *err, size_t errlen);

/* The library files of one family resolved so far, by device and inode
 * (a file reached by several paths, or mapped by several processes, is
 * read once). Set resolve, what and max (at most LIB_CACHE_MAX), the rest
 * zero. */
struct lib_cache {
	lib_resolve_fn resolve;
	const char *what;	/* "CUDA", "NCCL": for messages */
	size_t max;
	size_t n;
	struct {
		dev_t dev;
		ino_t ino;
		void *lib;
	} v[LIB_CACHE_MAX];
};

/* The library of the file at path: resolved now, or the one resolved
 * before for the same file. NULL with err written and errno set. */
void *lib_cache__resolve(struct lib_cache *c, const char *path, char *err, size_t errlen);
/* Frees every library resolved. */
void lib_cache__free(struct lib_cache *c);

/* Called with each library found, and the path it was reached by. */
typedef void (*lib_found_fn)(void *ctx, const void *lib, const char *path);

/* The files of pid's maps that `is` accepts (by path), each resolved and
 * handed to found; a file deleted since it was mapped, or one that cannot
 * be resolved, is said on warn (may be NULL). 0 or -errno. */
int lib_cache__mapped(struct lib_cache *c, __u32 pid, bool (*is)(const char *path), lib_found_fn found, void *ctx,
		      FILE *warn);
/* The file at path (a candidate a command would load) resolved and handed
 * to found; one that cannot be is said on note (may be NULL). */
void lib_cache__candidate(struct lib_cache *c, const char *path, lib_found_fn found, void *ctx, FILE *note);

/* What a search found, each library once: max entries of `size` bytes in
 * out, each with the library at lib_off (a pointer) and the path it was
 * reached by at path_off (path_len bytes). LIB_LIST makes one over an
 * array of structs with members `lib` and `path` (cuda_mapping,
 * nccl_mapping). */
struct lib_list {
	void *out;
	size_t size, lib_off, path_off, path_len, max, n;
};
#define LIB_LIST(arr, max_)                                                                                    \
	((struct lib_list){ (arr), sizeof(*(arr)), offsetof(__typeof__(*(arr)), lib),                            \
			    offsetof(__typeof__(*(arr)), path), sizeof((arr)->path), (max_), 0 })
/* A lib_found_fn over a struct lib_list: adds lib unless it is there. */
void lib_list__found(void *ctx, const void *lib, const char *path);

/* The files of pid's maps that `is` accepts, into l. Their number, or
 * -errno. */
int lib_cache__mapped_list(struct lib_cache *c, __u32 pid, bool (*is)(const char *path), struct lib_list *l,
			   FILE *warn);

/* Candidates a command would load, resolved into l (a lib_search_fn over
 * a struct lib_candidates). */
struct lib_candidates {
	struct lib_cache *cache;
	struct lib_list l;
	FILE *note;
};
void lib_candidates__found(void *ctx, const char *path);

/* Whether the file name of path starts with prefix ("libcuda.so"). */
bool lib_search__named(const char *path, const char *prefix);

#endif
