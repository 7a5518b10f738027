/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The 64-bit BPF attach cookie of every CUDA probe: the line of
 * format/cuda_funcs.h that the probe site belongs to, so that one BPF program
 * per family serves every function of the family. Built by the loader
 * (user/probes/probed_lib.c), decoded by bpf/cuda.bpf.c.
 *
 *   bits  0..15  ISR_CUDA_FN_* id
 *   bits 16..23  ISR_CUDA_FAM_* family
 *   bits 24..31  aux (copy direction, memset element size, allocation kind)
 *   bits 32..47  table flags (ISR_CUDA_ASYNC, ISR_CUDA_PTDS, ISR_CUDA_RUNTIME, ISR_CUDA_POLL)
 */
#ifndef INFERSCOPE_CUDA_COOKIE_H
#define INFERSCOPE_CUDA_COOKIE_H

#define ISR_CUDA_COOKIE(id, fam, aux, flags)                                              \
	((__u64)(__u16)(id) | (__u64)(__u8)(fam) << 16 | (__u64)(__u8)(aux) << 24 |      \
	 (__u64)(__u16)(flags) << 32)
#define ISR_CUDA_COOKIE_FUNC(c)		((__u16)(c))
#define ISR_CUDA_COOKIE_FAMILY(c)	((__u8)((c) >> 16))
#define ISR_CUDA_COOKIE_AUX(c)		((__u8)((c) >> 24))
#define ISR_CUDA_COOKIE_FLAGS(c)	((__u16)((c) >> 32))

#endif
