// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loading a library into a running process (user/inject/inject.c), with real
 * ptrace, as root: the library is loaded once, its constructor runs in the
 * thread the injector chose, the signal it raises there is delivered after
 * the thread is put back, and every thread of the target keeps working
 * correctly — the interrupted read() returns the bytes written afterwards,
 * the interrupted nanosleep() lasts its full time and no longer, the
 * interrupted waitpid() reports the child's death. Then every refusal.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "inject.h"
#include "proc.h"
#include "../workloads/inject_state.h"

#define TARGET "build/tests/workloads/inject_target"
#define TARGET_STATIC "build/tests/workloads/inject_target_static"
#define PROBE_LIB "build/tests/workloads/libinject_probe.so"
/* A woken sleeper runs within this much of its deadline, also on a busy
 * two-core test machine. */
#define SLEEP_TOLERANCE_NS 250000000ull

struct target {
	char dir[256], state_path[512], marker[512];
	pid_t pid;
	int pipe_w;
	struct inject_state *st;
};

/* Waits up to timeout_s for cond. */
#define WAIT_FOR(cond, timeout_s)                                        \
	({                                                               \
		double end_ = th_now() + (timeout_s);                    \
		while (!(cond) && th_now() < end_)                       \
			usleep(2000);                                    \
		(cond);                                                  \
	})

static void target_start(struct target *t, const char *exe, const char *flag)
{
	int pfd[2], fd;

	th_tmpdir(t->dir, sizeof(t->dir));
	snprintf(t->state_path, sizeof(t->state_path), "%s/state", t->dir);
	snprintf(t->marker, sizeof(t->marker), "%s/marker", t->dir);
	assert_int_equal(pipe(pfd), 0);
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (t->pid == 0) {
		char *argv[] = { (char *)exe, t->state_path, (char *)flag, NULL };
		char out[600];
		int ofd;

		/* Dies with the test, and keeps off its stdout (a pipe that
		 * tests/run.sh reads to the end). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(out, sizeof(out), "%s/target.out", t->dir);
		ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (ofd >= 0) {
			dup2(ofd, 1);
			dup2(ofd, 2);
			close(ofd);
		}
		dup2(pfd[0], 3);
		if (pfd[0] != 3)
			close(pfd[0]);
		close(pfd[1]);
		setenv("INJECT_PROBE_MARKER", t->marker, 1);
		execv(exe, argv);
		_exit(127);
	}
	close(pfd[0]);
	t->pipe_w = pfd[1];
	assert_true(WAIT_FOR(({
				     struct stat sb;
				     stat(t->state_path, &sb) == 0 && sb.st_size == sizeof(*t->st);
			     }),
			     10.0));
	fd = open(t->state_path, O_RDONLY);
	assert_true(fd >= 0);
	t->st = mmap(NULL, sizeof(*t->st), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(t->st != MAP_FAILED);
	assert_true(WAIT_FOR(t->st->ready, 10.0));
}

static void target_stop(struct target *t)
{
	int status;

	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, &status, 0);
	}
	if (t->st && t->st != MAP_FAILED)
		munmap(t->st, sizeof(*t->st));
	if (t->pipe_w >= 0)
		close(t->pipe_w);
	th_rmrf(t->dir);
}

static int setup_target(void **state, const char *exe, const char *flag)
{
	struct target *t = calloc(1, sizeof(*t));

	t->pipe_w = -1;
	*state = t;
	target_start(t, exe, flag);
	return 0;
}

static int setup_dynamic(void **state)
{
	return setup_target(state, TARGET, NULL);
}

static int setup_static(void **state)
{
	return setup_target(state, TARGET_STATIC, NULL);
}

static int setup_seccomp(void **state)
{
	return setup_target(state, TARGET, "--seccomp");
}

static int teardown(void **state)
{
	target_stop(*state);
	free(*state);
	return 0;
}

static void probe_path(char *out)
{
	assert_non_null(realpath(PROBE_LIB, out));
}

static int count_lines(const char *path)
{
	char *s = th_slurp(path);
	int n = 0;

	for (char *p = s; p && *p; p++)
		n += *p == '\n';
	free(s);
	return n;
}

static void inject_ok(struct target *t, const char *lib, pid_t tid, struct inject_result *r)
{
	struct inject_opts o = { .tid = tid };
	char err[1024] = "";
	int e = inject__dlopen_opts(t->pid, lib, &o, r, err, sizeof(err));

	if (e) {
		print_error("inject into %d (thread %d): %d %s\n", t->pid, tid, e, err);
		fail();
	}
	print_message("injected into thread %d (system call %ld, %s) in %.3f ms\n", r->tid, r->syscall_nr,
		      r->syscall_restarts ? "restarted" : "had returned", r->held_ns / 1e6);
	assert_true(r->handle != 0);
	if (tid)
		assert_int_equal(r->tid, tid);
}

static void test_loads_once_and_every_thread_keeps_working(void **state)
{
	struct target *t = *state;
	struct inject_result rr, ra, rs, rm;
	unsigned char buf[10000];
	uint64_t sum = 0, sleeps0, spins0;
	char lib[PATH_MAX], *marker, expect[64];
	int status;

	probe_path(lib);
	assert_true(proc_maps__has((__u32)t->pid, "/"));	/* its maps can be read */
	assert_false(proc_maps__has((__u32)t->pid, lib));

	/* The reader, blocked in read() on an empty pipe. */
	inject_ok(t, lib, t->st->reader_tid, &rr);
	assert_int_equal(rr.syscall_nr, SYS_read);
	assert_int_equal(rr.syscall_restarts, 1);
	assert_true(proc_maps__has((__u32)t->pid, lib));
	/* The constructor ran in that thread, and the SIGUSR1 it sent itself
	 * there reached the handler once, in that thread, after the restore. */
	marker = th_slurp(t->marker);
	snprintf(expect, sizeof(expect), "%d %d\n", t->pid, rr.tid);
	assert_non_null(marker);
	assert_string_equal(marker, expect);
	free(marker);
	assert_true(WAIT_FOR(t->st->usr1_count == 1, 5.0));
	assert_int_equal(t->st->usr1_tid, rr.tid);

	/* Again, in whichever thread the injector picks: dlopen's refcount,
	 * the same handle, no second constructor run. */
	inject_ok(t, lib, 0, &ra);
	assert_true(ra.handle == rr.handle);

	/* The sleeper, inside a 500 ms nanosleep(). */
	sleeps0 = t->st->sleeps;
	inject_ok(t, lib, t->st->sleeper_tid, &rs);
	assert_int_equal(rs.syscall_nr, SYS_clock_nanosleep);
	assert_true(rs.handle == rr.handle);

	/* The main thread, in waitpid(). */
	inject_ok(t, lib, t->pid, &rm);
	assert_int_equal(rm.syscall_nr, SYS_wait4);
	assert_int_equal(rm.syscall_restarts, 1);
	assert_true(rm.handle == rr.handle);
	assert_int_equal(count_lines(t->marker), 1);

	/* The restarted read() gets exactly the bytes written after it. */
	for (size_t i = 0; i < sizeof(buf); i++) {
		buf[i] = (unsigned char)(i * 7 + 3);
		sum += buf[i];
	}
	assert_int_equal(write(t->pipe_w, buf, sizeof(buf)), sizeof(buf));
	assert_true(WAIT_FOR(t->st->bytes_read == sizeof(buf), 5.0));
	assert_int_equal(t->st->read_sum, sum);
	assert_int_equal(t->st->read_errors, 0);

	/* Every sleep, the interrupted one included, lasted its 500 ms, and
	 * none ran longer than the time the thread was held plus scheduling
	 * slack: the restart kept the original deadline. */
	assert_true(WAIT_FOR(t->st->sleeps >= sleeps0 + 2, 5.0));
	assert_int_equal(t->st->short_sleeps, 0);
	print_message("longest sleep overshoot %.3f ms (thread held %.3f ms)\n", t->st->max_overshoot_ns / 1e6,
		      rs.held_ns / 1e6);
	assert_true(t->st->max_overshoot_ns <= rs.held_ns + SLEEP_TOLERANCE_NS);

	/* The restarted waitpid() reports the child's death. */
	assert_int_equal(kill(t->st->child_pid, SIGTERM), 0);
	assert_true(WAIT_FOR(t->st->waited_pid != 0, 5.0));
	assert_int_equal(t->st->waited_pid, t->st->child_pid);
	status = t->st->waited_status;
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);

	/* The spinner never stopped counting. */
	spins0 = t->st->spins;
	assert_true(WAIT_FOR(t->st->spins > spins0 + 1000, 5.0));
	assert_int_equal(t->st->usr1_count, 1);
}

/* The refusal code and a message containing needle. */
static void expect_refusal(int got, const char *err, int want, const char *needle)
{
	if (got != want || !strstr(err, needle)) {
		print_error("got %d \"%s\"; wanted %d and \"%s\"\n", got, err, want, needle);
		fail();
	}
}

static void test_dlopen_error_is_reported(void **state)
{
	struct target *t = *state;
	char path[PATH_MAX], err[1024] = "", real[PATH_MAX];
	uint64_t handle = 0;
	unsigned char byte = 42;
	FILE *f;

	expect_refusal(inject__dlopen(t->pid, "/nonexistent/libnope.so", &handle, err, sizeof(err)), err, -ENOENT,
		       "not visible inside the mount namespace");
	expect_refusal(inject__dlopen(t->pid, "libnope.so", &handle, err, sizeof(err)), err, -EINVAL,
		       "must be absolute");

	/* A file that exists but is no library: the target's dlerror(). */
	snprintf(path, sizeof(path), "%s/notalib.so", t->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "this is not an ELF file, but it is long enough to be read as one by the loader\n");
	fclose(f);
	assert_non_null(realpath(path, real));
	expect_refusal(inject__dlopen(t->pid, real, &handle, err, sizeof(err)), err, -ELIBACC, "invalid ELF header");
	assert_non_null(strstr(err, real));
	assert_true(handle == 0);

	/* The target is unharmed. */
	assert_int_equal(write(t->pipe_w, &byte, 1), 1);
	assert_true(WAIT_FOR(t->st->bytes_read == 1, 5.0));
	assert_int_equal(t->st->read_sum, 42);
	assert_int_equal(t->st->read_errors, 0);
}

static void test_refuses_static_binary(void **state)
{
	struct target *t = *state;
	char lib[PATH_MAX], err[1024] = "";
	uint64_t handle;

	probe_path(lib);
	expect_refusal(inject__preflight(t->pid, err, sizeof(err)), err, -ENOTSUP, "statically linked");
	expect_refusal(inject__dlopen(t->pid, lib, &handle, err, sizeof(err)), err, -ENOTSUP, "statically linked");
}

static void test_refuses_seccomp(void **state)
{
	struct target *t = *state;
	char err[1024] = "";

	expect_refusal(inject__preflight(t->pid, err, sizeof(err)), err, -ENOTSUP, "runs under seccomp");
}

static void test_refuses_missing_pid(void **state)
{
	char lib[PATH_MAX], err[1024] = "";
	uint64_t handle;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	probe_path(lib);
	expect_refusal(inject__preflight(pid, err, sizeof(err)), err, -ESRCH, "no process");
	expect_refusal(inject__dlopen(pid, lib, &handle, err, sizeof(err)), err, -ESRCH, "no process");
}

static void test_refuses_traced_target(void **state)
{
	struct target *t = *state;
	char err[1024] = "", by[64];

	assert_int_equal(ptrace(PTRACE_SEIZE, t->pid, NULL, NULL), 0);
	snprintf(by, sizeof(by), "already traced by process %d", getpid());
	expect_refusal(inject__preflight(t->pid, err, sizeof(err)), err, -EBUSY, by);
}

static void test_refuses_yama_scope(void **state)
{
	struct target *t = *state;
	char path[600], err[1024] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/ptrace_scope", t->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "3\n");
	fclose(f);
	setenv("INFERSCOPE_PTRACE_SCOPE", path, 1);
	expect_refusal(inject__preflight(t->pid, err, sizeof(err)), err, -EPERM, "Yama forbids all ptrace");
	/* Scope 2 lets CAP_SYS_PTRACE through, which root has. */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "2\n");
	fclose(f);
	assert_int_equal(inject__preflight(t->pid, err, sizeof(err)), 0);
	unsetenv("INFERSCOPE_PTRACE_SCOPE");
}

static void test_refuses_unprivileged_caller(void **state)
{
	struct target *t = *state;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[1024] = "";
		int e;

		if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0)
			_exit(3);
		e = inject__preflight(t->pid, err, sizeof(err));
		if (e == -EPERM && strstr(err, "not allowed to ptrace"))
			_exit(0);
		fprintf(stderr, "unprivileged preflight: %d %s\n", e, err);
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_loads_once_and_every_thread_keeps_working, setup_dynamic,
						teardown),
		cmocka_unit_test_setup_teardown(test_dlopen_error_is_reported, setup_dynamic, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_static_binary, setup_static, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_seccomp, setup_seccomp, teardown),
		cmocka_unit_test(test_refuses_missing_pid),
		cmocka_unit_test_setup_teardown(test_refuses_traced_target, setup_dynamic, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_yama_scope, setup_dynamic, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_unprivileged_caller, setup_dynamic, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
