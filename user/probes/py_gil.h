/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GIL of a CPython 3.10-3.13 interpreter: the user-space half of the
 * GIL waits the scheduler sees (the BPF half: bpf/gil_wait.bpf.c).
 *
 * Where the GIL is: the main interpreter's struct _gil_runtime_state, in
 * _PyRuntime (ceval.gil, 3.10 and 3.11) or pointed at by the interpreter
 * (interp->ceval.gil, 3.12 and 3.13; 3.13 also publishes that offset and
 * those of the holder and the lock flag in _Py_DebugOffsets, which must
 * agree). Offsets from each version's Include/internal headers
 * (pycore_gil.h, pycore_runtime.h, pycore_interp.h, pycore_ceval_state.h),
 * checked with offsetof against the headers of 3.10.13, 3.11.2 (Debian),
 * 3.11.7, 3.12.1 and 3.13.0.
 *
 * Promise: a process's GIL waits are traced only once its memory was
 * checked against the layout: the thread list as for the stacks
 * (py_stacks.h: py_layout__find), and the GIL itself (its lock flag 0 or 1,
 * its switch interval set, a holder that is a thread state of the
 * interpreter while the GIL is taken, its two mutexes laid out as glibc's
 * unlocked or owned by a thread of the process; 3.12+: the interpreter
 * points at its own GIL). A layout that does not match is reported, never
 * used. 3.10 keeps pthread_self() as a thread's id: the holder's kernel
 * tid is read from glibc's struct pthread, at an offset checked against
 * every thread of the interpreter (holders are not named when it does not
 * hold).
 */
#ifndef INFERSCOPE_PY_GIL_H
#define INFERSCOPE_PY_GIL_H

#include <linux/types.h>
#include "events.h"
#include "py_libs.h"

/*
 * Finds and checks the GIL of the interpreter of pid mapped at m. Returns 0
 * with *gil filled (status SAMPLING: traced), -EAGAIN while the interpreter
 * is not initialized yet (ask again later), -ESRCH when pid is gone, or
 * -EPROTO / -ENOTSUP (mismatch / unsupported version or build); except for
 * -EAGAIN and -ESRCH, *status (subject GIL) is filled for the recording.
 * INFERSCOPE_TEST_GIL_SKEW=N (tests only) moves the GIL's address by N
 * bytes, to prove that a wrong layout is caught.
 */
int py_gil__setup(__u32 pid, const struct py_mapping *m, struct isr_py_gil *gil, struct isr_ev_py_status *status);

#endif
