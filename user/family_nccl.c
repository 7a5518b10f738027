// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NCCL: every function of format/nccl_funcs.h in each libnccl file a target
 * maps (user/nccl_libs.h finds them and chooses the sites), in the files
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
#include "nccl_libs.h"
#include "nccl.skel.h"

struct nccl_family {
	const struct family_ctx *ctx;
	struct nccl_bpf *obj;
	struct nccl_libs *libs;
	struct nccl_mapping extra[NCCL_MAX_LIBS];	/* --nccl-lib */
	size_t nextra;
	struct nccl_mapping cand[NCCL_MAX_LIBS];	/* where a process about to load libraries finds libnccl */
	size_t ncand;
	const struct nccl_lib *described[NCCL_MAX_LIBS];
	size_t ndescribed;
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
	nccl_libs__free(c->libs);
	nccl_bpf__destroy(c->obj);
	htab__free(&c->env_read);
	free(c);
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
	if (e)
		goto fail;
	c->libs = nccl_libs__new();
	if (!c->libs) {
		e = -errno;
		snprintf(err, errlen, "cannot set up the ELF reader for libnccl: %s", strerror(-e));
		goto fail;
	}
	return c;
fail:
	nccl_free(c);
	errno = -e;
	return NULL;
}

static int nccl_prepare(void *st, struct launch_env *env)
{
	struct nccl_family *c = st;
	const struct record_config *cfg = c->ctx->cfg;
	int n;

	(void)env;
	n = nccl_libs__resolve_paths(c->libs, cfg->nccl.libs, cfg->nccl.lib_count, c->extra, NCCL_MAX_LIBS, stderr);
	if (n < 0)
		return n;
	c->nextra = (size_t)n;
	if (cfg->targets.command || cfg->targets.follow_children) {
		n = nccl_libs__candidates(c->libs, cfg->targets.command ? cfg->targets.command[0] : NULL, c->cand,
					  NCCL_MAX_LIBS, cfg->verbose ? stderr : NULL);
		c->ncand = n > 0 ? (size_t)n : 0;
	}
	return 0;
}

/* Probes one library in pid: 1 when newly probed, 0 when it already was,
 * -errno after saying what failed (quietly when the process is gone). */
static int probe_lib(struct nccl_family *c, __u32 pid, const struct nccl_mapping *m)
{
	struct uprobe_site sites[2 * ISR_NCCL_FN_MAX];
	char err[PATH_MAX + 256];
	__u64 t0 = clock__mono_ns();
	size_t i, n = 0;
	int e;

	for (i = 1; i < ISR_NCCL_FN_MAX; i++) {
		const struct cuda_site *s = &m->lib->sites[i];

		if (s->kind == CUDA_SITE_ABSENT)
			continue;
		if (s->ret) {
			sites[n++] = (struct uprobe_site){ c->obj->progs.nccl_init_enter, s->name, s->offset, s->cookie,
							   false, false };
			sites[n++] = (struct uprobe_site){ c->obj->progs.nccl_init_ret, s->name, s->offset, s->cookie,
							   true, false };
		} else {
			sites[n++] = (struct uprobe_site){ c->obj->progs.nccl_call, s->name, s->offset, s->cookie,
							   false, false };
		}
	}
	e = tracer__attach_uprobes(c->ctx->t, "libnccl", pid, m->lib->dev, m->lib->ino, m->path, sites, n, err,
				   sizeof(err));
	if (e == -EALREADY)
		return 0;
	if (e) {
		if (e != -ESRCH)
			fprintf(stderr, "inferscope-bpf: %s; NCCL calls of pid %u through it are not traced\n", err, pid);
		return e;
	}
	if (c->ctx->cfg->verbose) {
		fprintf(stderr, "inferscope-bpf: pid %u: %u NCCL probes attached in %.1f ms on %s\n", pid,
			m->lib->probes, (clock__mono_ns() - t0) / 1e6, m->path);
		for (i = 0; i < c->ndescribed && c->described[i] != m->lib; i++)
			;
		if (i == c->ndescribed && i < NCCL_MAX_LIBS) {
			c->described[c->ndescribed++] = m->lib;
			nccl_lib__describe(m->lib, m->path, stderr);
		}
	}
	return 1;
}

/* Probes the libnccl files pid maps now, the --nccl-lib ones and, with
 * candidates, those it would load. late: it may have called NCCL before. */
static int probe_libs(struct nccl_family *c, __u32 pid, bool candidates, bool late)
{
	struct nccl_mapping mapped[NCCL_MAX_LIBS];
	int n, i, r, first_err = 0;

	n = nccl_libs__mapped(c->libs, pid, mapped, NCCL_MAX_LIBS, stderr);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		r = probe_lib(c, pid, &mapped[i]);
		if (r == 1 && late)
			fprintf(stderr, "inferscope-bpf: pid %u loaded %s after tracing began: its NCCL calls are "
				"traced from now on (a communicator set up before is matched to its other ranks by "
				"RANK/WORLD_SIZE, and its sequence counted from here)\n", pid, mapped[i].path);
		if (r < 0 && !first_err)
			first_err = r;
	}
	for (i = 0; i < (int)c->nextra; i++) {
		r = probe_lib(c, pid, &c->extra[i]);
		if (r < 0 && !first_err)
			first_err = r;
	}
	for (i = 0; candidates && i < (int)c->ncand; i++) {
		r = probe_lib(c, pid, &c->cand[i]);
		if (r < 0 && !first_err)
			first_err = r;
	}
	return first_err ? first_err : n;
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

static int nccl_probe_process(void *st, __u32 pid, enum probe_when when)
{
	struct nccl_family *c = st;
	int n;

	switch (when) {
	case PROBE_AT_START:
		record_rank_env(c, pid);
		n = probe_libs(c, pid, false, false);
		return n < 0 ? n : 0;
	case PROBE_BEFORE_EXEC:
		/* Not exec'd yet: libnccl is probed by path, live once mapped;
		 * its environment is read after the exec. */
		n = probe_libs(c, pid, true, false);
		return n < 0 ? n : 0;
	case PROBE_AFTER_EXEC:
		record_rank_env(c, pid);
		return 0;
	case PROBE_NEW_PROCESS:
		record_rank_env(c, pid);
		probe_libs(c, pid, true, false);
		return 0;
	case PROBE_RESCAN:
		probe_libs(c, pid, false, true);
		return 0;
	case PROBE_MAPPED:
		/* what it maps now; a libnccl it loads later holds it */
		record_rank_env(c, pid);
		probe_libs(c, pid, false, false);
		return 0;
	default:
		return 0;
	}
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
