// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python GIL tracing, for real: uprobes on PyEval_RestoreThread and
 * PyEval_SaveThread of a CPython interpreter running
 * tests/workloads/gil_contend.py, whose "waiter" thread waits a planted
 * N x switch-interval for the GIL. Debian's /usr/bin/python3 (libpython
 * linked into the executable) is launched with `--`; an interpreter on
 * Debian's shared libpython3.X.so (tests/workloads/pyembed.c) is attached
 * with -p.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "proc.h"

#define PYEMBED "build/tests/workloads/pyembed"

#define GIL_WORKLOAD "tests/workloads/gil_contend.py"

struct ctx {
	struct th_files f;
	char out[512];
	pid_t spawned;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	snprintf(c->out, sizeof(c->out), "%s/workload.out", c->f.dir);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	th_reap(c->spawned);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

/* The plan the workload printed: {"iterations": N, "planted_wait_s": S}. */
static void read_plan(const char *text, long long *n, double *planted)
{
	json_error_t jerr;
	const char *brace = text ? strchr(text, '{') : NULL;
	json_t *plan = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;

	assert_non_null(plan);
	*n = json_integer_value(json_object_get(plan, "iterations"));
	*planted = json_number_value(json_object_get(plan, "planted_wait_s"));
	json_decref(plan);
	assert_true(*n > 0 && *planted > 0);
}

/* What a user checks: the waiter waited the planted time for the GIL, took
 * it at least N times, the spinner barely waited, and event_counts names
 * the probed functions. */
static void check_report(const char *isr, long long n, double planted)
{
	json_t *r = th_report(isr), *waiter, *spinner;
	double wait;

	waiter = th_thread(r, "waiter");
	spinner = th_thread(r, "spinner");
	assert_non_null(waiter);
	assert_non_null(spinner);
	wait = th_num(waiter, "gil_wait_s");
	print_message("waiter: gil_wait_s %.3f (planted %.3f), acquisitions %lld; spinner: gil_wait_s %.4f\n", wait,
		      planted, (long long)th_num(waiter, "gil_acquisitions"), th_num(spinner, "gil_wait_s"));
	if (wait < 0.8 * planted || wait > 1.2 * planted) {
		print_error("waiter gil_wait_s %.3f, planted %.3f (+-20%%)\n", wait, planted);
		fail();
	}
	assert_true(th_num(waiter, "gil_acquisitions") >= n);
	assert_true(th_num(spinner, "gil_wait_s") < 0.1 * planted);
	assert_true(th_count(r, "PyEval_RestoreThread") >= n);
	assert_true(th_count(r, "PyEval_SaveThread") >= n);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(r, "recording"),
									       "drops"), "python")), 0);
	json_decref(r);
}

/* Debian's python3: libpython linked into the executable, launched. */
static void test_launched_static_python(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "--gil", "-o", c->f.isr, "--", "/usr/bin/python3", GIL_WORKLOAD,
			 NULL };
	long long n;
	double planted;
	char *out;

	assert_int_equal(access("/usr/bin/python3", X_OK), 0); /* scripts/deps.sh installs it */
	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	out = th_slurp(c->out);
	read_plan(out, &n, &planted);
	free(out);
	check_report(c->f.isr, n, planted);
}

/* True once pid maps a libpython file. */
static void test_attached_shared_libpython(void **state)
{
	struct ctx *c = *state;
	char go[600], pid_s[16], out_path[600];
	char *wargv[] = { PYEMBED, GIL_WORKLOAD, go, NULL };
	char *targv[] = { TRACER, "record", "-q", "--gil", "-o", c->f.isr, "-p", pid_s, "--ready-file", go, NULL };
	long long n;
	double planted;
	double deadline;
	char *out;
	int fd;

	snprintf(go, sizeof(go), "%s/go", c->f.dir);
	snprintf(out_path, sizeof(out_path), "%s/py.out", c->f.dir);
	c->spawned = th_spawn(wargv, &fd, NULL);
	assert_true(c->spawned > 0);
	deadline = th_now() + 5;
	while (!proc_maps__has((__u32)c->spawned, "/libpython3.") && th_now() < deadline)
		usleep(10000);
	assert_true(proc_maps__has((__u32)c->spawned, "/libpython3."));
	snprintf(pid_s, sizeof(pid_s), "%d", (int)c->spawned);
	th_expect_exit(th_run(targv, c->f.err), 0, c->f.err);
	{
		char buf[4096];
		ssize_t k, len = 0;

		while (len < (ssize_t)sizeof(buf) - 1 && (k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
			len += k;
		buf[len] = 0;
		close(fd);
		out = strdup(buf);
	}
	read_plan(out, &n, &planted);
	free(out);
	check_report(c->f.isr, n, planted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_launched_static_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached_shared_libpython, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
