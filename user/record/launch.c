// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "launch.h"
#include "clock.h"

#define TERM_GRACE_NS	5000000000ULL

int launch__fork(struct launch *l, char **cmd, const struct launch_env *env, const struct run_as *as)
{
	int go[2], st[2], e;
	size_t i;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(st, O_CLOEXEC)) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	l->pid = fork();
	if (l->pid < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		close(st[0]);
		close(st[1]);
		return e;
	}
	if (l->pid == 0) {
		char c;

		close(go[1]);
		close(st[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up before starting us */
		for (i = 0; i < env->n; i++)
			if (setenv(env->name[i], env->value[i], 1))
				_exit(127);
		/* Its credentials, for good, or it does not run: a negative
		 * errno tells the recorder which step failed. */
		e = run_as__apply(as);
		if (!e) {
			execvp(cmd[0], cmd);
			e = errno;
		}
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	l->go_fd = go[1];
	l->status_fd = st[0];
	return 0;
}

int launch__release(struct launch *l)
{
	ssize_t n;
	int e = 0;

	if (write(l->go_fd, "g", 1) != 1)
		e = errno;
	close(l->go_fd);
	l->go_fd = -1;
	if (!e) {
		do
			n = read(l->status_fd, &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(e))
			e = 0;
	}
	close(l->status_fd);
	l->status_fd = -1;
	if (!e)
		return 0;
	/* It did not start: gone, nothing to stop at the end. */
	waitpid(l->pid, NULL, 0);
	l->pid = -1;
	l->cred_failed = e < 0;
	return e < 0 ? e : -e;
}

void launch__poll(struct launch *l)
{
	if (l->pid > 0 && !l->exited && waitpid(l->pid, &l->status, WNOHANG) == l->pid)
		l->exited = true;
}

/* SIGTERM, then SIGKILL after a grace period. */
static void launch__stop(struct launch *l)
{
	__u64 deadline = clock__mono_ns() + TERM_GRACE_NS;

	l->stopped = true;
	kill(l->pid, SIGTERM);
	while (clock__mono_ns() < deadline) {
		if (waitpid(l->pid, &l->status, WNOHANG) == l->pid) {
			l->exited = true;
			return;
		}
		usleep(20000);
	}
	kill(l->pid, SIGKILL);
	if (waitpid(l->pid, &l->status, 0) == l->pid)
		l->exited = true;
}

void launch__end(struct launch *l)
{
	if (l->pid <= 0)
		return;
	if (l->go_fd >= 0) {
		close(l->go_fd);
		if (l->status_fd >= 0)
			close(l->status_fd);
		waitpid(l->pid, NULL, 0);
		return;
	}
	launch__poll(l);
	if (!l->exited)
		launch__stop(l);
}
