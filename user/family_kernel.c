// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's own events beyond the scheduler's (which the tracer core
 * owns): page faults of the targets on user memory. The fault's start is
 * the page_fault_user tracepoint; its completion, minor or major, a
 * software perf event on every CPU (bpf/faults.bpf.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "family.h"
#include "faults.skel.h"

struct kernel_family {
	struct faults_bpf *faults;
	struct cpu_links minor, major;
	struct bpf_link *entry;
};

static bool kernel_enabled(const struct record_config *cfg)
{
	return cfg->kernel.page_faults;
}

static void kernel_free(void *st)
{
	struct kernel_family *k = st;

	if (!k)
		return;
	bpf_link__destroy(k->entry);
	cpu_links__free(&k->minor);
	cpu_links__free(&k->major);
	faults_bpf__destroy(k->faults);
	free(k);
}

static void *kernel_open(const struct family_ctx *ctx, char *err, size_t errlen)
{
	struct kernel_family *k = calloc(1, sizeof(*k));
	int e;

	if (!k) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	k->faults = faults_bpf__open();
	e = tracer__load(ctx->t, k->faults ? k->faults->skeleton : NULL, "page-fault", "--no-faults", err, errlen);
	if (e) {
		kernel_free(k);
		errno = -e;
		return NULL;
	}
	return k;
}

static int kernel_attach(void *st, char *err, size_t errlen)
{
	struct kernel_family *k = st;
	int e;

	e = tracer__attach_cpu_event(k->faults->progs.handle_fault_minor, PERF_COUNT_SW_PAGE_FAULTS_MIN, 1,
				     "page-fault", "--no-faults", &k->minor, err, errlen);
	e = e ?: tracer__attach_cpu_event(k->faults->progs.handle_fault_major, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1,
					  "page-fault", "--no-faults", &k->major, err, errlen);
	if (e)
		return e;
	k->entry = bpf_program__attach(k->faults->progs.handle_page_fault_user);
	if (!k->entry) {
		e = -errno;
		snprintf(err, errlen, "cannot attach to the page_fault_user tracepoint: %s", strerror(-e));
	}
	return e;
}

static void kernel_describe(void *st, FILE *out)
{
	struct kernel_family *k = st;

	fprintf(out, "  %-22s tp_btf (fault entry: start time)\n", "page_fault_user");
	fprintf(out, "  %-22s perf_event software, %d CPUs (minor-fault completion)\n", "page-faults-min",
		k->minor.attached);
	fprintf(out, "  %-22s perf_event software, %d CPUs (major-fault completion)\n", "page-faults-maj",
		k->major.attached);
}

const struct probe_family family_kernel = {
	.name = "kernel",
	.enabled = kernel_enabled,
	.open = kernel_open,
	.attach = kernel_attach,
	.describe = kernel_describe,
	.free = kernel_free,
};
