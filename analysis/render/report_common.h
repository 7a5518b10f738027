/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the report writers (report_json.c, report_md.c, report_html.c)
 * share: how many rows a table shows, how values are counted and named,
 * the notes on what the reader and the analysis did not take as written.
 * The blocks of the reports for people are report_doc.h.
 */
#ifndef INFERSCOPE_REPORT_COMMON_H
#define INFERSCOPE_REPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "report_doc.h"
#include "report_field.h"

#include "report.h"

#define TOP_THREADS 30
#define IDLE_THREAD_NS 1000000ull	/* on-CPU below this: a thread that did nothing */
#define TOP_KERNELS_JSON 50
#define TOP_CUDA_ROWS 10
#define MIB (1024.0 * 1024.0)

static inline double ns_to_s(__u64 ns)
{
	return (double)ns / 1e9;
}

static inline double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Off-CPU time not spent waiting for a CPU. */
static inline __u64 blocked_ns(const struct thread_summary *t)
{
	return t->off_cpu_ns - t->runqueue_wait_ns;
}

/* CUDA and GIL events are counted by function, under the function's name. */
static inline bool counted_by_function(__u16 type)
{
	return type == ISR_EV_CUDA_CALL || type == ISR_EV_CUDA_NAME || type == ISR_EV_GIL;
}

/* GIL events by probed function (report__gil_fn_names); the generic type
 * counts the rest (an unknown kind, or a record too short to read). */
extern const char *const report__gil_fn_names[2];

static inline __u64 gil_fn_count(const struct summary *s, int i)
{
	return i == 0 ? s->gil_acquire_events : s->gil_release_events;
}

/* How a target process came to be traced: "attached", "launched", ... */
const char *report__origin_name(__u32 origin);
/* The status of a Python subject: the stacks are "sampling", the GIL
 * waits "traced". */
const char *report__py_status_name(const struct isr_ev_py_status *st);
/* A CUPTI copy kind: "HtoD", ... */
const char *report__copy_kind_name(__u32 kind);

/* Wall-clock time of the recording start as ISO-8601 UTC with microseconds,
 * from the file's realtime/monotonic pair. False when the file has none. */
bool report__start_time(const struct recording *r, const struct summary *s, char *buf, size_t len);

#define NOTE_LEN 200
#define MAX_NOTES 16
/* What the reader and the analysis did not take as written, one sentence
 * each, into notes[max]: the count. */
size_t report__notes(const struct analysis *a, char (*notes)[NOTE_LEN], size_t max);

/* A process's device and pinned host memory (struct process_summary),
 * from "device_memory_peak_bytes" to "pinned_host_live_bytes": MiB in the
 * columns. */
extern const struct report_field report__process_memory[4];

/* A thread's time on and off a CPU (struct thread_summary), from
 * "on_cpu_s" to "runqueue_wait_s". */
extern const struct report_field report__thread_cpu[3];
/* A GPU kernel's count and total time (struct gpu_kernel_stat), a GPU
 * copy kind's count, bytes and time (struct gpu_copy_stat). */
extern const struct report_field report__gpu_kernel_time[2];
extern const struct report_field report__gpu_copy_fields[3];
/* A process's GPU activity (struct gpu_process_stat), from "kernels" to
 * "unfinished_records": the "GPU activity (CUPTI)" table's columns after
 * pid, up to its clock fit. */
extern const struct report_field report__gpu_process_counts[21];
/* A GPU's busy time for a process (struct gpu_device_stat), the "GPU busy
 * time" table: busy estimated over the span and idle, ≈ where estimated. */
extern const struct report_field report__gpu_devices[8];
/* The ranks table (ranks.h, struct rank_row): its arrivals, from
 * "collectives" to "others_wait_s", and what its GPU and thread did, from
 * "sync_stall_s" to "nccl_not_joined". */
extern const struct report_field report__rank_arrivals[9];
extern const struct report_field report__rank_gpu[4];

/* A thread's CUDA calls and launches (the columns of "Synchronization by
 * thread") and its time in synchronization, with its share of the
 * thread's window; its time waiting for the GIL, holding it and its
 * acquisitions, then its time blocked on it (the "Python GIL" table shows
 * these first). */
extern const struct report_field report__thread_cuda[4];
extern const struct report_field report__thread_sync[2];
extern const struct report_field report__thread_gil_wait[3];
extern const struct report_field report__thread_gil_blocked[2];

/* A CUDA function (struct cuda_fn_summary), the JSON's "calls" entry: its
 * calls ("Functions by calls"), then its time ("Functions by time"). */
extern const struct report_field report__cuda_fn_calls[4];
extern const struct report_field report__cuda_fn_time[4];
/* A kernel handle (struct kernel_summary): its pid and handle, its name,
 * its launches ("Kernels by launches" shows the name first). */
extern const struct report_field report__kernel_id[2];
extern const struct report_field report__kernel_name[1];
extern const struct report_field report__kernel_launches[3];

/* A sampled Python function's samples and their shares (struct
 * py_func_stat; ctx: its struct py_thread_stats). */
extern const struct report_field report__py_func_samples[4];
/* Python call sites (struct py_site) of CUDA synchronization time, and of
 * sampled launches. */
extern const struct report_field report__py_sync_sites[3];
extern const struct report_field report__py_launch_sites[2];

#endif
