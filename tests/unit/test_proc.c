// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/proc.h on this very process: its maps list the executable's code
 * where this function is, its stat says it runs, and maps lines parse the
 * way the kernel writes them.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "proc.h"

static void test_parse_lines(void **state)
{
	char file[] = "7f1c2a000000-7f1c2a021000 r-xp 00003000 fd:01 1835023                    "
		      "/usr/lib/x86_64-linux-gnu/libc.so.6\n";
	char anon[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0 \n";
	char stack[] = "7ffc000-7ffd000 rw-p 00000000 00:00 0                          [stack]";
	char deleted[] = "1000-2000 r-xp 00000000 08:02 12 /tmp/lib x.so (deleted)";
	char junk[] = "not a maps line";
	struct proc_map m;

	(void)state;
	assert_int_equal(proc_map__parse(file, &m), 0);
	assert_true(m.start == 0x7f1c2a000000ULL && m.end == 0x7f1c2a021000ULL);
	assert_true(m.offset == 0x3000 && m.inode == 1835023);
	assert_string_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_true(proc_map__is_file(&m));
	assert_int_equal(proc_map__parse(anon, &m), 0);
	assert_string_equal(m.path, "");
	assert_false(proc_map__is_file(&m));
	assert_int_equal(proc_map__parse(stack, &m), 0);
	assert_string_equal(m.path, "[stack]");
	assert_int_equal(proc_map__parse(deleted, &m), 0);
	assert_string_equal(m.path, "/tmp/lib x.so (deleted)");
	assert_int_equal(proc_map__parse(junk, &m), -EINVAL);
}

static void test_own_maps(void **state)
{
	char exe[PATH_MAX];
	__u64 here = (__u64)(uintptr_t)&test_own_maps;
	struct proc_maps *maps;
	struct proc_map m;
	bool found = false;
	ssize_t n;
	int r;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	maps = proc_maps__open((__u32)getpid());
	assert_non_null(maps);
	while ((r = proc_maps__next(maps, &m)) > 0)
		if (here >= m.start && here < m.end)
			found = strcmp(m.path, exe) == 0;
	assert_int_equal(r, 0);
	proc_maps__close(maps);
	assert_true(found);
	assert_true(proc_maps__has((__u32)getpid(), exe));
	assert_false(proc_maps__has((__u32)getpid(), "/no/such/file.so"));
	errno = 0;
	assert_null(proc_maps__open(0x7ffffff0));
	assert_int_equal(errno, ESRCH);
}

static void test_files_and_stat(void **state)
{
	char comm[64], *text = NULL;
	size_t len = 0;
	__u32 ppid;
	char st;

	(void)state;
	assert_true(proc__read_small("/proc/self/comm", comm, sizeof(comm)) > 0);
	assert_string_equal(comm, "test_proc");	/* the newline is cut */
	assert_int_equal(proc__read_small("/proc/self/comm", comm, 5), 4);	/* bounded */
	assert_string_equal(comm, "test");
	assert_int_equal(proc__read_file("/proc/self/maps", &text, &len), 0);
	assert_true(len > 0 && strlen(text) == len);
	free(text);
	assert_int_equal(proc__read_file("/no/such/file", &text, &len), -ENOENT);
	assert_int_equal(proc__stat((__u32)getpid(), &ppid, &st), 0);
	assert_int_equal(ppid, getppid());
	assert_int_equal(st, 'R');
	assert_true(proc__leader_running((__u32)getpid()));
	assert_true(proc__alive((__u32)getpid()));
	assert_false(proc__alive(0x7ffffff0));
}

/* A task running, sleeping, a zombie, dead, and in exit (PF_EXITING,
 * 0x4, in its flags: its files and address space already gone while a
 * driver tears its context down), as /proc/PID/stat says; a name with a
 * ") " in it does not fool the parse. */
static void test_stat_running(void **state)
{
	(void)state;
	assert_true(proc__stat_running("4711 (python3) R 1 4711 4711 0 -1 4194560 100 0 0 0 5 3"));
	assert_true(proc__stat_running("4711 (a) Z 9) S 1 4711 4711 0 -1 4194304 100 0 0"));
	assert_false(proc__stat_running("4711 (python3) Z 1 4711 4711 0 -1 4194560 100 0 0 0 5 3"));
	assert_false(proc__stat_running("4711 (python3) X 1 4711 4711 0 -1 4194560 100 0 0 0 5 3"));
	assert_false(proc__stat_running("4711 (python3) D 1 4711 4711 0 -1 4194564 100 0 0 0 5 3"));
	assert_false(proc__stat_running("4711 (python3) S 1 4711 4711 0 -1 4 0 0"));
	assert_false(proc__stat_running("4711 (python3"));
	assert_false(proc__stat_running("4711 (python3) R 1 4711"));
}

/* This process forks a child that forks a grandchild, and a second child
 * that exits at once (a zombie until reaped): the descendants are the
 * child and the grandchild, parents first; the zombie is left out. */
static void test_descendants(void **state)
{
	int to_child[2], from_child[2];
	__u32 self = (__u32)getpid(), out[16], grandchild = 0;
	pid_t child, zombie;
	char c = 0;
	int n;

	(void)state;
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(from_child), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t g = fork();

		if (g == 0) {
			(void)!read(to_child[0], &c, 1);
			_exit(0);
		}
		(void)!write(from_child[1], &g, sizeof(g));
		(void)!read(to_child[0], &c, 1);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	assert_int_equal(read(from_child[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	zombie = fork();
	assert_true(zombie >= 0);
	if (zombie == 0)
		_exit(0);
	while (1) {	/* until it is a zombie */
		__u32 pp;
		char st = 0;

		if (proc__stat((__u32)zombie, &pp, &st) || st == 'Z')
			break;
		usleep(1000);
	}
	n = proc__descendants(&self, 1, out, 16);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], (__u32)child);
	assert_int_equal(out[1], grandchild);
	assert_int_equal(proc__descendants(&self, 1, out, 1), 1);	/* bounded */
	assert_int_equal(proc__descendants(out, 1, out + 1, 15), 1);	/* from the child: the grandchild */
	assert_int_equal(out[1], grandchild);
	(void)!write(to_child[1], "xx", 2);
	waitpid(child, NULL, 0);
	waitpid(zombie, NULL, 0);
	close(to_child[0]);
	close(to_child[1]);
	close(from_child[0]);
	close(from_child[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_own_maps),
		cmocka_unit_test(test_files_and_stat),
		cmocka_unit_test(test_stat_running),
		cmocka_unit_test(test_descendants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
