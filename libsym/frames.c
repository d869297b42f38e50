/* SPDX-License-Identifier: Apache-2.0 */
/* frames.c - results and their frames (DWARF and symbol table, Go's pclntab), reasons and
 * display names: what the sources share, so it calls none of them (README.md, "Files"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h> /* libiberty: rust_demangle */
#include "bsym_internal.h"

/* Each reason's message, and its frame-less result: the same for everyone, so an
 * immutable static. */
#define REASON(r, s) [r] = { { r, 0, NULL }, s }
static const struct {
	struct bsym_result res;
	const char *str;
} reasons[] = {
	REASON(BSYM_OK, "ok"),
	REASON(BSYM_R_UNMAPPED, "address not mapped"),
	REASON(BSYM_R_NO_DEBUGINFO, "no ELF file or debuginfo found"),
	REASON(BSYM_R_NO_SYMBOL, "no symbol covers the address"),
	REASON(BSYM_R_BUILD_ID_MISMATCH, "build-id mismatch"),
	REASON(BSYM_R_NO_BUILD_ID, "object has no build-id"),
	REASON(BSYM_R_JIT, "JIT code without perf map entry"),
	REASON(BSYM_R_KERNEL_NO_SYMBOLS, "no kernel symbols"),
	REASON(BSYM_R_INVALID, "invalid object or offset"),
	REASON(BSYM_R_JIT_AMBIGUOUS, "JIT entries of different names cover the address"),
};
#undef REASON
#define NR_REASONS (sizeof(reasons) / sizeof(reasons[0]))

const char *bsym_reason_str(enum bsym_reason r)
{
	if ((unsigned)r < NR_REASONS && reasons[r].str)
		return reasons[r].str;
	return "unknown reason";
}

const struct bsym_result *bsym_result_reason(enum bsym_reason r)
{
	if ((unsigned)r >= NR_REASONS || r == BSYM_OK)
		r = BSYM_R_INVALID;
	return &reasons[r].res;
}

struct bsym_result *bsym_result_new(struct bsym_ctx *ctx, unsigned nr_frames)
{
	struct bsym_result *r = bsym_arena_alloc(&ctx->arena, sizeof(*r));
	struct bsym_frame *f = bsym_arena_alloc(&ctx->arena, nr_frames * sizeof(*f));
	if (!r || !f)
		return NULL;
	memset(f, 0, nr_frames * sizeof(*f));
	r->reason = BSYM_OK;
	r->nr_frames = nr_frames;
	r->frames = f;
	return r;
}

/* ---- demangling ------------------------------------------------------------- */

struct dem_entry {
	struct dem_entry *next;
	const char *dem;
	char raw[];
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Rust legacy mangling is Itanium-shaped: _ZN...17h<16 hex>E.  Drop the
 * hash and decode the $..$ escapes, as rustc-demangle does. */
static char *rust_legacy_fixup(const char *raw, char *dem)
{
	size_t n = strlen(raw);
	if (n < 21 || raw[n - 1] != 'E' || memcmp(raw + n - 20, "17h", 3) != 0)
		return dem;
	for (size_t i = n - 17; i < n - 1; i++)
		if (!is_hex(raw[i]))
			return dem;
	size_t dn = strlen(dem);
	if (dn > 19 && !memcmp(dem + dn - 19, "::h", 3))
		dem[dn - 19] = '\0';
	static const struct {
		const char *esc, *rep;
	} tab[] = { { "$SP$", "@" },   { "$BP$", "*" },   { "$RF$", "&" },   { "$LT$", "<" },
		    { "$GT$", ">" },   { "$LP$", "(" },   { "$RP$", ")" },   { "$C$", "," },
		    { "$u7e$", "~" },  { "$u20$", " " },  { "$u27$", "'" },  { "$u5b$", "[" },
		    { "$u5d$", "]" },  { "$u7b$", "{" },  { "$u7d$", "}" },  { "$u3b$", ";" },
		    { "$u2b$", "+" },  { "$u22$", "\"" } };
	char *w = dem;
	for (const char *r = dem; *r;) {
		bool done = false;
		if (*r == '$') {
			for (size_t t = 0; t < sizeof(tab) / sizeof(tab[0]); t++) {
				size_t l = strlen(tab[t].esc);
				if (!strncmp(r, tab[t].esc, l)) {
					*w++ = tab[t].rep[0];
					r += l;
					done = true;
					break;
				}
			}
		} else if (r[0] == '.' && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
			done = true;
		}
		if (!done)
			*w++ = *r++;
	}
	*w = '\0';
	return dem;
}

/*
 * Rust's v0 mangling (_R...), through libiberty's demangler (binutils'
 * c++filt and gdb use it; rustc-demangle's output format).  NULL when raw
 * is not a valid v0 name: the raw name is printed then, never a guess.
 */
static char *rust_v0_demangle(const char *raw)
{
	return rust_demangle(raw, DMGL_PARAMS);
}

const char *bsym_display_name(struct bsym_ctx *ctx, const char *raw)
{
	if (!raw)
		return "??";
	if ((ctx->flags & BSYM_NO_DEMANGLE) || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return raw;
	bool v0 = raw[1] == 'R';
	size_t n = strlen(raw);
	uint64_t h = bsym_hash_bytes(raw, n, 0);
	struct dem_entry *head = bsym_map_get(&ctx->demangled, h);
	for (struct dem_entry *e = head; e; e = e->next)
		if (!strcmp(e->raw, raw))
			return e->dem;
	struct dem_entry *e = bsym_arena_alloc(&ctx->arena, sizeof(*e) + n + 1);
	if (!e)
		return raw;
	memcpy(e->raw, raw, n + 1);
	e->dem = e->raw;
	/* a PLT stub's synthetic name: demangle the function, keep "@plt" */
	size_t plt = n > 4 && !strcmp(raw + n - 4, "@plt") ? 4 : 0;
	char *d = NULL;
	if (plt) {
		char *base = strndup(raw, n - plt);
		char *bd = base ? (v0 ? rust_v0_demangle(base) : bsym_cxx_demangle(base)) : NULL;
		if (bd && (d = malloc(strlen(bd) + 5)))
			sprintf(d, "%s@plt", bd);
		free(bd);
		free(base);
	} else {
		d = v0 ? rust_v0_demangle(raw) : bsym_cxx_demangle(raw);
	}
	if (d) {
		if (!plt && !v0)
			rust_legacy_fixup(raw, d);
		char *c = bsym_arena_strdup(&ctx->arena, d);
		free(d);
		if (c)
			e->dem = c;
	}
	e->next = head;
	(void)bsym_map_put(&ctx->demangled, h, e); /* -ENOMEM: not cached, still correct */
	return e->dem;
}

/* ---- frames from DWARF + symbol table ------------------------------------------ */

static const char *dw_display(struct bsym_ctx *ctx, const struct bsym_dwframe *f)
{
	if (!f->raw)
		return NULL;
	if (*f->demangled)
		return *f->demangled;
	const char *d = bsym_display_name(ctx, f->raw);
	*f->demangled = d;
	return d;
}

int bsym_frames_from_dwarf(struct bsym_ctx *ctx, struct bsym_dwidx *idx, struct bsym_symtab **symtab,
			   Dwfl_Module *mod,
			   uint64_t dwaddr, uint64_t modaddr, enum bsym_frame_kind kind,
			   const struct bsym_result **out)
{
	struct bsym_dwlookup lk;
	lk.nr = 0;
	lk.file = NULL;
	lk.line = lk.column = 0;
	if (idx && bsym_dwidx_lookup(idx, dwaddr, &lk))
		return -ENOMEM;

	const char *sname = NULL;
	GElf_Off soff = 0;
	if (mod && (lk.nr == 0 || !lk.chain[0].raw)) {
		GElf_Sym sym;
		sname = symtab ? bsym_symtab_lookup(symtab, mod, modaddr, &soff)
			       : dwfl_module_addrinfo(mod, modaddr, &soff, &sym, NULL, NULL, NULL);
	}
	if (lk.nr == 0) {
		if (!sname) {
			*out = bsym_result_reason(BSYM_R_NO_SYMBOL);
			return 0;
		}
		struct bsym_result *r = bsym_result_new(ctx, 1);
		if (!r)
			return -ENOMEM;
		struct bsym_frame *f = (struct bsym_frame *)r->frames;
		f->raw_name = sname;
		f->name = bsym_display_name(ctx, sname);
		f->file = lk.file;
		f->line = lk.line;
		f->column = lk.column;
		f->offset = soff;
		f->kind = kind;
		*out = r;
		return 0;
	}
	unsigned nf = (ctx->flags & BSYM_NO_INLINE) ? 1 : lk.nr;
	struct bsym_result *r = bsym_result_new(ctx, nf);
	if (!r)
		return -ENOMEM;
	struct bsym_frame *fr = (struct bsym_frame *)r->frames;
	for (unsigned k = 0; k < nf; k++) {
		/* frames[k] is chain[nr-1-k]; the outermost is chain[0] */
		unsigned c = (nf == 1) ? 0 : lk.nr - 1 - k;
		const struct bsym_dwframe *d = &lk.chain[c];
		struct bsym_frame *f = &fr[k];
		const char *disp = dw_display(ctx, d);
		if (c == 0 && !d->raw && sname) {
			f->raw_name = sname;
			f->name = bsym_display_name(ctx, sname);
		} else {
			f->raw_name = d->raw ? d->raw : "??";
			f->name = disp ? disp : "??";
		}
		if (k == 0 && nf == 1 && lk.nr > 1) {
			/* inline expansion off: the outer function, at the line
			 * where the inlined chain was entered */
			f->file = lk.chain[1].call_file;
			f->line = lk.chain[1].call_line;
			f->column = lk.chain[1].call_column;
		} else if (k == 0) {
			f->file = lk.file;
			f->line = lk.line;
			f->column = lk.column;
		} else {
			const struct bsym_dwframe *callee = &lk.chain[c + 1];
			f->file = callee->call_file;
			f->line = callee->call_line;
			f->column = callee->call_column;
		}
		f->inlined = c != 0;
		f->kind = kind;
		/* Below the entry: a split-off part (gcc's foo.cold); count from
		 * the start of that part. */
		if (c == 0)
			f->offset = dwaddr >= d->entry ? dwaddr - d->entry : dwaddr - lk.root_lo;
	}
	*out = r;
	return 0;
}

/* ---- frames from Go's pclntab ---------------------------------------------- */

/* Like the DWARF path's: inlined callees first, each marked inlined, at
 * the line in it; the outermost at the line of the call it inlined (or of
 * the address); with BSYM_NO_INLINE the outermost alone. */
int bsym_frames_from_go(struct bsym_ctx *ctx, const struct gopcln *go, uint64_t vaddr,
			const struct bsym_result **out)
{
	struct gopcln_frame gf[BSYM_MAX_INLINE_DEPTH];
	unsigned n = 0;

	if (gopcln_lookup(go, vaddr, gf, BSYM_MAX_INLINE_DEPTH, &n) || !n || !gf[n - 1].name) {
		*out = bsym_result_reason(BSYM_R_NO_SYMBOL);
		return 0;
	}
	unsigned first = (ctx->flags & BSYM_NO_INLINE) ? n - 1 : 0;
	struct bsym_result *r = bsym_result_new(ctx, n - first);
	if (!r)
		return -ENOMEM;
	struct bsym_frame *fr = (struct bsym_frame *)r->frames;
	for (unsigned k = first; k < n; k++) {
		struct bsym_frame *f = &fr[k - first];
		const char *raw = gf[k].name ? gf[k].name : "??";
		f->raw_name = raw;
		f->name = bsym_display_name(ctx, raw);
		f->file = gf[k].file;
		f->line = gf[k].line;
		f->inlined = gf[k].inlined;
		f->kind = BSYM_FRAME_USER;
		if (k == n - 1)
			f->offset = vaddr - gf[k].entry;
	}
	*out = r;
	return 0;
}
