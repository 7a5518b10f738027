/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What tests/workloads/nccl_job does on every rank, so that the tests can
 * check the recording against it: ITERS all-reduces of ALLREDUCE_COUNT
 * floats, a send to the next rank and a receive from the previous one in a
 * group every P2P_EVERY iterations, then one broadcast, all-gather,
 * reduce-scatter and reduce. The late rank sleeps SLEEP_MS before every
 * LATE_EVERY-th all-reduce (--mode sleep), or shares its CPU with a busy
 * process for the whole run (--mode hog).
 */
#ifndef INFERSCOPE_NCCL_PLAN_H
#define INFERSCOPE_NCCL_PLAN_H

#define NCCL_PLAN_ALLREDUCE_COUNT	4096	/* ncclFloat32: 16 KiB */
#define NCCL_PLAN_P2P_EVERY		10
#define NCCL_PLAN_LATE_EVERY		4
#define NCCL_PLAN_SLEEP_MS		15
#define NCCL_PLAN_STARTUP_MS		300	/* from a rank's exec to its first NCCL call */
#define NCCL_PLAN_TAIL_COLLECTIVES	4	/* broadcast, all-gather, reduce-scatter, reduce */

#endif
