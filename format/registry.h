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

#include <stdbool.h>
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
/* The flags (ISR_EVF_*) of the type; 0 for a type this version does not
 * know. */
__u32 isr_event_flags(__u16 type);

/* Whether a record of size bytes (hdr.size for a record in memory) is one
 * this version reads: a registered type, at least its struct's size. The
 * views below read only such records. */
bool isr_event_usable(const struct isr_ev_hdr *h, size_t size);

/*
 * The views of a usable record, generated from its line of the registry
 * (format/events.h: interval, who).
 */
enum isr_clock {
	ISR_CLOCK_CPU,		/* CLOCK_MONOTONIC */
	ISR_CLOCK_GPU,		/* the GPU clock of the process's CUPTI bridge (docs/clock-calibration.md) */
};

/* When h happened: [*start, *end), end == start for an instant; the
 * clock it is on. A stretch whose end would pass 2^64 ends there. */
enum isr_clock isr_ev_interval(const struct isr_ev_hdr *h, __u64 *start, __u64 *end);

/* Work that occupied a GPU (a kernel, a copy, a memset): its times on the
 * GPU clock, where it ran, and the correlation id of the call that
 * launched it. */
struct isr_gpu_work {
	__u64 start_ns, end_ns;
	__u32 device, context, stream, correlation;
};
/* Whether h is GPU work; *w then describes it. */
bool isr_ev_gpu_work(const struct isr_ev_hdr *h, struct isr_gpu_work *w);
/* Writes w into h, a record of GPU work of its type (hdr.type set; the
 * CUPTI bridge makes them); false, nothing written, when the type is not. */
bool isr_ev_set_gpu_work(struct isr_ev_hdr *h, const struct isr_gpu_work *w);

struct isr_task {
	__u32 pid, tid;		/* tid 0: the process as a whole */
};
/* The task h is about: a thread, or a process (tid 0). false: none (the
 * recorder's own records). */
bool isr_ev_task(const struct isr_ev_hdr *h, struct isr_task *t);
/* The other task h names: a switch's next, a wakeup's waker, a forked
 * child, the thread that called exec. false: none. */
bool isr_ev_peer(const struct isr_ev_hdr *h, struct isr_task *t);

/* What making a record cost the task it is charged to, from its line's
 * cost (format/events.h, ISR_COST_*): the account that pays it
 * (ISR_SPENT_*), how many hits (probe hits, scheduler events or CUPTI
 * records) it stands for, and either whether they were an entry and a
 * return (a pair, whose cost is measured as one) or what the record says
 * they took. */
struct isr_cost {
	__u32 account;
	__u32 hits;
	bool pair;
	bool took;		/* ns is what it took */
	__u64 ns;
	struct isr_task task;	/* whom it is charged to: the task it is about, unless its cost names a thread */
};
/* Whether the record h of size bytes (a registered type's, usable, or one
 * of the records from BPF to the recorder only: ISR_RECORDER_TYPES) cost
 * what the budget counts; *c then says what. */
bool isr_ev_cost(const struct isr_ev_hdr *h, size_t size, struct isr_cost *c);

const char *isr_source_name(__u32 src);		/* "sched", ...; NULL if unknown */
const char *isr_stop_reason_name(__u32 reason);	/* "duration", ...; NULL if unknown */

/* A probed CUDA function, from the table in format/cuda_funcs.h. */
struct isr_cuda_fn {
	const char *symbol;	/* exact ELF symbol: "cuMemAlloc_v2" */
	__u16 family;		/* ISR_CUDA_FAM_* */
	__u16 aux;
	__u16 flags;		/* ISR_CUDA_ASYNC | ISR_CUDA_PTDS | ISR_CUDA_RUNTIME | ISR_CUDA_POLL */
	__u16 kind;		/* ISR_CUDA_K_*: what the call is */
};

/* The function with id func (ISR_CUDA_FN_*); NULL for an id this version
 * does not know. */
const struct isr_cuda_fn *isr_cuda_fn(__u16 func);
/* Whether func is a function of one of the kinds (ISR_CUDA_K_*): a launch,
 * a synchronization, ...; false for an id this version does not know. */
bool isr_cuda_is(__u16 func, __u16 kinds);

/*
 * Dispatch on the event type: one handler per registered type, named as
 * the type (handlers.sched_switch, handlers.gil, ...), each given the
 * record as its own struct. A consumer fills the handlers of the types it
 * reads and leaves the others NULL; a type added to the registry gains a
 * member here and is ignored until someone handles it.
 */
#define ISR_EV_HANDLER_MEMBER(ID, name, value, st, drops, ...) int (*name)(void *ctx, const struct st *e);
struct isr_ev_handlers {
	ISR_EVENT_TYPES(ISR_EV_HANDLER_MEMBER)
};
#undef ISR_EV_HANDLER_MEMBER

/*
 * A consumer that must decide what it does with every event type (an
 * output of the events: the Perfetto trace, the SQL export) says it in a
 * list of its own, X(ID, entry) a registered type, its explicit "ignored"
 * entries included, and makes its table indexed by type from it:
 *
 *   #define ON_TYPE(X) X(SCHED_SWITCH, ignored) X(CUDA_CALL, on_cuda_call) ...
 *   static const handler_fn on_type[ISR_EV_TYPE_MAX] = { ON_TYPE(ISR_EV_ENTRY) };
 *   ISR_EV_EVERY_TYPE(ON_TYPE);
 *
 * A list that misses a registered type does not compile (its entries are
 * counted against the registry's types), nor one that names a type twice
 * (-Woverride-init) or a value past the registry.
 */
#define ISR_EV_ENTRY(ID, entry) [ISR_EV_##ID] = entry,
#define ISR_EV_COUNT_ONE(...) +1
#define ISR_EV_EVERY_TYPE(list)										\
	_Static_assert((0 list(ISR_EV_COUNT_ONE)) == (0 ISR_EVENT_TYPES(ISR_EV_COUNT_ONE)),		\
		       #list ": not one entry for each registered event type (format/events.h)")

/* isr_ev_dispatch: the type is registered but has no handler. */
#define ISR_EV_UNHANDLED 1

/* Calls the handler of h's type with ctx and returns what it returns (0 or
 * -errno); without a call, ISR_EV_UNHANDLED when the type has no handler,
 * 0 when the type is not registered or h is shorter than its struct. */
int isr_ev_dispatch(const struct isr_ev_handlers *handlers, void *ctx, const struct isr_ev_hdr *h);

#endif
