/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offcpu.h - types shared by the off-CPU programs (bpf/offcpu/offcpu.bpf.c) and
 * prof-record (record/offcpu/).  Fixed-width types only, as profile.h.
 */
#ifndef BPROF_OFFCPU_H
#define BPROF_OFFCPU_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "profile.h"

/* Thread states of off-CPU rows; the numbers are the format's (SPEC.md
 * 6.13, BPROF_STATE_*). */
enum offcpu_state {
	OFFCPU_STATE_ON_CPU = 0, /* not an off-CPU row */
	OFFCPU_STATE_S = 1,      /* sleeping, interruptible (TASK_INTERRUPTIBLE) */
	OFFCPU_STATE_D = 2,      /* uninterruptible (TASK_UNINTERRUPTIBLE) */
	OFFCPU_STATE_R = 3,      /* runnable, waiting for a CPU (--wall) */
	OFFCPU_STATE_T = 4,      /* stopped, traced, frozen, other */
};

/* offcpu_mode (rodata) */
#define OFFCPU_MODE_BLOCKED 1 /* --off-cpu: S, D, T */
#define OFFCPU_MODE_WALL    2 /* --wall: and R */

/* Key of the "offcpu_counts" hash: a count key of the on-CPU map and the
 * state the thread was switched out in. */
struct offcpu_key {
	struct profile_key k;
	__u32 state;   /* enum offcpu_state */
	__u32 pad;
};

struct offcpu_val {
	__u64 samples; /* periods crossed (SPEC.md 6.13) */
	__u64 ns;      /* blocked ns of the blocks that produced them */
};

/* Indexes of the per-CPU "offcpu_stats" array. */
enum offcpu_stat {
	OFFCPU_STAT_BLOCKS,        /* switch-ins of tracked blocks */
	OFFCPU_STAT_BLOCKS_SHORT,  /* of those, crossing no period: no sample */
	OFFCPU_STAT_BLOCKED_NS,    /* ns of all those blocks */
	OFFCPU_STAT_SAMPLES,       /* samples counted */
	OFFCPU_STAT_WALKS,         /* user stacks walked (one per sampled block) */
	OFFCPU_STAT_NO_USER_WALK,  /* sampled blocks counted without a user
				    * stack: no rseq, or not resumed in time */
	OFFCPU_STAT_LOST,          /* samples lost: counts full, no storage */
	OFFCPU_STAT_UNSEEN,        /* blocks whose end no program run saw (the
				    * thread switched out again, or exited,
				    * still tracked as blocked): ended at its
				    * last arrival, counted without stacks */
	OFFCPU_STAT_MAX,
};

/* What the end pass's first phase writes for each thread still blocked
 * with a sampled block (bpf/offcpu/offcpu.bpf.c, handle_offcpu_end): where its
 * user stack is, for prof-record to map a copy of it at the same address
 * before the walk phase. */
struct offcpu_end_rec {
	__u32 pid;
	__u32 tid;
	__u64 sp;
};

/* offcpu_end_phase (.bss) */
#define OFFCPU_END_FINAL   0 /* count what is left without user stacks, delete */
#define OFFCPU_END_COLLECT 1 /* count every block; name the ones to walk */
#define OFFCPU_END_WALK    2 /* walk the one thread of the link, count, delete */

#endif /* BPROF_OFFCPU_H */
