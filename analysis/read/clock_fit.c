// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Least squares on (x, y) = (gpu - gpu_ref, midpoint - mono_ref), in
 * doubles: a recording of days is 1e14 ns, well inside a double's 2^53.
 *
 * Outliers: a pair whose CPU reads were far apart was already discarded by
 * the bridge (it keeps the narrowest of several sandwiches); what remains is
 * a pair whose midpoint sits far from the line (the reading thread was
 * interrupted right after or before cuptiGetTimestamp, in a way the window
 * does not show). A sample is rejected when its residual exceeds
 * REJECT_SIGMAS robust standard deviations (1.4826 * the median absolute
 * residual) plus its own half window, with a floor of REJECT_FLOOR_NS;
 * the fit is redone until nothing more is rejected.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "clock_fit.h"

#define REJECT_SIGMAS	5.0
#define REJECT_FLOOR_NS	1000.0
#define MAX_ROUNDS	8

static double midpoint(const struct clock_sample *s)
{
	return (double)s->mono_before_ns + (double)(s->mono_after_ns - s->mono_before_ns) / 2.0;
}

static double half_width(const struct clock_sample *s)
{
	return (double)(s->mono_after_ns - s->mono_before_ns) / 2.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0 .. n), sorting v. */
static double quantile(double *v, size_t n, double q)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)ceil(q * (double)n);
	return v[i ? i - 1 : 0];
}

/* Least squares over the kept samples: slope and intercept of y on x. */
static void line(const double *x, const double *y, const bool *keep, size_t n, double *slope, double *icpt)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		if (keep[i]) {
			mx += x[i];
			my += y[i];
			m++;
		}
	mx /= (double)m;
	my /= (double)m;
	for (i = 0; i < n; i++)
		if (keep[i]) {
			sxx += (x[i] - mx) * (x[i] - mx);
			sxy += (x[i] - mx) * (y[i] - my);
		}
	/* One sample, or all at one GPU time: no drift can be seen. */
	*slope = sxx > 0 ? sxy / sxx : 1.0;
	*icpt = my - *slope * mx;
}

int clock_fit__compute(const struct clock_sample *s, size_t n, struct clock_fit *f)
{
	double *x, *y, *r, *tmp, slope = 1.0, icpt = 0.0;
	bool *keep;
	size_t i, m, round;
	int changed = 1;

	memset(f, 0, sizeof(*f));
	f->samples = n;
	if (!n)
		return -EINVAL;
	x = calloc(n, sizeof(*x));
	y = calloc(n, sizeof(*y));
	r = calloc(n, sizeof(*r));
	tmp = calloc(n, sizeof(*tmp));
	keep = calloc(n, sizeof(*keep));
	if (!x || !y || !r || !tmp || !keep) {
		free(x), free(y), free(r), free(tmp), free(keep);
		return -ENOMEM;
	}
	f->gpu_ref = s[0].gpu_ns;
	f->mono_ref = s[0].mono_before_ns;
	for (i = 0; i < n; i++) {
		x[i] = (double)(__s64)(s[i].gpu_ns - f->gpu_ref);
		y[i] = midpoint(&s[i]) - (double)f->mono_ref;
		keep[i] = true;
	}
	for (round = 0; changed && round < MAX_ROUNDS; round++) {
		double sigma;

		line(x, y, keep, n, &slope, &icpt);
		for (i = 0, m = 0; i < n; i++) {
			r[i] = y[i] - (icpt + slope * x[i]);
			if (keep[i])
				tmp[m++] = fabs(r[i]);
		}
		if (m < 3)
			break;	/* too few to tell an outlier from the line */
		sigma = 1.4826 * quantile(tmp, m, 0.5);
		changed = 0;
		for (i = 0; i < n; i++) {
			double limit = fmax(REJECT_SIGMAS * sigma, REJECT_FLOOR_NS) + half_width(&s[i]);

			if (keep[i] && fabs(r[i]) > limit) {
				keep[i] = false;
				changed = 1;
			}
		}
	}
	line(x, y, keep, n, &slope, &icpt);
	f->valid = true;
	f->slope = slope;
	f->offset_ns = icpt;
	f->drift_ppm = (slope - 1.0) * 1e6;
	f->gpu_min = UINT64_MAX;
	for (i = 0, m = 0; i < n; i++) {
		double res = fabs(y[i] - (icpt + slope * x[i]));

		if (!keep[i]) {
			f->rejected++;
			continue;
		}
		tmp[m++] = res;
		f->residual_rms_ns += res * res;
		f->residual_max_ns = fmax(f->residual_max_ns, res);
		f->bound_ns = fmax(f->bound_ns, res + half_width(&s[i]));
		if (s[i].gpu_ns < f->gpu_min)
			f->gpu_min = s[i].gpu_ns;
		if (s[i].gpu_ns > f->gpu_max)
			f->gpu_max = s[i].gpu_ns;
	}
	f->used = m;
	if (f->gpu_max > f->gpu_min)
		f->drift_bound_ppm = 2.0 * f->bound_ns / (double)(f->gpu_max - f->gpu_min) * 1e6;
	f->residual_rms_ns = sqrt(f->residual_rms_ns / (double)m);
	f->residual_p50_ns = quantile(tmp, m, 0.5);
	f->residual_p99_ns = quantile(tmp, m, 0.99);
	free(x), free(y), free(r), free(tmp), free(keep);
	return 0;
}

__u64 clock_fit__apply(const struct clock_fit *f, __u64 gpu_ns)
{
	double x = (double)(__s64)(gpu_ns - f->gpu_ref);

	return f->mono_ref + (__u64)(__s64)llround(f->offset_ns + f->slope * x);
}
