/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gopclntab.c - Go's function table (gopclntab.h).  Layout, from Go's
 * src/runtime/symtab.go (pcHeader, _func, inlinedCall) and
 * src/debug/gosym/pclntab.go:
 *
 *   header  magic u32, 0, 0, minLC u8 (pc quantum), ptrSize u8, then words:
 *           1.16: nfunc, nfiles, funcname, cu, filetab, pctab, pcln offsets
 *           1.18+: nfunc, nfiles, textStart, funcname, cu, filetab, pctab, pcln
 *   functab at pcln: nfunc (entry, funcoff) pairs and the end pc, each a
 *           pointer (1.16) or u32 (1.18+, entries relative to textStart)
 *   _func   at pcln + funcoff: entry (pointer; 1.18+ u32), then u32 nameoff,
 *           args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset,
 *           (1.20+ startLine), then u8 funcID, flag, pad, nfuncdata; then
 *           npcdata u32 pctab offsets, then nfuncdata funcdata (1.16:
 *           pointers, aligned; 1.18+: u32 offsets from go:func.*)
 *   pc-value tables in pctab: (value delta zig-zag varint, pc delta varint
 *           * quantum) pairs from (entry, -1), ended by a zero value delta
 *   inline tree (FUNCDATA_InlTree = 3, indexed by PCDATA_InlTreeIndex = 2):
 *           1.16-1.19 20-byte entries (parent i16, funcID, pad, file, line,
 *           nameoff, parentPc), 1.20+ 16 bytes (funcID, pad[3], nameoff,
 *           parentPc, startLine); parentPc leads to the caller's position.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

#define PCDATA_INLTREE 2
#define FUNCDATA_INLTREE 3
#define MAX_INLINE_DEPTH 64
#define MAX_INLTREE_INDEX (1u << 24)
#define MAX_FUNCS (1u << 26)

struct gopcln {
	const uint8_t *d;
	size_t len;
	uint64_t vaddr;
	unsigned version;
	unsigned quantum, ptrsize;
	uint64_t nfunc, text_start;
	/* offsets into d */
	uint64_t funcname, cu, filetab, pctab, pcln;
	struct gopcln_opts o;
	void (*free_arg)(void *); /* gopcln_elf_open's reader */
};

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* n bytes at off inside the table: 0 and *v, or -1 */
static int get(const struct gopcln *t, uint64_t off, unsigned n, uint64_t *v)
{
	if (off > t->len || t->len - off < n)
		return -1;
	*v = le(t->d + off, n);
	return 0;
}

/* The NUL-terminated string at base + off, or NULL if it runs past the
 * table. */
static const char *str_at(const struct gopcln *t, uint64_t base, uint64_t off)
{
	if (base > t->len || off >= t->len - base)
		return NULL;
	const uint8_t *s = t->d + base + off;
	return memchr(s, 0, t->len - base - off) ? (const char *)s : NULL;
}

static void seterr(struct gopcln_error *err, const char *msg)
{
	if (err)
		snprintf(err->message, sizeof(err->message), "%s", msg);
}

int gopcln_open(struct gopcln **out, const uint8_t *data, size_t len, uint64_t vaddr,
		const struct gopcln_opts *opts, struct gopcln_error *err)
{
	struct gopcln h = { .d = data, .len = len, .vaddr = vaddr };
	uint64_t w[8], magic;
	unsigned nw;

	*out = NULL;
	if (err)
		err->message[0] = 0;
	if (!data || len < 16) {
		seterr(err, "too short for a pclntab header");
		return -EINVAL;
	}
	magic = le(data, 4);
	if (magic == MAGIC_116)
		h.version = 116;
	else if (magic == MAGIC_118)
		h.version = 118;
	else if (magic == MAGIC_120)
		h.version = 120;
	else {
		seterr(err, "not a Go 1.16+ pclntab (magic)");
		return -EINVAL;
	}
	h.quantum = data[6];
	h.ptrsize = data[7];
	if (data[4] || data[5] || (h.quantum != 1 && h.quantum != 2 && h.quantum != 4) || h.ptrsize != 8) {
		seterr(err, "pclntab header: bad padding, pc quantum or pointer size (8-byte pointers only)");
		return -EINVAL;
	}
	nw = h.version == 116 ? 7 : 8;
	for (unsigned i = 0; i < nw; i++)
		if (get(&h, 8 + (uint64_t)i * 8, 8, &w[i])) {
			seterr(err, "pclntab header runs past the table");
			return -EINVAL;
		}
	h.nfunc = w[0];
	if (h.version == 116) {
		h.funcname = w[2], h.cu = w[3], h.filetab = w[4], h.pctab = w[5], h.pcln = w[6];
	} else {
		h.text_start = w[2];
		h.funcname = w[3], h.cu = w[4], h.filetab = w[5], h.pctab = w[6], h.pcln = w[7];
	}
	if (h.nfunc == 0 || h.nfunc > MAX_FUNCS || h.funcname >= len || h.cu >= len || h.filetab >= len ||
	    h.pctab >= len || h.pcln >= len) {
		seterr(err, "pclntab header: function count or table offsets out of range");
		return -EINVAL;
	}
	/* the function table: nfunc pairs and the end pc */
	uint64_t fsz = h.version == 116 ? 8 : 4;
	if ((2 * h.nfunc + 1) * fsz > len - h.pcln) {
		seterr(err, "pclntab function table runs past the table");
		return -EINVAL;
	}
	if (opts) {
		h.o = *opts;
		if (h.o.text_start)
			h.text_start = h.o.text_start;
	}
	struct gopcln *t = malloc(sizeof(*t));
	if (!t) {
		seterr(err, "out of memory");
		return -ENOMEM;
	}
	*t = h;
	*out = t;
	return 0;
}

void gopcln_close(struct gopcln *t)
{
	if (!t)
		return;
	if (t->free_arg)
		t->free_arg(t->o.mem.arg);
	free(t);
}

unsigned gopcln_version(const struct gopcln *t) { return t->version; }
size_t gopcln_nr_funcs(const struct gopcln *t) { return (size_t)t->nfunc; }

/* functab field k (2i: entry of i, 2i+1: its _func offset, 2n: the end) */
static int ftab(const struct gopcln *t, uint64_t k, uint64_t *v)
{
	unsigned sz = t->version == 116 ? 8 : 4;

	if (get(t, t->pcln + k * sz, sz, v))
		return -1;
	if (!(k & 1) && t->version != 116)
		*v += t->text_start;
	return 0;
}

/* The fixed part of a _func, checked to lie in the table. */
struct fn {
	uint64_t off;          /* of the _func in d */
	uint64_t entry;
	uint32_t nameoff, pcsp, pcfile, pcln, npcdata, cu;
	uint8_t func_id, flag, nfuncdata;
	uint64_t pcdata;       /* offset in d of pcdata[0] */
};

static int read_fn(const struct gopcln *t, size_t i, struct fn *f)
{
	uint64_t foff, v;
	unsigned sz0 = t->version == 116 ? 8 : 4;
	unsigned tail = t->version == 120 ? 36 : 32; /* funcID's offset after sz0 */

	if (i >= t->nfunc || ftab(t, 2 * (uint64_t)i + 1, &foff))
		return -EINVAL;
	if (foff > t->len - t->pcln)
		return -EINVAL;
	f->off = t->pcln + foff;
	if (get(t, f->off, sz0, &v))
		return -EINVAL;
	f->entry = t->version == 116 ? v : v + t->text_start;
	if (f->off + sz0 + tail + 4 > t->len || f->off + sz0 + tail + 4 < f->off)
		return -EINVAL;
	const uint8_t *p = t->d + f->off + sz0;
	f->nameoff = (uint32_t)le(p + 0, 4);
	f->pcsp = (uint32_t)le(p + 12, 4);
	f->pcfile = (uint32_t)le(p + 16, 4);
	f->pcln = (uint32_t)le(p + 20, 4);
	f->npcdata = (uint32_t)le(p + 24, 4);
	f->cu = (uint32_t)le(p + 28, 4);
	f->func_id = p[tail];
	f->flag = p[tail + 1]; /* a pad byte in 1.16: 0 */
	f->nfuncdata = p[tail + 3];
	f->pcdata = f->off + sz0 + tail + 4;
	if (f->npcdata > 1024 || (uint64_t)f->npcdata * 4 > t->len - f->pcdata)
		return -EINVAL;
	return 0;
}

int gopcln_func(const struct gopcln *t, size_t i, struct gopcln_func *out)
{
	struct fn f;
	uint64_t end;

	memset(out, 0, sizeof(*out));
	if (i >= t->nfunc)
		return -ERANGE;
	if (read_fn(t, i, &f) || ftab(t, 2 * (uint64_t)i + 2, &end))
		return -EINVAL;
	out->entry = f.entry;
	out->end = end;
	out->name = str_at(t, t->funcname, f.nameoff);
	out->func_id = f.func_id;
	out->flag = f.flag;
	return end > f.entry ? 0 : -EINVAL;
}

bool gopcln_func_is_root(const struct gopcln_func *f)
{
	if (f->flag & GOPCLN_FLAG_TOPFRAME)
		return true;
	return f->name && (!strcmp(f->name, "runtime.goexit") || !strcmp(f->name, "runtime.mstart") ||
			   !strcmp(f->name, "runtime.rt0_go"));
}

/* One varint of at most 5 bytes from d[*pos], not past end; -1 if bad. */
static int uvarint(const struct gopcln *t, uint64_t *pos, uint64_t end, uint32_t *v)
{
	uint32_t r = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*pos >= end)
			return -1;
		uint8_t b = t->d[(*pos)++];
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* The value of the pc-value table at pctab + off for targetpc in the
 * function at entry; -1 when none (no table, past its end, malformed).
 * Every step consumes at least two bytes: bounded by the table. */
static int32_t pcvalue(const struct gopcln *t, uint32_t off, uint64_t entry, uint64_t targetpc)
{
	uint64_t pos = t->pctab + off, pc = entry;
	int32_t val = -1;

	if (!off || t->pctab + off >= t->len)
		return -1;
	for (bool first = true;; first = false) {
		uint32_t uv, pcd;
		if (uvarint(t, &pos, t->len, &uv))
			return -1;
		if (uv == 0 && !first)
			return -1;
		int32_t vd = (uv & 1) ? (int32_t) ~(uv >> 1) : (int32_t)(uv >> 1);
		if (uvarint(t, &pos, t->len, &pcd))
			return -1;
		uint64_t npc = pc + (uint64_t)pcd * t->quantum;
		if (npc < pc)
			return -1;
		pc = npc;
		val = (int32_t)((uint32_t)val + (uint32_t)vd);
		if (targetpc < pc)
			return val;
	}
}

static int find_fn(const struct gopcln *t, uint64_t pc, struct fn *f, uint64_t *end);

static const char *file_of(const struct gopcln *t, const struct fn *f, uint64_t pc)
{
	int32_t fno = pcvalue(t, f->pcfile, f->entry, pc);
	uint64_t fnoff;

	if (fno < 0 || get(t, t->cu + ((uint64_t)f->cu + (uint64_t)fno) * 4, 4, &fnoff) ||
	    fnoff == 0xffffffffu)
		return NULL;
	return str_at(t, t->filetab, fnoff);
}

/* Where function f's inline tree is, 0 if it has none (or it is not
 * reachable: no memory reader, no go:func.*). */
static uint64_t inltree(const struct gopcln *t, const struct fn *f)
{
	uint64_t v, p;

	if (!t->o.mem.read || f->nfuncdata <= FUNCDATA_INLTREE || f->npcdata <= PCDATA_INLTREE)
		return 0;
	p = f->pcdata + (uint64_t)f->npcdata * 4;
	if (t->version == 116) {
		uint8_t b[8];
		/* pointers, aligned in the loaded image */
		if ((t->vaddr + p) & 4)
			p += 4;
		p += FUNCDATA_INLTREE * 8;
		if (get(t, p, 8, &v))
			return 0;
		/* in the table's bytes, but relocations (PIE) live with memory */
		if (t->o.mem.read(t->o.mem.arg, t->vaddr + p, b, 8) == 0)
			v = le(b, 8);
		return v;
	}
	if (!t->o.gofunc || get(t, p + FUNCDATA_INLTREE * 4, 4, &v) || v == 0xffffffffu)
		return 0;
	return t->o.gofunc + v;
}

int gopcln_lookup(const struct gopcln *t, uint64_t pc, struct gopcln_frame *frames, unsigned max,
		  unsigned *nr)
{
	uint64_t end;
	struct fn f;

	*nr = 0;
	if (!max || find_fn(t, pc, &f, &end))
		return 0;

	uint64_t tree = inltree(t, &f), cur = pc;
	unsigned n = 0;
	unsigned esz = t->version == 120 ? 16 : 20;
	for (unsigned depth = 0; tree && depth < MAX_INLINE_DEPTH && n + 1 < max; depth++) {
		int32_t ix = pcvalue(t, f.pcdata ? (uint32_t)le(t->d + f.pcdata + PCDATA_INLTREE * 4, 4) : 0,
				     f.entry, cur);
		uint8_t e[20];
		if (ix < 0 || (uint32_t)ix >= MAX_INLTREE_INDEX ||
		    t->o.mem.read(t->o.mem.arg, tree + (uint64_t)ix * esz, e, esz))
			break;
		uint32_t nameoff = (uint32_t)le(e + (esz == 16 ? 4 : 12), 4);
		uint32_t ppc = (uint32_t)le(e + (esz == 16 ? 8 : 16), 4);
		frames[n] = (struct gopcln_frame){
			.name = str_at(t, t->funcname, nameoff),
			.file = file_of(t, &f, cur),
			.line = (uint32_t)(pcvalue(t, f.pcln, f.entry, cur) > 0 ? pcvalue(t, f.pcln, f.entry, cur) : 0),
			.entry = f.entry,
			.inlined = true,
		};
		n++;
		/* the call site: an instruction of the caller's at its position */
		if (f.entry + ppc < f.entry || f.entry + ppc >= end || f.entry + ppc == cur)
			break;
		cur = f.entry + ppc;
	}
	int32_t line = pcvalue(t, f.pcln, f.entry, cur);
	frames[n++] = (struct gopcln_frame){
		.name = str_at(t, t->funcname, f.nameoff),
		.file = file_of(t, &f, cur),
		.line = line > 0 ? (uint32_t)line : 0,
		.entry = f.entry,
	};
	*nr = n;
	return 0;
}

/* The function holding pc: 0 and *f, *end, or -1. */
static int find_fn(const struct gopcln *t, uint64_t pc, struct fn *f, uint64_t *end)
{
	uint64_t lo = 0, hi = t->nfunc, e0, en;

	if (ftab(t, 0, &e0) || ftab(t, 2 * t->nfunc, &en) || pc < e0 || pc >= en)
		return -1;
	/* the last function whose entry is <= pc (a hostile, unsorted table
	 * only gives a wrong answer, checked below) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, e;
		if (ftab(t, 2 * mid, &e))
			return -1;
		if (e <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (read_fn(t, lo, f) || ftab(t, 2 * lo + 2, end) || pc < f->entry || pc >= *end)
		return -1;
	return 0;
}

int gopcln_sp_delta(const struct gopcln *t, uint64_t pc, int32_t *delta)
{
	struct fn f;
	uint64_t end;

	if (find_fn(t, pc, &f, &end))
		return -ENOENT;
	*delta = pcvalue(t, f.pcsp, f.entry, pc);
	/* the entry's value is 0: a table that says otherwise is not Go's */
	return *delta < 0 ? -EINVAL : 0;
}

int gopcln_pcsp_ranges(const struct gopcln *t, size_t i,
		       int (*fn)(void *arg, uint64_t start, uint64_t end, int32_t delta), void *arg)
{
	struct fn f;
	uint64_t end, pos, pc;
	int32_t val = -1;

	if (i >= t->nfunc)
		return -ERANGE;
	if (read_fn(t, i, &f) || ftab(t, 2 * (uint64_t)i + 2, &end) || end <= f.entry || !f.pcsp ||
	    t->pctab + f.pcsp >= t->len)
		return -EINVAL;
	pos = t->pctab + f.pcsp;
	pc = f.entry;
	/* as pcvalue: each step consumes bytes, so the table bounds the loop */
	for (bool first = true; pc < end; first = false) {
		uint32_t uv, pcd;
		if (uvarint(t, &pos, t->len, &uv))
			return -EINVAL;
		if (uv == 0 && !first)
			return 0; /* the end (the padding to the next function is not covered) */
		if (uvarint(t, &pos, t->len, &pcd) || !pcd)
			return -EINVAL;
		int32_t vd = (uv & 1) ? (int32_t) ~(uv >> 1) : (int32_t)(uv >> 1);
		val = (int32_t)((uint32_t)val + (uint32_t)vd);
		uint64_t npc = pc + (uint64_t)pcd * t->quantum;
		if (npc < pc || npc > end)
			return -EINVAL;
		int r = fn(arg, pc, npc, val);
		if (r)
			return r;
		pc = npc;
	}
	return 0;
}

int gopcln_read(const struct gopcln *t, uint64_t vaddr, void *dst, size_t len)
{
	return t->o.mem.read ? t->o.mem.read(t->o.mem.arg, vaddr, dst, len) : -1;
}

/* ---- ELF ------------------------------------------------------------------ */

struct seg {
	uint64_t vaddr, filesz;
	const uint8_t *p;
};
struct rel {
	uint64_t off, addend;
};
/* The loaded image as the file has it, with R_*_RELATIVE relocations
 * applied (PIE: pointers are zero in the file, their value in the addend). */
struct image {
	struct seg *segs;
	size_t nr_segs;
	struct rel *rels;
	size_t nr_rels;
};

static void image_free(void *arg)
{
	struct image *im = arg;

	if (!im)
		return;
	free(im->segs);
	free(im->rels);
	free(im);
}

static int image_read(void *arg, uint64_t vaddr, void *dst, size_t len)
{
	const struct image *im = arg;

	for (size_t i = 0; i < im->nr_segs; i++) {
		const struct seg *s = &im->segs[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr > s->filesz || s->filesz - (vaddr - s->vaddr) < len)
			continue;
		memcpy(dst, s->p + (vaddr - s->vaddr), len);
		/* relocated words inside [vaddr, vaddr + len) */
		size_t lo = 0, hi = im->nr_rels;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (im->rels[mid].off < vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < im->nr_rels && im->rels[lo].off < vaddr + len; lo++) {
			uint64_t o = im->rels[lo].off - vaddr;
			if (len - o >= 8)
				for (unsigned k = 0; k < 8; k++)
					((uint8_t *)dst)[o + k] = (uint8_t)(im->rels[lo].addend >> (8 * k));
		}
		return 0;
	}
	return -1;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int image_build(struct image **out, Elf *elf)
{
	size_t size = 0, phnum;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &size);
	struct image *im = calloc(1, sizeof(*im));
	GElf_Ehdr eh;
	size_t cap = 0;

	*out = NULL;
	if (!im)
		return -ENOMEM;
	if (!raw || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &phnum) != 0)
		goto done;
	im->segs = calloc(phnum ? phnum : 1, sizeof(*im->segs));
	if (!im->segs)
		goto oom;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_offset > size ||
		    ph.p_filesz > size - ph.p_offset)
			continue;
		im->segs[im->nr_segs++] = (struct seg){ ph.p_vaddr, ph.p_filesz, raw + ph.p_offset };
	}
	/* RELATIVE relocations (x86-64 8, aarch64 1027) in SHT_RELA sections */
	unsigned relative = eh.e_machine == EM_X86_64 ? 8 : eh.e_machine == EM_AARCH64 ? 1027 : 0;
	Elf_Scn *scn = NULL;
	while (relative && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t k = 0; k < n; k++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)k, &r) || GELF_R_TYPE(r.r_info) != relative)
				continue;
			if (im->nr_rels == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				void *p = realloc(im->rels, nc * sizeof(*im->rels));
				if (!p)
					goto oom;
				im->rels = p;
				cap = nc;
			}
			im->rels[im->nr_rels++] = (struct rel){ r.r_offset, (uint64_t)r.r_addend };
		}
	}
	if (im->nr_rels)
		qsort(im->rels, im->nr_rels, sizeof(*im->rels), cmp_rel);
done:
	*out = im;
	return 0;
oom:
	image_free(im);
	return -ENOMEM;
}

/* A symbol's value (and size) from .symtab; false if absent. */
static bool sym_value(Elf *elf, const char *const *names, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t k = 0; k < n; k++) {
			GElf_Sym s;
			const char *nm;
			if (!gelf_getsym(d, (int)k, &s) || !(nm = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			for (size_t j = 0; names[j]; j++)
				if (!strcmp(nm, names[j])) {
					*value = s.st_value;
					if (size)
						*size = s.st_size;
					return true;
				}
		}
	}
	return false;
}

/* The bytes of the loaded image at [vaddr, vaddr + *len) from its section
 * (the longest prefix inside one), or NULL. */
static const uint8_t *section_bytes(Elf *elf, uint64_t vaddr, size_t *len)
{
	Elf_Scn *scn = NULL;
	size_t size = 0;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &size);

	while (raw && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size || sh.sh_offset > size ||
		    sh.sh_size > size - sh.sh_offset)
			continue;
		uint64_t in = vaddr - sh.sh_addr;
		if (*len == 0 || *len > sh.sh_size - in)
			*len = sh.sh_size - in;
		return raw + sh.sh_offset + in;
	}
	return NULL;
}

/* Find the table: 0 and its bytes, or -ENOENT. */
static int find_table(Elf *elf, const uint8_t **data, size_t *len, uint64_t *vaddr)
{
	size_t shstrndx, size = 0;
	Elf_Scn *scn = NULL;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &size);
	static const char *const sym[] = { "runtime.pclntab", NULL };
	uint64_t v, sz;

	bool go = false;

	if (!raw || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && (!strcmp(name, ".note.go.buildid") || !strcmp(name, ".go.buildinfo")))
			go = true;
		if (name && !strcmp(name, ".gopclntab") && sh.sh_type != SHT_NOBITS &&
		    sh.sh_offset <= size && sh.sh_size <= size - sh.sh_offset) {
			*data = raw + sh.sh_offset;
			*len = sh.sh_size;
			*vaddr = sh.sh_addr;
			return 0;
		}
	}
	if (sym_value(elf, sym, &v, &sz)) {
		size_t l = 0; /* to the end of its section: the size may be 0 */
		const uint8_t *p = section_bytes(elf, v, &l);
		if (p) {
			*data = p, *len = l, *vaddr = v;
			return 0;
		}
	}
	/* by the header's magic, 8-byte aligned, in allocated data sections,
	 * where the external linker merged .gopclntab into .data.rel.ro
	 * (-buildmode=pie -linkmode=external keeps no name and, stripped, no
	 * symbol).  Only in Go's output, which keeps its build-id note and
	 * .go.buildinfo there: the scan read all of every other object's data
	 * at each table build (31 ms for ICU's 30 MB libicudata, which has no
	 * .eh_frame and so no cached table). */
	if (!go)
		return -ENOENT;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & SHF_EXECINSTR) || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue;
		const uint8_t *p = raw + sh.sh_offset;
		for (uint64_t o = (8 - (sh.sh_addr & 7)) & 7; o + 64 <= sh.sh_size; o += 8) {
			uint32_t m = (uint32_t)le(p + o, 4);
			struct gopcln *t;
			if ((m != MAGIC_116 && m != MAGIC_118 && m != MAGIC_120) || p[o + 4] || p[o + 5])
				continue;
			if (gopcln_open(&t, p + o, sh.sh_size - o, sh.sh_addr + o, NULL, NULL) == 0) {
				gopcln_close(t);
				*data = p + o, *len = sh.sh_size - o, *vaddr = sh.sh_addr + o;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * runtime.firstmoduledata: the word holding the table's address, followed
 * by the funcnametab slice that points into it.  Its text and gofunc
 * fields are what an unrelocated or symbol-less binary lacks.
 */
static bool find_moduledata(Elf *elf, struct image *im, uint64_t tab, uint64_t funcname, uint64_t *md)
{
	Elf_Scn *scn = NULL;
	uint8_t w[16];

	/* PIE: the words are relocations, their values the addends */
	for (size_t i = 0; i < im->nr_rels; i++)
		if (im->rels[i].addend == tab && image_read(im, im->rels[i].off, w, 16) == 0 &&
		    le(w + 8, 8) == tab + funcname) {
			*md = im->rels[i].off;
			return true;
		}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    !(sh.sh_flags & SHF_WRITE))
			continue;
		size_t l = 0;
		const uint8_t *p = section_bytes(elf, sh.sh_addr, &l);
		for (uint64_t o = 0; p && o + 16 <= l; o += 8)
			if (le(p + o, 8) == tab && le(p + o + 8, 8) == tab + funcname) {
				*md = sh.sh_addr + o;
				return true;
			}
	}
	return false;
}

int gopcln_elf_open(struct gopcln **out, Elf *elf, struct gopcln_error *err)
{
	const uint8_t *data;
	size_t len;
	uint64_t vaddr, v, md;
	struct image *im = NULL;
	struct gopcln_opts o = { 0 };
	struct gopcln *t;
	int rc;

	*out = NULL;
	if (err)
		err->message[0] = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		seterr(err, "not a 64-bit ELF object");
		return -ENOENT;
	}
	if (find_table(elf, &data, &len, &vaddr)) {
		seterr(err, "no Go pclntab");
		return -ENOENT;
	}
	if ((rc = gopcln_open(&t, data, len, vaddr, NULL, err)))
		return rc;
	if ((rc = image_build(&im, elf))) {
		gopcln_close(t);
		seterr(err, "out of memory");
		return rc;
	}
	o.mem = (struct gopcln_mem){ image_read, im };
	if (t->version != 116) {
		static const char *const text[] = { "runtime.text", NULL };
		static const char *const gofunc[] = { "go:func.*", "go.func.*", NULL };
		uint8_t b[8];
		/* the header's text base, relocated where it is (PIE) */
		if (image_read(im, vaddr + 24, b, 8) == 0)
			o.text_start = le(b, 8);
		if (sym_value(elf, text, &v, NULL))
			o.text_start = v;
		if (sym_value(elf, gofunc, &v, NULL))
			o.gofunc = v;
		if ((!o.gofunc || !o.text_start) && find_moduledata(elf, im, vaddr, t->funcname, &md)) {
			/* text at 176; gofunc at 304 (1.18, 1.19), 320 (1.20+:
			 * covctrs, ecovctrs before end) */
			if (!o.text_start && image_read(im, md + 176, b, 8) == 0)
				o.text_start = le(b, 8);
			if (!o.gofunc && image_read(im, md + (t->version == 120 ? 320 : 304), b, 8) == 0)
				o.gofunc = le(b, 8);
		}
	}
	gopcln_close(t);
	if ((rc = gopcln_open(&t, data, len, vaddr, &o, err))) {
		image_free(im);
		return rc;
	}
	t->free_arg = image_free;
	*out = t;
	return 0;
}
