// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "analysis.h"
#include "report.h"

double th_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void th_reap(pid_t pid)
{
	if (pid > 0 && waitpid(pid, NULL, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

void th_tmpdir(char *out, size_t len)
{
	mkdir("build/test-tmp", 0755);
	snprintf(out, len, "build/test-tmp/itest-XXXXXX");
	assert_non_null(mkdtemp(out));
}

void th_files_init(struct th_files *f)
{
	th_tmpdir(f->dir, sizeof(f->dir));
	snprintf(f->isr, sizeof(f->isr), "%s/rec.isr", f->dir);
	snprintf(f->err, sizeof(f->err), "%s/tracer.err", f->dir);
}

void th_expect_exit(int status, int code, const char *err_path)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != code) {
		char *e = th_slurp(err_path);

		print_error("status 0x%x, expected exit %d; stderr:\n%s\n", status, code, e ? e : "");
		free(e);
		fail();
	}
}

void th_rmrf(const char *dir)
{
	char *argv[] = { "rm", "-rf", (char *)dir, NULL };

	th_run(argv, NULL);
}

static pid_t spawn(char *const argv[], int *stdout_fd, const char *out_path, const char *err_path)
{
	int pfd[2] = { -1, -1 };
	pid_t pid;

	if (stdout_fd)
		assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (err_path) {
			int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd >= 0)
				dup2(fd, 2);
		}
		if (out_path) {
			int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd >= 0)
				dup2(fd, 1);
		}
		if (stdout_fd) {
			dup2(pfd[1], 1);
			close(pfd[0]);
			close(pfd[1]);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (stdout_fd) {
		close(pfd[1]);
		*stdout_fd = pfd[0];
	}
	return pid;
}

pid_t th_spawn(char *const argv[], int *stdout_fd, const char *err_path)
{
	return spawn(argv, stdout_fd, NULL, err_path);
}

int th_run(char *const argv[], const char *err_path)
{
	return th_run_to(argv, NULL, err_path);
}

int th_run_to(char *const argv[], const char *out_path, const char *err_path)
{
	pid_t pid = spawn(argv, NULL, out_path, err_path);
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

bool th_wait_file(const char *path, double timeout_s)
{
	double end = th_now() + timeout_s;

	while (th_now() < end) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(10000);
	}
	return false;
}

char *th_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The JSON report of isr analyzed with its events in memory, as a string
 * (the caller frees). */
static char *report_in_memory(const char *isr)
{
	struct recording *r = NULL;
	struct analysis *a = NULL;
	char err[512], *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (recording__load(isr, &r, err, sizeof(err)))
		fail_msg("recording__load(%s): %s", isr, err);
	assert_int_equal(analysis__run(r, &a), 0);
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(report__write_json(m, a), 0);
	assert_int_equal(fclose(m), 0);
	analysis__free(a);
	recording__free(r);
	return buf;
}

json_t *th_report(const char *isr)
{
	char out[512], errp[512], *streamed, *in_memory;
	json_error_t jerr;
	json_t *j;
	int status;

	snprintf(out, sizeof(out), "%s.json", isr);
	snprintf(errp, sizeof(errp), "%s.analyze.err", isr);
	{
		char *argv[] = { TRACER, "analyze", (char *)isr, "--format", "json", "-o", out, NULL };

		status = th_run(argv, errp);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *e = th_slurp(errp);

		print_error("analyze failed: %s\n", e ? e : "(no stderr)");
		free(e);
		fail();
	}
	j = json_load_file(out, 0, &jerr);
	if (!j) {
		print_error("report %s is not JSON: %s (line %d)\n", out, jerr.text, jerr.line);
		fail();
	}
	/* analyze streams the file: the same report as with the events in memory */
	streamed = th_slurp(out);
	in_memory = report_in_memory(isr);
	assert_non_null(streamed);
	if (strcmp(streamed, in_memory)) {
		size_t at = 0, from;

		while (streamed[at] == in_memory[at])
			at++;
		from = at > 120 ? at - 120 : 0;
		fail_msg("the report of %s streamed (%s) differs from the one in memory at byte %zu:\n"
			 "streamed:  ...%.240s\nin memory: ...%.240s", isr, out, at, streamed + from, in_memory + from);
	}
	free(streamed);
	free(in_memory);
	return j;
}

json_t *th_thread(json_t *report, const char *comm)
{
	json_t *threads = json_object_get(report, "threads"), *t;
	size_t i;

	json_array_foreach(threads, i, t) {
		const char *c = json_string_value(json_object_get(t, "comm"));

		if (c && strcmp(c, comm) == 0)
			return t;
	}
	return NULL;
}

double th_num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v)) {
		print_error("field %s missing or not a number\n", key);
		fail();
	}
	return json_number_value(v);
}

long long th_count(json_t *report, const char *name)
{
	json_t *v = json_object_get(json_object_get(report, "event_counts"), name);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}

/* TH_TEST=PATTERN runs only the tests whose names match it (cmocka's
 * filter: * and ? wildcards), to run one test of a binary by hand. */
__attribute__((constructor)) static void th_test_filter(void)
{
	const char *f = getenv("TH_TEST");

	if (f && *f)
		cmocka_set_test_filter(f);
}
