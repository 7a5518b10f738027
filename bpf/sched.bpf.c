// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Scheduler and process-lifecycle probes: on/off-CPU and run-queue wait of
 * target threads (sched_switch, sched_waking, sched_wakeup*), the target set's evolution
 * (fork, exec, exit, rename), the names of the tasks that are not targets
 * but take a target thread's CPU or wake it (task_info, once per task: the
 * scheduler events carry only their ids), and, for the Python family, the
 * GIL waits of target threads (bpf/gil_wait.bpf.h: a thread blocking on its
 * interpreter's GIL, seen at the switches this program looks at anyway),
 * and the hold of a target at its exec until its probes are armed
 * (bpf/hold.bpf.h). All are BTF tracepoints (tp_btf):
 * no tracefs needed, arguments typed, cheapest attachment there is.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "gil_wait.bpf.h"
#include "hold.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Add child processes of targets to the targets (threads always are). */
const volatile bool follow_children = true;

/* Tasks that are not targets, named already (isr_ev_task_info): tid ->
 * its start time, so that a tid reused by a new task is named again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} named_tasks SEC(".maps");

/* task_struct's "state" became "__state" in 5.14 */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/* Names task, which is not a target, the first time it is seen taking the
 * CPU of target thread (pid, tid) or waking it: one event per task. */
static __always_inline void name_task(struct task_struct *task, __u32 pid, __u32 tid, __u64 ts)
{
	__u32 task_tid = BPF_CORE_READ(task, pid);
	__u64 born = BPF_CORE_READ(task, start_time), *seen;
	struct isr_ev_task_info *e;

	if (!task_tid)
		return; /* the idle task: a CPU with nothing to run */
	seen = bpf_map_lookup_elem(&named_tasks, &task_tid);
	if (seen && *seen == born)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_SCHED);
		return;
	}
	fill_hdr(&e->hdr, ISR_EV_TASK_INFO, sizeof(*e), pid, tid, ts);
	e->task_pid = BPF_CORE_READ(task, tgid);
	e->task_tid = task_tid;
	/* whole arrays: the kernel keeps comm zero-padded */
	BPF_CORE_READ_INTO(&e->comm, task, comm);
	BPF_CORE_READ_INTO(&e->process_comm, task, group_leader, comm);
	submit_bulk(e);
	bpf_map_update_elem(&named_tasks, &task_tid, &born, BPF_ANY);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_pid = BPF_CORE_READ(prev, tgid), next_pid = BPF_CORE_READ(next, tgid);
	bool prev_target = is_target(prev_pid), next_target = is_target(next_pid);
	struct isr_ev_sched_switch *e;
	__u32 state, prev_tid, next_tid;
	__u64 ts;

	/* two booleans, not two map values the compiler may OR together */
	barrier_var(prev_target);
	barrier_var(next_target);
	if (!prev_target && !next_target)
		return 0;
	state = task_state(prev);
	prev_tid = BPF_CORE_READ(prev, pid);
	next_tid = BPF_CORE_READ(next, pid);
	ts = bpf_ktime_get_ns();
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		fill_hdr(&e->hdr, ISR_EV_SCHED_SWITCH, sizeof(*e), prev_pid, prev_tid, ts);
		e->next_pid = next_pid;
		e->next_tid = next_tid;
		e->prev_state = state;
		/* A preempted task stays queued whatever its state says; a task
		 * that leaves with state 0 (TASK_RUNNING) yielded and is queued
		 * too. */
		e->flags = (preempt ? ISR_SWITCH_PREEMPT : 0) |
			   (preempt || state == 0 ? ISR_SWITCH_RUNNABLE : 0);
		submit_bulk(e);
	} else {
		count_drop(ISR_SRC_SCHED);
	}
	if (prev_target && !preempt && state != 0)
		gil_blocking(prev, prev_pid, prev_tid, ts);
	if (next_target)
		gil_resumed(next_pid, next_tid, ts);
	/* the task that has the CPU of a target thread now, if untraced */
	if (prev_target && !next_target)
		name_task(next, prev_pid, prev_tid, ts);
	return 0;
}

/*
 * Whether this program runs in an interrupt (a timer, a device; or an
 * exception): the current task is then whatever the interrupt happened to
 * interrupt, not what woke anyone. Without the per-CPU preempt count (a
 * kernel symbol BPF can take only from kernels built with all symbols):
 * an interrupt that came in kernel mode runs on an interrupt stack, and a
 * BPF program's frame is on the stack it was called on, while a task's own
 * stack is at most TASK_STACK_MAX from task->stack (16 KiB on x86-64, 32 KiB
 * with KASAN); one that came in user mode runs on the task's stack, above
 * the user registers it saved, whose ORIG_RAX is -1 (a system call's number
 * otherwise). (A soft interrupt run as a task enables them again, on its
 * own stack in a system call, was most likely that task's doing: a packet
 * it sent over loopback.)
 */
#define TASK_STACK_MAX	(32u << 10)

static __always_inline __u32 wake_context(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 here = 0, base;
	void *frame = &here;
	struct pt_regs *regs;

	/* an address on this frame, as a number */
	if (bpf_probe_read_kernel(&here, sizeof(here), &frame))
		return 0;
	base = (__u64)BPF_CORE_READ(task, stack);
	if (here - base >= TASK_STACK_MAX)
		return ISR_WAKE_INTERRUPT;
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return 0;	/* before 5.15 */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	return regs && (long)BPF_CORE_READ(regs, orig_ax) < 0 ? ISR_WAKE_INTERRUPT : 0;
}

/*
 * Who woke a target thread, seen where it happened (sched_waking runs in the
 * waker's context; sched_wakeup may run later on the woken task's CPU, in the
 * interrupt that hands it over, where the current task is whatever ran
 * there): kept with the woken task until its sched_wakeup.
 */
struct waking {
	__u32 pid, tid;
	__u32 flags;		/* ISR_WAKE_* */
	__u32 set;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct waking);
} wakings SEC(".maps");

/* The current task as the waker, and the context it wakes from. */
static __always_inline void current_waker(struct waking *w)
{
	__u64 waker = bpf_get_current_pid_tgid();

	w->pid = waker >> 32;
	w->tid = (__u32)waker;
	w->flags = wake_context();
}

/* Names the current task, waker w of target thread (pid, tid), when it woke
 * it from its own context and is not a target. */
static __always_inline void name_waker(const struct waking *w, __u32 pid, __u32 tid, __u64 ts)
{
	if (!w->flags && !is_target(w->pid))
		name_task(bpf_get_current_task_btf(), pid, tid, ts);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(handle_sched_waking, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	struct waking *w;

	if (!is_target(pid))
		return 0;
	w = bpf_task_storage_get(&wakings, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w)
		return 0;	/* sched_wakeup falls back to its own context */
	current_waker(w);
	w->set = 1;
	name_waker(w, pid, BPF_CORE_READ(p, pid), bpf_ktime_get_ns());
	return 0;
}

static __always_inline int emit_wakeup(struct task_struct *p, __u16 type)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	struct isr_ev_sched_wakeup *e;
	struct waking *w = NULL, here;
	bool seen;
	__u64 ts;
	__u32 tid;

	if (!is_target(pid))
		return 0;
	if (type == ISR_EV_SCHED_WAKEUP)
		w = bpf_task_storage_get(&wakings, p, 0, 0);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_SCHED);
		return 0;
	}
	tid = BPF_CORE_READ(p, pid);
	ts = bpf_ktime_get_ns();
	fill_hdr(&e->hdr, type, sizeof(*e), pid, tid, ts);
	e->target_cpu = BPF_CORE_READ(p, wake_cpu);
	seen = w && w->set;
	if (seen) {
		w->set = 0;
	} else {
		/* a fork's (wake_up_new_task: in the parent's context), or its
		 * sched_waking not seen */
		current_waker(&here);
		w = &here;
	}
	e->waker_pid = w->pid;
	e->waker_tid = w->tid;
	e->flags = w->flags;
	submit_bulk(e);
	if (!seen)	/* sched_waking named the waker it saw */
		name_waker(w, pid, tid, ts);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_sched_wakeup, struct task_struct *p)
{
	return emit_wakeup(p, ISR_EV_SCHED_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_sched_wakeup_new, struct task_struct *p)
{
	return emit_wakeup(p, ISR_EV_SCHED_WAKEUP_NEW);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_pid = BPF_CORE_READ(parent, tgid), child_pid = BPF_CORE_READ(child, tgid);
	struct isr_ev_proc_fork *e;
	__u32 flags = 0;
	__u8 target = ISR_TARGET;
	long err;

	if (!is_target(parent_pid))
		return 0;
	if (child_pid == parent_pid) {
		flags |= ISR_FORK_THREAD;
	} else if (follow_children) {
		err = bpf_map_update_elem(&targets, &child_pid, &target, BPF_NOEXIST);
		if (err == 0 || err == -17 /* EEXIST */)
			flags |= ISR_FORK_FOLLOWED;
		else
			count_drop(ISR_SRC_TARGETS);
	}
	e = bpf_ringbuf_reserve(&critical, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_PROC);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_PROC_FORK, sizeof(*e), parent_pid, BPF_CORE_READ(parent, pid),
		 bpf_ktime_get_ns());
	e->child_pid = child_pid;
	e->child_tid = BPF_CORE_READ(child, pid);
	e->flags = flags;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->child_comm, child, comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	struct isr_ev_proc_exec *e;
	__u8 *v = bpf_map_lookup_elem(&targets, &pid);

	if (!v)
		return 0;
	/* A new image has no uprobes of its own (until the recorder probes it). */
	*v &= ~ISR_TARGET_ARMED;
	e = bpf_ringbuf_reserve(&critical, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_PROC);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_PROC_EXEC, sizeof(*e), pid, BPF_CORE_READ(p, pid), bpf_ktime_get_ns());
	e->old_tid = old_pid;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	bpf_ringbuf_submit(e, 0);
	/* The new image, before its first instruction (bpf/hold.bpf.h). */
	if (holdable(p, pid))
		hold_current(pid, BPF_CORE_READ(p, pid), ISR_HOLD_EXEC, NULL, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	struct isr_ev_proc_exit *e;
	bool group_dead;

	if (!is_target(pid))
		return 0;
	/* signal->live reaches 0 when the last thread of the group exits; read
	 * it rather than the tracepoint's group_dead argument, which only
	 * newer kernels pass. */
	group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	e = bpf_ringbuf_reserve(&critical, sizeof(*e), 0);
	if (e) {
		fill_hdr(&e->hdr, ISR_EV_PROC_EXIT, sizeof(*e), pid, BPF_CORE_READ(p, pid),
			 bpf_ktime_get_ns());
		e->exit_code = BPF_CORE_READ(p, exit_code);
		e->flags = group_dead ? ISR_EXIT_GROUP_DEAD : 0;
		BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
		bpf_ringbuf_submit(e, 0);
	} else {
		count_drop(ISR_SRC_PROC);
	}
	/* A dead process leaves the targets, so that a later process given the
	 * same pid is not traced. */
	if (group_dead)
		bpf_map_delete_elem(&targets, &pid);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(handle_task_rename, struct task_struct *task, const char *comm)
{
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct isr_ev_task_rename *e;

	if (!is_target(pid))
		return 0;
	e = bpf_ringbuf_reserve(&critical, sizeof(*e), 0);
	if (!e) {
		count_drop(ISR_SRC_PROC);
		return 0;
	}
	fill_hdr(&e->hdr, ISR_EV_TASK_RENAME, sizeof(*e), pid, BPF_CORE_READ(task, pid), bpf_ktime_get_ns());
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
