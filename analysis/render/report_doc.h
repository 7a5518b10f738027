/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The blocks the reports for people are made of (headings, paragraphs,
 * quotes, lists, code blocks, tables), written in Markdown or in HTML from
 * the same calls, as bpftool's output layer speaks text or JSON: a section
 * is written once and each format says it in its own syntax. The HTML
 * report builds its evidence tables this way from the analysis, never from
 * the Markdown's text.
 *
 * Literal text (doc__printf, headers) is the writer's own; recorded text
 * (names, paths) goes through doc__text, which escapes it for the format
 * (lib/text.h). The first failure is kept in err and ends the writing.
 */
#ifndef INFERSCOPE_REPORT_DOC_H
#define INFERSCOPE_REPORT_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum doc_format {
	DOC_MD,
	DOC_HTML,
};

/* The blocks of doc__open; headings are doc__heading. */
enum doc_block {
	DOC_NONE,
	DOC_PARA,
	DOC_QUOTE,
	DOC_LIST,	/* its items are doc__item */
	DOC_CODE,	/* its lines are doc__code_line */
	DOC_HEADING,
};

/* A column of a table: its header (literal text) and whether it holds
 * numbers (right-aligned). */
struct doc_col {
	const char *head;
	bool num;
};

/* The columns of a table given as an array. */
#define DOC_NCOLS(cols) (sizeof(cols) / sizeof((cols)[0]))

struct doc {
	FILE *f;
	int err;
	enum doc_format fmt;
	int shift;		/* HTML: added to heading levels */
	enum doc_block block;	/* the block open */
	int level;		/* the open heading's level, shift included */
	bool item;		/* a list item is open */
	const struct doc_col *cols;	/* the table being written */
	size_t ncols, col;
	bool row;		/* a row is open */
};

__attribute__((format(printf, 2, 3)))
void doc__printf(struct doc *d, const char *fmt, ...);
void doc__text(struct doc *d, const char *s, size_t maxlen);
/* A code span of literal text: `text`. */
__attribute__((format(printf, 2, 3)))
void doc__code(struct doc *d, const char *fmt, ...);
/* A code span of a recorded name, a ` or | in it written as _. */
void doc__code_name(struct doc *d, const char *name);
/* Strong text begins (open) or ends. */
void doc__strong(struct doc *d, bool open);

/* A heading of level 1 to 3 (before the HTML shift): its text follows,
 * doc__close ends it. */
void doc__heading(struct doc *d, int level);
/* A heading of literal text, whole. */
__attribute__((format(printf, 3, 4)))
void doc__headingf(struct doc *d, int level, const char *fmt, ...);
void doc__open(struct doc *d, enum doc_block block);
/* Ends the block or heading open. */
void doc__close(struct doc *d);
/* A paragraph of literal text, whole. */
__attribute__((format(printf, 2, 3)))
void doc__para(struct doc *d, const char *fmt, ...);
/* The next item of the DOC_LIST open. */
void doc__item(struct doc *d);
/* A line of the DOC_CODE open: recorded text, kept as it is. */
void doc__code_line(struct doc *d, const char *s, size_t maxlen);

/* A table of n columns (cols must outlive it): its header, then rows of
 * cells. doc__row opens a row at its first cell, doc__cell moves to the
 * next (so does a '\t' that doc__printf writes in a row: "%u\t%u"),
 * doc__row_end ends the row, doc__table_end the table. */
void doc__table(struct doc *d, const struct doc_col *cols, size_t n);
void doc__row(struct doc *d);
void doc__cell(struct doc *d);
void doc__row_end(struct doc *d);
void doc__table_end(struct doc *d);

/* 0, or the first failure; -EIO when the stream failed. */
int doc__finish(struct doc *d);

#endif
