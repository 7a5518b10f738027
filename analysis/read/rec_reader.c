// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Record-file reader (format: format/isr_format.h, docs/record-format.md).
 *
 * The file is read front to back one chunk at a time. A chunk is applied to
 * the recording only once it has been checked completely (header CRC, sizes,
 * payload CRC, decompression, contents), so when reading stops at a damaged
 * or incomplete chunk everything before it is intact and nothing of it is
 * half-applied. Events are handed over a chunk at a time (rec_file), and
 * walked again from the offsets the first walk noted, with the same checks;
 * recording__load() keeps them all in one growing buffer and builds the
 * pointer array once at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "recording.h"
#include "buf.h"

/* Largest file header accepted: later minors may append fields to it. */
#define ISR_FILE_HEADER_MAX	4096

struct reader {
	int fd;
	__u64 file_size;	/* from fstat; UINT64_MAX when the input is not a regular file */
	__u64 offset;		/* file offset of the next unread byte */
	struct recording *rec;
	ZSTD_DCtx *dctx;
	unsigned char *stored;	/* payload as read from the file, reused */
	size_t stored_cap;
	unsigned char *raw;	/* decompressed payload, reused */
	size_t raw_cap;
	__u64 last_event_ns;
	__u64 events;		/* events in the chunks accepted so far */
	__u32 seen_chunks;	/* valid chunks before the current one */
	struct isr_section *sections;	/* what the walk found, to check END against */
	size_t section_count, section_cap;
	size_t events_chunks;	/* EVENTS chunks among them */
	/* the EVENTS chunk the last call of reader__chunk accepted, if any */
	const unsigned char *chunk_events;
	__u32 chunk_event_count;
	__u32 chunk_event_len;
	size_t processes_cap, clock_pairs_cap;
	/* what the metadata took of the bounds (REC_MAX_*) */
	size_t threads_kept;
	size_t maps_kept;
};

struct rec_file {
	struct reader rd;
	bool walked;		/* the first walk ended: rd.rec is complete */
	size_t next_section;	/* later walks: the next of rd.sections to look at */
	size_t next_events;	/* later walks: EVENTS chunks handed over */
};

/* Why a chunk cannot be used; the walk stops there. */
struct chunk_fault {
	char why[200];
};

static void fault__set(struct chunk_fault *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fault__set(struct chunk_fault *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
}

static void reader__truncated(struct reader *rd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void reader__truncated(struct reader *rd, const char *fmt, ...)
{
	va_list ap;

	rd->rec->truncated = true;
	va_start(ap, fmt);
	vsnprintf(rd->rec->truncation, sizeof(rd->rec->truncation), fmt, ap);
	va_end(ap);
}

/* Reads up to len bytes; fewer only at end of file. Bytes read, or -errno. */
static ssize_t reader__read(struct reader *rd, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(rd->fd, p + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	rd->offset += got;
	return (ssize_t)got;
}

/*
 * Checks that payload is a sequence of exactly count well-formed events.
 * Returns the number of events of unknown types, or -1 with f set.
 */
static long events__check(const unsigned char *payload, size_t len, __u32 count,
			  __u64 *max_ts, struct chunk_fault *f)
{
	size_t off = 0, n = 0;
	long unknown = 0;

	while (off < len) {
		struct isr_ev_hdr h;

		if (len - off < sizeof(h)) {
			fault__set(f, "event %zu at payload byte %zu: %zu bytes left, less than an event header",
				   n, off, len - off);
			return -1;
		}
		memcpy(&h, payload + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8) {
			fault__set(f, "event %zu at payload byte %zu: size %u is below %zu or not a multiple of 8",
				   n, off, h.size, sizeof(h));
			return -1;
		}
		if (h.size > len - off) {
			fault__set(f, "event %zu at payload byte %zu: size %u runs past the payload end (%zu)",
				   n, off, h.size, len);
			return -1;
		}
		if (h.size < isr_event_min_size(h.type)) {
			fault__set(f, "event %zu at payload byte %zu: type %s needs %zu bytes, record has %u",
				   n, off, isr_event_name(h.type), isr_event_min_size(h.type), h.size);
			return -1;
		}
		if (!isr_event_name(h.type))
			unknown++;
		if (h.ts_ns > *max_ts)
			*max_ts = h.ts_ns;
		off += h.size;
		n++;
	}
	if (n != count) {
		fault__set(f, "holds %zu events, header says %u", n, count);
		return -1;
	}
	return unknown;
}

/* Walks a property list, checking its structure and the sizes of the known
 * keys of the chunk kind. 0, or -1 with f set. */
static int props__check(__u16 kind, const unsigned char *p, size_t len, __u32 count,
			struct chunk_fault *f)
{
	size_t off = 0, n = 0;

	while (off < len) {
		struct isr_prop pr;
		size_t padded, want = 0;

		if (len - off < sizeof(pr)) {
			fault__set(f, "property %zu at payload byte %zu: incomplete header", n, off);
			return -1;
		}
		memcpy(&pr, p + off, sizeof(pr));
		padded = ((size_t)pr.len + 7) & ~(size_t)7;
		if (padded > len - off - sizeof(pr)) {
			fault__set(f, "property %zu (key %u) at payload byte %zu: length %u runs past the payload end",
				   n, pr.key, off, pr.len);
			return -1;
		}
		if (kind == ISR_CHUNK_HOST) {
			if (pr.key == ISR_PROP_HOST_NCPUS)
				want = sizeof(__u32);
			else if (pr.key == ISR_PROP_HOST_START_MONO_NS ||
				 pr.key == ISR_PROP_HOST_DURATION_LIMIT_NS)
				want = sizeof(__u64);
		} else {
			if (pr.key == ISR_PROP_PROC_PID || pr.key == ISR_PROP_PROC_PPID ||
			    pr.key == ISR_PROP_PROC_ORIGIN)
				want = sizeof(__u32);
			else if (pr.key == ISR_PROP_PROC_SEEN_MONO_NS)
				want = sizeof(__u64);
			else if (pr.key == ISR_PROP_PROC_THREADS &&
				 pr.len % sizeof(struct isr_thread_info)) {
				fault__set(f, "THREADS property is %u bytes, not a multiple of %zu",
					   pr.len, sizeof(struct isr_thread_info));
				return -1;
			}
		}
		if (want && pr.len != want) {
			fault__set(f, "property key %u is %u bytes, expected %zu", pr.key, pr.len, want);
			return -1;
		}
		off += sizeof(pr) + padded;
		n++;
	}
	if (n != count) {
		fault__set(f, "holds %zu properties, header says %u", n, count);
		return -1;
	}
	return 0;
}

/* Replaces *dst with a copy of the value, at most max bytes of it (a value
 * cut short is counted in *cut); NUL separators (argv) become spaces,
 * trailing NULs are dropped. 0 or -ENOMEM. */
static int prop__set_str(char **dst, const unsigned char *val, size_t len, char sep_to, size_t max,
			 size_t *cut)
{
	char *s;
	size_t i;

	while (len && !val[len - 1])
		len--;
	if (len > max) {
		len = max;
		(*cut)++;
	}
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, val, len);
	s[len] = '\0';
	for (i = 0; i < len && sep_to; i++)
		if (!s[i])
			s[i] = sep_to;
	free(*dst);
	*dst = s;
	return 0;
}

/* Keeps a HOST property the reader does not decode. 0 or -ENOMEM. */
static int host__keep(struct rec_host *h, __u32 key, const unsigned char *v, __u32 len)
{
	struct rec_prop *n = reallocarray(h->props, h->prop_count + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	h->props = n;
	n[h->prop_count].key = key;
	n[h->prop_count].len = len;
	n[h->prop_count].value = malloc(len ? len : 1);
	if (!n[h->prop_count].value)
		return -ENOMEM;
	memcpy(n[h->prop_count].value, v, len);
	h->prop_count++;
	return 0;
}

/* Applies a checked HOST property list. 0 or -ENOMEM. */
static int host__apply(struct rec_host *h, const unsigned char *p, size_t len, size_t *cut)
{
	size_t off = 0;
	int err = 0;

	while (off < len && !err) {
		struct isr_prop pr;
		const unsigned char *v;
		char **str = NULL, sep = 0;

		memcpy(&pr, p + off, sizeof(pr));
		v = p + off + sizeof(pr);
		switch (pr.key) {
		case ISR_PROP_HOST_NAME:	   str = &h->hostname; break;
		case ISR_PROP_HOST_KERNEL:	   str = &h->kernel; break;
		case ISR_PROP_HOST_KERNEL_VERSION: str = &h->kernel_version; break;
		case ISR_PROP_HOST_MACHINE:	   str = &h->machine; break;
		case ISR_PROP_HOST_BOOT_ID:	   str = &h->boot_id; break;
		case ISR_PROP_HOST_TOOL_VERSION:   str = &h->tool_version; break;
		case ISR_PROP_HOST_COMMAND:	   str = &h->command, sep = ' '; break;
		case ISR_PROP_HOST_TRIGGER:	   str = &h->trigger; break;
		case ISR_PROP_HOST_NCPUS:	   memcpy(&h->ncpus, v, sizeof(h->ncpus)); break;
		case ISR_PROP_HOST_START_MONO_NS:  memcpy(&h->start_mono_ns, v, sizeof(__u64)); break;
		case ISR_PROP_HOST_DURATION_LIMIT_NS:
			memcpy(&h->duration_limit_ns, v, sizeof(__u64));
			break;
		default:
			err = host__keep(h, pr.key, v, pr.len);
			break;
		}
		if (str)
			err = prop__set_str(str, v, pr.len, sep, REC_MAX_STRING, cut);
		off += sizeof(pr) + (((size_t)pr.len + 7) & ~(size_t)7);
	}
	return err;
}

static void process__free_fields(struct rec_process *p)
{
	free(p->comm);
	free(p->cmdline);
	free(p->exe);
	free(p->maps);
	free(p->threads);
}

/* The thread list, as much of it as REC_MAX_THREADS leaves room for. */
static int process__set_threads(struct reader *rd, struct rec_process *p, const unsigned char *v, size_t len)
{
	size_t n = len / sizeof(struct isr_thread_info), i, room;
	struct rec_thread *t;

	rd->threads_kept -= p->thread_count;	/* a list given twice: the later one */
	room = REC_MAX_THREADS - rd->threads_kept;
	if (n > room) {
		rd->rec->cut.threads += n - room;
		n = room;
	}
	t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct isr_thread_info ti;

		memcpy(&ti, v + i * sizeof(ti), sizeof(ti));
		t[i].tid = ti.tid;
		memcpy(t[i].comm, ti.comm, sizeof(t[i].comm));
		t[i].comm[sizeof(t[i].comm) - 1] = '\0';
	}
	free(p->threads);
	p->threads = t;
	p->thread_count = n;
	rd->threads_kept += n;
	return 0;
}

/* The memory map, as much of it as REC_MAX_MAPS and what the other
 * processes left of REC_MAX_MAPS_TOTAL allow. */
static int process__set_maps(struct reader *rd, struct rec_process *p, const unsigned char *v, size_t len)
{
	size_t room, max;
	int err;

	rd->maps_kept -= p->maps ? strlen(p->maps) : 0;
	room = REC_MAX_MAPS_TOTAL - rd->maps_kept;
	max = room < REC_MAX_MAPS ? room : REC_MAX_MAPS;
	err = prop__set_str(&p->maps, v, len, 0, max, &rd->rec->cut.strings);
	rd->maps_kept += p->maps ? strlen(p->maps) : 0;
	return err;
}

/* Decodes a checked PROCESS property list into p (zeroed by the caller).
 * 0 or -ENOMEM; p's fields are the caller's to free either way, and the
 * caller's to return to the bounds when p is not kept. */
static int process__apply(struct reader *rd, struct rec_process *p, const unsigned char *buf, size_t len)
{
	size_t off = 0, *cut = &rd->rec->cut.strings;
	int err = 0;

	while (off < len && !err) {
		struct isr_prop pr;
		const unsigned char *v;

		memcpy(&pr, buf + off, sizeof(pr));
		v = buf + off + sizeof(pr);
		switch (pr.key) {
		case ISR_PROP_PROC_PID:		 memcpy(&p->pid, v, sizeof(__u32)); break;
		case ISR_PROP_PROC_PPID:	 memcpy(&p->ppid, v, sizeof(__u32)); break;
		case ISR_PROP_PROC_ORIGIN:	 memcpy(&p->origin, v, sizeof(__u32)); break;
		case ISR_PROP_PROC_SEEN_MONO_NS: memcpy(&p->seen_mono_ns, v, sizeof(__u64)); break;
		case ISR_PROP_PROC_COMM:	 err = prop__set_str(&p->comm, v, pr.len, 0, REC_MAX_STRING, cut); break;
		case ISR_PROP_PROC_CMDLINE:	 err = prop__set_str(&p->cmdline, v, pr.len, ' ', REC_MAX_STRING, cut); break;
		case ISR_PROP_PROC_EXE:		 err = prop__set_str(&p->exe, v, pr.len, 0, REC_MAX_STRING, cut); break;
		case ISR_PROP_PROC_MAPS:	 err = process__set_maps(rd, p, v, pr.len); break;
		case ISR_PROP_PROC_THREADS:	 err = process__set_threads(rd, p, v, pr.len); break;
		default:
			break;
		}
		off += sizeof(pr) + (((size_t)pr.len + 7) & ~(size_t)7);
	}
	return err;
}

/* Gives what a process that is not kept took of the bounds back. */
static void process__unkeep(struct reader *rd, const struct rec_process *p)
{
	rd->threads_kept -= p->thread_count;
	rd->maps_kept -= p->maps ? strlen(p->maps) : 0;
}

static bool props__has_key(const unsigned char *p, size_t len, __u32 key)
{
	size_t off = 0;

	while (off < len) {
		struct isr_prop pr;

		memcpy(&pr, p + off, sizeof(pr));
		if (pr.key == key)
			return true;
		off += sizeof(pr) + (((size_t)pr.len + 7) & ~(size_t)7);
	}
	return false;
}

static const char *chunk__kind_name(__u16 kind)
{
	switch (kind) {
	case ISR_CHUNK_HOST:	return "HOST";
	case ISR_CHUNK_PROCESS:	return "PROCESS";
	case ISR_CHUNK_CLOCK:	return "CLOCK";
	case ISR_CHUNK_EVENTS:	return "EVENTS";
	case ISR_CHUNK_DROPS:	return "DROPS";
	case ISR_CHUNK_END:	return "END";
	default:		return "unknown";
	}
}


/*
 * Reads chunk h's stored payload and checks its CRC. With decode, the raw
 * payload is then produced in a reused buffer. Without decode (unknown
 * kinds) the stored bytes are only verified. *out points at the result,
 * valid until the next chunk is read.
 * 1 = good, 0 = bad chunk (f says why), -errno on a read or memory failure.
 */
static int reader__payload(struct reader *rd, const struct isr_chunk_header *h, bool decode,
			   const unsigned char **out, struct chunk_fault *f)
{
	bool plain = decode && h->compression == ISR_COMPRESS_NONE;
	unsigned char *src, *dst;
	size_t r;
	__u32 crc;
	ssize_t n;
	int err;

	if (decode && h->compression != ISR_COMPRESS_NONE && h->compression != ISR_COMPRESS_ZSTD) {
		fault__set(f, "unknown compression %u", h->compression);
		return 0;
	}
	if (plain && h->stored_size != h->raw_size) {
		fault__set(f, "uncompressed, but stored size %u differs from raw size %u",
			   h->stored_size, h->raw_size);
		return 0;
	}
	err = buf__reserve(&rd->stored, &rd->stored_cap, h->stored_size);
	if (err)
		return err;
	src = rd->stored;
	n = reader__read(rd, src, h->stored_size);
	if (n < 0)
		return (int)n;
	if ((size_t)n < h->stored_size) {
		fault__set(f, "payload incomplete: file ends after %zd of %u bytes", n, h->stored_size);
		return 0;
	}
	crc = (__u32)crc32(0L, src, h->stored_size);
	if (crc != h->payload_crc32) {
		fault__set(f, "payload CRC mismatch (header 0x%08x, data 0x%08x)", h->payload_crc32, crc);
		return 0;
	}
	if (!decode || plain) {
		*out = src;
		return 1;
	}
	err = buf__reserve(&rd->raw, &rd->raw_cap, h->raw_size);
	if (err)
		return err;
	dst = rd->raw;
	r = ZSTD_decompressDCtx(rd->dctx, dst, h->raw_size, src, h->stored_size);
	if (ZSTD_isError(r)) {
		fault__set(f, "zstd decompression failed: %s", ZSTD_getErrorName(r));
		return 0;
	}
	if (r != h->raw_size) {
		fault__set(f, "decompressed to %zu bytes, header says %u", r, h->raw_size);
		return 0;
	}
	*out = dst;
	return 1;
}

static int reader__note_section(struct reader *rd, __u64 offset, const struct isr_chunk_header *h)
{
	if (rd->section_count == rd->section_cap) {
		size_t ncap = rd->section_cap ? rd->section_cap * 2 : 64;
		struct isr_section *ns = realloc(rd->sections, ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		rd->sections = ns;
		rd->section_cap = ncap;
	}
	memset(&rd->sections[rd->section_count], 0, sizeof(rd->sections[0]));
	rd->sections[rd->section_count].offset = offset;
	rd->sections[rd->section_count].kind = h->kind;
	rd->sections[rd->section_count].record_count = h->record_count;
	rd->section_count++;
	return 0;
}

/* The apply functions take a verified, decoded payload and return 1 when it
 * was applied, 0 with f set when its contents are malformed (nothing
 * applied), -errno on failure. */

/* An EVENTS chunk's events are checked and left for the caller. */
static int reader__apply_events(struct reader *rd, const struct isr_chunk_header *h,
				const unsigned char *p, struct chunk_fault *f)
{
	__u64 max_ts = rd->last_event_ns;
	long unknown = events__check(p, h->raw_size, h->record_count, &max_ts, f);

	if (unknown < 0)
		return 0;
	rd->events += h->record_count;
	rd->rec->unknown_events += (size_t)unknown;
	rd->last_event_ns = max_ts;
	rd->chunk_events = p;
	rd->chunk_event_count = h->record_count;
	rd->chunk_event_len = h->raw_size;
	return 1;
}

static int reader__apply_host(struct reader *rd, const struct isr_chunk_header *h,
			      const unsigned char *p, struct chunk_fault *f)
{
	int err;

	if (props__check(h->kind, p, h->raw_size, h->record_count, f))
		return 0;
	err = host__apply(&rd->rec->host, p, h->raw_size, &rd->rec->cut.strings);
	return err ? err : 1;
}

static int reader__apply_process(struct reader *rd, const struct isr_chunk_header *h,
				 const unsigned char *p, struct chunk_fault *f)
{
	struct recording *rec = rd->rec;
	struct rec_process proc;
	int err;

	if (props__check(h->kind, p, h->raw_size, h->record_count, f))
		return 0;
	if (!props__has_key(p, h->raw_size, ISR_PROP_PROC_PID)) {
		fault__set(f, "PROCESS chunk without a PID property");
		return 0;
	}
	if (rec->process_count == REC_MAX_PROCESSES) {
		rec->cut.processes++;
		return 1;
	}
	memset(&proc, 0, sizeof(proc));
	err = process__apply(rd, &proc, p, h->raw_size);
	err = err ?: array__reserve(&rec->processes, &rd->processes_cap, rec->process_count + 1, sizeof(proc));
	if (err) {
		process__unkeep(rd, &proc);
		process__free_fields(&proc);
		return err;
	}
	rec->processes[rec->process_count++] = proc;
	return 1;
}

static int reader__apply_clock(struct reader *rd, const struct isr_chunk_header *h,
			       const unsigned char *p, struct chunk_fault *f)
{
	struct recording *rec = rd->rec;
	size_t n = h->record_count;

	if ((size_t)h->raw_size != n * sizeof(*rec->clock_pairs)) {
		fault__set(f, "%u bytes do not hold %u clock pairs", h->raw_size, h->record_count);
		return 0;
	}
	if (n > REC_MAX_CLOCK_PAIRS - rec->clock_pair_count) {
		rec->cut.clock_pairs += n - (REC_MAX_CLOCK_PAIRS - rec->clock_pair_count);
		n = REC_MAX_CLOCK_PAIRS - rec->clock_pair_count;
	}
	if (!n)
		return 1;
	if (array__reserve(&rec->clock_pairs, &rd->clock_pairs_cap, rec->clock_pair_count + n,
			   sizeof(*rec->clock_pairs)))
		return -ENOMEM;
	memcpy(rec->clock_pairs + rec->clock_pair_count, p, n * sizeof(*rec->clock_pairs));
	rec->clock_pair_count += n;
	return 1;
}

static int reader__apply_drops(struct reader *rd, const struct isr_chunk_header *h,
			       const unsigned char *p, struct chunk_fault *f)
{
	struct isr_drop_count d;
	__u32 i;

	if ((size_t)h->raw_size != (size_t)h->record_count * sizeof(d)) {
		fault__set(f, "%u bytes do not hold %u drop counters", h->raw_size, h->record_count);
		return 0;
	}
	/* Counters are cumulative: the latest value of each source is its total.
	 * Sources this reader does not know are ignored. */
	for (i = 0; i < h->record_count; i++) {
		memcpy(&d, p + (size_t)i * sizeof(d), sizeof(d));
		if (d.source < ISR_SRC_MAX)
			rd->rec->drops[d.source] = d.count;
	}
	return 1;
}

static int reader__apply_end(struct reader *rd, const struct isr_chunk_header *h,
			     const unsigned char *p, struct chunk_fault *f)
{
	struct isr_end end;
	size_t i;

	if (h->raw_size < sizeof(end)) {
		fault__set(f, "payload is %u bytes, less than struct isr_end", h->raw_size);
		return 0;
	}
	memcpy(&end, p, sizeof(end));
	if (end.section_count != h->record_count ||
	    (size_t)h->raw_size != sizeof(end) + (size_t)end.section_count * sizeof(struct isr_section)) {
		fault__set(f, "payload of %u bytes does not hold its %u sections", h->raw_size,
			   end.section_count);
		return 0;
	}
	if (end.section_count != rd->section_count) {
		fault__set(f, "section table lists %u chunks, the file holds %zu", end.section_count,
			   rd->section_count);
		return 0;
	}
	for (i = 0; i < rd->section_count; i++) {
		struct isr_section s;

		memcpy(&s, p + sizeof(end) + i * sizeof(s), sizeof(s));
		if (s.offset != rd->sections[i].offset || s.kind != rd->sections[i].kind ||
		    s.record_count != rd->sections[i].record_count) {
			fault__set(f, "section %zu (offset %llu, kind %u) does not match the chunk at offset %llu",
				   i, (__u64)s.offset, s.kind, (__u64)rd->sections[i].offset);
			return 0;
		}
	}
	if (end.event_count != rd->events) {
		fault__set(f, "counts %llu events, the file holds %llu",
			   (__u64)end.event_count, rd->events);
		return 0;
	}
	rd->rec->complete = true;
	rd->rec->end_mono_ns = end.end_mono_ns;
	rd->rec->stop_reason = end.stop_reason;
	return 1;
}

/* Reads the trailer after the END chunk at end_offset and makes sure nothing
 * follows it; a problem there is reported as truncation. 0 or -errno. */
static int reader__trailer(struct reader *rd, __u64 end_offset)
{
	struct isr_trailer t;
	unsigned char extra[4096];
	__u64 trailer_offset = rd->offset, extra_len = 0;
	ssize_t n = reader__read(rd, &t, sizeof(t));

	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(t)) {
		reader__truncated(rd, "trailer at offset %llu incomplete (%zd of %zu bytes); all chunks are intact",
				  trailer_offset, n, sizeof(t));
		return 0;
	}
	if (t.magic != ISR_TRAILER_MAGIC || t.end_offset != end_offset) {
		reader__truncated(rd, "trailer at offset %llu damaged (magic 0x%016llx, END offset %llu); all chunks are intact",
				  trailer_offset, (__u64)t.magic, (__u64)t.end_offset);
		return 0;
	}
	for (;;) {
		n = reader__read(rd, extra, sizeof(extra));
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		extra_len += (__u64)n;
	}
	if (extra_len)
		reader__truncated(rd, "%llu unexpected bytes after the trailer at offset %llu (file appended to or damaged); they were ignored",
				  extra_len, trailer_offset + sizeof(t));
	return 0;
}

/* Checks a chunk header read at offset off. 1 = good, 0 = bad (f set). */
static int chunk__check_header(const struct reader *rd, const struct isr_chunk_header *h,
			       struct chunk_fault *f)
{
	__u32 crc;

	if (h->magic != ISR_CHUNK_MAGIC) {
		fault__set(f, "no chunk magic (0x%08x): not a chunk boundary", h->magic);
		return 0;
	}
	crc = (__u32)crc32(0L, (const Bytef *)h, offsetof(struct isr_chunk_header, header_crc32));
	if (crc != h->header_crc32) {
		fault__set(f, "header CRC mismatch (header 0x%08x, data 0x%08x)", h->header_crc32, crc);
		return 0;
	}
	if (h->seq != rd->seen_chunks) {
		fault__set(f, "sequence number %llu, expected %u (chunk missing or repeated)",
			   (__u64)h->seq, rd->seen_chunks);
		return 0;
	}
	if (h->stored_size > ISR_CHUNK_MAX_PAYLOAD || h->raw_size > ISR_CHUNK_MAX_PAYLOAD) {
		fault__set(f, "payload of %u bytes stored, %u raw exceeds the limit of %u",
			   h->stored_size, h->raw_size, ISR_CHUNK_MAX_PAYLOAD);
		return 0;
	}
	if (h->stored_size > rd->file_size - rd->offset) {
		fault__set(f, "payload incomplete: %u bytes stored, only %llu bytes left in the file",
			   h->stored_size, rd->file_size - rd->offset);
		return 0;
	}
	return 1;
}

static bool chunk__kind_known(__u16 kind)
{
	return kind >= ISR_CHUNK_HOST && kind <= ISR_CHUNK_END;
}

/*
 * Reads and applies one chunk. 1 = go on (an EVENTS chunk leaves its
 * events in rd->chunk_events), 0 = stop (after END, at end of file or at a
 * bad chunk: rec->truncated and rec->complete say which), -errno on a read
 * or memory failure.
 */
static int reader__chunk(struct reader *rd)
{
	struct recording *rec = rd->rec;
	struct isr_chunk_header h;
	struct chunk_fault f = { "" };
	const unsigned char *p = NULL;
	__u64 off = rd->offset;
	ssize_t n;
	int ret;

	rd->chunk_events = NULL;
	memset(&h, 0, sizeof(h));
	n = reader__read(rd, &h, sizeof(h));
	if (n < 0)
		return (int)n;
	if (n == 0) {
		reader__truncated(rd, "no END chunk: the recorder stopped without finishing (killed?); %u chunks read up to offset %llu",
				  rd->seen_chunks, off);
		return 0;
	}
	if ((size_t)n < sizeof(h)) {
		fault__set(&f, "header incomplete: file ends after %zd of %zu bytes", n, sizeof(h));
		goto bad;
	}
	if (!chunk__check_header(rd, &h, &f))
		goto bad;

	ret = reader__payload(rd, &h, chunk__kind_known(h.kind), &p, &f);
	if (ret <= 0)
		goto done;

	switch (h.kind) {
	case ISR_CHUNK_EVENTS:
		ret = reader__apply_events(rd, &h, p, &f);
		break;
	case ISR_CHUNK_HOST:
		ret = reader__apply_host(rd, &h, p, &f);
		break;
	case ISR_CHUNK_PROCESS:
		ret = reader__apply_process(rd, &h, p, &f);
		break;
	case ISR_CHUNK_CLOCK:
		ret = reader__apply_clock(rd, &h, p, &f);
		break;
	case ISR_CHUNK_DROPS:
		ret = reader__apply_drops(rd, &h, p, &f);
		break;
	case ISR_CHUNK_END:
		ret = reader__apply_end(rd, &h, p, &f);
		break;
	default:
		rec->unknown_chunks++;
		ret = 1;
		break;
	}
done:
	if (ret < 0)
		return ret;
	if (ret == 0)
		goto bad;
	rd->seen_chunks++;
	if (h.kind == ISR_CHUNK_END)
		return reader__trailer(rd, off);
	rd->events_chunks += h.kind == ISR_CHUNK_EVENTS;
	ret = reader__note_section(rd, off, &h);
	return ret ? ret : 1;
bad:
	reader__truncated(rd, "chunk %u (%s) at offset %llu: %s; the recording ends at the chunk before it",
			  rd->seen_chunks, chunk__kind_name(h.kind), off, f.why);
	return 0;
}

/* The CRC of a file header of version 1.1 or later: over its header_size
 * bytes (hdr), the header_crc32 field taken as 0. */
static __u32 file_header__crc(const unsigned char *hdr, size_t len)
{
	static const unsigned char zero[sizeof(__u32)];
	size_t at = offsetof(struct isr_file_header, header_crc32);
	uLong crc = crc32(0L, hdr, (uInt)at);

	crc = crc32(crc, zero, sizeof(zero));
	return (__u32)crc32(crc, hdr + at + sizeof(zero), (uInt)(len - at - sizeof(zero)));
}

/* Reads and checks the file header. 0, or -errno with err written. */
static int reader__file_header(struct reader *rd, char *err, size_t errlen)
{
	struct recording *rec = rd->rec;
	struct isr_file_header fh;
	unsigned char hdr[ISR_FILE_HEADER_MAX];
	__u32 crc;
	ssize_t n;

	/* The header of version 1.0 first: it says how long the whole is. */
	memset(&fh, 0, sizeof(fh));
	n = reader__read(rd, hdr, ISR_FILE_HEADER_V1_0_SIZE);
	if (n < 0) {
		snprintf(err, errlen, "read failed in the file header: %s", strerror((int)-n));
		return (int)n;
	}
	memcpy(&fh, hdr, (size_t)n);
	if (n < (ssize_t)sizeof(fh.magic)) {
		snprintf(err, errlen, "not an inferscope recording (%zd bytes, too short for a file header)",
			 n);
		return -EINVAL;
	}
	if (fh.magic == ISR_MAGIC_SWAPPED) {
		snprintf(err, errlen, "recorded on a machine of the other byte order (not supported)");
		return -EINVAL;
	}
	if (fh.magic != ISR_MAGIC) {
		snprintf(err, errlen, "not an inferscope recording (magic 0x%016llx, expected 0x%016llx)",
			 (__u64)fh.magic, (__u64)ISR_MAGIC);
		return -EINVAL;
	}
	if (n < ISR_FILE_HEADER_V1_0_SIZE) {
		snprintf(err, errlen, "file header damaged: the file ends after %zd of its %u bytes",
			 n, ISR_FILE_HEADER_V1_0_SIZE);
		return -EINVAL;
	}
	if (fh.version_major != ISR_VERSION_MAJOR) {
		snprintf(err, errlen, "record format version %u.%u; this reader reads version %u.x: analyze it with the inferscope-bpf that recorded it",
			 fh.version_major, fh.version_minor, ISR_VERSION_MAJOR);
		return -EINVAL;
	}
	/* From 1.1 on, the header holds its CRC. */
	if (fh.header_size < (fh.version_minor >= ISR_VERSION_MINOR_HEADER_CRC ? sizeof(fh)
									      : ISR_FILE_HEADER_V1_0_SIZE) ||
	    fh.header_size > ISR_FILE_HEADER_MAX) {
		snprintf(err, errlen, "file header damaged: header_size %u, expected %zu to %u for version %u.%u",
			 fh.header_size,
			 fh.version_minor >= ISR_VERSION_MINOR_HEADER_CRC ? sizeof(fh) : ISR_FILE_HEADER_V1_0_SIZE,
			 ISR_FILE_HEADER_MAX, fh.version_major, fh.version_minor);
		return -EINVAL;
	}
	/* The CRC, and fields a later minor version appended to the header. */
	n = reader__read(rd, hdr + ISR_FILE_HEADER_V1_0_SIZE, fh.header_size - ISR_FILE_HEADER_V1_0_SIZE);
	if (n < 0) {
		snprintf(err, errlen, "read failed in the file header: %s", strerror((int)-n));
		return (int)n;
	}
	if ((size_t)n < fh.header_size - ISR_FILE_HEADER_V1_0_SIZE) {
		snprintf(err, errlen, "file header damaged: the file ends after %llu of its %u bytes",
			 rd->offset, fh.header_size);
		return -EINVAL;
	}
	rec->version_major = fh.version_major;
	rec->version_minor = fh.version_minor;
	if (fh.version_minor >= ISR_VERSION_MINOR_HEADER_CRC) {
		memcpy(&fh, hdr, sizeof(fh));
		crc = file_header__crc(hdr, fh.header_size);
		/* The times are what a damaged header would silently get wrong
		 * (the start time shown); the chunks have CRCs of their own. */
		if (crc != fh.header_crc32) {
			rec->header_damaged = true;
			return 0;
		}
	}
	rec->created_real_ns = fh.created_real_ns;
	rec->created_mono_ns = fh.created_mono_ns;
	return 0;
}

int rec_file__open(const char *path, struct rec_file **out, char *err, size_t errlen)
{
	struct rec_file *f;
	struct reader *rd;
	struct stat st;
	int ret;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory before reading");
		return -ENOMEM;
	}
	rd = &f->rd;
	rd->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (rd->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "open failed: %s", strerror(-ret));
		free(f);
		return ret;
	}
	if (fstat(rd->fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "fstat failed: %s", strerror(-ret));
		goto fail;
	}
	rd->file_size = S_ISREG(st.st_mode) ? (__u64)st.st_size : UINT64_MAX;
	rd->rec = calloc(1, sizeof(*rd->rec));
	rd->dctx = ZSTD_createDCtx();
	if (!rd->rec || !rd->dctx) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory before reading");
		goto fail;
	}
	ret = reader__file_header(rd, err, errlen);
	if (ret)
		goto fail;
	*out = f;
	return 0;
fail:
	rec_file__close(f);
	return ret;
}

/* The first walk is over: what it could not tell along the way. */
static void rec_file__walked(struct rec_file *f)
{
	struct reader *rd = &f->rd;
	struct recording *rec = rd->rec;

	f->walked = true;
	f->next_section = rd->section_count;	/* until rewound */
	rec->chunk_count = rd->seen_chunks;
	if (!rec->complete) {
		rec->stop_reason = 0;
		rec->end_mono_ns = rd->last_event_ns;
		if (!rec->end_mono_ns)
			rec->end_mono_ns = rec->host.start_mono_ns ? rec->host.start_mono_ns
								   : rec->created_mono_ns;
	}
}

/* Later walks: the next EVENTS chunk the first walk accepted, read and
 * checked again. 1, 0 at the end, or -errno with err written. */
static int rec_file__reread(struct rec_file *f, struct rec_events *ev, char *err, size_t errlen)
{
	struct reader *rd = &f->rd;
	const struct isr_section *s = NULL;
	struct isr_chunk_header h;
	struct chunk_fault fault = { "" };
	const unsigned char *p;
	__u64 max_ts = 0;
	ssize_t n;
	int ret;

	while (f->next_section < rd->section_count && !s) {
		if (rd->sections[f->next_section].kind == ISR_CHUNK_EVENTS)
			s = &rd->sections[f->next_section];
		else
			f->next_section++;
	}
	if (!s)
		return 0;
	if (lseek(rd->fd, (off_t)s->offset, SEEK_SET) < 0) {
		ret = -errno;
		snprintf(err, errlen, "seek to offset %llu failed: %s", (__u64)s->offset, strerror(-ret));
		return ret;
	}
	rd->offset = s->offset;
	rd->seen_chunks = (__u32)f->next_section;
	memset(&h, 0, sizeof(h));
	n = reader__read(rd, &h, sizeof(h));
	if (n < 0) {
		ret = (int)n;
		goto read_failed;
	}
	if ((size_t)n < sizeof(h)) {
		fault__set(&fault, "header incomplete: file ends after %zd of %zu bytes", n, sizeof(h));
		goto changed;
	}
	if (!chunk__check_header(rd, &h, &fault))
		goto changed;
	if (h.kind != s->kind || h.record_count != s->record_count) {
		fault__set(&fault, "kind %u with %u records, was kind %u with %u", h.kind, h.record_count, s->kind,
			   s->record_count);
		goto changed;
	}
	ret = reader__payload(rd, &h, true, &p, &fault);
	if (ret < 0)
		goto read_failed;
	if (!ret || events__check(p, h.raw_size, h.record_count, &max_ts, &fault) < 0)
		goto changed;
	ev->data = p;
	ev->len = h.raw_size;
	ev->count = h.record_count;
	ev->index = f->next_events++;
	f->next_section++;
	return 1;
read_failed:
	snprintf(err, errlen, "read failed at offset %llu: %s", rd->offset, strerror(-ret));
	return ret;
changed:
	snprintf(err, errlen, "chunk %zu (EVENTS) at offset %llu no longer reads as it did: %s (the file changed while it was read)",
		 f->next_section, (__u64)s->offset, fault.why);
	return -EIO;
}

int rec_file__next_events(struct rec_file *f, struct rec_events *ev, char *err, size_t errlen)
{
	struct reader *rd = &f->rd;
	int ret;

	if (f->walked)
		return rec_file__reread(f, ev, err, errlen);
	do
		ret = reader__chunk(rd);
	while (ret > 0 && !rd->chunk_events);
	if (ret > 0) {
		ev->data = rd->chunk_events;
		ev->len = rd->chunk_event_len;
		ev->count = rd->chunk_event_count;
		ev->index = rd->events_chunks - 1;
		return 1;
	}
	if (ret == -ENOMEM) {
		snprintf(err, errlen, "out of memory after %llu events at offset %llu", rd->events, rd->offset);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "read failed at offset %llu: %s", rd->offset, strerror(-ret));
		return ret;
	}
	rec_file__walked(f);
	return 0;
}

int rec_file__rewind(struct rec_file *f, char *err, size_t errlen)
{
	if (!f->walked) {
		snprintf(err, errlen, "the events can be walked again only after the first walk");
		return -EINVAL;
	}
	if (f->rd.file_size == UINT64_MAX) {
		snprintf(err, errlen, "not a regular file: it cannot be read a second time");
		return -ESPIPE;
	}
	f->next_section = 0;
	f->next_events = 0;
	return 0;
}

const struct recording *rec_file__recording(const struct rec_file *f)
{
	return f->rd.rec;
}

size_t rec_file__events_chunks(const struct rec_file *f)
{
	return f->rd.events_chunks;
}

void rec_file__close(struct rec_file *f)
{
	if (!f)
		return;
	recording__free(f->rd.rec);
	ZSTD_freeDCtx(f->rd.dctx);
	free(f->rd.stored);
	free(f->rd.raw);
	free(f->rd.sections);
	if (f->rd.fd >= 0)
		close(f->rd.fd);
	free(f);
}

/* Builds rec->events from the event buffer, which the walk has validated. */
static int recording__index_events(struct recording *rec)
{
	size_t off = 0, i;
	unsigned char *shrunk;

	if (!rec->event_count)
		return 0;
	/* Give back the unused tail of the doubling growth. */
	shrunk = realloc(rec->event_data, rec->event_data_len);
	if (shrunk)
		rec->event_data = shrunk;
	rec->events = malloc(rec->event_count * sizeof(*rec->events));
	if (!rec->events)
		return -ENOMEM;
	for (i = 0; i < rec->event_count; i++) {
		const struct isr_ev_hdr *h = (const struct isr_ev_hdr *)(rec->event_data + off);

		rec->events[i] = h;
		off += h->size;
	}
	return 0;
}

int recording__load(const char *path, struct recording **out, char *err, size_t errlen)
{
	struct recording *rec;
	struct rec_events ev;
	struct rec_file *f;
	size_t cap = 0;
	int ret;

	*out = NULL;
	ret = rec_file__open(path, &f, err, errlen);
	if (ret)
		return ret;
	rec = f->rd.rec;
	while ((ret = rec_file__next_events(f, &ev, err, errlen)) > 0) {
		if (!ev.len)
			continue;
		ret = buf__reserve(&rec->event_data, &cap, rec->event_data_len + ev.len);
		if (ret) {
			snprintf(err, errlen, "out of memory after %zu events (%zu bytes)", rec->event_count,
				 rec->event_data_len);
			break;
		}
		memcpy(rec->event_data + rec->event_data_len, ev.data, ev.len);
		rec->event_data_len += ev.len;
		rec->event_count += ev.count;
	}
	if (!ret && recording__index_events(rec)) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory after %zu events (%zu bytes)", rec->event_count,
			 rec->event_data_len);
	}
	if (!ret) {
		*out = rec;
		f->rd.rec = NULL;
	}
	rec_file__close(f);
	return ret;
}

void recording__free(struct recording *r)
{
	size_t i;

	if (!r)
		return;
	free(r->host.hostname);
	free(r->host.kernel);
	free(r->host.kernel_version);
	free(r->host.machine);
	free(r->host.boot_id);
	free(r->host.tool_version);
	free(r->host.command);
	free(r->host.trigger);
	for (i = 0; i < r->host.prop_count; i++)
		free(r->host.props[i].value);
	free(r->host.props);
	for (i = 0; i < r->process_count; i++)
		process__free_fields(&r->processes[i]);
	free(r->processes);
	free(r->clock_pairs);
	free(r->event_data);
	free(r->events);
	free(r);
}

struct sort_key {
	__u64 ts;
	const struct isr_ev_hdr *ev;
};

/* Events point into one buffer in file order, so comparing the pointers
 * breaks timestamp ties by file order: the sort is stable. */
static int sort_key__cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ev != y->ev)
		return x->ev < y->ev ? -1 : 1;
	return 0;
}

static int event_ptr__cmp(const void *a, const void *b)
{
	const struct isr_ev_hdr *const *x = a, *const *y = b;
	struct sort_key kx = { (*x)->ts_ns, *x }, ky = { (*y)->ts_ns, *y };

	return sort_key__cmp(&kx, &ky);
}

void recording__sort_events(struct recording *r)
{
	struct sort_key *keys;
	size_t i, n = r->event_count;

	for (i = 1; i < n; i++)
		if (event_ptr__cmp(&r->events[i - 1], &r->events[i]) > 0)
			break;
	if (i >= n)
		return;

	/* Sorting keys side by side avoids a cache miss per comparison; when
	 * there is no memory for them, sort the pointers themselves. */
	keys = malloc(n * sizeof(*keys));
	if (!keys) {
		qsort(r->events, n, sizeof(*r->events), event_ptr__cmp);
		return;
	}
	for (i = 0; i < n; i++) {
		keys[i].ts = r->events[i]->ts_ns;
		keys[i].ev = r->events[i];
	}
	qsort(keys, n, sizeof(*keys), sort_key__cmp);
	for (i = 0; i < n; i++)
		r->events[i] = keys[i].ev;
	free(keys);
}
