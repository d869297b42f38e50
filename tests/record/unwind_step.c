// SPDX-License-Identifier: Apache-2.0
/*
 * The BPF unwinder's step, replayed in user space on hand-made tables and
 * stacks whose frame lists are known exactly: a chain through rsp- and
 * rbp-based frames to the outermost frame, the PLT expression on both sides
 * of its threshold, a signal frame, __vfork's return address in rdi, CFA
 * dereferences, register-based CFAs, rows spanning pages, the fallbacks to
 * frame pointers (gap, pending table, unknown mapping) and every way a walk
 * must stop (invalid row, bad frame, unreadable memory, depth).
 */
#include <criterion/criterion.h>
#include "unwind_replay.h"

/* Object 1 is mapped at 0x400000 with vaddr 0 there: vaddr = pc - BIAS. */
#define BIAS 0x400000ULL
#define PC(v) (BIAS + (v))

enum {
	R_NONE, R_ENTRY, R_PUSHED, R_RBP, R_PLT11, R_PLT10, R_SIGNAL, R_END, R_INVALID, R_VFORK,
	R_DEREF, R_REG11, R_BIG, R_GOSTACK, R_NR
};

static const struct unwind_rule rules[R_NR] = {
	[R_NONE] = { 0 },
	[R_ENTRY] = { .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 8 },
	[R_PUSHED] = { .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 16, .rbp_kind = UNWIND_RBP_CFA, .rbp_off = -16 },
	[R_RBP] = { .cfa_kind = UNWIND_CFA_RBP, .cfa_off = 16, .rbp_kind = UNWIND_RBP_CFA, .rbp_off = -16 },
	[R_PLT11] = { .cfa_kind = UNWIND_CFA_PLT, .cfa_off = 8, .aux = 11 },
	[R_PLT10] = { .cfa_kind = UNWIND_CFA_PLT, .cfa_off = 8, .aux = 10 },
	[R_SIGNAL] = { .cfa_kind = UNWIND_CFA_SIGNAL },
	[R_END] = { .cfa_kind = UNWIND_CFA_END },
	[R_INVALID] = { .cfa_kind = UNWIND_CFA_INVALID },
	[R_VFORK] = { .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 0, .ra_kind = UNWIND_RA_REG, .aux = UNWIND_REG_RDI },
	[R_DEREF] = { .cfa_kind = UNWIND_CFA_DEREF_RSP, .cfa_off = 16, .aux = 8 },
	[R_REG11] = { .cfa_kind = UNWIND_CFA_REG, .cfa_off = 8, .aux = UNWIND_REG_R11 },
	[R_BIG] = { .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 0x12345 },
	[R_GOSTACK] = { .cfa_kind = UNWIND_CFA_GO_STACK, .cfa_off = 40, .aux = 48 },
};

/*
 * Page 0 of the object (vaddr 0..0xffff):
 *   0x0000 gap            0x1000 leaf (entry rule throughout)
 *   0x2000 mid: entry, 0x2001 pushed, 0x2004 rbp-based, 0x20f0 entry
 *   0x3000 main: entry, 0x3001 pushed      0x4000 _start (end)
 *   0x5000 .plt (threshold 11), 0x5800 .plt.sec-like (threshold 10)
 *   0x5fff __restore_rt (signal; starts one byte early as in glibc)
 *   0x7000 invalid   0x8000 __vfork (ra in rdi)   0x8800 deref
 *   0x8c00 CFA from r11   0x8e00 Go's asmcgocall calling C (GO_STACK)
 *   0x9000 gap again
 * Page 1 (0x10000..): its first row continues the function that began at
 *   0xff00 (pushed), then 0x10800 big frame.
 */
static const uint32_t rows[] = {
	UNWIND_ROW(0x0000, R_NONE),   UNWIND_ROW(0x1000, R_ENTRY),  UNWIND_ROW(0x2000, R_ENTRY),
	UNWIND_ROW(0x2001, R_PUSHED), UNWIND_ROW(0x2004, R_RBP),    UNWIND_ROW(0x20f0, R_ENTRY),
	UNWIND_ROW(0x3000, R_ENTRY),  UNWIND_ROW(0x3001, R_PUSHED), UNWIND_ROW(0x4000, R_END),
	UNWIND_ROW(0x4040, R_NONE),   UNWIND_ROW(0x5000, R_PLT11),  UNWIND_ROW(0x5800, R_PLT10),
	UNWIND_ROW(0x5fff, R_SIGNAL), UNWIND_ROW(0x6010, R_NONE),   UNWIND_ROW(0x7000, R_INVALID),
	UNWIND_ROW(0x8000, R_VFORK),  UNWIND_ROW(0x8800, R_DEREF),  UNWIND_ROW(0x8c00, R_REG11),
	UNWIND_ROW(0x8e00, R_GOSTACK), UNWIND_ROW(0x9000, R_NONE),  UNWIND_ROW(0xff00, R_PUSHED),
	/* page 1 */
	UNWIND_ROW(0x0000, R_PUSHED), UNWIND_ROW(0x0800, R_BIG),
};

static const struct replay_page pages[] = {
	{ { 1, 0 }, { 0, 21 } },
	{ { 1, 1 }, { 21, 2 } },
	/* object 2 has a table with one page: its rows are object 1's */
	{ { 2, 0 }, { 0, 21 } },
};

static uint32_t obj_state[4] = { UNWIND_OBJ_NO_TABLE, UNWIND_OBJ_LOADED, UNWIND_OBJ_PENDING,
				  UNWIND_OBJ_NO_TABLE };

/* The stack: 64 KiB at STACK, built word by word. */
#define STACK 0x7ff0000ULL
static uint64_t stack[8192];

static struct unwind_proc proc;
static struct replay_mem mem;
static struct replay_env env;

static void setup(void)
{
	memset(stack, 0, sizeof(stack));
	memset(&proc, 0, sizeof(proc));
	proc.nr = 3;
	proc.m[0] = (struct unwind_mapping){ .start = BIAS, .end = BIAS + 0x20000, .bias = BIAS, .obj_id = 1 };
	/* a second copy of the text, as object 2 (table pending) */
	proc.m[1] = (struct unwind_mapping){ .start = 0x600000, .end = 0x610000, .bias = 0x600000, .obj_id = 2 };
	/* anonymous executable memory (JIT) */
	proc.m[2] = (struct unwind_mapping){ .start = 0x700000, .end = 0x710000, .obj_id = 0 };
	mem = (struct replay_mem){ .addr = STACK, .data = stack, .len = sizeof(stack) };
	memset(&env, 0, sizeof(env));
	env.mem = &mem;
	env.nr_mem = 1;
	env.mem_fd = -1;
	env.obj_state = obj_state;
	env.nr_objs = 4;
	env.pages = pages;
	env.nr_pages = sizeof(pages) / sizeof(pages[0]);
	env.rows = rows;
	env.nr_rows = sizeof(rows) / sizeof(rows[0]);
	env.rules = rules;
	env.nr_rules = R_NR;
}

TestSuite(unwind_step, .init = setup);

/* word i of the stack */
static uint64_t at(int i)
{
	return STACK + 8 * (uint64_t)i;
}

static struct unwind_regs leaf(uint64_t pc, uint64_t sp, uint64_t bp)
{
	struct unwind_regs r = { 0 };

	r.regs[UNWIND_REG_RA] = pc;
	r.regs[UNWIND_REG_RSP] = sp;
	r.regs[UNWIND_REG_RBP] = bp;
	r.all_regs = 1;
	r.exact_pc = 1;
	r.bp_valid = 1;
	return r;
}

static size_t walk(struct unwind_regs *r, uint64_t *pcs, int *res, uint32_t *ev)
{
	return replay_walk(&env, &proc, r, pcs, REPLAY_MAX_FRAMES, res, ev);
}

static void expect_frames(const uint64_t *got, size_t n, const uint64_t *want, size_t nw)
{
	cr_assert_eq(n, nw, "%zu frames, expected %zu", n, nw);
	for (size_t i = 0; i < nw; i++)
		cr_assert_eq(got[i], want[i], "frame %zu: %#llx, expected %#llx", i,
			     (unsigned long long)got[i], (unsigned long long)want[i]);
}

/* The stack of leaf -> mid (rbp frame) -> main (pushed rbp) -> _start,
 * leaf's frame at word 0. */
static void build_chain(void)
{
	stack[0] = PC(0x2081);       /* leaf's return address, into mid */
	stack[1] = at(100);          /* mid saved main's rbp; mid's rbp = at(1) */
	stack[2] = PC(0x3051);       /* mid's return address, into main */
	stack[3] = 0xdeadbeef;       /* main saved _start's rbp */
	stack[4] = PC(0x4011);       /* main's return address, into _start */
}

Test(unwind_step, chain_to_outermost_frame)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	uint64_t want[] = { PC(0x1050), PC(0x2081), PC(0x3051), PC(0x4011) };
	struct unwind_regs r;
	uint32_t ev;
	int res;

	build_chain();
	r = leaf(PC(0x1050), at(0), at(1));
	expect_frames(pcs, walk(&r, pcs, &res, &ev), want, 4);
	cr_assert_eq(res, UNWIND_COMPLETE);
	cr_assert_eq(ev, 0);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_CFI], 3);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_FP], 0);
}

/* A return address at the very end of a function (a call as its last
 * instruction) belongs to the call: the lookup is made at pc - 1. */
Test(unwind_step, return_address_looked_up_before_it)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* leaf returns to mid at 0x20f0, where the entry rule starts: the
	 * call at 0x20ef still has the rbp-based rule */
	build_chain();
	stack[0] = PC(0x20f0);
	r = leaf(PC(0x1050), at(0), at(1));
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 4);
	cr_assert_eq(pcs[2], PC(0x3051));
	cr_assert_eq(res, UNWIND_COMPLETE);
}

Test(unwind_step, plt_expression_both_sides_of_the_threshold)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* .plt entry +0 (jmp *GOT): nothing pushed yet, RA at rsp */
	stack[0] = PC(0x3051);
	stack[1] = 0;
	stack[2] = PC(0x4011);
	r = leaf(PC(0x5010), at(0), 0);
	/* main (pushed) then runs on rsp = at(1): CFA = at(3), RA at at(2) */
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 3);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(pcs[2], PC(0x4011));

	/* +11 (after push of the index): RA one word higher */
	memset(&env.stats, 0, sizeof(env.stats));
	stack[0] = 42; /* the pushed relocation index */
	stack[1] = PC(0x3051);
	stack[2] = 0;
	stack[3] = PC(0x4011);
	r = leaf(PC(0x501b), at(0), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 3);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(pcs[2], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);

	/* threshold 10: +10 already counts the push */
	r = leaf(PC(0x580a), at(0), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(pcs[1], PC(0x3051));
	/* ... and +9 does not */
	stack[0] = PC(0x3051);
	stack[1] = 0;
	stack[2] = PC(0x4011);
	r = leaf(PC(0x5809), at(0), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(pcs[2], PC(0x4011));
}

Test(unwind_step, signal_frame_restores_every_register)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	uint64_t want[] = { PC(0x1050), PC(0x6000), PC(0x3051), PC(0x4011) };
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* handler (leaf rule) returns to __restore_rt at 0x6000 */
	stack[0] = PC(0x6000);
	/* the ucontext at at(1): uc_mcontext at +40 bytes = word 6 */
	uint64_t *sc = &stack[1 + 5];
	sc[10] = at(300);        /* rbp */
	sc[15] = at(200);        /* rsp of the interrupted frame */
	sc[16] = PC(0x3001);     /* its pc, exact: main's pushed rule */
	sc[11] = 0x1111;         /* rbx, known again */
	/* the interrupted frame: main after push rbp, CFA = rsp + 16 */
	stack[200] = 0xabc;      /* saved rbp */
	stack[201] = PC(0x4011);
	want[2] = PC(0x3001);
	r = leaf(PC(0x1050), at(0), 0);
	size_t n = walk(&r, pcs, &res, &ev);
	expect_frames(pcs, n, want, 4);
	cr_assert_eq(res, UNWIND_COMPLETE);
}

Test(unwind_step, exact_pc_after_signal_is_not_decremented)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* interrupted exactly at main's first instruction (0x3000, entry
	 * rule); pc - 1 would fall in _start's predecessor gap */
	stack[0] = PC(0x6000);
	uint64_t *sc = &stack[1 + 5];
	sc[15] = at(200);
	sc[16] = PC(0x3000);
	stack[200] = PC(0x4011);
	r = leaf(PC(0x1050), at(0), 0);
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 4);
	cr_assert_eq(pcs[2], PC(0x3000));
	cr_assert_eq(pcs[3], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);
}

Test(unwind_step, vfork_return_address_in_rdi)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* __vfork popped its return address into rdi: CFA = rsp */
	stack[0] = 0x77;           /* main's saved rbp, at CFA - 16 of main */
	stack[1] = PC(0x4011);
	r = leaf(PC(0x8010), at(0), 0);
	r.regs[UNWIND_REG_RDI] = PC(0x3051);
	/* main (pushed) runs on rsp = at(0): CFA = at(2), RA at at(1) */
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 3);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(pcs[2], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);
}

Test(unwind_step, register_rules_need_the_interrupted_frame)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* at the leaf: CFA = r11 + 8 = at(11), RA at at(10); main (pushed)
	 * then runs on rsp = at(11): CFA = at(13), RA at at(12) */
	stack[10] = PC(0x3051);
	stack[12] = PC(0x4011);
	r = leaf(PC(0x8c10), at(0), 0);
	r.regs[UNWIND_REG_R11] = at(10);
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 3);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(pcs[2], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);

	/* beyond the leaf, r11 is unknown: the walk stops, counted */
	memset(&env.stats, 0, sizeof(env.stats));
	stack[0] = PC(0x8c10);
	r = leaf(PC(0x1050), at(0), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 2);
	cr_assert_eq(res, UNWIND_STOP);
	cr_assert_eq(env.stats[UNWIND_STAT_STOP_NEEDS_REGS], 1);
}

Test(unwind_step, cfa_dereference)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* CFA = *(rsp + 16) + 8 */
	stack[2] = at(40);
	stack[40] = PC(0x4011); /* RA at CFA - 8 = at(40) + 8 - 8 */
	r = leaf(PC(0x8810), at(0), 0);
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 2);
	cr_assert_eq(pcs[1], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);
}

/* Go's asmcgocall on the system stack, back from C: the goroutine's stack
 * pointer is g->stack.hi - depth (depth at rsp + 40, g at rsp + 48), the
 * CFA 8 above it, on another stack. */
Test(unwind_step, go_system_stack_back_to_the_goroutine)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	stack[5] = 8 * 500;          /* depth below g->stack.hi */
	stack[6] = at(200);          /* g */
	stack[201] = at(1000);       /* g->stack.hi */
	stack[500] = PC(0x4011);     /* asmcgocall's return address, into _start */
	r = leaf(PC(0x8e01), at(0), 0);
	r.exact_pc = 0;
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 2);
	cr_assert_eq(pcs[1], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);

	/* a depth above stack.hi, or no g: the walk stops, nothing invented */
	stack[5] = at(1000) + 8;
	r = leaf(PC(0x8e01), at(0), 0);
	r.exact_pc = 0;
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 1);
	cr_assert_eq(res, UNWIND_STOP);
	stack[5] = 8;
	stack[6] = 0;
	r = leaf(PC(0x8e01), at(0), 0);
	r.exact_pc = 0;
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 1);
	cr_assert_eq(res, UNWIND_STOP);
}

Test(unwind_step, rows_in_the_next_page)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* 0x10010 is covered by page 1's first row (pushed) */
	stack[0] = 5;
	stack[1] = PC(0x4011);
	r = leaf(PC(0x10010), at(0), 0);
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 2);
	cr_assert_eq(pcs[1], PC(0x4011));
	cr_assert_eq(res, UNWIND_COMPLETE);
	/* a return address just past the page boundary looks up 0xffff,
	 * the last row of page 0 (pushed too) */
	stack[0] = PC(0x10000);
	stack[1] = 5;
	stack[2] = PC(0x4011);
	r = leaf(PC(0x1050), at(0), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 3);
	cr_assert_eq(pcs[2], PC(0x4011));
}

Test(unwind_step, gap_falls_back_to_the_frame_pointer)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* pc in the gap at 0x9000: rbp = at(4), [rbp] = 0, [rbp+8] = main */
	stack[4] = 0;
	stack[5] = PC(0x3051);
	stack[6] = 0;
	stack[7] = PC(0x4011);
	r = leaf(PC(0x9010), at(0), at(4));
	size_t n = walk(&r, pcs, &res, &ev);
	/* fp step to main (rsp = at(6)); main pushed: CFA = at(8) */
	cr_assert_eq(n, 3);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(pcs[2], PC(0x4011));
	cr_assert_eq(env.stats[UNWIND_STAT_FP_NO_ROW], 1);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_FP], 1);
	cr_assert_eq(res, UNWIND_COMPLETE);
}

Test(unwind_step, pending_table_and_unknown_code)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* object 2's table is pending: frame pointer, and the event */
	stack[4] = 0;
	stack[5] = PC(0x3051);
	stack[6] = 0;
	stack[7] = PC(0x4011);
	r = leaf(0x601050, at(0), at(4));
	walk(&r, pcs, &res, &ev);
	cr_assert(ev & UNWIND_EV_PENDING);
	cr_assert_not(ev & UNWIND_EV_UNMAPPED);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(env.stats[UNWIND_STAT_FP_PENDING], 1);

	/* a pc in no mapping at all: the mapping table is stale */
	r = leaf(0x900000, at(0), at(4));
	walk(&r, pcs, &res, &ev);
	cr_assert(ev & UNWIND_EV_UNMAPPED);
	cr_assert_eq(pcs[1], PC(0x3051));

	/* JIT memory is a known mapping without an object: no event */
	r = leaf(0x700100, at(0), at(4));
	walk(&r, pcs, &res, &ev);
	cr_assert_not(ev & UNWIND_EV_UNMAPPED);
	cr_assert_eq(pcs[1], PC(0x3051));
}

Test(unwind_step, no_mapping_table_means_frame_pointers)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r = leaf(PC(0x1050), at(0), at(4));
	uint32_t ev;
	int res;

	stack[4] = 0;
	stack[5] = PC(0x3051);
	size_t n = replay_walk(&env, NULL, &r, pcs, REPLAY_MAX_FRAMES, &res, &ev);
	/* leaf -> (fp) main -> rbp 0 ends the chain */
	cr_assert_eq(n, 2);
	cr_assert_eq(pcs[1], PC(0x3051));
	cr_assert_eq(res, UNWIND_STOP);
	cr_assert_eq(env.stats[UNWIND_STAT_STOP_BAD_FRAME], 0);
}

Test(unwind_step, invalid_row_stops)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r = leaf(PC(0x7004), at(0), at(4));
	uint32_t ev;
	int res;

	stack[4] = 0;
	stack[5] = PC(0x3051); /* a frame pointer is there, but must not be used */
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 1);
	cr_assert_eq(res, UNWIND_STOP);
	cr_assert_eq(env.stats[UNWIND_STAT_STOP_INVALID], 1);
}

Test(unwind_step, corrupt_stacks_stop)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* rbp-based rule with rbp below rsp: the CFA would go down */
	stack[0] = PC(0x2081);
	r = leaf(PC(0x1050), at(10), at(1));
	stack[10] = PC(0x2081);
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 2);
	cr_assert_eq(res, UNWIND_STOP);
	cr_assert_eq(env.stats[UNWIND_STAT_STOP_BAD_FRAME], 1);

	/* the return address is outside readable memory */
	r = leaf(PC(0x1050), STACK + sizeof(stack), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, 1);
	cr_assert_eq(res, UNWIND_STOP);
	cr_assert_eq(env.stats[UNWIND_STAT_STOP_READ], 1);

	/* a huge CFA offset reads past the stack */
	r = leaf(PC(0x10810), at(0), 0);
	n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(res, UNWIND_STOP);
}

Test(unwind_step, deep_recursion_is_cut_at_the_depth_limit)
{
	uint64_t pcs[REPLAY_MAX_FRAMES + 1];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	/* 300 frames of main's pushed rule: [saved rbp, RA] pairs */
	for (int i = 0; i < 300; i++) {
		stack[2 * i] = 0;
		stack[2 * i + 1] = PC(0x3051);
	}
	r = leaf(PC(0x3010), at(0), 0);
	size_t n = walk(&r, pcs, &res, &ev);
	cr_assert_eq(n, REPLAY_MAX_FRAMES);
	cr_assert_eq(res, UNWIND_NEXT, "cut, not finished");
	for (size_t i = 1; i < n; i++)
		cr_assert_eq(pcs[i], PC(0x3051));
}

Test(unwind_step, mapping_search_over_a_full_table)
{
	struct unwind_proc *p = calloc(1, sizeof(*p));

	cr_assert_not_null(p);
	p->nr = UNWIND_MAX_MAPPINGS;
	for (int i = 0; i < UNWIND_MAX_MAPPINGS; i++) {
		p->m[i].start = 0x10000000ULL + 0x20000ULL * i;
		p->m[i].end = p->m[i].start + 0x10000;
		p->m[i].obj_id = i + 1;
	}
	for (int i = 0; i < UNWIND_MAX_MAPPINGS; i++) {
		const struct unwind_mapping *m;

		m = unwind_find_mapping(&env, p, p->m[i].start);
		cr_assert(m && m->obj_id == (uint32_t)i + 1, "start of %d", i);
		m = unwind_find_mapping(&env, p, p->m[i].end - 1);
		cr_assert(m && m->obj_id == (uint32_t)i + 1, "end of %d", i);
		cr_assert_null(unwind_find_mapping(&env, p, p->m[i].end), "hole after %d", i);
	}
	cr_assert_null(unwind_find_mapping(&env, p, 0x1000));
	/* a hostile count beyond the array is clamped */
	p->nr = 100000;
	cr_assert_not_null(unwind_find_mapping(&env, p, p->m[UNWIND_MAX_MAPPINGS - 1].start));
	free(p);
}

/* A frame whose pc lies in the range the process changed since its
 * mapping table was read (profile.bpf.c, "older tables") is stepped by
 * its frame pointer, not by the table's row for that address, which may
 * be another object's now; frames outside the range keep their rows. */
Test(unwind_step, changed_range_stepped_by_frame_pointer)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	uint64_t want[] = { PC(0x1050), PC(0x2081), PC(0x3051), PC(0x4011) };
	struct unwind_regs r;
	uint32_t ev;
	int res;

	build_chain();
	r = leaf(PC(0x1050), at(0), at(1));
	/* mid's code (its frame has rbp set up: the frame pointer finds
	 * main's return address too) */
	r.changed_lo = PC(0x2000);
	r.changed_hi = PC(0x3000);
	expect_frames(pcs, walk(&r, pcs, &res, &ev), want, 4);
	cr_assert_eq(res, UNWIND_COMPLETE);
	cr_assert_eq(env.stats[UNWIND_STAT_FP_CHANGED], 1);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_FP], 1);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_CFI], 2);
	cr_assert_eq(ev, 0, "a changed address is not an unmapped one (events %#x)", ev);
}

/* The range's end is not in it: a pc there keeps its row. */
Test(unwind_step, changed_range_end_excluded)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	build_chain();
	r = leaf(PC(0x1050), at(0), at(1));
	r.changed_lo = PC(0x0f00);
	r.changed_hi = PC(0x1050);
	cr_assert_eq(walk(&r, pcs, &res, &ev), 4);
	cr_assert_eq(res, UNWIND_COMPLETE);
	cr_assert_eq(env.stats[UNWIND_STAT_FP_CHANGED], 0);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_CFI], 3);
}

/* A return address just past the range is looked up at its call, inside
 * it: that frame is stepped by frame pointer too. */
Test(unwind_step, changed_range_return_address_at_its_end)
{
	uint64_t pcs[REPLAY_MAX_FRAMES];
	struct unwind_regs r;
	uint32_t ev;
	int res;

	build_chain();
	r = leaf(PC(0x1050), at(0), at(1));
	/* main's return address 0x3051 is the end; its call at 0x3050 is in */
	r.changed_lo = PC(0x2082);
	r.changed_hi = PC(0x3051);
	walk(&r, pcs, &res, &ev);
	cr_assert_eq(env.stats[UNWIND_STAT_FP_CHANGED], 1);
	cr_assert_eq(env.stats[UNWIND_STAT_FRAMES_CFI], 2);
}
