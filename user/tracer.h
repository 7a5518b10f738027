/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loads the BPF programs, manages the target set and consumes the ring
 * buffers. One tracer per recording. The promise: once tracer__attach()
 * returns 0 every probe family it reports as attached is live; every event
 * the kernel could not queue is counted in the drop counters.
 */
#ifndef INFERSCOPE_TRACER_H
#define INFERSCOPE_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "events.h"
#include "cuda_attach.h"
#include "python_attach.h"
#include "cupti_attach.h"

struct tracer;

/* Called for each event, in ring-buffer order; return non-zero to stop
 * consuming (tracer__poll then returns that value). */
typedef int (*tracer_event_fn)(void *ctx, const void *data, size_t size);

struct tracer_opts {
	size_t ringbuf_bytes;	/* bulk ring buffer; power of two, >= page size */
	bool follow_children;	/* add processes forked by targets */
	bool faults;		/* page-fault probes */
	bool cuda;		/* load the CUDA driver API probes (tracer__attach_cuda) */
	bool python;		/* load the Python GIL probes (tracer__attach_python) */
	bool legacy_uprobes;	/* one perf-event uprobe per site even where uprobe_multi links exist */
	bool gpu;		/* load the GPU activity program of the CUPTI bridge (tracer__attach_gpu) */
	unsigned int py_stacks_hz; /* Python stack samples per second and thread on CPU (0: no stacks) */
	unsigned int py_launch_every; /* with stacks and cuda: the Python stack of every Nth launch per CPU (0: none) */
	bool verbose;		/* libbpf's log on stderr */
};

/* Opens and loads the BPF objects. NULL + errno on error; err says why. */
struct tracer *tracer__open(const struct tracer_opts *opts, tracer_event_fn fn, void *ctx,
			    char *err, size_t errlen);
int tracer__add_target(struct tracer *t, __u32 pid);
int tracer__remove_target(struct tracer *t, __u32 pid);
/* Attaches every probe; 0 or -errno with err filled. */
int tracer__attach(struct tracer *t, char *err, size_t errlen);
/* Attaches the CUDA probes of every site of m->lib, as uprobes for pid only
 * (other processes mapping the library pay nothing), reaching the file
 * through m->path. The probes are live in the process's current mappings
 * and in mappings of the file it makes later (a library not mapped yet is
 * probed when it is). 0, -EALREADY when this file is already probed for
 * pid, or -errno with err filled (all or nothing). */
int tracer__attach_cuda(struct tracer *t, __u32 pid, const struct cuda_mapping *m, char *err, size_t errlen);
/* Attaches the GIL probes of m->lib (PyEval_RestoreThread entry and
 * return, PyEval_SaveThread entry) for pid only, as tracer__attach_cuda
 * does. 0, -EALREADY, or -errno with err filled (all or nothing). */
int tracer__attach_python(struct tracer *t, __u32 pid, const struct py_mapping *m, char *err, size_t errlen);
/* Whether the hot-path CUDA probes (the entry-only families: launches,
 * async copies, memsets) can be switched on and off: they are uprobe_multi
 * links, one per library and process, attached and released in
 * milliseconds (Linux 6.6+). */
bool tracer__can_switch_hot(const struct tracer *t);
/* Attaches (on) or releases (off) the hot-path CUDA probes of every
 * process; libraries probed later follow the current state. 0, or the
 * first error (-errno, err filled; the other processes are still switched).
 * Used by the overhead budget. */
int tracer__set_hot(struct tracer *t, bool on, char *err, size_t errlen);
/* Measures what one hit of the hot-path CUDA probe costs here: the
 * executable's own cuLaunchKernel (user/selfprobe.h, libcuda's prologue)
 * called with and without the probe, as a target, before anything else is
 * traced (its events are discarded). 0 with *hit_ns, or -errno with err
 * filled (-EOPNOTSUPP: tracer__can_switch_hot is false). */
int tracer__measure_hit_cost(struct tracer *t, double *hit_ns, char *err, size_t errlen);
/* Attaches to the USDT probe inferscope:gpu_batch of the CUPTI bridge at
 * path (reached through /proc/PID/root) for pid only. Its semaphore rises
 * in pid, now or when pid maps the file later, which wakes the bridge up
 * (cupti_bridge/bridge.c). 0, -EALREADY, or -errno with err filled. */
int tracer__attach_gpu(struct tracer *t, __u32 pid, const char *path, char *err, size_t errlen);
/* When pid maps the CUPTI bridge (started with it, or injected): attaches
 * to it. 1 attached now, 2 attached before, 0 the bridge is not mapped
 * there, or -errno with err filled (-ESRCH: pid is gone). */
int tracer__attach_gpu_if_mapped(struct tracer *t, __u32 pid, char *err, size_t errlen);
/* Asks every attached bridge whose process is alive to flush (USDT
 * inferscope:gpu_flush's semaphore); each answers with an isr_ev_gpu_status
 * of state ISR_GPU_FLUSHED. The number of bridges asked, or -errno with
 * err filled when none could be. */
int tracer__request_gpu_flush(struct tracer *t, char *err, size_t errlen);
/* Lets the stack walker read pid's interpreter with layout l (validated by
 * py_stacks__setup), or stops it. 0 or -errno. */
int tracer__set_py_layout(struct tracer *t, __u32 pid, const struct isr_py_layout *l);
int tracer__clear_py_layout(struct tracer *t, __u32 pid);
/* Releases the CUDA and Python probes of processes that are no longer
 * targets. */
void tracer__prune_uprobes(struct tracer *t);
/* Waits up to timeout_ms for events and consumes what is there: the number
 * of events consumed or -errno. */
int tracer__poll(struct tracer *t, int timeout_ms);
/* Consumes everything queued, without waiting. */
int tracer__drain(struct tracer *t);
/* Sums the per-CPU drop counters into drops[0 .. ISR_SRC_MAX); the
 * recorder's own source (ISR_SRC_WRITER) is left 0. */
int tracer__read_drops(struct tracer *t, __u64 *drops);
/* Current target pids (including followed children); count or -errno. */
int tracer__targets(struct tracer *t, __u32 *pids, size_t max);
/* One line per attached probe: "sched_switch  tp_btf", ...; one line per
 * process and CUDA library or Python interpreter probed. */
void tracer__describe(const struct tracer *t, FILE *out);
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
