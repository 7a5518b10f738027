// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_summary.h"

/* What the ranks read of a's recording, named name. */
static struct ranks_source ranks_source_of(const struct analysis *a, const char *name)
{
	return (struct ranks_source){ .r = a->r, .pass = a->pass, .nccl = &a->nccl,
				      .attr = a->ex ? a->ex->attr : NULL, .findings = a->ex ? &a->ex->findings : NULL,
				      .name = name };
}

/*
 * The stages of an analysis, in one table. Each is fed every event of the
 * pass in turn (event; NULL: none), then each finishes in the table's
 * order, reading the results of those before it (struct analysis, and
 * the summary's sampling through summary_builder__sampling), never their
 * state. free runs for every stage that started, error or not.
 */
struct stages {
	struct analysis *a;
	struct summary_builder *sum;
	struct gpu_builder *gpu;
	struct py_builder *py;
};

struct stage {
	int (*start)(struct stages *x);		/* 0 or -errno */
	int (*event)(struct stages *x, const struct pass_event *e);
	int (*finish)(struct stages *x);
	void (*free)(struct stages *x);
};

static int summary_start(struct stages *x)
{
	x->sum = summary_builder__new(x->a->pass);
	return x->sum ? 0 : -errno;
}

static int summary_event(struct stages *x, const struct pass_event *e)
{
	return summary_builder__event(x->sum, e);
}

/* The summary but for its GPU tables (the next stage's). */
static int summary_finish(struct stages *x)
{
	return summary_builder__finish(x->sum, &x->a->sum);
}

static void summary_free(struct stages *x)
{
	summary_builder__free(x->sum);
}

static int gpu_start(struct stages *x)
{
	x->gpu = gpu_builder__new(x->a->pass);
	return x->gpu ? 0 : -ENOMEM;
}

static int gpu_event(struct stages *x, const struct pass_event *e)
{
	return gpu_builder__event(x->gpu, e);
}

/* Reads the summary's threads and sampling. */
static int gpu_finish(struct stages *x)
{
	return gpu_builder__finish(x->gpu, x->a->sum, summary_builder__sampling(x->sum));
}

static void gpu_free(struct stages *x)
{
	gpu_builder__free(x->gpu);
}

static int py_start(struct stages *x)
{
	x->py = py_builder__new();
	return x->py ? 0 : -ENOMEM;
}

static int py_event(struct stages *x, const struct pass_event *e)
{
	return py_builder__event(x->py, e);
}

static int py_finish(struct stages *x)
{
	int err = py_builder__finish(x->py, &x->a->py);

	x->py = NULL;	/* freed either way */
	return err;
}

static void py_free(struct stages *x)
{
	py_builder__free(x->py);
}

/* The timeline, the attribution, the wait chains, the series, the steps
 * and the rules (explain.h), kept with the analysis. */
static int explain_start(struct stages *x)
{
	x->a->ex = explain__new(x->a->pass);
	return x->a->ex ? 0 : -ENOMEM;
}

static int explain_event(struct stages *x, const struct pass_event *e)
{
	return explain__event(x->a->ex, e);
}

/* The rules read the summary and the Python report. */
static int explain_finish(struct stages *x)
{
	return explain__finish(x->a->ex, x->a->sum, x->a->py);
}

static int nccl_event(struct stages *x, const struct pass_event *e)
{
	return nccl_calls__event(&x->a->nccl, e);
}

static int nccl_finish(struct stages *x)
{
	nccl_calls__finish(&x->a->nccl);
	return 0;
}

/* Several ranks in one recording, lined up as several recordings are:
 * from the NCCL calls, the attribution and the findings; the straggler's
 * findings join the others. */
static int ranks_finish(struct stages *x)
{
	struct analysis *a = x->a;
	struct ranks_source src = ranks_source_of(a, NULL);
	char msg[256];
	int err;

	if (!a->nccl.narrivals)
		return 0;
	err = ranks__compute(&src, 1, &a->ranks, msg, sizeof(msg));
	if (!err && a->ranks)
		err = explain__finish_ranks(a->ranks, &a->ex->findings);
	if (!err)
		findings__rank(&a->ex->findings);
	if (!err && a->ranks)
		ranks__top_findings(a->ranks, 0, &a->ex->findings);
	return err;
}

static const struct stage stages[] = {
	{ summary_start, summary_event, summary_finish, summary_free },	/* summary.h */
	{ gpu_start, gpu_event, gpu_finish, gpu_free },			/* its GPU tables, gpu_summary.h */
	{ py_start, py_event, py_finish, py_free },			/* Python stacks, py_report.h */
	{ explain_start, explain_event, explain_finish, NULL },		/* findings, explain.h */
	{ NULL, nccl_event, nccl_finish, NULL },			/* NCCL calls, nccl.h */
	{ NULL, NULL, ranks_finish, NULL },				/* ranks, ranks.h */
};
#define STAGES		(sizeof(stages) / sizeof(stages[0]))
#define SUMMARY_STAGES	2	/* the summary's: its own and its GPU tables */

/* The first n stages over a's pass; what they make is a's (analysis__free). */
static int stages__run(struct analysis *a, size_t n)
{
	struct stages x = { .a = a };
	struct pass_event e;
	size_t started = 0;
	int err = 0, got = 0;

	while (started < n && !err) {
		err = stages[started].start ? stages[started].start(&x) : 0;
		started++;
	}
	while (!err && (got = pass__next(a->pass, &e)) > 0)
		for (size_t i = 0; i < n && !err; i++)
			err = stages[i].event ? stages[i].event(&x, &e) : 0;
	if (!err && got < 0)
		err = got;
	for (size_t i = 0; i < n && !err; i++)
		err = stages[i].finish ? stages[i].finish(&x) : 0;
	while (started--)
		if (stages[started].free)
			stages[started].free(&x);
	return err;
}

/* Every stage, then what the pass counted. */
static int analysis__pass(struct analysis *a)
{
	int err = stages__run(a, STAGES);

	a->out_of_order = pass__out_of_order(a->pass);
	a->gpu_clock_pairs_cut = pass__clock_pairs_cut(a->pass);
	a->thread_events_cut = pass__thread_events_cut(a->pass);
	return err;
}

int analysis__summary(const struct recording *r, struct summary **out)
{
	struct analysis a = { .r = r };
	int err;

	*out = NULL;
	err = pass__open(r, &a.pass);
	if (err)
		return err;
	err = stages__run(&a, SUMMARY_STAGES);
	if (err)
		summary__free(a.sum);
	else
		*out = a.sum;
	pass__free(a.pass);
	return err;
}

int analysis__run_pass(struct pass *p, struct analysis **out)
{
	struct analysis *a = calloc(1, sizeof(*a));
	int err;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->pass = p;
	a->r = pass__recording(p);
	err = analysis__pass(a);
	if (err) {
		a->pass = NULL;
		analysis__free(a);
		return err;
	}
	*out = a;
	return 0;
}

int analysis__run(const struct recording *r, struct analysis **out)
{
	struct pass *p;
	int err;

	*out = NULL;
	err = pass__open(r, &p);
	if (err)
		return err;
	err = analysis__run_pass(p, out);
	if (err)
		pass__free(p);
	return err;
}

void analysis__free(struct analysis *a)
{
	if (!a)
		return;
	ranks__free(a->ranks);
	nccl_calls__free(&a->nccl);
	explain__free(a->ex);
	py_report__free(a->py);
	summary__free(a->sum);
	pass__free(a->pass);
	free(a);
}

int analysis_set__compute(struct analysis_set *s, char *err, size_t errlen)
{
	struct ranks_source *src = calloc(s->n ? s->n : 1, sizeof(*src));
	int e;

	s->ranks = NULL;
	memset(&s->findings, 0, sizeof(s->findings));
	if (!src) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		src[i] = ranks_source_of(s->a[i], s->names[i]);
	e = ranks__compute(src, s->n, &s->ranks, err, errlen);
	if (!e && s->ranks && (e = explain__finish_ranks(s->ranks, &s->findings)))
		snprintf(err, errlen, "out of memory");
	if (!e)
		findings__rank(&s->findings);
	free(src);
	return e;
}

void analysis_set__clear(struct analysis_set *s)
{
	ranks__free(s->ranks);
	s->ranks = NULL;
	findings__free(&s->findings);
}
