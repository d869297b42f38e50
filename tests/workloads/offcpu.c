// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu.c - the off-CPU tests' workload (tests/report/offcpu.sh), built
 * -O2 -fomit-frame-pointer as distributions build, so that every blocked
 * stack crosses libc's system-call wrapper (clock_nanosleep), which has
 * no frame pointer either.
 *
 * offcpu [SECONDS]: one thread ("sleeper") alternates two blocks of known
 * length in two functions: sleep_long (30 ms) and sleep_short (10 ms),
 * so their true shares of its blocked time are 75 % and 25 %.  The main
 * thread waits for it in pthread_join (blocked the whole time).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "common.h"

static double seconds;

static NOINLINE void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
		;
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

NOINLINE void sleep_long(void)
{
	nap(30);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void sleep_short(void)
{
	nap(10);
	__asm__ volatile("" ::: "memory");
}

static void *sleeper(void *arg)
{
	double end = now_s() + seconds;

	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	while (now_s() < end) {
		sleep_long();
		sleep_short();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	seconds = arg_seconds(argc, argv, 1, 5);
	if (pthread_create(&t, NULL, sleeper, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
