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
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
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

/* The straggler finding, and its evidence: its rank and its reason. */
static json_t *straggler_finding(json_t *report)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(report, "findings"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "rule")), "nccl_straggler") == 0)
			return f;
	return NULL;
}

static json_t *straggler(json_t *report)
{
	return json_object_get(straggler_finding(report), "evidence");
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
	/* the ranks have nothing else to do while they wait: rank 0's steps
	 * after the late collectives are longer by about the wait */
	print_message("cost %.3f s (by steps at %d), wait %.3f s\n", th_num(ev, "cost_s"),
		      (int)th_num(json_object_get(ev, "cost_measured_by"), "steps"), th_num(ev, "first_rank_wait_s"));
	assert_true(th_num(json_object_get(ev, "cost_measured_by"), "steps") >= 80 / NCCL_PLAN_LATE_EVERY);
	assert_true(th_num(ev, "cost_s") >= 0.7 * th_num(ev, "first_rank_wait_s"));
	assert_true(th_num(ev, "cost_s") <= th_num(ev, "first_rank_wait_s") + 1e-9);
}

/* A cpu_contention finding f that names the straggler's calling thread
 * (sf's) may stand beside the straggler's finding only as a group's whose
 * wait is mostly the others' (less than 80% the straggler's: analysis/rules/
 * rules_ranks.c folds the others): on a loaded host the first rank waits
 * for a CPU too, and that is a finding of its own. */
static void group_of_others(json_t *report, json_t *f, json_t *sf)
{
	double rq = -1;
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(report, "threads"), i, t)
		if (th_num(t, "tid") == th_num(sf, "tid"))
			rq = th_num(t, "runqueue_wait_s");
	print_message("beside it: %s\n", json_string_value(json_object_get(f, "summary")));
	if (json_array_size(json_object_get(json_object_get(f, "evidence"), "threads")) < 2 || rq < 0 ||
	    rq >= 0.8 * th_num(f, "cost_s") + 0.01)
		fail_msg("the straggler's thread (run-queue wait %.3f s) in a cpu_contention finding of %.3f s, not "
			 "folded: %s", rq, th_num(f, "cost_s"), json_string_value(json_object_get(f, "summary")));
}

/* Rank 1 shares its CPU with a busy process the whole run: it is late, and
 * its calling thread waited for a CPU that nccl_hog had. */
static void test_rank_behind_a_cpu_hog(void **state)
{
	struct ctx *c = *state;
	json_t *ev, *reason, *taker, *sf, *f;
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
	/* one finding per cause: neither its wait for a CPU nor rank 0's wait
	 * for it is a finding of its own beside it */
	sf = straggler_finding(c->report);
	json_array_foreach(json_object_get(c->report, "findings"), i, f) {
		const char *rule = json_string_value(json_object_get(f, "rule"));
		json_t *t;
		size_t k;

		if (!strcmp(rule, "blocked_on_thread"))
			assert_true(th_num(json_object_get(f, "evidence"), "waker_pid") != th_num(sf, "pid"));
		if (!strcmp(rule, "cpu_contention"))
			json_array_foreach(json_object_get(json_object_get(f, "evidence"), "threads"), k, t)
				if (th_num(t, "tid") == th_num(sf, "tid"))
					group_of_others(c->report, f, sf);
	}
	print_message("cost %.3f s of a %.3f s wait; folded into it: %zu findings\n", th_num(ev, "cost_s"),
		      th_num(ev, "first_rank_wait_s"), json_array_size(json_object_get(ev, "folded")));
}

#define SHORT_ITERS 20

/* The job of SHORT_ITERS iterations of 2 ranks, each rank's first call as
 * soon as it starts: as a shell command line. */
#define SHORT_JOB NCCL_JOB " --ranks 2 --iters 20 --work-us 100"

/* Records the command argv (after `record -q -o FILE --`) and checks that
 * every call of the short job's 2 ranks is in the recording. */
static void record_short_job(struct ctx *c, char *const *cmd, size_t n)
{
	char *argv[16] = { TRACER, "record", "-q", "-o", c->f.isr, "--" };
	size_t i;

	assert_true(n + 7 <= sizeof(argv) / sizeof(argv[0]));
	for (i = 0; i < n; i++)
		argv[6 + i] = cmd[i];
	argv[6 + n] = NULL;
	unlink(c->f.isr);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	json_decref(c->report);
	c->report = th_report(c->f.isr);
	assert_non_null(c->report);
	print_message("%s: %lld NCCL calls, %lld holds\n", cmd[0], th_count(c->report, "nccl_call"),
		      th_count(c->report, "proc_hold"));
	check_job(c->report, 2, SHORT_ITERS);
}

/* A job started through a wrapper (env, bash -c, two levels of them) that
 * calls NCCL as soon as its ranks start: every call is recorded, because
 * the tracer holds each new image at its exec and at its loading of
 * libnccl until its probes are armed (bpf/hold.bpf.h). */
static void test_wrapped_job_loses_no_call(void **state)
{
	struct ctx *c = *state;
	char *env[] = { "/usr/bin/env", "INFERSCOPE_TEST_WRAPPER=1", NCCL_JOB, "--ranks", "2", "--iters", "20",
			"--work-us", "100" };
	/* "; exit": bash forks the job instead of exec'ing itself into it */
	char *bash[] = { "/bin/bash", "-c", SHORT_JOB "; exit $?" };
	char *two[] = { "/bin/sh", "-c", "exec /usr/bin/env INFERSCOPE_TEST_WRAPPER=2 /bin/bash -c '" SHORT_JOB
			"; exit $?'" };

	record_short_job(c, env, sizeof(env) / sizeof(env[0]));
	record_short_job(c, bash, sizeof(bash) / sizeof(bash[0]));
	record_short_job(c, two, sizeof(two) / sizeof(two[0]));
}

/* Ranks forked without exec right after the launcher loaded libnccl: each
 * child is held before it first runs until it has its own probes, so every
 * rank's communicator set-up and calls are recorded and the ranks line
 * up. */
static void test_forked_ranks_line_up(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", NCCL_JOB, "--ranks", "2", "--iters", "20",
			 "--work-us", "100", "--fork", "1", NULL };
	json_t *rows, *row, *comms;
	size_t i;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	assert_non_null(c->report);
	assert_int_equal(th_count(c->report, "nccl_call"),
			 2 * (SHORT_ITERS + 4 * (SHORT_ITERS / NCCL_PLAN_P2P_EVERY) + NCCL_PLAN_TAIL_COLLECTIVES));
	assert_int_equal(th_count(c->report, "nccl_comm"), 2);
	rows = json_object_get(c->report, "ranks");
	assert_int_equal(json_array_size(rows), 2);
	json_array_foreach(rows, i, row) {
		assert_int_equal((long)th_num(row, "rank"), (long)i);
		assert_string_equal(json_string_value(json_object_get(row, "rank_from")), "communicator");
		check_rank_calls(row, SHORT_ITERS);
	}
	comms = json_object_get(json_object_get(c->report, "collectives"), "communicators");
	assert_int_equal(json_array_size(comms), 1);
	assert_int_equal((long)th_num(json_array_get(comms, 0), "collectives"),
			 SHORT_ITERS + NCCL_PLAN_TAIL_COLLECTIVES);
}

/* A recorder that dies while it holds a process (INFERSCOPE_TEST_DIE_AT_HOLD:
 * at the first hold, the launched command's exec) leaves it stopped to
 * nobody: its watcher lets it go, and the job runs to its end. */
static void test_hold_outlives_the_recorder(void **state)
{
	struct ctx *c = *state;
	char done[400], cmd[700];
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/sh", "-c", cmd, NULL };
	int status;

	snprintf(done, sizeof(done), "%s/done", c->f.dir);
	snprintf(cmd, sizeof(cmd), SHORT_JOB "; touch %s", done);
	setenv("INFERSCOPE_TEST_DIE_AT_HOLD", "1", 1);
	status = th_run(argv, c->f.err);
	unsetenv("INFERSCOPE_TEST_DIE_AT_HOLD");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 99);
	/* a liveness check, not a timing: the job takes well under a second */
	assert_true(th_wait_file(done, 120.0));
}

/* Each rank recorded by a `record` of its own (two recorders at once, each
 * launching one rank with its RANK in the environment), then the two
 * recordings analysed together: by their files, and by their directory. */
static void test_one_recording_per_rank(void **state)
{
	struct ctx *c = *state;
	const long iters = 80;
	unsigned char id[128];
	char hex[2 * sizeof(id) + 1], dir[300], isr[2][400], err[2][400], out[400], md_out[400], errp[400];
	char env[2][3][32];
	json_t *recs, *rec, *rows, *row, *coll, *ev, *reason;
	json_error_t jerr;
	double unc;
	char *md, *at;
	pid_t pids[2];
	int status;
	size_t i;

	assert_int_equal(getrandom(id, sizeof(id), 0), (ssize_t)sizeof(id));
	for (i = 0; i < sizeof(id); i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	snprintf(dir, sizeof(dir), "%s/ranks", c->f.dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (int r = 0; r < 2; r++) {
		snprintf(isr[r], sizeof(isr[r]), "%s/rank%d.isr", dir, r);
		snprintf(err[r], sizeof(err[r]), "%s/record%d.err", c->f.dir, r);
		snprintf(env[r][0], sizeof(env[r][0]), "RANK=%d", r);
		snprintf(env[r][1], sizeof(env[r][1]), "LOCAL_RANK=%d", r);
		snprintf(env[r][2], sizeof(env[r][2]), "WORLD_SIZE=2");
		{
			char *argv[] = { TRACER, "record", "-q", "-o", isr[r], "--", "/usr/bin/env", env[r][0], env[r][1],
					 env[r][2], NCCL_JOB, "--iters", "80", "--late", "1", "--mode", "sleep",
					 "--work-us", "300", "--worker", hex, NULL };

			pids[r] = th_spawn(argv, NULL, err[r]);
		}
	}
	for (int r = 0; r < 2; r++) {
		assert_int_equal(waitpid(pids[r], &status, 0), pids[r]);
		th_expect_exit(status, 0, err[r]);
	}
	/* analyze rank0.isr rank1.isr --format json */
	snprintf(out, sizeof(out), "%s/ranks.json", c->f.dir);
	snprintf(errp, sizeof(errp), "%s/analyze.err", c->f.dir);
	{
		char *argv[] = { TRACER, "analyze", isr[0], isr[1], "--format", "json", "-o", out, NULL };

		th_expect_exit(th_run(argv, errp), 0, errp);
	}
	c->report = json_load_file(out, 0, &jerr);
	if (!c->report)
		fail_msg("%s is not JSON: %s", out, jerr.text);
	recs = json_object_get(c->report, "recordings");
	assert_int_equal(json_array_size(recs), 2);
	json_array_foreach(recs, i, rec) {
		json_t *report = json_object_get(rec, "report");

		assert_string_equal(json_string_value(json_object_get(rec, "file")), isr[i]);
		/* one rank's calls in each, and nothing to line up in it alone */
		assert_int_equal(th_count(report, "nccl_call"),
				 iters + 4 * (iters / NCCL_PLAN_P2P_EVERY) + NCCL_PLAN_TAIL_COLLECTIVES);
		assert_int_equal(th_count(report, "nccl_comm"), 1);
		assert_int_equal(json_array_size(json_object_get(report, "ranks")), 0);
	}
	rows = json_object_get(c->report, "ranks");
	assert_int_equal(json_array_size(rows), 2);
	json_array_foreach(rows, i, row) {
		assert_int_equal((long)th_num(row, "rank"), (long)i);
		assert_int_equal((long)th_num(row, "recording"), (long)i);
		assert_string_equal(json_string_value(json_object_get(row, "rank_from")), "communicator");
		assert_int_equal((long)th_num(row, "world_size"), 2);
		check_rank_calls(row, iters);
	}
	coll = json_object_get(c->report, "collectives");
	assert_int_equal(json_array_size(json_object_get(coll, "clocks")), 2);
	assert_false(json_is_true(json_object_get(coll, "unaligned")));
	unc = th_num(coll, "alignment_uncertainty_s");
	assert_int_equal(json_array_size(json_object_get(coll, "communicators")), 1);
	assert_int_equal((long)th_num(json_array_get(json_object_get(coll, "communicators"), 0), "collectives"),
			 iters + NCCL_PLAN_TAIL_COLLECTIVES);
	ev = straggler(c->report);
	assert_non_null(ev);
	reason = json_object_get(ev, "reason");
	print_message("two recordings (one per rank) aligned within %.1f us; rank %d late at %d collectives, %.3f s; "
		      "blocked %.0f%% vs %.0f%%\n", unc * 1e6, (int)th_num(ev, "rank"), (int)th_num(ev, "late_arrivals"),
		      th_num(ev, "first_rank_wait_s"), 100 * th_num(reason, "share"), 100 * th_num(reason, "others_share"));
	assert_true(unc < 1e-3);	/* one host: the clock pairs' windows only */
	assert_int_equal((long)th_num(ev, "rank"), 1);
	assert_string_equal(json_string_value(json_object_get(ev, "recording")), isr[1]);
	assert_true((long)th_num(ev, "late_arrivals") >= iters / NCCL_PLAN_LATE_EVERY);
	assert_true(th_num(ev, "first_rank_wait_s") >= 0.8 * (iters / NCCL_PLAN_LATE_EVERY) * NCCL_PLAN_SLEEP_MS / 1e3);
	assert_string_equal(json_string_value(json_object_get(reason, "category")), "blocked");
	/* analyze DIR: the same two recordings, by name, the uncertainty printed */
	snprintf(md_out, sizeof(md_out), "%s/ranks.md", c->f.dir);
	{
		char *argv[] = { TRACER, "analyze", dir, "-o", md_out, NULL };

		th_expect_exit(th_run(argv, errp), 0, errp);
	}
	md = th_slurp(md_out);
	assert_non_null(md);
	assert_non_null(strstr(md, "# inferscope-bpf report: 2 recordings"));
	at = strstr(md, "2 recordings lined up on CLOCK_REALTIME (their clock pairs): uncertainty ");
	assert_non_null(at);
	assert_true(fabs(strtod(at + strlen("2 recordings lined up on CLOCK_REALTIME (their clock pairs): uncertainty "),
			       NULL) - unc * 1e6) < 0.1);
	assert_true(strstr(md, "# Recording 1 of 2: ") < strstr(md, "# Recording 2 of 2: "));
	assert_non_null(strstr(md, "rank1.isr"));
	assert_non_null(strstr(md, "`nccl_straggler`"));
	free(md);
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
		cmocka_unit_test_setup_teardown(test_one_recording_per_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrapped_job_loses_no_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forked_ranks_line_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_outlives_the_recorder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_nccl, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
