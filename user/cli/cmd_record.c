// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf record`: records the targets into a file, to analyze
 * later, anywhere; with --flight-recorder, keeps the last seconds in
 * memory and writes them when a trigger fires. The default command
 * (cmd_run.c) records the same way, then reports.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include "cli.h"
#include "commands.h"
#include "isr_format.h"
#include "recorder.h"
#include "rec_writer.h"

enum { OPT_FLIGHT = CLI_OWN_KEYS, OPT_FLIGHT_MEMORY, OPT_TRIGGER };

static bool flight_option;	/* --flight-memory or --trigger given */

static const struct argp_option options[] = {
	{ "flight-recorder", OPT_FLIGHT, "SEC", 0,
	  "Keep the last SEC seconds in memory and write them only at a trigger (SIGUSR1, a --trigger check, the "
	  "end), each to its own recording FILE.N.isr", 0 },
	{ "flight-memory", OPT_FLIGHT_MEMORY, "MIB", 0,
	  "Memory the flight recorder may hold, compressed (default 64); past it the oldest events go first", 0 },
	{ "trigger", OPT_TRIGGER, "CHECK", 0,
	  "A live check that writes a window (repeatable): sync=MS (a CUDA synchronization that long; default "
	  "1000), gpu-idle=MS (a GPU idle that long, with --gpu; default off), drops=N (N events lost within a "
	  "second; default 1000); 0 turns one off, none all", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	struct record_config *rec = &cli->rec;
	unsigned long long v;
	char *end;
	double s;

	switch (key) {
	case OPT_FLIGHT:
		errno = 0;
		s = strtod(arg, &end);
		if (errno || end == arg || *end || !(s >= 0.1) || s > 3600) {
			argp_error(state, "--flight-recorder: '%s' is not a window in seconds from 0.1 to 3600 (e.g. 3)",
				   arg);
			return EINVAL;
		}
		rec->flight.window_ns = (__u64)(s * 1e9);
		return 0;
	case OPT_FLIGHT_MEMORY:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v < 1 || v > 65536) {
			argp_error(state, "--flight-memory: '%s' is not a size in MiB from 1 to 65536", arg);
			return EINVAL;
		}
		rec->flight.max_bytes = (size_t)v << 20;
		flight_option = true;
		return 0;
	case OPT_TRIGGER:
		if (flight__parse_trigger(arg, &rec->flight.trig)) {
			argp_error(state, "--trigger: '%s' is not one of sync=MS, gpu-idle=MS, drops=N or none", arg);
			return EINVAL;
		}
		flight_option = true;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

void cmd_record__config(struct record_config *o, struct settings *s, const struct cli *cli)
{
	*o = *settings__record(s);
	memcpy(o->targets.pids, cli->rec.targets.pids, sizeof(o->targets.pids));
	o->targets.pid_count = cli->rec.targets.pid_count;
	o->targets.command = cli->rec.targets.command;
	o->targets.duration_ns = cli->rec.targets.duration_ns;
	o->targets.run_as = cli->rec.targets.run_as;
	o->targets.run_as_user = cli->rec.targets.run_as_user;
	o->output.ready_file = cli->rec.output.ready_file;
	o->output.share = cli->rec.output.share;
	o->output.argc = cli->argc;
	o->output.argv = cli->argv;
	o->verbose = cli->rec.verbose;
	o->quiet = cli->rec.quiet;
	/* options the settings do not hold (yet): set on the command line only */
	o->flight = cli->rec.flight;
	o->live = cli->rec.live;
}

static int list_probes(struct cli *cli, const struct record_config *o)
{
	if (!o->cuda.enabled && !o->python.gil)
		return cli__usage(cli, "--list-probes lists CUDA and Python probes: drop --no-cuda or add --gil");
	if (!o->targets.pid_count && !o->targets.command && !o->cuda.lib_count)
		return cli__usage(cli, "--list-probes: give -p PID, --cuda-lib PATH or a command after --");
	return record__list_probes(o) ? 1 : 0;
}

static void ignore_signal(int sig)
{
	(void)sig;
}

int cmd_record__record(struct cli *cli, struct settings *s, const char **path)
{
	struct sigaction sa = { .sa_handler = ignore_signal, .sa_flags = SA_RESTART };
	static struct record_config rc;
	static char default_out[64];
	struct record_config *o = &rc;
	struct record_result res;
	int e;

	*path = NULL;
	cmd_record__config(o, s, cli);
	o->output.path = cli->output;
	if (cli->list_probes)
		return list_probes(cli, o);
	if (o->targets.run_as != RUN_AS_INVOKER && !o->targets.command)
		return cli__usage(cli, "--%s says who runs the command after --: there is none",
				  o->targets.run_as == RUN_AS_USER ? "user" : "run-as-root");
	if (!o->targets.pid_count && !o->targets.command)
		return cli__usage(cli, "nothing to trace: give -p PID or a command after --");
	if (!o->output.path) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(default_out, sizeof(default_out), "inferscope-%Y%m%d-%H%M%S.isr", &tm);
		o->output.path = default_out;
	}
	/* SIGUSR1 asks a flight recorder for a window (the recorder's handler
	 * then); a plain recording ignores it rather than die of it. A handler,
	 * not SIG_IGN: the launched command gets the default back at exec. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	rec_writer__size_limit_is_an_error();
	e = record__run(o, &res);
	/* A command that died of a signal it was not sent by us: say so (the
	 * recording holds what it did until then). */
	if (res.command_exited && !res.command_stopped && WIFSIGNALED(res.command_status))
		fprintf(stderr, "%s: the command was killed by signal %d (%s)\n", cli->name,
			WTERMSIG(res.command_status), strsignal(WTERMSIG(res.command_status)));
	/* a recording cut short by a write error still holds what was written */
	if (!e || res.stop_reason == ISR_STOP_WRITE_ERROR)
		*path = o->output.path;
	return e ? 1 : 0;
}

static int run(struct cli *cli)
{
	struct settings *s;
	const char *path;
	int rc;

	if (flight_option && !cli->rec.flight.window_ns)
		return cli__usage(cli, "--flight-memory and --trigger need --flight-recorder SEC");
	if (!cli->output && !cli->list_probes)
		return cli__usage(cli, "give the output file with -o FILE");
	s = cli__settings(cli);
	if (!s)
		return EXIT_USAGE;
	rc = cmd_record__record(cli, s, &path);
	settings__free(s);
	return rc;
}

const struct cmd cmd_record = {
	.name = "record",
	.args_doc = "-o FILE (-p PID[,PID...] | -- CMD [ARG...])",
	.summary = "record only (analyze later, anywhere)",
	.doc = "Record the target processes into FILE until the duration ends, Ctrl-C, or every target exits.",
	.options = options,
	.parse = parse,
	.groups = CLI_TARGETS | CLI_RECORDING | CLI_SET_RECORD | CLI_SHARE | CLI_CONFIG | CLI_VERBOSE | CLI_QUIET,
	.takes_command = true,
	.run = run,
};
