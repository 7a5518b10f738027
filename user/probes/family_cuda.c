// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CUDA driver API: every function of format/cuda_funcs.h in each
 * libcuda file a target maps (user/probes/probed_lib.h finds them and chooses
 * the sites, user/probes/family_lib.h attaches them), in the files given with --cuda-lib, and, for a process about
 * to load its libraries (the launched command, followed children), in the
 * candidate files it would load, by path. The BPF programs of
 * bpf/cuda.bpf.c serve every function: cuda_hot for the entries of the
 * hot-path families and cuda_copy_ret for the returns of its async copies
 * (the hot path the overhead budget switches; the async copies under a
 * budget of their own, TRACER_COPIES), cuda_enter and
 * cuda_ret for those whose return is probed too, cuda_learn_enter and
 * cuda_learn_ret for cuKernelGetFunction, released in a process while its
 * calls teach nothing new (user/probes/alias_learn.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "family.h"
#include "alias_learn.h"
#include "registry.h"
#include "clock.h"
#include "family_lib.h"
#include "selfprobe.h"
#include "cuda.skel.h"

#define SELF_PROBES 3

struct cuda_family {
	const struct family_ctx *ctx;
	struct cuda_bpf *obj;
	struct family_lib libs;	/* libcuda files */
	struct alias_learn learn;	/* when cuKernelGetFunction's probes are worth it */
	bool learn_switched;		/* they can be switched (uprobe_multi links) */
	bool learn_warned;
	int self_fd[SELF_PROBES];	/* the cost measurement's probes of this executable */
	size_t nself;
};

static bool cuda_enabled(const struct record_config *cfg)
{
	return cfg->cuda.enabled;
}

static void cuda_free(void *st)
{
	struct cuda_family *c = st;

	if (!c)
		return;
	for (size_t i = 0; i < c->nself; i++)
		close(c->self_fd[i]);
	family_lib__free(&c->libs);
	cuda_bpf__destroy(c->obj);
	alias_learn__free(&c->learn);
	free(c);
}

/* The probe sites of every function lib exports, entries first. */
static size_t sites_of(void *fam, const struct probed_lib *lib, struct uprobe_site *out)
{
	const struct cuda_family *c = fam;
	size_t i, n = 0;

	for (i = 1; i < ISR_CUDA_FN_MAX; i++) {
		const struct probe_site *s = &lib->sites[i];
		bool hot = ISR_CUDA_FAM_HOT(s->family), learn = s->family == ISR_CUDA_FAM_ALIAS;
		/* the async copies under a budget of their own, the other
		 * hot-path families under the hot path's */
		__u8 sw = !hot ? TRACER_ALWAYS : ISR_CUDA_FAM_ASYNC_COPY(s->family) ? TRACER_COPIES : TRACER_HOT;
		struct bpf_program *enter = hot ? c->obj->progs.cuda_hot :
					    learn ? c->obj->progs.cuda_learn_enter : c->obj->progs.cuda_enter;
		struct bpf_program *ret = hot ? c->obj->progs.cuda_copy_ret :
					  learn ? c->obj->progs.cuda_learn_ret : c->obj->progs.cuda_ret;

		if (s->kind == PROBE_SITE_ABSENT)
			continue;
		/* cuda_hot decodes the hot-path families (cuda_copy_ret the
		 * async copies' returns), cuda_enter and cuda_ret the "+ret"
		 * ones, cuda_learn_* cuKernelGetFunction; the entry program
		 * first: a return probe needs the entry's record. */
		out[n++] = (struct uprobe_site){ enter, s->name, s->offset, s->cookie, false, sw };
		if (s->ret)
			out[n++] = (struct uprobe_site){ ret, s->name, s->offset, s->cookie, true, sw };
	}
	return n;
}

static void *cuda_open(const struct family_ctx *ctx, char *err, size_t errlen)
{
	struct cuda_family *c = calloc(1, sizeof(*c));
	int e;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->ctx = ctx;
	alias_learn__init(&c->learn);
	c->learn_switched = tracer__uprobe_multi(ctx->t);
	c->obj = cuda_bpf__open();
	if (c->obj) {
		tracer__use_uprobe_multi(ctx->t, c->obj->obj);
		c->obj->rodata->task_fsbase_offset = tracer__task_fsbase_offset(ctx->t);
		if (ctx->cfg->python.stacks_hz)
			c->obj->rodata->py_launch_every = ctx->cfg->python.launch_every;
	}
	e = tracer__load(ctx->t, c->obj ? c->obj->skeleton : NULL, "CUDA", "--no-cuda", err, errlen);
	e = e ?: family_lib__init(&c->libs, ctx, &probed_cuda, sites_of, c,
				  ", calls made before may have been missed", err, errlen);
	if (e) {
		cuda_free(c);
		errno = -e;
		return NULL;
	}
	return c;
}

/* Lets the recorder hold the two descriptors of every uprobe: a process
 * takes about 200 per libcuda file. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Resolves the --cuda-lib files and, when a process may load its libraries
 * after we attach (a launched command, followed children), the candidate
 * libcuda files it would find. */
static int cuda_prepare(void *st, struct launch_env *env)
{
	struct cuda_family *c = st;
	int e;

	(void)env;
	e = family_lib__prepare(&c->libs, c->ctx->cfg->cuda.libs, c->ctx->cfg->cuda.lib_count);
	if (e)
		return e;
	raise_fd_limit();
	return 0;
}

static int cuda_probe_process(void *st, __u32 pid, enum probe_when when)
{
	struct cuda_family *c = st;
	const char *cmd = c->ctx->cfg->targets.command ? c->ctx->cfg->targets.command[0] : NULL;
	int n = family_lib__probe_when(&c->libs, pid, when);

	/* A --cuda-lib file is probed in every target: not CPU only. */
	if (when == PROBE_AT_START && n == 0 && !c->libs.nextra && !c->ctx->cfg->quiet)
		fprintf(stderr, "inferscope-bpf: pid %u has no CUDA driver library mapped: tracing CPU only "
			"(it will be traced if it loads one)\n", pid);
	if (when == PROBE_BEFORE_EXEC && n >= 0 && !c->libs.ncand && !c->libs.nextra && !c->ctx->cfg->quiet)
		fprintf(stderr, "inferscope-bpf: no CUDA driver library (libcuda.so.1) found where %s would "
			"load one from (LD_LIBRARY_PATH, its RUNPATH, /etc/ld.so.cache, the standard "
			"directories): tracing CPU only (a libcuda it loads from elsewhere is traced from "
			"when it is loaded; --cuda-lib PATH probes it from the start)\n", cmd);
	return n < 0 ? n : 0;
}

/* Attaches (on) or releases pid's cuKernelGetFunction probes, as the
 * learner asked. */
static void learn_switch(struct cuda_family *c, __u32 pid, bool on)
{
	struct bpf_program *progs[] = { c->obj->progs.cuda_learn_enter, c->obj->progs.cuda_learn_ret };
	char err[512];
	int e;

	e = tracer__switch_programs(c->ctx->t, pid, progs, 2, on, err, sizeof(err));
	if (e == -EOPNOTSUPP) {
		c->learn_switched = false;
		return;
	}
	if (e && e != -ESRCH && !c->learn_warned) {
		fprintf(stderr, "inferscope-bpf: %s; kernels first launched through a function handle from now on "
			"may be reported unnamed\n", err);
		c->learn_warned = true;
	}
	alias_learn__switched(&c->learn, pid, on, clock__mono_ns());
	if (c->ctx->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: cuKernelGetFunction probes %s\n", pid,
			on ? "attached again, to learn new kernel handles" :
			     "released: its last calls taught no new kernel handle");
}

/* What cuKernelGetFunction calls teach, and when a kernel is named: its
 * probes are released while they teach nothing new. */
static int cuda_on_event(void *st, const struct isr_ev_hdr *h, size_t size)
{
	const struct isr_ev_cuda_name *n = (const void *)h;
	struct cuda_family *c = st;
	const struct isr_cuda_fn *fn;
	enum alias_action act;
	int e;

	if (!c->learn_switched || h->type != ISR_EV_CUDA_NAME || size < sizeof(*n))
		return 0;
	fn = isr_cuda_fn(n->func);
	if (!fn)
		return 0;
	if (fn->family == ISR_CUDA_FAM_ALIAS)
		e = alias_learn__mapped(&c->learn, h->pid, n->owner, n->handle, &act);
	else
		e = alias_learn__named(&c->learn, h->pid, &act);
	if (e)
		return e;
	if (act != ALIAS_KEEP)
		learn_switch(c, h->pid, act == ALIAS_ATTACH);
	return 0;
}

/* Processes whose cuKernelGetFunction probes were released a while ago
 * learn again: a new context maps known kernels to new handles. */
static void cuda_tick(void *st, int *poll_ms)
{
	struct cuda_family *c = st;
	__u32 pids[64];
	size_t n, i;

	(void)poll_ms;
	if (!c->learn_switched)
		return;
	n = alias_learn__due(&c->learn, clock__mono_ns(), pids, sizeof(pids) / sizeof(pids[0]));
	for (i = 0; i < n; i++)
		learn_switch(c, pids[i], true);
}

/* A new process or image: what its predecessor under the pid taught is void. */
static void cuda_on_new_process(void *st, __u32 pid, __u32 origin)
{
	struct cuda_family *c = st;

	(void)origin;
	alias_learn__forget(&c->learn, pid);
}

#define COST_CALLS	401
#define COST_GAP_NS	20000

/* The executable's own cuLaunchKernel and cuStreamSynchronize
 * (user/record/selfprobe.h, libcuda's prologue), probed as a target's: the
 * hot path's program on the first, a "+ret" family's entry and return on
 * the second. */
struct self_probe {
	struct cuda_family *c;
	const struct probe_site *site;
	bool pair;
	int fd[2];
};

static int self_probe_set(void *arg, bool on)
{
	struct self_probe *s = arg;
	struct tracer *t = s->c->ctx->t;
	struct bpf_program *progs[2] = { s->pair ? s->c->obj->progs.cuda_enter : s->c->obj->progs.cuda_hot,
					 s->c->obj->progs.cuda_ret };
	__u32 pid = (__u32)getpid();
	int i, n = s->pair ? 2 : 1;

	for (i = 0; i < n; i++) {
		if (!on && s->fd[i] >= 0) {
			/* Released with the family: a release waits for the
			 * kernel's grace period (about 100 ms), and nothing
			 * calls these functions after the measurement. */
			if (s->c->nself < SELF_PROBES)
				s->c->self_fd[s->c->nself++] = s->fd[i];
			else
				close(s->fd[i]);
			s->fd[i] = -1;
		} else if (on && s->fd[i] < 0) {
			s->fd[i] = i ? tracer__uprobe_multi_link(progs[i], "/proc/self/exe", &s->site->offset,
								 &s->site->cookie, 1, true, pid) :
				       tracer__uprobe_link(t, progs[i], pid, "/proc/self/exe", s->site->offset,
							   s->site->cookie);
			if (s->fd[i] < 0)
				return s->fd[i];
		}
	}
	return 0;
}

/* One call, timed; each after COST_GAP_NS of other work, as a job's
 * launches come between its own work (a call in a tight loop finds the
 * trap path hot in the caches and costs less: 660 against 690-855 ns per
 * hit on an H200 host). */
static void self_launch(void *arg)
{
	(void)arg;
	cuLaunchKernel((void *)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

static void self_sync(void *arg)
{
	(void)arg;
	cuStreamSynchronize(NULL);
}

/* What an entry hit of the hot path's program and an entry and return
 * hit of a "+ret" family cost here: the executable's own functions called
 * with and without the probes, this process a target meanwhile (its
 * events discarded by the recorder). */
static int cuda_measure_costs(void *st, struct tracer_costs *costs, char *err, size_t errlen)
{
	static const char self[] = "/proc/self/exe";
	struct cuda_family *c = st;
	const struct probed_lib *lib;
	struct self_probe hot = { c, NULL, false, { -1, -1 } };
	struct self_probe pair = { c, NULL, true, { -1, -1 } };
	struct cost_ab ab_hot = { self_launch, self_probe_set, &hot, COST_CALLS, 1, COST_GAP_NS, 0, false };
	struct cost_ab ab_pair = { self_sync, self_probe_set, &pair, COST_CALLS / 2, 1, COST_GAP_NS, 0, false };
	int e;

	/* without uprobe_multi links (--legacy-uprobes, Linux before 6.6):
	 * no budget, and the probes' hits are not charged */
	if (!tracer__uprobe_multi(c->ctx->t))
		return 0;
	lib = probed_libs__resolve(c->libs.libs, self, err, errlen);
	if (!lib)
		return -errno;
	if (lib->sites[ISR_CUDA_FN_cuLaunchKernel].kind == PROBE_SITE_ABSENT ||
	    lib->sites[ISR_CUDA_FN_cuStreamSynchronize].kind == PROBE_SITE_ABSENT) {
		snprintf(err, errlen, "the executable has no cuLaunchKernel and cuStreamSynchronize of its own to measure");
		return -ENOENT;
	}
	hot.site = &lib->sites[ISR_CUDA_FN_cuLaunchKernel];
	pair.site = &lib->sites[ISR_CUDA_FN_cuStreamSynchronize];
	e = budget_cost__ab(&ab_hot, &costs->hit_ns);
	e = e ?: budget_cost__ab(&ab_pair, &costs->pair_ns);
	if (e)
		snprintf(err, errlen, "cannot probe the executable's own CUDA functions: %s", strerror(-e));
	return e;
}

static const char *const cuda_hold_libs[] = { "libcuda.so", NULL };

const struct probe_family family_cuda = {
	.name = "cuda",
	.after = "python",	/* the Python stack walker's maps */
	.hold_libs = cuda_hold_libs,
	.enabled = cuda_enabled,
	.open = cuda_open,
	.prepare = cuda_prepare,
	.probe_process = cuda_probe_process,
	.on_new_process = cuda_on_new_process,
	.on_event = cuda_on_event,
	.tick = cuda_tick,
	.measure_costs = cuda_measure_costs,
	.free = cuda_free,
};
