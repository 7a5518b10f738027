/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CUDA driver and runtime functions inferscope-bpf probes, one line each:
 *
 *   X(id, symbol, family, aux, flags)
 *
 * id      ISR_CUDA_FN_<symbol>: stored in every isr_ev_cuda_call / isr_ev_cuda_name.
 *         Part of the file format: never renumber, only append.
 * symbol  the exported ELF symbol probed (exact: versioned names such as
 *         cuMemAlloc_v2 are distinct functions from their legacy wrappers).
 * family  ISR_CUDA_FAM_*: which BPF program decodes the arguments, and whether
 *         the return is probed too.
 * aux     family-specific: copy direction (ISR_COPY_*), memset element size,
 *         allocation kind (ISR_ALLOC_*).
 * flags   ISR_CUDA_ASYNC (stream-ordered variant), ISR_CUDA_PTDS (per-thread
 *         default stream variant, _ptsz / _ptds), ISR_CUDA_RUNTIME (libcudart),
 *         ISR_CUDA_POLL (asks whether work finished and returns at once).
 *
 * What a call is (a launch, a copy, a synchronization, ...) is derived from
 * its family and flags once, ISR_CUDA_KIND below, for every consumer
 * (format/registry.h: isr_cuda_fn.kind, isr_cuda_is).
 *
 * Shared by the BPF programs, the loader and the analyzer.
 */
#ifndef INFERSCOPE_CUDA_FUNCS_H
#define INFERSCOPE_CUDA_FUNCS_H

/* Families. The hot-path families cost one probe hit per call, at entry,
 * but for the async copies; the others (marked "+ret") and the async copies
 * add a return probe to measure the call and read its status and
 * out-parameters. */
#define ISR_CUDA_FAM_LAUNCH	1  /* (f, gx, gy, gz, bx, by, [bz, shmem, stream] on the stack) */
#define ISR_CUDA_FAM_LAUNCH_EX	2  /* (const CUlaunchConfig *, f, ...) */
#define ISR_CUDA_FAM_GRAPH	3  /* (CUgraphExec, stream) */
#define ISR_CUDA_FAM_COPY	4  /* +ret (dst, src, bytes[, stream]): an async copy from pageable memory
				    * blocks while the driver stages it, one from pinned memory returns at once */
#define ISR_CUDA_FAM_COPY_PEER	5  /* (dst, dstCtx, src, srcCtx, bytes[, stream]) */
#define ISR_CUDA_FAM_COPY_2D	6  /* (const CUDA_MEMCPY2D *[, stream]) */
#define ISR_CUDA_FAM_COPY_3D	7  /* (const CUDA_MEMCPY3D *[, stream]) */
#define ISR_CUDA_FAM_SET	8  /* (dst, value, count[, stream]) */
#define ISR_CUDA_FAM_SYNC	9  /* +ret (handle[, handle2]): blocking or polling calls */
#define ISR_CUDA_FAM_ALLOC	10 /* +ret (out_ptr *, bytes[, flags or stream]) */
#define ISR_CUDA_FAM_FREE	11 /* +ret (ptr[, stream]) */
#define ISR_CUDA_FAM_VMM_CREATE	12 /* +ret (out_handle *, size, prop *, flags) */
#define ISR_CUDA_FAM_VMM_RELEASE 13 /* +ret (handle) */
#define ISR_CUDA_FAM_VMM_MAP	14 /* +ret (ptr, size, offset, handle, flags) */
#define ISR_CUDA_FAM_VMM_UNMAP	15 /* +ret (ptr, size) */
#define ISR_CUDA_FAM_NAME	16 /* +ret (out_handle *, owner, const char *name): names kernels */
#define ISR_CUDA_FAM_ALIAS	17 /* +ret (out_function *, kernel): a function of a named kernel */
#define ISR_CUDA_FAM_COPY_SYNC	18 /* +ret (dst, src, bytes): a synchronous copy, timed */
#define ISR_CUDA_FAM_REGISTER	19 /* +ret (p, bytes, flags): page-locks host memory the program allocated */
#define ISR_CUDA_FAM_UNREGISTER	20 /* +ret (p): unlocks it */

/* Families 1..8 are the hot path that the overhead budget switches
 * (user/record/budget.h): one probe hit per call, at entry, but for the async
 * copies (COPY), whose return is probed too — how long the call blocked
 * tells a copy from pageable memory (analysis/rules/rules_gpu.c). The
 * async copies (COPY .. COPY_3D) are switched apart, under a budget of
 * their own, by a recorder that says so (ISR_COSTS_COPIES_APART): a phase
 * of launches that spends the hot path's budget does not hide them. */
#define ISR_CUDA_FAM_HOT(fam)		((fam) >= ISR_CUDA_FAM_LAUNCH && (fam) <= ISR_CUDA_FAM_SET)
#define ISR_CUDA_FAM_ASYNC_COPY(fam)	((fam) >= ISR_CUDA_FAM_COPY && (fam) <= ISR_CUDA_FAM_COPY_3D)
/* Whether the family's return is probed: its events carry ISR_CUDA_RETURNED. */
#define ISR_CUDA_FAM_RETURNS(fam)	(!ISR_CUDA_FAM_HOT(fam) || (fam) == ISR_CUDA_FAM_COPY)

#define ISR_COPY_HTOD		1
#define ISR_COPY_DTOH		2
#define ISR_COPY_DTOD		3
#define ISR_COPY_DEFAULT	4 /* unified addressing: direction from the pointers */
#define ISR_COPY_PEER		5

#define ISR_ALLOC_DEVICE	1
#define ISR_ALLOC_ASYNC		2 /* stream-ordered pool */
#define ISR_ALLOC_MANAGED	3
#define ISR_ALLOC_HOST		4 /* page-locked host memory */

#define ISR_CUDA_ASYNC		0x2
#define ISR_CUDA_PTDS		0x4
#define ISR_CUDA_RUNTIME	0x8
#define ISR_CUDA_POLL		0x10

/* What a call is: ISR_CUDA_KIND(family, flags). */
#define ISR_CUDA_K_LAUNCH	0x01 /* starts GPU work (LAUNCH, LAUNCH_EX, GRAPH) */
#define ISR_CUDA_K_COPY		0x02 /* copies memory (COPY, COPY_PEER, COPY_2D, COPY_3D, COPY_SYNC) */
#define ISR_CUDA_K_SET		0x04 /* sets memory (SET) */
#define ISR_CUDA_K_SYNC		0x08 /* the calling thread waits for the GPU until the call returns, timed: the
				      * blocking calls of the SYNC family (not cuStreamWaitEvent, which makes a
				      * stream wait, nor the queries) and the synchronous copies of COPY_SYNC */
#define ISR_CUDA_K_QUERY	0x10 /* polls: whether work finished (ISR_CUDA_POLL) */
#define ISR_CUDA_K_MEM		0x20 /* allocates, frees, maps or page-locks memory */
#define ISR_CUDA_K_NAME		0x40 /* names kernels (NAME, ALIAS) */
#define ISR_CUDA_K_HOT		0x80 /* the hot path the overhead budget switches */
#define ISR_CUDA_K_ASYNC_COPY	0x100 /* an async copy of the hot path: switched apart (ISR_COSTS_COPIES_APART) */

#define ISR_CUDA_KIND(fam, flags)                                                                          \
	(((fam) == ISR_CUDA_FAM_LAUNCH || (fam) == ISR_CUDA_FAM_LAUNCH_EX || (fam) == ISR_CUDA_FAM_GRAPH ?  \
		  ISR_CUDA_K_LAUNCH : 0) |                                                                 \
	 (((fam) >= ISR_CUDA_FAM_COPY && (fam) <= ISR_CUDA_FAM_COPY_3D) || (fam) == ISR_CUDA_FAM_COPY_SYNC ? \
		  ISR_CUDA_K_COPY : 0) |                                                                   \
	 ((fam) == ISR_CUDA_FAM_SET ? ISR_CUDA_K_SET : 0) |                                                \
	 (((fam) == ISR_CUDA_FAM_SYNC && !((flags) & (ISR_CUDA_ASYNC | ISR_CUDA_POLL))) ||                  \
			  (fam) == ISR_CUDA_FAM_COPY_SYNC ?                                                \
		  ISR_CUDA_K_SYNC : 0) |                                                                   \
	 ((flags) & ISR_CUDA_POLL ? ISR_CUDA_K_QUERY : 0) |                                                \
	 (((fam) >= ISR_CUDA_FAM_ALLOC && (fam) <= ISR_CUDA_FAM_VMM_UNMAP) ||                              \
			  (fam) == ISR_CUDA_FAM_REGISTER || (fam) == ISR_CUDA_FAM_UNREGISTER ?             \
		  ISR_CUDA_K_MEM : 0) |                                                                    \
	 ((fam) == ISR_CUDA_FAM_NAME || (fam) == ISR_CUDA_FAM_ALIAS ? ISR_CUDA_K_NAME : 0) |               \
	 (ISR_CUDA_FAM_HOT(fam) ? ISR_CUDA_K_HOT : 0) | (ISR_CUDA_FAM_ASYNC_COPY(fam) ? ISR_CUDA_K_ASYNC_COPY : 0))

#define ISR_CUDA_FUNCS(X)                                                                  \
	X(1, cuLaunchKernel, ISR_CUDA_FAM_LAUNCH, 0, ISR_CUDA_ASYNC)                       \
	X(2, cuLaunchKernel_ptsz, ISR_CUDA_FAM_LAUNCH, 0, ISR_CUDA_ASYNC | ISR_CUDA_PTDS)  \
	X(3, cuLaunchKernelEx, ISR_CUDA_FAM_LAUNCH_EX, 0, ISR_CUDA_ASYNC)                  \
	X(4, cuLaunchKernelEx_ptsz, ISR_CUDA_FAM_LAUNCH_EX, 0, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(5, cuLaunchCooperativeKernel, ISR_CUDA_FAM_LAUNCH, 0, ISR_CUDA_ASYNC)            \
	X(6, cuLaunchCooperativeKernel_ptsz, ISR_CUDA_FAM_LAUNCH, 0, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(7, cuGraphLaunch, ISR_CUDA_FAM_GRAPH, 0, ISR_CUDA_ASYNC)                         \
	X(8, cuGraphLaunch_ptsz, ISR_CUDA_FAM_GRAPH, 0, ISR_CUDA_ASYNC | ISR_CUDA_PTDS)    \
	X(9, cuMemcpy, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_DEFAULT, 0)                        \
	X(10, cuMemcpy_ptds, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_DEFAULT, ISR_CUDA_PTDS)      \
	X(11, cuMemcpyAsync, ISR_CUDA_FAM_COPY, ISR_COPY_DEFAULT, ISR_CUDA_ASYNC)          \
	X(12, cuMemcpyAsync_ptsz, ISR_CUDA_FAM_COPY, ISR_COPY_DEFAULT, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(13, cuMemcpyHtoD_v2, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_HTOD, 0)                   \
	X(14, cuMemcpyHtoD_v2_ptds, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_HTOD, ISR_CUDA_PTDS)  \
	X(15, cuMemcpyDtoH_v2, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_DTOH, 0)                   \
	X(16, cuMemcpyDtoH_v2_ptds, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_DTOH, ISR_CUDA_PTDS)  \
	X(17, cuMemcpyDtoD_v2, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_DTOD, 0)                   \
	X(18, cuMemcpyDtoD_v2_ptds, ISR_CUDA_FAM_COPY_SYNC, ISR_COPY_DTOD, ISR_CUDA_PTDS)  \
	X(19, cuMemcpyHtoDAsync_v2, ISR_CUDA_FAM_COPY, ISR_COPY_HTOD, ISR_CUDA_ASYNC)      \
	X(20, cuMemcpyHtoDAsync_v2_ptsz, ISR_CUDA_FAM_COPY, ISR_COPY_HTOD, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(21, cuMemcpyDtoHAsync_v2, ISR_CUDA_FAM_COPY, ISR_COPY_DTOH, ISR_CUDA_ASYNC)      \
	X(22, cuMemcpyDtoHAsync_v2_ptsz, ISR_CUDA_FAM_COPY, ISR_COPY_DTOH, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(23, cuMemcpyDtoDAsync_v2, ISR_CUDA_FAM_COPY, ISR_COPY_DTOD, ISR_CUDA_ASYNC)      \
	X(24, cuMemcpyDtoDAsync_v2_ptsz, ISR_CUDA_FAM_COPY, ISR_COPY_DTOD, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(25, cuMemcpyPeer, ISR_CUDA_FAM_COPY_PEER, ISR_COPY_PEER, 0)                      \
	X(26, cuMemcpyPeerAsync, ISR_CUDA_FAM_COPY_PEER, ISR_COPY_PEER, ISR_CUDA_ASYNC)    \
	X(27, cuMemcpy2D_v2, ISR_CUDA_FAM_COPY_2D, 0, 0)                                   \
	X(28, cuMemcpy2DAsync_v2, ISR_CUDA_FAM_COPY_2D, 0, ISR_CUDA_ASYNC)                 \
	X(29, cuMemcpy3D_v2, ISR_CUDA_FAM_COPY_3D, 0, 0)                                   \
	X(30, cuMemcpy3DAsync_v2, ISR_CUDA_FAM_COPY_3D, 0, ISR_CUDA_ASYNC)                 \
	X(31, cuMemsetD8_v2, ISR_CUDA_FAM_SET, 1, 0)                                       \
	X(32, cuMemsetD16_v2, ISR_CUDA_FAM_SET, 2, 0)                                      \
	X(33, cuMemsetD32_v2, ISR_CUDA_FAM_SET, 4, 0)                                      \
	X(34, cuMemsetD8Async, ISR_CUDA_FAM_SET, 1, ISR_CUDA_ASYNC)                        \
	X(35, cuMemsetD16Async, ISR_CUDA_FAM_SET, 2, ISR_CUDA_ASYNC)                       \
	X(36, cuMemsetD32Async, ISR_CUDA_FAM_SET, 4, ISR_CUDA_ASYNC)                       \
	X(37, cuMemsetD8Async_ptsz, ISR_CUDA_FAM_SET, 1, ISR_CUDA_ASYNC | ISR_CUDA_PTDS)   \
	X(38, cuMemsetD32Async_ptsz, ISR_CUDA_FAM_SET, 4, ISR_CUDA_ASYNC | ISR_CUDA_PTDS)  \
	X(39, cuCtxSynchronize, ISR_CUDA_FAM_SYNC, 0, 0)                                   \
	X(40, cuCtxSynchronize_v2, ISR_CUDA_FAM_SYNC, 0, 0)                                \
	X(41, cuStreamSynchronize, ISR_CUDA_FAM_SYNC, 0, 0)                                \
	X(42, cuStreamSynchronize_ptsz, ISR_CUDA_FAM_SYNC, 0, ISR_CUDA_PTDS)               \
	X(43, cuEventSynchronize, ISR_CUDA_FAM_SYNC, 0, 0)                                 \
	X(44, cuStreamWaitEvent, ISR_CUDA_FAM_SYNC, 0, ISR_CUDA_ASYNC)                     \
	X(45, cuStreamWaitEvent_ptsz, ISR_CUDA_FAM_SYNC, 0, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(46, cuEventQuery, ISR_CUDA_FAM_SYNC, 0, ISR_CUDA_POLL)                           \
	X(47, cuStreamQuery, ISR_CUDA_FAM_SYNC, 0, ISR_CUDA_POLL)                          \
	X(48, cuStreamQuery_ptsz, ISR_CUDA_FAM_SYNC, 0, ISR_CUDA_POLL | ISR_CUDA_PTDS)     \
	X(49, cuMemAlloc_v2, ISR_CUDA_FAM_ALLOC, ISR_ALLOC_DEVICE, 0)                      \
	X(50, cuMemFree_v2, ISR_CUDA_FAM_FREE, ISR_ALLOC_DEVICE, 0)                        \
	X(51, cuMemAllocAsync, ISR_CUDA_FAM_ALLOC, ISR_ALLOC_ASYNC, ISR_CUDA_ASYNC)        \
	X(52, cuMemAllocAsync_ptsz, ISR_CUDA_FAM_ALLOC, ISR_ALLOC_ASYNC, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(53, cuMemFreeAsync, ISR_CUDA_FAM_FREE, ISR_ALLOC_ASYNC, ISR_CUDA_ASYNC)          \
	X(54, cuMemFreeAsync_ptsz, ISR_CUDA_FAM_FREE, ISR_ALLOC_ASYNC, ISR_CUDA_ASYNC | ISR_CUDA_PTDS) \
	X(55, cuMemAllocManaged, ISR_CUDA_FAM_ALLOC, ISR_ALLOC_MANAGED, 0)                 \
	X(56, cuMemAllocHost_v2, ISR_CUDA_FAM_ALLOC, ISR_ALLOC_HOST, 0)                    \
	X(57, cuMemHostAlloc, ISR_CUDA_FAM_ALLOC, ISR_ALLOC_HOST, 0)                       \
	X(58, cuMemFreeHost, ISR_CUDA_FAM_FREE, ISR_ALLOC_HOST, 0)                         \
	X(59, cuMemCreate, ISR_CUDA_FAM_VMM_CREATE, 0, 0)                                  \
	X(60, cuMemRelease, ISR_CUDA_FAM_VMM_RELEASE, 0, 0)                                \
	X(61, cuMemMap, ISR_CUDA_FAM_VMM_MAP, 0, 0)                                        \
	X(62, cuMemUnmap, ISR_CUDA_FAM_VMM_UNMAP, 0, 0)                                    \
	X(63, cuModuleGetFunction, ISR_CUDA_FAM_NAME, 0, 0)                                \
	X(64, cuLibraryGetKernel, ISR_CUDA_FAM_NAME, 0, 0)                                 \
	X(65, cuKernelGetFunction, ISR_CUDA_FAM_ALIAS, 0, 0)                               \
	X(66, cuMemHostRegister_v2, ISR_CUDA_FAM_REGISTER, 0, 0)                           \
	X(67, cuMemHostUnregister, ISR_CUDA_FAM_UNREGISTER, 0, 0)                          \
	X(68, cuMemHostRegister, ISR_CUDA_FAM_REGISTER, 0, 0)

#define ISR_CUDA_FN_ENUM(id, sym, fam, aux, flags) ISR_CUDA_FN_##sym = id,
enum { ISR_CUDA_FUNCS(ISR_CUDA_FN_ENUM) ISR_CUDA_FN_MAX };
#undef ISR_CUDA_FN_ENUM

#endif
