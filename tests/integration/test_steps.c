// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Steps, for real: the training loop tests/workloads/steps.c, attached with
 * -p, annotated with NVTX through the stand-in libnvToolsExt.so.1 or not
 * annotated at all. Its shape is known: 20 steps of "forward" (4 ms spin,
 * 8 launches) and "backward" (3 ms spin) and a cuStreamSynchronize (the
 * stand-in blocks 5 ms); step 12 sleeps 80 ms more in its backward (more
 * than a machine shared with other work preempts a step).
 */
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

#define STEPS_WORKLOAD "build/tests/workloads/steps"
#define NSTEPS 20
#define SLOW 12

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

/* Records the workload in mode from its first step to its exit; the
 * report's "steps". */
static double forward_measured;	/* the workload's own mean forward time, seconds */

static json_t *record_steps(struct ctx *c, const char *mode, json_t **report)
{
	char go[600], ready[600], pidstr[16], nsteps[16], slow[16];
	char *wl[] = { STEPS_WORKLOAD, (char *)mode, nsteps, slow, go, NULL };
	char *rec[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready, NULL };
	pid_t w, t;
	int status, out_fd = -1;

	snprintf(go, sizeof(go), "%s/go", c->f.dir);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(nsteps, sizeof(nsteps), "%d", NSTEPS);
	snprintf(slow, sizeof(slow), "%d", SLOW);
	w = th_spawn(wl, &out_fd, NULL);
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	t = th_spawn(rec, NULL, c->f.err);
	if (!th_wait_file(ready, 30)) {
		th_reap(w);
		th_reap(t);
		fail_msg("the tracer did not attach");
	}
	{
		FILE *f = fopen(go, "w");

		assert_non_null(f);
		fclose(f);
	}
	assert_int_equal(waitpid(w, &status, 0), w);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	{
		char buf[128];
		ssize_t n = read(out_fd, buf, sizeof(buf) - 1);

		close(out_fd);
		assert_true(n > 0);
		buf[n] = 0;
		assert_int_equal(sscanf(buf, "forward_mean_s %lf", &forward_measured), 1);
	}
	assert_int_equal(waitpid(t, &status, 0), t);	/* it stops when its target exits */
	th_expect_exit(status, 0, c->f.err);
	*report = th_report(c->f.isr);
	return json_object_get(*report, "steps");
}

static json_t *range(json_t *steps, const char *name)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(steps, "nvtx_ranges"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	fail_msg("no NVTX range \"%s\"", name);
	return NULL;
}

/* The planted step is the slowest, and its extra time is the 80 ms sleep:
 * its thread's blocked time grew by that much (and the timer's slack). */
static void expect_planted(json_t *steps)
{
	json_t *slowest = json_array_get(json_object_get(steps, "slowest"), 0), *d;
	double extra;

	assert_non_null(slowest);
	assert_int_equal(json_integer_value(json_object_get(slowest, "index")), SLOW);
	assert_true(th_num(slowest, "ratio_to_median") > 2.0);
	d = json_array_get(json_object_get(slowest, "differences"), 0);
	assert_string_equal(json_string_value(json_object_get(d, "what")), "blocked");
	extra = th_num(d, "extra_s");
	if (extra < 0.078 || extra > 0.095)
		fail_msg("blocked grew by %.4f s in the planted step, expected 80 ms (78-95 ms)", extra);
	assert_non_null(strstr(json_string_value(json_object_get(slowest, "summary")), "step 12 took"));
}

static void test_nvtx_steps(void **state)
{
	struct ctx *c = *state;
	json_t *report, *steps = record_steps(c, "nvtx", &report), *fw, *bw, *ep, *mark;
	double fw_mean;

	assert_string_equal(json_string_value(json_object_get(steps, "source")), "nvtx");
	assert_string_equal(json_string_value(json_object_get(steps, "name")), "step");
	assert_int_equal(json_integer_value(json_object_get(steps, "count")), NSTEPS);
	assert_int_equal(json_array_size(json_object_get(steps, "steps")), NSTEPS);
	/* names, nesting (depth) and counts */
	assert_int_equal(th_num(range(steps, "step"), "count"), NSTEPS);
	assert_int_equal(th_num(range(steps, "step"), "depth"), 0);
	fw = range(steps, "forward");
	bw = range(steps, "backward");	/* nvtxRangePushEx */
	assert_int_equal(th_num(fw, "count"), NSTEPS);
	assert_int_equal(th_num(fw, "depth"), 1);
	assert_int_equal(th_num(bw, "count"), NSTEPS);
	assert_int_equal(th_num(bw, "depth"), 1);
	ep = range(steps, "epoch");	/* nvtxRangeStartA / nvtxRangeEnd */
	assert_string_equal(json_string_value(json_object_get(ep, "kind")), "start_end");
	assert_int_equal(th_num(ep, "count"), 1);
	mark = json_array_get(json_object_get(steps, "nvtx_marks"), 0);
	assert_string_equal(json_string_value(json_object_get(mark, "name")), "checkpoint");
	assert_int_equal(th_num(mark, "count"), 1);
	assert_int_equal(th_num(steps, "nvtx_unmatched"), 0);
	/* durations: forward spins 4 ms of wall time (plus 8 launches): never
	 * less, and never more than the workload's own clock, read just
	 * outside the push and the pop, says it took (a machine shared with
	 * other work preempts the spin past its end: 12.4 ms seen against a
	 * fixed 12 ms bound); the epoch holds every step */
	fw_mean = th_num(fw, "mean_s");
	if (fw_mean < 0.004 || fw_mean > forward_measured + 1e-6)
		fail_msg("forward took %.6f s on average, expected 4 ms up to the %.6f s the workload measured",
			 fw_mean, forward_measured);
	assert_true(th_num(bw, "max_s") >= 0.083);	/* the planted 3 + 80 ms */
	assert_true(th_num(ep, "total_s") >= th_num(range(steps, "step"), "total_s"));
	/* every step: 8 launches */
	for (size_t i = 0; i < NSTEPS; i++)
		assert_int_equal(th_num(json_array_get(json_object_get(steps, "steps"), i), "launches"), 8);
	expect_planted(steps);
	json_decref(report);
}

static void test_inferred_steps(void **state)
{
	struct ctx *c = *state;
	json_t *report, *steps = record_steps(c, "plain", &report);
	double med;

	assert_string_equal(json_string_value(json_object_get(steps, "source")), "inferred");
	assert_string_equal(json_string_value(json_object_get(steps, "name")), "cuStreamSynchronize");
	assert_int_equal(json_integer_value(json_object_get(steps, "count")), NSTEPS);
	assert_int_equal(json_array_size(json_object_get(steps, "nvtx_ranges")), 0);
	/* 4 + 3 ms of spin and a 5 ms synchronization: never less, up to 3x
	 * on a loaded machine */
	med = th_num(steps, "median_s");
	if (med < 0.012 || med > 0.036)
		fail_msg("median step %.4f s, expected 12 ms (12-36 ms)", med);
	expect_planted(steps);
	json_decref(report);
}

/* The same steps in the Markdown report: the planted step named. */
static void test_markdown(void **state)
{
	struct ctx *c = *state;
	json_t *report, *steps = record_steps(c, "nvtx", &report);
	char md[600], *text;
	char *argv[] = { TRACER, "analyze", c->f.isr, "-o", md, NULL };

	(void)steps;
	json_decref(report);
	snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	text = th_slurp(md);
	assert_non_null(strstr(text, "## Steps"));
	assert_non_null(strstr(text, "20 steps from the NVTX range `step`"));
	assert_non_null(strstr(text, "- step 12 took"));
	assert_non_null(strstr(text, "| `forward` | push/pop | 1 | 20 |"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nvtx_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inferred_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_markdown, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
