// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The README's documentation list names every file of docs/ as a link, the
 * set-up section links docs/getting-started.md, and every relative link of
 * the README and of every page of docs/ leads to a file that exists. Run from the
 * repository root.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define README		"README.md"
#define DOCS		"docs"
#define DOC_LIST	"\n## Documentation\n"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;

	if (!f)
		fail_msg("cannot open %s (run from the repository root)", path);
	if (getdelim(&buf, &n, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	assert_non_null(buf);
	return buf;
}

/* The README's documentation list: from its heading to the next heading. */
static char *doc_list(const char *readme)
{
	const char *start = strstr(readme, DOC_LIST), *end;

	if (!start)
		fail_msg(README " has no \"## Documentation\" section");
	start += strlen(DOC_LIST);
	end = strstr(start, "\n## ");
	return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

static void test_every_doc_is_listed(void **state)
{
	char *readme = slurp(README), *list = doc_list(readme), want[600];
	DIR *d = opendir(DOCS);
	struct dirent *e;
	size_t docs = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		docs++;
		snprintf(want, sizeof(want), "](" DOCS "/%s)", e->d_name);
		if (!strstr(list, want))
			fail_msg(README "'s documentation list does not link " DOCS "/%s: add \"- [" DOCS
				 "/%s](" DOCS "/%s) — what it is\"", e->d_name, e->d_name, e->d_name);
	}
	closedir(d);
	assert_true(docs > 0);
	free(list);
	free(readme);
}

static void test_getting_started_linked_from_set_up(void **state)
{
	char *readme = slurp(README);
	const char *set_up = strstr(readme, "\n## Set up"), *use = strstr(readme, "\n## Use\n");
	const char *link = strstr(readme, "](docs/getting-started.md)");

	(void)state;
	assert_non_null(set_up);
	assert_non_null(use);
	if (!link || link < set_up || link > use)
		fail_msg(README "'s set-up section does not link docs/getting-started.md");
	free(readme);
}

/* Every link of path to a relative target names a file that exists. */
static void check_links(const char *path)
{
	char *text = slurp(path), dir[256], target[512];
	const char *slash = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	for (const char *p = text; (p = strstr(p, "](")); p += 2) {
		size_t n = strcspn(p + 2, ")# \n");

		if (!n || !strncmp(p + 2, "http", 4) || !strncmp(p + 2, "mailto:", 7))
			continue;
		snprintf(target, sizeof(target), "%s/%.*s", dir, (int)n, p + 2);
		if (access(target, F_OK))
			fail_msg("%s links %.*s, which does not exist (%s)", path, (int)n, p + 2, target);
	}
	free(text);
}

static void test_links_lead_somewhere(void **state)
{
	DIR *d = opendir(DOCS);
	struct dirent *e;
	char path[300];

	(void)state;
	check_links(README);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n < 3 || strcmp(e->d_name + n - 3, ".md"))
			continue;
		snprintf(path, sizeof(path), DOCS "/%s", e->d_name);
		check_links(path);
	}
	closedir(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_doc_is_listed),
		cmocka_unit_test(test_getting_started_linked_from_set_up),
		cmocka_unit_test(test_links_lead_somewhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
