// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test tool (static, for the GPU machine): loads a library into a running
 * process with user/inject/inject.c and says where it ran.
 *
 *   inject_cli PID /ABSOLUTE/PATH/lib.so
 *
 * Prints "injected handle=0x... tid=T comm=C syscall=N restarted=0|1
 * held_ms=M" and exits 0, or prints the refusal and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject.h"

int main(int argc, char **argv)
{
	struct inject_result r = { 0 };
	char err[1024] = "", path[64], comm[64] = "?", *end;
	long pid;
	FILE *f;
	int e;

	if (argc != 3) {
		fprintf(stderr, "usage: inject_cli PID /ABSOLUTE/PATH/lib.so\n");
		return 2;
	}
	pid = strtol(argv[1], &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "inject_cli: bad pid \"%s\"\n", argv[1]);
		return 2;
	}
	e = inject__dlopen_opts((pid_t)pid, argv[2], NULL, &r, err, sizeof(err));
	if (e) {
		fprintf(stderr, "inject_cli: %s (%s)\n", err, strerror(-e));
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%ld/task/%d/comm", pid, r.tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	printf("injected handle=0x%llx tid=%d comm=%s syscall=%ld restarted=%d held_ms=%.3f\n",
	       (unsigned long long)r.handle, r.tid, comm, r.syscall_nr, r.syscall_restarts, r.held_ns / 1e6);
	return 0;
}
