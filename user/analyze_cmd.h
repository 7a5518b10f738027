/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `analyze`: recording -> summary -> report, wired for the CLI. */
#ifndef INFERSCOPE_ANALYZE_CMD_H
#define INFERSCOPE_ANALYZE_CMD_H

enum report_format { REPORT_MD, REPORT_JSON };

/* Writes the report of the recording at path to out_path ("-" or NULL:
 * stdout). 0, or -errno after printing why. */
int analyze__run(const char *path, enum report_format fmt, const char *out_path);

#endif
