/* SPDX-License-Identifier: Apache-2.0 */
/* misc.c - perf maps, kallsyms, normalization and hostile inputs. */
#include "helpers.h"

static struct bsym_ctx *mkctx(unsigned flags)
{
	struct bsym_opts o = { .sz = sizeof(o),
			       .flags = flags | BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	return ctx;
}

/* ---- perf maps ---- */

Test(perfmap, valid_lines)
{
	struct bsym_ctx *ctx = mkctx(0);
	const char *text = "7f0000001000 100 LazyCompile:*foo bar.js:1\n"
			   "0x7f0000002000 0x20 _ZN4core3fmt5write17h0123456789abcdefE\r\n"
			   "7f0000003000 10 _ZN2ns3fooEv\n"
			   "7f0000003000 8 newer_overlap";
	uint32_t id;
	cr_assert_eq(bsym_perfmap_register(ctx, text, strlen(text), &id), 0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x7f0000001080, &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_eq(r->nr_frames, 1);
	cr_assert_str_eq(r->frames[0].name, "LazyCompile:*foo bar.js:1");
	cr_assert_eq(r->frames[0].offset, 0x80);
	cr_assert_eq(r->frames[0].kind, BSYM_FRAME_JIT);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x7f0000002004, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "core::fmt::write");
	cr_assert_str_eq(r->frames[0].raw_name, "_ZN4core3fmt5write17h0123456789abcdefE");
	/* two names over one address, no time: no choice (SPEC.md 6.16) */
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x7f0000003004, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT_AMBIGUOUS);
	cr_assert_eq(r->nr_frames, 0);
	/* past the newer line's end only the older one covers it */
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x7f000000300c, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "ns::foo()");
	/* end is exclusive; gaps and before-first are JIT misses */
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x7f0000001100, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	cr_assert_eq(r->nr_frames, 0);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x10, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id + 1, 0x10, &r), -EINVAL);
	bsym_destroy(ctx);
}

Test(perfmap, malformed_lines_are_skipped)
{
	struct bsym_ctx *ctx = mkctx(0);
	static const char text[] = "\n"
				   "garbage\n"
				   "1000\n"
				   "1000 20\n"
				   "1000 20    \n"
				   "zz00 20 bad_start\n"
				   "1000 zz bad_size\n"
				   "1000 0 zero_size\n"
				   "11111111111111111111 20 overflow\n"
				   "2000 20 good\0 embedded nul\n"
				   "3000 20 good3\n"
				   "ffffffffffffff00 1000 wraps\n"
				   "4000 10 last_without_newline";
	uint32_t id;
	cr_assert_eq(bsym_perfmap_register(ctx, text, sizeof(text) - 1, &id), 0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x1005, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x2005, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT); /* the NUL line was dropped */
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x3005, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "good3");
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0xfffffffffffffffe, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "wraps");
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x400f, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "last_without_newline");
	uint32_t empty;
	cr_assert_eq(bsym_perfmap_register(ctx, NULL, 0, &empty), 0);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, empty, 0x3005, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	bsym_destroy(ctx);
}

Test(perfmap, reuse_same_name_is_named_different_names_are_not)
{
	struct bsym_ctx *ctx = mkctx(0);
	/* V8 recompiles a function at a reused address: same name, named (the
	 * newest line's offset); another function there: ambiguous; a line far
	 * below that covers the address through its size still counts */
	const char *text = "1000 100 JS:~hot a.js:1\n"
			   "1000 80 JS:~hot a.js:1\n"
			   "2000 100 JS:~old a.js:2\n"
			   "2040 20 JS:*new a.js:3\n"
			   "8000 10000 JS:big a.js:4\n";
	char many[64 * 1024];
	size_t n = 0;
	uint32_t id, id2;
	const struct bsym_result *r;

	cr_assert_eq(bsym_perfmap_register(ctx, text, strlen(text), &id), 0);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x1010, &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[0].name, "JS:~hot a.js:1");
	cr_assert_eq(r->frames[0].offset, 0x10);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x2010, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:~old a.js:2");
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x2050, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT_AMBIGUOUS);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id, 0x2070, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:~old a.js:2");
	/* many small lines between the big one and the address */
	n += (size_t)snprintf(many + n, sizeof(many) - n, "100000 ffff JS:outer x.js:1\n");
	for (unsigned i = 0; i < 2000; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%x 8 JS:inner%u x.js:2\n",
				      0x100000 + 16 * i, i);
	cr_assert_eq(bsym_perfmap_register(ctx, many, n, &id2), 0);
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id2, 0x100000 + 16 * 1999 + 4, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT_AMBIGUOUS, "the outer line covers it too");
	cr_assert_eq(bsym_symbolize_perfmap(ctx, id2, 0x100000 + 16 * 1999 + 12, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:outer x.js:1");
	bsym_destroy(ctx);
}

/* ---- jitdump ---- */

struct jd_buf {
	uint8_t b[8192];
	size_t n;
};

static void jd_put(struct jd_buf *j, const void *p, size_t n)
{
	cr_assert_leq(j->n + n, sizeof(j->b));
	memcpy(j->b + j->n, p, n);
	j->n += n;
}

static void jd_u32(struct jd_buf *j, uint32_t v) { jd_put(j, &v, 4); }
static void jd_u64(struct jd_buf *j, uint64_t v) { jd_put(j, &v, 8); }

static void jd_header(struct jd_buf *j, uint64_t flags)
{
	jd_u32(j, 0x4A695444);
	jd_u32(j, 1);
	jd_u32(j, 40);
	jd_u32(j, 62); /* EM_X86_64 */
	jd_u32(j, 0);
	jd_u32(j, 1234);
	jd_u64(j, 1);
	jd_u64(j, flags);
}

static void jd_load(struct jd_buf *j, uint64_t ts, uint64_t addr, uint64_t size, const char *name,
		    size_t code_bytes)
{
	size_t nl = strlen(name) + 1;
	jd_u32(j, 0);
	jd_u32(j, (uint32_t)(16 + 40 + nl + code_bytes));
	jd_u64(j, ts);
	jd_u32(j, 1234);
	jd_u32(j, 1234);
	jd_u64(j, addr);
	jd_u64(j, addr);
	jd_u64(j, size);
	jd_u64(j, 7);
	jd_put(j, name, nl);
	for (size_t i = 0; i < code_bytes; i++)
		jd_put(j, "\xcc", 1);
}

static void jd_move(struct jd_buf *j, uint64_t ts, uint64_t old, uint64_t nw, uint64_t size)
{
	jd_u32(j, 1);
	jd_u32(j, 16 + 48);
	jd_u64(j, ts);
	jd_u32(j, 1234);
	jd_u32(j, 1234);
	jd_u64(j, nw);
	jd_u64(j, old);
	jd_u64(j, nw);
	jd_u64(j, size);
	jd_u64(j, 7);
}

/* debug info for code at addr: lines (addr + 0x10 * i, 10 + i) in file */
static void jd_debug(struct jd_buf *j, uint64_t ts, uint64_t addr, unsigned nr, const char *file)
{
	size_t fl = strlen(file) + 1, size = 16 + 16 + fl + 16;
	for (unsigned i = 1; i < nr; i++)
		size += 16 + 2; /* "\xff\0": the previous entry's file */
	jd_u32(j, 2);
	jd_u32(j, (uint32_t)size);
	jd_u64(j, ts);
	jd_u64(j, addr);
	jd_u64(j, nr);
	for (unsigned i = 0; i < nr; i++) {
		jd_u64(j, addr + 0x10 * i);
		jd_u32(j, 10 + i);
		jd_u32(j, 0);
		if (i == 0)
			jd_put(j, file, fl);
		else
			jd_put(j, "\xff", 2);
	}
}

Test(jitdump, loads_moves_lines_and_time)
{
	struct bsym_ctx *ctx = mkctx(0);
	struct jd_buf j = { .n = 0 };
	const struct bsym_result *r;
	uint32_t id;
	size_t loads, lines;

	jd_header(&j, 0);
	jd_debug(&j, 100, 0x1000, 3, "hot.js");
	jd_load(&j, 100, 0x1000, 0x100, "JS:*hot", 64);
	jd_load(&j, 200, 0x2000, 0x100, "JS:*old", 0);
	jd_load(&j, 500, 0x2000, 0x80, "JS:*new", 0); /* reuses old's address */
	jd_move(&j, 600, 0x1000, 0x5000, 0x100);
	jd_u32(&j, 3); /* close */
	jd_u32(&j, 16);
	jd_u64(&j, 700);
	cr_assert_eq(bsym_jitdump_register(ctx, j.b, j.n, &id), 0);
	bsym_jitdump_counts(ctx, id, &loads, &lines);
	cr_assert_eq(loads, 4);
	cr_assert_eq(lines, 3);

	/* loaded before the window: named, with its line */
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x1024, 150, 160, &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[0].name, "JS:*hot");
	cr_assert_eq(r->frames[0].offset, 0x24);
	cr_assert_str_eq(r->frames[0].file, "hot.js");
	cr_assert_eq(r->frames[0].line, 12);
	/* before its load: not this code */
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x1024, 10, 50, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	/* reuse: old before new's load, new after it, ambiguous across it */
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2010, 300, 400, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:*old");
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2010, 500, 900, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:*new");
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2010, 300, 900, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT_AMBIGUOUS);
	/* past new's end only old ever covered it */
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2090, 300, 900, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:*old");
	/* time unknown: one name or nothing */
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2010, 0, 0, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT_AMBIGUOUS);
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x1010, 0, 0, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:*hot");
	/* moved code keeps its name and its lines */
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x5014, 650, 700, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "JS:*hot");
	cr_assert_eq(r->frames[0].line, 11);
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x5014, 500, 550, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	/* the same question answers the same (cached) */
	const struct bsym_result *again;
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2010, 300, 400, &again), 0);
	cr_assert_str_eq(again->frames[0].name, "JS:*old");
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id + 1, 0x2010, 300, 400, &r), -EINVAL);
	bsym_destroy(ctx);
}

Test(jitdump, hostile_bytes)
{
	struct bsym_ctx *ctx = mkctx(0);
	struct jd_buf j = { .n = 0 };
	const struct bsym_result *r;
	uint32_t id;
	size_t loads, lines;

	/* not a jitdump: bad magic, swapped magic, version, short header */
	cr_assert_eq(bsym_jitdump_register(ctx, "DTiJ", 4, &id), -EINVAL);
	cr_assert_eq(id, BSYM_NO_OBJECT);
	jd_header(&j, 0);
	j.b[0] ^= 0xff;
	cr_assert_eq(bsym_jitdump_register(ctx, j.b, j.n, &id), -EINVAL);
	j.b[0] ^= 0xff;
	j.b[4] = 2;
	cr_assert_eq(bsym_jitdump_register(ctx, j.b, j.n, &id), -EINVAL);
	j.b[4] = 1;
	j.b[8] = 200; /* header longer than the file */
	cr_assert_eq(bsym_jitdump_register(ctx, j.b, j.n, &id), -EINVAL);
	j.b[8] = 40;

	jd_load(&j, 10, 0x1000, 0x10, "good", 0);
	/* a load whose name has no NUL in its record: skipped */
	size_t at = j.n;
	jd_load(&j, 20, 0x3000, 0x10, "unterminated", 0);
	j.b[j.n - 1] = 'x';
	(void)at;
	/* a load whose range wraps: skipped */
	jd_load(&j, 30, 0xfffffffffffffff0, 0x100, "wraps", 0);
	/* debug info claiming more entries than fit: skipped */
	jd_u32(&j, 2);
	jd_u32(&j, 16 + 16);
	jd_u64(&j, 40);
	jd_u64(&j, 0x4000);
	jd_u64(&j, 1000000);
	/* a move of code never loaded: skipped */
	jd_move(&j, 50, 0x9000, 0xa000, 0x10);
	jd_load(&j, 60, 0x2000, 0x10, "still_good", 0);
	/* a record claiming more than remains: the parse ends there */
	jd_u32(&j, 0);
	jd_u32(&j, 4000);
	jd_u64(&j, 70);
	jd_load(&j, 80, 0x6000, 0x10, "after_the_end", 0);
	cr_assert_eq(bsym_jitdump_register(ctx, j.b, j.n, &id), 0);
	bsym_jitdump_counts(ctx, id, &loads, &lines);
	cr_assert_eq(loads, 2);
	cr_assert_eq(lines, 0);
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x1004, 100, 200, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "good");
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x2004, 100, 200, &r), 0);
	cr_assert_str_eq(r->frames[0].name, "still_good");
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x3004, 100, 200, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	cr_assert_eq(bsym_symbolize_jitdump(ctx, id, 0x6004, 100, 200, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_JIT);
	/* every prefix of the file parses (a dump cut while being written) */
	for (size_t n = 0; n <= j.n; n++) {
		uint32_t pid_;
		int rc = bsym_jitdump_register(ctx, j.b, n, &pid_);
		cr_assert(rc == 0 || rc == -EINVAL);
		cr_assert_eq(rc == 0, n >= 40);
	}
	bsym_destroy(ctx);
}

/* ---- kernel ---- */

static const struct bsym_kmodule kmods[] = {
	{ .name = "ext4", .base = 0xffffffffc0000000, .size = 0x10000 },
	{ .name = "xfs", .base = 0xffffffffc0100000, .size = 0x8000 },
};
static const struct bsym_ksym ksyms[] = {
	{ 0xffffffff81000000, "_stext", BSYM_NO_OBJECT },
	{ 0xffffffff81000100, "do_syscall_64", BSYM_NO_OBJECT },
	{ 0xffffffff81000400, "schedule", BSYM_NO_OBJECT },
	{ 0xffffffffc0000000, "ext4_readpage", 0 },
	{ 0xffffffffc0000800, "ext4_writepage", 0 },
	{ 0xffffffffc0100000, "xfs_iread", 1 },
	{ 0xffffffffc0100100, "bogus_module", 77 },
};

static struct bsym_kernel_desc kdesc(const struct bsym_ksym *s, size_t n)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct bsym_kernel_desc d = { .sz = sizeof(d), .release = "6.1.0-test",
				      .build_id = bid, .build_id_len = sizeof(bid),
				      .stext = 0xffffffff81000000, .modules = kmods,
				      .nr_modules = 2, .ksyms = s, .nr_ksyms = n };
	return d;
}

static const char *kname(struct bsym_ctx *ctx, uint32_t k, uint64_t a)
{
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, a, &r), 0);
	if (r->reason != BSYM_OK) {
		cr_assert_eq(r->nr_frames, 0);
		return NULL;
	}
	cr_assert_eq(r->frames[0].kind, BSYM_FRAME_KERNEL);
	return r->frames[0].name;
}

Test(kernel, kallsyms_lookup_gaps_and_modules)
{
	struct bsym_ctx *ctx = mkctx(0);
	struct bsym_kernel_desc d = kdesc(ksyms, sizeof(ksyms) / sizeof(ksyms[0]));
	uint32_t k, k2;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k2), 0);
	cr_assert_eq(k, k2);
	cr_assert_null(kname(ctx, k, 0xffffffff80000000)); /* before the first */
	cr_assert_str_eq(kname(ctx, k, 0xffffffff81000000), "_stext");
	cr_assert_str_eq(kname(ctx, k, 0xffffffff81000150), "do_syscall_64");
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, 0xffffffff81000150, &r), 0);
	cr_assert_eq(r->frames[0].offset, 0x50);
	cr_assert_str_eq(kname(ctx, k, 0xffffffff81000500), "schedule");
	cr_assert_null(kname(ctx, k, 0xffffffff90000000));     /* far past the last */
	cr_assert_str_eq(kname(ctx, k, 0xffffffffc0000900), "ext4_writepage");
	cr_assert_null(kname(ctx, k, 0xffffffffc0010000));     /* past the end of ext4 */
	cr_assert_null(kname(ctx, k, 0xffffffffc00f0000));     /* gap between modules */
	cr_assert_str_eq(kname(ctx, k, 0xffffffffc0100010), "xfs_iread");
	/* a symbol with an out-of-range module index counts as vmlinux: it
	 * must not name addresses inside xfs */
	cr_assert_null(kname(ctx, k, 0xffffffffc0100200));
	bsym_destroy(ctx);
}

Test(kernel, unsorted_kallsyms_are_sorted)
{
	struct bsym_ksym s[] = {
		{ 0x3000, "c", BSYM_NO_OBJECT },
		{ 0x1000, "a", BSYM_NO_OBJECT },
		{ 0x2000, "b", BSYM_NO_OBJECT },
		{ 0x2800, NULL, BSYM_NO_OBJECT },
	};
	struct bsym_ctx *ctx = mkctx(0);
	struct bsym_kernel_desc d = kdesc(s, 4);
	d.nr_modules = 0;
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	cr_assert_str_eq(kname(ctx, k, 0x1800), "a");
	cr_assert_str_eq(kname(ctx, k, 0x2900), "b");
	cr_assert_str_eq(kname(ctx, k, 0x3001), "c");
	bsym_destroy(ctx);
}

/* Recordings of one boot each keep the kallsyms entries their samples
 * needed: registered together, the tables merge, so an address only the
 * second sampled is not named from the first's nearest entry below. */
Test(kernel, same_boot_tables_merge)
{
	struct bsym_ksym a[] = { { 0x1000, "a", BSYM_NO_OBJECT }, { 0x4000, "d", BSYM_NO_OBJECT } };
	struct bsym_ksym b[] = {
		{ 0x3000, "c", BSYM_NO_OBJECT }, { 0x1000, "a", BSYM_NO_OBJECT },
		{ 0x1000, "a_alias", BSYM_NO_OBJECT },
	};
	struct bsym_ctx *ctx = mkctx(0);
	struct bsym_kernel_desc da = kdesc(a, 2), db = kdesc(b, 3);
	uint32_t ka, kb, kc;
	da.nr_modules = db.nr_modules = 0;
	cr_assert_eq(bsym_kernel_register(ctx, &da, &ka), 0);
	cr_assert_eq(bsym_kernel_register(ctx, &db, &kb), 0);
	cr_assert_eq(ka, kb);
	cr_assert_str_eq(kname(ctx, ka, 0x3010), "c"); /* not "a" */
	cr_assert_str_eq(kname(ctx, ka, 0x1010), "a"); /* the first registered name */
	cr_assert_str_eq(kname(ctx, ka, 0x4010), "d");
	/* once it has answered, a kernel is not extended: another id */
	struct bsym_ksym c[] = { { 0x2000, "b", BSYM_NO_OBJECT } };
	struct bsym_kernel_desc dc = kdesc(c, 1);
	dc.nr_modules = 0;
	cr_assert_eq(bsym_kernel_register(ctx, &dc, &kc), 0);
	cr_assert_neq(kc, ka);
	cr_assert_str_eq(kname(ctx, ka, 0x2010), "a");
	cr_assert_str_eq(kname(ctx, kc, 0x2010), "b");
	/* other modules (another boot's layout): another id */
	struct bsym_kernel_desc dm = kdesc(ksyms, sizeof(ksyms) / sizeof(ksyms[0]));
	uint32_t km, km2;
	cr_assert_eq(bsym_kernel_register(ctx, &dm, &km), 0);
	cr_assert_neq(km, kc);
	dm.nr_modules = 1;
	cr_assert_eq(bsym_kernel_register(ctx, &dm, &km2), 0);
	cr_assert_neq(km2, km);
	bsym_destroy(ctx);
}

Test(kernel, no_symbols_at_all)
{
	struct bsym_ctx *ctx = mkctx(0);
	struct bsym_kernel_desc d = kdesc(NULL, 0);
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, 0xffffffff81000100, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_KERNEL_NO_SYMBOLS);
	cr_assert_eq(bsym_symbolize_kernel(ctx, k + 1, 0, &r), -EINVAL);
	bsym_destroy(ctx);
}

Test(kernel, vmlinux_with_wrong_build_id_is_refused)
{
	/* any ELF with another build-id stands in for a wrong vmlinux */
	struct bsym_opts o = { .sz = sizeof(o), .vmlinux = fx("prog-gcc"),
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_kernel_desc d = kdesc(NULL, 0);
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, 0x1140, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_KERNEL_NO_SYMBOLS);
	bsym_destroy(ctx);
}

Test(kernel, vmlinux_by_build_id_with_kaslr_bias)
{
	/* a user binary plays vmlinux: build-id checked, names from DWARF at
	 * bias = runtime _stext - link-time _stext (here: "work") */
	const char *bin = fx("prog-gcc");
	struct fx_bid b = fx_build_id(bin);
	struct bsym_opts o = { .sz = sizeof(o), .vmlinux = bin,
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_kernel_desc d = { .sz = sizeof(d), .build_id = b.b, .build_id_len = b.n };
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	uint64_t a = fx_sym(bin, "helper_static", NULL);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, a + 1, &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "helper_static");
	cr_assert_eq(r->frames[0].kind, BSYM_FRAME_KERNEL);
	bsym_destroy(ctx);
}

/* ---- normalize ---- */

Test(normalize, binary_search)
{
	struct bsym_mapping m[] = {
		{ 0x400000, 0x401000, 0, 0, 0 },
		{ 0x401000, 0x405000, 0x1000, 0, 0 },
		{ 0x7f0000000000, 0x7f0000001000, 0, BSYM_NO_OBJECT, BSYM_MAP_ANON },
		{ 0x7f0000010000, 0x7f0000020000, 0x3000, 2, 0 },
	};
	uint32_t obj, fl;
	uint64_t off;
	cr_assert_eq(bsym_normalize(m, 4, 0x3fffff, &obj, &off, &fl), -ENOENT);
	cr_assert_eq(bsym_normalize(m, 4, 0x400010, &obj, &off, &fl), 0);
	cr_assert_eq(obj, 0);
	cr_assert_eq(off, 0x10);
	cr_assert_eq(bsym_normalize(m, 4, 0x402345, &obj, &off, NULL), 0);
	cr_assert_eq(off, 0x2345);
	cr_assert_eq(bsym_normalize(m, 4, 0x405000, &obj, &off, &fl), -ENOENT);
	cr_assert_eq(bsym_normalize(m, 4, 0x7f0000000010, &obj, &off, &fl), 0);
	cr_assert_eq(obj, BSYM_NO_OBJECT);
	cr_assert_eq(fl, BSYM_MAP_ANON);
	cr_assert_eq(bsym_normalize(m, 4, 0x7f000001ffff, &obj, &off, &fl), 0);
	cr_assert_eq(obj, 2);
	cr_assert_eq(off, 0x3000 + 0xffff);
	cr_assert_eq(bsym_normalize(m, 4, UINT64_MAX, &obj, &off, &fl), -ENOENT);
	cr_assert_eq(bsym_normalize(NULL, 0, 0x1000, &obj, &off, &fl), -ENOENT);
	cr_assert_eq(bsym_normalize(NULL, 3, 0x1000, &obj, &off, &fl), -EINVAL);
}

/* ---- hostile inputs ---- */

Test(hostile, bad_ids_and_lengths)
{
	struct bsym_ctx *ctx = mkctx(0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, 0, 0, &r), -EINVAL);
	cr_assert_eq(bsym_symbolize_offset(ctx, BSYM_NO_OBJECT, 0, &r), -EINVAL);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, 3, &info), -EINVAL);
	uint8_t big[65] = { 0 };
	struct bsym_object_desc d = { .sz = sizeof(d), .path = "/x", .build_id = big,
				      .build_id_len = 65 };
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), -EINVAL);
	cr_assert_eq(id, BSYM_NO_OBJECT);
	/* every length 1..64, odd bytes in paths, absurd offsets */
	for (size_t len = 1; len <= 64; len++) {
		memset(big, (int)len, sizeof(big));
		d.build_id_len = len;
		d.path = len & 1 ? "/dev/zero" : "\x01\xff/../../\n%s%n";
		cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
		static const uint64_t offs[] = { 0, 1, 0x1000, UINT64_MAX, UINT64_MAX - 1,
						 0x8000000000000000ULL };
		for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			cr_assert_eq(bsym_symbolize_offset(ctx, id, offs[i], &r), 0);
			cr_assert_neq(r->reason, BSYM_OK);
			cr_assert_eq(r->nr_frames, 0);
		}
	}
	bsym_destroy(ctx);
}

Test(hostile, absurd_offsets_in_a_real_object)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(0);
	struct bsym_object_desc d = { .sz = sizeof(d), .path = fx("prog-gcc"), .build_id = b.b,
				      .build_id_len = b.n };
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	static const uint64_t offs[] = { UINT64_MAX, UINT64_MAX - 0x1000, 0x10000000, 0x7fffffffffff };
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_offset(ctx, id, offs[i], &r), 0);
		cr_assert_eq(r->reason, BSYM_R_INVALID);
	}
	bsym_destroy(ctx);
}

static char tmpdir[64];

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	fwrite(data, 1, n, f);
	fclose(f);
}


/* Copy src with its .debug_* sections scribbled over (seeded), to path. */
static void corrupt_copy(const char *src, const char *path, unsigned seed, unsigned rate)
{
	FILE *f = fopen(src, "rb");
	cr_assert(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = malloc((size_t)n);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	int fd = open(src, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstr;
	elf_getshdrstrndx(e, &shstr);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(e, shstr, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7) || sh.sh_type == SHT_NOBITS)
			continue;
		for (uint64_t k = 0; k < sh.sh_size; k++) {
			seed = seed * 1103515245 + 12345;
			if ((seed >> 8) % rate == 0)
				buf[sh.sh_offset + k] = (unsigned char)(seed >> 24);
		}
	}
	elf_end(e);
	close(fd);
	write_file(path, buf, (size_t)n);
	free(buf);
}

/* A debug file with the right build-id but corrupt DWARF is used: libdw's
 * errors may only cost names, never crash or hang. */
static void corrupt_run(const char *bin, const char *dbg)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bsym-test-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
	char path[128];
	snprintf(path, sizeof(path), "%s/corrupt.debug", tmpdir);
	struct fx_bid b = fx_build_id(bin);
	uint64_t sz, a = fx_sym(bin, "work", &sz), a2 = fx_sym(bin, "outer", NULL);
	static const unsigned rates[] = { 7, 50, 1000, 20000 };
	for (unsigned seed = 1; seed <= 12; seed++) {
		corrupt_copy(dbg, path, seed, rates[seed % 4]);
		const char *dirs[] = { tmpdir };
		struct bsym_opts o = { .sz = sizeof(o), .debug_dirs = dirs, .nr_debug_dirs = 1,
				       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
		struct bsym_ctx *ctx;
		cr_assert_eq(bsym_create(&ctx, &o), 0);
		struct bsym_object_desc d = { .sz = sizeof(d), .build_id = b.b, .build_id_len = b.n };
		uint32_t id;
		cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
		for (uint64_t k = 0; k < sz; k += 3) {
			const struct bsym_result *r;
			uint64_t off = fx_vaddr_to_off(bin, (k & 1 ? a2 : a) + k % sz);
			cr_assert_eq(bsym_symbolize_offset(ctx, id, off, &r), 0);
			for (uint32_t i = 0; i < r->nr_frames; i++)
				cr_assert_not_null(r->frames[i].name);
		}
		bsym_destroy(ctx);
	}
	unlink(path);
	rmdir(tmpdir);
}

Test(hostile, corrupt_dwarf_clang)
{
	corrupt_run(fx("prog-clang"), fx("plain/whatever-name.dbg"));
}

Test(hostile, corrupt_dwarf_gcc)
{
	corrupt_run(fx("prog-gcc"), fx("dl/prog.debug"));
}

Test(hostile, garbage_files_in_debug_dir)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bsym-test-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
	char path[160];
	snprintf(path, sizeof(path), "%s/not-elf", tmpdir);
	write_file(path, "\x7f" "ELF garbage garbage", 20);
	char fifo[160];
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	cr_assert_eq(mkfifo(fifo, 0600), 0); /* must not block the scan */
	const char *dirs[] = { tmpdir };
	struct bsym_opts o = { .sz = sizeof(o), .debug_dirs = dirs, .nr_debug_dirs = 1,
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	uint8_t bid[64];
	memset(bid, 0xab, sizeof(bid));
	struct bsym_object_desc d = { .sz = sizeof(d), .path = fifo, .build_id = bid, .build_id_len = 64 };
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1000, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);
	bsym_destroy(ctx);
	unlink(path);
	unlink(fifo);
	rmdir(tmpdir);
}

Test(api, reason_strings_and_null_args)
{
	for (int i = 0; i <= BSYM_R_INVALID; i++)
		cr_assert_not_null(bsym_reason_str((enum bsym_reason)i));
	cr_assert_not_null(bsym_reason_str((enum bsym_reason)999));
	cr_assert_eq(bsym_create(NULL, NULL), -EINVAL);
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, NULL), 0);
	bsym_destroy(ctx);
	bsym_destroy(NULL);
}

/* Where the kernel would put symbol fn of a module loaded at base: its
 * core text sections in order, each aligned (layout_sections()). */
static uint64_t kmod_runtime_addr(const char *ko, uint64_t base, const char *fn)
{
	int fd = open(ko, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstr;
	elf_getshdrstrndx(e, &shstr);
	uint64_t off = 0, secoff[256] = { 0 };
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		const char *nm = elf_strptr(e, shstr, sh.sh_name);
		if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    !strncmp(nm, ".init", 5))
			continue;
		uint64_t al = sh.sh_addralign ? sh.sh_addralign : 1;
		off = (off + al - 1) / al * al;
		if (elf_ndxscn(s) < 256)
			secoff[elf_ndxscn(s)] = off;
		off += sh.sh_size;
	}
	uint64_t r = 0;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			gelf_getsym(d, (int)i, &sym);
			const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
			if (nm && !strcmp(nm, fn) && sym.st_shndx < 256)
				r = base + secoff[sym.st_shndx] + sym.st_value;
		}
	}
	elf_end(e);
	close(fd);
	cr_assert_neq(r, 0, "%s not in %s", fn, ko);
	return r;
}

Test(kernel, module_debuginfo_by_build_id)
{
	const char *ko = fx("kmod.ko");
	struct fx_bid b = fx_build_id(ko);
	const char *dirs[] = { fx("tree-kmod") };
	struct bsym_opts o = { .sz = sizeof(o), .debug_dirs = dirs, .nr_debug_dirs = 1,
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	const uint64_t base = 0xffffffffc0400000;
	struct bsym_kmodule m = { .name = "kmod", .base = base, .size = 0x4000,
				  .build_id = b.b, .build_id_len = b.n };
	struct bsym_ksym ks[] = { { base, "kallsyms_name_only", 0 } };
	struct bsym_kernel_desc d = { .sz = sizeof(d), .modules = &m, .nr_modules = 1,
				      .ksyms = ks, .nr_ksyms = 1 };
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	static const char *fns[] = { "kmod_alpha", "kmod_cold" };
	for (int i = 0; i < 2; i++) {
		uint64_t a = kmod_runtime_addr(ko, base, fns[i]);
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_kernel(ctx, k, a + 1, &r), 0);
		cr_assert_eq(r->reason, BSYM_OK);
		const struct bsym_frame *f = &r->frames[r->nr_frames - 1];
		cr_assert_str_eq(f->name, fns[i]);
		cr_assert_eq(f->offset, 1);
		cr_assert_eq(f->kind, BSYM_FRAME_KERNEL);
		cr_assert_str_eq(fx_base(r->frames[0].file), "kmod.c");
	}
	/* an inlined frame inside kmod_alpha */
	uint64_t sz, a0 = kmod_runtime_addr(ko, base, "kmod_alpha");
	fx_sym(ko, "kmod_alpha", &sz);
	bool inl = false;
	for (uint64_t i = 0; i < sz; i++) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_kernel(ctx, k, a0 + i, &r), 0);
		if (r->nr_frames == 2 && !strcmp(r->frames[0].name, "kmod_inl"))
			inl = true;
	}
	cr_assert(inl);
	bsym_destroy(ctx);

	/* without the debug tree: kallsyms */
	o.nr_debug_dirs = 0;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	cr_assert_str_eq(kname(ctx, k, base + 0x10), "kallsyms_name_only");
	bsym_destroy(ctx);
}

static void count_warn(void *arg, enum bsym_log_level l, const char *msg)
{
	if (l == BSYM_LOG_WARN && strstr(msg, "RLIMIT_NOFILE"))
		(*(int *)arg)++;
}

Test(hostile, out_of_file_descriptors_is_announced)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	int warned = 0;
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD,
			       .log = count_warn, .log_arg = &warned };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_object_desc d = { .sz = sizeof(d), .path = fx("prog-gcc"), .build_id = b.b,
				      .build_id_len = b.n };
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	int t = open("/dev/null", O_RDONLY);
	close(t);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = (rlim_t)t; /* no descriptor left */
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1100, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);
	cr_assert_eq(warned, 1);
	bsym_destroy(ctx);
}

Test(kernel, vmlinux_kaslr_bias_and_inlines)
{
	const char *vm = fx("vmlinux");
	struct fx_bid b = fx_build_id(vm);
	uint64_t link_stext = fx_sym(vm, "_stext", NULL);
	const uint64_t slide = 0x1a00000;
	/* found by build-id in a debug dir: DIR/.build-id/xx/rest.debug */
	char dir[] = "/tmp/bsym-vm-XXXXXX";
	cr_assert(mkdtemp(dir));
	char cmd[PATH_MAX * 3];
	char hex[129] = "";
	for (size_t i = 1; i < b.n; i++)
		sprintf(hex + 2 * (i - 1), "%02x", b.b[i]);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%02x && cp '%s' %s/.build-id/%02x/%s.debug",
		 dir, b.b[0], vm, dir, b.b[0], hex);
	cr_assert_eq(system(cmd), 0);
	const char *dirs[] = { dir };
	struct bsym_opts o = { .sz = sizeof(o), .debug_dirs = dirs, .nr_debug_dirs = 1,
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_kernel_desc d = { .sz = sizeof(d), .release = "test", .build_id = b.b,
				      .build_id_len = b.n, .stext = link_stext + slide };
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &d, &k), 0);
	uint64_t sz, a = fx_sym(vm, "do_work_kernel", &sz);
	bool inl = false;
	for (uint64_t i = 0; i < sz; i++) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_kernel(ctx, k, a + slide + i, &r), 0);
		cr_assert_eq(r->reason, BSYM_OK);
		const struct bsym_frame *f = &r->frames[r->nr_frames - 1];
		cr_assert_str_eq(f->name, "do_work_kernel");
		cr_assert_eq(f->offset, i);
		cr_assert_eq(f->kind, BSYM_FRAME_KERNEL);
		if (r->nr_frames == 2) {
			cr_assert_str_eq(r->frames[0].name, "vm_inl");
			cr_assert_eq(r->frames[0].kind, BSYM_FRAME_KERNEL);
			inl = true;
		}
	}
	cr_assert(inl);
	/* the unslid address is not do_work_kernel */
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, a + 1, &r), 0);
	cr_assert(r->reason != BSYM_OK || strcmp(r->frames[r->nr_frames - 1].name, "do_work_kernel"));
	bsym_destroy(ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
