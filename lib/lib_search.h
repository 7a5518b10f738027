/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a command about to be launched would find a shared library by its
 * soname, as the dynamic loader looks: LD_LIBRARY_PATH, the executable's
 * RUNPATH (or RPATH, $ORIGIN expanded), /etc/ld.so.cache, then the
 * standard directories given. Used to probe a library before the command
 * loads it (user/probes/probed_lib.c).
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

/* Whether the file name of path starts with prefix ("libcuda.so"). */
bool lib_search__named(const char *path, const char *prefix);

/* Calls found for each file mapping of pid that `is` accepts (by the path
 * in its maps, file): deleted when the file was deleted since it was
 * mapped, root_path the path that reaches it from here (through
 * /proc/PID/root, so that files inside containers are found). found
 * returns 0 to go on; its other values stop the walk and are returned.
 * 0 when it went through every mapping, or -errno (-ESRCH: pid is gone). */
int lib_search__mapped(__u32 pid, bool (*is)(const char *file, const void *ctx),
		       int (*found)(void *ctx, const char *file, bool deleted, const char *root_path), void *ctx);

#endif
