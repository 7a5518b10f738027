/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The man page's reference sections and the bash completion, written from
 * the table of commands (cli.h) and the settings (settings.h), never kept
 * by hand: `make docs` writes them into dist/ (scripts/update-docs.sh,
 * with build/tests/tools/cli_docs) and tests/integration/test_cli.c fails
 * when dist/ differs from what the table says.
 */
#ifndef INFERSCOPE_CLI_DOCS_H
#define INFERSCOPE_CLI_DOCS_H

#include <stdio.h>

/* A generated part of the man page, in roff: "synopsis" (SYNOPSIS) or
 * "reference" (COMMANDS, each with its options; the settings' options;
 * EXIT STATUS). 0 or -errno (-EINVAL for another part). */
int cli_docs__man(FILE *out, const char *part);

/* The bash completion script. 0, or -EINVAL after saying which option's
 * value it could not say how to complete. */
int cli_docs__bash(FILE *out);

#endif
