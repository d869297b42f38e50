// SPDX-License-Identifier: Apache-2.0
/* libdlwork.so: loaded by dlopener in the middle of its run; dl_work runs
 * SECS of the thread's CPU time (samples a busy machine does not thin). */
#include "common.h"

NOINLINE unsigned long dl_work(double secs)
{
	double end = thread_cpu_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (thread_cpu_s() < end)
		sink += spin_units(20);
	return sink;
}
