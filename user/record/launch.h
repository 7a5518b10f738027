/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The command the recorder launches (-- CMD): forked at once but held
 * before its exec until the probes are live, so that nothing it does goes
 * untraced; stopped if it outlives the recording.
 */
#ifndef INFERSCOPE_LAUNCH_H
#define INFERSCOPE_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>
#include "family.h"
#include "run_as.h"

struct launch {
	pid_t pid;		/* -1: none */
	int go_fd;		/* write end: one byte releases the child; -1 once released */
	int status_fd;		/* read end: errno of a failed exec, EOF on success */
	bool exited;		/* reaped: status is its wait status */
	bool stopped;		/* it outlived the recording: the recorder stopped it */
	bool cred_failed;	/* it did not start: its credentials could not be taken */
	int status;
};

#define LAUNCH_NONE { .pid = -1, .go_fd = -1, .status_fd = -1 }

/* Forks cmd with env added to its environment, held before exec; it will
 * run with the credentials of as (user/record/run_as.h). 0 or -errno. */
int launch__fork(struct launch *l, char **cmd, const struct launch_env *env, const struct run_as *as);
/* Lets it take its credentials and exec: 0, or -errno of the step that
 * failed (cred_failed says which; it has exited then). */
int launch__release(struct launch *l);
/* Reaps it if it has exited (WNOHANG). */
void launch__poll(struct launch *l);
/* The recording is over: a command never released is dropped; one still
 * running is stopped (SIGTERM, then SIGKILL after a grace period); its exit
 * is reaped either way. */
void launch__end(struct launch *l);

#endif
