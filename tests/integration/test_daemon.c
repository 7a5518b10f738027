// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fleet daemon, for real, as root: windows recorded with BPF over the
 * stand-in CUDA job (tests/workloads/cuda_steady.c: half its time in
 * synchronizations, device memory peaking at a known size), analyzed, the
 * metrics scraped by a real node_exporter and checked by promtool, the
 * state directory's policy and caps, a full tmpfs (the events lost counted,
 * room made for the next windows), a state directory of another user's
 * refused, a process named x\xff in metrics promtool reads, SIGTERM
 * mid-window, SIGHUP with a bad file, systemd's notifications on a test
 * socket, the unit checked by systemd-analyze, config show's sources.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"

#define STEADY "build/tests/workloads/cuda_steady"

struct ctx {
	char dir[256];
	char state[512], prom_dir[512], prom[600], log[512];
	pid_t job, job2, daemon;
	bool mounted;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_tmpdir(c->dir, sizeof(c->dir));
	snprintf(c->state, sizeof(c->state), "%s/state", c->dir);
	snprintf(c->prom_dir, sizeof(c->prom_dir), "%s/textfile", c->dir);
	snprintf(c->prom, sizeof(c->prom), "%s/inferscope.prom", c->prom_dir);
	snprintf(c->log, sizeof(c->log), "%s/daemon.log", c->dir);
	mkdir(c->state, 0755);
	mkdir(c->prom_dir, 0755);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	th_reap(c->daemon);
	th_reap(c->job);
	th_reap(c->job2);
	if (c->mounted)
		umount2(c->state, MNT_DETACH);
	th_rmrf(c->dir);
	free(c);
	return 0;
}

/* Starts cuda_steady for seconds with alloc bytes, named comm (NULL: its
 * own name); returns once it runs. */
static pid_t start_named_job(const char *seconds, const char *alloc, const char *comm)
{
	char *argv[] = { STEADY, (char *)seconds, (char *)alloc, (char *)comm, NULL };
	char line[16] = "";
	int fd;
	pid_t pid = th_spawn(argv, &fd, NULL);

	assert_true(read(fd, line, sizeof(line) - 1) > 0);
	close(fd);
	assert_memory_equal(line, "ready", 5);
	return pid;
}

static pid_t start_job(const char *seconds, const char *alloc)
{
	return start_named_job(seconds, alloc, NULL);
}

/* The value of the sample of metric whose labels contain every one of the
 * NULL-terminated label pairs ("pid=\"12\""); NAN when none. */
static double prom_value(const char *text, const char *metric, ...)
{
	size_t mlen = strlen(metric);

	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchr(line, '\n'), *sp;
		bool all = true;
		va_list ap;

		if (strncmp(line, metric, mlen) || (line[mlen] != '{' && line[mlen] != ' '))
			continue;
		sp = end ? end : line + strlen(line);
		va_start(ap, metric);
		for (const char *want = va_arg(ap, const char *); want && all; want = va_arg(ap, const char *)) {
			const char *hit = strstr(line, want);

			all = hit && hit < sp;
		}
		va_end(ap);
		if (!all)
			continue;
		while (sp > line && sp[-1] != ' ')
			sp--;
		return strtod(sp, NULL);
	}
	return NAN;
}

static double prom_file_value(const char *path, const char *metric, const char *label)
{
	char *text = th_slurp(path);
	double v;

	assert_non_null(text);
	v = prom_value(text, metric, label, NULL);
	free(text);
	return v;
}

static void pid_label(char *out, size_t len, pid_t pid)
{
	snprintf(out, len, "pid=\"%d\"", (int)pid);
}

/* The window-*.isr files of dir, sorted; how many. */
static int recordings(const char *dir, char names[][256], int max)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort), k = 0;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(list[i]->d_name);

		if (!strncmp(list[i]->d_name, "window-", 7) && l > 4 && !strcmp(list[i]->d_name + l - 4, ".isr") &&
		    k < max)
			snprintf(names[k++], 256, "%s", list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return k;
}

static void expect_daemon_exit(struct ctx *c, int code, double timeout_s)
{
	double end = th_now() + timeout_s;
	int status;
	pid_t r;

	while ((r = waitpid(c->daemon, &status, WNOHANG)) == 0 && th_now() < end)
		usleep(20000);
	if (r != c->daemon) {
		char *log = th_slurp(c->log);

		print_error("the daemon did not exit within %.0f s; its log:\n%s\n", timeout_s, log ? log : "");
		free(log);
		fail();
	}
	c->daemon = 0;
	th_expect_exit(status, code, c->log);
}

/* Waits until the metrics file says windows_total{result} >= n. */
static bool wait_windows(const char *prom, const char *result, double n, double timeout_s)
{
	char label[64];
	double end = th_now() + timeout_s;

	snprintf(label, sizeof(label), "result=\"%s\"", result);
	while (th_now() < end) {
		char *text = th_slurp(prom);
		double v = text ? prom_value(text, "inferscope_daemon_windows_total", label, NULL) : NAN;

		free(text);
		if (v >= n)
			return true;
		usleep(50000);
	}
	return false;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* GET http://127.0.0.1:port/metrics; the body, NULL while nothing listens. */
static char *http_metrics(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *body;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	assert_non_null(buf);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || write(fd, req, sizeof(req) - 1) != sizeof(req) - 1) {
		close(fd);
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	close(fd);
	buf[len] = '\0';
	body = strstr(buf, "\r\n\r\n");
	assert_non_null(body);
	body = strdup(body + 4);
	free(buf);
	return body;
}

/* Runs daemon argv (--once) to its exit 0; the metrics it wrote, and the
 * label of the job's pid. */
static char *once_metrics(struct ctx *c, char *const argv[], char *label, size_t len)
{
	char *text;

	c->daemon = th_spawn(argv, NULL, c->log);
	expect_daemon_exit(c, 0, 60);
	pid_label(label, len, c->job);
	text = th_slurp(c->prom);
	assert_non_null(text);
	return text;
}

/* One window over every process that maps libcuda: the job is recorded and
 * analyzed, its metrics match what it does, the file passes promtool and a
 * real node_exporter serves it. */
static void test_once_window_metrics_scraped(void **state)
{
	struct ctx *c = *state;
	char names[16][256], label[32], path[900], *text;
	char *argv[] = { TRACER, "daemon", "--once", "--window", "3", "--state-dir", c->state, "--textfile-dir",
			 c->prom_dir, "--keep-severity", "info", NULL };
	json_t *r, *procs;
	double window, sync, v;
	bool found = false;
	int n, port;

	c->job = start_job("60", "123456789");
	text = once_metrics(c, argv, label, sizeof(label));

	/* Exact: the peak of device memory is one allocation. */
	assert_true(prom_value(text, "inferscope_process_device_memory_peak_bytes", label, "comm=\"cuda_steady\"",
			       NULL) == 123456789.0);
	window = prom_value(text, "inferscope_window_duration_seconds", NULL);
	assert_true(window > 2.8 && window < 3.5);
	/* Half of its time in cuCtxSynchronize_v2 (10 ms of 20 ms a round;
	 * a loaded machine stretches the CPU half). */
	sync = prom_value(text, "inferscope_process_cuda_sync_seconds", label, NULL);
	if (!(sync > 0.25 * window && sync < 0.6 * window)) {
		print_error("cuda_sync_seconds %.3f of a %.3f s window\n", sync, window);
		fail();
	}
	/* One launch a round: about one per 20 ms. */
	v = prom_value(text, "inferscope_process_cuda_launches", label, NULL);
	if (!(v >= 0.5 * window / 0.020 && v <= window / 0.020 + 2)) {
		print_error("%.1f launches in a %.3f s window\n", v, window);
		fail();
	}
	/* The launching thread's timeline says the same, but for a
	 * synchronization under way at the window's end (one of 10 ms). */
	v = prom_value(text, "inferscope_process_critical_thread_seconds", label, "state=\"cuda_sync\"", NULL);
	if (!(fabs(v - sync) <= 0.011)) {
		print_error("the launching thread's cuda_sync %.4f s against the process's %.4f s\n", v, sync);
		fail();
	}
	assert_true(prom_value(text, "inferscope_process_gpu_observed", label, NULL) == 0);
	assert_true(prom_value(text, "inferscope_daemon_windows_total", "result=\"recorded\"", NULL) == 1);
	assert_true(prom_value(text, "inferscope_window_truncated", NULL) == 0);
	free(text);

	/* The kept recording is the one analyzed: analyze reads it and names
	 * the job. */
	n = recordings(c->state, names, 16);
	assert_int_equal(n, 1);
	assert_non_null(strstr(names[0], ".isr"));
	snprintf(path, sizeof(path), "%s/%s", c->state, names[0]);
	r = th_report(path);
	procs = json_object_get(json_object_get(r, "recording"), "pids");
	for (size_t i = 0; i < json_array_size(procs); i++)
		found |= json_integer_value(json_array_get(procs, i)) == c->job;
	assert_true(found);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "recording"), "stop_reason")),
			    "duration");
	/* The severity in its name is the analysis's. */
	{
		json_t *fs = json_object_get(r, "findings");
		const char *worst = "none";

		for (size_t i = 0; i < json_array_size(fs); i++) {
			const char *sev = json_string_value(json_object_get(json_array_get(fs, i), "severity"));

			if (!strcmp(sev, "critical") || (!strcmp(sev, "warning") && strcmp(worst, "critical")) ||
			    (!strcmp(sev, "info") && !strcmp(worst, "none")))
				worst = sev;
		}
		snprintf(path, sizeof(path), ".%s.isr", worst);
		assert_non_null(strstr(names[0], path));
	}
	json_decref(r);

	{
		char cmd[900];
		char *sh[] = { "sh", "-c", cmd, NULL };

		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", c->prom);
		th_expect_exit(th_run(sh, c->log), 0, c->log);
	}

	/* node_exporter's textfile collector on loopback serves the same. */
	port = free_port();
	{
		char listen[64], dir[600];
		char *ne[] = { "prometheus-node-exporter", "--collector.disable-defaults", "--collector.textfile", dir,
			       listen, NULL };
		double end = th_now() + 20;

		snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
		snprintf(dir, sizeof(dir), "--collector.textfile.directory=%s", c->prom_dir);
		c->job2 = th_spawn(ne, NULL, NULL);
		while (!(text = http_metrics(port)) && th_now() < end)
			usleep(100000);
		assert_non_null(text);
	}
	assert_true(prom_value(text, "inferscope_process_device_memory_peak_bytes", label, NULL) == 123456789.0);
	assert_true(prom_value(text, "inferscope_process_cuda_sync_seconds", label, NULL) == sync);
	assert_true(prom_value(text, "inferscope_daemon_windows_total", "result=\"recorded\"", NULL) == 1);
	assert_true(prom_value(text, "node_textfile_scrape_error", NULL) == 0);
	free(text);
}

/* Flight-recorder mode (#21: the daemon uses the same mode): one interval
 * of 3 s recorded whole, its last second kept in memory; the job
 * synchronizes for 10 ms every 20 ms, so the 5 ms sync trigger fires at
 * once and again whenever a second has passed since the last window
 * (rate-limited), and the interval's end writes one more. Every window is
 * a kept, tagged, readable recording of at most about a second holding the
 * job; the triggered ones say their trigger; the metrics count them all. */
static void test_flight_recorder_mode(void **state)
{
	struct ctx *c = *state;
	char names[16][256], path[900], *text;
	char *argv[] = { TRACER, "daemon", "--once", "--flight-recorder", "1", "--interval", "3", "--trigger-sync",
			 "0.005", "--keep-severity", "info", "--keep-last", "100", "--state-dir", c->state,
			 "--textfile-dir", c->prom_dir, NULL };
	int n, triggered = 0;

	c->job = start_job("60", "4096");
	c->daemon = th_spawn(argv, NULL, c->log);
	expect_daemon_exit(c, 0, 60);
	n = recordings(c->state, names, 16);
	print_message("%d flight-recorder windows\n", n);
	/* 3 s at one trigger window a second at most, and the end's */
	assert_true(n >= 2 && n <= 5);
	for (int i = 0; i < n; i++) {
		json_t *r, *rec, *pids;
		const char *stop, *trigger;
		bool found = false;

		snprintf(path, sizeof(path), "%s/%s", c->state, names[i]);
		r = th_report(path);
		rec = json_object_get(r, "recording");
		stop = json_string_value(json_object_get(rec, "stop_reason"));
		trigger = json_string_value(json_object_get(rec, "trigger"));
		print_message("%s: %s, %.3f s, trigger %s\n", names[i], stop, th_num(rec, "duration_s"),
			      trigger ? trigger : "-");
		assert_non_null(trigger);
		assert_true(th_num(rec, "duration_s") < 1.5);
		pids = json_object_get(rec, "pids");
		for (size_t k = 0; k < json_array_size(pids); k++)
			found |= json_integer_value(json_array_get(pids, k)) == c->job;
		assert_true(found);
		if (!strcmp(stop, "flight_trigger")) {
			assert_non_null(strstr(trigger, "sync"));
			triggered++;
		} else {
			assert_string_equal(trigger, "end of the recording");
		}
		json_decref(r);
	}
	assert_true(triggered >= 1 && triggered == n - 1);
	text = th_slurp(c->prom);
	assert_non_null(text);
	assert_true(prom_value(text, "inferscope_daemon_windows_total", "result=\"recorded\"", NULL) == n);
	free(text);
}

/* Windows go on: a process that starts between windows is sampled from the
 * next one, one that exits mid-window leaves a readable recording, and the
 * state directory keeps only what the policy says. */
static void test_windows_pickup_and_policy(void **state)
{
	struct ctx *c = *state;
	char names[64][256], label[32], path[900];
	char *argv[] = { TRACER, "daemon", "--interval", "1.5", "--window", "1", "--state-dir", c->state,
			 "--textfile-dir", c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 4242[0-9]",
			 "--keep-severity", "none", "--keep-last", "2", NULL };
	double windows;
	bool seen2 = false;
	int n;

	c->job = start_job("60", "42420");
	c->daemon = th_spawn(argv, NULL, c->log);
	assert_true(wait_windows(c->prom, "recorded", 1, 90));
	/* Started after a window: picked up at the next scan. */
	c->job2 = start_job("120", "42421");
	pid_label(label, sizeof(label), c->job2);
	for (double end = th_now() + 90; th_now() < end && !seen2;) {
		char *text = th_slurp(c->prom);

		if (text)
			seen2 = prom_value(text, "inferscope_process_device_memory_peak_bytes", label, NULL) == 42421.0;
		free(text);
		usleep(50000);
	}
	assert_true(seen2);
	/* It dies now, in a window or between two: the windows go on, and
	 * every recording kept reads. */
	windows = prom_file_value(c->prom, "inferscope_daemon_windows_total", "result=\"recorded\"");
	th_reap(c->job2);
	c->job2 = 0;
	assert_true(wait_windows(c->prom, "recorded", windows + 2, 90));
	kill(c->daemon, SIGTERM);
	expect_daemon_exit(c, 0, 30);

	/* keep-severity none, keep-last 2: the two newest only. */
	n = recordings(c->state, names, 64);
	assert_int_equal(n, 2);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_recordings_removed_total", "reason=\"policy\"") >= 2);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_recordings", NULL) == 2);
	for (int i = 0; i < n; i++) {
		json_t *r;

		snprintf(path, sizeof(path), "%s/%s", c->state, names[i]);
		r = th_report(path);
		json_decref(r);
	}
	/* The log names every window. */
	{
		char *log = th_slurp(c->log);

		assert_non_null(log);
		assert_non_null(strstr(log, "window 3:"));
		assert_non_null(strstr(log, "stopping on a signal"));
		free(log);
	}
	pid_label(label, sizeof(label), c->job);
	assert_true(prom_file_value(c->prom, "inferscope_process_device_memory_peak_bytes", label) == 42420.0);
}

/* The size cap holds: every window kept by severity, the oldest removed once
 * their total passes daemon.max_size. */
static void test_size_cap(void **state)
{
	struct ctx *c = *state;
	char names[64][256], path[900];
	char *argv[] = { TRACER, "daemon", "--interval", "1", "--window", "0.8", "--state-dir", c->state,
			 "--textfile-dir", c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 5353",
			 "--keep-severity", "info", "--keep-last", "100", "--max-size", "12K", NULL };
	unsigned long long total = 0;
	int n;

	c->job = start_job("60", "5353");
	c->daemon = th_spawn(argv, NULL, c->log);
	/* a window of a quiet job is a few KiB: enough of them to pass the cap */
	assert_true(wait_windows(c->prom, "recorded", 8, 180));
	kill(c->daemon, SIGTERM);
	expect_daemon_exit(c, 0, 30);
	n = recordings(c->state, names, 64);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", c->state, names[i]);
		assert_int_equal(stat(path, &st), 0);
		total += (unsigned long long)st.st_blocks * 512 > (unsigned long long)st.st_size ?
				 (unsigned long long)st.st_blocks * 512 : (unsigned long long)st.st_size;
	}
	assert_true(total <= 12 * 1024);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_recordings_removed_total", "reason=\"size\"") >= 1);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_recordings_bytes", NULL) <= 12 * 1024);
}

/* A state directory on a full tmpfs: the window is cut short, says so in
 * the log and in the metrics (the events it lost counted in the window's
 * drops), and the daemon goes on. */
static void test_full_state_dir(void **state)
{
	struct ctx *c = *state;
	char names[16][256], path[900], *log;
	char *argv[] = { TRACER, "daemon", "--once", "--window", "3", "--state-dir", c->state, "--textfile-dir",
			 c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 6464",
			 "--keep-severity", "info", "--compress-level", "0", NULL };
	json_t *r;
	int n;

	assert_int_equal(mount("tmpfs", c->state, "tmpfs", 0, "size=48k"), 0);
	c->mounted = true;
	c->job = start_job("60", "6464");
	c->daemon = th_spawn(argv, NULL, c->log);
	expect_daemon_exit(c, 0, 60);
	log = th_slurp(c->log);
	assert_non_null(log);
	assert_non_null(strstr(log, "cut short"));
	assert_non_null(strstr(log, "No space left on device"));
	{
		/* the recorder's count: "(N events written, M lost)" */
		const char *p = strstr(log, " events written, ");
		double lost = p ? strtod(p + strlen(" events written, "), NULL) : 0;
		double dropped = prom_file_value(c->prom, "inferscope_window_dropped_events", NULL);

		print_message("%.0f events lost to the full state directory; window_dropped_events %.0f\n", lost,
			      dropped);
		assert_true(lost > 0);
		assert_true(dropped >= lost);
		assert_true(prom_file_value(c->prom, "inferscope_daemon_dropped_events_total", NULL) == dropped);
	}
	free(log);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_truncated_recordings_total", NULL) == 1);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_errors_total", "kind=\"disk_full\"") == 1);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_last_error", "kind=\"disk_full\"") == 1);
	assert_true(prom_file_value(c->prom, "inferscope_window_truncated", NULL) == 1);
	/* What was written reads, and says it is truncated. */
	n = recordings(c->state, names, 16);
	assert_int_equal(n, 1);
	{
		char cmd[2000];
		char *sh[] = { "sh", "-c", cmd, NULL };

		/* analyze writes its report beside it: not on the full tmpfs */
		snprintf(path, sizeof(path), "%s/copy.isr", c->dir);
		snprintf(cmd, sizeof(cmd), "cp %s/%s %s", c->state, names[0], path);
		th_expect_exit(th_run(sh, NULL), 0, c->log);
	}
	r = th_report(path);
	assert_true(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	json_decref(r);
}

/* A state directory on a filesystem smaller than daemon.max_size: each
 * window fills it, and the next makes room by removing the oldest
 * recordings instead of failing at once, window after window. */
static void test_small_filesystem_not_full_forever(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "daemon", "--interval", "1.2", "--window", "1", "--state-dir", c->state,
			 "--textfile-dir", c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 6565",
			 "--keep-severity", "info", "--keep-last", "100", "--compress-level", "0", NULL };

	assert_int_equal(mount("tmpfs", c->state, "tmpfs", 0, "size=48k"), 0);
	c->mounted = true;
	c->job = start_job("120", "6565");
	c->daemon = th_spawn(argv, NULL, c->log);
	if (!wait_windows(c->prom, "recorded", 4, 120)) {
		char *log = th_slurp(c->log);

		print_error("fewer than 4 windows recorded on a 48 KiB filesystem; the log:\n%s\n", log ? log : "");
		free(log);
		fail();
	}
	kill(c->daemon, SIGTERM);
	expect_daemon_exit(c, 0, 30);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_recordings_removed_total", "reason=\"space\"") >= 1);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_recordings_bytes", NULL) <= 48 * 1024);
}

/* A state directory another user owns and anyone may write is refused
 * with what to do, before any window; so is one every user may write. */
static void test_state_dir_of_another_user_refused(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "daemon", "--once", "--state-dir", c->state, "--textfile-dir", c->prom_dir,
			 "--no-cuda-processes", NULL };
	char *log;

	assert_int_equal(chown(c->state, 65534, 65534), 0);
	assert_int_equal(chmod(c->state, 0777), 0);
	c->daemon = th_spawn(argv, NULL, c->log);
	expect_daemon_exit(c, 1, 30);
	log = th_slurp(c->log);
	assert_non_null(log);
	assert_non_null(strstr(log, "belongs to uid 65534"));
	assert_non_null(strstr(log, c->state));
	free(log);
	assert_int_equal(access(c->prom, F_OK), -1);

	assert_int_equal(chown(c->state, 0, 0), 0);
	c->daemon = th_spawn(argv, NULL, c->log);
	expect_daemon_exit(c, 1, 30);
	log = th_slurp(c->log);
	assert_non_null(log);
	assert_non_null(strstr(log, "writable by every user (mode 0777)"));
	free(log);
}

/* A process named x\xff (prctl PR_SET_NAME): its metrics are valid UTF-8
 * (the byte replaced), promtool reads the file. */
static void test_invalid_utf8_comm_metrics(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "daemon", "--once", "--window", "1", "--state-dir", c->state, "--textfile-dir",
			 c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 8686", NULL };
	char label[32], cmd[900];
	char *sh[] = { "sh", "-c", cmd, NULL };
	char *text;

	c->job = start_named_job("60", "8686", "x\xff");
	text = once_metrics(c, argv, label, sizeof(label));
	assert_true(prom_value(text, "inferscope_process_device_memory_peak_bytes", label, "comm=\"x\xef\xbf\xbd\"",
			       NULL) == 8686.0);
	assert_null(strstr(text, "x\xff"));
	free(text);
	if (system("command -v promtool >/dev/null") == 0) {
		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", c->prom);
		th_expect_exit(th_run(sh, c->log), 0, c->log);
	}
}

/* SIGTERM in the middle of a long window: the daemon exits 0 at once and
 * the window's recording is complete up to the signal. */
static void test_sigterm_cuts_window(void **state)
{
	struct ctx *c = *state;
	char names[16][256], path[900];
	char *argv[] = { TRACER, "daemon", "--interval", "120", "--window", "60", "--state-dir", c->state,
			 "--textfile-dir", c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 7575",
			 "--keep-severity", "info", NULL };
	double t0;
	json_t *r, *rec;
	int n = 0;

	c->job = start_job("60", "7575");
	c->daemon = th_spawn(argv, NULL, c->log);
	for (t0 = th_now(); th_now() - t0 < 30 && !(n = recordings(c->state, names, 16));)
		usleep(50000);
	assert_int_equal(n, 1);
	/* The file grows at the first chunk, a second into the window (the
	 * probes' setup before it takes long on a loaded machine). */
	snprintf(path, sizeof(path), "%s/%s", c->state, names[0]);
	{
		struct stat st0, st;

		assert_int_equal(stat(path, &st0), 0);
		for (t0 = th_now(); th_now() - t0 < 30 && !stat(path, &st) && st.st_size == st0.st_size;)
			usleep(50000);
		assert_true(st.st_size > st0.st_size);
	}
	sleep(1);
	t0 = th_now();
	kill(c->daemon, SIGTERM);
	expect_daemon_exit(c, 0, 30);
	assert_true(th_now() - t0 < 10);
	n = recordings(c->state, names, 16);
	assert_int_equal(n, 1);
	snprintf(path, sizeof(path), "%s/%s", c->state, names[0]);
	r = th_report(path);
	rec = json_object_get(r, "recording");
	assert_true(json_is_false(json_object_get(rec, "truncated")));
	assert_string_equal(json_string_value(json_object_get(rec, "stop_reason")), "signal");
	if (!(th_num(rec, "duration_s") > 1 && th_num(rec, "duration_s") < 20)) {
		print_error("a window cut after %.3f s\n", th_num(rec, "duration_s"));
		fail();
	}
	json_decref(r);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_windows_total", "result=\"recorded\"") == 1);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* SIGHUP with a bad file: refused with its line, the old configuration goes
 * on; with a good one, applied. */
static void test_sighup_reload(void **state)
{
	struct ctx *c = *state;
	char cfg[600], text[2048], *log;
	char *argv[] = { TRACER, "daemon", "--config", cfg, "--state-dir", c->state, "--textfile-dir", c->prom_dir,
			 "--no-cuda-processes", NULL };

	snprintf(cfg, sizeof(cfg), "%s/config.yaml", c->dir);
	write_text(cfg, "daemon:\n  interval: 1\n  window: 0.5\n  match: ['cuda_steady [0-9.]+ 8686']\n");
	c->job = start_job("60", "8686");
	c->daemon = th_spawn(argv, NULL, c->log);
	assert_true(wait_windows(c->prom, "recorded", 1, 90));
	write_text(cfg, "daemon:\n  interval: 1\n  window: 0.5\n  windw: 3\n");
	kill(c->daemon, SIGHUP);
	assert_true(wait_windows(c->prom, "recorded", 3, 90));
	assert_true(prom_file_value(c->prom, "inferscope_daemon_config_reloads_total", "result=\"refused\"") == 1);
	assert_true(prom_file_value(c->prom, "inferscope_daemon_config_reloads_total", "result=\"applied\"") == 0);
	/* Still the old one: its pattern still finds the job. */
	assert_true(prom_file_value(c->prom, "inferscope_window_processes", NULL) == 1);
	write_text(cfg, "daemon:\n  interval: 1.5\n  window: 0.5\n  match: ['cuda_steady [0-9.]+ 8686']\n");
	kill(c->daemon, SIGHUP);
	{
		double end = th_now() + 20;

		while (th_now() < end &&
		       prom_file_value(c->prom, "inferscope_daemon_config_reloads_total", "result=\"applied\"") != 1)
			usleep(50000);
	}
	assert_true(prom_file_value(c->prom, "inferscope_daemon_interval_seconds", NULL) == 1.5);
	kill(c->daemon, SIGTERM);
	expect_daemon_exit(c, 0, 30);
	log = th_slurp(c->log);
	assert_non_null(log);
	snprintf(text, sizeof(text), "configuration refused: %s:4: unknown key 'daemon.windw'", cfg);
	assert_non_null(strstr(log, text));
	assert_non_null(strstr(log, "configuration reloaded from"));
	free(log);
}

/* Under systemd: READY once set up, WATCHDOG within the interval asked
 * for (during a window too: the unit asks for 60 s), STOPPING at the end; the journal's priority
 * prefixes on every log line. */
static void test_notify_socket(void **state)
{
	struct ctx *c = *state;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char *argv[] = { TRACER, "daemon", "--interval", "2", "--window", "1.5", "--state-dir", c->state,
			 "--textfile-dir", c->prom_dir, "--no-cuda-processes", "--match", "cuda_steady [0-9.]+ 9797",
			 NULL };
	char buf[4096], abs[4096], *log;
	int fd, ready = 0, watchdog = 0, stopping = 0, status = 0, order_ok = 1;
	struct timeval tv = { 0, 200000 };
	double t0, last_ping = 0, max_gap = 0;

	/* sd_notify takes an absolute path only */
	assert_non_null(realpath(c->dir, abs));
	snprintf(a.sun_path, sizeof(a.sun_path), "%.90s/notify", abs);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	c->job = start_job("60", "9797");
	setenv("NOTIFY_SOCKET", a.sun_path, 1);
	setenv("WATCHDOG_USEC", "8000000", 1);
	setenv("JOURNAL_STREAM", "8:1234", 1);
	c->daemon = th_spawn(argv, NULL, c->log);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("JOURNAL_STREAM");
	for (t0 = th_now(); th_now() - t0 < 12;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

		if (n <= 0)
			continue;
		buf[n] = '\0';
		ready += strstr(buf, "READY=1") != NULL;
		status += strstr(buf, "STATUS=window") != NULL;
		if (strstr(buf, "WATCHDOG=1")) {
			double now = th_now();

			if (!ready)
				order_ok = 0;
			if (watchdog && now - last_ping > max_gap)
				max_gap = now - last_ping;
			last_ping = now;
			watchdog++;
		}
	}
	kill(c->daemon, SIGTERM);
	for (t0 = th_now(); th_now() - t0 < 10 && !stopping;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

		if (n > 0) {
			buf[n] = '\0';
			stopping += strstr(buf, "STOPPING=1") != NULL;
		}
	}
	close(fd);
	expect_daemon_exit(c, 0, 30);
	assert_int_equal(ready, 1);
	assert_true(order_ok);
	/* Pinged within the interval asked for, windows of 1.5 s included:
	 * between the window's set-up steps (loading BPF takes seconds on a
	 * loaded machine), then at every second of it. */
	if (watchdog < 2 || max_gap >= 8.0) {
		print_error("%d watchdog pings in 12 s, at most %.2f s apart\n", watchdog, max_gap);
		fail();
	}
	assert_true(status >= 1);
	assert_int_equal(stopping, 1);
	log = th_slurp(c->log);
	assert_non_null(log);
	for (const char *l = log; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (*l == '\n')
			continue;
		if (!(l[0] == '<' && l[1] >= '0' && l[1] <= '7' && l[2] == '>')) {
			print_error("a log line without a priority prefix: %.80s\n", l);
			fail();
		}
	}
	assert_non_null(strstr(log, "<5>started"));
	free(log);
}

/* The unit as installed passes systemd-analyze verify (which also finds
 * its man page, dist/man/man8/inferscope-bpf.8). */
static void test_unit_verifies(void **state)
{
	struct ctx *c = *state;
	char exe[4096], unit[600], cmd[9000];
	char *sh[] = { "sh", "-c", cmd, NULL };

	assert_non_null(realpath(TRACER, exe));
	snprintf(unit, sizeof(unit), "%s/inferscope-bpf.service", c->dir);
	snprintf(cmd, sizeof(cmd), "sed -e 's|@SBINDIR@/inferscope-bpf|%s|' -e 's|@SYSCONFDIR@|/etc|' "
		 "dist/inferscope-bpf.service.in > %s && MANPATH=dist/man systemd-analyze verify %s", exe, unit, unit);
	th_expect_exit(th_run(sh, c->log), 0, c->log);
	{
		char *log = th_slurp(c->log);

		/* verify prints warnings and goes on: there must be none. */
		assert_non_null(log);
		if (strstr(log, "inferscope-bpf.service")) {
			print_error("systemd-analyze verify:\n%s\n", log);
			fail();
		}
		free(log);
	}
}

/* config show names where each value came from: default, file:line,
 * environment variable, option. */
static void test_config_show_sources(void **state)
{
	struct ctx *c = *state;
	char cfg[600], out[600], where[700];
	char *argv[] = { TRACER, "config", "show", "--json", "--config", cfg, "--window", "7", NULL };
	json_error_t jerr;
	json_t *j, *arr;
	int seen = 0;

	snprintf(cfg, sizeof(cfg), "%s/config.yaml", c->dir);
	snprintf(out, sizeof(out), "%s/show.json", c->dir);
	write_text(cfg, "# fleet\nrecord:\n  gil: true\ndaemon:\n  interval: 10m\n  window: 5\n");
	setenv("INFERSCOPE_RECORD_BUDGET", "2.5", 1);
	setenv("INFERSCOPE_DAEMON_INTERVAL", "90", 1);
	th_expect_exit(th_run_to(argv, out, c->log), 0, c->log);
	unsetenv("INFERSCOPE_RECORD_BUDGET");
	unsetenv("INFERSCOPE_DAEMON_INTERVAL");
	j = json_load_file(out, 0, &jerr);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "file")), cfg);
	arr = json_object_get(j, "settings");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *s = json_array_get(arr, i);
		const char *key = json_string_value(json_object_get(s, "key"));
		const char *src = json_string_value(json_object_get(s, "source"));
		const char *w = json_string_value(json_object_get(s, "where"));
		json_t *v = json_object_get(s, "value");

		if (!strcmp(key, "record.gil")) {
			snprintf(where, sizeof(where), "%s:3", cfg);
			assert_string_equal(src, "file");
			assert_string_equal(w, where);
			assert_true(json_is_true(v));
			seen++;
		} else if (!strcmp(key, "daemon.interval")) {
			/* the environment is above the file */
			assert_string_equal(src, "environment");
			assert_string_equal(w, "INFERSCOPE_DAEMON_INTERVAL");
			assert_true(json_real_value(v) == 90);
			seen++;
		} else if (!strcmp(key, "daemon.window")) {
			/* the option is above the file */
			assert_string_equal(src, "option");
			assert_string_equal(w, "--window");
			assert_true(json_real_value(v) == 7);
			seen++;
		} else if (!strcmp(key, "record.budget")) {
			assert_string_equal(src, "environment");
			assert_true(json_real_value(v) == 2.5);
			seen++;
		} else if (!strcmp(key, "daemon.keep_last")) {
			assert_string_equal(src, "default");
			assert_int_equal(json_integer_value(v), 3);
			seen++;
		}
	}
	assert_int_equal(seen, 5);
	json_decref(j);

	/* A bad file: refused with its line, exit 2. */
	write_text(cfg, "daemon:\n  interval: 10m\n  window: soon\n");
	th_expect_exit(th_run_to(argv, out, c->log), 2, c->log);
	{
		char *log = th_slurp(c->log);

		snprintf(where, sizeof(where), "%s:3: daemon.window: 'soon' is not a duration", cfg);
		assert_non_null(strstr(log, where));
		free(log);
	}
	/* A pattern the daemon would refuse: config show refuses it too, with
	 * the daemon's words; and a value cut by a NUL is refused, not cut. */
	write_text(cfg, "daemon:\n  match: 'python3 (train'\n");
	th_expect_exit(th_run_to(argv, out, c->log), 2, c->log);
	{
		char *log = th_slurp(c->log);

		assert_non_null(strstr(log, "daemon.match: 'python3 (train' is not an extended regular expression"));
		free(log);
	}
	write_text(cfg, "daemon:\n  state_dir: \"/var/lib/x\\0/etc\"\n");
	th_expect_exit(th_run_to(argv, out, c->log), 2, c->log);
	{
		char *log = th_slurp(c->log);

		assert_non_null(strstr(log, "a NUL byte"));
		free(log);
	}
}

/* The unit's capability bounding set is enough: the daemon, with exactly
 * those capabilities and no new privileges, records a job run as root (the
 * kernel then asks for CAP_SYS_PTRACE to read its maps). */
static void test_unit_capabilities(void **state)
{
	struct ctx *c = *state;
	char *unit = th_slurp("dist/inferscope-bpf.service.in"), bounding[256] = "--bounding-set=-all", label[32], *text;
	const char *line;
	char *argv[] = { "setpriv", "--no-new-privs", "--inh-caps=-all", bounding, "--", TRACER, "daemon", "--once",
			 "--window", "2", "--state-dir", c->state, "--textfile-dir", c->prom_dir, "--no-cuda-processes",
			 "--match", "cuda_steady [0-9.]+ 3131", NULL };

	assert_non_null(unit);
	line = strstr(unit, "\nCapabilityBoundingSet=");
	assert_non_null(line);
	line += strlen("\nCapabilityBoundingSet=");
	/* CAP_BPF CAP_PERFMON ... -> --bounding-set=-all,+bpf,+perfmon,... */
	while (*line && *line != '\n') {
		size_t n = strcspn(line, " \n");
		char name[32];

		assert_memory_equal(line, "CAP_", 4);
		snprintf(name, sizeof(name), "%.*s", (int)(n - 4), line + 4);
		for (char *p = name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		snprintf(bounding + strlen(bounding), sizeof(bounding) - strlen(bounding), ",+%s", name);
		line += n;
		line += *line == ' ';
	}
	free(unit);
	c->job = start_job("60", "3131");
	c->daemon = th_spawn(argv, NULL, c->log);
	expect_daemon_exit(c, 0, 60);
	pid_label(label, sizeof(label), c->job);
	text = th_slurp(c->prom);
	assert_non_null(text);
	assert_true(prom_value(text, "inferscope_process_device_memory_peak_bytes", label, NULL) == 3131.0);
	assert_true(prom_value(text, "inferscope_process_cuda_launches", label, NULL) > 10);
	free(text);
}

/* make install with PREFIX and DESTDIR: every file in its place, the unit
 * and the configuration naming the installed paths, the installed binary
 * linked with libsystemd and reading the installed configuration. */
static void test_make_install(void **state)
{
	struct ctx *c = *state;
	char root[600], cmd[2000], path[900], out[700], *text;
	char *sh[] = { "sh", "-c", cmd, NULL };
	static const char *const files[] = {
		"/usr/sbin/inferscope-bpf", "/usr/lib/inferscope-bpf/libinferscope_cupti.so",
		"/usr/lib/systemd/system/inferscope-bpf.service", "/etc/inferscope-bpf/config.yaml",
		"/usr/share/man/man8/inferscope-bpf.8", "/usr/share/bash-completion/completions/inferscope-bpf",
	};

	assert_non_null(realpath(c->dir, root));
	strcat(root, "/root");
	snprintf(cmd, sizeof(cmd), "make -s install DESTDIR=%s PREFIX=/usr", root);
	th_expect_exit(th_run(sh, c->log), 0, c->log);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", root, files[i]);
		if (access(path, R_OK)) {
			print_error("make install did not install %s\n", path);
			fail();
		}
	}
	snprintf(path, sizeof(path), "%s/usr/lib/systemd/system/inferscope-bpf.service", root);
	text = th_slurp(path);
	assert_non_null(strstr(text, "\nExecStart=/usr/sbin/inferscope-bpf daemon --config "
				     "/etc/inferscope-bpf/config.yaml\n"));
	assert_null(strstr(text, "@SBINDIR@"));
	assert_null(strstr(text, "@SYSCONFDIR@"));
	free(text);
	/* Linked against libsystemd: it can notify. */
	snprintf(cmd, sizeof(cmd), "ldd %s/usr/sbin/inferscope-bpf | grep -q libsystemd.so", root);
	th_expect_exit(th_run(sh, c->log), 0, c->log);
	/* The installed configuration reads, and points at the installed bridge. */
	snprintf(out, sizeof(out), "%s/show.txt", c->dir);
	snprintf(cmd, sizeof(cmd), "%s/usr/sbin/inferscope-bpf config show --config %s/etc/inferscope-bpf/config.yaml "
		 "> %s", root, root, out);
	th_expect_exit(th_run(sh, c->log), 0, c->log);
	text = th_slurp(out);
	assert_non_null(strstr(text, "\"/usr/lib/inferscope-bpf/libinferscope_cupti.so\""));
	free(text);
	/* A second install keeps the configuration. */
	snprintf(path, sizeof(path), "%s/etc/inferscope-bpf/config.yaml", root);
	write_text(path, "daemon:\n  window: 4\n");
	snprintf(cmd, sizeof(cmd), "make -s install DESTDIR=%s PREFIX=/usr", root);
	th_expect_exit(th_run(sh, c->log), 0, c->log);
	text = th_slurp(path);
	assert_string_equal(text, "daemon:\n  window: 4\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_once_window_metrics_scraped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flight_recorder_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows_pickup_and_policy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_state_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_filesystem_not_full_forever, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_of_another_user_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_utf8_comm_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_cuts_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sighup_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notify_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unit_verifies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_show_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unit_capabilities, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_install, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
