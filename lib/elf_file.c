// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include "elf_file.h"

struct elf_file {
	Elf *elf;
	GElf_Ehdr eh;
	bool interp;
	size_t nsegs;
	struct elf_segment *segs;
};

static void set_err(char *err, size_t errlen, const char *path, const char *what)
{
	if (err)
		snprintf(err, errlen, "%s is not a readable ELF file: %s", path, what);
}

struct elf_file *elf_file__open(int fd, const char *path, char *err, size_t errlen)
{
	struct elf_file *f;
	size_t nph, i;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		if (err)
			snprintf(err, errlen, "libelf is unusable: %s", elf_errmsg(-1));
		errno = ENOTSUP;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &f->eh) ||
	    elf_getphdrnum(f->elf, &nph)) {
		set_err(err, errlen, path, f->elf && elf_kind(f->elf) != ELF_K_ELF ? "no ELF header" : elf_errmsg(-1));
		elf_file__close(f);
		errno = ENOEXEC;
		return NULL;
	}
	f->segs = calloc(nph ? nph : 1, sizeof(*f->segs));
	if (!f->segs) {
		elf_file__close(f);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP)
			f->interp = true;
		if (ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs].vaddr = ph.p_vaddr;
		f->segs[f->nsegs].offset = ph.p_offset;
		f->segs[f->nsegs].filesz = ph.p_filesz;
		f->segs[f->nsegs].exec = ph.p_flags & PF_X;
		f->nsegs++;
	}
	return f;
}

void elf_file__close(struct elf_file *f)
{
	if (!f)
		return;
	if (f->elf)
		elf_end(f->elf);
	free(f->segs);
	free(f);
}

bool elf_file__is_x86_64(const struct elf_file *f)
{
	return gelf_getclass(f->elf) == ELFCLASS64 && f->eh.e_ident[EI_DATA] == ELFDATA2LSB &&
	       f->eh.e_machine == EM_X86_64;
}

bool elf_file__has_interp(const struct elf_file *f)
{
	return f->interp;
}

int elf_file__for_each_symbol(const struct elf_file *f, unsigned int tables,
			      int (*fn)(void *ctx, const struct elf_symbol *sym), void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    !((sh.sh_type == SHT_DYNSYM && (tables & ELF_SYMS_DYNAMIC)) ||
		      (sh.sh_type == SHT_SYMTAB && (tables & ELF_SYMS_STATIC))))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			struct elf_symbol s;
			GElf_Sym sym;
			int type, r;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if (type != STT_FUNC && type != STT_OBJECT)
				continue;
			s.name = elf_strptr(f->elf, sh.sh_link, sym.st_name);
			if (!s.name)
				continue;
			s.value = sym.st_value;
			s.func = type == STT_FUNC;
			r = fn(ctx, &s);
			if (r)
				return r;
		}
	}
	return 0;
}

const char *elf_file__runpath(const struct elf_file *f)
{
	const char *runpath = NULL, *rpath = NULL;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_RUNPATH)
				runpath = elf_strptr(f->elf, sh.sh_link, dyn.d_un.d_val);
			else if (dyn.d_tag == DT_RPATH)
				rpath = elf_strptr(f->elf, sh.sh_link, dyn.d_un.d_val);
		}
	}
	return runpath ? runpath : rpath;
}

size_t elf_file__segments(const struct elf_file *f, struct elf_segment *out, size_t max)
{
	size_t i;

	for (i = 0; i < f->nsegs && i < max; i++)
		out[i] = f->segs[i];
	return i;
}

int elf_file__vaddr_to_offset(const struct elf_file *f, __u64 vaddr, __u64 *off)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++) {
		const struct elf_segment *s = &f->segs[i];

		if (s->exec && vaddr >= s->vaddr && vaddr < s->vaddr + s->filesz) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}
