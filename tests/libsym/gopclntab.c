/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gopclntab.c - libsym's reader of Go's function table (libsym/gopclntab.h)
 * on hand-made tables of the three layouts (gopcln_build.h), whole,
 * truncated at every length and with every byte changed; and on a Go
 * binary when the test finds one (BPROF_TEST_GO_BINARY, set by the e2e
 * test's build; skipped here otherwise).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"
#include "gopcln_build.h"

static struct gopcln *open_built(const struct gb *g, const uint8_t *bytes, size_t len,
				 struct gb_memarg *ma)
{
	struct gopcln_opts o = { .gofunc = GB_MEM, .mem = { gb_read, ma } };
	struct gopcln_error err;
	struct gopcln *t = NULL;

	*ma = (struct gb_memarg){ g->mem, g->nmem, GB_MEM };
	if (gopcln_open(&t, bytes, len, GB_TAB, &o, &err))
		return NULL;
	return t;
}

static void check_layout(unsigned version)
{
	struct gb g;
	struct gb_memarg ma;
	struct gopcln_frame fr[8];
	struct gopcln_func f;
	unsigned nr;
	int32_t sp;

	gb_build(&g, version);
	struct gopcln *t = open_built(&g, g.b, g.n, &ma);
	cr_assert_not_null(t, "Go %u layout refused", version);
	cr_assert_eq(gopcln_version(t), version);
	cr_assert_eq(gopcln_nr_funcs(t), 2);

	cr_assert_eq(gopcln_func(t, 0, &f), 0);
	cr_assert_eq(f.entry, GB_TEXT);
	cr_assert_eq(f.end, GB_TEXT + 0x40);
	cr_assert_str_eq(f.name, "main.a");
	cr_assert(!gopcln_func_is_root(&f));
	cr_assert_eq(gopcln_func(t, 1, &f), 0);
	cr_assert_str_eq(f.name, "runtime.goexit");
	cr_assert(gopcln_func_is_root(&f));
	cr_assert_eq(f.flag, version == 116 ? 0 : GOPCLN_FLAG_TOPFRAME);
	cr_assert_eq(gopcln_func(t, 2, &f), -ERANGE);

	/* plain lines */
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x4, fr, 8, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_str_eq(fr[0].name, "main.a");
	cr_assert_str_eq(fr[0].file, "/src/a.go");
	cr_assert_eq(fr[0].line, 10);
	cr_assert(!fr[0].inlined);
	cr_assert_eq(fr[0].entry, GB_TEXT);
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x3f, fr, 8, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_eq(fr[0].line, 11);

	/* an inlined call: callee at its own line and file, the caller at
	 * the line of the call (its position at parentPc) */
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x18, fr, 8, &nr), 0);
	cr_assert_eq(nr, 2);
	cr_assert_str_eq(fr[0].name, "main.inl");
	cr_assert_str_eq(fr[0].file, "/src/b.go");
	cr_assert_eq(fr[0].line, 50);
	cr_assert(fr[0].inlined);
	cr_assert_str_eq(fr[1].name, "main.a");
	cr_assert_str_eq(fr[1].file, "/src/a.go");
	cr_assert_eq(fr[1].line, 11);
	cr_assert(!fr[1].inlined);
	/* room for one frame: the outermost */
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x18, fr, 1, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_str_eq(fr[0].name, "main.a");

	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x44, fr, 8, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_str_eq(fr[0].name, "runtime.goexit");
	cr_assert_eq(fr[0].line, 7);

	/* outside the text */
	cr_assert_eq(gopcln_lookup(t, GB_TEXT - 1, fr, 8, &nr), 0);
	cr_assert_eq(nr, 0);
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x50, fr, 8, &nr), 0);
	cr_assert_eq(nr, 0);

	cr_assert_eq(gopcln_sp_delta(t, GB_TEXT + 0x2, &sp), 0);
	cr_assert_eq(sp, 0);
	cr_assert_eq(gopcln_sp_delta(t, GB_TEXT + 0x20, &sp), 0);
	cr_assert_eq(sp, 0x18);
	cr_assert_eq(gopcln_sp_delta(t, GB_TEXT + 0x50, &sp), -ENOENT);
	gopcln_close(t);
}

struct sp_seen {
	uint64_t a[8], b[8];
	int32_t d[8];
	unsigned n;
};

static int seen(void *arg, uint64_t a, uint64_t b, int32_t d)
{
	struct sp_seen *s = arg;

	cr_assert_lt(s->n, 8);
	s->a[s->n] = a, s->b[s->n] = b, s->d[s->n] = d;
	s->n++;
	return 0;
}

static void check_pcsp(unsigned version)
{
	struct gb g;
	struct gb_memarg ma;
	struct sp_seen s = { 0 };

	gb_build(&g, version);
	struct gopcln *t = open_built(&g, g.b, g.n, &ma);
	cr_assert_not_null(t);
	cr_assert_eq(gopcln_pcsp_ranges(t, 0, seen, &s), 0);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.a[0], GB_TEXT);
	cr_assert_eq(s.b[0], GB_TEXT + 4);
	cr_assert_eq(s.d[0], 0);
	cr_assert_eq(s.a[1], GB_TEXT + 4);
	cr_assert_eq(s.b[1], GB_TEXT + 0x40);
	cr_assert_eq(s.d[1], 0x18);
	cr_assert_eq(gopcln_pcsp_ranges(t, 2, seen, &s), -ERANGE);
	gopcln_close(t);
}

Test(gopclntab, pcsp_ranges_go116) { check_pcsp(116); }
Test(gopclntab, pcsp_ranges_go120) { check_pcsp(120); }

Test(gopclntab, layout_go116) { check_layout(116); }
Test(gopclntab, layout_go118) { check_layout(118); }
Test(gopclntab, layout_go120) { check_layout(120); }

Test(gopclntab, without_memory_no_inline_frames)
{
	struct gb g;
	struct gopcln_frame fr[8];
	struct gopcln *t;
	struct gopcln_error err;
	unsigned nr;

	gb_build(&g, 118);
	cr_assert_eq(gopcln_open(&t, g.b, g.n, GB_TAB, NULL, &err), 0);
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x18, fr, 8, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_str_eq(fr[0].name, "main.a");
	/* the line of the inlined body's own position, all that is known */
	cr_assert_eq(fr[0].line, 50);
	gopcln_close(t);
}

Test(gopclntab, refuses_what_it_cannot_read)
{
	struct gb g;
	struct gopcln *t;
	struct gopcln_error err;
	static const uint8_t go12[16] = { 0xfb, 0xff, 0xff, 0xff, 0, 0, 1, 8 };

	cr_assert_eq(gopcln_open(&t, go12, sizeof(go12), 0, NULL, &err), -EINVAL);
	cr_assert_null(t);
	cr_assert(err.message[0]);
	cr_assert_eq(gopcln_open(&t, NULL, 0, 0, NULL, &err), -EINVAL);
	gb_build(&g, 120);
	g.b[7] = 4; /* 32-bit pointers */
	cr_assert_eq(gopcln_open(&t, g.b, g.n, GB_TAB, NULL, &err), -EINVAL);
	gb_build(&g, 120);
	g.b[4] = 1; /* padding */
	cr_assert_eq(gopcln_open(&t, g.b, g.n, GB_TAB, NULL, &err), -EINVAL);
	gb_build(&g, 120);
	gb_put(g.b + 8, 1u << 30, 8); /* function count */
	cr_assert_eq(gopcln_open(&t, g.b, g.n, GB_TAB, NULL, &err), -EINVAL);
	gb_build(&g, 116);
	gb_put(g.b + 8 + 6 * 8, g.n, 8); /* functab offset at the end */
	cr_assert_eq(gopcln_open(&t, g.b, g.n, GB_TAB, NULL, &err), -EINVAL);
}

/* Everything a lookup returns lies in the table or the memory it was
 * given, and its strings end there. */
static void check_inside(const struct gopcln_frame *fr, unsigned nr, unsigned max, const uint8_t *b,
			 size_t n)
{
	cr_assert_leq(nr, max);
	for (unsigned i = 0; i < nr; i++) {
		const char *s[2] = { fr[i].name, fr[i].file };
		for (int k = 0; k < 2; k++) {
			if (!s[k])
				continue;
			cr_assert((const uint8_t *)s[k] >= b && (const uint8_t *)s[k] < b + n);
			cr_assert(memchr(s[k], 0, (size_t)(b + n - (const uint8_t *)s[k])));
		}
	}
}

/* the ranges of a hostile table still go forward */
static int any_range(void *arg, uint64_t a, uint64_t b, int32_t d)
{
	(void)arg, (void)d;
	cr_assert_lt(a, b);
	return 0;
}

static void exercise(const uint8_t *b, size_t n, const struct gb *g)
{
	struct gb_memarg ma;
	struct gopcln *t = open_built(g, b, n, &ma);
	struct gopcln_frame fr[8];
	unsigned nr;
	int32_t sp;

	if (!t)
		return;
	size_t nf = gopcln_nr_funcs(t);
	for (size_t i = 0; i < nf && i < 64; i++) {
		struct gopcln_func f;
		if (gopcln_func(t, i, &f) == 0 && f.name)
			cr_assert((const uint8_t *)f.name >= b && (const uint8_t *)f.name < b + n);
	}
	for (uint64_t pc = GB_TEXT - 2; pc < GB_TEXT + 0x52; pc += 3) {
		cr_assert_eq(gopcln_lookup(t, pc, fr, 8, &nr), 0);
		check_inside(fr, nr, 8, b, n);
		(void)gopcln_sp_delta(t, pc, &sp);
	}
	for (size_t i = 0; i < nf && i < 64; i++)
		(void)gopcln_pcsp_ranges(t, i, any_range, NULL);
	gopcln_close(t);
}

/* Every prefix of a valid table, in a buffer of exactly that size (so a
 * read past it is a heap overflow that ASan or valgrind would name). */
static void truncations(unsigned version)
{
	struct gb g;

	gb_build(&g, version);
	for (size_t n = 0; n <= g.n; n++) {
		uint8_t *b = malloc(n ? n : 1);
		cr_assert_not_null(b);
		memcpy(b, g.b, n);
		exercise(b, n, &g);
		free(b);
	}
}

Test(gopclntab, truncated_go116) { truncations(116); }
Test(gopclntab, truncated_go118) { truncations(118); }
Test(gopclntab, truncated_go120) { truncations(120); }

/* Every byte changed, three ways; and the inline tree's memory too. */
static void corruptions(unsigned version)
{
	struct gb g0, g;
	static const uint8_t xors[] = { 0xff, 0x80, 0x01 };

	gb_build(&g0, version);
	for (size_t i = 0; i < g0.n; i++)
		for (size_t k = 0; k < sizeof(xors); k++) {
			g = g0;
			g.b[i] ^= xors[k];
			uint8_t *b = malloc(g.n);
			cr_assert_not_null(b);
			memcpy(b, g.b, g.n);
			exercise(b, g.n, &g);
			free(b);
		}
	for (size_t i = 0; i < g0.nmem; i++) {
		g = g0;
		g.mem[i] ^= 0xff;
		exercise(g.b, g.n, &g);
	}
}

Test(gopclntab, corrupted_go116) { corruptions(116); }
Test(gopclntab, corrupted_go118) { corruptions(118); }
Test(gopclntab, corrupted_go120) { corruptions(120); }

/* A pc-value table that never ends (no terminator before the table's end)
 * and varints longer than five bytes stop at the table's end. */
Test(gopclntab, endless_pc_tables_stop_at_the_end)
{
	struct gb g;
	struct gb_memarg ma;
	struct gopcln_frame fr[8];
	unsigned nr;

	gb_build(&g, 118);
	/* every byte from the pctab to the end: continuation bits */
	uint64_t pctab = 0;
	for (int i = 0; i < 8; i++)
		pctab |= (uint64_t)g.b[8 + 6 * 8 + i] << (8 * i);
	uint8_t *b = malloc(g.n);
	memcpy(b, g.b, g.n);
	uint64_t pcln = 0;
	for (int i = 0; i < 8; i++)
		pcln |= (uint64_t)g.b[8 + 7 * 8 + i] << (8 * i);
	memset(b + pctab + 1, 0x80, pcln - pctab - 1);
	struct gopcln *t = open_built(&g, b, g.n, &ma);
	cr_assert_not_null(t);
	cr_assert_eq(gopcln_lookup(t, GB_TEXT + 0x18, fr, 8, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_str_eq(fr[0].name, "main.a");
	cr_assert_eq(fr[0].line, 0);
	cr_assert_null(fr[0].file);
	gopcln_close(t);
	free(b);
}

/* A Go binary's own table against `go tool objdump` is the e2e test's
 * (tests/report/go_stacks.sh); here, that one opens through ELF. */
Test(gopclntab, elf_of_a_go_binary)
{
	const char *path = getenv("BPROF_TEST_GO_BINARY");
	if (!path || !*path)
		cr_skip_test("no Go binary (BPROF_TEST_GO_BINARY)");
	elf_version(EV_CURRENT);
	FILE *fp = fopen(path, "rb");
	cr_assert_not_null(fp);
	Elf *e = elf_begin(fileno(fp), ELF_C_READ_MMAP, NULL);
	struct gopcln *t;
	struct gopcln_error err;
	cr_assert_eq(gopcln_elf_open(&t, e, &err), 0, "%s", err.message);
	size_t roots = 0;
	for (size_t i = 0; i < gopcln_nr_funcs(t); i++) {
		struct gopcln_func f;
		if (gopcln_func(t, i, &f) == 0 && gopcln_func_is_root(&f))
			roots++;
	}
	cr_assert_geq(roots, 3);
	gopcln_close(t);
	elf_end(e);
	fclose(fp);
}
