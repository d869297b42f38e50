/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Golden files (tests/data/format): valid/ must read, and read as the
 * fixture that produced them; invalid/ must fail with the code that
 * invalid/expected.txt names, without crashing.  Also: the writer's
 * content for the typical fixture must still be byte-identical to the
 * content of valid/typical.bprof, so any format change is deliberate.
 */
#include "bprof.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "fixtures.h"

static const char *data_dir(void)
{
	const char *d = getenv("BPROF_TEST_DATA");

	cr_assert_not_null(d, "BPROF_TEST_DATA is not set (run through ctest)");
	return d;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static const char *code_name(int code)
{
	switch (code) {
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
	case BPROF_OK: return "OK";
	}
	return "?";
}

static struct bprof_recording *read_golden(const char *name)
{
	char path[4096];
	struct bprof_recording *r = NULL;
	struct bprof_error err = { 0 };

	snprintf(path, sizeof(path), "%s/format/valid/%s.bprof", data_dir(), name);
	cr_assert_eq(bprof_read_file(&r, path, NULL, &err), 0, "%s: %s", name, err.message);
	return r;
}

static void expect_fixture(const char *name, struct bprof_recording *want)
{
	struct bprof_recording *got = read_golden(name);
	char why[256];

	/* the fixture is unsorted; the writer sorts it */
	cr_assert_eq(bprof_recording_validate(want, NULL), 0);
	cr_assert(fx_equal(want, got, why, sizeof(why)), "%s: %s", name, why);
	bprof_recording_free(got);
	bprof_recording_free(want);
}

/* A file of format 1.5 with off-CPU time (OFFCPU section). */
Test(golden, valid_python_file_reads)
{
	expect_fixture("python", fx_python());
}

/* A file of format 1.8 with a JIT section. */
Test(golden, valid_v8_file_reads)
{
	expect_fixture("v8", fx_v8());
}

Test(golden, valid_jit_file_reads)
{
	expect_fixture("jit", fx_jit());
}

Test(golden, valid_jvm_file_reads)
{
	expect_fixture("jvm", fx_jvm());
}

Test(golden, valid_offcpu_file_reads)
{
	expect_fixture("offcpu", fx_offcpu());
}

Test(golden, valid_empty)
{
	expect_fixture("empty", fx_empty());
}

Test(golden, valid_typical)
{
	expect_fixture("typical", fx_typical());
}

Test(golden, valid_odd_strings)
{
	expect_fixture("odd-strings", fx_odd_strings());
}

Test(golden, valid_unknown_sections_are_skipped)
{
	expect_fixture("unknown-section", fx_typical());
}

/* Files of format 1.0 (minor 0, 64-byte LOSSES, no UNWIND), written by
 * the 1.0 writer and kept as they were: still read, as what 1.0 held. */
Test(golden, valid_v1_0_files_still_read)
{
	struct bprof_recording *r = read_golden("v1.0-empty");

	cr_assert_eq(r->unwind.mode, BPROF_UNWIND_UNKNOWN);
	cr_assert_eq(r->access.present, 0);
	bprof_recording_free(r);
	expect_fixture("v1.0-typical", fx_typical_v10());
}

/* A file of format 1.1 (minor 1, no ACCESS section), written by the 1.1
 * writer and kept as it was: still reads, as what 1.1 held. */
Test(golden, valid_v1_1_file_still_reads)
{
	struct bprof_recording *r = read_golden("v1.1-typical");

	cr_assert_eq(r->access.present, 0);
	bprof_recording_free(r);
	expect_fixture("v1.1-typical", fx_typical_v11());
}

/* A file of format 1.2 (minor 2, no GENERATIONS), written by the 1.2
 * writer and kept as it was: still reads, every process without
 * generations and every count of generation 0. */
Test(golden, valid_v1_2_file_still_reads)
{
	struct bprof_recording *r = read_golden("v1.2-typical");

	for (uint64_t i = 0; i < r->nr_processes; i++)
		cr_assert_eq(r->processes[i].has_gens, 0);
	for (uint64_t i = 0; i < r->nr_counts; i++)
		cr_assert_eq(r->counts[i].map_gen, 0);
	cr_assert_eq(r->unwind.nr_misses, 0);
	cr_assert_eq(r->unwind.counters[BPROF_UNW_MEMORY_BUDGET], 0);
	bprof_recording_free(r);
	expect_fixture("v1.2-typical", fx_typical_v12());
}

/* A file of format 1.3 (minor 3: 27 UNWIND counters, no miss entries),
 * written by the 1.3 writer and kept as it was: still reads, as what 1.3
 * held (the counters it lacks read as 0). */
Test(golden, valid_v1_3_file_still_reads)
{
	struct bprof_recording *r = read_golden("v1.3-typical");

	cr_assert_eq(r->unwind.nr_misses, 0);
	cr_assert_eq(r->unwind.counters[BPROF_UNW_MEMORY_BUDGET], 0);
	bprof_recording_free(r);
	expect_fixture("v1.3-typical", fx_typical_v13());
}

Test(golden, valid_access_counter_count_may_differ)
{
	struct bprof_recording *want = fx_typical(), *got = read_golden("access-more-counters");
	char why[256];

	cr_assert_eq(bprof_recording_validate(want, NULL), 0);
	cr_assert(fx_equal(got, want, why, sizeof(why)), "access-more-counters: %s", why);
	bprof_recording_free(got);
	got = read_golden("access-fewer-counters");
	cr_assert_eq(got->access.present, 1);
	cr_assert_eq(got->access.euid, 1000);
	cr_assert_eq(got->access.counters[BPROF_ACC_OBJECTS_BY_PATH], 40);
	for (int i = 1; i < BPROF_ACC_NR_COUNTERS; i++)
		cr_assert_eq(got->access.counters[i], 0, "counter %d", i);
	bprof_recording_free(got);
	got = read_golden("access-no-counters-all-capabilities");
	cr_assert_eq(got->access.present, 1);
	cr_assert_eq(got->access.capabilities, UINT64_MAX);
	for (int i = 0; i < BPROF_ACC_NR_COUNTERS; i++)
		cr_assert_eq(got->access.counters[i], 0, "counter %d", i);
	bprof_recording_free(got);
	bprof_recording_free(want);
}

Test(golden, valid_optional_sections_are_independent)
{
	struct bprof_recording *r = read_golden("access-after-ksyms");

	cr_assert_eq(r->access.present, 1);
	cr_assert_eq(r->unwind.mode, BPROF_UNWIND_UNKNOWN);
	cr_assert_eq(r->nr_images, 0);
	bprof_recording_free(r);
	r = read_golden("no-access-section");
	cr_assert_eq(r->access.present, 0);
	cr_assert_eq(r->nr_images, 1);
	bprof_recording_free(r);
}

Test(golden, valid_unwind_counter_count_may_differ)
{
	struct bprof_recording *want = fx_typical(), *got = read_golden("unwind-more-counters");
	char why[256];

	cr_assert_eq(bprof_recording_validate(want, NULL), 0);
	cr_assert(fx_equal(got, want, why, sizeof(why)), "unwind-more-counters: %s", why);
	bprof_recording_free(got);
	got = read_golden("unwind-fewer-counters");
	for (int i = 0; i < BPROF_UNW_NR_COUNTERS; i++)
		cr_assert_eq(got->unwind.counters[i], i < 20 ? 100 + (uint64_t)i : 0, "counter %d", i);
	cr_assert_eq(got->stacks[got->nr_stacks - 1].flags,
		     BPROF_USTACK_LEAF_EXACT | BPROF_USTACK_COMPLETE);
	bprof_recording_free(got);
	bprof_recording_free(want);
}

Test(golden, valid_newer_minor_extensions_are_ignored)
{
	struct bprof_recording *got = read_golden("newer-minor-version");

	/* reserved bits set by "minor 1" are passed through, not refused */
	cr_assert_eq(got->meta.flags, 0x103);
	cr_assert_eq(got->nr_counts, 7);
	cr_assert_eq(got->access.flags, BPROF_ACCESS_KALLSYMS | 0x80000000u);
	bprof_recording_free(got);
}

Test(golden, every_valid_file_reads)
{
	char dir[4096];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/format/valid", data_dir());
	d = opendir(dir);
	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char path[8192];
		struct bprof_recording *r;
		struct bprof_error err;

		if (!strstr(e->d_name, ".bprof"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		cr_assert_eq(bprof_read_file(&r, path, NULL, &err), 0, "%s: %s", e->d_name,
			     err.message);
		bprof_recording_free(r);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 5);
}

static uint8_t *content_of(const void *file, size_t len, size_t *clen)
{
	const uint8_t *b = file;
	uint64_t n = 0;
	uint8_t *c;

	for (int i = 7; i >= 0; i--)
		n = n << 8 | b[16 + i];
	c = malloc(n + 1);
	cr_assert_eq(ZSTD_decompress(c, n, b + 24, len - 24), n);
	*clen = n;
	return c;
}

Test(golden, writer_content_is_stable)
{
	const char *names[] = { "empty", "typical", "odd-strings" };
	struct bprof_recording *(*make[])(void) = { fx_empty, fx_typical, fx_odd_strings };

	for (int i = 0; i < 3; i++) {
		char path[4096];
		struct bprof_recording *r = make[i]();
		struct bprof_error err;
		size_t glen, wlen, gclen, wclen;
		void *g, *w;
		uint8_t *gc, *wc;

		snprintf(path, sizeof(path), "%s/format/valid/%s.bprof", data_dir(), names[i]);
		g = slurp(path, &glen);
		cr_assert_eq(bprof_write_buffer(r, &w, &wlen, NULL, &err), 0);
		/* the header is ours; the compressed bytes depend on libzstd's
		 * version, so compare the content instead */
		cr_assert_eq(memcmp(g, w, 24), 0, "%s: file header changed", names[i]);
		gc = content_of(g, glen, &gclen);
		wc = content_of(w, wlen, &wclen);
		cr_assert_eq(gclen, wclen, "%s: content size changed", names[i]);
		cr_assert_eq(memcmp(gc, wc, gclen), 0, "%s: content bytes changed", names[i]);
		free(g);
		free(w);
		free(gc);
		free(wc);
		bprof_recording_free(r);
	}
}

struct expectation {
	char name[128];
	char code[32];
	bool seen;
};

static struct expectation *load_expected(size_t *n)
{
	char path[4096], line[256];
	struct expectation *ex = calloc(512, sizeof(*ex));
	FILE *f;

	snprintf(path, sizeof(path), "%s/format/invalid/expected.txt", data_dir());
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert_lt(*n, 512);
		cr_assert_eq(sscanf(line, "%127s %31s", ex[*n].name, ex[*n].code), 2, "%s", line);
		(*n)++;
	}
	fclose(f);
	return ex;
}

Test(golden, every_invalid_file_fails_with_its_code)
{
	char dir[4096];
	size_t n, checked = 0;
	struct expectation *ex = load_expected(&n);
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/format/invalid", data_dir());
	d = opendir(dir);
	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char path[8192], name[256];
		struct bprof_recording *r = (void *)1;
		struct bprof_error err = { 0 };
		struct expectation *x = NULL;
		size_t len;
		void *buf;
		int rc;

		if (!strstr(e->d_name, ".bprof"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(strlen(e->d_name) - 6), e->d_name);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(ex[i].name, name))
				x = &ex[i];
		cr_assert_not_null(x, "invalid/%s has no line in expected.txt", e->d_name);
		x->seen = true;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);

		rc = bprof_read_file(&r, path, NULL, &err);
		cr_assert_str_eq(code_name(rc), x->code, "%s: got %s (%s), expected %s", name,
				 code_name(rc), err.message, x->code);
		cr_assert_null(r, "%s: *out not NULL on failure", name);
		cr_assert_eq(err.code, rc);
		cr_assert_neq(err.message[0], '\0', "%s: empty message", name);

		/* the buffer API agrees with the file API */
		buf = slurp(path, &len);
		cr_assert_eq(bprof_read_buffer(&r, buf, len, NULL, &err), rc, "%s", name);
		free(buf);
		checked++;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		cr_assert(ex[i].seen, "expected.txt lists %s but the file is missing", ex[i].name);
	cr_assert_geq(checked, 50);
	free(ex);
}

/* Every prefix of a valid file must be refused, never crash. */
Test(golden, every_truncation_of_typical_fails)
{
	char path[4096];
	size_t len;
	uint8_t *buf;

	snprintf(path, sizeof(path), "%s/format/valid/typical.bprof", data_dir());
	buf = slurp(path, &len);
	for (size_t n = 0; n < len; n++) {
		struct bprof_recording *r = NULL;
		struct bprof_error err;
		uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
		int rc;

		memcpy(copy, buf, n);
		rc = bprof_read_buffer(&r, copy, n, NULL, &err);
		cr_assert_lt(rc, 0, "prefix of %zu bytes accepted", n);
		cr_assert_null(r);
		free(copy);
	}
	free(buf);
}

/*
 * Every single-bit flip of a valid file is refused or harmless, never a
 * crash.  Harmless: the header's minor version (a newer minor is readable)
 * and bits zstd does not use (the frame header's unused bit, padding and
 * table bits that decode to the same content, which the checksum then
 * vouches for): the recording read must equal the original.
 */
Test(golden, every_bit_flip_of_typical_fails_or_is_harmless, .timeout = 120)
{
	struct bprof_recording *orig = read_golden("typical");
	char path[4096], why[256];
	size_t len;
	uint8_t *buf;
	int refused = 0, total = 0;

	snprintf(path, sizeof(path), "%s/format/valid/typical.bprof", data_dir());
	buf = slurp(path, &len);
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			struct bprof_recording *r = NULL;
			struct bprof_error err;

			buf[i] ^= (uint8_t)(1u << bit);
			total++;
			if (bprof_read_buffer(&r, buf, len, NULL, &err) == 0) {
				if (i != 10 && i != 11)
					cr_assert(fx_equal(orig, r, why, sizeof(why)),
						  "bit %d of byte %zu: accepted and different: %s",
						  bit, i, why);
				bprof_recording_free(r);
			} else {
				refused++;
			}
			buf[i] ^= (uint8_t)(1u << bit);
		}
	cr_log_info("%d of %d bit flips refused", refused, total);
	cr_assert_gt(refused, total * 9 / 10);
	bprof_recording_free(orig);
	free(buf);
}
