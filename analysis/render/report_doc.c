// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The blocks of the reports for people, in Markdown or HTML (report_doc.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_doc.h"
#include "text.h"

static bool html(const struct doc *d)
{
	return d->fmt == DOC_HTML;
}

/* The format's own syntax, as it is. */
__attribute__((format(printf, 2, 3)))
static void raw(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	if (d->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(d->f, fmt, ap) < 0)
		d->err = -EIO;
	va_end(ap);
}

/* Text of the writer's or the recording's, escaped for HTML; Markdown
 * writes the writer's own as it is. */
static void text(struct doc *d, const char *s, size_t len, enum text_out md_mode)
{
	if (!d->err)
		d->err = text__write(d->f, s, len, html(d) ? TEXT_HTML : md_mode);
}

/* A printf into a buffer of its own: NULL when out of memory. */
static char *vformat(const char *fmt, va_list ap)
{
	va_list again;
	char *buf;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0)
		return NULL;
	buf = malloc((size_t)n + 1);
	if (buf)
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
	return buf;
}

/* Literal text: Markdown's as it is, HTML's escaped; in a row, a '\t'
 * moves to the next cell. */
static void literal(struct doc *d, const char *s)
{
	while (!d->err && *s) {
		size_t n = d->row ? strcspn(s, "\t") : strlen(s);

		if (html(d))
			text(d, s, n, TEXT_MD);
		else if (n && fwrite(s, 1, n, d->f) != n)
			d->err = -EIO;
		s += n;
		if (*s == '\t') {
			doc__cell(d);
			s++;
		}
	}
}

/* A printf of literal text. */
static void vliteral(struct doc *d, const char *fmt, va_list ap)
{
	char *s;

	if (d->err)
		return;
	s = vformat(fmt, ap);
	if (!s) {
		d->err = -ENOMEM;
		return;
	}
	literal(d, s);
	free(s);
}

void doc__printf(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vliteral(d, fmt, ap);
	va_end(ap);
}

void doc__text(struct doc *d, const char *s, size_t maxlen)
{
	text(d, s, maxlen, TEXT_MD);
}

void doc__code(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	raw(d, html(d) ? "<code>" : "`");
	va_start(ap, fmt);
	vliteral(d, fmt, ap);
	va_end(ap);
	raw(d, html(d) ? "</code>" : "`");
}

void doc__code_name(struct doc *d, const char *name)
{
	char *t = text__dup(name, SIZE_MAX, TEXT_MD_CODE, NULL);

	for (char *p = t; p && *p; p++)
		if (*p == '`' || *p == '|')
			*p = '_';
	raw(d, html(d) ? "<code>" : "`");
	if (html(d))
		text(d, t ? t : "?", SIZE_MAX, TEXT_MD_CODE);
	else
		raw(d, "%s", t ? t : "?");
	raw(d, html(d) ? "</code>" : "`");
	free(t);
}

void doc__strong(struct doc *d, bool open)
{
	raw(d, "%s", !html(d) ? "**" : open ? "<b>" : "</b>");
}

void doc__heading(struct doc *d, int level)
{
	d->block = DOC_HEADING;
	d->level = level + (html(d) ? d->shift : 0);
	if (html(d))
		raw(d, "<h%d>", d->level);
	else
		raw(d, "%.*s ", level, "###");
}

void doc__headingf(struct doc *d, int level, const char *fmt, ...)
{
	va_list ap;

	doc__heading(d, level);
	va_start(ap, fmt);
	vliteral(d, fmt, ap);
	va_end(ap);
	doc__close(d);
}

static const char *const md_open[DOC_HEADING + 1] = { [DOC_QUOTE] = "> " };
static const char *const html_open[DOC_HEADING + 1] = {
	[DOC_PARA] = "<p>", [DOC_QUOTE] = "<blockquote>", [DOC_LIST] = "<ul>", [DOC_CODE] = "<pre>",
};

void doc__open(struct doc *d, enum doc_block block)
{
	const char *s = (html(d) ? html_open : md_open)[block];

	d->block = block;
	d->item = false;
	if (s)
		raw(d, "%s", s);
}

void doc__item(struct doc *d)
{
	if (d->item)
		raw(d, html(d) ? "</li>" : "\n");
	raw(d, html(d) ? "<li>" : "- ");
	d->item = true;
}

static const char *const md_close[DOC_HEADING + 1] = {
	[DOC_PARA] = "\n\n", [DOC_QUOTE] = "\n\n", [DOC_LIST] = "\n", [DOC_CODE] = "\n", [DOC_HEADING] = "\n\n",
};
static const char *const html_close[DOC_HEADING + 1] = {
	[DOC_PARA] = "</p>\n", [DOC_QUOTE] = "<br></blockquote>\n", [DOC_LIST] = "</ul>\n", [DOC_CODE] = "</pre>\n",
};

void doc__close(struct doc *d)
{
	const char *s = (html(d) ? html_close : md_close)[d->block];

	if (d->block == DOC_LIST && d->item)
		raw(d, html(d) ? "</li>" : "\n");
	if (d->block == DOC_HEADING && html(d))
		raw(d, "</h%d>\n", d->level);
	else if (s)
		raw(d, "%s", s);
	d->block = DOC_NONE;
	d->item = false;
}

void doc__para(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	doc__open(d, DOC_PARA);
	va_start(ap, fmt);
	vliteral(d, fmt, ap);
	va_end(ap);
	doc__close(d);
}

void doc__code_line(struct doc *d, const char *s, size_t maxlen)
{
	if (!html(d))
		raw(d, "    ");
	text(d, s, maxlen, TEXT_MD_CODE);
	raw(d, "\n");
}

void doc__table(struct doc *d, const struct doc_col *cols, size_t n)
{
	d->cols = cols;
	d->ncols = n;
	raw(d, html(d) ? "<table class=\"sortable\"><thead><tr>" : "|");
	for (size_t i = 0; i < n; i++) {
		if (html(d)) {
			raw(d, "<th%s>", cols[i].num ? " class=\"num\"" : "");
			text(d, cols[i].head, SIZE_MAX, TEXT_MD);
			raw(d, "</th>");
		} else {
			raw(d, " %s |", cols[i].head);
		}
	}
	raw(d, html(d) ? "</tr></thead><tbody>" : "\n|");
	for (size_t i = 0; i < n && !html(d); i++)
		raw(d, cols[i].num ? "---:|" : "---|");
	if (!html(d))
		raw(d, "\n");
}

static const char *td(const struct doc *d)
{
	return d->col < d->ncols && d->cols[d->col].num ? "<td class=\"num\">" : "<td>";
}

void doc__row(struct doc *d)
{
	d->col = 0;
	d->row = true;
	if (html(d))
		raw(d, "<tr>%s", td(d));
	else
		raw(d, "| ");
}

void doc__cell(struct doc *d)
{
	d->col++;
	if (html(d))
		raw(d, "</td>%s", td(d));
	else
		raw(d, " | ");
}

void doc__row_end(struct doc *d)
{
	d->row = false;
	raw(d, html(d) ? "</td></tr>" : " |\n");
}

void doc__table_end(struct doc *d)
{
	d->cols = NULL;
	d->ncols = 0;
	raw(d, html(d) ? "</tbody></table>\n" : "\n");
}

int doc__finish(struct doc *d)
{
	if (!d->err && (fflush(d->f) == EOF || ferror(d->f)))
		d->err = -EIO;
	return d->err;
}
