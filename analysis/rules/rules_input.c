// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * input_bound: a launching thread blocked waiting for what other processes
 * produce (its wait chain, waits.h, leads into other processes: DataLoader
 * workers, a multiprocessing pool, a pin-memory thread that waits for
 * them). Its cost is the thread's blocked time (during the GPU's idle time
 * with GPU activity, else in its active window); the chain's last link
 * says why the producers did not keep up, and the advice follows from it:
 * busy producers need more of them or less work per item, producers
 * waiting for a CPU need CPUs, producers in I/O faster storage, idle
 * producers a deeper queue. The producers' waits for a CPU are part of
 * this explanation (claimed: no cpu_contention finding of its own).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"

#define INPUT_MIN_SHARE	0.10	/* of the thread's base time, blocked */

static json_t *link_json(const struct rule_ctx *c, const struct wait_link *l)
{
	static const char *const groups[] = { "thread", "threads", "processes", "untraced" };
	json_t *o = json_object(), *m = json_array(), *d = json_object();
	char site[PY_SITE_LEN];

	if (!o || !m || !d) {
		json_decref(o);
		json_decref(m);
		json_decref(d);
		return NULL;
	}
	ev_set(o, "group", json_string(groups[l->group]));
	{
		char comm[sizeof(l->comm) + 1];

		memcpy(comm, l->comm, sizeof(l->comm));
		comm[sizeof(l->comm)] = '\0';
		ev_set(o, "comm", json_string(comm));
	}
	if (l->parent)
		ev_set(o, "parent_pid", ev_u64(l->parent));
	for (size_t i = 0; i < l->nmembers; i++) {
		json_t *t = json_object();

		ev_set(t, "pid", ev_u64(l->members[i].pid));
		ev_set(t, "tid", ev_u64(l->members[i].tid));
		json_array_append_new(m, t);
	}
	ev_set(o, "members", m);
	ev_set(o, "more_members", ev_u64(l->more));
	ev_set(o, "ended_s", ev_seconds(l->ended_ns));
	ev_set(o, "ended_share", json_real(l->ended_share));
	ev_set(d, "running_s", ev_seconds(l->during.ns[TL_RUNNING]));
	ev_set(d, "runqueue_s", ev_seconds(l->during.ns[TL_RUNQUEUE]));
	ev_set(d, "blocked_s", ev_seconds(l->during.ns[TL_BLOCKED]));
	ev_set(d, "io_s", ev_seconds(l->during.ns[TL_IO]));
	ev_set(d, "fault_s", ev_seconds(l->during.ns[TL_FAULT] + l->during.ns[TL_RECLAIM]));
	ev_set(d, "gil_s", ev_seconds(l->during.ns[TL_GIL]));
	ev_set(o, "while_waiting", d);
	ev_set(o, "python_samples", ev_u64(l->samples));
	if (l->top_stack && rule_stack_site(c, l->top_stack, site, sizeof(site)))
		ev_set(o, "top_python_site", json_string(site));
	return o;
}

/* What the last link did while the thread waited: the largest of running,
 * waiting for a CPU, in I/O (or faults), blocked. */
enum producers { PRODUCERS_BUSY, PRODUCERS_CPU_STARVED, PRODUCERS_IO, PRODUCERS_IDLE };

static enum producers producers_state(const struct wait_chain *ch, const struct wait_link *l)
{
	__u64 run = l->during.ns[TL_RUNNING] + l->during.ns[TL_GIL], rq = l->during.ns[TL_RUNQUEUE],
	      io = l->during.ns[TL_IO] + l->during.ns[TL_FAULT] + l->during.ns[TL_RECLAIM];

	if (!ch->complete)
		return PRODUCERS_IDLE;
	if (rq >= run && rq >= io)
		return PRODUCERS_CPU_STARVED;
	if (io > run)
		return PRODUCERS_IO;
	return PRODUCERS_BUSY;
}

static const char *const producers_names[] = { "busy", "cpu_starved", "io", "idle" };

static bool crosses_processes(const struct wait_chain *ch)
{
	for (size_t i = 0; i < ch->n; i++)
		if (ch->links[i].group != WAIT_GROUP_UNTRACED && ch->links[i].members[0].pid != ch->pid)
			return true;
	return false;
}

static int input_advice(const struct rule_ctx *c, struct finding *f, enum producers st, const struct wait_link *l,
			size_t workers, const char *site)
{
	__u64 all = tl_acc__total(&l->during) - l->during.ns[TL_UNKNOWN];
	__u32 ncpus = c->r->host.ncpus;

	switch (st) {
	case PRODUCERS_BUSY:
		return finding__suggest(f, "The producers were busy making its input (on a CPU %.0f%% of the time it "
					   "waited): run more of them (%zu now, on a host of %u CPUs: DataLoader "
					   "num_workers) or make each item cheaper%s%s%s (cache or precompute what does not "
					   "change, move decoding and augmentation to the GPU).",
					rule_pct(l->during.ns[TL_RUNNING] + l->during.ns[TL_GIL], all), workers, ncpus,
					site ? " (most of their time at `" : "", site ? site : "", site ? "`)" : "");
	case PRODUCERS_CPU_STARVED:
		return finding__suggest(f, "The producers waited for a CPU %.0f%% of the time it waited: give them "
					   "CPUs (%zu of them and the training loop on a host of %u CPUs), or fewer "
					   "threads each (OMP_NUM_THREADS=1, torch.set_num_threads(1) in worker_init_fn), "
					   "or fewer producers.", rule_pct(l->during.ns[TL_RUNQUEUE], all), workers, ncpus);
	case PRODUCERS_IO:
		return finding__suggest(f, "The producers waited for I/O or page faults %.0f%% of the time it "
					   "waited: read from faster or local storage, cache the data set in memory, or "
					   "run more producers so that their reads overlap.",
					rule_pct(l->during.ns[TL_IO] + l->during.ns[TL_FAULT] + l->during.ns[TL_RECLAIM], all));
	default:
		return finding__suggest(f, "The producers were mostly idle too while it waited: they are not asked "
					   "early enough. Queue more ahead (DataLoader prefetch_factor, a larger queue), "
					   "start them before the loop (persistent_workers), or look at what they wait "
					   "for in their timeline.");
	}
}

static int input_one(struct rule_ctx *c, const struct proc_tree *tree, const struct attr_thread *t)
{
	__u64 causes[CAUSE_MAX], base = rule_thread_base(c, t), cost;
	const struct wait_link *end;
	struct wait_chain ch;
	enum producers st;
	char who[96], site[PY_SITE_LEN];
	const char *site_p = NULL;
	size_t workers = 0;
	struct finding *f;
	json_t *links;
	int err;

	rule_thread_causes(c, t, causes);
	cost = causes[CAUSE_BLOCKED];
	if (!rule_matters(c, cost) || !base || (double)cost < INPUT_MIN_SHARE * (double)base)
		return 0;
	err = waits__chain(c->waits, t->pid, t->tid, rule_tree_parent, (void *)tree, &ch);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (!ch.n || !crosses_processes(&ch))
		return 0;
	/* waiting for another launcher that waits for the input: that one's
	 * finding says it */
	if (ch.links[0].group == WAIT_GROUP_THREAD &&
	    rule_handoff(c, t, ch.links[0].members[0].pid, ch.links[0].members[0].tid))
		return 0;
	if (cost > ch.links[0].ended_ns)
		cost = ch.links[0].ended_ns;	/* a timer's part is no input */
	if (!rule_matters(c, cost))
		return 0;
	end = &ch.links[ch.n - 1];
	st = producers_state(&ch, end);
	workers = end->group == WAIT_GROUP_PROCESSES ? rule_tasks_processes(end) + end->more : end->nmembers + end->more;
	if (end->top_stack && rule_stack_site(c, end->top_stack, site, sizeof(site)))
		site_p = site;
	f = rule_thread_finding(c, "input_bound", t, cost, base);
	if (!f || rule_claim(c, t->pid, t->tid, CAUSE_BLOCKED))
		return -ENOMEM;
	for (size_t i = 0; i < end->nmembers; i++)
		if (rule_claim(c, end->members[i].pid, end->members[i].tid, CAUSE_RUNQUEUE))
			return -ENOMEM;
	rule_task_name(c, t->pid, t->tid, who, sizeof(who));
	rule_share_evidence(c, f, t, cost, base);
	ev_set(f->evidence, "producers", json_string(producers_names[st]));
	ev_set(f->evidence, "chain_complete", json_boolean(ch.complete));
	links = json_array();
	ev_set(f->evidence, "chain", links);
	for (size_t i = 0; i < ch.n; i++)
		json_array_append_new(links, link_json(c, &ch.links[i]));
	err = finding__say(f, "%s was blocked %.3f s (%.0f%% %s) waiting for its input. ", who, rule_secs(cost),
			   rule_pct(cost, base), attribution__gpu_observed(c->attr, t->pid) ?
			   "of the time its GPU was observed, while the GPU sat idle" : "of its active time");
	for (size_t i = 0; i < ch.n; i++) {
		const struct wait_link *l = &ch.links[i];
		__u64 all = tl_acc__total(&l->during) - l->during.ns[TL_UNKNOWN];

		err |= finding__say(f, "%s", i ? "; those, in turn, by " : "Its waits were ended by ");
		err |= rule_tasks_say(c, tree, l, f);
		err |= finding__say(f, " (%.0f%%)", 100 * l->ended_share);
		if (i + 1 < ch.n)
			err |= finding__say(f, ", itself blocked %.0f%% of that time", rule_pct(l->during.ns[TL_BLOCKED], all));
		else if (all)
			err |= finding__say(f, ". While it waited, %s on a CPU %.0f%% of the time, waiting for a CPU "
					       "%.0f%%, in I/O or page faults %.0f%%, blocked %.0f%%",
					    l->nmembers + l->more > 1 ? "they were" : "that thread was",
					    rule_pct(l->during.ns[TL_RUNNING] + l->during.ns[TL_GIL], all),
					    rule_pct(l->during.ns[TL_RUNQUEUE], all),
					    rule_pct(l->during.ns[TL_IO] + l->during.ns[TL_FAULT] + l->during.ns[TL_RECLAIM], all),
					    rule_pct(l->during.ns[TL_BLOCKED], all));
	}
	if (site_p)
		err |= finding__say(f, "; most of their Python time at `%s`", site_p);
	err |= finding__say(f, ".");
	err |= input_advice(c, f, st, end, workers, site_p);
	return err ? -ENOMEM : 0;
}

static int input_finish(void *state, struct rule_ctx *c)
{
	struct proc_tree tree;
	int err = 0;

	(void)state;
	if (proc_tree__build(c->r, c->sum, &tree)) {
		proc_tree__free(&tree);
		return -ENOMEM;
	}
	for (size_t i = 0; i < attribution__thread_count(c->attr) && !err; i++) {
		const struct attr_thread *t = attribution__thread_at(c->attr, i);

		if (t->launcher)
			err = input_one(c, &tree, t);
	}
	proc_tree__free(&tree);
	return err;
}

const struct rule rule_input_bound = {
	.id = "input_bound",
	.title = "Waiting for its input",
	.phase = RULE_PHASE_CHAIN,
	.claims = RULE_CAUSE(CAUSE_BLOCKED) | RULE_CAUSE(CAUSE_RUNQUEUE),
	.finish = input_finish,
};
