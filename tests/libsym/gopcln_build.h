/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gopcln_build.h - small Go pclntabs made by hand, in each layout that
 * libsym/gopclntab.c reads (Go 1.16, 1.18, 1.20), for its unit tests and
 * the seeds of its fuzz target.  The table's shape:
 *
 *   text + 0x00  main.a (0x40 bytes), /src/a.go: lines 10 [0, 0x10),
 *                50 in /src/b.go [0x10, 0x20) (main.inl inlined, called
 *                from the line at 0x30), 11 [0x20, 0x40); sp delta 0 at
 *                [0, 4), 0x18 after
 *   text + 0x40  runtime.goexit (0x10 bytes), TOPFRAME (1.18+), line 7
 *
 * The inline tree lives in "memory" at GB_MEM (1.18+: go:func.* is
 * GB_MEM; 1.16: a pointer to it).
 */
#ifndef GOPCLN_BUILD_H
#define GOPCLN_BUILD_H

#include <stdint.h>
#include <string.h>

#define GB_TEXT 0x401000ull
#define GB_TAB 0x500000ull
#define GB_MEM 0x600000ull

struct gb {
	uint8_t b[1024];
	size_t n;
	uint8_t mem[64];
	size_t nmem;
};

static inline void gb_put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline size_t gb_add(struct gb *g, const void *p, size_t n)
{
	size_t at = g->n;
	memcpy(g->b + g->n, p, n);
	g->n += n;
	return at;
}

static inline size_t gb_align(struct gb *g, size_t a)
{
	while (g->n % a)
		g->b[g->n++] = 0;
	return g->n;
}

/* zig-zag value delta and pc delta, Go's pc-value encoding (one byte each
 * here: small deltas) */
static inline void gb_pair(uint8_t **p, int32_t vd, uint32_t pcd)
{
	uint32_t z = vd < 0 ? ((uint32_t)~vd << 1) | 1 : (uint32_t)vd << 1;
	*(*p)++ = (uint8_t)z;
	*(*p)++ = (uint8_t)pcd;
}

/* version: 116, 118 or 120 */
static inline void gb_build(struct gb *g, unsigned version)
{
	unsigned nw = version == 116 ? 7 : 8;
	memset(g, 0, sizeof(*g));
	gb_put(g->b, version == 116 ? 0xfffffffa : version == 118 ? 0xfffffff0 : 0xfffffff1, 4);
	g->b[6] = 1; /* quantum */
	g->b[7] = 8; /* pointer size */
	g->n = 8 + nw * 8;

	static const char names[] = "main.a\0main.inl\0runtime.goexit";
	size_t funcname = gb_add(g, names, sizeof(names));
	const uint32_t n_a = 0, n_inl = 7, n_goexit = 16;
	gb_align(g, 4);
	size_t cu = g->n;
	uint8_t cut[8];
	gb_put(cut, 0, 4);  /* file 0: /src/a.go at filetab + 0 */
	gb_put(cut + 4, 10, 4); /* file 1: /src/b.go */
	gb_add(g, cut, 8);
	static const char files[] = "/src/a.go\0/src/b.go";
	size_t filetab = gb_add(g, files, sizeof(files));

	/* pctab: offset 0 means "no table", so a pad byte first */
	size_t pctab = g->n;
	uint8_t pc[64], *p = pc;
	*p++ = 0;
	uint32_t ln_a = (uint32_t)(p - pc);
	gb_pair(&p, 11, 0x10), gb_pair(&p, 40, 0x10), gb_pair(&p, -39, 0x20), *p++ = 0;
	uint32_t fl_a = (uint32_t)(p - pc);
	gb_pair(&p, 1, 0x10), gb_pair(&p, 1, 0x10), gb_pair(&p, -1, 0x20), *p++ = 0;
	uint32_t sp_a = (uint32_t)(p - pc);
	gb_pair(&p, 1, 0x04), gb_pair(&p, 0x18, 0x3c), *p++ = 0;
	uint32_t in_a = (uint32_t)(p - pc);
	gb_pair(&p, 0, 0x10), gb_pair(&p, 1, 0x10), gb_pair(&p, -1, 0x20), *p++ = 0;
	uint32_t ln_g = (uint32_t)(p - pc);
	gb_pair(&p, 8, 0x10), *p++ = 0;
	uint32_t fl_g = (uint32_t)(p - pc);
	gb_pair(&p, 1, 0x10), *p++ = 0;
	uint32_t sp_g = (uint32_t)(p - pc);
	gb_pair(&p, 1, 0x10), *p++ = 0;
	gb_add(g, pc, (size_t)(p - pc));

	size_t pcln = gb_align(g, 8);
	unsigned fsz = version == 116 ? 8 : 4;
	size_t ftab = g->n;
	g->n += 5 * fsz; /* 2 pairs and the end */
	gb_align(g, 8);

	/* the two _funcs */
	size_t fo[2];
	for (int i = 0; i < 2; i++) {
		uint8_t f[128] = { 0 };
		size_t o = 0;
		uint64_t entry = i ? 0x40 : 0;
		if (version == 116)
			gb_put(f, GB_TEXT + entry, 8), o = 8;
		else
			gb_put(f, entry, 4), o = 4;
		gb_put(f + o, i ? n_goexit : n_a, 4);
		gb_put(f + o + 12, i ? sp_g : sp_a, 4);
		gb_put(f + o + 16, i ? fl_g : fl_a, 4);
		gb_put(f + o + 20, i ? ln_g : ln_a, 4);
		gb_put(f + o + 24, i ? 0 : 3, 4); /* npcdata */
		gb_put(f + o + 28, 0, 4);         /* cuOffset */
		o += version == 120 ? 36 : 32;
		f[o] = i ? 7 : 0;                 /* funcID */
		f[o + 1] = i && version != 116 ? 1 : 0; /* TOPFRAME */
		f[o + 3] = i ? 0 : 4;             /* nfuncdata */
		o += 4;
		if (!i) {
			o += 8; /* pcdata[0], [1]: none */
			gb_put(f + o, in_a, 4), o += 4;
			if (version == 116) {
				/* aligned in the image: GB_TAB is, so is the table */
				size_t abs = pcln + (gb_align(g, 8) - pcln) + o;
				if (abs & 4)
					o += 4;
				o += 24; /* funcdata 0..2: nil */
				gb_put(f + o, GB_MEM, 8), o += 8;
			} else {
				gb_put(f + o, 0xffffffff, 4), gb_put(f + o + 4, 0xffffffff, 4);
				gb_put(f + o + 8, 0xffffffff, 4), gb_put(f + o + 12, 0, 4);
				o += 16;
			}
		}
		gb_align(g, 8);
		fo[i] = g->n - pcln;
		gb_add(g, f, o);
	}
	gb_put(g->b + ftab, version == 116 ? GB_TEXT : 0, fsz);
	gb_put(g->b + ftab + fsz, fo[0], fsz);
	gb_put(g->b + ftab + 2 * fsz, version == 116 ? GB_TEXT + 0x40 : 0x40, fsz);
	gb_put(g->b + ftab + 3 * fsz, fo[1], fsz);
	gb_put(g->b + ftab + 4 * fsz, version == 116 ? GB_TEXT + 0x50 : 0x50, fsz);

	uint64_t w[8] = { 2, 2 }, *x = w + 2;
	if (version != 116)
		*x++ = GB_TEXT;
	*x++ = funcname, *x++ = cu, *x++ = filetab, *x++ = pctab, *x++ = pcln;
	for (unsigned i = 0; i < nw; i++)
		gb_put(g->b + 8 + 8 * i, w[i], 8);

	/* the inline tree: entry 0, main.inl called from main.a + 0x30 */
	if (version == 120) {
		gb_put(g->mem + 4, n_inl, 4);
		gb_put(g->mem + 8, 0x30, 4);
		gb_put(g->mem + 12, 49, 4);
		g->nmem = 16;
	} else {
		gb_put(g->mem, 0xffff, 2);
		gb_put(g->mem + 8, 11, 4);
		gb_put(g->mem + 12, n_inl, 4);
		gb_put(g->mem + 16, 0x30, 4);
		g->nmem = 20;
	}
}

struct gb_memarg {
	const uint8_t *p;
	size_t n;
	uint64_t vaddr;
};

static inline int gb_read(void *arg, uint64_t vaddr, void *dst, size_t len)
{
	const struct gb_memarg *m = arg;
	if (vaddr < m->vaddr || vaddr - m->vaddr > m->n || m->n - (vaddr - m->vaddr) < len)
		return -1;
	memcpy(dst, m->p + (vaddr - m->vaddr), len);
	return 0;
}

#endif
