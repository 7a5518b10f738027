// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python GIL tracing, for real, on a CPython interpreter running
 * tests/workloads/gil_contend.py, whose "waiter" thread waits a planted
 * N x switch-interval for the GIL that its "spinner" holds: by default
 * (the GIL waits the scheduler sees: the wait found within 20% and its
 * holder named, with the Python line it ran), and with --gil (uprobes on
 * PyEval_RestoreThread and PyEval_SaveThread: the exact wait). Debian's
 * /usr/bin/python3 (libpython linked into the executable) is launched
 * with `--`; an interpreter on Debian's shared libpython3.X.so
 * (tests/workloads/pyembed.c) is attached with -p. A workload whose
 * threads do not contend has no GIL finding; a GIL layout that does not
 * match is said and traces nothing.
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

/* The plan the workload printed: {"iterations": N, "planted_wait_s": S}
 * (S: the waiter's wait as it measured it). */
static void read_plan(const char *text, long long *n, double *planted)
{
	json_error_t jerr;
	const char *brace = text ? strchr(text, '{') : NULL;
	json_t *plan = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;

	assert_non_null(plan);
	*n = json_integer_value(json_object_get(plan, "iterations"));
	*planted = json_number_value(json_object_get(plan, "planted_wait_s"));
	json_decref(plan);
	assert_true(*n > 0 && *planted >= 0);
}

static json_t *gil_finding(json_t *r)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(r, "findings"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "rule")), "gil_contention") == 0)
			return f;
	return NULL;
}

/* The GIL waits of the (one) interpreter were traced. */
static void expect_gil_traced(json_t *r)
{
	json_t *gils = json_object_get(json_object_get(r, "python"), "gil");

	assert_int_equal(json_array_size(gils), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(gils, 0), "gil_waits")), "traced");
}

/* By default: the waiter's GIL wait within 20% of the planted time (with
 * its waits for a CPU, on a busy machine), as a gil_contention finding
 * naming the spinner as the holder and the line of gil_contend.py it ran;
 * the waits come from the scheduler, nothing lost. */
static void check_default_report(const char *isr, double planted)
{
	json_t *r = th_report(isr), *f, *ev, *holder;
	const char *site;
	double cost, rq;

	expect_gil_traced(r);
	f = gil_finding(r);
	if (!f)
		fail_msg("no gil_contention finding");
	ev = json_object_get(f, "evidence");
	cost = json_real_value(json_object_get(f, "cost_s"));
	holder = json_array_get(json_object_get(ev, "holders"), 0);
	site = json_string_value(json_object_get(ev, "holder_site"));
	print_message("%s\n", json_string_value(json_object_get(f, "summary")));
	assert_non_null(strstr(json_string_value(json_object_get(f, "summary")), "`waiter` waited"));
	/* on a busy machine part of each wait is the waiter's wait for a CPU
	 * once the GIL was dropped for it: cpu_contention's, not this one's */
	rq = th_num(th_thread(r, "waiter"), "runqueue_wait_s");
	if (cost > 1.2 * planted || cost + rq < 0.8 * planted)
		fail_msg("waiter's GIL wait %.3f s (and %.3f s waiting for a CPU), planted %.3f s (+-20%%)", cost, rq,
			 planted);
	assert_string_equal(json_string_value(json_object_get(ev, "holder_source")), "gil_waits");
	assert_non_null(holder);
	assert_non_null(strstr(json_string_value(json_object_get(holder, "name")), "`spinner`"));
	assert_true(th_num(holder, "seconds") >= 0.8 * cost);
	assert_non_null(site);
	assert_non_null(strstr(site, "gil_contend.py:"));
	assert_non_null(strstr(site, " spin"));
	assert_true(th_count(r, "gil_wait") > 0);
	assert_int_equal(th_count(r, "PyEval_RestoreThread"), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(r, "recording"),
									       "drops"), "python")), 0);
	json_decref(r);
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

/* Records `python3 gil_contend.py [--idle]` with extra options (NULL:
 * none): the planted wait. */
static double record_launched(struct ctx *c, const char *py, const char *opt, bool idle)
{
	char *argv[12] = { TRACER, "record", "-q", "-o", c->f.isr };
	long long n;
	double planted;
	char *out;
	int k = 5;

	if (opt)
		argv[k++] = (char *)opt;
	argv[k++] = "--";
	argv[k++] = (char *)py;
	argv[k++] = GIL_WORKLOAD;
	if (idle)
		argv[k++] = "--idle";
	argv[k] = NULL;
	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	out = th_slurp(c->out);
	read_plan(out, &n, &planted);
	free(out);
	return planted;
}

/* Debian's python3, by default: the scheduler's GIL waits. */
static void test_default_static_python(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(access("/usr/bin/python3", X_OK), 0); /* scripts/deps.sh installs it */
	check_default_report(c->f.isr, record_launched(c, "/usr/bin/python3", NULL, false));
}

/* Threads that do not contend: the GIL was watched, nothing found. */
static void test_no_contention_no_finding(void **state)
{
	struct ctx *c = *state;
	json_t *r, *nj;
	size_t i;

	record_launched(c, "/usr/bin/python3", NULL, true);
	r = th_report(c->f.isr);
	expect_gil_traced(r);
	if (gil_finding(r))
		fail_msg("a gil_contention finding without contention: %s",
			 json_string_value(json_object_get(gil_finding(r), "summary")));
	json_array_foreach(json_object_get(r, "not_judged"), i, nj)
		assert_string_not_equal(json_string_value(json_object_get(nj, "rule")), "gil_contention");
	json_decref(r);
}

/* A GIL 8 bytes off: caught at attach, said on stderr and in the report,
 * no GIL wait recorded, and gil_contention not judged. */
static void test_wrong_gil_layout_detected(void **state)
{
	struct ctx *c = *state;
	json_t *r, *g, *nj;
	bool not_judged = false;
	char *err;
	size_t i;

	setenv("INFERSCOPE_TEST_GIL_SKEW", "8", 1);
	record_launched(c, "/usr/bin/python3", NULL, false);
	unsetenv("INFERSCOPE_TEST_GIL_SKEW");
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "its GIL waits are not traced"));
	free(err);
	r = th_report(c->f.isr);
	g = json_array_get(json_object_get(json_object_get(r, "python"), "gil"), 0);
	assert_string_equal(json_string_value(json_object_get(g, "gil_waits")), "layout_mismatch");
	assert_int_equal(th_count(r, "gil_wait"), 0);
	assert_null(gil_finding(r));
	json_array_foreach(json_object_get(r, "not_judged"), i, nj)
		not_judged |= strcmp(json_string_value(json_object_get(nj, "rule")), "gil_contention") == 0;
	assert_true(not_judged);
	json_decref(r);
}

/* More interpreters, when the host has them: INFERSCOPE_TEST_PYTHONS lists
 * executables (3.10-3.13, any build), each checked by default as Debian's
 * python3 is. Unset: only Debian's builds are tested (CI). */
static void test_more_interpreters(void **state)
{
	struct ctx *c = *state;
	const char *list = getenv("INFERSCOPE_TEST_PYTHONS");
	char *copy, *py, *save = NULL;
	int tested = 0;

	if (!list || !*list) {
		print_message("INFERSCOPE_TEST_PYTHONS not set: no other interpreter to test\n");
		return;
	}
	copy = strdup(list);
	assert_non_null(copy);
	for (py = strtok_r(copy, " ", &save); py; py = strtok_r(NULL, " ", &save)) {
		print_message("%s\n", py);
		check_default_report(c->f.isr, record_launched(c, py, NULL, false));
		tested++;
	}
	free(copy);
	assert_true(tested > 0);
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

/* pyembed on the shared libpython, attached with -p once it maps it; gil:
 * with --gil. */
static void attached_shared_libpython(struct ctx *c, bool gil)
{
	char go[600], pid_s[16], out_path[600];
	char *wargv[] = { PYEMBED, GIL_WORKLOAD, go, NULL };
	char *targv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pid_s, "--ready-file", go, NULL, NULL };
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
	if (gil)
		targv[9] = "--gil";
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
	if (gil)
		check_report(c->f.isr, n, planted);
	else
		check_default_report(c->f.isr, planted);
}

static void test_attached_shared_libpython(void **state)
{
	attached_shared_libpython(*state, true);
}

static void test_default_attached_shared_libpython(void **state)
{
	attached_shared_libpython(*state, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_default_static_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_attached_shared_libpython, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_contention_no_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_gil_layout_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_interpreters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launched_static_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached_shared_libpython, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
