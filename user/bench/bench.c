// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <jansson.h>
#include "bench.h"
#include "bench_flight.h"
#include "bench_launch.h"
#include "bench_load.h"
#include "bench_mech.h"
#include "bench_stats.h"
#include "ktap.h"
#include "out_file.h"
#include "recorder.h"
#include "clock.h"
#include "proc.h"
#include "isr_format.h"
#include "selfprobe.h"

#define MAX_ROUNDS 64
#define READY_TIMEOUT_S 60.0
#define RINGBUF_BYTES (32u << 20)

/* What one run of a workload did. */
struct work_result {
	double ops;
	double seconds;
};

struct workload {
	const char *name;
	const char *unit;	/* what an op is */
	const char *what;
	int threads;		/* 0: one per CPU */
	struct work_result (*run)(double seconds, int threads);
	bool cuda;		/* probe this executable's cuLaunchKernel / cuStreamSynchronize */
	double budget_pct;	/* traced with this overhead budget; 0: none (every call probed) */
	double min_seconds;	/* runs last at least this long */
	bool python;		/* probe the GIL of the Python it starts (--gil) */
};

static double now_s(void)
{
	return clock__mono_ns() / 1e9;
}

static struct work_result run_cuda_launch(double seconds, int threads)
{
	struct work_result r = { 0, 0 };
	double t0 = now_s(), end = t0 + seconds;

	(void)threads;
	while (now_s() < end) {
		for (int i = 0; i < 1000; i++)
			cuLaunchKernel((void *)0x1000, 3, 2, 1, 128, 1, 1, 256, (void *)0x5000, NULL, NULL);
		r.ops += 1000;
	}
	r.seconds = now_s() - t0;
	return r;
}

/*
 * A launch-bound thread at `rate` launches/s untraced: each iteration spins
 * for its share of CPU work, then launches. The probe's cost comes on top
 * of the work, so traced throughput drops by the probe's share of the
 * thread: what the overhead budget must hold to 1%. The budget lets a job
 * spend a burst credit of budget x 1 s at once (a run of T seconds may lose
 * 1% + 1%/T): these runs last 10 s, so that is 0.1% at most.
 */
static struct work_result run_launches_at(double seconds, double rate)
{
	struct work_result r = { 0, 0 };
	double t0 = now_s(), end = t0 + seconds, work = 1.0 / rate;

	while (now_s() < end) {
		for (int i = 0; i < 100; i++) {
			double t = now_s();

			while (now_s() - t < work)
				;
			cuLaunchKernel((void *)0x1000, 3, 2, 1, 128, 1, 1, 256, (void *)0x5000, NULL, NULL);
		}
		r.ops += 100;
	}
	r.seconds = now_s() - t0;
	return r;
}

static struct work_result run_budget_10k(double seconds, int threads)
{
	(void)threads;
	return run_launches_at(seconds, 10000);
}

static struct work_result run_budget_50k(double seconds, int threads)
{
	(void)threads;
	return run_launches_at(seconds, 50000);
}

static struct work_result run_budget_150k(double seconds, int threads)
{
	(void)threads;
	return run_launches_at(seconds, 150000);
}

static struct work_result run_cuda_sync(double seconds, int threads)
{
	struct work_result r = { 0, 0 };
	double t0 = now_s(), end = t0 + seconds;

	(void)threads;
	while (now_s() < end) {
		for (int i = 0; i < 1000; i++)
			cuStreamSynchronize((void *)0x5000);
		r.ops += 1000;
	}
	r.seconds = now_s() - t0;
	return r;
}

/* Two threads bouncing a byte over two pipes: every round trip is two
 * wakeups and at least two context switches. */
struct pingpong {
	struct bench_pipes pp;
	double end;
	double trips;
};

static struct work_result run_pingpong(double seconds, int threads)
{
	struct work_result r = { 0, 0 };
	struct pingpong p = { { { -1, -1 }, { -1, -1 } }, 0, 0 };
	pthread_t t;
	double t0;
	char c = 1;

	(void)threads;
	if (pipe(p.pp.ab) || pipe(p.pp.ba))
		return r;
	if (pthread_create(&t, NULL, bench_pong, &p.pp))
		return r;
	t0 = now_s();
	p.end = t0 + seconds;
	while (now_s() < p.end) {
		for (int i = 0; i < 100; i++) {
			if (write(p.pp.ab[1], &c, 1) != 1 || read(p.pp.ba[0], &c, 1) != 1)
				goto out;
			p.trips++;
		}
	}
out:
	c = 0;
	if (write(p.pp.ab[1], &c, 1) == 1)
		pthread_join(t, NULL);
	r.ops = p.trips;
	r.seconds = now_s() - t0;
	return r;
}

/* Fresh anonymous pages, written once: one minor fault per page. */
struct fault_arg {
	double end;
	double faults;
};

static void *fault_worker(void *arg)
{
	struct fault_arg *f = arg;
	const size_t pages = 256, len = pages * 4096;

	while (now_s() < f->end) {
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			break;
		madvise(m, len, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < pages; i++)
			m[i * 4096] = 1;
		munmap(m, len);
		f->faults += pages;
	}
	return NULL;
}

static struct work_result run_faults(double seconds, int threads)
{
	struct fault_arg args[64];
	pthread_t t[64];
	struct work_result r = { 0, 0 };
	double t0 = now_s();
	int n = threads < 1 ? 1 : threads > 64 ? 64 : threads, i;

	for (i = 0; i < n; i++) {
		args[i].end = t0 + seconds;
		args[i].faults = 0;
		pthread_create(&t[i], NULL, fault_worker, &args[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		r.ops += args[i].faults;
	}
	r.seconds = now_s() - t0;
	return r;
}

/*
 * Two Python threads calling time.sleep(0) as fast as they can: each call
 * releases the GIL (PyEval_SaveThread: one probe hit) and takes it back
 * (PyEval_RestoreThread entry and return: two), contended by the other
 * thread. Runs the python3 found in PATH (CPython 3.10-3.13) as a child of
 * the workload process, followed by the recorder; ops are sleep(0) calls.
 */
static const char gil_script[] =
	"import sys, threading, time\n"
	"end = time.monotonic() + float(sys.argv[1])\n"
	"counts = [0, 0]\n"
	"def work(i):\n"
	"    n = 0\n"
	"    while time.monotonic() < end:\n"
	"        for _ in range(100):\n"
	"            time.sleep(0)\n"
	"        n += 100\n"
	"    counts[i] = n\n"
	"t0 = time.monotonic()\n"
	"ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]\n"
	"[t.start() for t in ts]\n"
	"[t.join() for t in ts]\n"
	"print(sum(counts), time.monotonic() - t0)\n";

static struct work_result run_gil(double seconds, int threads)
{
	struct work_result r = { 0, 0 };
	char secs[32], line[128];
	FILE *f;
	int fds[2];
	pid_t pid;

	(void)threads;
	snprintf(secs, sizeof(secs), "%.3f", seconds);
	if (pipe(fds))
		return r;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", "-c", gil_script, secs, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fgets(line, sizeof(line), f) && sscanf(line, "%lf %lf", &r.ops, &r.seconds) != 2)
		r.seconds = 0;
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

static const struct workload workloads[] = {
	{ "sched_switch", "round trip", "two threads ping-pong a byte over pipes (wakeups + context switches)",
	  1, run_pingpong, false, 0, 0, false },
	{ "page_fault", "fault", "one thread maps, writes and unmaps fresh pages (one minor fault per page)",
	  1, run_faults, false, 0, 0, false },
	{ "fault_flood", "fault", "one faulting thread per CPU: the recorder's sustained event rate",
	  0, run_faults, false, 0, 0, false },
	{ "cuda_launch", "call", "a loop of cuLaunchKernel calls (libcuda's prologue): one entry uprobe each",
	  1, run_cuda_launch, true, 0, 0, false },
	{ "cuda_sync", "call", "a loop of cuStreamSynchronize calls: entry and return uprobes each",
	  1, run_cuda_sync, true, 0, 0, false },
	{ "gil_contend", "sleep(0)", "two Python threads calling time.sleep(0): 3 GIL probe hits each (python3, --gil)",
	  1, run_gil, false, 0, 0, true },
	{ "budget_10k", "launch", "a launch-bound thread at 10k launches/s untraced, traced with the 1% budget",
	  1, run_budget_10k, true, 1.0, 10, false },
	{ "budget_50k", "launch", "the same at 50k launches/s: sampled to stay within the 1% budget",
	  1, run_budget_50k, true, 1.0, 10, false },
	{ "budget_150k", "launch", "the same at 150k launches/s: sampled to stay within the 1% budget",
	  1, run_budget_150k, true, 1.0, 10, false },
};

/* Forks the workload; it starts once `ready` exists and reports its result
 * through a pipe. */
static pid_t start_child(const struct workload *w, double seconds, int threads, const char *ready, int *rfd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		struct work_result r = { 0, 0 };
		double deadline = now_s() + READY_TIMEOUT_S;

		close(fds[0]);
		while (access(ready, F_OK) != 0 && now_s() < deadline)
			usleep(1000);
		if (access(ready, F_OK) == 0)
			r = w->run(seconds, threads);
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	*rfd = fds[0];
	return pid;
}

static int read_result(int fd, pid_t pid, struct work_result *r)
{
	ssize_t n = read(fd, r, sizeof(*r));
	int status;

	close(fd);
	waitpid(pid, &status, 0);
	if (n != (ssize_t)sizeof(*r) || r->seconds <= 0)
		return -EIO;
	return 0;
}

struct sample {
	double untraced, traced;	/* ops/s */
	double events_per_op;
	double events_per_s;
	__u64 drops;
};

static int run_round(const struct bench_opts *o, const struct workload *w, bool traced, struct sample *s)
{
	char ready[512], rec[512];
	struct work_result r;
	int threads = w->threads ? w->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
	int fd, e;
	pid_t pid;

	snprintf(ready, sizeof(ready), "%s/bench.ready", o->tmpdir);
	snprintf(rec, sizeof(rec), "%s/bench.isr", o->tmpdir);
	unlink(ready);
	pid = start_child(w, o->seconds > w->min_seconds ? o->seconds : w->min_seconds, threads, ready, &fd);
	if (pid < 0)
		return -errno;
	if (!traced) {
		int rf = open(ready, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (rf >= 0)
			close(rf);
		e = read_result(fd, pid, &r);
		if (!e)
			s->untraced = r.ops / r.seconds;
		return e;
	} else {
		__u32 target = (__u32)pid;
		const char *self[] = { o->self_exe };
		struct record_config ro = {
			.targets = { .pids = { target }, .pid_count = 1, .follow_children = true },
			.output = { .path = rec, .ready_file = ready, .zstd_level = 1 },
			.tracer = { .ringbuf_bytes = RINGBUF_BYTES, .budget_pct = w->budget_pct },
			.kernel = { .page_faults = true },
			.cuda = { .enabled = w->cuda, .libs = { w->cuda ? self[0] : NULL }, .lib_count = w->cuda ? 1 : 0 },
			.python = { .gil = w->python },
			.quiet = true,
		};
		struct record_result res;

		e = record__run(&ro, &res);
		unlink(rec);
		if (e) {
			kill(pid, SIGKILL);
			read_result(fd, pid, &r);
			return e;
		}
		e = read_result(fd, pid, &r);
		if (e)
			return e;
		s->traced = r.ops / r.seconds;
		s->events_per_op = r.ops > 0 ? res.events / r.ops : 0;
		s->events_per_s = res.events / r.seconds;
		s->drops = res.drops_total;
		return 0;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* {median, min, max, samples}; a cost compared with a baseline says so:
 * whole workloads timed by the wall clock, held to the latencies' ratio
 * (user/bench/bench_stats.h). */
static json_t *stats_of(double *v, int n, bool cost)
{
	json_t *samples = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(samples, json_real(v[i]));
	qsort(v, n, sizeof(*v), cmp_double);
	return json_pack("{s:f, s:f, s:f, s:o, s:o}", "median", n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
			 "min", v[0], "max", v[n - 1], "samples", samples, "cost",
			 cost ? json_string("latency") : json_false());
}

static json_t *stats(double *v, int n)
{
	return stats_of(v, n, false);
}

static double median_of(json_t *st)
{
	return json_real_value(json_object_get(st, "median"));
}

static json_t *run_bench(const struct bench_opts *o, const struct workload *w, int rounds)
{
	double un[MAX_ROUNDS], tr[MAX_ROUNDS], ratio[MAX_ROUNDS], ns_ev[MAX_ROUNDS], epo[MAX_ROUNDS],
		eps[MAX_ROUNDS];
	__u64 drops = 0;
	json_t *j;
	int i, e;

	fprintf(stderr, "bench: %-13s", w->name);
	for (i = 0; i < rounds; i++) {
		struct sample s = { 0, 0, 0, 0, 0 };

		/* A then B, every round: drift in the machine hits both alike. */
		e = run_round(o, w, false, &s);
		e = e ?: run_round(o, w, true, &s);
		if (e) {
			fprintf(stderr, "\nbench: %s failed: %s\n", w->name, strerror(-e));
			return NULL;
		}
		un[i] = s.untraced;
		tr[i] = s.traced;
		ratio[i] = s.traced / s.untraced;
		epo[i] = s.events_per_op;
		eps[i] = s.events_per_s;
		/* Extra time per op, spread over the events that op produced. */
		ns_ev[i] = s.events_per_op > 0 ? (1e9 / s.traced - 1e9 / s.untraced) / s.events_per_op : 0;
		drops += s.drops;
		fputc('.', stderr);
	}
	fputc('\n', stderr);
	j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "name", w->name, "unit", w->unit,
		      "what", w->what, "untraced_ops_per_s", stats(un, rounds), "traced_ops_per_s",
		      stats(tr, rounds), "traced_over_untraced", stats(ratio, rounds), "ns_per_event",
		      stats_of(ns_ev, rounds, true), "events_per_op", stats(epo, rounds), "events_per_s",
		      stats(eps, rounds), "drops", (json_int_t)drops);
	if (j)
		json_object_set_new(j, "overhead_pct",
				    json_real((1 - median_of(json_object_get(j, "traced_over_untraced"))) * 100));
	return j;
}

static json_t *machine_info(void)
{
	char model[256] = "", line[512], cmdline[4096], date[32];
	time_t now = time(NULL);
	struct utsname u;
	struct tm tm;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(model, sizeof(model), "%s", c + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	if (proc__read_small("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = '\0';
	if (!gmtime_r(&now, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm))
		date[0] = '\0';
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s}", "hostname", u.nodename, "kernel", u.release,
			 "kernel_build", u.version, "cpu", model, "cpus", (int)sysconf(_SC_NPROCESSORS_ONLN),
			 "cmdline", cmdline, "date", date);
}

static void print_table(json_t *results)
{
	json_t *r;
	size_t i;

	printf("\n| benchmark | untraced ops/s | traced ops/s | overhead | ns/event | events/op | events/s | drops |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	json_array_foreach(results, i, r) {
		json_t *u = json_object_get(r, "untraced_ops_per_s"), *t = json_object_get(r, "traced_ops_per_s");
		json_t *ns = json_object_get(r, "ns_per_event");

		printf("| %s | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %.1f%% | %.0f (%.0f–%.0f) | %.2f | %.0f | %lld |\n",
		       json_string_value(json_object_get(r, "name")), median_of(u),
		       json_real_value(json_object_get(u, "min")), json_real_value(json_object_get(u, "max")),
		       median_of(t), json_real_value(json_object_get(t, "min")),
		       json_real_value(json_object_get(t, "max")),
		       json_real_value(json_object_get(r, "overhead_pct")), median_of(ns),
		       json_real_value(json_object_get(ns, "min")), json_real_value(json_object_get(ns, "max")),
		       median_of(json_object_get(r, "events_per_op")), median_of(json_object_get(r, "events_per_s")),
		       (long long)json_integer_value(json_object_get(r, "drops")));
	}
	printf("\nMedians of interleaved untraced/traced rounds; min–max in brackets.\n");
}

/* Looks up "bench.metric" in the results: metric is overhead_pct, drops, or
 * the median of any statistics object (ns_per_event, ...). */
/* The flight recorder's ring, one row per rate. */
static void print_flight_table(json_t *flight)
{
	if (!json_array_size(flight))
		return;
	printf("\nFlight recorder ring (--flight-recorder 3, zstd 1; simulated events, this thread's CPU time):\n\n"
	       "| events/s | ring MiB | bytes/event | CPU ns/event | CPU %% per second | window write ms |\n"
	       "|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < json_array_size(flight); i++) {
		json_t *f = json_array_get(flight, i);

		printf("| %.0f | %.2f | %.2f | %.0f | %.3f | %.1f |\n", json_real_value(json_object_get(f, "events_per_s")),
		       json_real_value(json_object_get(f, "ring_mib")), json_real_value(json_object_get(f, "bytes_per_event")),
		       json_real_value(json_object_get(f, "cpu_ns_per_event")),
		       json_real_value(json_object_get(f, "cpu_pct_per_s")),
		       json_real_value(json_object_get(f, "write_window_ms")));
	}
}

static int metric_value(json_t *results, const char *key, double *out)
{
	char name[128];
	const char *dot = strchr(key, '.');
	json_t *r, *m;
	size_t i;

	if (!dot || (size_t)(dot - key) >= sizeof(name))
		return -EINVAL;
	memcpy(name, key, dot - key);
	name[dot - key] = '\0';
	json_array_foreach(results, i, r) {
		if (strcmp(json_string_value(json_object_get(r, "name")), name))
			continue;
		m = json_object_get(r, dot + 1);
		if (json_is_number(m))
			*out = json_number_value(m);
		else if (json_is_object(m))
			*out = median_of(m);
		else
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

static json_t *load_thresholds(const char *path)
{
	json_error_t jerr;
	json_t *th = json_load_file(path, 0, &jerr);

	if (!th || !json_is_object(th)) {
		fprintf(stderr, "bench: cannot read thresholds %s: %s (line %d); expected {\"bench.metric\": limit}\n",
			path, th ? "not an object" : jerr.text, jerr.line);
		json_decref(th);
		return NULL;
	}
	return th;
}

/* The thresholds of benchmark `only` (NULL: all) against the results, one
 * line each: on stdout, or as KTAP diagnostics. 0 all held, 1 one did not,
 * -EINVAL a threshold names no metric. */
static int check_thresholds(json_t *results, json_t *th, const char *only, struct ktap *k)
{
	json_t *limit;
	const char *key;
	int bad = 0;

	json_object_foreach(th, key, limit) {
		size_t n = only ? strlen(only) : 0;
		double v;
		int e;

		if (only && (strncmp(key, only, n) || key[n] != '.'))
			continue;
		e = metric_value(results, key, &v);
		if (e == -ENOENT)
			continue; /* that benchmark did not run (--only) */
		if (e || !json_is_number(limit)) {
			fprintf(stderr, "bench: threshold %s names no metric of the results\n", key);
			ktap__diag(k, "threshold %s names no metric of the results", key);
			bad = -EINVAL;
			continue;
		}
		if (v > json_number_value(limit)) {
			if (k->out)
				ktap__diag(k, "REGRESSION %s = %.2f > %.2f", key, v, json_number_value(limit));
			else
				printf("REGRESSION %s = %.2f > %.2f\n", key, v, json_number_value(limit));
			if (!bad)
				bad = 1;
		} else if (k->out) {
			ktap__diag(k, "threshold %s = %.2f <= %.2f", key, v, json_number_value(limit));
		} else {
			printf("ok %s = %.2f <= %.2f\n", key, v, json_number_value(limit));
		}
	}
	return bad;
}

/* The recorder workloads of the kernel-CI suite: the scheduler, fault and
 * uprobe paths end to end (not the budget's, nor Python's). */
static bool workload_selected(const struct bench_opts *o, const struct workload *w)
{
	static const char *const kci[] = { "sched_switch", "page_fault", "fault_flood", "cuda_launch", "cuda_sync" };
	size_t i;

	if (!bench_opts__selects(o, w->name))
		return false;
	if (!o->kci)
		return true;
	for (i = 0; i < sizeof(kci) / sizeof(kci[0]) && !o->quick; i++)
		if (!strcmp(kci[i], w->name))
			return true;
	return false;
}

static void describe_baseline(struct ktap *k, const char *path, json_t *baseline, json_t *machine)
{
	json_t *bm = json_object_get(baseline, "machine");
	char line[1024];

	snprintf(line, sizeof(line), "baseline %s: kernel %s (%s), %s, %d CPUs, %s", path,
		 json_string_value(json_object_get(bm, "kernel")) ?: "unknown",
		 json_string_value(json_object_get(bm, "kernel_build")) ?: "build unknown",
		 json_string_value(json_object_get(bm, "cpu")) ?: "CPU unknown",
		 (int)json_integer_value(json_object_get(bm, "cpus")),
		 json_string_value(json_object_get(bm, "date")) ?: "date unknown");
	if (k->out)
		ktap__diag(k, "%s", line);
	else
		printf("%s\n", line);
	snprintf(line, sizeof(line), "this run: kernel %s (%s), %s, %d CPUs",
		 json_string_value(json_object_get(machine, "kernel")),
		 json_string_value(json_object_get(machine, "kernel_build")),
		 json_string_value(json_object_get(machine, "cpu")),
		 (int)json_integer_value(json_object_get(machine, "cpus")));
	if (k->out)
		ktap__diag(k, "%s", line);
	else
		printf("%s\n", line);
}

/* The results as JSON in path, a new file (lib/out_file.h). 0 or -errno
 * after saying why. */
static int write_results(json_t *doc, const char *path, const struct out_file_share *share)
{
	struct out_file f;
	int e = out_file__create(&f, path, share);

	if (e) {
		fprintf(stderr, "bench: cannot create %s: %s\n", path, out_file__strerror(e));
		return e;
	}
	if (json_dumpfd(doc, f.fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
		e = -EIO;
	e = e ?: out_file__commit(&f);
	e = out_file__close(&f) ?: e;
	if (e)
		fprintf(stderr, "bench: writing %s failed: %s; nothing was written\n", path, strerror(-e));
	return e;
}

/* Where the rounds' recordings and ready files go: a fresh directory of
 * our own (mkdtemp, 0700) under the chosen one, so that nothing another
 * user of a shared /tmp planted can redirect them. */
static int make_workdir(const char *under, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/inferscope-bench-XXXXXX", under) >= len)
		return -ENAMETOOLONG;
	if (!mkdtemp(out)) {
		int e = -errno;

		fprintf(stderr, "bench: cannot create a directory in %s: %s; choose another with --tmpdir\n", under,
			strerror(-e));
		return e;
	}
	return 0;
}

static void remove_workdir(const char *dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/bench.ready", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench.isr", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lb.result", dir);
	unlink(path);
	rmdir(dir);
}

/* One bench run: what it was asked, what it holds, how it went. */
struct bench_run {
	struct bench_opts o;	/* as asked, but tmpdir: the run's own directory */
	char workdir[400];	/* run_round's paths hold it */
	int rounds;
	unsigned int planned;	/* tests the run reports */
	struct bench_cmp_opts cmp;
	struct ktap k;
	json_t *results, *mechanisms, *checks, *th, *baseline, *machine, *flight, *launch;
	int e;			/* -errno: the run could not be done as asked */
	int failed;		/* 1: a test failed */
};

/* The options as a plan: the rounds, the tests selected, the thresholds
 * and the baseline read. 0, or -EINVAL after saying what is wrong. */
static int run_plan(struct bench_run *r)
{
	const struct bench_opts *o = &r->o;
	json_error_t jerr;
	size_t i;

	if (r->rounds < 1 || r->rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench: --rounds must be 1..%d\n", MAX_ROUNDS);
		return -EINVAL;
	}
	r->planned = bench_mech__count(o) + (!o->kci && bench_opts__selects(o, "flight_ring")) +
		     bench_launch__count(o);
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		r->planned += workload_selected(o, &workloads[i]);
	if (!r->planned) {
		fprintf(stderr, "bench: no benchmark named %s%s\n", o->only ? o->only : "",
			o->kci ? " in the kernel-CI suite" : " (--kci for the kernel-CI suite's)");
		return -EINVAL;
	}
	if (o->thresholds && !(r->th = load_thresholds(o->thresholds)))
		return -EINVAL;
	if (!o->baseline)
		return 0;
	r->baseline = json_load_file(o->baseline, 0, &jerr);
	if (!r->baseline || !json_is_object(r->baseline)) {
		fprintf(stderr, "bench: cannot read the baseline %s: %s (line %d); give a JSON file written by "
			"bench -o\n", o->baseline, r->baseline ? "not an object" : jerr.text, jerr.line);
		return -EINVAL;
	}
	return 0;
}

/* The KTAP plan and the lines that say where the figures come from. */
static void run_begin(struct bench_run *r)
{
	const struct bench_opts *o = &r->o;
	json_t *machine = r->machine;

	ktap__begin(&r->k, o->ktap ? stdout : NULL, r->planned);
	ktap__diag(&r->k, "inferscope-bpf %s bench%s: kernel %s (%s), %s, %d CPUs", ISR_VERSION,
		   o->kci ? (o->quick ? " --kci --quick" : " --kci") : "",
		   json_string_value(json_object_get(machine, "kernel")),
		   json_string_value(json_object_get(machine, "kernel_build")),
		   json_string_value(json_object_get(machine, "cpu")),
		   (int)json_integer_value(json_object_get(machine, "cpus")));
	ktap__diag(&r->k, "kernel command line: %s", json_string_value(json_object_get(machine, "cmdline")));
	if (r->baseline)
		describe_baseline(&r->k, o->baseline, r->baseline, machine);
}

/* One recorder workload, its rounds, and its verdict against the baseline
 * and the thresholds. 0, or -EIO when it failed and no KTAP line can say
 * so (the run stops). */
static int run_workload(struct bench_run *r, const struct workload *w)
{
	struct ktap *k = &r->k;
	json_t *res;
	bool ok;

	if (w->python && system("python3 -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 13))' "
				">/dev/null 2>&1")) {
		fprintf(stderr, "bench: %-13s skipped: no python3 3.10-3.13 in PATH\n", w->name);
		ktap__skip(k, w->name, "no python3 3.10-3.13 in PATH");
		return 0;
	}
	res = run_bench(&r->o, w, r->rounds);
	if (!res && !k->out)
		return -EIO;
	if (!res) {
		ktap__diag(k, "%s: the workload or its recorder failed (see standard error)", w->name);
		ktap__result(k, false, w->name);
		r->failed = 1;
		return 0;
	}
	json_array_append_new(r->results, res);
	ktap__diag(k, "%s: %.0f ns per event (%.0f-%.0f), overhead %.1f%%, %.2f events per %s, %lld drops",
		   w->name, median_of(json_object_get(res, "ns_per_event")),
		   json_real_value(json_object_get(json_object_get(res, "ns_per_event"), "min")),
		   json_real_value(json_object_get(json_object_get(res, "ns_per_event"), "max")),
		   json_real_value(json_object_get(res, "overhead_pct")),
		   median_of(json_object_get(res, "events_per_op")), w->unit,
		   (long long)json_integer_value(json_object_get(res, "drops")));
	ok = bench_mech__vs_baseline(k, r->baseline, res, &r->cmp);
	if (k->out && r->th) {
		int t = check_thresholds(r->results, r->th, w->name, k);

		if (t < 0)
			r->e = t;
		ok = ok && t == 0;
	}
	r->failed |= !ok;
	ktap__result(k, ok, w->name);
	return 0;
}

/* The flight recorder's ring: what a window costs. */
static void run_flight(struct bench_run *r)
{
	r->flight = bench_flight__run(r->workdir);
	for (size_t i = 0; i < json_array_size(r->flight); i++) {
		json_t *f = json_array_get(r->flight, i);

		ktap__diag(&r->k, "flight_ring: %.0f events/s, %.0f s window: %.2f MiB (%.2f bytes/event), %.0f ns "
			   "CPU per event, %.3f%% of a CPU, a window written in %.1f ms",
			   json_real_value(json_object_get(f, "events_per_s")),
			   json_real_value(json_object_get(f, "window_s")),
			   json_real_value(json_object_get(f, "ring_mib")),
			   json_real_value(json_object_get(f, "bytes_per_event")),
			   json_real_value(json_object_get(f, "cpu_ns_per_event")),
			   json_real_value(json_object_get(f, "cpu_pct_per_s")),
			   json_real_value(json_object_get(f, "write_window_ms")));
	}
	ktap__result(&r->k, r->flight != NULL, "flight_ring");
	r->failed |= !r->flight;
}

/* The results document: how busy the machine was, the tables (without
 * KTAP), the file (-o), the thresholds over every result, the KTAP end. */
static void run_end(struct bench_run *r, const struct bench_load *load)
{
	const struct bench_opts *o = &r->o;
	struct ktap *k = &r->k;
	char line[256];
	json_t *doc;

	json_object_set_new(r->machine, "load", bench_load__end(load, line, sizeof(line)));
	if (k->out)
		ktap__diag(k, "%s", line);
	else
		fprintf(stderr, "bench: %s\n", line);
	doc = json_pack("{s:s, s:O, s:i, s:f, s:o}", "tool", "inferscope-bpf " ISR_VERSION, "machine", r->machine,
			"rounds", r->rounds, "seconds_per_run", o->seconds, "results", r->results);
	r->results = NULL;
	if (r->flight)
		json_object_set(doc, "flight_ring", r->flight);
	json_object_update(doc, r->launch);
	if (o->kci) {
		json_object_set(doc, "mechanisms", r->mechanisms);
		json_object_set(doc, "checks", r->checks);
	}
	if (!k->out) {
		bench_mech__print(r->mechanisms, r->checks);
		if (json_array_size(json_object_get(doc, "results")))
			print_table(json_object_get(doc, "results"));
		print_flight_table(r->flight);
		bench_launch__print(doc);
	}
	if (o->output && write_results(doc, o->output, &o->share))
		r->e = -EIO;
	if (!r->e && r->th && !k->out) {
		int t = check_thresholds(json_object_get(doc, "results"), r->th, NULL, k);

		if (t < 0)
			r->e = t;
		r->failed |= t > 0;
	}
	if (ktap__end(k))
		r->failed = 1;
	json_decref(doc);
}

int bench__run(const struct bench_opts *opts)
{
	/* Seven rounds a side can show a change significant at 0.01; the
	 * kernel-CI suite compares the workloads with a baseline. */
	struct bench_run r = {
		.o = *opts,
		.rounds = opts->rounds ? opts->rounds : opts->kci ? 7 : 5,
		.cmp = { opts->max_ratio, opts->alpha, BENCH_CMP_MIN_ROUNDS },
		.results = json_array(),
		.mechanisms = json_array(),
		.checks = json_array(),
		.machine = machine_info(),
		.launch = json_object(),
	};
	struct bench_load load;
	size_t i;

	r.e = run_plan(&r);
	r.e = r.e ?: make_workdir(opts->tmpdir, r.workdir, sizeof(r.workdir));
	if (r.e) {
		r.workdir[0] = '\0';
		goto out;
	}
	r.o.tmpdir = r.workdir;
	bench_load__begin(&load);
	run_begin(&r);
	if (r.o.kci)
		r.failed |= bench_mech__run(&r.o, &r.k, r.baseline, r.mechanisms, r.checks);
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		if (!workload_selected(&r.o, &workloads[i]))
			continue;
		if (run_workload(&r, &workloads[i])) {
			r.e = -EIO;
			goto out;
		}
	}
	r.failed |= bench_launch__run(&r.o, r.rounds, &r.k, r.launch);
	if (!r.o.kci && bench_opts__selects(&r.o, "flight_ring"))
		run_flight(&r);
	run_end(&r, &load);
out:
	if (r.workdir[0])
		remove_workdir(r.workdir);
	json_decref(r.results);
	json_decref(r.mechanisms);
	json_decref(r.checks);
	json_decref(r.flight);
	json_decref(r.launch);
	json_decref(r.machine);
	json_decref(r.th);
	json_decref(r.baseline);
	return r.e ? r.e : r.failed;
}
