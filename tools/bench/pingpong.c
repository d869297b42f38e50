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
 * Paced, it also times each round's work (two vDSO clock reads, equal with
 * and without a profiler) and prints the work's share of the process's CPU
 * time (CLOCK_PROCESS_CPUTIME_ID: both threads, and the switches between
 * them, whose kernel time is charged to one or the other; the scheduler's
 * task clock leaves out what the hypervisor stole).  Why a share: on this
 * VM the speed of a CPU moves by up to 2x within a second (the host's
 * other guests: a bare loop takes 0.36-0.77 ns an iteration in 100 ms
 * windows), which moves the rate from run to run by more than a
 * profiler's cost; it moves the work and the switching nearly alike, so
 * their ratio moves much less (+-4 % where the rate moves +-15 %), and the
 * ratio of two runs' shares is the ratio of their rates at equal speed: a profiler that adds d seconds to a round of w
 * seconds of work and s of switching turns w/(w+s) into w/(w+s+d).  Why
 * CPU time: on a shared machine other tasks take turns on the CPU, and
 * they mostly do so at the switches, not in the work; their time is not
 * the process's.  A round whose work took over 4x the running mean was
 * preempted in it (another task's slice, ~ms) and counts the mean.
 * Also the rates by the wall clock and per CPU second (the rate with the
 * CPU to itself, at the speed it had).
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

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
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
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, t, c0, cpu, worked = 0, mean = 0;
	unsigned long n = 0, work;
	pthread_t th;
	char c = 1;

	cpu_arg = argc > 2 ? atoi(argv[2]) : 0;
	work = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, pong, NULL))
		return 1;
	pin(cpu_arg);
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				return 1;
			if (work) {
				double w0 = now();

				spin(work);
				w0 = now() - w0;
				if (mean && w0 > 4 * mean) {
					worked += mean; /* preempted */
				} else {
					worked += w0;
					mean += (w0 - mean) / (mean ? 64 : 1);
				}
			}
		}
		t = now();
	} while (t - t0 < secs);
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	c = 0;
	if (write(ab[1], &c, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	printf("%.0f round trips/s, %.0f switches/s, %.0f round trips per CPU s, work share %.5f, %.3f CPU s in %.3f s\n",
	       n / (t - t0), 2 * n / (t - t0), n / cpu, worked / cpu, cpu, t - t0);
	return 0;
}
