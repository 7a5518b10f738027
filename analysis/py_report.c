// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "py_report.h"

/* --- line tables ------------------------------------------------------------ */

/* 3.10 co_linetable: (bytecode bytes, signed line delta) pairs; a delta of
 * -128 means "no line" for that range. addr in bytes. */
static long line_310(const struct py_code *c, __u64 addr)
{
	long line = c->first_line, range_line;
	__u64 start, end = 0;
	size_t i;

	for (i = 0; i + 1 < c->table_len; i += 2) {
		signed char ldelta = (signed char)c->table[i + 1];

		start = end;
		end += c->table[i];
		if (ldelta == -128) {
			range_line = -1;
		} else {
			line += ldelta;
			range_line = line;
		}
		if (start <= addr && addr < end)
			return range_line;
	}
	return -1;
}

static __u64 varint(const unsigned char *t, size_t len, size_t *i)
{
	__u64 v = 0;
	unsigned int shift = 0;
	unsigned char b;

	do {
		if (*i >= len || shift > 56)
			return v;
		b = t[(*i)++];
		v |= (__u64)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static long svarint(const unsigned char *t, size_t len, size_t *i)
{
	__u64 u = varint(t, len, i);

	return (u & 1) ? -(long)(u >> 1) : (long)(u >> 1);
}

/* 3.11+ location table: entries of 1..8 code units; the first byte of an
 * entry has bit 7 set, its code in bits 3-6 and the length - 1 in bits
 * 0-2. Codes: 15 no location; 14 long form (signed line delta, end line,
 * columns); 13 line only (signed line delta); 10-12 one line, delta code -
 * 10, two column bytes; 0-9 short form, same line, one column byte. */
static long line_311(const struct py_code *c, __u64 unit)
{
	const unsigned char *t = c->table;
	long line = c->first_line, entry_line;
	__u64 start, end = 0;
	size_t i = 0;

	while (i < c->table_len) {
		unsigned char b = t[i++];
		unsigned int code = (b >> 3) & 15;
		long delta = 0;

		if (!(b & 0x80))
			return -1; /* not at an entry: damaged */
		start = end;
		end += (b & 7) + 1;
		switch (code) {
		case 15:
			break;
		case 14:
			delta = svarint(t, c->table_len, &i);
			varint(t, c->table_len, &i);
			varint(t, c->table_len, &i);
			varint(t, c->table_len, &i);
			break;
		case 13:
			delta = svarint(t, c->table_len, &i);
			break;
		case 10:
		case 11:
		case 12:
			delta = (long)code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		line += delta;
		entry_line = code == 15 ? -1 : line;
		if (start <= unit && unit < end)
			return entry_line;
	}
	return -1;
}

__u32 py_code__line(const struct py_code *c, __s32 instr)
{
	long line;

	if (instr < 0)
		return c->first_line;
	line = c->minor == 10 ? line_310(c, (__u64)instr * 2) : line_311(c, (__u64)instr);
	return line > 0 ? (__u32)line : c->first_line;
}

/* --- lookups ------------------------------------------------------------------ */

static int code_cmp(const void *a, const void *b)
{
	const struct py_code *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

static int stack_cmp(const void *a, const void *b)
{
	const struct py_stack *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

const struct py_code *py_report__code(const struct py_report *p, __u32 pid, __u64 addr)
{
	struct py_code key = { .pid = pid, .addr = addr };

	return p->ncodes ? bsearch(&key, p->codes, p->ncodes, sizeof(key), code_cmp) : NULL;
}

static const struct py_stack *stack_find(const struct py_report *p, __u32 id)
{
	struct py_stack key = { .id = id };

	return p->nstacks ? bsearch(&key, p->stacks, p->nstacks, sizeof(key), stack_cmp) : NULL;
}

const struct py_thread_stats *py_report__thread(const struct py_report *p, __u32 pid, __u32 tid)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].pid == pid && p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

void py_report__frame(const struct py_report *p, __u32 pid, const struct isr_py_frame *f, char *buf, size_t len)
{
	const struct py_code *c = py_report__code(p, pid, f->code);

	if (!c)
		snprintf(buf, len, "<code object 0x%llx, not symbolized>", (unsigned long long)f->code);
	else
		snprintf(buf, len, "%s:%u %s", c->filename, py_code__line(c, f->instr), c->qualname);
}

/* --- collection --------------------------------------------------------------- */

struct sample_ref {
	__u32 pid, tid, stack_id;
};

static int sample_cmp(const void *a, const void *b)
{
	const struct sample_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static char *text_dup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static int add_code(struct py_report *p, size_t *cap, const struct isr_ev_py_code *e)
{
	const char *text = (const char *)(e + 1);
	size_t need = sizeof(*e) + (size_t)e->filename_len + e->qualname_len + e->linetable_len;
	struct py_code *c;

	if (need > e->hdr.size)
		return 0; /* malformed: its frames stay unsymbolized */
	if (p->ncodes == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct py_code *n = realloc(p->codes, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->codes = n;
		*cap = ncap;
	}
	c = &p->codes[p->ncodes];
	memset(c, 0, sizeof(*c));
	c->pid = e->hdr.pid;
	c->addr = e->code;
	c->first_line = e->first_line;
	c->minor = e->py_minor;
	c->filename = text_dup(text, e->filename_len);
	c->qualname = text_dup(text + e->filename_len, e->qualname_len);
	c->table = (const unsigned char *)text + e->filename_len + e->qualname_len;
	c->table_len = e->linetable_len;
	p->ncodes++;
	if (!c->filename || !c->qualname)
		return -ENOMEM;
	return 0;
}

static int add_stack(struct py_report *p, size_t *cap, const struct isr_ev_py_stack *e)
{
	if (sizeof(*e) + (size_t)e->depth * sizeof(struct isr_py_frame) > e->hdr.size)
		return 0;
	if (p->nstacks == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct py_stack *n = realloc(p->stacks, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->stacks = n;
		*cap = ncap;
	}
	p->stacks[p->nstacks].pid = e->hdr.pid;
	p->stacks[p->nstacks].id = e->stack_id;
	p->stacks[p->nstacks].flags = e->flags;
	p->stacks[p->nstacks].depth = e->depth;
	p->stacks[p->nstacks].frames = (const struct isr_py_frame *)(e + 1);
	p->nstacks++;
	return 0;
}

static int site_add(struct py_site **sites, size_t *n, const char *site, __u64 time_ns)
{
	struct py_site *s;
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp((*sites)[i].site, site) == 0) {
			(*sites)[i].calls++;
			(*sites)[i].time_ns += time_ns;
			return 0;
		}
	}
	s = realloc(*sites, (*n + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	*sites = s;
	s = &s[*n];
	snprintf(s->site, sizeof(s->site), "%s", site);
	s->calls = 1;
	s->time_ns = time_ns;
	(*n)++;
	return 0;
}

static int site_by_time_desc(const void *a, const void *b)
{
	const struct py_site *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->site, y->site);
}

/* The CUDA call of each thread last seen, to match the capture that
 * follows it with the same time. */
struct last_call {
	__u32 tid;
	const struct isr_ev_cuda_call *call;
};

static const struct isr_ev_cuda_call *last_call_find(const struct last_call *l, size_t n, __u32 tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].tid == tid)
			return l[i].call;
	return NULL;
}

static int last_call_set(struct last_call **l, size_t *n, size_t *cap, const struct isr_ev_cuda_call *c)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if ((*l)[i].tid == c->hdr.tid) {
			(*l)[i].call = c;
			return 0;
		}
	}
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		struct last_call *m = realloc(*l, ncap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		*l = m;
		*cap = ncap;
	}
	(*l)[*n].tid = c->hdr.tid;
	(*l)[*n].call = c;
	(*n)++;
	return 0;
}

/* Library code: installed packages, the standard library, frozen modules. */
static bool library_file(const char *f)
{
	return strstr(f, "/site-packages/") || strstr(f, "/dist-packages/") || strstr(f, "/lib/python3") ||
	       strncmp(f, "<frozen", 7) == 0;
}

/* The frame a user looks for: the innermost one of their own code (a
 * torch.cuda.synchronize() is reported where the script calls it, not in
 * torch/cuda/__init__.py); the innermost frame when every one is library
 * code. */
static const struct isr_py_frame *caller_frame(const struct py_report *p, const struct py_stack *s)
{
	for (__u32 i = 0; i < s->depth; i++) {
		const struct py_code *c = py_report__code(p, s->pid, s->frames[i].code);

		if (c && !library_file(c->filename))
			return &s->frames[i];
	}
	return &s->frames[0];
}

bool py_report__site(const struct py_report *p, __u32 stack_id, char *buf, size_t len)
{
	const struct py_stack *s = stack_find(p, stack_id);

	if (!s || !s->depth)
		return false;
	py_report__frame(p, s->pid, caller_frame(p, s), buf, len);
	return true;
}

/* A CUDA capture: the site of its call (the innermost frame of the user's
 * own code), by family. */
static int cuda_site(struct py_report *p, const struct isr_ev_py_sample *e, const struct isr_ev_cuda_call *call)
{
	const struct py_stack *s = stack_find(p, e->stack_id);
	const struct isr_cuda_fn *fn;
	char site[PY_SITE_LEN];

	if (!call || call->hdr.ts_ns != e->hdr.ts_ns || call->hdr.pid != e->hdr.pid) {
		p->cuda_unmatched++;
		return 0;
	}
	if (!s || !s->depth)
		snprintf(site, sizeof(site), "<no Python frame>");
	else
		py_report__frame(p, s->pid, caller_frame(p, s), site, sizeof(site));
	fn = isr_cuda_fn(call->func);
	if (!fn)
		return 0;
	if (fn->family == ISR_CUDA_FAM_SYNC || fn->family == ISR_CUDA_FAM_COPY_SYNC)
		return site_add(&p->sync_sites, &p->nsync, site,
				(call->flags & ISR_CUDA_RETURNED) ? call->duration_ns : 0);
	if (fn->family == ISR_CUDA_FAM_LAUNCH || fn->family == ISR_CUDA_FAM_LAUNCH_EX ||
	    fn->family == ISR_CUDA_FAM_GRAPH)
		return site_add(&p->launch_sites, &p->nlaunch, site, 0);
	return 0;
}

struct func_acc {
	__u64 code;
	__u64 self, inclusive;
};

static int func_cmp(const void *a, const void *b)
{
	const struct func_acc *x = a, *y = b;

	return x->code < y->code ? -1 : x->code > y->code;
}

static int func_by_inclusive_desc(const void *a, const void *b)
{
	const struct func_acc *x = a, *y = b;

	if (x->inclusive != y->inclusive)
		return x->inclusive > y->inclusive ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

static int stack_stat_desc(const void *a, const void *b)
{
	const struct py_stack_stat *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->stack->id < y->stack->id ? -1 : x->stack->id > y->stack->id;
}

/* One thread's samples refs[0..n) (sorted by stack id). */
static int thread_stats(struct py_report *p, const struct sample_ref *refs, size_t n, struct py_thread_stats *t)
{
	struct py_stack_stat *stacks = NULL;
	struct func_acc *acc = NULL;
	size_t nstacks = 0, nacc = 0, cap = 0, i, j, k;

	memset(t, 0, sizeof(*t));
	t->pid = refs[0].pid;
	t->tid = refs[0].tid;
	t->samples = n;
	stacks = calloc(n, sizeof(*stacks));
	if (!stacks)
		return -ENOMEM;
	for (i = 0; i < n; i = j) {
		const struct py_stack *s = stack_find(p, refs[i].stack_id);

		for (j = i; j < n && refs[j].stack_id == refs[i].stack_id; j++)
			;
		if (!s)
			continue;
		stacks[nstacks].stack = s;
		stacks[nstacks].samples = j - i;
		nstacks++;
		for (k = 0; k < s->depth; k++) {
			size_t m;

			/* inclusive: once per sample, even when recursive */
			for (m = 0; m < k && s->frames[m].code != s->frames[k].code; m++)
				;
			if (m < k)
				continue;
			if (nacc == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				struct func_acc *a = realloc(acc, ncap * sizeof(*a));

				if (!a) {
					free(acc);
					free(stacks);
					return -ENOMEM;
				}
				acc = a;
				cap = ncap;
			}
			acc[nacc].code = s->frames[k].code;
			acc[nacc].inclusive = j - i;
			acc[nacc].self = k == 0 ? j - i : 0;
			nacc++;
		}
	}
	if (nacc) {
		qsort(acc, nacc, sizeof(*acc), func_cmp);
		for (i = 0, k = 0; i < nacc; i++) {
			if (k && acc[k - 1].code == acc[i].code) {
				acc[k - 1].self += acc[i].self;
				acc[k - 1].inclusive += acc[i].inclusive;
			} else {
				acc[k++] = acc[i];
			}
		}
		nacc = k;
		qsort(acc, nacc, sizeof(*acc), func_by_inclusive_desc);
	}
	for (i = 0; i < nacc && i < PY_TOP_FUNCS; i++) {
		t->funcs[i].code_addr = acc[i].code;
		t->funcs[i].code = py_report__code(p, t->pid, acc[i].code);
		t->funcs[i].self = acc[i].self;
		t->funcs[i].inclusive = acc[i].inclusive;
	}
	t->nfuncs = i;
	if (nstacks)
		qsort(stacks, nstacks, sizeof(*stacks), stack_stat_desc);
	for (i = 0; i < nstacks && i < PY_TOP_STACKS; i++)
		t->stacks[i] = stacks[i];
	t->nstacks = i;
	free(acc);
	free(stacks);
	return 0;
}

int py_report__compute(const struct recording *r, struct py_report **out)
{
	struct py_report *p = calloc(1, sizeof(*p));
	struct sample_ref *refs = NULL;
	struct last_call *last = NULL;
	size_t ncodes_cap = 0, nstacks_cap = 0, nrefs = 0, refs_cap = 0, nlast = 0, last_cap = 0, i, j;
	int e = -ENOMEM;

	if (!p)
		return -ENOMEM;
	/* Codes and stacks first: a sample's stack may sort before its
	 * definition when both have one time. */
	for (i = 0; i < r->event_count; i++) {
		const struct isr_ev_hdr *h = r->events[i];

		if (h->type == ISR_EV_PY_CODE && h->size >= sizeof(struct isr_ev_py_code))
			e = add_code(p, &ncodes_cap, (const void *)h);
		else if (h->type == ISR_EV_PY_STACK && h->size >= sizeof(struct isr_ev_py_stack))
			e = add_stack(p, &nstacks_cap, (const void *)h);
		else
			continue;
		if (e)
			goto fail;
	}
	if (p->ncodes) {
		qsort(p->codes, p->ncodes, sizeof(*p->codes), code_cmp);
		/* an address seen again (after an exec) keeps its first object */
		for (i = 1, j = 1; i < p->ncodes; i++) {
			if (code_cmp(&p->codes[i], &p->codes[j - 1]) == 0) {
				free((void *)p->codes[i].filename);
				free((void *)p->codes[i].qualname);
			} else {
				p->codes[j++] = p->codes[i];
			}
		}
		p->ncodes = j;
	}
	if (p->nstacks)
		qsort(p->stacks, p->nstacks, sizeof(*p->stacks), stack_cmp);
	for (i = 0; i < r->event_count; i++) {
		const struct isr_ev_hdr *h = r->events[i];

		e = 0;
		if (h->type == ISR_EV_CUDA_CALL && h->size >= sizeof(struct isr_ev_cuda_call)) {
			e = last_call_set(&last, &nlast, &last_cap, (const void *)h);
		} else if (h->type == ISR_EV_PY_STATUS && h->size >= sizeof(struct isr_ev_py_status)) {
			const struct isr_ev_py_status **s = realloc(p->statuses, (p->nstatuses + 1) * sizeof(*s));

			if (!s) {
				e = -ENOMEM;
				goto fail;
			}
			p->statuses = s;
			s[p->nstatuses++] = (const void *)h;
		} else if (h->type == ISR_EV_PY_SAMPLE && h->size >= sizeof(struct isr_ev_py_sample)) {
			const struct isr_ev_py_sample *smp = (const void *)h;

			if (smp->kind == ISR_PY_KIND_CUDA) {
				p->cuda_samples++;
				e = cuda_site(p, smp, last_call_find(last, nlast, h->tid));
			} else if (smp->kind == ISR_PY_KIND_TIMER) {
				p->timer_samples++;
				if (nrefs == refs_cap) {
					size_t ncap = refs_cap ? 2 * refs_cap : 1024;
					struct sample_ref *n = realloc(refs, ncap * sizeof(*n));

					if (!n) {
						e = -ENOMEM;
						goto fail;
					}
					refs = n;
					refs_cap = ncap;
				}
				refs[nrefs].pid = h->pid;
				refs[nrefs].tid = h->tid;
				refs[nrefs].stack_id = smp->stack_id;
				nrefs++;
			}
		}
		if (e)
			goto fail;
	}
	if (nrefs) {
		qsort(refs, nrefs, sizeof(*refs), sample_cmp);
		for (i = 0; i < nrefs; i = j) {
			struct py_thread_stats *n;

			for (j = i; j < nrefs && refs[j].pid == refs[i].pid && refs[j].tid == refs[i].tid; j++)
				;
			n = realloc(p->threads, (p->nthreads + 1) * sizeof(*n));
			if (!n) {
				e = -ENOMEM;
				goto fail;
			}
			p->threads = n;
			e = thread_stats(p, refs + i, j - i, &p->threads[p->nthreads]);
			if (e)
				goto fail;
			p->nthreads++;
		}
	}
	if (p->nsync)
		qsort(p->sync_sites, p->nsync, sizeof(*p->sync_sites), site_by_time_desc);
	if (p->nlaunch)
		qsort(p->launch_sites, p->nlaunch, sizeof(*p->launch_sites), site_by_time_desc);
	free(refs);
	free(last);
	*out = p;
	return 0;
fail:
	free(refs);
	free(last);
	py_report__free(p);
	return e;
}

void py_report__free(struct py_report *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ncodes; i++) {
		free((void *)p->codes[i].filename);
		free((void *)p->codes[i].qualname);
	}
	free(p->codes);
	free(p->stacks);
	free(p->threads);
	free(p->sync_sites);
	free(p->launch_sites);
	free(p->statuses);
	free(p);
}
