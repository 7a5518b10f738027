// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inferscope-bpf: the table of commands (commands.c) run by the command
 * line (cli.h). Nothing here that a test of the commands would need.
 */
#include "cli.h"

int main(int argc, char **argv)
{
	return cli__main(argc, argv);
}
