/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind_step.h - one step of the user-stack unwinder: from the registers of
 * a frame (pc, sp, bp, and in the interrupted frame all of them) to its
 * caller's, with the tables of unwind.h.
 *
 * A pure function over its inputs, compiled twice: into the BPF program
 * (profile.bpf.c), where memory is read with bpf_probe_read_user and tables
 * are BPF maps, and into user-space tests, which replay captured registers
 * and stack memory against tables built by record/unwind/ehtab and compare frame
 * lists with libdw's unwinder.  The includer provides, before including:
 *
 *   UNW_ENV                     type of the opaque environment pointer
 *   UNW_READ(env, dst, size, addr)  read user memory; 0 or < 0 (the BPF
 *                               side keeps a window of the stack)
 *   UNW_OBJ_STATE(env, obj_id)  enum unwind_obj_state of an object (its
 *                               flags masked off; the BPF side sets them)
 *   UNW_PAGE(env, key_ptr)      const struct unwind_page * or NULL
 *   UNW_CHUNK(env, index)       const __u32 * (the UNWIND_ROWS_PER_CHUNK rows
 *                               of chunk index: rows index * 1024 ...) or NULL
 *   UNW_RULE(env, index)        const struct unwind_rule * or NULL
 *   UNW_STAT(env, stat)         count one enum unwind_stat event
 *   UNW_OPAQUE(env, x)          x, hidden from the BPF verifier's value
 *                               tracking (identity in user space)
 *   UNW_SEARCH_FN               optional: how the two searches are declared
 *                               (default static __always_inline)
 *
 * There are no loops: the caller steps frame by frame (bpf_loop), and the
 * searches are written out step by step.
 */
/* Two guards: the types (struct unwind_regs is part of the BPF walk's
 * scratch, which every tracer's BPF file sees: bpf/bprof.bpf.h) may be
 * included before the includer has defined the UNW_* macros, the step
 * itself only after. */
#ifndef BPROF_UNWIND_STEP_TYPES_H
#define BPROF_UNWIND_STEP_TYPES_H

#include "unwind/unwind.h"

/* Offsets in the frame a sigreturn trampoline runs on: rsp points at the
 * struct ucontext (the handler's return popped pretcode), whose
 * uc_mcontext (struct sigcontext, x86-64) starts after uc_flags, uc_link
 * and uc_stack. */
#define UNWIND_UC_MCONTEXT 40
/* struct sigcontext_64 begins with r8..r15, rdi, rsi, rbp, rbx, rdx, rax,
 * rcx, rsp, rip: 17 words. */
#define UNWIND_SIGCONTEXT_WORDS 17

/* The registers of one frame.  regs[] is valid only where all_regs is set:
 * the interrupted frame and the frame a signal interrupted; deeper frames
 * know only pc, sp and bp (regs[RSP], regs[RBP], regs[RA] hold them). */
struct unwind_regs {
	__u64 regs[UNWIND_NR_REGS]; /* by DWARF number; regs[UNWIND_REG_RA] is the pc */
	__u8 all_regs;    /* every register of regs[] is known */
	__u8 exact_pc;    /* pc is not a return address (no -1 before the lookup) */
	__u8 bp_valid;    /* regs[RBP] is known */
	__u8 used_table;  /* set by unwind_step when a table row unwound the frame */
	/* The walk's last mapping and page (unwind_step), 0 before the
	 * first: a caller is often in its callee's object, and in the same
	 * 64 KiB of it, and then costs neither the mapping search nor the
	 * page's hash lookup (~20 and ~30 ns a frame, Linux 6.18). */
	__u32 m_hint;     /* index + 1 in the proc's mappings */
	__u32 pg_obj;     /* object of the page below (ids are >= 1) */
	__u32 pg_page;    /* vaddr >> UNWIND_PAGE_SHIFT */
	__u32 pg_first;   /* its rows: first and number */
	__u32 pg_nr;
	/* Addresses the process changed since its mapping table was read
	 * ([changed_lo, changed_hi), empty when not below): no row of the
	 * table is used there, they may be another object's now */
	__u64 changed_lo, changed_hi;
	/* where unwind_signal reads the saved context: not on the BPF
	 * stack, where 136 bytes would be copied with every state the
	 * verifier keeps of the walk */
	__u64 sc[UNWIND_SIGCONTEXT_WORDS];
};

/* What a step met, for the caller to act on (bits of *events). */
#define UNWIND_EV_PENDING  (1u << 0) /* an object's table had not arrived */
#define UNWIND_EV_UNMAPPED (1u << 1) /* a trustworthy pc (the interrupted one, or
				      * one a table produced) in no known
				      * mapping: the mapping table is stale */
#define UNWIND_EV_NO_ROOM  (1u << 2) /* an object's table did not fit (yet) */

enum unwind_result {
	UNWIND_NEXT = 0,   /* r holds the caller's frame */
	UNWIND_COMPLETE,   /* this was the outermost frame */
	UNWIND_STOP,       /* cannot go further (counted) */
};
#endif /* BPROF_UNWIND_STEP_TYPES_H */

#if defined(UNW_READ) && !defined(BPROF_UNWIND_STEP_H)
#define BPROF_UNWIND_STEP_H

/*
 * The two binary searches below are written out step by step, not as
 * loops, and their bounds and midpoints go through UNW_OPAQUE.  Both are
 * for the BPF verifier, whose time is most of prof-record's start-up:
 *
 * - a loop counter compared with a constant is tracked exactly, so every
 *   iteration is a new state and the rest of the walk is verified again
 *   behind each one;
 * - an index added to a map-value pointer is marked precise, and precision
 *   flows back through lo and hi into every step: states that differ only
 *   in the search bounds are then never found equal.
 *
 * Laundered through a store and a load, each midpoint is an unknown value
 * masked into range, and the steps verify about once each.  In BPF both
 * searches are also global functions (UNW_SEARCH_FN), verified once on
 * their own rather than in every state a caller reaches them in.
 * Together, for the sampler with the unwinder (Linux 6.18): 76 k
 * instructions processed and 58 ms of verification before, 15 k and 18 ms
 * after.  The mapping search also launders its bounds after each step:
 * the two sides of a step then leave states the verifier finds equal at
 * the next (its 1,127 instructions -> 486).  The row search does not: its
 * chunk cache keeps the sides apart anyway, and the same laundering made
 * it dearer (1,754 -> ~2,200).  The step counts cover the largest search
 * (UNWIND_*_SEARCH_STEPS); a step past the answer only compares.
 */
_Static_assert(UNWIND_MAPPING_SEARCH_STEPS == 9, "unwind_find_mapping writes out 9 steps");
_Static_assert(UNWIND_ROW_SEARCH_STEPS == 17, "unwind_find_rule writes out 17 steps");

/* How the two searches are declared: in BPF, global functions (the
 * verifier checks a global function once, on its own, with its arguments
 * unknown, instead of once for every state a caller reaches it in); in
 * user space, static. */
#ifndef UNW_SEARCH_FN
#define UNW_SEARCH_FN static __always_inline
#endif
/* UNW_CHUNK_CACHE: optional, 0 to look the chunk up at every step of the
 * row search (where the search is inline several times, the tail walk's,
 * the cache's paths cost more verification than its lookups save) */
#ifndef UNW_CHUNK_CACHE
#define UNW_CHUNK_CACHE 1
#endif
/* UNW_READ_DIRECT(env, dst, size, addr): optional, a read the includer
 * need not cache (the rare rules' words); UNW_READ's where not given */
#ifndef UNW_READ_DIRECT
#define UNW_READ_DIRECT(env, dst, size, addr) UNW_READ(env, dst, size, addr)
#endif
/* UNW_MARK(env, stage): optional, the walk entering one of the stages of
 * enum unwind_stage (a measurement build's per-stage timing) */
#ifndef UNW_MARK
#define UNW_MARK(env, stage) do { } while (0)
#endif

/* Index in proc->m of the mapping of pc: the last one starting at or below
 * pc; -1 if none. */
UNW_SEARCH_FN int unwind_mapping_index(UNW_ENV env, const struct unwind_proc *proc, __u64 pc)
{
	__u32 lo = 0, hi;

	if (!env || !proc)
		return -1;
	hi = proc->nr;
	if (hi > UNWIND_MAX_MAPPINGS)
		hi = UNWIND_MAX_MAPPINGS;
	hi = UNW_OPAQUE(env, hi);
#define UNW_MAPPING_STEP							\
	if (lo < hi) {								\
		__u32 mid = UNW_OPAQUE(env, (lo + hi) / 2) & (UNWIND_MAX_MAPPINGS - 1); \
		if (proc->m[mid].start <= pc)					\
			lo = mid + 1;						\
		else								\
			hi = mid;						\
		lo = UNW_OPAQUE(env, lo);					\
		hi = UNW_OPAQUE(env, hi);					\
	}
	UNW_MAPPING_STEP UNW_MAPPING_STEP UNW_MAPPING_STEP
	UNW_MAPPING_STEP UNW_MAPPING_STEP UNW_MAPPING_STEP
	UNW_MAPPING_STEP UNW_MAPPING_STEP UNW_MAPPING_STEP
#undef UNW_MAPPING_STEP
	if (lo == 0 || lo > UNWIND_MAX_MAPPINGS)
		return -1;
	lo = UNW_OPAQUE(env, lo - 1) & (UNWIND_MAX_MAPPINGS - 1);
	if (pc >= proc->m[lo].end)
		return -1;
	return (int)lo;
}

static __always_inline const struct unwind_mapping *
unwind_find_mapping(UNW_ENV env, const struct unwind_proc *proc, __u64 pc)
{
	int i = unwind_mapping_index(env, proc, pc);

	return i < 0 ? 0 : &proc->m[i & (UNWIND_MAX_MAPPINGS - 1)];
}

/* Index of the rule for the page offset want among a page's nr_rows rows
 * from first_row; -1 when there is none (a map lookup failed). */
UNW_SEARCH_FN int unwind_rule_index(UNW_ENV env, __u32 first_row, __u32 nr_rows, __u32 want)
{
	__u32 lo, hi, row, chunk_idx = 0;
	const __u32 *chunk = 0;

	if (!env || !nr_rows || nr_rows > UNWIND_PAGE_MAX_ROWS || want > UNWIND_PAGE_MASK)
		return -1;
	UNW_MARK(env, UNWIND_STAGE_ROWS);
	/* last row whose low address is <= want; row 0 starts at 0.  The
	 * chunk of rows a step reads is looked up only when it is not the
	 * previous step's (two array lookups, of the 17 steps' 34 before):
	 * after the first steps the search stays in one chunk. */
	lo = 0;
	hi = nr_rows;
#define UNW_ROW_AT(i, out)							\
	do {									\
		__u32 _i = (i), _ci = _i / UNWIND_ROWS_PER_CHUNK;		\
		if (!UNW_CHUNK_CACHE || !chunk || _ci != chunk_idx) {		\
			chunk = UNW_CHUNK(env, _ci);				\
			if (!chunk)						\
				return -1;					\
			chunk_idx = _ci;					\
		}								\
		(out) = chunk[_i & (UNWIND_ROWS_PER_CHUNK - 1)];		\
	} while (0)
#define UNW_ROW_STEP						\
	if (hi - lo > 1) {					\
		__u32 mid = UNW_OPAQUE(env, (lo + hi) / 2);	\
		UNW_ROW_AT(first_row + mid, row);		\
		if (UNWIND_ROW_LO(row) <= want)			\
			lo = mid;				\
		else						\
			hi = mid;				\
	}
	UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP
	UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP
	UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP
	UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP UNW_ROW_STEP
	UNW_ROW_STEP
#undef UNW_ROW_STEP
	UNW_ROW_AT(first_row + lo, row);
#undef UNW_ROW_AT
	return (int)UNWIND_ROW_RULE(row);
}

/* The rule for vaddr in object obj_id, NULL when there is none (no FDE
 * covers the page, or a lookup failed); the page from r's cache when it is
 * the last one looked up. */
static __always_inline const struct unwind_rule *
unwind_find_rule(UNW_ENV env, struct unwind_regs *r, __u32 obj_id, __u64 vaddr)
{
	__u32 pg = (__u32)(vaddr >> UNWIND_PAGE_SHIFT);
	const struct unwind_page *page;
	int i;

	if (vaddr >> (32 + UNWIND_PAGE_SHIFT))
		return 0;
	if (r->pg_obj != obj_id || r->pg_page != pg) {
		UNW_MARK(env, UNWIND_STAGE_PAGE_ROWS);
		/* on the BPF stack: Linux 6.1 takes no other memory for a
		 * lookup's key in a callback (the scratch is "mem" there) */
		struct unwind_page_key key = { .obj_id = obj_id, .page = pg };

		page = UNW_PAGE(env, &key);
		if (!page) {
			r->pg_obj = 0;
			return 0;
		}
		r->pg_obj = obj_id;
		r->pg_page = pg;
		r->pg_first = page->first_row;
		r->pg_nr = page->nr_rows;
	}
	i = unwind_rule_index(env, r->pg_first, r->pg_nr, (__u32)(vaddr & UNWIND_PAGE_MASK));
	return i < 0 ? 0 : UNW_RULE(env, (__u32)i);
}

/* The caller by frame pointer: what the kernel's walk does. */
static __always_inline int unwind_fp(UNW_ENV env, struct unwind_regs *r)
{
	__u64 bp = r->regs[UNWIND_REG_RBP], sp = r->regs[UNWIND_REG_RSP], ra, nbp;
	/* read into r->sc (unwind_signal's buffer, free here), not onto the
	 * BPF stack: Linux 6.1 refuses the walk's call chain past 512 bytes
	 * of stack in all ("combined stack size of 5 calls") */
	__u64 *frame = r->sc;

	/* a zero rbp ends a frame-pointer chain (_start and clone clear it);
	 * not a fault, but not known to be the outermost frame either */
	if (!r->bp_valid || !bp)
		return UNWIND_STOP;
	if (bp < sp || (bp & 7)) {
		UNW_STAT(env, UNWIND_STAT_STOP_BAD_FRAME);
		return UNWIND_STOP;
	}
	/* the saved rbp at bp, the return address above it: one read */
	if (UNW_READ(env, frame, 16, bp)) {
		UNW_STAT(env, UNWIND_STAT_STOP_READ);
		return UNWIND_STOP;
	}
	nbp = frame[0];
	ra = frame[1];
	if (!ra)
		return UNWIND_COMPLETE; /* the conventional end of a frame chain */
	r->regs[UNWIND_REG_RA] = ra;
	r->regs[UNWIND_REG_RSP] = bp + 16;
	r->regs[UNWIND_REG_RBP] = nbp;
	r->bp_valid = 1;
	r->all_regs = 0;
	r->exact_pc = 0;
	r->used_table = 0;
	UNW_STAT(env, UNWIND_STAT_FRAMES_FP);
	return UNWIND_NEXT;
}

/* A sigreturn trampoline: the interrupted context is in the ucontext at
 * sp; every register is known again, and its pc is exact. */
static __always_inline int unwind_signal(UNW_ENV env, struct unwind_regs *r)
{
	__u64 *sc = r->sc;

	if (UNW_READ_DIRECT(env, sc, sizeof(r->sc), r->regs[UNWIND_REG_RSP] + UNWIND_UC_MCONTEXT)) {
		UNW_STAT(env, UNWIND_STAT_STOP_READ);
		return UNWIND_STOP;
	}
	r->regs[UNWIND_REG_R8] = sc[0];
	r->regs[UNWIND_REG_R9] = sc[1];
	r->regs[UNWIND_REG_R10] = sc[2];
	r->regs[UNWIND_REG_R11] = sc[3];
	r->regs[UNWIND_REG_R12] = sc[4];
	r->regs[UNWIND_REG_R13] = sc[5];
	r->regs[UNWIND_REG_R14] = sc[6];
	r->regs[UNWIND_REG_R15] = sc[7];
	r->regs[UNWIND_REG_RDI] = sc[8];
	r->regs[UNWIND_REG_RSI] = sc[9];
	r->regs[UNWIND_REG_RBP] = sc[10];
	r->regs[UNWIND_REG_RBX] = sc[11];
	r->regs[UNWIND_REG_RDX] = sc[12];
	r->regs[UNWIND_REG_RAX] = sc[13];
	r->regs[UNWIND_REG_RCX] = sc[14];
	r->regs[UNWIND_REG_RSP] = sc[15];
	r->regs[UNWIND_REG_RA] = sc[16];
	if (!r->regs[UNWIND_REG_RA])
		return UNWIND_COMPLETE;
	r->all_regs = 1;
	r->exact_pc = 1;
	r->bp_valid = 1;
	r->used_table = 1;
	UNW_STAT(env, UNWIND_STAT_FRAMES_CFI);
	return UNWIND_NEXT;
}

/*
 * Replace the frame in r by its caller's.  proc may be NULL (no mapping
 * table for the process yet: frame pointers only).  *events gets
 * UNWIND_EV_* bits.  Every stop is counted in the stats.
 */
static __always_inline int unwind_step(UNW_ENV env, const struct unwind_proc *proc,
				       struct unwind_regs *r, __u32 *events)
{
	const struct unwind_mapping *m;
	const struct unwind_rule *rule;
	__u64 pc = r->regs[UNWIND_REG_RA], sp = r->regs[UNWIND_REG_RSP];
	__u64 bp = r->regs[UNWIND_REG_RBP], cfa, ra = 0, nbp = 0, base = 0, vaddr, tmp = 0;
	__u32 state, other_stack = 0;

	if (!proc)
		goto by_fp;
	/* (the address looked up: a return address's call, below it) */
	if (pc - (r->exact_pc ? 0 : 1) - r->changed_lo < r->changed_hi - r->changed_lo) {
		UNW_STAT(env, UNWIND_STAT_FP_CHANGED);
		goto by_fp;
	}
	UNW_MARK(env, UNWIND_STAGE_MAPPING);
	m = 0;
	if (r->m_hint && r->m_hint <= UNWIND_MAX_MAPPINGS) {
		m = &proc->m[(r->m_hint - 1) & (UNWIND_MAX_MAPPINGS - 1)];
		if (pc < m->start || pc >= m->end)
			m = 0;
	}
	if (!m) {
		int mi = unwind_mapping_index(env, proc, pc);

		r->m_hint = mi < 0 ? 0 : (__u32)mi + 1;
		m = mi < 0 ? 0 : &proc->m[mi & (UNWIND_MAX_MAPPINGS - 1)];
	}
	if (!m && (r->used_table || r->all_regs))
		*events |= UNWIND_EV_UNMAPPED;
	if (!m || !m->obj_id) {
		UNW_STAT(env, UNWIND_STAT_FP_NO_MAPPING);
		goto by_fp;
	}
	UNW_MARK(env, UNWIND_STAGE_OBJECT);
	state = UNW_OBJ_STATE(env, m->obj_id);
	if (state == UNWIND_OBJ_PENDING) {
		UNW_STAT(env, UNWIND_STAT_FP_PENDING);
		*events |= UNWIND_EV_PENDING;
		goto by_fp;
	}
	if (state == UNWIND_OBJ_NO_ROOM) {
		UNW_STAT(env, UNWIND_STAT_FP_NO_ROOM);
		*events |= UNWIND_EV_NO_ROOM;
		goto by_fp;
	}
	if (state != UNWIND_OBJ_LOADED) {
		UNW_STAT(env, UNWIND_STAT_FP_NO_TABLE);
		goto by_fp;
	}
	/* A return address points after the call: look up the call itself,
	 * which may be the last instruction of its function. */
	vaddr = pc - m->bias - (r->exact_pc ? 0 : 1);
	rule = unwind_find_rule(env, r, m->obj_id, vaddr);
	if (!rule || rule->cfa_kind == UNWIND_CFA_NONE) {
		UNW_STAT(env, UNWIND_STAT_FP_NO_ROW);
		goto by_fp;
	}

	UNW_MARK(env, UNWIND_STAGE_READ);
	switch (rule->cfa_kind) {
	case UNWIND_CFA_END:
		return UNWIND_COMPLETE;
	case UNWIND_CFA_SIGNAL:
		return unwind_signal(env, r);
	case UNWIND_CFA_RSP:
		cfa = sp + (__s64)rule->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		if (!r->bp_valid)
			goto needs_regs;
		cfa = bp + (__s64)rule->cfa_off;
		break;
	case UNWIND_CFA_DEREF_RSP:
	case UNWIND_CFA_DEREF_RBP:
		if (rule->cfa_kind == UNWIND_CFA_DEREF_RBP && !r->bp_valid)
			goto needs_regs;
		base = rule->cfa_kind == UNWIND_CFA_DEREF_RSP ? sp : bp;
		if (UNW_READ_DIRECT(env, &tmp, 8, base + (__s64)rule->cfa_off))
			goto read_fault;
		cfa = tmp + (__s64)rule->aux;
		break;
	case UNWIND_CFA_PLT:
		cfa = sp + (__s64)rule->cfa_off + ((pc & 15) >= (__u64)(__u8)rule->aux ? 8 : 0);
		break;
	case UNWIND_CFA_REG:
		/* the RA column (16) is never a frame base */
		if (!r->all_regs || (__u8)rule->aux >= UNWIND_REG_RA)
			goto needs_regs;
		cfa = r->regs[(__u8)rule->aux & 15] + (__s64)rule->cfa_off;
		break;
	case UNWIND_CFA_GO_STACK:
		/* back from the system stack to the goroutine's: its SP is
		 * g->stack.hi - depth (asmcgocall saved both there) */
		/* tmp: depth, base: g, nbp: g->stack.hi (rbp is set below) */
		if (UNW_READ_DIRECT(env, &tmp, 8, sp + (__s64)rule->cfa_off) ||
		    UNW_READ_DIRECT(env, &base, 8, sp + (__s64)rule->aux) || !base ||
		    UNW_READ_DIRECT(env, &nbp, 8, base + 8))
			goto read_fault;
		if (tmp > nbp || tmp >= (1ULL << 32)) {
			UNW_STAT(env, UNWIND_STAT_STOP_BAD_FRAME);
			return UNWIND_STOP;
		}
		cfa = nbp - tmp + 8;
		other_stack = 1;
		break;
	default: /* UNWIND_CFA_INVALID and anything unknown */
		UNW_STAT(env, UNWIND_STAT_STOP_INVALID);
		return UNWIND_STOP;
	}

	if (rule->ra_kind == UNWIND_RA_REG) {
		if (!r->all_regs || (__u8)rule->aux >= UNWIND_REG_RA)
			goto needs_regs;
		ra = r->regs[(__u8)rule->aux & 15];
	} else if (UNW_READ(env, &ra, 8, cfa - 8)) {
		goto read_fault;
	}

	if (rule->rbp_kind == UNWIND_RBP_CFA) {
		if (UNW_READ(env, &nbp, 8, cfa + (__s64)rule->rbp_off))
			goto read_fault;
		r->bp_valid = 1;
	} else if (rule->rbp_kind == UNWIND_RBP_UNDEFINED) {
		nbp = 0;
		r->bp_valid = 0;
	} else {
		nbp = bp;
	}

	/* The caller's frame is above this one: anything else is a corrupt
	 * stack or a wrong rule, and going on could loop.  Only a return
	 * address kept in a register (__vfork) leaves the CFA at rsp. */
	if (!other_stack && (cfa < sp || (cfa == sp && rule->ra_kind != UNWIND_RA_REG))) {
		UNW_STAT(env, UNWIND_STAT_STOP_BAD_FRAME);
		return UNWIND_STOP;
	}
	if (!ra)
		return UNWIND_COMPLETE;
	r->regs[UNWIND_REG_RA] = ra;
	r->regs[UNWIND_REG_RSP] = cfa;
	r->regs[UNWIND_REG_RBP] = nbp;
	r->all_regs = 0;
	r->exact_pc = 0;
	r->used_table = 1;
	UNW_MARK(env, UNWIND_STAGE_COUNT);
	UNW_STAT(env, UNWIND_STAT_FRAMES_CFI);
	return UNWIND_NEXT;

by_fp:
	/* one place, so that the frame-pointer step is compiled (and
	 * verified) once in the step, not at each fallback */
	return unwind_fp(env, r);
needs_regs:
	UNW_STAT(env, UNWIND_STAT_STOP_NEEDS_REGS);
	return UNWIND_STOP;
read_fault:
	UNW_STAT(env, UNWIND_STAT_STOP_READ);
	return UNWIND_STOP;
}

#endif /* BPROF_UNWIND_STEP_H */
