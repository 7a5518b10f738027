/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The command line, as perf's: a table of commands (commands.c), one file
 * per command (cmd_*.c). A command's options are its own, those of the
 * option groups it names (the targets of a recording, the report's file,
 * ...: each defined here, once), and those of the settings sections it
 * names, made from the settings table (settings.h). cli__main parses with
 * argp and runs the command; the man page and the bash completion are
 * generated from the same table (cli_docs.h).
 *
 * Every command exits 0 on success, 1 when its work failed, and EXIT_USAGE
 * on a usage error or a bad configuration (argp's own refusals too). Every
 * message starts with the program and the command: "inferscope-bpf
 * analyze: ...", and a usage error ends with "Try `inferscope-bpf analyze
 * --help' ...".
 */
#ifndef INFERSCOPE_CLI_H
#define INFERSCOPE_CLI_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include "config.h"
#include "settings.h"

#define CLI_PROGRAM	"inferscope-bpf"
#define EXIT_USAGE	2

/* The option groups a command takes (struct cmd's groups), in the order
 * of --help. */
enum cli_group {
	CLI_TARGETS	= 1 << 0,	/* -p PID[,PID...], -d SEC */
	CLI_RECORDING	= 1 << 1,	/* -o FILE (the recording), --list-probes, --ready-file, --run-as-root, --user */
	CLI_REPORT	= 1 << 2,	/* --report FILE */
	CLI_REPORT_O	= 1 << 3,	/* -o FILE: the report (analyze, diff) */
	CLI_SET_RECORD	= 1 << 4,	/* the options of the record.* settings */
	CLI_SET_ANALYZE	= 1 << 5,	/* analyze.* */
	CLI_SET_DAEMON	= 1 << 6,	/* daemon.* */
	CLI_SHARE	= 1 << 7,	/* --group GROUP */
	CLI_CONFIG	= 1 << 8,	/* --config FILE */
	CLI_VERBOSE	= 1 << 9,	/* -v */
	CLI_QUIET	= 1 << 10,	/* -q */
};
#define CLI_NGROUPS	11

/* The argp keys of the settings' options: CLI_SETTING_KEYS + the index of
 * the option (settings__option). A command's own options' keys start at
 * CLI_OWN_KEYS; the groups' are below both. */
#define CLI_SETTING_KEYS	0x1000
#define CLI_OWN_KEYS		0x4000

/* What completes a command's positional arguments. */
enum cli_args { CLI_ARGS_NONE, CLI_ARGS_RECORDINGS, CLI_ARGS_WORDS };

struct cli;

struct cmd {
	const char *name;		/* argv[1]; "" for the default command (-p PID, -- CMD) */
	const char *args_doc;		/* the usage line after the options (argp's; \n between alternatives) */
	const char *summary;		/* its line in the list of commands */
	const char *doc;		/* --help's text; after a \v, what follows the options (argp's) */
	const struct argp_option *options;	/* its own options, or NULL */
	argp_parser_t parse;		/* their parser (state->input is the struct cli), or NULL */
	unsigned int groups;		/* enum cli_group */
	size_t min_args, max_args;	/* positional arguments: cli->args */
	const char *missing_args;	/* the error when there are fewer than min_args */
	enum cli_args complete;
	const char *words;		/* CLI_ARGS_WORDS: the words, space-separated */
	bool takes_command;		/* -- CMD [ARG...] */
	int (*run)(struct cli *cli);	/* the exit status */
};

/* A setting's option given on the command line, applied over the file and
 * the environment (settings.h). */
struct cli_setting {
	const char *key, *value;
	char option[48];		/* "--budget" */
};

#define CLI_MAX_SETTINGS	128

/* What the command line said. */
struct cli {
	const struct cmd *cmd;
	char name[48];			/* "inferscope-bpf record": what messages start with */
	int argc;			/* the command line as given (kept in a recording) */
	char **argv;
	const char **args;		/* the positional arguments */
	size_t nargs;
	/* The groups' options: the targets (-p, -d, the command after --),
	 * who runs the command, --ready-file, --group, -v, -q. The rest of a
	 * recording's configuration comes from the settings. */
	struct record_config rec;
	const char *output;		/* -o: the recording */
	const char *report;		/* --report, or analyze's and diff's -o */
	const char *config_path;	/* --config */
	bool list_probes;
	struct cli_setting sets[CLI_MAX_SETTINGS];
	size_t nsets;
	struct settings *scratch;	/* checks each setting's value as its option is parsed */
};

/* The commands, in the order of the help and the man page (commands.c);
 * the first is the default command. */
extern const struct cmd *const cli_commands[];
extern const size_t cli_ncommands;

int cli__main(int argc, char **argv);

/* The whole argp of cmd: its own options, its groups', -h, --usage, -V;
 * the default command's text lists every command. */
const struct argp *cli__argp(const struct cmd *cmd);

/* The configuration: defaults < file < environment < the options given.
 * NULL with why in err. ctx is the struct cli (daemon.h's loader). */
struct settings *cli__load(void *ctx, char *err, size_t errlen);
/* The same; NULL after saying why. */
struct settings *cli__settings(struct cli *cli);

/* The report format the configuration says (enum report_format), or -1
 * after saying why the configuration is bad. */
int cli__report_format(struct cli *cli);

/* Says "inferscope-bpf CMD: <message>" and how to get help on stderr;
 * returns EXIT_USAGE. */
int cli__usage(const struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For the commands that record (cmd_record.c): a recording's configuration
 * from the settings s and what only the command line says (the targets,
 * who runs the command, who may read the outputs, -v, -q). */
void cmd_record__config(struct record_config *o, struct settings *s, const struct cli *cli);
/* Records as record and the default command do. The exit status; *path:
 * the recording to analyze (a recording cut short by a full disk too), or
 * NULL. */
int cmd_record__record(struct cli *cli, struct settings *s, const char **path);

#endif
