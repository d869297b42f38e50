/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm.c - HotSpot frames of a recording named (SPEC.md 6.18): the two
 * stack words of a frame, the JVM section's copy of what names its
 * identity, and libsym's decoding of the method's line number table, as a
 * bsym_result like a native frame's.  A frame whose identity the recorder
 * did not name (or named for another guard: the method was recompiled,
 * deoptimized or unloaded and the address reused) stays unnamed, "[java]".
 * The runtime's row (runtime.h) is all this file exports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* At most this many frames of one compiled frame's inlining chain. */
#define REP_JVM_MAX_DEPTH 32

/* What a frame's words name in rec and its line (0: none); NULL when the
 * recording did not name it. */
static const struct bprof_jvm_frame *frame_of(const struct bprof_recording *rec, uint32_t pid,
					      uint32_t exec_id, uint64_t w0, uint64_t w1, uint32_t *line)
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

/* The leaf's words look a scope up another way: bit 56 keys it. */
static uint64_t name_key(uint64_t w1, bool leaf)
{
	return w1 ^ (leaf ? 1ULL << 56 : 0);
}

/* A compiled frame's inlined methods first (frames[0] innermost, as
 * libsym's inlines). */
static struct bsym_result *name(const struct bprof_recording *rec, uint32_t pid, uint32_t exec_id,
				uint64_t w0, uint64_t w1, bool leaf)
{
	struct jvmname {
		struct bsym_result res;
		struct bsym_frame frames[]; /* then their names */
	} *n;
	const struct bprof_jvm_frame *jf, *chain[REP_JVM_MAX_DEPTH];
	uint32_t lines[REP_JVM_MAX_DEPTH], depth = 1, line;
	const uint8_t *scope;
	size_t len = 0;
	char *names;

	jf = frame_of(rec, pid, exec_id, w0, w1, &line);
	if (!jf || !jf->method)
		return NULL;
	chain[0] = jf;
	lines[0] = line;
	/* a compiled frame: the methods its scopes say the pc is in,
	 * innermost first, each with its line; all or none */
	if (jf->kind == BPROF_JVM_COMPILED &&
	    !scope_at(jf, (uint32_t)(w1 & BPROF_JVM_OFFSET_MASK), leaf, &scope, &depth)) {
		for (uint32_t k = 0; k < depth; k++) {
			uint64_t method;
			uint32_t guard;
			int32_t bci;

			memcpy(&method, scope + 16 * k, 8);
			memcpy(&guard, scope + 16 * k + 8, 4);
			memcpy(&bci, scope + 16 * k + 12, 4);
			chain[k] = bprof_jvm_frame_find(rec, pid, exec_id,
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
	return &n->res;
}

static bool present(const struct bprof_recording *rec)
{
	return rec->jvm.present;
}

/* The JVMs the recorder found, why each was (not) walked, and the walk's
 * counters. */
static void info(FILE *f, const struct bprof_recording *rec)
{
	static const char *const status[] = {
		[BPROF_JVM_WALKED] = "Java frames walked",
		[BPROF_JVM_UNKNOWN_VERSION] = "a HotSpot release bprof does not know (11 to 21): "
					      "Java frames unnamed, native stacks end at generated code",
		[BPROF_JVM_NO_OFFSETS] = "its introspection tables unreadable or implausible: "
					 "native stacks only",
		[BPROF_JVM_NOT_READY] = "its code cache was not made while recorded: native stacks only",
	};
	const struct bprof_jvm *j = &rec->jvm;
	uint64_t walked = 0;

	for (uint64_t i = 0; i < j->nr_procs; i++)
		walked += j->procs[i].status == BPROF_JVM_WALKED;
	fprintf(f, "jvm:            %llu JVM%s (%llu walked), %llu frame identities named\n",
		(unsigned long long)j->nr_procs, j->nr_procs == 1 ? "" : "s",
		(unsigned long long)walked, (unsigned long long)j->nr_frames);
	for (uint64_t i = 0; i < j->nr_procs; i++) {
		const struct bprof_jvm_proc *p = &j->procs[i];

		fprintf(f, "  pid %-8u HotSpot %s: %s\n", p->pid, p->version ? p->version : "(release unknown)",
			p->status <= BPROF_JVM_STATUS_MAX ? status[p->status] : "?");
	}
	rep_runtime_counters(f, j->counters, j->nr_counters, bprof_jvm_counter_name);
}

/* As Java prints a stack trace: pkg.Class.method(File.java:line). */
static void frame_text(char *buf, size_t len, const struct bsym_frame *b)
{
	if (b->line)
		snprintf(buf, len, "%s(%s:%u)", b->name, b->file ? b->file : "?", b->line);
	else if (b->file)
		snprintf(buf, len, "%s(%s)", b->name, b->file);
	else
		snprintf(buf, len, "%s", b->name);
}

const struct rep_runtime rep_runtime_jvm = {
	.tag_mask = BPROF_JVM_TAG_MASK,
	.tag0 = BPROF_JVM_TAG_ID,
	.tag1 = BPROF_JVM_TAG_POS,
	.present = present,
	.name_key = name_key,
	.name = name,
	.info = info,
	.frame_text = frame_text,
	.unnamed = "[java]",
	.mark = NULL,
	.addr_mask = BPROF_JVM_ID_MASK,
	/* in the place of its native frame, as V8's */
	.stands_for_native = false,
	/* the exports take a Java method as a native function */
	.export_unnamed = false,
	.export_lines = false,
};
