// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity of a recording (summary.h states the definitions): sorts
 * instead of hash tables, since every figure is a group-by over one event
 * type. Per process: the clock fit of its pairs first, then kernels,
 * copies, memsets by name / kind / stream / device, the device busy time,
 * and the join of each kernel to its launch uprobe event.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "gpu_summary.h"

/* A launch API record may start this long before or after the uprobe
 * event of its call (the fit's bound is added): CUPTI's API record begins
 * inside the driver's entry, the uprobe fires at its first instruction. */
#define JOIN_WINDOW_NS 200000ull

/* The launch calls: CUPTI_RUNTIME_TRACE_CBID_* (cupti_runtime_cbid.h) of a
 * RUNTIME record, CUPTI_DRIVER_TRACE_CBID_* (cupti_driver_cbid.h) of a
 * DRIVER one. A kernel launched through the runtime (cudaLaunchKernel, as
 * PyTorch does) carries the correlation id of the runtime record: CUPTI
 * writes no DRIVER record for the cuLaunchKernel it makes inside (seen with
 * CUDA 13 on an H200), and the uprobe on that cuLaunchKernel fires a few
 * microseconds after the runtime record's start, on the same thread. */
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

static bool launch_family(__u16 func)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(func);

	return fn && (fn->family == ISR_CUDA_FAM_LAUNCH || fn->family == ISR_CUDA_FAM_LAUNCH_EX ||
		      fn->family == ISR_CUDA_FAM_GRAPH);
}

struct ev_list {
	const struct isr_ev_hdr **v;
	size_t n, cap;
};

static int ev_list__add(struct ev_list *l, const struct isr_ev_hdr *h)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		const struct isr_ev_hdr **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = h;
	return 0;
}

/* The GPU events of a recording, by type (in time order). */
struct gpu_events {
	struct ev_list kernels, copies, memsets, syncs, apis, clocks, statuses, names, launches;
};

static void gpu_events__free(struct gpu_events *g)
{
	free(g->kernels.v), free(g->copies.v), free(g->memsets.v), free(g->syncs.v), free(g->apis.v);
	free(g->clocks.v), free(g->statuses.v), free(g->names.v), free(g->launches.v);
}

static bool sized(const struct isr_ev_hdr *h, size_t size)
{
	return h->size >= size;
}

static int gpu_events__collect(const struct recording *r, struct gpu_events *g)
{
	int err = 0;

	for (size_t i = 0; i < r->event_count && !err; i++) {
		const struct isr_ev_hdr *h = r->events[i];

		switch (h->type) {
		case ISR_EV_GPU_KERNEL:
			err = sized(h, sizeof(struct isr_ev_gpu_kernel)) ? ev_list__add(&g->kernels, h) : 0;
			break;
		case ISR_EV_GPU_MEMCPY:
			err = sized(h, sizeof(struct isr_ev_gpu_memcpy)) ? ev_list__add(&g->copies, h) : 0;
			break;
		case ISR_EV_GPU_MEMSET:
			err = sized(h, sizeof(struct isr_ev_gpu_memset)) ? ev_list__add(&g->memsets, h) : 0;
			break;
		case ISR_EV_GPU_SYNC:
			err = sized(h, sizeof(struct isr_ev_gpu_sync)) ? ev_list__add(&g->syncs, h) : 0;
			break;
		case ISR_EV_GPU_API:
			err = sized(h, sizeof(struct isr_ev_gpu_api)) ? ev_list__add(&g->apis, h) : 0;
			break;
		case ISR_EV_GPU_CLOCK:
			err = sized(h, sizeof(struct isr_ev_gpu_clock)) ? ev_list__add(&g->clocks, h) : 0;
			break;
		case ISR_EV_GPU_STATUS:
			err = sized(h, sizeof(struct isr_ev_gpu_status)) ? ev_list__add(&g->statuses, h) : 0;
			break;
		case ISR_EV_GPU_NAME:
			err = sized(h, sizeof(struct isr_ev_gpu_name)) ? ev_list__add(&g->names, h) : 0;
			break;
		case ISR_EV_CUDA_CALL:
			if (sized(h, sizeof(struct isr_ev_cuda_call)) &&
			    launch_family(((const struct isr_ev_cuda_call *)h)->func))
				err = ev_list__add(&g->launches, h);
			break;
		default:
			break;
		}
	}
	return err;
}

/* --- per process ------------------------------------------------------------ */

static int pid_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

static struct gpu_process_stat *proc_find(struct summary *s, __u32 pid)
{
	struct gpu_process_stat key = { .pid = pid };

	if (!s->gpu_count)
		return NULL;
	return bsearch(&key, s->gpu, s->gpu_count, sizeof(*s->gpu), pid_cmp);
}

/* Every pid with a GPU event, sorted, into s->gpu. */
static int procs_collect(const struct gpu_events *g, struct summary *s)
{
	const struct ev_list *lists[] = { &g->kernels, &g->copies, &g->memsets, &g->syncs, &g->apis,
					  &g->clocks, &g->statuses, &g->names };
	size_t total = 0, n = 0, i, j;
	__u32 *pids;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		total += lists[i]->n;
	if (!total)
		return 0;
	pids = malloc(total * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		for (j = 0; j < lists[i]->n; j++)
			pids[n++] = lists[i]->v[j]->pid;
	qsort(pids, n, sizeof(*pids), pid_cmp);
	s->gpu = calloc(n, sizeof(*s->gpu));
	if (!s->gpu) {
		free(pids);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (!i || pids[i] != pids[i - 1])
			s->gpu[s->gpu_count++].pid = pids[i];
	free(pids);
	return 0;
}

static int fit_clocks(const struct gpu_events *g, struct summary *s)
{
	struct clock_sample *samples = malloc((g->clocks.n ? g->clocks.n : 1) * sizeof(*samples));

	if (!samples)
		return -ENOMEM;
	for (size_t p = 0; p < s->gpu_count; p++) {
		struct gpu_process_stat *ps = &s->gpu[p];
		size_t n = 0;
		int e;

		for (size_t i = 0; i < g->clocks.n; i++) {
			const struct isr_ev_gpu_clock *c = (const void *)g->clocks.v[i];

			if (c->hdr.pid != ps->pid || c->mono_after_ns < c->mono_before_ns)
				continue;
			samples[n].gpu_ns = c->gpu_ns;
			samples[n].mono_before_ns = c->mono_before_ns;
			samples[n].mono_after_ns = c->mono_after_ns;
			n++;
		}
		ps->clock_pairs = n;
		e = clock_fit__compute(samples, n, &ps->fit);
		if (e && e != -EINVAL) {
			free(samples);
			return e;
		}
	}
	free(samples);
	return 0;
}

/* --- kernel names ------------------------------------------------------------ */

struct name_key {
	__u32 pid, id;
	const char *name;
};

static int name_key_cmp(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* The name's display form: demangled when it is a mangled C++ name. */
static char *display_name(const char *mangled, __u32 id)
{
	char *d, buf[32];

	if (mangled) {
		d = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
		return d ? d : strdup(mangled);
	}
	snprintf(buf, sizeof(buf), "kernel#%u", id);
	return strdup(buf);
}

/* --- kernels by name --------------------------------------------------------- */

struct kernel_ref {
	__u32 pid, name_id;
	__u64 dur;
};

static int kernel_ref_cmp(const void *a, const void *b)
{
	const struct kernel_ref *x = a, *y = b;

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

static __u64 gpu_span(__u64 start, __u64 end)
{
	return end > start ? end - start : 0;
}

static int kernels_by_name(const struct gpu_events *g, struct summary *s)
{
	struct kernel_ref *refs = NULL;
	struct name_key *names = NULL;
	size_t i, n = g->kernels.n;
	int err = -ENOMEM;

	if (!n)
		return 0;
	refs = malloc(n * sizeof(*refs));
	names = malloc((g->names.n ? g->names.n : 1) * sizeof(*names));
	s->gpu_kernels = calloc(n, sizeof(*s->gpu_kernels));
	s->gpu_names = calloc(n, sizeof(*s->gpu_names));
	if (!refs || !names || !s->gpu_kernels || !s->gpu_names)
		goto out;
	for (i = 0; i < g->names.n; i++) {
		const struct isr_ev_gpu_name *e = (const void *)g->names.v[i];

		names[i].pid = e->hdr.pid;
		names[i].id = e->id;
		names[i].name = e->name;
	}
	qsort(names, g->names.n, sizeof(*names), name_key_cmp);
	for (i = 0; i < n; i++) {
		const struct isr_ev_gpu_kernel *k = (const void *)g->kernels.v[i];

		refs[i].pid = k->hdr.pid;
		refs[i].name_id = k->name_id;
		refs[i].dur = gpu_span(k->start_ns, k->end_ns);
	}
	qsort(refs, n, sizeof(*refs), kernel_ref_cmp);
	for (i = 0; i < n; i++) {
		struct gpu_kernel_stat *ks;

		if (!i || kernel_ref_cmp(&refs[i], &refs[i - 1])) {
			struct name_key key = { .pid = refs[i].pid, .id = refs[i].name_id }, *found;
			char safe[ISR_GPU_NAME_LEN];

			found = g->names.n ? bsearch(&key, names, g->names.n, sizeof(*names), name_key_cmp) : NULL;
			if (found)
				snprintf(safe, sizeof(safe), "%.*s", ISR_GPU_NAME_LEN - 1, found->name);
			ks = &s->gpu_kernels[s->gpu_kernel_count++];
			ks->pid = refs[i].pid;
			ks->name = display_name(found ? safe : NULL, refs[i].name_id);
			if (!ks->name)
				goto out;
			s->gpu_names[s->gpu_name_count++] = (struct gpu_kernel_name){ .pid = refs[i].pid,
										      .id = refs[i].name_id,
										      .name = ks->name };
			ks->min_ns = UINT64_MAX;
		}
		ks = &s->gpu_kernels[s->gpu_kernel_count - 1];
		ks->count++;
		ks->total_ns += refs[i].dur;
		if (refs[i].dur < ks->min_ns)
			ks->min_ns = refs[i].dur;
		if (refs[i].dur > ks->max_ns)
			ks->max_ns = refs[i].dur;
	}
	qsort(s->gpu_kernels, s->gpu_kernel_count, sizeof(*s->gpu_kernels), kstat_cmp);
	err = 0;
out:
	free(refs);
	free(names);
	return err;
}

/* --- copies by kind, work by stream, busy time by device -------------------- */

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

/* The group equal to key among the *count sorted groups of arr, inserted
 * in order when new (arr has room): copy kinds and streams are few. */
static void *group_get(void *arr, size_t *count, size_t size, const void *key, int (*cmp)(const void *, const void *))
{
	char *base = arr;
	size_t lo = 0, hi = *count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(base + mid * size, key);

		if (!c)
			return base + mid * size;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(base + (lo + 1) * size, base + lo * size, (*count - lo) * size);
	memcpy(base + lo * size, key, size);
	(*count)++;
	return base + lo * size;
}

struct interval {
	__u32 pid, device;
	__u64 start, end;	/* mapped */
};

static int interval_cmp(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static void interval_add(struct interval *iv, size_t *n, const struct gpu_process_stat *ps, __u32 device,
			 __u64 start, __u64 end, const struct summary *s)
{
	__u64 a, b;

	if (!ps || !ps->fit.valid)
		return;
	a = clock_fit__apply(&ps->fit, start);
	b = clock_fit__apply(&ps->fit, end);
	if (a < s->start_ns)
		a = s->start_ns;
	if (b > s->end_ns)
		b = s->end_ns;
	if (b <= a)
		return;
	iv[*n].pid = ps->pid;
	iv[*n].device = device;
	iv[*n].start = a;
	iv[*n].end = b;
	(*n)++;
}

static int work_by_stream(const struct gpu_events *g, struct summary *s)
{
	size_t n = g->kernels.n + g->copies.n + g->memsets.n, ni = 0, i;
	struct interval *iv;
	__u64 window = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;

	if (!n)
		return 0;
	s->gpu_copies = calloc(g->copies.n ? g->copies.n : 1, sizeof(*s->gpu_copies));
	s->gpu_streams = calloc(n, sizeof(*s->gpu_streams));
	s->gpu_devices = calloc(n, sizeof(*s->gpu_devices));
	iv = calloc(n, sizeof(*iv));
	if (!s->gpu_copies || !s->gpu_streams || !s->gpu_devices || !iv) {
		free(iv);
		return -ENOMEM;
	}
	for (i = 0; i < g->kernels.n; i++) {
		const struct isr_ev_gpu_kernel *k = (const void *)g->kernels.v[i];
		struct gpu_stream_stat key = { .pid = k->hdr.pid, .device = k->device_id, .stream = k->stream_id }, *st;
		struct gpu_process_stat *ps = proc_find(s, k->hdr.pid);

		st = group_get(s->gpu_streams, &s->gpu_stream_count, sizeof(key), &key, stream_cmp);
		st->kernels++;
		st->kernel_ns += gpu_span(k->start_ns, k->end_ns);
		ps->kernels++;
		interval_add(iv, &ni, ps, k->device_id, k->start_ns, k->end_ns, s);
	}
	for (i = 0; i < g->copies.n; i++) {
		const struct isr_ev_gpu_memcpy *m = (const void *)g->copies.v[i];
		struct gpu_stream_stat key = { .pid = m->hdr.pid, .device = m->device_id, .stream = m->stream_id }, *st;
		struct gpu_copy_stat ckey = { .pid = m->hdr.pid, .copy_kind = m->copy_kind }, *cs;
		struct gpu_process_stat *ps = proc_find(s, m->hdr.pid);
		__u64 d = gpu_span(m->start_ns, m->end_ns);

		st = group_get(s->gpu_streams, &s->gpu_stream_count, sizeof(key), &key, stream_cmp);
		st->copies++;
		st->copy_bytes += m->bytes;
		st->copy_ns += d;
		cs = group_get(s->gpu_copies, &s->gpu_copy_count, sizeof(ckey), &ckey, copy_cmp);
		cs->count++;
		cs->bytes += m->bytes;
		cs->total_ns += d;
		ps->copies++;
		interval_add(iv, &ni, ps, m->device_id, m->start_ns, m->end_ns, s);
	}
	for (i = 0; i < g->memsets.n; i++) {
		const struct isr_ev_gpu_memset *m = (const void *)g->memsets.v[i];
		struct gpu_stream_stat key = { .pid = m->hdr.pid, .device = m->device_id, .stream = m->stream_id }, *st;
		struct gpu_process_stat *ps = proc_find(s, m->hdr.pid);

		st = group_get(s->gpu_streams, &s->gpu_stream_count, sizeof(key), &key, stream_cmp);
		st->memsets++;
		st->memset_bytes += m->bytes;
		st->memset_ns += gpu_span(m->start_ns, m->end_ns);
		ps->memsets++;
		interval_add(iv, &ni, ps, m->device_id, m->start_ns, m->end_ns, s);
	}
	/* Busy: the union of each (process, device)'s mapped intervals. */
	qsort(iv, ni, sizeof(*iv), interval_cmp);
	for (i = 0; i < ni;) {
		struct gpu_device_stat *d = &s->gpu_devices[s->gpu_device_count++];
		__u64 cur_start = iv[i].start, cur_end = iv[i].end;
		size_t j = i + 1;

		d->pid = iv[i].pid;
		d->device = iv[i].device;
		for (; j < ni && iv[j].pid == d->pid && iv[j].device == d->device; j++) {
			if (iv[j].start > cur_end) {
				d->busy_ns += cur_end - cur_start;
				cur_start = iv[j].start;
			}
			if (iv[j].end > cur_end)
				cur_end = iv[j].end;
		}
		d->busy_ns += cur_end - cur_start;
		d->idle_fraction = window ? 1.0 - (double)d->busy_ns / (double)window : 0.0;
		i = j;
	}
	free(iv);
	return 0;
}

/* --- the join: kernel -> launch API record -> launch uprobe event ------------ */

struct launch_ref {
	__u32 pid, tid;
	__u64 ts;		/* mapped start (API record) or entry (uprobe) */
	__u32 corr;		/* API record's correlation id */
	bool used;
};

static int launch_ref_cmp(const void *a, const void *b)
{
	const struct launch_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

struct corr_entry {
	__u32 pid, corr;
	__u64 entry_ts;		/* the launch call's entry (uprobe), 0: not joined */
};

static int corr_cmp(const void *a, const void *b)
{
	const struct corr_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static __u64 absdiff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

static int u64_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

static int join_kernels(const struct gpu_events *g, struct summary *s)
{
	struct launch_ref *api = calloc(g->apis.n ? g->apis.n : 1, sizeof(*api));
	struct launch_ref *up = calloc(g->launches.n ? g->launches.n : 1, sizeof(*up));
	struct corr_entry *corr = calloc(g->apis.n ? g->apis.n : 1, sizeof(*corr));
	__u64 *lat = calloc(g->kernels.n ? g->kernels.n : 1, sizeof(*lat));
	size_t na = 0, nu = 0, nc = 0, i, j;
	int err = -ENOMEM;

	if (!api || !up || !corr || !lat)
		goto out;
	for (i = 0; i < g->apis.n; i++) {
		const struct isr_ev_gpu_api *a = (const void *)g->apis.v[i];
		const struct gpu_process_stat *ps = proc_find(s, a->hdr.pid);

		s->gpu[ps - s->gpu].api_records++;
		if (!gpu_launch_cbid(a->api, a->cbid) || !ps->fit.valid)
			continue;
		api[na].pid = a->hdr.pid;
		api[na].tid = a->thread_id;
		api[na].ts = clock_fit__apply(&ps->fit, a->start_ns);
		api[na].corr = a->correlation_id;
		na++;
	}
	for (i = 0; i < g->launches.n; i++) {
		up[nu].pid = g->launches.v[i]->pid;
		up[nu].tid = g->launches.v[i]->tid;
		up[nu].ts = g->launches.v[i]->ts_ns;
		nu++;
	}
	qsort(api, na, sizeof(*api), launch_ref_cmp);
	qsort(up, nu, sizeof(*up), launch_ref_cmp);
	/* Per thread, both in time order: each API record takes the nearest
	 * unused uprobe event within the window. */
	for (i = 0, j = 0; i < na; i++) {
		const struct gpu_process_stat *ps = proc_find(s, api[i].pid);
		__u64 window = JOIN_WINDOW_NS + (__u64)ps->fit.bound_ns, best_d = UINT64_MAX;
		size_t k, best = SIZE_MAX;

		while (j < nu && (up[j].pid < api[i].pid || (up[j].pid == api[i].pid && up[j].tid < api[i].tid) ||
				  (up[j].pid == api[i].pid && up[j].tid == api[i].tid && up[j].ts + window < api[i].ts)))
			j++;
		for (k = j; k < nu && up[k].pid == api[i].pid && up[k].tid == api[i].tid && up[k].ts <= api[i].ts + window;
		     k++) {
			if (!up[k].used && absdiff(up[k].ts, api[i].ts) < best_d) {
				best_d = absdiff(up[k].ts, api[i].ts);
				best = k;
			}
		}
		corr[nc].pid = api[i].pid;
		corr[nc].corr = api[i].corr;
		corr[nc].entry_ts = 0;
		if (best != SIZE_MAX) {
			up[best].used = true;
			corr[nc].entry_ts = up[best].ts;
		}
		nc++;
	}
	qsort(corr, nc, sizeof(*corr), corr_cmp);
	for (i = 0; i < g->kernels.n; i++) {
		const struct isr_ev_gpu_kernel *k = (const void *)g->kernels.v[i];
		struct gpu_process_stat *ps = proc_find(s, k->hdr.pid);
		struct corr_entry key = { .pid = k->hdr.pid, .corr = k->correlation_id }, *c;
		__u64 start;

		c = nc ? bsearch(&key, corr, nc, sizeof(*corr), corr_cmp) : NULL;
		if (!c || !c->entry_ts || !ps->fit.valid) {
			ps->unjoined++;
			continue;
		}
		ps->joined++;
		start = clock_fit__apply(&ps->fit, k->start_ns);
		if (start < c->entry_ts) {
			ps->causality_violations++;
			if (c->entry_ts - start > ps->worst_violation_ns)
				ps->worst_violation_ns = c->entry_ts - start;
		}
	}
	/* The median launch-to-start latency of each process's joined kernels. */
	for (size_t p = 0; p < s->gpu_count; p++) {
		struct gpu_process_stat *ps = &s->gpu[p];
		size_t m = 0;

		for (i = 0; i < g->kernels.n; i++) {
			const struct isr_ev_gpu_kernel *k = (const void *)g->kernels.v[i];
			struct corr_entry key = { .pid = k->hdr.pid, .corr = k->correlation_id }, *c;
			__u64 start;

			if (k->hdr.pid != ps->pid || !ps->fit.valid)
				continue;
			c = nc ? bsearch(&key, corr, nc, sizeof(*corr), corr_cmp) : NULL;
			if (!c || !c->entry_ts)
				continue;
			start = clock_fit__apply(&ps->fit, k->start_ns);
			if (start >= c->entry_ts)
				lat[m++] = start - c->entry_ts;
		}
		if (m) {
			qsort(lat, m, sizeof(*lat), u64_cmp);
			ps->launch_to_start_p50_ns = lat[(m - 1) / 2];
		}
	}
	err = 0;
out:
	free(api);
	free(up);
	free(corr);
	free(lat);
	return err;
}

static void statuses(const struct gpu_events *g, struct summary *s)
{
	for (size_t i = 0; i < g->syncs.n; i++)
		proc_find(s, g->syncs.v[i]->pid)->syncs++;
	for (size_t i = 0; i < g->statuses.n; i++) {
		const struct isr_ev_gpu_status *e = (const void *)g->statuses.v[i];
		struct gpu_process_stat *ps = proc_find(s, e->hdr.pid);

		ps->cupti_dropped = e->cupti_dropped;
		if (e->state == ISR_GPU_FAILED) {
			ps->failed = true;
			ps->cupti_error = e->cupti_error;
		}
	}
}

int gpu_summary__compute(const struct recording *r, struct summary *s)
{
	struct gpu_events g;
	int err;

	memset(&g, 0, sizeof(g));
	err = gpu_events__collect(r, &g);
	err = err ?: procs_collect(&g, s);
	err = err ?: fit_clocks(&g, s);
	err = err ?: kernels_by_name(&g, s);
	err = err ?: work_by_stream(&g, s);
	err = err ?: join_kernels(&g, s);
	if (!err)
		statuses(&g, s);
	gpu_events__free(&g);
	return err;
}

void gpu_summary__free(struct summary *s)
{
	for (size_t i = 0; i < s->gpu_kernel_count; i++)
		free(s->gpu_kernels[i].name);
	free(s->gpu_kernels);
	free(s->gpu_names);
	free(s->gpu_copies);
	free(s->gpu_streams);
	free(s->gpu_devices);
	free(s->gpu);
}

static int gpu_name_cmp(const void *a, const void *b)
{
	const struct gpu_kernel_name *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

const char *summary__gpu_kernel_name(const struct summary *s, __u32 pid, __u32 name_id)
{
	struct gpu_kernel_name key = { .pid = pid, .id = name_id };
	const struct gpu_kernel_name *k;

	if (!s->gpu_name_count)
		return NULL;
	k = bsearch(&key, s->gpu_names, s->gpu_name_count, sizeof(*s->gpu_names), gpu_name_cmp);
	return k ? k->name : NULL;
}
