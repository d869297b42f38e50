/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ehtab.h - turn an ELF object's .eh_frame into the compact unwind rows of
 * bpf/unwind/unwind.h, on the target, in milliseconds.
 *
 * Reads ELF and call frame information, never symbols.  Every byte is
 * treated as hostile: the object comes from a machine we do not control.
 * A malformed entry makes the whole object "no table" (an error with a
 * message), never a crash; rules that cannot be expressed become
 * UNWIND_CFA_INVALID rows, counted.  Prose description: record/DESIGN.md.
 */
#ifndef BPROF_RECORD_EHTAB_H
#define BPROF_RECORD_EHTAB_H

#include <gelf.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include "unwind/unwind.h"

struct ehtab_error {
	char message[256];
};

/* One object's rows: rule in force from addr (ELF vaddr) to the next row. */
struct ehtab_row {
	uint64_t addr;
	struct unwind_rule rule;
};

struct ehtab_stats {
	uint64_t cies, fdes, rows;
	uint64_t invalid_rows;   /* rows that cannot be expressed (UNWIND_CFA_INVALID) */
	uint64_t signal_fdes;    /* 'S' augmentation */
	uint64_t eh_frame_bytes;
};

struct ehtab;

/*
 * Build the rows of elf's .eh_frame (found by section header, else through
 * PT_GNU_EH_FRAME).  0, or a negative errno with err->message set: -ENOENT
 * no .eh_frame, -EINVAL malformed, -E2BIG over a limit, -ENOMEM.
 */
int ehtab_build(struct ehtab **out, Elf *elf, struct ehtab_error *err);
void ehtab_destroy(struct ehtab *t);
/* The bytes ehtab_build reads, found the same way: .eh_frame's data
 * (owned by elf), length and address.  A table is a function of them
 * alone, so they key a cache of tables (tabcache.h).  0 or -errno. */
int ehtab_source(Elf *elf, const uint8_t **data, size_t *len, uint64_t *vaddr);
const struct ehtab_row *ehtab_rows(const struct ehtab *t, size_t *nr);
void ehtab_stats(const struct ehtab *t, struct ehtab_stats *st);

/*
 * Rules for [start, end) ranges of code that no FDE describes (Go's:
 * unwind/gotab.h), added only where no other rule is in force; a range
 * that overlaps one, or an earlier range of the same call, is left out.
 * *t may be NULL (an object without .eh_frame): an empty table is made.
 * 0, -ENOMEM, -E2BIG (over the row limit).
 */
struct ehtab_range {
	uint64_t start, end;
	struct unwind_rule rule;  /* canonical (unwind.h) */
};
int ehtab_add_ranges(struct ehtab **t, const struct ehtab_range *r, size_t n);

/*
 * The code at a process's entry point that no FDE describes is the
 * outermost frame: an UNWIND_CFA_END row over it.  glibc's ld.so starts
 * every dynamically linked program in RTLD_START, hand-written assembly
 * without CFI: _start calls _dl_start (relocation), then _dl_start_user
 * calls _dl_init (the libraries' constructors).  Without the row a walk
 * of those calls fell back to the frame pointer there and ended
 * incomplete (36 of clang++'s 1,937 samples with a cold page cache).
 * Only for an object a process starts in (an executable, or an ET_DYN
 * that needs no library: ld.so, a static PIE), only where no rule is in
 * force at e_entry, and only up to the next FDE's start when that is
 * within EHTAB_ENTRY_MAX bytes (ld.so's is 64 bytes away): a longer gap
 * may hold other code, of which nothing is known.  1 when the row was
 * added, 0 when not, -ENOMEM, -E2BIG.
 */
#define EHTAB_ENTRY_MAX 256
int ehtab_add_entry(struct ehtab *t, Elf *elf);

/* The system-wide set of distinct rules; index 0 is the all-zero
 * UNWIND_CFA_NONE rule. */
struct ehtab_rules;
int ehtab_rules_create(struct ehtab_rules **out);
void ehtab_rules_destroy(struct ehtab_rules *rs);
size_t ehtab_rules_count(const struct ehtab_rules *rs);
const struct unwind_rule *ehtab_rules_get(const struct ehtab_rules *rs, size_t i);
/* 0 and *idx, or -E2BIG when UNWIND_MAX_RULES are taken, -ENOMEM. */
int ehtab_rules_intern(struct ehtab_rules *rs, const struct unwind_rule *r, uint16_t *idx);

/* One object's table as the BPF maps hold it (bpf/unwind/unwind.h): rows are
 * UNWIND_ROW(lo, rule index); page i's rows are rows[first .. first + nr). */
struct ehtab_page {
	uint32_t page, first, nr;
};
struct ehtab_packed {
	uint32_t *rows;
	size_t nr_rows;
	struct ehtab_page *pages;
	size_t nr_pages;
};
/* 0, -E2BIG (rules exhausted), -ENOMEM.  Free with ehtab_packed_free. */
int ehtab_pack(const struct ehtab *t, struct ehtab_rules *rs, struct ehtab_packed *out,
	       struct ehtab_error *err);
void ehtab_packed_free(struct ehtab_packed *p);

#endif
