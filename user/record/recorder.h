/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One recording: checks, target set-up (attach to pids or launch a command),
 * the consume-and-write loop with its status line, and a clean finish. The
 * promise: whatever stops the recording (duration, Ctrl-C, targets exiting,
 * a full disk, SIGKILL), the file reads back up to its last complete chunk,
 * and every event that could not be kept is counted in it.
 */
#ifndef INFERSCOPE_RECORDER_H
#define INFERSCOPE_RECORDER_H

#include <stdbool.h>
#include <linux/types.h>
#include "config.h"

struct record_result {
	__u64 events;
	__u64 drops_total;		/* after a write error, also the events the file could not take */
	__u32 stop_reason;		/* ISR_STOP_* */
	bool command_exited;
	bool command_stopped;		/* it outlived the recording: the recorder stopped it */
	int command_status;		/* wait status of the launched command */
	/* what tracing cost, as accounted (user/record/budget_ctl.h): the budget's
	 * figure (the busiest thread of each interval) over the time it ran;
	 * 0 when not accounted */
	double overhead_spent_ns, overhead_traced_ns;
	double hit_cost_ns;		/* a hot-path probe hit, as measured at the start */
	double costs_measure_ns;	/* how long measuring the costs took at the start */
	unsigned int windows_last;	/* --flight-recorder: N of its last window file, FILE.N.isr (names
					 * taken by something else were skipped: flight.h) */
};

/* Records what cfg says to cfg->output.path. 0, or -errno after printing
 * what went wrong and what to do. */
int record__run(const struct record_config *cfg, struct record_result *res);

/* --list-probes (user/probes/list_probes.c): prints, for each target pid, for the
 * command to launch (its candidate libcuda files; it is not started) and
 * for each --cuda-lib, the CUDA probe site chosen for every function, and
 * for each target pid its Python interpreter's GIL probe sites, without
 * recording or loading BPF. 0, or -errno after printing what went wrong. */
int record__list_probes(const struct record_config *cfg);

#endif
