// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pcie_saturation: copies between host and GPU that run at the PCIe
 * link's limit for a meaningful time, while the GPU computes nothing: the
 * link, not the GPU, sets the pace then. A copy's bandwidth is its bytes
 * over its GPU duration (CUPTI's copy records), by direction; the link's
 * is what the recording's host information says it carries
 * (analysis/read/host_topo.h). The cost is the time of the saturated copies
 * during which the device ran no kernel: saturated copies overlapped with
 * compute cost the job nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "host_topo.h"

#define SATURATED	0.80	/* of the link's bandwidth per direction */
#define MIN_SHARE	0.05	/* of the device's observed time */
#define MIN_COST_NS	20000000ull
#define IMPLAUSIBLE	1.05	/* a copy faster than this share of the link: the link recorded is not its link */

#define CUPTI_MEMCPY_HTOD	1
#define CUPTI_MEMCPY_DTOH	2

enum { DIR_HTOD, DIR_DTOH, DIRS };

struct interval {
	__u64 start, end;
};

/* One device of one process: its copies by direction, its kernels'
 * union (only as far back as a saturated copy not yet settled needs), and
 * its saturated copies not yet settled. */
struct pcie_dev {
	__u32 pid, device;
	__u64 copies[DIRS], bytes[DIRS], ns[DIRS];
	__u64 sat_copies[DIRS], sat_bytes[DIRS], sat_ns[DIRS];
	double best_bps[DIRS];
	struct interval *kernels;	/* disjoint, in order */
	size_t nkernels, kcap;
	struct interval *pending;	/* saturated copies, in start order */
	size_t npending, pcap;
	__u64 covered;			/* saturated copy time settled up to here */
	__u64 sat_union_ns, exposed_ns;	/* their union, and the part without a kernel */
};
RULE_TALLY_KEY(struct pcie_dev, pid, device);

struct pcie_state {
	struct rule_ctx *c;
	struct host_topo topo;
	double link_bps;		/* per direction; 0: unknown or ambiguous */
	__u32 link_mts;
	__u16 link_width;
	bool ambiguous;			/* GPUs with different links */
	struct pcie_dev *v;
	size_t n, cap;
	int err;
};

static int push(struct interval **v, size_t *n, size_t *cap, struct interval iv)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct interval *x = reallocarray(*v, c, sizeof(*x));

		if (!x)
			return -ENOMEM;
		*v = x;
		*cap = c;
	}
	(*v)[(*n)++] = iv;
	return 0;
}

/* Kernels come in start order: each extends the union's last interval or
 * starts a new one. */
static int add_kernel(struct pcie_dev *d, __u64 start, __u64 end)
{
	struct interval *last = d->nkernels ? &d->kernels[d->nkernels - 1] : NULL;

	if (last && start <= last->end) {
		if (end > last->end)
			last->end = end;
		return 0;
	}
	return push(&d->kernels, &d->nkernels, &d->kcap, (struct interval){ start, end });
}

/* The part of [a, b) no kernel of d covered. */
static __u64 without_kernels(const struct pcie_dev *d, __u64 a, __u64 b)
{
	__u64 busy = 0;

	for (size_t i = 0; i < d->nkernels && d->kernels[i].start < b; i++) {
		__u64 lo = d->kernels[i].start > a ? d->kernels[i].start : a;
		__u64 hi = d->kernels[i].end < b ? d->kernels[i].end : b;

		if (hi > lo)
			busy += hi - lo;
	}
	return b - a - busy;
}

/* Settles the saturated copies that ended by `now` (every kernel that
 * started before their end has been seen), then forgets the kernels no
 * copy can overlap any more. */
static void settle(struct pcie_dev *d, __u64 now)
{
	size_t k = 0, j;
	__u64 keep_from;

	while (k < d->npending && d->pending[k].end <= now) {
		__u64 a = d->pending[k].start > d->covered ? d->pending[k].start : d->covered, b = d->pending[k].end;

		if (b > a) {
			d->sat_union_ns += b - a;
			d->exposed_ns += without_kernels(d, a, b);
			d->covered = b;
		}
		k++;
	}
	if (k) {
		memmove(d->pending, d->pending + k, (d->npending - k) * sizeof(*d->pending));
		d->npending -= k;
	}
	keep_from = d->npending ? d->pending[0].start : now;
	for (j = 0; j < d->nkernels && d->kernels[j].end <= keep_from; j++)
		;
	if (j) {
		memmove(d->kernels, d->kernels + j, (d->nkernels - j) * sizeof(*d->kernels));
		d->nkernels -= j;
	}
}

static void pcie_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct pcie_state *s = ctx;
	struct pcie_dev *d;

	(void)th;
	if (s->err || e->unmapped)
		return;
	for (size_t i = 0; i < s->n; i++)
		settle(&s->v[i], e->start);
	if (e->h->type == ISR_EV_GPU_KERNEL) {
		const struct isr_ev_gpu_kernel *k = (const void *)e->h;

		d = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), k->hdr.pid, k->device_id);
		s->err = d ? add_kernel(d, e->start, e->end) : -ENOMEM;
		return;
	}
	if (e->h->type == ISR_EV_GPU_MEMCPY) {
		const struct isr_ev_gpu_memcpy *m = (const void *)e->h;
		int dir = m->copy_kind == CUPTI_MEMCPY_HTOD ? DIR_HTOD : m->copy_kind == CUPTI_MEMCPY_DTOH ? DIR_DTOH : -1;
		__u64 ns = e->end - e->start;
		double bps;

		if (dir < 0 || !ns)
			return;
		d = rule_tally_of(&s->v, &s->n, &s->cap, sizeof(*s->v), m->hdr.pid, m->device_id);
		if (!d) {
			s->err = -ENOMEM;
			return;
		}
		bps = (double)m->bytes * 1e9 / (double)ns;
		d->copies[dir]++;
		d->bytes[dir] += m->bytes;
		d->ns[dir] += ns;
		if (bps > d->best_bps[dir])
			d->best_bps[dir] = bps;
		if (!s->link_bps || bps < SATURATED * s->link_bps)
			return;
		d->sat_copies[dir]++;
		d->sat_bytes[dir] += m->bytes;
		d->sat_ns[dir] += ns;
		s->err = push(&d->pending, &d->npending, &d->pcap, (struct interval){ e->start, e->end });
	}
}

static void *pcie_start(struct rule_ctx *c, struct tl_observer *obs)
{
	struct pcie_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = c;
	if (host_topo__decode(&c->r->host, &s->topo)) {
		free(s);
		return NULL;
	}
	s->link_bps = host_topo__link_bytes_per_s(&s->topo, &s->link_mts, &s->link_width, &s->ambiguous);
	obs->event = pcie_event;
	return s;
}

static const struct attr_device *attr_dev(const struct rule_ctx *c, __u32 pid, __u32 device)
{
	for (size_t i = 0; i < attribution__device_count(c->attr); i++) {
		const struct attr_device *d = attribution__device_at(c->attr, i);

		if (d->pid == pid && d->device == device)
			return d;
	}
	return NULL;
}

static json_t *direction_evidence(const struct pcie_dev *d, int dir)
{
	json_t *o = json_object();

	ev_set(o, "copies", ev_u64(d->copies[dir]));
	ev_set(o, "bytes", ev_u64(d->bytes[dir]));
	ev_set(o, "copy_s", ev_seconds(d->ns[dir]));
	ev_set(o, "gbps", json_real(d->ns[dir] ? (double)d->bytes[dir] / (double)d->ns[dir] : 0));
	ev_set(o, "saturated_copies", ev_u64(d->sat_copies[dir]));
	ev_set(o, "saturated_s", ev_seconds(d->sat_ns[dir]));
	ev_set(o, "saturated_gbps", json_real(d->sat_ns[dir] ? (double)d->sat_bytes[dir] / (double)d->sat_ns[dir] : 0));
	ev_set(o, "saturated_share", json_real(d->ns[dir] ? (double)d->sat_ns[dir] / (double)d->ns[dir] : 0));
	return o;
}

static int pcie_finding(struct pcie_state *s, struct rule_ctx *c, const struct pcie_dev *d, const struct attr_device *ad)
{
	static const char *const dir_names[DIRS] = { "to the GPU", "from the GPU" };
	__u64 cost = d->exposed_ns;
	struct finding *f = findings__add(c->out, "pcie_saturation",
					  cost * 4 >= ad->observed_ns ? SEV_CRITICAL : SEV_WARNING, rule_secs(cost), d->pid, 0);
	double link_gbps = s->link_bps / 1e9;
	char link[64];
	bool first = true;
	int err = 0;

	if (!f)
		return -ENOMEM;
	snprintf(link, sizeof(link), "PCIe Gen%u x%u (%.1f GT/s)", host_topo__pcie_gen(s->link_mts), s->link_width,
		 s->link_mts / 1000.0);
	if (!host_topo__pcie_gen(s->link_mts))
		snprintf(link, sizeof(link), "PCIe x%u at %.1f GT/s", s->link_width, s->link_mts / 1000.0);
	ev_set(f->evidence, "pid", ev_u64(d->pid));
	ev_set(f->evidence, "device", ev_u64(d->device));
	ev_set(f->evidence, "cost_s", ev_seconds(cost));
	ev_set(f->evidence, "observed_s", ev_seconds(ad->observed_ns));
	ev_set(f->evidence, "link", json_string(link));
	ev_set(f->evidence, "link_gbps", json_real(link_gbps));
	ev_set(f->evidence, "saturated_s", ev_seconds(d->sat_union_ns));
	ev_set(f->evidence, "saturated_share", json_real((double)d->sat_union_ns / (double)ad->observed_ns));
	ev_set(f->evidence, "overlapped_with_kernels_s", ev_seconds(d->sat_union_ns - d->exposed_ns));
	ev_set(f->evidence, "host_to_device", direction_evidence(d, DIR_HTOD));
	ev_set(f->evidence, "device_to_host", direction_evidence(d, DIR_DTOH));
	err |= finding__say(f, "Copies between host and GPU %u of pid %u ran at the limit of its %s link (%.1f GB/s each "
			       "way) for %.3f s (%.0f%% of the %.3f s observed), %.3f s of it with no kernel running:",
			    d->device, d->pid, link, link_gbps, rule_secs(d->sat_union_ns),
			    100.0 * (double)d->sat_union_ns / (double)ad->observed_ns, rule_secs(ad->observed_ns), rule_secs(cost));
	for (int dir = 0; dir < DIRS; dir++) {
		if (!d->sat_copies[dir])
			continue;
		err |= finding__say(f, "%s %llu of %llu copies %s at %.1f GB/s (%.0f%% of their copy time)",
				    first ? "" : ";", (unsigned long long)d->sat_copies[dir],
				    (unsigned long long)d->copies[dir], dir_names[dir],
				    (double)d->sat_bytes[dir] / (double)d->sat_ns[dir],
				    100.0 * (double)d->sat_ns[dir] / (double)d->ns[dir]);
		first = false;
	}
	err |= finding__say(f, ". The GPU waited for the link then.");
	err |= finding__suggest(f, "Move fewer bytes over PCIe: keep tensors on the GPU between steps instead of "
				   "copying them back and forth, copy in fewer, larger transfers, send compact data "
				   "(uint8 images or fp16/bf16 instead of fp32, decoded or augmented on the GPU), and "
				   "overlap copies with compute (pinned memory, non_blocking=True, a side stream). "
				   "Between GPUs, use NVLink or peer copies rather than bouncing through the host; "
				   "check the GPU sits in a slot of the full width and generation.");
	return err ? -ENOMEM : 0;
}

static int pcie_finish(void *state, struct rule_ctx *c)
{
	struct pcie_state *s = state;
	bool any = false;

	if (s->err)
		return s->err;
	if (!rule_gpu_recorded(c))
		return rule_any_launcher(c) ? findings__not_judged(c->out, "pcie_saturation",
								   "--gpu (copy durations come from CUPTI)") : 0;
	for (size_t i = 0; i < s->n; i++) {
		settle(&s->v[i], UINT64_MAX);
		any |= s->v[i].copies[DIR_HTOD] || s->v[i].copies[DIR_DTOH];
	}
	if (!any)
		return 0;
	if (s->ambiguous)
		return findings__not_judged(c->out, "pcie_saturation",
					    "which PCI device each CUDA device is: the host's GPUs have different PCIe links");
	if (!s->link_bps)
		return findings__not_judged(c->out, "pcie_saturation",
					    "the GPU's PCIe link in the host information (recorded on the GPU host by "
					    "this version)");
	for (size_t i = 0; i < s->n; i++) {
		const struct pcie_dev *d = &s->v[i];
		const struct attr_device *ad = attr_dev(c, d->pid, d->device);
		int err;

		for (int dir = 0; dir < DIRS; dir++)
			if (d->best_bps[dir] > IMPLAUSIBLE * s->link_bps)
				return findings__not_judged(c->out, "pcie_saturation",
							    "a PCIe link that matches the copies: some ran faster than "
							    "the link the host information names (a virtual machine's "
							    "emulated bridge?)");
		if (!ad || !ad->observed_ns || d->exposed_ns < MIN_COST_NS ||
		    (double)d->exposed_ns < MIN_SHARE * (double)ad->observed_ns)
			continue;
		err = pcie_finding(s, c, d, ad);
		if (err)
			return err;
	}
	return 0;
}

static void pcie_free(void *state)
{
	struct pcie_state *s = state;

	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].kernels);
		free(s->v[i].pending);
	}
	free(s->v);
	host_topo__free(&s->topo);
	free(s);
}

const struct rule rule_pcie_saturation = {
	.id = "pcie_saturation",
	.title = "PCIe link saturated",
	.phase = RULE_PHASE_CAUSE,
	.start = pcie_start,
	.finish = pcie_finish,
	.free = pcie_free,
};
