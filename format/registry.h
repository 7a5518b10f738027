/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What user space knows of every type of the format's registries (events,
 * drop sources, stop reasons: format/events.h, format/isr_format.h; CUDA
 * functions: format/cuda_funcs.h), generated from them so that a type
 * added to a registry is known here without another edit. Shared by the
 * writer (user/), the reader and the analysis (analysis/).
 */
#ifndef INFERSCOPE_REGISTRY_H
#define INFERSCOPE_REGISTRY_H

#include <stddef.h>
#include <linux/types.h>
#include "events.h"
#include "cuda_funcs.h"
#include "isr_format.h"

/* "sched_switch", ...; NULL for a type this version does not know (which
 * readers skip by hdr.size). */
const char *isr_event_name(__u16 type);
/* The least hdr.size of a record of this type: its struct's size, or
 * sizeof(struct isr_ev_hdr) for a type this version does not know. */
size_t isr_event_min_size(__u16 type);
/* The drop source (ISR_SRC_*) that counts lost records of this type;
 * ISR_SRC_MAX for a type this version does not know. */
__u32 isr_event_drop_source(__u16 type);

const char *isr_source_name(__u32 src);		/* "sched", ...; NULL if unknown */
const char *isr_stop_reason_name(__u32 reason);	/* "duration", ...; NULL if unknown */

/* A probed CUDA function, from the table in format/cuda_funcs.h. */
struct isr_cuda_fn {
	const char *symbol;	/* exact ELF symbol: "cuMemAlloc_v2" */
	__u16 family;		/* ISR_CUDA_FAM_* */
	__u16 aux;
	__u16 flags;		/* ISR_CUDA_ASYNC | ISR_CUDA_PTDS | ISR_CUDA_RUNTIME */
};

/* The function with id func (ISR_CUDA_FN_*); NULL for an id this version
 * does not know. */
const struct isr_cuda_fn *isr_cuda_fn(__u16 func);

/*
 * Dispatch on the event type: one handler per registered type, named as
 * the type (handlers.sched_switch, handlers.gil, ...), each given the
 * record as its own struct. A consumer fills the handlers of the types it
 * reads and leaves the others NULL; a type added to the registry gains a
 * member here and is ignored until someone handles it.
 */
#define ISR_EV_HANDLER_MEMBER(ID, name, value, st, drops) int (*name)(void *ctx, const struct st *e);
struct isr_ev_handlers {
	ISR_EVENT_TYPES(ISR_EV_HANDLER_MEMBER)
};
#undef ISR_EV_HANDLER_MEMBER

/* isr_ev_dispatch: the type is registered but has no handler. */
#define ISR_EV_UNHANDLED 1

/* Calls the handler of h's type with ctx and returns what it returns (0 or
 * -errno); without a call, ISR_EV_UNHANDLED when the type has no handler,
 * 0 when the type is not registered or h is shorter than its struct. */
int isr_ev_dispatch(const struct isr_ev_handlers *handlers, void *ctx, const struct isr_ev_hdr *h);

#endif
