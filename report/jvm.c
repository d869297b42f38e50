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
	struct bsym_frame frames[];  /* then their names */
};

/* At most this many frames of one compiled frame's inlining chain. */
#define REP_JVM_MAX_DEPTH 32

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

/*
 * The inlining chain the scopes of compiled frame f record at offset off
 * (SPEC.md 6.18): the record at exactly off for a return address, the
 * first at or after it for the interrupted frame (whose pc is between
 * two), or when there is none after it (the pc in a method's last
 * instructions), the last before it; 0 with *rec, *depth set, or -1.  The
 * records are hostile bytes: each is checked against what remains.
 */
static int scope_at(const struct bprof_jvm_frame *f, uint32_t off, bool leaf, const uint8_t **rec,
		    uint32_t *depth)
{
	uint32_t pos = 0, best = UINT32_MAX, before = 0, before_depth = 0;
	const uint8_t *before_rec = NULL;

	*rec = NULL;
	while (f->scopes && f->scopes_len - pos >= 8) {
		uint32_t pc, d;

		memcpy(&pc, f->scopes + pos, 4);
		memcpy(&d, f->scopes + pos + 4, 4);
		if (!d || d > REP_JVM_MAX_DEPTH || (f->scopes_len - pos - 8) / 16 < d)
			return -1;
		if (leaf ? pc >= off && pc < best : pc == off) {
			best = pc;
			*rec = f->scopes + pos + 8;
			*depth = d;
		}
		if (leaf && pc < off && (!before_rec || pc >= before)) {
			before = pc;
			before_rec = f->scopes + pos + 8;
			before_depth = d;
		}
		pos += 8 + 16 * d;
	}
	if (!*rec && before_rec) {
		*rec = before_rec;
		*depth = before_depth;
	}
	return *rec ? 0 : -1;
}

/* "pkg.Class.method" of entry jf into buf (len bytes). */
static void method_name(char *buf, size_t len, const struct bprof_jvm_frame *jf)
{
	if (jf->kind == BPROF_JVM_STUB)
		snprintf(buf, len, "[jvm] %s", jf->method);
	else
		snprintf(buf, len, "%s.%s", jf->klass ? jf->klass : "?", jf->method);
}

static size_t name_len(const struct bprof_jvm_frame *jf)
{
	return (jf->klass ? strlen(jf->klass) : 0) + strlen(jf->method) + 8;
}

const struct bsym_result *rep_jvm_result(const struct rep_input *in, uint32_t pid,
					 uint32_t exec_id, uint64_t w0, uint64_t w1, bool leaf,
					 uint64_t *id)
{
	struct rep_jvmcache *c = in->jvmcache;
	/* the leaf's words look a scope up another way: bit 56 keys it */
	uint64_t key[3] = { (uint64_t)pid << 32 | exec_id, w0, w1 ^ (leaf ? 1ULL << 56 : 0) }, *v;
	const struct bprof_jvm_frame *jf, *chain[REP_JVM_MAX_DEPTH];
	uint32_t lines[REP_JVM_MAX_DEPTH], depth = 1, line;
	const uint8_t *rec;
	struct rep_jvmname *n;
	size_t len = 0;
	char *names;
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
	chain[0] = jf;
	lines[0] = line;
	/* a compiled frame: the methods its scopes say the pc is in,
	 * innermost first, each with its line; all or none */
	if (jf->kind == BPROF_JVM_COMPILED &&
	    !scope_at(jf, (uint32_t)(w1 & BPROF_JVM_OFFSET_MASK), leaf, &rec, &depth)) {
		for (uint32_t k = 0; k < depth; k++) {
			uint64_t method;
			uint32_t guard;
			int32_t bci;

			memcpy(&method, rec + 16 * k, 8);
			memcpy(&guard, rec + 16 * k + 8, 4);
			memcpy(&bci, rec + 16 * k + 12, 4);
			chain[k] = bprof_jvm_frame_find(in->rec, pid, exec_id,
							(uint64_t)BPROF_JVM_INTERPRETED << BPROF_JVM_KIND_SHIFT |
								(method & 0xffffffffffffULL),
							guard);
			lines[k] = 0;
			if (!chain[k] || !chain[k]->method || chain[k]->kind != BPROF_JVM_INTERPRETED) {
				chain[0] = jf;
				lines[0] = 0;
				depth = 1;
				break;
			}
			if (bci < 0 || bsym_jvm_line(chain[k]->lines, chain[k]->lines_len, (uint32_t)bci,
						     &lines[k]))
				lines[k] = 0;
		}
	} else {
		depth = 1;
	}
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct rep_jvmname **a = realloc(c->names, cap * sizeof(*a));

		if (!a)
			return NULL;
		c->names = a;
		c->cap = cap;
	}
	for (uint32_t k = 0; k < depth; k++)
		len += name_len(chain[k]);
	n = calloc(1, sizeof(*n) + depth * sizeof(n->frames[0]) + len);
	if (!n)
		return NULL;
	names = (char *)&n->frames[depth];
	for (uint32_t k = 0; k < depth; k++) {
		struct bsym_frame *fr = &n->frames[k];

		method_name(names, name_len(chain[k]), chain[k]);
		fr->name = names;
		fr->raw_name = names;
		fr->file = chain[k]->file;
		fr->line = lines[k];
		fr->kind = BSYM_FRAME_USER;
		fr->inlined = k + 1 < depth;
		names += name_len(chain[k]);
	}
	n->res.reason = BSYM_OK;
	n->res.nr_frames = depth;
	n->res.frames = n->frames;
	c->names[c->nr++] = n;
	if (rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	*v = c->nr;
	*id = c->nr;
	return &n->res;
}
