/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampler.h - the recording itself: one perf event per CPU with the BPF
 * sampler attached, the ring buffer that tells the manifest about new
 * process images, and the loop that polls it until a signal, DURATION or
 * the command's exit.  The stacks are counted in the kernel; this room only
 * starts, drives and stops that.  Errors are printed here (the loop's are
 * the user's to read) and returned as negative numbers.
 */
#ifndef BPROF_RECORD_SAMPLER_H
#define BPROF_RECORD_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "manifest/manifest.h"
#include "options.h"

struct profile_bpf;
struct sampler;

/* CLOCK_MONOTONIC and CLOCK_REALTIME in ns. */
uint64_t sampler_mono_ns(void);
uint64_t sampler_real_ns(void);

/*
 * The ring buffer of obj, its events fed to man (which must outlive the
 * sampler).  prog_fd: the perf_event program to attach, the one
 * loader_sampler_fd() says was loaded.  0, or negative after
 * printing; *out is NULL on failure.  Free with sampler_destroy().
 */
int sampler_create(struct sampler **out, struct profile_bpf *obj, int prog_fd, struct manifest *man,
		   int nr_cpus);
void sampler_destroy(struct sampler *s);
/* Hand what the runtimes' walks announce (code objects, SFIs, Java frame
 * identities) to their recorder sides (runtimes.h; NULL: none). */
struct runtime_set;
void sampler_set_runtimes(struct sampler *s, struct runtime_set *rt);

/* Open the perf events (every online CPU, or -C's) and attach the sampler:
 * sampling starts here.  *opened: the CPUs sampled; *event: the event
 * really used ("cycles" falls back to "cpu-clock" without a PMU).  0, or
 * negative after printing. */
int sampler_start(struct sampler *s, const struct env *env, int *opened, const char **event);

struct sampler_run {
	const volatile sig_atomic_t *exiting; /* nonzero: stop (the signal handler's) */
	uint64_t start_ns;                    /* sampler_mono_ns() at the start */
	long duration;                        /* seconds; 0: no limit */
	uint64_t until_ns;                    /* sampler_mono_ns() of the next file (--rotate); 0: none */
	bool boundary;                        /* out: stopped at until_ns */
	pid_t child;                          /* the -- COMMAND, or 0 */
	int status;                           /* out: its wait status when child_done */
	bool child_done;                      /* out: the command exited (and was reaped) */
	/* after each poll (at most 100 ms apart); may be NULL; returns how
	 * soon it wants the next, in ms (0: when the loop likes) */
	int (*tick)(void *ctx);
	void *tick_ctx;
};

/* Poll until *exiting, the duration, the child's exit or until_ns.  0, or
 * negative after printing (the ring buffer failed; out of memory). */
int sampler_run(struct sampler *s, struct sampler_run *run);

/*
 * --rotate: send the samples to the other set of maps (profile.bpf.c,
 * rotate_gen) while sampling goes on, wait until no sample can still add
 * to the old set, and hand the ring buffer's events to the manifest.
 * Returns the old set, which dump_counts() may then read and dump_clear()
 * empty.
 */
unsigned sampler_flip(struct sampler *s);

/* --slice: slice 0 of the counts' time slices begins at mono_ns
 * (sampler_mono_ns()); before sampler_start(). */
void sampler_slice_base(struct sampler *s, uint64_t mono_ns);

/* The set samples go to now. */
unsigned sampler_gen(const struct sampler *s);

/* Stop sampling: detach and close the perf events. */
void sampler_stop(struct sampler *s);

/* Hand what the kernel already queued to the manifest (after
 * sampler_stop()).  0, or the manifest's first error. */
int sampler_drain(struct sampler *s);

/* Ring buffer events seen, for -v. */
uint64_t sampler_events(const struct sampler *s);

#endif
