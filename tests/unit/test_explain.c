// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The explanation on synthetic recordings: each test plants one bottleneck
 * with a known cost and checks that its rule fires with that cost (within
 * 5%), names what a user needs (the holder, the competing process, the
 * file, the Python line), and that nothing fires on healthy recordings.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "analysis.h"
#include "report.h"
#include "rules.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

#include "synth.h"

#define US SYNTH_US
#define PID 100
#define LAUNCHER 101
#define OTHER 102

static struct analysis *analyze(struct synth *b)
{
	struct analysis *a = NULL;

	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	assert_non_null(a);
	analysis__free(synth__check_streamed(b, 4096, 0));
	return a;
}

static const struct finding *find_rule(const struct analysis *a, const char *rule, __u32 tid)
{
	for (size_t i = 0; i < a->ex->findings.n; i++) {
		const struct finding *f = &a->ex->findings.v[i];

		if (strcmp(f->rule, rule) == 0 && (!tid || f->tid == tid))
			return f;
	}
	return NULL;
}

static void print_findings(const struct analysis *a)
{
	for (size_t i = 0; i < a->ex->findings.n; i++)
		print_message("  %s %.4f s: %s\n", a->ex->findings.v[i].rule, a->ex->findings.v[i].cost_s,
			      a->ex->findings.v[i].summary);
}

/* The finding of rule for tid exists and its cost is planted +-5%. */
static const struct finding *expect(const struct analysis *a, const char *rule, __u32 tid, double planted_s)
{
	const struct finding *f = find_rule(a, rule, tid);

	if (!f) {
		print_findings(a);
		fail_msg("no %s finding", rule);
	}
	if (fabs(f->cost_s - planted_s) > 0.05 * planted_s) {
		print_findings(a);
		fail_msg("%s cost %.4f s, planted %.4f s", rule, f->cost_s, planted_s);
	}
	return f;
}

static void expect_text(const struct finding *f, const char *needle)
{
	if (!strstr(f->summary, needle))
		fail_msg("%s: \"%s\" not in \"%s\"", f->rule, needle, f->summary);
}

static void expect_none(const struct analysis *a)
{
	if (a->ex->findings.n) {
		print_findings(a);
		fail_msg("%zu findings on a healthy recording", a->ex->findings.n);
	}
}

/* The launcher on a CPU from the start, a process with two threads. */
static struct synth *job(__u64 len)
{
	struct synth *b = synth__new(T0, T0 + len);
	const __u32 tids[] = { LAUNCHER, OTHER };
	const char *const comms[] = { "trainer", "augment" };

	synth__process(b, PID, "python3", 2, tids, comms);
	return b;
}

/* job(), with GPU activity: its clock read at both ends. */
static struct synth *gpu_job(__u64 len)
{
	struct synth *b = job(len);

	ev_gpu_clock(b, T0 + 1 * MS, PID);
	ev_gpu_clock(b, T0 + len - 1 * MS, PID);
	return b;
}

static void sync_call(struct synth *b, __u64 ts, __u32 tid, __u64 dur)
{
	ev_call(b, ts, PID, tid, ISR_CUDA_FN_cuCtxSynchronize_v2, 0, dur);
}

static void blocked(struct synth *b, __u64 from, __u64 to, __u32 tid, __u32 waker_pid, __u32 waker_tid)
{
	ev_switch(b, from, PID, tid, 0, 0, 0x1, 0);
	ev_wakeup_by(b, to, PID, tid, waker_pid, waker_tid);
	ev_switch(b, to, 0, 0, PID, tid, 0, 0);
}

/* Python: one code object at train.py:88 collate, one stack with it. */
static void python_stack(struct synth *b)
{
	const __u64 code = 0x7f0000001000ULL;

	ev_py_code(b, T0, PID, code, "/home/u/train.py", "collate", 88);
	ev_py_stack(b, T0, PID, 1, 1, &code);
}

/* A GIL wait the scheduler saw: tid blocked on its GIL at ts for dur,
 * while holder (0: unknown) held it. */
static void ev_gil_wait(struct synth *b, __u64 ts, __u32 tid, __u64 dur, __u32 holder)
{
	struct isr_ev_gil_wait *e = synth__event(b, ISR_EV_GIL_WAIT, sizeof(*e), ts, PID, tid);

	e->duration_ns = dur;
	e->holder_tid = holder;
	e->flags = holder ? ISR_GIL_WAIT_HOLDER : 0;
}

/* The GIL of the process was found: its waits are traced. */
static void gil_traced(struct synth *b)
{
	struct isr_ev_py_status *e = synth__event(b, ISR_EV_PY_STATUS, sizeof(*e), T0, PID, PID);

	e->status = ISR_PY_STATUS_SAMPLING;
	e->subject = ISR_PY_SUBJECT_GIL;
	e->py_minor = 12;
}

/* A task that is not traced, named when it took thread tid's CPU. */
static void ev_task_info(struct synth *b, __u64 ts, __u32 tid, __u32 task_pid, __u32 task_tid, const char *comm,
			 const char *process_comm)
{
	struct isr_ev_task_info *e = synth__event(b, ISR_EV_TASK_INFO, sizeof(*e), ts, PID, tid);

	e->task_pid = task_pid;
	e->task_tid = task_tid;
	strncpy(e->comm, comm, sizeof(e->comm) - 1);
	strncpy(e->process_comm, process_comm, sizeof(e->process_comm) - 1);
}

/* --- healthy ------------------------------------------------------------------------ */

/* A GPU-bound loop without GPU activity: every 10 ms, 5 launches, then a
 * 9.5 ms synchronization, then the next launches at once. */
static void test_healthy_gpu_bound_host_view(void **state)
{
	struct synth *b = job(1000 * MS);
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 100; i++) {
		__u64 t = T0 + (__u64)i * 10 * MS;

		for (int k = 0; k < 5; k++)
			ev_launch(b, t + (__u64)k * 10 * US, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		sync_call(b, t + 100 * US, LAUNCHER, 9500 * US);
		blocked(b, t + 110 * US, t + 9600 * US, LAUNCHER, PID, LAUNCHER);
	}
	a = analyze(b);
	expect_none(a);
	/* and says so: 95% of its time in synchronizations */
	if (!strstr(a->ex->verdict, "Thread 101 `trainer`, which launched the GPU work, waited for the GPU in "
				    "synchronizations 95% of its active time: the GPU set the pace and the host kept up"))
		fail_msg("verdict: \"%s\"", a->ex->verdict);
	analysis__free(a);
	synth__free(b);
}

/* GPU activity: kernels back to back, 2 us apart, launched well ahead. */
static void test_healthy_gpu_busy(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 99; i++)
		gpu_launch(b, T0 + (__u64)i * 10 * MS, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 9998 * US, 0);
	a = analyze(b);
	expect_none(a);
	if (!strstr(a->ex->verdict, "GPU 0 of pid 100 was busy 100% of its active time") ||
	    !strstr(a->ex->verdict, "the GPU set the pace and the host kept up"))
		fail_msg("verdict: \"%s\"", a->ex->verdict);
	analysis__free(a);
	synth__free(b);
}

/* --- GPU windows (--gpu-windows) ------------------------------------------------------ */

/* The windows of a job observed by CUPTI only in 4 windows of 100 ms
 * (opened at 100, 350, 600 and 850 ms: the bridge's ENABLED at each open,
 * its window record after each close), a kernel launched every 10 ms, each
 * running `dur` from 20 us after its launch, in the gaps too (seen by the
 * launch uprobe only); the tracer's last flush at 999 ms. */
static struct synth *windowed_job(__u64 dur)
{
	struct synth *b = gpu_job(1000 * MS);
	__u32 corr = 1;

	for (int w = 0; w < 4; w++) {
		__u64 open = T0 + (100 + 250 * (__u64)w) * MS;
		struct isr_ev_gpu_status *st = synth__event(b, ISR_EV_GPU_STATUS, sizeof(*st), open, PID, PID);

		st->state = ISR_GPU_ENABLED;
		for (__u64 t = open; t < open + 100 * MS; t += 10 * MS)
			gpu_launch(b, t, PID, LAUNCHER, corr++, 20 * (long long)US, dur, 0);
		for (__u64 t = open + 100 * MS; t < open + 250 * MS && t < T0 + 999 * MS; t += 10 * MS)
			ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
		ev_gpu_window(b, PID, (__u32)w + 1, open, open + 100 * MS, 0, w ? 50 * US : 0);
	}
	{
		/* the tracer's last flush */
		struct isr_ev_gpu_status *st = synth__event(b, ISR_EV_GPU_STATUS, sizeof(*st), T0 + 999 * MS, PID, PID);

		st->state = ISR_GPU_FLUSHED;
	}
	return b;
}

static const struct attr_device *only_device(const struct analysis *a)
{
	assert_int_equal(attribution__device_count(a->ex->attr), 1);
	return attribution__device_at(a->ex->attr, 0);
}

/* Kernels back to back inside the windows: busy all the time observed; the
 * 150 ms between windows is not observed, never idle. */
static void test_gpu_windows_busy(void **state)
{
	struct synth *b = windowed_job(9998 * US);
	const struct attr_device *d;
	struct analysis *a;
	__u64 idle = 0;

	(void)state;
	a = analyze(b);
	d = only_device(a);
	for (int c = 0; c < CAUSE_MAX; c++)
		idle += d->idle_ns[c];
	print_message("observed %.3f s of %.3f s, busy %.3f s, idle %.6f s\n", d->observed_ns / 1e9, d->span_ns / 1e9,
		      d->busy_ns / 1e9, (idle + d->leading_ns) / 1e9);
	assert_int_equal(d->observed_ns, 400 * MS);
	assert_int_equal(d->span_ns, 899 * MS);	/* to the last flush */
	assert_true(d->estimated);
	assert_true(idle + d->leading_ns < 1 * MS);	/* 2 us gaps and 20 us at each open */
	expect_none(a);
	analysis__free(a);
	synth__free(b);
}

/* 1 ms kernels every 10 ms inside the windows: idle 8.98 ms after each
 * (the last one's gap ends at the window's close), 359.2 ms in the 400 ms
 * observed; gpu_idle's cost is that over the 899 ms span (from the first
 * window to the tracer's last flush), said to be extrapolated: busy per
 * launch (40 in the windows, 1 ms each; 49 in the gaps' 490 ms of whole
 * bins, so 49.9 in their 499 ms) makes 89.9 ms over the span, idle 809.1 ms
 * against 360 ms in the windows: x 2.2475. */
static void test_gpu_windows_idle_scaled(void **state)
{
	struct synth *b = windowed_job(1 * MS);
	const struct attr_device *d;
	const struct finding *f;
	struct analysis *a;
	__u64 idle = 0;

	(void)state;
	a = analyze(b);
	d = only_device(a);
	for (int c = 0; c < CAUSE_MAX; c++)
		idle += d->idle_ns[c];
	assert_int_equal(d->observed_ns, 400 * MS);
	assert_true(idle > 359 * MS && idle < 360 * MS);
	f = expect(a, "gpu_idle", LAUNCHER, 0.3592 * (899 - 89.9) / 360);
	expect_text(f, "collected in windows covering 44% of the process's 0.899 s");
	assert_true(json_is_true(json_object_get(f->evidence, "estimated")));
	analysis__free(a);
	synth__free(b);
}

/* --- host rules --------------------------------------------------------------------- */

/* 3 waits of 100 ms for the GIL while thread 102 runs collate(). */
static void test_gil_contention(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	python_stack(b);
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 3; i++) {
		__u64 t = T0 + 100 * MS + (__u64)i * 300 * MS;

		ev_gil(b, t, PID, LAUNCHER, ISR_GIL_ACQUIRE, 100 * MS);
		blocked(b, t + 10 * US, t + 100 * MS - 10 * US, LAUNCHER, PID, OTHER);
		for (int k = 0; k < 10; k++)
			ev_py_sample(b, t + 5 * MS + (__u64)k * 10 * MS, PID, OTHER, 1, ISR_PY_KIND_TIMER);
	}
	a = analyze(b);
	f = expect(a, "gil_contention", LAUNCHER, 0.3);
	expect_text(f, "thread 102 `augment`");
	expect_text(f, "/home/u/train.py:88 collate");
	/* the GIL time is not counted again as blocked time */
	assert_null(find_rule(a, "blocked_on_thread", LAUNCHER));
	analysis__free(a);
	synth__free(b);
}

/* The scheduler's GIL waits name the holder: 3 waits of 100 ms of a
 * thread of a process that launched nothing (it waits, it hardly runs)
 * while thread 102 holds the GIL running collate(); thread 103, sampled
 * running Python too, held nothing. */
static void test_gil_contention_holder_named(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;
	json_t *holders;

	(void)state;
	python_stack(b);
	gil_traced(b);
	blocked(b, T0 + 1 * MS, T0 + 100 * MS, LAUNCHER, 0, 0);
	for (int i = 0; i < 3; i++) {
		__u64 t = T0 + 100 * MS + (__u64)i * 300 * MS;

		ev_gil_wait(b, t, LAUNCHER, 100 * MS, OTHER);
		blocked(b, t, t + 100 * MS, LAUNCHER, PID, OTHER);
		blocked(b, t + 100 * MS + 10 * US, t + 300 * MS, LAUNCHER, 0, 0);
		for (int k = 0; k < 10; k++) {
			ev_py_sample(b, t + 5 * MS + (__u64)k * 10 * MS, PID, OTHER, 1, ISR_PY_KIND_TIMER);
			ev_py_sample(b, t + 6 * MS + (__u64)k * 10 * MS, PID, 103, 1, ISR_PY_KIND_TIMER);
		}
	}
	a = analyze(b);
	f = expect(a, "gil_contention", LAUNCHER, 0.3);
	expect_text(f, "held by thread 102 `augment` 100%");
	expect_text(f, "running `/home/u/train.py:88 collate`");
	assert_string_equal(json_string_value(json_object_get(f->evidence, "holder_source")), "gil_waits");
	holders = json_object_get(f->evidence, "holders");
	assert_int_equal(json_array_size(holders), 1);
	assert_true(fabs(json_real_value(json_object_get(json_array_get(holders, 0), "seconds")) - 0.3) < 0.001);
	analysis__free(a);
	synth__free(b);
}

/* The GIL traced, no thread waited for it: judged, nothing found. */
static void test_gil_traced_no_contention(void **state)
{
	struct synth *b = job(1000 * MS);
	struct analysis *a;

	(void)state;
	python_stack(b);
	gil_traced(b);
	ev_gil_wait(b, T0 + 100 * MS, LAUNCHER, 1 * MS, OTHER);
	for (int i = 0; i < 10; i++)
		ev_py_sample(b, T0 + (__u64)i * 90 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
	a = analyze(b);
	assert_null(find_rule(a, "gil_contention", 0));
	for (size_t i = 0; i < a->ex->findings.nnj; i++)
		assert_string_not_equal(a->ex->findings.nj[i].rule, "gil_contention");
	analysis__free(a);
	synth__free(b);
}

/* Preempted by pid 900 for 20 x 10 ms: named by pid when nothing named it,
 * by its name when the recording has it (task_info). */
static void test_cpu_contention(void **state)
{
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int named = 0; named < 2; named++) {
		struct synth *b = job(1000 * MS);

		ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		for (int i = 0; i < 20; i++) {
			__u64 t = T0 + 10 * MS + (__u64)i * 40 * MS;

			ev_switch(b, t, PID, LAUNCHER, 900, 901, 0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
			if (named && i == 0)
				ev_task_info(b, t, LAUNCHER, 900, 901, "ffmpeg-enc", "ffmpeg");
			ev_switch(b, t + 10 * MS, 900, 901, PID, LAUNCHER, 0, 0);
		}
		a = analyze(b);
		f = expect(a, "cpu_contention", LAUNCHER, 0.2);
		expect_text(f, named ? "the CPU went to pid 900 `ffmpeg` 100%" : "pid 900 (not traced) 100%");
		analysis__free(a);
		synth__free(b);
	}
}

/* The recorder's account at the start (ISR_SAMPLING_COSTS): the tracer is
 * pid tracer, a traced page fault costs it fault_ns. */
static void ev_tracer(struct synth *b, __u32 tracer, __u64 fault_ns)
{
	struct isr_ev_sampling *e = synth__event(b, ISR_EV_SAMPLING, sizeof(*e) + sizeof(struct isr_sampling_costs),
						 T0, 0, 0);
	struct isr_sampling_costs *c = (void *)(e + 1);

	e->kind = ISR_SAMPLING_COSTS;
	e->hit_cost_ps = 500000;
	c->tracer_pid = tracer;
	c->fault_ps = fault_ns * 1000;
}

/* Preempted 20 x 10 ms by pid 900 and 20 x 10 ms by the tracer (pid 950):
 * the tracer's 0.2 s is its own cost, named as the tracer and counted by
 * no finding; preempted by the tracer alone, the thread has no
 * cpu_contention finding and nothing counts that wait as the job's. */
static void test_cpu_contention_tracer(void **state)
{
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int other = 1; other >= 0; other--) {
		struct synth *b = job(1000 * MS);

		ev_tracer(b, 950, 0);
		ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		for (int i = 0; i < 40; i++) {
			__u64 t = T0 + 10 * MS + (__u64)i * 20 * MS;
			__u32 by = i % 2 && other ? 900 : 950;

			ev_switch(b, t, PID, LAUNCHER, by, by + 1, 0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
			if (i < 2)
				ev_task_info(b, t, LAUNCHER, by, by + 1, by == 900 ? "ffmpeg" : "inferscope-bpf",
					     by == 900 ? "ffmpeg" : "inferscope-bpf");
			ev_switch(b, t + 10 * MS, by, by + 1, PID, LAUNCHER, 0, 0);
		}
		a = analyze(b);
		if (other) {
			f = expect(a, "cpu_contention", LAUNCHER, 0.2);
			expect_text(f, "waited 0.200 s for a CPU");
			expect_text(f, "and 0.200 s more while the tracer's own threads held it");
			expect_text(f, "the tracer (inferscope-bpf, pid 950) 50%");
		} else {
			assert_null(find_rule(a, "cpu_contention", 0));
			for (size_t i = 0; i < a->ex->findings.n; i++)
				if (strstr(a->ex->findings.v[i].summary, "for a CPU"))
					fail_msg("the tracer's wait counted: %s", a->ex->findings.v[i].summary);
		}
		analysis__free(a);
		synth__free(b);
	}
}

/* Names of tasks that are not traced, as the report writes them. */
static void test_untraced_task_names(void **state)
{
	struct synth *b = job(100 * MS);
	struct rule_ctx c = { 0 };
	struct analysis *a;
	char buf[96];

	(void)state;
	ev_task_info(b, T0 + 1 * MS, LAUNCHER, 900, 901, "ffmpeg-enc", "ffmpeg");
	ev_task_info(b, T0 + 2 * MS, LAUNCHER, 77, 77, "kworker/0:1", "kworker/0:1");
	ev_task_info(b, T0 + 3 * MS, LAUNCHER, 500, 501, "a`b", "");
	a = analyze(b);
	c.tl = a->ex->tl;
	c.r = &b->rec;
	rule_task_name(&c, 900, 900, buf, sizeof(buf));
	assert_string_equal(buf, "pid 900 `ffmpeg`");
	rule_task_name(&c, 900, 901, buf, sizeof(buf));
	assert_string_equal(buf, "thread 901 `ffmpeg-enc` of pid 900 `ffmpeg`");
	rule_task_name(&c, 900, 902, buf, sizeof(buf));
	assert_string_equal(buf, "thread 902 of pid 900 `ffmpeg`");
	rule_task_name(&c, 77, 77, buf, sizeof(buf));
	assert_string_equal(buf, "pid 77 `kworker/0:1`");
	rule_task_name(&c, 500, 501, buf, sizeof(buf));
	assert_string_equal(buf, "thread 501 `a'b` of pid 500");
	rule_task_name(&c, 600, 600, buf, sizeof(buf));
	assert_string_equal(buf, "pid 600 (not traced)");
	rule_task_name(&c, 600, 601, buf, sizeof(buf));
	assert_string_equal(buf, "thread 601 of pid 600 (not traced)");
	rule_task_name(&c, PID, LAUNCHER, buf, sizeof(buf));
	assert_string_equal(buf, "thread 101 `trainer`");
	analysis__free(a);
	synth__free(b);
}

/* 30 faults of 5 ms, each of which cost the tracer 2 ms (measured at the
 * start): 0.09 s is the job's, said with the tracer's 0.06 s; at 5 ms a
 * fault, all of it is the tracer's and there is no finding. */
static void test_page_fault_tracer_cost(void **state)
{
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int all = 0; all < 2; all++) {
		struct synth *b = job(1000 * MS);

		ev_tracer(b, 950, all ? 5 * MS : 2 * MS);
		ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		for (int i = 0; i < 30; i++)
			ev_fault(b, T0 + 20 * MS + (__u64)i * 30 * MS, PID, LAUNCHER, 5 * MS, ISR_FAULT_HAS_START);
		a = analyze(b);
		if (all) {
			assert_null(find_rule(a, "page_fault_storm", 0));
		} else {
			f = expect(a, "page_fault_storm", LAUNCHER, 0.09);
			expect_text(f, "spent 0.090 s in page faults");
			expect_text(f, "beyond what tracing them cost (0.060 s of the 0.150 s measured: 2000.00 µs a fault");
		}
		analysis__free(a);
		synth__free(b);
	}
}

/* The cost of tracing a fault measured high at the start (a busy host):
 * 2 ms, while one of the thread's 30 faults took 1 ms in all. Tracing
 * cannot take more of a fault than that: 30 x 1 ms is the tracer's, the
 * job's 0.116 s of the 0.146 s stays a finding. */
static void test_page_fault_tracer_cost_above_fastest(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	ev_tracer(b, 950, 2 * MS);
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 30; i++)
		ev_fault(b, T0 + 20 * MS + (__u64)i * 30 * MS, PID, LAUNCHER, i ? 5 * MS : 1 * MS, ISR_FAULT_HAS_START);
	a = analyze(b);
	f = expect(a, "page_fault_storm", LAUNCHER, 0.116);
	expect_text(f, "beyond what tracing them cost (0.030 s of the 0.146 s measured: 1000.00 µs a fault, its "
		       "fastest fault's time");
	analysis__free(a);
	synth__free(b);
}

/* 30 major faults of 5 ms on a memory-mapped file. */
static void test_page_fault_storm(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	b->rec.processes[0].maps = strdup("7f0000000000-7f0010000000 r--s 00000000 08:01 42 /data/weights.bin\n");
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 30; i++) {
		struct isr_ev_page_fault *e = synth__event(b, ISR_EV_PAGE_FAULT, sizeof(*e),
							   T0 + 20 * MS + (__u64)i * 30 * MS, PID, LAUNCHER);

		e->address = 0x7f0000001000ULL + (__u64)i * 4096;
		e->duration_ns = 5 * MS;
		e->flags = ISR_FAULT_MAJOR | ISR_FAULT_HAS_START;
	}
	a = analyze(b);
	f = expect(a, "page_fault_storm", LAUNCHER, 0.15);
	expect_text(f, "/data/weights.bin");
	expect_text(f, "30 major (30 from files");
	analysis__free(a);
	synth__free(b);
}

static void ev_reclaim(struct synth *b, __u64 ts, __u32 tid, __u64 duration, __u64 pages, __u32 kind)
{
	struct isr_ev_reclaim *e = synth__event(b, ISR_EV_RECLAIM, sizeof(*e), ts, PID, tid);

	e->duration_ns = duration;
	e->nr_reclaimed = pages;
	e->kind = kind;
}

/* A page fault of the launcher at addr, over [start, start + duration). */
static void fault_at(struct synth *b, __u64 start, __u64 duration, __u64 addr, __u32 flags)
{
	struct isr_ev_page_fault *e = synth__event(b, ISR_EV_PAGE_FAULT, sizeof(*e), start + duration, PID, LAUNCHER);

	e->address = addr;
	e->duration_ns = duration;
	e->flags = flags | ISR_FAULT_HAS_START;
}

/* The launcher reclaims 20 x 10 ms at its cgroup's limit, 5 of them inside
 * 12 ms minor faults (1 ms of fault on each side), and waits 6 x 5 ms for
 * anonymous pages (swap-in): faults stay under page_fault_storm's
 * threshold (40 ms, 4%), so host_memory_pressure counts the reclaims and
 * the swap-ins, 0.23 s. */
static void plant_pressure(struct synth *b, int swapins)
{
	b->rec.processes[0].maps = strdup("7f0000000000-7f0010000000 r--s 00000000 08:01 42 /data/weights.bin\n");
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 20; i++) {
		__u64 t = T0 + 20 * MS + (__u64)i * 40 * MS;

		ev_reclaim(b, t, LAUNCHER, 10 * MS, 256, ISR_RECLAIM_MEMCG);
		if (i < 5)
			fault_at(b, t - 1 * MS, 12 * MS, 0x7f0000001000ULL + (__u64)i * 4096, 0);
	}
	/* between the reclaims and their faults (free from 31 to 59 ms after
	 * T0 + 40 ms x slot), up to 5 a slot */
	for (int i = 0; i < swapins; i++) {
		__u64 slot = swapins <= 20 ? (__u64)i : (__u64)i / 5, off = swapins <= 20 ? 0 : (__u64)(i % 5) * 5 * MS;

		fault_at(b, T0 + 32 * MS + slot * 40 * MS + off, 5 * MS, 0x10000000ULL + (__u64)i * 4096, ISR_FAULT_MAJOR);
	}
}

static void test_host_memory_pressure(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	plant_pressure(b, 6);
	a = analyze(b);
	f = expect(a, "host_memory_pressure", LAUNCHER, 0.2 + 0.03);
	expect_text(f, "0.200 s reclaiming memory itself");
	expect_text(f, "20 reclaims freeing 5120 pages; 20 at its memory cgroup's limit");
	expect_text(f, "0.030 s waiting for 6 pages swapped out");
	assert_null(find_rule(a, "page_fault_storm", LAUNCHER));
	analysis__free(a);
	synth__free(b);
}

/* With 100 swap-ins of 5 ms page_fault_storm claims the faults (0.51 s,
 * the swap-ins and the minor faults' 10 ms outside their reclaims): memory
 * pressure counts the reclaims alone, and says where the swap-ins went. */
static void test_host_memory_pressure_faults_claimed(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	plant_pressure(b, 100);
	a = analyze(b);
	expect(a, "page_fault_storm", LAUNCHER, 0.5 + 0.01);
	f = expect(a, "host_memory_pressure", LAUNCHER, 0.2);
	expect_text(f, "its 100 swap-ins are counted under page faults");
	analysis__free(a);
	synth__free(b);
}

/* Blocked 4 x 100 ms, each time woken by thread 102. */
static void test_blocked_on_thread(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 4; i++) {
		__u64 t = T0 + 50 * MS + (__u64)i * 200 * MS;

		blocked(b, t, t + 100 * MS, LAUNCHER, PID, OTHER);
	}
	a = analyze(b);
	f = expect(a, "blocked_on_thread", LAUNCHER, 0.4);
	expect_text(f, "waiting on thread 102 `augment`");
	analysis__free(a);
	synth__free(b);
}

/* The same waits, where `augment` launches GPU work too (autograd's
 * backward thread and the main thread hand work to each other): the wait is
 * a hand-off between launching threads, no thread's own cost. */
static void test_launcher_handoff_no_blocked(void **state)
{
	struct synth *b = job(1000 * MS);
	struct analysis *a;

	(void)state;
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	ev_launch(b, T0 + 2 * MS, PID, OTHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 4; i++) {
		__u64 t = T0 + 50 * MS + (__u64)i * 200 * MS;

		blocked(b, t, t + 100 * MS, LAUNCHER, PID, OTHER);
	}
	a = analyze(b);
	assert_null(find_rule(a, "blocked_on_thread", 0));
	analysis__free(a);
	synth__free(b);
}

/* The same waits, each ended by a timer's interrupt while `augment` had the
 * CPU: nobody's output was waited for, no finding names `augment`. */
static void test_interrupt_wake_names_nobody(void **state)
{
	struct synth *b = job(1000 * MS);
	struct analysis *a;

	(void)state;
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 4; i++) {
		__u64 t = T0 + 50 * MS + (__u64)i * 200 * MS;

		ev_switch(b, t, PID, LAUNCHER, 0, 0, 0x1, 0);
		ev_wakeup_irq(b, t + 100 * MS, PID, LAUNCHER, PID, OTHER);
		ev_switch(b, t + 100 * MS, 0, 0, PID, LAUNCHER, 0, 0);
	}
	ev_launch(b, T0 + 900 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	a = analyze(b);
	assert_null(find_rule(a, "blocked_on_thread", 0));
	assert_null(find_rule(a, "input_bound", 0));
	for (size_t i = 0; i < a->ex->findings.n; i++)
		assert_null(strstr(a->ex->findings.v[i].summary, "augment"));
	analysis__free(a);
	synth__free(b);
}

/* --- wait chains, input-bound --------------------------------------------------------- */

#define WORKER0	200	/* the first of 3 worker processes of PID */
#define RELAY	103	/* a thread of PID between the launcher and the workers */

/* Three worker processes forked by PID, named `worker`. */
static void worker_pool(struct synth *b)
{
	for (__u32 w = 0; w < 3; w++) {
		const __u32 tid = WORKER0 + w;
		const char *const comm = "worker";

		synth__process(b, WORKER0 + w, "worker", 1, &tid, &comm);
		b->rec.processes[b->rec.process_count - 1].ppid = PID;
	}
}

/* The 3 workers make batches the whole second, all at once: on a CPU
 * throughout, or (starved) preempted every 10 ms for 5 ms. */
static void workers_busy(struct synth *b, bool starved)
{
	for (__u32 w = 0; w < 3; w++) {
		__u32 wp = WORKER0 + w;

		ev_switch(b, T0, 0, 0, wp, wp, 0, 0);
		for (int i = 0; starved && i < 100; i++) {
			__u64 t = T0 + (__u64)i * 10 * MS;

			ev_switch(b, t + 5 * MS, wp, wp, 0, 0, 0x0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
			ev_switch(b, t + 10 * MS, 0, 0, wp, wp, 0, 0);
		}
	}
}

/* A loop fed by the 3 busy worker processes: 10 steps of 100 ms, each a
 * 2 ms step on the "GPU" (launch, sync) and 98 ms blocked until a worker
 * hands it a batch, directly (relay false) or through a relay thread of its
 * own process that is blocked until then too. With hot_off, the budget
 * switches the hot path off that long after the start, to the end: the
 * launches from then on are not recorded, the synchronizations are unless
 * gap_quiet (a thread that made no CUDA call the recorder saw). */
static struct synth *fed_loop_sampled(bool relay, bool starved, __u64 hot_off, bool gap_quiet)
{
	struct synth *b = job(1000 * MS);
	struct isr_ev_sampling *sm;

	worker_pool(b);
	workers_busy(b, starved);
	if (hot_off) {
		sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0, 0, 0);
		sm->kind = ISR_SAMPLING_START;
		sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0 + hot_off, 0, 0);
		sm->kind = ISR_SAMPLING_OFF;
	}
	for (int i = 0; i < 10; i++) {
		__u64 t = T0 + (__u64)i * 100 * MS, ready = t + 100 * MS - 10 * US;
		__u32 wp = WORKER0 + (__u32)i % 3;
		bool seen = !hot_off || t < T0 + hot_off;

		if (seen)
			ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		if (seen || !gap_quiet)
			sync_call(b, t + 100 * US, LAUNCHER, 1 * MS);
		ev_switch(b, t + 2 * MS, PID, LAUNCHER, 0, 0, 0x1, 0);
		if (relay) {
			ev_switch(b, t + 2 * MS + 10 * US, PID, RELAY, 0, 0, 0x1, 0);
			ev_wakeup_by(b, ready - 20 * US, PID, RELAY, wp, wp);
			ev_switch(b, ready - 10 * US, 0, 0, PID, RELAY, 0, 0);
			ev_wakeup_by(b, ready, PID, LAUNCHER, PID, RELAY);
		} else {
			ev_wakeup_by(b, ready, PID, LAUNCHER, wp, wp);
		}
		ev_switch(b, ready, 0, 0, PID, LAUNCHER, 0, 0);
	}
	/* the last launch, once the last batch came (in the gap, its
	 * synchronization) */
	if (!hot_off)
		ev_launch(b, T0 + 999 * MS + 995 * US, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	else if (!gap_quiet)
		sync_call(b, T0 + 999 * MS + 995 * US, LAUNCHER, 2 * US);
	return b;
}

static struct synth *fed_loop(bool relay, bool starved)
{
	return fed_loop_sampled(relay, starved, 0, false);
}

static json_t *chain_link(const struct finding *f, size_t i)
{
	json_t *l = json_array_get(json_object_get(f->evidence, "chain"), i);

	assert_non_null(l);
	return l;
}

/* The loop waits for the workers: input_bound, its cost the loop's blocked
 * time, the chain's one link the three worker processes (busy), and no
 * host_bound, sync_stall or blocked_on_thread for the same seconds. */
static void test_input_bound_workers(void **state)
{
	struct synth *b = fed_loop(false, false);
	const struct finding *f;
	struct analysis *a;
	json_t *l;

	(void)state;
	a = analyze(b);
	f = expect(a, "input_bound", LAUNCHER, 10 * 0.098);
	assert_int_equal(f->severity, SEV_CRITICAL);
	assert_string_equal(json_string_value(json_object_get(f->evidence, "producers")), "busy");
	assert_int_equal(json_array_size(json_object_get(f->evidence, "chain")), 1);
	l = chain_link(f, 0);
	assert_string_equal(json_string_value(json_object_get(l, "group")), "processes");
	assert_int_equal(json_integer_value(json_object_get(l, "parent_pid")), PID);
	assert_int_equal(json_array_size(json_object_get(l, "members")), 3);
	expect_text(f, "3 processes `worker` (pids 200, 201, 202; children of pid 100)");
	assert_null(find_rule(a, "host_bound", 0));
	assert_null(find_rule(a, "sync_stall", 0));
	assert_null(find_rule(a, "blocked_on_thread", 0));
	analysis__free(a);
	synth__free(b);
}

/* The budget switched the hot path off 450 ms in, to the end: the last
 * launch seen is the fifth step's. The synchronizations it made in the gap
 * stand for its launches there, so its wait for the last batch counts
 * too: the same 10 x 98 ms as with every launch recorded (it was 4 x 98
 * ms, from its first launch seen to its last). Without a CUDA call seen in
 * the gap, the window ends at its last launch: 4 x 98 ms. */
static void test_input_bound_hot_path_sampled(void **state)
{
	struct synth *b = fed_loop_sampled(false, false, 450 * MS, false);
	struct analysis *a;

	(void)state;
	a = analyze(b);
	expect(a, "input_bound", LAUNCHER, 10 * 0.098);
	analysis__free(a);
	synth__free(b);
	b = fed_loop_sampled(false, false, 450 * MS, true);
	a = analyze(b);
	expect(a, "input_bound", LAUNCHER, 4 * 0.098);
	analysis__free(a);
	synth__free(b);
}

/* Through a relay thread of its own process, itself blocked on the workers,
 * who wait for a CPU half the time: two links, the workers starved of CPU,
 * and their run-queue wait part of this finding, not one cpu_contention
 * finding per worker. */
static void test_input_bound_chain_starved(void **state)
{
	struct synth *b = fed_loop(true, true);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	a = analyze(b);
	f = expect(a, "input_bound", LAUNCHER, 10 * 0.098);
	assert_int_equal(json_array_size(json_object_get(f->evidence, "chain")), 2);
	assert_string_equal(json_string_value(json_object_get(chain_link(f, 0), "group")), "thread");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(chain_link(f, 0), "members"),
									    0), "tid")), RELAY);
	assert_string_equal(json_string_value(json_object_get(chain_link(f, 1), "group")), "processes");
	assert_string_equal(json_string_value(json_object_get(f->evidence, "producers")), "cpu_starved");
	assert_null(find_rule(a, "cpu_contention", 0));
	assert_null(find_rule(a, "blocked_on_thread", 0));
	analysis__free(a);
	synth__free(b);
}

/* The relay launches GPU work too (autograd's backward thread): the
 * launcher's wait on it is a hand-off, one input_bound finding, the
 * relay's, whose chain reaches the workers. */
static void test_input_bound_handoff_once(void **state)
{
	struct synth *b = fed_loop(true, false);
	struct analysis *a;
	size_t n = 0;

	(void)state;
	ev_launch(b, T0 + 1 * MS, PID, RELAY, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	ev_launch(b, T0 + 999 * MS + 996 * US, PID, RELAY, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	a = analyze(b);
	for (size_t i = 0; i < a->ex->findings.n; i++)
		n += strcmp(a->ex->findings.v[i].rule, "input_bound") == 0;
	assert_int_equal(n, 1);
	expect(a, "input_bound", RELAY, 10 * 0.098);
	assert_null(find_rule(a, "blocked_on_thread", 0));
	analysis__free(a);
	synth__free(b);
}

/* Three processes of one parent waiting for a CPU, half of every 100 ms,
 * each started directly or (wrapped) through a wrapper of its own (an `sh
 * -c` of the parent's that ran 1 ms and waits for it): one finding for the
 * pool, its cost their run-queue wait summed. */
static void pool_waits_for_cpu(bool wrapped)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	worker_pool(b);
	for (__u32 w = 0; wrapped && w < 3; w++) {
		const __u32 sh = 300 + w;
		const char *const comm = "sh";

		synth__process(b, sh, "sh", 1, &sh, &comm);
		b->rec.processes[b->rec.process_count - 1].ppid = PID;
		b->rec.processes[1 + w].ppid = sh;	/* worker w (after job's process) */
		ev_switch(b, T0, 0, 0, sh, sh, 0, 0);
		ev_switch(b, T0 + 1 * MS, sh, sh, 0, 0, 0x1, 0);
	}
	for (__u32 w = 0; w < 3; w++)
		for (int i = 0; i < 10; i++) {
			__u64 t = T0 + (__u64)i * 100 * MS;
			__u32 wp = WORKER0 + w;

			ev_switch(b, t, 0, 0, wp, wp, 0, 0);
			ev_switch(b, t + 50 * MS, wp, wp, 0, 0, 0x0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
		}
	a = analyze(b);
	f = expect(a, "cpu_contention", 0, 3 * 0.5);
	assert_int_equal(json_array_size(json_object_get(f->evidence, "threads")), 3);
	expect_text(f, "3 processes `worker` (pids 200, 201, 202; children of pid 100) waited 1.500 s for a CPU");
	assert_int_equal(a->ex->findings.n, 1);
	analysis__free(a);
	synth__free(b);
}

static void test_cpu_contention_one_per_pool(void **state)
{
	(void)state;
	pool_waits_for_cpu(false);
}

/* The wrappers are folded into their workers, which are still one pool of
 * the parent. */
static void test_cpu_contention_pool_through_wrappers(void **state)
{
	(void)state;
	pool_waits_for_cpu(true);
}

/* A short wait of a wrapper in a long job is nobody's bottleneck: a
 * finding under 1% of the job's time is not made, and one of 8% is a
 * warning, not critical. */
static void test_severity_from_job_share(void **state)
{
	struct synth *b = job(10000 * MS);
	struct analysis *a;
	const __u32 shim = 300;
	const char *const comm = "bash";

	(void)state;
	synth__process(b, shim, "bash", 1, &shim, &comm);
	ev_switch(b, T0, 0, 0, shim, shim, 0, 0);
	ev_switch(b, T0 + 10 * MS, shim, shim, 0, 0, 0x0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
	ev_switch(b, T0 + 34 * MS, 0, 0, shim, shim, 0, 0);
	ev_exit(b, T0 + 40 * MS, shim, shim, "bash");
	python_stack(b);
	for (int i = 0; i < 1000; i++) {
		__u64 t = T0 + (__u64)i * 10 * MS;

		ev_launch(b, t + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		ev_py_sample(b, t + 5 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
		if (i % 10 == 0)
			ev_gil(b, t + 2 * MS, PID, LAUNCHER, ISR_GIL_ACQUIRE, 8 * MS);
	}
	a = analyze(b);
	assert_null(find_rule(a, "cpu_contention", 0));
	assert_int_equal(expect(a, "gil_contention", LAUNCHER, 100 * 0.008)->severity, SEV_WARNING);
	analysis__free(a);
	synth__free(b);
}

/* A GPU-fed loop whose process tears down for 600 ms after its last step,
 * the GPU idle and nothing launched: the tail is no finding's cost, and
 * the device's idle share is of its active time. */
static void test_tail_is_no_cost(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	const struct attr_device *d;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 40; i++) {
		__u64 t = T0 + (__u64)i * 10 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 10 * MS, 0);
		if (i % 10 == 9)
			sync_call(b, t + 100 * US, LAUNCHER, 10 * MS);
	}
	ev_gpu_flushed(b, T0 + 999 * MS, PID);
	a = analyze(b);
	expect_none(a);
	d = only_device(a);
	assert_true(d->trailing_ns > 550 * MS);
	assert_true(d->active_ns < 420 * MS);
	analysis__free(a);
	synth__free(b);
}

/* After each synchronization the launcher blocks on another thread before
 * it launches again: that idle is the other thread's to explain
 * (blocked_on_thread), not the synchronization's. */
static void test_idle_after_sync_by_what_host_did(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 20; i++) {
		__u64 t = T0 + (__u64)i * 45 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 5 * MS - 20 * US, 0);
		sync_call(b, t + 100 * US, LAUNCHER, 5 * MS);
		blocked(b, t + 5 * MS + 200 * US, t + 45 * MS - 100 * US, LAUNCHER, PID, OTHER);
	}
	ev_gpu_flushed(b, T0 + 999 * MS, PID);
	a = analyze(b);
	expect(a, "blocked_on_thread", LAUNCHER, 19 * 0.0397);
	assert_null(find_rule(a, "sync_stall", 0));
	analysis__free(a);
	synth__free(b);
}

/* --- synchronization, host-bound ------------------------------------------------------- */

/* Without GPU activity: 10 x (launch, a 50 ms sync, 44 ms of host work
 * before the next launch): the GPU is idle 440 ms after the syncs, host
 * work that would have overlapped the 50 ms of GPU work each waited for. */
static void test_sync_stall_host_view(void **state)
{
	struct synth *b = job(1000 * MS);
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 10; i++) {
		__u64 t = T0 + (__u64)i * 95 * MS;

		ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		sync_call(b, t + 1 * MS, LAUNCHER, 50 * MS);
		blocked(b, t + 1 * MS + 10 * US, t + 51 * MS - 10 * US, LAUNCHER, PID, LAUNCHER);
	}
	ev_launch(b, T0 + 950 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	a = analyze(b);
	/* after each sync's return at t + 51 ms, the next launch at t + 95 ms */
	expect(a, "sync_stall", LAUNCHER, 10 * 0.044);
	analysis__free(a);
	synth__free(b);
}

/* The same job with the hot path off from 460 to 910 ms (the budget's
 * window: the launches then are not recorded, the synchronizations are)
 * and another thread's burst of launches from 912 ms: the queue is empty
 * 44 ms after each synchronization but the last, whose return at 906 ms
 * the burst follows 6 ms later: 402 ms. The drains after the 4
 * synchronizations judged (their next launch seen) give the other 6 their
 * mean, each within its bound (the host work before the next
 * synchronization, or the next launch seen: the last one's 6 ms), exactly;
 * the hot path's scale, set by its launches (the burst among them), is not
 * theirs. */
static void test_sync_stall_sampled(void **state)
{
	struct synth *b = job(1000 * MS);
	struct isr_ev_sampling *sm;
	const struct finding *f;
	struct analysis *a;

	(void)state;
	sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0, 0, 0);
	sm->kind = ISR_SAMPLING_START;
	sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0 + 460 * MS, 0, 0);
	sm->kind = ISR_SAMPLING_OFF;
	sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0 + 910 * MS, 0, 0);
	sm->kind = ISR_SAMPLING_ON;
	for (int i = 0; i < 10; i++) {
		__u64 t = T0 + (__u64)i * 95 * MS;

		if (t < T0 + 460 * MS)
			ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		sync_call(b, t + 1 * MS, LAUNCHER, 50 * MS);
		blocked(b, t + 1 * MS + 10 * US, t + 51 * MS - 10 * US, LAUNCHER, PID, LAUNCHER);
	}
	/* another thread's burst in the last window, no synchronization pending */
	for (int i = 0; i < 400; i++)
		ev_launch(b, T0 + 912 * MS + (__u64)i * 75 * US, PID, OTHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	ev_launch(b, T0 + 950 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	a = analyze(b);
	print_message("hot-path scale %.3f\n", sampling__scale(&a->sum->sampling, PID));
	f = expect(a, "sync_stall", LAUNCHER, 9 * 0.044 + 0.006);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "drains")), 4);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "synchronizations_judged")), 4);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "synchronizations")), 10);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "synchronizations_estimated")), 6);
	expect_text(f, "After 4 of 4 synchronizations judged");
	expect_text(f, "the other 6 are estimated (≈0.226 s)");
	analysis__free(a);
	synth__free(b);
}

/* The drains are one phase's: 5 x (launch, a 50 ms sync, 40 ms of host
 * work before the next launch) inside the hot path's window, then the
 * budget switches it off and 100 x (a 10 ms sync, 0.2 ms of host work,
 * a launch not seen) follow: 200 ms + 99 x 0.2 ms (the last one's next
 * launch never comes: the queue stays empty to the end, a tail that is no
 * cost). The judged drains' mean (40 ms) given to each of the 100 made it
 * 4.2 s; each is held to the host work its thread did before its next
 * synchronization. */
static void test_sync_stall_phase_in_a_window(void **state)
{
	struct synth *b = job(2000 * MS);
	struct isr_ev_sampling *sm;
	const struct finding *f;
	struct analysis *a;
	__u64 t = T0;

	(void)state;
	sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0, 0, 0);
	sm->kind = ISR_SAMPLING_START;
	for (int i = 0; i < 5; i++, t += 91 * MS) {
		ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		sync_call(b, t + 1 * MS, LAUNCHER, 50 * MS);
		blocked(b, t + 1 * MS + 10 * US, t + 51 * MS - 10 * US, LAUNCHER, PID, LAUNCHER);
	}
	ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), t + 100 * US, 0, 0);
	sm->kind = ISR_SAMPLING_OFF;
	t += 200 * US;
	for (int i = 0; i < 100; i++, t += 10200 * US) {
		sync_call(b, t, LAUNCHER, 10 * MS);
		blocked(b, t + 10 * US, t + 10 * MS - 10 * US, LAUNCHER, PID, LAUNCHER);
	}
	a = analyze(b);
	f = expect(a, "sync_stall", LAUNCHER, 0.2 + 99 * 0.0002);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "synchronizations_judged")), 5);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "synchronizations_estimated")), 99);
	analysis__free(a);
	synth__free(b);
}

/* An 8 ms synchronization, then 86 ms of host work before the next
 * launch: removing the synchronization would let only the 8 ms of GPU
 * work it waited for overlap the host's; the other 78 ms the GPU waits for
 * the host anyway (host-bound), whatever the synchronization. */
static void test_sync_stall_only_what_it_waited_for(void **state)
{
	struct synth *b = job(1000 * MS);
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 10; i++) {
		__u64 t = T0 + (__u64)i * 95 * MS;

		ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		sync_call(b, t + 1 * MS, LAUNCHER, 8 * MS);
		blocked(b, t + 1 * MS + 10 * US, t + 9 * MS - 10 * US, LAUNCHER, PID, LAUNCHER);
	}
	ev_launch(b, T0 + 950 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	a = analyze(b);
	expect(a, "sync_stall", LAUNCHER, 10 * 0.008);
	/* its 870 ms of host work, less the 80 ms sync_stall counted */
	expect(a, "host_bound", LAUNCHER, 0.870 - 0.080);
	analysis__free(a);
	synth__free(b);
}

/* A launcher that runs Python and seldom waits for the GPU. */
static void test_host_bound(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	python_stack(b);
	for (int i = 0; i < 100; i++) {
		__u64 t = T0 + (__u64)i * 10 * MS;

		ev_launch(b, t + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		ev_py_sample(b, t + 5 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
	}
	a = analyze(b);
	f = expect(a, "host_bound", LAUNCHER, 1.0);
	expect_text(f, "record with --gpu");
	expect_text(f, "running Python (most at `/home/u/train.py:88 collate`)");
	/* a Python launcher without GPU activity or GIL events: what could not
	 * be judged, and the flags that would let it be */
	assert_int_equal(a->ex->findings.nnj, 4);
	for (size_t i = 0; i < a->ex->findings.nnj; i++) {
		const struct not_judged *nj = &a->ex->findings.nj[i];

		assert_true(strcmp(nj->rule, "gil_contention") == 0 || strcmp(nj->rule, "launch_bound") == 0 ||
			    strcmp(nj->rule, "pcie_saturation") == 0 || strcmp(nj->rule, "gpu_idle") == 0);
		assert_non_null(strstr(nj->needs, strcmp(nj->rule, "gil_contention") ? "--gpu" : "--gil"));
	}
	analysis__free(a);
	synth__free(b);
}

/* --- GPU --------------------------------------------------------------------------------- */

/* 1 ms kernels every 10 ms; between them the launcher runs collate(). */
static void test_gpu_idle_python(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	python_stack(b);
	for (int i = 0; i < 99; i++) {
		__u64 t = T0 + (__u64)i * 10 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 1 * MS, 0);
		ev_py_sample(b, t + 5 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
	}
	a = analyze(b);
	/* 98 gaps of 9 ms less the 18 us from each launch to its kernel */
	f = expect(a, "gpu_idle", LAUNCHER, 98 * (9 * 1e-3 - 18e-6));
	expect_text(f, "ran Python");
	expect_text(f, "most at `/home/u/train.py:88 collate`");
	analysis__free(a);
	synth__free(b);
}

/* The GPU idle between launches while the launching thread ran native
 * code: 99 launches 10 ms apart are a slow call each (a profiler finds it);
 * 12,000 launches 80 us apart (70 us of native code each, more than launch
 * overhead) are the framework's work per operation, which a CUDA graph
 * replays at once. */
static void test_gpu_idle_native(void **state)
{
	(void)state;
	for (int per_op = 0; per_op < 2; per_op++) {
		int n = per_op ? 12000 : 99;
		__u64 apart = per_op ? 80 * US : 10 * MS, kernel = per_op ? 10 * US : 1 * MS;
		struct synth *b = gpu_job(1000 * MS);
		const struct finding *f;
		struct analysis *a;

		for (int i = 0; i < n; i++)
			gpu_launch(b, T0 + (__u64)i * apart, PID, LAUNCHER, (__u32)i + 1, 0, kernel, 0);
		a = analyze(b);
		f = find_rule(a, "gpu_idle", LAUNCHER);
		if (!f) {
			print_findings(a);
			fail_msg("no gpu_idle finding");
		}
		print_message("%s\n", f->suggestion);
		expect_text(f, "ran native code");
		if (per_op) {
			assert_non_null(strstr(f->suggestion, "70 us a launch over its 12000 launches"));
			assert_non_null(strstr(f->suggestion, "CUDA graph"));
		} else {
			assert_non_null(strstr(f->suggestion, "profile it (perf record -g -t TID)"));
		}
		analysis__free(a);
		synth__free(b);
	}
}

/* 5 ms kernels; a sync returns as each ends, then 20 ms of host work. */
static void test_sync_stall_gpu(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 39; i++) {
		__u64 t = T0 + (__u64)i * 25 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 15 * MS, 0);
		sync_call(b, t + 100 * US, LAUNCHER, 14920 * US + 5 * US);
	}
	/* the tracer's flush request at the end, answered */
	ev_gpu_flushed(b, T0 + 999 * MS, PID);
	a = analyze(b);
	/* each gap: from the kernel's end (the sync returns 5 us later) to
	 * the next kernel 25 ms after the last: 10 ms of host work that the
	 * 15 ms of GPU work each sync waited for would have hidden; the last
	 * one, from the last work to the end (45 ms), is the job's tail: no
	 * finding's cost */
	expect(a, "sync_stall", LAUNCHER, 38 * (25e-3 - 15e-3));
	assert_null(find_rule(a, "gpu_idle", 0));
	analysis__free(a);
	synth__free(b);
}

/* As test_sync_stall_gpu, but the launcher is preempted inside each
 * synchronization from 1 ms before its kernel ends to 3 ms after (HOG had
 * its CPU; the call returns within the drain's 5 ms slack): of each gap,
 * those 3 ms are waiting for a CPU, not the synchronization's; its 7 ms of
 * host work after the return stay sync_stall's. */
#define HOG_PID 900
static void test_sync_preempted_is_runqueue(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	const struct attr_device *d;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 39; i++) {
		__u64 t = T0 + (__u64)i * 25 * MS, end = t + 20 * US + 15 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 15 * MS, 0);
		sync_call(b, t + 100 * US, LAUNCHER, end + 3 * MS + 5 * US - (t + 100 * US));
		ev_switch(b, end - 1 * MS, PID, LAUNCHER, HOG_PID, HOG_PID, 0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
		ev_switch(b, end + 3 * MS, HOG_PID, HOG_PID, PID, LAUNCHER, 0, 0);
	}
	ev_gpu_flushed(b, T0 + 999 * MS, PID);
	a = analyze(b);
	d = only_device(a);
	print_message("idle: runqueue %.3f s, sync_drain %.3f s, launch latency %.3f s\n", d->idle_ns[CAUSE_RUNQUEUE] / 1e9,
		      d->idle_ns[CAUSE_SYNC_DRAIN] / 1e9, d->idle_ns[CAUSE_LAUNCH_LATENCY] / 1e9);
	/* each of the 38 gaps before the tail (10 ms): 3 ms preempted, then 7 ms of host work */
	assert_int_equal(d->sync_drain_gaps, 38);
	assert_true(llabs((long long)d->idle_ns[CAUSE_RUNQUEUE] - (long long)(38 * 3 * MS)) < (long long)(38 * 50 * US));
	assert_true(d->idle_ns[CAUSE_LAUNCH_LATENCY] < 38 * 50 * US);
	expect(a, "sync_stall", LAUNCHER, 38 * 7e-3);
	/* the thread's wait for a CPU while the GPU was idle: its own finding
	 * (the 1 ms before each kernel's end cost nothing) */
	expect(a, "cpu_contention", LAUNCHER, 38 * 3e-3);
	analysis__free(a);
	synth__free(b);
}

/* A process that ends without its bridge flushing (os._exit, a kill): the
 * records of its last buffer never come. After the last record it was not
 * observed: its launches go on, its GPU is neither busy nor idle there. */
static void test_gpu_records_end_unflushed(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	struct tl_device td;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 20; i++) {
		__u64 t = T0 + (__u64)i * 20 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 20 * MS, 0);
	}
	/* 600 ms more of launches whose kernels were never delivered */
	for (int i = 20; i < 50; i++)
		ev_launch(b, T0 + (__u64)i * 20 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
	ev_exit(b, T0 + 1000 * MS - 1, PID, LAUNCHER, "python3");
	a = analyze(b);
	expect_none(a);
	assert_int_equal(timeline__device_count(a->ex->tl), 1);
	timeline__device(a->ex->tl, 0, &td);
	/* observed from the first kernel (20 us in) to the last record's end */
	assert_true(td.observed_ns >= 399 * MS && td.observed_ns <= 401 * MS);
	analysis__free(a);
	synth__free(b);
}

/* 20,000 kernels of 2 us with 5 us between them. */
static void test_launch_bound(void **state)
{
	struct synth *b = job(200 * MS);
	struct analysis *a;

	(void)state;
	ev_gpu_clock(b, T0 + 1 * MS, PID);
	ev_gpu_clock(b, T0 + 199 * MS, PID);
	for (int i = 0; i < 20000; i++) {
		__u64 t = T0 + 10 * MS + (__u64)i * 7 * US;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 4 * (long long)US, 2 * US, 0);
	}
	a = analyze(b);
	expect(a, "launch_bound", 0, 19999 * 5e-6);
	analysis__free(a);
	synth__free(b);
}

/* 100 copies to pageable memory of 4 MiB at 2 ms each, 10 pinned ones of
 * 4 MiB at 1 ms: the pageable ones cost 1 ms each more. */
static void test_pageable_memcpy_gpu(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 110; i++) {
		struct isr_ev_gpu_memcpy *m = synth__event(b, ISR_EV_GPU_MEMCPY, sizeof(*m), T0 + 990 * MS, PID, PID);

		m->start_ns = T0 + 10 * MS + (__u64)i * 8 * MS + GPU_AHEAD;
		m->end_ns = m->start_ns + (i < 100 ? 2 : 1) * MS;
		m->bytes = 4 * MIB;
		m->copy_kind = 2;
		m->src_kind = 3;
		m->dst_kind = i < 100 ? 1 : 2;
	}
	a = analyze(b);
	f = expect(a, "pageable_memcpy", 0, 0.1);
	expect_text(f, "100 copies");
	analysis__free(a);
	synth__free(b);
}

/* The same copies with their calls probed too (each call just before its
 * record, blocking as long as its copy: the pageable ones 2 ms, the pinned
 * ones returning at once): with GPU activity the records alone count, the
 * calls' own judging is dropped (the planted job's 100 pageable copies were
 * counted 183 with --gpu). */
static void test_pageable_memcpy_gpu_with_calls(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 110; i++) {
		__u64 at = T0 + 10 * MS + (__u64)i * 8 * MS;
		struct isr_ev_cuda_call *e = ev_call(b, at - 100 * SYNTH_US, PID, LAUNCHER,
						     ISR_CUDA_FN_cuMemcpyDtoHAsync_v2, 0,
						     i < 100 ? 2 * MS + 100 * SYNTH_US : 10 * SYNTH_US);
		struct isr_ev_gpu_memcpy *m;

		e->args[0] = 0x600000000ULL + (__u64)i * 4 * MIB;	/* before the next event moves it */
		e->args[2] = 4 * MIB;
		m = synth__event(b, ISR_EV_GPU_MEMCPY, sizeof(*m), T0 + 990 * MS, PID, PID);
		m->start_ns = at + GPU_AHEAD;
		m->end_ns = m->start_ns + (i < 100 ? 2 : 1) * MS;
		m->bytes = 4 * MIB;
		m->copy_kind = 2;
		m->src_kind = 3;
		m->dst_kind = i < 100 ? 1 : 2;
	}
	a = analyze(b);
	f = expect(a, "pageable_memcpy", 0, 0.1);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "copies")), 100);
	assert_true(json_is_true(json_object_get(f->evidence, "from_gpu_records")));
	analysis__free(a);
	synth__free(b);
}

/* Without GPU activity: 100 synchronous copies into pageable memory (2 ms),
 * 10 into pinned memory from cuMemHostAlloc (1 ms). */
static void test_pageable_memcpy_host(void **state)
{
	struct synth *b = job(1000 * MS);
	struct isr_ev_cuda_call *e;
	const struct finding *f;
	struct analysis *a;

	(void)state;
	e = ev_call(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemHostAlloc, 0, 100 * US);
	e->args[0] = 0x500000000ULL;
	e->args[1] = 64 * MIB;
	for (int i = 0; i < 110; i++) {
		e = ev_call(b, T0 + 10 * MS + (__u64)i * 8 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemcpyDtoH_v2, 0,
			    (i < 100 ? 2 : 1) * MS);
		e->args[0] = i < 100 ? 0x600000000ULL : 0x500000000ULL + (__u64)i * 4096;
		e->args[1] = 0x7000000000ULL;
		e->args[2] = 4 * MIB;
	}
	a = analyze(b);
	f = expect(a, "pageable_memcpy", 0, 0.1);
	expect_text(f, "100 copies");
	analysis__free(a);
	synth__free(b);
}

/* Without GPU activity: a buffer the program page-locked with
 * cuMemHostRegister_v2 is pinned until its cuMemHostUnregister: 10 copies
 * into it while registered (1 ms), 100 after (2 ms) are pageable. */
static void test_pageable_memcpy_registered(void **state)
{
	struct synth *b = job(1000 * MS);
	struct isr_ev_cuda_call *e;
	const struct finding *f;
	struct analysis *a;

	(void)state;
	e = ev_call(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemHostRegister_v2, 0, 100 * US);
	e->args[0] = 0x600000000ULL;
	e->args[1] = 64 * MIB;
	for (int i = 0; i < 110; i++) {
		if (i == 10) {
			e = ev_call(b, T0 + 10 * MS + (__u64)i * 8 * MS - 3 * MS, PID, LAUNCHER,
				    ISR_CUDA_FN_cuMemHostUnregister, 0, 100 * US);
			e->args[0] = 0x600000000ULL;
		}
		e = ev_call(b, T0 + 10 * MS + (__u64)i * 8 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemcpyHtoD_v2, 0,
			    (i < 10 ? 1 : 2) * MS);
		e->args[0] = 0x7000000000ULL;
		e->args[1] = 0x600000000ULL + (__u64)(i % 10) * 4 * MIB;
		e->args[2] = 4 * MIB;
	}
	a = analyze(b);
	f = expect(a, "pageable_memcpy", 0, 0.1);
	expect_text(f, "100 copies");
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "host_to_device")), 100);
	analysis__free(a);
	synth__free(b);
}

/* An attached process's async copies (their return probed), without GPU
 * activity, each step: one of 4 MiB from private memory whose call blocked
 * 4 ms (staged: pageable), three of 1 MiB from a shared mapping of
 * /dev/zero (the driver's pinned allocations, made before the attach) and
 * one of 4 MiB from private memory whose call returned in 10 us (pinned,
 * registered before the attach): all three return at once; then a
 * launch. 10 synchronous copies from cuMemHostAlloc memory, 4 MiB in 1 ms,
 * give the pinned bandwidth: each pageable copy costs 3 ms more. From
 * 460 ms on (steps * 9 ms) the steps are not recorded when `sampled`
 * (the budget switched the hot path off until 910 ms). With `stalls`,
 * every 25th step one copy from the shared mapping blocks 200 us and the
 * one from registered memory 300 us (more than their bytes' 16 and 66 us
 * at 64 GB/s): the host stalled the thread, as a loaded host does. */
static struct synth *attached_copies(bool sampled, bool stalls)
{
	struct synth *b = job(1000 * MS);
	struct isr_ev_cuda_call *e;

	b->rec.processes[0].maps = strdup("700000000000-700000100000 rw-s 00000000 00:01 7    /dev/zero (deleted)\n"
					  "7f0000000000-7f0000400000 rw-p 00000000 00:00 0\n");
	if (sampled) {
		struct isr_ev_sampling *sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0, 0, 0);

		sm->kind = ISR_SAMPLING_START;
		sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0 + 460 * MS, 0, 0);
		sm->kind = ISR_SAMPLING_OFF;
		sm = synth__event(b, ISR_EV_SAMPLING, sizeof(*sm), T0 + 910 * MS, 0, 0);
		sm->kind = ISR_SAMPLING_ON;
	}
	e = ev_call(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemHostAlloc, 0, 100 * US);
	e->args[0] = 0x500000000ULL;
	e->args[1] = 64 * MIB;
	for (int i = 0; i < 100; i++) {
		__u64 t = T0 + 10 * MS + (__u64)i * 9 * MS;

		if (sampled && t >= T0 + 460 * MS)
			break;
		e = ev_call(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuMemcpyHtoDAsync_v2, 0, 4 * MS);
		e->args[1] = 0x600000000ULL;
		e->args[2] = 4 * MIB;
		for (int k = 0; k < 3; k++) {
			e = ev_call(b, t + 4 * MS + (__u64)(k + 1) * 100 * US, PID, LAUNCHER,
				    ISR_CUDA_FN_cuMemcpyHtoDAsync_v2, 0, stalls && i % 25 == 0 && k == 1 ? 200 * US : 10 * US);
			e->args[1] = 0x700000000000ULL;
			e->args[2] = 1 * MIB;
		}
		e = ev_call(b, t + 4500 * US, PID, LAUNCHER, ISR_CUDA_FN_cuMemcpyHtoDAsync_v2, 0,
			    stalls && i % 25 == 0 ? 300 * US : 10 * US);
		e->args[1] = 0x7f0000000000ULL;
		e->args[2] = 4 * MIB;
		ev_launch(b, t + 4600 * US, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	}
	for (int i = 0; i < 10; i++) {
		e = ev_call(b, T0 + 912 * MS + (__u64)i * 2 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemcpyHtoD_v2, 0, 1 * MS);
		e->args[1] = 0x500000000ULL;
		e->args[2] = 4 * MIB;
	}
	return b;
}

/* Exactly the 100 staged copies are pageable: the 300 from the shared
 * mapping are pinned by the memory map, the 100 that returned at once by
 * their return; the finding leads, its cost is what pinning saves, and
 * no host_bound counts the copies' time again. */
static void test_pageable_memcpy_attached(void **state)
{
	struct synth *b = attached_copies(false, false);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	a = analyze(b);
	f = expect(a, "pageable_memcpy", 0, 100 * 0.003);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "copies")), 100);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "by_blocking")), 100);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "pinned_by_return")), 100);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "not_known_copies")), 0);
	assert_string_equal(json_string_value(json_object_get(f->evidence, "classification")), "pageable");
	assert_string_equal(a->ex->findings.v[0].rule, "pageable_memcpy");
	assert_null(find_rule(a, "host_bound", 0));
	analysis__free(a);
	synth__free(b);
}

/* The same job on a host that stalled the copying thread 8 times inside
 * calls from pinned memory: those calls blocked, but their buffers' other
 * calls (296 of 300, 96 of 100) returned at once: still exactly the 100
 * staged copies are pageable (108 when each call was judged alone). */
static void test_pageable_memcpy_host_stalls(void **state)
{
	struct synth *b = attached_copies(false, true);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	a = analyze(b);
	f = expect(a, "pageable_memcpy", 0, 100 * 0.003);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "copies")), 100);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "by_blocking")), 100);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "pinned_by_return")), 100);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "host_stalls")), 8);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "not_known_copies")), 0);
	analysis__free(a);
	synth__free(b);
}

/* The same with the hot path off for half the steps: the copies seen (50)
 * are extrapolated by the hot path's scale, as every hot-path count. */
static void test_pageable_memcpy_sampled(void **state)
{
	struct synth *b = attached_copies(true, false);
	const struct finding *f;
	struct analysis *a;
	double scale;

	(void)state;
	a = analyze(b);
	scale = sampling__scale(&a->sum->sampling, PID);
	print_message("hot-path scale %.3f\n", scale);
	assert_true(scale > 1.2);
	f = expect(a, "pageable_memcpy", 0, 50 * 0.003 * scale);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "copies_seen")), 50);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "copies")), llround(50 * scale));
	assert_true(json_is_true(json_object_get(f->evidence, "estimated")));
	expect_text(f, "extrapolated");
	analysis__free(a);
	synth__free(b);
}

/* `.item()` without GPU activity: 10 x (a launch, an async copy to pageable
 * memory that waits 50 ms for the GPU, a stream synchronization that
 * returns at once, 20 ms of host work before the next launch): the copy is
 * the synchronization, and its 20 ms after each are sync_stall's. */
static void test_sync_stall_in_copy(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 10; i++) {
		__u64 t = T0 + (__u64)i * 75 * MS;
		struct isr_ev_cuda_call *e;

		ev_launch(b, t, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		e = ev_call(b, t + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuMemcpyDtoHAsync_v2, 0, 50 * MS);
		e->args[0] = 0x600000000ULL;
		e->args[2] = 4;
		sync_call(b, t + 51 * MS, LAUNCHER, 5 * US);
	}
	ev_launch(b, T0 + 750 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	a = analyze(b);
	f = expect(a, "sync_stall", LAUNCHER, 10 * 0.024);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "copy_waits")), 10);
	assert_null(find_rule(a, "host_bound", 0));
	analysis__free(a);
	synth__free(b);
}

/* The host's one NVIDIA GPU, on a PCIe link of speed mts (MT/s) and width:
 * idle when recording began (2.5 GT/s), its port as fast as it. */
static void host_gpu(struct synth *b, __u32 mts, __u16 width)
{
	struct isr_host_gpu g = { .vendor = 0x10de, .device = 0x2330, .class_code = 0x030200,
				  .link_speed_mts = 2500, .max_link_speed_mts = mts, .link_width = width,
				  .max_link_width = width, .port_max_speed_mts = mts, .port_max_width = width,
				  .numa_node = 1 };

	strcpy(g.pci_address, "0000:3b:00.0");
	synth__host_prop(b, ISR_PROP_HOST_GPU, &g, sizeof(g), "8-15", 4);
}

static void gpu_copy(struct synth *b, __u64 start, __u64 bytes, double gbps, __u8 kind)
{
	struct isr_ev_gpu_memcpy *m = synth__event(b, ISR_EV_GPU_MEMCPY, sizeof(*m), T0 + 990 * MS, PID, PID);

	m->start_ns = start + GPU_AHEAD;
	m->end_ns = m->start_ns + (__u64)((double)bytes / gbps);
	m->bytes = bytes;
	m->copy_kind = kind;
	m->src_kind = kind == 1 ? 2 : 3;
	m->dst_kind = kind == 1 ? 3 : 2;
}

static void gpu_kernel(struct synth *b, __u64 start, __u64 end)
{
	struct isr_ev_gpu_kernel *k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), T0 + 990 * MS, PID, PID);

	k->start_ns = start + GPU_AHEAD;
	k->end_ns = end + GPU_AHEAD;
	k->stream_id = 7;
}

/* 60 copies of 64 MiB to the GPU at 28 GB/s (89% of a Gen4 x16 link's
 * 31.5 GB/s per direction), 10 of them under a kernel; 30 copies of
 * 16 MiB back at 10 GB/s: the link was the limit for the 50 copies with
 * no kernel running. */
static void plant_pcie(struct synth *b)
{
	ev_gpu_clock(b, T0 + 1 * MS, PID);
	ev_gpu_clock(b, T0 + 999 * MS, PID);
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	for (int i = 0; i < 60; i++) {
		__u64 t = T0 + 10 * MS + (__u64)i * 15 * MS;

		gpu_copy(b, t, 64 * MIB, 28.0, 1);
		if (i % 6 == 0)
			gpu_kernel(b, t - 1 * MS, t + 4 * MS);
		if (i < 30)
			gpu_copy(b, t + 5 * MS, 16 * MIB, 10.0, 2);
	}
}

static void test_pcie_saturation(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;
	json_t *h;

	(void)state;
	host_gpu(b, 16000, 16);
	plant_pcie(b);
	a = analyze(b);
	f = expect(a, "pcie_saturation", 0, 50 * (64.0 * MIB / 28e9));
	expect_text(f, "PCIe Gen4 x16 (16.0 GT/s) link (31.5 GB/s each way)");
	expect_text(f, "60 of 60 copies to the GPU at 28.0 GB/s");
	h = json_object_get(f->evidence, "device_to_host");
	assert_int_equal(json_integer_value(json_object_get(h, "saturated_copies")), 0);
	assert_int_equal(json_integer_value(json_object_get(h, "copies")), 30);
	assert_true(fabs(json_real_value(json_object_get(f->evidence, "overlapped_with_kernels_s")) -
			 10 * (64.0 * MIB / 28e9)) < 1e-6);
	analysis__free(a);
	synth__free(b);
}

static bool not_judged(const struct analysis *a, const char *rule, const char *needs)
{
	for (size_t i = 0; i < a->ex->findings.nnj; i++)
		if (strcmp(a->ex->findings.nj[i].rule, rule) == 0 && strstr(a->ex->findings.nj[i].needs, needs))
			return true;
	return false;
}

/* The same copies without link information, on a link slower than they
 * ran (an emulated bridge), and on a host of two GPUs on different links:
 * not judged, each with its reason. */
static void test_pcie_saturation_not_judged(void **state)
{
	static const char *const needs[] = { "the GPU's PCIe link", "a PCIe link that matches the copies",
					     "which PCI device each CUDA device is" };

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct synth *b = job(1000 * MS);
		struct analysis *a;

		if (k == 1)
			host_gpu(b, 2500, 1);
		if (k == 2) {
			host_gpu(b, 16000, 16);
			host_gpu(b, 32000, 16);
		}
		plant_pcie(b);
		a = analyze(b);
		assert_null(find_rule(a, "pcie_saturation", 0));
		assert_true(not_judged(a, "pcie_saturation", needs[k]));
		analysis__free(a);
		synth__free(b);
	}
}

/* --- memory and errors --------------------------------------------------------------------- */

/* 240 MiB allocated while recorded, still held when the process exits. */
static void test_memory_held_at_exit(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	ev_mem(b, T0 + 100 * MS, PID, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x7000000000ULL, 240 * MIB);
	ev_mem(b, T0 + 110 * MS, PID, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x7100000000ULL, 16 * MIB);
	ev_mem(b, T0 + 120 * MS, PID, ISR_CUDA_FN_cuMemFree_v2, 0, 0x7100000000ULL, 0);
	synth__event(b, ISR_EV_PROC_EXIT, sizeof(struct isr_ev_proc_exit), T0 + 500 * MS, PID, OTHER);
	{
		struct isr_ev_proc_exit *x = synth__event(b, ISR_EV_PROC_EXIT, sizeof(*x), T0 + 501 * MS, PID, LAUNCHER);

		x->flags = ISR_EXIT_GROUP_DEAD;
	}
	a = analyze(b);
	f = find_rule(a, "device_memory_leak", 0);
	assert_non_null(f);
	expect_text(f, "holding 240.0 MiB");
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "held_at_exit_bytes")), 240 * MIB);
	assert_int_equal(summary__process(a->sum, PID)->device_held_at_exit_bytes, 240 * MIB);
	analysis__free(a);
	synth__free(b);
}

/* 60 MiB more every 100 ms, nothing freed. */
static void test_memory_growth(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	for (int i = 0; i < 10; i++)
		ev_mem(b, T0 + 50 * MS + (__u64)i * 100 * MS, PID, ISR_CUDA_FN_cuMemAlloc_v2, 0,
		       0x7000000000ULL + (__u64)i * (1ULL << 32), 60 * MIB);
	a = analyze(b);
	f = find_rule(a, "device_memory_leak", 0);
	assert_non_null(f);
	expect_text(f, "grew by 300.0 MiB in the second half");
	analysis__free(a);
	synth__free(b);
}

static void test_cuda_errors(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	ev_mem(b, T0 + 100 * MS, PID, ISR_CUDA_FN_cuMemAlloc_v2, 2, 0, 80ULL << 30);
	a = analyze(b);
	f = find_rule(a, "cuda_errors", 0);
	assert_non_null(f);
	assert_int_equal(f->severity, SEV_CRITICAL);
	expect_text(f, "cuMemAlloc_v2 1x (last error 2 CUDA_ERROR_OUT_OF_MEMORY)");
	analysis__free(a);
	synth__free(b);
}

/* --- no double counting ------------------------------------------------------------------------ */

/* In each 40 ms gap of the GPU the launcher waits 20 ms for the GIL, then
 * runs Python 20 ms (the last gap, to the end, 140 ms): gil_contention
 * takes the GIL waits, gpu_idle only the rest, and together they never
 * exceed the launcher's time. */
static void test_causes_not_double_counted(void **state)
{
	struct synth *b = gpu_job(1000 * MS);
	struct analysis *a;
	double sum = 0;

	(void)state;
	python_stack(b);
	for (int i = 0; i < 20; i++) {
		__u64 t = T0 + (__u64)i * 45 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 5 * MS - 20 * US, 0);
		ev_gil(b, t + 5 * MS, PID, LAUNCHER, ISR_GIL_ACQUIRE, 20 * MS);
		blocked(b, t + 5 * MS + 10 * US, t + 25 * MS - 10 * US, LAUNCHER, PID, OTHER);
		ev_py_sample(b, t + 15 * MS, PID, OTHER, 1, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t + 35 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
	}
	ev_gpu_flushed(b, T0 + 999 * MS, PID);
	a = analyze(b);
	/* the last GIL wait falls after the last work, in the job's tail
	 * (140 ms to the end): no finding's cost */
	expect(a, "gil_contention", LAUNCHER, 19 * 0.020);
	expect(a, "gpu_idle", LAUNCHER, 19 * 0.020);
	for (size_t i = 0; i < a->ex->findings.n; i++)
		sum += a->ex->findings.v[i].cost_s;
	assert_true(sum <= 1.0);
	analysis__free(a);
	synth__free(b);
}

/* --- the registry and the documentation ------------------------------------------------------------ */

/* Every rule id is in docs/rules.md, and every rule the doc describes
 * exists. */
static void test_rules_documented(void **state)
{
	FILE *f = fopen("docs/rules.md", "r");
	char line[512];
	size_t documented = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char id[64];
		bool known = false;

		if (sscanf(line, "## `%63[a-z_]`", id) != 1)
			continue;
		documented++;
		for (size_t i = 0; i < explain__rule_count(); i++)
			known |= strcmp(explain__rule_id(i), id) == 0;
		if (!known)
			fail_msg("docs/rules.md describes `%s`, which is not a rule", id);
	}
	fclose(f);
	for (size_t i = 0; i < explain__rule_count(); i++) {
		char heading[96];
		char *doc = NULL;
		size_t len = 0;
		FILE *m = fopen("docs/rules.md", "r");

		assert_non_null(m);
		assert_true(getdelim(&doc, &len, '\0', m) > 0);
		fclose(m);
		snprintf(heading, sizeof(heading), "## `%s`", explain__rule_id(i));
		if (!strstr(doc, heading))
			fail_msg("rule `%s` is not described in docs/rules.md", explain__rule_id(i));
		free(doc);
	}
	assert_int_equal(documented, explain__rule_count());
}

/* --- the JSON report against its schema --------------------------------------------------------- */

#define SCHEMA "docs/report-schema.json"

/* Validates the file at path against docs/report-schema.json with Debian's
 * python3-jsonschema; the exit status of the validator. */
static int validate(const char *path, bool quiet)
{
	char *argv[] = { "/usr/bin/python3", "-c",
			 "import json, sys, jsonschema\n"
			 "jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))",
			 (char *)path, SCHEMA, NULL };
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		if (quiet && !freopen("/dev/null", "w", stderr))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A report with GPU metrics, a GIL finding, Python sites and a memory
 * finding validates; without its findings it does not. */
static void test_json_schema(void **state)
{
	char path[] = "/tmp/inferscope-schema-XXXXXX";
	struct synth *b = gpu_job(1000 * MS);
	struct analysis *a;
	json_t *root;
	FILE *f;
	int fd;

	(void)state;
	python_stack(b);
	for (int i = 0; i < 20; i++) {
		__u64 t = T0 + (__u64)i * 45 * MS;

		gpu_launch(b, t, PID, LAUNCHER, (__u32)i + 1, 20 * (long long)US, 5 * MS - 20 * US, 0);
		ev_gil(b, t + 5 * MS, PID, LAUNCHER, ISR_GIL_ACQUIRE, 20 * MS);
		blocked(b, t + 5 * MS + 10 * US, t + 25 * MS - 10 * US, LAUNCHER, PID, OTHER);
		ev_py_sample(b, t + 15 * MS, PID, OTHER, 1, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t + 35 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
	}
	ev_mem(b, T0 + 100 * MS, PID, ISR_CUDA_FN_cuMemAlloc_v2, 2, 0, 80ULL << 30);
	a = analyze(b);
	assert_true(a->ex->findings.n >= 3);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(report__write_json(f, a), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(validate(path, false), 0);
	/* a report without its findings fails: the check can fail */
	root = json_load_file(path, 0, NULL);
	assert_non_null(root);
	json_object_del(root, "findings");
	assert_int_equal(json_dump_file(root, path, 0), 0);
	json_decref(root);
	assert_int_not_equal(validate(path, true), 0);
	unlink(path);
	analysis__free(a);
	synth__free(b);
}

/* The claim order is declared: within a phase no rule claims a cause
 * another one claims or reads, and a cause a rule reads is claimed only
 * in earlier phases; every rule has a phase. */
static void test_rule_phases_declared(void **state)
{
	(void)state;
	for (size_t i = 0; i < rules_count; i++) {
		const struct rule *a = rules_all[i];

		assert_true(a->phase < RULE_PHASES);
		assert_int_equal(a->claims & ~RULE_CAUSES_ALL, 0);
		for (size_t j = 0; j < rules_count; j++) {
			const struct rule *b = rules_all[j];

			if (i == j)
				continue;
			if (a->phase == b->phase && (a->claims & (b->claims | b->reads)))
				fail_msg("%s and %s, of one phase, both count a cause %s claims", a->id, b->id, a->id);
			if ((a->claims & b->reads) && a->phase > b->phase)
				fail_msg("%s reads a cause that %s claims in a later phase", b->id, a->id);
		}
	}
}

/* A rule claims only the causes it declares: the claim fails otherwise. */
static void test_rule_claims_only_its_causes(void **state)
{
	struct rule_ctx c = { 0 };

	(void)state;
	for (size_t i = 0; i < rules_count; i++)
		if (!strcmp(rules_all[i]->id, "gil_contention"))
			c.rule = rules_all[i];
	assert_non_null(c.rule);
	assert_int_equal(rule_claim(&c, 1, 2, CAUSE_RUNQUEUE), -EINVAL);
	assert_int_equal(c.nclaims, 0);
	assert_int_equal(rule_claim(&c, 1, 2, CAUSE_GIL), 0);
	assert_true(rule_claimed(&c, 1, 2, CAUSE_GIL));
	free(c.claims);
}

/* The schema's list of rule ids is the code's. */
static void test_schema_rule_ids(void **state)
{
	json_t *schema = json_load_file(SCHEMA, 0, NULL), *ids;
	size_t i;

	(void)state;
	assert_non_null(schema);
	ids = json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(
		schema, "properties"), "findings"), "items"), "properties"), "rule"), "enum");
	assert_int_equal(json_array_size(ids), explain__rule_count());
	for (i = 0; i < explain__rule_count(); i++) {
		bool found = false;

		for (size_t k = 0; k < json_array_size(ids); k++)
			found |= strcmp(json_string_value(json_array_get(ids, k)), explain__rule_id(i)) == 0;
		if (!found)
			fail_msg("rule `%s` is not in %s", explain__rule_id(i), SCHEMA);
	}
	json_decref(schema);
}

/* --- numa_remote and the memory samples ------------------------------------ */

/* NUMA node `node` of the host, its CPUs `cpus`. */
static void host_node(struct synth *b, __u32 node, const char *cpus)
{
	struct isr_host_numa_node n = { .node = node, .memory_bytes = 64ULL << 30 };

	synth__host_prop(b, ISR_PROP_HOST_NUMA_NODE, &n, sizeof(n), cpus, strlen(cpus));
}

/* tid runs on cpu from `from` to `to` (switched in, then out). */
static void run_on(struct synth *b, __u32 tid, __u32 cpu, __u64 from, __u64 to)
{
	struct isr_ev_sched_switch *e = synth__event(b, ISR_EV_SCHED_SWITCH, sizeof(*e), from, 0, 0);

	e->hdr.cpu = cpu;
	e->next_pid = PID;
	e->next_tid = tid;
	e = synth__event(b, ISR_EV_SCHED_SWITCH, sizeof(*e), to, PID, tid);
	e->hdr.cpu = cpu;
	e->prev_state = 0x1;
}

static void mem_sample(struct synth *b, __u64 ts, __u64 psi_some_us, __u64 cg_current, __u64 node0, __u64 node1)
{
	struct isr_ev_mem_sample *m = synth__event(b, ISR_EV_MEM_SAMPLE, sizeof(*m), ts, PID, 0);

	m->rss_anon_bytes = node0 + node1;
	m->psi_some_us = psi_some_us;
	m->psi_full_us = psi_some_us / 2;
	m->cg_current_bytes = cg_current;
	m->cg_high_bytes = 1024 * MIB;
	m->cg_max_bytes = ISR_MEM_UNLIMITED;
	m->flags = ISR_MEM_CGROUP | ISR_MEM_PSI | (node0 + node1 ? ISR_MEM_NUMA : 0);
	m->nnodes = 2;
	m->numa_bytes[0] = node0;
	m->numa_bytes[1] = node1;
}

/* Two nodes (CPUs 0-7, 8-15), the GPU on node 1; the launching thread
 * runs 10 slices of 80 ms on CPU 2 (node 0) and launches in each, the
 * other thread on CPU 9 (node 1); 900 of the process's 1000 MiB sit on
 * node 0. */
static struct synth *numa_job(__u32 launcher_cpu, __u64 node0_bytes)
{
	struct synth *b = job(1000 * MS);

	host_node(b, 0, "0-7");
	host_node(b, 1, "8-15");
	host_gpu(b, 16000, 16);
	for (int i = 0; i < 10; i++) {
		__u64 t = T0 + (__u64)i * 100 * MS;

		run_on(b, LAUNCHER, launcher_cpu, t + 1 * MS, t + 81 * MS);
		ev_launch(b, t + 40 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
		run_on(b, OTHER, 9, t + 82 * MS, t + 99 * MS);
	}
	mem_sample(b, T0 + 500 * MS, 0, 100 * MIB, node0_bytes, 100 * MIB);
	return b;
}

static void test_numa_remote(void **state)
{
	struct synth *b = numa_job(2, 900 * MIB);
	const struct finding *f;
	struct analysis *a;
	json_t *t;

	(void)state;
	a = analyze(b);
	f = find_rule(a, "numa_remote", LAUNCHER);
	assert_non_null(f);
	assert_true(f->cost_s == 0);
	expect_text(f, "ran 100% of its 0.800 s on CPU on node 0, away from its GPU's node 1");
	expect_text(f, "900 MiB of its 1000 MiB resident memory (90%) sits on other nodes");
	assert_non_null(strstr(f->suggestion, "numactl --cpunodebind=1 --membind=1"));
	assert_non_null(strstr(f->suggestion, "taskset -c 8-15"));
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "gpu_node")), 1);
	t = json_array_get(json_object_get(f->evidence, "threads"), 0);
	assert_int_equal(json_integer_value(json_object_get(t, "tid")), LAUNCHER);
	assert_true(fabs(json_real_value(json_object_get(t, "remote_s")) - 0.8) < 1e-9);
	assert_null(find_rule(a, "numa_remote", OTHER));	/* it runs on node 1, and launches nothing */
	analysis__free(a);
	synth__free(b);
}

/* On the GPU's node with its memory there: nothing to say. */
static void test_numa_local(void **state)
{
	struct synth *b = numa_job(10, 10 * MIB);
	struct analysis *a;

	(void)state;
	a = analyze(b);
	assert_null(find_rule(a, "numa_remote", LAUNCHER));
	assert_null(find_rule(a, "numa_remote", 0));
	analysis__free(a);
	synth__free(b);
}

/* GPUs on both nodes: which one the process uses is not known. */
static void test_numa_not_judged(void **state)
{
	struct synth *b = numa_job(2, 900 * MIB);
	struct isr_host_gpu g = { .vendor = 0x10de, .device = 0x2330, .class_code = 0x030200, .numa_node = 0 };
	struct analysis *a;

	(void)state;
	strcpy(g.pci_address, "0000:1b:00.0");
	synth__host_prop(b, ISR_PROP_HOST_GPU, &g, sizeof(g), "0-7", 3);
	a = analyze(b);
	assert_null(find_rule(a, "numa_remote", LAUNCHER));
	assert_true(not_judged(a, "numa_remote", "which GPU each process uses: the host's GPUs sit on several NUMA nodes"));
	analysis__free(a);
	synth__free(b);
}

/* A process whose cgroup came to 98% of its memory.high and whose tasks
 * stalled 300 ms on memory (PSI), with no thread reclaiming long enough
 * for a thread finding: one finding for the process, costing the stall. */
static void test_cgroup_near_limit(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	mem_sample(b, T0 + 100 * MS, 50000, 500 * MIB, 0, 0);
	mem_sample(b, T0 + 600 * MS, 200000, 1004 * MIB, 0, 0);
	mem_sample(b, T0 + 900 * MS, 350000, 900 * MIB, 0, 0);
	a = analyze(b);
	f = expect(a, "host_memory_pressure", 0, 0.3);
	expect_text(f, "Process 100 ran near its memory cgroup's limit.");
	expect_text(f, "Memory pressure (PSI, its cgroup's) stalled some of its tasks 0.300 s and all of them 0.150 s.");
	expect_text(f, "Its memory cgroup used 1004 MiB of its 1024 MiB limit (98%).");
	assert_string_equal(json_string_value(json_object_get(f->evidence, "psi_scope")), "cgroup");
	analysis__free(a);
	synth__free(b);
}

/* A damaged recording whose PSI total jumps by 10^19 us between samples
 * 800 ms apart (the fuzzer's find: its cost, 10^13 s, overflowed the
 * severity's nanoseconds): the stall counted is no more than the 800 ms
 * between the samples. */
static void test_psi_total_beyond_its_span(void **state)
{
	struct synth *b = job(1000 * MS);
	const struct finding *f;
	struct analysis *a;

	(void)state;
	ev_launch(b, T0 + 1 * MS, PID, LAUNCHER, ISR_CUDA_FN_cuLaunchKernel, 0x10);
	mem_sample(b, T0 + 100 * MS, 50000, 500 * MIB, 0, 0);
	mem_sample(b, T0 + 900 * MS, 10000000000000000000ULL, 1004 * MIB, 0, 0);
	a = analyze(b);
	f = expect(a, "host_memory_pressure", 0, 0.8);
	expect_text(f, "stalled some of its tasks 0.800 s and all of them 0.800 s.");
	analysis__free(a);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_gpu_bound_host_view),
		cmocka_unit_test(test_psi_total_beyond_its_span),
		cmocka_unit_test(test_healthy_gpu_busy),
		cmocka_unit_test(test_gpu_windows_busy),
		cmocka_unit_test(test_gpu_windows_idle_scaled),
		cmocka_unit_test(test_gil_contention),
		cmocka_unit_test(test_gil_contention_holder_named),
		cmocka_unit_test(test_gil_traced_no_contention),
		cmocka_unit_test(test_cpu_contention),
		cmocka_unit_test(test_cpu_contention_tracer),
		cmocka_unit_test(test_page_fault_tracer_cost),
		cmocka_unit_test(test_page_fault_tracer_cost_above_fastest),
		cmocka_unit_test(test_untraced_task_names),
		cmocka_unit_test(test_page_fault_storm),
		cmocka_unit_test(test_host_memory_pressure),
		cmocka_unit_test(test_host_memory_pressure_faults_claimed),
		cmocka_unit_test(test_blocked_on_thread),
		cmocka_unit_test(test_launcher_handoff_no_blocked),
		cmocka_unit_test(test_interrupt_wake_names_nobody),
		cmocka_unit_test(test_input_bound_workers),
		cmocka_unit_test(test_input_bound_hot_path_sampled),
		cmocka_unit_test(test_input_bound_chain_starved),
		cmocka_unit_test(test_input_bound_handoff_once),
		cmocka_unit_test(test_cpu_contention_one_per_pool),
		cmocka_unit_test(test_cpu_contention_pool_through_wrappers),
		cmocka_unit_test(test_severity_from_job_share),
		cmocka_unit_test(test_tail_is_no_cost),
		cmocka_unit_test(test_idle_after_sync_by_what_host_did),
		cmocka_unit_test(test_sync_stall_host_view),
		cmocka_unit_test(test_sync_stall_sampled),
		cmocka_unit_test(test_sync_stall_phase_in_a_window),
		cmocka_unit_test(test_sync_stall_only_what_it_waited_for),
		cmocka_unit_test(test_host_bound),
		cmocka_unit_test(test_gpu_idle_python),
		cmocka_unit_test(test_gpu_idle_native),
		cmocka_unit_test(test_sync_stall_gpu),
		cmocka_unit_test(test_sync_preempted_is_runqueue),
		cmocka_unit_test(test_gpu_records_end_unflushed),
		cmocka_unit_test(test_launch_bound),
		cmocka_unit_test(test_pageable_memcpy_gpu),
		cmocka_unit_test(test_pageable_memcpy_gpu_with_calls),
		cmocka_unit_test(test_pageable_memcpy_host),
		cmocka_unit_test(test_pageable_memcpy_registered),
		cmocka_unit_test(test_pageable_memcpy_attached),
		cmocka_unit_test(test_pageable_memcpy_host_stalls),
		cmocka_unit_test(test_pageable_memcpy_sampled),
		cmocka_unit_test(test_sync_stall_in_copy),
		cmocka_unit_test(test_pcie_saturation),
		cmocka_unit_test(test_numa_remote),
		cmocka_unit_test(test_numa_local),
		cmocka_unit_test(test_numa_not_judged),
		cmocka_unit_test(test_cgroup_near_limit),
		cmocka_unit_test(test_pcie_saturation_not_judged),
		cmocka_unit_test(test_memory_held_at_exit),
		cmocka_unit_test(test_memory_growth),
		cmocka_unit_test(test_cuda_errors),
		cmocka_unit_test(test_causes_not_double_counted),
		cmocka_unit_test(test_rules_documented),
		cmocka_unit_test(test_json_schema),
		cmocka_unit_test(test_schema_rule_ids),
		cmocka_unit_test(test_rule_phases_declared),
		cmocka_unit_test(test_rule_claims_only_its_causes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
