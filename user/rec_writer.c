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
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "rec_writer.h"
#include "events.h"
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
};

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

/*
 * Writes one chunk: compresses payload when that makes it smaller, then
 * header and stored payload. Chunks other than END are entered in the
 * section table before anything is written, so a memory failure leaves the
 * file untouched and the writer usable.
 */
static int writer__write_chunk(struct rec_writer *w, __u16 kind, const void *payload,
			       size_t raw_size, __u32 record_count)
{
	struct isr_chunk_header h;
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

struct rec_writer *rec_writer__open(const char *path, const struct rec_writer_opts *opts)
{
	struct isr_file_header fh;
	struct rec_writer *w;
	size_t chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes : REC_DEFAULT_CHUNK_BYTES;
	int level = opts ? opts->zstd_level : 0;
	int err;

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
	if (!w->ev_buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (level) {
		w->cctx = ZSTD_createCCtx();
		if (!w->cctx) {
			err = -ENOMEM;
			goto cleanup;
		}
	}

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
	ZSTD_freeCCtx(w->cctx);
	free(w->ev_buf);
	free(w->zbuf);
	free(w->sections);
	free(w);
}
