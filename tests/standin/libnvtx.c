// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in libnvToolsExt.so.1: the NVTX entry points with the signatures
 * of NVTX's own header (nvtx3/nvToolsExt.h with NVTX_NO_IMPL declares them
 * as a tool implements them), as NVTX 2's shared library exports them. The
 * ranges are kept as the real library's callers expect: push returns the
 * depth before, pop the depth after, start a fresh id.
 */
#define NVTX_NO_IMPL
#include <stddef.h>
#include <nvtx3/nvToolsExt.h>

_Static_assert(offsetof(nvtxEventAttributes_t, messageType) == 32, "the BPF program reads messageType at 32");
_Static_assert(offsetof(nvtxEventAttributes_t, message) == 40, "the BPF program reads message at 40");

static __thread int depth;
static nvtxRangeId_t next_id = 1;

__attribute__((visibility("default"), noinline)) int nvtxRangePushA(const char *message)
{
	(void)message;
	return depth++;
}

__attribute__((visibility("default"), noinline)) int nvtxRangePushEx(const nvtxEventAttributes_t *attr)
{
	(void)attr;
	return depth++;
}

__attribute__((visibility("default"), noinline)) int nvtxRangePop(void)
{
	return depth > 0 ? --depth : -1;
}

__attribute__((visibility("default"), noinline)) nvtxRangeId_t nvtxRangeStartA(const char *message)
{
	(void)message;
	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"), noinline)) nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t *attr)
{
	(void)attr;
	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"), noinline)) void nvtxRangeEnd(nvtxRangeId_t id)
{
	(void)id;
}

__attribute__((visibility("default"), noinline)) void nvtxMarkA(const char *message)
{
	(void)message;
}

__attribute__((visibility("default"), noinline)) void nvtxMarkEx(const nvtxEventAttributes_t *attr)
{
	(void)attr;
}
