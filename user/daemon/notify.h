/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The service manager's notifications (sd_notify(3) from libsystemd):
 * READY, STATUS, WATCHDOG, RELOADING, STOPPING. Outside systemd (no
 * NOTIFY_SOCKET) they do nothing. libsystemd has no static library on
 * Debian, so the static release binary is built without it: under a
 * Type=notify unit it could never say READY, and notify__check says so.
 */
#ifndef INFERSCOPE_NOTIFY_H
#define INFERSCOPE_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* 0, or -ENOTSUP with why in err: the service manager waits for
 * notifications that this build cannot send. */
int notify__check(char *err, size_t errlen);
/* Sends state ("READY=1\nSTATUS=...") to the service manager; 0 when
 * there is none. 0 or -errno. */
int notify__send(const char *state);
/* The watchdog interval the service manager asks for, in µs; 0: none. */
__u64 notify__watchdog_usec(void);

#endif
