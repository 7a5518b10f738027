// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The findings of real recordings (real BPF, the stand-in libcuda, real
 * Python through ctypes and the C workloads): each workload plants one
 * bottleneck, and the JSON report's findings must name it — with its cost
 * within 20% where the plant has a time — and a healthy workload must get
 * no finding.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"

#define PLANTED "tests/workloads/py_planted.py"

struct ctx {
	struct th_files f;
	json_t *report;
	pid_t spawned, tracer;
	char cgroup[1024];	/* a memory cgroup the test made: removed by teardown */
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

	th_reap(c->spawned);
	th_reap(c->tracer);
	if (c->cgroup[0] && rmdir(c->cgroup))
		print_error("cannot remove the test's cgroup %s: %s\n", c->cgroup, strerror(errno));
	json_decref(c->report);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static bool have_python(void)
{
	return access("/usr/bin/python3", X_OK) == 0;
}

/* Records `python3 py_planted.py LIBCUDA mode` (with extra recorder
 * options) and keeps the report. */
static void record_planted(struct ctx *c, const char *mode, const char *opt)
{
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--cuda-lib", STANDIN_LIBCUDA, (char *)opt,
			 "--", "/usr/bin/python3", PLANTED, STANDIN_LIBCUDA, (char *)mode, NULL };

	if (!opt) {
		memmove(&argv[7], &argv[8], 6 * sizeof(*argv));
		argv[13] = NULL;
	}
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
}

static void print_findings(json_t *report)
{
	json_t *fs = json_object_get(report, "findings"), *f;
	size_t i;

	json_array_foreach(fs, i, f)
		print_message("  %s %.3f s: %s\n", json_string_value(json_object_get(f, "rule")),
			      json_real_value(json_object_get(f, "cost_s")),
			      json_string_value(json_object_get(f, "summary")));
}

static json_t *finding(json_t *report, const char *rule)
{
	json_t *fs = json_object_get(report, "findings"), *f;
	size_t i;

	json_array_foreach(fs, i, f)
		if (strcmp(json_string_value(json_object_get(f, "rule")), rule) == 0)
			return f;
	print_findings(report);
	fail_msg("no %s finding", rule);
	return NULL;
}

static void expect_cost(json_t *f, double planted, double tolerance)
{
	double cost = json_real_value(json_object_get(f, "cost_s"));

	print_message("%s: cost %.3f s, planted %.3f s\n", json_string_value(json_object_get(f, "rule")), cost,
		       planted);
	assert_true(fabs(cost - planted) <= tolerance * planted);
}

static void expect_in_summary(json_t *f, const char *needle)
{
	const char *s = json_string_value(json_object_get(f, "summary"));

	if (!strstr(s, needle))
		fail_msg("\"%s\" not in \"%s\"", needle, s);
}

#define PIPELINE "tests/workloads/py_pipeline.py"

/* Records `python3 py_pipeline.py LIBCUDA mode STEPS`; the report in
 * c->report, what the workload measured (its JSON line) returned. */
static json_t *record_pipeline(struct ctx *c, const char *mode, const char *steps)
{
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/usr/bin/python3", PIPELINE, STANDIN_LIBCUDA,
			 (char *)mode, (char *)steps, NULL };
	char out[600], *text;
	json_error_t jerr;
	json_t *m;

	snprintf(out, sizeof(out), "%s/pipeline.out", c->f.dir);
	th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	text = th_slurp(out);
	assert_non_null(text);
	m = json_loads(text, 0, &jerr);
	if (!m)
		fail_msg("the workload printed no JSON (%s): %s", jerr.text, text);
	free(text);
	c->report = th_report(c->f.isr);
	assert_non_null(c->report);
	return m;
}

/* The pids of the link's members, as a set test: whether every pid of
 * want (a JSON array) is among them and none other. */
static bool members_are(json_t *link, json_t *want)
{
	json_t *m, *p;
	size_t i, j, found = 0;

	json_array_foreach(json_object_get(link, "members"), i, m) {
		bool in = false;

		json_array_foreach(want, j, p)
			in |= json_integer_value(json_object_get(m, "pid")) == json_integer_value(p);
		if (!in)
			return false;
	}
	json_array_foreach(want, j, p) {
		json_array_foreach(json_object_get(link, "members"), i, m)
			if (json_integer_value(json_object_get(m, "pid")) == json_integer_value(p)) {
				found++;
				break;
			}
	}
	return found == json_array_size(want);
}

/* No finding of rule at all. */
static void expect_no_rule(json_t *report, const char *rule)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(report, "findings"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "rule")), rule)) {
			print_findings(report);
			fail_msg("a %s finding", rule);
		}
}

/* No finding of rule (NULL: of any rule) about any of the processes pids
 * (a JSON array). */
static void expect_no_finding_of(json_t *report, const char *rule, json_t *pids)
{
	json_t *f, *p;
	size_t i, j;

	json_array_foreach(json_object_get(report, "findings"), i, f) {
		if (rule && strcmp(json_string_value(json_object_get(f, "rule")), rule))
			continue;
		json_array_foreach(pids, j, p)
			if (json_integer_value(json_object_get(f, "pid")) == json_integer_value(p)) {
				print_findings(report);
				fail_msg("a %s finding about pid %lld", rule ? rule : "", (long long)json_integer_value(p));
			}
	}
}

/* A training loop fed by 3 worker processes (multiprocessing), which make
 * its batches slower than it takes them: the first finding is input_bound,
 * its chain's last link the three workers, its cost the loop's blocked
 * time (at most what the loop measured waiting for batches, which also
 * holds its waits for a CPU once woken; at least half of it on a loaded
 * machine); no host_bound and no cpu_contention of the workers of their
 * own. */
static void test_input_bound_pipeline(void **state)
{
	struct ctx *c = *state;
	json_t *m, *f, *chain, *first;
	double waited, cost;

	if (!have_python())
		skip();
	m = record_pipeline(c, "input", "60");
	first = json_array_get(json_object_get(c->report, "findings"), 0);
	f = finding(c->report, "input_bound");
	if (first != f) {
		print_findings(c->report);
		fail_msg("input_bound is not the first finding");
	}
	waited = json_real_value(json_object_get(m, "waited"));
	cost = json_real_value(json_object_get(f, "cost_s"));
	print_message("input_bound: cost %.3f s, the loop waited %.3f s for its batches\n", cost, waited);
	assert_true(cost <= waited * 1.02 && cost >= waited * 0.5);
	assert_int_equal(json_integer_value(json_object_get(f, "tid")), json_integer_value(json_object_get(m, "tid")));
	chain = json_object_get(json_object_get(f, "evidence"), "chain");
	assert_true(members_are(json_array_get(chain, json_array_size(chain) - 1), json_object_get(m, "workers")));
	expect_in_summary(f, "py_pipeline.py:38 make_batch");
	/* the workers (and their queues' feeder threads) are this finding's */
	expect_no_finding_of(c->report, NULL, json_object_get(m, "workers"));
	expect_no_rule(c->report, "host_bound");
	json_decref(m);
}

/* The same workers, behind a relay thread of the loop's process (as
 * PyTorch's pin-memory thread is): input_bound first, two links, the relay
 * thread first; no finding of the workers' own. */
static void test_input_bound_through_a_thread(void **state)
{
	struct ctx *c = *state;
	json_t *m, *f, *chain, *relay;

	if (!have_python())
		skip();
	m = record_pipeline(c, "relay", "60");
	f = finding(c->report, "input_bound");
	if (json_array_get(json_object_get(c->report, "findings"), 0) != f) {
		print_findings(c->report);
		fail_msg("input_bound is not the first finding");
	}
	chain = json_object_get(json_object_get(f, "evidence"), "chain");
	assert_int_equal(json_array_size(chain), 2);
	relay = json_array_get(json_object_get(json_array_get(chain, 0), "members"), 0);
	assert_int_equal(json_integer_value(json_object_get(relay, "pid")), json_integer_value(json_object_get(m, "tid")));
	assert_int_not_equal(json_integer_value(json_object_get(relay, "tid")),
			     json_integer_value(json_object_get(m, "tid")));
	assert_true(members_are(json_array_get(chain, 1), json_object_get(m, "workers")));
	expect_no_finding_of(c->report, NULL, json_object_get(m, "workers"));
	json_decref(m);
}

/* The ablation: one batch made once and reused: nothing waits for input. */
static void test_input_cached_no_input_bound(void **state)
{
	struct ctx *c = *state;
	json_t *m;

	if (!have_python())
		skip();
	m = record_pipeline(c, "cached", "300");
	expect_no_rule(c->report, "input_bound");
	json_decref(m);
}

/* A loop that sleeps on a timer on the CPU a child process spins on: the
 * timer's interrupt interrupts the child to wake the loop, but the child
 * woke nobody; no finding says the loop waited for it (kernel: the wake's
 * context, seen on sched_waking's stack). */
static void test_timer_wakes_name_nobody(void **state)
{
	struct ctx *c = *state;
	json_t *f;
	size_t i;

	if (!have_python())
		skip();
	record_planted(c, "timer", NULL);
	expect_no_rule(c->report, "input_bound");
	expect_no_rule(c->report, "blocked_on_thread");
	/* it may have taken the loop's CPU (cpu_contention says so on a busy
	 * machine, truly), never have ended its waits */
	json_array_foreach(json_object_get(c->report, "findings"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "rule")), "cpu_contention") &&
		    strstr(json_string_value(json_object_get(f, "summary")), "spinner")) {
			print_findings(c->report);
			fail_msg("a finding names the spinner");
		}
}

/* A launcher that only waits for its (stand-in) GPU: no finding, and the
 * verdict that the host kept up. */
static void test_healthy_no_finding(void **state)
{
	struct ctx *c = *state;

	if (!have_python())
		skip();
	record_planted(c, "healthy", NULL);
	if (json_array_size(json_object_get(c->report, "findings"))) {
		print_findings(c->report);
		fail_msg("findings on a healthy workload");
	}
	/* and the report says why it is healthy */
	if (!strstr(json_string_value(json_object_get(c->report, "verdict")) ?: "", "the host kept up"))
		fail_msg("verdict: %s", json_string_value(json_object_get(c->report, "verdict")));
}

/* 5 x 200 ms of Python after a synchronization, before the next launch. */
static void test_sync_stall(void **state)
{
	struct ctx *c = *state;
	json_t *f;

	if (!have_python())
		skip();
	record_planted(c, "sync_stall", NULL);
	f = finding(c->report, "sync_stall");
	expect_cost(f, 1.0, 0.2);
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "synchronizations"), 5);
}

/* The launcher waits for the GIL the hog holds: found by default (the
 * scheduler's GIL waits), the hog named as the holder with its line. */
static void test_gil_contention(void **state)
{
	struct ctx *c = *state;
	json_t *f, *ev, *holders;
	const char *site;

	if (!have_python())
		skip();
	record_planted(c, "gil", NULL);
	f = finding(c->report, "gil_contention");
	expect_in_summary(f, "`launcher` waited");
	expect_in_summary(f, "held by thread");
	ev = json_object_get(f, "evidence");
	holders = json_object_get(ev, "holders");
	assert_true(json_array_size(holders) >= 1);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(holders, 0), "name")), "`hog`"));
	assert_string_equal(json_string_value(json_object_get(ev, "holder_source")), "gil_waits");
	site = json_string_value(json_object_get(ev, "holder_site"));
	assert_non_null(site);
	assert_non_null(strstr(site, "py_planted.py:"));
	assert_non_null(strstr(site, "hog"));
}

/* Copies into a bytearray are pageable; into cuMemHostAlloc memory, or a
 * bytearray registered with cuMemHostRegister_v2, not. */
static void test_pageable_copies_without_gpu(void **state)
{
	struct ctx *c = *state;
	json_t *f;

	if (!have_python())
		skip();
	record_planted(c, "pageable", NULL);
	f = finding(c->report, "pageable_memcpy");
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "copies"), 100);
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "device_to_host"), 100);
}

#define COPIES "build/tests/workloads/cuda_copies"

/* The JSON line a workload printed last, read from fd to its end. */
static json_t *workload_result(int fd)
{
	char buf[4096], *line;
	size_t n = 0;
	ssize_t got;
	json_error_t jerr;
	json_t *m;

	while (n < sizeof(buf) - 1 && (got = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = 0;
	close(fd);
	line = strrchr(buf, '{');
	m = line ? json_loads(line, 0, &jerr) : NULL;
	if (!m)
		fail_msg("the workload printed no JSON: %s", buf);
	return m;
}

/* The findings' rules in report order, for a message. */
static const char *top_rule(json_t *report)
{
	json_t *f = json_array_get(json_object_get(report, "findings"), 0);

	return f ? json_string_value(json_object_get(f, "rule")) : "none";
}

/* Attached (-p, every hot-path call traced) to a process that pinned its
 * memory before: 100 async copies from pageable memory, which the
 * stand-in stages (4 MiB at 1 GB/s: their calls block), 300 from a shared
 * anonymous mapping registered before the attach (as the driver's pinned
 * allocations show in the memory map), 100 from private memory registered
 * before (their calls return at once). Exactly the 100 are pageable, told
 * by their blocking; none is "not known"; pageable_memcpy is the first
 * finding, its cost the time inside those calls (the workload's own
 * clock) less what pinned copies take (the 10 pinned synchronous copies'
 * bandwidth, the stand-in's: nearly nothing), within 5%; and host_bound
 * does not count that time again. */
/* The pageable copies of the stand-in workload, attached with -p (and
 * budget, the --budget value; NULL: the default) after launch_s seconds of
 * launches: exactly the 100 pageable copies, their cost within 5% of the
 * calls' time by the workload's clock, not counted again by host_bound;
 * with first, the first finding (a launch phase as fast as it can goes, on
 * a loaded host, to a thread that waits for a CPU: cpu_contention may come
 * first, and rightly). The report, for more checks. */
static json_t *pageable_attached(struct ctx *c, const char *launch_s, const char *budget, bool first)
{
	char *wl[] = { COPIES, "pageable", (char *)launch_s, NULL };
	char ready[512], pidstr[32], buf[8];
	json_t *f, *ev, *m, *hb;
	int out_fd, status;
	double measured, cost;

	c->spawned = th_spawn(wl, &out_fd, NULL);
	assert_true(read(out_fd, buf, 6) == 6); /* "ready\n": everything pinned */
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", c->spawned);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready,
				 budget ? "--budget" : NULL, (char *)budget, NULL };

		c->tracer = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	kill(c->spawned, SIGUSR1);
	m = workload_result(out_fd);
	assert_int_equal(waitpid(c->spawned, &status, 0), c->spawned);
	c->spawned = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(c->tracer, &status, 0), c->tracer);
	c->tracer = 0;
	th_expect_exit(status, 0, c->f.err);
	c->report = th_report(c->f.isr);
	assert_non_null(c->report);
	f = finding(c->report, "pageable_memcpy");
	ev = json_object_get(f, "evidence");
	assert_string_equal(json_string_value(json_object_get(ev, "classification")), "pageable");
	assert_int_equal((long long)th_num(ev, "copies"), 100);
	assert_false(json_is_true(json_object_get(ev, "estimated")));
	assert_int_equal((long long)th_num(ev, "host_to_device"), 100);
	assert_int_equal((long long)th_num(ev, "by_blocking"), 100);
	assert_int_equal((long long)th_num(ev, "pinned_by_return"), 100);
	assert_int_equal((long long)th_num(ev, "not_known_copies"), 0);
	if (first && strcmp(top_rule(c->report), "pageable_memcpy")) {
		print_findings(c->report);
		fail_msg("the first finding is %s, not pageable_memcpy", top_rule(c->report));
	}
	measured = th_num(m, "pageable_s");
	cost = json_real_value(json_object_get(f, "cost_s"));
	print_message("pageable_memcpy: cost %.3f s, the calls took %.3f s by the workload's clock; %lld blocked calls "
		      "judged as their buffer's quick ones\n", cost, measured, (long long)th_num(ev, "host_stalls"));
	assert_true(fabs(cost - measured) <= 0.05 * measured);
	hb = json_object_get(c->report, "findings");
	for (size_t i = 0; i < json_array_size(hb); i++) {
		json_t *h = json_array_get(hb, i);

		if (!strcmp(json_string_value(json_object_get(h, "rule")), "host_bound"))
			fail_msg("host_bound counts the copies' time again: %s",
				 json_string_value(json_object_get(h, "summary")));
	}
	json_decref(m);
	return c->report;
}

static void test_pageable_copies_attached(void **state)
{
	pageable_attached(*state, NULL, "off", true);
}

/* The same copies after 2 s of launches as fast as the stand-in takes
 * them, with the default budget: the launches spend the hot path's budget
 * and it is switched off, but the async copies have a budget of their own,
 * which their 500 calls do not spend: every copy is seen, none estimated
 * (before, the copies were switched with the launches and not one was
 * seen on the GPU host). */
static void test_pageable_copies_past_a_launch_phase(void **state)
{
	json_t *r = pageable_attached(*state, "2", NULL, false), *sm = json_object_get(json_object_get(r, "recording"), "sampling");

	if (!json_is_true(json_object_get(sm, "sampled")))
		fail_msg("the launch phase did not spend the hot path's budget: the test tests nothing");
	assert_true(json_is_true(json_object_get(sm, "copies_apart")));
	assert_false(json_is_true(json_object_get(sm, "copies_sampled")));
}

/* A step that waits for the "GPU" in an async copy to a pageable scalar
 * (as `.item()` does: the stand-in's copy on a stall stream returns after
 * 30 ms), then a stream synchronization that finds it done, then 10 ms of
 * CPU work before the next launch: sync_stall counts each step's host
 * work after the wait (the workload's own thread CPU clock) within 5%. */
static void test_sync_stall_in_copies(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "--budget", "off", "-o", c->f.isr, "--", COPIES, "item", NULL };
	char out[600], *text;
	json_t *f, *m;
	double planted;

	snprintf(out, sizeof(out), "%s/copies.out", c->f.dir);
	th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	text = th_slurp(out);
	assert_non_null(text);
	m = json_loads(text, 0, NULL);
	if (!m)
		fail_msg("the workload printed no JSON: %s", text);
	free(text);
	c->report = th_report(c->f.isr);
	assert_non_null(c->report);
	f = finding(c->report, "sync_stall");
	planted = th_num(m, "host_after_sync_s");
	expect_cost(f, planted, 0.05);
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "copy_waits"), 20);
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "drains"), 20);
	json_decref(m);
}

/* The line of path that holds needle: "py_planted.py:LINE" into out. */
static void script_line(const char *path, const char *needle, char *out, size_t len)
{
	char *text = th_slurp(path), *at;
	int line = 1;

	assert_non_null(text);
	at = strstr(text, needle);
	assert_non_null(at);
	for (char *p = text; p < at; p++)
		line += *p == '\n';
	snprintf(out, len, "%s:%d", strrchr(path, '/') + 1, line);
	free(text);
}

/* 240 MiB allocated and never freed: held at exit, with the Python line
 * that allocated it (a stack captured at the allocation). */
static void test_memory_held_at_exit(void **state)
{
	struct ctx *c = *state;
	json_t *f, *procs, *p, *site;
	const char *named;
	char line[64];
	size_t i;
	bool seen = false;

	if (!have_python())
		skip();
	record_planted(c, "held", NULL);
	f = finding(c->report, "device_memory_leak");
	assert_int_equal((long long)th_num(json_object_get(f, "evidence"), "held_at_exit_bytes"), 240LL << 20);
	procs = json_object_get(json_object_get(c->report, "metrics"), "processes");
	json_array_foreach(procs, i, p)
		if (th_num(p, "device_memory_held_at_exit_bytes") == (double)(240LL << 20))
			seen = true;
	assert_true(seen);
	script_line(PLANTED, "cuda.cuMemAlloc_v2(ctypes.byref(ptr), 240 << 20)", line, sizeof(line));
	site = json_array_get(json_object_get(json_object_get(f, "evidence"), "sites"), 0);
	assert_int_equal((long long)th_num(site, "bytes"), 240LL << 20);
	named = json_string_value(json_object_get(site, "site"));
	if (!named || !strstr(named, line) || !strstr(named, "held"))
		fail_msg("the allocation's site is %s, not %s held()", named ? named : "unknown", line);
	expect_in_summary(f, line);
}

/* Page faults: the C workload's "toucher" writes 60,000 fresh pages. With
 * the defaults the overhead budget samples page-fault tracing (a thread
 * that only faults would pay 30-60% of its time): the finding is still
 * there, names the thread, and its count, extrapolated from a few
 * thousand faults seen in the first tenth of a second of a burst of a
 * fifth of one, lies within a factor of 2 of the truth (0.95-1.53 seen;
 * test_faults_sampled_within_the_budget holds a steady faulter to 30%);
 * with --budget off every fault is counted. */
static void test_page_fault_storm(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", WORKLOAD, "anon", "60000", NULL };
	char *full[] = { TRACER, "record", "-q", "--budget", "off", "-o", c->f.isr, "--", WORKLOAD, "anon", "60000",
			 NULL };
	json_t *f, *ev;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	f = finding(c->report, "page_fault_storm");
	expect_in_summary(f, "`toucher`");
	ev = json_object_get(f, "evidence");
	print_message("defaults: %g minor faults (estimated: %s, %g seen)\n", th_num(ev, "minor_faults"),
		      json_is_true(json_object_get(ev, "faults_estimated")) ? "yes" : "no", th_num(ev, "faults_seen"));
	if (json_is_true(json_object_get(ev, "faults_estimated")))
		assert_true(th_num(ev, "minor_faults") > 30000 && th_num(ev, "minor_faults") < 120000);
	else
		assert_true(th_num(ev, "minor_faults") >= 60000);
	json_decref(c->report);
	th_expect_exit(th_run(full, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	f = finding(c->report, "page_fault_storm");
	expect_in_summary(f, "`toucher`");
	assert_false(json_is_true(json_object_get(json_object_get(f, "evidence"), "faults_estimated")));
	assert_true(th_num(json_object_get(f, "evidence"), "minor_faults") >= 60000);
}

/* A process not traced spins on the CPU the workload's runner uses: the
 * runner waits for that CPU, and the finding names the process, by pid and
 * name (`workload`, the hog's process name). */
static void test_cpu_contention_names_the_competitor(void **state)
{
	struct ctx *c = *state;
	/* at nice -10, so that it stays the runner's main competitor on a
	 * busy host (nice and taskset exec: the pid stays the hog's); it
	 * spins until the teardown kills it, however long the recorder takes
	 * to start on a busy host */
	char *hog[] = { "nice", "-n", "-10", "taskset", "-c", "0", WORKLOAD, "hog", "600", NULL };
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "taskset", "-c", "0", WORKLOAD, "run", "2",
			 NULL };
	json_t *f, *who;
	const char *name = NULL;
	char want[64];
	bool named = false;
	size_t i;

	if (access("/usr/bin/taskset", X_OK) || access("/usr/bin/nice", X_OK))
		skip();
	c->spawned = th_spawn(hog, NULL, NULL);
	usleep(200000);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	f = finding(c->report, "cpu_contention");
	expect_in_summary(f, "`runner`");
	/* the competitor among the tasks that had the CPU (a loaded machine
	 * has others too) */
	json_array_foreach(json_object_get(json_object_get(f, "evidence"), "ran_instead"), i, who) {
		if ((pid_t)th_num(who, "pid") != c->spawned)
			continue;
		named = true;
		name = json_string_value(json_object_get(who, "name"));
	}
	if (!named)
		print_findings(c->report);
	assert_true(named);
	snprintf(want, sizeof(want), "pid %d `workload`", (int)c->spawned);
	print_message("competitor: %s\n", name);
	assert_string_equal(name, want);
	expect_in_summary(f, want);
}

/* --- memory pressure in a memory cgroup ------------------------------------ */

#define CG_FILE_MIB	128	/* what the scanner reads, each pass */
#define CG_LIMIT_MIB	16	/* its cgroup's memory.high (v2) or memory.limit_in_bytes (v1) */
/* Passes of the reclaim test's scan: on a quiet machine with a fast disk two
 * gave 20-30 ms of reclaim, at the finding's 20 ms threshold. */
#define CG_RECLAIM_PASSES	6

static bool write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	return close(fd) == 0 && ok;
}

/* A whole file that reports no size (/proc, cgroupfs), NUL-terminated;
 * NULL if it cannot be read. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* The mount point and root of the cgroup hierarchy of fstype (with `option`
 * among its super options, for v1), from /proc/self/mountinfo. */
static bool cgroup_mount(const char *fstype, const char *option, char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char r[256], m[256], type[64], opts[512];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %255s %255s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %511s", type, opts) != 2 || strcmp(type, fstype))
			continue;
		if (option) {
			char *tok, *save;

			for (tok = strtok_r(opts, ",", &save); tok && strcmp(tok, option); tok = strtok_r(NULL, ",", &save))
				;
			if (!tok)
				continue;
		}
		snprintf(mnt, mlen, "%s", m);
		snprintf(root, rlen, "%s", strcmp(r, "/") ? r : "");
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* This process's cgroup in the hierarchy whose /proc/self/cgroup line has
 * controllers `ctl` ("" for v2). */
static bool own_cgroup(const char *ctl, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[1024];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		b[strcspn(b + 1, "\n") + 1] = '\0';
		if (strcmp(a + 1, ctl) == 0 || (ctl[0] && strstr(a + 1, ctl))) {
			snprintf(path, len, "%s", b + 1);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* A new memory cgroup limited to CG_LIMIT_MIB (c->cgroup): cgroup v2's
 * memory controller with memory.high, or v1's memory hierarchy with
 * memory.limit_in_bytes. The version, or 0 when neither is available
 * (why in why). */
static int make_memory_cgroup(struct ctx *c, char *why, size_t wlen)
{
	char mnt[256], root[256], own[256], path[1200], limit[32], *ctls;

	snprintf(limit, sizeof(limit), "%d", CG_LIMIT_MIB << 20);
	if (cgroup_mount("cgroup2", NULL, mnt, sizeof(mnt), root, sizeof(root))) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt);
		ctls = read_text(path);
		if (ctls && strstr(ctls, "memory")) {
			/* a child of the hierarchy's root, where a controller can
			 * be enabled whatever processes it holds */
			snprintf(path, sizeof(path), "%s/cgroup.subtree_control", mnt);
			write_text(path, "+memory");
			snprintf(c->cgroup, sizeof(c->cgroup), "%s/inferscope-test-%d", mnt, (int)getpid());
			snprintf(path, sizeof(path), "%s/memory.high", c->cgroup);
			if (mkdir(c->cgroup, 0755) == 0 && write_text(path, limit)) {
				free(ctls);
				return 2;
			}
			if (c->cgroup[0])
				rmdir(c->cgroup);
			c->cgroup[0] = '\0';
		}
		free(ctls);
	}
	if (cgroup_mount("cgroup", "memory", mnt, sizeof(mnt), root, sizeof(root)) && own_cgroup("memory", own, sizeof(own))) {
		const char *rel = strncmp(own, root, strlen(root)) == 0 ? own + strlen(root) : own;

		snprintf(c->cgroup, sizeof(c->cgroup), "%s%s/inferscope-test-%d", mnt, strcmp(rel, "/") ? rel : "",
			 (int)getpid());
		snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", c->cgroup);
		if (mkdir(c->cgroup, 0755) == 0 && write_text(path, limit))
			return 1;
		snprintf(why, wlen, "cannot make a memory cgroup at %s: %s", c->cgroup, strerror(errno));
		rmdir(c->cgroup);
		c->cgroup[0] = '\0';
		return 0;
	}
	snprintf(why, wlen, "neither cgroup v2 with the memory controller nor a cgroup v1 memory hierarchy is mounted");
	return 0;
}

/* Reads key's value from the stat file at path (v2 memory.stat,
 * /proc/vmstat): -1 when absent. */
static long long stat_value(const char *path, const char *key)
{
	char *text = read_text(path), *at;
	long long v = -1;
	size_t n = strlen(key);

	for (at = text; at && (at = strstr(at, key)); at += n)
		if ((at == text || at[-1] == '\n') && at[n] == ' ') {
			v = atoll(at + n + 1);
			break;
		}
	free(text);
	return v;
}

/* A thread reads a 128 MiB file twice through a 16 MiB memory cgroup: every
 * page it reads must be charged, so its cgroup reclaims at least 240 MiB,
 * and the finding names the thread with the reclaim time the recording
 * measured. The pages reclaimed are checked against the kernel's counters:
 * at least what the limit forces, at most what was read from disk (with v2,
 * the cgroup's own pgsteal). */
static void test_memory_pressure_in_cgroup(void **state)
{
	struct ctx *c = *state;
	char file[600], cmd[2048], stat[1100], why[1200];
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/sh", "-c", cmd, NULL };
	long long disk_kb0, disk_kb1, steal = -1, pages, least;
	double cost, measured;
	json_t *f, *ev;
	int version, fd;

	version = make_memory_cgroup(c, why, sizeof(why));
	if (!version) {
		print_message("skipped: %s\n", why);
		skip();
	}
	snprintf(file, sizeof(file), "%s/scan.bin", c->f.dir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	{
		static char mib[1 << 20];

		memset(mib, 'x', sizeof(mib));
		for (int i = 0; i < CG_FILE_MIB; i++)
			assert_int_equal(write(fd, mib, sizeof(mib)), (ssize_t)sizeof(mib));
	}
	assert_int_equal(fsync(fd), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s cachescan %s %d", c->cgroup, WORKLOAD, file,
		 CG_RECLAIM_PASSES);
	disk_kb0 = stat_value("/proc/vmstat", "pgpgin");
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	disk_kb1 = stat_value("/proc/vmstat", "pgpgin");
	if (version == 2) {
		snprintf(stat, sizeof(stat), "%s/memory.stat", c->cgroup);
		steal = stat_value(stat, "pgsteal");
	}
	c->report = th_report(c->f.isr);
	f = finding(c->report, "host_memory_pressure");
	ev = json_object_get(f, "evidence");
	expect_in_summary(f, "`scanner`");
	cost = json_real_value(json_object_get(f, "cost_s"));
	measured = th_num(ev, "all_reclaim_s");
	pages = (long long)th_num(ev, "pages_reclaimed");
	least = (long long)(CG_RECLAIM_PASSES * CG_FILE_MIB - CG_LIMIT_MIB) << 8;
	print_message("cgroup v%d: %.0f reclaims in the cgroup, %.3f s measured, cost %.3f s; %lld pages reclaimed, "
		      "at least %lld, at most %lld read from disk; the cgroup's pgsteal %lld (-1: v1 has none)\n",
		      version, th_num(ev, "cgroup_reclaims"), measured, cost, pages, least, (disk_kb1 - disk_kb0) / 4, steal);
	assert_true(th_num(ev, "cgroup_reclaims") > 0);
	assert_true(cost >= 0.02);
	assert_true(fabs(cost - measured) <= 0.05 * measured);
	assert_true(pages >= least * 95 / 100);
	assert_true(pages <= (disk_kb1 - disk_kb0) / 4 * 105 / 100);
	if (version == 2)
		assert_true(pages >= steal * 95 / 100 && pages <= steal * 105 / 100);
}

/* Reads the "total=" of a pressure file's line that starts with kind
 * ("some", "full"): -1 when absent. */
static long long pressure_total(const char *path, const char *kind)
{
	char *text = read_text(path), *at;
	long long v = -1;

	if (text && (at = strstr(text, kind)) && (at = strstr(at, "total=")))
		v = atoll(at + 6);
	free(text);
	return v;
}

/*
 * The memory samples (ISR_EV_MEM_SAMPLE, once a second): the same scanner
 * reads its file 12 times through a 16 MiB cgroup, for some seconds.
 * host_memory_pressure says how long tasks stalled on memory (PSI: the
 * cgroup's memory.pressure with v2, the host's /proc/pressure/memory with
 * v1) and how close the cgroup came to its limit. With v2 the stall it
 * measured is at most what the cgroup's memory.pressure counted over its
 * whole life (the samples miss what came before the first and after the
 * last); with v1, at most what the host's counted during the run.
 */
static void test_memory_pressure_psi(void **state)
{
	struct ctx *c = *state;
	char file[600], cmd[2048], path[1100], why[1200];
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/sh", "-c", cmd, NULL };
	long long total_us;
	double some, elapsed, recorded;
	json_t *f, *ev;
	int fd;

	long long host0;
	int version = make_memory_cgroup(c, why, sizeof(why));

	if (!version) {
		print_message("skipped: %s\n", why);
		skip();
	}
	if (version == 2)
		snprintf(path, sizeof(path), "%s/memory.pressure", c->cgroup);
	else
		snprintf(path, sizeof(path), "/proc/pressure/memory");
	if (access(path, R_OK)) {
		print_message("skipped: no %s (PSI off: psi=1 on the kernel command line)\n", path);
		skip();
	}
	snprintf(file, sizeof(file), "%s/scan.bin", c->f.dir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	{
		static char mib[1 << 20];

		memset(mib, 'x', sizeof(mib));
		for (int i = 0; i < CG_FILE_MIB; i++)
			assert_int_equal(write(fd, mib, sizeof(mib)), (ssize_t)sizeof(mib));
	}
	assert_int_equal(fsync(fd), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s cachescan %s 48", c->cgroup, WORKLOAD, file);
	host0 = version == 2 ? 0 : pressure_total(path, "some");
	elapsed = th_now();
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	elapsed = th_now() - elapsed;
	total_us = pressure_total(path, "some") - host0;
	c->report = th_report(c->f.isr);
	/* one round of samples a second of the recording (48 passes: several
	 * seconds even on a quiet machine, where 12 took 2.4 s and gave one
	 * sample); the recorded span, not the command's wall time, which also
	 * holds the attach (CI, sanitized: 3 samples in a 5.0 s command) */
	recorded = th_num(json_object_get(c->report, "recording"), "duration_s");
	if (th_count(c->report, "mem_sample") < 1 || th_count(c->report, "mem_sample") < (long long)recorded - 1)
		fail_msg("%lld memory samples in %.2f s recorded (%.2f s run)", th_count(c->report, "mem_sample"),
			 recorded, elapsed);
	f = finding(c->report, "host_memory_pressure");
	ev = json_object_get(f, "evidence");
	some = th_num(ev, "psi_some_s");
	print_message("cgroup v%d, %.1f s run, %lld mem samples: PSI some %.3f s measured, %s total %.3f s; cgroup peak "
		      "%.1f MiB of %.1f MiB\n", version, elapsed, th_count(c->report, "mem_sample"), some, version == 2 ? "the cgroup's" : "the host's, during the run,",
		      total_us / 1e6,
		      th_num(ev, "cgroup_peak_bytes") / 1048576.0, th_num(ev, "cgroup_limit_bytes") / 1048576.0);
	assert_string_equal(json_string_value(json_object_get(ev, "psi_scope")), version == 2 ? "cgroup" : "host");
	assert_true(th_num(ev, "cgroup_limit_bytes") == (double)(CG_LIMIT_MIB << 20));
	assert_true(some > 0);
	assert_true(some * 1e6 <= total_us + 1000);
	expect_in_summary(f, "`scanner`");
	expect_in_summary(f, version == 2 ? "Memory pressure (PSI, its cgroup's) stalled some of its tasks" :
					    "Memory pressure (PSI, the host's) stalled some of its tasks");
	expect_in_summary(f, "Its memory cgroup used");
}

/* --- numa_remote on a fake two-node host ----------------------------------- */

/* Writes text to dir/rel, making the directories. */
static void fake_file(const char *dir, const char *rel, const char *text)
{
	char path[1200], *slash;
	FILE *f;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The launch_rate workload pinned to `cpu` (taskset) on a host that the
 * fake sysfs (INFERSCOPE_SYSFS_ROOT) says has two NUMA nodes, CPU 0 on
 * node 0 and CPU 1 on node 1, and one GPU, on node 1: the JSON report. */
static json_t *record_pinned(struct ctx *c, const char *cpu)
{
	char sys[600], count[600];
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget", "off", "--no-py-stacks", "--",
			 "taskset", "-c", (char *)cpu, "build/tests/workloads/launch_rate", "2", "seq", count, "2000", NULL };

	snprintf(sys, sizeof(sys), "%s/sys", c->f.dir);
	snprintf(count, sizeof(count), "%s/launches", c->f.dir);
	fake_file(sys, "devices/system/node/online", "0-1\n");
	fake_file(sys, "devices/system/node/node0/cpulist", "0\n");
	fake_file(sys, "devices/system/node/node0/distance", "10 21\n");
	fake_file(sys, "devices/system/node/node1/cpulist", "1\n");
	fake_file(sys, "devices/system/node/node1/distance", "21 10\n");
	fake_file(sys, "bus/pci/devices/0000:3b:00.0/vendor", "0x10de\n");
	fake_file(sys, "bus/pci/devices/0000:3b:00.0/device", "0x2330\n");
	fake_file(sys, "bus/pci/devices/0000:3b:00.0/class", "0x030200\n");
	fake_file(sys, "bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
	fake_file(sys, "bus/pci/devices/0000:3b:00.0/local_cpulist", "1\n");
	setenv("INFERSCOPE_SYSFS_ROOT", sys, 1);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	unsetenv("INFERSCOPE_SYSFS_ROOT");
	return th_report(c->f.isr);
}

/* Pinned to CPU 0, node 0: numa_remote names the launching thread, its
 * time away from the GPU's node 1, and says to bind to node 1. */
static void test_numa_remote_on_fake_two_nodes(void **state)
{
	struct ctx *c = *state;
	json_t *f, *t;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		print_message("skipped: one CPU\n");
		skip();
	}
	c->report = record_pinned(c, "0");
	f = finding(c->report, "numa_remote");
	expect_in_summary(f, "`launch_rate`");
	expect_in_summary(f, "on CPU on node 0, away from its GPU's node 1");
	assert_non_null(strstr(json_string_value(json_object_get(f, "suggestion")), "numactl --cpunodebind=1 --membind=1"));
	t = json_array_get(json_object_get(json_object_get(f, "evidence"), "threads"), 0);
	print_message("launch_rate: %.3f s on CPU, %.3f s on node 0\n", th_num(t, "on_cpu_s"), th_num(t, "remote_s"));
	assert_true(th_num(t, "on_cpu_s") > 0.2);	/* of 2 s spinning: the 2 CPUs are shared */
	/* all but what taskset ran before it pinned itself and exec'd */
	assert_true(th_num(t, "remote_s") >= 0.95 * th_num(t, "on_cpu_s"));
}

/* Pinned to CPU 1, the GPU's node: no finding. */
static void test_numa_local_on_fake_two_nodes(void **state)
{
	struct ctx *c = *state;
	json_t *fs, *f;
	size_t i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		print_message("skipped: one CPU\n");
		skip();
	}
	c->report = record_pinned(c, "1");
	fs = json_object_get(c->report, "findings");
	json_array_foreach(fs, i, f)
		assert_string_not_equal(json_string_value(json_object_get(f, "rule")), "numa_remote");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timer_wakes_name_nobody, setup, teardown),
		cmocka_unit_test_setup_teardown(test_healthy_no_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_bound_pipeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_bound_through_a_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_cached_no_input_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gil_contention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pageable_copies_without_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pageable_copies_attached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pageable_copies_past_a_launch_phase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stall_in_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_held_at_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_page_fault_storm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_contention_names_the_competitor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_pressure_in_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_pressure_psi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numa_remote_on_fake_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numa_local_on_fake_two_nodes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
