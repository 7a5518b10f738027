// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The man page's reference sections and the bash completion from the table
 * of commands (cli_docs.h): every option of a command is found by walking
 * the argp that cli__argp makes for it, the one that parses it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_docs.h"

#define MAX_NAMES 4
#define MAX_OPTS 128

/* One option as --help shows it: its names (with its aliases') and value. */
struct opt {
	const char *longs[MAX_NAMES];
	size_t nlong;
	int shorts[MAX_NAMES];
	size_t nshort;
	const char *arg;
	bool optional;
	const char *doc;
	int key;
};

static bool is_short(int key)
{
	return key > 0 && key <= UCHAR_MAX && isprint(key);
}

/* The options of a and its children, depth first, as argp lists them. */
static size_t collect(const struct argp *a, struct opt *v, size_t n)
{
	for (const struct argp_option *o = a->options; o && (o->name || o->key || o->doc); o++) {
		struct opt *e;

		if (o->flags & (OPTION_DOC | OPTION_HIDDEN))
			continue;
		if (!(o->flags & OPTION_ALIAS)) {
			if (n == MAX_OPTS)
				break;
			e = &v[n++];
			*e = (struct opt){ .arg = o->arg, .optional = o->flags & OPTION_ARG_OPTIONAL, .doc = o->doc,
					   .key = o->key };
		} else if (n) {
			e = &v[n - 1];
		} else {
			continue;
		}
		if (o->name && e->nlong < MAX_NAMES)
			e->longs[e->nlong++] = o->name;
		if (is_short(o->key) && e->nshort < MAX_NAMES)
			e->shorts[e->nshort++] = o->key;
	}
	for (const struct argp_child *c = a->children; c && c->argp; c++)
		n = collect(c->argp, v, n);
	return n;
}

static bool is_setting(const struct opt *o)
{
	return o->key >= CLI_SETTING_KEYS && o->key < CLI_OWN_KEYS;
}

static bool is_common(const struct opt *o)
{
	return o->nlong && (!strcmp(o->longs[0], "help") || !strcmp(o->longs[0], "usage") ||
			    !strcmp(o->longs[0], "version"));
}

/* ---- roff ---------------------------------------------------------------------------- */

/* Text in roff: backslashes and hyphens escaped, no line starting with a
 * control character; a newline starts a line, n bytes of s at most. */
static void roff_n(FILE *out, const char *s, size_t n)
{
	bool line_start = true;

	for (size_t i = 0; i < n && s[i]; i++) {
		char c = s[i];

		if (line_start && (c == '.' || c == '\''))
			fputs("\\&", out);
		if (c == '\\')
			fputs("\\e", out);
		else if (c == '-')
			fputs("\\-", out);
		else
			fputc(c, out);
		line_start = c == '\n';
	}
}

static void roff(FILE *out, const char *s)
{
	roff_n(out, s, strlen(s));
}

static void man_tag(FILE *out, const struct opt *o)
{
	const char *sep = "";

	for (size_t i = 0; i < o->nshort; i++, sep = ", ")
		fprintf(out, "%s\\fB\\-%c\\fR", sep, o->shorts[i]);
	for (size_t i = 0; i < o->nlong; i++, sep = ", ") {
		fprintf(out, "%s\\fB", sep);
		roff(out, "--");
		roff(out, o->longs[i]);
		fputs("\\fR", out);
	}
	if (o->arg) {
		fputs(o->optional ? "[=\\fI" : (o->nlong ? "=\\fI" : " \\fI"), out);
		roff(out, o->arg);
		fputs(o->optional ? "\\fR]" : "\\fR", out);
	}
	fputc('\n', out);
}

static void man_option(FILE *out, const struct opt *o)
{
	fputs(".TP\n", out);
	man_tag(out, o);
	roff(out, o->doc ? o->doc : "");
	fputc('\n', out);
}

static const char *cmd_title(const struct cmd *cmd)
{
	static char t[64];

	snprintf(t, sizeof(t), "%s%s%s", CLI_PROGRAM, *cmd->name ? " " : "", cmd->name);
	return t;
}

/* Each alternative of cmd's usage line. */
static void man_usage(FILE *out, const struct cmd *cmd)
{
	const char *a = cmd->args_doc ? cmd->args_doc : "";

	do {
		size_t len = strcspn(a, "\n");

		fprintf(out, ".B %s\n[\\fIOPTION\\fR...]", cmd_title(cmd));
		if (len) {
			fputc(' ', out);
			roff_n(out, a, len);
		}
		fputs("\n.br\n", out);
		a += len + (a[len] == '\n');
	} while (*a);
}

struct setting_section {
	unsigned int group;
	const char *title;
	const char *prefix;	/* of its keys */
};

static const struct setting_section setting_sections[] = {
	{ CLI_SET_RECORD, "RECORDING SETTINGS", "record." },
	{ CLI_SET_ANALYZE, "REPORT SETTINGS", "analyze." },
	{ CLI_SET_DAEMON, "DAEMON SETTINGS", "daemon." },
};

static void man_command(FILE *out, const struct cmd *cmd)
{
	static struct opt v[MAX_OPTS];
	size_t n = collect(cli__argp(cmd), v, 0);
	const char *after = strchr(cmd->doc, '\v');
	const char *sep = "";

	fprintf(out, ".SS \"%s\"\n", *cmd->name ? cmd_title(cmd) : CLI_PROGRAM " (the default command)");
	man_usage(out, cmd);
	fputs(".PP\n", out);
	roff_n(out, cmd->doc, after ? (size_t)(after - cmd->doc) : strlen(cmd->doc));
	fputc('\n', out);
	if (after) {
		fputs(".PP\n", out);
		roff(out, after + 1);
		fputc('\n', out);
	}
	for (size_t i = 0; i < n; i++)
		if (!is_setting(&v[i]) && !is_common(&v[i]))
			man_option(out, &v[i]);
	for (size_t i = 0; i < sizeof(setting_sections) / sizeof(setting_sections[0]); i++)
		if (cmd->groups & setting_sections[i].group) {
			fprintf(out, "%s%s", *sep ? sep : ".PP\nAnd the options of the ", setting_sections[i].title);
			sep = ", ";
		}
	if (*sep)
		fputs(".\n", out);
}

/* The commands that take a settings section's options: "record, top". */
static void takers(FILE *out, unsigned int group)
{
	const char *sep = "";

	for (size_t i = 0; i < cli_ncommands; i++)
		if (cli_commands[i]->groups & group) {
			fprintf(out, "%s\\fB%s\\fR", sep, *cli_commands[i]->name ? cli_commands[i]->name : "the default command");
			sep = ", ";
		}
}

static void man_settings(FILE *out, const struct setting_section *sec)
{
	static struct opt v[MAX_OPTS];
	const struct cmd *cmd = NULL;
	size_t n;

	for (size_t i = 0; i < cli_ncommands && !cmd; i++)
		if (cli_commands[i]->groups & sec->group)
			cmd = cli_commands[i];
	if (!cmd)
		return;
	fprintf(out, ".SH %s\nOptions of ", sec->title);
	takers(out, sec->group);
	fputs(". Each sets a setting (CONFIGURATION), which the configuration file and the environment set "
	      "too.\n", out);
	n = collect(cli__argp(cmd), v, 0);
	for (size_t i = 0; i < n; i++) {
		const struct setting_option *so;
		char env[128];

		if (!is_setting(&v[i]))
			continue;
		so = settings__option((size_t)(v[i].key - CLI_SETTING_KEYS));
		if (strncmp(so->key, sec->prefix, strlen(sec->prefix)))
			continue;
		man_option(out, &v[i]);
		settings__env_name(so->key, env, sizeof(env));
		fprintf(out, ".br\n\\fB%s\\fR, \\fB%s\\fR: ", so->key, env);
		roff(out, settings__doc(so->key));
		fputc('\n', out);
	}
}

static void man_exit_status(FILE *out)
{
	fprintf(out, ".SH EXIT STATUS\n"
		     ".TP\n.B 0\nSuccess.\n"
		     ".TP\n.B 1\nThe work failed: recording, analysis, writing what was asked for;\n"
		     ".B check\\fR: recording will not work;\n"
		     ".B bench \\-\\-check\\fR: a metric is over its limit.\n"
		     ".TP\n.B %d\nA usage error, for every command: an unknown option, a bad value, a missing or an\n"
		     "unexpected argument, options that exclude each other; or a bad configuration\n"
		     "(the file, the environment; the daemon's at its start too). Each names the\n"
		     "program and the command, and how to get its help.\n"
		     ".B check\n"
		     "and\n"
		     ".B bench\n"
		     "(whose 1 is a verdict) also exit %d when they could not do their work.\n",
		EXIT_USAGE, EXIT_USAGE);
}

int cli_docs__man(FILE *out, const char *part)
{
	if (!strcmp(part, "synopsis")) {
		fputs(".SH SYNOPSIS\n", out);
		for (size_t i = 0; i < cli_ncommands; i++)
			man_usage(out, cli_commands[i]);
		return ferror(out) ? -EIO : 0;
	}
	if (strcmp(part, "reference"))
		return -EINVAL;
	fputs(".SH COMMANDS\nEvery command takes\n.BR \\-h \", \" \\-\\-help\n(its options),\n.B \\-\\-usage\nand\n"
	      ".BR \\-V \", \" \\-\\-version .\n", out);
	for (size_t i = 0; i < cli_ncommands; i++)
		man_command(out, cli_commands[i]);
	for (size_t i = 0; i < sizeof(setting_sections) / sizeof(setting_sections[0]); i++)
		man_settings(out, &setting_sections[i]);
	man_exit_status(out);
	return ferror(out) ? -EIO : 0;
}

/* ---- bash completion ------------------------------------------------------------------ */

/* How an option's value completes, by the name of the value. */
enum value_kind { V_NONE, V_FILE, V_DIR, V_PID, V_GROUP, V_USER, V_WORDS };

static const struct {
	const char *arg;
	enum value_kind kind;
} value_kinds[] = {
	{ "FILE", V_FILE }, { "PATH", V_FILE }, { "ISR", V_FILE }, { "OUT.db", V_FILE }, { "THRESHOLDS", V_FILE },
	{ "DIR", V_DIR }, { "PID", V_PID }, { "PID[,PID...]", V_PID }, { "GROUP", V_GROUP }, { "USER", V_USER },
	/* numbers, durations, sizes, patterns: nothing to offer */
	{ "SEC", V_NONE }, { "SECONDS", V_NONE }, { "MIB", V_NONE }, { "HZ", V_NONE }, { "N", V_NONE },
	{ "BYTES", V_NONE }, { "REGEX", V_NONE }, { "CHECK", V_NONE }, { "NAMES", V_NONE }, { "R", V_NONE },
	{ "P", V_NONE },
};

static const char *const kind_names[] = { [V_FILE] = "files", [V_DIR] = "dirs", [V_PID] = "pids",
					  [V_GROUP] = "groups", [V_USER] = "users" };

/* An argument "md|json|html" completes to its lowercase words (PCT|off:
 * off); the others by value_kinds. -EINVAL, after saying so, for a name
 * not there. */
static int value_kind(const struct opt *o, enum value_kind *kind, char *words, size_t len)
{
	words[0] = '\0';
	if (strchr(o->arg, '|')) {
		const char *a = o->arg;
		size_t n = 0;

		while (*a) {
			size_t k = strcspn(a, "|");
			bool lower = true;

			for (size_t i = 0; i < k; i++)
				lower &= islower((unsigned char)a[i]) || isdigit((unsigned char)a[i]) || a[i] == '-';
			if (lower && n < len)
				n += (size_t)snprintf(words + n, len - n, "%s%.*s", n ? " " : "", (int)k, a);
			a += k + (a[k] == '|');
		}
		*kind = V_WORDS;
		return 0;
	}
	for (size_t i = 0; i < sizeof(value_kinds) / sizeof(value_kinds[0]); i++)
		if (!strcmp(o->arg, value_kinds[i].arg)) {
			*kind = value_kinds[i].kind;
			return 0;
		}
	fprintf(stderr, "cli_docs: the value %s of --%s: say how it completes in value_kinds (user/cli/cli_docs.c)\n",
		o->arg, o->nlong ? o->longs[0] : "?");
	return -EINVAL;
}

/* How the value of an option completes, by its name ("--format", "-o"):
 * the same in every command that has it, so that one case of $prev serves
 * them all. */
struct valued {
	char name[48];
	bool flag;		/* no value, or an optional one: never the next word */
	enum value_kind kind;
	char words[256];
};

#define MAX_VALUED 256

static struct valued valued[MAX_VALUED];
static size_t nvalued;

/* Notes how name's value completes; -EINVAL, after saying so, when
 * another command has it otherwise. */
static int note(const char *name, const struct valued *how)
{
	for (size_t i = 0; i < nvalued; i++) {
		const struct valued *v = &valued[i];

		if (strcmp(v->name, name))
			continue;
		if (v->flag != how->flag || (!v->flag && (v->kind != how->kind || strcmp(v->words, how->words)))) {
			fprintf(stderr, "cli_docs: %s takes another value in another command: the completion cannot tell "
					"them apart (rename one)\n", name);
			return -EINVAL;
		}
		return 0;
	}
	if (nvalued == MAX_VALUED)
		return -E2BIG;
	valued[nvalued] = *how;
	snprintf(valued[nvalued++].name, sizeof(valued[0].name), "%s", name);
	return 0;
}

/* Notes the options of cmd, and writes its arm of the case of $cmd: its
 * options ($opts) and what its arguments are ($args). */
static int bash_command(FILE *out, const struct cmd *cmd)
{
	static struct opt v[MAX_OPTS];
	size_t n = collect(cli__argp(cmd), v, 0);
	const char *sep = "";

	fprintf(out, "\t%s%s%s)\n\t\topts=\"", *cmd->name ? "" : "\"", cmd->name, *cmd->name ? "" : "\"");
	for (size_t i = 0; i < n; i++) {
		struct valued how = { .flag = !v[i].arg || v[i].optional };
		char name[48];
		int e = how.flag ? 0 : value_kind(&v[i], &how.kind, how.words, sizeof(how.words));

		for (size_t k = 0; !e && k < v[i].nshort; k++) {
			snprintf(name, sizeof(name), "-%c", v[i].shorts[k]);
			e = note(name, &how);
			if (v[i].shorts[k] != '?')	/* a glob character in a word list */
				fprintf(out, "%s%s", sep, name), sep = " ";
		}
		for (size_t k = 0; !e && k < v[i].nlong; k++) {
			snprintf(name, sizeof(name), "--%s", v[i].longs[k]);
			e = note(name, &how);
			fprintf(out, "%s%s", sep, name), sep = " ";
		}
		if (e)
			return e;
	}
	fputs("\"\n", out);
	if (cmd->complete == CLI_ARGS_RECORDINGS)
		fputs("\t\targs=recordings\n", out);
	else if (cmd->complete == CLI_ARGS_WORDS)
		fprintf(out, "\t\targs=\"words %s\"\n", cmd->words);
	fputs("\t\t;;\n", out);
	return 0;
}

/* One arm of the case of $prev: the names noted with kind (and words). */
static void bash_arm(FILE *out, enum value_kind kind, const char *words)
{
	const char *sep = "\t";

	for (size_t i = 0; i < nvalued; i++)
		if (!valued[i].flag && valued[i].kind == kind && (kind != V_WORDS || !strcmp(valued[i].words, words))) {
			fprintf(out, "%s%s", sep, valued[i].name);
			sep = " | ";
		}
	if (kind == V_WORDS)
		fprintf(out, ")\n\t\t_inferscope_bpf_reply words %s\n", words);
	else if (kind != V_NONE)
		fprintf(out, ")\n\t\t_inferscope_bpf_reply %s\n", kind_names[kind]);
	else
		fputs(")\n", out);
	fputs("\t\treturn\n\t\t;;\n", out);
}

/* The case of $prev: an option whose value comes next. */
static void bash_values(FILE *out)
{
	bool seen[V_WORDS] = { false };

	fputs("\t# the value of an option\n\tcase $prev in\n", out);
	for (size_t i = 0; i < nvalued; i++) {
		const struct valued *v = &valued[i];
		bool first = true;

		if (v->flag)
			continue;
		if (v->kind != V_WORDS) {
			if (!seen[v->kind])
				bash_arm(out, v->kind, NULL);
			seen[v->kind] = true;
			continue;
		}
		for (size_t k = 0; k < i && first; k++)
			first = valued[k].flag || valued[k].kind != V_WORDS || strcmp(valued[k].words, v->words);
		if (first)
			bash_arm(out, V_WORDS, v->words);
	}
	fputs("\tesac\n\n", out);
}

int cli_docs__bash(FILE *out)
{
	char names[512], *cases = NULL;
	size_t len = 0, clen = 0;
	FILE *c = open_memstream(&cases, &clen);
	int e = c ? 0 : -ENOMEM;

	names[0] = '\0';
	nvalued = 0;
	for (size_t i = 1; i < cli_ncommands; i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i > 1 ? " " : "", cli_commands[i]->name);
	/* the commands' arms first: they note every option's value */
	for (size_t i = 0; i < cli_ncommands && !e; i++)
		e = bash_command(c, cli_commands[i]);
	if (c && fclose(c) && !e)
		e = -ENOMEM;
	if (e) {
		free(cases);
		return e;
	}
	fputs("# bash completion for inferscope-bpf(8): generated from its table of commands\n"
	      "# (user/cli/commands.c) by `make docs` (user/cli/cli_docs.c); do not edit.\n\n"
	      "# COMPREPLY from what completes a value: $cur is the caller's.\n"
	      "_inferscope_bpf_reply()\n{\n"
	      "\tcase $1 in\n"
	      "\tfiles)\n\t\tcompopt -o filenames 2>/dev/null\n\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n\t\t;;\n"
	      "\tdirs)\n\t\tcompopt -o filenames 2>/dev/null\n\t\tmapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n\t\t;;\n"
	      "\trecordings)\n\t\tcompopt -o filenames 2>/dev/null\n"
	      "\t\tmapfile -t COMPREPLY < <(compgen -d -- \"$cur\"; compgen -f -X '!*.isr' -- \"$cur\")\n\t\t;;\n"
	      "\tpids)\n\t\tmapfile -t COMPREPLY < <(cd /proc && compgen -W \"$(printf '%s ' [0-9]*)\" -- \"$cur\")\n"
	      "\t\t;;\n"
	      "\tgroups)\n\t\tmapfile -t COMPREPLY < <(compgen -g -- \"$cur\")\n\t\t;;\n"
	      "\tusers)\n\t\tmapfile -t COMPREPLY < <(compgen -u -- \"$cur\")\n\t\t;;\n"
	      "\twords)\n\t\tshift\n\t\tmapfile -t COMPREPLY < <(compgen -W \"$*\" -- \"$cur\")\n\t\t;;\n"
	      "\tesac\n}\n\n"
	      "_inferscope_bpf()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd='' opts='' args='' i\n\n"
	      "\t# --option=VALUE: bash splits the word at the '='\n"
	      "\tif [[ $cur == = ]]; then\n\t\tcur=\n"
	      "\telif [[ $prev == = ]] && ((COMP_CWORD > 1)); then\n\t\tprev=${COMP_WORDS[COMP_CWORD - 2]}\n\tfi\n"
	      "\t# after --: the command to launch\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tif [[ ${COMP_WORDS[i]} == -- ]]; then\n"
	      "\t\t\tif declare -F _command_offset >/dev/null; then\n\t\t\t\t_command_offset $((i + 1))\n"
	      "\t\t\telif ((COMP_CWORD == i + 1)); then\n\t\t\t\tmapfile -t COMPREPLY < <(compgen -c -- \"$cur\")\n"
	      "\t\t\telse\n\t\t\t\t_inferscope_bpf_reply files\n\t\t\tfi\n\t\t\treturn\n\t\tfi\n\tdone\n", out);
	bash_values(out);
	fputs("\tif ((COMP_CWORD > 1)); then\n\t\tcase ${COMP_WORDS[1]} in\n\t\t", out);
	for (size_t i = 1; i < cli_ncommands; i++)
		fprintf(out, "%s%s", i > 1 ? " | " : "", cli_commands[i]->name);
	fprintf(out, ")\n\t\t\tcmd=${COMP_WORDS[1]}\n\t\t\t;;\n\t\tesac\n\tfi\n\n\tcase $cmd in\n%s\tesac\n\n"
		     "\tif [[ $cur == -* ]]; then\n\t\tmapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
		     "\telif [[ -z $cmd ]] && ((COMP_CWORD == 1)); then\n"
		     "\t\tmapfile -t COMPREPLY < <(compgen -W \"%s\" -- \"$cur\")\n"
		     "\telif [[ -n $args ]]; then\n\t\t# a kind, then its words: split on purpose\n\t\t# shellcheck disable=SC2086\n\t\t_inferscope_bpf_reply $args\n\tfi\n"
		     "} &&\n\tcomplete -F _inferscope_bpf inferscope-bpf\n", cases, names);
	free(cases);
	return ferror(out) ? -EIO : 0;
}
