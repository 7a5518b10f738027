/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The watcher of the holds (bpf/hold.bpf.h): a process of its own that lets
 * every target the BPF side stopped go on (SIGCONT) if the recorder ends
 * without having done so itself (SIGKILL, a crash), so that a traced job is
 * never left stopped. It keeps only the descriptor of the BPF map of held
 * processes and the read end of a pipe whose write end only the recorder
 * holds: the recorder's end, however it comes, closes that pipe. It is in
 * a session of its own (a Ctrl-C at the terminal does not reach it) and
 * ignores the signals that stop a recorder.
 */
#ifndef INFERSCOPE_HOLD_GUARD_H
#define INFERSCOPE_HOLD_GUARD_H

#include <sys/types.h>

struct hold_guard {
	pid_t pid;	/* the watcher; 0: none */
	int fd;		/* the pipe's write end; -1: none */
};

#define HOLD_GUARD_NONE ((struct hold_guard){ .pid = 0, .fd = -1 })

/* Lets go (SIGCONT) every process the map held_fd holds, and empties it. */
void hold_guard__release_all(int held_fd);
/* Starts the watcher of held_fd (the map of held processes). 0 or -errno. */
int hold_guard__start(struct hold_guard *g, int held_fd);
/* The recorder let every hold go: the watcher ends (it lets go whatever the
 * map still holds) and is waited for. Safe on HOLD_GUARD_NONE. */
void hold_guard__stop(struct hold_guard *g);

#endif
