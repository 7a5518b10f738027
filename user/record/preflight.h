/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Checks that turn the errors users meet into sentences that say what to do:
 * privileges, kernel BTF, target pids. Each returns 0 or -errno and, on
 * failure, a message in err.
 */
#ifndef INFERSCOPE_PREFLIGHT_H
#define INFERSCOPE_PREFLIGHT_H

#include <stddef.h>
#include <linux/types.h>

/* Linux 5.8's capabilities, for older headers. */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Root, or CAP_BPF + CAP_PERFMON (CAP_SYS_ADMIN on kernels before 5.8). */
int preflight__privileges(char *err, size_t errlen);
/* The kernel exposes BTF for CO-RE and tp_btf. btf_path: normally
 * /sys/kernel/btf/vmlinux (INFERSCOPE_BTF overrides it, for tests). */
int preflight__btf(char *err, size_t errlen);
/* pid names a live process other than ourselves. */
int preflight__pid(__u32 pid, char *err, size_t errlen);

#endif
