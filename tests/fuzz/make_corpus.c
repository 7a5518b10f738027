// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fuzzer's seed recordings (tests/fuzz/run.sh: build/fuzz/seeds/), by the real
 * writer (user/record/rec_writer.c) from synthetic content: no host, path or user
 * of the machine that made them is in them, and every event type of the
 * registry is in at least one of them.
 *
 *   make_corpus DIR           writes the seeds into DIR
 *   make_corpus --check DIR   exit 1, naming them, if the recordings in DIR
 *                             miss a registered event type (a type added
 *                             since the corpus was made: make_corpus.c needs one)
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "synth.h"
#include "isr_format.h"
#include "nccl_funcs.h"
#include "rec_writer.h"

#define MS 1000000ULL
#define T0 (5000 * MS)
#define PID 4100
#define LAUNCHER 4101
#define HELPER 4102
#define CHILD 4200

static const char maps_text[] =
	"55d0c0000000-55d0c0001000 r-xp 00000000 fd:01 1001                       /opt/app/bin/python3\n"
	"7f0000000000-7f0000200000 r-xp 00000000 fd:01 1002                       /opt/app/lib/libcuda.so.1\n"
	"7f0000400000-7f0000600000 r-xp 00000000 fd:01 1003                       /opt/app/lib/libpython3.12.so.1.0\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n";

static void die(const char *what, int e)
{
	fprintf(stderr, "make_corpus: %s: %s\n", what, strerror(e < 0 ? -e : e));
	exit(1);
}

static void check(int e, const char *what)
{
	if (e)
		die(what, e);
}

/* A small job with an event of every type: CPU, process life, faults,
 * CUDA calls and names, the GIL, the budget, CUPTI's records and Python
 * stacks. */
static struct synth *job(void)
{
	const __u32 tids[] = { LAUNCHER, HELPER };
	const char *const comms[] = { "python3", "loader" };
	const __u64 code[2] = { 0x7f1000001000ULL, 0x7f1000002000ULL };
	struct synth *b = synth__new(T0, T0 + 200 * MS);
	__u32 corr = 1;

	synth__process(b, PID, "python3", 2, tids, comms);
	ev_exec(b, T0 + 1 * MS, PID, LAUNCHER, LAUNCHER, "python3");
	ev_gpu_clock(b, T0 + 1 * MS, PID);
	ev_gpu_clock(b, T0 + 190 * MS, PID);
	ev_gpu_name(b, T0 + 2 * MS, PID, 1, "_Z4gemmPfS_i");
	ev_gpu_name(b, T0 + 2 * MS, PID, 2, "relu");
	ev_name(b, T0 + 2 * MS, PID, ISR_CUDA_FN_cuModuleGetFunction, 0x1000, 0x2000, "_Z4gemmPfS_i");
	ev_py_code(b, T0, PID, code[0], "/srv/train.py", "step", 12);
	ev_py_code(b, T0, PID, code[1], "/srv/train.py", "main", 30);
	ev_py_stack(b, T0, PID, 1, 2, code);
	ev_py_stack(b, T0, PID, 2, 1, &code[1]);
	ev_mem(b, T0 + 3 * MS, PID, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x7000000000ULL, 64 * MIB);
	for (__u64 t = T0 + 10 * MS; t < T0 + 60 * MS; t += 20 * MS) {
		gpu_launch(b, t, PID, LAUNCHER, corr++, 20 * (long long)SYNTH_US, 8 * MS, 1);
		gpu_launch(b, t + 100 * SYNTH_US, PID, LAUNCHER, corr++, 8000 * (long long)SYNTH_US, 2 * MS, 2);
		ev_py_sample(b, t + 1 * MS, PID, LAUNCHER, 1, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t + 100 * SYNTH_US, PID, LAUNCHER, 1, ISR_PY_KIND_CUDA);
		ev_call(b, t + 200 * SYNTH_US, PID, LAUNCHER, ISR_CUDA_FN_cuCtxSynchronize_v2, 0, 10 * MS);
		ev_switch(b, t + 210 * SYNTH_US, PID, LAUNCHER, 0, 0, 0x1, 0);
		ev_wakeup_by(b, t + 10 * MS, PID, LAUNCHER, PID, HELPER);
		ev_switch(b, t + 10 * MS, 0, 0, PID, LAUNCHER, 0, 0);
	}
	ev_mem(b, T0 + 150 * MS, PID, ISR_CUDA_FN_cuMemFree_v2, 0, 0x7000000000ULL, 0);
	{
		struct isr_ev_gpu_memcpy *m = synth__event(b, ISR_EV_GPU_MEMCPY, sizeof(*m), T0 + 100 * MS, PID, PID);

		m->start_ns = T0 + 70 * MS + GPU_AHEAD;
		m->end_ns = m->start_ns + 2 * MS;
		m->bytes = 16 * MIB;
		m->copy_kind = 1;
		m->src_kind = 3;
		m->dst_kind = 2;
		m->stream_id = 7;
		m->correlation_id = corr++;
	}
	{
		struct isr_ev_gpu_memset *m = synth__event(b, ISR_EV_GPU_MEMSET, sizeof(*m), T0 + 100 * MS, PID, PID);

		m->start_ns = T0 + 75 * MS + GPU_AHEAD;
		m->end_ns = m->start_ns + 1 * MS;
		m->bytes = 4 * MIB;
		m->stream_id = 7;
		m->memory_kind = 3;
		m->correlation_id = corr++;
	}
	{
		struct isr_ev_gpu_sync *s = synth__event(b, ISR_EV_GPU_SYNC, sizeof(*s), T0 + 100 * MS, PID, PID);

		s->start_ns = T0 + 80 * MS + GPU_AHEAD;
		s->end_ns = s->start_ns + 3 * MS;
		s->stream_id = 0xffffffffU;
		s->sync_type = 1;
		s->correlation_id = corr++;
	}
	{
		struct isr_ev_gpu_status *s = synth__event(b, ISR_EV_GPU_STATUS, sizeof(*s), T0 + 5 * MS, PID, PID);

		s->state = ISR_GPU_ENABLED;
		s = synth__event(b, ISR_EV_GPU_STATUS, sizeof(*s), T0 + 195 * MS, PID, PID);
		s->state = ISR_GPU_FLUSHED;
		s->cupti_dropped = 2;
		s->handed_over = 12;
	}
	{
		/* collected in two windows: 10-60 ms and 120-170 ms */
		struct isr_ev_gpu_window *w = synth__event(b, ISR_EV_GPU_WINDOW, sizeof(*w), T0 + 61 * MS, PID, PID);

		w->open_ns = T0 + 10 * MS;
		w->close_ns = T0 + 60 * MS;
		w->device_records = 4;
		w->api_records = 3;
		w->seq = 1;
		w->setup_us = 900;
		w->drain_us = 300;
		w = synth__event(b, ISR_EV_GPU_WINDOW, sizeof(*w), T0 + 171 * MS, PID, PID);
		w->open_ns = T0 + 120 * MS;
		w->close_ns = T0 + 170 * MS;
		w->seq = 2;
		w->finalize_ns = 40000;
		w->finalize_tid = PID;
	}
	{
		struct isr_ev_sampling *s = synth__event(b, ISR_EV_SAMPLING, sizeof(*s), T0, 0, 0);

		s->kind = ISR_SAMPLING_START;
		s->budget_ppm = 10000;
		s->hit_cost_ps = 800000;
		s = synth__event(b, ISR_EV_SAMPLING, sizeof(*s), T0 + 40 * MS, 0, 0);
		s->kind = ISR_SAMPLING_OFF;
		s->switch_ns = 50000;
		s->spent_ns = 2 * MS;
		s->credit_ns = -(__s64)MS;
		s = synth__event(b, ISR_EV_SAMPLING, sizeof(*s), T0 + 90 * MS, 0, 0);
		s->kind = ISR_SAMPLING_ON;
		s->switch_ns = 70000;
	}
	{
		struct isr_ev_py_status *s = synth__event(b, ISR_EV_PY_STATUS, sizeof(*s), T0 + 1 * MS, PID, PID);

		s->status = ISR_PY_STATUS_SAMPLING;
		s->py_minor = 12;
		s->runtime = 0x7f0000500000ULL;
		snprintf(s->detail, sizeof(s->detail), "layout of 3.12 checked");
	}
	ev_gil(b, T0 + 120 * MS, PID, HELPER, ISR_GIL_ACQUIRE, 3 * MS);
	ev_fault(b, T0 + 130 * MS, PID, HELPER, 2 * MS, ISR_FAULT_MAJOR | ISR_FAULT_HAS_START);
	ev_fault(b, T0 + 131 * MS, PID, LAUNCHER, 3000, ISR_FAULT_HAS_START | ISR_FAULT_WRITE);
	ev_rename(b, T0 + 140 * MS, PID, HELPER, "loader-2");
	{
		struct isr_ev_gil_wait *g = synth__event(b, ISR_EV_GIL_WAIT, sizeof(*g), T0 + 141 * MS, PID, LAUNCHER);
		struct isr_ev_task_info *t;
		struct isr_ev_reclaim *rc;

		g->duration_ns = 4 * MS;
		g->holder_tid = HELPER;
		g->flags = ISR_GIL_WAIT_HOLDER;
		t = synth__event(b, ISR_EV_TASK_INFO, sizeof(*t), T0 + 146 * MS, PID, LAUNCHER);
		t->task_pid = 4242;
		t->task_tid = 4243;
		snprintf(t->comm, sizeof(t->comm), "kworker/0:1");
		snprintf(t->process_comm, sizeof(t->process_comm), "kworker/0:1");
		rc = synth__event(b, ISR_EV_RECLAIM, sizeof(*rc), T0 + 150 * MS, PID, HELPER);
		rc->duration_ns = 2 * MS;
		rc->nr_reclaimed = 32;
		rc->kind = ISR_RECLAIM_MEMCG;
		for (int k = 0; k < 2; k++) {
			struct isr_ev_mem_sample *m = synth__event(b, ISR_EV_MEM_SAMPLE, sizeof(*m),
								   T0 + (151 + 10 * k) * MS, PID, 0);

			m->rss_anon_bytes = 300ULL << 20;
			m->rss_file_bytes = 40ULL << 20;
			m->swap_bytes = (__u64)k << 20;
			m->psi_some_us = 1000 + 9000 * (__u64)k;
			m->psi_full_us = 500 + 4000 * (__u64)k;
			m->cg_current_bytes = 500ULL << 20;
			m->cg_high_bytes = 512ULL << 20;
			m->cg_max_bytes = ISR_MEM_UNLIMITED;
			m->flags = ISR_MEM_CGROUP | ISR_MEM_PSI | (k ? 0 : ISR_MEM_NUMA);
			m->nnodes = 2;
			m->numa_bytes[0] = 1000 << 12;
			m->numa_bytes[1] = 80000ULL << 12;
		}
	}
	{
		struct isr_ev_nccl_comm *nc = synth__event(b, ISR_EV_NCCL_COMM, sizeof(*nc), T0 + 151 * MS, PID, LAUNCHER);
		struct isr_ev_nccl_call *call;
		struct isr_ev_rank_env *env;

		nc->comm = 0x5500aa00ULL;
		nc->id_hash = 0x1234567890abcdefULL;
		nc->duration_ns = MS;
		nc->nranks = 2;
		nc->func = ISR_NCCL_FN_ncclCommInitRank;
		call = synth__event(b, ISR_EV_NCCL_CALL, sizeof(*call), T0 + 153 * MS, PID, LAUNCHER);
		call->comm = nc->comm;
		call->count = 1024;
		call->seq = 1;
		call->peer = -1;
		call->func = ISR_NCCL_FN_ncclAllReduce;
		call->dtype = 7;
		call->op = 0;
		env = synth__event(b, ISR_EV_RANK_ENV, sizeof(*env), T0 + 2 * MS, PID, PID);
		env->rank = 0;
		env->local_rank = 0;
		env->world_size = 2;
		env->flags = ISR_RANK_ENV_RANK | ISR_RANK_ENV_LOCAL_RANK | ISR_RANK_ENV_WORLD_SIZE;
	}
	{
		/* an NVTX range with a mark inside, and a start/end range */
		static const struct {
			__u64 at_ms, id;
			__u16 kind;
			const char *name;
		} nvtx[] = {
			{ 100, 0, ISR_NVTX_PUSH, "step" }, { 101, 0, ISR_NVTX_MARK, "checkpoint" },
			{ 102, 7, ISR_NVTX_START, "load" }, { 105, 7, ISR_NVTX_END, NULL },
			{ 108, 0, ISR_NVTX_POP, NULL },
		};

		for (size_t i = 0; i < sizeof(nvtx) / sizeof(nvtx[0]); i++) {
			struct isr_ev_nvtx *n = synth__event(b, ISR_EV_NVTX, sizeof(*n), T0 + nvtx[i].at_ms * MS, PID,
							     LAUNCHER);

			n->kind = nvtx[i].kind;
			n->id = nvtx[i].id;
			if (nvtx[i].name)
				snprintf(n->name, sizeof(n->name), "%s", nvtx[i].name);
		}
	}
	ev_fork(b, T0 + 160 * MS, PID, LAUNCHER, CHILD, CHILD, ISR_FORK_FOLLOWED, "python3");
	{
		/* held from before it ran until its probes were armed */
		struct isr_ev_proc_hold *h = synth__event(b, ISR_EV_PROC_HOLD, sizeof(*h), T0 + 160 * MS, CHILD, CHILD);

		h->release_ns = T0 + 161 * MS;
		h->reason = ISR_HOLD_FORK;
		h->parent_pid = PID;
	}
	ev_wakeup(b, T0 + 160 * MS, CHILD, CHILD, true);
	ev_exit(b, T0 + 170 * MS, CHILD, CHILD, "python3");
	return b;
}

/* Only the scheduler, processes and faults: the smallest useful input. */
static struct synth *cpu(void)
{
	const __u32 tids[] = { LAUNCHER };
	const char *const comms[] = { "worker" };
	struct synth *b = synth__new(T0, T0 + 50 * MS);

	synth__process(b, PID, "worker", 1, tids, comms);
	for (__u64 t = T0 + MS; t < T0 + 40 * MS; t += 10 * MS) {
		ev_switch(b, t, PID, LAUNCHER, 0, 0, 0x1, 0);
		ev_wakeup(b, t + 4 * MS, PID, LAUNCHER, false);
		ev_switch(b, t + 5 * MS, 0, 0, PID, LAUNCHER, 0, 0);
		ev_fault(b, t + 6 * MS, PID, LAUNCHER, 1000, ISR_FAULT_HAS_START);
	}
	ev_fork(b, T0 + 41 * MS, PID, LAUNCHER, PID, LAUNCHER + 1, ISR_FORK_THREAD, "worker");
	ev_exit(b, T0 + 45 * MS, PID, LAUNCHER + 1, "worker");
	return b;
}

static void write_process(struct rec_writer *w, const struct rec_process *p, __u32 origin)
{
	static const char cmdline[] = "python3\0/srv/train.py\0--steps\0005";
	struct isr_thread_info ti[8];
	struct rec_props *props = rec_props__new();
	size_t n = p->thread_count < 8 ? p->thread_count : 8;

	if (!props)
		die("props", ENOMEM);
	memset(ti, 0, sizeof(ti));
	for (size_t i = 0; i < n; i++) {
		ti[i].tid = p->threads[i].tid;
		memcpy(ti[i].comm, p->threads[i].comm, sizeof(ti[i].comm));
	}
	check(rec_props__add_u32(props, ISR_PROP_PROC_PID, p->pid), "pid");
	check(rec_props__add_u32(props, ISR_PROP_PROC_PPID, 1), "ppid");
	check(rec_props__add_str(props, ISR_PROP_PROC_COMM, p->comm), "comm");
	check(rec_props__add(props, ISR_PROP_PROC_CMDLINE, cmdline, sizeof(cmdline)), "cmdline");
	check(rec_props__add_str(props, ISR_PROP_PROC_EXE, "/opt/app/bin/python3"), "exe");
	check(rec_props__add_str(props, ISR_PROP_PROC_MAPS, maps_text), "maps");
	check(rec_props__add(props, ISR_PROP_PROC_THREADS, ti, n * sizeof(ti[0])), "threads");
	check(rec_props__add_u64(props, ISR_PROP_PROC_SEEN_MONO_NS, T0), "seen");
	check(rec_props__add_u32(props, ISR_PROP_PROC_ORIGIN, origin), "origin");
	check(rec_writer__write_props(w, ISR_CHUNK_PROCESS, props), "process chunk");
	rec_props__free(props);
}

static void write_host(struct rec_writer *w, __u64 start, __u64 limit)
{
	static const char command[] = "inferscope-bpf\0record\0-o\0job.isr\0--\0python3\0train.py";
	struct rec_props *props = rec_props__new();

	if (!props)
		die("props", ENOMEM);
	check(rec_props__add_str(props, ISR_PROP_HOST_NAME, "fuzz-host"), "host");
	check(rec_props__add_str(props, ISR_PROP_HOST_KERNEL, "6.1.0"), "kernel");
	check(rec_props__add_str(props, ISR_PROP_HOST_KERNEL_VERSION, "#1 SMP"), "kernel version");
	check(rec_props__add_str(props, ISR_PROP_HOST_MACHINE, "x86_64"), "machine");
	check(rec_props__add_str(props, ISR_PROP_HOST_BOOT_ID, "00000000-0000-0000-0000-000000000000"), "boot id");
	check(rec_props__add_u32(props, ISR_PROP_HOST_NCPUS, 4), "ncpus");
	check(rec_props__add_str(props, ISR_PROP_HOST_TOOL_VERSION, "0.1.0"), "version");
	check(rec_props__add(props, ISR_PROP_HOST_COMMAND, command, sizeof(command)), "command");
	check(rec_props__add_u64(props, ISR_PROP_HOST_START_MONO_NS, start), "start");
	check(rec_props__add_u64(props, ISR_PROP_HOST_DURATION_LIMIT_NS, limit), "limit");
	check(rec_writer__write_props(w, ISR_CHUNK_HOST, props), "host chunk");
	rec_props__free(props);
}

/* The recording b as the recorder would write it: host, processes, clock
 * pairs, events in chunks of chunk_bytes, drops, end. */
static void write_recording(const char *path, struct synth *b, int zstd_level, size_t chunk_bytes)
{
	struct rec_writer_opts opts = { .chunk_bytes = chunk_bytes, .zstd_level = zstd_level };
	const struct recording *r = synth__recording(b);
	struct isr_drop_count drops[ISR_SRC_MAX];
	struct isr_clock_pair pair;
	struct rec_writer *w = rec_writer__open(path, &opts);

	if (!w)
		die(path, errno);
	write_host(w, r->host.start_mono_ns, 0);
	for (size_t i = 0; i < r->process_count; i++)
		write_process(w, &r->processes[i], i ? ISR_ORIGIN_CHILD : ISR_ORIGIN_LAUNCHED);
	memset(&pair, 0, sizeof(pair));
	pair.mono_ns = r->host.start_mono_ns;
	pair.other_ns = 1767225600ULL * 1000000000ULL;	/* 2026-01-01 */
	pair.uncertainty_ns = 40;
	pair.clock = ISR_CLOCK_REALTIME;
	check(rec_writer__write_clock(w, &pair, 1), "clock");
	for (size_t i = 0; i < r->event_count; i++)
		check(rec_writer__append_event(w, r->events[i], r->events[i]->size), "event");
	memset(drops, 0, sizeof(drops));
	for (__u32 s = 0; s < ISR_SRC_MAX; s++) {
		drops[s].source = s;
		drops[s].count = s == ISR_SRC_FAULTS ? 3 : 0;
	}
	check(rec_writer__write_drops(w, drops, ISR_SRC_MAX), "drops");
	pair.mono_ns = r->end_mono_ns;
	pair.other_ns += r->end_mono_ns - r->host.start_mono_ns;
	check(rec_writer__write_clock(w, &pair, 1), "clock");
	check(rec_writer__finish(w, r->end_mono_ns, ISR_STOP_TARGETS_EXITED), "finish");
	rec_writer__free(w);
}

/* The first len bytes of from: a recording cut short. */
static void write_prefix(const char *from, const char *to, long len)
{
	char buf[1 << 16];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	if (!in || !out)
		die(to, errno);
	n = fread(buf, 1, len < (long)sizeof(buf) ? (size_t)len : sizeof(buf), in);
	if (fwrite(buf, 1, n, out) != n)
		die(to, errno);
	fclose(in);
	fclose(out);
}

static int make(const char *dir)
{
	char path[4096], cut[4096];
	struct synth *b;
	FILE *f;
	long size;

	snprintf(path, sizeof(path), "%s/job.isr", dir);
	b = job();
	write_recording(path, b, 0, 2048);
	synth__free(b);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END))
		die(path, errno);
	size = ftell(f);
	fclose(f);
	snprintf(cut, sizeof(cut), "%s/job-cut.isr", dir);
	write_prefix(path, cut, size * 3 / 5);
	snprintf(path, sizeof(path), "%s/job-zstd.isr", dir);
	b = job();
	write_recording(path, b, 1, 4096);
	synth__free(b);
	snprintf(path, sizeof(path), "%s/cpu.isr", dir);
	b = cpu();
	write_recording(path, b, 0, 1024);
	synth__free(b);
	return 0;
}

#define TYPE_NAME(ID, name, value, st, ...) [value] = #name,
static const char *const type_names[] = { ISR_EVENT_TYPES(TYPE_NAME) };
#undef TYPE_NAME

/* Every registered event type is in one of the recordings in dir. */
static int check_dir(const char *dir)
{
	bool seen[sizeof(type_names) / sizeof(type_names[0])] = { false };
	char path[4096], err[512];
	struct dirent *d;
	int missing = 0, files = 0;
	DIR *dd = opendir(dir);

	if (!dd)
		die(dir, errno);
	while ((d = readdir(dd))) {
		struct recording *r;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (recording__load(path, &r, err, sizeof(err))) {
			fprintf(stderr, "make_corpus: %s does not load: %s\n", path, err);
			return 1;
		}
		files++;
		for (size_t i = 0; i < r->event_count; i++)
			if (r->events[i]->type < sizeof(seen) / sizeof(seen[0]))
				seen[r->events[i]->type] = true;
		recording__free(r);
	}
	closedir(dd);
	for (size_t t = 0; t < sizeof(seen) / sizeof(seen[0]); t++)
		if (type_names[t] && !seen[t]) {
			fprintf(stderr, "make_corpus: no %s event in the recordings of %s: add one to "
				"tests/fuzz/make_corpus.c\n", type_names[t], dir);
			missing++;
		}
	printf("corpus: %d recordings, %s\n", files, missing ? "event types missing" : "every event type present");
	return missing ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--check"))
		return check_dir(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: make_corpus DIR | --check DIR\n");
		return 2;
	}
	return make(argv[1]);
}
