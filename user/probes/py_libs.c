// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
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
#include "py_libs.h"


static const char *const site_names[PY_SITES] = {
	[PY_SITE_RESTORE] = "PyEval_RestoreThread",
	[PY_SITE_SAVE] = "PyEval_SaveThread",
};

/* A file looked at: a supported interpreter (ok), or why not, remembered
 * so that the 1 s rescan neither reads it nor warns about it again. */
struct py_file {
	struct py_lib lib;
	bool ok;
	bool warned;
};

struct py_libs {
	struct py_file **files;	/* every executable and libpython looked at */
	size_t count, cap;
};

struct py_libs *py_libs__new(void)
{
	struct py_libs *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		errno = ENOMEM;
	return c;
}

void py_libs__free(struct py_libs *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->count; i++)
		free(c->files[i]);
	free(c->files);
	free(c);
}

/* 3.X from "libpython3.X.so..." or "python3.X": X, or -1. */
static int minor_from_name(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	char *end;
	long v;

	base = base ? base + 1 : path;
	p = strstr(base, "python3.");
	if (!p)
		return -1;
	v = strtol(p + 8, &end, 10);
	if (end == p + 8 || (*end && *end != '.' && *end != 'd' && *end != 'm') || v < 0 || v > 99)
		return -1;
	return (int)v;
}

struct symbols {
	__u64 *vaddr;		/* by PY_SITE_* */
	struct py_lib *lib;
};

/* One symbol of the pass over .dynsym and .symtab: the addresses of the
 * GIL functions, of _PyRuntime and PyCode_Type. */
static int symbol_note(void *ctx, const struct elf_symbol *sym)
{
	struct symbols *syms = ctx;
	int k;

	if (!sym->func) {
		if (strcmp(sym->name, "_PyRuntime") == 0)
			syms->lib->runtime_vaddr = sym->value;
		else if (strcmp(sym->name, "PyCode_Type") == 0)
			syms->lib->code_type_vaddr = sym->value;
		return 0;
	}
	if (strncmp(sym->name, "PyEval_", 7))
		return 0;
	for (k = 0; k < PY_SITES; k++)
		if (!syms->vaddr[k] && strcmp(sym->name, site_names[k]) == 0)
			syms->vaddr[k] = sym->value;
	return 0;
}

/* Fills f from the open file: f->ok when it exports both functions. */
static void file_resolve(struct py_file *f, int fd)
{
	__u64 vaddr[PY_SITES] = { 0 }, start = clock__mono_ns();
	struct py_lib *lib = &f->lib;
	struct symbols syms = { vaddr, lib };
	struct elf_segment segs[16];
	struct elf_file *elf;
	size_t nsegs, i;
	int k;

	lib->minor = minor_from_name(lib->path);
	elf = elf_file__open(fd, lib->path, NULL, 0);
	if (!elf || !elf_file__is_x86_64(elf))
		goto out;
	elf_file__for_each_symbol(elf, ELF_SYMS_DYNAMIC | ELF_SYMS_STATIC, symbol_note, &syms);
	nsegs = elf_file__segments(elf, segs, sizeof(segs) / sizeof(segs[0]));
	for (i = 0; i < nsegs; i++) {
		if (segs[i].offset == 0) {
			lib->load_vaddr = segs[i].vaddr;
			break;
		}
	}
	f->ok = true;
	for (k = 0; k < PY_SITES; k++) {
		struct probe_site *s = &lib->sites[k];

		s->name = site_names[k];
		s->ret = k == PY_SITE_RESTORE;
		s->kind = PROBE_SITE_ABSENT;
		if (probe_site__resolve(s, elf, fd, vaddr[k])) {
			f->ok = false;
			continue;
		}
		lib->probes += s->ret ? 2 : 1;
	}
	lib->resolve_ns = clock__mono_ns() - start;
out:
	elf_file__close(elf);
}

/* The file at path, resolved once; NULL + errno when it cannot be opened. */
static struct py_file *file_get(struct py_libs *c, const char *path)
{
	struct py_file *f;
	struct stat st;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	for (i = 0; i < c->count; i++) {
		if (c->files[i]->lib.dev == st.st_dev && c->files[i]->lib.ino == st.st_ino) {
			close(fd);
			return c->files[i];
		}
	}
	if (c->count == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct py_file **n = realloc(c->files, cap * sizeof(*n));

		if (!n) {
			close(fd);
			errno = ENOMEM;
			return NULL;
		}
		c->files = n;
		c->cap = cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(f->lib.path, sizeof(f->lib.path), "%.*s", (int)sizeof(f->lib.path) - 1, path);
	f->lib.dev = st.st_dev;
	f->lib.ino = st.st_ino;
	file_resolve(f, fd);
	close(fd);
	c->files[c->count++] = f;
	return f;
}

static bool is_libpython(const char *path)
{
	const char *base = strrchr(path, '/');

	return strncmp(base ? base + 1 : path, "libpython3", 10) == 0;
}

int py_libs__mapped(struct py_libs *c, __u32 pid, struct py_mapping *out, size_t max, FILE *warn)
{
	char link[64], exe[PATH_MAX], path[PATH_MAX + 32], prev[PATH_MAX] = "";
	struct proc_maps *maps;
	struct proc_map m;
	size_t n = 0, i;
	ssize_t len;
	int r;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;
	maps = proc_maps__open(pid);
	if (!maps)
		return -errno;
	while ((r = proc_maps__next(maps, &m)) > 0) {
		__u64 start = m.start, pgoff = m.offset;
		const char *file = m.path;
		struct py_file *pf;

		if (!proc_map__is_file(&m) || (!is_libpython(file) && strcmp(file, exe)))
			continue;
		if (strcmp(file, prev) == 0) {
			for (i = 0; i < n; i++)
				if (!out[i].base && pgoff == 0 && strcmp(out[i].file, file) == 0)
					out[i].base = start;
			continue;
		}
		snprintf(prev, sizeof(prev), "%s", file);
		if (strstr(file, " (deleted)"))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, file);
		pf = file_get(c, path);
		if (!pf) {
			if (warn && errno != ENOENT && errno != ESRCH)
				fprintf(warn, "inferscope-bpf: pid %u: cannot read %s: %s; its GIL is not traced\n",
					pid, file, strerror(errno));
			continue;
		}
		/* An executable that does not export the GIL functions is not
		 * a Python with libpython linked in: nothing to say. */
		if (!pf->ok && !is_libpython(file))
			continue;
		if (!pf->ok || pf->lib.minor < PY_MIN_MINOR || pf->lib.minor > PY_MAX_MINOR) {
			if (pf->warned)
				continue;
			pf->warned = true;
			if (warn && pf->ok && pf->lib.minor < 0)
				fprintf(warn, "inferscope-bpf: pid %u: the Python version of %s is not told by its "
					"name (python3.X, libpython3.X.so): its GIL is not traced\n", pid, file);
			else if (warn && pf->ok)
				fprintf(warn, "inferscope-bpf: pid %u runs Python 3.%d (%s): GIL tracing supports "
					"3.%d to 3.%d; its GIL is not traced\n", pid, pf->lib.minor, file,
					PY_MIN_MINOR, PY_MAX_MINOR);
			else if (warn)
				fprintf(warn, "inferscope-bpf: pid %u: %s does not export PyEval_RestoreThread and "
					"PyEval_SaveThread: its GIL is not traced\n", pid, file);
			continue;
		}
		for (i = 0; i < n && out[i].lib != &pf->lib; i++)
			;
		if (i == n && n < max) {
			out[n].lib = &pf->lib;
			snprintf(out[n].path, sizeof(out[n].path), "%.*s", (int)sizeof(out[n].path) - 1, path);
			snprintf(out[n].file, sizeof(out[n].file), "%.*s", (int)sizeof(out[n].file) - 1, file);
			out[n].base = pgoff == 0 ? start : 0;
			n++;
		}
	}
	proc_maps__close(maps);
	return r < 0 ? r : (int)n;
}

void py_lib__describe(const struct py_lib *lib, const char *path, FILE *out)
{
	unsigned int stepped = 0;
	int k;

	for (k = 0; k < PY_SITES; k++)
		stepped += lib->sites[k].kind == PROBE_SITE_STEPPED;
	fprintf(out, "%s (Python 3.%d, device %u:%u, inode %llu): %u probes, %u single-stepped; symbols resolved "
		"in %.2f ms\n", path, lib->minor, major(lib->dev), minor(lib->dev), (unsigned long long)lib->ino,
		lib->probes, stepped, lib->resolve_ns / 1e6);
	for (k = 0; k < PY_SITES; k++)
		probe_site__print(&lib->sites[k], out);
}
