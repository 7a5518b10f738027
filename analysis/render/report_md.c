// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Markdown report, of one recording and of several, and its sections
 * after the findings that the HTML report shows too (report__doc_details,
 * report__doc_ranks): written once through report_doc.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_common.h"
#include "report_doc.h"
#include "host_topo.h"
#include "py_report.h"
#include "explain.h"
#include "text.h"
#include "proc_tree.h"
#include "steps_report.h"
#include "tasks.h"

/* Rows of the per-step table in Markdown and HTML (the JSON has every step). */
#define STEPS_MD_ROWS 50

/* Markdown output: every write goes through md__printf, which remembers
 * the first failure so the writer can report it once at the end. */
struct md {
	struct doc d;			/* the evidence tables are also the HTML's (report_doc.h) */
	const struct py_report *py;	/* names the Python threads (tasks.h, task_name__format) */
	const struct summary *sum;
};


__attribute__((format(printf, 2, 3)))
static void md__printf(struct md *m, const char *fmt, ...)
{
	va_list ap;

	if (m->d.err)
		return;
	va_start(ap, fmt);
	if (vfprintf(m->d.f, fmt, ap) < 0)
		m->d.err = -EIO;
	va_end(ap);
}

/* Text in a table cell or a sentence (lib/text.h). */
static void md__text(struct md *m, const char *s, size_t maxlen)
{
	if (!m->d.err)
		m->d.err = text__write(m->d.f, s, maxlen, TEXT_MD);
}

/* A thread's name as the report shows it: its name and, for a Python
 * thread the name does not tell, its entry. */
static void md__thread(struct md *m, __u32 pid, __u32 tid, const char *comm)
{
	char name[TASK_NAME_LEN];

	task_name__format(name, sizeof(name), comm, summary__process_name(m->sum, pid),
			  py_report__thread_entry(m->py, pid, tid));
	doc__text(&m->d, name, sizeof(name));
}

/* A finding's prose: like md__text, but its `code spans` stay (the rules
 * keep backticks out of the names they quote). */
static void md__prose(struct md *m, const char *s)
{
	if (!m->d.err)
		m->d.err = text__write(m->d.f, s, SIZE_MAX, TEXT_MD_PROSE);
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
		m->d.err = -ENOMEM;
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
 * when its names tell (analysis/model/proc_tree.h). */
static void md__process_tree(struct md *m, const struct recording *r, const struct summary *s)
{
	struct proc_tree t;

	if (proc_tree__build(r, s, &t)) {
		proc_tree__free(&t);
		m->d.err = m->d.err ?: -ENOMEM;
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
		md__printf(m, ", %s", report__origin_name(n->origin));
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
	double sum = 0, secs = ns_to_s(o->spent.traced_ns);
	bool first = true;

	if (!o->spent_known)
		return;
	for (int k = 0; k < ISR_SPENT_MAX; k++)
		sum += (double)o->spent.busiest_ns[k];
	t = summary__thread(s, o->spent.busiest_pid, o->spent.busiest_tid);
	if (!o->spent.busiest_tid) {
		md__printf(m, "- **Tracing cost (estimated):** none charged: no probe fired on a thread of the target "
			   "in %.3f s", secs);
	} else {
		md__printf(m, "- **Tracing cost (estimated):** %.1f ms, %.2f%% of the %.3f s its busiest thread was on "
			   "a CPU in %.3f s (thread %u", sum / 1e6,
			   o->spent.busiest_oncpu_ns ? 100 * sum / (double)o->spent.busiest_oncpu_ns : 0,
			   ns_to_s(o->spent.busiest_oncpu_ns), secs, o->spent.busiest_tid);
		if (t && t->comm[0]) {
			md__printf(m, " `");
			md__text(m, t->comm, sizeof(t->comm));
			md__printf(m, "`");
		}
		md__printf(m, ")");
	}
	if (o->spent.allowed_ns && (o->spent.faults_spent_ns || o->spent.copies_spent_ns)) {
		md__printf(m, ", %s the %.3g%% budget (%.1f ms charged to the hot path's",
			   o->spent_ns <= o->spent.allowed_ns && o->spent.faults_spent_ns <= o->spent.allowed_ns &&
					   o->spent.copies_spent_ns <= o->spent.allowed_ns ? "within" : "over",
			   s->sampling.budget_pct, o->spent_ns / 1e6);
		if (o->spent.faults_spent_ns)
			md__printf(m, "%s%.1f ms to page-fault tracing's", o->spent.copies_spent_ns ? ", " : " and ",
				   o->spent.faults_spent_ns / 1e6);
		if (o->spent.copies_spent_ns)
			md__printf(m, " and %.1f ms to the async copies'", o->spent.copies_spent_ns / 1e6);
		md__printf(m, ", of the %.1f ms each allowed)", o->spent.allowed_ns / 1e6);
	} else if (o->spent.allowed_ns)
		md__printf(m, ", %s the %.3g%% budget (%.1f ms charged of the %.1f ms it allowed)",
			   o->spent_ns <= o->spent.allowed_ns ? "within" : "over", s->sampling.budget_pct,
			   o->spent_ns / 1e6, o->spent.allowed_ns / 1e6);
	else
		md__printf(m, ", no budget");
	for (int k = 0; k < ISR_SPENT_MAX; k++) {
		if (o->spent.busiest_ns[k] < 1000)
			continue;
		md__printf(m, "%s %s %.1f ms", first ? ":" : ",", spent_text[k], o->spent.busiest_ns[k] / 1e6);
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
		   report__start_time(r, s, when, sizeof(when)) ? when : "an unknown wall-clock time");
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
	size_t n = report__notes(a, notes, MAX_NOTES);

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
 * data support it (analysis/model/sampling.h). */
static void md__slowdown(struct md *m, const struct sampling_process *p)
{
	struct doc *d = &m->d;
	double lo = 100 * (p->slowdown_lo - 1), hi = 100 * (p->slowdown_hi - 1);

	doc__open(d, DOC_QUOTE);
	if (p->estimator == SAMPLING_BY_CALLS) {
		doc__printf(d, "Process %u: its hot-path calls in the gaps are estimated from its %" PRIu64
			      " always-probed calls there (synchronizations, event queries and the like), at the "
			      "windows' %.1f per such call: steadier across its %zu windows than their rate in time "
			      "(coefficient of variation %.0f%% against %.0f%%), its pace having changed from one "
			      "window to the next.", p->pid,
			   (uint64_t)p->calls_gaps, p->per_call, p->cv_windows, 100 * p->cv_calls, 100 * p->cv_time);
		doc__close(d);
		return;
	}
	switch (p->slowdown_status) {
	case SAMPLING_SLOWDOWN_APPLIED:
		doc__printf(d, "Process %u ran %.1f%% slower while its hot path was probed (95%% confidence interval "
			      "%+.1f%% to %+.1f%%, from the rate of its synchronizations and other always-probed calls: "
			      "%" PRIu64 " in %zu windows, %" PRIu64 " in %zu gaps): its estimates are corrected for it.",
			   p->pid, 100 * (p->slowdown_measured - 1), lo, hi, (uint64_t)p->slowdown_calls_windows,
			   p->slowdown_windows, (uint64_t)p->slowdown_calls_gaps, p->slowdown_gaps);
		break;
	case SAMPLING_SLOWDOWN_NONE:
		doc__printf(d, "Process %u: no slowdown measurable while its hot path was probed (%+.1f%%, 95%% "
			      "confidence interval %+.1f%% to %+.1f%%, from %" PRIu64 " always-probed calls in %zu windows "
			      "and %" PRIu64 " in %zu gaps): its estimates are not corrected.", p->pid,
			   100 * (p->slowdown_measured - 1), lo, hi, (uint64_t)p->slowdown_calls_windows,
			   p->slowdown_windows, (uint64_t)p->slowdown_calls_gaps, p->slowdown_gaps);
		break;
	case SAMPLING_SLOWDOWN_IMPLAUSIBLE:
		doc__printf(d, "Process %u called its always-probed functions at a rate %+.1f%% different outside the "
			      "windows (95%% confidence interval %+.1f%% to %+.1f%%): %s, so its pace changed for "
			      "another reason (the job's phases); its estimates are not corrected.", p->pid,
			   100 * (p->slowdown_measured - 1), lo, hi, p->slowdown_hi < 1 ?
			   "faster while probed, which probes cannot cause" : "more than the probes can cost");
		break;
	default:
		doc__printf(d, "Process %u: too few windows, gaps or always-probed calls (%" PRIu64 " in %zu windows, "
			      "%" PRIu64 " in %zu gaps; at least 20 in 2 of each are needed) to tell whether the probes "
			      "slowed it: its estimates are not corrected.", p->pid,
			   (uint64_t)p->slowdown_calls_windows, p->slowdown_windows, (uint64_t)p->slowdown_calls_gaps,
			   p->slowdown_gaps);
		break;
	}
	doc__close(d);
}

/* A "Sampled:" quote: what was sampled and how its counts are told
 * (said), and what --budget off traces in full (every). */
static void md__sampled(struct md *m, const char *said, const char *every)
{
	doc__open(&m->d, DOC_QUOTE);
	doc__strong(&m->d, true);
	doc__printf(&m->d, "Sampled:");
	doc__strong(&m->d, false);
	doc__printf(&m->d, " %s (", said);
	doc__code(&m->d, "--budget off");
	doc__printf(&m->d, " traces every %s).", every);
	doc__close(&m->d);
}

/* Sampled counts are estimates: say so before any table shows one. */
static void md__sampling(struct md *m, const struct summary *s)
{
	const struct sampling *sm = &s->sampling;
	char said[512];

	if (sm->faults_sampled) {
		snprintf(said, sizeof(said), "page-fault tracing would have cost more than the %.3g%% overhead budget, so "
			 "it was on %.1f%% of the time, in %zu windows. Fault counts and times marked ≈ are extrapolated "
			 "over each thread's time on a CPU from its part inside those windows", sm->budget_pct,
			 100 * sm->faults_coverage, sm->fault_windows);
		md__sampled(m, said, "fault");
	}
	if (sm->copies_sampled) {
		snprintf(said, sizeof(said), "the async copies would have cost more than the %.3g%% overhead budget, so "
			 "their probes were on %.1f%% of the time, in %zu windows, under a budget of their own. Copy "
			 "counts marked ≈ are extrapolated over each process's span of CUDA calls from its part inside "
			 "those windows", sm->budget_pct, 100 * sm->copies_coverage, sm->copy_windows);
		md__sampled(m, said, "copy");
	}
	if (!sm->sampled)
		return;
	snprintf(said, sizeof(said), "the CUDA hot path (launches, %smemsets) would have cost more than the %.3g%% "
		 "overhead budget (one probe hit: %.2f µs), so its probes were on %.1f%% of the time, in %zu windows. "
		 "Counts marked ≈ are estimates extrapolated from those windows", sm->copies_apart ? "" : "async copies, ",
		 sm->budget_pct, sm->hit_cost_ns / 1e3, 100 * sm->coverage, sm->windows);
	md__sampled(m, said, "call");
	for (size_t i = 0; i < sm->proc_count; i++)
		md__slowdown(m, &sm->procs[i]);
}

/* The order of two keys for qsort, the larger first: -1, 0 or 1. */
static int larger_first(uint64_t x, uint64_t y)
{
	return (x < y) - (x > y);
}

/* The thread an element of a qsort'ed array of thread pointers points at. */
static const struct thread_summary *thread_at(const void *p)
{
	return *(const struct thread_summary *const *)p;
}

/* The most time on a CPU first; ties by pid and tid, the lowest first. */
static int by_on_cpu_desc(const void *a, const void *b)
{
	const struct thread_summary *x = thread_at(a), *y = thread_at(b);
	int c = larger_first(x->on_cpu_ns, y->on_cpu_ns);

	if (!c)
		c = larger_first(y->pid, x->pid);
	return c ? c : larger_first(y->tid, x->tid);
}

/* A thread that did nothing worth a row: under 1 ms on a CPU, and nothing
 * of interest (no fault, CUDA call, GIL wait or run-queue wait). */
static bool idle_thread(const struct thread_summary *t)
{
	return t->on_cpu_ns < IDLE_THREAD_NS && !t->minor_faults && !t->major_faults && !t->cuda_calls &&
	       !t->gil_wait_ns && !t->gil_acquisitions && t->runqueue_wait_ns < IDLE_THREAD_NS;
}

static const struct doc_col thread_head_cols[] = { { "pid", true }, { "tid", true }, { "comm", false } };
static double thread_blocked(const void *row, const void *ctx, double unit)
{
	(void)ctx;
	return (double)blocked_ns(row) / unit;
}

/* The thread table's last columns, two figures in some cells (the JSON
 * has each apart: json_threads). */
static const struct report_field thread_blocked_io =
	RF_S(struct thread_summary, blocked_io_ns, NULL, NULL, "(%.3f)", 1e9, .join = " ");
static const struct report_field thread_major = RF(struct thread_summary, major_faults, NULL, NULL, .join = "/");
static const struct report_field thread_tail[] = {
	RF_CALC_S(thread_blocked, NULL, "blocked s (D-state I/O)", "%.3f", 1e9, .then = &thread_blocked_io),
	RF(struct thread_summary, minor_faults, NULL, "faults minor/major",
	   .est = RF_FLAG(struct thread_summary, faults_estimated), .then = &thread_major),
	RF_S(struct thread_summary, fault_ns, NULL, "fault time s", "%.3f", 1e9,
	     .est = RF_FLAG(struct thread_summary, faults_estimated)),
};
#define THREAD_COLS (DOC_NCOLS(thread_head_cols) + REPORT_NFIELDS(report__thread_cpu) + REPORT_NFIELDS(thread_tail))

/* A thread table's first columns, pid, tid, the thread's name, into cols:
 * their count. */
static size_t thread_cols(struct doc_col *cols)
{
	memcpy(cols, thread_head_cols, sizeof(thread_head_cols));
	return DOC_NCOLS(thread_head_cols);
}

/* A row's first cells: pid, tid, the thread's name. */
static void md__thread_cells(struct md *m, const struct thread_summary *t)
{
	doc__row(&m->d);
	doc__printf(&m->d, "%u\t%u\t", t->pid, t->tid);
	md__thread(m, t->pid, t->tid, t->comm);
}

static void md__threads(struct md *m, const struct thread_summary *const *order, size_t n)
{
	struct doc *d = &m->d;
	struct doc_col cols[THREAD_COLS];
	size_t shown = 0, idle = 0, more = 0, ncols = thread_cols(cols);

	doc__headingf(d, 2, "Threads");
	if (!n) {
		doc__para(d, "No target threads were seen.");
		return;
	}
	doc__para(d, "Sorted by on-CPU time. Blocked is off-CPU time not spent waiting for a CPU; in brackets, the "
		  "part in uninterruptible sleep (D state, usually I/O).");
	REPORT_COLS(report__thread_cpu, cols, &ncols);
	REPORT_COLS(thread_tail, cols, &ncols);
	doc__table(d, cols, ncols);
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
		md__thread_cells(m, t);
		REPORT_CELLS(d, t, NULL, report__thread_cpu);
		REPORT_CELLS(d, t, NULL, thread_tail);
		doc__row_end(d);
	}
	doc__table_end(d);
	if (more)
		doc__para(d, "… %zu more threads (all of them are in the JSON report)", more);
	if (idle)
		doc__para(d, "%zu thread%s did nothing worth a row (under 1 ms on a CPU, no fault, CUDA call or GIL "
			  "wait): all of them are in the JSON report.", idle, idle == 1 ? "" : "s");
}

static const struct doc_col count_cols[] = { { "event", false }, { "count", true } };

static void md__count_row(struct doc *d, const char *name, __u64 n)
{
	doc__row(d);
	doc__printf(d, "%s\t%" PRIu64, name, (uint64_t)n);
	doc__row_end(d);
}

static void md__event_counts(struct md *m, const struct summary *s)
{
	struct doc *d = &m->d;
	__u64 known = 0;

	doc__headingf(d, 2, "Event counts");
	doc__table(d, count_cols, DOC_NCOLS(count_cols));
	for (__u16 t = 1; t < ISR_EV_TYPE_MAX; t++) {
		const char *name = isr_event_name(t);

		if (!s->event_counts[t] || counted_by_function(t))
			continue;
		known += s->event_counts[t];
		md__count_row(d, name ? name : "unknown", s->event_counts[t]);
	}
	for (size_t i = 0; i < s->cuda_fn_count; i++) {
		const struct cuda_fn_summary *f = &s->cuda_fns[i];

		if (!(f->calls + f->names))
			continue;
		known += f->calls + f->names;
		md__count_row(d, f->name, f->calls + f->names);
	}
	for (int i = 0; i < 2; i++) {
		if (!gil_fn_count(s, i))
			continue;
		known += gil_fn_count(s, i);
		md__count_row(d, report__gil_fn_names[i], gil_fn_count(s, i));
	}
	if (s->event_total > known)
		md__count_row(d, "types unknown to this version", s->event_total - known);
	doc__row(d);
	doc__strong(d, true);
	doc__printf(d, "total");
	doc__strong(d, false);
	doc__printf(d, "\t%" PRIu64, (uint64_t)s->event_total);
	doc__row_end(d);
	doc__table_end(d);
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

static const struct doc_col memory_cols[] = { { "pid", true }, { "comm", false } };

static void md__cuda_memory(struct md *m, const struct recording *r, const struct summary *s)
{
	struct doc *d = &m->d;
	__u64 unknown = 0;

	doc__headingf(d, 3, "Memory by process");
	doc__para(d, "Live: still allocated at the end of the recording (nothing once the process has exited). "
		  "Peak: the most allocated at any time during the recording.");
	struct doc_col cols[DOC_NCOLS(memory_cols) + REPORT_NFIELDS(report__process_memory) + 1];
	size_t ncols = DOC_NCOLS(memory_cols);

	memcpy(cols, memory_cols, sizeof(memory_cols));
	REPORT_COLS(report__process_memory, cols, &ncols);
	cols[ncols++] = (struct doc_col){ "failed calls", true };
	doc__table(d, cols, ncols);
	for (size_t i = 0; i < s->process_count; i++) {
		const struct process_summary *p = &s->processes[i];

		doc__row(d);
		doc__printf(d, "%u\t", p->pid);
		doc__text(d, recorded_comm(r, p->pid), SIZE_MAX);
		REPORT_CELLS(d, p, NULL, report__process_memory);
		doc__printf(d, "\t%" PRIu64, (uint64_t)process_failed(p));
		doc__row_end(d);
		unknown += p->unknown_frees;
	}
	doc__table_end(d);
	if (unknown)
		doc__para(d, "%" PRIu64 " free%s of memory allocated before the recording began could not be sized; "
			  "live and peak count only memory allocated while recording.", (uint64_t)unknown,
			  unknown == 1 ? "" : "s");
}

/* The CUDA function an element of a qsort'ed array of pointers points at. */
static const struct cuda_fn_summary *fn_at(const void *p)
{
	return *(const struct cuda_fn_summary *const *)p;
}

/* The most calls first; ties by function id, the lowest first. */
static int fn_by_calls_desc(const void *a, const void *b)
{
	int c = larger_first(fn_at(a)->calls, fn_at(b)->calls);

	return c ? c : larger_first(fn_at(b)->func, fn_at(a)->func);
}

static int fn_by_time_desc(const void *a, const void *b)
{
	int c = larger_first(fn_at(a)->total_ns, fn_at(b)->total_ns);

	return c ? c : fn_by_calls_desc(a, b);
}

/* A table of CUDA functions, their name and the fields f, of the first
 * TOP_CUDA_ROWS of fns. */
static void md__cuda_fn_table(struct doc *d, const struct cuda_fn_summary **fns, size_t n,
			      const struct report_field *f, size_t nf)
{
	static const struct report_field name[] = { RF_A(struct cuda_fn_summary, name, NULL, "function") };
	struct doc_col cols[1 + REPORT_NFIELDS(report__cuda_fn_time)];
	size_t ncols = 0;

	_Static_assert(REPORT_NFIELDS(report__cuda_fn_calls) <= REPORT_NFIELDS(report__cuda_fn_time),
		       "cols holds either table's");

	REPORT_COLS(name, cols, &ncols);
	report__field_cols(f, nf, cols, &ncols);
	doc__table(d, cols, ncols);
	for (size_t i = 0; i < n && i < TOP_CUDA_ROWS; i++) {
		REPORT_ROW(d, fns[i], NULL, name);
		report__field_cells(d, fns[i], NULL, f, nf);
		doc__row_end(d);
	}
	doc__table_end(d);
}

static void md__cuda_functions(struct md *m, const struct summary *s,
			       const struct cuda_fn_summary **fns)
{
	struct doc *d = &m->d;
	size_t n = 0;

	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].calls)
			fns[n++] = &s->cuda_fns[i];
	qsort(fns, n, sizeof(*fns), fn_by_calls_desc);
	doc__headingf(d, 3, "Functions by calls");
	md__cuda_fn_table(d, fns, n, report__cuda_fn_calls, REPORT_NFIELDS(report__cuda_fn_calls));

	n = 0;
	for (size_t i = 0; i < s->cuda_fn_count; i++)
		if (s->cuda_fns[i].returned)
			fns[n++] = &s->cuda_fns[i];
	if (!n)
		return;
	qsort(fns, n, sizeof(*fns), fn_by_time_desc);
	doc__headingf(d, 3, "Functions by time");
	doc__para(d, "Calls whose return is probed (synchronization, synchronous copies, memory management, kernel "
		  "lookup), from entry to return.");
	md__cuda_fn_table(d, fns, n, report__cuda_fn_time, REPORT_NFIELDS(report__cuda_fn_time));
}

static void md__cuda_kernels(struct md *m, const struct summary *s)
{
	struct doc *d = &m->d;
	struct doc_col cols[REPORT_NFIELDS(report__kernel_name) + REPORT_NFIELDS(report__kernel_id) +
			    REPORT_NFIELDS(report__kernel_launches)];
	size_t ncols = 0;

	if (!s->kernel_count)
		return;
	doc__headingf(d, 3, "Kernels by launches");
	REPORT_COLS(report__kernel_name, cols, &ncols);
	REPORT_COLS(report__kernel_id, cols, &ncols);
	REPORT_COLS(report__kernel_launches, cols, &ncols);
	doc__table(d, cols, ncols);
	for (size_t i = 0; i < s->kernel_count && i < TOP_CUDA_ROWS; i++) {
		const struct kernel_summary *k = &s->kernels[i];

		REPORT_ROW(d, k, NULL, report__kernel_name);
		REPORT_CELLS(d, k, NULL, report__kernel_id);
		REPORT_CELLS(d, k, NULL, report__kernel_launches);
		doc__row_end(d);
	}
	doc__table_end(d);
	if (s->kernel_count > TOP_CUDA_ROWS)
		doc__para(d, "… %zu more kernels (the top %d are in the JSON report)", s->kernel_count - TOP_CUDA_ROWS,
			  TOP_KERNELS_JSON);
}

/* "cuCtxSynchronize_v2/cuStreamSynchronize": where the thread's sync time went. */
static void md__sync_fns(struct md *m, const struct summary *s, const struct thread_summary *t)
{
	for (int i = 0; i < SUMMARY_SYNC_FNS && t->cuda_sync_fns[i]; i++)
		doc__printf(&m->d, "%s%s", i ? "/" : "", summary__cuda_fn_name(s, t->cuda_sync_fns[i]));
}

static bool calls_cuda(const struct thread_summary *t)
{
	return t->cuda_calls > 0;
}

static int by_sync_desc(const void *a, const void *b)
{
	const struct thread_summary *x = thread_at(a), *y = thread_at(b);
	int c = larger_first(x->cuda_sync_ns, y->cuda_sync_ns);

	if (!c)
		c = larger_first(x->cuda_calls, y->cuda_calls);
	return c ? c : by_on_cpu_desc(a, b);
}

/* "… 3 more threads": the rows a thread table left out, when any. */
static void md__more_threads(struct doc *d, size_t n)
{
	if (n > TOP_THREADS)
		doc__para(d, "… %zu more threads (all of them are in the JSON report)", n - TOP_THREADS);
}

/* The columns of a table of selected threads after pid, tid and name: two
 * groups of fields, then, in the synchronization table, the functions. */
struct md_thread_fields {
	const struct report_field *a, *b;
	size_t na, nb;
	bool sync_fns;		/* a last column "in": the thread's synchronization functions */
};

/* The widest: the synchronization table. */
enum { THREAD_TABLE_FIELDS = REPORT_NFIELDS(report__thread_cuda) + REPORT_NFIELDS(report__thread_sync) + 1 };

static const struct md_thread_fields sync_thread_fields = {
	report__thread_cuda, report__thread_sync,
	REPORT_NFIELDS(report__thread_cuda), REPORT_NFIELDS(report__thread_sync), true,
};

static const struct md_thread_fields gil_thread_fields = {
	report__thread_gil_blocked, report__thread_gil_wait,
	REPORT_NFIELDS(report__thread_gil_blocked), REPORT_NFIELDS(report__thread_gil_wait), false,
};
_Static_assert(REPORT_NFIELDS(report__thread_gil_blocked) + REPORT_NFIELDS(report__thread_gil_wait) <=
		       THREAD_TABLE_FIELDS,
	       "THREAD_TABLE_FIELDS holds the GIL table's fields");

/* The first TOP_THREADS of the k threads select_threads put first in order,
 * a row each with the fields tf, and a line for those left out. */
static void md__thread_table(struct md *m, const struct summary *s, const struct thread_summary *const *order,
			     size_t k, const struct md_thread_fields *tf)
{
	struct doc *d = &m->d;
	struct doc_col cols[DOC_NCOLS(thread_head_cols) + THREAD_TABLE_FIELDS];
	size_t ncols = thread_cols(cols);

	report__field_cols(tf->a, tf->na, cols, &ncols);
	report__field_cols(tf->b, tf->nb, cols, &ncols);
	if (tf->sync_fns)
		cols[ncols++] = (struct doc_col){ "in", false };
	doc__table(d, cols, ncols);
	for (size_t i = 0; i < k && i < TOP_THREADS; i++) {
		const struct thread_summary *t = order[i];

		md__thread_cells(m, t);
		report__field_cells(d, t, NULL, tf->a, tf->na);
		report__field_cells(d, t, NULL, tf->b, tf->nb);
		if (tf->sync_fns) {
			doc__cell(d);
			md__sync_fns(m, s, t);
		}
		doc__row_end(d);
	}
	doc__table_end(d);
	md__more_threads(d, k);
}

static void md__cuda_threads(struct md *m, const struct summary *s, const struct thread_summary **order)
{
	size_t k = select_threads(order, s->thread_count, calls_cuda, by_sync_desc);

	doc__headingf(&m->d, 3, "Synchronization by thread");
	doc__para(&m->d, "Time blocked in CUDA synchronization (stream, event and context synchronization, "
		  "synchronous copies; not the queries): the CPU waiting for the GPU.");
	md__thread_table(m, s, order, k, &sync_thread_fields);
}

static void md__cuda(struct md *m, const struct recording *r, const struct summary *s,
		     const struct thread_summary **order)
{
	const struct cuda_fn_summary **fns;

	if (!has_cuda(s))
		return;
	fns = calloc(s->cuda_fn_count ? s->cuda_fn_count : 1, sizeof(*fns));
	if (!fns) {
		m->d.err = m->d.err ? m->d.err : -ENOMEM;
		return;
	}
	doc__headingf(&m->d, 2, "CUDA");
	md__cuda_memory(m, r, s);
	md__cuda_functions(m, s, fns);
	md__cuda_kernels(m, s);
	md__cuda_threads(m, s, order);
	free(fns);
}

#define CUDA_ERROR_OUT_OF_MEMORY 2

static int by_gil_wait_desc(const void *a, const void *b)
{
	int c = larger_first(thread_at(a)->gil_wait_ns, thread_at(b)->gil_wait_ns);

	return c ? c : by_on_cpu_desc(a, b);
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
	doc__headingf(&m->d, 2, "Python GIL");
	doc__para(&m->d, "Blocked: off its CPU waiting for the GIL, as the scheduler saw it (on by default). With --gil, "
		  "wait: inside PyEval_RestoreThread, taking the GIL back after a blocking call (sleep, I/O, a C "
		  "extension that released it); hold: from taking it to the next PyEval_SaveThread, an upper bound "
		  "(hand-overs on the switch interval inside the interpreter are not seen; '-': never seen taking "
		  "or releasing it, as a CPU-bound thread that hands it over only inside the interpreter: unknown, "
		  "not 0), acquisitions: its returns.");
	md__thread_table(m, s, order, k, &gil_thread_fields);
	/* the caller's order is by on-CPU time */
	qsort(order, s->thread_count, sizeof(*order), by_on_cpu_desc);
}

static const char *recorded_thread_comm(const struct summary *s, __u32 pid, __u32 tid)
{
	const struct thread_summary *t = summary__thread(s, pid, tid);

	return t ? t->comm : "";
}

/* Python call sites (struct py_site) as the fields f say. */
static void md__py_sites(struct md *m, const char *title, const struct py_site *sites, size_t n,
			 const struct report_field *f, size_t nf)
{
	struct doc *d = &m->d;
	struct doc_col cols[REPORT_NFIELDS(report__py_sync_sites)];
	size_t ncols = 0;

	_Static_assert(REPORT_NFIELDS(report__py_launch_sites) <= REPORT_NFIELDS(report__py_sync_sites),
		       "cols holds either table's");

	if (!n)
		return;
	doc__para(d, "%s", title);
	report__field_cols(f, nf, cols, &ncols);
	doc__table(d, cols, ncols);
	for (size_t i = 0; i < n && i < TOP_THREADS; i++) {
		report__field_row(d, &sites[i], NULL, f, nf);
		doc__row_end(d);
	}
	doc__table_end(d);
	if (n > TOP_THREADS)
		doc__para(d, "… %zu more sites (all of them are in the JSON report)", n - TOP_THREADS);
}

static const struct doc_col py_func_cols[] = { { "function", false }, { "file:first line", false } };

/* Why a process's GIL waits or Python stacks are missing, when they are. */
static void md__py_statuses(struct md *m, const struct py_report *py)
{
	struct doc *d = &m->d;

	for (size_t i = 0; i < py->nstatuses; i++) {
		const struct isr_ev_py_status *st = py->statuses[i];

		if (st->status == ISR_PY_STATUS_SAMPLING || st->subject > ISR_PY_SUBJECT_GIL)
			continue;
		doc__open(d, DOC_PARA);
		doc__strong(d, true);
		doc__printf(d, "%s of pid %u not %s", st->subject == ISR_PY_SUBJECT_GIL ? "GIL waits" : "Python stacks",
			    st->hdr.pid, st->subject == ISR_PY_SUBJECT_GIL ? "traced" : "captured");
		doc__strong(d, false);
		doc__printf(d, " (%s): ", report__py_status_name(st));
		doc__text(d, st->detail, sizeof(st->detail));
		doc__close(d);
	}
}

/* A sampled thread's functions, then its most frequent stacks. */
static void md__py_thread(struct md *m, const struct summary *s, const struct py_report *py,
			  const struct py_thread_stats *t)
{
	struct doc *d = &m->d;
	struct doc_col cols[DOC_NCOLS(py_func_cols) + REPORT_NFIELDS(report__py_func_samples)];
	size_t ncols = DOC_NCOLS(py_func_cols);
	char buf[PY_SITE_LEN];

	memcpy(cols, py_func_cols, sizeof(py_func_cols));
	REPORT_COLS(report__py_func_samples, cols, &ncols);
	doc__heading(d, 3);
	doc__printf(d, "pid %u tid %u ", t->pid, t->tid);
	md__thread(m, t->pid, t->tid, recorded_thread_comm(s, t->pid, t->tid));
	doc__printf(d, " (%" PRIu64 " samples)", (uint64_t)t->samples);
	doc__close(d);
	doc__table(d, cols, ncols);
	for (size_t k = 0; k < t->nfuncs; k++) {
		const struct py_func_stat *f = &t->funcs[k];

		doc__row(d);
		if (f->code) {
			doc__text(d, f->code->qualname, SIZE_MAX);
			doc__cell(d);
			doc__text(d, f->code->filename, SIZE_MAX);
			doc__printf(d, ":%u", f->code->first_line);
		} else {
			doc__printf(d, "code object 0x%" PRIx64 "\t?", (uint64_t)f->code_addr);
		}
		REPORT_CELLS(d, f, t, report__py_func_samples);
		doc__row_end(d);
	}
	doc__table_end(d);
	for (size_t k = 0; k < t->nstacks; k++) {
		const struct py_stack_stat *st = &t->stacks[k];

		doc__para(d, "%.1f%% of its samples:", pct(st->samples, t->samples));
		doc__open(d, DOC_CODE);
		if (!st->stack->depth)
			doc__code_line(d, "<no Python frame: native code, or the interpreter outside any function>",
				       SIZE_MAX);
		for (__u16 f = 0; f < st->stack->depth; f++) {
			py_report__frame(py, st->stack->pid, &st->stack->frames[f], buf, sizeof(buf));
			doc__code_line(d, buf, sizeof(buf));
		}
		if (st->stack->flags & (ISR_PY_STACK_TRUNCATED | ISR_PY_STACK_INVALID))
			doc__code_line(d, "… (outer frames not captured)", SIZE_MAX);
		doc__close(d);
	}
}

static void md__python_stacks(struct md *m, const struct summary *s, const struct py_report *py)
{
	md__py_statuses(m, py);
	if (!py->nthreads && !py->nsync && !py->nlaunch)
		return;
	doc__headingf(&m->d, 2, "Python stacks");
	doc__para(&m->d, "Sampled on CPU (%" PRIu64 " samples): per thread, the functions with the most samples "
		  "(self: the innermost frame; inclusive: anywhere on the stack) and its most frequent stacks, "
		  "innermost frame first.", (uint64_t)py->timer_samples);
	for (size_t i = 0; i < py->nthreads && i < TOP_THREADS; i++)
		md__py_thread(m, s, py, &py->threads[i]);
	md__py_sites(m, "Top Python call sites of CUDA synchronization time:", py->sync_sites, py->nsync,
		     report__py_sync_sites, REPORT_NFIELDS(report__py_sync_sites));
	md__py_sites(m, "Python launch sites (every Nth launch per CPU, --py-launch-every):", py->launch_sites,
		     py->nlaunch, report__py_launch_sites, REPORT_NFIELDS(report__py_launch_sites));
}

/* The GPU activity table's last columns: its process's clock fit. */
static const struct doc_col gpu_fit_cols[] = {
	{ "clock fit residual p50 / p99", true }, { "bound", true }, { "drift", true },
};

/* What to know before trusting a process's GPU figures: a bridge that
 * failed, activity collected in windows, kernels before their launch. */
static void md__gpu_notes(struct doc *d, const struct gpu_process_stat *p)
{
	if (p->failed) {
		doc__open(d, DOC_QUOTE);
		doc__printf(d, "pid %u: the CUPTI bridge could not collect GPU activity (%s).", p->pid,
			    p->cupti_error < 0 ? "libcupti.so.13 not found" : "CUPTI refused it");
		doc__close(d);
	}
	if (p->estimated) {
		doc__open(d, DOC_QUOTE);
		doc__printf(d, "pid %u: GPU activity was collected in %" PRIu64 " windows, %.1f%% of its %.1f s: its "
			    "counts are of the windows, its busy time (≈) is extrapolated over the gaps (--gpu collects "
			    "all of it): ", p->pid, (uint64_t)p->windows,
			    p->span_ns ? 100.0 * (double)p->observed_ns / (double)p->span_ns : 0.0, ns_to_s(p->span_ns));
		if (p->busy_method == GPU_BUSY_BY_LAUNCHES)
			doc__printf(d, "per launch, the windows' busy time over their %" PRIu64 " launches times ≈%.0f "
				    "launches in the gaps (%" PRIu64 " seen by the probes in %.3f s).",
				    (uint64_t)p->window_launches, p->gap_launches, (uint64_t)p->gap_launches_seen,
				    ns_to_s(p->gap_probed_ns));
		else
			doc__printf(d, "per second of the windows (too few launches seen to go per launch: %" PRIu64
				    " in the windows, %.3f s of the gaps probed).", (uint64_t)p->window_launches,
				    ns_to_s(p->gap_probed_ns));
		doc__close(d);
	}
	if (p->causality_violations) {
		doc__open(d, DOC_QUOTE);
		doc__printf(d, "pid %u: %" PRIu64 " kernels start on the GPU before their launch call (worst by %.1f "
			    "us): the GPU clock mapping or the join is off; do not trust GPU times of this process "
			    "below that.", p->pid, (uint64_t)p->causality_violations, p->worst_violation_ns / 1e3);
		doc__close(d);
	}
}

static void md__gpu_processes(struct doc *d, const struct summary *s)
{
	struct doc_col cols[1 + REPORT_NFIELDS(report__gpu_process_counts) + DOC_NCOLS(gpu_fit_cols)] = {
		{ "pid", true },
	};
	size_t n = 1;

	REPORT_COLS(report__gpu_process_counts, cols, &n);
	memcpy(cols + n, gpu_fit_cols, sizeof(gpu_fit_cols));
	n += DOC_NCOLS(gpu_fit_cols);
	doc__headingf(d, 2, "GPU activity (CUPTI)");
	doc__table(d, cols, n);
	for (size_t i = 0; i < s->gpu_count; i++) {
		const struct gpu_process_stat *p = &s->gpu[i];

		doc__row(d);
		doc__printf(d, "%u", p->pid);
		REPORT_CELLS(d, p, NULL, report__gpu_process_counts);
		doc__cell(d);
		if (p->fit.valid)
			doc__printf(d, "%.0f / %.0f ns\t%.0f ns\t%.2f ± %.2f ppm", p->fit.residual_p50_ns,
				    p->fit.residual_p99_ns, p->fit.bound_ns, p->fit.drift_ppm, p->fit.drift_bound_ppm);
		else
			doc__printf(d, "no clock pairs\t-\t-");
		doc__row_end(d);
	}
	doc__table_end(d);
	for (size_t i = 0; i < s->gpu_count; i++)
		md__gpu_notes(d, &s->gpu[i]);
}

static void md__gpu_kernels(struct doc *d, const struct summary *s)
{
	struct doc_col cols[5] = { { "kernel", false }, { "pid", true } };
	size_t n = 2;

	REPORT_COLS(report__gpu_kernel_time, cols, &n);
	cols[n++] = (struct doc_col){ "mean", true };
	doc__headingf(d, 3, "GPU kernels by GPU time");
	doc__table(d, cols, n);
	for (size_t i = 0; i < s->gpu_kernel_count && i < TOP_CUDA_ROWS; i++) {
		const struct gpu_kernel_stat *k = &s->gpu_kernels[i];

		doc__row(d);
		doc__text(d, k->name, SIZE_MAX);
		doc__printf(d, "\t%u", k->pid);
		REPORT_CELLS(d, k, NULL, report__gpu_kernel_time);
		doc__printf(d, "\t%.1f us", (double)k->total_ns / (double)k->count / 1e3);
		doc__row_end(d);
	}
	doc__table_end(d);
	if (s->gpu_kernel_count > TOP_CUDA_ROWS)
		doc__para(d, "… %zu more kernels (all are in the JSON report)", s->gpu_kernel_count - TOP_CUDA_ROWS);
}

static void md__gpu_copies(struct doc *d, const struct summary *s)
{
	struct doc_col cols[5] = { { "pid", true }, { "kind", false } };
	size_t n = 2;

	REPORT_COLS(report__gpu_copy_fields, cols, &n);
	doc__headingf(d, 3, "GPU copies by kind");
	doc__table(d, cols, n);
	for (size_t i = 0; i < s->gpu_copy_count; i++) {
		const struct gpu_copy_stat *c = &s->gpu_copies[i];

		doc__row(d);
		doc__printf(d, "%u\t%s", c->pid, report__copy_kind_name(c->copy_kind));
		REPORT_CELLS(d, c, NULL, report__gpu_copy_fields);
		doc__row_end(d);
	}
	doc__table_end(d);
}

/* GPU activity from the CUPTI bridge: per process the calibration and the
 * join, then kernels by GPU time, copies by kind and devices. */
static void md__gpu(struct md *m, const struct summary *s)
{
	struct doc *d = &m->d;

	if (!s->gpu_count)
		return;
	md__gpu_processes(d, s);
	if (s->gpu_kernel_count)
		md__gpu_kernels(d, s);
	if (s->gpu_copy_count)
		md__gpu_copies(d, s);
	if (s->gpu_device_count) {
		struct doc_col cols[REPORT_NFIELDS(report__gpu_devices)];
		size_t n = 0;

		doc__headingf(d, 3, "GPU busy time");
		REPORT_COLS(report__gpu_devices, cols, &n);
		doc__table(d, cols, n);
		for (size_t i = 0; i < s->gpu_device_count; i++) {
			REPORT_ROW(d, &s->gpu_devices[i], NULL, report__gpu_devices);
			doc__row_end(d);
		}
		doc__table_end(d);
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
static const struct doc_col clock_cols[] = {
	{ "recording", false }, { "realtime - monotonic s", true }, { "uncertainty us", true }, { "clock pairs", true },
};

/* How the recordings were lined up on one clock. */
static void md__rank_clocks(struct doc *d, const struct ranks *r)
{
	if (r->nsources <= 1) {
		doc__para(d, "The ranks' processes are in one recording: one clock.");
		return;
	}
	doc__para(d, "%zu recordings lined up on CLOCK_REALTIME (their clock pairs): uncertainty %.1f us between the "
		  "two least certain%s.", r->nsources, r->uncertainty_ns / 1e3,
		  r->unaligned ? "; a recording without realtime clock pairs was taken as on the same clock, its "
				 "arrivals may be off" : "");
	doc__table(d, clock_cols, DOC_NCOLS(clock_cols));
	for (size_t i = 0; i < r->nsources; i++) {
		doc__row(d);
		doc__text(d, r->names[i] ? r->names[i] : "", SIZE_MAX);
		doc__printf(d, "\t%.6f\t%.1f\t%zu", r->clocks[i].offset_ns / 1e9, r->clocks[i].uncertainty_ns / 1e3,
			    r->clocks[i].pairs);
		doc__row_end(d);
	}
	doc__table_end(d);
}

static const struct doc_col rank_head_cols[] = {
	{ "rank", true }, { "pid", true }, { "tid", true }, { "rank from", false }, { "recording", false },
};
#define RANK_COL_RECORDING 4
#define RANK_COLS (DOC_NCOLS(rank_head_cols) + REPORT_NFIELDS(report__rank_arrivals) + 1 + \
		   REPORT_NFIELDS(report__rank_gpu) + 1)

static void md__rank_row(struct doc *d, const struct ranks *r, const struct rank_row *w)
{
	doc__row(d);
	doc__printf(d, "%d\t%u\t%u\t%s", w->rank, w->pid, w->tid, w->rank_from);
	if (r->nsources > 1) {
		doc__cell(d);
		doc__text(d, r->names[w->source] ? r->names[w->source] : "", SIZE_MAX);
	}
	REPORT_CELLS(d, w, NULL, report__rank_arrivals);
	doc__cell(d);
	if (w->gpu_observed_ns)
		doc__printf(d, "%.0f%%", 100.0 * w->gpu_busy_ns / w->gpu_observed_ns);
	else
		doc__printf(d, "-");
	REPORT_CELLS(d, w, NULL, report__rank_gpu);
	doc__cell(d);
	if (w->top_rule) {
		doc__code(d, "%s", w->top_rule);
		doc__printf(d, " (%.3f s)", w->top_cost_s);
	} else {
		doc__printf(d, "-");
	}
	doc__row_end(d);
}

static const struct doc_col comm_cols[] = {
	{ "communicator", false }, { "ranks", true }, { "collectives", true }, { "calls", false },
	{ "bytes per rank", true }, { "spread s", true }, { "others' wait s", true }, { "late", true },
};

static void md__comm_row(struct doc *d, const struct ranks_comm *c)
{
	bool first = true;

	doc__row(d);
	if (c->id_hash)
		doc__code(d, "%016llx", (unsigned long long)c->id_hash);
	else
		doc__printf(d, "set up before the recording");
	doc__printf(d, "\t%d\t%llu\t", c->nranks, (unsigned long long)c->collectives);
	for (__u16 f = 1; f < ISR_NCCL_FN_MAX; f++) {
		if (!c->calls[f])
			continue;
		doc__printf(d, "%s%s %llu", first ? "" : ", ", nccl_func_name(f), (unsigned long long)c->calls[f]);
		first = false;
	}
	doc__printf(d, "\t%llu\t%.3f\t%.3f\t%llu", (unsigned long long)c->bytes, c->spread_ns / 1e9,
		    c->straggler_waits_ns / 1e9, (unsigned long long)c->late);
	doc__row_end(d);
}

/* The ranks side by side (ranks.h): the alignment, one row per rank, the
 * communicators. */
static void md__ranks(struct doc *d, const struct ranks *r)
{
	struct doc_col cols[RANK_COLS];
	size_t n = 0;

	if (!r)
		return;
	doc__headingf(d, 2, "Ranks");
	md__rank_clocks(d, r);
	doc__para(d, "Lateness: a rank's arrival at a collective (its entry into the call) after the first rank's. "
		  "Last: collectives it arrived last at; late: last by %.0f ms or more. Held back: what its late "
		  "arrivals cost the job, less than the others' wait where they had work of their own meanwhile. "
		  "NCCL GPU: its NCCL kernels' "
		  "time on the GPU, which holds its wait for the slowest peer; joined, not joined: its collectives "
		  "with and without their kernel (CUPTI).", NCCL_LATE_NS / 1e6);
	for (size_t i = 0; i < DOC_NCOLS(rank_head_cols); i++)
		if (i != RANK_COL_RECORDING || r->nsources > 1)
			cols[n++] = rank_head_cols[i];
	REPORT_COLS(report__rank_arrivals, cols, &n);
	cols[n++] = (struct doc_col){ "GPU busy", true };
	REPORT_COLS(report__rank_gpu, cols, &n);
	cols[n++] = (struct doc_col){ "top finding", false };
	doc__table(d, cols, n);
	for (size_t i = 0; i < r->nrows; i++)
		md__rank_row(d, r, &r->rows[i]);
	doc__table_end(d);
	doc__headingf(d, 3, "Collectives");
	doc__table(d, comm_cols, DOC_NCOLS(comm_cols));
	for (size_t i = 0; i < r->ncomms; i++)
		md__comm_row(d, &r->comms[i]);
	doc__table_end(d);
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
		m->d.err = m->d.err ? m->d.err : -ENOMEM;
		return;
	}
	for (size_t i = 0; i < s->thread_count; i++)
		order[i] = &s->threads[i];
	qsort(order, s->thread_count, sizeof(*order), by_on_cpu_desc);
	steps_report__doc(&m->d, steps__result(a->ex->steps), STEPS_MD_ROWS);
	md__ranks(&m->d, a->ranks);
	md__sampling(m, s);
	md__threads(m, order, s->thread_count);
	md__cuda(m, a->r, s, order);
	md__gpu(m, s);
	md__gil(m, s, order);
	md__python_stacks(m, s, a->py);
	md__event_counts(m, s);
	free(order);
}

int report__doc_ranks(struct doc *d, const struct ranks *r)
{
	md__ranks(d, r);
	return doc__finish(d);
}

int report__doc_details(struct doc *d, const struct analysis *a)
{
	struct md m = { .d = *d };

	md__details(&m, a);
	*d = m.d;
	return doc__finish(d);
}

int report__write_markdown(FILE *f, const struct analysis *a)
{
	struct md m = { .d = { .f = f } };

	md__header(&m, a->r, a->sum);
	md__warnings(&m, a);
	md__findings(&m, &a->ex->findings, "Findings", REPORT_NO_FINDING, a->ex->verdict);
	md__details(&m, a);
	return doc__finish(&m.d);
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

	if (m->d.err)
		return;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		m->d.err = -errno;
		return;
	}
	e = report__write_markdown(mem, set->a[i]);
	if (fclose(mem) && !e)
		e = -EIO;
	if (e) {
		m->d.err = e;
		free(buf);
		return;
	}
	md__printf(m, "# Recording %zu of %zu: ", i + 1, set->n);
	md__text(m, set->names[i], SIZE_MAX);
	md__printf(m, "\n");
	p = strncmp(buf, title, sizeof(title) - 1) ? buf : buf + sizeof(title) - 1;
	for (char *nl; *p && !m->d.err; p = nl + 1) {
		nl = strchr(p, '\n');
		if (*p == '#')
			md__printf(m, "#");
		if (!nl) {
			md__printf(m, "%s", p);
			break;
		}
		if (fwrite(p, 1, (size_t)(nl - p) + 1, m->d.f) != (size_t)(nl - p) + 1)
			m->d.err = -EIO;
	}
	free(buf);
}

int report__write_markdown_set(FILE *f, const struct analysis_set *set)
{
	struct md m = { .d = { .f = f } };
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
		md__ranks(&m.d, set->ranks);
	else
		md__printf(&m, "## Ranks\n\nNo two ranks made NCCL collectives in these recordings: nothing to line up "
			       "(each recording's report follows).\n\n");
	md__findings(&m, &set->findings, "Findings across the recordings", REPORT_SET_NO_FINDING, NULL);
	for (size_t i = 0; i < set->n; i++)
		md__recording(&m, set, i);
	return doc__finish(&m.d);
}
