// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/root_path.h, both ways (openat2 and the walk for kernels without
 * it), on a directory tree standing for a container's filesystem: paths
 * resolve inside it, and every link a container user could plant (an
 * absolute one that would lead to the host, a relative one, one as the
 * last component, a /proc magic link) and every ".." is refused alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "root_path.h"

typedef int (*open_fn)(int rootfd, const char *path, int flags);

struct tree {
	char dir[64];
	int rootfd;
};

static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char p[128];
	FILE *f;

	snprintf(t->dir, sizeof(t->dir), "/tmp/test-root-path-XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(p, sizeof(p), "%s/tmp", t->dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/tmp/file", t->dir);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fputs("inside\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/abs", t->dir);
	if (symlink("/etc", p))
		return -1;
	snprintf(p, sizeof(p), "%s/rel", t->dir);
	if (symlink("tmp", p))
		return -1;
	snprintf(p, sizeof(p), "%s/tmp/link", t->dir);
	if (symlink("/etc/passwd", p))
		return -1;
	t->rootfd = open(t->dir, O_PATH | O_DIRECTORY);
	*state = t;
	return t->rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	close(t->rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	if (system(cmd))
		return -1;
	free(t);
	return 0;
}

static void expect_content(int fd, const char *want)
{
	char buf[64] = "";

	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	assert_string_equal(buf, want);
}

static void check(open_fn open_in, int rootfd)
{
	int fd;

	/* Inside the tree, not the host's /tmp. */
	expect_content(open_in(rootfd, "/tmp/file", O_RDONLY), "inside\n");
	expect_content(open_in(rootfd, "tmp//file", O_RDONLY), "inside\n");
	fd = open_in(rootfd, "/", O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	close(fd);
	fd = open_in(rootfd, "/tmp", O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	close(fd);
	/* Links, wherever they are. */
	assert_int_equal(open_in(rootfd, "/abs/passwd", O_RDONLY), -ELOOP);
	assert_int_equal(open_in(rootfd, "/rel/file", O_RDONLY), -ELOOP);
	assert_int_equal(open_in(rootfd, "/tmp/link", O_RDONLY), -ELOOP);
	assert_int_equal(open_in(rootfd, "/tmp/link", O_PATH), -ELOOP);
	assert_int_equal(open_in(rootfd, "/tmp/link", O_PATH | O_NOFOLLOW), -ELOOP);
	assert_int_equal(open_in(rootfd, "/abs", O_PATH | O_DIRECTORY), -ELOOP);
	/* "..", creation, absence. */
	assert_int_equal(open_in(rootfd, "/tmp/../tmp/file", O_RDONLY), -EINVAL);
	assert_int_equal(open_in(rootfd, "..", O_PATH), -EINVAL);
	assert_int_equal(open_in(rootfd, "/tmp/new", O_WRONLY | O_CREAT), -EINVAL);
	assert_int_equal(open_in(rootfd, "/tmp/none", O_RDONLY), -ENOENT);
}

static void test_openat2(void **state)
{
	struct tree *t = *state;

	check(root_path__open, t->rootfd);
}

static void test_walk(void **state)
{
	struct tree *t = *state;

	check(root_path__open_walk, t->rootfd);
}

/* Magic links of /proc: refused both ways. */
static void test_magic_links(void **state)
{
	int root = root_path__open_root(getpid());

	(void)state;
	assert_true(root >= 0);
	assert_int_equal(root_path__open(root, "/proc/self/root/etc/passwd", O_RDONLY), -ELOOP);
	assert_int_equal(root_path__open_walk(root, "/proc/self/root/etc/passwd", O_RDONLY), -ELOOP);
	close(root);
	assert_int_equal(root_path__open_root(-1), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_openat2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test(test_magic_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
