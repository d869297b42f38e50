/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_golden - write the golden files of tests/data/format/.
 *
 * Usage: gen_golden OUTDIR    (writes OUTDIR/valid/ and OUTDIR/invalid/)
 *
 * Run once and check the output in; it is not part of the test run.  The
 * point of golden files is that they do NOT change when the code changes:
 * a reader that stops accepting valid/ or starts accepting invalid/ has
 * changed the format.  Regenerate only together with a SPEC.md changelog
 * entry.
 *
 * Invalid files are built by taking the content of a valid recording
 * (SPEC.md section 5), damaging one structure and framing it again with a
 * correct header and checksum, so each file carries exactly the one defect
 * its name says.  Each file is read back here and must fail with the
 * expected code; invalid/expected.txt lists "NAME CODE" for the test.
 *
 * valid/NAME.dump are not made here: they are bprof-dump's output for
 * valid/NAME.bprof (typical with --ksyms), reviewed by hand, because they
 * pin bprof-dump's output format rather than the file format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "fixtures.h"
#include "internal.h"

struct bb {
	uint8_t *p;
	size_t len, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "gen_golden: %s\n", what);
	exit(1);
}

static void bb_put(struct bb *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			die("out of memory");
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void bb_u32(struct bb *b, uint32_t v)
{
	uint8_t x[4];

	bprof_put32(x, v);
	bb_put(b, x, 4);
}

static void bb_u64(struct bb *b, uint64_t v)
{
	uint8_t x[8];

	bprof_put64(x, v);
	bb_put(b, x, 8);
}

static void bb_uleb(struct bb *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		if (v)
			byte |= 0x80;
		bb_put(b, &byte, 1);
	} while (v);
}

static void bb_str(struct bb *b, const char *s)
{
	bb_u32(b, (uint32_t)strlen(s));
	bb_put(b, s, strlen(s));
}

static struct bb bb_copy(const struct bb *b)
{
	struct bb c = { 0 };

	bb_put(&c, b->p, b->len);
	return c;
}

static void bb_insert(struct bb *b, size_t off, const void *p, size_t n)
{
	bb_put(b, p, n); /* grow */
	memmove(b->p + off + n, b->p + off, b->len - n - off);
	memcpy(b->p + off, p, n);
}

static void bb_delete(struct bb *b, size_t off, size_t n)
{
	memmove(b->p + off, b->p + off + n, b->len - off - n);
	b->len -= n;
}

/* ---- content ---------------------------------------------------------- */

static struct bb content_of(struct bprof_recording *r)
{
	struct bprof_error err;
	struct bb c = { 0 };
	void *file;
	size_t len;
	uint64_t csize;

	if (bprof_write_buffer(r, &file, &len, NULL, &err))
		die(err.message);
	csize = bprof_le64((uint8_t *)file + 16);
	c.p = malloc(csize + 1);
	c.len = c.cap = csize;
	if (ZSTD_decompress(c.p, csize, (uint8_t *)file + BPROF_FILE_HEADER_LEN,
			    len - BPROF_FILE_HEADER_LEN) != csize)
		die("decompress");
	free(file);
	return c;
}

/* Offset of the header of the section of this type (first one). */
static size_t sect_at(const struct bb *c, uint32_t type)
{
	size_t pos = 0;

	while (pos + 16 <= c->len) {
		if (bprof_le32(c->p + pos) == type)
			return pos;
		pos += 16 + bprof_le64(c->p + pos + 8);
	}
	die("section not found");
	return 0;
}

static size_t payload(const struct bb *c, uint32_t type)
{
	return sect_at(c, type) + 16;
}

static uint64_t sect_len(const struct bb *c, uint32_t type)
{
	return bprof_le64(c->p + sect_at(c, type) + 8);
}

static void set_sect_len(struct bb *c, uint32_t type, uint64_t len)
{
	bprof_put64(c->p + sect_at(c, type) + 8, len);
}

static void replace_payload(struct bb *c, uint32_t type, const struct bb *p)
{
	size_t at = sect_at(c, type), old = bprof_le64(c->p + at + 8);

	bb_delete(c, at + 16, old);
	bb_insert(c, at + 16, p->p, p->len);
	bprof_put64(c->p + at + 8, p->len);
}

static void set32(struct bb *c, size_t off, uint32_t v)
{
	bprof_put32(c->p + off, v);
}

static void set64(struct bb *c, size_t off, uint64_t v)
{
	bprof_put64(c->p + off, v);
}

/* ---- framing ---------------------------------------------------------- */

struct frame_opts {
	unsigned major, minor;
	uint32_t flags;
	bool size_override;
	uint64_t content_size;
	bool no_checksum;
	int window_log;    /* 0: default; else forced, frame size unknown */
};

static struct bb frame(const struct bb *c, const struct frame_opts *o)
{
	struct bb f = { 0 };
	uint8_t hdr[BPROF_FILE_HEADER_LEN];
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t bound = ZSTD_compressBound(c->len) + 64, rem;
	uint8_t *z = malloc(bound);
	ZSTD_outBuffer out = { z, bound, 0 };
	ZSTD_inBuffer in = { c->p, c->len, 0 };

	memcpy(hdr, bprof_magic, BPROF_MAGIC_LEN);
	bprof_put16(hdr + 8, (uint16_t)(o && o->major ? o->major : BPROF_FORMAT_MAJOR));
	bprof_put16(hdr + 10, (uint16_t)(o && o->minor ? o->minor : BPROF_FORMAT_MINOR_NO_OFFCPU));
	bprof_put32(hdr + 12, o ? o->flags : 0);
	bprof_put64(hdr + 16, o && o->size_override ? o->content_size : c->len);
	bb_put(&f, hdr, sizeof(hdr));

	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, o && o->no_checksum ? 0 : 1);
	if (o && o->window_log) {
		ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, o->window_log);
		/* continue first: the size stays unknown, the window as set */
		if (ZSTD_isError(ZSTD_compressStream2(cc, &out, &in, ZSTD_e_continue)))
			die("compress");
	}
	do {
		rem = ZSTD_compressStream2(cc, &out, &in, ZSTD_e_end);
		if (ZSTD_isError(rem))
			die(ZSTD_getErrorName(rem));
	} while (rem);
	bb_put(&f, z, out.pos);
	free(z);
	ZSTD_freeCCtx(cc);
	return f;
}

/* ---- output ------------------------------------------------------------ */

/* Where files go and how many did not read as expected. */
struct gen {
	const char *outdir;
	FILE *expected;
	int failures;
};

static void write_out(struct gen *g, const char *sub, const char *name, const struct bb *f)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s/%s.bprof", g->outdir, sub, name);
	fp = fopen(path, "wb");
	if (!fp || (f->len && fwrite(f->p, 1, f->len, fp) != f->len) || fclose(fp))
		die(path);
}

static const char *code_name(int code)
{
	switch (code) {
	case BPROF_OK: return "OK";
	case BPROF_E_IO: return "IO";
	case BPROF_E_NOMEM: return "NOMEM";
	case BPROF_E_NOT_BPROF: return "NOT_BPROF";
	case BPROF_E_VERSION: return "VERSION";
	case BPROF_E_ZSTD: return "ZSTD";
	case BPROF_E_TRUNCATED: return "TRUNCATED";
	case BPROF_E_CORRUPT: return "CORRUPT";
	case BPROF_E_LIMIT: return "LIMIT";
	case BPROF_E_EXISTS: return "EXISTS";
	case BPROF_E_INVAL: return "INVAL";
	}
	return "?";
}

static void valid(struct gen *g, const char *name, struct bb f)
{
	struct bprof_recording *r;
	struct bprof_error err = { 0 };

	if (bprof_read_buffer(&r, f.p, f.len, NULL, &err)) {
		fprintf(stderr, "valid/%s: refused: %s\n", name, err.message);
		g->failures++;
	}
	bprof_recording_free(r);
	write_out(g, "valid", name, &f);
	free(f.p);
}

static void invalid(struct gen *g, const char *name, int code, struct bb f)
{
	struct bprof_recording *r;
	struct bprof_error err = { 0 };
	int rc = bprof_read_buffer(&r, f.p, f.len, NULL, &err);

	if (rc != code) {
		fprintf(stderr, "invalid/%s: expected %s, got %s: %s\n", name, code_name(code),
			code_name(rc), err.message);
		g->failures++;
	} else {
		printf("invalid/%-40s %-9s %s\n", name, code_name(code), err.message);
	}
	bprof_recording_free(r);
	write_out(g, "invalid", name, &f);
	fprintf(g->expected, "%s %s\n", name, code_name(code));
	free(f.p);
}

/* Content c with section type's header cut to its first n bytes, the
 * content ending there: a reader must see the section's own fields run out,
 * not read past them. */
static void invalid_header_cut(struct gen *g, const char *name, const struct bb *c,
			       uint32_t type, uint64_t n, const struct frame_opts *o)
{
	struct bb d = bb_copy(c);

	d.len = sect_at(&d, type) + 16 + n;
	set_sect_len(&d, type, n);
	invalid(g, name, BPROF_E_TRUNCATED, frame(&d, o));
	free(d.p);
}

/* Content c with section type once more at its end: a second copy of a
 * section that may appear once is corrupt, not merged or ignored. */
static void invalid_duplicated(struct gen *g, const char *name, const struct bb *c,
			       uint32_t type, const struct frame_opts *o)
{
	struct bb d = bb_copy(c);
	size_t at = sect_at(&d, type);

	bb_insert(&d, d.len, d.p + at, 16 + sect_len(&d, type));
	invalid(g, name, BPROF_E_CORRUPT, frame(&d, o));
	free(d.p);
}

/* Frame a damaged copy of content c. */
#define DAMAGED(var, base) for (struct bb var = bb_copy(base), *once_ = &var; once_; once_ = NULL)

int main(int argc, char **argv)
{
	struct gen gen = { 0 }, *g = &gen;
	struct bprof_recording *typ;
	struct bb c, f;
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: gen_golden OUTDIR\n");
		return 2;
	}
	g->outdir = argv[1];
	snprintf(path, sizeof(path), "%s/valid", g->outdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/invalid", g->outdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/invalid/expected.txt", g->outdir);
	g->expected = fopen(path, "w");
	if (!g->expected)
		die(path);
	fprintf(g->expected, "# NAME EXPECTED-CODE (generated by tests/format/gen_golden.c)\n");

	/* ---- valid ---- */
	{
		struct bprof_recording *r = fx_empty();

		c = content_of(r);
		valid(g, "empty", frame(&c, NULL));
		free(c.p);
		bprof_recording_free(r);
		r = fx_odd_strings();
		c = content_of(r);
		valid(g, "odd-strings", frame(&c, NULL));
		free(c.p);
		bprof_recording_free(r);
	}
	typ = fx_typical();
	c = content_of(typ);
	valid(g, "typical", frame(&c, NULL));
	{
		/* unknown section types before, between and after known ones */
		struct bb d = bb_copy(&c), s = { 0 };

		bb_u32(&s, 0x7000);
		bb_u32(&s, 0);
		bb_u64(&s, 5);
		bb_put(&s, "hello", 5);
		bb_insert(&d, d.len, s.p, s.len);
		bb_insert(&d, sect_at(&d, BPROF_SECT_COUNTS), s.p, s.len);
		bb_insert(&d, 0, s.p, s.len);
		s.len = 0;
		bb_u32(&s, 0xffffffffu);
		bb_u32(&s, 0);
		bb_u64(&s, 0);
		bb_insert(&d, sect_at(&d, BPROF_SECT_KSYMS), s.p, s.len);
		valid(g, "unknown-section", frame(&d, NULL));
		free(d.p);
		free(s.p);
	}
	{
		/* a file from a newer minor: flags and reserved bits set, META
		 * longer, an unknown section with flags; all must be ignored */
		struct bb d = bb_copy(&c), s = { 0 };
		struct frame_opts o = { .minor = BPROF_FORMAT_MINOR + 1, .flags = 0x80000000u };
		size_t meta = sect_at(&d, BPROF_SECT_META);
		uint64_t mlen = sect_len(&d, BPROF_SECT_META);

		bb_insert(&d, meta + 16 + mlen, "\x01\x02\x03\x04", 4);
		set_sect_len(&d, BPROF_SECT_META, mlen + 4);
		set32(&d, payload(&d, BPROF_SECT_META) + 36, 0x3 | 0x100);
		set32(&d, payload(&d, BPROF_SECT_COUNTS) + 8 + 20, 0xdead);
		set32(&d, payload(&d, BPROF_SECT_ACCESS) + 4, BPROF_ACCESS_KALLSYMS | 0x80000000u);
		bb_u32(&s, 0x7001);
		bb_u32(&s, 0x1);
		bb_u64(&s, 0);
		bb_insert(&d, d.len, s.p, s.len);
		valid(g, "newer-minor-version", frame(&d, &o));
		free(d.p);
		free(s.p);
	}

	/* ---- invalid: header and frame ---- */
	f = frame(&c, NULL);
	invalid(g, "empty", BPROF_E_NOT_BPROF, (struct bb){ 0 });
	{
		struct bb m = { 0 };

		bb_put(&m, bprof_magic, BPROF_MAGIC_LEN);
		invalid(g, "magic-only", BPROF_E_TRUNCATED, m);
		m = (struct bb){ 0 };
		bb_put(&m, bprof_magic, 5);
		invalid(g, "magic-partial", BPROF_E_TRUNCATED, m);
		m = bb_copy(&f);
		m.p[1] = 'b';
		invalid(g, "bad-magic", BPROF_E_NOT_BPROF, m);
		m = bb_copy(&f);
		memcpy(m.p, "\x28\xb5\x2f\xfd", 4);
		invalid(g, "zstd-stream-not-bprof", BPROF_E_NOT_BPROF, m);
		m = bb_copy(&f);
		m.len = BPROF_FILE_HEADER_LEN;
		invalid(g, "header-only", BPROF_E_TRUNCATED, m);
		m = bb_copy(&f);
		m.len = BPROF_FILE_HEADER_LEN - 1;
		invalid(g, "header-truncated", BPROF_E_TRUNCATED, m);
	}
	invalid(g, "unknown-major-version", BPROF_E_VERSION,
		frame(&c, &(struct frame_opts){ .major = 2 }));
	invalid(g, "major-version-65535", BPROF_E_VERSION,
		frame(&c, &(struct frame_opts){ .major = 0xffff }));
	invalid(g, "header-flags-reserved", BPROF_E_CORRUPT,
		frame(&c, &(struct frame_opts){ .flags = 1 }));
	invalid(g, "content-size-above-limit", BPROF_E_LIMIT,
		frame(&c, &(struct frame_opts){ .size_override = true,
						 .content_size = UINT64_C(1) << 40 }));
	invalid(g, "content-size-smaller-than-frame", BPROF_E_CORRUPT,
		frame(&c, &(struct frame_opts){ .size_override = true,
						 .content_size = c.len - 1 }));
	invalid(g, "content-size-larger-than-frame", BPROF_E_CORRUPT,
		frame(&c, &(struct frame_opts){ .size_override = true,
						 .content_size = c.len + 1 }));
	invalid(g, "zstd-no-checksum", BPROF_E_ZSTD,
		frame(&c, &(struct frame_opts){ .no_checksum = true }));
	invalid(g, "zstd-window-above-cap", BPROF_E_LIMIT,
		frame(&c, &(struct frame_opts){ .window_log = 28 }));
	{
		struct bb m = bb_copy(&f);

		m.p[m.len - 1] ^= 0x01;
		invalid(g, "zstd-checksum-mismatch", BPROF_E_ZSTD, m);
		m = bb_copy(&f);
		m.p[BPROF_FILE_HEADER_LEN + (m.len - BPROF_FILE_HEADER_LEN) / 2] ^= 0x10;
		invalid(g, "zstd-data-byte-flipped", BPROF_E_ZSTD, m);
		m = bb_copy(&f);
		m.len -= 4;
		invalid(g, "zstd-checksum-missing", BPROF_E_TRUNCATED, m);
		m = bb_copy(&f);
		m.len = BPROF_FILE_HEADER_LEN + (m.len - BPROF_FILE_HEADER_LEN) / 2;
		invalid(g, "zstd-frame-truncated-half", BPROF_E_TRUNCATED, m);
		m = bb_copy(&f);
		m.len = BPROF_FILE_HEADER_LEN + 3;
		invalid(g, "zstd-frame-truncated-in-magic", BPROF_E_TRUNCATED, m);
		m = bb_copy(&f);
		bb_put(&m, "garbage", 7);
		invalid(g, "trailing-garbage", BPROF_E_CORRUPT, m);
		m = bb_copy(&f);
		bb_put(&m, "", 1);
		invalid(g, "trailing-zero-byte", BPROF_E_CORRUPT, m);
		m = bb_copy(&f);
		bb_put(&m, f.p + BPROF_FILE_HEADER_LEN, f.len - BPROF_FILE_HEADER_LEN);
		invalid(g, "two-zstd-frames", BPROF_E_CORRUPT, m);
		m = bb_copy(&f);
		m.len = BPROF_FILE_HEADER_LEN;
		bb_put(&m, "\x50\x2a\x4d\x18\x04\x00\x00\x00" "abcd", 12);
		invalid(g, "zstd-skippable-frame", BPROF_E_ZSTD, m);
		m = bb_copy(&f);
		m.len = BPROF_FILE_HEADER_LEN;
		bb_put(&m, "this is not a zstd frame at all", 31);
		invalid(g, "not-zstd", BPROF_E_ZSTD, m);
	}
	free(f.p);

	/* ---- invalid: section framing ---- */
	{
		static const char *const names[] = { "", "meta", "losses", "stacks", "counts",
						     "objects", "processes", "kernel", "ksyms",
						     "unwind", "images", "access", "generations" };

		/* content cut at every section boundary, and inside each header
		 * (the typical file has no OFFCPU section: it ends at
		 * GENERATIONS) */
		for (uint32_t t = BPROF_SECT_META; t <= BPROF_SECT_GENERATIONS; t++) {
			struct bb d = bb_copy(&c);
			char name[64];

			d.len = sect_at(&c, t);
			snprintf(name, sizeof(name), "truncated-before-%s-section", names[t]);
			/* UNWIND is optional: a file that ends before it is whole */
			if (t == BPROF_SECT_UNWIND)
				valid(g, "no-unwind-section", frame(&d, NULL));
			else if (t == BPROF_SECT_IMAGES)
				valid(g, "no-images-section", frame(&d, NULL));
			else if (t == BPROF_SECT_ACCESS)
				valid(g, "no-access-section", frame(&d, NULL));
			else if (t == BPROF_SECT_GENERATIONS)
				valid(g, "no-generations-section", frame(&d, NULL));
			else
				invalid(g, name, BPROF_E_TRUNCATED, frame(&d, NULL));
			d.len += 7;
			snprintf(name, sizeof(name), "truncated-in-%s-section-header", names[t]);
			invalid(g, name, BPROF_E_TRUNCATED, frame(&d, NULL));
			d.len += 9 + sect_len(&c, t) / 2;
			snprintf(name, sizeof(name), "truncated-in-%s-section-payload", names[t]);
			invalid(g, name, BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);

			d = bb_copy(&c);
			set_sect_len(&d, t, UINT64_MAX);
			snprintf(name, sizeof(name), "section-length-max-%s", names[t]);
			invalid(g, name, BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);

			d = bb_copy(&c);
			set_sect_len(&d, t, 0);
			snprintf(name, sizeof(name), "section-length-zero-%s", names[t]);
			/* a zero-length payload cannot hold even a table count;
			 * the following section header is then read as payload */
			invalid(g, name, BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
	}
	DAMAGED(d, &c)
	{
		/* length one past the end of the content */
		set_sect_len(&d, BPROF_SECT_GENERATIONS, sect_len(&c, BPROF_SECT_GENERATIONS) + 1);
		invalid(g, "section-length-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* one byte too long: the payload has an extra byte */
		size_t at = sect_at(&d, BPROF_SECT_LOSSES);

		bb_insert(&d, at + 16 + BPROF_LOSSES_LEN, "\0", 1);
		set_sect_len(&d, BPROF_SECT_LOSSES, BPROF_LOSSES_LEN + 1);
		invalid(g, "section-payload-extra-byte", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set_sect_len(&d, BPROF_SECT_LOSSES, BPROF_LOSSES_LEN - 1);
		invalid(g, "section-payload-short", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, sect_at(&d, BPROF_SECT_STACKS), 0);
		invalid(g, "section-type-zero", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, sect_at(&d, BPROF_SECT_STACKS) + 4, 1);
		invalid(g, "section-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t at = sect_at(&d, BPROF_SECT_LOSSES);

		bb_insert(&d, at, d.p + at, 16 + BPROF_LOSSES_LEN);
		invalid(g, "section-duplicated", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* COUNTS moved before STACKS */
		size_t st = sect_at(&d, BPROF_SECT_STACKS), co = sect_at(&d, BPROF_SECT_COUNTS);
		size_t clen = 16 + sect_len(&d, BPROF_SECT_COUNTS);
		struct bb tmp = { 0 };

		bb_put(&tmp, d.p + co, clen);
		bb_delete(&d, co, clen);
		bb_insert(&d, st, tmp.p, tmp.len);
		invalid(g, "section-out-of-order", BPROF_E_CORRUPT, frame(&d, NULL));
		free(tmp.p);
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t at = sect_at(&d, BPROF_SECT_OBJECTS);

		bb_delete(&d, at, 16 + sect_len(&d, BPROF_SECT_OBJECTS));
		invalid(g, "section-missing-objects", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}

	/* ---- invalid: META ---- */
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_META) + 36, 0x3 | 0x100);
		invalid(g, "meta-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* hostname "prod-host-1" -> "prod\0host-1" */
		d.p[payload(&d, BPROF_SECT_META) + 40 + 4 + 4] = 0;
		invalid(g, "string-contains-nul", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_META) + 40, 1000000);
		invalid(g, "string-length-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}

	/* ---- invalid: STACKS and COUNTS ---- */
	/* typical stacks sorted: id 0 (3 ips), id 2 (1 ip), id 7 (5 ips) */
	DAMAGED(d, &c)
	{
		set64(&d, payload(&d, BPROF_SECT_STACKS), UINT64_C(1000000000000));
		invalid(g, "stacks-claim-10e12-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_STACKS) + 8 + 4, 4000000);
		invalid(g, "stack-claims-4000000-ips", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* 65536 ips that are all there: above the depth limit */
		struct bb st = { 0 };
		uint8_t *zeros = calloc(65536, 8);

		bb_u64(&st, 1);
		bb_u32(&st, 0);
		bb_u32(&st, 65536);
		bb_put(&st, zeros, 65536 * 8);
		replace_payload(&d, BPROF_SECT_STACKS, &st);
		invalid(g, "stack-depth-above-limit", BPROF_E_LIMIT, frame(&d, NULL));
		free(zeros);
		free(st.p);
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_STACKS) + 8 + 4, 60000);
		invalid(g, "stack-ips-past-section-end", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_STACKS) + 8 + 32, 0); /* id 2 -> 0 */
		invalid(g, "duplicate-stack-ids", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_STACKS) + 8, 5); /* 5, 2, 7 */
		invalid(g, "unsorted-stack-ids", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* last stack (id 7) -> 0x80000000 */
		set32(&d, payload(&d, BPROF_SECT_STACKS) + 8 + 32 + 16, 0x80000000u);
		invalid(g, "stack-id-above-int32-max", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set64(&d, payload(&d, BPROF_SECT_COUNTS), UINT64_C(1000000000000));
		invalid(g, "count-claims-10e12-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set64(&d, payload(&d, BPROF_SECT_COUNTS), 8); /* 7 present */
		invalid(g, "counts-one-more-than-present", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_COUNTS) + 8 + 12, 3);
		invalid(g, "dangling-user-stack-id", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_COUNTS) + 8 + 56 + 16, 0x7fffffff);
		invalid(g, "dangling-kernel-stack-id", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* offset 20 is map_gen from 1.3: reserved in a 1.2 file */
		struct frame_opts o = { .minor = 2 };

		set32(&d, payload(&d, BPROF_SECT_COUNTS) + 8 + 20, 1);
		invalid(g, "count-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &o));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		memset(d.p + payload(&d, BPROF_SECT_COUNTS) + 8 + 40, 'x', 16);
		invalid(g, "comm-not-nul-terminated", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		d.p[payload(&d, BPROF_SECT_COUNTS) + 8 + 40 + 15] = 'x';
		invalid(g, "comm-padding-nonzero", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}

	/* ---- invalid: OBJECTS ---- */
	/* object 0: build-id 20 bytes, flags HAS_BUILD_ID; object 1: none */
	DAMAGED(d, &c)
	{
		set64(&d, payload(&d, BPROF_SECT_OBJECTS), UINT64_C(1000000000000));
		invalid(g, "objects-claim-10e12-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t o = payload(&d, BPROF_SECT_OBJECTS) + 8;

		/* 65 bytes: grow the build-id in place by 45 bytes */
		static const uint8_t more[45];

		set32(&d, o + 4, 65);
		bb_insert(&d, o + 48, more, sizeof(more));
		set_sect_len(&d, BPROF_SECT_OBJECTS, sect_len(&d, BPROF_SECT_OBJECTS) + 45);
		invalid(g, "build-id-too-long", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_OBJECTS) + 8 + 4, 0xffffffffu);
		invalid(g, "build-id-length-huge", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* object 0 claims 19 bytes of its 20: an odd length that leaves
		 * one build-id byte to be read as the path length */
		set32(&d, payload(&d, BPROF_SECT_OBJECTS) + 8 + 4, 19);
		invalid(g, "build-id-odd-length", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* length 0 but HAS_BUILD_ID: drop the 20 bytes */
		size_t o = payload(&d, BPROF_SECT_OBJECTS) + 8;

		set32(&d, o + 4, 0);
		bb_delete(&d, o + 48, 20);
		set_sect_len(&d, BPROF_SECT_OBJECTS, sect_len(&d, BPROF_SECT_OBJECTS) - 20);
		invalid(g, "build-id-flag-without-bytes", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_OBJECTS) + 8, 0);
		invalid(g, "build-id-bytes-without-flag", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_OBJECTS) + 8, 1 | 0x20);
		invalid(g, "object-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}

	/* ---- invalid: PROCESSES ---- */
	/* process 0: pid 100, 3 mappings; process 1: pid 101, none */
	DAMAGED(d, &c)
	{
		set64(&d, payload(&d, BPROF_SECT_PROCESSES), UINT64_C(1000000000000));
		invalid(g, "processes-claim-10e12-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_PROCESSES) + 8 + 12, 1000000);
		invalid(g, "mappings-claim-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t m = payload(&d, BPROF_SECT_PROCESSES) + 8 + 48;

		set64(&d, m, 0x430000); /* start 0x430000 > end 0x420000 */
		invalid(g, "mapping-start-after-end", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t m = payload(&d, BPROF_SECT_PROCESSES) + 8 + 48;

		set64(&d, m, 0x420000);
		invalid(g, "mapping-start-equals-end", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t m = payload(&d, BPROF_SECT_PROCESSES) + 8 + 48 + 32;

		set64(&d, m, 0x410000); /* mapping 1 starts inside mapping 0 */
		invalid(g, "mappings-overlap", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		size_t m = payload(&d, BPROF_SECT_PROCESSES) + 8 + 48 + 32;

		set64(&d, m, 0x100000); /* mapping 1 below mapping 0 */
		set64(&d, m + 8, 0x200000);
		invalid(g, "mappings-unsorted", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_PROCESSES) + 8 + 48 + 24, 2); /* 2 objects */
		invalid(g, "mapping-object-index-out-of-range", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_PROCESSES) + 8 + 48 + 28, 0x10);
		invalid(g, "mapping-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set64(&d, payload(&d, BPROF_SECT_PROCESSES) + 8 + 40, 1000000);
		invalid(g, "perf-map-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* process 0 pid 100 -> 102: then 101 follows 102 */
		set32(&d, payload(&d, BPROF_SECT_PROCESSES) + 8, 102);
		invalid(g, "processes-unsorted", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		/* process 1 becomes (100, 1) like process 0 */
		struct bprof_process *p0 = &typ->processes[0];
		size_t p1 = payload(&d, BPROF_SECT_PROCESSES) + 8 + 48 + 32 * 3 + p0->perf_map_len;

		set32(&d, p1, 100);
		set32(&d, p1 + 8, 1);
		invalid(g, "process-duplicated", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}

	/* ---- invalid: KERNEL and KSYMS ---- */
	/* kernel: flags, bid len 20, stext, bid, "6.1.0-18-amd64", 2 modules */
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_KERNEL), 0x4); /* bit 2: the lowest reserved bit */
		invalid(g, "kernel-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	DAMAGED(d, &c)
	{
		set32(&d, payload(&d, BPROF_SECT_KERNEL) + 4, 65);
		invalid(g, "kernel-build-id-too-long", BPROF_E_CORRUPT, frame(&d, NULL));
		free(d.p);
	}
	{
		size_t mods = 16 + 20 + 4 + strlen(typ->kernel.release);

		DAMAGED(d, &c)
		{
			set64(&d, payload(&d, BPROF_SECT_KERNEL) + mods, UINT64_C(1000000000000));
			invalid(g, "modules-claim-10e12-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, payload(&d, BPROF_SECT_KERNEL) + mods + 8 + 16, 200);
			invalid(g, "module-build-id-too-long", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, payload(&d, BPROF_SECT_KERNEL) + mods + 8 + 8, UINT64_MAX);
			invalid(g, "module-base-plus-size-overflows", BPROF_E_CORRUPT,
				frame(&d, NULL));
			free(d.p);
		}
	}
	{
		/* KSYMS payloads built from scratch */
		struct bb k = { 0 };

		DAMAGED(d, &c)
		{
			bb_u64(&k, UINT64_C(1000000000000));
			bb_put(&k, "\0\0\0\0\0\0", 6);
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksyms-claim-10e12-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			k.len = 0;
			bb_u64(&k, 2);
			bb_uleb(&k, UINT64_MAX);
			bb_uleb(&k, 1);
			bb_put(&k, "\0\0a\0b", 6);
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksym-address-overflows", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			k.len = 0;
			bb_u64(&k, 1);
			bb_put(&k, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11);
			bb_put(&k, "\0a", 3);
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksym-varint-too-long", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			k.len = 0;
			bb_u64(&k, 1);
			bb_put(&k, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", 10);
			bb_put(&k, "\0a", 3);
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksym-varint-overflows-64-bits", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			k.len = 0;
			bb_u64(&k, 1);
			bb_uleb(&k, 0x1000);
			bb_uleb(&k, 3); /* 2 modules: 3 means index 2 */
			bb_put(&k, "a", 2);
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksym-module-out-of-range", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			k.len = 0;
			bb_u64(&k, 2);
			bb_uleb(&k, 0x1000);
			bb_uleb(&k, 0x10);
			bb_uleb(&k, 0);
			bb_uleb(&k, 0);
			bb_put(&k, "first\0second", 12); /* no final NUL */
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksym-name-unterminated", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			k.len = 0;
			bb_u64(&k, 1);
			bb_uleb(&k, 0x1000);
			replace_payload(&d, BPROF_SECT_KSYMS, &k);
			invalid(g, "ksym-module-column-missing", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		free(k.p);
	}

	/* ---- UNWIND (1.1) ----
	 * typical's payload: mode (0), flags (4), nr_counters = 34 (8),
	 * counters (16..288), nr_stack_flags = 2 (288), entries for stacks
	 * 0x40000005 (296) and 0x60000003 (304); from 1.3 nr_misses = 2
	 * (312), misses of objects 0 (320) and 1 (336). */
	{
		size_t u = payload(&c, BPROF_SECT_UNWIND);
		size_t ent = u + 16 + 8 * BPROF_UNW_NR_COUNTERS + 8;
		size_t mis = ent + 16 + 8;

		DAMAGED(d, &c)
		{
			set32(&d, mis + 16, 2);
			invalid(g, "unwind-miss-object-out-of-range", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, mis, 1);
			set32(&d, mis + 16, 0);
			invalid(g, "unwind-misses-unsorted", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, mis + 16, 0);
			invalid(g, "unwind-misses-duplicated", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, mis + 4, 0x3);
			invalid(g, "unwind-miss-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, mis + 8, 0);
			invalid(g, "unwind-miss-zero-rows", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, mis - 8, 3);
			invalid(g, "unwind-misses-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* a 1.3 UNWIND section that ends after the stack flags */
			bb_delete(&d, mis - 8, 8 + 2 * 16);
			set_sect_len(&d, BPROF_SECT_UNWIND, sect_len(&d, BPROF_SECT_UNWIND) - 40);
			invalid(g, "unwind-misses-missing", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}

		DAMAGED(d, &c)
		{
			set32(&d, u, 0);
			invalid(g, "unwind-mode-zero", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, u, 4);
			invalid(g, "unwind-mode-undefined", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, u + 4, 0x3);
			invalid(g, "unwind-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, u + 8, 257);
			invalid(g, "unwind-counters-above-limit", BPROF_E_LIMIT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, u + 8, 200);
			invalid(g, "unwind-counters-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, ent - 8, UINT64_C(1000000000000));
			invalid(g, "unwind-stack-flags-claim-10e12", BPROF_E_TRUNCATED,
				frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ent, 0x40000009);
			invalid(g, "unwind-stack-flags-dangling", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ent, 0x60000003);
			set32(&d, ent + 8, 0x40000005);
			invalid(g, "unwind-stack-flags-unsorted", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ent + 8, 0x40000005);
			invalid(g, "unwind-stack-flags-duplicated", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ent, 7); /* a frame-pointer stack has no unwinder flags */
			invalid(g, "unwind-stack-flags-below-2-30", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ent + 4, 0x10);
			invalid(g, "unwind-stack-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* UNWIND moved before KSYMS */
			size_t at = sect_at(&d, BPROF_SECT_UNWIND), ks = sect_at(&d, BPROF_SECT_KSYMS);
			size_t ulen = 16 + sect_len(&d, BPROF_SECT_UNWIND);
			struct bb tmp = { 0 };

			bb_put(&tmp, d.p + at, ulen);
			bb_delete(&d, at, ulen);
			bb_insert(&d, ks, tmp.p, tmp.len);
			invalid(g, "unwind-before-ksyms", BPROF_E_CORRUPT, frame(&d, NULL));
			free(tmp.p);
			free(d.p);
		}
		invalid_duplicated(g, "unwind-duplicated", &c, BPROF_SECT_UNWIND, NULL);
		DAMAGED(d, &c)
		{
			/* a newer writer's extra counters are ignored */
			uint8_t extra[16] = { 1, 2, 3 };

			bb_insert(&d, ent - 8, extra, sizeof(extra));
			set64(&d, u + 8, BPROF_UNW_NR_COUNTERS + 2);
			set_sect_len(&d, BPROF_SECT_UNWIND, sect_len(&d, BPROF_SECT_UNWIND) + 16);
			valid(g, "unwind-more-counters", frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* and counters a file lacks read as 0 */
			bb_delete(&d, u + 16 + 8 * 20, 8 * (BPROF_UNW_NR_COUNTERS - 20));
			set64(&d, u + 8, 20);
			set_sect_len(&d, BPROF_SECT_UNWIND,
				     sect_len(&d, BPROF_SECT_UNWIND) - 8 * (BPROF_UNW_NR_COUNTERS - 20));
			valid(g, "unwind-fewer-counters", frame(&d, NULL));
			free(d.p);
		}
	}
	DAMAGED(d, &c)
	{
		/* optional sections are independent: IMAGES right after KSYMS */
		size_t at = sect_at(&d, BPROF_SECT_UNWIND);

		bb_delete(&d, at, 16 + sect_len(&d, BPROF_SECT_UNWIND));
		valid(g, "images-without-unwind", frame(&d, NULL));
		free(d.p);
	}
	/* ---- IMAGES (1.1) ----
	 * typical's payload: nr_images = 1 (0), object_index = 1 (8),
	 * reserved (12), len = 32 (16), 32 bytes (24). */
	{
		size_t im = payload(&c, BPROF_SECT_IMAGES);

		DAMAGED(d, &c)
		{
			set32(&d, im + 8, 2);
			invalid(g, "image-object-out-of-range", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, im + 12, 1);
			invalid(g, "image-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, im + 16, 0);
			invalid(g, "image-empty", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, im + 16, (1u << 20) + 1);
			invalid(g, "image-above-limit", BPROF_E_LIMIT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, im + 16, 33);
			invalid(g, "image-past-section-end", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* the same object's image twice */
			struct bb e = { 0 };

			bb_put(&e, d.p + im + 8, 16 + 32);
			bb_insert(&d, im + 8 + 16 + 32, e.p, e.len);
			set64(&d, im, 2);
			set_sect_len(&d, BPROF_SECT_IMAGES, sect_len(&d, BPROF_SECT_IMAGES) + e.len);
			invalid(g, "image-duplicated", BPROF_E_CORRUPT, frame(&d, NULL));
			free(e.p);
			free(d.p);
		}
	}
	/* ---- ACCESS (1.2) ----
	 * typical's payload: euid 1000 (0), flags KALLSYMS (4), capabilities
	 * CAP_PERFMON|CAP_BPF (8), nr_counters = 4 (16), counters 40, 2, 3,
	 * 12 (24..56). */
	{
		size_t a = payload(&c, BPROF_SECT_ACCESS);

		DAMAGED(d, &c)
		{
			set32(&d, a + 4, BPROF_ACCESS_KALLSYMS | 0x20); /* bit 5: the lowest reserved */
			invalid(g, "access-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, a + 16, 257);
			invalid(g, "access-counters-above-limit", BPROF_E_LIMIT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, a + 16, BPROF_ACC_NR_COUNTERS + 1); /* one more than present */
			invalid(g, "access-counters-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, a + 16, UINT64_MAX / 8 + 1); /* n * 8 wraps to 0 */
			invalid(g, "access-counters-wrap", BPROF_E_LIMIT, frame(&d, NULL));
			free(d.p);
		}
		/* the header cut after the capabilities: no counter count */
		invalid_header_cut(g, "access-header-short", &c, BPROF_SECT_ACCESS, 16, NULL);
		invalid_duplicated(g, "access-duplicated", &c, BPROF_SECT_ACCESS, NULL);
		DAMAGED(d, &c)
		{
			/* ACCESS moved before IMAGES */
			size_t at = sect_at(&d, BPROF_SECT_ACCESS), im = sect_at(&d, BPROF_SECT_IMAGES);
			size_t alen = 16 + sect_len(&d, BPROF_SECT_ACCESS);
			struct bb tmp = { 0 };

			bb_put(&tmp, d.p + at, alen);
			bb_delete(&d, at, alen);
			bb_insert(&d, im, tmp.p, tmp.len);
			invalid(g, "access-before-images", BPROF_E_CORRUPT, frame(&d, NULL));
			free(tmp.p);
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* ACCESS moved before KSYMS: a required section follows it */
			size_t at = sect_at(&d, BPROF_SECT_ACCESS), ks = sect_at(&d, BPROF_SECT_KSYMS);
			size_t alen = 16 + sect_len(&d, BPROF_SECT_ACCESS);
			struct bb tmp = { 0 };

			bb_put(&tmp, d.p + at, alen);
			bb_delete(&d, at, alen);
			bb_insert(&d, ks, tmp.p, tmp.len);
			invalid(g, "access-before-ksyms", BPROF_E_CORRUPT, frame(&d, NULL));
			free(tmp.p);
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* a newer writer's extra counters are ignored */
			uint8_t extra[16] = { 1, 2, 3 };

			bb_insert(&d, a + 24 + 8 * BPROF_ACC_NR_COUNTERS, extra, sizeof(extra));
			set64(&d, a + 16, BPROF_ACC_NR_COUNTERS + 2);
			set_sect_len(&d, BPROF_SECT_ACCESS, sect_len(&d, BPROF_SECT_ACCESS) + 16);
			valid(g, "access-more-counters", frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* and counters a file lacks read as 0: only objects_by_path */
			bb_delete(&d, a + 24 + 8, 8 * (BPROF_ACC_NR_COUNTERS - 1));
			set64(&d, a + 16, 1);
			set_sect_len(&d, BPROF_SECT_ACCESS,
				     sect_len(&d, BPROF_SECT_ACCESS) - 8 * (BPROF_ACC_NR_COUNTERS - 1));
			valid(g, "access-fewer-counters", frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* no counters at all, and every capability bit set (later
			 * kernels' capabilities are not errors) */
			bb_delete(&d, a + 24, 8 * BPROF_ACC_NR_COUNTERS);
			set64(&d, a + 8, UINT64_MAX);
			set64(&d, a + 16, 0);
			set_sect_len(&d, BPROF_SECT_ACCESS, 24);
			valid(g, "access-no-counters-all-capabilities", frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			/* optional sections are independent: ACCESS right after KSYMS */
			size_t at = sect_at(&d, BPROF_SECT_UNWIND);

			bb_delete(&d, at, 16 + sect_len(&d, BPROF_SECT_UNWIND));
			at = sect_at(&d, BPROF_SECT_IMAGES);
			bb_delete(&d, at, 16 + sect_len(&d, BPROF_SECT_IMAGES));
			valid(g, "access-after-ksyms", frame(&d, NULL));
			free(d.p);
		}
	}
	/* ---- GENERATIONS (1.3) ----
	 * typical's payload: nr_entries = 1 (0); the entry of process 0
	 * (worker): process_index 0 (8), nr_births 3 (12), nr_history 2 (16),
	 * nr_gaps 1 (20), reserved (24), births 0 2 3 (32..44), two history
	 * entries of 40 bytes (44, 84), gap 4 (124). */
	{
		size_t ge = payload(&c, BPROF_SECT_GENERATIONS);

		DAMAGED(d, &c)
		{
			set32(&d, ge + 8, 2); /* two processes */
			invalid(g, "generations-process-out-of-range", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ge + 12, 2);
			invalid(g, "generations-births-not-mappings", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, ge + 24, 1);
			invalid(g, "generations-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, ge + 44 + 8, 0x7f0000000000ull); /* end = start */
			invalid(g, "generations-history-empty", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ge + 44 + 24, 9);
			invalid(g, "generations-history-object-out-of-range", BPROF_E_CORRUPT,
				frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ge + 44 + 28, BPROF_MAP_READ | 0x10);
			invalid(g, "generations-history-flags-reserved", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ge + 124, 0);
			invalid(g, "generations-gap-zero", BPROF_E_CORRUPT, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set32(&d, ge + 16, 3);
			invalid(g, "generations-history-past-end", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		DAMAGED(d, &c)
		{
			set64(&d, ge, UINT64_C(1) << 40);
			invalid(g, "generations-claim-2e40-entries", BPROF_E_TRUNCATED, frame(&d, NULL));
			free(d.p);
		}
		invalid_duplicated(g, "generations-duplicated", &c, BPROF_SECT_GENERATIONS, NULL);
	}
	/* ---- OFFCPU (1.5) ---- */
	{
		struct bprof_recording *o = fx_offcpu();
		struct bb oc = content_of(o);
		struct frame_opts m4 = { .minor = BPROF_FORMAT_MINOR_NO_SLICES };
		size_t op = payload(&oc, BPROF_SECT_OFFCPU), row = op + BPROF_OFFCPU_FIXED_LEN;

		valid(g, "offcpu", frame(&oc, &m4));
		DAMAGED(d, &oc)
		{
			set32(&d, op, 0);
			invalid(g, "offcpu-mode-zero", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set32(&d, op, 3);
			invalid(g, "offcpu-mode-unknown", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set32(&d, op + 4, 1);
			invalid(g, "offcpu-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set64(&d, op + 8, 0);
			invalid(g, "offcpu-period-zero", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set32(&d, row + 56, 0);
			invalid(g, "offcpu-state-on-cpu", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set32(&d, row + 56, BPROF_STATE_MAX + 1);
			invalid(g, "offcpu-state-unknown", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set32(&d, row + 60, 1);
			invalid(g, "offcpu-row-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set32(&d, row + 12, 0x7ffffff0);
			invalid(g, "offcpu-dangling-stack", BPROF_E_CORRUPT, frame(&d, &m4));
			free(d.p);
		}
		DAMAGED(d, &oc)
		{
			set64(&d, op + 64, UINT64_C(1) << 40);
			invalid(g, "offcpu-claim-2e40-rows", BPROF_E_TRUNCATED, frame(&d, &m4));
			free(d.p);
		}
		invalid_header_cut(g, "offcpu-header-truncated", &oc, BPROF_SECT_OFFCPU, 40, &m4);
		invalid_duplicated(g, "offcpu-duplicated", &oc, BPROF_SECT_OFFCPU, &m4);
		free(oc.p);
		bprof_recording_free(o);
	}
	/* ---- SLICES (1.6) ---- */
	{
		struct bprof_recording *o = fx_slices();
		struct bb sc = content_of(o);
		struct frame_opts m6 = { .minor = BPROF_FORMAT_MINOR_NO_PYTHON };
		size_t sp = payload(&sc, BPROF_SECT_SLICES);

		valid(g, "slices", frame(&sc, &m6));
		DAMAGED(d, &sc)
		{
			set64(&d, sp, 0);
			invalid(g, "slices-length-zero", BPROF_E_CORRUPT, frame(&d, &m6));
			free(d.p);
		}
		DAMAGED(d, &sc)
		{
			set64(&d, sp + 16, o->nr_counts - 1);
			set_sect_len(&d, BPROF_SECT_SLICES, sect_len(&d, BPROF_SECT_SLICES) - 4);
			d.len -= 4;
			invalid(g, "slices-fewer-than-rows", BPROF_E_CORRUPT, frame(&d, &m6));
			free(d.p);
		}
		DAMAGED(d, &sc)
		{
			set64(&d, sp + 16, UINT64_C(1) << 40);
			invalid(g, "slices-claim-2e40-rows", BPROF_E_TRUNCATED, frame(&d, &m6));
			free(d.p);
		}
		invalid_header_cut(g, "slices-header-truncated", &sc, BPROF_SECT_SLICES, 12, &m6);
		invalid_duplicated(g, "slices-duplicated", &sc, BPROF_SECT_SLICES, &m6);
		DAMAGED(d, &sc)
		{
			/* SLICES moved before OFFCPU, whose rows it indexes */
			size_t at = sect_at(&d, BPROF_SECT_SLICES), n = 16 + sect_len(&d, BPROF_SECT_SLICES);
			size_t oat = sect_at(&d, BPROF_SECT_OFFCPU);
			struct bb moved = bb_copy(&d);

			moved.len = oat;
			bb_put(&moved, d.p + at, n);
			bb_put(&moved, d.p + oat, at - oat);
			invalid(g, "slices-before-offcpu", BPROF_E_CORRUPT, frame(&moved, &m6));
			free(moved.p);
			free(d.p);
		}
		free(sc.p);
		bprof_recording_free(o);
	}
	/* ---- PYTHON (1.7) ---- */
	{
		struct bprof_recording *o = fx_python();
		struct bb pc = content_of(o);
		struct frame_opts m7 = { .minor = BPROF_FORMAT_MINOR_NO_JIT };
		size_t pp = payload(&pc, BPROF_SECT_PYTHON);
		size_t procs = pp + 8 + 8 * BPROF_PY_NR_COUNTERS; /* nr_procs */
		size_t codes = procs + 8 + 2 * BPROF_PY_PROC_LEN; /* nr_codes */
		size_t code0 = codes + 8;

		valid(g, "python", frame(&pc, &m7));
		DAMAGED(d, &pc)
		{
			set32(&d, pp, 257);
			invalid(g, "python-257-counters", BPROF_E_LIMIT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, pp + 4, 1);
			invalid(g, "python-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, procs + 8 + 12, BPROF_PY_STATUS_MAX + 1);
			invalid(g, "python-status-unknown", BPROF_E_CORRUPT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, procs + 8 + BPROF_PY_PROC_LEN, 100); /* pid 200 -> 100 */
			invalid(g, "python-procs-out-of-order", BPROF_E_CORRUPT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set64(&d, codes, UINT64_C(1) << 40);
			invalid(g, "python-claim-2e40-codes", BPROF_E_TRUNCATED, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, code0 + 32, BPROF_PY_NAME_MAX + 1);
			invalid(g, "python-qualname-too-long", BPROF_E_LIMIT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, code0 + 40, BPROF_PY_LINETABLE_MAX + 1);
			invalid(g, "python-linetable-too-long", BPROF_E_LIMIT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, code0 + 40, 1000); /* more than remains */
			invalid(g, "python-linetable-truncated", BPROF_E_TRUNCATED, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			d.p[code0 + BPROF_PY_CODE_FIXED_LEN + 1] = 0; /* "inner" -> "i\0ner" */
			invalid(g, "python-name-nul", BPROF_E_CORRUPT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set32(&d, code0 + 44, 1);
			invalid(g, "python-code-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m7));
			free(d.p);
		}
		DAMAGED(d, &pc)
		{
			set64(&d, code0 + 8, 0x7f0000009000ull); /* above the second code's */
			invalid(g, "python-codes-out-of-order", BPROF_E_CORRUPT, frame(&d, &m7));
			free(d.p);
		}
		invalid_duplicated(g, "python-duplicated", &pc, BPROF_SECT_PYTHON, &m7);
		free(pc.p);
		bprof_recording_free(o);
	}
	/* ---- JIT (1.8) ---- */
	{
		struct bprof_recording *o = fx_jit();
		struct bb jc = content_of(o);
		struct frame_opts m8 = { .minor = BPROF_FORMAT_MINOR_NO_V8 };
		size_t jp = payload(&jc, BPROF_SECT_JIT);
		size_t dumps = jp + 16 + 8 * BPROF_JIT_NR_COUNTERS; /* nr_jitdumps */
		size_t d0 = dumps + 8;

		valid(g, "jit", frame(&jc, &m8));
		DAMAGED(d, &jc)
		{
			set32(&d, jp + 8, 257);
			invalid(g, "jit-257-counters", BPROF_E_LIMIT, frame(&d, &m8));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, jp + 12, 1);
			invalid(g, "jit-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m8));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set64(&d, dumps, UINT64_C(1) << 40);
			invalid(g, "jit-claim-2e40-jitdumps", BPROF_E_TRUNCATED, frame(&d, &m8));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set64(&d, d0 + 8, UINT64_C(1) << 40);
			invalid(g, "jit-jitdump-past-end", BPROF_E_TRUNCATED, frame(&d, &m8));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, d0, 300); /* pid 100 -> 300, after the second's 200 */
			invalid(g, "jit-jitdumps-out-of-order", BPROF_E_CORRUPT, frame(&d, &m8));
			free(d.p);
		}
		invalid_duplicated(g, "jit-duplicated", &jc, BPROF_SECT_JIT, &m8);
		free(jc.p);
		bprof_recording_free(o);
	}
	/* ---- V8 (1.9) ---- */
	{
		struct bprof_recording *o = fx_v8();
		struct bb vc = content_of(o);
		struct frame_opts m9 = { .minor = BPROF_FORMAT_MINOR_NO_RT_LACKS };
		size_t vp = payload(&vc, BPROF_SECT_V8);
		size_t procs = vp + 8 + 8 * FX_V8_COUNTERS; /* nr_procs */
		size_t sfis = procs + 8 + 2 * 16;                 /* nr_sfis */
		size_t s0 = sfis + 8;

		valid(g, "v8", frame(&vc, &m9));
		DAMAGED(d, &vc)
		{
			set32(&d, vp, 257);
			invalid(g, "v8-257-counters", BPROF_E_LIMIT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set32(&d, vp + 4, 1);
			invalid(g, "v8-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set32(&d, procs + 8 + 8, 2); /* the first process's status */
			invalid(g, "v8-status-unknown", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set64(&d, sfis, UINT64_C(1) << 40);
			invalid(g, "v8-claim-2e40-sfis", BPROF_E_TRUNCATED, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set64(&d, s0 + 8, 0x3f0000009001ull); /* above the second SFI's */
			invalid(g, "v8-sfis-out-of-order", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set32(&d, s0 + 20, 0xffffffffu);
			invalid(g, "v8-negative-line", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set32(&d, s0 + 24, 5000);
			invalid(g, "v8-name-above-limit", BPROF_E_LIMIT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &vc)
		{
			set32(&d, s0 + 24, 200); /* past the section's end */
			invalid(g, "v8-name-past-end", BPROF_E_TRUNCATED, frame(&d, &m9));
			free(d.p);
		}
		{
			/* the second SFI: after the first's 40 + 4 + 11 bytes */
			size_t s1 = s0 + 40 + 4 + 11, r0 = s1 + 40, r1 = r0 + 8 + 12;

			DAMAGED(d, &vc)
			{
				set32(&d, s1 + 36, 1);
				invalid(g, "v8-sfi-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m9));
				free(d.p);
			}
			DAMAGED(d, &vc)
			{
				set32(&d, r1, 0); /* the second row at the first's offset */
				invalid(g, "v8-rows-out-of-order", BPROF_E_CORRUPT, frame(&d, &m9));
				free(d.p);
			}
			DAMAGED(d, &vc)
			{
				set32(&d, r0 + 4, 0);
				invalid(g, "v8-row-without-frames", BPROF_E_LIMIT, frame(&d, &m9));
				free(d.p);
			}
			DAMAGED(d, &vc)
			{
				set32(&d, s1 + 32, 70000);
				invalid(g, "v8-rows-above-limit", BPROF_E_LIMIT, frame(&d, &m9));
				free(d.p);
			}
			DAMAGED(d, &vc)
			{
				set32(&d, r0 + 8, 0xffffffffu);
				invalid(g, "v8-frame-negative-line", BPROF_E_CORRUPT, frame(&d, &m9));
				free(d.p);
			}
		}
		invalid_duplicated(g, "v8-duplicated", &vc, BPROF_SECT_V8, &m9);
		free(vc.p);
		bprof_recording_free(o);
	}
	/* ---- JVM (1.9) ---- */
	{
		struct bprof_recording *o = fx_jvm();
		struct bb jc = content_of(o);
		struct frame_opts m9 = { .minor = BPROF_FORMAT_MINOR_NO_RT_LACKS };
		size_t jp = payload(&jc, BPROF_SECT_JVM);
		size_t p0 = jp + 8 + 8 * 12 + 8;      /* the first process entry */
		size_t p1 = p0 + 16 + 9;              /* after "17.0.15+6" */
		size_t f0 = p1 + 16 + 8;              /* the first frame (app.Main.run) */

		valid(g, "jvm", frame(&jc, &m9));
		DAMAGED(d, &jc)
		{
			set32(&d, jp, 257);
			invalid(g, "jvm-257-counters", BPROF_E_LIMIT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, jp + 4, 1);
			invalid(g, "jvm-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, p0 + 8, 4);
			invalid(g, "jvm-status-4", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, f0 + 20, 0);
			invalid(g, "jvm-frame-type-0", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, f0, 300); /* pid 100 -> 300, before the next frame's 100 */
			invalid(g, "jvm-frames-out-of-order", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, f0 + 28, 4097);
			invalid(g, "jvm-class-name-too-long", BPROF_E_LIMIT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			d.p[f0 + 56 + 3] = 0; /* "app\0Main" */
			invalid(g, "jvm-class-name-nul", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, f0 + 44, 65537);
			invalid(g, "jvm-line-table-too-long", BPROF_E_LIMIT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set32(&d, f0 + 52, 1);
			invalid(g, "jvm-frame-reserved-nonzero", BPROF_E_CORRUPT, frame(&d, &m9));
			free(d.p);
		}
		DAMAGED(d, &jc)
		{
			set64(&d, p1 + 16, UINT64_C(1) << 40);
			invalid(g, "jvm-claim-2e40-frames", BPROF_E_TRUNCATED, frame(&d, &m9));
			free(d.p);
		}
		invalid_duplicated(g, "jvm-duplicated", &jc, BPROF_SECT_JVM, &m9);
		free(jc.p);
		bprof_recording_free(o);
	}
	(void)bb_str;

	free(c.p);
	bprof_recording_free(typ);
	fclose(g->expected);
	if (g->failures)
		fprintf(stderr, "gen_golden: %d files did not read as expected\n", g->failures);
	return g->failures ? 1 : 0;
}
