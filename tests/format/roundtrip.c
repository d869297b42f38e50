/* SPDX-License-Identifier: Apache-2.0 */
/* Round trips: write -> read gives the same tables. */
#include "bprof.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"

static struct bprof_recording *through_buffer(struct bprof_recording *r)
{
	struct bprof_recording *back = NULL;
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;
	int rc = bprof_write_buffer(r, &buf, &len, NULL, &err);

	cr_assert_eq(rc, 0, "write_buffer: %s", err.message);
	cr_assert_gt(len, 24);
	rc = bprof_read_buffer(&back, buf, len, NULL, &err);
	cr_assert_eq(rc, 0, "read_buffer: %s", err.message);
	free(buf);
	return back;
}

static struct bprof_recording *through_file(struct bprof_recording *r)
{
	char dir[] = "/tmp/bprof-rt-XXXXXX", path[64];
	struct bprof_recording *back = NULL;
	struct bprof_error err = { 0 };
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.bprof", dir);
	rc = bprof_write_file(r, path, NULL, &err);
	cr_assert_eq(rc, 0, "write_file: %s", err.message);
	rc = bprof_read_file(&back, path, NULL, &err);
	cr_assert_eq(rc, 0, "read_file: %s", err.message);
	unlink(path);
	rmdir(dir);
	return back;
}

static void check_roundtrip(struct bprof_recording *r)
{
	struct bprof_recording *a, *b;
	char why[256] = "";

	cr_assert_not_null(r);
	a = through_buffer(r);
	cr_assert(fx_equal(r, a, why, sizeof(why)), "buffer round trip: %s", why);
	b = through_file(r);
	cr_assert(fx_equal(r, b, why, sizeof(why)), "file round trip: %s", why);
	bprof_recording_free(a);
	bprof_recording_free(b);
	bprof_recording_free(r);
}

Test(roundtrip, empty)
{
	struct bprof_recording *r = fx_empty(), *back;

	back = through_buffer(r);
	cr_assert_eq(back->nr_counts + back->nr_stacks + back->nr_objects + back->nr_processes, 0);
	cr_assert_eq(back->kernel.nr_ksyms, 0);
	/* strings read back as "", never NULL */
	cr_assert_str_eq(back->meta.hostname, "");
	cr_assert_str_eq(back->kernel.release, "");
	bprof_recording_free(back);
	check_roundtrip(r);
}

Test(roundtrip, typical)
{
	check_roundtrip(fx_typical());
}

/* Mapping generations at their limits: an unknown generation, the
 * largest births and gaps, a process with generations but no mapping,
 * history only; another without generations beside it. */
Test(roundtrip, generations_extremes)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_process p = { 0 };

	r->counts[2].map_gen = BPROF_GEN_UNKNOWN;
	r->counts[3].map_gen = UINT32_MAX - 1;
	p.pid = 7;
	p.exec_id = 1;
	p.has_gens = 1;
	p.nr_history = 3;
	p.history = calloc(3, sizeof(*p.history));
	p.history[0] = (struct bprof_mapping){ 0, UINT64_MAX, UINT64_MAX, BPROF_NO_OBJECT,
					       BPROF_MAP_ANON, UINT32_MAX };
	p.history[1] = (struct bprof_mapping){ 0x1000, 0x2000, 0, 0, 0, 0 };
	p.history[2] = p.history[1]; /* duplicates are allowed */
	p.nr_gaps = 2;
	p.gaps = calloc(2, sizeof(*p.gaps));
	p.gaps[0] = 1;
	p.gaps[1] = UINT32_MAX;
	cr_assert_eq(bprof_recording_add_process(r, &p), 0);
	check_roundtrip(r);
}

/* Off-CPU rows (1.5, OFFCPU): after the on-CPU rows, as the reader
 * appends them; every state, the largest values; the file is 1.5, and a
 * file without them stays 1.4. */
static void add_offcpu_rows(struct bprof_recording *r)
{
	uint64_t n = r->nr_counts;

	r->offcpu = (struct bprof_offcpu){ BPROF_OFFCPU_WALL, 10101010, 7, 3, UINT64_MAX, 4, 1, 2 };
	for (uint32_t s = BPROF_STATE_S; s <= BPROF_STATE_MAX; s++) {
		struct bprof_count c = r->counts[s % n];

		c.state = s;
		c.blocked_ns = s == BPROF_STATE_T ? UINT64_MAX : s * 1000000ull;
		c.count = s;
		cr_assert_eq(bprof_recording_add_count(r, &c), 0);
	}
}

Test(roundtrip, offcpu)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_OFFCPU);
	free(buf);
	add_offcpu_rows(r);
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_SLICES);
	free(buf);
	check_roundtrip(r);
}

/* Time slices (1.6): written as minor 6 only with slices; every row's
 * slice, on- and off-CPU, and the origin come back; a slice without a
 * slice length is refused. */
Test(roundtrip, slices)
{
	struct bprof_recording *r = fx_slices();
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;

	cr_assert_not_null(r);
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_PYTHON);
	free(buf);
	r->slices.slice_ns = 0;
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	r->slices.slice_ns = 20000000;
	check_roundtrip(r);
}

/* What the writer refuses: off-CPU rows without a mode, runnable time
 * without --wall, a state out of range, a mode without a period. */
Test(roundtrip, offcpu_invalid)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_error err = { 0 };
	uint64_t last;

	add_offcpu_rows(r);
	last = r->nr_counts - 1;
	r->offcpu.mode = BPROF_OFFCPU_NONE;
	cr_assert_neq(bprof_recording_validate(r, &err), 0);
	r->offcpu.mode = BPROF_OFFCPU_BLOCKED;
	cr_assert_neq(bprof_recording_validate(r, &err), 0, "R rows without --wall");
	r->offcpu.mode = BPROF_OFFCPU_WALL;
	cr_assert_eq(bprof_recording_validate(r, &err), 0, "%s", err.message);
	r->counts[last].state = BPROF_STATE_MAX + 1;
	cr_assert_neq(bprof_recording_validate(r, &err), 0);
	r->counts[last].state = BPROF_STATE_T;
	r->offcpu.period_ns = 0;
	cr_assert_neq(bprof_recording_validate(r, &err), 0);
	r->offcpu.period_ns = 1;
	r->counts[0].blocked_ns = 1; /* an on-CPU row */
	cr_assert_neq(bprof_recording_validate(r, &err), 0);
	bprof_recording_free(r);
}

Test(roundtrip, typical_sorted_on_read)
{
	struct bprof_recording *r = fx_typical(), *back = through_buffer(r);

	/* the fixture adds pid 101 before pid 100 and stacks 0, 7, 2 */
	cr_assert_eq(back->processes[0].pid, 100);
	cr_assert_eq(back->processes[1].pid, 101);
	cr_assert_eq(back->stacks[0].id, 0);
	cr_assert_eq(back->stacks[1].id, 2);
	cr_assert_eq(back->stacks[2].id, 7);
	cr_assert_eq(back->processes[0].perf_map[back->processes[0].perf_map_len], '\0');
	bprof_recording_free(back);
	bprof_recording_free(r);
}

Test(roundtrip, odd_strings)
{
	check_roundtrip(fx_odd_strings());
}

Test(roundtrip, large, .timeout = 120)
{
	struct bprof_recording *r = fx_large(200000, 50000, 100000, 1);

	cr_assert_eq(r->nr_counts, 200000);
	cr_assert_eq(r->nr_stacks, 50000);
	cr_assert_eq(r->kernel.nr_ksyms, 100000);
	check_roundtrip(r);
}

Test(roundtrip, perf_map_with_nul_bytes)
{
	struct bprof_recording *r = fx_typical();
	static const char blob[] = "a\0b\0\xff\n";

	free(r->processes[1].perf_map);
	r->processes[1].perf_map = malloc(sizeof(blob));
	memcpy(r->processes[1].perf_map, blob, sizeof(blob));
	r->processes[1].perf_map_len = sizeof(blob);
	check_roundtrip(r);
}

Test(roundtrip, extreme_values)
{
	struct bprof_recording *r = fx_typical();

	r->meta.start_time_ns = UINT64_MAX;
	r->meta.ncpus = UINT32_MAX;
	r->counts[0].count = UINT64_MAX;
	r->counts[0].pid = UINT32_MAX;
	r->counts[0].user_stack_id = INT32_MIN; /* BPROF_STACK_NONE */
	r->objects[0].build_id_len = BPROF_BUILD_ID_MAX;
	memset(r->objects[0].build_id, 0xff, BPROF_BUILD_ID_MAX);
	r->kernel.ksyms[4].addr = UINT64_MAX;
	r->kernel.modules[1].size = UINT64_MAX - r->kernel.modules[1].base;
	check_roundtrip(r);
}

Test(roundtrip, zstd_levels)
{
	int levels[] = { -5, 1, 3, 19, 22 };

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		struct bprof_recording *r = fx_large(2000, 500, 2000, 7), *back = NULL;
		struct bprof_write_opts o = { .sz = sizeof(o), .zstd_level = levels[i] };
		struct bprof_error err = { 0 };
		char why[256];
		void *buf;
		size_t len;

		cr_assert_eq(bprof_write_buffer(r, &buf, &len, &o, &err), 0, "%s", err.message);
		cr_assert_eq(bprof_read_buffer(&back, buf, len, NULL, &err), 0, "level %d: %s",
			     levels[i], err.message);
		cr_assert(fx_equal(r, back, why, sizeof(why)), "%s", why);
		free(buf);
		bprof_recording_free(back);
		bprof_recording_free(r);
	}
}

Test(roundtrip, small_read_limits)
{
	struct bprof_recording *r = fx_large(2000, 500, 0, 3), *back = NULL;
	struct bprof_read_opts o = { .sz = sizeof(o), .max_decompressed = 1000 };
	struct bprof_error err = { 0 };
	void *buf;
	size_t len;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0);
	cr_assert_eq(bprof_read_buffer(&back, buf, len, &o, &err), BPROF_E_LIMIT);
	cr_assert_null(back);
	cr_assert_eq(err.code, BPROF_E_LIMIT);
	cr_assert_neq(strstr(err.message, "content size"), NULL, "%s", err.message);
	free(buf);
	bprof_recording_free(r);
}

Test(roundtrip, file_bytes_equal_buffer_bytes)
{
	struct bprof_recording *r = fx_typical();
	char dir[] = "/tmp/bprof-rt-XXXXXX", path[64];
	struct bprof_error err;
	void *buf;
	size_t len;
	FILE *f;
	char *file;
	long flen;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.bprof", dir);
	cr_assert_eq(bprof_write_file(r, path, NULL, &err), 0, "%s", err.message);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	flen = ftell(f);
	rewind(f);
	file = malloc((size_t)flen);
	cr_assert_eq(fread(file, 1, (size_t)flen, f), (size_t)flen);
	fclose(f);
	cr_assert_eq((size_t)flen, len);
	cr_assert_eq(memcmp(file, buf, len), 0);
	free(file);
	free(buf);
	unlink(path);
	rmdir(dir);
	bprof_recording_free(r);
}

/* The reader puts every stack's ips in one block (ips_block): each stack
 * points inside it, in order, and a read recording refuses a stack that
 * would own its ips (bprof_recording_free could not free it). */
Test(roundtrip, read_stacks_share_one_block)
{
	struct bprof_recording *r = fx_typical(), *back = through_buffer(r);
	uint64_t total = 0;

	cr_assert_not_null(back->ips_block);
	for (uint64_t i = 0; i < back->nr_stacks; i++) {
		const struct bprof_stack *s = &back->stacks[i];

		if (!s->nr_ips)
			continue;
		cr_assert_eq(s->ips, back->ips_block + total, "stack %u is not at its place", s->id);
		total += s->nr_ips;
	}
	cr_assert_gt(total, 0);
	struct bprof_stack extra = { .id = 1000, .nr_ips = 1, .ips = malloc(8) };
	cr_assert_eq(bprof_recording_add_stack(back, &extra), BPROF_E_INVAL);
	free(extra.ips);
	bprof_recording_free(back);
	bprof_recording_free(r);
}

/* One reader for many files (its buffers and zstd context kept between
 * them): each file reads as bprof_read_file reads it, whatever came
 * before - a larger file, a smaller one, a file that is not a recording. */
Test(roundtrip, reader_reused_across_files)
{
	char dir[] = "/tmp/bprof-rd-XXXXXX", path[4][64];
	struct bprof_recording *src[3] = { fx_typical(), fx_empty(), fx_odd_strings() };
	struct bprof_reader *rd = NULL;
	struct bprof_error err = { 0 };
	char why[256] = "";

	cr_assert_not_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%d.bprof", dir, i);
		cr_assert_eq(bprof_write_file(src[i], path[i], NULL, &err), 0, "%s", err.message);
	}
	snprintf(path[3], sizeof(path[3]), "%s/junk.bprof", dir);
	FILE *f = fopen(path[3], "w");
	cr_assert_not_null(f);
	fputs("BPROF\\0\\0\\0 not a recording at all, long enough to be read", f);
	fclose(f);
	cr_assert_eq(bprof_reader_create(&rd), 0);
	static const int order[] = { 0, 1, 3, 2, 0, 2, 1 };
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		struct bprof_recording *a = NULL, *b = NULL;
		struct bprof_error ea = { 0 }, eb = { 0 };
		int i = order[k];
		int ra = bprof_reader_read_file(rd, &a, path[i], NULL, &ea);
		int rb = bprof_read_file(&b, path[i], NULL, &eb);

		cr_assert_eq(ra, rb, "file %d: reader %d, read_file %d", i, ra, rb);
		if (i == 3) {
			cr_assert_neq(ra, 0);
			cr_assert_null(a);
			cr_assert_str_eq(ea.message, eb.message);
			continue;
		}
		cr_assert_eq(ra, 0, "%s", ea.message);
		cr_assert(fx_equal(src[i], a, why, sizeof(why)), "file %d: %s", i, why);
		bprof_recording_free(a);
		bprof_recording_free(b);
	}
	struct bprof_recording *none = (void *)1;
	cr_assert_eq(bprof_reader_read_file(NULL, &none, path[0], NULL, &err), BPROF_E_INVAL);
	cr_assert_null(none);
	bprof_reader_destroy(rd);
	bprof_reader_destroy(NULL);
	for (int i = 0; i < 4; i++)
		unlink(path[i]);
	rmdir(dir);
	for (int i = 0; i < 3; i++)
		bprof_recording_free(src[i]);
}

Test(roundtrip, jvm)
{
	struct bprof_recording *r = fx_jvm();
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_RT_LACKS);
	free(buf);
	check_roundtrip(fx_jvm());
	cr_assert_eq(bprof_recording_validate(r, &err), 0, "%s", err.message);
	/* the lookup the report names frames by: identity and guard */
	cr_assert_not_null(bprof_jvm_frame_find(r, 100, 1, 2ull << 48 | 0x7f2000000200ull, 77));
	cr_assert_null(bprof_jvm_frame_find(r, 100, 1, 2ull << 48 | 0x7f2000000200ull, 78));
	cr_assert_null(bprof_jvm_frame_find(r, 100, 2, 1ull << 48 | 0x7f1000000100ull, 0x1234));
	/* two entries of one identity cannot be written */
	r->jvm.frames[2].id = r->jvm.frames[1].id;
	r->jvm.frames[2].guard = r->jvm.frames[1].guard;
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	/* nor an unknown type */
	r->jvm.frames[2].guard = 78;
	r->jvm.frames[2].kind = 4;
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	bprof_recording_free(r);
}

Test(roundtrip, python)
{
	struct bprof_recording *r = fx_python();
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_JIT);
	free(buf);
	check_roundtrip(fx_python());
	cr_assert_eq(bprof_recording_validate(r, &err), 0, "%s", err.message);
	/* the lookup the report names frames by */
	cr_assert_not_null(bprof_python_code_find(r, 100, 1, 0x7f0000002000ull, 0xdeadbeef - 1));
	cr_assert_null(bprof_python_code_find(r, 100, 1, 0x7f0000002000ull, 0xdeadbeef));
	cr_assert_null(bprof_python_code_find(r, 100, 2, 0x7f0000001000ull, 0xdeadbeef));
	/* two copies of one code object cannot be written */
	r->python.codes[1] = r->python.codes[0];
	r->python.codes[1].qualname = fx_strdup("x");
	r->python.codes[1].filename = fx_strdup("y");
	r->python.codes[1].linetable = NULL;
	r->python.codes[1].linetable_len = 0;
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	bprof_recording_free(r);
}

Test(roundtrip, jit)
{
	struct bprof_recording *r = fx_jit();
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_V8);
	free(buf);
	check_roundtrip(fx_jit());
	cr_assert_not_null(bprof_jitdump_find(r, 200, 1));
	cr_assert_null(bprof_jitdump_find(r, 200, 2));
	cr_assert_str_eq(bprof_jit_counter_name(0), "perf_map_bytes");
	cr_assert_null(bprof_jit_counter_name(BPROF_JIT_NR_COUNTERS));
	/* out of order: refused by the writer */
	struct bprof_jitdump t = r->jit.dumps[0];
	r->jit.dumps[0] = r->jit.dumps[1];
	r->jit.dumps[1] = t;
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	bprof_recording_free(r);
}

Test(roundtrip, v8)
{
	struct bprof_recording *r = fx_v8();
	struct bprof_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(((unsigned char *)buf)[10], BPROF_FORMAT_MINOR_NO_RT_LACKS);
	free(buf);
	check_roundtrip(fx_v8());
	/* the lookup the report names frames by: the guard is part of the key */
	cr_assert_not_null(bprof_v8_sfi_find(r, 100, 1, 0x3f0000001001ull, 0xcafef00d));
	cr_assert_null(bprof_v8_sfi_find(r, 100, 1, 0x3f0000001001ull, 0xcafef00e));
	cr_assert_null(bprof_v8_sfi_find(r, 100, 2, 0x3f0000001001ull, 0xcafef00d));
	cr_assert_str_eq(bprof_v8_counter_name(0), "sfis_announced");
	cr_assert_null(bprof_v8_counter_name(BPROF_V8_NR_COUNTERS));
	/* the row an optimized frame's offset is at */
	cr_assert_eq(r->v8.sfis[1].pos[1].nr_frames, 2);
	/* rows out of order cannot be written */
	r->v8.sfis[1].pos[1].code_offset = 0;
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	r->v8.sfis[1].pos[1].code_offset = 0x40;
	/* two entries for one (SFI, guard) cannot be written */
	free(r->v8.sfis[1].name);
	free(r->v8.sfis[1].script);
	r->v8.sfis[1] = r->v8.sfis[0];
	r->v8.sfis[1].name = fx_strdup("x");
	r->v8.sfis[1].script = fx_strdup("y");
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), BPROF_E_INVAL);
	bprof_recording_free(r);
}

/* What the recording kernel could not walk (META flags 4 to 7): each
 * comes back, and the file says the oldest minor that defines it (a 1.9
 * reader would refuse flags 6 and 7 in a file it reads strictly). */
Test(roundtrip, meta_lacks_minor)
{
	static const struct {
		uint32_t flags;
		unsigned minor;
	} cases[] = {
		{ BPROF_META_NO_GENERATIONS, BPROF_FORMAT_MINOR_NO_V8 },
		{ BPROF_META_NO_PYTHON_WALK, BPROF_FORMAT_MINOR_NO_V8 },
		{ BPROF_META_NO_V8_WALK, BPROF_FORMAT_MINOR },
		{ BPROF_META_NO_JVM_WALK, BPROF_FORMAT_MINOR },
		{ BPROF_META_NO_PYTHON_WALK | BPROF_META_NO_V8_WALK | BPROF_META_NO_JVM_WALK,
		  BPROF_FORMAT_MINOR },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bprof_recording *r = fx_typical(), *back;
		struct bprof_error err = { 0 };
		void *buf = NULL;
		size_t len = 0;

		r->meta.flags |= cases[i].flags;
		cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
		cr_assert_eq(((unsigned char *)buf)[10], cases[i].minor, "flags 0x%x: minor %u, want %u",
			     cases[i].flags, ((unsigned char *)buf)[10], cases[i].minor);
		cr_assert_eq(bprof_read_buffer(&back, buf, len, NULL, &err), 0, "%s", err.message);
		cr_assert_eq(back->meta.flags & cases[i].flags, cases[i].flags);
		bprof_recording_free(back);
		free(buf);
		check_roundtrip(r);
	}
	cr_assert_eq(BPROF_FORMAT_MINOR, 10);
}
