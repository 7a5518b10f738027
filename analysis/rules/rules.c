// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the rules share: claims, names, the causes of a launching thread.
 * The registry itself is in rules_registry.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "rules.h"

static int claim_add(struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause, __u64 ns)
{
	if (!c->rule || !(c->rule->claims & RULE_CAUSE(cause)))
		return -EINVAL;
	if (c->nclaims == c->claims_cap) {
		size_t cap = c->claims_cap ? 2 * c->claims_cap : 16;
		struct rule_claim *n = reallocarray(c->claims, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->claims = n;
		c->claims_cap = cap;
	}
	c->claims[c->nclaims++] = (struct rule_claim){ .pid = pid, .tid = tid, .cause = cause, .ns = ns };
	return 0;
}

int rule_claim(struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause)
{
	return rule_claimed(c, pid, tid, cause) ? 0 : claim_add(c, pid, tid, cause, 0);
}

int rule_claim_part(struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause, __u64 ns)
{
	return ns && !rule_claimed(c, pid, tid, cause) ? claim_add(c, pid, tid, cause, ns) : 0;
}

bool rule_claimed(const struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause)
{
	for (size_t i = 0; i < c->nclaims; i++)
		if (c->claims[i].pid == pid && c->claims[i].cause == cause && !c->claims[i].ns &&
		    (!c->claims[i].tid || c->claims[i].tid == tid))
			return true;
	return false;
}

bool rule_claimed_any(const struct rule_ctx *c, __u32 pid, enum cause cause)
{
	for (size_t i = 0; i < c->nclaims; i++)
		if (c->claims[i].pid == pid && c->claims[i].cause == cause && !c->claims[i].ns)
			return true;
	return false;
}

__u64 rule_claimed_part(const struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause)
{
	__u64 ns = 0;

	for (size_t i = 0; i < c->nclaims; i++)
		if (c->claims[i].pid == pid && c->claims[i].cause == cause && c->claims[i].ns &&
		    (!tid || c->claims[i].tid == tid))
			ns += c->claims[i].ns;
	return ns;
}

static const char *process_comm(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->process_count; i++)
		if (r->processes[i].pid == pid && r->processes[i].comm)
			return r->processes[i].comm;
	return NULL;
}

/* Names are quoted in `code spans`: no backtick may end one early. */
static void unquote(char *s)
{
	for (; *s; s++)
		if (*s == '`')
			*s = '\'';
}

/* A task that is not traced, by the names task_info gave it: "pid 900
 * `ffmpeg`", "thread 901 `worker` of pid 900 `ffmpeg`"; "(not traced)"
 * for what no name was recorded for. */
static void untraced_task_name(const struct rule_ctx *c, __u32 pid, __u32 tid, char *buf, size_t len)
{
	char comm[16], process[16];

	timeline__task_name(c->tl, pid, tid, comm, process);
	unquote(comm);
	unquote(process);
	if (pid == tid && (process[0] || comm[0]))
		snprintf(buf, len, "pid %u `%s`", pid, process[0] ? process : comm);
	else if (pid == tid)
		snprintf(buf, len, "pid %u (not traced)", pid);
	else if (comm[0] && process[0])
		snprintf(buf, len, "thread %u `%s` of pid %u `%s`", tid, comm, pid, process);
	else if (comm[0])
		snprintf(buf, len, "thread %u `%s` of pid %u", tid, comm, pid);
	else if (process[0])
		snprintf(buf, len, "thread %u of pid %u `%s`", tid, pid, process);
	else
		snprintf(buf, len, "thread %u of pid %u (not traced)", tid, pid);
}

void rule_task_name(const struct rule_ctx *c, __u32 pid, __u32 tid, char *buf, size_t len)
{
	const struct tl_thread *t = timeline__thread_latest(c->tl, pid, tid);
	const char *comm = NULL;
	char name[TASK_NAME_LEN];

	if (t)
		comm = t->comm[0] ? t->comm : process_comm(c->r, pid);
	task_name__format(name, sizeof(name), comm ? comm : "", c->sum ? summary__process_name(c->sum, pid) : NULL,
			  py_report__thread_entry(c->py, pid, tid));
	unquote(name);
	if (t && name[0])
		snprintf(buf, len, "thread %u `%s`", tid, name);
	else if (t)
		snprintf(buf, len, "thread %u", tid);
	else if (!tid)
		snprintf(buf, len, "an unknown task");
	else if (c->sum && sampling__is_tracer(&c->sum->sampling, pid))
		snprintf(buf, len, "the tracer (inferscope-bpf, pid %u)", pid);
	else
		untraced_task_name(c, pid, tid, buf, len);
}

bool rule_stack_site(const struct rule_ctx *c, __u32 stack_id, char *buf, size_t len)
{
	if (!c->py || !py_report__site(c->py, stack_id, buf, len))
		return false;
	unquote(buf);
	return true;
}

void rule_thread_causes(const struct rule_ctx *c, const struct attr_thread *t, __u64 out[CAUSE_MAX])
{
	double py;

	if (attribution__gpu_observed(c->attr, t->pid)) {
		memcpy(out, t->idle_ns, sizeof(t->idle_ns));
		return;
	}
	memset(out, 0, sizeof(__u64) * CAUSE_MAX);
	out[CAUSE_GIL] = t->window.ns[TL_GIL];
	out[CAUSE_SYNC] = t->window.ns[TL_SYNC];
	out[CAUSE_CUDA_MEM] = t->window.ns[TL_CUDA_MEM];
	out[CAUSE_CUDA] = t->window.ns[TL_CUDA];
	out[CAUSE_FAULT] = t->window.ns[TL_FAULT];
	out[CAUSE_RECLAIM] = t->window.ns[TL_RECLAIM];
	out[CAUSE_RUNQUEUE] = t->window.ns[TL_RUNQUEUE];
	out[CAUSE_IO] = t->window.ns[TL_IO];
	out[CAUSE_BLOCKED] = t->window.ns[TL_BLOCKED];
	out[CAUSE_UNKNOWN] = t->window.ns[TL_UNKNOWN];
	py = t->samples ? (double)t->python_samples / (double)t->samples : 0;
	out[CAUSE_PYTHON] = (__u64)(py * (double)t->window.ns[TL_RUNNING]);
	out[CAUSE_NATIVE] = t->window.ns[TL_RUNNING] - out[CAUSE_PYTHON];
}

__u64 rule_thread_base(const struct rule_ctx *c, const struct attr_thread *t)
{
	__u64 best = 0;

	if (!attribution__gpu_observed(c->attr, t->pid))
		return tl_acc__total(&t->window);
	for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
		const struct attr_device *d = attribution__device_at(c->attr, i);

		if (d->pid == t->pid && d->active_ns > best)
			best = d->active_ns;
	}
	return best;
}

__u64 rule_job_ns(const struct rule_ctx *c)
{
	__u64 best = 0;

	for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
		const struct attr_device *d = attribution__device_at(c->attr, i);

		if (d->active_ns > best)
			best = d->active_ns;
	}
	for (size_t i = 0; i < attribution__thread_count(c->attr); i++) {
		const struct attr_thread *t = attribution__thread_at(c->attr, i);

		if (t->launcher && tl_acc__total(&t->window) > best)
			best = tl_acc__total(&t->window);
	}
	return best ? best : c->end > c->start ? c->end - c->start : 0;
}

bool rule_matters(const struct rule_ctx *c, __u64 cost)
{
	__u64 job = rule_job_ns(c);

	return cost >= RULE_MIN_COST_NS && (double)cost >= RULE_MIN_JOB_SHARE * (double)job;
}

enum finding_severity rule_severity(const struct rule_ctx *c, __u64 cost)
{
	__u64 job = rule_job_ns(c);

	if (job && (double)cost >= RULE_CRITICAL_SHARE * (double)job)
		return SEV_CRITICAL;
	if (job && (double)cost >= RULE_WARNING_SHARE * (double)job)
		return SEV_WARNING;
	return SEV_INFO;
}

bool rule_handoff(const struct rule_ctx *c, const struct attr_thread *t, __u32 pid, __u32 tid)
{
	const struct attr_thread *w;

	if (!t->launcher || pid != t->pid || tid == t->tid)
		return false;
	w = attribution__thread(c->attr, pid, tid);
	return w && w->launcher;
}

__u32 rule_tree_parent(void *ctx, __u32 pid)
{
	const struct proc_tree *t = ctx;
	size_t at;

	for (size_t i = 0; i < t->count; i++) {
		if (t->nodes[i].pid != pid)
			continue;
		at = proc_tree__shown_parent(t, i);
		return at == PROC_TREE_NO_PARENT ? 0 : t->nodes[at].pid;
	}
	return 0;
}

static const struct proc_node *tree_node(const struct proc_tree *t, __u32 pid)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->nodes[i].pid == pid)
			return &t->nodes[i];
	return NULL;
}

/* Whether member i is the first of the link's members in its process. */
static bool first_of_process(const struct wait_link *l, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (l->members[j].pid == l->members[i].pid)
			return false;
	return true;
}

size_t rule_tasks_processes(const struct wait_link *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nmembers; i++)
		n += first_of_process(l, i);
	return n;
}

int rule_tasks_say(const struct rule_ctx *c, const struct proc_tree *tree, const struct wait_link *l,
		   struct finding *f)
{
	const struct proc_node *n = tree_node(tree, l->members[0].pid);
	const char *role = n ? proc_role__text(n->role) : NULL;
	size_t procs = rule_tasks_processes(l);
	char name[96];
	int err = 0;

	if (l->group == WAIT_GROUP_THREAD || l->group == WAIT_GROUP_UNTRACED || l->nmembers + l->more == 1) {
		rule_task_name(c, l->members[0].pid, l->members[0].tid, name, sizeof(name));
		return finding__say(f, "%s", name);
	}
	if (l->group == WAIT_GROUP_PROCESSES) {
		err |= finding__say(f, "%zu%s process%s `%s` (pid%s", procs, l->more ? "+" : "", procs > 1 ? "es" : "",
				    l->comm, procs > 1 ? "s" : "");
		for (size_t i = 0, k = 0; i < l->nmembers; i++)
			if (first_of_process(l, i))
				err |= finding__say(f, "%s %u", k++ ? "," : "", l->members[i].pid);
		err |= finding__say(f, "%s; children of pid %u", l->more ? ", ..." : "", l->parent);
		if (role)
			err |= finding__say(f, "; %s %s", procs > 1 ? "each a" : "a", role);
		return err | finding__say(f, ")");
	}
	err |= finding__say(f, "%zu%s threads `%s` of pid %u", l->nmembers, l->more ? "+" : "", l->comm,
			    l->members[0].pid);
	if (role)
		err |= finding__say(f, " (a %s)", role);
	return err;
}

__u64 rule_unclaimed(const struct rule_ctx *c, const struct attr_thread *t, const __u64 causes[CAUSE_MAX], enum cause k)
{
	__u64 part;

	if (rule_claimed(c, t->pid, t->tid, k))
		return 0;
	part = rule_claimed_part(c, t->pid, t->tid, k);
	return part < causes[k] ? causes[k] - part : 0;
}

bool rule_any_launcher(const struct rule_ctx *c)
{
	for (size_t i = 0; i < attribution__thread_count(c->attr); i++)
		if (attribution__thread_at(c->attr, i)->launcher)
			return true;
	return false;
}

bool rule_gpu_recorded(const struct rule_ctx *c)
{
	for (size_t i = 0; i < c->r->process_count; i++)
		if (pass__fit(c->pass, c->r->processes[i].pid))
			return true;
	return attribution__device_count(c->attr) > 0;
}

struct finding *rule_thread_finding(struct rule_ctx *c, const char *rule, const struct attr_thread *t, __u64 cost,
				    __u64 base)
{
	struct finding *f = findings__add(c->out, rule, rule_severity(c, cost), rule_secs(cost), t->pid, t->tid);

	if (!f)
		return NULL;
	ev_set(f->evidence, "pid", ev_u64(t->pid));
	ev_set(f->evidence, "tid", ev_u64(t->tid));
	ev_set(f->evidence, "cost_s", ev_seconds(cost));
	ev_set(f->evidence, "base_s", ev_seconds(base));
	return f;
}

void rule_share_evidence(const struct rule_ctx *c, struct finding *f, const struct attr_thread *t, __u64 cost,
			 __u64 base)
{
	ev_set(f->evidence, "share", json_real(base ? (double)cost / (double)base : 0));
	ev_set(f->evidence, "during_gpu_idle", json_boolean(attribution__gpu_observed(c->attr, t->pid)));
}

void *rule_tally_of(void *arrp, size_t *n, size_t *cap, size_t elem, __u32 a, __u32 b)
{
	const __u32 key[2] = { a, b };
	unsigned char *v;

	memcpy(&v, arrp, sizeof(v));
	for (size_t i = 0; i < *n; i++)
		if (!memcmp(v + i * elem, key, sizeof(key)))
			return v + i * elem;
	if (array__reserve(arrp, cap, *n + 1, elem))
		return NULL;
	memcpy(&v, arrp, sizeof(v));
	v += (*n)++ * elem;
	memset(v, 0, elem);
	memcpy(v, key, sizeof(key));
	return v;
}

const struct attr_thread *rule_next_critical(const struct rule_ctx *c, size_t *i, __u64 causes[CAUSE_MAX],
					     __u64 *base)
{
	while (*i < attribution__thread_count(c->attr)) {
		const struct attr_thread *t = attribution__thread_at(c->attr, (*i)++);

		if (t->critical) {
			rule_thread_causes(c, t, causes);
			*base = rule_thread_base(c, t);
			return t;
		}
	}
	return NULL;
}
