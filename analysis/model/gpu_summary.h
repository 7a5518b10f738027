/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU part of the summary (summary.h states the definitions and owns
 * the tables): a builder of its own, fed the same events as the summary's
 * and finished after it (it reads the summary's threads and sampling);
 * the tables are freed by summary__free. Pure.
 */
#ifndef INFERSCOPE_GPU_SUMMARY_H
#define INFERSCOPE_GPU_SUMMARY_H

#include "summary.h"
#include "pass.h"

/* A launch waits this long for its kernel to start (the GPU's queue); a
 * kernel that starts later is not joined to it (here and in nccl.h). */
#define GPU_JOIN_HORIZON_NS 10000000000ull

/* The GPU part of the summary of the events fed, in pass order (p's fits
 * map GPU times). NULL when out of memory. */
struct gpu_builder;
struct gpu_builder *gpu_builder__new(const struct pass *p);
/* 0 or -ENOMEM. */
int gpu_builder__event(struct gpu_builder *b, const struct pass_event *e);
/* Fills s->gpu* (s->start_ns/end_ns and s->sampling are set; sb, the
 * sampling of the same events, tells when the hot path was probed). 0 or
 * -ENOMEM. */
int gpu_builder__finish(struct gpu_builder *b, struct summary *s, const struct sampling_builder *sb);
void gpu_builder__free(struct gpu_builder *b);

/* Whether a CUPTI API record (ISR_GPU_API_*, callback id) is a launch
 * call: its correlation id is that of the kernels it started. */
bool gpu_launch_cbid(__u16 api, __u32 cbid);
/* Whether an API record of that kind and callback id puts work on the GPU:
 * a launch, a copy or a memset (CUPTI's callback ids of cudaMemcpy*,
 * cudaMemset*, cuMemcpy*, cuMemset*, which CUPTI only ever appends to). */
bool gpu_work_cbid(__u16 api, __u32 cbid);
/* Whether it is a graph launch: the kernels of the graph share its id. */
bool gpu_graph_cbid(__u16 api, __u32 cbid);

#endif
