// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "bench_sites.h"

__asm__(".text\n"
	".p2align 4\n"
	".globl bench_site_push\n"
	".type bench_site_push, @function\n"
	"bench_site_push:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size bench_site_push, .-bench_site_push\n"
	".p2align 4\n"
	".globl bench_site_ret\n"
	".type bench_site_ret, @function\n"
	"bench_site_ret:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size bench_site_ret, .-bench_site_ret\n"
	".p2align 4\n"
	".globl bench_site_endbr\n"
	".type bench_site_endbr, @function\n"
	"bench_site_endbr:\n"
	"	endbr64\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size bench_site_endbr, .-bench_site_endbr\n"
	".p2align 4\n"
	".globl bench_site_stepped\n"
	".type bench_site_stepped, @function\n"
	"bench_site_stepped:\n"
	"	mov %rdi, %rax\n"
	"	ret\n"
	".size bench_site_stepped, .-bench_site_stepped\n"
	".p2align 4\n"
	".globl bench_site_nop5\n"
	".type bench_site_nop5, @function\n"
	"bench_site_nop5:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" /* the assembler would shorten a nopl */
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size bench_site_nop5, .-bench_site_nop5\n"
	".p2align 4\n"
	".globl bench_site_many\n"
	".type bench_site_many, @function\n"
	"bench_site_many:\n"
	"	.rept 100\n"
	"	.p2align 4\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	"	.endr\n"
	".size bench_site_many, .-bench_site_many\n");

_Static_assert(BENCH_MANY_SITES == 100 && BENCH_MANY_STRIDE == 16, "the .rept and .p2align above");

int bench_sites__check(void (*fn)(void), const unsigned char *code, size_t len)
{
	const void *p = (const void *)(unsigned long)fn;

	return memcmp(p, code, len) ? -EILSEQ : 0;
}
