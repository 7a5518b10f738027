/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Bottleneck rules. Each has a stable id (docs/rules.md describes every one:
 * what it finds, its threshold, its evidence, how its cost is counted), may
 * watch the pass through a timeline observer, and at the end turns what it
 * saw (and the attribution) into findings.
 *
 * No second of a launching thread is counted by two findings: every rule
 * that takes its cost from the attribution claims the causes it counted
 * (rule_claim), and the rules that run last (gpu_idle, host_bound) count
 * only what no finding claimed.
 */
#ifndef INFERSCOPE_RULES_H
#define INFERSCOPE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"
#include "pass.h"
#include "timeline.h"
#include "attribution.h"
#include "findings.h"
#include "py_report.h"
#include "summary.h"
#include "ranks.h"
#include "waits.h"
#include "proc_tree.h"

struct rule_ctx {
	const struct recording *r;
	const struct pass *pass;
	struct timeline *tl;
	const struct attribution *attr;	/* complete when finish runs */
	const struct waits *waits;	/* the wait chains of the launching threads */
	const struct py_report *py;	/* Python stacks and sites */
	const struct summary *sum;	/* per process CUDA memory, kernels, GPU figures */
	struct findings *out;
	__u64 start, end;		/* the recording's window */
	/* causes claimed by a finding, per process: the whole cause (ns 0),
	 * or ns of it */
	struct rule_claim { __u32 pid, tid; enum cause cause; __u64 ns; } *claims;
	size_t nclaims, claims_cap;
	const struct rule *rule;	/* the rule finishing: it claims only its causes */
};

/*
 * When a rule finishes, and so claims (rule_claim) the causes it counted:
 * phase by phase, so that a rule counts what no rule of an earlier phase
 * claimed. Within a phase no rule claims a cause another one claims or
 * reads (struct rule: claims, reads; test_explain checks it), so that
 * their order there changes nothing they count.
 */
enum rule_phase {
	RULE_PHASE_CHAIN,	/* what a wait chain explains: a thread's blocked time, its producers' CPU waits */
	RULE_PHASE_CAUSE,	/* a cause of a thread or a device, or none: what the chains left */
	RULE_PHASE_PART,	/* part of a cause, what the whole-cause rules left (the swap-ins of the faults) */
	RULE_PHASE_REST,	/* what no finding claimed: the GPU's idle time, the launching thread's time */
	RULE_PHASES
};

#define RULE_CAUSE(k)		(1u << (k))
#define RULE_CAUSES_ALL		((1u << CAUSE_MAX) - 1)
_Static_assert(CAUSE_MAX <= 32, "a rule's causes are a 32-bit mask");

struct rule {
	const char *id;
	const char *title;		/* what a reader sees as the finding's heading */
	enum rule_phase phase;		/* when it finishes */
	__u32 claims;			/* RULE_CAUSE()s it may claim (rule_claim refuses others) */
	__u32 reads;			/* the causes whose unclaimed part it counts (rule_unclaimed, rule_claimed) */
	/* Optional: state for the pass, with the observer it wants (obs->ctx
	 * is set to the state by the caller). NULL + errno on error. */
	void *(*start)(struct rule_ctx *c, struct tl_observer *obs);
	/* Adds the rule's findings and not-judged notes. 0 or -errno. NULL
	 * for a rule of ranks. */
	int (*finish)(void *state, struct rule_ctx *c);
	/* A rule of ranks (nccl_straggler): adds its findings from the ranks
	 * of one recording or several lined up (analysis/rules/ranks.h), after
	 * each recording's rules. 0 or -errno. */
	int (*finish_ranks)(const struct ranks *r, struct findings *out);
	void (*free)(void *state);
};

/* Every rule; they finish by phase (struct rule), in this order within one. */
extern const struct rule *const rules_all[];
extern const size_t rules_count;

/* Claims cause for thread (pid, tid): no later rule counts it. tid 0: every
 * thread of pid. 0, -ENOMEM, or -EINVAL for a cause the finishing rule
 * does not declare (struct rule: claims). */
int rule_claim(struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause);
bool rule_claimed(const struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause);
/* Whether any thread of pid had cause claimed. */
bool rule_claimed_any(const struct rule_ctx *c, __u32 pid, enum cause cause);
/* Claims ns of cause for thread (pid, tid): a finding that counted part of
 * a cause (host_memory_pressure: the swap-in share of the page faults);
 * later rules count the rest. 0 or -ENOMEM. */
int rule_claim_part(struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause, __u64 ns);
/* The time of cause claimed in parts for (pid, tid); tid 0: every thread
 * of pid. */
__u64 rule_claimed_part(const struct rule_ctx *c, __u32 pid, __u32 tid, enum cause cause);

/* "thread 4242 `python3`" for a target thread; for a task that is not
 * traced, the names the recording has of it ("pid 900 `ffmpeg`", "thread
 * 901 `worker` of pid 900 `ffmpeg`"), or "pid 900 (not traced)"; the
 * recorder's threads are "the tracer (inferscope-bpf, pid 900)"; into buf. */
void rule_task_name(const struct rule_ctx *c, __u32 pid, __u32 tid, char *buf, size_t len);
/* The "file:line function" of a Python stack (the user's own innermost
 * frame); false when it has none. */
bool rule_stack_site(const struct rule_ctx *c, __u32 stack_id, char *buf, size_t len);

/* The time of cause k of thread t (causes: rule_thread_causes) that no
 * finding claimed. */
__u64 rule_unclaimed(const struct rule_ctx *c, const struct attr_thread *t, const __u64 causes[CAUSE_MAX], enum cause k);

/* The traced parent of pid in the proc_tree ctx as the tree shows it,
 * past the short-lived processes and wrappers it folds (a
 * waits_parent_fn); 0 when it has none. */
__u32 rule_tree_parent(void *ctx, __u32 pid);
/* The processes among the tasks of l (its members kept). */
size_t rule_tasks_processes(const struct wait_link *l);
/* The tasks of l for a reader, appended to f's summary: "3 processes
 * `python3` (pids 101, 102, 103; children of pid 100; each a PyTorch
 * DataLoader worker)", "thread 4712 `relay`". 0 or -ENOMEM. */
int rule_tasks_say(const struct rule_ctx *c, const struct proc_tree *tree, const struct wait_link *l,
		   struct finding *f);

/* Whether launching thread t waiting on task (pid, tid) is a hand-off:
 * another launching thread of its process (the main thread and autograd's
 * backward thread give each other work); what the waker did is its own
 * findings', not a cost of t's. */
bool rule_handoff(const struct rule_ctx *c, const struct attr_thread *t, __u32 pid, __u32 tid);
/* Whether a process launched GPU work: the GPU judgements concern it. */
bool rule_any_launcher(const struct rule_ctx *c);
/* Whether the GPU activity of a process was recorded (--gpu). */
bool rule_gpu_recorded(const struct rule_ctx *c);

/* Severity comes from the share of the job's time a finding's cost is
 * (rule_job_ns); a finding of time under RULE_MIN_JOB_SHARE of it is not
 * made (rule_matters). */
#define RULE_CRITICAL_SHARE	0.25
#define RULE_WARNING_SHARE	0.05
#define RULE_MIN_JOB_SHARE	0.01

/* The job's time: the longest active part of a device (its time observed
 * between its first and its last work) or of a launching thread (its first
 * to its last CUDA call); without them, the recording's window. */
__u64 rule_job_ns(const struct rule_ctx *c);
/* Whether a finding of cost ns is worth making: RULE_MIN_COST_NS and
 * RULE_MIN_JOB_SHARE of the job's time. */
#define RULE_MIN_COST_NS	20000000ull
bool rule_matters(const struct rule_ctx *c, __u64 cost);
/* The severity of a finding that costs cost ns of the job's time. */
enum finding_severity rule_severity(const struct rule_ctx *c, __u64 cost);

/* ns as seconds; part as a percentage of whole (0 when whole is 0): the
 * figures of a finding's prose. */
static inline double rule_secs(__u64 ns)
{
	return (double)ns / 1e9;
}

static inline double rule_pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* A finding of rule about launching thread t that costs cost ns of base ns
 * (rule_thread_base): its severity from the cost (rule_severity), its
 * evidence opened with pid, tid, cost_s and base_s. NULL when out of
 * memory. */
struct finding *rule_thread_finding(struct rule_ctx *c, const char *rule, const struct attr_thread *t, __u64 cost,
				    __u64 base);
/* Adds to f's evidence the share of base its cost is and whether t's GPU
 * activity was observed (the cost is then time the GPU sat idle). */
void rule_share_evidence(const struct rule_ctx *c, struct finding *f, const struct attr_thread *t, __u64 cost,
			 __u64 base);

/* The element of the array *arrp (*n of cap, elem bytes each, each opening
 * with the two __u32 that key it: pid and tid, pid and device) keyed
 * (a, b), appended zeroed but for its key when there is none. NULL when
 * out of memory. */
void *rule_tally_of(void *arrp, size_t *n, size_t *cap, size_t elem, __u32 a, __u32 b);
/* Asserts that type opens with its key, fields a and b (rule_tally_of). */
#define RULE_TALLY_KEY(type, a, b)                                                                  \
	_Static_assert(offsetof(type, a) == 0 && offsetof(type, b) == sizeof(__u32) &&                \
			       sizeof(((type *)0)->a) == sizeof(__u32) && sizeof(((type *)0)->b) == sizeof(__u32), \
		       #type " opens with its key (rule_tally_of)")

/* The launching threads on the critical path one by one, for a rule's
 * finish: the next from *i on (*i left past it), with its causes
 * (rule_thread_causes) and base (rule_thread_base); NULL after the last. */
const struct attr_thread *rule_next_critical(const struct rule_ctx *c, size_t *i, __u64 causes[CAUSE_MAX],
					     __u64 *base);

/* The launching threads' time counted by the rules: their idle-gap time
 * when pid's GPU activity was recorded, else their active window, by cause. */
void rule_thread_causes(const struct rule_ctx *c, const struct attr_thread *t, __u64 out[CAUSE_MAX]);
/* The time those figures are a share of: the active time of the
 * process's busiest device, or the thread's window. */
__u64 rule_thread_base(const struct rule_ctx *c, const struct attr_thread *t);

#endif
