/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One recording: checks, target set-up (attach to pids or launch a command),
 * the consume-and-write loop with its status line, and a clean finish. The
 * promise: whatever stops the recording (duration, Ctrl-C, targets exiting,
 * a full disk, SIGKILL), the file reads back up to its last complete chunk,
 * and every event that could not be kept is counted in it.
 */
#ifndef INFERSCOPE_RECORDER_H
#define INFERSCOPE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct record_opts {
	const char *output;
	__u64 duration_ns;		/* 0: until Ctrl-C or the targets exit */
	const __u32 *pids;
	size_t pid_count;
	char **command;			/* NULL-terminated argv to launch, or NULL */
	size_t ringbuf_bytes;
	bool follow_children;
	bool faults;
	bool cuda;			/* probe the CUDA driver API (libcuda) of the targets */
	const char *const *cuda_libs;	/* --cuda-lib: more libcuda files to probe in every target */
	size_t cuda_lib_count;
	bool python;			/* probe the GIL of CPython 3.10-3.13 targets */
	double budget_pct;		/* overhead budget in % of a thread's time; 0: none */
	bool legacy_uprobes;		/* perf-event uprobes even where uprobe_multi exists */
	bool gpu;			/* GPU activity through the CUPTI bridge (libinferscope_cupti.so) */
	const char *cupti_bridge;	/* --cupti-bridge: the bridge a launched command loads; NULL: next to us */
	bool gpu_start;			/* --gpu: hand the bridge to a launched command, load it into -p processes */
	bool inject;			/* with gpu_start: load it into -p processes that run CUDA without it */
	unsigned int py_stacks_hz;	/* sampled Python stacks per second (0: no Python stacks) */
	unsigned int py_launch_every;	/* Python stack of every Nth CUDA launch per CPU (0: none) */
	bool verbose;
	bool quiet;			/* no status line or banners */
	const char *ready_file;		/* created once probes are live */
	int zstd_level;
	int argc;			/* the recorder's own command line, stored in the file */
	char **argv;
};

struct record_result {
	__u64 events;
	__u64 drops_total;
	__u32 stop_reason;		/* ISR_STOP_* */
	bool command_exited;
	bool command_stopped;		/* it outlived the recording: the recorder stopped it */
	int command_status;		/* wait status of the launched command */
};

/* 0, or -errno after printing what went wrong and what to do. */
int record__run(const struct record_opts *opts, struct record_result *res);

/* --list-probes: prints, for each target pid, for the command to launch
 * (its candidate libcuda files; it is not started) and for each --cuda-lib,
 * the CUDA probe site chosen for every function, and for each target pid
 * its Python interpreter's GIL probe sites, without recording or loading
 * BPF. 0, or -errno after printing what went wrong. */
int record__list_probes(const struct record_opts *opts);

#endif
