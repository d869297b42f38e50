/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offcpu_rec.h - the recorder's side of off-CPU and wall-clock time
 * (--off-cpu, --wall; the kernel side is bpf/offcpu/offcpu.bpf.c): what the
 * programs are told before load, which of them load, and their counters
 * after the recording.  The rows themselves are read by dump.c with the
 * on-CPU counts, whose stacks they share.  Never prints but through the
 * error messages it returns.
 */
#ifndef BPROF_RECORD_OFFCPU_REC_H
#define BPROF_RECORD_OFFCPU_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offcpu/offcpu.h"
#include "options.h"

struct profile_bpf;
struct bpf_program;
struct kfeat;

/* Whether off-CPU time can be recorded as env asks on a kernel with the
 * features kf; when not, why in msg, and false.  Every kernel the recorder
 * loads on records it, with one of the two variants of the programs
 * (offcpu_lean_needed()): only what no variant can do is refused. */
bool offcpu_supported(const struct env *env, const struct kfeat *kf, char *msg, size_t len);

/* Whether the kernel with the features kf needs the variant of the
 * programs for older kernels (bpf/offcpu/offcpu_lean.bpf.c) to record what
 * env asks (or BPROF_OFFCPU_LEAN=1 forces it); then, in msg, what the
 * kernel lacks and what the recording misses for it. */
bool offcpu_lean_needed(const struct env *env, const struct kfeat *kf, char *msg, size_t len);

/* The BPF object, opened: profile.bpf.o, or with lean profile_lean.bpf.o
 * through the same skeleton.  NULL with errno set on failure. */
struct profile_bpf *offcpu_skel_open(bool lean);

/* After load: the lean variant's resume and end programs (resume_fd,
 * end_fd) put in their own tail-call slots, so that their user-stack
 * walks go on past one run.  0 (also for the other variant), or -errno. */
int offcpu_chain(struct profile_bpf *obj, int resume_fd, int end_fd);

/* Before load: the programs' read-only data, which programs load, the
 * counts map's size (counts: the on-CPU map's).  cfi: the unwinder is
 * loaded. */
void offcpu_configure(struct profile_bpf *obj, const struct env *env, bool cfi, long counts);

/* Whether the off-CPU programs are part of the loaded object. */
bool offcpu_enabled(const struct profile_bpf *obj);

/* The passes over every thread for the blocks that span the recording's
 * start and end (bpf/offcpu/offcpu.bpf.c): offcpu_start() once sampling began;
 * offcpu_end() once it stopped, before the last file's counts are read.
 * offcpu_end() says in *found how many thread states the pass found and
 * deleted, in *walked how many blocked threads' user stacks it walked
 * (from a copy of their stacks: it maps memory for a moment) and in *left
 * how many a last pass still found (0: none leak; the samples of threads
 * that exit during the pass are counted lost by offcpu_dump()).  before_walk(ctx), when
 * there are stacks to walk, must read the events the first pass sent (the
 * images of blocked threads: their mappings and unwind tables) before
 * they are walked.  The passes' programs are given by their fds, which the
 * loader holds (loader_prog_fd(): its loader program loaded them):
 * offcpu_start_prog() and offcpu_end_prog() say which.  0 or -errno. */
struct bpf_program *offcpu_start_prog(struct profile_bpf *obj);

/* The switch program, and the blocks whose end it did not see
 * (OFFCPU_STAT_UNSEEN: bpf/offcpu/offcpu_common.h, offcpu_close_unseen):
 * prof-record warns of them with the runs the kernel skipped. */
struct bpf_program *offcpu_switch_prog(struct profile_bpf *obj);
uint64_t offcpu_unseen(const struct profile_bpf *obj, int nr_cpus);
struct bpf_program *offcpu_end_prog(struct profile_bpf *obj);
int offcpu_start(struct profile_bpf *obj, int start_fd);
int offcpu_end(struct profile_bpf *obj, int end_fd, void (*before_walk)(void *), void *ctx,
	       uint64_t *found, uint64_t *left, uint64_t *walked);

/* The per-CPU counters summed into sum[OFFCPU_STAT_MAX]; zeros when they
 * cannot be read. */
void offcpu_stats(const struct profile_bpf *obj, uint64_t *sum, int nr_cpus);

/* The OFFCPU section's header (mode 0 when off-CPU time was not
 * recorded): the counters since the previous file, base[OFFCPU_STAT_MAX]
 * (what earlier files carried, all zeros at first) moving on. */
struct bprof_offcpu;
void offcpu_dump(const struct profile_bpf *obj, struct bprof_offcpu *out, int nr_cpus,
		 uint64_t *base);

#endif
