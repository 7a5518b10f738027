/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The analysis as stages: one pass over the events in time order (pass.h)
 * feeds the timeline (timeline.h), the attribution of idle and thread time
 * (attribution.h) and every rule (rules.h); the rules' findings come out
 * ranked by cost. The rules read the summary and the Python report (made
 * on the same pass) only when they finish. Pure: a function of the events.
 */
#ifndef INFERSCOPE_EXPLAIN_H
#define INFERSCOPE_EXPLAIN_H

#include "recording.h"
#include "summary.h"
#include "py_report.h"
#include "findings.h"
#include "attribution.h"
#include "timeline.h"
#include "series.h"
#include "steps.h"
#include "waits.h"
#include "verdict.h"

struct rule_ctx;
struct ranks;

struct explain {
	struct findings findings;	/* ranked, most cost first */
	struct attribution *attr;	/* the metrics the findings are drawn from */
	struct waits *waits;		/* what the launching threads waited for */
	struct timeline *tl;
	struct series *series;		/* the charts' time series */
	struct steps *steps;		/* NVTX ranges, the steps and the slowest of them */
	struct pass *own_pass;		/* explain__run's */
	struct rule_ctx *ctx;		/* the rules' */
	void **state;			/* each rule's */
	char verdict[VERDICT_LEN];	/* with no finding of weight, what the job's time says (analysis/rules/verdict.h); may be empty */
};

/* The explanation as a stage of pass p (which must outlive it): fed
 * every event of p in its order. NULL + errno. */
struct explain *explain__new(const struct pass *p);
/* 0 or -errno. */
int explain__event(struct explain *e, const struct pass_event *ev);
/* After the last event: the findings, from what the pass showed and sum
 * and py (the summary and Python report of the same events; py may be
 * NULL). 0 or -errno. */
int explain__finish(struct explain *e, const struct summary *sum, const struct py_report *py);

/* Explains r (its events in memory; sum and py computed from it, py may be
 * NULL) in a pass of its own. 0 or -errno. */
int explain__run(const struct recording *r, const struct summary *sum, const struct py_report *py,
		 struct explain **out);
void explain__free(struct explain *e);
/* The rules of ranks (rules.h: finish_ranks), on the ranks of one
 * recording or several: their findings to out (ranked after). 0 or
 * -errno. */
int explain__finish_ranks(const struct ranks *r, struct findings *out);

/* The ids of every rule, in the order they run (for docs and tests). */
size_t explain__rule_count(void);
const char *explain__rule_id(size_t i);
/* The heading of rule id's findings ("GPU idle, waiting for the host"). */
const char *explain__rule_title(const char *id);

#endif
