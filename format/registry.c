// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lookups and views of format/registry.h, expanded from the registries:
 * tables indexed by the registered values (a value registered twice does
 * not compile: -Woverride-init) and the dispatch switch (nor there: a
 * duplicate case). A row's interval and who become field offsets, so that
 * the views read every type the same way.
 */
#include <stdint.h>
#include <string.h>

#include "registry.h"

enum { IV_K_INSTANT, IV_K_SINCE, IV_K_UNTIL, IV_K_UNTIL_AT, IV_K_GPU, IV_K_GPU_WORK };

/* Where a type's interval is: a (64 bits) and b (tested, or the GPU end);
 * the stretch holds when (b & mask) == want. GPU work: where its device,
 * context, stream and correlation id are. */
struct iv_info {
	__u8 kind;		/* IV_K_* */
	__u8 b_size;
	__u16 a, b;
	__u32 mask, want;
	__u16 device, context, stream, corr;
};

enum { COST_K_NONE, COST_K_HITS, COST_K_PAIR, COST_K_CUDA, COST_K_TOOK, COST_K_TOOK_BY };

/* What a record cost: hits of an account, a pair when (b & mask) == want
 * (CUDA: the account by the function at a), or what the field at a says
 * it took (TOOK_BY: the thread at b). */
struct cost_info {
	__u8 kind;		/* COST_K_* */
	__u8 account;		/* ISR_SPENT_* */
	__u8 hits;
	__u8 a_size, b_size;
	__u16 a, b;
	__u32 mask, want;
};

/* Offsets of the task's pid and tid and the peer's; 0: none (offset 0 is
 * hdr.type in every record). No peer when unless_bit is set in the 32-bit
 * field at unless. */
struct who_info {
	__u16 pid, tid, peer_pid, peer_tid, unless;
	__u32 unless_bit;
};

struct event_info {
	const char *name;
	__u32 min_size;
	__u32 drops;
	__u32 flags;
	struct iv_info iv;
	struct who_info who;
	struct cost_info cost;
};

#define OFF(st, f) ((__u16)__builtin_offsetof(struct st, f))
#define FIELD_SIZE(st, f) sizeof(((const struct st *)0)->f)

#define IV_INSTANT(st, a, b, m, w)	{ IV_K_INSTANT, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
#define IV_SINCE(st, a, b, m, w)	{ IV_K_SINCE, FIELD_SIZE(st, b), OFF(st, a), OFF(st, b), m, w, 0, 0, 0, 0 }
#define IV_UNTIL(st, a, b, m, w)	{ IV_K_UNTIL, FIELD_SIZE(st, b), OFF(st, a), OFF(st, b), m, w, 0, 0, 0, 0 }
#define IV_UNTIL_AT(st, a, b, m, w)	{ IV_K_UNTIL_AT, 0, OFF(st, a), 0, 0, 0, 0, 0, 0, 0 }
#define IV_GPU(st, a, b, m, w)		{ IV_K_GPU, FIELD_SIZE(st, b), OFF(st, a), OFF(st, b), 0, 0, 0, 0, 0, 0 }
#define IV_GPU_WORK(st, a, b, m, w)									\
	{ IV_K_GPU_WORK, FIELD_SIZE(st, b), OFF(st, a), OFF(st, b), 0, 0, OFF(st, device_id),		\
	  OFF(st, context_id), OFF(st, stream_id), OFF(st, correlation_id) }
#define IV_SELECT(st, kind, a, b, m, w)	IV_##kind(st, a, b, m, w)
#define IV_CALL(...)			IV_SELECT(__VA_ARGS__)
#define UNPAREN(...)			__VA_ARGS__
#define IV_OF(st, iv)			IV_CALL(st, UNPAREN iv)

#define WHO_NONE(st, p, t, f, bit)	{ 0, 0, 0, 0, 0, 0 }
#define WHO_PROCESS(st, p, t, f, bit)	{ OFF(st, hdr.pid), 0, 0, 0, 0, 0 }
#define WHO_THREAD(st, p, t, f, bit)	{ OFF(st, hdr.pid), OFF(st, hdr.tid), 0, 0, 0, 0 }
#define WHO_PEER(st, p, t, f, bit)	{ OFF(st, hdr.pid), OFF(st, hdr.tid), OFF(st, p), OFF(st, t), OFF(st, f), bit }
#define WHO_OF(st, p, t, f, bit)	{ OFF(st, p), OFF(st, t), 0, 0, 0, 0 }
#define WHO_SELECT(st, kind, p, t, f, bit)	WHO_##kind(st, p, t, f, bit)
#define WHO_CALL(...)			WHO_SELECT(__VA_ARGS__)
#define WHO_OF_ROW(st, who)		WHO_CALL(st, UNPAREN who)

#define COST_NONE(st, acct, n, a, b, m, w)	{ COST_K_NONE, 0, 0, 0, 0, 0, 0, 0, 0 }
#define COST_FIELDS(kind, st, acct, n, a, b, m, w)						\
	{ COST_K_##kind, acct, n, FIELD_SIZE(st, a), FIELD_SIZE(st, b), OFF(st, a), OFF(st, b), m, w }
#define COST_HITS(...)		COST_FIELDS(HITS, __VA_ARGS__)
#define COST_PAIR(...)		COST_FIELDS(PAIR, __VA_ARGS__)
#define COST_CUDA(...)		COST_FIELDS(CUDA, __VA_ARGS__)
#define COST_TOOK(...)		COST_FIELDS(TOOK, __VA_ARGS__)
#define COST_TOOK_BY(...)	COST_FIELDS(TOOK_BY, __VA_ARGS__)
#define COST_SELECT(st, kind, acct, n, a, b, m, w)	COST_##kind(st, acct, n, a, b, m, w)
#define COST_CALL(...)			COST_SELECT(__VA_ARGS__)
#define COST_OF(st, cost)		COST_CALL(st, UNPAREN cost)

#define EVENT_ROW(ID, name, value, st, drops, evflags, iv, who, cost) \
	[value] = { #name, sizeof(struct st), drops, evflags, IV_OF(st, iv), WHO_OF_ROW(st, who), COST_OF(st, cost) },
static const struct event_info events[ISR_EV_TYPE_MAX] = { ISR_EVENT_TYPES(EVENT_ROW) };
#undef EVENT_ROW

/* The records from BPF to the recorder only: their cost, no name. */
#define RECORDER_ROW(ID, value, st, least, cost) \
	[value] = { NULL, least, ISR_SRC_MAX, 0, IV_OF(st, ISR_IV_INSTANT), WHO_OF_ROW(st, ISR_WHO_THREAD), COST_OF(st, cost) },
static const struct event_info recorder_only[ISR_EV_TYPE_MAX] = { ISR_RECORDER_TYPES(RECORDER_ROW) };
#undef RECORDER_ROW

/* The fields the views read have the widths they are read at. */
#define IV_CHECK_INSTANT(st, a, b)
#define IV_CHECK_SINCE(st, a, b)						\
	_Static_assert(FIELD_SIZE(st, a) == 8, #st "." #a ": a duration is 64 bits");	\
	_Static_assert(FIELD_SIZE(st, b) == 2 || FIELD_SIZE(st, b) == 4, #st "." #b ": 16 or 32 bits");
#define IV_CHECK_UNTIL(st, a, b)	IV_CHECK_SINCE(st, a, b)
#define IV_CHECK_UNTIL_AT(st, a, b)						\
	_Static_assert(FIELD_SIZE(st, a) == 8, #st "." #a ": a time is 64 bits");
#define IV_CHECK_GPU(st, a, b)							\
	_Static_assert(FIELD_SIZE(st, a) == 8 && FIELD_SIZE(st, b) == 8, #st ": GPU times are 64 bits");
#define IV_CHECK_GPU_WORK(st, a, b)						\
	IV_CHECK_GPU(st, a, b)							\
	_Static_assert(FIELD_SIZE(st, device_id) == 4 && FIELD_SIZE(st, context_id) == 4 &&	\
		       FIELD_SIZE(st, stream_id) == 4 && FIELD_SIZE(st, correlation_id) == 4,	\
		       #st ": GPU work ids are 32 bits");
#define IV_CHECK_SELECT(st, kind, a, b, m, w)	IV_CHECK_##kind(st, a, b)
#define IV_CHECK_CALL(...)			IV_CHECK_SELECT(__VA_ARGS__)
#define WHO_CHECK_NONE(st, p, t, f)
#define WHO_CHECK_PROCESS(st, p, t, f)
#define WHO_CHECK_THREAD(st, p, t, f)
#define WHO_CHECK_PEER(st, p, t, f)						\
	_Static_assert(FIELD_SIZE(st, p) == 4 && FIELD_SIZE(st, t) == 4 && FIELD_SIZE(st, f) == 4,	\
		       #st ": pid, tid and the peer's flags are 32 bits");
#define WHO_CHECK_OF(st, p, t, f)	WHO_CHECK_PEER(st, p, t, f)
#define WHO_CHECK_SELECT(st, kind, p, t, f, bit)	WHO_CHECK_##kind(st, p, t, f)
#define WHO_CHECK_CALL(...)			WHO_CHECK_SELECT(__VA_ARGS__)
#define COST_CHECK_NONE(st, a, b)
#define COST_CHECK_HITS(st, a, b)
#define COST_CHECK_PAIR(st, a, b)							\
	_Static_assert(FIELD_SIZE(st, b) == 2 || FIELD_SIZE(st, b) == 4, #st "." #b ": 16 or 32 bits");
#define COST_CHECK_CUDA(st, a, b)							\
	COST_CHECK_PAIR(st, a, b)							\
	_Static_assert(FIELD_SIZE(st, a) == 2, #st "." #a ": a CUDA function is 16 bits");
#define COST_CHECK_TOOK(st, a, b)							\
	_Static_assert(FIELD_SIZE(st, a) == 2 || FIELD_SIZE(st, a) == 4 || FIELD_SIZE(st, a) == 8,	\
		       #st "." #a ": 16, 32 or 64 bits");
#define COST_CHECK_TOOK_BY(st, a, b)							\
	COST_CHECK_TOOK(st, a, b)							\
	_Static_assert(FIELD_SIZE(st, b) == 4, #st "." #b ": a tid is 32 bits");
#define COST_CHECK_SELECT(st, kind, acct, n, a, b, m, w)	COST_CHECK_##kind(st, a, b)
#define COST_CHECK_CALL(...)				COST_CHECK_SELECT(__VA_ARGS__)
#define CHECK_ROW(ID, name, value, st, drops, evflags, iv, who, cost) \
	IV_CHECK_CALL(st, UNPAREN iv) WHO_CHECK_CALL(st, UNPAREN who) COST_CHECK_CALL(st, UNPAREN cost)
ISR_EVENT_TYPES(CHECK_ROW)
#undef CHECK_ROW
#define RECORDER_CHECK_ROW(ID, value, st, least, cost) COST_CHECK_CALL(st, UNPAREN cost)
ISR_RECORDER_TYPES(RECORDER_CHECK_ROW)
#undef RECORDER_CHECK_ROW

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

__u32 isr_event_flags(__u16 type)
{
	return event_info(type) ? event_info(type)->flags : 0;
}

bool isr_event_usable(const struct isr_ev_hdr *h, size_t size)
{
	const struct event_info *i = event_info(h->type);

	return i && size >= i->min_size;
}

const char *isr_source_name(__u32 src)
{
	return src < COUNT(source_names) ? source_names[src] : NULL;
}

const char *isr_stop_reason_name(__u32 reason)
{
	return reason < COUNT(stop_names) ? stop_names[reason] : NULL;
}

/* ---- the views ------------------------------------------------------------------- */

/* A type this version does not know reads as an instant about no task. */
static const struct event_info unknown;

static const struct event_info *info_or_unknown(__u16 type)
{
	return event_info(type) ?: &unknown;
}

static __u64 read_u64(const struct isr_ev_hdr *h, __u16 off)
{
	__u64 v;

	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

static __u32 read_u32(const struct isr_ev_hdr *h, __u16 off)
{
	__u32 v;

	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

/* A field of 16 or 32 bits (64 for read_uint). */
static __u64 read_uint(const struct isr_ev_hdr *h, __u16 off, __u8 size)
{
	__u16 v;

	if (size == sizeof(__u64))
		return read_u64(h, off);
	if (size == sizeof(__u32))
		return read_u32(h, off);
	memcpy(&v, (const char *)h + off, sizeof(v));
	return v;
}

static __u32 read_field(const struct isr_ev_hdr *h, __u16 off, __u8 size)
{
	return (__u32)read_uint(h, off, size);
}

enum isr_clock isr_ev_interval(const struct isr_ev_hdr *h, __u64 *start, __u64 *end)
{
	const struct iv_info *iv = &info_or_unknown(h->type)->iv;
	__u64 d;

	*start = *end = h->ts_ns;
	switch (iv->kind) {
	case IV_K_GPU:
	case IV_K_GPU_WORK:
		*start = read_u64(h, iv->a);
		*end = read_u64(h, iv->b);
		return ISR_CLOCK_GPU;
	case IV_K_UNTIL_AT:
		d = read_u64(h, iv->a);
		if (d > h->ts_ns)
			*end = d;
		break;
	case IV_K_SINCE:
	case IV_K_UNTIL:
		if ((read_field(h, iv->b, iv->b_size) & iv->mask) != iv->want)
			break;
		d = read_u64(h, iv->a);
		if (iv->kind == IV_K_SINCE)
			*end = d > UINT64_MAX - h->ts_ns ? UINT64_MAX : h->ts_ns + d;
		else if (d <= h->ts_ns)
			*start = h->ts_ns - d;
		break;
	default:
		break;
	}
	return ISR_CLOCK_CPU;
}

bool isr_ev_gpu_work(const struct isr_ev_hdr *h, struct isr_gpu_work *w)
{
	const struct iv_info *iv = &info_or_unknown(h->type)->iv;

	if (iv->kind != IV_K_GPU_WORK)
		return false;
	w->start_ns = read_u64(h, iv->a);
	w->end_ns = read_u64(h, iv->b);
	w->device = read_u32(h, iv->device);
	w->context = read_u32(h, iv->context);
	w->stream = read_u32(h, iv->stream);
	w->correlation = read_u32(h, iv->corr);
	return true;
}

static void write_field(struct isr_ev_hdr *h, __u16 off, const void *v, size_t size)
{
	memcpy((char *)h + off, v, size);
}

bool isr_ev_set_gpu_work(struct isr_ev_hdr *h, const struct isr_gpu_work *w)
{
	const struct iv_info *iv = &info_or_unknown(h->type)->iv;

	if (iv->kind != IV_K_GPU_WORK)
		return false;
	write_field(h, iv->a, &w->start_ns, sizeof(w->start_ns));
	write_field(h, iv->b, &w->end_ns, sizeof(w->end_ns));
	write_field(h, iv->device, &w->device, sizeof(w->device));
	write_field(h, iv->context, &w->context, sizeof(w->context));
	write_field(h, iv->stream, &w->stream, sizeof(w->stream));
	write_field(h, iv->corr, &w->correlation, sizeof(w->correlation));
	return true;
}

static bool read_task(const struct isr_ev_hdr *h, __u16 pid, __u16 tid, struct isr_task *t)
{
	if (!pid)
		return false;
	t->pid = read_u32(h, pid);
	t->tid = tid ? read_u32(h, tid) : 0;
	return true;
}

bool isr_ev_task(const struct isr_ev_hdr *h, struct isr_task *t)
{
	const struct who_info *w = &info_or_unknown(h->type)->who;

	return read_task(h, w->pid, w->tid, t);
}

bool isr_ev_peer(const struct isr_ev_hdr *h, struct isr_task *t)
{
	const struct who_info *w = &info_or_unknown(h->type)->who;

	if (w->unless_bit && (read_u32(h, w->unless) & w->unless_bit))
		return false;
	return read_task(h, w->peer_pid, w->peer_tid, t);
}

bool isr_ev_cost(const struct isr_ev_hdr *h, size_t size, struct isr_cost *c)
{
	const struct event_info *i = event_info(h->type);
	const struct cost_info *k;

	if (!i && h->type < ISR_EV_TYPE_MAX && recorder_only[h->type].min_size)
		i = &recorder_only[h->type];
	if (!i || size < i->min_size || i->cost.kind == COST_K_NONE)
		return false;
	k = &i->cost;
	*c = (struct isr_cost){ .account = k->account, .hits = k->hits };
	read_task(h, i->who.pid, i->who.tid, &c->task);
	switch (k->kind) {
	case COST_K_CUDA:
		if (isr_cuda_is((__u16)read_field(h, k->a, k->a_size), ISR_CUDA_K_HOT))
			c->account = ISR_SPENT_HOT;
		/* fall through */
	case COST_K_PAIR:
		c->pair = (read_field(h, k->b, k->b_size) & k->mask) == k->want;
		c->hits = c->pair ? 2 : 1;
		break;
	case COST_K_TOOK_BY:
		c->task.tid = read_u32(h, k->b);
		/* fall through */
	case COST_K_TOOK:
		c->took = true;
		c->ns = read_uint(h, k->a, k->a_size);
		if (k->kind == COST_K_TOOK_BY && (!c->ns || !c->task.tid))
			return false;
		break;
	default:
		break;
	}
	return true;
}

/* ---- CUDA functions ---------------------------------------------------------------- */

#define CUDA_FN_ROW(id, sym, fam, aux, flags) [id] = { #sym, fam, aux, flags, ISR_CUDA_KIND(fam, flags) },
static const struct isr_cuda_fn cuda_fns[ISR_CUDA_FN_MAX] = { ISR_CUDA_FUNCS(CUDA_FN_ROW) };
#undef CUDA_FN_ROW

const struct isr_cuda_fn *isr_cuda_fn(__u16 func)
{
	return func < ISR_CUDA_FN_MAX && cuda_fns[func].symbol ? &cuda_fns[func] : NULL;
}

bool isr_cuda_is(__u16 func, __u16 kinds)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(func);

	return fn && (fn->kind & kinds);
}

#define DISPATCH_CASE(ID, name, value, st, ...)						\
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
