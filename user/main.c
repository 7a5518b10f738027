// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inferscope-bpf command line: parses options and wires the stages
 * together. Nothing here that a test of the stages would need.
 */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "accounts.h"
#include "config.h"
#include "daemon.h"
#include "settings.h"
#include "recorder.h"
#include "rec_writer.h"
#include "analyze.h"
#include "bench.h"
#include "bench_stats.h"
#include "check.h"
#include "top.h"
#include "events.h"
#include "isr_format.h"

const char *argp_program_version = "inferscope-bpf " ISR_VERSION;


enum {
	OPT_RINGBUF = 1000,
	OPT_NO_FOLLOW,
	OPT_NO_FAULTS,
	OPT_READY_FILE,
	OPT_FORMAT,
	OPT_ZSTD_LEVEL,
	OPT_NO_CUDA,
	OPT_LIST_PROBES,
	OPT_CUDA_LIB,
	OPT_NO_NCCL,
	OPT_NCCL_LIB,
	OPT_GIL,
	OPT_NO_GIL_WAITS,
	OPT_BUDGET,
	OPT_LEGACY_UPROBES,
	OPT_NO_CUPTI,
	OPT_NO_INJECT,
	OPT_GPU,
	OPT_GPU_WINDOWS,
	OPT_GPU_PERIOD,
	OPT_CUPTI_BRIDGE,
	OPT_PY_STACKS,
	OPT_NO_PY_STACKS,
	OPT_PY_LAUNCH_EVERY,
	OPT_NO_NVTX,
	OPT_GROUP,
	OPT_RUN_AS_ROOT,
	OPT_USER,
	OPT_FLIGHT,
	OPT_FLIGHT_MEMORY,
	OPT_TRIGGER,
	OPT_CONFIG,
	OPT_JSON,
	OPT_STATE_DIR,
	OPT_TEXTFILE_DIR,
	OPT_INTERVAL,
	OPT_WINDOW,
	OPT_ONCE,
	OPT_KEEP_SEVERITY,
	OPT_KEEP_LAST,
	OPT_MAX_SIZE,
	OPT_MAX_AGE,
	OPT_MATCH,
	OPT_NO_CUDA_PROCESSES,
	OPT_DAEMON_FLIGHT,
	OPT_TRIGGER_SYNC,
	OPT_TRIGGER_GPU_IDLE,
	OPT_TRIGGER_DROPS,
};

#define MAX_CLI_SETTINGS 128

/* A setting given on the command line, applied over the file and the
 * environment once they are read (settings.h). */
struct cli_setting {
	const char *key, *value, *option;
};

/* The command line: the settings it gives, the targets of a recording, and
 * what the CLI itself does with them. */
struct cli {
	const char *cmd_name;	/* "", "record", "analyze", "diff", "daemon" or "config" */
	bool flight_option;	/* --flight-memory or --trigger given */
	const char *input;	/* analyze FILE, diff BASE, config show */
	const char **inputs;	/* analyze FILE|DIR...: every one (argv's) */
	size_t ninputs;
	const char *input2;	/* diff NEW */
	const char *output;	/* -o: the recording (record, -p/--), the report (analyze) */
	const char *config_path; /* --config */
	bool json;		/* config show --json */
	bool list_probes;
	/* What only the command line says: the targets, who runs the command,
	 * who may read the outputs (rec.output.share, --group), -v, -q. The
	 * rest comes from the settings. */
	struct record_config rec;
	struct cli_setting sets[MAX_CLI_SETTINGS];
	size_t nsets;
	struct settings *scratch; /* checks each option's value as it is parsed */
};

/* A bad value is a usage error at once (exit 64, as argp's), with the
 * option's name and the setting's reason. */
static error_t cli_set(struct cli *cli, struct argp_state *state, const char *key, const char *value,
		       const char *option)
{
	char why[1024];

	if (!cli->scratch)
		cli->scratch = settings__new();
	if (!cli->scratch) {
		argp_failure(state, 1, ENOMEM, "parsing %s", option);
		return ENOMEM;
	}
	if (settings__set(cli->scratch, key, value, SRC_OPTION, option, why, sizeof(why))) {
		argp_error(state, "%s: %s", option, why);
		return EINVAL;
	}
	if (cli->nsets == MAX_CLI_SETTINGS) {
		argp_error(state, "too many options");
		return EINVAL;
	}
	cli->sets[cli->nsets++] = (struct cli_setting){ key, value, option };
	return 0;
}

/* The configuration: defaults < file < environment < command line. NULL
 * with why in err. */
static struct settings *load_settings(void *ctx, char *err, size_t errlen)
{
	const struct cli *cli = ctx;
	struct settings *s = settings__new();
	char why[1024];
	int e;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e = settings__load_file(s, cli->config_path, err, errlen);
	e = e ?: settings__load_env(s, NULL, err, errlen);
	for (size_t i = 0; !e && i < cli->nsets; i++) {
		e = settings__set(s, cli->sets[i].key, cli->sets[i].value, SRC_OPTION, cli->sets[i].option, why,
				  sizeof(why));
		if (e)
			snprintf(err, errlen, "%s: %s", cli->sets[i].option, why);
	}
	e = e ?: settings__check(s, err, errlen);
	if (e) {
		settings__free(s);
		return NULL;
	}
	return s;
}

static bool pid_listed(const struct record_config *rec, __u32 pid)
{
	for (size_t i = 0; i < rec->targets.pid_count; i++)
		if (rec->targets.pids[i] == pid)
			return true;
	return false;
}

static int parse_pids(const char *arg, struct record_config *rec, struct argp_state *state)
{
	const char *p = arg;

	while (*p) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || v == 0 || v > INT_MAX || (*end && *end != ',')) {
			argp_error(state, "-p: '%s' is not a list of process ids (expected PID[,PID...])", arg);
			return EINVAL;
		}
		p = *end ? end + 1 : end;
		if (pid_listed(rec, (__u32)v))
			continue;	/* -p 7,7 or -p 7 -p 7: traced once */
		if (rec->targets.pid_count == CONFIG_MAX_PIDS) {
			argp_error(state, "-p: at most %d pids", CONFIG_MAX_PIDS);
			return EINVAL;
		}
		rec->targets.pids[rec->targets.pid_count++] = (__u32)v;
	}
	return 0;
}

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	struct cli *cli = state->input;
	struct record_config *rec = &cli->rec;
	char *end;

	switch (key) {
	case 'p':
		return parse_pids(arg, rec, state);
	case 'd': {
		double s;

		errno = 0;
		s = strtod(arg, &end);
		if (errno || end == arg || *end || !(s > 0) || s > 1e7)
			argp_error(state, "-d: '%s' is not a duration in seconds (e.g. 10 or 2.5)", arg);
		else if (s < 1e-3)
			argp_error(state, "-d: '%s' is shorter than a millisecond, too short to record anything "
				   "(leave -d out to record until the targets exit or Ctrl-C)", arg);
		rec->targets.duration_ns = (__u64)(s * 1e9);
		return 0;
	}
	case 'o':
		cli->output = arg;
		return 0;
	case 'v':
		rec->verbose = true;
		return 0;
	case 'q':
		rec->quiet = true;
		return 0;
	case OPT_RINGBUF:
		return cli_set(cli, state, "record.ringbuf_mib", arg, "--ringbuf-size");
	case OPT_NO_FOLLOW:
		return cli_set(cli, state, "record.follow", "false", "--no-follow");
	case OPT_NO_FAULTS:
		return cli_set(cli, state, "record.page_faults", "false", "--no-faults");
	case OPT_NO_CUDA:
		return cli_set(cli, state, "record.cuda", "false", "--no-cuda");
	case OPT_GIL:
		return cli_set(cli, state, "record.gil", "true", "--gil");
	case OPT_NO_NVTX:
		return cli_set(cli, state, "record.nvtx", "false", "--no-nvtx");
	case OPT_NO_GIL_WAITS:
		return cli_set(cli, state, "record.gil_waits", "false", "--no-gil-waits");
	case OPT_BUDGET:
		return cli_set(cli, state, "record.budget", arg, "--budget");
	case OPT_LEGACY_UPROBES:
		return cli_set(cli, state, "record.legacy_uprobes", "true", "--legacy-uprobes");
	case OPT_GPU:
		return cli_set(cli, state, "record.gpu", "true", "--gpu");
	case OPT_GPU_WINDOWS:
		return cli_set(cli, state, "record.gpu_windows", "true", "--gpu-windows");
	case OPT_GPU_PERIOD:
		return cli_set(cli, state, "record.gpu_period", arg, "--gpu-period");
	case OPT_NO_INJECT:
		return cli_set(cli, state, "record.inject", "false", "--no-inject");
	case OPT_NO_CUPTI:
		return cli_set(cli, state, "record.cupti", "false", "--no-cupti");
	case OPT_CUPTI_BRIDGE:
		return cli_set(cli, state, "record.cupti_bridge", arg, "--cupti-bridge");
	case OPT_PY_STACKS:
		if (arg && !strcmp(arg, "0"))
			argp_error(state, "--py-stacks: '0' is not a rate from 1 to 10000 (--no-py-stacks turns them off)");
		return cli_set(cli, state, "record.py_stacks_hz", arg ? arg : "99", "--py-stacks");
	case OPT_NO_PY_STACKS:
		return cli_set(cli, state, "record.py_stacks_hz", "0", "--no-py-stacks");
	case OPT_PY_LAUNCH_EVERY:
		return cli_set(cli, state, "record.py_launch_every", arg, "--py-launch-every");
	case OPT_LIST_PROBES:
		cli->list_probes = true;
		return 0;
	case OPT_CUDA_LIB:
		return cli_set(cli, state, "record.cuda_libs", arg, "--cuda-lib");
	case OPT_NO_NCCL:
		return cli_set(cli, state, "record.nccl", "false", "--no-nccl");
	case OPT_NCCL_LIB:
		return cli_set(cli, state, "record.nccl_libs", arg, "--nccl-lib");
	case OPT_READY_FILE:
		rec->output.ready_file = arg;
		return 0;
	case OPT_GROUP: {
		int e = accounts__group(arg, &rec->output.share.gid);

		if (e)
			argp_error(state, "--group: %s '%s'%s", e == -ENOENT ? "no group" : "cannot look up group", arg,
				   e == -ENOENT ? " in /etc/group (give its number)" : "");
		rec->output.share.group = true;
		return 0;
	}
	case OPT_RUN_AS_ROOT:
		if (rec->targets.run_as == RUN_AS_USER)
			argp_error(state, "--run-as-root and --user: choose one");
		rec->targets.run_as = RUN_AS_ROOT;
		return 0;
	case OPT_USER:
		if (rec->targets.run_as == RUN_AS_ROOT)
			argp_error(state, "--run-as-root and --user: choose one");
		rec->targets.run_as = RUN_AS_USER;
		rec->targets.run_as_user = arg;
		return 0;
	case OPT_FLIGHT: {
		double s;

		errno = 0;
		s = strtod(arg, &end);
		if (errno || end == arg || *end || !(s >= 0.1) || s > 3600)
			argp_error(state, "--flight-recorder: '%s' is not a window in seconds from 0.1 to 3600 (e.g. 3)",
				   arg);
		rec->flight.window_ns = (__u64)(s * 1e9);
		return 0;
	}
	case OPT_FLIGHT_MEMORY: {
		unsigned long long v;

		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v < 1 || v > 65536)
			argp_error(state, "--flight-memory: '%s' is not a size in MiB from 1 to 65536", arg);
		rec->flight.max_bytes = (size_t)v << 20;
		cli->flight_option = true;
		return 0;
	}
	case OPT_TRIGGER:
		if (flight__parse_trigger(arg, &rec->flight.trig))
			argp_error(state, "--trigger: '%s' is not one of sync=MS, gpu-idle=MS, drops=N or none", arg);
		cli->flight_option = true;
		return 0;
	case OPT_ZSTD_LEVEL:
		return cli_set(cli, state, "record.compress_level", arg, "--compress-level");
	case OPT_FORMAT:
		if (strcmp(cli->cmd_name, "diff") == 0 && strcmp(arg, "perfetto") == 0)
			argp_error(state, "--format: '%s' is not one of md, json, html", arg);
		return cli_set(cli, state, "analyze.format", arg, "--format");
	case OPT_CONFIG:
		cli->config_path = arg;
		return 0;
	case OPT_JSON:
		cli->json = true;
		return 0;
	case OPT_STATE_DIR:
		return cli_set(cli, state, "daemon.state_dir", arg, "--state-dir");
	case OPT_TEXTFILE_DIR:
		return cli_set(cli, state, "daemon.textfile_dir", arg, "--textfile-dir");
	case OPT_INTERVAL:
		return cli_set(cli, state, "daemon.interval", arg, "--interval");
	case OPT_WINDOW:
		return cli_set(cli, state, "daemon.window", arg, "--window");
	case OPT_ONCE:
		return cli_set(cli, state, "daemon.once", "true", "--once");
	case OPT_KEEP_SEVERITY:
		return cli_set(cli, state, "daemon.keep_severity", arg, "--keep-severity");
	case OPT_KEEP_LAST:
		return cli_set(cli, state, "daemon.keep_last", arg, "--keep-last");
	case OPT_MAX_SIZE:
		return cli_set(cli, state, "daemon.max_size", arg, "--max-size");
	case OPT_MAX_AGE:
		return cli_set(cli, state, "daemon.max_age", arg, "--max-age");
	case OPT_MATCH:
		return cli_set(cli, state, "daemon.match", arg, "--match");
	case OPT_NO_CUDA_PROCESSES:
		return cli_set(cli, state, "daemon.cuda_processes", "false", "--no-cuda-processes");
	case OPT_DAEMON_FLIGHT:
		return cli_set(cli, state, "daemon.flight_recorder", arg, "--flight-recorder");
	case OPT_TRIGGER_SYNC:
		return cli_set(cli, state, "daemon.trigger_sync", arg, "--trigger-sync");
	case OPT_TRIGGER_GPU_IDLE:
		return cli_set(cli, state, "daemon.trigger_gpu_idle", arg, "--trigger-gpu-idle");
	case OPT_TRIGGER_DROPS:
		return cli_set(cli, state, "daemon.trigger_drops", arg, "--trigger-drops");
	case ARGP_KEY_ARG:
		if (strcmp(cli->cmd_name, "analyze") == 0) {
			const char **v = reallocarray(cli->inputs, cli->ninputs + 1, sizeof(*v));

			if (!v) {
				argp_failure(state, 1, ENOMEM, "analyze");
				return ENOMEM;
			}
			cli->inputs = v;
			cli->inputs[cli->ninputs++] = arg;
			cli->input = cli->inputs[0];
			return 0;
		}
		if ((strcmp(cli->cmd_name, "diff") == 0 ||
		     strcmp(cli->cmd_name, "config") == 0) && !cli->input) {
			cli->input = arg;
			return 0;
		}
		if (strcmp(cli->cmd_name, "diff") == 0 && !cli->input2) {
			cli->input2 = arg;
			return 0;
		}
		argp_error(state, "unexpected argument '%s' (put the command to launch after --)", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

#define GROUP_OPTION                                                                                \
	{ "group", OPT_GROUP, "GROUP", 0,                                                              \
	  "Let GROUP read what is written (mode 0640; default: the owner only, 0600)", 0 }

/* Options that set a recording's settings (settings.h): also in the
 * configuration file and the environment. */
#define RECORD_SETTING_OPTIONS                                                                      \
	{ "ringbuf-size", OPT_RINGBUF, "MIB", 0, "Event ring-buffer size, a power of two up to 2048 (default 32)", 0 }, \
	{ "no-follow", OPT_NO_FOLLOW, NULL, 0, "Trace only the named processes: not their running descendants, nor the processes the targets start", 0 },   \
	{ "no-faults", OPT_NO_FAULTS, NULL, 0, "Do not trace page faults and direct reclaim", 0 },       \
	{ "no-cuda", OPT_NO_CUDA, NULL, 0, "Do not probe the CUDA driver API (libcuda)", 0 },           \
	{ "no-nvtx", OPT_NO_NVTX, NULL, 0, "Do not probe NVTX ranges and marks (libnvToolsExt)", 0 },    \
	{ "gil", OPT_GIL, NULL, 0, "Also measure Python GIL waits and holds exactly (3 probe hits per GIL release: PyTorch releases it on every op)", 0 }, \
	{ "no-gil-waits", OPT_NO_GIL_WAITS, NULL, 0, "Do not record the Python GIL waits the scheduler sees (on by default: no probe hit, the holder named)", 0 }, \
	{ "budget", OPT_BUDGET, "PCT|off", 0, "Overhead budget: above PCT% of a thread's time (default 1), sample the hot-path CUDA probes and extrapolate", 0 }, \
	{ "legacy-uprobes", OPT_LEGACY_UPROBES, NULL, 0, "One perf-event uprobe per function, as on kernels without uprobe_multi (no budget then)", 0 }, \
	{ "py-stacks", OPT_PY_STACKS, "HZ", OPTION_ARG_OPTIONAL,                                        \
	  "Sample the Python stacks of target threads on CPU HZ times a second (default: on, 99)", 0 },  \
	{ "no-py-stacks", OPT_NO_PY_STACKS, NULL, 0,                                                   \
	  "No Python stacks: neither sampled nor at CUDA calls", 0 },                                    \
	{ "py-launch-every", OPT_PY_LAUNCH_EVERY, "N", 0,                                              \
	  "Python call site of every Nth CUDA launch per CPU (default 64; 0: no Python stacks at CUDA calls)", 0 }, \
	{ "cuda-lib", OPT_CUDA_LIB, "PATH", 0, "Also probe this libcuda file in every target (repeatable)", 0 }, \
	{ "no-nccl", OPT_NO_NCCL, NULL, 0, "Do not probe NCCL (libnccl.so*)", 0 },                       \
	{ "nccl-lib", OPT_NCCL_LIB, "PATH", 0, "Also probe this libnccl file in every target (repeatable)", 0 }, \
	{ "gpu", OPT_GPU, NULL, 0, "Record all GPU activity (CUPTI): hand the bridge to the command, load it into -p processes (about 3 us per PyTorch launch, outside the budget)", 0 }, \
	{ "gpu-windows", OPT_GPU_WINDOWS, NULL, 0, "Record GPU activity in windows within the budget (CUPTI detached between them), busy time extrapolated; opt-in (docs/overhead.md)", 0 }, \
	{ "gpu-period", OPT_GPU_PERIOD, "SECONDS", 0, "With --gpu-windows: a window every SECONDS (default 5)", 0 }, \
	{ "no-cupti", OPT_NO_CUPTI, NULL, 0, "Do not record GPU activity through the CUPTI bridge", 0 },    \
	{ "no-inject", OPT_NO_INJECT, NULL, 0, "Do not load the CUPTI bridge into -p processes started without it (ptrace + dlopen)", 0 }, \
	{ "cupti-bridge", OPT_CUPTI_BRIDGE, "PATH", 0,                                                 \
	  "The CUPTI bridge a launched command loads (default: " "libinferscope_cupti.so next to inferscope-bpf)", 0 }, \
	{ "compress-level", OPT_ZSTD_LEVEL, "N", 0, "zstd level of the recording, 0 = none (default 1)", 0 }

#define CONFIG_OPTION \
	{ "config", OPT_CONFIG, "FILE", 0, "Read the configuration from FILE (default " SETTINGS_DEFAULT_FILE \
	  ", when it exists; docs/daemon.md)", 0 }

#define RECORD_OPTIONS                                                                              \
	{ "pid", 'p', "PID[,PID...]", 0, "Trace these running processes, their threads and their running descendants (--no-follow: only these)", 0 },   \
	{ "duration", 'd', "SEC", 0, "Stop after SEC seconds (default: when the targets exit or on Ctrl-C)", 0 }, \
	RECORD_SETTING_OPTIONS,                                                                      \
	{ "list-probes", OPT_LIST_PROBES, NULL, 0,                                                     \
	  "Print the CUDA and Python GIL probe sites chosen in the targets and exit (starts nothing)", 0 }, \
	{ "ready-file", OPT_READY_FILE, "FILE", 0, "Create FILE once the probes are live (for scripts)", 0 }, \
	{ "run-as-root", OPT_RUN_AS_ROOT, NULL, 0,                                                     \
	  "Run the command as root even under sudo (default: as the user who ran sudo)", 0 },            \
	{ "user", OPT_USER, "USER", 0, "Run the command as USER (a name, or UID:GID)", 0 },          \
	GROUP_OPTION,                                                                                   \
	{ "verbose", 'v', NULL, 0, "Show the attached probes and libbpf's messages", 0 },            \
	{ "quiet", 'q', NULL, 0, "No status line or banners", 0 },                                    \
	CONFIG_OPTION

#define DAEMON_OPTIONS \
	{ "state-dir", OPT_STATE_DIR, "DIR", 0, "Keep the recordings in DIR (default /var/lib/inferscope-bpf)", 0 }, \
	{ "textfile-dir", OPT_TEXTFILE_DIR, "DIR", 0, "Write inferscope.prom into DIR, node_exporter's textfile " \
	  "collector directory (default /var/lib/prometheus/node-exporter)", 0 }, \
	{ "interval", OPT_INTERVAL, "SEC", 0, "Start a window every SEC seconds (default 300; 30s, 5m, 1h)", 0 }, \
	{ "window", OPT_WINDOW, "SEC", 0, "Record SEC seconds per window (default 10)", 0 }, \
	{ "once", OPT_ONCE, NULL, 0, "One window over the discovered processes, then exit", 0 }, \
	{ "keep-severity", OPT_KEEP_SEVERITY, "SEV", 0, "Keep the recording of a window with a finding at least " \
	  "this severe: info, warning (default), critical, none", 0 }, \
	{ "keep-last", OPT_KEEP_LAST, "N", 0, "Also keep the recordings of the last N windows (default 3)", 0 }, \
	{ "max-size", OPT_MAX_SIZE, "BYTES", 0, "Total size of the kept recordings, oldest removed first " \
	  "(default 1G; K, M, G suffixes)", 0 }, \
	{ "max-age", OPT_MAX_AGE, "SEC", 0, "Remove recordings older than this (default 7d; 0: never)", 0 }, \
	{ "match", OPT_MATCH, "REGEX", 0, "Also sample processes whose command line matches this extended regex " \
	  "(repeatable)", 0 }, \
	{ "no-cuda-processes", OPT_NO_CUDA_PROCESSES, NULL, 0, "Sample only the processes --match names, not " \
	  "every process that maps libcuda", 0 }, \
	{ "flight-recorder", OPT_DAEMON_FLIGHT, "SEC", 0, "Flight-recorder mode: record every interval whole, " \
	  "keep its last SEC seconds in memory and write them when a trigger fires (at most once per SEC) and at " \
	  "the interval's end (default 0: off)", 0 }, \
	{ "trigger-sync", OPT_TRIGGER_SYNC, "SEC", 0, "With --flight-recorder: a synchronization this long " \
	  "writes a window (default 1; 0: off)", 0 }, \
	{ "trigger-gpu-idle", OPT_TRIGGER_GPU_IDLE, "SEC", 0, "With --flight-recorder: the GPU idle this long " \
	  "writes a window (GPU activity recorded; default 0: off)", 0 }, \
	{ "trigger-drops", OPT_TRIGGER_DROPS, "N", 0, "With --flight-recorder: N events dropped within a second " \
	  "write a window (default 1000; 0: off)", 0 }

static const struct argp_option main_options[] = {
	RECORD_OPTIONS,
	{ "output", 'o', "FILE", 0, "Keep the recording in FILE (default ./inferscope-DATE-TIME.isr)", 0 },
	{ "format", OPT_FORMAT, "md|json|html|perfetto", 0, "Report format (default md)", 0 },
	{ 0 },
};

static const struct argp_option record_options[] = {
	RECORD_OPTIONS,
	{ "flight-recorder", OPT_FLIGHT, "SEC", 0,
	  "Keep the last SEC seconds in memory and write them only at a trigger (SIGUSR1, a --trigger check, the "
	  "end), each to its own recording FILE.N.isr", 0 },
	{ "flight-memory", OPT_FLIGHT_MEMORY, "MIB", 0,
	  "Memory the flight recorder may hold, compressed (default 64); past it the oldest events go first", 0 },
	{ "trigger", OPT_TRIGGER, "CHECK", 0,
	  "A live check that writes a window (repeatable): sync=MS (a CUDA synchronization that long; default "
	  "1000), gpu-idle=MS (a GPU idle that long, with --gpu; default off), drops=N (N events lost within a "
	  "second; default 1000); 0 turns one off, none all", 0 },
	{ "output", 'o', "FILE", 0, "Write the recording to FILE (required)", 0 },
	{ 0 },
};

#define ANALYZE_FORMAT_OPTION \
	{ "format", OPT_FORMAT, "md|json|html|perfetto", 0, \
	  "Report format (default md): html is one self-contained page with charts, perfetto a trace for " \
	  "the Perfetto UI (docs/outputs.md)", 0 }

static const struct argp_option analyze_options[] = {
	ANALYZE_FORMAT_OPTION,
	{ "output", 'o', "FILE", 0, "Write the report to FILE (default: standard output)", 0 },
	GROUP_OPTION,
	CONFIG_OPTION,
	{ 0 },
};

static const struct argp_option diff_options[] = {
	{ "format", OPT_FORMAT, "md|json|html", 0, "Format of the comparison (default md)", 0 },
	{ "output", 'o', "FILE", 0, "Write it to FILE (default: standard output)", 0 },
	GROUP_OPTION,
	CONFIG_OPTION,
	{ 0 },
};

static const struct argp_option daemon_options[] = {
	DAEMON_OPTIONS,
	RECORD_SETTING_OPTIONS,
	CONFIG_OPTION,
	{ 0 },
};

/* config show: every option that sets a setting, to see where it lands. */
static const struct argp_option config_options[] = {
	{ "json", OPT_JSON, NULL, 0, "Print the configuration as JSON", 0 },
	DAEMON_OPTIONS,
	RECORD_SETTING_OPTIONS,
	ANALYZE_FORMAT_OPTION,
	CONFIG_OPTION,
	{ 0 },
};

struct bench_env {
	struct bench_opts o;
};

enum {
	OPT_KCI = 2000,
	OPT_QUICK,
	OPT_KTAP,
	OPT_BASELINE,
	OPT_MAX_RATIO,
	OPT_ALPHA,
	OPT_BENCH_GROUP,
};

static double parse_positive(const char *arg, const char *opt, double max, struct argp_state *state)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > max)
		argp_error(state, "%s: '%s' is not a number between 0 and %g", opt, arg, max);
	return v;
}

static error_t parse_bench(int key, char *arg, struct argp_state *state)
{
	struct bench_env *b = state->input;

	switch (key) {
	case 'r':
		b->o.rounds = (int)parse_positive(arg, "--rounds", 64, state);
		if (b->o.rounds != atof(arg))
			argp_error(state, "--rounds: '%s' is not a whole number", arg);
		return 0;
	case 's':
		b->o.seconds = parse_positive(arg, "--seconds", 600, state);
		return 0;
	case 'o':
		b->o.output = arg;
		return 0;
	case 'c':
		b->o.thresholds = arg;
		return 0;
	case 'n':
		b->o.only = arg;
		return 0;
	case 't':
		b->o.tmpdir = arg;
		return 0;
	case OPT_KCI:
		b->o.kci = true;
		return 0;
	case OPT_QUICK:
		b->o.quick = true;
		return 0;
	case OPT_KTAP:
		b->o.ktap = true;
		return 0;
	case OPT_BASELINE:
		b->o.baseline = arg;
		return 0;
	case OPT_MAX_RATIO:
		b->o.max_ratio = parse_positive(arg, "--max-ratio", 100, state);
		if (b->o.max_ratio <= 1)
			argp_error(state, "--max-ratio: '%s' must be above 1 (1.5: a cost 50%% higher)", arg);
		return 0;
	case OPT_ALPHA:
		b->o.alpha = parse_positive(arg, "--alpha", 0.5, state);
		return 0;
	case OPT_BENCH_GROUP: {
		int e = accounts__group(arg, &b->o.share.gid);

		if (e)
			argp_error(state, "--group: %s '%s'%s", e == -ENOENT ? "no group" : "cannot look up group", arg,
				   e == -ENOENT ? " in /etc/group (give its number)" : "");
		b->o.share.group = true;
		return 0;
	}
	case ARGP_KEY_END:
		if (b->o.quick && !b->o.kci)
			argp_error(state, "--quick selects the quick subset of --kci: give both");
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option bench_options[] = {
	{ "rounds", 'r', "N", 0, "Untraced/traced pairs per benchmark (default 5; --kci: 15 per mechanism, 7 per workload; --quick 7)", 0 },
	{ "seconds", 's', "SEC", 0, "Length of one measurement (default 2)", 0 },
	{ "output", 'o', "FILE", 0, "Write the results as JSON", 0 },
	{ "check", 'c', "THRESHOLDS", 0, "Exit 1 when a metric exceeds its limit in this JSON file", 0 },
	{ "only", 'n', "NAMES", 0, "Run only these benchmarks, comma-separated (sched_switch, page_fault, fault_flood, cuda_launch, cuda_sync, gil_contend, budget_10k, budget_50k, budget_150k; with --kci also its mechanisms and checks: docs/kernel-ci.md)", 0 },
	{ "tmpdir", 't', "DIR", 0, "Where recordings go while measuring (default /tmp)", 0 },
	{ "kci", OPT_KCI, NULL, 0, "The kernel-CI suite: each kernel mechanism's cost, the exact-delivery checks, then the recorder workloads sched_switch, page_fault, fault_flood, cuda_launch, cuda_sync", 0 },
	{ "quick", OPT_QUICK, NULL, 0, "With --kci: the quick subset (fewer rounds and calls, no workloads; under 2 minutes)", 0 },
	{ "ktap", OPT_KTAP, NULL, 0, "Print KTAP (as kselftest does) on standard output instead of tables", 0 },
	{ "baseline", OPT_BASELINE, "FILE", 0, "Compare every cost with this earlier run's (bench -o FILE); exit 1 on a regression", 0 },
	{ "max-ratio", OPT_MAX_RATIO, "R", 0, "With --baseline: a regression raises a median by more than R (default 1.5) ...", 0 },
	{ "alpha", OPT_ALPHA, "P", 0, "... and is significant at level P by a Mann-Whitney U test over the rounds (default 0.01)", 0 },
	{ "group", OPT_BENCH_GROUP, "GROUP", 0, "Let GROUP read the results (mode 0640; default 0600)", 0 },
	{ 0 },
};

static const struct argp bench_argp = {
	bench_options, parse_bench, NULL,
	"Measure the tracer's overhead on built-in workloads, untraced and traced, interleaved; "
	"with --check, a regression gate for CI; with --kci, what each kernel mechanism costs and whether "
	"the kernel delivers every event (docs/kernel-ci.md).",
	NULL, NULL, NULL
};

static int do_bench(int argc, char **argv)
{
	struct bench_env b = { { .rounds = 0, .seconds = 2.0, .tmpdir = "/tmp", .max_ratio = BENCH_CMP_DEFAULT_RATIO,
				 .alpha = BENCH_CMP_DEFAULT_ALPHA } };
	static char self[PATH_MAX];
	ssize_t n;
	int e;

	if (argp_parse(&bench_argp, argc, argv, 0, NULL, &b))
		return 2;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "bench: cannot find this executable: %s\n", strerror(errno));
		return 2;
	}
	self[n] = '\0';
	b.o.self_exe = self;
	e = bench__run(&b.o);
	return e < 0 ? 2 : e;
}

struct check_cli {
	__u32 pid;
	bool json;
	const char *bundle;
	const char *recording;
};

enum { OPT_CHECK_JSON = 3000, OPT_BUNDLE, OPT_RECORDING };

static error_t parse_check(int key, char *arg, struct argp_state *state)
{
	struct check_cli *c = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case 'p':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || v == 0 || v > INT_MAX)
			argp_error(state, "-p: '%s' is not a process id", arg);
		c->pid = (__u32)v;
		return 0;
	case OPT_CHECK_JSON:
		c->json = true;
		return 0;
	case OPT_BUNDLE:
		c->bundle = arg;
		return 0;
	case OPT_RECORDING:
		c->recording = arg;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option check_options[] = {
	{ "pid", 'p', "PID", 0, "Also check what can be traced in this process (its libcuda, CUPTI, Python, NVTX)", 0 },
	{ "json", OPT_CHECK_JSON, NULL, 0, "Print the result as JSON (docs/check.md)", 0 },
	{ "support-bundle", OPT_BUNDLE, "FILE", 0, "Also write FILE, a .tar.gz for bug reports: this output, versions, "
	  "the kernel configuration lines that matter, the last recording's metadata", 0 },
	{ "recording", OPT_RECORDING, "ISR", 0, "The recording whose metadata goes into the bundle (default: the newest "
	  "*.isr in the current directory)", 0 },
	{ 0 },
};

static const struct argp check_argp = {
	check_options, parse_check, NULL,
	"Say what will work on this host (and in process PID) before anything is attached, and what will not, "
	"with the reason and the fix. Exit status 0 when recording will work, 1 when it will not.",
	NULL, NULL, NULL
};

/* The newest *.isr of the current directory, into buf; NULL if none. */
static const char *newest_recording(char *buf, size_t len)
{
	DIR *d = opendir(".");
	struct dirent *de;
	time_t best = 0;
	const char *found = NULL;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat st;

		if (n < 5 || strcmp(de->d_name + n - 4, ".isr") || stat(de->d_name, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!found || st.st_mtime > best) {
			best = st.st_mtime;
			snprintf(buf, len, "%s", de->d_name);
			found = buf;
		}
	}
	closedir(d);
	return found;
}

static int do_check(int argc, char **argv)
{
	struct check_cli c = { 0 };
	struct check_result res;
	char newest[PATH_MAX];
	int e;

	if (argp_parse(&check_argp, argc, argv, 0, NULL, &c))
		return 2;
	e = check__run(c.pid, &res);
	if (e) {
		fprintf(stderr, "inferscope-bpf check: %s\n", strerror(-e));
		return 2;
	}
	e = c.json ? check__write_json(&res, stdout) : check__write_text(&res, stdout);
	if (!e && c.bundle) {
		const char *rec = c.recording ? c.recording : newest_recording(newest, sizeof(newest));

		e = check__support_bundle(&res, c.bundle, rec);
		if (!e)
			fprintf(stderr, "inferscope-bpf check: support bundle written to %s%s%s\n", c.bundle,
				rec ? ", with the metadata of " : " (no recording found)", rec ? rec : "");
	}
	e = e ? 2 : res.ready ? 0 : 1;
	check__free(&res);
	return e;
}

#define EXPORT_MAX_FILES 256

struct export_cli {
	const char *files[EXPORT_MAX_FILES];
	size_t n;
	const char *sqlite;
};

enum { OPT_SQLITE = 4000 };

static error_t parse_export(int key, char *arg, struct argp_state *state)
{
	struct export_cli *x = state->input;

	switch (key) {
	case OPT_SQLITE:
		x->sqlite = arg;
		return 0;
	case ARGP_KEY_ARG:
		if (x->n == EXPORT_MAX_FILES)
			argp_error(state, "at most %d recordings at a time", EXPORT_MAX_FILES);
		x->files[x->n++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!x->n)
			argp_error(state, "give the recordings to export");
		if (!x->sqlite)
			argp_error(state, "give the database: --sqlite OUT.db");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option export_options[] = {
	{ "sqlite", OPT_SQLITE, "OUT.db", 0, "Write the recordings into this SQLite database (created, or added to)", 0 },
	{ 0 },
};

static const struct argp export_argp = {
	export_options, parse_export, "FILE.isr...",
	"Export recordings as SQL tables: processes, threads, CUDA calls, kernels, copies, thread states, GPU idle gaps "
	"by cause, faults, GIL waits, Python stacks and samples, NVTX, findings, steps (docs/sql.md). Several "
	"recordings go into one database, each with its own id in the column `recording`.",
	NULL, NULL, NULL
};

static int do_export(int argc, char **argv)
{
	struct export_cli x = { 0 };

	if (argp_parse(&export_argp, argc, argv, 0, NULL, &x))
		return 2;
	return analyze__export_sqlite(x.files, x.n, x.sqlite) ? 1 : 0;
}

struct top_cli {
	struct record_config rec;
	struct top_opts o;
};

enum { OPT_TOP_ONCE = 5000, OPT_TOP_INTERVAL };

static error_t parse_top(int key, char *arg, struct argp_state *state)
{
	struct top_cli *t = state->input;
	char *end;

	switch (key) {
	case 'p':
		return parse_pids(arg, &t->rec, state);
	case 'd':
		errno = 0;
		t->rec.targets.duration_ns = (__u64)(strtod(arg, &end) * 1e9);
		if (errno || end == arg || *end || !t->rec.targets.duration_ns)
			argp_error(state, "-d: '%s' is not a duration in seconds", arg);
		return 0;
	case 'o':
		t->o.keep = arg;
		return 0;
	case OPT_TOP_ONCE:
		t->o.once = true;
		return 0;
	case OPT_TOP_INTERVAL:
		errno = 0;
		t->o.interval_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(t->o.interval_s >= 0.1) || t->o.interval_s > 3600)
			argp_error(state, "--interval: '%s' is not a number of seconds from 0.1 to 3600", arg);
		return 0;
	case OPT_GIL:
		t->rec.python.gil = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option top_options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Watch these processes (default: every process that maps libcuda)", 0 },
	{ "duration", 'd', "SEC", 0, "Stop after SEC seconds", 0 },
	{ "interval", OPT_TOP_INTERVAL, "SEC", 0, "Refresh every SEC seconds (default 1)", 0 },
	{ "once", OPT_TOP_ONCE, NULL, 0, "Print one interval as text and exit (text is also what a non-terminal gets, "
	  "every interval)", 0 },
	{ "gil", OPT_GIL, NULL, 0, "Also measure GIL waits (as record --gil: three probe hits per GIL release)", 0 },
	{ "output", 'o', "FILE", 0, "Keep the recording top makes in FILE (default: a temporary file, removed)", 0 },
	{ 0 },
};

static const struct argp top_argp = {
	top_options, parse_top, NULL,
	"A live view of CUDA processes, refreshed every second: per process and launching thread, launches/s, "
	"CUDA synchronization %, GPU busy % (with the CUPTI bridge), GIL wait % (--gil), run-queue wait %, CPU %, "
	"page faults/s, device memory, and the current top finding. Same probes and overhead budget as record.",
	NULL, NULL, NULL
};

static int do_top(int argc, char **argv)
{
	static struct top_cli t;

	record_config__defaults(&t.rec);
	t.o.interval_s = 1.0;
	if (argp_parse(&top_argp, argc, argv, 0, NULL, &t))
		return 2;
	t.rec.output.argc = argc;
	t.rec.output.argv = argv;
	return top__run(&t.rec, &t.o);
}

static const char main_doc[] =
	"Trace a running GPU/ML job and explain where its time goes.\n\n"
	"  inferscope-bpf -p PID [-d SEC]        attach, record, then print the report\n"
	"  inferscope-bpf [-d SEC] -- CMD ARGS   launch CMD, record, then print the report\n"
	"  inferscope-bpf record -o FILE ...     record only (analyze later, anywhere)\n"
	"  inferscope-bpf analyze FILE|DIR...    report on recordings, their NCCL ranks lined up (--format md, json,\n"
	"                                        html, perfetto)\n"
	"  inferscope-bpf diff BASE NEW          what got slower from one recording to another, and why\n"
	"  inferscope-bpf export FILE... --sqlite OUT.db   recordings as SQL tables (docs/sql.md)\n"
	"  inferscope-bpf check [-p PID]         what will work here, and what will not (before recording)\n"
	"  inferscope-bpf top [-p PID...]        a live view of CUDA processes, refreshed every second\n"
	"  inferscope-bpf daemon [--once]        fleet sampling: windows, Prometheus metrics, recordings kept\n"
	"  inferscope-bpf config show [--json]   the effective configuration and where each value comes from\n"
	"  inferscope-bpf bench [--check FILE]   overhead benchmarks (a regression gate for CI)\n"
	"  inferscope-bpf bench --kci --ktap     kernel CI: mechanism costs, delivery checks, KTAP\n\n"
	"Needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF.\v"
	"See `inferscope-bpf record --help` and `inferscope-bpf analyze --help`.";

static const struct argp main_argp = { main_options, parse_common, "-p PID | -- CMD [ARG...]", main_doc,
				       NULL, NULL, NULL };
static const struct argp record_argp = {
	record_options, parse_common, "-o FILE (-p PID[,PID...] | -- CMD [ARG...])",
	"Record the target processes into FILE until the duration ends, Ctrl-C, or every target exits.",
	NULL, NULL, NULL
};
static const struct argp analyze_argp = {
	analyze_options, parse_common, "FILE|DIR...",
	"Analyze a recording and print the report. Several recordings (the files, or a directory's *.isr files) "
	"make one report: the NCCL ranks of every recording lined up on CLOCK_REALTIME, the straggler and its "
	"reason, then each recording's own report.", NULL, NULL, NULL
};
static const struct argp diff_argp = { diff_options, parse_common, "BASE.isr NEW.isr",
				       "Compare two recordings: the findings that appeared or vanished (most added "
				       "cost first), the metrics that changed, the kernels whose GPU time changed most.",
				       NULL, NULL, NULL };
static const struct argp daemon_argp = {
	daemon_options, parse_common, NULL,
	"Sample every process that maps libcuda (and those --match names): a recording window every interval, "
	"analyzed, its metrics written for node_exporter's textfile collector, the recording kept by policy "
	"(docs/daemon.md). SIGTERM ends the current window cleanly; SIGHUP reloads the configuration.",
	NULL, NULL, NULL
};
static const struct argp config_argp = {
	config_options, parse_common, "show",
	"Print the effective configuration: each setting's value and its source (default, the file and line, "
	"the environment variable, the option). Options given here are applied as they would be elsewhere.",
	NULL, NULL, NULL
};

/* The recording's configuration: the settings, then what only the command
 * line says (the targets, who runs the command, who may read the outputs). */
static void record_config_from(struct record_config *o, struct settings *s, const struct cli *cli)
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
	o->verbose = cli->rec.verbose;
	o->quiet = cli->rec.quiet;
	/* options the settings do not hold (yet): set on the command line only */
	o->flight = cli->rec.flight;
	o->live = cli->rec.live;
}

static void ignore_signal(int sig)
{
	(void)sig;
}

static int do_record(struct cli *cli, struct settings *s, int argc, char **argv, bool then_analyze)
{
	struct sigaction sa = { .sa_handler = ignore_signal, .sa_flags = SA_RESTART };
	static struct record_config rc;
	struct record_config *o = &rc;
	struct record_result res;
	static char default_out[64];
	int e;

	record_config_from(o, s, cli);
	o->output.path = cli->output;
	o->output.argc = argc;
	o->output.argv = argv;
	if (cli->list_probes) {
		if (!o->cuda.enabled && !o->python.gil) {
			fprintf(stderr, "inferscope-bpf: --list-probes lists CUDA and Python probes: drop --no-cuda or "
					"add --gil\n");
			return 2;
		}
		if (!o->targets.pid_count && !o->targets.command && !o->cuda.lib_count) {
			fprintf(stderr, "inferscope-bpf: --list-probes: give -p PID, --cuda-lib PATH or a command "
					"after --\n");
			return 2;
		}
		return record__list_probes(o) ? 1 : 0;
	}
	if (o->targets.run_as != RUN_AS_INVOKER && !o->targets.command) {
		fprintf(stderr, "inferscope-bpf: --%s says who runs the command after --: there is none\n",
			o->targets.run_as == RUN_AS_USER ? "user" : "run-as-root");
		return 2;
	}
	if (!o->targets.pid_count && !o->targets.command) {
		fprintf(stderr, "inferscope-bpf: nothing to trace: give -p PID or a command after --\n"
				"Try 'inferscope-bpf --help'.\n");
		return 2;
	}
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
		fprintf(stderr, "inferscope-bpf: the command was killed by signal %d (%s)\n",
			WTERMSIG(res.command_status), strsignal(WTERMSIG(res.command_status)));
	if (e && res.stop_reason != ISR_STOP_WRITE_ERROR)
		return 1;
	if (then_analyze) {
		if (!o->quiet)
			fprintf(stderr, "inferscope-bpf: analyze it again with: inferscope-bpf analyze %s\n\n",
				o->output.path);
		if (analyze__run(o->output.path, (enum report_format)settings__report_format(s), NULL, NULL))
			return 1;
	}
	return e ? 1 : 0;
}

static int do_config(const struct cli *cli, const struct settings *s)
{
	if (!cli->input || strcmp(cli->input, "show")) {
		fprintf(stderr, "inferscope-bpf config: the only subcommand is show: inferscope-bpf config show [--json]\n");
		return 2;
	}
	if (settings__show(s, stdout, cli->json)) {
		fprintf(stderr, "inferscope-bpf config show: writing failed: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct cli cli;
	static const struct {
		const char *name;
		const struct argp *argp;
	} subs[] = { { "record", &record_argp }, { "analyze", &analyze_argp }, { "diff", &diff_argp },
		     { "daemon", &daemon_argp }, { "config", &config_argp } };
	const struct argp *argp = &main_argp;
	struct daemon_loader loader = { load_settings, &cli };
	struct settings *s;
	int sub = 0, nargs = argc, i, rc;
	enum report_format fmt;
	char err[4600];

	cli.cmd_name = "";
	record_config__defaults(&cli.rec);
	/* Everything after "--" is the command to launch, untouched by argp. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			nargs = i;
			if (i + 1 < argc)
				cli.rec.targets.command = &argv[i + 1];
			else {
				fprintf(stderr, "inferscope-bpf: no command after --\n");
				return 2;
			}
			break;
		}
	}
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return do_bench(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "check") == 0)
		return do_check(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return do_export(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "top") == 0)
		return do_top(argc - 1, argv + 1);
	for (size_t k = 0; nargs > 1 && k < sizeof(subs) / sizeof(subs[0]); k++)
		if (strcmp(argv[1], subs[k].name) == 0) {
			argp = subs[k].argp;
			cli.cmd_name = subs[k].name;
			sub = 1;
		}
	/* argp names the program after argv[0]; for a subcommand, after
	 * "inferscope-bpf record". */
	if (argp_parse(argp, nargs - sub, argv + sub, 0, NULL, &cli))
		return 2;
	settings__free(cli.scratch);
	cli.scratch = NULL;
	if (cli.rec.targets.command && strcmp(cli.cmd_name, "") && strcmp(cli.cmd_name, "record")) {
		fprintf(stderr, "inferscope-bpf %s: takes no command\n", cli.cmd_name);
		return 2;
	}
	if (strcmp(cli.cmd_name, "daemon") == 0)
		return daemon__run(&loader, argc, argv);
	s = load_settings(&cli, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		return 2;
	}
	fmt = (enum report_format)settings__report_format(s);
	if (strcmp(cli.cmd_name, "config") == 0) {
		rc = do_config(&cli, s);
	} else if (strcmp(cli.cmd_name, "analyze") == 0) {
		if (!cli.input) {
			fprintf(stderr, "inferscope-bpf analyze: give the recording to analyze (FILE, several, or a "
					"directory of them)\n");
			rc = 2;
		} else if (fmt == REPORT_PERFETTO && !cli.output && isatty(STDOUT_FILENO)) {
			fprintf(stderr, "inferscope-bpf analyze: a Perfetto trace is binary: give the file with -o FILE\n");
			rc = 2;
		} else {
			rc = analyze__run_many(cli.inputs, cli.ninputs, fmt, cli.output, &cli.rec.output.share) ? 1 : 0;
		}
	} else if (strcmp(cli.cmd_name, "diff") == 0) {
		if (!cli.input2) {
			fprintf(stderr, "inferscope-bpf diff: give the two recordings to compare: BASE.isr NEW.isr\n");
			rc = 2;
		} else if (fmt == REPORT_PERFETTO) {
			fprintf(stderr, "inferscope-bpf diff: analyze.format is perfetto, which diff does not write: give "
					"--format md, json or html\n");
			rc = 2;
		} else {
			rc = analyze__diff(cli.input, cli.input2, fmt, cli.output, &cli.rec.output.share) ? 1 : 0;
		}
	} else if (strcmp(cli.cmd_name, "record") == 0) {
		if (cli.flight_option && !cli.rec.flight.window_ns) {
			fprintf(stderr, "inferscope-bpf record: --flight-memory and --trigger need --flight-recorder SEC\n");
			rc = 2;
		} else if (!cli.output && !cli.list_probes) {
			fprintf(stderr, "inferscope-bpf record: give the output file with -o FILE\n");
			rc = 2;
		} else {
			rc = do_record(&cli, s, argc, argv, false);
		}
	} else if (fmt == REPORT_PERFETTO && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "inferscope-bpf: a Perfetto trace is binary: redirect standard output to a file, or "
				"record and then run 'inferscope-bpf analyze FILE --format perfetto -o trace.pftrace'\n");
		rc = 2;
	} else {
		rc = do_record(&cli, s, argc, argv, true);
	}
	settings__free(s);
	free(cli.inputs);
	return rc;
}
