/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind_env.h - the memory unwind_step.h walks in BPF: user memory read
 * with bpf_probe_read_user, the tables in the unwinder's maps (bprof.bpf.h).
 * Included before unwind_step.h by each source that walks (profile.bpf.c,
 * and tailwalk/tailwalk.bpf.c for kernels without bpf_loop), each of which
 * defines UNW_SEARCH_FN first: global functions where the kernel takes
 * pointer arguments to them (5.12+), static ones where it does not.
 */
#ifndef BPROF_UNWIND_ENV_H
#define BPROF_UNWIND_ENV_H

#include "bprof.bpf.h"

/* An object's state; marks it USED (a loaded table met by a walk: it is
 * not evicted) or WANTED (a table that did not fit: loaded next, evicting
 * unused ones), once each, so the common case stays a load.  A walk that
 * set some object's WANTED flag sets unwind_want_wake: the sample tells
 * user space.  UNWIND_NO_ATOMIC_OR (the tail walk, for kernels before
 * 5.12, which have no atomic or): no flags at all, since a plain
 * read-modify-write could undo user space's change of the state beside
 * it; tables a walk uses may then be evicted when the budget is spent,
 * and their frames are walked by frame pointer after. */
static __always_inline __u32 unwind_obj_state(__u32 obj_id)
{
	__u64 *v = bpf_map_lookup_elem(&unwind_objs, &obj_id);
	__u64 s;
	__u32 st;

	if (!v)
		return UNWIND_OBJ_NO_TABLE;
	s = *v;
	st = s & UNWIND_OBJ_STATE_MASK;
#ifndef UNWIND_NO_ATOMIC_OR
	if (st == UNWIND_OBJ_LOADED && !(s & UNWIND_OBJ_USED))
		__sync_fetch_and_or(v, UNWIND_OBJ_USED);
	else if (st == UNWIND_OBJ_NO_ROOM && !(s & UNWIND_OBJ_WANTED)) {
		__sync_fetch_and_or(v, UNWIND_OBJ_WANTED);
		unwind_want_wake = 1;
	}
#endif
	return st;
}

/* See UNW_OPAQUE in unwind_step.h.  env points at a word of the walk's
 * per-CPU scratch value: what is read back from map memory is unknown to
 * the verifier, which then stops tracking (and backtracking precision
 * into) the search bounds.  A store and a load, no helper call. */
static __always_inline __u32 unwind_opaque(__u32 *env, __u32 v)
{
	*(volatile __u32 *)env = v;
	return *(volatile __u32 *)env;
}

/*
 * The walk's user memory reads.  A word of the stack (a return address, a
 * saved rbp, a CFA the rule dereferences) comes from a window: the
 * aligned UNWIND_WIN-byte block that holds it, read once a walk and kept
 * in the scratch, so that the frames above in the same block (a deep
 * recursion's: 10 frames of 48 bytes) cost no read of their own.  Each
 * bpf_probe_read_user was ~90 ns of the ~220 a frame cost (Linux 6.18,
 * per-stage timing, record/DESIGN.md "What a frame costs"), little of it
 * the copy.  The block lies within one page: it is readable whenever the
 * word is.  The scratch is the walk's (env is its opaque word), and the
 * window is forgotten at each walk's start: the stack changes between
 * samples.
 */
static __always_inline int unwind_read(__u32 *env, void *dst, __u32 size, __u64 addr)
{
	struct unwind_scratch *s = container_of(env, struct unwind_scratch, opaque);
	__u64 base = addr & ~(__u64)(UNWIND_WIN - 1), off = addr - base;

	/* size is a constant at every call: one word, or two (a frame
	 * pointer's saved rbp and return address) */
	if ((size != 8 && size != 16) || off > UNWIND_WIN - size)
		return bpf_probe_read_user(dst, size, (const void *)addr);
	if (!s->win_ok || s->win_base != base) {
		s->win_ok = 0;
		if (bpf_probe_read_user(s->win, UNWIND_WIN, (const void *)base))
			return -EFAULT;
		s->win_base = base;
		s->win_ok = 1;
	}
	/* laundered (unwind_opaque, above): an index marked precise would
	 * keep the verifier from finding any two states of the walk equal */
	off = unwind_opaque(env, (__u32)off) & (UNWIND_WIN - 1);
	if (off > UNWIND_WIN - 16)
		return bpf_probe_read_user(dst, size, (const void *)addr);
	((__u64 *)dst)[0] = *(__u64 *)&s->win[off];
	if (size == 16)
		((__u64 *)dst)[1] = *(__u64 *)&s->win[off + 8];
	return 0;
}

/* Frames unwound are counted in the scratch, and in the per-CPU
 * statistics at the walk's end (unwind_walk_end): a count per frame was
 * a call and a map lookup each, ~20 ns. */
static __always_inline void unwind_stat(__u32 *env, __u32 i)
{
	struct unwind_scratch *s = container_of(env, struct unwind_scratch, opaque);

	if (i == UNWIND_STAT_FRAMES_CFI)
		s->frames_cfi++;
	else if (i == UNWIND_STAT_FRAMES_FP)
		s->frames_fp++;
	else
		unwind_count(i);
}

/* The rows of chunk ci (unwind.h: row i is in inner map i / 262144, chunk
 * (i / 1024) % 256). */
static __always_inline const __u32 *unwind_chunk(__u32 ci)
{
	__u32 m = ci / UNWIND_CHUNKS_PER_MAP, k = ci % UNWIND_CHUNKS_PER_MAP;
	void *inner = bpf_map_lookup_elem(&unwind_rows, &m);
	struct unwind_row_chunk *c;

	if (!inner)
		return 0;
	c = bpf_map_lookup_elem(inner, &k);
	return c ? c->r : 0;
}

#define UNW_ENV __u32 *
#ifdef UNWIND_NO_WINDOW
#define UNW_READ(env, dst, size, addr) bpf_probe_read_user((dst), (size), (const void *)(addr))
#else
#define UNW_READ(env, dst, size, addr) unwind_read((env), (dst), (size), (addr))
#endif
#define UNW_READ_DIRECT(env, dst, size, addr) bpf_probe_read_user((dst), (size), (const void *)(addr))
#define UNW_OBJ_STATE(env, id) unwind_obj_state(id)
#define UNW_PAGE(env, key) ((const struct unwind_page *)bpf_map_lookup_elem(&unwind_pages, (key)))
#define UNW_CHUNK(env, ci) unwind_chunk(ci)
#define UNW_RULE(env, i) ({ __u32 _k = (i); (const struct unwind_rule *)bpf_map_lookup_elem(&unwind_rules, &_k); })
#define UNW_STAT(env, i) unwind_stat((env), (i))
#define UNW_OPAQUE(env, x) unwind_opaque((env), (x))

#endif
