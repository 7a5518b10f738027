// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lookups generated from the format's registries (format/registry.h):
 * every registered event type has its name, size and drop source, and the
 * dispatch hands each record to the handler of its type, as its struct,
 * and to nobody else; the views read each type's interval, task and GPU
 * work from its fields, and every CUDA function is of the kinds its family
 * and flags say (one definition of a synchronization).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "registry.h"

static void test_every_type_named_and_sized(void **state)
{
	unsigned int known = 0;

	(void)state;
#define CHECK_ROW(ID, name, value, st, drops, ...)					\
	assert_string_equal(isr_event_name(ISR_EV_##ID), #name);			\
	assert_int_equal(isr_event_min_size(ISR_EV_##ID), sizeof(struct st));		\
	assert_int_equal(isr_event_drop_source(ISR_EV_##ID), drops);			\
	assert_non_null(isr_source_name(drops));					\
	known++;
	ISR_EVENT_TYPES(CHECK_ROW)
#undef CHECK_ROW
	assert_true(known > 0);
	/* Not in a file, or beyond the registry: unknown. */
	assert_null(isr_event_name(ISR_EV_PY_FRAMES));
	assert_null(isr_event_name(0));
	assert_null(isr_event_name(ISR_EV_TYPE_MAX));
	assert_int_equal(isr_event_min_size(200), sizeof(struct isr_ev_hdr));
	assert_int_equal(isr_event_drop_source(200), ISR_SRC_MAX);
	assert_string_equal(isr_source_name(ISR_SRC_WRITER), "writer");
	assert_null(isr_source_name(ISR_SRC_MAX));
	assert_string_equal(isr_stop_reason_name(ISR_STOP_WRITE_ERROR), "write_error");
	assert_null(isr_stop_reason_name(0));
}

static void test_cuda_functions(void **state)
{
	(void)state;
	assert_string_equal(isr_cuda_fn(ISR_CUDA_FN_cuMemAlloc_v2)->symbol, "cuMemAlloc_v2");
	assert_int_equal(isr_cuda_fn(ISR_CUDA_FN_cuMemAlloc_v2)->family, ISR_CUDA_FAM_ALLOC);
	assert_null(isr_cuda_fn(0));
	assert_null(isr_cuda_fn(ISR_CUDA_FN_MAX));
}

/* A synchronization is a call that blocks its thread until the GPU is done,
 * timed: the blocking SYNC calls and the synchronous copies; not a query
 * (it returns at once), not cuStreamWaitEvent (a stream waits, not the
 * thread), not an entry-only copy (its wait is not measured). */
static void test_cuda_kinds(void **state)
{
	static const __u16 syncs[] = {
		ISR_CUDA_FN_cuCtxSynchronize, ISR_CUDA_FN_cuCtxSynchronize_v2, ISR_CUDA_FN_cuStreamSynchronize,
		ISR_CUDA_FN_cuStreamSynchronize_ptsz, ISR_CUDA_FN_cuEventSynchronize, ISR_CUDA_FN_cuMemcpy,
		ISR_CUDA_FN_cuMemcpy_ptds, ISR_CUDA_FN_cuMemcpyHtoD_v2, ISR_CUDA_FN_cuMemcpyHtoD_v2_ptds,
		ISR_CUDA_FN_cuMemcpyDtoH_v2, ISR_CUDA_FN_cuMemcpyDtoH_v2_ptds, ISR_CUDA_FN_cuMemcpyDtoD_v2,
		ISR_CUDA_FN_cuMemcpyDtoD_v2_ptds,
	};
	static const __u16 queries[] = {
		ISR_CUDA_FN_cuEventQuery, ISR_CUDA_FN_cuStreamQuery, ISR_CUDA_FN_cuStreamQuery_ptsz,
	};
	unsigned int nsync = 0, nlaunch = 0, nquery = 0;

	(void)state;
	for (__u16 f = 0; f < ISR_CUDA_FN_MAX; f++) {
		const struct isr_cuda_fn *fn = isr_cuda_fn(f);
		bool want = false;

		for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
			want |= syncs[i] == f;
		assert_int_equal(isr_cuda_is(f, ISR_CUDA_K_SYNC), want);
		nsync += want;
		nlaunch += isr_cuda_is(f, ISR_CUDA_K_LAUNCH);
		nquery += isr_cuda_is(f, ISR_CUDA_K_QUERY);
		/* a synchronization returns: its wait is timed */
		if (want)
			assert_true(ISR_CUDA_FAM_RETURNS(fn->family));
		/* the hot path is what the budget switches: entry-only, but
		 * for the async copies, whose return tells a pageable copy */
		if (fn) {
			assert_int_equal(isr_cuda_is(f, ISR_CUDA_K_HOT), ISR_CUDA_FAM_HOT(fn->family));
			assert_int_equal(ISR_CUDA_FAM_RETURNS(fn->family),
					 !ISR_CUDA_FAM_HOT(fn->family) || fn->family == ISR_CUDA_FAM_COPY);
		}
	}
	assert_int_equal(nsync, sizeof(syncs) / sizeof(syncs[0]));
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		assert_true(isr_cuda_is(queries[i], ISR_CUDA_K_QUERY));
		assert_false(isr_cuda_is(queries[i], ISR_CUDA_K_SYNC));
	}
	assert_int_equal(nquery, 3);
	assert_int_equal(nlaunch, 8);	/* cuLaunchKernel*, cuLaunchKernelEx*, cuLaunchCooperativeKernel*, cuGraphLaunch* */
	assert_false(isr_cuda_is(ISR_CUDA_FN_cuStreamWaitEvent, ISR_CUDA_K_SYNC | ISR_CUDA_K_QUERY));
	assert_false(isr_cuda_is(ISR_CUDA_FN_cuMemcpy2D_v2, ISR_CUDA_K_SYNC));
	assert_true(isr_cuda_is(ISR_CUDA_FN_cuMemcpy2D_v2, ISR_CUDA_K_COPY));
	assert_true(isr_cuda_is(ISR_CUDA_FN_cuMemcpyHtoDAsync_v2, ISR_CUDA_K_COPY | ISR_CUDA_K_HOT));
	assert_true(isr_cuda_is(ISR_CUDA_FN_cuMemHostRegister_v2, ISR_CUDA_K_MEM));
	assert_true(isr_cuda_is(ISR_CUDA_FN_cuMemUnmap, ISR_CUDA_K_MEM));
	assert_true(isr_cuda_is(ISR_CUDA_FN_cuKernelGetFunction, ISR_CUDA_K_NAME));
	assert_true(isr_cuda_is(ISR_CUDA_FN_cuMemsetD8Async, ISR_CUDA_K_SET));
	assert_false(isr_cuda_is(0, ~0));
	assert_false(isr_cuda_is(ISR_CUDA_FN_MAX, ~0));
}

/* What a flight-recorder window keeps whatever its length: the records
 * that later ones refer to, the communicators and ranks included. */
static void test_definitions(void **state)
{
	static const __u16 defs[] = {
		ISR_EV_CUDA_NAME, ISR_EV_GPU_NAME, ISR_EV_PY_STACK, ISR_EV_PY_CODE,
		ISR_EV_PY_STATUS, ISR_EV_TASK_INFO, ISR_EV_NCCL_COMM, ISR_EV_RANK_ENV,
	};

	(void)state;
	for (__u16 t = 0; t < ISR_EV_TYPE_MAX; t++) {
		bool want = false;

		for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
			want |= defs[i] == t;
		assert_int_equal((isr_event_flags(t) & ISR_EVF_DEFINES) != 0, want);
	}
	assert_int_equal(isr_event_flags(200), 0);
}

/* What the registry declares of each type holds together: a type flagged
 * ONCPU is about a thread (its own event); a definition is about a task;
 * GPU work is a process's, on the GPU's clock; an event type that is not
 * registered is an instant about no task. Every registered type has all
 * three (a line without them does not compile); this checks that what they
 * say fits what the views read from a record of the type. */
static void test_every_type_declared(void **state)
{
	unsigned char rec[1024];
	struct isr_ev_hdr *h = (void *)rec;
	unsigned int n = 0;

	(void)state;
	for (__u16 t = 0; t < ISR_EV_TYPE_MAX; t++) {
		__u32 flags = isr_event_flags(t);
		struct isr_gpu_work w;
		struct isr_task who;
		__u64 s, e;

		if (!isr_event_name(t))
			continue;
		n++;
		assert_true(isr_event_min_size(t) <= sizeof(rec));
		memset(rec, 0, sizeof(rec));
		h->type = t;
		h->size = (__u16)isr_event_min_size(t);
		h->ts_ns = 5000;
		h->pid = 7;
		h->tid = 8;
		assert_true(isr_event_usable(h, h->size));
		assert_false(isr_event_usable(h, h->size - 8));
		/* a zeroed record: an instant at its time on the CPU clock, or no time on the GPU's */
		if (isr_ev_interval(h, &s, &e) == ISR_CLOCK_CPU)
			assert_true(s == 5000 && e == 5000);
		else
			assert_true(s == 0 && e == 0);
		if (flags & ISR_EVF_ONCPU)
			assert_true(isr_ev_task(h, &who) && who.pid == 7 && who.tid == 8);
		if (flags & ISR_EVF_DEFINES)
			assert_true(isr_ev_task(h, &who));
		if (isr_ev_gpu_work(h, &w)) {
			assert_int_equal(isr_ev_interval(h, &s, &e), ISR_CLOCK_GPU);
			assert_true(isr_ev_task(h, &who) && who.pid == 7 && who.tid == 0);
			assert_false(flags & ISR_EVF_ONCPU);
		}
	}
	assert_true(n > 30);
	h->type = ISR_EV_PY_FRAMES;	/* never in a file */
	assert_false(isr_event_usable(h, sizeof(rec)));
	assert_false(isr_ev_task(h, &(struct isr_task){ 0, 0 }));
}

static void test_intervals(void **state)
{
	struct isr_ev_cuda_call c = { .hdr = { .type = ISR_EV_CUDA_CALL, .size = sizeof(c), .ts_ns = 1000 },
				      .duration_ns = 50 };
	struct isr_ev_page_fault f = { .hdr = { .type = ISR_EV_PAGE_FAULT, .size = sizeof(f), .ts_ns = 1000 },
				       .duration_ns = 30 };
	struct isr_ev_gil g = { .hdr = { .type = ISR_EV_GIL, .size = sizeof(g), .ts_ns = 1000 }, .wait_ns = 7,
				.kind = ISR_GIL_RELEASE };
	struct isr_ev_reclaim rc = { .hdr = { .type = ISR_EV_RECLAIM, .size = sizeof(rc), .ts_ns = UINT64_MAX - 5 },
				     .duration_ns = 10 };
	struct isr_ev_gpu_memset m = { .hdr = { .type = ISR_EV_GPU_MEMSET, .size = sizeof(m), .ts_ns = 1 },
				       .start_ns = 5000, .end_ns = 6000, .device_id = 3, .context_id = 4,
				       .stream_id = 7, .correlation_id = 99 };
	struct isr_ev_gpu_api a = { .hdr = { .type = ISR_EV_GPU_API, .size = sizeof(a), .ts_ns = 1 },
				    .start_ns = 10, .end_ns = 20 };
	struct isr_ev_hdr unknown = { .type = 200, .size = sizeof(unknown), .ts_ns = 42 };
	struct isr_gpu_work w;
	__u64 s, e;

	(void)state;
	/* a call is a stretch once its return was probed */
	assert_int_equal(isr_ev_interval(&c.hdr, &s, &e), ISR_CLOCK_CPU);
	assert_true(s == 1000 && e == 1000);
	c.flags = ISR_CUDA_RETURNED;
	isr_ev_interval(&c.hdr, &s, &e);
	assert_true(s == 1000 && e == 1050);
	/* a fault ends at its time, when its start was seen */
	isr_ev_interval(&f.hdr, &s, &e);
	assert_true(s == 1000 && e == 1000);
	f.flags = ISR_FAULT_HAS_START | ISR_FAULT_MAJOR;
	isr_ev_interval(&f.hdr, &s, &e);
	assert_true(s == 970 && e == 1000);
	f.duration_ns = 2000;	/* before the clock's start: an instant */
	isr_ev_interval(&f.hdr, &s, &e);
	assert_true(s == 1000 && e == 1000);
	/* the GIL's wait is an acquire's only */
	isr_ev_interval(&g.hdr, &s, &e);
	assert_true(s == 1000 && e == 1000);
	g.kind = ISR_GIL_ACQUIRE;
	isr_ev_interval(&g.hdr, &s, &e);
	assert_true(s == 1000 && e == 1007);
	/* a stretch ends at the clock's end at the latest */
	isr_ev_interval(&rc.hdr, &s, &e);
	assert_true(s == UINT64_MAX - 5 && e == UINT64_MAX);
	/* GPU records are on the GPU's clock */
	assert_int_equal(isr_ev_interval(&m.hdr, &s, &e), ISR_CLOCK_GPU);
	assert_true(s == 5000 && e == 6000);
	assert_true(isr_ev_gpu_work(&m.hdr, &w));
	assert_true(w.start_ns == 5000 && w.end_ns == 6000 && w.device == 3 && w.context == 4 && w.stream == 7 &&
		    w.correlation == 99);
	assert_int_equal(isr_ev_interval(&a.hdr, &s, &e), ISR_CLOCK_GPU);
	assert_true(s == 10 && e == 20);
	assert_false(isr_ev_gpu_work(&a.hdr, &w));
	assert_false(isr_ev_gpu_work(&c.hdr, &w));
	assert_int_equal(isr_ev_interval(&unknown, &s, &e), ISR_CLOCK_CPU);
	assert_true(s == 42 && e == 42);
}

/* What the CUPTI bridge writes of GPU work is what the analysis reads,
 * each type at its own offsets. */
static void test_gpu_work_written(void **state)
{
	const struct isr_gpu_work w = { .start_ns = 5000, .end_ns = 6000, .device = 3, .context = 4, .stream = 7,
					.correlation = 99 };
	const __u16 types[] = { ISR_EV_GPU_KERNEL, ISR_EV_GPU_MEMCPY, ISR_EV_GPU_MEMSET };
	struct isr_ev_gpu_kernel k = { .hdr = { .type = ISR_EV_GPU_KERNEL, .size = sizeof(k) } };
	struct isr_ev_gpu_memset m = { .hdr = { .type = ISR_EV_GPU_MEMSET, .size = sizeof(m) }, .bytes = 64 };
	struct isr_ev_gpu_api a = { .hdr = { .type = ISR_EV_GPU_API, .size = sizeof(a) } };
	unsigned char rec[256];
	struct isr_ev_hdr *h = (void *)rec;
	struct isr_gpu_work r;

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(rec, 0, sizeof(rec));
		h->type = types[i];
		h->size = (__u16)isr_event_min_size(types[i]);
		assert_true(isr_ev_set_gpu_work(h, &w));
		assert_true(isr_ev_gpu_work(h, &r));
		assert_memory_equal(&r, &w, sizeof(r));
	}
	assert_true(isr_ev_set_gpu_work(&k.hdr, &w));
	assert_true(k.start_ns == 5000 && k.end_ns == 6000 && k.device_id == 3 && k.context_id == 4 &&
		    k.stream_id == 7 && k.correlation_id == 99 && k.name_id == 0);
	assert_true(isr_ev_set_gpu_work(&m.hdr, &w));
	assert_true(m.correlation_id == 99 && m.stream_id == 7 && m.bytes == 64);
	/* not GPU work: nothing written */
	assert_false(isr_ev_set_gpu_work(&a.hdr, &w));
	assert_true(a.start_ns == 0 && a.correlation_id == 0);
}

static void test_tasks(void **state)
{
	struct isr_ev_sched_switch sw = { .hdr = { .type = ISR_EV_SCHED_SWITCH, .size = sizeof(sw), .pid = 1, .tid = 2 },
					  .next_pid = 3, .next_tid = 4 };
	struct isr_ev_proc_exec x = { .hdr = { .type = ISR_EV_PROC_EXEC, .size = sizeof(x), .pid = 10, .tid = 10 },
				      .old_tid = 12 };
	struct isr_ev_sched_wakeup wk = { .hdr = { .type = ISR_EV_SCHED_WAKEUP, .size = sizeof(wk), .pid = 5, .tid = 6 },
					  .waker_pid = 7, .waker_tid = 8 };
	struct isr_ev_gpu_api a = { .hdr = { .type = ISR_EV_GPU_API, .size = sizeof(a), .pid = 20, .tid = 21 },
				    .thread_id = 22 };
	struct isr_ev_gpu_kernel k = { .hdr = { .type = ISR_EV_GPU_KERNEL, .size = sizeof(k), .pid = 20, .tid = 21 } };
	struct isr_ev_task_info ti = { .hdr = { .type = ISR_EV_TASK_INFO, .size = sizeof(ti), .pid = 1, .tid = 2 },
				       .task_pid = 30, .task_tid = 31 };
	struct isr_ev_sampling smp = { .hdr = { .type = ISR_EV_SAMPLING, .size = sizeof(smp) } };
	struct isr_task t;

	(void)state;
	assert_true(isr_ev_task(&sw.hdr, &t) && t.pid == 1 && t.tid == 2);
	assert_true(isr_ev_peer(&sw.hdr, &t) && t.pid == 3 && t.tid == 4);
	assert_true(isr_ev_task(&x.hdr, &t) && t.pid == 10 && t.tid == 10);
	assert_true(isr_ev_peer(&x.hdr, &t) && t.pid == 10 && t.tid == 12);
	assert_true(isr_ev_peer(&wk.hdr, &t) && t.pid == 7 && t.tid == 8);
	/* an interrupt woke it: the task it interrupted is nobody's waker */
	wk.flags = ISR_WAKE_INTERRUPT;
	assert_false(isr_ev_peer(&wk.hdr, &t));
	assert_true(isr_ev_task(&wk.hdr, &t) && t.pid == 5 && t.tid == 6);
	/* CUPTI's API record is about the thread that called, not the one that handed it over */
	assert_true(isr_ev_task(&a.hdr, &t) && t.pid == 20 && t.tid == 22);
	assert_false(isr_ev_peer(&a.hdr, &t));
	/* GPU work is its process's */
	assert_true(isr_ev_task(&k.hdr, &t) && t.pid == 20 && t.tid == 0);
	assert_true(isr_ev_task(&ti.hdr, &t) && t.pid == 30 && t.tid == 31);
	assert_false(isr_ev_task(&smp.hdr, &t));
	assert_true(isr_event_flags(ISR_EV_SCHED_SWITCH) & ISR_EVF_ANY_TASK);
	assert_true(isr_event_flags(ISR_EV_CUDA_CALL) & ISR_EVF_ONCPU);
	assert_false(isr_event_flags(ISR_EV_TASK_RENAME) & ISR_EVF_ONCPU);
}

/* What each record cost the thread it is charged to, for the overhead
 * budget's account (user/record/budget_ctl.h): its line of the registry,
 * read from the record. */
static void test_costs(void **state)
{
	struct isr_ev_cuda_call launch = { .hdr = { .type = ISR_EV_CUDA_CALL, .size = sizeof(launch), .pid = 1, .tid = 2 },
					   .func = ISR_CUDA_FN_cuLaunchKernel };
	struct isr_ev_cuda_call sync = { .hdr = { .type = ISR_EV_CUDA_CALL, .size = sizeof(sync), .pid = 1, .tid = 2 },
					 .func = ISR_CUDA_FN_cuStreamSynchronize, .flags = ISR_CUDA_RETURNED };
	struct isr_ev_gil gil = { .hdr = { .type = ISR_EV_GIL, .size = sizeof(gil), .pid = 1, .tid = 3 },
				  .kind = ISR_GIL_ACQUIRE };
	struct isr_ev_nvtx nvtx = { .hdr = { .type = ISR_EV_NVTX, .size = sizeof(nvtx), .pid = 1, .tid = 3 },
				    .kind = ISR_NVTX_PUSH };
	struct isr_ev_gil_wait gw = { .hdr = { .type = ISR_EV_GIL_WAIT, .size = sizeof(gw), .pid = 1, .tid = 4 } };
	struct isr_ev_sched_switch sw = { .hdr = { .type = ISR_EV_SCHED_SWITCH, .size = sizeof(sw), .pid = 5, .tid = 6 },
					  .next_pid = 7, .next_tid = 8 };
	struct isr_ev_page_fault pf = { .hdr = { .type = ISR_EV_PAGE_FAULT, .size = sizeof(pf), .pid = 1, .tid = 2 } };
	struct isr_ev_gpu_api api = { .hdr = { .type = ISR_EV_GPU_API, .size = sizeof(api), .pid = 1, .tid = 9 },
				      .thread_id = 2 };
	struct isr_ev_gpu_window win = { .hdr = { .type = ISR_EV_GPU_WINDOW, .size = sizeof(win), .pid = 1, .tid = 9 },
					 .finalize_ns = 700, .finalize_tid = 2 };
	struct isr_ev_py_frames fr = { .hdr = { .type = ISR_EV_PY_FRAMES, .pid = 1, .tid = 2 }, .capture_ns = 123 };
	struct isr_ev_gpu_kernel k = { .hdr = { .type = ISR_EV_GPU_KERNEL, .size = sizeof(k), .pid = 1 } };
	struct isr_ev_proc_fork fork = { .hdr = { .type = ISR_EV_PROC_FORK, .size = sizeof(fork), .pid = 1, .tid = 2 } };
	struct isr_ev_hdr unknown = { .type = 200, .size = sizeof(unknown), .pid = 1, .tid = 2 };
	struct isr_cost c;

	(void)state;
	/* a launch's entry is a hit of the hot path; a timed synchronization a pair of the other probes */
	assert_true(isr_ev_cost(&launch.hdr, sizeof(launch), &c));
	assert_true(c.account == ISR_SPENT_HOT && c.hits == 1 && !c.pair && !c.took);
	assert_true(c.task.pid == 1 && c.task.tid == 2);
	assert_true(isr_ev_cost(&sync.hdr, sizeof(sync), &c));
	assert_true(c.account == ISR_SPENT_PROBES && c.hits == 2 && c.pair);
	/* an async copy whose return was probed: the hot path's, a pair */
	launch.func = ISR_CUDA_FN_cuMemcpyHtoDAsync_v2;
	launch.flags = ISR_CUDA_RETURNED;
	assert_true(isr_ev_cost(&launch.hdr, sizeof(launch), &c));
	assert_true(c.account == ISR_SPENT_HOT && c.hits == 2 && c.pair);
	/* the GIL's acquire is timed (a pair), its release one hit; an NVTX start range returns its id */
	assert_true(isr_ev_cost(&gil.hdr, sizeof(gil), &c) && c.account == ISR_SPENT_PROBES && c.pair && c.task.tid == 3);
	gil.kind = ISR_GIL_RELEASE;
	assert_true(isr_ev_cost(&gil.hdr, sizeof(gil), &c) && !c.pair && c.hits == 1);
	assert_true(isr_ev_cost(&nvtx.hdr, sizeof(nvtx), &c) && c.account == ISR_SPENT_PROBES && !c.pair);
	nvtx.kind = ISR_NVTX_START;
	assert_true(isr_ev_cost(&nvtx.hdr, sizeof(nvtx), &c) && c.pair && c.hits == 2);
	/* scheduler events; a GIL wait as ISR_GIL_WAIT_EVENTS of them */
	assert_true(isr_ev_cost(&gw.hdr, sizeof(gw), &c) && c.account == ISR_SPENT_SCHED && c.hits == ISR_GIL_WAIT_EVENTS);
	assert_true(isr_ev_cost(&sw.hdr, sizeof(sw), &c) && c.account == ISR_SPENT_SCHED && c.hits == 1);
	assert_true(c.task.pid == 5 && c.task.tid == 6);
	assert_true(isr_ev_cost(&pf.hdr, sizeof(pf), &c) && c.account == ISR_SPENT_FAULTS && c.hits == 1);
	/* CUPTI: an API record of the thread that called; a detach what it took its thread */
	assert_true(isr_ev_cost(&api.hdr, sizeof(api), &c) && c.account == ISR_SPENT_CUPTI && c.hits == 1);
	assert_true(c.task.pid == 1 && c.task.tid == 2);
	assert_true(isr_ev_cost(&win.hdr, sizeof(win), &c) && c.account == ISR_SPENT_CUPTI && c.took && c.ns == 700);
	assert_true(c.task.pid == 1 && c.task.tid == 2 && c.hits == 1);
	win.finalize_tid = 0;
	assert_false(isr_ev_cost(&win.hdr, sizeof(win), &c));
	win.finalize_tid = 2;
	win.finalize_ns = 0;
	assert_false(isr_ev_cost(&win.hdr, sizeof(win), &c));
	/* a Python stack capture, from BPF to the recorder only: what it took, without its frames too */
	assert_true(isr_ev_cost(&fr.hdr, offsetof(struct isr_ev_py_frames, frames), &c));
	assert_true(c.account == ISR_SPENT_STACKS && c.took && c.ns == 123 && c.hits == 1 && c.task.tid == 2);
	fr.capture_ns = 0;
	assert_true(isr_ev_cost(&fr.hdr, offsetof(struct isr_ev_py_frames, frames), &c) && c.took && c.ns == 0);
	assert_false(isr_ev_cost(&fr.hdr, offsetof(struct isr_ev_py_frames, frames) - 8, &c));
	/* what the budget does not count; a record too short; a type not known */
	assert_false(isr_ev_cost(&k.hdr, sizeof(k), &c));
	assert_false(isr_ev_cost(&fork.hdr, sizeof(fork), &c));
	assert_false(isr_ev_cost(&pf.hdr, sizeof(pf) - 8, &c));
	assert_false(isr_ev_cost(&unknown, sizeof(unknown), &c));
}

struct seen {
	int switches, gils;
	__u32 last_kind;
};

static int on_switch(void *ctx, const struct isr_ev_sched_switch *e)
{
	struct seen *s = ctx;

	s->switches++;
	return e->next_tid == 13 ? -5 : 0;
}

static int on_gil(void *ctx, const struct isr_ev_gil *e)
{
	struct seen *s = ctx;

	s->gils++;
	s->last_kind = e->kind;
	return 0;
}

static const struct isr_ev_handlers handlers = {
	.sched_switch = on_switch,
	.gil = on_gil,
};

static void test_dispatch(void **state)
{
	struct isr_ev_sched_switch sw = { .hdr = { .type = ISR_EV_SCHED_SWITCH, .size = sizeof(sw) } };
	struct isr_ev_gil gil = { .hdr = { .type = ISR_EV_GIL, .size = sizeof(gil) }, .kind = ISR_GIL_RELEASE };
	struct isr_ev_page_fault pf = { .hdr = { .type = ISR_EV_PAGE_FAULT, .size = sizeof(pf) } };
	struct isr_ev_hdr unknown = { .type = 200, .size = sizeof(unknown) };
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &sw.hdr), 0);
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &gil.hdr), 0);
	assert_int_equal(s.switches, 1);
	assert_int_equal(s.gils, 1);
	assert_int_equal(s.last_kind, ISR_GIL_RELEASE);
	/* The handler's error comes back. */
	sw.next_tid = 13;
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &sw.hdr), -5);
	/* No handler, an unknown type, a record too short: nobody is called. */
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &pf.hdr), ISR_EV_UNHANDLED);
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &unknown), 0);
	gil.hdr.size = sizeof(struct isr_ev_hdr);
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &gil.hdr), 0);
	assert_int_equal(s.switches, 2);
	assert_int_equal(s.gils, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_named_and_sized),
		cmocka_unit_test(test_cuda_functions),
		cmocka_unit_test(test_cuda_kinds),
		cmocka_unit_test(test_definitions),
		cmocka_unit_test(test_every_type_declared),
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_gpu_work_written),
		cmocka_unit_test(test_tasks),
		cmocka_unit_test(test_costs),
		cmocka_unit_test(test_dispatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
