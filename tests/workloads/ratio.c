// SPDX-License-Identifier: Apache-2.0
/*
 * ratio DURATION [THREADS]: func_a and func_b burn CPU in a 1:3 ratio
 * (alternating chunks of N and 3N work units) on THREADS threads (default
 * 1; 2 keeps both CPUs of a 2-core box busy).  Each thread runs DURATION
 * of its own CPU time, not of wall time: on a busy machine the run takes
 * longer, but its samples (the sampler counts CPU time) are what an idle
 * machine gives.
 */
#include <pthread.h>
#include "common.h"

#define N 200

static double cpu_secs;

NOINLINE unsigned long func_a(void)
{
	KEEP_FRAME();
	return spin_units(N);
}

NOINLINE unsigned long func_b(void)
{
	KEEP_FRAME();
	return spin_units(3 * N);
}

NOINLINE static void *worker(void *arg)
{
	unsigned long sink = 0;

	KEEP_FRAME();
	while (thread_cpu_s() < cpu_secs) {
		sink += func_a();
		sink += func_b();
	}
	return (void *)sink;
}

int main(int argc, char **argv)
{
	long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
	pthread_t tid[64];

	if (threads < 1 || threads > 64) {
		fprintf(stderr, "ratio: THREADS must be 1..64\n");
		return 2;
	}
	cpu_secs = arg_seconds(argc, argv, 1, 5);
	for (long i = 1; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, NULL);
	worker(NULL);
	for (long i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
