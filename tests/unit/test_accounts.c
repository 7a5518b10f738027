// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * user/record/accounts.h on this host's /etc/passwd and /etc/group: root is found
 * by name and by number, a number without an entry is a user of that uid
 * with no group, a bad number and a missing name are told apart, and a
 * user's groups start with its primary one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "accounts.h"

static void test_users(void **state)
{
	struct account a;

	(void)state;
	assert_int_equal(accounts__user("root", &a), 0);
	assert_int_equal(a.uid, 0);
	assert_int_equal(a.gid, 0);
	assert_string_equal(a.name, "root");
	assert_string_equal(a.home, "/root");
	assert_int_equal(accounts__user("0", &a), 0);
	assert_string_equal(a.name, "root");
	assert_int_equal(accounts__user_by_uid(0, &a), 0);
	assert_string_equal(a.name, "root");
	/* A uid nobody has, given as a number: no name, no group. */
	assert_int_equal(accounts__user("3999999", &a), 0);
	assert_int_equal(a.uid, 3999999);
	assert_int_equal(a.gid, (gid_t)-1);
	assert_string_equal(a.name, "");
	assert_int_equal(accounts__user_by_uid(3999999, &a), -ENOENT);
	assert_int_equal(accounts__user("no-such-user-here", &a), -ENOENT);
	assert_int_equal(accounts__user("99999999999", &a), -EINVAL);
}

static void test_groups(void **state)
{
	gid_t g, list[8];
	int n;

	(void)state;
	assert_int_equal(accounts__group("root", &g), 0);
	assert_int_equal(g, 0);
	assert_int_equal(accounts__group("4242", &g), 0);
	assert_int_equal(g, 4242);
	assert_int_equal(accounts__group("no-such-group-here", &g), -ENOENT);
	n = accounts__groups_of("no-such-user-here", 4242, list, 8);
	assert_int_equal(n, 1);
	assert_int_equal(list[0], 4242);
	assert_int_equal(accounts__groups_of("root", 0, list, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
