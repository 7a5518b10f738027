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

/* --- library files resolved once each ------------------------------------------- */

void *lib_cache__resolve(struct lib_cache *c, const char *path, char *err, size_t errlen)
{
	struct stat st;
	void *lib;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].dev == st.st_dev && c->v[i].ino == st.st_ino) {
			close(fd);
			return c->v[i].lib;
		}
	}
	if (c->n == c->max || c->n == LIB_CACHE_MAX) {
		close(fd);
		snprintf(err, errlen, "cannot resolve %s: already %zu different %s libraries", path, c->n, c->what);
		errno = ENOSPC;
		return NULL;
	}
	lib = c->resolve(fd, path, &st, err, errlen);
	e = errno;
	close(fd);
	if (!lib) {
		errno = e;
		return NULL;
	}
	c->v[c->n].dev = st.st_dev;
	c->v[c->n].ino = st.st_ino;
	c->v[c->n++].lib = lib;
	return lib;
}

void lib_cache__free(struct lib_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].lib);
	c->n = 0;
}

int lib_cache__mapped(struct lib_cache *c, __u32 pid, bool (*is)(const char *path), lib_found_fn found, void *ctx,
		      FILE *warn)
{
	char path[PATH_MAX + 32], err[PATH_MAX + 128];
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	int r;

	if (!maps)
		return -errno;
	while ((r = proc_maps__next(maps, &m)) > 0) {
		const void *lib;

		if (!proc_map__is_file(&m) || !is(m.path))
			continue;
		if (strstr(m.path, " (deleted)")) {
			if (warn)
				fprintf(warn, "inferscope-bpf: pid %u maps %s, a file deleted since: its %s calls "
					"cannot be probed\n", pid, m.path, c->what);
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m.path);
		lib = lib_cache__resolve(c, path, err, sizeof(err));
		if (!lib) {
			if (warn && errno != ENOENT && errno != ESRCH)
				fprintf(warn, "inferscope-bpf: pid %u: %s; its %s calls through it are not traced\n",
					pid, err, c->what);
			continue;
		}
		found(ctx, lib, path);
	}
	proc_maps__close(maps);
	return r < 0 ? r : 0;
}

void lib_cache__candidate(struct lib_cache *c, const char *path, lib_found_fn found, void *ctx, FILE *note)
{
	char err[PATH_MAX + 128];
	const void *lib = lib_cache__resolve(c, path, err, sizeof(err));

	if (!lib) {
		if (note)
			fprintf(note, "inferscope-bpf: skipping candidate %s library: %s\n", c->what, err);
		return;
	}
	found(ctx, lib, path);
}

void lib_list__found(void *ctx, const void *lib, const char *path)
{
	struct lib_list *l = ctx;
	char *e;

	for (size_t i = 0; i < l->n; i++) {
		const void *have;

		memcpy(&have, (char *)l->out + i * l->size + l->lib_off, sizeof(have));
		if (have == lib)
			return;
	}
	if (l->n == l->max)
		return;
	e = (char *)l->out + l->n * l->size;
	memcpy(e + l->lib_off, &lib, sizeof(lib));
	snprintf(e + l->path_off, l->path_len, "%s", path);
	l->n++;
}

int lib_cache__mapped_list(struct lib_cache *c, __u32 pid, bool (*is)(const char *path), struct lib_list *l,
			   FILE *warn)
{
	int r = lib_cache__mapped(c, pid, is, lib_list__found, l, warn);

	return r < 0 ? r : (int)l->n;
}

void lib_candidates__found(void *ctx, const char *path)
{
	struct lib_candidates *k = ctx;

	lib_cache__candidate(k->cache, path, lib_list__found, &k->l, k->note);
}

bool lib_search__named(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	return strncmp(base ? base + 1 : path, prefix, strlen(prefix)) == 0;
}
