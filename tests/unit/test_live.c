// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `top`'s live metrics (analysis/api/live.h) on events handed over as the
 * recorder writes them: a thread's time on a CPU and waiting for one is the
 * task model's (runnable: the switch's ISR_SWITCH_RUNNABLE, as the
 * scheduler probe sets it, whatever the task's raw state), a
 * synchronization is what the analysis calls one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "live.h"
#include "registry.h"

#define MS 1000000ULL
#define T0 (1000 * MS)
#define PID 70
#define TID 71

static void feed(struct live *l, void *ev, __u16 type, size_t size, __u64 ts, __u32 pid, __u32 tid)
{
	struct isr_ev_hdr *h = ev;

	h->type = type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
	live__event(l, h, size);
}

static void switch_(struct live *l, __u64 ts, __u32 ppid, __u32 ptid, __u32 state, __u32 flags, __u32 npid,
		    __u32 ntid)
{
	struct isr_ev_sched_switch e = { .next_pid = npid, .next_tid = ntid, .prev_state = state, .flags = flags };

	feed(l, &e, ISR_EV_SCHED_SWITCH, sizeof(e), ts, ppid, ptid);
}

static void call(struct live *l, __u64 ts, __u16 func, __u64 duration)
{
	struct isr_ev_cuda_call e = { .func = func, .flags = duration ? ISR_CUDA_RETURNED : 0,
				      .duration_ns = duration };

	feed(l, &e, ISR_EV_CUDA_CALL, sizeof(e), ts, PID, TID);
}

/* Live metrics of PID, whose thread TID is switched in at T0. */
static struct live *started(void)
{
	const __u32 pids[] = { PID };
	struct live *l = live__new(pids, 1, 4);

	assert_non_null(l);
	switch_(l, T0, 0, 0, 0, 0, PID, TID);
	return l;
}

static const struct live_thread *row(const struct live_snapshot *s, __u32 tid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		for (size_t j = 0; j < s->procs[i].nthreads; j++)
			if (s->procs[i].threads[j].tid == tid)
				return &s->procs[i].threads[j];
	return NULL;
}

/* Over 100 ms: on a CPU 30 ms, preempted in an interruptible state (the
 * kernel's state was being set when the preemption came: still runnable)
 * and waiting 40 ms, then on a CPU again 30 ms. Two launches, one
 * synchronization of 10 ms, a synchronous copy of 5 ms, a query of 20 ms
 * (not a synchronization: it returns at once, whatever it took here). */
static void test_preempted_is_runnable(void **state)
{
	struct live *l = started();
	const struct live_snapshot *s;
	const struct live_thread *t;

	(void)state;
	call(l, T0 + 1 * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	call(l, T0 + 2 * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	call(l, T0 + 3 * MS, ISR_CUDA_FN_cuStreamSynchronize, 10 * MS);
	call(l, T0 + 14 * MS, ISR_CUDA_FN_cuMemcpyDtoH_v2, 5 * MS);
	call(l, T0 + 20 * MS, ISR_CUDA_FN_cuStreamQuery, 20 * MS);
	switch_(l, T0 + 30 * MS, PID, TID, 0x1, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE, 0, 0);
	switch_(l, T0 + 70 * MS, 0, 0, 0, 0, PID, TID);
	assert_int_equal(live__snapshot(l, T0 + 100 * MS, &s), 0);
	t = row(s, TID);
	assert_non_null(t);
	assert_true(t->cpu_pct > 59.99 && t->cpu_pct < 60.01);
	assert_true(t->runq_pct > 39.99 && t->runq_pct < 40.01);
	assert_true(t->sync_pct > 14.99 && t->sync_pct < 15.01);
	assert_true(t->launches_per_s > 19.99 && t->launches_per_s < 20.01);
	live__free(l);
}

/* A thread's last switch-out ends it: nothing of it counts after, and its
 * tid, reused by a new thread, is that thread's. */
static void test_dead_thread(void **state)
{
	struct live *l = started();
	const struct live_snapshot *s;
	const struct live_thread *t;

	(void)state;
	switch_(l, T0 + 10 * MS, PID, TID, 0x80, 0, 0, 0);
	/* a stale switch-in of the dead task: ignored */
	switch_(l, T0 + 20 * MS, 0, 0, 0, 0, PID, TID);
	assert_int_equal(live__snapshot(l, T0 + 100 * MS, &s), 0);
	t = row(s, TID);
	assert_non_null(t);
	assert_true(t->cpu_pct > 9.99 && t->cpu_pct < 10.01);
	assert_int_equal(live__snapshot(l, T0 + 200 * MS, &s), 0);
	assert_null(row(s, TID));
	live__free(l);
}

static void sampling(struct live *l, __u64 ts, __u32 kind)
{
	struct isr_ev_sampling e = { .kind = kind };

	feed(l, &e, ISR_EV_SAMPLING, sizeof(e), ts, 0, 0);
}

/* The budget's windows: on for the first 100 ms (10 launches), then off;
 * the release of the probes began at 100 ms, but its record comes after 3
 * launches made while they were being released; the next window's probes
 * caught 2 launches while they were being attached, before its record (at
 * 900 ms, when they were surely live), then 10 launches to the end of the
 * second. 20 launches in 200 ms of windows: 100 launches/s, not 125. */
static void test_launches_outside_the_windows(void **state)
{
	struct live *l = started();
	const struct live_snapshot *s;
	const struct live_thread *t;

	(void)state;
	for (int i = 0; i < 10; i++)
		call(l, T0 + (__u64)(5 + 10 * i) * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	for (int i = 0; i < 3; i++)
		call(l, T0 + (__u64)(101 + i) * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	sampling(l, T0 + 100 * MS, ISR_SAMPLING_OFF);
	call(l, T0 + 890 * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	call(l, T0 + 895 * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	sampling(l, T0 + 900 * MS, ISR_SAMPLING_ON);
	for (int i = 0; i < 10; i++)
		call(l, T0 + (__u64)(905 + 10 * i) * MS, ISR_CUDA_FN_cuLaunchKernel, 0);
	assert_int_equal(live__snapshot(l, T0 + 1000 * MS, &s), 0);
	t = row(s, TID);
	assert_non_null(t);
	print_message("%.1f launches/s\n", t->launches_per_s);
	assert_true(t->launches_per_s > 99.99 && t->launches_per_s < 100.01);
	assert_true(s->procs[0].launches_estimated);
	live__free(l);
}

/* Page-fault tracing switched the same way: 10 faults in its first 100 ms
 * (on from the first event), 3 made while its release was under way
 * (after the switch's timestamp, read before its record), none while off,
 * 10 in its window from 900 ms: 20 in the 200 ms it was on, 100 a second
 * (113 with the release's; and nothing sane without its start at the
 * first event). */
static void test_faults_outside_the_windows(void **state)
{
	struct live *l = started();
	const struct live_snapshot *s;
	const struct live_thread *t;
	struct isr_ev_page_fault f = { 0 };

	(void)state;
	for (int i = 0; i < 10; i++)
		feed(l, &f, ISR_EV_PAGE_FAULT, sizeof(f), T0 + (__u64)(5 + 10 * i) * MS, PID, TID);
	for (int i = 0; i < 3; i++)
		feed(l, &f, ISR_EV_PAGE_FAULT, sizeof(f), T0 + (__u64)(101 + i) * MS, PID, TID);
	sampling(l, T0 + 100 * MS, ISR_SAMPLING_FAULTS_OFF);
	sampling(l, T0 + 900 * MS, ISR_SAMPLING_FAULTS_ON);
	for (int i = 0; i < 10; i++)
		feed(l, &f, ISR_EV_PAGE_FAULT, sizeof(f), T0 + (__u64)(905 + 10 * i) * MS, PID, TID);
	assert_int_equal(live__snapshot(l, T0 + 1000 * MS, &s), 0);
	t = row(s, TID);
	assert_non_null(t);
	print_message("%.1f faults/s\n", t->faults_per_s);
	assert_true(t->faults_per_s > 99.99 && t->faults_per_s < 100.01);
	live__free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preempted_is_runnable),
		cmocka_unit_test(test_dead_thread),
		cmocka_unit_test(test_launches_outside_the_windows),
		cmocka_unit_test(test_faults_outside_the_windows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
