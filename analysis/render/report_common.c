// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the report writers share (report_common.h): names of the
 * recording's values, the start time, the notes on what was not taken as
 * written, the headline of a set, and the fields of the tables both the
 * JSON and the reports for people show (report_field.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_common.h"

const char *report__origin_name(__u32 origin)
{
	switch (origin) {
	case ISR_ORIGIN_ATTACHED:
		return "attached";
	case ISR_ORIGIN_LAUNCHED:
		return "launched";
	case ISR_ORIGIN_CHILD:
		return "child";
	case ISR_ORIGIN_EXEC:
		return "exec";
	case ISR_ORIGIN_DESCENDANT:
		return "descendant";
	default:
		return "unknown";
	}
}

bool report__start_time(const struct recording *r, const struct summary *s, char *buf, size_t len)
{
	__s64 real_ns, delta;
	time_t secs;
	struct tm tm;
	size_t n;

	if (!r->created_real_ns)
		return false;
	/* the file's values are untrusted: a sum that would overflow is no
	 * time at all */
	if (__builtin_sub_overflow((__s64)s->start_ns, (__s64)r->created_mono_ns, &delta) ||
	    __builtin_add_overflow((__s64)r->created_real_ns, delta, &real_ns) || real_ns < 0)
		return false;
	secs = (time_t)(real_ns / 1000000000);
	if (!gmtime_r(&secs, &tm))
		return false;
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!n)
		return false;
	return snprintf(buf + n, len - n, ".%06" PRId64 "Z", (int64_t)(real_ns % 1000000000 / 1000)) <
	       (int)(len - n);
}

size_t report__notes(const struct analysis *a, char (*notes)[NOTE_LEN], size_t max)
{
	const struct steps_result *st = a->ex && a->ex->steps ? steps__result(a->ex->steps) : NULL;
	const struct recording *r = a->r;
	size_t n = 0;

#define NOTE(cond, ...)										do {												if ((cond) && n < max)										snprintf(notes[n++], NOTE_LEN, __VA_ARGS__);				} while (0)
	NOTE(r->header_damaged, "the file header is damaged (CRC mismatch): its creation time is not used, "
	     "so the start time is unknown");
	NOTE(r->cut.processes, "%zu PROCESS chunks beyond the reader's bound of %u processes were left out",
	     r->cut.processes, REC_MAX_PROCESSES);
	NOTE(r->cut.threads, "%zu listed threads beyond the reader's bound of %u were left out", r->cut.threads,
	     REC_MAX_THREADS);
	NOTE(r->cut.strings, "%zu process or host properties (command lines, memory maps) were cut to the "
	     "reader's bounds", r->cut.strings);
	NOTE(r->cut.clock_pairs, "%zu realtime clock pairs beyond the reader's bound of %u were left out",
	     r->cut.clock_pairs, REC_MAX_CLOCK_PAIRS);
	NOTE(a->gpu_clock_pairs_cut, "%llu GPU clock pairs beyond %u were left out of the clock fits",
	     (unsigned long long)a->gpu_clock_pairs_cut, PASS_MAX_CLOCK_PAIRS);
	NOTE(a->thread_events_cut, "%llu events that name threads beyond the first %u were left out",
	     (unsigned long long)a->thread_events_cut, PASS_MAX_THREADS);
	NOTE(a->py && a->py->statuses_cut, "%llu Python stack statuses beyond %u were left out",
	     (unsigned long long)(a->py ? a->py->statuses_cut : 0), PY_MAX_STATUSES);
	NOTE(a->sum->kernel_launches_other || a->sum->kernel_names_other, "over %u distinct CUDA kernels: %llu "
	     "launches of those past them are counted as " SUMMARY_OTHER_KERNELS ", %llu names not kept",
	     SUMMARY_MAX_KERNELS, (unsigned long long)a->sum->kernel_launches_other,
	     (unsigned long long)a->sum->kernel_names_other);
	NOTE(a->sum->gpu_kernels_other || a->sum->gpu_names_other, "over %u distinct GPU kernel names: %llu "
	     "kernels of those past them are counted as " SUMMARY_OTHER_KERNELS ", %llu names not kept",
	     SUMMARY_MAX_KERNELS, (unsigned long long)a->sum->gpu_kernels_other,
	     (unsigned long long)a->sum->gpu_names_other);
	NOTE(a->py && (a->py->codes_other || a->py->stacks_other), "over %u Python code objects or %u stacks: "
	     "%llu code objects (shown by address) and %llu stacks (samples counted without one) not kept",
	     PY_MAX_CODES, PY_MAX_STACKS, (unsigned long long)(a->py ? a->py->codes_other : 0),
	     (unsigned long long)(a->py ? a->py->stacks_other : 0));
	NOTE(st && st->names_other, "over %u distinct NVTX range or mark names: %llu ranges and marks of those past "
	     "them are counted as " STEPS_OTHER_RANGES " or " STEPS_OTHER_MARKS, STEPS_MAX_NAMES,
	     (unsigned long long)(st ? st->names_other : 0));
	NOTE(st && st->ranges_dropped, "%llu NVTX ranges opened past %u open at once were not counted",
	     (unsigned long long)(st ? st->ranges_dropped : 0), STEPS_MAX_OPEN);
	NOTE(a->out_of_order, "%llu events came out of order, further from their place in the file than the "
	     "analysis holds events to sort them: each was analyzed at the time of the event before it",
	     (unsigned long long)a->out_of_order);
#undef NOTE
	return n;
}


const char *const report__gil_fn_names[2] = { "PyEval_RestoreThread", "PyEval_SaveThread" };

const char *report__py_status_name(const struct isr_ev_py_status *st)
{
	switch (st->status) {
	case ISR_PY_STATUS_SAMPLING:		return st->subject == ISR_PY_SUBJECT_GIL ? "traced" : "sampling";
	case ISR_PY_STATUS_LAYOUT_MISMATCH:	return "layout_mismatch";
	case ISR_PY_STATUS_UNSUPPORTED:		return "unsupported";
	default:				return "unknown";
	}
}

const char *report__copy_kind_name(__u32 kind)
{
	switch (kind) {	/* CUpti_ActivityMemcpyKind */
	case 1:		return "HtoD";
	case 2:		return "DtoH";
	case 3:		return "HtoA";
	case 4:		return "AtoH";
	case 5:		return "AtoA";
	case 6:		return "AtoD";
	case 7:		return "DtoA";
	case 8:		return "DtoD";
	case 9:		return "HtoH";
	case 10:	return "PtoP";
	default:	return "unknown";
	}
}

/* "5 findings, first "GPU drained by synchronizations" (sync_stall, 0.325 s)" */
static void set_findings_phrase(FILE *f, const struct findings *fs)
{
	const struct finding *first = &fs->v[0];

	fprintf(f, "%zu finding%s, first \"%s\" (%s", fs->n, fs->n == 1 ? "" : "s", explain__rule_title(first->rule),
		first->rule);
	if (first->cost_s > 0)
		fprintf(f, ", %.3f s", first->cost_s);
	fprintf(f, ")");
}

char *report__set_headline(const struct analysis_set *set)
{
	char *out = NULL;
	size_t len = 0, with = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		with += set->a[i]->ex->findings.n > 0;
	if (set->findings.n) {
		fprintf(f, "Across the recordings: ");
		set_findings_phrase(f, &set->findings);
		fprintf(f, ". ");
	}
	if (!with) {
		fprintf(f, "No finding in any of the %zu recordings%s.", set->n, set->findings.n ? "" : ", nor across them");
	} else {
		fprintf(f, "Findings in %zu of %zu recordings: ", with, set->n);
		for (size_t i = 0; i < set->n; i++) {
			const struct findings *fs = &set->a[i]->ex->findings;

			fprintf(f, "%s%s has ", i ? "; " : "", set->names[i]);
			if (fs->n)
				set_findings_phrase(f, fs);
			else
				fprintf(f, "none");
		}
		fprintf(f, ".");
	}
	if (fclose(f) || !out) {
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

const struct report_field report__process_memory[4] = {
	RF_SCALED(struct process_summary, device_peak_bytes, "device_memory_peak_bytes", "device peak MiB", "%.1f",
		  1024.0 * 1024),
	RF_SCALED(struct process_summary, device_live_bytes, "device_memory_live_bytes", "device live MiB", "%.1f",
		  1024.0 * 1024),
	RF_SCALED(struct process_summary, pinned_host_peak_bytes, "pinned_host_peak_bytes", "pinned host peak MiB",
		  "%.1f", 1024.0 * 1024),
	RF_SCALED(struct process_summary, pinned_host_live_bytes, "pinned_host_live_bytes", "pinned host live MiB",
		  "%.1f", 1024.0 * 1024),
};

const struct report_field report__thread_cpu[3] = {
	RF_S(struct thread_summary, on_cpu_ns, "on_cpu_s", "on-CPU s", "%.3f", 1e9),
	RF_S(struct thread_summary, off_cpu_ns, "off_cpu_s", "off-CPU s", "%.3f", 1e9),
	RF_S(struct thread_summary, runqueue_wait_ns, "runqueue_wait_s", "run-queue wait s", "%.3f", 1e9),
};

const struct report_field report__gpu_kernel_time[2] = {
	RF(struct gpu_kernel_stat, count, "count", "count"),
	RF_S(struct gpu_kernel_stat, total_ns, "total_s", "total", "%.3f ms", 1e6),
};

const struct report_field report__gpu_copy_fields[3] = {
	RF(struct gpu_copy_stat, count, "count", "count"),
	RF(struct gpu_copy_stat, bytes, "bytes", "bytes"),
	RF_S(struct gpu_copy_stat, total_ns, "total_s", "GPU time", "%.3f ms", 1e6),
};

const struct report_field report__gpu_process_counts[21] = {
	RF(struct gpu_process_stat, kernels, "kernels", "kernels"),
	RF(struct gpu_process_stat, copies, "memcpys", "memcpys"),
	RF(struct gpu_process_stat, memsets, "memsets", "memsets"),
	JF(struct gpu_process_stat, syncs, "syncs"),
	JF(struct gpu_process_stat, api_records, "api_records"),
	RF(struct gpu_process_stat, joined, "kernels_joined", "joined to launch"),
	JF(struct gpu_process_stat, unjoined, "kernels_unjoined"),
	RF(struct gpu_process_stat, causality_violations, "causality_violations", "causality violations"),
	JF_S(struct gpu_process_stat, worst_violation_ns, "worst_violation_s"),
	RF_S(struct gpu_process_stat, launch_to_start_p50_ns, "launch_to_start_p50_s", "launch to GPU start p50",
	     "%.1f us", 1e3),
	JF(struct gpu_process_stat, cupti_dropped, "cupti_dropped"),
	JF(struct gpu_process_stat, failed, "cupti_failed"),
	JF(struct gpu_process_stat, windows, "windows"),
	JF_S(struct gpu_process_stat, observed_ns, "observed_s"),
	JF_S(struct gpu_process_stat, span_ns, "span_s"),
	JF(struct gpu_process_stat, estimated, "estimated"),
	JF(struct gpu_process_stat, detaches, "detaches"),
	JF_S(struct gpu_process_stat, detach_max_ns, "detach_max_s"),
	JF_S(struct gpu_process_stat, attach_max_ns, "attach_max_s"),
	JF_S(struct gpu_process_stat, drain_max_ns, "drain_max_s"),
	JF(struct gpu_process_stat, unfinished, "unfinished_records"),
};

/* The idle share of a device's time, in percent. */
static double device_idle_pct(const void *row, const void *ctx, double unit)
{
	(void)ctx, (void)unit;
	return 100.0 * ((const struct gpu_device_stat *)row)->idle_fraction;
}

const struct report_field report__gpu_devices[8] = {
	RF(struct gpu_device_stat, pid, "pid", "pid"),
	RF(struct gpu_device_stat, device, "device", "device"),
	JF_S(struct gpu_device_stat, busy_ns, "busy_s"),
	JF(struct gpu_device_stat, idle_fraction, "idle_fraction"),
	RF_S(struct gpu_device_stat, busy_est_ns, "busy_estimated_s", "busy", "%.3f s", 1e9,
	     .est = RF_FLAG(struct gpu_device_stat, estimated)),
	RF_CALC(device_idle_pct, NULL, "idle", "%.1f%%", .est = RF_FLAG(struct gpu_device_stat, estimated)),
	JF(struct gpu_device_stat, estimated, "estimated"),
	JF(struct gpu_device_stat, idle_scale, "idle_scale"),
};

const struct report_field report__rank_arrivals[9] = {
	RF(struct rank_row, collectives, "collectives", "collectives"),
	RF(struct rank_row, last, "last_arrivals", "last"),
	RF(struct rank_row, late, "late_arrivals", "late"),
	RF_S(struct rank_row, lateness_p50_ns, "lateness_p50_s", "lateness p50 ms", "%.3f", 1e6),
	RF_S(struct rank_row, lateness_p99_ns, "lateness_p99_s", "p99 ms", "%.3f", 1e6),
	RF_S(struct rank_row, lateness_total_ns, "lateness_total_s", "total s", "%.3f", 1e9),
	JF_S(struct rank_row, late_ns, "first_rank_wait_s"),
	RF_S(struct rank_row, waited_ns, "others_wait_s", "others waited s", "%.3f", 1e9),
	RF_S(struct rank_row, cost_ns, "late_cost_s", "held back s", "%.3f", 1e9),
};

const struct report_field report__rank_gpu[4] = {
	RF_S(struct rank_row, sync_ns, "sync_stall_s", "sync stall s", "%.3f", 1e9),
	RF_S(struct rank_row, nccl_gpu_ns, "nccl_gpu_s", "NCCL GPU ms", "%.3f", 1e6),
	RF(struct rank_row, nccl_joined, "nccl_joined", "joined"),
	RF(struct rank_row, nccl_not_joined, "nccl_not_joined", "not joined"),
};

/* Its share of the thread's window, in %. */
static double sync_share(const void *row, const void *ctx, double unit)
{
	const struct thread_summary *t = row;
	__u64 window = t->end_ns - t->start_ns;

	(void)ctx, (void)unit;
	return window ? 100.0 * (double)t->cuda_sync_ns / (double)window : 0.0;
}

#define THREAD_CUDA_ESTIMATED .est = RF_FLAG(struct thread_summary, cuda_estimated)

const struct report_field report__thread_cuda[4] = {
	RF(struct thread_summary, cuda_calls, "cuda_calls", "CUDA calls", THREAD_CUDA_ESTIMATED),
	RF(struct thread_summary, cuda_launches, "launches", "launches", THREAD_CUDA_ESTIMATED),
	JF(struct thread_summary, cuda_launches_observed, "launches_observed"),
	JF(struct thread_summary, cuda_estimated, "cuda_estimated"),
};

const struct report_field report__thread_sync[2] = {
	RF_S(struct thread_summary, cuda_sync_ns, "cuda_sync_s", "sync s", "%.3f", 1e9),
	RF_CALC(sync_share, NULL, "% of window", "%.1f"),
};

const struct report_field report__thread_gil_wait[3] = {
	RF_S(struct thread_summary, gil_wait_ns, "gil_wait_s", "GIL wait s", "%.3f", 1e9),
	/* unknown for a thread never seen taking or releasing it */
	RF_S(struct thread_summary, gil_hold_ns, "gil_hold_s", "GIL hold s", "%.3f", 1e9,
	     .known = RF_FLAG(struct thread_summary, gil_hold_measured)),
	RF(struct thread_summary, gil_acquisitions, "gil_acquisitions", "acquisitions"),
};

const struct report_field report__thread_gil_blocked[2] = {
	RF_S(struct thread_summary, gil_blocked_ns, "gil_blocked_s", "GIL blocked s", "%.3f", 1e9),
	RF(struct thread_summary, gil_blocks, "gil_blocks", "blocks"),
};

static double fn_mean(const void *row, const void *ctx, double unit)
{
	const struct cuda_fn_summary *f = row;

	(void)ctx;
	return (double)f->total_ns / (double)f->returned / unit;
}

/* The time of its returned calls: none for a function whose return is
 * not probed. */
#define FN_RETURNED .known = RF_FLAG(struct cuda_fn_summary, returned)

const struct report_field report__cuda_fn_calls[4] = {
	RF(struct cuda_fn_summary, calls, "count", "calls", .est = RF_FLAG(struct cuda_fn_summary, estimated)),
	JF(struct cuda_fn_summary, observed, "observed"),
	JF(struct cuda_fn_summary, estimated, "estimated"),
	RF(struct cuda_fn_summary, failed, "failed", "failed"),
};

const struct report_field report__cuda_fn_time[4] = {
	RF_S(struct cuda_fn_summary, total_ns, "total_s", "total s", "%.3f", 1e9, FN_RETURNED),
	RF(struct cuda_fn_summary, returned, NULL, "timed calls"),
	RF_CALC_S(fn_mean, NULL, "mean ms", "%.3f", 1e6, FN_RETURNED),
	RF_S(struct cuda_fn_summary, max_ns, "max_s", "max ms", "%.3f", 1e6, FN_RETURNED),
};

const struct report_field report__kernel_id[2] = {
	RF(struct kernel_summary, pid, "pid", "pid"),
	JF_HEX(struct kernel_summary, handle, "handle"),
};

const struct report_field report__kernel_name[1] = {
	RF_T(struct kernel_summary, name, "name", "kernel"),
};

const struct report_field report__kernel_launches[3] = {
	RF(struct kernel_summary, launches, "launches", "launches", .est = RF_FLAG(struct kernel_summary, estimated)),
	JF(struct kernel_summary, observed_launches, "observed_launches"),
	JF(struct kernel_summary, estimated, "estimated"),
};

/* A function's share of its thread's samples, in %: where it is the
 * innermost frame, and anywhere on the stack. */
static double py_self_pct(const void *row, const void *ctx, double unit)
{
	(void)unit;
	return pct(((const struct py_func_stat *)row)->self, ((const struct py_thread_stats *)ctx)->samples);
}

static double py_inclusive_pct(const void *row, const void *ctx, double unit)
{
	(void)unit;
	return pct(((const struct py_func_stat *)row)->inclusive, ((const struct py_thread_stats *)ctx)->samples);
}

const struct report_field report__py_func_samples[4] = {
	JF(struct py_func_stat, self, "self_samples"),
	JF(struct py_func_stat, inclusive, "inclusive_samples"),
	RF_CALC(py_self_pct, "self_pct", "self %", "%.1f"),
	RF_CALC(py_inclusive_pct, "inclusive_pct", "inclusive %", "%.1f"),
};

#define PY_SITE RF_A(struct py_site, site, "site", "Python call site")

const struct report_field report__py_sync_sites[3] = {
	PY_SITE,
	RF(struct py_site, calls, "calls", "calls"),
	RF_S(struct py_site, time_ns, "time_s", "sync s", "%.3f", 1e9),
};

/* At a launch site, calls counts the sampled launches (--py-launch-every). */
const struct report_field report__py_launch_sites[2] = {
	PY_SITE,
	RF(struct py_site, calls, "samples", "sampled launches"),
};
