/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8.c - V8 JavaScript frames of a recording named (SPEC.md 6.17): the two
 * stack words of a frame and the V8 section's entry for its SFI, as a
 * bsym_result like a native frame's, so that every output takes them as
 * it takes native frames.  A frame whose SFI the recorder did not name
 * (or named after the address held another one: the guard differs) stays
 * unnamed, "[js]".  The runtime's row (runtime.h) is what this file
 * exports, and rep_v8_pos for its test.
 */
#include <stdlib.h>

#include "runtime.h"

extern const struct rep_runtime rep_runtime_v8; /* this file's row, at its end */

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

/* The position is part of the name only in optimized code, where it says
 * which inlined functions run, and in interpreted code, where it says
 * which line. */
static uint64_t name_key(uint64_t w1, bool leaf)
{
	uint64_t kind = (w1 >> BPROF_V8_KIND_SHIFT) & 3;

	(void)leaf;
	return kind == BPROF_V8_KIND_CODE || kind == BPROF_V8_KIND_BYTECODE ? w1
									    : w1 >> BPROF_V8_GUARD_SHIFT;
}

/* Its inlined functions first when it ran optimized code. */
static struct bsym_result *name(const struct bprof_recording *rec, uint32_t pid, uint32_t exec_id,
				uint64_t w0, uint64_t w1, bool leaf)
{
	struct v8name {
		struct bsym_result res;
		struct bsym_frame frames[]; /* innermost first, as bsym's */
	} *n;
	const struct bprof_v8_sfi *s;
	const struct bprof_v8_pos *row;
	uint32_t nf;

	(void)leaf;
	s = bprof_v8_sfi_find(rec, pid, exec_id, w0 & BPROF_V8_ADDR_MASK,
			      (uint32_t)((w1 & BPROF_V8_ADDR_MASK) >> BPROF_V8_GUARD_SHIFT));
	if (!s)
		return NULL;
	row = rep_v8_pos(s, w1);
	nf = row ? row->nr_frames : 1;
	n = calloc(1, sizeof(*n) + nf * sizeof(n->frames[0]));
	if (!n)
		return NULL;
	for (uint32_t k = 0; k < nf; k++) {
		/* the row's frames are outermost first */
		const struct bprof_v8_frame *r = row ? &row->frames[nf - 1 - k] : NULL;
		struct bsym_frame *f = &n->frames[k];
		const char *fname = r ? r->name : s->name, *script = r ? r->script : s->script;
		int32_t line = r ? r->line : s->line;

		f->name = fname[0] ? fname : "(anonymous)";
		f->raw_name = f->name;
		f->file = script[0] ? script : NULL;
		f->line = line > 0 ? (uint32_t)line : 0;
		f->kind = BSYM_FRAME_USER;
		f->inlined = k + 1 < nf;
	}
	n->res.reason = BSYM_OK;
	n->res.nr_frames = nf;
	n->res.frames = n->frames;
	return &n->res;
}

static bool present(const struct bprof_recording *rec)
{
	return rec->v8.present;
}

/* The V8 processes the recorder found, why each was (not) walked, and
 * its counters. */
static void info(FILE *f, const struct bprof_recording *rec)
{
	static const char *const status[] = {
		[BPROF_V8_WALKED] = "JavaScript frames walked (layout from the binary's v8dbg_ symbols)",
		[BPROF_V8_NO_OFFSETS] = "a V8 whose v8dbg_ symbols lack what the walk needs: native stacks only",
	};
	const struct bprof_v8 *v = &rec->v8;
	uint64_t frames, named;

	rep_runtime_count(&rep_runtime_v8, rec, &frames, &named);
	fprintf(f, "v8:             %llu process%s, %llu SFIs named; %llu of %llu JavaScript frames in stacks named\n",
		(unsigned long long)v->nr_procs, v->nr_procs == 1 ? "" : "es",
		(unsigned long long)v->nr_sfis, (unsigned long long)named, (unsigned long long)frames);
	for (uint64_t i = 0; i < v->nr_procs; i++)
		fprintf(f, "  pid %-8u V8: %s\n", v->procs[i].pid,
			v->procs[i].status <= BPROF_V8_STATUS_MAX ? status[v->procs[i].status] : "?");
	rep_runtime_counters(f, v->counters, v->nr_counters, bprof_v8_counter_name);
}

const struct rep_runtime rep_runtime_v8 = {
	.tag_mask = BPROF_V8_TAG_MASK,
	.tag0 = BPROF_V8_TAG_SFI,
	.tag1 = BPROF_V8_TAG_POS,
	.present = present,
	.name_key = name_key,
	.name = name,
	.info = info,
	.unnamed = "[js]",
	.mark = "_[js]",
	.addr_mask = BPROF_V8_ADDR_MASK,
	/* in the place of its native frame: nothing to hide; its caller was
	 * found by the frame pointer, as a JIT frame's */
	.stands_for_native = false,
	.export_unnamed = true,
	.export_lines = true,
};
