// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * When cuKernelGetFunction's probes are released and attached again
 * (user/probes/alias_learn.h): a process that maps the same kernels again and
 * again has them released after ALIAS_QUIET_CALLS quiet calls; a kernel
 * named, or ALIAS_RELEARN_NS later, attaches them again; processes are
 * apart, and a new image starts over.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "alias_learn.h"

#define S 1000000000ULL

/* Maps kernels 0..n-1 of pid, round after round, until the learner says
 * something: how many calls it took, and what. */
static unsigned int map_until(struct alias_learn *l, __u32 pid, unsigned int n, enum alias_action *act)
{
	unsigned int calls = 0;

	do {
		__u64 k = 0x1000 + calls % n;

		assert_int_equal(alias_learn__mapped(l, pid, k, k | 0x1000000, act), 0);
		calls++;
	} while (*act == ALIAS_KEEP && calls < 100000);
	return calls;
}

static void test_released_after_quiet_calls(void **state)
{
	struct alias_learn l;
	enum alias_action act;

	(void)state;
	alias_learn__init(&l);
	/* 8 new pairs, then ALIAS_QUIET_CALLS that teach nothing */
	assert_int_equal(map_until(&l, 7, 8, &act), 8 + ALIAS_QUIET_CALLS);
	assert_int_equal(act, ALIAS_RELEASE);
	alias_learn__switched(&l, 7, false, 1 * S);
	/* calls already in flight when it was released: nothing to do */
	assert_int_equal(alias_learn__mapped(&l, 7, 0x1000, 0x1001000, &act), 0);
	assert_int_equal(act, ALIAS_KEEP);
	alias_learn__free(&l);
}

static void test_new_pair_restarts_the_count(void **state)
{
	struct alias_learn l;
	enum alias_action act;

	(void)state;
	alias_learn__init(&l);
	for (unsigned int i = 0; i < ALIAS_QUIET_CALLS - 1; i++) {
		assert_int_equal(alias_learn__mapped(&l, 7, 0x1000, 0x2000, &act), 0);
		assert_int_equal(act, ALIAS_KEEP);
	}
	/* the same kernel in another context: a new function */
	assert_int_equal(alias_learn__mapped(&l, 7, 0x1000, 0x3000, &act), 0);
	assert_int_equal(act, ALIAS_KEEP);
	for (unsigned int i = 0; i < ALIAS_QUIET_CALLS - 1; i++) {
		assert_int_equal(alias_learn__mapped(&l, 7, 0x1000, 0x3000, &act), 0);
		assert_int_equal(act, ALIAS_KEEP);
	}
	assert_int_equal(alias_learn__mapped(&l, 7, 0x1000, 0x2000, &act), 0);
	assert_int_equal(act, ALIAS_RELEASE);
	alias_learn__free(&l);
}

static void test_named_kernel_attaches_again(void **state)
{
	struct alias_learn l;
	enum alias_action act;

	(void)state;
	alias_learn__init(&l);
	map_until(&l, 7, 4, &act);
	alias_learn__switched(&l, 7, false, 1 * S);
	assert_int_equal(alias_learn__named(&l, 7, &act), 0);
	assert_int_equal(act, ALIAS_ATTACH);
	alias_learn__switched(&l, 7, true, 2 * S);
	/* while attached, a name only restarts the count */
	assert_int_equal(alias_learn__named(&l, 7, &act), 0);
	assert_int_equal(act, ALIAS_KEEP);
	assert_int_equal(map_until(&l, 7, 4, &act), ALIAS_QUIET_CALLS);
	alias_learn__free(&l);
}

static void test_relearn_after_a_while(void **state)
{
	struct alias_learn l;
	enum alias_action act;
	__u32 pids[4];

	(void)state;
	alias_learn__init(&l);
	map_until(&l, 7, 4, &act);
	map_until(&l, 9, 4, &act);
	alias_learn__switched(&l, 7, false, 1 * S);
	alias_learn__switched(&l, 9, false, 3 * S);
	assert_int_equal(alias_learn__due(&l, 1 * S + ALIAS_RELEARN_NS - 1, pids, 4), 0);
	assert_int_equal(alias_learn__due(&l, 1 * S + ALIAS_RELEARN_NS, pids, 4), 1);
	assert_int_equal(pids[0], 7);
	assert_int_equal(alias_learn__due(&l, 3 * S + ALIAS_RELEARN_NS, pids, 4), 2);
	assert_int_equal(alias_learn__due(&l, 3 * S + ALIAS_RELEARN_NS, pids, 1), 1);
	alias_learn__free(&l);
}

/* Processes are learned apart, and a new image under a pid starts over. */
static void test_processes_apart_and_forgotten(void **state)
{
	struct alias_learn l;
	enum alias_action act;

	(void)state;
	alias_learn__init(&l);
	map_until(&l, 7, 4, &act);
	/* pid 9 maps the same handles: new to it */
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(alias_learn__mapped(&l, 9, 0x1000 + i, (0x1000 + i) | 0x1000000, &act), 0);
		assert_int_equal(act, ALIAS_KEEP);
	}
	alias_learn__switched(&l, 7, false, 1 * S);
	alias_learn__forget(&l, 7);
	assert_int_equal(map_until(&l, 7, 4, &act), 4 + ALIAS_QUIET_CALLS);
	alias_learn__free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_released_after_quiet_calls),
		cmocka_unit_test(test_new_pair_restarts_the_count),
		cmocka_unit_test(test_named_kernel_attaches_again),
		cmocka_unit_test(test_relearn_after_a_while),
		cmocka_unit_test(test_processes_apart_and_forgotten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
