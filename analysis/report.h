/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Report writers. The JSON report is a documented contract
 * (docs/report-json.md, schema_version below); Markdown is for people.
 */
#ifndef INFERSCOPE_REPORT_H
#define INFERSCOPE_REPORT_H

#include <stdio.h>
#include "analysis.h"

#define REPORT_SCHEMA_VERSION 2

/* 0 or -errno (-EIO when the stream fails). */
int report__write_markdown(FILE *f, const struct analysis *a);
int report__write_json(FILE *f, const struct analysis *a);

#endif
