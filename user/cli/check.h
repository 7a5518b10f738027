/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `inferscope-bpf check`: before anything is attached, what will work on
 * this host (and in a given process) and what will not, each with its
 * reason and its fix. Nothing is attached and nothing is read from a
 * target's memory or environment: only /proc/PID/maps and the files it
 * names.
 */
#ifndef INFERSCOPE_CHECK_H
#define INFERSCOPE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

enum check_status {
	CHECK_OK,	/* works */
	CHECK_WARN,	/* works, with a limit or a cost worth knowing */
	CHECK_ABSENT,	/* not there; what needs it does not happen (not an error) */
	CHECK_FAIL,	/* missing, and the main use (record) cannot work */
};

struct check_item {
	char id[32];		/* "privileges", "btf", "ringbuf", "libcuda", ... */
	enum check_status status;
	char detail[512];	/* what was found */
	char fix[384];		/* what to do; "" when nothing */
};

struct check_result {
	struct check_item *items;
	size_t n, cap;
	bool ready;		/* record (CPU tracing, and -p PID when given) will work */
};

/* Runs every check; pid 0: the host only. 0 or -ENOMEM. */
int check__run(__u32 pid, struct check_result *res);
void check__free(struct check_result *res);

const char *check_status_name(enum check_status s);	/* "ok", "warn", "absent", "fail" */

/* Plain text, one line per item and its fix below; or one JSON object
 * (docs/check.md). 0 or -errno. */
int check__write_text(const struct check_result *res, FILE *out);
int check__write_json(const struct check_result *res, FILE *out);

/* A gzip'd tar at path: check.txt, check.json, versions.txt (tool, kernel,
 * OS, libbpf), kernel-config.txt (the CONFIG_ lines the tracer depends on),
 * and recording.txt (what analyze__describe says of recording, when not
 * NULL). 0, or -errno after saying what failed. */
int check__support_bundle(const struct check_result *res, const char *path, const char *recording);

#endif
