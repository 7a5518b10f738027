// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Record file: what the writer puts in, the reader gives back, field for
 * field; a file cut at any byte or damaged anywhere reads back up to its last
 * good chunk and says where it stopped; a full disk is reported and counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <cmocka.h>

#include "rec_writer.h"
#include "recording.h"

#define UNKNOWN_TYPE	200	/* an event type no reader knows yet */
#define N_EVENTS	5000
#define SMALL_CHUNK	4096

static char tmp_dir[] = "/tmp/isr-test-XXXXXX";

static int tree__remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmp_dir)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmp_dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return nftw(tmp_dir, tree__remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmp_dir, name);
	return p;
}

/* ---- files ---------------------------------------------------------------- */

static unsigned char *file__read(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* Writes buf to path, then cuts it to keep bytes with ftruncate. */
static void file__write_cut(const char *path, const void *buf, size_t len, size_t keep)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(ftruncate(fd, (off_t)keep), 0);
	close(fd);
}

static void file__write(const char *path, const void *buf, size_t len)
{
	file__write_cut(path, buf, len, len);
}

/* The test's own walk over the chunk headers, independent of the reader. */
struct chunk_info {
	size_t offset, end;
	struct isr_chunk_header h;
};

static size_t chunks__walk(const unsigned char *buf, size_t len, struct chunk_info *out, size_t max)
{
	size_t off = sizeof(struct isr_file_header), n = 0;

	while (n < max && off + sizeof(struct isr_chunk_header) <= len) {
		memcpy(&out[n].h, buf + off, sizeof(out[n].h));
		if (out[n].h.magic != ISR_CHUNK_MAGIC)
			break;
		out[n].offset = off;
		out[n].end = off + sizeof(out[n].h) + out[n].h.stored_size;
		off = out[n].end;
		if (out[n++].h.kind == ISR_CHUNK_END)
			break;
	}
	return n;
}

static void chunk__fix_header_crc(unsigned char *at)
{
	struct isr_chunk_header h;

	memcpy(&h, at, sizeof(h));
	h.header_crc32 = (__u32)crc32(0L, (const Bytef *)&h, offsetof(struct isr_chunk_header, header_crc32));
	memcpy(at, &h, sizeof(h));
}

/* ---- synthetic content ------------------------------------------------------ */

union any_event {
	struct isr_ev_hdr hdr;
	struct isr_ev_sched_switch sw;
	struct isr_ev_sched_wakeup wk;
	struct isr_ev_proc_fork fork;
	struct isr_ev_proc_exec exec;
	struct isr_ev_proc_exit exit;
	struct isr_ev_task_rename rename;
	struct isr_ev_page_fault fault;
	unsigned char bytes[256];
};

/* Event number i, different in every field. Timestamps go back now and then
 * (as events of several CPUs do) and repeat, to exercise the sort. */
static size_t event__make(size_t i, union any_event *e)
{
	memset(e, 0, sizeof(*e));
	e->hdr.cpu = (__u32)(i % 16);
	e->hdr.ts_ns = 1000000 + i * 1000 - (i % 4) * 1700 - (i % 5 == 0 ? 1000 : 0);
	e->hdr.pid = (__u32)(100 + i % 3);
	e->hdr.tid = (__u32)(1000 + i % 7);
	switch (i % 9) {
	case 0:
		e->hdr.type = ISR_EV_SCHED_SWITCH;
		e->hdr.size = sizeof(e->sw);
		e->sw.next_pid = (__u32)(i * 3);
		e->sw.next_tid = (__u32)(i * 5);
		e->sw.prev_state = (__u32)(i & 3);
		e->sw.flags = (__u32)(i & ISR_SWITCH_PREEMPT);
		break;
	case 1:
	case 2:
		e->hdr.type = i % 9 == 1 ? ISR_EV_SCHED_WAKEUP : ISR_EV_SCHED_WAKEUP_NEW;
		e->hdr.size = sizeof(e->wk);
		e->wk.waker_pid = (__u32)(i * 7);
		e->wk.waker_tid = (__u32)(i * 11);
		e->wk.target_cpu = (__u32)(i % 13);
		break;
	case 3:
		e->hdr.type = ISR_EV_PROC_FORK;
		e->hdr.size = sizeof(e->fork);
		e->fork.child_pid = (__u32)(i + 1);
		e->fork.child_tid = (__u32)(i + 2);
		e->fork.flags = ISR_FORK_THREAD;
		snprintf(e->fork.child_comm, sizeof(e->fork.child_comm), "child-%u", (unsigned)(i % 100000));
		break;
	case 4:
		e->hdr.type = ISR_EV_PROC_EXEC;
		e->hdr.size = sizeof(e->exec);
		e->exec.old_tid = (__u32)(i + 3);
		snprintf(e->exec.comm, sizeof(e->exec.comm), "prog-%u", (unsigned)(i % 100000));
		snprintf(e->exec.filename, sizeof(e->exec.filename), "/opt/bin/prog-%zu", i);
		break;
	case 5:
		e->hdr.type = ISR_EV_PROC_EXIT;
		e->hdr.size = sizeof(e->exit);
		e->exit.exit_code = (__u32)(i << 8);
		e->exit.flags = ISR_EXIT_GROUP_DEAD;
		snprintf(e->exit.comm, sizeof(e->exit.comm), "gone-%u", (unsigned)(i % 100000));
		break;
	case 6:
		e->hdr.type = ISR_EV_TASK_RENAME;
		e->hdr.size = sizeof(e->rename);
		snprintf(e->rename.comm, sizeof(e->rename.comm), "worker-%u", (unsigned)(i % 100000));
		break;
	case 7:
		e->hdr.type = ISR_EV_PAGE_FAULT;
		e->hdr.size = sizeof(e->fault);
		e->fault.address = 0x7f0000000000ULL + i * 4096;
		e->fault.ip = 0x400000ULL + i;
		e->fault.duration_ns = i * 10;
		e->fault.flags = ISR_FAULT_HAS_START | (i & 1 ? ISR_FAULT_MAJOR : 0);
		break;
	default: {
		__u64 extra = i * 0x0101010101ULL;

		e->hdr.type = UNKNOWN_TYPE;
		e->hdr.size = 32;
		memcpy(e->bytes + 24, &extra, sizeof(extra));
		break;
	}
	}
	return e->hdr.size;
}

static const char host_command[] = "inferscope-bpf\0record\0-p\0" "123";
static const char proc1_cmdline[] = "python3\0train.py\0--epochs\0" "3";
static const char proc1_maps[] =
	"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/python3.12\n"
	"7f2c4a000000-7f2c4c000000 r-xp 00000000 08:02 1048 /usr/local/nvidia/lib64/libcuda.so.1\n"
	"7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0 [stack]\n";

static const struct isr_thread_info proc1_threads[] = {
	{ .tid = 123, .comm = "python3" },
	{ .tid = 124, .comm = "pt_main_thread" },
	{ .tid = 130, .comm = "cuda-EvtHandlr" },
};

static const struct isr_clock_pair clock_pairs[] = {
	{ .mono_ns = 1000000, .other_ns = 1764115200000000000ULL, .uncertainty_ns = 40, .clock = ISR_CLOCK_REALTIME },
	{ .mono_ns = 2000000, .other_ns = 1764115200001000000ULL, .uncertainty_ns = 35, .clock = ISR_CLOCK_REALTIME },
	{ .mono_ns = 9000000, .other_ns = 1764115200008000100ULL, .uncertainty_ns = 50, .clock = ISR_CLOCK_REALTIME },
};

#define END_MONO_NS 9999999ULL

static void write_props(struct rec_writer *w)
{
	struct rec_props *p = rec_props__new();
	struct isr_thread_info one = { .tid = 456, .comm = "worker" };

	assert_non_null(p);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_NAME, "gpu-host-7"), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_KERNEL, "6.18.0-1-amd64"), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_KERNEL_VERSION, "#1 SMP PREEMPT_DYNAMIC"), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_MACHINE, "x86_64"), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_BOOT_ID, "5b3f1c2e-0d4a-4e1b-9c61-2f0e8a7d9b10"), 0);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_HOST_NCPUS, 16), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_TOOL_VERSION, "0.1.0"), 0);
	assert_int_equal(rec_props__add(p, ISR_PROP_HOST_COMMAND, host_command, sizeof(host_command)), 0);
	assert_int_equal(rec_props__add_u64(p, ISR_PROP_HOST_START_MONO_NS, 1000000), 0);
	assert_int_equal(rec_props__add_u64(p, ISR_PROP_HOST_DURATION_LIMIT_NS, 5000000000ULL), 0);
	assert_int_equal(rec_props__add_str(p, 999, "a key from the future"), 0);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_HOST, p), 0);
	rec_props__free(p);

	p = rec_props__new();
	assert_non_null(p);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_PID, 123), 0);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_PPID, 1), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_PROC_COMM, "python3"), 0);
	assert_int_equal(rec_props__add(p, ISR_PROP_PROC_CMDLINE, proc1_cmdline, sizeof(proc1_cmdline)), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_PROC_EXE, "/usr/bin/python3.12"), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_PROC_MAPS, proc1_maps), 0);
	assert_int_equal(rec_props__add(p, ISR_PROP_PROC_THREADS, proc1_threads, sizeof(proc1_threads)), 0);
	assert_int_equal(rec_props__add_u64(p, ISR_PROP_PROC_SEEN_MONO_NS, 1000500), 0);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_ORIGIN, ISR_ORIGIN_ATTACHED), 0);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_PROCESS, p), 0);
	rec_props__free(p);

	/* cmdline without the trailing NUL: the reader must not depend on it */
	p = rec_props__new();
	assert_non_null(p);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_PID, 456), 0);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_PPID, 123), 0);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_PROC_COMM, "worker"), 0);
	assert_int_equal(rec_props__add(p, ISR_PROP_PROC_CMDLINE, "worker\0-n\0" "2", 11), 0);
	assert_int_equal(rec_props__add(p, ISR_PROP_PROC_THREADS, &one, sizeof(one)), 0);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_ORIGIN, ISR_ORIGIN_CHILD), 0);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_PROCESS, p), 0);
	rec_props__free(p);
}

static void append_events(struct rec_writer *w, size_t from, size_t to)
{
	union any_event e;
	size_t i;

	for (i = from; i < to; i++) {
		size_t size = event__make(i, &e);

		assert_int_equal(rec_writer__append_event(w, &e, size), 0);
	}
}

/* A complete recording of n events: what every reader test starts from. */
static void write_recording(const char *path, int level, size_t n)
{
	struct rec_writer_opts opts = { .chunk_bytes = SMALL_CHUNK, .zstd_level = level };
	struct isr_drop_count early[] = {
		{ .source = ISR_SRC_SCHED, .count = 5 },
		{ .source = ISR_SRC_FAULTS, .count = 1 },
	};
	struct isr_drop_count final[] = {
		{ .source = ISR_SRC_SCHED, .pad = 0xdeadbeef, .count = 7 },
		{ .source = ISR_SRC_PROC, .count = 2 },
		{ .source = ISR_SRC_WRITER, .count = 0 },
		{ .source = 99, .count = 5 },
	};
	struct rec_writer *w = rec_writer__open(path, &opts);
	struct stat st;

	assert_non_null(w);
	write_props(w);
	assert_int_equal(rec_writer__write_clock(w, clock_pairs, 2), 0);
	append_events(w, 0, n / 2);
	assert_int_equal(rec_writer__write_drops(w, early, 2), 0);
	append_events(w, n / 2, n);
	assert_int_equal(rec_writer__write_clock(w, clock_pairs + 2, 1), 0);
	assert_int_equal(rec_writer__write_drops(w, final, 4), 0);
	assert_int_equal(rec_writer__finish(w, END_MONO_NS, ISR_STOP_SIGNAL), 0);
	assert_int_equal(rec_writer__events_written(w), n);
	assert_int_equal(rec_writer__events_lost(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(rec_writer__bytes_written(w), st.st_size);
	rec_writer__free(w);
}

static size_t unknown_in(size_t from, size_t to)
{
	size_t i, n = 0;

	for (i = from; i < to; i++)
		n += i % 9 == 8;
	return n;
}

/* The first n events of the recording are exactly events 0..n-1. */
static void assert_events(const struct recording *r, size_t n)
{
	union any_event e;
	size_t i;

	assert_int_equal(r->event_count, n);
	for (i = 0; i < n; i++) {
		size_t size = event__make(i, &e);

		assert_int_equal(r->events[i]->size, size);
		assert_memory_equal(r->events[i], &e, size);
	}
	assert_int_equal(r->unknown_events, unknown_in(0, n));
}

static struct recording *load_ok(const char *path)
{
	struct recording *r = NULL;
	char err[512] = "";
	int ret = recording__load(path, &r, err, sizeof(err));

	if (ret)
		fail_msg("recording__load(%s) = %d: %s", path, ret, err);
	assert_non_null(r);
	return r;
}

/* Loads a file that must be rejected; returns the message. */
static const char *load_rejected(const char *path)
{
	static char err[512];
	static struct recording sentinel;
	struct recording *r = &sentinel;	/* must be reset to NULL */
	int ret;

	err[0] = '\0';
	ret = recording__load(path, &r, err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_null(r);
	assert_true(strlen(err) > 0);
	return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* ---- 1. round trip ------------------------------------------------------------ */

static void check_round_trip(int level)
{
	const char *path = tmp_path(level ? "rt-zstd.isr" : "rt-plain.isr");
	struct chunk_info chunks[4096];
	struct isr_trailer trailer;
	struct isr_chunk_header eh;
	struct isr_end end;
	unsigned char *file, *endp;
	size_t len, n, i, events_chunks = 0, zstd_chunks = 0;
	struct recording *r;
	const struct rec_process *p;

	write_recording(path, level, N_EVENTS);
	r = load_ok(path);

	assert_true(r->complete);
	assert_false(r->truncated);
	assert_string_equal(r->truncation, "");
	assert_int_equal(r->version_major, ISR_VERSION_MAJOR);
	assert_int_equal(r->version_minor, ISR_VERSION_MINOR);
	assert_true(r->created_real_ns > 0);
	assert_true(r->created_mono_ns > 0);
	assert_int_equal(r->stop_reason, ISR_STOP_SIGNAL);
	assert_int_equal(r->end_mono_ns, END_MONO_NS);

	assert_string_equal(r->host.hostname, "gpu-host-7");
	assert_string_equal(r->host.kernel, "6.18.0-1-amd64");
	assert_string_equal(r->host.kernel_version, "#1 SMP PREEMPT_DYNAMIC");
	assert_string_equal(r->host.machine, "x86_64");
	assert_string_equal(r->host.boot_id, "5b3f1c2e-0d4a-4e1b-9c61-2f0e8a7d9b10");
	assert_string_equal(r->host.tool_version, "0.1.0");
	assert_string_equal(r->host.command, "inferscope-bpf record -p 123");
	assert_int_equal(r->host.ncpus, 16);
	assert_int_equal(r->host.start_mono_ns, 1000000);
	assert_int_equal(r->host.duration_limit_ns, 5000000000ULL);

	assert_int_equal(r->process_count, 2);
	p = &r->processes[0];
	assert_int_equal(p->pid, 123);
	assert_int_equal(p->ppid, 1);
	assert_int_equal(p->origin, ISR_ORIGIN_ATTACHED);
	assert_int_equal(p->seen_mono_ns, 1000500);
	assert_string_equal(p->comm, "python3");
	assert_string_equal(p->cmdline, "python3 train.py --epochs 3");
	assert_string_equal(p->exe, "/usr/bin/python3.12");
	assert_string_equal(p->maps, proc1_maps);
	assert_int_equal(p->thread_count, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(p->threads[i].tid, proc1_threads[i].tid);
		assert_string_equal(p->threads[i].comm, proc1_threads[i].comm);
	}
	p = &r->processes[1];
	assert_int_equal(p->pid, 456);
	assert_int_equal(p->ppid, 123);
	assert_int_equal(p->origin, ISR_ORIGIN_CHILD);
	assert_int_equal(p->seen_mono_ns, 0);
	assert_string_equal(p->comm, "worker");
	assert_string_equal(p->cmdline, "worker -n 2");
	assert_null(p->exe);
	assert_null(p->maps);
	assert_int_equal(p->thread_count, 1);
	assert_int_equal(p->threads[0].tid, 456);
	assert_string_equal(p->threads[0].comm, "worker");

	assert_int_equal(r->clock_pair_count, 3);
	assert_memory_equal(r->clock_pairs, clock_pairs, sizeof(clock_pairs));

	assert_int_equal(r->drops[ISR_SRC_SCHED], 7);
	assert_int_equal(r->drops[ISR_SRC_FAULTS], 1);
	assert_int_equal(r->drops[ISR_SRC_PROC], 2);
	assert_int_equal(r->drops[ISR_SRC_FAULT_START], 0);
	assert_int_equal(r->drops[ISR_SRC_TARGETS], 0);
	assert_int_equal(r->drops[ISR_SRC_WRITER], 0);

	assert_events(r, N_EVENTS);
	assert_int_equal(r->unknown_chunks, 0);

	/* The file as a reader of the documentation sees it. */
	file = file__read(path, &len);
	n = chunks__walk(file, len, chunks, 4096);
	assert_int_equal(r->chunk_count, n);
	assert_int_equal(chunks[n - 1].h.kind, ISR_CHUNK_END);
	assert_int_equal(chunks[n - 1].end + sizeof(trailer), len);
	for (i = 0; i < n; i++) {
		assert_int_equal(chunks[i].h.seq, i);
		assert_int_equal(chunks[i].h.pad, 0);
		events_chunks += chunks[i].h.kind == ISR_CHUNK_EVENTS;
		zstd_chunks += chunks[i].h.compression == ISR_COMPRESS_ZSTD;
		if (chunks[i].h.kind == ISR_CHUNK_EVENTS)
			assert_true(chunks[i].h.raw_size <= SMALL_CHUNK);
	}
	assert_true(events_chunks > 10);
	if (level)
		assert_true(zstd_chunks >= events_chunks);
	else
		assert_int_equal(zstd_chunks, 0);

	memcpy(&trailer, file + len - sizeof(trailer), sizeof(trailer));
	assert_int_equal(trailer.magic, ISR_TRAILER_MAGIC);
	assert_int_equal(trailer.end_offset, chunks[n - 1].offset);
	memcpy(&eh, file + trailer.end_offset, sizeof(eh));
	endp = malloc(eh.raw_size);
	assert_non_null(endp);
	if (eh.compression == ISR_COMPRESS_ZSTD)
		assert_int_equal(ZSTD_decompress(endp, eh.raw_size, file + trailer.end_offset + sizeof(eh),
						 eh.stored_size), eh.raw_size);
	else
		memcpy(endp, file + trailer.end_offset + sizeof(eh), eh.raw_size);
	memcpy(&end, endp, sizeof(end));
	assert_int_equal(end.event_count, N_EVENTS);
	assert_int_equal(end.end_mono_ns, END_MONO_NS);
	assert_int_equal(end.stop_reason, ISR_STOP_SIGNAL);
	assert_int_equal(end.section_count, n - 1);
	assert_int_equal(eh.raw_size, sizeof(end) + (n - 1) * sizeof(struct isr_section));
	for (i = 0; i + 1 < n; i++) {
		struct isr_section s;

		memcpy(&s, endp + sizeof(end) + i * sizeof(s), sizeof(s));
		assert_int_equal(s.offset, chunks[i].offset);
		assert_int_equal(s.kind, chunks[i].h.kind);
		assert_int_equal(s.record_count, chunks[i].h.record_count);
	}
	/* the drop counter's padding was zeroed on its way to disk */
	for (i = 0; i < n; i++) {
		struct isr_drop_count d;

		if (chunks[i].h.kind != ISR_CHUNK_DROPS || chunks[i].h.compression != ISR_COMPRESS_NONE)
			continue;
		memcpy(&d, file + chunks[i].offset + sizeof(eh), sizeof(d));
		assert_int_equal(d.pad, 0);
	}
	free(endp);
	free(file);
	recording__free(r);
}

static void test_round_trip_zstd(void **state)
{
	(void)state;
	check_round_trip(3);
}

static void test_round_trip_uncompressed(void **state)
{
	(void)state;
	check_round_trip(0);
}

static void test_empty_recording(void **state)
{
	const char *path = tmp_path("empty.isr");
	struct rec_writer *w = rec_writer__open(path, NULL);
	struct recording *r;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__finish(w, 42, ISR_STOP_TARGETS_EXITED), 0);
	rec_writer__free(w);
	r = load_ok(path);
	assert_true(r->complete);
	assert_false(r->truncated);
	assert_int_equal(r->event_count, 0);
	assert_null(r->events);
	assert_int_equal(r->process_count, 0);
	assert_null(r->host.hostname);
	assert_int_equal(r->end_mono_ns, 42);
	assert_int_equal(r->stop_reason, ISR_STOP_TARGETS_EXITED);
	assert_int_equal(r->chunk_count, 1);
	recording__free(r);
}

static void test_sort_is_stable(void **state)
{
	const char *path = tmp_path("sort.isr");
	struct recording *r;
	size_t i;

	(void)state;
	write_recording(path, 1, 2000);
	r = load_ok(path);
	recording__sort_events(r);
	assert_int_equal(r->event_count, 2000);
	for (i = 1; i < r->event_count; i++) {
		const struct isr_ev_hdr *a = r->events[i - 1], *b = r->events[i];

		assert_true(a->ts_ns <= b->ts_ns);
		/* ties keep file order: the buffer holds events in file order */
		if (a->ts_ns == b->ts_ns)
			assert_true((const unsigned char *)a < (const unsigned char *)b);
	}
	/* sorting a sorted recording changes nothing */
	recording__sort_events(r);
	for (i = 1; i < r->event_count; i++)
		assert_true(r->events[i - 1]->ts_ns <= r->events[i]->ts_ns);
	recording__free(r);
	recording__free(NULL);
}

static void test_names(void **state)
{
	static const char *const events[] = {
		NULL, "sched_switch", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
		"sched_process_exec", "sched_process_exit", "task_rename", "page_fault_user",
		"cuda_call", "cuda_name", "gil", "sampling", "gpu_kernel", "gpu_memcpy",
		"gpu_memset", "gpu_sync", "gpu_api", "gpu_clock", "gpu_status", "gpu_name",
		[ISR_EV_PY_SAMPLE] = "py_sample", "py_stack", "py_code", "py_status",
		[ISR_EV_PY_FRAMES] = NULL, /* BPF to recorder only: never in a file */
	};
	static const char *const sources[] = {
		"sched", "faults", "proc", "fault_start", "targets", "cuda", "cuda_inflight", "writer", "python",
		"gpu", "cupti",
		[ISR_SRC_PY_STACKS] = "py_stacks", "py_code",
	};
	static const char *const stops[] = {
		NULL, "duration", "signal", "targets_exited", "write_error",
	};
	unsigned i;

	/* The names of these types and sources are the file's and the
	 * report's words for them: they never change. Types and sources
	 * added later (the registries of format/) come with names of their
	 * own. */
	(void)state;
	for (i = 1; i < sizeof(events) / sizeof(events[0]); i++)
		if (events[i])
			assert_string_equal(isr_event_name((__u16)i), events[i]);
	assert_null(isr_event_name(ISR_EV_PY_FRAMES));
	assert_null(isr_event_name(0));
	assert_null(isr_event_name(ISR_EV_TYPE_MAX));
	for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		assert_string_equal(isr_source_name(i), sources[i]);
	assert_null(isr_source_name(ISR_SRC_MAX));
	for (i = 1; i <= ISR_STOP_WRITE_ERROR; i++)
		assert_string_equal(isr_stop_reason_name(i), stops[i]);
	assert_null(isr_stop_reason_name(0));
	assert_null(isr_stop_reason_name(ISR_STOP_WRITE_ERROR + 1));
}

/* The reader knows every function of format/cuda_funcs.h by its exact symbol. */
static void test_cuda_functions(void **state)
{
	const struct isr_cuda_fn *f;

	(void)state;
	f = isr_cuda_fn(ISR_CUDA_FN_cuMemAlloc_v2);
	assert_non_null(f);
	assert_string_equal(f->symbol, "cuMemAlloc_v2");
	assert_int_equal(f->family, ISR_CUDA_FAM_ALLOC);
	assert_int_equal(f->aux, ISR_ALLOC_DEVICE);
	f = isr_cuda_fn(ISR_CUDA_FN_cuLaunchKernelEx_ptsz);
	assert_non_null(f);
	assert_string_equal(f->symbol, "cuLaunchKernelEx_ptsz");
	assert_int_equal(f->family, ISR_CUDA_FAM_LAUNCH_EX);
	assert_int_equal(f->flags, ISR_CUDA_ASYNC | ISR_CUDA_PTDS);
	assert_string_equal(isr_cuda_fn(ISR_CUDA_FN_cuCtxSynchronize_v2)->symbol, "cuCtxSynchronize_v2");
	assert_string_equal(isr_cuda_fn(ISR_CUDA_FN_cuKernelGetFunction)->symbol, "cuKernelGetFunction");
	assert_non_null(isr_cuda_fn(ISR_CUDA_FN_MAX - 1));
	assert_null(isr_cuda_fn(0));
	assert_null(isr_cuda_fn(ISR_CUDA_FN_MAX));
	assert_null(isr_cuda_fn(0xffff));
}

/* ---- 2. truncation --------------------------------------------------------------- */

/* Events in the EVENTS chunks that end at or before cut. */
static size_t events_before(const struct chunk_info *c, size_t n, size_t cut)
{
	size_t i, events = 0;

	for (i = 0; i < n && c[i].end <= cut; i++)
		if (c[i].h.kind == ISR_CHUNK_EVENTS)
			events += c[i].h.record_count;
	return events;
}

static void test_truncated_at_every_byte(void **state)
{
	const char *path = tmp_path("full.isr"), *cut_path = tmp_path("cut.isr");
	struct chunk_info chunks[4096];
	size_t len, n, i, cut, last_events = 0, cuts = 0;
	unsigned char *file;

	(void)state;
	write_recording(path, 1, 1500);
	file = file__read(path, &len);
	n = chunks__walk(file, len, chunks, 4096);
	for (i = 0; i < n; i++)
		if (chunks[i].h.kind == ISR_CHUNK_EVENTS)
			last_events = i;
	assert_true(last_events > 5);

	/* From the start of the last EVENTS chunk through DROPS, END and the
	 * trailer to the whole file. */
	for (cut = chunks[last_events].offset; cut <= len; cut++) {
		struct recording *r;
		size_t in = 0;

		file__write_cut(cut_path, file, len, cut);
		r = load_ok(cut_path);
		assert_events(r, events_before(chunks, n, cut));
		while (in < n && chunks[in].end <= cut)
			in++;
		if (cut == len) {
			assert_true(r->complete);
			assert_false(r->truncated);
		} else {
			char want[64];

			assert_true(r->truncated);
			if (in == n) {
				assert_true(r->complete);
				assert_contains(r->truncation, "trailer");
				assert_int_equal(r->stop_reason, ISR_STOP_SIGNAL);
			} else if (cut == (in ? chunks[in - 1].end : chunks[0].offset)) {
				assert_false(r->complete);
				assert_contains(r->truncation, "no END chunk");
			} else {
				assert_false(r->complete);
				snprintf(want, sizeof(want), "chunk %zu (", in);
				assert_contains(r->truncation, want);
				snprintf(want, sizeof(want), "at offset %zu:", chunks[in].offset);
				assert_contains(r->truncation, want);
				assert_contains(r->truncation, "incomplete");
			}
			if (!r->complete) {
				assert_int_equal(r->stop_reason, 0);
				/* the latest event seen */
				if (r->event_count) {
					__u64 max = 0;

					for (i = 0; i < r->event_count; i++)
						if (r->events[i]->ts_ns > max)
							max = r->events[i]->ts_ns;
					assert_int_equal(r->end_mono_ns, max);
				}
			}
		}
		/* the drops that were written before the cut are there */
		assert_int_equal(r->drops[ISR_SRC_FAULTS], 1);
		recording__free(r);
		cuts++;
	}
	assert_int_equal(cuts, len - chunks[last_events].offset + 1);
	free(file);
}

static void test_truncated_in_file_header(void **state)
{
	const char *path = tmp_path("full-h.isr"), *cut_path = tmp_path("cut-h.isr");
	struct recording *r;
	unsigned char *file;
	size_t len, cut;

	(void)state;
	write_recording(path, 1, 100);
	file = file__read(path, &len);
	for (cut = 0; cut < sizeof(struct isr_file_header); cut++) {
		file__write_cut(cut_path, file, len, cut);
		if (cut < 8)
			assert_contains(load_rejected(cut_path), "not an inferscope recording");
		else
			assert_contains(load_rejected(cut_path), "file header damaged");
	}
	/* the header alone: a recording that stopped before its first chunk */
	file__write_cut(cut_path, file, len, sizeof(struct isr_file_header));
	r = load_ok(cut_path);
	assert_true(r->truncated);
	assert_false(r->complete);
	assert_contains(r->truncation, "no END chunk");
	assert_int_equal(r->event_count, 0);
	assert_int_equal(r->end_mono_ns, r->created_mono_ns);
	recording__free(r);
	free(file);
}

/* The recorder killed with SIGKILL: whatever it flushed is there, the rest not. */
static void test_killed_recorder(void **state)
{
	const char *path = tmp_path("killed.isr");
	struct recording *r;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rec_writer_opts opts = { .chunk_bytes = SMALL_CHUNK, .zstd_level = 1 };
		struct rec_writer *w = rec_writer__open(path, &opts);
		union any_event e;
		size_t i;

		if (!w)
			_exit(1);
		for (i = 0; i < 1000; i++) {
			size_t size = event__make(i, &e);

			if (rec_writer__append_event(w, &e, size))
				_exit(2);
		}
		if (rec_writer__flush(w))
			_exit(3);
		for (; i < 1010; i++) {
			size_t size = event__make(i, &e);

			if (rec_writer__append_event(w, &e, size))
				_exit(4);
		}
		kill(getpid(), SIGKILL);
		_exit(5);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	r = load_ok(path);
	assert_true(r->truncated);
	assert_false(r->complete);
	assert_contains(r->truncation, "no END chunk: the recorder stopped without finishing (killed?)");
	assert_events(r, 1000);
	recording__free(r);
}

/* ---- 3. corruption ----------------------------------------------------------------- */

static void test_bad_file_header(void **state)
{
	const char *path = tmp_path("hdr.isr"), *bad = tmp_path("hdr-bad.isr");
	struct isr_file_header fh;
	unsigned char *file;
	const char *msg;
	size_t len;

	(void)state;
	write_recording(path, 1, 50);
	file = file__read(path, &len);
	memcpy(&fh, file, sizeof(fh));

	file[3] ^= 0x20;
	file__write(bad, file, len);
	assert_contains(load_rejected(bad), "not an inferscope recording");
	file[3] ^= 0x20;

	fh.magic = ISR_MAGIC_SWAPPED;
	memcpy(file, &fh, sizeof(fh));
	file__write(bad, file, len);
	assert_contains(load_rejected(bad), "recorded on a machine of the other byte order (not supported)");
	fh.magic = ISR_MAGIC;

	fh.version_major = 2;
	fh.version_minor = 3;
	memcpy(file, &fh, sizeof(fh));
	file__write(bad, file, len);
	msg = load_rejected(bad);
	assert_contains(msg, "version 2.3");
	assert_contains(msg, "version 1.x");
	fh.version_major = ISR_VERSION_MAJOR;

	fh.header_size = 8;
	memcpy(file, &fh, sizeof(fh));
	file__write(bad, file, len);
	assert_contains(load_rejected(bad), "file header damaged");

	fh.header_size = 1U << 30;
	memcpy(file, &fh, sizeof(fh));
	file__write(bad, file, len);
	assert_contains(load_rejected(bad), "file header damaged");

	file__write(bad, "", 0);
	assert_contains(load_rejected(bad), "not an inferscope recording");
	free(file);
}

/* Damages a middle EVENTS chunk with damage(), loads, and checks that
 * reading stopped there with a message naming it. */
static void check_damaged_chunk(void (*damage)(unsigned char *chunk), const char *reason)
{
	const char *path = tmp_path("dmg.isr"), *bad = tmp_path("dmg-bad.isr");
	struct chunk_info chunks[4096];
	unsigned char *file;
	size_t len, n, k, seen = 0;
	struct recording *r;
	char want[96];

	write_recording(path, 1, 2000);
	file = file__read(path, &len);
	n = chunks__walk(file, len, chunks, 4096);
	for (k = 0; k < n; k++)
		if (chunks[k].h.kind == ISR_CHUNK_EVENTS && ++seen == 8)
			break;
	assert_true(k < n);

	damage(file + chunks[k].offset);
	file__write(bad, file, len);
	r = load_ok(bad);
	assert_true(r->truncated);
	assert_false(r->complete);
	snprintf(want, sizeof(want), "chunk %zu (EVENTS) at offset %zu: ", k, chunks[k].offset);
	assert_contains(r->truncation, want);
	assert_contains(r->truncation, reason);
	assert_events(r, events_before(chunks, n, chunks[k].offset));
	assert_int_equal(r->chunk_count, k);
	recording__free(r);
	free(file);
}

static void damage_header_byte(unsigned char *c)
{
	c[offsetof(struct isr_chunk_header, raw_size)] ^= 0x01;
}

static void damage_payload_byte(unsigned char *c)
{
	c[sizeof(struct isr_chunk_header) + 17] ^= 0x40;
}

static void damage_huge_size(unsigned char *c)
{
	struct isr_chunk_header h;

	memcpy(&h, c, sizeof(h));
	h.stored_size = 0xfffffff0U;
	h.raw_size = 0xfffffff0U;
	memcpy(c, &h, sizeof(h));
	chunk__fix_header_crc(c);
}

static void damage_size_past_end(unsigned char *c)
{
	struct isr_chunk_header h;

	memcpy(&h, c, sizeof(h));
	h.stored_size = ISR_CHUNK_MAX_PAYLOAD - 8;
	memcpy(c, &h, sizeof(h));
	chunk__fix_header_crc(c);
}

static void damage_seq(unsigned char *c)
{
	struct isr_chunk_header h;

	memcpy(&h, c, sizeof(h));
	h.seq += 1;
	memcpy(c, &h, sizeof(h));
	chunk__fix_header_crc(c);
}

static void damage_magic(unsigned char *c)
{
	c[0] = 'X';
}

static void test_damaged_chunk_header(void **state)
{
	(void)state;
	check_damaged_chunk(damage_header_byte, "header CRC mismatch");
	check_damaged_chunk(damage_magic, "no chunk magic");
	check_damaged_chunk(damage_seq, "sequence number");
}

static void test_damaged_chunk_payload(void **state)
{
	(void)state;
	check_damaged_chunk(damage_payload_byte, "payload CRC mismatch");
}

static void test_gigantic_chunk_size(void **state)
{
	(void)state;
	check_damaged_chunk(damage_huge_size, "exceeds the limit");
	check_damaged_chunk(damage_size_past_end, "payload incomplete");
}

static void test_damaged_trailer_and_extra_bytes(void **state)
{
	const char *path = tmp_path("tr.isr"), *bad = tmp_path("tr-bad.isr");
	unsigned char *file, *longer;
	struct recording *r;
	size_t len;

	(void)state;
	write_recording(path, 1, 300);
	file = file__read(path, &len);

	file[len - 1] ^= 0xff;
	file__write(bad, file, len);
	r = load_ok(bad);
	assert_true(r->complete);
	assert_true(r->truncated);
	assert_contains(r->truncation, "trailer");
	assert_contains(r->truncation, "damaged");
	assert_events(r, 300);
	recording__free(r);
	file[len - 1] ^= 0xff;

	longer = calloc(1, len + 100);
	assert_non_null(longer);
	memcpy(longer, file, len);
	file__write(bad, longer, len + 100);
	r = load_ok(bad);
	assert_true(r->complete);
	assert_true(r->truncated);
	assert_contains(r->truncation, "100 unexpected bytes after the trailer");
	assert_events(r, 300);
	assert_int_equal(r->stop_reason, ISR_STOP_SIGNAL);
	recording__free(r);
	free(longer);
	free(file);
}

/* ---- hand-built files: what the writer never produces ------------------------------ */

struct builder {
	unsigned char buf[1 << 16];
	size_t len;
	__u64 seq;
};

/* A file header of version 1.minor: of 1.0 (no CRC) when header_size is
 * ISR_FILE_HEADER_V1_0_SIZE, with its CRC from 1.1 on. */
static void builder__header(struct builder *b, __u16 minor, __u32 header_size)
{
	struct isr_file_header fh = {
		.magic = ISR_MAGIC, .version_major = ISR_VERSION_MAJOR, .version_minor = minor,
		.header_size = header_size, .created_real_ns = 1, .created_mono_ns = 777,
	};

	memset(b, 0, sizeof(*b));
	memcpy(b->buf, &fh, header_size < sizeof(fh) ? header_size : sizeof(fh));
	b->len = header_size;	/* later-minor header fields stay zero */
	if (minor >= ISR_VERSION_MINOR_HEADER_CRC) {
		fh.header_crc32 = (__u32)crc32(0L, b->buf, header_size);
		memcpy(b->buf + offsetof(struct isr_file_header, header_crc32), &fh.header_crc32,
		       sizeof(fh.header_crc32));
	}
}

static void builder__chunk(struct builder *b, __u16 kind, __u16 compression, const void *payload,
			   __u32 len, __u32 count)
{
	struct isr_chunk_header h = {
		.magic = ISR_CHUNK_MAGIC, .kind = kind, .compression = compression,
		.stored_size = len, .raw_size = len, .record_count = count, .seq = b->seq++,
	};

	assert_true(b->len + sizeof(h) + len <= sizeof(b->buf));
	h.payload_crc32 = (__u32)crc32(0L, payload, len);
	memcpy(b->buf + b->len, &h, sizeof(h));
	chunk__fix_header_crc(b->buf + b->len);
	memcpy(b->buf + b->len + sizeof(h), payload, len);
	b->len += sizeof(h) + len;
}

/* Two good events, then an EVENTS chunk whose second event is ev. */
static struct recording *load_with_bad_event(const void *ev, __u32 ev_len, __u32 count,
					     const char *reason)
{
	const char *path = tmp_path("built.isr");
	union any_event e[3];
	unsigned char payload[512];
	struct builder *b = malloc(sizeof(*b));
	struct recording *r;
	char want[64];
	size_t s0, s1;

	assert_non_null(b);
	builder__header(b, ISR_VERSION_MINOR, sizeof(struct isr_file_header));
	s0 = event__make(0, &e[0]);
	s1 = event__make(1, &e[1]);
	memcpy(payload, &e[0], s0);
	memcpy(payload + s0, &e[1], s1);
	builder__chunk(b, ISR_CHUNK_EVENTS, ISR_COMPRESS_NONE, payload, (__u32)(s0 + s1), 2);
	event__make(2, &e[2]);
	memcpy(payload, &e[2], sizeof(e[2].wk));
	memcpy(payload + sizeof(e[2].wk), ev, ev_len);
	builder__chunk(b, ISR_CHUNK_EVENTS, ISR_COMPRESS_NONE, payload,
		       (__u32)(sizeof(e[2].wk) + ev_len), count);
	file__write(path, b->buf, b->len);
	free(b);

	r = load_ok(path);
	assert_true(r->truncated);
	snprintf(want, sizeof(want), "chunk 1 (EVENTS) at offset %zu: ",
		 sizeof(struct isr_file_header) + sizeof(struct isr_chunk_header) + s0 + s1);
	assert_contains(r->truncation, want);
	assert_contains(r->truncation, reason);
	assert_events(r, 2);
	return r;
}

static void test_malformed_events(void **state)
{
	union any_event e;
	struct isr_ev_hdr h;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.hdr.type = ISR_EV_SCHED_SWITCH;

	e.hdr.size = 0;
	recording__free(load_with_bad_event(&e, 40, 2, "size 0 is below 24 or not a multiple of 8"));
	e.hdr.size = 36;
	recording__free(load_with_bad_event(&e, 40, 2, "size 36 is below 24 or not a multiple of 8"));
	e.hdr.size = 16;
	recording__free(load_with_bad_event(&e, 40, 2, "size 16 is below 24 or not a multiple of 8"));
	e.hdr.size = 48;
	recording__free(load_with_bad_event(&e, 40, 2, "runs past the payload end"));
	e.hdr.size = 32;	/* a sched_switch needs 40 bytes */
	recording__free(load_with_bad_event(&e, 32, 2, "type sched_switch needs 40 bytes"));
	e.hdr.size = 40;
	recording__free(load_with_bad_event(&e, 40, 3, "holds 2 events, header says 3"));
	memset(&h, 0, sizeof(h));
	recording__free(load_with_bad_event(&h, 16, 2, "less than an event header"));
}

/* Later minor versions: a longer file header, chunk kinds and event types
 * and property keys this reader does not know. All skipped, nothing lost. */
static void test_forward_compatible(void **state)
{
	const char *path = tmp_path("future.isr");
	struct builder *b = malloc(sizeof(*b));
	union any_event e[2];
	unsigned char payload[256], blob[40];
	struct isr_prop pr;
	struct recording *r;
	size_t s0, s1;
	__u32 pid = 77;

	(void)state;
	assert_non_null(b);
	builder__header(b, 9, sizeof(struct isr_file_header) + 16);
	memset(blob, 0xab, sizeof(blob));
	builder__chunk(b, 77, 42 /* a compression from the future */, blob, sizeof(blob), 1);

	pr.key = 1234;
	pr.len = 3;
	memcpy(payload, &pr, sizeof(pr));
	memcpy(payload + 8, "xyz\0\0\0\0\0", 8);
	pr.key = ISR_PROP_PROC_PID;
	pr.len = 4;
	memcpy(payload + 16, &pr, sizeof(pr));
	memset(payload + 24, 0, 8);
	memcpy(payload + 24, &pid, sizeof(pid));
	builder__chunk(b, ISR_CHUNK_PROCESS, ISR_COMPRESS_NONE, payload, 32, 2);

	s0 = event__make(8, &e[0]);	/* type UNKNOWN_TYPE */
	s1 = event__make(1, &e[1]);
	memcpy(payload, &e[0], s0);
	memcpy(payload + s0, &e[1], s1);
	builder__chunk(b, ISR_CHUNK_EVENTS, ISR_COMPRESS_NONE, payload, (__u32)(s0 + s1), 2);
	file__write(path, b->buf, b->len);
	free(b);

	r = load_ok(path);
	assert_int_equal(r->version_minor, 9);
	assert_int_equal(r->unknown_chunks, 1);
	assert_int_equal(r->chunk_count, 3);
	assert_int_equal(r->process_count, 1);
	assert_int_equal(r->processes[0].pid, 77);
	assert_int_equal(r->event_count, 2);
	assert_int_equal(r->unknown_events, 1);
	assert_int_equal(r->events[0]->type, UNKNOWN_TYPE);
	assert_memory_equal(r->events[1], &e[1], s1);
	assert_true(r->truncated);
	assert_contains(r->truncation, "no END chunk");
	assert_int_equal(r->end_mono_ns, e[1].hdr.ts_ns > e[0].hdr.ts_ns ? e[1].hdr.ts_ns : e[0].hdr.ts_ns);
	recording__free(r);
}

static void test_malformed_props(void **state)
{
	const char *path = tmp_path("props.isr");
	struct builder *b = malloc(sizeof(*b));
	unsigned char payload[64] = { 0 };
	struct isr_prop pr = { .key = ISR_PROP_HOST_NCPUS, .len = 8 };
	struct recording *r;

	(void)state;
	assert_non_null(b);
	builder__header(b, 0, ISR_FILE_HEADER_V1_0_SIZE);
	memcpy(payload, &pr, sizeof(pr));
	builder__chunk(b, ISR_CHUNK_HOST, ISR_COMPRESS_NONE, payload, 16, 1);
	file__write(path, b->buf, b->len);
	r = load_ok(path);
	assert_contains(r->truncation, "chunk 0 (HOST) at offset 32: property key 6 is 8 bytes, expected 4");
	recording__free(r);

	builder__header(b, 0, ISR_FILE_HEADER_V1_0_SIZE);
	pr.key = ISR_PROP_PROC_COMM;
	pr.len = 100;
	memcpy(payload, &pr, sizeof(pr));
	builder__chunk(b, ISR_CHUNK_PROCESS, ISR_COMPRESS_NONE, payload, 16, 1);
	file__write(path, b->buf, b->len);
	r = load_ok(path);
	assert_contains(r->truncation, "runs past the payload end");
	assert_int_equal(r->process_count, 0);
	recording__free(r);

	builder__header(b, 0, ISR_FILE_HEADER_V1_0_SIZE);
	pr.len = 4;
	memcpy(payload, &pr, sizeof(pr));
	builder__chunk(b, ISR_CHUNK_PROCESS, ISR_COMPRESS_NONE, payload, 16, 1);
	file__write(path, b->buf, b->len);
	r = load_ok(path);
	assert_contains(r->truncation, "PROCESS chunk without a PID property");
	recording__free(r);
	free(b);
}

/* The file header has a CRC from 1.1 on: one flipped bit in it is told,
 * and its times (the report's start time) are not used. A 1.0 file has
 * none and reads as before; a 1.1 header too short to hold one is damaged. */
static void test_header_crc(void **state)
{
	const char *path = tmp_path("crc.isr"), *bad = tmp_path("crc-bad.isr");
	const size_t flips[] = { offsetof(struct isr_file_header, created_real_ns) + 3,
				 offsetof(struct isr_file_header, created_mono_ns),
				 offsetof(struct isr_file_header, header_crc32) + 1,
				 offsetof(struct isr_file_header, pad) };
	struct builder *b = malloc(sizeof(*b));
	union any_event e;
	unsigned char *file;
	struct recording *r;
	size_t len, size;

	(void)state;
	assert_non_null(b);
	write_recording(path, 1, 50);
	r = load_ok(path);
	assert_false(r->header_damaged);
	assert_int_equal(r->version_minor, ISR_VERSION_MINOR);
	assert_true(r->created_real_ns > 0);
	recording__free(r);

	file = file__read(path, &len);
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		file[flips[i]] ^= 0x10;
		file__write(bad, file, len);
		file[flips[i]] ^= 0x10;
		r = load_ok(bad);
		assert_true(r->header_damaged);
		assert_int_equal(r->created_real_ns, 0);
		assert_int_equal(r->created_mono_ns, 0);
		assert_true(r->complete);
		assert_false(r->truncated);
		assert_events(r, 50);
		recording__free(r);
	}
	free(file);

	/* version 1.0: a 32-byte header without CRC */
	builder__header(b, 0, ISR_FILE_HEADER_V1_0_SIZE);
	size = event__make(1, &e);
	builder__chunk(b, ISR_CHUNK_EVENTS, ISR_COMPRESS_NONE, &e, (__u32)size, 1);
	file__write(path, b->buf, b->len);
	r = load_ok(path);
	assert_false(r->header_damaged);
	assert_int_equal(r->version_minor, 0);
	assert_int_equal(r->created_real_ns, 1);
	assert_int_equal(r->created_mono_ns, 777);
	assert_int_equal(r->event_count, 1);
	recording__free(r);

	/* version 1.1 with the header of 1.0: its CRC would be in the first chunk */
	builder__header(b, 0, ISR_FILE_HEADER_V1_0_SIZE);
	b->buf[offsetof(struct isr_file_header, version_minor)] = ISR_VERSION_MINOR_HEADER_CRC;
	file__write(path, b->buf, b->len);
	assert_contains(load_rejected(path), "file header damaged: header_size 32, expected 40");
	free(b);
}

/* One process chunk with prop values of the given lengths. */
static void write_big_process(struct rec_writer *w, __u32 pid, size_t threads, size_t maps, size_t cmdline)
{
	struct rec_props *p = rec_props__new();
	struct isr_thread_info *t = calloc(threads ? threads : 1, sizeof(*t));
	char *text = malloc((maps > cmdline ? maps : cmdline) + 1);

	assert_non_null(p);
	assert_non_null(t);
	assert_non_null(text);
	for (size_t i = 0; i < threads; i++) {
		t[i].tid = pid + 1 + (__u32)i;
		snprintf(t[i].comm, sizeof(t[i].comm), "t%u", (unsigned int)(i & 0xffff));
	}
	memset(text, 'm', maps > cmdline ? maps : cmdline);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_PROC_PID, pid), 0);
	if (threads)
		assert_int_equal(rec_props__add(p, ISR_PROP_PROC_THREADS, t, threads * sizeof(*t)), 0);
	if (maps)
		assert_int_equal(rec_props__add(p, ISR_PROP_PROC_MAPS, text, maps), 0);
	if (cmdline)
		assert_int_equal(rec_props__add(p, ISR_PROP_PROC_CMDLINE, text, cmdline), 0);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_PROCESS, p), 0);
	rec_props__free(p);
	free(t);
	free(text);
}

/* The metadata a file can make the reader keep is bounded: what is beyond
 * the bounds is left out or cut, counted, and the events still read. */
static void test_metadata_bounds(void **state)
{
	struct rec_writer_opts opts = { .chunk_bytes = SMALL_CHUNK, .zstd_level = 3 };
	const char *path = tmp_path("bounds.isr");
	struct rec_writer *w = rec_writer__open(path, &opts);
	struct recording *r;
	size_t i;

	(void)state;
	assert_non_null(w);
	/* issue 19: one thread list of 200,000 entries */
	write_big_process(w, 100, 200000, REC_MAX_MAPS + 1, REC_MAX_STRING + 1);
	/* nothing is left of the thread bound; of the maps', 15 more */
	for (i = 1; i <= REC_MAX_MAPS_TOTAL / REC_MAX_MAPS; i++)
		write_big_process(w, 100 + 100 * (__u32)i, 10, REC_MAX_MAPS + 1, 0);
	for (; i < REC_MAX_PROCESSES + 5; i++)
		write_big_process(w, 1000000 + (__u32)i, 0, 0, 0);
	append_events(w, 0, 100);
	assert_int_equal(rec_writer__finish(w, END_MONO_NS, ISR_STOP_SIGNAL), 0);
	rec_writer__free(w);

	r = load_ok(path);
	assert_true(r->complete);
	assert_events(r, 100);
	assert_int_equal(r->process_count, REC_MAX_PROCESSES);
	assert_int_equal(r->cut.processes, 5);
	assert_int_equal(r->processes[0].thread_count, REC_MAX_THREADS);
	assert_int_equal(r->processes[0].threads[REC_MAX_THREADS - 1].tid, 100 + REC_MAX_THREADS);
	assert_int_equal(r->processes[1].thread_count, 0);
	assert_int_equal(r->cut.threads, 200000 - REC_MAX_THREADS + 10 * (REC_MAX_MAPS_TOTAL / REC_MAX_MAPS));
	assert_int_equal(strlen(r->processes[0].cmdline), REC_MAX_STRING);
	for (i = 0; i < REC_MAX_MAPS_TOTAL / REC_MAX_MAPS; i++)
		assert_int_equal(strlen(r->processes[i].maps), REC_MAX_MAPS);
	assert_int_equal(strlen(r->processes[i].maps), 0);
	assert_int_equal(r->cut.strings, 1 + REC_MAX_MAPS_TOTAL / REC_MAX_MAPS + 1);
	recording__free(r);
}

/* Every walk after the first hands over the same events; a file changed in
 * between is an error, not other events; a pipe cannot be walked twice. */
static void test_walks(void **state)
{
	const char *path = tmp_path("walks.isr"), *fifo = tmp_path("walks.fifo");
	struct chunk_info info[4096];
	struct rec_events ev;
	struct rec_file *f;
	unsigned char *file;
	size_t len, chunks, events, bytes, n, k;
	uLong sum, sum2;
	char err[512];
	pid_t child;
	int fd, status;

	(void)state;
	write_recording(path, 1, N_EVENTS);
	assert_int_equal(rec_file__open(path, &f, err, sizeof(err)), 0);
	assert_int_equal(rec_file__rewind(f, err, sizeof(err)), -EINVAL);
	for (int walk = 0; walk < 3; walk++) {
		chunks = events = bytes = 0;
		sum = crc32(0L, NULL, 0);
		if (walk)
			assert_int_equal(rec_file__rewind(f, err, sizeof(err)), 0);
		while (rec_file__next_events(f, &ev, err, sizeof(err)) > 0) {
			assert_int_equal(ev.index, chunks);
			chunks++;
			events += ev.count;
			bytes += ev.len;
			sum = crc32(sum, ev.data, (uInt)ev.len);
		}
		assert_int_equal(events, N_EVENTS);
		assert_int_equal(chunks, rec_file__events_chunks(f));
		if (!walk)
			sum2 = sum;
		assert_int_equal(sum, sum2);
	}
	assert_true(rec_file__recording(f)->complete);
	assert_null(rec_file__recording(f)->events);

	/* a payload byte of the last EVENTS chunk changes between walks */
	file = file__read(path, &len);
	n = chunks__walk(file, len, info, 4096);
	for (k = n; k-- > 0 && info[k].h.kind != ISR_CHUNK_EVENTS;)
		;
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\xff", 1, (off_t)(info[k].offset + sizeof(struct isr_chunk_header) + 9)), 1);
	close(fd);
	assert_int_equal(rec_file__rewind(f, err, sizeof(err)), 0);
	while ((status = rec_file__next_events(f, &ev, err, sizeof(err))) > 0)
		;
	assert_int_equal(status, -EIO);
	assert_contains(err, "no longer reads as it did");
	rec_file__close(f);

	/* a pipe */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		fd = open(fifo, O_WRONLY);
		_exit(fd >= 0 && write(fd, file, len) == (ssize_t)len ? 0 : 1);
	}
	assert_int_equal(rec_file__open(fifo, &f, err, sizeof(err)), 0);
	while (rec_file__next_events(f, &ev, err, sizeof(err)) > 0)
		;
	assert_int_equal(rec_file__rewind(f, err, sizeof(err)), -ESPIPE);
	assert_contains(err, "not a regular file");
	rec_file__close(f);
	assert_int_equal(waitpid(child, &status, 0), child);
	free(file);
}

/* ---- 4. writer errors ----------------------------------------------------------------- */

static void test_open_errors(void **state)
{
	struct rec_writer_opts opts = { 0 };
	struct rec_writer *w;

	(void)state;
	errno = 0;
	w = rec_writer__open(tmp_path("no-such-dir/x.isr"), NULL);
	assert_null(w);
	assert_int_equal(errno, ENOENT);

	/* the header cannot be written to a full disk */
	errno = 0;
	w = rec_writer__open("/dev/full", NULL);
	assert_null(w);
	assert_int_equal(errno, ENOSPC);

	opts.chunk_bytes = ISR_CHUNK_MAX_PAYLOAD + 1;
	errno = 0;
	assert_null(rec_writer__open(tmp_path("big.isr"), &opts));
	assert_int_equal(errno, EINVAL);
	opts.chunk_bytes = 0;
	opts.zstd_level = 1000;
	errno = 0;
	assert_null(rec_writer__open(tmp_path("lvl.isr"), &opts));
	assert_int_equal(errno, EINVAL);
}

/* The writer's descriptor for path (the writer is opaque; /proc knows). */
static int fd__find(const char *path)
{
	char real[PATH_MAX], link[64], target[PATH_MAX];
	int fd;

	assert_non_null(realpath(path, real));
	for (fd = 3; fd < 1024; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, real))
			return fd;
	}
	fail_msg("no descriptor open on %s", real);
	return -1;
}

/* The disk fills up mid-recording: every later call fails with ENOSPC, every
 * refused or unwritten event is counted, and the file reads back up to the
 * last chunk that was written. */
static void test_disk_full_mid_recording(void **state)
{
	const char *path = tmp_path("full-disk.isr");
	struct rec_writer_opts opts = { .chunk_bytes = SMALL_CHUNK, .zstd_level = 1 };
	struct isr_drop_count d = { .source = ISR_SRC_WRITER, .count = 1 };
	struct rec_writer *w = rec_writer__open(path, &opts);
	union any_event e;
	struct recording *r;
	size_t i, refused = 0;
	__u64 written;
	int devfull, fd, ret = 0;

	(void)state;
	assert_non_null(w);
	append_events(w, 0, 1000);
	assert_int_equal(rec_writer__flush(w), 0);
	append_events(w, 1000, 1010);	/* buffered, never to reach the disk */
	written = rec_writer__events_written(w);
	assert_int_equal(written, 1000);

	devfull = open("/dev/full", O_WRONLY);
	assert_true(devfull >= 0);
	fd = fd__find(path);
	assert_int_equal(dup2(devfull, fd), fd);
	close(devfull);

	for (i = 1010; i < 2000; i++) {
		size_t size = event__make(i, &e);

		ret = rec_writer__append_event(w, &e, size);
		if (ret) {
			assert_int_equal(ret, -ENOSPC);
			refused++;
		}
	}
	assert_true(refused > 800);	/* everything from the first full chunk on */
	assert_int_equal(rec_writer__flush(w), -ENOSPC);
	assert_int_equal(rec_writer__write_drops(w, &d, 1), -ENOSPC);
	assert_int_equal(rec_writer__write_clock(w, clock_pairs, 1), -ENOSPC);
	assert_int_equal(rec_writer__finish(w, 1, ISR_STOP_WRITE_ERROR), -ENOSPC);
	assert_int_equal(rec_writer__events_written(w), written);
	/* lost: the events accepted but not yet written when the disk filled, and all refused ones */
	assert_int_equal(rec_writer__events_written(w) + rec_writer__events_lost(w), 2000);
	rec_writer__free(w);

	r = load_ok(path);
	assert_true(r->truncated);
	assert_contains(r->truncation, "no END chunk");
	assert_events(r, 1000);
	recording__free(r);
}

/* A write cut short in the middle of a chunk (file size limit): EFBIG, and
 * the partial chunk is recognised as incomplete. */
static void test_short_write(void **state)
{
	const char *path = tmp_path("fsize.isr");
	struct rec_writer_opts opts = { .chunk_bytes = SMALL_CHUNK, .zstd_level = 0 };
	struct rec_writer *w = rec_writer__open(path, &opts);
	struct rlimit old, lim;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_sa;
	struct recording *r;
	union any_event e;
	size_t i;
	__u64 written;
	int ret = 0;

	(void)state;
	assert_non_null(w);
	append_events(w, 0, 500);
	assert_int_equal(rec_writer__flush(w), 0);
	written = rec_writer__events_written(w);

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(sigaction(SIGXFSZ, &ign, &old_sa), 0);
	lim = old;
	lim.rlim_cur = rec_writer__bytes_written(w) + sizeof(struct isr_chunk_header) + 1000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (i = 500; i < 1000 && !ret; i++) {
		size_t size = event__make(i, &e);

		ret = rec_writer__append_event(w, &e, size);
	}
	if (!ret)
		ret = rec_writer__flush(w);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(sigaction(SIGXFSZ, &old_sa, NULL), 0);

	assert_int_equal(ret, -EFBIG);
	assert_int_equal(rec_writer__append_event(w, &e, e.hdr.size), -EFBIG);
	assert_int_equal(rec_writer__events_written(w), written);
	assert_true(rec_writer__events_lost(w) > 0);
	rec_writer__free(w);

	r = load_ok(path);
	assert_true(r->truncated);
	assert_contains(r->truncation, "payload incomplete");
	assert_events(r, written);
	recording__free(r);
}

static void test_bad_arguments(void **state)
{
	const char *path = tmp_path("args.isr");
	struct rec_writer *w = rec_writer__open(path, NULL);
	struct rec_props *p = rec_props__new();
	union any_event e;
	size_t size = event__make(0, &e);
	struct recording *r;

	(void)state;
	assert_non_null(w);
	assert_non_null(p);
	assert_int_equal(rec_writer__append_event(w, &e, size - 8), -EINVAL);
	e.hdr.size = 20;
	assert_int_equal(rec_writer__append_event(w, &e, 20), -EINVAL);
	e.hdr.size = (__u16)size;
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_EVENTS, p), -EINVAL);
	assert_int_equal(rec_props__add_str(p, ISR_PROP_HOST_NAME, NULL), -EINVAL);
	/* none of that is a write error: the writer goes on */
	assert_int_equal(rec_writer__append_event(w, &e, size), 0);
	assert_int_equal(rec_writer__finish(w, 5, ISR_STOP_DURATION), 0);
	assert_int_equal(rec_writer__append_event(w, &e, size), -EINVAL);
	assert_int_equal(rec_writer__events_lost(w), 0);
	rec_props__free(p);
	rec_props__free(NULL);
	rec_writer__free(w);
	rec_writer__free(NULL);

	r = load_ok(path);
	assert_false(r->truncated);
	assert_events(r, 1);
	recording__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_zstd),
		cmocka_unit_test(test_round_trip_uncompressed),
		cmocka_unit_test(test_empty_recording),
		cmocka_unit_test(test_sort_is_stable),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_cuda_functions),
		cmocka_unit_test(test_truncated_at_every_byte),
		cmocka_unit_test(test_truncated_in_file_header),
		cmocka_unit_test(test_killed_recorder),
		cmocka_unit_test(test_bad_file_header),
		cmocka_unit_test(test_damaged_chunk_header),
		cmocka_unit_test(test_damaged_chunk_payload),
		cmocka_unit_test(test_gigantic_chunk_size),
		cmocka_unit_test(test_damaged_trailer_and_extra_bytes),
		cmocka_unit_test(test_malformed_events),
		cmocka_unit_test(test_forward_compatible),
		cmocka_unit_test(test_malformed_props),
		cmocka_unit_test(test_header_crc),
		cmocka_unit_test(test_metadata_bounds),
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_disk_full_mid_recording),
		cmocka_unit_test(test_short_write),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
