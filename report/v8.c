/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8.c - V8 JavaScript frames of a recording named (SPEC.md 6.17): the two
 * stack words of a frame and the V8 section's entry for its SFI, as a
 * bsym_result like a native frame's, so that every output takes them as
 * it takes native frames.  A frame whose SFI the recorder did not name
 * (or named after the address held another one: the guard differs) stays
 * unnamed, "[js]".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct rep_v8name {
	struct bsym_result res;
	struct bsym_frame frames[]; /* innermost first, as bsym's */
};

struct rep_v8cache {
	struct rep_map map;           /* (pid, exec_id, w0, guard) -> index + 1, 0: unnamed */
	struct rep_v8name **names;
	size_t nr, cap;
};

void rep_v8cache_free(struct rep_v8cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		free(c->names[i]);
	free(c->names);
	rep_map_free(&c->map);
	free(c);
}

const struct bprof_v8_sfi *rep_v8_name(const struct bprof_recording *rec, uint32_t pid,
				       uint32_t exec_id, uint64_t w0, uint64_t w1)
{
	return bprof_v8_sfi_find(rec, pid, exec_id, w0 & BPROF_V8_ADDR_MASK,
				 (uint32_t)((w1 & BPROF_V8_ADDR_MASK) >> BPROF_V8_GUARD_SHIFT));
}

const struct bprof_v8_pos *rep_v8_pos(const struct bprof_v8_sfi *s, uint64_t w1)
{
	uint64_t off = w1 & BPROF_V8_POS_MASK;
	size_t lo = 0, hi;

	uint64_t kind = (w1 >> BPROF_V8_KIND_SHIFT) & 3;

	if ((kind != BPROF_V8_KIND_CODE && kind != BPROF_V8_KIND_BYTECODE) || !s->nr_pos)
		return NULL;
	/* the last row at or before the offset */
	hi = s->nr_pos;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pos[mid].code_offset <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &s->pos[lo - 1] : NULL;
}

const struct bsym_result *rep_v8_result(const struct rep_input *in, uint32_t pid,
					uint32_t exec_id, uint64_t w0, uint64_t w1, uint64_t *id)
{
	struct rep_v8cache *c = in->v8cache;
	/* the position is part of the name only in optimized code, where
	 * it says which inlined functions run, and in interpreted code,
	 * where it says which line (SPEC.md 6.17) */
	uint64_t kind = (w1 >> BPROF_V8_KIND_SHIFT) & 3;
	uint64_t key[3] = { (uint64_t)pid << 32 | exec_id, w0,
			    kind == BPROF_V8_KIND_CODE || kind == BPROF_V8_KIND_BYTECODE
				    ? w1
				    : w1 >> BPROF_V8_GUARD_SHIFT },
		 *v;
	const struct bprof_v8_sfi *s;
	const struct bprof_v8_pos *row;
	uint32_t nf;
	struct rep_v8name *n;
	bool found;

	*id = 0;
	if (!c || rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	if (found) {
		*id = *v;
		return *v ? &c->names[*v - 1]->res : NULL;
	}
	s = rep_v8_name(in->rec, pid, exec_id, w0, w1);
	if (!s)
		return NULL;
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct rep_v8name **a = realloc(c->names, cap * sizeof(*a));

		if (!a)
			return NULL;
		c->names = a;
		c->cap = cap;
	}
	row = rep_v8_pos(s, w1);
	nf = row ? row->nr_frames : 1;
	n = calloc(1, sizeof(*n) + nf * sizeof(n->frames[0]));
	if (!n)
		return NULL;
	for (uint32_t k = 0; k < nf; k++) {
		/* the row's frames are outermost first */
		const struct bprof_v8_frame *r = row ? &row->frames[nf - 1 - k] : NULL;
		struct bsym_frame *f = &n->frames[k];
		const char *name = r ? r->name : s->name, *script = r ? r->script : s->script;
		int32_t line = r ? r->line : s->line;

		f->name = name[0] ? name : "(anonymous)";
		f->raw_name = f->name;
		f->file = script[0] ? script : NULL;
		f->line = line > 0 ? (uint32_t)line : 0;
		f->kind = BSYM_FRAME_USER;
		f->inlined = k + 1 < nf;
	}
	n->res.reason = BSYM_OK;
	n->res.nr_frames = nf;
	n->res.frames = n->frames;
	c->names[c->nr++] = n;
	/* the map may have moved: look the slot up again */
	if (rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	*v = c->nr;
	*id = c->nr;
	return &n->res;
}

int rep_v8cache_create(struct rep_input *in)
{
	if (!in->rec->v8.present)
		return 0;
	in->v8cache = calloc(1, sizeof(*in->v8cache));
	return in->v8cache ? 0 : -ENOMEM;
}
