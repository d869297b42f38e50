// SPDX-License-Identifier: Apache-2.0
/*
 * offmix.c - the off-CPU benchmark's workload (tools/bench/run part 13,
 * issue 28's "Truth"): one thread per way of spending wall-clock time,
 * each named after it, each in a function of its own, for SECONDS:
 *   burn   on the CPU (a loop)                     in burn_loop
 *   nap    asleep (clock_nanosleep, 20 ms)         in nap_wait
 *   piper  blocked reading a pipe (a byte / 20 ms) in pipe_wait
 *   lock   waiting on a mutex held 20 ms at a time in mutex_wait
 *   runq1, runq2  both burning, pinned to one CPU: each waits for it
 *          about half the time (R with --wall)     in runq_loop
 * plus the helpers that feed the pipe and hold the mutex (they sleep).
 * Built -O2 -fomit-frame-pointer as distributions build: every blocked
 * stack crosses libc's system-call wrappers without frame pointers.
 *
 * bench_offmix SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double seconds;
static double t_end;
static int pfd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
		;
}

NOINLINE void burn_loop(void)
{
	while (now() < t_end)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * 7;
	__asm__ volatile("" ::: "memory");
}

NOINLINE void nap_wait(void)
{
	while (now() < t_end)
		ms_sleep(20);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void pipe_wait(void)
{
	char c;

	while (read(pfd[0], &c, 1) == 1 && c != 'q')
		;
	__asm__ volatile("" ::: "memory");
}

NOINLINE void mutex_wait(void)
{
	while (now() < t_end) {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
		sched_yield(); /* let the holder take it again */
	}
	__asm__ volatile("" ::: "memory");
}

NOINLINE void runq_loop(void)
{
	burn_loop();
	__asm__ volatile("" ::: "memory");
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *thread(void *arg)
{
	const char *what = arg;

	pthread_setname_np(pthread_self(), what);
	switch (what[0]) {
	case 'b': burn_loop(); break;
	case 'n': nap_wait(); break;
	case 'p': pipe_wait(); break;
	case 'l': mutex_wait(); break;
	case 'r': pin(sysconf(_SC_NPROCESSORS_ONLN) - 1); runq_loop(); break;
	case 'f': /* feeder: a byte every 20 ms, then 'q' */
		while (now() < t_end) {
			ms_sleep(20);
			if (write(pfd[1], "x", 1) != 1)
				break;
		}
		if (write(pfd[1], "q", 1) != 1)
			abort();
		break;
	case 'h': /* holder: the mutex 20 ms at a time, free 1 ms */
		while (now() < t_end) {
			pthread_mutex_lock(&mu);
			ms_sleep(20);
			pthread_mutex_unlock(&mu);
			ms_sleep(1);
		}
		break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "burn", "nap", "piper", "lock", "runq1", "runq2",
					     "feeder", "holder" };
	pthread_t t[8];

	seconds = argc > 1 ? atof(argv[1]) : 5;
	if (pipe(pfd))
		return 1;
	t_end = now() + seconds;
	for (int i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, thread, (void *)names[i]))
			return 1;
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", sink & 1);
	return 0;
}
