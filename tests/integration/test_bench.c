// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf bench` as kernel CI runs it: a short run writes its JSON
 * results, and --check passes or fails on the thresholds it is given.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int run_bench(const char *dir, const char *thresholds, const char *json, const char *err)
{
	char *argv[] = { TRACER, "bench", "--only", "sched_switch", "--rounds", "1", "--seconds", "0.3",
			 "--tmpdir", (char *)dir, "-o", (char *)json, "--check", (char *)thresholds, NULL };

	return th_run(argv, err);
}

static void test_bench_gate(void **state)
{
	char dir[256], th[512], json[512], err[512];
	json_error_t jerr;
	json_t *doc, *r;
	int status;

	(void)state;
	th_tmpdir(dir, sizeof(dir));
	snprintf(th, sizeof(th), "%s/thresholds.json", dir);
	snprintf(json, sizeof(json), "%s/bench.json", dir);
	snprintf(err, sizeof(err), "%s/bench.err", dir);

	/* Generous limits: the gate passes, and the results are complete. */
	write_file(th, "{\"sched_switch.overhead_pct\": 1000, \"sched_switch.drops\": 0}\n");
	status = run_bench(dir, th, json, err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	doc = json_load_file(json, 0, &jerr);
	assert_non_null(doc);
	r = json_array_get(json_object_get(doc, "results"), 0);
	assert_string_equal(json_string_value(json_object_get(r, "name")), "sched_switch");
	assert_true(th_num(json_object_get(r, "untraced_ops_per_s"), "median") > 0);
	assert_true(th_num(json_object_get(r, "traced_ops_per_s"), "median") > 0);
	assert_true(th_num(json_object_get(r, "events_per_op"), "median") >= 2); /* 2 wakeups a round trip */
	json_decref(doc);

	/* An impossible limit: the gate fails with exit 1. */
	write_file(th, "{\"sched_switch.overhead_pct\": -1000}\n");
	status = run_bench(dir, th, json, err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);

	/* A threshold that names no metric is an error, not a pass. */
	write_file(th, "{\"sched_switch.no_such_metric\": 1}\n");
	status = run_bench(dir, th, json, err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 2);
	th_rmrf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_gate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
