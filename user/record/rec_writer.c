// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Record-file writer (format: format/isr_format.h, docs/record-format.md).
 *
 * Every chunk is built completely in memory, then written as its header
 * followed by its payload, so a reader finds either a whole chunk or one it
 * can recognise as incomplete. The first write error is sticky: the file may
 * end in a partial chunk, and anything appended after it would be
 * unreachable for a reader, so the writer refuses everything from then on and
 * counts the events it could not write.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "rec_writer.h"
#include "registry.h"
#include "isr_format.h"
#include "buf.h"
#include "clock.h"
#include "out_file.h"

#define REC_DEFAULT_CHUNK_BYTES	(1U << 20)
/* The largest record hdr.size can describe, rounded down to a multiple of 8. */
#define REC_MAX_EVENT_SIZE	(UINT16_MAX & ~7U)

struct rec_writer {
	struct out_file out;	/* the file; out.fd is written */
	int fd;
	int err;		/* first write error (negative errno), sticky */
	bool finished;
	int zstd_level;		/* 0: store uncompressed */
	ZSTD_CCtx *cctx;

	size_t chunk_bytes;	/* flush threshold for buffered events */
	unsigned char *ev_buf;	/* buffered events, capacity ev_cap */
	size_t ev_cap, ev_len;
	__u32 ev_count;

	unsigned char *zbuf;	/* compression output, reused */
	size_t zbuf_cap;

	__u64 offset;		/* bytes written so far = next chunk's offset */
	__u64 seq;
	struct isr_section *sections;
	size_t section_count, section_cap;

	__u64 events_written, events_lost;

	struct rec_ring *ring;	/* ring mode (rec_writer__open_ring): no file */
	struct out_file_share share;	/* ring mode: the windows' readers */
};

static int ring__note_event(struct rec_writer *w, const void *event, size_t size);
static void ring__set_drops(struct rec_ring *r, const struct isr_drop_count *drops, size_t n);
static void ring__free(struct rec_ring *r);

struct rec_props {
	unsigned char *data;
	size_t len, cap;
	__u32 count;
};

/* Writes all of buf, retrying after signals and short writes. 0 or -errno. */
static int fd__write_full(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)	/* not expected from a regular file; never spin */
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Counts buffered events as lost: they will never reach the file. */
static void writer__drop_buffered(struct rec_writer *w)
{
	w->events_lost += w->ev_count;
	w->ev_count = 0;
	w->ev_len = 0;
}

static int writer__fail(struct rec_writer *w, int err)
{
	w->err = err;
	writer__drop_buffered(w);
	return err;
}

/* 0 when the writer accepts more output, else the error to return. */
static int writer__check(const struct rec_writer *w)
{
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	return 0;
}

static int writer__remember_section(struct rec_writer *w, __u16 kind, __u32 record_count)
{
	if (w->section_count == w->section_cap) {
		size_t ncap = w->section_cap ? w->section_cap * 2 : 64;
		struct isr_section *ns = realloc(w->sections, ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		w->sections = ns;
		w->section_cap = ncap;
	}
	memset(&w->sections[w->section_count], 0, sizeof(w->sections[0]));
	w->sections[w->section_count].offset = w->offset;
	w->sections[w->section_count].kind = kind;
	w->sections[w->section_count].record_count = record_count;
	w->section_count++;
	return 0;
}

/* Writes one chunk whose payload is stored as it is given (compressed
 * or not). Chunks other than END are entered in the section table before
 * anything is written, so a memory failure leaves the file untouched and
 * the writer usable. */
static int writer__write_stored(struct rec_writer *w, __u16 kind, __u16 compression, const void *stored,
				size_t stored_size, size_t raw_size, __u32 record_count)
{
	struct isr_chunk_header h;
	int err;

	if (kind != ISR_CHUNK_END) {
		err = writer__remember_section(w, kind, record_count);
		if (err)
			return err;
	}

	memset(&h, 0, sizeof(h));
	h.magic = ISR_CHUNK_MAGIC;
	h.kind = kind;
	h.compression = compression;
	h.stored_size = (__u32)stored_size;
	h.raw_size = (__u32)raw_size;
	h.record_count = record_count;
	h.payload_crc32 = (__u32)crc32(0L, stored, (uInt)stored_size);
	h.seq = w->seq;
	h.header_crc32 = (__u32)crc32(0L, (const Bytef *)&h,
				      offsetof(struct isr_chunk_header, header_crc32));

	err = fd__write_full(w->fd, &h, sizeof(h));
	if (!err)
		err = fd__write_full(w->fd, stored, stored_size);
	if (err)
		return writer__fail(w, err);
	w->offset += sizeof(h) + stored_size;
	w->seq++;
	return 0;
}

static int ring__store(struct rec_writer *w, __u16 kind, __u16 compression, const void *stored,
		       size_t stored_size, size_t raw_size, __u32 record_count);

/* One chunk, compressed when that makes it smaller: written to the file,
 * or kept in the ring (ring mode). */
static int writer__write_chunk(struct rec_writer *w, __u16 kind, const void *payload,
			       size_t raw_size, __u32 record_count)
{
	const void *stored = payload;
	size_t stored_size = raw_size;
	__u16 compression = ISR_COMPRESS_NONE;
	int err;

	if (raw_size > ISR_CHUNK_MAX_PAYLOAD)
		return -E2BIG;

	if (w->zstd_level && kind != ISR_CHUNK_END && raw_size) {
		size_t bound = ZSTD_compressBound(raw_size);
		size_t n;

		err = buf__reserve(&w->zbuf, &w->zbuf_cap, bound);
		if (err)
			return err;
		n = ZSTD_compressCCtx(w->cctx, w->zbuf, w->zbuf_cap, payload, raw_size,
				      w->zstd_level);
		/* Incompressible data (or a zstd failure) is stored as it is. */
		if (!ZSTD_isError(n) && n < raw_size) {
			stored = w->zbuf;
			stored_size = n;
			compression = ISR_COMPRESS_ZSTD;
		}
	}
	if (w->ring)
		return ring__store(w, kind, compression, stored, stored_size, raw_size, record_count);
	return writer__write_stored(w, kind, compression, stored, stored_size, raw_size, record_count);
}

/* The writer without its output: buffers and compressor. */
static struct rec_writer *writer__alloc(const struct rec_writer_opts *opts)
{
	struct rec_writer *w;
	size_t chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes : REC_DEFAULT_CHUNK_BYTES;
	int level = opts ? opts->zstd_level : 0;

	if (chunk_bytes > ISR_CHUNK_MAX_PAYLOAD ||
	    (level && (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()))) {
		errno = EINVAL;
		return NULL;
	}

	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->fd = -1;
	w->out.fd = -1;
	w->out.dirfd = -1;
	w->out.tmp[0] = '\0';
	w->chunk_bytes = chunk_bytes;
	w->zstd_level = level;
	/* An event always fits an empty buffer, whatever the threshold. */
	w->ev_cap = chunk_bytes > REC_MAX_EVENT_SIZE ? chunk_bytes : REC_MAX_EVENT_SIZE;
	w->ev_buf = malloc(w->ev_cap);
	if (!w->ev_buf)
		goto nomem;
	if (level) {
		w->cctx = ZSTD_createCCtx();
		if (!w->cctx)
			goto nomem;
	}
	return w;
nomem:
	rec_writer__free(w);
	errno = ENOMEM;
	return NULL;
}

struct rec_writer *rec_writer__open(const char *path, const struct rec_writer_opts *opts)
{
	struct isr_file_header fh;
	struct rec_writer *w = writer__alloc(opts);
	int err;

	if (!w)
		return NULL;
	err = out_file__create(&w->out, path, opts ? &opts->share : NULL);
	if (err)
		goto cleanup;
	w->fd = w->out.fd;

	memset(&fh, 0, sizeof(fh));
	fh.magic = ISR_MAGIC;
	fh.version_major = ISR_VERSION_MAJOR;
	fh.version_minor = ISR_VERSION_MINOR;
	fh.header_size = sizeof(fh);
	fh.created_real_ns = clock__now_ns(CLOCK_REALTIME);
	fh.created_mono_ns = clock__now_ns(CLOCK_MONOTONIC);
	fh.header_crc32 = (__u32)crc32(0L, (const Bytef *)&fh, sizeof(fh));
	err = fd__write_full(w->fd, &fh, sizeof(fh));
	/* Under its name from the start of the recording: one cut short
	 * reads back up to its last complete chunk where the user looks. */
	if (!opts || !opts->unnamed)
		err = err ?: out_file__commit(&w->out);
	if (err)
		goto cleanup;
	w->offset = sizeof(fh);
	return w;

cleanup:
	rec_writer__free(w);
	errno = -err;
	return NULL;
}

int rec_writer__name(struct rec_writer *w)
{
	return out_file__commit(&w->out);
}

struct rec_props *rec_props__new(void)
{
	struct rec_props *p = calloc(1, sizeof(*p));

	if (!p)
		errno = ENOMEM;
	return p;
}

int rec_props__add(struct rec_props *p, __u32 key, const void *val, size_t len)
{
	size_t padded = (len + 7) & ~(size_t)7;
	struct isr_prop rec = { .key = key, .len = (__u32)len };
	int err;

	if (len > ISR_CHUNK_MAX_PAYLOAD || (len && !val))
		return -EINVAL;
	err = buf__reserve(&p->data, &p->cap, p->len + sizeof(rec) + padded);
	if (err)
		return err;
	memcpy(p->data + p->len, &rec, sizeof(rec));
	p->len += sizeof(rec);
	if (len)
		memcpy(p->data + p->len, val, len);
	memset(p->data + p->len + len, 0, padded - len);
	p->len += padded;
	p->count++;
	return 0;
}

int rec_props__add_str(struct rec_props *p, __u32 key, const char *s)
{
	if (!s)
		return -EINVAL;
	return rec_props__add(p, key, s, strlen(s));
}

int rec_props__add_u32(struct rec_props *p, __u32 key, __u32 v)
{
	return rec_props__add(p, key, &v, sizeof(v));
}

int rec_props__add_u64(struct rec_props *p, __u32 key, __u64 v)
{
	return rec_props__add(p, key, &v, sizeof(v));
}

void rec_props__free(struct rec_props *p)
{
	if (!p)
		return;
	free(p->data);
	free(p);
}

int rec_writer__write_props(struct rec_writer *w, __u16 chunk_kind, const struct rec_props *p)
{
	int err = writer__check(w);

	if (err)
		return err;
	if (chunk_kind != ISR_CHUNK_HOST && chunk_kind != ISR_CHUNK_PROCESS)
		return -EINVAL;
	return writer__write_chunk(w, chunk_kind, p->data, p->len, p->count);
}

int rec_writer__append_event(struct rec_writer *w, const void *event, size_t size)
{
	__u16 hdr_size;
	int err;

	if (w->err) {
		w->events_lost++;
		return w->err;
	}
	if (w->finished)
		return -EINVAL;
	if (size < sizeof(struct isr_ev_hdr) || size > REC_MAX_EVENT_SIZE || size % 8)
		return -EINVAL;
	/* memcpy: ring-buffer records need not be aligned for a struct access */
	memcpy(&hdr_size, (const unsigned char *)event + offsetof(struct isr_ev_hdr, size),
	       sizeof(hdr_size));
	if (hdr_size != size)
		return -EINVAL;

	if (w->ev_len && w->ev_len + size > w->chunk_bytes) {
		err = rec_writer__flush(w);
		if (err) {
			w->events_lost++;
			return err;
		}
	}
	if (w->ring) {
		err = ring__note_event(w, event, size);
		if (err) {
			w->events_lost++;
			return err;
		}
	}
	memcpy(w->ev_buf + w->ev_len, event, size);
	w->ev_len += size;
	w->ev_count++;
	return 0;
}

int rec_writer__flush(struct rec_writer *w)
{
	int err = writer__check(w);

	if (err)
		return err;
	if (!w->ev_count)
		return 0;
	err = writer__write_chunk(w, ISR_CHUNK_EVENTS, w->ev_buf, w->ev_len, w->ev_count);
	if (err)
		return err;
	w->events_written += w->ev_count;
	w->ev_count = 0;
	w->ev_len = 0;
	return 0;
}

int rec_writer__write_clock(struct rec_writer *w, const struct isr_clock_pair *pairs, size_t n)
{
	int err = writer__check(w);

	if (err)
		return err;
	if (n > ISR_CHUNK_MAX_PAYLOAD / sizeof(*pairs) || (n && !pairs))
		return -EINVAL;
	return writer__write_chunk(w, ISR_CHUNK_CLOCK, pairs, n * sizeof(*pairs), (__u32)n);
}

int rec_writer__write_drops(struct rec_writer *w, const struct isr_drop_count *drops, size_t n)
{
	struct isr_drop_count *copy;
	size_t i;
	int err = writer__check(w);

	if (err)
		return err;
	if (n > ISR_CHUNK_MAX_PAYLOAD / sizeof(*drops) || (n && !drops))
		return -EINVAL;
	if (w->ring) {	/* kept as numbers: each window writes its own */
		ring__set_drops(w->ring, drops, n);
		return 0;
	}
	/* Copied so that the padding on disk is zero whatever the caller left in it. */
	copy = calloc(n ? n : 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		copy[i].source = drops[i].source;
		copy[i].count = drops[i].count;
	}
	err = writer__write_chunk(w, ISR_CHUNK_DROPS, copy, n * sizeof(*copy), (__u32)n);
	free(copy);
	return err;
}

int rec_writer__finish(struct rec_writer *w, __u64 end_mono_ns, __u32 stop_reason)
{
	struct isr_trailer trailer;
	struct isr_end end;
	unsigned char *payload;
	size_t sections_len, len;
	__u64 end_offset;
	int err;

	if (w->ring)
		return -EINVAL;	/* a ring writes windows (rec_writer__write_window) */
	err = rec_writer__flush(w);
	if (err)
		return err;

	sections_len = w->section_count * sizeof(struct isr_section);
	len = sizeof(end) + sections_len;
	payload = malloc(len);
	if (!payload)
		return -ENOMEM;
	memset(&end, 0, sizeof(end));
	end.end_mono_ns = end_mono_ns;
	end.event_count = w->events_written;
	end.stop_reason = stop_reason;
	end.section_count = (__u32)w->section_count;
	memcpy(payload, &end, sizeof(end));
	if (sections_len)
		memcpy(payload + sizeof(end), w->sections, sections_len);

	end_offset = w->offset;
	err = writer__write_chunk(w, ISR_CHUNK_END, payload, len, end.section_count);
	free(payload);
	if (err)
		return err;

	memset(&trailer, 0, sizeof(trailer));
	trailer.end_offset = end_offset;
	trailer.magic = ISR_TRAILER_MAGIC;
	err = fd__write_full(w->fd, &trailer, sizeof(trailer));
	if (err)
		return writer__fail(w, err);
	w->offset += sizeof(trailer);
	w->finished = true;

	/* EINVAL: the path is not a file that can be synced (a pipe, a device). */
	if (fsync(w->fd) && errno != EINVAL)
		return writer__fail(w, -errno);
	return 0;
}

__u64 rec_writer__events_written(const struct rec_writer *w)
{
	return w->events_written;
}

static void on_size_signal(int sig)
{
	(void)sig;
}

void rec_writer__size_limit_is_an_error(void)
{
	struct sigaction sa = { .sa_handler = on_size_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGXFSZ, &sa, NULL);
}

__u64 rec_writer__events_lost(const struct rec_writer *w)
{
	return w->events_lost;
}

__u64 rec_writer__bytes_written(const struct rec_writer *w)
{
	return w->offset;
}

void rec_writer__free(struct rec_writer *w)
{
	if (!w)
		return;
	out_file__close(&w->out);
	if (w->ring)
		ring__free(w->ring);
	ZSTD_freeCCtx(w->cctx);
	free(w->ev_buf);
	free(w->zbuf);
	free(w->sections);
	free(w);
}

/* ---- ring mode: the flight recorder ------------------------------------------------ */

/* A chunk the ring holds, stored as it will be written. */
struct ring_chunk {
	struct ring_chunk *next;
	__u64 no;		/* EVENTS: its number, in the order they were sealed */
	__u64 t_first, t_last;	/* EVENTS: least and greatest hdr.ts_ns; CLOCK: the pair's time */
	__u64 *drops_base;	/* EVENTS: the drop counts before its first event (ISR_SRC_MAX) */
	__u16 kind, compression;
	__u32 stored_size, raw_size, record_count;
	unsigned char data[];
};

struct ring_list {
	struct ring_chunk *head, *tail;
};

/* An event that later events refer to (a type flagged ISR_EVF_DEFINES: a
 * kernel's name, an interned stack, a thread's name, a communicator, a
 * rank), kept past its chunk so that every window can be read on its own;
 * so are the newest GPU clock pairs. */
struct ring_def {
	__u64 chunk_no;		/* the EVENTS chunk it was buffered into */
	size_t size;
};

#define RING_GPU_CLOCKS	32	/* the newest GPU clock pairs kept for the windows */

struct rec_ring {
	__u64 window_ns;
	size_t max_bytes;
	struct ring_list procs, clocks, events;
	size_t bytes;		/* what the three lists and the definitions hold */
	__u64 events_held;
	__u64 next_no;		/* the number of the EVENTS chunk being buffered */
	__u64 drops[ISR_SRC_MAX];	/* the latest DROPS chunk's counts */
	__u64 buf_drops[ISR_SRC_MAX];	/* the counts when the buffered events began */
	__u64 buf_first, buf_last;	/* their least and greatest hdr.ts_ns */
	__u64 capped_events;	/* events evicted by max_bytes before their window ended */
	unsigned char *defs;	/* struct ring_def + event, one after another */
	size_t defs_len, defs_cap;
	unsigned char gpu_clocks[RING_GPU_CLOCKS][sizeof(struct isr_ev_gpu_clock)];
	__u64 gpu_clock_no[RING_GPU_CLOCKS];
	size_t ngpu_clocks, gpu_clock_next;
};

static void ring_list__push(struct ring_list *l, struct ring_chunk *c)
{
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

static struct ring_chunk *ring_list__pop(struct ring_list *l)
{
	struct ring_chunk *c = l->head;

	if (c) {
		l->head = c->next;
		if (!l->head)
			l->tail = NULL;
	}
	return c;
}

static size_t ring_chunk__bytes(const struct ring_chunk *c)
{
	return sizeof(*c) + c->stored_size + (c->drops_base ? ISR_SRC_MAX * sizeof(__u64) : 0);
}

static void ring__drop_chunk(struct rec_ring *r, struct ring_chunk *c)
{
	r->bytes -= ring_chunk__bytes(c);
	if (c->kind == ISR_CHUNK_EVENTS)
		r->events_held -= c->record_count;
	free(c->drops_base);
	free(c);
}

/* Forgets the CLOCK pairs before the oldest event held, but the newest of
 * them: what the window's first events are placed by. */
static void ring__trim_clocks(struct rec_ring *r)
{
	__u64 first = r->events.head ? r->events.head->t_first : UINT64_MAX;

	while (r->clocks.head && r->clocks.head->next && r->clocks.head->next->t_first <= first)
		ring__drop_chunk(r, ring_list__pop(&r->clocks));
}

/* Past the memory cap, the oldest events go first. */
static void ring__trim_bytes(struct rec_ring *r)
{
	while (r->bytes > r->max_bytes && r->events.head) {
		struct ring_chunk *c = ring_list__pop(&r->events);

		r->capped_events += c->record_count;
		ring__drop_chunk(r, c);
	}
	ring__trim_clocks(r);
}

static int ring__store(struct rec_writer *w, __u16 kind, __u16 compression, const void *stored,
		       size_t stored_size, size_t raw_size, __u32 record_count)
{
	struct rec_ring *r = w->ring;
	struct ring_chunk *c;

	if (kind != ISR_CHUNK_PROCESS && kind != ISR_CHUNK_CLOCK && kind != ISR_CHUNK_EVENTS)
		return -EINVAL;	/* HOST and END belong to each window */
	c = calloc(1, sizeof(*c) + stored_size);
	if (!c)
		return -ENOMEM;
	c->kind = kind;
	c->compression = compression;
	c->stored_size = (__u32)stored_size;
	c->raw_size = (__u32)raw_size;
	c->record_count = record_count;
	if (stored_size)
		memcpy(c->data, stored, stored_size);
	if (kind == ISR_CHUNK_EVENTS) {
		c->drops_base = malloc(sizeof(r->buf_drops));
		if (!c->drops_base) {
			free(c);
			return -ENOMEM;
		}
		memcpy(c->drops_base, r->buf_drops, sizeof(r->buf_drops));
		c->no = r->next_no++;
		c->t_first = r->buf_first;
		c->t_last = r->buf_last;
		r->events_held += record_count;
		ring_list__push(&r->events, c);
	} else if (kind == ISR_CHUNK_CLOCK) {
		const struct isr_clock_pair *p = (const void *)c->data;

		/* One pair each, stored as it is: too small for zstd to gain. */
		c->t_first = compression == ISR_COMPRESS_NONE && stored_size >= sizeof(*p) ? p->mono_ns : 0;
		ring_list__push(&r->clocks, c);
	} else {
		ring_list__push(&r->procs, c);
	}
	r->bytes += ring_chunk__bytes(c);
	ring__trim_bytes(r);
	return 0;
}

static void ring__set_drops(struct rec_ring *r, const struct isr_drop_count *drops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (drops[i].source < ISR_SRC_MAX)
			r->drops[drops[i].source] = drops[i].count;
}

/* What an event buffered in ring mode adds: the buffer's times and drop
 * baseline, a definition kept. */
static int ring__note_event(struct rec_writer *w, const void *event, size_t size)
{
	struct rec_ring *r = w->ring;
	struct isr_ev_hdr h;

	memcpy(&h, event, sizeof(h));
	if (!w->ev_count) {
		memcpy(r->buf_drops, r->drops, sizeof(r->drops));
		r->buf_first = r->buf_last = h.ts_ns;
	}
	if (h.ts_ns < r->buf_first)
		r->buf_first = h.ts_ns;
	if (h.ts_ns > r->buf_last)
		r->buf_last = h.ts_ns;
	if (h.type == ISR_EV_GPU_CLOCK && size == sizeof(r->gpu_clocks[0])) {
		size_t i = r->gpu_clock_next;

		memcpy(r->gpu_clocks[i], event, size);
		r->gpu_clock_no[i] = r->next_no;
		r->gpu_clock_next = (i + 1) % RING_GPU_CLOCKS;
		if (r->ngpu_clocks < RING_GPU_CLOCKS)
			r->ngpu_clocks++;
	} else if (isr_event_flags(h.type) & ISR_EVF_DEFINES) {
		struct ring_def d = { .chunk_no = r->next_no, .size = size };
		int err = buf__reserve(&r->defs, &r->defs_cap, r->defs_len + sizeof(d) + size);

		if (err)
			return err;
		memcpy(r->defs + r->defs_len, &d, sizeof(d));
		memcpy(r->defs + r->defs_len + sizeof(d), event, size);
		r->defs_len += sizeof(d) + size;
		r->bytes += sizeof(d) + size;
	}
	return 0;
}

struct rec_writer *rec_writer__open_ring(const struct rec_writer_opts *opts)
{
	struct rec_writer *w;

	if (!opts || !opts->ring_window_ns || !opts->ring_max_bytes) {
		errno = EINVAL;
		return NULL;
	}
	w = writer__alloc(opts);
	if (!w)
		return NULL;
	w->ring = calloc(1, sizeof(*w->ring));
	if (!w->ring) {
		rec_writer__free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->ring->window_ns = opts->ring_window_ns;
	w->ring->max_bytes = opts->ring_max_bytes;
	w->share = opts->share;
	return w;
}

void rec_writer__ring_trim(struct rec_writer *w, __u64 now_ns)
{
	struct rec_ring *r = w->ring;

	if (!r)
		return;
	while (r->events.head && r->events.head->t_last + r->window_ns < now_ns)
		ring__drop_chunk(r, ring_list__pop(&r->events));
	ring__trim_bytes(r);
}

void rec_writer__ring_stats(const struct rec_writer *w, struct rec_ring_stats *st)
{
	const struct rec_ring *r = w->ring;

	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	st->bytes = r->bytes + w->ev_len;
	st->events = r->events_held + w->ev_count;
	st->capped_events = r->capped_events;
	if (r->events.head) {
		st->first_ns = r->events.head->t_first;
		st->last_ns = r->events.tail->t_last;
	}
	if (w->ev_count) {
		if (!st->first_ns || r->buf_first < st->first_ns)
			st->first_ns = r->buf_first;
		if (r->buf_last > st->last_ns)
			st->last_ns = r->buf_last;
	}
}

/* The definitions and GPU clock pairs of chunks the window does not hold
 * (evicted, or written by an earlier window), as the window's first events. */
static int window__write_defs(struct rec_writer *nw, const struct rec_ring *r, __u64 first_no)
{
	size_t off = 0, i;
	int err = 0;

	while (off < r->defs_len && !err) {
		struct ring_def d;

		memcpy(&d, r->defs + off, sizeof(d));
		if (d.chunk_no < first_no)
			err = rec_writer__append_event(nw, r->defs + off + sizeof(d), d.size);
		off += sizeof(d) + d.size;
	}
	for (i = 0; i < r->ngpu_clocks && !err; i++) {
		/* oldest first */
		size_t k = (r->gpu_clock_next + RING_GPU_CLOCKS - r->ngpu_clocks + i) % RING_GPU_CLOCKS;

		if (r->gpu_clock_no[k] < first_no)
			err = rec_writer__append_event(nw, r->gpu_clocks[k], sizeof(r->gpu_clocks[k]));
	}
	return err ?: rec_writer__flush(nw);
}

static int window__write_list(struct rec_writer *nw, const struct ring_list *l)
{
	int err = 0;

	for (const struct ring_chunk *c = l->head; c && !err; c = c->next)
		err = writer__write_stored(nw, c->kind, c->compression, c->data, c->stored_size, c->raw_size,
					   c->record_count);
	return err;
}

int rec_writer__write_window(struct rec_writer *w, const char *path, const struct rec_props *host,
			     __u64 end_mono_ns, __u32 stop_reason, struct rec_window *out)
{
	struct rec_writer_opts o = { .zstd_level = w->zstd_level, .share = w->share, .unnamed = true };
	struct isr_drop_count d[ISR_SRC_MAX];
	struct rec_ring *r = w->ring;
	struct rec_writer *nw;
	const __u64 *base;
	__u64 first_no, n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!r)
		return -EINVAL;
	err = rec_writer__flush(w);
	if (err)
		return err;
	nw = rec_writer__open(path, &o);
	if (!nw)
		return -errno;
	first_no = r->events.head ? r->events.head->no : r->next_no;
	base = r->events.head ? r->events.head->drops_base : r->drops;
	memset(d, 0, sizeof(d));
	for (__u32 i = 0; i < ISR_SRC_MAX; i++) {
		d[i].source = i;
		d[i].count = r->drops[i] >= base[i] ? r->drops[i] - base[i] : 0;
		out->drops += d[i].count;
	}
	err = writer__write_chunk(nw, ISR_CHUNK_HOST, host->data, host->len, host->count);
	err = err ?: window__write_list(nw, &r->procs);
	err = err ?: window__write_list(nw, &r->clocks);
	err = err ?: window__write_defs(nw, r, first_no);
	n = nw->events_written;
	err = err ?: window__write_list(nw, &r->events);
	for (const struct ring_chunk *c = r->events.head; c; c = c->next)
		n += c->record_count;
	nw->events_written = n;
	err = err ?: rec_writer__write_drops(nw, d, ISR_SRC_MAX);
	err = err ?: rec_writer__finish(nw, end_mono_ns, stop_reason);
	err = err ?: rec_writer__name(nw);
	out->bytes = nw->offset;
	rec_writer__free(nw);
	if (err)
		return err;
	out->events = r->events_held;
	if (r->events.head) {
		out->first_ns = r->events.head->t_first;
		out->last_ns = r->events.tail->t_last;
	}
	out->capped_events = r->capped_events;
	/* Written: the next window begins after it. */
	while (r->events.head)
		ring__drop_chunk(r, ring_list__pop(&r->events));
	r->capped_events = 0;
	ring__trim_clocks(r);
	return 0;
}

static void ring__free(struct rec_ring *r)
{
	struct ring_list *lists[] = { &r->procs, &r->clocks, &r->events };

	for (size_t i = 0; i < 3; i++)
		while (lists[i]->head)
			ring__drop_chunk(r, ring_list__pop(lists[i]));
	free(r->defs);
	free(r);
}
