// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTML report: one self-contained page (no request leaves it: a
 * Content-Security-Policy forbids any), findings first, then inline SVG
 * charts of the series (series.h) on one time axis, then the evidence
 * tables: the Markdown report's sections, written as HTML from the same
 * calls (report_doc.h). Everything that comes from the recording goes
 * through text__write (lib/text.h); the chart data the script reads is
 * JSON with <, > and & escaped, and the script writes it as text only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "report_common.h"
#include "report_doc.h"
#include "series.h"
#include "text.h"
#include "proc_tree.h"
#include "py_report.h"
#include "tasks.h"

#define LABEL_W		170	/* label column of the time charts */
#define PLOT_W		SERIES_BUCKETS	/* one pixel per bucket */
#define CHART_W		(LABEL_W + PLOT_W + 24)
#define AXIS_H		22
#define DEV_H		56
#define THREAD_H	14
#define ROW_GAP		6
#define MEM_H		110
#define MAX_STRIPS	16
#define MAX_MEM_LINES	6
#define TOP_BARS	10

struct html {
	FILE *f;
	int err;
	/* a page of several recordings (report__write_html_set): */
	bool set;
	size_t rec, nrec;	/* the recording being written, of how many */
	const char *name;	/* its file */
	const char *idp;	/* what its element ids begin with (NULL: nothing) */
};

/* What the ids of the part being written begin with: nothing in a
 * recording's own page, its section's name in a page of several. */
static const char *idp(const struct html *h)
{
	return h->idp ? h->idp : "";
}

__attribute__((format(printf, 2, 3)))
static void hp(struct html *h, const char *fmt, ...)
{
	va_list ap;

	if (h->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(h->f, fmt, ap) < 0)
		h->err = -EIO;
	va_end(ap);
}

/* Recording text, escaped. */
static void ht(struct html *h, const char *s, size_t maxlen)
{
	if (!h->err && s)
		h->err = text__write(h->f, s, maxlen, TEXT_HTML);
}

/* --- colours, one per cause: the thread strips and the idle gaps share them --- */

static const char *const cause_colour[CAUSE_MAX] = {
	[CAUSE_SYNC_DRAIN] = "#d62728",
	[CAUSE_GIL] = "#9467bd",
	[CAUSE_SYNC] = "#e377c2",
	[CAUSE_CUDA_MEM] = "#8c564b",
	[CAUSE_CUDA] = "#bcbd22",
	[CAUSE_FAULT] = "#ff7f0e",
	[CAUSE_RECLAIM] = "#ffbb78",
	[CAUSE_RUNQUEUE] = "#17becf",
	[CAUSE_IO] = "#7f7f7f",
	[CAUSE_BLOCKED] = "#c7c7c7",
	[CAUSE_PYTHON] = "#1f77b4",
	[CAUSE_NATIVE] = "#9ecae1",
	[CAUSE_LAUNCH_LATENCY] = "#98df8a",
	[CAUSE_LAUNCH_OVERHEAD] = "#dbdb8d",
	[CAUSE_UNKNOWN] = "#ebebeb",
};

#define BUSY_COLOUR	"#2ca02c"
#define BEFORE_COLOUR	"#f3f3f3"

static const char *idle_colour(int k)
{
	return k == SERIES_BEFORE_FIRST ? BEFORE_COLOUR : cause_colour[k];
}

static const char *idle_label(int k)
{
	return k == SERIES_BEFORE_FIRST ? "before its first work" : cause_label((enum cause)k);
}

static const char *const css =
	"*{box-sizing:border-box}"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;"
	"color:#1d2329;background:#f6f7f9}"
	"main{max-width:1240px;margin:0 auto;padding:24px 28px 60px;background:#fff;min-height:100vh}"
	"h1{font-size:24px;margin:0 0 6px}h2{font-size:19px;margin:34px 0 10px;padding-bottom:4px;"
	"border-bottom:1px solid #e3e6ea}h3{font-size:15px;margin:20px 0 8px}h4{font-size:14px;margin:16px 0 6px}"
	"code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}"
	"code{background:#f1f3f5;padding:1px 4px;border-radius:3px}"
	"pre{background:#f6f8fa;padding:8px 10px;border-radius:4px;overflow-x:auto}"
	".meta{color:#4a5560;margin:0 0 4px}.meta b{color:#1d2329}ul.tree,ul.tree ul{margin:2px 0;padding-left:18px}"
	".warn{background:#fff4e5;border-left:4px solid #f0a030;padding:8px 12px;margin:12px 0}"
	"blockquote{margin:10px 0;background:#fff8ec;border-left:4px solid #f0a030;padding:6px 12px}"
	"ol.findings{list-style:none;padding:0;margin:0}"
	".finding{border:1px solid #e3e6ea;border-left:5px solid #9aa5b1;border-radius:6px;padding:12px 16px;"
	"margin:0 0 12px}"
	".finding.critical{border-left-color:#d62728}.finding.warning{border-left-color:#f0a030}"
	".finding.info{border-left-color:#4c8bd6}"
	".fhead{display:flex;align-items:baseline;gap:10px;flex-wrap:wrap}"
	".fhead h3{margin:0;font-size:16px}.rank{font-weight:700;color:#6b7680}"
	".cost{font-weight:700;font-variant-numeric:tabular-nums}"
	".badge{font-size:11px;text-transform:uppercase;letter-spacing:.04em;padding:1px 7px;border-radius:9px;"
	"background:#e9edf1;color:#4a5560}.critical .badge{background:#fde2e2;color:#a61b1b}"
	".warning .badge{background:#fdf0d9;color:#8a5300}.info .badge{background:#e2edfb;color:#1e4f8f}"
	".suggestion{background:#f2f8f2;border-radius:4px;padding:6px 10px}"
	"details summary{cursor:pointer;color:#4a5560}"
	"table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}"
	"th,td{border-bottom:1px solid #e6e9ec;padding:3px 9px;text-align:left;vertical-align:top}"
	"th{background:#f6f7f9;font-weight:600;cursor:pointer;user-select:none;white-space:nowrap}"
	"th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}"
	"th[data-dir=asc]:after{content:' \\25b2'}th[data-dir=desc]:after{content:' \\25bc'}"
	"table.ev{font-size:12.5px;margin:4px 0}table.ev th{cursor:default}"
	"figure{margin:8px 0 22px}figcaption{color:#4a5560;margin:0 0 6px}"
	"svg{display:block;max-width:100%;height:auto}svg text{font-size:11px;fill:#4a5560}"
	"svg .lab{fill:#1d2329}.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 10px;font-size:12.5px}"
	".legend span{display:inline-flex;align-items:center;gap:5px}"
	".legend i{display:inline-block;width:12px;height:12px;border-radius:2px;border:1px solid rgba(0,0,0,.15)}"
	".none{color:#6b7680;font-style:italic}"
	"#tip{position:fixed;display:none;pointer-events:none;background:rgba(29,35,41,.94);color:#fff;"
	"font-size:12px;padding:6px 9px;border-radius:4px;z-index:9;max-width:420px;white-space:pre}"
	"footer{margin-top:40px;color:#8a949e;font-size:12px}";

/* --- findings ----------------------------------------------------------------------- */

/* A rule's prose: `code spans` become <code>. */
static void prose(struct html *h, const char *s)
{
	bool code = false;

	while (*s && !h->err) {
		const char *tick = strchr(s, '`');
		size_t n = tick ? (size_t)(tick - s) : strlen(s);

		ht(h, s, n);
		if (!tick)
			break;
		hp(h, code ? "</code>" : "<code>");
		code = !code;
		s = tick + 1;
	}
	if (code)
		hp(h, "</code>");
}

static void json_scalar(struct html *h, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		ht(h, json_string_value(v), SIZE_MAX);
		break;
	case JSON_INTEGER:
		hp(h, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		hp(h, "%.6g", json_real_value(v));
		break;
	case JSON_TRUE:
		hp(h, "yes");
		break;
	case JSON_FALSE:
		hp(h, "no");
		break;
	default:
		hp(h, "–");
	}
}

static void json_html(struct html *h, const json_t *v, int depth);

/* An array of objects: a table with the first object's keys as columns. */
static void json_rows(struct html *h, const json_t *arr, int depth)
{
	const json_t *first = json_array_get(arr, 0), *row, *cell;
	const char *key;
	size_t i;

	hp(h, "<table class=\"ev\"><tr>");
	json_object_foreach((json_t *)first, key, cell) {
		hp(h, "<th>");
		ht(h, key, SIZE_MAX);
		hp(h, "</th>");
	}
	hp(h, "</tr>");
	json_array_foreach(arr, i, row) {
		hp(h, "<tr>");
		json_object_foreach((json_t *)first, key, cell) {
			hp(h, "<td>");
			json_html(h, json_object_get(row, key), depth + 1);
			hp(h, "</td>");
		}
		hp(h, "</tr>");
	}
	hp(h, "</table>");
}

static void json_html(struct html *h, const json_t *v, int depth)
{
	const char *key;
	json_t *val;
	size_t i;

	if (!v) {
		hp(h, "–");
		return;
	}
	if (depth > 6) {
		hp(h, "…");
		return;
	}
	if (json_is_object(v)) {
		hp(h, "<table class=\"ev\">");
		json_object_foreach((json_t *)v, key, val) {
			hp(h, "<tr><th>");
			ht(h, key, SIZE_MAX);
			hp(h, "</th><td>");
			json_html(h, val, depth + 1);
			hp(h, "</td></tr>");
		}
		hp(h, "</table>");
	} else if (json_is_array(v)) {
		if (json_array_size(v) && json_is_object(json_array_get(v, 0))) {
			json_rows(h, v, depth);
			return;
		}
		json_array_foreach(v, i, val) {
			if (i)
				hp(h, ", ");
			json_html(h, val, depth + 1);
		}
	} else {
		json_scalar(h, v);
	}
}

static void findings(struct html *h, const struct findings *fs, const char *title, const char *none,
		     const char *verdict)
{
	hp(h, "<section id=\"%sfindings\"><h2>%s</h2>\n", idp(h), title);
	if (!fs->n)
		hp(h, "<p class=\"none\">%s</p>\n", none);
	if (verdict && verdict[0]) {
		hp(h, "<p class=\"verdict\">");
		ht(h, verdict, SIZE_MAX);
		hp(h, "</p>\n");
	}
	hp(h, "<ol class=\"findings\">\n");
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->v[i];
		const char *sev = finding_severity_name(f->severity);

		hp(h, "<li class=\"finding %s\" id=\"%sfinding-%zu\" data-rule=\"%s\"><div class=\"fhead\">"
		      "<span class=\"rank\">%zu.</span>", sev, idp(h), i + 1, f->rule, i + 1);
		if (f->cost_s > 0)
			hp(h, "<span class=\"cost\">%.3f s</span>", f->cost_s);
		hp(h, "<h3>");
		ht(h, explain__rule_title(f->rule), SIZE_MAX);
		hp(h, "</h3><span class=\"badge\">%s</span><code>%s</code></div>\n<p class=\"summary\">", sev, f->rule);
		prose(h, f->summary);
		hp(h, "</p>\n");
		if (json_object_size(f->evidence)) {
			hp(h, "<details class=\"evidence\"><summary>Evidence</summary>");
			json_html(h, f->evidence, 0);
			hp(h, "</details>\n");
		}
		if (f->suggestion[0] && findings__same_advice(fs, i) < i) {
			hp(h, "<p class=\"suggestion\"><b>What to do:</b> As for finding <a href=\"#%sfinding-%zu\">%zu"
			      "</a>.</p>\n", idp(h), findings__same_advice(fs, i) + 1, findings__same_advice(fs, i) + 1);
		} else if (f->suggestion[0]) {
			hp(h, "<p class=\"suggestion\"><b>What to do:</b> ");
			prose(h, f->suggestion);
			hp(h, "</p>\n");
		}
		hp(h, "</li>\n");
	}
	hp(h, "</ol>\n");
	if (fs->nnj) {
		hp(h, "<p>Not judged:</p><ul>");
		for (size_t i = 0; i < fs->nnj; i++) {
			hp(h, "<li><code>%s</code>: needs ", fs->nj[i].rule);
			ht(h, fs->nj[i].needs, SIZE_MAX);
			hp(h, "</li>");
		}
		hp(h, "</ul>\n");
	}
	hp(h, "</section>\n");
}

/* --- header -------------------------------------------------------------------------- */

/* The targets as nested lists: each child under its parent, its role
 * when its names tell (analysis/model/proc_tree.h). */
static void process_tree(struct html *h, const struct recording *r, const struct summary *s)
{
	struct proc_tree t;
	size_t depth = 0;

	if (proc_tree__build(r, s, &t)) {
		proc_tree__free(&t);
		h->err = h->err ?: -ENOMEM;
		return;
	}
	if (!t.count) {
		proc_tree__free(&t);
		return;
	}
	hp(h, "<div class=\"meta\" id=\"%sprocess-tree\"><b>Targets</b> (%zu process%s%s", idp(h), t.count,
	   t.count == 1 ? "" : "es", t.count > t.roots ? ", a child under its parent" : "");
	if (t.folded)
		hp(h, ", %zu short-lived folded", t.folded);
	if (t.wrappers)
		hp(h, ", %zu wrapper%s folded", t.wrappers, t.wrappers == 1 ? "" : "s");
	hp(h, "):\n<ul class=\"tree\">");
	for (size_t i = 0, shown = 0; i < t.count; i++) {
		const struct proc_node *n = &t.nodes[i];

		if (n->short_lived || n->wrapper)
			continue;
		if (shown && n->shown_depth > depth)
			hp(h, "\n<ul>");
		else if (shown)
			hp(h, "</li>");
		for (; depth > n->shown_depth; depth--)
			hp(h, "</ul></li>");
		depth = n->shown_depth;
		shown++;
		hp(h, "\n<li>pid %u <code>", n->pid);
		ht(h, n->comm ? n->comm : "?", 16);
		hp(h, "</code>");
		if (n->role) {
			hp(h, " <b>");
			ht(h, proc_role__text(n->role), SIZE_MAX);
			hp(h, "</b>");
		}
		hp(h, " · %zu thread%s, %.2f s on CPU · ", n->threads, n->threads == 1 ? "" : "s", (double)n->on_cpu_ns / 1e9);
		ht(h, n->latest->cmdline ? n->latest->cmdline : "", 400);
		if (n->wrappers) {
			hp(h, "\n<ul><li>started through %zu wrapper%s, folded (each only started the next, in one thread, "
			      "at most %.2f s on CPU, no CUDA): ", n->wrappers, n->wrappers == 1 ? "" : "s",
			   PROC_TREE_WRAPPER_CPU_NS / 1e9);
			ht(h, n->wrapper_names, sizeof(n->wrapper_names));
			hp(h, "</li></ul>");
		}
		if (n->folded) {
			hp(h, "\n<ul><li>%zu short-lived process%s folded (each began and ended within %.1f s, no CUDA): ",
			   n->folded, n->folded == 1 ? "" : "es", PROC_TREE_SHORT_NS / 1e9);
			ht(h, n->folded_names, sizeof(n->folded_names));
			hp(h, "</li></ul>");
		}
	}
	hp(h, "</li>");
	for (; depth > 0; depth--)
		hp(h, "</ul></li>");
	hp(h, "</ul></div>\n");
	proc_tree__free(&t);
}

static void header(struct html *h, const struct analysis *a)
{
	const struct recording *r = a->r;
	const struct summary *s = a->sum;

	if (h->set) {
		hp(h, "<header><h1>Recording %zu of %zu: ", h->rec + 1, h->nrec);
		ht(h, h->name, SIZE_MAX);
		hp(h, "</h1>\n<p class=\"meta\"><b>Host:</b> ");
	} else {
		hp(h, "<header><h1>inferscope-bpf report</h1>\n<p class=\"meta\"><b>Host:</b> ");
	}
	ht(h, r->host.hostname && *r->host.hostname ? r->host.hostname : "unknown", SIZE_MAX);
	hp(h, ", Linux ");
	ht(h, r->host.kernel ? r->host.kernel : "unknown", SIZE_MAX);
	hp(h, ", %u CPUs · <b>Recorded:</b> %.3f s · <b>Events:</b> %" PRIu64 "</p>\n", r->host.ncpus, s->duration_s,
	   (uint64_t)s->event_total);
	process_tree(h, r, s);
	hp(h, "</header>\n");
	if (r->truncated) {
		hp(h, "<p class=\"warn\"><b>The recording is truncated</b> (");
		ht(h, r->truncation, sizeof(r->truncation));
		hp(h, "): events after that point are lost.</p>\n");
	}
	if (s->drops_total)
		hp(h, "<p class=\"warn\"><b>%" PRIu64 " events were dropped</b> and are missing from this report "
		      "(by source in the tables below).</p>\n", (uint64_t)s->drops_total);
}

/* --- time charts ------------------------------------------------------------------------ */

static double ns_frac(__u64 part, __u64 whole)
{
	return whole ? (double)part / (double)whole : 0;
}

/* The time axis under a chart of height top (plot) at y = top. */
static void time_axis(struct html *h, const struct series *s, int top)
{
	double total = (double)series__bucket_ns(s) * SERIES_BUCKETS;
	double span = 0, step;
	int decimals;

	for (size_t b = 0; b < SERIES_BUCKETS; b++)
		span += (double)series__bucket_span(s, b);
	if (span <= 0)
		return;
	step = pow(10, floor(log10(span / 8)));
	if (span / step > 20)
		step *= 5;
	else if (span / step > 10)
		step *= 2;
	decimals = step >= 1e9 ? 0 : step >= 1e8 ? 1 : step >= 1e7 ? 2 : step >= 1e6 ? 3 : 6;
	hp(h, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#9aa5b1\"/>", LABEL_W, top, LABEL_W + PLOT_W, top);
	for (double t = 0; t <= span + 1; t += step) {
		double x = LABEL_W + t / total * PLOT_W;

		hp(h, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#9aa5b1\"/>"
		      "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*f s</text>",
		   x, top, x, top + 4, x, top + 16, decimals, t / 1e9);
	}
}

/* The frame of a time chart: an svg with its hover data. */
static void chart_open(struct html *h, const char *kind, int height, int row_h, int top)
{
	hp(h, "<svg class=\"tc\" ");
	if (h->set)
		hp(h, "data-rec=\"%zu\" ", h->rec);
	hp(h, "data-kind=\"%s\" data-rowh=\"%d\" data-top=\"%d\" width=\"%d\" height=\"%d\" "
	      "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">",
	   kind, row_h, top, CHART_W, height, CHART_W, height);
}

static void chart_close(struct html *h, int height)
{
	hp(h, "<line class=\"cursor\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"%d\" stroke=\"#1d2329\" stroke-width=\"1\" "
	      "visibility=\"hidden\"/></svg>\n", height);
}

static void row_label(struct html *h, int y, const char *main, size_t mlen, const char *sub)
{
	hp(h, "<text class=\"lab\" x=\"4\" y=\"%d\">", y);
	ht(h, main, mlen);
	hp(h, "</text>");
	if (sub) {
		hp(h, "<text x=\"4\" y=\"%d\">", y + 13);
		ht(h, sub, SIZE_MAX);
		hp(h, "</text>");
	}
}

/* One stacked layer of a device row: from the baseline up to cum[b]. */
static void layer(struct html *h, const double *cum, int y0, int height, const char *colour)
{
	hp(h, "<path fill=\"%s\" d=\"M%d %dV%.1f", colour, LABEL_W, y0 + height, y0 + height - cum[0] * height);
	for (size_t b = 0; b < SERIES_BUCKETS; b++) {
		if (b && fabs(cum[b] - cum[b - 1]) > 0.0005)
			hp(h, "V%.1f", y0 + height - cum[b] * height);
		hp(h, "h1");
	}
	hp(h, "V%dz\"/>", y0 + height);
}

static bool gpu_chart(struct html *h, const struct series *s, json_t *data)
{
	size_t n = series__device_count(s);
	int height = (int)n * (DEV_H + ROW_GAP) + AXIS_H + 4;
	double *cum = calloc(SERIES_BUCKETS * (SERIES_IDLE_KINDS + 1), sizeof(*cum));
	json_t *devs = json_array();

	if (!cum || !devs || json_object_set_new(data, "dev", devs)) {
		free(cum);
		return false;
	}
	hp(h, "<figure id=\"%schart-gpu\" class=\"chart\"><figcaption>GPU busy (green) and idle time per device, "
	      "idle coloured by what the launching thread was doing (the attribution of each gap)</figcaption>\n", idp(h));
	if (!n) {
		hp(h, "<p class=\"none\">No GPU activity was recorded (record with <code>--gpu</code>).</p></figure>\n");
		free(cum);
		return true;
	}
	chart_open(h, "dev", height, DEV_H + ROW_GAP, 0);
	for (size_t i = 0; i < n; i++) {
		const struct series_device *d = series__device_at(s, i);
		int y0 = (int)i * (DEV_H + ROW_GAP);
		json_t *o = json_object(), *busy = json_array(), *idle = json_object();
		char label[48], sub[48];
		__u64 busy_total = 0, seen = 0;

		if (!o || !busy || !idle || json_array_append_new(devs, o) || json_object_set_new(o, "busy", busy) ||
		    json_object_set_new(o, "idle", idle)) {
			json_decref(busy);
			json_decref(idle);
			free(cum);
			return false;
		}
		/* cumulative shares: busy first, then each idle kind */
		for (size_t b = 0; b < SERIES_BUCKETS; b++) {
			__u64 w = series__bucket_span(s, b);
			double acc = ns_frac(d->busy_ns[b], w);

			cum[b] = acc;
			json_array_append_new(busy, json_integer(lround(acc * 1000)));
			busy_total += d->busy_ns[b];
			seen += d->busy_ns[b];
			for (int k = 0; k < SERIES_IDLE_KINDS; k++) {
				acc += ns_frac(d->idle_ns[b][k], w);
				cum[(size_t)(k + 1) * SERIES_BUCKETS + b] = acc > 1 ? 1 : acc;
				seen += d->idle_ns[b][k];
			}
		}
		snprintf(label, sizeof(label), "pid %u GPU %u", d->pid, d->device);
		snprintf(sub, sizeof(sub), "busy %.1f%%", 100.0 * ns_frac(busy_total, seen));
		hp(h, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafbfc\" stroke=\"#e3e6ea\"/>", LABEL_W,
		   y0, PLOT_W, DEV_H);
		row_label(h, y0 + 22, label, sizeof(label), sub);
		for (int k = SERIES_IDLE_KINDS - 1; k >= 0; k--) {
			bool any = false;
			json_t *arr;

			for (size_t b = 0; b < SERIES_BUCKETS && !any; b++)
				any = d->idle_ns[b][k] > 0;
			if (!any)
				continue;
			layer(h, cum + (size_t)(k + 1) * SERIES_BUCKETS, y0, DEV_H, idle_colour(k));
			arr = json_array();
			if (!arr || json_object_set_new(idle, k == SERIES_BEFORE_FIRST ? "before" : cause_name((enum cause)k),
							arr)) {
				free(cum);
				return false;
			}
			for (size_t b = 0; b < SERIES_BUCKETS; b++)
				json_array_append_new(arr, json_integer(lround(1000 * ns_frac(d->idle_ns[b][k],
											  series__bucket_span(s, b)))));
		}
		layer(h, cum, y0, DEV_H, BUSY_COLOUR);
		json_object_set_new(o, "label", json_string(label));
	}
	time_axis(h, s, (int)n * (DEV_H + ROW_GAP));
	chart_close(h, height);
	hp(h, "</figure>\n");
	free(cum);
	return true;
}

static int strip_order(const void *a, const void *b)
{
	const struct attr_thread *x = *(const struct attr_thread *const *)a, *y = *(const struct attr_thread *const *)b;

	if (x->launcher != y->launcher)
		return x->launcher ? -1 : 1;
	if (x->window.ns[TL_RUNNING] != y->window.ns[TL_RUNNING])
		return x->window.ns[TL_RUNNING] > y->window.ns[TL_RUNNING] ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The launching threads (or every thread of a CPU-only target): one strip
 * each, a path per state. */
static bool thread_chart(struct html *h, const struct analysis *a, json_t *data)
{
	const struct attribution *at = a->ex->attr;
	const struct series *s = a->ex->series;
	const struct attr_thread **v = calloc(attribution__thread_count(at) + 1, sizeof(*v));
	const struct series_thread *strips[MAX_STRIPS];
	size_t n = 0, k = 0;
	json_t *thr = json_array();
	int height;

	if (!v || !thr || json_object_set_new(data, "thr", thr)) {
		free(v);
		return false;
	}
	for (size_t i = 0; i < attribution__thread_count(at); i++)
		if (attribution__thread_at(at, i)->critical)
			v[n++] = attribution__thread_at(at, i);
	qsort(v, n, sizeof(*v), strip_order);
	for (size_t i = 0; i < n && k < MAX_STRIPS; i++) {
		const struct series_thread *st = series__thread(s, v[i]->pid, v[i]->tid);

		if (st)
			strips[k++] = st;
	}
	free(v);
	hp(h, "<figure id=\"%schart-threads\" class=\"chart\"><figcaption>What the launching threads were doing "
	      "(per pixel, the state they spent most of it in)</figcaption>\n", idp(h));
	if (!k) {
		hp(h, "<p class=\"none\">No target thread was seen.</p></figure>\n");
		return true;
	}
	height = (int)k * (THREAD_H + ROW_GAP) + AXIS_H + 4;
	chart_open(h, "thr", height, THREAD_H + ROW_GAP, 0);
	for (size_t i = 0; i < k; i++) {
		const struct series_thread *st = strips[i];
		int y0 = (int)i * (THREAD_H + ROW_GAP);
		char code[SERIES_BUCKETS + 1], name[TASK_NAME_LEN];
		json_t *o = json_object(), *comm;

		task_name__format(name, sizeof(name), st->comm, summary__process_name(a->sum, st->pid),
				  py_report__thread_entry(a->py, st->pid, st->tid));
		hp(h, "<text class=\"lab\" x=\"4\" y=\"%d\">%u <tspan>", y0 + 11, st->tid);
		ht(h, name, sizeof(name));
		hp(h, "</tspan></text>");
		for (int c = 0; c < CAUSE_MAX; c++) {
			bool open = false;

			for (size_t b = 0; b < SERIES_BUCKETS;) {
				size_t e = b;

				if (st->state[b] != c) {
					b++;
					continue;
				}
				while (e < SERIES_BUCKETS && st->state[e] == c)
					e++;
				if (!open)
					hp(h, "<path fill=\"%s\" d=\"", cause_colour[c]);
				open = true;
				hp(h, "M%zu %dh%zuv%dh-%zuz", LABEL_W + b, y0, e - b, THREAD_H, e - b);
				b = e;
			}
			if (open)
				hp(h, "\"/>");
		}
		for (size_t b = 0; b < SERIES_BUCKETS; b++)
			code[b] = st->state[b] == SERIES_NO_STATE ? '.' : (char)('a' + st->state[b]);
		code[SERIES_BUCKETS] = '\0';
		if (!o || json_array_append_new(thr, o))
			return false;
		json_object_set_new(o, "tid", json_integer(st->tid));
		comm = ev_text(name, sizeof(name));
		json_object_set_new(o, "comm", comm ? comm : json_string("?"));
		json_object_set_new(o, "s", json_string(code));
	}
	time_axis(h, s, (int)k * (THREAD_H + ROW_GAP));
	chart_close(h, height);
	hp(h, "</figure>\n");
	return true;
}

static const char *const line_colour[MAX_MEM_LINES] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
							 "#8c564b" };

static void bytes_text(char *buf, size_t len, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
	else if (bytes >= 1024.0 * 1024)
		snprintf(buf, len, "%.1f MiB", bytes / (1024.0 * 1024));
	else
		snprintf(buf, len, "%.0f KiB", bytes / 1024.0);
}

static bool memory_chart(struct html *h, const struct series *s, json_t *data)
{
	size_t n = series__memory_count(s), shown = n < MAX_MEM_LINES ? n : MAX_MEM_LINES;
	__u64 top = 0;
	int height = MEM_H + AXIS_H + 8, y0 = 4;
	json_t *mem = json_array();
	char buf[32];

	if (!mem || json_object_set_new(data, "mem", mem))
		return false;
	hp(h, "<figure id=\"%schart-memory\" class=\"chart\"><figcaption>Device memory held per process (the most "
	      "within each pixel)</figcaption>\n", idp(h));
	for (size_t i = 0; i < shown; i++)
		if (series__memory_at(s, i)->peak > top)
			top = series__memory_at(s, i)->peak;
	if (!top) {
		hp(h, "<p class=\"none\">No device memory was allocated while recording.</p></figure>\n");
		return true;
	}
	chart_open(h, "mem", height, MEM_H, y0);
	hp(h, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafbfc\" stroke=\"#e3e6ea\"/>", LABEL_W, y0,
	   PLOT_W, MEM_H);
	bytes_text(buf, sizeof(buf), (double)top);
	hp(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>",
	   LABEL_W - 4, y0 + 10, buf, LABEL_W - 4, y0 + MEM_H);
	for (size_t i = 0; i < shown; i++) {
		const struct series_memory *m = series__memory_at(s, i);
		json_t *o = json_object(), *arr = json_array();
		char label[40];

		if (!o || !arr || json_array_append_new(mem, o) || json_object_set_new(o, "mib", arr)) {
			json_decref(arr);
			return false;
		}
		snprintf(label, sizeof(label), "pid %u", m->pid);
		json_object_set_new(o, "label", json_string(label));
		hp(h, "<text x=\"4\" y=\"%d\" fill=\"%s\" class=\"lab\">pid %u</text>", y0 + 24 + (int)i * 14,
		   line_colour[i], m->pid);
		hp(h, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%d %.1f", line_colour[i], LABEL_W,
		   y0 + MEM_H - ns_frac(m->max_bytes[0], top) * MEM_H);
		for (size_t b = 0; b < SERIES_BUCKETS; b++) {
			if (b && m->max_bytes[b] != m->max_bytes[b - 1])
				hp(h, "V%.1f", y0 + MEM_H - ns_frac(m->max_bytes[b], top) * MEM_H);
			hp(h, "h1");
			json_array_append_new(arr, json_real(round((double)m->max_bytes[b] / (1024.0 * 1024) * 10) / 10));
		}
		hp(h, "\"/>");
	}
	time_axis(h, s, y0 + MEM_H);
	chart_close(h, height);
	hp(h, "</figure>\n");
	return true;
}

static void legend(struct html *h)
{
	hp(h, "<div class=\"legend\" id=\"%slegend\"><span><i style=\"background:%s\"></i>GPU busy</span>", idp(h),
	   BUSY_COLOUR);
	for (int c = 0; c < CAUSE_MAX; c++)
		hp(h, "<span data-cause=\"%s\"><i style=\"background:%s\"></i>%s</span>", cause_name((enum cause)c),
		   cause_colour[c], cause_label((enum cause)c));
	hp(h, "<span><i style=\"background:%s\"></i>%s</span></div>\n", BEFORE_COLOUR, idle_label(SERIES_BEFORE_FIRST));
}

/* --- bar charts from the summary ------------------------------------------------------------- */

static int kernel_desc(const void *a, const void *b)
{
	const struct gpu_kernel_stat *x = *(const struct gpu_kernel_stat *const *)a;
	const struct gpu_kernel_stat *y = *(const struct gpu_kernel_stat *const *)b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

#define BAR_LABEL_W	380
#define BAR_W		560
#define BAR_H		18

static void bar(struct html *h, int i, double frac, const char *colour)
{
	hp(h, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>", BAR_LABEL_W, i * (BAR_H + 6),
	   frac * BAR_W + 1, BAR_H, colour);
}

static bool kernel_chart(struct html *h, const struct summary *s)
{
	const struct gpu_kernel_stat **v = calloc(s->gpu_kernel_count + 1, sizeof(*v));
	size_t n = s->gpu_kernel_count < TOP_BARS ? s->gpu_kernel_count : TOP_BARS;
	__u64 all = 0;

	if (!v)
		return false;
	for (size_t i = 0; i < s->gpu_kernel_count; i++) {
		v[i] = &s->gpu_kernels[i];
		all += v[i]->total_ns;
	}
	qsort(v, s->gpu_kernel_count, sizeof(*v), kernel_desc);
	hp(h, "<figure id=\"%schart-kernels\" class=\"chart\"><figcaption>Top kernels by GPU time</figcaption>\n", idp(h));
	if (!n) {
		hp(h, "<p class=\"none\">No GPU kernel was recorded.</p></figure>\n");
		free(v);
		return true;
	}
	hp(h, "<svg width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">",
	   BAR_LABEL_W + BAR_W + 260, n * (BAR_H + 6), BAR_LABEL_W + BAR_W + 260, n * (BAR_H + 6));
	for (size_t i = 0; i < n; i++) {
		const struct gpu_kernel_stat *k = v[i];

		hp(h, "<g><title>");
		ht(h, k->name, SIZE_MAX);
		hp(h, "</title><text class=\"lab\" x=\"%d\" y=\"%zu\" text-anchor=\"end\">", BAR_LABEL_W - 6,
		   i * (BAR_H + 6) + 13);
		ht(h, k->name, 56);
		hp(h, "%s</text>", strlen(k->name) > 56 ? "…" : "");
		bar(h, (int)i, ns_frac(k->total_ns, v[0]->total_ns), "#4c8bd6");
		hp(h, "<text x=\"%.1f\" y=\"%zu\">%.3f ms · %.1f%% · %" PRIu64 "× · pid %u</text></g>",
		   BAR_LABEL_W + ns_frac(k->total_ns, v[0]->total_ns) * BAR_W + 6, i * (BAR_H + 6) + 13, k->total_ns / 1e6,
		   100 * ns_frac(k->total_ns, all), (uint64_t)k->count, k->pid);
	}
	hp(h, "</svg></figure>\n");
	free(v);
	return true;
}

static void copy_chart(struct html *h, const struct summary *s)
{
	__u64 top = 0;

	hp(h, "<figure id=\"%schart-copies\" class=\"chart\"><figcaption>Copies by kind: bytes, and the bandwidth they "
	      "ran at on the GPU</figcaption>\n", idp(h));
	if (!s->gpu_copy_count) {
		hp(h, "<p class=\"none\">No GPU copy was recorded.</p></figure>\n");
		return;
	}
	for (size_t i = 0; i < s->gpu_copy_count; i++)
		if (s->gpu_copies[i].bytes > top)
			top = s->gpu_copies[i].bytes;
	hp(h, "<svg width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">",
	   BAR_LABEL_W + BAR_W + 260, s->gpu_copy_count * (BAR_H + 6), BAR_LABEL_W + BAR_W + 260,
	   s->gpu_copy_count * (BAR_H + 6));
	for (size_t i = 0; i < s->gpu_copy_count; i++) {
		const struct gpu_copy_stat *c = &s->gpu_copies[i];
		char bytes[32];

		bytes_text(bytes, sizeof(bytes), (double)c->bytes);
		hp(h, "<text class=\"lab\" x=\"%d\" y=\"%zu\" text-anchor=\"end\">pid %u %s</text>", BAR_LABEL_W - 6,
		   i * (BAR_H + 6) + 13, c->pid, report__copy_kind_name(c->copy_kind));
		bar(h, (int)i, ns_frac(c->bytes, top), "#17becf");
		hp(h, "<text x=\"%.1f\" y=\"%zu\">%s in %" PRIu64 " copies · %.3f ms · %.2f GB/s</text>",
		   BAR_LABEL_W + ns_frac(c->bytes, top) * BAR_W + 6, i * (BAR_H + 6) + 13, bytes, (uint64_t)c->count,
		   c->total_ns / 1e6, c->total_ns ? (double)c->bytes / (double)c->total_ns : 0.0);
	}
	hp(h, "</svg></figure>\n");
}

/* --- the evidence tables: the Markdown report's sections, written as HTML ---------------------- */

/* A writer of h's stream in HTML (report_doc.h), headings shift levels
 * down; its failure becomes h's. */
static struct doc html_doc(const struct html *h, int shift)
{
	return (struct doc){ .f = h->f, .err = h->err, .fmt = DOC_HTML, .shift = shift };
}

static void details(struct html *h, const struct analysis *a)
{
	struct doc d;

	hp(h, "<section id=\"%sdetails\"><h2>Evidence tables</h2>\n", idp(h));
	d = html_doc(h, 1);
	h->err = report__doc_details(&d, a);
	hp(h, "</section>\n");
}

/* --- the script: hover values, a cursor on every time chart, sortable tables ---------------------- */

/* The script of a recording's page; a page of several recordings has the
 * chart data of each (D) in an array, the one of a chart picked by its
 * data-rec. */
static const char script_head[] = "(function(){'use strict';\n";
static const char script_data_one[] =
	"var D=JSON.parse(document.getElementById('isr-data').textContent),tip=document.getElementById('tip');\n";
static const char script_data_set[] =
	"var A=JSON.parse(document.getElementById('isr-data').textContent).recordings,D=A[0],"
	"tip=document.getElementById('tip');\n";
static const char script_pick_set[] = "D=A[+svg.dataset.rec];";
static const char script_charts[] =
	"var L=D.label_w||0,N=D.n||0;\n"
	"function secs(b){return (b*D.bucket_ns/1e9).toFixed(D.bucket_ns*N<1e10?4:2)+' s';}\n"
	"function pct(v){return (v/10).toFixed(1)+'%';}\n"
	"function lines(svg,b,row){var k=svg.dataset.kind,out=[secs(b)];\n"
	" if(k==='dev'&&D.dev[row]){var d=D.dev[row];out.push(d.label+': busy '+pct(d.busy[b]));\n"
	"  var ids=Object.keys(d.idle).filter(function(c){return d.idle[c][b]>0;})\n"
	"   .sort(function(x,y){return d.idle[y][b]-d.idle[x][b];});\n"
	"  ids.forEach(function(c){out.push('  idle '+(D.cause_labels[c]||c)+': '+pct(d.idle[c][b]));});}\n"
	" if(k==='thr'&&D.thr[row]){var t=D.thr[row],ch=t.s.charAt(b);\n"
	"  out.push(t.tid+' '+t.comm+': '+(ch==='.'?'not alive':D.causes[ch.charCodeAt(0)-97].label));}\n"
	" if(k==='mem')D.mem.forEach(function(m){out.push(m.label+': '+m.mib[b]+' MiB');});\n"
	" return out.join('\\n');}\n"
	"var charts=document.querySelectorAll('svg.tc');\n"
	"function cursor(x){charts.forEach(function(s){var c=s.querySelector('.cursor');\n"
	" if(x<0){c.setAttribute('visibility','hidden');return;}\n"
	" c.setAttribute('x1',x);c.setAttribute('x2',x);c.setAttribute('visibility','visible');});}\n"
	"charts.forEach(function(svg){\n"
	" svg.addEventListener('mousemove',function(ev){";
static const char script_move[] =
	"var r=svg.getBoundingClientRect(),\n"
	"  sc=svg.viewBox.baseVal.width/r.width,x=(ev.clientX-r.left)*sc,y=(ev.clientY-r.top)*sc,b=Math.floor(x-L);\n"
	"  if(b<0||b>=N){tip.style.display='none';cursor(-1);return;}\n"
	"  var row=Math.floor((y-(+svg.dataset.top))/(+svg.dataset.rowh));\n"
	"  tip.textContent=lines(svg,b,row);tip.style.display='block';\n"
	"  tip.style.left=Math.min(ev.clientX+14,window.innerWidth-tip.offsetWidth-8)+'px';\n"
	"  tip.style.top=(ev.clientY+14)+'px';cursor(x);});\n"
	" svg.addEventListener('mouseleave',function(){tip.style.display='none';cursor(-1);});});\n"
	"function num(s){var m=s.replace(/[\\u2248,%]/g,'').match(/^\\s*-?[0-9.]+(e[-+]?[0-9]+)?/i);\n"
	" return m?parseFloat(m[0]):NaN;}\n"
	"document.querySelectorAll('table.sortable').forEach(function(t){\n"
	" t.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){\n"
	"  var dir=th.dataset.dir==='desc'?'asc':'desc',tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows);\n"
	"  t.querySelectorAll('th').forEach(function(o){delete o.dataset.dir;});th.dataset.dir=dir;\n"
	"  rows.sort(function(a,b){var x=a.cells[i]?a.cells[i].textContent:'',y=b.cells[i]?b.cells[i].textContent:'',\n"
	"   p=num(x),q=num(y),c=(!isNaN(p)&&!isNaN(q))?p-q:x.localeCompare(y);return dir==='asc'?c:-c;});\n"
	"  rows.forEach(function(r){tb.appendChild(r);});});});});\n"
	"document.body.setAttribute('data-ready','1');})();\n";

/* JSON inside <script>: no <, > or & that could end the element. */
static void script_json(struct html *h, const json_t *data)
{
	char *s = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH);

	if (!s) {
		h->err = -ENOMEM;
		return;
	}
	for (const char *p = s; *p && !h->err; p++) {
		if (*p == '<')
			hp(h, "\\u003c");
		else if (*p == '>')
			hp(h, "\\u003e");
		else if (*p == '&')
			hp(h, "\\u0026");
		else if (fputc(*p, h->f) == EOF)
			h->err = -EIO;
	}
	free(s);
}

static json_t *cause_table(void)
{
	json_t *arr = json_array(), *labels = json_object(), *root = json_object();

	if (!arr || !labels || !root || json_object_set_new(root, "causes", arr) ||
	    json_object_set_new(root, "cause_labels", labels)) {
		json_decref(arr);
		json_decref(labels);
		json_decref(root);
		return NULL;
	}
	for (int c = 0; c < CAUSE_MAX; c++) {
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "name", cause_name((enum cause)c), "label",
						     cause_label((enum cause)c), "colour", cause_colour[c]));
		json_object_set_new(labels, cause_name((enum cause)c), json_string(cause_label((enum cause)c)));
	}
	json_object_set_new(labels, "before", json_string(idle_label(SERIES_BEFORE_FIRST)));
	return root;
}

static void page_head(struct html *h, const char *title)
{
	hp(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
	      "script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"inferscope-bpf %s\">\n<title>", ISR_VERSION);
	ht(h, title, SIZE_MAX);
	hp(h, "</title>\n<style>%s</style></head>\n<body><script>window.onerror=function(m){"
	      "document.documentElement.setAttribute('data-js-error',String(m));};</script>"
	      "<div id=\"tip\"></div><main>\n", css);
}

static void page_foot(struct html *h, const json_t *data, double pixel_ms)
{
	hp(h, "<footer>inferscope-bpf %s", ISR_VERSION);
	if (pixel_ms > 0)
		hp(h, " · one pixel of a time chart is %.3f ms", pixel_ms);
	hp(h, "</footer></main>\n<script type=\"application/json\" id=\"isr-data\">");
	script_json(h, data);
	hp(h, "</script>\n<script>%s%s%s%s%s</script>\n</body></html>\n", script_head,
	   h->set ? script_data_set : script_data_one, script_charts, h->set ? script_pick_set : "", script_move);
	if (!h->err && (fflush(h->f) == EOF || ferror(h->f)))
		h->err = -EIO;
}

int report__write_html_page(FILE *f, const char *title, int (*body)(struct doc *d, const void *arg),
			    const void *arg)
{
	struct html h = { .f = f };
	json_t *data = cause_table();
	struct doc d;

	if (!data)
		return -ENOMEM;
	page_head(&h, title);
	d = html_doc(&h, 0);
	h.err = h.err ?: body(&d, arg);
	page_foot(&h, data, 0);
	json_decref(data);
	return h.err;
}

/* The chart data of one recording: the causes, the time axis; its charts
 * add theirs. NULL when out of memory. */
static json_t *chart_data(const struct series *s)
{
	json_t *data = cause_table();

	if (!data)
		return NULL;
	json_object_set_new(data, "n", json_integer(SERIES_BUCKETS));
	json_object_set_new(data, "label_w", json_integer(LABEL_W));
	json_object_set_new(data, "bucket_ns", json_integer((json_int_t)series__bucket_ns(s)));
	return data;
}

/* A recording's report: header, findings, charts, evidence tables. */
static void recording_body(struct html *h, const struct analysis *a, json_t *data)
{
	const struct series *s = a->ex->series;

	header(h, a);
	findings(h, &a->ex->findings, "Findings", REPORT_NO_FINDING, a->ex->verdict);
	hp(h, "<section id=\"%scharts\"><h2>Timeline</h2>\n", idp(h));
	legend(h);
	if (!h->err && (!gpu_chart(h, s, data) || !thread_chart(h, a, data) || !memory_chart(h, s, data) ||
			!kernel_chart(h, a->sum)))
		h->err = h->err ? h->err : -ENOMEM;
	copy_chart(h, a->sum);
	hp(h, "</section>\n");
	details(h, a);
}

int report__write_html(FILE *f, const struct analysis *a)
{
	struct html h = { .f = f };
	json_t *data = chart_data(a->ex->series);

	if (!data)
		return -ENOMEM;
	page_head(&h, "inferscope-bpf report");
	recording_body(&h, a, data);
	page_foot(&h, data, (double)series__bucket_ns(a->ex->series) / 1e6);
	json_decref(data);
	return h.err;
}

/* --- several recordings: the ranks, then each recording's section --------------------------- */

static void rec_link(struct html *h, const struct analysis_set *set, size_t i)
{
	hp(h, "<a href=\"#rec%zu\">", i);
	ht(h, set->names[i], SIZE_MAX);
	hp(h, "</a>");
}

/* One row per rank, each linking to its recording's section (one per
 * recording when no two ranks made collectives). */
static void landing(struct html *h, const struct analysis_set *set)
{
	const struct ranks *r = set->ranks;

	hp(h, "<section id=\"ranks\"><h2>Ranks</h2>\n");
	if (!r) {
		hp(h, "<p class=\"none\">No two ranks made NCCL collectives in these recordings: nothing to line "
		      "up.</p>\n<table class=\"sortable\"><thead><tr><th>recording</th><th>host</th><th class=\"num\">"
		      "target processes</th><th class=\"num\">findings</th></tr></thead><tbody>");
		for (size_t i = 0; i < set->n; i++) {
			const struct recording *rec = set->a[i]->r;

			hp(h, "<tr><td>");
			rec_link(h, set, i);
			hp(h, "</td><td>");
			ht(h, rec->host.hostname ? rec->host.hostname : "unknown", SIZE_MAX);
			hp(h, "</td><td class=\"num\">%zu</td><td class=\"num\">%zu</td></tr>", rec->process_count,
			   set->a[i]->ex->findings.n);
		}
		hp(h, "</tbody></table>\n</section>\n");
		return;
	}
	hp(h, "<table class=\"sortable\"><thead><tr><th class=\"num\">rank</th><th>recording</th>"
	      "<th class=\"num\">pid</th><th class=\"num\">collectives</th><th class=\"num\">last</th>"
	      "<th class=\"num\">late</th><th class=\"num\">lateness p99 ms</th><th class=\"num\">lateness total s"
	      "</th><th class=\"num\">NCCL GPU ms</th><th>top finding</th></tr></thead><tbody>");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rank_row *w = &r->rows[i];

		hp(h, "<tr><td class=\"num\">%d</td><td>", w->rank);
		rec_link(h, set, w->source);
		hp(h, "</td><td class=\"num\">%u</td><td class=\"num\">%llu</td><td class=\"num\">%llu</td>"
		      "<td class=\"num\">%llu</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td>", w->pid,
		   (unsigned long long)w->collectives, (unsigned long long)w->last, (unsigned long long)w->late,
		   w->lateness_p99_ns / 1e6, w->lateness_total_ns / 1e9);
		/* its NCCL kernels' time on the GPU, the wait for the last rank
		 * included: "-" without joined kernels */
		if (w->nccl_joined)
			hp(h, "<td class=\"num\">%.3f</td><td>", w->nccl_gpu_ns / 1e6);
		else
			hp(h, "<td class=\"num\">-</td><td>");
		if (w->top_rule)
			hp(h, "<code>%s</code> (%.3f s)", w->top_rule, w->top_cost_s);
		else
			hp(h, "-");
		hp(h, "</td></tr>");
	}
	hp(h, "</tbody></table>\n</section>\n");
}

/* The ranks section of the Markdown report, in HTML (alignment, ranks,
 * communicators). */
static void ranks_details(struct html *h, const struct ranks *r)
{
	struct doc d;

	if (!r || h->err)
		return;
	hp(h, "<section id=\"alignment\">\n");
	d = html_doc(h, 0);
	h->err = report__doc_ranks(&d, r);
	hp(h, "</section>\n");
}

int report__write_html_set(FILE *f, const struct analysis_set *set)
{
	struct html h = { .f = f, .set = true, .nrec = set->n };
	json_t *root = json_object(), *recs = json_array();
	char title[64], prefix[32], *headline = report__set_headline(set);

	if (!headline || !root || !recs || json_object_set_new(root, "recordings", recs)) {
		free(headline);
		json_decref(root);
		return -ENOMEM;
	}
	snprintf(title, sizeof(title), "inferscope-bpf report: %zu recordings", set->n);
	page_head(&h, title);
	hp(&h, "<header><h1>%s</h1></header>\n<p class=\"headline\"><b>", title);
	ht(&h, headline, SIZE_MAX);
	hp(&h, "</b></p>\n");
	free(headline);
	landing(&h, set);
	ranks_details(&h, set->ranks);
	findings(&h, &set->findings, "Findings across the recordings", REPORT_SET_NO_FINDING, NULL);
	for (size_t i = 0; i < set->n && !h.err; i++) {
		json_t *data = chart_data(set->a[i]->ex->series);

		if (!data || json_array_append_new(recs, data)) {
			h.err = -ENOMEM;
			break;
		}
		snprintf(prefix, sizeof(prefix), "rec%zu-", i);
		h.rec = i;
		h.name = set->names[i];
		h.idp = prefix;
		hp(&h, "<section id=\"rec%zu\" class=\"recording\">\n", i);
		recording_body(&h, set->a[i], data);
		hp(&h, "</section>\n");
	}
	h.idp = NULL;
	page_foot(&h, root, 0);
	json_decref(root);
	return h.err;
}
