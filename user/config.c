// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "config.h"

void record_config__defaults(struct record_config *c)
{
	memset(c, 0, sizeof(*c));
	c->targets.follow_children = true;
	c->output.zstd_level = DEFAULT_ZSTD_LEVEL;
	c->tracer.ringbuf_bytes = (size_t)DEFAULT_RINGBUF_MIB << 20;
	c->tracer.budget_pct = DEFAULT_BUDGET_PCT;
	c->kernel.page_faults = true;
	c->cuda.enabled = true;
	c->nccl.enabled = true;
	c->python.gil_waits = true;
	c->python.stacks_hz = DEFAULT_PY_STACKS_HZ;
	c->python.launch_every = DEFAULT_PY_LAUNCH_EVERY;
	c->gpu.cupti = true;
	c->gpu.inject = true;
}
