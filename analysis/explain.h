/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The analysis as stages: one pass over the events in time order (pass.h)
 * feeds the timeline (timeline.h), the attribution of idle and thread time
 * (attribution.h) and every rule (rules.h); the rules' findings come out
 * ranked by cost. Pure: a function of the recording.
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

struct explain {
	struct findings findings;	/* ranked, most cost first */
	struct attribution *attr;	/* the metrics the findings are drawn from */
	struct timeline *tl;
	struct series *series;		/* the charts' time series */
	struct steps *steps;		/* NVTX ranges, the steps and the slowest of them */
	struct pass *pass;
};

/* Explains r (sum and py computed from it; py may be NULL). 0 or -errno. */
int explain__run(const struct recording *r, const struct summary *sum, const struct py_report *py,
		 struct explain **out);
void explain__free(struct explain *e);

/* The ids of every rule, in the order they run (for docs and tests). */
size_t explain__rule_count(void);
const char *explain__rule_id(size_t i);
/* The heading of rule id's findings ("GPU idle, waiting for the host"). */
const char *explain__rule_title(const char *id);

#endif
