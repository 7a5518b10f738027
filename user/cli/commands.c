// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The table of commands (cli.h), in the order of the help and the man
 * page: one file per command, cmd_NAME.c. The first is the default
 * command: `inferscope-bpf -p PID` and `inferscope-bpf -- CMD`.
 */
#include "cli.h"
#include "commands.h"

const struct cmd *const cli_commands[] = {
	&cmd_run, &cmd_record, &cmd_analyze, &cmd_diff, &cmd_export, &cmd_check,
	&cmd_top, &cmd_daemon, &cmd_config, &cmd_bench,
};

const size_t cli_ncommands = sizeof(cli_commands) / sizeof(cli_commands[0]);
