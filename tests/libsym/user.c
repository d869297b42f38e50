/* SPDX-License-Identifier: Apache-2.0 */
/* user.c - user-space objects: debuginfo by build-id, debuglink,
 * MiniDebugInfo, C++, shared libraries, gcc and clang, refusals.  Frames are
 * compared with eu-addr2line (gcc: it needs .debug_aranges) and
 * llvm-symbolizer-14 (clang). */
#include "helpers.h"

#define EU "eu-addr2line -a -f -i -C -e "
#define LLVM "llvm-symbolizer-14 --output-style=GNU -a -f -i -C --obj="

static struct bsym_ctx *mkctx(const char *dir, unsigned flags)
{
	const char *dirs[] = { dir };
	struct bsym_opts o = {
		.sz = sizeof(o),
		.debug_dirs = dir ? dirs : NULL,
		.nr_debug_dirs = dir ? 1 : 0,
		.flags = flags | BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD,
	};
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	return ctx;
}

static uint32_t reg(struct bsym_ctx *ctx, const char *path, const struct fx_bid *b)
{
	struct bsym_object_desc d = {
		.sz = sizeof(d),
		.path = path,
		.build_id = b ? b->b : NULL,
		.build_id_len = b ? b->n : 0,
	};
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	return id;
}

/* Every byte of some functions of prog.c. */
static int prog_addrs(const char *bin, uint64_t *out, int max)
{
	static const char *fns[] = { "outer", "work", "helper_static", "main" };
	int n = 0;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t sz, a = fx_sym(bin, fns[i], &sz);
		for (uint64_t k = 0; k < sz && n < max; k++)
			out[n++] = a + k;
	}
	return n;
}

/* Symbolize the addresses of REF (an unstripped binary) through object id
 * and compare with the tool's answer on REF. */
static void compare_all(struct bsym_ctx *ctx, uint32_t id, const char *ref, const char *tool,
			const uint64_t *addrs, int n)
{
	struct fx_addr *t = calloc((size_t)n, sizeof(*t));
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "%s'%s'", tool, ref);
	fx_tool(cmd, addrs, n, t);
	int compared = 0, frames = 0;
	for (int i = 0; i < n; i++) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(ref, addrs[i]), &r), 0);
		int k = fx_compare(r, &t[i]);
		compared += k > 0;
		frames += k;
	}
	/* the tool must have named nearly everything, or we compared nothing */
	cr_assert_geq(compared, n * 9 / 10, "%s: only %d of %d addresses compared", ref, compared, n);
	cr_log_info("%s: %d addresses, %d frames identical", ref, compared, frames);
	free(t);
}

static void prog_vs_tool(const char *bin, const char *tool, const char *dir, const char *path)
{
	uint64_t addrs[4096];
	int n = prog_addrs(bin, addrs, 4096);
	cr_assert_gt(n, 50);
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(dir, 0);
	uint32_t id = reg(ctx, path, &b);
	compare_all(ctx, id, bin, tool, addrs, n);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_eq(info.status, BSYM_OK);
	cr_assert(info.has_dwarf);
	bsym_destroy(ctx);
}

Test(user, gcc_binary_matches_eu_addr2line)
{
	prog_vs_tool(fx("prog-gcc"), EU, NULL, fx("prog-gcc"));
}

Test(user, clang_binary_matches_llvm_symbolizer)
{
	prog_vs_tool(fx("prog-clang"), LLVM, NULL, fx("prog-clang"));
}

Test(user, gcc_debug_in_build_id_tree_only)
{
	/* nothing at the recorded path: the debug file alone serves */
	prog_vs_tool(fx("prog-gcc"), EU, fx("tree-gcc"), "/nonexistent/prog");
}

Test(user, clang_debug_in_build_id_tree_only)
{
	prog_vs_tool(fx("prog-clang"), LLVM, fx("tree-clang"), "/nonexistent/prog");
}

Test(user, stripped_binary_plus_build_id_tree)
{
	prog_vs_tool(fx("prog-gcc"), EU, fx("tree-gcc"), fx("prog-gcc.stripped"));
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(fx("tree-gcc"), 0);
	uint32_t id = reg(ctx, fx("prog-gcc.stripped"), &b);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_str_eq(info.elf_path, fx("prog-gcc.stripped"));
	cr_assert(info.debug_path && strstr(info.debug_path, "/.build-id/"));
	bsym_destroy(ctx);
}

Test(user, debug_file_in_plain_dir_matched_by_build_id)
{
	prog_vs_tool(fx("prog-clang"), LLVM, fx("plain"), NULL);
}

static const struct bsym_result *sym1(struct bsym_ctx *ctx, uint32_t id, const char *ref,
				      const char *fn, uint64_t delta)
{
	const struct bsym_result *r;
	uint64_t a = fx_sym(ref, fn, NULL) + delta;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(ref, a), &r), 0);
	return r;
}

Test(user, gnu_debuglink_with_good_crc)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, fx("dl/prog"), &b);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_eq(info.status, BSYM_OK);
	cr_assert(info.has_dwarf);
	cr_assert_str_eq(info.debug_path, fx("dl/prog.debug"));
	const struct bsym_result *r = sym1(ctx, id, fx("prog-gcc"), "helper_static", 4);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "helper_static");
	cr_assert_not_null(r->frames[0].file);
	bsym_destroy(ctx);
}

Test(user, gnu_debuglink_under_debug_dir_with_sysroot)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	const char *dirs[] = { fx("dlsys/debug") };
	struct bsym_opts o = { .sz = sizeof(o), .sysroot = fx("dlsys/root"), .debug_dirs = dirs,
			       .nr_debug_dirs = 1,
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	uint32_t id = reg(ctx, "/opt/app/prog", &b);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_eq(info.status, BSYM_OK);
	cr_assert_str_eq(info.elf_path, fx("dlsys/root/opt/app/prog"));
	cr_assert_str_eq(info.debug_path, fx("dlsys/debug/opt/app/prog.debug"));
	const struct bsym_result *r = sym1(ctx, id, fx("prog-gcc"), "outer", 1);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "outer");
	bsym_destroy(ctx);
}

Test(user, gnu_debuglink_with_bad_crc_is_refused)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, fx("dlbad/prog"), &b);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_null(info.debug_path);
	cr_assert_not(info.has_dwarf);
	/* a static function: only the refused file could name it */
	const struct bsym_result *r = sym1(ctx, id, fx("prog-gcc"), "helper_static", 4);
	cr_assert_neq(r->reason, BSYM_OK);
	cr_assert_eq(r->nr_frames, 0);
	bsym_destroy(ctx);
}

Test(user, minidebuginfo)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, fx("mini/prog"), &b);
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_eq(info.status, BSYM_OK);
	cr_assert_not(info.has_dwarf);
	cr_assert(info.has_symtab);
	static const char *fns[] = { "helper_static", "outer", "work", "main" };
	for (size_t i = 0; i < 4; i++) {
		const struct bsym_result *r = sym1(ctx, id, fx("prog-gcc"), fns[i], 3);
		cr_assert_eq(r->reason, BSYM_OK, "%s", fns[i]);
		cr_assert_eq(r->nr_frames, 1);
		cr_assert_str_eq(r->frames[0].name, fns[i]);
		cr_assert_eq(r->frames[0].offset, 3);
		cr_assert_null(r->frames[0].file);
	}
	bsym_destroy(ctx);
}

static void inline_chain(const char *bin, unsigned flags)
{
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(NULL, flags);
	uint32_t id = reg(ctx, bin, &b);
	uint64_t sz, a = fx_sym(bin, "outer", &sz);
	bool seen = false;
	for (uint64_t k = 0; k < sz; k++) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(bin, a + k), &r), 0);
		cr_assert_eq(r->reason, BSYM_OK);
		cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "outer");
		cr_assert_not(r->frames[r->nr_frames - 1].inlined);
		cr_assert_eq(r->frames[r->nr_frames - 1].offset, k);
		if (flags & BSYM_NO_INLINE) {
			cr_assert_eq(r->nr_frames, 1);
			/* the line is one of outer's own (prog.c:23-26), never
			 * one inside leaf() or mid() */
			if (r->frames[0].line)
				cr_assert(r->frames[0].line >= 23 && r->frames[0].line <= 26,
					  "outer+%#lx: line %u", (unsigned long)k, r->frames[0].line);
			continue;
		}
		if (r->nr_frames == 3) {
			seen = true;
			cr_assert_str_eq(r->frames[0].name, "leaf");
			cr_assert_str_eq(r->frames[1].name, "mid");
			cr_assert(r->frames[0].inlined && r->frames[1].inlined);
			cr_assert_eq(r->frames[0].offset, 0);
			cr_assert_str_eq(fx_base(r->frames[1].file), "prog.c");
			cr_assert_gt(r->frames[1].line, 0);
		}
	}
	if (!(flags & BSYM_NO_INLINE))
		cr_assert(seen, "no leaf <- mid <- outer chain in %s", bin);
	bsym_destroy(ctx);
}

Test(user, inline_chain_order_gcc)
{
	inline_chain(fx("prog-gcc"), 0);
}
Test(user, inline_chain_order_clang)
{
	inline_chain(fx("prog-clang"), 0);
}
Test(user, no_inline_flag)
{
	inline_chain(fx("prog-gcc"), BSYM_NO_INLINE);
	inline_chain(fx("prog-clang"), BSYM_NO_INLINE);
}

static void cxx_vs_tool(const char *bin, const char *tool)
{
	static const char *fns[] = { "_ZNK8outer_ns5inner3BoxIiE3getEi",
				     "_ZNK8outer_ns5inner3BoxIlE3getEl",
				     "_ZN8outer_ns5inner5twiceIiEET_RKNS0_3BoxIS2_EES2_", "main" };
	uint64_t addrs[2048];
	int n = 0;
	for (size_t i = 0; i < 4; i++) {
		uint64_t sz, a = fx_sym(bin, fns[i], &sz);
		for (uint64_t k = 0; k < sz && n < 2048; k++)
			addrs[n++] = a + k;
	}
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, bin, &b);
	compare_all(ctx, id, bin, tool, addrs, n);
	const struct bsym_result *r = sym1(ctx, id, bin, fns[0], 1);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "outer_ns::inner::Box<int>::get(int) const");
	cr_assert_str_eq(r->frames[r->nr_frames - 1].raw_name, fns[0]);
	bsym_destroy(ctx);

	ctx = mkctx(NULL, BSYM_NO_DEMANGLE);
	id = reg(ctx, bin, &b);
	r = sym1(ctx, id, bin, fns[0], 1);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, fns[0]);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].raw_name, fns[0]);
	bsym_destroy(ctx);
}

Test(user, cxx_gcc_demangled_matches_eu_addr2line)
{
	cxx_vs_tool(fx("cxx-g++"), EU);
}
Test(user, cxx_clang_demangled_matches_llvm_symbolizer)
{
	cxx_vs_tool(fx("cxx-clang++"), LLVM);
}

Test(user, shared_library_offsets_differ_from_vaddrs)
{
	const char *lib = fx("libfix.so");
	struct fx_bid b = fx_build_id(lib);
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, lib, &b);
	uint64_t sz, a = fx_sym(lib, "lib_beta", &sz);
	uint64_t off = fx_vaddr_to_off(lib, a + 2);
	cr_assert_eq(a + 2 - off, 0x200000, "fixture not linked at 0x200000");
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, off, &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "lib_beta");
	cr_assert_eq(r->frames[r->nr_frames - 1].offset, 2);
	uint64_t addrs[512];
	int n = 0;
	static const char *fns[] = { "lib_alpha", "lib_beta" };
	for (int i = 0; i < 2; i++) {
		a = fx_sym(lib, fns[i], &sz);
		for (uint64_t k = 0; k < sz && n < 512; k++)
			addrs[n++] = a + k;
	}
	compare_all(ctx, id, lib, EU, addrs, n);
	bsym_destroy(ctx);
}

Test(user, rebuilt_binary_with_other_build_id_is_never_used)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, fx("mismatch/prog"), &b);
	for (uint64_t off = 0x1000; off < 0x1400; off += 7) {
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_offset(ctx, id, off, &r), 0);
		cr_assert_eq(r->reason, BSYM_R_BUILD_ID_MISMATCH);
		cr_assert_eq(r->nr_frames, 0);
	}
	struct bsym_object_info info;
	cr_assert_eq(bsym_object_info(ctx, id, &info), 0);
	cr_assert_eq(info.status, BSYM_R_BUILD_ID_MISMATCH);
	cr_assert_null(info.elf_path);
	bsym_destroy(ctx);
}

Test(user, missing_everything_is_no_debuginfo)
{
	struct fx_bid b = { .b = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 },
			    .n = 20 };
	struct bsym_ctx *ctx = mkctx(fx("tree-gcc"), 0);
	uint32_t id = reg(ctx, "/nonexistent/x", &b);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1000, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);
	bsym_destroy(ctx);
}

static bool verify_yes(void *arg, int fd, const char *path)
{
	(*(int *)arg)++;
	return fd >= 0 && path != NULL;
}
static bool verify_no(void *arg, int fd, const char *path)
{
	return false;
}

Test(user, no_build_id_needs_the_verifier)
{
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, fx("prog-gcc"), NULL);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1000, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_BUILD_ID);

	int calls = 0;
	struct bsym_object_desc d = { .sz = sizeof(d), .path = fx("prog-gcc"), .verify = verify_yes,
				      .verify_arg = &calls };
	uint32_t id2;
	cr_assert_eq(bsym_object_register(ctx, &d, &id2), 0);
	cr_assert_neq(id, id2);
	r = sym1(ctx, id2, fx("prog-gcc"), "outer", 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "outer");
	cr_assert_eq(calls, 1);

	d.verify = verify_no;
	cr_assert_eq(bsym_object_register(ctx, &d, &id2), 0);
	cr_assert_eq(bsym_symbolize_offset(ctx, id2, 0x1000, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_BUILD_ID);
	bsym_destroy(ctx);
}

Test(user, same_build_id_same_id_and_cached_results)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t a = reg(ctx, fx("prog-gcc"), &b);
	uint32_t c = reg(ctx, "/some/other/path", &b);
	cr_assert_eq(a, c);
	const struct bsym_result *r1 = sym1(ctx, a, fx("prog-gcc"), "work", 5);
	const struct bsym_result *r2 = sym1(ctx, c, fx("prog-gcc"), "work", 5);
	cr_assert_eq(r1, r2);
	bsym_destroy(ctx);
}

Test(user, original_path_can_be_disabled)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_ctx *ctx = mkctx(NULL, BSYM_NO_ORIGINAL_PATH);
	uint32_t id = reg(ctx, fx("prog-gcc"), &b);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1000, &r), 0);
	cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);
	bsym_destroy(ctx);
}

Test(user, sysroot_prefixes_recorded_path)
{
	struct fx_bid b = fx_build_id(fx("prog-gcc"));
	struct bsym_opts o = { .sz = sizeof(o), .sysroot = fx(""),
			       .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	uint32_t id = reg(ctx, "/prog-gcc", &b);
	const struct bsym_result *r = sym1(ctx, id, fx("prog-gcc"), "work", 1);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "work");
	bsym_destroy(ctx);
}

/* bsym_fp_state: at a function's first instruction the CFA is rsp+8 (no
 * frame yet: a frame-pointer walk skips the caller); once the prologue has
 * run in a function built with frame pointers, the CFA comes from rbp. */
Test(user, fp_state_from_cfi)
{
	static const char *fns[] = { "outer", "work", "helper_static", "main" };
	const char *bin = fx("fp-gcc");
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, bin, &b);
	enum bsym_fp_state st;
	int framed = 0;

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t sz, entry = fx_sym(bin, fns[i], &sz);
		uint64_t off = fx_vaddr_to_off(bin, entry);

		cr_assert_eq(bsym_fp_state(ctx, id, off, &st), 0);
		cr_expect_eq(st, BSYM_FP_NO_FRAME, "entry of %s: state %d", fns[i], st);
		for (uint64_t k = 1; k < sz; k++) {
			cr_assert_eq(bsym_fp_state(ctx, id, off + k, &st), 0);
			cr_assert(st != BSYM_FP_UNKNOWN, "%s+%" PRIu64 " has CFI", fns[i], k);
			framed += st == BSYM_FP_FRAME;
		}
	}
	/* main calls others, so gcc gives it a frame; leaves may have none */
	cr_expect_gt(framed, 0, "some instructions run with rbp as the CFA base");
	cr_expect_eq(bsym_fp_state(ctx, 9999, 0, &st), -EINVAL);
	bsym_destroy(ctx);
}

/* Code built without frame pointers that saves rbp and uses it as a
 * general register (clobber.c's busy, gcc -O2 -fomit-frame-pointer): once
 * rbp is saved, a frame-pointer walk through it would follow whatever rbp
 * holds (BSYM_FP_CLOBBERED); before, and in a function that never touches
 * rbp (ext_), rbp is still the caller's (BSYM_FP_NO_FRAME). */
Test(user, fp_state_clobbered_frame_pointer)
{
	const char *bin = fx("clobber-gcc");
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, bin, &b);
	enum bsym_fp_state st;
	uint64_t sz, off = fx_vaddr_to_off(bin, fx_sym(bin, "busy", &sz));
	int clobbered = 0;

	cr_assert_eq(bsym_fp_state(ctx, id, off, &st), 0);
	cr_expect_eq(st, BSYM_FP_NO_FRAME, "entry of busy: state %d", st);
	for (uint64_t k = 1; k < sz; k++) {
		cr_assert_eq(bsym_fp_state(ctx, id, off + k, &st), 0);
		cr_assert(st != BSYM_FP_FRAME && st != BSYM_FP_UNKNOWN, "busy+%" PRIu64 ": state %d",
			  k, st);
		clobbered += st == BSYM_FP_CLOBBERED;
	}
	cr_expect_gt(clobbered, (int)(sz / 2), "rbp saved over most of busy (%d of %" PRIu64 ")",
		     clobbered, sz);
	off = fx_vaddr_to_off(bin, fx_sym(bin, "ext_", &sz));
	for (uint64_t k = 0; k < sz; k++) {
		cr_assert_eq(bsym_fp_state(ctx, id, off + k, &st), 0);
		cr_expect_eq(st, BSYM_FP_NO_FRAME, "ext_+%" PRIu64 ": state %d", k, st);
	}
	bsym_destroy(ctx);
}

/* Between "push %rbp" and "mov %rsp,%rbp" the CFI says rbp is saved, but
 * it still holds the caller's frame pointer: a frame-pointer walk from
 * there skips the caller (NO_FRAME), it does not go astray. */
Test(user, fp_state_in_the_frame_pointer_prologue)
{
	const char *bin = fx("fp-gcc");
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(NULL, 0);
	uint32_t id = reg(ctx, bin, &b);
	enum bsym_fp_state st;
	uint64_t sz, off = fx_vaddr_to_off(bin, fx_sym(bin, "main", &sz));
	unsigned char code[4096];
	int fd = open(bin, O_RDONLY);
	int found = 0;

	cr_assert(fd >= 0 && sz >= 4 && sz <= sizeof(code));
	cr_assert_eq(pread(fd, code, sz, (off_t)off), (ssize_t)sz);
	close(fd);
	for (uint64_t k = 0; k + 3 <= sz; k++) {
		if (code[k] != 0x48 || code[k + 1] != 0x89 || code[k + 2] != 0xe5)
			continue;
		cr_assert_eq(bsym_fp_state(ctx, id, off + k, &st), 0);
		cr_expect_eq(st, BSYM_FP_NO_FRAME, "main+%" PRIu64 " (mov %%rsp,%%rbp): state %d", k, st);
		cr_assert_eq(bsym_fp_state(ctx, id, off + k + 3, &st), 0);
		cr_expect_eq(st, BSYM_FP_FRAME, "main+%" PRIu64 " (after the mov): state %d", k + 3, st);
		found++;
		break;
	}
	cr_assert_eq(found, 1, "fp-gcc's main sets up rbp");
	bsym_destroy(ctx);
}

/* Without the binary (debug file only: its .eh_frame is NOBITS) there is
 * no call frame information, and no claim is made. */
Test(user, fp_state_unknown_without_cfi)
{
	const char *bin = fx("prog-gcc");
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(fx("tree-gcc"), BSYM_NO_ORIGINAL_PATH);
	uint32_t id = reg(ctx, "/nonexistent/prog-gcc", &b);
	enum bsym_fp_state st = BSYM_FP_FRAME;
	uint64_t sz, entry = fx_sym(bin, "main", &sz);

	cr_assert_eq(bsym_fp_state(ctx, id, fx_vaddr_to_off(bin, entry), &st), 0);
	cr_expect(st == BSYM_FP_UNKNOWN || st == BSYM_FP_NO_FRAME, "state %d", st);
	bsym_destroy(ctx);
}

/* PLT stubs are named NAME@plt, as objdump names them (never _init, the
 * symbol before .plt): every stub of .plt, .plt.sec and .plt.got. */
static void plt_vs_objdump(const char *bin, int min_stubs)
{
	char cmd[PATH_MAX + 128], line[4096];
	struct fx_bid b = fx_build_id(bin);
	struct bsym_ctx *ctx = mkctx(NULL, BSYM_NO_DEMANGLE);
	uint32_t id = reg(ctx, bin, &b);
	int stubs = 0;

	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", bin);
	FILE *f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		char name[2048];
		unsigned long long a;
		const struct bsym_result *r;

		if (sscanf(line, "%llx <%2047[^>]>:", &a, name) != 2)
			continue;
		for (int k = 0; k < 8; k += 3) { /* bytes of the stub (.plt.got ones are 8) */
			cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(bin, a + k), &r), 0);
			const char *got = r->nr_frames ? r->frames[0].name : NULL;
			size_t L = strlen(name);
			if (L <= 4 || strcmp(name + L - 4, "@plt") || strstr(name, "*ABS*")) {
				/* PLT0, IRELATIVE slots: no name rather than a wrong one */
				cr_assert(!got || strstr(got, "@plt") == NULL || !strcmp(got, name),
					  "%s: 0x%llx <%s> named %s", bin, a + k, name, got);
				cr_assert(!got || strcmp(got, "_init"), "%s: 0x%llx named _init", bin, a + k);
				continue;
			}
			cr_assert(got && !strcmp(got, name), "%s: 0x%llx: objdump <%s>, we %s", bin, a + k,
				  name, got ? got : "(none)");
		}
		stubs++;
	}
	pclose(f);
	cr_log_info("%s: %d PLT stubs named as objdump names them", bin, stubs);
	cr_assert_geq(stubs, min_stubs, "%s: only %d PLT stubs found", bin, stubs);
	bsym_destroy(ctx);
}

Test(user, plt_stubs_named_like_objdump)
{
	plt_vs_objdump(fx("prog-gcc"), 2);
	plt_vs_objdump(fx("cxx-g++"), 3);
	plt_vs_objdump(fx("libfix.so"), 1);
	plt_vs_objdump("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 100);
	plt_vs_objdump("/usr/bin/xz", 10);
	plt_vs_objdump("/usr/lib/x86_64-linux-gnu/libc.so.6", 0); /* IRELATIVE stubs: unnamed */
}

static void *slurp_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	void *p = malloc((size_t)n);
	cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* An object whose bytes came with the recording (the vdso): named from
 * the image when no file holds it, and never from an image whose build-id
 * is another's. */
Test(user, recorded_image_used_only_with_its_build_id)
{
	const char *bin = fx("prog-gcc");
	size_t len;
	void *img = slurp_file(bin, &len);
	struct fx_bid b = fx_build_id(bin);
	uint64_t sz, a = fx_sym(bin, "work", &sz);
	const struct bsym_result *r;
	uint32_t id;

	struct bsym_ctx *ctx = mkctx(NULL, 0);
	struct bsym_object_desc d = { .sz = sizeof(d), .path = "[vdso]", .build_id = b.b,
				      .build_id_len = b.n, .image = img, .image_len = len };
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(bin, a + 1), &r), 0);
	cr_assert(r->nr_frames >= 1 && !strcmp(r->frames[r->nr_frames - 1].name, "work"),
		  "named %s", r->nr_frames ? r->frames[0].name : "(none)");
	bsym_destroy(ctx);

	/* the same bytes offered for another build-id: refused */
	struct fx_bid other = b;
	other.b[0] ^= 0xff;
	ctx = mkctx(NULL, 0);
	d.build_id = other.b;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(bin, a + 1), &r), 0);
	cr_assert_eq(r->nr_frames, 0, "an image with another build-id was used");
	bsym_destroy(ctx);
	free(img);
}

/*
 * dwz-compressed debuginfo: the inlined dwz_sq's DWARF is in the common
 * file the debug file links to (.gnu_debugaltlink, whose path does not
 * exist here).  Found by its build-id in the debug tree, the inline frame
 * is named; without it, the caller is still right and no name is made up.
 */
static void dwz_frames(const char *tree, const char *bin, const char *fn, char *out, size_t len)
{
	struct fx_bid b = fx_build_id(fx(bin));
	/* with a tree: the binary is gone, the tree serves; without: the
	 * binary at its path */
	struct bsym_ctx *ctx = mkctx(tree ? fx(tree) : NULL, 0);
	uint32_t id = reg(ctx, tree ? "/nonexistent/dwz" : fx(bin), &b);
	uint64_t sz, a = fx_sym(fx(bin), fn, &sz);
	size_t o = 0;

	out[0] = 0;
	/* every byte of the function: the names seen, innermost first */
	for (uint64_t k = 0; k < sz; k++) {
		const struct bsym_result *r;

		cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(fx(bin), a + k), &r), 0);
		for (unsigned i = 0; i < r->nr_frames && o + 64 < len; i++) {
			const char *n = r->frames[i].name ? r->frames[i].name : "(null)";

			if (!strstr(out, n))
				o += (size_t)snprintf(out + o, len - o, "%s,", n);
		}
	}
	bsym_destroy(ctx);
}

Test(user, dwz_alt_file_found_by_build_id)
{
	char seen[1024];

	dwz_frames("tree-dwz", "dwz-a", "work", seen, sizeof(seen));
	cr_log_info("dwz-a with its common file: %s", seen);
	cr_assert(strstr(seen, "dwz_sq,"), "the inlined function is not named: %s", seen);
	cr_assert(strstr(seen, "work,"), "%s", seen);
	dwz_frames("tree-dwz", "dwz-b", "work2", seen, sizeof(seen));
	cr_assert(strstr(seen, "dwz_sq,") && strstr(seen, "work2,"), "dwz-b: %s", seen);
}

Test(user, dwz_without_alt_file_invents_nothing)
{
	char seen[1024];

	dwz_frames("tree-dwz-noalt", "dwz-a", "work", seen, sizeof(seen));
	cr_log_info("dwz-a without its common file: %s", seen);
	cr_assert(strstr(seen, "work,"), "the function itself must still be named: %s", seen);
	cr_assert(!strstr(seen, "dwz_sq"), "a name from nowhere: %s", seen);
}

/*
 * Split DWARF (-gsplit-dwarf): the inline frame's DWARF is in the .dwo the
 * skeleton names (found through the compilation directory, by libdw).
 * Without the .dwo, the function's name still comes from the symbol
 * table and nothing is invented.  (.dwp packages need elfutils 0.191;
 * Debian 12 has 0.188.)
 */
Test(user, split_dwarf_dwo_names_inline_frames)
{
	char seen[1024];

	dwz_frames(NULL, "split", "work", seen, sizeof(seen));
	cr_log_info("split with its .dwo: %s", seen);
	cr_assert(strstr(seen, "dwz_sq,") && strstr(seen, "work,"), "%s", seen);
	dwz_frames(NULL, "split-nodwo", "work", seen, sizeof(seen));
	cr_log_info("split without its .dwo: %s", seen);
	cr_assert(strstr(seen, "work,"), "%s", seen);
	cr_assert(!strstr(seen, "dwz_sq"), "a name from nowhere: %s", seen);
}
