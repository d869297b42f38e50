// SPDX-License-Identifier: Apache-2.0
/*
 * clocks DURATION: reads the time in a tight loop (clock_gettime and
 * gettimeofday), so that most samples land in the kernel's vDSO, the code
 * no file on any workstation holds.
 */
#include <sys/time.h>
#include "common.h"

static volatile unsigned long sink;

NOINLINE static void read_clocks(double until)
{
	struct timespec ts;
	struct timeval tv;

	KEEP_FRAME();
	do {
		clock_gettime(CLOCK_REALTIME, &ts);
		gettimeofday(&tv, NULL);
		sink += (unsigned long)ts.tv_nsec + (unsigned long)tv.tv_usec;
	} while (now_s() < until);
}

int main(int argc, char **argv)
{
	double dur = arg_seconds(argc, argv, 1, 2);

	read_clocks(now_s() + dur);
	return 0;
}
