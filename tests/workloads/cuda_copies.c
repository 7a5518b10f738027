// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copies and synchronizations through the stand-in libcuda.so.1 (found
 * through this program's RUNPATH), whose async copies from or to pageable
 * memory block while it "stages" them, as the driver's do
 * (tests/standin/standin.h, standin_copy_async). For test_explain.
 *
 *   cuda_copies pageable [LAUNCH_S]
 *       Sets up, prints "ready" and waits for SIGUSR1 (a tracer attaches
 *       meanwhile: what was pinned before is not seen as calls). Set-up:
 *       `pinned`, 1 MiB mapped shared and anonymous — how the driver's
 *       pinned allocations (cudaHostAlloc, torch's pin_memory) show in
 *       /proc/PID/maps — and registered with cuMemHostRegister_v2, so that
 *       the stand-in does not stage its copies; `registered`, 4 MiB of
 *       private memory registered (as cudaHostRegister does: private in
 *       the map); `pageable`, 4 MiB of private memory. Then COPY_STEPS x
 *       (cuMemcpyHtoDAsync_v2 from pageable, 3 x from pinned, 1 x from
 *       registered, cuLaunchKernel); then 10 synchronous copies from a
 *       buffer registered while traced (the pinned bandwidth). With
 *       LAUNCH_S, the copies follow LAUNCH_S seconds of launches as fast
 *       as it can (a phase that spends the overhead budget's hot path).
 *   cuda_copies item
 *       ITEM_STEPS x (cuLaunchKernel; cuMemcpyDtoHAsync_v2 of 4 bytes into
 *       a pageable scalar on a stall stream: it waits ITEM_GPU_MS for the
 *       "GPU", as `.item()` does; cuStreamSynchronize, which finds the
 *       stream done; ITEM_HOST_MS of CPU work before the next launch),
 *       then one last launch.
 *
 * Prints what it measured as one JSON line: pageable, the pageable copies
 * and the seconds inside their calls; item, the steps and the thread's CPU
 * seconds from each synchronization's return to the next launch.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "standin.h"

#define COPY_STEPS	100
#define PINNED_BYTES	(1U << 20)
#define BUFFER_BYTES	(4U << 20)
#define ITEM_STEPS	20
#define ITEM_GPU_MS	30
#define ITEM_HOST_MS	10

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int check(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	fprintf(stderr, "cuda_copies: %s failed: %d\n", what, r);
	return 1;
}

static int launch(void)
{
	return check(cuLaunchKernel((CUfunction)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
}

static void *map(size_t bytes, int flags)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("cuda_copies: mmap");
		return NULL;
	}
	memset(p, 1, bytes);
	return p;
}

static int copies(double launch_s)
{
	const CUdeviceptr dev = 0x7f0000000000ULL;
	void *pinned = map(PINNED_BYTES, MAP_SHARED), *registered = map(BUFFER_BYTES, MAP_PRIVATE);
	void *pageable = map(BUFFER_BYTES, MAP_PRIVATE), *later = map(BUFFER_BYTES, MAP_PRIVATE);
	double in_pageable = 0;
	sigset_t set;
	int sig;

	if (!pinned || !registered || !pageable || !later ||
	    check(cuMemHostRegister_v2(pinned, PINNED_BYTES, 0), "cuMemHostRegister_v2") ||
	    check(cuMemHostRegister_v2(registered, BUFFER_BYTES, 0), "cuMemHostRegister_v2"))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	for (double t0 = clock_s(CLOCK_MONOTONIC); clock_s(CLOCK_MONOTONIC) - t0 < launch_s;)
		for (int k = 0; k < 100; k++)
			if (launch())
				return 1;
	for (int i = 0; i < COPY_STEPS; i++) {
		double t = clock_s(CLOCK_MONOTONIC);

		if (check(cuMemcpyHtoDAsync_v2(dev, pageable, BUFFER_BYTES, NULL), "cuMemcpyHtoDAsync_v2"))
			return 1;
		in_pageable += clock_s(CLOCK_MONOTONIC) - t;
		for (int k = 0; k < 3; k++)
			if (check(cuMemcpyHtoDAsync_v2(dev, pinned, PINNED_BYTES, NULL), "cuMemcpyHtoDAsync_v2"))
				return 1;
		if (check(cuMemcpyHtoDAsync_v2(dev, registered, BUFFER_BYTES, NULL), "cuMemcpyHtoDAsync_v2") ||
		    launch())
			return 1;
	}
	if (check(cuMemHostRegister_v2(later, BUFFER_BYTES, 0), "cuMemHostRegister_v2"))
		return 1;
	for (int i = 0; i < 10; i++)
		if (check(cuMemcpyHtoD_v2(dev, later, BUFFER_BYTES), "cuMemcpyHtoD_v2"))
			return 1;
	printf("{\"pageable\": %d, \"pageable_s\": %.6f}\n", COPY_STEPS, in_pageable);
	return 0;
}

static int item(void)
{
	const CUstream stall = (CUstream)(uintptr_t)PLAN_STALL_STREAM(ITEM_GPU_MS);
	double host = 0;

	for (int i = 0; i < ITEM_STEPS; i++) {
		float loss;
		double t;

		if (launch() ||
		    check(cuMemcpyDtoHAsync_v2(&loss, 0x7f0000000000ULL, sizeof(loss), stall), "cuMemcpyDtoHAsync_v2") ||
		    check(cuStreamSynchronize((CUstream)(uintptr_t)PLAN_STALL_STREAM(0)), "cuStreamSynchronize"))
			return 1;
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
		while (clock_s(CLOCK_THREAD_CPUTIME_ID) - t < ITEM_HOST_MS / 1e3)
			;
		host += clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
	}
	if (launch())
		return 1;
	printf("{\"steps\": %d, \"host_after_sync_s\": %.6f}\n", ITEM_STEPS, host);
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set;

	/* SIGUSR1 blocked from the start: sigwait takes it */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((argc == 2 || argc == 3) && strcmp(argv[1], "pageable") == 0)
		return copies(argc == 3 ? atof(argv[2]) : 0);
	if (argc == 2 && strcmp(argv[1], "item") == 0)
		return item();
	fprintf(stderr, "usage: cuda_copies pageable [LAUNCH_S] | item\n");
	return 2;
}
