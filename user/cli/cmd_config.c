// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf config show`: the effective configuration, each value
 * with its source (settings.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "commands.h"

enum { OPT_JSON = CLI_OWN_KEYS };

static bool json;

static const struct argp_option options[] = {
	{ "json", OPT_JSON, NULL, 0, "Print the configuration as JSON", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	if (key != OPT_JSON)
		return ARGP_ERR_UNKNOWN;
	json = true;
	return 0;
}

static int run(struct cli *cli)
{
	struct settings *s;
	int rc = 0;

	if (strcmp(cli->args[0], "show"))
		return cli__usage(cli, "the only subcommand is show: %s config show [--json]", CLI_PROGRAM);
	s = cli__settings(cli);
	if (!s)
		return EXIT_USAGE;
	if (settings__show(s, stdout, json)) {
		fprintf(stderr, "%s show: writing failed: %s\n", cli->name, strerror(errno));
		rc = 1;
	}
	settings__free(s);
	return rc;
}

const struct cmd cmd_config = {
	.name = "config",
	.args_doc = "show [--json]",
	.summary = "the effective configuration and where each value comes from",
	.doc = "Print the effective configuration: each setting's value and its source (default, the file and line, "
	       "the environment variable, the option). Options given here are applied as they would be elsewhere.",
	.options = options,
	.parse = parse,
	.groups = CLI_SET_RECORD | CLI_SET_ANALYZE | CLI_SET_DAEMON | CLI_CONFIG,
	.min_args = 1,
	.max_args = 1,
	.missing_args = "give the subcommand: show",
	.complete = CLI_ARGS_WORDS,
	.words = "show",
	.run = run,
};
