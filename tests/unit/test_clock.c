// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lib/clock.h: the monotonic clock in ns is what clock_gettime says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <cmocka.h>

#include "clock.h"

static void test_mono_matches_clock_gettime(void **state)
{
	struct timespec ts;
	__u64 a, b, c;

	(void)state;
	a = clock__mono_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	b = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	c = clock__mono_ns();
	assert_true(a <= b && b <= c);
	assert_true(c - a < 1000000000ULL);
	ts.tv_sec = 0;
	ts.tv_nsec = 20000000;
	nanosleep(&ts, NULL);
	assert_true(clock__mono_ns() - c >= 20000000ULL);
	assert_true(clock__now_ns(CLOCK_REALTIME) > 1600000000ULL * 1000000000ULL);
	assert_int_equal(clock__now_ns((clockid_t)1000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono_matches_clock_gettime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
