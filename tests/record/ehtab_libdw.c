// SPDX-License-Identifier: Apache-2.0
/*
 * ehtab_libdw.c - record/unwind/ehtab against libdw, byte by byte.
 *
 * For every address of real objects (libc, libstdc++, ld.so, the vDSO,
 * Debian's python3 and cmake (a big C++ program), the project's C++
 * workload, the unwind workload built by gcc, clang, as a static PIE and
 * with frame pointers), the rule record/unwind/ehtab built is compared with what
 * elfutils computes from the same .eh_frame (dwarf_getcfi_elf +
 * dwarf_cfi_addrframe):
 *   - where ehtab has no row (a gap), libdw must find no FDE either;
 *   - otherwise both rules are evaluated on the same made-up registers and
 *     memory: the CFA, where the return address is, where the caller's rbp
 *     is (or that it is unchanged or lost) must agree;
 *   - signal trampolines ('S') and outermost frames (return address
 *     undefined) must be recognized as such;
 *   - rows ehtab declared unexpressible (UNWIND_CFA_INVALID) are counted,
 *     and must stay rare.
 * libdw's expressions are evaluated by a small DWARF stack machine below
 * (the operators CFI uses); an operator it does not know is a test failure,
 * so nothing is silently skipped.
 *
 * Every byte of small objects is checked; under sanitizers, or past
 * BYTES_FULL bytes of text, a deterministic stride keeps the run short
 * (all row boundaries are still checked: that is where errors are).
 */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "ehtab.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define BYTES_FULL (SANITIZED ? (256u << 10) : (8u << 20))

/* made-up machine state, the same for both sides */
#define SP 0x7ffc00001000ull
#define BP 0x7ffc00002000ull

static uint64_t fake_mem(uint64_t addr)
{
	return 0x7ffd00000000ull + ((addr * 0x9e3779b97f4a7c15ull) >> 40 << 3);
}

static uint64_t fake_reg(int reg, uint64_t pc)
{
	switch (reg) {
	case UNWIND_REG_RSP: return SP;
	case UNWIND_REG_RBP: return BP;
	case UNWIND_REG_RA: return pc;
	default: return 0x1000ull * (uint64_t)(reg + 1);
	}
}

enum { EV_OK, EV_UNKNOWN_OP, EV_STACK };

/* Evaluate a DWARF expression (as CFI uses them) to one value. */
static int eval(const Dwarf_Op *ops, size_t n, uint64_t pc, uint64_t cfa, uint64_t *out,
		bool *stack_value)
{
	uint64_t st[16];
	size_t sp = 0;

	*stack_value = false;
#define PUSH(v) do { if (sp == 16) return EV_STACK; st[sp++] = (v); } while (0)
#define POP(v) do { if (!sp) return EV_STACK; (v) = st[--sp]; } while (0)
	for (size_t i = 0; i < n; i++) {
		uint8_t a = ops[i].atom;
		uint64_t x, y;

		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			PUSH(a - DW_OP_lit0);
		} else if (a >= DW_OP_breg0 && a <= DW_OP_breg16) {
			PUSH(fake_reg(a - DW_OP_breg0, pc) + (int64_t)ops[i].number);
		} else if (a == DW_OP_bregx) {
			PUSH(fake_reg((int)ops[i].number, pc) + (int64_t)ops[i].number2);
		} else {
			switch (a) {
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
			case DW_OP_const8u: case DW_OP_constu:
			case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
			case DW_OP_const8s: case DW_OP_consts:
				PUSH(ops[i].number); break;
			case DW_OP_call_frame_cfa: PUSH(cfa); break;
			case DW_OP_deref: POP(x); PUSH(fake_mem(x)); break;
			case DW_OP_plus_uconst: POP(x); PUSH(x + ops[i].number); break;
			case DW_OP_plus: POP(y); POP(x); PUSH(x + y); break;
			case DW_OP_minus: POP(y); POP(x); PUSH(x - y); break;
			case DW_OP_and: POP(y); POP(x); PUSH(x & y); break;
			case DW_OP_shl: POP(y); POP(x); PUSH(y < 64 ? x << y : 0); break;
			case DW_OP_ge: POP(y); POP(x); PUSH((int64_t)x >= (int64_t)y); break;
			case DW_OP_dup: POP(x); PUSH(x); PUSH(x); break;
			case DW_OP_stack_value: *stack_value = true; break;
			default: return EV_UNKNOWN_OP;
			}
		}
	}
	if (!sp)
		return EV_STACK;
	*out = st[sp - 1];
	return EV_OK;
#undef PUSH
#undef POP
}

struct tally {
	uint64_t checked, gaps, invalid, mismatches, unknown_ops;
	char first[8][200];
	int nfirst;
};

static void bad(struct tally *t, uint64_t a, const char *what)
{
	t->mismatches++;
	if (t->nfirst < 8)
		snprintf(t->first[t->nfirst++], sizeof(t->first[0]), "0x%" PRIx64 ": %s", a, what);
}

/* What ehtab's rule says, evaluated at pc (the interrupted frame). */
static uint64_t our_cfa(const struct unwind_rule *r, uint64_t pc)
{
	switch (r->cfa_kind) {
	case UNWIND_CFA_RSP: return SP + (int64_t)r->cfa_off;
	case UNWIND_CFA_RBP: return BP + (int64_t)r->cfa_off;
	case UNWIND_CFA_DEREF_RSP: return fake_mem(SP + (int64_t)r->cfa_off) + (int64_t)r->aux;
	case UNWIND_CFA_DEREF_RBP: return fake_mem(BP + (int64_t)r->cfa_off) + (int64_t)r->aux;
	case UNWIND_CFA_PLT:
		return SP + (int64_t)r->cfa_off + ((pc & 15) >= (uint8_t)r->aux ? 8 : 0);
	case UNWIND_CFA_REG: return fake_reg((uint8_t)r->aux, pc) + (int64_t)r->cfa_off;
	default: return 0;
	}
}

/* libdw's rule for register reg: 'S' same, 'U' undefined, 'L' saved at
 * *loc, 'R' in register *loc, 'V' a value (val_expression), 'X' error. */
static char their_reg(Dwarf_Frame *f, int reg, uint64_t pc, uint64_t cfa, uint64_t *loc,
		      struct tally *t)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	bool sv;

	if (dwarf_frame_register(f, reg, mem, &ops, &n) != 0)
		return 'X';
	if (n == 0)
		return ops == NULL ? 'S' : 'U';
	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg16) {
		*loc = ops[0].atom - DW_OP_reg0;
		return 'R';
	}
	if (n == 1 && ops[0].atom == DW_OP_regx) {
		*loc = ops[0].number;
		return 'R';
	}
	if (eval(ops, n, pc, cfa, loc, &sv) != EV_OK) {
		t->unknown_ops++;
		return 'X';
	}
	return sv ? 'V' : 'L';
}

static void check_addr(Dwarf_CFI *cfi, const struct unwind_rule *r, uint64_t a,
		       struct tally *t)
{
	Dwarf_Frame *f = NULL;
	Dwarf_Op *ops;
	size_t n;
	uint64_t cfa = 0, loc = 0;
	bool sig = false, sv;
	char ra, bp;

	t->checked++;
	if (dwarf_cfi_addrframe(cfi, a, &f) != 0) {
		if (r->cfa_kind != UNWIND_CFA_NONE)
			bad(t, a, "ehtab has a rule, libdw finds no FDE");
		else
			t->gaps++;
		return;
	}
	if (r->cfa_kind == UNWIND_CFA_NONE) {
		bad(t, a, "libdw has an FDE, ehtab a gap");
		goto out;
	}
	if (r->cfa_kind == UNWIND_CFA_INVALID) {
		t->invalid++;
		goto out;
	}
	dwarf_frame_info(f, NULL, NULL, &sig);
	if (r->cfa_kind == UNWIND_CFA_SIGNAL || sig) {
		if (!(r->cfa_kind == UNWIND_CFA_SIGNAL && sig))
			bad(t, a, "signal frame on one side only");
		goto out;
	}
	ra = their_reg(f, UNWIND_REG_RA, a, 0, &loc, t);
	if (r->cfa_kind == UNWIND_CFA_END || ra == 'U') {
		if (!(r->cfa_kind == UNWIND_CFA_END && ra == 'U'))
			bad(t, a, "outermost frame (RA undefined) on one side only");
		goto out;
	}
	if (dwarf_frame_cfa(f, &ops, &n) != 0 || n == 0) {
		bad(t, a, "libdw cannot compute the CFA, ehtab has a rule");
		goto out;
	}
	if (eval(ops, n, a, 0, &cfa, &sv) != EV_OK) {
		t->unknown_ops++;
		bad(t, a, "CFA expression with an operator the test does not know");
		goto out;
	}
	if (cfa != our_cfa(r, a)) {
		char m[120];

		snprintf(m, sizeof(m), "CFA differs (kind %u off %d aux %d: 0x%" PRIx64
			 " vs libdw 0x%" PRIx64 ")", r->cfa_kind, r->cfa_off, r->aux,
			 our_cfa(r, a), cfa);
		bad(t, a, m);
		goto out;
	}
	ra = their_reg(f, UNWIND_REG_RA, a, cfa, &loc, t);
	if (r->ra_kind == UNWIND_RA_REG) {
		if (!(ra == 'R' && loc == (uint8_t)r->aux))
			bad(t, a, "return address register differs");
	} else if (!(ra == 'L' && loc == cfa - 8)) {
		bad(t, a, "return address not at CFA-8 in libdw");
	}
	bp = their_reg(f, UNWIND_REG_RBP, a, cfa, &loc, t);
	switch (r->rbp_kind) {
	case UNWIND_RBP_SAME:
		if (bp != 'S' && !(bp == 'R' && loc == UNWIND_REG_RBP))
			bad(t, a, "rbp: ehtab same value, libdw not");
		break;
	case UNWIND_RBP_CFA:
		if (!(bp == 'L' && loc == cfa + (int64_t)r->rbp_off))
			bad(t, a, "rbp: saved at a different place");
		break;
	default:
		/* lost: libdw says undefined, or keeps it somewhere ehtab
		 * does not follow (another register, a value) */
		if (bp == 'S' || bp == 'L')
			bad(t, a, "rbp: ehtab says lost, libdw can recover it");
		break;
	}
out:
	free(f);
}

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(*fd >= 0, "cannot open %s: %s", path, strerror(errno));
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	cr_assert(e, "%s: %s", path, elf_errmsg(-1));
	return e;
}

/* Compare rows with libdw over the object's CFI; fills t. */
static void diff_rows(Dwarf_CFI *cfi, const struct ehtab_row *rows, size_t nr, struct tally *t,
		      uint64_t *stride_out)
{
	uint64_t text = 0, stride;

	for (size_t i = 0; i + 1 < nr; i++)
		if (rows[i].rule.cfa_kind != UNWIND_CFA_NONE)
			text += rows[i + 1].addr - rows[i].addr;
	stride = text > BYTES_FULL ? text / BYTES_FULL + 1 : 1;
	/* stride must not be a multiple of 16 (the PLT rule depends on pc & 15) */
	if (stride > 1 && stride % 16 == 0)
		stride++;
	for (size_t i = 0; i + 1 < nr; i++) {
		uint64_t lo = rows[i].addr, hi = rows[i + 1].addr;

		/* both ends of every row, then every stride-th byte */
		check_addr(cfi, &rows[i].rule, lo, t);
		if (hi - 1 > lo)
			check_addr(cfi, &rows[i].rule, hi - 1, t);
		if (rows[i].rule.cfa_kind == UNWIND_CFA_NONE && hi - lo > 4096)
			continue; /* a long gap: its ends are enough */
		for (uint64_t a = lo + 1 + (lo % stride); a < hi - 1; a += stride)
			check_addr(cfi, &rows[i].rule, a, t);
	}
	*stride_out = stride;
}

/* Compare the whole object; asserts. */
static void diff_elf(Elf *e, const char *name)
{
	struct ehtab_error err = { { 0 } };
	struct ehtab *tab = NULL;
	struct ehtab_stats st;
	struct tally t = { 0 };
	const struct ehtab_row *rows;
	Dwarf_CFI *cfi;
	uint64_t stride;
	size_t nr;

	cr_assert_eq(ehtab_build(&tab, e, &err), 0, "%s: ehtab_build: %s", name, err.message);
	rows = ehtab_rows(tab, &nr);
	ehtab_stats(tab, &st);
	cfi = dwarf_getcfi_elf(e);
	cr_assert(cfi, "%s: libdw finds no CFI: %s", name, dwarf_errmsg(-1));
	cr_assert_gt(nr, 1, "%s: no rows", name);
	diff_rows(cfi, rows, nr, &t, &stride);
	cr_log_info("%s: %zu rows, %" PRIu64 " FDEs, %" PRIu64 " addresses compared (stride %"
		    PRIu64 "), %" PRIu64 " in gaps, %" PRIu64 " unexpressible, %" PRIu64
		    " mismatches", name, nr, st.fdes, t.checked, stride, t.gaps, t.invalid,
		    t.mismatches);
	for (int i = 0; i < t.nfirst; i++)
		cr_log_error("%s: %s", name, t.first[i]);
	cr_expect_eq(t.mismatches, 0, "%s: %" PRIu64 " addresses where ehtab and libdw disagree",
		     name, t.mismatches);
	cr_expect_eq(t.unknown_ops, 0, "%s: expressions the test cannot evaluate", name);
	/* rows that cannot unwind: rare forms only (under 0.1 % of bytes) */
	cr_expect_leq(t.invalid * 1000, t.checked, "%s: %" PRIu64 " of %" PRIu64
		      " addresses unexpressible", name, t.invalid, t.checked);
	cr_expect_gt(t.checked - t.gaps, 1000, "%s: too little compared", name);
	dwarf_cfi_end(cfi);
	ehtab_destroy(tab);
}

static void diff_file(const char *path)
{
	int fd;
	Elf *e;

	if (access(path, R_OK) != 0)
		cr_assert_fail("%s is missing: %s", path, strerror(errno));
	e = open_elf(path, &fd);
	diff_elf(e, path);
	elf_end(e);
	close(fd);
}

static void setup(void)
{
	elf_version(EV_CURRENT);
}

static char *workload(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("BPROF_WORKLOADS");

	snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : BPROF_WORKLOADS_DIR, name);
	return buf;
}

/* The object a loaded library came from, by a symbol it defines. */
static char *lib_of(const char *soname)
{
	static char buf[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];

	cr_assert(f);
	buf[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, soname)) {
			p[strcspn(p, "\n")] = 0;
			snprintf(buf, sizeof(buf), "%s", p);
			break;
		}
	}
	fclose(f);
	cr_assert(buf[0], "%s is not mapped in the test", soname);
	return buf;
}

TestSuite(ehtab_libdw, .init = setup, .timeout = 600);

Test(ehtab_libdw, libc) { diff_file(lib_of("/libc.so.6")); }
Test(ehtab_libdw, ld_so) { diff_file(lib_of("/ld-linux-x86-64.so.2")); }
Test(ehtab_libdw, libstdcxx) { diff_file("/usr/lib/x86_64-linux-gnu/libstdc++.so.6"); }
Test(ehtab_libdw, cxx_program) { diff_file(workload("cxxwork")); }
Test(ehtab_libdw, gcc_no_frame_pointer) { diff_file(workload("uw-gcc")); }
Test(ehtab_libdw, clang_no_frame_pointer) { diff_file(workload("uw-clang")); }
Test(ehtab_libdw, static_pie) { diff_file(workload("uw-static")); }
Test(ehtab_libdw, frame_pointer_build) { diff_file(workload("uw-fp")); }
Test(ehtab_libdw, debian_python3) { diff_file("/usr/bin/python3.11"); }
Test(ehtab_libdw, debian_cmake_cxx) { diff_file("/usr/bin/cmake"); }

/* The vDSO: its image, read from this process's memory. */
Test(ehtab_libdw, vdso)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	size_t size;
	char *copy;
	Elf *e;

	cr_assert(base, "no vDSO (AT_SYSINFO_EHDR)");
	/* the image ends with its section headers */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	cr_assert(size > sizeof(*eh) && size < (1u << 20));
	copy = malloc(size);
	cr_assert(copy);
	memcpy(copy, base, size);
	e = elf_memory(copy, size);
	cr_assert(e, "vdso: %s", elf_errmsg(-1));
	diff_elf(e, "[vdso]");
	elf_end(e);
	free(copy);
}

/*
 * The comparison can fail: libc's rows, each damaged in one way a builder
 * bug would damage them, must each be caught.
 */
Test(ehtab_libdw, catches_wrong_rows)
{
	static const char *what[] = { "CFA offset", "CFA register", "rbp slot", "rbp lost",
				      "a gap", "a row that is not there", "signal frame" };
	struct ehtab_error err = { { 0 } };
	struct ehtab *tab = NULL;
	const struct ehtab_row *rows;
	struct ehtab_row *copy;
	size_t nr, victim = 0;
	Dwarf_CFI *cfi;
	int fd;
	Elf *e = open_elf(lib_of("/libc.so.6"), &fd);

	cr_assert_eq(ehtab_build(&tab, e, &err), 0, "%s", err.message);
	rows = ehtab_rows(tab, &nr);
	cfi = dwarf_getcfi_elf(e);
	cr_assert(cfi);
	/* a plain row: rsp-based CFA, rbp saved, some bytes long */
	for (size_t i = nr / 2; i + 1 < nr && !victim; i++)
		if (rows[i].rule.cfa_kind == UNWIND_CFA_RSP && rows[i].rule.rbp_kind == UNWIND_RBP_CFA &&
		    rows[i + 1].addr - rows[i].addr >= 4)
			victim = i;
	cr_assert(victim, "no plain row in libc");
	copy = malloc(nr * sizeof(*copy));
	cr_assert(copy);
	for (size_t k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
		struct unwind_rule *r = &copy[victim].rule;
		struct tally t = { 0 };
		uint64_t stride;

		memcpy(copy, rows, nr * sizeof(*copy));
		switch (k) {
		case 0: r->cfa_off += 8; break;
		case 1: r->cfa_kind = UNWIND_CFA_RBP; break;
		case 2: r->rbp_off -= 8; break;
		case 3: r->rbp_kind = UNWIND_RBP_SAME; r->rbp_off = 0; break;
		case 4: memset(r, 0, sizeof(*r)); break;
		case 5: copy[victim].addr += 1; break;
		case 6: memset(r, 0, sizeof(*r)); r->cfa_kind = UNWIND_CFA_SIGNAL; break;
		}
		diff_rows(cfi, copy + victim - 1, 3, &t, &stride);
		cr_expect_gt(t.mismatches, 0, "a damaged row (%s) went unnoticed", what[k]);
	}
	free(copy);
	dwarf_cfi_end(cfi);
	ehtab_destroy(tab);
	elf_end(e);
	close(fd);
}

/* The whole file at path, in memory (to be patched there); *size set. */
static char *read_image(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *img;

	cr_assert(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	rewind(f);
	img = malloc(*size);
	cr_assert(img && fread(img, 1, *size, f) == *size);
	fclose(f);
	return img;
}

/* The header of the image's one section called name. */
static Elf64_Shdr *image_section(char *img, size_t size, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *found = NULL;
	size_t shstr, n = 0;

	cr_assert(eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size);
	shstr = ((Elf64_Shdr *)(img + eh->e_shoff))[eh->e_shstrndx].sh_offset;
	for (size_t i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff) + i;

		if (!strcmp(img + shstr + sh->sh_name, name)) {
			found = sh;
			n++;
		}
	}
	cr_assert_eq(n, 1, "%zu sections called %s", n, name);
	cr_assert(found->sh_offset + found->sh_size <= size);
	return found;
}

/*
 * The table of path's file and the table of img (path's image, patched in
 * memory: what) must be the same rows.  Returns img's Elf, for the
 * caller's further checks and elf_end.
 */
static Elf *same_rows_as_file(const char *path, char *img, size_t size, const char *what)
{
	struct ehtab_error err = { { 0 } };
	struct ehtab *a = NULL, *b = NULL;
	const struct ehtab_row *ra, *rb;
	size_t na, nb;
	Elf *e;
	int fd;

	e = open_elf(path, &fd);
	cr_assert_eq(ehtab_build(&a, e, &err), 0, "%s", err.message);
	elf_end(e);
	close(fd);
	e = elf_memory(img, size);
	cr_assert(e);
	cr_assert_eq(ehtab_build(&b, e, &err), 0, "%s: %s", what, err.message);
	ra = ehtab_rows(a, &na);
	rb = ehtab_rows(b, &nb);
	cr_assert_eq(na, nb, "%zu rows from the file, %zu with %s", na, nb, what);
	for (size_t i = 0; i < na; i++)
		cr_assert(ra[i].addr == rb[i].addr && !memcmp(&ra[i].rule, &rb[i].rule, sizeof(ra[i].rule)),
			  "%s: row %zu differs: 0x%" PRIx64 " vs 0x%" PRIx64, what, i, ra[i].addr,
			  rb[i].addr);
	ehtab_destroy(a);
	ehtab_destroy(b);
	return e;
}

/*
 * lld gives .eh_frame the type SHT_X86_64_UNWIND, not SHT_PROGBITS
 * (Debian's libLLVM, libclang, shellcheck): the same bytes under that
 * type must give the same table.  The workload's image, patched in memory.
 */
Test(ehtab_libdw, lld_section_type)
{
	const char *path = workload("uw-gcc");
	size_t size;
	char *img = read_image(path, &size);
	Elf *e;

	image_section(img, size, ".eh_frame")->sh_type = SHT_X86_64_UNWIND;
	e = same_rows_as_file(path, img, size, "an SHT_X86_64_UNWIND .eh_frame");
	diff_elf(e, "uw-gcc with an lld-typed .eh_frame");
	elf_end(e);
	free(img);
}

/*
 * A binary without section headers (stripped of them, or an image read
 * from memory): .eh_frame is found through PT_GNU_EH_FRAME and gives the
 * same rows as through its section.
 */
Test(ehtab_libdw, no_section_headers)
{
	const char *path = workload("uw-gcc");
	size_t size;
	char *img = read_image(path, &size);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	elf_end(same_rows_as_file(path, img, size, "no section headers (PT_GNU_EH_FRAME)"));
	free(img);
}

/*
 * Rows are put in order FDE by FDE (their runs sorted by first row), which
 * is only right while FDEs do not overlap; overlapping ones (hostile data,
 * odd linkers) must still give a table sorted row by row.  The workload's
 * image with its third FDE moved (in memory) to begin where the second
 * begins: the table must come out strictly ascending.
 */
Test(ehtab_libdw, overlapping_fdes)
{
	const char *path = workload("uw-gcc");
	struct ehtab_error err = { { 0 } };
	struct ehtab *b = NULL;
	const struct ehtab_row *rb;
	size_t nb, size, nfde = 0;
	uint64_t pc2 = 0;
	char *img = read_image(path, &size);
	Elf64_Shdr *eh_frame = image_section(img, size, ".eh_frame");
	Elf *e;

	/* gcc's FDEs: length, CIE pointer, pc_begin as pcrel sdata4 */
	for (size_t off = 0; off + 12 <= eh_frame->sh_size && nfde < 3;) {
		char *p = img + eh_frame->sh_offset + off;
		uint32_t len, cie;
		int32_t rel;

		memcpy(&len, p, 4);
		memcpy(&cie, p + 4, 4);
		if (!len || len == 0xffffffff)
			break;
		if (cie) {
			uint64_t field = eh_frame->sh_addr + off + 8;

			memcpy(&rel, p + 8, 4);
			if (++nfde == 2) {
				pc2 = field + (int64_t)rel;
			} else if (nfde == 3) {
				rel = (int32_t)(pc2 - field);
				memcpy(p + 8, &rel, 4);
			}
		}
		off += 4 + (size_t)len;
	}
	cr_assert_eq(nfde, 3, "uw-gcc has fewer than three FDEs");
	e = elf_memory(img, size);
	cr_assert(e);
	cr_assert_eq(ehtab_build(&b, e, &err), 0, "overlapping FDEs: %s", err.message);
	rb = ehtab_rows(b, &nb);
	cr_assert_gt(nb, 2);
	for (size_t i = 1; i < nb; i++)
		cr_assert_lt(rb[i - 1].addr, rb[i].addr, "rows %zu and %zu out of order: 0x%" PRIx64 ", 0x%" PRIx64,
			     i - 1, i, rb[i - 1].addr, rb[i].addr);
	ehtab_destroy(b);
	elf_end(e);
	free(img);
}
