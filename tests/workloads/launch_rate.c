// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuLaunchKernel at a steady rate through the stand-in libcuda.so.1 (found
 * through this program's RUNPATH): the launch-heavy job that the overhead
 * budget must sample.
 *
 *   launch_rate SECONDS RATE COUNT_FILE
 *   launch_rate SECONDS bound COUNT_FILE WORK_US SYNC_EVERY
 *   launch_rate SECONDS cpu RESULT_FILE WORK_US SYNC_EVERY READY_FILE
 *   launch_rate SECONDS alias COUNT_FILE KERNELS [MAX]
 *   launch_rate SECONDS seq COUNT_FILE RATE [STALL_AT STALL_MS]
 *
 * Launches RATE times a second for SECONDS (each launch at its planned
 * time, or at once when behind), then writes how many launches it made to
 * COUNT_FILE. "bound": launch-bound instead, as a Python loop is: WORK_US of
 * CPU work before each launch, and a cuStreamSynchronize after every
 * SYNC_EVERY launches (whatever a probe costs slows it down). "cpu": the
 * same with WORK_US of CPU work per launch as a loop counted once (so that
 * a preemption does not shorten it: the thread's CPU time per launch is
 * its work and what tracing adds), from when READY_FILE exists (a tracer
 * attached with -p creates it once its probes are live), in blocks of 200
 * launches and 20 pieces of work alone, writing "LAUNCHES WALL_S CPU_S
 * CPU_WITH ITERS_WITH CPU_ALONE ITERS_ALONE" (the thread's CPU time, in all
 * and in each kind of block, and their iterations) to RESULT_FILE. "alias": as
 * the CUDA runtime launches, as fast as it can: the KERNELS kernels are
 * named once (cuLibraryGetKernel), then each launch maps its kernel to its
 * function (cuKernelGetFunction) and launches that, kernel after kernel;
 * KERNELS 0: every launch maps a kernel never mapped before (the mapping
 * always teaches something new); MAX: stop after MAX launches (the
 * recorder remembers a bounded number of mappings, user/probes/alias_learn.h). "seq": RATE launches a second numbered in
 * their grid's x dimension (1, 2, 3, ...: a recording shows which it
 * holds), and STALL_AT seconds in, one cuStreamSynchronize that blocks
 * for STALL_MS (the stand-in's stall stream).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "standin.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The runtime's launch loop over `kernels` named kernels (0: a new kernel
 * each launch) for `seconds` or `max` launches (0: no bound): how many
 * launches. */
static long long alias_loop(double seconds, unsigned long kernels, unsigned long long max)
{
	unsigned long long launches = 0, i;
	CUkernel k;
	CUfunction fn;
	double t0;

	for (i = 0; i < kernels; i++)
		if (cuLibraryGetKernel(&k, (CUlibrary)(uintptr_t)PLAN_LIBRARY, plan_kernel_names[i % 4]) != CUDA_SUCCESS)
			return -1;
	for (t0 = now_s(); now_s() < t0 + seconds && (!max || launches < max); launches++) {
		k = (CUkernel)(uintptr_t)(STANDIN_KERNEL_BASE + 0x100ULL * (kernels ? launches % kernels : launches));
		if (cuKernelGetFunction(&fn, k) != CUDA_SUCCESS ||
		    cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
			return -1;
	}
	return (long long)launches;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long work_sink;

static void work(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		work_sink += i;
}

#define CPU_BLOCK	200	/* iterations with a launch, then CPU_BLOCK / 10 without */

/* launch_rate SECONDS cpu RESULT_FILE WORK_US SYNC_EVERY READY_FILE */
static int cpu_loop(char **argv)
{
	double seconds, us, t0, c0, best = 1e9, cpu[2] = { 0, 0 };
	unsigned long long launches = 0, iters[2] = { 0, 0 }, every;
	unsigned long n = 100000;
	char *end1, *end2, *end3;
	FILE *f;

	seconds = strtod(argv[1], &end1);
	us = strtod(argv[4], &end2);
	every = strtoull(argv[5], &end3, 10);
	if (*end1 || *end2 || *end3 || seconds <= 0 || us < 0 || !every) {
		fprintf(stderr, "launch_rate: SECONDS, WORK_US and SYNC_EVERY must be positive numbers\n");
		return 2;
	}
	/* the loop's speed: the fastest of a few timings (a preemption
	 * only makes one slower) */
	for (int k = 0; k < 20; k++) {
		double t = now_s();

		work(n);
		if (now_s() - t < best)
			best = now_s() - t;
	}
	n = (unsigned long)(n * us / 1e6 / best);
	while (access(argv[6], F_OK) != 0)
		usleep(1000);
	c0 = thread_cpu_s();
	for (t0 = now_s(); now_s() < t0 + seconds;) {
		/* a block with a launch after each piece of work, then one of
		 * work alone: their CPU time per iteration, side by side, tells
		 * what a launch costs the thread whatever the CPU's speed does
		 * meanwhile (a busy host's shared cores vary it by 25%) */
		for (int with = 1; with >= 0; with--) {
			int count = with ? CPU_BLOCK : CPU_BLOCK / 10;
			double c = thread_cpu_s();

			for (int i = 0; i < count; i++) {
				work(n);
				if (!with)
					continue;
				if (cuLaunchKernel((CUfunction)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS ||
				    (++launches % every == 0 && cuStreamSynchronize(NULL) != CUDA_SUCCESS)) {
					fprintf(stderr, "launch_rate: a CUDA call failed\n");
					return 1;
				}
			}
			cpu[with] += thread_cpu_s() - c;
			iters[with] += (unsigned long long)count;
		}
	}
	f = fopen(argv[3], "w");
	if (!f || fprintf(f, "%llu %.6f %.6f %.6f %llu %.6f %llu\n", launches, now_s() - t0, thread_cpu_s() - c0, cpu[1],
			  iters[1], cpu[0], iters[0]) < 0 || fclose(f)) {
		perror(argv[3]);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double seconds, rate, t0, next;
	unsigned long long launches = 0;
	char *end1, *end2;
	FILE *f;

	if ((argc == 5 || argc == 6) && strcmp(argv[2], "alias") == 0) {
		unsigned long kernels = strtoul(argv[4], &end2, 10);
		unsigned long long max = 0;
		char *end3 = "";
		long long n;

		seconds = strtod(argv[1], &end1);
		if (argc == 6)
			max = strtoull(argv[5], &end3, 10);
		if (*end1 || *end2 || *end3 || seconds <= 0) {
			fprintf(stderr, "launch_rate: SECONDS must be a positive number, KERNELS and MAX counts\n");
			return 2;
		}
		n = alias_loop(seconds, kernels, max);
		if (n < 0) {
			fprintf(stderr, "launch_rate: a CUDA call failed\n");
			return 1;
		}
		launches = (unsigned long long)n;
		goto done;
	}
	if ((argc == 5 || argc == 7) && strcmp(argv[2], "seq") == 0) {
		double stall_at = argc == 7 ? strtod(argv[5], &end1) : -1;
		unsigned long stall_ms = argc == 7 ? strtoul(argv[6], &end2, 10) : 0;
		bool stalled = argc != 7;

		seconds = strtod(argv[1], &end1);
		rate = strtod(argv[4], &end2);
		if (*end1 || *end2 || seconds <= 0 || rate <= 0) {
			fprintf(stderr, "launch_rate: SECONDS and RATE must be positive numbers\n");
			return 2;
		}
		t0 = now_s();
		for (next = t0; next < t0 + seconds; next = t0 + (double)launches / rate) {
			while (now_s() < next)
				;
			if (!stalled && now_s() >= t0 + stall_at) {
				stalled = true;
				if (cuStreamSynchronize((CUstream)(uintptr_t)PLAN_STALL_STREAM(stall_ms)) != CUDA_SUCCESS)
					return 1;
				/* the launches the stall held back are not made up for */
				t0 += stall_ms / 1e3;
			}
			if (cuLaunchKernel((CUfunction)0x1000, (unsigned int)(launches + 1), 1, 1, 32, 1, 1, 0, NULL, NULL,
					   NULL) != CUDA_SUCCESS) {
				fprintf(stderr, "launch_rate: cuLaunchKernel failed\n");
				return 1;
			}
			launches++;
		}
		goto done;
	}
	if (argc == 7 && strcmp(argv[2], "cpu") == 0)
		return cpu_loop(argv);
	if (argc == 6 && strcmp(argv[2], "bound") == 0) {
		double work = atof(argv[4]) / 1e6;
		long every = atol(argv[5]);

		seconds = strtod(argv[1], &end1);
		if (*end1 || seconds <= 0 || work < 0 || every <= 0) {
			fprintf(stderr, "launch_rate: SECONDS, WORK_US and SYNC_EVERY must be positive numbers\n");
			return 2;
		}
		for (t0 = now_s(); now_s() < t0 + seconds;) {
			double t = now_s();

			while (now_s() - t < work)
				;
			if (cuLaunchKernel((CUfunction)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS ||
			    (++launches % (unsigned long long)every == 0 && cuStreamSynchronize(NULL) != CUDA_SUCCESS)) {
				fprintf(stderr, "launch_rate: a CUDA call failed\n");
				return 1;
			}
		}
		goto done;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: launch_rate SECONDS RATE COUNT_FILE | SECONDS bound COUNT_FILE WORK_US SYNC_EVERY | "
			"SECONDS cpu RESULT_FILE WORK_US SYNC_EVERY READY_FILE | "
			"SECONDS alias COUNT_FILE KERNELS [MAX] | SECONDS seq COUNT_FILE RATE [STALL_AT STALL_MS]\n");
		return 2;
	}
	seconds = strtod(argv[1], &end1);
	rate = strtod(argv[2], &end2);
	if (*end1 || *end2 || seconds <= 0 || rate <= 0) {
		fprintf(stderr, "launch_rate: SECONDS and RATE must be positive numbers\n");
		return 2;
	}
	t0 = now_s();
	for (next = t0; next < t0 + seconds; next = t0 + (double)launches / rate) {
		while (now_s() < next)
			;
		if (cuLaunchKernel((CUfunction)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS) {
			fprintf(stderr, "launch_rate: cuLaunchKernel failed\n");
			return 1;
		}
		launches++;
	}
done:
	f = fopen(argv[3], "w");
	if (!f || fprintf(f, "%llu\n", launches) < 0 || fclose(f)) {
		perror(argv[3]);
		return 1;
	}
	return 0;
}
