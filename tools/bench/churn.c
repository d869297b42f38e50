// SPDX-License-Identifier: Apache-2.0
/*
 * bench_churn: the workloads of tools/bench/run part 11 (mapping churn).
 *
 *   bench_churn churn DIR N RATE SECONDS
 *       every 1/RATE s, dlopen DIR/libchurnK.so (K = 0..N-1 in turn), run
 *       its churn_work until the slot ends, dlclose it: RATE libraries
 *       mapped and unmapped a second, on one CPU.  Prints the loads done.
 *   bench_churn syscalls COUNT
 *       COUNT getppid() calls; prints the CPU nanoseconds per call (what
 *       every system call pays while a tracepoint on some system call is
 *       on).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "syscalls")) {
		long n = atol(argv[2]);
		/* CPU time, not wall time: on a loaded machine the loop waits
		 * for a CPU, which says nothing about the system call */
		double t0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

		for (long i = 0; i < n; i++)
			syscall(SYS_getppid); /* not cached by libc */
		printf("%.1f\n", (clock_s(CLOCK_PROCESS_CPUTIME_ID) - t0) * 1e9 / (n ? n : 1));
		return 0;
	}
	if (argc != 6 || strcmp(argv[1], "churn")) {
		fprintf(stderr, "usage: bench_churn churn DIR N RATE SECONDS | syscalls COUNT\n");
		return 2;
	}
	int n = atoi(argv[3]);
	double rate = atof(argv[4]), secs = atof(argv[5]), start = now(), slot;
	unsigned long loads = 0;
	char path[PATH_MAX];

	if (n <= 0 || rate <= 0) {
		fprintf(stderr, "bench_churn: N and RATE must be positive\n");
		return 2;
	}
	slot = 1 / rate;
	for (double t = start; t - start < secs; t += slot) {
		void (*work)(double);
		void *h;

		snprintf(path, sizeof(path), "%s/libchurn%lu.so", argv[2], loads % n);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "bench_churn: %s\n", dlerror());
			return 1;
		}
		*(void **)&work = dlsym(h, "churn_work");
		if (work)
			work(t + slot);
		dlclose(h);
		loads++;
	}
	printf("%lu\n", loads);
	return 0;
}
