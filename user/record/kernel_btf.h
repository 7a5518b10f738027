/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Offsets into kernel structures, read from the kernel's BTF in user
 * space once, for BPF programs that then need no CO-RE relocation (so
 * that libbpf loads their objects without parsing that BTF again:
 * bpf/regs.bpf.h, bpf/py_stacks.bpf.h).
 */
#ifndef INFERSCOPE_KERNEL_BTF_H
#define INFERSCOPE_KERNEL_BTF_H

struct btf;

/* The byte offset in struct type of the member at path, names joined by
 * dots ("thread.fsbase": a member of a member); -1 when a name is not
 * there, or a member on the way is a bit field or not a struct or union. */
long kernel_btf__offset(const struct btf *btf, const char *type, const char *path);

#endif
