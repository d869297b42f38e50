/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ehtab_ends.c - record/unwind/ehtab's ehtab_add_ends (Go's thread roots as
 * outermost frames): ranges become UNWIND_CFA_END rows only where no other
 * rule is in force, rows stay sorted, and the table packs.
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "ehtab.h"

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

Test(ehtab_ends, a_table_of_ends_alone)
{
	struct ehtab *t = NULL;
	const struct ehtab_range r[] = { { 0x2000, 0x2020 }, { 0x1000, 0x1040 }, { 0x3000, 0x3000 } };

	cr_assert_eq(ehtab_add_ends(&t, r, 3), 0);
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

Test(ehtab_ends, rules_in_force_are_kept)
{
	struct ehtab *t = NULL;
	const struct ehtab_range first[] = { { 0x1000, 0x1040 } };
	/* inside, overlapping either end, starting at its NONE row, adjacent */
	const struct ehtab_range more[] = { { 0x1010, 0x1020 }, { 0x0ff0, 0x1008 }, { 0x1030, 0x1050 },
					    { 0x1040, 0x1060 }, { 0x0fe0, 0x1000 } };

	cr_assert_eq(ehtab_add_ends(&t, first, 1), 0);
	cr_assert_eq(ehtab_add_ends(&t, more, 5), 0);
	/* 0x0ff0..0x1008 and 0x1010.. and 0x1030.. overlap END rows: refused;
	 * 0x1040 starts at the NONE row (replaced); 0x0fe0 ends at 0x1000,
	 * where a row already is */
	expect(t, (uint64_t[]){ 0x0fe0, 0x1000, 0x1040, 0x1060 },
	       (uint8_t[]){ UNWIND_CFA_END, UNWIND_CFA_END, UNWIND_CFA_END, UNWIND_CFA_NONE }, 4);
	ehtab_destroy(t);
}
