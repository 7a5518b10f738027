/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a recording is asked to do: one struct, in sections that name what
 * they configure. The CLI fills it (user/cli/main.c); every part of the
 * recorder reads its own section and nothing else describes an option.
 * A configuration source (a file, the environment) fills the same struct
 * in the same way: start from record_config__defaults() and set fields.
 */
#ifndef INFERSCOPE_CONFIG_H
#define INFERSCOPE_CONFIG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"
#include "flight.h"
#include "out_file.h"
#include "run_as.h"

#define CONFIG_MAX_PIDS		ISR_MAX_TARGETS
#define CONFIG_MAX_CUDA_LIBS	8

#define DEFAULT_RINGBUF_MIB		32
#define MAX_RINGBUF_MIB			2048	/* the kernel counts a ring buffer's bytes in 32 bits */
#define DEFAULT_BUDGET_PCT		1.0
#define DEFAULT_PY_STACKS_HZ		99
#define DEFAULT_PY_LAUNCH_EVERY		64	/* CUDA launches per Python stack, per CPU */
#define DEFAULT_ZSTD_LEVEL		1
#define DEFAULT_FLIGHT_MIB		64
#define DEFAULT_FLIGHT_SYNC_MS		1000
#define DEFAULT_FLIGHT_DROP_BURST	1000

/* Sees the recording as it goes (`top`): every event written, and after
 * each poll of the ring buffers a tick that may stop the recording. */
struct record_live {
	void *ctx;
	void (*event)(void *ctx, const struct isr_ev_hdr *h, size_t size);
	/* true: stop now (recorded as a stop by signal) */
	bool (*tick)(void *ctx, __u64 now_ns);
};

struct record_config {
	struct {			/* what is traced */
		__u32 pids[CONFIG_MAX_PIDS];	/* -p: running processes */
		size_t pid_count;
		char **command;		/* -- CMD: NULL-terminated argv to launch, or NULL */
		bool follow_children;	/* the -p processes' running descendants and the processes
					 * the targets start, too (--no-follow: false) */
		__u64 duration_ns;	/* -d; 0: until Ctrl-C or the targets exit */
		enum run_as_mode run_as; /* who the command runs as: under sudo the invoking user (--run-as-root, --user) */
		const char *run_as_user; /* --user: NAME or UID[:GID] */
	} targets;
	struct {			/* the recording */
		const char *path;	/* -o */
		int zstd_level;		/* --compress-level; 0: stored uncompressed */
		const char *ready_file;	/* --ready-file: created once the probes are live */
		struct out_file_share share; /* --group: who may read the outputs besides root (zero: nobody) */
		int argc;		/* the recorder's own command line, kept in the file */
		char **argv;
	} output;
	struct {			/* the loader */
		size_t ringbuf_bytes;	/* --ringbuf-size, in bytes: a power of two */
		bool legacy_uprobes;	/* --legacy-uprobes: one perf-event uprobe per site */
		double budget_pct;	/* --budget: overhead budget, % of a thread's time; 0: none */
	} tracer;
	struct {			/* kernel tracepoints beyond the scheduler's */
		bool page_faults;	/* page faults and direct reclaim (--no-faults: false) */
	} kernel;
	struct {			/* the CUDA driver API (libcuda) */
		bool enabled;		/* --no-cuda: false */
		const char *libs[CONFIG_MAX_CUDA_LIBS];	/* --cuda-lib: more libcuda files, probed in every target */
		size_t lib_count;
	} cuda;
	struct {			/* NCCL (libnccl.so*): collectives, point-to-point and group calls, communicators */
		bool enabled;		/* --no-nccl: false */
		const char *libs[CONFIG_MAX_CUDA_LIBS];	/* --nccl-lib: more libnccl files, probed in every target */
		size_t lib_count;
	} nccl;
	struct {			/* CPython 3.10-3.13 */
		bool gil;		/* --gil: GIL waits and holds, exactly (uprobes on libpython) */
		bool gil_waits;		/* GIL waits and their holders, from the scheduler (--no-gil-waits: false) */
		unsigned int stacks_hz;	/* --py-stacks: stack samples per second and thread on CPU; 0: no stacks */
		unsigned int launch_every; /* --py-launch-every: the stack of every Nth CUDA launch per CPU; 0: none */
	} python;
	struct {			/* NVTX ranges and marks (libnvToolsExt) */
		bool enabled;		/* --no-nvtx: false */
	} nvtx;
	struct {			/* GPU activity through the CUPTI bridge (libinferscope_cupti.so) */
		bool cupti;		/* record it from bridges the targets load (--no-cupti: false) */
		bool all;		/* --gpu: collect all GPU activity (it wins over --gpu-windows) */
		bool windows;		/* --gpu-windows: collect it in windows within the budget */
		double period_s;	/* --gpu-period: a window every this long */
		bool inject;		/* with either: load the bridge into running -p processes (--no-inject: false) */
		const char *bridge_path; /* --cupti-bridge; NULL: the one next to this executable */
	} gpu;
	struct {			/* --flight-recorder: the last seconds in memory, written when triggered */
		__u64 window_ns;	/* --flight-recorder SEC; 0: off, a recording written as it goes */
		size_t max_bytes;	/* --flight-memory: the ring's memory cap */
		struct flight_triggers trig;	/* --trigger: the live checks */
	} flight;
	const struct record_live *live;	/* NULL, or what sees the events live (top) */
	struct {			/* a caller that runs recordings one after another (the daemon) */
		/* NULL: SIGINT, SIGTERM and SIGHUP stop the recording (the
		 * recorder handles them). Otherwise the caller handles signals
		 * and the recording stops once *stop is non-zero. */
		volatile sig_atomic_t *stop;
		void (*tick)(void *ctx);	/* called between the set-up's steps, then once a second */
		void *ctx;
	} control;
	bool verbose;			/* -v */
	bool quiet;			/* -q: no status line or banners */
};

/* The values used where nothing sets them. */
void record_config__defaults(struct record_config *c);

/* --gpu or --gpu-windows: the bridge goes to the launched command and into
 * -p processes. */
static inline bool record_config__gpu_bridge(const struct record_config *c)
{
	return c->gpu.all || c->gpu.windows;
}

#endif
