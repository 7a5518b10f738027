// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Recordings nobody's tracer writes but an attacker can hand to analyze:
 * each test is a finding of the fuzzer (tests/fuzz/), reduced to the
 * events that trigger it, run through the analysis and every report under
 * ASan and UBSan. A recording is data: whatever its values, the analysis
 * neither reads nor writes out of bounds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis.h"
#include "report.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

#include "synth.h"

#define PID 100
#define TID 101

/* Analyzed and written in every format, into /dev/null. */
static void analyze_and_write(struct synth *b)
{
	struct analysis *a = NULL;
	FILE *sink = fopen("/dev/null", "w");

	assert_non_null(sink);
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	report__write_markdown(sink, a);
	report__write_json(sink, a);
	report__write_html(sink, a);
	report__write_perfetto(sink, a);
	fclose(sink);
	analysis__free(a);
	synth__free(b);
}

/* A CPU number of 0xffffffff (the scheduler's slot of a switch, the
 * target CPU of a wakeup): the timeline's per-CPU table grew to "cpu + 1"
 * computed in 32 bits, i.e. 0 entries, and was indexed at 4 G. */
static void test_cpu_number_near_u32_max(void **state)
{
	const __u32 tids[] = { TID };
	const char *const comms[] = { "worker" };
	struct synth *b = synth__new(T0, T0 + 10 * MS);
	struct isr_ev_sched_wakeup *w;
	struct isr_ev_hdr *h;

	(void)state;
	synth__process(b, PID, "worker", 1, tids, comms);
	ev_switch(b, T0 + 1 * MS, PID, TID, 0, 0, 0x1, 0);
	h = b->count ? (struct isr_ev_hdr *)(b->data + b->offs[b->count - 1]) : NULL;
	assert_non_null(h);
	h->cpu = 0xffffffffU;
	ev_wakeup(b, T0 + 2 * MS, PID, TID, false);
	w = (struct isr_ev_sched_wakeup *)(b->data + b->offs[b->count - 1]);
	w->target_cpu = 0xffffffffU;
	ev_switch(b, T0 + 3 * MS, 0, 0, PID, TID, 0, 0);
	analyze_and_write(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_number_near_u32_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
