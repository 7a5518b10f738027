// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python stacks (pystacks.h), fed the pass's events: dictionaries of the
 * code objects and stacks (copied: the events go), counts per thread and
 * stack, and the CUDA captures per stack; what needs every code object
 * (function names, lines, the user's frame of a site) is worked out at the
 * end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "py_report.h"
#include "buf.h"
#include "htab.h"

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

/* The samples of one stack in one thread. */
struct sample_count {
	__u32 pid, tid, stack_id;
	__u64 samples;
};

/* The CUDA captures of one stack, by what the calls were. */
enum { SITE_SYNC, SITE_LAUNCH };

struct capture_count {
	__u32 stack_id;
	__u32 kind;		/* SITE_* */
	__u64 calls, time_ns;
};

/* A thread's latest CUDA call, to match the capture that follows it with
 * the same time. */
struct last_call {
	__u32 tid, pid;
	__u64 ts;
	__u16 func, flags;
	__u64 duration_ns;
};

struct py_builder {
	struct py_report *p;
	struct htab codes;	/* struct py_code by (pid, addr): the first one */
	struct htab stacks;	/* struct py_stack by id: the first one */
	struct htab samples;	/* struct sample_count by (pid, tid, stack) */
	struct htab captured;	/* struct sample_count by (pid, tid, stack): the captures at CUDA calls */
	struct htab captures;	/* struct capture_count by (stack, kind) */
	struct htab last;	/* struct last_call by tid */
	struct isr_ev_py_status *statuses;
	size_t statuses_cap;
};

static __u64 code_hash(const void *e)
{
	const struct py_code *c = e;

	return hash__mix(hash__u64(c->pid), c->addr);
}

static bool code_equal(const void *a, const void *b)
{
	return code_cmp(a, b) == 0;
}

static __u64 stack_hash(const void *e)
{
	return hash__u64(((const struct py_stack *)e)->id);
}

static bool stack_equal(const void *a, const void *b)
{
	return stack_cmp(a, b) == 0;
}

static __u64 sample_hash(const void *e)
{
	const struct sample_count *s = e;

	return hash__mix(hash__u64((__u64)s->pid << 32 | s->tid), s->stack_id);
}

static bool sample_equal(const void *a, const void *b)
{
	const struct sample_count *x = a, *y = b;

	return x->pid == y->pid && x->tid == y->tid && x->stack_id == y->stack_id;
}

static __u64 capture_hash(const void *e)
{
	const struct capture_count *c = e;

	return hash__u64((__u64)c->stack_id << 32 | c->kind);
}

static bool capture_equal(const void *a, const void *b)
{
	const struct capture_count *x = a, *y = b;

	return x->stack_id == y->stack_id && x->kind == y->kind;
}

static __u64 last_hash(const void *e)
{
	return hash__u64(((const struct last_call *)e)->tid);
}

static bool last_equal(const void *a, const void *b)
{
	return ((const struct last_call *)a)->tid == ((const struct last_call *)b)->tid;
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

static void code__free(struct py_code *c)
{
	free((void *)c->filename);
	free((void *)c->qualname);
	free((void *)c->table);
}

/* A code object, copied; an address seen again (after an exec) keeps its
 * first object. */
static int add_code(struct py_builder *b, const struct isr_ev_py_code *e)
{
	const char *text = (const char *)(e + 1);
	size_t need = sizeof(*e) + (size_t)e->filename_len + e->qualname_len + e->linetable_len;
	struct py_code key = { .pid = e->hdr.pid, .addr = e->code }, *c;
	bool added;

	if (need > e->hdr.size)
		return 0; /* malformed: its frames stay unsymbolized */
	if (b->codes.len >= PY_MAX_CODES && !htab__find(&b->codes, &key)) {
		b->p->codes_other++;	/* its frames stay unsymbolized */
		return 0;
	}
	c = htab__insert(&b->codes, &key, &added);
	if (!c)
		return -ENOMEM;
	if (!added)
		return 0;
	c->first_line = e->first_line;
	c->minor = e->py_minor;
	c->filename = text_dup(text, e->filename_len);
	c->qualname = text_dup(text + e->filename_len, e->qualname_len);
	c->table = malloc(e->linetable_len ? e->linetable_len : 1);
	c->table_len = e->linetable_len;
	if (!c->filename || !c->qualname || !c->table)
		return -ENOMEM;
	memcpy((void *)c->table, text + e->filename_len + e->qualname_len, e->linetable_len);
	return 0;
}

static int add_stack(struct py_builder *b, const struct isr_ev_py_stack *e)
{
	size_t len = (size_t)e->depth * sizeof(struct isr_py_frame);
	struct py_stack key = { .id = e->stack_id }, *s;
	bool added;

	if (sizeof(*e) + len > e->hdr.size)
		return 0;
	if (b->stacks.len >= PY_MAX_STACKS && !htab__find(&b->stacks, &key)) {
		b->p->stacks_other++;
		return 0;
	}
	s = htab__insert(&b->stacks, &key, &added);
	if (!s)
		return -ENOMEM;
	if (!added)
		return 0;
	s->pid = e->hdr.pid;
	s->flags = e->flags;
	s->depth = e->depth;
	s->frames = malloc(len ? len : 1);
	if (!s->frames)
		return -ENOMEM;
	memcpy((void *)s->frames, e + 1, len);
	return 0;
}

static int site_add(struct py_site **sites, size_t *n, const char *site, __u64 calls, __u64 time_ns)
{
	struct py_site *s;
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp((*sites)[i].site, site) == 0) {
			(*sites)[i].calls += calls;
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
	s->calls = calls;
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

/* A CUDA capture: counted under its stack and what its call was; the
 * stack's site (the innermost frame of the user's own code) is known once
 * every code object is. */
/* The stack a sample or capture is counted under: its own, or 0 (no
 * stack: ids start at 1) once PY_MAX_STACKS are kept and its is not one,
 * so that the counts' tables stay bounded too. */
static __u32 counted_stack(const struct py_builder *b, __u32 stack_id)
{
	struct py_stack key = { .id = stack_id };

	return b->stacks.len < PY_MAX_STACKS || htab__find(&b->stacks, &key) ? stack_id : 0;
}

static int cuda_capture(struct py_builder *b, const struct isr_ev_py_sample *e)
{
	struct last_call key = { .tid = e->hdr.tid }, *call = htab__find(&b->last, &key);
	const struct isr_cuda_fn *fn;
	struct capture_count ck = { .stack_id = counted_stack(b, e->stack_id) }, *c;
	bool added;

	if (!call || call->ts != e->hdr.ts_ns || call->pid != e->hdr.pid) {
		b->p->cuda_unmatched++;
		return 0;
	}
	fn = isr_cuda_fn(call->func);
	if (!fn)
		return 0;
	if (fn->kind & ISR_CUDA_K_SYNC)
		ck.kind = SITE_SYNC;
	else if (fn->kind & ISR_CUDA_K_LAUNCH)
		ck.kind = SITE_LAUNCH;
	else
		return 0;
	c = htab__insert(&b->captures, &ck, &added);
	if (!c)
		return -ENOMEM;
	c->calls++;
	if (ck.kind == SITE_SYNC && (call->flags & ISR_CUDA_RETURNED))
		c->time_ns += call->duration_ns;
	return 0;
}

/* The sites of the CUDA captures, merged by site. */
static int capture_sites(struct py_builder *b)
{
	struct py_report *p = b->p;
	struct capture_count *c;
	size_t pos = 0;
	int err = 0;

	while (!err && (c = htab__next(&b->captures, &pos))) {
		const struct py_stack *s = stack_find(p, c->stack_id);
		char site[PY_SITE_LEN];

		if (!c->stack_id && p->stacks_other)
			snprintf(site, sizeof(site), "%s", PY_OTHER_STACKS);
		else if (!s || !s->depth)
			snprintf(site, sizeof(site), "<no Python frame>");
		else
			py_report__frame(p, s->pid, caller_frame(p, s), site, sizeof(site));
		if (c->kind == SITE_SYNC)
			err = site_add(&p->sync_sites, &p->nsync, site, c->calls, c->time_ns);
		else
			err = site_add(&p->launch_sites, &p->nlaunch, site, c->calls, 0);
	}
	return err;
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

/* Stacks in the order of what the reports print of them (each frame's
 * "file:line function", the outer frames' truncation): two stacks a
 * thread sampled that print the same compare equal (the same frames
 * interned twice, or instructions of one line). */
static int shown_cmp(const void *a, const void *b, void *ctx)
{
	const struct py_report *p = ctx;
	const struct py_stack *x = ((const struct py_stack_stat *)a)->stack, *y = ((const struct py_stack_stat *)b)->stack;
	__u16 fx = x->flags & (ISR_PY_STACK_TRUNCATED | ISR_PY_STACK_INVALID);
	__u16 fy = y->flags & (ISR_PY_STACK_TRUNCATED | ISR_PY_STACK_INVALID);

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	for (__u16 k = 0; k < x->depth; k++) {
		const struct isr_py_frame *u = &x->frames[k], *v = &y->frames[k];
		const struct py_code *c;
		__s64 lu, lv;

		if (u->code != v->code)
			return u->code < v->code ? -1 : 1;
		c = py_report__code(p, x->pid, u->code);
		lu = c ? (__s64)py_code__line(c, u->instr) : u->instr;
		lv = c ? (__s64)py_code__line(c, v->instr) : v->instr;
		if (lu != lv)
			return lu < lv ? -1 : 1;
	}
	return 0;
}

/* One thread's counts v[0..n) (sorted by stack id). */
static int thread_stats(struct py_report *p, const struct sample_count *v, size_t n, struct py_thread_stats *t)
{
	struct py_stack_stat *stacks = NULL;
	struct func_acc *acc = NULL;
	size_t nstacks = 0, nacc = 0, cap = 0, i, k;

	memset(t, 0, sizeof(*t));
	t->pid = v[0].pid;
	t->tid = v[0].tid;
	stacks = calloc(n, sizeof(*stacks));
	if (!stacks)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct py_stack *s = stack_find(p, v[i].stack_id);

		t->samples += v[i].samples;
		if (!s)
			continue;
		stacks[nstacks].stack = s;
		stacks[nstacks].samples = v[i].samples;
		nstacks++;
		for (k = 0; k < s->depth; k++) {
			size_t m;

			/* inclusive: once per sample, even when recursive */
			for (m = 0; m < k && s->frames[m].code != s->frames[k].code; m++)
				;
			if (m < k)
				continue;
			if (array__reserve(&acc, &cap, nacc + 1, sizeof(*acc))) {
				free(acc);
				free(stacks);
				return -ENOMEM;
			}
			acc[nacc].code = s->frames[k].code;
			acc[nacc].inclusive = v[i].samples;
			acc[nacc].self = k == 0 ? v[i].samples : 0;
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
	if (nstacks) {
		/* stacks that print the same are one: their samples summed */
		qsort_r(stacks, nstacks, sizeof(*stacks), shown_cmp, p);
		for (i = 0, k = 0; i < nstacks; i++) {
			if (k && !shown_cmp(&stacks[k - 1], &stacks[i], p))
				stacks[k - 1].samples += stacks[i].samples;
			else
				stacks[k++] = stacks[i];
		}
		nstacks = k;
		qsort(stacks, nstacks, sizeof(*stacks), stack_stat_desc);
	}
	for (i = 0; i < nstacks && i < PY_TOP_STACKS; i++)
		t->stacks[i] = stacks[i];
	t->nstacks = i;
	free(acc);
	free(stacks);
	return 0;
}

static int sample_cmp(const void *a, const void *b)
{
	const struct sample_count *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* The entries of table h as a new array of elements of its entry size, in
 * *out. 0 or -ENOMEM. */
static int table_to_array(const struct htab *h, void *out, size_t *n)
{
	unsigned char *v = malloc((h->len ? h->len : 1) * h->entry_size);
	size_t pos = 0;
	void *e;

	memcpy(out, &v, sizeof(v));
	*n = 0;
	if (!v)
		return -ENOMEM;
	while ((e = htab__next(h, &pos)))
		memcpy(v + (*n)++ * h->entry_size, e, h->entry_size);
	return 0;
}

/* Per thread with samples: its functions and stacks. */
static int threads_stats(struct py_builder *b)
{
	struct py_report *p = b->p;
	struct sample_count *v;
	size_t n, i, j;
	int err = table_to_array(&b->samples, &v, &n);

	if (err)
		return err;
	qsort(v, n, sizeof(*v), sample_cmp);
	p->threads = calloc(n ? n : 1, sizeof(*p->threads));
	if (!p->threads)
		err = -ENOMEM;
	for (i = 0; i < n && !err; i = j) {
		for (j = i; j < n && v[j].pid == v[i].pid && v[j].tid == v[i].tid; j++)
			;
		err = thread_stats(p, v + i, j - i, &p->threads[p->nthreads]);
		if (!err)
			p->nthreads++;
	}
	free(v);
	return err;
}

/* threading's own frames from a thread's start to its target. */
static bool threading_frame(const struct py_code *c)
{
	static const char file[] = "/threading.py";
	size_t n = c ? strlen(c->filename) : 0;

	if (n < sizeof(file) - 1 || strcmp(c->filename + n - (sizeof(file) - 1), file))
		return false;
	return !strcmp(c->qualname, "Thread._bootstrap") || !strcmp(c->qualname, "Thread._bootstrap_inner") ||
	       !strcmp(c->qualname, "Thread.run");
}

/* The entry stack s shows (py_thread_entry), into buf; false when its
 * outermost frame is not threading's start of a thread, or the stack was
 * cut short. */
static bool stack_entry(const struct py_report *p, const struct py_stack *s, char *buf, size_t len)
{
	static const char locals[] = "<locals>.";
	const struct py_code *c;
	size_t k = s->depth, n = 0;

	if (!k || (s->flags & (ISR_PY_STACK_TRUNCATED | ISR_PY_STACK_INVALID)))
		return false;
	c = py_report__code(p, s->pid, s->frames[k - 1].code);
	if (!threading_frame(c) || strcmp(c->qualname, "Thread._bootstrap"))
		return false;
	while (k-- > 0 && threading_frame(c = py_report__code(p, s->pid, s->frames[k].code)))
		;
	if (k == (size_t)-1 || !c)
		return false;
	for (const char *q = c->qualname; *q && n + 1 < len;)
		if (!strncmp(q, locals, sizeof(locals) - 1))
			q += sizeof(locals) - 1;
		else
			buf[n++] = *q++;
	buf[n] = '\0';
	return n > 0;
}

/* Each thread's entry: the one the most of its samples and captures show. */
static int thread_entries(struct py_builder *b)
{
	struct py_report *p = b->p;
	struct sample_count *v = NULL, *cap = NULL;
	size_t n = 0, ncap = 0, vcap, i, j;
	int err = table_to_array(&b->samples, &v, &n);

	vcap = n;
	err = err ?: table_to_array(&b->captured, &cap, &ncap);
	err = err ?: array__reserve(&v, &vcap, n + ncap, sizeof(*v));
	if (err)
		goto out;
	memcpy(v + n, cap, ncap * sizeof(*cap));
	n += ncap;
	qsort(v, n, sizeof(*v), sample_cmp);
	p->entries = calloc(n ? n : 1, sizeof(*p->entries));
	if (!p->entries) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i = j) {
		struct py_thread_entry *best = &p->entries[p->nentries], cand;

		memset(best, 0, sizeof(*best));
		for (j = i; j < n && v[j].pid == v[i].pid && v[j].tid == v[i].tid; j++) {
			const struct py_stack *s = stack_find(p, v[j].stack_id);
			__u64 count = v[j].samples;

			if (!s || !stack_entry(p, s, cand.name, sizeof(cand.name)))
				continue;
			/* the same entry in the thread's other stacks */
			for (size_t k = j + 1; k < n && v[k].pid == v[i].pid && v[k].tid == v[i].tid; k++) {
				const struct py_stack *o = stack_find(p, v[k].stack_id);
				char name[PY_ENTRY_LEN];

				if (o && stack_entry(p, o, name, sizeof(name)) && !strcmp(name, cand.name))
					count += v[k].samples;
			}
			if (count > best->samples) {
				snprintf(best->name, sizeof(best->name), "%s", cand.name);
				best->samples = count;
			}
		}
		if (best->samples) {
			best->pid = v[i].pid;
			best->tid = v[i].tid;
			p->nentries++;
		}
	}
out:
	free(v);
	free(cap);
	return err;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct py_thread_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

const char *py_report__thread_entry(const struct py_report *p, __u32 pid, __u32 tid)
{
	struct py_thread_entry key = { .pid = pid, .tid = tid };
	const struct py_thread_entry *e;

	if (!p || !p->nentries)
		return NULL;
	e = bsearch(&key, p->entries, p->nentries, sizeof(*p->entries), entry_cmp);
	return e ? e->name : NULL;
}

struct py_builder *py_builder__new(void)
{
	struct py_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->p = calloc(1, sizeof(*b->p));
	if (!b->p) {
		free(b);
		return NULL;
	}
	htab__init(&b->codes, sizeof(struct py_code), code_hash, code_equal);
	htab__init(&b->stacks, sizeof(struct py_stack), stack_hash, stack_equal);
	htab__init(&b->samples, sizeof(struct sample_count), sample_hash, sample_equal);
	htab__init(&b->captured, sizeof(struct sample_count), sample_hash, sample_equal);
	htab__init(&b->captures, sizeof(struct capture_count), capture_hash, capture_equal);
	htab__init(&b->last, sizeof(struct last_call), last_hash, last_equal);
	return b;
}

static int on_status(struct py_builder *b, const struct isr_ev_py_status *e)
{
	struct py_report *p = b->p;

	if (p->nstatuses == PY_MAX_STATUSES) {
		p->statuses_cut++;
		return 0;
	}
	if (array__reserve(&b->statuses, &b->statuses_cap, p->nstatuses + 1, sizeof(*b->statuses)))
		return -ENOMEM;
	b->statuses[p->nstatuses++] = *e;
	return 0;
}

static int on_call(struct py_builder *b, const struct isr_ev_cuda_call *e)
{
	struct last_call key = { .tid = e->hdr.tid }, *c;
	bool added;

	c = htab__insert(&b->last, &key, &added);
	if (!c)
		return -ENOMEM;
	c->pid = e->hdr.pid;
	c->ts = e->hdr.ts_ns;
	c->func = e->func;
	c->flags = e->flags;
	c->duration_ns = e->duration_ns;
	return 0;
}

static int on_sample(struct py_builder *b, const struct isr_ev_py_sample *e)
{
	struct sample_count key = { .pid = e->hdr.pid, .tid = e->hdr.tid, .stack_id = counted_stack(b, e->stack_id) },
			    *c;
	bool added;

	if (e->kind == ISR_PY_KIND_CUDA) {
		b->p->cuda_samples++;
		c = htab__insert(&b->captured, &key, &added);
		if (!c)
			return -ENOMEM;
		c->samples++;
		return cuda_capture(b, e);
	}
	if (e->kind != ISR_PY_KIND_TIMER)
		return 0;
	b->p->timer_samples++;
	c = htab__insert(&b->samples, &key, &added);
	if (!c)
		return -ENOMEM;
	c->samples++;
	return 0;
}

int py_builder__event(struct py_builder *b, const struct pass_event *e)
{
	const struct isr_ev_hdr *h = e->h;

	switch (h->type) {
	case ISR_EV_PY_CODE:
		return add_code(b, (const void *)h);
	case ISR_EV_PY_STACK:
		return add_stack(b, (const void *)h);
	case ISR_EV_PY_STATUS:
		return on_status(b, (const void *)h);
	case ISR_EV_PY_SAMPLE:
		return on_sample(b, (const void *)h);
	case ISR_EV_CUDA_CALL:
		return on_call(b, (const void *)h);
	default:
		return 0;
	}
}

void py_builder__free(struct py_builder *b)
{
	size_t pos = 0;
	void *e;

	if (!b)
		return;
	while ((e = htab__next(&b->codes, &pos)))
		code__free(e);
	pos = 0;
	while ((e = htab__next(&b->stacks, &pos)))
		free((void *)((struct py_stack *)e)->frames);
	htab__free(&b->codes);
	htab__free(&b->stacks);
	htab__free(&b->samples);
	htab__free(&b->captured);
	htab__free(&b->captures);
	htab__free(&b->last);
	free(b->statuses);
	py_report__free(b->p);
	free(b);
}

int py_builder__finish(struct py_builder *b, struct py_report **out)
{
	struct py_report *p = b->p;
	int err;

	*out = NULL;
	/* the dictionaries move into the report, with what their entries own */
	err = table_to_array(&b->codes, &p->codes, &p->ncodes);
	if (!err)
		htab__free(&b->codes);
	err = err ?: table_to_array(&b->stacks, &p->stacks, &p->nstacks);
	if (!err) {
		htab__free(&b->stacks);
		qsort(p->codes, p->ncodes, sizeof(*p->codes), code_cmp);
		qsort(p->stacks, p->nstacks, sizeof(*p->stacks), stack_cmp);
		p->status_data = b->statuses;
		b->statuses = NULL;
		p->statuses = calloc(p->nstatuses ? p->nstatuses : 1, sizeof(*p->statuses));
		if (!p->statuses)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < p->nstatuses && !err; i++)
		p->statuses[i] = &p->status_data[i];
	err = err ?: threads_stats(b);
	err = err ?: thread_entries(b);
	err = err ?: capture_sites(b);
	if (!err) {
		if (p->nsync)
			qsort(p->sync_sites, p->nsync, sizeof(*p->sync_sites), site_by_time_desc);
		if (p->nlaunch)
			qsort(p->launch_sites, p->nlaunch, sizeof(*p->launch_sites), site_by_time_desc);
		*out = p;
		b->p = NULL;
	}
	py_builder__free(b);
	return err;
}

int py_report__compute(const struct recording *r, struct py_report **out)
{
	struct py_builder *b;
	struct pass_event e;
	struct pass *p;
	int err, n;

	*out = NULL;
	err = pass__open(r, &p);
	if (err)
		return err;
	b = py_builder__new();
	if (!b)
		err = -ENOMEM;
	while (!err && (n = pass__next(p, &e)) > 0)
		err = py_builder__event(b, &e);
	if (!err)
		err = py_builder__finish(b, out);
	else
		py_builder__free(b);
	pass__free(p);
	return err;
}

void py_report__free(struct py_report *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ncodes; i++)
		code__free(&p->codes[i]);
	free(p->codes);
	for (i = 0; i < p->nstacks; i++)
		free((void *)p->stacks[i].frames);
	free(p->stacks);
	free(p->threads);
	free(p->entries);
	free(p->sync_sites);
	free(p->launch_sites);
	free(p->statuses);
	free(p->status_data);
	free(p);
}
