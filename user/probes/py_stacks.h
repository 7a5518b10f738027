/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python stacks, the user-space half (the BPF half: bpf/py_stacks.bpf.h).
 *
 * Promises: a process's stacks are captured only after its interpreter's
 * memory was checked against the layout of its version (the thread list
 * of _PyRuntime's main interpreter holds the process's own thread ids and
 * points back at that interpreter; the frames of its threads hold code
 * objects) — a layout that does not match is reported, never used. Every
 * captured stack reaches the recording interned: each distinct stack once
 * (ISR_EV_PY_STACK), each code object it names once with what analysis on
 * another host needs (ISR_EV_PY_CODE: file, qualified name, first line,
 * line table, read from the live target), and one ISR_EV_PY_SAMPLE per
 * capture.
 */
#ifndef INFERSCOPE_PY_STACKS_H
#define INFERSCOPE_PY_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"
#include "py_libs.h"

struct py_stacks;

struct py_stacks *py_stacks__new(void);
void py_stacks__free(struct py_stacks *ps);

/*
 * The interpreter's layout, which the GIL (py_gil.h) shares: finds the
 * interpreter of pid mapped at m and checks the layout of its version
 * against its memory (INFERSCOPE_TEST_PY_SKEW applies, below). Returns 0
 * with *layout filled and why saying what was checked, -EAGAIN while the
 * interpreter is not initialized yet, -ESRCH when pid is gone, or -EPROTO
 * (a mismatch) / -ENOTSUP (an unsupported version or build) with why
 * saying what.
 */
int py_layout__find(__u32 pid, const struct py_mapping *m, struct isr_py_layout *layout, char *why, size_t len);

/* Reads len bytes of pid's memory at addr: 0, or -errno (-EFAULT for a
 * short read, or at address 0). */
int py_mem__read(__u32 pid, __u64 addr, void *buf, size_t len);
/* The 64-bit word at addr, 0 when it cannot be read (the first error then
 * goes to *err if it holds none yet). */
__u64 py_mem__u64(__u32 pid, __u64 addr, int *err);
/* Whether tid is a thread of pid now. */
bool py_thread__exists(__u32 pid, __u64 tid);

/* A status record of subject (ISR_PY_SUBJECT_*) for pid, stamped now. */
void py_status__fill(struct isr_ev_py_status *st, __u32 pid, __u16 subject, __u32 status, int minor, __u64 runtime,
		     const char *detail);

/*
 * Finds the interpreter of pid mapped at m and checks its layout. Returns
 * 0 with *layout filled (status SAMPLING), -EAGAIN while the interpreter is
 * not initialized yet (ask again later), -ESRCH when pid is gone, or
 * -EPROTO / -ENOTSUP (layout mismatch / unsupported version or build);
 * except for -EAGAIN and -ESRCH, *status is filled for the recording.
 * The environment variable INFERSCOPE_TEST_PY_SKEW=N (tests only) moves the
 * thread-id offset by N bytes, to prove that a wrong layout is caught.
 */
int py_stacks__setup(struct py_stacks *ps, __u32 pid, const struct py_mapping *m, struct isr_py_layout *layout,
		     struct isr_ev_py_status *status);

/* Forgets what was learned about pid (it exec'd or exited): its code
 * objects and stacks are read again if it runs Python again. */
void py_stacks__forget(struct py_stacks *ps, __u32 pid);

/* Receives each record to write. Returns 0 or -errno (stops the
 * conversion). */
typedef int (*py_emit_fn)(void *ctx, const void *record, size_t size);

/* Turns one isr_ev_py_frames into the records of the recording: the code
 * objects and the stack it names if new, then the sample. 0 or the first
 * error of emit, or -ENOMEM. */
int py_stacks__convert(struct py_stacks *ps, const struct isr_ev_py_frames *e, py_emit_fn emit, void *ctx);

/* Code objects that could not be read from their process, and stacks of a
 * process image gone before they were read (ISR_SRC_PY_CODE). */
__u64 py_stacks__code_failures(const struct py_stacks *ps);

/* _Py_DebugOffsets of 3.13 as 64-bit words: cookie, version, free_threaded,
 * then each section's size followed by its offsets (the GIL's read by
 * user/probes/py_gil.c, the rest by user/probes/py_stacks.c). */
enum {
	PY_DBG_VERSION = 1,
	PY_DBG_FREE_THREADED = 2,
	PY_DBG_RUNTIME_INTERP_HEAD = 5,
	PY_DBG_INTERP_THREADS_HEAD = 9,
	PY_DBG_INTERP_CEVAL_GIL = 14,
	PY_DBG_INTERP_OWN_GIL = 15,
	PY_DBG_INTERP_GIL_LOCKED = 17,
	PY_DBG_INTERP_GIL_HOLDER = 18,
	PY_DBG_TSTATE_NEXT = 21,
	PY_DBG_TSTATE_INTERP = 22,
	PY_DBG_TSTATE_FRAME = 23,
	PY_DBG_TSTATE_NATIVE_ID = 25,
	PY_DBG_FRAME_PREVIOUS = 29,
	PY_DBG_FRAME_EXECUTABLE = 30,
	PY_DBG_FRAME_INSTR = 31,
	PY_DBG_FRAME_OWNER = 33,
	PY_DBG_CODE_FILENAME = 35,
	PY_DBG_CODE_QUALNAME = 37,
	PY_DBG_CODE_LINETABLE = 38,
	PY_DBG_CODE_FIRST_LINE = 39,
	PY_DBG_CODE_ADAPTIVE = 43,
	PY_DBG_WORDS = 44,
};

#endif
