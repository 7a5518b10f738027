/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A progress line on standard error for work that may take a while
 * (analyze, diff, export): only when standard error is a terminal, from
 * 2 s of work on, refreshed four times a second, erased when the work
 * ends. It says how long the work has run and how much of its inputs the
 * process has read (/proc/self/io; an analysis reads a recording two or
 * three times).
 *
 * While it runs, a thread owns the terminal: what the process writes to
 * standard error, and to standard output when that is a terminal, goes
 * through it, and it erases the line before passing that on, so that the
 * line never mixes with a message or a report.
 */
#ifndef INFERSCOPE_PROGRESS_H
#define INFERSCOPE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#define PROGRESS_AFTER_S	2.0

struct progress;

/* Starts the line of `who` ("inferscope-bpf analyze") working on the n
 * files at paths. NULL, and nothing done, when standard error is not a
 * terminal, when quiet, or when the line cannot be set up. */
struct progress *progress__begin(const char *who, const char *const *paths, size_t n, bool quiet);
/* Erases the line, lets the last output through, gives the terminal
 * back. Nothing for NULL. */
void progress__end(struct progress *p);

#endif
