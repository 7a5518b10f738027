/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text from a recording (comm, command lines, file and kernel names: any
 * bytes) made safe for the report writers.
 */
#ifndef INFERSCOPE_TEXT_H
#define INFERSCOPE_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (at most left bytes), 0 if none. */
size_t text__utf8_seq(const unsigned char *p, size_t left);

/* Writes the first maxlen bytes of s (up to a NUL) as HTML text, safe in
 * an element and in a quoted attribute: & < > " ' escaped, control
 * characters as spaces, bytes that are not UTF-8 as U+FFFD. -EIO when the
 * stream fails. */
int text__html(FILE *f, const char *s, size_t maxlen);

/* The same as Markdown text (a table cell, a sentence): its specials
 * backslash-escaped, control characters as spaces. */
int text__markdown(FILE *f, const char *s, size_t maxlen);

#endif
