// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Quantile q of sorted[0..n): linear interpolation between the order
 * statistics (Hyndman and Fan's type 7, the default of R and numpy). */
static double quantile(const double *sorted, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int bench_stats__summarize(const double *v, size_t n, struct bench_summary *s)
{
	double *w;

	if (!n)
		return -EINVAL;
	w = malloc(n * sizeof(*w));
	if (!w)
		return -ENOMEM;
	memcpy(w, v, n * sizeof(*w));
	qsort(w, n, sizeof(*w), cmp_double);
	s->n = n;
	s->median = quantile(w, n, 0.5);
	s->q1 = quantile(w, n, 0.25);
	s->q3 = quantile(w, n, 0.75);
	s->min = w[0];
	s->max = w[n - 1];
	free(w);
	return 0;
}

struct ranked {
	double v;
	int side;	/* 0: a, 1: b */
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

double bench_stats__mann_whitney(const double *a, size_t na, const double *b, size_t nb)
{
	size_t n = na + nb, i, j;
	double rank_a = 0, ties = 0, u, mean, var, z;
	struct ranked *r;

	if (!na || !nb)
		return 1;
	r = malloc(n * sizeof(*r));
	if (!r)
		return 1;
	for (i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], 0 };
	for (i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], 1 };
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* Ranks 1..n; a run of equal values shares the mean of its ranks. */
	for (i = 0; i < n; i = j) {
		double t, mid;

		for (j = i + 1; j < n && r[j].v == r[i].v; j++)
			;
		t = (double)(j - i);
		mid = (double)(i + 1 + j) / 2;
		for (size_t k = i; k < j; k++)
			if (r[k].side == 0)
				rank_a += mid;
		ties += t * t * t - t;
	}
	free(r);
	u = rank_a - (double)na * (double)(na + 1) / 2;
	mean = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
	if (var <= 0)
		return 1;
	z = (fabs(u - mean) - 0.5) / sqrt(var);
	if (z <= 0)
		return 1;
	return erfc(z / sqrt(2));
}

void bench_stats__compare(const double *old, size_t old_n, const double *cur, size_t cur_n,
			  enum bench_figure_kind k, const struct bench_cmp_opts *o, struct bench_change *c)
{
	struct bench_summary so, sc;

	memset(c, 0, sizeof(*c));
	c->verdict = BENCH_UNDECIDED;
	c->old_n = old_n;
	c->new_n = cur_n;
	c->p = 1;
	c->why_undecided = "no rounds";
	if (bench_stats__summarize(old, old_n, &so) || bench_stats__summarize(cur, cur_n, &sc))
		return;
	c->old_median = so.median;
	c->new_median = sc.median;
	c->why_undecided = "too few rounds";
	if (old_n < o->min_rounds || cur_n < o->min_rounds)
		return;
	c->why_undecided = "baseline median at or below 0";
	if (!(so.median > 0))
		return;
	c->why_undecided = NULL;
	c->ratio = sc.median / so.median;
	c->limit = k == BENCH_FIG_LATENCY ? o->max_ratio * o->max_ratio : o->max_ratio;
	c->spread = fmax(so.q3 - so.q1, sc.q3 - sc.q1);
	c->p = bench_stats__mann_whitney(old, old_n, cur, cur_n);
	c->verdict = BENCH_SAME;
	if (c->p >= o->alpha || fabs(sc.median - so.median) <= c->spread)
		return;
	if (c->ratio > c->limit)
		c->verdict = BENCH_REGRESSED;
	else if (c->ratio * c->limit < 1)
		c->verdict = BENCH_IMPROVED;
}

json_t *bench_stats__figure(const char *unit, enum bench_figure_kind k, const double *v, size_t n)
{
	struct bench_summary s;
	json_t *samples = json_array(), *j;
	size_t i;

	if (!samples || bench_stats__summarize(v, n, &s)) {
		json_decref(samples);
		return NULL;
	}
	for (i = 0; i < n; i++)
		json_array_append_new(samples, json_real(v[i]));
	j = json_pack("{s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:o}", "unit", unit, "cost",
		      k == BENCH_FIG_COST ? json_string("cpu") : k == BENCH_FIG_LATENCY ? json_string("latency") :
						json_false(),
		      "median", s.median, "q1", s.q1, "q3", s.q3, "min", s.min, "max", s.max, "samples", samples);
	return j;
}

static json_t *find_test(json_t *doc, const char *name)
{
	static const char *const lists[] = { "mechanisms", "checks", "results" };
	size_t i, k;
	json_t *t;

	for (k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
		json_array_foreach(json_object_get(doc, lists[k]), i, t)
			if (json_is_string(json_object_get(t, "name")) &&
			    !strcmp(json_string_value(json_object_get(t, "name")), name))
				return t;
	return NULL;
}

/* The samples of a figure object into a fresh array: count, -ENOENT when
 * it has none (written by a bench that kept no rounds), or -EINVAL. */
static int samples_of(json_t *fig, double **out)
{
	json_t *arr = json_object_get(fig, "samples"), *x;
	size_t i, n = json_array_size(arr);
	double *v;

	*out = NULL;
	if (!arr)
		return -ENOENT;
	if (!json_is_array(arr))
		return -EINVAL;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	json_array_foreach(arr, i, x) {
		if (!json_is_number(x)) {
			free(v);
			return -EINVAL;
		}
		v[i] = json_number_value(x);
	}
	*out = v;
	return (int)n;
}

int bench_stats__compare_test(json_t *baseline, json_t *test, const struct bench_cmp_opts *o,
			      struct bench_figure_change *out, size_t max)
{
	const char *name = json_string_value(json_object_get(test, "name")), *key;
	json_t *old_test, *fig;
	size_t done = 0;

	if (!name || !(old_test = find_test(baseline, name)))
		return 0;
	json_object_foreach(test, key, fig) {
		json_t *old_fig = json_object_get(old_test, key);
		double *ov, *nv;
		int on, nn;

		const char *cost = json_string_value(json_object_get(fig, "cost"));

		if (done >= max || !json_is_object(fig) || !cost || !json_is_object(old_fig))
			continue;
		on = samples_of(old_fig, &ov);
		nn = samples_of(fig, &nv);
		if (on >= 0 && nn >= 0) {
			out[done].figure = key;
			bench_stats__compare(ov, (size_t)on, nv, (size_t)nn,
					     strcmp(cost, "latency") ? BENCH_FIG_COST : BENCH_FIG_LATENCY, o,
					     &out[done].change);
			done++;
		}
		free(ov);
		free(nv);
		if (on == -ENOENT && nn >= 0)
			continue;	/* nothing to compare with */
		if (on < 0 || nn < 0)
			return on < 0 ? on : nn;
	}
	return (int)done;
}

void bench_stats__describe(char *buf, size_t len, const struct bench_figure_change *fc, const char *unit,
			   double alpha)
{
	const struct bench_change *c = &fc->change;
	static const char *const verdicts[] = {
		[BENCH_SAME] = "same",
		[BENCH_REGRESSED] = "REGRESSION",
		[BENCH_IMPROVED] = "improved",
		[BENCH_UNDECIDED] = "undecided",
	};
	double delta = c->new_median - c->old_median;

	if (!unit)
		unit = "";
	if (c->verdict == BENCH_UNDECIDED)
		snprintf(buf, len, "%s %.4g -> %.4g %s (%zu/%zu rounds): undecided (%s)", fc->figure, c->old_median,
			 c->new_median, unit, c->old_n, c->new_n, c->why_undecided);
	else
		snprintf(buf, len, "%s %.4g -> %.4g %s (x%.2f %s x%.3g, %+.4g %s IQR %.4g, Mann-Whitney p=%.2g %s %g, "
			 "%zu/%zu rounds): %s", fc->figure, c->old_median, c->new_median, unit, c->ratio,
			 c->ratio > c->limit || c->ratio * c->limit < 1 ? "past" : "within", c->limit, delta,
			 fabs(delta) > c->spread ? ">" : "<=", c->spread, c->p, c->p < alpha ? "<" : ">=", alpha,
			 c->old_n, c->new_n, verdicts[c->verdict]);
}
