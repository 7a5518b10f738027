// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process that loads libcuda late, with dlopen, the way PyTorch does:
 *
 *   cuda_dlopen LIBCUDA N
 *
 * prints "ready" and waits for SIGUSR1 (a tracer attaches meanwhile, to a
 * process with no libcuda mapped), then dlopens LIBCUDA, waits 2.5 s (the
 * recorder rescans the targets' maps once a second) and calls
 * cuLaunchKernel N times.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*launch_fn)(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
			 unsigned int by, unsigned int bz, unsigned int shared, void *stream, void **params,
			 void **extra);

int main(int argc, char **argv)
{
	struct timespec wait = { 2, 500000000L };
	launch_fn launch;
	sigset_t set;
	void *lib;
	int sig, n;

	if (argc != 3) {
		fprintf(stderr, "usage: cuda_dlopen LIBCUDA N\n");
		return 2;
	}
	n = atoi(argv[2]);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cuda_dlopen: %s\n", dlerror());
		return 1;
	}
	launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
	if (!launch) {
		fprintf(stderr, "cuda_dlopen: %s\n", dlerror());
		return 1;
	}
	nanosleep(&wait, NULL);
	for (int i = 0; i < n; i++)
		if (launch((void *)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL))
			return 1;
	return 0;
}
