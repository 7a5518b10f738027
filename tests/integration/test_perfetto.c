// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `analyze --format perfetto` of a real recording with many scheduling
 * events (a training loop fed by three worker processes on the stand-in
 * libcuda, more workers than CPUs): the trace is at most 3 times the size
 * of its recording (docs/outputs.md, "Size"), and it decodes with the
 * recording's processes and every CUDA call the report counts.
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
#include "../unit/perfetto_text.h"

#define PIPELINE "tests/workloads/py_pipeline.py"
#define STEPS 150
#define LAUNCHES 8		/* py_pipeline.py's per step */

static off_t size_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void test_trace_within_three_times_its_recording(void **state)
{
	struct th_files f;
	char steps[16], trace[600], out[600], *text;
	char *rec[] = { TRACER, "record", "-q", "-o", f.isr, "--", "/usr/bin/python3", PIPELINE, STANDIN_LIBCUDA,
			"input", steps, NULL };
	char *exp[] = { TRACER, "analyze", f.isr, "--format", "perfetto", "-o", trace, NULL };
	json_t *report;
	off_t rsize, tsize;
	size_t compressed;

	(void)state;
	th_files_init(&f);
	snprintf(steps, sizeof(steps), "%d", STEPS);
	snprintf(trace, sizeof(trace), "%s/trace.pftrace", f.dir);
	snprintf(out, sizeof(out), "%s/pipeline.out", f.dir);
	th_expect_exit(th_run_to(rec, out, f.err), 0, f.err);
	th_expect_exit(th_run(exp, f.err), 0, f.err);
	report = th_report(f.isr);
	assert_non_null(report);
	/* a recording with many scheduling events */
	assert_true(th_count(report, "sched_switch") > 2000);
	rsize = size_of(f.isr);
	tsize = size_of(trace);
	print_message("recording %lld bytes, %lld sched_switch; trace %lld bytes: %.2fx\n", (long long)rsize,
		      th_count(report, "sched_switch"), (long long)tsize, (double)tsize / (double)rsize);
	assert_true(tsize <= 3 * rsize);
	text = perfetto_text(trace, &compressed);
	assert_true(compressed > 0);
	/* every slice ends; the parent and its three workers; every CUDA call
	 * the report counts (the launches and asynchronous copies are
	 * instants, the synchronizations slices) */
	assert_int_equal(th_count(report, "cuLaunchKernel"), STEPS * LAUNCHES);
	assert_int_equal(perfetto_text_events(text, "cuLaunchKernel"), STEPS * LAUNCHES);
	assert_int_equal(perfetto_text_events(text, "cuMemcpyHtoDAsync_v2"), STEPS);
	assert_int_equal(perfetto_text_events(text, "cuStreamSynchronize"), STEPS);
	assert_int_equal(th_count(report, "cuStreamSynchronize"), STEPS);
	assert_int_equal(perfetto_text_count(text, "type: TYPE_SLICE_BEGIN"), perfetto_text_count(text, "type: TYPE_SLICE_END"));
	assert_int_equal(perfetto_text_count(text, "process {"), json_array_size(json_object_get(report, "processes")));
	assert_int_equal(json_array_size(json_object_get(report, "processes")), 4);
	free(text);
	json_decref(report);
	th_rmrf(f.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_within_three_times_its_recording),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
