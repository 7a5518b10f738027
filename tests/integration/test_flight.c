// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder (record --flight-recorder), for real: the stand-in
 * libcuda's launch_rate workload numbers its launches (grid x = 1, 2, 3,
 * ...), so a window shows exactly which launches it holds. A window written
 * at SIGUSR1 holds about the last SEC seconds at the workload's rate, the
 * next window begins with the launch after the previous one's last (nothing
 * lost or written twice at the edge), the end writes a last window that
 * ends with the last launch, and each window is a recording that analyze
 * reads. A planted 500 ms synchronization fires the live check and its
 * window holds the stall. A link planted at a window's name is skipped,
 * not followed, and the later windows are written under the next names.
 */
#include <limits.h>
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
#include "cli.h"
#include "harness.h"
#include "recording.h"
#include "cuda_funcs.h"

#define LAUNCH_RATE_WORKLOAD "build/tests/workloads/launch_rate"

struct ctx {
	struct th_files f;
	pid_t tracer;
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

	th_reap(c->tracer);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

/* What a window holds of the numbered launches. */
struct window {
	double duration_s;	/* END's time less HOST's start */
	long long launches;	/* cuLaunchKernel events */
	long long first, last;	/* their least and greatest number */
	double span_s;		/* from the first launch to the last, by timestamp */
	double longest_sync_s;	/* the longest cuStreamSynchronize */
	__u32 stop_reason;
	char trigger[200];
};

static void window_read(const struct ctx *c, unsigned int n, struct window *w)
{
	struct recording *r;
	char path[600], err[256];
	__u64 t0 = UINT64_MAX, t1 = 0;
	unsigned char *seen;
	size_t i;

	snprintf(path, sizeof(path), "%s/rec.%u.isr", c->f.dir, n);
	if (recording__load(path, &r, err, sizeof(err)))
		fail_msg("window %u: %s", n, err);
	assert_false(r->truncated);
	memset(w, 0, sizeof(*w));
	w->first = LLONG_MAX;
	w->stop_reason = r->stop_reason;
	snprintf(w->trigger, sizeof(w->trigger), "%s", r->host.trigger ? r->host.trigger : "");
	w->duration_s = (r->end_mono_ns - r->host.start_mono_ns) / 1e9;
	seen = calloc(1 << 20, 1);
	assert_non_null(seen);
	for (i = 0; i < r->event_count; i++) {
		const struct isr_ev_cuda_call *e = (const void *)r->events[i];
		long long k;

		if (e->hdr.type != ISR_EV_CUDA_CALL)
			continue;
		if (e->func == ISR_CUDA_FN_cuStreamSynchronize && e->duration_ns / 1e9 > w->longest_sync_s)
			w->longest_sync_s = e->duration_ns / 1e9;
		if (e->func != ISR_CUDA_FN_cuLaunchKernel)
			continue;
		k = (long long)(e->args[1] & 0xffffffffULL);
		assert_true(k > 0 && k < (1 << 20));
		if (seen[k])
			fail_msg("window %u: launch %lld twice", n, k);
		seen[k] = 1;
		w->launches++;
		w->first = k < w->first ? k : w->first;
		w->last = k > w->last ? k : w->last;
		t0 = e->hdr.ts_ns < t0 ? e->hdr.ts_ns : t0;
		t1 = e->hdr.ts_ns > t1 ? e->hdr.ts_ns : t1;
	}
	free(seen);
	w->span_s = t1 > t0 ? (t1 - t0) / 1e9 : 0;
	recording__free(r);
	print_message("window %u: %.3f s, launches %lld..%lld (%lld) over %.3f s, longest sync %.3f s, trigger '%s'\n",
		      n, w->duration_s, w->first, w->last, w->launches, w->span_s, w->longest_sync_s, w->trigger);
	/* Every launch between its first and last: none lost inside. */
	assert_int_equal(w->launches, w->last - w->first + 1);
}

static bool window_exists(const struct ctx *c, unsigned int n)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/rec.%u.isr", c->f.dir, n);
	return access(path, F_OK) == 0;
}

/* Sleeps until t (th_now() seconds). */
static void sleep_until(double t)
{
	while (th_now() < t)
		usleep(10000);
}

/*
 * 20 s of 1000 numbered launches a second under --flight-recorder 3:
 * SIGUSR1 10 s after the probes are live writes a window of about the last
 * 3 s (1000 launches a second in it), another 1.5 s later a window that
 * begins with the next launch, and the end a third that ends with the last
 * launch the workload made.
 */
static void test_windows_at_sigusr1(void **state)
{
	struct ctx *c = *state;
	char ready[600], count_file[600], *text;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget", "off", "--no-py-stacks",
			 "--flight-recorder", "3", "--trigger", "none", "--ready-file", ready, "--",
			 LAUNCH_RATE_WORKLOAD, "20", "seq", count_file, "1000", NULL };
	struct window w1, w2, w3;
	json_t *r, *calls;
	long long made;
	double t0;
	int status;

	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(count_file, sizeof(count_file), "%s/launches", c->f.dir);
	c->tracer = th_spawn(argv, NULL, c->f.err);
	assert_true(th_wait_file(ready, 30));
	t0 = th_now();
	sleep_until(t0 + 10);
	assert_false(window_exists(c, 1));	/* nothing is written before a trigger */
	kill(c->tracer, SIGUSR1);
	sleep_until(t0 + 11.5);
	kill(c->tracer, SIGUSR1);
	assert_int_equal(waitpid(c->tracer, &status, 0), c->tracer);
	c->tracer = 0;
	th_expect_exit(status, 0, c->f.err);
	text = th_slurp(count_file);
	assert_non_null(text);
	made = atoll(text);
	free(text);

	window_read(c, 1, &w1);
	window_read(c, 2, &w2);
	window_read(c, 3, &w3);
	assert_false(window_exists(c, 4));
	/* About the last 3 s: sealed into the ring every 0.3 s, so up to 3.3 s,
	 * and the workload's rate in it. */
	assert_true(w1.duration_s > 2.9 && w1.duration_s < 3.6);
	assert_true(w1.span_s > 2.8 && w1.span_s < 3.6);
	assert_true(w1.launches > 0.85 * 1000 * w1.span_s && w1.launches < 1.15 * 1000 * w1.span_s + 10);
	assert_int_equal(w1.stop_reason, ISR_STOP_FLIGHT_TRIGGER);
	assert_string_equal(w1.trigger, "SIGUSR1");
	/* The second window begins where the first ended. */
	assert_int_equal(w2.first, w1.last + 1);
	assert_true(w2.duration_s > 1.2 && w2.duration_s < 2.0);
	assert_int_equal(w2.stop_reason, ISR_STOP_FLIGHT_TRIGGER);
	/* The end: the last 3 s, up to the last launch. */
	assert_int_equal(w3.last, made);
	assert_true(w3.duration_s > 2.9 && w3.duration_s < 3.6);
	assert_int_equal(w3.stop_reason, ISR_STOP_TARGETS_EXITED);
	assert_string_equal(w3.trigger, "end of the recording");

	/* Each window reads as a recording of its own. */
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/rec.1.isr", c->f.dir);
		r = th_report(path);
	}
	calls = json_object_get(json_object_get(json_object_get(r, "cuda"), "calls"), "cuLaunchKernel");
	assert_int_equal((long long)th_num(calls, "count"), w1.launches);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "recording"), "stop_reason")),
			    "flight_trigger");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "recording"), "trigger")), "SIGUSR1");
	assert_true(th_num(json_object_get(r, "recording"), "duration_s") > 2.9);
	assert_non_null(th_thread(r, "launch_rate"));	/* its name came along, though the task was seen long before */
	json_decref(r);
}

/*
 * The live check: a 500 ms cuStreamSynchronize planted 3 s into a 6 s
 * workload fires --trigger sync=300, and the window it writes holds the
 * stall; the end writes the rest.
 */
static void test_sync_stall_trigger(void **state)
{
	struct ctx *c = *state;
	char count_file[600], path[600], *text;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget", "off", "--no-py-stacks",
			 "--flight-recorder", "2", "--trigger", "sync=300", "--",
			 LAUNCH_RATE_WORKLOAD, "6", "seq", count_file, "500", "3", "500", NULL };
	struct window w1, w2;
	json_t *r;

	snprintf(count_file, sizeof(count_file), "%s/launches", c->f.dir);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	text = th_slurp(c->f.err);
	assert_non_null(text);
	assert_non_null(strstr(text, "window 1 (sync: cuStreamSynchronize took"));
	free(text);
	window_read(c, 1, &w1);
	window_read(c, 2, &w2);
	assert_false(window_exists(c, 3));
	assert_true(w1.longest_sync_s >= 0.5 && w1.longest_sync_s < 1.0);
	assert_non_null(strstr(w1.trigger, "sync: cuStreamSynchronize took"));
	/* The 2 s before the stall ended (it ended the window): 1.5 s of launches, then the stall. */
	assert_true(w1.duration_s > 1.9 && w1.duration_s < 2.5);
	/* The end: the last 2 s, which began after the first window ended. */
	assert_true(w2.first > w1.last);
	text = th_slurp(count_file);
	assert_non_null(text);
	assert_int_equal(w2.last, atoll(text));
	free(text);
	snprintf(path, sizeof(path), "%s/rec.1.isr", c->f.dir);
	r = th_report(path);
	assert_true(th_num(json_object_get(json_object_get(json_object_get(r, "cuda"), "calls"), "cuStreamSynchronize"),
			   "count") >= 1);
	json_decref(r);
}

/*
 * A symbolic link planted at rec.2.isr (to a file of the user's): the
 * second window goes to rec.3.isr and begins with the launch after the
 * first's last, the end's goes to rec.4.isr; the link and its target are
 * untouched.
 */
static void test_planted_link_skipped(void **state)
{
	struct ctx *c = *state;
	char ready[600], count_file[600], link_path[600], target[600], *text;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget", "off", "--no-py-stacks",
			 "--flight-recorder", "1", "--trigger", "none", "--ready-file", ready, "--",
			 LAUNCH_RATE_WORKLOAD, "4", "seq", count_file, "500", NULL };
	struct window w1, w3, w4;
	double t0;
	int status;
	FILE *f;

	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(count_file, sizeof(count_file), "%s/launches", c->f.dir);
	snprintf(target, sizeof(target), "%s/precious", c->f.dir);
	snprintf(link_path, sizeof(link_path), "%s/rec.2.isr", c->f.dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(symlink(target, link_path), 0);
	c->tracer = th_spawn(argv, NULL, c->f.err);
	assert_true(th_wait_file(ready, 30));
	t0 = th_now();
	sleep_until(t0 + 1);
	kill(c->tracer, SIGUSR1);
	sleep_until(t0 + 2);
	kill(c->tracer, SIGUSR1);
	assert_int_equal(waitpid(c->tracer, &status, 0), c->tracer);
	c->tracer = 0;
	th_expect_exit(status, 0, c->f.err);
	text = th_slurp(c->f.err);
	assert_non_null(text);
	assert_non_null(strstr(text, "rec.2.isr is not a file the recorder writes"));
	free(text);
	window_read(c, 1, &w1);
	window_read(c, 3, &w3);
	window_read(c, 4, &w4);
	assert_false(window_exists(c, 5));
	assert_int_equal(w3.first, w1.last + 1);
	/* the end's: the last second, after the window before it */
	assert_true(w4.first > w3.last);
	text = th_slurp(count_file);
	assert_non_null(text);
	assert_int_equal(w4.last, atoll(text));
	free(text);
	{
		char buf[64] = "";
		ssize_t n = readlink(link_path, buf, sizeof(buf) - 1);

		assert_true(n > 0);
		buf[n] = '\0';
		assert_string_equal(buf, target);
	}
	text = th_slurp(target);
	assert_string_equal(text, "keep me\n");
	free(text);
}

/* Options that make no sense are refused, naming the option. */
static void test_bad_options(void **state)
{
	struct ctx *c = *state;
	/* argp's refusals and the command's own: one exit status (cli.h) */
	char *bad[][12] = {
		{ TRACER, "record", "-o", c->f.isr, "--flight-recorder", "0", "--", "true", NULL },
		{ TRACER, "record", "-o", c->f.isr, "--flight-recorder", "3", "--trigger", "sync=abc", "--", "true", NULL },
		{ TRACER, "record", "-o", c->f.isr, "--flight-recorder", "3", "--trigger", "stall=3", "--", "true", NULL },
		{ TRACER, "record", "-o", c->f.isr, "--trigger", "sync=300", "--", "true", NULL },
		{ TRACER, "record", "-o", c->f.isr, "--flight-recorder", "3", "--flight-memory", "0", "--", "true", NULL },
		{ TRACER, "-o", c->f.isr, "--flight-recorder", "3", "--", "true", NULL },	/* record only */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text;

		th_expect_exit(th_run(bad[i], c->f.err), EXIT_USAGE, c->f.err);
		text = th_slurp(c->f.err);
		assert_non_null(text);
		assert_true(strstr(text, "flight") || strstr(text, "trigger"));
		free(text);
	}
	assert_false(window_exists(c, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stall_trigger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows_at_sigusr1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_link_skipped, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
