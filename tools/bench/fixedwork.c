// SPDX-License-Identifier: Apache-2.0
/*
 * bench_fixedwork ITERATIONS [THREADS]: a FIXED amount of CPU work (not a
 * fixed time), for measuring how much a profiler slows a program down.
 * Each of THREADS threads (default 2: both CPUs of the benchmark box) runs
 * ITERATIONS rounds of a small call tree (parse -> hash -> mix -> reduce,
 * all noinline, frame pointers kept so profilers walk real stacks), then
 * the program prints its elapsed wall time in seconds on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define BUF 2048

static unsigned long iterations;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static void fill(uint8_t *b, uint32_t seed)
{
	for (int i = 0; i < BUF; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
}

NOINLINE static uint64_t hash(const uint8_t *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

NOINLINE static uint64_t mix(uint8_t *b, uint64_t h)
{
	for (int i = 0; i < BUF; i += 8) {
		uint64_t v;

		memcpy(&v, b + i, 8);
		v ^= h;
		v *= 0x9e3779b97f4a7c15ULL;
		h = v ^ (v >> 29);
		memcpy(b + i, &v, 8);
	}
	return h;
}

NOINLINE static uint64_t reduce(const uint8_t *b)
{
	uint64_t s = 0;

	for (int i = 0; i < BUF; i++)
		s += (uint64_t)b[i] * (uint64_t)(i | 1);
	return s;
}

NOINLINE static uint64_t round_once(uint8_t *b, uint32_t seed)
{
	fill(b, seed);
	uint64_t h = hash(b, BUF);

	h = mix(b, h);
	return h + reduce(b);
}

NOINLINE static void *worker(void *arg)
{
	uint8_t b[BUF];
	uint64_t acc = (uint64_t)(uintptr_t)arg;

	for (unsigned long i = 0; i < iterations; i++)
		acc += round_once(b, (uint32_t)(i + acc));
	return (void *)(uintptr_t)(acc & 1);
}

int main(int argc, char **argv)
{
	char *end;
	long threads = 2;
	pthread_t tid[64];
	uintptr_t sink = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s ITERATIONS [THREADS]\n", argv[0]);
		return 2;
	}
	errno = 0;
	iterations = strtoul(argv[1], &end, 10);
	if (errno || *end || end == argv[1]) {
		fprintf(stderr, "%s: bad ITERATIONS '%s'\n", argv[0], argv[1]);
		return 2;
	}
	if (argc > 2) {
		threads = strtol(argv[2], &end, 10);
		if (*end || threads < 1 || threads > 64) {
			fprintf(stderr, "%s: THREADS must be 1..64\n", argv[0]);
			return 2;
		}
	}
	double t0 = now_s();

	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)(i + 1))) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < threads; i++) {
		void *r;

		pthread_join(tid[i], &r);
		sink += (uintptr_t)r;
	}
	printf("%.6f\n", now_s() - t0);
	return (int)(sink > (uintptr_t)threads);
}
