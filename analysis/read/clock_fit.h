/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Mapping a GPU clock (CUPTI's cuptiGetTimestamp) onto CLOCK_MONOTONIC from
 * reference pairs: a straight line (offset and drift) fitted by least
 * squares, with outliers rejected, and a bound on the error of the mapping.
 * Pure: numbers in, numbers out. docs/clock-calibration.md explains the
 * method and why the bound holds.
 */
#ifndef INFERSCOPE_CLOCK_FIT_H
#define INFERSCOPE_CLOCK_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* One reference pair: the GPU clock read between two CPU clock reads. */
struct clock_sample {
	__u64 gpu_ns;
	__u64 mono_before_ns;
	__u64 mono_after_ns;
};

struct clock_fit {
	bool valid;		/* at least one usable sample */
	__u64 gpu_ref;		/* the first sample's GPU time: the line's origin */
	__u64 mono_ref;		/* the first sample's CPU midpoint */
	double offset_ns;	/* mono - mono_ref at gpu == gpu_ref */
	double slope;		/* CPU ns per GPU ns: 1 + drift */
	double drift_ppm;	/* (slope - 1) * 1e6 */
	size_t samples;		/* given */
	size_t used;		/* kept by the outlier rejection */
	size_t rejected;
	double residual_rms_ns;	/* of the kept samples' midpoints */
	double residual_max_ns;
	double residual_p50_ns;	/* |residual| percentiles of the kept samples */
	double residual_p99_ns;
	double bound_ns;	/* mapping error bound between the first and last kept sample */
	double drift_bound_ppm;	/* bound on drift_ppm's error: 2 bound_ns over the kept samples'
				 * GPU span (a true line through every sandwich is within bound_ns
				 * of the fit at both ends); 0 with one sample or one GPU time */
	__u64 gpu_min, gpu_max;	/* the range of the kept samples, GPU clock */
};

/* Fits s[0 .. n). 0, or -EINVAL when n is 0 (f->valid false), -ENOMEM. */
int clock_fit__compute(const struct clock_sample *s, size_t n, struct clock_fit *f);
/* CLOCK_MONOTONIC of GPU time gpu_ns (f valid). */
__u64 clock_fit__apply(const struct clock_fit *f, __u64 gpu_ns);

#endif
