// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf top`: a live view of CUDA processes (top.h), recorded
 * with the probes and the overhead budget of `record` and its settings.
 */
#include <errno.h>
#include <stdlib.h>
#include "cli.h"
#include "commands.h"
#include "top.h"

enum { OPT_ONCE = CLI_OWN_KEYS, OPT_INTERVAL };

static struct top_opts opts = { .interval_s = 1.0 };

static const struct argp_option options[] = {
	{ "interval", OPT_INTERVAL, "SEC", 0, "Refresh every SEC seconds (default 1)", 0 },
	{ "once", OPT_ONCE, NULL, 0, "Print one interval as text and exit (text is also what a non-terminal gets, "
	  "every interval)", 0 },
	{ "output", 'o', "FILE", 0, "Keep the recording top makes in FILE (default: a temporary file, removed)", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'o':
		opts.keep = arg;
		return 0;
	case OPT_ONCE:
		opts.once = true;
		return 0;
	case OPT_INTERVAL:
		errno = 0;
		opts.interval_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(opts.interval_s >= 0.1) || opts.interval_s > 3600) {
			argp_error(state, "--interval: '%s' is not a number of seconds from 0.1 to 3600", arg);
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int run(struct cli *cli)
{
	static struct record_config rec;
	struct settings *s = cli__settings(cli);
	int rc;

	if (!s)
		return EXIT_USAGE;
	cmd_record__config(&rec, s, cli);
	rc = top__run(&rec, &opts);
	settings__free(s);
	return rc;
}

const struct cmd cmd_top = {
	.name = "top",
	.args_doc = "[-p PID[,PID...]]",
	.summary = "a live view of CUDA processes, refreshed every second",
	.doc = "A live view of CUDA processes, refreshed every second: per process and launching thread, launches/s, "
	       "CUDA synchronization %, GPU busy % (with the CUPTI bridge), GIL wait % (--gil), run-queue wait %, "
	       "blocked %, CPU %, page faults/s, device memory (a process: its threads' totals), and its top finding, "
	       "from the rules of analyze run on the interval. Same probes, overhead budget and settings as record; -p: the processes to watch (default: every process that maps libcuda).",
	.options = options,
	.parse = parse,
	.groups = CLI_TARGETS | CLI_SET_RECORD | CLI_CONFIG | CLI_QUIET,
	.run = run,
};
