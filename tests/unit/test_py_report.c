// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python symbolization without a target: line numbers from real line
 * tables (the 3.11 location table of a known function, as CPython 3.11
 * compiled it, against the lines CPython itself reports for every code
 * unit; a 3.10 table built by the rules of its format), and the report of a
 * synthetic recording: functions' self and inclusive samples, stacks, the
 * Python call sites of CUDA synchronizations matched to their calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "py_report.h"

/*
 *   1 def f(x):
 *   2     y = x + 1
 *   3     if y > 3:
 *   4         y = (y *
 *   5              2)
 *   6     for i in range(3):
 *   7         y += i
 *   8     return y
 * f.__code__.co_linetable of CPython 3.11.7, and [p[0] for p in
 * f.__code__.co_positions()]: the line of each code unit.
 */
static const unsigned char table_311[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x82, 0x75,
	0x80, 0x75, 0xd8, 0x0d, 0x0e, 0xd8, 0x0d, 0x0e, 0xf1, 0x03, 0x01, 0x0e, 0x0f, 0x88, 0x01, 0xe5, 0x0d, 0x12,
	0x90, 0x31, 0x89, 0x58, 0x8c, 0x58, 0xf0, 0x00, 0x01, 0x05, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f, 0x88, 0x01,
	0xd8, 0x08, 0x09, 0x88, 0x51, 0x89, 0x06, 0x88, 0x01, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x80, 0x48,
};
static const __u32 lines_311[] = {
	1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 5, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
	7, 7, 7, 7, 7, 7, 8, 8,
};

static void test_line_311(void **state)
{
	struct py_code c = { .first_line = 1, .minor = 11, .table = table_311, .table_len = sizeof(table_311) };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines_311) / sizeof(lines_311[0]); i++)
		assert_int_equal(py_code__line(&c, (__s32)i), lines_311[i]);
	assert_int_equal(py_code__line(&c, -1), 1); /* not started: the def line */
}

/* 3.10: (bytecode bytes, line delta) pairs from co_firstlineno; -128: no
 * line for that range. Lines 11..: 4 bytes at 11, 6 at 12, 2 with no line,
 * 4 at 14 (a delta of 2 past the range without a line). */
static void test_line_310(void **state)
{
	static const unsigned char t[] = { 4, 1, 6, 1, 2, 0x80, 4, 2 };
	struct py_code c = { .first_line = 10, .minor = 10, .table = t, .table_len = sizeof(t) };

	(void)state;
	assert_int_equal(py_code__line(&c, 0), 11);	/* byte 0 */
	assert_int_equal(py_code__line(&c, 1), 11);	/* byte 2 */
	assert_int_equal(py_code__line(&c, 2), 12);	/* byte 4 */
	assert_int_equal(py_code__line(&c, 4), 12);	/* byte 8 */
	assert_int_equal(py_code__line(&c, 5), 10);	/* byte 10: no line, the first line stands in */
	assert_int_equal(py_code__line(&c, 6), 14);	/* byte 12 */
	assert_int_equal(py_code__line(&c, 7), 14);	/* byte 14 */
}

/* --- a synthetic recording ----------------------------------------------- */

struct synth {
	struct recording rec;
	unsigned char data[16384];
	size_t len;
	const struct isr_ev_hdr *ptrs[256];
};

static void *ev(struct synth *b, __u16 type, size_t size, __u64 ts, __u32 tid)
{
	struct isr_ev_hdr *h = (struct isr_ev_hdr *)(b->data + b->len);

	size = (size + 7) & ~(size_t)7;
	assert_true(b->len + size <= sizeof(b->data) && b->rec.event_count < 256);
	memset(h, 0, size);
	h->type = type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = 100;
	h->tid = tid;
	b->len += size;
	b->ptrs[b->rec.event_count++] = h;
	return h;
}

static void code(struct synth *b, __u64 addr, const char *file, const char *name, __u32 first)
{
	size_t fl = strlen(file), nl = strlen(name);
	struct isr_ev_py_code *c = ev(b, ISR_EV_PY_CODE, sizeof(*c) + fl + nl + 2, 1, 100);

	c->code = addr;
	c->first_line = first;
	c->py_minor = 11;
	c->filename_len = (__u16)fl;
	c->qualname_len = (__u16)nl;
	c->linetable_len = 2;
	memcpy(c + 1, file, fl);
	memcpy((char *)(c + 1) + fl, name, nl);
	/* one entry, no columns, 8 code units, line delta +1 (svarint 2) */
	memcpy((char *)(c + 1) + fl + nl, "\xef\x02", 2);
}

static void stack(struct synth *b, __u32 id, const __u64 *codes, __u16 depth)
{
	struct isr_ev_py_stack *s = ev(b, ISR_EV_PY_STACK, sizeof(*s) + depth * sizeof(struct isr_py_frame), 2, 100);
	struct isr_py_frame *f = (struct isr_py_frame *)(s + 1);

	s->stack_id = id;
	s->depth = depth;
	for (__u16 i = 0; i < depth; i++) {
		f[i].code = codes[i];
		f[i].instr = 3;
	}
}

static void sample(struct synth *b, __u64 ts, __u32 tid, __u32 id, __u16 kind)
{
	struct isr_ev_py_sample *s = ev(b, ISR_EV_PY_SAMPLE, sizeof(*s), ts, tid);

	s->stack_id = id;
	s->kind = kind;
}

static void test_report(void **state)
{
	static const __u64 s1[] = { 0xa0, 0xf0 }, s2[] = { 0xb0, 0xa0, 0xf0 }, s3[] = { 0xc0, 0xf0 };
	struct synth *b = calloc(1, sizeof(*b));
	const struct py_thread_stats *t;
	struct isr_ev_cuda_call *call;
	struct py_report *p;
	int i;

	(void)state;
	assert_non_null(b);
	code(b, 0xa0, "m.py", "a", 10);
	code(b, 0xb0, "m.py", "b", 20);
	code(b, 0xc0, "m.py", "c", 30);
	code(b, 0xf0, "m.py", "main", 40);
	stack(b, 1, s1, 2);	/* main -> a */
	stack(b, 2, s2, 3);	/* main -> a -> b */
	stack(b, 3, s3, 2);	/* main -> c */
	for (i = 0; i < 6; i++)
		sample(b, 10 + i, 100, 1, ISR_PY_KIND_TIMER);
	for (i = 0; i < 3; i++)
		sample(b, 20 + i, 100, 2, ISR_PY_KIND_TIMER);
	sample(b, 30, 100, 3, ISR_PY_KIND_TIMER);
	/* a 5 ms cuStreamSynchronize called from c, its stack right after */
	call = ev(b, ISR_EV_CUDA_CALL, sizeof(*call), 40, 100);
	call->func = ISR_CUDA_FN_cuStreamSynchronize;
	call->flags = ISR_CUDA_RETURNED;
	call->duration_ns = 5000000;
	sample(b, 40, 100, 3, ISR_PY_KIND_CUDA);
	b->rec.events = b->ptrs;

	assert_int_equal(py_report__compute(&b->rec, &p), 0);
	assert_int_equal(p->timer_samples, 10);
	assert_int_equal(p->cuda_samples, 1);
	t = py_report__thread(p, 100, 100);
	assert_non_null(t);
	assert_int_equal(t->samples, 10);
	/* main 100% inclusive, a 90% inclusive / 60% self, b 30% self, c 10% */
	assert_string_equal(t->funcs[0].code->qualname, "main");
	assert_int_equal(t->funcs[0].inclusive, 10);
	assert_int_equal(t->funcs[0].self, 0);
	assert_string_equal(t->funcs[1].code->qualname, "a");
	assert_int_equal(t->funcs[1].inclusive, 9);
	assert_int_equal(t->funcs[1].self, 6);
	assert_string_equal(t->funcs[2].code->qualname, "b");
	assert_int_equal(t->funcs[2].self, 3);
	assert_int_equal(t->stacks[0].stack->id, 1);
	assert_int_equal(t->stacks[0].samples, 6);
	/* instruction 3 lies in the first 8 code units: first line + 1 */
	assert_int_equal(p->nsync, 1);
	assert_string_equal(p->sync_sites[0].site, "m.py:31 c");
	assert_int_equal(p->sync_sites[0].calls, 1);
	assert_int_equal(p->sync_sites[0].time_ns, 5000000);
	py_report__free(p);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_311),
		cmocka_unit_test(test_line_310),
		cmocka_unit_test(test_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
