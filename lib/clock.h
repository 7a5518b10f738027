/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Clock reads in nanoseconds. CLOCK_MONOTONIC is the clock of everything
 * recorded (BPF's bpf_ktime_get_ns, the bridge's clock pairs, the record
 * file's timestamps).
 */
#ifndef INFERSCOPE_LIB_CLOCK_H
#define INFERSCOPE_LIB_CLOCK_H

#include <time.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC now. */
__u64 clock__mono_ns(void);
/* Clock id now, 0 when it cannot be read. */
__u64 clock__now_ns(clockid_t id);

#endif
