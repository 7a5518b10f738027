// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "analyze.h"
#include "recording.h"
#include "analysis.h"
#include "report.h"

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

int analyze__run(const char *path, enum report_format fmt, const char *out_path)
{
	struct recording *loaded = NULL;
	struct analysis *a = NULL;
	bool to_stdout = !out_path || strcmp(out_path, "-") == 0;
	const struct recording *r;
	struct pass *p = NULL;
	FILE *out = stdout;
	int e;

	e = open_pass(path, &p, &loaded);
	if (e)
		goto out;
	r = pass__recording(p);
	if (r->truncated)
		fprintf(stderr, "inferscope-bpf: warning: %s is truncated: %s; analyzing what was recorded "
			"before that point\n", path, r->truncation);
	if (r->header_damaged)
		fprintf(stderr, "inferscope-bpf: warning: the file header of %s is damaged (CRC mismatch): its "
			"creation time is not used, so the report shows no start time\n", path);
	e = analysis__run_pass(p, &a);
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot analyze %s: %s\n", path,
			pass__error(p) ? pass__error(p) : strerror(-e));
		goto out;
	}
	p = NULL;
	if (!to_stdout) {
		out = fopen(out_path, "w");
		if (!out) {
			e = -errno;
			fprintf(stderr, "inferscope-bpf: cannot create %s: %s\n", out_path, strerror(-e));
			goto out;
		}
	}
	e = fmt == REPORT_JSON ? report__write_json(out, a) : report__write_markdown(out, a);
	if (!to_stdout && fclose(out) && !e)
		e = -errno;
	else if (to_stdout && fflush(out) && !e)
		e = -errno;
	if (e)
		fprintf(stderr, "inferscope-bpf: writing the report to %s failed: %s\n",
			to_stdout ? "standard output" : out_path, strerror(-e));
out:
	analysis__free(a);
	pass__free(p);
	recording__free(loaded);
	return e;
}
