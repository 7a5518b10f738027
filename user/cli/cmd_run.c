// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The default command: `inferscope-bpf -p PID` or `inferscope-bpf -- CMD`
 * records as `record` does (cmd_record.c), then reports as `analyze` does.
 *
 * The report never shares a stream with the job's output. It goes to
 * --report FILE; without it to standard output, unless a launched command
 * writes there: then a Markdown report goes to standard error (as perf
 * stat's), and json, html or perfetto need --report FILE.
 */
#include <stdio.h>
#include <unistd.h>
#include "analyze.h"
#include "cli.h"
#include "commands.h"
#include "progress.h"

static int report(struct cli *cli, const char *path, enum report_format fmt)
{
	struct progress *pg;
	int e;

	if (!cli->rec.quiet)
		fprintf(stderr, "%s: analyze it again with: %s analyze %s\n\n", cli->name, CLI_PROGRAM, path);
	if (!cli->report && cli->rec.targets.command) {
		/* standard output is the command's */
		fflush(stdout);
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			perror(CLI_PROGRAM ": the report to standard error");
			return 1;
		}
	}
	pg = progress__begin(cli->name, &path, 1, cli->rec.quiet);
	e = analyze__run(path, fmt, cli->report, &cli->rec.output.share);
	progress__end(pg);
	return e ? 1 : 0;
}

static int run(struct cli *cli)
{
	struct settings *s = cli__settings(cli);
	enum report_format fmt;
	const char *path = NULL;
	int rc;

	if (!s)
		return EXIT_USAGE;
	fmt = (enum report_format)settings__report_format(s);
	if (!cli->report && cli->rec.targets.command && fmt != REPORT_MD && !cli->list_probes)
		rc = cli__usage(cli, "--format: standard output is the command's: give a report other than md a "
			       "file with --report FILE");
	else if (fmt == REPORT_PERFETTO && !cli->report && isatty(STDOUT_FILENO))
		rc = cli__usage(cli, "a Perfetto trace is binary: give it a file with --report trace.pftrace");
	else
		rc = cmd_record__record(cli, s, &path);
	if (path) {
		int e = report(cli, path, fmt);

		rc = rc ? rc : e;
	}
	settings__free(s);
	return rc;
}

const struct cmd cmd_run = {
	.name = "",
	.args_doc = "-p PID[,PID...] [-d SEC]\n[-d SEC] -- CMD [ARG...]",
	.summary = "attach to the processes (or launch CMD), record, then report",
	.doc = "Trace a running GPU/ML job and explain where its time goes: record until the duration ends, Ctrl-C "
	       "or every target exits, then report. The report goes to --report FILE, or standard output; with a "
	       "command after --, whose standard output it is, to standard error (md; other formats need --report)."
	       "\vNeeds root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF. See `inferscope-bpf COMMAND --help' "
	       "and man inferscope-bpf.",
	.groups = CLI_TARGETS | CLI_RECORDING | CLI_REPORT | CLI_SET_RECORD | CLI_SET_ANALYZE | CLI_SHARE | CLI_CONFIG |
		  CLI_VERBOSE | CLI_QUIET,
	.takes_command = true,
	.run = run,
};
