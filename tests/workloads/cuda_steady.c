// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A steady CUDA job through the stand-in libcuda.so.1 (found through this
 * program's RUNPATH), for the daemon's tests: a job whose health is known.
 *
 *   cuda_steady SECONDS ALLOC_BYTES [COMM]
 *
 * Prints "ready" once running, then for SECONDS repeats: cuMemAlloc_v2 of
 * ALLOC_BYTES, one cuLaunchKernel, 10 ms of CPU work, cuCtxSynchronize_v2
 * (the stand-in blocks 10 ms in it), cuMemFree_v2. So about half of its
 * time is CUDA synchronization, the other half on CPU, and its device
 * memory peaks at exactly ALLOC_BYTES. COMM (any bytes) is its name
 * (prctl PR_SET_NAME), for the tests of names no output may be broken by.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/prctl.h>
#include "standin.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds, t0;
	unsigned long long bytes;
	char *end1, *end2;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: cuda_steady SECONDS ALLOC_BYTES [COMM]\n");
		return 2;
	}
	seconds = strtod(argv[1], &end1);
	bytes = strtoull(argv[2], &end2, 10);
	if (*end1 || *end2 || !(seconds > 0) || !bytes) {
		fprintf(stderr, "cuda_steady: SECONDS and ALLOC_BYTES must be positive numbers\n");
		return 2;
	}
	if (argc == 4 && prctl(PR_SET_NAME, argv[3], 0, 0, 0)) {
		perror("cuda_steady: prctl(PR_SET_NAME)");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (t0 = now_s(); now_s() < t0 + seconds;) {
		CUdeviceptr p;
		double t;

		if (cuMemAlloc_v2(&p, (size_t)bytes) != CUDA_SUCCESS ||
		    cuLaunchKernel((CUfunction)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS) {
			fprintf(stderr, "cuda_steady: a CUDA call failed\n");
			return 1;
		}
		for (t = now_s(); now_s() - t < 0.010;)
			;
		if (cuCtxSynchronize_v2(NULL) != CUDA_SUCCESS || cuMemFree_v2(p) != CUDA_SUCCESS) {
			fprintf(stderr, "cuda_steady: a CUDA call failed\n");
			return 1;
		}
	}
	return 0;
}
