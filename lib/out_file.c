// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "out_file.h"

#define TMP_TRIES 16

static void out_file__reset(struct out_file *f)
{
	f->fd = -1;
	f->dirfd = -1;
	f->tmp[0] = '\0';
	f->name[0] = '\0';
}

/* A name nobody can guess, so that nothing can be waiting there. */
static unsigned long long random_suffix(void)
{
	unsigned long long r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^ (unsigned long long)getpid();
}

/* Splits path into its directory (opened in f->dirfd) and its name. */
static int open_dir(struct out_file *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	size_t dlen;

	if (!*base)
		return -EINVAL;
	if (!strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (strlen(base) > NAME_MAX)
		return -ENAMETOOLONG;
	dlen = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
	if (dlen >= sizeof(dir))
		return -ENAMETOOLONG;
	if (slash)
		memcpy(dir, path, dlen);
	else
		dir[0] = '.';
	dir[dlen] = '\0';
	f->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0)
		return -errno;
	memcpy(f->name, base, strlen(base) + 1);
	return 0;
}

int out_file__create(struct out_file *f, const char *path, const struct out_file_share *share)
{
	bool group = share && share->group;
	struct stat st;
	int e, i;

	out_file__reset(f);
	if (!path || !*path)
		return -EINVAL;
	e = open_dir(f, path);
	if (e)
		goto fail;
	if (fstatat(f->dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			e = -ELOOP;
		else if (S_ISDIR(st.st_mode))
			e = -EISDIR;
		else if (S_ISCHR(st.st_mode)) {
			f->fd = openat(f->dirfd, f->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			e = f->fd < 0 ? -errno : 0;
			if (!e)
				return 0;
		} else if (!S_ISREG(st.st_mode))
			e = -EINVAL;
		if (e)
			goto fail;
	} else if (errno != ENOENT) {
		e = -errno;
		goto fail;
	}
	for (i = 0; i < TMP_TRIES; i++) {
		snprintf(f->tmp, sizeof(f->tmp), ".%.200s.%012llx", f->name, random_suffix() & 0xffffffffffffULL);
		f->fd = openat(f->dirfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f->fd >= 0 || errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		e = -errno;
		f->tmp[0] = '\0';
		goto fail;
	}
	if ((group && fchown(f->fd, (uid_t)-1, share->gid)) || fchmod(f->fd, group ? 0640 : 0600)) {
		e = -errno;
		goto fail;
	}
	return 0;
fail:
	out_file__close(f);
	return e;
}

int out_file__commit(struct out_file *f)
{
	if (!f->tmp[0])
		return 0;
	if (fsync(f->fd) && errno != EINVAL)
		return -errno;
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->name))
		return -errno;
	f->tmp[0] = '\0';
	return 0;
}

int out_file__close(struct out_file *f)
{
	int e = 0;

	if (f->tmp[0] && f->dirfd >= 0)
		unlinkat(f->dirfd, f->tmp, 0);
	if (f->fd >= 0 && close(f->fd))
		e = -errno;
	if (f->dirfd >= 0)
		close(f->dirfd);
	out_file__reset(f);
	return e;
}

const char *out_file__strerror(int err)
{
	switch (err) {
	case -ELOOP:
		return "it is a symbolic link, which inferscope-bpf neither writes through nor replaces (a link in a "
		       "shared directory could point at any file): give the path of the file itself";
	case -EISDIR:
		return "it is a directory: give a file name";
	case -EINVAL:
		return "it is not a regular file (a FIFO, socket or block device) or names no file: give the path "
		       "of a regular file";
	default:
		return strerror(-err);
	}
}
