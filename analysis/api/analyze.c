// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "analyze.h"
#include "recording.h"
#include "analysis.h"
#include "report.h"
#include "diff.h"

/* A pass over path: streamed from the file, whose events are walked three
 * times, or, when it cannot be read twice (a pipe), over its events loaded
 * into memory (*loaded, the caller's to free after the pass). 0, or -errno
 * after printing why. */
static int open_pass(const char *path, struct pass **p, struct recording **loaded)
{
	struct stat st;
	char err[512];
	int e;

	*loaded = NULL;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		e = recording__load(path, loaded, err, sizeof(err));
		e = e ?: pass__open(*loaded, p);
		if (e == -ENOMEM)
			snprintf(err, sizeof(err), "out of memory");
	} else {
		e = pass__open_file(path, NULL, p, err, sizeof(err));
	}
	if (e)
		fprintf(stderr, "inferscope-bpf: cannot read %s: %s\n", path, err);
	return e;
}

/* Analyzes the recording at path into *a (which owns the pass; *loaded,
 * when the file was loaded into memory, must outlive it). 0 or -errno after
 * saying why. */
static int load(const char *path, struct recording **loaded, struct analysis **a)
{
	const struct recording *r;
	struct pass *p = NULL;
	int e;

	*a = NULL;
	e = open_pass(path, &p, loaded);
	if (e)
		return e;
	r = pass__recording(p);
	if (r->truncated)
		fprintf(stderr, "inferscope-bpf: warning: %s is truncated: %s; analyzing what was recorded "
			"before that point\n", path, r->truncation);
	if (r->header_damaged)
		fprintf(stderr, "inferscope-bpf: warning: the file header of %s is damaged (CRC mismatch): its "
			"creation time is not used, so the report shows no start time\n", path);
	e = analysis__run_pass(p, a);
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot analyze %s: %s\n", path,
			pass__error(p) ? pass__error(p) : strerror(-e));
		pass__free(p);
	}
	return e;
}

/* Writes with write to out_path ("-" or NULL: stdout), a new file
 * (lib/out_file.h) that takes its name only once it is complete. 0 or
 * -errno after saying why. */
static int output(const char *out_path, const struct out_file_share *share, int (*write)(FILE *f, const void *arg),
		  const void *arg)
{
	bool to_stdout = !out_path || strcmp(out_path, "-") == 0;
	struct out_file of = { .fd = -1, .dirfd = -1 };
	FILE *out = stdout;
	int e;

	if (!to_stdout) {
		e = out_file__create(&of, out_path, share);
		out = e ? NULL : fdopen(of.fd, "w");
		if (!out) {
			e = e ?: -errno;
			fprintf(stderr, "inferscope-bpf: cannot create %s: %s\n", out_path, out_file__strerror(e));
			out_file__close(&of);
			return e;
		}
	}
	e = write(out, arg);
	if (!to_stdout) {
		if (fflush(out) && !e)
			e = -errno;
		e = e ?: out_file__commit(&of);
		of.fd = -1;	/* fclose closes it */
		if (fclose(out) && !e)
			e = -errno;
		out_file__close(&of);
	} else if (fflush(out) && !e) {
		e = -errno;
	}
	if (e)
		fprintf(stderr, "inferscope-bpf: writing the report to %s failed: %s%s\n",
			to_stdout ? "standard output" : out_path, strerror(-e), to_stdout ? "" : "; nothing was written");
	return e;
}

struct report_job {
	const struct analysis *a;
	enum report_format fmt;
};

static int write_report(FILE *f, const void *arg)
{
	const struct report_job *j = arg;

	switch (j->fmt) {
	case REPORT_JSON:
		return report__write_json(f, j->a);
	case REPORT_HTML:
		return report__write_html(f, j->a);
	case REPORT_PERFETTO:
		return report__write_perfetto(f, j->a);
	default:
		return report__write_markdown(f, j->a);
	}
}

int analyze__run(const char *path, enum report_format fmt, const char *out_path, const struct out_file_share *share)
{
	struct recording *r = NULL;
	struct analysis *a;
	struct report_job j;
	int e = load(path, &r, &a);

	if (!e) {
		j = (struct report_job){ .a = a, .fmt = fmt };
		e = output(out_path, share, write_report, &j);
	}
	analysis__free(a);
	recording__free(r);
	return e;
}

struct set_job {
	const struct analysis_set *set;
	enum report_format fmt;
};

static int write_set(FILE *f, const void *arg)
{
	const struct set_job *j = arg;

	switch (j->fmt) {
	case REPORT_JSON:
		return report__write_json_set(f, j->set);
	case REPORT_HTML:
		return report__write_html_set(f, j->set);
	case REPORT_PERFETTO:
		return report__write_perfetto_set(f, j->set);
	default:
		return report__write_markdown_set(f, j->set);
	}
}

struct paths {
	char **v;
	size_t n, cap;
};

static int paths_add(struct paths *p, const char *dir, const char *name)
{
	char *s;

	if (p->n == p->cap) {
		size_t c = p->cap ? 2 * p->cap : 16;
		char **g = reallocarray(p->v, c, sizeof(*g));

		if (!g)
			return -ENOMEM;
		p->v = g;
		p->cap = c;
	}
	if (!dir)
		s = strdup(name);
	else if (asprintf(&s, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0)
		s = NULL;
	if (!s)
		return -ENOMEM;
	p->v[p->n++] = s;
	return 0;
}

static void paths_free(struct paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular *.isr files of directory dir, sorted by name, added to p.
 * 0, or -errno after saying why. */
static int add_dir(struct paths *p, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t first = p->n;
	int e = 0;

	if (!d) {
		e = -errno;
		fprintf(stderr, "inferscope-bpf: cannot read the directory %s: %s\n", dir, strerror(-e));
		return e;
	}
	while (!e && (errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (len <= 4 || strcmp(de->d_name + len - 4, ".isr"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		e = paths_add(p, dir, de->d_name);
	}
	if (!e && errno)
		e = -errno;
	closedir(d);
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot read the directory %s: %s\n", dir, strerror(-e));
		return e;
	}
	if (p->n == first) {
		fprintf(stderr, "inferscope-bpf: %s holds no recording (no regular file named *.isr): give the "
			"recordings' files or their directory\n", dir);
		return -ENOENT;
	}
	qsort(p->v + first, p->n - first, sizeof(*p->v), by_name);
	return 0;
}

int analyze__run_many(const char *const *inputs, size_t n, enum report_format fmt, const char *out_path,
		      const struct out_file_share *share)
{
	struct analysis_set set = { 0 };
	struct paths paths = { 0 };
	struct recording **loaded = NULL;
	struct analysis **a = NULL;
	struct set_job j;
	char err[512];
	int e = 0;

	for (size_t i = 0; i < n && !e; i++) {
		struct stat st;

		if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode))
			e = add_dir(&paths, inputs[i]);
		else if ((e = paths_add(&paths, NULL, inputs[i])))
			fprintf(stderr, "inferscope-bpf: out of memory\n");
	}
	if (e)
		goto out;
	if (paths.n == 1) {
		e = analyze__run(paths.v[0], fmt, out_path, share);
		goto out;
	}
	loaded = calloc(paths.n, sizeof(*loaded));
	a = calloc(paths.n, sizeof(*a));
	if (!loaded || !a) {
		fprintf(stderr, "inferscope-bpf: out of memory\n");
		e = -ENOMEM;
		goto out;
	}
	/* each recording streamed as alone; their analyses kept together */
	for (size_t i = 0; i < paths.n && !e; i++)
		e = load(paths.v[i], &loaded[i], &a[i]);
	if (e)
		goto out;
	set = (struct analysis_set){ .a = (const struct analysis *const *)a, .names = (const char *const *)paths.v,
				     .n = paths.n };
	e = analysis_set__compute(&set, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot line up the ranks of the %zu recordings: %s\n", paths.n, err);
		goto out;
	}
	j = (struct set_job){ .set = &set, .fmt = fmt };
	e = output(out_path, share, write_set, &j);
out:
	analysis_set__clear(&set);
	for (size_t i = 0; a && i < paths.n; i++)
		analysis__free(a[i]);
	for (size_t i = 0; loaded && i < paths.n; i++)
		recording__free(loaded[i]);
	free(a);
	free(loaded);
	paths_free(&paths);
	return e;
}

struct diff_job {
	const struct diff *d;
	enum report_format fmt;
};

static int write_diff(FILE *f, const void *arg)
{
	const struct diff_job *j = arg;

	switch (j->fmt) {
	case REPORT_JSON:
		return diff__write_json(f, j->d);
	case REPORT_HTML:
		return diff__write_html(f, j->d);
	default:
		return diff__write_markdown(f, j->d);
	}
}

int analyze__diff(const char *base_path, const char *new_path, enum report_format fmt, const char *out_path,
		  const struct out_file_share *share)
{
	struct recording *rb = NULL, *rn = NULL;
	struct analysis *ab = NULL, *an = NULL;
	struct diff *d = NULL;
	struct diff_job j;
	int e = load(base_path, &rb, &ab);

	if (!e)
		e = load(new_path, &rn, &an);
	if (!e) {
		e = diff__compute(ab, an, base_path, new_path, &d);
		if (e)
			fprintf(stderr, "inferscope-bpf: cannot compare %s and %s: %s\n", base_path, new_path,
				strerror(-e));
	}
	if (!e) {
		j = (struct diff_job){ .d = d, .fmt = fmt };
		e = output(out_path, share, write_diff, &j);
	}
	diff__free(d);
	analysis__free(an);
	analysis__free(ab);
	recording__free(rn);
	recording__free(rb);
	return e;
}
