// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity of a recording (summary.h states the definitions), fed the
 * pass's events: kernels, copies, memsets grouped by name / kind / stream /
 * device as they come, the busy time of each device as a sweep over its
 * work in start order, and the join of each kernel to its launch uprobe
 * event with state bounded in time (see the join below). The clock fits
 * are the pass's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "gpu_summary.h"
#include "buf.h"
#include "htab.h"

/* The uprobe event of a launch lies inside the call's API record (a
 * runtime record: cudaLaunchKernel calls cuLaunchKernel, where the uprobe
 * fires), or at most this long before the record's start (a driver record:
 * the uprobe fires at cuLaunchKernel's first instruction, CUPTI's callback
 * takes its timestamp after the probe's program ran). The fit's bound is
 * added on both sides. */
#define JOIN_LEAD_NS 200000ull
/* A kernel waits this long for an API record that starts after it (a
 * causality violation): then it is unjoined. */
#define JOIN_API_WAIT_NS 1000000000ull
/* A launch waits GPU_JOIN_HORIZON_NS for its kernel (gpu_summary.h). */
#define JOIN_HORIZON_NS GPU_JOIN_HORIZON_NS

/* Launch uprobe events are counted in bins of LBIN_NS for the busy time
 * between GPU windows (busy_by_launches): a window's edge cuts a bin, and
 * a bin cut is left out of the gaps' rate. 16 bytes a bin with calls: at
 * most 1.6 kB a second of a launching process. */
#define LBIN_NS			10000000ull
#define BUSY_MIN_LAUNCHES	20
#define BUSY_MIN_PROBED_NS	(3 * LBIN_NS)

/* The launch calls: CUPTI_RUNTIME_TRACE_CBID_* (cupti_runtime_cbid.h) of a
 * RUNTIME record, CUPTI_DRIVER_TRACE_CBID_* (cupti_driver_cbid.h) of a
 * DRIVER one. A kernel launched through the runtime (cudaLaunchKernel, as
 * PyTorch does) carries the correlation id of the runtime record: CUPTI
 * writes no DRIVER record for the cuLaunchKernel it makes inside (seen with
 * CUDA 13 on an H200), and the uprobe on that cuLaunchKernel fires a few
 * microseconds after the runtime record's start, on the same thread. */
/* The callback ids of CUPTI's cudaMemcpy* and cudaMemset* (runtime) and
 * cuMemcpy* and cuMemset* (driver) functions, as ranges (cupti_runtime_cbid.h,
 * cupti_driver_cbid.h of CUDA 13). */
static const struct cbid_range {
	__u32 lo, hi;
} copy_cbids_runtime[] = {
	{ 31, 52 }, { 142, 145 }, { 160, 163 }, { 215, 236 }, { 243, 246 }, { 249, 250 }, { 482, 485 }, { 509, 512 },
}, copy_cbids_driver[] = {
	{ 43, 43 }, { 45, 45 }, { 47, 47 }, { 49, 49 }, { 51, 51 }, { 53, 58 }, { 60, 60 }, { 62, 62 }, { 64, 64 },
	{ 66, 69 }, { 71, 71 }, { 73, 73 }, { 75, 75 }, { 77, 77 }, { 79, 79 }, { 81, 81 }, { 216, 216 }, { 218, 218 },
	{ 220, 220 }, { 222, 222 }, { 224, 224 }, { 226, 226 }, { 248, 254 }, { 276, 293 }, { 305, 306 },
	{ 318, 321 }, { 397, 416 }, { 418, 433 }, { 776, 779 }, { 796, 799 },
};

static bool in_ranges(const struct cbid_range *r, size_t n, __u32 cbid)
{
	for (size_t i = 0; i < n; i++)
		if (cbid >= r[i].lo && cbid <= r[i].hi)
			return true;
	return false;
}

bool gpu_work_cbid(__u16 api, __u32 cbid)
{
	if (gpu_launch_cbid(api, cbid))
		return true;
	if (api == ISR_GPU_API_RUNTIME)
		return in_ranges(copy_cbids_runtime, sizeof(copy_cbids_runtime) / sizeof(copy_cbids_runtime[0]), cbid);
	return api == ISR_GPU_API_DRIVER &&
	       in_ranges(copy_cbids_driver, sizeof(copy_cbids_driver) / sizeof(copy_cbids_driver[0]), cbid);
}

bool gpu_launch_cbid(__u16 api, __u32 cbid)
{
	if (api == ISR_GPU_API_RUNTIME) {
		switch (cbid) {
		case 211:	/* cudaLaunchKernel_v7000 */
		case 214:	/* cudaLaunchKernel_ptsz_v7000 */
		case 269:	/* cudaLaunchCooperativeKernel_v9000 */
		case 270:	/* cudaLaunchCooperativeKernel_ptsz_v9000 */
		case 311:	/* cudaGraphLaunch_v10000 */
		case 312:	/* cudaGraphLaunch_ptsz_v10000 */
		case 430:	/* cudaLaunchKernelExC_v11060 */
		case 431:	/* cudaLaunchKernelExC_ptsz_v11060 */
		case 505:	/* __cudaLaunchKernel_v13000 */
		case 506:	/* __cudaLaunchKernel_ptsz_v13000 */
			return true;
		default:
			return false;
		}
	}
	if (api != ISR_GPU_API_DRIVER)
		return false;
	switch (cbid) {
	case 307:	/* cuLaunchKernel */
	case 442:	/* cuLaunchKernel_ptsz */
	case 652:	/* cuLaunchKernelEx */
	case 653:	/* cuLaunchKernelEx_ptsz */
	case 477:	/* cuLaunchCooperativeKernel */
	case 478:	/* cuLaunchCooperativeKernel_ptsz */
	case 514:	/* cuGraphLaunch */
	case 515:	/* cuGraphLaunch_ptsz */
		return true;
	default:
		return false;
	}
}

bool gpu_graph_cbid(__u16 api, __u32 cbid)
{
	if (api == ISR_GPU_API_RUNTIME)
		return cbid == 311 || cbid == 312;
	return api == ISR_GPU_API_DRIVER && (cbid == 514 || cbid == 515);
}

static __u64 gpu_span(__u64 start, __u64 end)
{
	return end > start ? end - start : 0;
}

static __u64 key2(__u32 a, __u32 b)
{
	return (__u64)a << 32 | b;
}

/* --- launch-to-start latencies ---------------------------------------------------- */

/*
 * A log-bucket histogram per process, for the median. Values below
 * 2^LAT_EXACT_BITS have a bucket each; above, a bucket spans 2^-LAT_SUB_BITS
 * of its power of two, and the median reported is the middle of the bucket
 * that holds the exact (lower) median: within 1/128 (0.8%) of it.
 */
#define LAT_SUB_BITS	6
#define LAT_EXACT_BITS	(LAT_SUB_BITS + 1)
#define LAT_EXACT	(1ull << LAT_EXACT_BITS)
#define LAT_BUCKETS	(LAT_EXACT + ((64 - LAT_EXACT_BITS) << LAT_SUB_BITS))

static size_t lat_bucket(__u64 v)
{
	unsigned int e;

	if (v < LAT_EXACT)
		return (size_t)v;
	e = 63 - (unsigned int)__builtin_clzll(v);
	return LAT_EXACT + ((size_t)(e - LAT_EXACT_BITS) << LAT_SUB_BITS) +
	       (size_t)((v >> (e - LAT_SUB_BITS)) & ((1u << LAT_SUB_BITS) - 1));
}

/* The middle of bucket b. */
static __u64 lat_value(size_t b)
{
	unsigned int e, m;

	if (b < LAT_EXACT)
		return b;
	e = (unsigned int)((b - LAT_EXACT) >> LAT_SUB_BITS) + LAT_EXACT_BITS;
	m = (unsigned int)((b - LAT_EXACT) & ((1u << LAT_SUB_BITS) - 1));
	return ((__u64)((1u << LAT_SUB_BITS) | m) << (e - LAT_SUB_BITS)) + (1ull << (e - LAT_SUB_BITS)) / 2;
}

/* --- state ------------------------------------------------------------------------ */

/* Launch uprobe events of a process in one bin of LBIN_NS from the
 * recording's start. */
struct lbin {
	__u64 idx, calls;
};

/* A stretch of time [a, z). */
struct stretch {
	__u64 a, z;
};

/* One process with GPU activity. */
struct gproc {
	struct gpu_process_stat st;
	const struct clock_fit *fit;	/* the pass's; NULL: no usable clock pairs */
	__u64 bound;			/* the fit's bound, ns */
	__u64 *lat;			/* [LAT_BUCKETS], once a kernel joined */
	__u64 nlat;
	struct isr_ev_gpu_window *win;	/* its window records, as they came */
	size_t nwin, win_cap;
	struct stretch *obs;		/* its windows, clipped, in order (finish_windows) */
	size_t nobs;
	__u64 span_end;			/* the end of its GPU span */
	struct lbin *lbins;		/* its launch uprobe events by bin, in order */
	size_t nlbins, lbins_cap;
};

struct gname {
	__u32 pid, id;
	char *name;
};

struct kgroup {
	__u32 pid, name_id;
	__u64 count, total_ns, min_ns, max_ns;
};

/* The busy sweep of one device of one process: the stretch of work being
 * merged, and the time of those closed. */
struct gdevice {
	__u32 pid, device;
	__u64 cur_start, cur_end;
	__u64 busy_ns;
};

/* A thread's launch uprobe events not yet out of reach of an API record,
 * and how many of its launch API records wait to pick one. */
struct uthread {
	__u32 pid, tid;
	struct uprobe { __u64 ts; bool used; } *v;
	size_t head, n, cap;
	size_t npending;
};

/* What a correlation id of a process joins to, while it can matter. */
enum { CORR_AWAIT_API, CORR_PENDING, CORR_RESOLVED };

struct corr {
	__u32 pid, corr;
	int state;		/* CORR_* */
	__u64 gen;		/* which of the ids' lives the queues below mean */
	bool graph;		/* a graph launch: many kernels share it */
	__u64 entry_ts;		/* RESOLVED: its launch call's entry; 0: no uprobe event matched */
	__u64 *waiting;		/* mapped starts of its kernels that came first */
	size_t nwaiting, waiting_cap;
};

/* A launch API record waiting until no uprobe event inside it can still
 * come. */
struct pending {
	__u64 due;		/* its mapped end + the fit's bound */
	__u64 gen;
	__u64 start, end;	/* mapped */
	__u32 pid, tid, corr;
};

/* When an entry of the correlation table has waited long enough. */
struct expiry {
	__u64 due;
	__u64 gen;
	__u32 pid, corr;
};

struct fifo {
	struct expiry *v;
	size_t head, n, cap;
};

struct gpu_builder {
	const struct pass *pass;
	__u64 start, end;	/* the recording window */
	struct htab procs;	/* struct gproc by pid */
	struct htab names;	/* struct gname by (pid, id) */
	struct htab kgroups;	/* struct kgroup by (pid, name id) */
	struct htab copies;	/* struct gpu_copy_stat by (pid, kind) */
	struct htab streams;	/* struct gpu_stream_stat by (pid, device, stream) */
	struct htab devices;	/* struct gdevice by (pid, device) */
	struct htab uthreads;	/* struct uthread by (pid, tid) */
	struct htab corrs;	/* struct corr by (pid, correlation id) */
	struct pending *pending;	/* min-heap on (due, gen) */
	size_t npending, pending_cap;
	struct fifo await;	/* kernels waiting for their API record: due = start + JOIN_API_WAIT_NS */
	struct fifo horizon;	/* launches waiting for their kernel: due = start + JOIN_HORIZON_NS */
	__u64 gen;
	/* SUMMARY_MAX_KERNELS name ids at most, in names and in kgroups */
	size_t kgroups_kept;
	__u64 kernels_other, names_other;
};

static __u64 gproc_hash(const void *e)
{
	return hash__u64(((const struct gproc *)e)->st.pid);
}

static bool gproc_equal(const void *a, const void *b)
{
	return ((const struct gproc *)a)->st.pid == ((const struct gproc *)b)->st.pid;
}

static __u64 gname_hash(const void *e)
{
	const struct gname *n = e;

	return hash__u64(key2(n->pid, n->id));
}

static bool gname_equal(const void *a, const void *b)
{
	const struct gname *x = a, *y = b;

	return x->pid == y->pid && x->id == y->id;
}

static __u64 kgroup_hash(const void *e)
{
	const struct kgroup *k = e;

	return hash__u64(key2(k->pid, k->name_id));
}

static bool kgroup_equal(const void *a, const void *b)
{
	const struct kgroup *x = a, *y = b;

	return x->pid == y->pid && x->name_id == y->name_id;
}

static __u64 copy_hash(const void *e)
{
	const struct gpu_copy_stat *c = e;

	return hash__u64(key2(c->pid, c->copy_kind));
}

static bool copy_equal(const void *a, const void *b)
{
	const struct gpu_copy_stat *x = a, *y = b;

	return x->pid == y->pid && x->copy_kind == y->copy_kind;
}

static __u64 stream_hash(const void *e)
{
	const struct gpu_stream_stat *st = e;

	return hash__mix(hash__u64(key2(st->pid, st->device)), st->stream);
}

static bool stream_equal(const void *a, const void *b)
{
	const struct gpu_stream_stat *x = a, *y = b;

	return x->pid == y->pid && x->device == y->device && x->stream == y->stream;
}

static __u64 gdevice_hash(const void *e)
{
	const struct gdevice *d = e;

	return hash__u64(key2(d->pid, d->device));
}

static bool gdevice_equal(const void *a, const void *b)
{
	const struct gdevice *x = a, *y = b;

	return x->pid == y->pid && x->device == y->device;
}

static __u64 uthread_hash(const void *e)
{
	const struct uthread *u = e;

	return hash__u64(key2(u->pid, u->tid));
}

static bool uthread_equal(const void *a, const void *b)
{
	const struct uthread *x = a, *y = b;

	return x->pid == y->pid && x->tid == y->tid;
}

static __u64 corr_hash(const void *e)
{
	const struct corr *c = e;

	return hash__u64(key2(c->pid, c->corr));
}

static bool corr_equal(const void *a, const void *b)
{
	const struct corr *x = a, *y = b;

	return x->pid == y->pid && x->corr == y->corr;
}

struct gpu_builder *gpu_builder__new(const struct pass *p)
{
	struct gpu_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->pass = p;
	b->start = pass__start(p);
	b->end = pass__end(p);
	htab__init(&b->procs, sizeof(struct gproc), gproc_hash, gproc_equal);
	htab__init(&b->names, sizeof(struct gname), gname_hash, gname_equal);
	htab__init(&b->kgroups, sizeof(struct kgroup), kgroup_hash, kgroup_equal);
	htab__init(&b->copies, sizeof(struct gpu_copy_stat), copy_hash, copy_equal);
	htab__init(&b->streams, sizeof(struct gpu_stream_stat), stream_hash, stream_equal);
	htab__init(&b->devices, sizeof(struct gdevice), gdevice_hash, gdevice_equal);
	htab__init(&b->uthreads, sizeof(struct uthread), uthread_hash, uthread_equal);
	htab__init(&b->corrs, sizeof(struct corr), corr_hash, corr_equal);
	return b;
}

/* The process of a GPU record, made on first sight. NULL when out of memory. */
static struct gproc *proc_get(struct gpu_builder *b, __u32 pid)
{
	struct gproc key = { .st.pid = pid }, *p;
	bool added;

	p = htab__insert(&b->procs, &key, &added);
	if (p && added) {
		p->fit = pass__fit(b->pass, pid);
		if (p->fit) {
			p->st.fit = *p->fit;
			p->st.clock_pairs = p->fit->samples;
			p->bound = (__u64)p->fit->bound_ns;
		}
	}
	return p;
}

/* --- the busy sweep --------------------------------------------------------------- */

/* Work of a device from GPU time start to end, in start order: merged
 * into the device's current stretch, or closing it. Clipped to the window. */
static int device_work(struct gpu_builder *b, const struct gproc *p, __u32 device, __u64 start, __u64 end)
{
	struct gdevice key = { .pid = p->st.pid, .device = device }, *d;
	__u64 a, z;
	bool added;

	if (!p->fit)
		return 0;
	a = clock_fit__apply(p->fit, start);
	z = clock_fit__apply(p->fit, end);
	if (a < b->start)
		a = b->start;
	if (z > b->end)
		z = b->end;
	if (z <= a)
		return 0;
	d = htab__insert(&b->devices, &key, &added);
	if (!d)
		return -ENOMEM;
	if (added) {
		d->cur_start = a;
		d->cur_end = z;
		return 0;
	}
	if (a > d->cur_end) {
		d->busy_ns += d->cur_end - d->cur_start;
		d->cur_start = a;
	}
	if (z > d->cur_end)
		d->cur_end = z;
	return 0;
}

static struct gpu_stream_stat *stream_get(struct gpu_builder *b, __u32 pid, __u32 device, __u32 stream)
{
	struct gpu_stream_stat key = { .pid = pid, .device = device, .stream = stream };
	bool added;

	return htab__insert(&b->streams, &key, &added);
}

static int on_kernel_stats(struct gpu_builder *b, struct gproc *p, const struct isr_ev_gpu_kernel *k)
{
	struct kgroup key = { .pid = k->hdr.pid, .name_id = k->name_id }, *g;
	struct gpu_stream_stat *st;
	__u64 d = gpu_span(k->start_ns, k->end_ns);
	bool added;

	/* a name id first seen past the cap: the process's other kernels */
	if (b->kgroups_kept >= SUMMARY_MAX_KERNELS && !htab__find(&b->kgroups, &key)) {
		key.name_id = KERNEL_OTHER_NAME_ID;
		b->kernels_other++;
	}
	g = htab__insert(&b->kgroups, &key, &added);
	st = g ? stream_get(b, k->hdr.pid, k->device_id, k->stream_id) : NULL;
	if (!st)
		return -ENOMEM;
	b->kgroups_kept += added && key.name_id != KERNEL_OTHER_NAME_ID;
	if (added)
		g->min_ns = UINT64_MAX;
	g->count++;
	g->total_ns += d;
	if (d < g->min_ns)
		g->min_ns = d;
	if (d > g->max_ns)
		g->max_ns = d;
	/* a launch call's, unless the kernel before on the stream had the
	 * same correlation id (a graph launch's kernels share it) */
	if (!st->kernels || k->correlation_id != st->last_corr) {
		st->launches++;
		p->st.window_launches++;
	}
	st->last_corr = k->correlation_id;
	st->kernels++;
	st->kernel_ns += d;
	p->st.kernels++;
	return device_work(b, p, k->device_id, k->start_ns, k->end_ns);
}

static int on_memcpy(struct gpu_builder *b, struct gproc *p, const struct isr_ev_gpu_memcpy *m)
{
	struct gpu_copy_stat ckey = { .pid = m->hdr.pid, .copy_kind = m->copy_kind }, *cs;
	struct gpu_stream_stat *st;
	__u64 d = gpu_span(m->start_ns, m->end_ns);
	bool added;

	st = stream_get(b, m->hdr.pid, m->device_id, m->stream_id);
	cs = st ? htab__insert(&b->copies, &ckey, &added) : NULL;
	if (!cs)
		return -ENOMEM;
	st->copies++;
	st->copy_bytes += m->bytes;
	st->copy_ns += d;
	cs->count++;
	cs->bytes += m->bytes;
	cs->total_ns += d;
	p->st.copies++;
	return device_work(b, p, m->device_id, m->start_ns, m->end_ns);
}

static int on_memset(struct gpu_builder *b, struct gproc *p, const struct isr_ev_gpu_memset *m)
{
	struct gpu_stream_stat *st = stream_get(b, m->hdr.pid, m->device_id, m->stream_id);

	if (!st)
		return -ENOMEM;
	st->memsets++;
	st->memset_bytes += m->bytes;
	st->memset_ns += gpu_span(m->start_ns, m->end_ns);
	p->st.memsets++;
	return device_work(b, p, m->device_id, m->start_ns, m->end_ns);
}

/* A window record of the process: kept (a few per minute) for the end. */
static int on_window(struct gproc *p, const struct isr_ev_gpu_window *w)
{
	if (array__reserve(&p->win, &p->win_cap, p->nwin + 1, sizeof(*p->win)))
		return -ENOMEM;
	p->win[p->nwin++] = *w;
	return 0;
}

/* The first name an id of a process was given. */
static int on_name(struct gpu_builder *b, const struct isr_ev_gpu_name *e)
{
	struct gname key = { .pid = e->hdr.pid, .id = e->id }, *n;
	bool added;

	if (b->names.len >= SUMMARY_MAX_KERNELS && !htab__find(&b->names, &key)) {
		b->names_other++;	/* not kept */
		return 0;
	}
	n = htab__insert(&b->names, &key, &added);
	if (!n)
		return -ENOMEM;
	if (added) {
		n->name = strndup(e->name, ISR_GPU_NAME_LEN - 1);
		if (!n->name)
			return -ENOMEM;
	}
	return 0;
}

/* --- the join: kernel -> launch API record -> launch uprobe event ------------------ */

/*
 * Each kernel's correlation id names a launch API record (CUPTI's: its
 * thread, its start and end), which is matched to the launch uprobe event
 * of its own call: on the record's thread, inside the record (a runtime
 * record), else the latest at most JOIN_LEAD_NS before its start (a driver
 * record), each uprobe event used once. The calls of one thread do not
 * overlap, so the event inside a record is its call's, never a neighbour's;
 * a record whose call was not probed (the overhead budget had the hot path
 * off, or the probe came later) finds none, and its kernels are unjoined:
 * never joined to the next call's launch, which would make them start
 * before their launch. All of it comes in start order, so:
 *  - a record waits until the pass is past its end (no event inside it can
 *    still come), then picks; the records of a thread pick in the order of
 *    their ends, the order of their calls, so that a record whose probe
 *    fired before its start finds the earlier call's event taken;
 *  - a thread keeps its uprobe events until no record can reach them (an
 *    event JOIN_LEAD_NS before the start of its oldest waiting record, or
 *    of the pass when none waits);
 *  - a record's result waits for the kernels of its id until they came
 *    (one kernel, unless a graph launch) or JOIN_HORIZON_NS passed;
 *  - a kernel that comes while its record waits, waits with it; one whose
 *    record has not come (it would start after the kernel) waits
 *    JOIN_API_WAIT_NS for it.
 * What was joined is what a join over the whole recording at once finds,
 * but for kernels that start more than JOIN_HORIZON_NS after their launch
 * or JOIN_API_WAIT_NS before it: those are unjoined.
 */

static int fifo__push(struct fifo *f, __u64 due, __u64 gen, __u32 pid, __u32 corr)
{
	if (f->head && f->head >= f->n / 2) {
		memmove(f->v, f->v + f->head, (f->n - f->head) * sizeof(*f->v));
		f->n -= f->head;
		f->head = 0;
	}
	if (array__reserve(&f->v, &f->cap, f->n + 1, sizeof(*f->v)))
		return -ENOMEM;
	f->v[f->n++] = (struct expiry){ .due = due, .gen = gen, .pid = pid, .corr = corr };
	return 0;
}

static bool pending_before(const struct pending *x, const struct pending *y)
{
	return x->due < y->due || (x->due == y->due && x->gen < y->gen);
}

static int pending__push(struct gpu_builder *b, const struct pending *in)
{
	size_t i;

	if (array__reserve(&b->pending, &b->pending_cap, b->npending + 1, sizeof(*b->pending)))
		return -ENOMEM;
	i = b->npending++;
	while (i && pending_before(in, &b->pending[(i - 1) / 2])) {
		b->pending[i] = b->pending[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	b->pending[i] = *in;
	return 0;
}

static void pending__pop(struct gpu_builder *b)
{
	struct pending x = b->pending[--b->npending];
	size_t i = 0, n = b->npending;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && pending_before(&b->pending[c + 1], &b->pending[c]))
			c++;
		if (!pending_before(&b->pending[c], &x))
			break;
		b->pending[i] = b->pending[c];
		i = c;
	}
	if (n)
		b->pending[i] = x;
}

static struct corr *corr_find(struct gpu_builder *b, __u32 pid, __u32 corr)
{
	struct corr key = { .pid = pid, .corr = corr };

	return htab__find(&b->corrs, &key);
}

static void corr_remove(struct gpu_builder *b, struct corr *c)
{
	struct corr key = { .pid = c->pid, .corr = c->corr };

	free(c->waiting);
	htab__remove(&b->corrs, &key, NULL);
}

/* A kernel (mapped start) of process p whose launch's entry is known. */
static int kernel_join(struct gproc *p, __u64 entry_ts, __u64 start)
{
	if (!entry_ts) {
		p->st.unjoined++;
		return 0;
	}
	p->st.joined++;
	if (start < entry_ts) {
		p->st.causality_violations++;
		if (entry_ts - start > p->st.worst_violation_ns)
			p->st.worst_violation_ns = entry_ts - start;
		return 0;
	}
	if (!p->lat) {
		p->lat = calloc(LAT_BUCKETS, sizeof(*p->lat));
		if (!p->lat)
			return -ENOMEM;
	}
	p->lat[lat_bucket(start - entry_ts)]++;
	p->nlat++;
	return 0;
}

static int corr_wait(struct corr *c, __u64 start)
{
	if (array__reserve(&c->waiting, &c->waiting_cap, c->nwaiting + 1, sizeof(*c->waiting)))
		return -ENOMEM;
	c->waiting[c->nwaiting++] = start;
	return 0;
}

static struct uthread *uthread_find(struct gpu_builder *b, __u32 pid, __u32 tid)
{
	struct uthread key = { .pid = pid, .tid = tid };

	return htab__find(&b->uthreads, &key);
}

/* Drops the events of u before ts from the front (they are used, or out of
 * every waiting or later record's reach). */
static void uthread_prune(struct uthread *u, __u64 ts)
{
	while (u->head < u->n && u->v[u->head].ts < ts)
		u->head++;
}

static __u64 sub_floor(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/* The launch uprobe event of the call of record pd on u: the first unused
 * one inside the record, else the latest unused one within JOIN_LEAD_NS
 * before it (both widened by the fit's bound); 0 when none. */
static __u64 uprobe_take(struct uthread *u, const struct pending *pd, __u64 bound)
{
	__u64 from = sub_floor(pd->start, bound), lead_from = sub_floor(from, JOIN_LEAD_NS);
	struct uprobe *best = NULL;

	for (size_t i = u->head; i < u->n && u->v[i].ts <= pd->end + bound; i++) {
		struct uprobe *up = &u->v[i];

		if (up->used || up->ts < lead_from)
			continue;
		if (up->ts >= from) {
			best = up;
			break;
		}
		best = up;	/* the latest before the record so far */
	}
	if (!best)
		return 0;
	best->used = true;
	return best->ts;
}

/* A launch record whose end has passed: its uprobe event, then the kernels
 * that waited for it. */
static int pending_resolve(struct gpu_builder *b, const struct pending *pd)
{
	struct gproc key = { .st.pid = pd->pid }, *p = htab__find(&b->procs, &key);
	struct uthread *u = uthread_find(b, pd->pid, pd->tid);
	struct corr *c = corr_find(b, pd->pid, pd->corr);
	__u64 entry;
	int err = 0;

	u->npending--;
	if (!c || c->gen != pd->gen)
		return 0;	/* a later record of the same id took its place */
	entry = uprobe_take(u, pd, p->bound);
	/* the thread's later records start after this one: what lies before
	 * this one's reach is out of theirs */
	uthread_prune(u, sub_floor(sub_floor(pd->start, p->bound), JOIN_LEAD_NS));
	c->state = CORR_RESOLVED;
	c->entry_ts = entry;
	for (size_t i = 0; i < c->nwaiting && !err; i++)
		err = kernel_join(p, entry, c->waiting[i]);
	if (c->nwaiting && !c->graph)
		corr_remove(b, c);
	else
		c->nwaiting = 0;
	return err;
}

/* Whatever has waited long enough by time now. */
static int join_advance(struct gpu_builder *b, __u64 now)
{
	int err = 0;

	while (b->npending && b->pending[0].due < now && !err) {
		struct pending pd = b->pending[0];

		pending__pop(b);
		err = pending_resolve(b, &pd);
	}
	while (b->await.head < b->await.n && b->await.v[b->await.head].due < now) {
		const struct expiry *x = &b->await.v[b->await.head++];
		struct corr *c = corr_find(b, x->pid, x->corr);

		if (c && c->gen == x->gen && c->state == CORR_AWAIT_API) {
			struct gproc key = { .st.pid = x->pid }, *p = htab__find(&b->procs, &key);

			p->st.unjoined += c->nwaiting;
			corr_remove(b, c);
		}
	}
	while (b->horizon.head < b->horizon.n && b->horizon.v[b->horizon.head].due < now) {
		const struct expiry *x = &b->horizon.v[b->horizon.head++];
		struct corr *c = corr_find(b, x->pid, x->corr);

		if (c && c->gen == x->gen && c->state == CORR_RESOLVED)
			corr_remove(b, c);
	}
	return err;
}

/* A launch uprobe event of a thread: a candidate for its records (none
 * without a clock fit). While none of the thread's records waits, the
 * events JOIN_LEAD_NS (and the fit's bound) behind are out of every later
 * record's reach. */
/* A launch uprobe event counted in its process's bin (the events come in
 * time order; one a little late counts in the latest bin). */
static int launch_bin(struct gpu_builder *b, struct gproc *p, __u64 ts)
{
	__u64 idx = (ts > b->start ? ts - b->start : 0) / LBIN_NS;

	if (p->nlbins && p->lbins[p->nlbins - 1].idx >= idx) {
		p->lbins[p->nlbins - 1].calls++;
		return 0;
	}
	if (array__reserve(&p->lbins, &p->lbins_cap, p->nlbins + 1, sizeof(*p->lbins)))
		return -ENOMEM;
	p->lbins[p->nlbins++] = (struct lbin){ .idx = idx, .calls = 1 };
	return 0;
}

static int on_launch_call(struct gpu_builder *b, const struct isr_ev_hdr *h)
{
	struct uthread key = { .pid = h->pid, .tid = h->tid }, *u;
	const struct clock_fit *fit = pass__fit(b->pass, h->pid);
	struct gproc *p;
	bool added;

	if (!fit)
		return 0;
	p = proc_get(b, h->pid);
	u = p ? htab__insert(&b->uthreads, &key, &added) : NULL;
	if (!u || launch_bin(b, p, h->ts_ns))
		return -ENOMEM;
	if (!u->npending)
		uthread_prune(u, sub_floor(sub_floor(h->ts_ns, (__u64)fit->bound_ns), JOIN_LEAD_NS));
	if (u->head && u->head >= u->n / 2) {
		memmove(u->v, u->v + u->head, (u->n - u->head) * sizeof(*u->v));
		u->n -= u->head;
		u->head = 0;
	}
	if (array__reserve(&u->v, &u->cap, u->n + 1, sizeof(*u->v)))
		return -ENOMEM;
	u->v[u->n++] = (struct uprobe){ .ts = h->ts_ns };
	return 0;
}

static int on_api(struct gpu_builder *b, struct gproc *p, const struct isr_ev_gpu_api *a, const struct pass_event *e)
{
	struct corr key = { .pid = a->hdr.pid, .corr = a->correlation_id }, *c;
	struct uthread ukey = { .pid = a->hdr.pid, .tid = a->thread_id }, *u;
	struct pending pd;
	bool added;

	p->st.api_records++;
	if (!gpu_launch_cbid(a->api, a->cbid) || !p->fit)
		return 0;
	u = htab__insert(&b->uthreads, &ukey, &added);
	c = u ? htab__insert(&b->corrs, &key, &added) : NULL;
	if (!c)
		return -ENOMEM;
	c->state = CORR_PENDING;
	c->gen = ++b->gen;
	c->graph = gpu_graph_cbid(a->api, a->cbid);
	pd = (struct pending){ .due = e->end + p->bound, .gen = c->gen, .start = e->start, .end = e->end,
			       .pid = a->hdr.pid, .tid = a->thread_id, .corr = a->correlation_id };
	if (pending__push(b, &pd))
		return -ENOMEM;
	u->npending++;
	return fifo__push(&b->horizon, e->start + JOIN_HORIZON_NS, c->gen, key.pid, key.corr);
}

static int on_kernel_join(struct gpu_builder *b, struct gproc *p, const struct isr_ev_gpu_kernel *k, __u64 start)
{
	struct corr key = { .pid = k->hdr.pid, .corr = k->correlation_id }, *c;
	bool added;
	int err;

	if (!p->fit) {
		p->st.unjoined++;
		return 0;
	}
	c = htab__insert(&b->corrs, &key, &added);
	if (!c)
		return -ENOMEM;
	if (added) {
		c->state = CORR_AWAIT_API;
		c->gen = ++b->gen;
		err = corr_wait(c, start);
		return err ?: fifo__push(&b->await, start + JOIN_API_WAIT_NS, c->gen, key.pid, key.corr);
	}
	if (c->state != CORR_RESOLVED)
		return corr_wait(c, start);
	err = kernel_join(p, c->entry_ts, start);
	if (!c->graph)
		corr_remove(b, c);
	return err;
}

int gpu_builder__event(struct gpu_builder *b, const struct pass_event *e)
{
	const struct isr_ev_hdr *h = e->h;
	struct gproc *p;
	int err;

	err = join_advance(b, e->start);
	if (err)
		return err;
	switch (h->type) {
	case ISR_EV_CUDA_CALL:
		return isr_cuda_is(((const struct isr_ev_cuda_call *)h)->func, ISR_CUDA_K_LAUNCH) ? on_launch_call(b, h) : 0;
	case ISR_EV_GPU_KERNEL:
	case ISR_EV_GPU_MEMCPY:
	case ISR_EV_GPU_MEMSET:
	case ISR_EV_GPU_SYNC:
	case ISR_EV_GPU_API:
	case ISR_EV_GPU_CLOCK:
	case ISR_EV_GPU_STATUS:
	case ISR_EV_GPU_NAME:
	case ISR_EV_GPU_WINDOW:
		break;
	default:
		return 0;
	}
	p = proc_get(b, h->pid);
	if (!p)
		return -ENOMEM;
	switch (h->type) {
	case ISR_EV_GPU_KERNEL:
		err = on_kernel_stats(b, p, (const void *)h);
		return err ?: on_kernel_join(b, p, (const void *)h, e->start);
	case ISR_EV_GPU_MEMCPY:
		return on_memcpy(b, p, (const void *)h);
	case ISR_EV_GPU_MEMSET:
		return on_memset(b, p, (const void *)h);
	case ISR_EV_GPU_SYNC:
		p->st.syncs++;
		return 0;
	case ISR_EV_GPU_API:
		return on_api(b, p, (const void *)h, e);
	case ISR_EV_GPU_STATUS: {
		const struct isr_ev_gpu_status *st = (const void *)h;

		p->st.cupti_dropped = st->cupti_dropped;
		if (st->state == ISR_GPU_FAILED) {
			p->st.failed = true;
			p->st.cupti_error = st->cupti_error;
		}
		return 0;
	}
	case ISR_EV_GPU_NAME:
		return on_name(b, (const void *)h);
	case ISR_EV_GPU_WINDOW:
		return on_window(p, (const void *)h);
	default:
		return 0;
	}
}

/* --- the results -------------------------------------------------------------------- */

static int pid_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

/* The name's display form: demangled when it is a mangled C++ name. */
static char *display_name(const char *mangled, __u32 id)
{
	char *d, buf[32];

	if (id == KERNEL_OTHER_NAME_ID)
		return strdup(SUMMARY_OTHER_KERNELS);
	if (mangled) {
		d = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
		return d ? d : strdup(mangled);
	}
	snprintf(buf, sizeof(buf), "kernel#%u", id);
	return strdup(buf);
}

static int kgroup_cmp(const void *a, const void *b)
{
	const struct kgroup *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->name_id > y->name_id) - (x->name_id < y->name_id);
}

static int kstat_cmp(const void *a, const void *b)
{
	const struct gpu_kernel_stat *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int copy_cmp(const void *a, const void *b)
{
	const struct gpu_copy_stat *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->copy_kind > y->copy_kind) - (x->copy_kind < y->copy_kind);
}

static int stream_cmp(const void *a, const void *b)
{
	const struct gpu_stream_stat *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->stream > y->stream) - (x->stream < y->stream);
}

static int device_cmp(const void *a, const void *b)
{
	const struct gpu_device_stat *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->device > y->device) - (x->device < y->device);
}

/* Copies every entry of table h into a new array *out of elements of
 * the same size. 0 or -ENOMEM. */
static int table_to_array(const struct htab *h, void **out, size_t *n)
{
	unsigned char *v = malloc((h->len ? h->len : 1) * h->entry_size);
	size_t pos = 0;
	void *e;

	*out = v;
	*n = 0;
	if (!v)
		return -ENOMEM;
	while ((e = htab__next(h, &pos)))
		memcpy(v + (*n)++ * h->entry_size, e, h->entry_size);
	return 0;
}


static int finish_kernels(struct gpu_builder *b, struct summary *s)
{
	struct kgroup *g;
	size_t n;
	int err = table_to_array(&b->kgroups, (void **)&g, &n);

	if (err)
		return err;
	s->gpu_kernels_other = b->kernels_other;
	s->gpu_names_other = b->names_other;
	s->gpu_kernels = calloc(n ? n : 1, sizeof(*s->gpu_kernels));
	s->gpu_names = calloc(n ? n : 1, sizeof(*s->gpu_names));
	if (!s->gpu_kernels || !s->gpu_names) {
		free(g);
		return -ENOMEM;
	}
	qsort(g, n, sizeof(*g), kgroup_cmp);
	for (size_t i = 0; i < n; i++) {
		struct gname key = { .pid = g[i].pid, .id = g[i].name_id }, *name = htab__find(&b->names, &key);
		struct gpu_kernel_stat *ks = &s->gpu_kernels[s->gpu_kernel_count++];

		ks->pid = g[i].pid;
		ks->name = display_name(name ? name->name : NULL, g[i].name_id);
		if (!ks->name) {
			free(g);
			return -ENOMEM;
		}
		s->gpu_names[s->gpu_name_count++] = (struct gpu_kernel_name){ .pid = ks->pid,
									      .id = g[i].name_id,
									      .name = ks->name };
		ks->count = g[i].count;
		ks->total_ns = g[i].total_ns;
		ks->min_ns = g[i].min_ns;
		ks->max_ns = g[i].max_ns;
	}
	free(g);
	qsort(s->gpu_kernels, s->gpu_kernel_count, sizeof(*s->gpu_kernels), kstat_cmp);
	qsort(s->gpu_names, s->gpu_name_count, sizeof(*s->gpu_names), summary__gpu_name_cmp);
	return 0;
}

static int stretch_cmp(const void *a, const void *b)
{
	const struct stretch *x = a, *y = b;

	return (x->a > y->a) - (x->a < y->a);
}

static int window_cmp(const void *a, const void *b)
{
	const struct isr_ev_gpu_window *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->close_ns != y->close_ns)
		return x->close_ns < y->close_ns ? -1 : 1;
	return (x->hdr.ts_ns > y->hdr.ts_ns) - (x->hdr.ts_ns < y->hdr.ts_ns);
}

/* The end of pid's GPU span: the last of its threads to end (each ends at
 * its exit or the recording's end). */
static __u64 process_end(const struct summary *s, __u32 pid)
{
	__u64 end = 0;

	for (size_t i = 0; i < s->thread_count; i++)
		if (s->threads[i].pid == pid && s->threads[i].end_ns > end)
			end = s->threads[i].end_ns;
	return end ? end : s->end_ns;
}

/* A process's windows (the latest record of each, clipped to the
 * recording, into p->obs), their total length, and its span. 0 or -ENOMEM. */
static int finish_windows(struct gpu_builder *b, struct gproc *p, const struct summary *s)
{
	struct gpu_process_stat *ps = &p->st;
	__u64 first = UINT64_MAX, end = 0;
	bool exited = false;
	size_t merged = 0;

	if (!p->nwin)
		return 0;
	p->obs = calloc(p->nwin, sizeof(*p->obs));
	if (!p->obs)
		return -ENOMEM;
	qsort(p->win, p->nwin, sizeof(*p->win), window_cmp);
	for (size_t j = 0; j < p->nwin; j++) {
		const struct isr_ev_gpu_window *e = &p->win[j];
		__u64 a = e->open_ns < b->start ? b->start : e->open_ns;
		/* a window still open at its latest record (the answer to the
		 * tracer's last flush) was collecting to the end */
		__u64 z = e->flags & ISR_GPU_WINDOW_OPEN ? process_end(s, ps->pid) : e->close_ns;

		/* a later record of the same window replaces it */
		if (j + 1 < p->nwin && p->win[j + 1].seq == e->seq)
			continue;
		ps->windows++;
		ps->unfinished += e->incomplete;
		if (e->setup_us * 1000ull > ps->attach_max_ns)
			ps->attach_max_ns = e->setup_us * 1000ull;
		if (e->drain_us * 1000ull > ps->drain_max_ns)
			ps->drain_max_ns = e->drain_us * 1000ull;
		if (e->finalize_ns) {
			ps->detaches++;
			if (e->finalize_ns > ps->detach_max_ns)
				ps->detach_max_ns = e->finalize_ns;
		}
		if (z > b->end)
			z = b->end;
		if (z > a) {
			ps->observed_ns += z - a;
			p->obs[p->nobs++] = (struct stretch){ a, z };
		}
		if (a < first)
			first = a;
		if (z > end)
			end = z;
		exited |= (e->flags & ISR_GPU_WINDOW_EXIT) != 0;
	}
	if (!exited && process_end(s, ps->pid) > end)
		end = process_end(s, ps->pid);
	ps->span_ns = end > first ? end - first : 0;
	ps->estimated = ps->observed_ns < ps->span_ns;
	p->span_end = end;
	/* in time order, each moment once (a hostile file's windows may
	 * overlap, or come in another order than their numbers) */
	qsort(p->obs, p->nobs, sizeof(*p->obs), stretch_cmp);
	for (size_t j = 0; j < p->nobs; j++) {
		if (merged && p->obs[j].a <= p->obs[merged - 1].z) {
			if (p->obs[j].z > p->obs[merged - 1].z)
				p->obs[merged - 1].z = p->obs[j].z;
		} else {
			p->obs[merged++] = p->obs[j];
		}
	}
	p->nobs = merged;
	return 0;
}

/* The time of the process's gaps (between its windows, and after the
 * last to the end of its span), of it the time its hot-path probes were on,
 * and of that the whole bins: their time and the launch uprobe events in
 * them. One walk over the gaps, the probes' windows and the bins, each in
 * time order. */
struct gap_tally {
	__u64 gap_ns, on_ns, bins_ns, bins_calls;
};

static void tally_gaps(const struct gpu_builder *b, const struct gproc *p, const struct sampling_builder *sb,
		       struct gap_tally *t)
{
	size_t non = sampling_builder__on_count(sb), k = 0, m = 0;

	memset(t, 0, sizeof(*t));
	for (size_t j = 0; j < p->nobs; j++) {
		__u64 g0 = p->obs[j].z, g1 = j + 1 < p->nobs ? p->obs[j + 1].a : p->span_end;

		if (g1 <= g0)
			continue;
		t->gap_ns += g1 - g0;
		for (__u64 s0, s1; k < non; k++) {	/* the probes' windows that ended before it */
			sampling_builder__on(sb, k, &s0, &s1);
			if (s1 > g0)
				break;
		}
		for (size_t kk = k; kk < non; kk++) {
			__u64 s0, s1, p0, p1, i0, i1;

			sampling_builder__on(sb, kk, &s0, &s1);
			if (s0 >= g1)
				break;
			p0 = s0 > g0 ? s0 : g0;
			p1 = s1 < g1 ? s1 : g1;
			if (p1 <= p0 || p0 < b->start)
				continue;
			t->on_ns += p1 - p0;
			/* the bins wholly inside [p0, p1) */
			i0 = (p0 - b->start + LBIN_NS - 1) / LBIN_NS;
			i1 = (p1 - b->start) / LBIN_NS;
			if (i1 <= i0)
				continue;
			t->bins_ns += (i1 - i0) * LBIN_NS;
			while (m < p->nlbins && p->lbins[m].idx < i0)
				m++;
			for (; m < p->nlbins && p->lbins[m].idx < i1; m++)
				t->bins_calls += p->lbins[m].calls;
		}
	}
}

/*
 * A process's busy time over its GPU span, when it was collected in
 * windows: per launch, not per second. CUPTI slows a launch-bound thread
 * while it collects (by its cost per launch, and a stall as a window
 * opens), so the GPU is idler inside the windows than in the gaps: a rate
 * per second measured in the windows understates the gaps (H100, launch-
 * bound PyTorch loop: -26.7%). What a launch keeps the GPU busy does not
 * change with how fast the host launches, so the busy time of the windows
 * per launch call whose kernels they recorded times the launch calls made
 * in the gaps is the gaps' busy time. The launches of the windows are
 * counted from the kernels themselves (gpu_stream_stat.launches), not from
 * the API records: the bridge enables and disables CUPTI's kinds one by
 * one, so as a window opens and closes some kernels are recorded without
 * their API record, or the other way round. The launches of the gaps are
 * counted by the launch uprobes: exactly where the hot path was probed, at
 * the rate of the bins wholly inside that time elsewhere, raised by the
 * process's measured slowdown under the probes (sampling.h). Taken only
 * with at least BUSY_MIN_LAUNCHES launches in the windows,
 * BUSY_MIN_PROBED_NS of whole bins probed in the gaps, and launch uprobe
 * events of the process at all; else per second (GPU_BUSY_BY_TIME).
 */
static void busy_by_launches(const struct gpu_builder *b, struct gproc *p, const struct summary *s,
			     const struct sampling_builder *sb)
{
	struct gpu_process_stat *ps = &p->st;
	struct gap_tally t;
	double rate;

	ps->busy_method = ps->estimated ? GPU_BUSY_BY_TIME : GPU_BUSY_OBSERVED;
	if (!ps->estimated || !p->nobs || !p->nlbins || ps->window_launches < BUSY_MIN_LAUNCHES)
		return;
	tally_gaps(b, p, sb, &t);
	ps->gap_launches_seen = t.bins_calls;
	ps->gap_probed_ns = t.bins_ns;
	if (t.bins_ns < BUSY_MIN_PROBED_NS)
		return;
	rate = (double)t.bins_calls / (double)t.bins_ns;
	ps->gap_launches = rate * ((double)t.on_ns + sampling__slowdown(&s->sampling, ps->pid) *
						     (double)(t.gap_ns - t.on_ns));
	ps->busy_method = GPU_BUSY_BY_LAUNCHES;
}

/* Idle against the time observed (the process's windows, or the
 * recording); busy extrapolated over its span from what the windows saw
 * (busy_by_launches), idle with it: the span less that. */
static void busy_against(struct gpu_device_stat *d, const struct gpu_process_stat *ps, __u64 recording_ns)
{
	__u64 observed = ps && ps->windows ? ps->observed_ns : recording_ns;
	double f = observed ? (double)d->busy_ns / (double)observed : 0, est, idle_seen;

	if (f > 1)
		f = 1;
	d->idle_fraction = observed ? 1.0 - f : 0.0;
	d->busy_est_ns = d->busy_ns;
	d->idle_scale = 1;
	if (!ps || !ps->estimated)
		return;
	d->estimated = true;
	est = f * (double)ps->span_ns;
	if (ps->busy_method == GPU_BUSY_BY_LAUNCHES)
		est = (double)d->busy_ns * ((double)ps->window_launches + ps->gap_launches) /
		      (double)ps->window_launches;
	/* (a span near 2^64 ns, a hostile file's, rounds up to 2^64 as a
	 * double: not cast back) */
	d->busy_est_ns = est >= (double)ps->span_ns ? ps->span_ns : (__u64)est;
	if (est > (double)ps->span_ns)
		est = (double)ps->span_ns;
	d->idle_fraction = ps->span_ns ? 1.0 - est / (double)ps->span_ns : 0.0;
	idle_seen = (double)observed * (1 - f);
	d->idle_scale = idle_seen > 0 ? ((double)ps->span_ns - est) / idle_seen :
			observed ? (double)ps->span_ns / (double)observed : 1;
}

static const struct gpu_process_stat *gpu_proc_find(const struct summary *s, __u32 pid)
{
	for (size_t i = 0; i < s->gpu_count; i++)
		if (s->gpu[i].pid == pid)
			return &s->gpu[i];
	return NULL;
}

static int finish_devices(struct gpu_builder *b, struct summary *s)
{
	__u64 window = b->end > b->start ? b->end - b->start : 0;
	size_t pos = 0;
	struct gdevice *d;

	s->gpu_devices = calloc(b->devices.len ? b->devices.len : 1, sizeof(*s->gpu_devices));
	if (!s->gpu_devices)
		return -ENOMEM;
	while ((d = htab__next(&b->devices, &pos))) {
		struct gpu_device_stat *ds = &s->gpu_devices[s->gpu_device_count++];

		ds->pid = d->pid;
		ds->device = d->device;
		ds->busy_ns = d->busy_ns + (d->cur_end - d->cur_start);
		busy_against(ds, gpu_proc_find(s, d->pid), window);
	}
	qsort(s->gpu_devices, s->gpu_device_count, sizeof(*s->gpu_devices), device_cmp);
	return 0;
}

/* The lower median of a process's latencies, from its histogram. */
static __u64 lat_median(const struct gproc *p)
{
	__u64 want = (p->nlat - 1) / 2, seen = 0;

	for (size_t i = 0; i < LAT_BUCKETS; i++) {
		seen += p->lat[i];
		if (seen > want)
			return lat_value(i);
	}
	return 0;
}

static int finish_procs(struct gpu_builder *b, struct summary *s, const struct sampling_builder *sb)
{
	size_t pos = 0;
	struct gproc *p;

	s->gpu = calloc(b->procs.len ? b->procs.len : 1, sizeof(*s->gpu));
	if (!s->gpu)
		return -ENOMEM;
	while ((p = htab__next(&b->procs, &pos))) {
		if (finish_windows(b, p, s))
			return -ENOMEM;
		busy_by_launches(b, p, s, sb);
		s->gpu[s->gpu_count] = p->st;
		if (p->nlat)
			s->gpu[s->gpu_count].launch_to_start_p50_ns = lat_median(p);
		s->gpu_count++;
	}
	qsort(s->gpu, s->gpu_count, sizeof(*s->gpu), pid_cmp);
	return 0;
}

int gpu_builder__finish(struct gpu_builder *b, struct summary *s, const struct sampling_builder *sb)
{
	size_t pos = 0;
	struct corr *c;
	int err = 0;

	/* the records still waiting have seen every uprobe event there is;
	 * then the kernels whose record never came are unjoined */
	while (b->npending && !err) {
		struct pending pd = b->pending[0];

		pending__pop(b);
		err = pending_resolve(b, &pd);
	}
	while (!err && (c = htab__next(&b->corrs, &pos))) {
		if (c->state != CORR_RESOLVED) {
			struct gproc key = { .st.pid = c->pid }, *p = htab__find(&b->procs, &key);

			p->st.unjoined += c->nwaiting;
		}
	}
	err = err ?: finish_procs(b, s, sb);
	err = err ?: finish_kernels(b, s);
	err = err ?: table_to_array(&b->copies, (void **)&s->gpu_copies, &s->gpu_copy_count);
	err = err ?: table_to_array(&b->streams, (void **)&s->gpu_streams, &s->gpu_stream_count);
	err = err ?: finish_devices(b, s);
	if (err)
		return err;
	qsort(s->gpu_copies, s->gpu_copy_count, sizeof(*s->gpu_copies), copy_cmp);
	qsort(s->gpu_streams, s->gpu_stream_count, sizeof(*s->gpu_streams), stream_cmp);
	return 0;
}

void gpu_builder__free(struct gpu_builder *b)
{
	size_t pos = 0;
	void *e;

	if (!b)
		return;
	while ((e = htab__next(&b->procs, &pos))) {
		free(((struct gproc *)e)->lat);
		free(((struct gproc *)e)->win);
		free(((struct gproc *)e)->obs);
		free(((struct gproc *)e)->lbins);
	}
	pos = 0;
	while ((e = htab__next(&b->names, &pos)))
		free(((struct gname *)e)->name);
	pos = 0;
	while ((e = htab__next(&b->uthreads, &pos)))
		free(((struct uthread *)e)->v);
	pos = 0;
	while ((e = htab__next(&b->corrs, &pos)))
		free(((struct corr *)e)->waiting);
	htab__free(&b->procs);
	htab__free(&b->names);
	htab__free(&b->kgroups);
	htab__free(&b->copies);
	htab__free(&b->streams);
	htab__free(&b->devices);
	htab__free(&b->uthreads);
	htab__free(&b->corrs);
	free(b->pending);
	free(b->await.v);
	free(b->horizon.v);
	free(b);
}
