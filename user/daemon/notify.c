// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "notify.h"
#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#ifdef HAVE_LIBSYSTEMD
int notify__check(char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return 0;
}

int notify__send(const char *state)
{
	int e = sd_notify(0, state);

	return e < 0 ? e : 0;
}

__u64 notify__watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}
#else
int notify__check(char *err, size_t errlen)
{
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	snprintf(err, errlen, "this build of inferscope-bpf (the static one) has no libsystemd and cannot notify "
			      "the service manager (NOTIFY_SOCKET is set): install the one `make install` builds");
	return -ENOTSUP;
}

int notify__send(const char *state)
{
	(void)state;
	return 0;
}

__u64 notify__watchdog_usec(void)
{
	return 0;
}
#endif
