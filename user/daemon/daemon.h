/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `inferscope-bpf daemon` (docs/daemon.md): fleet sampling. Every interval
 * it discovers the processes to sample (discover.h), records them all in
 * one window with the recorder (recorder.h, one overhead budget for the
 * window), analyzes the recording (window.h: the analysis `analyze` runs),
 * writes the metrics for node_exporter (prom.h), and keeps or removes the
 * recording by policy under the state directory's caps. SIGTERM cuts the
 * current window cleanly and exits 0; SIGHUP reloads the configuration,
 * and a bad one is refused, the old one kept. Notifies systemd (notify.h).
 */
#ifndef INFERSCOPE_DAEMON_H
#define INFERSCOPE_DAEMON_H

#include <stddef.h>
#include "settings.h"

/* Builds the configuration from its sources (the file, the environment,
 * the command line): at start and at every SIGHUP. NULL with why in err
 * when it is bad. */
struct daemon_loader {
	struct settings *(*load)(void *ctx, char *err, size_t errlen);
	void *ctx;
};

/* Runs until SIGTERM (or one window with daemon.once). The exit status:
 * 0; 1 when the configuration is bad at start or, with daemon.once, the
 * window failed. */
int daemon__run(const struct daemon_loader *ld, int argc, char **argv);

#endif
