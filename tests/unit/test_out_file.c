// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/out_file.h against what an attacker can plant where a root tool
 * writes: a symbolic link or a hard link at the output's name must leave
 * the file it points at untouched; the output is 0600 (0640 with a group)
 * whatever the umask; a report that fails half-way leaves nothing; a
 * character device is written in place.
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
#include <dirent.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "out_file.h"

struct dir {
	char path[64];
	char victim[128];
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));
	FILE *f;

	snprintf(d->path, sizeof(d->path), "/tmp/test-out-file-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	snprintf(d->victim, sizeof(d->victim), "%s/victim", d->path);
	f = fopen(d->victim, "w");
	if (!f)
		return -1;
	fputs("precious\n", f);
	fclose(f);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	if (system(cmd))
		return -1;
	free(d);
	return 0;
}

static void assert_victim_intact(const struct dir *d)
{
	char buf[64] = "";
	FILE *f = fopen(d->victim, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious\n");
}

/* Files in the directory besides the victim and what the test made. */
static int entries(const struct dir *d)
{
	DIR *dir = opendir(d->path);
	struct dirent *e;
	int n = 0;

	assert_non_null(dir);
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(dir);
	return n;
}

static void write_all(struct out_file *f, const char *s)
{
	assert_int_equal(write(f->fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void test_symlink_refused(void **state)
{
	struct dir *d = *state;
	struct out_file f;
	char link[128];
	struct stat st;

	snprintf(link, sizeof(link), "%s/out", d->path);
	assert_int_equal(symlink(d->victim, link), 0);
	assert_int_equal(out_file__create(&f, link, NULL), -ELOOP);
	assert_victim_intact(d);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));	/* neither followed nor replaced */
	assert_int_equal(entries(d), 2);	/* no temporary file left */
	assert_non_null(strstr(out_file__strerror(-ELOOP), "symbolic link"));
}

static void test_hard_link_replaced_not_truncated(void **state)
{
	struct dir *d = *state;
	struct out_file f;
	char hard[128], buf[32] = "";
	FILE *in;

	snprintf(hard, sizeof(hard), "%s/out", d->path);
	assert_int_equal(link(d->victim, hard), 0);
	assert_int_equal(out_file__create(&f, hard, NULL), 0);
	write_all(&f, "report\n");
	assert_victim_intact(d);
	assert_int_equal(out_file__commit(&f), 0);
	assert_int_equal(out_file__close(&f), 0);
	assert_victim_intact(d);
	in = fopen(hard, "r");
	assert_non_null(in);
	assert_non_null(fgets(buf, sizeof(buf), in));
	fclose(in);
	assert_string_equal(buf, "report\n");
}

static void test_private_whatever_the_umask(void **state)
{
	struct dir *d = *state;
	struct out_file_share share = { .group = true, .gid = getgid() };
	struct out_file f;
	char path[128];
	struct stat st;
	mode_t old = umask(0);

	snprintf(path, sizeof(path), "%s/rec.isr", d->path);
	assert_int_equal(out_file__create(&f, path, NULL), 0);
	assert_int_equal(out_file__commit(&f), 0);
	assert_int_equal(out_file__close(&f), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* An existing file keeps nothing of its own: replaced by a new one. */
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(out_file__create(&f, path, &share), 0);
	assert_int_equal(out_file__commit(&f), 0);
	assert_int_equal(out_file__close(&f), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_gid, getgid());
}

/* Until committed the destination is untouched; closed uncommitted,
 * nothing is left. */
static void test_uncommitted_leaves_nothing(void **state)
{
	struct dir *d = *state;
	struct out_file f;
	char path[128];

	snprintf(path, sizeof(path), "%s/report.md", d->path);
	assert_int_equal(out_file__create(&f, path, NULL), 0);
	write_all(&f, "half a report");
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries(d), 2);	/* the victim and the temporary file */
	assert_int_equal(out_file__close(&f), 0);
	assert_int_equal(entries(d), 1);
}

static void test_not_files_refused(void **state)
{
	struct dir *d = *state;
	struct out_file f;
	char path[128];

	assert_int_equal(out_file__create(&f, d->path, NULL), -EISDIR);
	snprintf(path, sizeof(path), "%s/", d->path);
	assert_int_equal(out_file__create(&f, path, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/fifo", d->path);
	assert_int_equal(mkfifo(path, 0666), 0);
	assert_int_equal(out_file__create(&f, path, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/no-such-dir/x", d->path);
	assert_int_equal(out_file__create(&f, path, NULL), -ENOENT);
	assert_int_equal(f.fd, -1);
}

/* /dev/null stays /dev/null: written in place, its mode untouched. */
static void test_character_device_in_place(void **state)
{
	struct out_file f;
	struct stat before, after;

	(void)state;
	assert_int_equal(stat("/dev/null", &before), 0);
	assert_int_equal(out_file__create(&f, "/dev/null", NULL), 0);
	write_all(&f, "discarded");
	assert_int_equal(out_file__commit(&f), 0);
	assert_int_equal(out_file__close(&f), 0);
	assert_int_equal(stat("/dev/null", &after), 0);
	assert_true(S_ISCHR(after.st_mode));
	assert_int_equal(before.st_mode, after.st_mode);
	assert_int_equal(before.st_ino, after.st_ino);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_replaced_not_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_whatever_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uncommitted_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_files_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_character_device_in_place, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
