// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nccl.h"

const char *nccl_func_name(__u16 func)
{
#define NAME_ROW(id, sym, kind, layout) [id] = #sym,
	static const char *const names[ISR_NCCL_FN_MAX] = { ISR_NCCL_FUNCS(NAME_ROW) };
#undef NAME_ROW
	return func < ISR_NCCL_FN_MAX && names[func] ? names[func] : "?";
}

bool nccl_func_is_collective(__u16 func)
{
#define KIND_ROW(id, sym, kind, layout) [id] = kind,
	static const __u8 kinds[ISR_NCCL_FN_MAX] = { ISR_NCCL_FUNCS(KIND_ROW) };
#undef KIND_ROW
	return func < ISR_NCCL_FN_MAX && kinds[func] == ISR_NCCL_KIND_COLL;
}

/* Grows *v (of *cap elements of size sz) to hold n. 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	p = realloc(*v, c * sz);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static struct nccl_proc *proc_get(struct nccl_calls *c, __u32 pid)
{
	struct nccl_proc *p;

	for (size_t i = c->nprocs; i-- > 0;)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	if (grow((void **)&c->procs, &c->procs_cap, c->nprocs + 1, sizeof(*c->procs)))
		return NULL;
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->env_rank = p->env_local_rank = p->env_world_size = -1;
	return p;
}

const struct nccl_proc *nccl_calls__proc(const struct nccl_calls *c, __u32 pid)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	return NULL;
}

/* The latest communicator (pid, handle): its index, or -1. */
static long comm_find(const struct nccl_calls *c, __u32 pid, __u64 handle)
{
	for (size_t i = c->ncomms; i-- > 0;)
		if (c->comms[i].pid == pid && c->comms[i].handle == handle)
			return (long)i;
	return -1;
}

static long comm_add(struct nccl_calls *c, __u32 pid, __u64 handle)
{
	struct nccl_comm *m;

	if (grow((void **)&c->comms, &c->comms_cap, c->ncomms + 1, sizeof(*c->comms)))
		return -1;
	m = &c->comms[c->ncomms];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->handle = handle;
	m->rank = m->nranks = -1;
	return (long)c->ncomms++;
}

static int on_comm(struct nccl_calls *c, const struct isr_ev_nccl_comm *ev)
{
	struct nccl_proc *p = proc_get(c, ev->hdr.pid);
	long i;

	if (!p)
		return -ENOMEM;
	if (ev->func < ISR_NCCL_FN_MAX)
		p->calls[ev->func]++;
	if (ev->status != 0 || !ev->comm) {
		p->setup_failures++;
		return 0;
	}
	/* a new communicator, even at the address of one destroyed before */
	i = comm_add(c, ev->hdr.pid, ev->comm);
	if (i < 0)
		return -ENOMEM;
	c->comms[i].id_hash = ev->id_hash;
	c->comms[i].rank = ev->rank;
	c->comms[i].nranks = ev->nranks;
	c->comms[i].setup_seen = true;
	return 0;
}

static int on_call(struct nccl_calls *c, const struct pass_event *e, const struct isr_ev_nccl_call *ev)
{
	struct nccl_proc *p = proc_get(c, ev->hdr.pid);
	__u64 bytes = ev->count * ISR_NCCL_DTYPE_SIZE(ev->dtype);
	struct nccl_arrival *a;
	long i;

	if (!p)
		return -ENOMEM;
	if (ev->func < ISR_NCCL_FN_MAX) {
		p->calls[ev->func]++;
		p->bytes[ev->func] += bytes;
	}
	if (!nccl_func_is_collective(ev->func))
		return 0;
	if (!ev->seq) {
		p->unnumbered++;
		return 0;
	}
	i = comm_find(c, ev->hdr.pid, ev->comm);
	if (i < 0)
		i = comm_add(c, ev->hdr.pid, ev->comm);
	if (i < 0 || grow((void **)&c->arrivals, &c->arrivals_cap, c->narrivals + 1, sizeof(*c->arrivals)))
		return -ENOMEM;
	c->comms[i].collectives++;
	a = &c->arrivals[c->narrivals++];
	*a = (struct nccl_arrival){ .ns = e->start, .seq = ev->seq, .bytes = bytes, .pid = ev->hdr.pid,
				    .tid = ev->hdr.tid, .comm = (__u32)i, .func = ev->func };
	return 0;
}

static int on_env(struct nccl_calls *c, const struct isr_ev_rank_env *ev)
{
	struct nccl_proc *p = proc_get(c, ev->hdr.pid);

	if (!p)
		return -ENOMEM;
	p->env_rank = ev->flags & ISR_RANK_ENV_RANK ? ev->rank : -1;
	p->env_local_rank = ev->flags & ISR_RANK_ENV_LOCAL_RANK ? ev->local_rank : -1;
	p->env_world_size = ev->flags & ISR_RANK_ENV_WORLD_SIZE ? ev->world_size : -1;
	return 0;
}

int nccl_calls__event(struct nccl_calls *c, const struct pass_event *e)
{
	const struct isr_ev_hdr *h = e->h;

	if (!pass__usable(h))
		return 0;
	switch (h->type) {
	case ISR_EV_NCCL_COMM:
		return on_comm(c, (const void *)h);
	case ISR_EV_NCCL_CALL:
		return on_call(c, e, (const void *)h);
	case ISR_EV_RANK_ENV:
		return on_env(c, (const void *)h);
	default:
		return 0;
	}
}

void nccl_calls__free(struct nccl_calls *c)
{
	if (!c)
		return;
	free(c->comms);
	free(c->arrivals);
	free(c->procs);
	memset(c, 0, sizeof(*c));
}
