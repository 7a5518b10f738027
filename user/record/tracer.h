/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loader's core, shared by every probe family (user/record/family.h): the
 * scheduler object, which owns the maps all BPF objects share (the target
 * set, the bulk and critical ring buffers, the drop counters), the loading
 * of the families' objects onto those maps, the uprobe and USDT
 * attachments of every process and file, the switch of the budget's
 * hot-path probes, and the consumption of the ring buffers. One tracer per
 * recording. The promise: once an attach call returns 0 its probes are
 * live; every event the kernel could not queue is counted in the drop
 * counters.
 */
#ifndef INFERSCOPE_TRACER_H
#define INFERSCOPE_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "events.h"
#include "config.h"

struct tracer;
struct bpf_object;
struct bpf_object_skeleton;
struct bpf_program;

/* Called for each event, in ring-buffer order; return non-zero to stop
 * consuming (tracer__poll then returns that value). */
typedef int (*tracer_event_fn)(void *ctx, const void *data, size_t size);

/* Opens and loads the scheduler object with cfg's ring-buffer size and
 * child following. NULL + errno on error; err says why. */
struct tracer *tracer__open(const struct record_config *cfg, tracer_event_fn fn, void *ctx, char *err, size_t errlen);

/* Loads a family's object (opened, not loaded) onto the shared maps: those
 * of the scheduler object and those shared with tracer__share_maps. what
 * names it in messages, off_option the option that records without it;
 * skel NULL: its open failed (errno says why). 0 or -errno with err
 * filled. */
int tracer__load(struct tracer *t, struct bpf_object_skeleton *skel, const char *what, const char *off_option,
		 char *err, size_t errlen);
/* A map of the scheduler object that a family fills (py_gils: the GIL
 * waits its sched_switch program keeps, bpf/gil_wait.bpf.h): its fd, or
 * -ENOENT. */
int tracer__map_fd(const struct tracer *t, const char *name);
/* Objects loaded after this one reuse its maps of these names. */
int tracer__share_maps(struct tracer *t, struct bpf_object *obj, const char *const *names, size_t n);
/* Whether uprobes are attached as uprobe_multi links (Linux 6.6+, and not
 * --legacy-uprobes); a family's uprobe programs are then to be loaded as
 * such: tracer__use_uprobe_multi(t, obj) before tracer__load. */
bool tracer__uprobe_multi(const struct tracer *t);
/* Where the kernel's task_struct keeps a thread's fs base (thread.fsbase),
 * in bytes, from its BTF, read once for every object that needs it; 0:
 * not known. */
__u32 tracer__task_fsbase_offset(const struct tracer *t);
void tracer__use_uprobe_multi(const struct tracer *t, struct bpf_object *obj);

/* Adds pid to the targets; named: a process the user named (-p), which the
 * tracer never holds (ISR_TARGET_NO_HOLD). */
int tracer__add_target(struct tracer *t, __u32 pid, bool named);
int tracer__remove_target(struct tracer *t, __u32 pid);
/* Whether pid is in the targets (named, or followed by the fork tracepoint). */
bool tracer__is_target(struct tracer *t, __u32 pid);
/* Current target pids (including followed children); count or -errno. */
int tracer__targets(struct tracer *t, __u32 *pids, size_t max);
/* Attaches the scheduler and process tracepoints; 0 or -errno with err.
 * The hold of forked children (bpf/hold.bpf.h) is attached too where the
 * kernel has what it needs; a refusal is a note in err (and 0). */
int tracer__attach(struct tracer *t, char *err, size_t errlen);

/* Holding new processes until their probes are armed (bpf/hold.bpf.h):
 * the file-name prefixes of the libraries whose first mapping holds a
 * target (at most ISR_HOLD_NAMES, each shorter than ISR_HOLD_NAME_LEN);
 * 0 or -errno. */
int tracer__set_hold_names(struct tracer *t, const char *const *names, size_t n);
/* Starts (on) or stops holding; a hold already made is the caller's to
 * answer (SIGCONT) still. */
void tracer__hold(struct tracer *t, bool on);
/* What holds the kernel supports besides the exec: the loading of a
 * library (uprobe_multi links), the fork of a probed process (Linux 6.13). */
void tracer__hold_support(struct tracer *t, bool *lib, bool *fork);
/* Watches the dynamic loader file (dev, ino) at path, for every process
 * (bpf/hold.bpf.c): its hook at file offset, cookie the distance from the
 * hook's address to _r_debug (user/record/loader_watch.h). 0, -EALREADY (watched),
 * -EOPNOTSUPP (no uprobe_multi links), or -errno. */
int tracer__watch_loader(struct tracer *t, const char *path, dev_t dev, ino_t ino, __u64 offset, __s64 cookie);
/* pid, held, was let go (SIGCONT): out of the map of held processes. */
void tracer__hold_done(struct tracer *t, __u32 pid);
/* The descriptor of the map of held processes (pid -> when), for the
 * watcher that lets them go if the recorder cannot (user/record/hold_guard.h). */
int tracer__held_fd(const struct tracer *t);

/* What switches a probe site on and off (uprobe_site.sw): nothing, the
 * overhead budget's hot path (launches, memsets), or the async copies'
 * budget of their own. */
enum tracer_switch { TRACER_ALWAYS, TRACER_HOT, TRACER_COPIES, TRACER_SWITCHES };

/* One probe site of a file: prog at offset (its return with ret). */
struct uprobe_site {
	struct bpf_program *prog;
	const char *name;	/* the function, for messages */
	__u64 offset;		/* file offset */
	__u64 cookie;		/* the program's bpf_get_attach_cookie() */
	bool ret;		/* a return probe */
	__u8 sw;		/* enum tracer_switch */
};

/* Attaches the sites in the file (dev, ino) that pid maps or will map,
 * reached through path, as uprobes for pid only (other processes mapping
 * the file pay nothing): live in its current mappings and in those it
 * makes later. Entries go in before returns (a return program reads what
 * its entry kept); switched sites only while their switch is on. what names the
 * file's kind in tracer__describe ("libcuda"). All or nothing: 0, -EALREADY
 * when this file is already probed for pid, or -errno with err filled. */
int tracer__attach_uprobes(struct tracer *t, const char *what, __u32 pid, dev_t dev, ino_t ino, const char *path,
			   const struct uprobe_site *sites, size_t n, char *err, size_t errlen);
/* Attaches prog to the USDT probe provider:name of the file at path (the
 * same rules), for pid only; its semaphore rises in pid. Released before
 * every uprobe at the end. 0, -EALREADY, or -errno with err filled. */
int tracer__attach_usdt(struct tracer *t, const char *what, __u32 pid, const char *path, struct bpf_program *prog,
			const char *provider, const char *name, char *err, size_t errlen);
/* Adds prog at the USDT probe provider:name to every USDT attachment of
 * that kind (what) whose process is alive: how many, or -errno with err
 * filled when none could be. */
int tracer__add_usdt_each(struct tracer *t, const char *what, struct bpf_program *prog, const char *provider,
			  const char *name, char *err, size_t errlen);
/* Attaches prog at one site of path for pid as a lone uprobe_multi link
 * (for measurements): its descriptor, to close, or -errno. */
int tracer__uprobe_link(struct tracer *t, struct bpf_program *prog, __u32 pid, const char *path, __u64 offset,
			__u64 cookie);
/* Releases the uprobes and USDT links of processes that are no longer
 * targets. */
void tracer__prune_uprobes(struct tracer *t);

/* A program run by a software perf event on every CPU. */
struct cpu_links {
	struct bpf_link **links;	/* by CPU; NULL for an offline CPU */
	int *fds;			/* their perf events, by CPU (-1: none), owned by the links */
	int ncpu;
	int attached;			/* CPUs online */
};

/* Runs prog on every CPU at each period-th count of the software perf
 * event config (PERF_COUNT_SW_*). what names the event in messages and
 * off_option the option that records without it. 0 or -errno with err
 * filled (what was attached stays in l for cpu_links__free). */
int tracer__attach_cpu_event(struct bpf_program *prog, __u64 config, __u64 period, const char *what,
			     const char *off_option, struct cpu_links *l, char *err, size_t errlen);
void cpu_links__free(struct cpu_links *l);
/* Counts (on) or stops (off) l's perf events on every CPU: stopped, the
 * kernel does not run their program. 0 or -errno. */
int cpu_links__enable(struct cpu_links *l, bool on);

/* Whether the switched sites can be switched on and off: they are
 * uprobe_multi links, attached and released in milliseconds. */
bool tracer__can_switch_hot(const struct tracer *t);
/* Attaches (on) or releases (off) the sites of every process that sw
 * (not TRACER_ALWAYS) switches; files probed later follow the current
 * state. 0, or the first error (-errno, err filled; the other processes
 * are still switched). */
int tracer__set_switch(struct tracer *t, enum tracer_switch sw, bool on, char *err, size_t errlen);

/* Attaches (on) or releases (off) the sites of pid's uprobe attachments
 * that belong to one of the n programs progs (sites that are not hot):
 * for probes needed only until they taught what they teach. Files probed
 * later start with them attached. 0, -EOPNOTSUPP where they cannot be
 * switched (no uprobe_multi links), or the first error (-errno, err
 * filled; -ESRCH: the process is gone). */
int tracer__switch_programs(struct tracer *t, __u32 pid, struct bpf_program *const *progs, size_t n, bool on,
			    char *err, size_t errlen);

/* Waits up to timeout_ms for events and consumes what is there: the number
 * of events consumed or -errno. */
int tracer__poll(struct tracer *t, int timeout_ms);
/* Consumes everything queued, without waiting. */
int tracer__drain(struct tracer *t);
/* Consumes everything queued, dropping the events of pid (a measurement's). */
void tracer__discard(struct tracer *t, __u32 pid);
/* Sums the per-CPU drop counters into drops[0 .. ISR_SRC_MAX); the
 * recorder's own sources are left 0. */
int tracer__read_drops(struct tracer *t, __u64 *drops);
/* One line per scheduler tracepoint. */
void tracer__describe(const struct tracer *t, FILE *out);
/* One line per process and file probed (uprobes, USDT). */
void tracer__describe_uprobes(const struct tracer *t, FILE *out);
void tracer__free(struct tracer *t);

/* Whether the kernel has uprobe_multi links (Linux 6.6). */
#define TRACER_ATTACH_UPROBE_MULTI 48	/* BPF_TRACE_UPROBE_MULTI: load such programs with it */
bool tracer__has_uprobe_multi(void);
/* One uprobe_multi link of prog (loaded with the uprobe_multi attach
 * type) on n sites of the file at path, entries or (ret) returns, for pid
 * only (0: every process), each site with its attach cookie (cookies may be
 * NULL). The link's fd, or -errno. Debian's libbpf 1.1 predates the link
 * type, so the attribute is laid out here. */
struct bpf_program;
int tracer__uprobe_multi_link(struct bpf_program *prog, const char *path, const __u64 *offsets,
			      const __u64 *cookies, unsigned int n, bool ret, __u32 pid);

#endif
