// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * KTAP output (user/bench/ktap.c) read back by the checker a kernel-CI harness
 * stands for (ktap_check.h): version, plan, numbering, ok / not ok / SKIP,
 * diagnostics, and the totals line; and the checker refuses what a
 * harness would misread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ktap.h"
#include "ktap_check.h"

/* What the writer printed for a plan of `plan` and the steps of fill. */
static char *written(unsigned int plan, void (*fill)(struct ktap *), int *end_rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct ktap k;

	assert_non_null(f);
	ktap__begin(&k, f, plan);
	fill(&k);
	*end_rc = ktap__end(&k);
	fclose(f);
	return text;
}

static void three_tests(struct ktap *k)
{
	ktap__diag(k, "uprobe_push: cost %d ns per hit\nsecond line", 5400);
	ktap__result(k, true, "uprobe_push");
	ktap__result(k, false, "delivery#threads");
	ktap__skip(k, "uprobe_multi", "no uprobe_multi links (Linux %d.%d+)", 6, 6);
}

static void test_writer_is_well_formed(void **state)
{
	struct ktap_summary s;
	int rc;
	char *text = written(3, three_tests, &rc);

	(void)state;
	assert_int_equal(ktap_check(text, &s), 0);
	assert_int_equal(s.plan, 3);
	assert_int_equal(s.tests, 3);
	assert_int_equal(s.ok, 1);
	assert_int_equal(s.not_ok, 1);
	assert_int_equal(s.skip, 1);
	/* A test failed: the run fails. */
	assert_int_equal(rc, 1);
	assert_non_null(strstr(text, "KTAP version 1\n1..3\n"));
	/* Every line of a diagnostic is one. */
	assert_non_null(strstr(text, "# uprobe_push: cost 5400 ns per hit\n# second line\n"));
	/* '#' would start a directive: the name loses it. */
	assert_non_null(strstr(text, "not ok 2 delivery_threads\n"));
	assert_non_null(strstr(text, "ok 3 uprobe_multi # SKIP no uprobe_multi links (Linux 6.6+)\n"));
	assert_non_null(strstr(text, "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0\n"));
	assert_int_equal(ktap_result_of(text, "uprobe_push"), 1);
	assert_int_equal(ktap_result_of(text, "delivery_threads"), 0);
	assert_int_equal(ktap_result_of(text, "uprobe_multi"), 1);
	assert_int_equal(ktap_result_of(text, "uprobe"), -1);
	free(text);
}

static void all_pass(struct ktap *k)
{
	ktap__result(k, true, "a");
	ktap__skip(k, "b", "not here");
}

static void one_missing(struct ktap *k)
{
	ktap__result(k, true, "a");
}

static void test_writer_exit_status(void **state)
{
	struct ktap_summary s;
	int rc;
	char *text = written(2, all_pass, &rc);

	(void)state;
	assert_int_equal(rc, 0);
	assert_int_equal(ktap_check(text, &s), 0);
	free(text);

	/* A planned test that printed no line is an error, and the checker
	 * sees the plan broken. */
	text = written(2, one_missing, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(text, "error:1"));
	assert_int_equal(ktap_check(text, &s), -1);
	assert_string_equal(s.why, "the number of test lines differs from the plan");
	free(text);
}

static void test_writer_without_stream_prints_nothing(void **state)
{
	struct ktap k;

	(void)state;
	ktap__begin(&k, NULL, 2);
	ktap__diag(&k, "nothing");
	ktap__result(&k, true, "a");
	ktap__result(&k, false, "b");
	assert_int_equal(k.pass, 1);
	assert_int_equal(k.fail, 1);
	assert_int_equal(ktap__end(&k), 1);
}

static void expect_refused(const char *text, int line, const char *why)
{
	struct ktap_summary s;

	assert_int_equal(ktap_check(text, &s), -1);
	assert_int_equal(s.line, line);
	assert_string_equal(s.why, why);
}

static void test_checker_refuses_malformed(void **state)
{
	(void)state;
	expect_refused("TAP version 13\n1..1\nok 1 a\n", 1, "first line is not \"KTAP version 1\"");
	expect_refused("KTAP version 1\nok 1 a\n", 2, "second line is not the plan 1..N");
	expect_refused("KTAP version 1\n1..x\n", 2, "the plan's count is not a number");
	expect_refused("KTAP version 1\n1..2\nok 1 a\nok 3 b\n", 4, "test number out of sequence");
	expect_refused("KTAP version 1\n1..2\nok 2 a\nok 1 b\n", 3, "test number out of sequence");
	expect_refused("KTAP version 1\n1..1\nok 1\n", 3, "test line without a name");
	expect_refused("KTAP version 1\n1..1\nREGRESSION x\nok 1 a\n", 3, "neither a test line nor a diagnostic");
	expect_refused("KTAP version 1\n1..2\nok 1 a\n", 3, "the number of test lines differs from the plan");
	expect_refused("KTAP version 1\n", 1, "no plan");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_is_well_formed),
		cmocka_unit_test(test_writer_exit_status),
		cmocka_unit_test(test_writer_without_stream_prints_nothing),
		cmocka_unit_test(test_checker_refuses_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
