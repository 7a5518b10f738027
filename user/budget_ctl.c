// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "budget_ctl.h"
#include "clock.h"
#include "gpu_windows.h"

void budget_ctl__init(struct budget_ctl *bc, double pct, double hit_ns)
{
	memset(bc, 0, sizeof(*bc));
	bc->pct = pct;
	budget__init(&bc->b, pct / 100, hit_ns, clock__mono_ns());
	bc->active = true;
}

static int write_sampling(struct budget_ctl *bc, __u32 kind, __u64 ts, __u64 switch_ns, budget_emit_fn emit,
			  void *ctx)
{
	const struct budget *b = &bc->b;
	struct isr_ev_sampling ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.type = ISR_EV_SAMPLING;
	ev.hdr.size = sizeof(ev);
	ev.hdr.cpu = (__u32)sched_getcpu();
	ev.hdr.ts_ns = ts;
	ev.kind = kind;
	ev.budget_ppm = (__u32)(b->fraction * 1e6 + 0.5);
	ev.hit_cost_ps = (__u64)(b->hit_cost_ns * 1000 + 0.5);
	ev.switch_ns = switch_ns;
	ev.spent_ns = (__u64)b->spent_ns;
	ev.credit_ns = (__s64)b->credit_ns;
	return emit(ctx, &ev, sizeof(ev));
}

int budget_ctl__start(struct budget_ctl *bc, __u64 now, budget_emit_fn emit, void *ctx)
{
	if (!bc->active)
		return 0;
	budget__init(&bc->b, bc->b.fraction, bc->b.hit_cost_ns, now);
	bc->next_ns = now + BUDGET_CHECK_NS;
	return write_sampling(bc, ISR_SAMPLING_START, now, 0, emit, ctx);
}

static void charge(struct budget_ctl *bc, __u32 tid, double ns)
{
	bc->cost_ns[(tid * 2654435761u) % BUDGET_HIT_SLOTS] += ns;
}

/* A "+ret" call (and a GIL re-acquisition) took an entry and a return
 * hit; a Python stack captured on a thread (at a CUDA call, or sampled)
 * took its BPF program capture_ns on that thread. */
void budget_ctl__note(struct budget_ctl *bc, const struct isr_ev_hdr *h, size_t size)
{
	const struct isr_ev_py_frames *f = (const void *)h;
	__u64 hits;

	if (!bc->active)
		return;
	switch (h->type) {
	case ISR_EV_CUDA_CALL:
		hits = ((const struct isr_ev_cuda_call *)h)->flags & ISR_CUDA_RETURNED ? 2 : 1;
		break;
	case ISR_EV_CUDA_NAME:
		hits = 2;
		break;
	case ISR_EV_GIL:
		hits = ((const struct isr_ev_gil *)h)->kind == ISR_GIL_ACQUIRE ? 2 : 1;
		break;
	case ISR_EV_PY_FRAMES:
		if (size >= offsetof(struct isr_ev_py_frames, frames)) {
			charge(bc, h->tid, f->capture_ns);
			bc->stacks_ns += f->capture_ns;
		}
		return;
	case ISR_EV_GPU_API:
		if (bc->charge_cupti && size >= sizeof(struct isr_ev_gpu_api)) {
			charge(bc, ((const struct isr_ev_gpu_api *)h)->thread_id, GPU_WINDOW_RECORD_COST_NS);
			bc->cupti_ns += GPU_WINDOW_RECORD_COST_NS;
		}
		return;
	case ISR_EV_GPU_WINDOW:
		if (bc->charge_cupti && size >= sizeof(struct isr_ev_gpu_window)) {
			const struct isr_ev_gpu_window *w = (const void *)h;

			if (w->finalize_tid && w->finalize_ns) {
				charge(bc, w->finalize_tid, (double)w->finalize_ns);
				bc->cupti_ns += (double)w->finalize_ns;
			}
		}
		return;
	default:
		return;
	}
	charge(bc, h->tid, (double)hits * bc->b.hit_cost_ns);
	bc->hits_ns += (double)hits * bc->b.hit_cost_ns;
}

int budget_ctl__wait_ms(const struct budget_ctl *bc, __u64 now, int max_ms)
{
	__u64 ms;

	if (!bc->active)
		return max_ms;
	ms = bc->next_ns <= now ? 0 : (bc->next_ns - now + 999999) / 1000000;
	return ms < (__u64)max_ms ? (int)ms : max_ms;
}

int budget_ctl__step(struct budget_ctl *bc, struct tracer *t, __u64 now, budget_emit_fn emit, void *ctx)
{
	enum budget_action act;
	double busiest = 0;
	__u64 t0, t1;
	char err[512];
	size_t i;
	bool on;
	int e;

	if (!bc->active || now < bc->next_ns)
		return 0;
	for (i = 0; i < BUDGET_HIT_SLOTS; i++)
		if (bc->cost_ns[i] > busiest)
			busiest = bc->cost_ns[i];
	memset(bc->cost_ns, 0, sizeof(bc->cost_ns));
	budget__charge(&bc->b, busiest, now);
	act = budget__decide(&bc->b, now, &bc->next_ns);
	if (act == BUDGET_KEEP)
		return 0;
	on = act == BUDGET_SWITCH_ON;
	t0 = clock__mono_ns();
	e = tracer__set_hot(t, on, err, sizeof(err));
	t1 = clock__mono_ns();
	if (e && !bc->warned) {
		fprintf(stderr, "\ninferscope-bpf: overhead budget: %s\n", err);
		bc->warned = true;
	}
	/* The window runs from when the probes were surely live to when
	 * their release began. */
	budget__switched(&bc->b, on, on ? t1 : t0);
	return write_sampling(bc, on ? ISR_SAMPLING_ON : ISR_SAMPLING_OFF, on ? t1 : t0, t1 - t0, emit, ctx);
}

void budget_ctl__report(const struct budget_ctl *bc)
{
	if (!bc->active)
		return;
	fprintf(stderr, "inferscope-bpf: overhead budget: charged %.3f ms of probe hits and %.3f ms of Python stack "
		"captures (all threads; one hit costs %.0f ns here)\n", bc->hits_ns / 1e6, bc->stacks_ns / 1e6,
		bc->b.hit_cost_ns);
	if (bc->charge_cupti)
		fprintf(stderr, "inferscope-bpf: overhead budget: charged %.3f ms to CUPTI in GPU windows\n",
			bc->cupti_ns / 1e6);
	if (bc->b.sampling)
		fprintf(stderr, "inferscope-bpf: the CUDA hot path (launches, async copies, memsets) cost more than the "
			"%.3g%% overhead budget: its probes were switched off and on %llu times and its calls are "
			"extrapolated from the windows they were on (--budget raises the budget, --budget off traces "
			"every call)\n", bc->pct, (unsigned long long)bc->b.switches);
}
