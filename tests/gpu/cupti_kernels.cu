// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The GPU workload of tests/gpu/cupti.sh, built there with nvcc.
//
//   cupti_kernels plant N M SPIN_US BYTES
//       N launches of spin_kernel, each spinning SPIN_US microseconds of the
//       GPU's clock (clock64 against the SM clock rate), one at a time
//       (synchronized after each), then M host-to-device copies of BYTES
//       from pinned memory. Prints "clock_khz K" and "done".
//   cupti_kernels bench K
//       K launches of an empty kernel back to back, synchronized once at
//       the end, timed: prints "per_kernel_us X" (the per-kernel cost, launch
//       included, as the host sees it).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

#define CHECK(x)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (x);                                                     \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "cupti_kernels: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

__global__ void spin_kernel(long long cycles, int *out)
{
	long long start = clock64();

	while (clock64() - start < cycles)
		;
	if (threadIdx.x == 0 && out)
		out[blockIdx.x] = 1;
}

__global__ void empty_kernel(void)
{
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "plant") == 0) {
		int n = atoi(argv[2]), m = atoi(argv[3]), khz = 0;
		double spin_us = atof(argv[4]);
		size_t bytes = strtoull(argv[5], NULL, 10);
		void *host, *dev;
		int *out;

		CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
		CHECK(cudaMalloc(&out, 1024 * sizeof(int)));
		CHECK(cudaMalloc(&dev, bytes));
		CHECK(cudaMallocHost(&host, bytes));
		memset(host, 1, bytes);
		printf("clock_khz %d\n", khz);
		for (int i = 0; i < n; i++) {
			spin_kernel<<<1, 32>>>((long long)(spin_us * khz / 1000.0), out);
			CHECK(cudaGetLastError());
			CHECK(cudaDeviceSynchronize());
		}
		for (int j = 0; j < m; j++)
			CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
		CHECK(cudaDeviceSynchronize());
		printf("done\n");
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "bench") == 0) {
		int k = atoi(argv[2]);
		double t0;

		empty_kernel<<<1, 1>>>();	/* warm up: module load, first launch */
		CHECK(cudaDeviceSynchronize());
		t0 = now_s();
		for (int i = 0; i < k; i++)
			empty_kernel<<<1, 1>>>();
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		printf("per_kernel_us %.3f\n", (now_s() - t0) / k * 1e6);
		return 0;
	}
	fprintf(stderr, "usage: cupti_kernels plant N M SPIN_US BYTES | bench K\n");
	return 2;
}
