// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test tool: writes a synthetic recording through the recorder's writer
 * (user/record/rec_writer.c), for the analysis benchmark (tests/bench/analysis.sh)
 * and for files a test wants bigger than a unit test should build.
 *
 *   synth_rec [-n EVENTS] OUT.isr          a PyTorch-like training process
 *   synth_rec --bomb-chunks K OUT.isr      K EVENTS chunks of 64 MiB each,
 *                                          compressed to almost nothing
 *   synth_rec --bomb-threads N OUT.isr     one process listing N threads
 *   synth_rec -n EVENTS --names N OUT.isr  the training process, its launches
 *                                          cycling through N distinct kernels,
 *                                          each named once (long names), on
 *                                          the CPU and on the GPU
 *
 * The training process (pid 4242): its main thread launches 6 kernels an
 * iteration (cuLaunchKernel, entry-only), then waits in cuStreamSynchronize
 * (written at its return, after the scheduler events of the wait) with the
 * GIL released; CUPTI's kernels, launch API records, clock pairs and kernel
 * names come in batches from the bridge's thread every 100 ms, as the
 * recorder writes them; four workers wake, fault and sleep; every thread's
 * Python stack is sampled at 99 Hz, and the synchronizations' call sites
 * are captured. Deterministic: the same arguments write the same events.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_writer.h"
#include "events.h"
#include "isr_format.h"
#include "cuda_funcs.h"

#define PID		4242
#define MAIN		4242
#define WORKER0		4250
#define WORKERS		4
#define BRIDGE		4260
#define START_NS	1000000000000ULL	/* CLOCK_MONOTONIC of the start */
#define GPU_AHEAD	5000000000ULL		/* the GPU clock runs 5 s ahead */
#define HANDOFF_NS	100000000ULL		/* the bridge hands records over every 100 ms */
#define SAMPLE_NS	10101010ULL		/* 99 Hz */
#define KERNELS		6
#define STACKS		4
#define CODES		6

static struct rec_writer *w;
static unsigned long long distinct;	/* --names */
static unsigned long long written;
static __u64 rng = 0x9e3779b97f4a7c15ULL;

static __u64 rand_below(__u64 n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "synth_rec: %s failed: %s\n", what, strerror(-err));
	exit(1);
}

static void emit(const void *e, size_t size)
{
	int err = rec_writer__append_event(w, e, size);

	if (err)
		die("writing an event", err);
	written++;
}

static void hdr(struct isr_ev_hdr *h, __u16 type, size_t size, __u64 ts, __u32 tid)
{
	memset(h, 0, size);
	h->type = type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = PID;
	h->tid = tid;
	h->cpu = tid % 8;
}

/* ---- metadata -------------------------------------------------------------------- */

static void props_write(__u16 kind, struct rec_props *p)
{
	int err = rec_writer__write_props(w, kind, p);

	if (err)
		die("writing properties", err);
	rec_props__free(p);
}

static struct rec_props *props_new(void)
{
	struct rec_props *p = rec_props__new();

	if (!p)
		die("allocating properties", -ENOMEM);
	return p;
}

static void prop(int err)
{
	if (err)
		die("adding a property", err);
}

static void write_host(void)
{
	struct rec_props *p = props_new();

	prop(rec_props__add_str(p, ISR_PROP_HOST_NAME, "synth-host"));
	prop(rec_props__add_u32(p, ISR_PROP_HOST_NCPUS, 8));
	prop(rec_props__add_u64(p, ISR_PROP_HOST_START_MONO_NS, START_NS));
	props_write(ISR_CHUNK_HOST, p);
}

/* The process, listing its first n_threads tids from MAIN on (or the
 * training process's threads when n_threads is 0). */
static void write_process(size_t n_threads)
{
	static const __u32 tids[] = { MAIN, WORKER0, WORKER0 + 1, WORKER0 + 2, WORKER0 + 3, BRIDGE };
	size_t n = n_threads ? n_threads : sizeof(tids) / sizeof(tids[0]);
	struct isr_thread_info *t = calloc(n, sizeof(*t));
	struct rec_props *p = props_new();

	if (!t)
		die("allocating the thread list", -ENOMEM);
	for (size_t i = 0; i < n; i++) {
		t[i].tid = n_threads ? MAIN + (__u32)i : tids[i];
		snprintf(t[i].comm, sizeof(t[i].comm), "%s", i ? "worker" : "python3");
	}
	prop(rec_props__add_u32(p, ISR_PROP_PROC_PID, PID));
	prop(rec_props__add_str(p, ISR_PROP_PROC_COMM, "python3"));
	prop(rec_props__add(p, ISR_PROP_PROC_CMDLINE, "python3\0train.py", 17));
	prop(rec_props__add_u32(p, ISR_PROP_PROC_ORIGIN, ISR_ORIGIN_ATTACHED));
	prop(rec_props__add(p, ISR_PROP_PROC_THREADS, t, n * sizeof(*t)));
	props_write(ISR_CHUNK_PROCESS, p);
	free(t);
}

/* ---- the training process ------------------------------------------------------------- */

/* GPU records wait for the bridge's next hand-off. A record is valid
 * until the next one is made. */
static unsigned char *gpu_buf;
static size_t gpu_len, gpu_cap;

static void *gpu_record(__u16 type, size_t size)
{
	void *e;

	if (gpu_len + size > gpu_cap) {
		gpu_cap = (gpu_len + size) * 2;
		gpu_buf = realloc(gpu_buf, gpu_cap);
		if (!gpu_buf)
			die("buffering GPU records", -ENOMEM);
	}
	e = gpu_buf + gpu_len;
	gpu_len += size;
	hdr(e, type, size, 0, BRIDGE);
	return e;
}

static void handoff(__u64 now)
{
	for (size_t off = 0; off < gpu_len;) {
		struct isr_ev_hdr *h = (void *)(gpu_buf + off);

		h->ts_ns = now;
		emit(h, h->size);
		off += h->size;
	}
	gpu_len = 0;
}

static void clock_pair(__u64 now)
{
	struct isr_ev_gpu_clock *c = gpu_record(ISR_EV_GPU_CLOCK, sizeof(*c));

	c->gpu_ns = now + GPU_AHEAD + rand_below(40);
	c->mono_before_ns = now - 300;
	c->mono_after_ns = now + 300;
}

static void sched_switch(__u64 ts, __u32 prev_pid, __u32 prev, __u32 prev_state, __u32 next_pid, __u32 next)
{
	struct isr_ev_sched_switch e;

	hdr(&e.hdr, ISR_EV_SCHED_SWITCH, sizeof(e), ts, prev);
	e.hdr.pid = prev_pid;
	e.next_pid = next_pid;
	e.next_tid = next;
	e.prev_state = prev_state;
	e.flags = 0;
	emit(&e, sizeof(e));
}

static void wakeup(__u64 ts, __u32 tid, __u32 waker_pid, __u32 waker)
{
	struct isr_ev_sched_wakeup e;

	hdr(&e.hdr, ISR_EV_SCHED_WAKEUP, sizeof(e), ts, tid);
	e.waker_pid = waker_pid;
	e.waker_tid = waker;
	e.target_cpu = tid % 8;
	emit(&e, sizeof(e));
}

static void gil(__u64 ts, __u32 tid, __u32 kind, __u64 wait)
{
	struct isr_ev_gil e;

	hdr(&e.hdr, ISR_EV_GIL, sizeof(e), ts, tid);
	e.kind = kind;
	e.wait_ns = wait;
	emit(&e, sizeof(e));
}

static void cuda_call(__u64 ts, __u16 func, __u16 flags, __u64 duration, __u64 arg0)
{
	struct isr_ev_cuda_call e;

	hdr(&e.hdr, ISR_EV_CUDA_CALL, sizeof(e), ts, MAIN);
	e.func = func;
	e.flags = flags;
	e.duration_ns = duration;
	e.args[0] = arg0;
	emit(&e, sizeof(e));
}

/* Stack s of thread tid sampled at ts (kind TIMER or CUDA); the stack and
 * its code objects are written the first time. */
static void py_sample(__u64 ts, __u32 tid, __u32 s, __u16 kind)
{
	static const char *const files[CODES] = { "train.py", "train.py", "model.py", "loader.py",
						  "/usr/lib/python3.12/threading.py", "optim.py" };
	static const char *const names[CODES] = { "<module>", "step", "forward", "fetch", "wait", "update" };
	static bool code_seen[CODES], stack_seen[STACKS + 1];
	struct {
		struct isr_ev_py_stack st;
		struct isr_py_frame f[3];
	} stack;
	struct {
		struct isr_ev_py_code c;
		char text[64];
	} code;
	struct isr_ev_py_sample e;

	if (!stack_seen[s]) {
		stack_seen[s] = true;
		hdr(&stack.st.hdr, ISR_EV_PY_STACK, sizeof(stack), ts, tid);
		stack.st.stack_id = s;
		stack.st.depth = 3;
		for (int i = 0; i < 3; i++) {
			__u32 c = i == 2 ? 0 : (s + (__u32)i) % (CODES - 1) + 1;

			stack.f[i].code = 0x7f0000000000ULL + c * 0x100;
			stack.f[i].instr = 4 * i;
			if (code_seen[c])
				continue;
			code_seen[c] = true;
			hdr(&code.c.hdr, ISR_EV_PY_CODE, sizeof(code), ts, tid);
			code.c.code = stack.f[i].code;
			code.c.first_line = 10 + c * 20;
			code.c.py_minor = 12;
			code.c.filename_len = (__u16)strlen(files[c]);
			code.c.qualname_len = (__u16)strlen(names[c]);
			memcpy(code.text, files[c], code.c.filename_len);
			memcpy(code.text + code.c.filename_len, names[c], code.c.qualname_len);
			emit(&code, sizeof(code));
		}
		emit(&stack, sizeof(stack));
	}
	hdr(&e.hdr, ISR_EV_PY_SAMPLE, sizeof(e), ts, tid);
	e.stack_id = s;
	e.kind = kind;
	emit(&e, sizeof(e));
}

static void kernel_names(void)
{
	for (__u32 k = 1; k <= KERNELS; k++) {
		struct isr_ev_gpu_name *n = gpu_record(ISR_EV_GPU_NAME, sizeof(*n));
		struct isr_ev_cuda_name c;

		n->id = k;
		snprintf(n->name, sizeof(n->name), "_Z%uk%uPf", k < 10 ? 2 : 3, k);
		hdr(&c.hdr, ISR_EV_CUDA_NAME, sizeof(c), START_NS, MAIN);
		c.func = ISR_CUDA_FN_cuModuleGetFunction;
		c.handle = 0x5000 + k;
		c.owner = 0x4000;
		snprintf(c.name, sizeof(c.name), "_Z%uk%uPf", k < 10 ? 2 : 3, k);
		emit(&c, sizeof(c));
	}
}

/* --names: the handle and the GPU name id of the launch slot-th launch
 * since the start (at ts), its kernel named by CUDA_NAME and GPU_NAME
 * records the first time. */
static void distinct_kernel(unsigned long long slot, __u64 ts, __u64 *handle, __u32 *name_id)
{
	unsigned long long idx = slot % distinct;

	*handle = 0x100000 + idx;
	*name_id = (__u32)(KERNELS + 1 + idx);
	if (slot < distinct) {
		struct isr_ev_gpu_name *n = gpu_record(ISR_EV_GPU_NAME, sizeof(*n));
		struct isr_ev_cuda_name c;
		char name[200];

		/* a long mangled name, unique in its first characters */
		snprintf(name, sizeof(name), "_ZN5synth6kernelILi%lluEEEvPfS1_iNS_6layoutE%0120llu", idx, idx * 7919);
		n->id = *name_id;
		snprintf(n->name, sizeof(n->name), "%s", name);
		hdr(&c.hdr, ISR_EV_CUDA_NAME, sizeof(c), ts - 500, MAIN);
		c.func = ISR_CUDA_FN_cuModuleGetFunction;
		c.handle = *handle;
		c.owner = 0x4000;
		snprintf(c.name, sizeof(c.name), "%s", name);
		emit(&c, sizeof(c));
	}
}

/* The training process's events until target are written; its end. */
static __u64 training(unsigned long long target)
{
	__u64 t = START_NS + 1000000, gpu_free = t, next_handoff = t + HANDOFF_NS, next_clock = t;
	__u64 next_sample[WORKERS + 1] = { 0 };
	__u32 corr = 1;

	kernel_names();
	for (unsigned long long it = 0; written < target; it++) {
		__u64 ret, entry;
		__u32 worker = WORKER0 + (__u32)(it % WORKERS);

		/* the launches, their API records and kernels */
		for (__u32 k = 0; k < KERNELS; k++) {
			__u64 launch = t + k * 4000 + rand_below(500);
			__u64 start = launch + 6000 > gpu_free ? launch + 6000 : gpu_free, handle = 0x5001 + k;
			__u32 name_id = k + 1;
			struct isr_ev_gpu_kernel *kr;
			struct isr_ev_gpu_api *a;

			if (distinct)
				distinct_kernel(it * KERNELS + k, launch, &handle, &name_id);
			cuda_call(launch, ISR_CUDA_FN_cuLaunchKernel, ISR_CUDA_ASYNC, 0, handle);
			a = gpu_record(ISR_EV_GPU_API, sizeof(*a));	/* valid until the next record */
			a->start_ns = launch - 1500 + GPU_AHEAD;
			a->end_ns = launch + 2500 + GPU_AHEAD;
			a->correlation_id = corr;
			a->cbid = 211;	/* cudaLaunchKernel_v7000 */
			a->thread_id = MAIN;
			a->api = ISR_GPU_API_RUNTIME;
			gpu_free = start + 20000 + rand_below(60000);
			kr = gpu_record(ISR_EV_GPU_KERNEL, sizeof(*kr));
			kr->start_ns = start + GPU_AHEAD;
			kr->end_ns = gpu_free + GPU_AHEAD;
			kr->correlation_id = corr++;
			kr->name_id = name_id;
			kr->stream_id = 7;
			kr->grid[0] = 256;
			kr->block[0] = 128;
		}
		/* the synchronization: GIL released, the thread sleeps until the
		 * GPU is done; the call is written at its return */
		entry = t + KERNELS * 4000 + 1000;
		ret = (gpu_free > entry ? gpu_free : entry) + 3000;
		gil(entry - 200, MAIN, ISR_GIL_RELEASE, 0);
		py_sample(entry, MAIN, 1, ISR_PY_KIND_CUDA);
		sched_switch(entry + 2000, PID, MAIN, 1, 0, 0);
		wakeup(ret - 3000, MAIN, 0, 0);
		sched_switch(ret - 1000, 0, 0, 0, PID, MAIN);
		cuda_call(entry, ISR_CUDA_FN_cuStreamSynchronize, ISR_CUDA_RETURNED, ret - entry, 0);
		gil(ret + 100, MAIN, ISR_GIL_ACQUIRE, 300 + rand_below(2000));
		/* a worker wakes, faults, sleeps */
		wakeup(entry + 5000, worker, PID, MAIN);
		sched_switch(entry + 7000, 0, 0, 0, PID, worker);
		if (it % 3 == 0) {
			struct isr_ev_page_fault f;

			hdr(&f.hdr, ISR_EV_PAGE_FAULT, sizeof(f), entry + 12000, worker);
			f.address = 0x7e0000000000ULL + rand_below(1 << 30);
			f.duration_ns = 2000 + rand_below(3000);
			f.flags = ISR_FAULT_HAS_START | ISR_FAULT_WRITE;
			emit(&f, sizeof(f));
		}
		sched_switch(entry + 30000, PID, worker, 1, 0, 0);
		/* 99 Hz samples of every thread */
		for (__u32 i = 0; i <= WORKERS; i++) {
			if (next_sample[i] > ret)
				continue;
			next_sample[i] = ret + SAMPLE_NS;
			py_sample(ret + i * 100, i ? WORKER0 + i - 1 : MAIN, i ? 3 + i % 2 : 2, ISR_PY_KIND_TIMER);
		}
		t = ret + 20000 + rand_below(20000);
		if (t >= next_clock) {
			clock_pair(t);
			next_clock = t + 1000000000ULL;
		}
		if (t >= next_handoff) {
			handoff(t);
			next_handoff = t + HANDOFF_NS;
		}
	}
	handoff(t);
	return t;
}

/* ---- bombs ------------------------------------------------------------------------------ */

/* chunks EVENTS chunks of ISR_CHUNK_MAX_PAYLOAD bytes of one event. */
static void decompression_bomb(unsigned long long chunks)
{
	struct isr_ev_sched_wakeup e;
	size_t per_chunk = ISR_CHUNK_MAX_PAYLOAD / sizeof(e);

	hdr(&e.hdr, ISR_EV_SCHED_WAKEUP, sizeof(e), START_NS + 1000, MAIN);
	for (unsigned long long c = 0; c < chunks; c++) {
		int err;

		for (size_t i = 0; i < per_chunk; i++)
			emit(&e, sizeof(e));
		err = rec_writer__flush(w);
		if (err)
			die("writing a chunk", err);
	}
}

static unsigned long long number(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || !v) {
		fprintf(stderr, "synth_rec: %s wants a positive number, not \"%s\"\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long events = 1000000, bomb_chunks = 0, bomb_threads = 0;
	struct rec_writer_opts opts = { .zstd_level = 1 };
	__u64 end = START_NS + 2000000;
	const char *out = NULL;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			events = number("-n", argv[++i]);
		else if (!strcmp(argv[i], "--bomb-chunks") && i + 1 < argc)
			bomb_chunks = number("--bomb-chunks", argv[++i]);
		else if (!strcmp(argv[i], "--bomb-threads") && i + 1 < argc)
			bomb_threads = number("--bomb-threads", argv[++i]);
		else if (!strcmp(argv[i], "--names") && i + 1 < argc)
			distinct = number("--names", argv[++i]);
		else if (argv[i][0] != '-' && !out)
			out = argv[i];
		else
			out = NULL, i = argc;
	}
	if (!out) {
		fprintf(stderr, "usage: synth_rec [-n EVENTS [--names N] | --bomb-chunks K | --bomb-threads N] OUT.isr\n");
		return 2;
	}
	if (bomb_chunks) {
		opts.chunk_bytes = ISR_CHUNK_MAX_PAYLOAD;
		opts.zstd_level = 19;
	}
	w = rec_writer__open(out, &opts);
	if (!w) {
		fprintf(stderr, "synth_rec: cannot create %s: %s\n", out, strerror(errno));
		return 1;
	}
	write_host();
	write_process(bomb_threads);
	if (bomb_chunks)
		decompression_bomb(bomb_chunks);
	else if (!bomb_threads)
		end = training(events);
	err = rec_writer__finish(w, end, ISR_STOP_SIGNAL);
	if (err)
		die("finishing the file", err);
	rec_writer__free(w);
	free(gpu_buf);
	printf("%llu events\n", written);
	return 0;
}
