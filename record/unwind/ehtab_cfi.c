// SPDX-License-Identifier: Apache-2.0
/*
 * ehtab_cfi.c - call frame information read: a CIE parsed, and an FDE's
 * CFA program run by a small DWARF CFA interpreter that tracks only what
 * the x86-64 unwinder needs (CFA, rbp, return address), emitting a row at
 * each location change.  ehtab.c walks .eh_frame and calls these.
 *
 * Why not libdw's dwarf_cfi_addrframe: it answers one address at a time
 * (~0.11 us each here), so a table would cost a query per byte of text
 * (0.16 s for libc); interpreting each FDE's program once emits its rows
 * directly, in about a millisecond for libc.  libdw stays the oracle in the
 * tests (tests/record/ehtab_libdw.c).
 */
#include "ehtab_internal.h"

/* ---- the CFA program ------------------------------------------------- */

static void set_cfa_reg(struct cfa_state *s, uint64_t reg)
{
	s->cfa_reg = reg;
	s->cfa_aux = 0;
	s->cfa_kind = reg == UNWIND_REG_RSP ? UNWIND_CFA_RSP :
		      reg == UNWIND_REG_RBP ? UNWIND_CFA_RBP :
		      reg < UNWIND_REG_RA ? UNWIND_CFA_REG : UNWIND_CFA_INVALID;
}

/* DW_CFA_def_cfa_expression: only the forms compilers and linkers emit on
 * x86-64 are understood (see unwind.h). */
static void cfa_expression(struct cfa_state *s, const uint8_t *e, uint64_t len)
{
	static const uint8_t plt[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x00, 0x2a, 0x33, 0x24, 0x22 };
	struct rd r = { .p = e, .end = e + len, .base = e };

	s->cfa_kind = UNWIND_CFA_INVALID;
	s->cfa_off = s->cfa_aux = 0;
	if (len == sizeof(plt) && !memcmp(e, plt, 6) && !memcmp(e + 7, plt + 7, 4) &&
	    (e[6] == 0x3b || e[6] == 0x3a)) {
		/* rsp + 8 + ((rip & 15) >= 11 (or 10)) << 3 */
		s->cfa_kind = UNWIND_CFA_PLT;
		s->cfa_off = 8;
		s->cfa_aux = e[6] - 0x30;
		return;
	}
	/* DW_OP_breg6/7 off; DW_OP_deref [; DW_OP_plus_uconst k] */
	if (len >= 3 && (e[0] == 0x76 || e[0] == 0x77)) {
		uint8_t op = *r.p++;
		int64_t off = ehtab__rd_sleb(&r);
		uint64_t k = 0;

		if (r.bad || r.p >= r.end || *r.p++ != 0x06)
			return;
		if (r.p < r.end) {
			if (*r.p++ != 0x23)
				return;
			k = ehtab__rd_uleb(&r);
			if (r.bad || r.p != r.end || k > 127)
				return;
		}
		if (off < INT32_MIN || off > INT32_MAX)
			return;
		s->cfa_kind = op == 0x77 ? UNWIND_CFA_DEREF_RSP : UNWIND_CFA_DEREF_RBP;
		s->cfa_off = off;
		s->cfa_aux = (int64_t)k;
	}
}

static void set_reg(struct cfa_state *s, uint64_t reg, uint8_t how, int64_t val)
{
	struct regrule rr = { how, val };

	if (reg == UNWIND_REG_RBP)
		s->rbp = rr;
	else if (reg == UNWIND_REG_RA)
		s->ra = rr;
}

/* The row for a state, canonical (unused fields zero). */
/*
 * A factored offset: v * data_align, saturated.  Hostile operands must not
 * overflow (undefined behaviour); a saturated offset is out of the 32-bit
 * range state_rule accepts, so the row becomes UNWIND_CFA_INVALID.
 */
static int64_t scaled(int64_t v, int64_t align)
{
	int64_t r;

	return __builtin_mul_overflow(v, align, &r) ? INT64_MAX : r;
}

static int64_t uleb_s(uint64_t u)
{
	return u > INT64_MAX ? INT64_MAX : (int64_t)u;
}

static struct unwind_rule state_rule(const struct cfa_state *s, const struct cie *c, bool *invalid)
{
	struct unwind_rule r = { 0 };

	*invalid = false;
	if (c->signal) {
		r.cfa_kind = UNWIND_CFA_SIGNAL;
		return r;
	}
	if (s->ra.how == R_UNDEF) {
		r.cfa_kind = UNWIND_CFA_END;
		return r;
	}
	r.cfa_kind = s->cfa_kind;
	if (s->cfa_kind == UNWIND_CFA_INVALID || s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
		goto invalid;
	r.cfa_off = (int32_t)s->cfa_off;
	if (s->cfa_kind == UNWIND_CFA_REG)
		r.aux = (int8_t)s->cfa_reg;
	else if (s->cfa_kind == UNWIND_CFA_PLT || s->cfa_kind == UNWIND_CFA_DEREF_RSP ||
		 s->cfa_kind == UNWIND_CFA_DEREF_RBP)
		r.aux = (int8_t)s->cfa_aux;
	/* return address: at CFA - 8, or in a register (leaf only) */
	if (s->ra.how == R_OFFSET && s->ra.val == -8) {
		r.ra_kind = UNWIND_RA_CFA;
	} else if (s->ra.how == R_REGISTER && s->ra.val < UNWIND_REG_RA &&
		   (r.cfa_kind == UNWIND_CFA_RSP || r.cfa_kind == UNWIND_CFA_RBP)) {
		r.ra_kind = UNWIND_RA_REG;
		r.aux = (int8_t)s->ra.val;
	} else {
		goto invalid;
	}
	switch (s->rbp.how) {
	case R_SAME:
		break;
	case R_OFFSET:
		if (s->rbp.val < INT32_MIN || s->rbp.val > INT32_MAX)
			goto invalid;
		r.rbp_kind = UNWIND_RBP_CFA;
		r.rbp_off = (int32_t)s->rbp.val;
		break;
	default: /* undefined, in another register, an expression */
		r.rbp_kind = UNWIND_RBP_UNDEFINED;
		break;
	}
	return r;
invalid:
	memset(&r, 0, sizeof(r));
	r.cfa_kind = UNWIND_CFA_INVALID;
	*invalid = true;
	return r;
}

int ehtab__push_row(struct ehtab *t, uint64_t addr, const struct unwind_rule *rule)
{
	if (t->nr == t->cap) {
		size_t n = t->cap ? t->cap * 2 : 4096;
		void *p;

		if (n > MAX_ROWS)
			return -E2BIG;
		p = realloc(t->rows, n * sizeof(*t->rows));
		if (!p)
			return -ENOMEM;
		t->rows = p;
		t->cap = n;
	}
	t->rows[t->nr].addr = addr;
	t->rows[t->nr].rule = *rule;
	t->nr++;
	return 0;
}

/*
 * Run a CFA program.  With t, emit a row at each location change within
 * [loc, end); without, only compute the state (a CIE's initial
 * instructions).  init: the state after the CIE's instructions
 * (DW_CFA_restore).  Returns 0 or -EINVAL.
 */
int ehtab__run_program(struct ehtab *t, const struct cie *c, const uint8_t *p, const uint8_t *pend,
		       struct cfa_state *s, const struct cfa_state *init, uint64_t loc, uint64_t end)
{
	struct cfa_state stack[MAX_STATE_STACK];
	unsigned depth = 0;
	struct rd r = { .p = p, .end = pend, .base = p };
	bool invalid;
	int err;

#define EMIT()                                                                 \
	do {                                                                   \
		if (t && loc < end) {                                          \
			struct unwind_rule ru = state_rule(s, c, &invalid);    \
			if ((err = ehtab__push_row(t, loc, &ru)))              \
				return err;                                    \
			t->st.invalid_rows += invalid;                         \
		}                                                              \
	} while (0)

	while (r.p < r.end && !r.bad) {
		uint8_t op = *r.p++;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op & 0xc0) {
		case 0x40: /* advance_loc */
			delta = (op & 0x3f) * c->code_align;
			goto advance;
		case 0x80: /* offset */
			off = scaled(uleb_s(ehtab__rd_uleb(&r)), c->data_align);
			set_reg(s, op & 0x3f, R_OFFSET, off);
			continue;
		case 0xc0: /* restore */
			reg = op & 0x3f;
			if (reg == UNWIND_REG_RBP)
				s->rbp = init ? init->rbp : (struct regrule){ 0 };
			else if (reg == UNWIND_REG_RA)
				s->ra = init ? init->ra : (struct regrule){ 0 };
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc: compilers do not emit it; absolute only */
			uint64_t nl;

			if ((c->fde_enc & 0x70) || !ehtab__rd_encoded(&r, c->fde_enc, &nl) || nl < loc || nl > end)
				return -EINVAL;
			EMIT();
			loc = nl;
			break;
		}
		case 0x02: delta = ehtab__rd_u(&r, 1) * c->code_align; goto advance;
		case 0x03: delta = ehtab__rd_u(&r, 2) * c->code_align; goto advance;
		case 0x04: delta = ehtab__rd_u(&r, 4) * c->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = ehtab__rd_uleb(&r);
			set_reg(s, reg, R_OFFSET, scaled(uleb_s(ehtab__rd_uleb(&r)), c->data_align));
			break;
		case 0x06: /* restore_extended */
			reg = ehtab__rd_uleb(&r);
			if (reg == UNWIND_REG_RBP)
				s->rbp = init ? init->rbp : (struct regrule){ 0 };
			else if (reg == UNWIND_REG_RA)
				s->ra = init ? init->ra : (struct regrule){ 0 };
			break;
		case 0x07: set_reg(s, ehtab__rd_uleb(&r), R_UNDEF, 0); break;
		case 0x08: set_reg(s, ehtab__rd_uleb(&r), R_SAME, 0); break;
		case 0x09: /* register */
			reg = ehtab__rd_uleb(&r);
			set_reg(s, reg, R_REGISTER, (int64_t)ehtab__rd_uleb(&r));
			break;
		case 0x0a: /* remember_state */
			if (depth >= MAX_STATE_STACK)
				return -EINVAL;
			stack[depth++] = *s;
			break;
		case 0x0b: /* restore_state: the CFA stays as remembered too */
			if (!depth)
				return -EINVAL;
			*s = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			set_cfa_reg(s, ehtab__rd_uleb(&r));
			s->cfa_off = (int64_t)ehtab__rd_uleb(&r);
			break;
		case 0x0d: /* def_cfa_register: keeps the offset */
			set_cfa_reg(s, ehtab__rd_uleb(&r));
			break;
		case 0x0e: /* def_cfa_offset */
			if (s->cfa_kind == UNWIND_CFA_PLT || s->cfa_kind == UNWIND_CFA_DEREF_RSP ||
			    s->cfa_kind == UNWIND_CFA_DEREF_RBP)
				s->cfa_kind = UNWIND_CFA_INVALID; /* offset of an expression */
			s->cfa_off = (int64_t)ehtab__rd_uleb(&r);
			break;
		case 0x0f: { /* def_cfa_expression */
			uint64_t len = ehtab__rd_uleb(&r);

			if (r.bad || len > (uint64_t)(r.end - r.p))
				return -EINVAL;
			cfa_expression(s, r.p, len);
			r.p += len;
			break;
		}
		case 0x10:   /* expression */
		case 0x16: { /* val_expression */
			uint64_t len;

			reg = ehtab__rd_uleb(&r);
			len = ehtab__rd_uleb(&r);
			if (r.bad || len > (uint64_t)(r.end - r.p))
				return -EINVAL;
			r.p += len;
			set_reg(s, reg, R_OTHER, 0);
			break;
		}
		case 0x11: /* offset_extended_sf */
			reg = ehtab__rd_uleb(&r);
			set_reg(s, reg, R_OFFSET, scaled(ehtab__rd_sleb(&r), c->data_align));
			break;
		case 0x12: /* def_cfa_sf */
			set_cfa_reg(s, ehtab__rd_uleb(&r));
			s->cfa_off = scaled(ehtab__rd_sleb(&r), c->data_align);
			break;
		case 0x13: /* def_cfa_offset_sf */
			if (s->cfa_kind == UNWIND_CFA_PLT || s->cfa_kind == UNWIND_CFA_DEREF_RSP ||
			    s->cfa_kind == UNWIND_CFA_DEREF_RBP)
				s->cfa_kind = UNWIND_CFA_INVALID;
			s->cfa_off = scaled(ehtab__rd_sleb(&r), c->data_align);
			break;
		case 0x14: /* val_offset: the register's value is CFA + n */
		case 0x15: /* val_offset_sf */
			reg = ehtab__rd_uleb(&r);
			if (op == 0x14)
				(void)ehtab__rd_uleb(&r);
			else
				(void)ehtab__rd_sleb(&r);
			set_reg(s, reg, R_OTHER, 0);
			break;
		case 0x2e: /* GNU_args_size */
			(void)ehtab__rd_uleb(&r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = ehtab__rd_uleb(&r);
			set_reg(s, reg, R_OFFSET, scaled(-uleb_s(ehtab__rd_uleb(&r)), c->data_align));
			break;
		default:
			return -EINVAL; /* an opcode we cannot skip safely */
		}
		continue;
advance:
		if (r.bad)
			break;
		EMIT();
		if (delta > end - loc)
			delta = end - loc; /* past the FDE: the rest is not ours */
		loc += delta;
	}
	if (r.bad)
		return -EINVAL;
	EMIT();
#undef EMIT
	return 0;
}

/* ---- CIEs -------------------------------------------------------------- */

int ehtab__parse_cie(struct rd *all, size_t off, const uint8_t *body, const uint8_t *end,
		     struct cie *c)
{
	struct rd r = { .p = body, .end = end, .base = all->base, .vaddr = all->vaddr };
	const char *aug;
	uint8_t version;

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->fde_enc = 0; /* absptr */
	version = (uint8_t)ehtab__rd_u(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		return -EINVAL;
	r.p++;
	if (aug[0] && aug[0] != 'z' && strcmp(aug, "eh"))
		return -EINVAL; /* unknown augmentation without a length: cannot skip */
	if (!strcmp(aug, "eh"))
		(void)ehtab__rd_u(&r, 8);
	if (version == 4) {
		if (ehtab__rd_u(&r, 1) != 8 || ehtab__rd_u(&r, 1) != 0) /* address size, segment size */
			return -EINVAL;
	}
	c->code_align = ehtab__rd_uleb(&r);
	c->data_align = ehtab__rd_sleb(&r);
	c->ra_reg = version == 1 ? ehtab__rd_u(&r, 1) : ehtab__rd_uleb(&r);
	if (r.bad || c->code_align == 0 || c->code_align > 16 || c->data_align == 0 ||
	    c->ra_reg != UNWIND_REG_RA)
		return -EINVAL;
	if (aug[0] == 'z') {
		uint64_t alen = ehtab__rd_uleb(&r);
		const uint8_t *aend;

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return -EINVAL;
		aend = r.p + alen;
		c->aug_z = true;
		for (const char *a = aug + 1; *a; a++) {
			uint64_t dummy;

			switch (*a) {
			case 'R':
				c->fde_enc = (uint8_t)ehtab__rd_u(&r, 1);
				break;
			case 'L':
				(void)ehtab__rd_u(&r, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)ehtab__rd_u(&r, 1);

				/* the personality routine's address: any
				 * encoding, read only to skip it */
				if (enc != PE_OMIT && !r.bad) {
					struct rd tmp = r;

					if ((enc & 0x70) > 0x10 || !ehtab__rd_encoded(&tmp, enc & 0x7f, &dummy))
						r.p = aend; /* skip the rest: we need none of it */
					else
						r.p = tmp.p;
				}
				break;
			}
			case 'S':
				c->signal = true;
				break;
			case 'B': /* aarch64 */
			case 'G': /* MTE */
				break;
			default:
				/* unknown: the length lets us skip the rest */
				goto aug_done;
			}
			if (r.bad || r.p > aend)
				return -EINVAL;
		}
aug_done:
		r.p = aend;
	}
	c->insns = r.p;
	c->insns_end = end;
	c->ok = true;
	return 0;
}
