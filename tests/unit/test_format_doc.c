// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * docs/record-format.md stays true: its generated block is byte for byte what
 * build/tests/format_tables prints from the headers today, and the names it
 * lists are the names the reader displays. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "recording.h"

#define FORMAT_TABLES	"build/tests/format_tables"
#define DOC		"docs/record-format.md"
#define BEGIN_LINE	"<!-- BEGIN GENERATED: format_tables -->\n"
#define END_LINE	"<!-- END GENERATED: format_tables -->\n"

struct text {
	char *s;
	size_t len;
};

static void text__read(FILE *f, struct text *t)
{
	size_t cap = 1 << 16;
	size_t n;

	t->s = malloc(cap);
	t->len = 0;
	assert_non_null(t->s);
	while ((n = fread(t->s + t->len, 1, cap - t->len - 1, f)) > 0) {
		t->len += n;
		if (t->len + 1 == cap) {
			cap *= 2;
			t->s = realloc(t->s, cap);
			assert_non_null(t->s);
		}
	}
	assert_false(ferror(f));
	t->s[t->len] = '\0';
}

static void generated__read(struct text *t)
{
	FILE *p = popen(FORMAT_TABLES, "r");
	int status;

	if (!p)
		fail_msg("cannot run %s: %s; run the tests from the repository root after `make test-build`",
			 FORMAT_TABLES, strerror(errno));
	text__read(p, t);
	status = pclose(p);
	if (status != 0)
		fail_msg("%s exited with status 0x%x (see its message above); build it with `make test-build` "
			 "and run the tests from the repository root", FORMAT_TABLES, status);
}

/* The text between the marker lines of the document, in place. */
static void doc__block(const struct text *doc, const char **start, size_t *len)
{
	const char *b = strstr(doc->s, BEGIN_LINE), *e;

	if (!b || (b != doc->s && b[-1] != '\n'))
		fail_msg("%s has no line \"%.*s\": restore it and run `make docs`", DOC,
			 (int)strlen(BEGIN_LINE) - 1, BEGIN_LINE);
	if (strstr(b + 1, BEGIN_LINE))
		fail_msg("%s has the BEGIN GENERATED line twice: keep one and run `make docs`", DOC);
	*start = b + strlen(BEGIN_LINE);
	e = strstr(*start, END_LINE);
	if (!e || (e != *start && e[-1] != '\n'))
		fail_msg("%s has no line \"%.*s\" after the BEGIN line: restore it and run `make docs`", DOC,
			 (int)strlen(END_LINE) - 1, END_LINE);
	*len = (size_t)(e - *start);
}

static void test_doc_matches_headers(void **state)
{
	struct text gen, doc;
	const char *block;
	size_t len, i, line = 1;
	FILE *f;

	(void)state;
	generated__read(&gen);
	f = fopen(DOC, "r");
	if (!f)
		fail_msg("cannot open %s: %s; run the tests from the repository root", DOC, strerror(errno));
	text__read(f, &doc);
	fclose(f);
	doc__block(&doc, &block, &len);

	/* Line number in the document of the block's first line. */
	for (i = 0; doc.s + i < block; i++)
		line += doc.s[i] == '\n';
	for (i = 0; i < len && i < gen.len && block[i] == gen.s[i]; i++)
		line += block[i] == '\n';
	if (i < len || i < gen.len) {
		const char *d = block + i, *g = gen.s + i;

		while (d > block && d[-1] != '\n') {
			d--;
			g--;
		}
		fail_msg("%s line %zu differs from the output of %s:\n  document:  %.*s\n  generated: %.*s\n"
			 "the headers changed: run `make docs` and commit the result",
			 DOC, line, FORMAT_TABLES,
			 d < block + len ? (int)strcspn(d, "\n") : 0, d < block + len ? d : "",
			 g < gen.s + gen.len ? (int)strcspn(g, "\n") : 0, g < gen.s + gen.len ? g : "");
	}
	free(gen.s);
	free(doc.s);
}

/* The row of constant value v whose macro starts with prefix must show name. */
static void assert_named_row(const char *text, const char *prefix, unsigned v, const char *name)
{
	char row[128], line[512], want[96];
	const char *r;

	snprintf(row, sizeof(row), "\n| %u | `%s", v, prefix);
	r = strstr(text, row);
	if (!r)
		fail_msg("the generated tables have no row for %s* value %u", prefix, v);
	r++;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(r, "\n"), r);
	snprintf(want, sizeof(want), "` | %s | ", name);
	if (!strstr(line, want))
		fail_msg("generated row \"%s\" does not name %s* value %u \"%s\" as the reader does: "
			 "fix tests/unit/format_tables.c or analysis/read/rec_reader.c", line, prefix, v, name);
}

static void test_doc_names_match_reader(void **state)
{
	struct text gen;
	unsigned v;

	(void)state;
	generated__read(&gen);
	/* Values the reader does not name are unassigned (reserved). */
	for (v = 1; v < ISR_EV_TYPE_MAX; v++)
		if (isr_event_name((__u16)v))
			assert_named_row(gen.s, "ISR_EV_", v, isr_event_name((__u16)v));
	for (v = 0; v < ISR_SRC_MAX; v++)
		if (isr_source_name(v))
			assert_named_row(gen.s, "ISR_SRC_", v, isr_source_name(v));
	for (v = 1; isr_stop_reason_name(v); v++)
		assert_named_row(gen.s, "ISR_STOP_", v, isr_stop_reason_name(v));
	assert_true(v > ISR_STOP_WRITE_ERROR);
	for (v = 1; v < ISR_CUDA_FN_MAX; v++) {
		char row[96];

		if (!isr_cuda_fn((__u16)v))	/* an id left unused */
			continue;
		snprintf(row, sizeof(row), "\n| %u | `%s` | ", v, isr_cuda_fn((__u16)v)->symbol);
		if (!strstr(gen.s, row))
			fail_msg("the generated CUDA function table has no row \"%s\" for function %u "
				 "as the reader names it", row + 1, v);
	}
	free(gen.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_matches_headers),
		cmocka_unit_test(test_doc_names_match_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
