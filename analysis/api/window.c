// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A window's numbers (window.h), read from the analysis of its recording.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "window.h"
#include "analysis.h"

static double s_of(__u64 ns)
{
	return (double)ns / 1e9;
}

const char *window_severity_name(int severity)
{
	return severity >= SEV_INFO && severity <= SEV_CRITICAL ? finding_severity_name(severity) : "none";
}

/* The one place the daemon reads and analyzes a recording file: streamed
 * from the file (pass.h), as `analyze` does; the analysis owns the pass.
 * 0, or -errno with why in err. */
static int analyze_file(const char *path, struct analysis **a, char *err, size_t errlen)
{
	struct pass *p = NULL;
	int e;

	*a = NULL;
	e = pass__open_file(path, NULL, &p, err, errlen);
	if (e)
		return e;
	e = analysis__run_pass(p, a);
	if (e) {
		snprintf(err, errlen, "cannot analyze %s: %s", path, pass__error(p) ? pass__error(p) : strerror(-e));
		pass__free(p);
	}
	return e;
}

static struct window_process *proc_of(struct window_result *w, __u32 pid)
{
	for (size_t i = 0; i < w->proc_count; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	return NULL;
}

static int by_pid(const void *a, const void *b)
{
	const struct window_process *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int fill(struct window_result *w, const struct analysis *a)
{
	const struct recording *r = a->r;
	const struct summary *s = a->sum;
	const struct attribution *at = a->ex->attr;
	const struct findings *fs = &a->ex->findings;

	w->duration_s = s->duration_s;
	w->truncated = r->truncated;
	snprintf(w->truncation, sizeof(w->truncation), "%s", r->truncated ? r->truncation : "");
	w->events = s->event_total;
	w->drops_total = s->drops_total;
	w->budget_sampled = s->sampling.sampled;
	w->procs = calloc(r->process_count ? r->process_count : 1, sizeof(*w->procs));
	if (!w->procs)
		return -ENOMEM;
	for (size_t i = 0; i < r->process_count; i++) {
		struct window_process *p;

		if (proc_of(w, r->processes[i].pid))
			continue;
		p = &w->procs[w->proc_count++];
		p->pid = r->processes[i].pid;
		snprintf(p->comm, sizeof(p->comm), "%s", r->processes[i].comm ? r->processes[i].comm : "");
	}
	qsort(w->procs, w->proc_count, sizeof(*w->procs), by_pid);

	for (size_t i = 0; i < s->thread_count; i++) {
		const struct thread_summary *t = &s->threads[i];
		struct window_process *p = proc_of(w, t->pid);

		if (!p)
			continue;
		p->cpu_s += s_of(t->on_cpu_ns);
		p->cuda_sync_s += s_of(t->cuda_sync_ns);
		p->gil_wait_s += s_of(t->gil_wait_ns);
		p->cuda_launches += t->cuda_launches;
		if (!p->comm[0] && t->tid == t->pid)
			snprintf(p->comm, sizeof(p->comm), "%s", t->comm);
	}
	for (size_t i = 0; i < w->proc_count; i++) {
		struct window_process *p = &w->procs[i];
		const struct process_summary *ps = summary__process(s, p->pid);
		__u64 idle[CAUSE_MAX] = { 0 };
		struct tl_acc crit = { .cpu_wait_ns = 0 };

		if (ps) {
			p->device_memory_bytes = ps->device_live_bytes;
			p->device_memory_peak_bytes = ps->device_peak_bytes;
		}
		p->gpu_observed = attribution__gpu_observed(at, p->pid);
		for (size_t d = 0; d < attribution__device_count(at); d++) {
			const struct attr_device *dv = attribution__device_at(at, d);

			if (dv->pid != p->pid)
				continue;
			p->gpu_observed_s += s_of(dv->observed_ns);
			p->gpu_busy_s += s_of(dv->busy_ns);
			for (int c = 0; c < CAUSE_MAX; c++)
				idle[c] += dv->idle_ns[c];
		}
		if (p->gpu_observed)
			for (int c = 0; c < CAUSE_MAX && p->gpu_idle_count < WINDOW_MAX_CAUSES; c++)
				p->gpu_idle[p->gpu_idle_count++] =
					(struct window_amount){ cause_name((enum cause)c), s_of(idle[c]) };
		for (size_t k = 0; k < attribution__thread_count(at); k++) {
			const struct attr_thread *t = attribution__thread_at(at, k);

			if (t->pid != p->pid || !t->critical)
				continue;
			for (int c = 0; c < TL_CAT_MAX; c++)
				crit.ns[c] += t->window.ns[c];
		}
		for (int c = 0; c < TL_CAT_MAX && p->critical_count < WINDOW_MAX_STATES; c++)
			if (c != TL_UNKNOWN)
				p->critical[p->critical_count++] =
					(struct window_amount){ tl_cat_name((enum tl_cat)c), s_of(crit.ns[c]) };
	}

	/* Ranked: the first finding about a process is its costliest. */
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->v[i];
		struct window_process *p = f->pid ? proc_of(w, f->pid) : NULL;

		w->findings++;
		if ((int)f->severity > w->max_severity)
			w->max_severity = (int)f->severity;
		if (!p)
			continue;
		p->findings++;
		if ((int)f->severity > p->max_severity)
			p->max_severity = (int)f->severity;
		if (!p->top_rule) {
			p->top_rule = f->rule;
			p->top_severity = (int)f->severity;
			p->top_cost_s = f->cost_s;
		}
	}
	return 0;
}

int analyze__window(const char *path, struct window_result **out, char *err, size_t errlen)
{
	struct analysis *a;
	struct window_result *w = NULL;
	int e = analyze_file(path, &a, err, errlen);

	if (!e) {
		w = calloc(1, sizeof(*w));
		e = w ? fill(w, a) : -ENOMEM;
		if (e == -ENOMEM)
			snprintf(err, errlen, "out of memory analyzing %s", path);
	}
	analysis__free(a);
	if (e) {
		window_result__free(w);
		w = NULL;
	}
	*out = w;
	return e;
}

void window_result__free(struct window_result *w)
{
	if (!w)
		return;
	free(w->procs);
	free(w);
}
