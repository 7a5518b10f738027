// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/htab.h: what goes in comes out, through growth, removal (backward
 * shift: every entry stays reachable after any removal) and removal by
 * predicate, against a plain array as the reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "htab.h"

#define N 5000

static void test_u64_map(void **state)
{
	struct htab h;
	__u64 v, i;

	(void)state;
	memset(&h, 0, sizeof(h));	/* a zeroed table is an empty integer map */
	assert_false(htab_u64__get(&h, 7, &v));
	for (i = 0; i < N; i++)
		assert_int_equal(htab_u64__put(&h, i * 4096, i + 1), 0);
	assert_int_equal(h.len, N);
	assert_true(h.len * 2 <= h.cap);
	for (i = 0; i < N; i++) {
		assert_true(htab_u64__get(&h, i * 4096, &v));
		assert_int_equal(v, i + 1);
	}
	assert_false(htab_u64__get(&h, 4095, &v));
	/* key 0 is a key like any other */
	assert_true(htab_u64__get(&h, 0, &v));
	assert_int_equal(v, 1);
	assert_int_equal(htab_u64__put(&h, 0, 99), 0);
	assert_int_equal(h.len, N);
	assert_true(htab_u64__take(&h, 0, &v));
	assert_int_equal(v, 99);
	assert_false(htab_u64__take(&h, 0, &v));
	htab__free(&h);
	assert_false(htab_u64__get(&h, 4096, &v));
}

/* Keys that collide on their home slot make long runs: removing from the
 * middle of a run must keep the rest of it reachable. */
static __u64 same_home(const void *e)
{
	return (((const struct htab_u64 *)e)->key % 3) << 32 | 1;
}

static void test_remove_keeps_runs(void **state)
{
	struct htab h = HTAB_INIT(struct htab_u64, same_home, htab_u64__equal);
	static bool present[N];
	__u64 i, v;

	(void)state;
	srand(7);
	for (i = 0; i < 600; i++) {
		assert_int_equal(htab_u64__put(&h, i, i * 10), 0);
		present[i] = true;
	}
	for (int round = 0; round < 3000; round++) {
		i = (__u64)rand() % 600;
		if (present[i]) {
			assert_true(htab_u64__take(&h, i, &v));
			assert_int_equal(v, i * 10);
		} else {
			assert_int_equal(htab_u64__put(&h, i, i * 10), 0);
		}
		present[i] = !present[i];
	}
	for (i = 0; i < 600; i++)
		assert_int_equal(htab_u64__get(&h, i, &v), present[i]);
	htab__free(&h);
}

struct named {
	const char *name;
	int id;
};

static __u64 named_hash(const void *e)
{
	return hash__str(((const struct named *)e)->name);
}

static bool named_equal(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name) == 0;
}

static bool odd_id(void *entry, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	return ((struct named *)entry)->id % 2;
}

static void test_entries_iteration_and_remove_if(void **state)
{
	static char names[N][24];
	struct htab h;
	struct named key, *e;
	size_t pos = 0, seen = 0;
	int i, calls = 0;
	bool added;

	(void)state;
	htab__init(&h, sizeof(struct named), named_hash, named_equal);
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "kernel_%d", i);
		key.name = names[i];
		key.id = i;
		e = htab__insert(&h, &key, &added);
		assert_non_null(e);
		assert_true(added);
	}
	key.name = "kernel_42";	/* another pointer, the same name */
	key.id = -1;
	e = htab__insert(&h, &key, &added);
	assert_false(added);
	assert_int_equal(e->id, 42);
	while ((e = htab__next(&h, &pos)))
		seen++;
	assert_int_equal(seen, N);
	htab__remove_if(&h, odd_id, &calls);
	assert_true(calls >= N);
	assert_int_equal(h.len, N / 2);
	for (i = 0; i < N; i++) {
		key.name = names[i];
		e = htab__find(&h, &key);
		if (i % 2)
			assert_null(e);
		else
			assert_int_equal(e->id, i);
	}
	htab__free(&h);
}

static void test_hashes_spread(void **state)
{
	(void)state;
	assert_int_not_equal(hash__u64(1), hash__u64(2));
	assert_int_not_equal(hash__u64(1) & 0xffff, hash__u64(2) & 0xffff);
	assert_int_not_equal(hash__mix(1, 2), hash__mix(2, 1));
	assert_int_not_equal(hash__str("a"), hash__str("b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_map),
		cmocka_unit_test(test_remove_keeps_runs),
		cmocka_unit_test(test_entries_iteration_and_remove_if),
		cmocka_unit_test(test_hashes_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
