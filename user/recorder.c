// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <limits.h>
#include <sched.h>
#include "recorder.h"
#include "rec_writer.h"
#include "tracer.h"
#include "procinfo.h"
#include "clock.h"
#include "proc.h"
#include "preflight.h"
#include "isr_format.h"
#include "cuda_attach.h"
#include "python_attach.h"
#include "budget.h"
#include "cupti_attach.h"
#include "bridge_inject.h"
#include "py_stack.h"

#define TICK_NS		1000000000ULL	/* chunk, clock pair and drops cadence */
#define LIVENESS_NS	200000000ULL
#define POLL_MS		50	/* drain cadence: bulk events never wake us */
#define GPU_FLUSH_WAIT_NS	2000000000ULL	/* for the CUPTI bridges' last flush */
#define PY_WAIT_POLL_MS	5	/* while an interpreter is not initialized or not loaded yet */
#define PY_FRESH_NS	3000000000ULL /* how long a new image is watched for a libpython */
#define MAX_PENDING	256
#define TERM_GRACE_NS	5000000000ULL

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

struct pending_snapshot {
	__u32 pid;
	__u32 origin;
};

/* The CUDA driver libraries to probe, resolved once for the recording. */
struct cuda_state {
	struct cuda_libs *libs;
	struct cuda_mapping extra[CUDA_MAX_LIBS];	/* --cuda-lib */
	size_t nextra;
	struct cuda_mapping cand[CUDA_MAX_LIBS];	/* where a process about to load libraries finds libcuda */
	size_t ncand;
	const struct cuda_lib *described[CUDA_MAX_LIBS];	/* site lists already printed (-v) */
	size_t ndescribed;
};

#define PY_MAX_WAITING 64

/* The Python interpreters to probe, resolved once per file. */
/* GPU activity: the bridge a launched command loads, the bridges asked to
 * flush at the end and how many answered. */
struct gpu_state {
	char bridge[PATH_MAX];		/* "" when none was found for a launched command */
	unsigned int flush_asked;
	unsigned int flushed;		/* ISR_GPU_FLUSHED statuses since the request */
	__u32 failed_pids[16];		/* bridges whose failure was reported */
	size_t nfailed;
	bool inject;			/* load the bridge into -p processes without it */
	const char *bridge_opt;		/* --cupti-bridge */
};

struct py_state {
	struct py_libs *libs;
	const struct py_lib *described[PY_MAX_LIBS];	/* site lists already printed (-v) */
	size_t ndescribed;
	bool gil;			/* --gil */
	struct py_stacks *stacks;	/* --py-stacks: NULL when off */
	__u32 *decided;			/* processes whose stack status is written */
	size_t ndecided, cap_decided;
	struct py_mapping waiting[PY_MAX_WAITING]; /* interpreters not initialized yet */
	__u32 waiting_pid[PY_MAX_WAITING];
	size_t nwaiting;
	__u32 fresh_pid[PY_MAX_WAITING];	/* new images that map no interpreter yet */
	__u64 fresh_until[PY_MAX_WAITING];
	size_t nfresh;
};

#define HIT_SLOTS 1024	/* probe cost per thread since the last budget step */

/* The overhead budget as the recorder runs it (user/budget.h). */
struct budget_state {
	bool active;
	struct budget b;
	__u64 next_ns;		/* next decision */
	double cost_ns[HIT_SLOTS];	/* by thread; threads that share a slot are charged together: never less */
	double hits_ns, stacks_ns;	/* charged so far, all threads: probe hits, Python stack captures */
	bool warned;
};

struct rec_state {
	struct rec_writer *w;
	struct tracer *t;
	struct cuda_state cuda;
	struct py_state py;
	struct gpu_state gpu;
	bool verbose;
	__u64 events;
	int write_err;
	struct pending_snapshot pending[MAX_PENDING];
	size_t npending;
	size_t pending_overflow;
	__u32 launched_pid;	/* its first exec is the launch, snapshotted already */
	bool launched_exec_seen;
	struct budget_state budget;
};

static void queue_snapshot(struct rec_state *st, __u32 pid, __u32 origin)
{
	if (st->npending < MAX_PENDING) {
		st->pending[st->npending].pid = pid;
		st->pending[st->npending].origin = origin;
		st->npending++;
	} else {
		st->pending_overflow++;
	}
}

/* Probe hits behind an event: a "+ret" call (and a GIL re-acquisition)
 * took an entry and a return hit. */
static void count_hits(struct budget_state *bs, const struct isr_ev_hdr *h)
{
	__u64 hits;

	switch (h->type) {
	case ISR_EV_CUDA_CALL:
		hits = ((const struct isr_ev_cuda_call *)h)->flags & ISR_CUDA_RETURNED ? 2 : 1;
		break;
	case ISR_EV_CUDA_NAME:
		hits = 2;
		break;
	case ISR_EV_GIL:
		hits = ((const struct isr_ev_gil *)h)->kind == ISR_GIL_ACQUIRE ? 2 : 1;
		break;
	default:
		return;
	}
	bs->cost_ns[(h->tid * 2654435761u) % HIT_SLOTS] += (double)hits * bs->b.hit_cost_ns;
	bs->hits_ns += (double)hits * bs->b.hit_cost_ns;
}

/* A Python stack captured on a thread (at a CUDA call, or sampled) took
 * its BPF program this long on that thread. */
static void charge_capture(struct budget_state *bs, const struct isr_ev_py_frames *e)
{
	bs->cost_ns[(e->hdr.tid * 2654435761u) % HIT_SLOTS] += e->capture_ns;
	bs->stacks_ns += e->capture_ns;
}

/* The bridge's answers: flushes, and failures (told once per process). */
static void gpu_status(struct rec_state *st, const struct isr_ev_gpu_status *e)
{
	size_t i;

	if (e->state == ISR_GPU_FLUSHED) {
		st->gpu.flushed++;
		return;
	}
	if (e->state != ISR_GPU_FAILED)
		return;
	for (i = 0; i < st->gpu.nfailed; i++)
		if (st->gpu.failed_pids[i] == e->hdr.pid)
			return;
	if (st->gpu.nfailed < sizeof(st->gpu.failed_pids) / sizeof(st->gpu.failed_pids[0]))
		st->gpu.failed_pids[st->gpu.nfailed++] = e->hdr.pid;
	if (e->cupti_error < 0)
		fprintf(stderr, "inferscope-bpf: pid %u: the CUPTI bridge found no libcupti.so.13: no GPU activity "
			"from it (driver-level CUDA tracing goes on); start it with INFERSCOPE_CUPTI_LIB=PATH\n",
			e->hdr.pid);
	else
		fprintf(stderr, "inferscope-bpf: pid %u: CUPTI refused the bridge (CUptiResult %d; another CUPTI "
			"client such as a profiler may hold it): no GPU activity from it (driver-level CUDA "
			"tracing goes on)\n", e->hdr.pid, e->cupti_error);
}

static int append_record(void *ctx, const void *data, size_t size)
{
	struct rec_state *st = ctx;
	int e = rec_writer__append_event(st->w, data, size);

	if (e)
		return e;
	st->events++;
	return 0;
}

static void py_forget(struct rec_state *st, __u32 pid);

static int on_event(void *ctx, const void *data, size_t size)
{
	const struct isr_ev_hdr *h = data;
	struct rec_state *st = ctx;
	int e;

	if (h->type == ISR_EV_PY_FRAMES) {
		if (st->budget.active && size >= offsetof(struct isr_ev_py_frames, frames))
			charge_capture(&st->budget, data);
		e = st->py.stacks ? py_stacks__convert(st->py.stacks, data, append_record, st) : 0;
		if (e)
			st->write_err = e;
		return 0;
	}
	/* A new image: what was learned of the old interpreter is void (the
	 * launched command's first exec is the image it was set up for). */
	if (h->type == ISR_EV_PROC_EXEC && st->py.stacks && (h->pid != st->launched_pid || st->launched_exec_seen))
		py_forget(st, h->pid);
	e = rec_writer__append_event(st->w, data, size);
	if (e) {
		/* The writer counts what it refuses; keep consuming so the
		 * loop can stop cleanly. */
		st->write_err = e;
		return 0;
	}
	st->events++;
	if (st->budget.active)
		count_hits(&st->budget, data);
	if (h->type == ISR_EV_PROC_FORK) {
		const struct isr_ev_proc_fork *f = data;

		if (f->flags & ISR_FORK_FOLLOWED)
			queue_snapshot(st, f->child_pid, ISR_ORIGIN_CHILD);
	} else if (h->type == ISR_EV_GPU_STATUS && size >= sizeof(struct isr_ev_gpu_status)) {
		gpu_status(st, data);
	} else if (h->type == ISR_EV_PROC_EXEC) {
		if (h->pid == st->launched_pid && !st->launched_exec_seen)
			st->launched_exec_seen = true;
		else
			queue_snapshot(st, h->pid, ISR_ORIGIN_EXEC);
	}
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

static int write_pending(struct rec_state *st)
{
	size_t i;
	int e;

	for (i = 0; i < st->npending; i++) {
		e = write_snapshot(st->w, st->pending[i].pid, st->pending[i].origin);
		if (e) {
			st->npending = 0;
			return e;
		}
	}
	st->npending = 0;
	return 0;
}

static __u64 py_code_failures(const struct rec_state *st)
{
	return st->py.stacks ? py_stacks__code_failures(st->py.stacks) : 0;
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

static int collect_drops(struct tracer *t, struct rec_writer *w, __u64 *drops)
{
	int e;

	memset(drops, 0, sizeof(__u64) * ISR_SRC_MAX);
	e = tracer__read_drops(t, drops);
	if (e)
		return e;
	drops[ISR_SRC_WRITER] = rec_writer__events_lost(w);
	return 0;
}


/* py_code: the recorder's own count of unreadable code objects
 * (ISR_SRC_PY_CODE). */
static int write_drops(struct tracer *t, struct rec_writer *w, __u64 py_code, __u64 *total)
{
	struct isr_drop_count d[ISR_SRC_MAX];
	__u64 drops[ISR_SRC_MAX];
	__u32 i;
	int e;

	e = collect_drops(t, w, drops);
	if (e)
		return e;
	drops[ISR_SRC_PY_CODE] = py_code;
	*total = 0;
	memset(d, 0, sizeof(d));
	for (i = 0; i < ISR_SRC_MAX; i++) {
		d[i].source = i;
		d[i].count = drops[i];
		*total += drops[i];
	}
	return rec_writer__write_drops(w, d, ISR_SRC_MAX);
}

/* Forks the command, stopped before exec until release_command(). */
struct launch {
	pid_t pid;
	int go_fd;		/* write end: one byte releases the child */
	int status_fd;		/* read end: errno of a failed exec, EOF on success */
};

/* inject: the CUPTI bridge to hand over in CUDA_INJECTION64_PATH, or NULL. */
static int launch_command(char **cmd, const char *inject, struct launch *l)
{
	int go[2], st[2], e;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(st, O_CLOEXEC)) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	l->pid = fork();
	if (l->pid < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		close(st[0]);
		close(st[1]);
		return e;
	}
	if (l->pid == 0) {
		char c;

		close(go[1]);
		close(st[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up before starting us */
		if (inject && setenv("CUDA_INJECTION64_PATH", inject, 1))
			_exit(127);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	l->go_fd = go[1];
	l->status_fd = st[0];
	return 0;
}

static int release_command(struct launch *l)
{
	ssize_t n;
	int e = 0;

	if (write(l->go_fd, "g", 1) != 1)
		e = -errno;
	close(l->go_fd);
	l->go_fd = -1;
	if (e)
		return e;
	do
		n = read(l->status_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->status_fd);
	l->status_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

static void abandon_command(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->status_fd >= 0)
		close(l->status_fd);
	waitpid(l->pid, NULL, 0);
}

/* Stops a launched command that outlived the recording: SIGTERM, then
 * SIGKILL after a grace period. */
static void stop_command(pid_t pid, struct record_result *res)
{
	__u64 deadline = clock__mono_ns() + TERM_GRACE_NS;
	int status;

	res->command_stopped = true;
	kill(pid, SIGTERM);
	while (clock__mono_ns() < deadline) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			res->command_exited = true;
			res->command_status = status;
			return;
		}
		usleep(20000);
	}
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) == pid) {
		res->command_exited = true;
		res->command_status = status;
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

static void status_line(const struct rec_state *st, __u64 elapsed_ns, __u64 prev_events,
			__u64 drops, const struct rec_writer *w)
{
	double s = elapsed_ns / 1e9;

	fprintf(stderr, "\r  recording %6.1fs  %10llu events  %8.1fk ev/s  drops %llu  %7.1f MiB ",
		s, (unsigned long long)st->events, (st->events - prev_events) / 1e3,
		(unsigned long long)drops, rec_writer__bytes_written(w) / 1048576.0);
}

static int create_ready_file(const char *path)
{
	char buf[32];
	int fd, n;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, n) != n) {
		n = -errno;
		close(fd);
		return n;
	}
	return close(fd) ? -errno : 0;
}

static void print_drop_advice(const __u64 *drops, const struct record_opts *o)
{
	__u64 ring = drops[ISR_SRC_SCHED] + drops[ISR_SRC_FAULTS] + drops[ISR_SRC_CUDA] + drops[ISR_SRC_PYTHON] +
		     drops[ISR_SRC_PY_STACKS];

	if (ring)
		fprintf(stderr,
			"inferscope-bpf: %llu events were dropped because the ring buffer was full; "
			"consider increasing --ringbuf-size (now %zu MiB) or tracing fewer processes\n",
			(unsigned long long)ring, o->ringbuf_bytes >> 20);
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
			(unsigned long long)drops[ISR_SRC_WRITER], o->output);
}

/* Resolves the --cuda-lib files and, when a process may load its libraries
 * after we attach (a launched command, followed children), the candidate
 * libcuda files it would find (exe: the command, or NULL). 0 or -errno
 * after saying what failed. */
static int cuda_prepare(struct cuda_state *cs, const struct record_opts *o, const char *exe, bool candidates)
{
	char err[PATH_MAX + 256];
	size_t i;

	cs->libs = cuda_libs__new();
	if (!cs->libs) {
		fprintf(stderr, "inferscope-bpf: cannot set up the ELF reader for libcuda: %s\n", strerror(errno));
		return -errno;
	}
	for (i = 0; i < o->cuda_lib_count; i++) {
		const struct cuda_lib *lib = cuda_libs__resolve(cs->libs, o->cuda_libs[i], err, sizeof(err));

		if (!lib) {
			int e = -errno;

			fprintf(stderr, "inferscope-bpf: --cuda-lib: %s\n", err);
			return e;
		}
		if (cs->nextra < CUDA_MAX_LIBS) {
			cs->extra[cs->nextra].lib = lib;
			snprintf(cs->extra[cs->nextra].path, sizeof(cs->extra[0].path), "%s", o->cuda_libs[i]);
			cs->nextra++;
		}
	}
	if (candidates) {
		int n = cuda_libs__candidates(cs->libs, exe, cs->cand, CUDA_MAX_LIBS, o->verbose ? stderr : NULL);

		cs->ncand = n > 0 ? (size_t)n : 0;
	}
	return 0;
}

/* Lets the recorder hold the two descriptors of every uprobe: a process
 * takes about 200 per libcuda file. */
static void cuda_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Probes one library in pid: 1 when newly probed, 0 when it already was,
 * -errno (-ESRCH, quietly, when the process is gone) after saying what
 * failed. */
static int cuda_probe(struct rec_state *st, __u32 pid, const struct cuda_mapping *m)
{
	char err[PATH_MAX + 256];
	__u64 t0 = clock__mono_ns();
	size_t i;
	int e;

	e = tracer__attach_cuda(st->t, pid, m, err, sizeof(err));
	if (e == -EALREADY)
		return 0;
	if (e) {
		if (e != -ESRCH)
			fprintf(stderr, "inferscope-bpf: %s; CUDA calls of pid %u through it are not traced\n", err,
				pid);
		return e;
	}
	if (st->verbose) {
		fprintf(stderr, "inferscope-bpf: pid %u: %u CUDA probes attached in %.1f ms on %s\n", pid,
			m->lib->probes, (clock__mono_ns() - t0) / 1e6, m->path);
		for (i = 0; i < st->cuda.ndescribed && st->cuda.described[i] != m->lib; i++)
			;
		if (i == st->cuda.ndescribed && i < CUDA_MAX_LIBS) {
			st->cuda.described[st->cuda.ndescribed++] = m->lib;
			cuda_lib__describe(m->lib, m->path, stderr);
		}
	}
	return 1;
}

/* Probes in pid the libcuda files it maps now and those given with
 * --cuda-lib; with candidates (a process about to load its libraries) the
 * candidate files too, by path: their probes go live when it maps one.
 * late: the process may have used a file before it was probed, say so.
 * Returns how many libcuda files it maps now, or -errno (-ESRCH: gone; an
 * attach failure, already reported). */
static int cuda_probe_process(struct rec_state *st, __u32 pid, bool candidates, bool late)
{
	struct cuda_mapping mapped[CUDA_MAX_LIBS];
	int n, i, r, first_err = 0;

	n = cuda_libs__mapped(st->cuda.libs, pid, mapped, CUDA_MAX_LIBS, stderr);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		r = cuda_probe(st, pid, &mapped[i]);
		if (r == 1 && late)
			fprintf(stderr, "inferscope-bpf: pid %u loaded %s after tracing began: its CUDA calls are "
				"traced from now on, calls made before may have been missed\n", pid, mapped[i].path);
		if (r < 0 && !first_err)
			first_err = r;
	}
	for (i = 0; i < (int)st->cuda.nextra; i++) {
		r = cuda_probe(st, pid, &st->cuda.extra[i]);
		if (r < 0 && !first_err)
			first_err = r;
	}
	for (i = 0; candidates && i < (int)st->cuda.ncand; i++) {
		r = cuda_probe(st, pid, &st->cuda.cand[i]);
		if (r < 0 && !first_err)
			first_err = r;
	}
	return first_err ? first_err : n;
}

/* Once a second: libcuda files that targets mapped since (dlopen), and
 * probes of processes that are gone. */
static void cuda_rescan(struct rec_state *st)
{
	static __u32 pids[ISR_MAX_TARGETS];
	int n, i;

	n = tracer__targets(st->t, pids, ISR_MAX_TARGETS);
	for (i = 0; i < n; i++)
		if (proc__leader_running(pids[i]))
			cuda_probe_process(st, pids[i], false, true);
}

/* New processes (followed children, exec'd targets) load their libraries
 * from now on: probe their libcuda files and the candidates. */
static void cuda_probe_pending(struct rec_state *st)
{
	size_t i;

	for (i = 0; i < st->npending; i++)
		cuda_probe_process(st, st->pending[i].pid, true, false);
}

static bool py_decided(const struct py_state *ps, __u32 pid)
{
	size_t i;

	for (i = 0; i < ps->ndecided; i++)
		if (ps->decided[i] == pid)
			return true;
	return false;
}

static void py_decide(struct py_state *ps, __u32 pid)
{
	if (ps->ndecided == ps->cap_decided) {
		size_t cap = ps->cap_decided ? 2 * ps->cap_decided : 16;
		__u32 *n = realloc(ps->decided, cap * sizeof(*n));

		if (!n)
			return; /* asked again at the next rescan: no harm */
		ps->decided = n;
		ps->cap_decided = cap;
	}
	ps->decided[ps->ndecided++] = pid;
}

static void py_unwait(struct py_state *ps, size_t i)
{
	ps->nwaiting--;
	ps->waiting[i] = ps->waiting[ps->nwaiting];
	ps->waiting_pid[i] = ps->waiting_pid[ps->nwaiting];
}

static void py_unfresh(struct py_state *ps, size_t i)
{
	ps->nfresh--;
	ps->fresh_pid[i] = ps->fresh_pid[ps->nfresh];
	ps->fresh_until[i] = ps->fresh_until[ps->nfresh];
}

/* A process exec'd: what was learned of its interpreter is void. */
static void py_forget(struct rec_state *st, __u32 pid)
{
	size_t i;

	py_stacks__forget(st->py.stacks, pid);
	tracer__clear_py_layout(st->t, pid);
	for (i = 0; i < st->py.ndecided; i++) {
		if (st->py.decided[i] == pid) {
			st->py.decided[i] = st->py.decided[--st->py.ndecided];
			break;
		}
	}
	for (i = 0; i < st->py.nwaiting; i++) {
		if (st->py.waiting_pid[i] == pid) {
			py_unwait(&st->py, i);
			break;
		}
	}
	for (i = 0; i < st->py.nfresh; i++) {
		if (st->py.fresh_pid[i] == pid) {
			py_unfresh(&st->py, i);
			break;
		}
	}
}

/* Validates the interpreter of pid at m and starts its stack capture, or
 * says why not (once per process, in the recording and on stderr). An
 * interpreter not initialized yet waits for py_stacks_retry. */
static void py_stacks_start(struct rec_state *st, __u32 pid, const struct py_mapping *m)
{
	struct isr_ev_py_status status;
	struct isr_py_layout layout;
	size_t i;
	int e;

	if (py_decided(&st->py, pid))
		return;
	e = py_stacks__setup(st->py.stacks, pid, m, &layout, &status);
	if (e == -EAGAIN) {
		for (i = 0; i < st->py.nwaiting && st->py.waiting_pid[i] != pid; i++)
			;
		if (i == st->py.nwaiting && i < PY_MAX_WAITING) {
			st->py.waiting[i] = *m;
			st->py.waiting_pid[i] = pid;
			st->py.nwaiting++;
		}
		return;
	}
	if (e == -ESRCH)
		return;
	if (e == 0) {
		e = tracer__set_py_layout(st->t, pid, &layout);
		if (e) {
			status.status = ISR_PY_STATUS_UNSUPPORTED;
			snprintf(status.detail, sizeof(status.detail), "the stack walker's map refused pid %u: %s", pid,
				 strerror(-e));
		}
	}
	if (status.status != ISR_PY_STATUS_SAMPLING)
		fprintf(stderr, "inferscope-bpf: pid %u: %s: %s; its Python stacks are not captured\n", pid, m->file,
			status.detail);
	else if (st->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: Python stacks captured (%s)\n", pid, status.detail);
	py_decide(&st->py, pid);
	if (append_record(st, &status, sizeof(status)))
		st->write_err = -EIO;
}

/* Interpreters that were not initialized when first seen: asked again
 * (each goes back on the list while it is still not initialized). */
static void py_stacks_retry(struct rec_state *st)
{
	struct py_mapping m[PY_MAX_WAITING];
	__u32 pid[PY_MAX_WAITING];
	size_t i, n = st->py.nwaiting;

	memcpy(m, st->py.waiting, n * sizeof(m[0]));
	memcpy(pid, st->py.waiting_pid, n * sizeof(pid[0]));
	st->py.nwaiting = 0;
	for (i = 0; i < n; i++)
		if (proc__alive(pid[i]))
			py_stacks_start(st, pid[i], &m[i]);
}

/* Probes the GIL of the Python interpreters pid maps now (--gil) and
 * starts the capture of its stacks (--py-stacks). late: it may have run
 * Python before, say so. Returns how many interpreter files it maps, or
 * -errno (-ESRCH: gone; an attach failure, already reported). */
static int py_probe_process(struct rec_state *st, __u32 pid, bool late)
{
	struct py_mapping mapped[PY_MAX_LIBS];
	char err[PATH_MAX + 256];
	int n, i, e, first_err = 0;
	size_t j;

	n = py_libs__mapped(st->py.libs, pid, mapped, PY_MAX_LIBS, stderr);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		__u64 t0 = clock__mono_ns();

		if (st->py.stacks)
			py_stacks_start(st, pid, &mapped[i]);
		if (!st->py.gil)
			continue;
		e = tracer__attach_python(st->t, pid, &mapped[i], err, sizeof(err));
		if (e == -EALREADY)
			continue;
		if (e) {
			if (e != -ESRCH)
				fprintf(stderr, "inferscope-bpf: %s; the GIL of pid %u is not traced\n", err, pid);
			if (!first_err)
				first_err = e;
			continue;
		}
		if (late)
			fprintf(stderr, "inferscope-bpf: pid %u loaded %s after tracing began: its GIL is traced from "
				"now on, earlier GIL waits were missed\n", pid, mapped[i].path);
		if (!st->verbose)
			continue;
		fprintf(stderr, "inferscope-bpf: pid %u: %u Python GIL probes attached in %.1f ms on %s\n", pid,
			mapped[i].lib->probes, (clock__mono_ns() - t0) / 1e6, mapped[i].path);
		for (j = 0; j < st->py.ndescribed && st->py.described[j] != mapped[i].lib; j++)
			;
		if (j == st->py.ndescribed && j < PY_MAX_LIBS) {
			st->py.described[st->py.ndescribed++] = mapped[i].lib;
			py_lib__describe(mapped[i].lib, mapped[i].path, stderr);
		}
	}
	return first_err ? first_err : n;
}

/* A new image (exec'd, or the launched command) that maps no interpreter
 * yet loads a shared libpython after exec: it is looked for often for a
 * while rather than at the next 1 s rescan. */
static void py_watch_new_image(struct rec_state *st, __u32 pid)
{
	size_t j;

	if (st->py.nfresh == PY_MAX_WAITING)
		return;
	for (j = 0; j < st->py.nfresh && st->py.fresh_pid[j] != pid; j++)
		;
	if (j == st->py.nfresh) {
		st->py.fresh_pid[j] = pid;
		st->py.fresh_until[j] = clock__mono_ns() + PY_FRESH_NS;
		st->py.nfresh++;
	}
}

/* New images of the last PY_FRESH_NS that mapped no interpreter yet: the
 * first time one maps it, it is probed. */
static void py_fresh_rescan(struct rec_state *st)
{
	__u64 now = clock__mono_ns();
	struct py_mapping m[PY_MAX_LIBS];
	size_t i = 0;

	while (i < st->py.nfresh) {
		__u32 pid = st->py.fresh_pid[i];
		bool expired = now >= st->py.fresh_until[i] || !proc__alive(pid);

		if (!expired && py_libs__mapped(st->py.libs, pid, m, PY_MAX_LIBS, NULL) <= 0) {
			i++;
			continue;
		}
		py_unfresh(&st->py, i);
		if (!expired)
			py_probe_process(st, pid, false);
	}
}

/* Once a second: interpreters that targets mapped since (a launched
 * command's libpython, loaded after exec; embedded interpreters). */
static void py_rescan(struct rec_state *st)
{
	static __u32 pids[ISR_MAX_TARGETS];
	int n, i;

	n = tracer__targets(st->t, pids, ISR_MAX_TARGETS);
	for (i = 0; i < n; i++)
		if (proc__leader_running(pids[i]))
			py_probe_process(st, pids[i], true);
}

static void py_probe_pending(struct rec_state *st)
{
	size_t i;

	for (i = 0; i < st->npending; i++)
		if (py_probe_process(st, st->pending[i].pid, false) == 0)
			py_watch_new_image(st, st->pending[i].pid);
}

static int py_prepare(struct py_state *ps)
{
	ps->libs = py_libs__new();
	if (!ps->libs) {
		fprintf(stderr, "inferscope-bpf: cannot set up the ELF reader for Python: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Before anything is traced: the cost of one probe hit here, which the
 * budget charges for every hit. No budget (a warning) where the hot path
 * cannot be switched. */
static void budget_setup(struct rec_state *st, const struct record_opts *o)
{
	char err[512];
	double hit_ns;
	int e;

	if (o->budget_pct <= 0 || !o->cuda)
		return;
	e = tracer__measure_hit_cost(st->t, &hit_ns, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf: the %.3g%% overhead budget cannot be kept: %s; every probe stays "
			"on%s\n", o->budget_pct, err,
			o->legacy_uprobes ? " (--legacy-uprobes)" : " (needs Linux 6.6 or later)");
		return;
	}
	budget__init(&st->budget.b, o->budget_pct / 100, hit_ns, clock__mono_ns());
	st->budget.active = true;
	if (o->verbose)
		fprintf(stderr, "inferscope-bpf: overhead budget %.3g%% of a thread's time; one probe hit costs %.0f ns "
			"here\n", o->budget_pct, hit_ns);
}

static int write_sampling(struct rec_state *st, __u32 kind, __u64 ts, __u64 switch_ns)
{
	const struct budget *b = &st->budget.b;
	struct isr_ev_sampling ev;
	int e;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.type = ISR_EV_SAMPLING;
	ev.hdr.size = sizeof(ev);
	ev.hdr.cpu = (__u32)sched_getcpu();
	ev.hdr.ts_ns = ts;
	ev.kind = kind;
	ev.budget_ppm = (__u32)(b->fraction * 1e6 + 0.5);
	ev.hit_cost_ps = (__u64)(b->hit_cost_ns * 1000 + 0.5);
	ev.switch_ns = switch_ns;
	ev.spent_ns = (__u64)b->spent_ns;
	ev.credit_ns = (__s64)b->credit_ns;
	e = rec_writer__append_event(st->w, &ev, sizeof(ev));
	if (!e)
		st->events++;
	return e;
}

/* Charges the hits since the last step and switches the hot path when the
 * budget says so. */
static int budget_step(struct rec_state *st, __u64 now)
{
	struct budget_state *bs = &st->budget;
	enum budget_action act;
	double busiest = 0;
	__u64 t0, t1;
	char err[512];
	size_t i;
	bool on;
	int e;

	for (i = 0; i < HIT_SLOTS; i++)
		if (bs->cost_ns[i] > busiest)
			busiest = bs->cost_ns[i];
	memset(bs->cost_ns, 0, sizeof(bs->cost_ns));
	budget__charge(&bs->b, busiest, now);
	act = budget__decide(&bs->b, now, &bs->next_ns);
	if (act == BUDGET_KEEP)
		return 0;
	on = act == BUDGET_SWITCH_ON;
	t0 = clock__mono_ns();
	e = tracer__set_hot(st->t, on, err, sizeof(err));
	t1 = clock__mono_ns();
	if (e && !bs->warned) {
		fprintf(stderr, "\ninferscope-bpf: overhead budget: %s\n", err);
		bs->warned = true;
	}
	/* The window runs from when the probes were surely live to when
	 * their release began. */
	budget__switched(&bs->b, on, on ? t1 : t0);
	return write_sampling(st, on ? ISR_SAMPLING_ON : ISR_SAMPLING_OFF, on ? t1 : t0, t1 - t0);
}

/* A -p process that runs CUDA without the bridge: load it (ptrace and
 * dlopen, user/bridge_inject.h). 0 once it is mapped there. */
static int gpu_inject(struct rec_state *st, __u32 pid)
{
	char bridge[PATH_MAX], err[PATH_MAX + 256];
	__u64 t0 = clock__mono_ns();
	int e;

	e = cupti_bridge__locate(st->gpu.bridge_opt, bridge, sizeof(bridge));
	if (e) {
		fprintf(stderr, "inferscope-bpf: cannot use the CUPTI bridge %s: %s; GPU activity of pid %u is not "
			"recorded (give its path with --cupti-bridge, or --no-cupti)\n",
			st->gpu.bridge_opt ? st->gpu.bridge_opt : CUPTI_BRIDGE_NAME " next to inferscope-bpf",
			strerror(-e), pid);
		return e;
	}
	e = bridge__inject((pid_t)pid, bridge, err, sizeof(err));
	if (e) {
		if (e != -ESRCH && e != -ENODEV)	/* CPU only: said already */
			fprintf(stderr, "inferscope-bpf: %s; GPU activity of pid %u is not recorded (CUDA calls "
				"are; --no-inject skips this step)\n", err, pid);
		return e;
	}
	if (st->verbose)
		fprintf(stderr, "inferscope-bpf: pid %u: CUPTI bridge loaded into the running process in %.1f ms\n",
			pid, (clock__mono_ns() - t0) / 1e6);
	return 0;
}

/* Attaches to the bridge pid maps, if it does (after loading it there when
 * `inject`). late: it was found by the rescan (injected, or loaded with
 * dlopen), say so. */
static void gpu_probe_process(struct rec_state *st, __u32 pid, bool late, bool inject)
{
	char err[PATH_MAX + 256];
	int e = tracer__attach_gpu_if_mapped(st->t, pid, err, sizeof(err));

	if (e == 0 && inject && st->gpu.inject && !gpu_inject(st, pid))
		e = tracer__attach_gpu_if_mapped(st->t, pid, err, sizeof(err));
	if (e < 0 && e != -ESRCH)
		fprintf(stderr, "inferscope-bpf: %s; GPU activity of pid %u is not recorded\n", err, pid);
	else if (e == 1 && (late || st->verbose))
		fprintf(stderr, "inferscope-bpf: pid %u: CUPTI bridge attached%s\n", pid,
			late ? " (it was loaded after tracing began)" : "");
}

static void gpu_rescan(struct rec_state *st)
{
	static __u32 pids[ISR_MAX_TARGETS];
	int n, i;

	n = tracer__targets(st->t, pids, ISR_MAX_TARGETS);
	for (i = 0; i < n; i++)
		if (proc__leader_running(pids[i]))
			gpu_probe_process(st, pids[i], true, false);
}

/* The bridge a launched command will load, or none (said why). */
static void gpu_prepare(struct gpu_state *gs, const struct record_opts *o)
{
	const char *preset = getenv("CUDA_INJECTION64_PATH");
	int e;

	if (!o->command)
		return;
	if (preset && *preset) {
		fprintf(stderr, "inferscope-bpf: CUDA_INJECTION64_PATH is already set (%s): %s keeps it, so GPU activity "
			"is recorded only if that is the CUPTI bridge\n", preset, o->command[0]);
		return;
	}
	e = cupti_bridge__locate(o->cupti_bridge, gs->bridge, sizeof(gs->bridge));
	if (e) {
		gs->bridge[0] = 0;
		fprintf(stderr, "inferscope-bpf: cannot use the CUPTI bridge %s: %s; GPU activity (kernels, copies on "
			"the GPU) is not recorded (give its path with --cupti-bridge, or --no-cupti)\n",
			o->cupti_bridge ? o->cupti_bridge : CUPTI_BRIDGE_NAME " next to inferscope-bpf", strerror(-e));
	}
}

/* Before the end: every live bridge flushes what CUPTI holds; waits up to
 * GPU_FLUSH_WAIT_NS for their answers, consuming events meanwhile. */
static void gpu_final_flush(struct rec_state *st)
{
	char err[PATH_MAX + 256];
	__u64 end;
	int n;

	st->gpu.flushed = 0;
	n = tracer__request_gpu_flush(st->t, err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "inferscope-bpf: %s\n", err);
	if (n <= 0)
		return;
	end = clock__mono_ns() + GPU_FLUSH_WAIT_NS;
	while (st->gpu.flushed < (unsigned int)n && clock__mono_ns() < end)
		if (tracer__poll(st->t, POLL_MS) < 0)
			break;
	if (st->gpu.flushed < (unsigned int)n)
		fprintf(stderr, "inferscope-bpf: %u of %d CUPTI bridges did not flush within %.1f s: GPU activity of "
			"their last second may be missing\n", n - st->gpu.flushed, n, GPU_FLUSH_WAIT_NS / 1e9);
}

int record__list_probes(const struct record_opts *o)
{
	struct cuda_mapping mapped[CUDA_MAX_LIBS];
	struct py_mapping py[PY_MAX_LIBS];
	struct cuda_state cs;
	struct py_state ps;
	size_t i;
	int e, n, j;

	memset(&cs, 0, sizeof(cs));
	memset(&ps, 0, sizeof(ps));
	e = cuda_prepare(&cs, o, o->command ? o->command[0] : NULL, o->command != NULL);
	e = e ?: (o->python ? py_prepare(&ps) : 0);
	if (e)
		goto out;
	for (i = 0; i < o->pid_count; i++) {
		n = cuda_libs__mapped(cs.libs, o->pids[i], mapped, CUDA_MAX_LIBS, stderr);
		if (n < 0) {
			e = n;
			fprintf(stderr, "inferscope-bpf: cannot read the mappings of pid %u: %s\n", o->pids[i],
				strerror(-e));
			goto out;
		}
		printf("pid %u:%s\n", o->pids[i], n ? "" : " no CUDA driver library mapped");
		for (j = 0; j < n; j++)
			cuda_lib__describe(mapped[j].lib, mapped[j].path, stdout);
		if (o->python) {
			n = py_libs__mapped(ps.libs, o->pids[i], py, PY_MAX_LIBS, stderr);
			if (n == 0)
				printf("pid %u: no Python 3.%d-3.%d interpreter mapped\n", o->pids[i], PY_MIN_MINOR,
				       PY_MAX_MINOR);
			for (j = 0; j < n; j++)
				py_lib__describe(py[j].lib, py[j].path, stdout);
		}
	}
	if (o->command && o->python)
		printf("%s: its Python interpreter is probed once it has started (not known before exec)\n",
		       o->command[0]);
	if (o->command) {
		printf("%s: %s\n", o->command[0], cs.ncand ? "libcuda.so.1 candidates (probed before it starts)" :
			"no libcuda.so.1 found where it would load one from");
		for (i = 0; i < cs.ncand; i++)
			cuda_lib__describe(cs.cand[i].lib, cs.cand[i].path, stdout);
	}
	if (cs.nextra)
		printf("--cuda-lib:\n");
	for (i = 0; i < cs.nextra; i++)
		cuda_lib__describe(cs.extra[i].lib, cs.extra[i].path, stdout);
out:
	py_libs__free(ps.libs);
	cuda_libs__free(cs.libs);
	return e;
}

int record__run(const struct record_opts *o, struct record_result *res)
{
	struct rec_writer_opts wopts = { .chunk_bytes = 0, .zstd_level = o->zstd_level };
	struct tracer_opts topts = {
		.ringbuf_bytes = o->ringbuf_bytes,
		.follow_children = o->follow_children,
		.faults = o->faults,
		.cuda = o->cuda,
		.python = o->python,
		.legacy_uprobes = o->legacy_uprobes,
		.gpu = o->gpu,
		.py_stacks_hz = o->py_stacks_hz,
		.py_launch_every = o->py_launch_every,
		.verbose = o->verbose,
	};
	struct launch l = { .pid = -1, .go_fd = -1, .status_fd = -1 };
	struct rec_state st;
	struct sigaction sa;
	struct tracer *t = NULL;
	struct rec_props *host = NULL;
	__u64 start, now, next_tick, next_live, last_events = 0, drops_total = 0;
	__u64 drops[ISR_SRC_MAX];
	__u32 stop_reason = 0;
	bool tty = isatty(STDERR_FILENO) && !o->quiet;
	char err[512];
	size_t i;
	int e, n, status;

	memset(res, 0, sizeof(*res));
	memset(&st, 0, sizeof(st));
	st.verbose = o->verbose;
	stop_signal = 0;

	e = preflight__privileges(err, sizeof(err));
	e = e ?: preflight__btf(err, sizeof(err));
	for (i = 0; !e && i < o->pid_count; i++)
		e = preflight__pid(o->pids[i], err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		return e;
	}

	st.w = rec_writer__open(o->output, &wopts);
	if (!st.w) {
		e = -errno;
		fprintf(stderr, "inferscope-bpf: cannot create the recording %s: %s; choose another path with -o\n",
			o->output, strerror(-e));
		return e;
	}

	t = tracer__open(&topts, on_event, &st, err, sizeof(err));
	if (!t) {
		e = -errno;
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		goto out;
	}
	st.t = t;
	budget_setup(&st, o);
	if (o->cuda) {
		/* Candidates: for the launched command, and for children that
		 * targets start (they load their libraries after the fork). */
		e = cuda_prepare(&st.cuda, o, o->command ? o->command[0] : NULL,
				 o->command || o->follow_children);
		if (e)
			goto out;
		cuda_raise_fd_limit();
	}
	if (o->python || o->py_stacks_hz) {
		e = py_prepare(&st.py);
		if (e)
			goto out;
		st.py.gil = o->python;
		if (o->py_stacks_hz) {
			st.py.stacks = py_stacks__new();
			if (!st.py.stacks) {
				e = -errno;
				fprintf(stderr, "inferscope-bpf: cannot set up Python stacks: %s\n", strerror(-e));
				goto out;
			}
		}
	}
	if (o->gpu && o->gpu_start)
		gpu_prepare(&st.gpu, o);

	if (o->command) {
		e = launch_command(o->command, st.gpu.bridge[0] ? st.gpu.bridge : NULL, &l);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot start %s: %s\n", o->command[0], strerror(-e));
			goto out;
		}
		st.launched_pid = (__u32)l.pid;
		e = tracer__add_target(t, (__u32)l.pid);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot add pid %d to the targets: %s\n", l.pid, strerror(-e));
			goto out;
		}
	}
	for (i = 0; i < o->pid_count; i++) {
		e = tracer__add_target(t, o->pids[i]);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot add pid %u to the targets: %s\n", o->pids[i],
				strerror(-e));
			goto out;
		}
	}

	e = tracer__attach(t, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inferscope-bpf: %s\n", err);
		goto out;
	}
	if (o->cuda) {
		for (i = 0; i < o->pid_count; i++) {
			n = cuda_probe_process(&st, o->pids[i], false, false);
			if (n < 0 && n != -ESRCH) {
				e = n;
				goto out;
			}
			/* A --cuda-lib file is probed in every target: not CPU only. */
			if (n == 0 && !st.cuda.nextra)
				fprintf(stderr, "inferscope-bpf: pid %u has no CUDA driver library mapped: tracing CPU "
					"only (it will be traced if it loads one)\n", o->pids[i]);
		}
		if (o->command) {
			/* Not exec'd yet: libcuda is probed by path, live once mapped. */
			n = cuda_probe_process(&st, (__u32)l.pid, true, false);
			if (n < 0 && n != -ESRCH) {
				e = n;
				goto out;
			}
			if (!st.cuda.ncand && !st.cuda.nextra)
				fprintf(stderr, "inferscope-bpf: no CUDA driver library (libcuda.so.1) found where %s "
					"would load one from (LD_LIBRARY_PATH, its RUNPATH, /etc/ld.so.cache, the "
					"standard directories): tracing CPU only (a libcuda it loads from elsewhere is "
					"traced from when it is loaded; --cuda-lib PATH probes it from the start)\n",
					o->command[0]);
		}
	}
	st.gpu.inject = o->gpu_start && o->inject;
	st.gpu.bridge_opt = o->cupti_bridge;
	for (i = 0; o->gpu && i < o->pid_count; i++)
		gpu_probe_process(&st, o->pids[i], false, true);
	if (o->gpu && st.gpu.bridge[0]) {
		/* Not exec'd yet: live once the command maps the bridge. */
		e = tracer__attach_gpu(t, (__u32)l.pid, st.gpu.bridge, err, sizeof(err));
		if (e) {
			fprintf(stderr, "inferscope-bpf: %s\n", err);
			goto out;
		}
	}
	for (i = 0; (o->python || o->py_stacks_hz) && i < o->pid_count; i++) {
		n = py_probe_process(&st, o->pids[i], false);
		if (n < 0 && n != -ESRCH) {
			e = n;
			goto out;
		}
	}
	if (o->verbose) {
		fprintf(stderr, "inferscope-bpf: probes attached:\n");
		tracer__describe(t, stderr);
	}

	start = clock__mono_ns();
	host = procinfo__host(o->argc, o->argv, start, o->duration_ns);
	if (!host) {
		e = -errno;
		goto write_failed;
	}
	e = rec_writer__write_props(st.w, ISR_CHUNK_HOST, host);
	e = e ?: write_clock(st.w);
	if (st.budget.active) {
		budget__init(&st.budget.b, st.budget.b.fraction, st.budget.b.hit_cost_ns, start);
		st.budget.next_ns = start + BUDGET_CHECK_NS;
		e = e ?: write_sampling(&st, ISR_SAMPLING_START, start, 0);
	}
	for (i = 0; !e && i < o->pid_count; i++)
		e = write_snapshot(st.w, o->pids[i], ISR_ORIGIN_ATTACHED);
	if (e)
		goto write_failed;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (o->command) {
		e = release_command(&l);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot run %s: %s\n", o->command[0], strerror(-e));
			waitpid(l.pid, NULL, 0);
			l.pid = -1;
			goto out;
		}
		/* After exec: the image the user asked for. A Python linked
		 * into its executable is known now; a libpython it loads is
		 * found by the rescan once mapped. */
		e = write_snapshot(st.w, (__u32)l.pid, ISR_ORIGIN_LAUNCHED);
		if (e)
			goto write_failed;
		if ((o->python || o->py_stacks_hz) && py_probe_process(&st, (__u32)l.pid, false) == 0)
			py_watch_new_image(&st, (__u32)l.pid);
	}

	if (o->ready_file) {
		e = create_ready_file(o->ready_file);
		if (e) {
			fprintf(stderr, "inferscope-bpf: cannot create the ready file %s: %s\n", o->ready_file,
				strerror(-e));
			goto out;
		}
	}
	if (!o->quiet) {
		fprintf(stderr, "inferscope-bpf: recording ");
		if (o->command)
			fprintf(stderr, "%s (pid %d)", o->command[0], l.pid);
		for (i = 0; i < o->pid_count; i++)
			fprintf(stderr, "%spid %u", i || o->command ? ", " : "", o->pids[i]);
		fprintf(stderr, "%s to %s", o->follow_children ? " and its children" : "", o->output);
		if (o->duration_ns)
			fprintf(stderr, " for %.1f s", o->duration_ns / 1e9);
		fprintf(stderr, "; Ctrl-C stops\n");
	}

	next_tick = start + TICK_NS;
	next_live = start + LIVENESS_NS;
	for (;;) {
		/* An interpreter still initializing is asked again soon: its
		 * stacks are lost until it is checked. */
		int wait_ms = st.py.nwaiting || st.py.nfresh ? PY_WAIT_POLL_MS : POLL_MS;

		if (st.budget.active) {
			now = clock__mono_ns();
			wait_ms = st.budget.next_ns <= now ? 0 :
				  (int)((st.budget.next_ns - now + 999999) / 1000000);
			if (wait_ms > POLL_MS)
				wait_ms = POLL_MS;
			if (wait_ms > PY_WAIT_POLL_MS && (st.py.nwaiting || st.py.nfresh))
				wait_ms = PY_WAIT_POLL_MS;
		}
		n = tracer__poll(t, wait_ms);
		if (n < 0) {
			e = n;
			fprintf(stderr, "\ninferscope-bpf: reading the ring buffer failed: %s\n", strerror(-e));
			break;
		}
		if (o->cuda && st.npending)
			cuda_probe_pending(&st);
		if ((o->python || o->py_stacks_hz) && st.npending)
			py_probe_pending(&st);
		if (st.py.nfresh)
			py_fresh_rescan(&st);
		if (st.py.nwaiting)
			py_stacks_retry(&st);
		if (st.npending && (e = write_pending(&st)))
			st.write_err = e;
		if (st.write_err) {
			stop_reason = ISR_STOP_WRITE_ERROR;
			break;
		}
		now = clock__mono_ns();
		if (st.budget.active && now >= st.budget.next_ns && (e = budget_step(&st, now))) {
			st.write_err = e;
			continue;
		}
		if (stop_signal) {
			stop_reason = ISR_STOP_SIGNAL;
			break;
		}
		if (o->duration_ns && now - start >= o->duration_ns) {
			stop_reason = ISR_STOP_DURATION;
			break;
		}
		if (now >= next_live) {
			next_live = now + LIVENESS_NS;
			if (l.pid > 0 && !res->command_exited && waitpid(l.pid, &status, WNOHANG) == l.pid) {
				res->command_exited = true;
				res->command_status = status;
			}
			if (!any_target_alive(t)) {
				stop_reason = ISR_STOP_TARGETS_EXITED;
				break;
			}
		}
		if (now >= next_tick) {
			next_tick += TICK_NS;
			if (o->cuda)
				cuda_rescan(&st);
			if (o->python || o->py_stacks_hz)
				py_rescan(&st);
			if (o->gpu)
				gpu_rescan(&st);
			tracer__prune_uprobes(t);
			e = rec_writer__flush(st.w);
			e = e ?: write_clock(st.w);
			e = e ?: write_drops(t, st.w, py_code_failures(&st), &drops_total);
			if (e) {
				st.write_err = e;
				continue;
			}
			if (tty)
				status_line(&st, now - start, last_events, drops_total, st.w);
			last_events = st.events;
		}
	}
	if (tty)
		fputc('\n', stderr);
	if (o->gpu && !st.write_err)
		gpu_final_flush(&st);

	/* Everything the kernel queued before we stopped belongs in the file. */
	tracer__drain(t);
	if (!st.write_err && st.npending)
		st.write_err = write_pending(&st);
	if (!st.write_err) {
		e = write_clock(st.w);
		e = e ?: write_drops(t, st.w, py_code_failures(&st), &drops_total);
		e = e ?: rec_writer__finish(st.w, clock__mono_ns(), stop_reason);
		if (e)
			st.write_err = e;
	}
	if (st.write_err) {
		e = st.write_err;
		stop_reason = ISR_STOP_WRITE_ERROR;
		goto write_failed;
	}
	if (n < 0)
		e = n;
	collect_drops(t, st.w, drops);
	drops[ISR_SRC_PY_CODE] = py_code_failures(&st);
	res->events = st.events;
	res->drops_total = drops_total;
	res->stop_reason = stop_reason;
	if (!o->quiet) {
		fprintf(stderr, "inferscope-bpf: %llu events in %.1f s, %llu dropped, %.1f MiB written to %s\n",
			(unsigned long long)st.events, (clock__mono_ns() - start) / 1e9,
			(unsigned long long)drops_total, rec_writer__bytes_written(st.w) / 1048576.0, o->output);
		if (st.budget.active)
			fprintf(stderr, "inferscope-bpf: overhead budget: charged %.3f ms of probe hits and %.3f ms of "
				"Python stack captures (all threads; one hit costs %.0f ns here)\n",
				st.budget.hits_ns / 1e6, st.budget.stacks_ns / 1e6, st.budget.b.hit_cost_ns);
		if (st.budget.b.sampling)
			fprintf(stderr, "inferscope-bpf: the CUDA hot path (launches, async copies, memsets) cost more "
				"than the %.3g%% overhead budget: its probes were switched off and on %llu times and "
				"its calls are extrapolated from the windows they were on (--budget raises the "
				"budget, --budget off traces every call)\n", o->budget_pct,
				(unsigned long long)st.budget.b.switches);
		if (st.pending_overflow)
			fprintf(stderr, "inferscope-bpf: %zu new processes were too many to snapshot at once; "
				"their events are recorded, their command lines are not\n", st.pending_overflow);
	}
	print_drop_advice(drops, o);
	goto out;

write_failed:
	fprintf(stderr,
		"\ninferscope-bpf: writing %s failed: %s; recording stopped. The file holds everything up to "
		"its last complete chunk (%llu events written, %llu lost)%s\n",
		o->output, strerror(-e), (unsigned long long)rec_writer__events_written(st.w),
		(unsigned long long)rec_writer__events_lost(st.w),
		e == -ENOSPC ? "; free disk space or record to another filesystem with -o" : "");
	res->events = st.events;
	res->stop_reason = ISR_STOP_WRITE_ERROR;
out:
	if (l.pid > 0) {
		if (l.go_fd >= 0) {
			abandon_command(&l);
		} else if (!res->command_exited) {
			if (waitpid(l.pid, &status, WNOHANG) == l.pid) {
				res->command_exited = true;
				res->command_status = status;
			} else {
				stop_command(l.pid, res);
			}
		}
	}
	rec_props__free(host);
	tracer__free(t);
	cuda_libs__free(st.cuda.libs);
	py_libs__free(st.py.libs);
	py_stacks__free(st.py.stacks);
	free(st.py.decided);
	rec_writer__free(st.w);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	return e;
}
