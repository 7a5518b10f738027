// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Bad input gets a clear error and loses nothing: what a user meets when
 * the pid is wrong, privileges or BTF are missing, the output cannot be
 * written, the disk fills up mid-recording, or the file is not a recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "cli.h"
#include "recording.h"

struct ctx {
	struct th_files f;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

/* The run failed with exit code `code` and said `needle` on stderr. */
static void expect_failure(int status, int code, const char *err_path, const char *needle)
{
	char *e = th_slurp(err_path);

	if (!WIFEXITED(status) || WEXITSTATUS(status) != code || !e || !strstr(e, needle)) {
		print_error("status 0x%x (expected exit %d), stderr lacks \"%s\":\n%s\n", status, code, needle,
			    e ? e : "");
		free(e);
		fail();
	}
	free(e);
}

/* A pid that names no process. pid_max is at most 4194304: above is free. */
static void test_unknown_pid(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", c->f.isr, "-p", "4194304", NULL };

	expect_failure(th_run(argv, c->f.err), 1, c->f.err, "no process with pid 4194304");
	assert_int_equal(access(c->f.isr, F_OK), -1); /* nothing half-made left behind */
	/* The hint fits any program, not only Python. */
	{
		char *e = th_slurp(c->f.err);

		assert_non_null(e);
		assert_non_null(strstr(e, "pgrep -af NAME"));
		assert_null(strstr(e, "python"));
		free(e);
	}
}

static void test_bad_pid_syntax(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", c->f.isr, "-p", "12abc", NULL };

	expect_failure(th_run(argv, c->f.err), EXIT_USAGE, c->f.err, "is not a list of process ids");
}

static void test_bad_duration(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", c->f.isr, "-d", "10s", "--", WORKLOAD, "sleep", NULL };

	expect_failure(th_run(argv, c->f.err), EXIT_USAGE, c->f.err, "is not a duration in seconds");
}

/* 1e-10 s is not "no limit". */
static void test_duration_too_short(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", c->f.isr, "-d", "1e-10", "--", WORKLOAD, "sleep", NULL };

	expect_failure(th_run(argv, c->f.err), EXIT_USAGE, c->f.err, "shorter than a millisecond");
}

/* The kernel counts a ring buffer's bytes in 32 bits: 4096 MiB cannot
 * load, so it is refused with the range that can. */
static void test_ringbuf_size_range(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", c->f.isr, "--ringbuf-size", "4096", "--", WORKLOAD, "sleep", NULL };

	expect_failure(th_run(argv, c->f.err), EXIT_USAGE, c->f.err, "is not a power of two between 1 and 2048 (MiB)");
}

/* -p 7,7,7 traces pid 7 once: one snapshot of it in the recording. */
static void test_duplicate_pids(void **state)
{
	struct ctx *c = *state;
	char pids[64], err[512], buf[16];
	char *wl[] = { WORKLOAD, "--wait-signal", "sleep", NULL };
	struct recording *rec;
	size_t attached = 0;
	int out_fd;
	pid_t w;

	w = th_spawn(wl, &out_fd, NULL);
	assert_int_equal(read(out_fd, buf, 6), 6);	/* "ready\n" */
	snprintf(pids, sizeof(pids), "%d,%d,%d", w, w, w);
	{
		char *argv[] = { TRACER, "record", "-q", "-d", "0.5", "-o", c->f.isr, "-p", pids, "-p", pids, NULL };
		int status = th_run(argv, c->f.err);

		th_reap(w);
		close(out_fd);
		expect_failure(status, 0, c->f.err, "");
	}
	assert_int_equal(recording__load(c->f.isr, &rec, err, sizeof(err)), 0);
	for (size_t i = 0; i < rec->process_count; i++)
		attached += rec->processes[i].origin == ISR_ORIGIN_ATTACHED;
	recording__free(rec);
	assert_int_equal(attached, 1);
}

static void test_output_not_writable(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", "/nonexistent-dir/x.isr", "--", WORKLOAD, "sleep", NULL };

	expect_failure(th_run(argv, c->f.err), 1, c->f.err, "cannot create the recording /nonexistent-dir/x.isr");
}

static void test_missing_command(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-o", c->f.isr, "--", "/nonexistent-program", NULL };

	expect_failure(th_run(argv, c->f.err), 1, c->f.err, "cannot run /nonexistent-program");
}

static void test_no_btf(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { "env", "INFERSCOPE_BTF=/nonexistent-btf", TRACER, "record", "-o", c->f.isr, "--",
			 WORKLOAD, "sleep", NULL };

	expect_failure(th_run(argv, c->f.err), 1, c->f.err, "CONFIG_DEBUG_INFO_BTF");
}

/* As an unprivileged user: a copy of the binary where that user can run it. */
static void test_not_root(void **state)
{
	struct ctx *c = *state;
	char tmp[] = "/tmp/inferscope-test-XXXXXX", bin[128], out[160];
	int status;
	pid_t pid;

	assert_non_null(mkdtemp(tmp));
	chmod(tmp, 0777);
	snprintf(bin, sizeof(bin), "%s/inferscope-bpf", tmp);
	snprintf(out, sizeof(out), "%s/x.isr", tmp);
	{
		char *cp[] = { "cp", TRACER, bin, NULL };

		assert_int_equal(th_run(cp, NULL), 0);
	}
	chmod(bin, 0755);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(c->f.err, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		dup2(fd, 2);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(99);
		execl(bin, bin, "record", "-o", out, "-p", "1", (char *)NULL);
		_exit(98);
	}
	waitpid(pid, &status, 0);
	{
		char *rm[] = { "rm", "-rf", tmp, NULL };

		th_run(rm, NULL);
	}
	expect_failure(status, 1, c->f.err, "not enough privilege");
}

/* A tiny filesystem fills up mid-recording: the recorder stops, says why,
 * and the file reads back up to its last complete chunk. */
static void test_disk_full(void **state)
{
	struct ctx *c = *state;
	char mnt[512], out[600];
	json_t *r;
	int status;

	snprintf(mnt, sizeof(mnt), "%s/small", c->f.dir);
	assert_int_equal(mkdir(mnt, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=2m")) {
		print_error("mount tmpfs on %s: %s (the test needs root)\n", mnt, strerror(errno));
		fail();
	}
	snprintf(out, sizeof(out), "%s/rec.isr", mnt);
	{
		char *argv[] = { TRACER, "record", "-q", "--budget", "off", "--compress-level", "0", "-o", out, "--",
				 WORKLOAD, "anon", "100000", NULL };

		status = th_run(argv, c->f.err);
	}
	{
		char *cp[] = { "cp", out, c->f.isr, NULL };

		assert_int_equal(th_run(cp, NULL), 0);
	}
	umount2(mnt, MNT_DETACH);
	expect_failure(status, 1, c->f.err, "No space left on device");
	r = th_report(c->f.isr);
	assert_true(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	assert_true(th_count(r, "page_fault_user") > 10000);
	json_decref(r);
}

static void test_analyze_rejects_non_recording(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "analyze", c->f.err, NULL };
	char junk[600];
	FILE *f;

	snprintf(junk, sizeof(junk), "%s/junk.isr", c->f.dir);
	f = fopen(junk, "w");
	assert_non_null(f);
	fputs("this is not a recording, just some text long enough to fill a file header\n", f);
	fclose(f);
	argv[2] = junk;
	expect_failure(th_run(argv, c->f.err), 1, c->f.err, "not an inferscope recording");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unknown_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_pid_syntax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_duration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duration_too_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ringbuf_size_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_not_writable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_btf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_analyze_rejects_non_recording, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
