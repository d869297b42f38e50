/* SPDX-License-Identifier: Apache-2.0 */
/* common.h - helpers shared by the test workloads (header-only). */
#ifndef BPROF_WORKLOAD_COMMON_H
#define BPROF_WORKLOAD_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

/*
 * No interprocedural clones (.isra, .constprop) either, so that a test can
 * name the function it expects: gcc's noipa; clang (the ASan and fuzz
 * builds) has no such attribute and makes no such clones of a noinline
 * function.
 */
#if defined(__has_attribute)
#if __has_attribute(noipa)
#define NOIPA __attribute__((noipa))
#endif
#endif
#ifndef NOIPA
#define NOIPA
#endif

/*
 * First statement of every named function: GCC 12 sets up no frame in a
 * function that calls nothing, even with -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer, and a frame-pointer walk then loses the
 * leaf's caller.  Taking the frame address forces the frame.
 */
#define KEEP_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * CPU time of the calling thread, s.  A workload that must be sampled a
 * given number of times runs for CPU time, not wall time: the sampler counts
 * CPU time, so on a busy machine the run takes longer but its samples (and
 * their shares) stay what an idle machine gives.
 */
static inline double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the whole process, s: for a deadline that several threads
 * (or a library given it) share. */
static inline double process_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* argv[i] as seconds (default def); exits on garbage. */
static inline double arg_seconds(int argc, char **argv, int i, double def)
{
	char *end;
	double v;

	if (argc <= i)
		return def;
	errno = 0;
	v = strtod(argv[i], &end);
	if (errno || end == argv[i] || *end || v < 0 || v > 86400) {
		fprintf(stderr, "%s: invalid duration '%s' (seconds)\n", argv[0], argv[i]);
		exit(2);
	}
	return v;
}

/* Deterministic CPU work the compiler cannot drop. */
static inline unsigned long spin_units(unsigned long units)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < units * 1000; i++)
		acc += i ^ (acc >> 3);
	return acc;
}

#endif
