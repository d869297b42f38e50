// SPDX-License-Identifier: Apache-2.0
/* libdlwork.so: loaded by dlopener in the middle of its run. */
#include "common.h"

NOINLINE unsigned long dl_work(double secs)
{
	double end = now_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (now_s() < end)
		sink += spin_units(20);
	return sink;
}
