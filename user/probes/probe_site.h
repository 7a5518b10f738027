/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where to put a uprobe on a function of a library: the file offset where
 * its arguments are still in their registers and its stack is as at entry
 * (the symbol itself, or the instruction after a leading endbr64), and
 * what the kernel does there. Shared by every family that probes library
 * functions (user/probes/probed_lib.h for libcuda and libnccl, user/probes/py_libs.h).
 */
#ifndef INFERSCOPE_PROBE_SITE_H
#define INFERSCOPE_PROBE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "elf_file.h"

enum probe_site_kind {
	PROBE_SITE_ABSENT,	/* the library does not export the function */
	PROBE_SITE_PUSH,	/* first instruction is a push: the kernel emulates it */
	PROBE_SITE_AFTER_ENDBR,	/* endbr64 then a push: probed at +4, the push emulated */
	PROBE_SITE_STEPPED,	/* anything else: single-stepped, about 10x the cost */
};

struct probe_site {
	const char *name;	/* symbol */
	__u64 cookie;		/* what the BPF program reads with bpf_get_attach_cookie() */
	__u64 offset;		/* file offset of the probe site */
	__u8 family;		/* which program decodes it (ISR_CUDA_FAM_*, ISR_NCCL_KIND_*) */
	__u8 kind;		/* enum probe_site_kind */
	__u8 push_reg;		/* register pushed (0-15, x86 numbering) for PUSH / AFTER_ENDBR */
	bool ret;		/* the return is probed too */
};

/* Where to probe a function whose first bytes are code, at file offset
 * off: sets s->kind, s->offset and s->push_reg. The kernel emulates a push
 * (cheap) and single-steps anything else (about 10x); endbr64 changes
 * neither registers nor stack, so the instruction after it sees the same
 * arguments. */
void probe_site__choose(struct probe_site *s, const unsigned char *code, size_t len, __u64 off);

/* Chooses the site of the function at address vaddr of the ELF file elf,
 * open on fd: 0, or -ENOENT when vaddr is 0 or in no segment of the file,
 * -errno when its first bytes cannot be read (s->kind is left as it was). */
int probe_site__resolve(struct probe_site *s, struct elf_file *elf, int fd, __u64 vaddr);

/* "push %rbp, emulated", "after endbr64 (+4), push %rbx emulated",
 * "single-stepped (slow)", "absent" into buf. */
const char *probe_site__describe(const struct probe_site *s, char *buf, size_t len);

/* One line of a -v site list: the name, the offset, how it is probed. */
void probe_site__print(const struct probe_site *s, FILE *out);

#endif
