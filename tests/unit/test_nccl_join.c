// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NCCL kernels joined to their collectives (nccl.h states the rule): one
 * synthetic recording of two ranks (two processes on one communicator)
 * with CUPTI launch records and kernels. Rank 0's thread plants every case
 * the rule decides:
 *   seq 1   its NCCL kernel, whose name comes after it (the kernel waits)
 *   seq 2   a compute kernel launched between the entry and the NCCL
 *           kernel's launch: the NCCL kernel's time, not the compute one's
 *   seq 3,4 entered between ncclGroupStart and ncclGroupEnd: one kernel,
 *           launched after ncclGroupEnd, shared (grouped), counted once
 *   seq 5   a launch record whose kernel never came: not joined, and the
 *           next collective's kernel (seq 6) waits behind it, then joins
 *   seq 7   an NCCL kernel whose launch record is on another thread: not
 *           joined to the entry of this thread
 *   seq 8   no launch record of its own; a compute kernel launched after
 *           it, before seq 9: not joined to it
 *   seq 9   its NCCL kernel
 * Rank 1 has one NCCL kernel per collective. The joins, durations, the
 * per-rank totals and the reports' fields must be exact; a streamed
 * analysis must give the same reports. A kernel that starts more than
 * NCCL_JOIN_HORIZON_NS after its launch is not joined.
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
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "analysis.h"
#include "report.h"
#include "perfetto.h"

#include "synth.h"
#include "perfetto_text.h"

#define MS		1000000ULL
#define US		1000ULL
#define T0		(1000 * 1000 * MS)
#define LEN		(1000 * MS)
#define PID0		4100
#define TID0		4100		/* rank 0's calling thread */
#define TID0B		4101		/* another thread of rank 0 */
#define PID1		4200
#define COMM		0x7000ULL
#define ID_HASH		0x0badc0ffee15beefULL
#define NAME_NCCL	1		/* ncclDevKernel_..., ncclKernel_... */
#define NAME_COMPUTE	2
#define CUDA_LAUNCH	307		/* CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel */
#define SEQS		9

/* The entry of collective seq k of rank 0 (rank 1 enters 300 us later). */
static __u64 entry_at(int k)
{
	return T0 + 100 * MS + (__u64)k * 2 * MS;
}

static void nccl_call(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u16 func, __u64 seq)
{
	struct isr_ev_nccl_call *e = synth__event(b, ISR_EV_NCCL_CALL, sizeof(*e), ts, pid, tid);

	e->comm = nccl_func_is_collective(func) ? COMM : 0;
	e->count = 1024;
	e->seq = seq;
	e->peer = -1;
	e->func = func;
	e->dtype = 7;
	e->op = func == ISR_NCCL_FN_ncclAllReduce ? 0 : ISR_NCCL_OP_NONE;
}

/* CUPTI's driver launch record of corr on thread tid at mono ts (2 us
 * long), handed over at T0 + 500 ms. */
static void launch_record(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 corr)
{
	struct isr_ev_gpu_api *a = synth__event(b, ISR_EV_GPU_API, sizeof(*a), T0 + 500 * MS, pid, pid);

	a->start_ns = ts + GPU_AHEAD;
	a->end_ns = ts + 2 * US + GPU_AHEAD;
	a->correlation_id = corr;
	a->cbid = CUDA_LAUNCH;
	a->thread_id = tid;
	a->api = ISR_GPU_API_DRIVER;
}

static void kernel(struct synth *b, __u64 start, __u64 dur, __u32 pid, __u32 corr, __u32 name_id)
{
	struct isr_ev_gpu_kernel *k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), T0 + 500 * MS, pid, pid);

	k->start_ns = start + GPU_AHEAD;
	k->end_ns = start + dur + GPU_AHEAD;
	k->correlation_id = corr;
	k->name_id = name_id;
	k->stream_id = 13;
}

/* A collective with its own launch and NCCL kernel. */
static void plain(struct synth *b, __u64 t, __u32 pid, __u64 seq, __u32 corr, __u64 dur)
{
	nccl_call(b, t, pid, pid, ISR_NCCL_FN_ncclAllReduce, seq);
	launch_record(b, t + 10 * US, pid, pid, corr);
	kernel(b, t + 40 * US, dur, pid, corr, NAME_NCCL);
}

static struct synth *make(void)
{
	const __u32 tids0[] = { TID0, TID0B }, tids1[] = { PID1 };
	const char *const comms0[] = { "python3", "pt_nccl" }, *const comms1[] = { "python3" };
	struct synth *b = synth__new(T0, T0 + LEN);
	__u64 t;

	synth__process(b, PID0, "python3", 2, tids0, comms0);
	synth__process(b, PID1, "python3", 1, tids1, comms1);
	for (__u32 pid = PID0; pid <= PID1; pid += PID1 - PID0) {
		ev_gpu_clock(b, T0 + 1 * MS, pid);
		ev_gpu_clock(b, T0 + 999 * MS, pid);
		/* as CUPTI names them: mangled (NCCL 2.19 and later, and before) */
		ev_gpu_name(b, T0 + 500 * MS, pid, NAME_NCCL,
			    pid == PID0 ? "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE" :
					  "_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork");
		ev_gpu_name(b, T0 + 500 * MS, pid, NAME_COMPUTE, "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi");
		ev_nccl_comm(b, T0 + 10 * MS, pid, COMM, ID_HASH, pid == PID0 ? 0 : 1, 2);
	}
	/* rank 1: one kernel per collective, 100 us each */
	for (int k = 1; k <= SEQS; k++)
		plain(b, entry_at(k) + 300 * US, PID1, (__u64)k, 200 + (__u32)k, 100 * US);

	/* rank 0 */
	plain(b, entry_at(1), PID0, 1, 11, 500 * US);

	t = entry_at(2);
	nccl_call(b, t, PID0, TID0, ISR_NCCL_FN_ncclAllReduce, 2);
	launch_record(b, t + 5 * US, PID0, TID0, 12);
	kernel(b, t + 20 * US, 100 * US, PID0, 12, NAME_COMPUTE);
	launch_record(b, t + 50 * US, PID0, TID0, 13);
	kernel(b, t + 200 * US, 700 * US, PID0, 13, NAME_NCCL);

	t = entry_at(3);
	nccl_call(b, t, PID0, TID0, ISR_NCCL_FN_ncclGroupStart, 0);
	nccl_call(b, t + 5 * US, PID0, TID0, ISR_NCCL_FN_ncclAllReduce, 3);
	nccl_call(b, t + 10 * US, PID0, TID0, ISR_NCCL_FN_ncclBroadcast, 4);
	nccl_call(b, t + 15 * US, PID0, TID0, ISR_NCCL_FN_ncclGroupEnd, 0);
	launch_record(b, t + 20 * US, PID0, TID0, 14);
	kernel(b, t + 40 * US, 900 * US, PID0, 14, NAME_NCCL);

	t = entry_at(5);
	nccl_call(b, t, PID0, TID0, ISR_NCCL_FN_ncclAllReduce, 5);
	launch_record(b, t + 10 * US, PID0, TID0, 15);	/* its kernel never comes */
	plain(b, entry_at(6), PID0, 6, 16, 400 * US);

	t = entry_at(7);
	nccl_call(b, t, PID0, TID0, ISR_NCCL_FN_ncclAllReduce, 7);
	launch_record(b, t + 10 * US, PID0, TID0B, 17);
	kernel(b, t + 40 * US, 300 * US, PID0, 17, NAME_NCCL);

	t = entry_at(8);
	nccl_call(b, t, PID0, TID0, ISR_NCCL_FN_ncclAllReduce, 8);
	launch_record(b, t + 500 * US, PID0, TID0, 19);
	kernel(b, t + 520 * US, 150 * US, PID0, 19, NAME_COMPUTE);
	plain(b, entry_at(9), PID0, 9, 20, 250 * US);
	return b;
}

/* Rank 0's arrival at seq. */
static const struct nccl_arrival *arrival(const struct nccl_calls *c, __u32 pid, __u64 seq)
{
	for (size_t i = 0; i < c->narrivals; i++)
		if (c->arrivals[i].pid == pid && c->arrivals[i].seq == seq)
			return &c->arrivals[i];
	fail_msg("no arrival of pid %u at seq %llu", pid, (unsigned long long)seq);
	return NULL;
}

static void check_joined(const struct nccl_calls *c, __u64 seq, __u64 start, __u64 dur, bool grouped)
{
	const struct nccl_arrival *a = arrival(c, PID0, seq);

	if (!a->joined)
		fail_msg("seq %llu: not joined", (unsigned long long)seq);
	assert_int_equal(a->gpu_start, start);
	assert_int_equal(a->gpu_end - a->gpu_start, dur);
	assert_int_equal(a->grouped, grouped);
}

static void check_not_joined(const struct nccl_calls *c, __u64 seq)
{
	const struct nccl_arrival *a = arrival(c, PID0, seq);

	if (a->joined)
		fail_msg("seq %llu: joined to the kernel at %llu (%llu ns)", (unsigned long long)seq,
			 (unsigned long long)a->gpu_start, (unsigned long long)(a->gpu_end - a->gpu_start));
	assert_int_equal(a->gpu_start, 0);
	assert_int_equal(a->gpu_end, 0);
}

static void test_joins(void **state)
{
	struct synth *b = make();
	struct analysis *a;
	const struct nccl_calls *c;
	const struct nccl_proc *p;

	(void)state;
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	c = &a->nccl;
	assert_null(c->join);
	check_joined(c, 1, entry_at(1) + 40 * US, 500 * US, false);
	check_joined(c, 2, entry_at(2) + 200 * US, 700 * US, false);
	check_joined(c, 3, entry_at(3) + 40 * US, 900 * US, true);
	check_joined(c, 4, entry_at(3) + 40 * US, 900 * US, true);
	check_not_joined(c, 5);
	check_joined(c, 6, entry_at(6) + 40 * US, 400 * US, false);
	check_not_joined(c, 7);
	check_not_joined(c, 8);
	check_joined(c, 9, entry_at(9) + 40 * US, 250 * US, false);
	p = nccl_calls__proc(c, PID0);
	assert_non_null(p);
	assert_int_equal(p->collectives, SEQS);
	assert_int_equal(p->joined, 6);
	assert_int_equal(p->gpu_kernels, 5);	/* the group's once */
	assert_int_equal(p->gpu_ns, (500 + 700 + 900 + 400 + 250) * US);
	p = nccl_calls__proc(c, PID1);
	assert_int_equal(p->joined, SEQS);
	assert_int_equal(p->gpu_ns, SEQS * 100 * US);
	for (int k = 1; k <= SEQS; k++)
		assert_int_equal(arrival(c, PID1, (__u64)k)->gpu_start, entry_at(k) + 340 * US);

	/* the ranks' table */
	assert_non_null(a->ranks);
	assert_int_equal(a->ranks->nrows, 2);
	assert_int_equal(a->ranks->rows[0].pid, PID0);
	assert_int_equal(a->ranks->rows[0].nccl_gpu_ns, 2750 * US);
	assert_int_equal(a->ranks->rows[0].nccl_joined, 6);
	assert_int_equal(a->ranks->rows[0].nccl_not_joined, 3);
	assert_int_equal(a->ranks->rows[1].nccl_joined, SEQS);
	assert_int_equal(a->ranks->rows[1].nccl_not_joined, 0);
	assert_int_equal(a->ranks->ncolls, SEQS);
	analysis__free(a);
	synth__free(b);
}

/* The member of rank `rank` in the lined-up collective seq of the JSON. */
static json_t *member(json_t *lined_up, __u64 seq, int rank)
{
	size_t i, k;
	json_t *c, *m;

	json_array_foreach(lined_up, i, c) {
		if (json_integer_value(json_object_get(c, "seq")) != (json_int_t)seq)
			continue;
		json_array_foreach(json_object_get(c, "ranks"), k, m)
			if (json_integer_value(json_object_get(m, "rank")) == rank)
				return m;
	}
	fail_msg("no rank %d at seq %llu in collectives.lined_up", rank, (unsigned long long)seq);
	return NULL;
}

static void test_reports(void **state)
{
	struct synth *b = make();
	struct analysis *a = synth__check_streamed(b, 2048, 0);
	char *js = synth__render(a, report__write_json), *md = synth__render(a, report__write_markdown);
	json_error_t jerr;
	json_t *root = json_loads(js, 0, &jerr), *ranks, *lined, *m;

	(void)state;
	if (!root)
		fail_msg("JSON: %s", jerr.text);
	assert_int_equal(json_integer_value(json_object_get(root, "schema_version")), REPORT_SCHEMA_VERSION);
	ranks = json_object_get(root, "ranks");
	assert_int_equal(json_array_size(ranks), 2);
	m = json_array_get(ranks, 0);
	assert_int_equal(json_integer_value(json_object_get(m, "pid")), PID0);
	assert_true(json_real_value(json_object_get(m, "nccl_gpu_s")) == 2750 * US / 1e9);
	assert_int_equal(json_integer_value(json_object_get(m, "nccl_joined")), 6);
	assert_int_equal(json_integer_value(json_object_get(m, "nccl_not_joined")), 3);
	lined = json_object_get(json_object_get(root, "collectives"), "lined_up");
	assert_int_equal(json_array_size(lined), SEQS);
	assert_string_equal(json_string_value(json_object_get(json_array_get(lined, 3), "function")),
			    "ncclBroadcast");
	m = member(lined, 4, 0);
	assert_true(json_real_value(json_object_get(m, "gpu_s")) == 900 * US / 1e9);
	assert_true(json_real_value(json_object_get(m, "gpu_start_s")) == (entry_at(3) + 40 * US) / 1e9);
	assert_true(json_is_true(json_object_get(m, "grouped")));
	m = member(lined, 5, 0);
	assert_true(json_is_null(json_object_get(m, "gpu_s")));
	assert_true(json_is_null(json_object_get(m, "gpu_start_s")));
	assert_true(json_is_false(json_object_get(m, "grouped")));
	m = member(lined, 5, 1);
	assert_true(json_real_value(json_object_get(m, "gpu_s")) == 100 * US / 1e9);
	assert_true(json_is_false(json_object_get(m, "grouped")));
	/* the report, its ranks and collectives too, validates against the schema */
	{
		char path[] = "/tmp/isr-nccl-join-XXXXXX", cmd[256];
		int fd = mkstemp(path), status;
		char *out;

		assert_true(fd >= 0);
		assert_int_equal(write(fd, js, strlen(js)), (ssize_t)strlen(js));
		close(fd);
		snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import json, sys, jsonschema; jsonschema.validate("
			 "json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' %s docs/report-schema.json 2>&1",
			 path);
		out = synth__shell(cmd, &status);
		unlink(path);
		if (status)
			fail_msg("the report does not validate against docs/report-schema.json:\n%s", out);
		free(out);
	}
	/* Markdown: rank 0's row ends with 2.750 ms, 6 joined, 3 not */
	if (!strstr(md, "| 2.750 | 6 | 3 |"))
		fail_msg("rank 0's NCCL GPU columns missing:\n%s", md);
	json_decref(root);
	free(js);
	free(md);
	analysis__free(a);
	synth__free(b);
}

/* One process: seq 1's kernel starts 1 ms past the horizon (its launch
 * stopped waiting), seq 2's 40 us after its launch. */
/* A straggler seen from the GPU too: rank 1 enters each of 6 all-reduces
 * 10 ms after rank 0, whose kernel waits on the GPU until rank 1's has run
 * (10.2 ms each), rank 1's 200 us. The straggler finding says both. */
static void test_straggler_gpu_side(void **state)
{
	const __u32 tids0[] = { PID0 }, tids1[] = { PID1 };
	const char *const comms[] = { "python3" };
	struct synth *b = synth__new(T0, T0 + LEN);
	const struct finding *f = NULL;
	struct analysis *a;

	(void)state;
	synth__process(b, PID0, "python3", 1, tids0, comms);
	synth__process(b, PID1, "python3", 1, tids1, comms);
	for (__u32 pid = PID0; pid <= PID1; pid += PID1 - PID0) {
		ev_gpu_clock(b, T0 + 1 * MS, pid);
		ev_gpu_clock(b, T0 + 999 * MS, pid);
		ev_gpu_name(b, T0 + 500 * MS, pid, NAME_NCCL,
			    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
		ev_nccl_comm(b, T0 + 10 * MS, pid, COMM, ID_HASH, pid == PID0 ? 0 : 1, 2);
	}
	for (int k = 1; k <= 6; k++) {
		__u64 t = T0 + 100 * MS + (__u64)k * 20 * MS;

		plain(b, t, PID0, (__u64)k, 300 + (__u32)k, 10 * MS + 200 * US);
		plain(b, t + 10 * MS, PID1, (__u64)k, 400 + (__u32)k, 200 * US);
	}
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	for (size_t i = 0; i < a->ex->findings.n; i++)
		if (strcmp(a->ex->findings.v[i].rule, "nccl_straggler") == 0)
			f = &a->ex->findings.v[i];
	assert_non_null(f);
	print_message("%s\n", f->summary);
	assert_non_null(strstr(f->summary, "Rank 1 (pid 4200) arrived last at 6 of its 6 collectives"));
	/* no scheduling events: no host reason is made up */
	assert_non_null(strstr(f->summary, "did nothing the other ranks' did not, as far as its timeline tells (it "
					   "does not cover 100% of that time)."));
	assert_string_equal(json_string_value(json_object_get(json_object_get(f->evidence, "reason"), "category")),
			    "unknown");
	assert_non_null(strstr(f->summary, "On the GPU its NCCL kernels ran 0.001 s, the other ranks' 0.061 s on "
					   "average: their kernels waited there for it."));
	assert_true(fabs(json_real_value(json_object_get(f->evidence, "nccl_gpu_s")) - 0.0012) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(f->evidence, "others_nccl_gpu_s")) - 0.0612) < 1e-9);
	/* the cost priced on the GPU: rank 0's kernels ran 10 ms longer at each
	 * of the 6, no more than its 10 ms waits */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f->evidence, "cost_measured_by"), "gpu")), 6);
	assert_true(fabs(f->cost_s - 0.060) < 1e-9);
	{
		/* the Perfetto slices of the collectives carry their kernels' time */
		char dir[] = "/tmp/nccl-join-XXXXXX", path[64], *text;
		struct perfetto_stats st;
		size_t compressed;
		FILE *out;

		assert_non_null(mkdtemp(dir));
		snprintf(path, sizeof(path), "%s/trace.pftrace", dir);
		out = fopen(path, "w");
		assert_non_null(out);
		assert_int_equal(perfetto__write(out, a, &st), 0);
		assert_int_equal(fclose(out), 0);
		text = perfetto_text(path, &compressed);
		assert_int_equal(compressed, st.compressed);
		assert_int_equal(synth__count(text, "double_value: 10.2\n"), 6);	/* rank 0's kernels */
		assert_int_equal(synth__count(text, "double_value: 0.2\n"), 6);	/* rank 1's */
		free(text);
		unlink(path);
		rmdir(dir);
	}
	analysis__free(a);
	synth__free(b);
}

static void test_horizon(void **state)
{
	const __u32 tids[] = { PID0 };
	const char *const comms[] = { "python3" };
	const __u64 late = NCCL_JOIN_HORIZON_NS + 1 * MS;
	struct synth *b = synth__new(T0, T0 + late + 2000 * MS);
	struct analysis *a;

	(void)state;
	synth__process(b, PID0, "python3", 1, tids, comms);
	ev_gpu_clock(b, T0 + 1 * MS, PID0);
	ev_gpu_clock(b, T0 + late + 1900 * MS, PID0);
	ev_gpu_name(b, T0 + 50 * MS, PID0, NAME_NCCL, "ncclKernel_AllReduce_RING_LL_Sum_float");
	ev_nccl_comm(b, T0 + 10 * MS, PID0, COMM, ID_HASH, 0, 1);
	nccl_call(b, entry_at(1), PID0, PID0, ISR_NCCL_FN_ncclAllReduce, 1);
	launch_record(b, entry_at(1) + 10 * US, PID0, PID0, 31);
	kernel(b, entry_at(1) + 10 * US + late, 100 * US, PID0, 31, NAME_NCCL);
	plain(b, entry_at(1) + late + 1000 * MS, PID0, 2, 32, 200 * US);
	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	check_not_joined(&a->nccl, 1);
	check_joined(&a->nccl, 2, entry_at(1) + late + 1000 * MS + 40 * US, 200 * US, false);
	assert_int_equal(nccl_calls__proc(&a->nccl, PID0)->gpu_ns, 200 * US);
	analysis__free(a);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_joins),
		cmocka_unit_test(test_reports),
		cmocka_unit_test(test_horizon),
		cmocka_unit_test(test_straggler_gpu_side),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
