/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loader.h - the BPF object of bpf/profile.bpf.c: opened, configured from
 * struct env (read-only data, map sizes, which programs load), loaded with
 * as many of the optional programs as this kernel takes, and its tracing
 * programs attached.  The only rooms that see the skeleton's maps are this
 * one, the sampler (its perf_event programs and ring buffer) and dump (the
 * tables); to the rest of the recorder struct profile_bpf is opaque.
 */
#ifndef BPROF_RECORD_LOADER_H
#define BPROF_RECORD_LOADER_H

#include <stdbool.h>
#include <sys/types.h>
#include "kfeat.h"
#include "options.h"
#include "unwinder.h"

struct profile_bpf;
struct loader;

/* libbpf's messages: all of them with -v, warnings only otherwise. */
void loader_set_log(bool verbose);

/*
 * Open and load the object: by a loader program that does it in the kernel
 * where the kernel can (Linux 5.17), by libbpf otherwise.  On a kernel that
 * refuses an optional program (fexit trampolines, the task_vma iterator)
 * it is loaded without it.  *cfi: the table-walking sampler was loaded
 * (--unwind=auto falls back to frame pointers where it cannot be; what the
 * kernel lacks for it is said).  NULL with *err = -errno on failure, not
 * printed, except -EOPNOTSUPP: the kernel lacks a feature the options
 * need, and which one was said.
 * Free with loader_destroy(), which detaches what loader_attach() attached.
 */
struct loader *loader_open(const struct env *env, bool *cfi, int *err);
void loader_destroy(struct loader *ld);

/* The skeleton: its maps (by fd) and read-only data, as loaded.  Its
 * programs' fds are not libbpf's to give: see loader_sampler_fd(). */
struct profile_bpf *loader_skeleton(const struct loader *ld);

/* The perf_event program that was loaded, for sampler_create(). */
int loader_sampler_fd(const struct loader *ld);

/* The fd of one of the skeleton's programs as loaded (the loader program
 * may have loaded it, not libbpf); -1 if it was not loaded. */
struct bpf_program;
int loader_prog_fd(const struct loader *ld, struct bpf_program *p);

/* Whether the kernel has feature id, as probed before loading. */
bool loader_kernel_has(const struct loader *ld, enum kfeat_id id);

/* -v at the end: each program that ran, its runs and mean run time, as
 * the kernel counts them while kernel.bpf_stats_enabled is 1 (the
 * sampler's is the BPF time per sample; a tail walk's chain is counted in
 * its first program), or that the kernel did not count them; and the runs
 * the kernel skipped, whatever that setting (recursion_misses: the program
 * was already running on that CPU, such as handle_gen_start entered again
 * by its own bpf_find_vma's mmap lock). */
void loader_report_runs(const struct loader *ld);

/* The runs of program p the kernel skipped (recursion_misses, 5.12+; 0
 * where the kernel does not count them). */
uint64_t loader_prog_misses(const struct loader *ld, struct bpf_program *p);

/* -p, -L and --cgroup into the filter maps.  0, or -1 after printing. */
int loader_set_filters(struct profile_bpf *obj, const struct env *env, int cgroup_fd);

/* Sample pid (the -- COMMAND) and follow its children. */
void loader_follow(struct profile_bpf *obj, pid_t pid);

/* The tracepoints that keep the manifest complete.  0, or -1 after
 * printing; a missing optional hook is only a warning (with -v). */
int loader_attach(struct loader *ld, const struct env *env);

/* The maps of runtime rt's walk (RUNTIME_*) for its recorder side
 * (runtimes.h); false when the recording does not walk it. */
struct runtime_maps;
bool loader_runtime_maps(const struct loader *ld, unsigned rt, struct runtime_maps *m);

/* The exec_gen map, for the manifest. */
/* The Python walk's maps (bpf/python/python.bpf.c): "py_procs" and "py_stats". */
void loader_python_fds(struct profile_bpf *obj, int *procs_fd, int *stats_fd);
/* Whether the loaded walk records Python frames (not on kernels without
 * bpf_loop, nor with --no-python). */
bool loader_walks_python(const struct loader *ld);
/* Whether the unwinder walks by tail calls (kernels without bpf_loop),
 * which walk no runtime's frames: what META's NO_PYTHON_WALK says */
bool loader_walks_by_tail_calls(const struct profile_bpf *obj);
/* The V8 walk's map "v8_procs" (bpf/v8/v8.bpf.c), and whether the loaded
 * walk records V8 frames (not on kernels without bpf_loop, nor --no-v8). */
int loader_v8_fd(struct profile_bpf *obj);
/* "v8_codes": the code objects found for frames not running their
 * function's code (V8_EVENT_CODE). */
int loader_v8_codes_fd(struct profile_bpf *obj);
bool loader_walks_v8(const struct loader *ld);
/* The HotSpot walk's maps (bpf/jvm/jvm_walk.h): "jvm_procs" and "jvm_stats". */
void loader_jvm_fds(struct profile_bpf *obj, int *procs_fd, int *stats_fd);
/* Whether the walk records HotSpot frames (as loader_walks_python; not
 * with --no-jvm). */
bool loader_walks_jvm(const struct loader *ld);
/* A recording that may meet the runtimes (the whole system...) loads
 * their walks when a process of one is first registered in its walk's
 * map: called at each tick of the event loop with the runtimes (RUNTIME_*)
 * whose recorders registered one so far.  Warns when they cannot be
 * loaded. */
void loader_runtimes_tick(struct loader *ld, unsigned met);
/* The META flags (BPROF_META_NO_*_WALK) of the runtimes whose walks
 * were to be loaded when met and could not be. */
uint32_t loader_runtimes_lacking(const struct loader *ld);
int loader_exec_gen_fd(const struct profile_bpf *obj);
/* The BPF map tgid -> struct profile_map_gen (mapping generations); -1
 * where the hook did not load. */
int loader_map_gens_fd(const struct loader *ld);
/* Whether samples carry mapping generations (the hook is attached). */
bool loader_tracks_gens(const struct loader *ld);

/* The unwinder's maps, by fd, with their capacities as loaded. */
void loader_unwinder_maps(const struct profile_bpf *obj, const struct env *env,
			  struct unwinder_maps *um);

#endif
