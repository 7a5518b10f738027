// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The configuration model (user/settings/settings.h): the precedence of its four
 * sources, each value's source, and bad input refused with the file, the
 * line and the reason; the shipped default file (dist/config.yaml) reads
 * and sets every value to its default.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "settings.h"
#include "analyze.h"

static char dir[] = "/tmp/inferscope-settings-XXXXXX";

static const char *yaml(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void expect_source(const struct settings *s, const char *key, enum setting_source src, const char *where)
{
	enum setting_source got;
	const char *w;

	assert_int_equal(settings__source(s, key, &got, &w), 0);
	if (got != src || strcmp(w, where)) {
		print_error("%s: source %s '%s', expected %s '%s'\n", key, setting_source_name(got), w,
			    setting_source_name(src), where);
		fail();
	}
}

/* defaults < file < environment < option, each value knowing its source. */
static void test_precedence_and_sources(void **state)
{
	char *env[] = { "INFERSCOPE_DAEMON_INTERVAL=90", "INFERSCOPE_RECORD_BUDGET=off", "INFERSCOPE_CUPTI_LIB=/x",
			"PATH=/bin", NULL };
	char err[512], where[300];
	const char *path = yaml("a.yaml", "# a comment\n"
					  "record:\n"
					  "  gil: yes\n"
					  "  budget: 2\n"
					  "  cuda_libs:\n"
					  "    - /opt/a/libcuda.so.1\n"
					  "    - /opt/b/libcuda.so.1\n"
					  "daemon:\n"
					  "  interval: 10m\n"
					  "  window: 30s\n"
					  "  max_size: 512M\n"
					  "  keep_severity: critical\n");
	struct settings *s = settings__new();
	const struct daemon_config *d;
	struct record_config *rc;

	(void)state;
	assert_non_null(s);
	assert_int_equal(settings__load_file(s, path, err, sizeof(err)), 0);
	assert_int_equal(settings__load_env(s, env, err, sizeof(err)), 0);
	assert_int_equal(settings__set(s, "daemon.window", "20", SRC_OPTION, "--window", err, sizeof(err)), 0);
	assert_int_equal(settings__check(s, err, sizeof(err)), 0);

	d = settings__daemon(s);
	rc = settings__record(s);
	assert_true(d->interval_s == 90);		/* env over file */
	assert_true(d->window_s == 20);			/* option over file */
	assert_true(d->max_bytes == 512ull << 20);	/* file */
	assert_int_equal(d->keep_severity, 3);
	assert_int_equal(d->keep_last, 3);		/* default */
	assert_true(rc->python.gil);
	assert_true(rc->tracer.budget_pct == 0);	/* env "off" over the file's 2 */
	assert_int_equal(rc->cuda.lib_count, 2);
	assert_string_equal(rc->cuda.libs[1], "/opt/b/libcuda.so.1");

	snprintf(where, sizeof(where), "%s:3", path);
	expect_source(s, "record.gil", SRC_FILE, where);
	snprintf(where, sizeof(where), "%s:11", path);
	expect_source(s, "daemon.max_size", SRC_FILE, where);
	expect_source(s, "daemon.interval", SRC_ENV, "INFERSCOPE_DAEMON_INTERVAL");
	expect_source(s, "record.budget", SRC_ENV, "INFERSCOPE_RECORD_BUDGET");
	expect_source(s, "daemon.window", SRC_OPTION, "--window");
	expect_source(s, "daemon.keep_last", SRC_DEFAULT, "");
	assert_string_equal(settings__file(s), path);
	settings__free(s);
}

/* A list from a higher source replaces the lower one; repeated options
 * accumulate. */
static void test_lists(void **state)
{
	char *env[] = { "INFERSCOPE_RECORD_CUDA_LIBS=/e1/libcuda.so.1:/e2/libcuda.so.1", NULL };
	char err[512];
	const char *path = yaml("l.yaml", "record:\n  cuda_libs: /f/libcuda.so.1\ndaemon:\n  match: [a, b, c]\n");
	struct settings *s = settings__new();
	struct record_config *rc;

	(void)state;
	assert_int_equal(settings__load_file(s, path, err, sizeof(err)), 0);
	rc = settings__record(s);
	assert_int_equal(rc->cuda.lib_count, 1);
	assert_int_equal(settings__daemon(s)->match_count, 3);
	assert_int_equal(settings__load_env(s, env, err, sizeof(err)), 0);
	assert_int_equal(rc->cuda.lib_count, 2);
	assert_string_equal(rc->cuda.libs[0], "/e1/libcuda.so.1");
	assert_int_equal(settings__set(s, "record.cuda_libs", "/o1", SRC_OPTION, "--cuda-lib", err, sizeof(err)), 0);
	assert_int_equal(settings__set(s, "record.cuda_libs", "/o2", SRC_OPTION, "--cuda-lib", err, sizeof(err)), 0);
	assert_int_equal(rc->cuda.lib_count, 2);
	assert_string_equal(rc->cuda.libs[0], "/o1");
	assert_string_equal(rc->cuda.libs[1], "/o2");
	settings__free(s);
}

static void expect_file_error(const char *name, const char *text, const char *line_and_reason)
{
	struct settings *s = settings__new();
	char err[1024], want[512];
	const char *path = yaml(name, text);

	assert_int_equal(settings__load_file(s, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:%s", path, line_and_reason);
	if (strncmp(err, want, strlen(want))) {
		print_error("got      '%s'\nexpected '%s...'\n", err, want);
		fail();
	}
	settings__free(s);
}

/* Bad files: the file, the line, the reason. */
static void test_bad_files(void **state)
{
	(void)state;
	expect_file_error("k.yaml", "daemon:\n  interval: 60\n  intervall: 3\n", "3: unknown key 'daemon.intervall'");
	expect_file_error("v.yaml", "record:\n\n  budget: lots\n", "3: record.budget: 'lots' is not a percentage");
	expect_file_error("s.yaml", "recorder:\n  gil: true\n", "1: unknown section 'recorder'");
	expect_file_error("t.yaml", "daemon:\n  window: 5\n  window: 6\n", "3: daemon.window is set twice");
	expect_file_error("y.yaml", "daemon:\n  window: 5\n bad: [\n", "3:");
	expect_file_error("b.yaml", "record:\n  gil: maybe\n", "2: record.gil: 'maybe' is not true or false");
	expect_file_error("m.yaml", "daemon:\n  window: [1, 2]\n", "2: daemon.window: expected a single value");
	expect_file_error("n.yaml", "- record\n", "1: expected sections");
	expect_file_error("r.yaml", "record:\n  ringbuf_mib: 3\n", "2: record.ringbuf_mib: '3' is not a power of two");
	expect_file_error("z.yaml", "daemon:\n  max_size: 12\n", "2: daemon.max_size: '12' is not a size");
	/* a pattern the daemon would refuse is refused here, config show too */
	expect_file_error("re.yaml", "daemon:\n  match: 'python ([0-9'\n",
			  "2: daemon.match: 'python ([0-9' is not an extended regular expression");
	expect_file_error("rl.yaml", "daemon:\n  match:\n    - ok\n    - 'a{2,1}'\n",
			  "4: daemon.match: 'a{2,1}' is not an extended regular expression");
	/* a NUL inside a value (or a key) is an error, not a cut */
	expect_file_error("nul.yaml", "daemon:\n  state_dir: \"/var/lib/a\\0b\"\n",
			  "2: a NUL byte (\\0) inside '/var/lib/a...'");
	expect_file_error("nulk.yaml", "daemon:\n  \"window\\0x\": 5\n", "2: a NUL byte (\\0) inside 'window...'");
}

static void test_bad_env_and_options(void **state)
{
	char *typo[] = { "INFERSCOPE_DAEMON_WINDOWS=3", NULL };
	char *bad[] = { "INFERSCOPE_DAEMON_WINDOW=-1", NULL };
	char *bad_re[] = { "INFERSCOPE_DAEMON_MATCH=x(", NULL };
	char err[512];
	struct settings *s = settings__new();

	(void)state;
	assert_int_equal(settings__load_env(s, typo, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "INFERSCOPE_DAEMON_WINDOWS: not a setting (inferscope-bpf config show lists them)");
	assert_int_equal(settings__load_env(s, bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "INFERSCOPE_DAEMON_WINDOW: daemon.window: '-1' is not a duration"));
	assert_int_equal(settings__load_env(s, bad_re, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "daemon.match: 'x(' is not an extended regular expression"));
	assert_int_equal(settings__set(s, "daemon.match", "[z-a]", SRC_OPTION, "--match", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "daemon.match: '[z-a]' is not an extended regular expression"));
	assert_int_equal(settings__set(s, "daemon.nope", "1", SRC_OPTION, "--nope", err, sizeof(err)), -ENOENT);
	assert_int_equal(settings__set(s, "daemon.interval", "1h", SRC_OPTION, "--interval", err, sizeof(err)), 0);
	assert_true(settings__daemon(s)->interval_s == 3600);
	assert_int_equal(settings__set(s, "daemon.window", "2h", SRC_OPTION, "--window", err, sizeof(err)), 0);
	assert_int_equal(settings__check(s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "daemon.window (7200 s, from --window) is longer than daemon.interval (3600 s, "
				    "from --interval)"));
	/* flight-recorder mode records the interval whole: the window no
	 * longer matters, the memory's length does */
	assert_int_equal(settings__set(s, "daemon.flight_recorder", "30m", SRC_OPTION, "--flight-recorder", err,
				       sizeof(err)), 0);
	assert_int_equal(settings__check(s, err, sizeof(err)), 0);
	assert_int_equal(settings__set(s, "daemon.interval", "10m", SRC_OPTION, "--interval", err, sizeof(err)), 0);
	assert_int_equal(settings__check(s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "daemon.flight_recorder (1800 s, from --flight-recorder) is longer than "
				    "daemon.interval (600 s, from --interval)"));
	settings__free(s);
}

/* An absent default file is no error; an absent given one is. Comments
 * only: nothing set. */
static void test_missing_and_empty(void **state)
{
	char err[512], path[300];
	struct settings *s = settings__new();

	(void)state;
	snprintf(path, sizeof(path), "%s/absent.yaml", dir);
	assert_int_equal(settings__load_file(s, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "absent.yaml: cannot open"));
	assert_int_equal(settings__load_file(s, yaml("e.yaml", "# nothing\n"), err, sizeof(err)), 0);
	assert_int_equal(settings__load_file(s, yaml("e2.yaml", ""), err, sizeof(err)), 0);
	expect_source(s, "daemon.interval", SRC_DEFAULT, "");
	settings__free(s);
}

/* dist/config.yaml, installed as the default configuration, reads and its
 * values are the built-in defaults: what it documents is true. */
static json_t *shown(const struct settings *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_error_t jerr;
	json_t *j;

	assert_non_null(f);
	assert_int_equal(settings__show(s, f, true), 0);
	fclose(f);
	j = json_loads(text, 0, &jerr);
	free(text);
	assert_non_null(j);
	return j;
}

static void test_shipped_config(void **state)
{
	struct settings *def = settings__new(), *s = settings__new();
	json_t *a, *b, *av, *bv;
	char err[512];
	size_t set = 0;

	(void)state;
	assert_int_equal(settings__load_file(s, "dist/config.yaml", err, sizeof(err)), 0);
	a = shown(def);
	b = shown(s);
	av = json_object_get(a, "settings");
	bv = json_object_get(b, "settings");
	assert_int_equal(json_array_size(av), json_array_size(bv));
	for (size_t i = 0; i < json_array_size(av); i++) {
		json_t *x = json_array_get(av, i), *y = json_array_get(bv, i);

		if (!json_equal(json_object_get(x, "value"), json_object_get(y, "value"))) {
			print_error("dist/config.yaml sets %s otherwise than its default\n",
				    json_string_value(json_object_get(x, "key")));
			fail();
		}
		set += !strcmp(json_string_value(json_object_get(y, "source")), "file");
	}
	/* It shows every setting but the bridge's path (no default to write). */
	assert_int_equal(set, settings__count() - 1);
	json_decref(a);
	json_decref(b);
	settings__free(def);
	settings__free(s);
}

/* Every key has its environment variable and appears in config show. */
static void test_env_names(void **state)
{
	char name[128];

	(void)state;
	settings__env_name("daemon.keep_severity", name, sizeof(name));
	assert_string_equal(name, "INFERSCOPE_DAEMON_KEEP_SEVERITY");
	assert_true(settings__count() > 20);
	for (size_t i = 0; i < settings__count(); i++)
		assert_non_null(strchr(settings__key(i), '.'));
}

/* Every setting has its option, and every option sets a setting: the
 * options are defined once, in the settings' table (the CLI makes its own
 * of them). */
static void test_options(void **state)
{
	char err[512];

	(void)state;
	assert_true(settings__option_count() >= settings__count());
	for (size_t i = 0; i < settings__count(); i++) {
		size_t n = 0;

		for (size_t k = 0; k < settings__option_count(); k++)
			n += !strcmp(settings__option(k)->key, settings__key(i));
		if (!n)
			fail_msg("%s has no option", settings__key(i));
		assert_non_null(settings__doc(settings__key(i)));
	}
	for (size_t k = 0; k < settings__option_count(); k++) {
		const struct setting_option *o = settings__option(k);
		struct settings *s = settings__new();

		assert_non_null(o->help);
		assert_true(o->arg || o->value);	/* a flag sets a value */
		/* a flag's value, or an optional argument's, is one the setting takes */
		if (o->value)
			assert_int_equal(settings__set(s, o->key, o->value, SRC_OPTION, o->name, err, sizeof(err)), 0);
		settings__free(s);
	}
	assert_null(settings__option(settings__option_count()));
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence_and_sources),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_bad_env_and_options),
		cmocka_unit_test(test_missing_and_empty),
		cmocka_unit_test(test_shipped_config),
		cmocka_unit_test(test_env_names),
		cmocka_unit_test(test_options),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
