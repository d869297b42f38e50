/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ehtab_ends.c - record/unwind/ehtab's ehtab_add_ranges (Go code's rows,
 * record/unwind/gotab.c): rules only where no other rule is in force, rows
 * sorted and one an address, ranges met at their ends, the table packs;
 * and ehtab_add_entry: ld.so's entry code (no FDE) ends a walk, an entry
 * with an FDE or in a library is left alone.
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

/* ---- ehtab_add_entry: the outermost frame at a process's entry ---- */

#include <fcntl.h>
#include <unistd.h>

struct entry_obj {
	int fd;
	Elf *elf;
	struct ehtab *t;
	uint64_t entry;
};

static void entry_open(struct entry_obj *o, const char *path)
{
	struct ehtab_error err;
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	o->fd = open(path, O_RDONLY);
	cr_assert_geq(o->fd, 0, "open %s", path);
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(o->elf);
	cr_assert_not_null(gelf_getehdr(o->elf, &eh));
	o->entry = eh.e_entry;
	cr_assert_eq(ehtab_build(&o->t, o->elf, &err), 0, "%s: %s", path, err.message);
}

static void entry_close(struct entry_obj *o)
{
	ehtab_destroy(o->t);
	elf_end(o->elf);
	close(o->fd);
}

/* the index of the row in force at addr, or -1 */
static long row_at(const struct ehtab *t, uint64_t addr)
{
	size_t nr;
	const struct ehtab_row *r = ehtab_rows(t, &nr);
	long k = -1;

	for (size_t i = 0; i < nr && r[i].addr <= addr; i++)
		k = (long)i;
	return k;
}

Test(ehtab_entry, ld_so_entry_code_is_the_outermost_frame)
{
	struct entry_obj o;
	size_t nr, nr0;
	const struct ehtab_row *r;

	entry_open(&o, "/lib64/ld-linux-x86-64.so.2");
	/* RTLD_START: no FDE over it (the walk fell back to rbp there) */
	long k = row_at(o.t, o.entry);
	r = ehtab_rows(o.t, &nr0);
	cr_assert(k < 0 || r[k].rule.cfa_kind == UNWIND_CFA_NONE, "ld.so's entry has an FDE now?");

	cr_assert_eq(ehtab_add_entry(o.t, o.elf), 1);
	r = ehtab_rows(o.t, &nr);
	k = row_at(o.t, o.entry);
	cr_assert_geq(k, 0);
	cr_assert_eq(r[k].addr, o.entry, "the row starts at e_entry");
	cr_assert_eq(r[k].rule.cfa_kind, UNWIND_CFA_END);
	/* _dl_start's return address (_dl_start_user) and _dl_init's are
	 * in it; it ends at the next FDE, close after */
	cr_assert_lt((size_t)k + 1, nr);
	cr_assert_neq(r[k + 1].rule.cfa_kind, UNWIND_CFA_END);
	cr_assert_gt(r[k + 1].addr, o.entry + 0x30);
	cr_assert_leq(r[k + 1].addr, o.entry + EHTAB_ENTRY_MAX);
	/* nothing before it changed: the row in force below is no END */
	long before = row_at(o.t, o.entry - 1);
	cr_assert(before < 0 || r[before].rule.cfa_kind != UNWIND_CFA_END);
	cr_assert_leq(nr, nr0 + 2);
	/* a second call finds a rule in force */
	cr_assert_eq(ehtab_add_entry(o.t, o.elf), 0);
	entry_close(&o);
}

Test(ehtab_entry, an_entry_with_an_fde_is_left_alone)
{
	struct entry_obj o;
	size_t nr0, nr;

	/* this program: glibc's _start has CFI (return address undefined) */
	entry_open(&o, "/proc/self/exe");
	ehtab_rows(o.t, &nr0);
	long k = row_at(o.t, o.entry);
	cr_assert_geq(k, 0);
	cr_assert_eq(ehtab_add_entry(o.t, o.elf), 0);
	ehtab_rows(o.t, &nr);
	cr_assert_eq(nr, nr0);
	entry_close(&o);
}

Test(ehtab_entry, a_library_entry_is_no_process_start)
{
	struct entry_obj o;
	size_t nr0, nr;
	const struct ehtab_row *r;

	/* e_entry at code without CFI, an FDE close after: all that
	 * ld.so's has, but the library needs libc and has constructors for
	 * ld.so to run: nothing starts there */
	entry_open(&o, ENTRYLIB);
	r = ehtab_rows(o.t, &nr0);
	cr_assert_neq(o.entry, 0);
	long k = row_at(o.t, o.entry);
	cr_assert(k < 0 || r[k].rule.cfa_kind == UNWIND_CFA_NONE, "the stub has no FDE");
	cr_assert_lt((size_t)(k + 1), nr0);
	cr_assert_leq(r[k + 1].addr - o.entry, EHTAB_ENTRY_MAX, "an FDE follows closely");
	cr_assert_eq(ehtab_add_entry(o.t, o.elf), 0);
	ehtab_rows(o.t, &nr);
	cr_assert_eq(nr, nr0);
	entry_close(&o);
}
