/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind_walk.h - a user-stack walk over unwind_step.h, frame by frame:
 * its start from the registers in the scratch, one frame, and its end.
 * Shared by the two walks that drive it: profile.bpf.c's bpf_loop
 * (unwind_walk_regs, with Python frames between the native ones) and
 * tailwalk/tailwalk.bpf.c's runs chained by tail calls, for kernels
 * without bpf_loop.  The includer's options (UNWIND_NO_ATOMIC_OR,
 * UNWIND_NO_WINDOW, UNW_SEARCH_FN, UNW_CHUNK_CACHE, UNW_MARK: unwind_env.h
 * and unwind_step.h say what each does) are defined before including it.
 */
#ifndef BPROF_UNWIND_WALK_H
#define BPROF_UNWIND_WALK_H

#include "unwind/unwind_env.h"  /* the BPF memory and tables ... */
#include "unwind/unwind_step.h" /* ... that the step walks */

/* The walk's start from the user registers in s->pt.  Each copy is
 * fenced (barrier()): see walk_user_stack() in profile.bpf.c. */
static __always_inline void unwind_walk_start(struct unwind_scratch *s)
{
	s->events = 0;
	s->r.regs[UNWIND_REG_RAX] = s->pt.ax; barrier();
	s->r.regs[UNWIND_REG_RDX] = s->pt.dx; barrier();
	s->r.regs[UNWIND_REG_RCX] = s->pt.cx; barrier();
	s->r.regs[UNWIND_REG_RBX] = s->pt.bx; barrier();
	s->r.regs[UNWIND_REG_RSI] = s->pt.si; barrier();
	s->r.regs[UNWIND_REG_RDI] = s->pt.di; barrier();
	s->r.regs[UNWIND_REG_RBP] = s->pt.bp; barrier();
	s->r.regs[UNWIND_REG_RSP] = s->pt.sp; barrier();
	s->r.regs[UNWIND_REG_R8] = s->pt.r8; barrier();
	s->r.regs[UNWIND_REG_R9] = s->pt.r9; barrier();
	s->r.regs[UNWIND_REG_R10] = s->pt.r10; barrier();
	s->r.regs[UNWIND_REG_R11] = s->pt.r11; barrier();
	s->r.regs[UNWIND_REG_R12] = s->pt.r12; barrier();
	s->r.regs[UNWIND_REG_R13] = s->pt.r13; barrier();
	s->r.regs[UNWIND_REG_R14] = s->pt.r14; barrier();
	s->r.regs[UNWIND_REG_R15] = s->pt.r15; barrier();
	s->r.regs[UNWIND_REG_RA] = s->pt.ip; barrier();
	s->r.all_regs = 1;
	s->r.exact_pc = 1;
	s->r.bp_valid = 1;
	s->r.used_table = 0;
	s->r.m_hint = 0;
	s->r.pg_obj = 0;
	s->r.changed_lo = s->changed_lo;
	s->r.changed_hi = s->changed_hi;
	s->changed_lo = 0;
	s->changed_hi = 0;
	s->stack.nr = 0;
	s->stack.flags = 0;
	s->hash = 0xcbf29ce484222325ULL;
	s->result = 0;
	s->nr_native = 0;
	s->py_mode = PY_MODE_NATIVE;
	s->frames_cfi = 0;
	s->frames_fp = 0;
	s->win_ok = 0;
}

/* One native frame: its pc recorded (or, when w0 is not 0, the two words
 * w0, w1 that name it in its place: a V8 JavaScript frame, v8_walk.h),
 * the step to its caller; 1 when the walk ends (s->result says how), 0
 * to go on. */
static __always_inline int unwind_walk_frame_as(struct unwind_scratch *s,
						const struct unwind_proc *proc, __u64 w0, __u64 w1)
{
	__u32 n = s->stack.nr;
	__u64 pc;
	bool leaf;
	int res;

	if (n >= PROFILE_MAX_USTACK_DEPTH) {
		s->result = -1;
		return 1;
	}
	pc = s->r.regs[UNWIND_REG_RA];
	/* Readers look up every address but the leaf's at address - 1 (a
	 * return address follows its call).  The pc a signal interrupted is
	 * exact: record it + 1 so that the lookup lands on it (SPEC.md 6.3). */
	if (n && s->r.exact_pc)
		pc++;
	if (w0 && n + 1 < PROFILE_MAX_USTACK_DEPTH) {
		/* the frame's identity, not its pc: two pcs of one function
		 * are one frame, and two functions' frames in one piece of
		 * code (the interpreter) are two */
		barrier_var(n);
		if (n > PROFILE_MAX_USTACK_DEPTH - 2)
			return 1;
		s->stack.ips[n] = w0;
		s->stack.ips[n + 1] = w1;
		s->stack.nr = n + 2;
		s->hash = (s->hash ^ w0) * 0x100000001b3ULL;
		pc = w1;
	} else {
		w0 = 0;
		s->stack.ips[n] = pc;
		s->stack.nr = n + 1;
	}
	leaf = s->nr_native++ == 0;
	/* FNV-1a over 64-bit words, finished with a mixer (unwind_walk_end) */
	s->hash = (s->hash ^ pc) * 0x100000001b3ULL;
	res = unwind_step(&s->opaque, proc, &s->r, &s->events);
	UNW_MARK(&s->opaque, UNWIND_STAGE_RECORD);
	/* Stepping out of a signal trampoline leaves an exact pc behind.  The
	 * handler "returned" to the trampoline's first instruction, which
	 * address - 1 would put in the function before it: + 1 here too. */
	if (res == UNWIND_NEXT && n && s->r.exact_pc && !w0) {
		s->stack.ips[n] = pc + 1;
		s->hash = (s->hash ^ 1) * 0x100000001b3ULL;
	}
	if (res == UNWIND_NEXT) {
		if (s->r.used_table) {
			/* the report trusts a frame-pointer-free caller of the
			 * interrupted frame only with this flag (its id's
			 * PROFILE_CFI_STACK_EXACT) */
			if (leaf)
				s->stack.flags |= PROFILE_USTACK_LEAF_CFI;
		} else {
			s->stack.flags |= PROFILE_USTACK_FALLBACK;
			if (!fp_fallback) {
				/* cfi only: a frame pointer is not a table */
				s->result = UNWIND_STOP;
				return 1;
			}
		}
		return 0;
	}
	s->result = res;
	return 1;
}

/* The walk is over: what it met counted, its flags and hash final.  0,
 * or -EFAULT when it recorded no frame. */
static __always_inline long unwind_walk_end(struct unwind_scratch *s)
{
	if (s->frames_cfi)
		unwind_add(UNWIND_STAT_FRAMES_CFI, s->frames_cfi);
	if (s->frames_fp)
		unwind_add(UNWIND_STAT_FRAMES_FP, s->frames_fp);
	if (s->events & UNWIND_EV_PENDING)
		unwind_count(UNWIND_STAT_SAMPLES_PENDING);
	if (s->events & UNWIND_EV_NO_ROOM)
		unwind_count(UNWIND_STAT_SAMPLES_NO_ROOM);
	if ((s->events & UNWIND_EV_UNMAPPED) && !(s->events & UNWIND_EV_PENDING))
		unwind_count(UNWIND_STAT_SAMPLES_UNMAPPED);
	if (s->result == UNWIND_COMPLETE) {
		s->stack.flags |= PROFILE_USTACK_COMPLETE;
		unwind_count(UNWIND_STAT_SAMPLES_COMPLETE);
	} else if (s->result == -1 || s->result == UNWIND_NEXT) {
		s->stack.flags |= PROFILE_USTACK_TRUNCATED;
		unwind_count(UNWIND_STAT_SAMPLES_TRUNCATED);
	}
	if (!s->stack.nr)
		return -EFAULT;
	s->hash = stack_hash_mix(s->hash);
	return 0;
}

/* One native frame, its pc recorded. */
static __always_inline int unwind_walk_frame(struct unwind_scratch *s, const struct unwind_proc *proc)
{
	return unwind_walk_frame_as(s, proc, 0, 0);
}

#endif
