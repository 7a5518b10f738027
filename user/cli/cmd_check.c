// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf check [-p PID]`: what will work on this host, and in a
 * process, before anything is attached (check.h, docs/check.md).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "check.h"
#include "cli.h"
#include "commands.h"

enum { OPT_JSON = CLI_OWN_KEYS, OPT_BUNDLE, OPT_RECORDING };

static struct {
	__u32 pid;
	bool json;
	const char *bundle;
	const char *recording;
} opts;

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Also check what can be traced in this process (its libcuda, CUPTI, Python, NVTX)", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print the result as JSON (docs/check.md)", 0 },
	{ "support-bundle", OPT_BUNDLE, "FILE", 0, "Also write FILE, a .tar.gz for bug reports: this output, versions, "
	  "the kernel configuration lines that matter, the last recording's metadata", 0 },
	{ "recording", OPT_RECORDING, "ISR", 0, "The recording whose metadata goes into the bundle (default: the newest "
	  "*.isr in the current directory)", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	unsigned long v;
	char *end;

	switch (key) {
	case 'p':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || v == 0 || v > INT_MAX) {
			argp_error(state, "-p: '%s' is not a process id", arg);
			return EINVAL;
		}
		opts.pid = (__u32)v;
		return 0;
	case OPT_JSON:
		opts.json = true;
		return 0;
	case OPT_BUNDLE:
		opts.bundle = arg;
		return 0;
	case OPT_RECORDING:
		opts.recording = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

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

static int run(struct cli *cli)
{
	struct check_result res;
	char newest[PATH_MAX];
	int e;

	e = check__run(opts.pid, &res);
	if (e) {
		fprintf(stderr, "%s: %s\n", cli->name, strerror(-e));
		return 2;
	}
	e = opts.json ? check__write_json(&res, stdout) : check__write_text(&res, stdout);
	if (!e && opts.bundle) {
		const char *rec = opts.recording ? opts.recording : newest_recording(newest, sizeof(newest));

		e = check__support_bundle(&res, opts.bundle, rec);
		if (!e)
			fprintf(stderr, "%s: support bundle written to %s%s%s\n", cli->name, opts.bundle,
				rec ? ", with the metadata of " : " (no recording found)", rec ? rec : "");
	}
	/* 1 is the verdict (recording will not work): a failure to check is 2 */
	e = e ? 2 : res.ready ? 0 : 1;
	check__free(&res);
	return e;
}

const struct cmd cmd_check = {
	.name = "check",
	.args_doc = "[-p PID]",
	.summary = "what will work here, and what will not (before recording)",
	.doc = "Say what will work on this host (and in process PID) before anything is attached, and what will not, "
	       "with the reason and the fix. Exit status 0 when recording will work, 1 when it will not, 2 when the "
	       "checks could not be made.",
	.options = options,
	.parse = parse,
	.run = run,
};
