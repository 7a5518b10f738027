// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "analyze.h"
#include "recording.h"
#include "analysis.h"
#include "report.h"

int analyze__run(const char *path, enum report_format fmt, const char *out_path)
{
	struct recording *r = NULL;
	struct analysis *a = NULL;
	bool to_stdout = !out_path || strcmp(out_path, "-") == 0;
	FILE *out = stdout;
	char err[512];
	int e;

	e = recording__load(path, &r, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot read %s: %s\n", path, err);
		return e;
	}
	if (r->truncated)
		fprintf(stderr, "inferscope-bpf: warning: %s is truncated: %s; analyzing what was recorded "
			"before that point\n", path, r->truncation);
	recording__sort_events(r);
	e = analysis__run(r, &a);
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot analyze %s: %s\n", path, strerror(-e));
		goto out;
	}
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
	recording__free(r);
	return e;
}
