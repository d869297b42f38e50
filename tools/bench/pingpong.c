// SPDX-License-Identifier: Apache-2.0
/*
 * pingpong.c - a context-switch-heavy workload for the off-CPU cost
 * (record/DESIGN.md, "Off-CPU and wall-clock time"): two threads pass a
 * byte back and forth over two pipes, both pinned to one CPU, so that
 * every pass is a sleep and a wake-up: two context switches per round
 * trip.  Prints round trips per second and context switches per second.
 *
 * SPIN > 0 paces it: the first thread computes SPIN loop iterations
 * between round trips, so that a profiler's cost per switch shows as the
 * throughput a program doing work between its switches loses, at a switch
 * rate the bench chooses (tools/bench/run calibrates SPIN for ~100,000
 * switches/s without a profiler; part 13).
 *
 * bench_pingpong SECONDS [CPU [SPIN]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static int cpu_arg;

/* Work the compiler cannot drop or fold: one iteration, one add. */
static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		__asm__ __volatile__("" : : "r"(i) : "memory");
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	pin(cpu_arg);
	while (read(ab[0], &c, 1) == 1 && c)
		if (write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, t;
	unsigned long n = 0, work;
	pthread_t th;
	char c = 1;

	cpu_arg = argc > 2 ? atoi(argv[2]) : 0;
	work = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, pong, NULL))
		return 1;
	pin(cpu_arg);
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				return 1;
			spin(work);
		}
		t = now();
	} while (t - t0 < secs);
	c = 0;
	if (write(ab[1], &c, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	printf("%.0f round trips/s, %.0f switches/s\n", n / (t - t0), 2 * n / (t - t0));
	return 0;
}
