/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Two functions of the inferscope-bpf executable itself with the names and
 * the prologue (push %rbp; mov %rsp,%rbp) of libcuda 580's entry points.
 * They do nothing but return CUDA_SUCCESS. Probing this executable as a
 * libcuda (--cuda-lib) costs exactly what probing the driver costs: the
 * benchmarks (user/bench/bench.c) use them as their workload, and the recorder
 * measures the cost of one probe hit on them for the overhead budget
 * (family_cuda.c, cuda_measure_costs).
 */
#ifndef INFERSCOPE_SELFPROBE_H
#define INFERSCOPE_SELFPROBE_H

int cuLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
		   unsigned int by, unsigned int bz, unsigned int shared, void *stream, void **params,
		   void **extra);
int cuStreamSynchronize(void *stream);

#endif
