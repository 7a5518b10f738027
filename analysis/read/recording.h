/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record-file reader. Pure: reads the file and nothing else.
 *
 * A recording is read in walks over its chunks, one decompressed chunk in
 * memory at a time (rec_file): the first walk checks every chunk and reads
 * the metadata (host, processes, clock pairs, drops, END) while it hands
 * over the events chunk by chunk; later walks hand over the same events
 * again, from the chunks the first walk accepted. recording__load() is the
 * first walk keeping every event in memory (tests and tools).
 *
 * A file cut short (no END chunk, or a damaged last chunk) reads up to its
 * last complete chunk with `truncated` set and `truncation` saying where and
 * why; a file that is not a recording, has an unsupported version or a
 * damaged file header is rejected with a message. What a hostile or damaged
 * file could make the reader keep is bounded (REC_MAX_*): beyond the bounds
 * it keeps the first part and counts the rest in `cut`.
 */
#ifndef INFERSCOPE_RECORDING_H
#define INFERSCOPE_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "registry.h"

/* The most the reader keeps of a recording's metadata. The recorder stays
 * far below them; a file beyond them is damaged or made to exhaust memory. */
#define REC_MAX_PROCESSES	16384		/* PROCESS chunks */
#define REC_MAX_THREADS		32768		/* listed threads, all processes together */
#define REC_MAX_STRING		(64U << 10)	/* bytes of one string property (command line, exe, ...) */
#define REC_MAX_MAPS		(4U << 20)	/* bytes of one process's memory map */
#define REC_MAX_MAPS_TOTAL	(64U << 20)	/* bytes of the memory maps of all processes */
#define REC_MAX_CLOCK_PAIRS	(1U << 20)	/* pairs of the CLOCK chunks */

struct rec_thread {
	__u32 tid;
	char comm[16];
};

struct rec_process {
	__u32 pid;
	__u32 ppid;
	__u32 origin;		/* ISR_ORIGIN_* */
	__u64 seen_mono_ns;
	char *comm;
	char *cmdline;		/* argv joined with spaces, for display */
	char *exe;
	char *maps;		/* text of /proc/PID/maps */
	struct rec_thread *threads;
	size_t thread_count;
};

/* A HOST property this reader does not decode itself, as it was written:
 * what later readers added (the GPUs and NUMA nodes: analysis/read/host_topo.h). */
struct rec_prop {
	__u32 key;
	__u32 len;
	unsigned char *value;
};

struct rec_host {
	char *hostname, *kernel, *kernel_version, *machine, *boot_id, *tool_version;
	char *command;		/* recorder argv joined with spaces */
	char *trigger;		/* a flight-recorder window: what made the recorder write it; NULL otherwise */
	__u32 ncpus;
	__u64 start_mono_ns;
	__u64 duration_limit_ns;
	struct rec_prop *props;	/* the other properties, in file order */
	size_t prop_count;
};

/* What the reader left out to stay within its bounds (REC_MAX_*). */
struct rec_cuts {
	size_t processes;	/* PROCESS chunks beyond REC_MAX_PROCESSES, ignored */
	size_t threads;		/* listed threads beyond REC_MAX_THREADS, ignored */
	size_t strings;		/* string properties cut short (REC_MAX_STRING, REC_MAX_MAPS, REC_MAX_MAPS_TOTAL) */
	size_t clock_pairs;	/* CLOCK pairs beyond REC_MAX_CLOCK_PAIRS, ignored */
};

struct recording {
	__u16 version_major, version_minor;
	__u64 created_real_ns, created_mono_ns;	/* 0 when the header is damaged */
	bool header_damaged;	/* its CRC did not match: the creation times are not used */
	struct rec_host host;

	struct rec_process *processes;
	size_t process_count;

	struct isr_clock_pair *clock_pairs;
	size_t clock_pair_count;

	/* Events in file order, in memory only after recording__load (a
	 * rec_file hands them over chunk by chunk instead: NULL and 0 there);
	 * events[i] points into event_data. */
	unsigned char *event_data;
	size_t event_data_len;
	const struct isr_ev_hdr **events;
	size_t event_count;

	__u64 drops[ISR_SRC_MAX];	/* totals from the last DROPS chunk */

	bool complete;		/* END chunk read */
	__u64 end_mono_ns;	/* END time, or the last event's time when truncated */
	__u32 stop_reason;	/* ISR_STOP_*, 0 when truncated */
	bool truncated;
	char truncation[256];	/* where and why reading stopped early */
	size_t chunk_count;
	size_t unknown_chunks;	/* chunks of kinds this reader does not know */
	size_t unknown_events;	/* events of types this reader does not know */
	struct rec_cuts cut;
};

/* Loads path, every event in memory. On error returns -errno (-EINVAL for
 * a malformed file) and writes a one-line message to err. */
int recording__load(const char *path, struct recording **out, char *err, size_t errlen);
void recording__free(struct recording *r);

/* Sorts rec->events by timestamp (stable: file order breaks ties). */
void recording__sort_events(struct recording *r);

/* ---- walks over a file ----------------------------------------------------------- */

struct rec_file;

/* The events of one EVENTS chunk, checked: count events back to back in
 * data[0 .. len), each 8-aligned, hdr.size within bounds and at least its
 * type's struct. Valid until the next call on the rec_file. */
struct rec_events {
	const unsigned char *data;
	size_t len;
	size_t count;
	size_t index;		/* of this chunk among the EVENTS chunks, from 0 */
};

/* Opens path and reads its file header. 0, or -errno with err written. */
int rec_file__open(const char *path, struct rec_file **out, char *err, size_t errlen);
/* The next EVENTS chunk: 1 with *ev filled, 0 at the end of the walk, or
 * -errno with err written. The first walk reads and checks every chunk,
 * applying the metadata ones as it goes; it ends at END, at the end of the
 * file or at the first bad chunk (`truncated` says which). Later walks
 * (rec_file__rewind) hand over the EVENTS chunks the first one accepted,
 * checked again: a chunk that no longer reads the same (the file changed)
 * is an error, -EIO. */
int rec_file__next_events(struct rec_file *f, struct rec_events *ev, char *err, size_t errlen);
/* Starts another walk over the events, once the first has ended. 0, or
 * -errno with err written (-ESPIPE: the file cannot be read again, a pipe). */
int rec_file__rewind(struct rec_file *f, char *err, size_t errlen);
/* The recording's metadata (no events in memory), complete once the first
 * walk has ended. Owned by f. */
const struct recording *rec_file__recording(const struct rec_file *f);
/* EVENTS chunks the first walk accepted. */
size_t rec_file__events_chunks(const struct rec_file *f);
void rec_file__close(struct rec_file *f);

#endif
