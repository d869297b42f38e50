/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loader_internal.h - what the loader's files share: struct loader, the
 * kernel's BTF features the optional programs need (FEAT_*), which
 * optional programs a load tries (OPT_PROG_*), and the five steps one
 * file takes of another (prefixed loader__).  Internal to the loader
 * (loader.h is its interface).  loader.c calls loader_probe.c and
 * loader_config.c, loader_attach.c calls loader.c; never the other way.
 */
#ifndef BPROF_RECORD_LOADER_INTERNAL_H
#define BPROF_RECORD_LOADER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "kfeat.h"
#include "loader.h"

struct bpf_object;

/* The tracing programs loader_attach() may attach. */
#define LOADER_MAX_LINKS 16

struct loader {
	struct profile_bpf *skel;
	int *prog_fds;  /* by the program's index in the object; -1: not loaded */
	int nr_progs;
	int links[LOADER_MAX_LINKS];
	int nr_links;
	bool gens; /* a generation hook is attached: samples carry generations */
	struct kfeat kf; /* what the kernel offers, as probed */
	/* the runtimes' walks loaded when first met (rt_lazy): which may
	 * be, which the second instance of the object has (rt_loaded), and
	 * which could not be loaded */
	unsigned rt_lazy;
	unsigned rt_loaded;
	unsigned rt_failed;
	bool verbose;
	struct profile_bpf *rt_skel;
	double rt_ms;   /* when, since the loader opened */
	uint64_t t0;
	bool offcpu_lean; /* the object is profile_lean.bpf.o (offcpu_skel_open) */
};

/* What the optional programs need from the kernel's BTF. */
enum { FEAT_MMAP, FEAT_ITER_VMA, FEAT_LOCK_TP, FEAT_NR };

/* Optional programs: each makes the manifest more complete but needs what
 * not every kernel has (fexit trampolines; the task_vma iterator kfuncs). */
enum {
	OPT_PROG_MMAP = 1 << 0,  /* fexit/vm_mmap_pgoff */
	OPT_PROG_VMAS = 1 << 1,  /* handle_vmas: bpf_iter_task_vma, at exit
				  * (then in place of handle_exit_sets) and,
				  * where the tracepoint exists, before exec */
	OPT_PROG_GENS = 1 << 2,  /* mapping generations: handle_gen_* on the
				  * mmap_lock tracepoints, or handle_map_exec_raw
				  * (bpf_find_vma, 5.17) */
	OPT_PROG_GENS_LEAN = 1 << 3, /* with OPT_PROG_GENS: handle_gen_area
				      * alone (gens_lean: kernels without
				      * bpf_loop, the tail walk), on the mmap_lock
				      * tracepoints or else on sys_exit */
};

/* loader_probe.c: what the kernel offers, asked before loading. */
void loader__probe_kernel(const struct env *env, struct kfeat *kf, int ids[FEAT_NR], bool *fexit_ok);

/* loader_config.c: one object opened, configured for env, the optional
 * programs and the kernel, and loaded (by a loader program where
 * in_kernel, else by libbpf); NULL with *err set.  *prog_fds: its
 * programs' fds, by index (loader__nr_programs() of them), the caller's. */
struct profile_bpf *loader__open_one(const struct env *env, unsigned optional, bool cfi, bool tail,
				     bool noprealloc, bool lock_tp, bool in_kernel, bool offcpu_lean,
				     int **prog_fds, unsigned *lazy_rt, int *err);
/* The object's programs, loaded or not: the length of prog_fds. */
int loader__nr_programs(struct bpf_object *o);
/* --unwind-memory, or what --unwind-table-size's rows take, or the default */
uint64_t loader__unwind_budget(const struct env *env);

/* loader.c: the fd of a loaded program of the skeleton; -1: not loaded. */
int loader__prog_fd(const struct loader *ld, struct bpf_program *p);

#endif
