// SPDX-License-Identifier: Apache-2.0
/* libchurn.so: what bench_churn loads and unloads, copied N times by
 * tools/bench/run part 11.  Spins until the monotonic time `until`. */
#include <time.h>

__attribute__((noinline)) void churn_work(double until)
{
	struct timespec ts;

	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while (ts.tv_sec + ts.tv_nsec / 1e9 < until);
}
