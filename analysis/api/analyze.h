/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The analysis as one call: recording -> summary -> report. This folder
 * (analysis/api/) holds what other parts may include of the analysis; the
 * CLI (user/cli/main.c: `analyze`, and `-p`, which records and then analyzes
 * in one process) sees nothing else of it.
 */
#ifndef INFERSCOPE_ANALYZE_H
#define INFERSCOPE_ANALYZE_H

#include <stddef.h>
#include <stdio.h>
#include "out_file.h"

enum report_format { REPORT_MD, REPORT_JSON, REPORT_HTML, REPORT_PERFETTO };

/* Writes the report of the recording at path to out_path ("-" or NULL:
 * stdout), a new file readable as share says (NULL: by its owner only;
 * lib/out_file.h) that takes its name once complete. 0, or -errno after
 * printing why. */
int analyze__run(const char *path, enum report_format fmt, const char *out_path, const struct out_file_share *share);

/* The same for the n inputs, each a recording or a directory (its regular
 * *.isr files, sorted by name): one recording is analyze__run's report;
 * several are analysed each as alone, then their NCCL ranks lined up
 * across them (docs/outputs.md), all in one report. 0, or -errno after
 * printing why (naming the file that cannot be read). */
int analyze__run_many(const char *const *inputs, size_t n, enum report_format fmt, const char *out_path,
		      const struct out_file_share *share);

/* Writes what changed from the recording at base_path to the one at
 * new_path (docs/outputs.md; REPORT_MD, REPORT_JSON or REPORT_HTML) to
 * out_path. 0, or -errno after printing why. */
int analyze__diff(const char *base_path, const char *new_path, enum report_format fmt, const char *out_path,
		  const struct out_file_share *share);

/* Exports the n recordings at paths into the SQLite database at db_path
 * (created, or added to: each recording gets the next id of its
 * `recordings` table; docs/sql.md). 0, or -errno after printing why. */
int analyze__export_sqlite(const char *const *paths, size_t n, const char *db_path);

/* The metadata of the recording at path (versions, host, window, events by
 * type, drops; nothing the targets wrote) as text to out, for a support
 * bundle. 0, or -errno after writing why it cannot be read. */
int analyze__describe(const char *path, FILE *out);

#endif
