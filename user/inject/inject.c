// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlopen() in a running process through ptrace. The plan, and why each
 * step is taken, is in docs/injection.md; in short:
 *
 *  1. Pick one thread that is blocked in a system call from a short list of
 *     calls that the kernel restarts transparently after a ptrace stop and
 *     that glibc does not issue while holding its malloc or loader locks
 *     (read, poll, nanosleep, wait4, ...). Only that thread is stopped; the
 *     others keep running, so any lock they hold is released and dlopen in
 *     our thread can take it.
 *  2. PTRACE_SEIZE + PTRACE_INTERRUPT it. The interrupted call returns
 *     -ERESTART* into rax with orig_rax still naming it.
 *  3. Save the general registers, the XSAVE area and the signal mask; block
 *     every asynchronous signal in the thread so that none is delivered
 *     while the call runs (they stay pending and are delivered, in order,
 *     after the restore); write the path and a return address of 0 below
 *     the red zone; point rip at dlopen, with orig_rax = -1 so the kernel
 *     does not "restart" our call.
 *  4. Continue. dlopen returns to address 0 and faults: a SIGSEGV stop at
 *     rip 0 is the end of the call. A NULL handle runs dlerror() the same way.
 *  5. Put back registers (orig_rax included), XSAVE area, signal mask and
 *     stack bytes, then detach with the SIGSEGV suppressed. The kernel then
 *     finds orig_rax and -ERESTART* in the restored registers and restarts
 *     the interrupted call exactly as it would after any ptrace stop.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include "clock.h"
#include "elf_file.h"
#include "proc.h"
#include "inject.h"

#ifndef __x86_64__
#error "inject.c drives x86-64 registers"
#endif

#define RED_ZONE 128
/* Stack a thread must have left below its stack pointer (outside the main
 * thread's growable [stack]) for dlopen and the library's constructors. */
#define STACK_NEEDED (64 * 1024)
#define DEFAULT_THREAD_WAIT_MS 2000
#define DEFAULT_CALL_TIMEOUT_MS 30000
/* A thread in an interruptible sleep stops within microseconds of
 * PTRACE_INTERRUPT; this bounds the wait for one that does not. */
#define STOP_TIMEOUT_MS 2000
#define DLERROR_MAX 1024

/* From the kernel's include/linux/errno.h: never seen by user space, but
 * left in rax at a ptrace stop inside an interrupted system call. */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

struct target_syms {
	uint64_t dlopen;
	uint64_t dlerror;
	char lib[PATH_MAX];
};

struct thread_state {
	struct user_regs_struct regs;
	struct iovec xstate;
	unsigned int xstate_note;
	uint64_t sigmask;
	uint64_t stack_lo;	/* saved bytes [stack_lo, stack_lo + stack_len) */
	size_t stack_len;
	unsigned char *stack_saved;
};

/* The value after "key" in a /proc status text, or NULL. */
static const char *status_field(const char *status, const char *key)
{
	size_t klen = strlen(key);
	const char *p = status;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0) {
			p += klen;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static long status_long(const char *status, const char *key, long dflt)
{
	const char *v = status_field(status, key);

	return v ? strtol(v, NULL, 10) : dflt;
}

static uint64_t status_hex(const char *status, const char *key)
{
	const char *v = status_field(status, key);

	return v ? strtoull(v, NULL, 16) : 0;
}

static bool have_cap_sys_ptrace(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	return (data[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

/* pid is a child, grandchild, ... of the calling process. */
static bool is_descendant(pid_t pid)
{
	pid_t self = getpid();
	char path[64], buf[4096];

	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		if (proc__read_small(path, buf, sizeof(buf)) < 0)
			return false;
		pid = (pid_t)status_long(buf, "PPid:", 0);
		if (pid == self)
			return true;
	}
	return false;
}

/* Yama's kernel.yama.ptrace_scope; INFERSCOPE_PTRACE_SCOPE names another
 * file (tests). An absent file means Yama is not built in: no restriction. */
static int check_yama(pid_t pid, char *why, size_t whylen)
{
	const char *path = getenv("INFERSCOPE_PTRACE_SCOPE");
	char buf[32];
	int n, scope;

	if (!path)
		path = "/proc/sys/kernel/yama/ptrace_scope";
	n = proc__read_small(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return 0;
	if (n < 0) {
		snprintf(why, whylen, "cannot read %s: %s; check that /proc is mounted", path, strerror(-n));
		return n;
	}
	scope = atoi(buf);
	if (scope <= 0)
		return 0;
	if (scope >= 3) {
		snprintf(why, whylen,
			 "Yama forbids all ptrace on this host (%s is %d, which cannot be lowered until reboot): "
			 "start the job with the bridge instead (inferscope-bpf record -- CMD) or run with --no-inject",
			 path, scope);
		return -EPERM;
	}
	if (have_cap_sys_ptrace())
		return 0;
	if (scope == 1 && is_descendant(pid))
		return 0;
	snprintf(why, whylen,
		 "Yama restricts ptrace on this host (%s is %d: %s) and inferscope-bpf lacks CAP_SYS_PTRACE: "
		 "run it as root, or grant it CAP_SYS_PTRACE, or lower the scope with "
		 "'sysctl kernel.yama.ptrace_scope=%d'",
		 path, scope, scope == 1 ? "only a parent may trace its descendants" : "only CAP_SYS_PTRACE may trace",
		 scope == 1 ? 0 : 1);
	return -EPERM;
}

static int check_arch(pid_t pid, char *why, size_t whylen)
{
	unsigned char ident[EI_NIDENT + 4];
	char path[64];
	uint16_t machine;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		snprintf(why, whylen, "cannot open %s to check its architecture: %s%s", path, strerror(-err),
			 err == -ENOENT ? " (a kernel thread or an exiting process cannot be injected)" : "");
		return err;
	}
	n = pread(fd, ident, sizeof(ident), 0);
	close(fd);
	if (n != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0) {
		snprintf(why, whylen, "process %d runs a program that is not an ELF file: it cannot be injected", pid);
		return -ENOEXEC;
	}
	memcpy(&machine, ident + EI_NIDENT + 2, sizeof(machine));
	if (ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB || machine != EM_X86_64) {
		snprintf(why, whylen,
			 "process %d is not a 64-bit x86 process (ELF class %u, machine %u): only x86-64 targets can "
			 "be injected; start it with the bridge instead (inferscope-bpf record -- CMD)",
			 pid, ident[EI_CLASS], machine);
		return -ENOEXEC;
	}
	return 0;
}

/* The program has no PT_INTERP: nothing loads libraries into it. */
static int check_dynamic(pid_t pid, char *why, size_t whylen)
{
	struct elf_file *elf;
	bool interp;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		snprintf(why, whylen, "cannot open %s to read its program headers: %s", path, strerror(-err));
		return err;
	}
	elf = elf_file__open(fd, path, why, whylen);
	if (!elf && errno == ENOTSUP) {
		close(fd);
		return -ENOTSUP;
	}
	interp = elf && elf_file__has_interp(elf);
	elf_file__close(elf);
	close(fd);
	if (interp)
		return 0;
	snprintf(why, whylen,
		 "process %d runs a statically linked program: it has no dynamic loader and no dlopen to call; "
		 "start it with the bridge instead (inferscope-bpf record -- CMD) or run with --no-inject",
		 pid);
	return -ENOTSUP;
}

struct why {
	char *buf;
	size_t len;
};

/* -EBUSY, said in why, when thread tid has a tracer. */
static int thread_untraced(void *ctx, __u32 pid, __u32 tid)
{
	struct why *why = ctx;
	char path[96], buf[8192], comm[64] = "?";
	long tracer;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/status", pid, tid);
	if (proc__read_small(path, buf, sizeof(buf)) < 0)
		return 0;
	tracer = status_long(buf, "TracerPid:", 0);
	if (tracer == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/comm", tracer);
	proc__read_small(path, comm, sizeof(comm));
	snprintf(why->buf, why->len,
		 "thread %u of process %u is already traced by process %ld (%s): a thread has one "
		 "tracer at a time; detach that debugger or strace first, or run with --no-inject",
		 tid, pid, tracer, comm);
	return -EBUSY;
}

/* Every thread's TracerPid is 0. */
static int check_untraced(pid_t pid, char *why, size_t whylen)
{
	struct why w = { why, whylen };
	int err = proc__for_each_thread((__u32)pid, thread_untraced, &w);

	if (err && err != -EBUSY)
		snprintf(why, whylen, "cannot list the threads of process %d (/proc/%d/task): %s", pid, pid,
			 strerror(-err));
	return err;
}

static int check_status(pid_t pid, const char *status, char *why, size_t whylen)
{
	const char *feat = status_field(status, "x86_Thread_features:");

	if (status_long(status, "Seccomp:", 0) != 0) {
		snprintf(why, whylen,
			 "process %d runs under seccomp (Seccomp: %ld in /proc/%d/status): the system calls dlopen "
			 "makes could be refused or kill it, so it is not injected; start it with the bridge "
			 "instead (inferscope-bpf record -- CMD) or run with --no-inject",
			 pid, status_long(status, "Seccomp:", 0), pid);
		return -ENOTSUP;
	}
	if (feat && strncmp(feat, "shstk", 5) == 0) {
		snprintf(why, whylen,
			 "process %d uses a user shadow stack, which a call made by ptrace would violate: start it "
			 "with the bridge instead (inferscope-bpf record -- CMD) or run with --no-inject",
			 pid);
		return -ENOTSUP;
	}
	if (status_hex(status, "SigIgn:") & (1ull << (SIGSEGV - 1))) {
		snprintf(why, whylen,
			 "process %d ignores SIGSEGV, and the injected call ends on a fault that the kernel would "
			 "turn into a reset of that setting: start it with the bridge instead (inferscope-bpf "
			 "record -- CMD) or run with --no-inject",
			 pid);
		return -ENOTSUP;
	}
	return 0;
}

/* Opening /proc/PID/mem runs the same access check as PTRACE_ATTACH
 * (credentials, capabilities, LSMs, Yama) without stopping anything. */
static int check_access(pid_t pid, const char *status, char *why, size_t whylen)
{
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = -errno;
	if (err == -EACCES || err == -EPERM) {
		const char *uid = status_field(status, "Uid:");

		snprintf(why, whylen,
			 "not allowed to ptrace process %d (owner uid %ld; we are uid %d): run inferscope-bpf as "
			 "root or as the job's user, or grant it CAP_SYS_PTRACE",
			 pid, uid ? strtol(uid, NULL, 10) : -1L, (int)geteuid());
		return -EPERM;
	}
	snprintf(why, whylen, "cannot open %s to check ptrace access: %s", path, strerror(-err));
	return err;
}

/* One mapped object's file, opened through the target's root. */
struct mapped_file {
	uint64_t start, offset;
	unsigned long inode;
	char path[PATH_MAX];
};

static bool loader_candidate(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-2.", 7) == 0 ||
	       strncmp(base, "libdl.so", 8) == 0 || strncmp(base, "libdl-2.", 8) == 0 ||
	       strncmp(base, "ld-musl-", 8) == 0;
}

struct loader_syms {
	uint64_t dlopen, dlerror;
};

static int loader_sym_note(void *ctx, const struct elf_symbol *sym)
{
	struct loader_syms *ls = ctx;

	if (!sym->func)
		return 0;
	if (strcmp(sym->name, "dlopen") == 0)
		ls->dlopen = sym->value;
	else if (strcmp(sym->name, "dlerror") == 0)
		ls->dlerror = sym->value;
	return 0;
}

/* dlopen and dlerror, both defined in one object's dynamic symbol table:
 * 0, -ENOENT (not there) or another -errno. */
static int resolve_in(pid_t pid, const struct mapped_file *m, struct target_syms *out, char *why, size_t whylen)
{
	char path[PATH_MAX + 64], msg[PATH_MAX + 128];
	struct loader_syms ls = { 0, 0 };
	struct elf_segment segs[16];
	bool bias_found = false;
	uint64_t bias = 0;
	struct elf_file *elf;
	struct stat st;
	size_t nsegs;
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open %s, which process %d maps, to find dlopen: %s", path, pid,
			 strerror(-err));
		return err;
	}
	if (fstat(fd, &st) != 0 || st.st_ino != m->inode) {
		close(fd);
		snprintf(why, whylen,
			 "%s has been replaced on disk since process %d mapped it, so dlopen's address cannot be "
			 "read from it: restart the job, or start it with the bridge (inferscope-bpf record -- CMD)",
			 m->path, pid);
		return -ESTALE;
	}
	elf = elf_file__open(fd, m->path, msg, sizeof(msg));
	if (!elf || !elf_file__is_x86_64(elf)) {
		snprintf(why, whylen, "%s (mapped by process %d) is not a readable x86-64 ELF file%s%s", m->path, pid,
			 elf ? "" : ": ", elf ? "" : msg);
		err = -ENOEXEC;
		goto out;
	}
	/* The PT_LOAD that holds this mapping's file offset gives the bias. */
	nsegs = elf_file__segments(elf, segs, sizeof(segs) / sizeof(segs[0]));
	for (size_t i = 0; i < nsegs && !bias_found; i++) {
		if (m->offset >= (segs[i].offset & ~0xfffull) && m->offset < segs[i].offset + segs[i].filesz) {
			bias = m->start - m->offset - segs[i].vaddr + segs[i].offset;
			bias_found = true;
		}
	}
	if (bias_found)
		elf_file__for_each_symbol(elf, ELF_SYMS_DYNAMIC, loader_sym_note, &ls);
	if (ls.dlopen && ls.dlerror) {
		out->dlopen = bias + ls.dlopen;
		out->dlerror = bias + ls.dlerror;
		snprintf(out->lib, sizeof(out->lib), "%s", m->path);
		err = 0;
	}
out:
	elf_file__close(elf);
	close(fd);
	return err;
}

static int find_dlopen(pid_t pid, struct target_syms *out, char *why, size_t whylen)
{
	struct proc_maps *maps = proc_maps__open((__u32)pid);
	struct proc_map pm;
	char seen[8][PATH_MAX];
	size_t nseen = 0;
	int err = -ENOENT;

	if (!maps) {
		err = -errno;
		snprintf(why, whylen, "cannot read /proc/%d/maps: %s", pid, strerror(-err));
		return err;
	}
	while (err == -ENOENT && proc_maps__next(maps, &pm) > 0) {
		const char *path = pm.path;
		struct mapped_file m;
		size_t plen;
		bool dup = false;

		if (!proc_map__is_file(&pm))
			continue;
		plen = strlen(path);
		if (plen >= sizeof(m.path) || !loader_candidate(path))
			continue;
		if (plen > 10 && strcmp(path + plen - 10, " (deleted)") == 0)
			continue;
		for (size_t i = 0; i < nseen; i++)
			dup |= strcmp(seen[i], path) == 0;
		if (dup || nseen == sizeof(seen) / sizeof(seen[0]))
			continue;
		memcpy(seen[nseen++], path, plen + 1);
		memcpy(m.path, path, plen + 1);
		m.start = pm.start;
		m.offset = pm.offset;
		m.inode = (unsigned long)pm.inode;
		err = resolve_in(pid, &m, out, why, whylen);
		if (err != 0 && err != -ENOENT) {
			proc_maps__close(maps);
			return err;
		}
	}
	proc_maps__close(maps);
	if (err == 0)
		return 0;
	snprintf(why, whylen,
		 "process %d maps no C library that exports dlopen (glibc before 2.34 keeps it in libdl, "
		 "which this program did not load): start it with the bridge instead (inferscope-bpf "
		 "record -- CMD), or with LD_PRELOAD=libdl.so.2, or run with --no-inject",
		 pid);
	return -ENOTSUP;
}

static int preflight(pid_t pid, struct target_syms *syms, char *why, size_t whylen)
{
	char path[64], status[8192];
	int err;

	if (pid <= 0) {
		snprintf(why, whylen, "%d is not a process id", (int)pid);
		return -EINVAL;
	}
	if (pid == getpid()) {
		snprintf(why, whylen, "process %d is inferscope-bpf itself: a process cannot ptrace itself", pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	err = proc__read_small(path, status, sizeof(status));
	if (err < 0) {
		if (err == -ENOENT)
			snprintf(why, whylen, "no process %d: check the pid (ps -p %d)", pid, pid);
		else
			snprintf(why, whylen, "cannot read %s: %s", path, strerror(-err));
		return err == -ENOENT ? -ESRCH : err;
	}
	if (status_field(status, "State:") && *status_field(status, "State:") == 'T') {
		snprintf(why, whylen,
			 "process %d is stopped (SIGSTOP, Ctrl-Z or a debugger): resume it first (kill -CONT %d)", pid,
			 pid);
		return -EAGAIN;
	}
	if (status_long(status, "Tgid:", pid) != pid) {
		snprintf(why, whylen, "%d is a thread of process %ld: give the process id", pid,
			 status_long(status, "Tgid:", pid));
		return -EINVAL;
	}
	err = check_yama(pid, why, whylen);
	if (!err)
		err = check_access(pid, status, why, whylen);
	if (!err)
		err = check_arch(pid, why, whylen);
	if (!err)
		err = check_untraced(pid, why, whylen);
	if (!err)
		err = check_status(pid, status, why, whylen);
	if (!err)
		err = check_dynamic(pid, why, whylen);
	if (!err)
		err = find_dlopen(pid, syms, why, whylen);
	return err;
}

int inject__preflight(pid_t pid, char *why, size_t whylen)
{
	struct target_syms syms;

	return preflight(pid, &syms, why, whylen);
}

/* ---- choosing and stopping a thread ------------------------------------ */

/* System calls after which the kernel restarts transparently when a ptrace
 * stop interrupts them (-ERESTARTSYS, -ERESTARTNOHAND or a restart block),
 * that do not swap the signal mask, and that glibc does not make while
 * holding the malloc or loader locks. Threads in futex (possibly waiting
 * inside a lock-holding path) or running user code are never chosen. */
static bool syscall_suitable(long nr, uint64_t arg3)
{
	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_pread64:
	case SYS_preadv:
	case SYS_preadv2:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_accept:
	case SYS_accept4:
	case SYS_poll:
	case SYS_select:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_pause:
		return true;
	case SYS_ppoll:
		return arg3 == 0;	/* no temporary signal mask */
	default:
		return false;
	}
}

struct candidate {
	pid_t tid;
	int rank;	/* lower is better */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct candidates {
	pid_t only;
	struct candidate *out;
	int n, max;
};

/* Adds thread tid when it is blocked in a suitable system call. */
static int candidate_add(void *ctx, __u32 pid, __u32 tid)
{
	struct candidates *c = ctx;
	unsigned long long args[6];
	char path[96], buf[512], comm[64] = "";
	long nr;

	if (c->only && (pid_t)tid != c->only)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (proc__read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	if (sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx", &nr, &args[0], &args[1], &args[2], &args[3],
		   &args[4], &args[5]) != 7 ||
	    !syscall_suitable(nr, args[3]))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	proc__read_small(path, comm, sizeof(comm));
	c->out[c->n].tid = (pid_t)tid;
	c->out[c->n].rank = strncmp(comm, "cuda", 4) == 0 ? 1 : 0;
	c->n++;
	return c->n == c->max;	/* full: stop */
}

/* Threads now blocked in a suitable system call, best first: 0..n. The
 * CUDA driver's own threads come last (they may hold driver locks that the
 * library's constructor needs). */
static int list_candidates(pid_t pid, pid_t only, struct candidate *out, int max)
{
	struct candidates c = { only, out, 0, max };
	int err = max > 0 ? proc__for_each_thread((__u32)pid, candidate_add, &c) : 0;

	if (err < 0)
		return err;
	qsort(out, (size_t)c.n, sizeof(*out), cand_cmp);
	return c.n;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* The next wait status of tid, waiting until deadline: 0, -ETIMEDOUT or
 * -errno. */
static int wait_status(pid_t tid, int *status, uint64_t deadline)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);

		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (clock__mono_ns() >= deadline)
			return -ETIMEDOUT;
		sleep_us(100);
	}
}

static bool is_restart(int64_t rax)
{
	return rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
	       rax == -ERESTART_RESTARTBLOCK;
}

/* Seizes tid and waits until it stops at PTRACE_INTERRUPT: 0 (stopped,
 * regs read), 1 (not in a suitable call after all: released untouched),
 * -ESRCH (gone) or -errno with why set. */
static int seize_and_stop(pid_t pid, pid_t tid, struct user_regs_struct *regs, char *why, size_t whylen)
{
	uint64_t deadline;
	int status, err;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
		err = -errno;
		if (err == -ESRCH)
			return err;
		if (err == -EPERM)
			snprintf(why, whylen,
				 "ptrace refused to attach to thread %d of process %d (EPERM): it is traced by another "
				 "process, or Yama, an LSM or credentials forbid it; run inferscope-bpf as root with "
				 "CAP_SYS_PTRACE, detach any debugger, or run with --no-inject",
				 tid, pid);
		else
			snprintf(why, whylen, "PTRACE_SEIZE of thread %d of process %d failed: %s", tid, pid,
				 strerror(-err));
		return err;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
		err = -errno;
		snprintf(why, whylen, "PTRACE_INTERRUPT of thread %d of process %d failed: %s", tid, pid,
			 strerror(-err));
		return err;
	}
	deadline = clock__mono_ns() + STOP_TIMEOUT_MS * 1000000ull;
	for (;;) {
		err = wait_status(tid, &status, deadline);
		if (err == -ETIMEDOUT) {
			/* In an uninterruptible sleep: it stops when it leaves
			 * it, and it must not stay stopped with nobody waiting. */
			err = waitpid(tid, &status, __WALL) == tid ? 0 : -errno;
		}
		if (err)
			return err;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == PTRACE_EVENT_STOP)
			break;
		/* A signal arrived first: deliver it as it would have been. */
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status)) != 0)
			return -errno;
	}
	if (ptrace(PTRACE_GETREGS, tid, NULL, regs) != 0)
		return -errno;
	if ((int64_t)regs->orig_rax < 0 || !syscall_suitable((long)regs->orig_rax, regs->r10) ||
	    (WSTOPSIG(status) != SIGTRAP)) {
		/* It left the call (or a group stop came first): let it go. */
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return 1;
	}
	return 0;
}

/* ---- the call ------------------------------------------------------------ */

static int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* A NUL-terminated string at addr, read page by page so that an unmapped
 * page after it does not fail the read. */
static void mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	buf[0] = '\0';
	while (got + 1 < size) {
		size_t chunk = 4096 - ((addr + got) & 4095);

		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		if (mem_read(pid, addr + got, buf + got, chunk) != 0)
			break;
		got += chunk;
		buf[got] = '\0';
		if (memchr(buf + got - chunk, '\0', chunk))
			break;
	}
	buf[size - 1] = '\0';
}

/* The stack mapping holds rsp with room for dlopen below it. */
static int check_stack(pid_t pid, pid_t tid, uint64_t rsp, char *why, size_t whylen)
{
	struct proc_maps *maps = proc_maps__open((__u32)pid);
	struct proc_map m;
	int err = -EFAULT;

	if (!maps) {
		err = -errno;
		snprintf(why, whylen, "cannot read /proc/%d/maps: %s", pid, strerror(-err));
		return err;
	}
	while (proc_maps__next(maps, &m) > 0) {
		if (rsp <= m.start || rsp > m.end)
			continue;
		err = (strcmp(m.path, "[stack]") == 0 || rsp - m.start >= STACK_NEEDED) ? 0 : -ENOSPC;
		break;
	}
	proc_maps__close(maps);
	if (err)
		snprintf(why, whylen,
			 "thread %d of process %d has %s below its stack pointer 0x%llx: too little for dlopen",
			 tid, pid, err == -ENOSPC ? "under 64 KiB of stack" : "no stack mapping",
			 (unsigned long long)rsp);
	return err;
}

static int save_state(pid_t tid, const struct user_regs_struct *regs, struct thread_state *ts)
{
	ts->regs = *regs;
	ts->xstate.iov_len = 64 * 1024;
	ts->xstate.iov_base = calloc(1, ts->xstate.iov_len);
	if (!ts->xstate.iov_base)
		return -ENOMEM;
	ts->xstate_note = NT_X86_XSTATE;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_X86_XSTATE, &ts->xstate) != 0) {
		/* A CPU without XSAVE: the legacy FXSAVE area is all there is. */
		ts->xstate.iov_len = 64 * 1024;
		ts->xstate_note = NT_PRFPREG;
		if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_PRFPREG, &ts->xstate) != 0)
			return -errno;
	}
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(ts->sigmask), &ts->sigmask) != 0)
		return -errno;
	return 0;
}

/* Everything back as it was at the stop; returns the first failure. */
static int restore_state(pid_t pid, pid_t tid, struct thread_state *ts)
{
	int err = 0;

	if (ts->stack_saved && mem_write(pid, ts->stack_lo, ts->stack_saved, ts->stack_len) != 0)
		err = -EIO;
	if (ts->xstate.iov_base &&
	    ptrace(PTRACE_SETREGSET, tid, (void *)(long)ts->xstate_note, &ts->xstate) != 0 && !err)
		err = -errno;
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(ts->sigmask), &ts->sigmask) != 0 && !err)
		err = -errno;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &ts->regs) != 0 && !err)
		err = -errno;
	return err;
}

/* Runs fn(arg0, arg1) in the stopped thread, returning at address 0:
 * *ret receives rax. 0, -ESRCH (the process died), -ETIMEDOUT, or -errno. */
static int remote_call(pid_t pid, pid_t tid, const struct thread_state *ts, uint64_t fn, uint64_t arg0,
		       uint64_t arg1, uint64_t stack_top, uint64_t timeout_ns, uint64_t *ret, char *why,
		       size_t whylen)
{
	struct user_regs_struct regs = ts->regs;
	uint64_t deadline, zero = 0;
	int status, err;

	regs.rsp = ((stack_top - 64) & ~15ull) - 8;	/* rsp + 8 is 16-aligned at entry */
	regs.rip = fn;
	regs.rdi = arg0;
	regs.rsi = arg1;
	regs.rax = 0;
	regs.orig_rax = (unsigned long long)-1;	/* not in a system call: nothing to restart */
	regs.eflags &= ~0x400ull;		/* DF clear, as the ABI requires */
	err = mem_write(pid, regs.rsp, &zero, sizeof(zero));
	if (!err && ptrace(PTRACE_SETREGS, tid, NULL, &regs) != 0)
		err = -errno;
	if (!err && ptrace(PTRACE_CONT, tid, NULL, NULL) != 0)
		err = -errno;
	if (err) {
		snprintf(why, whylen, "cannot set up the call in thread %d of process %d: %s", tid, pid,
			 strerror(-err));
		return err;
	}
	deadline = clock__mono_ns() + timeout_ns;
	for (;;) {
		err = wait_status(tid, &status, deadline);
		if (err == -ETIMEDOUT) {
			if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == 0)
				deadline = clock__mono_ns() + STOP_TIMEOUT_MS * 1000000ull;
			while (wait_status(tid, &status, deadline) == 0) {
				if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP)
					break;
				if (WIFSTOPPED(status))
					ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status));
			}
			snprintf(why, whylen, "the call did not return within %llu ms",
				 (unsigned long long)(timeout_ns / 1000000));
			return -ETIMEDOUT;
		}
		if (err) {
			snprintf(why, whylen, "waiting for thread %d of process %d failed: %s", tid, pid,
				 strerror(-err));
			return err;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			snprintf(why, whylen, "process %d exited during the injected call (%s %d)", pid,
				 WIFEXITED(status) ? "exit code" : "signal",
				 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			return -ESRCH;
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == 0 && WSTOPSIG(status) == SIGSEGV) {
			siginfo_t si;

			if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0 &&
			    ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 && regs.rip == 0 && si.si_addr == NULL) {
				*ret = regs.rax;
				return 0;
			}
		}
		/* A group stop or a fault of the call's own: continue; a fault
		 * goes to the process's handler as it would without us. */
		if (ptrace(PTRACE_CONT, tid, NULL,
			   (void *)(long)((status >> 16) == 0 ? WSTOPSIG(status) : 0)) != 0) {
			err = -errno;
			snprintf(why, whylen, "cannot continue thread %d of process %d: %s", tid, pid,
				 strerror(-err));
			return err == -ESRCH ? -ESRCH : err;
		}
	}
}

/* Asynchronous signals stay pending during the call; faults that the call
 * itself raises are not blocked (a blocked fault would make the kernel
 * reset the process's handler for it). */
static uint64_t call_sigmask(void)
{
	uint64_t mask = ~0ull;
	const int sync_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };

	for (size_t i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		mask &= ~(1ull << (sync_sigs[i] - 1));
	return mask;
}

static int inject_into(pid_t pid, pid_t tid, const struct target_syms *syms, const char *lib, int flags,
		       uint64_t timeout_ns, const struct user_regs_struct *regs, struct inject_result *res,
		       char *err_msg, size_t errlen)
{
	struct thread_state ts = { 0 };
	size_t plen = strlen(lib) + 1;
	uint64_t top, path_addr, mask = call_sigmask(), handle = 0, msg_ptr = 0;
	char why[512] = "";
	int err, rerr;

	err = save_state(tid, regs, &ts);
	if (err) {
		snprintf(err_msg, errlen, "cannot save the state of thread %d of process %d: %s", tid, pid,
			 strerror(-err));
		goto release;
	}
	err = check_stack(pid, tid, regs->rsp, err_msg, errlen);
	if (err)
		goto release;
	top = regs->rsp - RED_ZONE;
	path_addr = (top - plen) & ~15ull;
	ts.stack_lo = ((path_addr - 64) & ~15ull) - 8;
	ts.stack_len = top - ts.stack_lo;
	ts.stack_saved = malloc(ts.stack_len);
	if (!ts.stack_saved) {
		err = -ENOMEM;
		snprintf(err_msg, errlen, "out of memory saving %zu bytes of stack", ts.stack_len);
		goto release;
	}
	err = mem_read(pid, ts.stack_lo, ts.stack_saved, ts.stack_len);
	if (err) {
		free(ts.stack_saved);
		ts.stack_saved = NULL;
		snprintf(err_msg, errlen, "cannot read the stack of thread %d of process %d: %s", tid, pid,
			 strerror(-err));
		goto release;
	}
	err = mem_write(pid, path_addr, lib, plen);
	if (err) {
		snprintf(err_msg, errlen, "cannot write the library path onto the stack of thread %d of process %d: %s",
			 tid, pid, strerror(-err));
		goto restore;
	}
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask) != 0) {
		err = -errno;
		snprintf(err_msg, errlen, "cannot set the signal mask of thread %d of process %d: %s", tid, pid,
			 strerror(-err));
		goto restore;
	}
	err = remote_call(pid, tid, &ts, syms->dlopen, path_addr, (uint64_t)flags, path_addr, timeout_ns, &handle,
			  why, sizeof(why));
	if (!err && handle == 0)
		err = remote_call(pid, tid, &ts, syms->dlerror, 0, 0, path_addr, timeout_ns, &msg_ptr, why,
				  sizeof(why));
	if (err == -ESRCH) {
		snprintf(err_msg, errlen, "%s: the library's constructor may have crashed it", why);
		goto out;
	}
	if (err == -ETIMEDOUT) {
		snprintf(err_msg, errlen,
			 "dlopen(\"%s\") in thread %d of process %d: %s; the thread was put back into its system "
			 "call, but the target's loader lock may stay held, so later dlopen calls there can hang: "
			 "restart the job when convenient and start it with the bridge (inferscope-bpf record -- CMD)",
			 lib, tid, pid, why);
	} else if (err) {
		snprintf(err_msg, errlen, "dlopen(\"%s\") in thread %d of process %d: %s", lib, tid, pid, why);
	} else if (handle == 0) {
		char text[DLERROR_MAX] = "";

		if (msg_ptr)
			mem_read_string(pid, msg_ptr, text, sizeof(text));
		snprintf(err_msg, errlen, "dlopen(\"%s\") failed in process %d (via %s): %s", lib, pid, syms->lib,
			 text[0] ? text : "no dlerror() text");
		err = -ELIBACC;
	}
restore:
	rerr = restore_state(pid, tid, &ts);
	if (rerr && !err) {
		err = rerr;
		snprintf(err_msg, errlen, "cannot restore thread %d of process %d after dlopen: %s", tid, pid,
			 strerror(-rerr));
	}
release:
	/* Detaching from the final SIGSEGV stop with signal 0 discards the
	 * fault; signals that came in meanwhile are delivered now. */
	if (ptrace(PTRACE_DETACH, tid, NULL, NULL) != 0 && !err) {
		err = -errno;
		snprintf(err_msg, errlen, "cannot detach from thread %d of process %d: %s", tid, pid,
			 strerror(-err));
	}
out:
	if (!err) {
		res->handle = handle;
		res->tid = tid;
		res->syscall_nr = (long)regs->orig_rax;
		res->syscall_restarts = is_restart((int64_t)regs->rax);
	}
	free(ts.stack_saved);
	free(ts.xstate.iov_base);
	return err;
}

int inject__dlopen_opts(pid_t pid, const char *lib, const struct inject_opts *opts, struct inject_result *res,
			char *err, size_t errlen)
{
	struct inject_opts o = opts ? *opts : (struct inject_opts){ 0 };
	struct inject_result r = { 0 };
	struct target_syms syms;
	char path[PATH_MAX + 64];
	uint64_t deadline;
	struct stat st;
	int e, tries = 0;

	if (!lib || lib[0] != '/' || strlen(lib) >= PATH_MAX) {
		snprintf(err, errlen, "library path \"%s\" must be absolute and shorter than %d bytes",
			 lib ? lib : "(null)", PATH_MAX);
		return -EINVAL;
	}
	e = preflight(pid, &syms, err, errlen);
	if (e)
		return e;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, lib);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		e = errno;
		snprintf(err, errlen,
			 "%s is not %s inside the mount namespace of process %d (%s): put the library where the "
			 "process can see it (its container's filesystem, or a bind mount) and pass that path",
			 lib, S_ISDIR(st.st_mode) && e == 0 ? "a regular file" : "visible", pid,
			 e ? strerror(e) : "a directory or device");
		return -ENOENT;
	}
	if (!o.dlopen_flags)
		o.dlopen_flags = RTLD_NOW;
	deadline = clock__mono_ns() + (uint64_t)(o.thread_wait_ms ? o.thread_wait_ms : DEFAULT_THREAD_WAIT_MS) * 1000000ull;
	for (;;) {
		struct candidate cands[64];
		int n = list_candidates(pid, o.tid, cands, 64);

		if (n < 0) {
			snprintf(err, errlen, "cannot list the threads of process %d: %s", pid, strerror(-n));
			return n == -ENOENT ? -ESRCH : n;
		}
		for (int i = 0; i < n; i++) {
			struct user_regs_struct regs;
			uint64_t t0;

			tries++;
			t0 = clock__mono_ns();
			e = seize_and_stop(pid, cands[i].tid, &regs, err, errlen);
			if (e == 1 || e == -ESRCH)
				continue;
			if (e)
				return e;
			e = inject_into(pid, cands[i].tid, &syms, lib, o.dlopen_flags,
					(uint64_t)(o.call_timeout_ms ? o.call_timeout_ms : DEFAULT_CALL_TIMEOUT_MS) *
						1000000ull,
					&regs, &r, err, errlen);
			r.held_ns = clock__mono_ns() - t0;
			if (!e && res)
				*res = r;
			return e;
		}
		if (clock__mono_ns() >= deadline)
			break;
		sleep_us(5000);
	}
	if (o.tid)
		snprintf(err, errlen,
			 "thread %d of process %d was not blocked in a system call that can be interrupted safely "
			 "(read, poll, nanosleep, wait4, ...) within %u ms",
			 o.tid, pid, o.thread_wait_ms ? o.thread_wait_ms : DEFAULT_THREAD_WAIT_MS);
	else
		snprintf(err, errlen,
			 "no thread of process %d was blocked in a system call that can be interrupted safely (read, "
			 "poll, nanosleep, wait4, ...) within %u ms (%d tried): a thread that is running or waiting "
			 "on a lock may hold the locks dlopen needs; try again when the job is less busy, or start "
			 "it with the bridge (inferscope-bpf record -- CMD)",
			 pid, o.thread_wait_ms ? o.thread_wait_ms : DEFAULT_THREAD_WAIT_MS, tries);
	return -EAGAIN;
}

int inject__dlopen(pid_t pid, const char *lib, uint64_t *handle, char *err, size_t errlen)
{
	struct inject_result r;
	int e = inject__dlopen_opts(pid, lib, NULL, &r, err, errlen);

	if (!e)
		*handle = r.handle;
	return e;
}
