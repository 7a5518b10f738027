/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A probe family: one kind of thing the recorder traces (kernel events,
 * the CUDA driver, Python, the GPU through the CUPTI bridge), with its BPF
 * objects, what it finds in a process and what it attaches there. The
 * recorder (user/record/recorder.c) knows families only through this interface:
 * it opens the enabled ones, asks each to probe every target when it
 * appears and once a second, passes it the events, and frees it. A new
 * family is a file of its own (user/family_*.c) with one of these, a line
 * in PROBE_FAMILIES and its section of the configuration (user/record/config.h).
 *
 * Every operation but open may be NULL: the family has nothing to do then.
 * Messages go to stderr from the family itself and say what failed and
 * what to do.
 */
#ifndef INFERSCOPE_FAMILY_H
#define INFERSCOPE_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "budget_cost.h"
#include "config.h"
#include "events.h"
#include "isr_format.h"
#include "tracer.h"

/* When a family is asked to probe a process. */
enum probe_when {
	PROBE_AT_START,		/* a -p process, when the recording starts */
	PROBE_BEFORE_EXEC,	/* the command to launch: forked, not exec'd yet (probe files by path) */
	PROBE_AFTER_EXEC,	/* the launched command, right after its exec */
	PROBE_NEW_PROCESS,	/* a child a target started, or a target that exec'd */
	PROBE_RESCAN,		/* a live target, once a second: what it loaded since */
	PROBE_MAPPED,		/* a target whose dynamic loader is watched (bpf/hold.bpf.h): what it maps now
				 * (held: a new image, a forked child, or a library just loaded and not yet
				 * run); a library it loads later holds it again */
};

/* What the recorder gives a family. */
struct family_ctx {
	struct tracer *t;
	const struct record_config *cfg;
	/* Appends a record the family makes to the recording: 0 or -errno. */
	int (*emit)(void *emit_ctx, const void *record, size_t size);
	void *emit_ctx;
};

/* Environment variables for the command to launch. */
#define LAUNCH_ENV_MAX 4
struct launch_env {
	const char *name[LAUNCH_ENV_MAX];
	const char *value[LAUNCH_ENV_MAX];
	size_t n;
};

struct probe_family {
	const char *name;
	/* File-name prefixes of the libraries it probes in a process once it
	 * maps them (NULL-terminated; NULL: none): a target that maps one is
	 * held until every family probed it (PROBE_MAPPED). */
	const char *const *hold_libs;
	/* Whether cfg asks for the family. */
	bool (*enabled)(const struct record_config *cfg);
	/* Opens and loads its BPF objects onto the tracer's shared maps,
	 * before anything is traced: its state, or NULL with errno set and
	 * err saying why (the recording does not start). The families open
	 * on threads of their own, at once (the kernel's verifier takes most
	 * of the time, and a busy host has idle CPUs): an open touches only
	 * its own state and the tracer's calls. */
	void *(*open)(const struct family_ctx *ctx, char *err, size_t errlen);
	/* The family whose shared maps (tracer__share_maps) its objects use:
	 * opened after that one, when it is enabled; NULL: none. */
	const char *after;
	/* Before the targets run: finds the files it will probe, and may
	 * give the command to launch environment variables. 0, or -errno
	 * after saying what failed (the recording does not start). */
	int (*prepare)(void *st, struct launch_env *env);
	/* Attaches what belongs to no process (tracepoints, perf events),
	 * once the targets are known. 0 or -errno with err filled. */
	int (*attach)(void *st, char *err, size_t errlen);
	/* Probes pid. 0, or -errno after saying what failed: at AT_START and
	 * BEFORE_EXEC the recording stops (-ESRCH, a process gone, excepted),
	 * later the process goes on traced without this family's probes. */
	int (*probe_process)(void *st, __u32 pid, enum probe_when when);
	/* pid is a new process or a new image (ISR_ORIGIN_CHILD, _EXEC),
	 * said as soon as its event is read: what was known of the old
	 * image is void. It is probed (PROBE_NEW_PROCESS) soon after. */
	void (*on_new_process)(void *st, __u32 pid, __u32 origin);
	/* Sees every event before it is written: 0 to write it, 1 when the
	 * family took it (it is not written), -errno to stop the recording. */
	int (*on_event)(void *st, const struct isr_ev_hdr *h, size_t size);
	/* After each poll: work that cannot wait for the next rescan; lowers
	 * *poll_ms when it must come back sooner. */
	void (*tick)(void *st, int *poll_ms);
	/* Once its probes are live: what they cost a target thread here
	 * (user/record/budget_cost.h), measured on threads of this process,
	 * which the recorder makes a target meanwhile (and discards their
	 * events): fills the figures of c that are its own. Runs on a thread
	 * of its own beside the other families' measurements. 0, or -errno
	 * with err filled. */
	int (*measure_costs)(void *st, struct tracer_costs *c, char *err, size_t errlen);
	/* Switches its page-fault tracing on or off (the overhead budget
	 * samples it: user/record/budget_ctl.h). 0 or -errno. */
	int (*switch_faults)(void *st, bool on);
	/* Adds what it counts itself of the drop sources (a user-space
	 * source, ISR_SRC_*) to drops. */
	void (*count_drops)(void *st, __u64 *drops);
	/* Once the recording stops, before the last events are drained. */
	void (*final_flush)(void *st);
	/* -v: one line per probe it attached outside the tracer's uprobes. */
	void (*describe)(void *st, FILE *out);
	void (*free)(void *st);
};

/* The families, in the order they open: the Python stack walker's maps
 * are shared with the CUDA programs, which load after it. */
#define PROBE_FAMILIES(X) X(kernel) X(python) X(cuda) X(nccl) X(gpu) X(nvtx)

#define PROBE_FAMILY_DECLARE(name) extern const struct probe_family family_##name;
PROBE_FAMILIES(PROBE_FAMILY_DECLARE)
#undef PROBE_FAMILY_DECLARE

#endif
