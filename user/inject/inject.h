/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loads a shared library into a running x86-64 process: ptrace one thread
 * that is blocked in a system call known to restart transparently, make it
 * call the target's own dlopen(), then put the thread back exactly as it was
 * (registers, extended FPU/vector state, signal mask, the stack bytes
 * written, its interrupted system call, and any signal that arrived
 * meanwhile). docs/injection.md says what is done to the target, what is
 * guaranteed and when it refuses.
 *
 * Every function returns 0 or -errno and, on failure, one sentence in err
 * that says what failed, on what, and what to do. The refusals:
 *   -ESRCH     no such process (or it exited during the injection)
 *   -EPERM     Yama ptrace_scope or missing privilege forbids ptrace
 *   -EBUSY     one of its threads is already traced (a debugger, strace)
 *   -ENOTSUP   seccomp is active, user shadow stacks are on, SIGSEGV is
 *              ignored, or it has no dlopen (static binary, old glibc
 *              without libdl mapped)
 *   -ENOEXEC   it is not a 64-bit x86 process
 *   -ENOENT    the library path is not visible inside its mount namespace
 *   -EAGAIN    it is stopped (SIGSTOP), or no thread came to rest in a
 *              suitable system call in time
 *   -ELIBACC   its dlopen returned NULL; err carries its dlerror() text
 *   -ETIMEDOUT dlopen did not return in time (see docs/injection.md)
 */
#ifndef INFERSCOPE_INJECT_H
#define INFERSCOPE_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inject_opts {
	/* dlopen's flags; 0 means RTLD_NOW. */
	int dlopen_flags;
	/* Use this thread (it must still meet the rules); 0 chooses one. */
	pid_t tid;
	/* How long to wait for a suitable thread; 0 means 2000 ms. */
	unsigned int thread_wait_ms;
	/* How long dlopen may run in the target; 0 means 30000 ms. */
	unsigned int call_timeout_ms;
};

struct inject_result {
	uint64_t handle;	/* dlopen's return value in the target */
	pid_t tid;		/* the thread that ran it */
	long syscall_nr;	/* the system call it was blocked in */
	int syscall_restarts;	/* 1: that call was interrupted and restarts;
				 * 0: it had just returned, its result stands */
	uint64_t held_ns;	/* from stopping the thread to releasing it */
};

/* Everything that can be checked without stopping the process: it exists,
 * is x86-64, may be ptraced by us (Yama, credentials), is not traced, has
 * no seccomp filter or shadow stack, and maps a dlopen. */
int inject__preflight(pid_t pid, char *why, size_t whylen);

/* dlopen(lib_path_in_target, RTLD_NOW) in pid, with the defaults above;
 * *handle receives the non-NULL handle. */
int inject__dlopen(pid_t pid, const char *lib_path_in_target, uint64_t *handle, char *err, size_t errlen);

/* The same with options (NULL: defaults) and a fuller result. */
int inject__dlopen_opts(pid_t pid, const char *lib_path_in_target, const struct inject_opts *opts,
			struct inject_result *res, char *err, size_t errlen);

#endif
