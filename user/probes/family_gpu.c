// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity through the CUPTI bridge (cupti_bridge/,
 * libinferscope_cupti.so): the USDT probe inferscope:gpu_batch of every
 * bridge a target maps (bpf/cupti.bpf.c copies its batches into the ring
 * buffer). With --gpu the bridge is handed to the launched command
 * (CUDA_INJECTION64_PATH) and loaded into -p processes that run CUDA
 * without it (user/inject/bridge.h). At the end every live bridge is asked
 * to flush what CUPTI still holds (USDT inferscope:gpu_flush).
 *
 * A bridge collects only inside a window (cupti_bridge/bridge.c): while
 * the reference counter inferscope_gpu_window_semaphore is raised and
 * inferscope_gpu_close_semaphore is not, each raised by a plain uprobe at
 * inferscope_gpu_window_site that does nothing. --gpu opens one window in
 * every bridge for the whole recording; --gpu-windows opens and closes
 * them as user/record/gpu_windows.h says (a window every --gpu-period, sized to
 * half the overhead budget), CUPTI being detached from the process between
 * them. Attaching a uprobe takes well under a millisecond, releasing one
 * about 100 ms (a grace period): a window closes at once by attaching the
 * close uprobe, and both are released on a thread of their own.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "family.h"
#include "gpu_windows.h"
#include "clock.h"
#include "bridge.h"
#include "cupti.skel.h"

#define FLUSH_WAIT_NS	2000000000ULL	/* for the bridges' last flush */
#define FLUSH_POLL_MS	50
#define MAX_FAILED	16
#define API_SLOTS	1024			/* API records per thread in the open window */
#define SETTLE_POLL_NS	5000000ULL		/* while the last window's uprobes are released */

/* A bridge attached in a process: where its window uprobes go, and the
 * open-window uprobe while a window is open there. */
struct gbridge {
	__u32 pid;
	char path[PATH_MAX + 32];
	struct bridge_window_sites sites;
	struct bpf_link *window;
};

/* Links released on a thread of their own, in the order they came: a
 * uprobe's release waits for a grace period, the recorder's loop should
 * not. */
struct reaper {
	pthread_t thread;
	bool started, stop;
	bool busy;			/* releasing one now */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct bpf_link **links;
	size_t n, cap;
};

struct gpu_family {
	const struct family_ctx *ctx;
	struct cupti_bpf *obj;
	char bridge[PATH_MAX];		/* for the launched command; "" when none */
	unsigned int flushed;		/* ISR_GPU_FLUSHED statuses since the request */
	__u32 failed_pids[MAX_FAILED];	/* bridges whose failure was reported */
	size_t nfailed;
	struct gbridge *br;		/* every bridge attached */
	size_t nbr, br_cap;
	bool open;			/* windows are open now (always with --gpu) */
	bool windowed;			/* --gpu-windows */
	struct gpu_windows w;
	__u64 next_ns;			/* next window decision */
	__u64 counted_since;		/* api_records count from here */
	__u64 api_records[API_SLOTS];	/* by thread; threads that share a slot are counted together */
	bool warned;
	struct reaper reaper;
};

static bool gpu_enabled(const struct record_config *cfg)
{
	return cfg->gpu.cupti;
}

/* Loading the bridge into the targets, not only attaching to it. */
static bool loads_bridge(const struct gpu_family *g)
{
	return g->ctx->cfg->gpu.cupti && record_config__gpu_bridge(g->ctx->cfg);
}

static void *reap(void *arg)
{
	struct reaper *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct bpf_link *l;

		while (!r->n && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->n)
			break;
		l = r->links[0];
		memmove(r->links, r->links + 1, --r->n * sizeof(*r->links));
		r->busy = true;
		pthread_mutex_unlock(&r->lock);
		bpf_link__destroy(l);
		pthread_mutex_lock(&r->lock);
		r->busy = false;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Hands a link to the reaper (released at once when it cannot take it). */
static void release_later(struct reaper *r, struct bpf_link *l)
{
	bool queued = false;

	if (!l)
		return;
	pthread_mutex_lock(&r->lock);
	if (!r->started && !pthread_create(&r->thread, NULL, reap, r))
		r->started = true;
	if (r->started && r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct bpf_link **v = realloc(r->links, cap * sizeof(*v));

		if (v) {
			r->links = v;
			r->cap = cap;
		}
	}
	if (r->started && r->n < r->cap) {
		r->links[r->n++] = l;
		pthread_cond_signal(&r->cond);
		queued = true;
	}
	pthread_mutex_unlock(&r->lock);
	if (!queued)
		bpf_link__destroy(l);
}

/* The uprobes of the last closed window are still being released: a
 * window opened now would open only once they are gone. */
static bool settling(struct reaper *r)
{
	bool busy;

	pthread_mutex_lock(&r->lock);
	busy = r->n > 0 || r->busy;
	pthread_mutex_unlock(&r->lock);
	return busy;
}

static void reaper_stop(struct reaper *r)
{
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (r->started)
		pthread_join(r->thread, NULL);
	free(r->links);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}

static void gpu_free(void *st)
{
	struct gpu_family *g = st;

	if (!g)
		return;
	for (size_t i = 0; i < g->nbr; i++)
		bpf_link__destroy(g->br[i].window);
	reaper_stop(&g->reaper);
	free(g->br);
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
	pthread_mutex_init(&g->reaper.lock, NULL);
	pthread_cond_init(&g->reaper.cond, NULL);
	g->windowed = ctx->cfg->gpu.windows && !ctx->cfg->gpu.all;
	g->open = !g->windowed;
	if (g->windowed) {
		double pct = ctx->cfg->tracer.budget_pct > 0 ? ctx->cfg->tracer.budget_pct : 1.0;

		/* half the budget: the probes have the other half */
		gpu_windows__init(&g->w, pct / 200, GPU_WINDOW_RECORD_COST_NS, (__u64)(ctx->cfg->gpu.period_s * 1e9));
	}
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
 * dlopen, user/inject/bridge.h). 0 once it is mapped there. */
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

/* A uprobe at the bridge's window site with one of its reference counters
 * (ref): raising it takes well under a millisecond. NULL + errno. */
static struct bpf_link *window_uprobe(struct gpu_family *g, const struct gbridge *b, __u64 ref)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = (size_t)ref);

	return bpf_program__attach_uprobe_opts(g->obj->progs.gpu_window_request, (pid_t)b->pid, b->path,
					       (size_t)b->sites.site, &uo);
}

/* Opens a window in bridge b: it collects. 0 or -errno with err filled. */
static int window_open(struct gpu_family *g, struct gbridge *b, char *err, size_t errlen)
{
	int e;

	if (b->window)
		return 0;
	b->window = window_uprobe(g, b, b->sites.window_ref);
	if (b->window)
		return 0;
	e = -errno;
	snprintf(err, errlen, "cannot open a GPU activity window in pid %u (a uprobe on %s): %s", b->pid, b->path,
		 strerror(-e));
	return e;
}

/* Closes it at once (the close counter raised), then releases both
 * uprobes behind the loop's back, the open one first. */
static void window_close(struct gpu_family *g, struct gbridge *b)
{
	struct bpf_link *close_link;

	if (!b->window)
		return;
	close_link = window_uprobe(g, b, b->sites.close_ref);
	if (!close_link) {
		/* the slow way: the window ends when the release does */
		bpf_link__destroy(b->window);
	} else {
		release_later(&g->reaper, b->window);
		release_later(&g->reaper, close_link);
	}
	b->window = NULL;
}

/* Opens or closes the windows of every bridge (a process gone is left
 * alone). 0, or the first error (err filled; the others are switched). */
static int set_windows(struct gpu_family *g, bool open, char *err, size_t errlen)
{
	int first = 0;

	g->open = open;
	for (size_t i = 0; i < g->nbr; i++) {
		struct gbridge *b = &g->br[i];
		int e;

		if (!open) {
			window_close(g, b);
			continue;
		}
		if (kill((pid_t)b->pid, 0))
			continue;
		e = window_open(g, b, first ? NULL : err, first ? 0 : errlen);
		if (e && e != -ESRCH && !first)
			first = e;
	}
	return first;
}

/* A bridge attached in pid (the file at path): known from now on, and
 * collecting at once while windows are open. 0 or -errno with err filled. */
static int track_bridge(struct gpu_family *g, __u32 pid, const char *path, char *err, size_t errlen)
{
	struct gbridge *b;
	int e;

	for (size_t i = 0; i < g->nbr; i++)
		if (g->br[i].pid == pid && strcmp(g->br[i].path, path) == 0)
			return 0;
	if (g->nbr == g->br_cap) {
		size_t cap = g->br_cap ? 2 * g->br_cap : 8;
		struct gbridge *v = realloc(g->br, cap * sizeof(*v));

		if (!v) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		g->br = v;
		g->br_cap = cap;
	}
	b = &g->br[g->nbr];
	memset(b, 0, sizeof(*b));
	b->pid = pid;
	snprintf(b->path, sizeof(b->path), "%s", path);
	e = bridge__window_sites(path, &b->sites);
	if (e) {
		snprintf(err, errlen, "cannot find the window sites of the CUPTI bridge %s: %s", path, strerror(-e));
		return e;
	}
	g->nbr++;
	return g->open ? window_open(g, b, err, errlen) : 0;
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
	if (!e)
		e = track_bridge(g, pid, path, err, errlen);
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
		if (!e)
			e = track_bridge(g, pid, g->bridge, err, sizeof(err));
		if (e)
			fprintf(stderr, "inferscope-bpf: %s (is it a libinferscope_cupti.so of this version?)\n", err);
		return e;
	case PROBE_RESCAN:
		probe_bridge(g, pid, true, false);
		return 0;
	case PROBE_MAPPED:
		/* a bridge it maps now (dormant until attached); one it loads
		 * later holds it */
		probe_bridge(g, pid, false, false);
		return 0;
	default:
		return 0;
	}
}

static __u64 busiest_records(const struct gpu_family *g)
{
	__u64 busiest = 0;

	for (size_t i = 0; i < API_SLOTS; i++)
		if (g->api_records[i] > busiest)
			busiest = g->api_records[i];
	return busiest;
}

/* A closed window's record (the bridge sends it after the window's last
 * record): the busiest thread's API records in it set the next window's
 * length. */
static void window_measured(struct gpu_family *g, const struct isr_ev_gpu_window *w)
{
	if (w->flags & ISR_GPU_WINDOW_OPEN || w->close_ns <= w->open_ns)
		return;
	gpu_windows__measured(&g->w, busiest_records(g), w->close_ns - w->open_ns, w->finalize_ns);
}

/* The bridge's answers: flushes, and failures (told once per process);
 * with --gpu-windows, the API records and windows that size the next. */
static int gpu_on_event(void *st, const struct isr_ev_hdr *h, size_t size)
{
	const struct isr_ev_gpu_status *e = (const void *)h;
	struct gpu_family *g = st;
	size_t i;

	if (g->windowed && h->type == ISR_EV_GPU_API && size >= sizeof(struct isr_ev_gpu_api)) {
		g->api_records[(((const struct isr_ev_gpu_api *)h)->thread_id * 2654435761u) % API_SLOTS]++;
		return 0;
	}
	if (g->windowed && h->type == ISR_EV_GPU_WINDOW && size >= sizeof(struct isr_ev_gpu_window)) {
		window_measured(g, (const void *)h);
		return 0;
	}
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

/* --gpu-windows: opens or closes the windows when user/record/gpu_windows.h says
 * so, and comes back for the next decision. */
static void gpu_tick(void *st, int *poll_ms)
{
	struct gpu_family *g = st;
	char err[PATH_MAX + 256];
	__u64 now = clock__mono_ns();
	bool open;
	int e;

	if (!g->windowed)
		return;
	if (now >= g->next_ns) {
		/* A window planned for the whole period is measured every period. */
		if (g->w.open && g->w.continuous && now >= g->counted_since + g->w.period_ns) {
			gpu_windows__measured(&g->w, busiest_records(g), now - g->counted_since, 0);
			memset(g->api_records, 0, sizeof(g->api_records));
			g->counted_since = now;
		}
		switch (gpu_windows__decide(&g->w, now, &g->next_ns)) {
		case GPU_WINDOW_OPEN:
			/* not before the last window's uprobes are gone */
			if (settling(&g->reaper)) {
				g->next_ns = now + SETTLE_POLL_NS;
				goto wait;
			}
			open = true;
			break;
		case GPU_WINDOW_CLOSE:
			open = false;
			break;
		default:
			goto wait;
		}
		e = set_windows(g, open, err, sizeof(err));
		if (e && !g->warned) {
			fprintf(stderr, "\ninferscope-bpf: %s; GPU activity of that process is not recorded\n", err);
			g->warned = true;
		}
		now = clock__mono_ns();
		gpu_windows__switched(&g->w, open, now);
		if (open) {
			memset(g->api_records, 0, sizeof(g->api_records));
			g->counted_since = now;
		}
		gpu_windows__decide(&g->w, now, &g->next_ns);
	}
wait:
	if (g->next_ns > now && g->next_ns - now < (__u64)*poll_ms * 1000000ULL)
		*poll_ms = (int)((g->next_ns - now + 999999) / 1000000);
	else if (g->next_ns <= now)
		*poll_ms = 0;
}

/* Every live bridge flushes what CUPTI holds; waits up to FLUSH_WAIT_NS
 * for their answers, consuming events meanwhile. */
static void gpu_final_flush(void *st)
{
	struct gpu_family *g = st;
	char err[PATH_MAX + 256];
	__u64 end;
	int n;

	if (g->windowed && g->w.windows && !g->ctx->cfg->quiet)
		fprintf(stderr, "inferscope-bpf: GPU activity was collected in %llu windows, one every %.1f s (CUPTI "
			"detached between them); --gpu collects all of it\n", (unsigned long long)g->w.windows,
			g->w.period_ns / 1e9);
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

static const char *const gpu_hold_libs[] = { "libinferscope_cupti", NULL };

const struct probe_family family_gpu = {
	.name = "gpu",
	.hold_libs = gpu_hold_libs,
	.enabled = gpu_enabled,
	.open = gpu_open,
	.prepare = gpu_prepare,
	.probe_process = gpu_probe_process,
	.on_event = gpu_on_event,
	.tick = gpu_tick,
	.final_flush = gpu_final_flush,
	.free = gpu_free,
};
