/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU part of the summary (summary.h states the definitions): filled in
 * by summary__compute, freed by summary__free. Pure.
 */
#ifndef INFERSCOPE_GPU_SUMMARY_H
#define INFERSCOPE_GPU_SUMMARY_H

#include "summary.h"

/* Fills s->gpu* from r's events (sorted); s->start_ns/end_ns are set. 0 or
 * -ENOMEM. */
int gpu_summary__compute(const struct recording *r, struct summary *s);
void gpu_summary__free(struct summary *s);

/* Whether a CUPTI API record (ISR_GPU_API_*, callback id) is a launch
 * call: its correlation id is that of the kernels it started. */
bool gpu_launch_cbid(__u16 api, __u32 cbid);

#endif
