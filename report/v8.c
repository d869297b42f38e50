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
	struct bsym_frame frame;
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

const struct bsym_result *rep_v8_result(const struct rep_input *in, uint32_t pid,
					uint32_t exec_id, uint64_t w0, uint64_t w1, uint64_t *id)
{
	struct rep_v8cache *c = in->v8cache;
	/* the position bits are not part of the name (no line per position
	 * yet): one name per SFI and guard */
	uint64_t key[3] = { (uint64_t)pid << 32 | exec_id, w0, w1 >> BPROF_V8_GUARD_SHIFT }, *v;
	const struct bprof_v8_sfi *s;
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
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->frame.name = s->name[0] ? s->name : "(anonymous)";
	n->frame.raw_name = n->frame.name;
	n->frame.file = s->script[0] ? s->script : NULL;
	n->frame.line = s->line > 0 ? (uint32_t)s->line : 0;
	n->frame.kind = BSYM_FRAME_USER;
	n->res.reason = BSYM_OK;
	n->res.nr_frames = 1;
	n->res.frames = &n->frame;
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
