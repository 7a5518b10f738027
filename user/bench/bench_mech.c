// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench_mech.h"
#include "clock.h"
#include "proc.h"
#include "bench_sites.h"
#include "bench_stats.h"
#include "bench_events.h"
#include "bench.skel.h"
#include "tracer.h"

#define MAX_ROUNDS 64
#define MAX_BATCHES 32
#define MAX_LINKS 256
#define MAX_CPUS 1024
#define RB_BYTES (4u << 20)
#define SELF_EXE "/proc/self/exe"

/* What the kernel's ring buffer flags are; the system's headers may
 * predate them. */
#define RB_NO_WAKEUP 1
#define RB_FORCE_WAKEUP 2

struct env {
	const struct bench_opts *o;
	struct ktap *k;
	json_t *baseline;
	struct bench_cmp_opts cmp;
	struct bench_bpf *skel;
	char load_err[256];	/* why the programs did not load, or "" */
	bool multi;		/* the kernel has uprobe_multi links */
	int ncpu;
	__u64 *percpu;
	unsigned int rounds, batches, attach_rounds;
	__u32 pid;
};

/* Links of one phase: libbpf's, and uprobe_multi links by fd. */
struct links {
	struct bpf_link *l[MAX_LINKS];
	int fd[MAX_LINKS];
	unsigned int nl, nfd;
};

static void links_release(struct links *ls)
{
	unsigned int i;

	for (i = 0; i < ls->nl; i++)
		bpf_link__destroy(ls->l[i]);
	for (i = 0; i < ls->nfd; i++)
		close(ls->fd[i]);
	ls->nl = ls->nfd = 0;
}

static double now_ns(void)
{
	return (double)clock__mono_ns();
}

static void set_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* --- counters --------------------------------------------------------- */

static __u64 slot_sum(struct env *e, __u32 slot)
{
	__u64 sum = 0;
	int i;

	if (bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.hits), &slot, e->percpu))
		return 0;
	for (i = 0; i < e->ncpu; i++)
		sum += e->percpu[i];
	return sum;
}

static void slots_reset(struct env *e, __u32 first, __u32 n)
{
	__u32 s;

	memset(e->percpu, 0, (size_t)e->ncpu * sizeof(*e->percpu));
	for (s = first; s < first + n; s++)
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.hits), &s, e->percpu, BPF_ANY);
}

/* --- attaching -------------------------------------------------------- */

/* File offset of fn + delta in this executable, from its memory map. */
static int site_offset(void (*fn)(void), unsigned long delta, __u64 *off)
{
	unsigned long addr = (unsigned long)fn + delta;
	struct proc_maps *maps = proc_maps__open((__u32)getpid());
	struct proc_map m;
	int e, found = -ENOENT;

	if (!maps)
		return -errno;
	while ((e = proc_maps__next(maps, &m)) > 0) {
		if (addr < m.start || addr >= m.end)
			continue;
		if (proc_map__is_file(&m)) {
			*off = addr - m.start + m.offset;
			found = 0;
		}
		break;
	}
	proc_maps__close(maps);
	return e < 0 ? e : found;
}

/* A per-site uprobe (perf-event link) for process pid. */
static int attach_uprobe_pid(struct links *ls, struct bpf_program *prog, __u32 pid, __u64 off, bool ret, __u32 slot,
			     char *why, size_t len)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret, .bpf_cookie = slot);
	struct bpf_link *l;
	int err;

	if (ls->nl == MAX_LINKS)
		return -E2BIG;
	l = bpf_program__attach_uprobe_opts(prog, (pid_t)pid, SELF_EXE, off, &uo);
	if (!l) {
		err = -errno;
		set_why(why, len, "cannot attach a %s at offset %#llx of this executable: %s",
			ret ? "uretprobe" : "uprobe", (unsigned long long)off, strerror(-err));
		return err;
	}
	ls->l[ls->nl++] = l;
	return 0;
}

/* A site's uprobe (ret: uretprobe) counting in slot. */
static int attach_uprobe(struct env *e, struct links *ls, __u64 off, bool ret, __u32 slot, char *why, size_t len)
{
	return attach_uprobe_pid(ls, e->skel->progs.bench_uprobe, e->pid, off, ret, slot, why, len);
}

static int attach_multi(struct env *e, struct links *ls, const __u64 *offs, const __u64 *cookies, unsigned int n,
			char *why, size_t len)
{
	int fd;

	if (!e->multi) {
		set_why(why, len, "this kernel has no uprobe_multi links (Linux 6.6+)");
		return -EOPNOTSUPP;
	}
	if (ls->nfd == MAX_LINKS)
		return -E2BIG;
	fd = tracer__uprobe_multi_link(e->skel->progs.bench_uprobe_multi, SELF_EXE, offs, cookies, n, false,
				       e->pid);
	if (fd < 0) {
		set_why(why, len, "cannot create a uprobe_multi link of %u sites: %s", n, strerror(-fd));
		return fd;
	}
	ls->fd[ls->nfd++] = fd;
	return 0;
}

static int attach_prog(struct links *ls, struct bpf_program *prog, char *why, size_t len)
{
	struct bpf_link *l;
	int err;

	if (ls->nl == MAX_LINKS)
		return -E2BIG;
	l = bpf_program__attach(prog);
	if (!l) {
		err = -errno;
		set_why(why, len, "cannot attach %s: %s", bpf_program__name(prog), strerror(-err));
		return err;
	}
	ls->l[ls->nl++] = l;
	return 0;
}

static int perf_open(__u64 config, __u64 period, int pid, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.sample_period = period;
	return (int)syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* prog on a software perf event of every CPU (as the recorder does), or
 * of the calling thread alone (per_thread). */
static int attach_perf(struct env *e, struct links *ls, struct bpf_program *prog, __u64 config, __u64 period,
		       bool per_thread, char *why, size_t len)
{
	int cpu, n = per_thread ? 1 : e->ncpu, fd, err;
	struct bpf_link *l;

	for (cpu = 0; cpu < n; cpu++) {
		if (ls->nl == MAX_LINKS)
			return -E2BIG;
		fd = per_thread ? perf_open(config, period, 0, -1) : perf_open(config, period, -1, cpu);
		if (fd < 0) {
			if (errno == ENODEV)	/* CPU offline */
				continue;
			err = -errno;
			set_why(why, len, "cannot open the software perf event %llu%s%.0d: %s",
				(unsigned long long)config, per_thread ? "" : " on CPU ", per_thread ? 0 : cpu,
				strerror(-err));
			return err;
		}
		l = bpf_program__attach_perf_event(prog, fd);
		if (!l) {
			err = -errno;
			close(fd);
			set_why(why, len, "cannot attach %s to a software perf event: %s", bpf_program__name(prog),
				strerror(-err));
			return err;
		}
		ls->l[ls->nl++] = l;
	}
	return 0;
}

/* --- the A/B runner ---------------------------------------------------- */

struct ab_def;
typedef int (*ab_setup_fn)(struct env *e, const struct ab_def *d, void **state, char *why, size_t len);
typedef int (*ab_attach_fn)(struct env *e, const struct ab_def *d, void *state, struct links *ls, bool probe,
			    char *why, size_t len);

/*
 * What a batch is timed with. The CPU time of the thread that makes the
 * ops is what a hit costs it, and leaves out the time other jobs of a
 * shared machine take the CPU away; the ping-pong's two threads are timed
 * together. Work done in interrupts (sampling, wakeups' irq_work) is not
 * charged to the interrupted thread where the kernel accounts IRQ time
 * apart: those mechanisms are timed by the wall clock.
 */
enum ab_clock {
	AB_THREAD_CPU,
	AB_PROCESS_CPU,
	AB_WALL,
};

static const clockid_t ab_clock_ids[] = {
	[AB_THREAD_CPU] = CLOCK_THREAD_CPUTIME_ID,
	[AB_PROCESS_CPU] = CLOCK_PROCESS_CPUTIME_ID,
	[AB_WALL] = CLOCK_MONOTONIC,
};

static const char *const ab_clock_names[] = {
	[AB_THREAD_CPU] = "thread CPU time",
	[AB_PROCESS_CPU] = "process CPU time",
	[AB_WALL] = "wall clock",
};

static double clock_ns(enum ab_clock c)
{
	struct timespec ts;

	clock_gettime(ab_clock_ids[c], &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One mechanism measured base line against probe. */
struct ab_def {
	const char *op;			/* what one op of the workload is */
	enum ab_clock clock;		/* what batches are timed with */
	unsigned long ops;		/* per batch */
	__u32 slot;			/* the hit counter */
	double exact;			/* hits per op the kernel must deliver exactly (0: not checked) */
	ab_setup_fn setup;		/* NULL: state is NULL */
	void (*teardown)(struct env *e, void *state);
	ab_attach_fn attach;		/* base line (probe false) or mechanism */
	void (*batch)(void *state, unsigned long ops);
	void (*between)(void *state);	/* after each batch, untimed (NULL: nothing) */
	/* probe sites */
	void (*site)(void);
	unsigned long site_delta;	/* probed at site + delta */
	const unsigned char *code;	/* what the probed instruction must be */
	size_t code_len;
	bool ret;			/* a return probe */
	bool multi;			/* a uprobe_multi link */
	/* ring buffer */
	__u64 submit_flags;
	bool drops;			/* report the ring buffer's failed reservations */
	/* perf events */
	__u64 perf_config, perf_period;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct phase {
	double ns_per_op;	/* median over the batches */
	__u64 hits, ops;
};

static int run_phase(struct env *e, const struct ab_def *d, void *state, bool probe, struct phase *p, char *why,
		     size_t len)
{
	double t[MAX_BATCHES];
	struct links ls = { .nl = 0 };
	__u64 h0;
	unsigned int b;
	int err;

	err = d->attach(e, d, state, &ls, probe, why, len);
	if (err) {
		links_release(&ls);
		return err;
	}
	h0 = slot_sum(e, d->slot);
	for (b = 0; b < e->batches; b++) {
		double t0 = clock_ns(d->clock);

		d->batch(state, d->ops);
		t[b] = (clock_ns(d->clock) - t0) / (double)d->ops;
		if (d->between)
			d->between(state);
	}
	p->hits = slot_sum(e, d->slot) - h0;
	p->ops = (__u64)e->batches * d->ops;
	links_release(&ls);
	p->ns_per_op = median(t, e->batches);
	return 0;
}

static json_t *figure(const char *unit, enum bench_figure_kind k, const double *v, unsigned int n)
{
	json_t *f = bench_stats__figure(unit, k, v, n);

	return f ? f : json_null();
}

/* Runs d for the test res describes; fills res. 0, 1 (the kernel did not
 * deliver exactly), or -errno with why. */
static int run_ab(struct env *e, const struct ab_def *d, json_t *res, char *why, size_t len)
{
	double cost[MAX_ROUNDS], base[MAX_ROUNDS], hpo[MAX_ROUNDS];
	__u64 hits = 0, ops = 0;
	void *state = NULL;
	unsigned int r;
	int err = 0;

	if (d->drops)
		slots_reset(e, BENCH_SLOT_EMIT_DROPS, 1);
	if (d->setup && (err = d->setup(e, d, &state, why, len)))
		return err;
	d->batch(state, d->ops);	/* warm: code paged in, caches */
	for (r = 0; r < e->rounds && !err; r++) {
		struct phase pb, pp;

		/* Alternate which phase goes first: drift hits both alike. */
		if (r % 2 == 0) {
			err = run_phase(e, d, state, false, &pb, why, len);
			err = err ?: run_phase(e, d, state, true, &pp, why, len);
		} else {
			err = run_phase(e, d, state, true, &pp, why, len);
			err = err ?: run_phase(e, d, state, false, &pb, why, len);
		}
		if (err)
			break;
		if (!pp.hits) {
			set_why(why, len, "the mechanism never fired: 0 hits in %llu %ss",
				(unsigned long long)pp.ops, d->op);
			err = -ENODATA;
			break;
		}
		hpo[r] = (double)pp.hits / (double)pp.ops;
		cost[r] = (pp.ns_per_op - pb.ns_per_op) / hpo[r];
		base[r] = pb.ns_per_op;
		hits += pp.hits;
		ops += pp.ops;
		fputc('.', stderr);
	}
	if (d->teardown)
		d->teardown(e, state);
	if (err)
		return err;
	json_object_set_new(res, "op", json_string(d->op));
	json_object_set_new(res, "clock", json_string(ab_clock_names[d->clock]));
	json_object_set_new(res, "rounds", json_integer(e->rounds));
	json_object_set_new(res, "ops_per_batch", json_integer((json_int_t)d->ops));
	json_object_set_new(res, "batches_per_phase", json_integer(e->batches));
	json_object_set_new(res, "ns_per_hit", figure("ns", d->clock == AB_WALL ? BENCH_FIG_LATENCY : BENCH_FIG_COST,
						      cost, e->rounds));
	json_object_set_new(res, "base_ns_per_op", figure("ns", BENCH_FIG_INFO, base, e->rounds));
	json_object_set_new(res, "hits_per_op", figure("hits", BENCH_FIG_INFO, hpo, e->rounds));
	json_object_set_new(res, "ops", json_integer((json_int_t)ops));
	json_object_set_new(res, "hits", json_integer((json_int_t)hits));
	if (d->drops)
		json_object_set_new(res, "drops", json_integer((json_int_t)slot_sum(e, BENCH_SLOT_EMIT_DROPS)));
	if (d->exact > 0) {
		__u64 want = (__u64)((double)ops * d->exact + 0.5);

		json_object_set_new(res, "expected_hits", json_integer((json_int_t)want));
		if (hits != want) {
			set_why(why, len, "the kernel %s: %llu hits counted for %llu %ss (%llu expected)",
				hits < want ? "skipped hits" : "duplicated hits", (unsigned long long)hits,
				(unsigned long long)ops, d->op, (unsigned long long)want);
			return 1;
		}
	}
	return 0;
}

/* --- workloads and their attachments ----------------------------------- */

struct site_state {
	void (*fn)(void);
	__u64 off;
};

static int setup_site(struct env *e, const struct ab_def *d, void **state, char *why, size_t len)
{
	struct site_state *s;
	int err;

	(void)e;
	if (bench_sites__check(d->site, d->code, d->code_len)) {
		set_why(why, len, "the probe site's code is not the instruction this benchmark needs (rebuilt with "
			"other flags?)");
		return -EILSEQ;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fn = d->site;
	err = site_offset(d->site, d->site_delta, &s->off);
	if (err) {
		set_why(why, len, "cannot find the probe site in /proc/self/maps: %s", strerror(-err));
		free(s);
		return err;
	}
	*state = s;
	return 0;
}

static void teardown_free(struct env *e, void *state)
{
	(void)e;
	free(state);
}

static int attach_site(struct env *e, const struct ab_def *d, void *state, struct links *ls, bool probe, char *why,
		       size_t len)
{
	struct site_state *s = state;
	__u64 cookie = d->slot;

	if (!probe)
		return 0;
	if (d->multi)
		return attach_multi(e, ls, &s->off, &cookie, 1, why, len);
	return attach_uprobe(e, ls, s->off, d->ret, d->slot, why, len);
}

static void batch_site(void *state, unsigned long ops)
{
	struct site_state *s = state;
	unsigned long i;

	for (i = 0; i < ops; i++)
		s->fn();
}

/* Two threads of this process bounce a byte over two pipes, both on one
 * CPU: every round trip is two wakeups and two context switches. */
struct pingpong {
	struct bench_pipes pp;
	pthread_t pong;
	bool started;
	cpu_set_t old;
	bool pinned;
};

void *bench_pong(void *pipes)
{
	struct bench_pipes *p = pipes;
	char c;

	while (read(p->ab[0], &c, 1) == 1 && c)
		if (write(p->ba[1], &c, 1) != 1)
			break;
	return NULL;
}

static void teardown_pingpong(struct env *e, void *state)
{
	struct pingpong *p = state;
	char c = 0;

	(void)e;
	if (p->started && write(p->pp.ab[1], &c, 1) == 1)
		pthread_join(p->pong, NULL);
	for (int i = 0; i < 2; i++) {
		if (p->pp.ab[i] >= 0)
			close(p->pp.ab[i]);
		if (p->pp.ba[i] >= 0)
			close(p->pp.ba[i]);
	}
	if (p->pinned)
		sched_setaffinity(0, sizeof(p->old), &p->old);
	free(p);
}

static int setup_pingpong(struct env *e, const struct ab_def *d, void **state, char *why, size_t len)
{
	struct pingpong *p = calloc(1, sizeof(*p));
	cpu_set_t one;
	int err, cpu;

	(void)d;
	if (!p)
		return -ENOMEM;
	p->pp.ab[0] = p->pp.ab[1] = p->pp.ba[0] = p->pp.ba[1] = -1;
	if (pipe2(p->pp.ab, O_CLOEXEC) || pipe2(p->pp.ba, O_CLOEXEC)) {
		err = -errno;
		set_why(why, len, "cannot create the ping-pong pipes: %s", strerror(-err));
		teardown_pingpong(e, p);
		return err;
	}
	/* Both threads on the CPU this one is on: switches, not idle wakeups. */
	cpu = sched_getcpu();
	if (cpu >= 0 && !sched_getaffinity(0, sizeof(p->old), &p->old)) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		p->pinned = !sched_setaffinity(0, sizeof(one), &one);
	}
	err = pthread_create(&p->pong, NULL, bench_pong, &p->pp);
	if (err) {
		set_why(why, len, "cannot start the ping-pong thread: %s", strerror(err));
		teardown_pingpong(e, p);
		return -err;
	}
	p->started = true;
	*state = p;
	return 0;
}

static void batch_pingpong(void *state, unsigned long ops)
{
	struct pingpong *p = state;
	char c = 1;
	unsigned long i;

	for (i = 0; i < ops; i++)
		if (write(p->pp.ab[1], &c, 1) != 1 || read(p->pp.ba[0], &c, 1) != 1)
			break;
}

static int attach_sched(struct env *e, const struct ab_def *d, void *state, struct links *ls, bool probe,
			char *why, size_t len)
{
	(void)d;
	(void)state;
	if (!probe)
		return 0;
	return attach_prog(ls, e->skel->progs.bench_sched_switch, why, len) ?:
	       attach_prog(ls, e->skel->progs.bench_sched_wakeup, why, len);
}

/* Writes one byte in each of n pages from m. Not instrumented by the
 * address sanitizer: its shadow of the pages would fault too. */
__attribute__((no_sanitize_address)) static void touch_pages(char *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		((volatile char *)m)[i * 4096] = 1;
}

/* Fresh anonymous pages, written once: one minor fault each. */
static void batch_faults(void *state, unsigned long ops)
{
	size_t len = ops * 4096;
	char *m;

	(void)state;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	madvise(m, len, MADV_NOHUGEPAGE);
	touch_pages(m, ops);
	munmap(m, len);
}

static int attach_fault_tp(struct env *e, const struct ab_def *d, void *state, struct links *ls, bool probe,
			   char *why, size_t len)
{
	(void)d;
	(void)state;
	return probe ? attach_prog(ls, e->skel->progs.bench_fault_tp, why, len) : 0;
}

static int attach_perf_def(struct env *e, const struct ab_def *d, void *state, struct links *ls, bool probe,
			   char *why, size_t len)
{
	struct bpf_program *prog = d->slot == BENCH_SLOT_FAULT ? e->skel->progs.bench_perf_fault :
								  e->skel->progs.bench_perf_sample;

	(void)state;
	return probe ? attach_perf(e, ls, prog, d->perf_config, d->perf_period, false, why, len) : 0;
}

/* Where the spin loop's result goes, so that the loop is not optimized out. */
static volatile unsigned long spin_sink;

/* CPU work and nothing else: about a microsecond per op. */
static void batch_spin(void *state, unsigned long ops)
{
	unsigned long x = 88172645463325252ul, i, j;

	(void)state;
	for (i = 0; i < ops; i++)
		for (j = 0; j < 512; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	spin_sink = x;
}

/* A consumer thread drains the benchmark's ring buffer while it runs. */
struct consumer {
	struct ring_buffer *rb;
	pthread_t thread;
	atomic_bool stop;
	int poll_ms;		/* < 0: drain every sleep_us instead of waiting */
	unsigned int sleep_us;
	__u64 records, dups, bad;
	unsigned char *seen;	/* bitmap of the sequence numbers delivered */
	__u64 seen_cap;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct bench_record *r = data;

	c->records++;
	if (size < sizeof(*r) || !c->seen)
		return 0;
	if (r->seq >= c->seen_cap) {
		c->bad++;
	} else if (c->seen[r->seq / 8] & (1u << (r->seq % 8))) {
		c->dups++;
	} else {
		c->seen[r->seq / 8] |= (unsigned char)(1u << (r->seq % 8));
	}
	return 0;
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;

	while (!atomic_load(&c->stop)) {
		if (c->poll_ms >= 0) {
			/* A wakeup ends the wait; a record submitted without one
			 * is consumed when the wait times out. */
			ring_buffer__poll(c->rb, c->poll_ms);
			ring_buffer__consume(c->rb);
		} else {
			ring_buffer__consume(c->rb);
			usleep(c->sleep_us);
		}
	}
	ring_buffer__consume(c->rb);
	return NULL;
}

static int consumer_start(struct consumer *c, struct bpf_map *rb, __u64 seen_cap, char *why, size_t len)
{
	int err;

	atomic_store(&c->stop, false);
	c->records = c->dups = c->bad = 0;
	c->seen_cap = seen_cap;
	c->seen = seen_cap ? calloc(seen_cap / 8 + 1, 1) : NULL;
	if (seen_cap && !c->seen)
		return -ENOMEM;
	c->rb = ring_buffer__new(bpf_map__fd(rb), on_record, c, NULL);
	if (!c->rb) {
		err = -errno;
		set_why(why, len, "cannot open the ring buffer: %s", strerror(-err));
		free(c->seen);
		return err;
	}
	ring_buffer__consume(c->rb);	/* what an earlier test left */
	c->records = 0;
	err = pthread_create(&c->thread, NULL, consumer_main, c);
	if (err) {
		set_why(why, len, "cannot start the consumer thread: %s", strerror(err));
		ring_buffer__free(c->rb);
		free(c->seen);
		return -err;
	}
	return 0;
}

static void consumer_stop(struct consumer *c)
{
	atomic_store(&c->stop, true);
	pthread_join(c->thread, NULL);
	ring_buffer__free(c->rb);
	free(c->seen);
	c->seen = NULL;
}

/* The ring-buffer benchmarks' state: the consumer, and which loop a batch
 * runs. */
struct rb_state {
	struct consumer cons;
	bool thread;		/* the consumer is a thread waiting for wakeups */
	int prog_fd;
};

static int setup_ringbuf(struct env *e, const struct ab_def *d, void **state, char *why, size_t len)
{
	struct rb_state *s = calloc(1, sizeof(*s));
	int err = 0;

	if (!s)
		return -ENOMEM;
	e->skel->bss->submit_flags = d->submit_flags;
	e->skel->bss->loop_count = (__u32)d->ops;
	/* Without wakeups, the ring is drained between batches, untimed;
	 * with them, by a thread that each wakeup ends the wait of. */
	s->thread = d->submit_flags != RB_NO_WAKEUP;
	s->cons.poll_ms = 1000;
	if (s->thread) {
		err = consumer_start(&s->cons, e->skel->maps.bench_rb, 0, why, len);
	} else if (!(s->cons.rb = ring_buffer__new(bpf_map__fd(e->skel->maps.bench_rb), on_record, &s->cons, NULL))) {
		err = -errno;
		set_why(why, len, "cannot open the ring buffer: %s", strerror(-err));
	}
	if (err) {
		free(s);
		return err;
	}
	*state = s;
	return 0;
}

static void teardown_ringbuf(struct env *e, void *state)
{
	struct rb_state *s = state;

	(void)e;
	if (s->thread) {
		consumer_stop(&s->cons);
	} else {
		ring_buffer__consume(s->cons.rb);
		ring_buffer__free(s->cons.rb);
	}
	free(s);
}

static void drain_ringbuf(void *state)
{
	struct rb_state *s = state;

	if (!s->thread)
		ring_buffer__consume(s->cons.rb);
}

static int attach_loop(struct env *e, const struct ab_def *d, void *state, struct links *ls, bool probe,
		       char *why, size_t len)
{
	struct rb_state *s = state;

	(void)d;
	(void)ls;
	(void)why;
	(void)len;
	s->prog_fd = bpf_program__fd(probe ? e->skel->progs.bench_loop_emit : e->skel->progs.bench_loop_count);
	return 0;
}

/* One BPF_PROG_TEST_RUN: ops iterations of the loop (set in setup). */
static void batch_loop(void *state, unsigned long ops)
{
	struct rb_state *s = state;
	LIBBPF_OPTS(bpf_test_run_opts, o);

	(void)ops;
	bpf_prog_test_run_opts(s->prog_fd, &o);
}

static const unsigned char code_push[] = { 0x55, 0x48, 0x89, 0xe5 };
static const unsigned char code_endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };
static const unsigned char code_stepped[] = { 0x48, 0x89, 0xf8 };
static const unsigned char code_nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55 };

#define SITE(fn, delta, code_) \
	.op = "call", .ops = 400, .slot = BENCH_SLOT_SITE0, .exact = 1, .setup = setup_site, \
	.teardown = teardown_free, .attach = attach_site, .batch = batch_site, .site = fn, .site_delta = delta, \
	.code = code_, .code_len = sizeof(code_)

static const struct ab_def ab_uprobe_push = { SITE(bench_site_push, 0, code_push) };
static const struct ab_def ab_uprobe_endbr4 = { SITE(bench_site_endbr, BENCH_ENDBR_LEN, code_endbr) };
static const struct ab_def ab_uprobe_endbr = { SITE(bench_site_endbr, 0, code_endbr) };
static const struct ab_def ab_uprobe_stepped = { SITE(bench_site_stepped, 0, code_stepped) };
static const struct ab_def ab_uprobe_nop5 = { SITE(bench_site_nop5, 0, code_nop5) };
static const struct ab_def ab_uretprobe = { SITE(bench_site_ret, 0, code_push), .ret = true };
static const struct ab_def ab_uprobe_multi = { SITE(bench_site_push, 0, code_push), .multi = true };
static const struct ab_def ab_sched = {
	.op = "round trip", .clock = AB_PROCESS_CPU, .ops = 100, .slot = BENCH_SLOT_SCHED, .setup = setup_pingpong,
	.teardown = teardown_pingpong, .attach = attach_sched, .batch = batch_pingpong,
};
static const struct ab_def ab_fault_perf = {
	.op = "fault", .ops = 1024, .slot = BENCH_SLOT_FAULT, .attach = attach_perf_def, .batch = batch_faults,
	.perf_config = PERF_COUNT_SW_PAGE_FAULTS_MIN, .perf_period = 1,
};
static const struct ab_def ab_fault_tp = {
	.op = "fault", .ops = 1024, .slot = BENCH_SLOT_FAULT_TP, .attach = attach_fault_tp, .batch = batch_faults,
};
/* 10 kHz: one sample in 100 us of CPU, so that the samples' cost stands
 * out of the machine's noise; the 99 Hz figure follows from it. */
static const struct ab_def ab_sampler = {
	.op = "spin", .clock = AB_WALL, .ops = 4000, .slot = BENCH_SLOT_SAMPLE, .attach = attach_perf_def,
	.batch = batch_spin, .perf_config = PERF_COUNT_SW_CPU_CLOCK, .perf_period = 100000,
};
static const struct ab_def ab_rb_no_wakeup = {
	.op = "record", .ops = 20000, .slot = BENCH_SLOT_EMIT_HITS, .setup = setup_ringbuf,
	.teardown = teardown_ringbuf, .attach = attach_loop, .batch = batch_loop, .between = drain_ringbuf,
	.submit_flags = RB_NO_WAKEUP,
	.drops = true,
};
static const struct ab_def ab_rb_wakeup = {
	.op = "record", .clock = AB_WALL, .ops = 500, .slot = BENCH_SLOT_EMIT_HITS, .setup = setup_ringbuf,
	.teardown = teardown_ringbuf, .attach = attach_loop, .batch = batch_loop, .submit_flags = RB_FORCE_WAKEUP,
	.drops = true,
};

/* --- attach and detach of 100 uprobes ----------------------------------- */

static int run_attach_100(struct env *e, bool multi, json_t *res, char *why, size_t len)
{
	double att[MAX_ROUNDS], det[MAX_ROUNDS];
	__u64 offs[BENCH_MANY_SITES], cookies[BENCH_MANY_SITES];
	unsigned int r, i;
	int err;

	for (i = 0; i < BENCH_MANY_SITES; i++) {
		err = site_offset(bench_site_many, (unsigned long)i * BENCH_MANY_STRIDE, &offs[i]);
		if (err) {
			set_why(why, len, "cannot find the probe sites in /proc/self/maps: %s", strerror(-err));
			return err;
		}
		cookies[i] = BENCH_SLOT_SITE0 + i;
	}
	if (bench_sites__check(bench_site_many, code_push, sizeof(code_push))) {
		set_why(why, len, "the probe sites' code is not libcuda's prologue");
		return -EILSEQ;
	}
	for (r = 0; r < e->attach_rounds; r++) {
		struct links ls = { .nl = 0 };
		double t0, t1, t2;
		__u64 hit = 0;

		slots_reset(e, BENCH_SLOT_SITE0, BENCH_MANY_SITES);
		t0 = now_ns();
		if (multi) {
			err = attach_multi(e, &ls, offs, cookies, BENCH_MANY_SITES, why, len);
		} else {
			for (i = 0, err = 0; i < BENCH_MANY_SITES && !err; i++)
				err = attach_uprobe(e, &ls, offs[i], false, (__u32)cookies[i], why, len);
		}
		t1 = now_ns();
		if (err) {
			links_release(&ls);
			return err;
		}
		/* Every probe live: each site called once is hit once. */
		for (i = 0; i < BENCH_MANY_SITES; i++)
			((void (*)(void))((unsigned long)bench_site_many + (unsigned long)i * BENCH_MANY_STRIDE))();
		for (i = 0; i < BENCH_MANY_SITES; i++)
			hit += slot_sum(e, BENCH_SLOT_SITE0 + i) == 1;
		t2 = now_ns();
		links_release(&ls);
		det[r] = (now_ns() - t2) / 1e6;
		att[r] = (t1 - t0) / 1e6;
		if (hit != BENCH_MANY_SITES) {
			set_why(why, len, "after attaching, %llu of %u sites called once were hit exactly once",
				(unsigned long long)hit, BENCH_MANY_SITES);
			return 1;
		}
		fputc('.', stderr);
	}
	json_object_set_new(res, "rounds", json_integer(e->attach_rounds));
	json_object_set_new(res, "probes", json_integer(BENCH_MANY_SITES));
	json_object_set_new(res, "attach_ms", figure("ms", BENCH_FIG_LATENCY, att, e->attach_rounds));
	json_object_set_new(res, "detach_ms", figure("ms", BENCH_FIG_LATENCY, det, e->attach_rounds));
	return 0;
}

/* --- checks -------------------------------------------------------------- */

/* Threads that each call a list of sites n times, or until *until turns
 * true; calls counts the rounds of calls they made, all threads together. */
struct callers {
	void (*fns[4])(void);
	unsigned int nfns;
	unsigned long n;
	atomic_bool *until;
	atomic_ulong calls;
};

static void *caller_main(void *arg)
{
	struct callers *c = arg;
	unsigned long i = 0;
	unsigned int f;

	while (c->until ? !atomic_load(c->until) : i < c->n) {
		for (f = 0; f < c->nfns; f++)
			c->fns[f]();
		i++;
	}
	atomic_fetch_add(&c->calls, i);
	return NULL;
}

static int run_callers(struct callers *c, unsigned int threads, char *why, size_t len)
{
	pthread_t t[16];
	unsigned int i, started = 0;
	int err = 0;

	atomic_store(&c->calls, 0);
	for (i = 0; i < threads && i < 16; i++) {
		err = pthread_create(&t[i], NULL, caller_main, c);
		if (err) {
			set_why(why, len, "cannot start caller thread %u: %s", i, strerror(err));
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	return err ? -err : 0;
}

/* One count against what it must be; false (and why) when it is not. */
static bool expect(json_t *res, const char *what, __u64 got, __u64 want, char *why, size_t len, bool ok)
{
	json_object_set_new(res, what, json_integer((json_int_t)got));
	if (got == want)
		return ok;
	if (ok)
		set_why(why, len, "%s: %llu counted, %llu expected: the kernel %s", what, (unsigned long long)got,
			(unsigned long long)want, got < want ? "skipped hits" : "duplicated hits");
	return false;
}

static unsigned long check_calls(const struct env *e, unsigned long full)
{
	return e->o->quick ? full / 5 : full;
}

static int check_threads(struct env *e, json_t *res, char *why, size_t len)
{
	struct callers c = { { bench_site_push, bench_site_ret, bench_site_stepped }, 3, check_calls(e, 20000),
			     NULL, 0 };
	const unsigned int threads = 4;
	struct links ls = { .nl = 0 };
	__u64 off_push, off_ret, off_step, cookie = BENCH_SLOT_SITE0 + 1, calls;
	bool ok = true;
	int err;

	err = site_offset(bench_site_push, 0, &off_push) ?: site_offset(bench_site_ret, 0, &off_ret) ?:
	      site_offset(bench_site_stepped, 0, &off_step);
	if (err) {
		set_why(why, len, "cannot find the probe sites in /proc/self/maps: %s", strerror(-err));
		return err;
	}
	slots_reset(e, BENCH_SLOT_SITE0, 4);
	err = attach_uprobe(e, &ls, off_push, false, BENCH_SLOT_SITE0, why, len) ?:
	      attach_uprobe(e, &ls, off_ret, true, BENCH_SLOT_SITE0 + 2, why, len) ?:
	      attach_uprobe(e, &ls, off_step, false, BENCH_SLOT_SITE0 + 3, why, len);
	if (!err && e->multi)
		err = attach_multi(e, &ls, &off_push, &cookie, 1, why, len);
	err = err ?: run_callers(&c, threads, why, len);
	links_release(&ls);
	if (err)
		return err;
	calls = (__u64)threads * c.n;
	json_object_set_new(res, "threads", json_integer(threads));
	json_object_set_new(res, "calls_per_site", json_integer((json_int_t)calls));
	ok = expect(res, "push_entry_hits", slot_sum(e, BENCH_SLOT_SITE0), calls, why, len, ok);
	if (e->multi)
		ok = expect(res, "push_entry_multi_hits", slot_sum(e, BENCH_SLOT_SITE0 + 1), calls, why, len, ok);
	ok = expect(res, "return_hits", slot_sum(e, BENCH_SLOT_SITE0 + 2), calls, why, len, ok);
	ok = expect(res, "stepped_entry_hits", slot_sum(e, BENCH_SLOT_SITE0 + 3), calls, why, len, ok);
	return ok ? 0 : 1;
}

/* The callers of check_emit in a child process: they start when go
 * becomes readable, and the child exits 0 once they are done. */
static pid_t fork_callers(struct callers *c, unsigned int threads, int *go_fd)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		char b, why[256];

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		_exit(run_callers(c, threads, why, sizeof(why)) ? 1 : 0);
	}
	close(go[0]);
	if (pid < 0)
		close(go[1]);
	else
		*go_fd = go[1];
	return pid;
}

/* n calls per thread of a site whose program emits a record per hit, from
 * this process or (in_child) another one; checks hits = calls, hits =
 * submitted + drops, delivered = submitted, no record twice. */
static int check_emit(struct env *e, struct bench_bpf *skel, __u64 flags, int poll_ms, unsigned int sleep_us,
		      bool in_child, json_t *res, char *why, size_t len)
{
	struct callers c = { { bench_site_push }, 1, check_calls(e, 20000), NULL, 0 };
	const unsigned int threads = 2;
	struct bench_bpf *saved = e->skel;
	struct consumer cons = { .poll_ms = poll_ms, .sleep_us = sleep_us };
	struct links ls = { .nl = 0 };
	__u64 off, calls = (__u64)threads * c.n, hits, submitted, drops;
	int err, go = -1, status = 0;
	bool ok = true;
	pid_t child = 0;

	err = site_offset(bench_site_push, 0, &off);
	if (err) {
		set_why(why, len, "cannot find the probe site in /proc/self/maps: %s", strerror(-err));
		return err;
	}
	e->skel = skel;
	skel->bss->submit_flags = flags;
	skel->bss->next_seq = 0;
	slots_reset(e, BENCH_SLOT_EMIT_HITS, 3);
	if (in_child && (child = fork_callers(&c, threads, &go)) < 0) {
		err = -errno;
		set_why(why, len, "cannot start the calling process: %s", strerror(-err));
		e->skel = saved;
		return err;
	}
	err = attach_uprobe_pid(&ls, skel->progs.bench_uprobe_emit, in_child ? (__u32)child : e->pid, off, false, 0,
				why, len);
	err = err ?: consumer_start(&cons, skel->maps.bench_rb, calls, why, len);
	if (!err && in_child) {
		if (write(go, "g", 1) != 1)
			err = -EPIPE;
		close(go);
		go = -1;
		waitpid(child, &status, 0);
		child = 0;
		if (!err && (!WIFEXITED(status) || WEXITSTATUS(status))) {
			set_why(why, len, "the calling process failed (status %#x)", (unsigned int)status);
			err = -ECHILD;
		}
	} else if (!err) {
		err = run_callers(&c, threads, why, len);
	}
	if (go >= 0)
		close(go);	/* a child that never got going exits */
	if (child > 0)
		waitpid(child, &status, 0);
	links_release(&ls);
	if (cons.rb)
		consumer_stop(&cons);
	hits = slot_sum(e, BENCH_SLOT_EMIT_HITS);
	submitted = slot_sum(e, BENCH_SLOT_EMIT_SUBMITTED);
	drops = slot_sum(e, BENCH_SLOT_EMIT_DROPS);
	e->skel = saved;
	if (err)
		return err;
	json_object_set_new(res, "threads", json_integer(threads));
	json_object_set_new(res, "calls", json_integer((json_int_t)calls));
	json_object_set_new(res, "ringbuf_bytes", json_integer(bpf_map__max_entries(skel->maps.bench_rb)));
	json_object_set_new(res, "drops", json_integer((json_int_t)drops));
	json_object_set_new(res, "duplicates", json_integer((json_int_t)cons.dups));
	ok = expect(res, "hits", hits, calls, why, len, ok);
	ok = expect(res, "submitted_plus_drops", submitted + drops, hits, why, len, ok);
	ok = expect(res, "delivered", cons.records, submitted, why, len, ok);
	if (ok && (cons.dups || cons.bad)) {
		set_why(why, len, "%llu records delivered twice, %llu with a sequence number never emitted",
			(unsigned long long)cons.dups, (unsigned long long)cons.bad);
		ok = false;
	}
	return ok ? 0 : 1;
}

static struct bench_bpf *open_bench(struct env *e, __u32 rb_bytes, char *why, size_t len);

static int check_ringbuf_full(struct env *e, json_t *res, char *why, size_t len)
{
	/* One page of ring buffer (170 records), drained every 0.5 ms: the
	 * callers fill it between drains. */
	struct bench_bpf *small = open_bench(e, (__u32)sysconf(_SC_PAGESIZE), why, len);
	int err;

	if (!small)
		return -EIO;
	err = check_emit(e, small, RB_NO_WAKEUP, -1, 500, false, res, why, len);
	bench_bpf__destroy(small);
	if (!err && !json_integer_value(json_object_get(res, "drops"))) {
		set_why(why, len, "the ring buffer never filled up: the check did not test what it should");
		err = 1;
	}
	return err;
}

static int check_ringbuf_wakeup(struct env *e, json_t *res, char *why, size_t len)
{
	/* Adaptive wakeups (libbpf's default flags) from uprobes in another
	 * process to a consumer blocked in epoll, as a tracer would run: the
	 * setting under which 6.18 was seen skipping hits. */
	return check_emit(e, e->skel, 0, 1000, 0, true, res, why, len);
}

/* Attaches and detaches links on the sites the callers call, want cycles
 * times, then stops the callers. */
struct churn {
	struct env *e;
	__u64 off_push, off_ret, off_nop5;
	unsigned long want, cycles;
	atomic_bool stop;
	int err;
	char why[256];
};

static void *churn_main(void *arg)
{
	struct churn *ch = arg;
	struct env *e = ch->e;

	for (; ch->cycles < ch->want && !ch->err; ch->cycles++) {
		struct links ls = { .nl = 0 };
		__u64 offs[2] = { ch->off_push, ch->off_nop5 };
		__u64 cookies[2] = { BENCH_SLOT_SITE0 + 4, BENCH_SLOT_SITE0 + 5 };

		ch->err = attach_uprobe(e, &ls, ch->off_push, false, BENCH_SLOT_SITE0 + 2, ch->why, sizeof(ch->why)) ?:
			  attach_uprobe(e, &ls, ch->off_ret, true, BENCH_SLOT_SITE0 + 3, ch->why, sizeof(ch->why));
		if (!ch->err && e->multi)
			ch->err = attach_multi(e, &ls, offs, cookies, 2, ch->why, sizeof(ch->why));
		links_release(&ls);
	}
	atomic_store(&ch->stop, true);
	return NULL;
}

static int check_attach_churn(struct env *e, json_t *res, char *why, size_t len)
{
	struct churn ch = { .e = e, .want = e->o->quick ? 6 : 20 };
	struct callers c = { { bench_site_push, bench_site_ret }, 2, 0, &ch.stop, 0 };
	struct links ls = { .nl = 0 };
	const unsigned int threads = 2;
	__u64 calls;
	pthread_t t;
	bool ok = true;
	int err;

	err = site_offset(bench_site_push, 0, &ch.off_push) ?: site_offset(bench_site_ret, 0, &ch.off_ret) ?:
	      site_offset(bench_site_nop5, 0, &ch.off_nop5);
	if (err) {
		set_why(why, len, "cannot find the probe sites in /proc/self/maps: %s", strerror(-err));
		return err;
	}
	slots_reset(e, BENCH_SLOT_SITE0, 6);
	err = attach_uprobe(e, &ls, ch.off_push, false, BENCH_SLOT_SITE0, why, len) ?:
	      attach_uprobe(e, &ls, ch.off_ret, true, BENCH_SLOT_SITE0 + 1, why, len);
	if (err) {
		links_release(&ls);
		return err;
	}
	atomic_store(&ch.stop, false);
	err = pthread_create(&t, NULL, churn_main, &ch);
	if (err) {
		links_release(&ls);
		set_why(why, len, "cannot start the attaching thread: %s", strerror(err));
		return -err;
	}
	err = run_callers(&c, threads, why, len);
	if (err)
		atomic_store(&ch.stop, true);
	pthread_join(t, NULL);
	links_release(&ls);
	if (err)
		return err;
	if (ch.err) {
		set_why(why, len, "%s", ch.why);
		return ch.err;
	}
	calls = atomic_load(&c.calls);
	json_object_set_new(res, "threads", json_integer(threads));
	json_object_set_new(res, "calls_per_site", json_integer((json_int_t)calls));
	json_object_set_new(res, "attach_detach_cycles", json_integer((json_int_t)ch.cycles));
	json_object_set_new(res, "churned_entry_hits", json_integer((json_int_t)slot_sum(e, BENCH_SLOT_SITE0 + 2)));
	json_object_set_new(res, "churned_return_hits", json_integer((json_int_t)slot_sum(e, BENCH_SLOT_SITE0 + 3)));
	ok = expect(res, "entry_hits", slot_sum(e, BENCH_SLOT_SITE0), calls, why, len, ok);
	ok = expect(res, "return_hits", slot_sum(e, BENCH_SLOT_SITE0 + 1), calls, why, len, ok);
	ok = expect(res, "uncalled_site_hits", slot_sum(e, BENCH_SLOT_SITE0 + 5), 0, why, len, ok);
	if (ok && (slot_sum(e, BENCH_SLOT_SITE0 + 2) > calls || slot_sum(e, BENCH_SLOT_SITE0 + 3) > calls ||
		   slot_sum(e, BENCH_SLOT_SITE0 + 4) > calls)) {
		set_why(why, len, "a link attached part of the time counted more hits than calls were made");
		ok = false;
	}
	return ok ? 0 : 1;
}

static int check_page_faults(struct env *e, json_t *res, char *why, size_t len)
{
	unsigned long pages = check_calls(e, 20000);
	size_t bytes = pages * 4096;
	struct links ls = { .nl = 0 };
	__u64 perf = 0, tp = 0;
	bool ok = true;
	char *m;
	int err;

	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		set_why(why, len, "cannot map %zu bytes: %s", bytes, strerror(-err));
		return err;
	}
	madvise(m, bytes, MADV_NOHUGEPAGE);
	err = attach_prog(&ls, e->skel->progs.bench_fault_tp, why, len) ?:
	      attach_perf(e, &ls, e->skel->progs.bench_perf_fault, PERF_COUNT_SW_PAGE_FAULTS_MIN, 1, false, why, len);
	if (!err) {
		slots_reset(e, BENCH_SLOT_FAULT, 2);
		touch_pages(m, pages);
		perf = slot_sum(e, BENCH_SLOT_FAULT);
		tp = slot_sum(e, BENCH_SLOT_FAULT_TP);
	}
	links_release(&ls);
	munmap(m, bytes);
	if (err)
		return err;
	json_object_set_new(res, "pages", json_integer((json_int_t)pages));
	ok = expect(res, "perf_event_hits", perf, pages, why, len, ok);
	ok = expect(res, "tracepoint_hits", tp, pages, why, len, ok);
	return ok ? 0 : 1;
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int check_sampler_99hz(struct env *e, json_t *res, char *why, size_t len)
{
	const __u64 period = 1000000000ull / 99;
	double cpu0, cpu, want, tol;
	struct links ls = { .nl = 0 };
	__u64 got;
	int err;

	slots_reset(e, BENCH_SLOT_SAMPLE, 1);
	/* This thread's own CPU clock: its samples follow its CPU time,
	 * whatever else the machine runs. */
	err = attach_perf(e, &ls, e->skel->progs.bench_perf_sample, PERF_COUNT_SW_CPU_CLOCK, period, true, why, len);
	if (err) {
		links_release(&ls);
		return err;
	}
	cpu0 = thread_cpu_ns();
	while (thread_cpu_ns() - cpu0 < 1e9)
		batch_spin(NULL, 100);
	cpu = thread_cpu_ns() - cpu0;
	links_release(&ls);
	got = slot_sum(e, BENCH_SLOT_SAMPLE);
	want = cpu / (double)period;
	tol = want * 0.05 + 2;
	json_object_set_new(res, "cpu_s", json_real(cpu / 1e9));
	json_object_set_new(res, "samples", json_integer((json_int_t)got));
	json_object_set_new(res, "expected", json_real(want));
	if ((double)got < want - tol || (double)got > want + tol) {
		set_why(why, len, "%llu samples in %.3f s of CPU at 99 Hz: %.0f +- %.0f expected",
			(unsigned long long)got, cpu / 1e9, want, tol);
		return 1;
	}
	return 0;
}

/* --- the tests ------------------------------------------------------------ */

struct test {
	const char *name;
	bool check;
	const char *what;
	const struct ab_def *ab;	/* an A/B mechanism, or */
	int (*run)(struct env *e, json_t *res, char *why, size_t len);
};

static int run_attach_per_site(struct env *e, json_t *res, char *why, size_t len)
{
	return run_attach_100(e, false, res, why, len);
}

static int run_attach_multi(struct env *e, json_t *res, char *why, size_t len)
{
	return run_attach_100(e, true, res, why, len);
}

static const struct test tests[] = {
	{ "uprobe_push", false, "uprobe on push %rbp (libcuda's prologue), emulated", &ab_uprobe_push, NULL },
	{ "uprobe_after_endbr", false, "uprobe after endbr64 (+4, the push), emulated", &ab_uprobe_endbr4, NULL },
	{ "uprobe_on_endbr", false, "uprobe on the endbr64 itself", &ab_uprobe_endbr, NULL },
	{ "uprobe_stepped", false, "uprobe on mov %rdi,%rax: single-stepped", &ab_uprobe_stepped, NULL },
	{ "uprobe_nop5", false, "uprobe on a 5-byte nop", &ab_uprobe_nop5, NULL },
	{ "uretprobe", false, "return probe (uretprobe) on a push %rbp function", &ab_uretprobe, NULL },
	{ "uprobe_multi", false, "uprobe_multi link on push %rbp (compare uprobe_push: a per-site link)",
	  &ab_uprobe_multi, NULL },
	{ "tp_btf_sched", false, "tp_btf sched_switch + sched_wakeup on a pipe ping-pong (one CPU)", &ab_sched, NULL },
	{ "page_fault_perf", false, "software perf event page-faults-min (period 1), every CPU", &ab_fault_perf,
	  NULL },
	{ "page_fault_tp", false, "tp_btf page_fault_user", &ab_fault_tp, NULL },
	{ "sampler", false, "CPU-clock perf event sampler on every CPU, measured at 10 kHz", &ab_sampler, NULL },
	{ "ringbuf_no_wakeup", false, "ring-buffer reserve + submit, no wakeup (a bpf_loop run by BPF_PROG_TEST_RUN)",
	  &ab_rb_no_wakeup, NULL },
	{ "ringbuf_wakeup", false, "ring-buffer reserve + submit with a forced wakeup per record", &ab_rb_wakeup,
	  NULL },
	{ "attach_100", false, "attach and detach of 100 uprobes, one perf-event link each", NULL,
	  run_attach_per_site },
	{ "attach_100_multi", false, "attach and detach of 100 uprobes in one uprobe_multi link", NULL,
	  run_attach_multi },
	{ "delivery_threads", true, "4 threads: entry (per-site and multi), return and single-stepped probes, "
	  "every call counted once", NULL, check_threads },
	{ "delivery_ringbuf_full", true, "a full ring buffer: hits = records delivered + drops counted", NULL,
	  check_ringbuf_full },
	{ "delivery_ringbuf_wakeup", true, "ring-buffer wakeups from uprobe context: no hit skipped", NULL,
	  check_ringbuf_wakeup },
	{ "delivery_attach_churn", true, "links attached and detached on the same sites while they are called",
	  NULL, check_attach_churn },
	{ "delivery_page_faults", true, "N fresh pages written, N faults counted (perf event and tracepoint)", NULL,
	  check_page_faults },
	{ "sampler_99hz", true, "a 99 Hz CPU-clock sampler: samples = CPU time x 99", NULL, check_sampler_99hz },
};

#define NTESTS (sizeof(tests) / sizeof(tests[0]))

unsigned int bench_mech__count(const struct bench_opts *o)
{
	unsigned int n = 0;
	size_t i;

	if (!o->kci)
		return 0;
	for (i = 0; i < NTESTS; i++)
		n += bench_opts__selects(o, tests[i].name);
	return n;
}

static struct bench_bpf *open_bench(struct env *e, __u32 rb_bytes, char *why, size_t len)
{
	struct bench_bpf *skel = bench_bpf__open();
	int err;

	if (!skel) {
		err = -errno;
		set_why(why, len, "cannot open the benchmark's BPF programs: %s", strerror(-err));
		return NULL;
	}
	skel->rodata->target_tgid = e->pid;
	bpf_map__set_max_entries(skel->maps.bench_rb, rb_bytes);
	if (e->multi)
		bpf_program__set_expected_attach_type(skel->progs.bench_uprobe_multi, TRACER_ATTACH_UPROBE_MULTI);
	else
		bpf_program__set_autoload(skel->progs.bench_uprobe_multi, false);
	err = bench_bpf__load(skel);
	if (err) {
		set_why(why, len, "cannot load the benchmark's BPF programs: %s (needs root and a kernel with BTF; "
			"rerun record -v for libbpf's log)", strerror(-err));
		bench_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static void print_figure(struct env *e, const char *name, const char *fig_name, json_t *fig, const char *per)
{
	ktap__diag(e->k, "%s: %s %.4g %s%s (IQR %.4g-%.4g, min %.4g, max %.4g, %zu rounds)", name, fig_name,
		   json_real_value(json_object_get(fig, "median")), json_string_value(json_object_get(fig, "unit")),
		   per, json_real_value(json_object_get(fig, "q1")), json_real_value(json_object_get(fig, "q3")),
		   json_real_value(json_object_get(fig, "min")), json_real_value(json_object_get(fig, "max")),
		   json_array_size(json_object_get(fig, "samples")));
}

/* Diagnostics of one test's figures, then its comparison with the
 * baseline; false when a figure regressed. */
static bool report_figures(struct env *e, const struct test *t, json_t *res)
{
	if (t->ab) {
		json_t *h = json_object_get(res, "hits_per_op");

		print_figure(e, t->name, "cost", json_object_get(res, "ns_per_hit"), " per hit");
		ktap__diag(e->k, "%s: base line %.4g ns per %s; %.4g hits per %s; %lld hits in %lld %ss; %s", t->name,
			   json_real_value(json_object_get(json_object_get(res, "base_ns_per_op"), "median")),
			   json_string_value(json_object_get(res, "op")),
			   json_real_value(json_object_get(h, "median")), json_string_value(json_object_get(res, "op")),
			   (long long)json_integer_value(json_object_get(res, "hits")),
			   (long long)json_integer_value(json_object_get(res, "ops")),
			   json_string_value(json_object_get(res, "op")),
			   json_string_value(json_object_get(res, "clock")));
	} else if (json_object_get(res, "attach_ms")) {
		print_figure(e, t->name, "attach", json_object_get(res, "attach_ms"), " for 100");
		print_figure(e, t->name, "detach", json_object_get(res, "detach_ms"), " for 100");
	}
	return bench_mech__vs_baseline(e->k, e->baseline, res, &e->cmp);
}

bool bench_mech__vs_baseline(struct ktap *k, json_t *baseline, json_t *res, const struct bench_cmp_opts *o)
{
	static const char *const verdicts[] = { "same", "regressed", "improved", "undecided" };
	const char *name = json_string_value(json_object_get(res, "name"));
	struct bench_figure_change ch[8];
	char line[512];
	json_t *cmp;
	bool ok = true;
	int n, i;

	if (!baseline)
		return true;
	n = bench_stats__compare_test(baseline, res, o, ch, 8);
	if (n <= 0) {
		snprintf(line, sizeof(line), "%s: %s", name,
			 n ? "the baseline's samples of it are not numbers: not compared" :
			     "not in the baseline, or without its rounds: not compared");
		if (k->out)
			ktap__diag(k, "%s", line);
		else
			printf("baseline: %s\n", line);
		return n == 0;
	}
	cmp = json_object();
	for (i = 0; i < n; i++) {
		int off = snprintf(line, sizeof(line), "%s: vs baseline: ", name);

		bench_stats__describe(line + off, sizeof(line) - (size_t)off, &ch[i],
				      json_string_value(json_object_get(json_object_get(res, ch[i].figure), "unit")),
				      o->alpha);
		if (k->out)
			ktap__diag(k, "%s", line);
		else
			printf("baseline: %s\n", line);
		json_object_set_new(cmp, ch[i].figure,
				    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "baseline_median",
					      ch[i].change.old_median, "median", ch[i].change.new_median, "ratio",
					      ch[i].change.ratio, "limit", ch[i].change.limit, "iqr",
					      ch[i].change.spread,
					      "p", ch[i].change.p, "verdict", verdicts[ch[i].change.verdict]));
		if (ch[i].change.verdict == BENCH_REGRESSED)
			ok = false;
	}
	json_object_set_new(res, "vs_baseline", cmp);
	return ok;
}

static void report_check(struct env *e, const struct test *t, json_t *res)
{
	const char *key;
	json_t *v;
	char line[1024];
	size_t off = 0;

	json_object_foreach(res, key, v) {
		if (!json_is_integer(v) && !json_is_real(v))
			continue;
		if (json_is_integer(v))
			off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %lld", off ? ", " : "", key,
						(long long)json_integer_value(v));
		else
			off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %.4g", off ? ", " : "", key,
						json_real_value(v));
		if (off >= sizeof(line))
			break;
	}
	ktap__diag(e->k, "%s: %s", t->name, line);
}

int bench_mech__run(const struct bench_opts *o, struct ktap *k, json_t *baseline, json_t *mechanisms,
		    json_t *checks)
{
	struct env e = {
		.o = o,
		.k = k,
		.baseline = baseline,
		.cmp = { o->max_ratio, o->alpha, BENCH_CMP_MIN_ROUNDS },
		.pid = (__u32)getpid(),
	};
	int failed = 0;
	size_t i;

	e.rounds = o->rounds ? (unsigned int)o->rounds : o->quick ? 7 : 15;
	e.batches = o->quick ? 7 : 15;
	/* Detaching a per-site uprobe waits for an RCU grace period: 100 of
	 * them take seconds. */
	e.attach_rounds = e.rounds < 7 ? e.rounds : o->rounds ? e.rounds : 7;
	if (e.rounds > MAX_ROUNDS)
		e.rounds = e.attach_rounds = MAX_ROUNDS;
	e.ncpu = libbpf_num_possible_cpus();
	if (e.ncpu <= 0 || e.ncpu > MAX_CPUS)
		snprintf(e.load_err, sizeof(e.load_err), "cannot count the CPUs: %s",
			 strerror(e.ncpu < 0 ? -e.ncpu : EINVAL));
	else if (!(e.percpu = calloc((size_t)e.ncpu, sizeof(*e.percpu))))
		snprintf(e.load_err, sizeof(e.load_err), "out of memory");
	if (!e.load_err[0]) {
		e.multi = tracer__has_uprobe_multi();
		e.skel = open_bench(&e, RB_BYTES, e.load_err, sizeof(e.load_err));
	}
	for (i = 0; i < NTESTS; i++) {
		const struct test *t = &tests[i];
		json_t *res;
		char why[512] = "";
		int err;

		if (!bench_opts__selects(o, t->name))
			continue;
		res = json_pack("{s:s, s:s, s:s}", "name", t->name, "kind", t->check ? "check" : "mechanism", "what",
				t->what);
		json_array_append_new(t->check ? checks : mechanisms, res);
		if (e.load_err[0]) {
			err = -EIO;
			snprintf(why, sizeof(why), "%s", e.load_err);
		} else {
			fprintf(stderr, "bench: %-24s", t->name);
			err = t->ab ? run_ab(&e, t->ab, res, why, sizeof(why)) : t->run(&e, res, why, sizeof(why));
			fputc('\n', stderr);
		}
		if (err == -EOPNOTSUPP) {
			json_object_set_new(res, "status", json_string("skip"));
			json_object_set_new(res, "reason", json_string(why));
			ktap__skip(k, t->name, "%s", why);
			continue;
		}
		if (!err) {
			bool ok = true;

			if (t->check)
				report_check(&e, t, res);
			else
				ok = report_figures(&e, t, res);
			if (!ok) {
				err = 1;
				snprintf(why, sizeof(why), "failed its comparison with the baseline (above)");
			}
		} else if (err > 0 && !t->check) {
			report_figures(&e, t, res);
		} else if (err > 0) {
			report_check(&e, t, res);
		}
		json_object_set_new(res, "status", json_string(err ? "not ok" : "ok"));
		if (err) {
			json_object_set_new(res, "reason", json_string(why));
			ktap__diag(k, "%s: %s", t->name, why);
			if (!k->out)
				fprintf(stderr, "bench: %s: %s\n", t->name, why);
			failed = 1;
		}
		ktap__result(k, !err, t->name);
	}
	bench_bpf__destroy(e.skel);
	free(e.percpu);
	return failed;
}

static void print_ms_row(const char *name, const char *what, json_t *f, const char *status)
{
	printf("| %s %s | %.2f ms | %.2f–%.2f | | | %zu | %s |\n", name, what,
	       json_real_value(json_object_get(f, "median")), json_real_value(json_object_get(f, "q1")),
	       json_real_value(json_object_get(f, "q3")), json_array_size(json_object_get(f, "samples")), status);
}

void bench_mech__print(json_t *mechanisms, json_t *checks)
{
	json_t *r;
	size_t i;

	if (json_array_size(mechanisms)) {
		printf("\n| mechanism | cost (median) | IQR | base line per op | hits/op | rounds | status |\n");
		printf("|---|---:|---:|---:|---:|---:|---|\n");
	}
	json_array_foreach(mechanisms, i, r) {
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *status = json_string_value(json_object_get(r, "status"));
		json_t *c = json_object_get(r, "ns_per_hit"), *a = json_object_get(r, "attach_ms");

		if (json_is_object(c)) {
			printf("| %s | %.0f ns/hit | %.0f–%.0f | %.3g ns | %.3g | %zu | %s |\n", name,
			       json_real_value(json_object_get(c, "median")), json_real_value(json_object_get(c, "q1")),
			       json_real_value(json_object_get(c, "q3")),
			       json_real_value(json_object_get(json_object_get(r, "base_ns_per_op"), "median")),
			       json_real_value(json_object_get(json_object_get(r, "hits_per_op"), "median")),
			       json_array_size(json_object_get(c, "samples")), status);
		} else if (json_is_object(a)) {
			json_t *d = json_object_get(r, "detach_ms");

			print_ms_row(name, "attach", a, status);
			print_ms_row(name, "detach", d, status);
		} else {
			printf("| %s | | | | | | %s |\n", name, status);
		}
	}
	if (json_array_size(checks)) {
		printf("\n| check | status | reason |\n|---|---|---|\n");
		json_array_foreach(checks, i, r)
			printf("| %s | %s | %s |\n", json_string_value(json_object_get(r, "name")),
			       json_string_value(json_object_get(r, "status")),
			       json_is_string(json_object_get(r, "reason")) ?
				       json_string_value(json_object_get(r, "reason")) : "");
	}
}
