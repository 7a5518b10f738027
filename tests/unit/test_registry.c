// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lookups generated from the format's registries (format/registry.h):
 * every registered event type has its name, size and drop source, and the
 * dispatch hands each record to the handler of its type, as its struct,
 * and to nobody else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "registry.h"

static void test_every_type_named_and_sized(void **state)
{
	unsigned int known = 0;

	(void)state;
#define CHECK_ROW(ID, name, value, st, drops)						\
	assert_string_equal(isr_event_name(ISR_EV_##ID), #name);			\
	assert_int_equal(isr_event_min_size(ISR_EV_##ID), sizeof(struct st));		\
	assert_int_equal(isr_event_drop_source(ISR_EV_##ID), drops);			\
	assert_non_null(isr_source_name(drops));					\
	known++;
	ISR_EVENT_TYPES(CHECK_ROW)
#undef CHECK_ROW
	assert_true(known > 0);
	/* Not in a file, or beyond the registry: unknown. */
	assert_null(isr_event_name(ISR_EV_PY_FRAMES));
	assert_null(isr_event_name(0));
	assert_null(isr_event_name(ISR_EV_TYPE_MAX));
	assert_int_equal(isr_event_min_size(200), sizeof(struct isr_ev_hdr));
	assert_int_equal(isr_event_drop_source(200), ISR_SRC_MAX);
	assert_string_equal(isr_source_name(ISR_SRC_WRITER), "writer");
	assert_null(isr_source_name(ISR_SRC_MAX));
	assert_string_equal(isr_stop_reason_name(ISR_STOP_WRITE_ERROR), "write_error");
	assert_null(isr_stop_reason_name(0));
}

static void test_cuda_functions(void **state)
{
	(void)state;
	assert_string_equal(isr_cuda_fn(ISR_CUDA_FN_cuMemAlloc_v2)->symbol, "cuMemAlloc_v2");
	assert_int_equal(isr_cuda_fn(ISR_CUDA_FN_cuMemAlloc_v2)->family, ISR_CUDA_FAM_ALLOC);
	assert_null(isr_cuda_fn(0));
	assert_null(isr_cuda_fn(ISR_CUDA_FN_MAX));
}

struct seen {
	int switches, gils;
	__u32 last_kind;
};

static int on_switch(void *ctx, const struct isr_ev_sched_switch *e)
{
	struct seen *s = ctx;

	s->switches++;
	return e->next_tid == 13 ? -5 : 0;
}

static int on_gil(void *ctx, const struct isr_ev_gil *e)
{
	struct seen *s = ctx;

	s->gils++;
	s->last_kind = e->kind;
	return 0;
}

static const struct isr_ev_handlers handlers = {
	.sched_switch = on_switch,
	.gil = on_gil,
};

static void test_dispatch(void **state)
{
	struct isr_ev_sched_switch sw = { .hdr = { .type = ISR_EV_SCHED_SWITCH, .size = sizeof(sw) } };
	struct isr_ev_gil gil = { .hdr = { .type = ISR_EV_GIL, .size = sizeof(gil) }, .kind = ISR_GIL_RELEASE };
	struct isr_ev_page_fault pf = { .hdr = { .type = ISR_EV_PAGE_FAULT, .size = sizeof(pf) } };
	struct isr_ev_hdr unknown = { .type = 200, .size = sizeof(unknown) };
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &sw.hdr), 0);
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &gil.hdr), 0);
	assert_int_equal(s.switches, 1);
	assert_int_equal(s.gils, 1);
	assert_int_equal(s.last_kind, ISR_GIL_RELEASE);
	/* The handler's error comes back. */
	sw.next_tid = 13;
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &sw.hdr), -5);
	/* No handler, an unknown type, a record too short: nobody is called. */
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &pf.hdr), ISR_EV_UNHANDLED);
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &unknown), 0);
	gil.hdr.size = sizeof(struct isr_ev_hdr);
	assert_int_equal(isr_ev_dispatch(&handlers, &s, &gil.hdr), 0);
	assert_int_equal(s.switches, 2);
	assert_int_equal(s.gils, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_named_and_sized),
		cmocka_unit_test(test_cuda_functions),
		cmocka_unit_test(test_dispatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
