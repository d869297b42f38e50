/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gotab.c - unwind rows for Go code (gotab.h).  Go's prologue and epilogue
 * on amd64 (cmd/internal/obj/x86/obj6.go):
 *   Go 1.16-1.20  SUBQ $n, SP; MOVQ BP, n-8(SP); LEAQ n-8(SP), BP
 *                 ... MOVQ n-8(SP), BP; ADDQ $n, SP; RET
 *   Go 1.21+      PUSHQ BP; MOVQ SP, BP; SUBQ $n, SP ... ADDQ $n, SP; POPQ BP
 * The pcsp offset changes after the SUBQ/PUSHQ and after the ADDQ/POPQ; the
 * rbp save is one or two instructions later, its restore one earlier.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotab.h"
#include "gopclntab.h"

/* More than any Go binary: a table this big is not Go's */
#define MAX_RANGES (1u << 24)
#define MAX_FRAME (1 << 24)

struct ranges {
	struct ehtab_range *v;
	size_t nr, cap;
	bool oom;
};

static void push(struct ranges *rs, uint64_t a, uint64_t b, const struct unwind_rule *ru)
{
	if (rs->oom || a >= b)
		return;
	/* adjacent ranges of one rule are one */
	if (rs->nr && rs->v[rs->nr - 1].end == a && !memcmp(&rs->v[rs->nr - 1].rule, ru, sizeof(*ru))) {
		rs->v[rs->nr - 1].end = b;
		return;
	}
	if (rs->nr == rs->cap) {
		size_t n = rs->cap ? rs->cap * 2 : 4096;
		void *p = n <= MAX_RANGES ? realloc(rs->v, n * sizeof(*rs->v)) : NULL;
		if (!p) {
			rs->oom = true;
			return;
		}
		rs->v = p;
		rs->cap = n;
	}
	rs->v[rs->nr++] = (struct ehtab_range){ a, b, *ru };
}

/* One function's pcsp ranges, collected before rules are chosen. */
struct sp_range {
	uint64_t a, b;
	int32_t d;
};
struct fn_ranges {
	struct sp_range v[256];
	size_t nr;
	bool too_many;
};

static int collect(void *arg, uint64_t a, uint64_t b, int32_t d)
{
	struct fn_ranges *f = arg;

	if (f->nr == sizeof(f->v) / sizeof(f->v[0])) {
		f->too_many = true;
		return 1;
	}
	f->v[f->nr++] = (struct sp_range){ a, b, d };
	return 0;
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Length of "48 op 6c/ac 24 disp" with disp == want at p (MOVQ BP,d(SP):
 * op 89; LEAQ d(SP),BP: 8d; MOVQ d(SP),BP: 8b), else 0. */
static unsigned bp_sp_insn(const uint8_t *p, size_t n, uint8_t op, int64_t want)
{
	if (n < 5 || p[0] != 0x48 || p[1] != op || p[3] != 0x24)
		return 0;
	if (p[2] == 0x6c)
		return (int8_t)p[4] == want ? 5 : 0;
	if (p[2] == 0xac && n >= 8)
		return le32(p + 4) == want ? 8 : 0;
	return 0;
}

static const struct unwind_rule *rule_for(int32_t d, bool saved, struct unwind_rule *ru)
{
	memset(ru, 0, sizeof(*ru));
	ru->cfa_kind = UNWIND_CFA_RSP;
	ru->cfa_off = d + 8;
	ru->ra_kind = UNWIND_RA_CFA;
	if (saved) {
		ru->rbp_kind = UNWIND_RBP_CFA;
		ru->rbp_off = -16;
	} else {
		ru->rbp_kind = UNWIND_RBP_SAME;
	}
	return ru;
}

/* Rows of one function, from its pcsp ranges and its code. */
static void function_rows(const struct gopcln *go, const struct gopcln_func *fn, const struct fn_ranges *f,
			  struct ranges *rs)
{
	struct unwind_rule ru;
	uint8_t code[16];
	bool push_style = false; /* Go 1.21+: PUSHQ BP; MOVQ SP, BP */
	bool saves = false;      /* the function keeps the caller's rbp at CFA - 16 */

	if (gopcln_read(go, fn->entry, code, 4) == 0 && code[0] == 0x55 && code[1] == 0x48 &&
	    (code[2] == 0x89 || code[2] == 0x8b) && (code[3] == 0xe5 || code[3] == 0xec))
		push_style = saves = true;
	for (size_t i = 0; i < f->nr; i++) {
		const struct sp_range *r = &f->v[i];
		if (r->d < 0 || r->d > MAX_FRAME || (r->d & 7))
			return; /* not Go's: no rows for it (rbp is followed) */
	}
	for (size_t i = 0; i < f->nr; i++) {
		const struct sp_range *r = &f->v[i];
		uint64_t a = r->a, b = r->b;

		if (r->d == 0) {
			push(rs, a, b, rule_for(0, false, &ru));
			continue;
		}
		if (!push_style && !saves) {
			/* the first frame: is it the prologue that saves rbp? */
			size_t n = b - a < sizeof(code) ? (size_t)(b - a) : sizeof(code);
			unsigned l1, l2;
			if (gopcln_read(go, a, code, n) == 0 && (l1 = bp_sp_insn(code, n, 0x89, r->d - 8))) {
				saves = true;
				l2 = bp_sp_insn(code + l1, n - l1, 0x8d, r->d - 8);
				/* until the LEAQ has run, rbp is the caller's */
				push(rs, a, a + l1 + l2, rule_for(r->d, false, &ru));
				a += l1 + l2;
			}
		}
		uint64_t tail = b;
		if (saves && !push_style && (i + 1 == f->nr || f->v[i + 1].d == 0)) {
			/* "MOVQ d(SP), BP; ADDQ $n, SP" ending the range: from the
			 * ADDQ on, rbp is the caller's again */
			uint8_t e[8];
			if (b - a >= 4 && gopcln_read(go, b - 4, e, 4) == 0 && e[0] == 0x48 && e[1] == 0x83 &&
			    e[2] == 0xc4 && (int8_t)e[3] == r->d)
				tail = b - 4;
			else if (b - a >= 7 && gopcln_read(go, b - 7, e, 7) == 0 && e[0] == 0x48 &&
				 e[1] == 0x81 && e[2] == 0xc4 && le32(e + 3) == r->d)
				tail = b - 7;
		}
		push(rs, a, tail, rule_for(r->d, saves, &ru));
		push(rs, tail, b, rule_for(r->d, false, &ru));
	}
}

/*
 * runtime.asmcgocall's calls of C (`CALL AX`, ff d0).  On the system stack
 * it saved, in the 16 bytes it aligned at rsp, either the goroutine's g and
 * its depth below g->stack.hi (`MOVQ DI, D(SP)` just before the call: the
 * depth; `MOVQ G(SP), DI` just after: g), or, already on a system stack,
 * the stack pointer itself (`MOVQ DX, D(SP)`).  The row at the call (where
 * its return address - 1 is looked up) leads a walk out of C back to the
 * goroutine's stack; the offsets are read from the code, where each Go
 * release places them (40 and 48 in go 1.19.8).
 */
static void cgo_rows(const struct gopcln *go, const struct gopcln_func *fn, struct ranges *rs)
{
	uint8_t c[512];
	size_t n = fn->end - fn->entry < sizeof(c) ? fn->end - fn->entry : sizeof(c);

	if (gopcln_read(go, fn->entry, c, n))
		return;
	for (size_t i = 11; i + 2 <= n; i++) {
		struct unwind_rule ru = { 0 };

		/* MOVQ r, D(SP); MOVQ BX, DI; MOVQ BX, CX; CALL AX */
		if (c[i] != 0xff || c[i + 1] != 0xd0 || memcmp(c + i - 6, "\x48\x89\xdf\x48\x89\xd9", 6) ||
		    c[i - 11] != 0x48 || c[i - 10] != 0x89 || c[i - 8] != 0x24)
			continue;
		if (c[i - 9] == 0x7c) { /* MOVQ DI, D(SP): the depth */
			/* MOVQ G(SP), DI after the call (48 8b 7c 24 G) */
			for (size_t j = i + 2; j + 5 <= n && j < i + 24; j++)
				if (c[j] == 0x48 && c[j + 1] == 0x8b && c[j + 2] == 0x7c && c[j + 3] == 0x24) {
					ru.cfa_kind = UNWIND_CFA_GO_STACK;
					ru.cfa_off = c[i - 7];
					ru.aux = (int8_t)c[j + 4];
					break;
				}
		} else if (c[i - 9] == 0x54) { /* MOVQ DX, D(SP): the stack pointer */
			ru.cfa_kind = UNWIND_CFA_DEREF_RSP;
			ru.cfa_off = c[i - 7];
			ru.aux = 8;
		}
		if (ru.cfa_kind && ru.aux >= 0 && ru.cfa_off < 128)
			push(rs, fn->entry + i, fn->entry + i + 2, &ru);
	}
}

static bool switches_stacks(const struct gopcln_func *f)
{
	static const char *const names[] = {
		"runtime.systemstack", "runtime.systemstack_switch", "runtime.mcall", "runtime.morestack",
		"runtime.morestack_noctxt", "runtime.gogo", "runtime.asmcgocall", "runtime.cgocallback",
	};

	if (f->flag & GOPCLN_FLAG_SPWRITE)
		return true;
	for (size_t i = 0; f->name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(f->name, names[i]))
			return true;
	return false;
}

static int cmp_range(const void *a, const void *b)
{
	const struct ehtab_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int gotab_add(struct ehtab **t, Elf *elf, struct gotab_stats *st)
{
	static const struct unwind_rule end_rule = { .cfa_kind = UNWIND_CFA_END };
	static const struct unwind_rule signal_rule = { .cfa_kind = UNWIND_CFA_SIGNAL };
	struct gotab_stats s = { 0 };
	struct ranges roots = { 0 }, rows = { 0 };
	struct gopcln *go;
	struct gopcln_error gerr;
	int rc = gopcln_elf_open(&go, elf, &gerr);

	if (rc)
		return rc == -ENOMEM ? rc : -ENOENT;
	struct fn_ranges *f = malloc(sizeof(*f));
	if (!f) {
		gopcln_close(go);
		return -ENOMEM;
	}
	for (size_t i = 0; i < gopcln_nr_funcs(go); i++) {
		struct gopcln_func fn;
		if (gopcln_func(go, i, &fn)) {
			s.skipped++;
			continue;
		}
		s.funcs++;
		if (gopcln_func_is_root(&fn)) {
			push(&roots, fn.entry, fn.end, &end_rule);
			s.roots++;
			continue;
		}
		if (fn.name && (!strcmp(fn.name, "runtime.sigreturn__sigaction") ||
				!strcmp(fn.name, "runtime.sigreturn"))) {
			/* the signal handler's restorer (sa_restorer, as
			 * glibc's __restore_rt): the interrupted context is in
			 * the ucontext at rsp.  A handler "returns" to its first
			 * instruction, looked up at address - 1: from there if
			 * that is padding */
			uint64_t from = rows.nr && rows.v[rows.nr - 1].end >= fn.entry ? fn.entry : fn.entry - 1;
			push(&rows, from, fn.end, &signal_rule);
			continue;
		}
		if (fn.name && !strcmp(fn.name, "runtime.asmcgocall"))
			cgo_rows(go, &fn, &rows);
		if (switches_stacks(&fn)) {
			s.skipped++;
			continue;
		}
		f->nr = 0;
		f->too_many = false;
		if (gopcln_pcsp_ranges(go, i, collect, f) < 0 || f->too_many || !f->nr) {
			s.skipped++;
			continue;
		}
		function_rows(go, &fn, f, &rows);
	}
	free(f);
	gopcln_close(go);
	rc = roots.oom || rows.oom ? -ENOMEM : 0;
	if (!rc && !roots.nr)
		rc = -ENOENT; /* every Go program has them: this is not one */
	/* the roots first: rows never replace them */
	if (!rc)
		rc = ehtab_add_ranges(t, roots.v, roots.nr);
	if (!rc && rows.nr) {
		qsort(rows.v, rows.nr, sizeof(*rows.v), cmp_range);
		rc = ehtab_add_ranges(t, rows.v, rows.nr);
	}
	s.rows = rows.nr;
	free(roots.v);
	free(rows.v);
	if (st)
		*st = s;
	return rc;
}
