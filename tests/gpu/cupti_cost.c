// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What CUPTI costs a launching thread, without the tracer: a shared library
 * driven by tests/gpu/cupti_cost.py (ctypes), built on the GPU machine with
 * gcc (cuda.h and cupti.h from the toolkit; libcuda and libcupti are
 * dlopened).
 *
 *   cc_init()                 load libcupti, register buffer callbacks
 *   cc_enable(mask)           enable the activity kinds of mask: ns taken
 *   cc_disable(mask)          disable them and flush: ns taken
 *   cc_kernel_init()          an empty kernel (PTX) in the primary context
 *   cc_launch(n, batch)       n launches of it, synchronized every batch:
 *                             seconds spent
 *   cc_toggler_start(on, off, mask) / cc_toggler_stop(stats)
 *                             a thread that enables mask for `on` ms and
 *                             disables it for `off` ms, over and over;
 *                             stats: toggles, enable ns median/max,
 *                             disable ns median/max, records
 *
 * Mask bits: 1 concurrent kernel, 2 memcpy, 4 memset, 8 synchronization,
 * 16 driver API, 32 runtime API (the bridge enables all six).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME,
};
#define NKINDS 6

static CUptiResult (*p_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*p_enable)(CUpti_ActivityKind), (*p_disable)(CUpti_ActivityKind);
static CUptiResult (*p_flush)(uint32_t);
static CUptiResult (*p_next)(uint8_t *, size_t, CUpti_Activity **);
static CUptiResult (*p_finalize)(void);

static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_devget)(CUdevice *, int);
static CUresult (*p_retain)(CUcontext *, CUdevice);
static CUresult (*p_setcur)(CUcontext);
static CUresult (*p_modload)(CUmodule *, const void *);
static CUresult (*p_getfn)(CUfunction *, CUmodule, const char *);
static CUresult (*p_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			    CUstream, void **, void **);
static CUresult (*p_sync)(void);

static atomic_ullong records;
static CUfunction empty_fn;
static CUcontext ctx;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 4u << 20;
	*buf = aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI completed(CUcontext c, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)c;
	(void)stream;
	(void)size;
	while (p_next(buf, valid, &r) == CUPTI_SUCCESS)
		atomic_fetch_add(&records, 1);
	free(buf);
}

#define SYM(h, p, name)                                                   \
	do {                                                              \
		*(void **)&(p) = dlsym(h, name);                          \
		if (!(p)) {                                               \
			fprintf(stderr, "cupti_cost: no %s\n", name);     \
			return -1;                                        \
		}                                                         \
	} while (0)

EXPORT int cc_init(void)
{
	const char *lib = getenv("INFERSCOPE_CUPTI_LIB");
	void *h = dlopen(lib ? lib : "libcupti.so.13", RTLD_NOW | RTLD_GLOBAL);

	if (!h) {
		fprintf(stderr, "cupti_cost: %s\n", dlerror());
		return -1;
	}
	SYM(h, p_register, "cuptiActivityRegisterCallbacks");
	SYM(h, p_enable, "cuptiActivityEnable");
	SYM(h, p_disable, "cuptiActivityDisable");
	SYM(h, p_flush, "cuptiActivityFlushAll");
	SYM(h, p_next, "cuptiActivityGetNextRecord");
	SYM(h, p_finalize, "cuptiFinalize");
	return p_register(requested, completed) == CUPTI_SUCCESS ? 0 : -1;
}

/* Detaches CUPTI from the process (it returns once the next CUDA call has
 * been made: call it from a thread of its own while another launches). */
EXPORT long long cc_finalize(void)
{
	uint64_t t0 = now_ns();

	if (p_finalize() != CUPTI_SUCCESS)
		return -1;
	return (long long)(now_ns() - t0);
}

/* After cc_finalize: the buffer callbacks again. */
EXPORT long long cc_reinit(void)
{
	uint64_t t0 = now_ns();

	if (p_register(requested, completed) != CUPTI_SUCCESS)
		return -1;
	return (long long)(now_ns() - t0);
}

EXPORT long long cc_enable(unsigned mask)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < NKINDS; i++)
		if (mask & (1u << i))
			p_enable(kinds[i]);
	return (long long)(now_ns() - t0);
}

EXPORT long long cc_disable(unsigned mask)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < NKINDS; i++)
		if (mask & (1u << i))
			p_disable(kinds[i]);
	p_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return (long long)(now_ns() - t0);
}

EXPORT unsigned long long cc_records(void)
{
	return atomic_load(&records);
}

static const char ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n"
			  ".visible .entry empty_kernel()\n{\n\tret;\n}\n";

EXPORT int cc_kernel_init(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	CUmodule mod;
	CUdevice dev;

	if (!h)
		return -1;
	SYM(h, p_cuInit, "cuInit");
	SYM(h, p_devget, "cuDeviceGet");
	SYM(h, p_retain, "cuDevicePrimaryCtxRetain");
	SYM(h, p_setcur, "cuCtxSetCurrent");
	SYM(h, p_modload, "cuModuleLoadData");
	SYM(h, p_getfn, "cuModuleGetFunction");
	SYM(h, p_launch, "cuLaunchKernel");
	SYM(h, p_sync, "cuCtxSynchronize");
	if (p_cuInit(0) || p_devget(&dev, 0) || p_retain(&ctx, dev) || p_setcur(ctx) || p_modload(&mod, ptx) ||
	    p_getfn(&empty_fn, mod, "empty_kernel"))
		return -1;
	return 0;
}

EXPORT double cc_launch(int n, int batch)
{
	uint64_t t0;

	p_setcur(ctx);
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		p_launch(empty_fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		if ((i + 1) % batch == 0)
			p_sync();
	}
	p_sync();
	return (double)(now_ns() - t0) / 1e9;
}

#define MAX_TOGGLES 4096
static struct {
	pthread_t th;
	atomic_bool stop;
	int on_ms, off_ms;
	unsigned mask;
	long long en[MAX_TOGGLES], dis[MAX_TOGGLES];
	int n;
} tg;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *toggler(void *arg)
{
	(void)arg;
	while (!atomic_load(&tg.stop) && tg.n < MAX_TOGGLES) {
		tg.en[tg.n] = cc_enable(tg.mask);
		sleep_ms(tg.on_ms);
		tg.dis[tg.n] = cc_disable(tg.mask);
		tg.n++;
		sleep_ms(tg.off_ms);
	}
	return NULL;
}

EXPORT int cc_toggler_start(int on_ms, int off_ms, unsigned mask)
{
	memset(&tg, 0, sizeof(tg));
	tg.on_ms = on_ms;
	tg.off_ms = off_ms;
	tg.mask = mask;
	return pthread_create(&tg.th, NULL, toggler, NULL);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

EXPORT int cc_toggler_stop(double *stats)
{
	atomic_store(&tg.stop, true);
	pthread_join(tg.th, NULL);
	memset(stats, 0, 6 * sizeof(double));
	stats[0] = tg.n;
	if (tg.n) {
		qsort(tg.en, (size_t)tg.n, sizeof(long long), cmp_ll);
		qsort(tg.dis, (size_t)tg.n, sizeof(long long), cmp_ll);
		stats[1] = (double)tg.en[tg.n / 2];
		stats[2] = (double)tg.en[tg.n - 1];
		stats[3] = (double)tg.dis[tg.n / 2];
		stats[4] = (double)tg.dis[tg.n - 1];
	}
	stats[5] = (double)cc_records();
	return 0;
}
