// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the report writers share (report_common.h): names of the
 * recording's values, the start time, the notes on what was not taken as
 * written, and the headline of a set.
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

void report__field_cols(const struct report_field *f, size_t nf, struct doc_col *cols, size_t *n)
{
	for (size_t i = 0; i < nf; i++)
		if (f[i].head)
			cols[(*n)++] = (struct doc_col){ f[i].head, true };
}

void report__field_cells(struct doc *d, const void *row, const struct report_field *f, size_t nf)
{
	for (size_t i = 0; i < nf; i++) {
		const void *p = (const char *)row + f[i].off;

		if (!f[i].head)
			continue;
		doc__cell(d);
		switch (f[i].kind) {
		case RF_U32:
			doc__printf(d, "%u", *(const __u32 *)p);
			break;
		case RF_INT:
			doc__printf(d, "%d", *(const int *)p);
			break;
		case RF_U64:
			doc__printf(d, "%" PRIu64, (uint64_t)*(const __u64 *)p);
			break;
		case RF_REAL:
			doc__printf(d, f[i].fmt, *(const double *)p);
			break;
		case RF_BOOL:
			doc__printf(d, "%s", *(const bool *)p ? "yes" : "no");
			break;
		default:
			doc__printf(d, f[i].fmt, (double)*(const __u64 *)p / f[i].scale);
			break;
		}
	}
}

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

const struct report_field report__rank_arrivals[8] = {
	RF(struct rank_row, collectives, "collectives", "collectives"),
	RF(struct rank_row, last, "last_arrivals", "last"),
	RF(struct rank_row, late, "late_arrivals", "late"),
	RF_S(struct rank_row, lateness_p50_ns, "lateness_p50_s", "lateness p50 ms", "%.3f", 1e6),
	RF_S(struct rank_row, lateness_p99_ns, "lateness_p99_s", "p99 ms", "%.3f", 1e6),
	RF_S(struct rank_row, lateness_total_ns, "lateness_total_s", "total s", "%.3f", 1e9),
	JF_S(struct rank_row, late_ns, "first_rank_wait_s"),
	RF_S(struct rank_row, waited_ns, "others_wait_s", "others waited s", "%.3f", 1e9),
};

const struct report_field report__rank_gpu[4] = {
	RF_S(struct rank_row, sync_ns, "sync_stall_s", "sync stall s", "%.3f", 1e9),
	RF_S(struct rank_row, nccl_gpu_ns, "nccl_gpu_s", "NCCL GPU ms", "%.3f", 1e6),
	RF(struct rank_row, nccl_joined, "nccl_joined", "joined"),
	RF(struct rank_row, nccl_not_joined, "nccl_not_joined", "not joined"),
};
