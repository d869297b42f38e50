/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python.c - Python frames of a recording named (SPEC.md 6.15): the two
 * stack words of a frame, the PYTHON section's copy of its code object,
 * and libsym's decoding of its line table, as a bsym_result like a native
 * frame's, so that every output takes them as it takes native frames.
 * A frame whose code object the recorder did not copy (or copied after
 * the address held another one: the guard differs) stays unnamed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct rep_pyname {
	struct bsym_result res;
	struct bsym_frame frame;
};

struct rep_pycache {
	struct rep_map map;           /* (pid, exec_id, w0, w1) -> index + 1, 0: unnamed */
	struct rep_pyname **names;
	size_t nr, cap;
};

void rep_pycache_free(struct rep_pycache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		free(c->names[i]);
	free(c->names);
	rep_map_free(&c->map);
	free(c);
}

int rep_python_name(const struct bprof_recording *rec, uint32_t pid, uint32_t exec_id,
		    uint64_t w0, uint64_t w1, const struct bprof_python_code **code, int32_t *line)
{
	const struct bprof_python_code *c;
	uint64_t off = w1 & BPROF_PY_OFFSET_MASK;

	*code = NULL;
	*line = -1;
	c = bprof_python_code_find(rec, pid, exec_id, w0 & BPROF_PY_ADDR_MASK,
				   (uint32_t)(w1 >> BPROF_PY_GUARD_SHIFT));
	if (!c)
		return -1;
	*code = c;
	/* the line of an instruction inside the code; none otherwise */
	if (off + 2 >= c->code_offset && off < (uint64_t)c->code_offset + 2ULL * c->nr_units &&
	    bsym_python_line(c->linetable, c->linetable_len, c->firstlineno,
			     (int64_t)off - c->code_offset, line))
		*line = -1;
	return 0;
}

const struct bsym_result *rep_python_result(const struct rep_input *in, uint32_t pid,
					    uint32_t exec_id, uint64_t w0, uint64_t w1,
					    uint64_t *id)
{
	struct rep_pycache *c = in->pycache;
	uint64_t key[3] = { (uint64_t)pid << 32 | exec_id, w0, w1 }, *v;
	const struct bprof_python_code *code;
	struct rep_pyname *n;
	bool found;
	int32_t line;

	*id = 0;
	if (!c || rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	if (found) {
		*id = *v;
		return *v ? &c->names[*v - 1]->res : NULL;
	}
	if (rep_python_name(in->rec, pid, exec_id, w0, w1, &code, &line))
		return NULL;
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct rep_pyname **a = realloc(c->names, cap * sizeof(*a));

		if (!a)
			return NULL;
		c->names = a;
		c->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->frame.name = code->qualname;
	n->frame.raw_name = code->qualname;
	n->frame.file = code->filename;
	n->frame.line = line > 0 ? (uint32_t)line : 0;
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

int rep_pycache_create(struct rep_input *in)
{
	if (!in->rec->python.present)
		return 0;
	in->pycache = calloc(1, sizeof(*in->pycache));
	return in->pycache ? 0 : -ENOMEM;
}
