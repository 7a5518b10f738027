/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * KTAP output, as the kernel's selftests print it
 * (Documentation/dev-tools/ktap.rst): a version line, the plan "1..N", one
 * "ok N name" or "not ok N name" per test, numbered from 1 in order,
 * "# " diagnostic lines, and kselftest's closing "# Totals:" line. A
 * writer opened on no stream prints nothing, so that callers need not
 * test whether KTAP was asked for.
 */
#ifndef INFERSCOPE_KTAP_H
#define INFERSCOPE_KTAP_H

#include <stdbool.h>
#include <stdio.h>

struct ktap {
	FILE *out;		/* NULL: print nothing */
	unsigned int plan;	/* tests announced */
	unsigned int next;	/* number of the next test line */
	unsigned int pass, fail, skip;
};

/* "KTAP version 1" and the plan of `plan` tests on out (NULL: nothing). */
void ktap__begin(struct ktap *k, FILE *out, unsigned int plan);
/* One "# " line per line of the formatted text. */
void ktap__diag(struct ktap *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next test's line. A name loses what KTAP would misread ('#',
 * newlines: replaced by '_'). */
void ktap__result(struct ktap *k, bool ok, const char *name);
/* The next test's line, skipped: "ok N name # SKIP reason". */
void ktap__skip(struct ktap *k, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The totals line; 0 when every planned test printed a line and none
 * failed, 1 otherwise (a test line missing counts as an error). */
int ktap__end(struct ktap *k);

#endif
