// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "clock.h"
#include "elf_file.h"
#include "proc.h"
#include "cuda_libs.h"
#include "cuda_cookie.h"
#include "lib_search.h"

#define MAX_RESOLVED 64	/* distinct library files per recording */

struct cuda_libs {
	struct lib_cache cache;
};

/* The table of format/cuda_funcs.h, in id order and sorted by name for the
 * one-pass symbol lookup. */
struct func_row {
	const char *name;
	__u16 id;
	__u8 family, aux;
	__u16 flags;
};

#define FUNC_ROW(id, sym, fam, aux, flags) { #sym, id, fam, aux, flags },
static const struct func_row func_rows[] = { ISR_CUDA_FUNCS(FUNC_ROW) };
#undef FUNC_ROW
#define NR_FUNCS (sizeof(func_rows) / sizeof(func_rows[0]))

static const struct func_row *rows_by_name[NR_FUNCS];

static int row_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct func_row *const *)a)->name, (*(const struct func_row *const *)b)->name);
}

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct func_row *const *)elem)->name);
}

/* The "+ret" families of format/cuda_funcs.h. */
static bool family_has_return(__u8 fam)
{
	switch (fam) {
	case ISR_CUDA_FAM_SYNC:
	case ISR_CUDA_FAM_ALLOC:
	case ISR_CUDA_FAM_FREE:
	case ISR_CUDA_FAM_VMM_CREATE:
	case ISR_CUDA_FAM_VMM_RELEASE:
	case ISR_CUDA_FAM_VMM_MAP:
	case ISR_CUDA_FAM_VMM_UNMAP:
	case ISR_CUDA_FAM_NAME:
	case ISR_CUDA_FAM_ALIAS:
	case ISR_CUDA_FAM_COPY_SYNC:
	case ISR_CUDA_FAM_REGISTER:
	case ISR_CUDA_FAM_UNREGISTER:
		return true;
	default:
		return false;
	}
}

static void *lib_resolve(int fd, const char *path, const struct stat *st, char *err, size_t errlen);

struct cuda_libs *cuda_libs__new(void)
{
	struct cuda_libs *c;
	size_t i;

	if (!rows_by_name[0]) {
		for (i = 0; i < NR_FUNCS; i++)
			rows_by_name[i] = &func_rows[i];
		qsort(rows_by_name, NR_FUNCS, sizeof(rows_by_name[0]), row_cmp);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->cache = (struct lib_cache){ .resolve = lib_resolve, .what = "CUDA", .max = MAX_RESOLVED };
	return c;
}

void cuda_libs__free(struct cuda_libs *c)
{
	if (!c)
		return;
	lib_cache__free(&c->cache);
	free(c);
}

static const char *const reg_names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					   "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15" };

/* A push of a general register: 50+r, or 41 50+r for r8..r15. Its length,
 * 0 if code is something else. */
static int push_len(const unsigned char *code, size_t len, __u8 *reg)
{
	if (len >= 1 && code[0] >= 0x50 && code[0] <= 0x57) {
		*reg = code[0] - 0x50;
		return 1;
	}
	if (len >= 2 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57) {
		*reg = 8 + code[1] - 0x50;
		return 2;
	}
	return 0;
}

/* Where to probe a function whose first bytes are code, at file offset off.
 * The kernel emulates a push (cheap) and single-steps anything else
 * (about 10x); endbr64 changes neither registers nor stack, so the
 * instruction after it sees the same arguments. */
void cuda_site__choose(struct cuda_site *s, const unsigned char *code, size_t len, __u64 off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	s->offset = off;
	if (push_len(code, len, &s->push_reg)) {
		s->kind = CUDA_SITE_PUSH;
	} else if (len >= 6 && memcmp(code, endbr64, 4) == 0 && push_len(code + 4, len - 4, &s->push_reg)) {
		s->kind = CUDA_SITE_AFTER_ENDBR;
		s->offset = off + 4;
	} else {
		s->kind = CUDA_SITE_STEPPED;
	}
}

/* One symbol of the pass over the file: the address of a function of the
 * table (vaddr: by id). */
static int symbol_note(void *ctx, const struct elf_symbol *sym)
{
	const struct func_row *const *row;
	__u64 *vaddr = ctx;

	if (!sym->func || sym->name[0] != 'c' || sym->name[1] != 'u')
		return 0;
	row = bsearch(sym->name, rows_by_name, NR_FUNCS, sizeof(rows_by_name[0]), name_cmp);
	if (row && !vaddr[(*row)->id])
		vaddr[(*row)->id] = sym->value;
	return 0;
}

static void *lib_resolve(int fd, const char *path, const struct stat *st, char *err, size_t errlen)
{
	__u64 vaddr[ISR_CUDA_FN_MAX] = { 0 }, start = clock__mono_ns();
	struct cuda_lib *lib = NULL;
	struct elf_file *elf;
	int e = EINVAL;
	size_t i;

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
	for (i = 0; i < NR_FUNCS; i++) {
		const struct func_row *r = &func_rows[i];
		struct cuda_site *s = &lib->sites[r->id];
		unsigned char code[16];
		__u64 off;
		ssize_t n;

		s->name = r->name;
		s->family = r->family;
		s->cookie = ISR_CUDA_COOKIE(r->id, r->family, r->aux, r->flags);
		s->ret = family_has_return(r->family);
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
		snprintf(err, errlen, "%s exports none of the CUDA driver functions inferscope-bpf probes "
			 "(is it the driver's libcuda.so.1 and not a stub?)", path);
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

const struct cuda_lib *cuda_libs__resolve(struct cuda_libs *c, const char *path, char *err, size_t errlen)
{
	return lib_cache__resolve(&c->cache, path, err, errlen);
}

int cuda_libs__resolve_paths(struct cuda_libs *c, const char *const *paths, size_t n, struct cuda_mapping *out,
			     size_t max, FILE *warn)
{
	char err[PATH_MAX + 256];
	size_t i;

	for (i = 0; i < n && i < max; i++) {
		out[i].lib = cuda_libs__resolve(c, paths[i], err, sizeof(err));
		if (!out[i].lib) {
			int e = -errno;

			fprintf(warn, "inferscope-bpf: --cuda-lib: %s\n", err);
			return e;
		}
		snprintf(out[i].path, sizeof(out[i].path), "%s", paths[i]);
	}
	return (int)i;
}

bool cuda_libs__is_libcuda(const char *path)
{
	return lib_search__named(path, "libcuda.so");
}

int cuda_libs__mapped(struct cuda_libs *c, __u32 pid, struct cuda_mapping *out, size_t max, FILE *warn)
{
	struct lib_list l = LIB_LIST(out, max);

	return lib_cache__mapped_list(&c->cache, pid, cuda_libs__is_libcuda, &l, warn);
}

int cuda_libs__candidates(struct cuda_libs *c, const char *exe, struct cuda_mapping *out, size_t max,
			  FILE *note)
{
	static const char *const std_dirs =
		"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/usr/lib:"
		"/usr/local/nvidia/lib64:/usr/local/nvidia/lib:/usr/local/cuda/lib64:/usr/lib/wsl/lib";
	struct lib_candidates k = { &c->cache, LIB_LIST(out, max), note };

	lib_search__candidates("libcuda.so.1", exe, std_dirs, lib_candidates__found, &k, note);
	return (int)k.l.n;
}

const char *cuda_site__describe(const struct cuda_site *s, char *buf, size_t len)
{
	switch (s->kind) {
	case CUDA_SITE_PUSH:
		snprintf(buf, len, "push %%%s, emulated", reg_names[s->push_reg & 15]);
		break;
	case CUDA_SITE_AFTER_ENDBR:
		snprintf(buf, len, "after endbr64 (+4), push %%%s emulated", reg_names[s->push_reg & 15]);
		break;
	case CUDA_SITE_STEPPED:
		snprintf(buf, len, "single-stepped (slow)");
		break;
	default:
		snprintf(buf, len, "absent");
		break;
	}
	return buf;
}

void cuda_lib__describe(const struct cuda_lib *lib, const char *path, FILE *out)
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
