// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf diff BASE NEW`: what changed from one recording to
 * another (analysis/api/analyze.h).
 */
#include "analyze.h"
#include "cli.h"
#include "commands.h"
#include "progress.h"

static int run(struct cli *cli)
{
	int fmt = cli__report_format(cli), e;
	struct progress *pg;

	if (fmt < 0)
		return EXIT_USAGE;
	if (fmt == REPORT_PERFETTO)
		return cli__usage(cli, "analyze.format is perfetto, which diff does not write: give --format md, json "
				  "or html");
	pg = progress__begin(cli->name, cli->args, cli->nargs, cli->rec.quiet);
	e = analyze__diff(cli->args[0], cli->args[1], (enum report_format)fmt, cli->report, &cli->rec.output.share);
	progress__end(pg);
	return e ? 1 : 0;
}

const struct cmd cmd_diff = {
	.name = "diff",
	.args_doc = "BASE.isr NEW.isr",
	.summary = "what got slower from one recording to another, and why",
	.doc = "Compare two recordings: the findings that appeared or vanished (most added cost first), the metrics "
	       "that changed, the kernels whose GPU time changed most (--format md, json or html).",
	.groups = CLI_REPORT | CLI_REPORT_O | CLI_SET_ANALYZE | CLI_SHARE | CLI_CONFIG | CLI_QUIET,
	.min_args = 2,
	.max_args = 2,
	.missing_args = "give the two recordings to compare: BASE.isr NEW.isr",
	.complete = CLI_ARGS_RECORDINGS,
	.run = run,
};
