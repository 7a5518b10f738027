// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The findings of real recordings (real BPF, the stand-in libcuda, real
 * Python through ctypes and the C workloads): each workload plants one
 * bottleneck, and the JSON report's findings must name it — with its cost
 * within 20% where the plant has a time — and a healthy workload must get
 * no finding.
 */
#include <math.h>
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

#define PLANTED "tests/workloads/py_planted.py"

struct ctx {
	struct th_files f;
	json_t *report;
	pid_t spawned;
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

	th_reap(c->spawned);
	json_decref(c->report);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static bool have_python(void)
{
	return access("/usr/bin/python3", X_OK) == 0;
}

/* Records `python3 py_planted.py LIBCUDA mode` (with extra recorder
 * options) and keeps the report. */
static void record_planted(struct ctx *c, const char *mode, const char *opt)
{
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--cuda-lib", STANDIN_LIBCUDA, (char *)opt,
			 "--", "/usr/bin/python3", PLANTED, STANDIN_LIBCUDA, (char *)mode, NULL };

	if (!opt) {
		memmove(&argv[7], &argv[8], 6 * sizeof(*argv));
		argv[13] = NULL;
	}
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
}

static void print_findings(json_t *report)
{
	json_t *fs = json_object_get(report, "findings"), *f;
	size_t i;

	json_array_foreach(fs, i, f)
		print_message("  %s %.3f s: %s\n", json_string_value(json_object_get(f, "rule")),
			      json_real_value(json_object_get(f, "cost_s")),
			      json_string_value(json_object_get(f, "summary")));
}

static json_t *finding(json_t *report, const char *rule)
{
	json_t *fs = json_object_get(report, "findings"), *f;
	size_t i;

	json_array_foreach(fs, i, f)
		if (strcmp(json_string_value(json_object_get(f, "rule")), rule) == 0)
			return f;
	print_findings(report);
	fail_msg("no %s finding", rule);
	return NULL;
}

static void expect_cost(json_t *f, double planted, double tolerance)
{
	double cost = json_real_value(json_object_get(f, "cost_s"));

	print_message("%s: cost %.3f s, planted %.3f s\n", json_string_value(json_object_get(f, "rule")), cost,
		       planted);
	assert_true(fabs(cost - planted) <= tolerance * planted);
}

static void expect_in_summary(json_t *f, const char *needle)
{
	const char *s = json_string_value(json_object_get(f, "summary"));

	if (!strstr(s, needle))
		fail_msg("\"%s\" not in \"%s\"", needle, s);
}

/* A launcher that only waits for its (stand-in) GPU: no finding. */
static void test_healthy_no_finding(void **state)
{
	struct ctx *c = *state;

	if (!have_python())
		skip();
	record_planted(c, "healthy", NULL);
	if (json_array_size(json_object_get(c->report, "findings"))) {
		print_findings(c->report);
		fail_msg("findings on a healthy workload");
	}
}

/* 5 x 200 ms of Python after a synchronization, before the next launch. */
static void test_sync_stall(void **state)
{
	struct ctx *c = *state;
	json_t *f;

	if (!have_python())
		skip();
	record_planted(c, "sync_stall", NULL);
	f = finding(c->report, "sync_stall");
	expect_cost(f, 1.0, 0.2);
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "synchronizations"), 5);
}

/* The launcher waits for the GIL the hog holds; the hog is named. */
static void test_gil_contention(void **state)
{
	struct ctx *c = *state;
	json_t *f, *holders;

	if (!have_python())
		skip();
	record_planted(c, "gil", "--gil");
	f = finding(c->report, "gil_contention");
	expect_in_summary(f, "`launcher` waited");
	holders = json_object_get(json_object_get(f, "evidence"), "holders");
	assert_true(json_array_size(holders) >= 1);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(holders, 0), "name")), "`hog`"));
}

/* Copies into a bytearray are pageable; into cuMemHostAlloc memory, or a
 * bytearray registered with cuMemHostRegister_v2, not. */
static void test_pageable_copies_without_gpu(void **state)
{
	struct ctx *c = *state;
	json_t *f;

	if (!have_python())
		skip();
	record_planted(c, "pageable", NULL);
	f = finding(c->report, "pageable_memcpy");
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "copies"), 100);
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "device_to_host"), 100);
}

/* The line of path that holds needle: "py_planted.py:LINE" into out. */
static void script_line(const char *path, const char *needle, char *out, size_t len)
{
	char *text = th_slurp(path), *at;
	int line = 1;

	assert_non_null(text);
	at = strstr(text, needle);
	assert_non_null(at);
	for (char *p = text; p < at; p++)
		line += *p == '\n';
	snprintf(out, len, "%s:%d", strrchr(path, '/') + 1, line);
	free(text);
}

/* 240 MiB allocated and never freed: held at exit, with the Python line
 * that allocated it (a stack captured at the allocation). */
static void test_memory_held_at_exit(void **state)
{
	struct ctx *c = *state;
	json_t *f, *procs, *p, *site;
	const char *named;
	char line[64];
	size_t i;
	bool seen = false;

	if (!have_python())
		skip();
	record_planted(c, "held", NULL);
	f = finding(c->report, "device_memory_leak");
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "held_at_exit_bytes"), 240LL << 20);
	procs = json_object_get(json_object_get(c->report, "metrics"), "processes");
	json_array_foreach(procs, i, p)
		if (th_num(p, "device_memory_held_at_exit_bytes") == (double)(240LL << 20))
			seen = true;
	assert_true(seen);
	script_line(PLANTED, "cuda.cuMemAlloc_v2(ctypes.byref(ptr), 240 << 20)", line, sizeof(line));
	site = json_array_get(json_object_get(json_object_get(f, "evidence"), "sites"), 0);
	assert_int_equal((long long)th_num(site, "bytes"), 240LL << 20);
	named = json_string_value(json_object_get(site, "site"));
	if (!named || !strstr(named, line) || !strstr(named, "held"))
		fail_msg("the allocation's site is %s, not %s held()", named ? named : "unknown", line);
	expect_in_summary(f, line);
}

/* Page faults: the C workload's "toucher" writes 60,000 fresh pages. */
static void test_page_fault_storm(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", WORKLOAD, "anon", "60000", NULL };
	json_t *f;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	f = finding(c->report, "page_fault_storm");
	expect_in_summary(f, "`toucher`");
	assert_true(th_num(json_object_get(f, "evidence"), "minor_faults") >= 60000);
}

/* A process not traced spins on the CPU the workload's runner uses: the
 * runner waits for that CPU, and the finding names the process. */
static void test_cpu_contention_names_the_competitor(void **state)
{
	struct ctx *c = *state;
	char *hog[] = { "taskset", "-c", "0", WORKLOAD, "hog", "4", NULL };
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "taskset", "-c", "0", WORKLOAD, "run", "2",
			 NULL };
	json_t *f, *who;
	bool named = false;
	size_t i;

	if (access("/usr/bin/taskset", X_OK))
		skip();
	c->spawned = th_spawn(hog, NULL, NULL);
	usleep(200000);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	f = finding(c->report, "cpu_contention");
	expect_in_summary(f, "`runner`");
	/* the competitor among the tasks that had the CPU (a loaded machine
	 * has others too) */
	json_array_foreach(json_object_get(json_object_get(f, "evidence"), "ran_instead"), i, who)
		named |= (pid_t)th_num(who, "pid") == c->spawned;
	if (!named)
		print_findings(c->report);
	assert_true(named);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_healthy_no_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gil_contention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pageable_copies_without_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_held_at_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_page_fault_storm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_contention_names_the_competitor, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
