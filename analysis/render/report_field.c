// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fields of a report's table as JSON values and as table cells
 * (report_field.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "report_field.h"
#include "findings.h"

static const void *member(const void *row, const struct report_field *f)
{
	return (const char *)row + f->off;
}

/* An unsigned integer of size bytes (a bool is one). */
static __u64 uint_at(const void *p, size_t size)
{
	switch (size) {
	case 1:
		return *(const __u8 *)p;
	case 2:
		return *(const __u16 *)p;
	case 4:
		return *(const __u32 *)p;
	default:
		return *(const __u64 *)p;
	}
}

static bool flag_set(const void *row, struct report_flag fl)
{
	return fl.at && uint_at((const char *)row + fl.at - 1, fl.size);
}

/* An RF_REAL or RF_SECONDS field's value: seconds in unit 1e9. */
static double field_real(const void *row, const void *ctx, const struct report_field *f, double unit)
{
	if (f->kind == RF_SECONDS)
		return f->calc ? f->calc(row, ctx, unit) : (double)*(const __u64 *)member(row, f) / unit;
	return f->calc ? f->calc(row, ctx, 1) : *(const double *)member(row, f);
}

static const char *field_text(const void *row, const struct report_field *f)
{
	return f->kind == RF_TEXT ? *(const char *const *)member(row, f) : member(row, f);
}

void report__field_cols(const struct report_field *f, size_t nf, struct doc_col *cols, size_t *n)
{
	for (size_t i = 0; i < nf; i++)
		if (f[i].head)
			cols[(*n)++] = (struct doc_col){ f[i].head, f[i].kind != RF_TEXT && f[i].kind != RF_CHARS };
}

static void field_cell(struct doc *d, const void *row, const void *ctx, const struct report_field *f)
{
	const void *p = member(row, f);

	if (f->known.at && !flag_set(row, f->known)) {
		doc__printf(d, "-");
		return;
	}
	if (flag_set(row, f->est))
		doc__printf(d, "≈");
	switch (f->kind) {
	case RF_UINT:
		if (f->fmt)
			doc__printf(d, f->fmt, (double)uint_at(p, f->size) / f->scale);
		else
			doc__printf(d, "%" PRIu64, (uint64_t)uint_at(p, f->size));
		break;
	case RF_INT:
		doc__printf(d, "%d", *(const int *)p);
		break;
	case RF_BOOL:
		doc__printf(d, "%s", *(const bool *)p ? "yes" : "no");
		break;
	case RF_REAL:
	case RF_SECONDS:
		doc__printf(d, f->fmt, field_real(row, ctx, f, f->scale));
		break;
	case RF_HEX:
		doc__printf(d, "0x%" PRIx64, (uint64_t)*(const __u64 *)p);
		break;
	default:
		if (f->code)
			doc__code_name(d, field_text(row, f));
		else
			doc__text(d, field_text(row, f), f->kind == RF_CHARS ? f->size : SIZE_MAX);
		break;
	}
	if (f->then) {
		doc__printf(d, "%s", f->then->join ? f->then->join : "");
		field_cell(d, row, ctx, f->then);
	}
}

static void field_cells(struct doc *d, const void *row, const void *ctx, const struct report_field *f, size_t nf,
			bool move)
{
	for (size_t i = 0; i < nf; i++) {
		if (!f[i].head)
			continue;
		if (move)
			doc__cell(d);
		move = true;
		field_cell(d, row, ctx, &f[i]);
	}
}

void report__field_cells(struct doc *d, const void *row, const void *ctx, const struct report_field *f, size_t nf)
{
	field_cells(d, row, ctx, f, nf, true);
}

void report__field_row(struct doc *d, const void *row, const void *ctx, const struct report_field *f, size_t nf)
{
	doc__row(d);
	field_cells(d, row, ctx, f, nf, false);
}

static json_t *field_json(const void *row, const void *ctx, const struct report_field *f)
{
	const void *p = member(row, f);
	char buf[24];
	__u64 u;

	if (f->known.at && !flag_set(row, f->known))
		return json_null();
	switch (f->kind) {
	case RF_UINT:
		u = uint_at(p, f->size);
		return json_integer(u > INT64_MAX ? INT64_MAX : (json_int_t)u);
	case RF_INT:
		return json_integer(*(const int *)p);
	case RF_BOOL:
		return json_boolean(*(const bool *)p);
	case RF_REAL:
	case RF_SECONDS:
		return json_real(field_real(row, ctx, f, 1e9));
	case RF_HEX:
		snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t)*(const __u64 *)p);
		return json_string(buf);
	default:
		return ev_text(field_text(row, f), f->kind == RF_CHARS ? f->size : SIZE_MAX);
	}
}

int report__field_json(json_t *o, const void *row, const void *ctx, const struct report_field *f, size_t nf)
{
	for (size_t i = 0; i < nf; i++)
		if (f[i].key && json_object_set_new(o, f[i].key, field_json(row, ctx, &f[i])))
			return -ENOMEM;
	return 0;
}

json_t *report__field_rows(const void *rows, size_t n, size_t size, const void *ctx, const struct report_field *f,
			   size_t nf)
{
	json_t *arr = json_array(), *o;

	for (size_t i = 0; arr && i < n; i++) {
		o = json_object();
		if (json_array_append_new(arr, o) ||
		    report__field_json(o, (const char *)rows + i * size, ctx, f, nf)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
