// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `export FILE... --sqlite OUT.db`: recordings as SQL tables (docs/sql.md).
 * Each recording is one transaction: its row in `recordings`, then its
 * analysis (findings, steps, Python stacks, kernel names) and one walk over
 * its events (export_walk) that writes every row as it goes through
 * prepared statements; SQLite's own page cache bounds the writer's memory.
 * Indexes are made once at the end, over everything written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "analyze.h"
#include "analysis.h"
#include "attribution.h"
#include "pass.h"
#include "registry.h"
#include "text.h"
#include "timeline.h"

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS recordings(id INTEGER PRIMARY KEY, path TEXT, hostname TEXT, kernel TEXT, "
	"  tool_version TEXT, start_ns INTEGER, end_ns INTEGER, duration_s REAL, events INTEGER, truncated INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS processes(recording INTEGER, pid INTEGER, ppid INTEGER, comm TEXT, exe TEXT, "
	"  cmdline TEXT);\n"
	"CREATE TABLE IF NOT EXISTS threads(recording INTEGER, pid INTEGER, tid INTEGER, comm TEXT, start_ns INTEGER, "
	"  end_ns INTEGER, launches INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS api_calls(recording INTEGER, pid INTEGER, tid INTEGER, start_ns INTEGER, "
	"  duration_ns INTEGER, function TEXT, family TEXT, status INTEGER, handle INTEGER, a0 INTEGER, a1 INTEGER, "
	"  a2 INTEGER, a3 INTEGER, a4 INTEGER, a5 INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS kernel_names(recording INTEGER, pid INTEGER, handle INTEGER, name TEXT, "
	"  launches INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS kernels(recording INTEGER, pid INTEGER, device INTEGER, stream INTEGER, "
	"  correlation INTEGER, start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, name TEXT, grid TEXT, "
	"  block TEXT, registers INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS memcpys(recording INTEGER, pid INTEGER, device INTEGER, stream INTEGER, "
	"  correlation INTEGER, start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, kind INTEGER, bytes INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS sched_spans(recording INTEGER, pid INTEGER, tid INTEGER, state TEXT, "
	"  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, other_tid INTEGER, cuda_function TEXT);\n"
	"CREATE TABLE IF NOT EXISTS gpu_gaps(recording INTEGER, gap INTEGER, pid INTEGER, device INTEGER, "
	"  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, leading INTEGER, trailing INTEGER, "
	"  launcher_tid INTEGER, after_sync INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS gap_causes(recording INTEGER, gap INTEGER, cause TEXT, ns INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS faults(recording INTEGER, pid INTEGER, tid INTEGER, start_ns INTEGER, "
	"  duration_ns INTEGER, address INTEGER, major INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS gil_waits(recording INTEGER, pid INTEGER, tid INTEGER, start_ns INTEGER, "
	"  end_ns INTEGER, duration_ns INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS py_frames(recording INTEGER, pid INTEGER, stack INTEGER, depth INTEGER, "
	"  file TEXT, line INTEGER, function TEXT);\n"
	"CREATE TABLE IF NOT EXISTS py_samples(recording INTEGER, pid INTEGER, tid INTEGER, ts_ns INTEGER, "
	"  stack INTEGER, kind TEXT);\n"
	"CREATE TABLE IF NOT EXISTS nvtx(recording INTEGER, pid INTEGER, tid INTEGER, ts_ns INTEGER, kind TEXT, "
	"  id INTEGER, name TEXT);\n"
	"CREATE TABLE IF NOT EXISTS findings(recording INTEGER, rank INTEGER, rule TEXT, severity TEXT, cost_s REAL, "
	"  pid INTEGER, tid INTEGER, summary TEXT, suggestion TEXT);\n"
	"CREATE TABLE IF NOT EXISTS steps(recording INTEGER, step INTEGER, source TEXT, name TEXT, pid INTEGER, "
	"  tid INTEGER, start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, launches INTEGER, running_ns INTEGER, "
	"  runqueue_ns INTEGER, blocked_ns INTEGER, io_ns INTEGER, sync_ns INTEGER, gil_ns INTEGER, fault_ns INTEGER, "
	"  cuda_ns INTEGER);\n";

static const char indexes[] =
	"CREATE INDEX IF NOT EXISTS threads_by_tid ON threads(recording, pid, tid);\n"
	"CREATE INDEX IF NOT EXISTS api_calls_by_thread ON api_calls(recording, tid, start_ns);\n"
	"CREATE INDEX IF NOT EXISTS api_calls_by_function ON api_calls(recording, function);\n"
	"CREATE INDEX IF NOT EXISTS api_calls_by_handle ON api_calls(recording, pid, handle);\n"
	"CREATE INDEX IF NOT EXISTS kernel_names_by_handle ON kernel_names(recording, pid, handle);\n"
	"CREATE INDEX IF NOT EXISTS kernels_by_time ON kernels(recording, start_ns);\n"
	"CREATE INDEX IF NOT EXISTS kernels_by_correlation ON kernels(recording, pid, correlation);\n"
	"CREATE INDEX IF NOT EXISTS memcpys_by_time ON memcpys(recording, start_ns);\n"
	"CREATE INDEX IF NOT EXISTS sched_spans_by_thread ON sched_spans(recording, tid, start_ns);\n"
	"CREATE INDEX IF NOT EXISTS gap_causes_by_gap ON gap_causes(recording, gap);\n"
	"CREATE INDEX IF NOT EXISTS py_frames_by_stack ON py_frames(recording, pid, stack, depth);\n"
	"CREATE INDEX IF NOT EXISTS py_samples_by_stack ON py_samples(recording, pid, stack);\n"
	"CREATE INDEX IF NOT EXISTS steps_by_time ON steps(recording, start_ns, end_ns);\n";

enum stmt_id {
	S_RECORDING, S_PROCESS, S_THREAD, S_CALL, S_KNAME, S_KERNEL, S_MEMCPY, S_SPAN, S_GAP, S_GAP_CAUSE, S_FAULT,
	S_GIL, S_FRAME, S_SAMPLE, S_NVTX, S_FINDING, S_STEP, S_MAX
};

static const char *const stmt_sql[S_MAX] = {
	[S_RECORDING] = "INSERT INTO recordings VALUES(?,?,?,?,?,?,?,?,?,?)",
	[S_PROCESS] = "INSERT INTO processes VALUES(?,?,?,?,?,?)",
	[S_THREAD] = "INSERT INTO threads VALUES(?,?,?,?,?,?,?)",
	[S_CALL] = "INSERT INTO api_calls VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_KNAME] = "INSERT INTO kernel_names VALUES(?,?,?,?,?)",
	[S_KERNEL] = "INSERT INTO kernels VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MEMCPY] = "INSERT INTO memcpys VALUES(?,?,?,?,?,?,?,?,?,?)",
	[S_SPAN] = "INSERT INTO sched_spans VALUES(?,?,?,?,?,?,?,?,?)",
	[S_GAP] = "INSERT INTO gpu_gaps VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[S_GAP_CAUSE] = "INSERT INTO gap_causes VALUES(?,?,?,?)",
	[S_FAULT] = "INSERT INTO faults VALUES(?,?,?,?,?,?,?)",
	[S_GIL] = "INSERT INTO gil_waits VALUES(?,?,?,?,?,?)",
	[S_FRAME] = "INSERT INTO py_frames VALUES(?,?,?,?,?,?,?)",
	[S_SAMPLE] = "INSERT INTO py_samples VALUES(?,?,?,?,?,?)",
	[S_NVTX] = "INSERT INTO nvtx VALUES(?,?,?,?,?,?,?)",
	[S_FINDING] = "INSERT INTO findings VALUES(?,?,?,?,?,?,?,?,?)",
	[S_STEP] = "INSERT INTO steps VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
};

struct exporter {
	sqlite3 *db;
	sqlite3_stmt *st[S_MAX];
	sqlite3_int64 rec;		/* this recording's id */
	const struct analysis *a;
	const struct pass *walk;	/* the export's own pass */
	__u64 events;			/* it served */
	sqlite3_int64 gaps;
	__u64 rows;
	int err;			/* first failure */
};

/* One row: binds the values (i: integer, d: double, t: text or NULL, n:
 * NULL) after the recording id and steps the statement. */
static void row(struct exporter *x, enum stmt_id id, const char *types, ...)
{
	sqlite3_stmt *s = x->st[id];
	va_list ap;
	int col = 2, rc;

	if (x->err)
		return;
	sqlite3_bind_int64(s, 1, x->rec);
	va_start(ap, types);
	for (const char *t = types; *t; t++, col++) {
		switch (*t) {
		case 'i':
			sqlite3_bind_int64(s, col, va_arg(ap, sqlite3_int64));
			break;
		case 'd':
			sqlite3_bind_double(s, col, va_arg(ap, double));
			break;
		case 't': {
			const char *v = va_arg(ap, const char *);
			size_t len;
			char *u = v ? text__dup(v, SIZE_MAX, TEXT_UTF8, &len) : NULL;

			/* SQLite's TEXT is UTF-8: the names as written (lib/text.h) */
			if (v && !u)
				x->err = -ENOMEM;
			if (u)
				sqlite3_bind_text(s, col, u, (int)len, free);
			else
				sqlite3_bind_null(s, col);
			break;
		}
		default:
			sqlite3_bind_null(s, col);
		}
	}
	va_end(ap);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "inferscope-bpf export: %s\n", sqlite3_errmsg(x->db));
		x->err = -EIO;
	}
	x->rows++;
}

#define I(v) ((sqlite3_int64)(v))

static const char *family_name(__u16 fam)
{
	static const char *const names[] = {
		[ISR_CUDA_FAM_LAUNCH] = "launch", [ISR_CUDA_FAM_LAUNCH_EX] = "launch", [ISR_CUDA_FAM_GRAPH] = "graph",
		[ISR_CUDA_FAM_COPY] = "copy", [ISR_CUDA_FAM_COPY_PEER] = "copy", [ISR_CUDA_FAM_COPY_2D] = "copy",
		[ISR_CUDA_FAM_COPY_3D] = "copy", [ISR_CUDA_FAM_SET] = "memset", [ISR_CUDA_FAM_SYNC] = "sync",
		[ISR_CUDA_FAM_ALLOC] = "alloc", [ISR_CUDA_FAM_FREE] = "free", [ISR_CUDA_FAM_VMM_CREATE] = "vmm",
		[ISR_CUDA_FAM_VMM_RELEASE] = "vmm", [ISR_CUDA_FAM_VMM_MAP] = "vmm", [ISR_CUDA_FAM_VMM_UNMAP] = "vmm",
		[ISR_CUDA_FAM_NAME] = "name", [ISR_CUDA_FAM_ALIAS] = "name", [ISR_CUDA_FAM_COPY_SYNC] = "copy_sync",
	};

	return fam < sizeof(names) / sizeof(names[0]) && names[fam] ? names[fam] : "other";
}

/* A traced process's call. */
static void on_cuda_call(struct exporter *x, const struct pass_event *e)
{
	const struct isr_ev_cuda_call *c = (const void *)e->h;
	const struct isr_cuda_fn *fn = isr_cuda_fn(c->func);
	bool returned = c->flags & ISR_CUDA_RETURNED;
	bool launch = fn && (fn->family == ISR_CUDA_FAM_LAUNCH || fn->family == ISR_CUDA_FAM_LAUNCH_EX);

	if (!pass__is_target(x->walk, c->hdr.pid))
		return;
	if (returned)
		row(x, S_CALL, "iiiittiiiiiiii", I(c->hdr.pid), I(c->hdr.tid), I(e->start), I(c->duration_ns),
		    fn ? fn->symbol : "?", fn ? family_name(fn->family) : "other", I(c->status),
		    launch ? I(c->args[0]) : I(0), I(c->args[0]), I(c->args[1]), I(c->args[2]), I(c->args[3]),
		    I(c->args[4]), I(c->args[5]));
	else
		row(x, S_CALL, "iiinttniiiiiii", I(c->hdr.pid), I(c->hdr.tid), I(e->start), fn ? fn->symbol : "?",
		    fn ? family_name(fn->family) : "other", launch ? I(c->args[0]) : I(0), I(c->args[0]),
		    I(c->args[1]), I(c->args[2]), I(c->args[3]), I(c->args[4]), I(c->args[5]));
}

/* GPU work the clock fit mapped onto the CPU clock. */
static void on_gpu_kernel(struct exporter *x, const struct pass_event *e)
{
	const struct isr_ev_gpu_kernel *k = (const void *)e->h;
	char grid[64], block[64];

	if (e->unmapped)
		return;
	snprintf(grid, sizeof(grid), "%d,%d,%d", k->grid[0], k->grid[1], k->grid[2]);
	snprintf(block, sizeof(block), "%d,%d,%d", k->block[0], k->block[1], k->block[2]);
	row(x, S_KERNEL, "iiiiiiittti", I(k->hdr.pid), I(k->device_id), I(k->stream_id), I(k->correlation_id),
	    I(e->start), I(e->end), I(e->end - e->start), summary__gpu_kernel_name(x->a->sum, k->hdr.pid, k->name_id),
	    grid, block, I(k->registers));
}

static void on_gpu_memcpy(struct exporter *x, const struct pass_event *e)
{
	const struct isr_ev_gpu_memcpy *m = (const void *)e->h;

	if (!e->unmapped)
		row(x, S_MEMCPY, "iiiiiiiii", I(m->hdr.pid), I(m->device_id), I(m->stream_id), I(m->correlation_id),
		    I(e->start), I(e->end), I(e->end - e->start), I(m->copy_kind), I(m->bytes));
}

static void on_page_fault(struct exporter *x, const struct pass_event *e)
{
	const struct isr_ev_page_fault *f = (const void *)e->h;

	row(x, S_FAULT, "iiiiii", I(f->hdr.pid), I(f->hdr.tid), I(e->start), I(e->end - e->start), I(f->address),
	    I((f->flags & ISR_FAULT_MAJOR) != 0));
}

/* --gil's waits: the acquires. */
static void on_gil(struct exporter *x, const struct pass_event *e)
{
	const struct isr_ev_gil *g = (const void *)e->h;

	if (g->kind == ISR_GIL_ACQUIRE)
		row(x, S_GIL, "iiiii", I(g->hdr.pid), I(g->hdr.tid), I(e->start), I(e->end), I(e->end - e->start));
}

static void on_py_sample(struct exporter *x, const struct pass_event *e)
{
	const struct isr_ev_py_sample *s = (const void *)e->h;

	row(x, S_SAMPLE, "iiiit", I(s->hdr.pid), I(s->hdr.tid), I(e->start), I(s->stack_id),
	    s->kind == ISR_PY_KIND_CUDA ? "cuda" : "sampled");
}

static void on_nvtx(struct exporter *x, const struct pass_event *e)
{
	static const char *const kinds[] = { [ISR_NVTX_PUSH] = "push", [ISR_NVTX_POP] = "pop",
					     [ISR_NVTX_START] = "start", [ISR_NVTX_END] = "end",
					     [ISR_NVTX_MARK] = "mark" };
	const struct isr_ev_nvtx *n = (const void *)e->h;
	char name[ISR_NVTX_NAME_LEN];

	memcpy(name, n->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	row(x, S_NVTX, "iiitit", I(n->hdr.pid), I(n->hdr.tid), I(e->start),
	    n->kind < sizeof(kinds) / sizeof(kinds[0]) && kinds[n->kind] ? kinds[n->kind] : "?", I(n->id),
	    n->kind == ISR_NVTX_PUSH || n->kind == ISR_NVTX_START || n->kind == ISR_NVTX_MARK ? name : NULL);
}

static void ignored(struct exporter *x, const struct pass_event *e)
{
	(void)x;
	(void)e;
}

/* The rows each event type makes (format/registry.h, ISR_EV_EVERY_TYPE);
 * the GPU gaps come from the attribution (on_gap). */
#define ON_TYPE(X)												\
	/* rows of their own */											\
	X(CUDA_CALL, on_cuda_call) X(GPU_KERNEL, on_gpu_kernel) X(GPU_MEMCPY, on_gpu_memcpy)			\
	X(PAGE_FAULT, on_page_fault) X(GIL, on_gil) X(PY_SAMPLE, on_py_sample) X(NVTX, on_nvtx)			\
	/* the threads and their states: the task model's and the timeline's (on_span) */			\
	X(SCHED_SWITCH, ignored) X(SCHED_WAKEUP, ignored) X(SCHED_WAKEUP_NEW, ignored)				\
	X(PROC_FORK, ignored) X(PROC_EXEC, ignored) X(PROC_EXIT, ignored) X(TASK_RENAME, ignored)		\
	X(PROC_HOLD, ignored)											\
	/* names and stacks, read through the analysis (export_analysis) */					\
	X(CUDA_NAME, ignored) X(GPU_NAME, ignored) X(PY_STACK, ignored) X(PY_CODE, ignored)			\
	X(PY_STATUS, ignored) X(TASK_INFO, ignored) X(RANK_ENV, ignored) X(NCCL_COMM, ignored)			\
	/* no table */												\
	X(SAMPLING, ignored) X(MEM_SAMPLE, ignored) X(RECLAIM, ignored) X(GIL_WAIT, ignored)			\
	X(GPU_MEMSET, ignored) X(GPU_SYNC, ignored) X(GPU_API, ignored) X(GPU_CLOCK, ignored)			\
	X(GPU_STATUS, ignored) X(GPU_WINDOW, ignored) X(NCCL_CALL, ignored)
static void (*const on_type[ISR_EV_TYPE_MAX])(struct exporter *x, const struct pass_event *e) = {
	ON_TYPE(ISR_EV_ENTRY)
};
ISR_EV_EVERY_TYPE(ON_TYPE);

static void on_event(void *ctx, const struct pass_event *e, const struct tl_thread *t)
{
	struct exporter *x = ctx;

	(void)t;
	x->events++;
	on_type[e->h->type](x, e);
}

static void on_span(void *ctx, const struct tl_span *s)
{
	struct exporter *x = ctx;
	const struct isr_cuda_fn *fn = s->cuda_fn ? isr_cuda_fn(s->cuda_fn) : NULL;

	row(x, S_SPAN, "iitiiiit", I(s->thread->pid), I(s->thread->tid), tl_cat_name(s->cat), I(s->start), I(s->end),
	    I(s->end - s->start), I(s->other.tid), fn ? fn->symbol : NULL);
}

static void on_gap(void *ctx, const struct tl_gap *g, const __u64 split[CAUSE_MAX])
{
	struct exporter *x = ctx;
	sqlite3_int64 id = ++x->gaps;

	row(x, S_GAP, "iiiiiiiiii", id, I(g->pid), I(g->device), I(g->start), I(g->end), I(g->end - g->start),
	    I(g->leading), I(g->trailing), I(g->launcher_tid), I(g->after_sync));
	for (int c = 0; c < CAUSE_MAX; c++)
		if (split[c])
			row(x, S_GAP_CAUSE, "iti", id, cause_name((enum cause)c), I(split[c]));
}

/* The one walk over the recording's events, in time order (a pass of its
 * own, streamed from the file as the analysis's was): every event to
 * on_event, the thread spans and the GPU gaps as the timeline closes them;
 * then the threads and the recording's row. */
static int export_walk(struct exporter *x, struct pass *p, const char *path)
{
	const struct recording *r = pass__recording(p);
	struct tl_observer obs = { .ctx = x, .span = on_span, .event = on_event };
	struct attr_gap_hook hook = { .ctx = x, .gap = on_gap };
	struct attribution *attr = NULL;
	struct timeline *tl;
	struct pass_event ev;
	int err = 0, n = 0;

	x->walk = p;
	x->events = 0;
	tl = timeline__new(p, r);
	attr = tl ? attribution__new(tl, p) : NULL;
	if (!attr)
		err = -ENOMEM;
	if (!err)
		err = timeline__observe(tl, attribution__observer(attr));
	if (!err)
		err = timeline__observe(tl, &obs);
	if (!err)
		attribution__on_gap(attr, &hook);
	while (!err && !x->err && (n = pass__next(p, &ev)) > 0)
		err = timeline__event(tl, &ev);
	if (!err && n < 0) {
		fprintf(stderr, "inferscope-bpf export: %s: %s\n", path, pass__error(p) ? pass__error(p) : strerror(-n));
		err = n;
	}
	if (!err)
		err = timeline__finish(tl);
	for (size_t i = 0; !err && i < timeline__thread_count(tl); i++) {
		const struct tl_thread *t = timeline__thread_at(tl, i);

		row(x, S_THREAD, "iitiii", I(t->pid), I(t->tid), t->comm, I(t->start_ns), I(t->end_ns), I(t->launches));
	}
	if (!err)
		row(x, S_RECORDING, "ttttiidii", path, r->host.hostname, r->host.kernel, r->host.tool_version,
		    I(pass__start(p)), I(pass__end(p)), (double)(pass__end(p) - pass__start(p)) / 1e9, I(x->events),
		    I(r->truncated));
	attribution__free(attr);
	timeline__free(tl);
	return err ? err : x->err;
}

/* What the analysis computed: findings, steps, kernel names, stacks. */
static void export_analysis(struct exporter *x)
{
	const struct analysis *a = x->a;
	const struct findings *fs = &a->ex->findings;
	const struct steps_result *sr = steps__result(a->ex->steps);

	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->v[i];

		row(x, S_FINDING, "ittdiitt", I(i + 1), f->rule, finding_severity_name(f->severity), f->cost_s, I(f->pid),
		    I(f->tid), f->summary, f->suggestion[0] ? f->suggestion : NULL);
	}
	for (size_t i = 0; i < sr->count; i++) {
		const struct step *s = &sr->steps[i];
		const __u64 *ns = s->acc.ns;

		row(x, S_STEP, "ittiiiiiiiiiiiiii", I(s->index), steps_source_name(sr->source), sr->name, I(s->pid),
		    I(s->tid), I(s->start), I(s->end), I(s->end - s->start), I(s->launches), I(ns[TL_RUNNING]),
		    I(ns[TL_RUNQUEUE]), I(ns[TL_BLOCKED]), I(ns[TL_IO]), I(ns[TL_SYNC]), I(ns[TL_GIL]),
		    I(ns[TL_FAULT]), I(ns[TL_CUDA] + ns[TL_CUDA_MEM]));
	}
	for (size_t i = 0; i < a->sum->kernel_count; i++) {
		const struct kernel_summary *k = &a->sum->kernels[i];

		row(x, S_KNAME, "iiti", I(k->pid), I(k->handle), k->name, I(k->launches));
	}
	for (size_t i = 0; a->py && i < a->py->nstacks; i++) {
		const struct py_stack *st = &a->py->stacks[i];

		for (__u16 d = 0; d < st->depth; d++) {
			const struct py_code *c = py_report__code(a->py, st->pid, st->frames[d].code);

			row(x, S_FRAME, "iiitit", I(st->pid), I(st->id), I(d), c ? c->filename : NULL,
			    c ? I(py_code__line(c, st->frames[d].instr)) : I(0), c ? c->qualname : NULL);
		}
	}
	for (size_t i = 0; i < a->r->process_count; i++) {
		const struct rec_process *p = &a->r->processes[i];

		row(x, S_PROCESS, "iittt", I(p->pid), I(p->ppid), p->comm, p->exe, p->cmdline);
	}
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	fprintf(stderr, "inferscope-bpf export: %s\n", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

/* One recording: analyzed in a pass streamed from the file, then walked
 * again for its rows. */
static int export_one(struct exporter *x, const char *path)
{
	struct analysis *a = NULL;
	struct pass *p = NULL, *walk = NULL;
	char err[512];
	int e;

	e = pass__open_file(path, NULL, &p, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf export: %s\n", err);
		return e;
	}
	e = analysis__run_pass(p, &a);
	if (e) {
		fprintf(stderr, "inferscope-bpf export: cannot analyze %s: %s\n", path,
			pass__error(p) ? pass__error(p) : strerror(-e));
		pass__free(p);
		return e;
	}
	e = pass__reopen(a->pass, &walk, err, sizeof(err));
	if (e)
		fprintf(stderr, "inferscope-bpf export: %s\n", err);
	x->a = a;
	x->gaps = 0;
	e = e ?: exec_sql(x->db, "BEGIN");
	if (!e) {
		sqlite3_stmt *q;

		if (sqlite3_prepare_v2(x->db, "SELECT coalesce(max(id), 0) + 1 FROM recordings", -1, &q, NULL) ==
			    SQLITE_OK &&
		    sqlite3_step(q) == SQLITE_ROW)
			x->rec = sqlite3_column_int64(q, 0);
		else
			e = -EIO;
		sqlite3_finalize(q);
		if (!e) {
			export_analysis(x);
			e = x->err ? x->err : export_walk(x, walk, path);
		}
		if (!e)
			e = exec_sql(x->db, "COMMIT");
		else
			exec_sql(x->db, "ROLLBACK");
	}
	if (!e)
		fprintf(stderr, "inferscope-bpf export: %s is recording %lld\n", path, (long long)x->rec);
	pass__free(walk);
	analysis__free(a);
	return e;
}

int analyze__export_sqlite(const char *const *paths, size_t n, const char *db_path)
{
	struct exporter x = { 0 };
	int e = 0;

	/* never through a symbolic link (docs/security.md) */
	if (sqlite3_open_v2(db_path, &x.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "inferscope-bpf export: cannot open %s: %s\n", db_path,
			x.db ? sqlite3_errmsg(x.db) : "out of memory");
		sqlite3_close(x.db);
		return -EIO;
	}
	/* one transaction per recording; a crash loses at most the one in progress */
	e = exec_sql(x.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384");
	if (!e)
		e = exec_sql(x.db, schema);
	for (int i = 0; !e && i < S_MAX; i++)
		if (sqlite3_prepare_v2(x.db, stmt_sql[i], -1, &x.st[i], NULL) != SQLITE_OK) {
			fprintf(stderr, "inferscope-bpf export: %s: %s\n", stmt_sql[i], sqlite3_errmsg(x.db));
			e = -EIO;
		}
	for (size_t i = 0; !e && i < n; i++)
		e = export_one(&x, paths[i]);
	if (!e)
		e = exec_sql(x.db, indexes);
	for (int i = 0; i < S_MAX; i++)
		sqlite3_finalize(x.st[i]);
	if (!e)
		e = exec_sql(x.db, "PRAGMA journal_mode=DELETE");
	if (sqlite3_close(x.db) != SQLITE_OK && !e)
		e = -EIO;
	return e;
}
