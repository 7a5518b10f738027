// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A mock libcupti.so.13 for the tests (no GPU): exactly the CUPTI entry
 * points the bridge (cupti_bridge/bridge.c) uses, plus the control API of
 * mock_cupti.h. Records are kept, as CUPTI keeps them, in a buffer obtained
 * from the bridge's request callback and returned through its completion
 * callback at the next flush (or by the delivery thread). A subscriber's
 * callback runs at the entry and exit of the "API calls" a workload makes
 * (mock_cupti_api_call). cuptiFinalize ends the session as CUPTI does:
 * callbacks, subscriber, enabled kinds and the buffer are forgotten, and
 * what CUPTI requires of the caller is checked (mock_cupti.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mock_cupti.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static uint8_t *buffer;
static size_t buffer_size, buffer_used;
static size_t dropped_pending, delivered;
static unsigned int pending;		/* kernels in buffer still running */
static _Atomic uint64_t enabled;
static atomic_uint enable_calls, flushes_disabled, finalizes, faults;
static atomic_int completing;		/* completion callbacks running */
static atomic_bool finalized;		/* since the last cuptiFinalize, nothing registered again */
static struct {
	CUpti_CallbackFunc cb;
	void *userdata;
	bool active;
	uint32_t domains;		/* bit d: CUpti_CallbackDomain d */
} sub;
/*
 * CUPTI's table of the callbacks its subscribers enabled, as libcupti.so.13
 * of CUDA 13.0 keeps it (read from its code after a crash on the H100,
 * docs/overhead.md): the first cuptiSubscribe of the process raises a "some
 * subscriber" flag, then allocates the table and publishes it; later
 * subscribes find it (cuptiUnsubscribe frees its contents, and the pointers
 * stay). Its callback dispatch, which libcuda enters in every API call
 * once an API activity kind was enabled (whatever was disabled since),
 * reads the table behind the flag: an API call between the two reads
 * through NULL and the process dies. The mock widens that moment to
 * FIRST_SUBSCRIBE_WINDOW_US and counts what would have crashed
 * (MOCK_FAULT_CALLBACK_TABLE_UNSET).
 */
#define FIRST_SUBSCRIBE_WINDOW_US 3000
static atomic_bool dispatching;		/* an API activity kind was enabled once */
static atomic_bool table_flag;
static uint32_t table_mem[64];
static _Atomic(uint32_t *) table;
static CUpti_ActivityThreadIdType tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static _Thread_local bool in_exit_callback;
static unsigned int delivery_period_us, delivery_hold_us;

static void fault(unsigned int bit)
{
	atomic_fetch_or(&faults, bit);
}

/* An entry point of the session used after cuptiFinalize, before the
 * buffer callbacks were registered again. */
static void session_call(void)
{
	if (atomic_load(&finalized))
		fault(MOCK_FAULT_USED_AFTER_FINALIZE);
}

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

/* The pending kernels' true ends, while they run: kept beside the buffer
 * (their records in it say end 0, as CUPTI's incomplete ones do). */
#define MAX_PENDING 64
static struct {
	size_t off;
	uint64_t end;
} pending_end[MAX_PENDING];

static int plant(const CUpti_Activity *r, bool running)
{
	size_t size = record_size(r->kind), max_records;
	int ret = 0;

	if (!size)
		return 0;
	/* under the lock: a kind disabled is disabled for every later plant */
	pthread_mutex_lock(&lock);
	if (!(atomic_load(&enabled) & (1ull << r->kind))) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	if (!buffer && requested) {
		requested(&buffer, &buffer_size, &max_records);
		buffer_used = 0;
	}
	if (!buffer || buffer_used + size > buffer_size || (running && pending == MAX_PENDING)) {
		ret = -1;
	} else {
		memcpy(buffer + buffer_used, r, size);
		if (running) {
			CUpti_ActivityKernel10 *k = (void *)(buffer + buffer_used);

			pending_end[pending].off = buffer_used;
			pending_end[pending].end = k->end;
			pending++;
			k->end = 0;
		}
		buffer_used += size;
		ret = 1;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT int mock_cupti_plant(const CUpti_Activity *r)
{
	return plant(r, false);
}

EXPORT int mock_cupti_plant_pending(const CUpti_ActivityKernel10 *k)
{
	return plant((const CUpti_Activity *)k, true);
}

EXPORT void mock_cupti_complete_pending(void)
{
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; buffer && i < pending; i++)
		((CUpti_ActivityKernel10 *)(buffer + pending_end[i].off))->end = pending_end[i].end;
	pending = 0;
	pthread_mutex_unlock(&lock);
}

EXPORT void mock_cupti_plant_dropped(size_t n)
{
	pthread_mutex_lock(&lock);
	dropped_pending += n;
	pthread_mutex_unlock(&lock);
}

EXPORT void mock_cupti_api_call(uint32_t cbid)
{
	CUpti_CallbackData data;
	CUpti_CallbackFunc cb = NULL;
	void *ud = NULL;

	memset(&data, 0, sizeof(data));
	if (atomic_load(&dispatching) && atomic_load(&table_flag) && !atomic_load(&table))
		fault(MOCK_FAULT_CALLBACK_TABLE_UNSET);
	pthread_mutex_lock(&lock);
	if (sub.active && (sub.domains & (1u << CUPTI_CB_DOMAIN_DRIVER_API))) {
		cb = sub.cb;
		ud = sub.userdata;
	}
	pthread_mutex_unlock(&lock);
	if (cb) {
		data.callbackSite = CUPTI_API_ENTER;
		cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
	}
	pthread_mutex_lock(&lock);
	cb = sub.active && (sub.domains & (1u << CUPTI_CB_DOMAIN_DRIVER_API)) ? sub.cb : NULL;
	ud = sub.userdata;
	pthread_mutex_unlock(&lock);
	if (cb) {
		data.callbackSite = CUPTI_API_EXIT;
		in_exit_callback = true;
		cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
		in_exit_callback = false;
	}
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

EXPORT unsigned int mock_cupti_finalizes(void)
{
	return atomic_load(&finalizes);
}

EXPORT unsigned int mock_cupti_faults(void)
{
	return atomic_load(&faults);
}

EXPORT size_t mock_cupti_delivered(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = delivered;
	pthread_mutex_unlock(&lock);
	return n;
}

/* Takes the buffer for delivery: a default flush only when no record in
 * it is still running; a forced one always (running kernels then say end
 * 0). *n: its records. NULL when there is none to deliver. */
static uint8_t *take_buffer(bool forced, size_t *used, size_t *size, size_t *n,
			    CUpti_BuffersCallbackCompleteFunc *to)
{
	uint8_t *b = NULL;
	size_t off;

	pthread_mutex_lock(&lock);
	if (buffer && (forced || !pending) && completed) {
		*to = completed;
		b = buffer;
		*used = buffer_used;
		*size = buffer_size;
		buffer = NULL;
		buffer_used = 0;
		pending = 0;
		atomic_fetch_add(&completing, 1);
	}
	pthread_mutex_unlock(&lock);
	*n = 0;
	for (off = 0; b && off < *used; off += record_size(((CUpti_Activity *)(b + off))->kind))
		(*n)++;
	return b;
}

static void deliver(CUpti_BuffersCallbackCompleteFunc to, uint8_t *b, size_t used, size_t size, size_t n,
		    unsigned int hold_us)
{
	if (hold_us)
		usleep(hold_us);
	to(NULL, 0, b, size, used);
	pthread_mutex_lock(&lock);
	delivered += n;
	pthread_mutex_unlock(&lock);
	atomic_fetch_sub(&completing, 1);
}

static void *delivery(void *arg)
{
	(void)arg;
	for (;;) {
		CUpti_BuffersCallbackCompleteFunc to;
		size_t used, size, n;
		uint8_t *b;

		usleep(delivery_period_us);
		b = take_buffer(false, &used, &size, &n, &to);
		if (b)
			deliver(to, b, used, size, n, delivery_hold_us);
	}
	return NULL;
}

EXPORT void mock_cupti_start_delivery(unsigned int period_us, unsigned int hold_us)
{
	pthread_t t;

	delivery_period_us = period_us;
	delivery_hold_us = hold_us;
	if (!pthread_create(&t, NULL, delivery, NULL))
		pthread_detach(t);
}

/* --- the CUPTI entry points ----------------------------------------------------- */

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc comp)
{
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	requested = req;
	completed = comp;
	pthread_mutex_unlock(&lock);
	atomic_store(&finalized, false);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	session_call();
	if (!record_size(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	atomic_fetch_add(&enable_calls, 1);
	if (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME)
		atomic_store(&dispatching, true);
	pthread_mutex_lock(&lock);
	atomic_fetch_or(&enabled, 1ull << kind);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	session_call();
	pthread_mutex_lock(&lock);
	atomic_fetch_and(&enabled, ~(1ull << kind));
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/* Hands the buffer of planted records to the completion callback, from the
 * calling thread, as CUPTI does for a flush. */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	CUpti_BuffersCallbackCompleteFunc to;
	size_t used, size, n;
	uint8_t *b;

	session_call();
	if (!atomic_load(&enabled))
		atomic_fetch_add(&flushes_disabled, 1);
	b = take_buffer(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, &used, &size, &n, &to);
	if (b)
		deliver(to, b, used, size, n, 0);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **record)
{
	size_t off = 0;

	session_call();
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
	session_call();
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

EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	*type = tid_type;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	if (type > CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	tid_type = type;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *handle, CUpti_CallbackFunc cb, void *userdata)
{
	CUptiResult r = CUPTI_SUCCESS;

	atomic_store(&table_flag, true);
	if (!atomic_load(&table)) {
		usleep(FIRST_SUBSCRIBE_WINDOW_US);
		atomic_store(&table, table_mem);
	}
	pthread_mutex_lock(&lock);
	if (sub.active) {
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		sub.cb = cb;
		sub.userdata = userdata;
		sub.domains = 0;
		sub.active = true;
		*handle = (CUpti_SubscriberHandle)&sub;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle handle)
{
	CUptiResult r = CUPTI_SUCCESS;

	session_call();
	pthread_mutex_lock(&lock);
	if (!sub.active || handle != (CUpti_SubscriberHandle)&sub)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	sub.active = false;
	sub.domains = 0;
	pthread_mutex_unlock(&lock);
	atomic_store(&table_flag, false);
	return r;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain)
{
	CUptiResult r = CUPTI_SUCCESS;

	session_call();
	pthread_mutex_lock(&lock);
	if (!sub.active || handle != (CUpti_SubscriberHandle)&sub || domain >= 32)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	else if (enable)
		sub.domains |= 1u << domain;
	else
		sub.domains &= ~(1u << domain);
	pthread_mutex_unlock(&lock);
	return r;
}

/* Detaches: everything of the session is forgotten (a buffer CUPTI still
 * held is lost to the bridge, as the real one's would be). */
EXPORT CUptiResult cuptiFinalize(void)
{
	atomic_fetch_add(&finalizes, 1);
	if (!in_exit_callback)
		fault(MOCK_FAULT_FINALIZE_OUTSIDE_CALLBACK);
	if (atomic_load(&enabled))
		fault(MOCK_FAULT_FINALIZE_KINDS_ENABLED);
	if (atomic_load(&completing))
		fault(MOCK_FAULT_FINALIZE_DURING_COMPLETION);
	pthread_mutex_lock(&lock);
	if (buffer)
		fault(MOCK_FAULT_FINALIZE_BUFFER_HELD);
	if (sub.active)
		fault(MOCK_FAULT_FINALIZE_SUBSCRIBED);
	buffer = NULL;
	buffer_used = 0;
	pending = 0;
	requested = NULL;
	completed = NULL;
	sub.active = false;
	sub.domains = 0;
	pthread_mutex_unlock(&lock);
	atomic_store(&enabled, 0);
	atomic_store(&finalized, true);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "mock CUPTI error";
	return CUPTI_SUCCESS;
}
