// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include "alias_learn.h"

struct alias_pair {
	__u32 pid;
	__u64 kernel, function;
};

struct alias_proc {
	__u32 pid;
	bool released;		/* its probes are released */
	__u32 quiet;		/* calls in a row that taught nothing */
	__u64 released_at;
};

static __u64 pair_hash(const void *e)
{
	const struct alias_pair *p = e;

	return hash__mix(hash__mix(hash__u64(p->pid), p->kernel), p->function);
}

static bool pair_equal(const void *a, const void *b)
{
	const struct alias_pair *x = a, *y = b;

	return x->pid == y->pid && x->kernel == y->kernel && x->function == y->function;
}

static __u64 proc_hash(const void *e)
{
	return hash__u64(((const struct alias_proc *)e)->pid);
}

static bool proc_equal(const void *a, const void *b)
{
	return ((const struct alias_proc *)a)->pid == ((const struct alias_proc *)b)->pid;
}

void alias_learn__init(struct alias_learn *l)
{
	htab__init(&l->pairs, sizeof(struct alias_pair), pair_hash, pair_equal);
	htab__init(&l->procs, sizeof(struct alias_proc), proc_hash, proc_equal);
}

void alias_learn__free(struct alias_learn *l)
{
	htab__free(&l->pairs);
	htab__free(&l->procs);
}

static struct alias_proc *proc_of(struct alias_learn *l, __u32 pid)
{
	struct alias_proc key = { .pid = pid };
	bool added;

	return htab__insert(&l->procs, &key, &added);
}

int alias_learn__mapped(struct alias_learn *l, __u32 pid, __u64 kernel, __u64 function, enum alias_action *act)
{
	struct alias_pair key = { .pid = pid, .kernel = kernel, .function = function };
	struct alias_proc *p;
	bool added = false;

	*act = ALIAS_KEEP;
	/* A full table teaches nothing more: the calls count as quiet. */
	if (!htab__find(&l->pairs, &key) && l->pairs.len < ALIAS_MAX_PAIRS && !htab__insert(&l->pairs, &key, &added))
		return -ENOMEM;
	p = proc_of(l, pid);
	if (!p)
		return -ENOMEM;
	if (added) {
		p->quiet = 0;
		return 0;
	}
	if (p->released)
		return 0;	/* calls made before the release took effect */
	if (++p->quiet >= ALIAS_QUIET_CALLS)
		*act = ALIAS_RELEASE;
	return 0;
}

int alias_learn__named(struct alias_learn *l, __u32 pid, enum alias_action *act)
{
	struct alias_proc *p = proc_of(l, pid);

	*act = ALIAS_KEEP;
	if (!p)
		return -ENOMEM;
	p->quiet = 0;
	if (p->released)
		*act = ALIAS_ATTACH;
	return 0;
}

void alias_learn__switched(struct alias_learn *l, __u32 pid, bool on, __u64 now)
{
	struct alias_proc *p = proc_of(l, pid);

	if (!p)
		return;
	p->released = !on;
	p->released_at = now;
	p->quiet = 0;
}

size_t alias_learn__due(const struct alias_learn *l, __u64 now, __u32 *pids, size_t max)
{
	const struct alias_proc *p;
	size_t pos = 0, n = 0;

	while (n < max && (p = htab__next(&l->procs, &pos)))
		if (p->released && now - p->released_at >= ALIAS_RELEARN_NS)
			pids[n++] = p->pid;
	return n;
}

static bool pair_of(void *entry, void *ctx)
{
	return ((struct alias_pair *)entry)->pid == *(const __u32 *)ctx;
}

void alias_learn__forget(struct alias_learn *l, __u32 pid)
{
	struct alias_proc key = { .pid = pid };

	htab__remove(&l->procs, &key, NULL);
	htab__remove_if(&l->pairs, pair_of, &pid);
}
