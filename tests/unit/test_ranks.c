// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Several recordings analysed together (analysis.h, struct analysis_set):
 * two synthetic recordings of one rank each, made on hosts whose
 * CLOCK_MONOTONIC differ by 4000 s, with the same pid. Rank 1 enters
 * every all-reduce 3 ms after rank 0 (in CLOCK_REALTIME); the clock pairs
 * of each recording carry an error within the uncertainty they state. The
 * lateness must come out as 3 ms within the stated alignment uncertainty,
 * rank 1 named the straggler; the JSON holds both recordings' reports, the
 * HTML's links land on ids that exist once each, the Perfetto trace keeps
 * the two processes apart and puts rank 1's calls on rank 0's clock; a
 * corrupted second file is an error that names it. A straggler preempted
 * inside a synchronization is late for want of a CPU.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "analysis.h"
#include "report.h"
#include "perfetto.h"
#include "analyze.h"

#include "synth.h"
#include "perfetto_text.h"

#define MS		1000000ULL
#define US		1000ULL
#define PID		4242		/* the same in both recordings */
#define T0		(1000 * 1000 * MS)	/* recording 0's start, CLOCK_MONOTONIC */
#define TRUE0		1700000000000000000LL	/* its true realtime - monotonic */
#define TRUE1		(TRUE0 - 4000250 * (long long)MS)	/* host 1 booted 4000.25 s earlier */
#define T1		((__u64)((long long)T0 + TRUE0 - TRUE1))	/* the same moment on host 1 */
#define LEN		(2000 * MS)
#define COLLECTIVES	20
#define EVERY		(50 * MS)
#define PLANTED		(3 * MS)	/* rank 1's lateness at every collective */
#define PAIR_UNC	(20 * US)	/* the best clock pair's half window */
#define ID_HASH		0x1234abcd5678ef90ULL
#define COMM		0x5000ULL

/* Errors of each recording's clock pairs against the true offset: the
 * best pair's (the narrower) and the other's. */
static const long long pair_err[2][2] = { { 8 * (long long)US, -4 * (long long)US },
					   { -10 * (long long)US, 2 * (long long)US } };

struct fixture {
	char dir[64];
	char path[2][128];
	struct isr_clock_pair pairs[2][2];
	bool preempted;		/* setup_preempted: the syncs before each all-reduce (below) */
	bool overlap;		/* setup_overlap: rank 1 late at odd collectives only (below) */
};

/* With fx->preempted, both ranks' threads spin in a cuStreamSynchronize
 * for the 3.4 ms before each all-reduce (to 0.1 ms before it); rank 1's is
 * preempted by HOG for 2.5 ms of it (switched out runnable at 3 ms before
 * its arrival, back 0.5 ms before): it waited for a CPU, not its GPU. */
/* With fx->overlap, rank 1 is PLANTED late at the odd collectives only, and
 * rank 0 had work of its own for all but OVERLAP_COST of that wait (its GPU
 * busy with earlier work): its arrival at the next collective comes only
 * OVERLAP_COST later than its steady EVERY. */
#define OVERLAP_COST	(1 * MS)

#define HOG		777
#define SYNC_BEFORE	(3400 * US)
#define PREEMPT_FROM	(3000 * US)
#define PREEMPT_TO	(500 * US)

static void ev_nccl_allreduce(struct synth *b, __u64 ts, __u64 seq)
{
	struct isr_ev_nccl_call *e = synth__event(b, ISR_EV_NCCL_CALL, sizeof(*e), ts, PID, PID);

	e->comm = COMM;
	e->count = 4096;
	e->seq = seq;
	e->peer = -1;
	e->func = ISR_NCCL_FN_ncclAllReduce;
	e->dtype = 7;	/* ncclFloat32 */
}

/* The recording of rank `rank`, written to path: its clock pairs (one at
 * each end) with the errors above, its set-up, its all-reduces. */
static void write_rank(struct fixture *fx, int rank)
{
	const __u64 start = rank ? T1 : T0;
	const long long truth = rank ? TRUE1 : TRUE0;
	const __u32 tids[] = { PID };
	const char *const comms[] = { "python3" };
	struct synth *b = synth__new(start, start + LEN);

	synth__process(b, PID, "python3", 1, tids, comms);
	for (int k = 0; k < 2; k++) {
		__u64 mono = start + (k ? LEN - MS : MS);

		fx->pairs[rank][k] = (struct isr_clock_pair){ .mono_ns = mono,
							      .other_ns = (__u64)((long long)mono + truth +
										  pair_err[rank][k]),
							      .uncertainty_ns = (__u32)(k ? 30 * US : PAIR_UNC),
							      .clock = ISR_CLOCK_REALTIME };
	}
	b->rec.clock_pairs = fx->pairs[rank];
	b->rec.clock_pair_count = 2;
	ev_nccl_comm(b, start + 10 * MS, PID, COMM, ID_HASH, rank, 2);
	/* collective k at realtime R_k = T0 + TRUE0 + 100 ms + k * EVERY; rank 1 PLANTED later */
	for (__u64 k = 1; k <= COLLECTIVES; k++) {
		long long real = (long long)T0 + TRUE0 + (long long)(100 * MS + k * EVERY) + (rank ? (long long)PLANTED : 0);

		if (fx->overlap) {
			real += (long long)(k / 2 * OVERLAP_COST);	/* one per odd collective before k */
			if (rank && k % 2 == 0)
				real -= (long long)PLANTED;
		}

		__u64 mono = (__u64)(real - truth);

		if (fx->preempted) {
			ev_call(b, mono - SYNC_BEFORE - 100 * US, PID, PID, ISR_CUDA_FN_cuStreamSynchronize, 0,
				SYNC_BEFORE);
			if (rank) {
				ev_switch(b, mono - PREEMPT_FROM, PID, PID, HOG, HOG, 0,
					  ISR_SWITCH_PREEMPT | ISR_SWITCH_RUNNABLE);
				ev_switch(b, mono - PREEMPT_TO, HOG, HOG, PID, PID, 0, 0);
			}
		}
		ev_nccl_allreduce(b, mono, k);
	}
	synth__write(b, fx->path[rank], 4096);
	b->rec.clock_pairs = NULL;
	b->rec.clock_pair_count = 0;
	synth__free(b);
}

static int make_fixture(void **state, bool preempted, bool overlap)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	fx->preempted = preempted;
	fx->overlap = overlap;
	memcpy(fx->dir, "/tmp/isr-ranks-XXXXXX", sizeof("/tmp/isr-ranks-XXXXXX"));
	assert_non_null(mkdtemp(fx->dir));
	for (int r = 0; r < 2; r++) {
		char path[sizeof(fx->path[r])];

		snprintf(path, sizeof(path), "%s/rank%d.isr", fx->dir, r);
		memcpy(fx->path[r], path, sizeof(path));
		write_rank(fx, r);
	}
	*state = fx;
	return 0;
}

static int setup(void **state)
{
	return make_fixture(state, false, false);
}

static int setup_preempted(void **state)
{
	return make_fixture(state, true, false);
}

static int setup_overlap(void **state)
{
	return make_fixture(state, false, true);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* The two recordings analysed (streamed, as analyze does) and lined up. */
struct loaded {
	struct analysis *a[2];
	const char *names[2];
	struct analysis_set set;
};

static void load_set(struct fixture *fx, struct loaded *l)
{
	char err[512];

	memset(l, 0, sizeof(*l));
	for (int r = 0; r < 2; r++) {
		struct pass *p;

		if (pass__open_file(fx->path[r], NULL, &p, err, sizeof(err)))
			fail_msg("pass__open_file(%s): %s", fx->path[r], err);
		assert_int_equal(analysis__run_pass(p, &l->a[r]), 0);
		/* one rank per recording: nothing to line up alone */
		assert_null(l->a[r]->ranks);
		l->names[r] = fx->path[r];
	}
	l->set = (struct analysis_set){ .a = (const struct analysis *const *)l->a, .names = l->names, .n = 2 };
	if (analysis_set__compute(&l->set, err, sizeof(err)))
		fail_msg("analysis_set__compute: %s", err);
	assert_non_null(l->set.ranks);
}

static void free_set(struct loaded *l)
{
	analysis_set__clear(&l->set);
	for (int r = 0; r < 2; r++)
		analysis__free(l->a[r]);
}

static char *render(const struct analysis_set *set, int (*writer)(FILE *, const struct analysis_set *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(writer(m, set), 0);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static const struct rank_row *row_of_rank(const struct ranks *r, int rank)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].rank == rank)
			return &r->rows[i];
	fail_msg("no row of rank %d", rank);
	return NULL;
}

/* --- alignment --------------------------------------------------------------------------------- */

static void test_lateness_on_realtime(void **state)
{
	struct fixture *fx = *state;
	struct loaded l;
	const struct ranks *r;
	const struct rank_row *r0, *r1;
	const struct finding *f = NULL;
	long long measured;
	__u64 unc_each = PAIR_UNC + 6 * US;	/* the best pair's plus half the pairs' spread (12 us) */

	load_set(fx, &l);
	r = l.set.ranks;
	assert_int_equal(r->nsources, 2);
	assert_int_equal(r->nrows, 2);
	assert_false(r->unaligned);
	for (int s = 0; s < 2; s++) {
		assert_int_equal(r->clocks[s].pairs, 2);
		assert_int_equal(r->clocks[s].offset_ns, (s ? TRUE1 : TRUE0) + pair_err[s][0]);
		assert_int_equal(r->clocks[s].uncertainty_ns, unc_each);
	}
	assert_int_equal(r->uncertainty_ns, 2 * unc_each);
	r0 = row_of_rank(r, 0);
	r1 = row_of_rank(r, 1);
	assert_int_equal(r0->source, 0);
	assert_int_equal(r1->source, 1);
	assert_int_equal(r0->pid, PID);
	assert_int_equal(r1->pid, PID);
	assert_string_equal(r1->rank_from, "communicator");
	assert_int_equal(r0->collectives, COLLECTIVES);
	assert_int_equal(r1->collectives, COLLECTIVES);
	assert_int_equal(r1->last, COLLECTIVES);
	assert_int_equal(r1->late, COLLECTIVES);
	assert_int_equal(r0->last, 0);
	assert_int_equal(r0->lateness_p50_ns, 0);
	measured = (long long)r1->lateness_p50_ns;
	print_message("planted lateness 3.000 ms, measured %.3f ms, stated alignment uncertainty %.3f ms\n",
		      measured / 1e6, r->uncertainty_ns / 1e6);
	assert_true(llabs(measured - (long long)PLANTED) <= (long long)r->uncertainty_ns);
	/* the monotonic clocks are 4000 s apart: unaligned, it would be off by that */
	assert_int_equal(r1->lateness_p99_ns, r1->lateness_p50_ns);
	assert_int_equal(r1->lateness_total_ns, COLLECTIVES * r1->lateness_p50_ns);
	assert_int_equal(r->ncomms, 1);
	assert_int_equal(r->comms[0].id_hash, ID_HASH);
	assert_int_equal(r->comms[0].collectives, COLLECTIVES);
	assert_int_equal(r->comms[0].late, COLLECTIVES);
	/* the straggler finding is the set's, naming rank 1 and its file */
	for (size_t i = 0; i < l.set.findings.n; i++)
		if (strcmp(l.set.findings.v[i].rule, "nccl_straggler") == 0)
			f = &l.set.findings.v[i];
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "rank")), 1);
	assert_string_equal(json_string_value(json_object_get(f->evidence, "recording")), fx->path[1]);
	/* late at every collective: no on-time step to measure against, the
	 * cost is the wait itself */
	assert_int_equal(r1->cost_by_arrival, COLLECTIVES);
	assert_int_equal(r1->cost_by_steps + r1->cost_by_gpu, 0);
	assert_int_equal(r1->cost_ns, r1->late_ns);
	assert_true(fabs(f->cost_s - r1->late_ns / 1e9) < 1e-9);
	/* each call knows its collective's last arrival, on its own clock */
	for (int s = 0; s < 2; s++) {
		for (size_t k = 0; k < l.a[s]->nccl.narrivals; k++) {
			const struct ranks_arrival *ra = &r->arrivals[s][k];

			assert_int_equal(ra->straggler, s == 1);
			assert_int_equal(ra->late, s == 1);
			assert_int_equal(ra->last_rank, 1);
			if (s == 1)
				assert_int_equal(ra->last_ns, l.a[s]->nccl.arrivals[k].ns);
			else
				assert_int_equal(ra->last_ns, l.a[s]->nccl.arrivals[k].ns + (__u64)measured);
		}
	}
	free_set(&l);
}

/* The straggler spun in a synchronization before each late arrival, as the
 * others did; it was late because it waited for its CPU in there: the
 * reason is the run queue (its share counted inside the call), not the
 * synchronization both ranks made. */
static void test_preempted_inside_a_sync(void **state)
{
	struct fixture *fx = *state;
	struct loaded l;
	const struct finding *f = NULL;
	json_t *reason;
	double sh, others;

	load_set(fx, &l);
	for (size_t i = 0; i < l.set.findings.n; i++)
		if (strcmp(l.set.findings.v[i].rule, "nccl_straggler") == 0)
			f = &l.set.findings.v[i];
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(f->evidence, "rank")), 1);
	reason = json_object_get(f->evidence, "reason");
	assert_non_null(reason);
	sh = json_real_value(json_object_get(reason, "share"));
	others = json_real_value(json_object_get(reason, "others_share"));
	print_message("reason %s: %.0f%% of its late windows, the others %.0f%%\n",
		      json_string_value(json_object_get(reason, "category")), 100 * sh, 100 * others);
	assert_string_equal(json_string_value(json_object_get(reason, "category")), "runqueue");
	/* 2.5 ms of the 3 ms from rank 0's arrival to its own, within the
	 * alignment's uncertainty */
	assert_true(sh > 0.8 && sh < 0.87);
	assert_true(others < 0.01);
	free_set(&l);
}

/* Rank 1 late by 3 ms at every other collective, while rank 0 had work of
 * its own for all but 1 ms of each wait: the finding's cost is what rank
 * 0's steps lost (1 ms at each of the 10 late collectives, measured against
 * its 50 ms step after the on-time ones), not the 30 ms it waited. */
static void test_late_cost_by_steps(void **state)
{
	struct fixture *fx = *state;
	struct loaded l;
	const struct rank_row *r0, *r1;
	const struct finding *f = NULL;

	load_set(fx, &l);
	r0 = row_of_rank(l.set.ranks, 0);
	r1 = row_of_rank(l.set.ranks, 1);
	assert_int_equal(r1->late, COLLECTIVES / 2);
	assert_int_equal(r0->step_base_ns, EVERY);
	assert_int_equal(r1->cost_by_steps, COLLECTIVES / 2);
	assert_int_equal(r1->cost_by_gpu + r1->cost_by_arrival, 0);
	assert_int_equal(r1->cost_step_base_ns, EVERY);
	assert_int_equal(r1->cost_ns, COLLECTIVES / 2 * OVERLAP_COST);
	assert_true(llabs((long long)r1->late_ns - (long long)(COLLECTIVES / 2 * PLANTED)) <=
		    (long long)(COLLECTIVES / 2 * l.set.ranks->uncertainty_ns));
	for (size_t i = 0; i < l.set.findings.n; i++)
		if (strcmp(l.set.findings.v[i].rule, "nccl_straggler") == 0)
			f = &l.set.findings.v[i];
	assert_non_null(f);
	print_message("%s\n", f->summary);
	assert_true(fabs(f->cost_s - 0.010) < 1e-9);
	assert_int_equal(f->severity, SEV_CRITICAL);
	assert_non_null(strstr(f->summary, "Of that wait, 0.010 s held the job back (the finding's cost), measured by "
					   "the first rank's steps at 10 (how much longer its step from there to the "
					   "next collective was than its median step after on-time ones, 50.00 ms)."));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f->evidence, "cost_measured_by"),
							    "steps")), 10);
	assert_true(fabs(json_real_value(json_object_get(f->evidence, "first_rank_step_base_s")) - 0.050) < 1e-9);
	free_set(&l);
}

/* --- JSON ---------------------------------------------------------------------------------------- */

static void test_json_holds_every_recording(void **state)
{
	struct fixture *fx = *state;
	struct loaded l;
	char *text, *one;
	json_t *root, *recs, *rec, *ranks, *clocks, *single;
	json_error_t jerr;
	size_t i;

	load_set(fx, &l);
	text = render(&l.set, report__write_json_set);
	root = json_loads(text, 0, &jerr);
	if (!root)
		fail_msg("the JSON of two recordings does not parse: %s", jerr.text);
	assert_int_equal(json_integer_value(json_object_get(root, "schema_version")), REPORT_SET_SCHEMA_VERSION);
	recs = json_object_get(root, "recordings");
	assert_int_equal(json_array_size(recs), 2);
	json_array_foreach(recs, i, rec) {
		json_t *report = json_object_get(rec, "report");

		assert_string_equal(json_string_value(json_object_get(rec, "file")), fx->path[i]);
		assert_int_equal(json_integer_value(json_object_get(report, "schema_version")), REPORT_SCHEMA_VERSION);
		/* the recording's complete report, as analyze of it alone writes it */
		one = synth__render(l.a[i], report__write_json);
		single = json_loads(one, 0, &jerr);
		assert_non_null(single);
		assert_true(json_equal(single, report));
		assert_int_equal(json_integer_value(json_object_get(json_object_get(report, "event_counts"),
								  "nccl_call")), COLLECTIVES);
		json_decref(single);
		free(one);
	}
	ranks = json_object_get(root, "ranks");
	assert_int_equal(json_array_size(ranks), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ranks, 1), "recording")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ranks, 1), "late_arrivals")), COLLECTIVES);
	clocks = json_object_get(json_object_get(root, "collectives"), "clocks");
	assert_int_equal(json_array_size(clocks), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(clocks, 1), "recording")), fx->path[1]);
	assert_true(json_real_value(json_object_get(json_object_get(root, "collectives"), "alignment_uncertainty_s")) >
		    0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(root, "findings"), 0),
							      "rule")), "nccl_straggler");
	json_decref(root);
	free(text);
	free_set(&l);
}

/* --- Markdown ------------------------------------------------------------------------------------ */

static void test_markdown_ranks_first(void **state)
{
	struct fixture *fx = *state;
	struct loaded l;
	char *md, *ranks, *straggler, *rec[2], heading[200];

	load_set(fx, &l);
	md = render(&l.set, report__write_markdown_set);
	ranks = strstr(md, "## Ranks\n");
	straggler = strstr(md, "`nccl_straggler`");
	for (int r = 0; r < 2; r++) {
		snprintf(heading, sizeof(heading), "\n# Recording %d of 2: %s\n", r + 1, fx->path[r]);
		rec[r] = strstr(md, heading);
		assert_non_null(rec[r]);
	}
	assert_non_null(ranks);
	assert_non_null(straggler);
	assert_true(ranks < straggler && straggler < rec[0] && rec[0] < rec[1]);
	/* the alignment, and the per-rank table with each rank's file */
	assert_non_null(strstr(ranks, "| rank | pid | tid | rank from | recording | collectives |"));
	snprintf(heading, sizeof(heading), "| 1 | %u | %u | communicator | %s | %d | %d | %d |", PID, PID, fx->path[1],
		 COLLECTIVES, COLLECTIVES, COLLECTIVES);
	assert_non_null(strstr(ranks, heading));
	assert_non_null(strstr(ranks, "2 recordings lined up on CLOCK_REALTIME"));
	/* each recording's report, its headings one level down */
	assert_non_null(strstr(rec[0], "\n### Findings\n"));
	assert_null(strstr(md, "# inferscope-bpf report\n"));
	free(md);
	free_set(&l);
}

/* --- HTML ---------------------------------------------------------------------------------------- */

/* The values of attr="..." in html, in order. */
static size_t attr_values(const char *html, const char *attr, char ***out)
{
	size_t n = 0, alen = strlen(attr);
	char **v = NULL;

	for (const char *p = html; (p = strstr(p, attr)); p += alen) {
		const char *end;

		if (p > html && p[-1] != ' ')
			continue;
		end = strchr(p + alen, '"');
		assert_non_null(end);
		v = realloc(v, (n + 1) * sizeof(*v));
		assert_non_null(v);
		v[n++] = strndup(p + alen, (size_t)(end - p - alen));
	}
	*out = v;
	return n;
}

static void free_values(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void test_html_anchors(void **state)
{
	struct fixture *fx = *state;
	struct loaded l;
	char *html, **ids, **hrefs, *landing, *end;
	size_t nids, nhrefs, landing_links = 0;

	load_set(fx, &l);
	html = render(&l.set, report__write_html_set);
	nids = attr_values(html, "id=\"", &ids);
	nhrefs = attr_values(html, "href=\"", &hrefs);
	assert_true(nids > 20);
	for (size_t i = 0; i < nids; i++)
		for (size_t j = i + 1; j < nids; j++)
			if (strcmp(ids[i], ids[j]) == 0)
				fail_msg("id \"%s\" is twice in the page", ids[i]);
	for (size_t i = 0; i < nhrefs; i++) {
		bool found = false;

		assert_true(hrefs[i][0] == '#');
		for (size_t j = 0; j < nids && !found; j++)
			found = strcmp(hrefs[i] + 1, ids[j]) == 0;
		if (!found)
			fail_msg("link %s leads to no id of the page", hrefs[i]);
	}
	/* the landing section: one row per rank, each linking to its recording */
	landing = strstr(html, "<section id=\"ranks\">");
	assert_non_null(landing);
	end = strstr(landing, "</section>");
	assert_non_null(end);
	for (int r = 0; r < 2; r++) {
		char row[96];

		snprintf(row, sizeof(row), "<tr><td class=\"num\">%d</td><td><a href=\"#rec%d\">", r, r);
		assert_true(strstr(landing, row) && strstr(landing, row) < end);
	}
	for (const char *p = landing; (p = strstr(p, "<a href=")) && p < end; p++)
		landing_links++;
	assert_int_equal(landing_links, 2);
	/* no NCCL kernels in these recordings: no GPU time told */
	{
		const char *th = strstr(landing, "<th class=\"num\">NCCL GPU ms</th>"),
			   *td = strstr(landing, "<td class=\"num\">-</td><td>");

		assert_true(th && th < end);
		assert_true(td && td < end);
	}
	/* each recording's section, and its charts' data picked by data-rec */
	assert_non_null(strstr(html, "<section id=\"rec0\" class=\"recording\">"));
	assert_non_null(strstr(html, "<section id=\"rec1\" class=\"recording\">"));
	assert_non_null(strstr(html, "id=\"rec1-findings\""));
	assert_int_equal(synth__count(html, "<svg class=\"tc\" data-rec=\""), synth__count(html, "<svg class=\"tc\""));
	assert_non_null(strstr(html, "\"recordings\":[{"));
	free_values(ids, nids);
	free_values(hrefs, nhrefs);
	free(html);
	free_set(&l);
}

/* --- Perfetto ------------------------------------------------------------------------------------ */

static void test_perfetto_pid_collision(void **state)
{
	struct fixture *fx = *state;
	struct perfetto_stats st;
	struct loaded l;
	char path[160], want[128], *text;
	const struct ranks *r;
	long long shift;
	size_t compressed;
	FILE *f;

	load_set(fx, &l);
	r = l.set.ranks;
	snprintf(path, sizeof(path), "%s/trace.pftrace", fx->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(perfetto__write_set(f, &l.set, &st), 0);
	assert_int_equal(fclose(f), 0);
	text = perfetto_text(path, &compressed);
	assert_int_equal(compressed, st.compressed);
	assert_int_equal(synth__count(text, "packet {"), st.packets);
	assert_int_equal(synth__count(text, "type: TYPE_SLICE_BEGIN"), st.slices);
	/* two processes, apart although their pid is the same, named by rank */
	assert_int_equal(synth__count(text, "process {"), 2);
	snprintf(want, sizeof(want), "process {\n      pid: %u\n", PID);
	assert_int_equal(synth__count(text, want), 1);
	snprintf(want, sizeof(want), "process {\n      pid: %u\n", PID + PASS_PID_LIMIT);
	assert_int_equal(synth__count(text, want), 1);
	snprintf(want, sizeof(want), "tid: %u\n", PID);
	assert_int_equal(synth__count(text, want), 1);
	snprintf(want, sizeof(want), "tid: %u\n", PID + PASS_PID_LIMIT);
	assert_int_equal(synth__count(text, want), 1);
	snprintf(want, sizeof(want), "process_name: \"rank 0: python3 (pid %u)\"", PID);
	assert_int_equal(synth__count(text, want), 1);
	snprintf(want, sizeof(want), "process_name: \"rank 1: python3 (pid %u)\"", PID);
	assert_int_equal(synth__count(text, want), 1);
	/* every collective on both ranks, rank 1 the straggler of each */
	assert_int_equal(synth__count(text, "string_value: \"ncclAllReduce\""), 2 * COLLECTIVES);
	assert_int_equal(synth__count(text, "bool_value: true"), 2 * COLLECTIVES);	/* rank 1: straggler and late */
	assert_int_equal(synth__count(text, "string_value: \"1234abcd5678ef90\""), 2 * COLLECTIVES + 2);
	/* rank 1's first all-reduce on rank 0's clock: shifted by the offsets */
	shift = r->clocks[1].offset_ns - r->clocks[0].offset_ns;
	snprintf(want, sizeof(want), "timestamp: %llu\n",
		 (unsigned long long)((long long)l.a[1]->nccl.arrivals[0].ns + shift));
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "timestamp: %llu\n", (unsigned long long)l.a[1]->nccl.arrivals[0].ns);
	assert_null(strstr(text, want));
	print_message("two recordings, one trace: %llu packets, %llu tracks, %llu slices\n",
		      (unsigned long long)st.packets, (unsigned long long)st.tracks, (unsigned long long)st.slices);
	free(text);
	free_set(&l);
}

/* --- the CLI's entry ------------------------------------------------------------------------------- */

/* analyze__run_many's exit code, its stderr in *err (the caller frees), its report in out. */
static int analyze_many(const char *const *in, size_t n, enum report_format fmt, const char *out, char **err)
{
	char path[] = "/tmp/isr-ranks-err-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO), e;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	e = analyze__run_many(in, n, fmt, out, NULL);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	close(fd);
	*err = synth__slurp(path, NULL);
	assert_non_null(*err);
	unlink(path);
	return e;
}

static void test_corrupt_second_file_is_named(void **state)
{
	struct fixture *fx = *state;
	char bad[160], out[160], *err;
	const char *in[2] = { fx->path[0], bad };
	struct stat st;
	int fd;

	snprintf(bad, sizeof(bad), "%s/broken.isr", fx->dir);
	snprintf(out, sizeof(out), "%s/report.md", fx->dir);
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "ISR garbage, not a recording", 28), 28);
	close(fd);
	assert_int_not_equal(analyze_many(in, 2, REPORT_MD, out, &err), 0);
	if (!strstr(err, "cannot read") || !strstr(err, bad))
		fail_msg("the error does not name %s: %s", bad, err);
	assert_null(strstr(err, fx->path[0]));
	assert_int_equal(stat(out, &st), -1);	/* no report */
	free(err);
}

static void test_directory_and_single(void **state)
{
	struct fixture *fx = *state;
	char out[160], empty[160], alone[160], *err, *md, *md_one;
	const char *dir[1] = { fx->dir }, *files[2] = { fx->path[0], fx->path[1] };
	const char *one[1] = { fx->path[0] };

	/* the directory: its .isr files in name order, as if given one by one */
	snprintf(out, sizeof(out), "%s/dir.md", fx->dir);
	assert_int_equal(analyze_many(dir, 1, REPORT_MD, out, &err), 0);
	free(err);
	md = synth__slurp(out, NULL);
	assert_non_null(md);
	assert_non_null(strstr(md, "# inferscope-bpf report: 2 recordings"));
	assert_true(strstr(md, "# Recording 1 of 2: ") && strstr(md, "rank0.isr") < strstr(md, "rank1.isr"));
	free(md);
	snprintf(out, sizeof(out), "%s/files.md", fx->dir);
	assert_int_equal(analyze_many(files, 2, REPORT_MD, out, &err), 0);
	free(err);
	md = synth__slurp(out, NULL);
	assert_non_null(md);
	assert_non_null(strstr(md, "# inferscope-bpf report: 2 recordings"));
	free(md);
	/* one recording: the report analyze__run writes, byte for byte */
	snprintf(out, sizeof(out), "%s/one.md", fx->dir);
	snprintf(alone, sizeof(alone), "%s/alone.md", fx->dir);
	assert_int_equal(analyze_many(one, 1, REPORT_MD, out, &err), 0);
	free(err);
	assert_int_equal(analyze__run(fx->path[0], REPORT_MD, alone, NULL), 0);
	md = synth__slurp(out, NULL);
	assert_non_null(md);
	md_one = synth__slurp(alone, NULL);
	assert_non_null(md_one);
	assert_string_equal(md, md_one);
	free(md);
	free(md_one);
	/* a directory without recordings */
	snprintf(empty, sizeof(empty), "%s/empty", fx->dir);
	assert_int_equal(mkdir(empty, 0700), 0);
	dir[0] = empty;
	assert_int_not_equal(analyze_many(dir, 1, REPORT_MD, out, &err), 0);
	if (!strstr(err, empty) || !strstr(err, "no recording"))
		fail_msg("the error does not say %s holds no recording: %s", empty, err);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lateness_on_realtime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_holds_every_recording, setup, teardown),
		cmocka_unit_test_setup_teardown(test_markdown_ranks_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html_anchors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_perfetto_pid_collision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_second_file_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_and_single, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preempted_inside_a_sync, setup_preempted, teardown),
		cmocka_unit_test_setup_teardown(test_late_cost_by_steps, setup_overlap, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
