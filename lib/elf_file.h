/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Symbols and loadable segments of an ELF file, through libelf: the one
 * walker of .dynsym and .symtab that finds libcuda's and libpython's probe
 * sites and the dlopen of a process to inject. The file is mapped, not
 * read: a pass over the symbols of a large library (libcuda) costs what
 * touching its symbol tables costs.
 */
#ifndef INFERSCOPE_LIB_ELF_FILE_H
#define INFERSCOPE_LIB_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct elf_file;

/* Opens the ELF file behind fd (which stays the caller's, open while the
 * elf_file is). NULL with errno set (ENOEXEC: not a readable ELF file;
 * ENOTSUP: libelf is unusable) and, when err is not NULL, a message
 * naming path. */
struct elf_file *elf_file__open(int fd, const char *path, char *err, size_t errlen);
void elf_file__close(struct elf_file *f);	/* safe on NULL */

/* A 64-bit little-endian x86-64 file. */
bool elf_file__is_x86_64(const struct elf_file *f);
/* It names a program interpreter (PT_INTERP): a dynamically linked
 * program, or a shared library that can run as one. */
bool elf_file__has_interp(const struct elf_file *f);

#define ELF_SYMS_DYNAMIC	0x1	/* .dynsym */
#define ELF_SYMS_STATIC		0x2	/* .symtab */

struct elf_symbol {
	const char *name;
	__u64 value;		/* its virtual address in the file */
	bool func;		/* STT_FUNC; otherwise STT_OBJECT */
};

/* Calls fn for every defined function and data symbol (not undefined,
 * value not 0) of the tables asked for, in file order; stops when fn
 * returns non-zero and returns that, else 0. */
int elf_file__for_each_symbol(const struct elf_file *f, unsigned int tables,
			      int (*fn)(void *ctx, const struct elf_symbol *sym), void *ctx);

/* Where the dynamic loader looks for the libraries of this program:
 * DT_RUNPATH, or without it DT_RPATH (valid while f is open); NULL when it
 * has neither. */
const char *elf_file__runpath(const struct elf_file *f);

struct elf_segment {
	__u64 vaddr;
	__u64 offset;		/* file offset */
	__u64 filesz;
	bool exec;		/* PF_X */
};

/* The PT_LOAD segments, in file order: how many (at most max) were stored. */
size_t elf_file__segments(const struct elf_file *f, struct elf_segment *out, size_t max);
/* The file offset of vaddr, through the executable PT_LOAD holding it.
 * 0, or -ENOENT. */
int elf_file__vaddr_to_offset(const struct elf_file *f, __u64 vaddr, __u64 *off);

#endif
