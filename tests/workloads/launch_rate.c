// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuLaunchKernel at a steady rate through the stand-in libcuda.so.1 (found
 * through this program's RUNPATH): the launch-heavy job that the overhead
 * budget must sample.
 *
 *   launch_rate SECONDS RATE COUNT_FILE
 *   launch_rate SECONDS bound COUNT_FILE WORK_US SYNC_EVERY
 *
 * Launches RATE times a second for SECONDS (each launch at its planned
 * time, or at once when behind), then writes how many launches it made to
 * COUNT_FILE. "bound": launch-bound instead, as a Python loop is: WORK_US of
 * CPU work before each launch, and a cuStreamSynchronize after every
 * SYNC_EVERY launches (whatever a probe costs slows it down).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "standin.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds, rate, t0, next;
	unsigned long long launches = 0;
	char *end1, *end2;
	FILE *f;

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
		fprintf(stderr, "usage: launch_rate SECONDS RATE COUNT_FILE | SECONDS bound COUNT_FILE WORK_US SYNC_EVERY\n");
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
