// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nccl_straggler: the rank whose late arrivals at NCCL collectives kept the
 * others waiting, with the host reason from its own timeline. Its findings
 * need every rank's calls, which one recording may not hold: the ranks
 * stage (analysis/ranks.c) makes them once the explanation of each
 * recording is done. Listed here for its id and heading.
 */
#include "rules.h"

const struct rule rule_nccl_straggler = {
	.id = "nccl_straggler",
	.title = "A rank kept the others waiting at NCCL collectives",
	.phase = RULE_PHASE_CAUSE,
};
