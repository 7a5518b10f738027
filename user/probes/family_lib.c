// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "clock.h"
#include "family_lib.h"

int family_lib__init(struct family_lib *f, const struct family_ctx *ctx, const struct probed_lib_kind *kind,
		     family_lib_sites_fn sites_of, void *fam, const char *late_note, char *err, size_t errlen)
{
	int e;

	*f = (struct family_lib){ .ctx = ctx, .kind = kind, .sites_of = sites_of, .fam = fam, .late_note = late_note };
	f->libs = probed_libs__new(kind);
	if (!f->libs) {
		e = -errno;
		snprintf(err, errlen, "cannot set up the ELF reader for %s: %s", kind->name, strerror(-e));
		return e;
	}
	return 0;
}

void family_lib__free(struct family_lib *f)
{
	probed_libs__free(f->libs);
	f->libs = NULL;
}

int family_lib__prepare(struct family_lib *f, const char *const *paths, size_t n)
{
	const struct record_config *cfg = f->ctx->cfg;
	int r;

	r = probed_libs__resolve_paths(f->libs, paths, n, f->extra, f->kind->max_libs, stderr);
	if (r < 0)
		return r;
	f->nextra = (size_t)r;
	if (cfg->targets.command || cfg->targets.follow_children) {
		r = probed_libs__candidates(f->libs, cfg->targets.command ? cfg->targets.command[0] : NULL, f->cand,
					    f->kind->max_libs, cfg->verbose ? stderr : NULL);
		f->ncand = r > 0 ? (size_t)r : 0;
	}
	return 0;
}

/* -v: the site list of a file, once. */
static void describe_once(struct family_lib *f, const struct probed_mapping *m)
{
	size_t i;

	for (i = 0; i < f->ndescribed && f->described[i] != m->lib; i++)
		;
	if (i == f->ndescribed && i < f->kind->max_libs) {
		f->described[f->ndescribed++] = m->lib;
		probed_lib__describe(m->lib, m->path, stderr);
	}
}

/* Probes one library in pid: 1 when newly probed, 0 when it already was,
 * -errno (-ESRCH, quietly, when the process is gone) after saying what
 * failed. */
static int probe_lib(struct family_lib *f, __u32 pid, const struct probed_mapping *m)
{
	struct uprobe_site sites[2 * PROBED_MAX_IDS];
	char err[PATH_MAX + 256];
	__u64 t0 = clock__mono_ns();
	size_t n = f->sites_of(f->fam, m->lib, sites);
	int e;

	e = tracer__attach_uprobes(f->ctx->t, f->kind->name, pid, m->lib->dev, m->lib->ino, m->path, sites, n, err,
				   sizeof(err));
	if (e == -EALREADY)
		return 0;
	if (e) {
		if (e != -ESRCH)
			fprintf(stderr, "inferscope-bpf: %s; %s calls of pid %u through it are not traced\n", err,
				f->kind->what, pid);
		return e;
	}
	if (f->ctx->cfg->verbose) {
		fprintf(stderr, "inferscope-bpf: pid %u: %u %s probes attached in %.1f ms on %s\n", pid,
			m->lib->probes, f->kind->what, (clock__mono_ns() - t0) / 1e6, m->path);
		describe_once(f, m);
	}
	return 1;
}

/* Probes in pid the files of the kind it maps now and those given by path;
 * with candidates (a process about to load its libraries) the candidate
 * files too, by path: their probes go live when it maps one. late: the
 * process may have used a file before it was probed, say so. Returns how
 * many files of the kind it maps now, or -errno (-ESRCH: gone; an attach
 * failure, already reported). */
static int probe_files(struct family_lib *f, __u32 pid, bool candidates, bool late)
{
	struct probed_mapping mapped[PROBED_MAX_LIBS];
	int n, i, r, first_err = 0;

	n = probed_libs__mapped(f->libs, pid, mapped, f->kind->max_libs, stderr);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		r = probe_lib(f, pid, &mapped[i]);
		if (r == 1 && late)
			fprintf(stderr, "inferscope-bpf: pid %u loaded %s after tracing began: its %s calls are "
				"traced from now on%s\n", pid, mapped[i].path, f->kind->what, f->late_note);
		if (r < 0 && !first_err)
			first_err = r;
	}
	for (i = 0; i < (int)f->nextra; i++) {
		r = probe_lib(f, pid, &f->extra[i]);
		if (r < 0 && !first_err)
			first_err = r;
	}
	for (i = 0; candidates && i < (int)f->ncand; i++) {
		r = probe_lib(f, pid, &f->cand[i]);
		if (r < 0 && !first_err)
			first_err = r;
	}
	return first_err ? first_err : n;
}

int family_lib__probe_when(struct family_lib *f, __u32 pid, enum probe_when when)
{
	int n;

	switch (when) {
	case PROBE_AT_START:
		return probe_files(f, pid, false, false);
	case PROBE_BEFORE_EXEC:
		return probe_files(f, pid, true, false);
	case PROBE_NEW_PROCESS:
		n = probe_files(f, pid, true, false);
		break;
	case PROBE_RESCAN:
		n = probe_files(f, pid, false, true);
		break;
	case PROBE_MAPPED:
		n = probe_files(f, pid, false, false);
		break;
	default:
		return 0;
	}
	return n < 0 ? 0 : n;
}
