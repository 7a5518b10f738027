// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "bench_launch.h"
#include "budget.h"
#include "clock.h"
#include "config.h"
#include "recorder.h"

#define LB_WORK_US	"8"	/* a PyTorch op's host work, about */
#define LB_SYNC_EVERY	"1000"
#define LB_MIN_SECONDS	6.0
#define AT_PHASES	3	/* BPF loaded, probes armed, recording */

/* The test build's files beside this executable: false when one is
 * missing (why says which). */
static bool build_file(const struct bench_opts *o, const char *rel, char *out, size_t len, char *why, size_t wlen)
{
	char self[PATH_MAX];

	snprintf(self, sizeof(self), "%s", o->self_exe);
	if ((size_t)snprintf(out, len, "%s/%s", dirname(self), rel) >= len || access(out, R_OK)) {
		snprintf(why, wlen, "%s not found beside this executable (make test-build)", rel);
		return false;
	}
	return true;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd >= 0)
		close(fd);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[64];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static json_t *stats(const double *v, int n)
{
	json_t *samples = json_array();
	double lo = v[0], hi = v[0];

	for (int i = 0; i < n; i++) {
		json_array_append_new(samples, json_real(v[i]));
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return json_pack("{s:f, s:f, s:f, s:o}", "median", median(v, n), "min", lo, "max", hi, "samples", samples);
}

/* Every default of `-p pid`, recording to rec, ready when armed. */
static void defaults_for(struct record_config *c, pid_t pid, const char *rec, const char *ready)
{
	record_config__defaults(c);
	c->targets.pids[0] = (__u32)pid;
	c->targets.pid_count = 1;
	c->output.path = rec;
	c->output.ready_file = ready;
	c->quiet = true;
}

/* --- launch_bound ------------------------------------------------------- */

struct lb_run {
	double launches, wall_s, cpu_s;
	double with_cpu, with_iters, alone_cpu, alone_iters;	/* blocks of work with a launch each, and alone */
	double spent_ns, traced_ns, hit_ns;	/* the recorder's account (traced) */
};

/* The thread's CPU time per piece of work with a launch over the same
 * without: 1 + what a launch costs it, whatever the CPU's speed was. */
static double lb_ratio(const struct lb_run *r)
{
	return (r->with_cpu / r->with_iters) / (r->alone_cpu / r->alone_iters);
}

/* One run of launch_rate's "cpu" loop, traced with the defaults or not. */
static int lb_run(const struct bench_opts *o, const char *prog, double seconds, bool traced, struct lb_run *out)
{
	char ready[PATH_MAX], result[PATH_MAX], rec[PATH_MAX], secs[32];
	struct record_result res;
	int status, e = 0;
	FILE *f;
	pid_t pid;

	snprintf(ready, sizeof(ready), "%s/lb.ready", o->tmpdir);
	snprintf(result, sizeof(result), "%s/lb.result", o->tmpdir);
	snprintf(rec, sizeof(rec), "%s/lb.isr", o->tmpdir);
	snprintf(secs, sizeof(secs), "%.3f", seconds);
	unlink(ready);
	unlink(result);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl(prog, prog, secs, "cpu", result, LB_WORK_US, LB_SYNC_EVERY, ready, (char *)NULL);
		_exit(127);
	}
	memset(out, 0, sizeof(*out));
	if (traced) {
		struct record_config c;

		defaults_for(&c, pid, rec, ready);
		e = record__run(&c, &res);
		unlink(rec);
		out->spent_ns = res.overhead_spent_ns;
		out->traced_ns = res.overhead_traced_ns;
		out->hit_ns = res.hit_cost_ns;
		if (e)
			kill(pid, SIGKILL);
	} else {
		touch(ready);
	}
	if (waitpid(pid, &status, 0) < 0)
		e = e ?: -errno;
	if (!e && (!WIFEXITED(status) || WEXITSTATUS(status)))
		e = -EIO;
	f = e ? NULL : fopen(result, "r");
	if (!e && (!f || fscanf(f, "%lf %lf %lf %lf %lf %lf %lf", &out->launches, &out->wall_s, &out->cpu_s,
				&out->with_cpu, &out->with_iters, &out->alone_cpu, &out->alone_iters) != 7 ||
		   out->launches <= 0 || out->with_cpu <= 0 || out->alone_cpu <= 0 || out->with_iters <= 0 ||
		   out->alone_iters <= 0))
		e = -EIO;
	if (f)
		fclose(f);
	unlink(ready);
	return e;
}

static json_t *launch_bound(const struct bench_opts *o, int rounds, struct ktap *k, bool *ok)
{
	double secs = o->seconds > LB_MIN_SECONDS ? o->seconds : LB_MIN_SECONDS;
	double cost[64], noise[64], rate[64], acct[64], cpu_ns[64], hot[64], allowed, budget = DEFAULT_BUDGET_PCT;
	char prog[PATH_MAX], lib[PATH_MAX], why[256];
	json_t *j;
	int r;

	*ok = true;
	if (!build_file(o, "tests/workloads/launch_rate", prog, sizeof(prog), why, sizeof(why)) ||
	    !build_file(o, "tests/standin/libcuda.so.1", lib, sizeof(lib), why, sizeof(why))) {
		fprintf(stderr, "bench: %-13s skipped: %s\n", "launch_bound", why);
		ktap__skip(k, "launch_bound", "%s", why);
		return NULL;
	}
	fprintf(stderr, "bench: %-13s", "launch_bound");
	for (r = 0; r < rounds; r++) {
		struct lb_run run[3], *u1 = NULL, *u2 = NULL, *t = NULL;
		double u;

		/* untraced, traced, untraced, rotated: U T U, T U U, U U T */
		for (int i = 0; i < 3; i++) {
			bool traced = (i + r) % 3 == 1;
			int e = lb_run(o, prog, secs, traced, &run[i]);

			if (e) {
				fprintf(stderr, "\nbench: launch_bound: a %s run failed: %s\n", traced ? "traced" : "untraced",
					strerror(-e));
				*ok = false;
				return NULL;
			}
			if (traced)
				t = &run[i];
			else if (!u1)
				u1 = &run[i];
			else
				u2 = &run[i];
		}
		u = (u1->cpu_s / u1->launches + u2->cpu_s / u2->launches) / 2;
		cpu_ns[r] = 1e9 * u;
		cost[r] = 100 * (lb_ratio(t) / ((lb_ratio(u1) + lb_ratio(u2)) / 2) - 1);
		noise[r] = 100 * fabs(lb_ratio(u2) / lb_ratio(u1) - 1);
		rate[r] = 100 * (t->launches / t->wall_s / ((u1->launches / u1->wall_s + u2->launches / u2->wall_s) / 2) - 1);
		acct[r] = t->traced_ns > 0 ? 100 * t->spent_ns / t->traced_ns : 0;
		hot[r] = t->hit_ns / (1e9 * u);
		fputc('.', stderr);
	}
	fputc('\n', stderr);
	/* The budget lets a run spend a burst of budget x 1 s at once, and
	 * its last window, at least BUDGET_MIN_ON_NS at what the hot path
	 * costs the thread while on (a hit over its CPU time per launch), is
	 * paid back by the gap after it, which the run may not reach. */
	allowed = budget * (1 + 1 / secs) + 100 * median(hot, rounds) * (BUDGET_MIN_ON_NS / 1e9) / secs;
	*ok = median(cost, rounds) <= allowed + median(noise, rounds);
	j = json_pack("{s:s, s:s, s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:f, s:f, s:f, s:b}", "name", "launch_bound",
		      "what",
		      "the stand-in libcuda's cuLaunchKernel after " LB_WORK_US " us of CPU work, attached with -p and "
		      "every default", "seconds_per_run", secs, "budget_pct", budget, "hot_path_share",
		      median(hot, rounds), "untraced_cpu_ns_per_launch",
		      stats(cpu_ns, rounds), "cost_pct", stats(cost, rounds), "noise_pct", stats(noise, rounds),
		      "rate_change_pct", stats(rate, rounds), "accounted_pct", stats(acct, rounds), "overhead_pct",
		      median(cost, rounds), "allowed_pct", allowed, "noise_median_pct", median(noise, rounds), "held",
		      *ok);
	ktap__diag(k, "launch_bound: defaults cost the launching thread %.2f%% of its CPU time per launch (median of %d "
		   "rounds), the recorder accounted %.2f%%, its launch rate %+.1f%%; allowed %.2f%% + noise %.2f%%",
		   median(cost, rounds), rounds, median(acct, rounds), median(rate, rounds), allowed,
		   median(noise, rounds));
	if (!*ok && !k->out)
		printf("REGRESSION launch_bound: the defaults cost %.2f%% > the %.3g%% budget (%.2f%% with its burst) + "
		       "%.2f%% noise\n", median(cost, rounds), budget, allowed, median(noise, rounds));
	return j;
}

/* --- attach_time -------------------------------------------------------- */

/* A big Python process: the standard library's extension modules and
 * the stand-in libcuda loaded, then launching now and then. */
static const char big_script[] =
	"import sys, ctypes, time\n"
	"n = 0\n"
	"for m in ('ssl sqlite3 decimal hashlib lzma bz2 zlib json xml.etree.ElementTree curses readline '\n"
	"          'multiprocessing asyncio csv select mmap socket array math cmath unicodedata uuid struct pickle '\n"
	"          'datetime random statistics fractions binascii zoneinfo ctypes.util grp termios resource fcntl '\n"
	"          'sqlite3.dbapi2 _posixsubprocess _queue _heapq _bisect _json _pickle _datetime').split():\n"
	"    try:\n"
	"        __import__(m); n += 1\n"
	"    except Exception:\n"
	"        pass\n"
	"lib = ctypes.CDLL(sys.argv[1])\n"
	"maps = open('/proc/self/maps').read().splitlines()\n"
	"print(n, len(maps), flush=True)\n"
	"while True:\n"
	"    lib.cuLaunchKernel(ctypes.c_void_p(0x1000), 1, 1, 1, 32, 1, 1, 0, None, None, None)\n"
	"    time.sleep(0.001)\n";

struct at_ticks {
	__u64 t[AT_PHASES];
	int n;
	volatile sig_atomic_t stop;
};

/* The recorder's set-up steps: its BPF objects loaded, then the probes
 * armed, then recording (stop at once). */
static void at_tick(void *ctx)
{
	struct at_ticks *a = ctx;

	if (a->n < AT_PHASES)
		a->t[a->n++] = clock__mono_ns();
	if (a->n == AT_PHASES)
		a->stop = 1;
}

static json_t *attach_time(const struct bench_opts *o, int rounds, struct ktap *k, bool *ok)
{
	double load[64], arm[64], costs[64], total[64];
	char lib[PATH_MAX], why[256], rec[PATH_MAX], line[128];
	int fds[2], modules = 0, maps = 0, r;
	FILE *out;
	pid_t pid;
	json_t *j = NULL;

	*ok = true;
	if (!build_file(o, "tests/standin/libcuda.so.1", lib, sizeof(lib), why, sizeof(why)) ||
	    system("python3 -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 13))' >/dev/null 2>&1")) {
		if (access(lib, R_OK) == 0)
			snprintf(why, sizeof(why), "no python3 3.10-3.13 in PATH");
		fprintf(stderr, "bench: %-13s skipped: %s\n", "attach_time", why);
		ktap__skip(k, "attach_time", "%s", why);
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC))
		goto fail;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execlp("python3", "python3", "-c", big_script, lib, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	if (pid < 0 || !out || !fgets(line, sizeof(line), out) || sscanf(line, "%d %d", &modules, &maps) != 2) {
		if (out)
			fclose(out);
		else
			close(fds[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		goto fail;
	}
	fprintf(stderr, "bench: %-13s", "attach_time");
	snprintf(rec, sizeof(rec), "%s/at.isr", o->tmpdir);
	for (r = 0; r < rounds && *ok; r++) {
		struct at_ticks a = { .n = 0, .stop = 0 };
		struct record_result res;
		struct record_config c;
		__u64 t0;

		defaults_for(&c, pid, rec, NULL);
		c.control.stop = &a.stop;
		c.control.tick = at_tick;
		c.control.ctx = &a;
		t0 = clock__mono_ns();
		*ok = !record__run(&c, &res) && a.n == AT_PHASES;
		unlink(rec);
		load[r] = (a.t[0] - t0) / 1e6;
		arm[r] = (a.t[1] - a.t[0]) / 1e6;
		costs[r] = res.costs_measure_ns / 1e6;
		total[r] = (a.t[2] - t0) / 1e6;
		fputc('.', stderr);
	}
	fputc('\n', stderr);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fclose(out);
	if (!*ok) {
		fprintf(stderr, "bench: attach_time: the recorder failed (see above)\n");
		return NULL;
	}
	j = json_pack("{s:s, s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "name", "attach_time", "what",
		      "from a recorder's start (every default, -p) to its probes armed and recording, in a Python "
		      "process with extension modules and the stand-in libcuda loaded", "python_modules", modules,
		      "mappings", maps, "load_ms", stats(load, rounds), "arm_ms", stats(arm, rounds), "costs_ms",
		      stats(costs, rounds), "total_ms", stats(total, rounds));
	ktap__diag(k, "attach_time: %.0f ms from the start to recording (median of %d): BPF objects loaded in %.0f ms, "
		   "then armed in %.0f ms (of which the costs measured in %.0f ms); a process of %d mappings",
		   median(total, r), r, median(load, r), median(arm, r), median(costs, r), maps);
	return j;
fail:
	fprintf(stderr, "bench: attach_time: cannot start the Python process: %s\n", strerror(errno));
	*ok = false;
	return NULL;
}

unsigned int bench_launch__count(const struct bench_opts *o)
{
	if (o->kci)
		return 0;
	return bench_opts__selects(o, "launch_bound") + bench_opts__selects(o, "attach_time");
}

int bench_launch__run(const struct bench_opts *o, int rounds, struct ktap *k, json_t *doc)
{
	int failed = 0;
	json_t *j;
	bool ok;

	if (o->kci)
		return 0;
	if (bench_opts__selects(o, "launch_bound")) {
		j = launch_bound(o, rounds, k, &ok);
		if (j)
			json_object_set_new(doc, "launch_bound", j);
		if (j || !ok)
			ktap__result(k, ok, "launch_bound");
		failed |= !ok;
	}
	if (bench_opts__selects(o, "attach_time")) {
		j = attach_time(o, rounds, k, &ok);
		if (j)
			json_object_set_new(doc, "attach_time", j);
		if (j || !ok)
			ktap__result(k, ok, "attach_time");
		failed |= !ok;
	}
	return failed;
}

static double med(json_t *o, const char *key)
{
	return json_real_value(json_object_get(json_object_get(o, key), "median"));
}

static double lo(json_t *o, const char *key)
{
	return json_real_value(json_object_get(json_object_get(o, key), "min"));
}

static double hi(json_t *o, const char *key)
{
	return json_real_value(json_object_get(json_object_get(o, key), "max"));
}

void bench_launch__print(json_t *doc)
{
	json_t *lb = json_object_get(doc, "launch_bound"), *at = json_object_get(doc, "attach_time");

	if (lb) {
		printf("\nlaunch_bound (%s; %.0f s runs, medians, min–max):\n\n", json_string_value(json_object_get(lb, "what")),
		       json_real_value(json_object_get(lb, "seconds_per_run")));
		printf("| untraced CPU/launch | cost (CPU/launch) | noise (untraced vs untraced) | launch rate | "
		       "accounted by the recorder | allowed | held |\n|---:|---:|---:|---:|---:|---:|---|\n");
		printf("| %.0f ns | %+.2f%% (%+.2f…%+.2f) | %.2f%% (%.2f…%.2f) | %+.1f%% (%+.1f…%+.1f) | %.2f%% | %.2f%% + "
		       "noise | %s |\n", med(lb, "untraced_cpu_ns_per_launch"), med(lb, "cost_pct"), lo(lb, "cost_pct"),
		       hi(lb, "cost_pct"), med(lb, "noise_pct"), lo(lb, "noise_pct"), hi(lb, "noise_pct"),
		       med(lb, "rate_change_pct"), lo(lb, "rate_change_pct"), hi(lb, "rate_change_pct"),
		       med(lb, "accounted_pct"), json_real_value(json_object_get(lb, "allowed_pct")),
		       json_is_true(json_object_get(lb, "held")) ? "yes" : "**no**");
	}
	if (at) {
		printf("\nattach_time (a Python process of %lld mappings; medians, min–max):\n\n",
		       (long long)json_integer_value(json_object_get(at, "mappings")));
		printf("| BPF loaded | armed | of which costs measured | start to recording |\n|---:|---:|---:|---:|\n");
		printf("| %.0f ms (%.0f–%.0f) | %.0f ms (%.0f–%.0f) | %.0f ms (%.0f–%.0f) | %.0f ms (%.0f–%.0f) |\n",
		       med(at, "load_ms"), lo(at, "load_ms"), hi(at, "load_ms"), med(at, "arm_ms"), lo(at, "arm_ms"),
		       hi(at, "arm_ms"), med(at, "costs_ms"), lo(at, "costs_ms"), hi(at, "costs_ms"), med(at, "total_ms"),
		       lo(at, "total_ms"), hi(at, "total_ms"));
	}
}
