// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu.c - the off-CPU tests' workload (tests/report/offcpu.sh), built
 * -O2 -fomit-frame-pointer as distributions build, so that every blocked
 * stack crosses libc's system-call wrapper (clock_nanosleep), which has
 * no frame pointer either.
 *
 * offcpu [SECONDS]: one thread ("sleeper") alternates two blocks of known
 * length in two functions: sleep_long (30 ms) and sleep_short (10 ms),
 * so their true shares of its blocked time are 75 % and 25 %, and between
 * two rounds a nap of 0-4 ms in jitter(): without it the rounds' length
 * (40 ms and the wake-ups' latency) can stay near a multiple of the
 * sampling period, and the samples then fall on the same phase of every
 * round for seconds (at -F 49, 82 % to sleep_long once in 11 runs); with
 * it every round starts at another phase.  The main thread waits for it
 * in pthread_join (blocked the whole time).  On a busy machine each nap
 * lasts longer than asked (a woken thread waits for a CPU), the short one
 * relatively more: with OFFCPU_TIMES=FILE the sleeper writes the wall time
 * it spent in each ("long S short S jitter S"), the truth a test compares
 * the samples' split with.
 *
 * Fault cases (the recorder must neither crash nor invent time):
 * offcpu SECONDS churn N: N short-lived threads, 50 at a time, each
 *   blocking 1 ms twice (N x 2 ms of blocked time in all, or a little more);
 * offcpu SECONDS exec: a thread sleeps while the main thread, after
 *   SECONDS, execs /bin/sleep 0.2 (the sleeper dies blocked; with
 *   OFFCPU_TIMES=FILE, "exec S": the seconds the sleeper lived);
 * offcpu SECONDS long: a thread ("longnap") sleeps SECONDS in one call
 *   (sleep_whole), blocked through a whole recording that it outlives.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static double seconds;

static NOINLINE void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
		;
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

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

NOINLINE void jitter(unsigned *x)
{
	/* xorshift32: a fixed sequence, the same in every run */
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	nap_us((long)(*x % 4000));
	__asm__ volatile("" ::: "memory");
}

static void *sleeper(void *arg)
{
	double end = now_s() + seconds, t0, t1, t2, t3, in_long = 0, in_short = 0, in_jitter = 0;
	const char *times = getenv("OFFCPU_TIMES");
	unsigned x = 2463534242u;

	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	while ((t0 = now_s()) < end) {
		sleep_long();
		t1 = now_s();
		sleep_short();
		t2 = now_s();
		jitter(&x);
		t3 = now_s();
		in_long += t1 - t0;
		in_short += t2 - t1;
		in_jitter += t3 - t2;
	}
	if (times) {
		FILE *f = fopen(times, "w");

		if (f) {
			fprintf(f, "long %.6f short %.6f jitter %.6f\n", in_long, in_short, in_jitter);
			fclose(f);
		}
	}
	return NULL;
}

static void *blip(void *arg)
{
	(void)arg;
	nap(1);
	nap(1);
	return NULL;
}

NOINLINE void sleep_whole(void)
{
	nap((long)(seconds * 1000));
	__asm__ volatile("" ::: "memory");
}

static void *longnap(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "longnap");
	sleep_whole();
	return NULL;
}

static void *forever(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	for (;;)
		sleep_long();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	seconds = arg_seconds(argc, argv, 1, 5);
	if (argc > 3 && !strcmp(argv[2], "churn")) {
		long n = atol(argv[3]);
		pthread_t b[50];

		for (long i = 0; i < n; i += 50) {
			int k = n - i < 50 ? (int)(n - i) : 50;

			for (int j = 0; j < k; j++)
				if (pthread_create(&b[j], NULL, blip, NULL))
					return 1;
			for (int j = 0; j < k; j++)
				pthread_join(b[j], NULL);
		}
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "exec")) {
		struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };

		const char *times = getenv("OFFCPU_TIMES");
		double t0 = now_s();
		FILE *f;

		if (pthread_create(&t, NULL, forever, NULL))
			return 1;
		nanosleep(&ts, NULL);
		/* how long the sleeper lived: SECONDS, more on a busy host */
		if (times && (f = fopen(times, "w"))) {
			fprintf(f, "exec %.6f\n", now_s() - t0);
			fclose(f);
		}
		execl("/bin/sleep", "sleep", "0.2", (char *)NULL);
		return 1;
	}
	if (pthread_create(&t, NULL, argc > 2 && !strcmp(argv[2], "long") ? longnap : sleeper, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
