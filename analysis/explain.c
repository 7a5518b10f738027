// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "rules.h"

extern const struct rule rule_gil_contention, rule_cpu_contention, rule_page_fault_storm, rule_blocked_on_thread,
	rule_allocator_churn, rule_sync_stall, rule_launch_bound, rule_pageable_memcpy, rule_device_memory_leak,
	rule_gpu_idle, rule_host_bound, rule_cuda_errors;

/* The causes a thread's time splits into are claimed by the specific rules
 * first; gpu_idle and host_bound, last, count what is left. */
const struct rule *const rules_all[] = {
	&rule_gil_contention,
	&rule_cpu_contention,
	&rule_page_fault_storm,
	&rule_blocked_on_thread,
	&rule_allocator_churn,
	&rule_sync_stall,
	&rule_launch_bound,
	&rule_pageable_memcpy,
	&rule_device_memory_leak,
	&rule_cuda_errors,
	&rule_gpu_idle,
	&rule_host_bound,
};
const size_t rules_count = sizeof(rules_all) / sizeof(rules_all[0]);

size_t explain__rule_count(void)
{
	return rules_count;
}

const char *explain__rule_id(size_t i)
{
	return i < rules_count ? rules_all[i]->id : NULL;
}

const char *explain__rule_title(const char *id)
{
	for (size_t i = 0; i < rules_count; i++)
		if (strcmp(rules_all[i]->id, id) == 0)
			return rules_all[i]->title;
	return id;
}

static int run_pass(struct explain *e, struct rule_ctx *c, void **state)
{
	struct pass_event ev;
	int err = 0, n;

	for (size_t i = 0; i < rules_count && !err; i++) {
		struct tl_observer obs = { 0 };

		if (!rules_all[i]->start)
			continue;
		state[i] = rules_all[i]->start(c, &obs);
		if (!state[i])
			return -ENOMEM;
		obs.ctx = state[i];
		err = timeline__observe(e->tl, &obs);
	}
	while (!err && (n = pass__next(e->pass, &ev)) > 0)
		err = timeline__event(e->tl, &ev);
	if (!err)
		err = timeline__finish(e->tl);
	if (!err)
		err = attribution__finish(e->attr);
	if (!err)
		err = series__finish(e->series);
	if (!err)
		err = steps__finish(e->steps);
	return err;
}

int explain__run(const struct recording *r, const struct summary *sum, const struct py_report *py,
		 struct explain **out)
{
	struct explain *e = calloc(1, sizeof(*e));
	void **state = calloc(rules_count, sizeof(*state));
	struct rule_ctx c = { 0 };
	int err;

	*out = NULL;
	if (!e || !state) {
		free(e);
		free(state);
		return -ENOMEM;
	}
	err = pass__open(r, &e->pass);
	if (!err) {
		e->tl = timeline__new(e->pass, r);
		e->attr = e->tl ? attribution__new(e->tl, e->pass) : NULL;
		if (!e->attr)
			err = -ENOMEM;
	}
	/* the attribution first: the series takes each gap's split from it */
	if (!err)
		err = timeline__observe(e->tl, attribution__observer(e->attr));
	if (!err) {
		e->series = series__new(e->pass, e->tl, e->attr, py);
		if (!e->series)
			err = -ENOMEM;
	}
	if (!err) {
		e->steps = steps__new(e->tl);
		err = e->steps ? timeline__observe(e->tl, steps__observer(e->steps)) : -ENOMEM;
	}
	if (!err) {
		c.r = r;
		c.pass = e->pass;
		c.tl = e->tl;
		c.attr = e->attr;
		c.py = py;
		c.sum = sum;
		c.out = &e->findings;
		c.start = pass__start(e->pass);
		c.end = pass__end(e->pass);
		err = run_pass(e, &c, state);
	}
	for (size_t i = 0; i < rules_count && !err; i++)
		err = rules_all[i]->finish(state[i], &c);
	for (size_t i = 0; i < rules_count; i++)
		if (rules_all[i]->free)
			rules_all[i]->free(state[i]);
		else
			free(state[i]);
	free(state);
	free(c.claims);
	if (err) {
		explain__free(e);
		return err;
	}
	findings__rank(&e->findings);
	*out = e;
	return 0;
}

void explain__free(struct explain *e)
{
	if (!e)
		return;
	findings__free(&e->findings);
	series__free(e->series);
	steps__free(e->steps);
	attribution__free(e->attr);
	timeline__free(e->tl);
	pass__free(e->pass);
	free(e);
}
