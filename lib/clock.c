// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "clock.h"

__u64 clock__now_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

__u64 clock__mono_ns(void)
{
	return clock__now_ns(CLOCK_MONOTONIC);
}
