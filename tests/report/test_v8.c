/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which position row names a V8 frame (report/v8.c, SPEC.md 6.17): the last
 * row at or before the frame's position, for an optimized frame (kind 2:
 * a pc offset) and for an interpreted one (kind 1: its bytecode offset,
 * the rows then being its function's lines); none for kind 0, for a
 * position before the first row, or for an entry without rows.
 */
#include <criterion/criterion.h>

#include "report.h"

static uint64_t w1(uint64_t kind, uint64_t pos)
{
	return BPROF_V8_TAG_POS | (uint64_t)0x1234 << BPROF_V8_GUARD_SHIFT |
	       kind << BPROF_V8_KIND_SHIFT | pos;
}

Test(v8pos, last_row_at_or_before_the_position)
{
	struct bprof_v8_pos rows[3] = {
		{ .code_offset = 60 }, { .code_offset = 70 }, { .code_offset = 90 },
	};
	struct bprof_v8_sfi s = { .pos = rows, .nr_pos = 3 };

	for (uint64_t kind = BPROF_V8_KIND_BYTECODE; kind <= BPROF_V8_KIND_CODE; kind++) {
		cr_expect_null(rep_v8_pos(&s, w1(kind, 59)), "before the first row");
		cr_expect_eq(rep_v8_pos(&s, w1(kind, 60)), &rows[0]);
		cr_expect_eq(rep_v8_pos(&s, w1(kind, 69)), &rows[0]);
		cr_expect_eq(rep_v8_pos(&s, w1(kind, 70)), &rows[1]);
		cr_expect_eq(rep_v8_pos(&s, w1(kind, 89)), &rows[1]);
		cr_expect_eq(rep_v8_pos(&s, w1(kind, 90)), &rows[2]);
		cr_expect_eq(rep_v8_pos(&s, w1(kind, BPROF_V8_POS_MASK)), &rows[2]);
	}
	/* no position: the entry's own name and line */
	cr_expect_null(rep_v8_pos(&s, w1(0, 70)));
	cr_expect_null(rep_v8_pos(&s, w1(3, 70)), "kind 3 is reserved");
	s.nr_pos = 0;
	cr_expect_null(rep_v8_pos(&s, w1(BPROF_V8_KIND_BYTECODE, 70)));
	cr_expect_null(rep_v8_pos(&s, w1(BPROF_V8_KIND_CODE, 70)));
}
