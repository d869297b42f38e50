/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libsym's HotSpot line number table decoder (bsym_jvm_line, SPEC.md
 * 6.18): tables built by hand as ConstMethod holds them, and hostile ones.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "bsym.h"

/* (bci 0, line 10) by the escape (a line step above 7), (4, 11) and
 * (14, 13) in one byte each, (114, 14) by the escape with a two-byte
 * UNSIGNED5 bci step (200 = 200 + 0 x 64: signed, +100), then the end. */
static const uint8_t table[] = { 0xff, 0x00, 0x14, 0x21, 0x52, 0xff, 200, 0, 0x02, 0x00 };

static const struct {
	uint32_t bci, line;
} want[] = {
	{ 0, 10 }, { 3, 10 }, { 4, 11 }, { 13, 11 }, { 14, 13 }, { 113, 13 }, { 114, 14 }, { 60000, 14 },
};

Test(jvm_line, pairs)
{
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t line = 0;

		cr_assert_eq(bsym_jvm_line(table, sizeof(table), want[i].bci, &line), 0, "bci %u",
			     want[i].bci);
		cr_expect_eq(line, want[i].line, "bci %u: line %u, want %u", want[i].bci, line,
			     want[i].line);
	}
}

Test(jvm_line, empty_or_missing)
{
	uint32_t line = 7;
	static const uint8_t end[] = { 0 };

	cr_expect_eq(bsym_jvm_line(NULL, 0, 0, &line), -1);
	cr_expect_eq(bsym_jvm_line(end, sizeof(end), 0, &line), -1);
	/* a first entry after the bci asked for: no line */
	static const uint8_t late[] = { 0x29, 0 }; /* (5, 1) */
	cr_expect_eq(bsym_jvm_line(late, sizeof(late), 4, &line), -1);
	cr_expect_eq(bsym_jvm_line(late, sizeof(late), 5, &line), 0);
	cr_expect_eq(line, 1);
}

Test(jvm_line, hostile)
{
	uint32_t line = 0;
	/* an escape cut short, in each of its numbers */
	static const uint8_t cut1[] = { 0xff };
	static const uint8_t cut2[] = { 0xff, 0x00 };
	static const uint8_t cut3[] = { 0xff, 0x00, 200 };
	/* a negative bci (signed -1 is 1) */
	static const uint8_t neg[] = { 0xff, 0x01, 0x02, 0 };
	/* five bytes of 255: the longest number, and a huge step */
	static const uint8_t big[] = { 0xff, 255, 255, 255, 255, 255, 0x02, 0 };

	cr_expect_eq(bsym_jvm_line(cut1, sizeof(cut1), 0, &line), -1);
	cr_expect_eq(bsym_jvm_line(cut2, sizeof(cut2), 0, &line), -1);
	cr_expect_eq(bsym_jvm_line(cut3, sizeof(cut3), 0, &line), -1);
	cr_expect_eq(bsym_jvm_line(neg, sizeof(neg), 0, &line), -1);
	cr_expect_eq(bsym_jvm_line(big, sizeof(big), 0, &line), -1);
	/* no terminating 0: the entries read so far still count */
	static const uint8_t open[] = { 0x09 }; /* (1, 1) */
	cr_expect_eq(bsym_jvm_line(open, sizeof(open), 2, &line), 0);
	cr_expect_eq(line, 1);
}
