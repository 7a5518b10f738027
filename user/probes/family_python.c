// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython 3.10-3.13 (user/probes/py_libs.h finds the interpreters): the GIL waits
 * the scheduler sees (on by default: the scheduler's sched_switch program
 * keeps the target threads that block on their interpreter's GIL,
 * bpf/gil_wait.bpf.h, once this family gave it the GIL's place), the
 * GIL exactly (--gil: uprobes on PyEval_RestoreThread, entry and return,
 * and PyEval_SaveThread, bpf/python.bpf.c) and the Python stacks (sampled
 * by a CPU-clock perf event on every CPU, bpf/py_stacks.bpf.c, and taken
 * at CUDA calls by bpf/cuda.bpf.c with the same walker, whose maps this
 * family shares). A process's stacks are captured, and its GIL waits
 * traced, once its interpreter's layout is checked (user/probes/py_stacks.h,
 * user/probes/py_gil.h); one that is not initialized yet is asked again soon, and
 * a new image that maps no interpreter yet is watched for one for a while.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "family.h"
#include "clock.h"
#include "htab.h"
#include "proc.h"
#include "py_gil.h"
#include "py_libs.h"
#include "py_stacks.h"
#include "python.skel.h"
#include "py_stacks.skel.h"

#define MAX_WAITING	64
#define WAIT_POLL_MS	5	/* while an interpreter is not initialized or not loaded yet */
#define FRESH_NS	3000000000ULL	/* how long a new image is watched for a libpython */
#define WAIT_LIMIT_NS	10000000000ULL	/* how long an interpreter may stay not ready */

struct python_family {
	const struct family_ctx *ctx;
	struct python_bpf *gil;		/* --gil */
	int gils_fd;			/* the scheduler object's py_gils; -1: --no-gil-waits */
	struct py_stacks_bpf *sampler;	/* --py-stacks */
	struct cpu_links samples;
	struct py_libs *libs;
	const struct py_lib *described[PY_MAX_LIBS];	/* site lists already printed (-v) */
	size_t ndescribed;
	struct py_stacks *stacks;	/* NULL without stacks */
	struct htab decided;		/* processes whose stack status is written */
	struct htab gil_decided;	/* processes whose GIL status is written */
	struct py_mapping waiting[MAX_WAITING];	/* interpreters not initialized yet */
	__u32 waiting_pid[MAX_WAITING];
	__u64 waiting_since[MAX_WAITING];
	size_t nwaiting;
	__u32 fresh_pid[MAX_WAITING];	/* new images that map no interpreter yet */
	__u64 fresh_until[MAX_WAITING];
	size_t nfresh;
};

static bool python_enabled(const struct record_config *cfg)
{
	return cfg->python.gil || cfg->python.gil_waits || cfg->python.stacks_hz;
}

static void python_free(void *st)
{
	struct python_family *p = st;

	if (!p)
		return;
	cpu_links__free(&p->samples);
	py_stacks__free(p->stacks);
	py_libs__free(p->libs);
	htab__free(&p->decided);
	htab__free(&p->gil_decided);
	python_bpf__destroy(p->gil);
	py_stacks_bpf__destroy(p->sampler);
	free(p);
}

/* The stack walker's maps (bpf/py_stacks.bpf.h), which the CUDA programs
 * share to take stacks at CUDA calls. */
static const char *const walker_maps[] = { "py_procs", "py_tstates", "py_scratch" };

static void *python_open(const struct family_ctx *ctx, char *err, size_t errlen)
{
	const struct record_config *cfg = ctx->cfg;
	struct python_family *p = calloc(1, sizeof(*p));
	int e = 0;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->ctx = ctx;
	p->gils_fd = -1;
	if (cfg->python.stacks_hz) {
		p->sampler = py_stacks_bpf__open();
		if (p->sampler)
			p->sampler->rodata->task_fsbase_offset = tracer__task_fsbase_offset(ctx->t);
		e = tracer__load(ctx->t, p->sampler ? p->sampler->skeleton : NULL, "Python stack", "--no-py-stacks",
				 err, errlen);
		e = e ?: tracer__share_maps(ctx->t, p->sampler->obj, walker_maps,
					    sizeof(walker_maps) / sizeof(walker_maps[0]));
		if (!e && !(p->stacks = py_stacks__new())) {
			e = -errno;
			snprintf(err, errlen, "cannot set up Python stacks: %s", strerror(-e));
		}
	}
	if (!e && cfg->python.gil_waits) {
		p->gils_fd = tracer__map_fd(ctx->t, "py_gils");
		if (p->gils_fd < 0) {
			e = p->gils_fd;
			snprintf(err, errlen, "the scheduler's BPF object has no map py_gils: %s (--no-gil-waits "
				 "traces without GIL waits)", strerror(-e));
		}
	}
	if (!e && cfg->python.gil) {
		p->gil = python_bpf__open();
		if (p->gil)
			tracer__use_uprobe_multi(ctx->t, p->gil->obj);
		e = tracer__load(ctx->t, p->gil ? p->gil->skeleton : NULL, "Python", "--gil", err, errlen);
	}
	if (!e && !(p->libs = py_libs__new())) {
		e = -errno;
		snprintf(err, errlen, "cannot set up the ELF reader for Python: %s", strerror(-e));
	}
	htab__init(&p->decided, sizeof(struct htab_u64), htab_u64__hash, htab_u64__equal);
	htab__init(&p->gil_decided, sizeof(struct htab_u64), htab_u64__hash, htab_u64__equal);
	if (e) {
		python_free(p);
		errno = -e;
		return NULL;
	}
	return p;
}

/* One CPU-clock perf event per CPU, sampling every 1/hz s of CPU time. */
static int py_libs(void *st, char *err, size_t errlen)
{
	struct python_family *p = st;

	if (!p->sampler)
		return 0;
	return tracer__attach_cpu_event(p->sampler->progs.py_sample, PERF_COUNT_SW_CPU_CLOCK,
					1000000000ULL / p->ctx->cfg->python.stacks_hz,
					"CPU-clock (Python stacks)", "--no-py-stacks", &p->samples, err, errlen);
}

#define TICK_PERIOD_NS	50000ULL	/* the measurement's sampler: 20 kHz */
#define TICK_OP_NS	200000ULL	/* CPU work per timed op: about 4 ticks */

/* The sampler's program on a CPU-clock event of this thread alone. */
struct tick_probe {
	struct bpf_program *prog;
	struct bpf_link *link;
	unsigned long spin;
};

static int tick_set(void *arg, bool on)
{
	struct tick_probe *s = arg;
	struct perf_event_attr attr;
	int fd;

	if (!on) {
		bpf_link__destroy(s->link);
		s->link = NULL;
		return 0;
	}
	if (s->link)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = TICK_PERIOD_NS;
	fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	s->link = bpf_program__attach_perf_event(s->prog, fd);
	if (!s->link) {
		int e = -errno;

		close(fd);
		return e;
	}
	return 0;
}

static void tick_op(void *arg)
{
	budget_cost__spin(((struct tick_probe *)arg)->spin);
}

/* What a tick of the sampler costs a target thread that runs no Python
 * (a Python thread's capture is charged from its event): CPU work with
 * and without a 10 kHz sampler of this thread running the same program,
 * this process a target meanwhile. */
static int python_measure_costs(void *st, struct tracer_costs *c, char *err, size_t errlen)
{
	struct python_family *p = st;
	struct tick_probe tick = { NULL, NULL, 0 };
	/* 200 us of work is preempted often on a busy host: the fastest half */
	struct cost_ab ab = { tick_op, tick_set, &tick, 10, 4, 0, 0.5, false };
	double per_op;
	int e;

	if (!p->sampler)
		return 0;
	tick.prog = p->sampler->progs.py_sample;
	tick.spin = budget_cost__spin_calibrate(TICK_OP_NS);
	e = budget_cost__ab(&ab, &per_op);
	if (e) {
		snprintf(err, errlen, "cannot measure what a tick of the Python stack sampler costs: %s", strerror(-e));
		return e;
	}
	c->tick_ns = per_op * TICK_PERIOD_NS / TICK_OP_NS;
	c->tick_hz = p->ctx->cfg->python.stacks_hz;
	return 0;
}

static void unwait(struct python_family *p, size_t i)
{
	p->nwaiting--;
	p->waiting[i] = p->waiting[p->nwaiting];
	p->waiting_pid[i] = p->waiting_pid[p->nwaiting];
	p->waiting_since[i] = p->waiting_since[p->nwaiting];
}

static void unfresh(struct python_family *p, size_t i)
{
	p->nfresh--;
	p->fresh_pid[i] = p->fresh_pid[p->nfresh];
	p->fresh_until[i] = p->fresh_until[p->nfresh];
}

/* A process exec'd: what was learned of its interpreter is void. */
static void python_on_new_process(void *st, __u32 pid, __u32 origin)
{
	struct python_family *p = st;
	__u64 v;
	size_t i;

	if (origin != ISR_ORIGIN_EXEC)
		return;
	if (p->stacks)
		py_stacks__forget(p->stacks, pid);
	if (p->sampler)
		bpf_map_delete_elem(bpf_map__fd(p->sampler->maps.py_procs), &pid);
	if (p->gils_fd >= 0)
		bpf_map_delete_elem(p->gils_fd, &pid);
	htab_u64__take(&p->decided, pid, &v);
	htab_u64__take(&p->gil_decided, pid, &v);
	for (i = 0; i < p->nwaiting; i++) {
		if (p->waiting_pid[i] == pid) {
			unwait(p, i);
			break;
		}
	}
	for (i = 0; i < p->nfresh; i++) {
		if (p->fresh_pid[i] == pid) {
			unfresh(p, i);
			break;
		}
	}
}

/* Validates the interpreter of pid at m and starts its stack capture, or
 * says why not (once per process, in the recording and on stderr). True
 * when the interpreter is not initialized yet: ask again. */
static bool stacks_start(struct python_family *p, __u32 pid, const struct py_mapping *m)
{
	struct isr_ev_py_status status;
	struct isr_py_layout layout;
	__u64 v;
	int e;

	if (!p->stacks || htab_u64__get(&p->decided, pid, &v))
		return false;
	e = py_stacks__setup(p->stacks, pid, m, &layout, &status);
	if (e == -EAGAIN)
		return true;
	if (e == -ESRCH)
		return false;
	if (e == 0 && bpf_map_update_elem(bpf_map__fd(p->sampler->maps.py_procs), &pid, &layout, BPF_ANY)) {
		status.status = ISR_PY_STATUS_UNSUPPORTED;
		snprintf(status.detail, sizeof(status.detail), "the stack walker's map refused pid %u: %s", pid,
			 strerror(errno));
	}
	if (status.status != ISR_PY_STATUS_SAMPLING)
		fprintf(stderr, "inferscope-bpf: pid %u: %s: %s; its Python stacks are not captured\n", pid, m->file,
			status.detail);
	else if (p->ctx->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: Python stacks captured (%s)\n", pid, status.detail);
	/* Asked again at the next rescan when it cannot be remembered. */
	htab_u64__put(&p->decided, pid, 1);
	p->ctx->emit(p->ctx->emit_ctx, &status, sizeof(status));
	return false;
}

/* Finds the GIL of the interpreter of pid at m and starts tracing its
 * waits, or says why not (once per process, in the recording and on
 * stderr). True when the interpreter is not initialized yet. */
static bool gil_start(struct python_family *p, __u32 pid, const struct py_mapping *m)
{
	struct isr_ev_py_status status;
	struct isr_py_gil gil;
	__u64 v;
	int e;

	if (p->gils_fd < 0 || htab_u64__get(&p->gil_decided, pid, &v))
		return false;
	e = py_gil__setup(pid, m, &gil, &status);
	if (e == -EAGAIN)
		return true;
	if (e == -ESRCH)
		return false;
	if (e == 0 && bpf_map_update_elem(p->gils_fd, &pid, &gil, BPF_ANY)) {
		status.status = ISR_PY_STATUS_UNSUPPORTED;
		snprintf(status.detail, sizeof(status.detail), "the GIL waits' map refused pid %u: %s", pid,
			 strerror(errno));
	}
	if (status.status != ISR_PY_STATUS_SAMPLING)
		fprintf(stderr, "inferscope-bpf: pid %u: %s: %s; its GIL waits are not traced (--gil measures them "
			"with uprobes)\n", pid, m->file, status.detail);
	else if (p->ctx->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: GIL waits traced (%s)\n", pid, status.detail);
	htab_u64__put(&p->gil_decided, pid, 1);
	p->ctx->emit(p->ctx->emit_ctx, &status, sizeof(status));
	return false;
}

/* An interpreter not ready within WAIT_LIMIT_NS: said once for what was
 * still undecided (its stacks, its GIL waits), in the recording and on
 * stderr. */
static void interp_give_up(struct python_family *p, __u32 pid, const struct py_mapping *m)
{
	static const char detail[] = "its interpreter named no thread of the process within 10 s (not initialized, "
				     "or a layout this version does not know)";
	struct isr_ev_py_status status;
	__u64 v;

	if (p->stacks && !htab_u64__get(&p->decided, pid, &v)) {
		py_status__fill(&status, pid, ISR_PY_SUBJECT_STACKS, ISR_PY_STATUS_LAYOUT_MISMATCH, m->lib->minor, 0,
				detail);
		fprintf(stderr, "inferscope-bpf: pid %u: %s: %s; its Python stacks are not captured\n", pid, m->file,
			detail);
		htab_u64__put(&p->decided, pid, 1);
		p->ctx->emit(p->ctx->emit_ctx, &status, sizeof(status));
	}
	if (p->gils_fd >= 0 && !htab_u64__get(&p->gil_decided, pid, &v)) {
		py_status__fill(&status, pid, ISR_PY_SUBJECT_GIL, ISR_PY_STATUS_LAYOUT_MISMATCH, m->lib->minor, 0,
				detail);
		htab_u64__put(&p->gil_decided, pid, 1);
		p->ctx->emit(p->ctx->emit_ctx, &status, sizeof(status));
	}
}

/* The stacks and the GIL of the interpreter of pid at m; one not
 * ready yet (initializing, or a child just forked) waits for the next
 * tick, for WAIT_LIMIT_NS at most from since (0: now). */
static void interp_start(struct python_family *p, __u32 pid, const struct py_mapping *m, __u64 since)
{
	bool again = stacks_start(p, pid, m);
	__u64 now = clock__mono_ns();
	size_t i;

	again |= gil_start(p, pid, m);
	if (!again)
		return;
	if (since && now - since >= WAIT_LIMIT_NS) {
		interp_give_up(p, pid, m);
		return;
	}
	for (i = 0; i < p->nwaiting && p->waiting_pid[i] != pid; i++)
		;
	if (i == p->nwaiting && i < MAX_WAITING) {
		p->waiting[i] = *m;
		p->waiting_pid[i] = pid;
		p->waiting_since[i] = since ? since : now;
		p->nwaiting++;
	}
}

/* The GIL probes of interpreter m in pid. late: it may have run Python
 * before, say so. 0, or -errno after saying what failed (-ESRCH, quietly). */
static int gil_probe(struct python_family *p, __u32 pid, const struct py_mapping *m, bool late)
{
	const struct py_lib *lib = m->lib;
	struct uprobe_site sites[3];
	char err[PATH_MAX + 256];
	__u64 t0 = clock__mono_ns();
	size_t j;
	int e;

	/* The entry programs first: the return reads what its entry kept. */
	sites[0] = (struct uprobe_site){ p->gil->progs.gil_restore_enter, lib->sites[PY_SITE_RESTORE].name,
					 lib->sites[PY_SITE_RESTORE].offset, 0, false, false };
	sites[1] = (struct uprobe_site){ p->gil->progs.gil_restore_ret, lib->sites[PY_SITE_RESTORE].name,
					 lib->sites[PY_SITE_RESTORE].offset, 0, true, false };
	sites[2] = (struct uprobe_site){ p->gil->progs.gil_save_enter, lib->sites[PY_SITE_SAVE].name,
					 lib->sites[PY_SITE_SAVE].offset, 0, false, false };
	e = tracer__attach_uprobes(p->ctx->t, "libpython", pid, lib->dev, lib->ino, m->path, sites, 3, err,
				   sizeof(err));
	if (e == -EALREADY)
		return 0;
	if (e) {
		if (e != -ESRCH)
			fprintf(stderr, "inferscope-bpf: %s; the GIL of pid %u is not traced\n", err, pid);
		return e;
	}
	if (late)
		fprintf(stderr, "inferscope-bpf: pid %u loaded %s after tracing began: its GIL is traced from "
			"now on, earlier GIL waits were missed\n", pid, m->path);
	if (!p->ctx->cfg->verbose)
		return 0;
	fprintf(stderr, "inferscope-bpf: pid %u: %u Python GIL probes attached in %.1f ms on %s\n", pid,
		lib->probes, (clock__mono_ns() - t0) / 1e6, m->path);
	for (j = 0; j < p->ndescribed && p->described[j] != lib; j++)
		;
	if (j == p->ndescribed && j < PY_MAX_LIBS) {
		p->described[p->ndescribed++] = lib;
		py_lib__describe(lib, m->path, stderr);
	}
	return 0;
}

/* Probes the GIL of the Python interpreters pid maps now and starts the
 * capture of its stacks. Returns how many interpreter files it maps, or
 * -errno (-ESRCH: gone; an attach failure, already reported). */
static int probe_interpreters(struct python_family *p, __u32 pid, bool late)
{
	struct py_mapping mapped[PY_MAX_LIBS];
	int n, i, e, first_err = 0;

	n = py_libs__mapped(p->libs, pid, mapped, PY_MAX_LIBS, stderr);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		interp_start(p, pid, &mapped[i], 0);
		e = p->gil ? gil_probe(p, pid, &mapped[i], late) : 0;
		if (e && !first_err)
			first_err = e;
	}
	return first_err ? first_err : n;
}

/* A new image (exec'd, or the launched command) that maps no interpreter
 * yet loads a shared libpython after exec: it is looked for often for a
 * while rather than at the next 1 s rescan. */
static void watch_new_image(struct python_family *p, __u32 pid)
{
	size_t j;

	if (p->nfresh == MAX_WAITING)
		return;
	for (j = 0; j < p->nfresh && p->fresh_pid[j] != pid; j++)
		;
	if (j == p->nfresh) {
		p->fresh_pid[j] = pid;
		p->fresh_until[j] = clock__mono_ns() + FRESH_NS;
		p->nfresh++;
	}
}

static int python_probe_process(void *st, __u32 pid, enum probe_when when)
{
	struct python_family *p = st;
	int n;

	switch (when) {
	case PROBE_AT_START:
		n = probe_interpreters(p, pid, false);
		return n < 0 ? n : 0;
	case PROBE_AFTER_EXEC:
	case PROBE_NEW_PROCESS:
		/* A Python linked into its executable is known now; a
		 * libpython it loads is watched for. */
		if (probe_interpreters(p, pid, false) == 0)
			watch_new_image(p, pid);
		return 0;
	case PROBE_RESCAN:
		/* interpreters mapped since (a launched command's libpython,
		 * loaded after exec; embedded interpreters) */
		probe_interpreters(p, pid, true);
		return 0;
	case PROBE_MAPPED:
		/* an interpreter it maps now (in the executable, or a libpython
		 * just loaded); a libpython it loads later holds it */
		probe_interpreters(p, pid, false);
		return 0;
	default:
		return 0;
	}
}

/* New images of the last FRESH_NS that mapped no interpreter yet: the
 * first time one maps it, it is probed. */
static void fresh_rescan(struct python_family *p)
{
	__u64 now = clock__mono_ns();
	struct py_mapping m[PY_MAX_LIBS];
	size_t i = 0;

	while (i < p->nfresh) {
		__u32 pid = p->fresh_pid[i];
		bool expired = now >= p->fresh_until[i] || !proc__alive(pid);

		if (!expired && py_libs__mapped(p->libs, pid, m, PY_MAX_LIBS, NULL) <= 0) {
			i++;
			continue;
		}
		unfresh(p, i);
		if (!expired)
			probe_interpreters(p, pid, false);
	}
}

/* Interpreters that were not initialized when first seen: asked again
 * (each goes back on the list while it is still not initialized). */
static void interp_retry(struct python_family *p)
{
	struct py_mapping m[MAX_WAITING];
	__u32 pid[MAX_WAITING];
	__u64 since[MAX_WAITING];
	size_t i, n = p->nwaiting;

	memcpy(m, p->waiting, n * sizeof(m[0]));
	memcpy(pid, p->waiting_pid, n * sizeof(pid[0]));
	memcpy(since, p->waiting_since, n * sizeof(since[0]));
	p->nwaiting = 0;
	for (i = 0; i < n; i++)
		if (proc__alive(pid[i]))
			interp_start(p, pid[i], &m[i], since[i]);
}

/* An interpreter still initializing is asked again soon: its stacks are
 * lost until it is checked. */
static void python_tick(void *st, int *poll_ms)
{
	struct python_family *p = st;

	if (p->nfresh)
		fresh_rescan(p);
	if (p->nwaiting)
		interp_retry(p);
	if ((p->nwaiting || p->nfresh) && *poll_ms > WAIT_POLL_MS)
		*poll_ms = WAIT_POLL_MS;
}

/* The frames BPF saw become the recording's interned stacks and samples. */
static int python_on_event(void *st, const struct isr_ev_hdr *h, size_t size)
{
	struct python_family *p = st;
	int e;

	if (h->type != ISR_EV_PY_FRAMES)
		return 0;
	if (!p->stacks || size < offsetof(struct isr_ev_py_frames, frames))
		return 1;
	e = py_stacks__convert(p->stacks, (const void *)h, p->ctx->emit, p->ctx->emit_ctx);
	return e ? e : 1;
}

static void python_count_drops(void *st, __u64 *drops)
{
	struct python_family *p = st;

	if (p->stacks)
		drops[ISR_SRC_PY_CODE] += py_stacks__code_failures(p->stacks);
}

static void python_describe(void *st, FILE *out)
{
	struct python_family *p = st;

	if (p->gils_fd >= 0)
		fprintf(out, "  %-22s the scheduler's sched_switch program: target threads blocking on their GIL\n",
			"gil-waits");
	if (p->sampler)
		fprintf(out, "  %-22s perf_event cpu-clock, %d CPUs, %u Hz (Python stacks)\n", "py-stacks",
			p->samples.attached, p->ctx->cfg->python.stacks_hz);
}

static const char *const python_hold_libs[] = { "libpython3", NULL };

const struct probe_family family_python = {
	.name = "python",
	.hold_libs = python_hold_libs,
	.enabled = python_enabled,
	.open = python_open,
	.attach = py_libs,
	.probe_process = python_probe_process,
	.on_new_process = python_on_new_process,
	.on_event = python_on_event,
	.tick = python_tick,
	.count_drops = python_count_drops,
	.measure_costs = python_measure_costs,
	.describe = python_describe,
	.free = python_free,
};
