// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf daemon`: fleet sampling (daemon.h, docs/daemon.md).
 */
#include "cli.h"
#include "commands.h"
#include "daemon.h"

static int run(struct cli *cli)
{
	struct daemon_loader loader = { cli__load, cli };
	struct settings *s = cli__settings(cli);

	/* a bad configuration at start is a usage error, as for every command;
	 * the daemon reads it again itself, and at every SIGHUP */
	if (!s)
		return EXIT_USAGE;
	settings__free(s);
	return daemon__run(&loader, cli->argc, cli->argv);
}

const struct cmd cmd_daemon = {
	.name = "daemon",
	.args_doc = "[--once]",
	.summary = "fleet sampling: windows, Prometheus metrics, recordings kept",
	.doc = "Sample every process that maps libcuda (and those --match names): a recording window every interval, "
	       "analyzed, its metrics written for node_exporter's textfile collector, the recording kept by policy "
	       "(docs/daemon.md). SIGTERM ends the current window cleanly; SIGHUP reloads the configuration.",
	.groups = CLI_SET_DAEMON | CLI_SET_RECORD | CLI_CONFIG,
	.run = run,
};
