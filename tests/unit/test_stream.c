// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The analysis streamed from a file (pass__open_file): the same reports as
 * with the events in memory, however far the file's order is from time
 * order; events out of order beyond the reorder buffer counted and said;
 * files made to exhaust memory (issue 19) analyzed within the bounds, what
 * was left out said. Peak memory is measured on the release binary by
 * tests/integration/test_stream.c and tests/bench/analysis.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis.h"
#include "report.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

#include "synth.h"

#define US SYNTH_US
#define PID 100
#define MAIN 101
#define WORKER 102

/* A process whose file order is far from time order: page faults written
 * at their end up to 2 s after their start, GIL waits, CUDA calls written
 * at their return, GPU records handed over 0.9 s after they ran. */
static struct synth *far_from_time_order(bool gpu)
{
	const __u32 tids[] = { MAIN, WORKER };
	const char *const comms[] = { "python3", "worker" };
	struct synth *b = synth__new(T0, T0 + 5000 * MS);
	__u32 corr = 1;

	synth__process(b, PID, "python3", 2, tids, comms);
	if (gpu)
		for (__u64 t = T0; t < T0 + 5000 * MS; t += 500 * MS)
			ev_gpu_clock(b, t, PID);
	for (__u64 i = 0; i < 2000; i++) {
		__u64 t = T0 + 10 * MS + i * 2 * MS;

		ev_switch(b, t, 0, 0, PID, MAIN, 0, 0);
		ev_call(b, t + 10 * US, PID, MAIN, ISR_CUDA_FN_cuCtxSynchronize_v2, 0, 300 * US);
		ev_gil(b, t + 400 * US, PID, MAIN, ISR_GIL_ACQUIRE, 100 * US);
		ev_switch(b, t + 900 * US, PID, MAIN, 0, 0, 1, 0);
		ev_wakeup_by(b, t + 1000 * US, PID, WORKER, PID, MAIN);
		if (i % 100 == 0)
			ev_fault(b, t + 1500 * US, PID, WORKER, 1000 * MS + i * MS, ISR_FAULT_HAS_START | ISR_FAULT_MAJOR);
		if (gpu)
			gpu_launch(b, t + 20 * US, PID, MAIN, corr++, 50 * US, 200 * US, 1);
	}
	return b;
}

static void test_far_from_time_order(void **state)
{
	(void)state;
	for (int gpu = 0; gpu < 2; gpu++) {
		struct synth *b = far_from_time_order(gpu);
		struct analysis *a = synth__check_streamed(b, 1024, 0);

		assert_int_equal(a->out_of_order, 0);
		assert_int_equal(a->sum->event_total, b->count);
		assert_int_equal(a->sum->gpu_count, gpu ? 1 : 0);
		analysis__free(a);
		synth__free(b);
	}
}

/* The start the pass gives an event of the recording without GPU records:
 * a fault starts when it was entered, everything else at its time. */
static __u64 start_of(const struct isr_ev_hdr *h)
{
	const struct isr_ev_page_fault *f = (const void *)h;

	if (h->type == ISR_EV_PAGE_FAULT && (f->flags & ISR_FAULT_HAS_START))
		return h->ts_ns - f->duration_ns;
	return h->ts_ns;
}

/* With a reorder buffer of one byte, every event goes as soon as it is
 * read: those that start before an event read earlier are out of order,
 * counted exactly, and said in both reports. */
static void test_out_of_order_counted(void **state)
{
	struct synth *b = far_from_time_order(false);
	const struct recording *r = synth__recording(b);
	struct pass_opts opts = { .buffer_bytes = 1 };
	char path[] = "/tmp/isr-ooo-XXXXXX", err[512], *md;
	__u64 latest = 0, want = 0;
	struct analysis *a;
	struct pass *p;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < r->event_count; i++) {
		__u64 s = start_of(r->events[i]);

		if (s < latest)
			want++;
		else
			latest = s;
	}
	assert_true(want > 0);
	synth__write(b, path, 1024);
	if (pass__open_file(path, &opts, &p, err, sizeof(err)))
		fail_msg("pass__open_file: %s", err);
	assert_int_equal(analysis__run_pass(p, &a), 0);
	unlink(path);
	assert_int_equal(a->out_of_order, want);
	assert_int_equal(a->sum->event_total, b->count);
	md = synth__render(a, report__write_markdown);
	assert_non_null(strstr(md, "events came out of order"));
	free(md);
	md = synth__render(a, report__write_json);
	assert_non_null(strstr(md, "\"out_of_order_events\": "));
	free(md);
	analysis__free(a);
	synth__free(b);
}

/* Issue 19: EVENTS chunks that decompress to 64 MiB each from almost
 * nothing. Every event is analyzed, one chunk in memory at a time. */
static void test_decompression_bomb(void **state)
{
	struct rec_writer_opts wopts = { .chunk_bytes = ISR_CHUNK_MAX_PAYLOAD, .zstd_level = 19 };
	char path[] = "/tmp/isr-bomb-XXXXXX", err[512];
	struct isr_ev_sched_wakeup e = { .hdr = { .type = ISR_EV_SCHED_WAKEUP, .size = sizeof(e),
						  .ts_ns = T0 + MS, .pid = PID, .tid = MAIN } };
	size_t per_chunk = ISR_CHUNK_MAX_PAYLOAD / sizeof(e), chunks = 2;
	struct rec_writer *w;
	struct rec_props *props;
	struct analysis *a;
	struct pass *p;
	struct stat st;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path, &wopts);
	props = rec_props__new();
	assert_non_null(w);
	assert_non_null(props);
	assert_int_equal(rec_props__add_u64(props, ISR_PROP_HOST_START_MONO_NS, T0), 0);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_HOST, props), 0);
	rec_props__free(props);
	for (size_t i = 0; i < chunks * per_chunk; i++)
		assert_int_equal(rec_writer__append_event(w, &e, sizeof(e)), 0);
	assert_int_equal(rec_writer__finish(w, T0 + 2 * MS, ISR_STOP_SIGNAL), 0);
	rec_writer__free(w);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size < 64 * 1024);

	if (pass__open_file(path, NULL, &p, err, sizeof(err)))
		fail_msg("pass__open_file: %s", err);
	assert_int_equal(analysis__run_pass(p, &a), 0);
	unlink(path);
	assert_int_equal(a->sum->event_total, chunks * per_chunk);
	assert_int_equal(a->sum->thread_count, 1);
	assert_int_equal(a->sum->threads[0].wakeups, chunks * per_chunk);
	assert_int_equal(a->out_of_order, 0);
	analysis__free(a);
}

/* Threads by the ten thousand, from the events rather than a list: those
 * beyond PASS_MAX_THREADS are left out, their events counted and said. */
static void test_thread_flood(void **state)
{
	const __u32 tids[] = { MAIN };
	const char *const comms[] = { "python3" };
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	size_t extra = PASS_MAX_THREADS + 1000;
	char path[] = "/tmp/isr-flood-XXXXXX", err[512], *json;
	struct analysis *a;
	struct pass *p;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	synth__process(b, PID, "python3", 1, tids, comms);
	for (size_t i = 0; i < extra; i++)
		ev_rename(b, T0 + i * US, PID, 1000 + (__u32)i, "flood");
	synth__write(b, path, 65536);
	if (pass__open_file(path, NULL, &p, err, sizeof(err)))
		fail_msg("pass__open_file: %s", err);
	assert_int_equal(analysis__run_pass(p, &a), 0);
	unlink(path);
	assert_int_equal(a->sum->thread_count, PASS_MAX_THREADS);
	assert_int_equal(a->thread_events_cut, extra - (PASS_MAX_THREADS - 1));
	json = synth__render(a, report__write_json);
	assert_non_null(strstr(json, "events that name threads beyond the first 32768 were left out"));
	free(json);
	analysis__free(a);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_far_from_time_order),
		cmocka_unit_test(test_out_of_order_counted),
		cmocka_unit_test(test_decompression_bomb),
		cmocka_unit_test(test_thread_flood),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
