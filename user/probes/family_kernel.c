// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's own events beyond the scheduler's (which the tracer core
 * owns): page faults of the targets on user memory, and their direct
 * reclaim. The fault's start is the page_fault_user tracepoint; its
 * completion, minor or major, a software perf event on every CPU; a
 * reclaim, the vmscan begin and end tracepoints of direct and memory-cgroup
 * reclaim (bpf/faults.bpf.c). A kernel without memory cgroups records
 * direct reclaim only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "family.h"
#include "proc.h"
#include "faults.skel.h"

/* The reclaim tracepoints, begin and end of each kind. */
#define RECLAIM_PROGS 4

struct kernel_family {
	struct tracer *t;
	struct faults_bpf *faults;
	struct cpu_links minor, major;
	struct bpf_link *entry;
	struct bpf_program *reclaim[RECLAIM_PROGS];
	bool reclaim_on[RECLAIM_PROGS];	/* recorded: the kernel has its tracepoint */
	struct bpf_link *reclaim_links[RECLAIM_PROGS];
};

static const char *const reclaim_tps[RECLAIM_PROGS] = {
	"mm_vmscan_direct_reclaim_begin", "mm_vmscan_direct_reclaim_end",
	"mm_vmscan_memcg_reclaim_begin", "mm_vmscan_memcg_reclaim_end",
};

/* Whether the kernel has memory cgroups (CONFIG_MEMCG), and so the
 * memory-cgroup reclaim tracepoints: /proc/cgroups lists its controllers.
 * (Looking the tracepoints up in the kernel's BTF would cost a parse of
 * it, about 90 ms on the project's VM.) */
static bool have_memcg(void)
{
	char *text = NULL, *line;
	bool found = false;
	size_t len;

	if (proc__read_file("/proc/cgroups", &text, &len))
		return false;
	for (line = text; line && *line && !found; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		found = strncmp(line, "memory\t", 7) == 0;
	free(text);
	return found;
}

/* Leaves out the memory-cgroup reclaim programs on a kernel without memory
 * cgroups, before the object loads (a tp_btf program whose tracepoint the
 * kernel lacks would fail the whole object). Direct reclaim's tracepoints
 * are in every kernel with BTF tracepoints. */
static void reclaim_select(struct kernel_family *k)
{
	bool memcg = have_memcg();

	k->reclaim[0] = k->faults->progs.handle_direct_reclaim_begin;
	k->reclaim[1] = k->faults->progs.handle_direct_reclaim_end;
	k->reclaim[2] = k->faults->progs.handle_memcg_reclaim_begin;
	k->reclaim[3] = k->faults->progs.handle_memcg_reclaim_end;
	k->reclaim_on[0] = k->reclaim_on[1] = true;
	k->reclaim_on[2] = k->reclaim_on[3] = memcg;
	bpf_program__set_autoload(k->reclaim[2], memcg);
	bpf_program__set_autoload(k->reclaim[3], memcg);
}

static bool kernel_enabled(const struct record_config *cfg)
{
	return cfg->kernel.page_faults;
}

static void kernel_free(void *st)
{
	struct kernel_family *k = st;

	if (!k)
		return;
	for (int i = 0; i < RECLAIM_PROGS; i++)
		bpf_link__destroy(k->reclaim_links[i]);
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
	k->t = ctx->t;
	k->faults = faults_bpf__open();
	if (k->faults)
		reclaim_select(k);
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
		return e;
	}
	/* ends before begins: a reclaim is recorded only from its start */
	for (int i = RECLAIM_PROGS - 1; i >= 0; i--) {
		if (!k->reclaim_on[i])
			continue;
		k->reclaim_links[i] = bpf_program__attach(k->reclaim[i]);
		if (!k->reclaim_links[i]) {
			e = -errno;
			snprintf(err, errlen, "cannot attach to the %s tracepoint: %s (--no-faults records without "
				 "page faults and reclaim)", reclaim_tps[i], strerror(-e));
			return e;
		}
	}
	return 0;
}

/* The fault programs on (their perf events counting, the entry
 * tracepoint attached) or off (neither: no program runs on a fault). */
static int faults_switch(void *st, bool on)
{
	struct kernel_family *k = st;
	int e = cpu_links__enable(&k->minor, on) ?: cpu_links__enable(&k->major, on);

	if (e || on == !!k->entry)
		return e;
	if (!on) {
		bpf_link__destroy(k->entry);
		k->entry = NULL;
		return 0;
	}
	k->entry = bpf_program__attach(k->faults->progs.handle_page_fault_user);
	return k->entry ? 0 : -errno;
}

/* A traced fault against an untraced one: what the programs cost the
 * faulting thread in all, their firing included (user/record/budget_cost.h). */
static int kernel_measure_costs(void *st, struct tracer_costs *c, char *err, size_t errlen)
{
	struct kernel_family *k = st;
	int e = budget_cost__measure_faults(faults_switch, k, &c->fault_ns);

	if (e)
		snprintf(err, errlen, "cannot measure what tracing a page fault costs here: %s", strerror(-e));
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
	for (int i = 0; i < RECLAIM_PROGS; i++)
		fprintf(out, "  %-22s tp_btf%s\n", reclaim_tps[i] + 10,
			k->reclaim_on[i] ? " (direct reclaim of the targets)" : ": not in this kernel, not recorded");
}

const struct probe_family family_kernel = {
	.name = "kernel",
	.enabled = kernel_enabled,
	.open = kernel_open,
	.attach = kernel_attach,
	.describe = kernel_describe,
	.measure_costs = kernel_measure_costs,
	.switch_faults = faults_switch,
	.free = kernel_free,
};
