// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GPU activity windows (user/record/gpu_windows.h) driven by a simulated job:
 * a thread whose CUDA calls make API records at a known rate while a window
 * is open, stepped every millisecond the way the recorder steps it, each
 * closed window measured as the bridge's window record reports it. Checks
 * the promise: CUPTI's cost stays within its share of the budget, a window
 * opens every period, a job whose calls are rare is collected in full, and
 * a job that speeds up is switched to windows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu_windows.h"

#define MS 1000000ULL
#define S (1000 * MS)
#define SHARE 0.005
#define DETACH_NS 3000000.0	/* what a detach costs the finalizing thread */
#define RECORD_NS 1000.0	/* CUPTI's cost per API record, here */

struct run {
	double cost_ns;		/* CUPTI's cost to the thread over the run */
	__u64 open_ns;
	__u64 windows;
	__u64 shortest, longest;	/* completed windows */
};

/* records_per_s(t): the thread's API records per second at time t (s);
 * each window closes lag_ns after it was asked to. */
static struct run simulate_lag(double (*records_per_s)(double), __u64 seconds, __u64 period_ns, __u64 lag_ns)
{
	struct gpu_windows g;
	struct run r = { 0, 0, 0, ~0ULL, 0 };
	__u64 t = 10 * S, end = t + seconds * S, next = t, records = 0, closing = 0;
	double carry = 0;

	gpu_windows__init(&g, SHARE, RECORD_NS, period_ns);
	while (t < end) {
		t += MS;
		if (g.open || closing) {
			__u64 whole;

			carry += records_per_s((double)(t - 10 * S) / S) / 1000;
			whole = (__u64)carry;
			carry -= (double)whole;
			records += whole;
			r.cost_ns += (double)whole * RECORD_NS;
			r.open_ns += MS;
			if (closing && t >= closing) {
				/* it closed: its record tells */
				if (t - g.opened_ns < r.shortest)
					r.shortest = t - g.opened_ns;
				if (t - g.opened_ns > r.longest)
					r.longest = t - g.opened_ns;
				r.cost_ns += DETACH_NS;
				gpu_windows__measured(&g, records, t - g.opened_ns, (__u64)DETACH_NS);
				closing = 0;
				continue;
			}
			/* a continuous window is measured every period */
			if (g.continuous && t - g.opened_ns >= period_ns && (t - g.opened_ns) % period_ns == 0) {
				gpu_windows__measured(&g, records, period_ns, 0);
				records = 0;
			}
		}
		if (t < next)
			continue;
		switch (gpu_windows__decide(&g, t, &next)) {
		case GPU_WINDOW_OPEN:
			gpu_windows__switched(&g, true, t);
			records = 0;
			r.windows++;
			break;
		case GPU_WINDOW_CLOSE:
			/* the window's record arrives after the close */
			gpu_windows__switched(&g, false, t);
			closing = t + lag_ns;
			break;
		default:
			break;
		}
	}
	return r;
}

static struct run simulate(double (*records_per_s)(double), __u64 seconds, __u64 period_ns)
{
	return simulate_lag(records_per_s, seconds, period_ns, MS);
}

/* A PyTorch launch loop at its fastest: 140k launches/s, 3 API records each. */
static double launch_bound(double t)
{
	(void)t;
	return 420000;
}

static double rare(double t)
{
	(void)t;
	return 200;
}

/* Quiet for 12 s, then launch-bound. */
static double speeds_up(double t)
{
	return t < 12 ? 200 : 420000;
}

static void test_within_share(void **state)
{
	struct run r = simulate(launch_bound, 60, GPU_WINDOW_PERIOD_NS);

	(void)state;
	print_message("launch-bound: cost %.3f%% of the thread, %llu windows, %.1f-%.1f ms, open %.2f%%\n",
		      100 * r.cost_ns / (60.0 * S), (unsigned long long)r.windows, r.shortest / 1e6, r.longest / 1e6,
		      100.0 * r.open_ns / (60.0 * S));
	/* the share, and the first window's cost (its rate not yet known) */
	assert_true(r.cost_ns <= SHARE * 60 * S + GPU_WINDOW_FIRST_NS * 0.42 + DETACH_NS);
	/* a window every period */
	assert_true(r.windows >= 60 * S / GPU_WINDOW_PERIOD_NS - 1 && r.windows <= 60 * S / GPU_WINDOW_PERIOD_NS + 1);
	/* (0.005 * 5 s - 3 ms) / 0.42 = 52 ms */
	assert_true(r.longest >= 50 * MS && r.longest <= 54 * MS);
}

/* Windows that close 150 ms late (a tracer that cannot close them sooner)
 * come less often: still within the share. */
static void test_late_close_paid_by_gaps(void **state)
{
	struct run r = simulate_lag(launch_bound, 60, GPU_WINDOW_PERIOD_NS, 150 * MS);

	(void)state;
	print_message("closing 150 ms late: cost %.3f%% of the thread, %llu windows, %.1f-%.1f ms\n",
		      100 * r.cost_ns / (60.0 * S), (unsigned long long)r.windows, r.shortest / 1e6, r.longest / 1e6);
	assert_true(r.cost_ns <= SHARE * 60 * S + 0.42 * (GPU_WINDOW_FIRST_NS + 150 * MS) + DETACH_NS);
	assert_true(r.windows < 60 * S / GPU_WINDOW_PERIOD_NS);
}

static void test_rare_calls_collected_in_full(void **state)
{
	struct run r = simulate(rare, 30, GPU_WINDOW_PERIOD_NS);

	(void)state;
	/* after the first, short window: one window, open to the end */
	assert_int_equal(r.windows, 2);
	assert_true(r.open_ns >= 30 * S - GPU_WINDOW_PERIOD_NS - 2 * GPU_WINDOW_MIN_NS);
}

static void test_switches_to_windows(void **state)
{
	struct run r = simulate(speeds_up, 60, GPU_WINDOW_PERIOD_NS);

	(void)state;
	print_message("speeds up: %llu windows, open %.2f s\n", (unsigned long long)r.windows, r.open_ns / 1e9);
	/* full until it sped up and a period's measurement told (at most
	 * two periods later), windows after */
	assert_true(r.open_ns <= 12 * S + 2 * GPU_WINDOW_PERIOD_NS + 10 * 60 * MS);
	assert_true(r.windows >= 7);
}

static void test_plan(void **state)
{
	struct gpu_windows g;

	(void)state;
	gpu_windows__init(&g, SHARE, RECORD_NS, GPU_WINDOW_PERIOD_NS);
	assert_int_equal(gpu_windows__plan(&g), GPU_WINDOW_FIRST_NS);
	gpu_windows__switched(&g, true, 0);
	gpu_windows__measured(&g, 0, 50 * MS, 0);
	assert_int_equal(gpu_windows__plan(&g), GPU_WINDOW_PERIOD_NS);	/* nothing to pay: full */
	gpu_windows__measured(&g, 21000, 50 * MS, 0);			/* a second process: the higher rate wins */
	assert_int_equal(gpu_windows__plan(&g), (__u64)(SHARE * GPU_WINDOW_PERIOD_NS / 0.42));
	gpu_windows__measured(&g, 1000000, 50 * MS, 0);			/* far over: the shortest window */
	assert_int_equal(gpu_windows__plan(&g), GPU_WINDOW_MIN_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_share),
		cmocka_unit_test(test_late_close_paid_by_gaps),
		cmocka_unit_test(test_rare_calls_collected_in_full),
		cmocka_unit_test(test_switches_to_windows),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
