// SPDX-License-Identifier: Apache-2.0
/*
 * threads SECONDS [rename]: two named threads of one process burn CPU in
 * different functions, for prof-report --threads (tests/report/threads.sh).
 * "alpha" runs burn_alpha, "beta" runs burn_beta, both the same function
 * below them (worker), so only the thread frame tells their samples apart
 * by thread; the main thread waits in pthread_join.  With "rename", beta
 * renames itself "gamma" halfway through: a row keeps the name its thread
 * had when it was sampled, so beta's tid shows under both names.
 * Each thread burns SECONDS of its own CPU time, not of wall time (and beta
 * renames itself at half of it): on a busy machine the run takes longer, but
 * each thread and each of beta's names gets the same share of samples,
 * since the sampler counts CPU time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

static double cpu_secs;
static int rename_beta;

NOINLINE unsigned long burn_alpha(void)
{
	KEEP_FRAME();
	return spin_units(100);
}

NOINLINE unsigned long burn_beta(void)
{
	KEEP_FRAME();
	return spin_units(100);
}

NOINLINE static void *worker(void *arg)
{
	const char *name = arg;
	int beta = strcmp(name, "beta") == 0, renamed = 0;
	unsigned long sink = 0;

	KEEP_FRAME();
	pthread_setname_np(pthread_self(), name);
	while (thread_cpu_s() < cpu_secs) {
		if (beta && rename_beta && !renamed && thread_cpu_s() >= cpu_secs / 2) {
			pthread_setname_np(pthread_self(), "gamma");
			renamed = 1;
		}
		sink += beta ? burn_beta() : burn_alpha();
	}
	return (void *)(uintptr_t)sink;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	cpu_secs = arg_seconds(argc, argv, 1, 3);
	rename_beta = argc > 2 && strcmp(argv[2], "rename") == 0;
	if (pthread_create(&a, NULL, worker, "alpha") || pthread_create(&b, NULL, worker, "beta")) {
		fprintf(stderr, "threads: pthread_create failed\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
