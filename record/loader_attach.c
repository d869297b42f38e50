// SPDX-License-Identifier: Apache-2.0
/*
 * loader_attach.c - the loaded object's tracing programs attached: the
 * scheduler's tracepoints, the mapping generations' hooks, the optional
 * ones, the off-CPU programs; their links are closed by loader_destroy().
 * Apart from the loading because it runs later, once the recording is
 * set up, and only reads what the load chose.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader_internal.h"
#include "profile.h"
#include "profile.skel.h"

/* Attach a loaded tracing program: tp_btf or fexit (tp NULL: the kernel
 * knows its attach point), or raw_tp (tp: the tracepoint's name); 0, or -1
 * with errno set. */
static int attach_tracing(struct loader *ld, struct bpf_program *p, const char *tp)
{
	int fd = loader__prog_fd(ld, p), link;

	if (fd < 0) {
		errno = ENOENT;
		return -1;
	}
	if (ld->nr_links >= LOADER_MAX_LINKS) {
		errno = E2BIG;
		return -1;
	}
	link = bpf_raw_tracepoint_open(tp, fd);
	if (link < 0)
		return -1;
	ld->links[ld->nr_links++] = link;
	return 0;
}

bool loader_tracks_gens(const struct loader *ld)
{
	return ld->gens;
}

/* The scheduler tracepoints (and optional hooks) that keep the manifest
 * complete.  The perf_event program is attached per CPU by
 * sampler_start(); loader_destroy() closes these links. */
int loader_attach(struct loader *ld, const struct env *env)
{
	struct profile_bpf *obj = ld->skel;

	if (attach_tracing(ld, obj->progs.handle_fork, "sched_process_fork") ||
	    attach_tracing(ld, obj->progs.handle_exec, "sched_process_exec")) {
		fprintf(stderr, "prof-record: cannot attach to sched_process_fork/exec: %s\n", strerror(errno));
		return -1;
	}
	/* one program on sched_process_exit: handle_vmas where it loaded,
	 * which also empties the sets, else handle_exit_sets if needed */
	bool sets = env->command != NULL || obj->rodata->forget_exited || obj->rodata->track_gens,
	     exit_failed = false;

	if (bpf_program__autoload(obj->progs.handle_vmas)) {
		exit_failed = attach_tracing(ld, obj->progs.handle_vmas, "sched_process_exit") != 0;
		if (exit_failed && env->verbose && !sets)
			fprintf(stderr, "prof-record: cannot trace sched_process_exit (%s)\n", strerror(errno));
	} else if (bpf_program__autoload(obj->progs.handle_exit_sets)) {
		exit_failed = attach_tracing(ld, obj->progs.handle_exit_sets, "sched_process_exit") != 0;
	}
	if (exit_failed && sets) {
		if (obj->rodata->forget_exited)
			fprintf(stderr, "prof-record: warning: cannot trace sched_process_exit (%s): processes that exit stay in the recorder's sets; past %u of them, new ones are not followed (counted as notifications dropped)\n",
				strerror(errno), bpf_map__max_entries(obj->maps.tracked));
		else
			fprintf(stderr, "prof-record: warning: cannot trace sched_process_exit (%s): a command forking over 65536 processes loses the later ones\n",
				strerror(errno));
	}
	/* the same program before exec, where the tracepoint exists (6.10+) */
	if (bpf_program__autoload(obj->progs.handle_vmas) &&
	    attach_tracing(ld, obj->progs.handle_vmas, "sched_prepare_exec") && env->verbose)
		fprintf(stderr, "prof-record: cannot trace sched_prepare_exec (%s)\n", strerror(errno));
	/* Mapping generations: at the mm lock's release where the kernel has
	 * that tracepoint (profile.bpf.c: it costs nothing to the system
	 * calls that do not map), else at every system call's exit. */
	if (obj->rodata->gens_lean == GENS_LEAN_LOCK || bpf_program__autoload(obj->progs.handle_gen_lock)) {
		/* one program on both, handle_gen_lock, or the lean hook
		 * handle_gen_area (profile.bpf.c, gen_arg_is_mm) */
		bool lean = obj->rodata->gens_lean;
		struct bpf_program *both = lean ? obj->progs.handle_gen_area : obj->progs.handle_gen_lock;

		ld->gens = attach_tracing(ld, both, "vm_unmapped_area") == 0 &&
			   (lean || attach_tracing(ld, obj->progs.handle_gen_start, "mmap_lock_start_locking") == 0) &&
			   attach_tracing(ld, both, "mmap_lock_released") == 0;
		if (ld->gens && env->verbose)
			fprintf(stderr, "prof-record: mapping generations: at the mm lock (mmap_lock_released)%s\n",
				lean ? ", read there" : "");
		if (!ld->gens)
			fprintf(stderr, "prof-record: warning: cannot trace the mmap_lock tracepoints and vm_unmapped_area (%s): a library unloaded and another loaded at its address may be named as the first\n",
				strerror(errno));
	} else if (obj->rodata->gens_lean == GENS_LEAN_SYSCALLS || bpf_program__autoload(obj->progs.handle_map_exec_raw)) {
		/* the lean syscall hook: handle_gen_area there (profile.bpf.c) */
		bool lean = obj->rodata->gens_lean;

		ld->gens = attach_tracing(ld, lean ? obj->progs.handle_gen_area : obj->progs.handle_map_exec_raw,
					  "sys_exit") == 0;
		if (ld->gens && env->verbose)
			fprintf(stderr, "prof-record: mapping generations: at every system call's exit (raw_syscalls)%s\n",
				lean ? ", the mm read unlocked" : "");
		if (!ld->gens)
			fprintf(stderr, "prof-record: warning: cannot trace the system calls' exits (%s): a library unloaded and another loaded at its address may be named as the first\n",
				strerror(errno));
	} else {
		fprintf(stderr, "prof-record: warning: this kernel's verifier refused the mapping generation hook (-v shows its log): a library unloaded and another loaded at its address may be named as the first\n");
	}
	if (bpf_program__autoload(obj->progs.handle_mmap) && attach_tracing(ld, obj->progs.handle_mmap, NULL) &&
	    env->verbose)
		fprintf(stderr, "prof-record: cannot trace vm_mmap_pgoff (%s): libraries mapped by short-lived processes may be missed\n",
			strerror(errno));
	/* --off-cpu, --wall: the switch, and the return to user space where
	 * a sampled block's user stack is walked (bpf/offcpu/offcpu.bpf.c) */
	if (bpf_program__autoload(obj->progs.handle_offcpu_switch) &&
	    (attach_tracing(ld, obj->progs.handle_offcpu_resume, NULL) ||
	     attach_tracing(ld, obj->progs.handle_offcpu_exit, NULL) ||
	     attach_tracing(ld, obj->progs.handle_offcpu_switch, NULL))) {
		fprintf(stderr, "prof-record: cannot trace the scheduler (sched_switch, rseq_update) for %s: %s\n",
			env->off_cpu == 2 ? "--wall" : "--off-cpu", strerror(errno));
		return -1;
	}
	return 0;
}
