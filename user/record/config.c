// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "config.h"
#include "gpu_windows.h"

void record_config__defaults(struct record_config *c)
{
	memset(c, 0, sizeof(*c));
	c->targets.follow_children = true;
	c->output.zstd_level = DEFAULT_ZSTD_LEVEL;
	c->tracer.ringbuf_bytes = (size_t)DEFAULT_RINGBUF_MIB << 20;
	c->tracer.budget_pct = DEFAULT_BUDGET_PCT;
	c->kernel.page_faults = true;
	c->cuda.enabled = true;
	c->nvtx.enabled = true;
	c->nccl.enabled = true;
	c->python.gil_waits = true;
	c->python.stacks_hz = DEFAULT_PY_STACKS_HZ;
	c->python.launch_every = DEFAULT_PY_LAUNCH_EVERY;
	c->gpu.cupti = true;
	c->gpu.inject = true;
	c->gpu.period_s = GPU_WINDOW_PERIOD_NS / 1e9;
	c->flight.max_bytes = (size_t)DEFAULT_FLIGHT_MIB << 20;
	c->flight.trig.sync_ns = DEFAULT_FLIGHT_SYNC_MS * 1000000ULL;
	c->flight.trig.drop_burst = DEFAULT_FLIGHT_DROP_BURST;
}
