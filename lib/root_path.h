/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening a path inside another process's root directory (an fd of
 * /proc/PID/root: its mount namespace and chroot, a container's
 * filesystem) as that process would see it, without being led out of it.
 * A path walked through /proc/PID/root/... follows an absolute symbolic
 * link from the walker's root, the host's: a link a container user planted
 * would take a root tracer anywhere on the host. Here no symbolic link is
 * followed at all, nor a /proc magic link, and ".." is refused: openat2()
 * with RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or
 * where the kernel has no openat2 (before 5.6) a walk one component at a
 * time with O_NOFOLLOW, which refuses the same paths.
 */
#ifndef INFERSCOPE_LIB_ROOT_PATH_H
#define INFERSCOPE_LIB_ROOT_PATH_H

/* Opens the root directory of pid (O_PATH): an fd, or -errno (-ENOENT:
 * no such process). */
int root_path__open_root(int pid);

/* Opens path (absolute or relative, resolved against rootfd as "/") with
 * flags (O_CLOEXEC is added; O_CREAT is refused: create with *at calls
 * relative to a directory opened here). An fd, or -errno: -ELOOP a
 * component is a symbolic link, -EINVAL a ".." component or O_CREAT,
 * anything else open() says. */
int root_path__open(int rootfd, const char *path, int flags);

/* The walk root_path__open uses without openat2; the same contract (for
 * its tests). */
int root_path__open_walk(int rootfd, const char *path, int flags);

#endif
