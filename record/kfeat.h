/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kfeat.h - what the running kernel offers BPF, probed once before
 * loading: each feature a recording may need, with the Linux release it
 * arrived in and its name as a user can look it up.  The loader picks its
 * programs from these answers instead of trying loads until one passes,
 * and every message about a missing capability names the feature probed,
 * not a guessed kernel version.
 */
#ifndef BPROF_RECORD_KFEAT_H
#define BPROF_RECORD_KFEAT_H

#include <stdbool.h>
#include <stddef.h>

enum kfeat_id {
	KFEAT_LOOP,             /* helper bpf_loop: the unwinder's walk, generation reads */
	KFEAT_FIND_VMA,         /* helper bpf_find_vma: mapping generations */
	KFEAT_TASK_PT_REGS,     /* helper bpf_task_pt_regs: the unwinder, off-CPU walks */
	KFEAT_CURRENT_TASK_BTF, /* helper bpf_get_current_task_btf */
	KFEAT_TASK_STORAGE,     /* map type task_storage: off-CPU thread state */
	KFEAT_NOPREALLOC,       /* hash maps that grow, used by a perf_event program */
	KFEAT_MEMCG,            /* maps charged to the memory cgroup, not to
				 * RLIMIT_MEMLOCK (5.11; told by a helper of the
				 * same release, as libbpf does) */
	KFEAT_SYSCALL_PROG,     /* program type syscall: the object loaded by a
				 * loader program in the kernel (5.14; its CO-RE
				 * there needs 5.17, tried and told by the load) */
	KFEAT_NR
};

struct kfeat {
	bool has[KFEAT_NR];
};

/* Probe every feature (a fraction of a millisecond each: a map or a
 * program of a few instructions).  Needs the privileges of a recording. */
void kfeat_probe(struct kfeat *kf);

/* The feature as a user would search for it, e.g. "the BPF helper
 * bpf_loop (Linux 5.17)". */
const char *kfeat_describe(enum kfeat_id id);

/* The first of ids[0..n) the kernel lacks, or -1 when it has them all. */
int kfeat_first_missing(const struct kfeat *kf, const enum kfeat_id *ids, size_t n);

#endif
