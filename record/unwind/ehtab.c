// SPDX-License-Identifier: Apache-2.0
/*
 * ehtab.c - .eh_frame to unwind rows (ehtab.h): the object's .eh_frame
 * found (by section, else through PT_GNU_EH_FRAME), its entries walked
 * (CIEs, then each FDE's program run by ehtab_cfi.c), the rows sorted and
 * merged into one table, and rows added where no FDE is (Go's ranges,
 * the entry code).  Rules and pages for the BPF maps: ehtab_pack.c.
 */
#include "ehtab_internal.h"

/* ---- CIEs -------------------------------------------------------------- */

static int cmp_cie(const void *a, const void *b)
{
	const struct cie *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
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

		if (!ehtab__rd_encoded(&r, h[1], &at) || r.bad)
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
			uint64_t elen = ehtab__rd_u(&r, 4), id;
			const uint8_t *body, *eend;
			size_t id_off;

			if (elen == 0)
				break; /* terminator */
			if (elen == 0xffffffffu)
				elen = ehtab__rd_u(&r, 8);
			if (r.bad || elen < 4 || elen > (uint64_t)(r.end - r.p)) {
				snprintf(err->message, sizeof(err->message),
					 ".eh_frame entry at offset %zu runs past the section", off);
				rc = -EINVAL;
				goto fail;
			}
			eend = r.p + elen;
			id_off = (size_t)(r.p - data);
			id = ehtab__rd_u(&r, 4);
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
					ehtab__parse_cie(&r, off, body, eend, &cies[ncies]);
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
				if (!ehtab__rd_encoded(&r, c->fde_enc, &pc) ||
				    !ehtab__rd_encoded(&r, c->fde_enc & 0x0f, &range)) {
					rc = -EINVAL;
					snprintf(err->message, sizeof(err->message),
						 "FDE at offset %zu: unreadable address range", off);
					goto fail;
				}
				if (c->aug_z) {
					uint64_t alen = ehtab__rd_uleb(&r);

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
				if ((rc = ehtab__run_program(NULL, c, c->insns, c->insns_end, &init, NULL, 0, 0)))
					goto bad_program;
				s = init;
				size_t first_row = t->nr;

				if ((rc = ehtab__run_program(t, c, r.p, eend, &s, &init, pc, pc + range)))
					goto bad_program;
				struct unwind_rule none = { 0 };
				if ((rc = ehtab__push_row(t, pc + range, &none)))
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
		if ((rc = ehtab__push_row(t, a, &r[i].rule)))
			return rc;
		/* a range added at b replaces this gap row (below) */
		if (!at_b && (rc = ehtab__push_row(t, b, &none)))
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
