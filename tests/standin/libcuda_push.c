// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in for the CUDA driver library, libcuda.so.1, for tests without a
 * GPU: every function of format/cuda_funcs.h under its real exported name with
 * its real prototype (cuda.h), doing trivial work. Allocations hand out
 * increasing fake addresses, the kernel-handle getters distinct handles
 * (tests/standin/cuda_plan.h says which), synchronizations block for the
 * planted time, and everything succeeds except what real drivers refuse
 * too (a 0-byte allocation, a query on a busy stream).
 *
 * Compiled with -fno-omit-frame-pointer -fcf-protection=none: every entry
 * point here begins with push %rbp, like libcuda 580's.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include "standin.h"

static atomic_ullong device_allocs, host_allocs, vmm_handles, kernels, functions;

CUdeviceptr standin_device_alloc(void)
{
	return STANDIN_DEVPTR_BASE + 0x100000ULL * atomic_fetch_add(&device_allocs, 1);
}

static void block_ns(unsigned long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	while (ns && nanosleep(&ts, &ts))
		;
}

void standin_block_ms(unsigned int ms)
{
	block_ns(ms * 1000000ULL);
}

/* Host memory page-locked with cuMemHostRegister*, as the driver keeps
 * it: whether a copy is staged (standin_copy_async). A registration beyond
 * REGISTERED_MAX is not kept (its copies are staged). */
#define REGISTERED_MAX 64
static struct {
	uintptr_t lo, hi;
} registered[REGISTERED_MAX];
static atomic_flag registered_lock = ATOMIC_FLAG_INIT;

static void registered_set(uintptr_t lo, uintptr_t hi)
{
	while (atomic_flag_test_and_set(&registered_lock))
		;
	for (int i = 0; i < REGISTERED_MAX; i++)
		if (hi ? !registered[i].hi : registered[i].lo == lo) {
			registered[i].lo = hi ? lo : 0;
			registered[i].hi = hi;
			break;
		}
	atomic_flag_clear(&registered_lock);
}

static bool pinned(uintptr_t p)
{
	bool found = p >= STANDIN_HOSTPTR_BASE && p < STANDIN_HOSTPTR_BASE + 0x10000ULL * atomic_load(&host_allocs);

	while (atomic_flag_test_and_set(&registered_lock))
		;
	for (int i = 0; i < REGISTERED_MAX && !found; i++)
		found = p >= registered[i].lo && p < registered[i].hi;
	atomic_flag_clear(&registered_lock);
	return found;
}

void standin_copy_async(const void *host, size_t bytes, CUstream stream)
{
	uintptr_t h = (uintptr_t)stream;

	if (pinned((uintptr_t)host))
		return;
	if (PLAN_IS_STALL_STREAM(h))
		standin_block_ms(PLAN_STALL_MS(h));
	if (bytes > PLAN_STAGE_MIN_BYTES)
		block_ns(bytes * 1000000000ULL / PLAN_STAGE_BYTES_PER_S);
}

static CUresult launch(CUfunction f)
{
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
				unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
	(void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
	(void)sharedMemBytes, (void)hStream, (void)kernelParams, (void)extra;
	return launch(f);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
				     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
				     void **kernelParams, void **extra)
{
	(void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
	(void)sharedMemBytes, (void)hStream, (void)kernelParams, (void)extra;
	return launch(f);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
	(void)kernelParams, (void)extra;
	return config ? launch(f) : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				       void **extra)
{
	(void)kernelParams, (void)extra;
	return config ? launch(f) : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
					   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
					   unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
					   void **kernelParams)
{
	(void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
	(void)sharedMemBytes, (void)hStream, (void)kernelParams;
	return launch(f);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
						unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
						unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
						void **kernelParams)
{
	(void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
	(void)sharedMemBytes, (void)hStream, (void)kernelParams;
	return launch(f);
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	(void)hStream;
	return hGraphExec ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	(void)hStream;
	return hGraphExec ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Copies: the addresses are fake, nothing is touched. */
#define COPY3(name, T1, T2)                                          \
	CUresult CUDAAPI name(T1 dst, T2 src, size_t ByteCount)      \
	{                                                            \
		(void)dst, (void)src, (void)ByteCount;               \
		return CUDA_SUCCESS;                                 \
	}
#define COPY4(name, T1, T2)                                                         \
	CUresult CUDAAPI name(T1 dst, T2 src, size_t ByteCount, CUstream hStream)   \
	{                                                                           \
		(void)dst, (void)src, (void)ByteCount, (void)hStream;               \
		return CUDA_SUCCESS;                                                \
	}

COPY3(cuMemcpy, CUdeviceptr, CUdeviceptr)
COPY3(cuMemcpy_ptds, CUdeviceptr, CUdeviceptr)
COPY4(cuMemcpyAsync, CUdeviceptr, CUdeviceptr)
COPY4(cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr)
COPY3(cuMemcpyHtoD_v2, CUdeviceptr, const void *)
COPY3(cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *)
COPY3(cuMemcpyDtoH_v2, void *, CUdeviceptr)
COPY3(cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr)
COPY3(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr)
COPY3(cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr)
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
					  CUstream hStream)
{
	(void)dstDevice;
	standin_copy_async(srcHost, ByteCount, hStream);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
	(void)srcDevice;
	standin_copy_async(dstHost, ByteCount, hStream);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
	(void)srcDevice;
	standin_copy_async(dstHost, ByteCount, hStream);
	return CUDA_SUCCESS;
}
COPY4(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr)
COPY4(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr)

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
			      CUcontext srcContext, size_t ByteCount)
{
	(void)dstDevice, (void)dstContext, (void)srcDevice, (void)srcContext, (void)ByteCount;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
				   CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
	(void)dstDevice, (void)dstContext, (void)srcDevice, (void)srcContext, (void)ByteCount, (void)hStream;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	return pCopy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	(void)hStream;
	return pCopy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
	return pCopy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	(void)hStream;
	return pCopy ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

#define SET3(name, T)                                                  \
	CUresult CUDAAPI name(CUdeviceptr dstDevice, T value, size_t N) \
	{                                                              \
		(void)dstDevice, (void)value, (void)N;                 \
		return CUDA_SUCCESS;                                   \
	}
#define SET4(name, T)                                                                  \
	CUresult CUDAAPI name(CUdeviceptr dstDevice, T value, size_t N, CUstream hStream) \
	{                                                                              \
		(void)dstDevice, (void)value, (void)N, (void)hStream;                  \
		return CUDA_SUCCESS;                                                   \
	}

SET3(cuMemsetD8_v2, unsigned char)
SET3(cuMemsetD16_v2, unsigned short)
SET3(cuMemsetD32_v2, unsigned int)
SET4(cuMemsetD8Async, unsigned char)
SET4(cuMemsetD16Async, unsigned short)
SET4(cuMemsetD32Async, unsigned int)
SET4(cuMemsetD8Async_ptsz, unsigned char)
SET4(cuMemsetD32Async_ptsz, unsigned int)

CUresult CUDAAPI cuCtxSynchronize(void)
{
	standin_block_ms(plan_sync_sleep_ms(ISR_CUDA_FN_cuCtxSynchronize));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	(void)ctx;
	standin_block_ms(plan_sync_sleep_ms(ISR_CUDA_FN_cuCtxSynchronize_v2));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	(void)hStream;
	standin_block_ms(plan_sync_sleep_ms(ISR_CUDA_FN_cuStreamSynchronize_ptsz));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	(void)hEvent;
	standin_block_ms(plan_sync_sleep_ms(ISR_CUDA_FN_cuEventSynchronize));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	(void)hStream, (void)Flags;
	return hEvent ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	(void)hStream, (void)Flags;
	return hEvent ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
	(void)hStream;
	return CUDA_SUCCESS;
}

static CUresult device_alloc(CUdeviceptr *dptr, size_t bytesize)
{
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = standin_device_alloc();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	return dptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	(void)hStream;
	return device_alloc(dptr, bytesize);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	(void)hStream;
	return device_alloc(dptr, bytesize);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	(void)hStream;
	return dptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	(void)hStream;
	return dptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	(void)flags;
	return device_alloc(dptr, bytesize);
}

static CUresult host_alloc(void **pp, size_t bytesize)
{
	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = (void *)(uintptr_t)(STANDIN_HOSTPTR_BASE + 0x10000ULL * atomic_fetch_add(&host_allocs, 1));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return host_alloc(pp, bytesize);
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	(void)Flags;
	return host_alloc(pp, bytesize);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Registration page-locks memory the program owns: the stand-in checks
 * the arguments and keeps the range (its async copies are not staged). */
static CUresult host_register(void *p, size_t bytesize)
{
	if (!p || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	registered_set((uintptr_t)p, (uintptr_t)p + bytesize);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	(void)Flags;
	return host_register(p, bytesize);
}

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
	(void)Flags;
	return host_register(p, bytesize);
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	registered_set((uintptr_t)p, 0);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
			     unsigned long long flags)
{
	(void)prop, (void)flags;
	if (!handle || !size)
		return CUDA_ERROR_INVALID_VALUE;
	*handle = STANDIN_VMM_BASE + atomic_fetch_add(&vmm_handles, 1);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	return handle ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
			  unsigned long long flags)
{
	(void)size, (void)offset, (void)flags;
	return ptr && handle ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	(void)size;
	return ptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	if (!hfunc || !hmod || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*hfunc = (CUfunction)(uintptr_t)(STANDIN_FUNCTION_BASE + 0x100ULL * atomic_fetch_add(&functions, 1));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	if (!pKernel || !library || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*pKernel = (CUkernel)(uintptr_t)(STANDIN_KERNEL_BASE + 0x100ULL * atomic_fetch_add(&kernels, 1));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	if (!pFunc || !kernel)
		return CUDA_ERROR_INVALID_VALUE;
	*pFunc = (CUfunction)((uintptr_t)kernel | STANDIN_ALIAS_BIT);
	return CUDA_SUCCESS;
}
