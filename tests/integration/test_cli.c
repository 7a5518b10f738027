// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line as a user meets it (issues 27 and 29): the report never
 * mixes with a launched job's output; -h works for every command; every
 * usage error exits with the one status the man page gives and names the
 * program and the command; -q silences the notices; work that takes a
 * while shows a progress line on a terminal (a pty: script(1)) and only
 * there; the man page and the bash completion say what the table of
 * commands says, and bash completes every command's options.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "cli.h"
#include "cli_docs.h"
#include "harness.h"
#include "progress.h"

#define MAN "dist/man/man8/inferscope-bpf.8"
#define COMPLETION "dist/inferscope-bpf.bash"
#define SYNTH_REC "build/tests/tools/synth_rec"

struct ctx {
	struct th_files f;
	char out[600], fifo[600], big[600];
	pid_t child;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	snprintf(c->out, sizeof(c->out), "%s/out", c->f.dir);
	snprintf(c->fifo, sizeof(c->fifo), "%s/fifo.isr", c->f.dir);
	snprintf(c->big, sizeof(c->big), "%s/big.isr", c->f.dir);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	th_reap(c->child);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static void expect_contains(const char *text, const char *needle, const char *what)
{
	if (!text || !strstr(text, needle))
		fail_msg("%s lacks \"%s\":\n%s", what, needle, text ? text : "(nothing)");
}

/* ---- the report and the job's output ----------------------------------------------- */

#define JOB "echo job says hello; echo job complains >&2"

/* With a command after --, its standard output is its own: the report goes
 * to --report FILE (json parses), or as Markdown to standard error. */
static void test_report_apart_from_job_output(void **state)
{
	struct ctx *c = *state;
	char report[600], *out, *err;
	json_error_t jerr;
	json_t *j;

	snprintf(report, sizeof(report), "%s/report.json", c->f.dir);
	{
		char *argv[] = { TRACER, "-q", "--format", "json", "--report", report, "-o", c->f.isr, "--", "sh", "-c",
				 JOB, NULL };

		th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	}
	out = th_slurp(c->out);
	assert_string_equal(out, "job says hello\n");
	free(out);
	j = json_load_file(report, 0, &jerr);
	if (!j)
		fail_msg("--report %s is not JSON: %s (line %d)", report, jerr.text, jerr.line);
	assert_non_null(json_object_get(j, "findings"));
	json_decref(j);

	/* Markdown: to standard error, after the job's own */
	unlink(c->f.isr);
	{
		char *argv[] = { TRACER, "-q", "-o", c->f.isr, "--", "sh", "-c", JOB, NULL };

		th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	}
	out = th_slurp(c->out);
	err = th_slurp(c->f.err);
	assert_string_equal(out, "job says hello\n");
	expect_contains(err, "job complains\n", "standard error");
	expect_contains(err, "# inferscope-bpf report", "standard error");
	free(out);
	free(err);

	/* json, html, perfetto there need a file: refused before anything runs */
	unlink(c->f.isr);
	{
		char *argv[] = { TRACER, "--format", "json", "-o", c->f.isr, "--", "sh", "-c", JOB, NULL };

		th_expect_exit(th_run_to(argv, c->out, c->f.err), EXIT_USAGE, c->f.err);
	}
	out = th_slurp(c->out);
	assert_string_equal(out, "");
	free(out);
	err = th_slurp(c->f.err);
	expect_contains(err, "--report FILE", "the refusal");
	free(err);
	assert_int_equal(access(c->f.isr, F_OK), -1);
}

/* With -p, standard output is the tracer's: the JSON report there parses. */
static void test_report_of_pid_on_stdout(void **state)
{
	struct ctx *c = *state;
	char *sleeper[] = { "sleep", "60", NULL }, pid[32];
	json_error_t jerr;
	json_t *j;

	c->child = th_spawn(sleeper, NULL, NULL);
	snprintf(pid, sizeof(pid), "%d", (int)c->child);
	{
		char *argv[] = { TRACER, "-q", "-p", pid, "-d", "0.3", "--format", "json", "-o", c->f.isr, NULL };

		th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	}
	j = json_load_file(c->out, 0, &jerr);
	if (!j)
		fail_msg("standard output is not JSON: %s (line %d)", jerr.text, jerr.line);
	assert_non_null(json_object_get(j, "findings"));
	json_decref(j);
}

/* ---- help, usage errors, -q ------------------------------------------------------------ */

static void cmd_argv(const struct cmd *cmd, char **argv, const char *arg)
{
	size_t n = 0;

	argv[n++] = TRACER;
	if (*cmd->name)
		argv[n++] = (char *)cmd->name;
	argv[n++] = (char *)arg;
	argv[n] = NULL;
}

static void test_help_everywhere(void **state)
{
	struct ctx *c = *state;
	static const char *const helps[] = { "-h", "--help", "-?" };

	for (size_t i = 0; i < cli_ncommands; i++) {
		const struct cmd *cmd = cli_commands[i];
		char usage[80], *argv[4], *out;

		snprintf(usage, sizeof(usage), "Usage: %s%s%s [OPTION...]", CLI_PROGRAM, *cmd->name ? " " : "", cmd->name);
		for (size_t h = 0; h < sizeof(helps) / sizeof(helps[0]); h++) {
			cmd_argv(cmd, argv, helps[h]);
			th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
			out = th_slurp(c->out);
			if (!out || strncmp(out, usage, strlen(usage)))
				fail_msg("%s %s: standard output does not begin with \"%s\":\n%s", cmd->name, helps[h], usage,
					 out ? out : "");
			free(out);
		}
	}
}

/* The man page's EXIT STATUS gives EXIT_USAGE for a usage error. */
static void expect_man_usage_status(void)
{
	char *man = th_slurp(MAN), want[64];
	const char *s;

	assert_non_null(man);
	s = strstr(man, "\n.SH EXIT STATUS\n");
	assert_non_null(s);
	snprintf(want, sizeof(want), "\n.B %d\nA usage error", EXIT_USAGE);
	expect_contains(s, want, "the man page's EXIT STATUS");
	free(man);
}

/* "inferscope-bpf CMD: ...", exit EXIT_USAGE; and for a usage error (not
 * a bad configuration, whose message says what to fix), "Try
 * `inferscope-bpf CMD --help'". */
static void expect_error(struct ctx *c, char **argv, const char *name, const char *needle, bool usage)
{
	char prefix[80], try[100], *err;

	snprintf(prefix, sizeof(prefix), "%s%s%s: ", CLI_PROGRAM, *name ? " " : "", name);
	snprintf(try, sizeof(try), "Try `%s%s%s --help'", CLI_PROGRAM, *name ? " " : "", name);
	th_expect_exit(th_run(argv, c->f.err), EXIT_USAGE, c->f.err);
	err = th_slurp(c->f.err);
	if (!err || strncmp(err, prefix, strlen(prefix)))
		fail_msg("the error does not begin with \"%s\":\n%s", prefix, err ? err : "");
	expect_contains(err, needle, "the error");
	if (usage)
		expect_contains(err, try, "the error");
	free(err);
}

static void expect_usage_error(struct ctx *c, char **argv, const char *name, const char *needle)
{
	expect_error(c, argv, name, needle, true);
}

static void test_usage_errors(void **state)
{
	struct ctx *c = *state;
	char cfg[600];

	expect_man_usage_status();
	for (size_t i = 0; i < cli_ncommands; i++) {
		char *argv[4];

		cmd_argv(cli_commands[i], argv, "--no-such-option");
		expect_usage_error(c, argv, cli_commands[i]->name, "unrecognized option '--no-such-option'");
	}
	snprintf(cfg, sizeof(cfg), "%s/absent.yaml", c->f.dir);
	{
		char *a[] = { TRACER, "-d", "10s", "--", "true", NULL };
		char *b[] = { TRACER, "analyze", NULL };
		char *d[] = { TRACER, "diff", "a.isr", NULL };
		char *e[] = { TRACER, "config", "shw", NULL };
		char *f[] = { TRACER, "record", "-o", c->f.isr, NULL };
		char *g[] = { TRACER, "export", "a.isr", NULL };
		char *h[] = { TRACER, "analyse", "a.isr", NULL };
		char *k[] = { TRACER, "analyze", "a.isr", "--", "ls", NULL };
		char *l[] = { TRACER, "top", "--interval", "0", NULL };
		char *m[] = { TRACER, "config", "show", "--config", cfg, NULL };
		char *n[] = { TRACER, "record", "-o", c->f.isr, "--trigger", "sync=300", "--", "true", NULL };

		expect_usage_error(c, a, "", "-d: '10s' is not a duration");
		expect_usage_error(c, b, "analyze", "give the recording to analyze");
		expect_usage_error(c, d, "diff", "give the two recordings to compare");
		expect_usage_error(c, e, "config", "the only subcommand is show");
		expect_usage_error(c, f, "record", "nothing to trace");
		expect_usage_error(c, g, "export", "--sqlite OUT.db");
		expect_usage_error(c, h, "", "'analyse' is not a command");
		expect_usage_error(c, k, "analyze", "takes no command after --");
		expect_usage_error(c, l, "top", "--interval: '0'");
		expect_error(c, m, "config", "absent.yaml: cannot open", false);
		expect_usage_error(c, n, "record", "need --flight-recorder SEC");
	}
}

/* -q: no notices, the one about a missing libcuda too. */
static void test_quiet(void **state)
{
	struct ctx *c = *state;
	char *quiet[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/true", NULL };
	char *loud[] = { TRACER, "record", "-o", c->f.isr, "--", "/bin/true", NULL };
	char *err;

	th_expect_exit(th_run(loud, c->f.err), 0, c->f.err);
	err = th_slurp(c->f.err);
	expect_contains(err, "no CUDA driver library", "standard error without -q");
	free(err);
	unlink(c->f.isr);
	th_expect_exit(th_run(quiet, c->f.err), 0, c->f.err);
	err = th_slurp(c->f.err);
	assert_non_null(err);
	if (strstr(err, "no CUDA driver library"))
		fail_msg("-q still says:\n%s", err);
	free(err);
}

/* ---- the progress line ------------------------------------------------------------------ */

/* `script` runs cmd on a pty: its standard output is what the terminal got. */
static pid_t on_pty(const char *cmd, int *out_fd)
{
	char *argv[] = { "script", "-qefc", (char *)cmd, "/dev/null", NULL };

	return th_spawn(argv, out_fd, NULL);
}

/* Reads fd into *buf (len bytes so far) until needle shows, EOF or the
 * deadline; true when it showed. */
static bool read_until(int fd, char **buf, size_t *len, const char *needle, double deadline)
{
	while (th_now() < deadline) {
		char chunk[4096];
		ssize_t n;

		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (needle && *buf && strstr(*buf, needle))
			return true;
		if (poll(&pfd, 1, 100) == 0)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n <= 0)
			return needle ? *buf && strstr(*buf, needle) : true;
		*buf = realloc(*buf, *len + (size_t)n + 1);
		assert_non_null(*buf);
		memcpy(*buf + *len, chunk, (size_t)n);
		*len += (size_t)n;
		(*buf)[*len] = '\0';
	}
	return false;
}

/* Reads child's output (fd) to its end; it exited 0. */
static void finish(struct ctx *c, int fd, char **buf, size_t *len)
{
	int status;

	read_until(fd, buf, len, NULL, th_now() + 300);
	close(fd);
	assert_int_equal(waitpid(c->child, &status, 0), c->child);
	c->child = 0;
	th_expect_exit(status, 0, NULL);
}

static void write_recording_into(const char *isr, const char *fifo)
{
	char *text;
	size_t len;
	int fd = open(fifo, O_WRONLY);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(stat(isr, &st), 0);
	text = malloc((size_t)st.st_size);
	assert_non_null(text);
	{
		FILE *f = fopen(isr, "rb");

		assert_non_null(f);
		len = fread(text, 1, (size_t)st.st_size, f);
		fclose(f);
	}
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	free(text);
}

/* analyze reads a pipe whose writer waits: on a terminal the line shows
 * (after PROGRESS_AFTER_S), and is erased before the report; with -q, or
 * when standard error is a file, it never does. */
static void test_progress_on_a_terminal(void **state)
{
	struct ctx *c = *state;
	char *rec[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/true", NULL };
	char cmd[2000], line[200], *buf = NULL;
	size_t len = 0;
	int fd;

	th_expect_exit(th_run(rec, c->f.err), 0, c->f.err);
	assert_int_equal(mkfifo(c->fifo, 0600), 0);
	snprintf(cmd, sizeof(cmd), "%s analyze %s", TRACER, c->fifo);
	snprintf(line, sizeof(line), "\r%s analyze: ", CLI_PROGRAM);
	c->child = on_pty(cmd, &fd);
	if (!read_until(fd, &buf, &len, " read\033[K", th_now() + 60))
		fail_msg("no progress line on the terminal in 60 s:\n%s", buf ? buf : "");
	expect_contains(buf, line, "the terminal");
	write_recording_into(c->f.isr, c->fifo);
	finish(c, fd, &buf, &len);
	/* erased, then the report */
	expect_contains(buf, " read\033[K\r\033[K# inferscope-bpf report", "the terminal");
	free(buf);

	/* -q, and standard error a file: nothing */
	for (int quiet = 0; quiet < 2; quiet++) {
		char *argv[] = { TRACER, "analyze", c->fifo, NULL };
		char *err = NULL;

		buf = NULL;
		len = 0;
		if (quiet) {
			snprintf(cmd, sizeof(cmd), "%s analyze -q %s", TRACER, c->fifo);
			c->child = on_pty(cmd, &fd);
		} else {
			c->child = th_spawn(argv, &fd, c->f.err);
		}
		usleep((useconds_t)((PROGRESS_AFTER_S + 1) * 1e6));
		write_recording_into(c->f.isr, c->fifo);
		finish(c, fd, &buf, &len);
		expect_contains(buf, "# inferscope-bpf report", quiet ? "the terminal" : "standard output");
		if (!quiet)
			err = th_slurp(c->f.err);
		if (strstr(buf, " read\033[K") || (err && strstr(err, " read")))
			fail_msg("a progress line %s:\n%s%s", quiet ? "with -q" : "on a file", buf, err ? err : "");
		free(err);
		free(buf);
	}
}

/* export of a recording that takes a while: the line on the terminal, and
 * export's own message after it is erased. */
static void test_progress_of_export(void **state)
{
	struct ctx *c = *state;
	char *synth[] = { SYNTH_REC, "-n", "300000", c->big, NULL };
	char db[600], cmd[2000], want[800], *buf = NULL;
	size_t len = 0;
	double t0, took;
	int fd;

	th_expect_exit(th_run_to(synth, "/dev/null", c->f.err), 0, c->f.err);
	snprintf(db, sizeof(db), "%s/big.db", c->f.dir);
	snprintf(cmd, sizeof(cmd), "%s export %s --sqlite %s", TRACER, c->big, db);
	t0 = th_now();
	c->child = on_pty(cmd, &fd);
	finish(c, fd, &buf, &len);
	took = th_now() - t0;
	if (took < PROGRESS_AFTER_S + 0.5)
		fail_msg("the export took %.2f s, too little to show a progress line: make the recording bigger", took);
	snprintf(want, sizeof(want), "\r%s export: ", CLI_PROGRAM);
	expect_contains(buf, want, "the terminal");
	expect_contains(buf, " read (the input: ", "the terminal");
	snprintf(want, sizeof(want), "\033[K\r\033[K%s export: %s is recording 1", CLI_PROGRAM, c->big);
	expect_contains(buf, want, "the terminal");
	free(buf);
}

/* ---- the man page and the completion -------------------------------------------------- */

/* What gen writes, as a string. */
static char *generated(int (*gen)(FILE *, const char *), const char *part)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(gen(m, part), 0);
	assert_int_equal(fclose(m), 0);
	return text;
}

static int gen_bash(FILE *out, const char *part)
{
	(void)part;
	return cli_docs__bash(out);
}

/* The text between the man page's markers of part. */
static char *man_part(const char *man, const char *part)
{
	char begin[100], end[100];
	const char *a, *b;

	snprintf(begin, sizeof(begin), ".\\\" BEGIN GENERATED: cli_docs man %s\n", part);
	snprintf(end, sizeof(end), ".\\\" END GENERATED: cli_docs man %s\n", part);
	a = strstr(man, begin);
	b = a ? strstr(a, end) : NULL;
	if (!b)
		fail_msg("%s lacks the lines '%.*s' and '%.*s' in order: restore them and run `make docs`", MAN,
			 (int)strlen(begin) - 1, begin, (int)strlen(end) - 1, end);
	a += strlen(begin);
	return strndup(a, (size_t)(b - a));
}

static void test_docs_say_what_the_table_says(void **state)
{
	static const char *const parts[] = { "synopsis", "reference" };
	char *man = th_slurp(MAN), *bash = th_slurp(COMPLETION), *want;

	(void)state;
	assert_non_null(man);
	assert_non_null(bash);
	for (size_t i = 0; i < 2; i++) {
		char *have = man_part(man, parts[i]);

		want = generated(cli_docs__man, parts[i]);
		if (strcmp(have, want))
			fail_msg("%s's %s is not what the table of commands says: run `make docs`", MAN, parts[i]);
		free(have);
		free(want);
	}
	want = generated(gen_bash, NULL);
	if (strcmp(bash, want))
		fail_msg("%s is not what the table of commands says: run `make docs`", COMPLETION);
	free(want);
	/* what a user looked for and did not find */
	expect_contains(man, ".SS \"inferscope-bpf check\"", MAN);
	expect_contains(man, ".SS \"inferscope-bpf top\"", MAN);
	expect_contains(man, ".SS \"inferscope-bpf export\"", MAN);
	expect_contains(man, "\\fB\\-\\-flight\\-recorder\\fR", MAN);
	expect_contains(man, "\\fB\\-\\-trigger\\fR", MAN);
	free(man);
	free(bash);
}

/* The options of a command as its argp has them: "-p", "--pid", ... (not
 * "-?": a glob character to the completion). */
static size_t options_of(const struct argp *a, char **v, size_t n, size_t max)
{
	for (const struct argp_option *o = a->options; o && (o->name || o->key || o->doc); o++) {
		if (o->flags & (OPTION_DOC | OPTION_HIDDEN))
			continue;
		if (o->name && n < max && asprintf(&v[n], "--%s", o->name) > 0)
			n++;
		if (o->key > 0 && o->key <= UCHAR_MAX && isprint(o->key) && o->key != '?' && n < max &&
		    asprintf(&v[n], "-%c", o->key) > 0)
			n++;
	}
	for (const struct argp_child *ch = a->children; ch && ch->argp; ch++)
		n = options_of(ch->argp, v, n, max);
	return n;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What bash completes after the words: the lines of COMPREPLY, sorted. */
static size_t complete(struct ctx *c, const char *const *words, char **v, size_t max)
{
	char *argv[16], *text, *save = NULL;
	size_t n = 0, k = 0;

	argv[k++] = "bash";
	argv[k++] = "--norc";
	argv[k++] = "--noprofile";
	argv[k++] = "-c";
	argv[k++] = "source " COMPLETION " && complete -p inferscope-bpf >&2 && COMP_WORDS=(\"$@\") && "
		    "COMP_CWORD=$(($# - 1)) && _inferscope_bpf; printf '%s\\n' \"${COMPREPLY[@]}\"";
	argv[k++] = "bash";
	for (size_t i = 0; words[i]; i++)
		argv[k++] = (char *)words[i];
	argv[k] = NULL;
	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	text = th_slurp(c->f.err);
	expect_contains(text, "complete -F _inferscope_bpf inferscope-bpf", "complete -p");
	free(text);
	text = th_slurp(c->out);
	assert_non_null(text);
	for (char *t = strtok_r(text, "\n", &save); t && n < max; t = strtok_r(NULL, "\n", &save))
		v[n++] = strdup(t);
	free(text);
	qsort(v, n, sizeof(*v), by_name);
	return n;
}

static void expect_words(char **have, size_t nhave, char **want, size_t nwant, const char *what)
{
	qsort(want, nwant, sizeof(*want), by_name);
	for (size_t i = 0; i < nhave || i < nwant; i++)
		if (i >= nhave || i >= nwant || strcmp(have[i], want[i]))
			fail_msg("%s: completed \"%s\" where the table has \"%s\"", what, i < nhave ? have[i] : "(none)",
				 i < nwant ? want[i] : "(none)");
	for (size_t i = 0; i < nhave; i++)
		free(have[i]);
	for (size_t i = 0; i < nwant; i++)
		free(want[i]);
}

static void test_completion(void **state)
{
	struct ctx *c = *state;
	char *have[256], *want[256];
	size_t nhave, nwant;

	/* every command's options, after "-" */
	for (size_t i = 0; i < cli_ncommands; i++) {
		const struct cmd *cmd = cli_commands[i];
		const char *words[] = { "inferscope-bpf", *cmd->name ? cmd->name : "-", "-", NULL };

		if (!*cmd->name)
			words[2] = NULL;
		nhave = complete(c, words, have, 256);
		nwant = options_of(cli__argp(cmd), want, 0, 256);
		expect_words(have, nhave, want, nwant, *cmd->name ? cmd->name : "the default command");
	}
	/* the commands */
	{
		const char *words[] = { "inferscope-bpf", "", NULL };

		nhave = complete(c, words, have, 256);
		nwant = 0;
		for (size_t i = 1; i < cli_ncommands; i++)
			want[nwant++] = strdup(cli_commands[i]->name);
		expect_words(have, nhave, want, nwant, "the commands");
	}
	/* a command's option by its prefix, a value, a value after '=' */
	{
		const char *top[] = { "inferscope-bpf", "top", "--int", NULL };
		const char *format[] = { "inferscope-bpf", "analyze", "--format", "", NULL };
		const char *eq[] = { "inferscope-bpf", "diff", "--format", "=", "j", NULL };
		const char *sev[] = { "inferscope-bpf", "daemon", "--keep-severity", "c", NULL };

		nhave = complete(c, top, have, 256);
		want[0] = strdup("--interval");
		expect_words(have, nhave, want, 1, "top --int");
		nhave = complete(c, format, have, 256);
		want[0] = strdup("md");
		want[1] = strdup("json");
		want[2] = strdup("html");
		want[3] = strdup("perfetto");
		expect_words(have, nhave, want, 4, "analyze --format");
		nhave = complete(c, eq, have, 256);
		want[0] = strdup("json");
		expect_words(have, nhave, want, 1, "diff --format=j");
		nhave = complete(c, sev, have, 256);
		want[0] = strdup("critical");
		expect_words(have, nhave, want, 1, "daemon --keep-severity c");
	}
}

/* argp takes the first of two options of one name: within a command, each
 * name is one option's. */
static void test_options_defined_once(void **state)
{
	(void)state;
	for (size_t i = 0; i < cli_ncommands; i++) {
		char *v[256];
		size_t n = options_of(cli__argp(cli_commands[i]), v, 0, 256);

		qsort(v, n, sizeof(*v), by_name);
		for (size_t k = 0; k + 1 < n; k++)
			if (!strcmp(v[k], v[k + 1]))
				fail_msg("%s: %s is two options", *cli_commands[i]->name ? cli_commands[i]->name :
					 "the default command", v[k]);
		for (size_t k = 0; k < n; k++)
			free(v[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_apart_from_job_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_of_pid_on_stdout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_help_everywhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_on_a_terminal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_of_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_docs_say_what_the_table_says, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_options_defined_once, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
