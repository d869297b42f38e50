// SPDX-License-Identifier: Apache-2.0
/*
 * ehtab.c - .eh_frame to unwind rows: a small DWARF CFA interpreter that
 * tracks only what the x86-64 unwinder needs (CFA, rbp, return address).
 *
 * Why not libdw's dwarf_cfi_addrframe: it answers one address at a time
 * (~0.11 us each here), so a table would cost a query per byte of text
 * (0.16 s for libc); interpreting each FDE's program once emits its rows
 * directly, in about a millisecond for libc.  libdw stays the oracle in the
 * tests (tests/record/ehtab_libdw.c).
 */
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

static uint64_t rd_u(struct rd *r, unsigned n)
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

static uint64_t rd_uleb(struct rd *r)
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

static int64_t rd_sleb(struct rd *r)
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
static bool rd_encoded(struct rd *r, uint8_t enc, uint64_t *out)
{
	uint64_t field = r->vaddr + (uint64_t)(r->p - r->base), v;

	if (enc == PE_OMIT)
		return false;
	switch (enc & 0x0f) {
	case 0x00: v = rd_u(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_u(r, 2); break;
	case 0x03: v = rd_u(r, 4); break;
	case 0x04: v = rd_u(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break;
	case 0x0c: v = rd_u(r, 8); break;
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

static int cmp_cie(const void *a, const void *b)
{
	const struct cie *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

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
		int64_t off = rd_sleb(&r);
		uint64_t k = 0;

		if (r.bad || r.p >= r.end || *r.p++ != 0x06)
			return;
		if (r.p < r.end) {
			if (*r.p++ != 0x23)
				return;
			k = rd_uleb(&r);
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

static int push_row(struct ehtab *t, uint64_t addr, const struct unwind_rule *rule)
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
static int run_program(struct ehtab *t, const struct cie *c, const uint8_t *p, const uint8_t *pend,
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
			if ((err = push_row(t, loc, &ru)))                     \
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
			off = scaled(uleb_s(rd_uleb(&r)), c->data_align);
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

			if ((c->fde_enc & 0x70) || !rd_encoded(&r, c->fde_enc, &nl) || nl < loc || nl > end)
				return -EINVAL;
			EMIT();
			loc = nl;
			break;
		}
		case 0x02: delta = rd_u(&r, 1) * c->code_align; goto advance;
		case 0x03: delta = rd_u(&r, 2) * c->code_align; goto advance;
		case 0x04: delta = rd_u(&r, 4) * c->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&r);
			set_reg(s, reg, R_OFFSET, scaled(uleb_s(rd_uleb(&r)), c->data_align));
			break;
		case 0x06: /* restore_extended */
			reg = rd_uleb(&r);
			if (reg == UNWIND_REG_RBP)
				s->rbp = init ? init->rbp : (struct regrule){ 0 };
			else if (reg == UNWIND_REG_RA)
				s->ra = init ? init->ra : (struct regrule){ 0 };
			break;
		case 0x07: set_reg(s, rd_uleb(&r), R_UNDEF, 0); break;
		case 0x08: set_reg(s, rd_uleb(&r), R_SAME, 0); break;
		case 0x09: /* register */
			reg = rd_uleb(&r);
			set_reg(s, reg, R_REGISTER, (int64_t)rd_uleb(&r));
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
			set_cfa_reg(s, rd_uleb(&r));
			s->cfa_off = (int64_t)rd_uleb(&r);
			break;
		case 0x0d: /* def_cfa_register: keeps the offset */
			set_cfa_reg(s, rd_uleb(&r));
			break;
		case 0x0e: /* def_cfa_offset */
			if (s->cfa_kind == UNWIND_CFA_PLT || s->cfa_kind == UNWIND_CFA_DEREF_RSP ||
			    s->cfa_kind == UNWIND_CFA_DEREF_RBP)
				s->cfa_kind = UNWIND_CFA_INVALID; /* offset of an expression */
			s->cfa_off = (int64_t)rd_uleb(&r);
			break;
		case 0x0f: { /* def_cfa_expression */
			uint64_t len = rd_uleb(&r);

			if (r.bad || len > (uint64_t)(r.end - r.p))
				return -EINVAL;
			cfa_expression(s, r.p, len);
			r.p += len;
			break;
		}
		case 0x10:   /* expression */
		case 0x16: { /* val_expression */
			uint64_t len;

			reg = rd_uleb(&r);
			len = rd_uleb(&r);
			if (r.bad || len > (uint64_t)(r.end - r.p))
				return -EINVAL;
			r.p += len;
			set_reg(s, reg, R_OTHER, 0);
			break;
		}
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&r);
			set_reg(s, reg, R_OFFSET, scaled(rd_sleb(&r), c->data_align));
			break;
		case 0x12: /* def_cfa_sf */
			set_cfa_reg(s, rd_uleb(&r));
			s->cfa_off = scaled(rd_sleb(&r), c->data_align);
			break;
		case 0x13: /* def_cfa_offset_sf */
			if (s->cfa_kind == UNWIND_CFA_PLT || s->cfa_kind == UNWIND_CFA_DEREF_RSP ||
			    s->cfa_kind == UNWIND_CFA_DEREF_RBP)
				s->cfa_kind = UNWIND_CFA_INVALID;
			s->cfa_off = scaled(rd_sleb(&r), c->data_align);
			break;
		case 0x14: /* val_offset: the register's value is CFA + n */
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&r);
			if (op == 0x14)
				(void)rd_uleb(&r);
			else
				(void)rd_sleb(&r);
			set_reg(s, reg, R_OTHER, 0);
			break;
		case 0x2e: /* GNU_args_size */
			(void)rd_uleb(&r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&r);
			set_reg(s, reg, R_OFFSET, scaled(-uleb_s(rd_uleb(&r)), c->data_align));
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

/* ---- the walk over .eh_frame ----------------------------------------- */

static int find_eh_frame_section(Elf *elf, const uint8_t **data, size_t *len, uint64_t *vaddr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *d;

			/* lld gives .eh_frame the x86-64 psABI's own type */
			if (!gelf_getshdr(scn, &sh) ||
			    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!name || strcmp(name, ".eh_frame"))
				continue;
			if (sh.sh_size == 0)
				return -ENOENT; /* present but empty (Free Pascal) */
			d = elf_rawdata(scn, NULL);
			if (!d || !d->d_buf || d->d_size != sh.sh_size)
				return -EINVAL;
			*data = d->d_buf;
			*len = d->d_size;
			*vaddr = sh.sh_addr;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Without section headers (a binary stripped of them, a core dump's
 * image), the loader's view: PT_GNU_EH_FRAME points at .eh_frame_hdr,
 * whose eh_frame_ptr gives .eh_frame's address.  Its length is not
 * recorded anywhere: take the rest of the PT_LOAD holding it, which the
 * parser reads up to .eh_frame's zero terminator.
 */
static int find_eh_frame_phdr(Elf *elf, const uint8_t **data, size_t *len, uint64_t *vaddr)
{
	size_t nph;
	GElf_Phdr hdr = { 0 }, ph;
	bool found = false;
	const uint8_t *h;
	Elf_Data *hd;
	uint64_t at;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -ENOENT;
	for (size_t i = 0; i < nph && !found; i++)
		if (gelf_getphdr(elf, (int)i, &hdr) && hdr.p_type == PT_GNU_EH_FRAME)
			found = true;
	if (!found || hdr.p_filesz < 8)
		return -ENOENT;
	hd = elf_getdata_rawchunk(elf, (int64_t)hdr.p_offset, 8, ELF_T_BYTE);
	h = hd ? hd->d_buf : NULL;
	if (!h || h[0] != 1)
		return -EINVAL;
	{
		/* version, eh_frame_ptr_enc, fde_count_enc, table_enc, eh_frame_ptr */
		struct rd r = { .p = h + 4, .end = h + 8, .base = h, .vaddr = hdr.p_vaddr };

		if (!rd_encoded(&r, h[1], &at) || r.bad)
			return -EINVAL;
	}
	for (size_t i = 0; i < nph; i++) {
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || at < ph.p_vaddr ||
		    at - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (ph.p_filesz - (at - ph.p_vaddr) > MAX_EH_FRAME)
			return -E2BIG;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (at - ph.p_vaddr)),
					 ph.p_filesz - (at - ph.p_vaddr), ELF_T_BYTE);
		if (!d || !d->d_buf)
			return -EINVAL;
		*data = d->d_buf;
		*len = d->d_size;
		*vaddr = at;
		return 0;
	}
	return -EINVAL;
}

static int find_eh_frame(Elf *elf, const uint8_t **data, size_t *len, uint64_t *vaddr)
{
	int rc = find_eh_frame_section(elf, data, len, vaddr);

	return rc == -ENOENT ? find_eh_frame_phdr(elf, data, len, vaddr) : rc;
}

int ehtab_source(Elf *elf, const uint8_t **data, size_t *len, uint64_t *vaddr)
{
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		return -EINVAL;
	return find_eh_frame(elf, data, len, vaddr);
}

static int parse_cie(struct rd *all, size_t off, const uint8_t *body, const uint8_t *end,
		     struct cie *c)
{
	struct rd r = { .p = body, .end = end, .base = all->base, .vaddr = all->vaddr };
	const char *aug;
	uint8_t version;

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->fde_enc = 0; /* absptr */
	version = (uint8_t)rd_u(&r, 1);
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
		(void)rd_u(&r, 8);
	if (version == 4) {
		if (rd_u(&r, 1) != 8 || rd_u(&r, 1) != 0) /* address size, segment size */
			return -EINVAL;
	}
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? rd_u(&r, 1) : rd_uleb(&r);
	if (r.bad || c->code_align == 0 || c->code_align > 16 || c->data_align == 0 ||
	    c->ra_reg != UNWIND_REG_RA)
		return -EINVAL;
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *aend;

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return -EINVAL;
		aend = r.p + alen;
		c->aug_z = true;
		for (const char *a = aug + 1; *a; a++) {
			uint64_t dummy;

			switch (*a) {
			case 'R':
				c->fde_enc = (uint8_t)rd_u(&r, 1);
				break;
			case 'L':
				(void)rd_u(&r, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_u(&r, 1);

				/* the personality routine's address: any
				 * encoding, read only to skip it */
				if (enc != PE_OMIT && !r.bad) {
					struct rd tmp = r;

					if ((enc & 0x70) > 0x10 || !rd_encoded(&tmp, enc & 0x7f, &dummy))
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

/* Sort rows by address, terminators (NONE at an FDE's end) before real
 * rows at the same address, then in emission order: the last row emitted
 * for an address wins. */
struct sort_row {
	struct ehtab_row row;
	size_t seq;
};

static int cmp_sort_row(const void *a, const void *b)
{
	const struct sort_row *x = a, *y = b;

	if (x->row.addr != y->row.addr)
		return x->row.addr < y->row.addr ? -1 : 1;
	bool xn = x->row.rule.cfa_kind == UNWIND_CFA_NONE, yn = y->row.rule.cfa_kind == UNWIND_CFA_NONE;
	if (xn != yn)
		return xn ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The rows one FDE emitted: rows[start, start + len), in address order
 * unless its program is odd (DW_CFA_set_loc backwards). */
struct fde_run {
	size_t start, len;
	const struct sort_row *first;
};

static int cmp_fde_run(const void *a, const void *b)
{
	return cmp_sort_row(((const struct fde_run *)a)->first, ((const struct fde_run *)b)->first);
}

/*
 * Sort s[0, n) by cmp_sort_row.  FDEs do not overlap and each emits its
 * rows in address order, so the FDEs' runs of rows put in the order of
 * their first rows are the sorted table: sorting a few thousand runs, not
 * ~100,000 rows (qsort was most of building libc's table).  The result is
 * checked; rows still out of order (overlapping FDEs, hostile data) are
 * sorted one by one, as before.
 */
static void sort_rows(struct sort_row *s, size_t n, struct fde_run *runs, size_t nruns)
{
	struct sort_row *out;
	size_t k = 0;
	bool sorted = true;

	for (size_t r = 0; r < nruns; r++) {
		k += runs[r].len;
		runs[r].first = runs[r].len ? &s[runs[r].start] : NULL;
		for (size_t i = 1; sorted && i < runs[r].len; i++)
			sorted = cmp_sort_row(&s[runs[r].start + i - 1], &s[runs[r].start + i]) <= 0;
		sorted = sorted && runs[r].len;
	}
	out = sorted && k == n ? malloc(n * sizeof(*out)) : NULL;
	if (out) {
		qsort(runs, nruns, sizeof(*runs), cmp_fde_run);
		k = 0;
		for (size_t r = 0; r < nruns; r++) {
			memcpy(out + k, s + runs[r].start, runs[r].len * sizeof(*out));
			k += runs[r].len;
		}
		for (size_t i = 1; sorted && i < n; i++)
			sorted = cmp_sort_row(&out[i - 1], &out[i]) <= 0;
		if (sorted)
			memcpy(s, out, n * sizeof(*s));
		free(out);
		if (sorted)
			return;
	}
	qsort(s, n, sizeof(*s), cmp_sort_row);
}

static int finish_rows(struct ehtab *t, struct fde_run *runs, size_t nruns)
{
	struct sort_row *s;
	size_t n = 0;

	if (!t->nr)
		return 0;
	s = malloc(t->nr * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++) {
		s[i].row = t->rows[i];
		s[i].seq = i;
	}
	sort_rows(s, t->nr, runs, nruns);
	for (size_t i = 0; i < t->nr; i++) {
		/* the last row for an address wins */
		if (i + 1 < t->nr && s[i + 1].row.addr == s[i].row.addr)
			continue;
		/* merge runs of one rule */
		if (n && !memcmp(&t->rows[n - 1].rule, &s[i].row.rule, sizeof(s[i].row.rule)))
			continue;
		t->rows[n++] = s[i].row;
	}
	free(s);
	/* a leading gap row says nothing */
	if (n && t->rows[0].rule.cfa_kind == UNWIND_CFA_NONE) {
		memmove(t->rows, t->rows + 1, (n - 1) * sizeof(*t->rows));
		n--;
	}
	t->nr = n;
	t->st.rows = n;
	return 0;
}

int ehtab_build(struct ehtab **out, Elf *elf, struct ehtab_error *err)
{
	struct ehtab *t;
	const uint8_t *data;
	size_t len, ncies = 0, capcies = 0, nruns = 0, capruns = 0;
	uint64_t vaddr;
	struct cie *cies = NULL;
	struct fde_run *runs = NULL;
	int rc;

	*out = NULL;
	err->message[0] = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		snprintf(err->message, sizeof(err->message), "not a 64-bit ELF object");
		return -EINVAL;
	}
	rc = find_eh_frame(elf, &data, &len, &vaddr);
	if (rc) {
		snprintf(err->message, sizeof(err->message), "%s",
			 rc == -ENOENT ? "no .eh_frame section" : "unreadable .eh_frame section");
		return rc;
	}
	if (len > MAX_EH_FRAME) {
		snprintf(err->message, sizeof(err->message), ".eh_frame of %zu bytes is over the limit", len);
		return -E2BIG;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->st.eh_frame_bytes = len;

	/* Two passes: CIEs first (FDEs point back at them, hostile ones
	 * anywhere), then FDEs. */
	for (int pass = 0; pass < 2; pass++) {
		size_t off = 0;

		while (off + 4 <= len) {
			struct rd r = { .p = data + off, .end = data + len, .base = data, .vaddr = vaddr };
			uint64_t elen = rd_u(&r, 4), id;
			const uint8_t *body, *eend;
			size_t id_off;

			if (elen == 0)
				break; /* terminator */
			if (elen == 0xffffffffu)
				elen = rd_u(&r, 8);
			if (r.bad || elen < 4 || elen > (uint64_t)(r.end - r.p)) {
				snprintf(err->message, sizeof(err->message),
					 ".eh_frame entry at offset %zu runs past the section", off);
				rc = -EINVAL;
				goto fail;
			}
			eend = r.p + elen;
			id_off = (size_t)(r.p - data);
			id = rd_u(&r, 4);
			body = r.p;
			if (id == 0) {
				if (pass == 0) {
					if (ncies == capcies) {
						size_t n = capcies ? capcies * 2 : 16;
						void *p;

						if (n > MAX_CIES) {
							rc = -E2BIG;
							snprintf(err->message, sizeof(err->message), "too many CIEs");
							goto fail;
						}
						p = realloc(cies, n * sizeof(*cies));
						if (!p) {
							rc = -ENOMEM;
							goto fail;
						}
						cies = p;
						capcies = n;
					}
					/* a CIE we cannot read only matters if an FDE uses it */
					parse_cie(&r, off, body, eend, &cies[ncies]);
					cies[ncies].off = off;
					ncies++;
					t->st.cies++;
				}
			} else if (pass == 1) {
				struct cie key, *c;
				struct cfa_state init = { 0 }, s;
				uint64_t pc, range;

				/* the CIE pointer counts back from the id field */
				if (id > id_off) {
					rc = -EINVAL;
					snprintf(err->message, sizeof(err->message),
						 "FDE at offset %zu points before the section", off);
					goto fail;
				}
				key.off = id_off - id;
				/* bsearch must not see a null array (no CIE yet) */
				c = ncies ? bsearch(&key, cies, ncies, sizeof(*cies), cmp_cie) : NULL;
				if (!c || !c->ok) {
					rc = -EINVAL;
					snprintf(err->message, sizeof(err->message),
						 "FDE at offset %zu has no usable CIE", off);
					goto fail;
				}
				/* the range has the encoding's format, never pcrel */
				if (!rd_encoded(&r, c->fde_enc, &pc) ||
				    !rd_encoded(&r, c->fde_enc & 0x0f, &range)) {
					rc = -EINVAL;
					snprintf(err->message, sizeof(err->message),
						 "FDE at offset %zu: unreadable address range", off);
					goto fail;
				}
				if (c->aug_z) {
					uint64_t alen = rd_uleb(&r);

					if (r.bad || alen > (uint64_t)(eend - r.p)) {
						rc = -EINVAL;
						snprintf(err->message, sizeof(err->message),
							 "FDE at offset %zu: bad augmentation", off);
						goto fail;
					}
					r.p += alen;
				}
				t->st.fdes++;
				t->st.signal_fdes += c->signal;
				if (!range)
					goto next;
				if (pc + range < pc || range > (256ULL << 20)) {
					rc = -EINVAL;
					snprintf(err->message, sizeof(err->message),
						 "FDE at offset %zu covers an absurd range", off);
					goto fail;
				}
				/* the CIE's initial instructions, then the FDE's */
				init.cfa_kind = UNWIND_CFA_INVALID;
				if ((rc = run_program(NULL, c, c->insns, c->insns_end, &init, NULL, 0, 0)))
					goto bad_program;
				s = init;
				size_t first_row = t->nr;

				if ((rc = run_program(t, c, r.p, eend, &s, &init, pc, pc + range)))
					goto bad_program;
				struct unwind_rule none = { 0 };
				if ((rc = push_row(t, pc + range, &none)))
					goto fail;
				if (nruns == capruns) {
					size_t ncap = capruns ? capruns * 2 : 256;
					struct fde_run *nr = realloc(runs, ncap * sizeof(*nr));

					if (!nr) {
						rc = -ENOMEM;
						goto fail;
					}
					runs = nr;
					capruns = ncap;
				}
				runs[nruns++] = (struct fde_run){ .start = first_row, .len = t->nr - first_row };
			}
next:
			off = (size_t)(eend - data);
			continue;
bad_program:
			if (rc == -EINVAL)
				snprintf(err->message, sizeof(err->message),
					 "FDE at offset %zu: malformed CFA program", off);
			goto fail;
		}
		if (pass == 0 && ncies)
			qsort(cies, ncies, sizeof(*cies), cmp_cie);
	}
	free(cies);
	cies = NULL;
	rc = finish_rows(t, runs, nruns);
	free(runs);
	runs = NULL;
	if (rc)
		goto fail;
	*out = t;
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err->message, sizeof(err->message), "out of memory");
	else if (rc == -E2BIG && !err->message[0])
		snprintf(err->message, sizeof(err->message), "more than %u rows", MAX_ROWS);
	free(cies);
	free(runs);
	ehtab_destroy(t);
	return rc;
}

static int cmp_row_addr(const void *a, const void *b)
{
	const struct ehtab_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->rule.cfa_kind != UNWIND_CFA_NONE) - (y->rule.cfa_kind != UNWIND_CFA_NONE);
}

int ehtab_add_ranges(struct ehtab **tp, const struct ehtab_range *r, size_t n)
{
	static const struct unwind_rule none = { 0 };
	struct ehtab *t = *tp;
	size_t nr0;
	uint64_t last_end = 0;
	int rc;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		*tp = t;
	}
	nr0 = t->nr; /* rows are sorted by address up to here */
	for (size_t i = 0; i < n; i++) {
		uint64_t a = r[i].start, b = r[i].end;
		size_t lo = 0, hi = nr0;

		/* in order and apart: anything else is a hostile table */
		if (b <= a || a < last_end)
			continue;
		/* the first row at or above a */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->rows[mid].addr < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		bool at_a = lo < nr0 && t->rows[lo].addr == a;
		/* in force at a: the row at a, else the one before; no row
		 * inside (a, b) */
		if (at_a ? t->rows[lo].rule.cfa_kind != UNWIND_CFA_NONE
			 : lo > 0 && t->rows[lo - 1].rule.cfa_kind != UNWIND_CFA_NONE)
			continue;
		size_t k = at_a ? lo + 1 : lo;
		if (k < nr0 && t->rows[k].addr < b)
			continue;
		bool at_b = k < nr0 && t->rows[k].addr == b;
		/* a row of its own even at a gap row's address (it wins
		 * below): the rows checked against stay as they were */
		if ((rc = push_row(t, a, &r[i].rule)))
			return rc;
		/* a range added at b replaces this gap row (below) */
		if (!at_b && (rc = push_row(t, b, &none)))
			return rc;
		last_end = b;
	}
	if (t->nr != nr0)
		qsort(t->rows, t->nr, sizeof(*t->rows), cmp_row_addr);
	/* one row an address (the gap row sorts first: the last wins); runs
	 * of one rule merged, as finish_rows */
	size_t m = 0;
	for (size_t i = 0; i < t->nr; i++) {
		if (i + 1 < t->nr && t->rows[i + 1].addr == t->rows[i].addr)
			continue;
		if (m && !memcmp(&t->rows[m - 1].rule, &t->rows[i].rule, sizeof(t->rows[i].rule)))
			continue;
		t->rows[m++] = t->rows[i];
	}
	t->nr = m;
	t->st.rows = t->nr;
	return 0;
}

/* A process starts at the object's entry: an executable (ET_EXEC, or one
 * with PT_INTERP), or an ET_DYN that starts itself: one that needs no
 * library and has no constructors for a dynamic linker to run (glibc's
 * and musl's dynamic linkers).  A library is never the kernel's entry,
 * and ld.bfd sets its e_entry to the start of .text when it has no
 * _start (libmnl, libXau here: crtstuff's deregister_tm_clones, which
 * exit's destructors call, no FDE). */
static bool is_process_entry(Elf *elf, const GElf_Ehdr *eh)
{
	size_t nph;
	bool has_interp = false, needs = false;
	GElf_Phdr ph;

	if (eh->e_type == ET_EXEC)
		return true;
	if (eh->e_type != ET_DYN || elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return false;
		if (ph.p_type == PT_INTERP)
			has_interp = true;
		if (ph.p_type != PT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
		GElf_Dyn dyn;

		if (!d)
			return false;
		for (size_t k = 0; k < ph.p_filesz / sizeof(Elf64_Dyn); k++) {
			if (!gelf_getdyn(d, (int)k, &dyn) || dyn.d_tag == DT_NULL)
				break;
			needs |= dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_INIT ||
				 dyn.d_tag == DT_INIT_ARRAY || dyn.d_tag == DT_PREINIT_ARRAY;
		}
	}
	return has_interp || !needs;
}

int ehtab_add_entry(struct ehtab *t, Elf *elf)
{
	GElf_Ehdr eh;
	size_t nph, lo = 0, hi;
	GElf_Phdr ph;
	bool in_text = false;
	uint64_t end;
	int rc;

	if (!t || !t->nr || !gelf_getehdr(elf, &eh) || !eh.e_entry || !is_process_entry(elf, &eh) ||
	    elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (size_t i = 0; i < nph && !in_text; i++)
		in_text = gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
			  eh.e_entry >= ph.p_vaddr && eh.e_entry - ph.p_vaddr < ph.p_filesz;
	if (!in_text)
		return 0;
	/* the first row above the entry: the next FDE's start */
	hi = t->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->rows[mid].addr <= eh.e_entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && t->rows[lo - 1].rule.cfa_kind != UNWIND_CFA_NONE)
		return 0; /* an FDE says what the entry does (glibc's _start) */
	if (lo == t->nr || t->rows[lo].addr - eh.e_entry > EHTAB_ENTRY_MAX)
		return 0; /* no FDE close after it: where the entry code ends is not known */
	end = t->rows[lo].addr;
	rc = ehtab_add_ranges(&t, &(struct ehtab_range){ eh.e_entry, end,
							 { .cfa_kind = UNWIND_CFA_END } }, 1);
	return rc ? rc : 1;
}

void ehtab_destroy(struct ehtab *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct ehtab_row *ehtab_rows(const struct ehtab *t, size_t *nr)
{
	*nr = t->nr;
	return t->rows;
}

void ehtab_stats(const struct ehtab *t, struct ehtab_stats *st)
{
	*st = t->st;
}

/* ---- rules and packing ------------------------------------------------ */

struct ehtab_rules {
	struct unwind_rule *rules;
	size_t nr, cap;
	uint32_t *slots; /* open addressing: index + 1, 0 empty */
	size_t nslots;
};

static uint64_t rule_hash(const struct unwind_rule *r)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const uint8_t *b = (const uint8_t *)r;

	for (size_t i = 0; i < sizeof(*r); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

int ehtab_rules_create(struct ehtab_rules **out)
{
	struct ehtab_rules *rs = calloc(1, sizeof(*rs));
	uint16_t idx;

	*out = NULL;
	if (!rs)
		return -ENOMEM;
	rs->nslots = 1 << 12;
	rs->slots = calloc(rs->nslots, sizeof(*rs->slots));
	if (!rs->slots) {
		free(rs);
		return -ENOMEM;
	}
	struct unwind_rule none = { 0 };
	if (ehtab_rules_intern(rs, &none, &idx)) {
		ehtab_rules_destroy(rs);
		return -ENOMEM;
	}
	*out = rs;
	return 0;
}

void ehtab_rules_destroy(struct ehtab_rules *rs)
{
	if (!rs)
		return;
	free(rs->rules);
	free(rs->slots);
	free(rs);
}

size_t ehtab_rules_count(const struct ehtab_rules *rs)
{
	return rs->nr;
}

const struct unwind_rule *ehtab_rules_get(const struct ehtab_rules *rs, size_t i)
{
	return i < rs->nr ? &rs->rules[i] : NULL;
}

int ehtab_rules_intern(struct ehtab_rules *rs, const struct unwind_rule *r, uint16_t *idx)
{
	size_t mask = rs->nslots - 1, j;

	for (j = rule_hash(r) & mask; rs->slots[j]; j = (j + 1) & mask) {
		if (!memcmp(&rs->rules[rs->slots[j] - 1], r, sizeof(*r))) {
			*idx = (uint16_t)(rs->slots[j] - 1);
			return 0;
		}
	}
	if (rs->nr >= UNWIND_MAX_RULES)
		return -E2BIG;
	if (rs->nr == rs->cap) {
		size_t n = rs->cap ? rs->cap * 2 : 256;
		void *p = realloc(rs->rules, n * sizeof(*rs->rules));

		if (!p)
			return -ENOMEM;
		rs->rules = p;
		rs->cap = n;
	}
	rs->rules[rs->nr] = *r;
	rs->slots[j] = (uint32_t)++rs->nr;
	*idx = (uint16_t)(rs->nr - 1);
	if (rs->nr * 2 > rs->nslots) { /* keep the table half empty */
		size_t ns = rs->nslots * 2;
		uint32_t *s = calloc(ns, sizeof(*s));

		if (!s)
			return 0; /* still correct, only slower */
		for (size_t i = 0; i < rs->nr; i++) {
			size_t k;

			for (k = rule_hash(&rs->rules[i]) & (ns - 1); s[k]; k = (k + 1) & (ns - 1))
				;
			s[k] = (uint32_t)i + 1;
		}
		free(rs->slots);
		rs->slots = s;
		rs->nslots = ns;
	}
	return 0;
}

void ehtab_packed_free(struct ehtab_packed *p)
{
	free(p->rows);
	free(p->pages);
	memset(p, 0, sizeof(*p));
}

/*
 * A page gets an entry when any rule other than NONE is in force in it;
 * its rows are the rule in force at its start (offset 0) and every row
 * that starts inside it.
 */
int ehtab_pack(const struct ehtab *t, struct ehtab_rules *rs, struct ehtab_packed *out,
	       struct ehtab_error *err)
{
	size_t nrows = 0, capr = 0, npages = 0, capp = 0;
	uint16_t *idx = NULL;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!t->nr)
		return 0;
	idx = malloc(t->nr * sizeof(*idx));
	if (!idx)
		goto fail;
	for (size_t i = 0; i < t->nr; i++) {
		rc = ehtab_rules_intern(rs, &t->rows[i].rule, &idx[i]);
		if (rc) {
			snprintf(err->message, sizeof(err->message), "%s",
				 rc == -E2BIG ? "more distinct unwind rules than the table holds" : "out of memory");
			goto fail;
		}
	}
	rc = -ENOMEM;
	for (size_t i = 0; i < t->nr; i++) {
		uint64_t a = t->rows[i].addr;
		uint64_t b = i + 1 < t->nr ? t->rows[i + 1].addr : a + 1;
		uint64_t first = a >> UNWIND_PAGE_SHIFT, last = (b - 1) >> UNWIND_PAGE_SHIFT;

		if (idx[i] == UNWIND_RULE_NONE)
			continue;
		/* page numbers are 32 bits: no row may reach past 2^48 */
		if (last - first > MAX_TEXT_PAGES || ((b - 1) >> 48) || b <= a) {
			rc = -E2BIG;
			snprintf(err->message, sizeof(err->message), "unwind rows span too much address space");
			goto fail;
		}
		for (uint64_t pg = first; pg <= last; pg++) {
			size_t j;

			if (npages && out->pages[npages - 1].page >= pg)
				continue; /* already there */
			if (npages >= MAX_TEXT_PAGES) {
				rc = -E2BIG;
				snprintf(err->message, sizeof(err->message), "unwind rows span too many pages");
				goto fail;
			}
			if (npages == capp) {
				size_t n = capp ? capp * 2 : 64;
				void *p = realloc(out->pages, n * sizeof(*out->pages));

				if (!p)
					goto fail;
				out->pages = p;
				capp = n;
			}
			/* rows of this page: the one in force at its start (row
			 * i or earlier: rows are sorted) and those inside */
			uint64_t pstart = pg << UNWIND_PAGE_SHIFT, pend = pstart + (1u << UNWIND_PAGE_SHIFT);
			size_t k = i;

			while (k > 0 && t->rows[k].addr > pstart)
				k--;
			out->pages[npages].page = (uint32_t)pg;
			out->pages[npages].first = (uint32_t)nrows;
			for (j = k; j < t->nr && t->rows[j].addr < pend; j++) {
				uint32_t lo = t->rows[j].addr <= pstart ? 0 : (uint32_t)(t->rows[j].addr - pstart);

				if (nrows == capr) {
					size_t n = capr ? capr * 2 : 4096;
					void *p = realloc(out->rows, n * sizeof(*out->rows));

					if (!p)
						goto fail;
					out->rows = p;
					capr = n;
				}
				/* rows before the page start collapse into row 0 */
				if (lo == 0 && nrows > out->pages[npages].first)
					nrows--;
				out->rows[nrows++] = UNWIND_ROW(lo, idx[j]);
			}
			out->pages[npages].nr = (uint32_t)(nrows - out->pages[npages].first);
			npages++;
		}
	}
	out->nr_rows = nrows;
	out->nr_pages = npages;
	free(idx);
	return 0;
fail:
	free(idx);
	ehtab_packed_free(out);
	if (rc == -ENOMEM)
		snprintf(err->message, sizeof(err->message), "out of memory");
	return rc;
}
