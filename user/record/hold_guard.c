// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <linux/types.h>
#include "hold_guard.h"

/* Every descriptor but a and b closed. */
static void close_all_but(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		close_range(3, (unsigned int)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned int)lo + 1, (unsigned int)hi - 1, 0);
	close_range((unsigned int)hi + 1, ~0U, 0);
}

/* The watcher: waits for the recorder's end, then lets go every process
 * the map still holds. */
static void __attribute__((noreturn)) watch(int held_fd, int rfd)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP };
	char c;
	size_t i;
	int null;

	close_all_but(held_fd, rfd);
	/* whoever reads the recorder's output is not kept waiting by it */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	setsid();
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	prctl(PR_SET_NAME, "inferscope-hold");
	for (;;) {
		ssize_t n = read(rfd, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	hold_guard__release_all(held_fd);
	_exit(0);
}

void hold_guard__release_all(int held_fd)
{
	__u32 pid;

	while (bpf_map_get_next_key(held_fd, NULL, &pid) == 0) {
		kill((pid_t)pid, SIGCONT);
		if (bpf_map_delete_elem(held_fd, &pid))
			break;
	}
}

int hold_guard__start(struct hold_guard *g, int held_fd)
{
	int p[2], e;
	pid_t pid;

	*g = HOLD_GUARD_NONE;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[1]);
		watch(held_fd, p[0]);
	}
	close(p[0]);
	g->pid = pid;
	g->fd = p[1];
	return 0;
}

void hold_guard__stop(struct hold_guard *g)
{
	if (g->fd >= 0)
		close(g->fd);
	if (g->pid > 0)
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
	*g = HOLD_GUARD_NONE;
}
