/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --slice: the slice a sample falls in (bpf/profile.h, profile_slice_of,
 * which the BPF sampler and the off-CPU programs run) is a number, not a
 * window: a sample at base + k * slice_ns + d is in slice k for every
 * 0 <= d < slice_ns, exactly (issue 50: samples put in the slice after
 * their own passed export_timeslices, which allows 200 ms of slack).
 */
#include <criterion/criterion.h>
#include <linux/types.h>
#include <stdint.h>

#include "profile.h"

#define MS 1000000ULL

Test(slice_of, at_and_around_every_boundary)
{
	/* a CLOCK_MONOTONIC base of a machine up for days, 20 ms (the
	 * default) and slices that do not divide a second evenly */
	static const uint64_t sizes[] = { 20 * MS, 1 * MS, 1000 * MS, 7 * MS + 3, 1 };
	const uint64_t base = 345678901234567ULL;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint64_t len = sizes[s];

		for (uint64_t k = 0; k < 300; k++) {
			uint64_t at = base + k * len;

			cr_assert_eq(profile_slice_of(at, base, len), k, "start of slice %llu (%llu ns)",
				     (unsigned long long)k, (unsigned long long)len);
			cr_assert_eq(profile_slice_of(at + len - 1, base, len), k,
				     "last ns of slice %llu (%llu ns)", (unsigned long long)k,
				     (unsigned long long)len);
			cr_assert_eq(profile_slice_of(at + len / 2, base, len), k);
			if (k)
				cr_assert_eq(profile_slice_of(at - 1, base, len), k - 1,
					     "the ns before slice %llu (%llu ns)", (unsigned long long)k,
					     (unsigned long long)len);
		}
	}
}

Test(slice_of, edges)
{
	const uint64_t base = 1000 * MS, len = 20 * MS;

	/* before the base (a sample of a CPU whose clock read came first) */
	cr_assert_eq(profile_slice_of(base - 1, base, len), 0);
	cr_assert_eq(profile_slice_of(0, base, len), 0);
	cr_assert_eq(profile_slice_of(base, base, len), 0);
	cr_assert_eq(profile_slice_of(base + 1, base, len), 0);
	/* no slices */
	cr_assert_eq(profile_slice_of(base + 5 * len, base, 0), 0);
	/* the last index, and no wrap past it */
	cr_assert_eq(profile_slice_of(0xffffffffULL * 1 + 5, 5, 1), 0xffffffffU);
	cr_assert_eq(profile_slice_of(0xffffffffULL - 1 + 5, 5, 1), 0xfffffffeU);
	cr_assert_eq(profile_slice_of(0x100000000ULL + 5, 5, 1), 0xffffffffU);
	cr_assert_eq(profile_slice_of(UINT64_MAX, 0, 1), 0xffffffffU);
	/* a recording of days: 30 days of 20 ms slices */
	uint64_t k = 30ULL * 86400 * 1000 / 20;
	cr_assert_eq(profile_slice_of(base + k * len + len - 1, base, len), k);
}
