// SPDX-License-Identifier: Apache-2.0
/*
 * libswapa.so and libswapb.so: the same code under two names (SWAP_FN is
 * swap_a_work or swap_b_work, names of one length), so that the two
 * libraries have the same layout and the loader puts the second where the
 * first was.  dlswap loads them in turn.
 */
#include "common.h"

#ifndef SWAP_FN
#error "SWAP_FN: the function's name"
#endif

NOINLINE unsigned long SWAP_FN(double secs)
{
	double end = process_cpu_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (process_cpu_s() < end)
		sink += spin_units(20);
	return sink;
}
