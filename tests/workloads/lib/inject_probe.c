// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The library the injection tests load into inject_target. Its constructor
 * appends "pid TID" to the file named by INJECT_PROBE_MARKER (so the test
 * sees that it ran, once, and in which thread) and sends SIGUSR1 to its
 * own thread, which the injector must hold back and deliver after it has
 * put the thread back.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int inject_probe_loaded;

__attribute__((constructor)) static void inject_probe_init(void)
{
	const char *marker = getenv("INJECT_PROBE_MARKER");
	int fd;

	inject_probe_loaded = 1;
	if (!marker)
		return;
	fd = open(marker, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dprintf(fd, "%d %d\n", getpid(), gettid());
		close(fd);
	}
	tgkill(getpid(), gettid(), SIGUSR1);
}
