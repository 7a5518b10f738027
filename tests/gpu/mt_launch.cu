// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// A multi-threaded launcher for the CUPTI detach tests (tests/gpu/detach_cycles.sh),
// built on the GPU machine with nvcc:
//
//   mt_launch THREADS SECONDS [LIB VARIANT WINDOW_MS GAP_MS]
//
// THREADS threads, each on a stream of its own, loop for SECONDS: 64
// launches of a kernel that adds 1 to the thread's counter on the device, an
// event recorded, a 4-byte device-to-host copy of the counter (async, into
// pinned memory), a stream synchronization, and a check that the counter
// is exactly the launches made so far. Prints "ready PID" once every thread
// runs, then one line at the end: "RESULT mt ... checks_failed N" (exit 0
// only when every check held). With LIB (tests/gpu/cupti_detach.c built as
// a shared library): CUPTI is attached and detached meanwhile as VARIANT
// says, every WINDOW_MS + GAP_MS.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                            \
	do {                                                                                \
		cudaError_t e_ = (x);                                                       \
		if (e_ != cudaSuccess) {                                                    \
			fprintf(stderr, "mt_launch: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(2);                                                            \
		}                                                                           \
	} while (0)

__global__ void bump(unsigned long long *counter)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		*counter += 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double seconds;
static std::atomic<int> running;
static std::atomic<unsigned long long> launches_total, failed;

static void *worker(void *arg)
{
	unsigned long long *dev, *host, made = 0;
	cudaStream_t s;
	cudaEvent_t ev;
	double end;

	(void)arg;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CHECK(cudaMalloc(&dev, sizeof(*dev)));
	CHECK(cudaMallocHost(&host, sizeof(*host)));
	CHECK(cudaMemsetAsync(dev, 0, sizeof(*dev), s));
	CHECK(cudaStreamSynchronize(s));
	running++;
	end = now_s() + seconds;
	while (now_s() < end) {
		for (int i = 0; i < 64; i++)
			bump<<<1, 32, 0, s>>>(dev);
		made += 64;
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(ev, s));
		CHECK(cudaMemcpyAsync(host, dev, sizeof(*dev), cudaMemcpyDeviceToHost, s));
		CHECK(cudaStreamSynchronize(s));
		if (*host != made)
			failed++;
	}
	launches_total += made;
	CHECK(cudaFreeHost(host));
	CHECK(cudaFree(dev));
	CHECK(cudaEventDestroy(ev));
	CHECK(cudaStreamDestroy(s));
	return NULL;
}

int main(int argc, char **argv)
{
	int (*cd_start)(unsigned, unsigned, unsigned, unsigned) = NULL;
	int (*cd_stop)(double *) = NULL;
	double st[9] = { 0 }, t0, took;
	pthread_t th[64];
	int n;

	if (argc != 3 && argc != 7) {
		fprintf(stderr, "usage: mt_launch THREADS SECONDS [LIB VARIANT WINDOW_MS GAP_MS]\n");
		return 2;
	}
	n = atoi(argv[1]);
	seconds = atof(argv[2]);
	if (n < 1 || n > 64)
		return 2;
	CHECK(cudaFree(0));
	if (argc == 7) {
		void *h = dlopen(argv[3], RTLD_NOW);

		if (!h) {
			fprintf(stderr, "mt_launch: %s\n", dlerror());
			return 2;
		}
		*(void **)&cd_start = dlsym(h, "cd_start");
		*(void **)&cd_stop = dlsym(h, "cd_stop");
		if (!cd_start || !cd_stop ||
		    cd_start((unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]), (unsigned)atoi(argv[6]), 0))
			return 2;
	}
	t0 = now_s();
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	while (running < n)
		usleep(1000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	took = now_s() - t0;
	if (cd_stop)
		cd_stop(st);
	printf("RESULT mt threads %d variant %s cycles %.0f launches %llu rate %.0f checks_failed %llu records %.0f "
	       "drain_ms median %.2f max %.2f finalize_ms median %.2f max %.2f forced_incomplete %.0f attach_ms %.2f "
	       "error %.0f\n",
	       n, argc == 7 ? argv[4] : "-", st[0], launches_total.load(), launches_total.load() / took,
	       failed.load(), st[1], st[2], st[3], st[4], st[5], st[6], st[7], st[8]);
	return failed.load() ? 1 : 0;
}
