// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The outputs on a fixed synthetic job (synth_job.h): the HTML report as a
 * browser shows it (headless Chromium renders it: no console message, the
 * page's script ran, the DOM holds every finding and chart; the screenshot
 * is kept in build/test-artifacts/), its outline against a golden file, its
 * escaping of hostile names and its size for a 10-minute recording; the
 * Perfetto trace decoded by protoc against the same .proto files, its
 * tracks, slices and flows counted against the recording, and its decoded
 * text against a golden file; the diff of a healthy and a planted run.
 *
 * Golden files are in tests/golden/; INFERSCOPE_UPDATE_GOLDEN=1 rewrites
 * them (review the change before committing it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>
#include <jansson.h>

#include "analysis.h"
#include "report.h"
#include "perfetto.h"
#include "diff.h"
#include "text.h"

#include "synth.h"
#include "perfetto_text.h"
#include "synth_job.h"

#define ARTIFACTS "build/test-artifacts"
#define CHROMIUM_FLAGS                                                                                   \
	"--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking " \
	"--disable-component-update --disable-sync --enable-logging=stderr --v=0"

static struct analysis *analyze(struct synth *b)
{
	struct analysis *a = NULL;

	assert_int_equal(analysis__run(synth__recording(b), &a), 0);
	return a;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* text equals tests/golden/name, or rewrites it when asked. */
static void golden(const char *name, const char *text)
{
	char path[256], *want;

	snprintf(path, sizeof(path), "tests/golden/%s", name);
	if (getenv("INFERSCOPE_UPDATE_GOLDEN")) {
		write_file(path, text);
		return;
	}
	want = synth__slurp(path, NULL);
	if (!want)
		fail_msg("%s is missing: run with INFERSCOPE_UPDATE_GOLDEN=1 to make it", path);
	if (strcmp(want, text)) {
		char got[256];

		snprintf(got, sizeof(got), ARTIFACTS "/%s.got", name);
		write_file(got, text);
		fail_msg("%s differs from %s (diff -u %s %s; INFERSCOPE_UPDATE_GOLDEN=1 rewrites it)", got, path, path,
			 got);
	}
	free(want);
}

static void render_html(const struct analysis *a, const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(report__write_html(f, a), 0);
	assert_int_equal(fclose(f), 0);
}

/* --- HTML ---------------------------------------------------------------------------------- */

static const char *const chart_ids[] = { "chart-gpu", "chart-threads", "chart-memory", "chart-kernels",
					 "chart-copies" };

/* The outline of a page: each element that gives it its structure, with
 * its id and class, in order. */
static char *outline(const char *html)
{
	static const char *const tags[] = { "<section", "<h1", "<h2", "<h3", "<h4", "<figure", "<svg", "<table",
					    "<li class=\"finding", "<details", "<blockquote", "<pre" };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	for (const char *p = html; (p = strchr(p, '<')); p++) {
		for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
			size_t n = strlen(tags[i]);
			const char *end, *id, *cls;

			if (strncmp(p, tags[i], n) || (p[n] != ' ' && p[n] != '>' && p[n] != '"'))
				continue;
			end = strchr(p, '>');
			fprintf(f, "%.*s", (int)strcspn(p + 1, " >"), p + 1);
			id = strstr(p, " id=\"");
			cls = strstr(p, " class=\"");
			if (id && id < end)
				fprintf(f, " #%.*s", (int)strcspn(id + 5, "\""), id + 5);
			if (cls && cls < end)
				fprintf(f, " .%.*s", (int)strcspn(cls + 8, "\""), cls + 8);
			fprintf(f, "\n");
			break;
		}
	}
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_html_structure(void **state)
{
	struct synth *b = synth_job(true, "trainer");
	struct analysis *a = analyze(b);
	char *html, *o;

	(void)state;
	mkdir(ARTIFACTS, 0755);
	render_html(a, ARTIFACTS "/report.html");
	html = synth__slurp(ARTIFACTS "/report.html", NULL);
	assert_non_null(html);
	assert_true(a->ex->findings.n >= 1);
	for (size_t i = 0; i < a->ex->findings.n; i++) {
		char id[64];

		snprintf(id, sizeof(id), "id=\"finding-%zu\" data-rule=\"%s\"", i + 1, a->ex->findings.v[i].rule);
		if (!strstr(html, id))
			fail_msg("finding %zu (%s) is not in the page", i + 1, a->ex->findings.v[i].rule);
	}
	for (size_t i = 0; i < sizeof(chart_ids) / sizeof(chart_ids[0]); i++)
		assert_non_null(strstr(html, chart_ids[i]));
	/* a chart with data: the GPU row, the kernels by name */
	assert_non_null(strstr(html, "pid 100 GPU 0"));
	assert_non_null(strstr(html, "gemm_kernel(float*, float*, int)"));
	/* nothing that would load from anywhere */
	assert_null(strstr(html, "src=\"http"));
	assert_null(strstr(html, "href=\"http"));
	assert_null(strstr(html, "@import"));
	o = outline(html);
	golden("report.html.outline", o);
	free(o);
	free(html);
	analysis__free(a);
	synth__free(b);
}

/* Headless Chromium opens the page: no console message (the page logs
 * none, so any is an error), the script ran to its end, the DOM holds every
 * finding and chart; the screenshot is kept. */
static void test_html_in_chromium(void **state)
{
	struct synth *b = synth_job(true, "trainer");
	struct analysis *a = analyze(b);
	char cmd[1024], *dom, *log;
	size_t png = 0;
	int status;

	(void)state;
	mkdir(ARTIFACTS, 0755);
	render_html(a, ARTIFACTS "/chromium.html");
	status = system("command -v chromium >/dev/null");
	if (status)
		fail_msg("chromium is not installed (make deps, or apt-get install chromium)");
	snprintf(cmd, sizeof(cmd), "rm -rf " ARTIFACTS "/chromium-profile && timeout 120 chromium " CHROMIUM_FLAGS
		 " --user-data-dir=" ARTIFACTS "/chromium-profile --dump-dom file://$PWD/" ARTIFACTS
		 "/chromium.html 2>" ARTIFACTS "/chromium-dom.log");
	dom = synth__shell(cmd, &status);
	assert_int_equal(status, 0);
	log = synth__slurp(ARTIFACTS "/chromium-dom.log", NULL);
	assert_non_null(log);
	if (strstr(log, ":CONSOLE"))
		fail_msg("the page logged to the console:\n%s", log);
	assert_non_null(strstr(dom, "data-ready=\"1\""));
	assert_null(strstr(dom, "data-js-error=\""));
	for (size_t i = 0; i < a->ex->findings.n; i++) {
		char id[48];

		snprintf(id, sizeof(id), "id=\"finding-%zu\"", i + 1);
		assert_non_null(strstr(dom, id));
	}
	for (size_t i = 0; i < sizeof(chart_ids) / sizeof(chart_ids[0]); i++)
		assert_non_null(strstr(dom, chart_ids[i]));
	snprintf(cmd, sizeof(cmd), "rm -rf " ARTIFACTS "/chromium-profile && timeout 120 chromium " CHROMIUM_FLAGS
		 " --user-data-dir=" ARTIFACTS "/chromium-profile --hide-scrollbars --window-size=1280,2600 "
		 "--screenshot=$PWD/" ARTIFACTS "/report.png file://$PWD/" ARTIFACTS "/chromium.html 2>" ARTIFACTS
		 "/chromium-png.log >/dev/null");
	assert_int_equal(system(cmd), 0);
	free(synth__slurp(ARTIFACTS "/report.png", &png));
	{
		struct stat st;

		assert_int_equal(stat(ARTIFACTS "/report.png", &st), 0);
		assert_true(st.st_size > 20000);
	}
	free(log);
	free(dom);
	analysis__free(a);
	synth__free(b);
}

/* Names from the recording cannot inject markup or script. */
static void test_html_escapes_the_recording(void **state)
{
	struct synth *b = synth_job(true, "<script>x()</s");
	struct analysis *a;
	char *html;

	(void)state;
	/* a kernel of its own: an id keeps the first name it was given */
	ev_gpu_name(b, JOB_T0 + 3 * JOB_MS, JOB_PID, 3, "<img src=x onerror=alert(1)>");
	gpu_launch(b, JOB_T0 + 4 * JOB_MS, JOB_PID, JOB_LAUNCHER, 100000, 20 * (long long)SYNTH_US, JOB_MS, 3);
	free(b->rec.processes[0].cmdline);
	b->rec.processes[0].cmdline = strdup("python3 '\"><svg onload=alert(2)>' </script>");
	a = analyze(b);
	mkdir(ARTIFACTS, 0755);
	render_html(a, ARTIFACTS "/hostile.html");
	html = synth__slurp(ARTIFACTS "/hostile.html", NULL);
	assert_null(strstr(html, "<script>x()"));
	assert_null(strstr(html, "<img src=x"));
	assert_null(strstr(html, "<svg onload"));
	assert_int_equal(synth__count(html, "</script>"), 3);	/* the page's own three */
	assert_non_null(strstr(html, "&lt;script&gt;x()"));
	assert_non_null(strstr(html, "&lt;img src=x onerror=alert(1)&gt;"));
	free(html);
	analysis__free(a);
	synth__free(b);
}

/* Ten minutes of a busy job: the page stays far under 5 MB (every chart
 * is drawn at one point per pixel). */
static void test_html_size_of_a_long_recording(void **state)
{
	const __u64 len = 600ULL * 1000 * JOB_MS;
	struct synth *b = synth__new(JOB_T0, JOB_T0 + len);
	const __u32 tids[] = { JOB_LAUNCHER, JOB_HELPER };
	const char *const comms[] = { "trainer", "augment" };
	struct analysis *a;
	struct stat st;
	__u32 corr = 1;

	(void)state;
	synth__process(b, JOB_PID, "python3", 2, tids, comms);
	ev_gpu_clock(b, JOB_T0 + 1 * JOB_MS, JOB_PID);
	ev_gpu_clock(b, JOB_T0 + len - JOB_MS, JOB_PID);
	for (__u64 t = JOB_T0 + 10 * JOB_MS; t + 10 * JOB_MS < JOB_T0 + len; t += 10 * JOB_MS) {
		gpu_launch(b, t, JOB_PID, JOB_LAUNCHER, corr, 20 * (long long)SYNTH_US, (corr % 7 + 2) * JOB_MS,
			   corr % 3);
		corr++;
		ev_switch(b, t + 50 * SYNTH_US, JOB_PID, JOB_LAUNCHER, 0, 0, 0x1, 0);
		ev_wakeup_by(b, t + 3 * JOB_MS, JOB_PID, JOB_LAUNCHER, JOB_PID, JOB_HELPER);
		ev_switch(b, t + 3 * JOB_MS, 0, 0, JOB_PID, JOB_LAUNCHER, 0, 0);
		if (corr % 100 == 0)
			ev_mem(b, t, JOB_PID, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x7000000000ULL + corr * 4096ULL, MIB);
	}
	a = analyze(b);
	mkdir(ARTIFACTS, 0755);
	render_html(a, ARTIFACTS "/long.html");
	assert_int_equal(stat(ARTIFACTS "/long.html", &st), 0);
	print_message("10-minute recording, %zu events: HTML report %lld bytes\n", b->count, (long long)st.st_size);
	assert_true(st.st_size < 5 * 1000 * 1000);
	analysis__free(a);
	synth__free(b);
}

/* --- Perfetto -------------------------------------------------------------------------------- */

static char *perfetto(const struct analysis *a, const char *path, struct perfetto_stats *st)
{
	FILE *f = fopen(path, "w");
	size_t compressed;
	char *text;

	assert_non_null(f);
	assert_int_equal(perfetto__write(f, a, st), 0);
	assert_int_equal(fclose(f), 0);
	text = perfetto_text(path, &compressed);
	/* every packet is in a compressed_packets */
	assert_int_equal(compressed, st->compressed);
	assert_int_equal(synth__count(text, "compressed_packets:"), 0);
	return text;
}

static void test_perfetto_decodes_with_the_counts_of_the_recording(void **state)
{
	struct synth *b = synth_job(true, "trainer");
	struct analysis *a = analyze(b);
	struct perfetto_stats st;
	size_t kernels = 0, launches = 0;
	char *text;

	(void)state;
	mkdir(ARTIFACTS, 0755);
	text = perfetto(a, ARTIFACTS "/trace.pftrace", &st);
	for (size_t i = 0; i < b->count; i++) {
		const struct isr_ev_hdr *h = b->rec.events[i];

		kernels += h->type == ISR_EV_GPU_KERNEL;
		launches += h->type == ISR_EV_GPU_API;
	}
	/* every packet, track, slice, instant and counter the writer counted is in the file */
	assert_int_equal(synth__count(text, "packet {"), st.packets);
	assert_int_equal(synth__count(text, "track_descriptor {"), st.tracks);
	assert_int_equal(synth__count(text, "type: TYPE_SLICE_BEGIN"), st.slices);
	assert_int_equal(synth__count(text, "type: TYPE_SLICE_END"), st.slices);
	assert_int_equal(synth__count(text, "type: TYPE_INSTANT"), st.instants);
	assert_int_equal(synth__count(text, "type: TYPE_COUNTER"), st.counters);
	/* and they are those of the recording: one process, its threads,
	 * a flow from each launch to its kernel, one instant per finding */
	assert_int_equal(synth__count(text, "process {"), 1);
	assert_int_equal(synth__count(text, "thread {"), timeline__thread_count(a->ex->tl));
	assert_int_equal(synth__count(text, "terminating_flow_ids:"), kernels);
	assert_int_equal(synth__count(text, "flow_ids:") - synth__count(text, "terminating_flow_ids:"), launches);
	assert_int_equal(st.instants, a->ex->findings.n + launches);	/* and each entry-only launch call */
	assert_non_null(strstr(text, "name: \"gemm_kernel(float*, float*, int)\""));
	assert_non_null(strstr(text, "name: \"GPU 0 stream 7\""));
	assert_non_null(strstr(text, "name: \"train_step\""));
	assert_non_null(strstr(text, "name: \"device memory\""));
	assert_non_null(strstr(text, "double_counter_value: 268435456"));
	assert_int_equal(st.events, b->count);
	golden("trace.pftrace.txt", text);
	free(text);
	analysis__free(a);
	synth__free(b);
}

/* Bytes per event and export speed, on a job of 200k events. */
static void test_perfetto_figures(void **state)
{
	const __u64 len = 20ULL * 1000 * JOB_MS;
	struct synth *b = synth__new(JOB_T0, JOB_T0 + len);
	const __u32 tids[] = { JOB_LAUNCHER };
	const char *const comms[] = { "trainer" };
	struct perfetto_stats st;
	struct analysis *a;
	struct timespec t0, t1;
	__u32 corr = 1;
	FILE *f;
	double s;

	(void)state;
	synth__process(b, JOB_PID, "python3", 1, tids, comms);
	ev_gpu_clock(b, JOB_T0 + 1 * JOB_MS, JOB_PID);
	ev_gpu_clock(b, JOB_T0 + len - JOB_MS, JOB_PID);
	for (__u64 t = JOB_T0 + 10 * JOB_MS; b->count < 200000; t += 400 * SYNTH_US) {
		gpu_launch(b, t, JOB_PID, JOB_LAUNCHER, corr, 20 * (long long)SYNTH_US, 300 * SYNTH_US, corr % 5);
		corr++;
		ev_switch(b, t + 50 * SYNTH_US, JOB_PID, JOB_LAUNCHER, 0, 0, 0x1, 0);
		ev_wakeup_by(b, t + 200 * SYNTH_US, JOB_PID, JOB_LAUNCHER, 0, 0);
		ev_switch(b, t + 200 * SYNTH_US, 0, 0, JOB_PID, JOB_LAUNCHER, 0, 0);
	}
	a = analyze(b);
	f = fopen("/dev/null", "w");
	assert_non_null(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(perfetto__write(f, a, &st), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fclose(f);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("perfetto: %llu events -> %llu packets, %llu bytes: %.1f bytes per event, %.0f events/s "
		      "(this build: sanitizers on)\n", (unsigned long long)st.events, (unsigned long long)st.packets,
		      (unsigned long long)st.bytes, (double)st.bytes / (double)st.events, (double)st.events / s);
	assert_int_equal(st.events, b->count);
	assert_true((double)st.bytes / (double)st.events < 64);
	analysis__free(a);
	synth__free(b);
}

/* A thread whose bursts of 3 µs runs and 2 µs waits for a CPU (under a
 * pixel of a 10 ms window) are each one slice of their states, counted;
 * every other state stays a slice of its own. */
static void test_perfetto_short_states_merged(void **state)
{
	enum { BURSTS = 200, K = 20 };	/* K preemptions a burst: 2K + 1 states under 10 µs */
	struct synth *b = synth__new(JOB_T0, JOB_T0 + (BURSTS + 20) * JOB_MS);
	const __u32 tids[] = { JOB_LAUNCHER };
	const char *const comms[] = { "spinner" };
	char want[64], *text;
	struct perfetto_stats st;
	struct analysis *a;
	unsigned long long sum = 0;
	const char *at;

	(void)state;
	mkdir(ARTIFACTS, 0755);
	synth__process(b, JOB_PID, "python3", 1, tids, comms);
	for (int i = 0; i < BURSTS; i++) {
		__u64 t = JOB_T0 + (10 + i) * JOB_MS;

		/* woken, 20 µs for a CPU (a slice), then the burst */
		ev_wakeup_by(b, t, JOB_PID, JOB_LAUNCHER, 0, 0);
		t += 20 * SYNTH_US;
		ev_switch(b, t, 0, 0, JOB_PID, JOB_LAUNCHER, 0, 0);
		for (int k = 0; k < K; k++) {
			t += 3 * SYNTH_US;
			ev_switch(b, t, JOB_PID, JOB_LAUNCHER, 0, 0, 0x0, ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
			t += 2 * SYNTH_US;
			ev_switch(b, t, 0, 0, JOB_PID, JOB_LAUNCHER, 0, 0);
		}
		t += 3 * SYNTH_US;
		ev_switch(b, t, JOB_PID, JOB_LAUNCHER, 0, 0, 0x1, 0);	/* sleeps until the next burst */
	}
	a = analyze(b);
	text = perfetto(a, ARTIFACTS "/short-states.pftrace", &st);
	assert_int_equal(st.merged_slices, BURSTS);
	assert_int_equal(st.merged_states, BURSTS * (2 * K + 1));
	/* every state is written, alone or in its run */
	assert_int_equal(st.slices, st.states - st.merged_states + st.merged_slices);
	assert_int_equal(synth__count(text, "type: TYPE_SLICE_BEGIN"), st.slices);
	assert_int_equal(synth__count(text, "type: TYPE_SLICE_END"), st.slices);
	/* each merged slice says how many states it holds and their time */
	assert_int_equal(perfetto_text_events(text, "states under 10 us"), BURSTS);
	snprintf(want, sizeof(want), "name_iid: %lu\n      uint_value: ", perfetto_text_iid(text, "states"));
	for (at = text; (at = strstr(at, want)); at += strlen(want))
		sum += strtoull(at + strlen(want), NULL, 10);
	assert_int_equal(sum, BURSTS * (2 * K + 1));
	snprintf(want, sizeof(want), "name_iid: %%lu\n      uint_value: %u\n", (K + 1) * 3000);
	assert_int_equal(perfetto_text_count_iid(text, want, "running_ns"), BURSTS);
	snprintf(want, sizeof(want), "name_iid: %%lu\n      uint_value: %u\n", K * 2000);
	assert_int_equal(perfetto_text_count_iid(text, want, "runqueue_ns"), BURSTS);
	free(text);
	analysis__free(a);
	synth__free(b);
}

/* --- diff -------------------------------------------------------------------------------------- */

static char *diff_json(const struct diff *d)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(diff__write_json(f, d), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

/* Healthy against the planted sync stall: the stall leads. */
static void test_diff_names_the_planted_change_first(void **state)
{
	struct synth *hb = synth_job(false, "trainer"), *pb = synth_job(true, "trainer");
	struct analysis *healthy = analyze(hb), *planted = analyze(pb);
	struct diff *d = NULL;
	char *json, *md = NULL, *html = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(diff__compute(healthy, planted, "healthy.isr", "planted.isr", &d), 0);
	assert_true(d->nfindings >= 1);
	assert_string_equal(d->findings[0].rule, "sync_stall");
	assert_int_equal(d->findings[0].status, DIFF_APPEARED);
	assert_non_null(strstr(d->headline, "(sync_stall) appeared"));
	json = diff_json(d);
	golden("diff.json", json);
	f = open_memstream(&md, &len);
	assert_int_equal(diff__write_markdown(f, d), 0);
	fclose(f);
	assert_non_null(strstr(md, "| `sync_stall` | appeared |"));
	f = open_memstream(&html, &len);
	assert_int_equal(diff__write_html(f, d), 0);
	fclose(f);
	assert_non_null(strstr(html, "<table class=\"sortable\">"));
	assert_non_null(strstr(html, "<code>sync_stall</code>"));
	free(html);
	free(md);
	free(json);
	diff__free(d);
	analysis__free(planted);
	analysis__free(healthy);
	synth__free(pb);
	synth__free(hb);
}

/* A run against itself: nothing changed. */
static void test_diff_of_a_run_with_itself(void **state)
{
	struct synth *b = synth_job(true, "trainer");
	struct analysis *a = analyze(b);
	struct diff *d = NULL;

	(void)state;
	assert_int_equal(diff__compute(a, a, "a.isr", "a.isr", &d), 0);
	for (size_t i = 0; i < d->nmetrics; i++)
		assert_true(d->metrics[i].base == d->metrics[i].new_);
	for (size_t i = 0; i < d->nfindings; i++)
		assert_int_equal(d->findings[i].status, DIFF_CHANGED);
	assert_non_null(strstr(d->headline, "No finding"));
	diff__free(d);
	analysis__free(a);
	synth__free(b);
}

/* A job of steps of period_ms from 10 ms into a recording of len_ms: each
 * step a kernel of 80% of the period and a synchronization that waits for
 * it, then the next launch. */
static struct synth *stepping_job(__u64 period_ms, __u64 len_ms)
{
	const __u32 tid = JOB_LAUNCHER;
	struct synth *b = synth__new(JOB_T0, JOB_T0 + len_ms * JOB_MS);
	__u64 period = period_ms * JOB_MS, kernel = period * 8 / 10;
	__u32 corr = 1;

	synth__process(b, JOB_PID, "python3", 1, &tid, (const char *[]){ "trainer" });
	ev_gpu_clock(b, JOB_T0 + 1 * JOB_MS, JOB_PID);
	ev_gpu_clock(b, JOB_T0 + (len_ms - 1) * JOB_MS, JOB_PID);
	ev_gpu_flushed(b, JOB_T0 + len_ms * JOB_MS, JOB_PID);
	ev_gpu_name(b, JOB_T0 + 2 * JOB_MS, JOB_PID, 1, "gemm_kernel");
	for (__u64 t = JOB_T0 + 10 * JOB_MS; t + period <= JOB_T0 + (len_ms - 10) * JOB_MS; t += period) {
		gpu_launch(b, t, JOB_PID, tid, corr++, 20 * (long long)SYNTH_US, kernel, 1);
		ev_call(b, t + 100 * SYNTH_US, JOB_PID, tid, ISR_CUDA_FN_cuCtxSynchronize_v2, 0,
			kernel + 20 * SYNTH_US - 100 * SYNTH_US);
	}
	return b;
}

/* A run with 4x the throughput over a longer recording is faster: the diff
 * compares the work per second and the figures per step, not totals. */
static void test_diff_compares_rates_not_totals(void **state)
{
	struct synth *bb = stepping_job(40, 1000), *nb = stepping_job(10, 1200);
	struct analysis *base = analyze(bb), *new_ = analyze(nb);
	struct diff *d = NULL;
	char *json;

	(void)state;
	assert_int_equal(diff__compute(base, new_, "base.isr", "new.isr", &d), 0);
	/* 24 steps of 40 ms against 118 of 10 ms; a step spans a launch to the
	 * return of its synchronization, so the last ends at its kernel's end:
	 * 24 in 952.02 ms (25.2 a second) against 118 in 1178.02 ms (100.2) */
	assert_non_null(strstr(d->headline, "Faster: the new run made 3.97x the steps per second of the base "
					    "(100.2 against 25.2"));
	assert_non_null(strstr(d->headline, "a median step of 10.0 ms against 40.0 ms"));
	assert_null(strstr(d->headline, "slower"));
	json = diff_json(d);
	/* the GPU kernel time per step: 8 ms against 32 ms */
	assert_non_null(strstr(json, "\"per\": \"step\""));
	assert_non_null(strstr(json, "\"base_per\": 0.032"));
	assert_non_null(strstr(json, "\"new_per\": 0.008"));
	free(json);
	diff__free(d);
	analysis__free(new_);
	analysis__free(base);
	synth__free(nb);
	synth__free(bb);
}

/* --- several recordings ------------------------------------------------------------------------ */

static char *render_set(const struct analysis_set *set, int (*writer)(FILE *, const struct analysis_set *))
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(writer(f, set), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

/* Two recordings with findings and none across them: the report leads
 * with each one's findings, not with "No finding". */
static void test_set_leads_with_the_findings_of_each(void **state)
{
	struct synth *pb = synth_job(true, "trainer"), *hb = synth_job(false, "trainer");
	struct analysis *planted = analyze(pb), *healthy = analyze(hb);
	const struct analysis *both[] = { planted, healthy };
	const char *names[] = { "a.isr", "b.isr" };
	struct analysis_set set = { .a = both, .names = names, .n = 2 };
	const struct finding *first = &planted->ex->findings.v[0];
	char err[256], want[256], *md, *html, *json, *rec1;

	(void)state;
	assert_int_equal(analysis_set__compute(&set, err, sizeof(err)), 0);
	assert_int_equal(set.findings.n, 0);
	assert_true(planted->ex->findings.n >= 1);
	md = render_set(&set, report__write_markdown_set);
	rec1 = strstr(md, "\n# Recording 1 of 2: a.isr\n");
	assert_non_null(rec1);
	*rec1 = 0;
	/* before the recordings' own reports */
	assert_null(strstr(md, "No finding"));
	snprintf(want, sizeof(want), "a.isr has %zu finding%s, first \"%s\" (%s, %.3f s)", planted->ex->findings.n,
		 planted->ex->findings.n == 1 ? "" : "s", explain__rule_title(first->rule), first->rule, first->cost_s);
	assert_non_null(strstr(md, want));
	if (healthy->ex->findings.n)
		snprintf(want, sizeof(want), "b.isr has %zu finding", healthy->ex->findings.n);
	else
		snprintf(want, sizeof(want), "b.isr has none");
	assert_non_null(strstr(md, want));
	assert_non_null(strstr(md, "Nothing found that needs the recordings together"));
	html = render_set(&set, report__write_html_set);
	rec1 = strstr(html, "<section id=\"rec0\"");
	assert_non_null(rec1);
	*rec1 = 0;
	assert_null(strstr(html, "No finding"));
	assert_non_null(strstr(html, "a.isr has "));
	json = render_set(&set, report__write_json_set);
	assert_non_null(strstr(json, "\"headline\": \"Findings in "));
	free(json);
	free(html);
	free(md);
	analysis_set__clear(&set);
	analysis__free(healthy);
	analysis__free(planted);
	synth__free(hb);
	synth__free(pb);
}

/* --- wording ------------------------------------------------------------------------------------ */

/* A CPU-only job (no CUDA call): two programs, each preempted half of a
 * second. Two cpu_contention findings; their advice names no GPU tool
 * (DataLoader) and is given once, the second finding referring to it. */
static void test_cpu_only_advice_once(void **state)
{
	const __u32 pids[] = { 300, 400 };
	const char *const comms[] = { "alpha", "beta" };
	struct synth *b = synth__new(JOB_T0, JOB_T0 + 1000 * JOB_MS);
	struct analysis *a;
	char *md, *html, *first;
	size_t nfound = 0;

	(void)state;
	for (int p = 0; p < 2; p++) {
		synth__process(b, pids[p], comms[p], 1, &pids[p], &comms[p]);
		for (int i = 0; i < 10; i++) {
			__u64 t = JOB_T0 + (__u64)i * 100 * JOB_MS;

			ev_switch(b, t, 0, 0, pids[p], pids[p], 0, 0);
			ev_switch(b, t + 50 * JOB_MS, pids[p], pids[p], 0, 0, 0x0,
				  ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
		}
	}
	a = analyze(b);
	for (size_t i = 0; i < a->ex->findings.n; i++)
		nfound += strcmp(a->ex->findings.v[i].rule, "cpu_contention") == 0;
	assert_int_equal(nfound, 2);
	md = synth__render(a, report__write_markdown);
	html = synth__render(a, report__write_html);
	assert_null(strstr(md, "DataLoader"));
	first = strstr(md, "*What to do:* Give the job CPUs of its own");
	assert_non_null(first);
	assert_null(strstr(first + strlen("*What to do:* Give"), "Give the job CPUs of its own"));
	assert_int_equal(synth__count(md, "*What to do:* As for finding 1."), 1);
	assert_int_equal(synth__count(html, "Give the job CPUs of its own"), 1);
	assert_int_equal(synth__count(html, "As for finding <a href=\"#finding-1\">1</a>."), 1);
	free(html);
	free(md);
	analysis__free(a);
	synth__free(b);
}

/* A Python thread seen only blocked on the GIL (the scheduler's view),
 * never taking or releasing it through PyEval_RestoreThread/SaveThread (a
 * CPU-bound thread hands it over inside the interpreter): its hold is
 * unknown, "-" and null, not 0 s. The thread that took it has its hold. */
static void test_gil_hold_unknown_is_not_zero(void **state)
{
	struct synth *b = synth_job(false, "trainer");
	struct isr_ev_gil_wait *w = synth__event(b, ISR_EV_GIL_WAIT, sizeof(*w), JOB_T0 + 400 * JOB_MS, JOB_PID,
						 JOB_LAUNCHER);
	struct analysis *a;
	char *md, *json, want[160];

	(void)state;
	w->duration_ns = 30 * JOB_MS;
	w->holder_tid = JOB_HELPER;
	w->flags = ISR_GIL_WAIT_HOLDER;
	a = analyze(b);
	md = synth__render(a, report__write_markdown);
	json = synth__render(a, report__write_json);
	/* the launcher: blocked 30 ms once, hold unknown */
	snprintf(want, sizeof(want), "| %u | %u | trainer | 0.030 | 1 | 0.030 | - | 0 |", JOB_PID, JOB_LAUNCHER);
	assert_non_null(strstr(md, want));
	/* the helper took it once, 3 ms after waiting, and held it to the end */
	snprintf(want, sizeof(want), "| %u | %u | augment | 0.000 | 0 | 0.003 | 0.397 | 1 |", JOB_PID, JOB_HELPER);
	assert_non_null(strstr(md, want));
	/* null: the launcher's, and tid 100's (no GIL event at all); 0.397 s
	 * the helper's */
	assert_int_equal(synth__count(json, "\"gil_hold_s\": null"), 2);
	assert_int_equal(synth__count(json, "\"gil_hold_s\": 0.397"), 1);
	free(json);
	free(md);
	analysis__free(a);
	synth__free(b);
}

/* The same frames interned under two stack ids (20 and 9 samples): the
 * report lists one stack of 29 samples, not the same text twice. */
static void test_identical_stacks_merged(void **state)
{
	struct synth *b = synth_job(false, "trainer");
	const __u64 codes[2] = { 0x7f0000001000ULL, 0x7f0000002000ULL };
	struct analysis *a;
	char *md, *json;

	(void)state;
	ev_py_stack(b, JOB_T0, JOB_PID, 3, 2, codes);
	for (int i = 0; i < 29; i++)
		ev_py_sample(b, JOB_T0 + 995 * JOB_MS, JOB_PID, JOB_HELPER + 1, i < 20 ? 1 : 3, ISR_PY_KIND_TIMER);
	a = analyze(b);
	md = synth__render(a, report__write_markdown);
	json = synth__render(a, report__write_json);
	/* thread 103's: one stack, not 69.0% and 31.0% of the same text */
	assert_null(strstr(md, "69.0% of its samples"));
	assert_null(strstr(md, "31.0% of its samples"));
	assert_int_equal(synth__count(md, "100.0% of its samples:\n\n    /home/u/train.py:40 train_step\n"
					  "    /home/u/train.py:90 main\n"), 2);	/* its and the launcher's */
	assert_int_equal(synth__count(json, "\"samples\": 29"), 1);	/* its one stack */
	free(json);
	free(md);
	analysis__free(a);
	synth__free(b);
}

/*
 * Python threads named by their entry in every output: a thread started by
 * threading runs its target (here Loader.<locals>.worker_loop) inside
 * threading's _bootstrap, _bootstrap_inner and run; the OS names every
 * thread of the process python3.11. A thread the program named after its
 * target (hog) keeps its name; the main thread and a thread whose stacks
 * were cut short (its outermost frames missing) have no entry.
 */
static void test_python_threads_named(void **state)
{
	static const __u32 tids[] = { 300, 301, 302, 303 };
	static const char *const comms[] = { "python3.11", "python3.11", "hog", "python3.11" };
	static const char *const lib = "/usr/lib/python3.11/threading.py";
	static const __u64 main_stack[] = { 0x31, 0x30 }, worker[] = { 0x31, 0x20, 0x12, 0x11, 0x10 },
			   hog[] = { 0x21, 0x12, 0x11, 0x10 }, cut[] = { 0x31, 0x20, 0x12 };
	struct synth *b = synth__new(JOB_T0, JOB_T0 + 100 * JOB_MS);
	char path[] = "/tmp/isr-py-names-XXXXXX", *md, *js, *html, *trace;
	struct perfetto_stats st;
	json_error_t jerr;
	json_t *root, *threads;
	struct analysis *a;
	int fd;

	(void)state;
	synth__process(b, 300, "python3.11", 4, tids, comms);
	ev_py_code(b, JOB_T0, 300, 0x10, lib, "Thread._bootstrap", 995);
	ev_py_code(b, JOB_T0, 300, 0x11, lib, "Thread._bootstrap_inner", 1038);
	ev_py_code(b, JOB_T0, 300, 0x12, lib, "Thread.run", 975);
	ev_py_code(b, JOB_T0, 300, 0x20, "/app/train.py", "Loader.<locals>.worker_loop", 12);
	ev_py_code(b, JOB_T0, 300, 0x21, "/app/train.py", "hog", 30);
	ev_py_code(b, JOB_T0, 300, 0x30, "/app/train.py", "<module>", 1);
	ev_py_code(b, JOB_T0, 300, 0x31, "/app/train.py", "step", 40);
	ev_py_stack(b, JOB_T0, 300, 1, 2, main_stack);
	ev_py_stack(b, JOB_T0, 300, 2, 5, worker);
	ev_py_stack(b, JOB_T0, 300, 3, 4, hog);
	ev_py_stack(b, JOB_T0, 300, 4, 3, cut);
	((struct isr_ev_py_stack *)(b->data + b->offs[b->count - 1]))->flags = ISR_PY_STACK_TRUNCATED;
	for (int i = 0; i < 10; i++) {
		__u64 t = JOB_T0 + (__u64)(i + 1) * JOB_MS;

		ev_py_sample(b, t, 300, 300, 1, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t, 300, 301, 2, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t, 300, 302, 3, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t, 300, 303, 4, ISR_PY_KIND_TIMER);
	}
	a = analyze(b);
	md = synth__render(a, report__write_markdown);
	assert_non_null(strstr(md, "| 300 | 301 | python3.11 (Loader.worker_loop) |"));
	assert_non_null(strstr(md, "| 300 | 302 | hog |"));
	assert_non_null(strstr(md, "| 300 | 300 | python3.11 |"));
	assert_non_null(strstr(md, "| 300 | 303 | python3.11 |"));
	assert_non_null(strstr(md, "### pid 300 tid 301 python3.11 (Loader.worker_loop) (10 samples)"));
	js = synth__render(a, report__write_json);
	root = json_loads(js, 0, &jerr);
	assert_non_null(root);
	threads = json_object_get(root, "threads");
	for (size_t i = 0; i < json_array_size(threads); i++) {
		json_t *t = json_array_get(threads, i), *entry = json_object_get(t, "python_entry");
		json_int_t tid = json_integer_value(json_object_get(t, "tid"));

		if (tid == 301)
			assert_string_equal(json_string_value(entry), "Loader.worker_loop");
		else if (tid == 302)
			assert_string_equal(json_string_value(entry), "hog");
		else
			assert_true(json_is_null(entry));
	}
	json_decref(root);
	html = synth__render(a, report__write_html);
	assert_non_null(strstr(html, "python3.11 (Loader.worker_loop)"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	trace = perfetto(a, path, &st);
	unlink(path);
	assert_non_null(strstr(trace, "thread_name: \"python3.11 (Loader.worker_loop)\""));
	assert_non_null(strstr(trace, "thread_name: \"hog\""));
	free(trace);
	free(html);
	free(js);
	free(md);
	analysis__free(a);
	synth__free(b);
}

/* --- hostile names: every output ---------------------------------------------------------------- */

#define HOSTILE_FILE "'ctl\r\n\x1b[31m.py'"
#define HOSTILE_COMM "x\xff\x1b[2J"
#define HOSTILE_NVTX "step\r\x1b]0;t\x07\xc3"

/* The bytes of a Markdown or terminal output: valid UTF-8, no control
 * character but the line's end. */
static void assert_terminal_safe(const char *what, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len = strlen(text);

	for (size_t i = 0; i < len;) {
		size_t n = text__utf8_seq(p + i, len - i);

		if (!n || (n == 1 && ((p[i] < 0x20 && p[i] != '\n') || p[i] == 0x7f)) ||
		    (n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0))
			fail_msg("%s: byte 0x%02x at %zu: \"%.40s\"", what, p[i], i, text + (i > 20 ? i - 20 : 0));
		i += n;
	}
}

/* A job whose names are hostile (the attack run's): a comm with an invalid
 * byte and an escape sequence, a Python file named to leave a code block
 * and clear the terminal, a kernel and NVTX ranges with control
 * characters. Every output is written (none refused for a name), the
 * Markdown and terminal ones hold no control character nor invalid UTF-8,
 * the stack block stays one code block, JSON keeps every such string (in
 * the steps and the findings' evidence too) as valid UTF-8. */
static void test_hostile_names_in_every_output(void **state)
{
	struct synth *b = synth_job(true, HOSTILE_COMM);
	const __u64 code = 0x7f0000003000ULL;
	struct analysis *a;
	struct diff *d = NULL;
	char *md, *json, *html, *pf, *dmd = NULL, *djson;
	json_t *root, *steps, *sync = NULL;
	json_error_t jerr;
	size_t len = 0;
	FILE *f;

	(void)state;
	free(b->rec.processes[0].cmdline);
	b->rec.processes[0].cmdline = strdup("python3 \x1b[2J\xff");
	ev_py_code(b, JOB_T0, JOB_PID, code, HOSTILE_FILE, "f\x1b[1m\xfe", 7);
	ev_py_stack(b, JOB_T0, JOB_PID, 3, 1, &code);
	ev_gpu_name(b, JOB_T0 + 3 * JOB_MS, JOB_PID, 3, "k\xff\r\n| x");
	gpu_launch(b, JOB_T0 + 4 * JOB_MS, JOB_PID, JOB_LAUNCHER, 100000, 20 * (long long)SYNTH_US, JOB_MS, 3);
	/* the steps: NVTX ranges of a hostile name, one per step of the job */
	for (__u64 t = JOB_T0 + 10 * JOB_MS; t + 30 * JOB_MS <= JOB_T0 + 990 * JOB_MS; t += 30 * JOB_MS) {
		struct isr_ev_nvtx *e = synth__event(b, ISR_EV_NVTX, sizeof(*e), t, JOB_PID, JOB_LAUNCHER);

		e->kind = ISR_NVTX_PUSH;
		snprintf(e->name, sizeof(e->name), "%s", HOSTILE_NVTX);
		e = synth__event(b, ISR_EV_NVTX, sizeof(*e), t + 29 * JOB_MS, JOB_PID, JOB_LAUNCHER);
		e->kind = ISR_NVTX_POP;
		/* its synchronization called from the hostile file; its samples there */
		ev_py_sample(b, t + 200 * SYNTH_US, JOB_PID, JOB_LAUNCHER, 3, ISR_PY_KIND_CUDA);
		for (int k = 0; k < 4; k++)
			ev_py_sample(b, t + (21 + 2 * (__u64)k) * JOB_MS, JOB_PID, JOB_LAUNCHER, 3, ISR_PY_KIND_TIMER);
	}
	a = analyze(b);

	md = synth__render(a, report__write_markdown);
	assert_terminal_safe("Markdown", md);
	assert_null(strstr(md, "\x1b"));
	/* the stack frame is one line of the code block, its bytes made visible */
	assert_non_null(strstr(md, "\n    'ctl\\x0d\\x0a\\x1b[31m.py':7 f\\x1b[1m\xef\xbf\xbd\n"));
	assert_non_null(strstr(md, "x\xef\xbf\xbd\\\\x1b\\[2J"));	/* the comm in a table */
	assert_non_null(strstr(md, "`step\\x0d\\x1b]0;t\\x07\xef\xbf\xbd`"));	/* the steps' range */

	json = synth__render(a, report__write_json);
	root = json_loads(json, 0, &jerr);
	assert_non_null(root);
	steps = json_object_get(root, "steps");
	assert_string_equal(json_string_value(json_object_get(steps, "name")), "step\r\x1b]0;t\x07\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(steps, "comm")), "x\xef\xbf\xbd\x1b[2J");
	for (size_t i = 0; i < json_array_size(json_object_get(root, "findings")); i++) {
		json_t *fd = json_array_get(json_object_get(root, "findings"), i);

		if (!strcmp(json_string_value(json_object_get(fd, "rule")), "sync_stall"))
			sync = fd;
	}
	/* the evidence keeps the site; the summary quotes it */
	assert_non_null(sync);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(sync,
		"evidence"), "python_sites"), 0), "site")), HOSTILE_FILE ":7 f\x1b[1m\xef\xbf\xbd");
	assert_non_null(strstr(json_string_value(json_object_get(sync, "summary")), HOSTILE_FILE));
	json_decref(root);

	html = synth__render(a, report__write_html);
	assert_null(strstr(html, "\x1b"));
	assert_null(strstr(html, "\xff"));
	{
		struct perfetto_stats st;

		mkdir(ARTIFACTS, 0755);
		/* protoc prints the bytes of a string it does not show as octal
		 * escapes: valid UTF-8 only, the escape sequences kept as data */
		pf = perfetto(a, ARTIFACTS "/hostile.pftrace", &st);
		assert_null(strstr(pf, "\\377"));
		assert_null(strstr(pf, "\\376"));
		assert_non_null(strstr(pf, "name: \"x\\357\\277\\275\\033[2J\""));
	}

	assert_int_equal(diff__compute(a, a, "a\x1b.isr", "b\xff.isr", &d), 0);
	f = open_memstream(&dmd, &len);
	assert_int_equal(diff__write_markdown(f, d), 0);
	assert_int_equal(fclose(f), 0);
	assert_terminal_safe("diff Markdown", dmd);
	djson = diff_json(d);
	root = json_loads(djson, 0, &jerr);
	assert_non_null(root);
	json_decref(root);
	free(djson);
	free(dmd);
	diff__free(d);
	free(pf);
	free(html);
	free(json);
	free(md);
	analysis__free(a);
	synth__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_structure),
		cmocka_unit_test(test_html_in_chromium),
		cmocka_unit_test(test_html_escapes_the_recording),
		cmocka_unit_test(test_html_size_of_a_long_recording),
		cmocka_unit_test(test_perfetto_decodes_with_the_counts_of_the_recording),
		cmocka_unit_test(test_python_threads_named),
		cmocka_unit_test(test_perfetto_figures),
		cmocka_unit_test(test_perfetto_short_states_merged),
		cmocka_unit_test(test_diff_names_the_planted_change_first),
		cmocka_unit_test(test_diff_of_a_run_with_itself),
		cmocka_unit_test(test_diff_compares_rates_not_totals),
		cmocka_unit_test(test_set_leads_with_the_findings_of_each),
		cmocka_unit_test(test_cpu_only_advice_once),
		cmocka_unit_test(test_gil_hold_unknown_is_not_zero),
		cmocka_unit_test(test_identical_stacks_merged),
		cmocka_unit_test(test_hostile_names_in_every_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
