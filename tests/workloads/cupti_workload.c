// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A CUDA process without a GPU for the CUPTI bridge tests: the stand-in
 * libcuda.so.1 (tests/standin/) takes its launches, the mock libcupti.so.13
 * (tests/mock_cupti/) plays CUPTI, and the real bridge sits between them.
 *
 *   cupti_workload injected KERNELS COPIES
 *       Loads the bridge the way libcuda does (dlopen of
 *       $CUDA_INJECTION64_PATH, then InitializeInjection), waits until the
 *       bridge enabled CUPTI activity (a tracer is attached: record -- CMD),
 *       works, and exits: the bridge's exit flush hands the records over.
 *   cupti_workload attach BRIDGE KERNELS COPIES DROPPED
 *       dlopens BRIDGE (a process whose CUDA already runs), checks for
 *       DORMANT_MS that the bridge enabled nothing, prints "ready" and waits
 *       for SIGUSR1 (the tracer is attached by then); waits for the enable,
 *       works, waits until the bridge's periodic flush handed every record
 *       over, launches WL_TAIL_KERNELS more (left in CUPTI's buffer),
 *       prints "done", and waits until the bridge disabled CUPTI and
 *       flushed (the tracer left). Exit 0 only if the bridge stayed dormant
 *       before and went dormant after.
 *   cupti_workload attach - KERNELS COPIES DROPPED
 *       The same for a process started without the bridge, which the
 *       tracer loads into it (-p, ptrace + dlopen): nothing is dlopened;
 *       a thread sleeps in nanosleep (a thread the injector may borrow),
 *       and $WL_GPU_DEVICE, when set, is held open as a CUDA context holds
 *       /dev/nvidiaN (what tells the tracer that CUDA is initialized).
 *   cupti_workload handoff RECORDS
 *       Loads the bridge as "injected" does, waits for the enable, then
 *       plants RECORDS kernel records and times the flush that hands them
 *       to the bridge (conversion and, under a tracer, the BPF copy), 5
 *       times: prints the best round per record. A cost of the thread that
 *       flushes CUPTI's buffers, not of the thread that launches.
 *   cupti_workload threads SECONDS RATE
 *       Loads the bridge as "injected" does, waits for the enable, then
 *       launches from two threads for SECONDS (a job whose forward and
 *       backward launch from different threads), each at most RATE
 *       launches a second (a pause of 1/RATE after each: the launches of a
 *       thread lie closer than the join's 200 us lead), the correlation ids from one
 *       counter shared by both (interleaved), a full buffer of CUPTI
 *       flushed as CUPTI would hand it over; prints "launched N".
 *   cupti_workload windows SECONDS
 *       Loads the bridge as "injected" does, with the mock's delivery
 *       thread on (buffers also handed back from a thread of the mock, as
 *       CUPTI's worker does), then for SECONDS launches every WL_WIN_EVERY_US
 *       a kernel of WL_WIN_KERNEL_NS that is still running when its record
 *       is planted (finished WL_WIN_FINISH_EVERY launches later), each
 *       launch an API call the subscriber sees and a DRIVER API record, while the tracer opens and
 *       closes GPU windows (record -- CMD). Prints the kernels planted
 *       (recorded by CUPTI: inside a window), the true busy fraction of the
 *       loop, and the mock's finalize count and faults. With
 *       WL_OTHER_SUBSCRIBER set, another CUPTI client holds the subscriber
 *       first (as a profiler would).
 *   cupti_workload missing
 *       Loads the bridge as "injected" does, without the mock: with no
 *       libcupti to find (it sets INFERSCOPE_CUPTI_LIB to a file that does
 *       not exist, the only place the bridge then looks), the bridge must
 *       warn and the process run on; makes WL_KERNELS_MISSING launches and
 *       stays WL_DORMANT_MS so that the bridge can tell the tracer.
 *
 * The work: KERNELS cuLaunchKernel calls on the stand-in, each planted as a
 * DRIVER cuLaunchKernel API record (odd i: a RUNTIME cudaLaunchKernel one) (the caller's tid, correlation id 1000 + i) and a
 * kernel record starting 5 us after the call returned, named
 * WL_KERNEL_A (even i, WL_DUR_A_NS) or WL_KERNEL_B (odd i, WL_DUR_B_NS),
 * grid (i + 1, 1, 1), block (128, 1, 1), stream WL_STREAM; COPIES
 * host-to-device copy records of WL_COPY_UNIT * (j + 1) bytes, WL_COPY_NS
 * each; DROPPED records reported as dropped by CUPTI.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <cuda.h>
#include "mock_cupti.h"
#include "cupti_workload.h"

static struct {
	uint64_t (*gpu_now)(void);
	int (*plant)(const CUpti_Activity *);
	void (*plant_dropped)(size_t);
	uint64_t (*enabled)(void);
	CUptiResult (*flush)(uint32_t);
	unsigned int (*enable_calls)(void);
	unsigned int (*flushes_disabled)(void);
	size_t (*delivered)(void);
	void (*api_call)(uint32_t);
	unsigned int (*finalizes)(void);
	unsigned int (*faults)(void);
	int (*plant_pending)(const CUpti_ActivityKernel10 *);
	void (*complete_pending)(void);
	void (*start_delivery)(unsigned int, unsigned int);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
} mock;

static void die(const char *what)
{
	fprintf(stderr, "cupti_workload: %s\n", what);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The mock, from beside the stand-in: build/tests/mock_cupti/. */
static void load_mock(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *h;

	if (n <= 0)
		die("cannot read /proc/self/exe");
	exe[n] = 0;
	slash = strrchr(exe, '/');
	*slash = 0;
	snprintf(path, sizeof(path), "%s/../mock_cupti/libcupti.so.13", exe);
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		die(dlerror());
#define SYM(f, s) do { *(void **)&mock.f = dlsym(h, #s); if (!mock.f) die("mock: no " #s); } while (0)
	SYM(gpu_now, mock_cupti_gpu_now);
	SYM(plant, mock_cupti_plant);
	SYM(plant_dropped, mock_cupti_plant_dropped);
	SYM(enabled, mock_cupti_enabled);
	SYM(enable_calls, mock_cupti_enable_calls);
	SYM(flushes_disabled, mock_cupti_flushes_disabled);
	SYM(delivered, mock_cupti_delivered);
	SYM(flush, cuptiActivityFlushAll);
	SYM(api_call, mock_cupti_api_call);
	SYM(finalizes, mock_cupti_finalizes);
	SYM(faults, mock_cupti_faults);
	SYM(plant_pending, mock_cupti_plant_pending);
	SYM(complete_pending, mock_cupti_complete_pending);
	SYM(start_delivery, mock_cupti_start_delivery);
	SYM(subscribe, cuptiSubscribe);
#undef SYM
}

static bool wait_until(bool (*cond)(void), double timeout_s)
{
	double end = now_s() + timeout_s;

	while (!cond()) {
		if (now_s() > end)
			return false;
		usleep(2000);
	}
	return true;
}

static bool all_enabled(void)
{
	return mock.enabled() == WL_KINDS_MASK;
}

/* The bridge detached CUPTI: the API calls below give it the exit
 * callback it finalizes in. */
static bool detached(void)
{
	mock.api_call(WL_CBID_LAUNCH);
	return mock.enabled() == 0 && mock.flushes_disabled() > 0 && mock.finalizes() > 0;
}

static size_t planted;

static bool all_delivered(void)
{
	return mock.delivered() >= planted;
}

static void plant(const void *r)
{
	int p = mock.plant(r);

	if (p != 1)
		die(p ? "the mock's buffer is full" : "a planted kind is not enabled");
	planted++;
}

static void launch(unsigned int i)
{
	CUpti_ActivityKernel10 k;
	CUpti_ActivityAPI a;
	uint64_t t0 = mock.gpu_now(), t1;

	if (cuLaunchKernel((CUfunction)(uintptr_t)0x1000, i + 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
		die("cuLaunchKernel failed");
	mock.api_call(WL_CBID_LAUNCH);
	t1 = mock.gpu_now();
	memset(&a, 0, sizeof(a));
	/* Odd launches as a program using the runtime makes them: the kernel
	 * carries the correlation id of a RUNTIME cudaLaunchKernel record. */
	a.kind = i % 2 ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = i % 2 ? WL_CBID_RUNTIME_LAUNCH : WL_CBID_LAUNCH;
	a.start = t0;
	a.end = t1;
	a.processId = (uint32_t)getpid();
	a.threadId = (uint32_t)syscall(SYS_gettid);
	a.correlationId = WL_CORR_KERNEL + i;
	plant(&a);
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 32;
	k.start = t1 + 5000;
	k.end = k.start + (i % 2 ? WL_DUR_B_NS : WL_DUR_A_NS);
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = WL_STREAM;
	k.gridX = (int32_t)i + 1;
	k.gridY = k.gridZ = 1;
	k.blockX = 128;
	k.blockY = k.blockZ = 1;
	k.correlationId = WL_CORR_KERNEL + i;
	k.name = i % 2 ? WL_KERNEL_B : WL_KERNEL_A;
	plant(&k);
}

/* The "threads" mode: one counter of correlation ids for both threads,
 * and a buffer that fills is handed over (CUPTI would request another). */
static atomic_uint next_corr = WL_CORR_KERNEL;
static atomic_uint launched;
static double threads_until;
static unsigned int threads_rate;

static void plant_or_flush(const void *r)
{
	int p = mock.plant(r);

	if (p == -1) {
		mock.flush(0);
		p = mock.plant(r);
	}
	if (p != 1)
		die(p ? "the mock's buffer is full after a flush" : "a planted kind is not enabled");
}

/* A launch as launch() makes it, with the next shared correlation id; the
 * kernel starts 5 us after the call returned, before the thread's next
 * launch. */
static void launch_shared(void)
{
	unsigned int corr = atomic_fetch_add(&next_corr, 1), i = corr - WL_CORR_KERNEL;
	CUpti_ActivityKernel10 k;
	CUpti_ActivityAPI a;
	uint64_t t0 = mock.gpu_now(), t1;

	if (cuLaunchKernel((CUfunction)(uintptr_t)0x1000, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
		die("cuLaunchKernel failed");
	t1 = mock.gpu_now();
	memset(&a, 0, sizeof(a));
	a.kind = i % 2 ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = i % 2 ? WL_CBID_RUNTIME_LAUNCH : WL_CBID_LAUNCH;
	a.start = t0;
	a.end = t1;
	a.processId = (uint32_t)getpid();
	a.threadId = (uint32_t)syscall(SYS_gettid);
	a.correlationId = corr;
	plant_or_flush(&a);
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 32;
	k.start = t1 + 5000;
	k.end = k.start + WL_DUR_A_NS / 100;
	k.contextId = 1;
	k.streamId = WL_STREAM;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 128;
	k.blockY = k.blockZ = 1;
	k.correlationId = corr;
	k.name = WL_KERNEL_A;
	plant_or_flush(&k);
	atomic_fetch_add(&launched, 1);
}

static void *launcher(void *arg)
{
	useconds_t pause = (useconds_t)(1e6 / threads_rate);

	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1000ul);	/* the pause, not the default 50 us more */
	while (now_s() < threads_until) {
		launch_shared();
		usleep(pause);
	}
	return NULL;
}

static void two_threads(unsigned int seconds, unsigned int rate)
{
	pthread_t t[2];

	threads_rate = rate ? rate : 1;
	threads_until = now_s() + seconds;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, launcher, NULL))
			die("pthread_create failed");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("launched %u\n", atomic_load(&launched));
}

static void copy(unsigned int j)
{
	CUpti_ActivityMemcpy6 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = WL_COPY_UNIT * (j + 1ull);
	m.start = mock.gpu_now();
	m.end = m.start + WL_COPY_NS;
	m.contextId = 1;
	m.streamId = WL_STREAM;
	m.correlationId = WL_CORR_COPY + j;
	plant(&m);
}

static unsigned int number(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || end == s || v > 100000)
		die("bad number");
	return (unsigned int)v;
}

static void handoff(unsigned int records)
{
	CUpti_ActivityKernel10 k;
	double best = 1e9, t0, t;
	int valid = 0, round;
	size_t before;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = WL_KERNEL_A;
	/* A round counts only if this flush delivered the records, not the
	 * bridge's own once-a-second flush before it. */
	for (round = 0; round < 20 && valid < 5; round++) {
		for (unsigned int i = 0; i < records; i++) {
			k.correlationId = i;
			k.start = mock.gpu_now();
			k.end = k.start + WL_DUR_A_NS;
			plant(&k);
		}
		before = mock.delivered();
		t0 = now_s();
		mock.flush(0);
		t = now_s() - t0;
		if (mock.delivered() - before != records)
			continue;
		valid++;
		if (t < best)
			best = t;
	}
	if (!valid)
		die("no flush of the planted records could be timed");
	printf("handoff: %u kernel records per flush, best of %d: %.1f us, %.1f ns per record\n", records, valid,
	       best * 1e6, best * 1e9 / records);
}

/* Launches for `seconds` while the tracer switches windows (see the
 * header): every kernel record CUPTI took is counted. */
static void windows(double seconds)
{
	struct timespec gap = { 0, WL_WIN_EVERY_US * 1000L };
	unsigned long launches = 0, planted = 0;
	double t0, took;

	mock.start_delivery(WL_WIN_DELIVERY_US, WL_WIN_HOLD_US);
	if (getenv("WL_OTHER_SUBSCRIBER")) {
		CUpti_SubscriberHandle other;

		/* another CUPTI client (a profiler) holds the subscriber */
		if (mock.subscribe(&other, NULL, NULL) != CUPTI_SUCCESS)
			die("the other client could not subscribe");
	}
	t0 = now_s();
	while (now_s() - t0 < seconds) {
		CUpti_ActivityKernel10 k;
		CUpti_ActivityAPI a;

		memset(&a, 0, sizeof(a));
		a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
		a.cbid = WL_CBID_LAUNCH;
		a.start = mock.gpu_now();
		if (cuLaunchKernel((CUfunction)(uintptr_t)0x1000, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL))
			die("cuLaunchKernel failed");
		mock.api_call(WL_CBID_LAUNCH);
		a.end = mock.gpu_now();
		a.processId = (uint32_t)getpid();
		a.threadId = (uint32_t)syscall(SYS_gettid);
		a.correlationId = (uint32_t)launches;
		mock.plant((const CUpti_Activity *)&a);
		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.start = mock.gpu_now() + 5000;
		k.end = k.start + WL_WIN_KERNEL_NS;
		k.streamId = WL_STREAM;
		k.correlationId = (uint32_t)launches;
		k.name = WL_KERNEL_A;
		/* CUPTI collecting slows the launching thread (its cost per
		 * launch, docs/overhead.md): the loop launches at half its pace
		 * inside the windows, the bias the busy time's extrapolation
		 * must not carry into the gaps */
		if (mock.plant_pending(&k) == 1) {
			planted++;
			nanosleep(&gap, NULL);
		}
		if (++launches % WL_WIN_FINISH_EVERY == 0)
			mock.complete_pending();
		nanosleep(&gap, NULL);
	}
	took = now_s() - t0;
	mock.complete_pending();
	printf("windows: planted %lu of %lu launches, true busy %.4f, finalizes %u, faults 0x%x\n", planted, launches,
	       launches * (WL_WIN_KERNEL_NS / 1e9) / took, mock.finalizes(), mock.faults());
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		usleep(100000);
	return NULL;
}

static void work(unsigned int kernels, unsigned int copies)
{
	unsigned int i;

	for (i = 0; i < kernels; i++)
		launch(i);
	for (i = 0; i < copies; i++)
		copy(i);
}

int main(int argc, char **argv)
{
	sigset_t set;
	double t;
	int sig, (*init)(void);
	void *bridge;
	bool dormant;

	setvbuf(stdout, NULL, _IONBF, 0);
	if ((argc == 4 && strcmp(argv[1], "injected") == 0) || (argc == 3 && strcmp(argv[1], "handoff") == 0) ||
	    (argc == 4 && strcmp(argv[1], "threads") == 0) ||
	    (argc == 3 && strcmp(argv[1], "windows") == 0) || (argc == 2 && strcmp(argv[1], "missing") == 0)) {
		const char *path = getenv("CUDA_INJECTION64_PATH");
		unsigned int i;

		if (!path)
			die("CUDA_INJECTION64_PATH is not set");
		if (argc >= 3)
			load_mock();
		else if (setenv("INFERSCOPE_CUPTI_LIB", "/nonexistent/libcupti.so.13", 1))
			die("setenv failed");
		bridge = dlopen(path, RTLD_NOW);
		if (!bridge)
			die(dlerror());
		*(void **)&init = dlsym(bridge, "InitializeInjection");
		if (!init || init() != 1)
			die("InitializeInjection failed");
		if (argc == 2) {
			for (i = 0; i < WL_KERNELS_MISSING; i++)
				if (cuLaunchKernel((CUfunction)(uintptr_t)0x1000, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
					die("cuLaunchKernel failed");
			usleep(WL_DORMANT_MS * 1000);
			return 0;
		}
		if (strcmp(argv[1], "windows") == 0) {
			windows(number(argv[2]));
			return 0;
		}
		if (!wait_until(all_enabled, 20))
			die("the bridge never enabled CUPTI activity");
		if (argc == 3)
			handoff(number(argv[2]));
		else if (strcmp(argv[1], "threads") == 0)
			two_threads(number(argv[2]), number(argv[3]));
		else
			work(number(argv[2]), number(argv[3]));
		return 0;
	}
	if (argc != 6 || strcmp(argv[1], "attach"))
		die("usage: cupti_workload injected KERNELS COPIES | handoff RECORDS | threads SECONDS RATE | "
		    "windows SECONDS | "
		    "attach BRIDGE|- KERNELS COPIES DROPPED | missing");

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	load_mock();
	if (strcmp(argv[2], "-") == 0) {
		const char *dev = getenv("WL_GPU_DEVICE");
		pthread_t t;

		if (dev && open(dev, O_RDONLY) < 0)
			die("cannot open $WL_GPU_DEVICE");
		if (pthread_create(&t, NULL, sleeper, NULL))
			die("pthread_create failed");
	} else if (!dlopen(argv[2], RTLD_NOW)) {
		die(dlerror());
	}
	usleep(WL_DORMANT_MS * 1000);
	dormant = mock.enabled() == 0 && mock.enable_calls() == 0;
	printf("ready\n");
	if (sigwait(&set, &sig))
		die("sigwait failed");
	t = now_s();
	if (!wait_until(all_enabled, 20))
		die("the bridge never enabled CUPTI activity");
	printf("enabled %.0f ms after the tracer was ready\n", (now_s() - t) * 1e3);
	mock.plant_dropped(number(argv[5]));	/* reported with the planted records' buffer */
	work(number(argv[3]), number(argv[4]));
	if (!wait_until(all_delivered, 20))
		die("the bridge never flushed the planted records");
	/* The tail: handed over by a later flush, at the latest the one the
	 * tracer asks for before it stops. */
	for (unsigned int i = 0; i < WL_TAIL_KERNELS; i++)
		launch(number(argv[3]) + i);
	printf("done\n");
	if (!wait_until(detached, 20))
		die("the bridge did not disable, flush and detach CUPTI after the tracer left");
	if (!dormant)
		die("the bridge enabled CUPTI activity before a tracer attached");
	if (mock.faults()) {
		fprintf(stderr, "cupti_workload: the detach broke CUPTI's rules: faults 0x%x\n", mock.faults());
		return 1;
	}
	return 0;
}
