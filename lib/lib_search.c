// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "elf_file.h"
#include "proc.h"
#include "lib_search.h"

_Static_assert(PATH_MAX == 4096, "lib_search__exe's buffer");

struct search {
	const char *soname;
	lib_search_fn found;
	void *ctx;
};

/* Tries dir/soname. */
static void try_dir(const struct search *s, const char *dir, size_t dirlen)
{
	char path[PATH_MAX];

	if (dirlen == 0) {
		dir = ".";
		dirlen = 1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)dirlen, dir, s->soname) >= sizeof(path) ||
	    access(path, F_OK))
		return;
	s->found(s->ctx, path);
}

/* Each directory of a ':'-separated list; $ORIGIN replaced by origin. */
static void try_dirs(const struct search *s, const char *list, const char *origin)
{
	const char *p = list;

	while (p) {
		const char *end = strpbrk(p, ":;");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char dir[PATH_MAX];

		if (origin && len >= 7 && strncmp(p, "$ORIGIN", 7) == 0) {
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(len - 7), p + 7);
			try_dir(s, dir, strlen(dir));
		} else if (origin && len >= 9 && strncmp(p, "${ORIGIN}", 9) == 0) {
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(len - 9), p + 9);
			try_dir(s, dir, strlen(dir));
		} else {
			try_dir(s, p, len);
		}
		p = end ? end + 1 : NULL;
	}
}

int lib_search__exe(const char *exe, bool resolve, char out[PATH_MAX])
{
	const char *path = getenv("PATH"), *p;

	if (strchr(exe, '/')) {
		if (resolve)
			return realpath(exe, out) ? 0 : -errno;
		snprintf(out, PATH_MAX, "%s", exe);
		return access(exe, X_OK) ? -errno : 0;
	}
	for (p = path; p && *p;) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		char cand[PATH_MAX];

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)dlen, dlen ? p : ".", exe);
		if (access(cand, X_OK) == 0) {
			if (!resolve) {
				snprintf(out, PATH_MAX, "%s", cand);
				return 0;
			}
			if (realpath(cand, out))
				return 0;
		}
		p = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

/* DT_RUNPATH (or, without it, DT_RPATH) of the executable. */
static void try_runpath(const struct search *s, const char *exe)
{
	char real[PATH_MAX], origin[PATH_MAX], *slash;
	const char *runpath;
	struct elf_file *elf;
	int fd;

	if (lib_search__exe(exe, true, real))
		return;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf = elf_file__open(fd, real, NULL, 0);
	runpath = elf ? elf_file__runpath(elf) : NULL;
	snprintf(origin, sizeof(origin), "%s", real);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	if (runpath)
		try_dirs(s, runpath, origin);
	elf_file__close(elf);
	close(fd);
}

/* glibc's /etc/ld.so.cache ("glibc-ld.so.cache1.1" format): the paths of
 * x86-64 entries named soname. */
#define LDCACHE_MAGIC "glibc-ld.so.cache1.1"
#define LDCACHE_HDR 48
#define LDCACHE_ENTRY 24
#define LDCACHE_X8664 0x0300

static void try_ldcache(const struct search *s, FILE *note)
{
	unsigned char *buf = NULL;
	struct stat st;
	__u32 nlibs, i;
	int fd;

	fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || st.st_size < LDCACHE_HDR || st.st_size > (64 << 20))
		goto out;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		goto out;
	buf[st.st_size] = 0;
	if (memcmp(buf, LDCACHE_MAGIC, strlen(LDCACHE_MAGIC))) {
		if (note)
			fprintf(note, "inferscope-bpf: /etc/ld.so.cache is not in the format this version reads; "
				"a %s found only through it is not probed before it is loaded (use the family's "
				"--*-lib option)\n", s->soname);
		goto out;
	}
	memcpy(&nlibs, buf + 20, sizeof(nlibs));
	for (i = 0; i < nlibs && LDCACHE_HDR + (size_t)(i + 1) * LDCACHE_ENTRY <= (size_t)st.st_size; i++) {
		const unsigned char *ent = buf + LDCACHE_HDR + (size_t)i * LDCACHE_ENTRY;
		__s32 flags;
		__u32 key, value;

		memcpy(&flags, ent, 4);
		memcpy(&key, ent + 4, 4);
		memcpy(&value, ent + 8, 4);
		if ((flags & 0xff00) != LDCACHE_X8664 || key >= st.st_size || value >= st.st_size ||
		    strcmp((const char *)buf + key, s->soname))
			continue;
		{
			const char *p = (const char *)buf + value, *slash = strrchr(p, '/');

			if (slash)
				try_dir(s, p, (size_t)(slash - p));
		}
	}
out:
	free(buf);
	close(fd);
}

void lib_search__candidates(const char *soname, const char *exe, const char *std_dirs, lib_search_fn found,
			    void *ctx, FILE *note)
{
	const struct search s = { soname, found, ctx };
	const char *ld_path = getenv("LD_LIBRARY_PATH");

	if (ld_path && *ld_path)
		try_dirs(&s, ld_path, NULL);
	if (exe)
		try_runpath(&s, exe);
	try_ldcache(&s, note);
	try_dirs(&s, std_dirs, NULL);
}

bool lib_search__named(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	return strncmp(base ? base + 1 : path, prefix, strlen(prefix)) == 0;
}

int lib_search__mapped(__u32 pid, bool (*is)(const char *file, const void *ctx),
		       int (*found)(void *ctx, const char *file, bool deleted, const char *root_path), void *ctx)
{
	char path[PATH_MAX + 32];
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	int r;

	if (!maps)
		return -errno;
	while ((r = proc_maps__next(maps, &m)) > 0) {
		if (!proc_map__is_file(&m) || !is(m.path, ctx))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m.path);
		r = found(ctx, m.path, strstr(m.path, " (deleted)") != NULL, path);
		if (r)
			break;
	}
	proc_maps__close(maps);
	return r;
}
