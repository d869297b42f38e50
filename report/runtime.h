/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime.h - the runtimes whose frames the recorder walks (CPython, V8,
 * HotSpot), on the report side: one row of operations a runtime, one table
 * of rows (runtime.c).  A runtime's frame is two tagged words in a walked
 * user stack, named from the runtime's section of the recording (SPEC.md
 * 6.15, 6.17, 6.18); walk.c, fold.c, render.c, info.c and the exporters
 * ask the table, never a runtime by name.  A row's file (python.c, v8.c,
 * jvm.c) exports its row alone and calls nothing of the report: what the
 * report does around every row (the cache of names found) is runtime.c's,
 * and what the rows' own code shares is inline below.
 * docs/development.md, "Adding a runtime (report side)".
 */
#ifndef BPROF_REPORT_RUNTIME_H
#define BPROF_REPORT_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bprof.h"
#include "bsym.h"

struct rep_input;

struct rep_runtime {
	/* Its frames' two words: (w0 & tag_mask) == tag0, (w1 & tag_mask) == tag1. */
	uint64_t tag_mask, tag0, tag1;
	/* Whether rec holds what names its frames (its section). */
	bool (*present)(const struct bprof_recording *rec);
	/* What of w1 (and of being the leaf) the frame's name depends on, for
	 * the cache of names; NULL: w1 as it is. */
	uint64_t (*name_key)(uint64_t w1, bool leaf);
	/* The name of the frame w0, w1 of process (pid, exec_id): one
	 * allocation, freed with free(), holding the bsym_result and all it
	 * points to; NULL when rec does not name it (or out of memory).  leaf:
	 * the interrupted frame, not a caller. */
	struct bsym_result *(*name)(const struct bprof_recording *rec, uint32_t pid,
				    uint32_t exec_id, uint64_t w0, uint64_t w1, bool leaf);
	/* --info, when rec has its section: what rec says of the runtime. */
	void (*info)(FILE *f, const struct bprof_recording *rec);
	/* A named frame in the text outputs, into buf; NULL: "name (file:line)". */
	void (*frame_text)(char *buf, size_t len, const struct bsym_frame *f);
	const char *unnamed; /* what an unnamed frame prints: "[python]" */
	const char *mark;    /* -a's annotation of its frames ("_[py]"), NULL: none */
	uint64_t addr_mask;  /* --addresses: unnamed+0x(w0 & addr_mask) */
	/* The recorder put its frames just before the native frame of the
	 * loop that ran them: they stand for it, which is left out unless
	 * --python-native. */
	bool stands_for_native;
	/* pprof and speedscope: an unnamed frame is named ->unnamed (else it
	 * is a nameless location, "[unknown]"); a named frame's line is part
	 * of it (else its lines are summed into one frame, as a native
	 * function's). */
	bool export_unnamed, export_lines;
};

/* A frame's text in the text outputs holds at most this many bytes (a
 * name and a file of up to 4096 bytes each, BPROF_PY_NAME_MAX and the
 * others, and a line); longer text is cut. */
#define REP_RUNTIME_TEXT_MAX (2 * 4096 + 64)

/* Whether ips[i], ips[i+1] are a frame of runtime r. */
static inline bool rep_runtime_is(const struct rep_runtime *r, const uint64_t *ips, size_t i,
				  size_t nr)
{
	return i + 1 < nr && (ips[i] & r->tag_mask) == r->tag0 &&
	       (ips[i + 1] & r->tag_mask) == r->tag1;
}

/* ---- the table, and the report's use of it (runtime.c) ---------------- */

/* NULL-terminated. */
extern const struct rep_runtime *const rep_runtimes[];

/* Which runtime's frame ips[i], ips[i+1] are: its index in rep_runtimes,
 * or -1. */
int rep_runtime_at(const uint64_t *ips, size_t i, size_t nr);
/* in's caches of names, one for each runtime its recording has (into
 * in->runtimes); 0 or -ENOMEM.  Closed by rep_runtimes_close (also after a
 * failed open). */
int rep_runtimes_open(struct rep_input *in);
void rep_runtimes_close(struct rep_input *in);
/* The name of a frame of runtime rt, w0, w1 of row (pid, exec_id) of in,
 * owned by in (NULL: unnamed); *id a number of that name unique among rt's
 * in in (0: unnamed). */
const struct bsym_result *rep_runtime_name(const struct rep_input *in, int rt, uint32_t pid,
					   uint32_t exec_id, uint64_t w0, uint64_t w1, bool leaf,
					   uint64_t *id);
/* --info: each runtime's lines, in the table's order. */
void rep_runtimes_info(FILE *f, const struct bprof_recording *rec);

/* ---- for the rows' own code ------------------------------------------- */

/* For --info: how many frames of runtime r rec's stacks hold, and how many
 * of them a process of rec names (the row's process is not known here:
 * a name in any process of the file will do for a count). */
static inline void rep_runtime_count(const struct rep_runtime *r, const struct bprof_recording *rec,
				     uint64_t *frames, uint64_t *named)
{
	*frames = *named = 0;
	for (uint64_t i = 0; i < rec->nr_stacks; i++) {
		const struct bprof_stack *s = &rec->stacks[i];

		for (uint32_t j = 0; j < s->nr_ips; j++) {
			if (!rep_runtime_is(r, s->ips, j, s->nr_ips))
				continue;
			++*frames;
			for (uint64_t p = 0; p < rec->nr_processes; p++) {
				struct bsym_result *res = r->name(rec, rec->processes[p].pid,
								  rec->processes[p].exec_id, s->ips[j],
								  s->ips[j + 1], false);
				if (res) {
					free(res);
					++*named;
					break;
				}
			}
			j++;
		}
	}
}

/* --info's lines of a runtime's counters v[0..n), those name() names. */
static inline void rep_runtime_counters(FILE *f, const uint64_t *v, uint32_t n,
					const char *(*name)(unsigned i))
{
	for (uint32_t i = 0; i < n; i++)
		if (name(i))
			fprintf(f, "  %-31s %llu\n", name(i), (unsigned long long)v[i]);
}

/* v8.c's position row of a frame of optimized code (its inlined
 * functions), or NULL; exported for tests/report/test_v8.c. */
const struct bprof_v8_pos *rep_v8_pos(const struct bprof_v8_sfi *s, uint64_t w1);

#endif
