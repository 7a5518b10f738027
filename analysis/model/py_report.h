/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python stacks of a recording (isr_ev_py_* in format/events.h), symbolized:
 * per thread, the sampled functions (self: innermost frame; inclusive: any
 * frame, once per sample) and the most frequent stacks; per Python call
 * site (the innermost frame outside installed packages and the standard
 * library, "file:line function"), the CUDA
 * synchronization time and the sampled launches captured there; each
 * process's stack status; and each Python thread's entry, which names it. Pure: a function of the events it is fed in pass
 * order (pass.h), with memory per code object, distinct stack, thread and
 * stack, and call site, never per sample, and at most PY_MAX_CODES code
 * objects and PY_MAX_STACKS stacks, the first ones: a recording of
 * countless distinct ones takes bounded memory (the report says so). Line
 * numbers come from the code object's line table (3.10: co_linetable
 * pairs; 3.11+: the location table) at the frame's instruction.
 */
#ifndef INFERSCOPE_PY_REPORT_H
#define INFERSCOPE_PY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"
#include "pass.h"

#define PY_TOP_FUNCS	10
/* Stack statuses kept (one per process, or per exec, in a recording). */
#define PY_MAX_STATUSES	16384
#define PY_TOP_STACKS	3
/* Code objects and distinct stacks kept, all processes together. A frame
 * of a code object not kept is shown by its address; a sample or capture
 * of a stack not kept is counted (its thread's samples, its calls) without
 * a stack, the captures at the site PY_OTHER_STACKS. */
#define PY_MAX_CODES	65536
#define PY_MAX_STACKS	16384
#define PY_OTHER_STACKS	"(other stacks)"
#define PY_SITE_LEN	320
#define PY_ENTRY_LEN	64

struct py_code {
	__u32 pid;
	__u64 addr;
	const char *filename;	/* NUL-terminated copies */
	const char *qualname;
	__u32 first_line;
	__u16 minor;
	const unsigned char *table;	/* a copy */
	size_t table_len;
};

struct py_stack {
	__u32 pid, id;
	__u16 flags, depth;
	const struct isr_py_frame *frames;	/* innermost first, a copy */
};

struct py_func_stat {
	const struct py_code *code;	/* NULL: not symbolized (see code_addr) */
	__u64 code_addr;
	__u64 self, inclusive;		/* samples */
};

struct py_stack_stat {
	const struct py_stack *stack;
	__u64 samples;
};

struct py_thread_stats {
	__u32 pid, tid;
	__u64 samples;			/* sampled stacks (kind TIMER) */
	struct py_func_stat funcs[PY_TOP_FUNCS];	/* most inclusive samples first */
	size_t nfuncs;
	struct py_stack_stat stacks[PY_TOP_STACKS];	/* most samples first */
	size_t nstacks;
};

/* What a thread started by Python's threading module runs: the function
 * its stacks show right inside threading's own frames (the target of
 * threading.Thread, or the run method a subclass defines). */
struct py_thread_entry {
	__u32 pid, tid;
	char name[PY_ENTRY_LEN];	/* its qualified name, "<locals>." left out: "Loader.worker_loop" */
	__u64 samples;			/* the samples and captures of the thread that show it */
};

struct py_site {
	char site[PY_SITE_LEN];		/* "file:line function": innermost frame of the user's code (not site-packages, dist-packages, the standard library) */
	__u64 calls;			/* CUDA calls captured there */
	__u64 time_ns;			/* their duration (returned calls) */
};

struct py_report {
	struct py_code *codes;		/* sorted by pid, addr */
	size_t ncodes;
	struct py_stack *stacks;	/* sorted by id */
	size_t nstacks;
	struct py_thread_stats *threads; /* threads with samples, by pid, tid */
	size_t nthreads;
	struct py_thread_entry *entries;	/* threads whose entry the stacks show, by pid, tid */
	size_t nentries;
	struct py_site *sync_sites;	/* SYNC and COPY_SYNC calls, most time first */
	size_t nsync;
	struct py_site *launch_sites;	/* sampled launches, most first */
	size_t nlaunch;
	const struct isr_ev_py_status **statuses; /* in time order (copies in status_data) */
	size_t nstatuses;
	struct isr_ev_py_status *status_data;
	__u64 statuses_cut;		/* beyond PY_MAX_STATUSES, left out */
	__u64 codes_other, stacks_other;	/* code objects and stacks beyond PY_MAX_*, not kept */
	__u64 timer_samples, cuda_samples;
	__u64 cuda_unmatched;		/* CUDA captures whose call event is not in the recording */
};

/* The report as a stage of a pass: fed every event in pass order. NULL
 * when out of memory. */
struct py_builder;
struct py_builder *py_builder__new(void);
/* 0 or -ENOMEM. */
int py_builder__event(struct py_builder *b, const struct pass_event *e);
/* The report of the events fed; frees b either way. 0 or -ENOMEM. */
int py_builder__finish(struct py_builder *b, struct py_report **out);
void py_builder__free(struct py_builder *b);

/* The report of r (its events in memory) in a pass of its own. 0 or
 * -ENOMEM. */
int py_report__compute(const struct recording *r, struct py_report **out);
void py_report__free(struct py_report *p);

/* The line of instruction instr (code-unit index; -1: not started) of c:
 * its line, or c->first_line when the table does not tell. */
__u32 py_code__line(const struct py_code *c, __s32 instr);
/* "file:line function" of frame f of process pid, into buf. */
void py_report__frame(const struct py_report *p, __u32 pid, const struct isr_py_frame *f, char *buf, size_t len);
/* The code object (pid, addr), or NULL. */
const struct py_code *py_report__code(const struct py_report *p, __u32 pid, __u64 addr);
/* The site of stack stack_id ("file:line function" of the innermost frame
 * of the user's own code, else the innermost frame) into buf; false when
 * the stack is unknown or has no frame. */
bool py_report__site(const struct py_report *p, __u32 stack_id, char *buf, size_t len);
const struct py_thread_stats *py_report__thread(const struct py_report *p, __u32 pid, __u32 tid);
/* The entry of Python thread (pid, tid): the function most of its stacks
 * (sampled, or captured at CUDA calls) run inside threading's frames; NULL
 * when none shows one (the main thread, a thread not started by threading,
 * stacks cut short) or p is NULL. */
const char *py_report__thread_entry(const struct py_report *p, __u32 pid, __u32 tid);

#endif
