/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The commands of the table (commands.c), each defined in its cmd_NAME.c
 * (cmd_run.c: the default command, record then report).
 */
#ifndef INFERSCOPE_COMMANDS_H
#define INFERSCOPE_COMMANDS_H

#include "cli.h"

extern const struct cmd cmd_run, cmd_record, cmd_analyze, cmd_diff, cmd_export, cmd_check, cmd_top, cmd_daemon,
	cmd_config, cmd_bench;

#endif
