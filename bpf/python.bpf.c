// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GIL of CPython 3.10-3.13 target processes, from uprobes on the
 * interpreter (libpython3.X.so, or the executable when libpython is linked
 * into it; user/probes/py_libs.c chooses the sites).
 *
 * PyEval_RestoreThread(tstate) takes the GIL (take_gil) for a thread coming
 * back from a call that released it: its entry time is remembered per
 * thread and one ACQUIRE event is emitted at its return, with the wait.
 * PyEval_SaveThread() releases the GIL: one RELEASE event at its entry.
 * One entry program per probed address, one return program at
 * RestoreThread (kernel 6.18: two entry programs at one address lose hits).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entry times of PyEval_RestoreThread calls in flight, by tid. Not LRU: a
 * waiting thread's entry is never evicted; a full map is counted
 * (ISR_SRC_PYTHON). A thread's next call replaces a stale entry (a thread
 * that exits inside take_gil during finalization never returns). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} gil_waiting SEC(".maps");

static __always_inline void emit_gil(__u64 id, __u64 ts, __u64 wait_ns, __u32 kind)
{
	struct isr_ev_gil *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(ISR_SRC_PYTHON);
		return;
	}
	fill_hdr(&e->hdr, ISR_EV_GIL, sizeof(*e), id >> 32, (__u32)id, ts);
	e->wait_ns = wait_ns;
	e->kind = kind;
	e->pad = 0;
	submit_bulk(e);
}

SEC("uprobe")
int gil_restore_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ts;
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&gil_waiting, &tid, &ts, BPF_ANY))
		count_drop(ISR_SRC_PYTHON);
	return 0;
}

SEC("uretprobe")
int gil_restore_ret(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now, *start;
	__u32 tid = (__u32)id;

	if (!is_target(id >> 32))
		return 0;
	start = bpf_map_lookup_elem(&gil_waiting, &tid);
	if (!start)
		return 0; /* its entry was not remembered: counted there */
	now = bpf_ktime_get_ns();
	emit_gil(id, *start, now - *start, ISR_GIL_ACQUIRE);
	bpf_map_delete_elem(&gil_waiting, &tid);
	return 0;
}

SEC("uprobe")
int gil_save_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!is_target(id >> 32))
		return 0;
	emit_gil(id, bpf_ktime_get_ns(), 0, ISR_GIL_RELEASE);
	return 0;
}
