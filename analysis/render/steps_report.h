/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The steps and NVTX ranges (steps.h) in each report format: a JSON value
 * (docs/report-json.md, "steps"), and a section of the Markdown and HTML
 * reports (report_doc.h). The Perfetto trace writes
 * its NVTX slices from the events themselves (perfetto.c).
 */
#ifndef INFERSCOPE_STEPS_REPORT_H
#define INFERSCOPE_STEPS_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "steps.h"

/* The JSON value of "steps"; NULL when out of memory. */
json_t *steps_report__json(const struct steps_result *r);
/* "Steps" in the Markdown or HTML report (report_doc.h): what they are,
 * the slowest against the median and what grew, the per-step table (at
 * most max_rows rows), the NVTX ranges and marks. Nothing when there are
 * neither steps nor NVTX events. A failure is in d->err. */
struct doc;
void steps_report__doc(struct doc *d, const struct steps_result *r, size_t max_rows);
/* One sentence: "step 12 took 3.3x the median (+30.1 ms): blocked +30.0 ms". */
void steps_report__slow_sentence(const struct steps_result *r, const struct step_slow *sl, char *buf,
				 size_t len);
/* The category name of a difference ("launches" for TL_CAT_MAX). */
const char *steps_report__diff_name(enum tl_cat c);

#endif
