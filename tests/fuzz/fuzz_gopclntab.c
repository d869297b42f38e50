/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: libsym's reader of Go's function table
 * (libsym/gopclntab.c) on hostile tables, as a stripped Go binary from
 * anywhere may carry them.  Input: 2 bytes (little-endian) of memory
 * length M, M bytes of memory (the inline trees' go:func.*, at a fixed
 * address), then the table.  Invariants: it returns (every loop bounded by
 * the bytes it reads); every name and file returned lies in the table and
 * ends there; no more frames than asked; a lookup answers the same twice;
 * pcsp ranges go forward inside their function.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"

#define TAB 0x500000ull
#define MEM 0x600000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct memarg {
	const uint8_t *p;
	size_t n;
};

static int rd(void *arg, uint64_t vaddr, void *dst, size_t len)
{
	const struct memarg *m = arg;

	if (vaddr < MEM || vaddr - MEM > m->n || m->n - (vaddr - MEM) < len)
		return -1;
	memcpy(dst, m->p + (vaddr - MEM), len);
	return 0;
}

static void inside(const char *s, const uint8_t *b, size_t n)
{
	if (!s)
		return;
	if ((const uint8_t *)s < b || (const uint8_t *)s >= b + n ||
	    !memchr(s, 0, (size_t)(b + n - (const uint8_t *)s)))
		abort();
}

static void look(const struct gopcln *t, uint64_t pc, const uint8_t *b, size_t n)
{
	struct gopcln_frame fr[8], again[8];
	unsigned nr = 0, nr2 = 0;
	int32_t sp;

	if (gopcln_lookup(t, pc, fr, 8, &nr) || nr > 8)
		abort();
	for (unsigned i = 0; i < nr; i++) {
		inside(fr[i].name, b, n);
		inside(fr[i].file, b, n);
		if (fr[i].inlined != (i + 1 < nr))
			abort(); /* inlined frames first, the outermost last */
	}
	if (gopcln_lookup(t, pc, again, 8, &nr2) || nr2 != nr)
		abort();
	for (unsigned i = 0; i < nr; i++)
		if (again[i].name != fr[i].name || again[i].line != fr[i].line)
			abort();
	(void)gopcln_sp_delta(t, pc, &sp);
}

/* pcsp ranges go forward, inside their function */
static int forward(void *arg, uint64_t a, uint64_t b, int32_t d)
{
	const struct gopcln_func *f = arg;

	(void)d;
	if (a >= b || a < f->entry || b > f->end)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memarg m;
	struct gopcln *t;
	struct gopcln_error err;
	size_t mlen;

	if (size < 2)
		return 0;
	mlen = data[0] | (size_t)data[1] << 8;
	if (mlen > size - 2)
		return 0;
	m = (struct memarg){ data + 2, mlen };
	const uint8_t *tab = data + 2 + mlen;
	size_t n = size - 2 - mlen;
	struct gopcln_opts o = { .gofunc = MEM, .mem = { rd, &m } };
	if (gopcln_open(&t, tab, n, TAB, &o, &err)) {
		if (t || !err.message[0])
			abort();
		return 0;
	}
	for (size_t i = 0; i < gopcln_nr_funcs(t) && i < 256; i++) {
		struct gopcln_func f;
		if (gopcln_func(t, i, &f))
			continue;
		inside(f.name, tab, n);
		look(t, f.entry, tab, n);
		look(t, f.entry + (f.end - f.entry) / 2, tab, n);
		look(t, f.end - 1, tab, n);
		(void)gopcln_pcsp_ranges(t, i, forward, &f);
	}
	look(t, 0x401018, tab, n);
	gopcln_close(t);
	return 0;
}
