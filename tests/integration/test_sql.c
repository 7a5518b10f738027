// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `export --sqlite`: three real recordings of known shape into one database
 * (the NVTX training loop, the same loop without annotations, and Python
 * calling the stand-in libcuda from known lines with --gil), then the ten
 * queries of docs/sql.md, run as written, answer what the workloads did,
 * exactly where the count is known and to the nanosecond where the JSON
 * report has the same sum.
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <sqlite3.h>
#include "harness.h"

#define STEPS_WORKLOAD "build/tests/workloads/steps"
#define CUDA_PY_WORKLOAD "tests/workloads/py_cuda.py"
#define SQL_DOC "docs/sql.md"
#define NQUERIES 10

struct ctx {
	char dir[256];
	char isr[3][512];
	char db[512], err[512], out[512];
	json_t *plan;		/* py_cuda.py's */
	sqlite3 *sql;
	char *queries[NQUERIES];
};

static struct ctx *g;

/* The steps workload (mode nvtx or plain), recorded with -p from its
 * first step to its exit. */
static void record_steps(const char *mode, const char *isr)
{
	char go[600], ready[600], pidstr[16];
	char *wl[] = { STEPS_WORKLOAD, (char *)mode, "20", "12", go, NULL };
	char *rec[] = { TRACER, "record", "-q", "-o", (char *)isr, "-p", pidstr, "--ready-file", ready, NULL };
	pid_t w, t;
	int status;
	FILE *f;

	snprintf(go, sizeof(go), "%s/go-%s", g->dir, mode);
	snprintf(ready, sizeof(ready), "%s/ready-%s", g->dir, mode);
	w = th_spawn(wl, NULL, NULL);
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	t = th_spawn(rec, NULL, g->err);
	assert_true(th_wait_file(ready, 30));
	f = fopen(go, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(waitpid(w, &status, 0), w);
	assert_int_equal(waitpid(t, &status, 0), t);
	th_expect_exit(status, 0, g->err);
}

/* The ```sql blocks of docs/sql.md, in order. */
static void read_queries(void)
{
	char *doc = th_slurp(SQL_DOC), *p;
	size_t n = 0;

	assert_non_null(doc);
	for (p = doc; n < NQUERIES && (p = strstr(p, "```sql\n"));) {
		char *end = strstr(p + 7, "```");

		assert_non_null(end);
		g->queries[n++] = strndup(p + 7, (size_t)(end - p - 7));
		p = end + 3;
	}
	free(doc);
	assert_int_equal(n, NQUERIES);
}

static int setup_group(void **state)
{
	char *py[] = { TRACER, "record", "-q", "--gil", "--cuda-lib", STANDIN_LIBCUDA, "--budget", "off", "-o", NULL,
		       "--", "/usr/bin/python3", CUDA_PY_WORKLOAD, STANDIN_LIBCUDA, NULL };
	char *exp[] = { TRACER, "export", NULL, NULL, NULL, "--sqlite", NULL, NULL };
	json_error_t je;
	char *out, dir[256];

	(void)state;

	g = calloc(1, sizeof(*g));
	th_tmpdir(dir, sizeof(dir));
	memcpy(g->dir, dir, sizeof(dir));
	for (int i = 0; i < 3; i++)
		snprintf(g->isr[i], sizeof(g->isr[i]), "%s/rec%d.isr", dir, i + 1);
	snprintf(g->db, sizeof(g->db), "%s/fleet.db", dir);
	snprintf(g->err, sizeof(g->err), "%s/tracer.err", dir);
	snprintf(g->out, sizeof(g->out), "%s/out.txt", dir);
	record_steps("nvtx", g->isr[0]);
	record_steps("plain", g->isr[1]);
	py[9] = g->isr[2];
	th_expect_exit(th_run_to(py, g->out, g->err), 0, g->err);
	out = th_slurp(g->out);
	g->plan = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, &je) : NULL;
	free(out);
	assert_non_null(g->plan);
	/* two recordings in one run, the third added to the same database */
	exp[2] = g->isr[0];
	exp[3] = g->isr[1];
	exp[4] = "--sqlite";
	exp[5] = g->db;
	exp[6] = NULL;
	th_expect_exit(th_run(exp, g->err), 0, g->err);
	exp[2] = g->isr[2];
	exp[3] = "--sqlite";
	exp[4] = g->db;
	exp[5] = NULL;
	th_expect_exit(th_run(exp, g->err), 0, g->err);
	assert_int_equal(sqlite3_open_v2(g->db, &g->sql, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	read_queries();
	return 0;
}

static int teardown_group(void **state)
{
	(void)state;
	for (int i = 0; i < NQUERIES; i++)
		free(g->queries[i]);
	sqlite3_close(g->sql);
	json_decref(g->plan);
	th_rmrf(g->dir);
	free(g);
	return 0;
}

/* The rows of a query, as text cells: rows[r * ncols + c]. */
struct result {
	char **cells;
	size_t nrows, ncols;
};

static void run_query(const char *sql, struct result *res)
{
	sqlite3_stmt *st;
	int rc;

	memset(res, 0, sizeof(*res));
	if (sqlite3_prepare_v2(g->sql, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s\n%s", sqlite3_errmsg(g->sql), sql);
	res->ncols = (size_t)sqlite3_column_count(st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		res->cells = realloc(res->cells, (res->nrows + 1) * res->ncols * sizeof(char *));
		assert_non_null(res->cells);
		for (size_t c = 0; c < res->ncols; c++) {
			const unsigned char *t = sqlite3_column_text(st, (int)c);

			res->cells[res->nrows * res->ncols + c] = strdup(t ? (const char *)t : "");
		}
		res->nrows++;
	}
	if (rc != SQLITE_DONE)
		fail_msg("%s\n%s", sqlite3_errmsg(g->sql), sql);
	sqlite3_finalize(st);
}

static void free_result(struct result *res)
{
	for (size_t i = 0; i < res->nrows * res->ncols; i++)
		free(res->cells[i]);
	free(res->cells);
}

static const char *cell(const struct result *res, size_t r, size_t c)
{
	assert_true(r < res->nrows && c < res->ncols);
	return res->cells[r * res->ncols + c];
}

static long long one_int(const char *sql)
{
	struct result res;
	long long v;

	run_query(sql, &res);
	assert_int_equal(res.nrows, 1);
	v = atoll(cell(&res, 0, 0));
	free_result(&res);
	return v;
}

/* Every documented query runs as written. */
static void test_documented_queries_run(void **state)
{
	(void)state;
	for (int i = 0; i < NQUERIES; i++) {
		struct result res;

		run_query(g->queries[i], &res);
		print_message("query %d: %zu rows\n", i + 1, res.nrows);
		free_result(&res);
	}
}

/* 1: launches and synchronizations per recording, and the synchronization
 * time equal to the JSON report's, each recording in its own id. */
static void test_q1_calls_per_recording(void **state)
{
	static const long long launches[3] = { 160, 160, 640 }, syncs[3] = { 20, 20, 200 };
	struct result res;

	(void)state;
	run_query(g->queries[0], &res);
	assert_int_equal(res.nrows, 3);
	for (size_t r = 0; r < 3; r++) {
		json_t *rep = th_report(g->isr[r]);
		json_t *fn = json_object_get(json_object_get(json_object_get(rep, "cuda"), "calls"),
					     "cuStreamSynchronize");
		char q[256];
		long long sum_ns;

		assert_int_equal(atoll(cell(&res, r, 0)), (long long)r + 1);
		assert_string_equal(cell(&res, r, 1), g->isr[r]);
		assert_int_equal(atoll(cell(&res, r, 2)), launches[r]);
		assert_int_equal(atoll(cell(&res, r, 3)), syncs[r]);
		snprintf(q, sizeof(q), "SELECT sum(duration_ns) FROM api_calls WHERE recording = %zu AND "
			 "function = 'cuStreamSynchronize'", r + 1);
		sum_ns = one_int(q);
		assert_int_equal(json_integer_value(json_object_get(fn, "count")), syncs[r]);
		if (fabs(sum_ns / 1e9 - json_number_value(json_object_get(fn, "total_s"))) > 1e-9)
			fail_msg("recording %zu: %lld ns of synchronization in SQL, %.9f s in the report", r + 1, sum_ns,
				 json_number_value(json_object_get(fn, "total_s")));
		json_decref(rep);
	}
	free_result(&res);
}

/* 2 and 3: the planted step is the slowest of both loops, and its extra
 * time is the 80 ms it was blocked. */
static void test_q2_q3_slow_step(void **state)
{
	struct result res;
	double blocked;

	(void)state;
	run_query(g->queries[1], &res);
	assert_true(res.nrows >= 2);
	for (size_t r = 0; r < 2; r++) {
		assert_int_equal(atoll(cell(&res, r, 1)), 12);
		assert_true(atof(cell(&res, r, 3)) > 2.0);
	}
	free_result(&res);
	run_query(g->queries[2], &res);
	assert_int_equal(res.nrows, 1);
	assert_int_equal(atoll(cell(&res, 0, 0)), 12);
	blocked = atof(cell(&res, 0, 4));
	if (blocked < 70 || blocked > 95)
		fail_msg("the slow step was blocked %.2f ms more than the average step, expected about 80", blocked);
	free_result(&res);
	assert_int_equal(one_int("SELECT count(*) FROM steps WHERE recording = 1 AND source = 'nvtx'"), 20);
	assert_int_equal(one_int("SELECT count(*) FROM steps WHERE recording = 2 AND source = 'inferred'"), 20);
	assert_int_equal(one_int("SELECT count(*) FROM nvtx WHERE recording = 1 AND kind = 'push'"), 60);
	assert_int_equal(one_int("SELECT count(*) FROM nvtx WHERE recording = 1 AND kind = 'pop'"), 60);
}

/* 4: every step of the annotated loop launched its 8 kernels. */
static void test_q4_launches_per_step(void **state)
{
	struct result res;

	(void)state;
	run_query(g->queries[3], &res);
	assert_int_equal(res.nrows, 20);
	for (size_t r = 0; r < 20; r++) {
		assert_int_equal(atoll(cell(&res, r, 0)), (long long)r);
		assert_string_equal(cell(&res, r, 1), "kernel@0x1000");
		assert_int_equal(atoll(cell(&res, r, 2)), 8);
	}
	free_result(&res);
}

/* 7 and 8: the Python line of every synchronization, and GIL waits
 * attributed to Python lines. */
static void test_q7_q8_python_lines(void **state)
{
	struct result res;
	char want[64];
	const char *site;

	(void)state;
	run_query(g->queries[7], &res);
	assert_int_equal(res.nrows, 1);
	snprintf(want, sizeof(want), "py_cuda.py:%lld sync_here",
		 (long long)json_integer_value(json_object_get(g->plan, "sync_line")));
	site = cell(&res, 0, 0);
	if (strlen(site) < strlen(want) || strcmp(site + strlen(site) - strlen(want), want))
		fail_msg("synchronizations attributed to %s, expected %s", site, want);
	assert_int_equal(atoll(cell(&res, 0, 1)), json_integer_value(json_object_get(g->plan, "syncs")));
	assert_true(atof(cell(&res, 0, 2)) >= 200 * 5.0);	/* the stand-in blocks 5 ms each */
	free_result(&res);
	/* ctypes releases the GIL around each foreign call: one wait per call
	 * at least, some attributed to a line */
	assert_true(one_int("SELECT count(*) FROM gil_waits WHERE recording = 3") >= 840);
	run_query(g->queries[6], &res);
	assert_true(res.nrows >= 1);
	free_result(&res);
}

/* 9: a thread's states cover its whole window, without overlap. */
static void test_q9_states_cover_the_thread(void **state)
{
	struct result res;
	long long window, spans;

	(void)state;
	run_query(g->queries[8], &res);
	assert_true(res.nrows >= 3);
	free_result(&res);
	window = one_int("SELECT t.end_ns - t.start_ns FROM threads t JOIN steps s ON s.recording = t.recording AND "
			 "s.tid = t.tid AND s.step = 0 WHERE t.recording = 1");
	spans = one_int("SELECT sum(x.duration_ns) FROM sched_spans x JOIN steps s ON s.recording = x.recording AND "
			"s.tid = x.tid AND s.step = 0 WHERE x.recording = 1");
	if (llabs(window - spans) > window / 100)
		fail_msg("the thread's spans sum to %lld ns, its window is %lld ns", spans, window);
}

/* 10: the findings of the recordings (the two loops are host-bound). */
static void test_q10_findings(void **state)
{
	struct result res;

	(void)state;
	run_query(g->queries[9], &res);
	assert_true(res.nrows >= 1);
	free_result(&res);
	assert_true(one_int("SELECT count(DISTINCT recording) FROM findings") >= 2);
	assert_int_equal(one_int("SELECT count(*) FROM recordings"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_documented_queries_run),
		cmocka_unit_test(test_q1_calls_per_recording),
		cmocka_unit_test(test_q2_q3_slow_step),
		cmocka_unit_test(test_q4_launches_per_step),
		cmocka_unit_test(test_q7_q8_python_lines),
		cmocka_unit_test(test_q9_states_cover_the_thread),
		cmocka_unit_test(test_q10_findings),
	};

	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
