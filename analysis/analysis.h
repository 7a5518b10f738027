/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Everything a report shows, computed once from a recording: the summary
 * (per thread, CUDA, GPU tables), the Python stacks, and the explanation
 * (ranked findings and the attribution they come from). Every renderer
 * (report.h) is a function of this and nothing else.
 */
#ifndef INFERSCOPE_ANALYSIS_H
#define INFERSCOPE_ANALYSIS_H

#include "recording.h"
#include "summary.h"
#include "py_report.h"
#include "explain.h"

struct analysis {
	const struct recording *r;
	struct summary *sum;
	struct py_report *py;
	struct explain *ex;
};

/* Analyzes r (its events sorted: recording__sort_events). r must outlive
 * the result. 0 or -errno. */
int analysis__run(const struct recording *r, struct analysis **out);
void analysis__free(struct analysis *a);

#endif
