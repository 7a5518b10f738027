// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test tool: runs a command and prints its peak resident set size and
 * wall time, for tests/integration/test_stream.c and tests/bench/.
 *
 *   peak_rss CMD [ARG...]      prints "PEAK_KIB WALL_S", exits as CMD did
 *
 * A process's peak RSS counts the memory it had before an exec, so a
 * command started straight from a large process (a sanitized test) would
 * report the test's size: this small program in between starts it afresh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: peak_rss CMD [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("peak_rss: fork");
		return 2;
	}
	if (!pid) {
		execvp(argv[1], argv + 1);
		perror("peak_rss: exec");
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("peak_rss: wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%ld %.3f\n", ru.ru_maxrss,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
