// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Report writers on a hand-made recording and summary: the JSON report is
 * parsed back and every field of the contract (docs/report-json.md) is
 * checked; the Markdown report is checked for what a reader must see:
 * warnings exactly when something was lost, the findings first, the tables.
 * (The rules themselves are tested on synthetic events in test_explain.c.)
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "report.h"

#define MS 1000000ULL
#define T0 (5000 * MS)

struct fixture {
	struct recording rec;
	struct summary sum;
	struct rec_process procs[3];
	struct thread_summary threads[40];
	struct cuda_fn_summary fns[4];
	struct process_summary cuda_procs[1];
	struct cuda_fn_count failed[1];
	struct kernel_summary kernels[55];
	char kernel_names[55][16];
	struct gpu_process_stat gpu[1];
	struct gpu_kernel_stat gpu_kernels[1];
	struct gpu_copy_stat gpu_copies[1];
	struct gpu_stream_stat gpu_streams[1];
	struct gpu_device_stat gpu_devices[1];
	__u64 out_of_order;		/* what the pass would have counted */
};

static struct thread_summary thread(__u32 pid, __u32 tid, const char *comm, __u64 on, __u64 rq)
{
	struct thread_summary t = {
		.pid = pid,
		.tid = tid,
		.start_ns = T0,
		.end_ns = T0 + 1000 * MS,
		.on_cpu_ns = on,
		.off_cpu_ns = 1000 * MS - on,
		.runqueue_wait_ns = rq,
		.switches_voluntary = 10,
		.switches_involuntary = 2,
		.wakeups = 9,
	};

	strncpy(t.comm, comm, sizeof(t.comm) - 1);
	return t;
}

/* A clean 1 s recording of two processes and three threads: nothing
 * lost, nothing remarkable. */
static struct fixture *fixture__new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->rec.created_real_ns = 1764150000123456789ULL;
	f->rec.created_mono_ns = T0 - 2000 * MS;
	f->rec.host.hostname = "gpu-01";
	f->rec.host.kernel = "6.18.0";
	f->rec.host.machine = "x86_64";
	f->rec.host.ncpus = 16;
	f->rec.host.start_mono_ns = T0;
	f->rec.end_mono_ns = T0 + 1000 * MS;
	f->rec.complete = true;
	f->rec.stop_reason = ISR_STOP_SIGNAL;
	f->procs[0] = (struct rec_process){ .pid = 300, .ppid = 1, .origin = ISR_ORIGIN_ATTACHED,
					    .comm = "python3", .cmdline = "python3 train.py --bs 64",
					    .exe = "/usr/bin/python3.12" };
	f->procs[1] = (struct rec_process){ .pid = 100, .ppid = 300, .origin = ISR_ORIGIN_CHILD,
					    .comm = "loader", .cmdline = "loader", .exe = "/bin/loader" };
	f->procs[2] = (struct rec_process){ .pid = 300, .ppid = 1, .origin = ISR_ORIGIN_EXEC,
					    .comm = "python3", .cmdline = NULL, .exe = NULL };
	f->rec.processes = f->procs;
	f->rec.process_count = 3;

	f->sum.start_ns = T0;
	f->sum.end_ns = T0 + 1000 * MS;
	f->sum.duration_s = 1.0;
	f->sum.event_counts[ISR_EV_SCHED_SWITCH] = 120;
	f->sum.event_counts[ISR_EV_SCHED_WAKEUP] = 30;
	f->sum.event_total = 150;
	f->threads[0] = thread(100, 101, "loader", 100 * MS, 0);
	f->threads[1] = thread(300, 300, "python3", 700 * MS, 5 * MS);
	f->threads[2] = thread(300, 302, "pt_main_thread", 300 * MS, 0);
	f->threads[2].minor_faults = 12;
	f->threads[2].fault_ns = 3 * MS;
	f->threads[2].exited = true;
	f->threads[2].created = true;
	f->threads[2].start_ns = T0 + 100 * MS;
	f->threads[2].end_ns = T0 + 900 * MS;
	f->threads[2].off_cpu_ns = 500 * MS;
	f->sum.threads = f->threads;
	f->sum.thread_count = 3;
	return f;
}

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

static struct cuda_fn_summary fn(__u16 func, const char *name, __u64 calls, __u64 returned,
				 __u64 total_ns, __u64 max_ns)
{
	struct cuda_fn_summary f = { .func = func, .calls = calls, .observed = calls, .returned = returned,
				     .total_ns = total_ns, .max_ns = max_ns };

	strncpy(f.name, name, sizeof(f.name) - 1);
	return f;
}

/* CUDA in the fixture: pid 300 launches 1000 kernels from its main thread,
 * which spends 400 ms of its 1 s in cuCtxSynchronize_v2; two allocations
 * ran out of memory. pid 100 made no CUDA calls. */
static void fixture__add_cuda(struct fixture *f)
{
	f->sum.event_counts[ISR_EV_CUDA_CALL] = 1200;
	f->sum.event_counts[ISR_EV_CUDA_NAME] = 3;
	f->sum.event_total += 1203;
	f->fns[0] = fn(ISR_CUDA_FN_cuLaunchKernel, "cuLaunchKernel", 1000, 0, 0, 0);
	f->fns[1] = fn(ISR_CUDA_FN_cuCtxSynchronize_v2, "cuCtxSynchronize_v2", 150, 150, 400 * MS, 50 * MS);
	f->fns[2] = fn(ISR_CUDA_FN_cuMemAlloc_v2, "cuMemAlloc_v2", 50, 50, 5 * MS, 1 * MS);
	f->fns[2].failed = 2;
	f->fns[2].last_error = 2;
	f->fns[3] = fn(ISR_CUDA_FN_cuLibraryGetKernel, "cuLibraryGetKernel", 0, 0, 0, 0);
	f->fns[3].names = 3;
	f->sum.cuda_fns = f->fns;
	f->sum.cuda_fn_count = 4;
	f->failed[0] = (struct cuda_fn_count){ .func = ISR_CUDA_FN_cuMemAlloc_v2, .count = 2 };
	f->cuda_procs[0] = (struct process_summary){
		.pid = 300, .device_live_bytes = 1 * GIB, .device_peak_bytes = 2 * GIB,
		.pinned_host_live_bytes = 0, .pinned_host_peak_bytes = 64 * MIB, .unknown_frees = 1,
		.failed = f->failed, .failed_count = 1,
	};
	f->sum.processes = f->cuda_procs;
	f->sum.process_count = 1;
	for (int i = 0; i < 55; i++) {
		snprintf(f->kernel_names[i], sizeof(f->kernel_names[i]), "k%d", i);
		f->kernels[i] = (struct kernel_summary){ .pid = 300, .handle = 0x7f0000002000ULL + (__u64)i * 16,
							 .name = f->kernel_names[i], .named = true,
							 .launches = (__u64)(100 - i),
							 .observed_launches = (__u64)(100 - i) };
	}
	f->kernels[0].handle = 0x7f0000001000ULL;
	f->kernels[0].name = "relu_kernel";
	f->kernels[0].launches = 600;
	f->kernels[0].observed_launches = 600;
	f->sum.kernels = f->kernels;
	f->sum.kernel_count = 55;
	f->threads[1].cuda_calls = 1200;
	f->threads[1].cuda_launches = 1000;
	f->threads[1].cuda_launches_observed = 1000;
	f->threads[1].cuda_sync_ns = 400 * MS;
	f->threads[1].cuda_sync_fns[0] = ISR_CUDA_FN_cuCtxSynchronize_v2;
}

/* Output of a writer as a NUL-terminated string (caller frees). */
/* The fixture's hand-made summary, with the Python stacks and the
 * explanation of its (event-less) recording. */
static char *render(int (*writer)(FILE *, const struct analysis *), struct fixture *f)
{
	struct analysis a = { .r = &f->rec, .sum = &f->sum, .out_of_order = f->out_of_order };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(py_report__compute(&f->rec, &a.py), 0);
	assert_int_equal(explain__run(&f->rec, &f->sum, a.py, &a.ex), 0);
	assert_int_equal(writer(m, &a), 0);
	assert_int_equal(fclose(m), 0);
	explain__free(a.ex);
	py_report__free(a.py);
	return buf;
}

static json_t *render_json(struct fixture *f)
{
	char *text = render(report__write_json, f);
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);

	if (!root)
		fail_msg("report is not JSON: %s at line %d", jerr.text, jerr.line);
	free(text);
	return root;
}

static json_t *get(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		fail_msg("missing key \"%s\"", key);
	return v;
}

static void assert_real(json_t *o, const char *key, double want)
{
	json_t *v = get(o, key);

	assert_true(json_is_real(v));
	assert_true(json_real_value(v) == want);
}

static void assert_int(json_t *o, const char *key, json_int_t want)
{
	json_t *v = get(o, key);

	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), want);
}

static void assert_str(json_t *o, const char *key, const char *want)
{
	json_t *v = get(o, key);

	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
}

static void test_json_contract(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *rec, *host, *drops, *counts, *procs, *threads, *t, *cuda, *calls, *kernels;
	size_t i;

	(void)state;
	f->sum.drops[ISR_SRC_FAULTS] = 4;
	f->sum.drops_total = 4;
	fixture__add_cuda(f);
	root = render_json(f);
	assert_int_equal(json_object_size(root), 16);
	/* steps: no NVTX in the fixture, too few synchronizations to infer any */
	assert_str(get(root, "steps"), "source", "none");
	assert_int_equal(json_array_size(get(get(root, "steps"), "steps")), 0);
	assert_int(root, "schema_version", REPORT_SCHEMA_VERSION);
	/* no NCCL collective: no ranks side by side */
	assert_true(json_is_array(get(root, "ranks")) && json_array_size(get(root, "ranks")) == 0);
	assert_true(json_is_null(get(root, "collectives")));
	assert_int_equal(REPORT_SCHEMA_VERSION, 2);

	/* findings: the two failed allocations, from the summary alone */
	t = get(root, "findings");
	assert_int_equal(json_array_size(t), 1);
	t = json_array_get(t, 0);
	assert_str(t, "rule", "cuda_errors");
	assert_str(t, "title", "CUDA calls failed");
	assert_str(t, "severity", "critical");
	assert_real(t, "cost_s", 0.0);
	assert_int(t, "pid", 0);
	assert_int(t, "tid", 0);
	assert_true(strstr(json_string_value(get(t, "summary")), "cuMemAlloc_v2 2x") != NULL);
	assert_true(strstr(json_string_value(get(t, "suggestion")), "ran out of memory") != NULL);
	assert_int(get(t, "evidence"), "failed_calls", 2);
	/* the fixture's recording has no events: no launching thread, no
	 * Python, so no judgement is missing for want of a source (which
	 * tests/unit/test_explain.c checks on recordings that have them) */
	t = get(root, "not_judged");
	assert_true(json_is_array(t));
	assert_int_equal(json_array_size(t), 0);
	/* metrics: one entry per target process */
	t = get(get(root, "metrics"), "processes");
	assert_int_equal(json_array_size(t), 2);
	assert_int(json_array_get(t, 1), "pid", 300);
	assert_true(json_is_false(get(json_array_get(t, 1), "gpu_observed")));
	assert_int(json_array_get(t, 1), "device_memory_held_at_exit_bytes", 0);
	assert_int_equal(json_array_size(get(json_array_get(t, 1), "devices")), 0);

	rec = get(root, "recording");
	assert_real(rec, "duration_s", 1.0);
	assert_str(rec, "start_time", "2025-11-26T09:40:02.123456Z");
	assert_int_equal(json_array_size(get(rec, "pids")), 2);
	assert_int_equal(json_integer_value(json_array_get(get(rec, "pids"), 0)), 100);
	assert_int_equal(json_integer_value(json_array_get(get(rec, "pids"), 1)), 300);
	assert_true(json_is_false(get(rec, "truncated")));
	assert_true(json_is_null(get(rec, "truncation")));
	assert_str(rec, "stop_reason", isr_stop_reason_name(ISR_STOP_SIGNAL));
	host = get(rec, "host");
	assert_str(host, "hostname", "gpu-01");
	assert_str(host, "kernel", "6.18.0");
	assert_str(host, "machine", "x86_64");
	assert_int(host, "ncpus", 16);
	drops = get(rec, "drops");
	assert_int_equal(json_object_size(drops), ISR_SRC_MAX);
	for (__u32 src = 0; src < ISR_SRC_MAX; src++)
		if (isr_source_name(src)) /* others: numbers not assigned in this version */
			assert_int(drops, isr_source_name(src), src == ISR_SRC_FAULTS ? 4 : 0);
	assert_int(rec, "drops_total", 4);
	assert_true(json_is_null(get(rec, "sampling")));	/* recorded without a budget */
	t = get(rec, "analysis");
	assert_int(t, "out_of_order_events", 0);
	assert_int_equal(json_array_size(get(t, "notes")), 0);

	counts = get(root, "event_counts");
	assert_int_equal(json_object_size(counts), 6);
	assert_int(counts, isr_event_name(ISR_EV_SCHED_SWITCH), 120);
	assert_int(counts, isr_event_name(ISR_EV_SCHED_WAKEUP), 30);
	/* CUDA events under their exact functions, not their types */
	assert_int(counts, "cuLaunchKernel", 1000);
	assert_int(counts, "cuCtxSynchronize_v2", 150);
	assert_int(counts, "cuMemAlloc_v2", 50);
	assert_int(counts, "cuLibraryGetKernel", 3);
	assert_null(json_object_get(counts, "cuda_call"));
	assert_null(json_object_get(counts, "cuda_name"));

	procs = get(root, "processes");
	assert_int_equal(json_array_size(procs), 3);
	t = json_array_get(procs, 0);
	assert_int(t, "pid", 300);
	assert_int(t, "ppid", 1);
	assert_str(t, "comm", "python3");
	assert_str(t, "cmdline", "python3 train.py --bs 64");
	assert_str(t, "exe", "/usr/bin/python3.12");
	assert_str(t, "origin", "attached");
	assert_int(t, "device_memory_peak_bytes", 2 * GIB);
	assert_int(t, "device_memory_live_bytes", 1 * GIB);
	assert_int(t, "pinned_host_peak_bytes", 64 * MIB);
	assert_int(t, "pinned_host_live_bytes", 0);
	assert_int(t, "unknown_frees", 1);
	assert_int_equal(json_object_size(get(t, "cuda_failed_calls")), 1);
	assert_int(get(t, "cuda_failed_calls"), "cuMemAlloc_v2", 2);
	assert_int_equal(json_object_size(t), 12);
	/* a process without CUDA calls is there, with zeros */
	t = json_array_get(procs, 1);
	assert_int(t, "pid", 100);
	assert_int(t, "device_memory_peak_bytes", 0);
	assert_int(t, "device_memory_live_bytes", 0);
	assert_int(t, "pinned_host_peak_bytes", 0);
	assert_int(t, "pinned_host_live_bytes", 0);
	assert_int(t, "unknown_frees", 0);
	assert_true(json_is_object(get(t, "cuda_failed_calls")));
	assert_int_equal(json_object_size(get(t, "cuda_failed_calls")), 0);
	/* the same pid after exec: the pid's numbers */
	assert_int(json_array_get(procs, 2), "device_memory_peak_bytes", 2 * GIB);
	assert_str(json_array_get(procs, 1), "origin", "child");
	assert_str(json_array_get(procs, 2), "origin", "exec");
	assert_true(json_is_null(get(json_array_get(procs, 2), "cmdline")));
	assert_true(json_is_null(get(json_array_get(procs, 2), "exe")));

	threads = get(root, "threads");
	assert_int_equal(json_array_size(threads), 3);
	for (i = 0; i < 3; i++) {
		const struct thread_summary *ts = &f->threads[i];

		t = json_array_get(threads, i);
		assert_int(t, "pid", ts->pid);
		assert_int(t, "tid", ts->tid);
		assert_str(t, "comm", ts->comm);
		assert_real(t, "window_s", (double)(ts->end_ns - ts->start_ns) / 1e9);
		assert_real(t, "on_cpu_s", (double)ts->on_cpu_ns / 1e9);
		assert_real(t, "off_cpu_s", (double)ts->off_cpu_ns / 1e9);
		assert_real(t, "runqueue_wait_s", (double)ts->runqueue_wait_ns / 1e9);
		assert_real(t, "blocked_s", (double)(ts->off_cpu_ns - ts->runqueue_wait_ns) / 1e9);
		assert_real(t, "blocked_io_s", (double)ts->blocked_io_ns / 1e9);
		assert_int(t, "voluntary_switches", 10);
		assert_int(t, "involuntary_switches", 2);
		assert_int(t, "wakeups", 9);
		assert_int(t, "minor_faults", (json_int_t)ts->minor_faults);
		assert_int(t, "major_faults", 0);
		assert_real(t, "fault_s", (double)ts->fault_ns / 1e9);
		assert_real(t, "major_fault_s", 0.0);
		assert_false(json_is_true(get(t, "faults_estimated")));
		assert_true(json_is_boolean(get(t, "created")));
		assert_true(json_boolean_value(get(t, "created")) == ts->created);
		assert_true(json_boolean_value(get(t, "exited")) == ts->exited);
		assert_real(t, "cuda_sync_s", (double)ts->cuda_sync_ns / 1e9);
		assert_int(t, "cuda_calls", (json_int_t)ts->cuda_calls);
		assert_int(t, "launches", (json_int_t)ts->cuda_launches);
		assert_int(t, "launches_observed", (json_int_t)ts->cuda_launches_observed);
		assert_true(json_is_false(get(t, "cuda_estimated")));
		assert_real(t, "gil_wait_s", (double)ts->gil_wait_ns / 1e9);
		if (ts->gil_hold_measured)
			assert_real(t, "gil_hold_s", (double)ts->gil_hold_ns / 1e9);
		else	/* never seen taking or releasing the GIL: unknown */
			assert_true(json_is_null(get(t, "gil_hold_s")));
		assert_int(t, "gil_acquisitions", (json_int_t)ts->gil_acquisitions);
		assert_real(t, "gil_blocked_s", (double)ts->gil_blocked_ns / 1e9);
		assert_int(t, "gil_blocks", (json_int_t)ts->gil_blocks);
		/* no Python stacks in this recording: the fields are there, empty */
		assert_int(t, "py_samples", 0);
		assert_int_equal(json_array_size(get(t, "py_functions")), 0);
		assert_int_equal(json_array_size(get(t, "py_stacks")), 0);
		assert_true(json_is_null(get(t, "top_waker")));
		assert_true(json_is_null(get(t, "python_entry")));	/* no Python thread */
		assert_int_equal(json_object_size(t), 34);
	}
	assert_real(json_array_get(threads, 1), "cuda_sync_s", 0.4);
	assert_int(json_array_get(threads, 1), "cuda_calls", 1200);
	assert_int(json_array_get(threads, 1), "launches", 1000);
	assert_real(json_array_get(threads, 1), "runqueue_wait_s", 0.005);
	assert_real(json_array_get(threads, 2), "fault_s", 0.003);
	assert_real(json_array_get(threads, 2), "window_s", 0.8);

	cuda = get(root, "cuda");
	assert_int_equal(json_object_size(cuda), 2);
	calls = get(cuda, "calls");
	/* functions that were called: not cuLibraryGetKernel, seen only naming */
	assert_int_equal(json_object_size(calls), 3);
	t = get(calls, "cuLaunchKernel");
	assert_int(t, "count", 1000);
	assert_int(t, "failed", 0);
	assert_true(json_is_null(get(t, "total_s")));
	assert_true(json_is_null(get(t, "max_s")));
	t = get(calls, "cuCtxSynchronize_v2");
	assert_int(t, "count", 150);
	assert_int(t, "failed", 0);
	assert_real(t, "total_s", 0.4);
	assert_real(t, "max_s", 0.05);
	assert_int(t, "observed", 150);
	assert_true(json_is_false(get(t, "estimated")));
	assert_int_equal(json_object_size(t), 6);
	assert_int(get(calls, "cuMemAlloc_v2"), "failed", 2);
	kernels = get(cuda, "kernels");
	assert_int_equal(json_array_size(kernels), 50);
	t = json_array_get(kernels, 0);
	assert_int(t, "pid", 300);
	assert_str(t, "handle", "0x7f0000001000");
	assert_str(t, "name", "relu_kernel");
	assert_int(t, "launches", 600);
	assert_int(t, "observed_launches", 600);
	assert_true(json_is_false(get(t, "estimated")));
	assert_int_equal(json_object_size(t), 6);
	assert_str(json_array_get(kernels, 49), "name", "k49");
	/* no Python stacks: the section is there, empty */
	t = get(root, "python");
	assert_int_equal(json_object_size(t), 6);
	assert_int_equal(json_array_size(get(t, "processes")), 0);
	assert_int_equal(json_array_size(get(t, "gil")), 0);
	assert_int(t, "sampled_stacks", 0);
	assert_int(t, "cuda_call_stacks", 0);
	assert_int_equal(json_array_size(get(t, "sync_sites")), 0);
	assert_int_equal(json_array_size(get(t, "launch_sites")), 0);
	json_decref(root);
	free(f);
}

/* The gpu object: one process with its clock fit, kernels by name, copies
 * by kind, streams and devices, in the units and keys of the contract. */
static void test_json_gpu(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *gpu, *p, *fit, *k, *c, *st, *d;

	(void)state;
	f->gpu[0] = (struct gpu_process_stat){ .pid = 300, .kernels = 10, .copies = 2, .memsets = 1, .syncs = 3,
					       .api_records = 10, .joined = 9, .unjoined = 1,
					       .causality_violations = 1, .worst_violation_ns = 2000,
					       .launch_to_start_p50_ns = 5000, .cupti_dropped = 4, .windows = 4,
					       .observed_ns = 250000000, .span_ns = 1000000000, .estimated = true,
					       .detaches = 3, .detach_max_ns = 2500000, .attach_max_ns = 9000000,
					       .drain_max_ns = 1000000, .unfinished = 2,
					       .busy_method = GPU_BUSY_BY_LAUNCHES, .window_launches = 10,
					       .gap_launches = 30.5, .gap_launches_seen = 28,
					       .gap_probed_ns = 700000000 };
	f->gpu[0].fit = (struct clock_fit){ .valid = true, .samples = 5, .rejected = 1, .gpu_ref = 7000, .mono_ref = 100,
					    .offset_ns = 3, .slope = 1.00001, .drift_ppm = 10, .residual_rms_ns = 20,
					    .residual_p50_ns = 15, .residual_p99_ns = 40, .residual_max_ns = 41,
					    .bound_ns = 600, .drift_bound_ppm = 1.2 };
	f->gpu_kernels[0] = (struct gpu_kernel_stat){ .pid = 300, .name = "spin(int)", .count = 10,
						      .total_ns = 2000000, .min_ns = 100000, .max_ns = 300000 };
	f->gpu_copies[0] = (struct gpu_copy_stat){ .pid = 300, .copy_kind = 2, .count = 2, .bytes = 8192,
						   .total_ns = 50000 };
	f->gpu_streams[0] = (struct gpu_stream_stat){ .pid = 300, .device = 1, .stream = 7, .launches = 9,
						      .kernels = 10, .kernel_ns = 2000000, .copies = 2, .copy_bytes = 8192,
						      .copy_ns = 50000, .memsets = 1, .memset_bytes = 64,
						      .memset_ns = 1000 };
	f->gpu_devices[0] = (struct gpu_device_stat){ .pid = 300, .device = 1, .busy_ns = 62500000,
						      .idle_fraction = 0.75, .busy_est_ns = 250000000,
						      .estimated = true, .idle_scale = 3 };
	f->sum.gpu = f->gpu;
	f->sum.gpu_count = 1;
	f->sum.gpu_kernels = f->gpu_kernels;
	f->sum.gpu_kernel_count = 1;
	f->sum.gpu_copies = f->gpu_copies;
	f->sum.gpu_copy_count = 1;
	f->sum.gpu_streams = f->gpu_streams;
	f->sum.gpu_stream_count = 1;
	f->sum.gpu_devices = f->gpu_devices;
	f->sum.gpu_device_count = 1;
	root = render_json(f);
	gpu = get(root, "gpu");
	assert_int_equal(json_object_size(gpu), 5);
	p = json_array_get(get(gpu, "processes"), 0);
	assert_int_equal(json_object_size(p), 29);
	assert_int(p, "pid", 300);
	assert_int(p, "kernels", 10);
	assert_int(p, "memcpys", 2);
	assert_int(p, "memsets", 1);
	assert_int(p, "syncs", 3);
	assert_int(p, "api_records", 10);
	assert_int(p, "kernels_joined", 9);
	assert_int(p, "kernels_unjoined", 1);
	assert_int(p, "causality_violations", 1);
	assert_real(p, "worst_violation_s", 2e-6);
	assert_real(p, "launch_to_start_p50_s", 5e-6);
	assert_int(p, "cupti_dropped", 4);
	assert_true(json_is_false(get(p, "cupti_failed")));
	assert_true(json_is_null(get(p, "cupti_error")));
	assert_int(p, "windows", 4);
	assert_real(p, "observed_s", 0.25);
	assert_real(p, "span_s", 1);
	assert_true(json_is_true(get(p, "estimated")));
	assert_int(p, "detaches", 3);
	assert_real(p, "detach_max_s", 0.0025);
	assert_real(p, "attach_max_s", 0.009);
	assert_real(p, "drain_max_s", 0.001);
	assert_int(p, "unfinished_records", 2);
	assert_str(p, "busy_method", "launches");
	assert_int(p, "window_launches", 10);
	assert_real(p, "gap_launches", 30.5);
	assert_int(p, "gap_launches_seen", 28);
	assert_real(p, "gap_probed_s", 0.7);
	fit = get(p, "clock_fit");
	assert_int_equal(json_object_size(fit), 13);
	assert_int(fit, "pairs", 5);
	assert_int(fit, "pairs_rejected", 1);
	assert_int(fit, "gpu_ref_ns", 7000);
	assert_int(fit, "mono_ref_ns", 100);
	assert_real(fit, "drift_ppm", 10);
	assert_real(fit, "residual_p50_ns", 15);
	assert_real(fit, "residual_p99_ns", 40);
	assert_real(fit, "bound_ns", 600);
	assert_real(fit, "drift_bound_ppm", 1.2);
	k = json_array_get(get(gpu, "kernels"), 0);
	assert_int_equal(json_object_size(k), 7);
	assert_str(k, "name", "spin(int)");
	assert_int(k, "count", 10);
	assert_real(k, "total_s", 0.002);
	assert_real(k, "mean_s", 0.0002);
	assert_real(k, "min_s", 0.0001);
	assert_real(k, "max_s", 0.0003);
	c = json_array_get(get(gpu, "memcpy"), 0);
	assert_int_equal(json_object_size(c), 5);
	assert_str(c, "kind", "DtoH");
	assert_int(c, "bytes", 8192);
	assert_real(c, "total_s", 5e-5);
	st = json_array_get(get(gpu, "streams"), 0);
	assert_int_equal(json_object_size(st), 12);
	assert_int(st, "stream", 7);
	assert_int(st, "launches", 9);
	assert_int(st, "memset_bytes", 64);
	d = json_array_get(get(gpu, "devices"), 0);
	assert_int_equal(json_object_size(d), 7);
	assert_real(d, "idle_scale", 3);
	assert_real(d, "busy_s", 0.0625);
	assert_real(d, "idle_fraction", 0.75);
	assert_real(d, "busy_estimated_s", 0.25);
	assert_true(json_is_true(get(d, "estimated")));
	json_decref(root);
	{
		char *md = render(report__write_markdown, f);

		assert_non_null(strstr(md, "## GPU activity (CUPTI)"));
		assert_non_null(strstr(md, "| 300 | 10 | 2 | 1 | 9 | 1 | 5.0 us | 15 / 40 ns | 600 ns | 10.00 ± 1.20 ppm |"));
		assert_non_null(strstr(md, "1 kernels start on the GPU before their launch call (worst by 2.0 us)"));
		assert_non_null(strstr(md, "| spin(int) | 300 | 10 | 2.000 ms | 200.0 us |"));
		assert_non_null(strstr(md, "| 300 | DtoH | 2 | 8192 | 0.050 ms |"));
		assert_non_null(strstr(md, "| 300 | 1 | ≈0.250 s | ≈75.0% |"));
		assert_non_null(strstr(md, "GPU activity was collected in 4 windows, 25.0% of its 1.0 s"));
		assert_non_null(strstr(md, "per launch, the windows' busy time over their 10 launches times ≈30 launches in "
					   "the gaps (28 seen by the probes in 0.700 s)."));
		free(md);
	}
	free(f);
}

/* Without CUDA events the cuda object is there, empty. */
static void test_json_no_cuda(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *cuda;

	(void)state;
	root = render_json(f);
	cuda = get(root, "cuda");
	assert_true(json_is_object(get(cuda, "calls")));
	assert_int_equal(json_object_size(get(cuda, "calls")), 0);
	assert_true(json_is_array(get(cuda, "kernels")));
	assert_int_equal(json_array_size(get(cuda, "kernels")), 0);
	assert_int(json_array_get(get(root, "threads"), 0), "cuda_calls", 0);
	assert_int(json_array_get(get(root, "processes"), 0), "device_memory_peak_bytes", 0);
	assert_int_equal(json_array_size(get(get(root, "gpu"), "processes")), 0);
	assert_int_equal(json_array_size(get(get(root, "gpu"), "kernels")), 0);
	json_decref(root);
	free(f);
}

/* A truncated recording: no stop reason, the reason of the truncation. */
static void test_json_truncated(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *rec;

	(void)state;
	f->rec.truncated = true;
	f->rec.complete = false;
	f->rec.stop_reason = 0;
	f->sum.truncated = true;
	snprintf(f->rec.truncation, sizeof(f->rec.truncation), "chunk 17 at offset 123456: CRC mismatch");
	f->rec.created_real_ns = 0;
	root = render_json(f);
	rec = get(root, "recording");
	assert_true(json_is_true(get(rec, "truncated")));
	assert_str(rec, "truncation", "chunk 17 at offset 123456: CRC mismatch");
	assert_true(json_is_null(get(rec, "stop_reason")));
	assert_true(json_is_null(get(rec, "start_time")));
	json_decref(root);

	/* a header whose times would overflow (a damaged or hostile file): no
	 * start time, and no undefined arithmetic on the way */
	f->rec.created_real_ns = (__u64)INT64_MAX - 5;
	f->rec.created_mono_ns = 0;
	root = render_json(f);
	assert_true(json_is_null(get(get(root, "recording"), "start_time")));
	json_decref(root);
	f->rec.created_real_ns = 1;
	f->rec.created_mono_ns = (__u64)INT64_MAX + 10;
	root = render_json(f);
	assert_true(json_is_null(get(get(root, "recording"), "start_time")));
	json_decref(root);
	free(f);
}

/* What the reader and the pass did not take as written is said, in both
 * reports: a damaged file header (no start time), metadata beyond the
 * reader's bounds, events out of order beyond the reorder buffer. */
static void test_analysis_notes(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *rec, *notes;
	char *md;

	(void)state;
	f->rec.header_damaged = true;
	f->rec.created_real_ns = 0;
	f->rec.created_mono_ns = 0;
	f->rec.cut.threads = 134464;
	f->out_of_order = 77;
	root = render_json(f);
	rec = get(root, "recording");
	assert_true(json_is_null(get(rec, "start_time")));
	assert_int(get(rec, "analysis"), "out_of_order_events", 77);
	notes = get(get(rec, "analysis"), "notes");
	assert_int_equal(json_array_size(notes), 3);
	assert_non_null(strstr(json_string_value(json_array_get(notes, 0)), "file header is damaged"));
	assert_non_null(strstr(json_string_value(json_array_get(notes, 1)), "134464 listed threads"));
	assert_non_null(strstr(json_string_value(json_array_get(notes, 2)), "77 events came out of order"));
	json_decref(root);
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "> **WARNING:** the file header is damaged"));
	assert_non_null(strstr(md, "> **WARNING:** 77 events came out of order"));
	free(md);
	free(f);
}

/* Names are arbitrary bytes; the report must stay valid UTF-8 JSON. */
static void test_json_invalid_utf8(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root;

	(void)state;
	memcpy(f->threads[0].comm, "a\xff\xc3(b\xe2\x82\xac", 9);
	f->procs[0].cmdline = "run \xc0\xaf \xed\xa0\x80 ok";
	root = render_json(f);
	assert_str(json_array_get(get(root, "threads"), 0), "comm", "a\xef\xbf\xbd\xef\xbf\xbd(b\xe2\x82\xac");
	assert_str(json_array_get(get(root, "processes"), 0), "cmdline",
		   "run \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd ok");
	json_decref(root);
	free(f);
}

static void test_markdown_clean(void **state)
{
	struct fixture *f = fixture__new();
	char row[128];
	char *md;

	(void)state;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "# inferscope-bpf report\n"));
	assert_non_null(strstr(md, "gpu-01"));
	assert_non_null(strstr(md, "6.18.0"));
	assert_non_null(strstr(md, "1.000 s from 2025-11-26T09:40:02.123456Z"));
	assert_non_null(strstr(md, "python3 train.py --bs 64"));
	assert_non_null(strstr(md, "- **Stopped:** interrupted (SIGINT or SIGTERM)\n"));
	assert_null(strstr(md, "WARNING"));
	assert_null(strstr(md, "ringbuf"));
	assert_null(strstr(md, "free disk space"));
	/* sorted by on-CPU time: python3 (0.7 s), pt_main_thread, loader */
	assert_non_null(strstr(md, "| 300 | 300 | python3 | 0.700 | 0.300 | 0.005 | 0.295 (0.000) | 0/0 | 0.000 |"));
	assert_non_null(strstr(md, "| 300 | 302 | pt_main_thread | 0.300 | 0.500 | 0.000 | 0.500 (0.000) | 12/0 | 0.003 |"));
	assert_true(strstr(md, "| 300 | 300 |") < strstr(md, "| 300 | 302 |"));
	assert_true(strstr(md, "| 300 | 302 |") < strstr(md, "| 100 | 101 |"));
	snprintf(row, sizeof(row), "| %s | 120 |", isr_event_name(ISR_EV_SCHED_SWITCH));
	assert_non_null(strstr(md, row));
	assert_non_null(strstr(md, "| **total** | 150 |"));
	assert_non_null(strstr(md, "## Findings\n\nNo finding"));
	assert_null(strstr(md, "CUDA"));
	free(md);
	free(f);
}

static void test_markdown_cuda(void **state)
{
	struct fixture *f = fixture__new();
	char *md;

	(void)state;
	fixture__add_cuda(f);
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "\n## CUDA\n"));
	assert_true(strstr(md, "## Threads") < strstr(md, "## CUDA"));
	assert_non_null(strstr(md, "| 300 | python3 | 2048.0 | 1024.0 | 64.0 | 0.0 | 2 |\n"));
	assert_null(strstr(md, "| 100 | loader | 0.0"));
	assert_non_null(strstr(md, "1 free of memory allocated before the recording began"));
	assert_non_null(strstr(md, "### Functions by calls"));
	assert_non_null(strstr(md, "| cuLaunchKernel | 1000 | 0 |\n"));
	assert_true(strstr(md, "| cuLaunchKernel | 1000 |") < strstr(md, "| cuCtxSynchronize_v2 | 150 |"));
	assert_non_null(strstr(md, "### Functions by time"));
	assert_non_null(strstr(md, "| cuCtxSynchronize_v2 | 0.400 | 150 | 2.667 | 50.000 |\n"));
	assert_non_null(strstr(md, "### Kernels by launches"));
	assert_non_null(strstr(md, "| relu_kernel | 300 | 600 |\n"));
	assert_non_null(strstr(md, "| k9 | 300 | 91 |\n"));
	assert_null(strstr(md, "| k10 | 300 |"));
	assert_non_null(strstr(md, "… 45 more kernels"));
	assert_non_null(strstr(md, "### Synchronization by thread"));
	assert_non_null(strstr(md, "| 300 | 300 | python3 | 1200 | 1000 | 0.400 | 40.0 | cuCtxSynchronize_v2 |\n"));
	/* event counts by function, not by CUDA event type */
	assert_non_null(strstr(md, "| cuLaunchKernel | 1000 |\n| cuCtxSynchronize_v2 | 150 |"));
	assert_non_null(strstr(md, "| cuLibraryGetKernel | 3 |\n"));
	assert_null(strstr(md, "| cuda_call |"));
	assert_null(strstr(md, "types unknown"));
	assert_non_null(strstr(md, "| **total** | 1353 |"));
	/* findings first: the failed calls */
	assert_non_null(strstr(md, "1. **CUDA calls failed** (`cuda_errors`, critical). 2 CUDA calls failed: "
				   "cuMemAlloc_v2 2x (last error 2 CUDA_ERROR_OUT_OF_MEMORY)."));
	assert_non_null(strstr(md, "the GPU ran out of memory"));
	assert_true(strstr(md, "## Findings") < strstr(md, "## Threads"));
	free(md);

	/* no failures: no finding */
	f->fns[2].failed = 0;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "## CUDA"));
	assert_null(strstr(md, "CUDA calls failed"));
	assert_non_null(strstr(md, "No finding"));
	free(md);

	/* dropped CUDA events are a warning with their remedy */
	f->sum.drops[ISR_SRC_CUDA] = 12;
	f->sum.drops[ISR_SRC_CUDA_INFLIGHT] = 3;
	f->sum.drops_total = 15;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "> - cuda: 12 (CUDA call events lost"));
	assert_non_null(strstr(md, "> - cuda_inflight: 3 (CUDA calls whose entry could not be kept"));
	free(md);
	free(f);
}

static void test_markdown_truncated_and_drops(void **state)
{
	struct fixture *f = fixture__new();
	char *md;

	(void)state;
	f->rec.truncated = true;
	f->rec.stop_reason = 0;
	f->sum.truncated = true;
	snprintf(f->rec.truncation, sizeof(f->rec.truncation), "chunk 17: unexpected end of file");
	f->sum.drops[ISR_SRC_SCHED] = 1200;
	f->sum.drops[ISR_SRC_WRITER] = 30;
	f->sum.drops_total = 1230;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "- **Stopped:** unknown (the recording is truncated)\n"));
	assert_non_null(strstr(md, "WARNING: the recording is truncated"));
	assert_non_null(strstr(md, "chunk 17: unexpected end of file"));
	assert_non_null(strstr(md, "events after that point are lost"));
	assert_non_null(strstr(md, "WARNING: 1230 events were dropped"));
	assert_non_null(strstr(md, isr_source_name(ISR_SRC_SCHED)));
	assert_non_null(strstr(md, ": 1200 ("));
	assert_non_null(strstr(md, "increase --ringbuf-size (default 32 MiB) or trace fewer targets"));
	assert_non_null(strstr(md, ": 30 ("));
	assert_non_null(strstr(md, "free disk space"));
	/* only the sources that dropped */
	assert_null(strstr(md, "fault counts are too low"));
	/* the warnings come before the tables */
	assert_true(strstr(md, "WARNING") < strstr(md, "## Threads"));
	free(md);

	/* drops alone, no truncation */
	f->rec.truncated = false;
	f->sum.truncated = false;
	f->sum.drops[ISR_SRC_SCHED] = 0;
	f->sum.drops_total = 30;
	md = render(report__write_markdown, f);
	assert_null(strstr(md, "truncated"));
	assert_null(strstr(md, "ringbuf"));
	assert_non_null(strstr(md, "free disk space"));
	free(md);
	free(f);
}

/* Top 30 threads by on-CPU time, then a count of the rest; names that
 * would break a table are escaped. */
static void test_markdown_many_threads(void **state)
{
	struct fixture *f = fixture__new();
	char row[128];
	char *md;

	(void)state;
	for (int i = 0; i < 35; i++)
		f->threads[i] = thread(400, 401 + i, "w", (__u64)(i + 1) * MS, 0);
	strcpy(f->threads[34].comm, "a|b`c");
	f->sum.thread_count = 35;
	/* two that did nothing are folded into one line, not counted as "more" */
	f->threads[35] = thread(400, 500, "idle", MS / 2, 0);
	f->threads[36] = thread(400, 501, "idle", 0, 0);
	f->sum.thread_count = 37;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "… 5 more threads"));
	assert_non_null(strstr(md, "2 threads did nothing worth a row (under 1 ms on a CPU"));
	assert_null(strstr(md, "| idle |"));
	assert_non_null(strstr(md, "| 400 | 435 | a\\|b\\`c | 0.035 |"));
	snprintf(row, sizeof(row), "| 400 | %d | w |", 401 + 5);	/* 30th by on-CPU */
	assert_non_null(strstr(md, row));
	snprintf(row, sizeof(row), "| 400 | %d | w |", 401 + 4);	/* 31st: left out */
	assert_null(strstr(md, row));
	free(md);
	free(f);
}

/* A stream that fails is an error, not a short report. */
static void test_write_errors(void **state)
{
	struct fixture *f = fixture__new();
	struct analysis a = { .r = &f->rec, .sum = &f->sum };
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	if (!full)
		skip();
	assert_int_equal(py_report__compute(&f->rec, &a.py), 0);
	assert_int_equal(explain__run(&f->rec, &f->sum, a.py, &a.ex), 0);
	assert_int_equal(report__write_json(full, &a), -EIO);
	clearerr(full);
	assert_int_equal(report__write_markdown(full, &a), -EIO);
	fclose(full);
	explain__free(a.ex);
	py_report__free(a.py);
	free(f);
}

/* GIL in the fixture: python3 (300/300) waited 150 ms of its 1 s for the
 * GIL; pt_main_thread (window 0.8 s) waited 80 ms; loader made no GIL
 * calls. */
static void fixture__add_gil(struct fixture *f)
{
	f->sum.event_counts[ISR_EV_GIL] = 78;
	f->sum.event_total += 78;
	f->sum.gil_acquire_events = 40;
	f->sum.gil_release_events = 38;
	f->threads[1].gil_wait_ns = 150 * MS;
	f->threads[1].gil_hold_ns = 600 * MS;
	f->threads[1].gil_acquisitions = 30;
	f->threads[1].gil_hold_measured = true;
	f->threads[2].gil_wait_ns = 80 * MS;
	f->threads[2].gil_hold_ns = 250 * MS + 1;
	f->threads[2].gil_acquisitions = 10;
	f->threads[2].gil_hold_measured = true;
}

static void test_json_gil(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *counts, *threads;

	(void)state;
	fixture__add_gil(f);
	root = render_json(f);
	counts = get(root, "event_counts");
	assert_int(counts, "PyEval_RestoreThread", 40);
	assert_int(counts, "PyEval_SaveThread", 38);
	assert_null(json_object_get(counts, "gil"));
	assert_null(json_object_get(counts, isr_event_name(ISR_EV_GIL)));
	assert_int_equal(json_object_size(counts), 4);
	/* sorted by pid, tid: loader, python3, pt_main_thread */
	threads = get(root, "threads");
	assert_real(json_array_get(threads, 0), "gil_wait_s", 0.0);
	assert_true(json_is_null(get(json_array_get(threads, 0), "gil_hold_s")));	/* no GIL event */
	assert_int(json_array_get(threads, 0), "gil_acquisitions", 0);
	assert_int(json_array_get(threads, 1), "tid", 300);
	assert_real(json_array_get(threads, 1), "gil_wait_s", 0.15);
	assert_real(json_array_get(threads, 1), "gil_hold_s", 0.6);
	assert_int(json_array_get(threads, 1), "gil_acquisitions", 30);
	assert_int(json_array_get(threads, 2), "tid", 302);
	assert_real(json_array_get(threads, 2), "gil_wait_s", 0.08);
	assert_real(json_array_get(threads, 2), "gil_hold_s", 0.250000001);
	assert_int(json_array_get(threads, 2), "gil_acquisitions", 10);
	json_decref(root);

	/* no GIL events: no GIL keys in the counts */
	free(f);
	f = fixture__new();
	root = render_json(f);
	counts = get(root, "event_counts");
	assert_null(json_object_get(counts, "PyEval_RestoreThread"));
	assert_null(json_object_get(counts, "PyEval_SaveThread"));
	json_decref(root);
	free(f);
}

static void test_markdown_gil(void **state)
{
	struct fixture *f = fixture__new();
	char *md;

	(void)state;
	md = render(report__write_markdown, f);
	assert_null(strstr(md, "## Python GIL"));
	assert_null(strstr(md, "for the GIL"));
	assert_null(strstr(md, "PyEval_RestoreThread"));
	free(md);

	fixture__add_gil(f);
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "## Python GIL\n"));
	/* most GIL wait first; loader, with no GIL events, not in the table */
	assert_non_null(strstr(md, "| 300 | 300 | python3 | 0.000 | 0 | 0.150 | 0.600 | 30 |\n"));
	assert_non_null(strstr(md, "| 300 | 302 | pt_main_thread | 0.000 | 0 | 0.080 | 0.250 | 10 |\n"));
	assert_true(strstr(md, "| 300 | 300 | python3 | 0.000 | 0 | 0.150") <
		    strstr(md, "| 300 | 302 | pt_main_thread | 0.000 | 0 | 0.080"));
	assert_null(strstr(md, "| 100 | 101 | loader | 0.000 | 0 | 0.000 | 0.000 | 0 |"));
	assert_non_null(strstr(md, "| PyEval_RestoreThread | 40 |\n"));
	assert_non_null(strstr(md, "| PyEval_SaveThread | 38 |\n"));
	assert_null(strstr(md, "types unknown to this version"));
	free(md);

	/* a thread seen only releasing the GIL held it: listed with no acquisitions */
	f->threads[0].gil_hold_ns = 40 * MS;
	f->threads[0].gil_hold_measured = true;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "| 100 | 101 | loader | 0.000 | 0 | 0.000 | 0.040 | 0 |\n"));
	free(md);

	/* the scheduler's GIL waits alone (no --gil): blocked, and the wait */
	f->threads[0].gil_hold_ns = 0;
	f->threads[0].gil_hold_measured = false;
	f->threads[0].gil_blocked_ns = f->threads[0].gil_wait_ns = 70 * MS;
	f->threads[0].gil_blocks = 7;
	md = render(report__write_markdown, f);
	/* its hold unknown: "-", not 0 */
	assert_non_null(strstr(md, "| 100 | 101 | loader | 0.070 | 7 | 0.070 | - | 0 |\n"));
	free(md);
	free(f);
}

/* pt_main_thread (tid 302) is blocked 0.5 s of its 0.8 s and woken 128
 * times, 127 of them by loader (tid 101), whose wakeups ended 0.4 s of it. */
static void plant_waker(struct fixture *f, __u32 pid, __u32 tid, __u64 wakeups)
{
	f->threads[2].wakeups = 128;
	f->threads[2].top_waker = (struct waker_summary){ .pid = pid, .tid = tid, .wakeups = wakeups,
							  .blocked_ns = 400 * MS };
}

static void test_json_top_waker(void **state)
{
	struct fixture *f = fixture__new();
	json_t *root, *w;

	(void)state;
	plant_waker(f, 100, 101, 127);
	f->threads[1].wakeups = 40;
	f->threads[1].top_waker = (struct waker_summary){ .pid = 999, .tid = 1000, .wakeups = 10 };
	/* pid 999 is the tracer's (the recorder's watcher of held processes) */
	f->sum.sampling.overhead.measured = true;
	f->sum.sampling.overhead.tracer_pid = 998;
	f->sum.sampling.overhead.helper_pid = 999;
	root = render_json(f);
	w = get(json_array_get(get(root, "threads"), 2), "top_waker");
	assert_int_equal(json_object_size(w), 7);
	assert_int(w, "tid", 101);
	assert_int(w, "pid", 100);
	assert_str(w, "comm", "loader");
	assert_true(json_is_false(get(w, "tracer")));
	assert_int(w, "wakeups", 127);
	assert_real(w, "share", 127.0 / 128.0);
	assert_real(w, "blocked_s", 0.4);
	/* a waker that is not a traced thread has no name */
	w = get(json_array_get(get(root, "threads"), 1), "top_waker");
	assert_int(w, "tid", 1000);
	assert_int(w, "pid", 999);
	assert_true(json_is_null(get(w, "comm")));
	assert_true(json_is_true(get(w, "tracer")));
	assert_real(w, "share", 0.25);
	assert_real(w, "blocked_s", 0.0);
	assert_true(json_is_null(get(json_array_get(get(root, "threads"), 0), "top_waker")));
	json_decref(root);
	free(f);
}

/* The recorder's account (ISR_SAMPLING_COSTS, SPENT): pt_main_thread
 * (tid 302), on a CPU 300 ms of a 1 s recording, was charged 3 ms of
 * launch hits, 0.3 ms of scheduler events and 0.5 us of other hits; the
 * 1% budget allowed 20 ms and was charged 8 ms. */
static void test_overhead_account(void **state)
{
	struct fixture *f = fixture__new();
	struct sampling_overhead *o = &f->sum.sampling.overhead;
	json_t *root, *a, *by;
	char *md;

	(void)state;
	f->sum.sampling.budget = true;
	f->sum.sampling.budget_pct = 1;
	o->measured = o->spent_known = true;
	o->tracer_pid = 998;
	o->hit_ns = 650;
	o->spent.busiest_pid = 300;
	o->spent.busiest_tid = 302;
	o->spent.traced_ns = 1000 * MS;
	o->spent.busiest_oncpu_ns = 300 * MS;
	o->spent.allowed_ns = 20 * MS;
	o->spent_ns = 8 * MS;
	o->spent.busiest_ns[ISR_SPENT_HOT] = 3 * MS;
	o->spent.busiest_ops[ISR_SPENT_HOT] = 3000;
	o->spent.busiest_ns[ISR_SPENT_SCHED] = 300000;
	o->spent.busiest_ops[ISR_SPENT_SCHED] = 1500;
	o->spent.busiest_ns[ISR_SPENT_PROBES] = 500;
	o->spent.busiest_ops[ISR_SPENT_PROBES] = 1;
	o->spent.all_ns[ISR_SPENT_HOT] = 4 * MS;
	root = render_json(f);
	a = get(get(get(root, "recording"), "overhead"), "spent");
	assert_int(a, "pid", 300);
	assert_int(a, "tid", 302);
	assert_real(a, "traced_s", 1.0);
	assert_real(a, "on_cpu_s", 0.3);
	assert_real(a, "allowed_s", 0.02);
	assert_real(a, "budget_spent_s", 0.008);
	by = get(a, "by_kind");
	assert_int_equal(json_object_size(by), ISR_SPENT_MAX);
	assert_real(get(by, "hot_probes"), "seconds", 0.003);
	assert_int(get(by, "hot_probes"), "count", 3000);
	assert_int(get(by, "scheduler"), "count", 1500);
	assert_int(get(by, "cupti"), "count", 0);
	assert_real(get(a, "all_threads_s"), "hot_probes", 0.004);
	json_decref(root);
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "- **Tracing cost (estimated):** 3.3 ms, 1.10% of the 0.300 s its busiest thread was "
				   "on a CPU in 1.000 s (thread 302 `pt_main_thread`), within the 1% budget (8.0 ms "
				   "charged of the 20.0 ms it allowed): CUDA hot-path probe hits 3.0 ms, scheduler "
				   "tracing 0.3 ms; the tracer is pid 998\n"));
	free(md);
	/* without a budget, and over it */
	o->spent.allowed_ns = 0;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "(thread 302 `pt_main_thread`), no budget: CUDA hot-path"));
	free(md);
	o->spent.allowed_ns = 5 * MS;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, ", over the 1% budget (8.0 ms charged of the 5.0 ms it allowed)"));
	free(md);
	/* page-fault tracing's own budget: within only if both are */
	o->spent.allowed_ns = 20 * MS;
	o->spent.faults_spent_ns = 12 * MS;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, ", within the 1% budget (8.0 ms charged to the hot path's and 12.0 ms to page-fault "
				   "tracing's, of the 20.0 ms each allowed)"));
	free(md);
	o->spent.faults_spent_ns = 25 * MS;
	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, ", over the 1% budget (8.0 ms charged to the hot path's and 25.0 ms to page-fault "
				   "tracing's, of the 20.0 ms each allowed)"));
	free(md);
	root = render_json(f);
	assert_real(get(get(get(root, "recording"), "overhead"), "spent"), "faults_budget_spent_s", 0.025);
	json_decref(root);
	free(f);
}

/*
 * A trainer (pid 500, attached with -p) with 4 DataLoader workers forked
 * before the attach (named pt_data_worker: two by their snapshot, two by
 * the name they took while recorded), a multiprocessing pool started by
 * fork (the same command line) and by spawn, the resource tracker; one
 * process whose parent was not traced; two that name each other as parent
 * (a file is untrusted). The tree: each child under its parent, children by
 * pid, the roles, in JSON, Markdown and HTML.
 */
static void test_process_tree(void **state)
{
	struct fixture *f = fixture__new();
	static const char *const train = "python3 train.py --workers 4";
	struct rec_process procs[12];
	json_t *root, *tree, *n;
	char *md, *html;
	size_t i;

	(void)state;
	procs[0] = (struct rec_process){ .pid = 500, .ppid = 1, .origin = ISR_ORIGIN_ATTACHED, .comm = "python3",
					 .cmdline = (char *)train, .exe = "/usr/bin/python3.12" };
	for (i = 0; i < 4; i++)
		procs[1 + i] = (struct rec_process){ .pid = 510 + (__u32)i, .ppid = 500,
						     .origin = ISR_ORIGIN_DESCENDANT,
						     .comm = i < 2 ? "pt_data_worker" : "python3", .cmdline = (char *)train,
						     .exe = "/usr/bin/python3.12" };
	procs[5] = (struct rec_process){ .pid = 520, .ppid = 500, .origin = ISR_ORIGIN_CHILD, .comm = "python3",
					 .cmdline = (char *)train, .exe = "/usr/bin/python3.12" };
	procs[6] = (struct rec_process){ .pid = 521, .ppid = 500, .origin = ISR_ORIGIN_CHILD, .comm = "python3",
					 .cmdline = (char *)train, .exe = "/usr/bin/python3.12", .seen_mono_ns = 1 };
	procs[7] = (struct rec_process){ .pid = 521, .ppid = 500, .origin = ISR_ORIGIN_EXEC, .comm = "python3",
					 .cmdline = "/usr/bin/python3.12 -c from multiprocessing.spawn import "
						    "spawn_main; spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork",
					 .exe = "/usr/bin/python3.12", .seen_mono_ns = 2 };
	procs[8] = (struct rec_process){ .pid = 522, .ppid = 500, .origin = ISR_ORIGIN_DESCENDANT, .comm = "python3",
					 .cmdline = "/usr/bin/python3.12 -c from multiprocessing.resource_tracker "
						    "import main;main(6)", .exe = "/usr/bin/python3.12" };
	procs[9] = (struct rec_process){ .pid = 400, .ppid = 77, .origin = ISR_ORIGIN_ATTACHED, .comm = "server",
					 .cmdline = "server", .exe = "/bin/server" };
	procs[10] = (struct rec_process){ .pid = 901, .ppid = 902, .origin = ISR_ORIGIN_CHILD, .comm = "a" };
	procs[11] = (struct rec_process){ .pid = 902, .ppid = 901, .origin = ISR_ORIGIN_CHILD, .comm = "b" };
	f->rec.processes = procs;
	f->rec.process_count = 12;
	/* what the summary saw: the later two workers renamed, CPU time */
	f->threads[0] = thread(500, 500, "python3", 900 * MS, 0);
	f->threads[1] = thread(500, 501, "pt_autograd_0", 100 * MS, 0);
	f->threads[2] = thread(512, 512, "pt_data_worker", 400 * MS, 0);
	f->threads[3] = thread(513, 513, "pt_data_worker", 300 * MS, 0);
	f->sum.thread_count = 4;

	root = render_json(f);
	tree = get(root, "process_tree");
	assert_int_equal(json_array_size(tree), 11);
	{
		static const __u32 order[] = { 400, 500, 510, 511, 512, 513, 520, 521, 522, 901, 902 };
		static const int depth[] = { 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1 };

		for (i = 0; i < 11; i++) {
			n = json_array_get(tree, i);
			assert_int(n, "pid", order[i]);
			assert_int(n, "depth", depth[i]);
		}
	}
	/* the cycle is broken at its smallest pid: 902 under 901 */
	assert_int(json_array_get(tree, 10), "parent", 901);
	n = json_array_get(tree, 1);
	assert_true(json_is_null(get(n, "parent")));
	assert_str(n, "role", "dataloader_parent");
	assert_int(n, "children", 7);
	assert_int(n, "threads", 2);
	assert_real(n, "on_cpu_s", 1.0);
	assert_str(n, "origin", "attached");
	for (i = 2; i < 6; i++) {
		n = json_array_get(tree, i);
		assert_int(n, "parent", 500);
		assert_str(n, "role", "dataloader_worker");
		assert_str(n, "role_text", "PyTorch DataLoader worker");
		assert_str(n, "origin", "descendant");
		assert_str(n, "comm", "pt_data_worker");
	}
	assert_str(json_array_get(tree, 6), "role", "fork");
	assert_str(json_array_get(tree, 7), "role", "multiprocessing_spawn");
	assert_str(json_array_get(tree, 7), "origin", "child");
	assert_str(json_array_get(tree, 8), "role", "multiprocessing_resource_tracker");
	assert_true(json_is_null(get(json_array_get(tree, 0), "role")));
	assert_true(json_is_null(get(json_array_get(tree, 0), "parent")));
	json_decref(root);

	md = render(report__write_markdown, f);
	assert_non_null(strstr(md, "- **Targets:** 11 processes (a child under its parent)\n"
				   "  - pid 400 (server, attached; 0 threads, 0.00 s on CPU): server\n"
				   "  - pid 500 (python3, attached; parent of PyTorch DataLoader workers; 7 children traced; "
				   "2 threads, 1.00 s on CPU): python3 train.py --workers 4\n"
				   "    - pid 510 (pt_data_worker, descendant; PyTorch DataLoader worker; 0 threads, 0.00 s on "
				   "CPU): python3 train.py --workers 4\n"));
	assert_non_null(strstr(md, "    - pid 521 (python3, child; Python multiprocessing worker (spawn); 0 threads, "
				   "0.00 s on CPU): python3 train.py --workers 4 → exec: /usr/bin/python3.12 -c"));
	assert_non_null(strstr(md, "  - pid 901 (a, child; 1 child traced; 0 threads, 0.00 s on CPU): (no command line)\n"
				   "    - pid 902 (b, child; 0 threads, 0.00 s on CPU): (no command line)\n"));
	free(md);
	html = render(report__write_html, f);
	assert_non_null(strstr(html, "<ul class=\"tree\">\n<li>pid 400 <code>server</code>"));
	assert_non_null(strstr(html, "\n<ul>\n<li>pid 510 <code>pt_data_worker</code> <b>PyTorch DataLoader worker</b>"));
	assert_non_null(strstr(html, "</li></ul></li>\n<li>pid 901"));
	assert_non_null(strstr(html, "</li></ul></li></ul></div>"));
	free(html);
	free(f);
}

/* The Markdown report of f with the processes procs[0..n) and the first
 * k threads of f. */
static char *render_tree(struct fixture *f, struct rec_process *procs, size_t n, size_t k)
{
	f->rec.processes = procs;
	f->rec.process_count = n;
	f->sum.thread_count = k;
	return render(report__write_markdown, f);
}

/* The JSON process tree of f has count nodes, key true in those whose pid
 * is marked, false in the others. */
static void expect_tree_marks(struct fixture *f, size_t count, const char *key, bool (*marked)(json_int_t pid))
{
	json_t *root = render_json(f), *tree = get(root, "process_tree");

	assert_int_equal(json_array_size(tree), count);
	for (size_t i = 0; i < count; i++) {
		json_t *nd = json_array_get(tree, i);

		assert_int_equal(json_is_true(get(nd, key)), marked(json_integer_value(get(nd, "pid"))));
	}
	json_decref(root);
}

static bool helper_pid(json_int_t pid)
{
	return pid > 700 && pid < 713;
}

static bool wrapper_pid(json_int_t pid)
{
	return pid == 800 || pid == 801;
}

static bool wrapper_helper_pid(json_int_t pid)
{
	return pid == 805;
}

/*
 * A wrapper's helpers folded: a launcher script (pid 700) ran 12 helpers
 * that each began and ended within a few milliseconds (9 bash, 3
 * readlink), one of which (710) started the long-lived program (750); a
 * short-lived child that made CUDA calls (720) is shown. The tree shows
 * the root, the CUDA child and the program, which moves up to the nearest
 * process shown, and counts the helpers there; the JSON keeps every
 * process, marked.
 */
static void test_process_tree_folds_short_lived(void **state)
{
	struct fixture *f = fixture__new();
	struct rec_process procs[15];
	size_t n = 0, k = 0, i;
	char *md, *html;

	(void)state;
	procs[n++] = (struct rec_process){ .pid = 700, .ppid = 1, .origin = ISR_ORIGIN_LAUNCHED, .comm = "sh",
					   .cmdline = "sh run.sh" };
	f->threads[k++] = thread(700, 700, "sh", 10 * MS, 0);
	for (i = 0; i < 12; i++) {
		__u32 pid = 701 + (__u32)i;

		procs[n++] = (struct rec_process){ .pid = pid, .ppid = 700, .origin = ISR_ORIGIN_CHILD,
						   .comm = i < 9 ? "bash" : "readlink", .cmdline = "helper" };
		f->threads[k] = thread(pid, pid, i < 9 ? "bash" : "readlink", 1 * MS, 0);
		f->threads[k].created = f->threads[k].exited = true;
		f->threads[k].start_ns = T0 + (10 + i * 5) * MS;
		f->threads[k].end_ns = f->threads[k].start_ns + 3 * MS;
		k++;
	}
	procs[n++] = (struct rec_process){ .pid = 720, .ppid = 700, .origin = ISR_ORIGIN_CHILD, .comm = "probe",
					   .cmdline = "probe --gpu" };
	f->threads[k] = thread(720, 720, "probe", 1 * MS, 0);
	f->threads[k].created = f->threads[k].exited = true;
	f->threads[k].start_ns = T0 + 100 * MS;
	f->threads[k].end_ns = T0 + 102 * MS;
	k++;
	f->cuda_procs[0] = (struct process_summary){ .pid = 720 };
	f->sum.processes = f->cuda_procs;
	f->sum.process_count = 1;
	procs[n++] = (struct rec_process){ .pid = 750, .ppid = 710, .origin = ISR_ORIGIN_CHILD, .comm = "python3",
					   .cmdline = "python3 train.py" };
	f->threads[k] = thread(750, 750, "python3", 500 * MS, 0);
	f->threads[k].created = true;
	f->threads[k].start_ns = T0 + 60 * MS;
	k++;
	md = render_tree(f, procs, n, k);
	if (!strstr(md, "- **Targets:** 15 processes (a child under its parent), 12 short-lived folded\n"
			"  - pid 700 (sh, launched; 13 children traced; 1 thread, 0.01 s on CPU): sh run.sh\n"
			"    - 12 short-lived processes folded (each began and ended within 0.1 s, no CUDA): bash ×9, "
			"readlink ×3\n"
			"    - pid 750 (python3, child; 1 thread, 0.50 s on CPU): python3 train.py\n"
			"    - pid 720 (probe, child; 1 thread, 0.00 s on CPU): probe --gpu\n"))
		fail_msg("the helpers are not folded:\n%s", md);
	assert_null(strstr(md, "pid 701 ("));
	free(md);
	expect_tree_marks(f, 15, "short_lived", helper_pid);
	html = render(report__write_html, f);
	assert_non_null(strstr(html, "<ul><li>12 short-lived processes folded (each began and ended within 0.1 s, no "
				     "CUDA): bash ×9, readlink ×3</li></ul>"));
	assert_null(strstr(html, "pid 701 <code>"));
	free(html);
	free(f);
}

/*
 * Wrappers folded: `sh -c 'env sh -c "python3 train.py; ..."; ...'` (pids
 * 800, 801, each one thread and milliseconds on CPU, waiting for what it
 * started) is shown as the program (802), in the launcher's place, with
 * the wrappers named on it and a helper of the inner one (805) counted
 * there; its forked worker (803) stays under it. Not wrappers: a make
 * (820) that ran 60 ms on CPU, a Python parent (830) whose one child is
 * its own fork.
 */
static void test_process_tree_folds_wrappers(void **state)
{
	static const struct {
		__u32 pid, ppid, origin;
		char *comm, *cmd;
		__u64 on;
		char *exe;
	} p[] = {
		{ 800, 1, ISR_ORIGIN_LAUNCHED, "sh", "sh -c env sh -c 'python3 train.py; exit $?'; exit $?", 2 * MS, NULL },
		{ 801, 800, ISR_ORIGIN_CHILD, "sh", "sh -c python3 train.py; exit $?", 1 * MS, NULL },
		{ 802, 801, ISR_ORIGIN_CHILD, "python3", "python3 train.py", 500 * MS, "/usr/bin/python3" },
		{ 803, 802, ISR_ORIGIN_CHILD, "python3", "python3 train.py", 200 * MS, "/usr/bin/python3" },
		{ 805, 801, ISR_ORIGIN_CHILD, "readlink", "readlink -f python3", 1 * MS, NULL },
		{ 820, 1, ISR_ORIGIN_LAUNCHED, "make", "make all", 60 * MS, NULL },
		{ 821, 820, ISR_ORIGIN_CHILD, "cc", "cc -c a.c", 300 * MS, NULL },
		{ 830, 1, ISR_ORIGIN_LAUNCHED, "python3", "python3 main.py", 5 * MS, "/usr/bin/python3" },
		{ 831, 830, ISR_ORIGIN_CHILD, "python3", "python3 main.py", 300 * MS, "/usr/bin/python3" },
	};
	struct fixture *f = fixture__new();
	struct rec_process procs[sizeof(p) / sizeof(p[0])];
	char *md, *html;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		procs[i] = (struct rec_process){ .pid = p[i].pid, .ppid = p[i].ppid, .origin = p[i].origin,
						 .comm = p[i].comm, .cmdline = p[i].cmd, .exe = p[i].exe };
		f->threads[i] = thread(p[i].pid, p[i].pid, p[i].comm, p[i].on, 0);
	}
	f->threads[4].created = f->threads[4].exited = true;
	f->threads[4].end_ns = f->threads[4].start_ns + 3 * MS;
	md = render_tree(f, procs, i, i);
	if (!strstr(md, "- **Targets:** 9 processes (a child under its parent), 1 short-lived folded, 2 wrappers folded\n"
			"  - pid 802 (python3, child; 1 child traced; 1 thread, 0.50 s on CPU): python3 train.py\n"
			"    - started through 2 wrappers, folded (each only started the next, in one thread, at most "
			"0.05 s on CPU, no CUDA): pid 800 sh → pid 801 sh\n"
			"    - 1 short-lived process folded (each began and ended within 0.1 s, no CUDA): readlink ×1\n"
			"    - pid 803 (python3, child; forked worker (its parent's command line); 1 thread, 0.20 s on "
			"CPU): python3 train.py\n"
			"  - pid 820 (make, launched; 1 child traced; 1 thread, 0.06 s on CPU): make all\n"
			"    - pid 821 (cc, child; 1 thread, 0.30 s on CPU): cc -c a.c\n"
			"  - pid 830 (python3, launched; 1 child traced; 1 thread, 0.01 s on CPU): python3 main.py\n"
			"    - pid 831 (python3, child; forked worker (its parent's command line); 1 thread, 0.30 s on "
			"CPU): python3 main.py\n"))
		fail_msg("the wrappers are not folded:\n%s", md);
	assert_null(strstr(md, "pid 800 ("));
	assert_null(strstr(md, "pid 801 ("));
	free(md);
	expect_tree_marks(f, 9, "wrapper", wrapper_pid);
	expect_tree_marks(f, 9, "short_lived", wrapper_helper_pid);
	html = render(report__write_html, f);
	assert_non_null(strstr(html, "1 short-lived folded, 2 wrappers folded):"));
	assert_non_null(strstr(html, "<ul><li>started through 2 wrappers, folded (each only started the next, in one "
				     "thread, at most 0.05 s on CPU, no CUDA): pid 800 sh → pid 801 sh</li></ul>"));
	assert_null(strstr(html, "pid 800 <code>"));
	free(html);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_contract),
		cmocka_unit_test(test_process_tree),
		cmocka_unit_test(test_process_tree_folds_short_lived),
		cmocka_unit_test(test_process_tree_folds_wrappers),
		cmocka_unit_test(test_json_no_cuda),
		cmocka_unit_test(test_json_gpu),
		cmocka_unit_test(test_json_truncated),
		cmocka_unit_test(test_json_invalid_utf8),
		cmocka_unit_test(test_analysis_notes),
		cmocka_unit_test(test_markdown_clean),
		cmocka_unit_test(test_markdown_cuda),
		cmocka_unit_test(test_markdown_truncated_and_drops),
		cmocka_unit_test(test_markdown_many_threads),
		cmocka_unit_test(test_json_gil),
		cmocka_unit_test(test_markdown_gil),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_json_top_waker),
		cmocka_unit_test(test_overhead_account),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
