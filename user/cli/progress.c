// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The progress line (progress.h): a thread that passes the process's
 * terminal output on through pipes and draws the line between.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"

#define TICK_MS 250

/* One output passed on: the pipe the process now writes into, and the
 * descriptor it wrote to before. */
struct relay {
	int pipe;		/* read end; -1 once it is closed */
	int saved;		/* the terminal (a duplicate of fd before) */
	int fd;			/* 1 or 2 */
};

struct progress {
	pthread_t thread;
	struct relay out[2];	/* [0] standard error, [1] standard output (when a terminal) */
	size_t nout;
	char who[64];
	unsigned long long total;	/* the inputs' size; 0: unknown (a pipe) */
	unsigned long long read0;	/* the process's bytes read at the start */
	unsigned long long relayed;	/* bytes the thread read from the pipes (not the work's) */
	double start;
	bool drawn;		/* the line is on the terminal */
	char shown[256];	/* as drawn */
	bool line_open;		/* the last output passed on did not end a line */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The bytes this process has read (rchar: every read(), from files and
 * pipes); 0 when /proc/self/io cannot be read. */
static unsigned long long bytes_read(void)
{
	unsigned long long v = 0;
	char line[128];
	FILE *f = fopen("/proc/self/io", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;		/* the terminal is gone: the output with it */
		p += w;
		n -= (size_t)w;
	}
}

static void human(char *out, size_t len, unsigned long long bytes)
{
	if (bytes >= 1ull << 30)
		snprintf(out, len, "%.2f GiB", bytes / (double)(1ull << 30));
	else
		snprintf(out, len, "%.1f MiB", bytes / (double)(1ull << 20));
}

static void erase(struct progress *p)
{
	if (p->drawn)
		write_all(p->out[0].saved, "\r\033[K", 4);
	p->drawn = false;
}

static void draw(struct progress *p)
{
	unsigned long long rd = bytes_read(), work = rd > p->read0 + p->relayed ? rd - p->read0 - p->relayed : 0;
	char line[256], got[32], total[32];
	struct winsize ws;
	int n;

	human(got, sizeof(got), work);
	human(total, sizeof(total), p->total);
	n = snprintf(line, sizeof(line), "\r%s: %.0f s, %s read%s%s%s\033[K", p->who, now_s() - p->start, got,
		     p->total ? " (the input: " : "", p->total ? total : "", p->total ? ")" : "");
	/* one line of the terminal, never wrapped: "\r" must reach its start */
	if (ioctl(p->out[0].saved, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 && n - 4 > ws.ws_col - 1)
		memcpy(line + 1 + ws.ws_col - 1, "\033[K", 4);
	if (p->drawn && !strcmp(line, p->shown))
		return;
	write_all(p->out[0].saved, line, strlen(line));
	memcpy(p->shown, line, sizeof(line));
	p->drawn = true;
}

/* Passes what arrived on r on; false at its end. */
static bool relay(struct progress *p, struct relay *r)
{
	char buf[65536];
	ssize_t n = read(r->pipe, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	p->relayed += (unsigned long long)n;
	erase(p);
	write_all(r->saved, buf, (size_t)n);
	p->line_open = buf[n - 1] != '\n';
	return true;
}

static void *run(void *arg)
{
	struct progress *p = arg;
	size_t open = p->nout;

	while (open) {
		struct pollfd pfd[2];

		for (size_t i = 0; i < p->nout; i++)
			pfd[i] = (struct pollfd){ .fd = p->out[i].pipe, .events = POLLIN };
		if (poll(pfd, (nfds_t)p->nout, TICK_MS) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < p->nout; i++) {
			if (p->out[i].pipe < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!relay(p, &p->out[i])) {
				close(p->out[i].pipe);
				p->out[i].pipe = -1;
				open--;
			}
		}
		if (open == p->nout && !p->line_open && now_s() - p->start >= PROGRESS_AFTER_S)
			draw(p);
	}
	erase(p);
	return NULL;
}

/* fd's output goes into a new pipe from now on; its terminal is kept in
 * r->saved. -errno. */
static int divert(struct relay *r, int fd)
{
	int pp[2];

	r->saved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (r->saved < 0)
		return -errno;
	if (pipe2(pp, O_CLOEXEC)) {
		int e = -errno;

		close(r->saved);
		return e;
	}
	if (dup2(pp[1], fd) < 0) {
		int e = -errno;

		close(pp[0]);
		close(pp[1]);
		close(r->saved);
		return e;
	}
	close(pp[1]);
	r->pipe = pp[0];
	r->fd = fd;
	return 0;
}

static void restore(struct relay *r)
{
	dup2(r->saved, r->fd);	/* closes the pipe's write end: the thread sees its end */
}

struct progress *progress__begin(const char *who, const char *const *paths, size_t n, bool quiet)
{
	struct progress *p;

	if (quiet || !isatty(STDERR_FILENO))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	snprintf(p->who, sizeof(p->who), "%s", who);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
			p->total += (unsigned long long)st.st_size;
	}
	p->start = now_s();
	p->read0 = bytes_read();
	fflush(stdout);
	fflush(stderr);
	if (divert(&p->out[0], STDERR_FILENO)) {
		free(p);
		return NULL;
	}
	p->nout = 1;
	if (isatty(STDOUT_FILENO) && divert(&p->out[1], STDOUT_FILENO) == 0)
		p->nout = 2;
	if (pthread_create(&p->thread, NULL, run, p)) {
		for (size_t i = 0; i < p->nout; i++) {
			restore(&p->out[i]);
			close(p->out[i].pipe);
			close(p->out[i].saved);
		}
		free(p);
		return NULL;
	}
	return p;
}

void progress__end(struct progress *p)
{
	if (!p)
		return;
	fflush(stdout);
	fflush(stderr);
	for (size_t i = 0; i < p->nout; i++)
		restore(&p->out[i]);
	pthread_join(p->thread, NULL);
	for (size_t i = 0; i < p->nout; i++)
		close(p->out[i].saved);
	free(p);
}
