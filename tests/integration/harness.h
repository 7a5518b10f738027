/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers for the integration tests: run the real tracer (the sanitized
 * build) against the workloads, as root, and read its JSON report the way a
 * user's script would. Paths are relative to the repository root, where
 * tests/run.sh runs the tests. TH_TEST=PATTERN in the environment runs only
 * the tests of a binary whose names match it (* and ? wildcards).
 */
#ifndef INFERSCOPE_TEST_HARNESS_H
#define INFERSCOPE_TEST_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#define TRACER "build/asan/inferscope-bpf"
#define WORKLOAD "build/tests/workloads/workload"
#define CUDA_WORKLOAD "build/tests/workloads/cuda_calls"
#define STANDIN_LIBCUDA "build/tests/standin/libcuda.so.1"

/* A test's files: a fresh directory (th_tmpdir) holding the recording and
 * the tracer's standard error. */
struct th_files {
	char dir[256];
	char isr[512];
	char err[512];
};
void th_files_init(struct th_files *f);
/* The run ended with exit code `code`; otherwise the test fails, showing
 * the tracer's standard error (err_path). */
void th_expect_exit(int status, int code, const char *err_path);

/* A fresh directory under build/test-tmp (on disk: the page-cache tests
 * need a real filesystem). */
void th_tmpdir(char *out, size_t len);
void th_rmrf(const char *dir);

/* Runs argv to completion; its stderr goes to err_path (if not NULL).
 * Returns the wait status. */
int th_run(char *const argv[], const char *err_path);
/* The same, with its stdout in out_path (if not NULL). */
int th_run_to(char *const argv[], const char *out_path, const char *err_path);
/* Starts argv in the background; stdout_fd (if not NULL) receives a pipe
 * from its standard output. */
pid_t th_spawn(char *const argv[], int *stdout_fd, const char *err_path);
/* Stops a child that th_spawn started and a failed test left running
 * (SIGKILL), and reaps it; nothing for pid <= 0. */
void th_reap(pid_t pid);
/* Waits up to timeout_s for path to exist. */
bool th_wait_file(const char *path, double timeout_s);
/* Reads a whole file (NUL-terminated); NULL if it cannot. */
char *th_slurp(const char *path);

/* `inferscope-bpf analyze ISR --format json`, parsed. Fails the test if
 * analyze fails, or if its report (analyze streams the file) differs from
 * the one of the recording analyzed with its events in memory. */
json_t *th_report(const char *isr);
/* The first thread in report["threads"] named comm, or NULL. */
json_t *th_thread(json_t *report, const char *comm);
double th_num(json_t *obj, const char *key);
/* report["event_counts"][name], 0 when absent. */
long long th_count(json_t *report, const char *name);
double th_now(void);

#endif
