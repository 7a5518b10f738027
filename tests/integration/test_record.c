// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer, for real: BPF loaded and attached, as root, against
 * workloads with planted behaviour; checked through the JSON report.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"

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

static void assert_within(double v, double lo, double hi, const char *what)
{
	if (v < lo || v > hi) {
		print_error("%s = %.6f, expected within [%.6f, %.6f]\n", what, v, lo, hi);
		fail();
	}
}

/* A thread that sleeps 5 x 100 ms is off-CPU 0.5 s (+-15%), and the
 * recording stops by itself when the launched command exits. */
static void test_sleep_is_off_cpu(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-d", "30", "--", WORKLOAD, "sleep", NULL };
	double t0 = th_now();
	json_t *r, *t;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	assert_true(th_now() - t0 < 10); /* target exit ended it, not -d 30 */
	r = th_report(c->f.isr);
	t = th_thread(r, "sleeper");
	assert_non_null(t);
	assert_within(th_num(t, "off_cpu_s"), 0.425, 0.575, "sleeper off_cpu_s");
	assert_within(th_num(t, "on_cpu_s"), 0, 0.05, "sleeper on_cpu_s");
	assert_within(th_num(t, "runqueue_wait_s"), 0, 0.05, "sleeper runqueue_wait_s");
	assert_true(json_is_true(json_object_get(t, "exited")));
	assert_true(th_count(r, "sched_switch") >= 5);
	assert_true(th_count(r, "sched_wakeup") >= 5);
	assert_int_equal(th_count(r, "sched_process_exec"), 1);
	assert_true(json_is_false(json_object_get(json_object_get(r, "recording"), "truncated")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "recording"), "stop_reason")),
			    "targets_exited");
	assert_int_equal(th_num(json_object_get(r, "recording"), "drops_total"), 0);
	json_decref(r);
}

/* Two threads pinned to one CPU spinning for 1 s each: each is on the CPU
 * or waiting for it its whole life (1 s), runs at most three quarters of it
 * (the other takes its share; a loaded machine's other tasks more), and
 * waits for the CPU at least a quarter. */
static void test_cpu_hogs_wait_in_runqueue(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", WORKLOAD, "hog", "1", NULL };
	const char *names[] = { "hog1", "hog2" };
	json_t *r, *t;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	r = th_report(c->f.isr);
	for (int i = 0; i < 2; i++) {
		t = th_thread(r, names[i]);
		assert_non_null(t);
		assert_within(th_num(t, "on_cpu_s") + th_num(t, "runqueue_wait_s"), 0.95, 1.25, "hog lifetime");
		assert_within(th_num(t, "runqueue_wait_s"), 0.25, 1.0, "hog runqueue_wait_s");
		assert_within(th_num(t, "on_cpu_s"), 0.001, 0.75, "hog on_cpu_s");
		assert_true(th_num(t, "involuntary_switches") >= 1);
	}
	json_decref(r);
}

/* Writing N fresh anonymous pages costs at least N minor faults (every
 * fault traced: --budget off; the budget's sampling of faults is
 * test_faults.c's). */
static void test_minor_faults(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "--budget", "off", "-o", c->f.isr, "--", WORKLOAD, "anon", "3000",
			 NULL };
	json_t *r, *t;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	r = th_report(c->f.isr);
	t = th_thread(r, "toucher");
	assert_non_null(t);
	assert_true(th_num(t, "minor_faults") >= 3000);
	assert_within(th_num(t, "minor_faults"), 3000, 3100, "toucher minor_faults");
	assert_int_equal(th_num(t, "major_faults"), 0);
	assert_true(th_num(t, "fault_s") > 0);
	json_decref(r);
}

/* Reading a file mapping after its pages left the page cache takes major
 * faults, one per page with readahead off. */
static void test_major_faults(void **state)
{
	struct ctx *c = *state;
	char file[512];
	json_t *r, *t;

	snprintf(file, sizeof(file), "%s/data", c->f.dir);
	{
		char *argv[] = { TRACER, "record", "-q", "--budget", "off", "-o", c->f.isr, "--", WORKLOAD, "filemap",
				 file, "400", NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	r = th_report(c->f.isr);
	t = th_thread(r, "reader");
	assert_non_null(t);
	assert_within(th_num(t, "major_faults"), 200, 400, "reader major_faults");
	assert_true(th_num(t, "fault_s") > 0);
	json_decref(r);
}

/* -p on a process that already runs: its existing main thread and the
 * threads it creates afterwards are both traced. */
static void test_attach_to_running_process(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { WORKLOAD, "--wait-signal", "sleep", NULL };
	char ready[512], pidstr[32], buf[16];
	int out_fd, status;
	pid_t wpid, tpid;
	json_t *r, *t;

	wpid = th_spawn(wl, &out_fd, NULL);
	assert_true(read(out_fd, buf, 6) == 6); /* "ready\n": it is running */
	close(out_fd);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready, NULL };

		tpid = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	kill(wpid, SIGUSR1);
	assert_int_equal(waitpid(wpid, &status, 0), wpid);
	assert_int_equal(waitpid(tpid, &status, 0), tpid);
	th_expect_exit(status, 0, c->f.err);

	r = th_report(c->f.isr);
	t = th_thread(r, "sleeper");
	assert_non_null(t);
	assert_within(th_num(t, "off_cpu_s"), 0.425, 0.575, "sleeper off_cpu_s");
	t = th_thread(r, "workload");
	assert_non_null(t);
	assert_int_equal((pid_t)th_num(t, "tid"), wpid);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(r, "recording"), "pids"), 0)),
			 wpid);
	json_decref(r);
}

/* -p on a process that sleeps all through the recording: no probe fires
 * on any of its threads, and the recorder's cost line and the report's
 * say so, instead of charging the sampler's ticks to "tid 0 of pid 0" (an
 * empty slot) and reporting "thread 0". */
static void test_attach_to_sleeping_process_charges_nobody(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { "/bin/sleep", "30", NULL };
	char pidstr[32], *err;
	int status;
	pid_t wpid, tpid;

	wpid = th_spawn(wl, NULL, NULL);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-o", c->f.isr, "-p", pidstr, "-d", "1", NULL };

		tpid = th_spawn(argv, NULL, c->f.err);
	}
	assert_int_equal(waitpid(tpid, &status, 0), tpid);
	kill(wpid, SIGKILL);
	assert_int_equal(waitpid(wpid, NULL, 0), wpid);
	th_expect_exit(status, 0, c->f.err);
	err = th_slurp(c->f.err);
	assert_non_null(err);
	if (!strstr(err, "tracing charged no thread of the target") || strstr(err, "tid 0 of pid 0"))
		fail_msg("the cost line of an idle target: %s", err);
	free(err);
	{
		char md[600], *text;
		char *argv[] = { TRACER, "analyze", c->f.isr, NULL };

		snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
		th_expect_exit(th_run_to(argv, md, c->f.err), 0, c->f.err);
		text = th_slurp(md);
		assert_non_null(text);
		if (!strstr(text, "**Tracing cost (estimated):** none charged: no probe fired on a thread of the target"))
			fail_msg("the report's cost line of an idle target:\n%s", text);
		free(text);
	}
}

/* Processes that targets fork are followed. */
static void test_children_are_followed(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "--budget", "off", "-o", c->f.isr, "--", WORKLOAD, "spawn", "1500",
			 NULL };
	json_t *r, *t, *pids;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	r = th_report(c->f.isr);
	t = th_thread(r, "toucher");
	assert_non_null(t);
	assert_true(th_num(t, "minor_faults") >= 1500);
	pids = json_object_get(json_object_get(r, "recording"), "pids");
	assert_true(json_array_size(pids) >= 2);
	assert_true(th_count(r, "sched_process_fork") >= 2);
	json_decref(r);
}

/* A command that crashes: the tracer says which signal killed it, and the
 * recording holds what it did until then (its faults); one the tracer
 * stopped itself (-d) is not reported as killed. */
static void test_command_killed_by_signal(void **state)
{
	struct ctx *c = *state;
	char *crash[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/sh", "-c", "kill -SEGV $$", NULL };
	char *stopped[] = { TRACER, "record", "-q", "-d", "1", "-o", c->f.isr, "--", "/bin/sleep", "30", NULL };
	char *err;
	json_t *r;

	th_expect_exit(th_run(crash, c->f.err), 0, c->f.err);
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "the command was killed by signal 11 (Segmentation fault)"));
	free(err);
	r = th_report(c->f.isr);
	assert_true(th_count(r, "sched_process_exit") >= 1);
	json_decref(r);
	th_expect_exit(th_run(stopped, c->f.err), 0, c->f.err);
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_null(strstr(err, "killed by signal"));
	free(err);
}

/* A recorder killed with SIGKILL leaves a file that reads back up to its
 * last complete chunk, and says it was cut short. */
static void test_sigkilled_recorder_leaves_readable_file(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { WORKLOAD, "run", "20", NULL };
	char ready[512], pidstr[32];
	pid_t wpid, tpid;
	int status;
	json_t *r, *t;

	wpid = th_spawn(wl, NULL, NULL);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready, NULL };

		tpid = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	sleep(3);
	kill(tpid, SIGKILL);
	waitpid(tpid, &status, 0);
	kill(wpid, SIGKILL);
	waitpid(wpid, &status, 0);

	r = th_report(c->f.isr);
	assert_true(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	t = th_thread(r, "runner");
	assert_non_null(t);
	/* About 66 sleep/spin rounds a second: at least the first 1.5 s of
	 * them were in flushed chunks. */
	assert_true(th_num(t, "voluntary_switches") >= 90);
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sleep_is_off_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_hogs_wait_in_runqueue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_minor_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_major_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_to_running_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_to_sleeping_process_charges_nobody, setup, teardown),
		cmocka_unit_test_setup_teardown(test_children_are_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkilled_recorder_leaves_readable_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_killed_by_signal, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
