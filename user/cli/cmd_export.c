// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf export FILE... --sqlite OUT.db`: recordings as SQL
 * tables (docs/sql.md).
 */
#include "analyze.h"
#include "cli.h"
#include "commands.h"
#include "progress.h"

enum { OPT_SQLITE = CLI_OWN_KEYS };

static const char *sqlite_path;

static const struct argp_option options[] = {
	{ "sqlite", OPT_SQLITE, "OUT.db", 0, "Write the recordings into this SQLite database (created, or added to)", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_SQLITE:
		sqlite_path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!sqlite_path) {
			argp_error(state, "give the database: --sqlite OUT.db");
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int run(struct cli *cli)
{
	struct progress *pg = progress__begin(cli->name, cli->args, cli->nargs, cli->rec.quiet);
	int e = analyze__export_sqlite(cli->args, cli->nargs, sqlite_path);

	progress__end(pg);
	return e ? 1 : 0;
}

const struct cmd cmd_export = {
	.name = "export",
	.args_doc = "FILE.isr... --sqlite OUT.db",
	.summary = "recordings as SQL tables (docs/sql.md)",
	.doc = "Export recordings as SQL tables: processes, threads, CUDA calls, kernels, copies, thread states, GPU idle "
	       "gaps by cause, faults, GIL waits, Python stacks and samples, NVTX, findings, steps (docs/sql.md). "
	       "Several recordings go into one database, each with its own id in the column `recording`.",
	.options = options,
	.parse = parse,
	.groups = CLI_QUIET,
	.min_args = 1,
	.max_args = (size_t)-1,
	.missing_args = "give the recordings to export",
	.complete = CLI_ARGS_RECORDINGS,
	.run = run,
};
