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
#include "cuda_cookie.h"
#include "cuda_funcs.h"
#include "nccl_funcs.h"
#include "lib_search.h"
#include "probed_lib.h"

/* The families of format/cuda_funcs.h whose return is probed. */
#define CUDA_FUNC(id, sym, fam, aux, flags) \
	{ #sym, id, fam, ISR_CUDA_FAM_RETURNS(fam), ISR_CUDA_COOKIE(id, fam, aux, flags) },
static const struct probed_func cuda_funcs[] = { ISR_CUDA_FUNCS(CUDA_FUNC) };
#undef CUDA_FUNC

/* Communicator set-ups are timed: their return is probed too. */
#define NCCL_FUNC(id, sym, kind, layout) \
	{ #sym, id, kind, (kind) == ISR_NCCL_KIND_INIT, ISR_NCCL_COOKIE(id, kind, layout) },
static const struct probed_func nccl_funcs[] = { ISR_NCCL_FUNCS(NCCL_FUNC) };
#undef NCCL_FUNC

_Static_assert(ISR_CUDA_FN_MAX <= PROBED_MAX_IDS && ISR_NCCL_FN_MAX <= PROBED_MAX_IDS, "PROBED_MAX_IDS");

const struct probed_lib_kind probed_cuda = {
	.what = "CUDA",
	.name = "libcuda",
	.option = "--cuda-lib",
	.file_prefix = "libcuda.so",
	.soname = "libcuda.so.1",
	.std_dirs = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/usr/lib:"
		    "/usr/local/nvidia/lib64:/usr/local/nvidia/lib:/usr/local/cuda/lib64:/usr/lib/wsl/lib",
	.sym_prefix = "cu",
	.none_hint = " (is it the driver's libcuda.so.1 and not a stub?)",
	.funcs = cuda_funcs,
	.nr_funcs = sizeof(cuda_funcs) / sizeof(cuda_funcs[0]),
	.nr_ids = ISR_CUDA_FN_MAX,
	.max_libs = 8,
	.max_resolved = 64,
};

const struct probed_lib_kind probed_nccl = {
	.what = "NCCL",
	.name = "libnccl",
	.option = "--nccl-lib",
	.file_prefix = "libnccl.so",
	.soname = "libnccl.so.2",
	.std_dirs = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:"
		    "/usr/lib:/usr/local/cuda/lib64:/usr/local/nccl/lib",
	.wheel = "nvidia/nccl/lib",	/* nvidia-nccl-cu*, which PyTorch wheels depend on */
	.sym_prefix = "nccl",
	.none_hint = "",
	.funcs = nccl_funcs,
	.nr_funcs = sizeof(nccl_funcs) / sizeof(nccl_funcs[0]),
	.nr_ids = ISR_NCCL_FN_MAX,
	.max_libs = 4,
	.max_resolved = 32,
};

struct probed_libs {
	const struct probed_lib_kind *kind;
	const struct probed_func **by_name;	/* kind->funcs sorted by name, for the one-pass lookup */
	size_t n;
	struct probed_lib *v[PROBED_MAX_RESOLVED];
};

static int func_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct probed_func *const *)a)->name, (*(const struct probed_func *const *)b)->name);
}

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct probed_func *const *)elem)->name);
}

struct probed_libs *probed_libs__new(const struct probed_lib_kind *kind)
{
	struct probed_libs *c = calloc(1, sizeof(*c));

	if (c)
		c->by_name = calloc(kind->nr_funcs, sizeof(*c->by_name));
	if (!c || !c->by_name) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->kind = kind;
	for (size_t i = 0; i < kind->nr_funcs; i++)
		c->by_name[i] = &kind->funcs[i];
	qsort(c->by_name, kind->nr_funcs, sizeof(c->by_name[0]), func_cmp);
	return c;
}

void probed_libs__free(struct probed_libs *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->by_name);
	free(c);
}

struct symbols {
	const struct probed_libs *c;
	__u64 *vaddr;	/* by function id */
};

/* One symbol of the pass over the file: the address of a function of the
 * table. */
static int symbol_note(void *ctx, const struct elf_symbol *sym)
{
	const struct symbols *s = ctx;
	const struct probed_lib_kind *k = s->c->kind;
	const struct probed_func *const *f;

	if (!sym->func || strncmp(sym->name, k->sym_prefix, strlen(k->sym_prefix)))
		return 0;
	f = bsearch(sym->name, s->c->by_name, k->nr_funcs, sizeof(s->c->by_name[0]), name_cmp);
	if (f && !s->vaddr[(*f)->id])
		s->vaddr[(*f)->id] = sym->value;
	return 0;
}

/* The sites of every function of the table in the ELF file elf, open on
 * fd: a malloc'ed library, or NULL with err written and errno set. */
static struct probed_lib *lib_sites(const struct probed_libs *c, struct elf_file *elf, int fd, const char *path,
				    char *err, size_t errlen)
{
	const struct probed_lib_kind *k = c->kind;
	__u64 *vaddr = calloc(k->nr_ids, sizeof(*vaddr));
	struct probed_lib *lib = calloc(1, sizeof(*lib) + k->nr_ids * sizeof(lib->sites[0]));
	struct symbols syms = { c, vaddr };

	if (!vaddr || !lib) {
		snprintf(err, errlen, "out of memory resolving %s", path);
		free(vaddr);
		free(lib);
		errno = ENOMEM;
		return NULL;
	}
	elf_file__for_each_symbol(elf, ELF_SYMS_DYNAMIC | ELF_SYMS_STATIC, symbol_note, &syms);
	for (size_t i = 0; i < k->nr_funcs; i++) {
		const struct probed_func *f = &k->funcs[i];
		struct probe_site *s = &lib->sites[f->id];

		*s = (struct probe_site){ .name = f->name, .cookie = f->cookie, .family = f->family, .ret = f->ret,
					  .kind = PROBE_SITE_ABSENT };
		if (probe_site__resolve(s, elf, fd, vaddr[f->id]))
			continue;
		lib->present++;
		lib->probes += s->ret ? 2 : 1;
	}
	free(vaddr);
	if (!lib->present) {
		snprintf(err, errlen, "%s exports none of the %s functions inferscope-bpf probes%s", path, k->what,
			 k->none_hint);
		free(lib);
		errno = EINVAL;
		return NULL;
	}
	return lib;
}

/* Reads the library file open on fd. */
static struct probed_lib *lib_resolve(const struct probed_libs *c, int fd, const char *path, const struct stat *st,
				      char *err, size_t errlen)
{
	__u64 start = clock__mono_ns();
	struct probed_lib *lib = NULL;
	struct elf_file *elf;
	int e = EINVAL;

	elf = elf_file__open(fd, path, err, errlen);
	if (elf && !elf_file__is_x86_64(elf))
		snprintf(err, errlen, "%s is not an x86-64 ELF library", path);
	if (elf && elf_file__is_x86_64(elf)) {
		lib = lib_sites(c, elf, fd, path, err, errlen);
		e = errno;
	}
	elf_file__close(elf);
	if (!lib) {
		errno = e;
		return NULL;
	}
	lib->kind = c->kind;
	snprintf(lib->path, sizeof(lib->path), "%s", path);
	lib->dev = st->st_dev;
	lib->ino = st->st_ino;
	lib->resolve_ns = clock__mono_ns() - start;
	return lib;
}

const struct probed_lib *probed_libs__resolve(struct probed_libs *c, const char *path, char *err, size_t errlen)
{
	struct probed_lib *lib;
	struct stat st;
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
		if (c->v[i]->dev == st.st_dev && c->v[i]->ino == st.st_ino) {
			close(fd);
			return c->v[i];
		}
	}
	if (c->n == c->kind->max_resolved || c->n == PROBED_MAX_RESOLVED) {
		close(fd);
		snprintf(err, errlen, "cannot resolve %s: already %zu different %s libraries", path, c->n,
			 c->kind->what);
		errno = ENOSPC;
		return NULL;
	}
	lib = lib_resolve(c, fd, path, &st, err, errlen);
	e = errno;
	close(fd);
	if (!lib) {
		errno = e;
		return NULL;
	}
	c->v[c->n++] = lib;
	return lib;
}

int probed_libs__resolve_paths(struct probed_libs *c, const char *const *paths, size_t n,
			       struct probed_mapping *out, size_t max, FILE *warn)
{
	char err[PATH_MAX + 256];
	size_t i;

	for (i = 0; i < n && i < max; i++) {
		out[i].lib = probed_libs__resolve(c, paths[i], err, sizeof(err));
		if (!out[i].lib) {
			int e = -errno;

			fprintf(warn, "inferscope-bpf: %s: %s\n", c->kind->option, err);
			return e;
		}
		snprintf(out[i].path, sizeof(out[i].path), "%s", paths[i]);
	}
	return (int)i;
}

bool probed_lib_kind__names(const struct probed_lib_kind *kind, const char *path)
{
	return lib_search__named(path, kind->file_prefix);
}

/* What a search found, each library once. */
struct found {
	struct probed_libs *c;
	struct probed_mapping *out;
	size_t max, n;
	FILE *note;
	__u32 pid;	/* of the maps read */
};

/* Adds lib, reached by path, unless it is there. */
static void found_lib(struct found *f, const struct probed_lib *lib, const char *path)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->out[i].lib == lib)
			return;
	if (f->n == f->max)
		return;
	f->out[f->n].lib = lib;
	snprintf(f->out[f->n].path, sizeof(f->out[f->n].path), "%s", path);
	f->n++;
}

static bool of_kind(const char *file, const void *ctx)
{
	const struct found *f = ctx;

	return probed_lib_kind__names(f->c->kind, file);
}

/* A file of the kind mapped in pid: resolved, unless it was deleted; what
 * cannot be is said on f->note. */
static int mapped_found(void *ctx, const char *file, bool deleted, const char *root_path)
{
	struct found *f = ctx;
	char err[PATH_MAX + 128];
	const struct probed_lib *lib;

	if (deleted) {
		if (f->note)
			fprintf(f->note, "inferscope-bpf: pid %u maps %s, a file deleted since: its %s calls cannot be "
				"probed\n", f->pid, file, f->c->kind->what);
		return 0;
	}
	lib = probed_libs__resolve(f->c, root_path, err, sizeof(err));
	if (lib)
		found_lib(f, lib, root_path);
	else if (f->note && errno != ENOENT && errno != ESRCH)
		fprintf(f->note, "inferscope-bpf: pid %u: %s; its %s calls through it are not traced\n", f->pid, err,
			f->c->kind->what);
	return 0;
}

int probed_libs__mapped(struct probed_libs *c, __u32 pid, struct probed_mapping *out, size_t max, FILE *warn)
{
	struct found f = { c, out, max, 0, warn, pid };
	int r = lib_search__mapped(pid, of_kind, mapped_found, &f);

	return r < 0 ? r : (int)f.n;
}

/* A lib_search_fn: the file at path (a candidate a command would load),
 * resolved; one that cannot be is said on note. */
static void candidate(void *ctx, const char *path)
{
	struct found *f = ctx;
	char err[PATH_MAX + 128];
	const struct probed_lib *lib = probed_libs__resolve(f->c, path, err, sizeof(err));

	if (lib)
		found_lib(f, lib, path);
	else if (f->note)
		fprintf(f->note, "inferscope-bpf: skipping candidate %s library: %s\n", f->c->kind->what, err);
}

/* The copy of a Python wheel in the Python environment whose bin directory
 * holds exe, as found in PATH (not resolved: a virtual environment's
 * python is a link to the system's). */
static void candidate_wheel(struct found *f, const char *exe)
{
	char found[PATH_MAX], pattern[PATH_MAX + 160], *slash;
	glob_t g;

	if (lib_search__exe(exe, false, found))
		return;
	slash = strrchr(found, '/');
	if (!slash)
		return;
	*slash = 0;
	snprintf(pattern, sizeof(pattern), "%s/../lib/python3*/site-packages/%s/%s", found, f->c->kind->wheel,
		 f->c->kind->soname);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		candidate(f, g.gl_pathv[i]);
	globfree(&g);
}

int probed_libs__candidates(struct probed_libs *c, const char *exe, struct probed_mapping *out, size_t max,
			    FILE *note)
{
	struct found f = { c, out, max, 0, note, 0 };

	lib_search__candidates(c->kind->soname, exe, c->kind->std_dirs, candidate, &f, note);
	if (exe && c->kind->wheel)
		candidate_wheel(&f, exe);
	return (int)f.n;
}

void probed_lib__describe(const struct probed_lib *lib, const char *path, FILE *out)
{
	const struct probed_lib_kind *k = lib->kind;
	unsigned int stepped = 0;
	size_t i;

	for (i = 0; i < k->nr_funcs; i++)
		stepped += lib->sites[k->funcs[i].id].kind == PROBE_SITE_STEPPED;
	fprintf(out, "%s (device %u:%u, inode %llu): %u of %zu functions, %u probes, %u single-stepped; "
		"symbols resolved in %.2f ms\n", path, major(lib->dev), minor(lib->dev),
		(unsigned long long)lib->ino, lib->present, k->nr_funcs, lib->probes, stepped, lib->resolve_ns / 1e6);
	for (i = 0; i < k->nr_funcs; i++)
		probe_site__print(&lib->sites[k->funcs[i].id], out);
}
