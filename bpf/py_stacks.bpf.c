// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sampled Python stacks: a CPU-clock perf event per CPU (--py-stacks HZ)
 * runs this program in whatever task is on the CPU; for a thread of a
 * target whose interpreter layout was validated it emits the thread's
 * Python stack (bpf/py_stacks.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "regs.bpf.h"
#include <bpf/bpf_tracing.h>
#include "py_stacks.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("perf_event")
int py_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!(__u32)id || !is_target(id >> 32))
		return 0;
	py_capture(id, bpf_ktime_get_ns(), ISR_PY_KIND_TIMER);
	return 0;
}
