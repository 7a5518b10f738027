// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devmem.h"
#include "htab.h"

struct dm_proc {
	__u32 pid;
	__u64 live;
	struct htab allocs;	/* address -> bytes */
	struct htab vmm;	/* handle -> bytes */
};

struct devmem {
	struct htab by_pid;	/* pid -> index */
	struct dm_proc *v;
	size_t n, cap;
};

struct devmem *devmem__new(void)
{
	return calloc(1, sizeof(struct devmem));
}

void devmem__free(struct devmem *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		htab__free(&m->v[i].allocs);
		htab__free(&m->v[i].vmm);
	}
	htab__free(&m->by_pid);
	free(m->v);
	free(m);
}

static struct dm_proc *proc_of(struct devmem *m, __u32 pid)
{
	__u64 idx;

	if (htab_u64__get(&m->by_pid, pid, &idx))
		return &m->v[idx];
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		struct dm_proc *n = reallocarray(m->v, cap, sizeof(*n));

		if (!n)
			return NULL;
		m->v = n;
		m->cap = cap;
	}
	if (htab_u64__put(&m->by_pid, pid, m->n))
		return NULL;
	memset(&m->v[m->n], 0, sizeof(*m->v));
	m->v[m->n].pid = pid;
	return &m->v[m->n++];
}

/* Adds (bytes != 0) or removes key of table t; false when nothing changed. */
static int track(struct dm_proc *p, struct htab *t, __u64 key, __u64 bytes, bool add)
{
	__u64 old;
	bool had;

	if (!key)
		return 0;
	had = htab_u64__take(t, key, &old);
	if (had)
		p->live -= old;
	if (add) {
		if (htab_u64__put(t, key, bytes))
			return -ENOMEM;
		p->live += bytes;
	}
	return had || add;
}

static int on_call(struct devmem *m, const struct isr_ev_cuda_call *c, struct dm_proc **out)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(c->func);
	bool device = c->args[3] >= ISR_ALLOC_DEVICE && c->args[3] <= ISR_ALLOC_MANAGED;
	struct dm_proc *p;

	if (!fn || !(c->flags & ISR_CUDA_RETURNED) || c->status != 0)
		return 0;
	switch (fn->family) {
	case ISR_CUDA_FAM_ALLOC:
	case ISR_CUDA_FAM_FREE:
		if (!device)
			return 0;
		break;
	case ISR_CUDA_FAM_VMM_CREATE:
	case ISR_CUDA_FAM_VMM_RELEASE:
		break;
	default:
		return 0;
	}
	p = proc_of(m, c->hdr.pid);
	if (!p)
		return -ENOMEM;
	*out = p;
	switch (fn->family) {
	case ISR_CUDA_FAM_ALLOC:
		return track(p, &p->allocs, c->args[0], c->args[1], true);
	case ISR_CUDA_FAM_FREE:
		return track(p, &p->allocs, c->args[0], 0, false);
	case ISR_CUDA_FAM_VMM_CREATE:
		return track(p, &p->vmm, c->args[0], c->args[1], true);
	default:
		return track(p, &p->vmm, c->args[0], 0, false);
	}
}

int devmem__event(struct devmem *m, const struct isr_ev_hdr *h, const struct task_change *c, __u32 *pid,
		  __u64 *live)
{
	struct dm_proc *p = NULL;
	__u64 idx;
	int r = 0;

	if (h->type == ISR_EV_CUDA_CALL) {
		r = on_call(m, (const void *)h, &p);
	} else if (c->image_ended && htab_u64__get(&m->by_pid, c->image_ended, &idx)) {
		p = &m->v[idx];
		htab__free(&p->allocs);
		htab__free(&p->vmm);
		r = p->live != 0;
		p->live = 0;
	}
	if (r > 0) {
		*pid = p->pid;
		*live = p->live;
	}
	return r;
}
