// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A mock libcupti.so.13 for the tests (no GPU): exactly the CUPTI entry
 * points the bridge (cupti_bridge/bridge.c) uses, plus the control API of
 * mock_cupti.h. Records are kept, as CUPTI keeps them, in a buffer obtained
 * from the bridge's request callback and returned through its completion
 * callback at the next flush.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "mock_cupti.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static uint8_t *buffer;
static size_t buffer_size, buffer_used;
static size_t dropped_pending, delivered;
static _Atomic uint64_t enabled;
static atomic_uint enable_calls, flushes_disabled;

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:	return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:	return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:		return sizeof(CUpti_ActivityAPI);
	default:					return 0;
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT uint64_t mock_cupti_gpu_now(void)
{
	double m = (double)mono_ns();

	return (uint64_t)(m * (1.0 + MOCK_GPU_DRIFT)) + MOCK_GPU_OFFSET_NS;
}

EXPORT int mock_cupti_plant(const CUpti_Activity *r)
{
	size_t size = record_size(r->kind), max_records;
	int ret = 0;

	if (!size || !(atomic_load(&enabled) & (1ull << r->kind)))
		return 0;
	pthread_mutex_lock(&lock);
	if (!buffer && requested) {
		requested(&buffer, &buffer_size, &max_records);
		buffer_used = 0;
	}
	if (!buffer || buffer_used + size > buffer_size) {
		ret = -1;
	} else {
		memcpy(buffer + buffer_used, r, size);
		buffer_used += size;
		ret = 1;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT void mock_cupti_plant_dropped(size_t n)
{
	pthread_mutex_lock(&lock);
	dropped_pending += n;
	pthread_mutex_unlock(&lock);
}

EXPORT uint64_t mock_cupti_enabled(void)
{
	return atomic_load(&enabled);
}

EXPORT unsigned int mock_cupti_enable_calls(void)
{
	return atomic_load(&enable_calls);
}

EXPORT unsigned int mock_cupti_flushes_disabled(void)
{
	return atomic_load(&flushes_disabled);
}

EXPORT size_t mock_cupti_delivered(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = delivered;
	pthread_mutex_unlock(&lock);
	return n;
}

/* --- the CUPTI entry points ----------------------------------------------------- */

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc comp)
{
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	requested = req;
	completed = comp;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (!record_size(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	atomic_fetch_add(&enable_calls, 1);
	atomic_fetch_or(&enabled, 1ull << kind);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	atomic_fetch_and(&enabled, ~(1ull << kind));
	return CUPTI_SUCCESS;
}

/* Hands the buffer of planted records to the completion callback (from the
 * calling thread, as CUPTI does for a flush). */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	uint8_t *b;
	size_t used, size, n = 0, off;

	if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && !atomic_load(&enabled))
		atomic_fetch_add(&flushes_disabled, 1);
	pthread_mutex_lock(&lock);
	b = buffer;
	used = buffer_used;
	size = buffer_size;
	buffer = NULL;
	buffer_used = 0;
	for (off = 0; b && off < used; off += record_size(((CUpti_Activity *)(b + off))->kind))
		n++;
	pthread_mutex_unlock(&lock);
	if (b && completed)
		completed(NULL, 0, b, size, used);
	pthread_mutex_lock(&lock);
	delivered += n;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **record)
{
	size_t off = 0;

	if (*record)
		off = (size_t)((uint8_t *)*record - buf) + record_size((*record)->kind);
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(buf + off);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx, (void)stream;
	pthread_mutex_lock(&lock);
	*dropped = dropped_pending;
	dropped_pending = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	*ts = mock_cupti_gpu_now();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	return type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "mock CUPTI error";
	return CUPTI_SUCCESS;
}
