// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fault matrix: what happens to the recording, the kernel and the
 * user's job when things go wrong around the tracer. SIGKILL of the
 * recorder (the file reads back, truncated; no BPF program, link or map and
 * no uprobe of it is left, checked with bpftool and tracefs); the recorder
 * stopped for 10 s under a fault flood (every fault is either recorded or
 * counted as dropped, exactly, against the workload's own count, and the
 * drops are reported); a full disk with -p and with -- CMD (the job
 * survives), and a file size limit (ulimit -f) taken as one; SIGUSR1 to a
 * plain recording (ignored); a target killed while others go on (the end
 * of the run says nothing about the dead one); 1000 children alive at once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "proc.h"
#include "recording.h"

#define LAUNCH_RATE "build/tests/workloads/launch_rate"
#define TRACEFS "/sys/kernel/tracing"
#define MAX_IDS 512

struct ctx {
	struct th_files f;
	pid_t spawned[3];	/* stopped by teardown if a test fails */
	char mnt[600];		/* a tmpfs mounted by the test: unmounted by teardown */
	bool tracefs_mounted;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	for (int i = 0; i < 3; i++)
		th_reap(c->spawned[i]);
	if (c->mnt[0])
		umount2(c->mnt, MNT_DETACH);
	if (c->tracefs_mounted)
		umount2(TRACEFS, MNT_DETACH);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static char *slurp_or_empty(const char *path)
{
	char *s = th_slurp(path);

	return s ? s : calloc(1, 1);
}

/* The stderr of a run says nothing about targets that are gone: no failed
 * attach, no "No such file or directory". */
static void assert_calm_end(const char *err_path)
{
	char *e = slurp_or_empty(err_path);

	if (strstr(e, "No such file or directory") || strstr(e, "cannot attach")) {
		print_error("the end of the run complained about a target that is gone:\n%s\n", e);
		free(e);
		fail();
	}
	free(e);
}

/* Starts workload argv with its stdout on a pipe and waits for "ready". */
static pid_t spawn_ready(char *const argv[], FILE **out)
{
	char buf[64];
	int fd;
	pid_t pid = th_spawn(argv, &fd, NULL);

	*out = fdopen(fd, "r");
	assert_non_null(*out);
	assert_non_null(fgets(buf, sizeof(buf), *out));
	assert_string_equal(buf, "ready\n");
	return pid;
}

struct bpf_ids {
	char kind[8];	/* prog, map, link */
	unsigned int id[MAX_IDS];
	size_t n;
};

/* The BPF objects process pid holds, from the fdinfo of its descriptors. */
static void bpf_ids_of(pid_t pid, struct bpf_ids ids[3])
{
	static const char *const kinds[3] = { "prog", "map", "link" };
	char path[320], buf[4096];
	struct dirent *d;
	DIR *dir;

	for (int k = 0; k < 3; k++) {
		snprintf(ids[k].kind, sizeof(ids[k].kind), "%s", kinds[k]);
		ids[k].n = 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, d->d_name);
		if (proc__read_small(path, buf, sizeof(buf)) < 0)
			continue;
		for (int k = 0; k < 3; k++) {
			char key[16];
			const char *v;

			snprintf(key, sizeof(key), "%s_id:", kinds[k]);
			v = strstr(buf, key);
			if (v && ids[k].n < MAX_IDS)
				ids[k].id[ids[k].n++] = (unsigned int)strtoul(v + strlen(key), NULL, 10);
		}
	}
	closedir(dir);
}

/* bpftool still finds the object. */
static bool bpf_object_exists(const char *kind, unsigned int id)
{
	char ids[16];
	char *argv[] = { "bpftool", (char *)kind, "show", "id", ids, NULL };
	int status;

	snprintf(ids, sizeof(ids), "%u", id);
	status = th_run_to(argv, "/dev/null", "/dev/null");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* tracefs mounted (a fresh machine may not have it): its uprobe_events. */
static char *uprobe_events(struct ctx *c)
{
	char path[] = TRACEFS "/uprobe_events";

	if (access(path, F_OK)) {
		assert_int_equal(mount("tracefs", TRACEFS, "tracefs", 0, NULL), 0);
		c->tracefs_mounted = true;
	}
	return slurp_or_empty(path);
}

/*
 * SIGKILL of the recorder, with the CUDA uprobes attached (uprobe_multi
 * links, or perf-event uprobes with --legacy-uprobes): the recording reads
 * back, truncated; every BPF program, map and link it held is gone (asked
 * of bpftool by id), no uprobe event of it is in tracefs, and the target
 * runs on.
 */
static void kill_recorder(struct ctx *c, bool legacy)
{
	char ready[512], pidstr[32], count[512], mark[64];
	struct bpf_ids ids[3];
	char *events, *after;
	bool left;
	pid_t w, t;
	json_t *r;
	int status;

	snprintf(ready, sizeof(ready), "%s/ready%d", c->f.dir, legacy);
	snprintf(count, sizeof(count), "%s/count", c->f.dir);
	events = uprobe_events(c);
	{
		char *argv[] = { LAUNCH_RATE, "60", "20000", count, NULL };

		w = c->spawned[0] = th_spawn(argv, NULL, NULL);
	}
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready,
				 legacy ? "--legacy-uprobes" : "-q", NULL };

		t = c->spawned[1] = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 30));
	usleep(1500 * 1000);	/* a chunk or more written */
	bpf_ids_of(t, ids);
	assert_true(ids[0].n > 0 && ids[1].n > 0 && ids[2].n > 0);
	kill(t, SIGKILL);
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[1] = 0;
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* Released when the last reference goes: at once, or after an RCU
	 * grace period or two. */
	for (int tries = 0; tries < 50; tries++) {
		left = false;
		for (int k = 0; k < 3; k++)
			for (size_t i = 0; i < ids[k].n && !left; i++)
				left = bpf_object_exists(ids[k].kind, ids[k].id[i]);
		if (!left)
			break;
		usleep(100 * 1000);
	}
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < ids[k].n; i++)
			if (bpf_object_exists(ids[k].kind, ids[k].id[i])) {
				print_error("BPF %s %u of the killed recorder is still there\n", ids[k].kind, ids[k].id[i]);
				fail();
			}
	after = uprobe_events(c);
	snprintf(mark, sizeof(mark), "libbpf_%d_", t);
	assert_null(strstr(after, mark));
	assert_string_equal(after, events);
	free(events);
	free(after);
	/* The target runs on, not stopped. */
	{
		char state = 0;
		__u32 ppid;

		assert_int_equal(proc__stat((__u32)w, &ppid, &state), 0);
		assert_true(state == 'R' || state == 'S');
	}
	r = th_report(c->f.isr);
	assert_true(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	assert_true(th_count(r, "cuLaunchKernel") > 0);
	json_decref(r);
	th_reap(w);
	c->spawned[0] = 0;
}

static void test_sigkill_leaves_nothing(void **state)
{
	kill_recorder(*state, false);
}

static void test_sigkill_leaves_nothing_legacy_uprobes(void **state)
{
	kill_recorder(*state, true);
}

/* pid blocked in sigwait (rt_sigtimedwait), within timeout_s. */
static bool wait_in_sigwait(pid_t pid, double timeout_s)
{
	char path[64], buf[256];
	double end = th_now() + timeout_s;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	while (th_now() < end) {
		if (proc__read_small(path, buf, sizeof(buf)) > 0 && atoi(buf) == SYS_rt_sigtimedwait)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* Stops the recorder t (it must exit 0), lets the faultcount workload w
 * go on to print its own count (reading it from out, closed) and returns
 * that count. */
static long long stop_and_count(struct ctx *c, pid_t t, pid_t w, FILE *out)
{
	long long counted = 0;
	char line[64];
	int status;

	kill(t, SIGINT);
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[1] = 0;
	th_expect_exit(status, 0, c->f.err);
	kill(w, SIGUSR1);
	assert_non_null(fgets(line, sizeof(line), out));
	fclose(out);
	assert_int_equal(sscanf(line, "faults %lld", &counted), 1);
	return counted;
}

#define FLOOD_S "12"
#define STOP_S 10

/*
 * The defaults on a thread that faults as fast as it can for 4 s: tracing
 * every fault would cost it 30-60% of its time, so the overhead budget
 * samples page-fault tracing (the recorder says so), and the analysis
 * extrapolates the thread's faults from its time on a CPU inside the
 * windows to within -25%/+35% of what the workload counted itself
 * (getrusage). The tolerance: the fault's cost, measured at the start,
 * is taken out of up to half of the thread's time in the windows, and a
 * loaded host measures it high, which raises the estimate (+5% to +14%
 * alone on the 2-CPU VM, +21% beside other tests; 1 s runs of a pure
 * faulter: -20% to +19%).
 */
/* Runs argv (a faultcount), attached with -p and the default budget,
 * until it has worked; returns the faults it counted and its pid in *pid. */
static long long record_faultcount(struct ctx *c, char **argv, pid_t *pid)
{
	char ready[512], pidstr[32];
	long long counted;
	FILE *out;
	pid_t w, t;
	int status;

	w = c->spawned[0] = spawn_ready(argv, &out);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	{
		char *targv[] = { TRACER, "record", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready, NULL };

		t = c->spawned[1] = th_spawn(targv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 30));
	kill(w, SIGUSR1);
	assert_true(wait_in_sigwait(w, 60));
	counted = stop_and_count(c, t, w, out);
	assert_int_equal(waitpid(w, &status, 0), w);
	c->spawned[0] = 0;
	*pid = w;
	return counted;
}

static void test_faults_sampled_within_the_budget(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { WORKLOAD, "faultcount", "4", "4096", NULL };
	long long counted;
	json_t *r, *th, *sm;
	double est = -1;
	pid_t w;
	size_t i;
	char *e;

	counted = record_faultcount(c, argv, &w);
	e = slurp_or_empty(c->f.err);
	assert_non_null(strstr(e, "page-fault tracing cost more than the 1% overhead budget"));
	free(e);
	r = th_report(c->f.isr);
	sm = json_object_get(json_object_get(r, "recording"), "sampling");
	assert_true(json_is_true(json_object_get(sm, "faults_sampled")));
	assert_true(th_num(sm, "faults_coverage") < 0.9);
	json_array_foreach(json_object_get(r, "threads"), i, th)
		if (th_num(th, "tid") == w) {
			assert_true(json_is_true(json_object_get(th, "faults_estimated")));
			est = th_num(th, "minor_faults") + th_num(th, "major_faults");
		}
	print_message("faults: %lld counted by the workload, %.0f estimated (%+.1f%%), traced %.1f%% of the time in "
		      "%g windows\n", counted, est, 100 * (est / (double)counted - 1), 100 * th_num(sm, "faults_coverage"),
		      th_num(sm, "fault_windows"));
	assert_true(counted > 0 && est > 0.75 * (double)counted && est < 1.35 * (double)counted);
	json_decref(r);
	/* the Markdown says so, and marks the thread's counts */
	{
		char md[600], *text;
		char *argv2[] = { TRACER, "analyze", c->f.isr, "-o", md, NULL };

		snprintf(md, sizeof(md), "%s/report.md", c->f.dir);
		th_expect_exit(th_run(argv2, c->f.err), 0, c->f.err);
		text = th_slurp(md);
		assert_non_null(text);
		assert_non_null(strstr(text, "page-fault tracing would have cost more than the 1% overhead budget"));
		assert_non_null(strstr(text, "| ≈"));
		free(text);
	}
}

/*
 * A thread that faults in bursts of 50 ms every 100 ms for 8 s, asleep between:
 * the budget charges it for its share of time on a CPU since it was first
 * charged, so what tracing its faults cost it stays within the budget as a
 * share of its own time on a CPU (the Markdown's "Tracing cost" line), not
 * of the wall clock. Charged for its share of each 20 ms interval (on a
 * CPU all through a burst), it was charged about its cost, not twice that:
 * the account said "within the 1% budget" for about 2% of its time on a CPU.
 * So: the cost as a share of its time on a CPU is what the budget charged
 * as a share of the time traced, give or take the share it learns as the
 * recording goes (its first window is charged while the share is still
 * that of its first bursts): 1.24 and 1.26 times seen, quiet and beside a
 * busy loop per CPU; 1.47 and 1.62 when charged for its share of each
 * interval. At most 1.4 times, the share at least a quarter, as the
 * budget counts it.
 */
static void test_fault_budget_for_a_bursty_thread(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { WORKLOAD, "faultcount", "8", "4096", "0.5", NULL };
	json_t *r, *sp;
	double cost, oncpu, allowed, traced, charged, base;
	pid_t w;

	assert_true(record_faultcount(c, argv, &w) > 0);
	r = th_report(c->f.isr);
	sp = json_object_get(json_object_get(json_object_get(r, "recording"), "overhead"), "spent");
	assert_true(json_is_object(sp));
	assert_int_equal((long long)th_num(sp, "tid"), w);
	cost = th_num(json_object_get(json_object_get(sp, "by_kind"), "page_faults"), "seconds");
	oncpu = th_num(sp, "on_cpu_s");
	allowed = th_num(sp, "allowed_s");
	traced = th_num(sp, "traced_s");
	charged = th_num(sp, "faults_budget_spent_s");
	print_message("bursty faulter: faults cost %.1f ms, %.2f%% of its %.3f s on a CPU in %.3f s; the page-fault "
		      "budget charged %.1f ms of %.1f ms\n", 1e3 * cost, 100 * cost / oncpu, oncpu, traced, 1e3 * charged,
		      1e3 * allowed);
	assert_true(oncpu > 0.5 && oncpu < 0.8 * traced);
	assert_true(charged > 0);
	/* a thread on a CPU less than a quarter of the time counts a quarter
	 * (docs/overhead.md): a host loaded enough held this one to 12.6% */
	base = oncpu > 0.25 * traced ? oncpu : 0.25 * traced;
	assert_true(cost / base <= 1.4 * charged / traced);
	json_decref(r);
}

/*
 * A 1 MiB ring buffer and the recorder stopped (SIGSTOP) for 10 s while a
 * thread faults as fast as it can: every fault the workload counted itself
 * (getrusage) is in the recording or in its drop count, exactly, and the
 * drops are reported with the option that avoids them. --budget off: every
 * fault traced (the budget would sample a flood like this one).
 */
static void test_stopped_recorder_counts_every_fault(void **state)
{
	struct ctx *c = *state;
	char ready[512], pidstr[32], err[512];
	char *argv[] = { WORKLOAD, "faultcount", FLOOD_S, "4096", NULL };
	struct recording *rec;
	long long counted = 0, recorded = 0;
	FILE *out;
	pid_t w, t;
	int status;
	char *e;

	w = c->spawned[0] = spawn_ready(argv, &out);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	{
		char *targv[] = { TRACER, "record", "-q", "--budget", "off", "--ringbuf-size", "1", "-o", c->f.isr,
				  "-p", pidstr, "--ready-file", ready, NULL };

		t = c->spawned[1] = th_spawn(targv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 30));
	kill(w, SIGUSR1);
	usleep(500 * 1000);
	kill(t, SIGSTOP);
	sleep(STOP_S);
	kill(t, SIGCONT);
	/* The flood is over once the workload waits for its signal again. */
	assert_true(wait_in_sigwait(w, 60));
	usleep(200 * 1000);
	counted = stop_and_count(c, t, w, out);
	assert_int_equal(recording__load(c->f.isr, &rec, err, sizeof(err)), 0);
	for (size_t i = 0; i < rec->event_count; i++)
		recorded += rec->events[i]->type == ISR_EV_PAGE_FAULT && rec->events[i]->pid == (__u32)w;
	print_message("faults: %lld counted by the workload, %lld recorded, %llu dropped\n", counted, recorded,
		      (unsigned long long)rec->drops[ISR_SRC_FAULTS]);
	assert_true(rec->drops[ISR_SRC_FAULTS] > 0);
	assert_true(recorded > 0);
	assert_int_equal(recorded + (long long)rec->drops[ISR_SRC_FAULTS], counted);
	recording__free(rec);
	e = slurp_or_empty(c->f.err);
	assert_non_null(strstr(e, "events were dropped because the ring buffer was full; consider increasing "
				  "--ringbuf-size (now 1 MiB)"));
	free(e);
	{
		json_t *r = th_report(c->f.isr);

		assert_true(th_num(json_object_get(json_object_get(r, "recording"), "drops"), "faults") > 0);
		json_decref(r);
	}
	assert_int_equal(waitpid(w, &status, 0), w);
	c->spawned[0] = 0;
}

/* A tmpfs of size_mib MiB at c->mnt. */
static void small_fs(struct ctx *c, const char *size)
{
	char opt[32];

	snprintf(c->mnt, sizeof(c->mnt), "%s/small", c->f.dir);
	assert_int_equal(mkdir(c->mnt, 0755), 0);
	snprintf(opt, sizeof(opt), "size=%s", size);
	if (mount("tmpfs", c->mnt, "tmpfs", 0, opt)) {
		print_error("mount tmpfs on %s: %s (the test needs root)\n", c->mnt, strerror(errno));
		c->mnt[0] = '\0';
		fail();
	}
}

/* The tracer stopped writing for reason (its message says so) and exited
 * 1, its command running on, untraced, to its end (marker says "done"). */
static void expect_command_ran_on(const struct ctx *c, int status, const char *reason, const char *marker)
{
	char *msg;

	th_expect_exit(status, 1, c->f.err);
	msg = slurp_or_empty(c->f.err);
	assert_non_null(strstr(msg, reason));
	assert_non_null(strstr(msg, "keeps running, untraced"));
	assert_non_null(strstr(msg, "exited with status 0"));
	free(msg);
	msg = th_slurp(marker);
	assert_non_null(msg);	/* the job ran to its end */
	assert_string_equal(msg, "done\n");
	free(msg);
}

/*
 * The disk fills up under -- CMD: the recording stops, the command is not
 * signalled but runs to its end (it writes a marker after the fault flood),
 * the tracer says so, waits for it and exits 1; the file reads back.
 */
static void test_disk_full_command_survives(void **state)
{
	struct ctx *c = *state;
	char out[700], marker[600], script[1400], copy[600];
	json_t *r;
	int status;

	small_fs(c, "1m");
	snprintf(out, sizeof(out), "%s/rec.isr", c->mnt);
	snprintf(marker, sizeof(marker), "%s/job-finished", c->f.dir);
	snprintf(script, sizeof(script), "%s anon 60000 && sleep 1 && echo done > %s", WORKLOAD, marker);
	{
		char *argv[] = { TRACER, "record", "-q", "--budget", "off", "--compress-level", "0", "-o", out, "--",
				 "sh", "-c", script,
				 NULL };

		status = th_run(argv, c->f.err);
	}
	expect_command_ran_on(c, status, "No space left on device", marker);
	snprintf(copy, sizeof(copy), "%s/copy.isr", c->f.dir);
	{
		char *cp[] = { "cp", out, copy, NULL };

		assert_int_equal(th_run(cp, NULL), 0);
	}
	r = th_report(copy);
	assert_true(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	json_decref(r);
}

/* A file size limit (ulimit -f) is a full disk, not a kill (SIGXFSZ): the
 * recording stops at the limit and reads up to its last chunk, the tracer
 * says what happened and what to do and exits 1, the command runs on to its
 * end. */
static void test_file_size_limit_is_a_full_disk(void **state)
{
	struct ctx *c = *state;
	char marker[600], script[1400], cmd[2400], *msg;
	char *argv[] = { "sh", "-c", cmd, NULL };
	struct stat st;
	json_t *r;

	snprintf(marker, sizeof(marker), "%s/job-finished", c->f.dir);
	snprintf(script, sizeof(script), "%s anon 60000 && sleep 1 && echo done > %s", WORKLOAD, marker);
	/* 256 blocks of 512 bytes */
	snprintf(cmd, sizeof(cmd), "ulimit -f 256 && exec %s record -q --budget off --compress-level 0 -o %s -- sh -c '%s'", TRACER,
		 c->f.isr, script);
	expect_command_ran_on(c, th_run(argv, c->f.err), "File too large", marker);
	msg = slurp_or_empty(c->f.err);
	assert_non_null(strstr(msg, "ulimit -f"));
	free(msg);
	assert_int_equal(stat(c->f.isr, &st), 0);
	assert_true(st.st_size <= 256 * 512);
	r = th_report(c->f.isr);
	assert_true(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	json_decref(r);
}

/* SIGUSR1 writes a flight-recorder window; to a plain recording it means
 * nothing: the recording goes on to its end, whole. */
static void test_sigusr1_ignored_by_a_recording(void **state)
{
	struct ctx *c = *state;
	char ready[600];
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--ready-file", ready, "--", WORKLOAD, "run", "2",
			 NULL };
	int status;
	json_t *r;
	pid_t t;

	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	t = c->spawned[0] = th_spawn(argv, NULL, c->f.err);
	assert_true(th_wait_file(ready, 30));
	for (int i = 0; i < 5; i++) {
		kill(t, SIGUSR1);
		usleep(100000);
	}
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[0] = 0;
	th_expect_exit(status, 0, c->f.err);
	r = th_report(c->f.isr);
	assert_false(json_is_true(json_object_get(json_object_get(r, "recording"), "truncated")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "recording"), "stop_reason")),
			    "targets_exited");
	assert_non_null(th_thread(r, "runner"));
	json_decref(r);
}

/* The disk fills up under -p: the tracer stops and exits 1, the target
 * runs on untouched (neither stopped nor killed). */
static void test_disk_full_attached_target_survives(void **state)
{
	struct ctx *c = *state;
	char out[700], pidstr[32];
	char *argv[] = { WORKLOAD, "--wait-signal", "faultloop", "60", "256", "1", NULL };
	char state_c = 0;
	FILE *wout;
	__u32 ppid;
	pid_t w;
	int status;
	char *msg;

	small_fs(c, "1m");
	snprintf(out, sizeof(out), "%s/rec.isr", c->mnt);
	w = c->spawned[0] = spawn_ready(argv, &wout);
	kill(w, SIGUSR1);
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	{
		char *targv[] = { TRACER, "record", "-q", "--budget", "off", "--compress-level", "0", "-o", out, "-p",
				  pidstr, NULL };

		status = th_run(targv, c->f.err);
	}
	th_expect_exit(status, 1, c->f.err);
	msg = slurp_or_empty(c->f.err);
	assert_non_null(strstr(msg, "No space left on device"));
	free(msg);
	assert_int_equal(proc__stat((__u32)w, &ppid, &state_c), 0);
	assert_true(state_c == 'R' || state_c == 'S');
	assert_int_equal(waitpid(w, &status, WNOHANG), 0);	/* still running */
	fclose(wout);
}

/*
 * Two launch-bound CUDA processes under the overhead budget (which switches
 * their hot-path probes off and on), one of them killed and left a zombie
 * while the other goes on: the recording goes on and ends cleanly, and
 * nothing is said about the dead one (neither the budget switching its
 * probes on again nor anything else).
 */
static void test_target_killed(void **state)
{
	struct ctx *c = *state;
	char ready[512], pids[64], count[2][512];
	json_t *r;
	pid_t w[2], t;
	int status;

	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	for (int i = 0; i < 2; i++) {
		char *argv[] = { LAUNCH_RATE, "60", "100000", count[i], NULL };

		snprintf(count[i], sizeof(count[i]), "%s/count%d", c->f.dir, i);
		w[i] = c->spawned[i] = th_spawn(argv, NULL, NULL);
	}
	snprintf(pids, sizeof(pids), "%d,%d", w[0], w[1]);
	{
		char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pids, "--ready-file", ready, NULL };

		t = c->spawned[2] = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 30));
	sleep(1);
	kill(w[0], SIGKILL);	/* not reaped: a zombie until the end */
	sleep(2);
	kill(t, SIGINT);
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[2] = 0;
	th_expect_exit(status, 0, c->f.err);
	assert_calm_end(c->f.err);
	r = th_report(c->f.isr);
	assert_true(json_is_false(json_object_get(json_object_get(r, "recording"), "truncated")));
	assert_true(th_count(r, "cuLaunchKernel") > 0);
	json_decref(r);
}

#define CUPTI_WORKLOAD "build/tests/workloads/cupti_workload"
#define BRIDGE "build/libinferscope_cupti.so"

/* A process that loaded the CUPTI bridge killed and left a zombie: the
 * recording ends by itself (its only target exited) and the last flush
 * asks no bridge of it, and says nothing about it. */
static void test_bridge_target_killed(void **state)
{
	struct ctx *c = *state;
	char ready[512], pidstr[32];
	char *argv[] = { CUPTI_WORKLOAD, "attach", BRIDGE, "1", "1", "0", NULL };
	FILE *out;
	pid_t w, t;
	int status;

	w = c->spawned[0] = spawn_ready(argv, &out);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	snprintf(pidstr, sizeof(pidstr), "%d", w);
	{
		char *targv[] = { TRACER, "record", "-q", "-o", c->f.isr, "-p", pidstr, "--ready-file", ready, NULL };

		t = c->spawned[1] = th_spawn(targv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 30));
	sleep(1);
	kill(w, SIGKILL);	/* not reaped: a zombie until the end */
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[1] = 0;
	th_expect_exit(status, 0, c->f.err);
	assert_calm_end(c->f.err);
	fclose(out);
}

#define CHILDREN 1000

/* 1000 children of a launched command alive at once: every fork is
 * recorded and followed (none dropped), each exit too, and the run ends
 * normally with the command. */
static void test_thousand_children(void **state)
{
	struct ctx *c = *state;
	char n[16], err[512];
	char *argv[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", WORKLOAD, "forks", n, NULL };
	struct recording *rec;
	size_t forks = 0, followed = 0, exits = 0;
	pid_t launched = 0;

	snprintf(n, sizeof(n), "%d", CHILDREN);
	th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	assert_int_equal(recording__load(c->f.isr, &rec, err, sizeof(err)), 0);
	for (size_t i = 0; i < rec->process_count; i++)
		if (rec->processes[i].origin == ISR_ORIGIN_LAUNCHED)
			launched = (pid_t)rec->processes[i].pid;
	assert_true(launched > 0);
	for (size_t i = 0; i < rec->event_count; i++) {
		const struct isr_ev_hdr *h = rec->events[i];

		if (h->type == ISR_EV_PROC_FORK && h->pid == (__u32)launched &&
		    !(((const struct isr_ev_proc_fork *)h)->flags & ISR_FORK_THREAD)) {
			forks++;
			followed += !!(((const struct isr_ev_proc_fork *)h)->flags & ISR_FORK_FOLLOWED);
		}
		exits += h->type == ISR_EV_PROC_EXIT && h->pid != (__u32)launched &&
			 (((const struct isr_ev_proc_exit *)h)->flags & ISR_EXIT_GROUP_DEAD);
	}
	print_message("%zu forks, %zu followed, %zu exits of children\n", forks, followed, exits);
	assert_int_equal(forks, CHILDREN);
	assert_int_equal(followed, CHILDREN);
	assert_int_equal(exits, CHILDREN);
	assert_int_equal(rec->drops[ISR_SRC_PROC], 0);
	assert_int_equal(rec->drops[ISR_SRC_TARGETS], 0);
	assert_int_equal(rec->stop_reason, ISR_STOP_TARGETS_EXITED);
	recording__free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sigkill_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_leaves_nothing_legacy_uprobes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stopped_recorder_counts_every_fault, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_budget_for_a_bursty_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faults_sampled_within_the_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full_command_survives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full_attached_target_survives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_size_limit_is_a_full_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigusr1_ignored_by_a_recording, setup, teardown),
		cmocka_unit_test_setup_teardown(test_target_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bridge_target_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thousand_children, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
