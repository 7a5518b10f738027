/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Everything a report shows, computed once from a recording in one pass
 * over its events (pass.h): the summary (per thread, CUDA, GPU tables), the
 * Python stacks, and the explanation (ranked findings and the attribution
 * they come from), all fed each event in turn; then the rules, which read
 * the finished summary and Python report. Every renderer (report.h) is a
 * function of this and nothing else.
 */
#ifndef INFERSCOPE_ANALYSIS_H
#define INFERSCOPE_ANALYSIS_H

#include "recording.h"
#include "pass.h"
#include "summary.h"
#include "py_report.h"
#include "explain.h"
#include "nccl.h"
#include "ranks.h"

struct analysis {
	const struct recording *r;	/* the pass's */
	struct pass *pass;
	struct summary *sum;
	struct py_report *py;
	struct explain *ex;
	struct nccl_calls nccl;		/* its NCCL calls */
	struct ranks *ranks;		/* its ranks side by side: NULL unless two or more processes made collectives */
	__u64 out_of_order;		/* pass__out_of_order */
	__u64 gpu_clock_pairs_cut;	/* pass__clock_pairs_cut */
	__u64 thread_events_cut;	/* pass__thread_events_cut */
};

/* Analyzes the events of pass p. On success the analysis owns p (freed
 * with it); on error p stays the caller's (pass__error(p) says why when
 * the pass failed). 0 or -errno. */
int analysis__run_pass(struct pass *p, struct analysis **out);
/* Analyzes r (its events in memory, in file order). r must outlive the
 * result. 0 or -errno. */
int analysis__run(const struct recording *r, struct analysis **out);
void analysis__free(struct analysis *a);
/* The summary of r alone (its events in memory; its stages only, the GPU
 * tables included), in a pass of its own. 0 or -errno. */
int analysis__summary(const struct recording *r, struct summary **out);

/* Several recordings analysed together (`analyze FILE FILE...`): each
 * one's analysis, the NCCL ranks lined up across them on CLOCK_REALTIME
 * (ranks.h) and the straggler findings that only the recordings together
 * show. The renderers of a set (report.h) show the ranks first, then each
 * recording's own report. */
struct analysis_set {
	const struct analysis *const *a;	/* the caller's, one per recording, in the order given */
	const char *const *names;	/* their files */
	size_t n;
	struct ranks *ranks;		/* across them: NULL unless two or more ranks made collectives */
	struct findings findings;	/* across them: the straggler's, ranked */
};

/* Lines up the ranks of s->a[0..n). 0, or -errno with err written. */
int analysis_set__compute(struct analysis_set *s, char *err, size_t errlen);
/* Frees what analysis_set__compute made (not the analyses). */
void analysis_set__clear(struct analysis_set *s);

#endif
