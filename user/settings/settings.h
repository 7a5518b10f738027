/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The configuration of every subcommand as one model. Each setting has a
 * key ("daemon.interval"), a value and the source of that value, taken
 * from the first of these that sets it, highest first:
 *
 *   a command-line option          (--interval 60)
 *   the environment                (INFERSCOPE_DAEMON_INTERVAL=60)
 *   the configuration file         (/etc/inferscope-bpf/config.yaml, or --config FILE)
 *   the built-in default
 *
 * The file is YAML (parsed by libyaml): one mapping per section (record,
 * analyze, daemon) of keys to values; a list is a YAML sequence. An unknown
 * key, a bad value or a key set twice is refused with the file, the line
 * and the reason. Every value is checked by the same code whatever its
 * source. The recording's part of the model is a struct record_config
 * (config.h), so that record, -p and the daemon read the same fields.
 */
#ifndef INFERSCOPE_SETTINGS_H
#define INFERSCOPE_SETTINGS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "config.h"

#define SETTINGS_DEFAULT_FILE	"/etc/inferscope-bpf/config.yaml"
#define SETTINGS_MAX_MATCH	16

enum setting_source { SRC_DEFAULT, SRC_FILE, SRC_ENV, SRC_OPTION };

/* What the daemon is asked to do (docs/daemon.md). */
struct daemon_config {
	double interval_s;		/* a window starts every interval */
	double window_s;		/* recording time per window */
	const char *state_dir;		/* the recordings kept */
	const char *textfile_dir;	/* node_exporter's textfile collector directory */
	int keep_severity;		/* keep windows with a finding this severe (SEV_*); 4: none */
	unsigned int keep_last;		/* and always the last N windows */
	__u64 max_bytes;		/* total size of the state directory's recordings */
	double max_age_s;		/* recordings older than this are removed; 0: no limit */
	bool cuda_processes;		/* sample every process that maps libcuda */
	const char *match[SETTINGS_MAX_MATCH];	/* extended regexes on command lines */
	size_t match_count;
	bool once;			/* one window, then exit */
	/* Flight-recorder mode (0: off): each interval recorded whole, the
	 * last flight_s seconds kept in memory, a window written when a
	 * trigger fires (at most one a flight_s) and at the interval's end. */
	double flight_s;
	double trigger_sync_s;		/* a synchronization this long; 0: off */
	double trigger_gpu_idle_s;	/* a GPU idle this long (GPU activity recorded); 0: off */
	unsigned int trigger_drops;	/* this many events dropped within a second; 0: off */
};

struct settings;

/* The built-in defaults, every value's source SRC_DEFAULT. NULL and errno
 * when out of memory. */
struct settings *settings__new(void);
void settings__free(struct settings *s);

/* Reads the YAML file at path (NULL: SETTINGS_DEFAULT_FILE, skipped when
 * it does not exist). 0, or -errno with "FILE:LINE: reason" in err. */
int settings__load_file(struct settings *s, const char *path, char *err, size_t errlen);
/* Takes INFERSCOPE_<SECTION>_<KEY> from envp (NULL: environ). An unknown
 * variable of a section (INFERSCOPE_DAEMON_*, ...) is refused; others
 * (INFERSCOPE_CUPTI_LIB, ...) are not settings and are left alone.
 * 0, or -EINVAL with "VARIABLE: reason" in err. */
int settings__load_env(struct settings *s, char *const *envp, char *err, size_t errlen);
/* Sets key from text, from `source` (`where`: "--interval", ...). For a
 * list, a value from a source above the list's current one replaces the
 * list; from the same source it is appended. 0, or -EINVAL / -ENOENT (no
 * such key) / -ENOMEM with the reason in err. */
int settings__set(struct settings *s, const char *key, const char *text, enum setting_source source,
		  const char *where, char *err, size_t errlen);

/* Compiles a daemon.match pattern, as the daemon's discovery uses it
 * (discover.h): the one check of a pattern, for config show as for the
 * daemon. 0, or -EINVAL with "daemon.match: 'PATTERN' is not ...: reason"
 * in err (re left unset). */
int settings__compile_match(regex_t *re, const char *pattern, char *err, size_t errlen);

/* Checks the values that depend on each other. 0, or -EINVAL with why. */
int settings__check(const struct settings *s, char *err, size_t errlen);

/* The model's values. The record_config holds the recording's settings
 * only: its targets and output stay the caller's to set. */
struct record_config *settings__record(struct settings *s);
const struct daemon_config *settings__daemon(const struct settings *s);
int settings__report_format(const struct settings *s);	/* enum report_format */
/* The file read ("" when none). */
const char *settings__file(const struct settings *s);

/* The source of key's value, and where it came from ("", "FILE:LINE",
 * "INFERSCOPE_...", "--option"). -ENOENT for an unknown key. */
int settings__source(const struct settings *s, const char *key, enum setting_source *source, const char **where);
const char *setting_source_name(enum setting_source src);	/* "default", "file", "environment", "option" */

/* `config show`: every setting with its value and source, as text or
 * JSON. 0 or -errno. */
int settings__show(const struct settings *s, FILE *out, bool json);

/* A command-line option that sets a setting. Every such option is defined
 * once, in the settings' table; the CLI makes its options of these
 * (user/cli/cli.c), the man page and the completion list them. */
struct setting_option {
	const char *key;	/* the setting it sets: "record.follow" */
	const char *name;	/* the long option, without its "--": "no-follow" */
	const char *arg;	/* the name of its value ("MIB"); NULL: a flag */
	const char *value;	/* a flag's value; with arg, the value of the argument left out (optional) */
	const char *help;	/* its line in --help and the man page */
};

size_t settings__option_count(void);
const struct setting_option *settings__option(size_t i);	/* NULL past the end */
/* What key's value means ("trace page faults"); NULL for an unknown key. */
const char *settings__doc(const char *key);

/* The keys in order, for docs and tests. */
size_t settings__count(void);
const char *settings__key(size_t i);
/* The environment variable of key: INFERSCOPE_DAEMON_INTERVAL. */
void settings__env_name(const char *key, char *out, size_t len);

#endif
