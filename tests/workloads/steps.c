// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A training loop of known shape, on the stand-in libcuda.so.1 and the
 * stand-in libnvToolsExt.so.1 (found through RUNPATH):
 *
 *   steps MODE STEPS SLOW GO_FILE
 *
 * waits for GO_FILE to exist (the tracer is attached by then), then runs
 * STEPS steps: in each, "forward" spins 4 ms on the CPU and launches 8
 * kernels, "backward" spins 3 ms, then cuStreamSynchronize (the stand-in
 * blocks 5 ms). Step SLOW (0-based) also sleeps 80 ms in its backward: the
 * planted slow step. MODE nvtx annotates: an "epoch" range
 * (nvtxRangeStartA/End) around the loop, each step a pushed "step" range
 * holding "forward" (nvtxRangePushA) and "backward" (nvtxRangePushEx), and
 * one nvtxMarkA("checkpoint") after half the steps. MODE plain: no NVTX.
 * Prints "forward_mean_s S": the forward part's mean time by its own clock,
 * read just outside the range's push and pop.
 */
#define NVTX_NO_IMPL
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <nvtx3/nvToolsExt.h>
#include "standin.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(double s)
{
	double end = now_s() + s;

	while (now_s() < end)
		;
}

int main(int argc, char **argv)
{
	nvtxEventAttributes_t backward;
	nvtxRangeId_t epoch = 0;
	long steps, slow;
	double forward = 0;
	bool nvtx;

	if (argc != 5 || (strcmp(argv[1], "nvtx") && strcmp(argv[1], "plain"))) {
		fprintf(stderr, "usage: steps nvtx|plain STEPS SLOW GO_FILE\n");
		return 2;
	}
	nvtx = !strcmp(argv[1], "nvtx");
	steps = atol(argv[2]);
	slow = atol(argv[3]);
	memset(&backward, 0, sizeof(backward));
	backward.version = NVTX_VERSION;
	backward.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	backward.messageType = NVTX_MESSAGE_TYPE_ASCII;
	backward.message.ascii = "backward";
	while (access(argv[4], F_OK))
		usleep(2000);
	if (nvtx)
		epoch = nvtxRangeStartA("epoch");
	for (long i = 0; i < steps; i++) {
		double t0;

		if (nvtx)
			nvtxRangePushA("step");
		t0 = now_s();
		if (nvtx)
			nvtxRangePushA("forward");
		spin(0.004);
		for (int k = 0; k < 8; k++)
			if (cuLaunchKernel((CUfunction)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
				return 1;
		if (nvtx)
			nvtxRangePop();
		forward += now_s() - t0;
		if (nvtx)
			nvtxRangePushEx(&backward);
		spin(0.003);
		if (i == slow)
			usleep(80000);
		if (nvtx)
			nvtxRangePop();
		if (cuStreamSynchronize(NULL) != CUDA_SUCCESS)
			return 1;
		if (nvtx) {
			nvtxRangePop();
			if (i == steps / 2)
				nvtxMarkA("checkpoint");
		}
	}
	if (nvtx)
		nvtxRangeEnd(epoch);
	/* what "forward" took, as this process saw it: the range the
	 * probes time lies inside each of these */
	printf("forward_mean_s %.6f\n", steps ? forward / steps : 0);
	return 0;
}
