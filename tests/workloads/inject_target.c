// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process to inject a library into, with one thread in each state the
 * injector must handle:
 *
 *   inject_target STATE_FILE [--seccomp]
 *
 * a spinner counting in user space; a reader blocked in read() on fd 3 (a
 * pipe the test writes to); a sleeper in a loop of 500 ms nanosleeps that
 * checks each one lasted its full time; and the main thread blocked in
 * waitpid() on a child that pauses until the test kills it. A SIGUSR1
 * handler (SA_RESTART) counts its runs. Progress goes to STATE_FILE
 * (struct inject_state). --seccomp installs an allow-all seccomp filter
 * first. Runs until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "inject_state.h"

static struct inject_state *st;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_usr1(int sig)
{
	(void)sig;
	st->usr1_tid = gettid();
	st->usr1_count++;
}

static void *spinner(void *arg)
{
	(void)arg;
	st->spinner_tid = gettid();
	for (;;)
		st->spins++;
	return NULL;
}

static void *reader(void *arg)
{
	unsigned char buf[4096];

	(void)arg;
	st->reader_tid = gettid();
	for (;;) {
		ssize_t n = read(3, buf, sizeof(buf));

		if (n == 0)
			break;
		if (n < 0) {
			st->read_errors++;
			continue;
		}
		for (ssize_t i = 0; i < n; i++)
			st->read_sum += buf[i];
		st->bytes_read += (uint64_t)n;
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec req = { INJECT_SLEEP_NS / 1000000000ull, INJECT_SLEEP_NS % 1000000000ull };

	(void)arg;
	st->sleeper_tid = gettid();
	for (;;) {
		uint64_t t0 = mono_ns(), took;
		int rc = nanosleep(&req, NULL);

		took = mono_ns() - t0;
		if (rc != 0 || took < INJECT_SLEEP_NS)
			st->short_sleeps++;
		else if (took - INJECT_SLEEP_NS > st->max_overshoot_ns)
			st->max_overshoot_ns = took - INJECT_SLEEP_NS;
		st->sleeps++;
	}
	return NULL;
}

static int allow_all_seccomp(void)
{
	struct sock_filter insn[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = insn };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pthread_t t;
	pid_t child;
	int fd, status;

	if (argc < 2 || (argc == 3 && strcmp(argv[2], "--seccomp") != 0) || argc > 3) {
		fprintf(stderr, "usage: inject_target STATE_FILE [--seccomp]\n");
		return 2;
	}
	if (argc == 3 && allow_all_seccomp() != 0) {
		perror("inject_target: seccomp");
		return 1;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(*st)) != 0) {
		perror("inject_target: state file");
		return 1;
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (st == MAP_FAILED) {
		perror("inject_target: mmap");
		return 1;
	}
	close(fd);
	sigaction(SIGUSR1, &sa, NULL);
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	st->child_pid = child;
	if (pthread_create(&t, NULL, spinner, NULL) || pthread_create(&t, NULL, reader, NULL) ||
	    pthread_create(&t, NULL, sleeper, NULL)) {
		fprintf(stderr, "inject_target: pthread_create failed\n");
		return 1;
	}
	while (!st->spinner_tid || !st->reader_tid || !st->sleeper_tid)
		usleep(1000);
	st->ready = 1;
	st->waited_pid = waitpid(child, &status, 0);
	st->waited_errno = st->waited_pid < 0 ? errno : 0;
	st->waited_status = status;
	for (;;)
		pause();
}
