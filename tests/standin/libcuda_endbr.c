// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Entry points compiled with -fcf-protection=branch: they begin with
 * endbr64, then push %rbp, so the tracer probes them at +4.
 */
#include "standin.h"

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
	(void)dstDevice;
	standin_copy_async(srcHost, ByteCount, hStream);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = standin_device_alloc();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	uintptr_t h = (uintptr_t)hStream;

	standin_block_ms(PLAN_IS_STALL_STREAM(h) ? PLAN_STALL_MS(h) : plan_sync_sleep_ms(ISR_CUDA_FN_cuStreamSynchronize));
	return CUDA_SUCCESS;
}
