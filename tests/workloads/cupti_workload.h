/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What tests/workloads/cupti_workload.c plants, shared with its tests. */
#ifndef INFERSCOPE_CUPTI_WORKLOAD_H
#define INFERSCOPE_CUPTI_WORKLOAD_H

#define WL_KERNEL_A		"_Z10spin_shortPf"	/* spin_short(float*) */
#define WL_KERNEL_B		"_Z9spin_longPfi"	/* spin_long(float*, int) */
#define WL_DUR_A_NS		100000ull
#define WL_DUR_B_NS		300000ull
#define WL_STREAM		7u
#define WL_COPY_UNIT		4096ull
#define WL_COPY_NS		50000ull
#define WL_CORR_KERNEL		1000u
#define WL_CORR_COPY		50000u
#define WL_CBID_LAUNCH		307u	/* CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel */
#define WL_CBID_RUNTIME_LAUNCH	211u	/* CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 */
#define WL_DORMANT_MS		300
#define WL_KERNELS_MISSING	20
#define WL_TAIL_KERNELS		10	/* attach: launched after "done"'s flush, before "done" */
/* windows: a launch every WL_WIN_EVERY_US of a kernel of WL_WIN_KERNEL_NS,
 * finished WL_WIN_FINISH_EVERY launches later; buffers also delivered by
 * the mock's thread every WL_WIN_DELIVERY_US, WL_WIN_HOLD_US each */
#define WL_WIN_EVERY_US		100
#define WL_WIN_KERNEL_NS	40000ull
#define WL_WIN_FINISH_EVERY	8
#define WL_WIN_DELIVERY_US	3000
#define WL_WIN_HOLD_US		500
/* The kinds the bridge enables: kernel, memcpy, memset, sync, driver, runtime. */
#define WL_KINDS_MASK		((1ull << 10) | (1ull << 1) | (1ull << 2) | (1ull << 38) | (1ull << 4) | (1ull << 5))

#endif
