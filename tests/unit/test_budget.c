// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The overhead budget's controller (user/record/budget.h) driven by a simulated
 * job: a thread whose probe hits arrive at a known rate while the hot path
 * is on, stepped every 10 ms the way the recorder steps it. Checks the
 * promise: the charged cost stays within the budget over time, the
 * hot path stays on when it fits, and each cycle lasts about a period.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "budget.h"

#define MS 1000000ULL
#define STEP (10 * MS)
#define HIT_NS 700.0

struct run {
	double cost_ns;		/* charged over the run */
	__u64 on_ns;		/* time the hot path was on */
	__u64 switches;
	__u64 shortest_on;	/* shortest completed on-window */
	__u64 first_off;	/* from the first hit to the first switch off */
};

/* Whether the simulated recordings tell the budget when they end (-d). */
static bool end_known;

/* hot_per_s: hits per second while the hot path is on, from idle_s on;
 * cold_per_s: hits of probes never switched off. */
static struct run simulate_after(double budget, double idle_s, double hot_per_s, double cold_per_s, __u64 seconds)
{
	struct budget b;
	struct run r = { 0, 0, 0, ~0ULL, 0 };
	__u64 t = 1000 * MS, end = t + seconds * 1000 * MS, next = t, on_since = t, busy = t + (__u64)(idle_s * 1e9);
	double carry = 0;

	budget__init(&b, budget, HIT_NS, t);
	if (end_known)
		budget__set_end(&b, end);
	while (t < end) {
		double hits = t < busy ? 0 : (b.on ? hot_per_s : 0) + cold_per_s;
		__u64 whole;

		t += STEP;
		if (b.on && t >= busy)
			r.on_ns += STEP;
		carry += hits * STEP / 1e9;
		whole = (__u64)carry;
		carry -= (double)whole;
		r.cost_ns += (double)whole * HIT_NS;
		budget__charge(&b, (double)whole * HIT_NS, t);
		if (t < next)
			continue;
		switch (budget__decide(&b, t, &next)) {
		case BUDGET_SWITCH_OFF:
			if (!r.switches)
				r.first_off = t - busy;
			if (t - on_since < r.shortest_on)
				r.shortest_on = t - on_since;
			budget__switched(&b, false, t);
			r.switches++;
			break;
		case BUDGET_SWITCH_ON:
			budget__switched(&b, true, t);
			on_since = t;
			r.switches++;
			break;
		case BUDGET_KEEP:
			break;
		}
		assert_true(next > t);
	}
	return r;
}

static struct run simulate(double budget, double hot_per_s, double cold_per_s, __u64 seconds)
{
	return simulate_after(budget, 0, hot_per_s, cold_per_s, seconds);
}

/* 10k launches/s at 0.7 us: 0.7% of the thread, under 1%: never sampled. */
static void test_within_budget(void **state)
{
	struct run r = simulate(0.01, 10000, 0, 60);

	(void)state;
	assert_int_equal(r.switches, 0);
	assert_int_equal(r.on_ns, 60000 * MS);
}

/* 50k and 150k launches/s (3.5% and 10.5%): the cost over a minute is the
 * budget (plus the burst credit, 1% of a period), in cycles of about a
 * second, each on-window at least BUDGET_MIN_ON_NS. */
static void check_sampled(double rate)
{
	struct run r = simulate(0.01, rate, 0, 60);
	double share = r.cost_ns / (60 * 1e9);

	print_message("%.0f hits/s: %.3f%% charged, on %.1f%% of the time, %llu switches, shortest window %llu ms\n",
		      rate, 100 * share, 100.0 * r.on_ns / (60000 * MS), (unsigned long long)r.switches,
		      (unsigned long long)(r.shortest_on / MS));
	assert_true(share > 0.009 && share < 0.0115);
	assert_true(r.switches >= 2 * 45 && r.switches <= 2 * 75);
	assert_true(r.shortest_on >= BUDGET_MIN_ON_NS);
}

static void test_sampled_50k(void **state)
{
	(void)state;
	check_sampled(50000);
}

static void test_sampled_150k(void **state)
{
	(void)state;
	check_sampled(150000);
}

/* A hot path that costs a third of the thread (500k hits/s): a window of
 * BUDGET_MIN_ON_NS costs 35 ms, three times the burst, and is paid back
 * by the gap after it. A run of any length ends within the budget, its
 * burst and one such window (with one 10 ms step's charge of slack); over
 * a minute, the budget. */
static void test_expensive_windows(void **state)
{
	(void)state;
	for (__u64 secs = 2; secs <= 64; secs *= 2) {
		struct run r = simulate(0.01, 500000, 0, secs);
		double share = r.cost_ns / (secs * 1e9), window = 500000 * HIT_NS * BUDGET_MIN_ON_NS / 1e9;

		print_message("%llu s at 35%%: %.3f%% charged, %llu switches\n", (unsigned long long)secs, 100 * share,
			      (unsigned long long)r.switches);
		assert_true(r.cost_ns <= 0.01 * (secs * 1e9 + BUDGET_PERIOD_NS) + window + 500000 * HIT_NS * STEP / 1e9);
		if (secs >= 32)
			assert_true(share > 0.009 && share < 0.0115);
	}
}

/* Probes that cannot be switched off already cost 2%: the hot path goes
 * off after its first window (sized like any, at least BUDGET_MIN_ON_NS) and comes back
 * only for a floor window of BUDGET_MIN_ON_NS every BUDGET_FLOOR_NS after
 * each switch off: in 30 s, 5 of them. */
static void test_cold_probes_over_budget(void **state)
{
	struct run r = simulate(0.01, 50000, 2 * 0.01 * 1e9 / HIT_NS, 30);
	__u64 floors = (30000 * MS - BUDGET_MIN_ON_NS) / (BUDGET_FLOOR_NS + BUDGET_MIN_ON_NS);

	(void)state;
	print_message("cold probes over budget: on %llu ms in 30 s, %llu switches, shortest window %llu ms\n",
		      (unsigned long long)(r.on_ns / MS), (unsigned long long)r.switches,
		      (unsigned long long)(r.shortest_on / MS));
	assert_int_equal(floors, 5);
	assert_int_equal(r.switches, 1 + 2 * floors);
	assert_true(r.shortest_on >= BUDGET_MIN_ON_NS);
	/* the first window sized to the rate (1% of a second at 5.5%: 182
	 * ms), each floor window BUDGET_MIN_ON_NS, each to the next step */
	assert_true(r.on_ns <= 182 * MS + STEP + floors * (BUDGET_MIN_ON_NS + STEP));
}

/* A minute of loading (no probe hits), then 150k launches/s for 10 s: the
 * idle minute banks no credit beyond the cap (1% of a second), so the busy
 * phase costs the budget, not the minute's 600 ms at full price. */
static void test_idle_start_banks_nothing(void **state)
{
	struct run r = simulate_after(0.01, 60, 150000, 0, 70);
	double share = r.cost_ns / (10 * 1e9);

	(void)state;
	print_message("after an idle minute: %.3f%% of the busy 10 s charged, on %.1f%% of it\n", 100 * share,
		      100.0 * r.on_ns / (10000 * MS));
	assert_true(share < 0.0125);
	assert_true(r.on_ns < 2000 * MS);
}

/* A launched job that starts launching a second after the recording (at
 * 35% of its thread: the 10 ms burst credit lasts 30 ms): its first window
 * counts from its first hit, not from the recording's start, and lasts
 * BUDGET_MIN_ON_NS like any, long enough to tell the call rate. */
static void test_first_window_from_first_hit(void **state)
{
	struct run r = simulate_after(0.01, 1, 500000, 0, 4);

	(void)state;
	print_message("first window: %llu ms from the first hit\n", (unsigned long long)(r.first_off / MS));
	assert_true(r.first_off >= BUDGET_MIN_ON_NS);
	assert_true(r.first_off <= BUDGET_MIN_ON_NS + 2 * STEP);
}

/* Short recordings of a hot path at 120k to 200k hits/s (8.4% to 14% of
 * the thread while on): a window near the end leaves the budget overspent
 * by up to its cost, which nothing repays before the end. Told the end
 * (-d), the budget opens no such window, and each run ends within what it
 * allows (the budget and the burst credit) and one 10 ms step's charge.
 * Lengths 2 to 12 s and three rates, so that the last window falls all
 * over its cycle. */
static void test_known_end_within_budget(void **state)
{
	static const double rates[] = { 120000, 150000, 200000 };
	double worst[2] = { -1e18, -1e18 };
	struct budget b;

	(void)state;
	budget__init(&b, 0.01, HIT_NS, 0);
	for (int k = 0; k < 2; k++) {
		end_known = k;
		for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
			for (__u64 secs = 2; secs <= 12; secs++) {
				struct run r = simulate(0.01, rates[i], 0, secs);
				double over = r.cost_ns - (0.01 * (double)secs * 1e9 + budget__cap_ns(&b));

				if (over > worst[k])
					worst[k] = over;
			}
		}
	}
	end_known = false;
	print_message("most over the allowance: %.1f ms with the end unknown, %.1f ms with it known\n",
		      worst[0] / 1e6, worst[1] / 1e6);
	assert_true(worst[0] > 5e6);	/* the case this is for */
	assert_true(worst[1] <= HIT_NS * 200000 * (double)STEP / 1e9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_budget),
		cmocka_unit_test(test_sampled_50k),
		cmocka_unit_test(test_sampled_150k),
		cmocka_unit_test(test_expensive_windows),
		cmocka_unit_test(test_cold_probes_over_budget),
		cmocka_unit_test(test_idle_start_banks_nothing),
		cmocka_unit_test(test_first_window_from_first_hit),
		cmocka_unit_test(test_known_end_within_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
