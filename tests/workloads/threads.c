// SPDX-License-Identifier: Apache-2.0
/*
 * threads SECONDS [rename]: two named threads of one process burn CPU in
 * different functions, for prof-report --threads (tests/report/threads.sh).
 * "alpha" runs burn_alpha, "beta" runs burn_beta, both the same function
 * below them (worker), so only the thread frame tells their samples apart
 * by thread; the main thread waits in pthread_join.  With "rename", beta
 * renames itself "gamma" halfway through: a row keeps the name its thread
 * had when it was sampled, so beta's tid shows under both names.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

static double deadline, halfway;
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
	while (now_s() < deadline) {
		if (beta && rename_beta && !renamed && now_s() >= halfway) {
			pthread_setname_np(pthread_self(), "gamma");
			renamed = 1;
		}
		sink += beta ? burn_beta() : burn_alpha();
	}
	return (void *)(uintptr_t)sink;
}

int main(int argc, char **argv)
{
	double dur = arg_seconds(argc, argv, 1, 3);
	pthread_t a, b;

	rename_beta = argc > 2 && strcmp(argv[2], "rename") == 0;
	deadline = now_s() + dur;
	halfway = now_s() + dur / 2;
	if (pthread_create(&a, NULL, worker, "alpha") || pthread_create(&b, NULL, worker, "beta")) {
		fprintf(stderr, "threads: pthread_create failed\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
