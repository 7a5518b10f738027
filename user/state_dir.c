// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "state_dir.h"

struct rec_file {
	char name[256];
	__u64 bytes;
	double mtime;
	int severity;		/* its tag: 0..3; -1: untagged (kept by policy) */
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

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct rec_file *)a)->name, ((const struct rec_file *)b)->name);
}

static int list_recordings(const char *dir, struct rec_file **out, size_t *n)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	struct rec_file *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		char path[4400];
		struct stat st;
		int sev;

		if (!state_dir__window_file(de->d_name, &sev) || strlen(de->d_name) >= sizeof(v->name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
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
		(*n)++;
	}
	closedir(dp);
	if (*n)
		qsort(v, *n, sizeof(*v), by_name);
	*out = v;
	return 0;
}

struct pruner {
	const char *dir;
	state_dir_removed_fn removed;
	void *ctx;
};

static bool remove_file(const struct pruner *p, struct rec_file *f, const char *why)
{
	char path[4400];
	int e = 0;

	snprintf(path, sizeof(path), "%s/%s", p->dir, f->name);
	if (unlink(path) && errno != ENOENT)
		e = -errno;
	if (p->removed)
		p->removed(p->ctx, p->dir, f->name, why, e);
	if (e)
		return false;
	f->name[0] = '\0';
	return true;
}

int state_dir__prune(const char *dir, const struct daemon_config *c, double now, state_dir_removed_fn removed,
		     void *ctx, struct daemon_health *h)
{
	const struct pruner p = { dir, removed, ctx };
	struct rec_file *v = NULL;
	size_t n, kept = 0;
	__u64 total = 0;
	int e = list_recordings(dir, &v, &n);

	if (e)
		return e;
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
	for (size_t i = 0; i < n; i++)
		kept += v[i].name[0] != '\0';
	h->recordings_kept = kept;
	h->recordings_bytes = total;
	free(v);
	return 0;
}

