// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracer.h"
#include "sched.skel.h"
#include "faults.skel.h"
#include "cuda.skel.h"
#include "python.skel.h"

#define MAX_CPUS 1024

/* The CUDA or Python probes of one file in one process. */
struct uprobe_attachment {
	const char *what;	/* "libcuda", "libpython" */
	__u32 pid;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
	unsigned int nlinks;
	struct bpf_link **links;
};

struct tracer {
	struct sched_bpf *sched;
	struct faults_bpf *faults;
	struct cuda_bpf *cuda;
	struct python_bpf *python;
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

/* Every object after the first: share its maps, then load it. */
static int load_shared(struct bpf_object_skeleton *skel, struct sched_bpf *first, const char *what,
		       const char *off_option, bool verbose, char *err, size_t errlen)
{
	int e = reuse_shared_maps(*skel->obj, first);

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

	if (opts->faults) {
		t->faults = faults_bpf__open();
		e = t->faults ? load_shared(t->faults->skeleton, t->sched, "page-fault", "--no-faults", opts->verbose,
					    err, errlen) :
				open_failed("page-fault", err, errlen);
		if (e)
			goto fail;
	}
	if (opts->cuda) {
		t->cuda = cuda_bpf__open();
		e = t->cuda ? load_shared(t->cuda->skeleton, t->sched, "CUDA", "--no-cuda", opts->verbose, err, errlen) :
			      open_failed("CUDA", err, errlen);
		if (e)
			goto fail;
	}
	if (opts->python) {
		t->python = python_bpf__open();
		e = t->python ? load_shared(t->python->skeleton, t->sched, "Python", "--no-python", opts->verbose, err,
					    errlen) :
				open_failed("Python", err, errlen);
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

int tracer__attach(struct tracer *t, char *err, size_t errlen)
{
	int e;

	e = sched_bpf__attach(t->sched);
	if (e) {
		set_err(err, errlen, "cannot attach the scheduler tracepoints: %s", strerror(-e));
		return e;
	}
	if (t->faults)
		return attach_faults(t, err, errlen);
	return 0;
}

/* The program that decodes a family at entry (one program, cuda_ret,
 * serves every "+ret" family at return). */
static struct bpf_program *cuda_entry_prog(struct cuda_bpf *s, __u8 family)
{
	switch (family) {
	case ISR_CUDA_FAM_LAUNCH:	return s->progs.cuda_launch;
	case ISR_CUDA_FAM_LAUNCH_EX:	return s->progs.cuda_launch_ex;
	case ISR_CUDA_FAM_GRAPH:	return s->progs.cuda_graph;
	case ISR_CUDA_FAM_COPY:		return s->progs.cuda_copy;
	case ISR_CUDA_FAM_COPY_PEER:	return s->progs.cuda_copy_peer;
	case ISR_CUDA_FAM_COPY_2D:	return s->progs.cuda_copy_2d;
	case ISR_CUDA_FAM_COPY_3D:	return s->progs.cuda_copy_3d;
	case ISR_CUDA_FAM_SET:		return s->progs.cuda_set;
	default:			return s->progs.cuda_enter;
	}
}

static void attachment_release(struct uprobe_attachment *a)
{
	unsigned int i;

	for (i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	a->links = NULL;
	a->nlinks = 0;
}

/* Makes room for one more attachment and starts a with no links yet:
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
	a->links = calloc(probes, sizeof(*a->links));
	if (!a->links) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Attaches prog at site s (its return with ret) for pid, into the
 * attachment being built; on failure says which and releases it. */
static int attachment_add(struct uprobe_attachment *a, struct bpf_program *prog, const struct cuda_site *s,
			  bool ret, __u32 pid, const char *path, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret, .bpf_cookie = s->cookie);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, (pid_t)pid, path, s->offset, &uo);
	int e;

	if (!link) {
		e = -errno;
		set_err(err, errlen, "cannot attach the %s of %s (%s, offset %#llx) for pid %u: %s",
			ret ? "uretprobe" : "uprobe", s->name, path, (unsigned long long)s->offset, pid,
			strerror(-e));
		attachment_release(a);
		return e;
	}
	a->links[a->nlinks++] = link;
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
		int ret;

		if (s->kind == CUDA_SITE_ABSENT)
			continue;
		/* The entry program first: a return probe needs the entry's
		 * record, and exactly one entry program per address. */
		for (ret = 0; ret <= (int)s->ret; ret++) {
			e = attachment_add(&a, ret ? t->cuda->progs.cuda_ret : cuda_entry_prog(t->cuda, s->family), s,
					   ret, pid, m->path, err, errlen);
			if (e)
				return e;
		}
	}
	t->att[t->att_count++] = a;
	return 0;
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

			e = attachment_add(&a, prog, s, ret, pid, m->path, err, errlen);
			if (e)
				return e;
		}
	}
	t->att[t->att_count++] = a;
	return 0;
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
	for (i = 0; i < t->att_count; i++)
		fprintf(out, "  %-22s pid %u: %u uprobes/uretprobes on %s\n", t->att[i].what, t->att[i].pid,
			t->att[i].nlinks, t->att[i].path);
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
	for (i = 0; i < (int)t->att_count; i++)
		attachment_release(&t->att[i]);
	free(t->att);
	python_bpf__destroy(t->python);
	cuda_bpf__destroy(t->cuda);
	faults_bpf__destroy(t->faults);
	sched_bpf__destroy(t->sched);
	free(t);
}
