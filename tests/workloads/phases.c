// SPDX-License-Identifier: Apache-2.0
/*
 * phases [FIRST [SECOND]]: a workload whose phases are known in time:
 * phase_one burns CPU for FIRST seconds (default 2), then phase_two for
 * SECOND seconds (default 2).  Prints, on stderr, the CLOCK_REALTIME of
 * the switch ("switch_ns=N"), so that tests can place their --from/--to
 * exactly.
 */
#include <time.h>
#include "common.h"

NOIPA NOINLINE static unsigned long phase_one(double until)
{
	unsigned long sink = 0;

	KEEP_FRAME();
	while (now_s() < until)
		sink += spin_units(50);
	return sink;
}

NOIPA NOINLINE static unsigned long phase_two(double until)
{
	unsigned long sink = 0;

	KEEP_FRAME();
	while (now_s() < until)
		sink += spin_units(51); /* not phase_one's code: never folded into one */
	return sink;
}

int main(int argc, char **argv)
{
	double first = arg_seconds(argc, argv, 1, 2), second = arg_seconds(argc, argv, 2, 2);
	double t0 = now_s();
	unsigned long sink = phase_one(t0 + first);
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "switch_ns=%llu\n", (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	sink += phase_two(now_s() + second);
	return (int)(sink & 0);
}
