/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Synthetic recordings for the unit tests: a recording built in memory,
 * event by event, in any order; synth__recording() sorts the events by time
 * (stably) and returns the recording the analysis reads. Times are
 * CLOCK_MONOTONIC nanoseconds. synth__write() writes it to a file as the
 * recorder does (user/record/rec_writer.c; its clock pairs, which the caller
 * owns, too), and synth__check_streamed() checks
 * that the file analyzed in memory and streamed gives the same reports.
 * Test helpers: they fail the test on error.
 */
#ifndef INFERSCOPE_TEST_SYNTH_H
#define INFERSCOPE_TEST_SYNTH_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "recording.h"
#include "rec_writer.h"
#include "analysis.h"
#include "report.h"

/* A recording under construction: events are appended in any order and
 * sorted by time (stably) when the recording is made. */
struct synth {
	struct recording rec;
	unsigned char *data;
	size_t len, cap;
	size_t *offs;
	size_t count, offs_cap;
};

static inline struct synth *synth__new(__u64 start, __u64 end)
{
	struct synth *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	b->rec.host.start_mono_ns = start;
	b->rec.end_mono_ns = end;
	b->rec.complete = true;
	return b;
}

static inline void *synth__event(struct synth *b, __u16 type, size_t size, __u64 ts, __u32 pid, __u32 tid)
{
	struct isr_ev_hdr *h;

	if (b->len + size > b->cap) {
		b->cap = (b->len + size) * 2;
		b->data = realloc(b->data, b->cap);
		assert_non_null(b->data);
	}
	if (b->count == b->offs_cap) {
		b->offs_cap = b->offs_cap ? b->offs_cap * 2 : 64;
		b->offs = realloc(b->offs, b->offs_cap * sizeof(*b->offs));
		assert_non_null(b->offs);
	}
	b->offs[b->count++] = b->len;
	h = (struct isr_ev_hdr *)(b->data + b->len);
	memset(h, 0, size);
	h->type = type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
	b->len += size;
	return h;
}

static inline void ev_switch(struct synth *b, __u64 ts, __u32 ppid, __u32 ptid, __u32 npid, __u32 ntid,
		      __u32 prev_state, __u32 flags)
{
	struct isr_ev_sched_switch *e = synth__event(b, ISR_EV_SCHED_SWITCH, sizeof(*e), ts, ppid, ptid);

	e->next_pid = npid;
	e->next_tid = ntid;
	e->prev_state = prev_state;
	e->flags = flags;
}

static inline void ev_wakeup(struct synth *b, __u64 ts, __u32 pid, __u32 tid, bool new_task)
{
	synth__event(b, new_task ? ISR_EV_SCHED_WAKEUP_NEW : ISR_EV_SCHED_WAKEUP,
		     sizeof(struct isr_ev_sched_wakeup), ts, pid, tid);
}

static inline void ev_wakeup_by(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 waker_pid, __u32 waker_tid)
{
	struct isr_ev_sched_wakeup *e = synth__event(b, ISR_EV_SCHED_WAKEUP, sizeof(*e), ts, pid, tid);

	e->waker_pid = waker_pid;
	e->waker_tid = waker_tid;
}

/* Woken by an interrupt that interrupted (waker_pid, waker_tid). */
static inline void ev_wakeup_irq(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 waker_pid, __u32 waker_tid)
{
	struct isr_ev_sched_wakeup *e = synth__event(b, ISR_EV_SCHED_WAKEUP, sizeof(*e), ts, pid, tid);

	e->waker_pid = waker_pid;
	e->waker_tid = waker_tid;
	e->flags = ISR_WAKE_INTERRUPT;
}

static inline void ev_fork(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 cpid, __u32 ctid, __u32 flags,
		    const char *comm)
{
	struct isr_ev_proc_fork *e = synth__event(b, ISR_EV_PROC_FORK, sizeof(*e), ts, pid, tid);

	e->child_pid = cpid;
	e->child_tid = ctid;
	e->flags = flags;
	strncpy(e->child_comm, comm, sizeof(e->child_comm) - 1);
}

static inline void ev_exec(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 old_tid, const char *comm)
{
	struct isr_ev_proc_exec *e = synth__event(b, ISR_EV_PROC_EXEC, sizeof(*e), ts, pid, tid);

	e->old_tid = old_tid;
	strncpy(e->comm, comm, sizeof(e->comm) - 1);
}

static inline void ev_exit(struct synth *b, __u64 ts, __u32 pid, __u32 tid, const char *comm)
{
	struct isr_ev_proc_exit *e = synth__event(b, ISR_EV_PROC_EXIT, sizeof(*e), ts, pid, tid);

	strncpy(e->comm, comm, sizeof(e->comm) - 1);
}

static inline void ev_rename(struct synth *b, __u64 ts, __u32 pid, __u32 tid, const char *comm)
{
	struct isr_ev_task_rename *e = synth__event(b, ISR_EV_TASK_RENAME, sizeof(*e), ts, pid, tid);

	strncpy(e->comm, comm, sizeof(e->comm) - 1);
}

static inline void ev_fault(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u64 duration, __u32 flags)
{
	struct isr_ev_page_fault *e = synth__event(b, ISR_EV_PAGE_FAULT, sizeof(*e), ts, pid, tid);

	e->duration_ns = duration;
	e->flags = flags;
}

/* A target process listed at the start, with its threads (tid, comm). */
static inline void synth__process(struct synth *b, __u32 pid, const char *comm, size_t n, const __u32 *tids,
			   const char *const *comms)
{
	struct rec_process *p;

	b->rec.processes = realloc(b->rec.processes, (b->rec.process_count + 1) * sizeof(*p));
	assert_non_null(b->rec.processes);
	p = &b->rec.processes[b->rec.process_count++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->origin = ISR_ORIGIN_ATTACHED;
	p->comm = strdup(comm);
	p->threads = calloc(n ? n : 1, sizeof(*p->threads));
	assert_non_null(p->threads);
	p->thread_count = n;
	for (size_t i = 0; i < n; i++) {
		p->threads[i].tid = tids[i];
		strncpy(p->threads[i].comm, comms[i], sizeof(p->threads[i].comm) - 1);
	}
}

/* A HOST property the reader keeps as written (an NVIDIA GPU, a NUMA
 * node): the struct, then len bytes of more. */
static inline void synth__host_prop(struct synth *b, __u32 key, const void *fixed, size_t flen, const void *more,
				    size_t len)
{
	struct rec_prop *p;

	b->rec.host.props = realloc(b->rec.host.props, (b->rec.host.prop_count + 1) * sizeof(*p));
	assert_non_null(b->rec.host.props);
	p = &b->rec.host.props[b->rec.host.prop_count++];
	p->key = key;
	p->len = (__u32)(flen + len);
	p->value = malloc(flen + len + 1);
	assert_non_null(p->value);
	memcpy(p->value, fixed, flen);
	if (len)
		memcpy(p->value + flen, more, len);
}

static struct synth *sort_target __attribute__((unused));

static inline int off_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct isr_ev_hdr *hx = (const void *)(sort_target->data + x);
	const struct isr_ev_hdr *hy = (const void *)(sort_target->data + y);

	if (hx->ts_ns != hy->ts_ns)
		return hx->ts_ns < hy->ts_ns ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: append order */
}

static inline const struct recording *synth__recording(struct synth *b)
{
	sort_target = b;
	if (b->count)
		qsort(b->offs, b->count, sizeof(*b->offs), off_cmp);
	free(b->rec.events);
	b->rec.events = calloc(b->count ? b->count : 1, sizeof(*b->rec.events));
	assert_non_null(b->rec.events);
	for (size_t i = 0; i < b->count; i++)
		b->rec.events[i] = (const void *)(b->data + b->offs[i]);
	b->rec.event_count = b->count;
	b->rec.event_data = b->data;
	b->rec.event_data_len = b->len;
	return &b->rec;
}

static inline void synth__free(struct synth *b)
{
	for (size_t i = 0; i < b->rec.process_count; i++) {
		free(b->rec.processes[i].comm);
		free(b->rec.processes[i].cmdline);
		free(b->rec.processes[i].maps);
		free(b->rec.processes[i].threads);
	}
	free(b->rec.processes);
	for (size_t i = 0; i < b->rec.host.prop_count; i++)
		free(b->rec.host.props[i].value);
	free(b->rec.host.props);
	free(b->rec.events);
	free(b->data);
	free(b->offs);
	free(b);
}

#ifndef MIB
#define MIB (1024ULL * 1024)
#endif
#define SYNTH_US 1000ULL
#define GPU_AHEAD (5000ULL * 1000000ULL)	/* the GPU clock is 5 s ahead of CLOCK_MONOTONIC */

/* A call whose return was probed (status and duration known). */
static inline struct isr_ev_cuda_call *ev_call(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u16 func,
					__s32 status, __u64 duration)
{
	struct isr_ev_cuda_call *e = synth__event(b, ISR_EV_CUDA_CALL, sizeof(*e), ts, pid, tid);

	e->func = func;
	e->flags = ISR_CUDA_RETURNED;
	e->status = status;
	e->duration_ns = duration;
	return e;
}

/* An entry-only launch of handle f. */
static inline void ev_launch(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u16 func, __u64 f)
{
	struct isr_ev_cuda_call *e = synth__event(b, ISR_EV_CUDA_CALL, sizeof(*e), ts, pid, tid);

	e->func = func;
	e->flags = ISR_CUDA_ASYNC;
	e->args[0] = f;
}

/* ALLOC and FREE families: address, bytes, kind from the function table. */
static inline void ev_mem(struct synth *b, __u64 ts, __u32 pid, __u16 func, __s32 status, __u64 addr, __u64 bytes)
{
	struct isr_ev_cuda_call *e = ev_call(b, ts, pid, pid, func, status, 1000);

	e->args[0] = addr;
	e->args[1] = bytes;
	e->args[3] = isr_cuda_fn(func)->aux;
}

static inline void ev_name(struct synth *b, __u64 ts, __u32 pid, __u16 func, __u64 handle, __u64 owner,
		    const char *name)
{
	struct isr_ev_cuda_name *e = synth__event(b, ISR_EV_CUDA_NAME, sizeof(*e), ts, pid, pid);

	e->func = func;
	e->handle = handle;
	e->owner = owner;
	strncpy(e->name, name, sizeof(e->name));
}

static inline void ev_gil(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 kind, __u64 wait_ns)
{
	struct isr_ev_gil *e = synth__event(b, ISR_EV_GIL, sizeof(*e), ts, pid, tid);

	e->kind = kind;
	e->wait_ns = wait_ns;
}

static inline void ev_gpu_clock(struct synth *b, __u64 mono, __u32 pid)
{
	struct isr_ev_gpu_clock *e = synth__event(b, ISR_EV_GPU_CLOCK, sizeof(*e), mono, pid, pid);

	e->gpu_ns = mono + GPU_AHEAD;
	e->mono_before_ns = mono - 500;
	e->mono_after_ns = mono + 500;
}

/* The bridge's FLUSHED status at mono time ts: every GPU record completed
 * before it was handed over. */
static inline void ev_gpu_flushed(struct synth *b, __u64 ts, __u32 pid)
{
	struct isr_ev_gpu_status *e = synth__event(b, ISR_EV_GPU_STATUS, sizeof(*e), ts, pid, pid);

	e->state = ISR_GPU_FLUSHED;
}

static inline void ev_gpu_name(struct synth *b, __u64 ts, __u32 pid, __u32 id, const char *name)
{
	struct isr_ev_gpu_name *e = synth__event(b, ISR_EV_GPU_NAME, sizeof(*e), ts, pid, pid);

	e->id = id;
	strncpy(e->name, name, sizeof(e->name) - 1);
}

/* The record of a window of GPU activity collection of pid (seq from 1),
 * sent 1 ms after its close. */
static inline void ev_gpu_window(struct synth *b, __u32 pid, __u32 seq, __u64 open, __u64 close, __u32 flags,
				 __u64 finalize_ns)
{
	struct isr_ev_gpu_window *w = synth__event(b, ISR_EV_GPU_WINDOW, sizeof(*w), close + 1000000ULL, pid, pid);

	w->seq = seq;
	w->open_ns = open;
	w->close_ns = close;
	w->flags = flags;
	w->finalize_ns = finalize_ns;
	w->finalize_tid = finalize_ns ? pid + 1 : 0;
}

/* A launch at mono time ts on tid: its uprobe event, CUPTI's API record
 * (2 us later, in the GPU clock) and the kernel, starting start_delay
 * after the launch (negative: a planted causality violation). */
static inline void gpu_launch(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 corr, long long start_delay,
		       __u64 dur, __u32 name_id)
{
	struct isr_ev_gpu_api *a;
	struct isr_ev_gpu_kernel *k;

	ev_launch(b, ts, pid, tid, ISR_CUDA_FN_cuLaunchKernel, 0x1000);
	a = synth__event(b, ISR_EV_GPU_API, sizeof(*a), ts + 900000000ULL, pid, pid);
	a->start_ns = ts + 2 * SYNTH_US + GPU_AHEAD;
	a->end_ns = ts + 4 * SYNTH_US + GPU_AHEAD;
	a->correlation_id = corr;
	a->cbid = 307;
	a->thread_id = tid;
	a->api = ISR_GPU_API_DRIVER;
	k = synth__event(b, ISR_EV_GPU_KERNEL, sizeof(*k), ts + 900000000ULL, pid, pid);
	k->start_ns = (__u64)((long long)(ts + GPU_AHEAD) + start_delay);
	k->end_ns = k->start_ns + dur;
	k->correlation_id = corr;
	k->name_id = name_id;
	k->stream_id = 7;
}


/* A successful ncclCommInitRank of pid at ts: communicator comm of nranks,
 * the unique id's hash id_hash, this process's rank. */
static inline void ev_nccl_comm(struct synth *b, __u64 ts, __u32 pid, __u64 comm, __u64 id_hash, int rank,
				int nranks)
{
	struct isr_ev_nccl_comm *e = synth__event(b, ISR_EV_NCCL_COMM, sizeof(*e), ts, pid, pid);

	e->comm = comm;
	e->id_hash = id_hash;
	e->duration_ns = 1000000ULL;
	e->rank = rank;
	e->nranks = nranks;
	e->func = ISR_NCCL_FN_ncclCommInitRank;
}

/* A code object of pid: file, qualified name, first line (no line table). */
static inline void ev_py_code(struct synth *b, __u64 ts, __u32 pid, __u64 code, const char *file, const char *qualname,
			      __u32 line)
{
	size_t fl = strlen(file), ql = strlen(qualname), size = (sizeof(struct isr_ev_py_code) + fl + ql + 7) & ~7ul;
	struct isr_ev_py_code *e = synth__event(b, ISR_EV_PY_CODE, size, ts, pid, pid);

	e->code = code;
	e->first_line = line;
	e->py_minor = 12;
	e->filename_len = (__u16)fl;
	e->qualname_len = (__u16)ql;
	memcpy((char *)(e + 1), file, fl);
	memcpy((char *)(e + 1) + fl, qualname, ql);
}

/* An interned stack of pid: n frames of the given code objects, innermost
 * first (n 0: a stack without a Python frame). */
static inline void ev_py_stack(struct synth *b, __u64 ts, __u32 pid, __u32 id, size_t n, const __u64 *codes)
{
	struct isr_ev_py_stack *e = synth__event(b, ISR_EV_PY_STACK, sizeof(*e) + n * sizeof(struct isr_py_frame), ts,
						 pid, pid);
	struct isr_py_frame *f = (struct isr_py_frame *)(e + 1);

	e->stack_id = id;
	e->depth = (__u16)n;
	for (size_t i = 0; i < n; i++) {
		f[i].code = codes[i];
		f[i].instr = 0;
	}
}

static inline void ev_py_sample(struct synth *b, __u64 ts, __u32 pid, __u32 tid, __u32 id, __u16 kind)
{
	struct isr_ev_py_sample *e = synth__event(b, ISR_EV_PY_SAMPLE, sizeof(*e), ts, pid, tid);

	e->stack_id = id;
	e->kind = kind;
}

/* Writes b's recording (synth__recording: its events in their order) to
 * path in EVENTS chunks of chunk_bytes, with its host start, processes and
 * end, as the recorder does. */
static inline void synth__write(struct synth *b, const char *path, size_t chunk_bytes)
{
	struct rec_writer_opts opts = { .chunk_bytes = chunk_bytes, .zstd_level = 1 };
	const struct recording *r = synth__recording(b);
	struct rec_writer *w = rec_writer__open(path, &opts);
	struct rec_props *p = rec_props__new();

	assert_non_null(w);
	assert_non_null(p);
	assert_int_equal(rec_props__add_u64(p, ISR_PROP_HOST_START_MONO_NS, r->host.start_mono_ns), 0);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_HOST, p), 0);
	rec_props__free(p);
	for (size_t i = 0; i < r->process_count; i++) {
		const struct rec_process *rp = &r->processes[i];
		struct isr_thread_info *t = calloc(rp->thread_count + 1, sizeof(*t));

		p = rec_props__new();
		assert_non_null(p);
		assert_non_null(t);
		for (size_t j = 0; j < rp->thread_count; j++) {
			t[j].tid = rp->threads[j].tid;
			memcpy(t[j].comm, rp->threads[j].comm, sizeof(t[j].comm));
		}
		assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_PID, rp->pid), 0);
		assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_ORIGIN, rp->origin), 0);
		if (rp->comm)
			assert_int_equal(rec_props__add_str(p, ISR_PROP_PROC_COMM, rp->comm), 0);
		if (rp->maps)
			assert_int_equal(rec_props__add_str(p, ISR_PROP_PROC_MAPS, rp->maps), 0);
		assert_int_equal(rec_props__add(p, ISR_PROP_PROC_THREADS, t, rp->thread_count * sizeof(*t)), 0);
		assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_PROCESS, p), 0);
		rec_props__free(p);
		free(t);
	}
	if (r->clock_pair_count)
		assert_int_equal(rec_writer__write_clock(w, r->clock_pairs, r->clock_pair_count), 0);
	for (size_t i = 0; i < r->event_count; i++)
		assert_int_equal(rec_writer__append_event(w, r->events[i], r->events[i]->size), 0);
	assert_int_equal(rec_writer__finish(w, r->end_mono_ns, ISR_STOP_DURATION), 0);
	rec_writer__free(w);
}

/* A report of a, rendered by writer, as a string (the caller frees). */
static inline char *synth__render(const struct analysis *a, int (*writer)(FILE *, const struct analysis *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(writer(m, a), 0);
	assert_int_equal(fclose(m), 0);
	return buf;
}

/* b written to a file (in chunks of chunk_bytes), analyzed with its events
 * in memory (recording__load) and streamed (pass__open_file, reorder
 * buffer of buffer_bytes; 0: the default): the JSON and Markdown reports
 * are the same, byte for byte. The streamed analysis, for the caller to
 * look at (analysis__free). */
static inline struct analysis *synth__check_streamed(struct synth *b, size_t chunk_bytes, size_t buffer_bytes)
{
	struct pass_opts opts = { .buffer_bytes = buffer_bytes };
	char path[] = "/tmp/isr-synth-XXXXXX", err[512];
	struct analysis *mem = NULL, *streamed = NULL;
	char *want[2], *got[2];
	struct recording *r = NULL;
	struct pass *p = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	synth__write(b, path, chunk_bytes);
	if (recording__load(path, &r, err, sizeof(err)))
		fail_msg("recording__load: %s", err);
	assert_int_equal(analysis__run(r, &mem), 0);
	if (pass__open_file(path, &opts, &p, err, sizeof(err)))
		fail_msg("pass__open_file(%s): %s", path, err);
	assert_int_equal(analysis__run_pass(p, &streamed), 0);
	unlink(path);
	want[0] = synth__render(mem, report__write_json);
	got[0] = synth__render(streamed, report__write_json);
	want[1] = synth__render(mem, report__write_markdown);
	got[1] = synth__render(streamed, report__write_markdown);
	for (int i = 0; i < 2; i++) {
		if (strcmp(want[i], got[i]))
			fail_msg("the streamed %s report differs from the one in memory:\n%s\n---- streamed:\n%s",
				 i ? "Markdown" : "JSON", want[i], got[i]);
		free(want[i]);
		free(got[i]);
	}
	analysis__free(mem);
	recording__free(r);
	return streamed;
}

/* The contents of the file at path (malloc'ed; "" when empty), its length
 * up to the first NUL in *len (may be NULL); NULL when it cannot be
 * opened. */
static inline char *synth__slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &n, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	if (len)
		*len = strlen(buf);
	fclose(f);
	return buf;
}

/* The standard output of a shell command (malloc'ed; "" when none), its
 * exit status in *status. */
static inline char *synth__shell(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t n = 0;

	assert_non_null(p);
	if (getdelim(&buf, &n, '\0', p) < 0) {
		free(buf);
		buf = strdup("");
	}
	*status = pclose(p);
	return buf;
}

/* How many times needle occurs in hay, not overlapping. */
static inline size_t synth__count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#endif
