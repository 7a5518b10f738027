// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads with known behaviour for the integration tests. Each mode does
 * its work on a named thread, so the report's thread of that name carries
 * exactly the planted behaviour.
 *
 *   workload [--wait-signal] sleep            thread "sleeper": 5 x 100 ms sleeps
 *   workload [--wait-signal] hog SEC          threads "hog1", "hog2" spin SEC s on one CPU
 *   workload [--wait-signal] anon PAGES       thread "toucher" writes PAGES fresh pages
 *   workload [--wait-signal] filemap FILE PAGES
 *                                             thread "reader" reads PAGES pages of FILE
 *                                             mapped after evicting it from the page cache
 *   workload [--wait-signal] spawn PAGES      forks a child process that runs "anon PAGES"
 *   workload [--wait-signal] run SEC          thread "runner": 10 ms sleep + 5 ms spin, for SEC s
 *   workload [--wait-signal] cachescan FILE PASSES
 *                                             thread "scanner" evicts FILE from the page cache,
 *                                             then reads it PASSES times with read() (in a
 *                                             memory cgroup smaller than FILE: reclaim)
 *   workload [--wait-signal] faultloop SEC PAGES THREADS
 *                                             THREADS threads "faulter" map, write and unmap
 *                                             PAGES fresh pages over and over for SEC s
 *                                             (an event flood: one event per page)
 *   workload faultcount SEC PAGES [DUTY]      prints "ready", waits for SIGUSR1, then its
 *                                             main thread writes PAGES fresh pages over and
 *                                             over for SEC s counting its own page faults
 *                                             (getrusage), waits for SIGUSR1 again and
 *                                             prints "faults N": nothing else faults while
 *                                             it waits or works, so a tracer's events plus
 *                                             drops must be exactly N; DUTY (0-1): in
 *                                             bursts, DUTY of every 100 ms, asleep between
 *   workload [--wait-signal] forks N          forks N children that stay until all N exist,
 *                                             then reaps them and prints "forked N"
 *
 * --wait-signal: print "ready" and wait for SIGUSR1 before working (so a
 * tracer can attach to a process that already runs).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define PAGE 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void spin_until(double t)
{
	volatile unsigned long x = 0;

	while (now_s() < t)
		for (int i = 0; i < 1000; i++)
			x += i;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		sleep_ms(100);
	return NULL;
}

struct hog_arg {
	double seconds;
};

static void *hog(void *arg)
{
	struct hog_arg *h = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	spin_until(now_s() + h->seconds);
	return NULL;
}

static long pages_arg;
static const char *file_arg;

static void *toucher(void *arg)
{
	size_t len = (size_t)pages_arg * PAGE;
	char *p;

	(void)arg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	/* One fault per page: no transparent huge pages. */
	madvise(p, len, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages_arg; i++)
		p[i * PAGE] = 1;
	munmap(p, len);
	return NULL;
}

static void *reader(void *arg)
{
	size_t len = (size_t)pages_arg * PAGE;
	volatile char sum = 0;
	char *p;
	int fd;

	(void)arg;
	fd = open(file_arg, O_RDONLY);
	if (fd < 0)
		die("open");
	/* Evict this file's pages so that the reads below must do I/O. */
	if (fdatasync(fd) && errno != EINVAL)
		die("fdatasync");
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("posix_fadvise");
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	/* No readahead: each page is its own major fault. */
	madvise(p, len, MADV_RANDOM);
	for (long i = 0; i < pages_arg; i++)
		sum += p[i * PAGE];
	munmap(p, len);
	close(fd);
	return NULL;
}

static void make_file(const char *path, long pages)
{
	char buf[PAGE];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die("create file");
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < pages; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			die("write file");
	if (fsync(fd))
		die("fsync");
	close(fd);
}

static long passes_arg;

static void *scanner(void *arg)
{
	static char buf[1 << 20];
	ssize_t n;
	int fd;

	(void)arg;
	fd = open(file_arg, O_RDONLY);
	if (fd < 0)
		die("open");
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("posix_fadvise");
	for (long i = 0; i < passes_arg; i++) {
		if (lseek(fd, 0, SEEK_SET))
			die("lseek");
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			die("read");
	}
	close(fd);
	return NULL;
}

static double run_seconds;

static void *faulter(void *arg)
{
	double end = now_s() + run_seconds;
	unsigned long *rounds = arg;

	while (now_s() < end) {
		toucher(NULL);
		(*rounds)++;
	}
	return NULL;
}

static void *runner(void *arg)
{
	double end = now_s() + run_seconds;

	(void)arg;
	while (now_s() < end) {
		sleep_ms(10);
		spin_until(now_s() + 0.005);
	}
	return NULL;
}

static void run_thread(const char *name, void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if ((errno = pthread_create(&t, NULL, fn, arg)))
		die("pthread_create");
	pthread_setname_np(t, name);
	pthread_join(t, NULL);
}

/* Everything that could fault is done before "ready": the mapping, the
 * first clock read (the vDSO's data page), the rusage structs, stdout's
 * buffer; then only the pages written fault. */
static void faultcount(double seconds, long pages, double duty)
{
	size_t len = (size_t)pages * PAGE;
	struct rusage r0, r1;
	double end;
	sigset_t set;
	char *p;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(&r0, 0, sizeof(r0));
	memset(&r1, 0, sizeof(r1));
	getrusage(RUSAGE_SELF, &r0);
	getrusage(RUSAGE_SELF, &r1);
	end = now_s();
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	getrusage(RUSAGE_SELF, &r0);
	end = now_s() + seconds;
	while (now_s() < end) {
		double burst = duty < 1 ? now_s() + duty * 0.1 : end;
		struct timespec rest = { 0, (long)((1 - duty) * 1e8) };

		do {
			for (long i = 0; i < pages; i++)
				p[i * PAGE] = 1;
			madvise(p, len, MADV_DONTNEED);
		} while (now_s() < burst);
		if (duty < 1)
			nanosleep(&rest, NULL);
	}
	getrusage(RUSAGE_SELF, &r1);
	sigwait(&set, &sig);
	printf("faults %ld\n", (r1.ru_minflt - r0.ru_minflt) + (r1.ru_majflt - r0.ru_majflt));
}

/* N children alive at once: each waits for the pipe to close. */
static void forks(int n)
{
	int fds[2], made = 0;
	char c;

	if (pipe(fds))
		die("pipe");
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(fds[1]);
			if (read(fds[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		made++;
	}
	close(fds[1]);
	close(fds[0]);
	while (made && wait(NULL) > 0)
		made--;
	printf("forked %d\n", n);
}

static void usage(void)
{
	fprintf(stderr, "usage: workload [--wait-signal] sleep | hog SEC | anon PAGES | "
			"filemap FILE PAGES | cachescan FILE PASSES | spawn PAGES | run SEC | faultloop SEC PAGES THREADS | "
			"faultcount SEC PAGES [DUTY] | forks N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int a = 1;

	if (argc > a && strcmp(argv[a], "--wait-signal") == 0) {
		sigset_t set;
		int sig;

		a++;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready\n");
		fflush(stdout);
		sigwait(&set, &sig);
	}
	if (argc <= a)
		usage();
	if (strcmp(argv[a], "sleep") == 0) {
		run_thread("sleeper", sleeper, NULL);
	} else if (strcmp(argv[a], "hog") == 0 && argc > a + 1) {
		struct hog_arg h = { atof(argv[a + 1]) };
		pthread_t t1, t2;

		pthread_create(&t1, NULL, hog, &h);
		pthread_setname_np(t1, "hog1");
		pthread_create(&t2, NULL, hog, &h);
		pthread_setname_np(t2, "hog2");
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
	} else if (strcmp(argv[a], "anon") == 0 && argc > a + 1) {
		pages_arg = atol(argv[a + 1]);
		run_thread("toucher", toucher, NULL);
	} else if (strcmp(argv[a], "filemap") == 0 && argc > a + 2) {
		file_arg = argv[a + 1];
		pages_arg = atol(argv[a + 2]);
		make_file(file_arg, pages_arg);
		run_thread("reader", reader, NULL);
	} else if (strcmp(argv[a], "cachescan") == 0 && argc > a + 2) {
		file_arg = argv[a + 1];
		passes_arg = atol(argv[a + 2]);
		run_thread("scanner", scanner, NULL);
	} else if (strcmp(argv[a], "spawn") == 0 && argc > a + 1) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			pages_arg = atol(argv[a + 1]);
			run_thread("toucher", toucher, NULL);
			_exit(0);
		}
		waitpid(pid, &status, 0);
	} else if (strcmp(argv[a], "faultloop") == 0 && argc > a + 3) {
		int n = atoi(argv[a + 3]);
		pthread_t t[64];
		unsigned long rounds[64] = { 0 }, total = 0;
		double t0 = now_s();

		run_seconds = atof(argv[a + 1]);
		pages_arg = atol(argv[a + 2]);
		if (n < 1 || n > 64)
			usage();
		for (int i = 0; i < n; i++) {
			pthread_create(&t[i], NULL, faulter, &rounds[i]);
			pthread_setname_np(t[i], "faulter");
		}
		for (int i = 0; i < n; i++) {
			pthread_join(t[i], NULL);
			total += rounds[i];
		}
		printf("faults %lu rate %.0f\n", total * pages_arg, total * pages_arg / (now_s() - t0));
	} else if (strcmp(argv[a], "faultcount") == 0 && argc > a + 2 && a == 1) {
		faultcount(atof(argv[a + 1]), atol(argv[a + 2]), argc > a + 3 ? atof(argv[a + 3]) : 1);
	} else if (strcmp(argv[a], "forks") == 0 && argc > a + 1) {
		forks(atoi(argv[a + 1]));
	} else if (strcmp(argv[a], "run") == 0 && argc > a + 1) {
		run_seconds = atof(argv[a + 1]);
		run_thread("runner", runner, NULL);
	} else {
		usage();
	}
	return 0;
}
