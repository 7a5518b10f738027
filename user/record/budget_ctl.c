// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "budget_ctl.h"
#include "clock.h"
#include "gpu_windows.h"
#include "registry.h"

#define TARGETS_REFRESH_NS 1000000000ULL

/* What each kind is, for the end's account: the ISR_SPENT_* order. */
static const char *const kind_text[ISR_SPENT_MAX] = {
	"CUDA hot-path probe hits", "other probe hits", "Python stack captures", "sampler ticks",
	"page faults traced", "scheduler events", "CPU held by the recorder", "CUPTI in GPU windows",
};

int budget_ctl__init(struct budget_ctl *bc, const struct tracer_costs *c, double pct, __u32 tracer, __u32 helper)
{
	memset(bc, 0, sizeof(*bc));
	bc->step = calloc(BUDGET_HIT_SLOTS, sizeof(*bc->step));
	bc->total = calloc(BUDGET_HIT_SLOTS, sizeof(*bc->total));
	if (!bc->step || !bc->total) {
		budget_ctl__free(bc);
		return -ENOMEM;
	}
	htab__init(&bc->targets, sizeof(struct htab_u64), htab_u64__hash, htab_u64__equal);
	bc->costs = *c;
	bc->tracer_pid = tracer;
	bc->helper_pid = helper;
	bc->pct = pct > 0 ? pct : 0;
	bc->active = pct > 0;
	bc->accounting = true;
	budget__init(&bc->b, bc->pct / 100, c->hit_ns, clock__mono_ns());
	return 0;
}

void budget_ctl__free(struct budget_ctl *bc)
{
	free(bc->step);
	free(bc->total);
	bc->step = bc->total = NULL;
	htab__free(&bc->targets);
	bc->accounting = bc->active = false;
}

static double recorder_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

static void fill_sampling(const struct budget *b, struct isr_ev_sampling *ev, __u32 kind, __u64 ts,
			  __u64 switch_ns, size_t size)
{
	memset(ev, 0, sizeof(*ev));
	ev->hdr.type = ISR_EV_SAMPLING;
	ev->hdr.size = (__u16)size;
	ev->hdr.cpu = (__u32)sched_getcpu();
	ev->hdr.ts_ns = ts;
	ev->kind = kind;
	ev->budget_ppm = (__u32)(b->fraction * 1e6 + 0.5);
	ev->hit_cost_ps = (__u64)(b->hit_cost_ns * 1000 + 0.5);
	ev->switch_ns = switch_ns;
	ev->spent_ns = (__u64)b->spent_ns;
	ev->credit_ns = (__s64)b->credit_ns;
}

static int write_sampling(const struct budget *b, __u32 kind, __u64 ts, __u64 switch_ns, budget_emit_fn emit,
			  void *ctx)
{
	struct isr_ev_sampling ev;

	fill_sampling(b, &ev, kind, ts, switch_ns, sizeof(ev));
	return emit(ctx, &ev, sizeof(ev));
}

static __u64 ps(double ns)
{
	return ns > 0 ? (__u64)(ns * 1000 + 0.5) : 0;
}

int budget_ctl__write_costs(const struct budget_ctl *bc, __u64 ts, budget_emit_fn emit, void *ctx)
{
	struct {
		struct isr_ev_sampling s;
		struct isr_sampling_costs c;
	} rec;

	if (!bc->accounting)
		return 0;
	fill_sampling(&bc->b, &rec.s, ISR_SAMPLING_COSTS, ts, 0, sizeof(rec));
	memset(&rec.c, 0, sizeof(rec.c));
	rec.c.tracer_pid = bc->tracer_pid;
	rec.c.helper_pid = bc->helper_pid;
	rec.c.sampler_hz = bc->costs.tick_hz;
	rec.c.flags = bc->own[BUDGET_OWN_COPIES].fn ? ISR_COSTS_COPIES_APART : 0;
	rec.c.pair_ps = ps(bc->costs.pair_ns);
	rec.c.fault_ps = ps(bc->costs.fault_ns);
	rec.c.sched_ps = ps(bc->costs.sched_ns);
	rec.c.tick_ps = ps(bc->costs.tick_ns);
	return emit(ctx, &rec, sizeof(rec));
}

int budget_ctl__start(struct budget_ctl *bc, __u64 start, budget_emit_fn emit, void *ctx)
{
	int e;

	if (!bc->accounting)
		return 0;
	budget__init(&bc->b, bc->b.fraction, bc->costs.hit_ns, start);
	if (bc->duration_ns)
		budget__set_end(&bc->b, start + bc->duration_ns);
	bc->start_ns = bc->last_ns = start;
	bc->next_ns = start + BUDGET_CHECK_NS;
	bc->recorder_cpu_ns = recorder_cpu_ns();
	e = budget_ctl__write_costs(bc, start, emit, ctx);
	if (e || !bc->active)
		return e;
	for (int k = 0; k < BUDGET_OWN_MAX; k++) {
		struct budget_own *o = &bc->own[k];

		if (!o->fn)
			continue;
		budget__init(&o->b, bc->b.fraction, k == BUDGET_OWN_FAULTS ? bc->costs.fault_ns : bc->costs.pair_ns,
			     start);
		if (bc->duration_ns)
			budget__set_end(&o->b, start + bc->duration_ns);
		o->next_ns = start + BUDGET_CHECK_NS;
	}
	return write_sampling(&bc->b, ISR_SAMPLING_START, start, 0, emit, ctx);
}

void budget_ctl__sample_own(struct budget_ctl *bc, enum budget_own_kind kind, int (*fn)(void *arg, bool on), void *arg)
{
	if (!bc->active || kind >= BUDGET_OWN_MAX)
		return;
	bc->own[kind].fn = fn;
	bc->own[kind].arg = arg;
}

static size_t slot_of(__u32 tid)
{
	return (tid * 2654435761u) % BUDGET_HIT_SLOTS;
}

static struct budget_slot *charge(struct budget_ctl *bc, __u32 pid, __u32 tid, int kind, double ns, __u64 ops)
{
	struct budget_slot *s = &bc->step[slot_of(tid)];

	s->pid = pid;
	s->tid = tid;
	s->ns[kind] += ns;
	s->ops[kind] += ops;
	return s;
}

static void seen_target(struct budget_ctl *bc, __u32 pid)
{
	struct htab_u64 key = { pid, 0 };
	bool added;

	if (pid)
		htab__insert(&bc->targets, &key, &added);
}

static bool known_target(const struct budget_ctl *bc, __u32 pid)
{
	__u64 v;

	return htab_u64__get(&bc->targets, pid, &v);
}

/* A switch: a target thread preempted by a thread of the recorder waits
 * for it; a thread switched in stops waiting. */
static void note_switch(struct budget_ctl *bc, const struct isr_ev_sched_switch *e)
{
	bool prev_target = known_target(bc, e->hdr.pid);
	struct budget_slot *in = &bc->total[slot_of(e->next_tid)];

	/* its time off a CPU, within this step */
	if (in->out_since && in->tid == e->next_tid) {
		__u64 from = in->out_since > bc->last_ns ? in->out_since : bc->last_ns;

		if (e->hdr.ts_ns > from)
			bc->step[slot_of(e->next_tid)].off_ns += (double)(e->hdr.ts_ns - from);
		in->out_since = 0;
	}
	if (prev_target) {
		struct budget_slot *out = &bc->total[slot_of(e->hdr.tid)];

		out->tid = e->hdr.tid;
		out->pid = e->hdr.pid;
		out->out_since = e->hdr.ts_ns;
	}
	if (in->displaced_since && in->tid == e->next_tid) {
		if (e->hdr.ts_ns > in->displaced_since)
			charge(bc, e->next_pid, e->next_tid, ISR_SPENT_RECORDER,
			       (double)(e->hdr.ts_ns - in->displaced_since), 1);
		in->displaced_since = 0;
	}
	if (prev_target && (e->next_pid == bc->tracer_pid || (bc->helper_pid && e->next_pid == bc->helper_pid)) &&
	    (e->flags & ISR_SWITCH_RUNNABLE)) {
		struct budget_slot *out = &bc->total[slot_of(e->hdr.tid)];

		out->tid = e->hdr.tid;
		out->pid = e->hdr.pid;
		out->displaced_since = e->hdr.ts_ns;
	}
}

/* What a record's cost (format/registry.h, isr_ev_cost) is at the costs
 * measured at the start: what it says it took, an entry and return pair,
 * or its hits at its account's cost of one. */
static double cost_ns(const struct budget_ctl *bc, const struct isr_cost *k)
{
	const struct tracer_costs *c = &bc->costs;
	const double each[ISR_SPENT_MAX] = {
		[ISR_SPENT_HOT] = c->hit_ns,	 [ISR_SPENT_PROBES] = c->hit_ns, [ISR_SPENT_FAULTS] = c->fault_ns,
		[ISR_SPENT_SCHED] = c->sched_ns, [ISR_SPENT_CUPTI] = GPU_WINDOW_RECORD_COST_NS,
	};

	if (k->took)
		return (double)k->ns;
	return k->pair ? c->pair_ns : k->hits * each[k->account];
}

/* Each record is charged what its line of the registry says it cost; a
 * record that may be about a task not traced (a switch's prev:
 * ISR_EVF_ANY_TASK) to the other task it names when its own is not a
 * target; CUPTI's records only when its windows are charged. An async
 * copy's is noted apart too when the copies have a budget of their own. */
void budget_ctl__note(struct budget_ctl *bc, const struct isr_ev_hdr *h, size_t size)
{
	struct budget_slot *s;
	struct isr_cost k;
	bool any_task;
	double ns;

	if (!bc->accounting || size < sizeof(*h) || size < isr_event_min_size(h->type))
		return;
	any_task = isr_event_flags(h->type) & ISR_EVF_ANY_TASK;
	if (!any_task)
		seen_target(bc, h->pid);
	if (isr_ev_cost(h, size, &k) && (k.account != ISR_SPENT_CUPTI || bc->charge_cupti)) {
		if (any_task && !known_target(bc, k.task.pid))
			isr_ev_peer(h, &k.task);
		ns = cost_ns(bc, &k);
		s = charge(bc, k.task.pid, k.task.tid, (int)k.account, ns, k.hits);
		if (bc->own[BUDGET_OWN_COPIES].fn && h->type == ISR_EV_CUDA_CALL &&
		    isr_cuda_is(((const struct isr_ev_cuda_call *)h)->func, ISR_CUDA_K_ASYNC_COPY))
			s->copy_ns += ns;
	}
	if (h->type == ISR_EV_SCHED_SWITCH)
		note_switch(bc, (const void *)h);
}

int budget_ctl__wait_ms(const struct budget_ctl *bc, __u64 now, int max_ms)
{
	__u64 ms;

	if (!bc->accounting)
		return max_ms;
	ms = bc->next_ns <= now ? 0 : (bc->next_ns - now + 999999) / 1000000;
	return ms < (__u64)max_ms ? (int)ms : max_ms;
}

static double slot_sum(const struct budget_slot *s)
{
	double sum = 0;

	for (int k = 0; k < ISR_SPENT_MAX; k++)
		sum += s->ns[k];
	return sum;
}

/* What the budget spends: the slot's costs but its waits for the
 * recorder's CPU. Those are in the account, but they follow the host's
 * load more than the hot path (a busy host, or a slow build of the
 * recorder, made them exceed the budget on their own and kept the hot
 * path off for good: one window in a 3 s run, top showing no launches). */
static double slot_spend(const struct budget_slot *s)
{
	return slot_sum(s) - s->ns[ISR_SPENT_RECORDER];
}

/* What a thread charged ns over dt costs it, as a share of dt: over its
 * share of time on a CPU since it was first charged (on of span, this
 * interval's included), at least a quarter. Its share over the interval
 * alone would not do: a DataLoader worker that makes a batch in bursts
 * shorter than an interval is on a CPU all through the intervals it is
 * charged in, and its cost against those is a share of the wall clock,
 * not of its work (1% charged, 3% of its time on a CPU). */
static double load_of(double ns, double on, double span, double dt)
{
	double share = span > 0 ? on / span : 1;

	return dt > 0 ? ns / (dt * (share > 0.25 ? share : 0.25)) : 0;
}

/* Raises *max to what ns charged over dt costs a thread (load_of). */
static void own_load(double *max, double ns, double on, double span, double dt)
{
	double load = ns > 0 ? load_of(ns, on, span, dt) : 0;

	if (load > *max)
		*max = load;
}

/* A thread the hot path has hit since the start: what switching it off
 * spares. */
static bool launcher(const struct budget_ctl *bc, size_t i)
{
	return bc->total[i].ops[ISR_SPENT_HOT] || bc->step[i].ops[ISR_SPENT_HOT];
}

/* The interval since the last step: each thread's time on a CPU, the
 * recorder's waits held to the CPU it used, the sampler's ticks on the
 * busiest thread while on its CPU, every slot added to the totals, the
 * busiest by what it cost it charged to the budget (as its share of the
 * interval), of the threads the hot path has hit (nothing before it hits
 * one): switching it off spares no other thread (a DataLoader worker that
 * the recorder's CPU held back pays the same without it, and so does a
 * thread the recorder's start held back before its first launch). */
static void account_step(struct budget_ctl *bc, __u64 now)
{
	double cpu = recorder_cpu_ns(), used = cpu - bc->recorder_cpu_ns, waited = 0, busiest = -1, load;
	double dt = now > bc->last_ns ? (double)(now - bc->last_ns) : 0, top_oncpu = dt, own[BUDGET_OWN_MAX] = { 0 };
	double top_on = dt, top_span = dt;
	struct budget_slot *top = &bc->step[0];
	bool launchers = false;
	size_t i;

	bc->recorder_cpu_ns = cpu;
	for (i = 0; i < BUDGET_HIT_SLOTS; i++) {
		const struct budget_slot *t = &bc->total[i];

		waited += bc->step[i].ns[ISR_SPENT_RECORDER];
		if (t->out_since && now > t->out_since)
			bc->step[i].off_ns += (double)(now - (t->out_since > bc->last_ns ? t->out_since : bc->last_ns));
		launchers |= launcher(bc, i);
	}
	for (i = 0; i < BUDGET_HIT_SLOTS && dt > 0; i++) {
		struct budget_slot *s = &bc->step[i];
		const struct budget_slot *t = &bc->total[i];
		double oncpu = dt > s->off_ns ? dt - s->off_ns : 0, on = t->oncpu_ns + oncpu, span = t->seen_ns + dt;

		if (waited > used && waited > 0)
			s->ns[ISR_SPENT_RECORDER] *= (used > 0 ? used : 0) / waited;
		own_load(&own[BUDGET_OWN_FAULTS], s->ns[ISR_SPENT_FAULTS], on, span, dt);
		own_load(&own[BUDGET_OWN_COPIES], s->copy_ns, on, span, dt);
		if (launchers && !launcher(bc, i))
			continue;
		load = load_of(slot_spend(s), on, span, dt);
		if (load > busiest) {
			busiest = load;
			top = s;
			top_oncpu = oncpu;
			top_on = on;
			top_span = span;
		}
	}
	/* the sampler interrupts whatever runs on a CPU: charged to the
	 * busiest thread, when a thread was charged at all (not to an empty
	 * slot, whose totals may be another thread's) */
	if (bc->costs.tick_hz && dt > 0 && top->tid) {
		double ticks = bc->costs.tick_hz * top_oncpu / 1e9;

		top->ns[ISR_SPENT_SAMPLER] += ticks * bc->costs.tick_ns;
		top->ops[ISR_SPENT_SAMPLER] += (__u64)(ticks + 0.5);
		busiest = load_of(slot_spend(top), top_on, top_span, dt);
	}
	for (i = 0; i < BUDGET_HIT_SLOTS; i++) {
		struct budget_slot *s = &bc->step[i], *t = &bc->total[i];

		if (s->tid) {
			t->pid = s->pid;
			t->tid = s->tid;
		}
		if (t->tid) {
			t->oncpu_ns += dt > s->off_ns ? dt - s->off_ns : 0;
			t->seen_ns += dt;
		}
		for (int k = 0; k < ISR_SPENT_MAX; k++) {
			t->ns[k] += s->ns[k];
			t->ops[k] += s->ops[k];
			bc->all_ns[k] += s->ns[k];
		}
		memset(s, 0, sizeof(*s));
	}
	budget__charge(&bc->b, launchers && busiest > 0 ? busiest * dt : 0, now);
	for (int k = 0; k < BUDGET_OWN_MAX; k++)
		if (bc->own[k].fn)
			budget__charge(&bc->own[k].b, own[k] * dt, now);
	bc->last_ns = now;
}

/* The targets as the tracer knows them, now and then: a switch out of a
 * target thread is charged to it, not to what ran next. */
static void refresh_targets(struct budget_ctl *bc, struct tracer *t, __u64 now)
{
	static __u32 pids[ISR_MAX_TARGETS];
	int n;

	if (bc->targets_ns && now - bc->targets_ns < TARGETS_REFRESH_NS)
		return;
	bc->targets_ns = now;
	n = tracer__targets(t, pids, ISR_MAX_TARGETS);
	for (int i = 0; i < n; i++)
		seen_target(bc, pids[i]);
}

/* The hot path: switched when the budget says so; *next_ns, when to
 * decide again at the latest. */
static int step_hot(struct budget_ctl *bc, struct tracer *t, __u64 now, __u64 *next_ns, budget_emit_fn emit,
		    void *ctx)
{
	enum budget_action act = budget__decide(&bc->b, now, next_ns);
	__u64 t0, t1;
	char err[512];
	bool on;
	int e;

	if (act == BUDGET_KEEP)
		return 0;
	on = act == BUDGET_SWITCH_ON;
	t0 = clock__mono_ns();
	e = tracer__set_switch(t, TRACER_HOT, on, err, sizeof(err));
	t1 = clock__mono_ns();
	if (e && !bc->warned) {
		fprintf(stderr, "\ninferscope-bpf: overhead budget: %s\n", err);
		bc->warned = true;
	}
	/* The window runs from when the probes were surely live to when
	 * their release began. */
	budget__switched(&bc->b, on, on ? t1 : t0);
	return write_sampling(&bc->b, on ? ISR_SAMPLING_ON : ISR_SAMPLING_OFF, on ? t1 : t0, t1 - t0, emit, ctx);
}

/* Page-fault tracing and the async copies, the same way under budgets of
 * their own. A switch that fails leaves it as it was, said once. */
static int step_own(struct budget_ctl *bc, int kind, __u64 now, budget_emit_fn emit, void *ctx)
{
	static const char *const what[BUDGET_OWN_MAX] = { "page-fault tracing", "the async copies' probes" };
	static const __u32 kinds[BUDGET_OWN_MAX][2] = {
		{ ISR_SAMPLING_FAULTS_OFF, ISR_SAMPLING_FAULTS_ON },
		{ ISR_SAMPLING_COPIES_OFF, ISR_SAMPLING_COPIES_ON },
	};
	struct budget_own *o = &bc->own[kind];
	enum budget_action act;
	__u64 t0, t1;
	bool on;
	int e;

	if (!o->fn || now < o->next_ns)
		return 0;
	act = budget__decide(&o->b, now, &o->next_ns);
	if (act == BUDGET_KEEP)
		return 0;
	on = act == BUDGET_SWITCH_ON;
	t0 = clock__mono_ns();
	e = o->fn(o->arg, on);
	t1 = clock__mono_ns();
	if (e) {
		if (!o->warned)
			fprintf(stderr, "\ninferscope-bpf: overhead budget: cannot switch %s %s: %s\n", what[kind],
				on ? "on" : "off", strerror(-e));
		o->warned = true;
		o->next_ns = now + BUDGET_PERIOD_NS;
		return 0;
	}
	budget__switched(&o->b, on, on ? t1 : t0);
	return write_sampling(&o->b, kinds[kind][on], on ? t1 : t0, t1 - t0, emit, ctx);
}

int budget_ctl__step(struct budget_ctl *bc, struct tracer *t, __u64 now, budget_emit_fn emit, void *ctx)
{
	int e;

	if (!bc->accounting || now < bc->next_ns)
		return 0;
	refresh_targets(bc, t, now);
	account_step(bc, now);
	if (!bc->active) {
		bc->next_ns = now + BUDGET_CHECK_NS;
		return 0;
	}
	e = step_hot(bc, t, now, &bc->next_ns, emit, ctx);
	for (int k = 0; k < BUDGET_OWN_MAX; k++) {
		const struct budget_own *o = &bc->own[k];

		e = e ?: step_own(bc, k, now, emit, ctx);
		if (o->fn && o->next_ns < bc->next_ns)
			bc->next_ns = o->next_ns > now ? o->next_ns : now + 1;
	}
	return e;
}

/* The slot that tracing cost most over the recording, for its time on a
 * CPU. */
static const struct budget_slot *busiest_slot(const struct budget_ctl *bc)
{
	double dt = (double)(bc->last_ns - bc->start_ns), best = -1;
	const struct budget_slot *top = &bc->total[0];

	for (size_t i = 0; i < BUDGET_HIT_SLOTS; i++) {
		double load = load_of(slot_sum(&bc->total[i]), bc->total[i].oncpu_ns, bc->total[i].seen_ns, dt);

		if (load > best) {
			best = load;
			top = &bc->total[i];
		}
	}
	return top;
}

static __u64 allowed_ns(const struct budget_ctl *bc)
{
	if (!bc->active || bc->last_ns <= bc->start_ns)
		return 0;
	return (__u64)(bc->b.fraction * (double)(bc->last_ns - bc->start_ns) + budget__cap_ns(&bc->b));
}

int budget_ctl__finish(struct budget_ctl *bc, __u64 now, budget_emit_fn emit, void *ctx)
{
	const struct budget_slot *top;
	struct {
		struct isr_ev_sampling s;
		struct isr_sampling_spent sp;
	} rec;

	if (!bc->accounting)
		return 0;
	if (now > bc->last_ns)
		account_step(bc, now);
	top = busiest_slot(bc);
	fill_sampling(&bc->b, &rec.s, ISR_SAMPLING_SPENT, bc->last_ns, 0, sizeof(rec));
	memset(&rec.sp, 0, sizeof(rec.sp));
	rec.sp.busiest_pid = top->pid;
	rec.sp.busiest_tid = top->tid;
	rec.sp.busiest_oncpu_ns = (__u64)top->oncpu_ns;
	rec.sp.traced_ns = bc->last_ns - bc->start_ns;
	rec.sp.allowed_ns = allowed_ns(bc);
	for (int k = 0; k < ISR_SPENT_MAX; k++) {
		rec.sp.busiest_ns[k] = (__u64)top->ns[k];
		rec.sp.busiest_ops[k] = top->ops[k];
		rec.sp.all_ns[k] = (__u64)bc->all_ns[k];
	}
	if (bc->own[BUDGET_OWN_FAULTS].fn)
		rec.sp.faults_spent_ns = (__u64)bc->own[BUDGET_OWN_FAULTS].b.spent_ns;
	if (bc->own[BUDGET_OWN_COPIES].fn)
		rec.sp.copies_spent_ns = (__u64)bc->own[BUDGET_OWN_COPIES].b.spent_ns;
	return emit(ctx, &rec, sizeof(rec));
}

void budget_ctl__report(const struct budget_ctl *bc)
{
	const struct budget_slot *top;
	double sum, fixed = 0, secs;
	bool first = true;

	if (!bc->accounting)
		return;
	top = busiest_slot(bc);
	sum = slot_sum(top);
	secs = (double)(bc->last_ns - bc->start_ns) / 1e9;
	if (top->tid)
		fprintf(stderr, "inferscope-bpf: tracing cost the busiest thread (tid %u of pid %u) an estimated %.1f ms, "
			"%.2f%% of its %.2f s on a CPU in %.1f s", top->tid, top->pid, sum / 1e6,
			top->oncpu_ns > 0 ? 100 * sum / top->oncpu_ns : 0, top->oncpu_ns / 1e9, secs);
	else
		fprintf(stderr, "inferscope-bpf: tracing charged no thread of the target in %.1f s (no probe fired on "
			"one)", secs);
	if (bc->active)
		fprintf(stderr, "; the %.3g%% budget allowed %.1f ms and was charged %.1f ms (each interval's busiest "
			"thread, for its time on a CPU)", bc->pct, allowed_ns(bc) / 1e6, bc->b.spent_ns / 1e6);
	if (bc->active && bc->own[BUDGET_OWN_FAULTS].fn)
		fprintf(stderr, ", page-fault tracing's own budget %.1f ms",
			bc->own[BUDGET_OWN_FAULTS].b.spent_ns / 1e6);
	if (bc->active && bc->own[BUDGET_OWN_COPIES].fn)
		fprintf(stderr, ", the async copies' own budget %.1f ms", bc->own[BUDGET_OWN_COPIES].b.spent_ns / 1e6);
	if (!bc->active)
		fprintf(stderr, "; no budget (--budget off)");
	for (int k = 0; k < ISR_SPENT_MAX; k++) {
		if (top->ns[k] < 1e3)
			continue;
		fprintf(stderr, "%s %.1f ms %s", first ? ":" : ",", top->ns[k] / 1e6, kind_text[k]);
		if (top->ops[k])
			fprintf(stderr, " (%llu x %.2f us)", (unsigned long long)top->ops[k],
				top->ns[k] / (double)top->ops[k] / 1e3);
		if (k != ISR_SPENT_HOT && !(k == ISR_SPENT_FAULTS && bc->own[BUDGET_OWN_FAULTS].fn))
			fixed += top->ns[k];
		first = false;
	}
	fprintf(stderr, "\n");
	if (bc->active && fixed * (secs * 1e9 / (top->oncpu_ns > 0 ? top->oncpu_ns : secs * 1e9)) > (double)allowed_ns(bc)) {
		fprintf(stderr, "inferscope-bpf: what the budget does not switch cost more than it allows (%.1f ms): "
			"--no-faults, --no-py-stacks, --py-stacks=HZ lower what page faults and Python stacks cost",
			fixed / 1e6);
		if (bc->b.floor_windows)
			fprintf(stderr, "; the hot path was still probed %g s every %g s for its counts (%llu times)",
				BUDGET_MIN_ON_NS / 1e9, BUDGET_FLOOR_NS / 1e9, (unsigned long long)bc->b.floor_windows);
		fprintf(stderr, "\n");
	}
	if (bc->b.sampling)
		fprintf(stderr, "inferscope-bpf: the CUDA hot path (launches, %smemsets) cost more than the "
			"%.3g%% overhead budget: its probes were switched off %llu times and its calls are "
			"extrapolated from the windows they were on (--budget raises the budget, --budget off traces "
			"every call)\n", bc->own[BUDGET_OWN_COPIES].fn ? "" : "async copies, ", bc->pct,
			(unsigned long long)((bc->b.switches + 1) / 2));
	if (bc->own[BUDGET_OWN_COPIES].fn && bc->own[BUDGET_OWN_COPIES].b.sampling)
		fprintf(stderr, "inferscope-bpf: the async copies cost more than the %.3g%% overhead budget: their "
			"probes were switched off %llu times and the copies are extrapolated from the windows they were "
			"on (--budget off traces every copy)\n", bc->pct,
			(unsigned long long)((bc->own[BUDGET_OWN_COPIES].b.switches + 1) / 2));
	if (bc->own[BUDGET_OWN_FAULTS].fn && bc->own[BUDGET_OWN_FAULTS].b.sampling)
		fprintf(stderr, "inferscope-bpf: page-fault tracing cost more than the %.3g%% overhead budget: it was "
			"switched off %llu times and the faults are extrapolated from the windows it was on (--budget off "
			"traces every fault, --no-faults none)\n", bc->pct,
			(unsigned long long)((bc->own[BUDGET_OWN_FAULTS].b.switches + 1) / 2));
}
