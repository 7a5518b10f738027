// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON report (the contract in docs/report-json.md), of one recording
 * and of several: a function of the analysis only.
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

#include "report_common.h"
#include "host_topo.h"
#include "py_report.h"
#include "explain.h"
#include "attribution.h"
#include "text.h"
#include "proc_tree.h"
#include "steps_report.h"
#include "tasks.h"

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

#define JSON_FIELDS(o, row, fields) REPORT_JSON((o), (row), NULL, (fields))

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
	SET(spent, "pid", json_u64(o->spent.busiest_pid));
	SET(spent, "tid", json_u64(o->spent.busiest_tid));
	SET(spent, "traced_s", json_real(ns_to_s(o->spent.traced_ns)));
	SET(spent, "on_cpu_s", json_real(ns_to_s(o->spent.busiest_oncpu_ns)));
	SET(spent, "allowed_s", o->spent.allowed_ns ? json_real(ns_to_s(o->spent.allowed_ns)) : json_null());
	SET(spent, "budget_spent_s", json_real(ns_to_s(o->spent_ns)));
	SET(spent, "faults_budget_spent_s",
	    o->spent.faults_spent_ns ? json_real(ns_to_s(o->spent.faults_spent_ns)) : json_null());
	SET(spent, "copies_budget_spent_s",
	    o->spent.copies_spent_ns ? json_real(ns_to_s(o->spent.copies_spent_ns)) : json_null());
	SET(spent, "by_kind", by = json_object());
	SET(spent, "all_threads_s", all = json_object());
	for (int k = 0; k < ISR_SPENT_MAX; k++) {
		json_t *one = json_object();

		SET(by, spent_names[k], one);
		SET(one, "seconds", json_real(ns_to_s(o->spent.busiest_ns[k])));
		SET(one, "count", json_u64(o->spent.busiest_ops[k]));
		SET(all, spent_names[k], json_real(ns_to_s(o->spent.all_ns[k])));
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
	SET(o, "copies_apart", json_boolean(sm->copies_apart));
	SET(o, "copies_sampled", json_boolean(sm->copies_sampled));
	SET(o, "copy_windows", json_u64(sm->copies_sampled ? sm->copy_windows : 1));
	SET(o, "copies_coverage", json_real(sm->copies_sampled ? sm->copies_coverage : 1));
	SET(o, "processes", procs = json_array());
	for (size_t i = 0; i < sm->proc_count; i++) {
		const struct sampling_process *sp = &sm->procs[i];
		json_t *p = json_object();

		if (!p || json_array_append_new(procs, p))
			goto nomem;
		SET(p, "pid", json_u64(sp->pid));
		SET(p, "observed", json_u64(sp->observed));
		SET(p, "estimated", json_real(sp->estimated));
		SET(p, "estimator", json_string(sampling_estimator__name(sp->estimator)));
		if (sp->cv_windows) {
			json_t *cv = json_object();

			SET(p, "estimators_compared", cv);
			SET(cv, "windows", json_u64(sp->cv_windows));
			SET(cv, "cv_per_second", json_real(sp->cv_time));
			SET(cv, "cv_per_call", json_real(sp->cv_calls));
		} else {
			SET(p, "estimators_compared", json_null());
		}
		if (sp->estimator == SAMPLING_BY_CALLS) {
			SET(p, "per_call", json_real(sp->per_call));
			SET(p, "calls_in_windows", json_u64(sp->calls_windows));
			SET(p, "calls_in_gaps", json_u64(sp->calls_gaps));
		}
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

/* The host's NVIDIA GPUs and NUMA nodes (analysis/read/host_topo.h), into host. */
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

static json_t *json_analysis(const struct analysis *a)
{
	json_t *o = json_object(), *notes;
	char text[MAX_NOTES][NOTE_LEN];
	size_t n = report__notes(a, text, MAX_NOTES);

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
	SET(rec, "start_time", report__start_time(r, s, when, sizeof(when)) ? json_string(when) : json_null());
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
			SET(o, report__gil_fn_names[i], json_u64(gil_fn_count(s, i)));
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
		SET(p, "origin", json_string(report__origin_name(rp->origin)));
		if (REPORT_JSON(p, ps, NULL, report__process_memory))
			goto nomem;
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

/* The traced processes as a tree, in tree order (analysis/model/proc_tree.h). */
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
		SET(p, "origin", json_string(report__origin_name(n->origin)));
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

static json_t *json_py_func(const struct py_func_stat *f, const struct py_thread_stats *ps)
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
	if (REPORT_JSON(o, f, ps, report__py_func_samples))
		goto nomem;
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
		APPEND(funcs, json_py_func(&ps->funcs[i], ps));
	for (size_t i = 0; ps && i < ps->nstacks; i++)
		APPEND(stacks, json_py_stack(py, &ps->stacks[i], ps->samples));
	return 0;
nomem:
	return -ENOMEM;
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
		SET(p, gil ? "gil_waits" : "stacks", json_string(report__py_status_name(st)));
		SET(p, "detail", ev_text(st->detail, sizeof(st->detail)));
	}
	SET(o, "sampled_stacks", json_u64(py->timer_samples));
	SET(o, "cuda_call_stacks", json_u64(py->cuda_samples));
	SET(o, "sync_sites", REPORT_ROWS(py->sync_sites, py->nsync, NULL, report__py_sync_sites));
	SET(o, "launch_sites", REPORT_ROWS(py->launch_sites, py->nlaunch, NULL, report__py_launch_sites));
	return o;
nomem:
	json_decref(o);
	return NULL;
}

/* A thread's numbers in the order of docs/report-json.md, between those
 * json_threads writes itself and those the Markdown's thread tables show
 * too (report__thread_cpu, report__thread_sync, ...: report_common.h). */
static const struct report_field thread_switches[] = {
	JF_S(struct thread_summary, blocked_io_ns, "blocked_io_s"),
	JF(struct thread_summary, switches_voluntary, "voluntary_switches"),
	JF(struct thread_summary, switches_involuntary, "involuntary_switches"),
	JF(struct thread_summary, wakeups, "wakeups"),
};
static const struct report_field thread_work[] = {
	JF(struct thread_summary, minor_faults, "minor_faults"),
	JF(struct thread_summary, major_faults, "major_faults"),
	JF_S(struct thread_summary, fault_ns, "fault_s"),
	JF_S(struct thread_summary, major_fault_ns, "major_fault_s"),
	JF(struct thread_summary, faults_estimated, "faults_estimated"),
	JF(struct thread_summary, created, "created"),
	JF(struct thread_summary, exited, "exited"),
};

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
		if (JSON_FIELDS(o, t, report__thread_cpu))
			goto nomem;
		SET(o, "blocked_s", json_real(ns_to_s(blocked_ns(t))));
		if (JSON_FIELDS(o, t, thread_switches))
			goto nomem;
		SET(o, "top_waker", json_top_waker(s, t));
		if (JSON_FIELDS(o, t, thread_work) || JSON_FIELDS(o, t, report__thread_sync) ||
		    JSON_FIELDS(o, t, report__thread_cuda) || JSON_FIELDS(o, t, report__thread_gil_wait) ||
		    JSON_FIELDS(o, t, report__thread_gil_blocked) || json_thread_py(o, py, t))
			goto nomem;
	}
	return a;
nomem:
	json_decref(a);
	return NULL;
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
		if (JSON_FIELDS(o, f, report__cuda_fn_calls) || JSON_FIELDS(o, f, report__cuda_fn_time))
			goto nomem;
	}
	kernels = json_array();
	SET(cuda, "kernels", kernels);
	for (size_t i = 0; i < s->kernel_count && i < TOP_KERNELS_JSON; i++) {
		const struct kernel_summary *k = &s->kernels[i];

		o = json_object();
		APPEND(kernels, o);
		if (JSON_FIELDS(o, k, report__kernel_id) || JSON_FIELDS(o, k, report__kernel_name) ||
		    JSON_FIELDS(o, k, report__kernel_launches))
			goto nomem;
	}
	return cuda;
nomem:
	json_decref(cuda);
	return NULL;
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

/* A process's GPU activity: the numbers of struct gpu_process_stat after
 * report__gpu_process_counts, in the order of docs/report-json.md, between
 * the values json_gpu writes itself. */
static const struct report_field gpu_process_gaps[] = {
	JF(struct gpu_process_stat, gap_launches_seen, "gap_launches_seen"),
	JF_S(struct gpu_process_stat, gap_probed_ns, "gap_probed_s"),
};
static const struct report_field gpu_kernel_range[] = {
	JF_S(struct gpu_kernel_stat, min_ns, "min_s"),
	JF_S(struct gpu_kernel_stat, max_ns, "max_s"),
};
static const struct report_field gpu_stream_fields[] = {
	JF(struct gpu_stream_stat, pid, "pid"),
	JF(struct gpu_stream_stat, device, "device"),
	JF(struct gpu_stream_stat, stream, "stream"),
	JF(struct gpu_stream_stat, launches, "launches"),
	JF(struct gpu_stream_stat, kernels, "kernels"),
	JF_S(struct gpu_stream_stat, kernel_ns, "kernel_s"),
	JF(struct gpu_stream_stat, copies, "memcpys"),
	JF(struct gpu_stream_stat, copy_bytes, "memcpy_bytes"),
	JF_S(struct gpu_stream_stat, copy_ns, "memcpy_s"),
	JF(struct gpu_stream_stat, memsets, "memsets"),
	JF(struct gpu_stream_stat, memset_bytes, "memset_bytes"),
	JF_S(struct gpu_stream_stat, memset_ns, "memset_s"),
};

static json_t *json_gpu_processes(const struct summary *s)
{
	json_t *procs = json_array(), *o;

	if (!procs)
		return NULL;
	for (size_t i = 0; i < s->gpu_count; i++) {
		const struct gpu_process_stat *p = &s->gpu[i];

		o = json_object();
		APPEND(procs, o);
		SET(o, "pid", json_integer(p->pid));
		SET(o, "clock_fit", json_fit(&p->fit));
		if (JSON_FIELDS(o, p, report__gpu_process_counts))
			goto nomem;
		SET(o, "busy_method", json_string(gpu_busy_method_name(p->busy_method)));
		SET(o, "window_launches", json_u64(p->window_launches));
		SET(o, "gap_launches", p->busy_method == GPU_BUSY_BY_LAUNCHES ? json_real(p->gap_launches) : json_null());
		if (JSON_FIELDS(o, p, gpu_process_gaps))
			goto nomem;
		SET(o, "cupti_error", p->failed ? json_integer(p->cupti_error) : json_null());
	}
	return procs;
nomem:
	json_decref(procs);
	return NULL;
}

static json_t *json_gpu(const struct summary *s)
{
	json_t *gpu = json_object(), *arr, *o;

	if (!gpu)
		return NULL;
	SET(gpu, "processes", json_gpu_processes(s));
	arr = json_array();
	SET(gpu, "kernels", arr);
	for (size_t i = 0; i < s->gpu_kernel_count; i++) {
		const struct gpu_kernel_stat *k = &s->gpu_kernels[i];

		o = json_object();
		APPEND(arr, o);
		SET(o, "pid", json_integer(k->pid));
		SET(o, "name", ev_text(k->name, SIZE_MAX));
		if (JSON_FIELDS(o, k, report__gpu_kernel_time))
			goto nomem;
		SET(o, "mean_s", json_real(ns_to_s(k->total_ns) / (double)k->count));
		if (JSON_FIELDS(o, k, gpu_kernel_range))
			goto nomem;
	}
	arr = json_array();
	SET(gpu, "memcpy", arr);
	for (size_t i = 0; i < s->gpu_copy_count; i++) {
		const struct gpu_copy_stat *c = &s->gpu_copies[i];

		o = json_object();
		APPEND(arr, o);
		SET(o, "pid", json_integer(c->pid));
		SET(o, "kind", json_string(report__copy_kind_name(c->copy_kind)));
		if (JSON_FIELDS(o, c, report__gpu_copy_fields))
			goto nomem;
	}
	SET(gpu, "streams", REPORT_ROWS(s->gpu_streams, s->gpu_stream_count, NULL, gpu_stream_fields));
	SET(gpu, "devices", REPORT_ROWS(s->gpu_devices, s->gpu_device_count, NULL, report__gpu_devices));
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
		JSON_FIELDS(o, w, report__rank_arrivals);
		json_object_set_new(o, "gpu_busy_s", json_real(w->gpu_busy_ns / 1e9));
		json_object_set_new(o, "gpu_observed_s", json_real(w->gpu_observed_ns / 1e9));
		JSON_FIELDS(o, w, report__rank_gpu);
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
