/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text from a recording or from /proc (comm, command lines, file, function,
 * kernel and NVTX names: any bytes) made safe for an output: the one path
 * every writer takes for such a string.
 *
 * The same two rules everywhere: a byte that does not start a valid UTF-8
 * sequence becomes U+FFFD, and a control character (C0, DEL, C1) becomes
 * the visible text \xNN (\u00NN for C1), so that no name can end a line,
 * a table row or a code block, or reach a terminal as an escape sequence.
 * Then each output escapes its own specials. TEXT_UTF8 alone keeps the
 * control characters: for JSON, whose library escapes them.
 */
#ifndef INFERSCOPE_LIB_TEXT_H
#define INFERSCOPE_LIB_TEXT_H

#include <stddef.h>
#include <stdio.h>

enum text_out {
	TEXT_TERM,	/* a terminal or a log line: nothing more */
	TEXT_MD,	/* Markdown text (a table cell, a sentence): \ | ` * < > [ ] backslash-escaped */
	TEXT_MD_PROSE,	/* Markdown prose that keeps its `code spans` (a finding's text): the same but ` */
	TEXT_MD_CODE,	/* a line of a Markdown code block: nothing more */
	TEXT_HTML,	/* HTML text, also in a quoted attribute: & < > " ' as entities */
	TEXT_PROM,	/* a Prometheus label value, between its quotes: \ and " backslash-escaped */
	TEXT_UTF8,	/* valid UTF-8 only, control characters kept (JSON) */
};

/* Length of the valid UTF-8 sequence at p (at most left bytes), 0 if none. */
size_t text__utf8_seq(const unsigned char *p, size_t left);

/* Writes the first maxlen bytes of s (up to a NUL) for the output how.
 * 0, or -EIO when the stream fails. */
int text__write(FILE *f, const char *s, size_t maxlen, enum text_out how);

/* The same as a new NUL-terminated string (free() it); its length in *len
 * when len is not NULL. NULL with errno set when out of memory. */
char *text__dup(const char *s, size_t maxlen, enum text_out how, size_t *len);

#endif
