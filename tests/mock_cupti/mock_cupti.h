/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The test-only control side of the mock libcupti.so.13 (mock_cupti.c): a
 * test workload plants activity records, which the mock hands to the
 * registered buffer callbacks at the next cuptiActivityFlushAll, exactly
 * as CUPTI would, and reads back what the bridge asked of CUPTI.
 *
 * The mock's GPU clock (cuptiGetTimestamp) is CLOCK_MONOTONIC with a known
 * offset and drift: gpu = mono * (1 + MOCK_GPU_DRIFT) + MOCK_GPU_OFFSET_NS.
 */
#ifndef INFERSCOPE_MOCK_CUPTI_H
#define INFERSCOPE_MOCK_CUPTI_H

#include <stddef.h>
#include <stdint.h>
#include <cupti.h>

#define MOCK_GPU_OFFSET_NS	7000000000ull
#define MOCK_GPU_DRIFT		25e-6

/* The mock's GPU clock now. */
uint64_t mock_cupti_gpu_now(void);

/* Plants one record (a CUpti_ActivityKernel10, Memcpy6, Memset4,
 * Synchronization2 or API record, by its kind field) for the next flush,
 * if its kind is enabled: 1 planted, 0 not (kind disabled, as CUPTI would
 * not have recorded it), -1 out of room. */
int mock_cupti_plant(const CUpti_Activity *record);
/* Records CUPTI "dropped": reported once by cuptiActivityGetNumDroppedRecords. */
void mock_cupti_plant_dropped(size_t n);

/* Kinds enabled now (bit k: CUpti_ActivityKind k). */
uint64_t mock_cupti_enabled(void);
/* Calls of cuptiActivityEnable so far, and of cuptiActivityFlushAll with
 * CUPTI_ACTIVITY_FLAG_FLUSH_FORCED made while no kind was enabled. */
unsigned int mock_cupti_enable_calls(void);
unsigned int mock_cupti_flushes_disabled(void);
/* Records delivered to the buffer callbacks so far. */
size_t mock_cupti_delivered(void);

#endif
