/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internals shared by the translation units of the stand-in libcuda.so.1
 * (tests/standin/libcuda_*.c). They are compiled apart so that their entry
 * points begin differently: libcuda_push.c with push %rbp (as libcuda 580
 * does), libcuda_endbr.c with endbr64 then push, libcuda_stepped.c with
 * neither.
 */
#ifndef INFERSCOPE_STANDIN_H
#define INFERSCOPE_STANDIN_H

/* The stand-in is the driver: declare every entry point, the versioned and
 * per-thread-stream ones included, with the real prototypes. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include "cuda_plan.h"

#define STANDIN_HIDDEN __attribute__((visibility("hidden")))

/* Next fake device address (1 MiB apart, never dereferenced). */
STANDIN_HIDDEN CUdeviceptr standin_device_alloc(void);
/* Blocks the calling thread ms milliseconds: a synchronization's wait. */
STANDIN_HIDDEN void standin_block_ms(unsigned int ms);
/* An async copy between the GPU and host memory at host, as the driver
 * makes it: from or to pinned memory (cuMemHostAlloc's, or registered with
 * cuMemHostRegister*) it returns at once; from or to pageable memory it
 * waits for its stream's earlier work (a stall stream's planted
 * milliseconds), then stages its bytes through a pinned buffer at
 * PLAN_STAGE_BYTES_PER_S when there are more than PLAN_STAGE_MIN_BYTES
 * (the driver queues smaller ones with its commands). */
STANDIN_HIDDEN void standin_copy_async(const void *host, size_t bytes, CUstream stream);

#endif
