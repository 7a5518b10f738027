// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf bench`: the tracer's overhead on built-in workloads, a
 * regression gate for CI, and the kernel-CI suite (bench.h,
 * docs/kernel-ci.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "bench_stats.h"
#include "cli.h"
#include "commands.h"

enum { OPT_KCI = CLI_OWN_KEYS, OPT_QUICK, OPT_KTAP, OPT_BASELINE, OPT_MAX_RATIO, OPT_ALPHA };

static struct bench_opts opts = { .rounds = 0, .seconds = 2.0, .tmpdir = "/tmp", .max_ratio = BENCH_CMP_DEFAULT_RATIO,
				  .alpha = BENCH_CMP_DEFAULT_ALPHA };

static const struct argp_option options[] = {
	{ "rounds", 'r', "N", 0, "Untraced/traced pairs per benchmark (default 5; --kci: 15 per mechanism, 7 per "
	  "workload; --quick 7)", 0 },
	{ "seconds", 's', "SEC", 0, "Length of one measurement (default 2)", 0 },
	{ "output", 'o', "FILE", 0, "Write the results as JSON", 0 },
	{ "check", 'c', "THRESHOLDS", 0, "Exit 1 when a metric exceeds its limit in this JSON file", 0 },
	{ "only", 'n', "NAMES", 0, "Run only these benchmarks, comma-separated (sched_switch, page_fault, fault_flood, "
	  "cuda_launch, cuda_sync, gil_contend, budget_10k, budget_50k, budget_150k, launch_bound, attach_time, "
	  "flight_ring; with --kci also its mechanisms "
	  "and checks: docs/kernel-ci.md)", 0 },
	{ "tmpdir", 't', "DIR", 0, "Where recordings go while measuring (default /tmp)", 0 },
	{ "kci", OPT_KCI, NULL, 0, "The kernel-CI suite: each kernel mechanism's cost, the exact-delivery checks, then "
	  "the recorder workloads sched_switch, page_fault, fault_flood, cuda_launch, cuda_sync", 0 },
	{ "quick", OPT_QUICK, NULL, 0, "With --kci: the quick subset (fewer rounds and calls, no workloads; under 2 "
	  "minutes)", 0 },
	{ "ktap", OPT_KTAP, NULL, 0, "Print KTAP (as kselftest does) on standard output instead of tables", 0 },
	{ "baseline", OPT_BASELINE, "FILE", 0, "Compare every cost with this earlier run's (bench -o FILE); exit 1 on a "
	  "regression", 0 },
	{ "max-ratio", OPT_MAX_RATIO, "R", 0, "With --baseline: a regression raises a median by more than R (default "
	  "1.5) ...", 0 },
	{ "alpha", OPT_ALPHA, "P", 0, "... and is significant at level P by a Mann-Whitney U test over the rounds "
	  "(default 0.01)", 0 },
	{ 0 },
};

/* A number in (0, max], or a usage error naming opt. */
static error_t positive(const char *arg, const char *opt, double max, double *v, struct argp_state *state)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || !(*v > 0) || *v > max) {
		argp_error(state, "%s: '%s' is not a number between 0 and %g", opt, arg, max);
		return EINVAL;
	}
	return 0;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	double v;

	switch (key) {
	case 'r':
		if (positive(arg, "--rounds", 64, &v, state))
			return EINVAL;
		if (v != (int)v) {
			argp_error(state, "--rounds: '%s' is not a whole number", arg);
			return EINVAL;
		}
		opts.rounds = (int)v;
		return 0;
	case 's':
		return positive(arg, "--seconds", 600, &opts.seconds, state);
	case 'o':
		opts.output = arg;
		return 0;
	case 'c':
		opts.thresholds = arg;
		return 0;
	case 'n':
		opts.only = arg;
		return 0;
	case 't':
		opts.tmpdir = arg;
		return 0;
	case OPT_KCI:
		opts.kci = true;
		return 0;
	case OPT_QUICK:
		opts.quick = true;
		return 0;
	case OPT_KTAP:
		opts.ktap = true;
		return 0;
	case OPT_BASELINE:
		opts.baseline = arg;
		return 0;
	case OPT_MAX_RATIO:
		if (positive(arg, "--max-ratio", 100, &opts.max_ratio, state))
			return EINVAL;
		if (opts.max_ratio <= 1) {
			argp_error(state, "--max-ratio: '%s' must be above 1 (1.5: a cost 50%% higher)", arg);
			return EINVAL;
		}
		return 0;
	case OPT_ALPHA:
		return positive(arg, "--alpha", 0.5, &opts.alpha, state);
	case ARGP_KEY_END:
		if (opts.quick && !opts.kci) {
			argp_error(state, "--quick selects the quick subset of --kci: give both");
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int run(struct cli *cli)
{
	static char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int e;

	if (n <= 0) {
		fprintf(stderr, "%s: cannot find this executable: %s\n", cli->name, strerror(errno));
		return 2;
	}
	self[n] = '\0';
	opts.self_exe = self;
	opts.share = cli->rec.output.share;
	/* 1 is the gate's verdict (a regression): a failure to measure is 2 */
	e = bench__run(&opts);
	return e < 0 ? 2 : e;
}

const struct cmd cmd_bench = {
	.name = "bench",
	.args_doc = "[--check FILE]\n--kci [--quick] [--ktap]",
	.summary = "overhead benchmarks, a gate for CI; --kci: the kernel-CI suite (KTAP)",
	.doc = "Measure the tracer's overhead on built-in workloads, untraced and traced, interleaved; with --check, a "
	       "regression gate for CI; with --kci, what each kernel mechanism costs and whether the kernel delivers "
	       "every event (docs/kernel-ci.md).",
	.options = options,
	.parse = parse,
	.groups = CLI_SHARE,
	.run = run,
};
