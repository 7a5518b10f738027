// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf analyze FILE|DIR...`: the report of recordings, their
 * NCCL ranks lined up (analysis/api/analyze.h). No root needed.
 */
#include <stdio.h>
#include <unistd.h>
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
	if (fmt == REPORT_PERFETTO && !cli->report && isatty(STDOUT_FILENO))
		return cli__usage(cli, "a Perfetto trace is binary: give the file with -o FILE");
	pg = progress__begin(cli->name, cli->args, cli->nargs, cli->rec.quiet);
	e = analyze__run_many(cli->args, cli->nargs, (enum report_format)fmt, cli->report, &cli->rec.output.share);
	progress__end(pg);
	return e ? 1 : 0;
}

const struct cmd cmd_analyze = {
	.name = "analyze",
	.args_doc = "FILE|DIR...",
	.summary = "the report of recordings (md, json, html, perfetto), ranks lined up",
	.doc = "Analyze a recording and print the report. Several recordings (the files, or a directory's *.isr files) "
	       "make one report: the NCCL ranks of every recording lined up on CLOCK_REALTIME, the straggler and its "
	       "reason, then each recording's own report. No root needed.",
	.groups = CLI_REPORT | CLI_REPORT_O | CLI_SET_ANALYZE | CLI_SHARE | CLI_CONFIG | CLI_QUIET,
	.min_args = 1,
	.max_args = (size_t)-1,
	.missing_args = "give the recording to analyze (FILE, several, or a directory of them)",
	.complete = CLI_ARGS_RECORDINGS,
	.run = run,
};
