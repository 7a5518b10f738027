// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Steps (analysis/model/steps.h) and top's live metrics (analysis/api/live.h) on
 * synthetic recordings with exact answers: the NVTX name chosen for the
 * steps, their count, the median, the planted slow step and what grew in
 * it; steps inferred from periodic synchronizations or the same work
 * between them, and none from irregular ones; the rates and shares of one live interval.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis.h"
#include "live.h"
#include "steps.h"
#include "synth.h"

#define MS 1000000ULL
#define PID 100
#define T0 (1000 * MS)

static void ev_nvtx(struct synth *b, __u64 ts, __u16 kind, const char *name, __u64 id)
{
	struct isr_ev_nvtx *e = synth__event(b, ISR_EV_NVTX, sizeof(*e), ts, PID, PID);

	e->kind = kind;
	e->id = id;
	if (name)
		snprintf(e->name, sizeof(e->name), "%s", name);
}

static struct synth *new_job(__u64 end)
{
	static const __u32 tids[] = { PID };
	static const char *const comms[] = { "trainer" };
	struct synth *b = synth__new(T0, end);

	synth__process(b, PID, "trainer", 1, tids, comms);
	/* on a CPU from the start */
	ev_switch(b, T0, 0, 0, PID, PID, 0, 0);
	return b;
}

static const struct steps_result *run(struct synth *b, struct analysis **a)
{
	assert_int_equal(analysis__run(synth__recording(b), a), 0);
	return steps__result((*a)->ex->steps);
}

/* 3 epochs of 4 "train_step" ranges (10 ms each, a 2 ms "fwd" inside);
 * step 6 is also blocked 40 ms. Epochs repeat 3 times too, but the steps
 * are the ranges named like steps. */
static void test_nvtx_steps(void **state)
{
	struct synth *b = new_job(T0 + 400 * MS);
	const struct steps_result *r;
	struct analysis *a;
	__u64 t = T0 + MS;

	(void)state;
	for (int e = 0, k = 0; e < 3; e++) {
		ev_nvtx(b, t, ISR_NVTX_PUSH, "epoch", 0);
		for (int s = 0; s < 4; s++, k++) {
			ev_nvtx(b, t, ISR_NVTX_PUSH, "train_step", 0);
			ev_nvtx(b, t, ISR_NVTX_PUSH, "fwd", 0);
			ev_nvtx(b, t + 2 * MS, ISR_NVTX_POP, NULL, 0);
			if (k == 6) {
				ev_switch(b, t + 5 * MS, PID, PID, 0, 0, 1, 0);	/* sleeps */
				ev_wakeup(b, t + 45 * MS, PID, PID, false);
				ev_switch(b, t + 45 * MS, 0, 0, PID, PID, 0, 0);
				t += 40 * MS;
			}
			ev_nvtx(b, t + 10 * MS, ISR_NVTX_POP, NULL, 0);
			t += 10 * MS;
		}
		ev_nvtx(b, t, ISR_NVTX_POP, NULL, 0);
		t += MS;
	}
	ev_nvtx(b, T0 + 2 * MS, ISR_NVTX_MARK, "ckpt", 0);
	ev_nvtx(b, T0 + 3 * MS, ISR_NVTX_START, "load", 7);
	ev_nvtx(b, T0 + 9 * MS, ISR_NVTX_END, NULL, 7);
	ev_nvtx(b, T0 + 390 * MS, ISR_NVTX_POP, NULL, 0);	/* nothing open: unmatched */
	r = run(b, &a);
	assert_int_equal(r->source, STEPS_NVTX);
	assert_string_equal(r->name, "train_step");
	assert_int_equal(r->count, 12);
	assert_int_equal(r->median_ns, 10 * MS);
	assert_int_equal(r->max_ns, 50 * MS);
	assert_int_equal(r->nslowest, 1);	/* the others are the median */
	assert_int_equal(r->slowest[0].index, 6);
	assert_int_equal(r->slowest[0].extra_ns, 40 * MS);
	assert_true(fabs(r->slowest[0].ratio - 5.0) < 1e-9);
	assert_int_equal(r->slowest[0].diffs[0].cat, TL_BLOCKED);
	assert_int_equal(r->slowest[0].diffs[0].extra, (__s64)(40 * MS));
	assert_int_equal(r->steps[6].acc.ns[TL_RUNNING], 10 * MS);
	assert_int_equal(r->unmatched, 1);
	assert_int_equal(r->nmarks, 1);
	assert_string_equal(r->marks[0].name, "ckpt");
	for (size_t i = 0; i < r->nranges; i++) {
		const struct nvtx_range_stat *s = &r->ranges[i];

		if (!strcmp(s->name, "fwd")) {
			assert_int_equal(s->count, 12);
			assert_int_equal(s->min_depth, 2);
			assert_int_equal(s->total_ns, 24 * MS);
		} else if (!strcmp(s->name, "load")) {
			assert_false(s->thread_stack);
			assert_int_equal(s->total_ns, 6 * MS);
		} else if (!strcmp(s->name, "epoch")) {
			assert_int_equal(s->count, 3);
			assert_int_equal(s->min_depth, 0);
		} else {
			assert_string_equal(s->name, "train_step");
		}
	}
	assert_int_equal(r->nranges, 4);
	analysis__free(a);
	synth__free(b);
}

/* Without NVTX: 8 rounds of 5 launches, 8 ms of work and a 2 ms
 * cuStreamSynchronize; round 5's synchronization takes 30 ms. */
static void test_inferred_steps(void **state)
{
	struct synth *b = new_job(T0 + 400 * MS);
	const struct steps_result *r;
	struct analysis *a;
	__u64 t = T0 + MS;

	(void)state;
	for (int k = 0; k < 8; k++) {
		__u64 sync = k == 5 ? 30 * MS : 2 * MS;

		for (int i = 0; i < 5; i++)
			ev_launch(b, t + (__u64)i * MS, PID, PID, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
		ev_call(b, t + 8 * MS, PID, PID, ISR_CUDA_FN_cuStreamSynchronize, 0, sync);
		t += 8 * MS + sync;
	}
	r = run(b, &a);
	assert_int_equal(r->source, STEPS_INFERRED);
	assert_string_equal(r->name, "cuStreamSynchronize");
	assert_int_equal(r->count, 8);
	assert_int_equal(r->median_ns, 10 * MS);
	assert_int_equal(r->slowest[0].index, 5);
	assert_int_equal(r->slowest[0].diffs[0].cat, TL_SYNC);
	assert_int_equal(r->slowest[0].diffs[0].extra, (__s64)(28 * MS));
	for (size_t i = 0; i < r->count; i++)
		assert_int_equal(r->steps[i].launches, 5);
	analysis__free(a);
	synth__free(b);
}

/* Synchronizations at irregular intervals (gaps_ms), each after the
 * launches of launches[] (NULL: one each). */
static const struct steps_result *irregular_job(const __u64 *launches, struct synth **bp, struct analysis **a)
{
	static const __u64 gaps_ms[] = { 3, 40, 7, 90, 12, 2, 60, 25 };
	struct synth *b = new_job(T0 + 400 * MS);
	__u64 t = T0 + MS;

	for (size_t k = 0; k < sizeof(gaps_ms) / sizeof(gaps_ms[0]); k++) {
		for (__u64 i = 0; i < (launches ? launches[k] : 1); i++)
			ev_launch(b, t + i * 10000, PID, PID, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
		ev_call(b, t + gaps_ms[k] * MS, PID, PID, ISR_CUDA_FN_cuStreamSynchronize, 0, MS);
		t += gaps_ms[k] * MS + MS;
	}
	*bp = b;
	return run(b, a);
}

/* Synchronizations at irregular intervals after irregular work are no
 * steps. */
static void test_irregular_no_steps(void **state)
{
	static const __u64 launches[] = { 1, 9, 2, 30, 4, 1, 12, 6 };
	const struct steps_result *r;
	struct synth *b;
	struct analysis *a;

	(void)state;
	r = irregular_job(launches, &b, &a);
	assert_int_equal(r->source, STEPS_NONE);
	assert_int_equal(r->count, 0);
	analysis__free(a);
	synth__free(b);
}

/* The same times after the same work each time (one launch): steps, as
 * a training loop on a host busy with other work, whose steps are
 * stretched unevenly (test_steps' test_inferred_steps under load: the
 * intervals' interquartile range over half their median). */
static void test_same_work_uneven_time(void **state)
{
	const struct steps_result *r;
	struct synth *b;
	struct analysis *a;

	(void)state;
	r = irregular_job(NULL, &b, &a);
	assert_int_equal(r->source, STEPS_INFERRED);
	assert_int_equal(r->count, 8);
	for (size_t i = 0; i < r->count; i++)
		assert_int_equal(r->steps[i].launches, 1);
	analysis__free(a);
	synth__free(b);
}

/* 200,000 synchronizations, one every 1 ms after a launch: more than the
 * 16,384 boundaries a thread keeps, so steps span 16 synchronizations (four
 * halvings) and memory stays bounded. */
static void test_inferred_bounded(void **state)
{
	struct synth *b = new_job(T0 + 300000 * MS);
	const struct steps_result *r;
	struct analysis *a;

	(void)state;
	for (__u64 k = 0; k < 200000; k++) {
		__u64 t = T0 + MS + k * MS;

		ev_launch(b, t, PID, PID, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
		ev_call(b, t + MS / 2, PID, PID, ISR_CUDA_FN_cuStreamSynchronize, 0, MS / 2);
	}
	r = run(b, &a);
	assert_int_equal(r->source, STEPS_INFERRED);
	assert_int_equal(r->syncs_per_step, 16);
	assert_int_equal(r->count, 12500);
	assert_int_equal(r->median_ns, 16 * MS);
	assert_int_equal(r->steps[1].launches, 16);
	analysis__free(a);
	synth__free(b);
}

static void feed(struct live *l, const void *ev)
{
	const struct isr_ev_hdr *h = ev;

	live__event(l, h, h->size);
}

/* One second of a thread: on a CPU 600 ms, waiting for one 200 ms, 100
 * launches, 150 ms in synchronization, 50 faults. */
static void test_live_interval(void **state)
{
	const __u32 pids[] = { PID };
	struct live *l = live__new(pids, 1, 4);
	const struct live_snapshot *s;
	struct isr_ev_sched_switch sw = { .hdr = { .type = ISR_EV_SCHED_SWITCH, .size = sizeof(sw) } };
	struct isr_ev_sched_wakeup wk = { .hdr = { .type = ISR_EV_SCHED_WAKEUP, .size = sizeof(wk), .pid = PID,
						   .tid = PID } };
	struct isr_ev_cuda_call c = { .hdr = { .type = ISR_EV_CUDA_CALL, .size = sizeof(c), .pid = PID, .tid = PID } };
	struct isr_ev_page_fault f = { .hdr = { .type = ISR_EV_PAGE_FAULT, .size = sizeof(f), .pid = PID,
						.tid = PID } };

	(void)state;
	assert_non_null(l);
	/* the interval starts at the first snapshot */
	wk.hdr.ts_ns = T0;
	feed(l, &wk);
	assert_int_equal(live__snapshot(l, T0, &s), 0);
	/* runnable since T0, on a CPU at 200 ms, off at 800 ms */
	sw.hdr.ts_ns = T0 + 200 * MS;
	sw.next_pid = PID;
	sw.next_tid = PID;
	feed(l, &sw);
	c.func = ISR_CUDA_FN_cuLaunchKernel;
	for (int i = 0; i < 100; i++) {
		c.hdr.ts_ns = T0 + 300 * MS + (__u64)i * MS;
		feed(l, &c);
	}
	c.func = ISR_CUDA_FN_cuStreamSynchronize;
	c.flags = ISR_CUDA_RETURNED;
	c.duration_ns = 150 * MS;
	c.hdr.ts_ns = T0 + 500 * MS;
	feed(l, &c);
	for (int i = 0; i < 50; i++) {
		f.hdr.ts_ns = T0 + 600 * MS;
		feed(l, &f);
	}
	sw.hdr.ts_ns = T0 + 800 * MS;
	sw.hdr.pid = PID;
	sw.hdr.tid = PID;
	sw.next_pid = 0;
	sw.next_tid = 0;
	sw.prev_state = 1;
	feed(l, &sw);
	assert_int_equal(live__snapshot(l, T0 + 1000 * MS, &s), 0);
	assert_int_equal(s->nprocs, 1);
	assert_true(fabs(s->interval_s - 1.0) < 1e-9);
	assert_int_equal(s->procs[0].pid, PID);
	assert_int_equal(s->procs[0].launcher_tid, PID);
	assert_true(fabs(s->procs[0].launches_per_s - 100) < 1e-9);
	assert_true(fabs(s->procs[0].cpu_pct - 60) < 1e-9);
	assert_true(fabs(s->procs[0].runq_pct - 20) < 1e-9);
	assert_true(fabs(s->procs[0].sync_pct - 15) < 1e-9);
	assert_true(fabs(s->procs[0].faults_per_s - 50) < 1e-9);
	assert_true(s->procs[0].gpu_busy_pct < 0);	/* no GPU activity seen */
	/* the rules of the report: the wait came before its first launch,
	 * outside the launching thread's window */
	assert_null(s->procs[0].finding);
	assert_int_equal(s->procs[0].nthreads, 1);
	/* the next interval: asleep all of it, nothing else */
	assert_int_equal(live__snapshot(l, T0 + 2000 * MS, &s), 0);
	assert_int_equal(s->nprocs, 1);
	assert_true(fabs(s->procs[0].blocked_pct - 100) < 1e-9);
	assert_true(s->procs[0].cpu_pct == 0 && s->procs[0].launches_per_s == 0);
	live__free(l);
}

/* Feeds the events of b from..to (by time) to l. */
static void feed_synth(struct live *l, struct synth *b, __u64 from, __u64 to)
{
	const struct recording *r = synth__recording(b);

	for (size_t i = 0; i < r->event_count; i++)
		if (r->events[i]->ts_ns >= from && r->events[i]->ts_ns < to)
			live__event(l, r->events[i], r->events[i]->size);
}

/* A launching thread blocked 800 ms of a second, until its producer (a
 * thread of its process) wakes it: top shows it blocked, not idle; the
 * process row sums its threads; the finding is the report's rule. A second
 * later, both asleep from before the interval: blocked all of it. */
static void test_live_blocked(void **state)
{
	const __u32 pids[] = { PID }, tids[] = { PID, PID + 1 };
	const char *const comms[] = { "trainer", "producer" };
	struct synth *b = synth__new(T0 - 100 * MS, T0 + 2000 * MS);
	struct live *l = live__new(pids, 1, 4);
	const struct live_snapshot *s;
	const struct live_process *p;

	(void)state;
	synth__process(b, PID, "trainer", 2, tids, comms);
	ev_switch(b, T0 - 10 * MS, 0, 0, PID, PID, 0, 0);
	for (int i = 0; i < 20; i++) {
		ev_launch(b, T0 + (__u64)(1 + i) * MS, PID, PID, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
		ev_launch(b, T0 + (__u64)(860 + i) * MS, PID, PID, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
	}
	ev_switch(b, T0 + 50 * MS, PID, PID, PID, PID + 1, 0x1, 0);
	ev_wakeup_by(b, T0 + 850 * MS, PID, PID, PID, PID + 1);
	ev_switch(b, T0 + 850 * MS, PID, PID + 1, PID, PID, 0x1, 0);
	ev_switch(b, T0 + 1100 * MS, PID, PID, 0, 0, 0x1, 0);
	feed_synth(l, b, 0, T0);
	assert_int_equal(live__snapshot(l, T0, &s), 0);
	feed_synth(l, b, T0, T0 + 1000 * MS);
	assert_int_equal(live__snapshot(l, T0 + 1000 * MS, &s), 0);
	assert_int_equal(s->nprocs, 1);
	p = &s->procs[0];
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->threads[0].tid, PID);
	assert_true(fabs(p->threads[0].blocked_pct - 80) < 1e-9);
	assert_true(fabs(p->threads[0].cpu_pct - 20) < 1e-9);
	assert_true(fabs(p->threads[1].cpu_pct - 80) < 1e-9);
	/* the producer asleep from 850 ms, and before its first switch-in at
	 * 50 ms: off a CPU since it was first seen (the task model, tasks.h);
	 * the 10 ms of that before the interval are the previous one's */
	assert_true(fabs(p->threads[1].blocked_pct - 20) < 1e-9);
	/* the process: its threads' totals */
	assert_true(fabs(p->cpu_pct - 100) < 1e-9);
	assert_true(fabs(p->blocked_pct - 100) < 1e-9);
	assert_true(fabs(p->launches_per_s - 40) < 1e-9);
	assert_non_null(p->finding);
	assert_string_equal(p->finding, "blocked_on_thread");
	assert_string_equal(p->finding_text, explain__rule_title("blocked_on_thread"));
	assert_true(fabs(p->finding_cost_s - 0.8) < 1e-9);
	/* asleep before the interval began: the launcher from 1100 ms, its
	 * producer from 850 ms */
	feed_synth(l, b, T0 + 1000 * MS, T0 + 2000 * MS);
	assert_int_equal(live__snapshot(l, T0 + 2000 * MS, &s), 0);
	assert_int_equal(s->nprocs, 1);
	assert_true(fabs(s->procs[0].blocked_pct - 190) < 1e-9);
	assert_true(fabs(s->procs[0].cpu_pct - 10) < 1e-9);
	live__free(l);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvtx_steps),
		cmocka_unit_test(test_inferred_steps),
		cmocka_unit_test(test_irregular_no_steps),
		cmocka_unit_test(test_same_work_uneven_time),
		cmocka_unit_test(test_inferred_bounded),
		cmocka_unit_test(test_live_interval),
		cmocka_unit_test(test_live_blocked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
