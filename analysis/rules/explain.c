// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "rules.h"
#include "verdict.h"

extern const struct rule rule_input_bound, rule_gil_contention, rule_cpu_contention, rule_page_fault_storm, rule_host_memory_pressure,
	rule_blocked_on_thread, rule_allocator_churn, rule_sync_stall, rule_launch_bound, rule_pageable_memcpy,
	rule_pcie_saturation, rule_device_memory_leak, rule_gpu_idle, rule_host_bound, rule_cuda_errors,
	rule_nccl_straggler, rule_numa_remote;

/* Every rule. The causes a thread's time splits into are claimed phase by
 * phase (rules.h: struct rule, phase): the wait chains first, the rules
 * of one cause, those of a part of one, then gpu_idle and host_bound
 * count what is left. */
const struct rule *const rules_all[] = {
	&rule_input_bound,
	&rule_gil_contention,
	&rule_cpu_contention,
	&rule_page_fault_storm,
	&rule_host_memory_pressure,
	&rule_blocked_on_thread,
	&rule_allocator_churn,
	&rule_sync_stall,
	&rule_launch_bound,
	&rule_pageable_memcpy,
	&rule_pcie_saturation,
	&rule_device_memory_leak,
	&rule_cuda_errors,
	&rule_nccl_straggler,
	&rule_numa_remote,
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

/*
 * The timeline's observers, in one table: each sees every event of the
 * pass in the table's order (start adds its observer), then each finishes
 * in that order, reading the results of those before it, never their
 * state. The attribution comes first (the series takes each gap's split
 * from it), the rules last (they read all the others: struct rule_ctx).
 * free runs for every one, started or not.
 */
struct ex_stage {
	int (*start)(struct explain *e, const struct pass *p);	/* 0 or -errno */
	int (*finish)(struct explain *e);
	void (*free)(struct explain *e);
};

static int attr_start(struct explain *e, const struct pass *p)
{
	e->attr = attribution__new(e->tl, p);
	return e->attr ? timeline__observe(e->tl, attribution__observer(e->attr)) : -ENOMEM;
}

static int attr_finish(struct explain *e)
{
	return attribution__finish(e->attr);
}

static void attr_free(struct explain *e)
{
	attribution__free(e->attr);
}

static int waits_start(struct explain *e, const struct pass *p)
{
	(void)p;
	e->waits = waits__new(e->tl);
	return e->waits ? timeline__observe(e->tl, waits__observer(e->waits)) : -ENOMEM;
}

static int waits_finish(struct explain *e)
{
	return waits__finish(e->waits);
}

static void waits_free(struct explain *e)
{
	waits__free(e->waits);
}

static int series_start(struct explain *e, const struct pass *p)
{
	e->series = series__new(p, e->tl, e->attr);
	return e->series ? 0 : -ENOMEM;
}

static int series_finish(struct explain *e)
{
	return series__finish(e->series);
}

static void series_free(struct explain *e)
{
	series__free(e->series);
}

static int steps_start(struct explain *e, const struct pass *p)
{
	(void)p;
	e->steps = steps__new(e->tl);
	return e->steps ? timeline__observe(e->tl, steps__observer(e->steps)) : -ENOMEM;
}

static int steps_finish(struct explain *e)
{
	return steps__finish(e->steps);
}

static void steps_free(struct explain *e)
{
	steps__free(e->steps);
}

/* Each rule's state for the pass, with the observer it wants. */
static int rules_start(struct explain *e, const struct pass *p)
{
	struct rule_ctx *c = e->ctx;
	int err = 0;

	c->r = pass__recording(p);
	c->pass = p;
	c->tl = e->tl;
	c->attr = e->attr;
	c->waits = e->waits;
	c->out = &e->findings;
	c->start = pass__start(p);
	c->end = pass__end(p);
	e->state = calloc(rules_count, sizeof(*e->state));
	if (!e->state)
		return -ENOMEM;
	for (size_t i = 0; i < rules_count && !err; i++) {
		struct tl_observer obs = { 0 };

		if (!rules_all[i]->start)
			continue;
		e->state[i] = rules_all[i]->start(c, &obs);
		if (!e->state[i])
			return -ENOMEM;
		obs.ctx = e->state[i];
		err = timeline__observe(e->tl, &obs);
	}
	return err;
}

static void weigh(struct explain *e);

/* Phase by phase (rules.h), then the findings weighed and ranked. */
static int rules_finish(struct explain *e)
{
	int err = 0;

	for (int phase = 0; phase < RULE_PHASES && !err; phase++)
		for (size_t i = 0; i < rules_count && !err; i++) {
			if (rules_all[i]->phase != (enum rule_phase)phase || !rules_all[i]->finish)
				continue;
			e->ctx->rule = rules_all[i];
			err = rules_all[i]->finish(e->state[i], e->ctx);
		}
	e->ctx->rule = NULL;
	if (err)
		return err;
	weigh(e);
	findings__rank(&e->findings);
	return verdict__make(e->ctx, e->verdict, sizeof(e->verdict));
}

static void rules_free(struct explain *e)
{
	for (size_t i = 0; e->state && i < rules_count; i++)
		if (rules_all[i]->free)
			rules_all[i]->free(e->state[i]);
		else
			free(e->state[i]);
	free(e->state);
	free(e->ctx->claims);
	findings__free(&e->findings);
}

static const struct ex_stage ex_stages[] = {
	{ attr_start, attr_finish, attr_free },		/* what the threads' time went to, attribution.h */
	{ waits_start, waits_finish, waits_free },	/* the wait chains, waits.h */
	{ series_start, series_finish, series_free },	/* the charts' time series, series.h */
	{ steps_start, steps_finish, steps_free },	/* NVTX ranges and steps, steps.h */
	{ rules_start, rules_finish, rules_free },	/* the findings, rules.h */
};
#define EX_STAGES (sizeof(ex_stages) / sizeof(ex_stages[0]))

/* A finding of time is weighed against the job's time: its severity is
 * the share it costs (rule_severity). */
static void weigh(struct explain *e)
{
	for (size_t i = 0; i < e->findings.n; i++) {
		struct finding *f = &e->findings.v[i];

		if (f->cost_s > 0)
			f->severity = rule_severity(e->ctx, f->cost_s * 1e9 < 0x1p64 ? (__u64)(f->cost_s * 1e9) : UINT64_MAX);
	}
}

struct explain *explain__new(const struct pass *p)
{
	struct explain *e = calloc(1, sizeof(*e));
	int err = -ENOMEM;

	if (!e)
		goto fail;
	e->ctx = calloc(1, sizeof(*e->ctx));
	e->tl = timeline__new(p, pass__recording(p));
	if (!e->ctx || !e->tl)
		goto fail;
	err = 0;
	for (size_t i = 0; i < EX_STAGES && !err; i++)
		err = ex_stages[i].start(e, p);
	if (err)
		goto fail;
	return e;
fail:
	explain__free(e);
	errno = -err;
	return NULL;
}

int explain__event(struct explain *e, const struct pass_event *ev)
{
	return timeline__event(e->tl, ev);
}

int explain__finish(struct explain *e, const struct summary *sum, const struct py_report *py)
{
	int err = timeline__finish(e->tl);

	e->ctx->sum = sum;
	e->ctx->py = py;
	for (size_t i = 0; i < EX_STAGES && !err; i++)
		err = ex_stages[i].finish(e);
	return err;
}

int explain__finish_ranks(const struct ranks *r, struct findings *out)
{
	int err = 0;

	for (int phase = 0; phase < RULE_PHASES && !err; phase++)
		for (size_t i = 0; i < rules_count && !err; i++)
			if (rules_all[i]->phase == (enum rule_phase)phase && rules_all[i]->finish_ranks)
				err = rules_all[i]->finish_ranks(r, out);
	return err;
}

int explain__run(const struct recording *r, const struct summary *sum, const struct py_report *py,
		 struct explain **out)
{
	struct explain *e = NULL;
	struct pass_event ev;
	struct pass *p;
	int err;

	*out = NULL;
	err = pass__open(r, &p);
	if (err)
		return err;
	e = explain__new(p);
	if (!e) {
		pass__free(p);
		return -errno;
	}
	e->own_pass = p;
	while (!err && pass__next(p, &ev) > 0)
		err = explain__event(e, &ev);
	err = err ?: explain__finish(e, sum, py);
	if (err) {
		explain__free(e);
		return err;
	}
	*out = e;
	return 0;
}

void explain__free(struct explain *e)
{
	if (!e)
		return;
	for (size_t i = EX_STAGES; e->ctx && i-- > 0;)
		ex_stages[i].free(e);
	free(e->ctx);
	timeline__free(e->tl);
	pass__free(e->own_pass);
	free(e);
}
