// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Clock calibration (analysis/read/clock_fit.c): from noisy synthetic reference
 * pairs with planted outliers, the fit recovers a known offset and drift,
 * and every mapped time is within the bound the fit states.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "clock_fit.h"

/* The truth: mono = (gpu - OFFSET) / (1 + DRIFT), a GPU clock 7 s ahead
 * that runs 25 ppm fast (the mock libcupti's clock, inverted). */
#define OFFSET	7000000000.0
#define DRIFT	25e-6

static double true_mono(double gpu)
{
	return (gpu - OFFSET) / (1.0 + DRIFT);
}

/* xorshift: the same noise on every run. */
static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* A pair at GPU time gpu: the CPU reads before and after, between 0.2 and
 * 3 us apart, the GPU read anywhere inside them. */
static struct clock_sample sample(double gpu)
{
	double mono = true_mono(gpu), width = 200 + 2800 * uniform(), before = mono - width * uniform();
	struct clock_sample s = { (uint64_t)gpu, (uint64_t)before, (uint64_t)(before + width) };

	return s;
}

/* One pair a second for 10 minutes; every 20th a planted outlier: the
 * midpoint moved by 50 to 500 us while the window stays narrow (a thread
 * interrupted in a way the window does not show). */
#define NPAIRS 600
#define OUTLIER_EVERY 20

static void make_pairs(struct clock_sample *s, size_t n, size_t *outliers)
{
	double gpu0 = 123456789012345.0;
	size_t i;

	*outliers = 0;
	for (i = 0; i < n; i++) {
		s[i] = sample(gpu0 + (double)i * 1e9 + 1e6 * uniform());
		if (i % OUTLIER_EVERY == 7) {
			uint64_t shift = 50000 + (uint64_t)(450000 * uniform());

			s[i].mono_before_ns += shift;
			s[i].mono_after_ns += shift;
			(*outliers)++;
		}
	}
}

static void test_recovers_offset_and_drift(void **state)
{
	static struct clock_sample s[NPAIRS];
	struct clock_fit f;
	size_t outliers, i;

	(void)state;
	make_pairs(s, NPAIRS, &outliers);
	assert_int_equal(clock_fit__compute(s, NPAIRS, &f), 0);
	assert_true(f.valid);
	assert_int_equal(f.samples, NPAIRS);
	assert_int_equal(f.rejected, outliers);
	assert_int_equal(f.used, NPAIRS - outliers);
	/* Drift: 25 ppm fast GPU means 1/(1 + 25e-6) CPU ns per GPU ns. */
	assert_true(fabs(f.slope - 1.0 / (1.0 + DRIFT)) < 0.01e-6);
	/* The bound: at most the widest window plus the residual. */
	assert_true(f.bound_ns < 3000);
	assert_true(f.residual_p50_ns <= f.residual_p99_ns);
	assert_true(f.residual_p99_ns <= f.residual_max_ns);
	/* Offset, and every GPU time inside the range, within the bound. */
	for (i = 0; i < 10000; i++) {
		double gpu = (double)f.gpu_min + uniform() * (double)(f.gpu_max - f.gpu_min);
		double err = (double)clock_fit__apply(&f, (uint64_t)gpu) - true_mono(gpu);

		assert_true(fabs(err) <= f.bound_ns + 1.0);
	}
}

/* Without outliers nothing is rejected. */
static void test_clean_pairs_all_used(void **state)
{
	struct clock_sample s[50];
	struct clock_fit f;
	size_t i;

	(void)state;
	for (i = 0; i < 50; i++)
		s[i] = sample(1e13 + (double)i * 2e8);
	assert_int_equal(clock_fit__compute(s, 50, &f), 0);
	assert_int_equal(f.rejected, 0);
	assert_true(fabs(f.drift_ppm - (1.0 / (1.0 + DRIFT) - 1.0) * 1e6) < 0.05);
	assert_true(fabs((double)clock_fit__apply(&f, (uint64_t)1.003e13) - true_mono(1.003e13)) <= f.bound_ns + 1.0);
}

/* Few pairs close together (a short run on a busy CPU): the drift is
 * told roughly, and the stated drift bound holds it. 200 draws of 2 and
 * 3 pairs within 0.3 s, sandwiches up to 3 us. */
static void test_few_pairs_drift_bound(void **state)
{
	const double truth = (1.0 / (1.0 + DRIFT) - 1.0) * 1e6;
	struct clock_sample s[3];
	struct clock_fit f;
	double worst = 0;
	int k;

	(void)state;
	for (k = 0; k < 200; k++) {
		size_t i, n = 2 + (size_t)(k % 2);

		for (i = 0; i < n; i++)
			s[i] = sample(5e12 + 3e8 * uniform() + (double)i * 1e3);
		assert_int_equal(clock_fit__compute(s, n, &f), 0);
		assert_true(f.drift_bound_ppm > 0);
		assert_true(fabs(f.drift_ppm - truth) <= f.drift_bound_ppm + 1e-6);
		worst = fmax(worst, fabs(f.drift_ppm - truth) / f.drift_bound_ppm);
	}
	print_message("drift error at most %.2f of the stated bound\n", worst);
	assert_true(worst > 0.05);	/* the bound is not vacuous */
}

/* One pair: an offset, no drift, the bound its half window. */
static void test_single_pair(void **state)
{
	struct clock_sample s = { 9000000000ull, 1000, 3000 };
	struct clock_fit f;

	(void)state;
	assert_int_equal(clock_fit__compute(&s, 1, &f), 0);
	assert_true(f.valid);
	assert_true(f.slope == 1.0);
	assert_int_equal(clock_fit__apply(&f, 9000000000ull), 2000);
	assert_int_equal(clock_fit__apply(&f, 9000000500ull), 2500);
	assert_true(f.bound_ns == 1000.0);
	assert_true(f.drift_bound_ppm == 0);
}

static void test_no_pairs(void **state)
{
	struct clock_fit f;

	(void)state;
	assert_int_equal(clock_fit__compute(NULL, 0, &f), -EINVAL);
	assert_false(f.valid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_offset_and_drift),
		cmocka_unit_test(test_clean_pairs_all_used),
		cmocka_unit_test(test_few_pairs_drift_bound),
		cmocka_unit_test(test_single_pair),
		cmocka_unit_test(test_no_pairs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
