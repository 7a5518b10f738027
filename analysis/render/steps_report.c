// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings.h"
#include "steps_report.h"
#include "report_doc.h"
#include "report_field.h"
#include "text.h"

static double ms(__u64 ns)
{
	return (double)ns / 1e6;
}

static double secs(__u64 ns)
{
	return (double)ns / 1e9;
}

const char *steps_report__diff_name(enum tl_cat c)
{
	return c == TL_CAT_MAX ? "launches" : tl_cat_name(c);
}

void steps_report__slow_sentence(const struct steps_result *r, const struct step_slow *sl, char *buf, size_t len)
{
	const struct step *st = &r->steps[sl->index];
	size_t off;

	off = (size_t)snprintf(buf, len, "step %zu took %.1fx the median (%.1f ms, +%.1f ms)", st->index,
			       sl->ratio, ms(st->end - st->start), ms(sl->extra_ns));
	for (size_t i = 0; i < sl->ndiffs && off < len; i++) {
		const struct step_diff *d = &sl->diffs[i];

		if (d->cat == TL_CAT_MAX)
			off += (size_t)snprintf(buf + off, len - off, "%s%lld more launches", i ? ", " : ": ",
						(long long)d->extra);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%s +%.1f ms", i ? ", " : ": ",
						tl_cat_name(d->cat), ms((__u64)d->extra));
	}
	if (!sl->ndiffs && off < len)
		snprintf(buf + off, len - off, ": no category of its thread grew by a tenth of the extra time");
}

static json_t *categories(const struct tl_acc *acc)
{
	json_t *o = json_object();

	for (int c = 0; o && c < TL_CAT_MAX; c++)
		if (acc->ns[c] && json_object_set_new(o, tl_cat_name((enum tl_cat)c), json_real(secs(acc->ns[c])))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* A step's start from the first step's (ctx: the steps_result). */
static double step_offset(const void *row, const void *ctx, double unit)
{
	const struct steps_result *r = ctx;

	return (double)(((const struct step *)row)->start - r->steps[0].start) / unit;
}

static double step_duration(const void *row, const void *ctx, double unit)
{
	const struct step *st = row;

	(void)ctx;
	return (double)(st->end - st->start) / unit;
}

/* Its thread's time in a category during the step (the JSON has them
 * all, in "time_s"). */
#define STEP_CAT(c, h) RF_S(struct step, acc.ns[c], NULL, (h), "%.2f", 1e6)

static const struct report_field step_fields[] = {
	RF(struct step, index, "index", "step"),
	JF(struct step, tid, "tid"),
	JF_S(struct step, start, "start_s"),
	RF_CALC_S(step_offset, NULL, "start (s)", "%.3f", 1e9),
	RF_CALC_S(step_duration, "duration_s", "duration (ms)", "%.2f", 1e6),
	RF(struct step, launches, "launches", "launches"),
	STEP_CAT(TL_RUNNING, "running"),
	STEP_CAT(TL_RUNQUEUE, "runqueue"),
	STEP_CAT(TL_BLOCKED, "blocked"),
	STEP_CAT(TL_IO, "io"),
	STEP_CAT(TL_SYNC, "cuda_sync"),
	STEP_CAT(TL_GIL, "gil_wait"),
	STEP_CAT(TL_FAULT, "fault"),
};

static double range_mean(const void *row, const void *ctx, double unit)
{
	const struct nvtx_range_stat *rs = row;

	(void)ctx;
	return rs->count ? (double)rs->total_ns / unit / (double)rs->count : 0.0;
}

/* An NVTX range's name, then (after its kind) its depth and times. */
static const struct report_field range_name[] = {
	RF_A(struct nvtx_range_stat, name, "name", "range", .code = true),
};
static const struct report_field range_stats[] = {
	RF(struct nvtx_range_stat, min_depth, "depth", "depth"),
	RF(struct nvtx_range_stat, count, "count", "count"),
	RF_S(struct nvtx_range_stat, total_ns, "total_s", "total (ms)", "%.2f", 1e6),
	RF_CALC_S(range_mean, "mean_s", "mean (ms)", "%.3f", 1e6),
	RF_S(struct nvtx_range_stat, max_ns, "max_s", "max (ms)", "%.3f", 1e6),
};
static const struct report_field mark_fields[] = {
	RF_A(struct nvtx_mark_stat, name, "name", NULL),
	JF(struct nvtx_mark_stat, count, "count"),
};

static const char *range_kind(const struct nvtx_range_stat *rs, bool json)
{
	if (json)
		return rs->thread_stack ? "push_pop" : "start_end";
	return rs->thread_stack ? "push/pop" : "start/end";
}

#define ADD(obj, key, val)                                             \
	do {                                                           \
		if (json_object_set_new((obj), (key), (val)))          \
			goto nomem;                                    \
	} while (0)

json_t *steps_report__json(const struct steps_result *r)
{
	json_t *o = json_object(), *steps = json_array(), *slow = json_array(), *ranges = json_array();

	if (!o || !steps || !slow || !ranges) {
		json_decref(steps), json_decref(slow), json_decref(ranges);
		goto nomem;
	}
	ADD(o, "source", json_string(steps_source_name(r->source)));
	ADD(o, "name", ev_text(r->name, SIZE_MAX));
	ADD(o, "count", json_integer((json_int_t)r->count));
	if (r->count) {
		ADD(o, "pid", json_integer(r->pid));
		ADD(o, "tid", json_integer(r->tid));
		ADD(o, "comm", ev_text(r->comm, SIZE_MAX));
		ADD(o, "median_s", json_real(secs(r->median_ns)));
		ADD(o, "mean_s", json_real(secs(r->mean_ns)));
		ADD(o, "p90_s", json_real(secs(r->p90_ns)));
		ADD(o, "min_s", json_real(secs(r->min_ns)));
		ADD(o, "max_s", json_real(secs(r->max_ns)));
	}
	for (size_t i = 0; i < r->count; i++) {
		const struct step *st = &r->steps[i];
		json_t *s = json_object();

		if (!s || json_array_append_new(steps, s))
			goto nomem_arrays;
		if (REPORT_JSON(s, st, r, step_fields) || json_object_set_new(s, "time_s", categories(&st->acc)))
			goto nomem_arrays;
	}
	for (size_t i = 0; i < r->nslowest; i++) {
		const struct step_slow *sl = &r->slowest[i];
		json_t *s = json_object(), *diffs = json_array();
		char text[512];

		if (!s || !diffs || json_array_append_new(slow, s)) {
			json_decref(diffs);
			goto nomem_arrays;
		}
		steps_report__slow_sentence(r, sl, text, sizeof(text));
		if (json_object_set_new(s, "index", json_integer((json_int_t)r->steps[sl->index].index)) ||
		    json_object_set_new(s, "duration_s", json_real(secs(r->steps[sl->index].end -
									 r->steps[sl->index].start))) ||
		    json_object_set_new(s, "ratio_to_median", json_real(sl->ratio)) ||
		    json_object_set_new(s, "extra_s", json_real(secs(sl->extra_ns))) ||
		    json_object_set_new(s, "summary", ev_text(text, sizeof(text)))) {
			json_decref(diffs);
			goto nomem_arrays;
		}
		for (size_t k = 0; k < sl->ndiffs; k++) {
			const struct step_diff *d = &sl->diffs[k];
			json_t *dj = d->cat == TL_CAT_MAX ?
				json_pack("{s:s, s:I}", "what", "launches", "extra", (json_int_t)d->extra) :
				json_pack("{s:s, s:f}", "what", tl_cat_name(d->cat), "extra_s", secs((__u64)d->extra));

			if (!dj || json_array_append_new(diffs, dj)) {
				json_decref(diffs);
				goto nomem_arrays;
			}
		}
		if (json_object_set_new(s, "differences", diffs))
			goto nomem_arrays;
	}
	for (size_t i = 0; i < r->nranges; i++) {
		const struct nvtx_range_stat *rs = &r->ranges[i];
		json_t *x = json_object();

		if (!x || json_array_append_new(ranges, x) || REPORT_JSON(x, rs, NULL, range_name) ||
		    json_object_set_new(x, "kind", json_string(range_kind(rs, true))) ||
		    REPORT_JSON(x, rs, NULL, range_stats))
			goto nomem_arrays;
	}
	ADD(o, "steps", steps);
	ADD(o, "slowest", slow);
	ADD(o, "nvtx_ranges", ranges);
	ADD(o, "nvtx_marks", REPORT_ROWS(r->marks, r->nmarks, NULL, mark_fields));
	ADD(o, "nvtx_unmatched", json_integer((json_int_t)r->unmatched));
	ADD(o, "syncs_per_step", json_integer((json_int_t)r->syncs_per_step));
	ADD(o, "nvtx_ranges_not_kept", json_integer((json_int_t)r->ranges_not_kept));
	return o;
nomem_arrays:
	json_decref(steps), json_decref(slow), json_decref(ranges);
nomem:
	json_decref(o);
	return NULL;
}

/* What the steps are: their source, then their durations. */
static void steps_source(struct doc *d, const struct steps_result *r)
{
	doc__open(d, DOC_PARA);
	if (r->source == STEPS_NVTX) {
		doc__printf(d, "%zu steps from the NVTX range ", r->count);
		doc__code_name(d, r->name);
		doc__printf(d, " (thread %u ", r->tid);
		doc__code_name(d, r->comm);
		doc__printf(d, ")");
		if (r->ranges_not_kept)
			doc__printf(d, ", the first 16384 ranges (%llu more not kept one by one)",
				    (unsigned long long)r->ranges_not_kept);
	} else if (r->source == STEPS_INFERRED) {
		doc__printf(d, "%zu steps ", r->count);
		doc__strong(d, true);
		doc__printf(d, "inferred");
		doc__strong(d, false);
		doc__printf(d, " from the trace's periodicity: thread %u ", r->tid);
		doc__code_name(d, r->comm);
		doc__printf(d, " launches work and synchronizes (");
		doc__code_name(d, r->name);
		if (r->syncs_per_step > 1)
			doc__printf(d, ") periodically; each step spans %llu synchronizations (too many to keep one a "
				    "step) and ends at the return of the last", (unsigned long long)r->syncs_per_step);
		else
			doc__printf(d, ") once per step; each step ends at the return of a synchronization");
	} else {
		doc__printf(d, "No steps: no NVTX range repeats %d times and no periodic synchronization", STEPS_MIN);
	}
	if (r->count)
		doc__printf(d, ". Median %.2f ms, mean %.2f ms, p90 %.2f ms, min %.2f ms, max %.2f ms.", ms(r->median_ns),
			    ms(r->mean_ns), ms(r->p90_ns), ms(r->min_ns), ms(r->max_ns));
	else
		doc__printf(d, ".");
	doc__close(d);
}

static void steps_table(struct doc *d, const struct steps_result *r, size_t max_rows)
{
	size_t rows = r->count < max_rows ? r->count : max_rows, ncols = 0;
	struct doc_col cols[REPORT_NFIELDS(step_fields)];

	REPORT_COLS(step_fields, cols, &ncols);
	doc__table(d, cols, ncols);
	for (size_t i = 0; i < rows; i++) {
		REPORT_ROW(d, &r->steps[i], r, step_fields);
		doc__row_end(d);
	}
	doc__table_end(d);
	if (rows < r->count)
		doc__para(d, "(the first %zu of %zu steps; every step is in the JSON report)", rows, r->count);
}

static void steps_nvtx(struct doc *d, const struct steps_result *r)
{
	struct doc_col cols[1 + REPORT_NFIELDS(range_name) + REPORT_NFIELDS(range_stats)];
	size_t ncols = 0;

	if (r->nranges) {
		REPORT_COLS(range_name, cols, &ncols);
		cols[ncols++] = (struct doc_col){ "kind", false };
		REPORT_COLS(range_stats, cols, &ncols);
		doc__para(d, "NVTX ranges:");
		doc__table(d, cols, ncols);
		for (size_t i = 0; i < r->nranges; i++) {
			const struct nvtx_range_stat *rs = &r->ranges[i];

			REPORT_ROW(d, rs, NULL, range_name);
			doc__cell(d);
			doc__printf(d, "%s", range_kind(rs, false));
			REPORT_CELLS(d, rs, NULL, range_stats);
			doc__row_end(d);
		}
		doc__table_end(d);
	}
	if (r->nmarks) {
		doc__open(d, DOC_PARA);
		doc__printf(d, "NVTX marks:");
		for (size_t i = 0; i < r->nmarks; i++) {
			doc__printf(d, "%s ", i ? "," : "");
			doc__code_name(d, r->marks[i].name);
			doc__printf(d, " %llu", (unsigned long long)r->marks[i].count);
		}
		doc__close(d);
	}
}

void steps_report__doc(struct doc *d, const struct steps_result *r, size_t max_rows)
{
	if (!r->count && !r->nvtx_events)
		return;
	doc__headingf(d, 2, "Steps");
	steps_source(d, r);
	if (r->nslowest) {
		doc__para(d, "Slowest steps against the median:");
		doc__open(d, DOC_LIST);
		for (size_t i = 0; i < r->nslowest; i++) {
			char text[512];

			steps_report__slow_sentence(r, &r->slowest[i], text, sizeof(text));
			doc__item(d);
			doc__printf(d, "%s", text);
		}
		doc__close(d);
	}
	if (r->count)
		steps_table(d, r, max_rows);
	steps_nvtx(d, r);
}
