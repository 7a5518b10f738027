// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sampled Python stacks, for real: tests/workloads/py_hot.py spends 60%,
 * 30% and 10% of its CPU time in a(), b() and c() (by its own thread CPU
 * clock). The report must give those functions those inclusive shares
 * (+-10 points), put the most samples of a() on its hot loop's line, and
 * say that the process was sampled; with Debian's python3 (libpython in the
 * executable) launched with `--`, and with an interpreter on Debian's
 * shared libpython3.X.so (tests/workloads/pyembed.c) attached with -p. A
 * layout made wrong on purpose (INFERSCOPE_TEST_PY_SKEW) must be caught at
 * attach: a warning, the status in the report, and not one stack. CUDA
 * calls from known lines of tests/workloads/py_cuda.py (ctypes on the
 * stand-in libcuda) must be attributed to those lines: every
 * synchronization with its time, every 32nd launch on each CPU
 * (--py-launch-every 32; --budget off: every launch probed).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "proc.h"

#define PYEMBED "build/tests/workloads/pyembed"
#define HOT_WORKLOAD "tests/workloads/py_hot.py"
#define CUDA_PY_WORKLOAD "tests/workloads/py_cuda.py"

struct ctx {
	struct th_files f;
	char out[512];
	pid_t spawned;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	snprintf(c->out, sizeof(c->out), "%s/workload.out", c->f.dir);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	unsetenv("INFERSCOPE_TEST_PY_SKEW");
	th_reap(c->spawned);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

/* The line of a()'s hot loop, from the plan the workload printed. */
static long hot_line(const char *text)
{
	const char *brace = text ? strchr(text, '{') : NULL;
	json_error_t jerr;
	json_t *plan = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
	long line;

	assert_non_null(plan);
	line = (long)json_integer_value(json_object_get(plan, "hot_line"));
	json_decref(plan);
	assert_true(line > 0);
	return line;
}

/* The count of kind in recording.overhead.spent.by_kind. */
static long long th_count_of(json_t *by_kind, const char *kind)
{
	json_t *k = json_object_get(by_kind, kind);

	assert_non_null(k);
	return (long long)json_integer_value(json_object_get(k, "count"));
}

static double inclusive_pct(json_t *thread, const char *function)
{
	json_t *funcs = json_object_get(thread, "py_functions"), *f;
	size_t i;

	json_array_foreach(funcs, i, f)
		if (strcmp(json_string_value(json_object_get(f, "function")), function) == 0)
			return json_number_value(json_object_get(f, "inclusive_pct"));
	return -1;
}

static json_t *python_process(json_t *report)
{
	json_t *procs = json_object_get(json_object_get(report, "python"), "processes");

	assert_int_equal(json_array_size(procs), 1);
	return json_array_get(procs, 0);
}

/* What a user checks: a, b and c in their planted shares, the hottest
 * stack inside a() on the hot line, nothing dropped. */
static void check_shares(const char *isr, const char *comm, long line)
{
	static const struct {
		const char *fn;
		double pct;
	} plan[] = { { "a", 60 }, { "b", 30 }, { "c", 10 } };
	json_t *r = th_report(isr), *t, *top;
	char want[64];
	const char *leaf;
	size_t i;

	t = th_thread(r, comm);
	assert_non_null(t);
	assert_string_equal(json_string_value(json_object_get(python_process(r), "stacks")), "sampling");
	print_message("%s: %lld samples in %.2f s on CPU\n", comm, (long long)th_num(t, "py_samples"),
		      th_num(t, "on_cpu_s"));
	/* 99 Hz over ~4 s on CPU: at least half the samples a perfect clock gives */
	assert_true(th_num(t, "py_samples") >= 0.5 * 99 * 4);
	for (i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		double got = inclusive_pct(t, plan[i].fn);

		print_message("  %s: %.1f%% inclusive (planted %.0f%%)\n", plan[i].fn, got, plan[i].pct);
		if (got < plan[i].pct - 10 || got > plan[i].pct + 10) {
			json_t *f;
			size_t k;

			print_error("%s(): %.1f%% of the samples, planted %.0f%% (+-10 points); the thread's functions:\n",
				    plan[i].fn, got, plan[i].pct);
			json_array_foreach(json_object_get(t, "py_functions"), k, f) {
				char *one = json_dumps(f, JSON_COMPACT);

				print_error("  %s\n", one ? one : "?");
				free(one);
			}
			fail();
		}
	}
	top = json_array_get(json_object_get(t, "py_stacks"), 0);
	leaf = json_string_value(json_array_get(json_object_get(top, "frames"), 0));
	snprintf(want, sizeof(want), "py_hot.py:%ld a", line);
	print_message("  hottest stack: %s (want ...%s)\n", leaf, want);
	assert_non_null(leaf);
	assert_true(strlen(leaf) >= strlen(want) && strcmp(leaf + strlen(leaf) - strlen(want), want) == 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(r, "recording"),
									       "drops"), "py_stacks")), 0);
	json_decref(r);
}

static void test_launched_static_python(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/usr/bin/python3", HOT_WORKLOAD, "4", NULL };
	char *out;
	long line;

	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	out = th_slurp(c->out);
	line = hot_line(out);
	free(out);
	check_shares(c->f.isr, "python3", line);
}

/* More interpreters, when the host has them: INFERSCOPE_TEST_PYTHONS lists
 * executables (3.10-3.13, any build), each checked as Debian's python3 is.
 * Unset: only Debian's builds are tested (CI). */
static void test_more_interpreters(void **state)
{
	struct ctx *c = *state;
	const char *list = getenv("INFERSCOPE_TEST_PYTHONS");
	char *copy, *py, *save = NULL;
	int tested = 0;

	if (!list || !*list) {
		print_message("INFERSCOPE_TEST_PYTHONS not set: no other interpreter to test\n");
		return;
	}
	copy = strdup(list);
	assert_non_null(copy);
	for (py = strtok_r(copy, " ", &save); py; py = strtok_r(NULL, " ", &save)) {
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", py, HOT_WORKLOAD, "4", NULL };
		const char *base = strrchr(py, '/') ? strrchr(py, '/') + 1 : py;
		char comm[16];
		char *out;
		long line;

		print_message("%s\n", py);
		th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
		out = th_slurp(c->out);
		line = hot_line(out);
		free(out);
		snprintf(comm, sizeof(comm), "%.15s", base);
		check_shares(c->f.isr, comm, line);
		tested++;
	}
	free(copy);
	assert_true(tested > 0);
}

/* True once pid maps a libpython file. */
static void test_attached_shared_libpython(void **state)
{
	struct ctx *c = *state;
	char go[600], pid_s[16], buf[4096];
	char *wargv[] = { PYEMBED, HOT_WORKLOAD, "4", go, NULL };
	char *targv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pid_s, "--ready-file", go, NULL };
	ssize_t k, len = 0;
	double deadline;
	int fd;

	snprintf(go, sizeof(go), "%s/go", c->f.dir);
	c->spawned = th_spawn(wargv, &fd, NULL);
	assert_true(c->spawned > 0);
	deadline = th_now() + 5;
	while (!proc_maps__has((__u32)c->spawned, "/libpython3.") && th_now() < deadline)
		usleep(10000);
	assert_true(proc_maps__has((__u32)c->spawned, "/libpython3."));
	snprintf(pid_s, sizeof(pid_s), "%d", (int)c->spawned);
	th_expect_exit(th_run(targv, c->f.err), 0, c->f.err);
	while (len < (ssize_t)sizeof(buf) - 1 && (k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += k;
	buf[len] = 0;
	close(fd);
	check_shares(c->f.isr, "pyembed", hot_line(buf));
}

/* A thread-id offset 8 bytes off: caught at attach, said on stderr and in
 * the report, and no stack at all rather than wrong ones. */
static void test_wrong_layout_detected(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/usr/bin/python3", HOT_WORKLOAD, "1", NULL };
	json_t *r, *p, *t;
	char *err;
	size_t i;

	setenv("INFERSCOPE_TEST_PY_SKEW", "8", 1);
	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	unsetenv("INFERSCOPE_TEST_PY_SKEW");
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "its Python stacks are not captured"));
	free(err);
	r = th_report(c->f.isr);
	p = python_process(r);
	assert_string_equal(json_string_value(json_object_get(p, "stacks")), "layout_mismatch");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "python"), "sampled_stacks")), 0);
	json_array_foreach(json_object_get(r, "threads"), i, t)
		assert_int_equal(th_num(t, "py_samples"), 0);
	assert_int_equal(th_count(r, "py_stack"), 0);
	json_decref(r);
}

static bool ends_with(const char *s, const char *tail)
{
	return s && strlen(s) >= strlen(tail) && strcmp(s + strlen(s) - strlen(tail), tail) == 0;
}

static void test_cuda_call_sites(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "--cuda-lib", STANDIN_LIBCUDA, "--py-launch-every", "32",
			 "--budget", "off", "-o", c->f.isr, "--", "/usr/bin/python3", CUDA_PY_WORKLOAD,
			 STANDIN_LIBCUDA, NULL };
	char md[600];
	char *md_argv[] = { TRACER, "analyze", c->f.isr, NULL };
	json_t *r, *plan, *py, *sync, *launch;
	long long syncs, launches, per_cpu;
	char want[64];
	json_error_t jerr;
	const char *obs;
	char *out;

	snprintf(md, sizeof(md), "%s/report.md", c->f.dir);

	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	out = th_slurp(c->out);
	plan = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
	free(out);
	assert_non_null(plan);
	syncs = json_integer_value(json_object_get(plan, "syncs"));
	launches = json_integer_value(json_object_get(plan, "launches"));
	r = th_report(c->f.isr);
	py = json_object_get(r, "python");
	sync = json_array_get(json_object_get(py, "sync_sites"), 0);
	launch = json_array_get(json_object_get(py, "launch_sites"), 0);
	assert_int_equal(json_array_size(json_object_get(py, "sync_sites")), 1);
	assert_int_equal(json_array_size(json_object_get(py, "launch_sites")), 1);
	print_message("sync site %s: %lld calls, %.3f s; launch site %s: %lld samples\n",
		      json_string_value(json_object_get(sync, "site")),
		      (long long)json_integer_value(json_object_get(sync, "calls")),
		      json_number_value(json_object_get(sync, "time_s")),
		      json_string_value(json_object_get(launch, "site")),
		      (long long)json_integer_value(json_object_get(launch, "samples")));
	snprintf(want, sizeof(want), "py_cuda.py:%lld sync_here",
		 (long long)json_integer_value(json_object_get(plan, "sync_line")));
	assert_true(ends_with(json_string_value(json_object_get(sync, "site")), want));
	assert_int_equal(json_integer_value(json_object_get(sync, "calls")), syncs);
	/* the stand-in blocks 5 ms in each */
	assert_true(json_number_value(json_object_get(sync, "time_s")) >= syncs * 0.005);
	assert_true(json_number_value(json_object_get(sync, "time_s")) < syncs * 0.005 + 1.0);
	snprintf(want, sizeof(want), "py_cuda.py:%lld launch_here",
		 (long long)json_integer_value(json_object_get(plan, "launch_line")));
	assert_true(ends_with(json_string_value(json_object_get(launch, "site")), want));
	/* every 32nd launch on each CPU: a CPU's remainder is not captured */
	per_cpu = json_integer_value(json_object_get(launch, "samples"));
	assert_true(per_cpu <= launches / 32);
	assert_true(per_cpu >= launches / 32 - sysconf(_SC_NPROCESSORS_CONF));
	/* the Markdown report names the line in its table of sync sites */
	snprintf(want, sizeof(want), "py_cuda.py:%lld sync_here",
		 (long long)json_integer_value(json_object_get(plan, "sync_line")));
	th_expect_exit(th_run_to(md_argv, md, c->f.err), 0, c->f.err);
	out = th_slurp(md);
	assert_non_null(out);
	obs = strstr(out, "Top Python call sites of CUDA synchronization time:");
	assert_non_null(obs);
	assert_non_null(strstr(obs, want));
	free(out);
	json_decref(plan);
	json_decref(r);
}

/* Charged to the account of what tracing cost (the recording's
 * recording.overhead): every probe hit at the cost the recorder measured
 * (640 launches at one hit each, 200 synchronizations at an entry and a
 * return), every Python stack captured at what its BPF program measured
 * (840 at the calls: every launch, and every synchronization, as each
 * lasts 5 ms; and the sampled ones), all on the one thread that makes the
 * calls; with --no-py-stacks no stack and no sampler tick is charged. */
static void test_stack_captures_charged(void **state)
{
	struct ctx *c = *state;
	char *with[] = { TRACER, "record", "--cuda-lib", STANDIN_LIBCUDA, "--py-launch-every", "1", "--budget", "50",
			 "-o", c->f.isr, "--", "/usr/bin/python3", CUDA_PY_WORKLOAD, STANDIN_LIBCUDA, NULL };
	char *without[] = { TRACER, "record", "--cuda-lib", STANDIN_LIBCUDA, "--no-py-stacks", "--budget", "50",
			    "-o", c->f.isr, "--", "/usr/bin/python3", CUDA_PY_WORKLOAD, STANDIN_LIBCUDA, NULL };
	char *const *runs[] = { with, without };

	for (int i = 0; i < 2; i++) {
		json_t *r, *o, *by, *cost;
		double hit, pair;

		th_expect_exit(th_run_to(runs[i], c->out, c->f.err), 0, c->f.err);
		r = th_report(c->f.isr);
		assert_non_null(r);
		o = json_object_get(json_object_get(r, "recording"), "overhead");
		assert_true(json_is_object(o));
		cost = json_object_get(o, "cost_ns");
		hit = th_num(cost, "probe_hit");
		pair = th_num(cost, "probe_pair");
		assert_true(hit > 0 && pair > 0);
		by = json_object_get(json_object_get(o, "spent"), "by_kind");
		assert_non_null(by);
		print_message("%s: hits %lld (%.3f ms), pairs' hits %lld, stacks %lld (%.3f ms), sampler ticks %lld\n",
			      i ? "no stacks" : "a stack at every launch", th_count_of(by, "hot_probes"),
			      1e3 * th_num(json_object_get(by, "hot_probes"), "seconds"), th_count_of(by, "probes"),
			      th_count_of(by, "py_stacks"), 1e3 * th_num(json_object_get(by, "py_stacks"), "seconds"),
			      th_count_of(by, "sampler"));
		assert_int_equal(th_count_of(by, "hot_probes"), 640);
		assert_int_equal(th_count_of(by, "probes"), 400);
		assert_true(fabs(th_num(json_object_get(by, "hot_probes"), "seconds") - 640 * hit / 1e9) < 1e-6);
		assert_true(fabs(th_num(json_object_get(by, "probes"), "seconds") - 200 * pair / 1e9) < 1e-6);
		if (i == 0) {
			/* capture_ns saturates at 65535 ns */
			assert_true(th_count_of(by, "py_stacks") >= 840);
			assert_true(th_num(json_object_get(by, "py_stacks"), "seconds") >= 840 * 0.3e-6);
			assert_true(th_num(json_object_get(by, "py_stacks"), "seconds") <=
				    th_count_of(by, "py_stacks") * 65.535e-6);
		} else {
			assert_int_equal(th_count_of(by, "py_stacks"), 0);
			assert_int_equal(th_count_of(by, "sampler"), 0);
		}
		json_decref(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_launched_static_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached_shared_libpython, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_layout_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cuda_call_sites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_captures_charged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_interpreters, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
