/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the flight recorder's ring (record --flight-recorder, ring mode of
 * user/record/rec_writer.h) costs: a stream of recorder-like events (a CUDA launch
 * and a context switch in turn, their times on a simulated clock) at a
 * given rate through the ring with a given window, sealed and trimmed at
 * the recorder's cadence, for a simulated minute; then one window written.
 * Measured: the ring's memory once it holds a full window, the CPU time per
 * event and per second of recording at that rate (this thread's CPU
 * clock), and the time to write a window. No root, no BPF.
 */
#ifndef INFERSCOPE_BENCH_FLIGHT_H
#define INFERSCOPE_BENCH_FLIGHT_H

#include <jansson.h>

/* One result object per rate, or NULL (message printed). Window files go
 * to dir and are removed. */
json_t *bench_flight__run(const char *dir);

#endif
