// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder without BPF: the writer's ring (user/record/rec_writer.h)
 * keeps the last window of events on a simulated clock, writes it as a
 * recording the reader takes whole, with the definitions its events need
 * and the drops of its own time; windows never overlap; the memory cap
 * shortens a window from its old end. The live checks (user/record/flight.h)
 * fire on what they should and nothing else.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "flight.h"
#include "rec_writer.h"
#include "recording.h"
#include "registry.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

static char dir[] = "/tmp/isr-flight-XXXXXX";

static int group_setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

/* An event of process 7 at t, its header filled in. */
static void append(struct rec_writer *w, void *ev, __u16 type, size_t size, __u64 t)
{
	struct isr_ev_hdr *h = ev;

	h->type = type;
	h->size = (__u16)size;
	h->ts_ns = t;
	h->pid = h->tid = 7;
	assert_int_equal(rec_writer__append_event(w, ev, size), 0);
}

/* A numbered launch (grid x = k) at t. */
static void append_launch(struct rec_writer *w, __u64 t, __u64 k)
{
	struct isr_ev_cuda_call e = { .func = ISR_CUDA_FN_cuLaunchKernel, .args[1] = k };

	append(w, &e, ISR_EV_CUDA_CALL, sizeof(e), t);
}

static void append_task_info(struct rec_writer *w, __u64 t, const char *comm)
{
	struct isr_ev_task_info e = { .task_pid = 7, .task_tid = 7 };

	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	append(w, &e, ISR_EV_TASK_INFO, sizeof(e), t);
}

static void set_drops(struct rec_writer *w, __u64 cuda)
{
	struct isr_drop_count d[ISR_SRC_MAX];

	memset(d, 0, sizeof(d));
	for (__u32 i = 0; i < ISR_SRC_MAX; i++)
		d[i].source = i;
	d[ISR_SRC_CUDA].count = cuda;
	assert_int_equal(rec_writer__write_drops(w, d, ISR_SRC_MAX), 0);
}

/* A definition of each kind a window may need but not hold. */
static void append_definitions(struct rec_writer *w, __u64 t)
{
	struct isr_ev_nccl_comm c = { .comm = 0xc0, .id_hash = 42, .nranks = 2 };
	struct isr_ev_rank_env r = { .rank = 1, .flags = ISR_RANK_ENV_RANK };

	append(w, &c, ISR_EV_NCCL_COMM, sizeof(c), t);
	append(w, &r, ISR_EV_RANK_ENV, sizeof(r), t);
	append_task_info(w, t, "worker");
}

struct seen {
	__u64 first, last, launches, task_infos, comms, rank_envs, cuda_drops;
	__u64 start, end;
	__u32 stop;
	char trigger[64];
};

static void write_and_read(struct rec_writer *w, unsigned int n, __u64 now, struct seen *s)
{
	struct rec_props *host = rec_props__new();
	struct rec_ring_stats st;
	struct rec_window win;
	struct recording *r;
	char path[PATH_MAX], err[256];

	assert_int_equal(rec_writer__flush(w), 0);
	rec_writer__ring_trim(w, now);
	rec_writer__ring_stats(w, &st);
	assert_non_null(host);
	assert_int_equal(rec_props__add_u64(host, ISR_PROP_HOST_START_MONO_NS, st.first_ns), 0);
	assert_int_equal(rec_props__add_str(host, ISR_PROP_HOST_TRIGGER, "test"), 0);
	snprintf(path, sizeof(path), "%s/w.%u.isr", dir, n);
	assert_int_equal(rec_writer__write_window(w, path, host, now, ISR_STOP_FLIGHT_TRIGGER, &win), 0);
	rec_props__free(host);
	assert_int_equal(recording__load(path, &r, err, sizeof(err)), 0);
	assert_false(r->truncated);
	memset(s, 0, sizeof(*s));
	s->first = UINT64_MAX;
	s->start = r->host.start_mono_ns;
	s->end = r->end_mono_ns;
	s->stop = r->stop_reason;
	snprintf(s->trigger, sizeof(s->trigger), "%s", r->host.trigger ? r->host.trigger : "");
	for (size_t i = 0; i < r->event_count; i++) {
		const struct isr_ev_cuda_call *e = (const void *)r->events[i];

		if (e->hdr.type == ISR_EV_TASK_INFO)
			s->task_infos++;
		s->comms += e->hdr.type == ISR_EV_NCCL_COMM;
		s->rank_envs += e->hdr.type == ISR_EV_RANK_ENV;
		if (e->hdr.type != ISR_EV_CUDA_CALL)
			continue;
		s->launches++;
		s->first = e->args[1] < s->first ? e->args[1] : s->first;
		s->last = e->args[1] > s->last ? e->args[1] : s->last;
	}
	s->cuda_drops = r->drops[ISR_SRC_CUDA];
	assert_int_equal(win.events, s->launches);	/* a definition kept from before is not the window's */
	recording__free(r);
	unlink(path);
}

/* 1000 launches a second for 10 s, sealed every 100 ms: a 2 s window holds
 * the last 2 s (up to one seal more), the task named at the start, the
 * drops of its own time; the next window begins with the next launch. */
static void test_ring_windows(void **state)
{
	struct rec_writer_opts o = { .zstd_level = 1, .ring_window_ns = 2 * SEC, .ring_max_bytes = 64 << 20 };
	struct rec_writer *w = rec_writer__open_ring(&o);
	struct seen s1, s2;
	__u64 t = SEC, k = 0;

	(void)state;
	assert_non_null(w);
	set_drops(w, 0);
	append_definitions(w, t);
	for (; t < 11 * SEC; t += MS) {
		append_launch(w, t, ++k);
		if (t % (100 * MS) == 0) {
			assert_int_equal(rec_writer__flush(w), 0);
			rec_writer__ring_trim(w, t);
		}
		if (t == 5 * SEC)
			set_drops(w, 40);	/* before the window: not its drops */
		if (t == 10 * SEC)
			set_drops(w, 45);	/* within: 5 of them */
	}
	write_and_read(w, 1, t, &s1);
	assert_int_equal(s1.stop, ISR_STOP_FLIGHT_TRIGGER);
	assert_string_equal(s1.trigger, "test");
	assert_int_equal(s1.last, k);
	assert_int_equal(s1.launches, s1.last - s1.first + 1);
	assert_true(s1.launches >= 2000 && s1.launches <= 2100);
	assert_true(s1.end - s1.start >= 2 * SEC && s1.end - s1.start <= 2 * SEC + 100 * MS + MS);
	assert_int_equal(s1.task_infos, 1);	/* kept from the evicted start */
	assert_int_equal(s1.comms, 1);		/* the communicator and the rank too: windows of ranks match */
	assert_int_equal(s1.rank_envs, 1);
	assert_int_equal(s1.cuda_drops, 5);
	/* Nothing written twice: the next window starts after the last. */
	for (; t < 11 * SEC + 500 * MS; t += MS)
		append_launch(w, t, ++k);
	write_and_read(w, 2, t, &s2);
	assert_int_equal(s2.first, s1.last + 1);
	assert_int_equal(s2.last, k);
	assert_int_equal(s2.cuda_drops, 0);
	assert_int_equal(s2.task_infos, 1);
	assert_int_equal(s2.comms, 1);
	assert_int_equal(s2.rank_envs, 1);
	assert_int_equal(rec_writer__finish(w, t, 0), -EINVAL);
	rec_writer__free(w);
}

/* Past the memory cap the oldest chunks go: the window is shorter, its
 * events contiguous, and the loss said. */
static void test_ring_memory_cap(void **state)
{
	struct rec_writer_opts o = { .zstd_level = 0, .ring_window_ns = 10 * SEC, .ring_max_bytes = 256 << 10 };
	struct rec_writer *w = rec_writer__open_ring(&o);
	struct rec_ring_stats st;
	struct seen s;
	__u64 t = SEC, k = 0;

	(void)state;
	assert_non_null(w);
	for (; t < 6 * SEC; t += MS) {
		append_launch(w, t, ++k);
		if (t % (100 * MS) == 0) {
			assert_int_equal(rec_writer__flush(w), 0);
			rec_writer__ring_trim(w, t);
			rec_writer__ring_stats(w, &st);
			assert_true(st.bytes <= (256 << 10) + 100 * sizeof(struct isr_ev_cuda_call));
		}
	}
	rec_writer__ring_stats(w, &st);
	assert_true(st.capped_events > 0);
	write_and_read(w, 1, t, &s);
	assert_int_equal(s.last, k);
	assert_int_equal(s.launches, s.last - s.first + 1);
	assert_true(s.launches < 5000 && s.launches > 2000);
	rec_writer__free(w);
}

static void test_ring_refuses(void **state)
{
	struct rec_writer_opts o = { .ring_window_ns = SEC, .ring_max_bytes = 1 << 20 };
	struct rec_writer *w;
	struct rec_props *p = rec_props__new();

	(void)state;
	assert_null(rec_writer__open_ring(NULL));
	assert_null(rec_writer__open_ring(&(struct rec_writer_opts){ .ring_window_ns = 0, .ring_max_bytes = 1 }));
	w = rec_writer__open_ring(&o);
	assert_non_null(w);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_HOST, p), -EINVAL);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_PROCESS, p), 0);
	rec_props__free(p);
	rec_writer__free(w);
}

static void test_sync_check(void **state)
{
	struct flight_triggers trig = { .sync_ns = 300 * MS };
	struct flight_check fc;
	struct isr_ev_cuda_call e;
	char why[160] = "";

	(void)state;
	flight_check__init(&fc, &trig, 0);
	memset(&e, 0, sizeof(e));
	e.hdr.type = ISR_EV_CUDA_CALL;
	e.hdr.size = sizeof(e);
	e.hdr.pid = 3, e.hdr.tid = 4;
	e.func = ISR_CUDA_FN_cuStreamSynchronize;
	e.duration_ns = 299 * MS;
	assert_false(flight_check__event(&fc, &e.hdr, sizeof(e), why, sizeof(why)));
	e.duration_ns = 512 * MS;
	assert_true(flight_check__event(&fc, &e.hdr, sizeof(e), why, sizeof(why)));
	assert_string_equal(why, "sync: cuStreamSynchronize took 512.0 ms (pid 3, tid 4)");
	e.func = ISR_CUDA_FN_cuMemAlloc_v2;	/* long, but no synchronization */
	assert_false(flight_check__event(&fc, &e.hdr, sizeof(e), why, sizeof(why)));
	e.func = ISR_CUDA_FN_cuStreamQuery;	/* a query does not wait */
	assert_false(flight_check__event(&fc, &e.hdr, sizeof(e), why, sizeof(why)));
	e.func = ISR_CUDA_FN_cuMemcpyDtoH_v2;	/* a synchronous copy waits for the GPU */
	assert_true(flight_check__event(&fc, &e.hdr, sizeof(e), why, sizeof(why)));
	assert_string_equal(why, "sync: cuMemcpyDtoH_v2 took 512.0 ms (pid 3, tid 4)");
	assert_false(flight_check__event(&fc, &e.hdr, sizeof(e) - 8, why, sizeof(why)));	/* too short to read */
	trig.sync_ns = 0;
	flight_check__init(&fc, &trig, 0);
	e.func = ISR_CUDA_FN_cuStreamSynchronize;
	assert_false(flight_check__event(&fc, &e.hdr, sizeof(e), why, sizeof(why)));
}

static void test_gpu_idle_check(void **state)
{
	struct flight_triggers trig = { .gpu_idle_ns = 100 * MS };
	struct flight_check fc;
	struct isr_ev_gpu_kernel k;
	char why[160];

	(void)state;
	flight_check__init(&fc, &trig, 0);
	memset(&k, 0, sizeof(k));
	k.hdr.type = ISR_EV_GPU_KERNEL;
	k.hdr.size = sizeof(k);
	k.hdr.pid = 9;
	k.start_ns = 1000 * MS, k.end_ns = 1010 * MS;
	assert_false(flight_check__event(&fc, &k.hdr, sizeof(k), why, sizeof(why)));
	k.start_ns = 1050 * MS, k.end_ns = 1060 * MS;	/* 40 ms idle */
	assert_false(flight_check__event(&fc, &k.hdr, sizeof(k), why, sizeof(why)));
	k.start_ns = 1260 * MS, k.end_ns = 1270 * MS;	/* 200 ms idle */
	assert_true(flight_check__event(&fc, &k.hdr, sizeof(k), why, sizeof(why)));
	assert_string_equal(why, "gpu-idle: the GPU of pid 9 was idle 200.0 ms");
	k.hdr.pid = 10;		/* another process: its own history */
	k.start_ns = 5000 * MS, k.end_ns = 5001 * MS;
	assert_false(flight_check__event(&fc, &k.hdr, sizeof(k), why, sizeof(why)));
}

static void test_drop_check(void **state)
{
	struct flight_triggers trig = { .drop_burst = 100 };
	struct flight_check fc;
	char why[160];

	(void)state;
	flight_check__init(&fc, &trig, 50);
	assert_false(flight_check__drops(&fc, 149, why, sizeof(why)));
	assert_true(flight_check__drops(&fc, 300, why, sizeof(why)));
	assert_string_equal(why, "drops: 151 events lost within a second");
	assert_false(flight_check__drops(&fc, 300, why, sizeof(why)));
}

static void test_paths_and_options(void **state)
{
	struct flight_triggers t = { 1, 2, 3 };
	char out[32];

	(void)state;
	assert_int_equal(flight__window_path("run.isr", 3, out, sizeof(out)), 0);
	assert_string_equal(out, "run.3.isr");
	assert_int_equal(flight__window_path("dir/run", 12, out, sizeof(out)), 0);
	assert_string_equal(out, "dir/run.12");
	assert_int_equal(flight__window_path("a-very-long-name-indeed.isr", 1, out, 16), -ENAMETOOLONG);
	assert_int_equal(flight__parse_trigger("sync=500", &t), 0);
	assert_int_equal(t.sync_ns, 500 * MS);
	assert_int_equal(flight__parse_trigger("gpu-idle=20", &t), 0);
	assert_int_equal(t.gpu_idle_ns, 20 * MS);
	assert_int_equal(flight__parse_trigger("drops=0", &t), 0);
	assert_int_equal(t.drop_burst, 0);
	assert_int_equal(flight__parse_trigger("none", &t), 0);
	assert_int_equal(t.sync_ns + t.gpu_idle_ns + t.drop_burst, 0);
	assert_int_equal(flight__parse_trigger("sync=", &t), -EINVAL);
	assert_int_equal(flight__parse_trigger("sync=10x", &t), -EINVAL);
	assert_int_equal(flight__parse_trigger("sync=-1", &t), -EINVAL);
	assert_int_equal(flight__parse_trigger("stall=1", &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_windows),
		cmocka_unit_test(test_ring_memory_cap),
		cmocka_unit_test(test_ring_refuses),
		cmocka_unit_test(test_sync_check),
		cmocka_unit_test(test_gpu_idle_check),
		cmocka_unit_test(test_drop_check),
		cmocka_unit_test(test_paths_and_options),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
