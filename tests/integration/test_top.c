// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf top`, driven as a user would: in tmux (its own server
 * socket), reading the screen, against stand-in workloads of known rates
 * (tests/workloads/launch_rate.c on the stand-in libcuda): the launches a
 * second it shows are theirs within 10%, the keys sort and quit; and
 * `--once` prints the same as text, with the synchronization share of a
 * job that waits for the GPU most of its time, that wait shown as blocked
 * too, and the top finding `analyze` makes of the recording top kept.
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"

#define RATE_WORKLOAD "build/tests/workloads/launch_rate"
#define TMUX_SOCKET "inferscope-test-top"

struct ctx {
	struct th_files f;
	pid_t w[2];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	char *kill[] = { "tmux", "-L", TMUX_SOCKET, "kill-server", NULL };

	th_run(kill, "/dev/null");
	for (int i = 0; i < 2; i++)
		th_reap(c->w[i]);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static pid_t rate_workload(struct ctx *c, const char *seconds, const char *rate, int i)
{
	char count[600];
	char *argv[] = { RATE_WORKLOAD, (char *)seconds, (char *)rate, count, NULL };

	snprintf(count, sizeof(count), "%s/count%d", c->f.dir, i);
	return th_spawn(argv, NULL, NULL);
}

static char *tmux_screen(void)
{
	char path[] = "/tmp/inferscope-top-screen-XXXXXX";
	char *argv[] = { "tmux", "-L", TMUX_SOCKET, "capture-pane", "-p", "-t", "top", NULL };
	int fd = mkstemp(path);
	char *s;

	assert_true(fd >= 0);
	close(fd);
	th_expect_exit(th_run_to(argv, path, NULL), 0, NULL);
	s = th_slurp(path);
	unlink(path);
	return s;
}

static void tmux_keys(const char *key)
{
	char *argv[] = { "tmux", "-L", TMUX_SOCKET, "send-keys", "-t", "top", (char *)key, NULL };

	th_expect_exit(th_run(argv, NULL), 0, NULL);
}

/* The launches a second on the process row of pid (its first line). */
static double launches_of(const char *screen, pid_t pid)
{
	char want[32];
	const char *line;

	snprintf(want, sizeof(want), "\n%d ", pid);
	line = strstr(screen, want);
	if (!line) {
		print_error("no row for pid %d on the screen:\n%s\n", pid, screen);
		fail();
	}
	{
		unsigned int p;
		char tid[16], comm[64];
		double launches;

		/* a process row: its pid, "-" for the tid (its threads' totals) */
		if (sscanf(line + 1, "%u %15s %63s ~%lf", &p, tid, comm, &launches) == 4 ||
		    sscanf(line + 1, "%u %15s %63s %lf", &p, tid, comm, &launches) == 4)
			return launches;
	}
	print_error("cannot read the row of pid %d:\n%s\n", pid, screen);
	fail();
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define RATE_SCREENS 5

/* The launches/s top shows for each of n workloads, the median of
 * RATE_SCREENS intervals in a row, against the workload's rate: a
 * workload launches each at its planned time, or at once when a loaded
 * host held it back, so one interval may hold launches of the one before,
 * never the long run. */
static void expect_rates(const pid_t *pids, const double *want, int n)
{
	double got[2][RATE_SCREENS];
	char *screen = NULL;

	assert_true(n <= 2);
	for (int i = 0; i < RATE_SCREENS; i++) {
		if (i)
			usleep(1100000);
		free(screen);
		screen = tmux_screen();
		for (int k = 0; k < n; k++)
			got[k][i] = launches_of(screen, pids[k]);
	}
	for (int k = 0; k < n; k++) {
		double median;

		qsort(got[k], RATE_SCREENS, sizeof(got[k][0]), cmp_double);
		median = got[k][RATE_SCREENS / 2];
		if (median < want[k] * 0.9 || median > want[k] * 1.1) {
			print_error("pid %d: top shows %.0f launches/s (the median of %.0f to %.0f in %d intervals), the "
				    "workload makes %.0f (10%% tolerance); the last screen:\n%s\n", pids[k], median,
				    got[k][0], got[k][RATE_SCREENS - 1], RATE_SCREENS, want[k], screen);
			fail();
		}
	}
	free(screen);
}

static void test_tmux_screen(void **state)
{
	struct ctx *c = *state;
	char cmd[1200], *screen = NULL;
	char *argv[] = { "tmux", "-L", TMUX_SOCKET, "new-session", "-d", "-s", "top", "-x", "180", "-y", "30", cmd,
			 NULL };
	bool shown = false;

	c->w[0] = rate_workload(c, "40", "2000", 0);
	c->w[1] = rate_workload(c, "40", "500", 1);
	snprintf(cmd, sizeof(cmd), "%s top -p %d,%d 2>%s; echo top exited $?; sleep 30", TRACER, c->w[0], c->w[1],
		 c->f.err);
	th_expect_exit(th_run(argv, NULL), 0, NULL);
	/* two full intervals after the probes are live */
	for (double end = th_now() + 20; th_now() < end && !shown;) {
		free(screen);
		usleep(500000);
		screen = tmux_screen();
		shown = strstr(screen, "every 1.0 s") && strstr(screen, "LAUNCH/s");
	}
	assert_true(shown);
	sleep(3);
	free(screen);
	screen = tmux_screen();
	assert_non_null(strstr(screen, "inferscope-bpf top: 2 processes"));
	assert_non_null(strstr(screen, "sort: launches/s"));
	{
		const pid_t pids[] = { c->w[0], c->w[1] };
		const double want[] = { 2000, 500 };

		expect_rates(pids, want, 2);
	}
	/* sorted by launches: the busier process first */
	assert_true(strstr(screen, "launch_rate") && launches_of(screen, c->w[0]) > launches_of(screen, c->w[1]));
	{
		char a[32], b[32];

		snprintf(a, sizeof(a), "\n%d ", c->w[0]);
		snprintf(b, sizeof(b), "\n%d ", c->w[1]);
		assert_true(strstr(screen, a) < strstr(screen, b));
	}
	tmux_keys("s");
	sleep(2);
	free(screen);
	screen = tmux_screen();
	assert_non_null(strstr(screen, "sort: sync %"));
	tmux_keys("q");
	for (double end = th_now() + 15; th_now() < end;) {
		free(screen);
		screen = tmux_screen();
		if (strstr(screen, "top exited"))
			break;
		usleep(200000);
	}
	if (!strstr(screen, "top exited 0")) {
		char *err = th_slurp(c->f.err);

		print_error("top did not quit with q:\n%s\nstderr:\n%s\n", screen, err ? err : "");
		free(err);
		fail();
	}
	free(screen);
}

/* The rule of the costliest finding about pid in the report of isr, or
 * NULL. */
static const char *report_top_rule(json_t *report, pid_t pid)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(report, "findings"), i, f)
		if (json_integer_value(json_object_get(f, "pid")) == pid)
			return json_string_value(json_object_get(f, "rule"));
	return NULL;
}

/* Text for scripts: one interval, and a job in synchronization most of its
 * time (launch_rate bound: 100 us of work a launch, a cuStreamSynchronize
 * every 10 launches, 5 ms in the stand-in, asleep): about 83% in sync, as
 * much off a CPU (blocked, and on a loaded host partly waiting for one). Its top finding is the one `analyze` makes of the recording
 * top kept (-o): the same rules (none here: without --gpu the GPU's side is
 * not judged, and the launching thread waits for it). -q as everywhere. */
static void test_once_text(void **state)
{
	struct ctx *c = *state;
	char out[600], pidstr[32], count[600], kept[600];
	char *wl[] = { RATE_WORKLOAD, "20", "bound", count, "100", "10", NULL };
	char *argv[] = { TRACER, "top", "-q", "--once", "-o", kept, "-p", pidstr, NULL };
	char *text, finding[64] = "", want[80];
	unsigned int p, tid;
	char comm[64], gpu[16], gil[16], lstr[24], *end;
	double launches, sync, runq, blocked;
	const char *line, *rule;
	json_t *report;

	snprintf(count, sizeof(count), "%s/count-bound", c->f.dir);
	snprintf(out, sizeof(out), "%s/top.txt", c->f.dir);
	snprintf(kept, sizeof(kept), "%s/top.isr", c->f.dir);
	c->w[0] = th_spawn(wl, NULL, NULL);
	snprintf(pidstr, sizeof(pidstr), "%d", c->w[0]);
	th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	text = th_slurp(out);
	assert_non_null(text);
	assert_non_null(strstr(text, "PID     TID     COMM"));
	snprintf(comm, sizeof(comm), "\n%d ", c->w[0]);
	line = strstr(text, comm);
	assert_non_null(line);
	assert_non_null(strstr(text, "RUNQ% BLOCK%   CPU%"));
	/* LAUNCH/s is "~N" where the budget sampled the hot path that
	 * interval (an estimate), as a loaded host makes it do */
	if (sscanf(line + 1, "%u %u %63s %23s %lf %15s %15s %lf %lf", &p, &tid, comm, lstr, &sync, gpu, gil, &runq,
		   &blocked) != 9) {
		print_error("the process row does not read as 9 columns:\n%s\n", text);
		free(text);
		fail();
	}
	launches = strtod(lstr + (lstr[0] == '~'), &end);
	assert_true(end != lstr + (lstr[0] == '~') && !*end && launches >= 0);
	assert_string_equal(gpu, "-");	/* no bridge */
	assert_string_equal(gil, "-");	/* no --gil */
	/* asleep in the synchronizations, or (on a loaded host) waiting for
	 * a CPU after one woke it */
	if (sync < 60 || sync > 95 || blocked + runq < 60) {
		print_error("expected about 83%% in synchronization, asleep or waiting for a CPU:\n%s\n", text);
		free(text);
		fail();
	}
	{
		const char *open = strrchr(strtok((char *)line, "\n"), '(');

		if (open)
			sscanf(open, "(%63[a-z_])", finding);
	}
	report = th_report(kept);
	rule = report_top_rule(report, c->w[0]);
	snprintf(want, sizeof(want), "%s", rule ? rule : "");
	if (strcmp(finding, want)) {
		print_error("top's finding \"%s\", the report's \"%s\":\n%s\n", finding, want, text);
		json_decref(report);
		free(text);
		fail();
	}
	json_decref(report);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tmux_screen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_once_text, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
