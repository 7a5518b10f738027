/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef INFERSCOPE_VERDICT_H
#define INFERSCOPE_VERDICT_H

#include <stddef.h>

struct rule_ctx;

#define VERDICT_BUSY_SHARE	0.8	/* of a device's active time, busy */
#define VERDICT_SYNC_SHARE	0.5	/* of a launcher's active time, in synchronizations */
#define VERDICT_LEN		320

/* After the rules: where no finding is a warning or critical, a sentence
 * saying the GPU set the pace and the host kept up, when the recording
 * shows it (buf empty otherwise). 0. */
int verdict__make(const struct rule_ctx *c, char *buf, size_t len);

#endif
