// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "diff.h"
#include "report.h"
#include "report_doc.h"
#include "text.h"

#define TOP_KERNELS 20

/* The figures of one run that the diff compares. */
struct profile {
	double wall_s;
	__u64 busy_ns, observed_ns, before_first_ns;
	__u64 idle_ns[CAUSE_MAX];
	__u64 thread_ns[TL_CAT_MAX];	/* the critical threads' windows */
	__u64 sync_ns, launches, cuda_calls;
	__u64 kernels, kernel_ns;
	__u64 memory_peak;
	size_t steps;
	__u64 steps_span_ns, median_step_ns;
};

static void profile_of(const struct analysis *a, struct profile *p)
{
	const struct attribution *at = a->ex->attr;
	const struct summary *s = a->sum;

	memset(p, 0, sizeof(*p));
	p->wall_s = s->duration_s;
	for (size_t i = 0; i < attribution__device_count(at); i++) {
		const struct attr_device *d = attribution__device_at(at, i);

		p->busy_ns += d->busy_ns;
		p->observed_ns += d->observed_ns;
		p->before_first_ns += d->leading_ns;
		for (int c = 0; c < CAUSE_MAX; c++)
			p->idle_ns[c] += d->idle_ns[c];
	}
	for (size_t i = 0; i < attribution__thread_count(at); i++) {
		const struct attr_thread *t = attribution__thread_at(at, i);

		for (int c = 0; c < TL_CAT_MAX && t->critical; c++)
			p->thread_ns[c] += t->window.ns[c];
	}
	for (size_t i = 0; i < s->thread_count; i++) {
		p->sync_ns += s->threads[i].cuda_sync_ns;
		p->launches += s->threads[i].cuda_launches;
		p->cuda_calls += s->threads[i].cuda_calls;
	}
	for (size_t i = 0; i < s->gpu_kernel_count; i++) {
		p->kernels += s->gpu_kernels[i].count;
		p->kernel_ns += s->gpu_kernels[i].total_ns;
	}
	for (size_t i = 0; i < s->process_count; i++)
		p->memory_peak += s->processes[i].device_peak_bytes;
	if (a->ex->steps) {
		const struct steps_result *st = steps__result(a->ex->steps);

		if (st->source != STEPS_NONE && st->count) {
			p->steps = st->count;
			p->steps_span_ns = st->steps[st->count - 1].end - st->steps[0].start;
			p->median_step_ns = st->median_ns;
		}
	}
}

const char *diff_per_name(enum diff_per p)
{
	switch (p) {
	case DIFF_PER_STEP:
		return "step";
	case DIFF_PER_LAUNCH:
		return "launch";
	default:
		return "second";
	}
}

/* The unit of work: steps where both runs have them, else launches where
 * both launched, else seconds recorded. */
static enum diff_per per_of(const struct profile *b, const struct profile *n)
{
	if (b->steps && n->steps && b->steps_span_ns && n->steps_span_ns)
		return DIFF_PER_STEP;
	if (b->launches && n->launches && b->wall_s > 0 && n->wall_s > 0)
		return DIFF_PER_LAUNCH;
	return DIFF_PER_SECOND;
}

static void run_of(const struct profile *p, enum diff_per per, struct diff_run *r)
{
	memset(r, 0, sizeof(*r));
	r->wall_s = p->wall_s;
	r->median_step_s = (double)p->median_step_ns / 1e9;
	switch (per) {
	case DIFF_PER_STEP:
		r->work = (double)p->steps;
		r->work_per_s = (double)p->steps / ((double)p->steps_span_ns / 1e9);
		break;
	case DIFF_PER_LAUNCH:
		r->work = (double)p->launches;
		r->work_per_s = (double)p->launches / p->wall_s;
		break;
	default:
		r->work = p->wall_s;
	}
}

/* A total over a run's work (0 for a run without any). */
static double per_work(double total, const struct diff_run *r)
{
	return r->work > 0 ? total / r->work : 0;
}

static int add_metric(struct diff *d, size_t *cap, const char *key, const char *label, enum diff_unit unit,
		      double base, double new_, bool always)
{
	struct diff_metric *m;

	if (!always && base == 0 && new_ == 0)
		return 0;
	if (d->nmetrics == *cap) {
		size_t n = *cap ? 2 * *cap : 32;

		m = reallocarray(d->metrics, n, sizeof(*m));
		if (!m)
			return -ENOMEM;
		d->metrics = m;
		*cap = n;
	}
	m = &d->metrics[d->nmetrics++];
	memset(m, 0, sizeof(*m));
	snprintf(m->key, sizeof(m->key), "%s", key);
	snprintf(m->label, sizeof(m->label), "%s", label);
	m->unit = unit;
	m->base = base;
	m->new_ = new_;
	/* a peak or a share is a level, not something each unit of work adds */
	m->per_work = unit == DIFF_SECONDS || unit == DIFF_COUNT;
	if (m->per_work) {
		m->base_per = per_work(base, &d->base);
		m->new_per = per_work(new_, &d->new_);
	}
	return 0;
}

static double sec(__u64 ns)
{
	return (double)ns / 1e9;
}

static int metrics(struct diff *d, const struct profile *b, const struct profile *n)
{
	size_t cap = 0;
	char key[48], label[96];
	int err = 0;

	err |= add_metric(d, &cap, "wall_s", "wall time", DIFF_SECONDS, b->wall_s, n->wall_s, true);
	err |= add_metric(d, &cap, "gpu_busy_s", "GPU busy", DIFF_SECONDS, sec(b->busy_ns), sec(n->busy_ns), false);
	err |= add_metric(d, &cap, "gpu_busy_share", "GPU busy share of its observed time", DIFF_SHARE,
			  b->observed_ns ? (double)b->busy_ns / (double)b->observed_ns : 0,
			  n->observed_ns ? (double)n->busy_ns / (double)n->observed_ns : 0, false);
	for (int c = 0; c < CAUSE_MAX; c++) {
		snprintf(key, sizeof(key), "gpu_idle_%s_s", cause_name((enum cause)c));
		snprintf(label, sizeof(label), "GPU idle %s", cause_label((enum cause)c));
		err |= add_metric(d, &cap, key, label, DIFF_SECONDS, sec(b->idle_ns[c]), sec(n->idle_ns[c]), false);
	}
	err |= add_metric(d, &cap, "gpu_idle_before_first_work_s", "GPU idle before its first work", DIFF_SECONDS,
			  sec(b->before_first_ns), sec(n->before_first_ns), false);
	for (int c = 0; c < TL_CAT_MAX; c++) {
		snprintf(key, sizeof(key), "threads_%s_s", tl_cat_name((enum tl_cat)c));
		snprintf(label, sizeof(label), "launching threads %s", cause_label(cause_of_category((enum tl_cat)c)));
		if (c == TL_RUNNING)
			snprintf(label, sizeof(label), "launching threads running");
		err |= add_metric(d, &cap, key, label, DIFF_SECONDS, sec(b->thread_ns[c]), sec(n->thread_ns[c]), false);
	}
	err |= add_metric(d, &cap, "cuda_sync_s", "CUDA synchronization", DIFF_SECONDS, sec(b->sync_ns), sec(n->sync_ns),
			  false);
	err |= add_metric(d, &cap, "launches", "kernel launches", DIFF_COUNT, (double)b->launches, (double)n->launches,
			  false);
	err |= add_metric(d, &cap, "cuda_calls", "CUDA calls", DIFF_COUNT, (double)b->cuda_calls,
			  (double)n->cuda_calls, false);
	err |= add_metric(d, &cap, "gpu_kernels", "GPU kernels run", DIFF_COUNT, (double)b->kernels,
			  (double)n->kernels, false);
	err |= add_metric(d, &cap, "gpu_kernel_s", "GPU kernel time", DIFF_SECONDS, sec(b->kernel_ns),
			  sec(n->kernel_ns), false);
	err |= add_metric(d, &cap, "device_memory_peak_bytes", "device memory peak (sum over processes)", DIFF_BYTES,
			  (double)b->memory_peak, (double)n->memory_peak, false);
	return err ? -ENOMEM : 0;
}

/* --- findings by rule ------------------------------------------------------------------ */

static struct diff_finding *finding_of(struct diff *d, const char *rule)
{
	for (size_t i = 0; i < d->nfindings; i++)
		if (strcmp(d->findings[i].rule, rule) == 0)
			return &d->findings[i];
	return NULL;
}

static int gather(struct diff *d, const struct findings *fs, bool is_new)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->v[i];
		struct diff_finding *df = finding_of(d, f->rule);

		if (!df) {
			struct diff_finding *n = reallocarray(d->findings, d->nfindings + 1, sizeof(*n));

			if (!n)
				return -ENOMEM;
			d->findings = n;
			df = &d->findings[d->nfindings++];
			memset(df, 0, sizeof(*df));
			df->rule = f->rule;
			df->title = explain__rule_title(f->rule);
		}
		if (is_new) {
			df->new_cost_s += f->cost_s;
			if (!df->new_count++)
				df->summary = f->summary;
		} else {
			df->base_cost_s += f->cost_s;
			if (!df->base_count++)
				df->summary = f->summary;
		}
	}
	return 0;
}

static int finding_rank(const void *a, const void *b)
{
	const struct diff_finding *x = a, *y = b;
	double dx = x->new_per_s - x->base_per_s, dy = y->new_per_s - y->base_per_s;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->status != y->status)
		return x->status < y->status ? -1 : 1;
	return strcmp(x->rule, y->rule);
}

/* --- kernels by name --------------------------------------------------------------------- */

static struct diff_kernel *kernel_of(struct diff *d, const char *name, size_t *cap)
{
	for (size_t i = 0; i < d->nkernels; i++)
		if (strcmp(d->kernels[i].name, name) == 0)
			return &d->kernels[i];
	if (d->nkernels == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		struct diff_kernel *k = reallocarray(d->kernels, n, sizeof(*k));

		if (!k)
			return NULL;
		d->kernels = k;
		*cap = n;
	}
	memset(&d->kernels[d->nkernels], 0, sizeof(*d->kernels));
	d->kernels[d->nkernels].name = strdup(name);
	return d->kernels[d->nkernels].name ? &d->kernels[d->nkernels++] : NULL;
}

static int kernels(struct diff *d, const struct summary *b, const struct summary *n)
{
	size_t cap = 0;

	for (int side = 0; side < 2; side++) {
		const struct summary *s = side ? n : b;

		for (size_t i = 0; i < s->gpu_kernel_count; i++) {
			struct diff_kernel *k = kernel_of(d, s->gpu_kernels[i].name, &cap);

			if (!k)
				return -ENOMEM;
			*(side ? &k->new_ns : &k->base_ns) += s->gpu_kernels[i].total_ns;
			*(side ? &k->new_count : &k->base_count) += s->gpu_kernels[i].count;
		}
	}
	return 0;
}

static double kernel_change(const struct diff_kernel *k)
{
	return fabs(k->new_per_s - k->base_per_s);
}

static int kernel_rank(const void *a, const void *b)
{
	const struct diff_kernel *x = a, *y = b;

	if (kernel_change(x) != kernel_change(y))
		return kernel_change(x) > kernel_change(y) ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* An amount of time per unit of work, as the headline says it. */
static void per_amount(char *buf, size_t len, enum diff_per per, double s)
{
	const char *unit = per == DIFF_PER_STEP ? "a step" : per == DIFF_PER_LAUNCH ? "a launch" : "a second recorded";

	if (s < 1e-3)
		snprintf(buf, len, "%.1f us %s", 1e6 * s, unit);
	else
		snprintf(buf, len, "%.1f ms %s", 1e3 * s, unit);
}

/* The sentence a reader sees first: the change of throughput, then the
 * finding whose cost per unit of work changed most. */
static void headline(struct diff *d)
{
	const struct diff_finding *top = d->nfindings ? &d->findings[0] : NULL;
	const struct diff_finding *least = d->nfindings ? &d->findings[d->nfindings - 1] : NULL;
	double ratio = d->base.work_per_s > 0 ? d->new_.work_per_s / d->base.work_per_s : 0;
	const char *verdict = ratio >= 1.02 ? "Faster" : ratio > 0 && ratio <= 1 / 1.02 ? "Slower" : "As fast";
	char amount[64];
	size_t len = sizeof(d->headline);
	int n;

	if (d->per == DIFF_PER_STEP)
		n = snprintf(d->headline, len, "%s: the new run made %.2fx the steps per second of the base (%.1f against "
			     "%.1f; a median step of %.1f ms against %.1f ms).", verdict, ratio, d->new_.work_per_s,
			     d->base.work_per_s, 1e3 * d->new_.median_step_s, 1e3 * d->base.median_step_s);
	else if (d->per == DIFF_PER_LAUNCH)
		n = snprintf(d->headline, len, "%s: the new run made %.2fx the kernel launches per second of the base "
			     "(%.0f against %.0f; neither has steps to count its work by).", verdict, ratio,
			     d->new_.work_per_s, d->base.work_per_s);
	else
		n = snprintf(d->headline, len, "Neither run has both steps and kernel launches to count its work by: the "
			     "new run recorded %.3f s against %.3f s, and costs are compared per second recorded.",
			     d->new_.wall_s, d->base.wall_s);
	if (n < 0 || (size_t)n >= len)
		return;
	if (top && top->new_per_s > top->base_per_s) {
		per_amount(amount, sizeof(amount), d->per, top->new_per_s - top->base_per_s);
		snprintf(d->headline + n, len - (size_t)n, " Most added: \"%s\" (%s) %s, %s more.", top->title,
			 top->rule, top->status == DIFF_APPEARED ? "appeared" : "grew", amount);
	} else if (least && least->new_per_s < least->base_per_s) {
		per_amount(amount, sizeof(amount), d->per, least->base_per_s - least->new_per_s);
		snprintf(d->headline + n, len - (size_t)n, " No finding grew; most removed: \"%s\" (%s) %s, %s less.",
			 least->title, least->rule, least->status == DIFF_VANISHED ? "vanished" : "shrank", amount);
	} else {
		snprintf(d->headline + n, len - (size_t)n, " No finding changed.");
	}
}

int diff__compute(const struct analysis *base, const struct analysis *new_, const char *base_path,
		  const char *new_path, struct diff **out)
{
	struct diff *d = calloc(1, sizeof(*d));
	struct profile pb, pn;
	int err;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->base_path = base_path;
	d->new_path = new_path;
	profile_of(base, &pb);
	profile_of(new_, &pn);
	d->per = per_of(&pb, &pn);
	run_of(&pb, d->per, &d->base);
	run_of(&pn, d->per, &d->new_);
	err = metrics(d, &pb, &pn);
	if (!err)
		err = gather(d, &base->ex->findings, false);
	if (!err)
		err = gather(d, &new_->ex->findings, true);
	if (!err)
		err = kernels(d, base->sum, new_->sum);
	if (err) {
		diff__free(d);
		return err;
	}
	for (size_t i = 0; i < d->nfindings; i++) {
		struct diff_finding *f = &d->findings[i];

		f->status = !f->base_count ? DIFF_APPEARED : !f->new_count ? DIFF_VANISHED : DIFF_CHANGED;
		f->base_per_s = per_work(f->base_cost_s, &d->base);
		f->new_per_s = per_work(f->new_cost_s, &d->new_);
	}
	for (size_t i = 0; i < d->nkernels; i++) {
		d->kernels[i].base_per_s = per_work(sec(d->kernels[i].base_ns), &d->base);
		d->kernels[i].new_per_s = per_work(sec(d->kernels[i].new_ns), &d->new_);
	}
	if (d->nfindings > 1)
		qsort(d->findings, d->nfindings, sizeof(*d->findings), finding_rank);
	if (d->nkernels > 1)
		qsort(d->kernels, d->nkernels, sizeof(*d->kernels), kernel_rank);
	headline(d);
	*out = d;
	return 0;
}

void diff__free(struct diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nkernels; i++)
		free(d->kernels[i].name);
	free(d->kernels);
	free(d->findings);
	free(d->metrics);
	free(d);
}

const char *diff_status_name(enum diff_status s)
{
	switch (s) {
	case DIFF_APPEARED:
		return "appeared";
	case DIFF_VANISHED:
		return "vanished";
	default:
		return "changed";
	}
}

/* --- renderers ----------------------------------------------------------------------------- */

static const char *unit_name(enum diff_unit u)
{
	switch (u) {
	case DIFF_SECONDS:
		return "s";
	case DIFF_BYTES:
		return "bytes";
	case DIFF_SHARE:
		return "share";
	default:
		return "count";
	}
}

static void md_value(struct doc *f, enum diff_unit u, double v, bool sign)
{
	switch (u) {
	case DIFF_SECONDS:
		doc__printf(f, sign ? "%+.3f s" : "%.3f s", v);
		break;
	case DIFF_BYTES:
		doc__printf(f, sign ? "%+.1f MiB" : "%.1f MiB", v / (1024.0 * 1024));
		break;
	case DIFF_SHARE:
		doc__printf(f, sign ? "%+.1f%%" : "%.1f%%", 100 * v);
		break;
	default:
		doc__printf(f, sign ? "%+.0f" : "%.0f", v);
	}
}

/* Seconds per unit of work in the Markdown's tables: ms a step or a second
 * recorded, us a launch. */
static const char *per_time_unit(enum diff_per per)
{
	return per == DIFF_PER_LAUNCH ? "us" : "ms";
}

static double per_time_scale(enum diff_per per)
{
	return per == DIFF_PER_LAUNCH ? 1e6 : 1e3;
}

static void md_per(struct doc *f, enum diff_per per, const struct diff_metric *m, double v, bool sign)
{
	if (!m->per_work)
		doc__printf(f, "-");
	else if (m->unit == DIFF_SECONDS)
		doc__printf(f, sign ? "%+.3f %s" : "%.3f %s", per_time_scale(per) * v, per_time_unit(per));
	else
		doc__printf(f, sign ? "%+.3f" : "%.3f", v);
}

static void md_run(struct doc *f, const struct diff *d, const struct diff_run *r)
{
	switch (d->per) {
	case DIFF_PER_STEP:
		doc__printf(f, " — %.0f steps in %.3f s recorded, %.1f steps/s over their span, a median step of %.1f ms",
			    r->work, r->wall_s, r->work_per_s, 1e3 * r->median_step_s);
		break;
	case DIFF_PER_LAUNCH:
		doc__printf(f, " — %.0f kernel launches in %.3f s recorded, %.0f a second", r->work, r->wall_s,
			    r->work_per_s);
		break;
	default:
		doc__printf(f, " — %.3f s recorded", r->wall_s);
	}
}

static size_t kernels_shown(const struct diff *d)
{
	size_t n = 0;

	while (n < d->nkernels && n < TOP_KERNELS && kernel_change(&d->kernels[n]))
		n++;
	return n;
}

/* "- **Base:** base.isr — 120 steps in ...": a run, an item of the list. */
static void md_run_item(struct doc *f, const struct diff *d, const char *which, const char *path,
			const struct diff_run *r)
{
	doc__item(f);
	doc__strong(f, true);
	doc__printf(f, "%s", which);
	doc__strong(f, false);
	doc__printf(f, " ");
	doc__text(f, path, SIZE_MAX);
	md_run(f, d, r);
}

/* The two runs, what changed, then the findings by rule. */
static void doc_findings(struct doc *f, const struct diff *d)
{
	const char *per = diff_per_name(d->per), *tu = per_time_unit(d->per);
	char heads[3][64];
	struct doc_col cols[] = {
		{ "finding", false }, { "rule", false }, { "status", false }, { heads[0], true }, { heads[1], true },
		{ heads[2], true }, { "base s", true }, { "new s", true },
	};
	double scale = per_time_scale(d->per);

	snprintf(heads[0], sizeof(heads[0]), "base %s/%s", tu, per);
	snprintf(heads[1], sizeof(heads[1]), "new %s/%s", tu, per);
	snprintf(heads[2], sizeof(heads[2]), "change %s/%s", tu, per);
	doc__headingf(f, 1, "inferscope-bpf diff");
	doc__open(f, DOC_LIST);
	md_run_item(f, d, "Base:", d->base_path, &d->base);
	md_run_item(f, d, "New:", d->new_path, &d->new_);
	doc__close(f);
	doc__open(f, DOC_PARA);
	doc__strong(f, true);
	doc__text(f, d->headline, SIZE_MAX);
	doc__strong(f, false);
	doc__close(f);
	doc__headingf(f, 2, "Findings by rule, most added cost per %s first", per);
	if (!d->nfindings) {
		doc__para(f, "Neither run has a finding.");
		return;
	}
	doc__table(f, cols, DOC_NCOLS(cols));
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct diff_finding *x = &d->findings[i];

		doc__row(f);
		doc__printf(f, "%s\t", x->title);
		doc__code(f, "%s", x->rule);
		doc__printf(f, "\t%s\t%.3f\t%.3f\t%+.3f\t%.3f\t%.3f", diff_status_name(x->status), scale * x->base_per_s,
			    scale * x->new_per_s, scale * (x->new_per_s - x->base_per_s), x->base_cost_s, x->new_cost_s);
		doc__row_end(f);
	}
	doc__table_end(f);
}

static void doc_metrics(struct doc *f, const struct diff *d)
{
	const char *per = diff_per_name(d->per);
	char heads[3][64];
	struct doc_col cols[] = {
		{ "metric", false }, { heads[0], true }, { heads[1], true }, { heads[2], true }, { "change", true },
		{ "base", true }, { "new", true },
	};

	snprintf(heads[0], sizeof(heads[0]), "base per %s", per);
	snprintf(heads[1], sizeof(heads[1]), "new per %s", per);
	snprintf(heads[2], sizeof(heads[2]), "change per %s", per);
	doc__headingf(f, 2, "Metrics, per %s", per);
	doc__table(f, cols, DOC_NCOLS(cols));
	for (size_t i = 0; i < d->nmetrics; i++) {
		const struct diff_metric *m = &d->metrics[i];
		double b = m->per_work ? m->base_per : m->base, n = m->per_work ? m->new_per : m->new_;

		doc__row(f);
		doc__printf(f, "%s\t", m->label);
		md_per(f, d->per, m, m->base_per, false);
		doc__cell(f);
		md_per(f, d->per, m, m->new_per, false);
		doc__cell(f);
		md_per(f, d->per, m, m->new_per - m->base_per, true);
		if (b != 0)
			doc__printf(f, "\t%+.1f%%\t", 100 * (n - b) / b);
		else
			doc__printf(f, "\t-\t");
		md_value(f, m->unit, m->base, false);
		doc__cell(f);
		md_value(f, m->unit, m->new_, false);
		doc__row_end(f);
	}
	doc__table_end(f);
}

static void doc_kernels(struct doc *f, const struct diff *d)
{
	const char *per = diff_per_name(d->per), *tu = per_time_unit(d->per);
	char heads[3][64];
	struct doc_col cols[] = {
		{ "kernel", false }, { heads[0], true }, { heads[1], true }, { heads[2], true }, { "base count", true },
		{ "new count", true },
	};
	double scale = per_time_scale(d->per);

	if (!kernels_shown(d))
		return;
	snprintf(heads[0], sizeof(heads[0]), "base %s/%s", tu, per);
	snprintf(heads[1], sizeof(heads[1]), "new %s/%s", tu, per);
	snprintf(heads[2], sizeof(heads[2]), "change %s/%s", tu, per);
	doc__headingf(f, 2, "Kernels whose GPU time per %s changed most", per);
	doc__table(f, cols, DOC_NCOLS(cols));
	for (size_t i = 0; i < kernels_shown(d); i++) {
		const struct diff_kernel *k = &d->kernels[i];

		doc__row(f);
		doc__text(f, k->name, SIZE_MAX);
		doc__printf(f, "\t%.3f\t%.3f\t%+.3f\t%" PRIu64 "\t%" PRIu64, scale * k->base_per_s, scale * k->new_per_s,
			    scale * (k->new_per_s - k->base_per_s), (uint64_t)k->base_count, (uint64_t)k->new_count);
		doc__row_end(f);
	}
	doc__table_end(f);
}

/* The diff in Markdown or HTML (report_doc.h). */
static int diff_doc(struct doc *f, const void *arg)
{
	const struct diff *d = arg;

	doc_findings(f, d);
	doc_metrics(f, d);
	doc_kernels(f, d);
	return doc__finish(f);
}

int diff__write_markdown(FILE *f, const struct diff *d)
{
	struct doc md = { .f = f };

	return diff_doc(&md, d);
}

/* One run in the JSON: its path and its work; the figures of a unit the
 * diff does not count by are null. */
static json_t *json_run(const char *path, const struct diff *d, const struct diff_run *r)
{
	return json_pack("{s:o, s:f, s:f, s:o, s:o}", "path", ev_text(path, SIZE_MAX), "wall_s", r->wall_s, "work",
			 r->work, "work_per_s", d->per != DIFF_PER_SECOND ? json_real(r->work_per_s) : json_null(),
			 "median_step_s", d->per == DIFF_PER_STEP ? json_real(r->median_step_s) : json_null());
}

int diff__write_json(FILE *f, const struct diff *d)
{
	json_t *root = json_object(), *arr, *o;
	int err = -ENOMEM;

	if (!root)
		return -ENOMEM;
	if (json_object_set_new(root, "schema_version", json_integer(DIFF_SCHEMA_VERSION)) ||
	    json_object_set_new(root, "per", json_string(diff_per_name(d->per))) ||
	    json_object_set_new(root, "base", json_run(d->base_path, d, &d->base)) ||
	    json_object_set_new(root, "new", json_run(d->new_path, d, &d->new_)) ||
	    json_object_set_new(root, "headline", ev_text(d->headline, SIZE_MAX)))
		goto out;
	if (!(arr = json_array()) || json_object_set_new(root, "findings", arr))
		goto out;
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct diff_finding *x = &d->findings[i];

		o = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:o}", "rule", x->rule, "title",
			      x->title, "status", diff_status_name(x->status), "base_per_s", x->base_per_s, "new_per_s",
			      x->new_per_s, "delta_per_s", x->new_per_s - x->base_per_s, "base_cost_s", x->base_cost_s,
			      "new_cost_s", x->new_cost_s, "delta_s", x->new_cost_s - x->base_cost_s, "base_count",
			      (json_int_t)x->base_count, "new_count", (json_int_t)x->new_count, "summary",
			      ev_text(x->summary, SIZE_MAX));
		if (!o || json_array_append_new(arr, o))
			goto out;
	}
	if (!(arr = json_array()) || json_object_set_new(root, "metrics", arr))
		goto out;
	for (size_t i = 0; i < d->nmetrics; i++) {
		const struct diff_metric *m = &d->metrics[i];

		o = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:o, s:o, s:o, s:o}", "key", m->key, "label", m->label,
			      "unit", unit_name(m->unit), "base", m->base, "new", m->new_, "delta", m->new_ - m->base, "ratio",
			      m->base != 0 ? json_real(m->new_ / m->base) : json_null(), "base_per",
			      m->per_work ? json_real(m->base_per) : json_null(), "new_per",
			      m->per_work ? json_real(m->new_per) : json_null(), "ratio_per",
			      m->per_work && m->base_per != 0 ? json_real(m->new_per / m->base_per) : json_null());
		if (!o || json_array_append_new(arr, o))
			goto out;
	}
	if (!(arr = json_array()) || json_object_set_new(root, "kernels", arr))
		goto out;
	for (size_t i = 0; i < kernels_shown(d); i++) {
		const struct diff_kernel *k = &d->kernels[i];

		o = json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "name", ev_text(k->name, SIZE_MAX),
			      "base_per_s", k->base_per_s, "new_per_s", k->new_per_s, "delta_per_s",
			      k->new_per_s - k->base_per_s, "base_s", k->base_ns / 1e9, "new_s", k->new_ns / 1e9, "delta_s",
			      ((double)k->new_ns - (double)k->base_ns) / 1e9, "base_count", (json_int_t)k->base_count,
			      "new_count", (json_int_t)k->new_count);
		if (!o || json_array_append_new(arr, o))
			goto out;
	}
	err = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) || fputc('\n', f) == EOF ||
	      fflush(f) == EOF || ferror(f) ? -EIO : 0;
out:
	json_decref(root);
	return err;
}

int diff__write_html(FILE *f, const struct diff *d)
{
	return report__write_html_page(f, "inferscope-bpf diff", diff_doc, d);
}
