// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUDA driver API tracing, for real: uprobes on the stand-in libcuda.so.1
 * (tests/standin/) in the workload tests/workloads/cuda_calls.c, which
 * calls every probed function as tests/standin/cuda_plan.h plans. Counts
 * and device memory are checked through the JSON report; the arguments of
 * every single call, which the report does not show, through the recording
 * itself (analysis/read/recording.h).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "alias_learn.h"
#include "harness.h"
#include "recording.h"
#include "cuda_plan.h"

struct checker;

struct ctx {
	struct th_files f;
	pid_t spawned[2];	/* workload, tracer: stopped by teardown if a test fails */
	struct checker *ck;
	json_t *report;		/* freed by teardown, also when an assertion failed */
};

struct func_info {
	const char *name;
	__u8 family, aux;
	__u16 flags;
};

#define FUNC_INFO(id, sym, fam, aux, flags) [id] = { #sym, fam, aux, flags },
static const struct func_info funcs[ISR_CUDA_FN_MAX] = { ISR_CUDA_FUNCS(FUNC_INFO) };
#undef FUNC_INFO

#define FN(sym) ISR_CUDA_FN_##sym
#define CU_SUCCESS 0
#define CU_ERROR_INVALID_VALUE 1
#define CU_ERROR_NOT_READY 600

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	int i;

	for (i = 0; i < 2; i++)
		th_reap(c->spawned[i]);
	th_rmrf(c->f.dir);
	free(c->ck);
	json_decref(c->report);
	free(c);
	return 0;
}

static bool family_returns(__u8 fam)
{
	return fam >= ISR_CUDA_FAM_SYNC || fam == ISR_CUDA_FAM_COPY;
}

static __u64 expected_status(unsigned int f, unsigned int i)
{
	if (f == FN(cuMemAlloc_v2) && i + 1 == plan_calls[f])
		return CU_ERROR_INVALID_VALUE;
	if (f == FN(cuStreamQuery) && i + PLAN_NOT_READY_CALLS >= plan_calls[f])
		return CU_ERROR_NOT_READY;
	return CU_SUCCESS;
}

/* Device memory the plan allocates (peak: everything is allocated before
 * the first free) and still holds at its end. */
static void plan_device_memory(__u64 *peak, __u64 *live)
{
	static const unsigned int allocs[] = { FN(cuMemAlloc_v2), FN(cuMemAllocAsync), FN(cuMemAllocAsync_ptsz),
					       FN(cuMemAllocManaged), FN(cuMemCreate) };
	unsigned int i, k;

	*peak = 0;
	for (k = 0; k < sizeof(allocs) / sizeof(allocs[0]); k++)
		for (i = 0; i < plan_calls[allocs[k]]; i++)
			*peak += plan_alloc_bytes(allocs[k], i);
	*live = *peak;
	for (i = 0; i < plan_calls[FN(cuMemFree_v2)]; i++)
		*live -= plan_alloc_bytes(FN(cuMemAlloc_v2), i);
	for (i = 0; i < plan_calls[FN(cuMemFreeAsync)]; i++)
		*live -= plan_alloc_bytes(FN(cuMemAllocAsync), i);
	for (i = 0; i < plan_calls[FN(cuMemFreeAsync_ptsz)]; i++)
		*live -= plan_alloc_bytes(FN(cuMemAllocAsync_ptsz), i);
	for (i = 0; i < plan_calls[FN(cuMemRelease)]; i++)
		*live -= plan_alloc_bytes(FN(cuMemCreate), i);
}

/* --- the recording, call by call ------------------------------------------ */

#define MAX_HANDLES 256

struct checker {
	__u32 pid;
	unsigned int seen[ISR_CUDA_FN_MAX];
	__u64 handles[MAX_HANDLES];	/* learned kernel handles ... */
	const char *names[MAX_HANDLES];	/* ... and their names */
	size_t nhandles;
	__u64 addr[ISR_CUDA_FN_MAX][128];	/* allocations by function and call */
	__u32 launch_tid[128];		/* cuLaunchKernel call -> thread */
	unsigned int failures;
	unsigned int sync_calls, sync_slow;	/* timed calls, and those past the tight bound */
};

static void mismatch(struct checker *ck, unsigned int f, unsigned int i, const char *what, __u64 got, __u64 want)
{
	if (ck->failures++ < 20)
		print_error("%s call %u: %s is %#llx, planted %#llx\n", funcs[f].name, i, what,
			    (unsigned long long)got, (unsigned long long)want);
}

#define EXPECT(what, got, want)                                         \
	do {                                                            \
		if ((__u64)(got) != (__u64)(want))                      \
			mismatch(ck, f, i, what, (got), (want));        \
	} while (0)

static const char *handle_name(const struct checker *ck, __u64 h)
{
	size_t k;

	for (k = 0; k < ck->nhandles; k++)
		if (ck->handles[k] == h)
			return ck->names[k];
	return NULL;
}

static void check_name_event(struct checker *ck, const struct isr_ev_cuda_name *e)
{
	unsigned int f = e->func, i;
	const char *want = NULL;
	__u64 handle = 0, owner = 0;

	assert_true(f < ISR_CUDA_FN_MAX);
	i = ck->seen[f]++;
	switch (f) {
	case FN(cuLibraryGetKernel):
		handle = STANDIN_KERNEL_BASE + 0x100ULL * i;
		owner = PLAN_LIBRARY;
		want = plan_kernel_names[i % 4];
		break;
	case FN(cuModuleGetFunction):
		handle = STANDIN_FUNCTION_BASE + 0x100ULL * i;
		owner = PLAN_MODULE;
		want = plan_function_names[i % 3];
		break;
	case FN(cuKernelGetFunction):
		owner = STANDIN_KERNEL_BASE + 0x100ULL * i;
		handle = owner | STANDIN_ALIAS_BIT;
		break;
	default:
		mismatch(ck, f, i, "a name event from a function that names nothing", f, 0);
		return;
	}
	EXPECT("handle", e->handle, handle);
	EXPECT("owner", e->owner, owner);
	if (want ? strcmp(e->name, want) != 0 : e->name[0] != 0) {
		if (ck->failures++ < 20)
			print_error("%s call %u: name \"%s\", planted \"%s\"\n", funcs[f].name, i, e->name,
				    want ? want : "");
	}
	if (ck->nhandles < MAX_HANDLES) {
		/* An alias is named after the kernel it came from. */
		ck->handles[ck->nhandles] = e->handle;
		ck->names[ck->nhandles++] = want ? want : handle_name(ck, e->owner);
	}
}

static void check_launch(struct checker *ck, const struct isr_ev_cuda_call *e, unsigned int f, unsigned int i)
{
	const char *name = handle_name(ck, e->args[0]);

	EXPECT("function handle", e->args[0], plan_launch_handle(i));
	if (!name || strcmp(name, plan_launch_name(i)) != 0) {
		if (ck->failures++ < 20)
			print_error("%s call %u: kernel %#llx is named \"%s\" by the name events, planted \"%s\"\n",
				    funcs[f].name, i, (unsigned long long)e->args[0], name ? name : "(none)",
				    plan_launch_name(i));
	}
	EXPECT("grid x | y", e->args[1], PLAN_GRID_X(f) | (__u64)PLAN_GRID_Y(f) << 32);
	EXPECT("grid z | block x", e->args[2], PLAN_GRID_Z(f) | (__u64)PLAN_BLOCK_X(f) << 32);
	EXPECT("block y | z", e->args[3], PLAN_BLOCK_Y(f) | (__u64)PLAN_BLOCK_Z(f) << 32);
	EXPECT("shared bytes", e->args[4], PLAN_SHARED(f));
	EXPECT("stream", e->args[5], PLAN_STREAM(f));
	if (f == FN(cuLaunchKernel) && i < 128)
		ck->launch_tid[i] = e->hdr.tid;
}

static __u64 nd_direction(unsigned int f)
{
	switch (f) {
	case FN(cuMemcpy2D_v2):		return ISR_COPY_HTOD;
	case FN(cuMemcpy2DAsync_v2):	return ISR_COPY_DTOH;
	case FN(cuMemcpy3D_v2):		return ISR_COPY_DTOD;
	default:			return ISR_COPY_DEFAULT;	/* host to unified */
	}
}

static __u64 set_value(unsigned int elem)
{
	return elem == 1 ? PLAN_SET_VALUE8 : elem == 2 ? PLAN_SET_VALUE16 : PLAN_SET_VALUE32;
}

static void check_sync(struct checker *ck, const struct isr_ev_cuda_call *e, unsigned int f, unsigned int i)
{
	double ms = plan_sync_sleep_ms(f), got = e->duration_ns / 1e6;
	__u64 handle = PLAN_SYNC_HANDLE(f);

	if (f == FN(cuCtxSynchronize))
		handle = 0;
	else if (f == FN(cuCtxSynchronize_v2))
		handle = PLAN_CTX;
	else if (f == FN(cuStreamQuery) && expected_status(f, i))
		handle = PLAN_BUSY_STREAM;
	EXPECT("handle", e->args[0], handle);
	EXPECT("second handle", e->args[1],
	       f == FN(cuStreamWaitEvent) || f == FN(cuStreamWaitEvent_ptsz) ? PLAN_WAIT_EVENT(f) : 0);
	/* A sleep never ends early; it can end late when the 2-core machine
	 * is busy (the sanitized tracer runs beside the workload). Every call
	 * must be within -20% / +50 ms, and at least 90% of them within
	 * +-20% + 2 ms. */
	ck->sync_calls++;
	if (got > ms * 1.2 + 2)
		ck->sync_slow++;
	if (got < ms * 0.8 || got > ms * 1.2 + 50) {
		if (ck->failures++ < 20)
			print_error("%s call %u: took %.3f ms, planted %.0f ms (-20%% / +50 ms)\n", funcs[f].name, i,
				    got, ms);
	}
}

static void check_alloc(struct checker *ck, const struct isr_ev_cuda_call *e, unsigned int f, unsigned int i)
{
	bool host = funcs[f].aux == ISR_ALLOC_HOST;
	__u64 flags = f == FN(cuMemAllocManaged) ? PLAN_MANAGED_FLAGS :
		      f == FN(cuMemHostAlloc)	 ? PLAN_HOSTALLOC_FLAGS : 0;

	if (expected_status(f, i)) {
		EXPECT("address of a failed allocation", e->args[0], 0);
	} else if (!e->args[0] || (host ? e->args[0] < STANDIN_HOSTPTR_BASE || e->args[0] >= STANDIN_DEVPTR_BASE :
				       e->args[0] < STANDIN_DEVPTR_BASE)) {
		mismatch(ck, f, i, "address (not one the stand-in hands out)", e->args[0],
			 host ? STANDIN_HOSTPTR_BASE : STANDIN_DEVPTR_BASE);
	}
	if (i < 128)
		ck->addr[f][i] = e->args[0];
	EXPECT("bytes", e->args[1], plan_alloc_bytes(f, i));
	EXPECT("flags", e->args[2], flags);
	EXPECT("kind", e->args[3], funcs[f].aux);
	EXPECT("stream", e->args[5], funcs[f].flags & ISR_CUDA_ASYNC ? PLAN_ALLOC_STREAM : 0);
}

static void check_free(struct checker *ck, const struct isr_ev_cuda_call *e, unsigned int f, unsigned int i)
{
	__u64 want;

	switch (f) {
	case FN(cuMemFree_v2):
		want = ck->addr[FN(cuMemAlloc_v2)][i];
		break;
	case FN(cuMemFreeAsync):
		want = ck->addr[FN(cuMemAllocAsync)][i];
		break;
	case FN(cuMemFreeAsync_ptsz):
		want = ck->addr[FN(cuMemAllocAsync_ptsz)][i];
		break;
	default:
		want = i < plan_calls[FN(cuMemAllocHost_v2)] ?
			       ck->addr[FN(cuMemAllocHost_v2)][i] :
			       ck->addr[FN(cuMemHostAlloc)][i - plan_calls[FN(cuMemAllocHost_v2)]];
		break;
	}
	EXPECT("address (the allocation freed)", e->args[0], want);
	EXPECT("kind", e->args[3], funcs[f].aux);
	EXPECT("stream", e->args[5], funcs[f].flags & ISR_CUDA_ASYNC ? PLAN_ALLOC_STREAM : 0);
}

static void check_call(struct checker *ck, const struct isr_ev_cuda_call *e)
{
	unsigned int f = e->func, i;
	__u8 fam;

	assert_true(f > 0 && f < ISR_CUDA_FN_MAX);
	i = ck->seen[f]++;
	fam = funcs[f].family;
	EXPECT("flags", e->flags, funcs[f].flags | (family_returns(fam) ? ISR_CUDA_RETURNED : 0));
	EXPECT("status", (__u64)(__s64)e->status, expected_status(f, i));
	if (!family_returns(fam))
		EXPECT("duration of an entry-only call", e->duration_ns, 0);
	switch (fam) {
	case ISR_CUDA_FAM_LAUNCH:
	case ISR_CUDA_FAM_LAUNCH_EX:
		check_launch(ck, e, f, i);
		break;
	case ISR_CUDA_FAM_GRAPH:
		EXPECT("graph exec", e->args[0], PLAN_SYNC_HANDLE(f));
		EXPECT("stream", e->args[5], PLAN_STREAM(f));
		break;
	case ISR_CUDA_FAM_COPY:
	case ISR_CUDA_FAM_COPY_SYNC:
	case ISR_CUDA_FAM_COPY_PEER:
		EXPECT("dst", e->args[0], PLAN_COPY_DST(f, i));
		EXPECT("src", e->args[1], PLAN_COPY_SRC(f, i));
		EXPECT("bytes", e->args[2], PLAN_COPY_BYTES(f, i));
		EXPECT("direction", e->args[3], funcs[f].aux);
		EXPECT("stream", e->args[5], funcs[f].flags & ISR_CUDA_ASYNC ? PLAN_STREAM(f) : 0);
		break;
	case ISR_CUDA_FAM_COPY_2D:
	case ISR_CUDA_FAM_COPY_3D:
		EXPECT("dst", e->args[0], PLAN_COPY_DST(f, i));
		EXPECT("src", e->args[1], PLAN_COPY_SRC(f, i));
		EXPECT("bytes", e->args[2], (__u64)PLAN_COPY_WIDTH(f) * PLAN_COPY_HEIGHT *
						    (fam == ISR_CUDA_FAM_COPY_3D ? PLAN_COPY_DEPTH(i) : 1));
		EXPECT("direction", e->args[3], nd_direction(f));
		EXPECT("stream", e->args[5], funcs[f].flags & ISR_CUDA_ASYNC ? PLAN_STREAM(f) : 0);
		break;
	case ISR_CUDA_FAM_SET:
		EXPECT("dst", e->args[0], PLAN_COPY_DST(f, i));
		EXPECT("value", e->args[1], set_value(funcs[f].aux));
		EXPECT("bytes", e->args[2], PLAN_SET_COUNT(f, i) * funcs[f].aux);
		EXPECT("stream", e->args[5], funcs[f].flags & ISR_CUDA_ASYNC ? PLAN_STREAM(f) : 0);
		break;
	case ISR_CUDA_FAM_SYNC:
		check_sync(ck, e, f, i);
		break;
	case ISR_CUDA_FAM_ALLOC:
		check_alloc(ck, e, f, i);
		break;
	case ISR_CUDA_FAM_FREE:
		check_free(ck, e, f, i);
		break;
	case ISR_CUDA_FAM_VMM_CREATE:
		EXPECT("handle", e->args[0], STANDIN_VMM_BASE + i);
		EXPECT("size", e->args[1], plan_alloc_bytes(f, i));
		break;
	case ISR_CUDA_FAM_VMM_RELEASE:
		EXPECT("handle", e->args[0], STANDIN_VMM_BASE + i);
		break;
	case ISR_CUDA_FAM_VMM_MAP:
		EXPECT("address", e->args[0], PLAN_VMM_VA(i));
		EXPECT("size", e->args[1], 0x200000);
		EXPECT("offset", e->args[2], 0);
		EXPECT("handle", e->args[3], STANDIN_VMM_BASE + i % plan_calls[FN(cuMemCreate)]);
		break;
	case ISR_CUDA_FAM_VMM_UNMAP:
		EXPECT("address", e->args[0], PLAN_VMM_VA(i));
		EXPECT("size", e->args[1], 0x200000);
		break;
	case ISR_CUDA_FAM_REGISTER:
		EXPECT("address", e->args[0], PLAN_REGISTER_ADDR(f, i));
		EXPECT("bytes", e->args[1], PLAN_REGISTER_BYTES(i));
		EXPECT("flags", e->args[2], PLAN_REGISTER_FLAGS);
		break;
	case ISR_CUDA_FAM_UNREGISTER:
		EXPECT("address (the range registered)", e->args[0], plan_unregister_addr(i));
		break;
	default:
		mismatch(ck, f, i, "family", fam, 0);
		break;
	}
}

/* Every CUDA event of the recording is a planted call of pid, with the
 * planted arguments, and every planted call is there exactly once. */
static void check_recording(const char *isr, __u32 pid, struct checker *ck)
{
	struct recording *rec;
	char err[512];
	size_t k;
	unsigned int f;

	memset(ck, 0, sizeof(*ck));
	ck->pid = pid;
	if (recording__load(isr, &rec, err, sizeof(err))) {
		print_error("cannot load %s: %s\n", isr, err);
		fail();
	}
	recording__sort_events(rec);
	/* Names first: a launch is checked against the name of its handle. */
	for (k = 0; k < rec->event_count; k++) {
		const struct isr_ev_hdr *h = rec->events[k];

		if (h->type == ISR_EV_CUDA_NAME) {
			assert_int_equal(h->pid, pid);
			check_name_event(ck, (const struct isr_ev_cuda_name *)h);
		}
	}
	for (k = 0; k < rec->event_count; k++) {
		const struct isr_ev_hdr *h = rec->events[k];

		if (h->type == ISR_EV_CUDA_CALL) {
			assert_int_equal(h->pid, pid);
			check_call(ck, (const struct isr_ev_cuda_call *)h);
		}
	}
	for (f = 1; f < ISR_CUDA_FN_MAX; f++) {
		if (ck->seen[f] != plan_calls[f] && ck->failures++ < 40)
			print_error("%s: %u calls in the recording, %u planted\n", funcs[f].name, ck->seen[f],
				    plan_calls[f]);
	}
	for (f = 0; f < ISR_SRC_MAX; f++)
		assert_int_equal(rec->drops[f], 0);
	recording__free(rec);
	if (ck->sync_slow * 10 > ck->sync_calls)
		print_error("%u of %u timed calls took more than +20%% + 2 ms\n", ck->sync_slow, ck->sync_calls);
	assert_true(ck->sync_calls > 0);
	assert_true(ck->sync_slow * 10 <= ck->sync_calls);
	assert_int_equal(ck->failures, 0);
}

/* event_counts has every planted call under its function's name, and the
 * process entry the planted device memory. */
static void check_report(const char *isr, __u32 pid, bool alive_at_end)
{
	json_t *r = th_report(isr), *p, *procs;
	unsigned int f, bad = 0;
	__u64 peak, live;
	size_t k;

	for (f = 1; f < ISR_CUDA_FN_MAX; f++) {
		long long n = th_count(r, funcs[f].name);

		if (n != plan_calls[f] && bad++ < 20)
			print_error("event_counts[\"%s\"] = %lld, planted %u\n", funcs[f].name, n, plan_calls[f]);
	}
	plan_device_memory(&peak, &live);
	procs = json_object_get(r, "processes");
	json_array_foreach(procs, k, p) {
		if (th_num(p, "pid") != pid)
			continue;
		if (th_num(p, "device_memory_peak_bytes") != (double)peak && bad++ < 20)
			print_error("device_memory_peak_bytes = %.0f, planted %llu\n",
				    th_num(p, "device_memory_peak_bytes"), (unsigned long long)peak);
		if (th_num(p, "device_memory_live_bytes") != (double)(alive_at_end ? live : 0) && bad++ < 20)
			print_error("device_memory_live_bytes = %.0f, planted %llu\n",
				    th_num(p, "device_memory_live_bytes"),
				    (unsigned long long)(alive_at_end ? live : 0));
		break;
	}
	if (k == json_array_size(procs) && bad++ < 20)
		print_error("pid %u is not in report[\"processes\"]\n", pid);
	json_decref(r);
	assert_int_equal(bad, 0);
}

/* The plan itself: a count appears once, so a call counted under the wrong
 * function cannot go unnoticed. */
static void test_plan_counts_are_distinct(void **state)
{
	unsigned int f, g;

	(void)state;
	for (f = 1; f < ISR_CUDA_FN_MAX; f++) {
		assert_true(plan_calls[f] > 0);
		for (g = f + 1; g < ISR_CUDA_FN_MAX; g++)
			assert_int_not_equal(plan_calls[f], plan_calls[g]);
	}
	assert_int_equal(plan_calls[FN(cuLibraryGetKernel)], PLAN_NR_KERNELS);
	assert_int_equal(plan_calls[FN(cuModuleGetFunction)], PLAN_NR_FUNCTIONS);
	assert_int_equal(plan_calls[FN(cuKernelGetFunction)], PLAN_NR_ALIASES);
}

/* `-- CMD`: the command maps libcuda through its RUNPATH at exec, after the
 * probes were attached by path; every call is there, exactly. */
static void launched_exact_calls(void **state, const char *mode)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, (char *)mode, "--", CUDA_WORKLOAD, NULL };
	struct checker *ck = c->ck = calloc(1, sizeof(*ck));
	struct recording *rec;
	char err[512];
	__u32 pid = 0;
	size_t k;

	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	assert_int_equal(recording__load(c->f.isr, &rec, err, sizeof(err)), 0);
	for (k = 0; k < rec->process_count; k++)
		if (rec->processes[k].origin == ISR_ORIGIN_LAUNCHED)
			pid = rec->processes[k].pid;
	recording__free(rec);
	assert_int_not_equal(pid, 0);
	check_recording(c->f.isr, pid, ck);
	check_report(c->f.isr, pid, false);
}

/* --budget off: every call is probed, whatever one probe hit costs on this
 * machine (the budget's sampling has tests of its own below). */
static void test_launched_exact_calls(void **state)
{
	launched_exact_calls(state, "--budget=off");
}

/* The same with one perf-event uprobe per function, as on kernels before
 * uprobe_multi (Linux 6.6). */
static void test_launched_exact_calls_legacy(void **state)
{
	launched_exact_calls(state, "--legacy-uprobes");
}

/* -p on a running process: per-process uprobes see every call, from the
 * thread that existed before the attach and from the one created after. */
static void test_attached_exact_calls(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { CUDA_WORKLOAD, "--wait-signal", NULL };
	struct checker *ck = c->ck = calloc(1, sizeof(*ck));
	char ready[512], pidstr[32], buf[8];
	unsigned int j;
	int out_fd, status;
	pid_t wpid, tpid;

	wpid = c->spawned[0] = th_spawn(wl, &out_fd, NULL);
	assert_true(read(out_fd, buf, 6) == 6); /* "ready\n": the early thread exists */
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--budget", "off",
				 "--ready-file", ready, NULL };

		tpid = c->spawned[1] = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	kill(wpid, SIGUSR1);
	assert_true(read(out_fd, buf, 5) == 5); /* "done\n": every call made, memory still held */
	close(out_fd);
	kill(tpid, SIGINT);
	assert_int_equal(waitpid(tpid, &status, 0), tpid);
	th_expect_exit(status, 0, c->f.err);
	kill(wpid, SIGUSR1);
	assert_int_equal(waitpid(wpid, &status, 0), wpid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	check_recording(c->f.isr, (__u32)wpid, ck);
	/* Launches 0..49 from the early thread, 50..100 from the late one. */
	for (j = 0; j < plan_calls[FN(cuLaunchKernel)]; j++) {
		assert_int_not_equal(ck->launch_tid[j], (__u32)wpid);
		if (j < PLAN_LAUNCHES_EARLY_THREAD)
			assert_int_equal(ck->launch_tid[j], ck->launch_tid[0]);
		else
			assert_int_equal(ck->launch_tid[j], ck->launch_tid[PLAN_LAUNCHES_EARLY_THREAD]);
	}
	assert_int_not_equal(ck->launch_tid[0], ck->launch_tid[PLAN_LAUNCHES_EARLY_THREAD]);
	check_report(c->f.isr, (__u32)wpid, true);
}

/* Starts a workload that prints "ready" and waits for SIGUSR1, attaches
 * the tracer to it with -p (without -q: the tests read its notices), lets
 * it run to its end and waits for both: both must exit 0. Returns the
 * workload's pid. */
static pid_t record_attached(struct ctx *c, char **wl)
{
	char ready[512], pidstr[32], buf[8];
	int out_fd, status;
	pid_t wpid, tpid;

	wpid = c->spawned[0] = th_spawn(wl, &out_fd, NULL);
	assert_true(read(out_fd, buf, 6) == 6);
	close(out_fd);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-o", c->f.isr, "-p", pidstr, "--budget", "off", "--ready-file",
				 ready, NULL };

		tpid = c->spawned[1] = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	kill(wpid, SIGUSR1);
	assert_int_equal(waitpid(wpid, &status, 0), wpid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(tpid, &status, 0), tpid);
	th_expect_exit(status, 0, c->f.err);
	return wpid;
}

/* A process with no libcuda is traced CPU-only, and says so. */
static void test_process_without_libcuda(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { WORKLOAD, "--wait-signal", "sleep", NULL };
	char line[160];
	pid_t wpid;
	char *e;
	json_t *r;

	wpid = record_attached(c, wl);
	e = th_slurp(c->f.err);
	snprintf(line, sizeof(line),
		 "pid %d has no CUDA driver library mapped: tracing CPU only (it will be traced if it loads one)\n",
		 wpid);
	if (!e || !strstr(e, line)) {
		print_error("stderr lacks \"%s\":\n%s\n", line, e ? e : "");
		fail();
	}
	free(e);
	r = th_report(c->f.isr);
	assert_non_null(th_thread(r, "sleeper"));
	assert_int_equal(th_count(r, "cuLaunchKernel"), 0);
	json_decref(r);
}

/* libcuda loaded with dlopen after the attach (as PyTorch loads it): the
 * once-a-second rescan finds it, says so, and every call made after that is
 * counted. */
static void test_libcuda_loaded_later(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { "build/tests/workloads/cuda_dlopen", STANDIN_LIBCUDA, "77", NULL };
	char line[160];
	pid_t wpid;
	char *e;
	json_t *r;

	wpid = record_attached(c, wl);
	e = th_slurp(c->f.err);
	snprintf(line, sizeof(line), "pid %d loaded ", wpid);
	if (!e || !strstr(e, line) || !strstr(e, "after tracing began")) {
		print_error("stderr lacks the late-attach line for pid %d:\n%s\n", wpid, e ? e : "");
		fail();
	}
	free(e);
	r = th_report(c->f.isr);
	assert_int_equal(th_count(r, "cuLaunchKernel"), 77);
	json_decref(r);
}

/* The line --list-probes prints for func, or fails. */
static const char *probe_line(const char *out, const char *func, char *line, size_t len)
{
	const char *p = out;
	size_t n = strlen(func);

	while ((p = strstr(p, func))) {
		if (p > out && p[-1] == ' ' && p[n] == ' ') {
			const char *end = strchr(p, '\n');

			snprintf(line, len, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
			return line;
		}
		p += n;
	}
	print_error("--list-probes lists no %s:\n%s\n", func, out);
	fail();
	return NULL;
}

/* --list-probes names the site chosen for each function: the endbr64
 * functions at +4, the others at the symbol, emulated or single-stepped. */
static void test_list_probes(void **state)
{
	struct ctx *c = *state;
	char out[512], line[256];
	char *argv[] = { TRACER, "--list-probes", "--cuda-lib", STANDIN_LIBCUDA, "--", CUDA_WORKLOAD, NULL };
	static const char *const endbr[] = { "cuMemAlloc_v2", "cuMemcpyHtoDAsync_v2", "cuStreamSynchronize" };
	static const char *const stepped[] = { "cuEventQuery", "cuStreamQuery" };
	char *o;
	size_t i;

	snprintf(out, sizeof(out), "%s/probes.txt", c->f.dir);
	th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	o = th_slurp(out);
	assert_non_null(o);
	assert_non_null(strstr(o, "libcuda.so.1 candidates"));
	assert_non_null(strstr(o, "68 of 68 functions"));
	for (i = 0; i < sizeof(endbr) / sizeof(endbr[0]); i++)
		assert_non_null(strstr(probe_line(o, endbr[i], line, sizeof(line)), "after endbr64 (+4)"));
	for (i = 0; i < sizeof(stepped) / sizeof(stepped[0]); i++)
		assert_non_null(strstr(probe_line(o, stepped[i], line, sizeof(line)), "single-stepped (slow)"));
	assert_non_null(strstr(probe_line(o, "cuLaunchKernel", line, sizeof(line)), "push %rbp, emulated"));
	assert_null(strstr(probe_line(o, "cuLaunchKernel", line, sizeof(line)), "+ return"));
	assert_non_null(strstr(probe_line(o, "cuCtxSynchronize_v2", line, sizeof(line)), "+ return"));
	free(o);
}

#define LAUNCH_RATE_WORKLOAD "build/tests/workloads/launch_rate"

/* Records launch_rate for secs s (rate launches/s, or "bound" with WORK_US
 * and SYNC_EVERY; NULL for a paced job) with the given --budget; returns its
 * true launch count and leaves the report in *report. */
static long long record_launch_rate(struct ctx *c, const char *secs, const char *budget, const char *rate,
				    const char *work, const char *every, json_t **report)
{
	char count_file[600], *text;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget", (char *)budget, "--",
			 LAUNCH_RATE_WORKLOAD, (char *)secs, (char *)rate, count_file, (char *)work, (char *)every, NULL };
	long long n;

	snprintf(count_file, sizeof(count_file), "%s/launches", c->f.dir);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	text = th_slurp(count_file);
	assert_non_null(text);
	n = atoll(text);
	free(text);
	*report = th_report(c->f.isr);
	return n;
}

static json_t *cuda_calls_of(json_t *report, const char *fn)
{
	json_t *o = json_object_get(json_object_get(json_object_get(report, "cuda"), "calls"), fn);

	assert_non_null(o);
	return o;
}

/*
 * 100k launches/s cost several times the 1% budget (one probe hit is
 * 0.5-1.5 us on these machines): the hot path is sampled in windows, the
 * report says so, and the extrapolated count is within 10% of the launches
 * made (measured here: within 0.1%). The job runs 8 s: a second window is
 * then certain whatever the host's load, as the floor window comes
 * BUDGET_FLOOR_NS (5 s) after a switch off, the credit back or not. In 3 s
 * the second window needed the credit back, which a loaded host delays (a
 * thread on a CPU 40% of the time is charged 2.5 times its cost): one
 * window in a fresh clone's CI beside a busy loop per CPU and builds.
 */
static void test_budget_samples_launch_heavy(void **state)
{
	struct ctx *c = *state;
	json_t *r, *sm, *calls, *t;
	long long made, est, seen;
	char *err;

	made = record_launch_rate(c, "8", "1", "100000", NULL, NULL, &r);
	sm = json_object_get(json_object_get(r, "recording"), "sampling");
	assert_true(json_is_object(sm));
	assert_true(json_is_true(json_object_get(sm, "sampled")));
	assert_true(th_num(sm, "windows") >= 2);
	assert_true(th_num(sm, "coverage") > 0.02 && th_num(sm, "coverage") < 0.6);
	assert_true(th_num(sm, "hit_cost_ns") > 50 && th_num(sm, "hit_cost_ns") < 20000);
	calls = cuda_calls_of(r, "cuLaunchKernel");
	est = (long long)th_num(calls, "count");
	seen = (long long)th_num(calls, "observed");
	print_message("launches made %lld, recorded %lld (%.1f%%), estimated %lld (%+.2f%%), coverage %.1f%%, "
		      "%g windows, hit %.0f ns\n", made, seen, 100.0 * seen / made, est, 100.0 * (est - made) / made,
		      100 * th_num(sm, "coverage"), th_num(sm, "windows"), th_num(sm, "hit_cost_ns"));
	assert_true(json_is_true(json_object_get(calls, "estimated")));
	assert_true(made >= 250000);
	assert_true(seen < made * 0.7);
	assert_true(est > made * 0.9 && est < made * 1.1);
	t = th_thread(r, "launch_rate");
	assert_non_null(t);
	assert_true(json_is_true(json_object_get(t, "cuda_estimated")));
	assert_int_equal((long long)th_num(t, "launches"), est);
	/* the account: every recorded launch charged once, at the cost
	 * measured at the start, to the thread that made it */
	{
		json_t *o = json_object_get(json_object_get(r, "recording"), "overhead");
		json_t *sp = json_object_get(o, "spent"), *hot = json_object_get(json_object_get(sp, "by_kind"), "hot_probes");
		double hit = th_num(json_object_get(o, "cost_ns"), "probe_hit");

		assert_non_null(hot);
		assert_int_equal((long long)th_num(hot, "count"), seen);
		assert_true(fabs(th_num(hot, "seconds") - seen * hit / 1e9) < 1e-6);
		assert_int_equal((long long)th_num(sp, "tid"), (long long)th_num(t, "tid"));
		print_message("accounted: %.1f ms spent of %.1f ms allowed\n", 1e3 * th_num(sp, "budget_spent_s"),
			      1e3 * th_num(sp, "allowed_s"));
	}
	json_decref(r);
	{
		char md[600];
		char *argv[] = { TRACER, "analyze", c->f.isr, NULL };

		snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
		th_expect_exit(th_run_to(argv, md, c->f.err), 0, c->f.err);
		err = th_slurp(md);
		assert_non_null(err);
		assert_non_null(strstr(err, "**Sampled:**"));
		assert_non_null(strstr(err, "| cuLaunchKernel | ≈"));
		free(err);
	}
}

/*
 * A target that exits while it is traced (its hot path switched on and off
 * by the budget, its probes attached and released as it goes) is past
 * probing, which is no failure: the recorder says nothing of it and stops
 * when it is gone (#26.5). Three targets, each attached with -p at full
 * launch rate and left to exit.
 */
static void test_target_exits_while_traced(void **state)
{
	struct ctx *c = *state;

	for (int i = 0; i < 3; i++) {
		char count_file[600], pidstr[32], *err;
		char *wl[] = { LAUNCH_RATE_WORKLOAD, "4", "100000", count_file, NULL };
		char *argv[] = { TRACER, "record", "-o", c->f.isr, "-p", pidstr, NULL };
		json_t *r;

		snprintf(count_file, sizeof(count_file), "%s/launches", c->f.dir);
		c->spawned[0] = th_spawn(wl, NULL, NULL);
		snprintf(pidstr, sizeof(pidstr), "%d", c->spawned[0]);
		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
		th_reap(c->spawned[0]);
		c->spawned[0] = 0;
		err = th_slurp(c->f.err);
		assert_non_null(err);
		if (strstr(err, "cannot") || strstr(err, "warning") || strstr(err, "failed")) {
			print_error("%s", err);
			fail_msg("a warning for a target that exited");
		}
		free(err);
		r = th_report(c->f.isr);
		assert_string_equal(json_string_value(json_object_get(json_object_get(r, "recording"), "stop_reason")),
				    "targets_exited");
		json_decref(r);
	}
}

/*
 * A launch-bound thread (30 us of work per launch, a synchronization every
 * 100): the probe slows it in the windows by its cost per launch, which the
 * rate of its synchronizations shows. What holds on a loaded 2-core machine
 * every time: the 95% interval of the slowdown holds the one the measured
 * hit cost per launch makes, within a factor of 3 (the time in
 * synchronizations dilutes it); when the interval lies above 1 it is
 * applied and the corrected estimate is within 8% of the launches made;
 * when the machine is too noisy for the interval to exclude 1 (seen: 0.99-
 * 1.74 from 134 synchronizations), nothing is applied and the report says
 * no slowdown was measurable (measured here: -2.5% ... +1.2%, k 1.08-1.10 at a
 * 5.2-7.0 us hit). The
 * estimator's arithmetic is checked exactly on planted windows in
 * tests/unit/test_summary.c (test_sampled_slowdown). Where the machine made
 * the rate swing across the windows, the gaps are estimated by their
 * synchronizations instead, within 8% (test_sampled_by_calls there).
 */
static void test_budget_launch_bound_slowdown(void **state)
{
	struct ctx *c = *state;
	char md[600], *text;
	char *md_argv[] = { TRACER, "analyze", c->f.isr, NULL };
	json_t *sm, *p, *ci;
	const char *status;
	long long made, est;
	double k, hit_us, expect, lo, hi;

	snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
	made = record_launch_rate(c, "3", "1", "bound", "30", "100", &c->report);
	sm = json_object_get(json_object_get(c->report, "recording"), "sampling");
	p = json_array_get(json_object_get(sm, "processes"), 0);
	assert_non_null(p);
	k = th_num(p, "slowdown");
	ci = json_object_get(p, "slowdown_ci95");
	print_message("slowdown %s, 95%% interval %.3f-%.3f, from %g calls in %g windows and %g in %g gaps\n",
		      json_string_value(json_object_get(p, "slowdown_status")), json_real_value(json_array_get(ci, 0)),
		      json_real_value(json_array_get(ci, 1)), th_num(p, "slowdown_calls_in_windows"),
		      th_num(p, "slowdown_windows"), th_num(p, "slowdown_calls_in_gaps"), th_num(p, "slowdown_gaps"));
	status = json_string_value(json_object_get(p, "slowdown_status"));
	assert_non_null(status);
	lo = json_real_value(json_array_get(ci, 0));
	hi = json_real_value(json_array_get(ci, 1));
	hit_us = th_num(sm, "hit_cost_ns") / 1000;
	expect = 1 + hit_us / 30;
	est = (long long)th_num(cuda_calls_of(c->report, "cuLaunchKernel"), "count");
	print_message("launches made %lld, estimated %lld (%+.2f%%), slowdown %.3f (hit %.2f us: about %.3f)\n",
		      made, est, 100.0 * (est - made) / made, k, hit_us, expect);
	th_expect_exit(th_run_to(md_argv, md, c->f.err), 0, c->f.err);
	text = th_slurp(md);
	assert_non_null(text);
	if (!strcmp(json_string_value(json_object_get(p, "estimator")), "calls")) {
		/* a machine busy enough to make the rate swing across the
		 * windows: the gaps by their synchronizations (one every 100
		 * launches), nothing applied; a window of some ten of them
		 * counts one more or one fewer than its launches make by where
		 * its edges cut the steps, hence the 8% */
		assert_true(k == 1.0);
		assert_true(est > made * 0.92 && est < made * 1.08);
		assert_non_null(strstr(text, "always-probed calls there"));
		free(text);
		return;
	}
	if (!strcmp(status, "not_measured")) {
		/* a machine too busy to open enough windows and gaps in the
		 * run: nothing applied, and the report says what was missing */
		assert_true(th_num(p, "slowdown_windows") < 2 || th_num(p, "slowdown_gaps") < 2 ||
			    th_num(p, "slowdown_calls_in_windows") < 20 || th_num(p, "slowdown_calls_in_gaps") < 20);
		assert_true(k == 1.0 && json_is_null(ci));
		assert_true(est > made * 0.92 / (1 + (expect - 1) * 3) && est < made * 1.08);
		assert_non_null(strstr(text, "to tell whether the probes slowed it"));
		free(text);
		return;
	}
	/* the interval holds the slowdown the hit cost makes (within a factor of 3) */
	assert_true(lo <= 1 + (expect - 1) * 3 && hi >= 1 + (expect - 1) / 3);
	if (!strcmp(status, "applied")) {
		assert_true(lo > 1 && lo <= k && hi >= k && k < 2);
		assert_true(est > made * 0.92 && est < made * 1.08);
		assert_non_null(strstr(text, "slower while its hot path was probed (95% confidence interval"));
	} else {
		/* too noisy a machine to tell: nothing applied, the estimate
		 * uncorrected (low by the true slowdown), and said so */
		assert_string_equal(status, "none");
		assert_true(k == 1.0 && lo <= 1 && hi >= 1);
		assert_true(est > made * 0.92 / (1 + (expect - 1) * 3) && est < made * 1.08);
		assert_non_null(strstr(text, "no slowdown measurable while its hot path was probed"));
	}
	free(text);
}

/* --budget off: every launch of the same job is recorded. */
static void test_budget_off_exact(void **state)
{
	struct ctx *c = *state;
	json_t *r, *calls;
	long long made;

	made = record_launch_rate(c, "3", "off", "100000", NULL, NULL, &r);
	assert_true(json_is_null(json_object_get(json_object_get(r, "recording"), "sampling")));
	calls = cuda_calls_of(r, "cuLaunchKernel");
	assert_int_equal((long long)th_num(calls, "count"), made);
	assert_int_equal((long long)th_num(calls, "observed"), made);
	assert_true(json_is_false(json_object_get(calls, "estimated")));
	json_decref(r);
}

/* The CUDA runtime's launch loop (launch_rate "alias"): each launch maps
 * its kernel with cuKernelGetFunction and launches the function. Kernels
 * 8: the mapping teaches nothing new after the first launches, and the
 * mapping's probes are released (a few hundred calls recorded of the
 * hundreds of thousands made); every launch is still recorded and named.
 * Kernels 0: a new kernel at each launch, and every mapping is recorded. */
static void test_alias_probes_released_once_learned(void **state)
{
	struct ctx *c = *state;
	_Static_assert(200000 < ALIAS_MAX_PAIRS, "the workload's mappings fit the recorder's memory of them");
	/* kernels 0: at most 200,000 launches, each a mapping never seen, fewer
	 * than the recorder remembers (ALIAS_MAX_PAIRS): the probes stay on */
	static const char *const kernels[] = { "8", "0" }, *const max[] = { "0", "200000" };
	char count_file[600], *text;
	json_t *r, *k;
	size_t i, j;

	snprintf(count_file, sizeof(count_file), "%s/launches", c->f.dir);
	for (j = 0; j < 2; j++) {
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget", "off", "--", LAUNCH_RATE_WORKLOAD,
				 j ? "60" : "2", "alias", count_file, (char *)kernels[j], (char *)max[j], NULL };
		long long made, mapped, named = 0, dropped;

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
		text = th_slurp(count_file);
		assert_non_null(text);
		made = atoll(text);
		free(text);
		r = th_report(c->f.isr);
		mapped = th_count(r, "cuKernelGetFunction");
		/* what the ring buffer had no room for is counted, not lost */
		dropped = (long long)th_num(json_object_get(json_object_get(r, "recording"), "drops"), "cuda");
		assert_true(th_count(r, "cuLaunchKernel") <= made && th_count(r, "cuLaunchKernel") + dropped >= made);
		json_array_foreach(json_object_get(json_object_get(r, "cuda"), "kernels"), i, k)
			if (json_string_value(json_object_get(k, "name")))
				named += (long long)th_num(k, "launches");
		print_message("kernels %s: %lld launches, %lld mappings recorded, %lld launches named, %lld dropped\n",
			      kernels[j], made, mapped, named, dropped);
		assert_true(made > 10000);
		if (j == 0) {
			assert_true(mapped >= 8 && mapped < made / 10);
			assert_true(named <= made && named + dropped >= made);
		} else {
			assert_true(mapped <= made && mapped + dropped >= made);
		}
		json_decref(r);
	}
}

#define PROC_TREE_WORKLOAD "tests/workloads/proc_tree.py"

/* The process_tree node of pid, or NULL. */
static json_t *tree_node(json_t *report, json_int_t pid)
{
	json_t *tree = json_object_get(report, "process_tree"), *n;
	size_t i;

	json_array_foreach(tree, i, n)
		if (json_integer_value(json_object_get(n, "pid")) == pid)
			return n;
	return NULL;
}

/* Whether the report's threads include one of process pid. */
static bool has_thread_of(json_t *report, json_int_t pid)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(report, "threads"), i, t)
		if (json_integer_value(json_object_get(t, "pid")) == pid)
			return true;
	return false;
}

/* Starts tests/workloads/proc_tree.py (a parent whose multiprocessing pool,
 * spawned process and two stand-in CUDA workloads run before the attach),
 * records it with -p parent and `extra` (NULL or an option), lets it do
 * its work and returns the pids it printed, as JSON; the report in
 * c->report. */
static json_t *record_tree(struct ctx *c, char *extra)
{
	char *wl[] = { "/usr/bin/python3", PROC_TREE_WORKLOAD, CUDA_WORKLOAD, NULL };
	char ready[512], pidstr[32], line[512];
	size_t len = 0;
	int out_fd, status;
	pid_t wpid, tpid;
	json_t *pids;

	wpid = c->spawned[0] = th_spawn(wl, &out_fd, NULL);
	while (len + 1 < sizeof(line) && read(out_fd, line + len, 1) == 1 && line[len] != '\n')
		len++;
	line[len] = '\0';
	close(out_fd);
	pids = json_loads(line, 0, NULL);
	if (!pids)
		fail_msg("proc_tree.py printed \"%s\", not its pids", line);
	assert_int_equal(json_integer_value(json_object_get(pids, "parent")), wpid);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--budget", "off", "--no-py-stacks",
				 "--ready-file", ready, extra, NULL };

		tpid = c->spawned[1] = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	kill(wpid, SIGUSR1);
	assert_int_equal(waitpid(wpid, &status, 0), wpid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(tpid, &status, 0), tpid);	/* every target exited */
	th_expect_exit(status, 0, c->f.err);
	c->report = th_report(c->f.isr);
	return pids;
}

/*
 * -p PARENT takes the workers it forked before the attach: the pool's, the
 * spawned one, the stand-in CUDA workloads (every launch of both counted),
 * each traced (its threads in the report) and shown under its parent in
 * the process tree, with its role; --no-follow takes the parent only.
 */
static void test_attached_descendants(void **state)
{
	struct ctx *c = *state;
	char md[600], *text, want[64];
	char *md_argv[] = { TRACER, "analyze", c->f.isr, NULL };
	json_int_t parent, pid;
	json_t *pids, *n, *v;
	size_t i, found = 0;

	pids = record_tree(c, NULL);
	parent = json_integer_value(json_object_get(pids, "parent"));
	n = tree_node(c->report, parent);
	assert_non_null(n);
	assert_int_equal(json_integer_value(json_object_get(n, "depth")), 0);
	assert_string_equal(json_string_value(json_object_get(n, "origin")), "attached");
	json_array_foreach(json_object_get(pids, "pool"), i, v) {
		pid = json_integer_value(v);
		n = tree_node(c->report, pid);
		assert_non_null(n);
		assert_int_equal(json_integer_value(json_object_get(n, "parent")), parent);
		assert_int_equal(json_integer_value(json_object_get(n, "depth")), 1);
		assert_string_equal(json_string_value(json_object_get(n, "origin")), "descendant");
		assert_string_equal(json_string_value(json_object_get(n, "role")), "fork");
		assert_true(has_thread_of(c->report, pid));
		found++;
	}
	assert_int_equal(found, 2);
	pid = json_integer_value(json_object_get(pids, "spawn"));
	n = tree_node(c->report, pid);
	assert_non_null(n);
	assert_int_equal(json_integer_value(json_object_get(n, "parent")), parent);
	assert_string_equal(json_string_value(json_object_get(n, "role")), "multiprocessing_spawn");
	assert_true(has_thread_of(c->report, pid));
	json_array_foreach(json_object_get(pids, "cuda"), i, v) {
		pid = json_integer_value(v);
		n = tree_node(c->report, pid);
		assert_non_null(n);
		assert_int_equal(json_integer_value(json_object_get(n, "parent")), parent);
		assert_string_equal(json_string_value(json_object_get(n, "origin")), "descendant");
		assert_true(has_thread_of(c->report, pid));
	}
	assert_int_equal(th_count(c->report, "cuLaunchKernel"), 2 * (long long)plan_calls[FN(cuLaunchKernel)]);
	json_array_foreach(json_object_get(c->report, "process_tree"), i, n)
		if (json_is_string(json_object_get(n, "role")) &&
		    !strcmp(json_string_value(json_object_get(n, "role")), "multiprocessing_resource_tracker"))
			assert_int_equal(json_integer_value(json_object_get(n, "parent")), parent);
	snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
	th_expect_exit(th_run_to(md_argv, md, c->f.err), 0, c->f.err);
	text = th_slurp(md);
	assert_non_null(text);
	assert_non_null(strstr(text, "(a child under its parent)"));
	snprintf(want, sizeof(want), "\n    - pid %lld (", (long long)json_integer_value(json_array_get(
		json_object_get(pids, "pool"), 0)));
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "descendant; forked worker (its parent's command line)"));
	free(text);
	json_decref(pids);
	json_decref(c->report);
	c->report = NULL;
	th_rmrf(c->f.dir);
	th_files_init(&c->f);

	/* --no-follow: the parent only */
	pids = record_tree(c, "--no-follow");
	parent = json_integer_value(json_object_get(pids, "parent"));
	assert_int_equal(json_array_size(json_object_get(c->report, "process_tree")), 1);
	assert_non_null(tree_node(c->report, parent));
	json_array_foreach(json_object_get(c->report, "threads"), i, n)
		assert_int_equal(json_integer_value(json_object_get(n, "pid")), parent);
	assert_int_equal(th_count(c->report, "cuLaunchKernel"), 0);
	json_decref(pids);
}

/*
 * `-- sh -c "env sh -c 'WORKLOAD; exit $?'; exit $?"`: two shells that only
 * start the next one and wait for it (env execs the inner shell). Above the
 * findings the report shows the workload in the launched shell's place,
 * with the two wrappers named on its line, and no line of theirs; the JSON
 * keeps the three processes, the shells marked; every call is the
 * workload's.
 */
static void test_wrappers_folded(void **state)
{
	struct ctx *c = *state;
	char cmd[512], md[600], want[200], *text, *end;
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--budget=off", "--cuda-lib", STANDIN_LIBCUDA,
			 "--", "/bin/sh", "-c", cmd, NULL };
	char *md_argv[] = { TRACER, "analyze", c->f.isr, NULL };
	json_int_t outer = 0, inner = 0, wl = 0;
	json_t *n;
	size_t i;

	snprintf(cmd, sizeof(cmd), "/usr/bin/env /bin/sh -c '%s; exit $?'; exit $?", CUDA_WORKLOAD);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	c->report = th_report(c->f.isr);
	assert_int_equal(json_array_size(json_object_get(c->report, "process_tree")), 3);
	json_array_foreach(json_object_get(c->report, "process_tree"), i, n) {
		json_int_t pid = json_integer_value(json_object_get(n, "pid"));

		assert_false(json_is_true(json_object_get(n, "short_lived")));
		if (!strcmp(json_string_value(json_object_get(n, "origin")), "launched"))
			outer = pid;
		else if (!strcmp(json_string_value(json_object_get(n, "comm")), "sh"))
			inner = pid;
		else
			wl = pid;
		assert_int_equal(json_is_true(json_object_get(n, "wrapper")), pid != wl);
	}
	assert_true(outer && inner && wl);
	assert_int_equal(json_integer_value(json_object_get(tree_node(c->report, inner), "parent")), outer);
	assert_int_equal(json_integer_value(json_object_get(tree_node(c->report, wl), "parent")), inner);
	assert_int_equal(th_count(c->report, "cuLaunchKernel"), (long long)plan_calls[FN(cuLaunchKernel)]);

	snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
	th_expect_exit(th_run_to(md_argv, md, c->f.err), 0, c->f.err);
	text = th_slurp(md);
	assert_non_null(text);
	end = strstr(text, "\n## Findings\n");
	assert_non_null(end);
	*end = '\0';	/* what comes above the findings */
	snprintf(want, sizeof(want), "- **Targets:** 3 processes (a child under its parent), 2 wrappers folded\n"
		 "  - pid %lld (cuda_calls, child;", (long long)wl);
	if (!strstr(text, want))
		fail_msg("the workload is not shown in the wrappers' place:\n%s", text);
	snprintf(want, sizeof(want), "    - started through 2 wrappers, folded (each only started the next, in one "
		 "thread, at most 0.05 s on CPU, no CUDA): pid %lld sh → pid %lld sh\n", (long long)outer,
		 (long long)inner);
	if (!strstr(text, want))
		fail_msg("the wrappers are not named on the workload:\n%s", text);
	snprintf(want, sizeof(want), "pid %lld (", (long long)outer);
	assert_null(strstr(text, want));
	snprintf(want, sizeof(want), "pid %lld (", (long long)inner);
	assert_null(strstr(text, want));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_counts_are_distinct),
		cmocka_unit_test_setup_teardown(test_launched_exact_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launched_exact_calls_legacy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached_exact_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached_descendants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrappers_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_without_libcuda, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libcuda_loaded_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_probes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_samples_launch_heavy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_launch_bound_slowdown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_off_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_target_exits_while_traced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alias_probes_released_once_learned, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
