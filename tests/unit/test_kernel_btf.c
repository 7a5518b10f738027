// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kernel_btf__offset: a member's offset through nested structs, typedefs
 * and modifiers skipped, from a BTF built here; and the path the Python
 * stack walkers need (task_struct.thread.fsbase) in the running kernel's.
 * And the reason for both: the uprobe objects carry no CO-RE relocation.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kernel_btf.h"

/* struct thread_struct { long sp; long fsbase; };
 * typedef struct thread_struct thread_t;
 * struct task_struct { int flags: 3; int pid; char pad[56]; const thread_t thread; }; */
static struct btf *synthetic(void)
{
	struct btf *b = btf__new_empty();
	int lng, in, chr, arr, th, td, cst, task;

	assert_non_null(b);
	lng = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	in = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED);
	arr = btf__add_array(b, in, chr, 56);
	th = btf__add_struct(b, "thread_struct", 16);
	assert_int_equal(btf__add_field(b, "sp", lng, 0, 0), 0);
	assert_int_equal(btf__add_field(b, "fsbase", lng, 64, 0), 0);
	td = btf__add_typedef(b, "thread_t", th);
	cst = btf__add_const(b, td);
	task = btf__add_struct(b, "task_struct", 80);
	assert_int_equal(btf__add_field(b, "flags", in, 0, 3), 0);
	assert_int_equal(btf__add_field(b, "pid", in, 32, 0), 0);
	assert_int_equal(btf__add_field(b, "pad", arr, 64, 0), 0);
	assert_int_equal(btf__add_field(b, "thread", cst, 512, 0), 0);
	assert_true(lng > 0 && in > 0 && chr > 0 && arr > 0 && th > 0 && td > 0 && cst > 0 && task > 0);
	return b;
}

static void test_nested_member(void **state)
{
	struct btf *b = synthetic();

	(void)state;
	assert_int_equal(kernel_btf__offset(b, "task_struct", "pid"), 4);
	assert_int_equal(kernel_btf__offset(b, "task_struct", "thread"), 64);
	assert_int_equal(kernel_btf__offset(b, "task_struct", "thread.fsbase"), 72);
	assert_int_equal(kernel_btf__offset(b, "thread_struct", "fsbase"), 8);
	btf__free(b);
}

/* A name that is not there, a prefix of a name, a bit field, a path
 * through a member that is not a struct, a type that is not there. */
static void test_not_there(void **state)
{
	struct btf *b = synthetic();

	(void)state;
	assert_int_equal(kernel_btf__offset(b, "task_struct", "thread.gsbase"), -1);
	assert_int_equal(kernel_btf__offset(b, "task_struct", "thr"), -1);
	assert_int_equal(kernel_btf__offset(b, "task_struct", "flags"), -1);
	assert_int_equal(kernel_btf__offset(b, "task_struct", "pid.x"), -1);
	assert_int_equal(kernel_btf__offset(b, "mm_struct", "pgd"), -1);
	btf__free(b);
}

/* The running kernel's (CI and this project's hosts have BTF: the
 * recorder needs it): the fs base the Python 3.10 walker reads is
 * inside task_struct, past its first members. */
static void test_running_kernel(void **state)
{
	struct btf *b;
	long fs, task_size;

	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		print_message("no /sys/kernel/btf/vmlinux\n");
		skip();
	}
	b = btf__load_vmlinux_btf();
	assert_false(libbpf_get_error(b));
	fs = kernel_btf__offset(b, "task_struct", "thread.fsbase");
	task_size = btf__resolve_size(b, btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT));
	print_message("task_struct.thread.fsbase at %ld of %ld bytes\n", fs, task_size);
	assert_true(fs > 64 && fs + 8 <= task_size);
	assert_int_equal(fs, kernel_btf__offset(b, "task_struct", "thread") +
				     kernel_btf__offset(b, "thread_struct", "fsbase"));
	btf__free(b);
}

/* The length of the CO-RE relocations in the .BTF.ext of a BPF object
 * file (struct btf_ext_header: magic, version, flags, hdr_len, then the
 * offsets and lengths of func_info, line_info and core_relo); -1: not
 * read. */
static long core_relo_len(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	long len = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			__u32 h[8];

			if (!gelf_getshdr(scn, &sh) || strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ?: "", ".BTF.ext"))
				continue;
			d = elf_getdata(scn, NULL);
			len = 0;	/* no core_relo part in an older header */
			if (d && d->d_size >= sizeof(h)) {
				memcpy(h, d->d_buf, sizeof(h));
				if (h[1] >= sizeof(h))
					len = h[7];
			}
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return len;
}

/* The uprobe objects read registers at fixed offsets (bpf/regs.bpf.h) and
 * the fs base at the offset the recorder read: none has a CO-RE
 * relocation, so libbpf loads them without parsing the kernel's BTF
 * (4 parses a recording instead of 9). The scheduler's (task_struct
 * across kernel versions) keeps its own. */
static void test_uprobe_objects_need_no_kernel_btf(void **state)
{
	static const char *const objs[] = { "cuda", "nccl", "nvtx", "cupti", "py_stacks", "python" };
	char path[128];

	(void)state;
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		snprintf(path, sizeof(path), "build/bpf/%s.bpf.o", objs[i]);
		if (core_relo_len(path) != 0)
			fail_msg("%s: CO-RE relocations %ld bytes (0 wanted: libbpf would parse the kernel's BTF to load it)",
				 path, core_relo_len(path));
	}
	snprintf(path, sizeof(path), "build/bpf/sched.bpf.o");
	assert_true(core_relo_len(path) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_member),
		cmocka_unit_test(test_not_there),
		cmocka_unit_test(test_running_kernel),
		cmocka_unit_test(test_uprobe_objects_need_no_kernel_btf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
