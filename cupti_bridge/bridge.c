// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libinferscope_cupti.so: collects CUPTI activity (kernels, copies, memsets,
 * synchronizations, driver and runtime API records) while an inferscope-bpf
 * tracer asks for it, and hands it to the tracer's BPF program in batches.
 *
 * Loading: through CUDA_INJECTION64_PATH (libcuda calls InitializeInjection
 * during cuInit) or with dlopen into a process that already runs CUDA (the
 * constructor). Either way libcupti.so.13 is found at run time (dlopen), and
 * when it cannot be, or CUPTI refuses, one warning goes to stderr and the
 * process runs on untouched.
 *
 * Dormant until asked: nothing of CUPTI is attached to the process until a
 * tracer attaches to the USDT probe inferscope:gpu_batch (it receives the
 * records) and asks for a window. The kernel raises the semaphore (uprobe
 * reference counter) of each probe a tracer attaches to, and a watcher
 * thread reads them every WATCH_MS. A window is asked for while
 * inferscope_gpu_window_semaphore is raised and
 * inferscope_gpu_close_semaphore is not (exported symbols: the tracer
 * attaches plain uprobes with these reference counters at
 * inferscope_gpu_window_site). Attaching a uprobe takes a tracer well
 * under a millisecond, releasing one about 100 ms (a grace period): so a
 * tracer opens a window by attaching to the first, and closes it at once by
 * attaching to the second, then releases both. While a window is open,
 * CUPTI is attached (the buffer callbacks, the activity kinds), flushed
 * and sent a clock reference pair every second. When the
 * window closes, or the tracer leaves, CUPTI is detached from the process,
 * since CUPTI keeps costing a launch about 1.4 us while merely attached
 * (docs/overhead.md):
 *
 *   1. every activity kind is disabled (no record of a later call);
 *   2. default flushes, every 2 ms for at most DRAIN_NS, until CUPTI has
 *      handed back every buffer it was given: a default flush never hands
 *      back a buffer with a record still unfinished, so each one freed is
 *      one CUPTI no longer touches; what the drain could not wait for, a
 *      forced flush hands back, and those buffers are only freed once CUPTI
 *      is finalized;
 *   3. buffer requests get a static buffer from here on (nothing in it is
 *      read, nothing is freed), and the detach waits until no buffer
 *      completion callback is running;
 *   4. the window's record (isr_ev_gpu_window) goes out after every record
 *      of the window;
 *   5. a subscriber with driver and runtime API callbacks (none is held
 *      while a window is open): in the exit callback of the next API call of
 *      any application thread (one thread wins; the others go on), the
 *      thread-id type is restored, the subscriber removed and cuptiFinalize
 *      called, which is where CUPTI's documentation says a detach is safe.
 *      When CUPTI refuses the subscriber (another client, such as a
 *      profiler, holds CUPTI), CUPTI is not detached: its session is not
 *      ours to end;
 *   6. once it is done, the kept buffers are freed, and SETTLE_NS later
 *      (for threads still inside CUPTI's callback dispatch) CUPTI may be
 *      attached again.
 *
 * A window asked for again before an application thread took the finalize
 * cancels it and reopens at once. The USDT probe inferscope:gpu_flush is a
 * request: its semaphore raised means "flush now", answered with the
 * records so far, the open window's record so far and a FLUSHED status.
 * At the process's exit an open window is flushed and sent (flag EXIT);
 * CUPTI is not detached then.
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
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cupti.h>
#include "registry.h"
#include "clock.h"
#include "htab.h"

#define EXPORT __attribute__((visibility("default")))

/* Raised by the kernel while a tracer's uprobe is attached to the probe. */
__extension__ volatile unsigned short inferscope_gpu_batch_semaphore __attribute__((section(".probes")));
__extension__ volatile unsigned short inferscope_gpu_flush_semaphore __attribute__((section(".probes")));
EXPORT volatile unsigned short inferscope_gpu_window_semaphore __attribute__((section(".probes")));
EXPORT volatile unsigned short inferscope_gpu_close_semaphore __attribute__((section(".probes")));

#define WATCH_MS	10			/* semaphore polling: a window opens or closes within 10 ms */
#define FINALIZE_POLL_MS 1			/* while an application thread is asked to finalize */
#define TICK_NS		1000000000ull		/* clock pair + CUPTI flush while collecting */
/* One CUPTI activity buffer. CUPTI hands over a buffer when it is full (or
 * at a forced flush), so what a process that ends without a flush
 * (os._exit, a kill) never delivers is the one it was filling: small
 * buffers keep that tail short (512 KiB: about 0.2 s of the GPU-bound
 * loop of tests/gpu/planted.py, whose records came at about 2.7 MB/s; 4 MiB
 * lost its last 2 s), and the analysis stops observing where the records
 * stop. */
#define BUFFER_BYTES	(512u << 10)
#define CLOCK_TRIES	8			/* sandwiches per clock pair: the narrowest wins */
#define DRAIN_NS	1000000000ull		/* the longest wait for a closed window's kernels to finish */
#define DRAIN_POLL_MS	2
#define SETTLE_NS	50000000ull		/* after cuptiFinalize, before CUPTI is attached again */
#define MAX_KEPT	64			/* buffers of forced flushes kept until the finalize */

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
	CUptiResult (*get_thread_id_type)(CUpti_ActivityThreadIdType *);
	CUptiResult (*thread_id_type)(CUpti_ActivityThreadIdType);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*finalize)(void);
	CUptiResult (*result_string)(CUptiResult, const char **);
} cupti;

struct name_slot {
	char *name;
	uint32_t id;
	uint32_t sent_gen;	/* attach generation in which its record was sent */
};

/* Where CUPTI stands in this process (changed by the watcher, by
 * InitializeInjection and by the exit handler, under sess_lock). */
enum session {
	SESS_NONE,		/* nothing attached */
	SESS_COLLECTING,	/* a window is open */
	SESS_FINALIZING,	/* closed and drained; an application thread is asked to finalize */
	SESS_PARKED,		/* closed and drained, but CUPTI refused a subscriber: not detached */
	SESS_FAILED,		/* CUPTI missing or refused: told, quiet until the tracer leaves */
};

static pthread_mutex_t sess_lock = PTHREAD_MUTEX_INITIALIZER;
static enum session sess;
static uint64_t settle_until;		/* no attach before (the last finalize + SETTLE_NS) */
static bool was_traced;			/* the tracer seen at the last look */
static CUpti_SubscriberHandle subscriber;
static CUpti_ActivityThreadIdType saved_tid_type;

static struct {
	pthread_mutex_t lock;		/* everything below: the batch and its counters */
	bool init_done;			/* init ran (whatever its outcome) */
	int init_error;			/* 0, a CUptiResult, or -1: no libcupti */
	uint32_t gen;			/* tracer attach generation: names are resent after each attach */
	uint32_t failed_gen;		/* the generation told of a failure */
	uint32_t parked_gen;		/* the generation told that CUPTI could not be detached */
	uint64_t cupti_dropped, reported_dropped, handed_over;
	uint64_t flushes;		/* flushes answered */
	struct htab names;		/* struct name_slot, by name */
	uint32_t name_count;
	struct {			/* the open window, or the last one */
		uint32_t seq;
		uint64_t open_ns;
		uint64_t device_records, api_records;
		uint32_t incomplete;
		uint32_t setup_us;
		uint64_t finalize_ns;	/* the detach before it */
		uint32_t finalize_tid;
	} win;
	unsigned char batch[ISR_GPU_BATCH_MAX_BYTES] __attribute__((aligned(8)));
	size_t batch_len;
	uint32_t batch_count;
	uint8_t *kept[MAX_KEPT];	/* buffers of forced flushes, freed after the finalize */
	unsigned int nkept;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What the buffer callbacks and the finalizing thread share with the
 * watcher. */
static atomic_bool quiesced;		/* buffer requests get the static buffer */
static atomic_bool keeping;		/* inside a forced flush: its buffers are kept, not freed */
static atomic_int buffers_out;		/* allocated buffers CUPTI holds */
static atomic_int completing;		/* buffer completion callbacks running */
static uint8_t discard[64 << 10] __attribute__((aligned(8)));

static struct {
	atomic_bool requested;		/* the next API exit finalizes */
	atomic_bool claimed;		/* a thread took it (or the watcher cancelled it) */
	atomic_bool done;
	CUptiResult result;
	uint64_t ns;
	uint32_t tid;
} fin;

static pthread_t watcher;
static atomic_bool watcher_started, stopping, injected, exit_done, exit_late;
static pid_t owner_pid;

static bool traced(void)
{
	return inferscope_gpu_batch_semaphore > 0;
}

/* A tracer is attached and asks for GPU activity now. */
static bool window_wanted(void)
{
	return traced() && inferscope_gpu_window_semaphore > 0 && inferscope_gpu_close_semaphore == 0;
}

/* Where the tracer's window uprobes sit: never called, so they never fire;
 * they exist for their reference counters. */
EXPORT __attribute__((noinline)) void inferscope_gpu_window_site(void)
{
	__asm__ volatile("" ::: "memory");
}

static const char *cupti_error(CUptiResult r)
{
	const char *s = NULL;

	if (cupti.result_string && cupti.result_string(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
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

/* The window's record: open (the answer to a flush request) or closed at
 * close_ns. */
static void emit_window(uint64_t close_ns, uint32_t flags, uint32_t drain_us)
{
	struct isr_ev_gpu_window *e = batch_add(ISR_EV_GPU_WINDOW, sizeof(*e));

	e->open_ns = st.win.open_ns;
	e->close_ns = close_ns;
	e->device_records = st.win.device_records;
	e->api_records = st.win.api_records;
	e->finalize_ns = st.win.finalize_ns;
	e->seq = st.win.seq;
	e->flags = flags;
	e->setup_us = st.win.setup_us;
	e->drain_us = drain_us;
	e->incomplete = st.win.incomplete;
	e->finalize_tid = st.win.finalize_tid;
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

/* A kernel, copy or memset CUPTI handed back before it finished (a forced
 * flush while it ran): its times are not known. */
static bool unfinished(uint64_t start, uint64_t end)
{
	if (start && end >= start)
		return false;
	st.win.incomplete++;
	return true;
}

/* A kernel, copy or memset record in the batch, with its times, where it
 * ran and the call that launched it (format/registry.h: GPU work). */
static void *device_record(uint16_t type, uint16_t size, const struct isr_gpu_work *w)
{
	struct isr_ev_hdr *h = batch_add(type, size);

	st.win.device_records++;
	isr_ev_set_gpu_work(h, w);
	return h;
}

static void convert(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		/* Later record versions only append fields. */
		const CUpti_ActivityKernel10 *k = (const void *)r;
		uint32_t id;
		struct isr_ev_gpu_kernel *e;

		if (unfinished(k->start, k->end))
			break;
		id = name_id(k->name);
		e = device_record(ISR_EV_GPU_KERNEL, sizeof(*e),
				  &(struct isr_gpu_work){ k->start, k->end, k->deviceId, k->contextId, k->streamId,
							  k->correlationId });
		e->name_id = id;
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
		struct isr_ev_gpu_memcpy *e;

		if (unfinished(m->start, m->end))
			break;
		e = device_record(ISR_EV_GPU_MEMCPY, sizeof(*e),
				  &(struct isr_gpu_work){ m->start, m->end, m->deviceId, m->contextId, m->streamId,
							  m->correlationId });
		e->bytes = m->bytes;
		e->copy_kind = m->copyKind;
		e->src_kind = m->srcKind;
		e->dst_kind = m->dstKind;
		e->flags = m->flags;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;
		struct isr_ev_gpu_memset *e;

		if (unfinished(m->start, m->end))
			break;
		e = device_record(ISR_EV_GPU_MEMSET, sizeof(*e),
				  &(struct isr_gpu_work){ m->start, m->end, m->deviceId, m->contextId, m->streamId,
							  m->correlationId });
		e->bytes = m->bytes;
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

		st.win.api_records++;

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
	*max_records = 0;
	/* After a closed window's drain: nothing should come, and whatever
	 * does is neither read nor freed. */
	if (atomic_load(&quiesced)) {
		*buffer = discard;
		*size = sizeof(discard);
		return;
	}
	/* NULL: CUPTI drops the records and counts them (cupti_dropped). */
	*buffer = aligned_alloc(8, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	if (*buffer)
		atomic_fetch_add(&buffers_out, 1);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	size_t dropped = 0;
	bool kept = false;

	(void)size;
	atomic_fetch_add(&completing, 1);
	if (buffer == discard)
		goto out;
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
	if (atomic_load(&keeping) && st.nkept < MAX_KEPT) {
		st.kept[st.nkept++] = buffer;
		kept = true;
	}
	pthread_mutex_unlock(&st.lock);
	atomic_fetch_sub(&buffers_out, 1);
	if (!kept)
		free(buffer);
out:
	atomic_fetch_sub(&completing, 1);
}

/* In the exit callback of a driver or runtime API call, on an application
 * thread, once a closed window asked for it: the one thread that claims it
 * detaches CUPTI. */
static void CUPTIAPI api_exit(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	uint64_t t0;

	(void)userdata, (void)cbid;
	if ((domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) ||
	    cb->callbackSite != CUPTI_API_EXIT || !atomic_load(&fin.requested) || atomic_load(&stopping) ||
	    getpid() != owner_pid || atomic_exchange(&fin.claimed, true))
		return;
	t0 = clock__mono_ns();
	if (saved_tid_type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		cupti.thread_id_type(saved_tid_type);
	cupti.unsubscribe(subscriber);
	fin.result = cupti.finalize();
	fin.ns = clock__mono_ns() - t0;
	fin.tid = (uint32_t)syscall(SYS_gettid);
	atomic_store(&fin.done, true);
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

static void CUPTIAPI prime_cb(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	(void)userdata, (void)domain, (void)cbid, (void)data;
}

/*
 * The process's first cuptiSubscribe, made here, before anything of CUPTI
 * is enabled, and taken back at once. libcupti.so.13 (CUDA 13.0) raises its
 * "some subscriber" flag before it allocates and publishes its table of
 * enabled callbacks, the first time only (later subscribes find the table);
 * its callback dispatch, which libcuda enters in every API call once an
 * API activity kind was enabled, reads that table behind the flag. Made
 * first at a window's close, while the job's launching thread was inside
 * cudaGetDevice or cuLaunchKernel, it killed the job (SIGSEGV reading
 * NULL + 4 x callback id in libcupti, 2 PyTorch loops of 2 attached with
 * -p on the H100: docs/overhead.md). Here no API call enters CUPTI yet.
 * When another client already subscribed, the table exists and this one
 * is refused: nothing to do.
 */
static void prime_subscriber_table(void)
{
	CUpti_SubscriberHandle s;

	if (cupti.subscribe(&s, prime_cb, NULL) == CUPTI_SUCCESS)
		cupti.unsubscribe(s);
}

/* Loads libcupti, resolves what the bridge calls and makes the first
 * subscribe (above); enables nothing. */
static void cupti_init(void)
{
	const char *missing = NULL;
	void *h;

	pthread_mutex_lock(&sess_lock);
	if (st.init_done)
		goto out;
	h = open_libcupti();
	if (!h) {
		st.init_error = -1;
		fprintf(stderr, "inferscope-bpf CUPTI bridge: cannot load libcupti.so.13 (looked among loaded "
			"libraries, $INFERSCOPE_CUPTI_LIB, beside libcudart/libcuda and in /usr/local/cuda): GPU "
			"activity will not be recorded, driver-level tracing is unaffected; set "
			"INFERSCOPE_CUPTI_LIB to the file's path\n");
		goto done;
	}
	RESOLVE(register_callbacks, cuptiActivityRegisterCallbacks);
	RESOLVE(enable, cuptiActivityEnable);
	RESOLVE(disable, cuptiActivityDisable);
	RESOLVE(flush_all, cuptiActivityFlushAll);
	RESOLVE(next_record, cuptiActivityGetNextRecord);
	RESOLVE(dropped, cuptiActivityGetNumDroppedRecords);
	RESOLVE(timestamp, cuptiGetTimestamp);
	RESOLVE(get_thread_id_type, cuptiGetThreadIdType);
	RESOLVE(thread_id_type, cuptiSetThreadIdType);
	RESOLVE(subscribe, cuptiSubscribe);
	RESOLVE(unsubscribe, cuptiUnsubscribe);
	RESOLVE(enable_domain, cuptiEnableDomain);
	RESOLVE(finalize, cuptiFinalize);
	RESOLVE(result_string, cuptiGetResultString);
	prime_subscriber_table();
	goto done;
fail:
	st.init_error = -1;
	fprintf(stderr, "inferscope-bpf CUPTI bridge: the libcupti.so.13 it loaded has no %s: GPU activity will "
		"not be recorded, driver-level tracing is unaffected; point INFERSCOPE_CUPTI_LIB at a CUDA 13 "
		"libcupti.so.13\n", missing);
done:
	st.init_done = true;
out:
	pthread_mutex_unlock(&sess_lock);
}

static void bridge_exit(void);

/* --- windows (sess_lock held) ------------------------------------------------------ */

/* Told once per tracer: what is missing or refused. */
static void report_failure(int error)
{
	pthread_mutex_lock(&st.lock);
	if (st.failed_gen != st.gen) {
		st.failed_gen = st.gen;
		emit_status(ISR_GPU_FAILED, error);
		batch_handoff();
	}
	pthread_mutex_unlock(&st.lock);
	sess = SESS_FAILED;
}

static void open_window(uint32_t setup_us)
{
	pthread_mutex_lock(&st.lock);
	st.win.seq++;
	st.win.open_ns = clock__mono_ns();
	st.win.device_records = st.win.api_records = 0;
	st.win.incomplete = 0;
	st.win.setup_us = setup_us;
	emit_clock_pair();
	emit_status(ISR_GPU_ENABLED, 0);
	batch_handoff();
	pthread_mutex_unlock(&st.lock);
	sess = SESS_COLLECTING;
}

static CUptiResult enable_kinds(void)
{
	CUptiResult r = CUPTI_SUCCESS;
	size_t i;

	for (i = 0; i < NKINDS && r == CUPTI_SUCCESS; i++)
		r = cupti.enable(kinds[i]);
	if (r != CUPTI_SUCCESS)
		while (i-- > 0)
			cupti.disable(kinds[i]);
	return r;
}

/* System thread ids, the buffer callbacks, every kind: a window opens. No
 * subscriber yet: CUPTI holds nothing of ours but the activity while a
 * window is open. */
static void attach(void)
{
	uint64_t t0 = clock__mono_ns();
	CUptiResult r;

	if (!atomic_exchange(&exit_late, true))
		atexit(bridge_exit);
	atomic_store(&quiesced, false);
	if (cupti.get_thread_id_type(&saved_tid_type) != CUPTI_SUCCESS)
		saved_tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
	r = cupti.thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r == CUPTI_SUCCESS)
		r = cupti.register_callbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_SUCCESS)
		r = enable_kinds();
	if (r != CUPTI_SUCCESS) {
		fprintf(stderr, "inferscope-bpf CUPTI bridge: cannot enable CUPTI activity: %s: GPU activity will not "
			"be recorded, driver-level tracing is unaffected\n", cupti_error(r));
		report_failure((int)r);
		return;
	}
	open_window((uint32_t)((clock__mono_ns() - t0) / 1000));
}

/* Hands back every buffer, unfinished records and all; the buffers it
 * hands back are freed only after the next finalize (CUPTI may not be done
 * with a buffer of unfinished records). */
static void forced_flush(void)
{
	atomic_store(&keeping, true);
	cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	atomic_store(&keeping, false);
}

/* Default flushes until CUPTI holds no buffer of ours, for at most
 * deadline_ns; then a forced flush for what is left, its buffers kept
 * until the finalize. */
static void drain(uint64_t deadline_ns)
{
	uint64_t end = clock__mono_ns() + deadline_ns;

	for (;;) {
		cupti.flush_all(0);
		if (atomic_load(&buffers_out) <= 0 || clock__mono_ns() >= end)
			break;
		sleep_ms(DRAIN_POLL_MS);
	}
	if (atomic_load(&buffers_out) > 0)
		forced_flush();
}

/* The subscriber that will detach CUPTI (step 5): the next API exit of an
 * application thread finalizes. False when CUPTI refuses one (another
 * client, such as a profiler, holds it: its session must not be ended). */
static bool request_finalize(void)
{
	bool driver, runtime;

	if (cupti.subscribe(&subscriber, api_exit, NULL) != CUPTI_SUCCESS)
		return false;
	atomic_store(&fin.claimed, false);
	atomic_store(&fin.done, false);
	atomic_store(&fin.requested, true);
	driver = cupti.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
	runtime = cupti.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS;
	if (driver || runtime)
		return true;
	atomic_store(&fin.requested, false);
	cupti.unsubscribe(subscriber);
	return false;
}

/* CUPTI cannot be detached: it stays attached with every kind off (the
 * residual cost of docs/overhead.md) until the next window. */
static void park(void)
{
	pthread_mutex_lock(&st.lock);
	if (st.parked_gen != st.gen) {
		st.parked_gen = st.gen;
		fprintf(stderr, "inferscope-bpf CUPTI bridge: CUPTI cannot be detached (another CUPTI client such as a "
			"profiler holds it): it stays attached, collecting nothing, until the tracer asks again\n");
	}
	pthread_mutex_unlock(&st.lock);
	sess = SESS_PARKED;
}

/* Closes the open window (steps 1-5 of the header). */
static void close_window(void)
{
	uint64_t close_ns = clock__mono_ns();
	uint32_t drain_us;
	size_t i;

	for (i = 0; i < NKINDS; i++)
		cupti.disable(kinds[i]);
	drain(DRAIN_NS);
	atomic_store(&quiesced, true);
	while (atomic_load(&completing) > 0)
		sched_yield();
	drain_us = (uint32_t)((clock__mono_ns() - close_ns) / 1000);
	pthread_mutex_lock(&st.lock);
	emit_clock_pair();
	emit_window(close_ns, 0, drain_us);
	batch_handoff();
	st.win.finalize_ns = 0;
	st.win.finalize_tid = 0;
	pthread_mutex_unlock(&st.lock);
	if (request_finalize())
		sess = SESS_FINALIZING;
	else
		park();
}

/* An application thread finalized CUPTI: the session is over. */
static void finalize_done(void)
{
	pthread_mutex_lock(&st.lock);
	st.win.finalize_ns = fin.ns;
	st.win.finalize_tid = fin.tid;
	for (unsigned int i = 0; i < st.nkept; i++)
		free(st.kept[i]);
	st.nkept = 0;
	pthread_mutex_unlock(&st.lock);
	atomic_store(&fin.requested, false);
	if (fin.result != CUPTI_SUCCESS)
		fprintf(stderr, "inferscope-bpf CUPTI bridge: cuptiFinalize failed: %s\n", cupti_error(fin.result));
	settle_until = clock__mono_ns() + SETTLE_NS;
	sess = SESS_NONE;
}

/* A window is wanted again while CUPTI is still attached (parked, or
 * before any application thread took the finalize): it collects again at
 * once. */
static void reopen_window(void)
{
	uint64_t t0 = clock__mono_ns();

	if (sess == SESS_FINALIZING) {
		if (atomic_exchange(&fin.claimed, true))
			return;	/* a thread is finalizing: attach again once it is done */
		atomic_store(&fin.requested, false);
		cupti.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
		cupti.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
		cupti.unsubscribe(subscriber);
	}
	atomic_store(&quiesced, false);
	if (enable_kinds() != CUPTI_SUCCESS) {
		/* nothing collects: detached at the next close */
		atomic_store(&quiesced, true);
		if (request_finalize())
			sess = SESS_FINALIZING;
		else
			park();
		return;
	}
	open_window((uint32_t)((clock__mono_ns() - t0) / 1000));
}

/* Everything completed so far, a clock pair, the open window so far and a
 * FLUSHED status. */
static void answer_flush(void)
{
	if (sess == SESS_COLLECTING) {
		cupti.flush_all(0);
		forced_flush();
	}
	pthread_mutex_lock(&st.lock);
	if (sess == SESS_COLLECTING) {
		emit_clock_pair();
		emit_window(clock__mono_ns(), ISR_GPU_WINDOW_OPEN, 0);
	}
	emit_status(ISR_GPU_FLUSHED, 0);
	batch_handoff();
	st.flushes++;
	/* The flush request's site: fired once a request (or the exit) has
	 * been answered. */
	STAP_PROBE1(inferscope, gpu_flush, st.flushes);
	pthread_mutex_unlock(&st.lock);
}

/* Once a second while collecting: what CUPTI completed, and a clock pair. */
static void tick(void)
{
	cupti.flush_all(0);
	pthread_mutex_lock(&st.lock);
	emit_clock_pair();
	if (st.cupti_dropped != st.reported_dropped)
		emit_status(ISR_GPU_ENABLED, 0);
	batch_handoff();
	pthread_mutex_unlock(&st.lock);
}

/* A tracer that arrived is a new generation: kernel names are sent again. */
static void note_tracer(void)
{
	bool on = traced();

	if (on && !was_traced) {
		pthread_mutex_lock(&st.lock);
		st.gen++;
		pthread_mutex_unlock(&st.lock);
	}
	was_traced = on;
}

/* Where the session should go now that the tracer wants `want`. */
static void step(bool want)
{
	switch (sess) {
	case SESS_NONE:
		if (!want || clock__mono_ns() < settle_until)
			break;
		if (st.init_error)
			report_failure(st.init_error);
		else
			attach();
		break;
	case SESS_COLLECTING:
		if (!want)
			close_window();
		break;
	case SESS_FINALIZING:
		if (atomic_load(&fin.done))
			finalize_done();
		else if (want)
			reopen_window();
		break;
	case SESS_PARKED:
		if (want)
			reopen_window();
		break;
	case SESS_FAILED:
		if (!traced())
			sess = SESS_NONE;
		break;
	}
}

/* --- the watcher ----------------------------------------------------------------- */

static void *watch(void *arg)
{
	uint64_t next_tick = 0;
	bool flush_answered = false;

	(void)arg;
	if (!atomic_load(&injected))
		cupti_init();
	while (!atomic_load(&stopping)) {
		bool on = traced(), flush = inferscope_gpu_flush_semaphore > 0;

		pthread_mutex_lock(&sess_lock);
		if (atomic_load(&stopping) || !st.init_done) {
			pthread_mutex_unlock(&sess_lock);
			sleep_ms(WATCH_MS);
			continue;
		}
		note_tracer();
		step(window_wanted());
		if (sess == SESS_COLLECTING && clock__mono_ns() >= next_tick) {
			tick();
			next_tick = clock__mono_ns() + TICK_NS;
		}
		if (on && flush && !flush_answered)
			answer_flush();
		flush_answered = flush;
		pthread_mutex_unlock(&sess_lock);
		sleep_ms(sess == SESS_FINALIZING ? FINALIZE_POLL_MS : WATCH_MS);
	}
	return NULL;
}

/* At exit, while the tracer may still be attached (record -- CMD): hand
 * over what CUPTI still holds, and the window it closes, and the watcher
 * touches CUPTI no more. CUPTI is not detached: the process is ending.
 * Registered twice: when the bridge loads, and again at the first window,
 * after the application's CUDA set-up. Exit handlers run last registered
 * first, so the second runs before the clean-up of anything set up before
 * that window, the CUDA runtime's included (an injected bridge loads inside
 * cuInit, and the runtime registered its clean-up after it): a job with 4
 * launching threads died at its exit while the watcher still used CUPTI,
 * and no longer does (the H100, docs/overhead.md). Whichever runs first
 * does the work; the other returns. */
static void bridge_exit(void)
{
	if (atomic_exchange(&exit_done, true))
		return;
	atomic_store(&stopping, true);
	pthread_mutex_lock(&sess_lock);
	if (sess == SESS_COLLECTING && traced()) {
		uint64_t close_ns = clock__mono_ns();

		cupti.flush_all(0);
		forced_flush();
		pthread_mutex_lock(&st.lock);
		emit_clock_pair();
		emit_window(close_ns, ISR_GPU_WINDOW_EXIT, (uint32_t)((clock__mono_ns() - close_ns) / 1000));
		emit_status(ISR_GPU_FLUSHED, 0);
		batch_handoff();
		st.flushes++;
		STAP_PROBE1(inferscope, gpu_flush, st.flushes);
		pthread_mutex_unlock(&st.lock);
	}
	pthread_mutex_unlock(&sess_lock);
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
	owner_pid = getpid();
	/* The watcher takes no signals meant for the process; a fault of its
	 * own still reaches the process's handler (blocked, it would kill the
	 * process unreported). */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGABRT);
	sigdelset(&all, SIGTRAP);
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
	/* Launched under a tracer (record -- CMD): its probes were live
	 * before we were mapped, so collect from the first kernel on. */
	pthread_mutex_lock(&sess_lock);
	note_tracer();
	if (sess == SESS_NONE && window_wanted())
		step(true);
	pthread_mutex_unlock(&sess_lock);
	return 1;
}
