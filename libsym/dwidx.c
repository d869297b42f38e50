/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dwidx.c - an address index over a module's DWARF.
 *
 * libdw's per-address helpers (dwfl_module_addrdie, dwarf_getscopes) walk
 * DIE scopes on every call and depend on .debug_aranges, which clang does
 * not emit.  Instead:
 *   - once per module: the CU headers and their DW_AT_ranges/low_pc/high_pc
 *     into a sorted address -> CU table;
 *   - once per CU, on first use: one walk of its DIE tree collecting
 *     subprograms and inlined subroutines (with ranges, names resolved
 *     through abstract origins, call sites), kept in DIE preorder so a
 *     subtree is a contiguous slice; the CU's line table is fetched once;
 *   - per address: binary searches only.
 * Corrupt DWARF yields errors from libdw: the affected CU is left partly
 * indexed or empty, and callers fall back to the symbol table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "bsym_internal.h"

#define MAX_DIE_DEPTH 256
#define MAX_RANGES_PER_DIE 4096
#define CU_SCAN_BACK 32

struct dw_rng {
	uint64_t lo, hi;
};

struct dw_fn {
	const char *raw;
	const char *demangled;
	uint64_t entry;
	const char *call_file;
	uint32_t call_line, call_col;
	uint32_t end; /* preorder index after this entry's subtree */
	uint32_t rng_first, rng_count;
	bool root; /* a subprogram: starts a chain of its own */
};

struct dw_root {
	uint64_t lo, hi;
	uint32_t fn;
};

struct dw_cu {
	Dwarf_Die die;
	int state; /* 0: not indexed, 1: indexed */
	struct dw_fn *fns;
	size_t nfns, capfns;
	struct dw_rng *rngs;
	size_t nrngs, caprngs;
	struct dw_root *roots;
	size_t nroots;
	Dwarf_Lines *lines;
	size_t nlines;
	uint64_t *line_addr;
	Dwarf_Files *files;
	size_t nfiles;
};

struct cu_rng {
	uint64_t lo, hi;
	uint32_t cu;
};

struct bsym_dwidx {
	struct bsym_map origin_names; /* abstract origin DIE offset -> name */
	struct dw_cu *cus;
	size_t ncus;
	struct cu_rng *cur;
	size_t ncur, capcur;
	bool split; /* skeleton units: names depend on .dwo files found */
};

static int grow(void **p, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *np = realloc(*p, n * elsz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static const char *die_rawname(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *s;
	if (dwarf_attr_integrate(d, DW_AT_linkage_name, &a) && (s = dwarf_formstring(&a)))
		return s;
	if (dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a) && (s = dwarf_formstring(&a)))
		return s;
	if (dwarf_attr_integrate(d, DW_AT_name, &a) && (s = dwarf_formstring(&a)))
		return s;
	return NULL;
}

static bool descends(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_common_block:
		return true;
	default:
		return false;
	}
}

static int cmp_root(const void *a, const void *b)
{
	const struct dw_root *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return 0;
}

/* Add the DIE's code ranges to cu->rngs; returns how many (0: none). */
static int add_ranges(struct dw_cu *cu, Dwarf_Die *d)
{
	Dwarf_Addr base, s, e;
	ptrdiff_t off = 0;
	int n = 0, iter = 0;
	while ((off = dwarf_ranges(d, off, &base, &s, &e)) > 0 && n < MAX_RANGES_PER_DIE &&
	       iter++ < 4 * MAX_RANGES_PER_DIE) {
		if (s >= e)
			continue;
		if (grow((void **)&cu->rngs, &cu->caprngs, cu->nrngs + 1, sizeof(*cu->rngs)))
			return -ENOMEM;
		cu->rngs[cu->nrngs++] = (struct dw_rng){ s, e };
		n++;
	}
	return n;
}

static const char no_name[] = "";

/* Inlined instances of one function share its abstract origin: resolve
 * each origin's name once (dwarf_attr_integrate walks DIE references,
 * which costs a CU lookup per hop). */
static const char *fn_rawname(struct bsym_dwidx *idx, struct dw_cu *cu, Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Off rel;
	if (!dwarf_attr(d, DW_AT_abstract_origin, &a))
		return die_rawname(d);
	switch (dwarf_whatform(&a)) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		break; /* CU-relative: the offset names the DIE within this CU */
	default:
		return die_rawname(d);
	}
	/* dwarf_formref is marked deprecated because its offset is CU-relative;
	 * that is exactly what we want here, a cheap key within this CU. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	int err = dwarf_formref(&a, &rel);
#pragma GCC diagnostic pop
	if (err != 0 || rel >= (1ULL << 40))
		return die_rawname(d);
	uint64_t key = ((uint64_t)(cu - idx->cus) << 40 | rel) + 1;
	const char *n = bsym_map_get(&idx->origin_names, key);
	if (n)
		return n == no_name ? NULL : n;
	n = die_rawname(d);
	bsym_map_put(&idx->origin_names, key, (void *)(n ? n : no_name));
	return n;
}

static int new_fn(struct bsym_dwidx *idx, struct dw_cu *cu, Dwarf_Die *d, int tag, size_t rfirst,
		  int rcount)
{
	if (grow((void **)&cu->fns, &cu->capfns, cu->nfns + 1, sizeof(*cu->fns)))
		return -ENOMEM;
	struct dw_fn *f = &cu->fns[cu->nfns];
	memset(f, 0, sizeof(*f));
	f->raw = fn_rawname(idx, cu, d);
	f->rng_first = (uint32_t)rfirst;
	f->rng_count = (uint32_t)rcount;
	f->root = tag == DW_TAG_subprogram;
	f->end = (uint32_t)cu->nfns + 1;
	Dwarf_Addr lo;
	if (dwarf_lowpc(d, &lo) == 0) {
		f->entry = lo;
	} else {
		f->entry = UINT64_MAX;
		for (int i = 0; i < rcount; i++)
			if (cu->rngs[rfirst + i].lo < f->entry)
				f->entry = cu->rngs[rfirst + i].lo;
	}
	if (tag == DW_TAG_inlined_subroutine) {
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (dwarf_attr(d, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
		    cu->files && w < cu->nfiles)
			f->call_file = dwarf_filesrc(cu->files, w, NULL, NULL);
		if (dwarf_attr(d, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
			f->call_line = w > UINT32_MAX ? 0 : (uint32_t)w;
		if (dwarf_attr(d, DW_AT_call_column, &a) && dwarf_formudata(&a, &w) == 0)
			f->call_col = w > UINT32_MAX ? 0 : (uint32_t)w;
	}
	return (int)cu->nfns++;
}

/* Walk the CU's DIE tree once.  Iterative, depth-bounded, and it refuses a
 * sibling chain that does not move forward (a corrupt DW_AT_sibling could
 * otherwise loop for ever). */
static int index_cu(struct bsym_dwidx *idx, struct dw_cu *cu)
{
	cu->state = 1;
	if (dwarf_getsrcfiles(&cu->die, &cu->files, &cu->nfiles) != 0) {
		cu->files = NULL;
		cu->nfiles = 0;
	}
	if (dwarf_getsrclines(&cu->die, &cu->lines, &cu->nlines) != 0) {
		cu->lines = NULL;
		cu->nlines = 0;
	}
	if (cu->nlines) {
		cu->line_addr = malloc(cu->nlines * sizeof(*cu->line_addr));
		if (!cu->line_addr)
			return -ENOMEM;
		for (size_t i = 0; i < cu->nlines; i++) {
			Dwarf_Addr a = 0;
			Dwarf_Line *l = dwarf_onesrcline(cu->lines, i);
			if (!l || dwarf_lineaddr(l, &a) != 0)
				a = i ? cu->line_addr[i - 1] : 0;
			cu->line_addr[i] = a;
		}
	}

	Dwarf_Die stack[MAX_DIE_DEPTH];
	int parent[MAX_DIE_DEPTH], created[MAX_DIE_DEPTH];
	int depth = 0;
	if (dwarf_child(&cu->die, &stack[0]) != 0)
		goto done;
	parent[0] = -1;
	for (;;) {
		Dwarf_Die *d = &stack[depth];
		int tag = dwarf_tag(d);
		int me = parent[depth];
		bool walk = dwarf_haschildren(d) > 0 && descends(tag);
		created[depth] = -1;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			size_t rfirst = cu->nrngs;
			int rc = 0;
			if (tag == DW_TAG_subprogram || parent[depth] >= 0)
				rc = add_ranges(cu, d);
			if (rc < 0)
				return rc;
			if (rc > 0) {
				int fn = new_fn(idx, cu, d, tag, rfirst, rc);
				if (fn < 0)
					return fn;
				created[depth] = fn;
				me = fn;
			} else {
				walk = false; /* abstract instance or declaration: no code */
			}
		}
		if (walk && depth + 1 < MAX_DIE_DEPTH && dwarf_child(d, &stack[depth + 1]) == 0) {
			parent[depth + 1] = me;
			depth++;
			continue;
		}
		for (;;) {
			if (created[depth] >= 0)
				cu->fns[created[depth]].end = (uint32_t)cu->nfns;
			Dwarf_Die next;
			Dwarf_Off cur = dwarf_dieoffset(&stack[depth]);
			if (dwarf_siblingof(&stack[depth], &next) == 0 && dwarf_dieoffset(&next) > cur) {
				stack[depth] = next;
				break;
			}
			if (depth == 0)
				goto done;
			depth--;
		}
	}
done:
	for (size_t i = 0; i < cu->nfns; i++)
		if (cu->fns[i].root)
			cu->nroots += cu->fns[i].rng_count;
	if (cu->nroots) {
		cu->roots = malloc(cu->nroots * sizeof(*cu->roots));
		if (!cu->roots) {
			cu->nroots = 0;
			return -ENOMEM;
		}
		size_t k = 0;
		for (size_t i = 0; i < cu->nfns; i++) {
			if (!cu->fns[i].root)
				continue;
			for (uint32_t r = 0; r < cu->fns[i].rng_count; r++) {
				struct dw_rng *g = &cu->rngs[cu->fns[i].rng_first + r];
				cu->roots[k++] = (struct dw_root){ g->lo, g->hi, (uint32_t)i };
			}
		}
		qsort(cu->roots, cu->nroots, sizeof(*cu->roots), cmp_root);
	}
	return 0;
}

static int cmp_cur(const void *a, const void *b)
{
	const struct cu_rng *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

static int add_cur(struct bsym_dwidx *idx, uint64_t lo, uint64_t hi, size_t cu)
{
	if (grow((void **)&idx->cur, &idx->capcur, idx->ncur + 1, sizeof(*idx->cur)))
		return -ENOMEM;
	idx->cur[idx->ncur++] = (struct cu_rng){ lo, hi, (uint32_t)cu };
	return 0;
}

struct bsym_dwidx *bsym_dwidx_new(Dwarf *dw)
{
	struct bsym_dwidx *idx = calloc(1, sizeof(*idx));
	if (!idx)
		return NULL;
	size_t capcus = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Half ver;
	uint8_t ut;
	Dwarf_Die cudie, subdie;
	while (dwarf_get_units(dw, cu, &cu, &ver, &ut, &cudie, &subdie) == 0) {
		if (ut == DW_UT_type || ut == DW_UT_split_type || ut == DW_UT_partial)
			continue;
		if (idx->ncus >= UINT32_MAX - 1)
			break;
		if (grow((void **)&idx->cus, &capcus, idx->ncus + 1, sizeof(*idx->cus)))
			goto oom;
		size_t ci = idx->ncus++;
		struct dw_cu *c = &idx->cus[ci];
		memset(c, 0, sizeof(*c));
		c->die = cudie;
		if (ut == DW_UT_skeleton || ut == DW_UT_split_compile)
			idx->split = true;
		if (ut == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid)
			c->die = subdie;

		Dwarf_Addr base, s, e;
		ptrdiff_t off = 0;
		int n = 0, iter = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &s, &e)) > 0 &&
		       n < MAX_RANGES_PER_DIE && iter++ < 4 * MAX_RANGES_PER_DIE) {
			if (s >= e)
				continue;
			if (add_cur(idx, s, e, ci))
				goto oom;
			n++;
		}
		if (n == 0) {
			/* No ranges on the CU DIE: index it now and let its
			 * functions stand for it. */
			if (index_cu(idx, c))
				goto oom;
			for (size_t r = 0; r < c->nroots; r++)
				if (add_cur(idx, c->roots[r].lo, c->roots[r].hi, ci))
					goto oom;
		}
	}
	if (idx->ncur)
		qsort(idx->cur, idx->ncur, sizeof(*idx->cur), cmp_cur);
	return idx;
oom:
	bsym_dwidx_free(idx);
	return NULL;
}

bool bsym_dwidx_has_split_units(const struct bsym_dwidx *idx)
{
	return idx && idx->split;
}

void bsym_dwidx_free(struct bsym_dwidx *idx)
{
	if (!idx)
		return;
	for (size_t i = 0; i < idx->ncus; i++) {
		free(idx->cus[i].fns);
		free(idx->cus[i].rngs);
		free(idx->cus[i].roots);
		free(idx->cus[i].line_addr);
	}
	free(idx->cus);
	free(idx->cur);
	bsym_map_free(&idx->origin_names);
	free(idx);
}

static bool fn_contains(const struct dw_cu *cu, const struct dw_fn *f, uint64_t a)
{
	for (uint32_t r = 0; r < f->rng_count; r++) {
		const struct dw_rng *g = &cu->rngs[f->rng_first + r];
		if (g->lo <= a && a < g->hi)
			return true;
	}
	return false;
}

/* Index of the last element with lo <= a, or -1.  Both tables start with
 * a uint64_t lo. */
#define LAST_LE(arr, n, a)                                                   \
	({                                                                   \
		size_t lo_ = 0, hi_ = (n);                                   \
		while (lo_ < hi_) {                                          \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                 \
			if ((arr)[mid_].lo <= (a))                           \
				lo_ = mid_ + 1;                              \
			else                                                 \
				hi_ = mid_;                                  \
		}                                                            \
		(ptrdiff_t) lo_ - 1;                                         \
	})

static int cu_function(struct dw_cu *cu, uint64_t a, struct bsym_dwlookup *out)
{
	ptrdiff_t i = LAST_LE(cu->roots, cu->nroots, a);
	ptrdiff_t stop = i - CU_SCAN_BACK;
	for (; i >= 0 && i > stop; i--)
		if (cu->roots[i].lo <= a && a < cu->roots[i].hi)
			break;
	if (i < 0 || i <= stop)
		return 0;
	uint32_t cur = cu->roots[i].fn;
	out->nr = 0;
	out->root_lo = cu->roots[i].lo;
	for (;;) {
		struct dw_fn *f = &cu->fns[cur];
		struct bsym_dwframe *fr = &out->chain[out->nr++];
		fr->raw = f->raw;
		fr->demangled = &f->demangled;
		fr->entry = f->entry;
		fr->call_file = f->call_file;
		fr->call_line = f->call_line;
		fr->call_column = f->call_col;
		if (out->nr == BSYM_MAX_INLINE_DEPTH)
			break;
		uint32_t c = cur + 1, next = UINT32_MAX;
		while (c < f->end && c < cu->nfns) {
			if (!cu->fns[c].root && fn_contains(cu, &cu->fns[c], a)) {
				next = c;
				break;
			}
			c = cu->fns[c].end > c ? cu->fns[c].end : c + 1;
		}
		if (next == UINT32_MAX)
			break;
		cur = next;
	}
	return 1;
}

static void cu_line(struct dw_cu *cu, uint64_t a, struct bsym_dwlookup *out)
{
	if (!cu->nlines)
		return;
	/* Last row at or before a, as dwarf_getsrc_die picks it. */
	size_t lo = 0, hi = cu->nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cu->line_addr[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	Dwarf_Line *l = dwarf_onesrcline(cu->lines, lo - 1);
	bool es = false;
	if (!l || dwarf_lineendsequence(l, &es) != 0 || es)
		return;
	int line = 0, col = 0;
	dwarf_lineno(l, &line);
	dwarf_linecol(l, &col);
	out->file = dwarf_linesrc(l, NULL, NULL);
	out->line = line > 0 ? (uint32_t)line : 0;
	out->column = col > 0 ? (uint32_t)col : 0;
}

int bsym_dwidx_lookup(struct bsym_dwidx *idx, uint64_t a, struct bsym_dwlookup *out)
{
	out->nr = 0;
	out->file = NULL;
	out->line = out->column = 0;
	ptrdiff_t i = LAST_LE(idx->cur, idx->ncur, a);
	struct dw_cu *line_cu = NULL;
	for (ptrdiff_t n = 0; i >= 0 && n < CU_SCAN_BACK; i--, n++) {
		if (!(idx->cur[i].lo <= a && a < idx->cur[i].hi))
			continue;
		struct dw_cu *cu = &idx->cus[idx->cur[i].cu];
		if (cu->state == 0 && index_cu(idx, cu))
			return -ENOMEM;
		if (!line_cu)
			line_cu = cu;
		if (cu_function(cu, a, out)) {
			line_cu = cu;
			break;
		}
	}
	if (line_cu)
		cu_line(line_cu, a, out);
	return 0;
}
