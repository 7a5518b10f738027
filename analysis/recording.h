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
#include "isr_format.h"
#include "../bpf/events.h"
#include "../bpf/cuda_funcs.h"

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

struct rec_host {
	char *hostname, *kernel, *kernel_version, *machine, *boot_id, *tool_version;
	char *command;		/* recorder argv joined with spaces */
	__u32 ncpus;
	__u64 start_mono_ns;
	__u64 duration_limit_ns;
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

const char *isr_event_name(__u16 type);	/* "sched_switch", ...; NULL if unknown */
/* Smallest valid size of a known event type; sizeof(struct isr_ev_hdr) for
 * an unknown one. */
size_t isr_event_min_size(__u16 type);
const char *isr_source_name(__u32 src);	/* "sched", ...; NULL if unknown */
const char *isr_stop_reason_name(__u32 reason);

/* A probed CUDA function, from the table in bpf/cuda_funcs.h. */
struct isr_cuda_fn {
	const char *symbol;	/* exact ELF symbol: "cuMemAlloc_v2" */
	__u16 family;		/* ISR_CUDA_FAM_* */
	__u16 aux;
	__u16 flags;		/* ISR_CUDA_ASYNC | ISR_CUDA_PTDS | ISR_CUDA_RUNTIME */
};

/* The function with id func (ISR_CUDA_FN_*); NULL for an id this version
 * does not know. */
const struct isr_cuda_fn *isr_cuda_fn(__u16 func);

#endif
