// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The analysis's name tables are bounded, whatever a recording holds: past
 * SUMMARY_MAX_KERNELS distinct CUDA kernels (launch handles) and GPU kernel
 * names, the rest are counted together as "(other kernels)", one entry per
 * process, their names not kept; past PY_MAX_CODES code objects and
 * PY_MAX_STACKS stacks, the rest are not kept and their samples counted
 * without a stack; past STEPS_MAX_NAMES NVTX range names, the rest count as
 * "(other ranges)", never steps, and past STEPS_MAX_OPEN ranges open at once
 * the rest are not counted. Every launch, kernel, sample and range within
 * the bounds is still counted, and the report says what was bounded. (Peak memory on a crafted recording of
 * 500,000 distinct names: tests/bench/analysis.sh -f names.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "analysis.h"
#include "summary.h"
#include "py_report.h"
#include "report.h"
#include "steps.h"
#include "synth.h"

#define MS	1000000ULL
#define T0	(1000 * MS)
#define PID	100
#define TID	101
#define EXTRA	100	/* distinct ones past each bound */

static const char *note_with(json_t *root, const char *text)
{
	json_t *notes = json_object_get(json_object_get(json_object_get(root, "recording"), "analysis"), "notes");

	for (size_t i = 0; i < json_array_size(notes); i++)
		if (strstr(json_string_value(json_array_get(notes, i)), text))
			return json_string_value(json_array_get(notes, i));
	return NULL;
}

static struct synth *job(void)
{
	const __u32 tids[] = { TID };
	const char *const comms[] = { "trainer" };
	struct synth *b = synth__new(T0, T0 + 2000 * MS);

	synth__process(b, PID, "python3", 1, tids, comms);
	return b;
}

/* SUMMARY_MAX_KERNELS + EXTRA distinct kernels, each named and launched
 * twice, on the CPU (CUDA names, launch handles) and on the GPU (CUPTI
 * names, kernels). */
static void test_kernels_bounded(void **state)
{
	const size_t n = SUMMARY_MAX_KERNELS + EXTRA;
	struct synth *b = job();
	const struct kernel_summary *other = NULL;
	const struct gpu_kernel_stat *gother = NULL;
	struct analysis *a = NULL;
	__u64 launches = 0, kernels = 0;
	char name[64], *text;
	json_t *root;
	json_error_t jerr;
	__u32 corr = 1;

	(void)state;
	ev_gpu_clock(b, T0 + MS, PID);
	ev_gpu_clock(b, T0 + 1999 * MS, PID);
	for (size_t i = 0; i < n; i++) {
		__u64 t = T0 + 2 * MS + i * 100 * SYNTH_US / 10;

		snprintf(name, sizeof(name), "_Z7kernel%zuPf", i);
		ev_name(b, t, PID, ISR_CUDA_FN_cuModuleGetFunction, 0x10000 + i, 0x4000, name);
		ev_gpu_name(b, t, PID, (__u32)i + 1, name);
		for (int k = 0; k < 2; k++) {
			ev_launch(b, t + 1000 + (__u64)k, PID, TID, ISR_CUDA_FN_cuLaunchKernel, 0x10000 + i);
			gpu_launch(b, t + 2000 + (__u64)k, PID, TID, corr++, 10 * (long long)SYNTH_US, 1000, (__u32)i + 1);
		}
	}
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);

	/* the CPU side: the first SUMMARY_MAX_KERNELS handles (gpu_launch's
	 * own 0x1000, launched first at i = 0, among them) and the process's
	 * other kernels, every launch counted */
	assert_int_equal(a->sum->kernel_count, SUMMARY_MAX_KERNELS + 1);
	for (size_t i = 0; i < a->sum->kernel_count; i++) {
		const struct kernel_summary *k = &a->sum->kernels[i];

		if (k->handle == KERNEL_OTHER_HANDLE)
			other = k;
		else if (k->handle != 0x1000)	/* gpu_launch's own */
			launches += k->launches;
	}
	assert_non_null(other);
	assert_string_equal(other->name, SUMMARY_OTHER_KERNELS);
	assert_int_equal(other->launches, 2 * (EXTRA + 1));
	assert_int_equal(launches, 2 * (SUMMARY_MAX_KERNELS - 1));
	assert_int_equal(a->sum->kernel_launches_other, 2 * (EXTRA + 1));
	assert_int_equal(a->sum->kernel_names_other, EXTRA + 1);
	/* the kept ones keep their names */
	for (size_t i = 0; i < a->sum->kernel_count; i++)
		if (a->sum->kernels[i].handle == 0x10000)
			assert_string_equal(a->sum->kernels[i].name, "kernel0(float*)");

	/* the GPU side: the same, by name id */
	assert_int_equal(a->sum->gpu_kernel_count, SUMMARY_MAX_KERNELS + 1);
	for (size_t i = 0; i < a->sum->gpu_kernel_count; i++) {
		const struct gpu_kernel_stat *k = &a->sum->gpu_kernels[i];

		if (!strcmp(k->name, SUMMARY_OTHER_KERNELS))
			gother = k;
		kernels += k->count;
	}
	assert_non_null(gother);
	assert_int_equal(gother->count, 2 * EXTRA);
	assert_int_equal(kernels, 2 * n);
	assert_int_equal(a->sum->gpu_kernels_other, 2 * EXTRA);
	assert_int_equal(a->sum->gpu_names_other, EXTRA);
	assert_string_equal(summary__gpu_kernel_name(a->sum, PID, 1), "kernel0(float*)");
	assert_string_equal(summary__gpu_kernel_name(a->sum, PID, (__u32)n), SUMMARY_OTHER_KERNELS);

	/* the report says so */
	text = synth__render(a, report__write_json);
	root = json_loads(text, 0, &jerr);
	assert_non_null(root);
	assert_non_null(note_with(root, "over 16384 distinct CUDA kernels: 202 launches of those past them are counted "
					"as (other kernels), 101 names not kept"));
	assert_non_null(note_with(root, "over 16384 distinct GPU kernel names: 200 kernels"));
	json_decref(root);
	free(text);
	text = synth__render(a, report__write_markdown);
	assert_non_null(strstr(text, "> **WARNING:** over 16384 distinct CUDA kernels"));
	free(text);
	analysis__free(a);
	synth__free(b);
}

/* PY_MAX_CODES + EXTRA code objects and PY_MAX_STACKS + EXTRA stacks, each
 * sampled once: every sample is counted, the stacks past the bound
 * without a stack, and the report says so. */
static void test_python_bounded(void **state)
{
	struct synth *b = job();
	struct analysis *a = NULL;
	const struct py_thread_stats *t;
	char file[64];
	char *text;

	(void)state;
	for (__u64 i = 0; i < PY_MAX_CODES + EXTRA; i++) {
		snprintf(file, sizeof(file), "/srv/mod%llu.py", (unsigned long long)i);
		ev_py_code(b, T0 + MS, PID, 0x7f0000000000ULL + 16 * i, file, "f", 1);
	}
	for (__u32 i = 0; i < PY_MAX_STACKS + EXTRA; i++) {
		__u64 code = 0x7f0000000000ULL + 16 * i;

		ev_py_stack(b, T0 + 2 * MS, PID, i + 1, 1, &code);
		ev_py_sample(b, T0 + 3 * MS + i * 10000ULL, PID, TID, i + 1, ISR_PY_KIND_TIMER);
	}
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	assert_int_equal(a->py->ncodes, PY_MAX_CODES);
	assert_int_equal(a->py->codes_other, EXTRA);
	assert_int_equal(a->py->nstacks, PY_MAX_STACKS);
	assert_int_equal(a->py->stacks_other, EXTRA);
	t = py_report__thread(a->py, PID, TID);
	assert_non_null(t);
	assert_int_equal(t->samples, PY_MAX_STACKS + EXTRA);
	text = synth__render(a, report__write_markdown);
	assert_non_null(strstr(text, "over 65536 Python code objects or 16384 stacks: 100 code objects (shown by "
				     "address) and 100 stacks (samples counted without one) not kept"));
	free(text);
	analysis__free(a);
	synth__free(b);
}

static void ev_nvtx(struct synth *b, __u64 ts, __u16 kind, const char *name)
{
	struct isr_ev_nvtx *e = synth__event(b, ISR_EV_NVTX, sizeof(*e), ts, PID, TID);

	e->kind = kind;
	if (name)
		snprintf(e->name, sizeof(e->name), "%s", name);
}

/* Five "train_step" ranges, then STEPS_MAX_NAMES + EXTRA ranges of
 * distinct names, then STEPS_MAX_OPEN + EXTRA nested ones: the steps are
 * the five, the names past the bound one "(other ranges)" entry, the ranges
 * nested past the bound not counted, and no pop unmatched. */
static void test_nvtx_bounded(void **state)
{
	struct synth *b = job();
	const struct steps_result *res;
	const struct nvtx_range_stat *other = NULL, *nest = NULL;
	struct analysis *a = NULL;
	__u64 t = T0 + MS;
	char name[32], *text;

	(void)state;
	ev_switch(b, T0, 0, 0, PID, TID, 0, 0);
	for (int i = 0; i < 5; i++, t += 10 * MS) {
		ev_nvtx(b, t, ISR_NVTX_PUSH, "train_step");
		ev_nvtx(b, t + 9 * MS, ISR_NVTX_POP, NULL);
	}
	for (unsigned int i = 0; i < STEPS_MAX_NAMES + EXTRA; i++, t += 2000) {
		snprintf(name, sizeof(name), "r%u", i);
		ev_nvtx(b, t, ISR_NVTX_PUSH, name);
		ev_nvtx(b, t + 1000, ISR_NVTX_POP, NULL);
	}
	for (unsigned int i = 0; i < STEPS_MAX_OPEN + EXTRA; i++)
		ev_nvtx(b, t + i, ISR_NVTX_PUSH, "nest");
	for (unsigned int i = 0; i < STEPS_MAX_OPEN + EXTRA; i++)
		ev_nvtx(b, t + STEPS_MAX_OPEN + EXTRA + i, ISR_NVTX_POP, NULL);
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	res = steps__result(a->ex->steps);
	assert_int_equal(res->source, STEPS_NVTX);
	assert_string_equal(res->name, "train_step");
	assert_int_equal(res->count, 5);
	/* train_step, the first names up to the bound (nest among the names
	 * not kept), and the other ranges */
	assert_int_equal(res->nranges, STEPS_MAX_NAMES + 1);
	for (size_t i = 0; i < res->nranges; i++) {
		if (!strcmp(res->ranges[i].name, STEPS_OTHER_RANGES))
			other = &res->ranges[i];
		if (!strcmp(res->ranges[i].name, "nest"))
			nest = &res->ranges[i];
	}
	assert_non_null(other);
	assert_null(nest);
	/* r4095..r4195 (101 names) and the 4096 nest ranges counted */
	assert_int_equal(other->count, EXTRA + 1 + STEPS_MAX_OPEN);
	assert_int_equal(res->names_other, EXTRA + 1 + STEPS_MAX_OPEN);
	assert_int_equal(res->ranges_dropped, EXTRA);
	assert_int_equal(res->unmatched, 0);
	text = synth__render(a, report__write_markdown);
	assert_non_null(strstr(text, "over 4096 distinct NVTX range or mark names"));
	assert_non_null(strstr(text, "100 NVTX ranges opened past 4096 open at once were not counted"));
	free(text);
	analysis__free(a);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernels_bounded),
		cmocka_unit_test(test_python_bounded),
		cmocka_unit_test(test_nvtx_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
