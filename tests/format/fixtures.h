/* SPDX-License-Identifier: Apache-2.0 */
/* fixtures.h - recordings built in memory, shared by the format tests and
 * the golden-file generator. */
#ifndef BPROF_TEST_FIXTURES_H
#define BPROF_TEST_FIXTURES_H

#include <stdbool.h>
#include <stddef.h>

#include "bprof.h"

/* Each returns a new recording (NULL on allocation failure). */
struct bprof_recording *fx_empty(void);
/* A few of everything, deterministic. */
struct bprof_recording *fx_typical(void);
/* The typical recording as format 1.0 could hold it (no unwinder data):
 * what valid/v1.0-typical.bprof, written by the 1.0 writer, reads as. */
struct bprof_recording *fx_typical_v10(void);
/* The typical recording as format 1.1 could hold it (no ACCESS section):
 * what valid/v1.1-typical.bprof, written by the 1.1 writer, reads as. */
struct bprof_recording *fx_typical_v11(void);
/* format 1.2's typical: fx_typical without mapping generations */
struct bprof_recording *fx_typical_v12(void);
/* format 1.3's typical: mapping generations; 27 UNWIND counters, no misses */
struct bprof_recording *fx_typical_v13(void);
/* fx_typical with off-CPU time (format 1.5, OFFCPU): --wall, a row of
 * each state after the on-CPU rows (where the reader puts them). */
struct bprof_recording *fx_offcpu(void);
/* fx_offcpu with time slices (format 1.6, SLICES): 20 ms slices, row i in
 * slice 3*i, and the first row repeated in a later slice */
struct bprof_recording *fx_slices(void);
/* fx_offcpu with a PYTHON section (1.7): two interpreters, two codes */
struct bprof_recording *fx_python(void);
/* fx_python with a JVM section (1.9): two JVMs, an interpreted method, a
 * compiled one and a stub, and a stack with their frames. */
struct bprof_recording *fx_jvm(void);
/* fx_python with a JIT section (1.8): counters, two jitdumps. */
struct bprof_recording *fx_jit(void);
/* fx_jit with a V8 section (1.9): two processes, two SFIs, a stack naming both. */
/* fx_v8's V8 counters: the four of the section's first writer */
#define FX_V8_COUNTERS 4
struct bprof_recording *fx_v8(void);
/* Strings with odd bytes: UTF-8, control characters, high bytes, spaces. */
struct bprof_recording *fx_odd_strings(void);
/* nr_counts counts over nr_stacks stacks and nr_ksyms ksyms; seeded. */
struct bprof_recording *fx_large(unsigned nr_counts, unsigned nr_stacks, unsigned nr_ksyms,
				 unsigned seed);

/* Deep comparison; on a difference writes a description to why. */
bool fx_equal(const struct bprof_recording *a, const struct bprof_recording *b, char *why,
	      size_t why_len);

/* Helpers for building golden and invalid files. */
char *fx_strdup(const char *s);

#endif
