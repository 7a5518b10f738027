// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libinferscope_cupti.so: collects CUPTI activity (kernels, copies, memsets,
 * synchronizations, driver and runtime API records) while an inferscope-bpf
 * tracer is attached, and hands it to the tracer's BPF program in batches.
 *
 * Loading: through CUDA_INJECTION64_PATH (libcuda calls InitializeInjection
 * during cuInit) or with dlopen into a process that already runs CUDA (the
 * constructor). Either way libcupti.so.13 is found at run time (dlopen), and
 * when it cannot be, or CUPTI refuses, one warning goes to stderr and the
 * process runs on untouched.
 *
 * Dormant until traced: nothing is enabled in CUPTI until a tracer attaches
 * to the USDT probe inferscope:gpu_batch. The kernel then raises the probe's
 * semaphore (uprobe reference counter), which a watcher thread reads every
 * WATCH_MS: it enables activity collection, and while the tracer stays it
 * flushes CUPTI and sends a clock reference pair every second. When the
 * semaphore drops back to 0 (the tracer left) it flushes and disables
 * everything again. A second probe, inferscope:gpu_flush, is a request: its
 * semaphore raised means "flush now", answered with a FLUSHED status record
 * once every completed record has been handed over.
 *
 * Hand-off: CUPTI's records are converted into the fixed-width structs of
 * format/events.h in a staging batch; a full batch, and whatever is staged at
 * the end of each CUPTI buffer, is one probe hit (gpu_batch(ptr, bytes,
 * count)), which BPF copies into its ring buffer.
 */
#define _SDT_HAS_SEMAPHORES 1
/* Probe arguments in registers: libbpf decodes no RIP-relative operands. */
#define STAP_SDT_ARG_CONSTRAINT r
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>
#include <cupti.h>
#include "events.h"
#include "clock.h"
#include "htab.h"

#define EXPORT __attribute__((visibility("default")))

/* Raised by the kernel while a tracer's uprobe is attached to the probe. */
__extension__ volatile unsigned short inferscope_gpu_batch_semaphore __attribute__((section(".probes")));
__extension__ volatile unsigned short inferscope_gpu_flush_semaphore __attribute__((section(".probes")));

#define WATCH_MS	25			/* semaphore polling period: enable within 100 ms */
#define TICK_NS		1000000000ull		/* clock pair + CUPTI flush while traced */
/* One CUPTI activity buffer. CUPTI hands over a buffer when it is full (or
 * at a forced flush), so what a process that ends without a flush
 * (os._exit, a kill) never delivers is the one it was filling: small
 * buffers keep that tail short (512 KiB: about 0.2 s of the GPU-bound
 * loop of tests/gpu/planted.py, whose records came at about 2.7 MB/s; 4 MiB
 * lost its last 2 s), and the analysis stops observing where the records
 * stop. */
#define BUFFER_BYTES	(512u << 10)
#define CLOCK_TRIES	8			/* sandwiches per clock pair: the narrowest wins */

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_RUNTIME,
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* The CUPTI entry points the bridge uses (tests/mock_cupti implements
 * exactly these). */
static struct {
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*timestamp)(uint64_t *);
	CUptiResult (*thread_id_type)(CUpti_ActivityThreadIdType);
	CUptiResult (*result_string)(CUptiResult, const char **);
} cupti;

struct name_slot {
	char *name;
	uint32_t id;
	uint32_t sent_gen;	/* attach generation in which its record was sent */
};

static struct {
	pthread_mutex_t lock;		/* everything below, and CUPTI state changes */
	bool init_done;			/* init ran (whatever its outcome) */
	int init_error;			/* 0, a CUptiResult, or -1: no libcupti */
	bool enabled;
	uint32_t gen;			/* attach generation: names are resent after each attach */
	uint64_t cupti_dropped, reported_dropped, handed_over;
	uint64_t flushes;		/* flushes answered */
	struct htab names;		/* struct name_slot, by name */
	uint32_t name_count;
	unsigned char batch[ISR_GPU_BATCH_MAX_BYTES] __attribute__((aligned(8)));
	size_t batch_len;
	uint32_t batch_count;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_t watcher;
static atomic_bool watcher_started, stopping, injected;

static bool traced(void)
{
	return inferscope_gpu_batch_semaphore > 0;
}

static const char *cupti_error(CUptiResult r)
{
	const char *s = NULL;

	if (cupti.result_string && cupti.result_string(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

/* --- the batch (st.lock held) ------------------------------------------------ */

static void batch_handoff(void)
{
	if (!st.batch_count)
		return;
	/* With no tracer (it left before a flush finished) nobody receives
	 * the records: they belong to no recording. */
	if (traced()) {
		STAP_PROBE3(inferscope, gpu_batch, st.batch, (uint64_t)st.batch_len, st.batch_count);
		st.handed_over += st.batch_count;
	}
	st.batch_len = 0;
	st.batch_count = 0;
}

/* Room for one record of size bytes: its header's type and size set, the
 * rest zeroed. */
static void *batch_add(uint16_t type, uint16_t size)
{
	struct isr_ev_hdr *h;

	if (st.batch_len + size > sizeof(st.batch) || st.batch_count == ISR_GPU_BATCH_MAX_RECORDS)
		batch_handoff();
	h = (struct isr_ev_hdr *)(st.batch + st.batch_len);
	memset(h, 0, size);
	h->type = type;
	h->size = size;
	st.batch_len += size;
	st.batch_count++;
	return h;
}

static void emit_status(uint32_t state, int32_t error)
{
	struct isr_ev_gpu_status *e = batch_add(ISR_EV_GPU_STATUS, sizeof(*e));

	e->cupti_dropped = st.cupti_dropped;
	e->handed_over = st.handed_over;
	e->lost_new = st.cupti_dropped - st.reported_dropped;
	st.reported_dropped = st.cupti_dropped;
	e->state = state;
	e->cupti_error = error;
}

/* The narrowest of CLOCK_TRIES sandwiches MONOTONIC, CUPTI, MONOTONIC. */
static void emit_clock_pair(void)
{
	struct isr_ev_gpu_clock best = { .mono_before_ns = 0, .mono_after_ns = UINT64_MAX };
	struct isr_ev_gpu_clock *e;
	int i;

	for (i = 0; i < CLOCK_TRIES; i++) {
		uint64_t before = clock__mono_ns(), gpu = 0, after;

		if (cupti.timestamp(&gpu) != CUPTI_SUCCESS)
			return;
		after = clock__mono_ns();
		if (after - before < best.mono_after_ns - best.mono_before_ns) {
			best.mono_before_ns = before;
			best.mono_after_ns = after;
			best.gpu_ns = gpu;
		}
	}
	e = batch_add(ISR_EV_GPU_CLOCK, sizeof(*e));
	e->gpu_ns = best.gpu_ns;
	e->mono_before_ns = best.mono_before_ns;
	e->mono_after_ns = best.mono_after_ns;
}

/* --- kernel names ------------------------------------------------------------ */

static __u64 name_slot__hash(const void *e)
{
	return hash__str(((const struct name_slot *)e)->name);
}

static bool name_slot__equal(const void *a, const void *b)
{
	return strcmp(((const struct name_slot *)a)->name, ((const struct name_slot *)b)->name) == 0;
}

/* The id of name, its isr_ev_gpu_name record staged first when this
 * attach has not sent it yet; 0 when it cannot be remembered (out of
 * memory: the kernel is reported without a name). */
static uint32_t name_id(const char *name)
{
	struct name_slot key = { .name = (char *)name }, *s;
	struct isr_ev_gpu_name *e;
	bool added;

	if (!name)
		return 0;
	if (!st.names.entry_size)
		htab__init(&st.names, sizeof(struct name_slot), name_slot__hash, name_slot__equal);
	s = htab__insert(&st.names, &key, &added);
	if (!s)
		return 0;
	if (added) {
		char *copy = strdup(name);

		if (!copy) {
			htab__remove(&st.names, &key, NULL);
			return 0;
		}
		s->name = copy;
		s->id = ++st.name_count;
	}
	if (s->sent_gen != st.gen) {
		e = batch_add(ISR_EV_GPU_NAME, sizeof(*e));
		e->id = s->id;
		snprintf(e->name, sizeof(e->name), "%s", name);
		s->sent_gen = st.gen;
	}
	return s->id;
}

/* --- CUPTI records -> events ------------------------------------------------- */

static void convert(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		/* Later record versions only append fields. */
		const CUpti_ActivityKernel10 *k = (const void *)r;
		uint32_t id = name_id(k->name);
		struct isr_ev_gpu_kernel *e = batch_add(ISR_EV_GPU_KERNEL, sizeof(*e));

		e->start_ns = k->start;
		e->end_ns = k->end;
		e->correlation_id = k->correlationId;
		e->name_id = id;
		e->device_id = k->deviceId;
		e->context_id = k->contextId;
		e->stream_id = k->streamId;
		e->registers = k->registersPerThread;
		e->grid[0] = k->gridX;
		e->grid[1] = k->gridY;
		e->grid[2] = k->gridZ;
		e->block[0] = k->blockX;
		e->block[1] = k->blockY;
		e->block[2] = k->blockZ;
		e->static_shared = (uint32_t)k->staticSharedMemory;
		e->dynamic_shared = (uint32_t)k->dynamicSharedMemory;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;
		struct isr_ev_gpu_memcpy *e = batch_add(ISR_EV_GPU_MEMCPY, sizeof(*e));

		e->start_ns = m->start;
		e->end_ns = m->end;
		e->bytes = m->bytes;
		e->correlation_id = m->correlationId;
		e->device_id = m->deviceId;
		e->context_id = m->contextId;
		e->stream_id = m->streamId;
		e->copy_kind = m->copyKind;
		e->src_kind = m->srcKind;
		e->dst_kind = m->dstKind;
		e->flags = m->flags;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;
		struct isr_ev_gpu_memset *e = batch_add(ISR_EV_GPU_MEMSET, sizeof(*e));

		e->start_ns = m->start;
		e->end_ns = m->end;
		e->bytes = m->bytes;
		e->correlation_id = m->correlationId;
		e->device_id = m->deviceId;
		e->context_id = m->contextId;
		e->stream_id = m->streamId;
		e->value = m->value;
		e->memory_kind = m->memoryKind;
		e->flags = m->flags;
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)r;
		struct isr_ev_gpu_sync *e = batch_add(ISR_EV_GPU_SYNC, sizeof(*e));

		e->start_ns = s->start;
		e->end_ns = s->end;
		e->correlation_id = s->correlationId;
		e->context_id = s->contextId;
		e->stream_id = s->streamId;
		e->sync_type = s->type;
		e->cuda_event_id = s->cudaEventId;
		break;
	}
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME: {
		const CUpti_ActivityAPI *a = (const void *)r;
		struct isr_ev_gpu_api *e = batch_add(ISR_EV_GPU_API, sizeof(*e));

		e->start_ns = a->start;
		e->end_ns = a->end;
		e->correlation_id = a->correlationId;
		e->cbid = a->cbid;
		e->thread_id = a->threadId;
		e->api = r->kind == CUPTI_ACTIVITY_KIND_DRIVER ? ISR_GPU_API_DRIVER : ISR_GPU_API_RUNTIME;
		e->return_value = a->returnValue;
		break;
	}
	default:
		break;	/* a kind this bridge does not enable */
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* NULL: CUPTI drops the records and counts them (cupti_dropped). */
	*buffer = aligned_alloc(8, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&st.lock);
	if (traced())
		while (cupti.next_record(buffer, valid, &r) == CUPTI_SUCCESS)
			convert(r);
	if (cupti.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
		st.cupti_dropped += dropped;
		if (traced())
			emit_status(ISR_GPU_ENABLED, 0);
		else
			st.reported_dropped = st.cupti_dropped;	/* lost to no recording */
	}
	batch_handoff();
	pthread_mutex_unlock(&st.lock);
	free(buffer);
}

/* --- loading libcupti ---------------------------------------------------------- */

static void *try_open(const char *path)
{
	return path && *path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
}

struct lib_search {
	void *handle;
};

/* Next to the libcudart / libcuda the process has mapped (the pip layout
 * keeps libcupti.so.13 beside libcudart.so.13 in nvidia/cu13/lib). */
static int search_beside(struct dl_phdr_info *info, size_t size, void *arg)
{
	static const char *const rel[] = { "libcupti.so.13", "../extras/CUPTI/lib64/libcupti.so.13" };
	struct lib_search *s = arg;
	const char *base, *slash = strrchr(info->dlpi_name, '/');
	char path[4096];
	size_t i;

	(void)size;
	if (s->handle || !slash)
		return 0;
	base = slash + 1;
	if (strncmp(base, "libcudart.so", 12) && strncmp(base, "libcuda.so", 10))
		return 0;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]) && !s->handle; i++) {
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info->dlpi_name), info->dlpi_name, rel[i]);
		s->handle = try_open(path);
	}
	return s->handle != NULL;
}

static void *open_libcupti(void)
{
	static const char *const standard[] = {
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
		"/usr/local/cuda/lib64/libcupti.so.13",
		"/usr/local/cuda/lib/libcupti.so.13",
		"libcupti.so.13",	/* the dynamic linker's own search */
	};
	struct lib_search s = { NULL };
	size_t i;
	const char *env = getenv("INFERSCOPE_CUPTI_LIB");

	s.handle = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	/* The override is the only place looked at beyond what is loaded. */
	if (!s.handle && env && *env)
		return try_open(env);
	if (!s.handle)
		dl_iterate_phdr(search_beside, &s);
	for (i = 0; !s.handle && i < sizeof(standard) / sizeof(standard[0]); i++)
		s.handle = try_open(standard[i]);
	return s.handle;
}

#define RESOLVE(field, sym)					\
	do {							\
		*(void **)&cupti.field = dlsym(h, #sym);	\
		if (!cupti.field) {				\
			missing = #sym;				\
			goto fail;				\
		}						\
	} while (0)

/* Loads libcupti and registers the buffer callbacks; enables nothing. */
static void cupti_init(void)
{
	const char *missing = NULL;
	CUptiResult r;
	void *h;

	pthread_mutex_lock(&st.lock);
	if (st.init_done)
		goto out;
	st.init_done = true;
	h = open_libcupti();
	if (!h) {
		st.init_error = -1;
		fprintf(stderr, "inferscope-bpf CUPTI bridge: cannot load libcupti.so.13 (looked among loaded "
			"libraries, $INFERSCOPE_CUPTI_LIB, beside libcudart/libcuda and in /usr/local/cuda): GPU "
			"activity will not be recorded, driver-level tracing is unaffected; set "
			"INFERSCOPE_CUPTI_LIB to the file's path\n");
		goto out;
	}
	RESOLVE(register_callbacks, cuptiActivityRegisterCallbacks);
	RESOLVE(enable, cuptiActivityEnable);
	RESOLVE(disable, cuptiActivityDisable);
	RESOLVE(flush_all, cuptiActivityFlushAll);
	RESOLVE(next_record, cuptiActivityGetNextRecord);
	RESOLVE(dropped, cuptiActivityGetNumDroppedRecords);
	RESOLVE(timestamp, cuptiGetTimestamp);
	RESOLVE(thread_id_type, cuptiSetThreadIdType);
	RESOLVE(result_string, cuptiGetResultString);
	r = cupti.thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r == CUPTI_SUCCESS)
		r = cupti.register_callbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		st.init_error = (int)r;
		fprintf(stderr, "inferscope-bpf CUPTI bridge: CUPTI refused to set up activity buffers: %s (another "
			"CUPTI client such as a profiler may own it): GPU activity will not be recorded, "
			"driver-level tracing is unaffected\n", cupti_error(r));
	}
	goto out;
fail:
	st.init_error = -1;
	fprintf(stderr, "inferscope-bpf CUPTI bridge: the libcupti.so.13 it loaded has no %s: GPU activity will "
		"not be recorded, driver-level tracing is unaffected; point INFERSCOPE_CUPTI_LIB at a CUDA 13 "
		"libcupti.so.13\n", missing);
out:
	pthread_mutex_unlock(&st.lock);
}

/* --- enable / flush / disable (st.lock held) ------------------------------------ */

static void cupti_enable(void)
{
	size_t i;
	CUptiResult r = CUPTI_SUCCESS;

	st.gen++;
	if (st.init_error) {
		emit_status(ISR_GPU_FAILED, st.init_error);
		batch_handoff();
		st.enabled = true;	/* reported: stay quiet until the tracer leaves */
		return;
	}
	for (i = 0; i < NKINDS && r == CUPTI_SUCCESS; i++)
		r = cupti.enable(kinds[i]);
	if (r != CUPTI_SUCCESS) {
		while (i-- > 0)
			cupti.disable(kinds[i]);
		emit_status(ISR_GPU_FAILED, (int32_t)r);
		batch_handoff();
		st.init_error = (int)r;
		fprintf(stderr, "inferscope-bpf CUPTI bridge: cannot enable CUPTI activity: %s: GPU activity will "
			"not be recorded, driver-level tracing is unaffected\n", cupti_error(r));
		st.enabled = true;
		return;
	}
	st.enabled = true;
	emit_clock_pair();
	emit_status(ISR_GPU_ENABLED, 0);
	batch_handoff();
}

/* Every completed record handed over, then a clock pair and a FLUSHED
 * status. The flush calls buffer_completed, which takes the lock. */
static void cupti_flush(void)
{
	if (st.init_error)
		return;
	pthread_mutex_unlock(&st.lock);
	cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&st.lock);
	emit_clock_pair();
	emit_status(ISR_GPU_FLUSHED, 0);
	batch_handoff();
	st.flushes++;
	/* The flush request's site: fired once a request (or the exit) has
	 * been answered. */
	STAP_PROBE1(inferscope, gpu_flush, st.flushes);
}

static void cupti_disable(void)
{
	size_t i;

	if (!st.init_error) {
		/* Unlocked: CUPTI may complete buffers from inside these calls. */
		pthread_mutex_unlock(&st.lock);
		for (i = 0; i < NKINDS; i++)
			cupti.disable(kinds[i]);
		cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		pthread_mutex_lock(&st.lock);
	}
	st.enabled = false;
}

/* --- the watcher ----------------------------------------------------------------- */

static void *watch(void *arg)
{
	struct timespec period = { 0, WATCH_MS * 1000000L };
	uint64_t next_tick = 0;
	bool flush_answered = false;

	(void)arg;
	if (!atomic_load(&injected))
		cupti_init();
	for (;; nanosleep(&period, NULL)) {
		bool on, flush;

		if (atomic_load(&stopping))
			break;
		on = traced();
		flush = inferscope_gpu_flush_semaphore > 0;
		pthread_mutex_lock(&st.lock);
		if (!st.init_done || atomic_load(&stopping)) {
			pthread_mutex_unlock(&st.lock);
			continue;
		}
		if (on && !st.enabled) {
			cupti_enable();
			next_tick = clock__mono_ns() + TICK_NS;
		} else if (!on && st.enabled) {
			cupti_disable();
		}
		if (on && !st.init_error) {
			if (flush && !flush_answered) {
				cupti_flush();
				next_tick = clock__mono_ns() + TICK_NS;
			} else if (clock__mono_ns() >= next_tick) {
				pthread_mutex_unlock(&st.lock);
				cupti.flush_all(0);
				pthread_mutex_lock(&st.lock);
				emit_clock_pair();
				if (st.cupti_dropped != st.reported_dropped)
					emit_status(ISR_GPU_ENABLED, 0);
				batch_handoff();
				next_tick = clock__mono_ns() + TICK_NS;
			}
		}
		flush_answered = flush;
		pthread_mutex_unlock(&st.lock);
	}
	return NULL;
}

/* At exit, while the tracer may still be attached (record -- CMD): hand
 * over what CUPTI still holds. */
static void bridge_exit(void)
{
	atomic_store(&stopping, true);
	pthread_mutex_lock(&st.lock);
	if (st.enabled && !st.init_error && traced())
		cupti_flush();
	pthread_mutex_unlock(&st.lock);
}

/* A forked child has no watcher: it stays dormant. */
static void after_fork_child(void)
{
	atomic_store(&stopping, true);
}

static void start_watcher(void)
{
	pthread_attr_t attr;
	sigset_t all, old;

	if (atomic_exchange(&watcher_started, true))
		return;
	/* The watcher takes no signals meant for the process. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&watcher, &attr, watch, NULL))
		fprintf(stderr, "inferscope-bpf CUPTI bridge: cannot start its watcher thread: GPU activity will not "
			"be recorded, driver-level tracing is unaffected\n");
	else
		pthread_setname_np(watcher, "inferscope-gpu");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	atexit(bridge_exit);
	pthread_atfork(NULL, NULL, after_fork_child);
}

/* True when CUDA_INJECTION64_PATH names this very file: libcuda will call
 * InitializeInjection, from inside cuInit, where CUPTI expects its set-up. */
static bool loaded_for_injection(void)
{
	const char *env = getenv("CUDA_INJECTION64_PATH");
	struct stat a, b;
	Dl_info self;

	if (!env || !*env || !dladdr((void *)loaded_for_injection, &self) || !self.dli_fname)
		return false;
	return stat(env, &a) == 0 && stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

__attribute__((constructor)) static void bridge_load(void)
{
	atomic_store(&injected, loaded_for_injection());
	start_watcher();
}

/* Called by libcuda during cuInit when loaded through CUDA_INJECTION64_PATH. */
EXPORT int InitializeInjection(void)
{
	cupti_init();
	/* Launched under a tracer (record -- CMD): its probe was live before
	 * we were mapped, so collect from the first kernel on. */
	pthread_mutex_lock(&st.lock);
	if (traced() && !st.enabled)
		cupti_enable();
	pthread_mutex_unlock(&st.lock);
	return 1;
}
