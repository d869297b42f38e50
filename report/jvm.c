/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm.c - HotSpot frames of a recording named (SPEC.md 6.18): the two
 * stack words of a frame, the JVM section's copy of what names its
 * identity, and libsym's decoding of the method's line number table, as a
 * bsym_result like a native frame's.  A frame whose identity the recorder
 * did not name (or named for another guard: the method was recompiled,
 * deoptimized or unloaded and the address reused) stays unnamed, "[java]".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct rep_jvmname {
	struct bsym_result res;
	struct bsym_frame frame;
	char name[];
};

struct rep_jvmcache {
	struct rep_map map;           /* (pid, exec_id, w0, w1) -> index + 1, 0: unnamed */
	struct rep_jvmname **names;
	size_t nr, cap;
};

void rep_jvmcache_free(struct rep_jvmcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		free(c->names[i]);
	free(c->names);
	rep_map_free(&c->map);
	free(c);
}

int rep_jvmcache_create(struct rep_input *in)
{
	if (!in->rec->jvm.present)
		return 0;
	in->jvmcache = calloc(1, sizeof(*in->jvmcache));
	return in->jvmcache ? 0 : -ENOMEM;
}

const struct bprof_jvm_frame *rep_jvm_name(const struct bprof_recording *rec, uint32_t pid,
					   uint32_t exec_id, uint64_t w0, uint64_t w1,
					   uint32_t *line)
{
	const struct bprof_jvm_frame *f;

	*line = 0;
	f = bprof_jvm_frame_find(rec, pid, exec_id, w0 & BPROF_JVM_ID_MASK,
				 (uint32_t)(w1 >> BPROF_JVM_GUARD_SHIFT));
	if (f && f->kind == BPROF_JVM_INTERPRETED &&
	    bsym_jvm_line(f->lines, f->lines_len, (uint32_t)(w1 & BPROF_JVM_OFFSET_MASK), line))
		*line = 0;
	return f;
}

const struct bsym_result *rep_jvm_result(const struct rep_input *in, uint32_t pid,
					 uint32_t exec_id, uint64_t w0, uint64_t w1, uint64_t *id)
{
	struct rep_jvmcache *c = in->jvmcache;
	uint64_t key[3] = { (uint64_t)pid << 32 | exec_id, w0, w1 }, *v;
	const struct bprof_jvm_frame *jf;
	struct rep_jvmname *n;
	uint32_t line;
	size_t len;
	bool found;

	*id = 0;
	if (!c || rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	if (found) {
		*id = *v;
		return *v ? &c->names[*v - 1]->res : NULL;
	}
	jf = rep_jvm_name(in->rec, pid, exec_id, w0, w1, &line);
	if (!jf || !jf->method)
		return NULL;
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct rep_jvmname **a = realloc(c->names, cap * sizeof(*a));

		if (!a)
			return NULL;
		c->names = a;
		c->cap = cap;
	}
	/* "pkg.Class.method", a stub as "[jvm] its name" */
	len = (jf->klass ? strlen(jf->klass) : 0) + strlen(jf->method) + 8;
	n = calloc(1, sizeof(*n) + len);
	if (!n)
		return NULL;
	if (jf->kind == BPROF_JVM_STUB)
		snprintf(n->name, len, "[jvm] %s", jf->method);
	else
		snprintf(n->name, len, "%s.%s", jf->klass ? jf->klass : "?", jf->method);
	n->frame.name = n->name;
	n->frame.raw_name = n->name;
	n->frame.file = jf->file;
	n->frame.line = line;
	n->frame.kind = BSYM_FRAME_USER;
	n->res.reason = BSYM_OK;
	n->res.nr_frames = 1;
	n->res.frames = &n->frame;
	c->names[c->nr++] = n;
	if (rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	*v = c->nr;
	*id = c->nr;
	return &n->res;
}
