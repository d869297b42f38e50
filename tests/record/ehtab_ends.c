/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ehtab_ends.c - record/unwind/ehtab's ehtab_add_ranges (Go code's rows,
 * record/unwind/gotab.c): rules only where no other rule is in force, rows
 * sorted and one an address, ranges met at their ends, the table packs.
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "ehtab.h"

#define END { .cfa_kind = UNWIND_CFA_END }
#define RSP(off) { .cfa_kind = UNWIND_CFA_RSP, .cfa_off = (off) }

static void expect(const struct ehtab *t, const uint64_t *addr, const uint8_t *kind, size_t n)
{
	size_t nr;
	const struct ehtab_row *r = ehtab_rows(t, &nr);

	cr_assert_eq(nr, n, "%zu rows, want %zu", nr, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(r[i].addr, addr[i], "row %zu at %#llx", i, (unsigned long long)r[i].addr);
		cr_assert_eq(r[i].rule.cfa_kind, kind[i], "row %zu kind %u", i, r[i].rule.cfa_kind);
	}
}

Test(ehtab_ranges, a_table_of_ranges_alone)
{
	struct ehtab *t = NULL;
	const struct ehtab_range r[] = { { 0x1000, 0x1040, END }, { 0x2000, 0x2020, END }, { 0x3000, 0x3000, END } };

	cr_assert_eq(ehtab_add_ranges(&t, r, 3), 0);
	cr_assert_not_null(t);
	expect(t, (uint64_t[]){ 0x1000, 0x1040, 0x2000, 0x2020 },
	       (uint8_t[]){ UNWIND_CFA_END, UNWIND_CFA_NONE, UNWIND_CFA_END, UNWIND_CFA_NONE }, 4);

	struct ehtab_rules *rs;
	struct ehtab_packed pk;
	struct ehtab_error err;
	cr_assert_eq(ehtab_rules_create(&rs), 0);
	cr_assert_eq(ehtab_pack(t, rs, &pk, &err), 0);
	/* one page (UNWIND_PAGE_SHIFT): the four rows in it */
	cr_assert_eq(pk.nr_pages, 1);
	cr_assert_eq(pk.nr_rows, 4);
	ehtab_packed_free(&pk);
	ehtab_rules_destroy(rs);
	ehtab_destroy(t);
}

Test(ehtab_ranges, ranges_that_meet_leave_no_gap_between)
{
	struct ehtab *t = NULL;
	const struct ehtab_range r[] = { { 0x1000, 0x1004, RSP(8) }, { 0x1004, 0x1030, RSP(32) },
					 { 0x1030, 0x1040, RSP(8) } };

	cr_assert_eq(ehtab_add_ranges(&t, r, 3), 0);
	expect(t, (uint64_t[]){ 0x1000, 0x1004, 0x1030, 0x1040 },
	       (uint8_t[]){ UNWIND_CFA_RSP, UNWIND_CFA_RSP, UNWIND_CFA_RSP, UNWIND_CFA_NONE }, 4);
	size_t nr;
	const struct ehtab_row *rows = ehtab_rows(t, &nr);
	cr_assert_eq(rows[1].rule.cfa_off, 32);
	cr_assert_eq(rows[2].rule.cfa_off, 8);
	ehtab_destroy(t);
}

Test(ehtab_ranges, rules_in_force_are_kept)
{
	struct ehtab *t = NULL;
	const struct ehtab_range first[] = { { 0x1000, 0x1040, END } };
	/* ending where it starts; overlapping its start; inside; starting at
	 * its gap row; overlapping an earlier range of the same call */
	const struct ehtab_range more[] = { { 0x0fe0, 0x1000, RSP(8) }, { 0x0ff0, 0x1008, RSP(8) },
					    { 0x1010, 0x1020, RSP(8) }, { 0x1040, 0x1060, RSP(16) },
					    { 0x1050, 0x1070, RSP(8) } };

	cr_assert_eq(ehtab_add_ranges(&t, first, 1), 0);
	cr_assert_eq(ehtab_add_ranges(&t, more, 5), 0);
	expect(t, (uint64_t[]){ 0x0fe0, 0x1000, 0x1040, 0x1060 },
	       (uint8_t[]){ UNWIND_CFA_RSP, UNWIND_CFA_END, UNWIND_CFA_RSP, UNWIND_CFA_NONE }, 4);
	ehtab_destroy(t);
}
