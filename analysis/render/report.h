/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Report writers, each a function of the analysis (analysis.h). The JSON
 * report is a documented contract (docs/report-json.md, schema_version
 * below); Markdown and HTML are for people; the Perfetto trace is for its
 * viewer (docs/outputs.md).
 */
#ifndef INFERSCOPE_REPORT_H
#define INFERSCOPE_REPORT_H

#include <stdio.h>
#include "analysis.h"

struct doc;

#define REPORT_SCHEMA_VERSION 2
/* The report of several recordings (report__write_json_set). */
#define REPORT_SET_SCHEMA_VERSION 1

/* What the findings section says without a finding: of one recording, and
 * across several (each recording's own are in its report). */
#define REPORT_NO_FINDING                                                              \
	"No finding: nothing cost this job a noticeable share of its time (the thresholds " \
	"are in docs/rules.md)."
#define REPORT_SET_NO_FINDING                                                                 \
	"Nothing found that needs the recordings together (a rank that holds up the " \
	"others); each recording's own findings are in its report below."

/* 0 or -errno (-EIO when the stream fails). */
int report__write_markdown(FILE *f, const struct analysis *a);
int report__write_json(FILE *f, const struct analysis *a);
/* The report's tables after its findings (steps, ranks, threads, CUDA,
 * GPU, GIL, Python stacks, event counts), written to d in its format
 * (report_doc.h): the Markdown report's and the HTML report's evidence
 * tables. 0 or -errno, d->err. */
int report__doc_details(struct doc *d, const struct analysis *a);
/* The ranks section (ranks.h): the alignment, one row per rank, the
 * communicators. */
int report__doc_ranks(struct doc *d, const struct ranks *r);
/* A self-contained HTML page (docs/outputs.md): findings, charts of the
 * series (series.h), then the evidence tables. */
int report__write_html(FILE *f, const struct analysis *a);
/* A page of the HTML report's look around what body writes to d, an HTML
 * writer (report_doc.h): the diff's HTML. body returns 0 or -errno. */
int report__write_html_page(FILE *f, const char *title, int (*body)(struct doc *d, const void *arg),
			    const void *arg);
/* The native Perfetto trace (docs/outputs.md, perfetto.h), written packet
 * by packet from a pass of its own over a's recording. */
int report__write_perfetto(FILE *f, const struct analysis *a);

/* Several recordings analysed together (analysis.h, struct analysis_set):
 * the headline (report__set_headline), the ranks lined up across them and
 * their straggler findings first, then
 * each recording's own report. Markdown: each report under a heading of
 * its file's name. JSON (docs/report-json.md, REPORT_SET_SCHEMA_VERSION):
 * one object with "findings", "ranks", "collectives" and "recordings",
 * each recording's file and complete report. HTML: one page, a landing
 * table of the ranks linking to each recording's section. Perfetto: one
 * trace of every recording's processes on the first one's clock. */
int report__write_markdown_set(FILE *f, const struct analysis_set *set);
/* The sentence that opens every report of a set: the findings across the
 * recordings, then each recording's count of findings and its first ("a.isr
 * has 5 findings, first ..."; "No finding in any ..." only when none has
 * one). Plain text, the caller's to free; NULL + errno. */
char *report__set_headline(const struct analysis_set *set);
int report__write_json_set(FILE *f, const struct analysis_set *set);
int report__write_html_set(FILE *f, const struct analysis_set *set);
int report__write_perfetto_set(FILE *f, const struct analysis_set *set);

#endif
