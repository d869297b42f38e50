/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cache.c - the persistent symbol cache (libsym/CACHE.md): answers from a
 * cache file are exactly the answers computed without one, for the same
 * files, options and code; a run that finds other files (debuginfo now
 * present, or now missing) never sees another key's answers; dwz and split
 * DWARF are never cached; damaged files are refused whole, with a warning,
 * and rebuilt; the size bound evicts; concurrent writers never expose half
 * a file.
 */
#include <dirent.h>
#include <sys/wait.h>

#include "helpers.h"
#include "bsym_internal.h" /* bsym_cache_parse, for the damaged-file tests */

static char cdir[64];

/* fx() returns one of 8 rotating buffers, too few for a test that keeps
 * paths while making others: 64 of our own */
static const char *fxs(const char *rel)
{
	static char bufs[64][PATH_MAX];
	static unsigned k;
	char *p = bufs[k++ % 64];
	snprintf(p, PATH_MAX, "%s", fx(rel));
	return p;
}

static void mk_cdir(void)
{
	elf_version(EV_CURRENT); /* fx_vaddr_to_off's libelf */
	snprintf(cdir, sizeof(cdir), "/tmp/bsym-cache-test-XXXXXX");
	cr_assert(mkdtemp(cdir));
}

static void rm_cdir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cdir);
	cr_assert_eq(system(cmd), 0);
}

struct logbuf {
	char text[8192];
	int warnings;
};

static void log_cb(void *arg, enum bsym_log_level level, const char *msg)
{
	struct logbuf *l = arg;
	if (level != BSYM_LOG_WARN)
		return;
	l->warnings++;
	size_t n = strlen(l->text);
	snprintf(l->text + n, sizeof(l->text) - n, "%s\n", msg);
}

/* cache: NULL for none */
static struct bsym_ctx *mkctx(const char *debug_dir, unsigned flags, const char *cache,
			      uint64_t max_bytes, struct logbuf *log)
{
	const char *dirs[] = { debug_dir };
	struct bsym_opts o = {
		.sz = sizeof(o),
		.debug_dirs = debug_dir ? dirs : NULL,
		.nr_debug_dirs = debug_dir ? 1 : 0,
		.flags = flags | BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD,
		.log = log ? log_cb : NULL,
		.log_arg = log,
		.cache_dir = cache,
		.cache_max_bytes = max_bytes,
	};
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	return ctx;
}

static uint32_t reg(struct bsym_ctx *ctx, const char *path, const char *bid_of)
{
	struct fx_bid b = fx_build_id(bid_of);
	struct bsym_object_desc d = {
		.sz = sizeof(d),
		.path = path,
		.build_id = b.b,
		.build_id_len = b.n,
	};
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	return id;
}

/* File offsets of every byte of some functions of prog.c (and of the
 * bytes between them: padding, no symbol). */
static int prog_offsets(const char *bin, uint64_t *out, int max)
{
	static const char *fns[] = { "outer", "work", "helper_static", "main" };
	int n = 0;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t sz, a = fx_sym(bin, fns[i], &sz);
		uint64_t off = fx_vaddr_to_off(bin, a);
		for (uint64_t k = 0; k < sz + 8 && n < max; k++)
			out[n++] = off + k;
	}
	return n;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void expect_same(const struct bsym_result *a, const struct bsym_result *b, uint64_t off)
{
	cr_assert_eq(a->reason, b->reason, "offset 0x%" PRIx64 ": reason %d vs %d", off, a->reason,
		     b->reason);
	cr_assert_eq(a->nr_frames, b->nr_frames, "offset 0x%" PRIx64 ": frames", off);
	for (unsigned i = 0; i < a->nr_frames; i++) {
		const struct bsym_frame *x = &a->frames[i], *y = &b->frames[i];
		cr_assert(str_eq(x->name, y->name), "0x%" PRIx64 " #%u: %s vs %s", off, i, x->name,
			  y->name);
		cr_assert(str_eq(x->raw_name, y->raw_name), "0x%" PRIx64 " #%u raw", off, i);
		cr_assert(str_eq(x->file, y->file), "0x%" PRIx64 " #%u: file %s vs %s", off, i,
			  x->file ? x->file : "-", y->file ? y->file : "-");
		cr_assert_eq(x->line, y->line, "0x%" PRIx64 " #%u line", off, i);
		cr_assert_eq(x->column, y->column);
		cr_assert_eq(x->offset, y->offset);
		cr_assert_eq(x->inlined, y->inlined);
		cr_assert_eq(x->kind, y->kind);
	}
}

/* Symbolize offs[0..n) (and their fp states) in a context with and one
 * without the cache; every answer must be the same.  Returns the cached
 * context's counters after a save. */
static struct bsym_cache_stats run_compare(const char *debug_dir, const char *path,
					   const char *bid_of, unsigned flags, const uint64_t *offs,
					   int n, struct logbuf *log)
{
	struct bsym_ctx *with = mkctx(debug_dir, flags, cdir, 0, log);
	struct bsym_ctx *without = mkctx(debug_dir, flags, NULL, 0, NULL);
	uint32_t a = reg(with, path, bid_of), b = reg(without, path, bid_of);
	int named = 0;

	for (int i = 0; i < n; i++) {
		const struct bsym_result *x, *y;
		enum bsym_fp_state fx_, fy;
		cr_assert_eq(bsym_symbolize_offset(with, a, offs[i], &x), 0);
		cr_assert_eq(bsym_symbolize_offset(without, b, offs[i], &y), 0);
		expect_same(x, y, offs[i]);
		named += x->reason == BSYM_OK;
		cr_assert_eq(bsym_fp_state(with, a, offs[i], &fx_), 0);
		cr_assert_eq(bsym_fp_state(without, b, offs[i], &fy), 0);
		cr_assert_eq(fx_, fy, "fp state at 0x%" PRIx64, offs[i]);
	}
	struct bsym_object_info ia, ib;
	cr_assert_eq(bsym_object_info(with, a, &ia), 0);
	cr_assert_eq(bsym_object_info(without, b, &ib), 0);
	cr_assert_eq(ia.status, ib.status);
	cr_assert_eq(ia.has_dwarf, ib.has_dwarf);
	cr_assert_eq(ia.has_symtab, ib.has_symtab);
	cr_assert(str_eq(ia.elf_path, ib.elf_path));
	cr_assert(str_eq(ia.debug_path, ib.debug_path), "%s vs %s", ia.debug_path, ib.debug_path);
	cr_assert_eq(bsym_cache_save(with), 0);
	struct bsym_cache_stats st;
	bsym_cache_get_stats(with, &st);
	cr_log_info("%d of %d named; loaded %" PRIu64 " files, read %" PRIu64 " objects, saved %" PRIu64,
		    named, n, st.files_loaded, st.objects_read, st.files_saved);
	bsym_destroy(with);
	bsym_destroy(without);
	return st;
}

static int count_files(const char *suffix)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "find '%s' -type f -name '*%s' | wc -l", cdir, suffix);
	FILE *f = popen(cmd, "r");
	int n = -1;
	cr_assert(f && fscanf(f, "%d", &n) == 1);
	pclose(f);
	return n;
}

/* The one cache file there is (asserts there is exactly one). */
static void the_file(char *out, size_t len)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "find '%s' -type f -name '*.bsc'", cdir);
	FILE *f = popen(cmd, "r");
	cr_assert(f && fgets(out, (int)len, f), "no cache file");
	out[strcspn(out, "\n")] = 0;
	char extra[512];
	cr_assert(!fgets(extra, sizeof(extra), f), "more than one cache file");
	pclose(f);
}

TestSuite(cache, .init = mk_cdir, .fini = rm_cdir, .timeout = 120);

Test(cache, warm_answers_equal_cold_and_read_no_dwarf)
{
	uint64_t offs[4096];
	const char *bin = fxs("prog-gcc");
	int n = prog_offsets(bin, offs, 4096);

	/* the stripped binary plus a build-id tree: the common layout */
	struct bsym_cache_stats cold =
		run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(cold.files_loaded, 0);
	cr_assert_eq(cold.objects_read, 1);
	cr_assert_eq(cold.files_saved, 1);
	struct bsym_cache_stats warm =
		run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(warm.files_loaded, 1);
	cr_assert_eq(warm.objects_read, 0, "a warm run must not read the DWARF");
	cr_assert_eq(warm.files_saved, 0, "nothing new: nothing written");
	cr_assert_geq(warm.entries_loaded, (uint64_t)n / 2);

	/* a later run that asks for more offsets adds them */
	uint64_t more[16];
	for (int i = 0; i < 16; i++)
		more[i] = offs[0] + 0x100000 + (uint64_t)i; /* past the segments: BSYM_R_INVALID */
	struct bsym_cache_stats add =
		run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, more, 16, NULL);
	cr_assert_eq(add.objects_read, 1);
	cr_assert_eq(add.files_saved, 1);
	warm = run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(warm.objects_read, 0, "the old answers survived the rewrite");
	cr_assert_eq(count_files(".bsc"), 1);
	cr_assert_eq(count_files(""), 1, "no temporary file left behind");
}

Test(cache, clang_and_cxx_answers_equal_cold)
{
	uint64_t offs[4096];
	const char *bins[] = { "prog-clang", "cxx-g++", "cxx-clang++", "libfix.so" };
	for (size_t b = 0; b < sizeof(bins) / sizeof(bins[0]); b++) {
		const char *bin = fxs(bins[b]);
		/* every byte of the first 4 KiB of .text-ish offsets around main or
		 * the library's functions: whatever is there, the same answers */
		uint64_t base = fx_vaddr_to_off(bin, fx_sym(bin, b == 3 ? "lib_alpha" : "main", NULL));
		int n = 0;
		for (uint64_t k = 0; k < 2048; k++)
			offs[n++] = base > 1024 ? base - 1024 + k : k;
		for (int pass = 0; pass < 2; pass++) {
			struct bsym_cache_stats st = run_compare(NULL, bin, bin, 0, offs, n, NULL);
			cr_assert_eq(st.objects_read, pass == 0 ? 1 : 0, "%s pass %d", bins[b], pass);
		}
		for (int pass = 0; pass < 2; pass++) {
			struct bsym_cache_stats st =
				run_compare(NULL, bin, bin, BSYM_NO_DEMANGLE, offs, n, NULL);
			cr_assert_eq(st.objects_read, pass == 0 ? 1 : 0,
				     "--no-demangle is its own key: %s pass %d", bins[b], pass);
		}
	}
}

/*
 * The key holds what this run found: a run without the debuginfo and a
 * run with it never share answers, whichever ran first.  A cached answer
 * from a poor run must not hide names a later run can give, and a rich
 * run's names must not appear in a run that could not compute them (the
 * output with and without the cache is the same).
 */
Test(cache, debuginfo_found_or_missing_is_in_the_key)
{
	uint64_t offs[4096];
	const char *bin = fxs("prog-gcc");
	int n = prog_offsets(bin, offs, 4096);

	/* 1: the stripped binary alone (no .symtab, no DWARF) */
	struct bsym_cache_stats st = run_compare(NULL, fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_saved, 1);
	/* 2: now its debuginfo is there: computed, not taken from run 1 */
	st = run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 0, "run 1's answers must not serve run 2");
	cr_assert_eq(st.objects_read, 1);
	/* 3: and gone again: run 1's answers, not run 2's */
	st = run_compare(NULL, fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 1);
	cr_assert_eq(st.objects_read, 0);
	/* 4: the unstripped binary itself (DWARF inside): another key */
	st = run_compare(NULL, bin, bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 0);
	/* 5: the debug file alone (binary gone): another key too */
	st = run_compare(fxs("tree-gcc"), "/nonexistent/prog", bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 0);
	/* 6: --no-inline: another key */
	st = run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, BSYM_NO_INLINE, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 0);
	st = run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, BSYM_NO_INLINE, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 1);
	cr_assert_eq(st.objects_read, 0);
	cr_assert_eq(count_files(".bsc"), 5);
}

/* Where the same debug file was found does not matter: a build-id tree
 * and a plain directory hold the same file, and share the answers. */
Test(cache, where_debuginfo_came_from_is_not_in_the_key)
{
	uint64_t offs[4096];
	const char *bin = fxs("prog-clang");
	int n = prog_offsets(bin, offs, 4096);

	struct bsym_cache_stats st = run_compare(fxs("tree-clang"), "/nonexistent/p", bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_saved, 1);
	st = run_compare(fxs("plain"), "/elsewhere/p", bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 1, "the same debug file, found elsewhere");
	cr_assert_eq(st.objects_read, 0);
}

/* DWARF that names other files (dwz common file, split .dwo) is never
 * cached: whether those are found is libdw's business, not the key's. */
Test(cache, dwz_and_split_dwarf_are_never_cached)
{
	const char *cases[][3] = {
		{ "tree-dwz", "dwz-a", "/nonexistent/dwz" },
		{ "tree-dwz-noalt", "dwz-a", "/nonexistent/dwz" },
		{ NULL, "split", NULL },
		{ NULL, "split-nodwo", NULL },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *bin = fxs(cases[c][1]);
		uint64_t offs[512], sz, a = fx_sym(bin, "work", &sz);
		uint64_t off0 = fx_vaddr_to_off(bin, a);
		int n = 0;
		for (uint64_t k = 0; k < sz && n < 512; k++)
			offs[n++] = off0 + k;
		for (int pass = 0; pass < 2; pass++) {
			struct bsym_cache_stats st =
				run_compare(cases[c][0] ? fxs(cases[c][0]) : NULL,
					    cases[c][2] ? cases[c][2] : bin, bin, 0, offs, n, NULL);
			cr_assert_eq(st.files_saved, 0, "%s", cases[c][1]);
			cr_assert_eq(st.objects_read, 1);
		}
	}
	cr_assert_eq(count_files(""), 0);
}

/* Objects without a build-id are never cached (their identity is not a
 * key), nor objects no file was found for. */
static bool verify_yes(void *arg, int fd, const char *path) { return true; }

Test(cache, no_build_id_and_nothing_found_are_not_cached)
{
	struct bsym_ctx *ctx = mkctx(NULL, 0, cdir, 0, NULL);
	struct bsym_object_desc d = { .sz = sizeof(d), .path = fxs("prog-gcc"), .verify = verify_yes };
	uint32_t id, id2;
	const struct bsym_result *r;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1100, &r), 0);
	id2 = reg(ctx, "/nonexistent/x", fxs("prog-gcc"));
	cr_assert_eq(bsym_symbolize_offset(ctx, id2, 0x1100, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);
	cr_assert_eq(bsym_cache_save(ctx), 0);
	bsym_destroy(ctx);
	cr_assert_eq(count_files(""), 0);
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *b = malloc((size_t)n + 1);
	cr_assert(b && fread(b, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void spit(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f && fwrite(b, 1, len, f) == len && fclose(f) == 0);
}

/* A damaged file: refused whole, a warning naming it, the answers
 * computed as without a cache, and the file rewritten valid. */
static void damaged_case(const char *file, const void *bytes, size_t len, const char *what)
{
	uint64_t offs[4096];
	const char *bin = fxs("prog-gcc");
	int n = prog_offsets(bin, offs, 4096);
	struct logbuf log = { .text = "" };

	spit(file, bytes, len);
	struct bsym_cache_stats st =
		run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, &log);
	cr_assert_eq(st.files_loaded, 0, "%s: a damaged file was used", what);
	cr_assert_eq(st.files_damaged, 1, "%s", what);
	cr_assert_eq(st.objects_read, 1);
	cr_assert_eq(st.files_saved, 1, "%s: not rebuilt", what);
	cr_assert(strstr(log.text, "is damaged") && strstr(log.text, "rebuilt"), "%s: warning: %s",
		  what, log.text);
	st = run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(st.files_loaded, 1, "%s: the rebuilt file is used", what);
	cr_assert_eq(st.objects_read, 0);
}

Test(cache, damaged_files_are_refused_with_a_warning_and_rebuilt)
{
	uint64_t offs[4096];
	const char *bin = fxs("prog-gcc");
	int n = prog_offsets(bin, offs, 4096);
	char file[512];

	run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	the_file(file, sizeof(file));
	size_t len;
	uint8_t *good = slurp(file, &len);
	uint8_t *b = malloc(len + 16);
	cr_assert_gt(len, 200);

	damaged_case(file, "", 0, "empty");
	damaged_case(file, good, 7, "half a magic");
	damaged_case(file, good, 40, "header only");
	damaged_case(file, good, len / 2, "truncated in the middle");
	damaged_case(file, good, len - 1, "one byte short");
	memcpy(b, good, len);
	memset(b + len, 0, 16);
	damaged_case(file, b, len + 16, "trailing zeros");
	memcpy(b, good, len);
	b[len - 3] ^= 0x40;
	damaged_case(file, b, len, "a flipped bit (checksum)");
	memcpy(b, good, len);
	b[8] = 2;
	damaged_case(file, b, len, "version 2");
	memcpy(b, good, len);
	memset(b + len / 3, 0xff, 64);
	damaged_case(file, b, len, "a run of 0xff");
	free(b);
	free(good);
}

/* Fix the checksum so that the structural checks behind it are reached. */
static void reseal(uint8_t *b, size_t len)
{
	uint64_t h = bsym_hash_bytes(b + 32, len - 32, 0x6273796d63616368ull);
	for (int i = 0; i < 8; i++)
		b[24 + i] = (uint8_t)(h >> (8 * i));
	for (int i = 0; i < 8; i++)
		b[16 + i] = (uint8_t)((uint64_t)len >> (8 * i));
}

struct count_sink {
	uint64_t entries, frames;
	size_t slen;
	const char *strings;
};

static int cs_info(void *arg, enum bsym_reason st, bool d, bool s) { return 0; }
static const char *cs_strings(void *arg, const char *s, size_t len)
{
	struct count_sink *c = arg;
	c->strings = s;
	c->slen = len;
	return s;
}
static int cs_entry(void *arg, uint64_t off, unsigned fp, const struct bsym_result *r)
{
	struct count_sink *c = arg;
	c->entries++;
	cr_assert(fp <= 3);
	cr_assert(fp || r);
	for (unsigned i = 0; r && i < r->nr_frames; i++) {
		/* every name inside the table, terminated there */
		cr_assert(r->frames[i].name >= c->strings && r->frames[i].name < c->strings + c->slen);
		cr_assert(strlen(r->frames[i].name) < c->slen);
		c->frames++;
	}
	return 0;
}

/*
 * Structural checks behind the checksum, byte by byte: each byte of a
 * valid file set to several values, the checksum fixed, then parsed (under
 * ASan in the sanitizer build).  The parser either accepts a file whose
 * every string is inside the table, or refuses it; it never reads outside.
 * The key is the reader's: a changed key byte is another key.
 */
Test(cache, every_byte_changed_and_resealed)
{
	uint64_t offs[256];
	const char *bin = fxs("prog-gcc");
	int n = prog_offsets(bin, offs, 256);
	char file[512];

	run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	the_file(file, sizeof(file));
	size_t len;
	uint8_t *good = slurp(file, &len);
	uint32_t kl = good[32] | good[33] << 8 | good[34] << 16 | (uint32_t)good[35] << 24;
	const uint8_t *key = good + 36;
	struct count_sink cs = {0};
	struct bsym_cache_sink sink = { &cs, cs_info, cs_strings, cs_entry };
	const char *why;

	cr_assert_eq(bsym_cache_parse(good, len, key, kl, &sink, &why), 0, "%s", why);
	uint64_t good_entries = cs.entries;
	cr_assert_gt(good_entries, 0);

	static const uint8_t vals[] = { 0, 1, 2, 0x3f, 0x40, 0x7f, 0x80, 0xfe, 0xff };
	uint8_t *b = malloc(len);
	uint8_t *k = malloc(kl);
	int refused = 0, accepted = 0;
	for (size_t i = 0; i < len; i++) {
		if (i >= 16 && i < 32)
			continue; /* file_len and checksum: reseal sets them */
		for (size_t v = 0; v < sizeof(vals); v++) {
			if (good[i] == vals[v])
				continue;
			memcpy(b, good, len);
			b[i] = vals[v];
			reseal(b, len);
			/* the reader's key stays the good one */
			memcpy(k, key, kl);
			memset(&cs, 0, sizeof(cs));
			int r = bsym_cache_parse(b, len, k, kl, &sink, &why);
			cr_assert(r == 0 || r == -EINVAL || r == -ESTALE, "byte %zu = %u: %d", i, vals[v], r);
			if (r == 0)
				accepted++;
			else
				refused++;
			if (r == -EINVAL)
				cr_assert(why, "a refusal says why");
		}
	}
	/* and every truncation, resealed */
	for (size_t l = 0; l < len; l++) {
		memcpy(b, good, l);
		if (l >= 32)
			reseal(b, l);
		cr_assert_neq(bsym_cache_parse(b, l, key, kl, &sink, &why), 0, "truncated at %zu", l);
	}
	cr_log_info("%zu bytes: %d variants refused, %d accepted (names, lines, offsets)", len,
		    refused, accepted);
	cr_assert_gt(refused, 0);
	free(b);
	free(k);
	free(good);
}

Test(cache, size_bound_evicts_least_recently_used)
{
	uint64_t offs[256];
	const char *bins[] = { "prog-gcc", "prog-clang", "cxx-g++" };
	for (size_t i = 0; i < 3; i++) {
		const char *bin = fxs(bins[i]);
		int n = 0;
		uint64_t base = fx_vaddr_to_off(bin, fx_sym(bin, "main", NULL));
		for (int k = 0; k < 256; k++)
			offs[n++] = base + (uint64_t)k;
		run_compare(NULL, bin, bin, 0, offs, n, NULL);
		/* distinct mtimes, the first file oldest */
		char cmd[512];
		snprintf(cmd, sizeof(cmd),
			 "find '%s' -name '*.bsc' -newermt '-1 minute' -exec touch -d '-%zu hours' {} +",
			 cdir, 10 - i);
		cr_assert_eq(system(cmd), 0);
	}
	cr_assert_eq(count_files(".bsc"), 3);
	/* an abandoned temporary file, two hours old */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "d=$(dirname $(find '%s' -name '*.bsc' | head -1)); "
		 "touch -d '-2 hours' \"$d/.x.bsc.tmp.1.0\"", cdir);
	cr_assert_eq(system(cmd), 0);

	/* the sizes of the three; a bound that holds only the newest two */
	FILE *f;
	snprintf(cmd, sizeof(cmd), "find '%s' -name '*.bsc' -printf '%%T@ %%s %%p\\n' | sort -n", cdir);
	f = popen(cmd, "r");
	double t[3];
	unsigned long long sz[3];
	char path[3][512];
	for (int i = 0; i < 3; i++)
		cr_assert_eq(fscanf(f, "%lf %llu %511s", &t[i], &sz[i], path[i]), 3);
	pclose(f);

	/* a fourth object, saved unbounded (its file the newest); then one
	 * more answer for it, saved with a bound that, after eviction down to
	 * 3/4 of it, holds the fourth and the newest of the three */
	const char *bin = fxs("cxx-clang++");
	uint64_t base = fx_vaddr_to_off(bin, fx_sym(bin, "main", NULL));
	const struct bsym_result *r;
	struct bsym_ctx *ctx = mkctx(NULL, 0, cdir, 0, NULL);
	uint32_t id = reg(ctx, bin, bin);
	for (int k = 0; k < 256; k++)
		cr_assert_eq(bsym_symbolize_offset(ctx, id, base + (uint64_t)k, &r), 0);
	cr_assert_eq(bsym_cache_save(ctx), 0);
	bsym_destroy(ctx);
	snprintf(cmd, sizeof(cmd), "find '%s' -name '*.bsc' -newermt '-1 minute' -printf '%%s'", cdir);
	f = popen(cmd, "r");
	unsigned long long s4 = 0;
	cr_assert_eq(fscanf(f, "%llu", &s4), 1);
	pclose(f);
	ctx = mkctx(NULL, 0, cdir, (sz[2] + s4 + 200) * 4 / 3, NULL);
	id = reg(ctx, bin, bin);
	cr_assert_eq(bsym_symbolize_offset(ctx, id, base + 4096, &r), 0);
	cr_assert_eq(bsym_cache_save(ctx), 0);
	struct bsym_cache_stats st;
	bsym_cache_get_stats(ctx, &st);
	bsym_destroy(ctx);
	cr_log_info("sizes %llu %llu %llu %llu: evicted %" PRIu64, sz[0], sz[1], sz[2], s4,
		    st.files_evicted);
	cr_assert_eq(st.files_evicted, 2);
	cr_assert(access(path[0], F_OK) != 0, "the least recently used file stays");
	cr_assert(access(path[1], F_OK) != 0, "the second least recently used file stays");
	cr_assert_eq(access(path[2], F_OK), 0, "a recently used file went");
	cr_assert_eq(count_files(".bsc"), 2);
	cr_assert_eq(count_files(".tmp.1.0"), 0, "an abandoned temporary file stays");
}

/* Readers and writers at once: a reader never sees half a file (no
 * damage reported), and every file left is valid. */
Test(cache, concurrent_reports_never_see_half_a_file)
{
	const char *bin = fxs("prog-gcc");
	uint64_t offs[4096];
	int n = prog_offsets(bin, offs, 4096);
	pid_t kids[4];

	for (int k = 0; k < 4; k++) {
		kids[k] = fork();
		cr_assert_geq(kids[k], 0);
		if (kids[k] == 0) {
			int bad = 0;
			for (int it = 0; it < 12; it++) {
				struct bsym_ctx *ctx =
					mkctx(fxs("tree-gcc"), 0, cdir, 0, NULL);
				uint32_t id = reg(ctx, fxs("prog-gcc.stripped"), bin);
				const struct bsym_result *r;
				/* each writer adds offsets of its own */
				for (int i = (k * 12 + it) % 7; i < n; i += 7)
					bsym_symbolize_offset(ctx, id, offs[i], &r);
				bsym_cache_save(ctx);
				struct bsym_cache_stats st;
				bsym_cache_get_stats(ctx, &st);
				bad += (int)st.files_damaged;
				bsym_destroy(ctx);
			}
			_exit(bad ? 1 : 0);
		}
	}
	for (int k = 0; k < 4; k++) {
		int status;
		cr_assert_eq(waitpid(kids[k], &status, 0), kids[k]);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "a report saw a damaged cache file");
	}
	cr_assert_eq(count_files(".bsc"), 1);
	cr_assert_eq(count_files(""), 1, "temporary files left");
	struct bsym_cache_stats st = run_compare(fxs("tree-gcc"), fxs("prog-gcc.stripped"), bin, 0,
						 offs, n, NULL);
	cr_assert_eq(st.files_loaded, 1);
	cr_assert_eq(st.files_damaged, 0);
}

/* An unwritable cache directory costs speed, not the report. */
Test(cache, unwritable_directory_is_a_warning)
{
	struct logbuf log = { .text = "" };
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/file", cdir);
	spit(sub, "x", 1); /* a file where the directory should be */
	struct bsym_ctx *ctx = mkctx(NULL, 0, sub, 0, &log);
	uint32_t id = reg(ctx, fxs("prog-gcc"), fxs("prog-gcc"));
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(fxs("prog-gcc"),
			fx_sym(fxs("prog-gcc"), "main", NULL)), &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_lt(bsym_cache_save(ctx), 0);
	cr_assert_eq(log.warnings, 1, "%s", log.text);
	cr_assert(strstr(log.text, "cannot write cache file"), "%s", log.text);
	bsym_destroy(ctx);
}

/*
 * A file the search meets and passes over still counts: a symbols-only
 * .debug (no DWARF) in a build-id tree is not our debug file, but libdwfl,
 * asked for debuginfo we did not hand it, finds it by build-id and takes its
 * .symtab.  With it the stripped binary's functions are named; without it
 * they are not; the two runs must not share answers.
 */
Test(cache, a_symbols_only_debug_file_is_in_the_key)
{
	uint64_t offs[4096];
	const char *bin = fxs("prog-gcc");
	int n = prog_offsets(bin, offs, 4096);
	struct fx_bid b = fx_build_id(bin);
	char tree[128], dir[256], file[512], cmd[2048];

	snprintf(tree, sizeof(tree), "%s/symtree", cdir);
	snprintf(dir, sizeof(dir), "%s/.build-id/%02x", tree, b.b[0]);
	int o = snprintf(file, sizeof(file), "%s/", dir);
	for (size_t i = 1; i < b.n; i++)
		o += snprintf(file + o, sizeof(file) - (size_t)o, "%02x", b.b[i]);
	snprintf(file + o, sizeof(file) - (size_t)o, ".debug");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && objcopy --only-keep-debug '%s' '%s' && "
		 "objcopy --strip-debug '%s'", dir, bin, file, file);
	cr_assert_eq(system(cmd), 0, "%s", cmd);

	run_compare(tree, fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	struct bsym_cache_stats without =
		run_compare(NULL, fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(without.files_loaded, 0, "the symbols-only file's answers served a run without it");
	struct bsym_cache_stats again =
		run_compare(tree, fxs("prog-gcc.stripped"), bin, 0, offs, n, NULL);
	cr_assert_eq(again.files_loaded, 1);
	cr_assert_eq(again.objects_read, 0);

	/* the case is real: the two runs name different things */
	struct bsym_ctx *a = mkctx(tree, 0, NULL, 0, NULL), *z = mkctx(NULL, 0, NULL, 0, NULL);
	uint32_t ia = reg(a, fxs("prog-gcc.stripped"), bin), iz = reg(z, fxs("prog-gcc.stripped"), bin);
	int na = 0, nz = 0;
	for (int i = 0; i < n; i++) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_offset(a, ia, offs[i], &r), 0);
		na += r->reason == BSYM_OK;
		cr_assert_eq(bsym_symbolize_offset(z, iz, offs[i], &r), 0);
		nz += r->reason == BSYM_OK;
	}
	cr_log_info("named with the symbols-only file: %d, without: %d (of %d)", na, nz, n);
	cr_assert_neq(na, nz, "the fixture does not show the case");
	bsym_destroy(a);
	bsym_destroy(z);
}
