/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's state directory: its recordings are named
 * window-<UTC time>.isr while being recorded and
 * window-<UTC time>.<severity>.isr once analyzed (the severity of the
 * window's worst finding: none, info, warning, critical); in
 * flight-recorder mode window-<UTC time>.<N>[.<severity>].isr, the N-th
 * window of the interval. They are ordered by time, then N, and the policy
 * can be applied again at any time, after a restart or a change of
 * configuration, from the directory alone. Only regular files of the
 * daemon's own are recordings: what another user put there is left alone.
 */
#ifndef INFERSCOPE_STATE_DIR_H
#define INFERSCOPE_STATE_DIR_H

#include <stdbool.h>
#include "settings.h"
#include "prom.h"

#define WINDOW_PREFIX	"window-"
#define WINDOW_SUFFIX	".isr"

/* Whether name is a window's recording; *severity its tag (0 none .. 3
 * critical) or -1 when it has none yet. */
bool state_dir__window_file(const char *name, int *severity);

/* Called for every removal: err 0, or -errno when it failed. */
typedef void (*state_dir_removed_fn)(void *ctx, const char *dir, const char *name, const char *why, int err);

/* Removes recordings by policy and caps, oldest first (docs/daemon.md): of
 * the windows before the last keep_last, those tagged below keep_severity;
 * then those older than max_age_s; then the oldest until the total is at
 * most max_bytes; with room (before a window), then the oldest until the
 * filesystem's free space holds one more recording as large as the largest
 * kept. Windows without a tag are removed by age, size and room only.
 * Counts the removals and what is left in h. 0 or -errno. */
int state_dir__prune(const char *dir, const struct daemon_config *c, double now, bool room,
		     state_dir_removed_fn removed, void *ctx, struct daemon_health *h);

/* Creates dir (0750) if it is missing and checks that it is fit for the
 * recordings: a directory, owned by the daemon's user or root, not
 * writable by every user unless sticky. 0, or -errno with why and what to
 * do in err. */
int state_dir__check(const char *dir, char *err, size_t errlen);

#endif
