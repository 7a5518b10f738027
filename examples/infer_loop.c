// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in for an inference server's main loop, for `make demo`: a
 * "loader" thread prepares batches (fresh buffers -> page faults, plus a
 * simulated 15 ms read), the "infer" thread computes on each batch, and two
 * "postproc" workers burn CPU on the results. The loader is the bottleneck:
 * infer spends most of its time blocked waiting for the next batch, which
 * is what the report should show.
 *
 *   infer_loop [SECONDS]   (default 3)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#define BATCH_BYTES (8u << 20)
#define QUEUE_DEPTH 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER, space = PTHREAD_COND_INITIALIZER;
static char *queue[QUEUE_DEPTH];
static int queued, done;
static double end_time;
static unsigned long batches, results;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burn(double seconds)
{
	double end = now_s() + seconds;
	volatile double x = 1.0;

	while (now_s() < end)
		for (int i = 0; i < 2000; i++)
			x = x * 1.0000001 + 1e-9;
}

static void *loader(void *arg)
{
	(void)arg;
	while (now_s() < end_time) {
		char *buf = mmap(NULL, BATCH_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct timespec io = { 0, 15 * 1000000L };

		if (buf == MAP_FAILED)
			break;
		madvise(buf, BATCH_BYTES, MADV_NOHUGEPAGE);
		nanosleep(&io, NULL);			/* "reading" the batch */
		memset(buf, 1, BATCH_BYTES);		/* decoding it: fresh pages */
		pthread_mutex_lock(&lock);
		while (queued == QUEUE_DEPTH)
			pthread_cond_wait(&space, &lock);
		queue[queued++] = buf;
		pthread_cond_signal(&ready);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&ready);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *postproc(void *arg)
{
	(void)arg;
	while (now_s() < end_time) {
		burn(0.004);
		__atomic_add_fetch(&results, 1, __ATOMIC_RELAXED);
		struct timespec ts = { 0, 2 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	pthread_t l, p1, p2;

	if (!(seconds > 0)) {
		fprintf(stderr, "usage: infer_loop [SECONDS]\n");
		return 2;
	}
	end_time = now_s() + seconds;
	pthread_setname_np(pthread_self(), "infer");
	pthread_create(&l, NULL, loader, NULL);
	pthread_setname_np(l, "loader");
	pthread_create(&p1, NULL, postproc, NULL);
	pthread_setname_np(p1, "postproc");
	pthread_create(&p2, NULL, postproc, NULL);
	pthread_setname_np(p2, "postproc");
	for (;;) {
		char *buf;

		pthread_mutex_lock(&lock);
		while (!queued && !done)
			pthread_cond_wait(&ready, &lock);
		if (!queued) {
			pthread_mutex_unlock(&lock);
			break;
		}
		buf = queue[0];
		queue[0] = queue[1];
		queued--;
		pthread_cond_signal(&space);
		pthread_mutex_unlock(&lock);
		burn(0.003);				/* the "model" */
		munmap(buf, BATCH_BYTES);
		batches++;
	}
	pthread_join(l, NULL);
	pthread_join(p1, NULL);
	pthread_join(p2, NULL);
	printf("infer_loop: %lu batches, %lu post-processed results in %.1f s\n", batches, results, seconds);
	return 0;
}
