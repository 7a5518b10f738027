// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Entry points compiled without a frame pointer: their first instruction is
 * not a push, so the kernel must single-step it (the slow kind of site).
 */
#include "standin.h"

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	(void)hEvent;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	return (uintptr_t)hStream == PLAN_BUSY_STREAM ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
