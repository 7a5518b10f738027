// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/elf_file.h on this test's own executable: the symbol walker finds a
 * function of this file, and the file offset it maps to holds the bytes
 * the process runs at that function; a file that is not ELF is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf_file.h"

__attribute__((noinline)) int elf_file_test_target(int x);
__attribute__((noinline)) int elf_file_test_target(int x)
{
	return x * 3 + 1;
}

struct lookup {
	const char *name;
	__u64 value;
	bool func;
	unsigned int seen;
};

static int note(void *ctx, const struct elf_symbol *sym)
{
	struct lookup *l = ctx;

	if (strcmp(sym->name, l->name))
		return 0;
	l->value = sym->value;
	l->func = sym->func;
	l->seen++;
	return 0;
}

static int stop_at_first(void *ctx, const struct elf_symbol *sym)
{
	(void)sym;
	(*(int *)ctx)++;
	return 7;
}

static void test_own_function(void **state)
{
	struct lookup l = { .name = "elf_file_test_target" };
	unsigned char file_bytes[16];
	struct elf_segment segs[8];
	struct elf_file *f;
	__u64 off, bias;
	size_t n, i;
	int fd, calls = 0;
	bool has_text = false;

	(void)state;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	f = elf_file__open(fd, "/proc/self/exe", NULL, 0);
	assert_non_null(f);
	assert_true(elf_file__is_x86_64(f));
	assert_true(elf_file__has_interp(f));
	assert_int_equal(elf_file__for_each_symbol(f, ELF_SYMS_STATIC, note, &l), 0);
	assert_int_equal(l.seen, 1);
	assert_true(l.func);
	assert_int_equal(elf_file__for_each_symbol(f, ELF_SYMS_DYNAMIC | ELF_SYMS_STATIC, stop_at_first, &calls), 7);
	assert_int_equal(calls, 1);
	n = elf_file__segments(f, segs, 8);
	for (i = 0; i < n; i++)
		has_text |= segs[i].exec;
	assert_true(has_text);
	assert_int_equal(elf_file__vaddr_to_offset(f, l.value, &off), 0);
	assert_int_equal(elf_file__vaddr_to_offset(f, 1, &off), -ENOENT);
	assert_int_equal(elf_file__vaddr_to_offset(f, l.value, &off), 0);
	/* What the file holds there is what runs here. */
	assert_int_equal(pread(fd, file_bytes, sizeof(file_bytes), (off_t)off), sizeof(file_bytes));
	bias = (__u64)(uintptr_t)&elf_file_test_target - l.value;
	assert_memory_equal(file_bytes, (const void *)(uintptr_t)(l.value + bias), sizeof(file_bytes));
	assert_int_equal(elf_file_test_target(2), 7);
	elf_file__close(f);
	close(fd);
}

static void test_not_elf(void **state)
{
	char err[256] = "";
	int fd;

	(void)state;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	errno = 0;
	assert_null(elf_file__open(fd, "cmdline", err, sizeof(err)));
	assert_int_equal(errno, ENOEXEC);
	assert_non_null(strstr(err, "cmdline is not a readable ELF file"));
	close(fd);
	elf_file__close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_function),
		cmocka_unit_test(test_not_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
