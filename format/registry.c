// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lookups of format/registry.h, expanded from the registries: tables
 * indexed by the registered values (a value registered twice does not
 * compile: -Woverride-init) and the dispatch switch (nor there: a
 * duplicate case).
 */
#include "registry.h"

struct event_info {
	const char *name;
	__u32 min_size;
	__u32 drops;
};

#define EVENT_ROW(ID, name, value, st, drops) [value] = { #name, sizeof(struct st), drops },
static const struct event_info events[ISR_EV_TYPE_MAX] = { ISR_EVENT_TYPES(EVENT_ROW) };
#undef EVENT_ROW

#define SOURCE_ROW(ID, name, value, meaning) [value] = #name,
static const char *const source_names[ISR_SRC_MAX] = { ISR_DROP_SOURCES(SOURCE_ROW) };
#undef SOURCE_ROW

#define STOP_ROW(ID, name, value, meaning) [value] = #name,
static const char *const stop_names[] = { ISR_STOP_REASONS(STOP_ROW) };
#undef STOP_ROW

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct event_info *event_info(__u16 type)
{
	return type < ISR_EV_TYPE_MAX && events[type].name ? &events[type] : NULL;
}

const char *isr_event_name(__u16 type)
{
	return event_info(type) ? event_info(type)->name : NULL;
}

size_t isr_event_min_size(__u16 type)
{
	return event_info(type) ? event_info(type)->min_size : sizeof(struct isr_ev_hdr);
}

__u32 isr_event_drop_source(__u16 type)
{
	return event_info(type) ? event_info(type)->drops : ISR_SRC_MAX;
}

const char *isr_source_name(__u32 src)
{
	return src < COUNT(source_names) ? source_names[src] : NULL;
}

const char *isr_stop_reason_name(__u32 reason)
{
	return reason < COUNT(stop_names) ? stop_names[reason] : NULL;
}

#define CUDA_FN_ROW(id, sym, fam, aux, flags) [id] = { #sym, fam, aux, flags },
static const struct isr_cuda_fn cuda_fns[ISR_CUDA_FN_MAX] = { ISR_CUDA_FUNCS(CUDA_FN_ROW) };
#undef CUDA_FN_ROW

const struct isr_cuda_fn *isr_cuda_fn(__u16 func)
{
	return func < ISR_CUDA_FN_MAX && cuda_fns[func].symbol ? &cuda_fns[func] : NULL;
}

#define DISPATCH_CASE(ID, name, value, st, drops)					\
	case ISR_EV_##ID:								\
		if (!handlers->name)							\
			return ISR_EV_UNHANDLED;					\
		return h->size >= sizeof(struct st) ? handlers->name(ctx, (const struct st *)h) : 0;
int isr_ev_dispatch(const struct isr_ev_handlers *handlers, void *ctx, const struct isr_ev_hdr *h)
{
	switch (h->type) {
	ISR_EVENT_TYPES(DISPATCH_CASE)
	default:
		return 0;
	}
}
#undef DISPATCH_CASE
