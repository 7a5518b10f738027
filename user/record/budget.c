// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "budget.h"

void budget__init(struct budget *b, double fraction, double hit_cost_ns, __u64 now_ns)
{
	memset(b, 0, sizeof(*b));
	b->fraction = fraction;
	b->hit_cost_ns = hit_cost_ns;
	b->last_ns = now_ns;
	b->credit_ns = budget__cap_ns(b);
	b->on = true;
	b->on_since_ns = now_ns;
}

void budget__set_end(struct budget *b, __u64 end_ns)
{
	b->end_ns = end_ns;
}

double budget__cap_ns(const struct budget *b)
{
	return b->fraction * BUDGET_PERIOD_NS;
}

void budget__charge(struct budget *b, double cost, __u64 now_ns)
{
	if (now_ns > b->last_ns)
		b->credit_ns += b->fraction * (double)(now_ns - b->last_ns);
	if (b->credit_ns > budget__cap_ns(b))
		b->credit_ns = budget__cap_ns(b);
	b->credit_ns -= cost;
	b->spent_ns += cost;
	/* A window's length counts from its first cost: the first one
	 * opens with the recording, long before a launched job's first
	 * launch on a busy host. */
	if (b->on && !b->window_spent_ns && cost > 0 && b->last_ns > b->on_since_ns)
		b->on_since_ns = b->last_ns;
	if (b->on)
		b->window_spent_ns += cost;
	b->last_ns = now_ns;
}

/* The on-window that makes one on/off cycle last about a period when the
 * probes cost `rate` of the thread's time while on: on for w, off until the
 * credit is back, w * rate = fraction * period. */
static __u64 window_ns(const struct budget *b, __u64 now_ns)
{
	__u64 on_for = now_ns - b->on_since_ns;
	double rate = on_for ? b->window_spent_ns / (double)on_for : 0, w;

	if (rate <= b->fraction)
		return BUDGET_PERIOD_NS;
	w = BUDGET_PERIOD_NS * b->fraction / rate;
	return w < BUDGET_MIN_ON_NS ? BUDGET_MIN_ON_NS : (__u64)w;
}

enum budget_action budget__decide(const struct budget *b, __u64 now_ns, __u64 *next_ns)
{
	double credit = b->credit_ns;

	if (now_ns > b->last_ns)
		credit += b->fraction * (double)(now_ns - b->last_ns);
	*next_ns = now_ns + BUDGET_CHECK_NS;
	if (b->on) {
		__u64 end;

		if (credit >= 0)
			return BUDGET_KEEP;
		/* Overspent: the window that was started is finished first,
		 * the first one too, so that each one is long enough to tell
		 * the call rate. */
		end = b->on_since_ns + (b->floor ? BUDGET_MIN_ON_NS : window_ns(b, now_ns));
		if (now_ns < end) {
			if (end < *next_ns)
				*next_ns = end;
			return BUDGET_KEEP;
		}
		return BUDGET_SWITCH_OFF;
	}
	if (now_ns >= b->off_since_ns + BUDGET_FLOOR_NS)
		return BUDGET_SWITCH_ON;
	if (credit >= 0 && b->end_ns) {
		/* a window the credit repays by the end, or none */
		double cost = b->last_window_ns > 0 ? b->last_window_ns : budget__cap_ns(b);

		if (now_ns < b->end_ns && credit + b->fraction * (double)(b->end_ns - now_ns) >= cost)
			return BUDGET_SWITCH_ON;
		*next_ns = b->off_since_ns + BUDGET_FLOOR_NS;
		return BUDGET_KEEP;
	}
	if (credit >= 0)
		return BUDGET_SWITCH_ON;
	/* The credit grows by `fraction` per ns; the floor window comes
	 * BUDGET_FLOOR_NS after the switch off, whichever is first. */
	*next_ns = now_ns + (__u64)(-credit / b->fraction) + 1;
	if (*next_ns > b->off_since_ns + BUDGET_FLOOR_NS)
		*next_ns = b->off_since_ns + BUDGET_FLOOR_NS;
	return BUDGET_KEEP;
}

void budget__switched(struct budget *b, bool on, __u64 now_ns)
{
	b->on = on;
	b->switches++;
	if (on) {
		b->floor = b->credit_ns + (now_ns > b->last_ns ? b->fraction * (double)(now_ns - b->last_ns) : 0) < 0;
		b->floor_windows += b->floor;
		b->on_since_ns = now_ns;
		b->window_spent_ns = 0;
	} else {
		b->sampling = true;
		b->off_since_ns = now_ns;
		b->last_window_ns = b->window_spent_ns;
	}
}
