// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line's machinery (cli.h): the option groups, the options of
 * the settings, the argp of each command, the dispatch.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accounts.h"
#include "cli.h"

enum {
	OPT_LIST_PROBES = 0x100,
	OPT_READY_FILE,
	OPT_RUN_AS_ROOT,
	OPT_USER,
	OPT_REPORT,
	OPT_GROUP,
	OPT_CONFIG,
	OPT_USAGE,
};

_Static_assert(OPT_USAGE < CLI_SETTING_KEYS, "the groups' option keys reach the settings'");

/* ---- the groups ---------------------------------------------------------------- */

static bool pid_listed(const struct record_config *rec, __u32 pid)
{
	for (size_t i = 0; i < rec->targets.pid_count; i++)
		if (rec->targets.pids[i] == pid)
			return true;
	return false;
}

static error_t parse_pids(const char *arg, struct record_config *rec, struct argp_state *state)
{
	const char *p = arg;

	while (*p) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || v == 0 || v > INT_MAX || (*end && *end != ',')) {
			argp_error(state, "-p: '%s' is not a list of process ids (expected PID[,PID...])", arg);
			return EINVAL;
		}
		p = *end ? end + 1 : end;
		if (pid_listed(rec, (__u32)v))
			continue;	/* -p 7,7 or -p 7 -p 7: traced once */
		if (rec->targets.pid_count == CONFIG_MAX_PIDS) {
			argp_error(state, "-p: at most %d pids", CONFIG_MAX_PIDS);
			return EINVAL;
		}
		rec->targets.pids[rec->targets.pid_count++] = (__u32)v;
	}
	return 0;
}

static error_t parse_duration(const char *arg, struct record_config *rec, struct argp_state *state)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(arg, &end);
	if (errno || end == arg || *end || !(s > 0) || s > 1e7) {
		argp_error(state, "-d: '%s' is not a duration in seconds (e.g. 10 or 2.5)", arg);
		return EINVAL;
	}
	if (s < 1e-3) {
		argp_error(state, "-d: '%s' is shorter than a millisecond, too short to record anything (leave -d out "
			   "to record until the targets exit or Ctrl-C)", arg);
		return EINVAL;
	}
	rec->targets.duration_ns = (__u64)(s * 1e9);
	return 0;
}

static const struct argp_option targets_options[] = {
	{ "pid", 'p', "PID[,PID...]", 0,
	  "Trace these running processes, their threads and their running descendants (--no-follow: only these)", 0 },
	{ "duration", 'd', "SEC", 0, "Stop after SEC seconds (default: when the targets exit or on Ctrl-C)", 0 },
	{ 0 },
};

static error_t parse_targets(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;

	switch (key) {
	case 'p':
		return parse_pids(arg, &cli->rec, state);
	case 'd':
		return parse_duration(arg, &cli->rec, state);
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option recording_options[] = {
	{ "output", 'o', "FILE", 0,
	  "The recording (record: required; otherwise default ./inferscope-DATE-TIME.isr): a new file, 0600", 0 },
	{ "list-probes", OPT_LIST_PROBES, NULL, 0,
	  "Print the CUDA and Python GIL probe sites chosen in the targets and exit (starts nothing)", 0 },
	{ "ready-file", OPT_READY_FILE, "FILE", 0, "Create FILE once the probes are live (for scripts)", 0 },
	{ "run-as-root", OPT_RUN_AS_ROOT, NULL, 0,
	  "Run the command as root even under sudo (default: as the user who ran sudo)", 0 },
	{ "user", OPT_USER, "USER", 0, "Run the command as USER (a name, or UID:GID)", 0 },
	{ 0 },
};

static error_t parse_recording(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	struct record_config *rec = &cli->rec;

	switch (key) {
	case 'o':
		cli->output = arg;
		return 0;
	case OPT_LIST_PROBES:
		cli->list_probes = true;
		return 0;
	case OPT_READY_FILE:
		rec->output.ready_file = arg;
		return 0;
	case OPT_RUN_AS_ROOT:
	case OPT_USER:
		if (rec->targets.run_as != RUN_AS_INVOKER &&
		    (rec->targets.run_as == RUN_AS_ROOT) != (key == OPT_RUN_AS_ROOT)) {
			argp_error(state, "--run-as-root and --user: choose one");
			return EINVAL;
		}
		rec->targets.run_as = key == OPT_USER ? RUN_AS_USER : RUN_AS_ROOT;
		if (key == OPT_USER)
			rec->targets.run_as_user = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option report_o_options[] = {
	{ "output", 'o', "FILE", 0, "Write the report to FILE (as --report)", 0 },
	{ 0 },
};

static const struct argp_option report_options[] = {
	{ "report", OPT_REPORT, "FILE", 0,
	  "Write the report to FILE, a new file (default: standard output; where a command after -- has it, "
	  "standard error, for md only)", 0 },
	{ 0 },
};

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;

	if (key != 'o' && key != OPT_REPORT)
		return ARGP_ERR_UNKNOWN;
	cli->report = arg;
	return 0;
}

static const struct argp_option share_options[] = {
	{ "group", OPT_GROUP, "GROUP", 0, "Let GROUP read what is written (mode 0640; default: the owner only, 0600)", 0 },
	{ 0 },
};

static const struct argp_option config_options[] = {
	{ "config", OPT_CONFIG, "FILE", 0,
	  "Read the configuration from FILE (default " SETTINGS_DEFAULT_FILE ", when it exists; docs/daemon.md)", 0 },
	{ 0 },
};

static const struct argp_option verbose_options[] = {
	{ "verbose", 'v', NULL, 0, "Show the attached probes and libbpf's messages", 0 },
	{ 0 },
};

static const struct argp_option quiet_options[] = {
	{ "quiet", 'q', NULL, 0, "Errors only: no status or progress line, no banners or notices", 0 },
	{ 0 },
};

static error_t parse_general(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	int e;

	switch (key) {
	case OPT_GROUP:
		e = accounts__group(arg, &cli->rec.output.share.gid);
		if (e) {
			argp_error(state, "--group: %s '%s'%s", e == -ENOENT ? "no group" : "cannot look up group", arg,
				   e == -ENOENT ? " in /etc/group (give its number)" : "");
			return EINVAL;
		}
		cli->rec.output.share.group = true;
		return 0;
	case OPT_CONFIG:
		cli->config_path = arg;
		return 0;
	case 'v':
		cli->rec.verbose = true;
		return 0;
	case 'q':
		cli->rec.quiet = true;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* ---- the settings' options ----------------------------------------------------------- */

enum { SECTION_RECORD, SECTION_ANALYZE, SECTION_DAEMON, NSECTIONS };

static const char *const section_names[NSECTIONS] = { "record.", "analyze.", "daemon." };

#define MAX_SECTION_OPTIONS 64

/* A bad value is a usage error at once, with the option's name and the
 * setting's reason. */
static error_t parse_setting(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	const struct setting_option *o;
	struct cli_setting *set;
	char why[1024];

	if (key < CLI_SETTING_KEYS || key >= CLI_OWN_KEYS || !(o = settings__option((size_t)(key - CLI_SETTING_KEYS))))
		return ARGP_ERR_UNKNOWN;
	if (!cli->scratch)
		cli->scratch = settings__new();
	if (!cli->scratch) {
		argp_failure(state, EXIT_USAGE, ENOMEM, "parsing --%s", o->name);
		return ENOMEM;
	}
	if (cli->nsets == CLI_MAX_SETTINGS) {
		argp_error(state, "too many options");
		return EINVAL;
	}
	set = &cli->sets[cli->nsets];
	set->key = o->key;
	set->value = arg ? arg : o->value;
	snprintf(set->option, sizeof(set->option), "--%s", o->name);
	if (settings__set(cli->scratch, set->key, set->value, SRC_OPTION, set->option, why, sizeof(why))) {
		argp_error(state, "%s: %s", set->option, why);
		return EINVAL;
	}
	cli->nsets++;
	return 0;
}

/* The options of a section's settings. */
static const struct argp_option *section_options(int section)
{
	static struct argp_option opts[NSECTIONS][MAX_SECTION_OPTIONS + 1];
	struct argp_option *v = opts[section];
	size_t n = 0;

	if (v[0].name)
		return v;
	for (size_t i = 0; i < settings__option_count(); i++) {
		const struct setting_option *o = settings__option(i);

		if (strncmp(o->key, section_names[section], strlen(section_names[section])))
			continue;
		if (n == MAX_SECTION_OPTIONS || CLI_SETTING_KEYS + i >= CLI_OWN_KEYS)
			abort();	/* constants of this file and cli.h: raise them */
		v[n++] = (struct argp_option){ o->name, CLI_SETTING_KEYS + (int)i, o->arg,
					       o->arg && o->value ? OPTION_ARG_OPTIONAL : 0, o->help, 0 };
	}
	return v;
}

/* ---- a command's argp ---------------------------------------------------------------- */

static const struct argp_option *group_options(unsigned int group)
{
	switch (group) {
	case CLI_TARGETS:
		return targets_options;
	case CLI_RECORDING:
		return recording_options;
	case CLI_REPORT:
		return report_options;
	case CLI_REPORT_O:
		return report_o_options;
	case CLI_SET_RECORD:
		return section_options(SECTION_RECORD);
	case CLI_SET_ANALYZE:
		return section_options(SECTION_ANALYZE);
	case CLI_SET_DAEMON:
		return section_options(SECTION_DAEMON);
	case CLI_SHARE:
		return share_options;
	case CLI_CONFIG:
		return config_options;
	case CLI_VERBOSE:
		return verbose_options;
	default:
		return quiet_options;
	}
}

/* A part of --help: its heading, the parser of its options, and the
 * groups in it. */
struct help_part {
	const char *header;
	argp_parser_t parse;
	unsigned int groups;
};

static const struct help_part help_parts[] = {
	{ "What to trace:", parse_targets, CLI_TARGETS },
	{ "The recording:", parse_recording, CLI_RECORDING },
	{ "The report:", parse_report, CLI_REPORT | CLI_REPORT_O },
	{ "Recording settings (also record.* in the configuration file, INFERSCOPE_RECORD_* in the environment):",
	  parse_setting, CLI_SET_RECORD },
	{ "Report settings (also analyze.*, INFERSCOPE_ANALYZE_*):", parse_setting, CLI_SET_ANALYZE },
	{ "Daemon settings (also daemon.*, INFERSCOPE_DAEMON_*):", parse_setting, CLI_SET_DAEMON },
	{ "General:", parse_general, CLI_SHARE | CLI_CONFIG | CLI_VERBOSE | CLI_QUIET },
};

#define NHELP_PARTS (sizeof(help_parts) / sizeof(help_parts[0]))

/* The options of the groups of sec in groups, in one array; NULL: none.
 * Out of memory, the command line cannot be read: abort. */
static struct argp_option *help_part_options(const struct help_part *sec, unsigned int groups)
{
	struct argp_option *v = NULL;
	size_t n = 0;

	for (unsigned int g = 1; g < (1u << CLI_NGROUPS); g <<= 1) {
		const struct argp_option *o = group_options(g);
		size_t k = 0;

		if (!(sec->groups & groups & g))
			continue;
		while (o[k].name || o[k].key)
			k++;
		v = realloc(v, (n + k + 1) * sizeof(*v));
		if (!v)
			abort();
		memcpy(v + n, o, k * sizeof(*v));
		n += k;
	}
	if (v)
		v[n] = (struct argp_option){ 0 };
	return v;
}

static const struct argp_option common_options[] = {
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ NULL, '?', NULL, OPTION_ALIAS, NULL, 0 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print the program version", -1 },
	{ 0 },
};

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	const struct cmd *cmd = cli->cmd;

	switch (key) {
	case ARGP_KEY_INIT:
		for (size_t i = 0; state->root_argp->children[i].argp; i++)
			state->child_inputs[i] = cli;
		return 0;
	case 'h':
	case '?':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		return 0;
	case OPT_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE | ARGP_HELP_EXIT_OK);
		return 0;
	case 'V':
		printf("%s %s\n", CLI_PROGRAM, ISR_VERSION);
		exit(0);
	case ARGP_KEY_ARG:
		if (cli->nargs == cmd->max_args) {
			argp_error(state, "unexpected argument '%s'%s", arg,
				   cmd->takes_command ? " (put the command to launch after --)" : "");
			return EINVAL;
		}
		cli->args[cli->nargs++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (cli->nargs < cmd->min_args) {
			argp_error(state, "%s", cmd->missing_args);
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static size_t cmd_index(const struct cmd *cmd)
{
	size_t i;

	for (i = 0; i < cli_ncommands && cli_commands[i] != cmd; i++)
		;
	if (i == cli_ncommands)
		abort();	/* a command outside the table */
	return i;
}

#define MAX_COMMANDS 16

/* --help's text; for the default command, its own, then every command
 * with its arguments and what it does. */
static const char *help_text(const struct cmd *cmd)
{
	static char overview[8192];
	const char *after = strchr(cmd->doc, '\v');
	size_t n;

	if (*cmd->name)
		return cmd->doc;
	if (overview[0])
		return overview;
	n = (size_t)snprintf(overview, sizeof(overview), "%.*s\n\n",
			     (int)(after ? (size_t)(after - cmd->doc) : strlen(cmd->doc)), cmd->doc);
	for (size_t i = 0; i < cli_ncommands && n < sizeof(overview); i++) {
		const struct cmd *c = cli_commands[i];
		const char *a = c->args_doc ? c->args_doc : "";

		/* one line per alternative of the usage line */
		do {
			size_t len = strcspn(a, "\n");

			n += (size_t)snprintf(overview + n, sizeof(overview) - n, "  %s%s%s%s%.*s\n", CLI_PROGRAM,
					      *c->name ? " " : "", c->name, len ? " " : "", (int)len, a);
			a += len + (a[len] == '\n');
		} while (*a && n < sizeof(overview));
		if (n < sizeof(overview))
			n += (size_t)snprintf(overview + n, sizeof(overview) - n, "        %s\n", c->summary);
	}
	if (after && n < sizeof(overview))
		snprintf(overview + n, sizeof(overview) - n, "%s", after);
	return overview;
}

const struct argp *cli__argp(const struct cmd *cmd)
{
	static struct argp roots[MAX_COMMANDS], own[MAX_COMMANDS], parts[MAX_COMMANDS][NHELP_PARTS];
	static struct argp_child children[MAX_COMMANDS][NHELP_PARTS + 2];
	size_t k = cmd_index(cmd), n = 0;
	struct argp_child *ch;

	if (k >= MAX_COMMANDS)
		abort();	/* raise MAX_COMMANDS */
	if (roots[k].parser)
		return &roots[k];
	ch = children[k];
	if (cmd->options || cmd->parse) {
		own[k] = (struct argp){ cmd->options, cmd->parse, NULL, NULL, NULL, NULL, NULL };
		ch[n++] = (struct argp_child){ &own[k], 0, NULL, 0 };	/* first, without a heading */
	}
	for (size_t i = 0; i < NHELP_PARTS; i++) {
		struct argp_option *v = help_part_options(&help_parts[i], cmd->groups);

		if (!v)
			continue;
		parts[k][i] = (struct argp){ v, help_parts[i].parse, NULL, NULL, NULL, NULL, NULL };
		ch[n++] = (struct argp_child){ &parts[k][i], 0, help_parts[i].header, (int)i + 1 };
	}
	ch[n] = (struct argp_child){ 0 };
	roots[k] = (struct argp){ common_options, parse_common, cmd->args_doc, help_text(cmd), ch, NULL, NULL };
	return &roots[k];
}

/* ---- settings --------------------------------------------------------------------------- */

struct settings *cli__load(void *ctx, char *err, size_t errlen)
{
	const struct cli *cli = ctx;
	struct settings *s = settings__new();
	char why[1024];
	int e;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e = settings__load_file(s, cli->config_path, err, errlen);
	e = e ?: settings__load_env(s, NULL, err, errlen);
	for (size_t i = 0; !e && i < cli->nsets; i++) {
		e = settings__set(s, cli->sets[i].key, cli->sets[i].value, SRC_OPTION, cli->sets[i].option, why,
				  sizeof(why));
		if (e)
			snprintf(err, errlen, "%s: %s", cli->sets[i].option, why);
	}
	e = e ?: settings__check(s, err, errlen);
	if (e) {
		settings__free(s);
		return NULL;
	}
	return s;
}

struct settings *cli__settings(struct cli *cli)
{
	char err[4600];
	struct settings *s = cli__load(cli, err, sizeof(err));

	if (!s)
		fprintf(stderr, "%s: %s\n", cli->name, err);
	return s;
}

int cli__report_format(struct cli *cli)
{
	struct settings *s = cli__settings(cli);
	int fmt = s ? settings__report_format(s) : -1;

	settings__free(s);
	return fmt;
}

int cli__usage(const struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry `%s --help' or `%s --usage' for more information.\n", cli->name, cli->name);
	return EXIT_USAGE;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

static const struct cmd *find_command(const char *name)
{
	for (size_t i = 1; i < cli_ncommands; i++)
		if (!strcmp(cli_commands[i]->name, name))
			return cli_commands[i];
	return NULL;
}

/* "record, analyze, ..., bench" */
static void command_names(char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 1; i < cli_ncommands && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i > 1 ? ", " : "", cli_commands[i]->name);
}

int cli__main(int argc, char **argv)
{
	static struct cli cli;
	const struct cmd *cmd = argc > 1 ? find_command(argv[1]) : NULL;
	int sub = cmd != NULL, nargs = argc, rc;
	char **args, names[256];

	argp_err_exit_status = EXIT_USAGE;
	cli.cmd = cmd = cmd ? cmd : cli_commands[0];
	snprintf(cli.name, sizeof(cli.name), "%s%s%s", CLI_PROGRAM, sub ? " " : "", cmd->name);
	cli.argc = argc;
	cli.argv = argv;
	record_config__defaults(&cli.rec);
	/* Everything after "--" is the command to launch, untouched by argp. */
	for (int i = 1 + sub; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			nargs = i;
			break;
		}
	if (nargs < argc && !cmd->takes_command)
		return cli__usage(&cli, "takes no command after --");
	if (nargs + 1 == argc)
		return cli__usage(&cli, "no command after --");
	if (nargs < argc)
		cli.rec.targets.command = &argv[nargs + 1];
	if (!sub && argc > 1 && argv[1][0] != '-') {
		command_names(names, sizeof(names));
		return cli__usage(&cli, "'%s' is not a command (%s); a command to trace goes after --: %s -- %s ...",
				  argv[1], names, CLI_PROGRAM, argv[1]);
	}
	/* argp names the program after argv[0]: for a command, "inferscope-bpf
	 * record", in its messages and its "Try `... --help'". */
	args = calloc((size_t)(nargs - sub) + 1, sizeof(*args));
	cli.args = calloc((size_t)nargs + 1, sizeof(*cli.args));
	if (!args || !cli.args) {
		fprintf(stderr, "%s: out of memory\n", cli.name);
		free(args);
		return 1;
	}
	args[0] = cli.name;
	memcpy(args + 1, argv + 1 + sub, (size_t)(nargs - 1 - sub) * sizeof(*args));
	if (argp_parse(cli__argp(cmd), nargs - sub, args, ARGP_NO_HELP, NULL, &cli)) {
		rc = EXIT_USAGE;
	} else {
		settings__free(cli.scratch);
		cli.scratch = NULL;
		rc = cmd->run(&cli);
	}
	settings__free(cli.scratch);
	free(cli.args);
	free(args);
	return rc;
}
