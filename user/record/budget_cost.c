// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "budget_cost.h"
#include "clock.h"

#define TRIM_KEEP	0.9	/* of each phase's timings, the fastest, unless said */
#define PAGE		4096
#define FAULT_PAGES	512	/* per phase */
#define FAULT_ROUNDS	4	/* even: ends on; each switch on of the fault programs waits for the kernel (10-20 ms) */
#define SCHED_TRIPS	32	/* round trips per phase */
#define SCHED_ROUNDS	6

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The mean of the fastest share of v[0..n) (sorted in place). */
static double trimmed_mean(double *v, unsigned int n, double share)
{
	unsigned int keep = (unsigned int)(n * share), i;
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	if (!keep)
		keep = n;
	for (i = 0; i < keep; i++)
		sum += v[i];
	return keep ? sum / keep : 0;
}

static void spin_ns(__u64 ns)
{
	__u64 t = clock__mono_ns();

	while (clock__mono_ns() - t < ns)
		;
}

static volatile unsigned long spin_sink;

void budget_cost__spin(unsigned long iterations)
{
	for (unsigned long i = 0; i < iterations; i++)
		spin_sink += i;
}

unsigned long budget_cost__spin_calibrate(__u64 ns)
{
	unsigned long n = 1000;
	__u64 best = ~0ULL;

	/* the fastest of a few: a preemption would make it look slower */
	for (int k = 0; k < 5; k++) {
		__u64 t = clock__mono_ns(), d;

		budget_cost__spin(n);
		d = clock__mono_ns() - t;
		if (d < best)
			best = d;
	}
	return best ? (unsigned long)((double)n * (double)ns / (double)best) + 1 : n;
}

/* Times ab->ops ops into v (ns each). */
static void phase(const struct cost_ab *ab, double *v)
{
	for (unsigned int i = 0; i < ab->ops; i++) {
		__u64 a, b;

		if (ab->gap_ns)
			spin_ns(ab->gap_ns);
		a = clock__mono_ns();
		ab->op(ab->arg);
		b = clock__mono_ns();
		v[i] = (double)(b - a);
	}
}

int budget_cost__ab(const struct cost_ab *ab, double *ns)
{
	unsigned int rounds = ab->rounds ? ab->rounds : 1, n = ab->ops * rounds, r;
	double *off = calloc(n, sizeof(*off)), *on = calloc(n, sizeof(*on));
	int e = 0;

	if (!off || !on) {
		free(off);
		free(on);
		return -ENOMEM;
	}
	/* off, on, on, off, off, on, ... (on_now: on, off, off, on, ...):
	 * drift hits both alike */
	for (r = 0; r < rounds && !e; r++) {
		bool on_first = (r % 2 == 1) != ab->on_now;

		for (int k = 0; k < 2 && !e; k++) {
			bool want_on = (k == 0) == on_first;

			e = ab->set(ab->arg, want_on);
			if (!e)
				phase(ab, (want_on ? on : off) + (size_t)r * ab->ops);
		}
	}
	if (!e) {
		double share = ab->keep > 0 ? ab->keep : TRIM_KEEP;
		double d = trimmed_mean(on, n, share) - trimmed_mean(off, n, share);

		*ns = d > 0 ? d : 0;
	}
	ab->set(ab->arg, ab->on_now);
	free(off);
	free(on);
	return e;
}

/* --- the tracer core: a target, or not ---------------------------------- */

struct self_target {
	struct tracer *t;
	__u32 pid;
	bool on;
};

static int set_target(struct self_target *s, bool on)
{
	int e = 0;

	if (on == s->on)
		return 0;
	e = on ? tracer__add_target(s->t, s->pid, true) : tracer__remove_target(s->t, s->pid);
	if (!e)
		s->on = on;
	return e;
}

/* A page fault: one fresh page written. */
struct fault_arg {
	int (*set)(void *arg, bool on);	/* the fault programs */
	void *set_arg;
	char *pages;
	size_t next;
};

static int fault_set(void *arg, bool on)
{
	struct fault_arg *f = arg;

	if (f->pages)
		munmap(f->pages, (size_t)FAULT_PAGES * PAGE);
	f->pages = mmap(NULL, (size_t)FAULT_PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (f->pages == MAP_FAILED) {
		f->pages = NULL;
		return -errno;
	}
	madvise(f->pages, (size_t)FAULT_PAGES * PAGE, MADV_NOHUGEPAGE);
	f->next = 0;
	return f->set(f->set_arg, on);
}

static void fault_op(void *arg)
{
	struct fault_arg *f = arg;

	((volatile char *)f->pages)[f->next++ * PAGE] = 1;
}

/* A pipe round trip with a thread on the same CPU: two wakeups, two
 * switches. */
struct sched_arg {
	struct self_target self;
	int ab[2], ba[2];
	pthread_t partner;
};

static void *sched_partner(void *arg)
{
	struct sched_arg *s = arg;
	char c;

	while (read(s->ab[0], &c, 1) == 1 && c)
		if (write(s->ba[1], &c, 1) != 1)
			break;
	return NULL;
}

static int sched_set(void *arg, bool on)
{
	return set_target(&((struct sched_arg *)arg)->self, on);
}

static void sched_op(void *arg)
{
	struct sched_arg *s = arg;
	char c = 1;

	if (write(s->ab[1], &c, 1) == 1 && read(s->ba[0], &c, 1) == 1)
		return;
}

static int measure_sched(struct self_target self, double *ns)
{
	struct sched_arg s = { .self = self, .ab = { -1, -1 }, .ba = { -1, -1 } };
	cpu_set_t old, one;
	pthread_attr_t attr;
	double trip = 0;
	char stop = 0;
	int e, cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(old), &old))
		return -errno;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (pipe2(s.ab, O_CLOEXEC) || pipe2(s.ba, O_CLOEXEC)) {
		e = -errno;
		goto out;
	}
	e = pthread_attr_init(&attr);
	if (e) {
		e = -e;
		goto out;
	}
	e = -pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	e = e ?: -pthread_create(&s.partner, &attr, sched_partner, &s);
	pthread_attr_destroy(&attr);
	if (e)
		goto out;
	e = sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
	if (!e) {
		struct cost_ab ab = { sched_op, sched_set, &s, SCHED_TRIPS, SCHED_ROUNDS, 0, 0, false };

		e = budget_cost__ab(&ab, &trip);
		/* a round trip is 4 events: two wakeups, two switches */
		*ns = trip / 4;
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (write(s.ab[1], &stop, 1) == 1)
		pthread_join(s.partner, NULL);
out:
	for (int i = 0; i < 2; i++) {
		if (s.ab[i] >= 0)
			close(s.ab[i]);
		if (s.ba[i] >= 0)
			close(s.ba[i]);
	}
	return e;
}

int budget_cost__measure_core(struct tracer *t, struct tracer_costs *c, char *err, size_t errlen)
{
	struct self_target self = { t, (__u32)getpid(), false };
	int e = measure_sched(self, &c->sched_ns);

	if (e)
		snprintf(err, errlen, "cannot measure what tracing a scheduler event costs here: %s", strerror(-e));
	return e;
}

int budget_cost__measure_faults(int (*set)(void *arg, bool on), void *arg, double *ns)
{
	struct fault_arg f = { .set = set, .set_arg = arg };
	/* on since the family attached them: an even number of rounds ends
	 * on, and switching them on is the slow way */
	struct cost_ab ab = { fault_op, fault_set, &f, FAULT_PAGES, FAULT_ROUNDS, 0, 0, true };
	int e = budget_cost__ab(&ab, ns), e2;

	if (f.pages)
		munmap(f.pages, (size_t)FAULT_PAGES * PAGE);
	e2 = set(arg, true);	/* on after a failure too */
	return e ?: e2;
}

void budget_cost__forget(struct tracer *t, __u32 pid)
{
	int fd = tracer__map_fd(t, "named_tasks");
	__u32 key;

	tracer__remove_target(t, pid);
	tracer__discard(t, pid);
	while (fd >= 0 && !bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			break;
}
