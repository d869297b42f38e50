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

static __always_inline int unwind_read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
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

static __always_inline const __u32 *unwind_row(__u32 i)
{
	__u32 m = i / UNWIND_ROWS_PER_MAP, k = (i / UNWIND_ROWS_PER_CHUNK) % UNWIND_CHUNKS_PER_MAP;
	void *inner = bpf_map_lookup_elem(&unwind_rows, &m);
	struct unwind_row_chunk *c;

	if (!inner)
		return 0;
	c = bpf_map_lookup_elem(inner, &k);
	return c ? &c->r[i & (UNWIND_ROWS_PER_CHUNK - 1)] : 0;
}

#define UNW_ENV __u32 *
#define UNW_READ(env, dst, size, addr) unwind_read((dst), (size), (addr))
#define UNW_OBJ_STATE(env, id) unwind_obj_state(id)
#define UNW_PAGE(env, key) ((const struct unwind_page *)bpf_map_lookup_elem(&unwind_pages, (key)))
#define UNW_ROW(env, i) unwind_row(i)
#define UNW_RULE(env, i) ({ __u32 _k = (i); (const struct unwind_rule *)bpf_map_lookup_elem(&unwind_rules, &_k); })
#define UNW_STAT(env, i) unwind_count(i)
#define UNW_OPAQUE(env, x) unwind_opaque((env), (x))

#endif
