// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NVTX ranges and marks: uprobes on the NVTX entry points (nvtxRangePushA/Ex,
 * nvtxRangePop, nvtxRangeStartA/Ex and their return, nvtxRangeEnd,
 * nvtxMarkA/Ex) of every libnvToolsExt a target maps (bpf/nvtx.bpf.c). A
 * library loaded later is found by the rescan a second. NVTX 3 compiled into
 * a program (header-only, no libnvToolsExt) exports nothing to probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "family.h"
#include "elf_file.h"
#include "proc.h"
#include "nvtx.skel.h"

enum nvtx_prog { P_MSG, P_START_RET, P_CLOSE };

static const struct {
	const char *name;
	enum nvtx_prog prog;
	__u16 kind;
	bool ex;
} nvtx_funcs[] = {
	{ "nvtxRangePushA", P_MSG, ISR_NVTX_PUSH, false },
	{ "nvtxRangePushEx", P_MSG, ISR_NVTX_PUSH, true },
	{ "nvtxRangePop", P_CLOSE, ISR_NVTX_POP, false },
	{ "nvtxRangeStartA", P_MSG, ISR_NVTX_START, false },
	{ "nvtxRangeStartEx", P_MSG, ISR_NVTX_START, true },
	{ "nvtxRangeEnd", P_CLOSE, ISR_NVTX_END, false },
	{ "nvtxMarkA", P_MSG, ISR_NVTX_MARK, false },
	{ "nvtxMarkEx", P_MSG, ISR_NVTX_MARK, true },
};
#define NR_NVTX_FUNCS (sizeof(nvtx_funcs) / sizeof(nvtx_funcs[0]))
#define NVTX_MAX_LIBS 8

/* A library file, resolved once (files told apart by device and inode). */
struct nvtx_lib {
	dev_t dev;
	ino_t ino;
	__u64 offset[NR_NVTX_FUNCS];	/* 0: not exported */
	unsigned int present;
};

struct nvtx_family {
	const struct family_ctx *ctx;
	struct nvtx_bpf *obj;
	struct nvtx_lib libs[NVTX_MAX_LIBS];
	size_t nlibs;
};

static bool nvtx_enabled(const struct record_config *cfg)
{
	return cfg->nvtx.enabled;
}

static void nvtx_free(void *st)
{
	struct nvtx_family *n = st;

	if (!n)
		return;
	nvtx_bpf__destroy(n->obj);
	free(n);
}

static void *nvtx_open(const struct family_ctx *ctx, char *err, size_t errlen)
{
	struct nvtx_family *n = calloc(1, sizeof(*n));
	int e;

	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->ctx = ctx;
	n->obj = nvtx_bpf__open();
	if (n->obj)
		tracer__use_uprobe_multi(ctx->t, n->obj->obj);
	e = tracer__load(ctx->t, n->obj ? n->obj->skeleton : NULL, "NVTX", "--no-nvtx", err, errlen);
	if (e) {
		nvtx_free(n);
		errno = -e;
		return NULL;
	}
	return n;
}

struct resolve_ctx {
	const struct elf_file *f;
	struct nvtx_lib *lib;
};

static int on_symbol(void *arg, const struct elf_symbol *sym)
{
	struct resolve_ctx *c = arg;

	if (!sym->func)
		return 0;
	for (size_t i = 0; i < NR_NVTX_FUNCS; i++) {
		__u64 off;

		if (strcmp(sym->name, nvtx_funcs[i].name) || c->lib->offset[i])
			continue;
		if (elf_file__vaddr_to_offset(c->f, sym->value, &off) == 0 && off) {
			c->lib->offset[i] = off;
			c->lib->present++;
		}
	}
	return 0;
}

/* The library at path (dev, ino), resolved once; NULL when it exports no
 * NVTX function or cannot be read (said on stderr). */
static const struct nvtx_lib *nvtx_resolve(struct nvtx_family *n, const char *path, const struct stat *st)
{
	struct nvtx_lib *lib;
	struct resolve_ctx rc;
	struct elf_file *f;
	char err[PATH_MAX + 128];
	int fd;

	for (size_t i = 0; i < n->nlibs; i++)
		if (n->libs[i].dev == st->st_dev && n->libs[i].ino == st->st_ino)
			return n->libs[i].present ? &n->libs[i] : NULL;
	if (n->nlibs == NVTX_MAX_LIBS)
		return NULL;
	lib = &n->libs[n->nlibs++];
	memset(lib, 0, sizeof(*lib));
	lib->dev = st->st_dev;
	lib->ino = st->st_ino;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "inferscope-bpf: cannot open %s: %s; its NVTX ranges are not traced\n", path,
			strerror(errno));
		return NULL;
	}
	f = elf_file__open(fd, path, err, sizeof(err));
	if (!f) {
		close(fd);
		fprintf(stderr, "inferscope-bpf: %s; its NVTX ranges are not traced\n", err);
		return NULL;
	}
	rc.f = f;
	rc.lib = lib;
	elf_file__for_each_symbol(f, ELF_SYMS_DYNAMIC, on_symbol, &rc);
	elf_file__close(f);
	close(fd);
	return lib->present ? lib : NULL;
}

static int nvtx_attach_lib(struct nvtx_family *n, __u32 pid, const char *path, const struct stat *st,
			   const struct nvtx_lib *lib)
{
	struct bpf_program *progs[] = { n->obj->progs.nvtx_msg, n->obj->progs.nvtx_start_ret,
					n->obj->progs.nvtx_close };
	struct uprobe_site sites[NR_NVTX_FUNCS + 2];
	char err[PATH_MAX + 256];
	size_t ns = 0;
	int e;

	for (size_t i = 0; i < NR_NVTX_FUNCS; i++) {
		__u64 cookie = nvtx_funcs[i].kind | (nvtx_funcs[i].ex ? (__u64)ISR_NVTX_F_EX << 8 : 0);

		if (!lib->offset[i])
			continue;
		sites[ns++] = (struct uprobe_site){ progs[nvtx_funcs[i].prog], nvtx_funcs[i].name, lib->offset[i],
						    cookie, false, false };
		if (nvtx_funcs[i].kind == ISR_NVTX_START)
			sites[ns++] = (struct uprobe_site){ progs[P_START_RET], nvtx_funcs[i].name, lib->offset[i],
							    0, true, false };
	}
	e = tracer__attach_uprobes(n->ctx->t, "libnvToolsExt", pid, st->st_dev, st->st_ino, path, sites, ns, err,
				   sizeof(err));
	if (e == -EALREADY)
		return 0;
	if (e) {
		fprintf(stderr, "inferscope-bpf: %s; the NVTX ranges of pid %u are not traced\n", err, pid);
		return e;
	}
	if (n->ctx->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: %zu NVTX probes attached on %s\n", pid, ns, path);
	return 0;
}

/* Probes every NVTX library pid maps now. */
static int nvtx_probe_process(void *st, __u32 pid, enum probe_when when)
{
	struct nvtx_family *n = st;
	struct proc_maps *maps;
	struct proc_map m;
	char seen[NVTX_MAX_LIBS][PATH_MAX];
	size_t nseen = 0;
	int r;

	if (when == PROBE_BEFORE_EXEC)
		return 0;	/* nothing mapped yet: found by the rescan once loaded */
	maps = proc_maps__open(pid);
	if (!maps)
		return errno == ESRCH ? 0 : -errno;
	while ((r = proc_maps__next(maps, &m)) > 0) {
		const char *base = strrchr(m.path, '/');
		char path[PATH_MAX + 32];
		const struct nvtx_lib *lib;
		struct stat sb;
		bool dup = false;

		if (!proc_map__is_file(&m) || !base || !strstr(base + 1, "libnvToolsExt") ||
		    strstr(m.path, " (deleted)"))
			continue;
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = !strcmp(seen[i], m.path);
		if (dup || nseen == NVTX_MAX_LIBS)
			continue;
		snprintf(seen[nseen++], PATH_MAX, "%s", m.path);
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m.path);
		if (stat(path, &sb))
			continue;
		lib = nvtx_resolve(n, path, &sb);
		if (lib)
			nvtx_attach_lib(n, pid, path, &sb, lib);
	}
	proc_maps__close(maps);
	return 0;
}

static const char *const nvtx_hold_libs[] = { "libnvToolsExt", NULL };

const struct probe_family family_nvtx = {
	.name = "nvtx",
	.hold_libs = nvtx_hold_libs,
	.enabled = nvtx_enabled,
	.open = nvtx_open,
	.probe_process = nvtx_probe_process,
	.free = nvtx_free,
};
