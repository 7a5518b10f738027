// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "prom.h"
#include "out_file.h"
#include "text.h"

const char *daemon_error_name(enum daemon_error e)
{
	static const char *const names[DERR_MAX] = {
		[DERR_DISCOVER] = "discover", [DERR_RECORD] = "record",	    [DERR_DISK_FULL] = "disk_full",
		[DERR_ANALYZE] = "analyze",   [DERR_STATE_DIR] = "state_dir", [DERR_TEXTFILE] = "textfile",
		[DERR_CONFIG] = "config",
	};

	return e >= 0 && e < DERR_MAX ? names[e] : "unknown";
}

/* A label value: valid UTF-8 whatever a process named itself, its
 * backslashes and double quotes escaped (lib/text.h). */
static void label(FILE *f, const char *name, const char *v, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	text__write(f, v, SIZE_MAX, TEXT_PROM);
	fputc('"', f);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Counts and bytes exactly; seconds to the nanosecond below 10 s. */
static void value(FILE *f, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(f, " %.0f\n", v);
	else
		fprintf(f, " %.10g\n", v);
}

/* name{key="v"} n */
static void labelled(FILE *f, const char *name, const char *key, const char *v, double n)
{
	fprintf(f, "%s{", name);
	label(f, key, v, true);
	fputc('}', f);
	value(f, n);
}

static const struct discovered *target(const struct discovered *t, size_t n, __u32 pid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].pid == pid)
			return &t[i];
	return NULL;
}

/* name{pid,comm,container,pod[,extra=v]} */
static void proc_labels(FILE *f, const char *name, const struct window_process *p, const struct discovered *d,
			const char *k1, const char *v1, const char *k2, const char *v2)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%u", p->pid);
	fprintf(f, "%s{", name);
	label(f, "pid", pid, true);
	label(f, "comm", d && d->comm[0] ? d->comm : p->comm, false);
	label(f, "container", d ? d->container : "", false);
	label(f, "pod", d ? d->pod : "", false);
	if (k1)
		label(f, k1, v1, false);
	if (k2)
		label(f, k2, v2, false);
	fputc('}', f);
}

typedef double (*proc_get)(const struct window_process *p);

#define GETTER(fn, expr) \
	static double fn(const struct window_process *p) { return (double)(expr); }
GETTER(get_cpu, p->cpu_s)
GETTER(get_sync, p->cuda_sync_s)
GETTER(get_gil, p->gil_wait_s)
GETTER(get_launches, p->cuda_launches)
GETTER(get_mem, p->device_memory_bytes)
GETTER(get_mem_peak, p->device_memory_peak_bytes)
GETTER(get_gpu_observed, p->gpu_observed)
GETTER(get_findings, p->findings)
GETTER(get_severity, p->max_severity)
GETTER(get_gpu_busy, p->gpu_busy_s)
GETTER(get_gpu_observed_s, p->gpu_observed_s)

/* One line a process; a gpu gauge only for the processes whose GPU
 * activity was recorded. */
static const struct {
	const char *name, *help;
	proc_get get;
	bool gpu;
} proc_gauges[] = {
	{ "inferscope_process_cpu_seconds", "On-CPU time of the process's threads in the last window.", get_cpu,
	  false },
	{ "inferscope_process_cuda_sync_seconds",
	  "Time the process's threads spent in CUDA synchronizations in the last window.", get_sync, false },
	{ "inferscope_process_gil_wait_seconds",
	  "Time the process's threads waited for the Python GIL in the last window (record.gil).", get_gil, false },
	{ "inferscope_process_cuda_launches", "CUDA kernel launches in the last window (estimated when sampled).",
	  get_launches, false },
	{ "inferscope_process_device_memory_bytes", "CUDA device memory the process held at the end of the last window.",
	  get_mem, false },
	{ "inferscope_process_device_memory_peak_bytes", "The highest CUDA device memory of the process in the last window.",
	  get_mem_peak, false },
	{ "inferscope_process_gpu_observed",
	  "1 when the process's GPU activity was recorded (CUPTI bridge), so that GPU busy and idle are known.",
	  get_gpu_observed, false },
	{ "inferscope_process_findings", "Findings about the process in the last window.", get_findings, false },
	{ "inferscope_process_max_severity", "The most severe finding about the process: 0 none, 1 info, 2 warning, 3 critical.",
	  get_severity, false },
	{ "inferscope_process_gpu_busy_seconds",
	  "Time the process's GPU work kept its devices busy in the last window (when observed).", get_gpu_busy, true },
	{ "inferscope_process_gpu_observed_seconds",
	  "Time the process's devices were observed in the last window (when observed).", get_gpu_observed_s, true },
};

typedef const struct window_amount *(*proc_amounts_get)(const struct window_process *p, size_t *n);

static const struct window_amount *get_gpu_idle(const struct window_process *p, size_t *n)
{
	*n = p->gpu_idle_count;
	return p->gpu_idle;
}

static const struct window_amount *get_critical(const struct window_process *p, size_t *n)
{
	*n = p->critical_count;
	return p->critical;
}

/* A gauge of every process's amounts, each labelled key=its name. */
static void proc_amounts(FILE *f, const char *name, const char *help, const char *key, proc_amounts_get get,
			 const struct window_result *w, const struct discovered *t, size_t nt)
{
	head(f, name, "gauge", help);
	for (size_t i = 0; i < w->proc_count; i++) {
		const struct window_process *p = &w->procs[i];
		size_t n;
		const struct window_amount *a = get(p, &n);

		for (size_t c = 0; c < n; c++) {
			proc_labels(f, name, p, target(t, nt, p->pid), key, a[c].name, NULL, NULL);
			value(f, a[c].seconds);
		}
	}
}

static void counter(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s", name);
	value(f, v);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s", name);
	value(f, v);
}


static void window_metrics(FILE *f, const struct window_result *w, const struct discovered *t, size_t nt)
{
	for (size_t g = 0; g < sizeof(proc_gauges) / sizeof(proc_gauges[0]); g++) {
		head(f, proc_gauges[g].name, "gauge", proc_gauges[g].help);
		for (size_t i = 0; i < w->proc_count; i++) {
			if (proc_gauges[g].gpu && !w->procs[i].gpu_observed)
				continue;
			proc_labels(f, proc_gauges[g].name, &w->procs[i], target(t, nt, w->procs[i].pid), NULL, NULL,
				    NULL, NULL);
			value(f, proc_gauges[g].get(&w->procs[i]));
		}
	}
	proc_amounts(f, "inferscope_process_gpu_idle_seconds",
		     "GPU idle time of the process in the last window, by the cause it is attributed to "
		     "(docs/rules.md).", "cause", get_gpu_idle, w, t, nt);
	proc_amounts(f, "inferscope_process_critical_thread_seconds",
		     "Time of the process's critical threads (those that launch GPU work) in the last window, "
		     "by state.", "state", get_critical, w, t, nt);
	head(f, "inferscope_process_top_finding_cost_seconds", "gauge",
	     "The costliest finding about the process in the last window: its rule, severity and cost.");
	for (size_t i = 0; i < w->proc_count; i++)
		if (w->procs[i].top_rule) {
			proc_labels(f, "inferscope_process_top_finding_cost_seconds", &w->procs[i],
				    target(t, nt, w->procs[i].pid), "rule", w->procs[i].top_rule, "severity",
				    window_severity_name(w->procs[i].top_severity));
			value(f, w->procs[i].top_cost_s);
		}

	gauge(f, "inferscope_window_duration_seconds", "Length of the last window's recording.", w->duration_s);
	gauge(f, "inferscope_window_processes", "Processes recorded in the last window.", (double)w->proc_count);
	gauge(f, "inferscope_window_events", "Events recorded in the last window.", (double)w->events);
	gauge(f, "inferscope_window_dropped_events", "Events lost in the last window (docs/events.md).",
	      (double)w->drops_total);
	gauge(f, "inferscope_window_truncated",
	      "1 when the last window's recording was cut short (a full disk): it reads up to its last chunk.",
	      w->truncated);
	gauge(f, "inferscope_window_findings", "Findings of the last window.", (double)w->findings);
	gauge(f, "inferscope_window_max_severity",
	      "The most severe finding of the last window: 0 none, 1 info, 2 warning, 3 critical.", w->max_severity);
}

static void health(FILE *f, const struct daemon_health *h)
{
	head(f, "inferscope_daemon_windows_total", "counter", "Windows since the daemon started, by result.");
	labelled(f, "inferscope_daemon_windows_total", "result", "recorded", (double)h->windows_recorded);
	labelled(f, "inferscope_daemon_windows_total", "result", "failed", (double)h->windows_failed);
	labelled(f, "inferscope_daemon_windows_total", "result", "empty", (double)h->windows_empty);
	counter(f, "inferscope_daemon_events_total", "Events recorded since the daemon started.",
		(double)h->events_total);
	counter(f, "inferscope_daemon_dropped_events_total", "Events lost since the daemon started.",
		(double)h->drops_total);
	counter(f, "inferscope_daemon_truncated_recordings_total",
		"Recordings cut short (a full disk) since the daemon started; each reads up to its last chunk.",
		(double)h->truncated_total);
	head(f, "inferscope_daemon_errors_total", "counter", "Errors since the daemon started, by kind.");
	for (int k = 0; k < DERR_MAX; k++)
		labelled(f, "inferscope_daemon_errors_total", "kind", daemon_error_name((enum daemon_error)k),
			 (double)h->errors[k]);
	head(f, "inferscope_daemon_last_error", "gauge", "1 for the kind of the latest error (none when none).");
	if (h->last_error >= 0)
		labelled(f, "inferscope_daemon_last_error", "kind", daemon_error_name((enum daemon_error)h->last_error),
			 1);
	gauge(f, "inferscope_daemon_last_error_timestamp_seconds", "Unix time of the latest error; 0: none.",
	      h->last_error_time);
	head(f, "inferscope_daemon_recordings_removed_total", "counter",
	     "Recordings removed from the state directory, by reason.");
	labelled(f, "inferscope_daemon_recordings_removed_total", "reason", "policy", (double)h->removed_policy);
	labelled(f, "inferscope_daemon_recordings_removed_total", "reason", "size", (double)h->removed_size);
	labelled(f, "inferscope_daemon_recordings_removed_total", "reason", "age", (double)h->removed_age);
	labelled(f, "inferscope_daemon_recordings_removed_total", "reason", "space", (double)h->removed_space);
	head(f, "inferscope_daemon_config_reloads_total", "counter", "Configuration reloads (SIGHUP), by result.");
	labelled(f, "inferscope_daemon_config_reloads_total", "result", "applied", (double)h->reloads_ok);
	labelled(f, "inferscope_daemon_config_reloads_total", "result", "refused", (double)h->reloads_refused);
	gauge(f, "inferscope_daemon_recordings", "Recordings kept in the state directory.", (double)h->recordings_kept);
	gauge(f, "inferscope_daemon_recordings_bytes", "Total size of the recordings kept in the state directory.",
	      (double)h->recordings_bytes);
	gauge(f, "inferscope_daemon_budget_percent",
	      "The overhead budget, % of a traced thread's time (record.budget); 0: off.", h->budget_pct);
	gauge(f, "inferscope_daemon_budget_sampling",
	      "1 when the budget sampled the CUDA hot path in the last window (its counts are estimates).",
	      h->budget_sampled);
	gauge(f, "inferscope_daemon_interval_seconds", "A window starts every interval (daemon.interval).",
	      h->interval_s);
	gauge(f, "inferscope_daemon_window_seconds", "Recording time of a window (daemon.window).", h->window_s);
	gauge(f, "inferscope_daemon_last_window_timestamp_seconds", "Unix time the last window ended; 0: none yet.",
	      h->last_window_time);
	gauge(f, "inferscope_daemon_start_timestamp_seconds", "Unix time the daemon started.", h->start_time);
}

int prom__format(FILE *f, const struct window_result *w, const struct discovered *targets, size_t ntargets,
		 const struct daemon_health *h)
{
	if (w)
		window_metrics(f, w, targets, ntargets);
	health(f, h);
	return ferror(f) ? -EIO : 0;
}

int prom__write(const char *dir, const struct window_result *w, const struct discovered *targets, size_t ntargets,
		const struct daemon_health *h, char *err, size_t errlen)
{
	struct out_file of = { .fd = -1, .dirfd = -1 };
	char path[4200], *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int e;

	if (!mem)
		return -errno;
	e = prom__format(mem, w, targets, ntargets, h);
	if (fclose(mem) && !e)
		e = -ENOMEM;
	if (e) {
		free(buf);
		snprintf(err, errlen, "formatting the metrics failed: %s", strerror(-e));
		return e;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, PROM_FILE);
	/* A temporary name beginning with a dot, which node_exporter does not
	 * read (it reads *.prom), then rename(2) (lib/out_file.h). */
	e = out_file__create(&of, path, NULL);
	if (e) {
		free(buf);
		snprintf(err, errlen, "cannot create %s: %s", path, out_file__strerror(e));
		return e;
	}
	for (size_t done = 0; done < len && !e;) {
		ssize_t n = write(of.fd, buf + done, len - done);

		if (n < 0 && errno != EINTR)
			e = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	free(buf);
	/* node_exporter reads it as whoever it runs as. */
	if (!e && fchmod(of.fd, 0644))
		e = -errno;
	e = e ?: out_file__commit(&of);
	out_file__close(&of);
	if (e)
		snprintf(err, errlen, "writing %s failed: %s; the previous metrics stay", path, strerror(-e));
	return e;
}
