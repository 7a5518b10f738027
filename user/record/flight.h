/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The flight recorder's live checks (record --flight-recorder): cheap tests
 * on the events as they are consumed, each of which may ask for the window
 * to be written. A synchronization (a CUDA call that blocks its thread
 * until the GPU is done, ISR_CUDA_K_SYNC: a synchronous copy too) that
 * took at least sync_ns; a GPU idle stretch: a process's GPU activity
 * starting at least gpu_idle_ns after its previous activity ended (GPU
 * records of the CUPTI bridge, on the GPU's clock); a drop burst: at least
 * drop_burst events lost between two looks at the drop counters. A check
 * with a threshold of 0 is off. Pure functions of the events: no clock is
 * read.
 */
#ifndef INFERSCOPE_FLIGHT_H
#define INFERSCOPE_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"

#define FLIGHT_GPU_PIDS	64	/* processes whose GPU activity the idle check follows */

struct flight_triggers {
	__u64 sync_ns;		/* 0: off */
	__u64 gpu_idle_ns;	/* 0: off */
	__u64 drop_burst;	/* 0: off */
};

struct flight_check {
	struct flight_triggers trig;
	__u64 drops_seen;	/* the drop total at the previous look */
	struct {
		__u32 pid;
		__u64 end;	/* its GPU activity's latest end, GPU clock */
	} gpu[FLIGHT_GPU_PIDS];
	size_t ngpu;
};

void flight_check__init(struct flight_check *fc, const struct flight_triggers *trig, __u64 drops_now);
/* true when the event fires a check; why then says what it saw
 * ("sync: cuStreamSynchronize took 512.0 ms (pid 12, tid 13)"). */
bool flight_check__event(struct flight_check *fc, const struct isr_ev_hdr *h, size_t size, char *why,
			 size_t len);
/* true when drops_total grew by the burst or more since the last look. */
bool flight_check__drops(struct flight_check *fc, __u64 drops_total, char *why, size_t len);

/* The n-th window's file (n from 1) of the recording path base:
 * "run.isr" -> "run.3.isr", "run" -> "run.3". 0, or -ENAMETOOLONG. */
int flight__window_path(const char *base, unsigned int n, char *out, size_t len);

/* Whether err, of writing a window to the file path, says that the name
 * is taken by something the recorder does not write through or over (a
 * symbolic link, a directory, a FIFO or socket: lib/out_file.h): the
 * window goes to the next name (at most FLIGHT_NAME_TRIES names a window),
 * so that one name planted ahead does not lose every later window. */
#define FLIGHT_NAME_TRIES 64
bool flight__name_taken(const char *path, int err);

/* Parses one --trigger value into trig: "sync=MS", "gpu-idle=MS",
 * "drops=N" (0 turns that check off), "none" (every check off). 0, or
 * -EINVAL. */
int flight__parse_trigger(const char *arg, struct flight_triggers *trig);

#endif
