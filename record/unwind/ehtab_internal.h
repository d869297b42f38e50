/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ehtab_internal.h - what the three files of the .eh_frame table builder
 * share: ehtab.c (the object's .eh_frame found, its entries walked, the
 * rows sorted, merged and extended), ehtab_cfi.c (a CIE parsed, a CFA
 * program run into rows) and ehtab_pack.c (rules interned, rows packed
 * into pages).  ehtab.h stays the interface; this header is for those
 * three alone.  ehtab.c calls ehtab_cfi.c, never back; ehtab_pack.c calls
 * neither.  The byte readers are inline here, as they were static in one
 * file: they run for every byte of every CFA program.
 */
#ifndef BPROF_RECORD_EHTAB_INTERNAL_H
#define BPROF_RECORD_EHTAB_INTERNAL_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ehtab.h"

/* Limits against hostile input. */
#define MAX_EH_FRAME (256u << 20)
#define MAX_ROWS (8u << 20)
#define MAX_STATE_STACK 32
#define MAX_CIES 65536
#define MAX_TEXT_PAGES 65536 /* 4 GiB of text covered by FDEs */

struct ehtab {
	struct ehtab_row *rows;
	size_t nr, cap;
	struct ehtab_stats st;
};

/* ---- reading ----------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	uint64_t vaddr;  /* address of p[0] when loaded: pcrel encodings */
	const uint8_t *base;
	bool bad;
};

static inline uint64_t ehtab__rd_u(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static inline uint64_t ehtab__rd_uleb(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !r->bad; shift += 7) {
		if (r->p >= r->end || shift > 63) {
			r->bad = true;
			break;
		}
		uint8_t b = *r->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

static inline int64_t ehtab__rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	do {
		if (r->bad || r->p >= r->end || shift > 63) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* DW_EH_PE_* */
#define PE_OMIT 0xff
static inline bool ehtab__rd_encoded(struct rd *r, uint8_t enc, uint64_t *out)
{
	uint64_t field = r->vaddr + (uint64_t)(r->p - r->base), v;

	if (enc == PE_OMIT)
		return false;
	switch (enc & 0x0f) {
	case 0x00: v = ehtab__rd_u(r, 8); break;
	case 0x01: v = ehtab__rd_uleb(r); break;
	case 0x02: v = ehtab__rd_u(r, 2); break;
	case 0x03: v = ehtab__rd_u(r, 4); break;
	case 0x04: v = ehtab__rd_u(r, 8); break;
	case 0x09: v = (uint64_t)ehtab__rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)ehtab__rd_u(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)ehtab__rd_u(r, 4); break;
	case 0x0c: v = ehtab__rd_u(r, 8); break;
	default: r->bad = true; return false;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += field; break;       /* pcrel */
	default: r->bad = true; return false; /* textrel, datarel, funcrel: not in x86-64 .eh_frame */
	}
	if (enc & 0x80) { /* indirect: not for code addresses */
		r->bad = true;
		return false;
	}
	*out = v;
	return true;
}

/* ---- CIEs -------------------------------------------------------------- */

struct cie {
	size_t off;          /* offset of the CIE in .eh_frame */
	const uint8_t *insns, *insns_end;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool aug_z, signal;
	bool ok;
};

/* ---- the CFA program ------------------------------------------------- */

enum reg_how { R_SAME = 0, R_UNDEF, R_OFFSET, R_REGISTER, R_OTHER };

struct regrule {
	uint8_t how;
	int64_t val;     /* R_OFFSET: CFA + val; R_REGISTER: register */
};

struct cfa_state {
	/* CFA */
	uint8_t cfa_kind;    /* enum unwind_cfa_kind */
	uint64_t cfa_reg;
	int64_t cfa_off;
	int64_t cfa_aux;
	struct regrule rbp, ra;
};

/* ehtab_cfi.c */
int ehtab__push_row(struct ehtab *t, uint64_t addr, const struct unwind_rule *rule);
int ehtab__run_program(struct ehtab *t, const struct cie *c, const uint8_t *p, const uint8_t *pend,
		       struct cfa_state *s, const struct cfa_state *init, uint64_t loc, uint64_t end);
int ehtab__parse_cie(struct rd *all, size_t off, const uint8_t *body, const uint8_t *end,
		     struct cie *c);

#endif
