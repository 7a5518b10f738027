// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "bridge.h"
#include "elf_file.h"
#include "inject.h"
#include "lib_search.h"
#include "proc.h"
#include "root_path.h"

/* Whether pid holds a GPU device open (/dev/nvidia0, /dev/nvidia1, ...):
 * the driver opens one when CUDA creates a context. */
static bool gpu_open(pid_t pid)
{
	char dir[64], link[PATH_MAX + 64], target[PATH_MAX];
	struct dirent *d;
	bool found = false;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	fds = opendir(dir);
	if (!fds)
		return false;
	while (!found && (d = readdir(fds))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = !strncmp(target, "/dev/nvidia", 11) && target[11] >= '0' && target[11] <= '9';
	}
	closedir(fds);
	return found;
}

/* A name nobody can have made ready for us: 16 random hex digits. */
static int random_name(char *out, size_t len)
{
	unsigned long long r;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return errno ? -errno : -EIO;
	snprintf(out, len, "inferscope-bpf-%016llx", r);
	return 0;
}

/* The root directory pid has now is the one fd names (the process is the
 * same one, or at least one in the same filesystem). */
static bool same_root(pid_t pid, int rootfd)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return !fstat(rootfd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += w;
		}
	return n < 0 ? -errno : 0;
}

/* A directory of ours, made now in tmpfd under a random name: 0 with its
 * fd in *dirfd, or -errno. Made 0700, checked through its fd (a
 * directory owned by us: not one put in its place), then opened to 0755:
 * the target's user reads the bridge in it, only we can change what it
 * holds. */
static int make_own_dir(int tmpfd, char *name, size_t len, int *dirfd)
{
	struct stat st;
	int e, fd;

	e = random_name(name, len);
	if (e)
		return e;
	if (mkdirat(tmpfd, name, 0700))
		return -errno;
	fd = openat(tmpfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    fchmod(fd, 0755) || fstat(fd, &st) || (st.st_mode & 07777) != 0755) {
		close(fd);
		return -EPERM;
	}
	*dirfd = fd;
	return 0;
}

/* A copy of the bridge (the open file in) in a fresh directory of pid's
 * /tmp, resolved inside its root (lib/root_path.h). */
static int place_copy(pid_t pid, int rootfd, int in, struct bridge_placed *p, char *msg, size_t msglen)
{
	char name[64];
	struct statvfs vfs;
	struct stat st;
	int tmpfd, dirfd = -1, out = -1, e;

	tmpfd = root_path__open(rootfd, "/tmp", O_PATH | O_DIRECTORY);
	if (tmpfd < 0) {
		e = tmpfd;
		snprintf(msg, msglen, "pid %d cannot see the CUPTI bridge (another mount namespace: a container) and its "
			 "/tmp %s, so no copy is put there; start the job with the bridge (inferscope-bpf record "
			 "--gpu -- CMD), give one it sees with --cupti-bridge, or run with --no-inject", (int)pid,
			 e == -ELOOP ? "is a symbolic link or lies under one, which a root tracer does not follow" :
			 e == -ENOENT ? "does not exist" : strerror(-e));
		return e;
	}
	if (!fstatvfs(tmpfd, &vfs) && (vfs.f_flag & ST_NOEXEC)) {
		close(tmpfd);
		snprintf(msg, msglen, "the /tmp of pid %d is mounted noexec, so a copy of the CUPTI bridge there could "
			 "not be loaded; start the job with the bridge (inferscope-bpf record --gpu -- CMD) or give "
			 "one it sees with --cupti-bridge", (int)pid);
		return -EACCES;
	}
	e = make_own_dir(tmpfd, name, sizeof(name), &dirfd);
	close(tmpfd);
	if (!e) {
		out = openat(dirfd, BRIDGE_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		e = out < 0 ? -errno : 0;
	}
	e = e ?: copy_fd(in, out);
	if (!e && (fchmod(out, 0644) || fstat(out, &st)))
		e = -errno;
	if (out >= 0 && close(out) && !e)
		e = -errno;
	if (dirfd >= 0)
		close(dirfd);
	if (e) {
		snprintf(msg, msglen, "cannot put a copy of the CUPTI bridge into the /tmp of pid %d (another mount "
			 "namespace: a container): %s; start the job with the bridge (inferscope-bpf record --gpu -- "
			 "CMD) or run with --no-inject", (int)pid, e == -EPERM ? "the directory made for it is not as "
			 "it was made (replaced by someone else?)" : strerror(-e));
		return e;
	}
	snprintf(p->path, sizeof(p->path), "/tmp/%s/%s", name, BRIDGE_NAME);
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	return 0;
}

int bridge__place(pid_t pid, const char *bridge, struct bridge_placed *p, char *msg, size_t msglen)
{
	struct stat a, b;
	int rootfd, in, fd, e;

	memset(p, 0, sizeof(*p));
	in = open(bridge, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &a) || !S_ISREG(a.st_mode)) {
		e = in < 0 ? -errno : -EINVAL;
		snprintf(msg, msglen, "cannot read the CUPTI bridge %s: %s", bridge,
			 e == -EINVAL ? "not a regular file" : strerror(-e));
		if (in >= 0)
			close(in);
		return e;
	}
	rootfd = root_path__open_root((int)pid);
	if (rootfd < 0) {
		close(in);
		snprintf(msg, msglen, "cannot open the root directory of pid %d: %s", (int)pid, strerror(-rootfd));
		return rootfd == -ENOENT ? -ESRCH : rootfd;
	}
	if (fstat(rootfd, &b)) {
		e = -errno;
		snprintf(msg, msglen, "cannot read the root directory of pid %d: %s", (int)pid, strerror(-e));
		goto out;
	}
	p->root_dev = b.st_dev;
	p->root_ino = b.st_ino;
	/* The same file at the same path in pid's root: nothing to copy. */
	fd = root_path__open(rootfd, bridge, O_PATH);
	if (fd >= 0 && !fstat(fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		snprintf(p->path, sizeof(p->path), "%s", bridge);
		p->dev = a.st_dev;
		p->ino = a.st_ino;
		close(fd);
		e = 0;
		goto out;
	}
	if (fd >= 0)
		close(fd);
	e = place_copy(pid, rootfd, in, p, msg, msglen);
out:
	close(rootfd);
	close(in);
	return e;
}

int bridge__check_placed(pid_t pid, const struct bridge_placed *p, char *msg, size_t msglen)
{
	struct stat st;
	int rootfd = root_path__open_root((int)pid), fd = -1, e = 0;

	if (rootfd < 0) {
		snprintf(msg, msglen, "pid %d exited before the CUPTI bridge was loaded", (int)pid);
		return -ESRCH;
	}
	if (fstat(rootfd, &st) || st.st_dev != p->root_dev || st.st_ino != p->root_ino || !same_root(pid, rootfd))
		e = -ESTALE;
	if (!e) {
		fd = root_path__open(rootfd, p->path, O_PATH);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_dev != p->dev || st.st_ino != p->ino)
			e = -ESTALE;
	}
	if (fd >= 0)
		close(fd);
	close(rootfd);
	if (e)
		snprintf(msg, msglen, "%s of pid %d is no longer the CUPTI bridge inferscope-bpf checked or copied "
			 "(replaced, or the process changed its root): it is not loaded; start the job with the bridge "
			 "(inferscope-bpf record --gpu -- CMD) or run with --no-inject", p->path, (int)pid);
	return e;
}

int bridge__inject(pid_t pid, const char *bridge, char *msg, size_t len)
{
	struct bridge_placed p;
	uint64_t handle;
	int e;

	if (!proc_maps__has((__u32)pid, "/libcuda.so")) {
		snprintf(msg, len, "pid %d runs no CUDA (no libcuda mapped)", (int)pid);
		return -ENODEV;
	}
	if (!gpu_open(pid)) {
		snprintf(msg, len, "pid %d has no GPU open yet (CUDA not initialized), so the CUPTI bridge is not "
			 "loaded into it: attach again once it runs CUDA, or start it under inferscope-bpf record -- CMD",
			 (int)pid);
		return -EAGAIN;
	}
	e = bridge__place(pid, bridge, &p, msg, len);
	/* Right before the target resolves the path itself: still our file. */
	e = e ?: bridge__check_placed(pid, &p, msg, len);
	if (e)
		return e;
	return inject__dlopen(pid, p.path, &handle, msg, len);
}

static bool is_bridge(const char *file, const void *ctx)
{
	const char *base = strrchr(file, '/');

	(void)ctx;
	return base && strcmp(base + 1, BRIDGE_NAME) == 0;
}

struct bridge_path {
	char *path;
	size_t len;
};

static int bridge_found(void *ctx, const char *file, bool deleted, const char *root_path)
{
	struct bridge_path *b = ctx;

	(void)file;
	if (deleted)
		return 0;
	return (size_t)snprintf(b->path, b->len, "%s", root_path) >= b->len ? -ENAMETOOLONG : 1;
}

int bridge__mapped(__u32 pid, char *path, size_t len)
{
	struct bridge_path b = { path, len };

	return lib_search__mapped(pid, is_bridge, bridge_found, &b);
}

int bridge__locate(const char *explicit_path, char *out, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (explicit_path) {
		if (!realpath(explicit_path, exe))
			return -errno;
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return n < 0 ? -errno : -ENOENT;
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (!slash || (size_t)(slash - exe) + sizeof("/" BRIDGE_NAME) > sizeof(exe))
			return -ENAMETOOLONG;
		strcpy(slash + 1, BRIDGE_NAME);
	}
	if (access(exe, R_OK))
		return -errno;
	if ((size_t)snprintf(out, len, "%s", exe) >= len)
		return -ENAMETOOLONG;
	return 0;
}

struct sites_search {
	__u64 site, window_ref, close_ref;	/* virtual addresses; 0: not found */
};

static int find_site(void *ctx, const struct elf_symbol *sym)
{
	struct sites_search *s = ctx;

	if (sym->func && strcmp(sym->name, "inferscope_gpu_window_site") == 0)
		s->site = sym->value;
	else if (!sym->func && strcmp(sym->name, "inferscope_gpu_window_semaphore") == 0)
		s->window_ref = sym->value;
	else if (!sym->func && strcmp(sym->name, "inferscope_gpu_close_semaphore") == 0)
		s->close_ref = sym->value;
	return 0;
}

/* The file offset of vaddr through any loadable segment (the reference
 * counters are data). */
static int file_offset(const struct elf_file *f, __u64 vaddr, __u64 *off)
{
	struct elf_segment seg[16];
	size_t n = elf_file__segments(f, seg, 16);

	for (size_t i = 0; i < n; i++)
		if (vaddr >= seg[i].vaddr && vaddr < seg[i].vaddr + seg[i].filesz) {
			*off = vaddr - seg[i].vaddr + seg[i].offset;
			return 0;
		}
	return -ENOENT;
}

int bridge__window_sites(const char *path, struct bridge_window_sites *out)
{
	struct sites_search s = { 0, 0, 0 };
	struct elf_file *f;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = elf_file__open(fd, path, NULL, 0);
	if (!f) {
		e = -errno;
		close(fd);
		return e;
	}
	e = elf_file__for_each_symbol(f, ELF_SYMS_DYNAMIC, find_site, &s);
	if (!e && (!s.site || !s.window_ref || !s.close_ref))
		e = -ENOENT;
	if (!e)
		e = elf_file__vaddr_to_offset(f, s.site, &out->site);
	if (!e)
		e = file_offset(f, s.window_ref, &out->window_ref);
	if (!e)
		e = file_offset(f, s.close_ref, &out->close_ref);
	elf_file__close(f);
	close(fd);
	return e;
}
