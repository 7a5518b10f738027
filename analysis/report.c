// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Report writers: JSON (the contract in docs/report-json.md) and Markdown.
 * Both are functions of the recording and its summary only.
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "report.h"
#include "host_topo.h"
#include "py_report.h"
#include "explain.h"
#include "attribution.h"
#include "text.h"
#include "proc_tree.h"
#include "steps_report.h"
#include "tasks.h"

/* Rows of the per-step table in Markdown and HTML (the JSON has every step). */
#define STEPS_MD_ROWS 50

#define NS_PER_S 1e9
#define TOP_THREADS 30
#define IDLE_THREAD_NS 1000000ull	/* on-CPU below this: a thread that did nothing */
#define TOP_KERNELS_JSON 50
#define TOP_CUDA_ROWS 10
#define MIB (1024.0 * 1024.0)

static double ns_to_s(__u64 ns)
{
	return (double)ns / NS_PER_S;
}

static const char *origin_name(__u32 origin)
{
	switch (origin) {
	case ISR_ORIGIN_ATTACHED:
		return "attached";
	case ISR_ORIGIN_LAUNCHED:
		return "launched";
	case ISR_ORIGIN_CHILD:
		return "child";
	case ISR_ORIGIN_EXEC:
		return "exec";
	case ISR_ORIGIN_DESCENDANT:
		return "descendant";
	default:
		return "unknown";
	}
}

/* Wall-clock time of the recording start as ISO-8601 UTC with microseconds,
 * from the file's realtime/monotonic pair. False when the file has none. */
static bool start_time(const struct recording *r, const struct summary *s, char *buf, size_t len)
{
	__s64 real_ns, delta;
	time_t secs;
	struct tm tm;
	size_t n;

	if (!r->created_real_ns)
		return false;
	/* the file's values are untrusted: a sum that would overflow is no
	 * time at all */
	if (__builtin_sub_overflow((__s64)s->start_ns, (__s64)r->created_mono_ns, &delta) ||
	    __builtin_add_overflow((__s64)r->created_real_ns, delta, &real_ns) || real_ns < 0)
		return false;
	secs = (time_t)(real_ns / 1000000000);
	if (!gmtime_r(&secs, &tm))
		return false;
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!n)
		return false;
	return snprintf(buf + n, len - n, ".%06" PRId64 "Z", (int64_t)(real_ns % 1000000000 / 1000)) <
	       (int)(len - n);
}

/* json_object_set_new and json_array_append_new take (and on failure
 * release) the value, and fail on a NULL one: one check covers both the
 * allocation of the value and the insertion. A container is attached to its
 * parent as soon as it is made, so an error path only releases the root. */
#define SET(obj, key, val)                                  \
	do {                                                \
		if (json_object_set_new((obj), (key), (val))) \
			goto nomem;                         \
	} while (0)

#define APPEND(arr, val)                               \
	do {                                           \
		if (json_array_append_new((arr), (val))) \
			goto nomem;                    \
	} while (0)

static json_t *json_u64(__u64 v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static int pid_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Distinct pids of the recording's processes, ascending; *n set. */
static __u32 *target_pids(const struct recording *r, size_t *n)
{
	__u32 *pids = calloc(r->process_count ? r->process_count : 1, sizeof(*pids));
	size_t k = 0;

	if (!pids)
		return NULL;
	for (size_t i = 0; i < r->process_count; i++)
		pids[i] = r->processes[i].pid;
	qsort(pids, r->process_count, sizeof(*pids), pid_cmp);
	for (size_t i = 0; i < r->process_count; i++)
		if (!k || pids[k - 1] != pids[i])
			pids[k++] = pids[i];
	*n = k;
	return pids;
}

/* The ISR_SPENT_* kinds' names (report keys). */
#define SPENT_NAME_ROW(ID, name, value, meaning) [ISR_SPENT_##ID] = #name,
static const char *const spent_names[ISR_SPENT_MAX] = { ISR_SPENT_KINDS(SPENT_NAME_ROW) };
#undef SPENT_NAME_ROW

/* What tracing cost the targets (the recorder's account); null for a
 * recording that has none. */
static json_t *json_overhead(const struct sampling_overhead *o)
{
	json_t *obj, *costs, *spent, *by, *all;

	if (!o->measured)
		return json_null();
	obj = json_object();
	if (!obj)
		return NULL;
	SET(obj, "tracer_pid", json_u64(o->tracer_pid));
	SET(obj, "helper_pid", o->helper_pid ? json_u64(o->helper_pid) : json_null());
	SET(obj, "sampler_hz", json_u64(o->sampler_hz));
	SET(obj, "cost_ns", costs = json_object());
	SET(costs, "probe_hit", json_real(o->hit_ns));
	SET(costs, "probe_pair", json_real(o->pair_ns));
	SET(costs, "page_fault", json_real(o->fault_ns));
	SET(costs, "scheduler_event", json_real(o->sched_ns));
	SET(costs, "sampler_tick", json_real(o->tick_ns));
	if (!o->spent_known) {
		SET(obj, "spent", json_null());
		return obj;
	}
	SET(obj, "spent", spent = json_object());
	SET(spent, "pid", json_u64(o->busiest_pid));
	SET(spent, "tid", json_u64(o->busiest_tid));
	SET(spent, "traced_s", json_real(ns_to_s(o->traced_ns)));
	SET(spent, "on_cpu_s", json_real(ns_to_s(o->busiest_oncpu_ns)));
	SET(spent, "allowed_s", o->allowed_ns ? json_real(ns_to_s(o->allowed_ns)) : json_null());
	SET(spent, "budget_spent_s", json_real(ns_to_s(o->spent_ns)));
	SET(spent, "by_kind", by = json_object());
	SET(spent, "all_threads_s", all = json_object());
	for (int k = 0; k < ISR_SPENT_MAX; k++) {
		json_t *one = json_object();

		SET(by, spent_names[k], one);
		SET(one, "seconds", json_real(ns_to_s(o->busiest_ns[k])));
		SET(one, "count", json_u64(o->busiest_ops[k]));
		SET(all, spent_names[k], json_real(ns_to_s(o->all_ns[k])));
	}
	return obj;
nomem:
	json_decref(obj);
	return NULL;
}

/* The overhead budget; null for a recording made without one. */
static json_t *json_sampling(const struct sampling *sm)
{
	json_t *o, *procs;

	if (!sm->budget)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	SET(o, "budget_pct", json_real(sm->budget_pct));
	SET(o, "hit_cost_ns", json_real(sm->hit_cost_ns));
	SET(o, "sampled", json_boolean(sm->sampled));
	SET(o, "windows", json_u64(sm->sampled ? sm->windows : 1));
	SET(o, "hot_path_on_s", json_real(sm->sampled ? ns_to_s(sm->on_ns) : 0));
	SET(o, "coverage", json_real(sm->sampled ? sm->coverage : 1));
	SET(o, "max_switch_s", json_real(ns_to_s(sm->switch_ns_max)));
	SET(o, "faults_sampled", json_boolean(sm->faults_sampled));
	SET(o, "fault_windows", json_u64(sm->faults_sampled ? sm->fault_windows : 1));
	SET(o, "faults_coverage", json_real(sm->faults_sampled ? sm->faults_coverage : 1));
	SET(o, "processes", procs = json_array());
	for (size_t i = 0; i < sm->proc_count; i++) {
		const struct sampling_process *sp = &sm->procs[i];
		json_t *p = json_object();

		if (!p || json_array_append_new(procs, p))
			goto nomem;
		SET(p, "pid", json_u64(sp->pid));
		SET(p, "observed", json_u64(sp->observed));
		SET(p, "estimated", json_real(sp->estimated));
		SET(p, "slowdown", json_real(sp->slowdown));
		SET(p, "slowdown_status", json_string(sampling_slowdown__name(sp->slowdown_status)));
		if (sp->slowdown_status == SAMPLING_SLOWDOWN_NOT_MEASURED) {
			SET(p, "slowdown_measured", json_null());
			SET(p, "slowdown_ci95", json_null());
		} else {
			json_t *ci = json_array();

			SET(p, "slowdown_measured", json_real(sp->slowdown_measured));
			SET(p, "slowdown_ci95", ci);
			APPEND(ci, json_real(sp->slowdown_lo));
			APPEND(ci, json_real(sp->slowdown_hi));
		}
		SET(p, "slowdown_windows", json_u64(sp->slowdown_windows));
		SET(p, "slowdown_gaps", json_u64(sp->slowdown_gaps));
		SET(p, "slowdown_calls_in_windows", json_u64(sp->slowdown_calls_windows));
		SET(p, "slowdown_calls_in_gaps", json_u64(sp->slowdown_calls_gaps));
	}
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static json_t *json_gts(__u32 mts)
{
	return mts ? json_real(mts / 1000.0) : json_null();
}

/* The host's NVIDIA GPUs and NUMA nodes (analysis/host_topo.h), into host. */
static int json_host_topo(json_t *host, const struct recording *r)
{
	struct host_topo t;
	json_t *gpus, *nodes, *o, *link, *dist;
	char key[16];
	int err = host_topo__decode(&r->host, &t);

	if (err)
		return err;
	gpus = json_array();
	SET(host, "gpus", gpus);
	for (size_t i = 0; i < t.ngpus; i++) {
		const struct isr_host_gpu *g = &t.gpus[i].g;
		__u32 mts;
		__u16 width;
		double bps = host_gpu__link_bytes_per_s(g, &mts, &width);

		o = json_object();
		APPEND(gpus, o);
		SET(o, "pci_address", ev_text(g->pci_address, sizeof(g->pci_address)));
		SET(o, "device_id", json_integer(g->device));
		SET(o, "numa_node", g->numa_node >= 0 ? json_integer(g->numa_node) : json_null());
		SET(o, "local_cpus", ev_text(t.gpus[i].cpus, SIZE_MAX));
		link = json_object();
		SET(o, "pcie", link);
		SET(link, "speed_gts", json_gts(g->link_speed_mts));
		SET(link, "width", json_integer(g->link_width));
		SET(link, "max_speed_gts", json_gts(g->max_link_speed_mts));
		SET(link, "max_width", json_integer(g->max_link_width));
		SET(link, "port_max_speed_gts", json_gts(g->port_max_speed_mts));
		SET(link, "port_max_width", json_integer(g->port_max_width));
		SET(link, "generation", host_topo__pcie_gen(mts) ? json_integer(host_topo__pcie_gen(mts)) : json_null());
		SET(link, "gbps_per_direction", bps ? json_real(bps / 1e9) : json_null());
	}
	nodes = json_array();
	SET(host, "numa_nodes", nodes);
	for (size_t i = 0; i < t.nnodes; i++) {
		o = json_object();
		APPEND(nodes, o);
		SET(o, "node", json_integer(t.nodes[i].node));
		SET(o, "cpus", ev_text(t.nodes[i].cpus, SIZE_MAX));
		SET(o, "memory_bytes", json_u64(t.nodes[i].memory_bytes));
		dist = json_object();
		SET(o, "distances", dist);
		for (size_t k = 0; k < t.nodes[i].ndist; k++) {
			snprintf(key, sizeof(key), "%u", t.nodes[i].dist[k].node);
			SET(dist, key, json_integer(t.nodes[i].dist[k].distance));
		}
	}
	host_topo__free(&t);
	return 0;
nomem:
	host_topo__free(&t);
	return -ENOMEM;
}

#define NOTE_LEN 200

/* What the reader and the analysis did not take as written, one sentence
 * each, into notes[max]: the count. */
static size_t analysis_notes(const struct analysis *a, char (*notes)[NOTE_LEN], size_t max)
{
	const struct steps_result *st = a->ex && a->ex->steps ? steps__result(a->ex->steps) : NULL;
	const struct recording *r = a->r;
	size_t n = 0;

#define NOTE(cond, ...)										do {												if ((cond) && n < max)										snprintf(notes[n++], NOTE_LEN, __VA_ARGS__);				} while (0)
	NOTE(r->header_damaged, "the file header is damaged (CRC mismatch): its creation time is not used, "
	     "so the start time is unknown");
	NOTE(r->cut.processes, "%zu PROCESS chunks beyond the reader's bound of %u processes were left out",
	     r->cut.processes, REC_MAX_PROCESSES);
	NOTE(r->cut.threads, "%zu listed threads beyond the reader's bound of %u were left out", r->cut.threads,
	     REC_MAX_THREADS);
	NOTE(r->cut.strings, "%zu process or host properties (command lines, memory maps) were cut to the "
	     "reader's bounds", r->cut.strings);
	NOTE(r->cut.clock_pairs, "%zu realtime clock pairs beyond the reader's bound of %u were left out",
	     r->cut.clock_pairs, REC_MAX_CLOCK_PAIRS);
	NOTE(a->gpu_clock_pairs_cut, "%llu GPU clock pairs beyond %u were left out of the clock fits",
	     (unsigned long long)a->gpu_clock_pairs_cut, PASS_MAX_CLOCK_PAIRS);
	NOTE(a->thread_events_cut, "%llu events that name threads beyond the first %u were left out",
	     (unsigned long long)a->thread_events_cut, PASS_MAX_THREADS);
	NOTE(a->py && a->py->statuses_cut, "%llu Python stack statuses beyond %u were left out",
	     (unsigned long long)(a->py ? a->py->statuses_cut : 0), PY_MAX_STATUSES);
	NOTE(a->sum->kernel_launches_other || a->sum->kernel_names_other, "over %u distinct CUDA kernels: %llu "
	     "launches of those past them are counted as " SUMMARY_OTHER_KERNELS ", %llu names not kept",
	     SUMMARY_MAX_KERNELS, (unsigned long long)a->sum->kernel_launches_other,
	     (unsigned long long)a->sum->kernel_names_other);
	NOTE(a->sum->gpu_kernels_other || a->sum->gpu_names_other, "over %u distinct GPU kernel names: %llu "
	     "kernels of those past them are counted as " SUMMARY_OTHER_KERNELS ", %llu names not kept",
	     SUMMARY_MAX_KERNELS, (unsigned long long)a->sum->gpu_kernels_other,
	     (unsigned long long)a->sum->gpu_names_other);
	NOTE(a->py && (a->py->codes_other || a->py->stacks_other), "over %u Python code objects or %u stacks: "
	     "%llu code objects (shown by address) and %llu stacks (samples counted without one) not kept",
	     PY_MAX_CODES, PY_MAX_STACKS, (unsigned long long)(a->py ? a->py->codes_other : 0),
	     (unsigned long long)(a->py ? a->py->stacks_other : 0));
	NOTE(st && st->names_other, "over %u distinct NVTX range or mark names: %llu ranges and marks of those past "
	     "them are counted as " STEPS_OTHER_RANGES " or " STEPS_OTHER_MARKS, STEPS_MAX_NAMES,
	     (unsigned long long)(st ? st->names_other : 0));
	NOTE(st && st->ranges_dropped, "%llu NVTX ranges opened past %u open at once were not counted",
	     (unsigned long long)(st ? st->ranges_dropped : 0), STEPS_MAX_OPEN);
	NOTE(a->out_of_order, "%llu events came out of order, further from their place in the file than the "
	     "analysis holds events to sort them: each was analyzed at the time of the event before it",
	     (unsigned long long)a->out_of_order);
#undef NOTE
	return n;
}

#define MAX_NOTES 16

static json_t *json_analysis(const struct analysis *a)
{
	json_t *o = json_object(), *notes;
	char text[MAX_NOTES][NOTE_LEN];
	size_t n = analysis_notes(a, text, MAX_NOTES);

	if (!o)
		return NULL;
	SET(o, "out_of_order_events", json_u64(a->out_of_order));
	notes = json_array();
	SET(o, "notes", notes);
	for (size_t i = 0; i < n; i++)
		APPEND(notes, json_string(text[i]));
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static json_t *json_recording(const struct analysis *a)
{
	const struct recording *r = a->r;
	const struct summary *s = a->sum;
	const char *stop = r->stop_reason ? isr_stop_reason_name(r->stop_reason) : NULL;
	json_t *rec = json_object(), *pids, *host, *drops;
	__u32 *tp = NULL;
	char when[64];
	size_t n = 0;

	if (!rec)
		return NULL;
	SET(rec, "duration_s", json_real(s->duration_s));
	SET(rec, "start_time", start_time(r, s, when, sizeof(when)) ? json_string(when) : json_null());
	pids = json_array();
	SET(rec, "pids", pids);
	tp = target_pids(r, &n);
	if (!tp)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		APPEND(pids, json_integer(tp[i]));
	SET(rec, "truncated", json_boolean(r->truncated));
	SET(rec, "truncation", r->truncated ? ev_text(r->truncation, sizeof(r->truncation)) : json_null());
	SET(rec, "stop_reason", stop ? json_string(stop) : json_null());
	SET(rec, "trigger", r->host.trigger ? ev_text(r->host.trigger, SIZE_MAX) : json_null());

	host = json_object();
	SET(rec, "host", host);
	SET(host, "hostname", ev_text(r->host.hostname, SIZE_MAX));
	SET(host, "kernel", ev_text(r->host.kernel, SIZE_MAX));
	SET(host, "machine", ev_text(r->host.machine, SIZE_MAX));
	SET(host, "ncpus", json_integer(r->host.ncpus));
	if (json_host_topo(host, r))
		goto nomem;

	drops = json_object();
	SET(rec, "drops", drops);
	for (__u32 i = 0; i < ISR_SRC_MAX; i++) {
		const char *name = isr_source_name(i);
		char fallback[32];

		if (!name) {
			snprintf(fallback, sizeof(fallback), "source_%u", i);
			name = fallback;
		}
		SET(drops, name, json_u64(s->drops[i]));
	}
	SET(rec, "drops_total", json_u64(s->drops_total));
	SET(rec, "sampling", json_sampling(&s->sampling));
	SET(rec, "overhead", json_overhead(&s->sampling.overhead));
	SET(rec, "analysis", json_analysis(a));
	free(tp);
	return rec;
nomem:
	free(tp);
	json_decref(rec);
	return NULL;
}

/* CUDA and GIL events are counted by function, under the function's name. */
static bool counted_by_function(__u16 type)
{
	return type == ISR_EV_CUDA_CALL || type == ISR_EV_CUDA_NAME || type == ISR_EV_GIL;
}

/* GIL events by probed function; the generic type counts the rest (an
 * unknown kind, or a record too short to read). */
static const char *const gil_fn_names[2] = { "PyEval_RestoreThread", "PyEval_SaveThread" };

static __u64 gil_fn_count(const struct summary *s, int i)
{
	return i == 0 ? s->gil_acquire_events : s->gil_release_events;
}

static json_t *json_event_counts(const struct summary *s)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	for (__u16 t = 1; t < ISR_EV_TYPE_MAX; t++) {
		const char *name = isr_event_name(t);
		char fallback[32];

		if (!s->event_counts[t] || counted_by_function(t))
			continue;
		if (!name) {
			snprintf(fallback, sizeof(fallback), "type_%u", t);
			name = fallback;
		}
		SET(o, name, json_u64(s->event_counts[t]));
	}
	for (size_t i = 0; i < s->cuda_fn_count; i++) {
		const struct cuda_fn_summary *f = &s->cuda_fns[i];

		if (f->calls + f->names)
			SET(o, f->name, json_u64(f->calls + f->names));
	}
	for (int i = 0; i < 2; i++)
		if (gil_fn_count(s, i))
			SET(o, gil_fn_names[i], json_u64(gil_fn_count(s, i)));
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static json_t *json_processes(const struct recording *r, const struct summary *s)
{
	static const struct process_summary no_cuda;
	json_t *a = json_array(), *p, *failed;

	if (!a)
		return NULL;
	for (size_t i = 0; i < r->process_count; i++) {
		const struct rec_process *rp = &r->processes[i];
		const struct process_summary *ps = summary__process(s, rp->pid);

		if (!ps)
			ps = &no_cuda;
		p = json_object();
		APPEND(a, p);
		SET(p, "pid", json_integer(rp->pid));
		SET(p, "ppid", json_integer(rp->ppid));
		SET(p, "comm", ev_text(rp->comm, SIZE_MAX));
		SET(p, "cmdline", ev_text(rp->cmdline, SIZE_MAX));
		SET(p, "exe", ev_text(rp->exe, SIZE_MAX));
		SET(p, "origin", json_string(origin_name(rp->origin)));
		SET(p, "device_memory_peak_bytes", json_u64(ps->device_peak_bytes));
		SET(p, "device_memory_live_bytes", json_u64(ps->device_live_bytes));
		SET(p, "pinned_host_peak_bytes", json_u64(ps->pinned_host_peak_bytes));
		SET(p, "pinned_host_live_bytes", json_u64(ps->pinned_host_live_bytes));
		SET(p, "unknown_frees", json_u64(ps->unknown_frees));
		failed = json_object();
		SET(p, "cuda_failed_calls", failed);
		for (size_t j = 0; j < ps->failed_count; j++)
			SET(failed, summary__cuda_fn_name(s, ps->failed[j].func),
			    json_u64(ps->failed[j].count));
	}
	return a;
nomem:
	json_decref(a);
	return NULL;
}

/* The traced processes as a tree, in tree order (analysis/proc_tree.h). */
static json_t *json_process_tree(const struct recording *r, const struct summary *s)
{
	struct proc_tree t;
	json_t *a = NULL, *p;

	if (proc_tree__build(r, s, &t))
		goto nomem;
	a = json_array();
	if (!a)
		goto nomem;
	for (size_t i = 0; i < t.count; i++) {
		const struct proc_node *n = &t.nodes[i];
		const char *role = proc_role__id(n->role);

		p = json_object();
		APPEND(a, p);
		SET(p, "pid", json_integer(n->pid));
		SET(p, "ppid", json_integer(n->ppid));
		SET(p, "parent", n->parent == PROC_TREE_NO_PARENT ? json_null() : json_integer(t.nodes[n->parent].pid));
		SET(p, "depth", json_u64(n->depth));
		SET(p, "children", json_u64(n->children));
		SET(p, "comm", ev_text(n->comm, 16));
		SET(p, "role", role ? json_string(role) : json_null());
		SET(p, "role_text", role ? json_string(proc_role__text(n->role)) : json_null());
		SET(p, "origin", json_string(origin_name(n->origin)));
		SET(p, "cmdline", ev_text(n->latest->cmdline, SIZE_MAX));
		SET(p, "threads", json_u64(n->threads));
		SET(p, "on_cpu_s", json_real(ns_to_s(n->on_cpu_ns)));
		SET(p, "short_lived", json_boolean(n->short_lived));
		SET(p, "wrapper", json_boolean(n->wrapper));
	}
	proc_tree__free(&t);
	return a;
nomem:
	proc_tree__free(&t);
	json_decref(a);
	return NULL;
}

static __u64 blocked_ns(const struct thread_summary *t)
{
	return t->off_cpu_ns - t->runqueue_wait_ns;
}

/* {"tid", "comm", "pid", "tracer", "wakeups", "share", "blocked_s"} of t's
 * top waker; comm is null for a task that is not a traced thread, tracer
 * true for the recorder's own (the tracer's cost, not the job's). JSON
 * null when no wakeup was attributed. */
static json_t *json_top_waker(const struct summary *s, const struct thread_summary *t)
{
	const struct waker_summary *w = &t->top_waker;
	const struct thread_summary *wt;
	json_t *o;

	if (!w->tid)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	wt = summary__thread(s, w->pid, w->tid);
	SET(o, "tid", json_integer(w->tid));
	SET(o, "comm", wt ? ev_text(wt->comm, sizeof(wt->comm)) : json_null());
	SET(o, "pid", json_integer(w->pid));
	SET(o, "tracer", json_boolean(sampling__is_tracer(&s->sampling, w->pid)));
	SET(o, "wakeups", json_u64(w->wakeups));
	SET(o, "share", json_real(t->wakeups ? (double)w->wakeups / (double)t->wakeups : 0.0));
	SET(o, "blocked_s", json_real(ns_to_s(w->blocked_ns)));
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static json_t *json_py_func(const struct py_func_stat *f, __u64 samples)
{
	json_t *o = json_object();
	char buf[48];

	if (!o)
		return NULL;
	if (f->code) {
		SET(o, "function", ev_text(f->code->qualname, SIZE_MAX));
		SET(o, "file", ev_text(f->code->filename, SIZE_MAX));
		SET(o, "first_line", json_integer(f->code->first_line));
	} else {
		snprintf(buf, sizeof(buf), "<code object 0x%" PRIx64 ">", (uint64_t)f->code_addr);
		SET(o, "function", json_string(buf));
		SET(o, "file", json_null());
		SET(o, "first_line", json_null());
	}
	SET(o, "self_samples", json_u64(f->self));
	SET(o, "inclusive_samples", json_u64(f->inclusive));
	SET(o, "self_pct", json_real(pct(f->self, samples)));
	SET(o, "inclusive_pct", json_real(pct(f->inclusive, samples)));
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static json_t *json_py_stack(const struct py_report *py, const struct py_stack_stat *st, __u64 samples)
{
	json_t *o = json_object(), *frames = json_array();
	char buf[PY_SITE_LEN];

	if (!o || !frames) {
		json_decref(frames);
		goto nomem;
	}
	SET(o, "samples", json_u64(st->samples));
	SET(o, "pct", json_real(pct(st->samples, samples)));
	SET(o, "truncated", json_boolean(st->stack->flags & (ISR_PY_STACK_TRUNCATED | ISR_PY_STACK_INVALID)));
	SET(o, "frames", frames);
	for (__u16 i = 0; i < st->stack->depth; i++) {
		py_report__frame(py, st->stack->pid, &st->stack->frames[i], buf, sizeof(buf));
		APPEND(frames, ev_text(buf, sizeof(buf)));
	}
	return o;
nomem:
	json_decref(o);
	return NULL;
}

/* The thread's sampled Python stacks: samples, top functions and stacks. */
static int json_thread_py(json_t *o, const struct py_report *py, const struct thread_summary *t)
{
	const struct py_thread_stats *ps = py_report__thread(py, t->pid, t->tid);
	json_t *funcs = json_array(), *stacks = json_array();

	if (!funcs || !stacks) {
		json_decref(funcs);
		json_decref(stacks);
		return -ENOMEM;
	}
	SET(o, "py_samples", json_u64(ps ? ps->samples : 0));
	SET(o, "py_functions", funcs);
	SET(o, "py_stacks", stacks);
	for (size_t i = 0; ps && i < ps->nfuncs; i++)
		APPEND(funcs, json_py_func(&ps->funcs[i], ps->samples));
	for (size_t i = 0; ps && i < ps->nstacks; i++)
		APPEND(stacks, json_py_stack(py, &ps->stacks[i], ps->samples));
	return 0;
nomem:
	return -ENOMEM;
}

/* The status of a subject: the stacks are "sampling", the GIL waits
 * "traced". */
static const char *py_status_name(const struct isr_ev_py_status *st)
{
	switch (st->status) {
	case ISR_PY_STATUS_SAMPLING:		return st->subject == ISR_PY_SUBJECT_GIL ? "traced" : "sampling";
	case ISR_PY_STATUS_LAYOUT_MISMATCH:	return "layout_mismatch";
	case ISR_PY_STATUS_UNSUPPORTED:		return "unsupported";
	default:				return "unknown";
	}
}

static json_t *json_py_sites(const struct py_site *sites, size_t n, bool timed)
{
	json_t *a = json_array(), *o;

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		o = json_object();
		APPEND(a, o);
		SET(o, "site", ev_text(sites[i].site, sizeof(sites[i].site)));
		SET(o, timed ? "calls" : "samples", json_u64(sites[i].calls));
		if (timed)
			SET(o, "time_s", json_real(ns_to_s(sites[i].time_ns)));
	}
	return a;
nomem:
	json_decref(a);
	return NULL;
}

static json_t *json_python(const struct py_report *py)
{
	json_t *o = json_object(), *procs = json_array(), *gils = json_array(), *p;

	if (!o || !procs || !gils) {
		json_decref(procs);
		json_decref(gils);
		goto nomem;
	}
	SET(o, "processes", procs);
	SET(o, "gil", gils);
	for (size_t i = 0; i < py->nstatuses; i++) {
		const struct isr_ev_py_status *st = py->statuses[i];
		bool gil = st->subject == ISR_PY_SUBJECT_GIL;

		if (st->subject != ISR_PY_SUBJECT_STACKS && !gil)
			continue;
		p = json_object();
		APPEND(gil ? gils : procs, p);
		SET(p, "pid", json_integer(st->hdr.pid));
		SET(p, "version", json_integer(st->py_minor ? 300 + st->py_minor : 0));
		SET(p, gil ? "gil_waits" : "stacks", json_string(py_status_name(st)));
		SET(p, "detail", ev_text(st->detail, sizeof(st->detail)));
	}
	SET(o, "sampled_stacks", json_u64(py->timer_samples));
	SET(o, "cuda_call_stacks", json_u64(py->cuda_samples));
	SET(o, "sync_sites", json_py_sites(py->sync_sites, py->nsync, true));
	SET(o, "launch_sites", json_py_sites(py->launch_sites, py->nlaunch, false));
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static json_t *json_threads(const struct summary *s, const struct py_report *py)
{
	json_t *a = json_array(), *o;

	if (!a)
		return NULL;
	for (size_t i = 0; i < s->thread_count; i++) {
		const struct thread_summary *t = &s->threads[i];

		o = json_object();
		APPEND(a, o);
		SET(o, "pid", json_integer(t->pid));
		SET(o, "tid", json_integer(t->tid));
		SET(o, "comm", ev_text(t->comm, sizeof(t->comm)));
		SET(o, "python_entry", py_report__thread_entry(py, t->pid, t->tid) ?
			ev_text(py_report__thread_entry(py, t->pid, t->tid), PY_ENTRY_LEN) : json_null());
		SET(o, "window_s", json_real(ns_to_s(t->end_ns - t->start_ns)));
		SET(o, "on_cpu_s", json_real(ns_to_s(t->on_cpu_ns)));
		SET(o, "off_cpu_s", json_real(ns_to_s(t->off_cpu_ns)));
		SET(o, "runqueue_wait_s", json_real(ns_to_s(t->runqueue_wait_ns)));
		SET(o, "blocked_s", json_real(ns_to_s(blocked_ns(t))));
		SET(o, "blocked_io_s", json_real(ns_to_s(t->blocked_io_ns)));
		SET(o, "voluntary_switches", json_u64(t->switches_voluntary));
		SET(o, "involuntary_switches", json_u64(t->switches_involuntary));
		SET(o, "wakeups", json_u64(t->wakeups));
		SET(o, "top_waker", json_top_waker(s, t));
		SET(o, "minor_faults", json_u64(t->minor_faults));
		SET(o, "major_faults", json_u64(t->major_faults));
		SET(o, "fault_s", json_real(ns_to_s(t->fault_ns)));
		SET(o, "major_fault_s", json_real(ns_to_s(t->major_fault_ns)));
		SET(o, "faults_estimated", json_boolean(t->faults_estimated));
		SET(o, "created", json_boolean(t->created));
		SET(o, "exited", json_boolean(t->exited));
		SET(o, "cuda_sync_s", json_real(ns_to_s(t->cuda_sync_ns)));
		SET(o, "cuda_calls", json_u64(t->cuda_calls));
		SET(o, "launches", json_u64(t->cuda_launches));
		SET(o, "launches_observed", json_u64(t->cuda_launches_observed));
		SET(o, "cuda_estimated", json_boolean(t->cuda_estimated));
		SET(o, "gil_wait_s", json_real(ns_to_s(t->gil_wait_ns)));
		SET(o, "gil_hold_s", t->gil_hold_measured ? json_real(ns_to_s(t->gil_hold_ns)) : json_null());
		SET(o, "gil_acquisitions", json_u64(t->gil_acquisitions));
		SET(o, "gil_blocked_s", json_real(ns_to_s(t->gil_blocked_ns)));
		SET(o, "gil_blocks", json_u64(t->gil_blocks));
		if (json_thread_py(o, py, t))
			goto nomem;
	}
	return a;
nomem:
	json_decref(a);
	return NULL;
}

/* "0x7f3a2c001230": handles are 64-bit and JSON readers lose precision on
 * integers above 2^53. */
static json_t *json_handle(__u64 handle)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t)handle);
	return json_string(buf);
}

static json_t *json_cuda(const struct summary *s)
{
	json_t *cuda = json_object(), *calls, *kernels, *o;

	if (!cuda)
		return NULL;
	calls = json_object();
	SET(cuda, "calls", calls);
	for (size_t i = 0; i < s->cuda_fn_count; i++) {
		const struct cuda_fn_summary *f = &s->cuda_fns[i];

		if (!f->calls)
			continue;
		o = json_object();
		SET(calls, f->name, o);
		SET(o, "count", json_u64(f->calls));
		SET(o, "observed", json_u64(f->observed));
		SET(o, "estimated", json_boolean(f->estimated));
		SET(o, "failed", json_u64(f->failed));
		SET(o, "total_s", f->returned ? json_real(ns_to_s(f->total_ns)) : json_null());
		SET(o, "max_s", f->returned ? json_real(ns_to_s(f->max_ns)) : json_null());
	}
	kernels = json_array();
	SET(cuda, "kernels", kernels);
	for (size_t i = 0; i < s->kernel_count && i < TOP_KERNELS_JSON; i++) {
		const struct kernel_summary *k = &s->kernels[i];

		o = json_object();
		APPEND(kernels, o);
		SET(o, "pid", json_integer(k->pid));
		SET(o, "handle", json_handle(k->handle));
		SET(o, "name", ev_text(k->name, SIZE_MAX));
		SET(o, "launches", json_u64(k->launches));
		SET(o, "observed_launches", json_u64(k->observed_launches));
		SET(o, "estimated", json_boolean(k->estimated));
	}
	return cuda;
nomem:
	json_decref(cuda);
	return NULL;
}

static const char *copy_kind_name(__u32 kind)
{
	switch (kind) {	/* CUpti_ActivityMemcpyKind */
	case 1:		return "HtoD";
	case 2:		return "DtoH";
	case 3:		return "HtoA";
	case 4:		return "AtoH";
	case 5:		return "AtoA";
	case 6:		return "AtoD";
	case 7:		return "DtoA";
	case 8:		return "DtoD";
	case 9:		return "HtoH";
	case 10:	return "PtoP";
	default:	return "unknown";
	}
}

static json_t *json_fit(const struct clock_fit *f)
{
	json_t *o;

	if (!f->valid)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	SET(o, "pairs", json_u64(f->samples));
	SET(o, "pairs_rejected", json_u64(f->rejected));
	SET(o, "gpu_ref_ns", json_u64(f->gpu_ref));
	SET(o, "mono_ref_ns", json_u64(f->mono_ref));
	SET(o, "offset_ns", json_real(f->offset_ns));
	SET(o, "slope", json_real(f->slope));
	SET(o, "drift_ppm", json_real(f->drift_ppm));
	SET(o, "residual_rms_ns", json_real(f->residual_rms_ns));
	SET(o, "residual_p50_ns", json_real(f->residual_p50_ns));
	SET(o, "residual_p99_ns", json_real(f->residual_p99_ns));
	SET(o, "residual_max_ns", json_real(f->residual_max_ns));
	SET(o, "bound_ns", json_real(f->bound_ns));
	SET(o, "drift_bound_ppm", f->drift_bound_ppm > 0 ? json_real(f->drift_bound_ppm) : json_null());
	return o;
nomem:
	json_decref(o);
	return NULL;
}

static json_t *json_gpu(const struct summary *s)
{
	json_t *gpu = json_object(), *procs, *arr, *o;

	if (!gpu)
		return NULL;
	procs = json_array();
	SET(gpu, "processes", procs);
	for (size_t i = 0; i < s->gpu_count; i++) {
		const struct gpu_process_stat *p = &s->gpu[i];

		o = json_object();
		APPEND(procs, o);
		SET(o, "pid", json_integer(p->pid));
		SET(o, "clock_fit", json_fit(&p->fit));
		SET(o, "kernels", json_u64(p->kernels));
		SET(o, "memcpys", json_u64(p->copies));
		SET(o, "memsets", json_u64(p->memsets));
		SET(o, "syncs", json_u64(p->syncs));
		SET(o, "api_records", json_u64(p->api_records));
		SET(o, "kernels_joined", json_u64(p->joined));
		SET(o, "kernels_unjoined", json_u64(p->unjoined));
		SET(o, "causality_violations", json_u64(p->causality_violations));
		SET(o, "worst_violation_s", json_real(ns_to_s(p->worst_violation_ns)));
		SET(o, "launch_to_start_p50_s", json_real(ns_to_s(p->launch_to_start_p50_ns)));
		SET(o, "cupti_dropped", json_u64(p->cupti_dropped));
		SET(o, "cupti_failed", json_boolean(p->failed));
		SET(o, "windows", json_u64(p->windows));
		SET(o, "observed_s", json_real(ns_to_s(p->observed_ns)));
		SET(o, "span_s", json_real(ns_to_s(p->span_ns)));
		SET(o, "estimated", json_boolean(p->estimated));
		SET(o, "detaches", json_u64(p->detaches));
		SET(o, "detach_max_s", json_real(ns_to_s(p->detach_max_ns)));
		SET(o, "attach_max_s", json_real(ns_to_s(p->attach_max_ns)));
		SET(o, "drain_max_s", json_real(ns_to_s(p->drain_max_ns)));
		SET(o, "unfinished_records", json_u64(p->unfinished));
		SET(o, "busy_method", json_string(gpu_busy_method_name(p->busy_method)));
		SET(o, "window_launches", json_u64(p->window_launches));
		SET(o, "gap_launches", p->busy_method == GPU_BUSY_BY_LAUNCHES ? json_real(p->gap_launches) : json_null());
		SET(o, "gap_launches_seen", json_u64(p->gap_launches_seen));
		SET(o, "gap_probed_s", json_real(ns_to_s(p->gap_probed_ns)));
		SET(o, "cupti_error", p->failed ? json_integer(p->cupti_error) : json_null());
	}
	arr = json_array();
	SET(gpu, "kernels", arr);
	for (size_t i = 0; i < s->gpu_kernel_count; i++) {
		const struct gpu_kernel_stat *k = &s->gpu_kernels[i];

		o = json_object();
		APPEND(arr, o);
		SET(o, "pid", json_integer(k->pid));
		SET(o, "name", ev_text(k->name, SIZE_MAX));
		SET(o, "count", json_u64(k->count));
		SET(o, "total_s", json_real(ns_to_s(k->total_ns)));
		SET(o, "mean_s", json_real(ns_to_s(k->total_ns) / (double)k->count));
		SET(o, "min_s", json_real(ns_to_s(k->min_ns)));
		SET(o, "max_s", json_real(ns_to_s(k->max_ns)));
	}
	arr = json_array();
	SET(gpu, "memcpy", arr);
	for (size_t i = 0; i < s->gpu_copy_count; i++) {
		const struct gpu_copy_stat *c = &s->gpu_copies[i];

		o = json_object();
		APPEND(arr, o);
		SET(o, "pid", json_integer(c->pid));
		SET(o, "kind", json_string(copy_kind_name(c->copy_kind)));
		SET(o, "count", json_u64(c->count));
		SET(o, "bytes", json_u64(c->bytes));
		SET(o, "total_s", json_real(ns_to_s(c->total_ns)));
	}
	arr = json_array();
	SET(gpu, "streams", arr);
	for (size_t i = 0; i < s->gpu_stream_count; i++) {
		const struct gpu_stream_stat *t = &s->gpu_streams[i];

		o = json_object();
		APPEND(arr, o);
		SET(o, "pid", json_integer(t->pid));
		SET(o, "device", json_integer(t->device));
		SET(o, "stream", json_integer(t->stream));
		SET(o, "launches", json_u64(t->launches));
		SET(o, "kernels", json_u64(t->kernels));
		SET(o, "kernel_s", json_real(ns_to_s(t->kernel_ns)));
		SET(o, "memcpys", json_u64(t->copies));
		SET(o, "memcpy_bytes", json_u64(t->copy_bytes));
		SET(o, "memcpy_s", json_real(ns_to_s(t->copy_ns)));
		SET(o, "memsets", json_u64(t->memsets));
		SET(o, "memset_bytes", json_u64(t->memset_bytes));
		SET(o, "memset_s", json_real(ns_to_s(t->memset_ns)));
	}
	arr = json_array();
	SET(gpu, "devices", arr);
	for (size_t i = 0; i < s->gpu_device_count; i++) {
		const struct gpu_device_stat *d = &s->gpu_devices[i];

		o = json_object();
		APPEND(arr, o);
		SET(o, "pid", json_integer(d->pid));
		SET(o, "device", json_integer(d->device));
		SET(o, "busy_s", json_real(ns_to_s(d->busy_ns)));
		SET(o, "idle_fraction", json_real(d->idle_fraction));
		SET(o, "busy_estimated_s", json_real(ns_to_s(d->busy_est_ns)));
		SET(o, "estimated", json_boolean(d->estimated));
		SET(o, "idle_scale", json_real(d->idle_scale));
	}
	return gpu;
nomem:
	json_decref(gpu);
	return NULL;
}

static json_t *json_findings(const struct findings *fs)
{
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *fd = &fs->v[i];
		json_t *o = json_object();

		if (!o)
			goto nomem;
		SET(o, "rule", json_string(fd->rule));
		SET(o, "title", json_string(explain__rule_title(fd->rule)));
		SET(o, "severity", json_string(finding_severity_name(fd->severity)));
		SET(o, "cost_s", json_real(fd->cost_s));
		SET(o, "pid", json_u64(fd->pid));
		SET(o, "tid", json_u64(fd->tid));
		SET(o, "summary", ev_text(fd->summary, SIZE_MAX));
		SET(o, "evidence", json_deep_copy(fd->evidence));
		SET(o, "suggestion", ev_text(fd->suggestion, SIZE_MAX));
		if (json_array_append_new(arr, o))
			goto nomem;
		continue;
nomem:
		json_decref(o);
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *json_not_judged(const struct explain *ex)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < ex->findings.nnj; i++) {
		json_t *o = json_pack("{s:s, s:s}", "rule", ex->findings.nj[i].rule, "needs", ex->findings.nj[i].needs);

		if (!o || json_array_append_new(arr, o)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *json_causes(const __u64 ns[CAUSE_MAX])
{
	json_t *o = json_object();

	for (int c = 0; o && c < CAUSE_MAX; c++)
		if (json_object_set_new(o, cause_name((enum cause)c), json_real(ns_to_s(ns[c])))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

static json_t *json_categories(const struct tl_acc *acc)
{
	json_t *o = json_object();

	for (int c = 0; o && c < TL_CAT_MAX; c++)
		if (json_object_set_new(o, tl_cat_name((enum tl_cat)c), json_real(ns_to_s(acc->ns[c])))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* Per process: each device's busy and idle time by cause, each critical
 * thread's time by category (and, with GPU activity, its idle time by
 * cause), and the device memory it held when it exited. */
static json_t *json_metrics(const struct analysis *a)
{
	const struct attribution *at = a->ex->attr;
	json_t *root = json_object(), *procs = json_array();
	__u32 *pids;
	size_t npids = 0;

	pids = target_pids(a->r, &npids);
	if (!root || !procs || (!pids && npids))
		goto nomem;
	for (size_t p = 0; p < npids; p++) {
		const struct process_summary *ps = summary__process(a->sum, pids[p]);
		json_t *o = json_object(), *devs = json_array(), *thr = json_array();

		if (!o || !devs || !thr) {
			json_decref(o), json_decref(devs), json_decref(thr);
			goto nomem;
		}
		SET(o, "pid", json_u64(pids[p]));
		SET(o, "gpu_observed", json_boolean(attribution__gpu_observed(at, pids[p])));
		SET(o, "device_memory_held_at_exit_bytes", json_u64(ps ? ps->device_held_at_exit_bytes : 0));
		for (size_t i = 0; i < attribution__device_count(at); i++) {
			const struct attr_device *d = attribution__device_at(at, i);
			json_t *dv;
			__u64 idle = d->leading_ns;

			if (d->pid != pids[p])
				continue;
			for (int c = 0; c < CAUSE_MAX; c++)
				idle += d->idle_ns[c];
			dv = json_object();
			if (!dv || json_array_append_new(devs, dv))
				goto nomem_proc;
			SET(dv, "device", json_u64(d->device));
			SET(dv, "observed_s", json_real(ns_to_s(d->observed_ns)));
			SET(dv, "busy_s", json_real(ns_to_s(d->busy_ns)));
			SET(dv, "idle_s", json_real(ns_to_s(idle)));
			SET(dv, "busy_share", json_real(d->observed_ns ? (double)d->busy_ns / (double)d->observed_ns : 0));
			SET(dv, "before_first_work_s", json_real(ns_to_s(d->leading_ns)));
			SET(dv, "gaps", json_u64(d->gaps));
			SET(dv, "gaps_after_sync", json_u64(d->sync_drain_gaps));
			SET(dv, "idle_by_cause_s", json_causes(d->idle_ns));
			SET(dv, "span_s", json_real(ns_to_s(d->span_ns)));
			SET(dv, "estimated", json_boolean(d->estimated));
		}
		for (size_t i = 0; i < attribution__thread_count(at); i++) {
			const struct attr_thread *t = attribution__thread_at(at, i);
			json_t *to;

			if (t->pid != pids[p] || !t->critical)
				continue;
			to = json_object();
			if (!to || json_array_append_new(thr, to))
				goto nomem_proc;
			SET(to, "tid", json_u64(t->tid));
			SET(to, "launcher", json_boolean(t->launcher));
			SET(to, "window_s", json_real(ns_to_s(tl_acc__total(&t->window))));
			SET(to, "time_s", json_categories(&t->window));
			SET(to, "python_samples", json_u64(t->python_samples));
			SET(to, "samples", json_u64(t->samples));
			if (attribution__gpu_observed(at, pids[p]))
				SET(to, "gpu_idle_by_cause_s", json_causes(t->idle_ns));
		}
		SET(o, "devices", devs);
		SET(o, "threads", thr);
		if (json_array_append_new(procs, o))
			goto nomem;
		continue;
nomem_proc:
		json_decref(o);
		goto nomem;
	}
	free(pids);
	if (json_object_set_new(root, "processes", procs)) {
		json_decref(root);
		return NULL;
	}
	return root;
nomem:
	free(pids);
	json_decref(procs);
	json_decref(root);
	return NULL;
}

/* "ranks": one object per rank (ranks.h); [] without two ranks. */
static json_t *json_ranks(const struct ranks *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && r && i < r->nrows; i++) {
		const struct rank_row *w = &r->rows[i];
		json_t *o = json_object(), *calls = json_object(), *others = json_array(), *when = json_object();

		if (!o || !calls || !others || !when || json_array_append_new(arr, o)) {
			json_decref(o);
			json_decref(calls);
			json_decref(others);
			json_decref(when);
			json_decref(arr);
			return NULL;
		}
		json_object_set_new(o, "rank", json_integer(w->rank));
		json_object_set_new(o, "rank_from", json_string(w->rank_from));
		json_object_set_new(o, "world_size", json_integer(w->world_size));
		json_object_set_new(o, "local_rank", json_integer(w->local_rank));
		json_object_set_new(o, "recording", json_integer((json_int_t)w->source));
		json_object_set_new(o, "pid", json_integer(w->pid));
		json_object_set_new(o, "tid", json_integer(w->tid));
		for (__u16 f = 1; f < ISR_NCCL_FN_MAX; f++)
			if (w->calls[f])
				json_object_set_new(calls, nccl_func_name(f), json_u64(w->calls[f]));
		json_object_set_new(o, "calls", calls);
		json_object_set_new(o, "bytes", json_u64(w->bytes));
		json_object_set_new(o, "collectives", json_u64(w->collectives));
		json_object_set_new(o, "last_arrivals", json_u64(w->last));
		json_object_set_new(o, "late_arrivals", json_u64(w->late));
		json_object_set_new(o, "lateness_p50_s", json_real(w->lateness_p50_ns / 1e9));
		json_object_set_new(o, "lateness_p99_s", json_real(w->lateness_p99_ns / 1e9));
		json_object_set_new(o, "lateness_total_s", json_real(w->lateness_total_ns / 1e9));
		json_object_set_new(o, "first_rank_wait_s", json_real(w->late_ns / 1e9));
		json_object_set_new(o, "others_wait_s", json_real(w->waited_ns / 1e9));
		json_object_set_new(o, "gpu_busy_s", json_real(w->gpu_busy_ns / 1e9));
		json_object_set_new(o, "gpu_observed_s", json_real(w->gpu_observed_ns / 1e9));
		json_object_set_new(o, "sync_stall_s", json_real(w->sync_ns / 1e9));
		json_object_set_new(o, "nccl_gpu_s", json_real(w->nccl_gpu_ns / 1e9));
		json_object_set_new(o, "nccl_joined", json_u64(w->nccl_joined));
		json_object_set_new(o, "nccl_not_joined", json_u64(w->nccl_not_joined));
		json_object_set_new(o, "top_finding", w->top_rule ? json_string(w->top_rule) : json_null());
		for (int c = 0; c < TL_CAT_MAX; c++)
			if (w->when_late.ns[c])
				json_object_set_new(when, tl_cat_name((enum tl_cat)c), json_real(w->when_late.ns[c] / 1e9));
		json_object_set_new(o, "before_late_arrivals_s", when);
		when = json_object();
		for (int c = 0; when && c < TL_CAT_MAX; c++)
			if (w->when_on_time.ns[c])
				json_object_set_new(when, tl_cat_name((enum tl_cat)c), json_real(w->when_on_time.ns[c] / 1e9));
		json_object_set_new(o, "before_others_late_arrivals_s", when ? when : json_null());
		for (size_t k = 0; k < w->nothers; k++) {
			json_t *t = json_object();

			if (!t)
				break;
			json_object_set_new(t, "pid", json_integer(w->others[k].pid));
			json_object_set_new(t, "tid", json_integer(w->others[k].tid));
			json_object_set_new(t, "comm", ev_text(w->others[k].comm, sizeof(w->others[k].comm)));
			json_object_set_new(t, "process_comm",
					    ev_text(w->others[k].process_comm, sizeof(w->others[k].process_comm)));
			json_object_set_new(t, "seconds", json_real(w->others[k].ns / 1e9));
			json_array_append_new(others, t);
		}
		json_object_set_new(o, "cpu_taken_by_when_late", others);
	}
	return arr;
}

/* "collectives"."lined_up": every collective lined up, each rank's NCCL
 * kernel where it was joined (nccl.h). */
static json_t *json_lined_up(const struct ranks *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < r->ncolls; i++) {
		const struct ranks_collective *c = &r->colls[i];
		json_t *o = json_object(), *ranks = json_array();

		if (!o || !ranks || json_array_append_new(arr, o)) {
			json_decref(o);
			json_decref(ranks);
			break;
		}
		json_object_set_new(o, "communicator", json_integer((json_int_t)c->comm));
		json_object_set_new(o, "seq", json_u64(c->seq));
		json_object_set_new(o, "function", json_string(nccl_func_name(c->func)));
		for (size_t k = c->first; k < c->first + c->n; k++) {
			const struct ranks_member *m = &r->members[k];
			json_t *j = json_object();

			if (!j)
				break;
			json_object_set_new(j, "rank", json_integer(m->rank));
			json_object_set_new(j, "gpu_start_s", m->joined ? json_real(m->gpu_start_ns / 1e9) : json_null());
			json_object_set_new(j, "gpu_s", m->joined ? json_real(m->gpu_ns / 1e9) : json_null());
			json_object_set_new(j, "grouped", json_boolean(m->grouped));
			json_array_append_new(ranks, j);
		}
		json_object_set_new(o, "ranks", ranks);
	}
	return arr;
}

/* "collectives": the alignment and the communicators; null without two ranks. */
static json_t *json_collectives(const struct ranks *r)
{
	json_t *o, *comms, *clocks;

	if (!r)
		return json_null();
	o = json_object();
	comms = json_array();
	clocks = json_array();
	if (!o || !comms || !clocks) {
		json_decref(o);
		json_decref(comms);
		json_decref(clocks);
		return NULL;
	}
	json_object_set_new(o, "late_threshold_s", json_real(NCCL_LATE_NS / 1e9));
	json_object_set_new(o, "alignment_uncertainty_s", json_real(r->uncertainty_ns / 1e9));
	json_object_set_new(o, "unaligned", json_boolean(r->unaligned));
	for (size_t i = 0; i < r->nsources; i++) {
		json_t *c = json_object();

		if (!c)
			break;
		json_object_set_new(c, "recording", r->names[i] ? ev_text(r->names[i], SIZE_MAX) : json_null());
		json_object_set_new(c, "realtime_offset_s", json_real(r->clocks[i].offset_ns / 1e9));
		json_object_set_new(c, "uncertainty_s", json_real(r->clocks[i].uncertainty_ns / 1e9));
		json_object_set_new(c, "clock_pairs", json_u64(r->clocks[i].pairs));
		json_array_append_new(clocks, c);
	}
	json_object_set_new(o, "clocks", clocks);
	for (size_t i = 0; i < r->ncomms; i++) {
		const struct ranks_comm *c = &r->comms[i];
		json_t *j = json_object(), *calls = json_object();
		char id[24];

		if (!j || !calls) {
			json_decref(j);
			json_decref(calls);
			break;
		}
		snprintf(id, sizeof(id), "%016llx", (unsigned long long)c->id_hash);
		json_object_set_new(j, "id_hash", c->id_hash ? json_string(id) : json_null());
		json_object_set_new(j, "ranks", json_integer(c->nranks));
		json_object_set_new(j, "size", json_integer(c->size));
		json_object_set_new(j, "collectives", json_u64(c->collectives));
		for (__u16 f = 1; f < ISR_NCCL_FN_MAX; f++)
			if (c->calls[f])
				json_object_set_new(calls, nccl_func_name(f), json_u64(c->calls[f]));
		json_object_set_new(j, "calls", calls);
		json_object_set_new(j, "bytes_per_rank", json_u64(c->bytes));
		json_object_set_new(j, "spread_s", json_real(c->spread_ns / 1e9));
		json_object_set_new(j, "others_wait_s", json_real(c->straggler_waits_ns / 1e9));
		json_object_set_new(j, "late", json_u64(c->late));
		json_array_append_new(comms, j);
	}
	json_object_set_new(o, "communicators", comms);
	json_object_set_new(o, "lined_up", json_lined_up(r));
	return o;
}

/* The report of one recording (docs/report-json.md); NULL when out of memory. */
static json_t *json_report(const struct analysis *a)
{
	const struct recording *r = a->r;
	const struct summary *s = a->sum;
	json_t *root = json_object();

	if (!root)
		return NULL;
	SET(root, "schema_version", json_integer(REPORT_SCHEMA_VERSION));
	SET(root, "recording", json_recording(a));
	SET(root, "findings", json_findings(&a->ex->findings));
	SET(root, "verdict", a->ex->verdict[0] ? ev_text(a->ex->verdict, sizeof(a->ex->verdict)) : json_null());
	SET(root, "not_judged", json_not_judged(a->ex));
	SET(root, "metrics", json_metrics(a));
	SET(root, "event_counts", json_event_counts(s));
	SET(root, "processes", json_processes(r, s));
	SET(root, "process_tree", json_process_tree(r, s));
	SET(root, "threads", json_threads(s, a->py));
	SET(root, "cuda", json_cuda(s));
	SET(root, "gpu", json_gpu(s));
	SET(root, "python", json_python(a->py));
	SET(root, "steps", steps_report__json(steps__result(a->ex->steps)));
	SET(root, "ranks", json_ranks(a->ranks));
	SET(root, "collectives", json_collectives(a->ranks));
	return root;
nomem:
	json_decref(root);
	return NULL;
}

static int json_write(FILE *f, json_t *root)
{
	int err = 0;

	if (!root)
		return -ENOMEM;
	if (json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) || fputc('\n', f) == EOF ||
	    fflush(f) == EOF || ferror(f))
		err = -EIO;
	json_decref(root);
	return err;
}

int report__write_json(FILE *f, const struct analysis *a)
{
	return json_write(f, json_report(a));
}

/* "5 findings, first "GPU drained by synchronizations" (sync_stall, 0.325 s)" */
static void set_findings_phrase(FILE *f, const struct findings *fs)
{
	const struct finding *first = &fs->v[0];

	fprintf(f, "%zu finding%s, first \"%s\" (%s", fs->n, fs->n == 1 ? "" : "s", explain__rule_title(first->rule),
		first->rule);
	if (first->cost_s > 0)
		fprintf(f, ", %.3f s", first->cost_s);
	fprintf(f, ")");
}

char *report__set_headline(const struct analysis_set *set)
{
	char *out = NULL;
	size_t len = 0, with = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		with += set->a[i]->ex->findings.n > 0;
	if (set->findings.n) {
		fprintf(f, "Across the recordings: ");
		set_findings_phrase(f, &set->findings);
		fprintf(f, ". ");
	}
	if (!with) {
		fprintf(f, "No finding in any of the %zu recordings%s.", set->n, set->findings.n ? "" : ", nor across them");
	} else {
		fprintf(f, "Findings in %zu of %zu recordings: ", with, set->n);
		for (size_t i = 0; i < set->n; i++) {
			const struct findings *fs = &set->a[i]->ex->findings;

			fprintf(f, "%s%s has ", i ? "; " : "", set->names[i]);
			if (fs->n)
				set_findings_phrase(f, fs);
			else
				fprintf(f, "none");
		}
		fprintf(f, ".");
	}
	if (fclose(f) || !out) {
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

int report__write_json_set(FILE *f, const struct analysis_set *set)
{
	json_t *root = json_object(), *recs = json_array();
	char *headline = report__set_headline(set);

	if (!root || !recs || !headline) {
		json_decref(recs);
		goto nomem;
	}
	SET(root, "schema_version", json_integer(REPORT_SET_SCHEMA_VERSION));
	SET(root, "headline", ev_text(headline, SIZE_MAX));
	SET(root, "findings", json_findings(&set->findings));
	SET(root, "ranks", json_ranks(set->ranks));
	SET(root, "collectives", json_collectives(set->ranks));
	SET(root, "recordings", recs);
	for (size_t i = 0; i < set->n; i++) {
		json_t *o = json_object();

		if (!o || json_array_append_new(recs, o))
			goto nomem;
		SET(o, "file", ev_text(set->names[i], SIZE_MAX));
		SET(o, "report", json_report(set->a[i]));
	}
	free(headline);
	return json_write(f, root);
nomem:
	free(headline);
	json_decref(root);
	return -ENOMEM;
}

/* Markdown output: every write goes through md__printf, which remembers
 * the first failure so the writer can report it once at the end. */
struct md {
	FILE *f;
	int err;
	const struct py_report *py;	/* names the Python threads (tasks.h, task_name__format) */
	const struct summary *sum;
};


__attribute__((format(printf, 2, 3)))
static void md__printf(struct md *m, const char *fmt, ...)
{
	va_list ap;

	if (m->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(m->f, fmt, ap) < 0)
		m->err = -EIO;
	va_end(ap);
}

/* Text in a table cell or a sentence (lib/text.h). */
static void md__text(struct md *m, const char *s, size_t maxlen)
{
	if (!m->err)
		m->err = text__write(m->f, s, maxlen, TEXT_MD);
}

/* A thread's name as the report shows it: its name and, for a Python
 * thread the name does not tell, its entry. */
static void md__thread(struct md *m, __u32 pid, __u32 tid, const char *comm)
{
	char name[TASK_NAME_LEN];

	task_name__format(name, sizeof(name), comm, summary__process_name(m->sum, pid),
			  py_report__thread_entry(m->py, pid, tid));
	md__text(m, name, sizeof(name));
}

/* A finding's prose: like md__text, but its `code spans` stay (the rules
 * keep backticks out of the names they quote). */
static void md__prose(struct md *m, const char *s)
{
	if (!m->err)
		m->err = text__write(m->f, s, SIZE_MAX, TEXT_MD_PROSE);
}

/* One line of a code block: no name ends it or the block. */
static void md__code_line(struct md *m, const char *s, size_t maxlen)
{
	md__printf(m, "    ");
	if (!m->err)
		m->err = text__write(m->f, s, maxlen, TEXT_MD_CODE);
	md__printf(m, "\n");
}

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

static const char *stop_reason_text(__u32 reason)
{
	switch (reason) {
	case ISR_STOP_DURATION:
		return "the requested duration elapsed";
	case ISR_STOP_SIGNAL:
		return "interrupted (SIGINT or SIGTERM)";
	case ISR_STOP_TARGETS_EXITED:
		return "every target exited";
	case ISR_STOP_WRITE_ERROR:
		return "the recorder could not write (disk full or failing)";
	case ISR_STOP_FLIGHT_TRIGGER:
		return "a flight-recorder window, written at a trigger (recording went on)";
	default:
		return NULL;
	}
}

/* The host's NVIDIA GPUs and NUMA nodes, one line each kind. */
static void md__host_topo(struct md *m, const struct recording *r)
{
	struct host_topo t;

	if (host_topo__decode(&r->host, &t)) {
		m->err = -ENOMEM;
		return;
	}
	if (t.ngpus)
		md__printf(m, "- **GPUs:** ");
	for (size_t i = 0; i < t.ngpus; i++) {
		const struct isr_host_gpu *g = &t.gpus[i].g;
		__u32 mts;
		__u16 width;
		double bps = host_gpu__link_bytes_per_s(g, &mts, &width);

		md__printf(m, "%s", i ? "; " : "");
		md__text(m, g->pci_address, sizeof(g->pci_address));
		if (bps && host_topo__pcie_gen(mts))
			md__printf(m, " PCIe Gen%u x%u (%.1f GB/s each way", host_topo__pcie_gen(mts), width, bps / 1e9);
		else if (bps)
			md__printf(m, " PCIe x%u at %.1f GT/s (%.1f GB/s each way", width, mts / 1000.0, bps / 1e9);
		else
			md__printf(m, " PCIe link unknown (");
		md__printf(m, "; %.1f GT/s x%u when recording began)", g->link_speed_mts / 1000.0, g->link_width);
		if (g->numa_node >= 0)
			md__printf(m, ", NUMA node %d", g->numa_node);
		if (t.gpus[i].cpus[0]) {
			md__printf(m, ", local CPUs ");
			md__text(m, t.gpus[i].cpus, SIZE_MAX);
		}
	}
	if (t.ngpus)
		md__printf(m, "\n");
	if (t.nnodes > 1) {
		md__printf(m, "- **NUMA:** ");
		for (size_t i = 0; i < t.nnodes; i++) {
			md__printf(m, "%snode %u: CPUs ", i ? "; " : "", t.nodes[i].node);
			md__text(m, t.nodes[i].cpus[0] ? t.nodes[i].cpus : "none", SIZE_MAX);
			if (t.nodes[i].memory_bytes)
				md__printf(m, ", %.1f GiB", (double)t.nodes[i].memory_bytes / (1ull << 30));
			for (size_t k = 0; k < t.nodes[i].ndist; k++)
				if (t.nodes[i].dist[k].node != t.nodes[i].node)
					md__printf(m, ", distance %u to node %u", t.nodes[i].dist[k].distance,
						   t.nodes[i].dist[k].node);
		}
		md__printf(m, "\n");
	}
	host_topo__free(&t);
}

/* The targets as a tree: each child under its parent, with its role
 * when its names tell (analysis/proc_tree.h). */
static void md__process_tree(struct md *m, const struct recording *r, const struct summary *s)
{
	struct proc_tree t;

	if (proc_tree__build(r, s, &t)) {
		proc_tree__free(&t);
		m->err = m->err ?: -ENOMEM;
		return;
	}
	md__printf(m, "- **Targets:**%s", t.count ? "" : " none recorded\n");
	if (t.count)
		md__printf(m, " %zu process%s%s", t.count, t.count == 1 ? "" : "es",
			   t.count > t.roots ? " (a child under its parent)" : "");
	if (t.folded)
		md__printf(m, ", %zu short-lived folded", t.folded);
	if (t.wrappers)
		md__printf(m, ", %zu wrapper%s folded", t.wrappers, t.wrappers == 1 ? "" : "s");
	if (t.count)
		md__printf(m, "\n");
	for (size_t i = 0; i < t.count; i++) {
		const struct proc_node *n = &t.nodes[i];
		int indent = 2 + 2 * (int)(n->shown_depth < 16 ? n->shown_depth : 16);

		if (n->short_lived || n->wrapper)
			continue;
		md__printf(m, "%*s- pid %u (", indent, "", n->pid);
		md__text(m, or_unknown(n->comm), 16);
		md__printf(m, ", %s", origin_name(n->origin));
		if (n->role)
			md__printf(m, "; %s", proc_role__text(n->role));
		if (n->children)
			md__printf(m, "; %zu child%s traced", n->children, n->children == 1 ? "" : "ren");
		md__printf(m, "; %zu thread%s, %.2f s on CPU): ", n->threads, n->threads == 1 ? "" : "s",
			   ns_to_s(n->on_cpu_ns));
		md__text(m, n->p->cmdline && *n->p->cmdline ? n->p->cmdline : "(no command line)", SIZE_MAX);
		if (n->latest != n->p) {
			md__printf(m, " → exec: ");
			md__text(m, n->latest->cmdline && *n->latest->cmdline ? n->latest->cmdline : "(no command line)",
				 SIZE_MAX);
		}
		md__printf(m, "\n");
		if (n->wrappers) {
			md__printf(m, "%*s- started through %zu wrapper%s, folded (each only started the next, in one "
				      "thread, at most %.2f s on CPU, no CUDA): ", indent + 2, "", n->wrappers,
				   n->wrappers == 1 ? "" : "s", PROC_TREE_WRAPPER_CPU_NS / 1e9);
			md__text(m, n->wrapper_names, sizeof(n->wrapper_names));
			md__printf(m, "\n");
		}
		if (n->folded) {
			md__printf(m, "%*s- %zu short-lived process%s folded (each began and ended within %.1f s, "
				      "no CUDA): ", indent + 2, "", n->folded, n->folded == 1 ? "" : "es",
				   PROC_TREE_SHORT_NS / 1e9);
			md__text(m, n->folded_names, sizeof(n->folded_names));
			md__printf(m, "\n");
		}
	}
	proc_tree__free(&t);
}

/* What the kinds of the account are, in prose (ISR_SPENT_* order). */
static const char *const spent_text[ISR_SPENT_MAX] = {
	"CUDA hot-path probe hits", "other probe hits", "Python stack captures", "sampler ticks", "page-fault tracing",
	"scheduler tracing", "waiting for the recorder's CPU", "CUPTI in GPU windows",
};

/* What tracing cost the busiest thread, against the budget. */
static void md__overhead(struct md *m, const struct summary *s)
{
	const struct sampling_overhead *o = &s->sampling.overhead;
	const struct thread_summary *t;
	double sum = 0, secs = ns_to_s(o->traced_ns);
	bool first = true;

	if (!o->spent_known)
		return;
	for (int k = 0; k < ISR_SPENT_MAX; k++)
		sum += (double)o->busiest_ns[k];
	t = summary__thread(s, o->busiest_pid, o->busiest_tid);
	md__printf(m, "- **Tracing cost (estimated):** %.1f ms, %.2f%% of the %.3f s its busiest thread was on a CPU "
		   "in %.3f s (thread %u", sum / 1e6, o->busiest_oncpu_ns ? 100 * sum / (double)o->busiest_oncpu_ns : 0,
		   ns_to_s(o->busiest_oncpu_ns), secs, o->busiest_tid);
	if (t && t->comm[0]) {
		md__printf(m, " `");
		md__text(m, t->comm, sizeof(t->comm));
		md__printf(m, "`");
	}
	md__printf(m, ")");
	if (o->allowed_ns)
		md__printf(m, ", %s the %.3g%% budget (%.1f ms charged of the %.1f ms it allowed)",
			   o->spent_ns <= o->allowed_ns ? "within" : "over", s->sampling.budget_pct, o->spent_ns / 1e6,
			   o->allowed_ns / 1e6);
	else
		md__printf(m, ", no budget");
	for (int k = 0; k < ISR_SPENT_MAX; k++) {
		if (o->busiest_ns[k] < 1000)
			continue;
		md__printf(m, "%s %s %.1f ms", first ? ":" : ",", spent_text[k], o->busiest_ns[k] / 1e6);
		first = false;
	}
	md__printf(m, "; the tracer is pid %u\n", o->tracer_pid);
}

static void md__header(struct md *m, const struct recording *r, const struct summary *s)
{
	const char *stop = stop_reason_text(r->stop_reason);
	char when[64];

	md__printf(m, "# inferscope-bpf report\n\n");
	md__printf(m, "- **Host:** ");
	md__text(m, or_unknown(r->host.hostname), SIZE_MAX);
	md__printf(m, ", Linux ");
	md__text(m, or_unknown(r->host.kernel), SIZE_MAX);
	md__printf(m, " (");
	md__text(m, or_unknown(r->host.machine), SIZE_MAX);
	md__printf(m, "), %u CPUs\n", r->host.ncpus);
	md__host_topo(m, r);
	md__printf(m, "- **Recorded:** %.3f s from %s\n", s->duration_s,
		   start_time(r, s, when, sizeof(when)) ? when : "an unknown wall-clock time");
	if (stop)
		md__printf(m, "- **Stopped:** %s\n", stop);
	else if (r->truncated)
		md__printf(m, "- **Stopped:** unknown (the recording is truncated)\n");
	else
		md__printf(m, "- **Stopped:** unknown (reason %u)\n", r->stop_reason);
	md__overhead(m, s);
	if (r->host.trigger) {
		md__printf(m, "- **Flight-recorder window:** the last %.3f s before its trigger: ", s->duration_s);
		md__text(m, r->host.trigger, SIZE_MAX);
		md__printf(m, "\n");
	}
	md__process_tree(m, r, s);
	md__printf(m, "\n");
}

/* What a drop of each source costs the analysis, and what avoids it. */
static const char *const drop_advice[ISR_SRC_MAX] = {
	[ISR_SRC_SCHED] = "scheduler events lost, on/off-CPU times of the affected threads are "
			  "wrong: increase --ringbuf-size (default 32 MiB) or trace fewer targets",
	[ISR_SRC_FAULTS] = "page-fault events lost, fault counts are too low: increase "
			   "--ringbuf-size (default 32 MiB) or trace fewer targets",
	[ISR_SRC_PROC] = "fork/exec/exit/rename events lost, thread lifetimes and names may be "
			 "wrong: the recorder fell behind; trace fewer targets",
	[ISR_SRC_FAULT_START] = "faults seen without their start (too many in flight at once): "
				"fault times are too low",
	[ISR_SRC_TARGETS] = "child processes that could not be traced: more than "
			    "4096 target processes",
	[ISR_SRC_CUDA] = "CUDA call events lost, call counts, launches, sync times and memory are "
			 "incomplete: increase --ringbuf-size (default 32 MiB)",
	[ISR_SRC_CUDA_INFLIGHT] = "CUDA calls whose entry could not be kept until their return (too "
				  "many calls in flight at once): their duration and status are unknown",
	[ISR_SRC_WRITER] = "events the recorder could not write to the file: free disk space",
	[ISR_SRC_PYTHON] = "GIL events lost, GIL wait and hold times are incomplete: increase "
			   "--ringbuf-size (default 32 MiB)",
	[ISR_SRC_GPU] = "GPU activity records (kernels, copies) lost on their way from the CUPTI "
			"bridge: increase --ringbuf-size (default 32 MiB)",
	[ISR_SRC_CUPTI] = "GPU activity records CUPTI itself dropped (its buffers were full): GPU "
			  "kernel and copy counts are too low",
	[ISR_SRC_PY_STACKS] = "Python stacks lost, sampled shares and CUDA call sites are "
			      "incomplete: increase --ringbuf-size (default 32 MiB) or lower --py-stacks",
	[ISR_SRC_PY_CODE] = "Python code objects the recorder could not read (their process exited or "
			    "freed them first): their frames have no file and line",
	[ISR_SRC_RECLAIM] = "direct-reclaim events lost, reclaim times are too low: increase "
			    "--ringbuf-size (default 32 MiB) or trace fewer targets",
	[ISR_SRC_NVTX] = "NVTX ranges and marks lost, steps are incomplete: increase --ringbuf-size "
			 "(default 32 MiB)",
};

static void md__warnings(struct md *m, const struct analysis *a)
{
	const struct recording *r = a->r;
	const struct summary *s = a->sum;
	char notes[MAX_NOTES][NOTE_LEN];
	size_t n = analysis_notes(a, notes, MAX_NOTES);

	if (r->truncated) {
		md__printf(m, "> **WARNING: the recording is truncated** (");
		md__text(m, r->truncation[0] ? r->truncation : "no reason recorded",
			 sizeof(r->truncation));
		md__printf(m, "): events after that point are lost.\n\n");
	}
	for (size_t i = 0; i < n; i++)
		md__printf(m, "> **WARNING:** %s.\n\n", notes[i]);
	if (!s->drops_total)
		return;
	md__printf(m, "> **WARNING: %" PRIu64 " events were dropped** and are missing from "
		      "this report:\n", (uint64_t)s->drops_total);
	for (__u32 i = 0; i < ISR_SRC_MAX; i++) {
		const char *name = isr_source_name(i);

		if (!s->drops[i])
			continue;
		md__printf(m, "> - %s: %" PRIu64 " (%s)\n", name ? name : "unknown source",
			   (uint64_t)s->drops[i], drop_advice[i]);
	}
	md__printf(m, "\n");
}

/* What the windows tell of how much the probes slowed a process: a
 * slowdown only with its confidence interval, and only applied when the
 * data support it (analysis/sampling.h). */
static void md__slowdown(struct md *m, const struct sampling_process *p)
{
	double lo = 100 * (p->slowdown_lo - 1), hi = 100 * (p->slowdown_hi - 1);

	switch (p->slowdown_status) {
	case SAMPLING_SLOWDOWN_APPLIED:
		md__printf(m, "> Process %u ran %.1f%% slower while its hot path was probed (95%% confidence interval "
			      "%+.1f%% to %+.1f%%, from the rate of its synchronizations and other always-probed calls: "
			      "%" PRIu64 " in %zu windows, %" PRIu64 " in %zu gaps): its estimates are corrected for it.\n\n",
			   p->pid, 100 * (p->slowdown_measured - 1), lo, hi, (uint64_t)p->slowdown_calls_windows,
			   p->slowdown_windows, (uint64_t)p->slowdown_calls_gaps, p->slowdown_gaps);
		break;
	case SAMPLING_SLOWDOWN_NONE:
		md__printf(m, "> Process %u: no slowdown measurable while its hot path was probed (%+.1f%%, 95%% "
			      "confidence interval %+.1f%% to %+.1f%%, from %" PRIu64 " always-probed calls in %zu windows "
			      "and %" PRIu64 " in %zu gaps): its estimates are not corrected.\n\n", p->pid,
			   100 * (p->slowdown_measured - 1), lo, hi, (uint64_t)p->slowdown_calls_windows,
			   p->slowdown_windows, (uint64_t)p->slowdown_calls_gaps, p->slowdown_gaps);
		break;
	case SAMPLING_SLOWDOWN_IMPLAUSIBLE:
		md__printf(m, "> Process %u called its always-probed functions at a rate %+.1f%% different outside the "
			      "windows (95%% confidence interval %+.1f%% to %+.1f%%): %s, so its pace changed for "
			      "another reason (the job's phases); its estimates are not corrected.\n\n", p->pid,
			   100 * (p->slowdown_measured - 1), lo, hi, p->slowdown_hi < 1 ?
			   "faster while probed, which probes cannot cause" : "more than the probes can cost");
		break;
	default:
		md__printf(m, "> Process %u: too few windows, gaps or always-probed calls (%" PRIu64 " in %zu windows, "
			      "%" PRIu64 " in %zu gaps; at least 20 in 2 of each are needed) to tell whether the probes "
			      "slowed it: its estimates are not corrected.\n\n", p->pid,
			   (uint64_t)p->slowdown_calls_windows, p->slowdown_windows, (uint64_t)p->slowdown_calls_gaps,
			   p->slowdown_gaps);
		break;
	}
}

/* Sampled counts are estimates: say so before any table shows one. */
static void md__sampling(struct md *m, const struct summary *s)
{
	const struct sampling *sm = &s->sampling;

	if (sm->faults_sampled)
		md__printf(m, "> **Sampled:** page-fault tracing would have cost more than the %.3g%% overhead budget, so "
			      "it was on %.1f%% of the time, in %zu windows. Fault counts and times marked ≈ are "
			      "extrapolated over each thread's life from those windows (`--budget off` traces every "
			      "fault).\n\n",
			   sm->budget_pct, 100 * sm->faults_coverage, sm->fault_windows);
	if (!sm->sampled)
		return;
	md__printf(m, "> **Sampled:** the CUDA hot path (launches, async copies, memsets) would have cost more "
		      "than the %.3g%% overhead budget (one probe hit: %.2f µs), so its probes were on %.1f%% of "
		      "the time, in %zu windows. Counts marked ≈ are estimates extrapolated from those windows "
		      "(`--budget off` traces every call).\n\n",
		   sm->budget_pct, sm->hit_cost_ns / 1e3, 100 * sm->coverage, sm->windows);
	for (size_t i = 0; i < sm->proc_count; i++)
		md__slowdown(m, &sm->procs[i]);
}

static int by_on_cpu_desc(const void *a, const void *b)
{
	const struct thread_summary *x = *(const struct thread_summary *const *)a;
	const struct thread_summary *y = *(const struct thread_summary *const *)b;

	if (x->on_cpu_ns != y->on_cpu_ns)
		return x->on_cpu_ns > y->on_cpu_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* A thread that did nothing worth a row: under 1 ms on a CPU, and nothing
 * of interest (no fault, CUDA call, GIL wait or run-queue wait). */
static bool idle_thread(const struct thread_summary *t)
{
	return t->on_cpu_ns < IDLE_THREAD_NS && !t->minor_faults && !t->major_faults && !t->cuda_calls &&
	       !t->gil_wait_ns && !t->gil_acquisitions && t->runqueue_wait_ns < IDLE_THREAD_NS;
}

static void md__threads(struct md *m, const struct thread_summary *const *order, size_t n)
{
	size_t shown = 0, idle = 0, more = 0;

	md__printf(m, "## Threads\n\n");
	if (!n) {
		md__printf(m, "No target threads were seen.\n\n");
		return;
	}
	md__printf(m, "Sorted by on-CPU time. Blocked is off-CPU time not spent waiting for a "
		      "CPU; in brackets, the part in uninterruptible sleep (D state, usually I/O).\n\n");
	md__printf(m, "| pid | tid | comm | on-CPU s | off-CPU s | run-queue wait s | blocked s (D-state I/O) "
		      "| faults minor/major | fault time s |\n");
	md__printf(m, "|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		const struct thread_summary *t = order[i];

		if (idle_thread(t)) {
			idle++;
			continue;
		}
		if (shown == TOP_THREADS) {
			more++;
			continue;
		}
		shown++;
		md__printf(m, "| %u | %u | ", t->pid, t->tid);
		md__thread(m, t->pid, t->tid, t->comm);
		md__printf(m, " | %.3f | %.3f | %.3f | %.3f (%.3f) | %s%" PRIu64 "/%" PRIu64 " | %s%.3f |\n",
			   ns_to_s(t->on_cpu_ns), ns_to_s(t->off_cpu_ns), ns_to_s(t->runqueue_wait_ns),
			   ns_to_s(blocked_ns(t)), ns_to_s(t->blocked_io_ns), t->faults_estimated ? "≈" : "",
			   (uint64_t)t->minor_faults, (uint64_t)t->major_faults, t->faults_estimated ? "≈" : "",
			   ns_to_s(t->fault_ns));
	}
	if (more)
		md__printf(m, "\n… %zu more threads (all of them are in the JSON report)\n", more);
	if (idle)
		md__printf(m, "\n%zu thread%s did nothing worth a row (under 1 ms on a CPU, no fault, CUDA call or "
			      "GIL wait): all of them are in the JSON report.\n", idle, idle == 1 ? "" : "s");
	md__printf(m, "\n");
}

static void md__event_counts(struct md *m, const struct summary *s)
{
	__u64 known = 0;

	md__printf(m, "## Event counts\n\n| event | count |\n|---|---:|\n");
	for (__u16 t = 1; t < ISR_EV_TYPE_MAX; t++) {
		const char *name = isr_event_name(t);

		if (!s->event_counts[t] || counted_by_function(t))
			continue;
		known += s->event_counts[t];
		md__printf(m, "| %s | %" PRIu64 " |\n", name ? name : "unknown",
			   (uint64_t)s->event_counts[t]);
	}
	for (size_t i = 0; i < s->cuda_fn_count; i++) {
		const struct cuda_fn_summary *f = &s->cuda_fns[i];

		if (!(f->calls + f->names))
			continue;
		known += f->calls + f->names;
		md__printf(m, "| %s | %" PRIu64 " |\n", f->name, (uint64_t)(f->calls + f->names));
	}
	for (int i = 0; i < 2; i++) {
		if (!gil_fn_count(s, i))
			continue;
		known += gil_fn_count(s, i);
		md__printf(m, "| %s | %" PRIu64 " |\n", gil_fn_names[i], (uint64_t)gil_fn_count(s, i));
	}
	if (s->event_total > known)
		md__printf(m, "| types unknown to this version | %" PRIu64 " |\n",
			   (uint64_t)(s->event_total - known));
	md__printf(m, "| **total** | %" PRIu64 " |\n\n", (uint64_t)s->event_total);
}

/* Moves the threads matching `keep` to the front of order, sorted by cmp;
 * returns how many matched. */
static size_t select_threads(const struct thread_summary **order, size_t n,
			     bool (*keep)(const struct thread_summary *),
			     int (*cmp)(const void *, const void *))
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (keep(order[i])) {
			const struct thread_summary *t = order[k];

			order[k++] = order[i];
			order[i] = t;
		}
	}
	qsort(order, k, sizeof(*order), cmp);
	return k;
}

static bool has_cuda(const struct summary *s)
{
	return s->event_counts[ISR_EV_CUDA_CALL] || s->event_counts[ISR_EV_CUDA_NAME];
}

static const char *recorded_comm(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->process_count; i++)
		if (r->processes[i].pid == pid && r->processes[i].comm)
			return r->processes[i].comm;
	return "?";
}

static __u64 process_failed(const struct process_summary *p)
{
	__u64 n = 0;

	for (size_t i = 0; i < p->failed_count; i++)
		n += p->failed[i].count;
	return n;
}

static void md__cuda_memory(struct md *m, const struct recording *r, const struct summary *s)
{
	__u64 unknown = 0;

	md__printf(m, "### Memory by process\n\nLive: still allocated at the end of the recording "
		      "(nothing once the process has exited). Peak: the most allocated at any time "
		      "during the recording.\n\n");
	md__printf(m, "| pid | comm | device live MiB | device peak MiB | pinned host live MiB "
		      "| pinned host peak MiB | failed calls |\n|---:|---|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < s->process_count; i++) {
		const struct process_summary *p = &s->processes[i];

		md__printf(m, "| %u | ", p->pid);
		md__text(m, recorded_comm(r, p->pid), SIZE_MAX);
		md__printf(m, " | %.1f | %.1f | %.1f | %.1f | %" PRIu64 " |\n",
			   (double)p->device_live_bytes / MIB, (double)p->device_peak_bytes / MIB,
			   (double)p->pinned_host_live_bytes / MIB, (double)p->pinned_host_peak_bytes / MIB,
			   (uint64_t)process_failed(p));
		unknown += p->unknown_frees;
	}
	md__printf(m, "\n");
	if (unknown)
		md__printf(m, "%" PRIu64 " free%s of memory allocated before the recording began "
			      "could not be sized; live and peak count only memory allocated while "
			      "recording.\n\n", (uint64_t)unknown, unknown == 1 ? "" : "s");
}

static int fn_by_calls_desc(const void *a, const void *b)
{
	const struct cuda_fn_summary *x = *(const struct cuda_fn_summary *const *)a;
	const struct cuda_fn_summary *y = *(const struct cuda_fn_summary *const *)b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static int fn_by_time_desc(const void *a, const void *b)
{
	const struct cuda_fn_summary *x = *(const struct cuda_fn_summary *const *)a;
	const struct cuda_fn_summary *y = *(const struct cuda_fn_summary *const *)b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return fn_by_calls_desc(a, b);
}

static void md__cuda_functions(struct md *m, const struct summary *s,
			       const struct cuda_fn_summary **fns)
{
	size_t n = 0;

	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].calls)
			fns[n++] = &s->cuda_fns[i];
	qsort(fns, n, sizeof(*fns), fn_by_calls_desc);
	md__printf(m, "### Functions by calls\n\n| function | calls | failed |\n|---|---:|---:|\n");
	for (size_t i = 0; i < n && i < TOP_CUDA_ROWS; i++)
		md__printf(m, "| %s | %s%" PRIu64 " | %" PRIu64 " |\n", fns[i]->name, fns[i]->estimated ? "≈" : "",
			   (uint64_t)fns[i]->calls, (uint64_t)fns[i]->failed);
	md__printf(m, "\n");

	n = 0;
	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].returned)
			fns[n++] = &s->cuda_fns[i];
	if (!n)
		return;
	qsort(fns, n, sizeof(*fns), fn_by_time_desc);
	md__printf(m, "### Functions by time\n\nCalls whose return is probed (synchronization, "
		      "synchronous copies, memory management, kernel lookup), from entry to return."
		      "\n\n| function | total s | timed calls | mean ms | max ms |\n|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n && i < TOP_CUDA_ROWS; i++)
		md__printf(m, "| %s | %.3f | %" PRIu64 " | %.3f | %.3f |\n", fns[i]->name,
			   ns_to_s(fns[i]->total_ns), (uint64_t)fns[i]->returned,
			   (double)fns[i]->total_ns / (double)fns[i]->returned / 1e6,
			   (double)fns[i]->max_ns / 1e6);
	md__printf(m, "\n");
}

static void md__cuda_kernels(struct md *m, const struct summary *s)
{
	if (!s->kernel_count)
		return;
	md__printf(m, "### Kernels by launches\n\n| kernel | pid | launches |\n|---|---:|---:|\n");
	for (size_t i = 0; i < s->kernel_count && i < TOP_CUDA_ROWS; i++) {
		const struct kernel_summary *k = &s->kernels[i];

		md__printf(m, "| ");
		md__text(m, k->name, SIZE_MAX);
		md__printf(m, " | %u | %s%" PRIu64 " |\n", k->pid, k->estimated ? "≈" : "", (uint64_t)k->launches);
	}
	if (s->kernel_count > TOP_CUDA_ROWS)
		md__printf(m, "\n… %zu more kernels (the top %d are in the JSON report)\n",
			   s->kernel_count - TOP_CUDA_ROWS, TOP_KERNELS_JSON);
	md__printf(m, "\n");
}

/* "cuCtxSynchronize_v2/cuStreamSynchronize": where the thread's sync time went. */
static void md__sync_fns(struct md *m, const struct summary *s, const struct thread_summary *t)
{
	for (int i = 0; i < SUMMARY_SYNC_FNS && t->cuda_sync_fns[i]; i++)
		md__printf(m, "%s%s", i ? "/" : "", summary__cuda_fn_name(s, t->cuda_sync_fns[i]));
}

static double share_of_window(__u64 ns, const struct thread_summary *t)
{
	__u64 window = t->end_ns - t->start_ns;

	return window ? 100.0 * (double)ns / (double)window : 0.0;
}

static bool calls_cuda(const struct thread_summary *t)
{
	return t->cuda_calls > 0;
}

static int by_sync_desc(const void *a, const void *b)
{
	const struct thread_summary *x = *(const struct thread_summary *const *)a;
	const struct thread_summary *y = *(const struct thread_summary *const *)b;

	if (x->cuda_sync_ns != y->cuda_sync_ns)
		return x->cuda_sync_ns > y->cuda_sync_ns ? -1 : 1;
	if (x->cuda_calls != y->cuda_calls)
		return x->cuda_calls > y->cuda_calls ? -1 : 1;
	return by_on_cpu_desc(a, b);
}

static void md__cuda_threads(struct md *m, const struct summary *s, const struct thread_summary **order)
{
	size_t k = select_threads(order, s->thread_count, calls_cuda, by_sync_desc);

	md__printf(m, "### Synchronization by thread\n\nTime blocked in CUDA synchronization "
		      "(stream, event and context synchronization, synchronous copies; not the "
		      "queries): the CPU waiting for the GPU.\n\n");
	md__printf(m, "| pid | tid | comm | CUDA calls | launches | sync s | %% of window | in |\n"
		      "|---:|---:|---|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < k && i < TOP_THREADS; i++) {
		const struct thread_summary *t = order[i];

		md__printf(m, "| %u | %u | ", t->pid, t->tid);
		md__thread(m, t->pid, t->tid, t->comm);
		md__printf(m, " | %s%" PRIu64 " | %s%" PRIu64 " | %.3f | %.1f | ", t->cuda_estimated ? "≈" : "",
			   (uint64_t)t->cuda_calls, t->cuda_estimated ? "≈" : "", (uint64_t)t->cuda_launches,
			   ns_to_s(t->cuda_sync_ns),
			   share_of_window(t->cuda_sync_ns, t));
		md__sync_fns(m, s, t);
		md__printf(m, " |\n");
	}
	if (k > TOP_THREADS)
		md__printf(m, "\n… %zu more threads (all of them are in the JSON report)\n", k - TOP_THREADS);
	md__printf(m, "\n");
}

static void md__cuda(struct md *m, const struct recording *r, const struct summary *s,
		     const struct thread_summary **order)
{
	const struct cuda_fn_summary **fns;

	if (!has_cuda(s))
		return;
	fns = calloc(s->cuda_fn_count ? s->cuda_fn_count : 1, sizeof(*fns));
	if (!fns) {
		m->err = m->err ? m->err : -ENOMEM;
		return;
	}
	md__printf(m, "## CUDA\n\n");
	md__cuda_memory(m, r, s);
	md__cuda_functions(m, s, fns);
	md__cuda_kernels(m, s);
	md__cuda_threads(m, s, order);
	free(fns);
}

#define CUDA_ERROR_OUT_OF_MEMORY 2

static int by_gil_wait_desc(const void *a, const void *b)
{
	const struct thread_summary *x = *(const struct thread_summary *const *)a;
	const struct thread_summary *y = *(const struct thread_summary *const *)b;

	if (x->gil_wait_ns != y->gil_wait_ns)
		return x->gil_wait_ns > y->gil_wait_ns ? -1 : 1;
	return by_on_cpu_desc(a, b);
}

static bool has_gil(const struct thread_summary *t)
{
	return t->gil_acquisitions || t->gil_hold_ns || t->gil_blocks;
}

/* The Python threads (any GIL event), most GIL wait first. */
static void md__gil(struct md *m, const struct summary *s, const struct thread_summary **order)
{
	size_t k = select_threads(order, s->thread_count, has_gil, by_gil_wait_desc);

	if (!k)
		return;
	md__printf(m, "## Python GIL\n\nBlocked: off its CPU waiting for the GIL, as the scheduler saw it (on by "
		      "default). With --gil, wait: inside PyEval_RestoreThread, taking the GIL back after a "
		      "blocking call (sleep, I/O, a C extension that released it); hold: from taking it to "
		      "the next PyEval_SaveThread, an upper bound (hand-overs on the switch interval inside "
		      "the interpreter are not seen; '-': never seen taking or releasing it, as a CPU-bound "
		      "thread that hands it over only inside the interpreter: unknown, not 0), acquisitions: "
		      "its returns.\n\n");
	md__printf(m, "| pid | tid | comm | GIL blocked s | blocks | GIL wait s | GIL hold s | acquisitions |\n"
		      "|---:|---:|---|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < k && i < TOP_THREADS; i++) {
		const struct thread_summary *t = order[i];

		md__printf(m, "| %u | %u | ", t->pid, t->tid);
		md__thread(m, t->pid, t->tid, t->comm);
		md__printf(m, " | %.3f | %" PRIu64 " | %.3f | ", ns_to_s(t->gil_blocked_ns), (uint64_t)t->gil_blocks,
			   ns_to_s(t->gil_wait_ns));
		if (t->gil_hold_measured)
			md__printf(m, "%.3f", ns_to_s(t->gil_hold_ns));
		else
			md__printf(m, "-");
		md__printf(m, " | %" PRIu64 " |\n", (uint64_t)t->gil_acquisitions);
	}
	if (k > TOP_THREADS)
		md__printf(m, "\n… %zu more threads (all of them are in the JSON report)\n", k - TOP_THREADS);
	md__printf(m, "\n");
	/* the caller's order is by on-CPU time */
	qsort(order, s->thread_count, sizeof(*order), by_on_cpu_desc);
}

static const char *recorded_thread_comm(const struct summary *s, __u32 pid, __u32 tid)
{
	const struct thread_summary *t = summary__thread(s, pid, tid);

	return t ? t->comm : "";
}

static void md__py_sites(struct md *m, const char *title, const struct py_site *sites, size_t n, bool timed)
{
	if (!n)
		return;
	md__printf(m, "%s\n\n| Python call site | %s |\n|---|---:|%s\n", title, timed ? "calls | sync s" : "sampled launches",
		   timed ? "---:|" : "");
	for (size_t i = 0; i < n && i < TOP_THREADS; i++) {
		md__printf(m, "| ");
		md__text(m, sites[i].site, sizeof(sites[i].site));
		if (timed)
			md__printf(m, " | %" PRIu64 " | %.3f |\n", (uint64_t)sites[i].calls, ns_to_s(sites[i].time_ns));
		else
			md__printf(m, " | %" PRIu64 " |\n", (uint64_t)sites[i].calls);
	}
	if (n > TOP_THREADS)
		md__printf(m, "\n… %zu more sites (all of them are in the JSON report)\n", n - TOP_THREADS);
	md__printf(m, "\n");
}

static void md__python_stacks(struct md *m, const struct summary *s, const struct py_report *py)
{
	char buf[PY_SITE_LEN];

	for (size_t i = 0; i < py->nstatuses; i++) {
		const struct isr_ev_py_status *st = py->statuses[i];

		if (st->status != ISR_PY_STATUS_SAMPLING && st->subject <= ISR_PY_SUBJECT_GIL) {
			md__printf(m, "**%s of pid %u not %s** (%s): ",
				   st->subject == ISR_PY_SUBJECT_GIL ? "GIL waits" : "Python stacks", st->hdr.pid,
				   st->subject == ISR_PY_SUBJECT_GIL ? "traced" : "captured", py_status_name(st));
			md__text(m, st->detail, sizeof(st->detail));
			md__printf(m, "\n\n");
		}
	}
	if (!py->nthreads && !py->nsync && !py->nlaunch)
		return;
	md__printf(m, "## Python stacks\n\nSampled on CPU (%" PRIu64 " samples): per thread, the functions "
		      "with the most samples (self: the innermost frame; inclusive: anywhere on the stack) and "
		      "its most frequent stacks, innermost frame first.\n\n", (uint64_t)py->timer_samples);
	for (size_t i = 0; i < py->nthreads && i < TOP_THREADS; i++) {
		const struct py_thread_stats *t = &py->threads[i];

		md__printf(m, "### pid %u tid %u ", t->pid, t->tid);
		md__thread(m, t->pid, t->tid, recorded_thread_comm(s, t->pid, t->tid));
		md__printf(m, " (%" PRIu64 " samples)\n\n| function | file:first line | self %% | inclusive %% |\n"
			      "|---|---|---:|---:|\n", (uint64_t)t->samples);
		for (size_t k = 0; k < t->nfuncs; k++) {
			const struct py_func_stat *f = &t->funcs[k];

			md__printf(m, "| ");
			if (f->code) {
				md__text(m, f->code->qualname, SIZE_MAX);
				md__printf(m, " | ");
				md__text(m, f->code->filename, SIZE_MAX);
				md__printf(m, ":%u", f->code->first_line);
			} else {
				md__printf(m, "code object 0x%" PRIx64 " | ?", (uint64_t)f->code_addr);
			}
			md__printf(m, " | %.1f | %.1f |\n", pct(f->self, t->samples), pct(f->inclusive, t->samples));
		}
		md__printf(m, "\n");
		for (size_t k = 0; k < t->nstacks; k++) {
			const struct py_stack_stat *st = &t->stacks[k];

			md__printf(m, "%.1f%% of its samples:\n\n", pct(st->samples, t->samples));
			if (!st->stack->depth)
				md__printf(m, "    <no Python frame: native code, or the interpreter outside any function>\n");
			for (__u16 f = 0; f < st->stack->depth; f++) {
				py_report__frame(py, st->stack->pid, &st->stack->frames[f], buf, sizeof(buf));
				md__code_line(m, buf, sizeof(buf));
			}
			if (st->stack->flags & (ISR_PY_STACK_TRUNCATED | ISR_PY_STACK_INVALID))
				md__printf(m, "    … (outer frames not captured)\n");
			md__printf(m, "\n");
		}
	}
	md__py_sites(m, "Top Python call sites of CUDA synchronization time:", py->sync_sites, py->nsync, true);
	md__py_sites(m, "Python launch sites (every Nth launch per CPU, --py-launch-every):", py->launch_sites,
		     py->nlaunch, false);
}

/* GPU activity from the CUPTI bridge: per process the calibration and the
 * join, then kernels by GPU time, copies by kind and devices. */
static void md__gpu(struct md *m, const struct summary *s)
{
	if (!s->gpu_count)
		return;
	md__printf(m, "## GPU activity (CUPTI)\n\n| pid | kernels | memcpys | memsets | joined to launch | causality "
		      "violations | launch to GPU start p50 | clock fit residual p50 / p99 | bound | drift |\n"
		      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < s->gpu_count; i++) {
		const struct gpu_process_stat *p = &s->gpu[i];

		md__printf(m, "| %u | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %.1f us |",
			   p->pid, (uint64_t)p->kernels, (uint64_t)p->copies, (uint64_t)p->memsets,
			   (uint64_t)p->joined, (uint64_t)p->causality_violations, p->launch_to_start_p50_ns / 1e3);
		if (p->fit.valid)
			md__printf(m, " %.0f / %.0f ns | %.0f ns | %.2f ± %.2f ppm |\n", p->fit.residual_p50_ns,
				   p->fit.residual_p99_ns, p->fit.bound_ns, p->fit.drift_ppm, p->fit.drift_bound_ppm);
		else
			md__printf(m, " no clock pairs | - | - |\n");
	}
	md__printf(m, "\n");
	for (size_t i = 0; i < s->gpu_count; i++) {
		const struct gpu_process_stat *p = &s->gpu[i];

		if (p->failed)
			md__printf(m, "> pid %u: the CUPTI bridge could not collect GPU activity (%s).\n\n", p->pid,
				   p->cupti_error < 0 ? "libcupti.so.13 not found" : "CUPTI refused it");
		if (p->estimated) {
			md__printf(m, "> pid %u: GPU activity was collected in %" PRIu64 " windows, %.1f%% of its %.1f s: "
				      "its counts are of the windows, its busy time (≈) is extrapolated over the "
				      "gaps (--gpu collects all of it): ", p->pid, (uint64_t)p->windows,
				   p->span_ns ? 100.0 * (double)p->observed_ns / (double)p->span_ns : 0.0,
				   ns_to_s(p->span_ns));
			if (p->busy_method == GPU_BUSY_BY_LAUNCHES)
				md__printf(m, "per launch, the windows' busy time over their %" PRIu64 " launches times "
					      "≈%.0f launches in the gaps (%" PRIu64 " seen by the probes in %.3f s).\n\n",
					   (uint64_t)p->window_launches, p->gap_launches, (uint64_t)p->gap_launches_seen,
					   ns_to_s(p->gap_probed_ns));
			else
				md__printf(m, "per second of the windows (too few launches seen to go per launch: %" PRIu64
					      " in the windows, %.3f s of the gaps probed).\n\n",
					   (uint64_t)p->window_launches, ns_to_s(p->gap_probed_ns));
		}
		if (p->causality_violations)
			md__printf(m, "> pid %u: %" PRIu64 " kernels start on the GPU before their launch call (worst "
				      "by %.1f us): the GPU clock mapping or the join is off; do not trust GPU times "
				      "of this process below that.\n\n", p->pid, (uint64_t)p->causality_violations,
				   p->worst_violation_ns / 1e3);
	}
	if (s->gpu_kernel_count) {
		md__printf(m, "### GPU kernels by GPU time\n\n| kernel | pid | count | total | mean |\n"
			      "|---|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < s->gpu_kernel_count && i < TOP_CUDA_ROWS; i++) {
			const struct gpu_kernel_stat *k = &s->gpu_kernels[i];

			md__printf(m, "| ");
			md__text(m, k->name, SIZE_MAX);
			md__printf(m, " | %u | %" PRIu64 " | %.3f ms | %.1f us |\n", k->pid, (uint64_t)k->count,
				   k->total_ns / 1e6, (double)k->total_ns / (double)k->count / 1e3);
		}
		if (s->gpu_kernel_count > TOP_CUDA_ROWS)
			md__printf(m, "\n… %zu more kernels (all are in the JSON report)\n",
				   s->gpu_kernel_count - TOP_CUDA_ROWS);
		md__printf(m, "\n");
	}
	if (s->gpu_copy_count) {
		md__printf(m, "### GPU copies by kind\n\n| pid | kind | count | bytes | GPU time |\n|---:|---|---:|---:|---:|\n");
		for (size_t i = 0; i < s->gpu_copy_count; i++) {
			const struct gpu_copy_stat *c = &s->gpu_copies[i];

			md__printf(m, "| %u | %s | %" PRIu64 " | %" PRIu64 " | %.3f ms |\n", c->pid,
				   copy_kind_name(c->copy_kind), (uint64_t)c->count, (uint64_t)c->bytes, c->total_ns / 1e6);
		}
		md__printf(m, "\n");
	}
	if (s->gpu_device_count) {
		md__printf(m, "### GPU busy time\n\n| pid | device | busy | idle |\n|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < s->gpu_device_count; i++) {
			const struct gpu_device_stat *d = &s->gpu_devices[i];

			md__printf(m, "| %u | %u | %s%.3f s | %s%.1f%% |\n", d->pid, d->device, d->estimated ? "≈" : "",
				   ns_to_s(d->busy_est_ns), d->estimated ? "≈" : "", 100.0 * d->idle_fraction);
		}
		md__printf(m, "\n");
	}
}

/* The findings, most cost first, one paragraph each; then what could not
 * be judged and the flag that would let it be. */
static void md__findings(struct md *m, const struct findings *fs, const char *title, const char *none,
			 const char *verdict)
{
	md__printf(m, "## %s\n\n", title);
	if (!fs->n)
		md__printf(m, "%s\n\n", none);
	if (verdict && verdict[0]) {
		md__prose(m, verdict);
		md__printf(m, "\n\n");
	}
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->v[i];

		md__printf(m, "%zu. **", i + 1);
		if (f->cost_s > 0)
			md__printf(m, "%.3f s — ", f->cost_s);
		md__text(m, explain__rule_title(f->rule), SIZE_MAX);
		md__printf(m, "** (`%s`, %s). ", f->rule, finding_severity_name(f->severity));
		md__prose(m, f->summary);
		md__printf(m, "\n");
		if (f->suggestion[0] && findings__same_advice(fs, i) < i) {
			md__printf(m, "   *What to do:* As for finding %zu.\n", findings__same_advice(fs, i) + 1);
		} else if (f->suggestion[0]) {
			md__printf(m, "   *What to do:* ");
			md__prose(m, f->suggestion);
			md__printf(m, "\n");
		}
		md__printf(m, "\n");
	}
	if (fs->nnj) {
		md__printf(m, "Not judged:\n");
		for (size_t i = 0; i < fs->nnj; i++)
			md__printf(m, "- `%s`: needs %s\n", fs->nj[i].rule, fs->nj[i].needs);
		md__printf(m, "\n");
	}
}

/* The ranks side by side (ranks.h): the alignment, one row per rank, the
 * communicators. */
static void md__ranks(struct md *m, const struct ranks *r)
{
	if (!r)
		return;
	md__printf(m, "## Ranks\n\n");
	if (r->nsources > 1) {
		md__printf(m, "%zu recordings lined up on CLOCK_REALTIME (their clock pairs): uncertainty %.1f us "
			      "between the two least certain%s.\n\n", r->nsources, r->uncertainty_ns / 1e3,
			   r->unaligned ? "; a recording without realtime clock pairs was taken as on the same "
					  "clock, its arrivals may be off" : "");
		md__printf(m, "| recording | realtime - monotonic s | uncertainty us | clock pairs |\n"
			      "|---|---:|---:|---:|\n");
		for (size_t i = 0; i < r->nsources; i++) {
			md__printf(m, "| ");
			md__text(m, r->names[i] ? r->names[i] : "", SIZE_MAX);
			md__printf(m, " | %.6f | %.1f | %zu |\n", r->clocks[i].offset_ns / 1e9,
				   r->clocks[i].uncertainty_ns / 1e3, r->clocks[i].pairs);
		}
		md__printf(m, "\n");
	} else {
		md__printf(m, "The ranks' processes are in one recording: one clock.\n\n");
	}
	md__printf(m, "Lateness: a rank's arrival at a collective (its entry into the call) after the first "
		      "rank's. Last: collectives it arrived last at; late: last by %.0f ms or more. NCCL GPU: "
		      "its NCCL kernels' time on the GPU, which holds its wait for the slowest peer; joined, not "
		      "joined: its collectives with and without their kernel (CUPTI).\n\n",
		   NCCL_LATE_NS / 1e6);
	md__printf(m, "| rank | pid | tid | rank from |%s collectives | last | late | lateness p50 ms | p99 ms | "
		      "total s | others waited s | GPU busy | sync stall s | NCCL GPU ms | joined | not joined | "
		      "top finding |\n"
		      "|---:|---:|---:|---|%s---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
		   r->nsources > 1 ? " recording |" : "", r->nsources > 1 ? "---|" : "");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rank_row *w = &r->rows[i];

		md__printf(m, "| %d | %u | %u | %s | ", w->rank, w->pid, w->tid, w->rank_from);
		if (r->nsources > 1) {
			md__text(m, r->names[w->source] ? r->names[w->source] : "", SIZE_MAX);
			md__printf(m, " | ");
		}
		md__printf(m, "%llu | %llu | %llu | %.3f | %.3f | %.3f | %.3f | ", (unsigned long long)w->collectives,
			   (unsigned long long)w->last,
			   (unsigned long long)w->late, w->lateness_p50_ns / 1e6, w->lateness_p99_ns / 1e6,
			   w->lateness_total_ns / 1e9, w->waited_ns / 1e9);
		if (w->gpu_observed_ns)
			md__printf(m, "%.0f%%", 100.0 * w->gpu_busy_ns / w->gpu_observed_ns);
		else
			md__printf(m, "-");
		md__printf(m, " | %.3f | %.3f | %llu | %llu | ", w->sync_ns / 1e9, w->nccl_gpu_ns / 1e6,
			   (unsigned long long)w->nccl_joined, (unsigned long long)w->nccl_not_joined);
		if (w->top_rule)
			md__printf(m, "`%s` (%.3f s)", w->top_rule, w->top_cost_s);
		else
			md__printf(m, "-");
		md__printf(m, " |\n");
	}
	md__printf(m, "\n### Collectives\n\n| communicator | ranks | collectives | calls | bytes per rank | "
		      "spread s | others' wait s | late |\n|---|---:|---:|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < r->ncomms; i++) {
		const struct ranks_comm *c = &r->comms[i];
		bool first = true;

		if (c->id_hash)
			md__printf(m, "| `%016llx` | %d", (unsigned long long)c->id_hash, c->nranks);
		else
			md__printf(m, "| set up before the recording | %d", c->nranks);
		md__printf(m, " | %llu | ", (unsigned long long)c->collectives);
		for (__u16 f = 1; f < ISR_NCCL_FN_MAX; f++) {
			if (!c->calls[f])
				continue;
			md__printf(m, "%s%s %llu", first ? "" : ", ", nccl_func_name(f), (unsigned long long)c->calls[f]);
			first = false;
		}
		md__printf(m, " | %llu | %.3f | %.3f | %llu |\n", (unsigned long long)c->bytes, c->spread_ns / 1e9,
			   c->straggler_waits_ns / 1e9, (unsigned long long)c->late);
	}
	md__printf(m, "\n");
}

/* Everything after the findings: the tables that are their evidence. */
static void md__details(struct md *m, const struct analysis *a)
{
	const struct summary *s = a->sum;
	const struct thread_summary **order;

	m->py = a->py;
	m->sum = a->sum;
	order = calloc(s->thread_count ? s->thread_count : 1, sizeof(*order));
	if (!order) {
		m->err = m->err ? m->err : -ENOMEM;
		return;
	}
	for (size_t i = 0; i < s->thread_count; i++)
		order[i] = &s->threads[i];
	qsort(order, s->thread_count, sizeof(*order), by_on_cpu_desc);
	if (!m->err)
		m->err = steps_report__markdown(m->f, steps__result(a->ex->steps), STEPS_MD_ROWS);
	md__ranks(m, a->ranks);
	md__sampling(m, s);
	md__threads(m, order, s->thread_count);
	md__cuda(m, a->r, s, order);
	md__gpu(m, s);
	md__gil(m, s, order);
	md__python_stacks(m, s, a->py);
	md__event_counts(m, s);
	free(order);
}

int report__write_markdown_ranks(FILE *f, const struct ranks *r)
{
	struct md m = { .f = f };

	md__ranks(&m, r);
	if (!m.err && (fflush(f) == EOF || ferror(f)))
		m.err = -EIO;
	return m.err;
}

int report__write_markdown_details(FILE *f, const struct analysis *a)
{
	struct md m = { .f = f };

	md__details(&m, a);
	if (!m.err && (fflush(f) == EOF || ferror(f)))
		m.err = -EIO;
	return m.err;
}

int report__write_markdown(FILE *f, const struct analysis *a)
{
	struct md m = { .f = f };

	md__header(&m, a->r, a->sum);
	md__warnings(&m, a);
	md__findings(&m, &a->ex->findings, "Findings", REPORT_NO_FINDING, a->ex->verdict);
	md__details(&m, a);
	if (!m.err && (fflush(f) == EOF || ferror(f)))
		m.err = -EIO;
	return m.err;
}

/* Recording i's own report under its file's name: its title line left
 * out, its headings one level down. */
static void md__recording(struct md *m, const struct analysis_set *set, size_t i)
{
	static const char title[] = "# inferscope-bpf report\n";
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *mem;
	int e;

	if (m->err)
		return;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		m->err = -errno;
		return;
	}
	e = report__write_markdown(mem, set->a[i]);
	if (fclose(mem) && !e)
		e = -EIO;
	if (e) {
		m->err = e;
		free(buf);
		return;
	}
	md__printf(m, "# Recording %zu of %zu: ", i + 1, set->n);
	md__text(m, set->names[i], SIZE_MAX);
	md__printf(m, "\n");
	p = strncmp(buf, title, sizeof(title) - 1) ? buf : buf + sizeof(title) - 1;
	for (char *nl; *p && !m->err; p = nl + 1) {
		nl = strchr(p, '\n');
		if (*p == '#')
			md__printf(m, "#");
		if (!nl) {
			md__printf(m, "%s", p);
			break;
		}
		if (fwrite(p, 1, (size_t)(nl - p) + 1, m->f) != (size_t)(nl - p) + 1)
			m->err = -EIO;
	}
	free(buf);
}

int report__write_markdown_set(FILE *f, const struct analysis_set *set)
{
	struct md m = { .f = f };
	char *headline = report__set_headline(set);

	if (!headline)
		return -errno;
	md__printf(&m, "# inferscope-bpf report: %zu recordings\n\n**", set->n);
	md__text(&m, headline, SIZE_MAX);
	md__printf(&m, "**\n\n");
	free(headline);
	for (size_t i = 0; i < set->n; i++) {
		const struct recording *r = set->a[i]->r;

		md__printf(&m, "%zu. ", i + 1);
		md__text(&m, set->names[i], SIZE_MAX);
		md__printf(&m, ": ");
		md__text(&m, or_unknown(r->host.hostname), SIZE_MAX);
		md__printf(&m, ", %.3f s, %zu target process%s, %zu finding%s\n", set->a[i]->sum->duration_s,
			   r->process_count, r->process_count == 1 ? "" : "es", set->a[i]->ex->findings.n,
			   set->a[i]->ex->findings.n == 1 ? "" : "s");
	}
	md__printf(&m, "\n");
	if (set->ranks)
		md__ranks(&m, set->ranks);
	else
		md__printf(&m, "## Ranks\n\nNo two ranks made NCCL collectives in these recordings: nothing to line up "
			       "(each recording's report follows).\n\n");
	md__findings(&m, &set->findings, "Findings across the recordings", REPORT_SET_NO_FINDING, NULL);
	for (size_t i = 0; i < set->n; i++)
		md__recording(&m, set, i);
	if (!m.err && (fflush(f) == EOF || ferror(f)))
		m.err = -EIO;
	return m.err;
}
