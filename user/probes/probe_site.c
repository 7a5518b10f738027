// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "probe_site.h"

static const char *const reg_names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					   "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15" };

/* A push of a general register: 50+r, or 41 50+r for r8..r15. Its length,
 * 0 if code is something else. */
static int push_len(const unsigned char *code, size_t len, __u8 *reg)
{
	if (len >= 1 && code[0] >= 0x50 && code[0] <= 0x57) {
		*reg = code[0] - 0x50;
		return 1;
	}
	if (len >= 2 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57) {
		*reg = 8 + code[1] - 0x50;
		return 2;
	}
	return 0;
}

void probe_site__choose(struct probe_site *s, const unsigned char *code, size_t len, __u64 off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	s->offset = off;
	if (push_len(code, len, &s->push_reg)) {
		s->kind = PROBE_SITE_PUSH;
	} else if (len >= 6 && memcmp(code, endbr64, 4) == 0 && push_len(code + 4, len - 4, &s->push_reg)) {
		s->kind = PROBE_SITE_AFTER_ENDBR;
		s->offset = off + 4;
	} else {
		s->kind = PROBE_SITE_STEPPED;
	}
}

int probe_site__resolve(struct probe_site *s, struct elf_file *elf, int fd, __u64 vaddr)
{
	unsigned char code[16];
	__u64 off;
	ssize_t n;

	if (!vaddr || elf_file__vaddr_to_offset(elf, vaddr, &off))
		return -ENOENT;
	n = pread(fd, code, sizeof(code), (off_t)off);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENODATA;
	probe_site__choose(s, code, (size_t)n, off);
	return 0;
}

const char *probe_site__describe(const struct probe_site *s, char *buf, size_t len)
{
	switch (s->kind) {
	case PROBE_SITE_PUSH:
		snprintf(buf, len, "push %%%s, emulated", reg_names[s->push_reg & 15]);
		break;
	case PROBE_SITE_AFTER_ENDBR:
		snprintf(buf, len, "after endbr64 (+4), push %%%s emulated", reg_names[s->push_reg & 15]);
		break;
	case PROBE_SITE_STEPPED:
		snprintf(buf, len, "single-stepped (slow)");
		break;
	default:
		snprintf(buf, len, "absent");
		break;
	}
	return buf;
}

void probe_site__print(const struct probe_site *s, FILE *out)
{
	char kind[64];

	if (s->kind == PROBE_SITE_ABSENT)
		fprintf(out, "  %-32s %-12s absent\n", s->name, "-");
	else
		fprintf(out, "  %-32s %#-12llx %s%s\n", s->name, (unsigned long long)s->offset,
			probe_site__describe(s, kind, sizeof(kind)), s->ret ? " + return" : "");
}
