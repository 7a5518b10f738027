/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output files created by a process that may run as root in a directory
 * others can write to (/tmp, a shared project folder). The promise: nothing
 * is written through a link or into a file that was there before. A new
 * file is created under a random temporary name in the destination's
 * directory (O_CREAT | O_EXCL | O_NOFOLLOW), given its mode and group
 * through its descriptor, and renamed over the destination by
 * out_file__commit(): a file that had the name (a hard link to another
 * file included) is replaced, never truncated; a name that is a symbolic
 * link is refused, neither followed nor replaced. Before the commit the
 * destination is untouched, so a report that fails half-way leaves nothing
 * behind. A character device (/dev/null) is the one thing written in
 * place: only root can make one. docs/security.md says why.
 */
#ifndef INFERSCOPE_LIB_OUT_FILE_H
#define INFERSCOPE_LIB_OUT_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

/* Who may read an output besides its owner. The zero value: nobody
 * (0600); with group: the members of gid (0640). */
struct out_file_share {
	bool group;
	gid_t gid;
};

struct out_file {
	int fd;				/* write here; -1 once closed */
	int dirfd;			/* the destination's directory */
	char tmp[NAME_MAX + 1];		/* the temporary name until committed; "" after, or when in place */
	char name[NAME_MAX + 1];	/* the destination's name in dirfd */
};

/* Creates the file that will become path, mode 0600 or 0640 with the
 * group of share (NULL: private) whatever the umask. 0, or -errno with f
 * closed: -ELOOP path is a symbolic link, -EISDIR a directory, -EINVAL a
 * FIFO, socket or block device (or a path without a file name), any error
 * of opening its directory or creating, chown or chmod. */
int out_file__create(struct out_file *f, const char *path, const struct out_file_share *share);
/* Flushes the file to disk and gives it its name (once; later calls do
 * nothing). 0 or -errno. */
int out_file__commit(struct out_file *f);
/* Closes f, removing the file if it was never committed. 0, or -errno of
 * closing it. Safe on a closed f. */
int out_file__close(struct out_file *f);

/* What an error of out_file__create means for the user, including what to
 * do about a refusal. */
const char *out_file__strerror(int err);

#endif
