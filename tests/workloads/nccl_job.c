// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A job of several ranks on the stand-in libnccl.so.2 (tests/standin/), as a
 * launcher starts them: the launcher makes the unique id, then starts each
 * rank as a new process image with RANK, LOCAL_RANK and WORLD_SIZE in its
 * environment; every rank sets up the communicator and runs the plan of
 * tests/standin/nccl_plan.h, doing WORK_US of CPU work before each
 * all-reduce. One rank is made late.
 *
 *   nccl_job [--ranks N] [--iters K] [--late R] [--mode sleep|hog] [--work-us US] [--fork 1]
 *   nccl_job --bench CALLS
 *
 * --bench: one rank alone, CALLS all-reduces timed in each of BENCH_ROUNDS
 * rounds after the start-up pause; prints the median and the range of the
 * rounds' ns per call (tests/bench/nccl_cost.sh: the cost of the tracer's
 * probe per NCCL call, traced against untraced).
 *
 * A rank sets up its communicator as soon as it starts: the tracer holds a
 * process at its exec, at its loading of libnccl and, forked by a probed
 * process, before it runs, until its probes are armed (bpf/hold.bpf.h), so
 * that no call is lost. --fork 1: the ranks are forked, not exec'd, right
 * after the launcher loaded libnccl (its unique id), as a job that forks
 * its ranks does.
 *
 * --mode hog pins the late rank and a busy process ("nccl_hog") to the
 * same CPU (the busy process at nice -10) and the other ranks to other CPUs.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "nccl_api.h"
#include "nccl_plan.h"

static long opt_long(const char *s, const char *name)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "nccl_job: %s: '%s' is not a count\n", name, s);
		exit(2);
	}
	return v;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* us of this thread's CPU time: longer in wall time when it must share its CPU. */
static void work(long us)
{
	double end = cpu_s() + us / 1e6;
	volatile unsigned long x = 0;

	while (cpu_s() < end)
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

#define CHECK(call)								\
	do {									\
		ncclResult_t r_ = (call);					\
		if (r_ != ncclSuccess) {					\
			fprintf(stderr, "nccl_job: %s: error %d\n", #call, r_);	\
			exit(1);						\
		}								\
	} while (0)

static int worker(const char *hex, long iters, long late, const char *mode, long work_us)
{
	int rank = atoi(getenv("RANK")), nranks = atoi(getenv("WORLD_SIZE")), ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	static float buf[NCCL_PLAN_ALLREDUCE_COUNT * 8];
	ncclUniqueId id;
	ncclComm_t comm;

	for (size_t i = 0; i < sizeof(id.internal); i++)
		sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&id.internal[i]);
	if (strcmp(mode, "hog") == 0)
		pin(rank == late ? 0 : 1 + rank % (ncpu > 1 ? ncpu - 1 : 1));
	CHECK(ncclCommInitRank(&comm, nranks, id, rank));
	for (long i = 1; i <= iters; i++) {
		work(work_us);
		if (rank == late && strcmp(mode, "sleep") == 0 && i % NCCL_PLAN_LATE_EVERY == 0) {
			struct timespec ts = { 0, NCCL_PLAN_SLEEP_MS * 1000000L };

			while (nanosleep(&ts, &ts))
				;
		}
		CHECK(ncclAllReduce(buf, buf, NCCL_PLAN_ALLREDUCE_COUNT, ncclFloat32, ncclSum, comm, NULL));
		if (i % NCCL_PLAN_P2P_EVERY == 0) {
			CHECK(ncclGroupStart());
			CHECK(ncclSend(buf, 256, ncclInt8, (rank + 1) % nranks, comm, NULL));
			CHECK(ncclRecv(buf, 256, ncclInt8, (rank + nranks - 1) % nranks, comm, NULL));
			CHECK(ncclGroupEnd());
		}
	}
	CHECK(ncclBroadcast(buf, buf, 64, ncclFloat64, 0, comm, NULL));
	CHECK(ncclAllGather(buf, buf, 128, ncclBfloat16, comm, NULL));
	CHECK(ncclReduceScatter(buf, buf, 32, ncclInt64, ncclMax, comm, NULL));
	CHECK(ncclReduce(buf, buf, 16, ncclInt32, ncclMin, nranks - 1, comm, NULL));
	CHECK(ncclCommDestroy(comm));
	return 0;
}

#define BENCH_ROUNDS 7

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench(long calls)
{
	struct timespec startup = { 0, NCCL_PLAN_STARTUP_MS * 1000000L };
	static float buf[NCCL_PLAN_ALLREDUCE_COUNT];
	double per[BENCH_ROUNDS];
	ncclUniqueId id;
	ncclComm_t comm;

	CHECK(ncclGetUniqueId(&id));
	while (nanosleep(&startup, &startup))
		;
	CHECK(ncclCommInitRank(&comm, 1, id, 0));
	for (int r = 0; r < BENCH_ROUNDS; r++) {
		double t0 = mono_s();

		for (long i = 0; i < calls; i++)
			CHECK(ncclAllReduce(buf, buf, NCCL_PLAN_ALLREDUCE_COUNT, ncclFloat32, ncclSum, comm, NULL));
		per[r] = (mono_s() - t0) * 1e9 / (double)calls;
	}
	CHECK(ncclCommDestroy(comm));
	qsort(per, BENCH_ROUNDS, sizeof(*per), dbl_cmp);
	printf("nccl_job bench: %ld all-reduces x %d rounds: median %.1f ns per call (%.1f-%.1f)\n", calls,
	       BENCH_ROUNDS, per[BENCH_ROUNDS / 2], per[0], per[BENCH_ROUNDS - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	long ranks = 3, iters = 120, late = 1, work_us = 1000, forked = 0;
	const char *mode = "sleep";
	char hex[2 * sizeof(((ncclUniqueId *)0)->internal) + 1], env[3][32], self[4096];
	pid_t pids[64], hog = 0;
	ncclUniqueId id;
	int status, failed = 0;
	ssize_t n;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--ranks") == 0)
			ranks = opt_long(argv[i + 1], argv[i]);
		else if (strcmp(argv[i], "--iters") == 0)
			iters = opt_long(argv[i + 1], argv[i]);
		else if (strcmp(argv[i], "--late") == 0)
			late = opt_long(argv[i + 1], argv[i]);
		else if (strcmp(argv[i], "--work-us") == 0)
			work_us = opt_long(argv[i + 1], argv[i]);
		else if (strcmp(argv[i], "--mode") == 0)
			mode = argv[i + 1];
		else if (strcmp(argv[i], "--fork") == 0)
			forked = opt_long(argv[i + 1], argv[i]);
		else if (strcmp(argv[i], "--worker") == 0)
			return worker(argv[i + 1], iters, late, mode, work_us);
		else if (strcmp(argv[i], "--bench") == 0)
			return bench(opt_long(argv[i + 1], argv[i]));
		else
			break;
	}
	if (ranks < 1 || ranks > 64 || (strcmp(mode, "sleep") && strcmp(mode, "hog"))) {
		fprintf(stderr, "usage: nccl_job [--ranks 1..64] [--iters K] [--late R] [--mode sleep|hog] "
			"[--work-us US] [--fork 1]\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return 1;
	self[n] = 0;
	CHECK(ncclGetUniqueId(&id));
	for (size_t i = 0; i < sizeof(id.internal); i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)id.internal[i]);
	if (strcmp(mode, "hog") == 0) {
		hog = fork();
		if (hog == 0) {
			volatile unsigned long x = 0;

			prctl(PR_SET_NAME, "nccl_hog");
			/* a heavier share of the CPU than the rank's (as root):
			 * the plant stays larger than a busy host's own noise */
			if (setpriority(PRIO_PROCESS, 0, -10))
				perror("nccl_job: setpriority");
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pin(0);
			for (;;)
				x++;
		}
	}
	for (long r = 0; r < ranks; r++) {
		char iters_s[32], late_s[32], work_s[32];

		snprintf(iters_s, sizeof(iters_s), "%ld", iters);
		snprintf(late_s, sizeof(late_s), "%ld", late);
		snprintf(work_s, sizeof(work_s), "%ld", work_us);
		pids[r] = fork();
		if (pids[r] == 0) {
			char *args[] = { self, "--iters", iters_s, "--late", late_s, "--mode", (char *)mode,
					 "--work-us", work_s, "--worker", hex, NULL };

			snprintf(env[0], sizeof(env[0]), "%ld", r);
			snprintf(env[1], sizeof(env[1]), "%ld", ranks);
			setenv("RANK", env[0], 1);
			setenv("LOCAL_RANK", env[0], 1);
			setenv("WORLD_SIZE", env[1], 1);
			if (forked)
				_exit(worker(hex, iters, late, mode, work_us));
			execv(self, args);
			_exit(127);
		}
	}
	for (long r = 0; r < ranks; r++)
		if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	if (hog > 0) {
		kill(hog, SIGKILL);
		waitpid(hog, &status, 0);
	}
	return failed;
}
