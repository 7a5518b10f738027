// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "root_path.h"

int root_path__open_root(int pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* No ".." component and no O_CREAT: what both ways refuse alike. */
static int check(const char *path, int flags)
{
	const char *p = path;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return -EINVAL;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;
		p += n;
		p += strspn(p, "/");
	}
	return 0;
}

int root_path__open_walk(int rootfd, const char *path, int flags)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	int dir = -1, fd, e = check(path, flags);
	struct stat st;

	if (e)
		return e;
	p += strspn(p, "/");
	if (!*p) {
		fd = openat(rootfd, ".", flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (dir < 0)
		return -errno;
	for (;;) {
		size_t n = strcspn(p, "/");
		bool last;

		if (n > NAME_MAX) {
			close(dir);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		p += strspn(p, "/");
		last = !*p;
		/* A symbolic link is refused at every step: through a
		 * directory component as ENOTDIR/ELOOP, as the last one by
		 * its type (O_PATH | O_NOFOLLOW opens the link itself). */
		fd = openat(dir, comp, (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
		e = fd < 0 ? -errno : 0;
		if (e == -ENOTDIR && fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			e = -ELOOP;
		close(dir);
		if (e)
			return e;
		if (last) {
			if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
				close(fd);
				return -ELOOP;
			}
			return fd;
		}
		dir = fd;
	}
}

int root_path__open(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int e = check(path, flags);
	long fd;

	if (e)
		return e;
	/* A trailing link is refused too (with O_PATH | O_NOFOLLOW openat2
	 * would return the link itself). */
	how.flags &= ~(unsigned long long)O_NOFOLLOW;
	fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	if (errno == ENOSYS)
		return root_path__open_walk(rootfd, path, flags);
	return -errno;
}
