// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Rules about what held a launching thread back on the host: the GIL, the
 * CPU, page faults, memory pressure, another thread, CUDA's allocator. Each
 * takes its cost from the attribution (rules.h: rule_thread_causes) and
 * claims it.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "rules.h"

#define MIN_SHARE	0.05	/* of the thread's base time (idle GPU time or its window) */
#define TOP_ITEMS	3

/* "of the time the GPU sat idle" or "of its time". */
static const char *base_text(const struct rule_ctx *c, const struct attr_thread *t)
{
	return attribution__gpu_observed(c->attr, t->pid) ? "of the time its GPU was observed" : "of its time";
}

static bool over_threshold(const struct rule_ctx *c, __u64 cost, __u64 base)
{
	return rule_matters(c, cost) && base && (double)cost >= MIN_SHARE * (double)base;
}

/* A finding about thread t with its cost and the common evidence. */
static struct finding *thread_finding(struct rule_ctx *c, const char *rule, const struct attr_thread *t, __u64 cost,
				      __u64 base, enum cause cause)
{
	struct finding *f = rule_thread_finding(c, rule, t, cost, base);

	if (!f)
		return NULL;
	rule_share_evidence(c, f, t, cost, base);
	ev_set(f->evidence, "cause", json_string(cause_name(cause)));
	return rule_claim(c, t->pid, t->tid, cause) ? NULL : f;
}

/* The items of a list as evidence ([{pid, tid, name, seconds}]) and as
 * prose ("pid 900 `ffmpeg` 70%, ..."), shares of total. */
static int tasks_evidence(struct rule_ctx *c, struct finding *f, const char *key, const struct attr_items *l,
			  __u64 total)
{
	json_t *arr = json_array();
	char name[96];

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < l->n && i < TOP_ITEMS; i++) {
		__u32 pid = (__u32)(l->v[i].key >> 32), tid = (__u32)l->v[i].key;
		json_t *o = json_object();

		rule_task_name(c, pid, tid, name, sizeof(name));
		ev_set(o, "pid", ev_u64(pid));
		ev_set(o, "tid", ev_u64(tid));
		ev_set(o, "name", ev_text(name, sizeof(name)));
		ev_set(o, "seconds", ev_seconds(l->v[i].ns));
		json_array_append_new(arr, o);
		if (finding__say(f, "%s%s %.0f%%", i ? ", " : "", name, rule_pct(l->v[i].ns, total)))
			return -ENOMEM;
	}
	ev_set(f->evidence, key, arr);
	return 0;
}

/* --- gil_contention ------------------------------------------------------------ */

/* Who held the GIL while a thread waited for it. The GIL waits the
 * scheduler saw name the holder (the attribution's gil_holders); without
 * them (--gil alone), the threads of its process sampled running Python
 * meanwhile (the holder runs, the waiter sleeps). Either way the holder's
 * Python line is the stack it was sampled running while the thread
 * waited. */
struct gil_seen {
	__u32 pid, waiter, holder, stack;
	__u64 samples;
};

struct gil_state {
	struct rule_ctx *c;
	struct gil_seen *v;
	size_t n, cap;
	bool any_gil_events;	/* GIL waits measured: --gil, or the scheduler's */
	bool python;		/* a Python target (its stacks or GIL were looked for) */
	int err;
};

static void gil_count(struct gil_state *s, __u32 pid, __u32 waiter, __u32 holder, __u32 stack)
{
	struct gil_seen *n;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid && s->v[i].waiter == waiter && s->v[i].holder == holder && s->v[i].stack == stack) {
			s->v[i].samples++;
			return;
		}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;

		if (cap > 65536)
			return;
		n = reallocarray(s->v, cap, sizeof(*n));
		if (!n) {
			s->err = -ENOMEM;
			return;
		}
		s->v = n;
		s->cap = cap;
	}
	s->v[s->n++] = (struct gil_seen){ pid, waiter, holder, stack, 1 };
}

static void gil_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct gil_state *s = ctx;
	const struct isr_ev_py_sample *smp = (const void *)e->h;
	const struct isr_ev_py_status *st = (const void *)e->h;

	if (e->h->type == ISR_EV_GIL || e->h->type == ISR_EV_GIL_WAIT)
		s->any_gil_events = true;
	/* a GIL whose waits are traced: no wait is a finding too */
	if (e->h->type == ISR_EV_PY_STATUS && st->subject == ISR_PY_SUBJECT_GIL && st->status == ISR_PY_STATUS_SAMPLING)
		s->any_gil_events = true;
	if (e->h->type == ISR_EV_PY_STATUS || e->h->type == ISR_EV_PY_SAMPLE)
		s->python = true;
	if (!th || e->h->type != ISR_EV_PY_SAMPLE || smp->kind != ISR_PY_KIND_TIMER)
		return;
	for (size_t i = 0; i < timeline__thread_count(s->c->tl); i++) {
		const struct tl_thread *w = timeline__thread_at(s->c->tl, i);

		if (w->pid == th->pid && w != th && !w->exited && timeline__thread_cat(w) == TL_GIL)
			gil_count(s, th->pid, w->tid, th->tid, smp->stack_id);
	}
}

static void *gil_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct gil_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = c;
	obs->event = gil_event;
	return s;
}

/* The threads sampled running Python while t waited, by samples, into
 * *out (most first). 0 or -ENOMEM. */
static int gil_sampled_holders(const struct gil_state *s, const struct attr_thread *t, struct attr_items *out)
{
	for (size_t k = 0; k < s->n; k++) {
		const struct gil_seen *g = &s->v[k];
		__u64 key = (__u64)g->pid << 32 | g->holder;
		struct attr_item *it = NULL;

		if (g->pid != t->pid || g->waiter != t->tid)
			continue;
		for (size_t j = 0; j < out->n && !it; j++)
			if (out->v[j].key == key)
				it = &out->v[j];
		if (!it) {
			struct attr_item *n = reallocarray(out->v, out->n + 1, sizeof(*n));

			if (!n)
				return -ENOMEM;
			out->v = n;
			it = &out->v[out->n++];
			it->key = key;
			it->ns = 0;
		}
		it->ns += g->samples;
	}
	for (size_t a = 1; a < out->n; a++)
		for (size_t b = a; b > 0 && out->v[b].ns > out->v[b - 1].ns; b--) {
			struct attr_item x = out->v[b];

			out->v[b] = out->v[b - 1];
			out->v[b - 1] = x;
		}
	return 0;
}

/* The stack holder was sampled running most while t waited (0: none). */
static __u32 gil_holder_stack(const struct gil_state *s, const struct attr_thread *t, __u32 holder)
{
	__u64 best = 0;
	__u32 stack = 0;

	for (size_t k = 0; k < s->n; k++)
		if (s->v[k].pid == t->pid && s->v[k].waiter == t->tid && s->v[k].holder == holder &&
		    s->v[k].samples > best) {
			best = s->v[k].samples;
			stack = s->v[k].stack;
		}
	return stack;
}

static int gil_finish(void *state, struct rule_ctx *c)
{
	struct gil_state *s = state;
	const struct attr_thread *t;
	__u64 causes[CAUSE_MAX], base;

	if (s->err)
		return s->err;
	if (!s->any_gil_events)
		return s->python ? findings__not_judged(c->out, "gil_contention",
							  "GIL waits: traced by default for CPython 3.10-3.13 whose GIL "
							  "layout checks out (python.gil says why not; --no-gil-waits "
							  "turns them off), or --gil (uprobes on libpython)") : 0;
	for (size_t i = 0; (t = rule_next_critical(c, &i, causes, &base));) {
		__u64 total = 0;
		struct attr_items sampled = { 0 };
		const struct attr_items *holders = &t->gil_holders;
		bool measured = t->gil_holders.n > 0;
		char who[96], site[PY_SITE_LEN];
		struct finding *f;
		__u32 stack;
		int err = 0;

		if (!over_threshold(c, causes[CAUSE_GIL], base))
			continue;
		f = thread_finding(c, "gil_contention", t, causes[CAUSE_GIL], base, CAUSE_GIL);
		if (!f)
			return -ENOMEM;
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		err |= finding__say(f, "%s waited %.3f s for the GIL (%.0f%% %s)", who, rule_secs(causes[CAUSE_GIL]),
				    rule_pct(causes[CAUSE_GIL], base), base_text(c, t));
		if (!measured) {
			if (gil_sampled_holders(s, t, &sampled)) {
				free(sampled.v);
				return -ENOMEM;
			}
			holders = &sampled;
		}
		for (size_t k = 0; k < holders->n; k++)
			total += holders->v[k].ns;
		total += holders->rest;
		if (holders->n) {
			err |= finding__say(f, measured ? "; held by " : "; sampled holding it meanwhile: ");
			err |= tasks_evidence(c, f, "holders", holders, total);
			ev_set(f->evidence, "holder_source", json_string(measured ? "gil_waits" : "samples"));
			if (!measured)
				ev_set(f->evidence, "holder_samples", ev_u64(total));
			stack = gil_holder_stack(s, t, (__u32)holders->v[0].key);
			if (stack && rule_stack_site(c, stack, site, sizeof(site))) {
				err |= finding__say(f, " — running `%s`", site);
				ev_set(f->evidence, "holder_site", ev_text(site, sizeof(site)));
			}
			err |= finding__say(f, ".");
		} else {
			err |= finding__say(f, "; no other thread of the process was sampled running Python meanwhile "
					       "(the holder may run native code that keeps the GIL).");
		}
		free(sampled.v);
		if (rule_any_launcher(c))
			err |= finding__suggest(f, "Keep CPU-heavy Python off the launching process's other threads: move "
						   "it to worker processes (DataLoader workers, multiprocessing) or to code "
						   "that releases the GIL (NumPy/PyTorch ops, C extensions).");
		else
			err |= finding__suggest(f, "Run CPU-heavy Python in worker processes (multiprocessing, "
						   "concurrent.futures.ProcessPoolExecutor) or in code that releases the "
						   "GIL (NumPy ops, C extensions): threads of one interpreter take turns.");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

static void gil_free(void *state)
{
	struct gil_state *s = state;

	if (s)
		free(s->v);
	free(s);
}

const struct rule rule_gil_contention = {
	.id = "gil_contention",
	.title = "GIL contention",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_GIL),
	.start = gil_start,
	.finish = gil_finish,
	.free = gil_free,
};

/* --- cpu_contention ------------------------------------------------------------- */

/* The threads that waited for a CPU, one finding per pool: a launching
 * thread alone, other threads with their process's threads of the same
 * name, or with their sibling processes' of the same name (a pool of
 * workers). */
struct cpu_group {
	struct wait_link tasks;
	__u64 cost, base;
	__u64 tracer;		/* waited while the tracer's threads held the CPU: not counted in cost */
	struct attr_items ran;	/* who had the CPU instead, summed over the tasks */
};

/* The part of thread t's wait for a CPU that the tracer's threads held it
 * (they took it at the preemption): the recorder's own cost is never the
 * job's. */
static __u64 tracer_runqueue(const struct rule_ctx *c, const struct attr_thread *t)
{
	__u64 ns = 0;

	for (size_t k = 0; k < t->preemptors.n; k++)
		if (sampling__is_tracer(&c->sum->sampling, (__u32)(t->preemptors.v[k].key >> 32)))
			ns += t->preemptors.v[k].ns;
	return ns;
}

static void cpu_group_key(const struct proc_tree *tree, const struct attr_thread *t, const char *comm,
			  struct wait_link *k)
{
	__u32 parent = t->launcher ? 0 : rule_tree_parent((void *)tree, t->pid);

	memset(k, 0, sizeof(*k));
	snprintf(k->comm, sizeof(k->comm), "%.*s", (int)sizeof(k->comm) - 1, comm);
	k->group = t->launcher ? WAIT_GROUP_THREAD : parent ? WAIT_GROUP_PROCESSES : WAIT_GROUP_THREADS;
	k->parent = parent;
	k->members[0] = (struct wait_member){ t->pid, t->tid };
}

static bool cpu_same_group(const struct wait_link *a, const struct wait_link *b)
{
	if (a->group != b->group || strncmp(a->comm, b->comm, sizeof(a->comm)))
		return false;
	switch (a->group) {
	case WAIT_GROUP_PROCESSES:
		return a->parent == b->parent;
	case WAIT_GROUP_THREADS:
		return a->members[0].pid == b->members[0].pid;
	default:
		return a->members[0].pid == b->members[0].pid && a->members[0].tid == b->members[0].tid;
	}
}

static int cpu_ran_add(struct cpu_group *g, const struct attr_items *l)
{
	for (size_t k = 0; k < l->n; k++) {
		size_t j;

		for (j = 0; j < g->ran.n && g->ran.v[j].key != l->v[k].key; j++)
			;
		if (j == g->ran.n) {
			if (array__reserve(&g->ran.v, &g->ran.cap, g->ran.n + 1, sizeof(*g->ran.v)))
				return -ENOMEM;
			g->ran.v[g->ran.n++] = (struct attr_item){ l->v[k].key, 0 };
		}
		g->ran.v[j].ns += l->v[k].ns;
	}
	g->ran.rest += l->rest;
	return 0;
}

static int item_desc(const void *a, const void *b)
{
	const struct attr_item *x = a, *y = b;

	return x->ns != y->ns ? (x->ns > y->ns ? -1 : 1) : (x->key > y->key) - (x->key < y->key);
}

/* Gathers the critical threads' unclaimed waits for a CPU into groups. */
static int cpu_gather(struct rule_ctx *c, const struct proc_tree *tree, struct cpu_group **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < attribution__thread_count(c->attr); i++) {
		const struct attr_thread *t = attribution__thread_at(c->attr, i);
		const struct tl_thread *th = timeline__thread_latest(c->tl, t->pid, t->tid);
		__u64 causes[CAUSE_MAX], rq, tracer;
		struct wait_link key;
		struct cpu_group *g;
		size_t j;

		if (!t->critical)
			continue;
		rule_thread_causes(c, t, causes);
		/* what the tracer's threads held is its cost, counted by no rule */
		tracer = tracer_runqueue(c, t);
		if (tracer > causes[CAUSE_RUNQUEUE])
			tracer = causes[CAUSE_RUNQUEUE];
		if (rule_claim_part(c, t->pid, t->tid, CAUSE_RUNQUEUE, tracer))
			return -ENOMEM;
		rq = rule_unclaimed(c, t, causes, CAUSE_RUNQUEUE);
		if (!rq)
			continue;
		cpu_group_key(tree, t, th ? th->comm : "", &key);
		for (j = 0; j < *n && !cpu_same_group(&(*out)[j].tasks, &key); j++)
			;
		if (j == *n) {
			if (array__reserve(out, &cap, *n + 1, sizeof(**out)))
				return -ENOMEM;
			memset(&(*out)[j], 0, sizeof(**out));
			(*out)[j].tasks = key;
			(*out)[j].tasks.nmembers = 0;
			(*n)++;
		}
		g = &(*out)[j];
		if (g->tasks.nmembers < WAITS_NODE_MEMBERS)
			g->tasks.members[g->tasks.nmembers++] = (struct wait_member){ t->pid, t->tid };
		else
			g->tasks.more++;
		g->cost += rq;
		g->tracer += tracer;
		g->base += rule_thread_base(c, t);
		if (cpu_ran_add(g, &t->preemptors))
			return -ENOMEM;
	}
	return 0;
}

static int cpu_say(struct rule_ctx *c, const struct proc_tree *tree, struct cpu_group *g)
{
	struct finding *f = findings__add(c->out, "cpu_contention", rule_severity(c, g->cost), rule_secs(g->cost),
					  g->tasks.members[0].pid, g->tasks.nmembers == 1 ? g->tasks.members[0].tid : 0);
	__u64 total = g->ran.rest;
	json_t *members = json_array();
	int err = 0;

	if (!f || !members) {
		json_decref(members);
		return -ENOMEM;
	}
	for (size_t k = 0; k < g->tasks.nmembers; k++) {
		json_t *o = json_object();

		ev_set(o, "pid", ev_u64(g->tasks.members[k].pid));
		ev_set(o, "tid", ev_u64(g->tasks.members[k].tid));
		json_array_append_new(members, o);
		err |= rule_claim(c, g->tasks.members[k].pid, g->tasks.members[k].tid, CAUSE_RUNQUEUE);
	}
	ev_set(f->evidence, "pid", ev_u64(g->tasks.members[0].pid));
	ev_set(f->evidence, "tid", ev_u64(g->tasks.members[0].tid));
	ev_set(f->evidence, "threads", members);
	ev_set(f->evidence, "cost_s", ev_seconds(g->cost));
	ev_set(f->evidence, "base_s", ev_seconds(g->base));
	ev_set(f->evidence, "share", json_real(g->base ? (double)g->cost / (double)g->base : 0));
	ev_set(f->evidence, "cause", json_string(cause_name(CAUSE_RUNQUEUE)));
	err |= rule_tasks_say(c, tree, &g->tasks, f);
	err |= finding__say(f, " waited %.3f s for a CPU (%.0f%% of %s time)", rule_secs(g->cost), rule_pct(g->cost, g->base),
			    g->tasks.nmembers + g->tasks.more > 1 ? "their" : "its");
	if (g->tracer) {
		err |= finding__say(f, ", and %.3f s more while the tracer's own threads held it (what tracing cost, not "
				       "counted here)", rule_secs(g->tracer));
		ev_set(f->evidence, "tracer_s", ev_seconds(g->tracer));
	}
	if (g->ran.n > 1)
		qsort(g->ran.v, g->ran.n, sizeof(*g->ran.v), item_desc);
	for (size_t k = 0; k < g->ran.n; k++)
		total += g->ran.v[k].ns;
	if (g->ran.n && g->ran.v[0].key) {
		err |= finding__say(f, "; the CPU went to ");
		err |= tasks_evidence(c, f, "ran_instead", &g->ran, total);
	}
	err |= finding__say(f, ".");
	err |= finding__suggest(f, rule_any_launcher(c) ?
				   "Give the job CPUs of its own (taskset, a cgroup cpuset, Kubernetes guaranteed "
				   "QoS), lower the priority of what competes (nice), or run fewer threads "
				   "(OMP_NUM_THREADS, torch.set_num_threads, DataLoader num_workers) so the thread is "
				   "not queued." :
				   "Give the job CPUs of its own (taskset, a cgroup cpuset, Kubernetes guaranteed "
				   "QoS), lower the priority of what competes (nice), or run fewer threads "
				   "(OMP_NUM_THREADS, a smaller thread or process pool) so the thread is not queued.");
	return err ? -ENOMEM : 0;
}

static int cpu_finish(void *state, struct rule_ctx *c)
{
	struct cpu_group *g = NULL;
	struct proc_tree tree;
	size_t n = 0;
	int err;

	(void)state;
	err = proc_tree__build(c->r, c->sum, &tree) ? -ENOMEM : cpu_gather(c, &tree, &g, &n);
	for (size_t i = 0; i < n && !err; i++)
		if (over_threshold(c, g[i].cost, g[i].base))
			err = cpu_say(c, &tree, &g[i]);
	for (size_t i = 0; i < n; i++)
		free(g[i].ran.v);
	free(g);
	proc_tree__free(&tree);
	return err;
}

const struct rule rule_cpu_contention = {
	.id = "cpu_contention",
	.title = "Waiting for a CPU",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_RUNQUEUE),
	.reads = RULE_CAUSE(CAUSE_RUNQUEUE),
	.finish = cpu_finish,
};

/* --- page_fault_storm ------------------------------------------------------------ */

/* Faults of the launching threads: counts and time by kind, and the files
 * of the file-backed major faults. */
struct fault_file {
	__u32 pid;
	char path[256];
	__u64 major, ns;
};

struct fault_state {
	struct rule_ctx *c;
	struct fault_tally {
		__u32 pid, tid;
		__u64 minor, major, major_file, major_anon;
		__u64 ns, major_ns;
		__u64 min_ns;		/* the fastest fault with a start (0: none) */
	} *v;
	size_t n, cap;
	struct fault_file *files;
	size_t nfiles, files_cap;
	int err;
};
RULE_TALLY_KEY(struct fault_tally, pid, tid);

/* The file mapped at addr in pid's recorded memory map, into path; false
 * for anonymous memory or an address outside the map. */
static bool mapped_file(const struct recording *r, __u32 pid, __u64 addr, char *path, size_t len)
{
	for (size_t i = 0; i < r->process_count; i++) {
		const char *m = r->processes[i].maps;

		if (r->processes[i].pid != pid || !m)
			continue;
		while (*m) {
			unsigned long long lo, hi;
			const char *nl = strchr(m, '\n'), *slash;
			size_t linelen = nl ? (size_t)(nl - m) : strlen(m);

			if (sscanf(m, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
				slash = memchr(m, '/', linelen);
				if (!slash)
					return false;
				snprintf(path, len, "%.*s", (int)(linelen - (size_t)(slash - m)), slash);
				return true;
			}
			m += linelen + (nl ? 1 : 0);
		}
	}
	return false;
}

static void fault_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct fault_state *s = ctx;
	const struct isr_ev_page_fault *f = (const void *)e->h;
	struct fault_tally *t;
	__u64 ns;

	if (s->err || !th || e->h->type != ISR_EV_PAGE_FAULT)
		return;
	t = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), th->pid, th->tid);
	if (!t) {
		s->err = -ENOMEM;
		return;
	}
	ns = (f->flags & ISR_FAULT_HAS_START) ? f->duration_ns : 0;
	t->ns += ns;
	if (ns && (!t->min_ns || ns < t->min_ns))
		t->min_ns = ns;
	if (!(f->flags & ISR_FAULT_MAJOR)) {
		t->minor++;
		return;
	}
	t->major++;
	t->major_ns += ns;
	{
		char path[256];
		struct fault_file *ff = NULL;

		if (!mapped_file(s->c->r, th->pid, f->address, path, sizeof(path))) {
			t->major_anon++;
			return;
		}
		t->major_file++;
		for (size_t i = 0; i < s->nfiles; i++)
			if (s->files[i].pid == th->pid && strcmp(s->files[i].path, path) == 0)
				ff = &s->files[i];
		if (!ff && s->nfiles < 256) {
			if (s->nfiles == s->files_cap) {
				size_t cap = s->files_cap ? 2 * s->files_cap : 8;
				struct fault_file *n = reallocarray(s->files, cap, sizeof(*n));

				if (!n) {
					s->err = -ENOMEM;
					return;
				}
				s->files = n;
				s->files_cap = cap;
			}
			ff = &s->files[s->nfiles++];
			memset(ff, 0, sizeof(*ff));
			ff->pid = th->pid;
			snprintf(ff->path, sizeof(ff->path), "%s", path);
		}
		if (ff) {
			ff->major++;
			ff->ns += ns;
		}
	}
}

static void *fault_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct fault_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = c;
	obs->event = fault_event;
	return s;
}

/* What tracing costs one fault of a thread (tally ft) inside its recorded
 * fault time, at most: the cost the recorder measured (0 when it measured
 * none), or the thread's fastest fault with a start, when that is less.
 * The part of the cost inside the recorded times is not known; it is the
 * same for every fault and no fault's handling takes less than nothing,
 * so it is at most the fastest fault's time. Taken out whole, the job is
 * never blamed for the tracer, and a cost measured high on a busy host (it
 * is measured once, at the start) does not take out the job's own
 * handling with it. */
static double fault_tracer_per(const struct rule_ctx *c, const struct fault_tally *ft)
{
	double per = c->sum->sampling.overhead.measured ? c->sum->sampling.overhead.fault_ns : 0;

	if (ft && ft->min_ns && per > (double)ft->min_ns)
		per = (double)ft->min_ns;
	return per;
}

/* What tracing the faults of a thread (tally ft) cost of fault_ns, its
 * fault time: each fault at fault_tracer_per(), the share of the thread's
 * whole fault time that is, applied to fault_ns. */
static __u64 fault_tracer_ns(const struct rule_ctx *c, const struct fault_tally *ft, __u64 fault_ns)
{
	double per = fault_tracer_per(c, ft), share;

	if (!ft || !ft->ns || per <= 0)
		return 0;
	share = per * (double)(ft->minor + ft->major) / (double)ft->ns;
	return share >= 1 ? fault_ns : (__u64)(share * (double)fault_ns);
}

/* Faults traced in windows (the budget sampled them): what the summary
 * extrapolated the thread's fault count by (sampling__faults_scale), 1
 * when they were all traced. */
static double fault_scale(const struct rule_ctx *c, const struct attr_thread *t, const struct fault_tally *ft)
{
	const struct thread_summary *ts = summary__thread(c->sum, t->pid, t->tid);
	__u64 seen = ft ? ft->minor + ft->major : 0;

	if (!ts || !ts->faults_estimated || !seen)
		return 1;
	return (double)(ts->minor_faults + ts->major_faults) / (double)seen;
}

static int fault_finish(void *state, struct rule_ctx *c)
{
	struct fault_state *s = state;
	const struct attr_thread *t;
	__u64 causes[CAUSE_MAX], base;

	if (s->err)
		return s->err;
	for (size_t i = 0; (t = rule_next_critical(c, &i, causes, &base));) {
		__u64 tracer, cost;
		const struct fault_tally *ft = NULL;
		double k;
		const struct fault_file *top = NULL;
		char who[96];
		struct finding *f;
		int err = 0;

		for (size_t k = 0; k < s->n; k++)
			if (s->v[k].pid == t->pid && s->v[k].tid == t->tid)
				ft = &s->v[k];
		/* what tracing the faults cost is the tracer's, not the job's */
		tracer = fault_tracer_ns(c, ft, causes[CAUSE_FAULT]);
		if (rule_claim_part(c, t->pid, t->tid, CAUSE_FAULT, tracer))
			return -ENOMEM;
		/* sampled: the windows' fault time, less what tracing it cost,
		 * over the thread's life */
		k = fault_scale(c, t, ft);
		cost = (__u64)((double)(causes[CAUSE_FAULT] - tracer) * k);
		if (cost > base)
			cost = base;
		if (!over_threshold(c, cost, base))
			continue;
		f = thread_finding(c, "page_fault_storm", t, cost, base, CAUSE_FAULT);
		if (!f)
			return -ENOMEM;
		for (size_t k = 0; k < s->nfiles; k++)
			if (s->files[k].pid == t->pid && (!top || s->files[k].ns > top->ns))
				top = &s->files[k];
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		err |= finding__say(f, "%s spent %.3f s in page faults (%.0f%% %s)", who, rule_secs(cost), rule_pct(cost, base),
				    base_text(c, t));
		if (tracer) {
			double per = fault_tracer_per(c, ft);
			bool fastest = per < c->sum->sampling.overhead.fault_ns;

			err |= finding__say(f, " beyond what tracing them cost (%.3f s of the %.3f s measured: %.2f µs a "
					       "fault, %s)", rule_secs(tracer), rule_secs(causes[CAUSE_FAULT]),
					    per / 1e3, fastest ? "its fastest fault's time, less than the cost measured "
					    "on this host at the start" : "measured on this host at the start");
			ev_set(f->evidence, "tracer_per_fault_us", json_real(per / 1e3));
			ev_set(f->evidence, "tracer_s", ev_seconds(tracer));
			ev_set(f->evidence, "measured_s", ev_seconds(causes[CAUSE_FAULT]));
		}
		if (k != 1)
			err |= finding__say(f, ", extrapolated from the %.0f%% of the recording in which the overhead "
					       "budget let page faults be traced", 100 * c->sum->sampling.faults_coverage);
		if (ft) {
			const char *about = k != 1 ? "≈" : "";

			err |= finding__say(f, ": %s%llu minor, %s%llu major (%s%llu from files, %s%llu anonymous: swapped "
					       "out)", about, (unsigned long long)llround((double)ft->minor * k), about,
					    (unsigned long long)llround((double)ft->major * k), about,
					    (unsigned long long)llround((double)ft->major_file * k), about,
					    (unsigned long long)llround((double)ft->major_anon * k));
			ev_set(f->evidence, "minor_faults", ev_u64((__u64)llround((double)ft->minor * k)));
			ev_set(f->evidence, "major_faults", ev_u64((__u64)llround((double)ft->major * k)));
			ev_set(f->evidence, "faults_seen", ev_u64(ft->minor + ft->major));
			ev_set(f->evidence, "faults_estimated", json_boolean(k != 1));
			ev_set(f->evidence, "major_file_faults", ev_u64(ft->major_file));
			ev_set(f->evidence, "major_anon_faults", ev_u64(ft->major_anon));
			ev_set(f->evidence, "fault_s", ev_seconds(ft->ns));
		}
		if (top) {
			err |= finding__say(f, "; the file read most: %s (%llu faults, %.3f s)", top->path,
					    (unsigned long long)top->major, rule_secs(top->ns));
			ev_set(f->evidence, "top_file", ev_text(top->path, SIZE_MAX));
		}
		err |= finding__say(f, ".");
		if (ft && ft->major_anon > ft->major_file)
			err |= finding__suggest(f, "Memory was swapped out: give the job more memory (or a higher cgroup "
						   "limit), reduce what it keeps resident, or disable swap for it.");
		else if (ft && ft->major)
			err |= finding__suggest(f, "Files are read on first touch of a memory map: read them ahead "
						   "(madvise(MADV_WILLNEED), a warm-up pass, copying weights to local "
						   "fast storage) or load them before the timed loop.");
		else
			err |= finding__suggest(f, "Minor faults come from touching fresh memory: reuse buffers instead "
						   "of allocating new ones each step, or pre-fault them once (pinned "
						   "buffers, torch.empty reused).");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

static void fault_free(void *state)
{
	struct fault_state *s = state;

	if (s) {
		free(s->v);
		free(s->files);
	}
	free(s);
}

const struct rule rule_page_fault_storm = {
	.id = "page_fault_storm",
	.title = "Page faults",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_FAULT),
	.start = fault_start,
	.finish = fault_finish,
	.free = fault_free,
};

/* --- host_memory_pressure ------------------------------------------------------ */

/*
 * The host short of memory for a launching thread: it reclaimed memory
 * itself before it could go on (direct reclaim, or its memory cgroup's
 * reclaim at the cgroup's limit), and it waited for pages swapped out
 * (major faults on anonymous memory). The reclaim time is its own cause
 * (the timeline counts a reclaim inside a fault as reclaim); the swap-in
 * time is the anonymous major faults' share of the thread's fault time,
 * counted here only when page_fault_storm, which runs before, did not
 * claim the faults (its finding then names them), and claimed as a part:
 * the other faults stay for gpu_idle and host_bound.
 */
struct pressure_tally {
	__u32 pid, tid;
	__u64 reclaims, reclaim_ns, pages;
	__u64 direct, memcg;			/* reclaims by kind */
	/* anonymous major faults, all faults (timed), less the reclaims
	 * inside them (the timeline counts those as reclaim) */
	__u64 swapins, swapin_ns, fault_ns;
	__u64 fault_start, fault_end;		/* its latest fault */
	bool fault_swapin;
};
RULE_TALLY_KEY(struct pressure_tally, pid, tid);

/* A process's memory samples (ISR_EV_MEM_SAMPLE): its cgroup's pressure
 * stall totals at the first and last sample, and how close to its limit
 * the cgroup came. */
struct pressure_proc {
	__u32 pid;
	__u32 flags;			/* ISR_MEM_* of the last sample */
	__u64 some0, full0, some1, full1;	/* psi totals, us */
	__u64 ts0, ts1;			/* when the first and the last sample were taken */
	__u64 peak_bytes, limit_bytes;	/* the cgroup's memory.current at its peak share of the limit */
	__u64 peak_swap;
	double peak_share;		/* memory.current / min(memory.high, memory.max) */
	bool found;			/* a thread finding of this process already says it */
};

#define CGROUP_NEAR_LIMIT	0.9	/* of min(memory.high, memory.max) */

struct pressure_state {
	struct rule_ctx *c;
	struct pressure_tally *v;
	size_t n, cap;
	struct pressure_proc *procs;
	size_t nprocs, procs_cap;
	int err;
};

static void pressure_sample(struct pressure_state *s, const struct isr_ev_mem_sample *m)
{
	struct pressure_proc *p = NULL;
	__u64 limit = m->cg_high_bytes < m->cg_max_bytes ? m->cg_high_bytes : m->cg_max_bytes;

	for (size_t i = 0; i < s->nprocs && !p; i++)
		if (s->procs[i].pid == m->hdr.pid)
			p = &s->procs[i];
	if (!p) {
		if (array__reserve((void **)&s->procs, &s->procs_cap, s->nprocs + 1, sizeof(*s->procs))) {
			s->err = -ENOMEM;
			return;
		}
		p = &s->procs[s->nprocs++];
		memset(p, 0, sizeof(*p));
		p->pid = m->hdr.pid;
		p->some0 = m->psi_some_us;
		p->full0 = m->psi_full_us;
		p->ts0 = m->hdr.ts_ns;
	}
	p->ts1 = m->hdr.ts_ns > p->ts1 ? m->hdr.ts_ns : p->ts1;
	p->flags = m->flags;
	p->some1 = m->psi_some_us;
	p->full1 = m->psi_full_us;
	p->peak_swap = m->swap_bytes > p->peak_swap ? m->swap_bytes : p->peak_swap;
	if ((m->flags & ISR_MEM_CGROUP) && limit != ISR_MEM_UNLIMITED && limit &&
	    (double)m->cg_current_bytes / (double)limit >= p->peak_share) {
		p->peak_share = (double)m->cg_current_bytes / (double)limit;
		p->peak_bytes = m->cg_current_bytes;
		p->limit_bytes = limit;
	}
}

static struct pressure_proc *pressure_proc_of(struct pressure_state *s, __u32 pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

/* How far a PSI total (us) grew between p's first and last samples: no
 * more than the time between them (a stall total grows at most as fast as
 * the clock; more is a damaged recording). */
static __u64 psi_grew(const struct pressure_proc *p, __u64 first, __u64 last)
{
	__u64 span_us = p->ts1 > p->ts0 ? (p->ts1 - p->ts0) / 1000 : 0;
	__u64 grew = last > first ? last - first : 0;

	return grew < span_us ? grew : span_us;
}

/* The pressure stalls of p's cgroup (or the host's) over the recording. */
static int pressure_say_psi(struct finding *f, const struct pressure_proc *p)
{
	__u64 some = psi_grew(p, p->some0, p->some1), full = psi_grew(p, p->full0, p->full1);
	int err = 0;

	if (!(p->flags & ISR_MEM_PSI))
		return 0;
	ev_set(f->evidence, "psi_some_s", json_real(some / 1e6));
	ev_set(f->evidence, "psi_full_s", json_real(full / 1e6));
	ev_set(f->evidence, "psi_scope", json_string(p->flags & ISR_MEM_PSI_HOST ? "host" : "cgroup"));
	if (p->limit_bytes) {
		ev_set(f->evidence, "cgroup_peak_bytes", ev_u64(p->peak_bytes));
		ev_set(f->evidence, "cgroup_limit_bytes", ev_u64(p->limit_bytes));
	}
	if (some)
		err |= finding__say(f, " Memory pressure (PSI, %s) stalled some of its tasks %.3f s and all of them "
				       "%.3f s.", p->flags & ISR_MEM_PSI_HOST ? "the host's" : "its cgroup's", some / 1e6,
				    full / 1e6);
	if (p->limit_bytes && p->peak_share >= CGROUP_NEAR_LIMIT)
		err |= finding__say(f, " Its memory cgroup used %.0f MiB of its %.0f MiB limit (%.0f%%).",
				    p->peak_bytes / 1048576.0, p->limit_bytes / 1048576.0, 100 * p->peak_share);
	return err;
}

static int pressure_cgroup_findings(struct pressure_state *s, struct rule_ctx *c);

static void pressure_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct pressure_state *s = ctx;
	struct pressure_tally *t;
	char path[256];

	if (!s->err && e->h->type == ISR_EV_MEM_SAMPLE) {
		pressure_sample(s, (const struct isr_ev_mem_sample *)e->h);
		return;
	}
	if (s->err || !th || (e->h->type != ISR_EV_RECLAIM && e->h->type != ISR_EV_PAGE_FAULT))
		return;
	t = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), th->pid, th->tid);
	if (!t) {
		s->err = -ENOMEM;
		return;
	}
	if (e->h->type == ISR_EV_RECLAIM) {
		const struct isr_ev_reclaim *r = (const void *)e->h;
		__u64 end = e->start + r->duration_ns, lo, hi, in_fault = 0;

		t->reclaims++;
		t->reclaim_ns += r->duration_ns;
		t->pages += r->nr_reclaimed;
		t->direct += r->kind == ISR_RECLAIM_DIRECT;
		t->memcg += r->kind == ISR_RECLAIM_MEMCG;
		/* a fault starts before the reclaim it waits for: it came first */
		lo = e->start > t->fault_start ? e->start : t->fault_start;
		hi = end < t->fault_end ? end : t->fault_end;
		if (hi > lo)
			in_fault = hi - lo;
		t->fault_ns -= in_fault < t->fault_ns ? in_fault : t->fault_ns;
		if (t->fault_swapin)
			t->swapin_ns -= in_fault < t->swapin_ns ? in_fault : t->swapin_ns;
		return;
	}
	{
		const struct isr_ev_page_fault *f = (const void *)e->h;
		__u64 ns = (f->flags & ISR_FAULT_HAS_START) ? f->duration_ns : 0;

		t->fault_ns += ns;
		t->fault_start = e->start;
		t->fault_end = e->end;
		t->fault_swapin = (f->flags & ISR_FAULT_MAJOR) &&
				  !mapped_file(s->c->r, th->pid, f->address, path, sizeof(path));
		if (t->fault_swapin) {
			t->swapins++;
			t->swapin_ns += ns;
		}
	}
}

static void *pressure_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct pressure_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = c;
	obs->event = pressure_event;
	return s;
}

static int pressure_finish(void *state, struct rule_ctx *c)
{
	struct pressure_state *s = state;
	const struct attr_thread *t;
	__u64 causes[CAUSE_MAX], base;

	if (s->err)
		return s->err;
	for (size_t i = 0; (t = rule_next_critical(c, &i, causes, &base));) {
		__u64 swapin = 0, cost;
		const struct pressure_tally *pt = NULL;
		bool faults_claimed;
		char who[96];
		struct finding *f;
		int err = 0;

		for (size_t k = 0; k < s->n; k++)
			if (s->v[k].pid == t->pid && s->v[k].tid == t->tid)
				pt = &s->v[k];
		if (!pt)
			continue;
		faults_claimed = rule_claimed(c, t->pid, t->tid, CAUSE_FAULT);
		if (!faults_claimed && pt->fault_ns)
			swapin = (__u64)((double)causes[CAUSE_FAULT] * ((double)pt->swapin_ns / (double)pt->fault_ns));
		cost = causes[CAUSE_RECLAIM] + swapin;
		if (!over_threshold(c, cost, base))
			continue;
		f = thread_finding(c, "host_memory_pressure", t, cost, base, CAUSE_RECLAIM);
		if (!f || rule_claim_part(c, t->pid, t->tid, CAUSE_FAULT, swapin))
			return -ENOMEM;
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		ev_set(f->evidence, "reclaim_s", ev_seconds(causes[CAUSE_RECLAIM]));
		ev_set(f->evidence, "reclaims", ev_u64(pt->reclaims));
		ev_set(f->evidence, "direct_reclaims", ev_u64(pt->direct));
		ev_set(f->evidence, "cgroup_reclaims", ev_u64(pt->memcg));
		ev_set(f->evidence, "pages_reclaimed", ev_u64(pt->pages));
		ev_set(f->evidence, "all_reclaim_s", ev_seconds(pt->reclaim_ns));
		ev_set(f->evidence, "swapin_faults", ev_u64(pt->swapins));
		ev_set(f->evidence, "swapin_s", ev_seconds(swapin));
		ev_set(f->evidence, "swapins_counted_by_page_fault_storm", json_boolean(faults_claimed && pt->swapins));
		err |= finding__say(f, "%s was held back %.3f s by memory pressure (%.0f%% %s)", who, rule_secs(cost),
				    rule_pct(cost, base), base_text(c, t));
		if (causes[CAUSE_RECLAIM])
			err |= finding__say(f, ": %.3f s reclaiming memory itself before it could allocate (%llu reclaims "
					       "freeing %llu pages; %llu at its memory cgroup's limit, %llu short of free "
					       "memory on the host)",
					    rule_secs(causes[CAUSE_RECLAIM]), (unsigned long long)pt->reclaims,
					    (unsigned long long)pt->pages, (unsigned long long)pt->memcg,
					    (unsigned long long)pt->direct);
		if (swapin)
			err |= finding__say(f, "%s %.3f s waiting for %llu pages swapped out (major faults on anonymous "
					       "memory)", causes[CAUSE_RECLAIM] ? ";" : ":", rule_secs(swapin),
					    (unsigned long long)pt->swapins);
		else if (faults_claimed && pt->swapins)
			err |= finding__say(f, "; its %llu swap-ins are counted under page faults",
					    (unsigned long long)pt->swapins);
		err |= finding__say(f, ".");
		if (pressure_proc_of(s, t->pid)) {
			err |= pressure_say_psi(f, pressure_proc_of(s, t->pid));
			pressure_proc_of(s, t->pid)->found = true;
		}
		if (pt->memcg >= pt->direct)
			err |= finding__suggest(f, "The job's memory cgroup (container) is at its limit: raise it (memory.high, "
						   "memory.max, the container's memory limit) or lower what the job keeps "
						   "resident: fewer or lighter %s, memory-mapped datasets instead of copies in "
						   "every worker.", rule_any_launcher(c) ? "DataLoader workers, smaller "
						   "prefetch and pinned memory pools" : "worker processes, smaller caches");
		else
			err |= finding__suggest(f, "The host is short of free memory: run fewer jobs on it, lower what the job "
						   "keeps resident (%s), or give it a host "
						   "with more memory; swap-ins mean pages it needs were swapped out.",
						rule_any_launcher(c) ? "DataLoader workers, prefetch, caches" :
						"worker processes, caches");
		if (err)
			return -ENOMEM;
	}
	return pressure_cgroup_findings(s, c);
}

/* A process whose memory cgroup came near its limit, or whose cgroup's
 * tasks stalled on memory, with no thread finding that says so: one
 * finding for the process, its cost the time some of its tasks stalled
 * (PSI "some"), naming the threads that reclaimed. */
static int pressure_cgroup_findings(struct pressure_state *s, struct rule_ctx *c)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		struct pressure_proc *p = &s->procs[i];
		__u64 some = psi_grew(p, p->some0, p->some1);
		bool near = p->limit_bytes && p->peak_share >= CGROUP_NEAR_LIMIT;
		bool stalled = !(p->flags & ISR_MEM_PSI_HOST) && some * 1000 >= RULE_MIN_COST_NS;
		struct finding *f;
		int err = 0;

		if (p->found || (!near && !stalled))
			continue;
		f = findings__add(c->out, "host_memory_pressure", stalled ? SEV_WARNING : SEV_INFO, some / 1e6, p->pid, 0);
		if (!f)
			return -ENOMEM;
		ev_set(f->evidence, "pid", ev_u64(p->pid));
		ev_set(f->evidence, "peak_swap_bytes", ev_u64(p->peak_swap));
		err |= finding__say(f, "Process %u ran %s its memory cgroup's limit.", p->pid, near ? "near" : "under");
		err |= pressure_say_psi(f, p);
		for (size_t k = 0; k < s->n; k++) {
			const struct pressure_tally *t = &s->v[k];
			char who[96];

			if (t->pid != p->pid || !t->reclaim_ns)
				continue;
			rule_task_name(c, t->pid, t->tid, who, sizeof(who));
			err |= finding__say(f, " %s stalled %.3f s reclaiming (%llu reclaims).", who, rule_secs(t->reclaim_ns),
					    (unsigned long long)t->reclaims);
		}
		err |= finding__suggest(f, "Raise the cgroup's limit (memory.high, memory.max, the container's memory "
					   "limit) or lower what the job keeps resident: fewer or lighter %s, "
					   "memory-mapped datasets.", rule_any_launcher(c) ? "DataLoader workers, smaller "
					   "prefetch and pinned-memory pools" : "worker processes, smaller caches");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

static void pressure_free(void *state)
{
	struct pressure_state *s = state;

	if (s) {
		free(s->v);
		free(s->procs);
	}
	free(s);
}

const struct rule rule_host_memory_pressure = {
	.id = "host_memory_pressure",
	.title = "Host memory pressure",
	.phase = RULE_PHASE_PART,
	.claims = RULE_CAUSE(CAUSE_RECLAIM) | RULE_CAUSE(CAUSE_FAULT),
	.reads = RULE_CAUSE(CAUSE_FAULT),
	.start = pressure_start,
	.finish = pressure_finish,
	.free = pressure_free,
};

/* --- blocked_on_thread --------------------------------------------------------- */

#define BLOCKED_TOP_SHARE	0.5	/* of the blocked time, ended by one task */

static int blocked_finish(void *state, struct rule_ctx *c)
{
	const struct attr_thread *t;
	__u64 causes[CAUSE_MAX], base;

	(void)state;
	for (size_t i = 0; (t = rule_next_critical(c, &i, causes, &base));) {
		__u64 total = t->wakers.rest, top_ns = 0;
		const struct tl_thread *w = NULL;
		__u32 wpid = 0, wtid = 0;
		char who[96], waker[96];
		struct finding *f;
		int err = 0;

		causes[CAUSE_BLOCKED] = rule_unclaimed(c, t, causes, CAUSE_BLOCKED);
		if (!over_threshold(c, causes[CAUSE_BLOCKED], base) || !t->wakers.n)
			continue;
		for (size_t k = 0; k < t->wakers.n; k++)
			total += t->wakers.v[k].ns;
		/* the traced task that ended most of it: a waker that is not
		 * traced is usually the task an interrupt (a timer, a device)
		 * happened to interrupt, not what the thread waited for */
		for (size_t k = 0; k < t->wakers.n && !w; k++) {
			wpid = (__u32)(t->wakers.v[k].key >> 32);
			wtid = (__u32)t->wakers.v[k].key;
			for (size_t j = 0; j < timeline__thread_count(c->tl) && wtid; j++) {
				const struct tl_thread *x = timeline__thread_at(c->tl, j);

				if (x->pid == wpid && x->tid == wtid)
					w = x;
			}
			top_ns = t->wakers.v[k].ns;
		}
		if (!w || (double)top_ns < BLOCKED_TOP_SHARE * (double)total)
			continue;
		if (rule_handoff(c, t, wpid, wtid))
			continue;
		f = thread_finding(c, "blocked_on_thread", t, causes[CAUSE_BLOCKED], base, CAUSE_BLOCKED);
		if (!f)
			return -ENOMEM;
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		rule_task_name(c, wpid, wtid, waker, sizeof(waker));
		err |= finding__say(f, "%s was blocked %.3f s (%.0f%% %s) waiting on %s, which ended %.0f%% of that "
				       "blocked time", who, rule_secs(causes[CAUSE_BLOCKED]), rule_pct(causes[CAUSE_BLOCKED], base),
				    base_text(c, t), waker, rule_pct(top_ns, total));
		ev_set(f->evidence, "waker_pid", ev_u64(wpid));
		ev_set(f->evidence, "waker_tid", ev_u64(wtid));
		ev_set(f->evidence, "waker", ev_text(waker, sizeof(waker)));
		{
			__u64 wt = tl_acc__total(&w->acc);
			enum tl_cat top = TL_UNKNOWN;

			/* why the producer is slow, if it is for a reason of its own */
			for (int k = 0; k < TL_CAT_MAX; k++)
				if (k != TL_BLOCKED && k != TL_RUNNING && k != TL_UNKNOWN && w->acc.ns[k] > w->acc.ns[top])
					top = (enum tl_cat)k;
			err |= finding__say(f, "; that thread ran %.0f%% of its time", rule_pct(w->acc.ns[TL_RUNNING], wt));
			if (top != TL_UNKNOWN && (double)w->acc.ns[top] >= 0.1 * (double)wt)
				err |= finding__say(f, " and spent %.0f%% %s", rule_pct(w->acc.ns[top], wt),
						    cause_label(cause_of_category(top)));
			ev_set(f->evidence, "waker_running_share", json_real(wt ? (double)w->acc.ns[TL_RUNNING] / (double)wt : 0));
		}
		err |= finding__say(f, ".");
		err |= finding__suggest(f, "The launching thread waits for that thread's output (a queue, a lock, an "
					   "event): make the producer faster or start it earlier (more DataLoader "
					   "workers, prefetch_factor, pin_memory), or overlap its work with the GPU's.");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

const struct rule rule_blocked_on_thread = {
	.id = "blocked_on_thread",
	.title = "Blocked on another thread",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_BLOCKED),
	.reads = RULE_CAUSE(CAUSE_BLOCKED),
	.finish = blocked_finish,
};

/* --- allocator_churn ------------------------------------------------------------ */

static int alloc_finish(void *state, struct rule_ctx *c)
{
	const struct attr_thread *t;
	__u64 causes[CAUSE_MAX], base;

	(void)state;
	for (size_t i = 0; (t = rule_next_critical(c, &i, causes, &base));) {
		__u64 allocs = 0, frees = 0;
		char who[96];
		struct finding *f;
		int err = 0;

		if (!over_threshold(c, causes[CAUSE_CUDA_MEM], base))
			continue;
		f = thread_finding(c, "allocator_churn", t, causes[CAUSE_CUDA_MEM], base, CAUSE_CUDA_MEM);
		if (!f)
			return -ENOMEM;
		for (size_t k = 0; k < c->sum->cuda_fn_count; k++) {
			const struct isr_cuda_fn *fn = isr_cuda_fn(c->sum->cuda_fns[k].func);

			if (fn && fn->family == ISR_CUDA_FAM_ALLOC)
				allocs += c->sum->cuda_fns[k].calls;
			else if (fn && fn->family == ISR_CUDA_FAM_FREE)
				frees += c->sum->cuda_fns[k].calls;
		}
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		err |= finding__say(f, "%s spent %.3f s allocating and freeing CUDA memory (%.0f%% %s); the recording "
				       "has %llu allocations and %llu frees (%.0f/s).",
				    who, rule_secs(causes[CAUSE_CUDA_MEM]), rule_pct(causes[CAUSE_CUDA_MEM], base), base_text(c, t),
				    (unsigned long long)allocs, (unsigned long long)frees,
				    c->end > c->start ? (double)(allocs + frees) / rule_secs(c->end - c->start) : 0);
		ev_set(f->evidence, "allocations", ev_u64(allocs));
		ev_set(f->evidence, "frees", ev_u64(frees));
		err |= finding__suggest(f, "Let PyTorch's caching allocator keep memory (no torch.cuda.empty_cache() in "
					   "the loop, PYTORCH_NO_CUDA_MEMORY_CACHING unset), reuse buffers, or use a "
					   "stream-ordered pool (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync).");
		if (err)
			return -ENOMEM;
	}
	return 0;
}

const struct rule rule_allocator_churn = {
	.id = "allocator_churn",
	.title = "CUDA allocator churn",
	.phase = RULE_PHASE_CAUSE,
	.claims = RULE_CAUSE(CAUSE_CUDA_MEM),
	.finish = alloc_finish,
};
