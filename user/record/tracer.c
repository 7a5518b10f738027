// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "buf.h"
#include "proc.h"
#include "tracer.h"
#include "kernel_btf.h"
#include "sched.skel.h"
#include "hold.skel.h"

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
	__u8 sw;		/* enum tracer_switch: what switches it */
	unsigned int n;
	__u64 *offsets;
	__u64 *cookies;
	int fd;			/* the link, -1 while not attached */
};

#define MAX_GROUPS 8	/* program and switch pairs per file: cuda_hot (hot path, copies), cuda_copy_ret, cuda_enter, cuda_ret, cuda_learn_enter, cuda_learn_ret; 3 for Python */
#define MAX_SITES 256	/* probe sites per file */
#define MAX_SHARED 8	/* objects whose maps later objects share */
#define MAX_LOADERS 16	/* dynamic loader files watched (bpf/hold.bpf.c) */

/* The probes of one file in one process: uprobes, or USDT links. */
struct uprobe_attachment {
	const char *what;	/* "libcuda", "libpython", "cupti bridge" */
	bool usdt;		/* USDT links (perf-event uprobes), released first */
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

/*
 * Releasing a uprobe waits for an RCU grace period (about 50 ms a link
 * here): the links of processes that are gone are released by a thread of
 * their own, so that the loop that answers holds and drains the ring
 * buffers never waits for them.
 */
struct link_closer {
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int *fds;			/* uprobe_multi links */
	size_t nfds, fds_cap;
	struct bpf_link **links;	/* perf-event uprobes */
	size_t nlinks, links_cap;
};

/* Maps of names that objects loaded later reuse. */
struct shared_maps {
	struct bpf_object *obj;
	const char *const *names;
	size_t n;
};

struct tracer {
	struct sched_bpf *sched;	/* owns the maps every object shares */
	struct shared_maps shared[MAX_SHARED];
	size_t nshared;
	pthread_mutex_t shared_lock;	/* families load on threads of their own */
	struct uprobe_attachment *att;	/* uprobes and USDT links, by process and file */
	size_t att_count, att_cap;
	struct ring_buffer *rb;
	tracer_event_fn fn;
	void *ctx;
	bool verbose;
	__u32 discard_pid;	/* events of this process are not handed on */
	bool multi;		/* uprobes as uprobe_multi links */
	bool on[TRACER_SWITCHES];	/* the sites each switch switches are attached */
	/* the holds (bpf/hold.bpf.h): the object of those that are not
	 * the scheduler's, what the kernel supports, the loaders watched */
	struct hold_bpf *hold;
	bool hold_lib, hold_fork;
	bool follow_children;
	pthread_t hold_thread;		/* loading the hold object (hold_wait) */
	bool hold_loading;		/* on hold_thread */
	__u32 task_fsbase_off;		/* tracer__task_fsbase_offset */
	struct bpf_link *hold_fork_link;
	char hold_note[256];		/* why the hold object could not load; "" */
	struct { dev_t dev; ino_t ino; int fd; } loaders[MAX_LOADERS];
	size_t nloaders;
	struct link_closer closer;
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

/* The maps of obj named as one of the shared ones become those. */
static int reuse_maps(struct bpf_object *obj, const struct shared_maps *src)
{
	size_t i;
	int err;

	for (i = 0; i < src->n; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, src->names[i]);
		struct bpf_map *from = bpf_object__find_map_by_name(src->obj, src->names[i]);

		if (!m)
			continue;
		if (!from)
			return -ENOENT;
		err = bpf_map__reuse_fd(m, bpf_map__fd(from));
		if (err)
			return err;
	}
	return 0;
}

int tracer__map_fd(const struct tracer *t, const char *name)
{
	const struct bpf_map *m = bpf_object__find_map_by_name(t->sched->obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

int tracer__share_maps(struct tracer *t, struct bpf_object *obj, const char *const *names, size_t n)
{
	int e = 0;

	pthread_mutex_lock(&t->shared_lock);
	if (t->nshared == MAX_SHARED) {
		e = -E2BIG;
	} else {
		t->shared[t->nshared].obj = obj;
		t->shared[t->nshared].names = names;
		t->shared[t->nshared].n = n;
		t->nshared++;
	}
	pthread_mutex_unlock(&t->shared_lock);
	return e;
}

int tracer__load(struct tracer *t, struct bpf_object_skeleton *skel, const char *what, const char *off_option,
		 char *err, size_t errlen)
{
	struct shared_maps shared[MAX_SHARED];
	size_t i, n;
	int e = 0;

	if (!skel) {
		e = -(errno ?: ENOMEM);
		set_err(err, errlen, "cannot open the %s BPF object: %s", what, strerror(-e));
		return e;
	}
	/* what was shared so far: a family that shares maps with another
	 * loads after it (struct probe_family after) */
	pthread_mutex_lock(&t->shared_lock);
	n = t->nshared;
	memcpy(shared, t->shared, n * sizeof(*shared));
	pthread_mutex_unlock(&t->shared_lock);
	for (i = 0; i < n && !e; i++)
		e = reuse_maps(*skel->obj, &shared[i]);
	if (e) {
		set_err(err, errlen, "cannot share maps with the %s BPF object: %s", what, strerror(-e));
		return e;
	}
	e = bpf_object__load_skeleton(skel);
	if (e)
		set_err(err, errlen, "cannot load the %s BPF programs: %s (%s traces without them)%s", what,
			strerror(-e), off_option, t->verbose ? "" : " (rerun with -v for the verifier's log)");
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

bool tracer__uprobe_multi(const struct tracer *t)
{
	return t->multi;
}

/* Every uprobe program of obj becomes a uprobe_multi program. */
void tracer__use_uprobe_multi(const struct tracer *t, struct bpf_object *obj)
{
	struct bpf_program *prog;

	if (!t->multi)
		return;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_expected_attach_type(prog, ATTACH_UPROBE_MULTI);
}

__u32 tracer__task_fsbase_offset(const struct tracer *t)
{
	return t->task_fsbase_off;
}

/*
 * What the kernel's BTF tells, read once: whether the kernel has the
 * bpf_send_signal_task kfunc (Linux 6.13: the hold of a forked child), and
 * where a task keeps its fs base (tracer__task_fsbase_offset). Read on a
 * thread of its own while the scheduler's object loads.
 */
static void *kernel_facts(void *arg)
{
	struct tracer *t = arg;
	struct btf *vmlinux = btf__load_vmlinux_btf();

	t->hold_fork = !libbpf_get_error(vmlinux) &&
		       btf__find_by_name_kind(vmlinux, "bpf_send_signal_task", BTF_KIND_FUNC) > 0;
	if (!libbpf_get_error(vmlinux)) {
		long fs = kernel_btf__offset(vmlinux, "task_struct", "thread.fsbase");

		t->task_fsbase_off = fs > 0 ? (__u32)fs : 0;
		btf__free(vmlinux);
	}
	return NULL;
}

/*
 * The holds' own object (bpf/hold.bpf.c), on the scheduler's maps: the
 * loader watch where uprobes are uprobe_multi links (it reads the address
 * it was hit at), the hold of a forked child where the kernel has the
 * bpf_send_signal_task kfunc. Without either, targets are still held at
 * their exec (the scheduler's program); a refusal is kept in hold_note,
 * for tracer__attach to tell. Loaded on a thread of its own while the
 * families load (hold_wait waits for it).
 */
static void *hold_open(void *arg)
{
	struct tracer *t = arg;
	int e;

	t->hold_lib = t->multi;
	t->hold = hold_bpf__open();
	if (t->hold) {
		t->hold->rodata->follow_children = t->follow_children;
		bpf_program__set_autoload(t->hold->progs.hold_dlopen, t->hold_lib);
		bpf_program__set_autoload(t->hold->progs.hold_fork, t->hold_fork);
		bpf_program__set_autoattach(t->hold->progs.hold_dlopen, false);
		if (t->multi)
			bpf_program__set_expected_attach_type(t->hold->progs.hold_dlopen, ATTACH_UPROBE_MULTI);
	}
	e = tracer__load(t, t->hold ? t->hold->skeleton : NULL, "hold", "the recording", t->hold_note,
			 sizeof(t->hold_note));
	if (e)
		t->hold_lib = t->hold_fork = false;
	return NULL;
}

/* The hold object loaded (hold_open): waited for by whatever reads its
 * state. */
static void hold_wait(struct tracer *t)
{
	if (t->hold_loading)
		pthread_join(t->hold_thread, NULL);
	t->hold_loading = false;
}

struct tracer *tracer__open(const struct record_config *cfg, tracer_event_fn fn, void *ctx, char *err, size_t errlen)
{
	static const char *const core_maps[] = { "targets", "events", "critical", "drops", "hold_ctl", "held" };
	struct tracer *t;
	pthread_t facts;
	bool facts_thread;
	int e;

	verbose_log = cfg->verbose;
	libbpf_set_print(libbpf_print);

	t = calloc(1, sizeof(*t));
	if (!t) {
		set_err(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->shared_lock, NULL);
	t->fn = fn;
	t->ctx = ctx;
	t->verbose = cfg->verbose;
	t->follow_children = cfg->targets.follow_children;
	for (int k = 0; k < TRACER_SWITCHES; k++)
		t->on[k] = true;
	t->multi = !cfg->tracer.legacy_uprobes && tracer__has_uprobe_multi();
	facts_thread = !pthread_create(&facts, NULL, kernel_facts, t);

	t->sched = sched_bpf__open();
	e = t->sched ? 0 : -errno;
	if (e)
		set_err(err, errlen, "cannot open the scheduler BPF object: %s", strerror(-e));
	e = e ?: bpf_map__set_max_entries(t->sched->maps.events, cfg->tracer.ringbuf_bytes);
	if (e && t->sched)
		set_err(err, errlen, "ring-buffer size %zu rejected: %s (use a power of two of at least 4096)",
			cfg->tracer.ringbuf_bytes, strerror(-e));
	if (!e) {
		t->sched->rodata->follow_children = cfg->targets.follow_children;
		e = sched_bpf__load(t->sched);
		if (e)
			set_err(err, errlen, "cannot load the scheduler BPF programs: %s%s", strerror(-e),
				cfg->verbose ? "" : " (rerun with -v for the verifier's log)");
	}
	if (facts_thread)
		pthread_join(facts, NULL);
	else
		kernel_facts(t);
	if (e)
		goto fail;
	tracer__share_maps(t, t->sched->obj, core_maps, sizeof(core_maps) / sizeof(core_maps[0]));

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
	t->hold_loading = !pthread_create(&t->hold_thread, NULL, hold_open, t);
	if (!t->hold_loading)
		hold_open(t);	/* no thread: here */
	return t;
fail:
	tracer__free(t);
	errno = -e;
	return NULL;
}

int tracer__add_target(struct tracer *t, __u32 pid, bool named)
{
	__u8 v = ISR_TARGET | (named ? ISR_TARGET_NO_HOLD : 0);

	if (bpf_map_update_elem(bpf_map__fd(t->sched->maps.targets), &pid, &v, BPF_ANY))
		return -errno;
	return 0;
}

/* pid has uprobes of its own now: a child it forks is held until it has
 * its own (bpf/hold.bpf.h). A process that is no target is left alone. */
static void mark_armed(struct tracer *t, __u32 pid)
{
	int fd = bpf_map__fd(t->sched->maps.targets);
	__u8 v;

	if (bpf_map_lookup_elem(fd, &pid, &v) == 0 && !(v & ISR_TARGET_ARMED)) {
		v |= ISR_TARGET_ARMED;
		bpf_map_update_elem(fd, &pid, &v, BPF_EXIST);
	}
}

bool tracer__is_target(struct tracer *t, __u32 pid)
{
	__u8 v;

	return bpf_map_lookup_elem(bpf_map__fd(t->sched->maps.targets), &pid, &v) == 0;
}

int tracer__remove_target(struct tracer *t, __u32 pid)
{
	if (bpf_map_delete_elem(bpf_map__fd(t->sched->maps.targets), &pid) && errno != ENOENT)
		return -errno;
	return 0;
}

int tracer__attach(struct tracer *t, char *err, size_t errlen)
{
	int e;

	hold_wait(t);
	e = sched_bpf__attach(t->sched);
	if (e) {
		set_err(err, errlen, "cannot attach the scheduler tracepoints: %s", strerror(-e));
		return e;
	}
	set_err(err, errlen, "%s", t->hold_note);
	if (t->hold_fork) {
		t->hold_fork_link = bpf_program__attach(t->hold->progs.hold_fork);
		if (!t->hold_fork_link) {
			e = -errno;
			t->hold_fork = false;
			set_err(err, errlen, "cannot attach the hold of forked children: %s", strerror(-e));
		}
	}
	return 0;
}

int tracer__watch_loader(struct tracer *t, const char *path, dev_t dev, ino_t ino, __u64 offset, __s64 cookie)
{
	__u64 c = (__u64)cookie;
	size_t i;
	int fd;

	hold_wait(t);
	if (!t->hold_lib)
		return -EOPNOTSUPP;
	for (i = 0; i < t->nloaders; i++)
		if (t->loaders[i].dev == dev && t->loaders[i].ino == ino)
			return -EALREADY;
	if (t->nloaders == MAX_LOADERS)
		return -E2BIG;
	fd = tracer__uprobe_multi_link(t->hold->progs.hold_dlopen, path, &offset, &c, 1, false, 0);
	if (fd < 0)
		return fd;
	t->loaders[t->nloaders].dev = dev;
	t->loaders[t->nloaders].ino = ino;
	t->loaders[t->nloaders].fd = fd;
	t->nloaders++;
	return 0;
}

int tracer__set_hold_names(struct tracer *t, const char *const *names, size_t n)
{
	struct isr_hold_names all;
	__u32 i, zero = 0;

	hold_wait(t);
	if (!t->hold_lib)
		return 0;	/* no loader watch: nothing reads them */
	if (n > ISR_HOLD_NAMES)
		return -E2BIG;
	memset(&all, 0, sizeof(all));
	for (i = 0; i < n; i++) {
		struct isr_hold_name *hn = &all.n[i];
		size_t len = strlen(names[i]), b;

		if (!len || len > ISR_HOLD_NAME_LEN)
			return -EINVAL;
		for (b = 0; b < len; b++) {
			hn->s[b / 8] |= (__u64)(unsigned char)names[i][b] << (8 * (b % 8));
			hn->mask[b / 8] |= 0xffULL << (8 * (b % 8));
		}
	}
	if (bpf_map_update_elem(bpf_map__fd(t->hold->maps.hold_names), &zero, &all, BPF_ANY))
		return -errno;
	return 0;
}

void tracer__hold(struct tracer *t, bool on)
{
	__u32 zero = 0, v = on;

	bpf_map_update_elem(bpf_map__fd(t->sched->maps.hold_ctl), &zero, &v, BPF_ANY);
}

void tracer__hold_support(struct tracer *t, bool *lib, bool *fork)
{
	hold_wait(t);
	*lib = t->hold_lib;
	*fork = t->hold_fork;
}

void tracer__hold_done(struct tracer *t, __u32 pid)
{
	bpf_map_delete_elem(bpf_map__fd(t->sched->maps.held), &pid);
}

int tracer__held_fd(const struct tracer *t)
{
	return bpf_map__fd(t->sched->maps.held);
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
static int attachment_add(struct tracer *t, struct uprobe_attachment *a, const struct uprobe_site *s, char *err,
			  size_t errlen)
{
	struct bpf_program *prog = s->prog;
	bool ret = s->ret;
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
		if (a->groups[i].prog == prog && a->groups[i].ret == ret && a->groups[i].sw == s->sw)
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
		g->sw = s->sw < TRACER_SWITCHES ? s->sw : TRACER_ALWAYS;
		g->fd = -1;
		g->offsets = calloc(MAX_SITES, sizeof(*g->offsets));
		g->cookies = calloc(MAX_SITES, sizeof(*g->cookies));
		if (!g->offsets || !g->cookies) {
			set_err(err, errlen, "out of memory");
			attachment_release(a);
			return -ENOMEM;
		}
	}
	if (g->n == MAX_SITES) {
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
 * return program reads what its entry kept), the switched ones only while
 * their switch is on. All or nothing. */
static int attachment_commit(struct tracer *t, struct uprobe_attachment *a, char *err, size_t errlen)
{
	unsigned int pass, i;
	int e;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < a->ngroups; i++) {
			struct probe_group *g = &a->groups[i];

			if (g->ret != (pass == 1) || !t->on[g->sw])
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

int tracer__attach_uprobes(struct tracer *t, const char *what, __u32 pid, dev_t dev, ino_t ino, const char *path,
			   const struct uprobe_site *sites, size_t n, char *err, size_t errlen)
{
	struct uprobe_attachment a;
	size_t i;
	int e;

	e = attachment_begin(t, &a, what, pid, dev, ino, path, (unsigned int)n, err, errlen);
	for (i = 0; !e && i < n; i++)
		e = attachment_add(t, &a, &sites[i], err, errlen);
	e = e ? e : attachment_commit(t, &a, err, errlen);
	if (!e || e == -EALREADY)
		mark_armed(t, pid);
	return e;
}

bool tracer__can_switch_hot(const struct tracer *t)
{
	return t->multi;
}

/* Attaches g (on) unless it is, or releases it: 0, or -errno when it
 * cannot be attached. */
static int group_switch(struct probe_group *g, const struct uprobe_attachment *a, bool on)
{
	if (!on)
		group_detach(g);
	return on && g->fd < 0 ? group_attach(g, a->pid, a->path) : 0;
}

int tracer__set_switch(struct tracer *t, enum tracer_switch sw, bool on, char *err, size_t errlen)
{
	static const char *const what[TRACER_SWITCHES] = { "", "hot-path", "async-copy" };
	size_t i;
	unsigned int k;
	int e, first = 0;

	if (sw == TRACER_ALWAYS || sw >= TRACER_SWITCHES) {
		set_err(err, errlen, "no such switch of probes");
		return -EINVAL;
	}
	if (!tracer__can_switch_hot(t)) {
		set_err(err, errlen, "the %s probes can only be switched as uprobe_multi links (Linux 6.6+)", what[sw]);
		return -EOPNOTSUPP;
	}
	t->on[sw] = on;
	for (i = 0; i < t->att_count; i++) {
		struct uprobe_attachment *a = &t->att[i];

		for (k = 0; k < a->ngroups; k++) {
			struct probe_group *g = &a->groups[k];

			if (g->sw != sw)
				continue;
			e = group_switch(g, a, on);
			/* A process that is exiting or gone (its files no
			 * longer open through /proc/PID/root) is past probing:
			 * nothing to say, the others stay traced. */
			if (e && e != -ESRCH && !first && proc__alive(a->pid)) {
				first = e;
				set_err(err, errlen, "cannot attach the %u %s uprobes of %s for pid %u: %s", g->n,
					what[sw], a->path, a->pid, strerror(-e));
			}
		}
	}
	return first;
}

static bool prog_among(const struct bpf_program *prog, struct bpf_program *const *progs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (progs[i] == prog)
			return true;
	return false;
}

int tracer__switch_programs(struct tracer *t, __u32 pid, struct bpf_program *const *progs, size_t n, bool on,
			    char *err, size_t errlen)
{
	unsigned int pass, k;
	size_t i;
	int e, first = 0;

	if (!t->multi) {
		set_err(err, errlen, "probes can only be switched as uprobe_multi links (Linux 6.6+)");
		return -EOPNOTSUPP;
	}
	/* Entries before returns when attaching, returns first when
	 * releasing: a return program reads what its entry kept. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < t->att_count; i++) {
			struct uprobe_attachment *a = &t->att[i];

			if (a->pid != pid || a->usdt)
				continue;
			for (k = 0; k < a->ngroups; k++) {
				struct probe_group *g = &a->groups[k];

				if (g->sw != TRACER_ALWAYS || !prog_among(g->prog, progs, n) || g->ret != (on ? pass == 1 : pass == 0))
					continue;
				e = group_switch(g, a, on);
				if (e && !first) {
					first = e;
					set_err(err, errlen, "cannot attach the %u uprobes of %s in %s for pid %u: %s", g->n,
						bpf_program__name(g->prog), a->path, a->pid, strerror(-e));
				}
			}
		}
	}
	return first;
}

#define MAX_CPUS 1024

int tracer__attach_cpu_event(struct bpf_program *prog, __u64 config, __u64 period, const char *what,
			     const char *off_option, struct cpu_links *l, char *err, size_t errlen)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, e;

	memset(l, 0, sizeof(*l));
	if (ncpu <= 0 || ncpu > MAX_CPUS) {
		set_err(err, errlen, "cannot count the CPUs: %s", strerror(ncpu < 0 ? -ncpu : EINVAL));
		return ncpu < 0 ? ncpu : -EINVAL;
	}
	l->links = calloc(ncpu, sizeof(*l->links));
	l->fds = malloc(ncpu * sizeof(*l->fds));
	if (!l->links || !l->fds) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	l->ncpu = ncpu;
	for (cpu = 0; cpu < ncpu; cpu++)
		l->fds[cpu] = -1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.type = PERF_TYPE_SOFTWARE;
		attr.size = sizeof(attr);
		attr.config = config;
		attr.sample_period = period;
		fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)	/* CPU offline */
				continue;
			e = -errno;
			set_err(err, errlen, "cannot open the %s perf event on CPU %d: %s (%s records without it)",
				what, cpu, strerror(-e), off_option);
			return e;
		}
		/* The link owns the perf event's descriptor. */
		l->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!l->links[cpu]) {
			e = -errno;
			close(fd);
			set_err(err, errlen, "cannot attach to the %s perf event on CPU %d: %s (%s records without it)",
				what, cpu, strerror(-e), off_option);
			return e;
		}
		l->fds[cpu] = fd;
		l->attached++;
	}
	return 0;
}

void cpu_links__free(struct cpu_links *l)
{
	int cpu;

	for (cpu = 0; l->links && cpu < l->ncpu; cpu++)
		bpf_link__destroy(l->links[cpu]);
	free(l->links);
	free(l->fds);
	memset(l, 0, sizeof(*l));
}

int cpu_links__enable(struct cpu_links *l, bool on)
{
	for (int cpu = 0; l->fds && cpu < l->ncpu; cpu++)
		if (l->fds[cpu] >= 0 && ioctl(l->fds[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			return -errno;
	return 0;
}

int tracer__uprobe_link(struct tracer *t, struct bpf_program *prog, __u32 pid, const char *path, __u64 offset,
			__u64 cookie)
{
	struct probe_group g;
	int e;

	if (!t->multi)
		return -EOPNOTSUPP;
	memset(&g, 0, sizeof(g));
	g.prog = prog;
	g.n = 1;
	g.offsets = &offset;
	g.cookies = &cookie;
	g.fd = -1;
	e = group_attach(&g, pid, path);
	return e ? e : g.fd;
}

void tracer__discard(struct tracer *t, __u32 pid)
{
	t->discard_pid = pid;
	ring_buffer__consume(t->rb);
	t->discard_pid = 0;
}

int tracer__attach_usdt(struct tracer *t, const char *what, __u32 pid, const char *path, struct bpf_program *prog,
			const char *provider, const char *name, char *err, size_t errlen)
{
	struct uprobe_attachment a;
	struct bpf_link *link;
	struct stat sb;
	int e;

	if (stat(path, &sb)) {
		e = -errno;
		set_err(err, errlen, "cannot find %s (%s): %s", path, what, strerror(-e));
		return e;
	}
	e = attachment_begin(t, &a, what, pid, sb.st_dev, sb.st_ino, path, 2, err, errlen);
	if (e)
		return e;
	a.usdt = true;
	/* USDT links are perf-event uprobes, whatever the others use; room
	 * for one more (tracer__add_usdt_each). */
	if (!a.links && !(a.links = calloc(2, sizeof(*a.links)))) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	link = bpf_program__attach_usdt(prog, (pid_t)pid, path, provider, name, NULL);
	if (!link) {
		e = -errno;
		set_err(err, errlen, "cannot attach to the USDT probe %s:%s of %s for pid %u: %s", provider, name, path,
			pid, strerror(-e));
		attachment_release(&a);
		return e;
	}
	a.links[a.nlinks++] = link;
	a.nprobes = 1;
	return attachment_commit(t, &a, err, errlen);
}

int tracer__add_usdt_each(struct tracer *t, const char *what, struct bpf_program *prog, const char *provider,
			  const char *name, char *err, size_t errlen)
{
	int added = 0, e = 0;
	size_t i;

	for (i = 0; i < t->att_count; i++) {
		struct uprobe_attachment *a = &t->att[i];
		struct bpf_link *link;

		if (!a->usdt || strcmp(a->what, what) || a->nlinks != 1 || kill((pid_t)a->pid, 0))
			continue;
		link = bpf_program__attach_usdt(prog, (pid_t)a->pid, a->path, provider, name, NULL);
		/* A process that exited (a zombie answers kill, and its files
		 * no longer open through /proc/PID/root) is past asking. */
		if (!link && (errno == ESRCH || !proc__alive(a->pid)))
			continue;
		if (!link) {
			e = -errno;
			set_err(err, errlen, "cannot attach to the USDT probe %s:%s of %s for pid %u: %s", provider,
				name, a->path, a->pid, strerror(-e));
			continue;
		}
		a->links[a->nlinks++] = link;
		a->nprobes++;
		added++;
	}
	return added ? added : e;
}

static void *closer_run(void *arg)
{
	struct link_closer *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (c->nfds) {
			int fd = c->fds[--c->nfds];

			pthread_mutex_unlock(&c->lock);
			close(fd);
			pthread_mutex_lock(&c->lock);
		} else if (c->nlinks) {
			struct bpf_link *l = c->links[--c->nlinks];

			pthread_mutex_unlock(&c->lock);
			bpf_link__destroy(l);
			pthread_mutex_lock(&c->lock);
		} else if (c->stop) {
			break;
		} else {
			pthread_cond_wait(&c->cond, &c->lock);
		}
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* The links of a (a process that is gone) handed to the closer thread;
 * released here when it cannot take them. */
static void attachment_release_later(struct tracer *t, struct uprobe_attachment *a)
{
	struct link_closer *c = &t->closer;
	unsigned int i;
	int e = 0;

	if (!c->started) {
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->cond, NULL);
		c->started = pthread_create(&c->thread, NULL, closer_run, c) == 0;
		if (!c->started) {
			pthread_cond_destroy(&c->cond);
			pthread_mutex_destroy(&c->lock);
			attachment_release(a);
			return;
		}
	}
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < a->nlinks && !e; i++) {
		e = array__reserve(&c->links, &c->links_cap, c->nlinks + 1, sizeof(*c->links));
		if (!e) {
			c->links[c->nlinks++] = a->links[i];
			a->links[i] = NULL;
		}
	}
	for (i = 0; i < a->ngroups && !e; i++) {
		e = array__reserve(&c->fds, &c->fds_cap, c->nfds + 1, sizeof(*c->fds));
		if (!e && a->groups[i].fd >= 0) {
			c->fds[c->nfds++] = a->groups[i].fd;
			a->groups[i].fd = -1;
		}
	}
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	attachment_release(a);	/* what the closer did not take, and the memory */
}

/* Waits until the closer thread has released every link handed to it. */
static void closer_stop(struct link_closer *c)
{
	if (!c->started)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->fds);
	free(c->links);
	c->started = false;
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
		attachment_release_later(t, a);
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
	static const char *const sched_tps[] = { "sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
						 "sched_process_fork", "sched_process_exec",
						 "sched_process_exit", "task_rename" };
	size_t i;

	(void)t;	/* the scheduler object is always attached */
	for (i = 0; i < sizeof(sched_tps) / sizeof(sched_tps[0]); i++)
		fprintf(out, "  %-22s tp_btf (BTF tracepoint)\n", sched_tps[i]);
}

void tracer__describe_uprobes(const struct tracer *t, FILE *out)
{
	size_t i;

	for (i = 0; i < t->att_count; i++)
		fprintf(out, "  %-22s pid %u: %u uprobes/uretprobes on %s (%s)\n", t->att[i].what, t->att[i].pid,
			t->att[i].nprobes, t->att[i].path,
			t->att[i].usdt ? "USDT, perf-event uprobes" :
			t->multi ? "uprobe_multi links" : "one perf-event uprobe each");
}

void tracer__free(struct tracer *t)
{
	int i;

	if (!t)
		return;
	hold_wait(t);
	ring_buffer__free(t->rb);
	/* The USDT links first (the CUPTI bridges: their semaphores drop at
	 * once and they go dormant), before the seconds that releasing
	 * hundreds of CUDA uprobes takes (one RCU grace period each). */
	for (i = 0; i < (int)t->att_count; i++)
		if (t->att[i].usdt)
			attachment_release(&t->att[i]);
	for (i = 0; i < (int)t->att_count; i++)
		if (!t->att[i].usdt)
			attachment_release(&t->att[i]);
	closer_stop(&t->closer);
	free(t->att);
	bpf_link__destroy(t->hold_fork_link);
	for (i = 0; i < (int)t->nloaders; i++)
		close(t->loaders[i].fd);
	hold_bpf__destroy(t->hold);
	sched_bpf__destroy(t->sched);
	pthread_mutex_destroy(&t->shared_lock);
	free(t);
}
