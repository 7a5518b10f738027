// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracer.h"
#include "sched.skel.h"
#include "faults.skel.h"
#include "cuda.skel.h"
#include "python.skel.h"
#include "pystack.skel.h"
#include "selfprobe.h"
#include "cupti.skel.h"

#define MAX_CPUS 1024

/*
 * BPF_LINK_CREATE of a uprobe_multi link (Linux 6.6): every site of one
 * program in one file, for one process, in one link. The system's uapi
 * headers and libbpf may predate it, so the attribute is spelled out here
 * as the kernel lays it out (union bpf_attr, link_create).
 */
#define ATTACH_UPROBE_MULTI	TRACER_ATTACH_UPROBE_MULTI
#define UPROBE_MULTI_RETURN	1	/* BPF_F_UPROBE_MULTI_RETURN */

struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

/* The sites of one program in one attachment: one uprobe_multi link. */
struct probe_group {
	struct bpf_program *prog;
	bool ret;
	bool hot;		/* switched on and off by the overhead budget */
	unsigned int n;
	__u64 *offsets;
	__u64 *cookies;
	int fd;			/* the link, -1 while not attached */
};

#define MAX_GROUPS 4	/* programs per library: cuda_hot, cuda_enter, cuda_ret; 3 for Python */

/* The CUDA, Python or GPU-bridge probes of one file in one process. */
struct uprobe_attachment {
	const char *what;	/* "libcuda", "libpython", "cupti bridge" */
	bool gpu;		/* the CUPTI bridge: links[0] gpu_batch, links[1] the flush request */
	__u32 pid;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
	unsigned int nprobes;	/* uprobes + uretprobes, attached or switched off */
	/* one perf-event link per site (kernels without uprobe_multi) */
	unsigned int nlinks;
	struct bpf_link **links;
	/* or one uprobe_multi link per program */
	struct probe_group groups[MAX_GROUPS];
	unsigned int ngroups;
};

struct tracer {
	struct sched_bpf *sched;
	struct faults_bpf *faults;
	struct cuda_bpf *cuda;
	struct python_bpf *python;
	struct cupti_bpf *cupti;
	struct pystack_bpf *pystack;
	struct bpf_link **sample_links;	/* one CPU-clock perf event per CPU */
	int nr_sample_cpus;
	unsigned int py_stacks_hz;
	struct uprobe_attachment *att;	/* CUDA and Python probes, by process and file */
	size_t att_count, att_cap;
	struct ring_buffer *rb;
	tracer_event_fn fn;
	void *ctx;
	int nr_cpus;
	struct bpf_link **links; /* 2 per CPU (minor, major); a link owns its perf fd */
	struct bpf_link *fault_entry_link;
	bool verbose;
	bool faults_attached;
	int nr_fault_cpus;
	__u32 discard_pid;	/* events of this process are not handed on */
	bool multi;		/* uprobes as uprobe_multi links */
	bool hot_on;		/* the hot-path CUDA probes are attached */
};

static bool verbose_log;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || !verbose_log)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	const struct isr_ev_hdr *h = data;

	if (t->discard_pid && size >= sizeof(*h) && h->pid == t->discard_pid)
		return 0;
	return t->fn(t->ctx, data, size);
}

/* A later object reuses the maps that the first one created. */
static int reuse_shared_maps(struct bpf_object *obj, struct sched_bpf *first)
{
	static const char *const names[] = { "targets", "events", "critical", "drops" };
	size_t i;
	int err;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, names[i]);
		struct bpf_map *src = bpf_object__find_map_by_name(first->obj, names[i]);

		if (!m || !src)
			return -ENOENT;
		err = bpf_map__reuse_fd(m, bpf_map__fd(src));
		if (err)
			return err;
	}
	return 0;
}

/* The stack walker's maps (bpf/py_stack.bpf.h), in the object that has
 * them, are the ones the stack sampler created. */
static int reuse_py_maps(struct bpf_object *obj, struct pystack_bpf *sampler)
{
	static const char *const names[] = { "py_procs", "py_tstates", "py_scratch" };
	size_t i;
	int err;

	if (!sampler)
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, names[i]);
		struct bpf_map *src = bpf_object__find_map_by_name(sampler->obj, names[i]);

		if (!m)
			continue;
		if (!src)
			return -ENOENT;
		err = bpf_map__reuse_fd(m, bpf_map__fd(src));
		if (err)
			return err;
	}
	return 0;
}

/* Every object after the first: share its maps, then load it. */
static int load_shared(struct bpf_object_skeleton *skel, struct sched_bpf *first, struct pystack_bpf *sampler,
		       const char *what, const char *off_option, bool verbose, char *err, size_t errlen)
{
	int e = reuse_shared_maps(*skel->obj, first);

	e = e ?: reuse_py_maps(*skel->obj, sampler);

	if (e) {
		set_err(err, errlen, "cannot share maps with the %s BPF object: %s", what, strerror(-e));
		return e;
	}
	e = bpf_object__load_skeleton(skel);
	if (e)
		set_err(err, errlen, "cannot load the %s BPF programs: %s (%s traces without them)%s", what,
			strerror(-e), off_option, verbose ? "" : " (rerun with -v for the verifier's log)");
	return e;
}

/*
 * Whether the kernel has uprobe_multi links (Linux 6.6): a trivial program
 * of that attach type, linked to a path that is no regular file, is refused
 * with EBADF by a kernel that knows the link type and with another error by
 * one that does not.
 */
bool tracer__has_uprobe_multi(void)
{
	struct bpf_insn insns[2];
	struct link_create_uprobe_multi attr;
	__u64 offset = 0;
	int prog_fd, fd;
	bool ok;
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = ATTACH_UPROBE_MULTI);

	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;	/* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "isr_probe_multi", "GPL", insns, 2, &po);
	if (prog_fd < 0)
		return false;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)prog_fd;
	attr.attach_type = ATTACH_UPROBE_MULTI;
	attr.path = (__u64)(unsigned long)"/";
	attr.offsets = (__u64)(unsigned long)&offset;
	attr.cnt = 1;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	ok = fd < 0 && errno == EBADF;
	if (fd >= 0)
		close(fd);
	close(prog_fd);
	return ok;
}

/* Every uprobe program of obj becomes a uprobe_multi program. */
static void use_uprobe_multi(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		bpf_program__set_expected_attach_type(prog, ATTACH_UPROBE_MULTI);
}

static int open_failed(const char *what, char *err, size_t errlen)
{
	int e = -errno;

	set_err(err, errlen, "cannot open the %s BPF object: %s", what, strerror(-e));
	return e;
}

struct tracer *tracer__open(const struct tracer_opts *opts, tracer_event_fn fn, void *ctx,
			    char *err, size_t errlen)
{
	struct tracer *t;
	int e;

	verbose_log = opts->verbose;
	libbpf_set_print(libbpf_print);

	t = calloc(1, sizeof(*t));
	if (!t) {
		set_err(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	t->fn = fn;
	t->ctx = ctx;
	t->verbose = opts->verbose;
	t->hot_on = true;
	t->multi = (opts->cuda || opts->python) && !opts->legacy_uprobes && tracer__has_uprobe_multi();

	t->sched = sched_bpf__open();
	if (!t->sched) {
		e = -errno;
		set_err(err, errlen, "cannot open the scheduler BPF object: %s", strerror(-e));
		goto fail;
	}
	e = bpf_map__set_max_entries(t->sched->maps.events, opts->ringbuf_bytes);
	if (e) {
		set_err(err, errlen, "ring-buffer size %zu rejected: %s (use a power of two of at least 4096)",
			opts->ringbuf_bytes, strerror(-e));
		goto fail;
	}
	t->sched->rodata->follow_children = opts->follow_children;
	e = sched_bpf__load(t->sched);
	if (e) {
		set_err(err, errlen, "cannot load the scheduler BPF programs: %s%s", strerror(-e),
			opts->verbose ? "" : " (rerun with -v for the verifier's log)");
		goto fail;
	}

	if (opts->py_stacks_hz) {
		t->py_stacks_hz = opts->py_stacks_hz;
		t->pystack = pystack_bpf__open();
		e = t->pystack ? load_shared(t->pystack->skeleton, t->sched, NULL, "Python stack", "--no-py-stacks",
					     opts->verbose, err, errlen) :
				 open_failed("Python stack", err, errlen);
		if (e)
			goto fail;
	}
	if (opts->faults) {
		t->faults = faults_bpf__open();
		e = t->faults ? load_shared(t->faults->skeleton, t->sched, NULL, "page-fault", "--no-faults", opts->verbose,
					    err, errlen) :
				open_failed("page-fault", err, errlen);
		if (e)
			goto fail;
	}
	if (opts->cuda) {
		t->cuda = cuda_bpf__open();
		if (t->cuda && t->multi)
			use_uprobe_multi(t->cuda->obj);
		if (t->cuda && t->pystack)
			t->cuda->rodata->py_launch_every = opts->py_launch_every;
		e = t->cuda ? load_shared(t->cuda->skeleton, t->sched, t->pystack, "CUDA", "--no-cuda", opts->verbose,
					  err, errlen) :
			      open_failed("CUDA", err, errlen);
		if (e)
			goto fail;
	}
	if (opts->python) {
		t->python = python_bpf__open();
		if (t->python && t->multi)
			use_uprobe_multi(t->python->obj);
		e = t->python ? load_shared(t->python->skeleton, t->sched, NULL, "Python", "--gil", opts->verbose, err,
					    errlen) :
				open_failed("Python", err, errlen);
		if (e)
			goto fail;
	}

	if (opts->gpu) {
		t->cupti = cupti_bpf__open();
		e = t->cupti ? load_shared(t->cupti->skeleton, t->sched, NULL, "GPU activity (CUPTI bridge)", "--no-cupti",
					   opts->verbose, err, errlen) :
			       open_failed("GPU activity (CUPTI bridge)", err, errlen);
		if (e)
			goto fail;
	}

	t->rb = ring_buffer__new(bpf_map__fd(t->sched->maps.events), on_event, t, NULL);
	if (!t->rb) {
		e = -errno;
		set_err(err, errlen, "cannot map the event ring buffer: %s", strerror(-e));
		goto fail;
	}
	e = ring_buffer__add(t->rb, bpf_map__fd(t->sched->maps.critical), on_event, t);
	if (e) {
		set_err(err, errlen, "cannot map the critical-event ring buffer: %s", strerror(-e));
		goto fail;
	}
	return t;
fail:
	tracer__free(t);
	errno = -e;
	return NULL;
}

int tracer__add_target(struct tracer *t, __u32 pid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(t->sched->maps.targets), &pid, &one, BPF_ANY))
		return -errno;
	return 0;
}

int tracer__remove_target(struct tracer *t, __u32 pid)
{
	if (bpf_map_delete_elem(bpf_map__fd(t->sched->maps.targets), &pid) && errno != ENOENT)
		return -errno;
	return 0;
}

static int open_fault_counter(__u64 config, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.sample_period = 1;
	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_faults(struct tracer *t, char *err, size_t errlen)
{
	int cpu, i, e;

	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus <= 0 || t->nr_cpus > MAX_CPUS) {
		set_err(err, errlen, "cannot count the CPUs: %s", strerror(t->nr_cpus < 0 ? -t->nr_cpus : EINVAL));
		return t->nr_cpus < 0 ? t->nr_cpus : -EINVAL;
	}
	t->links = calloc(2 * t->nr_cpus, sizeof(*t->links));
	if (!t->links) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}

	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		for (i = 0; i < 2; i++) {
			struct bpf_program *prog = i ? t->faults->progs.handle_fault_major :
						       t->faults->progs.handle_fault_minor;
			int fd = open_fault_counter(i ? PERF_COUNT_SW_PAGE_FAULTS_MAJ :
							PERF_COUNT_SW_PAGE_FAULTS_MIN, cpu);

			if (fd < 0) {
				if (errno == ENODEV)	/* CPU offline */
					continue;
				e = -errno;
				set_err(err, errlen, "cannot open the page-fault perf event on CPU %d: %s",
					cpu, strerror(-e));
				return e;
			}
			t->links[2 * cpu + i] = bpf_program__attach_perf_event(prog, fd);
			if (!t->links[2 * cpu + i]) {
				e = -errno;
				close(fd);
				set_err(err, errlen, "cannot attach to the page-fault perf event on CPU %d: %s",
					cpu, strerror(-e));
				return e;
			}
		}
		t->nr_fault_cpus++;
	}
	t->fault_entry_link = bpf_program__attach(t->faults->progs.handle_page_fault_user);
	if (!t->fault_entry_link) {
		e = -errno;
		set_err(err, errlen, "cannot attach to the page_fault_user tracepoint: %s", strerror(-e));
		return e;
	}
	t->faults_attached = true;
	return 0;
}

/* One CPU-clock perf event per CPU, sampling every 1/hz s of CPU time,
 * each running py_sample. */
static int attach_sampler(struct tracer *t, char *err, size_t errlen)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, e;

	if (ncpu <= 0 || ncpu > MAX_CPUS) {
		set_err(err, errlen, "cannot count the CPUs: %s", strerror(ncpu < 0 ? -ncpu : EINVAL));
		return ncpu < 0 ? ncpu : -EINVAL;
	}
	t->sample_links = calloc(ncpu, sizeof(*t->sample_links));
	if (!t->sample_links) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->nr_sample_cpus = ncpu;
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.type = PERF_TYPE_SOFTWARE;
		attr.size = sizeof(attr);
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = 1000000000ULL / t->py_stacks_hz;
		fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)	/* CPU offline */
				continue;
			e = -errno;
			set_err(err, errlen, "cannot open the CPU-clock perf event on CPU %d for Python stacks: %s "
				"(--no-py-stacks records without them)", cpu, strerror(-e));
			return e;
		}
		t->sample_links[cpu] = bpf_program__attach_perf_event(t->pystack->progs.py_sample, fd);
		if (!t->sample_links[cpu]) {
			e = -errno;
			close(fd);
			set_err(err, errlen, "cannot attach the Python stack sampler on CPU %d: %s", cpu, strerror(-e));
			return e;
		}
	}
	return 0;
}

int tracer__attach(struct tracer *t, char *err, size_t errlen)
{
	int e;

	e = sched_bpf__attach(t->sched);
	if (e) {
		set_err(err, errlen, "cannot attach the scheduler tracepoints: %s", strerror(-e));
		return e;
	}
	if (t->pystack) {
		e = attach_sampler(t, err, errlen);
		if (e)
			return e;
	}
	if (t->faults)
		return attach_faults(t, err, errlen);
	return 0;
}

int tracer__set_py_layout(struct tracer *t, __u32 pid, const struct isr_py_layout *l)
{
	if (!t->pystack)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(t->pystack->maps.py_procs), &pid, l, BPF_ANY))
		return -errno;
	return 0;
}

int tracer__clear_py_layout(struct tracer *t, __u32 pid)
{
	if (!t->pystack)
		return 0;
	if (bpf_map_delete_elem(bpf_map__fd(t->pystack->maps.py_procs), &pid) && errno != ENOENT)
		return -errno;
	return 0;
}

int tracer__uprobe_multi_link(struct bpf_program *prog, const char *path, const __u64 *offsets,
			      const __u64 *cookies, unsigned int n, bool ret, __u32 pid)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)bpf_program__fd(prog);
	attr.attach_type = ATTACH_UPROBE_MULTI;
	attr.path = (__u64)(unsigned long)path;
	attr.offsets = (__u64)(unsigned long)offsets;
	attr.cookies = (__u64)(unsigned long)cookies;
	attr.cnt = n;
	attr.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	attr.pid = pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static int group_attach(struct probe_group *g, __u32 pid, const char *path)
{
	int fd = tracer__uprobe_multi_link(g->prog, path, g->offsets, g->cookies, g->n, g->ret, pid);

	if (fd < 0)
		return fd;
	g->fd = fd;
	return 0;
}

static void group_detach(struct probe_group *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}

static void attachment_release(struct uprobe_attachment *a)
{
	unsigned int i;

	for (i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	a->links = NULL;
	a->nlinks = 0;
	for (i = 0; i < a->ngroups; i++) {
		group_detach(&a->groups[i]);
		free(a->groups[i].offsets);
		free(a->groups[i].cookies);
	}
	a->ngroups = 0;
}

/* Makes room for one more attachment and starts a with no probes yet:
 * 0, -EALREADY when the file (dev, ino) is already probed for pid, or
 * -ENOMEM with err filled. */
static int attachment_begin(struct tracer *t, struct uprobe_attachment *a, const char *what, __u32 pid,
			    dev_t dev, ino_t ino, const char *path, unsigned int probes, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < t->att_count; i++)
		if (t->att[i].pid == pid && t->att[i].dev == dev && t->att[i].ino == ino)
			return -EALREADY;
	if (t->att_count == t->att_cap) {
		size_t cap = t->att_cap ? 2 * t->att_cap : 16;
		struct uprobe_attachment *n = realloc(t->att, cap * sizeof(*n));

		if (!n) {
			set_err(err, errlen, "out of memory");
			return -ENOMEM;
		}
		t->att = n;
		t->att_cap = cap;
	}
	memset(a, 0, sizeof(*a));
	a->what = what;
	a->pid = pid;
	a->dev = dev;
	a->ino = ino;
	snprintf(a->path, sizeof(a->path), "%s", path);
	if (!t->multi) {
		a->links = calloc(probes, sizeof(*a->links));
		if (!a->links) {
			set_err(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

/* Adds prog at site s (its return with ret) to the attachment being built:
 * attached at once as a perf-event uprobe, or queued in the program's
 * uprobe_multi group. On failure says which and releases a. */
static int attachment_add(struct tracer *t, struct uprobe_attachment *a, struct bpf_program *prog,
			  const struct cuda_site *s, bool ret, bool hot, char *err, size_t errlen)
{
	struct probe_group *g = NULL;
	unsigned int i;
	int e;

	a->nprobes++;
	if (!t->multi) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret, .bpf_cookie = s->cookie);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, (pid_t)a->pid, a->path, s->offset, &uo);

		if (!link) {
			e = -errno;
			set_err(err, errlen, "cannot attach the %s of %s (%s, offset %#llx) for pid %u: %s",
				ret ? "uretprobe" : "uprobe", s->name, a->path, (unsigned long long)s->offset,
				a->pid, strerror(-e));
			attachment_release(a);
			return e;
		}
		a->links[a->nlinks++] = link;
		return 0;
	}
	for (i = 0; i < a->ngroups && !g; i++)
		if (a->groups[i].prog == prog && a->groups[i].ret == ret)
			g = &a->groups[i];
	if (!g) {
		if (a->ngroups == MAX_GROUPS) {
			set_err(err, errlen, "too many probe programs for %s", a->path);
			attachment_release(a);
			return -E2BIG;
		}
		g = &a->groups[a->ngroups++];
		memset(g, 0, sizeof(*g));
		g->prog = prog;
		g->ret = ret;
		g->hot = hot;
		g->fd = -1;
		g->offsets = calloc(ISR_CUDA_FN_MAX, sizeof(*g->offsets));
		g->cookies = calloc(ISR_CUDA_FN_MAX, sizeof(*g->cookies));
		if (!g->offsets || !g->cookies) {
			set_err(err, errlen, "out of memory");
			attachment_release(a);
			return -ENOMEM;
		}
	}
	if (g->n == ISR_CUDA_FN_MAX) {
		set_err(err, errlen, "too many probe sites for %s", a->path);
		attachment_release(a);
		return -E2BIG;
	}
	g->offsets[g->n] = s->offset;
	g->cookies[g->n] = s->cookie;
	g->n++;
	return 0;
}

/* Keeps a among the attachments, attaching its uprobe_multi groups first
 * (its perf-event uprobes are attached already): entries before returns (a
 * return program reads what its entry kept), the hot ones only while the
 * budget has them on. All or nothing. */
static int attachment_commit(struct tracer *t, struct uprobe_attachment *a, char *err, size_t errlen)
{
	unsigned int pass, i;
	int e;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < a->ngroups; i++) {
			struct probe_group *g = &a->groups[i];

			if (g->ret != (pass == 1) || (g->hot && !t->hot_on))
				continue;
			e = group_attach(g, a->pid, a->path);
			if (e) {
				set_err(err, errlen, "cannot attach the %u %s of %s for pid %u (%s): %s", g->n,
					g->ret ? "uretprobes" : "uprobes", bpf_program__name(g->prog), a->pid,
					a->path, strerror(-e));
				attachment_release(a);
				return e;
			}
		}
	}
	t->att[t->att_count++] = *a;
	return 0;
}

int tracer__attach_cuda(struct tracer *t, __u32 pid, const struct cuda_mapping *m, char *err, size_t errlen)
{
	const struct cuda_lib *lib = m->lib;
	struct uprobe_attachment a;
	size_t i;
	int e;

	if (!t->cuda) {
		set_err(err, errlen, "the CUDA probes are not loaded");
		return -ENOENT;
	}
	e = attachment_begin(t, &a, "libcuda", pid, lib->dev, lib->ino, m->path, lib->probes, err, errlen);
	if (e)
		return e;
	for (i = 1; i < ISR_CUDA_FN_MAX; i++) {
		const struct cuda_site *s = &lib->sites[i];
		bool hot = ISR_CUDA_FAM_ENTRY_ONLY(s->family);

		if (s->kind == CUDA_SITE_ABSENT)
			continue;
		/* cuda_hot decodes the entry-only families, cuda_enter and
		 * cuda_ret the "+ret" ones; the entry program first: a return
		 * probe needs the entry's record. */
		e = attachment_add(t, &a, hot ? t->cuda->progs.cuda_hot : t->cuda->progs.cuda_enter, s, false, hot,
				   err, errlen);
		if (!e && s->ret)
			e = attachment_add(t, &a, t->cuda->progs.cuda_ret, s, true, false, err, errlen);
		if (e)
			return e;
	}
	return attachment_commit(t, &a, err, errlen);
}

int tracer__attach_python(struct tracer *t, __u32 pid, const struct py_mapping *m, char *err, size_t errlen)
{
	const struct py_lib *lib = m->lib;
	struct uprobe_attachment a;
	int k, ret, e;

	if (!t->python) {
		set_err(err, errlen, "the Python probes are not loaded");
		return -ENOENT;
	}
	e = attachment_begin(t, &a, "libpython", pid, lib->dev, lib->ino, m->path, lib->probes, err, errlen);
	if (e)
		return e;
	for (k = 0; k < PY_SITES; k++) {
		const struct cuda_site *s = &lib->sites[k];

		/* The entry program first: the return reads what it kept. */
		for (ret = 0; ret <= (int)s->ret; ret++) {
			struct bpf_program *prog = k == PY_SITE_SAVE ? t->python->progs.gil_save_enter :
						   ret ? t->python->progs.gil_restore_ret :
							 t->python->progs.gil_restore_enter;

			e = attachment_add(t, &a, prog, s, ret, false, err, errlen);
			if (e)
				return e;
		}
	}
	return attachment_commit(t, &a, err, errlen);
}

bool tracer__can_switch_hot(const struct tracer *t)
{
	return t->multi && t->cuda;
}

int tracer__set_hot(struct tracer *t, bool on, char *err, size_t errlen)
{
	size_t i;
	unsigned int k;
	int e, first = 0;

	if (!tracer__can_switch_hot(t)) {
		set_err(err, errlen, "the hot-path probes can only be switched as uprobe_multi links (Linux 6.6+)");
		return -EOPNOTSUPP;
	}
	t->hot_on = on;
	for (i = 0; i < t->att_count; i++) {
		struct uprobe_attachment *a = &t->att[i];

		for (k = 0; k < a->ngroups; k++) {
			struct probe_group *g = &a->groups[k];

			if (!g->hot)
				continue;
			if (!on) {
				group_detach(g);
				continue;
			}
			if (g->fd >= 0)
				continue;
			e = group_attach(g, a->pid, a->path);
			/* A process that is exiting keeps the others traced. */
			if (e && e != -ESRCH && !first) {
				first = e;
				set_err(err, errlen, "cannot attach the %u hot-path uprobes of %s for pid %u: %s",
					g->n, a->path, a->pid, strerror(-e));
			}
		}
	}
	return first;
}

#define COST_CALLS	1001
#define COST_GAP_NS	20000

static double mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The mean of the first n of v. */
static double mean_of(const double *v, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : 0;
}

/* ns per call of the executable's own cuLaunchKernel: the mean of
 * COST_CALLS calls timed one by one, each after COST_GAP_NS of other work,
 * as a job's launches come between its own work (a call in a tight loop
 * finds the trap path hot in the caches and costs less: 660 against 690-855
 * ns per hit on an H200 host). A mean, not a median: a job loses the mean,
 * and the slower hits (the trap path partly out of the caches) are part of
 * it; the slowest 10% are left out, where an interrupt or a preemption
 * inside the timing (a busy host) would count as probe cost. */
static double time_self_launches(double *v)
{
	int i;

	for (i = 0; i < COST_CALLS; i++) {
		double t = mono_ns(), a, b;

		while (mono_ns() - t < COST_GAP_NS)
			;
		a = mono_ns();
		cuLaunchKernel((void *)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		b = mono_ns();
		v[i] = b - a;
	}
	qsort(v, COST_CALLS, sizeof(*v), cmp_double);
	return mean_of(v, COST_CALLS - COST_CALLS / 10);
}

int tracer__measure_hit_cost(struct tracer *t, double *hit_ns, char *err, size_t errlen)
{
	static const char self[] = "/proc/self/exe";
	struct probe_group g;
	const struct cuda_lib *lib;
	struct cuda_libs *libs;
	__u32 pid = (__u32)getpid();
	double probed, plain, *v;
	int e;

	if (!tracer__can_switch_hot(t)) {
		set_err(err, errlen, "the hot-path probes cannot be switched on this kernel (no uprobe_multi links)");
		return -EOPNOTSUPP;
	}
	v = calloc(COST_CALLS, sizeof(*v));
	libs = cuda_libs__new();
	if (!libs || !v) {
		e = libs ? -ENOMEM : -errno;
		set_err(err, errlen, "cannot set up the ELF reader: %s", strerror(-e));
		cuda_libs__free(libs);
		free(v);
		return e;
	}
	lib = cuda_libs__resolve(libs, self, err, errlen);
	if (!lib || lib->sites[ISR_CUDA_FN_cuLaunchKernel].kind == CUDA_SITE_ABSENT) {
		e = lib ? -ENOENT : -errno;
		if (lib)
			set_err(err, errlen, "the executable has no cuLaunchKernel of its own to measure");
		cuda_libs__free(libs);
		free(v);
		return e;
	}
	memset(&g, 0, sizeof(g));
	g.prog = t->cuda->progs.cuda_hot;
	g.n = 1;
	g.offsets = (__u64 *)&lib->sites[ISR_CUDA_FN_cuLaunchKernel].offset;
	g.cookies = (__u64 *)&lib->sites[ISR_CUDA_FN_cuLaunchKernel].cookie;
	g.fd = -1;
	e = tracer__add_target(t, pid);
	if (!e)
		e = group_attach(&g, pid, self);
	if (e) {
		set_err(err, errlen, "cannot probe the executable's own cuLaunchKernel: %s", strerror(-e));
	} else {
		probed = time_self_launches(v);
		group_detach(&g);
		plain = time_self_launches(v);
		*hit_ns = probed > plain ? probed - plain : 0;
	}
	tracer__remove_target(t, pid);
	/* Its events are no target's. */
	t->discard_pid = pid;
	ring_buffer__consume(t->rb);
	t->discard_pid = 0;
	cuda_libs__free(libs);
	free(v);
	return e;
}

int tracer__attach_gpu(struct tracer *t, __u32 pid, const char *path, char *err, size_t errlen)
{
	struct uprobe_attachment a;
	struct bpf_link *link;
	struct stat sb;
	int e;

	if (!t->cupti) {
		set_err(err, errlen, "the GPU activity probes are not loaded");
		return -ENOENT;
	}
	if (stat(path, &sb)) {
		e = -errno;
		set_err(err, errlen, "cannot find the CUPTI bridge %s: %s", path, strerror(-e));
		return e;
	}
	e = attachment_begin(t, &a, "cupti bridge", pid, sb.st_dev, sb.st_ino, path, 2, err, errlen);
	if (e)
		return e;
	a.gpu = true;
	/* USDT links are perf-event uprobes, whatever the CUDA probes use. */
	if (!a.links && !(a.links = calloc(2, sizeof(*a.links)))) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	link = bpf_program__attach_usdt(t->cupti->progs.gpu_batch, (pid_t)pid, path, "inferscope", "gpu_batch",
					NULL);
	if (!link) {
		e = -errno;
		set_err(err, errlen, "cannot attach to the USDT probe inferscope:gpu_batch of %s for pid %u: %s (is it "
			"a libinferscope_cupti.so of this version?)", path, pid, strerror(-e));
		attachment_release(&a);
		return e;
	}
	a.links[a.nlinks++] = link;
	a.nprobes = 1;
	return attachment_commit(t, &a, err, errlen);
}

int tracer__attach_gpu_if_mapped(struct tracer *t, __u32 pid, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	int e = cupti_bridge__mapped(pid, path, sizeof(path));

	if (e <= 0)
		return e;
	e = tracer__attach_gpu(t, pid, path, err, errlen);
	if (e == -EALREADY)
		return 2;
	return e ? e : 1;
}

int tracer__request_gpu_flush(struct tracer *t, char *err, size_t errlen)
{
	int asked = 0, e = 0;
	size_t i;

	for (i = 0; i < t->att_count; i++) {
		struct uprobe_attachment *a = &t->att[i];
		struct bpf_link *link;

		if (!a->gpu || a->nlinks != 1 || kill((pid_t)a->pid, 0))
			continue;
		link = bpf_program__attach_usdt(t->cupti->progs.gpu_flush_request, (pid_t)a->pid, a->path,
						"inferscope", "gpu_flush", NULL);
		/* A process that exited (a zombie answers kill) flushed at
		 * its exit (the bridge's atexit handler). */
		if (!link && errno == ESRCH)
			continue;
		if (!link) {
			e = -errno;
			set_err(err, errlen, "cannot ask the CUPTI bridge of pid %u to flush (USDT inferscope:gpu_flush "
				"of %s): %s; GPU activity of its last second may be missing", a->pid, a->path,
				strerror(-e));
			continue;
		}
		a->links[a->nlinks++] = link;
		a->nprobes++;
		asked++;
	}
	return asked ? asked : e;
}

void tracer__prune_uprobes(struct tracer *t)
{
	int fd = t->sched ? bpf_map__fd(t->sched->maps.targets) : -1;
	size_t i = 0;
	__u8 v;

	while (i < t->att_count) {
		struct uprobe_attachment *a = &t->att[i];

		/* Still a target, or gone from the targets but not yet reaped:
		 * unregistering a uprobe waits for the lock of every address
		 * space that maps the file, and a dying CUDA process holds its
		 * own for seconds while the driver tears its context down. */
		if (bpf_map_lookup_elem(fd, &a->pid, &v) == 0 || kill((pid_t)a->pid, 0) == 0) {
			i++;
			continue;
		}
		attachment_release(a);
		t->att[i] = t->att[--t->att_count];
	}
}

int tracer__poll(struct tracer *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms), m;

	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/* Bulk events never wake us (see submit_bulk in bpf/common.bpf.h):
	 * collect whatever arrived quietly since the last call. */
	m = ring_buffer__consume(t->rb);
	return m < 0 ? m : n + m;
}

int tracer__drain(struct tracer *t)
{
	return ring_buffer__consume(t->rb);
}

int tracer__read_drops(struct tracer *t, __u64 *drops)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(t->sched->maps.drops);
	__u64 *vals;
	__u32 src;
	int cpu;

	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (src = 0; src < ISR_SRC_MAX; src++) {
		drops[src] = 0;
		if (src == ISR_SRC_WRITER)
			continue; /* the recorder's own */
		if (bpf_map_lookup_elem(fd, &src, vals)) {
			int e = -errno;

			free(vals);
			return e;
		}
		for (cpu = 0; cpu < ncpu; cpu++)
			drops[src] += vals[cpu];
	}
	free(vals);
	return 0;
}

int tracer__targets(struct tracer *t, __u32 *pids, size_t max)
{
	int fd = bpf_map__fd(t->sched->maps.targets);
	__u32 key, next;
	size_t n = 0;
	int e;

	e = bpf_map_get_next_key(fd, NULL, &next);
	while (e == 0) {
		if (n < max)
			pids[n] = next;
		n++;
		key = next;
		e = bpf_map_get_next_key(fd, &key, &next);
	}
	if (errno != ENOENT)
		return -errno;
	return (int)(n < max ? n : max);
}

void tracer__describe(const struct tracer *t, FILE *out)
{
	static const char *const sched_tps[] = { "sched_switch", "sched_wakeup", "sched_wakeup_new",
						 "sched_process_fork", "sched_process_exec",
						 "sched_process_exit", "task_rename" };
	size_t i;

	for (i = 0; i < sizeof(sched_tps) / sizeof(sched_tps[0]); i++)
		fprintf(out, "  %-22s tp_btf (BTF tracepoint)\n", sched_tps[i]);
	if (t->faults_attached) {
		fprintf(out, "  %-22s tp_btf (fault entry: start time)\n", "page_fault_user");
		fprintf(out, "  %-22s perf_event software, %d CPUs (minor-fault completion)\n",
			"page-faults-min", t->nr_fault_cpus);
		fprintf(out, "  %-22s perf_event software, %d CPUs (major-fault completion)\n",
			"page-faults-maj", t->nr_fault_cpus);
	}
	if (t->sample_links)
		fprintf(out, "  %-22s perf_event cpu-clock, %d CPUs, %u Hz (Python stacks)\n", "py-stacks",
			t->nr_sample_cpus, t->py_stacks_hz);
	for (i = 0; i < t->att_count; i++)
		fprintf(out, "  %-22s pid %u: %u uprobes/uretprobes on %s (%s)\n", t->att[i].what, t->att[i].pid,
			t->att[i].nprobes, t->att[i].path,
			t->att[i].gpu ? "USDT, perf-event uprobes" :
			t->multi ? "uprobe_multi links" : "one perf-event uprobe each");
}

void tracer__free(struct tracer *t)
{
	int i;

	if (!t)
		return;
	ring_buffer__free(t->rb);
	bpf_link__destroy(t->fault_entry_link);
	if (t->links) {
		for (i = 0; i < 2 * t->nr_cpus; i++)
			bpf_link__destroy(t->links[i]);
		free(t->links);
	}
	if (t->sample_links) {
		for (i = 0; i < t->nr_sample_cpus; i++)
			bpf_link__destroy(t->sample_links[i]);
		free(t->sample_links);
	}
	/* The CUPTI bridges first: their semaphores drop at once and they go
	 * dormant, before the seconds that releasing hundreds of CUDA uprobes
	 * takes (one RCU grace period each). */
	for (i = 0; i < (int)t->att_count; i++)
		if (t->att[i].gpu)
			attachment_release(&t->att[i]);
	for (i = 0; i < (int)t->att_count; i++)
		if (!t->att[i].gpu)
			attachment_release(&t->att[i]);
	free(t->att);
	cupti_bpf__destroy(t->cupti);
	python_bpf__destroy(t->python);
	pystack_bpf__destroy(t->pystack);
	cuda_bpf__destroy(t->cuda);
	faults_bpf__destroy(t->faults);
	sched_bpf__destroy(t->sched);
	free(t);
}
