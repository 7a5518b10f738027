// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * numa_remote: on a host of several NUMA nodes, a process whose launching
 * threads run on CPUs of a node other than its GPU's, or whose memory
 * (pinned buffers included) sits mostly on such a node: every launch,
 * copy and pinned-buffer access then crosses the link between the
 * sockets. Where each thread ran comes from the scheduler events already
 * recorded (the CPU of each switch, mapped to its node by the host's NUMA
 * topology); where the memory is, from the memory samples' numa_maps
 * totals (ISR_EV_MEM_SAMPLE). The GPU's node is the host's GPUs' node
 * when they all sit on one; with GPUs on several nodes, which GPU a
 * process uses is not known and the rule does not judge. What the remote
 * placement costs is not measured (the slowdown of a remote access does
 * not show in the events): the finding's cost is 0 and it ranks after
 * the costed ones.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "host_topo.h"
#include "htab.h"
#include "rules.h"

#define NUMA_MAX_NODES		ISR_MEM_NODES
#define MIN_ONCPU_NS		100000000ull	/* a thread that ran this long, at least */
#define MIN_REMOTE_SHARE	0.2		/* of its on-CPU time, on other nodes */
#define MIN_MEM_REMOTE_SHARE	0.5		/* of its resident memory, on other nodes */
#define MIN_MEM_REMOTE_BYTES	(64ull << 20)
#define TOP_THREADS		3

struct numa_thread {
	__u32 pid, tid;
	__u32 in_cpu;
	__u64 in_ts;			/* when it was switched in on in_cpu; 0: not on a CPU we saw */
	__u64 ns[NUMA_MAX_NODES];	/* on-CPU time by node */
	__u64 other_ns;			/* on CPUs of no known node (or beyond NUMA_MAX_NODES) */
	bool launcher;
};

struct numa_proc {
	__u32 pid;
	__u64 bytes[NUMA_MAX_NODES];	/* its latest numa_maps totals */
	bool seen;
};

struct numa_state {
	struct rule_ctx *c;
	struct host_topo topo;
	int cpu_node[1024];		/* by CPU: its node, -1 unknown; -2 not looked up yet */
	struct htab index;		/* pid << 32 | tid -> index in v */
	struct numa_thread *v;
	size_t n, cap;
	struct numa_proc *procs;
	size_t nprocs, procs_cap;
	int err;
};

static int node_of(struct numa_state *s, __u32 cpu)
{
	if (cpu >= sizeof(s->cpu_node) / sizeof(s->cpu_node[0]))
		return host_topo__cpu_node(&s->topo, cpu);
	if (s->cpu_node[cpu] == -2)
		s->cpu_node[cpu] = host_topo__cpu_node(&s->topo, cpu);
	return s->cpu_node[cpu];
}

static struct numa_thread *thread_of(struct numa_state *s, __u32 pid, __u32 tid)
{
	__u64 key = (__u64)pid << 32 | tid, i;

	if (htab_u64__get(&s->index, key, &i))
		return &s->v[i];
	if (array__reserve((void *)&s->v, &s->cap, s->n + 1, sizeof(*s->v)) ||
	    htab_u64__put(&s->index, key, s->n)) {
		s->err = -ENOMEM;
		return NULL;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].pid = pid;
	s->v[s->n].tid = tid;
	return &s->v[s->n++];
}

static void numa_sample(struct numa_state *s, const struct isr_ev_mem_sample *m)
{
	struct numa_proc *p = NULL;

	if (!(m->flags & ISR_MEM_NUMA))
		return;
	for (size_t i = 0; i < s->nprocs && !p; i++)
		if (s->procs[i].pid == m->hdr.pid)
			p = &s->procs[i];
	if (!p) {
		if (array__reserve((void *)&s->procs, &s->procs_cap, s->nprocs + 1, sizeof(*s->procs))) {
			s->err = -ENOMEM;
			return;
		}
		p = &s->procs[s->nprocs++];
		memset(p, 0, sizeof(*p));
		p->pid = m->hdr.pid;
	}
	memcpy(p->bytes, m->numa_bytes, sizeof(p->bytes));
	p->seen = true;
}

static void numa_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct numa_state *s = ctx;
	const struct isr_ev_sched_switch *sw = (const void *)e->h;
	struct numa_thread *t;

	if (s->err)
		return;
	if (th && th->launches) {
		t = thread_of(s, th->pid, th->tid);
		if (t)
			t->launcher = true;
	}
	if (e->h->type == ISR_EV_MEM_SAMPLE) {
		numa_sample(s, (const struct isr_ev_mem_sample *)e->h);
		return;
	}
	if (e->h->type != ISR_EV_SCHED_SWITCH)
		return;
	t = thread_of(s, e->h->pid, e->h->tid);
	if (t && t->in_ts && t->in_cpu == e->h->cpu && e->h->ts_ns > t->in_ts) {
		int node = node_of(s, e->h->cpu);

		if (node >= 0 && node < NUMA_MAX_NODES)
			t->ns[node] += e->h->ts_ns - t->in_ts;
		else
			t->other_ns += e->h->ts_ns - t->in_ts;
	}
	if (t)
		t->in_ts = 0;
	if (!sw->next_tid)
		return;	/* the idle task */
	t = thread_of(s, sw->next_pid, sw->next_tid);
	if (t) {
		t->in_ts = e->h->ts_ns;
		t->in_cpu = e->h->cpu;
	}
}

static void *numa_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct numa_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = c;
	if (host_topo__decode(&c->r->host, &s->topo)) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(s->cpu_node) / sizeof(s->cpu_node[0]); i++)
		s->cpu_node[i] = -2;
	htab__init(&s->index, sizeof(struct htab_u64), htab_u64__hash, htab_u64__equal);
	obs->event = numa_event;
	return s;
}

static __u64 thread_total(const struct numa_thread *t)
{
	__u64 sum = t->other_ns;

	for (int k = 0; k < NUMA_MAX_NODES; k++)
		sum += t->ns[k];
	return sum;
}

/* The node the host's GPUs sit on: 0 and *node, or -1 when no GPU's node
 * is known, -2 when they sit on several. */
static int gpu_node(const struct host_topo *t, int *node)
{
	*node = -1;
	for (size_t i = 0; i < t->ngpus; i++) {
		int n = t->gpus[i].g.numa_node;

		if (n < 0)
			continue;
		if (*node >= 0 && n != *node)
			return -2;
		*node = n;
	}
	return *node >= 0 ? 0 : -1;
}

static const char *node_cpus(const struct host_topo *t, int node)
{
	for (size_t i = 0; i < t->nnodes; i++)
		if ((int)t->nodes[i].node == node && t->nodes[i].cpus)
			return t->nodes[i].cpus;
	return "";
}

static int numa_process(struct numa_state *s, struct rule_ctx *c, __u32 pid, int gnode)
{
	const struct numa_thread *top[TOP_THREADS] = { NULL };
	const struct numa_proc *mem = NULL;
	__u64 mem_total = 0, mem_remote = 0;
	size_t ntop = 0;
	struct finding *f;
	json_t *threads;
	int err = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct numa_thread *t = &s->v[i];
		__u64 total = thread_total(t), remote = total - (gnode < NUMA_MAX_NODES ? t->ns[gnode] : 0) - t->other_ns;

		if (t->pid != pid || !t->launcher || total < MIN_ONCPU_NS || remote < MIN_REMOTE_SHARE * (double)total)
			continue;
		if (ntop < TOP_THREADS)
			top[ntop++] = t;
		for (size_t k = ntop - 1; k > 0 && thread_total(top[k]) > thread_total(top[k - 1]); k--) {
			const struct numa_thread *x = top[k];

			top[k] = top[k - 1];
			top[k - 1] = x;
		}
	}
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			mem = &s->procs[i];
	if (mem) {
		for (int k = 0; k < NUMA_MAX_NODES; k++) {
			mem_total += mem->bytes[k];
			if (k != gnode)
				mem_remote += mem->bytes[k];
		}
		if (mem_remote < MIN_MEM_REMOTE_BYTES || mem_remote < MIN_MEM_REMOTE_SHARE * (double)mem_total)
			mem = NULL;
	}
	if (!ntop && !mem)
		return 0;
	f = findings__add(c->out, "numa_remote", SEV_WARNING, 0, pid, ntop ? top[0]->tid : 0);
	if (!f)
		return -ENOMEM;
	threads = json_array();
	ev_set(f->evidence, "pid", ev_u64(pid));
	ev_set(f->evidence, "gpu_node", ev_u64((__u64)gnode));
	ev_set(f->evidence, "gpu_node_cpus", ev_text(node_cpus(&s->topo, gnode), SIZE_MAX));
	ev_set(f->evidence, "threads", threads);
	for (size_t i = 0; i < ntop; i++) {
		const struct numa_thread *t = top[i];
		__u64 total = thread_total(t), remote = total - (gnode < NUMA_MAX_NODES ? t->ns[gnode] : 0) - t->other_ns;
		int worst = -1;
		char who[96];
		json_t *o = json_object();

		for (int k = 0; k < NUMA_MAX_NODES; k++)
			if (k != gnode && (worst < 0 || t->ns[k] > t->ns[worst]))
				worst = k;
		rule_task_name(c, t->pid, t->tid, who, sizeof(who));
		json_array_append_new(threads, o);
		ev_set(o, "tid", ev_u64(t->tid));
		ev_set(o, "on_cpu_s", ev_seconds(total));
		ev_set(o, "remote_s", ev_seconds(remote));
		ev_set(o, "remote_share", json_real((double)remote / (double)total));
		err |= finding__say(f, "%s%s ran %.0f%% of its %.3f s on CPU on node %d, away from its GPU's node %d.",
				    i ? " " : "", who, 100.0 * (double)remote / (double)total, (double)total / 1e9, worst,
				    gnode);
	}
	if (mem) {
		ev_set(f->evidence, "memory_bytes", ev_u64(mem_total));
		ev_set(f->evidence, "memory_remote_bytes", ev_u64(mem_remote));
		err |= finding__say(f, "%s%.0f MiB of its %.0f MiB resident memory (%.0f%%) sits on other nodes than its "
				       "GPU's: pinned buffers there cross the link between the sockets on every copy.",
				    ntop ? " " : "", mem_remote / 1048576.0, mem_total / 1048576.0,
				    100.0 * (double)mem_remote / (double)mem_total);
	}
	err |= finding__say(f, " Not costed: a remote access is slower by a factor the events do not show.");
	err |= finding__suggest(f, "Run the job on its GPU's node: numactl --cpunodebind=%d --membind=%d, or taskset -c "
				   "%s; with several GPUs, bind each rank to its own GPU's node (the launcher's affinity "
				   "options: Slurm --cpu-bind, the Kubernetes topology manager's single-numa-node policy). "
				   "Pinned buffers live on the node of the thread that first touched them: bind before "
				   "they are allocated.",
				gnode, gnode, node_cpus(&s->topo, gnode)[0] ? node_cpus(&s->topo, gnode) : "<its CPUs>");
	return err ? -ENOMEM : 0;
}

static int numa_finish(void *state, struct rule_ctx *c)
{
	struct numa_state *s = state;
	int gnode, e, err = 0;

	if (s->err)
		return s->err;
	if (s->topo.nnodes < 2)
		return 0;	/* one node: nothing is remote */
	e = gpu_node(&s->topo, &gnode);
	if (e == -1)
		return rule_any_launcher(c) ? findings__not_judged(c->out, "numa_remote",
			"the GPUs' NUMA nodes (host information from sysfs, recorded since format 1.2)") : 0;
	if (e == -2)
		return rule_any_launcher(c) ? findings__not_judged(c->out, "numa_remote",
			"which GPU each process uses: the host's GPUs sit on several NUMA nodes") : 0;
	for (size_t i = 0; i < s->n && !err; i++) {
		bool first = true;

		for (size_t k = 0; k < i && first; k++)
			first = s->v[k].pid != s->v[i].pid;
		if (first)
			err = numa_process(s, c, s->v[i].pid, gnode);
	}
	for (size_t i = 0; i < s->nprocs && !err; i++) {
		bool has_thread = false;

		for (size_t k = 0; k < s->n && !has_thread; k++)
			has_thread = s->v[k].pid == s->procs[i].pid;
		if (!has_thread)
			err = numa_process(s, c, s->procs[i].pid, gnode);
	}
	return err;
}

static void numa_free(void *state)
{
	struct numa_state *s = state;

	if (!s)
		return;
	host_topo__free(&s->topo);
	htab__free(&s->index);
	free(s->v);
	free(s->procs);
	free(s);
}

const struct rule rule_numa_remote = {
	.id = "numa_remote",
	.title = "Threads or memory away from their GPU's NUMA node",
	.phase = RULE_PHASE_CAUSE,
	.start = numa_start,
	.finish = numa_finish,
	.free = numa_free,
};
