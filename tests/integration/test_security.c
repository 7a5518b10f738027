// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer runs as root: the attacks a local or container user can try
 * on it, each reproduced. Links planted where it writes (the recording,
 * the ready file, a report, bench's files); who can read what it writes;
 * who the launched command runs as under sudo, and that it inherits
 * nothing of the tracer's; and a container (its own mount namespace after
 * pivot_root, an unprivileged uid, a fake GPU device node) whose user
 * plants links where the CUPTI bridge is copied, makes its /tmp a link to
 * the host, or replaces the copy before it is loaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
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
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "cli.h"
#include "harness.h"
#include "bridge.h"
#include "proc.h"

#define NOBODY 65534
#define BRIDGE "build/libinferscope_cupti.so"
#define OTHER_LIB "build/tests/workloads/libinject_probe.so"

struct ctx {
	struct th_files f;
	char victim[PATH_MAX + 16];	/* a file that must never change */
	pid_t spawned[2];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char abs[PATH_MAX];
	FILE *f;

	th_files_init(&c->f);
	/* Others may write here, as in /tmp. */
	chmod(c->f.dir, 01777);
	assert_non_null(realpath(c->f.dir, abs));
	snprintf(c->victim, sizeof(c->victim), "%s/victim", abs);
	f = fopen(c->victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	for (int i = 0; i < 2; i++)
		th_reap(c->spawned[i]);
	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static void assert_intact(const char *path)
{
	char *s = th_slurp(path);

	assert_non_null(s);
	assert_string_equal(s, "precious\n");
	free(s);
}

static void assert_said(const char *err_path, const char *needle)
{
	char *e = th_slurp(err_path);

	if (!e || !strstr(e, needle)) {
		print_error("stderr lacks \"%s\":\n%s\n", needle, e ? e : "");
		free(e);
		fail();
	}
	free(e);
}

/* Runs fn(arg) in a child as uid/gid NOBODY: its exit status. */
static int as_nobody(int (*fn)(const void *arg), const void *arg)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(99);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int plant_symlink(const void *arg)
{
	const char *const *p = arg;

	return symlink(p[0], p[1]) ? 1 : 0;
}

/* Another user plants name -> victim in the shared directory. */
static void plant(struct ctx *c, const char *name, char *path, size_t len)
{
	const char *args[2] = { c->victim, path };

	snprintf(path, len, "%s/%s", c->f.dir, name);
	assert_int_equal(as_nobody(plant_symlink, args), 0);
}

/* -o, --ready-file and analyze -o on a planted link: refused, the file it
 * points at untouched, and a refused start leaves no recording. */
static void test_links_where_outputs_go(void **state)
{
	struct ctx *c = *state;
	char link[700], ready[700], rec[700], rep[700];

	plant(c, "rec.isr", link, sizeof(link));
	{
		char *argv[] = { TRACER, "record", "-q", "-d", "0.5", "-o", link, "--", WORKLOAD, "sleep", NULL };

		th_expect_exit(th_run(argv, c->f.err), 1, c->f.err);
	}
	assert_said(c->f.err, "is a symbolic link, which inferscope-bpf neither writes through nor replaces");
	assert_intact(c->victim);

	plant(c, "ready", ready, sizeof(ready));
	snprintf(rec, sizeof(rec), "%s/ok.isr", c->f.dir);
	{
		char *argv[] = { TRACER, "record", "-q", "-d", "0.5", "-o", rec, "--ready-file", ready, "--", WORKLOAD,
				 "sleep", NULL };

		th_expect_exit(th_run(argv, c->f.err), 1, c->f.err);
	}
	assert_said(c->f.err, "cannot create the ready file");
	assert_intact(c->victim);
	assert_int_equal(access(rec, F_OK), -1);	/* the start failed: nothing made */
	{
		char *argv[] = { TRACER, "record", "-q", "-d", "0.5", "-o", rec, "--", WORKLOAD, "sleep", NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	plant(c, "report.md", rep, sizeof(rep));
	{
		char *argv[] = { TRACER, "analyze", rec, "-o", rep, NULL };

		th_expect_exit(th_run(argv, c->f.err), 1, c->f.err);
	}
	assert_said(c->f.err, "is a symbolic link");
	assert_intact(c->victim);
}

static int hard_link(const void *arg)
{
	const char *const *p = arg;

	return link(p[0], p[1]) ? 1 : 0;
}

/* A hard link to a file of someone else's at the recording's name: the
 * name gets a new file, the linked file keeps its bytes. (Needs
 * fs.protected_hardlinks off for another user to make it; root makes it
 * here, the recorder cannot tell the difference.) */
static void test_hard_link_replaced(void **state)
{
	struct ctx *c = *state;
	char path[700];
	const char *args[2] = { c->victim, path };
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/rec.isr", c->f.dir);
	assert_int_equal(hard_link(args), 0);
	{
		char *argv[] = { TRACER, "record", "-q", "-d", "0.5", "-o", path, "--", WORKLOAD, "sleep", NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	assert_intact(c->victim);
	assert_int_equal(stat(c->victim, &a), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_true(a.st_ino != b.st_ino);
	json_decref(th_report(path));
}

/* bench in a shared directory with its old fixed names planted: it works
 * in a directory of its own, touches neither, and leaves nothing. */
static void test_bench_work_directory(void **state)
{
	struct ctx *c = *state;
	char isr[700], ready[700];
	char *argv[] = { TRACER, "bench", "-n", "sched_switch", "-r", "1", "-s", "0.2", "-t", c->f.dir, NULL };
	struct dirent *d;
	DIR *dir;

	plant(c, "bench.isr", isr, sizeof(isr));
	plant(c, "bench.ready", ready, sizeof(ready));
	th_expect_exit(th_run_to(argv, "/dev/null", c->f.err), 0, c->f.err);
	assert_intact(c->victim);
	dir = opendir(c->f.dir);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		assert_null(strstr(d->d_name, "inferscope-bench-"));
	closedir(dir);
}

static int can_read(const void *arg)
{
	int fd = open(arg, O_RDONLY);

	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

/* The recording and the report carry what /proc hides from other users:
 * 0600, unreadable for another user whatever the umask; --group lets
 * that group read them (0640). */
static void test_outputs_private(void **state)
{
	struct ctx *c = *state;
	char rec[700], rep[700], shared[700], shared_rep[700];
	mode_t old = umask(0);
	struct stat st;

	snprintf(rec, sizeof(rec), "%s/rec.isr", c->f.dir);
	snprintf(rep, sizeof(rep), "%s/report.json", c->f.dir);
	{
		char *argv[] = { TRACER, "record", "-q", "-d", "0.5", "-o", rec, "--", WORKLOAD, "sleep", NULL };
		char *an[] = { TRACER, "analyze", rec, "--format", "json", "-o", rep, NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
		th_expect_exit(th_run(an, c->f.err), 0, c->f.err);
	}
	umask(old);
	assert_int_equal(stat(rec, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(rep, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(as_nobody(can_read, rec), 1);
	assert_int_equal(as_nobody(can_read, rep), 1);

	snprintf(shared, sizeof(shared), "%s/shared.isr", c->f.dir);
	snprintf(shared_rep, sizeof(shared_rep), "%s/shared.md", c->f.dir);
	{
		char *argv[] = { TRACER, "record", "-q", "--group", "65534", "-d", "0.5", "-o", shared, "--", WORKLOAD,
				 "sleep", NULL };
		char *an[] = { TRACER, "analyze", shared, "--group", "65534", "-o", shared_rep, NULL };

		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
		th_expect_exit(th_run(an, c->f.err), 0, c->f.err);
	}
	assert_int_equal(stat(shared, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_gid, NOBODY);
	assert_int_equal(as_nobody(can_read, shared), 0);
	assert_int_equal(stat(shared_rep, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(as_nobody(can_read, shared_rep), 0);
}

/* What the launched command says about itself: ids, groups, environment,
 * and the files it holds open. */
#define WHOAMI "echo uid=$(id -u) gid=$(id -g) groups=$(id -G); echo HOME=$HOME USER=$USER; ls -l /proc/$$/fd/"

static char *run_whoami(struct ctx *c, char *const env[], const char *opt, const char *optarg)
{
	char out[700];
	char *argv[16];
	int n = 0, status;

	snprintf(out, sizeof(out), "%s/whoami.out", c->f.dir);
	argv[n++] = "env";
	for (int i = 0; env[i]; i++)
		argv[n++] = env[i];
	argv[n++] = TRACER;
	argv[n++] = "record";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = c->f.isr;
	if (opt)
		argv[n++] = (char *)opt;
	if (optarg)
		argv[n++] = (char *)optarg;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = WHOAMI;
	argv[n] = NULL;
	status = th_run_to(argv, out, c->f.err);
	th_expect_exit(status, 0, c->f.err);
	return th_slurp(out);
}

/* Under sudo the command runs as the user who ran sudo, with that user's
 * environment basics, and holds none of the tracer's descriptors (BPF
 * maps, the recording); --run-as-root keeps root; --user picks one. */
static void test_command_user_under_sudo(void **state)
{
	struct ctx *c = *state;
	char *sudo[] = { "SUDO_UID=65534", "SUDO_GID=65534", "SUDO_USER=nobody", NULL };
	char *none[] = { NULL };
	char *o;

	o = run_whoami(c, sudo, NULL, NULL);
	assert_non_null(o);
	assert_non_null(strstr(o, "uid=65534 gid=65534"));
	assert_non_null(strstr(o, "USER=nobody"));
	assert_null(strstr(o, "HOME=/root"));
	assert_null(strstr(o, "bpf"));		/* anon_inode:bpf-map, bpf-prog, bpf_link */
	assert_null(strstr(o, ".isr"));
	assert_null(strstr(o, "perf_event"));
	free(o);
	o = run_whoami(c, sudo, "--run-as-root", NULL);
	assert_non_null(o);
	assert_non_null(strstr(o, "uid=0 gid=0"));
	free(o);
	o = run_whoami(c, none, "--user", "daemon");
	assert_non_null(o);
	assert_non_null(strstr(o, "uid=1 gid=1"));
	free(o);
	o = run_whoami(c, none, "--user", "4242:4243");
	assert_non_null(o);
	assert_non_null(strstr(o, "uid=4242 gid=4243 groups=4243\n"));
	free(o);
	/* Without sudo and without --user: as the tracer runs. */
	o = run_whoami(c, none, NULL, NULL);
	assert_non_null(o);
	assert_non_null(strstr(o, "uid=0 gid=0"));
	free(o);
}

/*
 * sudo as it runs: the tracer's parent has the invoking user's real uid and
 * groups (4242 here, in no /etc/group entry: a directory-service group).
 * The command gets the groups of that session.
 */
static void test_command_groups_of_sudo_session(void **state)
{
	struct ctx *c = *state;
	char out[700];
	int status;
	pid_t sudo;

	snprintf(out, sizeof(out), "%s/groups.out", c->f.dir);
	sudo = fork();
	assert_true(sudo >= 0);
	if (sudo == 0) {
		gid_t groups[] = { 4242, NOBODY };
		pid_t tracer;

		if (setgroups(2, groups) || setresuid(NOBODY, 0, 0))
			_exit(90);
		tracer = fork();
		if (tracer == 0) {
			gid_t root = 0;
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0 || dup2(fd, 1) < 0 || setresuid(0, 0, 0) || setgroups(1, &root))
				_exit(91);
			fd = open(c->f.err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(fd, 2);
			setenv("SUDO_UID", "65534", 1);
			setenv("SUDO_GID", "65534", 1);
			setenv("SUDO_USER", "nobody", 1);
			execl(TRACER, TRACER, "record", "-q", "-o", c->f.isr, "--", "id", "-G", (char *)NULL);
			_exit(92);
		}
		_exit(tracer > 0 && waitpid(tracer, &status, 0) == tracer && WIFEXITED(status) ?
			      WEXITSTATUS(status) : 93);
	}
	assert_int_equal(waitpid(sudo, &status, 0), sudo);
	th_expect_exit(status, 0, c->f.err);
	{
		char *o = th_slurp(out);

		assert_non_null(o);
		assert_non_null(strstr(o, "4242"));
		free(o);
	}
}

/* A user that is not there, or conflicting options: said before anything
 * starts. */
static void test_command_user_refusals(void **state)
{
	struct ctx *c = *state;
	char *bad[] = { TRACER, "record", "-q", "-o", c->f.isr, "--user", "no-such-user-here", "--", "true", NULL };
	char *both[] = { TRACER, "record", "-q", "-o", c->f.isr, "--user", "daemon", "--run-as-root", "--", "true",
			 NULL };
	char *nocmd[] = { TRACER, "record", "-q", "-o", c->f.isr, "--user", "daemon", "-p", "1", NULL };
	char *sudo_bad[] = { "env", "SUDO_UID=x", TRACER, "record", "-q", "-o", c->f.isr, "--", "true", NULL };

	th_expect_exit(th_run(bad, c->f.err), 1, c->f.err);
	assert_said(c->f.err, "no user 'no-such-user-here' in /etc/passwd");
	th_expect_exit(th_run(both, c->f.err), EXIT_USAGE, c->f.err);
	assert_said(c->f.err, "choose one");
	th_expect_exit(th_run(nocmd, c->f.err), EXIT_USAGE, c->f.err);
	assert_said(c->f.err, "there is none");
	th_expect_exit(th_run(sudo_bad, c->f.err), 1, c->f.err);
	assert_said(c->f.err, "do not name a user");
}

/* The bridge a command under sudo is handed, where that user cannot read
 * it: said before the command starts. */
static void test_command_user_cannot_read_bridge(void **state)
{
	struct ctx *c = *state;
	char dir[700], bridge[800];

	snprintf(dir, sizeof(dir), "%s/private", c->f.dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(bridge, sizeof(bridge), "%s/" BRIDGE_NAME, dir);
	{
		char *cp[] = { "cp", BRIDGE, bridge, NULL };
		char *argv[] = { "env", "SUDO_UID=65534", "SUDO_GID=65534", "SUDO_USER=nobody", TRACER, "record", "-q",
				 "--gpu", "--cupti-bridge", bridge, "-o", c->f.isr, "--", "true", NULL };

		assert_int_equal(th_run(cp, NULL), 0);
		th_expect_exit(th_run(argv, c->f.err), 0, c->f.err);
	}
	assert_said(c->f.err, "runs as nobody (uid 65534) and cannot read CUDA_INJECTION64_PATH=");
}

/* ---- the container ------------------------------------------------------ */

enum container_tmp {
	TMP_STICKY,		/* /tmp 1777 root's, as usual */
	TMP_LINK_TO_HOST,	/* /tmp a link to an absolute path: a host directory seen from outside */
	TMP_USERS,		/* /tmp owned by the container's user */
};

struct container {
	char root[PATH_MAX];	/* the host directory it is mounted on (empty on the host) */
	char hostdir[PATH_MAX];	/* TMP_LINK_TO_HOST: where /tmp points */
	pid_t pid;
	FILE *out;
};

static void die_child(const char *what)
{
	fprintf(stderr, "container: %s: %s\n", what, strerror(errno));
	_exit(120);
}

static void child_path(char *buf, size_t len, const char *root, const char *rel)
{
	snprintf(buf, len, "%s/%s", root, rel);
}

/*
 * In the child: a mount namespace, a tmpfs root with the host's /usr (read
 * only), the test workloads at /job, a fake /dev/nvidia0 (/dev/null's
 * numbers), /proc, and /tmp as kind says; pivot_root into it, uid and gid
 * NOBODY, the planted link where the old tracer copied the bridge, then the
 * CUDA workload that holds the "GPU" open and waits for a tracer.
 */
static void container_child(const struct container *k, enum container_tmp kind, const char *victim,
			    const char *work)
{
	char p[PATH_MAX + 64];

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die_child("unshare");
	if (mount("tmpfs", k->root, "tmpfs", 0, "mode=0755"))
		die_child("tmpfs");
	umask(0);
	static const char *const dirs[] = { "usr", "job", "dev", "proc", "old" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		child_path(p, sizeof(p), k->root, dirs[i]);
		if (mkdir(p, 0755))
			die_child(dirs[i]);
	}
	child_path(p, sizeof(p), k->root, "usr");
	if (mount("/usr", p, NULL, MS_BIND | MS_REC, NULL) ||
	    mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL))
		die_child("bind /usr");
	child_path(p, sizeof(p), k->root, "job");
	if (mount(work, p, NULL, MS_BIND | MS_REC, NULL))
		die_child("bind work");
	static const char *const links[][2] = { { "usr/lib", "lib" }, { "usr/lib64", "lib64" }, { "usr/bin", "bin" } };
	for (size_t i = 0; i < 3; i++) {
		child_path(p, sizeof(p), k->root, links[i][1]);
		if (symlink(links[i][0], p))
			die_child("symlink");
	}
	child_path(p, sizeof(p), k->root, "dev/nvidia0");
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)))
		die_child("mknod");
	child_path(p, sizeof(p), k->root, "proc");
	if (mount("proc", p, "proc", 0, NULL))
		die_child("proc");
	child_path(p, sizeof(p), k->root, "tmp");
	if (kind == TMP_LINK_TO_HOST) {
		if (symlink(k->hostdir, p))
			die_child("tmp link");
	} else if (mkdir(p, kind == TMP_STICKY ? 01777 : 0755) || (kind == TMP_USERS && chown(p, NOBODY, NOBODY))) {
		die_child("tmp");
	}
	if (chdir(k->root) || syscall(SYS_pivot_root, ".", "old") || chdir("/") || umount2("/old", MNT_DETACH) ||
	    rmdir("/old"))
		die_child("pivot_root");
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
		die_child("drop privileges");
	/* The attack on the old fixed path: a link to a host file. */
	if (kind == TMP_STICKY &&
	    (mkdir("/tmp/inferscope-bpf", 0777) || symlink(victim, "/tmp/inferscope-bpf/" BRIDGE_NAME)))
		die_child("plant");
	setenv("WL_GPU_DEVICE", "/dev/nvidia0", 1);
	execl("/job/workloads/cupti_workload", "cupti_workload", "attach", "-", "20", "5", "0", (char *)NULL);
	die_child("exec");
}

static void container_start(struct ctx *c, struct container *k, enum container_tmp kind)
{
	char work[PATH_MAX], buf[64];
	int pfd[2];

	snprintf(k->root, sizeof(k->root), "%s/container", c->f.dir);
	assert_int_equal(mkdir(k->root, 0755), 0);
	snprintf(k->hostdir, sizeof(k->hostdir), "%s/hostdir", c->f.dir);
	assert_int_equal(mkdir(k->hostdir, 0777), 0);
	{
		char tmp[PATH_MAX];

		assert_non_null(realpath(k->hostdir, tmp));
		snprintf(k->hostdir, sizeof(k->hostdir), "%s", tmp);
	}
	assert_non_null(realpath("build/tests", work));
	assert_int_equal(pipe(pfd), 0);
	k->pid = c->spawned[0] = fork();
	assert_true(k->pid >= 0);
	if (k->pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		container_child(k, kind, c->victim, work);
	}
	close(pfd[1]);
	k->out = fdopen(pfd[0], "r");
	assert_non_null(k->out);
	if (!fgets(buf, sizeof(buf), k->out)) {
		print_error("the container's workload did not start\n");
		fail();
	}
	assert_string_equal(buf, "ready\n");
}

/* The tracer with --gpu -p on the container's workload; returns its pid. */
static pid_t trace_container(struct ctx *c, const struct container *k, const char *ready, const char *duration)
{
	char pidstr[32], bridge[PATH_MAX];
	pid_t t;

	assert_non_null(realpath(BRIDGE, bridge));
	snprintf(pidstr, sizeof(pidstr), "%d", k->pid);
	{
		char *argv[] = { TRACER, "record", "-v", "--gpu", "-o", c->f.isr, "-p", pidstr, "--cupti-bridge", bridge,
				 "--ready-file", (char *)ready, duration ? "-d" : NULL, (char *)duration, NULL };

		t = c->spawned[1] = th_spawn(argv, NULL, c->f.err);
	}
	assert_true(th_wait_file(ready, 30));
	return t;
}

/* The copy of the bridge in the container's /tmp: one directory of root's,
 * 0755, holding the bridge 0644, root's. Its name in name. */
static void assert_copy_is_ours(const struct container *k, char *name, size_t len)
{
	char tmp[PATH_MAX + 64], file[2 * PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int found = 0;

	snprintf(tmp, sizeof(tmp), "/proc/%d/root/tmp", k->pid);
	dir = opendir(tmp);
	assert_non_null(dir);
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "inferscope-bpf-", 15))
			continue;
		found++;
		snprintf(name, len, "%s", d->d_name);
		snprintf(file, sizeof(file), "%s/%s", tmp, d->d_name);
		assert_int_equal(lstat(file, &st), 0);
		assert_true(S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0755);
		snprintf(file, sizeof(file), "%s/%s/%s", tmp, d->d_name, BRIDGE_NAME);
		assert_int_equal(lstat(file, &st), 0);
		assert_true(S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0644);
	}
	closedir(dir);
	assert_int_equal(found, 1);
}

/*
 * The reported attack: the container's user made /tmp/inferscope-bpf and a
 * link libinferscope_cupti.so -> a host file in it. The host file stays as
 * it was, the link too, and the bridge is loaded all the same from a
 * directory of the tracer's own: the workload goes through its whole GPU
 * cycle under the tracer.
 */
static void test_container_planted_link(void **state)
{
	struct ctx *c = *state;
	struct container k;
	char ready[700], buf[256], link[PATH_MAX], name[64];
	struct stat st;
	int status;
	pid_t t;

	container_start(c, &k, TMP_STICKY);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	t = trace_container(c, &k, ready, NULL);
	assert_intact(c->victim);
	snprintf(link, sizeof(link), "/proc/%d/root/tmp/inferscope-bpf/" BRIDGE_NAME, k.pid);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_copy_is_ours(&k, name, sizeof(name));
	assert_said(c->f.err, "CUPTI bridge loaded into the running process");
	kill(k.pid, SIGUSR1);
	assert_non_null(fgets(buf, sizeof(buf), k.out));	/* "enabled ..." */
	assert_non_null(fgets(buf, sizeof(buf), k.out));
	assert_string_equal(buf, "done\n");
	kill(t, SIGINT);
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[1] = 0;
	th_expect_exit(status, 0, c->f.err);
	assert_int_equal(waitpid(k.pid, &status, 0), k.pid);
	c->spawned[0] = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fclose(k.out);
	assert_intact(c->victim);
}

/* The container's /tmp is a link to an absolute path, which from the host
 * through /proc/PID/root names a host directory: nothing is written there,
 * the bridge is not loaded and the tracer says why. */
static void test_container_tmp_is_a_link(void **state)
{
	struct ctx *c = *state;
	struct container k;
	char ready[700];
	struct dirent *d;
	int status, entries = 0;
	DIR *dir;
	pid_t t;

	container_start(c, &k, TMP_LINK_TO_HOST);
	snprintf(ready, sizeof(ready), "%s/ready", c->f.dir);
	t = trace_container(c, &k, ready, "1");
	assert_int_equal(waitpid(t, &status, 0), t);
	c->spawned[1] = 0;
	th_expect_exit(status, 0, c->f.err);
	assert_said(c->f.err, "is a symbolic link or lies under one, which a root tracer does not follow");
	dir = opendir(k.hostdir);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		entries += d->d_name[0] != '.';
	closedir(dir);
	assert_int_equal(entries, 0);
	fclose(k.out);
}

static void die_swap(const char *what)
{
	fprintf(stderr, "swap: %s: %s\n", what, strerror(errno));
	_exit(1);
}

/* As the container's user, in its mount namespace: moves our directory
 * away and puts one of its own, with another library under the bridge's
 * name, in its place. */
static int swap_copy(pid_t pid, const char *name, const char *other_lib)
{
	char ns[64], from[128], to[128], file[160];
	int status, in, out, fd;
	char buf[65536];
	ssize_t n;
	pid_t p;

	in = open(other_lib, O_RDONLY);
	assert_true(in >= 0);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", pid);
		fd = open(ns, O_RDONLY);
		if (fd < 0 || setns(fd, CLONE_NEWNS) || chdir("/"))
			die_swap("setns");
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			die_swap("drop privileges");
		snprintf(from, sizeof(from), "/tmp/%s", name);
		snprintf(to, sizeof(to), "/tmp/%s.moved", name);
		if (rename(from, to) || mkdir(from, 0755))
			die_swap("rename");
		snprintf(file, sizeof(file), "%s/" BRIDGE_NAME, from);
		out = open(file, O_WRONLY | O_CREAT | O_EXCL, 0755);
		if (out < 0)
			die_swap("create");
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, n) != n)
				die_swap("write");
		close(out);
		_exit(0);
	}
	close(in);
	assert_int_equal(waitpid(p, &status, 0), p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * A container whose user owns /tmp can move the tracer's directory away
 * and put another library under the bridge's name before the target loads
 * it: the check made right before the injection refuses it, and the
 * process never maps it.
 */
static void test_container_copy_replaced(void **state)
{
	struct ctx *c = *state;
	struct bridge_placed placed;
	struct container k;
	char bridge[PATH_MAX], msg[1024], name[64];

	container_start(c, &k, TMP_USERS);
	assert_non_null(realpath(BRIDGE, bridge));
	if (bridge__place(k.pid, bridge, &placed, msg, sizeof(msg))) {
		print_error("bridge__place: %s\n", msg);
		fail();
	}
	assert_int_equal(strncmp(placed.path, "/tmp/inferscope-bpf-", 20), 0);
	assert_copy_is_ours(&k, name, sizeof(name));
	assert_int_equal(bridge__check_placed(k.pid, &placed, msg, sizeof(msg)), 0);
	assert_int_equal(swap_copy(k.pid, name, OTHER_LIB), 0);
	assert_int_equal(bridge__check_placed(k.pid, &placed, msg, sizeof(msg)), -ESTALE);
	assert_non_null(strstr(msg, "is no longer the CUPTI bridge inferscope-bpf checked or copied"));
	assert_false(proc_maps__has((__u32)k.pid, BRIDGE_NAME));
	fclose(k.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_links_where_outputs_go, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bench_work_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outputs_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_user_under_sudo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_groups_of_sudo_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_user_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_user_cannot_read_bridge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_planted_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_tmp_is_a_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_copy_replaced, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
