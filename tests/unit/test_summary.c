// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * analysis__summary on synthetic recordings built in memory: each test plants
 * a scheduling pattern with known on-CPU, off-CPU, run-queue and D-state
 * times and checks that the summary finds exactly those.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "summary.h"

#define MS 1000000ULL
#define T0 (1000 * MS)	/* recording start (monotonic) */

#include "synth.h"

#define US SYNTH_US

/* Holds for every thread of every summary: the window is split exactly
 * into on- and off-CPU time, and the parts of off-CPU nest. */
static void check_invariants(const struct summary *s)
{
	for (size_t i = 0; i < s->thread_count; i++) {
		const struct thread_summary *t = &s->threads[i];

		assert_true(t->end_ns >= t->start_ns);
		assert_int_equal(t->on_cpu_ns + t->off_cpu_ns, t->end_ns - t->start_ns);
		assert_true(t->runqueue_wait_ns <= t->off_cpu_ns);
		assert_true(t->blocked_io_ns <= t->off_cpu_ns - t->runqueue_wait_ns);
		assert_true(t->top_waker.blocked_ns <= t->off_cpu_ns - t->runqueue_wait_ns);
		assert_true(t->top_waker.wakeups <= t->wakeups);
		assert_true(t->start_ns >= s->start_ns && t->end_ns <= s->end_ns);
		assert_int_not_equal(t->tid, 0);
		if (i)
			assert_true(t[-1].pid < t->pid || (t[-1].pid == t->pid && t[-1].tid < t->tid) ||
				    (t[-1].pid == t->pid && t[-1].tid == t->tid && t[-1].start_ns <= t->start_ns));
	}
}

static struct summary *compute(struct synth *b)
{
	struct summary *s = NULL;

	assert_int_equal(analysis__summary(synth__recording(b), &s), 0);
	assert_non_null(s);
	check_invariants(s);
	analysis__free(synth__check_streamed(b, 4096, 0));
	return s;
}

/* The n-th (0-based) incarnation of tid. */
static const struct thread_summary *find_nth(const struct summary *s, __u32 tid, int nth)
{
	for (size_t i = 0; i < s->thread_count; i++)
		if (s->threads[i].tid == tid && nth-- == 0)
			return &s->threads[i];
	return NULL;
}

static const struct thread_summary *find(const struct summary *s, __u32 tid)
{
	const struct thread_summary *t = find_nth(s, tid, 0);

	assert_non_null(t);
	return t;
}

/* 5 x (1 ms on CPU, 100 ms asleep), then on CPU to the end of a 1 s window. */
static void test_sleeper(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "sleeper" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 100, "sleeper", 1, tids, comms);
	for (int i = 0; i < 5; i++) {
		__u64 burst_end = T0 + (__u64)i * 101 * MS + 1 * MS;

		ev_switch(b, burst_end, 100, 101, 0, 0, 0x1, 0);
		ev_wakeup(b, burst_end + 100 * MS, 100, 101, false);
		ev_switch(b, burst_end + 100 * MS, 0, 0, 100, 101, 0, 0);
	}
	s = compute(b);
	assert_int_equal(s->thread_count, 1);
	t = find(s, 101);
	assert_int_equal(t->pid, 100);
	assert_string_equal(t->comm, "sleeper");
	assert_int_equal(t->off_cpu_ns, 500 * MS);
	assert_int_equal(t->on_cpu_ns, 500 * MS);
	assert_int_equal(t->runqueue_wait_ns, 0);
	assert_int_equal(t->blocked_io_ns, 0);
	assert_int_equal(t->switches_voluntary, 5);
	assert_int_equal(t->switches_involuntary, 0);
	assert_int_equal(t->wakeups, 5);
	assert_false(t->created);
	assert_false(t->exited);
	assert_int_equal(s->start_ns, T0);
	assert_int_equal(s->end_ns, T0 + 1000 * MS);
	summary__free(s);
	synth__free(b);
}

/* Two threads share one CPU, preempting each other every 10 ms. */
static void test_preemption_runqueue(void **state)
{
	struct synth *b = synth__new(T0, T0 + 110 * MS);
	const struct thread_summary *a, *c;
	struct summary *s;

	(void)state;
	for (int k = 1; k <= 10; k++) {
		__u32 from = k % 2 ? 201 : 202, to = k % 2 ? 202 : 201;

		ev_switch(b, T0 + (__u64)k * 10 * MS, 200, from, 200, to, 0,
			  ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
	}
	/* the pid is a target because of an event emitted only for targets */
	ev_rename(b, T0 + 105 * MS, 200, 201, "a");
	s = compute(b);
	assert_int_equal(s->thread_count, 2);
	a = find(s, 201);
	c = find(s, 202);
	/* a: first event a switch-out, so it ran from the start */
	assert_int_equal(a->on_cpu_ns, 60 * MS);
	assert_int_equal(a->runqueue_wait_ns, 50 * MS);
	assert_int_equal(a->off_cpu_ns, 50 * MS);
	assert_int_equal(a->switches_involuntary, 5);
	assert_int_equal(a->switches_voluntary, 0);
	/* c: first event a switch-in; 0-10 ms off-CPU and not known runnable */
	assert_int_equal(c->on_cpu_ns, 50 * MS);
	assert_int_equal(c->off_cpu_ns, 60 * MS);
	assert_int_equal(c->runqueue_wait_ns, 50 * MS);
	assert_int_equal(c->switches_involuntary, 5);
	assert_string_equal(a->comm, "a");
	summary__free(s);
	synth__free(b);
}

/* Woken at 50 ms, on a CPU at 53 ms: 3 ms of run-queue wait. */
static void test_wakeup_latency(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 301 };
	const char *const comms[] = { "w" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 300, "w", 1, tids, comms);
	ev_switch(b, T0 + 5 * MS, 0, 0, 300, 301, 0, 0);
	ev_switch(b, T0 + 10 * MS, 300, 301, 0, 0, 0x1, 0);
	ev_wakeup(b, T0 + 50 * MS, 300, 301, false);
	ev_wakeup(b, T0 + 51 * MS, 300, 301, false);	/* already runnable: no restart */
	ev_switch(b, T0 + 53 * MS, 0, 0, 300, 301, 0, 0);
	s = compute(b);
	t = find(s, 301);
	assert_int_equal(t->on_cpu_ns, 52 * MS);
	assert_int_equal(t->off_cpu_ns, 48 * MS);
	assert_int_equal(t->runqueue_wait_ns, 3 * MS);
	assert_int_equal(t->off_cpu_ns - t->runqueue_wait_ns, 45 * MS);
	assert_int_equal(t->wakeups, 2);
	summary__free(s);
	synth__free(b);
}

/* Time before a thread's first event goes by that event's direction. */
static void test_first_event_attribution(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 11, 12, 13, 14, 15 };
	const char *const comms[] = { "out", "in", "woken", "faulter", "renamed" };
	struct summary *s;

	(void)state;
	synth__process(b, 10, "p", 5, tids, comms);
	ev_switch(b, T0 + 30 * MS, 10, 11, 0, 0, 0x1, 0);
	ev_switch(b, T0 + 30 * MS, 0, 0, 10, 12, 0, 0);
	ev_wakeup(b, T0 + 40 * MS, 10, 13, false);
	ev_fault(b, T0 + 50 * MS, 10, 14, 0, 0);
	ev_rename(b, T0 + 60 * MS, 10, 15, "named");
	s = compute(b);
	assert_int_equal(find(s, 11)->on_cpu_ns, 30 * MS);
	assert_int_equal(find(s, 11)->off_cpu_ns, 70 * MS);
	assert_int_equal(find(s, 12)->off_cpu_ns, 30 * MS);
	assert_int_equal(find(s, 12)->runqueue_wait_ns, 0);
	assert_int_equal(find(s, 12)->on_cpu_ns, 70 * MS);
	/* woken at 40 ms and never ran: off-CPU throughout, waiting from 40 ms */
	assert_int_equal(find(s, 13)->off_cpu_ns, 100 * MS);
	assert_int_equal(find(s, 13)->runqueue_wait_ns, 60 * MS);
	/* a fault is taken on a CPU: with no switch at all it ran throughout */
	assert_int_equal(find(s, 14)->on_cpu_ns, 100 * MS);
	/* a rename can come from another thread: it says nothing */
	assert_int_equal(find(s, 15)->off_cpu_ns, 100 * MS);
	assert_string_equal(find(s, 15)->comm, "named");
	summary__free(s);
	synth__free(b);
}

/* A thread forked at 10 ms runs 12-20 ms and exits; the kernel's final
 * switch-out of the dead task comes after its exit and is ignored. */
static void test_create_and_exit(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 401 };
	const char *const comms[] = { "main" };
	const struct thread_summary *p, *c, *again;
	struct summary *s;

	(void)state;
	synth__process(b, 400, "main", 1, tids, comms);
	ev_fork(b, T0 + 10 * MS, 400, 401, 400, 402, ISR_FORK_THREAD, "worker");
	ev_wakeup(b, T0 + 10 * MS, 400, 402, true);
	ev_switch(b, T0 + 12 * MS, 400, 401, 400, 402, 0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
	ev_exit(b, T0 + 20 * MS, 400, 402, "worker");
	ev_switch(b, T0 + 20 * MS + 500000, 400, 402, 400, 401, 0x80, 0);
	/* a thread whose exit event was lost ends at its dead task's switch-out */
	ev_fork(b, T0 + 30 * MS, 400, 401, 400, 403, ISR_FORK_THREAD, "lost-exit");
	ev_switch(b, T0 + 40 * MS, 400, 403, 0, 0, 0x80, 0);
	/* tid 402 reused by a new thread of the same process */
	ev_fork(b, T0 + 50 * MS, 400, 401, 400, 402, ISR_FORK_THREAD, "worker2");
	ev_wakeup(b, T0 + 50 * MS, 400, 402, true);
	s = compute(b);
	assert_int_equal(s->thread_count, 4);
	assert_true(find(s, 403)->exited);
	assert_int_equal(find(s, 403)->end_ns, T0 + 40 * MS);
	assert_int_equal(find(s, 403)->on_cpu_ns, 0);
	assert_int_equal(find(s, 403)->switches_voluntary, 0);
	p = find(s, 401);
	assert_int_equal(p->on_cpu_ns, 12 * MS + 79 * MS + 500000);
	assert_int_equal(p->runqueue_wait_ns, 8 * MS + 500000);
	assert_int_equal(p->switches_involuntary, 1);
	assert_false(p->created);
	c = find_nth(s, 402, 0);
	assert_non_null(c);
	assert_true(c->created);
	assert_true(c->exited);
	assert_int_equal(c->start_ns, T0 + 10 * MS);
	assert_int_equal(c->end_ns, T0 + 20 * MS);
	assert_int_equal(c->on_cpu_ns, 8 * MS);
	assert_int_equal(c->off_cpu_ns, 2 * MS);
	assert_int_equal(c->runqueue_wait_ns, 2 * MS);
	assert_int_equal(c->switches_voluntary + c->switches_involuntary, 0);
	assert_string_equal(c->comm, "worker");
	again = find_nth(s, 402, 1);
	assert_non_null(again);
	assert_true(again->created);
	assert_false(again->exited);
	assert_int_equal(again->start_ns, T0 + 50 * MS);
	assert_int_equal(again->runqueue_wait_ns, 50 * MS);
	assert_string_equal(again->comm, "worker2");
	summary__free(s);
	synth__free(b);
}

/* Children: a followed child process is summarized, an unfollowed one is
 * not even when its switches against a target are in the recording. */
static void test_fork_targets(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 451 };
	const char *const comms[] = { "parent" };
	struct summary *s;

	(void)state;
	synth__process(b, 451, "parent", 1, tids, comms);
	ev_fork(b, T0 + 10 * MS, 451, 451, 460, 460, ISR_FORK_FOLLOWED, "followed");
	ev_fork(b, T0 + 10 * MS, 451, 451, 470, 470, 0, "unfollowed");
	ev_switch(b, T0 + 20 * MS, 451, 451, 460, 460, 0x1, 0);
	ev_switch(b, T0 + 30 * MS, 460, 460, 470, 470, 0x1, 0);
	ev_switch(b, T0 + 40 * MS, 470, 470, 451, 451, 0x1, 0);
	s = compute(b);
	assert_int_equal(s->thread_count, 2);
	assert_null(find_nth(s, 470, 0));
	assert_true(find(s, 460)->created);
	assert_int_equal(find(s, 460)->on_cpu_ns, 10 * MS);
	assert_int_equal(find(s, 460)->start_ns, T0 + 10 * MS);
	assert_string_equal(find(s, 460)->comm, "followed");
	assert_int_equal(find(s, 451)->on_cpu_ns, 80 * MS);
	summary__free(s);
	synth__free(b);
}

/* A non-leader thread that calls exec takes over the leader's tid. */
static void test_exec_by_non_leader(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 700, 701 };
	const char *const comms[] = { "old", "old-thread" };
	const struct thread_summary *old_leader, *caller, *leader;
	struct summary *s;

	(void)state;
	synth__process(b, 700, "old", 2, tids, comms);
	ev_exit(b, T0 + 10 * MS, 700, 700, "");	/* no name: keeps its own */
	ev_exec(b, T0 + 12 * MS, 700, 700, 701, "new");
	s = compute(b);
	assert_int_equal(s->thread_count, 3);
	old_leader = find_nth(s, 700, 0);
	leader = find_nth(s, 700, 1);
	caller = find(s, 701);
	assert_true(old_leader->exited);
	assert_string_equal(old_leader->comm, "old");
	assert_int_equal(old_leader->end_ns, T0 + 10 * MS);
	assert_true(caller->exited);
	assert_int_equal(caller->on_cpu_ns, 12 * MS);
	assert_true(leader->created);
	assert_int_equal(leader->start_ns, T0 + 12 * MS);
	assert_int_equal(leader->on_cpu_ns, 88 * MS);
	assert_string_equal(leader->comm, "new");
	summary__free(s);
	synth__free(b);
}

/* Uninterruptible sleep counts as blocked I/O until the wakeup; run-queue
 * wait after it does not. A preempted task in D state is runnable, not blocked. */
static void test_d_state(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 801, 802 };
	const char *const comms[] = { "io", "preempted" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 800, "io", 2, tids, comms);
	ev_switch(b, T0 + 10 * MS, 800, 801, 0, 0, 0x2, 0);
	ev_wakeup(b, T0 + 40 * MS, 800, 801, false);
	ev_switch(b, T0 + 45 * MS, 0, 0, 800, 801, 0, 0);
	ev_switch(b, T0 + 60 * MS, 800, 801, 0, 0, 0x2, 0);	/* never woken again */
	ev_switch(b, T0 + 10 * MS, 800, 802, 0, 0, 0x2, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
	ev_switch(b, T0 + 20 * MS, 0, 0, 800, 802, 0, 0);
	s = compute(b);
	t = find(s, 801);
	assert_int_equal(t->blocked_io_ns, 30 * MS + 40 * MS);
	assert_int_equal(t->runqueue_wait_ns, 5 * MS);
	assert_int_equal(t->off_cpu_ns, 35 * MS + 40 * MS);
	assert_int_equal(t->switches_voluntary, 2);
	t = find(s, 802);
	assert_int_equal(t->blocked_io_ns, 0);
	assert_int_equal(t->runqueue_wait_ns, 10 * MS);
	assert_int_equal(t->switches_involuntary, 1);
	summary__free(s);
	synth__free(b);
}

static void test_faults(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 901 };
	const char *const comms[] = { "f" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 900, "f", 1, tids, comms);
	ev_fault(b, T0 + 1 * MS, 900, 901, 1000, ISR_FAULT_HAS_START);
	ev_fault(b, T0 + 2 * MS, 900, 901, 2000, ISR_FAULT_HAS_START | ISR_FAULT_WRITE);
	ev_fault(b, T0 + 3 * MS, 900, 901, 777777, 0);	/* no start: duration not valid */
	ev_fault(b, T0 + 4 * MS, 900, 901, 5 * MS, ISR_FAULT_MAJOR | ISR_FAULT_HAS_START);
	ev_fault(b, T0 + 5 * MS, 900, 901, 0, ISR_FAULT_MAJOR);
	ev_fault(b, T0 + 6 * MS, 900, 999, 1000, ISR_FAULT_HAS_START);	/* other thread */
	s = compute(b);
	t = find(s, 901);
	assert_int_equal(t->minor_faults, 3);
	assert_int_equal(t->major_faults, 2);
	assert_int_equal(t->fault_ns, 1000 + 2000 + 5 * MS);
	assert_int_equal(t->major_fault_ns, 5 * MS);
	assert_int_equal(find(s, 999)->minor_faults, 1);
	summary__free(s);
	synth__free(b);
}

/* A thread listed at the start that never appears in an event was off-CPU
 * (blocked) for the whole recording; threads come out sorted. */
static void test_idle_listed_and_sorted(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids_b[] = { 53, 51, 52 };
	const char *const comms_b[] = { "c", "a", "b" };
	const __u32 tids_a[] = { 5 };
	const char *const comms_a[] = { "" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 50, "b", 3, tids_b, comms_b);
	synth__process(b, 5, "procname", 1, tids_a, comms_a);
	ev_switch(b, T0 + 1 * MS, 50, 52, 0, 0, 0x1, 0);
	s = compute(b);
	assert_int_equal(s->thread_count, 4);
	assert_int_equal(s->threads[0].tid, 5);
	assert_int_equal(s->threads[1].tid, 51);
	assert_int_equal(s->threads[2].tid, 52);
	assert_int_equal(s->threads[3].tid, 53);
	t = find(s, 53);
	assert_int_equal(t->off_cpu_ns, 1000 * MS);
	assert_int_equal(t->on_cpu_ns, 0);
	assert_int_equal(t->runqueue_wait_ns, 0);
	assert_string_equal(t->comm, "c");
	/* no thread name anywhere: the process's */
	assert_string_equal(find(s, 5)->comm, "procname");
	summary__free(s);
	synth__free(b);
}

/* Counts per type, unknown types only in the total, drops and truncation
 * copied; an event too short for its type is counted but not used. */
static void test_counts_and_drops(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 61 };
	const char *const comms[] = { "x" };
	struct summary *s;

	(void)state;
	synth__process(b, 60, "x", 1, tids, comms);
	ev_switch(b, T0 + 1 * MS, 60, 61, 0, 0, 0x1, 0);
	ev_switch(b, T0 + 2 * MS, 0, 0, 60, 61, 0, 0);
	ev_wakeup(b, T0 + 3 * MS, 60, 61, false);
	ev_fault(b, T0 + 4 * MS, 60, 61, 0, 0);
	synth__event(b, 42, 32, T0 + 5 * MS, 60, 61);
	synth__event(b, ISR_EV_PAGE_FAULT, sizeof(struct isr_ev_hdr), T0 + 6 * MS, 60, 61);
	b->rec.drops[ISR_SRC_SCHED] = 7;
	b->rec.drops[ISR_SRC_WRITER] = 3;
	b->rec.truncated = true;
	s = compute(b);
	assert_int_equal(s->event_counts[ISR_EV_SCHED_SWITCH], 2);
	assert_int_equal(s->event_counts[ISR_EV_SCHED_WAKEUP], 1);
	assert_int_equal(s->event_counts[ISR_EV_PAGE_FAULT], 2);
	assert_int_equal(s->event_counts[ISR_EV_PROC_FORK], 0);
	assert_int_equal(s->event_total, 6);
	assert_int_equal(find(s, 61)->minor_faults, 1);
	assert_int_equal(s->drops[ISR_SRC_SCHED], 7);
	assert_int_equal(s->drops[ISR_SRC_WRITER], 3);
	assert_int_equal(s->drops_total, 10);
	assert_true(s->truncated);
	summary__free(s);
	synth__free(b);
}

/* No start or end in the file: the first and last events bound the window.
 * Events outside a stated window are clamped to it. */
static void test_window_and_clamping(void **state)
{
	struct synth *b = synth__new(0, 0);
	struct summary *s;

	(void)state;
	ev_rename(b, T0, 70, 71, "t");
	ev_switch(b, T0 + 10 * MS, 70, 71, 0, 0, 0x1, 0);
	ev_switch(b, T0 + 40 * MS, 0, 0, 70, 71, 0, 0);
	s = compute(b);
	assert_int_equal(s->start_ns, T0);
	assert_int_equal(s->end_ns, T0 + 40 * MS);
	assert_true(s->duration_s > 0.0399 && s->duration_s < 0.0401);
	assert_int_equal(find(s, 71)->on_cpu_ns, 10 * MS);
	assert_int_equal(find(s, 71)->off_cpu_ns, 30 * MS);
	summary__free(s);
	synth__free(b);

	b = synth__new(T0, T0 + 100 * MS);
	ev_switch(b, T0 - 5 * MS, 70, 71, 0, 0, 0x1, 0);
	ev_switch(b, T0 + 50 * MS, 0, 0, 70, 71, 0, 0);
	ev_switch(b, T0 + 150 * MS, 70, 71, 0, 0, 0x1, 0);
	ev_rename(b, T0, 70, 71, "t");
	s = compute(b);
	assert_int_equal(find(s, 71)->on_cpu_ns, 50 * MS);
	assert_int_equal(find(s, 71)->off_cpu_ns, 50 * MS);
	assert_int_equal(find(s, 71)->switches_voluntary, 2);
	summary__free(s);
	synth__free(b);
}

static void test_empty(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	struct summary *s;

	(void)state;
	s = compute(b);
	assert_int_equal(s->thread_count, 0);
	assert_int_equal(s->event_total, 0);
	assert_int_equal(s->end_ns - s->start_ns, 100 * MS);
	summary__free(s);
	synth__free(b);
	summary__free(NULL);
}

/* 4000 threads of 4 processes, 1M switches round-robin on 8 CPUs: every
 * thread gets exactly its share and the window still splits exactly. */
static void test_many_threads(void **state)
{
	enum { THREADS = 4000, ROUNDS = 250, CPUS = 8 };
	struct synth *b = synth__new(T0, T0 + (ROUNDS + 1) * (THREADS / CPUS) * MS);
	__u64 on_total = 0;
	struct summary *s;

	(void)state;
	b->cap = (size_t)THREADS * ROUNDS * sizeof(struct isr_ev_sched_switch) + 4096;
	b->data = malloc(b->cap);
	b->offs_cap = (size_t)THREADS * ROUNDS + 8;
	b->offs = malloc(b->offs_cap * sizeof(*b->offs));
	assert_non_null(b->data);
	assert_non_null(b->offs);
	for (int p = 0; p < 4; p++)
		ev_rename(b, T0, 10000 + p, 10000 + p, "leader");
	/* each CPU runs its threads in turn for 1 ms each */
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < THREADS / CPUS; k++)
			for (int cpu = 0; cpu < CPUS; cpu++) {
				int cur = k * CPUS + cpu, nxt = ((k + 1) % (THREADS / CPUS)) * CPUS + cpu;
				__u64 ts = T0 + ((__u64)r * (THREADS / CPUS) + k + 1) * MS;

				ev_switch(b, ts, 10000 + cur % 4, 20000 + cur, 10000 + nxt % 4, 20000 + nxt,
					  0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
			}
	s = compute(b);
	assert_int_equal(s->thread_count, THREADS + 4);
	for (size_t i = 0; i < s->thread_count; i++)
		on_total += s->threads[i].on_cpu_ns;
	/* 8 CPUs busy for the whole window, except the 4 idle leaders */
	assert_int_equal(on_total, CPUS * (s->end_ns - s->start_ns));
	assert_int_equal(find(s, 20000 + CPUS)->runqueue_wait_ns,
			 find(s, 20000 + CPUS)->off_cpu_ns - 1 * MS);
	summary__free(s);
	synth__free(b);
}

/* ---- CUDA ---------------------------------------------------------------------- */


static const struct cuda_fn_summary *find_fn(const struct summary *s, const char *name)
{
	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (!strcmp(s->cuda_fns[i].name, name))
			return &s->cuda_fns[i];
	fail_msg("no function %s in the summary", name);
	return NULL;
}

static __u64 failed_of(const struct process_summary *p, __u16 func)
{
	for (size_t i = 0; i < p->failed_count; i++)
		if (p->failed[i].func == func)
			return p->failed[i].count;
	return 0;
}

/* Every call counts under its exact function; names under their learner. */
static void test_cuda_function_counts(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids[] = { 101, 102 };
	const char *const comms[] = { "python3", "worker" };
	const struct cuda_fn_summary *f;
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 100, "python3", 2, tids, comms);
	for (int i = 0; i < 1000; i++)
		ev_launch(b, T0 + 1 * MS + (__u64)i * 1000, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
	for (int i = 0; i < 7; i++)
		ev_launch(b, T0 + 2 * MS + (__u64)i, 100, 101, ISR_CUDA_FN_cuLaunchKernelEx_ptsz, 0xb000);
	ev_launch(b, T0 + 3 * MS, 100, 102, ISR_CUDA_FN_cuGraphLaunch, 0xc000);
	ev_call(b, T0 + 10 * MS, 100, 101, ISR_CUDA_FN_cuCtxSynchronize_v2, 0, 300 * MS);
	ev_call(b, T0 + 400 * MS, 100, 101, ISR_CUDA_FN_cuCtxSynchronize_v2, 0, 100 * MS);
	ev_call(b, T0 + 600 * MS, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 50 * MS);
	ev_call(b, T0 + 700 * MS, 100, 101, ISR_CUDA_FN_cuMemcpyDtoH_v2, 0, 20 * MS);
	ev_call(b, T0 + 720 * MS, 100, 101, ISR_CUDA_FN_cuStreamQuery, 600, 1000);	/* not ready */
	ev_call(b, T0 + 721 * MS, 100, 101, ISR_CUDA_FN_cuStreamQuery, 400, 1000);	/* bad handle */
	ev_call(b, T0 + 722 * MS, 100, 101, ISR_CUDA_FN_cuEventSynchronize, 600, 1000);
	/* an async copy is entry-only: no duration, not sync time */
	ev_launch(b, T0 + 730 * MS, 100, 102, ISR_CUDA_FN_cuMemcpyHtoDAsync_v2, 0x1);
	ev_name(b, T0 + 1 * MS, 100, ISR_CUDA_FN_cuLibraryGetKernel, 0xa000, 0x10, "_Z4reluPfi");
	ev_name(b, T0 + 1 * MS, 100, ISR_CUDA_FN_cuLibraryGetKernel, 0xd000, 0x10, "k2");
	ev_name(b, T0 + 1 * MS, 100, ISR_CUDA_FN_cuKernelGetFunction, 0xe000, 0xd000, "");
	/* a function this version does not know */
	ev_call(b, T0 + 800 * MS, 100, 102, 999, 5, 1000);
	s = compute(b);

	assert_int_equal(s->event_counts[ISR_EV_CUDA_CALL], 1000 + 7 + 1 + 7 + 1 + 1);
	assert_int_equal(s->event_counts[ISR_EV_CUDA_NAME], 3);
	assert_int_equal(s->cuda_fn_count, 12);
	for (size_t i = 1; i < s->cuda_fn_count; i++)
		assert_true(s->cuda_fns[i - 1].func < s->cuda_fns[i].func);
	assert_int_equal(find_fn(s, "cuLaunchKernel")->calls, 1000);
	assert_int_equal(find_fn(s, "cuLaunchKernel")->returned, 0);
	assert_int_equal(find_fn(s, "cuLaunchKernelEx_ptsz")->calls, 7);
	assert_int_equal(find_fn(s, "cuGraphLaunch")->calls, 1);
	assert_int_equal(find_fn(s, "cuMemcpyHtoDAsync_v2")->calls, 1);
	f = find_fn(s, "cuCtxSynchronize_v2");
	assert_int_equal(f->calls, 2);
	assert_int_equal(f->returned, 2);
	assert_int_equal(f->total_ns, 400 * MS);
	assert_int_equal(f->max_ns, 300 * MS);
	assert_int_equal(f->failed, 0);
	f = find_fn(s, "cuStreamQuery");
	assert_int_equal(f->calls, 2);
	assert_int_equal(f->not_ready, 1);
	assert_int_equal(f->failed, 1);
	assert_int_equal(f->last_error, 400);
	/* NOT_READY is a failure for anything but a query */
	assert_int_equal(find_fn(s, "cuEventSynchronize")->failed, 1);
	assert_int_equal(find_fn(s, "cuLibraryGetKernel")->names, 2);
	assert_int_equal(find_fn(s, "cuLibraryGetKernel")->calls, 0);
	assert_int_equal(find_fn(s, "cuKernelGetFunction")->names, 1);
	f = find_fn(s, "cuda_fn_999");
	assert_int_equal(f->func, 999);
	assert_int_equal(f->calls, 1);
	assert_int_equal(f->failed, 1);
	assert_string_equal(summary__cuda_fn_name(s, 999), "cuda_fn_999");
	assert_string_equal(summary__cuda_fn_name(s, ISR_CUDA_FN_cuLaunchKernel), "cuLaunchKernel");
	assert_null(summary__cuda_fn_name(s, ISR_CUDA_FN_cuMemAlloc_v2));

	assert_int_equal(s->process_count, 1);
	assert_int_equal(failed_of(&s->processes[0], ISR_CUDA_FN_cuStreamQuery), 1);
	assert_int_equal(failed_of(&s->processes[0], ISR_CUDA_FN_cuEventSynchronize), 1);
	assert_int_equal(failed_of(&s->processes[0], 999), 1);
	assert_int_equal(s->processes[0].failed_count, 3);
	assert_int_equal(s->processes[0].device_peak_bytes, 0);

	t = find(s, 101);
	assert_int_equal(t->cuda_calls, 1000 + 7 + 7);
	assert_int_equal(t->cuda_launches, 1007);
	/* the synchronizations (format/cuda_funcs.h, ISR_CUDA_K_SYNC): not
	 * the queries, which return at once */
	assert_int_equal(t->cuda_sync_ns, 470 * MS + 1000);
	assert_int_equal(t->cuda_sync_fns[0], ISR_CUDA_FN_cuCtxSynchronize_v2);
	assert_int_equal(t->cuda_sync_fns[1], ISR_CUDA_FN_cuStreamSynchronize);
	assert_int_equal(t->cuda_sync_fns[2], ISR_CUDA_FN_cuMemcpyDtoH_v2);
	t = find(s, 102);
	assert_int_equal(t->cuda_calls, 3);
	assert_int_equal(t->cuda_launches, 1);
	assert_int_equal(t->cuda_sync_ns, 0);
	assert_int_equal(t->cuda_sync_fns[0], 0);
	summary__free(s);
	synth__free(b);
}

/* Device memory is matched by address, peak is the highest live value, and
 * only calls that succeeded count. */
static void test_cuda_device_memory(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct process_summary *p;
	struct summary *s;

	(void)state;
	/* appended out of time order: the summary works on the sorted timeline */
	ev_mem(b, T0 + 40 * MS, 100, ISR_CUDA_FN_cuMemFree_v2, 0, 0xa0000, 0);		/* A */
	ev_mem(b, T0 + 10 * MS, 100, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0xa0000, 100 * MIB);	/* A */
	ev_mem(b, T0 + 20 * MS, 100, ISR_CUDA_FN_cuMemAllocAsync, 0, 0xb0000, 50 * MIB);	/* B */
	ev_mem(b, T0 + 30 * MS, 100, ISR_CUDA_FN_cuMemAlloc_v2, 2, 0xc0000, 4096 * MIB);	/* OOM */
	ev_mem(b, T0 + 50 * MS, 100, ISR_CUDA_FN_cuMemFree_v2, 0, 0x99000, 0);		/* before */
	ev_mem(b, T0 + 60 * MS, 100, ISR_CUDA_FN_cuMemAllocManaged, 0, 0xd0000, 30 * MIB);	/* D */
	ev_mem(b, T0 + 70 * MS, 100, ISR_CUDA_FN_cuMemFreeAsync_ptsz, 0, 0xb0000, 0);	/* B */
	ev_mem(b, T0 + 80 * MS, 100, ISR_CUDA_FN_cuMemFree_v2, 1, 0xd0000, 0);		/* fails */
	ev_mem(b, T0 + 85 * MS, 100, ISR_CUDA_FN_cuMemFree_v2, 0, 0, 0);			/* NULL */
	ev_mem(b, T0 + 90 * MS, 100, ISR_CUDA_FN_cuMemCreate, 0, 0x7001, 200 * MIB);
	ev_mem(b, T0 + 95 * MS, 100, ISR_CUDA_FN_cuMemMap, 0, 0xe0000, 200 * MIB);	/* maps, no new memory */
	ev_mem(b, T0 + 100 * MS, 100, ISR_CUDA_FN_cuMemRelease, 0, 0x7001, 0);
	ev_mem(b, T0 + 110 * MS, 100, ISR_CUDA_FN_cuMemRelease, 0, 0x7002, 0);		/* before */
	/* pinned host memory is apart */
	ev_mem(b, T0 + 120 * MS, 100, ISR_CUDA_FN_cuMemAllocHost_v2, 0, 0xf0000, 10 * MIB);
	ev_mem(b, T0 + 130 * MS, 100, ISR_CUDA_FN_cuMemHostAlloc, 0, 0xf8000, 20 * MIB);
	ev_mem(b, T0 + 140 * MS, 100, ISR_CUDA_FN_cuMemFreeHost, 0, 0xf0000, 0);
	/* an allocation whose return was not seen changes nothing */
	ev_mem(b, T0 + 150 * MS, 100, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x120000, 1 * MIB);
	((struct isr_ev_cuda_call *)(b->data + b->offs[b->count - 1]))->flags = 0;
	/* an address allocated again without a free seen: the new size counts */
	ev_mem(b, T0 + 160 * MS, 100, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x130000, 8 * MIB);
	ev_mem(b, T0 + 170 * MS, 100, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x130000, 2 * MIB);

	/* a second process: its own addresses; all gone when it exits */
	ev_mem(b, T0 + 10 * MS, 200, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0xa0000, 7 * MIB);
	ev_mem(b, T0 + 20 * MS, 200, ISR_CUDA_FN_cuMemAllocHost_v2, 0, 0xf0000, 3 * MIB);
	synth__event(b, ISR_EV_PROC_EXIT, sizeof(struct isr_ev_proc_exit), T0 + 500 * MS, 200, 200);
	((struct isr_ev_proc_exit *)(b->data + b->offs[b->count - 1]))->flags = ISR_EXIT_GROUP_DEAD;
	/* a third: exec replaces the image and its memory */
	ev_mem(b, T0 + 10 * MS, 300, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0xa0000, 5 * MIB);
	ev_exec(b, T0 + 20 * MS, 300, 300, 300, "new");
	ev_mem(b, T0 + 30 * MS, 300, ISR_CUDA_FN_cuMemFree_v2, 0, 0xa0000, 0);
	s = compute(b);

	assert_int_equal(s->process_count, 3);
	p = summary__process(s, 100);
	assert_non_null(p);
	/* A 100 + B 50 = 150; - A; + D 30 = 80; - B = 30; + VMM 200 = 230; - VMM = 30;
	 * + 8 = 38; the same address at 2 = 32 */
	assert_int_equal(p->device_live_bytes, 32 * MIB);
	assert_int_equal(p->device_peak_bytes, 230 * MIB);
	assert_int_equal(p->pinned_host_live_bytes, 20 * MIB);
	assert_int_equal(p->pinned_host_peak_bytes, 30 * MIB);
	assert_int_equal(p->unknown_frees, 2);
	assert_int_equal(p->failed_count, 2);
	assert_int_equal(p->failed[0].func, ISR_CUDA_FN_cuMemAlloc_v2);
	assert_int_equal(p->failed[0].count, 1);
	assert_int_equal(p->failed[1].func, ISR_CUDA_FN_cuMemFree_v2);
	assert_int_equal(p->failed[1].count, 1);
	assert_int_equal(find_fn(s, "cuMemAlloc_v2")->last_error, 2);

	p = summary__process(s, 200);
	assert_non_null(p);
	assert_int_equal(p->device_live_bytes, 0);
	assert_int_equal(p->device_peak_bytes, 7 * MIB);
	assert_int_equal(p->pinned_host_live_bytes, 0);
	assert_int_equal(p->pinned_host_peak_bytes, 3 * MIB);
	assert_int_equal(p->failed_count, 0);

	p = summary__process(s, 300);
	assert_int_equal(p->device_live_bytes, 0);
	assert_int_equal(p->device_peak_bytes, 5 * MIB);
	assert_int_equal(p->unknown_frees, 1);	/* the old image's address */
	assert_null(summary__process(s, 400));
	summary__free(s);
	synth__free(b);
}

/* 20000 live allocations, freed in a scattered order: every free finds its
 * allocation, however the addresses collide in the table. */
static void test_cuda_many_allocations(void **state)
{
	enum { N = 20000 };
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct process_summary *p;
	__u64 total = 0, odd = 0;
	struct summary *s;

	(void)state;
	for (__u64 i = 1; i <= N; i++) {
		ev_mem(b, T0 + i, 100, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x700000000000ULL + i * 0x200000, i);
		total += i;
		odd += i % 2 ? i : 0;
	}
	/* free the odd ones, stepping through them with a stride prime to N */
	for (__u64 k = 0; k < N / 2; k++) {
		__u64 i = 1 + 2 * ((k * 7919) % (N / 2));

		ev_mem(b, T0 + 100 * MS + k, 100, ISR_CUDA_FN_cuMemFree_v2, 0, 0x700000000000ULL + i * 0x200000, 0);
	}
	/* pid 0 is no process: ignored */
	ev_mem(b, T0 + 300 * MS, 0, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x1000, 1 * MIB);
	s = compute(b);
	p = summary__process(s, 100);
	assert_non_null(p);
	assert_int_equal(p->device_peak_bytes, total);
	assert_int_equal(p->device_live_bytes, total - odd);
	assert_int_equal(p->unknown_frees, 0);
	assert_int_equal(s->process_count, 1);
	summary__free(s);
	synth__free(b);
}

/* Launch handles get their names from cuda_name events, aliases the name of
 * their kernel (also when the alias is learned first); a handle never named
 * shows as kernel@0x...; graph launches are not kernels. */
static void test_cuda_kernels(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	char long_name[ISR_KERNEL_NAME_LEN];
	const struct kernel_summary *k;
	struct summary *s;

	(void)state;
	ev_name(b, T0 + 1 * MS, 100, ISR_CUDA_FN_cuLibraryGetKernel, 0x1000, 0x10, "_Z11relu_kernelPfi");
	ev_name(b, T0 + 2 * MS, 100, ISR_CUDA_FN_cuKernelGetFunction, 0x2000, 0x1000, "");
	ev_name(b, T0 + 3 * MS, 100, ISR_CUDA_FN_cuModuleGetFunction, 0x3000, 0x20, "gemm_kernel");
	ev_name(b, T0 + 4 * MS, 100, ISR_CUDA_FN_cuKernelGetFunction, 0x5000, 0x6000, "");
	ev_name(b, T0 + 5 * MS, 100, ISR_CUDA_FN_cuLibraryGetKernel, 0x6000, 0x10, "late_kernel");
	ev_name(b, T0 + 6 * MS, 200, ISR_CUDA_FN_cuModuleGetFunction, 0x3000, 0x20, "other_process_kernel");
	for (int i = 0; i < 5; i++)
		ev_launch(b, T0 + 10 * MS + (__u64)i, 100, 100, ISR_CUDA_FN_cuLaunchKernel, 0x2000);
	for (int i = 0; i < 2; i++)
		ev_launch(b, T0 + 20 * MS + (__u64)i, 100, 100, ISR_CUDA_FN_cuLaunchKernelEx, 0x1000);
	for (int i = 0; i < 3; i++)
		ev_launch(b, T0 + 30 * MS + (__u64)i, 100, 100, ISR_CUDA_FN_cuLaunchKernel_ptsz, 0x3000);
	for (int i = 0; i < 4; i++)
		ev_launch(b, T0 + 40 * MS + (__u64)i, 100, 100, ISR_CUDA_FN_cuLaunchKernel, 0x5000);
	ev_launch(b, T0 + 50 * MS, 100, 100, ISR_CUDA_FN_cuLaunchCooperativeKernel, 0x4000);
	ev_launch(b, T0 + 60 * MS, 100, 100, ISR_CUDA_FN_cuGraphLaunch, 0x9000);
	ev_launch(b, T0 + 70 * MS, 200, 200, ISR_CUDA_FN_cuLaunchKernel, 0x3000);
	/* a C++ name cut by the probe cannot be demangled: shown as cut */
	memset(long_name, 0, sizeof(long_name));
	memcpy(long_name, "_ZN2at6native", 13);
	memset(long_name + 13, 'x', ISR_KERNEL_NAME_LEN - 1 - 13);
	ev_name(b, T0 + 7 * MS, 300, ISR_CUDA_FN_cuModuleGetFunction, 0x7000, 0x20, long_name);
	ev_launch(b, T0 + 80 * MS, 300, 300, ISR_CUDA_FN_cuLaunchKernel, 0x7000);
	s = compute(b);

	assert_int_equal(s->kernel_count, 7);
	k = &s->kernels[0];
	assert_int_equal(k->pid, 100);
	assert_int_equal(k->handle, 0x2000);
	assert_string_equal(k->name, "relu_kernel(float*, int)");
	assert_true(k->named);
	assert_int_equal(k->launches, 5);
	assert_int_equal(s->kernels[1].handle, 0x5000);
	assert_string_equal(s->kernels[1].name, "late_kernel");
	assert_int_equal(s->kernels[1].launches, 4);
	assert_int_equal(s->kernels[2].handle, 0x3000);
	assert_string_equal(s->kernels[2].name, "gemm_kernel");
	assert_int_equal(s->kernels[3].handle, 0x1000);
	assert_string_equal(s->kernels[3].name, "relu_kernel(float*, int)");
	assert_int_equal(s->kernels[3].launches, 2);
	/* one launch each: pid 100 before pid 200 */
	assert_int_equal(s->kernels[4].handle, 0x4000);
	assert_string_equal(s->kernels[4].name, "kernel@0x4000");
	assert_false(s->kernels[4].named);
	assert_int_equal(s->kernels[5].pid, 200);
	assert_string_equal(s->kernels[5].name, "other_process_kernel");
	assert_int_equal(s->kernels[6].pid, 300);
	assert_int_equal(strlen(s->kernels[6].name), ISR_KERNEL_NAME_LEN - 1 + strlen("…"));
	assert_memory_equal(s->kernels[6].name, long_name, ISR_KERNEL_NAME_LEN - 1);
	assert_string_equal(s->kernels[6].name + ISR_KERNEL_NAME_LEN - 1, "…");
	assert_int_equal(find(s, 100)->cuda_launches, 16);
	summary__free(s);
	synth__free(b);
}

/* GIL wait is RestoreThread's entry to return; hold runs from that return
 * (or the window start, for a thread first seen releasing) to the next
 * SaveThread, the thread's exit or the end of the recording. */
static void test_gil_wait_and_hold(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids[] = { 501, 502 };
	const char *const comms[] = { "python3", "worker" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 500, "python3", 2, tids, comms);
	/* 501: held 12-30 ms and 45 ms + 123 ns - 100 ms; holds from 900 ms + 7 ns to the end */
	ev_gil(b, T0 + 10 * MS, 500, 501, ISR_GIL_ACQUIRE, 2 * MS);
	ev_gil(b, T0 + 30 * MS, 500, 501, ISR_GIL_RELEASE, 0);
	ev_gil(b, T0 + 40 * MS, 500, 501, ISR_GIL_ACQUIRE, 5 * MS + 123);
	ev_gil(b, T0 + 100 * MS, 500, 501, ISR_GIL_RELEASE, 0);
	ev_gil(b, T0 + 900 * MS, 500, 501, ISR_GIL_ACQUIRE, 7);
	/* 502: first seen releasing at 20 ms, so it held it from its window
	 * start; a second release adds nothing; takes it at 80 ms and exits
	 * holding it at 300 ms */
	ev_gil(b, T0 + 20 * MS, 500, 502, ISR_GIL_RELEASE, 0);
	ev_gil(b, T0 + 25 * MS, 500, 502, ISR_GIL_RELEASE, 0);
	ev_gil(b, T0 + 50 * MS, 500, 502, ISR_GIL_ACQUIRE, 30 * MS);
	ev_exit(b, T0 + 300 * MS, 500, 502, "worker");
	/* 503: created at 100 ms, first seen releasing at 150 ms: held since 100 ms */
	ev_fork(b, T0 + 100 * MS, 500, 501, 500, 503, ISR_FORK_THREAD, "late");
	ev_wakeup(b, T0 + 100 * MS, 500, 503, true);
	ev_gil(b, T0 + 150 * MS, 500, 503, ISR_GIL_RELEASE, 0);
	ev_gil(b, T0 + 160 * MS, 500, 503, ISR_GIL_ACQUIRE, 1 * MS);
	ev_gil(b, T0 + 170 * MS, 500, 503, ISR_GIL_RELEASE, 0);
	s = compute(b);
	assert_int_equal(s->thread_count, 3);

	t = find(s, 501);
	assert_int_equal(t->gil_acquisitions, 3);
	assert_int_equal(t->gil_wait_ns, 2 * MS + 5 * MS + 123 + 7);
	assert_int_equal(t->gil_hold_ns, 18 * MS + (55 * MS - 123) + (100 * MS - 7));
	/* GIL events are made on a CPU: a thread with no switches ran throughout */
	assert_int_equal(t->on_cpu_ns, 1000 * MS);

	t = find(s, 502);
	assert_true(t->exited);
	assert_int_equal(t->gil_acquisitions, 1);
	assert_int_equal(t->gil_wait_ns, 30 * MS);
	assert_int_equal(t->gil_hold_ns, 20 * MS + 220 * MS);

	t = find(s, 503);
	assert_int_equal(t->start_ns, T0 + 100 * MS);
	assert_int_equal(t->gil_acquisitions, 1);
	assert_int_equal(t->gil_wait_ns, 1 * MS);
	assert_int_equal(t->gil_hold_ns, 50 * MS + 9 * MS);

	assert_int_equal(s->gil_acquire_events, 5);
	assert_int_equal(s->gil_release_events, 6);
	assert_int_equal(s->event_counts[ISR_EV_GIL], 11);
	assert_int_equal(s->event_total, 14);
	summary__free(s);
	synth__free(b);
}

/* Waits that straddle the recording's bounds count only inside it; a
 * thread with no GIL events has no GIL times. */
static void test_gil_clamped_to_recording(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	const __u32 tids[] = { 601, 602, 603 };
	const char *const comms[] = { "early", "late", "quiet" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 600, "p", 3, tids, comms);
	/* entered 3 ms before the start, returned 2 ms after it, released at 12 ms */
	ev_gil(b, T0 - 3 * MS, 600, 601, ISR_GIL_ACQUIRE, 5 * MS);
	ev_gil(b, T0 + 12 * MS, 600, 601, ISR_GIL_RELEASE, 0);
	/* entered 5 ms before the end, still waiting at the end */
	ev_gil(b, T0 + 95 * MS, 600, 602, ISR_GIL_ACQUIRE, 10 * MS);
	ev_switch(b, T0 + 50 * MS, 600, 603, 0, 0, 0x1, 0);
	s = compute(b);

	t = find(s, 601);
	assert_int_equal(t->gil_wait_ns, 2 * MS);
	assert_int_equal(t->gil_hold_ns, 10 * MS);
	assert_int_equal(t->gil_acquisitions, 1);
	t = find(s, 602);
	assert_int_equal(t->gil_wait_ns, 5 * MS);
	assert_int_equal(t->gil_hold_ns, 0);
	assert_int_equal(t->gil_acquisitions, 1);
	t = find(s, 603);
	assert_int_equal(t->gil_wait_ns, 0);
	assert_int_equal(t->gil_hold_ns, 0);
	assert_int_equal(t->gil_acquisitions, 0);
	assert_int_equal(s->gil_acquire_events, 2);
	assert_int_equal(s->gil_release_events, 1);
	summary__free(s);
	synth__free(b);
}

/* infer (tid 501) blocks 80 ms in each of ten 100 ms cycles and runs 2 ms
 * after every wakeup. loader (tid 502) ends eight of those waits (plus one
 * wakeup of an infer already runnable), the idle task one, an untraced task
 * (pid 900, tid 901) one; infer once wakes itself while running. */
static void test_top_waker(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids[] = { 501, 502 };
	const char *const comms[] = { "infer", "loader" };
	const struct thread_summary *t, *w;
	struct summary *s;

	(void)state;
	synth__process(b, 500, "app", 2, tids, comms);
	ev_wakeup_by(b, T0 + 95 * MS, 500, 501, 500, 501);
	for (int i = 0; i < 10; i++) {
		__u64 c = T0 + (__u64)i * 100 * MS;
		__u32 wpid = i < 8 ? 500 : i == 8 ? 0 : 900;
		__u32 wtid = i < 8 ? 502 : i == 8 ? 0 : 901;

		ev_switch(b, c + 10 * MS, 500, 501, 0, 0, 0x1, 0);
		ev_wakeup_by(b, c + 90 * MS, 500, 501, wpid, wtid);
		if (i == 0)
			ev_wakeup_by(b, c + 91 * MS, 500, 501, 500, 502);
		ev_switch(b, c + 92 * MS, 0, 0, 500, 501, 0, 0);
	}
	s = compute(b);
	t = find(s, 501);
	assert_int_equal(t->wakeups, 12);
	assert_int_equal(t->off_cpu_ns - t->runqueue_wait_ns, 800 * MS);
	assert_int_equal(t->runqueue_wait_ns, 20 * MS);
	assert_int_equal(t->top_waker.pid, 500);
	assert_int_equal(t->top_waker.tid, 502);
	assert_int_equal(t->top_waker.wakeups, 9);
	/* the eight blocked waits loader ended, not the idle's or pid 900's */
	assert_int_equal(t->top_waker.blocked_ns, 640 * MS);
	w = summary__thread(s, t->top_waker.pid, t->top_waker.tid);
	assert_non_null(w);
	assert_string_equal(w->comm, "loader");
	assert_null(summary__thread(s, 900, 901));
	assert_null(summary__thread(s, 501, 502));
	/* loader itself was never woken */
	assert_int_equal(find(s, 502)->top_waker.tid, 0);
	summary__free(s);
	synth__free(b);
}

/* Wakeups by the idle task and by the thread itself name no waker; the
 * one that wakes a thread most often wins, equals by the blocked time
 * they ended. */
static void test_top_waker_ignored_and_ties(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids[] = { 601, 602 };
	const char *const comms[] = { "a", "b" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 600, "p", 2, tids, comms);
	for (int i = 0; i < 5; i++) {
		__u64 c = T0 + (__u64)i * 100 * MS;

		ev_switch(b, c + 10 * MS, 600, 601, 0, 0, 0x1, 0);
		ev_wakeup_by(b, c + 50 * MS, 600, 601, i % 2 ? 0 : 600, i % 2 ? 0 : 601);
		ev_switch(b, c + 50 * MS, 0, 0, 600, 601, 0, 0);
	}
	/* b: woken once by 700/701 after 10 ms blocked, once by 800/801 after 30 ms */
	ev_switch(b, T0 + 100 * MS, 600, 602, 0, 0, 0x1, 0);
	ev_wakeup_by(b, T0 + 110 * MS, 600, 602, 700, 701);
	ev_switch(b, T0 + 110 * MS, 0, 0, 600, 602, 0, 0);
	ev_switch(b, T0 + 200 * MS, 600, 602, 0, 0, 0x1, 0);
	ev_wakeup_by(b, T0 + 230 * MS, 600, 602, 800, 801);
	ev_switch(b, T0 + 230 * MS, 0, 0, 600, 602, 0, 0);
	s = compute(b);
	t = find(s, 601);
	assert_int_equal(t->wakeups, 5);
	assert_int_equal(t->top_waker.tid, 0);
	assert_int_equal(t->top_waker.wakeups, 0);
	t = find(s, 602);
	assert_int_equal(t->top_waker.pid, 800);
	assert_int_equal(t->top_waker.tid, 801);
	assert_int_equal(t->top_waker.wakeups, 1);
	assert_int_equal(t->top_waker.blocked_ns, 30 * MS);
	summary__free(s);
	synth__free(b);
}

static void ev_sampling(struct synth *b, __u64 ts, __u32 kind, __u64 switch_ns)
{
	struct isr_ev_sampling *e = synth__event(b, ISR_EV_SAMPLING, sizeof(*e), ts, 0, 0);

	e->kind = kind;
	e->budget_ppm = 10000;
	e->hit_cost_ps = 700000;
	e->switch_ns = switch_ns;
}

/*
 * The budget switched the hot path off at 1, 4 and 7 s and on at 3, 6 and
 * 9 s of a 10 s recording; pid 100 launches 1000 times a second until its
 * last synchronization at 9.5 s (it exits at 9.9 s), so 3500 of its 9500
 * launches are recorded. The gaps are filled at the rate of the windows
 * around them, up to that last CUDA call: 9500 again, per function, kernel
 * and thread; its synchronizations (never switched off) and pid 200 (no
 * launches) are not scaled.
 */
static void test_sampled_hot_path(void **state)
{
	struct synth *b = synth__new(T0, T0 + 10000 * MS);
	const __u64 on[] = { 0, 3000, 6000, 9000 }, off[] = { 1000, 4000, 7000, 9500 };
	const __u32 tids[] = { 101 }, tids2[] = { 201 };
	const char *const comms[] = { "python3" }, *const comms2[] = { "idle" };
	const struct cuda_fn_summary *f = NULL;
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 100, "python3", 1, tids, comms);
	synth__process(b, 200, "idle", 1, tids2, comms2);
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	for (int w = 0; w < 4; w++) {
		if (w)
			ev_sampling(b, T0 + on[w] * MS, ISR_SAMPLING_ON, 4 * MS);
		if (w < 3)
			ev_sampling(b, T0 + off[w] * MS, ISR_SAMPLING_OFF, 30 * MS);
		for (__u64 ms = on[w]; ms < off[w]; ms++)
			ev_launch(b, T0 + ms * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
		ev_call(b, T0 + on[w] * MS + 100 * MS, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, MS);
	}
	ev_call(b, T0 + 5000 * MS, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, MS);
	ev_call(b, T0 + 9500 * MS, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, MS);
	ev_exit(b, T0 + 9900 * MS, 100, 101, "python3");
	ev_switch(b, T0 + 2000 * MS, 200, 201, 0, 0, 0x1, 0);
	s = compute(b);

	assert_true(s->sampling.budget);
	assert_true(s->sampling.sampled);
	assert_int_equal(s->sampling.windows, 4);
	/* windows: 1 + 1 + 1 + 1 s (the last one runs to the end of the recording) */
	assert_int_equal(s->sampling.on_ns, 4000 * MS);
	assert_true(s->sampling.budget_pct > 0.999 && s->sampling.budget_pct < 1.001);
	assert_true(s->sampling.hit_cost_ns > 699.9 && s->sampling.hit_cost_ns < 700.1);
	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].func == ISR_CUDA_FN_cuLaunchKernel)
			f = &s->cuda_fns[i];
	assert_non_null(f);
	assert_int_equal(f->observed, 3500);
	assert_true(f->estimated);
	assert_int_equal(f->calls, 9500);
	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].func == ISR_CUDA_FN_cuStreamSynchronize) {
			assert_int_equal(s->cuda_fns[i].calls, 6);
			assert_false(s->cuda_fns[i].estimated);
		}
	assert_int_equal(s->kernel_count, 1);
	assert_int_equal(s->kernels[0].launches, 9500);
	assert_int_equal(s->kernels[0].observed_launches, 3500);
	assert_true(s->kernels[0].estimated);
	t = find(s, 101);
	assert_true(t->cuda_estimated);
	assert_int_equal(t->cuda_launches, 9500);
	assert_int_equal(t->cuda_launches_observed, 3500);
	assert_int_equal(t->cuda_calls, 9506);
	t = find(s, 201);
	assert_false(t->cuda_estimated);
	assert_int_equal(summary__thread(s, 0, 0), NULL);	/* the sampling events are about no task */
	summary__free(s);
	synth__free(b);
}

/*
 * Page-fault tracing sampled by its budget: on from the start to 1 s and
 * from 5 to 6 s of a 10 s recording. Thread 101 runs from 0 to 2 s and
 * from 4 to 8 s and faults once a millisecond while it runs: 2000 faults
 * seen in its 2 s on a CPU inside the windows, extrapolated over its 6 s
 * on one to 6000, its fault time alike (no cost was measured: nothing is
 * taken out for tracing). Thread 201 runs only between the windows: no
 * fault seen, nothing extrapolated.
 */
static void test_sampled_faults(void **state)
{
	struct synth *b = synth__new(T0, T0 + 10000 * MS);
	const __u32 tids[] = { 101 }, tids2[] = { 201 };
	const char *const comms[] = { "worker" }, *const comms2[] = { "other" };
	const struct thread_summary *t;
	struct summary *s;

	(void)state;
	synth__process(b, 100, "worker", 1, tids, comms);
	synth__process(b, 200, "other", 1, tids2, comms2);
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	ev_switch(b, T0, 0, 0, 100, 101, 0, 0);
	for (__u64 ms = 0; ms < 1000; ms++)
		ev_fault(b, T0 + ms * MS + MS / 2, 100, 101, 10000, ISR_FAULT_HAS_START);
	ev_sampling(b, T0 + 1000 * MS, ISR_SAMPLING_FAULTS_OFF, MS);
	ev_switch(b, T0 + 2000 * MS, 100, 101, 200, 201, 0x1, 0);
	ev_switch(b, T0 + 4000 * MS, 200, 201, 100, 101, 0x1, 0);
	ev_sampling(b, T0 + 5000 * MS, ISR_SAMPLING_FAULTS_ON, MS);
	for (__u64 ms = 5000; ms < 6000; ms++)
		ev_fault(b, T0 + ms * MS + MS / 2, 100, 101, 10000, ISR_FAULT_HAS_START);
	ev_sampling(b, T0 + 6000 * MS, ISR_SAMPLING_FAULTS_OFF, MS);
	ev_switch(b, T0 + 8000 * MS, 100, 101, 0, 0, 0x1, 0);
	s = compute(b);

	assert_true(s->sampling.faults_sampled);
	assert_false(s->sampling.sampled);	/* the hot path was never switched */
	assert_int_equal(s->sampling.fault_windows, 2);
	assert_int_equal(s->sampling.faults_on_ns, 2000 * MS);
	assert_true(s->sampling.faults_coverage > 0.1999 && s->sampling.faults_coverage < 0.2001);
	t = find(s, 101);
	assert_int_equal(t->on_cpu_ns, 6000 * MS);
	assert_true(t->faults_estimated);
	assert_int_equal(t->minor_faults, 6000);
	assert_int_equal(t->major_faults, 0);
	assert_int_equal(t->fault_ns, 60 * MS);
	t = find(s, 201);
	assert_false(t->faults_estimated);
	assert_int_equal(t->minor_faults, 0);
	summary__free(s);
	synth__free(b);
}

/*
 * The async copies under a budget of their own (the costs say
 * ISR_COSTS_COPIES_APART): the hot path is switched off at 1 s of a 10 s
 * recording for good, the copies' probes from 4 to 6 s. pid 100 copies
 * every 10 ms and launches every ms from 0 to 10 s, with a synchronization
 * at the start and at 9.999 s: 800 of its 1000 copies are recorded and
 * extrapolated by its span of CUDA calls over their windows' part of it
 * (1.25) to 1000, not by the hot path's scale; its launches by the hot
 * path's alone.
 */
static void test_sampled_copies_apart(void **state)
{
	struct synth *b = synth__new(T0, T0 + 10000 * MS);
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "python3" };
	const struct cuda_fn_summary *f = NULL;
	const struct thread_summary *t;
	struct isr_ev_sampling *costs;
	struct summary *s;

	(void)state;
	synth__process(b, 100, "python3", 1, tids, comms);
	costs = synth__event(b, ISR_EV_SAMPLING, sizeof(*costs) + sizeof(struct isr_sampling_costs), T0, 0, 0);
	costs->kind = ISR_SAMPLING_COSTS;
	((struct isr_sampling_costs *)(costs + 1))->flags = ISR_COSTS_COPIES_APART;
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	ev_call(b, T0, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, MS / 2);
	for (__u64 ms = 0; ms < 10000; ms++) {
		if (ms == 1000)
			ev_sampling(b, T0 + ms * MS, ISR_SAMPLING_OFF, MS);
		if (ms == 4000)
			ev_sampling(b, T0 + ms * MS, ISR_SAMPLING_COPIES_OFF, MS);
		if (ms == 6000)
			ev_sampling(b, T0 + ms * MS, ISR_SAMPLING_COPIES_ON, MS);
		if (ms < 1000 && ms)
			ev_launch(b, T0 + ms * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
		if (ms % 10 == 5 && (ms < 4000 || ms >= 6000)) {
			struct isr_ev_cuda_call *e =
				ev_call(b, T0 + ms * MS, 100, 101, ISR_CUDA_FN_cuMemcpyHtoDAsync_v2, 0, 20000);

			e->flags |= ISR_CUDA_ASYNC;
			e->args[2] = 1 << 20;
		}
	}
	ev_call(b, T0 + 9999 * MS, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, MS / 2);
	s = compute(b);

	assert_true(s->sampling.copies_apart);
	assert_true(s->sampling.copies_sampled);
	assert_true(s->sampling.sampled);
	assert_int_equal(s->sampling.copy_windows, 2);
	assert_int_equal(s->sampling.copies_on_ns, 8000 * MS);
	assert_int_equal(s->sampling.copy_proc_count, 1);
	assert_int_equal(s->sampling.copy_procs[0].observed, 800);
	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].func == ISR_CUDA_FN_cuMemcpyHtoDAsync_v2)
			f = &s->cuda_fns[i];
	assert_non_null(f);
	assert_int_equal(f->observed, 800);
	assert_true(f->estimated);
	assert_int_equal(f->calls, 1000);
	/* the launches: 999 in the first second, the hot path's own scale */
	assert_int_equal(s->sampling.proc_count, 1);
	assert_int_equal(s->sampling.procs[0].observed, 999);
	t = find(s, 101);
	assert_true(t->cuda_estimated);
	assert_int_equal(t->cuda_launches_observed, 999);
	assert_int_equal(t->cuda_calls, 2 + t->cuda_launches + 1000);
	summary__free(s);
	synth__free(b);
}

/*
 * A launch-bound thread slowed by the probes: 900 launches/s in the windows
 * and 1000/s in the gaps, with a synchronization (never switched off) every
 * 10 launches, so 11.1 ms apart in windows and 10 ms apart in gaps. The
 * slowdown read from their rates (1.111, its 95% interval within a few
 * percent, above 1) raises the gaps' rate to 1000/s: 4 x 900 recorded + 3
 * gaps of 2 s x 1000 = 9600 (the windows' rate alone would have made it
 * 9000). A thread paced alike in both (the same run with its
 * synchronizations 10 ms apart everywhere) shows no slowdown: its interval
 * holds 1, and nothing is applied.
 */
static void test_sampled_slowdown(void **state)
{
	const __u64 on[] = { 0, 3000, 6000, 9000 }, off[] = { 1000, 4000, 7000, 10000 };
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "python3" };

	(void)state;
	for (int paced = 0; paced < 2; paced++) {
		struct synth *b = synth__new(T0, T0 + 10000 * MS);
		__u64 sync_ns = paced ? 10 * MS : 100 * MS / 9 + 1;
		const struct sampling_process *p;
		struct summary *s;

		synth__process(b, 100, "python3", 1, tids, comms);
		ev_sampling(b, T0, ISR_SAMPLING_START, 0);
		for (int w = 0; w < 4; w++) {
			if (w)
				ev_sampling(b, T0 + on[w] * MS, ISR_SAMPLING_ON, 4 * MS);
			for (__u64 i = 0; i < 900; i++)
				ev_launch(b, T0 + on[w] * MS + i * (1000 * MS / 900), 100, 101, ISR_CUDA_FN_cuLaunchKernel,
					  0xa000);
			for (__u64 t = on[w] * MS + 1; t < off[w] * MS; t += sync_ns)
				ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
			if (w < 3) {
				ev_sampling(b, T0 + off[w] * MS, ISR_SAMPLING_OFF, 30 * MS);
				for (__u64 t = off[w] * MS + 35 * MS; t < on[w + 1] * MS; t += 10 * MS)
					ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
			}
		}
		s = compute(b);
		assert_int_equal(s->sampling.proc_count, 1);
		p = &s->sampling.procs[0];
		print_message("%s: slowdown %.4f (%.4f-%.4f, %s), estimated %.1f\n", paced ? "paced" : "launch-bound",
			      p->slowdown_measured, p->slowdown_lo, p->slowdown_hi,
			      sampling_slowdown__name(p->slowdown_status), p->estimated);
		assert_int_equal(p->observed, 3600);
		assert_int_equal(p->slowdown_windows, 4);
		assert_int_equal(p->slowdown_gaps, 3);
		assert_true(p->slowdown_calls_windows >= 355 && p->slowdown_calls_windows <= 400);
		assert_true(p->slowdown_calls_gaps >= 590 && p->slowdown_calls_gaps <= 600);
		if (paced) {
			assert_int_equal(p->slowdown_status, SAMPLING_SLOWDOWN_NONE);
			assert_true(p->slowdown_lo < 1 && p->slowdown_hi > 1);
			assert_true(p->slowdown == 1.0);
			assert_true(fabs(p->estimated - 9000) < 5);
		} else {
			assert_int_equal(p->slowdown_status, SAMPLING_SLOWDOWN_APPLIED);
			assert_true(fabs(p->slowdown_measured - 10.0 / 9) < 0.01);
			assert_true(p->slowdown == p->slowdown_measured);
			assert_true(p->slowdown_lo > 1 && p->slowdown_lo < p->slowdown && p->slowdown_hi > p->slowdown);
			assert_true(p->slowdown_hi - p->slowdown_lo < 0.05);
			assert_true(fabs(p->estimated - 9600) < 60);
		}
		summary__free(s);
		synth__free(b);
	}
}

/*
 * The recording that printed "ran 100.0% slower" (the old estimator's
 * bound): the hot path on 99% of a 15 s job in 4 windows, the 3 gaps 55 ms
 * each. The job synchronizes once a step, its steps alternate between
 * 10 ms and 90 ms (a data wait); the gaps happen to hold only short steps.
 * The intervals inside the gaps (10 ms) against those inside the windows
 * (50 ms on average) made a slowdown of 5, printed as its bound of 2. Its 9
 * calls in the gaps are too few to tell anything: nothing is measured,
 * nothing applied, and the launches are extrapolated at the windows' rate.
 */
static void test_slowdown_not_supported(void **state)
{
	const __u64 on[] = { 0, 3760, 7510, 11260 }, off[] = { 3700, 7450, 11200, 15000 };
	struct synth *b = synth__new(T0, T0 + 15000 * MS);
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "python3" };
	const struct sampling_process *p;
	__u64 launches = 0;
	struct summary *s;

	(void)state;
	synth__process(b, 100, "python3", 1, tids, comms);
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	for (int w = 0; w < 4; w++) {
		__u64 t = on[w] * MS + 1;

		if (w)
			ev_sampling(b, T0 + on[w] * MS, ISR_SAMPLING_ON, 4 * MS);
		for (__u64 ms = on[w]; ms < off[w]; ms++, launches++)
			ev_launch(b, T0 + ms * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
		for (int i = 0; t < off[w] * MS; t += (i++ % 2 ? 90 : 10) * MS)
			ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
		if (w < 3) {
			ev_sampling(b, T0 + off[w] * MS, ISR_SAMPLING_OFF, 5 * MS);
			for (int i = 0; i < 3; i++)
				ev_call(b, T0 + (off[w] + 10 + 10 * (__u64)i) * MS, 100, 101, ISR_CUDA_FN_cuStreamSynchronize,
					0, 1000);
		}
	}
	s = compute(b);
	assert_true(s->sampling.coverage > 0.98);
	assert_int_equal(s->sampling.proc_count, 1);
	p = &s->sampling.procs[0];
	assert_int_equal(p->observed, launches);
	assert_int_equal(p->slowdown_status, SAMPLING_SLOWDOWN_NOT_MEASURED);
	assert_int_equal(p->slowdown_calls_gaps, 9);
	assert_true(p->slowdown == 1.0);
	/* 1000 launches/s over the 3 gaps of 60 ms (from each OFF to the next ON) */
	assert_true(fabs(p->estimated - (double)(launches + 180)) < 2);
	summary__free(s);
	synth__free(b);
}

/* The 10 s job of the two tests below: process 100, thread 101 `python3`,
 * the hot path on in 4 windows of 1 s, 3 s apart (win_on, win_off, in ms),
 * each release taking 30 ms and each attach 4 ms. */
static const __u64 win_on[] = { 0, 3000, 6000, 9000 }, win_off[] = { 1000, 4000, 7000, 10000 };

static struct synth *four_windows(void)
{
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "python3" };
	struct synth *b = synth__new(T0, T0 + 10000 * MS);

	synth__process(b, 100, "python3", 1, tids, comms);
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	for (int w = 1; w < 4; w++) {
		ev_sampling(b, T0 + win_off[w - 1] * MS, ISR_SAMPLING_OFF, 30 * MS);
		ev_sampling(b, T0 + win_on[w] * MS, ISR_SAMPLING_ON, 4 * MS);
	}
	return b;
}

/* The window t (from T0) is in, or -1. */
static int window_at(__u64 t)
{
	for (int k = 0; k < 4; k++)
		if (t >= win_on[k] * MS && t < win_off[k] * MS)
			return k;
	return -1;
}

/*
 * A steady 1000 launches/s, the probes still seeing every other launch
 * for the 30 ms each release takes: those calls belong to the gaps, which
 * are extrapolated whole. The estimate is the 10000 made (it was 1.4% over:
 * they raised the windows' rates and were counted once more).
 */
static void test_sampled_release_calls(void **state)
{
	struct synth *b = four_windows();
	const struct sampling_process *p;
	struct summary *s;

	(void)state;
	for (__u64 i = 0; i < 10000; i++) {
		__u64 t = i * MS + 500 * US;
		bool seen = window_at(t) >= 0;

		/* every other one while a release takes its 30 ms */
		for (int k = 0; k < 4; k++)
			seen |= t >= win_off[k] * MS && t < win_off[k] * MS + 30 * MS && i % 2;
		if (seen)
			ev_launch(b, T0 + t, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
	}
	s = compute(b);
	p = &s->sampling.procs[0];
	print_message("observed %llu, estimated %.1f of 10000\n", (unsigned long long)p->observed, p->estimated);
	assert_int_equal(p->observed, 4045);
	assert_int_equal(p->estimator, SAMPLING_BY_TIME);
	assert_true(fabs(p->estimated - 10000) < 10);
	summary__free(s);
	synth__free(b);
}

/*
 * A job made of steps, each a synchronization and 20 launches, whose pace
 * changes: a step every 4, 5, 6 and 5 ms in the 4 windows, every 10 ms in
 * the 3 gaps (a data wait). The rate in time varies across the windows
 * (coefficient of variation 16%), the launches per synchronization do not
 * (20 in each): the gaps are estimated by their synchronizations, within
 * 0.5% of the launches made (the windows' rates put the gaps' at about
 * twice as many, the whole at 1.4 times). The same job with its
 * synchronizations every 7 ms whatever the steps (a timer's, not the
 * steps'): per synchronization varies as much as the rate, and the
 * estimate stays the time's.
 */
static void test_sampled_by_calls(void **state)
{
	const __u64 period[] = { 4, 5, 6, 5 };

	(void)state;
	for (int timer = 0; timer < 2; timer++) {
		struct synth *b = four_windows();
		const struct sampling_process *p;
		struct summary *s;
		__u64 made = 0, t = 0;

		while (t < 10000 * MS) {
			int w = window_at(t);

			if (!timer)
				ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
			for (__u64 i = 0; i < 20; i++, made++)
				if (w >= 0)
					ev_launch(b, T0 + t + 10 * US + i * 10 * US, 100, 101,
						  ISR_CUDA_FN_cuLaunchKernel, 0xa000);
			t += (w >= 0 ? period[w] : 10) * MS;
		}
		for (t = 1 * MS; timer && t < 10000 * MS; t += 7 * MS)
			ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
		s = compute(b);
		p = &s->sampling.procs[0];
		print_message("%s: %s, estimated %.1f of %llu made (cv %.3f per second, %.3f per call, %zu windows)\n",
			      timer ? "timer" : "steps", sampling_estimator__name(p->estimator), p->estimated,
			      (unsigned long long)made, p->cv_time, p->cv_calls, p->cv_windows);
		assert_int_equal(p->cv_windows, 4);
		assert_true(p->cv_time > 0.1);
		if (timer) {
			assert_int_equal(p->estimator, SAMPLING_BY_TIME);
			assert_true(p->cv_calls > p->cv_time / 2);
			assert_true(p->estimated > 1.3 * (double)made);
		} else {
			assert_int_equal(p->estimator, SAMPLING_BY_CALLS);
			assert_true(p->cv_calls < 0.01);
			assert_true(fabs(p->per_call - 20) < 0.1);
			assert_true(fabs(p->estimated - (double)made) < 0.005 * (double)made);
			assert_true(p->slowdown == 1.0);
		}
		summary__free(s);
		synth__free(b);
	}
}

/*
 * A pace that changes with the job's phases rather than with the probes:
 * synchronizations 30 ms apart in the windows and 10 ms apart in the gaps,
 * a slowdown of 3, more than the probes can cost; the reverse (faster
 * while probed) which probes cannot cause. Measured, said, not applied.
 */
static void test_slowdown_implausible(void **state)
{
	const __u64 on[] = { 0, 3000, 6000, 9000 }, off[] = { 1000, 4000, 7000, 10000 };
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "python3" };

	(void)state;
	for (int faster = 0; faster < 2; faster++) {
		struct synth *b = synth__new(T0, T0 + 10000 * MS);
		const struct sampling_process *p;
		struct summary *s;

		synth__process(b, 100, "python3", 1, tids, comms);
		ev_sampling(b, T0, ISR_SAMPLING_START, 0);
		for (int w = 0; w < 4; w++) {
			if (w)
				ev_sampling(b, T0 + on[w] * MS, ISR_SAMPLING_ON, 4 * MS);
			for (__u64 ms = on[w]; ms < off[w]; ms++)
				ev_launch(b, T0 + ms * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
			for (__u64 t = on[w] * MS + 1; t < off[w] * MS; t += (faster ? 10 : 30) * MS)
				ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
			if (w < 3) {
				ev_sampling(b, T0 + off[w] * MS, ISR_SAMPLING_OFF, 30 * MS);
				for (__u64 t = off[w] * MS + 35 * MS; t < on[w + 1] * MS; t += (faster ? 30 : 10) * MS)
					ev_call(b, T0 + t, 100, 101, ISR_CUDA_FN_cuStreamSynchronize, 0, 1000);
			}
		}
		s = compute(b);
		p = &s->sampling.procs[0];
		assert_int_equal(p->slowdown_status, SAMPLING_SLOWDOWN_IMPLAUSIBLE);
		assert_true(faster ? p->slowdown_hi < 1 : p->slowdown_measured > 2.8);
		assert_true(p->slowdown == 1.0);
		assert_true(fabs(p->estimated - 10000) < 5);
		summary__free(s);
		synth__free(b);
	}
}

/*
 * A launcher preempted for 15 ms just before its window was switched off,
 * which had paused up to 5 ms inside the window before: the silence says
 * nothing, its launches went on in the gap until its exit, 1 s after the
 * window, as long as the window: twice the launches seen (9350). The old
 * rule (a silence of 3 mean intervals + 1 ms) cut the gap off. The same
 * process silent for 200 ms before the switch was seen to stop.
 */
static void test_sampled_preempted_at_window_end(void **state)
{
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "launcher" };

	(void)state;
	for (int stopped = 0; stopped < 2; stopped++) {
		struct synth *b = synth__new(T0, T0 + 4000 * MS);
		__u64 last = stopped ? 800 * MS : 985 * MS, seen = 0;
		struct summary *s;

		synth__process(b, 100, "launcher", 1, tids, comms);
		ev_sampling(b, T0, ISR_SAMPLING_START, 0);
		ev_sampling(b, T0 + 1000 * MS, ISR_SAMPLING_OFF, 30 * MS);
		ev_sampling(b, T0 + 3000 * MS, ISR_SAMPLING_ON, 4 * MS);
		for (__u64 t = 0; t < last; t += 100000, seen++) {
			if (t % (100 * MS) == 50 * MS)
				t += 5 * MS;	/* paused now and then */
			ev_launch(b, T0 + t, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
		}
		ev_exit(b, T0 + 2000 * MS, 100, 101, "launcher");
		s = compute(b);
		print_message("%s: %llu seen, %llu estimated\n", stopped ? "stopped" : "preempted", (unsigned long long)seen,
			      (unsigned long long)s->kernels[0].launches);
		assert_int_equal(s->kernels[0].observed_launches, seen);
		if (stopped)
			assert_int_equal(s->kernels[0].launches, seen);
		else
			assert_true(s->kernels[0].launches > 2 * seen - 100 && s->kernels[0].launches < 2 * seen + 100);
		summary__free(s);
		synth__free(b);
	}
}

/* Launching right up to the end of a window, then exiting in the gap
 * after it with no CUDA call there: its calls went on unseen until the
 * exit (1000 seen, 2000 made); one that stopped half way through the
 * window was seen to stop (500, not extrapolated). */
static void test_sampled_exit_in_gap(void **state)
{
	struct synth *b = synth__new(T0, T0 + 5000 * MS);
	const __u32 tids[] = { 101 }, tids2[] = { 301 };
	const char *const comms[] = { "launcher" }, *const comms2[] = { "stopper" };
	struct summary *s;

	(void)state;
	synth__process(b, 100, "launcher", 1, tids, comms);
	synth__process(b, 300, "stopper", 1, tids2, comms2);
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	ev_sampling(b, T0 + 1000 * MS, ISR_SAMPLING_OFF, 30 * MS);
	ev_sampling(b, T0 + 3000 * MS, ISR_SAMPLING_ON, 4 * MS);
	for (__u64 ms = 0; ms < 1000; ms++)
		ev_launch(b, T0 + ms * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
	ev_launch(b, T0 + 1000 * MS + 2 * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000); /* during the release */
	ev_exit(b, T0 + 2001 * MS, 100, 101, "launcher");
	for (__u64 ms = 0; ms < 500; ms++)
		ev_launch(b, T0 + ms * MS, 300, 301, ISR_CUDA_FN_cuLaunchKernel, 0xb000);
	ev_exit(b, T0 + 2500 * MS, 300, 301, "stopper");
	s = compute(b);
	assert_true(s->sampling.sampled);
	assert_int_equal(s->kernel_count, 2);
	for (size_t i = 0; i < s->kernel_count; i++) {
		if (s->kernels[i].pid == 100) {
			assert_int_equal(s->kernels[i].observed_launches, 1001);
			assert_true(s->kernels[i].launches >= 1995 && s->kernels[i].launches <= 2005);
		} else {
			assert_int_equal(s->kernels[i].launches, 500);
		}
	}
	summary__free(s);
	synth__free(b);
}

/* A budget that never had to sample: counts are exact and say so. */
static void test_budget_not_sampled(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const __u32 tids[] = { 101 };
	const char *const comms[] = { "python3" };
	struct summary *s;

	(void)state;
	synth__process(b, 100, "python3", 1, tids, comms);
	ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	for (int i = 0; i < 10; i++)
		ev_launch(b, T0 + (__u64)i * MS, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0xa000);
	s = compute(b);
	assert_true(s->sampling.budget);
	assert_false(s->sampling.sampled);
	assert_int_equal(s->cuda_fns[0].calls, 10);
	assert_int_equal(s->cuda_fns[0].observed, 10);
	assert_false(s->cuda_fns[0].estimated);
	assert_false(find(s, 101)->cuda_estimated);
	summary__free(s);
	synth__free(b);
}

/* ---- GPU activity (CUPTI bridge) ------------------------------------------------ */


/* 10 kernels 10 ms apart, 1 ms (A) or 2 ms (B) each, joined to their
 * launches; the last starts 50 us before its launch: one violation. Two
 * copies. Busy: 15 ms of kernels + 0.3 ms of copies in a 1 s window. */
static void test_gpu_activity(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct gpu_process_stat *p;
	struct isr_ev_gpu_memcpy *m;
	struct summary *s;
	unsigned int i;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 500 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	ev_gpu_name(b, T0 + 900 * MS, 100, 1, "_Z1Av");
	ev_gpu_name(b, T0 + 900 * MS, 100, 2, "_Z1Bi");
	for (i = 0; i < 10; i++)
		gpu_launch(b, T0 + (10 + 10 * i) * MS, 100, 101, 500 + i, i == 9 ? -50 * (long long)US : 20 * (long long)US,
			   i % 2 ? 2 * MS : 1 * MS, i % 2 ? 2 : 1);
	for (i = 0; i < 2; i++) {
		m = synth__event(b, ISR_EV_GPU_MEMCPY, sizeof(*m), T0 + 900 * MS, 100, 100);
		m->start_ns = T0 + (300 + 10 * i) * MS + GPU_AHEAD;
		m->end_ns = m->start_ns + 150 * US;
		m->bytes = 4096 * (i + 1);
		m->copy_kind = 1;
		m->stream_id = 7;
	}
	s = compute(b);
	assert_int_equal(s->gpu_count, 1);
	p = &s->gpu[0];
	assert_int_equal(p->pid, 100);
	assert_true(p->fit.valid);
	assert_int_equal(p->clock_pairs, 3);
	assert_true(p->fit.bound_ns <= 501);
	assert_int_equal(p->kernels, 10);
	assert_int_equal(p->copies, 2);
	assert_int_equal(p->joined, 10);
	assert_int_equal(p->unjoined, 0);
	assert_int_equal(p->causality_violations, 1);
	assert_true(p->worst_violation_ns >= 49 * US && p->worst_violation_ns <= 51 * US);
	assert_true(p->launch_to_start_p50_ns >= 19 * US && p->launch_to_start_p50_ns <= 21 * US);
	assert_int_equal(s->gpu_kernel_count, 2);
	assert_string_equal(s->gpu_kernels[0].name, "B(int)");	/* most GPU time first */
	assert_int_equal(s->gpu_kernels[0].count, 5);
	assert_int_equal(s->gpu_kernels[0].total_ns, 10 * MS);
	assert_string_equal(s->gpu_kernels[1].name, "A()");
	assert_int_equal(s->gpu_kernels[1].total_ns, 5 * MS);
	assert_int_equal(s->gpu_copy_count, 1);
	assert_int_equal(s->gpu_copies[0].count, 2);
	assert_int_equal(s->gpu_copies[0].bytes, 3 * 4096);
	assert_int_equal(s->gpu_copies[0].total_ns, 300 * US);
	assert_int_equal(s->gpu_stream_count, 1);
	assert_int_equal(s->gpu_streams[0].kernels, 10);
	assert_int_equal(s->gpu_device_count, 1);
	assert_true(s->gpu_devices[0].busy_ns >= 15 * MS + 300 * US - 2 * US &&
		    s->gpu_devices[0].busy_ns <= 15 * MS + 300 * US + 2 * US);
	assert_true(s->gpu_devices[0].idle_fraction > 0.984 && s->gpu_devices[0].idle_fraction < 0.985);
	summary__free(s);
	synth__free(b);
}

/* Without clock pairs nothing is mapped: no join, no busy time. */
static void test_gpu_without_clock(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	struct summary *s;

	(void)state;
	gpu_launch(b, T0 + 10 * MS, 100, 101, 1, 20 * US, MS, 0);
	s = compute(b);
	assert_int_equal(s->gpu_count, 1);
	assert_false(s->gpu[0].fit.valid);
	assert_int_equal(s->gpu[0].kernels, 1);
	assert_int_equal(s->gpu[0].joined, 0);
	assert_int_equal(s->gpu[0].unjoined, 1);
	assert_int_equal(s->gpu_device_count, 0);
	assert_string_equal(s->gpu_kernels[0].name, "kernel#0");
	summary__free(s);
	synth__free(b);
}

/* One launch of a two-thread job at mono time ts on tid: CUPTI's API
 * record (a runtime one: the uprobe on cuLaunchKernel fires inside it, 1 us
 * after its start; a driver one: the uprobe fires at the call's entry, 2 us
 * before the record's start), the launch uprobe event only when probed,
 * and the kernel, 1 us after the record's end. */
static void launch_two_thread(struct synth *b, __u64 ts, __u32 tid, __u32 corr, bool probed, bool runtime)
{
	struct isr_ev_gpu_api *a;
	struct isr_ev_gpu_kernel *k;

	if (probed)
		ev_launch(b, runtime ? ts + 1 * US : ts, 100, tid, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
	a = synth__event(b, ISR_EV_GPU_API, sizeof(*a), ts + 500 * MS, 100, 100);
	a->start_ns = (runtime ? ts : ts + 2 * US) + GPU_AHEAD;
	a->end_ns = ts + 4 * US + GPU_AHEAD;
	a->correlation_id = corr;
	a->cbid = runtime ? 211 : 307;
	a->thread_id = tid;
	a->api = runtime ? ISR_GPU_API_RUNTIME : ISR_GPU_API_DRIVER;
	k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), ts + 500 * MS, 100, 100);
	k->start_ns = ts + 5 * US + GPU_AHEAD;
	k->end_ns = k->start_ns + 2 * US;
	k->correlation_id = corr;
	k->stream_id = tid == 101 ? 7 : 8;
}

/*
 * Two threads launch every 8 us each (the main thread's forward, the
 * autograd thread's backward, 4 us apart), with correlation ids from one
 * counter, runtime and driver records alternating; the overhead budget has
 * the hot-path probes on in two windows of 10 ms, and every 97th launch's
 * uprobe event is missing inside them too. Every kernel starts after its
 * own launch but before the next launch of its thread: a kernel whose
 * launch was not observed joined to a neighbouring call would start
 * before it. Joined: exactly the observed launches; no violation.
 */
static void test_gpu_join_two_threads_sampled(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	unsigned long long probed = 0, total = 0;
	const struct gpu_process_stat *p;
	struct summary *s;
	__u32 corr = 1;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 500 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	for (__u64 t = T0 + 5 * MS; t < T0 + 55 * MS; t += 4 * US) {
		bool in_window = (t >= T0 + 10 * MS && t < T0 + 20 * MS) || (t >= T0 + 40 * MS && t < T0 + 50 * MS);
		bool seen = in_window && corr % 97;
		__u32 tid = (t / (4 * US)) % 2 ? 102 : 101;

		launch_two_thread(b, t, tid, corr, seen, corr % 3 != 0);
		probed += seen;
		total++;
		corr++;
	}
	s = compute(b);
	assert_int_equal(s->gpu_count, 1);
	p = &s->gpu[0];
	assert_int_equal(p->kernels, total);
	assert_true(probed > 4000 && probed < total / 2);
	assert_int_equal(p->joined, probed);
	assert_int_equal(p->unjoined, total - probed);
	assert_int_equal(p->causality_violations, 0);
	assert_true(p->launch_to_start_p50_ns >= 4 * US - 100 && p->launch_to_start_p50_ns <= 5 * US + 100);
	summary__free(s);
	synth__free(b);
}

/* Two records of one call with the same correlation id (a runtime record
 * and the driver record nested in it): the later one stands, and the
 * earlier one takes no uprobe event from it. */
static void test_gpu_join_superseded_record(void **state)
{
	struct synth *b = synth__new(T0, T0 + 100 * MS);
	struct isr_ev_gpu_api *a;
	struct summary *s;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 99 * MS, 100);
	launch_two_thread(b, T0 + 10 * MS, 101, 7, true, false);
	a = synth__event(b, ISR_EV_GPU_API, sizeof(*a), T0 + 60 * MS, 100, 100);
	a->start_ns = T0 + 10 * MS - 1 * US + GPU_AHEAD;
	a->end_ns = T0 + 10 * MS + 6 * US + GPU_AHEAD;
	a->correlation_id = 7;
	a->cbid = 211;
	a->thread_id = 101;
	a->api = ISR_GPU_API_RUNTIME;
	s = compute(b);
	assert_int_equal(s->gpu[0].joined, 1);
	assert_int_equal(s->gpu[0].unjoined, 0);
	assert_int_equal(s->gpu[0].causality_violations, 0);
	summary__free(s);
	synth__free(b);
}

/* GPU activity in windows: 4 windows of 100 ms in a 1 s recording, each
 * with 5 kernels of 4 ms (20% busy in every window), and a launch every
 * 20 ms in the gaps too (their uprobe events). The third window's record
 * comes twice (OPEN at a flush, then closed): the later one counts. Busy
 * 80 ms over 400 ms observed; over the span (from the first window to the
 * recording's end: 900 ms) per launch: 20 launches in the windows, 27 in
 * the gaps' 500 ms, so 80 x 47 / 20 = 188 ms. */
static void test_gpu_windows(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct gpu_process_stat *p;
	const struct gpu_device_stat *d;
	struct summary *s;
	unsigned int w, k;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	for (w = 0; w < 4; w++) {
		__u64 open = T0 + (100 + 250 * w) * MS;

		for (k = 0; k < 5; k++)
			gpu_launch(b, open + (5 + 20 * k) * MS, 100, 101, 10 * w + k, 20 * (long long)US, 4 * MS, 0);
		for (__u64 t = open + 105 * MS; t < open + 250 * MS && t < T0 + 1000 * MS; t += 20 * MS)
			ev_launch(b, t, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
		if (w == 2)
			ev_gpu_window(b, 100, w + 1, open, open + 50 * MS, ISR_GPU_WINDOW_OPEN, 0);
		ev_gpu_window(b, 100, w + 1, open, open + 100 * MS, 0, w ? 2 * MS : 0);
	}
	s = compute(b);
	assert_int_equal(s->gpu_count, 1);
	p = &s->gpu[0];
	assert_int_equal(p->windows, 4);
	assert_int_equal(p->observed_ns, 400 * MS);
	assert_int_equal(p->span_ns, 900 * MS);
	assert_true(p->estimated);
	assert_int_equal(p->detaches, 3);
	assert_int_equal(p->detach_max_ns, 2 * MS);
	assert_int_equal(s->gpu_device_count, 1);
	d = &s->gpu_devices[0];
	assert_true(d->busy_ns >= 80 * MS - 10 * US && d->busy_ns <= 80 * MS + 10 * US);
	assert_true(d->estimated);
	assert_int_equal(p->busy_method, GPU_BUSY_BY_LAUNCHES);
	assert_int_equal(p->window_launches, 20);
	assert_int_equal(p->gap_launches_seen, 27);
	assert_int_equal(p->gap_probed_ns, 500 * MS);
	assert_true(p->gap_launches > 26.99 && p->gap_launches < 27.01);
	assert_true(d->busy_est_ns >= 188 * MS - 50 * US && d->busy_est_ns <= 188 * MS + 50 * US);
	assert_true(d->idle_fraction > 1 - 188.0 / 900 - 0.001 && d->idle_fraction < 1 - 188.0 / 900 + 0.001);
	/* idle: 712 ms over the span against 320 ms in the windows */
	assert_true(d->idle_scale > 712.0 / 320 - 0.001 && d->idle_scale < 712.0 / 320 + 0.001);
	summary__free(s);
	synth__free(b);
}

/* A launch inside a GPU window: CUPTI's API record and the kernel, and the
 * launch uprobe event when the hot path was probed. */
static void window_launch(struct synth *b, __u64 ts, __u32 corr, __u64 dur, bool probed)
{
	struct isr_ev_gpu_api *a;
	struct isr_ev_gpu_kernel *k;

	if (probed)
		ev_launch(b, ts, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
	a = synth__event(b, ISR_EV_GPU_API, sizeof(*a), ts + 900 * MS, 100, 100);
	a->start_ns = ts + 1 * US + GPU_AHEAD;
	a->end_ns = ts + 2 * US + GPU_AHEAD;
	a->correlation_id = corr;
	a->cbid = 307;
	a->thread_id = 101;
	a->api = ISR_GPU_API_DRIVER;
	k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), ts + 900 * MS, 100, 100);
	k->start_ns = ts + 3 * US + GPU_AHEAD;
	k->end_ns = k->start_ns + dur;
	k->correlation_id = corr;
	k->stream_id = 7;
}

/*
 * The observer's bias (H100, launch-bound PyTorch loop: -26.7% per second of
 * the windows): CUPTI slows the launching thread while it collects, so the
 * GPU idles more in the windows than in the gaps. 4 windows of 50 ms from
 * 100 ms, 250 ms apart, in a 1 s recording: kernels of 6 us launched every
 * 10 us in the windows (20,000) and every 7.5 us in the gaps (the rest of
 * the 900 ms span: 700 ms, 93,333). True busy: 6 us x 113,333 = 680 ms.
 * Per second of the windows it would be 120 / 200 x 900 = 540 ms (-20.6%);
 * per launch it is 120 ms x 113,333 / 20,000 = 680 ms. With the hot path
 * probed throughout (no sampling), then with it switched off for half of
 * every gap (the uprobe events missing there, extrapolated at the rate of
 * the probed halves).
 */
static void gpu_windows_biased(bool sampled)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct gpu_process_stat *p;
	const struct gpu_device_stat *d;
	__u64 t = T0 + 100 * MS, end = T0 + 1000 * MS;
	unsigned int corr = 1, w = 0, gap_events = 0;
	struct summary *s;

	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	if (sampled)
		ev_sampling(b, T0, ISR_SAMPLING_START, 0);
	for (w = 0; w < 4; w++) {
		__u64 open = T0 + (100 + 250 * w) * MS, close = open + 50 * MS;
		__u64 gap_end = w < 3 ? open + 250 * MS : end, half = close + (gap_end - close) / 2;

		for (t = open; t < close; t += 10 * US)
			window_launch(b, t, corr++, 6 * US, true);
		ev_gpu_window(b, 100, w + 1, open, close, 0, 0);
		if (sampled) {
			ev_sampling(b, half, ISR_SAMPLING_OFF, 0);
			if (w < 3)
				ev_sampling(b, gap_end, ISR_SAMPLING_ON, 0);
		}
		for (__u64 g = close; g < gap_end; g += 7500)
			if (!sampled || g < half) {
				ev_launch(b, g, 100, 101, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
				gap_events++;
			}
	}
	s = compute(b);
	assert_int_equal(s->gpu_count, 1);
	p = &s->gpu[0];
	d = &s->gpu_devices[0];
	print_message("%s: %u launch events in the gaps, %.1f estimated there; busy %.1f ms of %.1f ms observed, "
		      "estimated %.1f ms (true 680)\n", sampled ? "sampled" : "probed", gap_events, p->gap_launches,
		      d->busy_ns / 1e6, p->observed_ns / 1e6, d->busy_est_ns / 1e6);
	assert_int_equal(p->observed_ns, 200 * MS);
	assert_int_equal(p->span_ns, 900 * MS);
	assert_int_equal(p->window_launches, 20000);
	assert_int_equal(p->busy_method, GPU_BUSY_BY_LAUNCHES);
	assert_true(d->busy_ns >= 120 * MS - 10 * US && d->busy_ns <= 120 * MS + 10 * US);
	assert_true(d->busy_est_ns > 680 * MS * 0.99 && d->busy_est_ns < 680 * MS * 1.01);
	assert_true(d->idle_fraction > (1 - 680.0 / 900) - 0.01 && d->idle_fraction < (1 - 680.0 / 900) + 0.01);
	/* idle 220 ms over the span against 80 ms in the windows */
	assert_true(d->idle_scale > 220.0 / 80 * 0.95 && d->idle_scale < 220.0 / 80 * 1.05);
	if (sampled)
		assert_true(p->gap_probed_ns < 400 * MS && p->gap_launches_seen < 50000);
	summary__free(s);
	synth__free(b);
}

static void test_gpu_windows_biased(void **state)
{
	(void)state;
	gpu_windows_biased(false);
}

static void test_gpu_windows_biased_sampled(void **state)
{
	(void)state;
	gpu_windows_biased(true);
}

/* The launches of a window are counted from its kernels: 25 launches, a
 * graph launch of 4 kernels (one correlation id, one after another on its
 * stream: one launch), and 3 kernels recorded while CUPTI's API kinds were
 * still being enabled (no API record: launches all the same) make 29. */
static void test_gpu_window_launches_from_kernels(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct gpu_stream_stat *st = NULL;
	struct isr_ev_gpu_kernel *k;
	struct summary *s;
	__u32 corr = 1;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	for (unsigned int i = 0; i < 3; i++) {
		k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), T0 + 900 * MS, 100, 100);
		k->start_ns = T0 + (100 + i) * MS + GPU_AHEAD;
		k->end_ns = k->start_ns + 100 * US;
		k->correlation_id = corr++;
		k->stream_id = 7;
	}
	for (unsigned int i = 0; i < 25; i++)
		window_launch(b, T0 + (110 + i) * MS, corr++, 100 * US, true);
	for (unsigned int i = 0; i < 4; i++) {
		k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), T0 + 900 * MS, 100, 100);
		k->start_ns = T0 + 140 * MS + i * 200 * US + GPU_AHEAD;
		k->end_ns = k->start_ns + 100 * US;
		k->correlation_id = corr;
		k->stream_id = 7;
	}
	ev_gpu_window(b, 100, 1, T0 + 100 * MS, T0 + 150 * MS, 0, 0);
	s = compute(b);
	assert_int_equal(s->gpu[0].kernels, 32);
	assert_int_equal(s->gpu[0].window_launches, 29);
	for (size_t i = 0; i < s->gpu_stream_count; i++)
		if (s->gpu_streams[i].pid == 100 && s->gpu_streams[i].stream == 7)
			st = &s->gpu_streams[i];
	assert_non_null(st);
	assert_int_equal(st->launches, 29);
	summary__free(s);
	synth__free(b);
}

/* Too few launches in the windows to go per launch: per second. */
static void test_gpu_windows_by_time(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	const struct gpu_device_stat *d;
	struct summary *s;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	for (unsigned int w = 0; w < 2; w++) {
		__u64 open = T0 + (100 + 500 * w) * MS;

		for (unsigned int k = 0; k < 5; k++)
			window_launch(b, open + (5 + 20 * k) * MS, 10 * w + k + 1, 4 * MS, true);
		ev_gpu_window(b, 100, w + 1, open, open + 100 * MS, 0, 0);
	}
	s = compute(b);
	d = &s->gpu_devices[0];
	assert_int_equal(s->gpu[0].window_launches, 10);
	assert_int_equal(s->gpu[0].busy_method, GPU_BUSY_BY_TIME);
	/* 40 ms of 200 ms observed, over 900 ms */
	assert_true(d->busy_est_ns >= 180 * MS - 50 * US && d->busy_est_ns <= 180 * MS + 50 * US);
	assert_true(d->idle_fraction > 0.799 && d->idle_fraction < 0.801);
	assert_true(d->idle_scale > 4.499 && d->idle_scale < 4.501);
	summary__free(s);
	synth__free(b);
}

/* --gpu: one window for the whole recording, whose only record is the
 * answer to the tracer's last flush (still open): observed to the end,
 * nothing extrapolated. */
static void test_gpu_window_open_at_end(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	struct summary *s;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	gpu_launch(b, T0 + 10 * MS, 100, 101, 1, 20 * US, 100 * MS, 0);
	ev_gpu_window(b, 100, 1, T0 + 5 * MS, T0 + 990 * MS, ISR_GPU_WINDOW_OPEN, 0);
	s = compute(b);
	assert_int_equal(s->gpu[0].windows, 1);
	assert_int_equal(s->gpu[0].observed_ns, 995 * MS);
	assert_int_equal(s->gpu[0].span_ns, 995 * MS);
	assert_false(s->gpu[0].estimated);
	assert_false(s->gpu_devices[0].estimated);
	summary__free(s);
	synth__free(b);
}

/* One window for the whole recording (--gpu): nothing extrapolated. A
 * window closed by the process's exit ends its span there. */
static void test_gpu_window_full(void **state)
{
	struct synth *b = synth__new(T0, T0 + 1000 * MS);
	struct summary *s;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, 100);
	ev_gpu_clock(b, T0 + 999 * MS, 100);
	gpu_launch(b, T0 + 10 * MS, 100, 101, 1, 20 * US, 100 * MS, 0);
	ev_gpu_window(b, 100, 1, T0, T0 + 500 * MS, ISR_GPU_WINDOW_EXIT, 0);
	s = compute(b);
	assert_int_equal(s->gpu[0].windows, 1);
	assert_int_equal(s->gpu[0].observed_ns, 500 * MS);
	assert_int_equal(s->gpu[0].span_ns, 500 * MS);
	assert_false(s->gpu[0].estimated);
	assert_false(s->gpu_devices[0].estimated);
	assert_true(s->gpu_devices[0].idle_fraction > 0.799 && s->gpu_devices[0].idle_fraction < 0.801);
	assert_int_equal(s->gpu_devices[0].busy_est_ns, s->gpu_devices[0].busy_ns);
	summary__free(s);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sleeper),
		cmocka_unit_test(test_preemption_runqueue),
		cmocka_unit_test(test_wakeup_latency),
		cmocka_unit_test(test_first_event_attribution),
		cmocka_unit_test(test_create_and_exit),
		cmocka_unit_test(test_fork_targets),
		cmocka_unit_test(test_exec_by_non_leader),
		cmocka_unit_test(test_d_state),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_idle_listed_and_sorted),
		cmocka_unit_test(test_counts_and_drops),
		cmocka_unit_test(test_window_and_clamping),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_cuda_function_counts),
		cmocka_unit_test(test_cuda_device_memory),
		cmocka_unit_test(test_cuda_many_allocations),
		cmocka_unit_test(test_cuda_kernels),
		cmocka_unit_test(test_gil_wait_and_hold),
		cmocka_unit_test(test_gil_clamped_to_recording),
		cmocka_unit_test(test_top_waker),
		cmocka_unit_test(test_top_waker_ignored_and_ties),
		cmocka_unit_test(test_sampled_hot_path),
		cmocka_unit_test(test_sampled_faults),
		cmocka_unit_test(test_sampled_copies_apart),
		cmocka_unit_test(test_sampled_exit_in_gap),
		cmocka_unit_test(test_sampled_slowdown),
		cmocka_unit_test(test_slowdown_not_supported),
		cmocka_unit_test(test_sampled_release_calls),
		cmocka_unit_test(test_sampled_by_calls),
		cmocka_unit_test(test_slowdown_implausible),
		cmocka_unit_test(test_sampled_preempted_at_window_end),
		cmocka_unit_test(test_budget_not_sampled),
		cmocka_unit_test(test_gpu_activity),
		cmocka_unit_test(test_gpu_without_clock),
		cmocka_unit_test(test_gpu_join_two_threads_sampled),
		cmocka_unit_test(test_gpu_join_superseded_record),
		cmocka_unit_test(test_gpu_windows),
		cmocka_unit_test(test_gpu_windows_biased),
		cmocka_unit_test(test_gpu_windows_biased_sampled),
		cmocka_unit_test(test_gpu_windows_by_time),
		cmocka_unit_test(test_gpu_window_launches_from_kernels),
		cmocka_unit_test(test_gpu_window_full),
		cmocka_unit_test(test_gpu_window_open_at_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
