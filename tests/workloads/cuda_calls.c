// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Calls every CUDA driver function that inferscope-bpf probes, through the
 * stand-in libcuda.so.1 (tests/standin/, found through this program's
 * RUNPATH), exactly as tests/standin/cuda_plan.h plans: a distinct known
 * number of calls each, with known arguments.
 *
 *   cuda_calls [--wait-signal]
 *
 * Order: kernel-name learners, then every allocation (so the peak of device
 * memory is their sum), then the frees, then copies, memsets, graph
 * launches, synchronizations, and last the launches. cuLaunchKernel calls
 * come from two threads: "early", created at start, makes the first
 * PLAN_LAUNCHES_EARLY_THREAD; "late", created after the signal, the rest.
 *
 * --wait-signal: print "ready" once the early thread exists and wait for
 * SIGUSR1 before calling anything (so a tracer attaches to a process whose
 * thread already exists); print "done" after the last call and wait for a
 * second SIGUSR1 before exiting (so a recording can end while the process
 * still holds its memory).
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "standin.h"

#define N(sym) plan_calls[ISR_CUDA_FN_##sym]
#define F(sym) ISR_CUDA_FN_##sym
#define PTR(v) ((void *)(uintptr_t)(v))

static void check(CUresult got, CUresult want, const char *what, unsigned int i)
{
	if (got != want) {
		fprintf(stderr, "cuda_calls: %s call %u returned %d, expected %d\n", what, i, got, want);
		exit(1);
	}
}

static void check_handle(uint64_t got, uint64_t want, const char *what, unsigned int i)
{
	if (got != want) {
		fprintf(stderr, "cuda_calls: %s call %u handed out %#llx, expected %#llx: the stand-in and "
			"tests/standin/cuda_plan.h disagree\n", what, i, (unsigned long long)got,
			(unsigned long long)want);
		exit(1);
	}
}

static void learn_names(void)
{
	unsigned int i;

	for (i = 0; i < N(cuLibraryGetKernel); i++) {
		CUkernel k;

		check(cuLibraryGetKernel(&k, (CUlibrary)PTR(PLAN_LIBRARY), plan_kernel_names[i % 4]), CUDA_SUCCESS,
		      "cuLibraryGetKernel", i);
		check_handle((uintptr_t)k, STANDIN_KERNEL_BASE + 0x100ULL * i, "cuLibraryGetKernel", i);
	}
	for (i = 0; i < N(cuModuleGetFunction); i++) {
		CUfunction f;

		check(cuModuleGetFunction(&f, (CUmodule)PTR(PLAN_MODULE), plan_function_names[i % 3]), CUDA_SUCCESS,
		      "cuModuleGetFunction", i);
		check_handle((uintptr_t)f, STANDIN_FUNCTION_BASE + 0x100ULL * i, "cuModuleGetFunction", i);
	}
	for (i = 0; i < N(cuKernelGetFunction); i++) {
		CUfunction f;
		uint64_t k = STANDIN_KERNEL_BASE + 0x100ULL * i;

		check(cuKernelGetFunction(&f, (CUkernel)PTR(k)), CUDA_SUCCESS, "cuKernelGetFunction", i);
		check_handle((uintptr_t)f, k | STANDIN_ALIAS_BIT, "cuKernelGetFunction", i);
	}
}

static CUdeviceptr dev_allocs[128], async_allocs[128], async_ptsz_allocs[128];
static void *host_allocs[128], *hostalloc_allocs[128];
static CUmemGenericAllocationHandle vmm[128];

static void allocate(void)
{
	CUdeviceptr managed;
	unsigned int i;

	for (i = 0; i < N(cuMemAlloc_v2); i++) {
		uint64_t bytes = plan_alloc_bytes(F(cuMemAlloc_v2), i);

		check(cuMemAlloc_v2(&dev_allocs[i], bytes), bytes ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE,
		      "cuMemAlloc_v2", i);
	}
	for (i = 0; i < N(cuMemAllocAsync); i++)
		check(cuMemAllocAsync(&async_allocs[i], plan_alloc_bytes(F(cuMemAllocAsync), i),
				      (CUstream)PTR(PLAN_ALLOC_STREAM)), CUDA_SUCCESS, "cuMemAllocAsync", i);
	for (i = 0; i < N(cuMemAllocAsync_ptsz); i++)
		check(cuMemAllocAsync_ptsz(&async_ptsz_allocs[i], plan_alloc_bytes(F(cuMemAllocAsync_ptsz), i),
					   (CUstream)PTR(PLAN_ALLOC_STREAM)), CUDA_SUCCESS, "cuMemAllocAsync_ptsz", i);
	for (i = 0; i < N(cuMemAllocManaged); i++)
		check(cuMemAllocManaged(&managed, plan_alloc_bytes(F(cuMemAllocManaged), i), PLAN_MANAGED_FLAGS),
		      CUDA_SUCCESS, "cuMemAllocManaged", i);
	for (i = 0; i < N(cuMemAllocHost_v2); i++)
		check(cuMemAllocHost_v2(&host_allocs[i], plan_alloc_bytes(F(cuMemAllocHost_v2), i)), CUDA_SUCCESS,
		      "cuMemAllocHost_v2", i);
	for (i = 0; i < N(cuMemHostAlloc); i++)
		check(cuMemHostAlloc(&hostalloc_allocs[i], plan_alloc_bytes(F(cuMemHostAlloc), i),
				     PLAN_HOSTALLOC_FLAGS), CUDA_SUCCESS, "cuMemHostAlloc", i);
	for (i = 0; i < N(cuMemCreate); i++) {
		CUmemAllocationProp prop;

		memset(&prop, 0, sizeof(prop));
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		check(cuMemCreate(&vmm[i], plan_alloc_bytes(F(cuMemCreate), i), &prop, 0), CUDA_SUCCESS,
		      "cuMemCreate", i);
	}
	for (i = 0; i < N(cuMemMap); i++)
		check(cuMemMap(PLAN_VMM_VA(i), 0x200000, 0, vmm[i % N(cuMemCreate)], 0), CUDA_SUCCESS, "cuMemMap", i);
	for (i = 0; i < N(cuMemHostRegister_v2); i++)
		check(cuMemHostRegister_v2(PTR(PLAN_REGISTER_ADDR(F(cuMemHostRegister_v2), i)), PLAN_REGISTER_BYTES(i),
					   PLAN_REGISTER_FLAGS), CUDA_SUCCESS, "cuMemHostRegister_v2", i);
	for (i = 0; i < N(cuMemHostRegister); i++)
		check(cuMemHostRegister(PTR(PLAN_REGISTER_ADDR(F(cuMemHostRegister), i)), PLAN_REGISTER_BYTES(i),
					PLAN_REGISTER_FLAGS), CUDA_SUCCESS, "cuMemHostRegister", i);
}

/* Frees release the first allocations of each kind. */
static void release(void)
{
	unsigned int i;

	for (i = 0; i < N(cuMemUnmap); i++)
		check(cuMemUnmap(PLAN_VMM_VA(i), 0x200000), CUDA_SUCCESS, "cuMemUnmap", i);
	for (i = 0; i < N(cuMemRelease); i++)
		check(cuMemRelease(vmm[i]), CUDA_SUCCESS, "cuMemRelease", i);
	for (i = 0; i < N(cuMemFree_v2); i++)
		check(cuMemFree_v2(dev_allocs[i]), CUDA_SUCCESS, "cuMemFree_v2", i);
	for (i = 0; i < N(cuMemFreeAsync); i++)
		check(cuMemFreeAsync(async_allocs[i], (CUstream)PTR(PLAN_ALLOC_STREAM)), CUDA_SUCCESS,
		      "cuMemFreeAsync", i);
	for (i = 0; i < N(cuMemFreeAsync_ptsz); i++)
		check(cuMemFreeAsync_ptsz(async_ptsz_allocs[i], (CUstream)PTR(PLAN_ALLOC_STREAM)), CUDA_SUCCESS,
		      "cuMemFreeAsync_ptsz", i);
	for (i = 0; i < N(cuMemHostUnregister); i++)
		check(cuMemHostUnregister(PTR(plan_unregister_addr(i))), CUDA_SUCCESS, "cuMemHostUnregister", i);
	for (i = 0; i < N(cuMemFreeHost); i++)
		check(cuMemFreeHost(i < N(cuMemAllocHost_v2) ? host_allocs[i] :
				    hostalloc_allocs[i - N(cuMemAllocHost_v2)]), CUDA_SUCCESS, "cuMemFreeHost", i);
}

#define COPY3(sym, T1, T2)                                                                            \
	for (i = 0; i < N(sym); i++)                                                                  \
		check(sym((T1)PLAN_COPY_DST(F(sym), i), (T2)PLAN_COPY_SRC(F(sym), i),                 \
			  PLAN_COPY_BYTES(F(sym), i)), CUDA_SUCCESS, #sym, i)
#define COPY4(sym, T1, T2)                                                                            \
	for (i = 0; i < N(sym); i++)                                                                  \
		check(sym((T1)PLAN_COPY_DST(F(sym), i), (T2)PLAN_COPY_SRC(F(sym), i),                 \
			  PLAN_COPY_BYTES(F(sym), i), (CUstream)PTR(PLAN_STREAM(F(sym)))), CUDA_SUCCESS, \
		      #sym, i)

static void copy_2d(unsigned int f, unsigned int i, CUmemorytype src, CUmemorytype dst, CUDA_MEMCPY2D *c)
{
	memset(c, 0, sizeof(*c));
	c->srcMemoryType = src;
	c->dstMemoryType = dst;
	if (src == CU_MEMORYTYPE_HOST)
		c->srcHost = PTR(PLAN_COPY_SRC(f, i));
	else
		c->srcDevice = PLAN_COPY_SRC(f, i);
	if (dst == CU_MEMORYTYPE_HOST)
		c->dstHost = PTR(PLAN_COPY_DST(f, i));
	else
		c->dstDevice = PLAN_COPY_DST(f, i);
	c->WidthInBytes = PLAN_COPY_WIDTH(f);
	c->Height = PLAN_COPY_HEIGHT;
}

static void copy_3d(unsigned int f, unsigned int i, CUmemorytype src, CUmemorytype dst, CUDA_MEMCPY3D *c)
{
	memset(c, 0, sizeof(*c));
	c->srcMemoryType = src;
	c->dstMemoryType = dst;
	if (src == CU_MEMORYTYPE_HOST)
		c->srcHost = PTR(PLAN_COPY_SRC(f, i));
	else if (src == CU_MEMORYTYPE_ARRAY)
		c->srcArray = (CUarray)PTR(PLAN_COPY_SRC(f, i));
	else
		c->srcDevice = PLAN_COPY_SRC(f, i);
	if (dst == CU_MEMORYTYPE_HOST)
		c->dstHost = PTR(PLAN_COPY_DST(f, i));
	else if (dst == CU_MEMORYTYPE_ARRAY)
		c->dstArray = (CUarray)PTR(PLAN_COPY_DST(f, i));
	else
		c->dstDevice = PLAN_COPY_DST(f, i);
	c->WidthInBytes = PLAN_COPY_WIDTH(f);
	c->Height = PLAN_COPY_HEIGHT;
	c->Depth = PLAN_COPY_DEPTH(i);
}

/* 2D/3D directions: cuMemcpy2D_v2 host to device, cuMemcpy2DAsync_v2 device
 * to host, cuMemcpy3D_v2 device to array, cuMemcpy3DAsync_v2 host to
 * unified. */
static void copy(void)
{
	unsigned int i;

	COPY3(cuMemcpy, CUdeviceptr, CUdeviceptr);
	COPY3(cuMemcpy_ptds, CUdeviceptr, CUdeviceptr);
	COPY4(cuMemcpyAsync, CUdeviceptr, CUdeviceptr);
	COPY4(cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr);
	COPY3(cuMemcpyHtoD_v2, CUdeviceptr, const void *);
	COPY3(cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *);
	COPY3(cuMemcpyDtoH_v2, void *, CUdeviceptr);
	COPY3(cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr);
	COPY3(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr);
	COPY3(cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr);
	COPY4(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *);
	COPY4(cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *);
	COPY4(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr);
	COPY4(cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr);
	COPY4(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr);
	COPY4(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr);
	for (i = 0; i < N(cuMemcpyPeer); i++)
		check(cuMemcpyPeer(PLAN_COPY_DST(F(cuMemcpyPeer), i), (CUcontext)PTR(PLAN_PEER_CTX + 1),
				   PLAN_COPY_SRC(F(cuMemcpyPeer), i), (CUcontext)PTR(PLAN_PEER_CTX),
				   PLAN_COPY_BYTES(F(cuMemcpyPeer), i)), CUDA_SUCCESS, "cuMemcpyPeer", i);
	for (i = 0; i < N(cuMemcpyPeerAsync); i++)
		check(cuMemcpyPeerAsync(PLAN_COPY_DST(F(cuMemcpyPeerAsync), i), (CUcontext)PTR(PLAN_PEER_CTX + 1),
					PLAN_COPY_SRC(F(cuMemcpyPeerAsync), i), (CUcontext)PTR(PLAN_PEER_CTX),
					PLAN_COPY_BYTES(F(cuMemcpyPeerAsync), i),
					(CUstream)PTR(PLAN_STREAM(F(cuMemcpyPeerAsync)))), CUDA_SUCCESS,
		      "cuMemcpyPeerAsync", i);
	for (i = 0; i < N(cuMemcpy2D_v2); i++) {
		CUDA_MEMCPY2D c;

		copy_2d(F(cuMemcpy2D_v2), i, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE, &c);
		check(cuMemcpy2D_v2(&c), CUDA_SUCCESS, "cuMemcpy2D_v2", i);
	}
	for (i = 0; i < N(cuMemcpy2DAsync_v2); i++) {
		CUDA_MEMCPY2D c;

		copy_2d(F(cuMemcpy2DAsync_v2), i, CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST, &c);
		check(cuMemcpy2DAsync_v2(&c, (CUstream)PTR(PLAN_STREAM(F(cuMemcpy2DAsync_v2)))), CUDA_SUCCESS,
		      "cuMemcpy2DAsync_v2", i);
	}
	for (i = 0; i < N(cuMemcpy3D_v2); i++) {
		CUDA_MEMCPY3D c;

		copy_3d(F(cuMemcpy3D_v2), i, CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_ARRAY, &c);
		check(cuMemcpy3D_v2(&c), CUDA_SUCCESS, "cuMemcpy3D_v2", i);
	}
	for (i = 0; i < N(cuMemcpy3DAsync_v2); i++) {
		CUDA_MEMCPY3D c;

		copy_3d(F(cuMemcpy3DAsync_v2), i, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_UNIFIED, &c);
		check(cuMemcpy3DAsync_v2(&c, (CUstream)PTR(PLAN_STREAM(F(cuMemcpy3DAsync_v2)))), CUDA_SUCCESS,
		      "cuMemcpy3DAsync_v2", i);
	}
}

#define SET3(sym, v)                                                                                   \
	for (i = 0; i < N(sym); i++)                                                                   \
		check(sym(PLAN_COPY_DST(F(sym), i), v, PLAN_SET_COUNT(F(sym), i)), CUDA_SUCCESS, #sym, i)
#define SET4(sym, v)                                                                                   \
	for (i = 0; i < N(sym); i++)                                                                   \
		check(sym(PLAN_COPY_DST(F(sym), i), v, PLAN_SET_COUNT(F(sym), i),                      \
			  (CUstream)PTR(PLAN_STREAM(F(sym)))), CUDA_SUCCESS, #sym, i)

static void memset_calls(void)
{
	unsigned int i;

	SET3(cuMemsetD8_v2, PLAN_SET_VALUE8);
	SET3(cuMemsetD16_v2, PLAN_SET_VALUE16);
	SET3(cuMemsetD32_v2, PLAN_SET_VALUE32);
	SET4(cuMemsetD8Async, PLAN_SET_VALUE8);
	SET4(cuMemsetD16Async, PLAN_SET_VALUE16);
	SET4(cuMemsetD32Async, PLAN_SET_VALUE32);
	SET4(cuMemsetD8Async_ptsz, PLAN_SET_VALUE8);
	SET4(cuMemsetD32Async_ptsz, PLAN_SET_VALUE32);
}

#define SYNC1(sym, T)                                                                                   \
	for (i = 0; i < N(sym); i++)                                                                    \
		check(sym((T)PTR(PLAN_SYNC_HANDLE(F(sym)))), CUDA_SUCCESS, #sym, i)

static void sync_and_graphs(void)
{
	unsigned int i;

	for (i = 0; i < N(cuGraphLaunch); i++)
		check(cuGraphLaunch((CUgraphExec)PTR(PLAN_SYNC_HANDLE(F(cuGraphLaunch))),
				    (CUstream)PTR(PLAN_STREAM(F(cuGraphLaunch)))), CUDA_SUCCESS, "cuGraphLaunch", i);
	for (i = 0; i < N(cuGraphLaunch_ptsz); i++)
		check(cuGraphLaunch_ptsz((CUgraphExec)PTR(PLAN_SYNC_HANDLE(F(cuGraphLaunch_ptsz))),
					 (CUstream)PTR(PLAN_STREAM(F(cuGraphLaunch_ptsz)))), CUDA_SUCCESS,
		      "cuGraphLaunch_ptsz", i);
	for (i = 0; i < N(cuCtxSynchronize); i++)
		check(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize", i);
	for (i = 0; i < N(cuCtxSynchronize_v2); i++)
		check(cuCtxSynchronize_v2((CUcontext)PTR(PLAN_CTX)), CUDA_SUCCESS, "cuCtxSynchronize_v2", i);
	SYNC1(cuStreamSynchronize, CUstream);
	SYNC1(cuStreamSynchronize_ptsz, CUstream);
	SYNC1(cuEventSynchronize, CUevent);
	SYNC1(cuEventQuery, CUevent);
	SYNC1(cuStreamQuery_ptsz, CUstream);
	for (i = 0; i < N(cuStreamWaitEvent); i++)
		check(cuStreamWaitEvent((CUstream)PTR(PLAN_SYNC_HANDLE(F(cuStreamWaitEvent))),
					(CUevent)PTR(PLAN_WAIT_EVENT(F(cuStreamWaitEvent))), 0), CUDA_SUCCESS,
		      "cuStreamWaitEvent", i);
	for (i = 0; i < N(cuStreamWaitEvent_ptsz); i++)
		check(cuStreamWaitEvent_ptsz((CUstream)PTR(PLAN_SYNC_HANDLE(F(cuStreamWaitEvent_ptsz))),
					     (CUevent)PTR(PLAN_WAIT_EVENT(F(cuStreamWaitEvent_ptsz))), 0),
		      CUDA_SUCCESS, "cuStreamWaitEvent_ptsz", i);
	/* The last PLAN_NOT_READY_CALLS queries find the stream busy. */
	for (i = 0; i < N(cuStreamQuery); i++) {
		bool busy = i + PLAN_NOT_READY_CALLS >= N(cuStreamQuery);

		check(cuStreamQuery((CUstream)PTR(busy ? PLAN_BUSY_STREAM : PLAN_SYNC_HANDLE(F(cuStreamQuery)))),
		      busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS, "cuStreamQuery", i);
	}
}

#define LAUNCH(sym, j)                                                                                 \
	check(sym((CUfunction)PTR(plan_launch_handle(j)), PLAN_GRID_X(F(sym)), PLAN_GRID_Y(F(sym)),    \
		  PLAN_GRID_Z(F(sym)), PLAN_BLOCK_X(F(sym)), PLAN_BLOCK_Y(F(sym)), PLAN_BLOCK_Z(F(sym)), \
		  PLAN_SHARED(F(sym)), (CUstream)PTR(PLAN_STREAM(F(sym))), NULL, NULL),                \
	      CUDA_SUCCESS, #sym, j)
#define LAUNCH_COOP(sym, j)                                                                            \
	check(sym((CUfunction)PTR(plan_launch_handle(j)), PLAN_GRID_X(F(sym)), PLAN_GRID_Y(F(sym)),    \
		  PLAN_GRID_Z(F(sym)), PLAN_BLOCK_X(F(sym)), PLAN_BLOCK_Y(F(sym)), PLAN_BLOCK_Z(F(sym)), \
		  PLAN_SHARED(F(sym)), (CUstream)PTR(PLAN_STREAM(F(sym))), NULL),                      \
	      CUDA_SUCCESS, #sym, j)

static void launch_ex(unsigned int f, unsigned int j)
{
	CUlaunchConfig cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = PLAN_GRID_X(f);
	cfg.gridDimY = PLAN_GRID_Y(f);
	cfg.gridDimZ = PLAN_GRID_Z(f);
	cfg.blockDimX = PLAN_BLOCK_X(f);
	cfg.blockDimY = PLAN_BLOCK_Y(f);
	cfg.blockDimZ = PLAN_BLOCK_Z(f);
	cfg.sharedMemBytes = PLAN_SHARED(f);
	cfg.hStream = (CUstream)PTR(PLAN_STREAM(f));
	if (f == F(cuLaunchKernelEx))
		check(cuLaunchKernelEx(&cfg, (CUfunction)PTR(plan_launch_handle(j)), NULL, NULL), CUDA_SUCCESS,
		      "cuLaunchKernelEx", j);
	else
		check(cuLaunchKernelEx_ptsz(&cfg, (CUfunction)PTR(plan_launch_handle(j)), NULL, NULL), CUDA_SUCCESS,
		      "cuLaunchKernelEx_ptsz", j);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool go;

static void *early_thread(void *arg)
{
	unsigned int j;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	for (j = 0; j < PLAN_LAUNCHES_EARLY_THREAD; j++)
		LAUNCH(cuLaunchKernel, j);
	return NULL;
}

static void *late_thread(void *arg)
{
	unsigned int j;

	(void)arg;
	pthread_setname_np(pthread_self(), "late");
	for (j = PLAN_LAUNCHES_EARLY_THREAD; j < N(cuLaunchKernel); j++)
		LAUNCH(cuLaunchKernel, j);
	return NULL;
}

static void launch(pthread_t early)
{
	pthread_t late;
	unsigned int j;

	pthread_mutex_lock(&lock);
	go = true;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	if (pthread_join(early, NULL)) {
		fprintf(stderr, "cuda_calls: cannot join the early thread\n");
		exit(1);
	}
	if (pthread_create(&late, NULL, late_thread, NULL) || pthread_join(late, NULL)) {
		fprintf(stderr, "cuda_calls: cannot run the late thread\n");
		exit(1);
	}
	for (j = 0; j < N(cuLaunchKernel_ptsz); j++)
		LAUNCH(cuLaunchKernel_ptsz, j);
	for (j = 0; j < N(cuLaunchCooperativeKernel); j++)
		LAUNCH_COOP(cuLaunchCooperativeKernel, j);
	for (j = 0; j < N(cuLaunchCooperativeKernel_ptsz); j++)
		LAUNCH_COOP(cuLaunchCooperativeKernel_ptsz, j);
	for (j = 0; j < N(cuLaunchKernelEx); j++)
		launch_ex(F(cuLaunchKernelEx), j);
	for (j = 0; j < N(cuLaunchKernelEx_ptsz); j++)
		launch_ex(F(cuLaunchKernelEx_ptsz), j);
}

int main(int argc, char **argv)
{
	bool wait_signal = argc > 1 && strcmp(argv[1], "--wait-signal") == 0;
	pthread_t early;
	sigset_t set;
	int sig;

	if (argc > 2 || (argc == 2 && !wait_signal)) {
		fprintf(stderr, "usage: cuda_calls [--wait-signal]\n");
		return 2;
	}
	/* Block SIGUSR1 before any thread exists: every thread inherits it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&early, NULL, early_thread, NULL)) {
		fprintf(stderr, "cuda_calls: cannot create the early thread\n");
		return 1;
	}
	pthread_setname_np(early, "early");
	if (wait_signal) {
		printf("ready\n");
		fflush(stdout);
		if (sigwait(&set, &sig)) {
			fprintf(stderr, "cuda_calls: sigwait failed\n");
			return 1;
		}
	}
	learn_names();
	allocate();
	release();
	copy();
	memset_calls();
	sync_and_graphs();
	launch(early);
	printf("done\n");
	fflush(stdout);
	if (wait_signal && sigwait(&set, &sig)) {
		fprintf(stderr, "cuda_calls: sigwait failed\n");
		return 1;
	}
	return 0;
}
