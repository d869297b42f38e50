/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.h - the lines prof-record prints on stderr: the start line (as
 * bcc's profile words it), the end-of-run status line and the warnings
 * that say which option to raise, and -v's unwinder statistics.
 */
#ifndef BPROF_RECORD_STATUS_H
#define BPROF_RECORD_STATUS_H

#include <stdint.h>
#include "bprof.h"
#include "dump.h"
#include "manifest/manifest.h"
#include "options.h"
#include "unwinder.h"

struct profile_bpf;

/* "Sampling at 49 Hertz of all threads by user + kernel stack..." */
void status_header(const struct env *env);

/* The end-of-run line (unless -q, more with -v) and the warnings
 * (always).  output: the file written, for its name and size. */
void status_report(const struct env *env, const struct bprof_recording *rec,
		   const struct dump_totals *tot, const struct manifest_stats *mst,
		   uint64_t events, const char *output);

/* -v: the unwind tables' statistics and the BPF unwinder's counters. */
void status_unwinder(const struct unwinder *unw, struct profile_bpf *obj, int nr_cpus);
/* The warning, at the end, for tables that did not fit in --unwind-memory:
 * how many, the largest by name, and the value that would have held them. */
void status_unwind_misses(const struct unwinder *unw, const struct manifest *man);

#endif
