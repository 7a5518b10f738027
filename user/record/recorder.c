// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One recording: checks, then every enabled probe family (user/record/family.h)
 * opened and prepared, the targets set up (attached to, or the command
 * launched), the consume-and-write loop with one rescan of the targets a
 * second, and a finish that keeps everything the kernel queued. What a
 * family probes and how is in its own file; here is only what every
 * recording does.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "recorder.h"
#include "budget_ctl.h"
#include "clock.h"
#include "family.h"
#include "flight.h"
#include "hold_guard.h"
#include "isr_format.h"
#include "launch.h"
#include "loader_watch.h"
#include "mem_sample.h"
#include "preflight.h"
#include "proc.h"
#include "procinfo.h"
#include "rec_writer.h"
#include "tracer.h"

#define TICK_NS		1000000000ULL	/* rescan, chunk, clock pair and drops cadence */
#define LIVENESS_NS	200000000ULL
#define POLL_MS		50	/* drain cadence: bulk events never wake us */
#define MAX_PENDING	256
#define NUMA_EVERY	10	/* memory samples per reading of numa_maps (it walks the page tables) */

#define PROBE_FAMILY_REF(name) &family_##name,
static const struct probe_family *const families[] = { PROBE_FAMILIES(PROBE_FAMILY_REF) };
#undef PROBE_FAMILY_REF
#define NR_FAMILIES (sizeof(families) / sizeof(families[0]))

static volatile sig_atomic_t stop_signal, window_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void on_window_signal(int sig)
{
	(void)sig;
	window_signal = 1;
}

struct pending_snapshot {
	__u32 pid;
	__u32 origin;
	bool probed;	/* probed already, at its hold */
};

/* An enabled family and its state. */
struct family {
	const struct probe_family *ops;
	void *st;
};

struct recorder {
	const struct record_config *cfg;
	struct record_result *res;
	struct rec_writer *w;
	struct tracer *t;
	struct family_ctx ctx;
	struct family fam[NR_FAMILIES];
	size_t nfam;
	struct budget_ctl budget;
	struct launch launch;
	struct run_as run_as;		/* who the command runs as */
	struct out_file ready;		/* --ready-file, until it is given its name */
	bool launched_exec_seen;	/* its first exec is the launch, snapshotted already */
	__u64 start;
	__u64 events;
	__u64 drops_total;
	int write_err;
	__u32 *descendants;		/* of the -p processes, running at the attach, traced too */
	size_t ndescendants;
	/* --flight-recorder: the writer is a ring; windows written at triggers */
	struct flight_check check;
	char trigger[160];		/* a live check fired: what it saw; "" if none */
	__u64 last_window_ns;		/* when the last window was written */
	__u64 next_seal_ns;		/* when the buffered events are sealed into the ring next */
	unsigned int windows;		/* written so far */
	unsigned int window_no;		/* the number in the last window file's name (flight.h) */
	unsigned int mem_samples;	/* rounds of memory samples taken */
	unsigned int windows_failed;
	__u64 triggers_limited;		/* live triggers within a window of the last one, not written */
	struct pending_snapshot pending[MAX_PENDING];	/* new processes to snapshot and probe */
	size_t npending;
	size_t pending_overflow;
	/* holds (bpf/hold.bpf.h): answered as they come, and the watcher that
	 * answers them if the recorder cannot */
	struct hold_guard guard;
	bool hold_ok;			/* the watcher runs: targets may be held */
	bool copies_warned;		/* a switch of the async copies' probes failed in a process: said */
	bool holding;			/* holds are answered by probing (not at the end) */
	bool loader_watch;		/* the dynamic loaders can be watched (bpf/hold.bpf.c) */
	__u64 holds, hold_ns, hold_max_ns;
};

/* Calls the operation op of every family that has it. */
#define FAMILIES_DO(r, op, ...)							\
	do {									\
		for (size_t i_ = 0; i_ < (r)->nfam; i_++)			\
			if ((r)->fam[i_].ops->op)				\
				(r)->fam[i_].ops->op((r)->fam[i_].st, ##__VA_ARGS__); \
	} while (0)

/* Appends a record; a write error stops the recording (the writer counts
 * what it refuses). */
static int emit(void *ctx, const void *record, size_t size)
{
	struct recorder *r = ctx;
	int e = rec_writer__append_event(r->w, record, size);

	if (e)
		r->write_err = e;
	else
		r->events++;
	if (r->cfg->live)
		r->cfg->live->event(r->cfg->live->ctx, record, size);
	return e;
}

/* A followed child or an exec'd target: snapshotted and probed soon, and
 * what the families knew of the old image forgotten now. */
static void new_process(struct recorder *r, __u32 pid, __u32 origin)
{
	if (r->npending < MAX_PENDING) {
		r->pending[r->npending].pid = pid;
		r->pending[r->npending].origin = origin;
		r->pending[r->npending].probed = false;
		r->npending++;
	} else {
		r->pending_overflow++;
	}
	FAMILIES_DO(r, on_new_process, pid, origin);
}

/* The dynamic loader of pid watched (bpf/hold.bpf.c): a library it loads
 * later holds it. Whether it is; said only with -v where it cannot be (a
 * static program, a loader that is not glibc's, a kernel without
 * uprobe_multi links). */
static bool watch_loader(struct recorder *r, __u32 pid)
{
	struct loader_site s;
	int e = loader_watch__find(pid, &s);

	e = e ?: tracer__watch_loader(r->t, s.path, s.dev, s.ino, s.offset, s.cookie);
	if (e && e != -EALREADY && r->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: its dynamic loader is not watched (%s): a library it loads "
			"later is probed within a second\n", pid, strerror(-e));
	return !e || e == -EALREADY;
}

/* How the families probe a new process or image: where its loader is
 * watched, what it maps now (a library it loads later holds it); else
 * also the libraries it may load, by path. */
static enum probe_when new_process_when(const struct recorder *r, bool watched)
{
	return watched && r->holding ? PROBE_MAPPED : PROBE_NEW_PROCESS;
}

/* A target the BPF side holds (bpf/hold.bpf.h): every family probes it
 * (a new image or a forked child as a new process, a process whose loader
 * mapped a library what it maps), its loader is watched (a new image),
 * then it goes on, and the hold is written with its release time.
 * At the end it is only let go. INFERSCOPE_TEST_DIE_AT_HOLD (tests only):
 * the recorder dies at the first hold, which its watcher must answer. */
static void answer_hold(struct recorder *r, const struct isr_ev_proc_hold *ev)
{
	struct isr_ev_proc_hold h = *ev;
	size_t i;

	if (getenv("INFERSCOPE_TEST_DIE_AT_HOLD"))
		_exit(99);
	if (r->holding && h.reason == ISR_HOLD_LIB) {
		FAMILIES_DO(r, probe_process, h.hdr.pid, PROBE_MAPPED);
	} else if (r->holding) {
		/* a forked child runs under its parent's loader */
		bool watched = h.reason == ISR_HOLD_EXEC ? watch_loader(r, h.hdr.pid) : r->loader_watch;

		FAMILIES_DO(r, probe_process, h.hdr.pid, new_process_when(r, watched));
		for (i = 0; i < r->npending; i++)
			if (r->pending[i].pid == h.hdr.pid)
				r->pending[i].probed = true;
	}
	if (kill((pid_t)h.hdr.pid, SIGCONT) && errno != ESRCH)
		fprintf(stderr, "inferscope-bpf: cannot let pid %u go on (SIGCONT): %s; it stays stopped until "
			"`kill -CONT %u`\n", h.hdr.pid, strerror(errno), h.hdr.pid);
	tracer__hold_done(r->t, h.hdr.pid);
	h.release_ns = clock__mono_ns();
	r->holds++;
	if (h.release_ns > h.hdr.ts_ns) {
		r->hold_ns += h.release_ns - h.hdr.ts_ns;
		if (h.release_ns - h.hdr.ts_ns > r->hold_max_ns)
			r->hold_max_ns = h.release_ns - h.hdr.ts_ns;
	}
	emit(r, &h, sizeof(h));
}

static int on_event(void *ctx, const void *data, size_t size)
{
	const struct isr_ev_hdr *h = data;
	struct recorder *r = ctx;
	size_t i;
	int e;

	if (h->type == ISR_EV_PROC_HOLD && size >= sizeof(struct isr_ev_proc_hold)) {
		answer_hold(r, data);
		return 0;
	}
	budget_ctl__note(&r->budget, h, size);
	for (i = 0; i < r->nfam; i++) {
		e = r->fam[i].ops->on_event ? r->fam[i].ops->on_event(r->fam[i].st, h, size) : 0;
		if (e < 0)
			r->write_err = e;
		if (e)
			return 0;	/* taken, or the recording stops */
	}
	if (h->type == ISR_EV_PROC_FORK && (((const struct isr_ev_proc_fork *)data)->flags & ISR_FORK_FOLLOWED))
		new_process(r, ((const struct isr_ev_proc_fork *)data)->child_pid, ISR_ORIGIN_CHILD);
	if (h->type == ISR_EV_PROC_EXEC) {
		if ((pid_t)h->pid == r->launch.pid && !r->launched_exec_seen)
			r->launched_exec_seen = true;
		else
			new_process(r, h->pid, ISR_ORIGIN_EXEC);
	}
	if (r->cfg->flight.window_ns && !r->trigger[0])
		flight_check__event(&r->check, h, size, r->trigger, sizeof(r->trigger));
	/* Keep consuming after a write error so that the loop stops cleanly. */
	emit(r, data, size);
	return 0;
}

static int write_snapshot(struct rec_writer *w, __u32 pid, __u32 origin)
{
	struct rec_props *p = procinfo__snapshot(pid, origin, clock__mono_ns());
	int e;

	if (!p)
		return errno == ESRCH ? 0 : -errno; /* gone already: its events still tell */
	e = rec_writer__write_props(w, ISR_CHUNK_PROCESS, p);
	rec_props__free(p);
	return e;
}

static void write_pending(struct recorder *r)
{
	size_t i;
	int e = 0;

	for (i = 0; i < r->npending && !e; i++)
		e = write_snapshot(r->w, r->pending[i].pid, r->pending[i].origin);
	r->npending = 0;
	if (e)
		r->write_err = e;
}

/* New processes load their libraries from now on: every family probes
 * them, then they are snapshotted. */
static void probe_pending(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->npending; i++) {
		const struct pending_snapshot *p = &r->pending[i];

		if (!p->probed)
			FAMILIES_DO(r, probe_process, p->pid,
				    new_process_when(r, p->origin == ISR_ORIGIN_EXEC ? watch_loader(r, p->pid) :
											r->loader_watch));
	}
	write_pending(r);
}

static int write_clock(struct rec_writer *w)
{
	struct isr_clock_pair pair;
	__u64 ma, mr, mb;

	ma = clock__mono_ns();
	mr = clock__now_ns(CLOCK_REALTIME);
	mb = clock__mono_ns();
	memset(&pair, 0, sizeof(pair));
	pair.mono_ns = ma + (mb - ma) / 2;
	pair.other_ns = mr;
	pair.uncertainty_ns = (__u32)((mb - ma + 1) / 2);
	pair.clock = ISR_CLOCK_REALTIME;
	return rec_writer__write_clock(w, &pair, 1);
}

/* Every source's drops: BPF's counters, the writer's, the families' own. */
static int collect_drops(struct recorder *r, __u64 *drops)
{
	int e;

	memset(drops, 0, sizeof(__u64) * ISR_SRC_MAX);
	e = tracer__read_drops(r->t, drops);
	if (e)
		return e;
	drops[ISR_SRC_WRITER] = rec_writer__events_lost(r->w);
	FAMILIES_DO(r, count_drops, drops);
	return 0;
}

/* Every source's drops, and their total in r->drops_total. */
static int count_drops(struct recorder *r, __u64 *drops)
{
	int e = collect_drops(r, drops);

	if (e)
		return e;
	r->drops_total = 0;
	for (__u32 i = 0; i < ISR_SRC_MAX; i++)
		r->drops_total += drops[i];
	return 0;
}

static int write_drops(struct recorder *r)
{
	struct isr_drop_count d[ISR_SRC_MAX];
	__u64 drops[ISR_SRC_MAX];
	__u32 i;
	int e;

	e = count_drops(r, drops);
	if (e)
		return e;
	memset(d, 0, sizeof(d));
	for (i = 0; i < ISR_SRC_MAX; i++) {
		d[i].source = i;
		d[i].count = drops[i];
	}
	return rec_writer__write_drops(r->w, d, ISR_SRC_MAX);
}

/* The host as a window's recording describes it: its start is the
 * window's, and it says what wrote it. */
static struct rec_props *window_host(const struct recorder *r, __u64 start, const char *why)
{
	const struct record_config *cfg = r->cfg;
	struct rec_props *host;
	int e;

	host = procinfo__host(cfg->output.argc, cfg->output.argv, start, 0, getenv("INFERSCOPE_SYSFS_ROOT"));
	if (!host)
		return NULL;
	e = rec_props__add_str(host, ISR_PROP_HOST_TRIGGER, why);
	if (e) {
		rec_props__free(host);
		errno = -e;
		return NULL;
	}
	return host;
}

/* --flight-recorder: what the ring holds, written as the next window's
 * recording. A window that cannot be written is said and the ring kept:
 * the next trigger tries again. 0 or -errno. */
static int write_window(struct recorder *r, const char *why, __u32 stop_reason)
{
	const struct record_config *cfg = r->cfg;
	struct rec_ring_stats st;
	struct rec_window win;
	struct rec_props *host;
	char path[PATH_MAX] = "";
	__u64 now;
	int e;

	now = clock__mono_ns();
	e = budget_ctl__write_costs(&r->budget, now, emit, r);
	e = e ?: rec_writer__flush(r->w);
	e = e ?: write_clock(r->w);
	e = e ?: write_drops(r);
	if (e)
		return r->write_err = e;
	rec_writer__ring_trim(r->w, now);
	rec_writer__ring_stats(r->w, &st);
	host = window_host(r, st.first_ns && st.first_ns < now ? st.first_ns : now, why);
	e = host ? 0 : -errno;
	/* a name taken by a link or a directory is skipped, not retried by
	 * every later window */
	for (int tries = 0; host && tries < FLIGHT_NAME_TRIES; tries++) {
		e = flight__window_path(cfg->output.path, r->window_no + 1, path, sizeof(path));
		e = e ?: rec_writer__write_window(r->w, path, host, now, stop_reason, &win);
		if (!flight__name_taken(path, e))
			break;
		r->window_no++;
		fprintf(stderr, "%sinferscope-bpf: %s is not a file the recorder writes (%s): the window goes to the "
			"next name\n", isatty(STDERR_FILENO) && !cfg->quiet ? "\n" : "", path, out_file__strerror(e));
	}
	rec_props__free(host);
	r->last_window_ns = now;
	if (e) {
		r->windows_failed++;
		fprintf(stderr, "%sinferscope-bpf: cannot write the flight-recorder window %s (%s): %s; its events stay "
			"in memory for the next trigger\n", isatty(STDERR_FILENO) && !cfg->quiet ? "\n" : "", path, why,
			out_file__strerror(e));
		return e;
	}
	r->windows++;
	r->window_no++;
	r->res->windows_last = r->window_no;
	fprintf(stderr, "%sinferscope-bpf: window %u (%s): %.2f s, %llu events, %llu dropped, %.1f MiB written to %s\n",
		isatty(STDERR_FILENO) && !cfg->quiet ? "\n" : "", r->windows, why,
		win.last_ns > win.first_ns ? (now - win.first_ns) / 1e9 : 0.0, (unsigned long long)win.events,
		(unsigned long long)win.drops, win.bytes / 1048576.0, path);
	if (win.capped_events)
		fprintf(stderr, "inferscope-bpf: the window is shorter than %.1f s: %llu older events did not fit "
			"--flight-memory %zu MiB\n", cfg->flight.window_ns / 1e9,
			(unsigned long long)win.capped_events, cfg->flight.max_bytes >> 20);
	return 0;
}

/* --flight-recorder, after each poll: the buffered events sealed into the
 * ring and the old ones forgotten at its cadence; a window written for
 * SIGUSR1 at once, for a live check unless one was written within the
 * window's length (a stall that lasts fires once per window). */
static void flight_step(struct recorder *r, __u64 now)
{
	const struct record_config *cfg = r->cfg;
	__u64 seal = cfg->flight.window_ns / 10;

	if (now >= r->next_seal_ns) {
		seal = seal < 50000000ULL ? 50000000ULL : seal > TICK_NS ? TICK_NS : seal;
		r->next_seal_ns = now + seal;
		if (rec_writer__flush(r->w) == 0)
			rec_writer__ring_trim(r->w, now);
	}
	if (window_signal) {
		window_signal = 0;
		write_window(r, "SIGUSR1", ISR_STOP_FLIGHT_TRIGGER);
	}
	if (r->trigger[0]) {
		if (r->windows && now - r->last_window_ns < cfg->flight.window_ns)
			r->triggers_limited++;
		else
			write_window(r, r->trigger, ISR_STOP_FLIGHT_TRIGGER);
		r->trigger[0] = '\0';
	}
}

static bool any_target_alive(struct tracer *t)
{
	__u32 pids[ISR_MAX_TARGETS];
	bool alive = false;
	int n, i;

	n = tracer__targets(t, pids, ISR_MAX_TARGETS);
	if (n < 0)
		return true; /* cannot tell: keep recording */
	for (i = 0; i < n; i++) {
		if (proc__alive(pids[i]))
			alive = true;
		else
			tracer__remove_target(t, pids[i]); /* died before its exit was traced */
	}
	return alive;
}

/* Once a second: every family looks at every live target again (libraries
 * loaded since, bridges injected), then the probes of processes that are
 * gone are released. */
static void rescan(struct recorder *r)
{
	static __u32 pids[ISR_MAX_TARGETS];
	int n, i;

	n = tracer__targets(r->t, pids, ISR_MAX_TARGETS);
	for (i = 0; i < n; i++)
		if (proc__leader_running(pids[i]))
			FAMILIES_DO(r, probe_process, pids[i], PROBE_RESCAN);
	tracer__prune_uprobes(r->t);
}

static void status_line(const struct recorder *r, __u64 elapsed_ns, __u64 prev_events)
{
	struct rec_ring_stats st;

	rec_writer__ring_stats(r->w, &st);
	fprintf(stderr, "\r  recording %6.1fs  %10llu events  %8.1fk ev/s  drops %llu  %7.1f MiB%s",
		elapsed_ns / 1e9, (unsigned long long)r->events, (r->events - prev_events) / 1e3,
		(unsigned long long)r->drops_total,
		(r->cfg->flight.window_ns ? st.bytes : rec_writer__bytes_written(r->w)) / 1048576.0,
		r->cfg->flight.window_ns ? " in memory " : " ");
}

/* The ready file holds the recorder's pid. Created with the recording, as
 * every output is (lib/out_file.h), so that a path that cannot be used
 * stops the start; it takes its name once the probes are live. */
static int commit_ready_file(struct out_file *f)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid()), e = 0;

	if (write(f->fd, buf, n) != n)
		e = errno ? -errno : -EIO;
	e = e ?: out_file__commit(f);
	n = out_file__close(f);
	return e ?: n;
}

static void print_drop_advice(const __u64 *drops, const struct record_config *cfg)
{
	__u64 ring = drops[ISR_SRC_SCHED] + drops[ISR_SRC_FAULTS] + drops[ISR_SRC_CUDA] + drops[ISR_SRC_PYTHON] +
		     drops[ISR_SRC_PY_STACKS] + drops[ISR_SRC_RECLAIM];

	if (ring)
		fprintf(stderr,
			"inferscope-bpf: %llu events were dropped because the ring buffer was full; "
			"consider increasing --ringbuf-size (now %zu MiB) or tracing fewer processes\n",
			(unsigned long long)ring, cfg->tracer.ringbuf_bytes >> 20);
	if (drops[ISR_SRC_PROC])
		fprintf(stderr, "inferscope-bpf: %llu fork/exec/exit/rename events were dropped: the recorder "
			"fell behind; trace fewer processes\n", (unsigned long long)drops[ISR_SRC_PROC]);
	if (drops[ISR_SRC_FAULT_START])
		fprintf(stderr, "inferscope-bpf: %llu page faults lost their start time (too many in flight)\n",
			(unsigned long long)drops[ISR_SRC_FAULT_START]);
	if (drops[ISR_SRC_CUDA_INFLIGHT])
		fprintf(stderr, "inferscope-bpf: %llu CUDA calls could not be timed (more than 16384 in flight at "
			"once); their return was not recorded\n", (unsigned long long)drops[ISR_SRC_CUDA_INFLIGHT]);
	if (drops[ISR_SRC_TARGETS])
		fprintf(stderr, "inferscope-bpf: %llu child processes could not be followed (more than %d targets)\n",
			(unsigned long long)drops[ISR_SRC_TARGETS], ISR_MAX_TARGETS);
	if (drops[ISR_SRC_PY_CODE])
		fprintf(stderr, "inferscope-bpf: %llu Python code objects could not be read from their process (it "
			"exited or freed them first): their frames are reported without file and line\n",
			(unsigned long long)drops[ISR_SRC_PY_CODE]);
	if (drops[ISR_SRC_WRITER])
		fprintf(stderr, "inferscope-bpf: %llu events could not be written to %s\n",
			(unsigned long long)drops[ISR_SRC_WRITER], cfg->output.path);
}

static int preflight(const struct record_config *cfg, struct run_as *as)
{
	char err[512];
	size_t i;
	int e;

	e = preflight__privileges(err, sizeof(err));
	e = e ?: preflight__btf(err, sizeof(err));
	for (i = 0; !e && i < cfg->targets.pid_count; i++)
		e = preflight__pid(cfg->targets.pids[i], err, sizeof(err));
	if (!e && cfg->targets.command)
		e = run_as__resolve(cfg->targets.run_as, cfg->targets.run_as_user, as, err, sizeof(err));
	if (e)
		fprintf(stderr, "inferscope-bpf: %s\n", err);
	return e;
}

/* The async copies' probes on or off (their own budget): 0, or -errno
 * when none could be switched. A process that could not be switched is
 * said once; the others are switched all the same, so the switch is
 * recorded (as the hot path's is). */
static int switch_copies(void *arg, bool on)
{
	struct recorder *r = arg;
	char err[512];
	int e = tracer__set_switch(r->t, TRACER_COPIES, on, err, sizeof(err));

	if (e == -EOPNOTSUPP || e == -EINVAL)
		return e;
	if (e && !r->copies_warned) {
		fprintf(stderr, "\ninferscope-bpf: overhead budget: %s\n", err);
		r->copies_warned = true;
	}
	return 0;
}

/* fn(args[i]) for each of the n args, each on a thread of its own, at
 * once; one whose thread cannot start runs here. Returns when all have. */
static void at_once(void *(*fn)(void *), void *const *args, size_t n)
{
	pthread_t threads[NR_FAMILIES];
	bool started[NR_FAMILIES];
	size_t i;

	for (i = 0; i < n; i++)
		started[i] = !pthread_create(&threads[i], NULL, fn, args[i]);
	for (i = 0; i < n; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			fn(args[i]);
	}
}

/* A family's cost measurement, on a thread of its own. */
struct measure_job {
	const struct family *fam;
	struct tracer_costs *c;
	int e;
	char err[512];
};

static void *measure_thread(void *arg)
{
	struct measure_job *j = arg;

	j->e = j->fam->ops->measure_costs(j->fam->st, j->c, j->err, sizeof(j->err));
	return NULL;
}

/*
 * The families' costs into c (each fills its own figures), measured at
 * once on threads of their own, this process a target meanwhile: each
 * waits mostly on the kernel (attaching and detaching its probes, the
 * fault programs' switches), and one after another they took 100-150 ms
 * of the attach (docs/overhead.md). 0, or the first failure's -errno with
 * err filled.
 */
static int measure_families(struct recorder *r, struct tracer_costs *c, char *err, size_t errlen)
{
	struct measure_job jobs[NR_FAMILIES];
	void *args[NR_FAMILIES];
	size_t i, n = 0;
	int e = tracer__add_target(r->t, (__u32)getpid(), true);	/* never held */

	if (e) {
		snprintf(err, errlen, "cannot make the recorder a target to measure what tracing costs: %s",
			 strerror(-e));
		return e;
	}
	for (i = 0; i < r->nfam; i++)
		if (r->fam[i].ops->measure_costs) {
			jobs[n] = (struct measure_job){ .fam = &r->fam[i], .c = c };
			args[n] = &jobs[n];
			n++;
		}
	at_once(measure_thread, args, n);
	for (i = 0; i < n && !e; i++)
		if (jobs[i].e) {
			e = jobs[i].e;
			snprintf(err, errlen, "%s", jobs[i].err);
		}
	return e;
}

/* Before any target is traced, the tracepoints and perf events live: what
 * tracing costs a target thread here (user/record/budget_cost.h), measured on
 * threads of the recorder's own, a target meanwhile (their events
 * discarded); then the account of it, and the budget, which charge every
 * event from the start. Without the costs (a measurement failed: said),
 * nothing is charged and no budget is kept. */
static void budget_setup(struct recorder *r)
{
	const struct record_config *cfg = r->cfg;
	double pct = cfg->tracer.budget_pct;
	struct tracer_costs c;
	__u64 t0 = clock__mono_ns();
	char err[512];
	size_t i;
	int e;

	memset(&c, 0, sizeof(c));
	e = budget_cost__measure_core(r->t, &c, err, sizeof(err));
	e = e ?: measure_families(r, &c, err, sizeof(err));
	budget_cost__forget(r->t, (__u32)getpid());
	if (!e && pct > 0 && !tracer__can_switch_hot(r->t)) {
		fprintf(stderr, "inferscope-bpf: the %.3g%% overhead budget cannot be kept: the hot-path probes cannot be "
			"switched on this kernel (no uprobe_multi links); every probe stays on%s\n", pct,
			cfg->tracer.legacy_uprobes ? " (--legacy-uprobes)" : " (needs Linux 6.6 or later)");
		pct = 0;
	}
	if (e) {
		fprintf(stderr, "inferscope-bpf: %s; what tracing costs is not accounted%s\n", err,
			pct > 0 ? " and the overhead budget is not kept: every probe stays on" : "");
		return;
	}
	if (budget_ctl__init(&r->budget, &c, pct, (__u32)getpid(), r->guard.pid > 0 ? (__u32)r->guard.pid : 0)) {
		fprintf(stderr, "inferscope-bpf: out of memory for the overhead account; every probe stays on\n");
		return;
	}
	r->budget.charge_cupti = cfg->gpu.cupti && cfg->gpu.windows && !cfg->gpu.all;
	r->budget.duration_ns = cfg->targets.duration_ns;
	for (i = 0; i < r->nfam; i++)
		if (r->fam[i].ops->switch_faults)
			budget_ctl__sample_own(&r->budget, BUDGET_OWN_FAULTS, r->fam[i].ops->switch_faults, r->fam[i].st);
	budget_ctl__sample_own(&r->budget, BUDGET_OWN_COPIES, switch_copies, r);
	r->res->costs_measure_ns = (double)(clock__mono_ns() - t0);
	if (cfg->verbose)
		fprintf(stderr, "inferscope-bpf: costs here: a probe hit %.0f ns, an entry and return %.0f ns, a page fault "
			"%.0f ns, a scheduler event %.0f ns, a sampler tick %.0f ns (measured in %.0f ms); overhead "
			"budget %.3g%%\n", c.hit_ns, c.pair_ns, c.fault_ns, c.sched_ns, c.tick_ns,
			(clock__mono_ns() - t0) / 1e6, pct);
}

/* The libraries whose first mapping holds a target: every enabled
 * family's. */
static int set_hold_names(struct recorder *r)
{
	const char *names[ISR_HOLD_NAMES];
	size_t i, n = 0;
	int e;

	for (i = 0; i < r->nfam; i++)
		for (const char *const *l = r->fam[i].ops->hold_libs; l && *l && n < ISR_HOLD_NAMES; l++)
			names[n++] = *l;
	e = tracer__set_hold_names(r->t, names, n);
	if (e)
		fprintf(stderr, "inferscope-bpf: cannot set the libraries that hold a process: %s\n", strerror(-e));
	return e;
}

/* A family to open, and what its open gave. */
struct open_job {
	const struct family_ctx *ctx;
	const struct probe_family *ops;
	struct open_job *all;	/* every job: those opened after this one are among them */
	size_t n;
	void *st;
	int e;
	bool ran;
	char err[512];
};

/* Opens j's family, then those that open after it. */
static void open_one(struct open_job *j)
{
	j->ran = true;
	errno = 0;
	j->st = j->ops->open(j->ctx, j->err, sizeof(j->err));
	j->e = j->st ? 0 : -(errno ?: EINVAL);
	for (size_t k = 0; k < j->n && j->st; k++)
		if (j->all[k].ops->after && !strcmp(j->all[k].ops->after, j->ops->name))
			open_one(&j->all[k]);
}

static void *open_thread(void *arg)
{
	open_one(arg);
	return NULL;
}

/* Whether job j opens on a thread of its own: no family it opens after
 * is enabled. */
static bool open_root(const struct open_job *all, size_t n, size_t j)
{
	for (size_t k = 0; k < n && all[j].ops->after; k++)
		if (!strcmp(all[k].ops->name, all[j].ops->after))
			return false;
	return true;
}

/*
 * Every enabled family opened, each chain of them (struct probe_family
 * after) on a thread of its own: loading is mostly the kernel's verifier,
 * in the loading thread, and the families' objects load at once on as
 * many CPUs (attach time: docs/overhead.md). Their states in r->fam in
 * the table's order; every failure said; 0 or the first one's -errno.
 */
static int open_families(struct recorder *r)
{
	struct open_job jobs[NR_FAMILIES];
	void *roots[NR_FAMILIES];
	size_t i, n = 0, nroots = 0;
	int e = 0;

	for (i = 0; i < NR_FAMILIES; i++)
		if (families[i]->enabled(r->cfg))
			jobs[n++] = (struct open_job){ .ctx = &r->ctx, .ops = families[i], .all = jobs };
	for (i = 0; i < n; i++) {
		jobs[i].n = n;
		if (open_root(jobs, n, i))
			roots[nroots++] = &jobs[i];
	}
	at_once(open_thread, roots, nroots);
	for (i = 0; i < n; i++) {
		if (jobs[i].st) {
			r->fam[r->nfam].ops = jobs[i].ops;
			r->fam[r->nfam++].st = jobs[i].st;
		} else if (jobs[i].ran) {
			fprintf(stderr, "inferscope-bpf: %s\n", jobs[i].err);
			e = e ?: jobs[i].e;
		}
	}
	return e;
}

/* The writer, the tracer and every enabled family, opened and prepared. */
static int open_all(struct recorder *r, struct launch_env *env)
{
	const struct record_config *cfg = r->cfg;
	struct rec_writer_opts wopts = { .chunk_bytes = 0, .zstd_level = cfg->output.zstd_level,
					 .share = cfg->output.share, .unnamed = true };
	char err[512];
	size_t i;
	int e = 0;

	if (cfg->flight.window_ns) {
		char first[PATH_MAX];

		/* Where the windows go is checked now, not at the first trigger. */
		e = flight__window_path(cfg->output.path, 1, first, sizeof(first));
		r->w = e ? NULL : rec_writer__open(first, &wopts);
		if (r->w) {
			rec_writer__free(r->w);	/* never named: removed */
			wopts.ring_window_ns = cfg->flight.window_ns;
			wopts.ring_max_bytes = cfg->flight.max_bytes;
			r->w = rec_writer__open_ring(&wopts);
		}
		if (!r->w) {
			e = e ?: -errno;
			fprintf(stderr, "inferscope-bpf: cannot create the flight-recorder windows %s: %s\n",
				first, out_file__strerror(e));
			return e;
		}
	} else {
		r->w = rec_writer__open(cfg->output.path, &wopts);
	}
	if (!r->w) {
		e = -errno;
		fprintf(stderr, "inferscope-bpf: cannot create the recording %s: %s%s\n", cfg->output.path,
			out_file__strerror(e), e == -ELOOP || e == -EISDIR || e == -EINVAL ? "" : "; choose another path with -o");
		return e;
	}
	if (cfg->output.ready_file) {
		e = out_file__create(&r->ready, cfg->output.ready_file, &cfg->output.share);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot create the ready file %s: %s\n", cfg->output.ready_file,
				out_file__strerror(e));
			return e;
		}
	}
	r->t = tracer__open(cfg, on_event, r, err, sizeof(err));
	if (!r->t) {
		e = -errno;
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		return e;
	}
	r->ctx = (struct family_ctx){ r->t, cfg, emit, r };
	e = hold_guard__start(&r->guard, tracer__held_fd(r->t));
	if (e)
		fprintf(stderr, "inferscope-bpf: cannot start the watcher of held processes: %s; processes are not held "
			"at their start (their first calls may be missed)\n", strerror(-e));
	r->hold_ok = !e;
	e = open_families(r);
	e = e ?: set_hold_names(r);
	for (i = 0; i < r->nfam && !e; i++)
		e = r->fam[i].ops->prepare ? r->fam[i].ops->prepare(r->fam[i].st, env) : 0;
	return e;
}

/* What the families give the command to read (the CUPTI bridge) must be
 * readable by the user it runs as: said now, not found missing later. */
static void check_env_readable(const struct recorder *r, const struct launch_env *env)
{
	for (size_t i = 0; i < env->n; i++) {
		int e;

		if (env->value[i][0] != '/')
			continue;
		e = run_as__can_read(&r->run_as, env->value[i]);
		if (e)
			fprintf(stderr, "inferscope-bpf: %s runs as %s (uid %u) and cannot read %s=%s (%s): put it where "
				"that user can read it, or use --run-as-root\n", r->cfg->targets.command[0],
				r->run_as.user[0] ? r->run_as.user : "another user", (unsigned int)r->run_as.uid,
				env->name[i], env->value[i], strerror(-e));
	}
}

/* Every family probes every target it is asked to at the start. */
static int probe_all(struct recorder *r, __u32 pid, enum probe_when when)
{
	size_t i;
	int e;

	for (i = 0; i < r->nfam; i++) {
		e = r->fam[i].ops->probe_process ? r->fam[i].ops->probe_process(r->fam[i].st, pid, when) : 0;
		if (e && e != -ESRCH)
			return e;
	}
	return 0;
}

/*
 * The -p processes' descendants that run already (forked before the
 * attach: DataLoader workers, a multiprocessing pool), targets too unless
 * --no-follow. Looked for once the fork tracepoint follows the targets'
 * new children, so that a child forked meanwhile is either found here or
 * followed there; one already followed is left to its fork event.
 */
static int add_descendants(struct recorder *r)
{
	const struct record_config *cfg = r->cfg;
	__u32 *found;
	int n, i, e = 0;

	if (!cfg->targets.follow_children || !cfg->targets.pid_count)
		return 0;
	found = calloc(ISR_MAX_TARGETS, sizeof(*found));
	if (!found)
		return -ENOMEM;
	n = proc__descendants(cfg->targets.pids, cfg->targets.pid_count, found, ISR_MAX_TARGETS);
	if (n < 0) {
		fprintf(stderr, "inferscope-bpf: cannot list the processes in /proc to find the descendants of the "
			"targets: %s; only the named processes are traced\n", strerror(-n));
		free(found);
		return 0;
	}
	for (i = 0; i < n && !e; i++) {
		if (tracer__is_target(r->t, found[i]))
			continue;
		e = tracer__add_target(r->t, found[i], false);
		if (e == -E2BIG || e == -ENOSPC) {
			fprintf(stderr, "inferscope-bpf: %d running descendants of the targets are not traced: more "
				"than %d targets\n", n - i, ISR_MAX_TARGETS);
			e = 0;
			break;
		}
		if (e)
			fprintf(stderr, "inferscope-bpf: cannot add pid %u to the targets: %s\n", found[i],
				strerror(-e));
		else
			found[r->ndescendants++] = found[i];
	}
	r->descendants = found;
	return e;
}

/* What holding new processes (bpf/hold.bpf.h) cannot do here, said once;
 * attach_err: what attaching them said. */
static void hold_note(struct recorder *r, const char *attach_err)
{
	bool lib, fork;

	tracer__hold_support(r->t, &lib, &fork);
	r->loader_watch = lib;
	if (attach_err[0] && !r->cfg->quiet)
		fprintf(stderr, "inferscope-bpf: %s\n", attach_err);
	if (!lib && r->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: processes are not held at their loading of libcuda, libnccl or "
			"libpython (needs uprobe_multi links: Linux 6.6, no --legacy-uprobes): a library loaded after "
			"the start is probed within a second, and its first calls may be missed\n");
	if (!fork && r->cfg->verbose)
		fprintf(stderr, "inferscope-bpf: this kernel cannot hold a forked child until its probes are armed "
			"(bpf_send_signal_task needs Linux 6.13): a child forked without exec is probed within "
			"milliseconds, and its first calls may be missed\n");
}

/* The targets (the command forked, held before its exec), the probes of
 * every family attached and live in them. */
static int start_targets(struct recorder *r, const struct launch_env *env)
{
	const struct record_config *cfg = r->cfg;
	char err[512];
	size_t i;
	int e;

	/* the tracepoints and perf events first: they follow the targets as
	 * soon as they are added, and the costs are measured on them */
	e = tracer__attach(r->t, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		return e;
	}
	hold_note(r, err);
	for (i = 0; i < r->nfam && !e; i++)
		e = r->fam[i].ops->attach ? r->fam[i].ops->attach(r->fam[i].st, err, sizeof(err)) : 0;
	if (e) {
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		return e;
	}
	budget_setup(r);
	if (cfg->targets.command) {
		if (r->run_as.change)
			check_env_readable(r, env);
		e = launch__fork(&r->launch, cfg->targets.command, env, &r->run_as);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot start %s: %s\n", cfg->targets.command[0], strerror(-e));
			return e;
		}
		e = tracer__add_target(r->t, (__u32)r->launch.pid, false);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot add pid %d to the targets: %s\n", r->launch.pid,
				strerror(-e));
			return e;
		}
	}
	for (i = 0; i < cfg->targets.pid_count; i++) {
		e = tracer__add_target(r->t, cfg->targets.pids[i], true);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot add pid %u to the targets: %s\n", cfg->targets.pids[i],
				strerror(-e));
			return e;
		}
	}
	e = add_descendants(r);
	if (e)
		return e;
	for (i = 0, e = 0; i < cfg->targets.pid_count && !e; i++) {
		watch_loader(r, cfg->targets.pids[i]);
		e = probe_all(r, cfg->targets.pids[i], PROBE_AT_START);
	}
	for (i = 0; i < r->ndescendants && !e; i++) {
		watch_loader(r, r->descendants[i]);
		e = probe_all(r, r->descendants[i], PROBE_AT_START);
	}
	if (!e && cfg->targets.command)
		e = probe_all(r, (__u32)r->launch.pid, PROBE_BEFORE_EXEC);
	if (!e && cfg->verbose) {
		fprintf(stderr, "inferscope-bpf: probes attached:\n");
		tracer__describe(r->t, stderr);
		FAMILIES_DO(r, describe, stderr);
		tracer__describe_uprobes(r->t, stderr);
	}
	return e;
}

static void banner(const struct recorder *r)
{
	const struct record_config *cfg = r->cfg;
	const char *follow;
	size_t i;

	fprintf(stderr, "inferscope-bpf: recording ");
	if (cfg->targets.command)
		fprintf(stderr, "%s (pid %d)", cfg->targets.command[0], r->launch.pid);
	if (cfg->targets.command && r->run_as.change)
		fprintf(stderr, " running as %s (uid %u, %s)", r->run_as.user[0] ? r->run_as.user : "uid",
			(unsigned int)r->run_as.uid, !strcmp(r->run_as.source, "sudo") ?
			"who ran sudo; --run-as-root keeps root" : "--user");
	for (i = 0; i < cfg->targets.pid_count; i++)
		fprintf(stderr, "%spid %u", i || cfg->targets.command ? ", " : "", cfg->targets.pids[i]);
	if (r->ndescendants)
		fprintf(stderr, ", %zu running descendant%s", r->ndescendants, r->ndescendants == 1 ? "" : "s");
	follow = !cfg->targets.follow_children ? " (--no-follow: not their children)" :
		 cfg->targets.command || cfg->targets.pid_count > 1 || r->ndescendants ? " and the processes they start" :
		 " and the processes it starts";
	if (cfg->flight.window_ns) {
		char first[PATH_MAX];

		if (flight__window_path(cfg->output.path, 1, first, sizeof(first)))
			snprintf(first, sizeof(first), "%s", cfg->output.path);
		fprintf(stderr, "%s, keeping the last %.1f s in memory (windows written at SIGUSR1 to pid %d, a "
			"--trigger check or the end: %s, ...)", follow, cfg->flight.window_ns / 1e9, (int)getpid(), first);
	} else {
		fprintf(stderr, "%s to %s", follow, cfg->output.path);
	}
	if (cfg->targets.duration_ns)
		fprintf(stderr, " for %.1f s", cfg->targets.duration_ns / 1e9);
	fprintf(stderr, "; Ctrl-C stops\n");
}

/* The recording begins: the host and the attached processes written, the
 * command let go. A write error is returned in r->write_err. */
static int begin(struct recorder *r)
{
	const struct record_config *cfg = r->cfg;
	struct rec_props *host;
	struct sigaction sa;
	size_t i;
	int e;

	r->start = clock__mono_ns();
	e = cfg->flight.window_ns ? 0 : rec_writer__name(r->w);
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot name the recording %s: %s\n", cfg->output.path, strerror(-e));
		return e;
	}
	/* INFERSCOPE_SYSFS_ROOT: a fake sysfs tree, for tests */
	if (!cfg->flight.window_ns) {	/* a window has its own (write_window) */
		host = procinfo__host(cfg->output.argc, cfg->output.argv, r->start, cfg->targets.duration_ns,
				      getenv("INFERSCOPE_SYSFS_ROOT"));
		e = host ? rec_writer__write_props(r->w, ISR_CHUNK_HOST, host) : -errno;
		rec_props__free(host);
	}
	e = e ?: write_clock(r->w);
	e = e ?: budget_ctl__start(&r->budget, r->start, emit, r);
	for (i = 0; !e && i < cfg->targets.pid_count; i++)
		e = write_snapshot(r->w, cfg->targets.pids[i], ISR_ORIGIN_ATTACHED);
	for (i = 0; !e && i < r->ndescendants; i++)
		e = write_snapshot(r->w, r->descendants[i], ISR_ORIGIN_DESCENDANT);
	if (e)
		return r->write_err = e;

	if (!cfg->control.stop) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	if (cfg->flight.window_ns) {
		memset(&sa, 0, sizeof(sa));
		flight_check__init(&r->check, &cfg->flight.trig, 0);
		r->next_seal_ns = r->start;
		sa.sa_handler = on_window_signal;
		sigaction(SIGUSR1, &sa, NULL);
	}

	if (r->hold_ok) {
		r->holding = true;
		tracer__hold(r->t, true);
	}
	if (cfg->targets.command) {
		e = launch__release(&r->launch);
		if (e && r->launch.cred_failed) {
			fprintf(stderr, "inferscope-bpf: cannot run %s as %s (uid %u, gid %u): %s\n", cfg->targets.command[0],
				r->run_as.user[0] ? r->run_as.user : "that user", (unsigned int)r->run_as.uid,
				(unsigned int)r->run_as.gid, strerror(-e));
			return e;
		}
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot run %s: %s\n", cfg->targets.command[0], strerror(-e));
			return e;
		}
		/* After exec: the image the user asked for. */
		e = write_snapshot(r->w, (__u32)r->launch.pid, ISR_ORIGIN_LAUNCHED);
		if (e)
			return r->write_err = e;
		FAMILIES_DO(r, probe_process, (__u32)r->launch.pid, PROBE_AFTER_EXEC);
	}
	if (cfg->output.ready_file) {
		e = commit_ready_file(&r->ready);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot create the ready file %s: %s\n", cfg->output.ready_file,
				strerror(-e));
			return e;
		}
	}
	if (!cfg->quiet)
		banner(r);
	return 0;
}

/* Once a second: every target's memory (user/record/mem_sample.h), its NUMA
 * placement every NUMA_EVERY seconds. */
static void sample_memory(struct recorder *r)
{
	static __u32 pids[ISR_MAX_TARGETS];
	const char *sys = getenv("INFERSCOPE_SYSFS_ROOT");	/* a fake sysfs tree, for tests */
	bool numa = r->mem_samples++ % NUMA_EVERY == 0;
	struct isr_ev_mem_sample m;
	int n, i;

	n = tracer__targets(r->t, pids, ISR_MAX_TARGETS);
	for (i = 0; i < n && !r->write_err; i++) {
		if (mem_sample__read(pids[i], "/proc", sys ? sys : "/sys", numa, &m))
			continue;	/* gone: its exit tells */
		m.hdr.ts_ns = clock__mono_ns();
		emit(r, &m, sizeof(m));
	}
}

/* Once a second: the rescan, the memory samples, the events written, a
 * clock pair, the drops. */
static void tick(struct recorder *r)
{
	int e;

	rescan(r);
	sample_memory(r);
	e = rec_writer__flush(r->w);
	e = e ?: write_clock(r->w);
	e = e ?: write_drops(r);
	if (e)
		r->write_err = e;
	if (r->cfg->flight.window_ns && !r->trigger[0])
		flight_check__drops(&r->check, r->drops_total, r->trigger, sizeof(r->trigger));
}

/* The caller's tick (the daemon's watchdog), if any. */
static void control_tick(const struct record_config *cfg)
{
	if (cfg->control.tick)
		cfg->control.tick(cfg->control.ctx);
}

/* Consumes and writes until a stop: the ISR_STOP_* reason, or -errno when
 * the ring buffer cannot be read. */
static int loop(struct recorder *r)
{
	const struct record_config *cfg = r->cfg;
	bool tty = isatty(STDERR_FILENO) && !cfg->quiet;
	__u64 now, next_tick = r->start + TICK_NS, next_live = r->start + LIVENESS_NS, shown = 0;
	int poll_ms = POLL_MS, n, stop = 0;

	/* What the families began (an interpreter still initializing) may
	 * need them back before the first poll would end. */
	FAMILIES_DO(r, tick, &poll_ms);
	control_tick(cfg);	/* set up: the probes are live */
	while (!stop) {
		n = tracer__poll(r->t, budget_ctl__wait_ms(&r->budget, clock__mono_ns(), poll_ms));
		if (n < 0) {
			fprintf(stderr, "\ninferscope-bpf: reading the ring buffer failed: %s\n", strerror(-n));
			stop = n;
			break;
		}
		if (r->npending)
			probe_pending(r);
		poll_ms = POLL_MS;
		FAMILIES_DO(r, tick, &poll_ms);
		now = clock__mono_ns();
		if (!r->write_err)
			r->write_err = budget_ctl__step(&r->budget, r->t, now, emit, r);
		if (cfg->flight.window_ns && !r->write_err)
			flight_step(r, now);
		if (r->write_err)
			stop = ISR_STOP_WRITE_ERROR;
		else if (stop_signal || (cfg->control.stop && *cfg->control.stop))
			stop = ISR_STOP_SIGNAL;
		else if (cfg->targets.duration_ns && now - r->start >= cfg->targets.duration_ns)
			stop = ISR_STOP_DURATION;
		else if (cfg->live && cfg->live->tick(cfg->live->ctx, now))
			stop = ISR_STOP_SIGNAL;
		if (!stop && now >= next_live) {
			next_live = now + LIVENESS_NS;
			launch__poll(&r->launch);
			if (!any_target_alive(r->t))
				stop = ISR_STOP_TARGETS_EXITED;
		}
		if (!stop && now >= next_tick) {
			next_tick += TICK_NS;
			tick(r);
			control_tick(cfg);
			if (tty)
				status_line(r, now - r->start, shown);
			shown = r->events;
		}
	}
	if (tty)
		fputc('\n', stderr);
	return stop;
}

/* No process is held from now on: the holds that come still (queued, or
 * made by a program that had begun) are only let go. */
static void stop_holding(struct recorder *r)
{
	if (!r->holding)
		return;
	r->holding = false;
	tracer__hold(r->t, false);
	/* A hold program that read hold_on before it fell runs for
	 * microseconds: its hold is queued by the time the drain comes. */
	usleep(10000);
}

/* Everything the kernel queued before the stop belongs in the file, then
 * the end. A write error is left in r->write_err. */
static void finish(struct recorder *r, __u32 stop_reason)
{
	int e;

	stop_holding(r);
	if (!r->write_err)
		FAMILIES_DO(r, final_flush);
	tracer__drain(r->t);
	hold_guard__release_all(tracer__held_fd(r->t));
	if (!r->write_err && r->npending)
		write_pending(r);
	if (r->write_err)
		return;
	if (r->cfg->flight.window_ns) {	/* the end is a trigger too */
		e = write_window(r, "end of the recording", stop_reason);
		if (e && !r->write_err)
			r->write_err = e;
		return;
	}
	e = budget_ctl__finish(&r->budget, clock__mono_ns(), emit, r);
	e = e ?: write_clock(r->w);
	e = e ?: write_drops(r);
	e = e ?: rec_writer__finish(r->w, clock__mono_ns(), stop_reason);
	r->write_err = e;
}

static void report(const struct recorder *r)
{
	__u64 drops[ISR_SRC_MAX];

	if (!r->cfg->quiet && r->cfg->flight.window_ns) {
		fprintf(stderr, "inferscope-bpf: %llu events in %.1f s, %llu dropped, %u flight-recorder windows written\n",
			(unsigned long long)r->events, (clock__mono_ns() - r->start) / 1e9,
			(unsigned long long)r->drops_total, r->windows);
		if (r->triggers_limited)
			fprintf(stderr, "inferscope-bpf: %llu live triggers came within %.1f s of a window and wrote none\n",
				(unsigned long long)r->triggers_limited, r->cfg->flight.window_ns / 1e9);
	} else if (!r->cfg->quiet) {
		fprintf(stderr, "inferscope-bpf: %llu events in %.1f s, %llu dropped, %.1f MiB written to %s\n",
			(unsigned long long)r->events, (clock__mono_ns() - r->start) / 1e9,
			(unsigned long long)r->drops_total, rec_writer__bytes_written(r->w) / 1048576.0,
			r->cfg->output.path);
		budget_ctl__report(&r->budget);
		if (r->holds && r->cfg->verbose)
			fprintf(stderr, "inferscope-bpf: %llu times a process was held until its probes were armed: %.1f ms "
				"in all, %.1f ms at the longest\n", (unsigned long long)r->holds, r->hold_ns / 1e6,
				r->hold_max_ns / 1e6);
		if (r->pending_overflow)
			fprintf(stderr, "inferscope-bpf: %zu new processes were too many to snapshot at once; "
				"their events are recorded, their command lines are not\n", r->pending_overflow);
	}
	if (!collect_drops((struct recorder *)r, drops))
		print_drop_advice(drops, r->cfg);
}

static void report_write_failed(const struct recorder *r, int e)
{
	fprintf(stderr,
		"\ninferscope-bpf: writing %s failed: %s; recording stopped. The file holds everything up to "
		"its last complete chunk (%llu events written, %llu lost)%s\n",
		r->cfg->output.path, strerror(-e), (unsigned long long)rec_writer__events_written(r->w),
		(unsigned long long)rec_writer__events_lost(r->w),
		e == -ENOSPC ? "; free disk space or record to another filesystem with -o" :
		e == -EFBIG ? "; the file reached the size limit of the process (ulimit -f, systemd's LimitFSIZE=): "
			      "raise it or record for less time (-d)" : "");
}

/* The probes off and the BPF programs gone: nothing of the tracer is
 * left in the targets. */
static void release_probes(struct recorder *r)
{
	size_t i;

	tracer__free(r->t);
	r->t = NULL;
	for (i = r->nfam; i-- > 0;)
		r->fam[i].ops->free(r->fam[i].st);
	r->nfam = 0;
}

/* A recording that could not be written is no reason to end the user's
 * job: the launched command runs on untraced until it exits, or until the
 * -d duration or a signal ends it as it would have ended a recording. */
static void wait_for_command(struct recorder *r)
{
	const struct record_config *cfg = r->cfg;
	__u64 now;

	launch__poll(&r->launch);
	if (r->launch.pid <= 0 || r->launch.go_fd >= 0 || r->launch.exited)
		return;
	release_probes(r);
	fprintf(stderr, "inferscope-bpf: %s (pid %d) keeps running, untraced; waiting for it to exit%s (Ctrl-C "
		"stops it)\n", cfg->targets.command[0], r->launch.pid, cfg->targets.duration_ns ?
		" or for the end of the -d duration" : "");
	for (;;) {
		launch__poll(&r->launch);
		now = clock__mono_ns();
		if (r->launch.exited || stop_signal ||
		    (cfg->targets.duration_ns && now - r->start >= cfg->targets.duration_ns))
			break;
		usleep(LIVENESS_NS / 1000);
	}
	if (r->launch.exited && WIFEXITED(r->launch.status))
		fprintf(stderr, "inferscope-bpf: %s exited with status %d\n", cfg->targets.command[0],
			WEXITSTATUS(r->launch.status));
}

static void close_all(struct recorder *r)
{
	if (r->t)
		stop_holding(r);
	hold_guard__stop(&r->guard);
	launch__end(&r->launch);
	r->res->command_exited = r->launch.exited;
	r->res->command_stopped = r->launch.stopped;
	r->res->command_status = r->launch.status;
	release_probes(r);
	budget_ctl__free(&r->budget);
	out_file__close(&r->ready);
	rec_writer__free(r->w);
	free(r->descendants);
	if (r->cfg->control.stop)
		return;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (r->cfg->flight.window_ns)
		signal(SIGUSR1, SIG_DFL);
}

int record__run(const struct record_config *cfg, struct record_result *res)
{
	struct recorder r = { .cfg = cfg, .res = res, .launch = LAUNCH_NONE, .ready = { .fd = -1, .dirfd = -1 },
			      .guard = HOLD_GUARD_NONE };
	struct launch_env env = { .n = 0 };
	__u64 t0 = clock__mono_ns(), t_loaded, t_armed;
	int e, stop = 0;

	memset(res, 0, sizeof(*res));
	stop_signal = 0;
	e = preflight(cfg, &r.run_as);
	e = e ?: open_all(&r, &env);
	t_loaded = clock__mono_ns();
	control_tick(cfg);	/* loading the BPF objects takes a while on a busy host */
	e = e ?: start_targets(&r, &env);
	t_armed = clock__mono_ns();
	control_tick(cfg);
	if (!e && cfg->verbose)
		fprintf(stderr, "inferscope-bpf: set up in %.0f ms: BPF objects loaded in %.0f ms, then %.0f ms to every "
			"probe armed (of which measuring the costs %.0f ms)\n", (t_armed - t0) / 1e6,
			(t_loaded - t0) / 1e6, (t_armed - t_loaded) / 1e6, res->costs_measure_ns / 1e6);
	e = e ?: begin(&r);
	if (!e) {
		stop = loop(&r);	/* ISR_STOP_*, or -errno: the ring buffer failed */
		finish(&r, stop > 0 ? (__u32)stop : 0);
		e = r.write_err ?: stop < 0 ? stop : 0;
		if (!r.write_err) {
			res->stop_reason = stop > 0 ? (__u32)stop : 0;
			report(&r);
		}
	}
	if (r.write_err) {
		__u64 drops[ISR_SRC_MAX];

		report_write_failed(&r, r.write_err);
		res->stop_reason = ISR_STOP_WRITE_ERROR;
		/* the file counts its drops up to its last chunk; the result
		 * every event lost, those the writer refused after the error */
		count_drops(&r, drops);
		wait_for_command(&r);
	}
	res->events = r.events;
	res->drops_total = r.drops_total;
	if (r.budget.accounting) {
		res->overhead_spent_ns = r.budget.b.spent_ns;
		res->overhead_traced_ns = (double)(r.budget.last_ns - r.budget.start_ns);
		res->hit_cost_ns = r.budget.costs.hit_ns;
	}
	close_all(&r);
	return e;
}
