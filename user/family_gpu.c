// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity through the CUPTI bridge (cupti_bridge/,
 * libinferscope_cupti.so): the USDT probe inferscope:gpu_batch of every
 * bridge a target maps (bpf/cupti.bpf.c copies its batches into the ring
 * buffer). With --gpu the bridge is handed to the launched command
 * (CUDA_INJECTION64_PATH) and loaded into -p processes that run CUDA
 * without it (user/bridge.h). At the end every live bridge is asked
 * to flush what CUPTI still holds (USDT inferscope:gpu_flush).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "family.h"
#include "clock.h"
#include "bridge.h"
#include "bridge.h"
#include "cupti.skel.h"

#define FLUSH_WAIT_NS	2000000000ULL	/* for the bridges' last flush */
#define FLUSH_POLL_MS	50
#define MAX_FAILED	16

struct gpu_family {
	const struct family_ctx *ctx;
	struct cupti_bpf *obj;
	char bridge[PATH_MAX];		/* for the launched command; "" when none */
	unsigned int flushed;		/* ISR_GPU_FLUSHED statuses since the request */
	__u32 failed_pids[MAX_FAILED];	/* bridges whose failure was reported */
	size_t nfailed;
};

static bool gpu_enabled(const struct record_config *cfg)
{
	return cfg->gpu.cupti;
}

/* Loading the bridge into the targets, not only attaching to it. */
static bool loads_bridge(const struct gpu_family *g)
{
	return g->ctx->cfg->gpu.cupti && g->ctx->cfg->gpu.load_bridge;
}

static void gpu_free(void *st)
{
	struct gpu_family *g = st;

	if (!g)
		return;
	cupti_bpf__destroy(g->obj);
	free(g);
}

static void *gpu_open(const struct family_ctx *ctx, char *err, size_t errlen)
{
	struct gpu_family *g = calloc(1, sizeof(*g));
	int e;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->ctx = ctx;
	g->obj = cupti_bpf__open();
	e = tracer__load(ctx->t, g->obj ? g->obj->skeleton : NULL, "GPU activity (CUPTI bridge)", "--no-cupti", err,
			 errlen);
	if (e) {
		gpu_free(g);
		errno = -e;
		return NULL;
	}
	return g;
}

static const char *bridge_named(const struct record_config *cfg)
{
	return cfg->gpu.bridge_path ? cfg->gpu.bridge_path : BRIDGE_NAME " next to inferscope-bpf";
}

/* The bridge a launched command will load, or none (said why). */
static int gpu_prepare(void *st, struct launch_env *env)
{
	struct gpu_family *g = st;
	const struct record_config *cfg = g->ctx->cfg;
	const char *preset = getenv("CUDA_INJECTION64_PATH");
	int e;

	if (!loads_bridge(g) || !cfg->targets.command)
		return 0;
	if (preset && *preset) {
		fprintf(stderr, "inferscope-bpf: CUDA_INJECTION64_PATH is already set (%s): %s keeps it, so GPU activity "
			"is recorded only if that is the CUPTI bridge\n", preset, cfg->targets.command[0]);
		return 0;
	}
	e = bridge__locate(cfg->gpu.bridge_path, g->bridge, sizeof(g->bridge));
	if (e) {
		g->bridge[0] = 0;
		fprintf(stderr, "inferscope-bpf: cannot use the CUPTI bridge %s: %s; GPU activity (kernels, copies on "
			"the GPU) is not recorded (give its path with --cupti-bridge, or --no-cupti)\n",
			bridge_named(cfg), strerror(-e));
		return 0;
	}
	if (env->n < LAUNCH_ENV_MAX) {
		env->name[env->n] = "CUDA_INJECTION64_PATH";
		env->value[env->n] = g->bridge;
		env->n++;
	}
	return 0;
}

/* A -p process that runs CUDA without the bridge: load it (ptrace and
 * dlopen, user/bridge.h). 0 once it is mapped there. */
static int inject(struct gpu_family *g, __u32 pid)
{
	char bridge[PATH_MAX], err[PATH_MAX + 256];
	__u64 t0 = clock__mono_ns();
	int e;

	e = bridge__locate(g->ctx->cfg->gpu.bridge_path, bridge, sizeof(bridge));
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot use the CUPTI bridge %s: %s; GPU activity of pid %u is not "
			"recorded (give its path with --cupti-bridge, or --no-cupti)\n", bridge_named(g->ctx->cfg),
			strerror(-e), pid);
		return e;
	}
	e = bridge__inject((pid_t)pid, bridge, err, sizeof(err));
	if (e) {
		if (e != -ESRCH && e != -ENODEV)	/* CPU only: said already */
			fprintf(stderr, "inferscope-bpf: %s; GPU activity of pid %u is not recorded (CUDA calls "
				"are; --no-inject skips this step)\n", err, pid);
		return e;
	}
	if (g->ctx->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: CUPTI bridge loaded into the running process in %.1f ms\n",
			pid, (clock__mono_ns() - t0) / 1e6);
	return 0;
}

/* Attaches to the bridge that pid maps: 1 attached now, 2 attached before,
 * 0 it maps none, or -errno with err filled (-ESRCH: pid is gone). */
static int attach_if_mapped(struct gpu_family *g, __u32 pid, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	int e = bridge__mapped(pid, path, sizeof(path));

	if (e <= 0)
		return e;
	e = tracer__attach_usdt(g->ctx->t, "cupti bridge", pid, path, g->obj->progs.gpu_batch, "inferscope",
				"gpu_batch", err, errlen);
	if (e == -EALREADY)
		return 2;
	return e ? e : 1;
}

/* Attaches to the bridge pid maps, if it does (after loading it there with
 * try_inject). late: it was found by the rescan (injected, or loaded with
 * dlopen), say so. */
static void probe_bridge(struct gpu_family *g, __u32 pid, bool late, bool try_inject)
{
	char err[PATH_MAX + 256];
	int e = attach_if_mapped(g, pid, err, sizeof(err));

	if (e == 0 && try_inject && loads_bridge(g) && g->ctx->cfg->gpu.inject && !inject(g, pid))
		e = attach_if_mapped(g, pid, err, sizeof(err));
	if (e < 0 && e != -ESRCH)
		fprintf(stderr, "inferscope-bpf: %s (is it a libinferscope_cupti.so of this version?); GPU activity of "
			"pid %u is not recorded\n", err, pid);
	else if (e == 1 && (late || g->ctx->cfg->verbose))
		fprintf(stderr, "inferscope-bpf: pid %u: CUPTI bridge attached%s\n", pid,
			late ? " (it was loaded after tracing began)" : "");
}

static int gpu_probe_process(void *st, __u32 pid, enum probe_when when)
{
	struct gpu_family *g = st;
	char err[PATH_MAX + 256];
	int e;

	switch (when) {
	case PROBE_AT_START:
		probe_bridge(g, pid, false, true);
		return 0;
	case PROBE_BEFORE_EXEC:
		/* Not exec'd yet: live once the command maps the bridge. */
		if (!g->bridge[0])
			return 0;
		e = tracer__attach_usdt(g->ctx->t, "cupti bridge", pid, g->bridge, g->obj->progs.gpu_batch,
					"inferscope", "gpu_batch", err, sizeof(err));
		if (e)
			fprintf(stderr, "inferscope-bpf: %s (is it a libinferscope_cupti.so of this version?)\n", err);
		return e;
	case PROBE_RESCAN:
		probe_bridge(g, pid, true, false);
		return 0;
	default:
		return 0;
	}
}

/* The bridge's answers: flushes, and failures (told once per process). */
static int gpu_on_event(void *st, const struct isr_ev_hdr *h, size_t size)
{
	const struct isr_ev_gpu_status *e = (const void *)h;
	struct gpu_family *g = st;
	size_t i;

	if (h->type != ISR_EV_GPU_STATUS || size < sizeof(*e))
		return 0;
	if (e->state == ISR_GPU_FLUSHED) {
		g->flushed++;
		return 0;
	}
	if (e->state != ISR_GPU_FAILED)
		return 0;
	for (i = 0; i < g->nfailed; i++)
		if (g->failed_pids[i] == e->hdr.pid)
			return 0;
	if (g->nfailed < MAX_FAILED)
		g->failed_pids[g->nfailed++] = e->hdr.pid;
	if (e->cupti_error < 0)
		fprintf(stderr, "inferscope-bpf: pid %u: the CUPTI bridge found no libcupti.so.13: no GPU activity "
			"from it (driver-level CUDA tracing goes on); start it with INFERSCOPE_CUPTI_LIB=PATH\n",
			e->hdr.pid);
	else
		fprintf(stderr, "inferscope-bpf: pid %u: CUPTI refused the bridge (CUptiResult %d; another CUPTI "
			"client such as a profiler may hold it): no GPU activity from it (driver-level CUDA "
			"tracing goes on)\n", e->hdr.pid, e->cupti_error);
	return 0;
}

/* Every live bridge flushes what CUPTI holds; waits up to FLUSH_WAIT_NS
 * for their answers, consuming events meanwhile. */
static void gpu_final_flush(void *st)
{
	struct gpu_family *g = st;
	char err[PATH_MAX + 256];
	__u64 end;
	int n;

	g->flushed = 0;
	n = tracer__add_usdt_each(g->ctx->t, "cupti bridge", g->obj->progs.gpu_flush_request, "inferscope",
				  "gpu_flush", err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "inferscope-bpf: %s; GPU activity of its last second may be missing\n", err);
	if (n <= 0)
		return;
	end = clock__mono_ns() + FLUSH_WAIT_NS;
	while (g->flushed < (unsigned int)n && clock__mono_ns() < end)
		if (tracer__poll(g->ctx->t, FLUSH_POLL_MS) < 0)
			break;
	if (g->flushed < (unsigned int)n)
		fprintf(stderr, "inferscope-bpf: %u of %d CUPTI bridges did not flush within %.1f s: GPU activity of "
			"their last second may be missing\n", n - g->flushed, n, FLUSH_WAIT_NS / 1e9);
}

const struct probe_family family_gpu = {
	.name = "gpu",
	.enabled = gpu_enabled,
	.open = gpu_open,
	.prepare = gpu_prepare,
	.probe_process = gpu_probe_process,
	.on_event = gpu_on_event,
	.final_flush = gpu_final_flush,
	.free = gpu_free,
};
