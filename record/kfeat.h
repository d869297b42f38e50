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
 * program of a few instructions).  Needs the privileges of a recording.
 * The answers are the kernel's; kfeat_pretend() applies BPROF_KFEAT_OFF. */
void kfeat_probe(struct kfeat *kf);

/* BPROF_KFEAT_OFF=loop,noprealloc,...: those features taken as missing,
 * so that the choices and messages of older kernels are tested on this
 * one (tests/record/kfeat.sh). */
void kfeat_pretend(struct kfeat *kf);

/*
 * This boot's answers, kept for the next starts: the probes and the
 * loader's other questions (the BTF ids of optional hooks, whether fexit
 * attaches) are ~2.5 ms of every start otherwise.  KFEAT_CACHE_PATH by
 * default: /run is emptied at every boot, and the file names its boot
 * (/proc/sys/kernel/random/boot_id) and kernel release besides.  Only
 * root's answers are kept and read (other privileges may be given other
 * answers), in a directory of root's that only root may write.
 * BPROF_KFEAT_CACHE=PATH moves it, =none reads and writes nothing.
 */
#define KFEAT_CACHE_PATH "/run/bprof/kfeat"
#define KFEAT_CACHE_IDS 4
struct kfeat_extra {
	int ids[KFEAT_CACHE_IDS]; /* the loader's BTF ids, 0: absent */
	bool fexit_ok;            /* an fexit program attaches to ids[0] */
};

/* The cache's path for this process, or NULL: none (not root, or
 * BPROF_KFEAT_CACHE=none). */
const char *kfeat_cache_path(void);

/* Read path's answers: true when they are this boot's and whole. */
bool kfeat_cache_read(const char *path, struct kfeat *kf, struct kfeat_extra *x);

/* Keep the answers at path (atomically: a temporary renamed); a failure
 * only costs the next start its probes.  0 or -errno. */
int kfeat_cache_write(const char *path, const struct kfeat *kf, const struct kfeat_extra *x);

/* The feature as a user would search for it, e.g. "the BPF helper
 * bpf_loop (Linux 5.17)". */
const char *kfeat_describe(enum kfeat_id id);

/* The first of ids[0..n) the kernel lacks, or -1 when it has them all. */
int kfeat_first_missing(const struct kfeat *kf, const enum kfeat_id *ids, size_t n);

#endif
