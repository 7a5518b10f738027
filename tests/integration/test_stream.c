// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The release binary's peak memory while it analyzes files made to exhaust
 * it (issue 19: 40 chunks of 64 MiB each from 230 KB, one process listing
 * 200,000 threads) and a recording of 2 million events: each stays far
 * below a few hundred MB. Files from build/tests/tools/synth_rec; the
 * figures of tests/bench/analysis.sh come from the same tool.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "harness.h"

#define RELEASE "build/inferscope-bpf"
#define SYNTH_REC "build/tests/tools/synth_rec"
#define PEAK_RSS "build/tests/tools/peak_rss"

struct ctx {
	struct th_files f;
	char json[600], rss[600];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	snprintf(c->json, sizeof(c->json), "%s.json", c->f.isr);
	snprintf(c->rss, sizeof(c->rss), "%s.rss", c->f.isr);
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

/* synth_rec with one option and its value writes the test's recording. */
static void synth(struct ctx *c, const char *opt, const char *value)
{
	char *argv[] = { SYNTH_REC, (char *)opt, (char *)value, c->f.isr, NULL };

	th_expect_exit(th_run_to(argv, "/dev/null", c->f.err), 0, c->f.err);
}

/* Analyzes the recording with the release binary: its peak RSS in MiB. */
static long analyze_rss_mib(struct ctx *c)
{
	char *argv[] = { PEAK_RSS, RELEASE, "analyze", c->f.isr, "--format", "json", "-o", c->json, NULL };
	char *out;
	long kib;
	double s;

	th_expect_exit(th_run_to(argv, c->rss, c->f.err), 0, c->f.err);
	out = th_slurp(c->rss);
	assert_non_null(out);
	assert_int_equal(sscanf(out, "%ld %lf", &kib, &s), 2);
	free(out);
	print_message("%s: peak RSS %ld MiB, %.1f s\n", c->f.isr, kib / 1024, s);
	return kib / 1024;
}

static json_t *analysis_of(struct ctx *c)
{
	json_error_t jerr;
	json_t *j = json_load_file(c->json, 0, &jerr);

	if (!j)
		fail_msg("%s: %s", c->json, jerr.text);
	return j;
}

static void test_decompression_bomb(void **state)
{
	struct ctx *c = *state;
	struct stat st;
	json_t *j;

	synth(c, "--bomb-chunks", "40");
	assert_int_equal(stat(c->f.isr, &st), 0);
	assert_true(st.st_size < 512 * 1024);	/* 2.5 GiB of events */
	assert_true(analyze_rss_mib(c) < 200);
	j = analysis_of(c);
	assert_int_equal(th_count(j, "sched_wakeup"), 40LL * ((64 << 20) / 40));
	json_decref(j);
}

static void test_thread_list(void **state)
{
	struct ctx *c = *state;
	json_t *j, *notes;

	synth(c, "--bomb-threads", "200000");
	assert_true(analyze_rss_mib(c) < 300);
	j = analysis_of(c);
	notes = json_object_get(json_object_get(json_object_get(j, "recording"), "analysis"), "notes");
	assert_int_equal(json_array_size(notes), 1);
	assert_non_null(strstr(json_string_value(json_array_get(notes, 0)), "listed threads beyond"));
	json_decref(j);
}

static void test_two_million_events(void **state)
{
	struct ctx *c = *state;
	json_t *j;

	synth(c, "-n", "2000000");
	assert_true(analyze_rss_mib(c) < 64);
	j = analysis_of(c);
	assert_true(th_count(j, "cuLaunchKernel") > 400000);
	assert_int_equal(th_num(json_object_get(json_object_get(j, "recording"), "analysis"), "out_of_order_events"),
			 0);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_decompression_bomb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_million_events, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
