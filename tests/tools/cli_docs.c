// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prints what user/cli/cli_docs.c writes from the table of commands:
 *   cli_docs man synopsis|reference   a generated part of the man page
 *   cli_docs bash                     the bash completion script
 * `make docs` (scripts/update-docs.sh) puts them into dist/.
 */
#include <stdio.h>
#include <string.h>
#include "cli_docs.h"

int main(int argc, char **argv)
{
	int e;

	if (argc == 3 && !strcmp(argv[1], "man"))
		e = cli_docs__man(stdout, argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "bash"))
		e = cli_docs__bash(stdout);
	else {
		fprintf(stderr, "usage: %s man synopsis|reference | %s bash\n", argv[0], argv[0]);
		return 2;
	}
	if (fflush(stdout) || e) {
		fprintf(stderr, "%s: writing failed\n", argv[0]);
		return 1;
	}
	return 0;
}
