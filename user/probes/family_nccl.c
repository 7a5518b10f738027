// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NCCL: every function of format/nccl_funcs.h in each libnccl file a target
 * maps (user/probes/probed_lib.h finds them and chooses the sites,
 * user/probes/family_lib.h attaches them), in the files
 * given with --nccl-lib, and, for a process about to load its libraries
 * (the launched command, followed children), in the candidate files it
 * would load, by path; what it maps later (a PyTorch wheel's copy, loaded
 * with torch) at the rescan. The BPF programs of bpf/nccl.bpf.c serve every
 * function: nccl_call the collectives, point-to-point and group calls (one
 * hit per call, at entry), nccl_init_enter and nccl_init_ret the
 * communicator set-ups.
 *
 * Each target's rank as its launcher set it (RANK, LOCAL_RANK, WORLD_SIZE)
 * is read once per process image from /proc/PID/environ and recorded
 * (struct isr_ev_rank_env): those three variables, nothing else of the
 * environment (docs/security.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "family.h"
#include "clock.h"
#include "htab.h"
#include "family_lib.h"
#include "nccl_funcs.h"
#include "nccl.skel.h"

struct nccl_family {
	const struct family_ctx *ctx;
	struct nccl_bpf *obj;
	struct family_lib libs;	/* libnccl files */
	struct htab env_read;	/* pids whose rank variables were looked for */
};

static bool nccl_enabled(const struct record_config *cfg)
{
	return cfg->nccl.enabled;
}

static void nccl_free(void *st)
{
	struct nccl_family *c = st;

	if (!c)
		return;
	family_lib__free(&c->libs);
	nccl_bpf__destroy(c->obj);
	htab__free(&c->env_read);
	free(c);
}

/* nccl_call serves the collectives, point-to-point and group calls (entry
 * only), nccl_init_enter and nccl_init_ret the communicator set-ups. */
static size_t sites_of(void *fam, const struct probed_lib *lib, struct uprobe_site *out)
{
	const struct nccl_family *c = fam;
	size_t i, n = 0;

	for (i = 1; i < ISR_NCCL_FN_MAX; i++) {
		const struct probe_site *s = &lib->sites[i];

		if (s->kind == PROBE_SITE_ABSENT)
			continue;
		if (s->ret) {
			out[n++] = (struct uprobe_site){ c->obj->progs.nccl_init_enter, s->name, s->offset, s->cookie,
							 false, false };
			out[n++] = (struct uprobe_site){ c->obj->progs.nccl_init_ret, s->name, s->offset, s->cookie,
							 true, false };
		} else {
			out[n++] = (struct uprobe_site){ c->obj->progs.nccl_call, s->name, s->offset, s->cookie,
							 false, false };
		}
	}
	return n;
}

static void *nccl_open(const struct family_ctx *ctx, char *err, size_t errlen)
{
	struct nccl_family *c = calloc(1, sizeof(*c));
	int e;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->ctx = ctx;
	c->env_read = (struct htab)HTAB_U64_INIT;
	c->obj = nccl_bpf__open();
	if (c->obj)
		tracer__use_uprobe_multi(ctx->t, c->obj->obj);
	e = tracer__load(ctx->t, c->obj ? c->obj->skeleton : NULL, "NCCL", "--no-nccl", err, errlen);
	e = e ?: family_lib__init(&c->libs, ctx, &probed_nccl, sites_of, c,
				  " (a communicator set up before is matched to its other ranks by RANK/WORLD_SIZE, "
				  "and its sequence counted from here)", err, errlen);
	if (e) {
		nccl_free(c);
		errno = -e;
		return NULL;
	}
	return c;
}

static int nccl_prepare(void *st, struct launch_env *env)
{
	struct nccl_family *c = st;

	(void)env;
	return family_lib__prepare(&c->libs, c->ctx->cfg->nccl.libs, c->ctx->cfg->nccl.lib_count);
}

#define ENVIRON_MAX (1 << 20)

/* An integer value of name= in the environment block env (n bytes, NUL-separated). */
static bool env_int(const char *env, size_t n, const char *name, __s32 *out)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n;) {
		const char *var = env + i, *val;
		size_t vlen = strnlen(var, n - i);

		if (vlen > len && strncmp(var, name, len) == 0 && var[len] == '=') {
			char *end;
			long v;

			val = var + len + 1;
			errno = 0;
			v = strtol(val, &end, 10);
			if (!errno && end != val && end == var + vlen && v >= 0 && v <= INT32_MAX) {
				*out = (__s32)v;
				return true;
			}
			return false;
		}
		i += vlen + 1;
	}
	return false;
}

/* Records the rank variables of pid's environment, once per process image. */
static void record_rank_env(struct nccl_family *c, __u32 pid)
{
	struct isr_ev_rank_env ev;
	char path[64], *buf;
	ssize_t n;
	size_t len = 0;
	__u64 done;
	int fd;

	if (htab_u64__get(&c->env_read, pid, &done))
		return;
	htab_u64__put(&c->env_read, pid, 1);
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	buf = malloc(ENVIRON_MAX);
	while (buf && len < ENVIRON_MAX && (n = read(fd, buf + len, ENVIRON_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (!buf)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.rank = ev.local_rank = ev.world_size = -1;
	if (env_int(buf, len, "RANK", &ev.rank))
		ev.flags |= ISR_RANK_ENV_RANK;
	if (env_int(buf, len, "LOCAL_RANK", &ev.local_rank))
		ev.flags |= ISR_RANK_ENV_LOCAL_RANK;
	if (env_int(buf, len, "WORLD_SIZE", &ev.world_size))
		ev.flags |= ISR_RANK_ENV_WORLD_SIZE;
	/* the environment is no longer needed: nothing else of it is kept */
	memset(buf, 0, len);
	free(buf);
	if (!ev.flags)
		return;
	ev.hdr.type = ISR_EV_RANK_ENV;
	ev.hdr.size = sizeof(ev);
	ev.hdr.ts_ns = clock__mono_ns();
	ev.hdr.pid = pid;
	ev.hdr.tid = pid;
	c->ctx->emit(c->ctx->emit_ctx, &ev, sizeof(ev));
}

/* The rank variables are read at the start, after an exec and in a new
 * process (before its exec, the environment is not the command's yet). */
static int nccl_probe_process(void *st, __u32 pid, enum probe_when when)
{
	struct nccl_family *c = st;
	int n;

	if (when != PROBE_BEFORE_EXEC && when != PROBE_RESCAN)
		record_rank_env(c, pid);
	n = family_lib__probe_when(&c->libs, pid, when);
	return n < 0 ? n : 0;
}

/* A new process or image: its environment is read again. */
static void nccl_on_new_process(void *st, __u32 pid, __u32 origin)
{
	struct nccl_family *c = st;
	__u64 v;

	(void)origin;
	htab_u64__take(&c->env_read, pid, &v);
}

static const char *const nccl_hold_libs[] = { "libnccl.so", NULL };

const struct probe_family family_nccl = {
	.name = "nccl",
	.hold_libs = nccl_hold_libs,
	.enabled = nccl_enabled,
	.open = nccl_open,
	.prepare = nccl_prepare,
	.probe_process = nccl_probe_process,
	.on_new_process = nccl_on_new_process,
	.free = nccl_free,
};
