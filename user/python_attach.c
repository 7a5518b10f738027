// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "procinfo.h"
#include "python_attach.h"


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

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOTSUP;
		return NULL;
	}
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

/* The addresses of the GIL functions, of _PyRuntime and PyCode_Type, from
 * .dynsym and .symtab. */
static void symbols_collect(Elf *elf, __u64 *vaddr, struct py_lib *lib)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;
		int k;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT) {
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (name && strcmp(name, "_PyRuntime") == 0)
					lib->runtime_vaddr = sym.st_value;
				else if (name && strcmp(name, "PyCode_Type") == 0)
					lib->code_type_vaddr = sym.st_value;
				continue;
			}
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strncmp(name, "PyEval_", 7))
				continue;
			for (k = 0; k < PY_SITES; k++)
				if (!vaddr[k] && strcmp(name, site_names[k]) == 0)
					vaddr[k] = sym.st_value;
		}
	}
}

/* Fills f from the open file: f->ok when it exports both functions. */
static void file_resolve(struct py_file *f, int fd)
{
	__u64 vaddr[PY_SITES] = { 0 }, start = procinfo__now_mono_ns();
	struct py_lib *lib = &f->lib;
	GElf_Ehdr eh;
	size_t nphdr;
	Elf *elf;
	int k;

	lib->minor = minor_from_name(lib->path);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || gelf_getclass(elf) != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || elf_getphdrnum(elf, &nphdr))
		goto out;
	symbols_collect(elf, vaddr, lib);
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			lib->load_vaddr = ph.p_vaddr;
			break;
		}
	}
	f->ok = true;
	for (k = 0; k < PY_SITES; k++) {
		struct cuda_site *s = &lib->sites[k];
		unsigned char code[16];
		__u64 off;
		ssize_t n;

		s->name = site_names[k];
		s->ret = k == PY_SITE_RESTORE;
		s->kind = CUDA_SITE_ABSENT;
		if (!vaddr[k] || elf_vaddr_to_offset(elf, nphdr, vaddr[k], &off) ||
		    (n = pread(fd, code, sizeof(code), (off_t)off)) <= 0) {
			f->ok = false;
			continue;
		}
		cuda_site__choose(s, code, (size_t)n, off);
		lib->probes += s->ret ? 2 : 1;
	}
	lib->resolve_ns = procinfo__now_mono_ns() - start;
out:
	elf_end(elf);
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
	char maps[64], exe[PATH_MAX], line[PATH_MAX + 128], path[PATH_MAX + 32], prev[PATH_MAX] = "";
	size_t n = 0, i;
	ssize_t len;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/exe", pid);
	len = readlink(maps, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;
	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, pgoff;
		char *file = procinfo__maps_path(line, &start, &pgoff);
		struct py_file *pf;

		if (!file || (!is_libpython(file) && strcmp(file, exe)))
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
	fclose(f);
	return (int)n;
}

void py_lib__describe(const struct py_lib *lib, const char *path, FILE *out)
{
	unsigned int stepped = 0;
	char kind[64];
	int k;

	for (k = 0; k < PY_SITES; k++)
		stepped += lib->sites[k].kind == CUDA_SITE_STEPPED;
	fprintf(out, "%s (Python 3.%d, device %u:%u, inode %llu): %u probes, %u single-stepped; symbols resolved "
		"in %.2f ms\n", path, lib->minor, major(lib->dev), minor(lib->dev), (unsigned long long)lib->ino,
		lib->probes, stepped, lib->resolve_ns / 1e6);
	for (k = 0; k < PY_SITES; k++) {
		const struct cuda_site *s = &lib->sites[k];

		fprintf(out, "  %-32s %#-12llx %s%s\n", s->name, (unsigned long long)s->offset,
			cuda_site__describe(s, kind, sizeof(kind)), s->ret ? " + return" : "");
	}
}
