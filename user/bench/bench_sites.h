/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe sites of the kernel-CI benchmarks, inside the inferscope-bpf
 * executable itself: functions written in assembly so that each begins
 * with exactly the instruction a mechanism needs, whatever compiler and
 * flags built the binary (the release binary is static and runs on hosts
 * with no compiler; a shared helper library would have to travel with it
 * and be built by clang with the right flags, as tests/standin/ is). Each
 * does nothing and returns.
 */
#ifndef INFERSCOPE_BENCH_SITES_H
#define INFERSCOPE_BENCH_SITES_H

#include <stddef.h>

/* push %rbp; mov %rsp,%rbp: libcuda 580's prologue, emulated by the kernel. */
void bench_site_push(void);
/* The same prologue, for return probes. */
void bench_site_ret(void);
/* endbr64, then push %rbp: probed at +4 (the push), or at the endbr64. */
void bench_site_endbr(void);
#define BENCH_ENDBR_LEN 4
/* mov %rdi,%rax first: an instruction the kernel must single-step. */
void bench_site_stepped(void);
/* A 5-byte nop (0f 1f 44 00 00), then push %rbp: the kind of site newer
 * kernels (6.18+) may turn into a call instead of a trap. */
void bench_site_nop5(void);
/* BENCH_MANY_SITES functions of libcuda's prologue, BENCH_MANY_STRIDE bytes
 * apart from bench_site_many. */
void bench_site_many(void);
#define BENCH_MANY_SITES 100
#define BENCH_MANY_STRIDE 16

/* The first bytes each site must have; 0 when fn's code matches. */
int bench_sites__check(void (*fn)(void), const unsigned char *code, size_t len);

#endif
