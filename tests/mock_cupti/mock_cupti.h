/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The test-only control side of the mock libcupti.so.13 (mock_cupti.c): a
 * test workload plants activity records, which the mock hands to the
 * registered buffer callbacks at the next cuptiActivityFlushAll (or from its
 * own delivery thread, as CUPTI's worker does), makes "API calls" that run
 * the subscriber's callbacks as CUPTI's instrumentation of libcuda would,
 * and reads back what the bridge asked of CUPTI, and in which order.
 *
 * The mock's GPU clock (cuptiGetTimestamp) is CLOCK_MONOTONIC with a known
 * offset and drift: gpu = mono * (1 + MOCK_GPU_DRIFT) + MOCK_GPU_OFFSET_NS.
 *
 * What real CUPTI requires of a detach, the mock checks (mock_cupti_faults):
 * cuptiFinalize is called from inside the exit callback of an API call
 * (CUPTI's documented safe place), with no activity kind enabled, with every
 * buffer CUPTI was given handed back, while no buffer completion callback
 * runs, after the subscriber is gone; and after it nothing of the old
 * session is used (no flush, enable, record walk, domain change or
 * unsubscribe until the buffer callbacks are registered again). And that
 * no API call can meet the process's first cuptiSubscribe half done.
 */
#ifndef INFERSCOPE_MOCK_CUPTI_H
#define INFERSCOPE_MOCK_CUPTI_H

#include <stddef.h>
#include <stdint.h>
#include <cupti.h>

#define MOCK_GPU_OFFSET_NS	7000000000ull
#define MOCK_GPU_DRIFT		25e-6

/* mock_cupti_faults() bits: a detach done out of order. */
#define MOCK_FAULT_FINALIZE_OUTSIDE_CALLBACK	0x01
#define MOCK_FAULT_FINALIZE_KINDS_ENABLED	0x02
#define MOCK_FAULT_FINALIZE_BUFFER_HELD		0x04
#define MOCK_FAULT_FINALIZE_DURING_COMPLETION	0x08
#define MOCK_FAULT_FINALIZE_SUBSCRIBED		0x10
#define MOCK_FAULT_USED_AFTER_FINALIZE		0x20
/* ... and an attach that would crash real CUPTI 13.0: an API call while the
 * process's first cuptiSubscribe had raised its flag but not yet published
 * its callback table (mock_cupti.c) */
#define MOCK_FAULT_CALLBACK_TABLE_UNSET		0x40

/* The mock's GPU clock now. */
uint64_t mock_cupti_gpu_now(void);

/* Plants one record (a CUpti_ActivityKernel10, Memcpy6, Memset4,
 * Synchronization2 or API record, by its kind field) for the next flush,
 * if its kind is enabled: 1 planted, 0 not (kind disabled, as CUPTI would
 * not have recorded it), -1 out of room. */
int mock_cupti_plant(const CUpti_Activity *record);
/* The same for a kernel still running: until mock_cupti_complete_pending,
 * a default flush keeps its buffer, and a forced flush hands it back with
 * the kernel's end 0 (incomplete, as CUPTI does). */
int mock_cupti_plant_pending(const CUpti_ActivityKernel10 *record);
/* The pending kernels finish: their end becomes what was planted. */
void mock_cupti_complete_pending(void);
/* Records CUPTI "dropped": reported once by cuptiActivityGetNumDroppedRecords. */
void mock_cupti_plant_dropped(size_t n);
/* A driver API call (cbid) made by the calling thread: the subscriber's
 * callback runs at its entry and its exit if the driver domain is on. */
void mock_cupti_api_call(uint32_t cbid);
/* Delivers completed buffers from a thread of the mock every period_us,
 * as CUPTI's own worker thread does (each delivery takes at least
 * hold_us inside the completion callback's call). */
void mock_cupti_start_delivery(unsigned int period_us, unsigned int hold_us);

/* Kinds enabled now (bit k: CUpti_ActivityKind k). */
uint64_t mock_cupti_enabled(void);
/* Calls of cuptiActivityEnable so far, and of cuptiActivityFlushAll made
 * while no kind was enabled. */
unsigned int mock_cupti_enable_calls(void);
unsigned int mock_cupti_flushes_disabled(void);
/* Records delivered to the buffer callbacks so far. */
size_t mock_cupti_delivered(void);
/* cuptiFinalize calls so far, and the MOCK_FAULT_* bits of what went wrong. */
unsigned int mock_cupti_finalizes(void);
unsigned int mock_cupti_faults(void);

#endif
