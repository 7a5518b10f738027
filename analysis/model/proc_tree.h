/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The traced processes as a tree: which process is whose parent (among
 * the traced ones), and what each one is when its names tell (a PyTorch
 * DataLoader worker, a Python multiprocessing worker), so that a report
 * shows which worker belongs to which trainer. Pure: a function of the
 * recording's PROCESS chunks and the summary (the names threads took
 * while recorded, on-CPU time, when they began and ended).
 *
 * Short-lived processes are folded: a traced child that began and ended
 * within PROC_TREE_SHORT_NS while recorded, with no CUDA call, such as the
 * helpers a launcher's wrapper scripts run before the program (a pyenv
 * shim runs dozens), is counted under its nearest ancestor that is shown
 * instead of being listed. So are wrappers: a process that only started
 * the one that lasts (`sh -c 'prog; ...'`, a shim that waits for what it
 * runs) is folded into it, which takes its place in the tree.
 */
#ifndef INFERSCOPE_PROC_TREE_H
#define INFERSCOPE_PROC_TREE_H

#include <stddef.h>
#include <linux/types.h>
#include "recording.h"
#include "summary.h"

#define PROC_TREE_NO_PARENT ((size_t)-1)
#define PROC_TREE_SHORT_NS	100000000ULL	/* 100 ms */
#define PROC_TREE_WRAPPER_CPU_NS	50000000ULL	/* 50 ms */
#define PROC_TREE_FOLDED_LEN	160

enum proc_role {
	PROC_ROLE_NONE,			/* nothing tells */
	PROC_ROLE_DATALOADER_WORKER,	/* PyTorch DataLoader worker: named pt_data_worker */
	PROC_ROLE_DATALOADER_PARENT,	/* the process whose DataLoader workers these are */
	PROC_ROLE_MP_SPAWN_WORKER,	/* Python multiprocessing, spawn start method */
	PROC_ROLE_MP_FORKSERVER,	/* Python multiprocessing's fork server */
	PROC_ROLE_MP_FORKSERVER_WORKER,	/* forked by the fork server */
	PROC_ROLE_MP_RESOURCE_TRACKER,	/* Python multiprocessing's resource tracker */
	PROC_ROLE_FORK,			/* the same command line as its parent: a forked worker */
};

struct proc_node {
	__u32 pid, ppid;		/* ppid as last recorded (the parent may not be traced) */
	const struct rec_process *p;	/* its first snapshot: how it became a target, its command then */
	const struct rec_process *latest;	/* its latest snapshot: p, or its image after an exec */
	__u32 origin;			/* ISR_ORIGIN_* of p */
	const char *comm;		/* its main thread's last name: the summary's, or the snapshot's */
	size_t parent;			/* index of its traced parent, PROC_TREE_NO_PARENT when none */
	size_t depth;			/* 0 for a root */
	size_t children;		/* traced children */
	enum proc_role role;
	size_t threads;			/* threads seen (summary), or listed in the snapshot */
	__u64 on_cpu_ns;		/* its threads' on-CPU time while recorded */
	bool short_lived;		/* folded: began and ended within PROC_TREE_SHORT_NS, no CUDA */
	/* folded into the one process it started: of its children (and of
	 * short-lived ones' children), all but that one are short-lived, and
	 * it ran one thread, at most PROC_TREE_WRAPPER_CPU_NS on CPU, without
	 * CUDA; that process is no worker of it (PROC_ROLE_FORK, ...) */
	bool wrapper;
	size_t shown_depth;		/* its depth among the processes shown (not folded) */
	size_t folded;			/* the short-lived processes it is the nearest shown ancestor of */
	char folded_names[PROC_TREE_FOLDED_LEN];	/* theirs, by name, most first: "bash ×33, readlink ×5" */
	size_t wrappers;		/* the wrappers folded into it (its ancestors) */
	char wrapper_names[PROC_TREE_FOLDED_LEN];	/* theirs, outermost first: "pid 40 sh → pid 41 env" */
};

/* In tree order: each root (a process whose parent was not traced), by
 * pid, followed by its descendants depth first, children by pid. */
struct proc_tree {
	struct proc_node *nodes;
	size_t count;
	size_t roots;
	size_t folded;			/* short-lived processes, not shown */
	size_t wrappers;		/* wrappers, not shown */
};

/* The nearest ancestor of node i that is shown (neither short-lived nor
 * a wrapper): its index, or PROC_TREE_NO_PARENT when none is. */
size_t proc_tree__shown_parent(const struct proc_tree *t, size_t i);

/* 0 or -ENOMEM; out is proc_tree__free's to free either way. s may be
 * NULL (names and times from the snapshots only). */
int proc_tree__build(const struct recording *r, const struct summary *s, struct proc_tree *out);
void proc_tree__free(struct proc_tree *t);

/* "dataloader_worker", ...; NULL for PROC_ROLE_NONE. */
const char *proc_role__id(enum proc_role role);
/* What the role means, for a reader: "PyTorch DataLoader worker", ... */
const char *proc_role__text(enum proc_role role);

#endif
