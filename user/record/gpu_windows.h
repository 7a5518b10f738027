/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GPU activity windows: when the CUPTI bridges collect, so that CUPTI's cost
 * to the job stays within a share of the overhead budget.
 *
 * CUPTI costs the threads that make CUDA calls while it collects (about
 * 3.3-4 us per PyTorch launch on an H100 or H200) and nothing once the bridge
 * has detached it (cupti_bridge/bridge.c). So a window opens every period
 * and lasts what keeps CUPTI's cost on the busiest thread within share x
 * period, at the cost rate the last window measured (the API records each
 * thread made in it, each costing record_cost_ns), less what the last detach
 * cost the thread that did it. The first window, the rate not known yet,
 * lasts GPU_WINDOW_FIRST_NS. A window that cost more than planned (it
 * closed late, or the calls sped up) delays the next until its cost is
 * paid at share of the time. A window that would last the whole period stays
 * open (a job whose CUDA calls are rare is collected in full), its rate
 * measured again every period: when the calls grow frequent, it closes and
 * windows begin.
 *
 * Pure: time and measurements come in as arguments, which is what makes it
 * testable without BPF or a GPU.
 */
#ifndef INFERSCOPE_GPU_WINDOWS_H
#define INFERSCOPE_GPU_WINDOWS_H

#include <stdbool.h>
#include <linux/types.h>

#define GPU_WINDOW_PERIOD_NS	5000000000ULL	/* default: a window every 5 s */
#define GPU_WINDOW_FIRST_NS	50000000ULL	/* the first window, its rate unknown */
#define GPU_WINDOW_MIN_NS	20000000ULL	/* the shortest window, and the shortest gap */
/* CUPTI's cost per driver or runtime API record, to the thread that made
 * the call, while it collects: a PyTorch launch loop on an H100 paid
 * 3.97 us more per launch with every kind on and made 7.0 API records per
 * launch (docs/overhead.md). */
#define GPU_WINDOW_RECORD_COST_NS 570.0

struct gpu_windows {
	double share;		/* of the busiest thread's time CUPTI may take */
	double record_cost_ns;
	__u64 period_ns;
	bool open;
	bool continuous;	/* planned to last the whole period */
	__u64 opened_ns;
	__u64 length_ns;	/* planned length of the open window */
	__u64 next_open_ns;
	double rate;		/* CUPTI's cost per ns of the busiest thread; < 0: not measured yet */
	double detach_ns;	/* what the last detach cost the thread that did it */
	bool measured;		/* rate is of the current cycle (a window closed since it opened) */
	__u64 windows;		/* windows opened */
};

enum gpu_window_action {
	GPU_WINDOW_KEEP,
	GPU_WINDOW_OPEN,
	GPU_WINDOW_CLOSE,
};

/* The first window opens at the first decision. */
void gpu_windows__init(struct gpu_windows *g, double share, double record_cost_ns, __u64 period_ns);
/* What to do now; *next_ns: when to decide again at the latest. The caller
 * switches the windows and reports it with gpu_windows__switched. */
enum gpu_window_action gpu_windows__decide(const struct gpu_windows *g, __u64 now_ns, __u64 *next_ns);
void gpu_windows__switched(struct gpu_windows *g, bool open, __u64 now_ns);
/* A measurement: the most API records one thread made over span_ns of
 * collection, and what the detach before it took its thread (0: none).
 * Several in one cycle (one per process) keep the highest rate; a window
 * planned for the whole period is measured every period while open, and
 * what comes after its close is ignored. */
void gpu_windows__measured(struct gpu_windows *g, __u64 busiest_records, __u64 span_ns, __u64 detach_ns);
/* The planned length of a window at the rate measured so far. */
__u64 gpu_windows__plan(const struct gpu_windows *g);

#endif
