/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small KTAP checker for the tests (tests/unit/test_ktap.c,
 * tests/integration/test_kci.c): what a kernel-CI harness needs of
 * `bench --ktap`'s output. Well-formed means: "KTAP version 1" first, the
 * plan "1..N" next, then "ok N name" / "not ok N name" lines numbered 1..N
 * in order (an optional " # SKIP reason" directive), every other line a
 * "# " diagnostic, and exactly N test lines.
 */
#ifndef INFERSCOPE_KTAP_CHECK_H
#define INFERSCOPE_KTAP_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ktap_summary {
	int plan;
	int tests;		/* test lines seen */
	int ok, not_ok, skip;	/* skip: ok lines with a SKIP directive */
	int line;		/* where the first problem is (1-based), 0: none */
	char why[160];		/* what it is */
};

static int ktap_fail(struct ktap_summary *s, int line, const char *why)
{
	s->line = line;
	snprintf(s->why, sizeof(s->why), "%s", why);
	return -1;
}

/* 0 when text is well-formed KTAP, -1 with s->line and s->why otherwise;
 * s counts what was read either way. */
static int ktap_check(const char *text, struct ktap_summary *s)
{
	const char *p = text;
	int line = 0;

	memset(s, 0, sizeof(*s));
	s->plan = -1;
	while (*p) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char buf[1024], *rest;
		long num;

		line++;
		if (n >= sizeof(buf))
			return ktap_fail(s, line, "line too long");
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (end ? 1 : 0);
		if (line == 1) {
			if (strcmp(buf, "KTAP version 1"))
				return ktap_fail(s, line, "first line is not \"KTAP version 1\"");
			continue;
		}
		if (line == 2) {
			if (strncmp(buf, "1..", 3))
				return ktap_fail(s, line, "second line is not the plan 1..N");
			num = strtol(buf + 3, &rest, 10);
			if (rest == buf + 3 || *rest || num < 0)
				return ktap_fail(s, line, "the plan's count is not a number");
			s->plan = (int)num;
			continue;
		}
		if (buf[0] == '#' && (buf[1] == '\0' || buf[1] == ' '))
			continue;
		if (!strncmp(buf, "ok ", 3))
			rest = buf + 3;
		else if (!strncmp(buf, "not ok ", 7))
			rest = buf + 7;
		else
			return ktap_fail(s, line, "neither a test line nor a diagnostic");
		{
			char *after;
			bool ok = buf[0] == 'o';

			num = strtol(rest, &after, 10);
			if (after == rest || num != s->tests + 1)
				return ktap_fail(s, line, "test number out of sequence");
			if (*after != ' ' || !after[1] || after[1] == '#')
				return ktap_fail(s, line, "test line without a name");
			s->tests++;
			if (strstr(after, " # SKIP") && ok)
				s->skip++;
			else if (ok)
				s->ok++;
			else
				s->not_ok++;
		}
	}
	if (line < 2)
		return ktap_fail(s, line, "no plan");
	if (s->tests != s->plan)
		return ktap_fail(s, line, "the number of test lines differs from the plan");
	return 0;
}

/* 1 when test name passed (or was skipped), 0 when it failed, -1 when
 * there is no line for it. */
static int ktap_result_of(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while (p && *p) {
		const char *q = p, *sp;
		bool ok = !strncmp(q, "ok ", 3);

		if (ok || !strncmp(q, "not ok ", 7)) {
			q += ok ? 3 : 7;
			sp = strchr(q, ' ');
			if (sp && !strncmp(sp + 1, name, n) && (sp[1 + n] == '\n' || sp[1 + n] == ' ' || !sp[1 + n]))
				return ok;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

#endif
