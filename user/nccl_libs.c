// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "clock.h"
#include "elf_file.h"
#include "proc.h"
#include "lib_search.h"
#include "nccl_libs.h"

#define MAX_RESOLVED 32	/* distinct libnccl files per recording */

struct nccl_libs {
	struct lib_cache cache;
};

struct func_row {
	const char *name;
	__u16 id;
	__u8 kind, layout;
};

#define FUNC_ROW(id, sym, kind, layout) { #sym, id, kind, layout },
static const struct func_row func_rows[] = { ISR_NCCL_FUNCS(FUNC_ROW) };
#undef FUNC_ROW
#define NR_FUNCS (sizeof(func_rows) / sizeof(func_rows[0]))

static void *lib_resolve(int fd, const char *path, const struct stat *st, char *err, size_t errlen);

struct nccl_libs *nccl_libs__new(void)
{
	struct nccl_libs *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->cache = (struct lib_cache){ .resolve = lib_resolve, .what = "NCCL", .max = MAX_RESOLVED };
	return c;
}

void nccl_libs__free(struct nccl_libs *c)
{
	if (!c)
		return;
	lib_cache__free(&c->cache);
	free(c);
}

/* One symbol of the pass over the file: the address of a function of the
 * table (vaddr: by id). A dozen names: a linear search. */
static int symbol_note(void *ctx, const struct elf_symbol *sym)
{
	__u64 *vaddr = ctx;

	if (!sym->func || strncmp(sym->name, "nccl", 4))
		return 0;
	for (size_t i = 0; i < NR_FUNCS; i++)
		if (!vaddr[func_rows[i].id] && strcmp(sym->name, func_rows[i].name) == 0)
			vaddr[func_rows[i].id] = sym->value;
	return 0;
}

static void *lib_resolve(int fd, const char *path, const struct stat *st, char *err, size_t errlen)
{
	__u64 vaddr[ISR_NCCL_FN_MAX] = { 0 }, start = clock__mono_ns();
	struct nccl_lib *lib = NULL;
	struct elf_file *elf;
	int e = EINVAL;

	elf = elf_file__open(fd, path, err, errlen);
	if (elf && !elf_file__is_x86_64(elf))
		snprintf(err, errlen, "%s is not an x86-64 ELF library", path);
	if (!elf || !elf_file__is_x86_64(elf))
		goto out;
	elf_file__for_each_symbol(elf, ELF_SYMS_DYNAMIC | ELF_SYMS_STATIC, symbol_note, vaddr);
	lib = calloc(1, sizeof(*lib));
	if (!lib) {
		e = ENOMEM;
		snprintf(err, errlen, "out of memory resolving %s", path);
		goto out;
	}
	snprintf(lib->path, sizeof(lib->path), "%s", path);
	lib->dev = st->st_dev;
	lib->ino = st->st_ino;
	for (size_t i = 0; i < NR_FUNCS; i++) {
		const struct func_row *r = &func_rows[i];
		struct cuda_site *s = &lib->sites[r->id];
		unsigned char code[16];
		__u64 off;
		ssize_t n;

		s->name = r->name;
		s->family = r->kind;
		s->cookie = ISR_NCCL_COOKIE(r->id, r->kind, r->layout);
		s->ret = r->kind == ISR_NCCL_KIND_INIT;
		s->kind = CUDA_SITE_ABSENT;
		if (!vaddr[r->id] || elf_file__vaddr_to_offset(elf, vaddr[r->id], &off))
			continue;
		n = pread(fd, code, sizeof(code), (off_t)off);
		if (n <= 0)
			continue;
		cuda_site__choose(s, code, (size_t)n, off);
		lib->present++;
		lib->probes += s->ret ? 2 : 1;
	}
	if (!lib->present) {
		snprintf(err, errlen, "%s exports none of the NCCL functions inferscope-bpf probes", path);
		free(lib);
		lib = NULL;
		goto out;
	}
	lib->resolve_ns = clock__mono_ns() - start;
	e = 0;
out:
	elf_file__close(elf);
	errno = e;
	return lib;
}

const struct nccl_lib *nccl_libs__resolve(struct nccl_libs *c, const char *path, char *err, size_t errlen)
{
	return lib_cache__resolve(&c->cache, path, err, errlen);
}

int nccl_libs__resolve_paths(struct nccl_libs *c, const char *const *paths, size_t n, struct nccl_mapping *out,
			     size_t max, FILE *warn)
{
	char err[PATH_MAX + 256];
	size_t i;

	for (i = 0; i < n && i < max; i++) {
		out[i].lib = nccl_libs__resolve(c, paths[i], err, sizeof(err));
		if (!out[i].lib) {
			int e = -errno;

			fprintf(warn, "inferscope-bpf: --nccl-lib: %s\n", err);
			return e;
		}
		snprintf(out[i].path, sizeof(out[i].path), "%s", paths[i]);
	}
	return (int)i;
}

static bool is_libnccl(const char *path)
{
	return lib_search__named(path, "libnccl.so");
}

int nccl_libs__mapped(struct nccl_libs *c, __u32 pid, struct nccl_mapping *out, size_t max, FILE *warn)
{
	struct lib_list l = LIB_LIST(out, max);

	return lib_cache__mapped_list(&c->cache, pid, is_libnccl, &l, warn);
}

/* The copy of a PyTorch wheel (nvidia-nccl-cu*) in the Python environment
 * whose bin directory holds exe, as found in PATH (not resolved: a
 * virtual environment's python is a link to the system's). */
static void candidate_wheel(struct lib_candidates *k, const char *exe)
{
	char found[PATH_MAX], pattern[PATH_MAX + 96], *slash;
	glob_t g;

	if (lib_search__exe(exe, false, found))
		return;
	slash = strrchr(found, '/');
	if (!slash)
		return;
	*slash = 0;
	snprintf(pattern, sizeof(pattern), "%s/../lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2", found);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		lib_candidates__found(k, g.gl_pathv[i]);
	globfree(&g);
}

int nccl_libs__candidates(struct nccl_libs *c, const char *exe, struct nccl_mapping *out, size_t max, FILE *note)
{
	static const char *const std_dirs = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:"
					    "/usr/lib:/usr/local/cuda/lib64:/usr/local/nccl/lib";
	struct lib_candidates k = { &c->cache, LIB_LIST(out, max), note };

	lib_search__candidates("libnccl.so.2", exe, std_dirs, lib_candidates__found, &k, note);
	if (exe)
		candidate_wheel(&k, exe);
	return (int)k.l.n;
}

void nccl_lib__describe(const struct nccl_lib *lib, const char *path, FILE *out)
{
	unsigned int stepped = 0;
	char kind[64];
	size_t i;

	for (i = 0; i < NR_FUNCS; i++)
		stepped += lib->sites[func_rows[i].id].kind == CUDA_SITE_STEPPED;
	fprintf(out, "%s (device %u:%u, inode %llu): %u of %zu functions, %u probes, %u single-stepped; "
		"symbols resolved in %.2f ms\n", path, major(lib->dev), minor(lib->dev),
		(unsigned long long)lib->ino, lib->present, NR_FUNCS, lib->probes, stepped, lib->resolve_ns / 1e6);
	for (i = 0; i < NR_FUNCS; i++) {
		const struct cuda_site *s = &lib->sites[func_rows[i].id];

		if (s->kind == CUDA_SITE_ABSENT)
			fprintf(out, "  %-32s %-12s absent\n", s->name, "-");
		else
			fprintf(out, "  %-32s %#-12llx %s%s\n", s->name, (unsigned long long)s->offset,
				cuda_site__describe(s, kind, sizeof(kind)), s->ret ? " + return" : "");
	}
}
