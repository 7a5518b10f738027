/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What inject_target reports to the test that injects into it, through a
 * file both map: progress counters of each thread, so the test can tell
 * that every thread kept working correctly after a library was loaded.
 */
#ifndef INFERSCOPE_INJECT_STATE_H
#define INFERSCOPE_INJECT_STATE_H

#include <stdint.h>

#define INJECT_SLEEP_NS 500000000ull	/* each nanosleep of the sleeper */

struct inject_state {
	volatile uint64_t ready;		/* all tids below are set */
	volatile uint64_t spins;		/* spinner's loop count */
	volatile uint64_t bytes_read;		/* reader: bytes from the pipe */
	volatile uint64_t read_sum;		/* reader: sum of those bytes */
	volatile uint64_t read_errors;		/* reader: read() returned -1 */
	volatile uint64_t sleeps;		/* sleeper: nanosleeps done */
	volatile uint64_t short_sleeps;		/* ... that failed or ended early */
	volatile uint64_t max_overshoot_ns;	/* ... longest beyond INJECT_SLEEP_NS */
	volatile uint64_t usr1_count;		/* SIGUSR1 handler runs */
	volatile int32_t usr1_tid;		/* the thread it last ran in */
	volatile int32_t spinner_tid, reader_tid, sleeper_tid;
	volatile int32_t child_pid;		/* main thread waits for it */
	volatile int32_t waited_pid;		/* what waitpid returned, once */
	volatile int32_t waited_status;
	volatile int32_t waited_errno;
};

#endif
