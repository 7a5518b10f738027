// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's pure parts: container and pod labels from cgroup paths
 * (user/daemon/discover.h), the state directory's policy and caps
 * (user/daemon/state_dir.h: windows in time and number order, files planted by
 * others left alone), the Prometheus text (user/daemon/prom.h: names, escaping,
 * valid UTF-8 that promtool reads, a sample per process and label value).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <limits.h>
#include <signal.h>
#include <cmocka.h>

#include "state_dir.h"
#include "discover.h"
#include "prom.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD "5f1d9a3c-2b7e-4c1a-9d3e-8f7a6b5c4d3e"
#define POD_ "5f1d9a3c_2b7e_4c1a_9d3e_8f7a6b5c4d3e"

static void expect_labels(const char *cgroup, const char *container, const char *pod)
{
	char c[65], p[37];

	discover__cgroup_labels(cgroup, c, p);
	if (strcmp(c, container) || strcmp(p, pod)) {
		print_error("%s: container '%s' pod '%s', expected '%s' '%s'\n", cgroup, c, p, container, pod);
		fail();
	}
}

static void test_cgroup_labels(void **state)
{
	(void)state;
	expect_labels("/system.slice/docker-" ID64 ".scope", ID64, "");
	expect_labels("/docker/" ID64, ID64, "");
	expect_labels("/system.slice/containerd.service/kubepods-burstable-pod" POD_ ".slice:cri-containerd:" ID64,
		      ID64, POD);
	expect_labels("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_
		      ".slice/cri-containerd-" ID64 ".scope", ID64, POD);
	expect_labels("/kubepods/burstable/pod" POD "/" ID64, ID64, POD);
	expect_labels("/machine.slice/libpod-" ID64 ".scope/container", ID64, "");
	expect_labels("/user.slice/user-1000.slice/session-3.scope", "", "");
	expect_labels("/", "", "");
	expect_labels("", "", "");
	/* Not an id: 63 digits, capitals. */
	expect_labels("/docker/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", "", "");
	expect_labels("/docker/" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", "", "");
}

static char dir[] = "/tmp/inferscope-daemon-XXXXXX";

static void make_file(const char *name, size_t bytes, double age_s)
{
	char path[300];
	struct timeval tv[2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	assert_int_equal(fclose(f), 0);
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= (time_t)age_s;
	tv[1] = tv[0];
	assert_int_equal(utimes(path, tv), 0);
}

/* What an earlier test left in dir, removed. */
static void empty_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/*", dir);
	assert_int_equal(system(cmd), 0);
}

static bool exists(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Policy, age and size, oldest first; files that are not windows, and
 * windows with no severity yet (a recording under way or left by a crash),
 * are not removed by the policy. */
static void test_prune(void **state)
{
	struct daemon_config c = { .keep_severity = 2, .keep_last = 2, .max_bytes = 1 << 20, .max_age_s = 3600 };
	struct daemon_health h = { .last_error = -1 };

	(void)state;
	make_file("window-20260101T000000.000Z.none.isr", 4096, 10);
	make_file("window-20260101T000100.000Z.critical.isr", 4096, 10);
	make_file("window-20260101T000200.000Z.info.isr", 4096, 10);
	make_file("window-20260101T000300.000Z.isr", 4096, 10);
	make_file("window-20260101T000400.000Z.none.isr", 4096, 10);
	make_file("window-20260101T000500.000Z.none.isr", 4096, 10);
	make_file("notes.txt", 100000, 1e6);
	assert_int_equal(state_dir__prune(dir, &c, (double)time(NULL), false, NULL, NULL, &h), 0);
	assert_false(exists("window-20260101T000000.000Z.none.isr"));	/* below warning */
	assert_true(exists("window-20260101T000100.000Z.critical.isr"));
	assert_false(exists("window-20260101T000200.000Z.info.isr"));
	assert_true(exists("window-20260101T000300.000Z.isr"));	/* untagged */
	assert_true(exists("window-20260101T000400.000Z.none.isr"));	/* the last two */
	assert_true(exists("window-20260101T000500.000Z.none.isr"));
	assert_true(exists("notes.txt"));
	assert_int_equal(h.removed_policy, 2);
	assert_int_equal(h.recordings_kept, 4);

	/* Age: the critical one is two hours old. */
	make_file("window-20260101T000100.000Z.critical.isr", 4096, 7200);
	assert_int_equal(state_dir__prune(dir, &c, (double)time(NULL), false, NULL, NULL, &h), 0);
	assert_false(exists("window-20260101T000100.000Z.critical.isr"));
	assert_int_equal(h.removed_age, 1);

	/* Size: at most two files' worth, oldest removed first. */
	c.max_bytes = 2 * 4096;
	assert_int_equal(state_dir__prune(dir, &c, (double)time(NULL), false, NULL, NULL, &h), 0);
	assert_false(exists("window-20260101T000300.000Z.isr"));
	assert_true(exists("window-20260101T000400.000Z.none.isr"));
	assert_true(exists("window-20260101T000500.000Z.none.isr"));
	assert_int_equal(h.removed_size, 1);
	assert_int_equal(h.recordings_kept, 2);
	assert_true(h.recordings_bytes <= 2 * 4096);
}

/* Flight-recorder windows of one interval (window-<time>.<N>.<severity>):
 * by time, then by their number, not as strings (.10. before .2.): with 14
 * windows and keep_last 7, windows 8 to 14 stay. */
static void test_prune_by_window_number(void **state)
{
	struct daemon_config c = { .keep_severity = 2, .keep_last = 7, .max_bytes = 1 << 30 };
	struct daemon_health h = { .last_error = -1 };
	char name[128];

	(void)state;
	empty_dir();
	/* an earlier interval's window, older whatever its number */
	make_file("window-20260101T000000.000Z.20.none.isr", 4096, 10);
	for (int k = 1; k <= 14; k++) {
		snprintf(name, sizeof(name), "window-20260101T000100.000Z.%d.none.isr", k);
		make_file(name, 4096, 10);
	}
	assert_int_equal(state_dir__prune(dir, &c, (double)time(NULL), false, NULL, NULL, &h), 0);
	assert_false(exists("window-20260101T000000.000Z.20.none.isr"));
	for (int k = 1; k <= 14; k++) {
		snprintf(name, sizeof(name), "window-20260101T000100.000Z.%d.none.isr", k);
		if (exists(name) != (k >= 8))
			fail_msg("window %d %s", k, k >= 8 ? "removed" : "kept");
	}
	assert_int_equal(h.recordings_kept, 7);
	/* the size cap removes the oldest too: 8, then 9 */
	c.max_bytes = 5 * 4096;
	assert_int_equal(state_dir__prune(dir, &c, (double)time(NULL), false, NULL, NULL, &h), 0);
	assert_false(exists("window-20260101T000100.000Z.9.none.isr"));
	assert_true(exists("window-20260101T000100.000Z.10.none.isr"));
	assert_true(exists("window-20260101T000100.000Z.14.none.isr"));
}

/* Files that others put in the state directory, named like windows, are
 * neither counted nor removed: a link to a big file of someone else's
 * (two names), a symbolic link, and (as root) another user's file; so they
 * cannot make the size cap remove the daemon's own recordings. */
static void test_prune_ignores_planted_files(void **state)
{
	struct daemon_config c = { .keep_severity = 0, .keep_last = 0, .max_bytes = 3 * 4096 };
	struct daemon_health h = { .last_error = -1 };
	char path[300], target[300];

	(void)state;
	empty_dir();
	make_file("window-20260201T000100.000Z.none.isr", 4096, 10);
	make_file("window-20260201T000200.000Z.none.isr", 4096, 10);
	make_file("big", 1 << 20, 10);
	snprintf(path, sizeof(path), "%s/window-20260201T000000.000Z.critical.isr", dir);
	snprintf(target, sizeof(target), "%s/big", dir);
	assert_int_equal(link(target, path), 0);
	snprintf(path, sizeof(path), "%s/window-20260201T000001.000Z.critical.isr", dir);
	assert_int_equal(symlink(target, path), 0);
	if (geteuid() == 0) {
		make_file("window-20260201T000002.000Z.critical.isr", 1 << 20, 10);
		snprintf(path, sizeof(path), "%s/window-20260201T000002.000Z.critical.isr", dir);
		assert_int_equal(chown(path, 65534, 65534), 0);
	}
	assert_int_equal(state_dir__prune(dir, &c, (double)time(NULL), false, NULL, NULL, &h), 0);
	assert_true(exists("window-20260201T000100.000Z.none.isr"));
	assert_true(exists("window-20260201T000200.000Z.none.isr"));
	assert_true(exists("window-20260201T000000.000Z.critical.isr"));
	assert_true(exists("window-20260201T000001.000Z.critical.isr"));
	assert_true(exists("big"));
	assert_int_equal(h.recordings_kept, 2);
	assert_true(h.recordings_bytes < 1 << 20);	/* the big file is not counted */
	assert_int_equal(h.removed_size, 0);
	if (geteuid() == 0)
		assert_true(exists("window-20260201T000002.000Z.critical.isr"));
}

static double sample(const char *text, const char *line_prefix)
{
	const char *p = strstr(text, line_prefix);

	return p ? strtod(p + strlen(line_prefix), NULL) : NAN;
}

static void test_prom_text(void **state)
{
	struct window_process p[2] = {
		{ .pid = 42, .comm = "x", .cuda_sync_s = 1.5, .device_memory_peak_bytes = 1 << 30, .top_rule = "sync_stall",
		  .top_severity = 2, .top_cost_s = 0.75, .critical_count = 1 },
		/* gone before the metrics: its comm of the recording */
		{ .pid = 43, .comm = "x\xff", .cuda_sync_s = 2.5 },
	};
	struct window_result w = { .duration_s = 10, .procs = p, .proc_count = 2, .max_severity = 2, .findings = 1 };
	struct discovered d = { .pid = 42, .comm = "we\"ird\\na\nme", .container = ID64, .pod = POD };
	struct daemon_health h = { .windows_recorded = 3, .last_error = DERR_DISK_FULL, .errors = { [DERR_DISK_FULL] = 2 } };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	p[0].critical[0] = (struct window_amount){ "cuda_sync", 1.5 };
	assert_int_equal(prom__format(f, &w, &d, 1, &h), 0);
	fclose(f);
	/* Label values escaped as the text format says, control characters
	 * made visible (lib/text.h) */
	assert_true(sample(text, "inferscope_process_cuda_sync_seconds{pid=\"42\",comm=\"we\\\"ird\\\\na\\\\x0ame\","
				 "container=\"" ID64 "\",pod=\"" POD "\"}") == 1.5);
	/* valid UTF-8 whatever the name: one invalid byte would make the
	 * whole file unreadable to node_exporter */
	assert_true(sample(text, "inferscope_process_cuda_sync_seconds{pid=\"43\",comm=\"x\xef\xbf\xbd\","
				 "container=\"\",pod=\"\"}") == 2.5);
	{
		char path[300], cmd[400];
		FILE *out;
		int rc;

		snprintf(path, sizeof(path), "%s/metrics.prom", dir);
		out = fopen(path, "w");
		assert_non_null(out);
		assert_true(fputs(text, out) >= 0);
		assert_int_equal(fclose(out), 0);
		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
		if (system("command -v promtool >/dev/null") == 0) {
			rc = system(cmd);
			assert_int_equal(rc, 0);
		}
	}
	assert_non_null(strstr(text, "} 1073741824\n"));
	assert_non_null(strstr(text, "rule=\"sync_stall\",severity=\"warning\"} 0.75\n"));
	assert_non_null(strstr(text, "state=\"cuda_sync\"} 1.5\n"));
	assert_non_null(strstr(text, "inferscope_daemon_windows_total{result=\"recorded\"} 3\n"));
	assert_non_null(strstr(text, "inferscope_daemon_errors_total{kind=\"disk_full\"} 2\n"));
	assert_non_null(strstr(text, "inferscope_daemon_last_error{kind=\"disk_full\"} 1\n"));
	/* Every sample has its HELP and TYPE; counters end in _total. */
	for (char *l = text; *l; l = strchr(l, '\n') + 1) {
		if (!strncmp(l, "# TYPE ", 7)) {
			char name[128], type[16];

			assert_int_equal(sscanf(l, "# TYPE %127s %15s", name, type), 2);
			assert_int_equal(strcmp(type, "counter") == 0,
					 strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "_total"));
			assert_memory_equal(name, "inferscope_", 11);
		}
	}
	free(text);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* A pattern that matches this test's own command line: the scan finds
 * neither this process's parent (it started the scan: sudo, a shell) nor
 * another process of the same executable, only the process of another
 * program whose command line matches. */
static void test_match_skips_self(void **state)
{
	char self[PATH_MAX], pattern[PATH_MAX + 8], err[256], *base;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct discovered found[256];
	struct discover *d;
	const char *patterns[1];
	pid_t sibling, child, other;
	int status, n;

	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	base = strrchr(self, '/') + 1;
	snprintf(pattern, sizeof(pattern), "%s", base);
	patterns[0] = pattern;
	sibling = fork();
	if (sibling == 0) {
		pause();
		_exit(0);
	}
	/* a program of its own whose command line names this test */
	other = fork();
	if (other == 0) {
		execlp("sh", "sh", "-c", "sleep 30; :", base, (char *)NULL);
		_exit(127);
	}
	usleep(200000);
	child = fork();
	if (child == 0) {
		/* the scan runs in a child: its parent is this test */
		bool parent = false, sib = false, prog = false;

		d = discover__new(false, patterns, 1, err, sizeof(err));
		if (!d)
			_exit(2);
		n = discover__scan(d, found, 256);
		for (int i = 0; i < n; i++) {
			parent |= found[i].pid == (__u32)getppid();
			sib |= found[i].pid == (__u32)sibling;
			prog |= found[i].pid == (__u32)other;
		}
		discover__free(d);
		_exit(parent ? 3 : sib ? 4 : !prog ? 5 : 0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	kill(sibling, SIGKILL);
	kill(other, SIGKILL);
	waitpid(sibling, NULL, 0);
	waitpid(other, NULL, 0);
	assert_true(WIFEXITED(status));
	/* 3: its parent found, 4: a process of its executable, 5: the other
	 * program missed */
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_labels),
		cmocka_unit_test(test_prune),
		cmocka_unit_test(test_prune_by_window_number),
		cmocka_unit_test(test_prune_ignores_planted_files),
		cmocka_unit_test(test_prom_text),
		cmocka_unit_test(test_match_skips_self),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
