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

/* Every stage fed each event in pass order. */
static int analysis__pass(struct analysis *a)
{
	struct summary_builder *sum = summary_builder__new(a->pass);
	struct gpu_builder *gpu = gpu_builder__new(a->pass);
	struct py_builder *py = py_builder__new();
	struct pass_event e;
	int err = 0, n = 0;

	a->ex = explain__new(a->pass);
	if (!sum || !gpu || !py || !a->ex)
		err = -ENOMEM;
	while (!err && (n = pass__next(a->pass, &e)) > 0) {
		err = summary_builder__event(sum, &e);
		err = err ?: gpu_builder__event(gpu, &e);
		err = err ?: py_builder__event(py, &e);
		err = err ?: explain__event(a->ex, &e);
		err = err ?: nccl_calls__event(&a->nccl, &e);
	}
	if (!err && n < 0)
		err = n;
	nccl_calls__finish(&a->nccl);
	err = err ?: summary_builder__finish(sum, &a->sum);
	err = err ?: gpu_builder__finish(gpu, a->sum, summary_builder__sampling(sum));
	if (!err) {
		err = py_builder__finish(py, &a->py);
		py = NULL;
	}
	err = err ?: explain__finish(a->ex, a->sum, a->py);
	if (!err && a->nccl.narrivals) {
		/* several ranks in one recording: lined up as several recordings are */
		struct ranks_source src = ranks_source_of(a, NULL);
		char msg[256];

		err = ranks__compute(&src, 1, &a->ranks, msg, sizeof(msg));
		if (!err && a->ranks)
			err = explain__finish_ranks(a->ranks, &a->ex->findings);
		if (!err)
			findings__rank(&a->ex->findings);
	}
	a->out_of_order = pass__out_of_order(a->pass);
	a->gpu_clock_pairs_cut = pass__clock_pairs_cut(a->pass);
	a->thread_events_cut = pass__thread_events_cut(a->pass);
	summary_builder__free(sum);
	gpu_builder__free(gpu);
	py_builder__free(py);
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
