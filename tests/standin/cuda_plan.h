/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the CUDA workload (tests/workloads/cuda_calls.c) does through the
 * stand-in libcuda (tests/standin/), in one place: the stand-in, the
 * workload and the integration test (tests/integration/test_cuda.c) all
 * read it, so a planted count or argument is written once.
 *
 * Every function of format/cuda_funcs.h is called a distinct number of times
 * (PLAN_CALLS). Arguments follow from the function id F and the call index
 * i, by the formulas below.
 */
#ifndef INFERSCOPE_CUDA_PLAN_H
#define INFERSCOPE_CUDA_PLAN_H

#include <stdint.h>
#include "cuda_funcs.h"

#define PLAN_CALLS(X)                       \
	X(cuLaunchKernel, 101)              \
	X(cuLaunchKernel_ptsz, 3)           \
	X(cuLaunchKernelEx, 37)             \
	X(cuLaunchKernelEx_ptsz, 4)         \
	X(cuLaunchCooperativeKernel, 5)     \
	X(cuLaunchCooperativeKernel_ptsz, 6) \
	X(cuGraphLaunch, 7)                 \
	X(cuGraphLaunch_ptsz, 8)            \
	X(cuMemcpy, 9)                      \
	X(cuMemcpy_ptds, 10)                \
	X(cuMemcpyAsync, 11)                \
	X(cuMemcpyAsync_ptsz, 12)           \
	X(cuMemcpyHtoD_v2, 13)              \
	X(cuMemcpyHtoD_v2_ptds, 14)         \
	X(cuMemcpyDtoH_v2, 15)              \
	X(cuMemcpyDtoH_v2_ptds, 16)         \
	X(cuMemcpyDtoD_v2, 17)              \
	X(cuMemcpyDtoD_v2_ptds, 18)         \
	X(cuMemcpyHtoDAsync_v2, 19)         \
	X(cuMemcpyHtoDAsync_v2_ptsz, 20)    \
	X(cuMemcpyDtoHAsync_v2, 21)         \
	X(cuMemcpyDtoHAsync_v2_ptsz, 22)    \
	X(cuMemcpyDtoDAsync_v2, 23)         \
	X(cuMemcpyDtoDAsync_v2_ptsz, 24)    \
	X(cuMemcpyPeer, 25)                 \
	X(cuMemcpyPeerAsync, 26)            \
	X(cuMemcpy2D_v2, 27)                \
	X(cuMemcpy2DAsync_v2, 28)           \
	X(cuMemcpy3D_v2, 29)                \
	X(cuMemcpy3DAsync_v2, 30)           \
	X(cuMemsetD8_v2, 31)                \
	X(cuMemsetD16_v2, 32)               \
	X(cuMemsetD32_v2, 33)               \
	X(cuMemsetD8Async, 34)              \
	X(cuMemsetD16Async, 35)             \
	X(cuMemsetD32Async, 36)             \
	X(cuMemsetD8Async_ptsz, 38)         \
	X(cuMemsetD32Async_ptsz, 39)        \
	X(cuCtxSynchronize, 40)             \
	X(cuCtxSynchronize_v2, 41)          \
	X(cuStreamSynchronize, 42)          \
	X(cuStreamSynchronize_ptsz, 43)     \
	X(cuEventSynchronize, 44)           \
	X(cuStreamWaitEvent, 45)            \
	X(cuStreamWaitEvent_ptsz, 46)       \
	X(cuEventQuery, 47)                 \
	X(cuStreamQuery, 48)                \
	X(cuStreamQuery_ptsz, 49)           \
	X(cuMemAlloc_v2, 61)                \
	X(cuMemFree_v2, 51)                 \
	X(cuMemAllocAsync, 62)              \
	X(cuMemAllocAsync_ptsz, 63)         \
	X(cuMemFreeAsync, 54)               \
	X(cuMemFreeAsync_ptsz, 55)          \
	X(cuMemAllocManaged, 56)            \
	X(cuMemAllocHost_v2, 57)            \
	X(cuMemHostAlloc, 58)               \
	X(cuMemFreeHost, 59)                \
	X(cuMemCreate, 64)                  \
	X(cuMemRelease, 60)                 \
	X(cuMemMap, 65)                     \
	X(cuMemUnmap, 66)                   \
	X(cuModuleGetFunction, 67)          \
	X(cuLibraryGetKernel, 68)           \
	X(cuKernelGetFunction, 69)          \
	X(cuMemHostRegister_v2, 70)         \
	X(cuMemHostUnregister, 71)          \
	X(cuMemHostRegister, 72)

#define PLAN_CALL_COUNT(sym, n) [ISR_CUDA_FN_##sym] = n,
static const unsigned int plan_calls[ISR_CUDA_FN_MAX] = { PLAN_CALLS(PLAN_CALL_COUNT) };
#undef PLAN_CALL_COUNT

/* cuLaunchKernel calls made by a thread that exists before the tracer
 * attaches (--wait-signal); the rest come from a thread created after. */
#define PLAN_LAUNCHES_EARLY_THREAD 50

/* Launches of function id F: grid (F+2, F+1, F), block (128F, F, F),
 * shared 256F bytes, stream 0x5000 + F - 1. cuLaunchKernel: grid (3,2,1),
 * block (128,1,1), 256 bytes, stream 0x5000. */
#define PLAN_GRID_X(F)	((F) + 2)
#define PLAN_GRID_Y(F)	((F) + 1)
#define PLAN_GRID_Z(F)	(F)
#define PLAN_BLOCK_X(F)	(128 * (F))
#define PLAN_BLOCK_Y(F)	(F)
#define PLAN_BLOCK_Z(F)	(F)
#define PLAN_SHARED(F)	(256 * (F))
#define PLAN_STREAM(F)	(0x5000 + (F) - 1)

/* Copies and memsets of function id F, call i. The 2D/3D extents give
 * WidthInBytes * Height (* Depth) bytes. */
#define PLAN_COPY_BYTES(F, i)	(1000ULL * (F) + 7 * (i))
#define PLAN_COPY_DST(F, i)	(0xD0000000ULL + 0x10000ULL * (F) + 0x100ULL * (i))
#define PLAN_COPY_SRC(F, i)	(0xC0000000ULL + 0x10000ULL * (F) + 0x100ULL * (i))
#define PLAN_COPY_WIDTH(F)	(100 + (F))
#define PLAN_COPY_HEIGHT	3
#define PLAN_COPY_DEPTH(i)	(1 + (i))
#define PLAN_SET_COUNT(F, i)	(10ULL * (F) + (i))
#define PLAN_SET_VALUE8		0xABu
#define PLAN_SET_VALUE16	0xABCDu
#define PLAN_SET_VALUE32	0xABCDEF12u
#define PLAN_PEER_CTX		0xC0C0ULL

/* Synchronization: handles, and how long the stand-in blocks (ms). */
#define PLAN_SYNC_HANDLE(F)	(0x5000ULL + (F) - 1)
#define PLAN_WAIT_EVENT(F)	(0xE7E0ULL + (F))
#define PLAN_CTX		0xC7C0ULL
static inline unsigned int plan_sync_sleep_ms(unsigned int f)
{
	switch (f) {
	case ISR_CUDA_FN_cuCtxSynchronize:	return 2;
	case ISR_CUDA_FN_cuCtxSynchronize_v2:	return 10;
	case ISR_CUDA_FN_cuStreamSynchronize:	return 5;
	case ISR_CUDA_FN_cuEventSynchronize:	return 3;
	default:				return 0;
	}
}
/* cuStreamQuery on this stream says CUDA_ERROR_NOT_READY (600), as a
 * driver does for a stream with work pending. */
#define PLAN_BUSY_STREAM	0x5BADULL
/* cuStreamSynchronize on a stall stream blocks for the milliseconds it
 * names: a planted stall of any length (the flight recorder's live check). */
#define PLAN_STALL_STREAM(ms)	(0x57A1100000000ULL | (unsigned int)(ms))
#define PLAN_IS_STALL_STREAM(h)	(((unsigned long long)(h) >> 32) == 0x57A11ULL)
#define PLAN_STALL_MS(h)	((unsigned int)((unsigned long long)(h) & 0xffffffffULL))
#define PLAN_NOT_READY_CALLS	5	/* the last 5 cuStreamQuery calls */
/* An async copy from or to pageable memory is staged at this rate, when
 * it has more than PLAN_STAGE_MIN_BYTES (standin_copy_async). */
#define PLAN_STAGE_BYTES_PER_S	1000000000ULL
#define PLAN_STAGE_MIN_BYTES	65536ULL

/* Allocations: bytes of call i (0-based) of allocation function F. The last
 * cuMemAlloc_v2 asks for 0 bytes, which fails with
 * CUDA_ERROR_INVALID_VALUE (1). Every allocation is made before any free,
 * so the peak is everything allocated; frees release the first calls. */
static inline uint64_t plan_alloc_bytes(unsigned int f, unsigned int i)
{
	switch (f) {
	case ISR_CUDA_FN_cuMemAlloc_v2:
		return i + 1 == plan_calls[f] ? 0 : (i + 1) * 0x1000ULL;
	case ISR_CUDA_FN_cuMemAllocAsync:	return (i + 1) * 0x2000ULL;
	case ISR_CUDA_FN_cuMemAllocAsync_ptsz:	return (i + 1) * 0x2100ULL;
	case ISR_CUDA_FN_cuMemAllocManaged:	return (i + 1) * 0x3000ULL;
	case ISR_CUDA_FN_cuMemAllocHost_v2:	return (i + 1) * 0x100ULL;
	case ISR_CUDA_FN_cuMemHostAlloc:	return (i + 1) * 0x180ULL;
	case ISR_CUDA_FN_cuMemCreate:		return (i + 1) * 0x200000ULL;
	default:				return 0;
	}
}
/* Host memory registered: call i of a register function F page-locks
 * PLAN_REGISTER_BYTES(i) bytes at PLAN_REGISTER_ADDR(F, i) (never touched);
 * the unregistrations release cuMemHostRegister_v2's ranges in order, then
 * the legacy cuMemHostRegister's. */
#define PLAN_REGISTER_ADDR(F, i)	(0x300000000ULL + 0x1000000ULL * (F) + 0x10000ULL * (i))
#define PLAN_REGISTER_BYTES(i)		(((i) + 1) * 0x1000ULL)
#define PLAN_REGISTER_FLAGS		0x1u	/* CU_MEMHOSTREGISTER_PORTABLE */
static inline uint64_t plan_unregister_addr(unsigned int i)
{
	unsigned int n = plan_calls[ISR_CUDA_FN_cuMemHostRegister_v2];

	return i < n ? PLAN_REGISTER_ADDR(ISR_CUDA_FN_cuMemHostRegister_v2, i)
		     : PLAN_REGISTER_ADDR(ISR_CUDA_FN_cuMemHostRegister, i - n);
}
#define PLAN_MANAGED_FLAGS	0x1u	/* CU_MEM_ATTACH_GLOBAL */
#define PLAN_HOSTALLOC_FLAGS	0x2u	/* CU_MEMHOSTALLOC_DEVICEMAP */
#define PLAN_ALLOC_STREAM	0x5A00ULL
#define PLAN_VMM_VA(i)		(0x7e0000000000ULL + 0x200000ULL * (i))

/* What the stand-in hands out. */
#define STANDIN_DEVPTR_BASE	0x7f0000000000ULL	/* + 1 MiB per device allocation */
#define STANDIN_HOSTPTR_BASE	0x100000000ULL		/* + 64 KiB per host allocation (never touched) */
#define STANDIN_VMM_BASE	0xAB000000ULL		/* + 1 per cuMemCreate */
#define STANDIN_KERNEL_BASE	0x60000000ULL		/* + 0x100 per cuLibraryGetKernel */
#define STANDIN_FUNCTION_BASE	0x70000000ULL		/* + 0x100 per cuModuleGetFunction */
#define STANDIN_ALIAS_BIT	0x1000000ULL		/* cuKernelGetFunction: kernel | this */
#define PLAN_LIBRARY		0x11B0ULL
#define PLAN_MODULE		0x30D0ULL

/* Kernel names: cuLibraryGetKernel call i asks for plan_kernel_names[i % 4],
 * cuModuleGetFunction call i for plan_function_names[i % 3];
 * cuKernelGetFunction call i aliases the kernel of library call i. */
static const char *const plan_kernel_names[4] = {
	"_Z6vecAddPKfS0_Pfi", "_Z4reluPfi", "_Z7softmaxPKfPfii",
	"_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE",
};
static const char *const plan_function_names[3] = { "_Z5scalePff", "_Z9layernormPKfPfS1_i", "_Z3addPfS_" };

/* Launch j of a launch function runs the handle learned by the j-th entry
 * of: every cuLibraryGetKernel kernel, every cuModuleGetFunction function,
 * every cuKernelGetFunction alias, cycling. */
#define PLAN_NR_KERNELS		68	/* = plan_calls[cuLibraryGetKernel] */
#define PLAN_NR_FUNCTIONS	67	/* = plan_calls[cuModuleGetFunction] */
#define PLAN_NR_ALIASES		69	/* = plan_calls[cuKernelGetFunction] */
static inline uint64_t plan_launch_handle(unsigned int j)
{
	unsigned int n = j % (PLAN_NR_KERNELS + PLAN_NR_FUNCTIONS + PLAN_NR_ALIASES);

	if (n < PLAN_NR_KERNELS)
		return STANDIN_KERNEL_BASE + 0x100ULL * n;
	n -= PLAN_NR_KERNELS;
	if (n < PLAN_NR_FUNCTIONS)
		return STANDIN_FUNCTION_BASE + 0x100ULL * n;
	n -= PLAN_NR_FUNCTIONS;
	return (STANDIN_KERNEL_BASE + 0x100ULL * n) | STANDIN_ALIAS_BIT;
}

static inline const char *plan_launch_name(unsigned int j)
{
	unsigned int n = j % (PLAN_NR_KERNELS + PLAN_NR_FUNCTIONS + PLAN_NR_ALIASES);

	if (n < PLAN_NR_KERNELS)
		return plan_kernel_names[n % 4];
	n -= PLAN_NR_KERNELS;
	if (n < PLAN_NR_FUNCTIONS)
		return plan_function_names[n % 3];
	n -= PLAN_NR_FUNCTIONS;
	return plan_kernel_names[n % 4];
}

#endif
