// SPDX-License-Identifier: Apache-2.0
/*
 * cbfp SECONDS (of CPU time): a program with frame pointers and no FDEs (built
 * -fno-omit-frame-pointer -fno-asynchronous-unwind-tables, as much code
 * is) whose work runs in callbacks from a library that has only CFI: libc's
 * qsort calls cmp, which calls work, which spins in spin_leaf (a leaf: gcc
 * gives it no frame).  The recorder's walk leaves spin_leaf by frame
 * pointer (skipping work, marked "[missing caller]"), cmp by frame pointer
 * too, and libc by its table: the report must keep the whole chain to
 * main (tests/report/cbfp.sh), as it must glib's main loop dispatching
 * into a program's callbacks.
 */
#include <stdlib.h>
#include <time.h>
#include "common.h"

static volatile unsigned long sink;

NOIPA void spin_leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

NOIPA void work(unsigned long n)
{
	spin_leaf(n);
	sink++;
}

NOIPA int cmp(const void *a, const void *b)
{
	work(20000);
	return *(const int *)a - *(const int *)b;
}

/* CPU time, not wall time: a busy machine makes the run longer, not poorer
 * in samples (the sampler counts CPU time) */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	int v[64];

	while (now() < end) {
		for (int i = 0; i < 64; i++)
			v[i] = (i * 7919) % 64;
		qsort(v, 64, sizeof(v[0]), cmp);
	}
	return 0;
}
