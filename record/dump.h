/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump.h - after sampling, the BPF maps into the bprof_recording: the
 * counts and the stacks they name, the loss counters, the UNWIND section,
 * and the recording's metadata.  Reads the maps once, at the end, as
 * bcc's profile does: the counting happens in the kernel.  Never prints.
 */
#ifndef BPROF_RECORD_DUMP_H
#define BPROF_RECORD_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bprof.h"
#include "manifest/manifest.h"
#include "options.h"
#include "offcpu/offcpu.h"
#include "profile.h"
#include "unwind/unwind.h"
#include "unwinder.h"

struct profile_bpf;

/* For the status line. */
struct dump_totals {
	uint64_t samples;   /* on-CPU */
	uint64_t offcpu_samples; /* --off-cpu, --wall */
	uint64_t processes; /* distinct pids but 0 (idle) */
};

/*
 * The BPF counters only grow; a file carries what they counted since the
 * previous file (--rotate writes many).  Start from all zeros.
 */
struct dump_base {
	uint64_t losses[PROFILE_LOSS_MAX]; /* enum profile_loss */
	uint64_t unwind[UNWIND_STAT_MAX];  /* enum unwind_stat */
	uint64_t offcpu[OFFCPU_STAT_MAX];  /* enum offcpu_stat */
};

/* The n totals in sum become what was counted since base (the totals
 * when the previous file was written), and base takes the totals.  A total
 * below its base (a map that could not be read) counts 0, not 2^64 - k. */
static inline void dump_since(uint64_t *sum, uint64_t *base, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t s = sum[i];

		sum[i] = s >= base[i] ? s - base[i] : 0;
		base[i] = s;
	}
}

/*
 * The counts of set gen (rotate_gen, profile.bpf.c; 0 without --rotate)
 * and every stack they name into rec (rec owns the stacks' ips), adding to
 * *tot; the sampled processes' images are asked of the manifest.  A stack
 * that cannot be read is counted as lost and its counts point at -ENOENT,
 * so the file never names a stack it lacks.  The set must be quiet (no
 * sample may still add to it).  0 or -ENOMEM.
 */
int dump_counts(struct profile_bpf *obj, unsigned gen, struct bprof_recording *rec,
		struct manifest *man, struct dump_totals *tot);

/* Empty set gen (after dump_counts) for the interval after next.  0, or
 * the first error of the kernel. */
int dump_clear(struct profile_bpf *obj, unsigned gen);

/* The per-CPU loss counters, summed, less what base says earlier files
 * carried, into *l; base moves on (*l untouched when out of memory). */
void dump_losses(struct profile_bpf *obj, struct bprof_losses *l, int nr_cpus,
		 struct dump_base *base);

/* The unwinder's per-CPU counters summed into sum[UNWIND_STAT_MAX]
 * (bpf/unwind/unwind.h); zeros when they cannot be read. */
void dump_unwind_stats(struct profile_bpf *obj, uint64_t *sum, int nr_cpus);

/* rec->unwind, and the loss of samples walked before their tables; cfi:
 * the unwinder was loaded, unw: its tables (NULL: none). */
void dump_unwind(struct bprof_recording *rec, struct profile_bpf *obj,
		 const struct env *env, bool cfi, const struct unwinder *unw, int nr_cpus,
		 struct dump_base *base);

/* The objects whose tables are not loaded for lack of room, into
 * rec->unwind.misses, each named in OBJECTS (after manifest_emit).  0 or
 * -ENOMEM. */
int dump_unwind_misses(struct bprof_recording *rec, const struct unwinder *unw,
		       struct manifest *man);

/* The META section.  Takes ownership of *options (NULL afterwards), even on
 * failure.  0 or -ENOMEM. */
int dump_meta(struct bprof_meta *meta, const struct env *env, char **options,
	      const char *event, uint64_t start_real, uint64_t duration, int nr_sampled);

#endif
