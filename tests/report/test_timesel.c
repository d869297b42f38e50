// SPDX-License-Identifier: Apache-2.0
/*
 * --from/--to (report/timesel.c): what a TIME may be, and which rows of a
 * recording a range keeps (SPEC.md 6.14: a row is in when its slice
 * starts in the range).
 */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "report.h"

#define S 1000000000LL

Test(timesel, parse_relative)
{
	struct rep_time_point p;

	cr_assert_eq(rep_time_parse("12", &p), 0);
	cr_assert_eq(p.kind, REP_TIME_REL);
	cr_assert_eq(p.ns, 12 * S);
	cr_assert_eq(rep_time_parse("1.5s", &p), 0);
	cr_assert_eq(p.ns, 1500000000LL);
	cr_assert_eq(rep_time_parse("2m", &p), 0);
	cr_assert_eq(p.ns, 120 * S);
	cr_assert_eq(rep_time_parse("0", &p), 0);
	cr_assert_eq(p.ns, 0);
}

Test(timesel, parse_wall_clock)
{
	struct rep_time_point p;
	struct tm tm = { .tm_year = 126, .tm_mon = 10, .tm_mday = 26, .tm_hour = 16, .tm_min = 20,
			 .tm_sec = 5 };

	cr_assert_eq(rep_time_parse("@1795710010.25", &p), 0);
	cr_assert_eq(p.kind, REP_TIME_ABS);
	cr_assert_eq(p.ns, 1795710010250000000LL);
	cr_assert_eq(rep_time_parse("2026-11-26T16:20:05Z", &p), 0);
	cr_assert_eq(p.kind, REP_TIME_ABS);
	cr_assert_eq(p.ns, (int64_t)timegm(&tm) * S);
	cr_assert_eq(rep_time_parse("2026-11-26 16:20:05.5Z", &p), 0);
	cr_assert_eq(p.ns, (int64_t)timegm(&tm) * S + 500000000LL);
	cr_assert_eq(rep_time_parse("16:20:05Z", &p), 0);
	cr_assert_eq(p.kind, REP_TIME_DAY_UTC);
	cr_assert_eq(p.ns, (16 * 3600 + 20 * 60 + 5) * S);
	cr_assert_eq(rep_time_parse("16:20", &p), 0);
	cr_assert_eq(p.kind, REP_TIME_DAY_LOCAL);
	cr_assert_eq(p.ns, (16 * 3600 + 20 * 60) * S);
}

Test(timesel, parse_refuses)
{
	static const char *bad[] = { "", "yesterday", "-1", "12x", "1e400", "nan", "@", "@-5",
				     "2026-11-26T16:20:05+02", "16:20:05.", "2026-13-01T00:00:00" };
	struct rep_time_point p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_neq(rep_time_parse(bad[i], &p), 0, "\"%s\" accepted", bad[i]);
}

/* Ten rows, row i in 100 ms slice i, from an origin 50 ms before the
 * recording's start. */
static struct bprof_recording *sliced(uint64_t start)
{
	struct bprof_recording *r;

	cr_assert_eq(bprof_recording_create(&r), 0);
	r->meta.start_time_ns = start;
	r->meta.duration_ns = 1 * S;
	r->slices.slice_ns = 100000000;
	r->slices.origin_ns = start - 50000000;
	for (uint32_t i = 0; i < 10; i++) {
		struct bprof_count c = { .pid = 1, .user_stack_id = -14, .kernel_stack_id = -14,
					 .count = i + 1, .slice = i };
		strcpy(c.comm, "x");
		cr_assert_eq(bprof_recording_add_count(r, &c), 0);
	}
	return r;
}

Test(timesel, rows_of_the_range)
{
	uint64_t start = 1795710000ULL * S;
	struct bprof_recording *r = sliced(start);
	struct rep_timesel t = { .active = true, .has_from = true, .has_to = true };
	bool whole;

	/* seconds 0.25 .. 0.55 from the start: slices starting at 0.25, 0.35,
	 * 0.45 (slices 3, 4, 5; slice 6 starts at 0.55, excluded) */
	rep_time_parse("0.25", &t.from);
	rep_time_parse("0.55", &t.to);
	rep_timesel_new_set(&t);
	cr_assert_eq(rep_timesel_apply(&t, r, &whole), 0);
	cr_assert_not(whole);
	cr_assert_eq(r->nr_counts, 3);
	cr_assert_eq(r->counts[0].slice, 3);
	cr_assert_eq(r->counts[2].slice, 5);
	cr_assert_eq(r->meta.start_time_ns, start + 250000000ULL);
	cr_assert_eq(r->meta.duration_ns, 300000000ULL);
	bprof_recording_free(r);

	/* the base is the set's first recording: a later one (another file of
	 * a directory) is cut against it, not against its own start */
	struct bprof_recording *a = sliced(start), *b = sliced(start + 1 * S);
	rep_time_parse("0.9", &t.from);
	rep_time_parse("1.2", &t.to);
	rep_timesel_new_set(&t);
	rep_timesel_apply(&t, a, &whole);
	rep_timesel_apply(&t, b, &whole);
	/* a's slices start at -0.05 + 0.1 i: the last, 0.85, is out; b's at
	 * 0.95 + 0.1 i: 0.95, 1.05 and 1.15 are in */
	cr_assert_eq(a->nr_counts, 0);
	cr_assert_eq(b->nr_counts, 3);
	bprof_recording_free(a);
	bprof_recording_free(b);
}

Test(timesel, without_slices_whole_or_nothing)
{
	uint64_t start = 1795710000ULL * S;
	struct bprof_recording *r = sliced(start);
	struct rep_timesel t = { .active = true, .has_from = true };
	bool whole;

	r->slices.slice_ns = 0;
	for (uint64_t i = 0; i < r->nr_counts; i++)
		r->counts[i].slice = 0;
	rep_time_parse("0.5", &t.from);
	rep_timesel_new_set(&t);
	rep_timesel_apply(&t, r, &whole);
	cr_assert(whole);
	cr_assert_eq(r->nr_counts, 10);
	bprof_recording_free(r);

	r = sliced(start);
	r->slices.slice_ns = 0;
	t.from.kind = REP_TIME_ABS;
	t.from.ns = (int64_t)(start + 5 * S);
	rep_timesel_new_set(&t);
	rep_timesel_apply(&t, r, &whole);
	cr_assert_not(whole);
	cr_assert_eq(r->nr_counts, 0);
	bprof_recording_free(r);
}
