/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python.c - Python frames of a recording named (SPEC.md 6.15): the two
 * stack words of a frame, the PYTHON section's copy of its code object,
 * and libsym's decoding of its line table, as a bsym_result like a native
 * frame's, so that every output takes them as it takes native frames.
 * A frame whose code object the recorder did not copy (or copied after
 * the address held another one: the guard differs) stays unnamed.  The
 * runtime's row (runtime.h) is all this file exports.
 */
#include <stdlib.h>

#include "runtime.h"

extern const struct rep_runtime rep_runtime_python; /* this file's row, at its end */

/* The code a frame's words name in rec and its line (-1: none): 0, or -1
 * when the recording has no copy of it. */
static int code_of(const struct bprof_recording *rec, uint32_t pid, uint32_t exec_id, uint64_t w0,
		   uint64_t w1, const struct bprof_python_code **code, int32_t *line)
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

static struct bsym_result *name(const struct bprof_recording *rec, uint32_t pid, uint32_t exec_id,
				uint64_t w0, uint64_t w1, bool leaf)
{
	struct pyname {
		struct bsym_result res;
		struct bsym_frame frame;
	} *n;
	const struct bprof_python_code *code;
	int32_t line;

	(void)leaf;
	if (code_of(rec, pid, exec_id, w0, w1, &code, &line) || !(n = calloc(1, sizeof(*n))))
		return NULL;
	n->frame.name = code->qualname;
	n->frame.raw_name = code->qualname;
	n->frame.file = code->filename;
	n->frame.line = line > 0 ? (uint32_t)line : 0;
	n->frame.kind = BSYM_FRAME_USER;
	n->res.reason = BSYM_OK;
	n->res.nr_frames = 1;
	n->res.frames = &n->frame;
	return &n->res;
}

static bool present(const struct bprof_recording *rec)
{
	return rec->python.present;
}

/* The interpreters the recorder found, why each was (not) walked, and
 * the walk's counters. */
static void info(FILE *f, const struct bprof_recording *rec)
{
	static const char *const status[] = {
		[BPROF_PY_WALKED] = "Python frames walked",
		[BPROF_PY_UNKNOWN_VERSION] = "unknown version: native stacks only",
		[BPROF_PY_FREE_THREADED] = "free-threaded build: not supported, native stacks only",
		[BPROF_PY_NO_OFFSETS] = "offsets unreadable or implausible: native stacks only",
	};
	const struct bprof_python *py = &rec->python;
	uint64_t frames, named;

	rep_runtime_count(&rep_runtime_python, rec, &frames, &named);
	fprintf(f, "python:         %llu interpreter%s, %llu code objects copied; %llu of %llu Python frames in stacks named\n",
		(unsigned long long)py->nr_procs, py->nr_procs == 1 ? "" : "s",
		(unsigned long long)py->nr_codes, (unsigned long long)named,
		(unsigned long long)frames);
	for (uint64_t i = 0; i < py->nr_procs; i++) {
		const struct bprof_python_proc *p = &py->procs[i];

		if (p->version)
			fprintf(f, "  pid %-8u CPython %u.%u.%u: %s\n", p->pid, p->version >> 24,
				(p->version >> 16) & 0xff, (p->version >> 8) & 0xff,
				p->status <= BPROF_PY_STATUS_MAX ? status[p->status] : "?");
		else /* 3.10 and older: no Py_Version */
			fprintf(f, "  pid %-8u CPython of an unknown version (before 3.11: no Py_Version): %s\n",
				p->pid, p->status <= BPROF_PY_STATUS_MAX ? status[p->status] : "?");
	}
	rep_runtime_counters(f, py->counters, py->nr_counters, bprof_python_counter_name);
}

const struct rep_runtime rep_runtime_python = {
	.tag_mask = BPROF_PY_TAG_MASK,
	.tag0 = BPROF_PY_TAG_CODE,
	.tag1 = BPROF_PY_TAG_INSTR,
	.present = present,
	.name = name,
	.info = info,
	.unnamed = "[python]",
	.mark = "_[py]",
	.addr_mask = BPROF_PY_ADDR_MASK,
	/* a loop's frames come just before the _PyEval_EvalFrameDefault
	 * frame that ran them */
	.stands_for_native = true,
	/* its name alone is not where in the function it was */
	.export_unnamed = true,
	.export_lines = true,
};
