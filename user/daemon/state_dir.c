// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "state_dir.h"

struct rec_file {
	char name[256];
	__u64 bytes;
	double mtime;
	int severity;		/* its tag: 0..3; -1: untagged (kept by policy) */
	size_t stamp_len;	/* of its start time, after WINDOW_PREFIX */
	unsigned long number;	/* a flight-recorder window's number (.N.); 0: none */
};

/* window-<UTC time>[.<severity>].isr */
bool state_dir__window_file(const char *name, int *severity)
{
	static const char *const sev[] = { "none", "info", "warning", "critical" };
	size_t n = strlen(name), ls = strlen(WINDOW_SUFFIX);

	if (strncmp(name, WINDOW_PREFIX, strlen(WINDOW_PREFIX)) || n <= ls || strcmp(name + n - ls, WINDOW_SUFFIX))
		return false;
	*severity = -1;
	for (int i = 0; i < 4; i++) {
		size_t k = strlen(sev[i]);

		if (n > ls + k + 1 && name[n - ls - k - 1] == '.' && !strncmp(name + n - ls - k, sev[i], k))
			*severity = i;
	}
	return true;
}

/* Where f falls in time: its start time (window-<time>Z, which sorts as a
 * string) and, in flight-recorder mode, its window's number after it
 * (window-<time>Z.<N>...): .10. is later than .2., which it sorts before as
 * a string. */
static void window_order(struct rec_file *f)
{
	const char *s = f->name + strlen(WINDOW_PREFIX), *z = strchr(s, 'Z');

	f->number = 0;
	f->stamp_len = z ? (size_t)(z + 1 - s) : strlen(s);
	if (z && z[1] == '.' && isdigit((unsigned char)z[2]))
		f->number = strtoul(z + 2, NULL, 10);
}

static int oldest_first(const void *a, const void *b)
{
	const struct rec_file *x = a, *y = b;
	const char *xs = x->name + strlen(WINDOW_PREFIX), *ys = y->name + strlen(WINDOW_PREFIX);
	int c = strncmp(xs, ys, x->stamp_len < y->stamp_len ? x->stamp_len : y->stamp_len);

	if (c)
		return c;
	if (x->stamp_len != y->stamp_len)
		return x->stamp_len < y->stamp_len ? -1 : 1;
	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The recordings in dirfd, oldest first: regular files of ours with one
 * link only. What another user put there (a file, a link to one of
 * root's), whatever its name, is neither counted nor removed: it cannot
 * make the daemon remove its own recordings. */
static int list_recordings(int dirfd, struct rec_file **out, size_t *n)
{
	int fd = dup(dirfd);
	DIR *dp = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	struct rec_file *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!dp) {
		int e = -errno;

		if (fd >= 0)
			close(fd);
		return e;
	}
	rewinddir(dp);
	while ((de = readdir(dp))) {
		struct stat st;
		int sev;

		if (!state_dir__window_file(de->d_name, &sev) || strlen(de->d_name) >= sizeof(v->name))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || st.st_nlink != 1)
			continue;
		if (*n == cap) {
			struct rec_file *nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(dp);
				return -ENOMEM;
			}
			v = nv;
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", de->d_name);
		v[*n].bytes = (__u64)st.st_blocks * 512 > (__u64)st.st_size ? (__u64)st.st_blocks * 512 :
									       (__u64)st.st_size;
		v[*n].mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		v[*n].severity = sev;
		window_order(&v[*n]);
		(*n)++;
	}
	closedir(dp);
	if (*n)
		qsort(v, *n, sizeof(*v), oldest_first);
	*out = v;
	return 0;
}

struct pruner {
	const char *dir;
	int dirfd;
	state_dir_removed_fn removed;
	void *ctx;
};

static bool remove_file(const struct pruner *p, struct rec_file *f, const char *why)
{
	int e = 0;

	if (unlinkat(p->dirfd, f->name, 0) && errno != ENOENT)
		e = -errno;
	if (p->removed)
		p->removed(p->ctx, p->dir, f->name, why, e);
	if (e)
		return false;
	f->name[0] = '\0';
	return true;
}

/* Room for the next window on a filesystem smaller than daemon.max_size
 * (or filled by others): the oldest recordings removed until its free
 * space holds one more as large as the largest kept. Without it a full
 * filesystem would stay full, every later window failing at once. */
static void make_room(const struct pruner *p, struct rec_file *v, size_t n, struct daemon_health *h)
{
	struct statvfs fs;
	__u64 largest = 0, avail;

	if (fstatvfs(p->dirfd, &fs))
		return;
	avail = (__u64)fs.f_bavail * fs.f_frsize;
	for (size_t i = 0; i < n; i++)
		if (v[i].name[0] && v[i].bytes > largest)
			largest = v[i].bytes;
	for (size_t i = 0; i < n && avail < largest; i++)
		if (v[i].name[0]) {
			__u64 b = v[i].bytes;

			if (remove_file(p, &v[i], "the state directory's filesystem is full: room for the next window "
						  "(daemon.max_size is more than it holds)")) {
				h->removed_space++;
				avail += b;
			}
		}
}

int state_dir__prune(const char *dir, const struct daemon_config *c, double now, bool room,
		     state_dir_removed_fn removed, void *ctx, struct daemon_health *h)
{
	struct pruner p = { dir, -1, removed, ctx };
	struct rec_file *v = NULL;
	size_t n, kept = 0;
	__u64 total = 0;
	int e;

	p.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.dirfd < 0)
		return -errno;
	e = list_recordings(p.dirfd, &v, &n);
	if (e) {
		close(p.dirfd);
		return e;
	}
	for (size_t i = 0; i + c->keep_last < n; i++)
		if (v[i].severity >= 0 && v[i].severity < c->keep_severity &&
		    remove_file(&p, &v[i], "below daemon.keep_severity and not among daemon.keep_last"))
			h->removed_policy++;
	for (size_t i = 0; i < n; i++)
		if (v[i].name[0] && c->max_age_s > 0 && now - v[i].mtime > c->max_age_s &&
		    remove_file(&p, &v[i], "older than daemon.max_age"))
			h->removed_age++;
	for (size_t i = 0; i < n; i++)
		if (v[i].name[0])
			total += v[i].bytes;
	for (size_t i = 0; i < n && total > c->max_bytes; i++)
		if (v[i].name[0]) {
			__u64 b = v[i].bytes;

			if (remove_file(&p, &v[i], "the recordings passed daemon.max_size")) {
				h->removed_size++;
				total -= b;
			}
		}
	if (room)
		make_room(&p, v, n, h);
	total = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].name[0]) {
			kept++;
			total += v[i].bytes;
		}
	h->recordings_kept = kept;
	h->recordings_bytes = total;
	free(v);
	close(p.dirfd);
	return 0;
}

int state_dir__check(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0750) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the state directory %s (daemon.state_dir): %s", dir, strerror(errno));
		return -errno;
	}
	if (stat(dir, &st)) {
		snprintf(err, errlen, "cannot use the state directory %s (daemon.state_dir): %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "the state directory %s (daemon.state_dir) is not a directory", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen, "the state directory %s (daemon.state_dir) belongs to uid %u, not to the daemon "
			 "(uid %u) or root: its owner could plant, replace or remove the recordings; give a directory "
			 "of the daemon's own (the unit's StateDirectory=) or chown it", dir, (unsigned int)st.st_uid,
			 (unsigned int)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen, "the state directory %s (daemon.state_dir) is writable by every user (mode %04o): "
			 "anyone could rename or remove the recordings; chmod o-w it", dir,
			 (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}
