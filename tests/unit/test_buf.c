// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/buf.h: a buffer grows to hold what is asked, keeps what it held,
 * and refuses sizes that cannot be allocated without changing anything.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"

static void test_buf_grows_and_keeps(void **state)
{
	unsigned char *b = NULL;
	size_t cap = 0, i, grows = 0, prev;

	(void)state;
	assert_int_equal(buf__reserve(&b, &cap, 0), 0);
	for (i = 0; i < 100000; i++) {
		prev = cap;
		assert_int_equal(buf__reserve(&b, &cap, i + 1), 0);
		grows += cap != prev;
		assert_true(cap >= i + 1);
		b[i] = (unsigned char)i;
	}
	assert_true(grows < 20);	/* doubling: O(log n) reallocations */
	for (i = 0; i < 100000; i++)
		assert_int_equal(b[i], (unsigned char)i);
	free(b);
}

struct pair {
	uint64_t a, b;
};

static void test_array_and_refusal(void **state)
{
	struct pair *arr = NULL;
	size_t cap = 0, n;

	(void)state;
	for (n = 0; n < 1000; n++) {
		assert_int_equal(array__reserve(&arr, &cap, n + 1, sizeof(*arr)), 0);
		arr[n].a = n;
		arr[n].b = ~(uint64_t)n;
	}
	for (n = 0; n < 1000; n++)
		assert_true(arr[n].a == n && arr[n].b == ~(uint64_t)n);
	n = cap;
	assert_int_equal(array__reserve(&arr, &cap, SIZE_MAX / 2, sizeof(*arr)), -ENOMEM);
	assert_int_equal(cap, n);	/* unchanged, still usable */
	assert_int_equal(arr[999].a, 999);
	free(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_grows_and_keeps),
		cmocka_unit_test(test_array_and_refusal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
