/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind_replay.h - the BPF unwinder's step (bpf/unwind/unwind_step.h) compiled for
 * user space over an in-memory environment: captured or synthetic memory,
 * mapping tables and unwind tables laid out exactly as in the BPF maps.
 * Tests replay the walk and compare exact frame lists.
 */
#ifndef BPROF_TESTS_UNWIND_REPLAY_H
#define BPROF_TESTS_UNWIND_REPLAY_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "unwind/unwind.h"

/* One region of readable memory (a stack snapshot, a synthetic frame). */
struct replay_mem {
	uint64_t addr;
	const void *data;
	size_t len;
};

struct replay_page {
	struct unwind_page_key key;
	struct unwind_page val;
};

struct replay_env {
	const struct replay_mem *mem;
	size_t nr_mem;
	/* optional: read what no region covers here (a live process's
	 * /proc/PID/mem); -1 when unused */
	int mem_fd;
	const uint32_t *obj_state;      /* by obj_id */
	size_t nr_objs;
	const struct replay_page *pages; /* any order */
	size_t nr_pages;
	const uint32_t *rows;
	size_t nr_rows;
	const struct unwind_rule *rules;
	size_t nr_rules;
	uint64_t stats[UNWIND_STAT_MAX];
	uint64_t reads;                 /* memory reads made */
};

int replay_read(struct replay_env *e, void *dst, uint32_t size, uint64_t addr);

static inline uint32_t replay_obj_state(struct replay_env *e, uint32_t id)
{
	return id < e->nr_objs ? e->obj_state[id] : UNWIND_OBJ_NO_TABLE;
}

static inline const struct unwind_page *replay_page(struct replay_env *e,
						    const struct unwind_page_key *k)
{
	for (size_t i = 0; i < e->nr_pages; i++)
		if (e->pages[i].key.obj_id == k->obj_id && e->pages[i].key.page == k->page)
			return &e->pages[i].val;
	return NULL;
}

#define UNW_ENV struct replay_env *
#define UNW_READ(env, dst, size, addr) replay_read((env), (dst), (size), (addr))
#define UNW_OBJ_STATE(env, id) replay_obj_state((env), (id))
#define UNW_PAGE(env, key) replay_page((env), (key))
#define UNW_CHUNK(env, ci) ((size_t)(ci) * UNWIND_ROWS_PER_CHUNK < (env)->nr_rows ? &(env)->rows[(size_t)(ci) * UNWIND_ROWS_PER_CHUNK] : NULL)
#define UNW_RULE(env, i) ((size_t)(i) < (env)->nr_rules ? &(env)->rules[(i)] : NULL)
#define UNW_STAT(env, i) ((env)->stats[(i)]++)
#define UNW_OPAQUE(env, x) (x)
#include "unwind/unwind_step.h"

#define REPLAY_MAX_FRAMES 127

/* The walk profile.bpf.c makes, frame by frame: pcs[0] is the interrupted
 * pc.  Returns the number of frames; *result the last unwind_step result
 * (UNWIND_NEXT when cut at max). */
size_t replay_walk(struct replay_env *e, const struct unwind_proc *proc, struct unwind_regs *r,
		   uint64_t *pcs, size_t max, int *result, uint32_t *events);

#endif
