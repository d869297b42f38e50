// SPDX-License-Identifier: Apache-2.0
/* libuwdl.so: opened late by the unwind workload's dlopen mode; built
 * without frame pointers, as the workload itself. */
#include "common.h"

#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

KEEP static unsigned long uw_dl_leaf(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

KEEP unsigned long uw_dl_work(double end)
{
	unsigned long x = 1;

	while (process_cpu_s() < end)
		for (int i = 0; i < 100; i++)
			x = uw_dl_leaf(x);
	return x;
}
