/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8pos.c - where in its function's source a code offset is: the source
 * position tables of bytecode and of optimized code, and the inlined
 * functions an optimized code holds (its deoptimization data).
 */
#include "v8rec_internal.h"

/* ---- optimized code: what runs where, inlined functions included ---- */

#define V8REC_MAX_LITERALS 1024
#define V8REC_MAX_INLINING 1024     /* inlining positions */
#define V8REC_MAX_SPT (1u << 20)    /* source position table bytes */
#define V8REC_MAX_FNS 128           /* distinct functions of one code */

struct inl_fn {
	uint64_t sfi;
	char *name, *script;
	uint64_t src;
	int64_t start;
};

/* A zigzag VLQ of a source position table (V8's source-position-table.cc). */
static bool vlq(const uint8_t *b, uint32_t len, uint32_t *at, int64_t *out)
{
	uint64_t r = 0;
	unsigned shift = 0;
	uint8_t c;

	do {
		if (*at >= len || shift > 63)
			return false;
		c = b[(*at)++];
		r |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	*out = (int64_t)(r >> 1) ^ -(int64_t)(r & 1);
	return true;
}

static bool smi_of(uint64_t w, int64_t *out)
{
	if (w & 1)
		return false;
	*out = (int64_t)w >> 32;
	return true;
}

/* The names of function sfi (cached per code), or NULL if it is no SFI. */
static struct inl_fn *inl_fn(const struct v8proc *p, struct inl_fn *fns, uint32_t *nr,
			     uint64_t sfi)
{
	uint64_t nos, sodi;
	struct inl_fn *f;

	for (uint32_t i = 0; i < *nr; i++)
		if (fns[i].sfi == sfi)
			return &fns[i];
	if (*nr == V8REC_MAX_FNS || v8rec__type_of(p->pid, &p->off, sfi) != p->off.type_sfi ||
	    !v8rec__field(p->pid, sfi, p->off.sfi_nos, &nos) || !v8rec__field(p->pid, sfi, p->off.sfi_sodi, &sodi))
		return NULL;
	f = &fns[(*nr)++];
	f->sfi = sfi;
	v8rec__sfi_names(p, nos, sodi, &f->name, &f->script, &f->src, &f->start);
	return f;
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

static void row_free(struct bprof_v8_pos *r)
{
	for (uint32_t k = 0; r->frames && k < r->nr_frames; k++) {
		free(r->frames[k].name);
		free(r->frames[k].script);
	}
	free(r->frames);
	r->frames = NULL;
	r->nr_frames = 0;
}

/* A copy of rows [0, nr), or NULL (nr 0, or out of memory: *err). */
struct bprof_v8_pos *v8rec__rows_dup(const struct bprof_v8_pos *rows, uint32_t nr, int *err)
{
	struct bprof_v8_pos *d;

	if (!nr)
		return NULL;
	d = calloc(nr, sizeof(*d));
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	for (uint32_t j = 0; j < nr; j++) {
		d[j].code_offset = rows[j].code_offset;
		d[j].frames = calloc(rows[j].nr_frames, sizeof(*d[j].frames));
		if (!d[j].frames)
			goto nomem;
		d[j].nr_frames = rows[j].nr_frames;
		for (uint32_t k = 0; k < rows[j].nr_frames; k++) {
			d[j].frames[k].line = rows[j].frames[k].line;
			d[j].frames[k].name = strdup(rows[j].frames[k].name);
			d[j].frames[k].script = strdup(rows[j].frames[k].script);
			if (!d[j].frames[k].name || !d[j].frames[k].script)
				goto nomem;
		}
	}
	return d;
nomem:
	bprof_v8_pos_free(d, nr);
	*err = -ENOMEM;
	return NULL;
}

/* Whether two rows name the same frames. */
static bool same_row(const struct bprof_v8_pos *a, const struct bprof_v8_pos *b)
{
	if (a->nr_frames != b->nr_frames)
		return false;
	for (uint32_t k = 0; k < a->nr_frames; k++)
		if (a->frames[k].line != b->frames[k].line || strcmp(a->frames[k].name, b->frames[k].name) ||
		    strcmp(a->frames[k].script, b->frames[k].script))
			return false;
	return true;
}

/*
 * Row *row appended to rows[0, *nr), which it then owns: rows strictly
 * ascending by offset (a later entry for an offset wins), one row per run
 * of the same frames, at most BPROF_V8_POS_MAX.  0 or -ENOMEM (row freed).
 */
static int rows_add(struct bprof_v8_pos **rows, uint32_t *nr, uint32_t *cap,
		    struct bprof_v8_pos *row)
{
	struct bprof_v8_pos *r = *rows;

	if (*nr && r[*nr - 1].code_offset >= row->code_offset) {
		row_free(&r[*nr - 1]);
		r[*nr - 1] = *row;
		if (*nr > 1 && same_row(&r[*nr - 2], &r[*nr - 1]))
			row_free(&r[--*nr]);
		return 0;
	}
	if ((*nr && same_row(&r[*nr - 1], row)) || *nr == BPROF_V8_POS_MAX) {
		row_free(row);
		return 0;
	}
	if (*nr == *cap) {
		uint32_t n = *cap ? *cap * 2 : 16;
		struct bprof_v8_pos *a = realloc(r, n * sizeof(*a));

		if (!a) {
			row_free(row);
			return -ENOMEM;
		}
		*rows = r = a;
		*cap = n;
	}
	r[(*nr)++] = *row;
	return 0;
}

/*
 * The next entry of a source position table (two VLQs: the code offset's
 * delta, whose sign is is_statement, and the position's) added to
 * *code_offset and *pos: false at the table's end or a truncated entry.
 */
static bool spt_next(const uint8_t *sb, uint32_t len, uint32_t *at, int64_t *code_offset,
		     int64_t *pos)
{
	int64_t d;

	if (!vlq(sb, len, at, &d))
		return false;
	*code_offset += d >= 0 ? d : -d - 1; /* the sign: is_statement */
	if (!vlq(sb, len, at, &d))
		return false;
	*pos += d;
	return true;
}

/*
 * The lines of an interpreted function, from its bytecode array bca's
 * source position table: rows keyed by the bytecode offset as V8 keeps it
 * in an interpreted frame (the offset from the array's tagged address,
 * what the walk records), each one frame: the function at the line of
 * the position in force there.  No rows (its first line, as before) when
 * V8 has not built the table (it may do so lazily) or it does not read
 * as this layout's: every offset must lie in the bytecodes.  0 or -ENOMEM.
 */
int v8rec__bytecode_rows(struct v8rec *v, const struct v8proc *p, uint64_t bca, uint64_t src,
			 const char *name, const char *script, struct bprof_v8_pos **out,
			 uint32_t *nr_out)
{
	const struct v8off *o = &p->off;
	uint64_t spt, w;
	int64_t blen, slen, code_offset = 0, pos = 0;
	uint32_t at = 0, nr = 0, cap = 0;
	struct bprof_v8_pos *rows = NULL;
	uint8_t *sb;
	int err = 0;

	*out = NULL;
	*nr_out = 0;
	if (!p->bca_ok || !src || v8rec__type_of(p->pid, o, bca) != o->type_bca ||
	    !v8rec__field(p->pid, bca, 8, &w) || !smi_of(w, &blen) || blen <= 0 ||
	    !v8rec__field(p->pid, bca, o->bca_spt, &spt) ||
	    (v8rec__type_of(p->pid, o, spt) != o->type_byte_array &&
	     v8rec__type_of(p->pid, o, spt) != o->type_trusted_byte_array) ||
	    !v8rec__field(p->pid, spt, 8, &w) || !smi_of(w, &slen) || slen <= 0 || slen > V8REC_MAX_SPT)
		return 0;
	sb = malloc((size_t)slen);
	if (!sb)
		return -ENOMEM;
	if (!v8rec__peek(p->pid, spt - 1 + 16, sb, (size_t)slen))
		goto out;
	while (at < (uint32_t)slen) {
		struct bprof_v8_pos row = { 0 };

		if (!spt_next(sb, (uint32_t)slen, &at, &code_offset, &pos))
			break;
		/* a SourcePosition: bit 0 external, the script offset + 1 in
		 * bits 30..1, the inlining id + 1 above (none in bytecode);
		 * the last entry may stand at the bytecodes' end */
		if (code_offset < 0 || code_offset > blen || pos < 0 || (pos & 1) || (pos >> 31) ||
		    !(pos >> 1)) {
			/* not a table of this layout: nothing from it */
			bprof_v8_pos_free(rows, nr);
			rows = NULL;
			nr = 0;
			break;
		}
		row.code_offset = (uint32_t)(code_offset + o->bca_data - 1);
		row.nr_frames = 1;
		row.frames = calloc(1, sizeof(*row.frames));
		if (row.frames) {
			row.frames[0].name = strdup(name);
			row.frames[0].script = strdup(script);
			row.frames[0].line = v8rec__line_of(v, p->pid, o, src, (pos >> 1) - 1);
		}
		if (!row.frames || !row.frames[0].name || !row.frames[0].script) {
			row_free(&row);
			err = -ENOMEM;
			break;
		}
		if ((err = rows_add(&rows, &nr, &cap, &row)))
			break;
	}
out:
	free(sb);
	if (err) {
		bprof_v8_pos_free(rows, nr);
		return err;
	}
	*out = rows;
	*nr_out = nr;
	return 0;
}

/*
 * Whether code (tagged) is a Code object of this layout, TurboFan's or
 * Maglev's, whose deoptimization data names SFI sfi: then the number of
 * that data's words read into words (> DEOPT_INLINING), else -1.
 */
int64_t v8rec__optimized_code(const struct v8proc *p, uint64_t code, uint64_t sfi,
			      uint64_t words[V8REC_MAX_DEOPT])
{
	const struct v8off *o = &p->off;
	uint32_t pid = p->pid, flags, kind;
	uint64_t stream, entry, deopt;
	int64_t dlen;

	if (!p->code_ok || v8rec__type_of(pid, o, code) != o->type_code || !v8rec__code_entry(pid, o, code, &entry) ||
	    (o->code_istream &&
	     (!v8rec__field(pid, code, o->code_istream, &stream) || !v8rec__heap_ptr(stream) ||
	      stream - 1 + (uint64_t)o->istream_start != entry)) ||
	    !v8rec__peek(pid, code - 1 + (uint64_t)o->code_flags, &flags, sizeof(flags)))
		return -1;
	kind = (flags >> o->codekind_shift) & (uint32_t)o->codekind_mask;
	if (kind != (uint32_t)o->kind_turbofan && kind != (uint32_t)o->kind_maglev)
		return -1;
	/* the deoptimization data: a FixedArray whose SFI must be the frame's */
	if (!v8rec__field(pid, code, o->code_deopt, &deopt) || !v8rec__heap_ptr(deopt) ||
	    !v8rec__field(pid, deopt, 8, &words[0]) || !smi_of(words[0], &dlen) || dlen <= DEOPT_INLINING)
		return -1;
	if (dlen > V8REC_MAX_DEOPT)
		dlen = V8REC_MAX_DEOPT;
	if (!v8rec__peek(pid, deopt - 1 + 16, words, (size_t)dlen * 8) || (words[o->deopt_sfi] & ~2ULL) != sfi)
		return -1;
	return dlen;
}

/*
 * The position rows of optimized code object code, which runs SFI sfi:
 * from its source position table, each pc offset's position, followed
 * through the inlining positions of its deoptimization data to the code's
 * own function.  0 (no rows: *nr_out 0, when the code is not what this
 * layout expects or not sfi's) or -ENOMEM.
 */
int v8rec__read_positions(struct v8rec *v, const struct v8proc *p, uint64_t sfi, uint64_t code,
			  struct bprof_v8_pos **out, uint32_t *nr_out)
{
	const struct v8off *o = &p->off;
	uint32_t pid = p->pid, at = 0, nfns = 0, nr = 0, cap = 0;
	uint64_t words[V8REC_MAX_DEOPT], lits, ipos, spt;
	uint64_t *lit = NULL;
	int64_t nlit = 0, nipos = 0, ninl, slen, code_offset = 0, pos = 0;
	uint8_t *ib = NULL, *sb = NULL;
	struct inl_fn fns[V8REC_MAX_FNS];
	struct bprof_v8_pos *rows = NULL;
	int err = 0;

	*out = NULL;
	*nr_out = 0;
	if (v8rec__optimized_code(p, code, sfi, words) < 0)
		return 0;
	/* the inlined functions' SFIs are the literal array's first
	 * InlinedFunctionCount entries (a Smi): an inlining id past them is
	 * not followed (the indices of V8 < 11 are derived, not exported) */
	if (!smi_of(words[o->deopt_inlined_count], &ninl) || ninl < 0)
		return 0;
	lits = words[DEOPT_LITERALS];
	ipos = words[DEOPT_INLINING];
	if (v8rec__heap_ptr(lits) && v8rec__field(pid, lits, 8, &words[0]) && smi_of(words[0], &nlit) && nlit > 0) {
		if (nlit > V8REC_MAX_LITERALS)
			nlit = V8REC_MAX_LITERALS;
		lit = malloc((size_t)nlit * 8);
		if (!lit)
			return -ENOMEM;
		if (!v8rec__peek(pid, lits - 1 + 16, lit, (size_t)nlit * 8))
			nlit = 0;
	}
	if (v8rec__heap_ptr(ipos) && v8rec__field(pid, ipos, 8, &words[0]) && smi_of(words[0], &nipos) && nipos > 0) {
		nipos /= 16; /* InliningPosition: a SourcePosition, an int, padding */
		if (nipos > V8REC_MAX_INLINING)
			nipos = V8REC_MAX_INLINING;
		ib = malloc((size_t)nipos * 16 + 1);
		if (!ib) {
			err = -ENOMEM;
			goto out;
		}
		if (!v8rec__peek(pid, ipos - 1 + 16, ib, (size_t)nipos * 16))
			nipos = 0;
	}
	if (!v8rec__field(pid, code, o->code_spt, &spt) || !v8rec__heap_ptr(spt) || !v8rec__field(pid, spt, 8, &words[0]) ||
	    !smi_of(words[0], &slen) || slen <= 0 || slen > V8REC_MAX_SPT)
		goto out;
	sb = malloc((size_t)slen);
	if (!sb) {
		err = -ENOMEM;
		goto out;
	}
	if (!v8rec__peek(pid, spt - 1 + 16, sb, (size_t)slen))
		goto out;
	while (at < (uint32_t)slen) {
		struct { struct inl_fn *f; int64_t off; } chain[BPROF_V8_INLINE_MAX];
		struct bprof_v8_pos row = { 0 };
		int64_t cur;
		uint32_t depth = 0;
		bool ok = true;

		if (!spt_next(sb, (uint32_t)slen, &at, &code_offset, &pos))
			break;
		if (code_offset < 0 || code_offset > (int64_t)V8_POS_MASK)
			break;
		/* innermost first: the position's function, then where it
		 * was inlined, to the code's own */
		for (cur = pos; ok;) {
			int64_t inl = (int64_t)((uint64_t)cur >> 31 & 0xffff) - 1;
			int64_t off = (int64_t)((uint64_t)cur >> 1 & 0x3fffffff) - 1;
			uint64_t fsfi = sfi;

			if ((cur & 1) || depth == BPROF_V8_INLINE_MAX) {
				ok = false; /* an external (wasm) position, or too deep */
				break;
			}
			if (inl >= 0) {
				int32_t fid;

				if (inl >= nipos) {
					ok = false;
					break;
				}
				memcpy(&fid, ib + inl * 16 + 8, sizeof(fid));
				if (fid < 0 || fid >= nlit || fid >= ninl) {
					ok = false;
					break;
				}
				fsfi = lit[fid] & ~2ULL; /* a weak reference's bit */
			}
			chain[depth].f = inl_fn(p, fns, &nfns, fsfi);
			chain[depth].off = off;
			if (!chain[depth].f) {
				ok = false;
				break;
			}
			depth++;
			if (inl < 0)
				break;
			memcpy(&cur, ib + inl * 16, sizeof(cur));
		}
		if (!ok || !depth)
			continue;
		row.code_offset = (uint32_t)code_offset;
		row.nr_frames = depth;
		row.frames = calloc(depth, sizeof(*row.frames));
		if (!row.frames) {
			err = -ENOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < depth; k++) {
			/* outermost first */
			const struct inl_fn *f = chain[depth - 1 - k].f;
			int64_t off = chain[depth - 1 - k].off;

			row.frames[k].name = dup0(f->name);
			row.frames[k].script = dup0(f->script);
			row.frames[k].line = f->src ? v8rec__line_of(v, pid, o, f->src, off >= 0 ? off : f->start) : 0;
			if (!row.frames[k].name || !row.frames[k].script) {
				row_free(&row);
				err = -ENOMEM;
				goto out;
			}
		}
		if ((err = rows_add(&rows, &nr, &cap, &row)))
			goto out;
	}
out:
	for (uint32_t i = 0; i < nfns; i++) {
		free(fns[i].name);
		free(fns[i].script);
	}
	free(lit);
	free(ib);
	free(sb);
	if (err) {
		bprof_v8_pos_free(rows, nr);
		return err;
	}
	*out = rows;
	*nr_out = nr;
	return 0;
}
