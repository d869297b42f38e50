// SPDX-License-Identifier: Apache-2.0
/* stripped DURATION: installed without symbols (debuginfo in a separate
 * build-id tree), burning CPU in stripped_work. */
#include "common.h"

NOINLINE unsigned long stripped_work(double secs)
{
	double end = now_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (now_s() < end)
		sink += spin_units(20);
	return sink;
}

int main(int argc, char **argv)
{
	return stripped_work(arg_seconds(argc, argv, 1, 5)) == 42;
}
