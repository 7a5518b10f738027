// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NCCL collectives of several ranks (real BPF, the stand-in libnccl.so.2 of
 * tests/standin/, the job of tests/workloads/nccl_job.c): every call of
 * every rank is recorded exactly, the ranks are named from their
 * communicator, the late rank is the straggler and the reason planted (a
 * sleep before every fourth all-reduce, or a busy process on its CPU) is
 * the reason the report gives — in one recording holding every rank, and in
 * one recording per rank analysed together.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "nccl_plan.h"

#define NCCL_JOB "build/tests/workloads/nccl_job"

struct ctx {
	struct th_files f;
	json_t *report;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	json_decref(c->report);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

/* The calls a rank makes in iters iterations, by function. */
static void check_rank_calls(json_t *rank, long iters)
{
	json_t *calls = json_object_get(rank, "calls");
	const long p2p = iters / NCCL_PLAN_P2P_EVERY;

	assert_non_null(calls);
	assert_int_equal((long)th_num(calls, "ncclAllReduce"), iters);
	assert_int_equal((long)th_num(calls, "ncclSend"), p2p);
	assert_int_equal((long)th_num(calls, "ncclRecv"), p2p);
	assert_int_equal((long)th_num(calls, "ncclGroupStart"), p2p);
	assert_int_equal((long)th_num(calls, "ncclGroupEnd"), p2p);
	assert_int_equal((long)th_num(calls, "ncclBroadcast"), 1);
	assert_int_equal((long)th_num(calls, "ncclAllGather"), 1);
	assert_int_equal((long)th_num(calls, "ncclReduceScatter"), 1);
	assert_int_equal((long)th_num(calls, "ncclReduce"), 1);
	assert_int_equal((long)th_num(calls, "ncclCommInitRank"), 1);
	assert_int_equal((long)th_num(rank, "collectives"), iters + NCCL_PLAN_TAIL_COLLECTIVES);
	/* bytes: count x element size, as the plan passes them */
	assert_int_equal((long long)th_num(rank, "bytes"),
			 (long long)iters * NCCL_PLAN_ALLREDUCE_COUNT * 4 + 2LL * p2p * 256 + 64 * 8 + 128 * 2 + 32 * 8 +
				 16 * 4);
}

/* The straggler finding: its rank and its reason. */
static json_t *straggler(json_t *report)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(report, "findings"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "rule")), "nccl_straggler") == 0)
			return json_object_get(f, "evidence");
	return NULL;
}

static void check_job(json_t *r, long ranks, long iters)
{
	json_t *rows = json_object_get(r, "ranks"), *row, *comms;
	size_t i;

	assert_int_equal(th_count(r, "nccl_call"),
			 ranks * (iters + 4 * (iters / NCCL_PLAN_P2P_EVERY) + NCCL_PLAN_TAIL_COLLECTIVES));
	assert_int_equal(th_count(r, "nccl_comm"), ranks);
	assert_int_equal(json_array_size(rows), (size_t)ranks);
	json_array_foreach(rows, i, row) {
		assert_int_equal((long)th_num(row, "rank"), (long)i);
		assert_string_equal(json_string_value(json_object_get(row, "rank_from")), "communicator");
		assert_int_equal((long)th_num(row, "world_size"), ranks);
		assert_int_equal((long)th_num(row, "local_rank"), (long)i);
		check_rank_calls(row, iters);
	}
	comms = json_object_get(json_object_get(r, "collectives"), "communicators");
	assert_int_equal(json_array_size(comms), 1);
	assert_int_equal((long)th_num(json_array_get(comms, 0), "collectives"), iters + NCCL_PLAN_TAIL_COLLECTIVES);
	assert_int_equal((long)th_num(json_object_get(json_array_get(comms, 0), "calls"), "ncclAllReduce"), iters);
}

static void run_job(struct ctx *c, const char *ranks, const char *iters, const char *mode, const char *work_us)
{
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", NCCL_JOB, "--ranks", (char *)ranks, "--iters",
			 (char *)iters, "--late", "1", "--mode", (char *)mode, "--work-us", (char *)work_us, NULL };

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	assert_non_null(c->report);
}

/* Rank 1 sleeps before every fourth all-reduce: it is the straggler, late
 * at least at those, and its calling thread was blocked (sleeping) while
 * the others had arrived. */
static void test_sleeping_rank(void **state)
{
	struct ctx *c = *state;
	json_t *ev, *reason;
	long late;

	run_job(c, "2", "80", "sleep", "300");
	check_job(c->report, 2, 80);
	ev = straggler(c->report);
	assert_non_null(ev);
	reason = json_object_get(ev, "reason");
	late = (long)th_num(ev, "late_arrivals");
	print_message("rank %d late at %ld collectives (%d planted), %.3f s; blocked %.0f%% vs %.0f%% for the other\n",
		      (int)th_num(ev, "rank"), late, 80 / NCCL_PLAN_LATE_EVERY, th_num(ev, "first_rank_wait_s"),
		      100 * th_num(reason, "share"), 100 * th_num(reason, "others_share"));
	assert_int_equal((long)th_num(ev, "rank"), 1);
	assert_true(late >= 80 / NCCL_PLAN_LATE_EVERY);
	assert_true(th_num(ev, "first_rank_wait_s") >= 0.8 * (80 / NCCL_PLAN_LATE_EVERY) * NCCL_PLAN_SLEEP_MS / 1e3);
	assert_string_equal(json_string_value(json_object_get(reason, "category")), "blocked");
	assert_true(th_num(reason, "share") > th_num(reason, "others_share") + 0.3);
}

/* Rank 1 shares its CPU with a busy process the whole run: it is late, and
 * its calling thread waited for a CPU that nccl_hog had. */
static void test_rank_behind_a_cpu_hog(void **state)
{
	struct ctx *c = *state;
	json_t *ev, *reason, *taker;
	bool named = false;
	size_t i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	run_job(c, "2", "40", "hog", "3000");
	check_job(c->report, 2, 40);
	ev = straggler(c->report);
	assert_non_null(ev);
	reason = json_object_get(ev, "reason");
	taker = json_array_get(json_object_get(reason, "cpu_taken_by"), 0);
	print_message("rank %d late at %d collectives, %.3f s; waiting for a CPU %.0f%% vs %.0f%%, taken by %s\n",
		      (int)th_num(ev, "rank"), (int)th_num(ev, "late_arrivals"), th_num(ev, "first_rank_wait_s"),
		      100 * th_num(reason, "share"), 100 * th_num(reason, "others_share"),
		      taker ? json_string_value(json_object_get(taker, "comm")) : "nobody");
	assert_int_equal((long)th_num(ev, "rank"), 1);
	assert_string_equal(json_string_value(json_object_get(reason, "category")), "runqueue");
	assert_true(th_num(reason, "share") > th_num(reason, "others_share"));
	/* the busy process is among those that had its CPU (a loaded host has others) */
	json_array_foreach(json_object_get(reason, "cpu_taken_by"), i, taker)
		named |= strcmp(json_string_value(json_object_get(taker, "comm")), "nccl_hog") == 0;
	assert_true(named);
}

/* --no-nccl: no probe, no NCCL event, no ranks. */
static void test_no_nccl(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "--no-nccl", "-o", c->f.isr, "--", NCCL_JOB, "--ranks", "2",
			 "--iters", "8", "--work-us", "0", NULL };

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	assert_int_equal(th_count(c->report, "nccl_call"), 0);
	assert_int_equal(th_count(c->report, "nccl_comm"), 0);
	assert_int_equal(json_array_size(json_object_get(c->report, "ranks")), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sleeping_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank_behind_a_cpu_hog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_nccl, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
