// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUPTI attached and detached over and over inside a running CUDA process,
 * and where it crashes when it does: a shared library driven by
 * tests/gpu/cupti_detach.py (ctypes, in a PyTorch launch loop) and by
 * tests/gpu/mt_launch.c (threads launching through the driver API), built on
 * the GPU machine with gcc (cuda.h and cupti.h from the toolkit; libcupti is
 * dlopened). No tracer: this is CUPTI and the order of the calls alone.
 *
 *   cd_start(variant, window_ms, gap_ms, cycles)
 *       a thread that attaches CUPTI (the six activity kinds the bridge
 *       collects), lets it collect window_ms, detaches it as `variant`
 *       says, waits gap_ms, `cycles` times (0: until cd_stop)
 *   cd_stop(stats)   stops it after the cycle in progress; stats: cycles
 *       done, records, drain ms median / max, finalize wait ms median / max,
 *       forced flushes that handed back incomplete records, attach ms median
 *
 * Variant bits (the earlier attempt, reverted: 0 and CB; the bridge: ALL):
 *   CB       cuptiFinalize in the exit callback of the next driver or
 *            runtime API call of an application thread (a subscriber with
 *            both API domains enabled at the detach; one thread wins);
 *            without it, on the cycling thread right after the flush
 *   DRAIN    after disabling the kinds, default flushes until CUPTI handed
 *            back every buffer it took (at most 1 s), then the forced flush
 *   KEEP     buffers handed back by a forced flush are freed only once
 *            cuptiFinalize has returned
 *   QUIESCE  buffers asked for after the drain are one static buffer
 *            (nothing in it is read); the detach waits until no buffer
 *            completion callback runs
 *   UNSUB    cuptiUnsubscribe right before cuptiFinalize (CB only)
 *   WAIT100  100 ms between the flush and the finalize request
 *
 * A crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) writes a report to
 * stderr: the signal and faulting address, the instruction pointer as
 * library + offset with the bytes there and the registers, the faulting
 * thread's backtrace, then each other thread's (asked with a signal), with
 * its name and what this library had in flight on it (which CUPTI call, or
 * inside an API callback), and the detach step; then the process dies of
 * the signal as it would have. Preloaded with CD_CRASH_REPORT=1 in the
 * environment, the library only installs that report.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

enum {
	V_CB = 1,
	V_DRAIN = 2,
	V_KEEP = 4,
	V_QUIESCE = 8,
	V_UNSUB = 16,
	V_WAIT100 = 32,
};

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME,
};
#define NKINDS 6
#define BUF_BYTES (4u << 20)

static struct {
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind), (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*finalize)(void);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*tid_type)(CUpti_ActivityThreadIdType);
} cu;

/* --- what is in flight, per thread, for the crash report --------------------------- */

#define MAX_MARKS 64
static struct {
	_Atomic int tid;
	const char *_Atomic what;
} marks[MAX_MARKS];
static const char *_Atomic step = "idle";
static atomic_uint cycle_no;

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void mark(const char *what)
{
	int tid = gettid_();

	for (int i = 0; i < MAX_MARKS; i++) {
		int cur = atomic_load(&marks[i].tid);

		if (cur == tid || (cur == 0 && atomic_compare_exchange_strong(&marks[i].tid, &cur, tid))) {
			atomic_store(&marks[i].what, what);
			return;
		}
	}
}

static const char *mark_of(int tid)
{
	for (int i = 0; i < MAX_MARKS; i++)
		if (atomic_load(&marks[i].tid) == tid)
			return atomic_load(&marks[i].what);
	return NULL;
}

#define CALL(name, expr) ({ mark(name); CUptiResult r_ = (expr); mark(NULL); r_; })

/* --- the crash report ------------------------------------------------------------------ */

static atomic_int reporting, others_done;
static int report_lock;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0 && write(2, buf, (size_t)n) < 0)
		return;
}

static void lock_report(void)
{
	while (__atomic_exchange_n(&report_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void unlock_report(void)
{
	__atomic_store_n(&report_lock, 0, __ATOMIC_RELEASE);
}

static void thread_name(int tid, char *name, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	name[0] = 0;
	f = fopen(path, "r");
	if (f) {
		if (fgets(name, (int)len, f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
	}
}

static void where(const char *label, void *addr)
{
	Dl_info di;

	if (dladdr(addr, &di) && di.dli_fname)
		out("%s %p = %s+0x%lx (%s+0x%lx)\n", label, addr, di.dli_fname,
		    (unsigned long)((char *)addr - (char *)di.dli_fbase), di.dli_sname ? di.dli_sname : "?",
		    di.dli_saddr ? (unsigned long)((char *)addr - (char *)di.dli_saddr) : 0ul);
	else
		out("%s %p (no module)\n", label, addr);
}

static void backtrace_here(const char *who)
{
	void *frames[48];
	int n = backtrace(frames, 48);
	char name[32];

	thread_name(gettid_(), name, sizeof(name));
	lock_report();
	out("--- thread %d (%s) %s; in flight: %s\n", gettid_(), name, who,
	    mark_of(gettid_()) ? mark_of(gettid_()) : "nothing of ours");
	for (int i = 0; i < n; i++)
		where("  #", frames[i]);
	unlock_report();
}

static void on_peer_signal(int sig)
{
	(void)sig;
	backtrace_here("other thread");
	atomic_fetch_add(&others_done, 1);
}

static void on_crash(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	unsigned char *ip = (unsigned char *)g[REG_RIP];
	int self = gettid_(), asked = 0;
	DIR *d;
	struct dirent *de;

	if (atomic_exchange(&reporting, 1)) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	out("\n=== CRASH: signal %d (%s) at address %p, cycle %u, detach step: %s\n", sig, strsignal(sig),
	    si->si_addr, atomic_load(&cycle_no), atomic_load(&step));
	where("RIP", ip);
	out("bytes at RIP:");
	for (int i = 0; i < 16; i++)
		out(" %02x", ip[i]);
	out("\nRAX %llx RBX %llx RCX %llx RDX %llx RSI %llx RDI %llx RBP %llx RSP %llx\n"
	    "R8 %llx R9 %llx R10 %llx R11 %llx R12 %llx R13 %llx R14 %llx R15 %llx\n",
	    (unsigned long long)g[REG_RAX], (unsigned long long)g[REG_RBX], (unsigned long long)g[REG_RCX],
	    (unsigned long long)g[REG_RDX], (unsigned long long)g[REG_RSI], (unsigned long long)g[REG_RDI],
	    (unsigned long long)g[REG_RBP], (unsigned long long)g[REG_RSP], (unsigned long long)g[REG_R8],
	    (unsigned long long)g[REG_R9], (unsigned long long)g[REG_R10], (unsigned long long)g[REG_R11],
	    (unsigned long long)g[REG_R12], (unsigned long long)g[REG_R13], (unsigned long long)g[REG_R14],
	    (unsigned long long)g[REG_R15]);
	backtrace_here("FAULTING");
	d = opendir("/proc/self/task");
	while (d && (de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid > 0 && tid != self && !syscall(SYS_tgkill, getpid(), tid, SIGRTMIN + 3))
			asked++;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < 200 && atomic_load(&others_done) < asked; i++)
		usleep(5000);
	out("=== %d of %d other threads reported\n", atomic_load(&others_done), asked);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_crash_report(void)
{
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	void *warm[2];
	int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

	backtrace(warm, 2);	/* loads the unwinder now, not in the handler */
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_peer_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN + 3, &sa, NULL);
}

/* --- buffers ------------------------------------------------------------------------ */

static unsigned int variant;
static atomic_int quiesced;		/* QUIESCE: requests get the static buffer */
static atomic_int completing;		/* completion callbacks running */
static atomic_int buffers_out;		/* allocated buffers CUPTI holds */
static atomic_int keeping;		/* KEEP: inside the forced flush */
static atomic_ullong records, incomplete;
static uint8_t discard[1 << 16] __attribute__((aligned(8)));
#define MAX_KEPT 256
static uint8_t *kept[MAX_KEPT];
static atomic_int nkept;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	*max = 0;
	if (atomic_load(&quiesced)) {
		*buf = discard;
		*size = sizeof(discard);
		return;
	}
	*buf = aligned_alloc(8, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	if (*buf)
		atomic_fetch_add(&buffers_out, 1);
}

static void CUPTIAPI completed(CUcontext c, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)c, (void)stream, (void)size;
	atomic_fetch_add(&completing, 1);
	mark("buffer completion callback");
	if (buf == discard)
		goto done;
	while (cu.next(buf, valid, &r) == CUPTI_SUCCESS) {
		atomic_fetch_add(&records, 1);
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const void *)r;

			if (!k->start || !k->end)
				atomic_fetch_add(&incomplete, 1);
		}
	}
	atomic_fetch_sub(&buffers_out, 1);
	if (atomic_load(&keeping)) {
		int i = atomic_fetch_add(&nkept, 1);

		if (i < MAX_KEPT) {
			kept[i] = buf;
			goto done;
		}
	}
	free(buf);
done:
	mark(NULL);
	atomic_fetch_sub(&completing, 1);
}

/* --- finalize in an API exit callback ----------------------------------------------- */

static CUpti_SubscriberHandle sub;
static atomic_int fin_request, fin_claimed, fin_done;
static atomic_llong fin_tid;

static void CUPTIAPI api_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;

	(void)ud, (void)cbid;
	if ((domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) ||
	    cb->callbackSite != CUPTI_API_EXIT || !atomic_load(&fin_request) || atomic_exchange(&fin_claimed, 1))
		return;
	mark("api exit callback: finalizing");
	atomic_store(&step, "finalize (in an API exit callback)");
	if (variant & V_UNSUB)
		CALL("cuptiUnsubscribe", cu.unsubscribe(sub));
	CALL("cuptiFinalize", cu.finalize());
	atomic_store(&fin_tid, gettid_());
	atomic_store(&fin_done, 1);
	mark(NULL);
}

/* --- the cycles ---------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#define MAX_CYCLES 4096
static struct {
	pthread_t th;
	atomic_bool stop;
	unsigned int window_ms, gap_ms, cycles;
	unsigned int done;
	double drain_ms[MAX_CYCLES], fin_ms[MAX_CYCLES], attach_ms[MAX_CYCLES];
	unsigned int forced_incomplete;
	int error;
} cy;

static int attach(void)
{
	uint64_t t0 = now_ns();

	atomic_store(&step, "attach");
	atomic_store(&quiesced, 0);
	if (variant & V_CB) {
		if (CALL("cuptiSubscribe", cu.subscribe(&sub, api_callback, NULL)) != CUPTI_SUCCESS)
			return -1;
	}
	if (CALL("cuptiSetThreadIdType", cu.tid_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS ||
	    CALL("cuptiActivityRegisterCallbacks", cu.reg(requested, completed)) != CUPTI_SUCCESS)
		return -2;
	for (int i = 0; i < NKINDS; i++)
		if (CALL("cuptiActivityEnable", cu.enable(kinds[i])) != CUPTI_SUCCESS)
			return -3;
	cy.attach_ms[cy.done] = (double)(now_ns() - t0) / 1e6;
	atomic_store(&step, "collecting");
	return 0;
}

static int detach(void)
{
	uint64_t t0 = now_ns(), t1;
	unsigned long long before = atomic_load(&incomplete);

	atomic_store(&step, "disable");
	for (int i = 0; i < NKINDS; i++)
		CALL("cuptiActivityDisable", cu.disable(kinds[i]));
	if (variant & V_DRAIN) {
		atomic_store(&step, "drain (default flushes)");
		while (atomic_load(&buffers_out) > 0 && now_ns() - t0 < 1000000000ull) {
			CALL("cuptiActivityFlushAll(0)", cu.flush(0));
			if (atomic_load(&buffers_out) > 0)
				sleep_ms(2);
		}
	}
	atomic_store(&step, "forced flush");
	atomic_store(&keeping, (variant & V_KEEP) != 0);
	CALL("cuptiActivityFlushAll(FORCED)", cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	if (atomic_load(&incomplete) != before)
		cy.forced_incomplete++;
	if (variant & V_QUIESCE) {
		atomic_store(&quiesced, 1);
		atomic_store(&step, "wait for completion callbacks");
		while (atomic_load(&completing))
			sched_yield();
	}
	cy.drain_ms[cy.done] = (double)(now_ns() - t0) / 1e6;
	if (variant & V_WAIT100)
		sleep_ms(100);
	t1 = now_ns();
	if (variant & V_CB) {
		atomic_store(&step, "finalize requested (API domains on)");
		atomic_store(&fin_claimed, 0);
		atomic_store(&fin_done, 0);
		atomic_store(&fin_request, 1);
		CALL("cuptiEnableDomain(DRIVER)", cu.domain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
		CALL("cuptiEnableDomain(RUNTIME)", cu.domain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
		while (!atomic_load(&fin_done) && !atomic_load(&cy.stop))
			usleep(200);
		atomic_store(&fin_request, 0);
		if (!atomic_load(&fin_done))
			return -1;
		/* other threads may still be inside CUPTI's callback dispatch */
		sleep_ms(50);
	} else {
		atomic_store(&step, "finalize (on the cycling thread)");
		CALL("cuptiFinalize", cu.finalize());
	}
	cy.fin_ms[cy.done] = (double)(now_ns() - t1) / 1e6;
	atomic_store(&keeping, 0);
	for (int i = 0, n = atomic_exchange(&nkept, 0); i < n && i < MAX_KEPT; i++)
		free(kept[i]);
	atomic_store(&step, "detached");
	return 0;
}

static void *cycler(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "cupti-cycler");
	while (!atomic_load(&cy.stop) && (!cy.cycles || cy.done < cy.cycles) && cy.done < MAX_CYCLES) {
		atomic_store(&cycle_no, cy.done);
		if ((cy.error = attach()) != 0)
			break;
		sleep_ms(cy.window_ms);
		if ((cy.error = detach()) != 0)
			break;
		cy.done++;
		sleep_ms(cy.gap_ms);
	}
	return NULL;
}

/* Preloaded (LD_PRELOAD) with CD_CRASH_REPORT set: only the crash report,
 * for a process that detaches CUPTI some other way. */
__attribute__((constructor)) static void cd_preload(void)
{
	if (getenv("CD_CRASH_REPORT"))
		install_crash_report();
}

#define SYM(h, f, name)                                                   \
	do {                                                              \
		*(void **)&cu.f = dlsym(h, name);                         \
		if (!cu.f) {                                              \
			fprintf(stderr, "cupti_detach: no %s\n", name);   \
			return -1;                                        \
		}                                                         \
	} while (0)

EXPORT int cd_start(unsigned int v, unsigned int window_ms, unsigned int gap_ms, unsigned int cycles)
{
	const char *lib = getenv("INFERSCOPE_CUPTI_LIB");
	void *h = dlopen(lib ? lib : "libcupti.so.13", RTLD_NOW | RTLD_GLOBAL);

	if (!h) {
		fprintf(stderr, "cupti_detach: %s\n", dlerror());
		return -1;
	}
	SYM(h, reg, "cuptiActivityRegisterCallbacks");
	SYM(h, enable, "cuptiActivityEnable");
	SYM(h, disable, "cuptiActivityDisable");
	SYM(h, flush, "cuptiActivityFlushAll");
	SYM(h, next, "cuptiActivityGetNextRecord");
	SYM(h, finalize, "cuptiFinalize");
	SYM(h, subscribe, "cuptiSubscribe");
	SYM(h, unsubscribe, "cuptiUnsubscribe");
	SYM(h, domain, "cuptiEnableDomain");
	SYM(h, tid_type, "cuptiSetThreadIdType");
	install_crash_report();
	variant = v;
	memset(&cy, 0, sizeof(cy));
	cy.window_ms = window_ms;
	cy.gap_ms = gap_ms;
	cy.cycles = cycles;
	return pthread_create(&cy.th, NULL, cycler, NULL) ? -1 : 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* stats: cycles, records, drain median, drain max, finalize median,
 * finalize max, forced flushes with incomplete records, attach median,
 * error (0: none) */
EXPORT int cd_stop(double *stats)
{
	unsigned int n;

	atomic_store(&cy.stop, true);
	pthread_join(cy.th, NULL);
	n = cy.done;
	memset(stats, 0, 9 * sizeof(double));
	stats[0] = n;
	stats[1] = (double)atomic_load(&records);
	if (n) {
		qsort(cy.drain_ms, n, sizeof(double), cmp_d);
		qsort(cy.fin_ms, n, sizeof(double), cmp_d);
		qsort(cy.attach_ms, n, sizeof(double), cmp_d);
		stats[2] = cy.drain_ms[n / 2];
		stats[3] = cy.drain_ms[n - 1];
		stats[4] = cy.fin_ms[n / 2];
		stats[5] = cy.fin_ms[n - 1];
		stats[7] = cy.attach_ms[n / 2];
	}
	stats[6] = cy.forced_incomplete;
	stats[8] = cy.error;
	return 0;
}
