// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity through the CUPTI bridge, for real but without a GPU: the
 * workload tests/workloads/cupti_workload.c loads the real bridge
 * (build/libinferscope_cupti.so) over the mock libcupti.so.13
 * (tests/mock_cupti/), the real tracer attaches to the bridge's USDT probe
 * with real BPF, and the mock delivers planted kernel, copy and API records
 * and clock pairs through the bridge's real buffer callbacks. The checks:
 * exactly the planted records in the recording and the report, no drops
 * (or exactly the drops CUPTI reported), every kernel joined to its launch
 * uprobe event with no causality violation (under a budget that samples
 * launches from two threads: exactly the launches it saw), the bridge
 * dormant before the tracer came and detached after it left (CUPTI
 * finalized, in the order the mock checks), GPU activity in windows
 * (--gpu-windows: every record of every window delivered, the busy time
 * extrapolated over the gaps), and a process whose bridge finds no libcupti
 * traced on at the driver level.
 */
#include <errno.h>
#include <signal.h>
#include <math.h>
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include "harness.h"
#include "proc.h"
#include "recording.h"
#include "cupti_workload.h"

#define BRIDGE "build/libinferscope_cupti.so"
#define CUPTI_WORKLOAD "build/tests/workloads/cupti_workload"
/* A stand-in for the GPU device a CUDA context holds open: a character
 * device with /dev/null's numbers at an unused /dev/nvidiaN. */
#define FAKE_GPU "/dev/nvidia247"

struct ctx {
	struct th_files f;
	pid_t spawned[2];	/* workload, tracer: stopped by teardown if a test fails */
	bool made_dev;		/* FAKE_GPU was created by the test: removed by teardown */
};

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
	if (c->made_dev)
		unlink(FAKE_GPU);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

struct seen {
	unsigned int kernels[2];	/* by planted name: A, B */
	unsigned int kernels_bad;	/* wrong duration, geometry, stream or name */
	unsigned int copies;
	__u64 copy_bytes;
	unsigned int copies_bad;
	unsigned int apis, clocks, launches;
	unsigned int failed_status, flushed_status;
	__s32 cupti_error;
};

static const char *name_of(const struct recording *rec, __u32 pid, __u32 id)
{
	for (size_t k = 0; k < rec->event_count; k++) {
		const struct isr_ev_gpu_name *n = (const void *)rec->events[k];

		if (n->hdr.type == ISR_EV_GPU_NAME && n->hdr.pid == pid && n->id == id)
			return n->name;
	}
	return NULL;
}

/* Every GPU event of pid against the plan; drops as expected. */
static void check_recording(const char *isr, __u32 pid, struct seen *sn, __u64 cupti_drops)
{
	struct recording *rec;
	char err[512];

	memset(sn, 0, sizeof(*sn));
	if (recording__load(isr, &rec, err, sizeof(err))) {
		print_error("cannot load %s: %s\n", isr, err);
		fail();
	}
	recording__sort_events(rec);
	for (size_t k = 0; k < rec->event_count; k++) {
		const struct isr_ev_hdr *h = rec->events[k];

		if (h->pid != pid)
			continue;
		if (h->type == ISR_EV_GPU_KERNEL) {
			const struct isr_ev_gpu_kernel *e = (const void *)h;
			const char *name = name_of(rec, pid, e->name_id);
			unsigned int i = e->correlation_id - WL_CORR_KERNEL;
			bool b = i % 2;

			if (name && strcmp(name, b ? WL_KERNEL_B : WL_KERNEL_A) == 0)
				sn->kernels[b]++;
			else
				sn->kernels_bad++;
			if (e->end_ns - e->start_ns != (b ? WL_DUR_B_NS : WL_DUR_A_NS) || e->grid[0] != (__s32)i + 1 ||
			    e->block[0] != 128 || e->stream_id != WL_STREAM || e->registers != 32)
				sn->kernels_bad++;
		} else if (h->type == ISR_EV_GPU_MEMCPY) {
			const struct isr_ev_gpu_memcpy *e = (const void *)h;
			unsigned int j = e->correlation_id - WL_CORR_COPY;

			sn->copies++;
			sn->copy_bytes += e->bytes;
			if (e->bytes != WL_COPY_UNIT * (j + 1) || e->end_ns - e->start_ns != WL_COPY_NS ||
			    e->copy_kind != 1 || e->stream_id != WL_STREAM)
				sn->copies_bad++;
		} else if (h->type == ISR_EV_GPU_API) {
			const struct isr_ev_gpu_api *a = (const void *)h;

			sn->apis += (a->api == ISR_GPU_API_DRIVER && a->cbid == WL_CBID_LAUNCH) ||
				    (a->api == ISR_GPU_API_RUNTIME && a->cbid == WL_CBID_RUNTIME_LAUNCH);
		} else if (h->type == ISR_EV_GPU_CLOCK) {
			sn->clocks++;
		} else if (h->type == ISR_EV_GPU_STATUS &&
			   ((const struct isr_ev_gpu_status *)h)->state == ISR_GPU_FAILED) {
			sn->failed_status++;
			sn->cupti_error = ((const struct isr_ev_gpu_status *)h)->cupti_error;
		} else if (h->type == ISR_EV_GPU_STATUS &&
			   ((const struct isr_ev_gpu_status *)h)->state == ISR_GPU_FLUSHED) {
			sn->flushed_status++;
		} else if (h->type == ISR_EV_CUDA_CALL) {
			sn->launches++;
		}
	}
	for (unsigned int s = 0; s < ISR_SRC_MAX; s++) {
		if (rec->drops[s] != (s == ISR_SRC_CUPTI ? cupti_drops : 0))
			print_error("drops[%s] = %llu\n", isr_source_name(s), (unsigned long long)rec->drops[s]);
		assert_int_equal(rec->drops[s], s == ISR_SRC_CUPTI ? cupti_drops : 0);
	}
	recording__free(rec);
}

static void check_planted(const struct seen *sn, unsigned int kernels, unsigned int copies)
{
	assert_int_equal(sn->kernels[0], (kernels + 1) / 2);
	assert_int_equal(sn->kernels[1], kernels / 2);
	assert_int_equal(sn->kernels_bad, 0);
	assert_int_equal(sn->copies, copies);
	assert_int_equal(sn->copy_bytes, WL_COPY_UNIT * copies * (copies + 1) / 2);
	assert_int_equal(sn->copies_bad, 0);
	assert_int_equal(sn->apis, kernels);
	assert_int_equal(sn->launches, kernels);
	assert_true(sn->clocks >= 2);	/* at the enable and at the final flush */
	assert_true(sn->flushed_status >= 1);	/* the exit's flush, or the one the tracer asked for */
}

/* The process of the first event of this type in the recording. */
static __u32 first_pid(const char *isr, __u16 type)
{
	struct recording *rec;
	char err[512];
	__u32 pid = 0;

	assert_int_equal(recording__load(isr, &rec, err, sizeof(err)), 0);
	for (size_t i = 0; i < rec->event_count && !pid; i++)
		if (rec->events[i]->type == type)
			pid = rec->events[i]->pid;
	recording__free(rec);
	return pid;
}

static json_t *gpu_process(json_t *report, __u32 pid)
{
	json_t *p;
	size_t k;

	json_array_foreach(json_object_get(json_object_get(report, "gpu"), "processes"), k, p)
		if (th_num(p, "pid") == pid)
			return p;
	print_error("pid %u is not in report[\"gpu\"][\"processes\"]\n", pid);
	fail();
	return NULL;
}

static json_t *gpu_kernel(json_t *report, const char *name)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(report, "gpu"), "kernels"), i, k)
		if (strcmp(json_string_value(json_object_get(k, "name")), name) == 0)
			return k;
	print_error("kernel %s is not in report[\"gpu\"][\"kernels\"]\n", name);
	fail();
	return NULL;
}

/* The report: counts, names (demangled), GPU times, bytes, the join. */
static void check_report(const char *isr, __u32 pid, unsigned int kernels, unsigned int copies)
{
	json_t *r = th_report(isr), *p, *k, *m, *fit;

	p = gpu_process(r, pid);
	assert_int_equal(th_num(p, "kernels"), kernels);
	assert_int_equal(th_num(p, "memcpys"), copies);
	assert_int_equal(th_num(p, "kernels_joined"), kernels);
	assert_int_equal(th_num(p, "kernels_unjoined"), 0);
	assert_int_equal(th_num(p, "causality_violations"), 0);
	fit = json_object_get(p, "clock_fit");
	assert_true(json_is_object(fit));
	/* The mock's clock runs 25 ppm fast: 1 / (1 + 25e-6) CPU ns per GPU ns,
	 * read inside each pair's sandwich, so the true line passes through
	 * every sandwich and the drift lies within the fit's stated drift bound
	 * (docs/clock-calibration.md). Two or three pairs a fraction of a second
	 * apart on a loaded machine tell it within some 10 ppm (-19.9 seen with
	 * three) or not at all (two pairs 0.1 s apart: -25.6 +- 56.8); the
	 * bound says how far. Four or more, a second apart, must tell it: the
	 * bound leaves its sign and size seen (test_clock_fit checks the fit's
	 * precision on many pairs). */
	print_message("clock fit: %g pairs, drift %.2f ± %.2f ppm\n", th_num(fit, "pairs"), th_num(fit, "drift_ppm"),
		      th_num(fit, "drift_bound_ppm"));
	assert_true(th_num(fit, "pairs") >= 2);
	assert_true(fabs(th_num(fit, "drift_ppm") + 25) <= th_num(fit, "drift_bound_ppm") + 0.01);
	if (th_num(fit, "pairs") >= 4)
		assert_true(th_num(fit, "drift_bound_ppm") < 25);
	k = gpu_kernel(r, "spin_short(float*)");
	assert_int_equal(th_num(k, "count"), (kernels + 1) / 2);
	assert_true(th_num(k, "mean_s") > WL_DUR_A_NS / 1e9 - 1e-12 && th_num(k, "mean_s") < WL_DUR_A_NS / 1e9 + 1e-12);
	k = gpu_kernel(r, "spin_long(float*, int)");
	assert_int_equal(th_num(k, "count"), kernels / 2);
	assert_true(th_num(k, "mean_s") > WL_DUR_B_NS / 1e9 - 1e-12 && th_num(k, "mean_s") < WL_DUR_B_NS / 1e9 + 1e-12);
	m = json_array_get(json_object_get(json_object_get(r, "gpu"), "memcpy"), 0);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "kind")), "HtoD");
	assert_int_equal(th_num(m, "count"), copies);
	assert_int_equal(th_num(m, "bytes"), WL_COPY_UNIT * copies * (copies + 1) / 2);
	assert_int_equal(th_count(r, "gpu_kernel"), kernels);
	assert_int_equal(th_count(r, "gpu_memcpy"), copies);
	json_decref(r);
}

#define KERNELS_LAUNCHED 300
#define COPIES_LAUNCHED 40

/* record -- CMD: the tracer hands the bridge over in CUDA_INJECTION64_PATH;
 * the records come at the bridge's exit flush. */
static void test_launched(void **state)
{
	struct ctx *c = *state;
	struct seen sn;
	char k[16], m[16];

	snprintf(k, sizeof(k), "%d", KERNELS_LAUNCHED);
	snprintf(m, sizeof(m), "%d", COPIES_LAUNCHED);
	{
		char *argv[] = { TRACER, "record", "-q", "--gpu", "-o", c->f.isr, "--cupti-bridge", BRIDGE, "--",
				 CUPTI_WORKLOAD, "injected", k, m, NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	{
		__u32 pid = first_pid(c->f.isr, ISR_EV_GPU_KERNEL);

		assert_int_not_equal(pid, 0);
		check_recording(c->f.isr, pid, &sn, 0);
		check_planted(&sn, KERNELS_LAUNCHED, COPIES_LAUNCHED);
		check_report(c->f.isr, pid, KERNELS_LAUNCHED, COPIES_LAUNCHED);
	}
}

#define KERNELS_ATTACHED 200
#define COPIES_ATTACHED 25
#define CUPTI_DROPPED 3

/*
 * The cupti_workload "attach" run under `record -p`: bridge is what it
 * dlopens itself ("-": nothing, with FAKE_GPU held open, for the tracer to
 * load the bridge with --gpu). Waits for its "ready" (dormant until then),
 * starts the tracer, lets it work, stops the tracer, and checks that both
 * exited 0 (the workload only if the bridge went dormant again). Returns
 * the workload's pid.
 */
static pid_t attach_and_run(struct ctx *c, const char *bridge)
{
	char ready[512], pidstr[32], buf[256], k[16], m[16], d[16];
	bool inject = strcmp(bridge, "-") == 0;
	int out_fd, status;
	pid_t wpid, tpid;
	FILE *out;

	snprintf(k, sizeof(k), "%d", KERNELS_ATTACHED);
	snprintf(m, sizeof(m), "%d", COPIES_ATTACHED);
	snprintf(d, sizeof(d), "%d", CUPTI_DROPPED);
	if (inject)
		setenv("WL_GPU_DEVICE", FAKE_GPU, 1);
	{
		char *wl[] = { CUPTI_WORKLOAD, "attach", (char *)bridge, k, m, d, NULL };

		wpid = c->spawned[0] = th_spawn(wl, &out_fd, NULL);
	}
	unsetenv("WL_GPU_DEVICE");
	out = fdopen(out_fd, "r");
	assert_non_null(fgets(buf, sizeof(buf), out));
	assert_string_equal(buf, "ready\n");	/* checked dormant for WL_DORMANT_MS */
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *plain[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready, NULL };
		char *injecting[] = { TRACER, "record", "-v", "--gpu", "-o", c->f.isr, "-p", pidstr, "--cupti-bridge",
				      BRIDGE, "--ready-file", ready, NULL };

		tpid = c->spawned[1] = th_spawn(inject ? injecting : plain, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 20));
	kill(wpid, SIGUSR1);
	assert_non_null(fgets(buf, sizeof(buf), out));	/* "enabled N ms after ..." */
	print_message("%sbridge %s", inject ? "injected " : "", buf);
	assert_non_null(fgets(buf, sizeof(buf), out));
	assert_string_equal(buf, "done\n");	/* the bridge handed every planted record over */
	fclose(out);
	kill(tpid, SIGINT);
	assert_int_equal(waitpid(tpid, &status, 0), tpid);
	th_expect_exit(status, 0, c->f.err);
	/* Exit 0: dormant before the attach; disabled, flushed and detached
	 * after, in CUPTI's order (the mock's faults). */
	assert_int_equal(waitpid(wpid, &status, 0), wpid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return wpid;
}

/* -p on a process that dlopened the bridge: dormant before, enabled while
 * traced, flushed records arrive (also the tail left in CUPTI's buffer when
 * the tracer is told to stop), dormant again after the tracer left. */
static void test_attached(void **state)
{
	struct ctx *c = *state;
	pid_t wpid = attach_and_run(c, BRIDGE);
	struct seen sn;

	check_recording(c->f.isr, (__u32)wpid, &sn, CUPTI_DROPPED);
	check_planted(&sn, KERNELS_ATTACHED + WL_TAIL_KERNELS, COPIES_ATTACHED);
	check_report(c->f.isr, (__u32)wpid, KERNELS_ATTACHED + WL_TAIL_KERNELS, COPIES_ATTACHED);
	{
		json_t *r = th_report(c->f.isr);

		assert_int_equal(th_num(gpu_process(r, (__u32)wpid), "cupti_dropped"), CUPTI_DROPPED);
		json_decref(r);
	}
}

/* -p on a process that runs CUDA without the bridge: the tracer loads it
 * (ptrace + dlopen) and everything then goes as for a bridge the process
 * loaded itself. */
static void test_injected_into_running(void **state)
{
	struct ctx *c = *state;
	struct seen sn;
	pid_t wpid;
	char *err;

	if (access(FAKE_GPU, F_OK)) {
		assert_int_equal(mknod(FAKE_GPU, S_IFCHR | 0600, makedev(1, 3)), 0);
		c->made_dev = true;
	}
	wpid = attach_and_run(c, "-");
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "CUPTI bridge loaded into the running process"));
	free(err);
	check_recording(c->f.isr, (__u32)wpid, &sn, CUPTI_DROPPED);
	check_planted(&sn, KERNELS_ATTACHED + WL_TAIL_KERNELS, COPIES_ATTACHED);
	check_report(c->f.isr, (__u32)wpid, KERNELS_ATTACHED + WL_TAIL_KERNELS, COPIES_ATTACHED);
}

/* The same process before CUDA opened a GPU: not injected, and the tracer
 * says why; --no-inject: not even tried, nothing said. */
static void test_inject_refused_without_gpu(void **state)
{
	struct ctx *c = *state;
	char pidstr[32], buf[64], *err;
	int out_fd, status;
	pid_t wpid;
	FILE *out;

	{
		char *wl[] = { CUPTI_WORKLOAD, "attach", "-", "1", "1", "0", NULL };

		wpid = c->spawned[0] = th_spawn(wl, &out_fd, NULL);
	}
	out = fdopen(out_fd, "r");
	assert_non_null(fgets(buf, sizeof(buf), out));
	snprintf(pidstr, sizeof(pidstr), "%d", wpid);
	{
		char *argv[] = { TRACER, "record", "-q", "--gpu", "-d", "0.3", "-o", c->f.isr, "-p", pidstr, "--cupti-bridge",
				 BRIDGE, NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "has no GPU open yet"));
	free(err);
	{
		char *argv[] = { TRACER, "record", "-q", "--gpu", "-d", "0.3", "-o", c->f.isr, "-p", pidstr, "--no-inject", NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_null(strstr(err, "GPU open"));
	free(err);
	{
		/* Without --gpu nothing is loaded into a running process. */
		char *argv[] = { TRACER, "record", "-q", "-d", "0.3", "-o", c->f.isr, "-p", pidstr, "--cupti-bridge",
				 BRIDGE, NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_null(strstr(err, "GPU open"));
	free(err);
	assert_true(proc_maps__has((__u32)wpid, "/"));	/* its maps can be read */
	assert_false(proc_maps__has((__u32)wpid, "libinferscope_cupti"));
	kill(wpid, SIGKILL);
	waitpid(wpid, &status, 0);
	fclose(out);
}

/* No libcupti for the bridge: a warning from the bridge and from the
 * tracer, the driver-level launches recorded all the same. */
static void test_cupti_missing(void **state)
{
	struct ctx *c = *state;
	struct seen sn;
	char *err;

	{
		char *argv[] = { TRACER, "record", "-q", "--gpu", "-o", c->f.isr, "--cupti-bridge", BRIDGE, "--",
				 CUPTI_WORKLOAD, "missing", NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "CUPTI bridge: cannot load libcupti.so.13"));
	assert_non_null(strstr(err, "the CUPTI bridge found no libcupti.so.13"));
	free(err);
	check_recording(c->f.isr, first_pid(c->f.isr, ISR_EV_CUDA_CALL), &sn, 0);
	assert_int_equal(sn.launches, WL_KERNELS_MISSING);
	assert_int_equal(sn.failed_status, 1);
	assert_int_equal(sn.cupti_error, -1);
}

#define THREADS_SECONDS "3"
#define THREADS_RATE "20000"	/* per thread, at most: a pause of 50 us after each launch */
/* Above what the loop's scheduler events cost it (two switches a launch),
 * below what they and the hot path cost together, which are about 1.4% and
 * 6.4% of a thread where a hit costs 1 us: a budget under the first keeps
 * the hot path off but for its first window and a floor window every 5 s
 * (0.1% did: one window), enough for the join; one over the second never
 * switches it off (5% did not on a host of 1 us hits; 15% did not where
 * they cost more). 3% toggles where a hit costs 0.5 to 2 us, and gives
 * the floor's windows where it costs more. */
#define THREADS_BUDGET "3"

/*
 * The join under a toggling budget: two threads launch (correlation ids
 * interleaved from one counter, runtime and driver records alternating),
 * every launch planted as CUPTI records, while a budget of 0.1% switches
 * the hot-path probes on and off in windows. Every kernel whose launch the
 * uprobe saw is joined to it, every other one is unjoined (never joined to
 * a neighbouring call, which would start after the kernel), no causality
 * violation.
 */
static void test_join_two_threads_sampled(void **state)
{
	struct ctx *c = *state;
	unsigned long long kernels = 0, observed = 0, apis = 0, made;
	char out[600], *text;
	struct recording *rec;
	char err[512];
	json_t *r, *p, *sm;
	__u32 pid;

	snprintf(out, sizeof(out), "%s/out", c->f.dir);
	{
		char *argv[] = { TRACER, "record", "-q", "--gpu", "--budget", THREADS_BUDGET, "-o", c->f.isr, "--cupti-bridge",
				 BRIDGE, "--", CUPTI_WORKLOAD, "threads", THREADS_SECONDS, THREADS_RATE, NULL };

		th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	}
	text = th_slurp(out);
	assert_non_null(text);
	assert_non_null(strstr(text, "launched "));
	made = strtoull(strstr(text, "launched ") + 9, NULL, 10);
	free(text);
	pid = first_pid(c->f.isr, ISR_EV_GPU_KERNEL);
	assert_int_not_equal(pid, 0);
	assert_int_equal(recording__load(c->f.isr, &rec, err, sizeof(err)), 0);
	for (size_t k = 0; k < rec->event_count; k++) {
		const struct isr_ev_hdr *h = rec->events[k];

		if (h->pid != pid)
			continue;
		kernels += h->type == ISR_EV_GPU_KERNEL;
		apis += h->type == ISR_EV_GPU_API;
		observed += h->type == ISR_EV_CUDA_CALL &&
			    ((const struct isr_ev_cuda_call *)h)->func == ISR_CUDA_FN_cuLaunchKernel;
	}
	for (unsigned int s = 0; s < ISR_SRC_MAX; s++) {
		if (rec->drops[s])
			print_error("drops[%s] = %llu\n", isr_source_name(s), (unsigned long long)rec->drops[s]);
		assert_int_equal(rec->drops[s], 0);
	}
	recording__free(rec);
	print_message("launched %llu from two threads, %llu observed by the uprobe (%.1f%%)\n", made, observed,
		      100.0 * observed / made);
	assert_int_equal(kernels, made);
	assert_int_equal(apis, made);
	assert_true(observed > 0 && observed < made);
	r = th_report(c->f.isr);
	sm = json_object_get(json_object_get(r, "recording"), "sampling");
	/* sampled (how many windows the budget opened in 3 s is its business:
	 * the join is what is tested, of the launches seen and not seen) */
	assert_true(json_is_true(json_object_get(sm, "sampled")));
	assert_true(th_num(sm, "windows") >= 1);
	p = gpu_process(r, pid);
	assert_int_equal(th_num(p, "kernels"), made);
	assert_int_equal(th_num(p, "kernels_joined"), observed);
	assert_int_equal(th_num(p, "kernels_unjoined"), made - observed);
	assert_int_equal(th_num(p, "causality_violations"), 0);
	json_decref(r);
}

/* Every kernel record CUPTI took in the windows reached the recording,
 * is counted in it as handed back unfinished (a kernel still running when
 * a window's drain gave up: its times are not known), or is among the
 * GPU records the recording counts as dropped (the ring buffer full on a
 * loaded host: drops of every GPU record type, so they bound the kernels
 * lost from above; none dropped, the count is exact). */
static void expect_window_kernels(json_t *r, json_t *p, unsigned long planted)
{
	json_t *drops = json_object_get(json_object_get(r, "recording"), "drops");
	double got = th_num(p, "kernels") + th_num(p, "unfinished_records");
	double dropped = th_num(drops, "gpu") + th_num(drops, "cupti");

	print_message("kernels %g recorded, %g unfinished, of %lu planted; GPU records dropped %g\n",
		      th_num(p, "kernels"), th_num(p, "unfinished_records"), planted, dropped);
	assert_true(got <= (double)planted);
	assert_true((double)planted <= got + dropped);
}

#define WINDOWS_SECONDS "4"
#define WINDOWS_PERIOD "0.5"
/* CUPTI may take 0.1% of a thread (half the budget): about a quarter of
 * each period at the few thousand API calls a second this loop makes here */
#define WINDOWS_BUDGET "0.2"

/*
 * GPU activity in windows (--gpu-windows): record -- CMD on a process that
 * launches a kernel every 100 us (still running when CUPTI records it),
 * windows every 0.5 s sized by a 0.2% budget. Every kernel CUPTI recorded in a
 * window reaches the recording (none lost at a window's close: the drain
 * waits for the running ones), CUPTI is detached after each window in the
 * order the mock checks (from an API exit callback, no kind enabled, every
 * buffer back, no completion callback running, the subscriber gone), and
 * the busy time extrapolated from the windows is the loop's within 10%,
 * although the loop launches at half its pace while CUPTI collects (as
 * CUPTI's cost slows a launch-bound thread): extrapolated per launch, not
 * per second of the windows, which would be about a third low.
 */
static void test_windows(void **state)
{
	struct ctx *c = *state;
	char out[600], *text;
	unsigned long planted = 0, launches = 0;
	unsigned int finalizes = 0, faults = ~0u;
	double true_busy = 0;
	json_t *r, *p, *d;
	size_t i;
	__u32 pid;

	snprintf(out, sizeof(out), "%s/out", c->f.dir);
	{
		char *argv[] = { TRACER, "record", "-q", "--gpu-windows", "--budget", WINDOWS_BUDGET, "--gpu-period",
				 WINDOWS_PERIOD, "-o", c->f.isr,
				 "--cupti-bridge", BRIDGE, "--", CUPTI_WORKLOAD, "windows", WINDOWS_SECONDS, NULL };

		th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	}
	text = th_slurp(out);
	assert_non_null(text);
	print_message("%s", text);
	assert_int_equal(sscanf(text, "windows: planted %lu of %lu launches, true busy %lf, finalizes %u, faults 0x%x",
				&planted, &launches, &true_busy, &finalizes, &faults), 5);
	free(text);
	assert_int_equal(faults, 0);
	assert_true(planted > 0 && planted < launches);	/* windows, not everything */
	pid = first_pid(c->f.isr, ISR_EV_GPU_WINDOW);
	assert_int_not_equal(pid, 0);
	r = th_report(c->f.isr);
	p = gpu_process(r, pid);
	print_message("windows %g, observed %.3f of %.3f s, kernels %g of %lu planted, %u finalizes\n",
		      th_num(p, "windows"), th_num(p, "observed_s"), th_num(p, "span_s"), th_num(p, "kernels"), planted,
		      finalizes);
	expect_window_kernels(r, p, planted);
	assert_int_equal(th_num(p, "causality_violations"), 0);
	assert_true(json_is_true(json_object_get(p, "estimated")));
	assert_true(th_num(p, "windows") >= 4);
	/* each window but (at most) the last detached CUPTI */
	assert_true(finalizes + 1 >= th_num(p, "windows"));
	assert_true(th_num(p, "observed_s") < 0.9 * th_num(p, "span_s"));
	json_array_foreach(json_object_get(json_object_get(r, "gpu"), "devices"), i, d) {
		double busy;

		if (th_num(d, "pid") != pid)
			continue;
		busy = 1 - th_num(d, "idle_fraction");
		print_message("busy from the windows %.4f, true %.4f (%+.1f%%), estimated %.3f s, per %s: %g launches in "
			      "the windows, %.0f estimated in the gaps (%g seen in %.3f s probed); per second of the "
			      "windows %.4f (%+.1f%%)\n", busy, true_busy, 100 * (busy / true_busy - 1),
			      th_num(d, "busy_estimated_s"), json_string_value(json_object_get(p, "busy_method")),
			      th_num(p, "window_launches"), th_num(p, "gap_launches"), th_num(p, "gap_launches_seen"),
			      th_num(p, "gap_probed_s"), th_num(d, "busy_s") / th_num(p, "observed_s"),
			      100 * (th_num(d, "busy_s") / th_num(p, "observed_s") / true_busy - 1));
		assert_true(json_is_true(json_object_get(d, "estimated")));
		assert_string_equal(json_string_value(json_object_get(p, "busy_method")), "launches");
		assert_true(fabs(busy / true_busy - 1) < 0.10);
	}
	json_decref(r);
}

/* Another CUPTI client (a profiler) holds the subscriber: the bridge still
 * collects in windows, but never finalizes CUPTI (that session is not
 * its to end), and says so. */
static void test_windows_other_client(void **state)
{
	struct ctx *c = *state;
	char out[600], *text, *err;
	unsigned long planted = 0, launches = 0;
	unsigned int finalizes = ~0u, faults = ~0u;
	double true_busy = 0;
	json_t *r, *p;

	snprintf(out, sizeof(out), "%s/out", c->f.dir);
	setenv("WL_OTHER_SUBSCRIBER", "1", 1);
	{
		char *argv[] = { TRACER, "record", "-q", "--gpu-windows", "--budget", WINDOWS_BUDGET, "--gpu-period",
				 WINDOWS_PERIOD, "-o", c->f.isr,
				 "--cupti-bridge", BRIDGE, "--", CUPTI_WORKLOAD, "windows", WINDOWS_SECONDS, NULL };

		th_expect_exit(th_run_to(argv, out, c->f.err), 0, c->f.err);
	}
	unsetenv("WL_OTHER_SUBSCRIBER");
	text = th_slurp(out);
	assert_non_null(text);
	assert_int_equal(sscanf(text, "windows: planted %lu of %lu launches, true busy %lf, finalizes %u, faults 0x%x",
				&planted, &launches, &true_busy, &finalizes, &faults), 5);
	free(text);
	assert_int_equal(finalizes, 0);
	assert_int_equal(faults, 0);
	err = th_slurp(c->f.err);
	assert_non_null(err);
	assert_non_null(strstr(err, "CUPTI cannot be detached (another CUPTI client"));
	free(err);
	r = th_report(c->f.isr);
	p = gpu_process(r, first_pid(c->f.isr, ISR_EV_GPU_WINDOW));
	expect_window_kernels(r, p, planted);
	assert_true(th_num(p, "windows") >= 2);
	assert_int_equal(th_num(p, "detaches"), 0);
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_launched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_two_threads_sampled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cupti_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_injected_into_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inject_refused_without_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows_other_client, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
