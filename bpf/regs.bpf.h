/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A uprobe's registers at fixed offsets. vmlinux.h declares struct pt_regs
 * for CO-RE, so every read of a register would be a CO-RE relocation, and
 * an object with one makes libbpf parse the kernel's BTF as it loads
 * (about 5 MB; 10-30 ms an object, the largest part of attaching after
 * the verifier). The x86-64 layout of pt_regs is the kernel's ABI (the
 * ptrace register set): read at fixed offsets, the probes of the CUDA,
 * NCCL, NVTX and CUPTI objects need no relocation at all. Include it
 * before <bpf/bpf_tracing.h>: PT_REGS_* read through it.
 */
#ifndef INFERSCOPE_REGS_BPF_H
#define INFERSCOPE_REGS_BPF_H

#if defined(__TARGET_ARCH_x86)
struct isr_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
_Static_assert(sizeof(struct isr_regs) == sizeof(struct pt_regs), "struct isr_regs is x86-64's struct pt_regs");
#define __PT_REGS_CAST(x) ((const struct isr_regs *)(x))
/* The sixth integer argument (libbpf 1.1 reads five) */
#define ISR_ARG6(x) (__PT_REGS_CAST(x)->r9)
#endif

#endif
