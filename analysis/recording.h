/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record-file reader: loads a whole recording into memory. Pure: reads the
 * file and nothing else. A file cut short (no END chunk, or a damaged last
 * chunk) loads up to its last complete chunk with `truncated` set and
 * `truncation` saying where and why; a file that is not a recording, has an
 * unsupported version or a damaged file header is rejected with a message.
 */
#ifndef INFERSCOPE_RECORDING_H
#define INFERSCOPE_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "registry.h"

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
 * what later readers added (the GPUs and NUMA nodes: analysis/host_topo.h). */
struct rec_prop {
	__u32 key;
	__u32 len;
	unsigned char *value;
};

struct rec_host {
	char *hostname, *kernel, *kernel_version, *machine, *boot_id, *tool_version;
	char *command;		/* recorder argv joined with spaces */
	__u32 ncpus;
	__u64 start_mono_ns;
	__u64 duration_limit_ns;
	struct rec_prop *props;	/* the other properties, in file order */
	size_t prop_count;
};

struct recording {
	__u16 version_major, version_minor;
	__u64 created_real_ns, created_mono_ns;
	struct rec_host host;

	struct rec_process *processes;
	size_t process_count;

	struct isr_clock_pair *clock_pairs;
	size_t clock_pair_count;

	/* Events in file order; event_ptrs[i] points into event_data. */
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
};

/* Loads path. On error returns -errno (-EINVAL for a malformed file) and
 * writes a one-line message to err. */
int recording__load(const char *path, struct recording **out, char *err, size_t errlen);
void recording__free(struct recording *r);

/* Sorts rec->events by timestamp (stable: file order breaks ties). */
void recording__sort_events(struct recording *r);

#endif
