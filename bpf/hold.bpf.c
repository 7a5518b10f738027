// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The holds that need more than the scheduler's tracepoints (bpf/hold.bpf.h
 * says what a hold is):
 *
 *   - hold_dlopen, a uprobe on the dynamic loader's debugger hook
 *     _dl_debug_state, attached once per loader file for every process
 *     (user/record/loader_watch.h: the loader is found and probed when a target
 *     execs, and it runs on every dlopen of the host, so it is cheap where
 *     it does nothing). The loader calls the hook with r_debug.r_state
 *     RT_CONSISTENT when the libraries it mapped are in its list and none
 *     of them has run; the new entries of that list (a walk from where the
 *     last one ended) are matched against hold_names;
 *   - hold_fork, on sched_process_fork: the child of a process that has
 *     uprobes of its own (bpf_send_signal_task, Linux 6.13: loaded only
 *     where the kernel has it).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hold.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Children of targets are targets (the scheduler object's setting). */
const volatile bool follow_children = true;

#define RT_CONSISTENT	0	/* r_debug.r_state: the list is complete */
#define RT_DELETE	2	/* a library is being removed */
#define HOLD_WALK_MAX	1024	/* list entries looked at per call */
#define HOLD_PATH_READ	128	/* bytes of a library's path read */

/* [0]: the file-name prefixes whose loading holds a target. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct isr_hold_names);
} hold_names SEC(".maps");

/* Per process image: the last entry of the loader's list looked at. */
struct hold_tail {
	__u64 last;
	__u32 exec_id;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ISR_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct hold_tail);
} hold_tails SEC(".maps");

/* The head of glibc's struct r_debug and struct link_map (<link.h>: the
 * debugger interface, a stable ABI). */
struct r_debug_head {
	__s32 r_version;
	__u32 pad;
	__u64 r_map;
	__u64 r_brk;
	__s32 r_state;
	__u32 pad2;
};

struct link_map_head {
	__u64 l_addr;
	__u64 l_name;
	__u64 l_ld;
	__u64 l_next;
	__u64 l_prev;
};

#define NAME_WORDS	(ISR_HOLD_NAME_LEN / 8)

struct walk {
	__u64 cur;		/* the next entry to look at; 0: the end */
	__u64 last;		/* the last entry looked at */
	bool matched;
	__u32 base;		/* where the file name begins in path */
	char path[HOLD_PATH_READ];
	union {
		char c[ISR_COMM_LEN * 3];	/* the file name of the entry looked at */
		__u64 q[ISR_COMM_LEN * 3 / 8];
	} name;
	char match[ISR_COMM_LEN * 3];	/* the matched library's */
};

/* Whether the file name begins with the prefix n. */
static __always_inline bool prefix_of(const struct walk *w, const struct isr_hold_name *n)
{
	__u64 any = 0;
	int j;

	for (j = 0; j < NAME_WORDS; j++) {
		if ((w->name.q[j] ^ n->s[j]) & n->mask[j])
			return false;
		any |= n->mask[j];
	}
	return any != 0;
}

/* Loops of their own (bpf_loop: a callback is verified once, not once per
 * iteration): the file name's start in path, and its copy into name. */
static long find_base(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	char c = w->path[i & (HOLD_PATH_READ - 1)];

	if (c == '\0')
		return 1;
	if (c == '/')
		w->base = i + 1;
	return 0;
}

static long copy_name(__u32 i, void *ctx)
{
	struct walk *w = ctx;

	if (i >= sizeof(w->name.c))
		return 1;
	w->name.c[i] = w->path[(w->base + i) & (HOLD_PATH_READ - 1)];
	return 0;
}

static long walk_one(__u32 idx, void *ctx)
{
	struct walk *w = ctx;
	struct isr_hold_names *names;
	struct link_map_head lm;
	__u32 zero = 0;
	long len;
	int k;

	if (!w->cur)
		return 1;
	if (bpf_probe_read_user(&lm, sizeof(lm), (void *)w->cur)) {
		w->cur = 0;
		return 1;
	}
	w->last = w->cur;
	w->cur = lm.l_next;
	len = bpf_probe_read_user_str(w->path, sizeof(w->path), (void *)lm.l_name);
	if (len <= 1)
		return 0;	/* the program itself, or no name */
	w->base = 0;
	bpf_loop(HOLD_PATH_READ, find_base, w, 0);
	bpf_loop(sizeof(w->name.c), copy_name, w, 0);
	names = bpf_map_lookup_elem(&hold_names, &zero);
	if (!names)
		return 1;
	for (k = 0; k < ISR_HOLD_NAMES; k++) {
		if (prefix_of(w, &names->n[k])) {
			w->matched = true;
			__builtin_memcpy(w->match, w->name.c, sizeof(w->match));
			w->match[sizeof(w->match) - 1] = '\0';
			return 0;
		}
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(hold_dlopen)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct hold_tail *tail, next = {};
	struct r_debug_head rd;
	struct link_map_head lm;
	__u32 pid = id >> 32, exec_id;
	struct walk w = {};

	if (!holdable(task, pid))
		return 0;
	/* The attach cookie: from the probed address to _r_debug. */
	if (bpf_probe_read_user(&rd, sizeof(rd), (void *)(bpf_get_func_ip(ctx) + bpf_get_attach_cookie(ctx))))
		return 0;
	exec_id = BPF_CORE_READ(task, self_exec_id);
	tail = bpf_map_lookup_elem(&hold_tails, &pid);
	if (rd.r_state == RT_DELETE && tail)
		tail->exec_id = 0;	/* an entry may go: walk from the head next time */
	if (rd.r_state != RT_CONSISTENT)
		return 0;
	w.cur = rd.r_map;
	if (tail && tail->exec_id == exec_id && tail->last) {
		if (bpf_probe_read_user(&lm, sizeof(lm), (void *)tail->last))
			return 0;
		w.cur = lm.l_next;
	}
	bpf_loop(HOLD_WALK_MAX, walk_one, &w, 0);
	if (w.last) {
		next.last = w.last;
		next.exec_id = exec_id;
		bpf_map_update_elem(&hold_tails, &pid, &next, BPF_ANY);
	}
	/* A list longer than one walk: held, to be sure, and the next call
	 * goes on from here. */
	if (w.matched || w.cur)
		hold_current(pid, (__u32)id, ISR_HOLD_LIB, w.match, sizeof(w.match));
	return 0;
}

extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type, __u64 value) __ksym __weak;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(hold_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_pid = BPF_CORE_READ(parent, tgid), pid = BPF_CORE_READ(child, tgid);
	struct isr_ev_proc_hold *e;
	__u8 *v;
	__u64 ts;

	if (!follow_children || pid == parent_pid || !hold_on())
		return 0;
	v = bpf_map_lookup_elem(&targets, &parent_pid);
	if (!v || !(*v & ISR_TARGET_ARMED))
		return 0;
	ts = bpf_ktime_get_ns();
	e = hold_reserve(pid, ts);
	if (!e)
		return 0;
	__builtin_memset(e->name, 0, sizeof(e->name));
	hold_commit(e, bpf_send_signal_task(child, HOLD_SIGSTOP, PIDTYPE_TGID, 0), pid, pid, ts, ISR_HOLD_FORK,
		    parent_pid);
	return 0;
}
