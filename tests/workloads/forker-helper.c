// SPDX-License-Identifier: Apache-2.0
/* forker-helper SECONDS: what forker's children exec: burn CPU briefly. */
#include "common.h"

NOINLINE unsigned long helper_work(double secs)
{
	double end = now_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (now_s() < end)
		sink += spin_units(10);
	return sink;
}

int main(int argc, char **argv)
{
	return helper_work(arg_seconds(argc, argv, 1, 0.02)) == 42;
}
