/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record-file writer. Promises: every chunk is written whole with one
 * write sequence and its own CRC, so whatever happens to the process, the
 * file reads back up to the last chunk that returned success. Events are
 * buffered and written as zstd-compressed EVENTS chunks when the buffer is
 * full or on rec_writer__flush(). Functions return 0 or -errno; after a
 * write error (-ENOSPC, -EIO, ...) the writer refuses further appends with
 * the same error, and rec_writer__events_lost() counts what was refused.
 */
#ifndef INFERSCOPE_REC_WRITER_H
#define INFERSCOPE_REC_WRITER_H

#include <stddef.h>
#include <linux/types.h>
#include "out_file.h"

struct rec_writer;

struct rec_writer_opts {
	size_t chunk_bytes;	/* raw bytes per EVENTS chunk; 0 = 1 MiB */
	int zstd_level;		/* 0 = store uncompressed; default used by the CLI: 1 */
	struct out_file_share share;	/* who may read it besides its owner; zero: nobody */
	bool unnamed;		/* it takes its name at rec_writer__name(), not at once */
	/* Ring mode (rec_writer__open_ring) only: */
	__u64 ring_window_ns;	/* events kept for this long after they happened */
	size_t ring_max_bytes;	/* and within this much memory, the oldest evicted first */
};

/* Creates path as a new file (lib/out_file.h: never through a link, never
 * into a file that was there before; mode 0600, or 0640 with a group) and
 * writes the file header. NULL + errno on error (out_file__strerror()
 * explains it). */
struct rec_writer *rec_writer__open(const char *path, const struct rec_writer_opts *opts);

/* Gives the file its name (opts.unnamed): once recording has begun, so
 * that a start that fails leaves nothing behind and replaces nothing.
 * 0 or -errno. A file that is never named is removed by rec_writer__free. */
int rec_writer__name(struct rec_writer *w);

/* Property-list chunks. A prop builder collects key/value pairs, then
 * rec_writer__write_props() writes them as one chunk of the given kind. */
struct rec_props;
struct rec_props *rec_props__new(void);
int rec_props__add(struct rec_props *p, __u32 key, const void *val, size_t len);
int rec_props__add_str(struct rec_props *p, __u32 key, const char *s);
int rec_props__add_u32(struct rec_props *p, __u32 key, __u32 v);
int rec_props__add_u64(struct rec_props *p, __u32 key, __u64 v);
void rec_props__free(struct rec_props *p);
int rec_writer__write_props(struct rec_writer *w, __u16 chunk_kind, const struct rec_props *p);

/* Copies one event (format/events.h; size = hdr.size) into the current chunk. */
int rec_writer__append_event(struct rec_writer *w, const void *event, size_t size);
/* Writes the buffered events, if any, as one chunk. */
int rec_writer__flush(struct rec_writer *w);

struct isr_clock_pair;
struct isr_drop_count;
int rec_writer__write_clock(struct rec_writer *w, const struct isr_clock_pair *pairs, size_t n);
int rec_writer__write_drops(struct rec_writer *w, const struct isr_drop_count *drops, size_t n);

/* Flushes events, writes END + trailer, fsyncs. The writer stays valid
 * for rec_writer__free(). */
int rec_writer__finish(struct rec_writer *w, __u64 end_mono_ns, __u32 stop_reason);

/*
 * Ring mode, the flight recorder: nothing is written until asked. Events
 * are buffered and sealed into compressed EVENTS chunks as in a file, but
 * kept in memory; rec_writer__ring_trim() forgets the chunks whose newest
 * event is older than the window, and the oldest beyond the memory cap.
 * PROCESS chunks are all kept; CLOCK chunks from just before the oldest
 * event on; DROPS chunks are kept as numbers; events that later events
 * refer to (kernel and GPU names, interned Python stacks and code, thread
 * names, the newest GPU clock pairs) are kept past their chunk.
 * rec_writer__write_window() writes what is held as one self-contained
 * recording and forgets the events written, so that windows never
 * overlap: the next one begins with the first event after it.
 * rec_writer__finish() and HOST chunks are refused (-EINVAL): each window
 * has its own.
 */
struct rec_writer *rec_writer__open_ring(const struct rec_writer_opts *opts);
void rec_writer__ring_trim(struct rec_writer *w, __u64 now_ns);

struct rec_ring_stats {
	size_t bytes;		/* memory the ring holds, compressed chunks and definitions */
	__u64 events;		/* events it holds */
	__u64 first_ns, last_ns;	/* the least and greatest time of a chunk held; 0 when empty */
	__u64 capped_events;	/* events evicted by the memory cap within their window */
};
void rec_writer__ring_stats(const struct rec_writer *w, struct rec_ring_stats *st);

struct rec_window {
	__u64 events;		/* events of the window (definitions kept from before not counted) */
	__u64 first_ns, last_ns;	/* its chunks' least and greatest event time */
	__u64 drops;		/* drops counted while its events were recorded */
	__u64 bytes;		/* the file's size */
	__u64 capped_events;	/* events the memory cap evicted from it */
};

/* Writes the ring as a new recording at path (lib/out_file.h; named once
 * complete): host (the HOST properties, whose start should be the
 * window's), every process, the clock pairs, the definitions the window's
 * events need, its events, the drops counted while they were recorded (the
 * latest DROPS less those before its first event), END with end_mono_ns
 * and stop_reason. 0 or -errno; on an error the ring keeps its events. */
int rec_writer__write_window(struct rec_writer *w, const char *path, const struct rec_props *host,
			     __u64 end_mono_ns, __u32 stop_reason, struct rec_window *out);

/* A file size limit (ulimit -f, systemd's LimitFSIZE=) is then a write
 * error like a full disk: write(2) fails with EFBIG instead of SIGXFSZ
 * killing the process, and the recording stops with what it wrote. For a
 * process that writes recordings; a handler, not SIG_IGN, so that a
 * command it launches gets the default back at its exec. */
void rec_writer__size_limit_is_an_error(void);

__u64 rec_writer__events_written(const struct rec_writer *w);
__u64 rec_writer__events_lost(const struct rec_writer *w);
__u64 rec_writer__bytes_written(const struct rec_writer *w);

/* Closes the file (without END if not finished). Safe on NULL. */
void rec_writer__free(struct rec_writer *w);

#endif
