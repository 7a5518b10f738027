/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fields of a report's table, described once for every format: each
 * a value of the row's struct, read at its offset or computed, as the JSON
 * writes it (key) and, with a head, as a column of the Markdown and HTML
 * table (report_doc.h). A table is described in the order of
 * docs/report-json.md; where its columns come in another order, or among
 * values a writer writes itself, it is several arrays, each in the same
 * order in both.
 *
 * How a value is written follows from the member's type (RF_KIND: a
 * compile error for a type it does not know). RF_S fields are nanoseconds:
 * seconds in the JSON, fmt of ns / scale in a column. A computed field
 * (RF_CALC, RF_CALC_S) gets its value from a function of the row and of
 * what the table's rows share (ctx). Options follow a field's arguments
 * as designators: .est = RF_FLAG(type, member) marks the column's value
 * ≈ (estimated) where the member is true; .known = RF_FLAG(type, member)
 * makes the value none (null in the JSON, '-' in the column) where the
 * member is 0; .code = true shows text as code; .then = &field writes
 * that field's value too in the column's cell, after its .join ("1.2
 * (0.3)", "12/0"): a cell of two figures, which the JSON has as two keys
 * of their own.
 */
#ifndef INFERSCOPE_REPORT_FIELD_H
#define INFERSCOPE_REPORT_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <jansson.h>

#include "report_doc.h"

enum report_field_kind {
	RF_UINT,	/* __u16, __u32, __u64, size_t; with a fmt, the column's fmt of value / scale */
	RF_INT,
	RF_BOOL,	/* true or false; "yes" or "no" in a column */
	RF_REAL,	/* a double: the column's fmt of it */
	RF_SECONDS,	/* nanoseconds (__u64, or a calc's ns / unit) */
	RF_HEX,		/* a handle (__u64): "0x..." (JSON readers lose integers above 2^53) */
	RF_TEXT,	/* recorded text, a char * */
	RF_CHARS,	/* recorded text, a char array */
};

/* A computed value: RF_SECONDS ones in nanoseconds / unit (1e9 for the
 * JSON, the column's scale), RF_REAL ones as they are (unit 1). */
typedef double report_calc(const void *row, const void *ctx, double unit);

/* A bool or __u64 member of the row, as a condition: at is 1 + its
 * offset (0: none). */
struct report_flag {
	size_t at, size;
};

struct report_field {
	const char *key;	/* its JSON key; NULL: the column's only */
	enum report_field_kind kind;
	size_t off, size;	/* the member, unless calc */
	report_calc *calc;
	const char *head;	/* its column; NULL: the JSON's only */
	const char *fmt;	/* RF_REAL, RF_SECONDS: the column's printf of one double */
	double scale;
	struct report_flag est, known;
	bool code;
	/* a cell of two figures: then's value after this one's, in the same
	 * cell, then->join before it (then is a field of the column only, its
	 * head and key unused) */
	const struct report_field *then;
	const char *join;
};

#define RF_MEMBER(type, member) (((const type *)0)->member)
/* On the targets (LP64), size_t is neither __u32 nor __u64. */
#define RF_KIND(x)                                                                                     \
	_Generic((x), __u16: RF_UINT, __u32: RF_UINT, __u64: RF_UINT, size_t: RF_UINT, int: RF_INT, \
		 bool: RF_BOOL, double: RF_REAL)
#define RF_FLAG(type, member) \
	{ 1 + offsetof(type, member), _Generic(RF_MEMBER(type, member), bool: sizeof(bool), __u64: sizeof(__u64)) }
#define RF_AT(type, member) .off = offsetof(type, member), .size = sizeof(RF_MEMBER(type, member))

/* A field of the JSON only. */
#define JF(type, member, k, ...) \
	{ .key = (k), .kind = RF_KIND(RF_MEMBER(type, member)), RF_AT(type, member), __VA_ARGS__ }
#define JF_S(type, member, k, ...) \
	{ .key = (k), .kind = _Generic(RF_MEMBER(type, member), __u64: RF_SECONDS), RF_AT(type, member), __VA_ARGS__ }
#define JF_HEX(type, member, k, ...) \
	{ .key = (k), .kind = _Generic(RF_MEMBER(type, member), __u64: RF_HEX), RF_AT(type, member), __VA_ARGS__ }
/* A field of both (k NULL: of the column only): a count, nanoseconds
 * shown as fmt of ns / scale. */
#define RF(type, member, k, h, ...) \
	{ .key = (k), .kind = RF_KIND(RF_MEMBER(type, member)), RF_AT(type, member), .head = (h), __VA_ARGS__ }
#define RF_S(type, member, k, h, f, s, ...)                                                                    \
	{ .key = (k), .kind = _Generic(RF_MEMBER(type, member), __u64: RF_SECONDS), RF_AT(type, member), .head = (h), \
	  .fmt = (f), .scale = (s), __VA_ARGS__ }
/* A count shown in its column as fmt of value / s (bytes as MiB). */
#define RF_SCALED(type, member, k, h, f, s, ...)                                                        \
	{ .key = (k), .kind = _Generic(RF_MEMBER(type, member), __u64: RF_UINT), RF_AT(type, member), .head = (h), \
	  .fmt = (f), .scale = (s), __VA_ARGS__ }
/* Recorded text: a char *, a char array. */
#define RF_T(type, member, k, h, ...)                                                                  \
	{ .key = (k), .kind = _Generic(RF_MEMBER(type, member), char *: RF_TEXT, const char *: RF_TEXT), \
	  RF_AT(type, member), .head = (h), __VA_ARGS__ }
#define RF_A(type, member, k, h, ...)                                                                       \
	{ .key = (k),                                                                                        \
	  .kind = _Generic(&RF_MEMBER(type, member), const char(*)[sizeof(RF_MEMBER(type, member))]: RF_CHARS), \
	  RF_AT(type, member), .head = (h), __VA_ARGS__ }
/* Computed: a real, nanoseconds. */
#define RF_CALC(fn, k, h, f, ...) { .key = (k), .kind = RF_REAL, .calc = (fn), .head = (h), .fmt = (f), __VA_ARGS__ }
#define RF_CALC_S(fn, k, h, f, s, ...) \
	{ .key = (k), .kind = RF_SECONDS, .calc = (fn), .head = (h), .fmt = (f), .scale = (s), __VA_ARGS__ }

#define REPORT_NFIELDS(fields) (sizeof(fields) / sizeof((fields)[0]))

/* The columns of the fields that have one, appended to cols at *n. */
void report__field_cols(const struct report_field *f, size_t nf, struct doc_col *cols, size_t *n);
/* The cells of row's fields that have a column, each after a move to the
 * next cell. */
void report__field_cells(struct doc *d, const void *row, const void *ctx, const struct report_field *f, size_t nf);
/* A row whose first cells are row's fields that have a column: the
 * caller may add cells, then ends it. */
void report__field_row(struct doc *d, const void *row, const void *ctx, const struct report_field *f, size_t nf);
/* Sets row's fields that have a key in o: 0 or -ENOMEM. */
int report__field_json(json_t *o, const void *row, const void *ctx, const struct report_field *f, size_t nf);
/* An array of one object a row, each of the fields f of the rows (size
 * bytes apart); NULL when out of memory. */
json_t *report__field_rows(const void *rows, size_t n, size_t size, const void *ctx, const struct report_field *f,
			   size_t nf);

#define REPORT_COLS(fields, cols, n) report__field_cols((fields), REPORT_NFIELDS(fields), (cols), (n))
#define REPORT_CELLS(d, row, ctx, fields) report__field_cells((d), (row), (ctx), (fields), REPORT_NFIELDS(fields))
#define REPORT_ROW(d, row, ctx, fields) report__field_row((d), (row), (ctx), (fields), REPORT_NFIELDS(fields))
#define REPORT_JSON(o, row, ctx, fields) report__field_json((o), (row), (ctx), (fields), REPORT_NFIELDS(fields))
#define REPORT_ROWS(rows, n, ctx, fields) \
	report__field_rows((rows), (n), sizeof(*(rows)), (ctx), (fields), REPORT_NFIELDS(fields))

#endif
