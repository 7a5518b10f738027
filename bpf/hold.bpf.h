/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holding a target until its probes are armed, so that no call is lost when
 * a process starts or loads a library (user/record/recorder.c answers). A target
 * is stopped (SIGSTOP, sent from BPF):
 *
 *   - at its exec, before the new image runs an instruction (the
 *     sched_process_exec program of bpf/sched.bpf.c): the recorder probes
 *     the libraries it will load by path and watches its dynamic loader;
 *   - when its dynamic loader has mapped, and not yet run, a library a
 *     probe family probes (libcuda, libnccl, libpython, ...: the file-name
 *     prefixes of hold_names), at the loader's debugger hook
 *     _dl_debug_state (bpf/hold.bpf.c);
 *   - when a process that has uprobes of its own forks a child, before the
 *     child runs (its inherited mappings carry none of its parent's
 *     per-process probes): the sched_process_fork program, with the
 *     bpf_send_signal_task kfunc (Linux 6.13).
 *
 * Each hold is a PROC_HOLD event on the critical ring buffer, which wakes
 * the recorder: it probes the process and lets it go on (SIGCONT). A hold
 * whose event cannot be queued is not made (the drop is counted: a process
 * is never stopped with nobody told), and every held process is in the map
 * held until the recorder let it go: if the recorder dies first, its
 * watcher (user/record/hold_guard.h) lets it go. Never held: the processes the
 * user named (ISR_TARGET_NO_HOLD: -p), and a process that a shell with job
 * control put in a process group of its own on a terminal (the shell would
 * take the stop for a Ctrl-Z).
 */
#ifndef INFERSCOPE_HOLD_BPF_H
#define INFERSCOPE_HOLD_BPF_H

#include "common.bpf.h"

#define HOLD_SIGSTOP		19

/* [0]: whether targets are held now (the recorder sets it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} hold_ctl SEC(".maps");

/* The processes held and not yet let go (pid -> when). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ISR_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u64);
} held SEC(".maps");

static __always_inline bool hold_on(void)
{
	__u32 zero = 0, *on = bpf_map_lookup_elem(&hold_ctl, &zero);

	return on && *on;
}

/* Whether task (of target pid) may be held. */
static __always_inline bool holdable(struct task_struct *task, __u32 pid)
{
	__u8 *v = bpf_map_lookup_elem(&targets, &pid);
	struct signal_struct *sig;

	if (!v || (*v & ISR_TARGET_NO_HOLD) || !hold_on())
		return false;
	/* A job of a shell with job control: its own process group, on a
	 * terminal. */
	sig = BPF_CORE_READ(task, signal);
	return !BPF_CORE_READ(sig, tty) ||
	       BPF_CORE_READ(sig, pids[PIDTYPE_PGID]) == BPF_CORE_READ(task, real_parent, signal, pids[PIDTYPE_PGID]);
}

/* Room for the hold's event, with pid in the map held: NULL (a drop
 * counted) when either cannot be had, and then pid is not to be stopped. */
static __always_inline struct isr_ev_proc_hold *hold_reserve(__u32 pid, __u64 ts)
{
	struct isr_ev_proc_hold *e = bpf_ringbuf_reserve(&critical, sizeof(*e), 0);

	if (e && bpf_map_update_elem(&held, &pid, &ts, BPF_ANY)) {
		bpf_ringbuf_discard(e, 0);
		e = NULL;
	}
	if (!e)
		count_drop(ISR_SRC_PROC);
	return e;
}

/* The stop was sent (sent == 0): the event goes to the recorder; or it was
 * not: nothing is held. */
static __always_inline void hold_commit(struct isr_ev_proc_hold *e, long sent, __u32 pid, __u32 tid, __u64 ts,
					__u32 reason, __u32 parent)
{
	if (sent) {
		bpf_map_delete_elem(&held, &pid);
		bpf_ringbuf_discard(e, 0);
		count_drop(ISR_SRC_PROC);
		return;
	}
	fill_hdr(&e->hdr, ISR_EV_PROC_HOLD, sizeof(*e), pid, tid, ts);
	e->release_ns = 0;
	e->reason = reason;
	e->parent_pid = parent;
	bpf_ringbuf_submit(e, 0);
}

/* Holds the current process (pid, thread tid) for reason; name: the
 * library (LIB), written into the event before it goes. */
static __always_inline void hold_current(__u32 pid, __u32 tid, __u32 reason, const char *name, __u32 name_len)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ts = bpf_ktime_get_ns();
	struct isr_ev_proc_hold *e = hold_reserve(pid, ts);

	if (!e)
		return;
	__builtin_memset(e->name, 0, sizeof(e->name));
	if (name && name_len)
		bpf_probe_read_kernel_str(e->name, name_len < sizeof(e->name) ? name_len : sizeof(e->name), name);
	hold_commit(e, bpf_send_signal(HOLD_SIGSTOP), pid, tid, ts, reason, BPF_CORE_READ(task, real_parent, tgid));
}

#endif
