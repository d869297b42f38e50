// SPDX-License-Identifier: Apache-2.0
/*
 * loader_config.c - one BPF object opened, configured from struct env, the
 * optional programs tried and the kernel (its read-only data, map sizes
 * and types, which sampler and hooks load), and loaded: by a loader
 * program in the kernel, else by libbpf.  Apart from loader.c, which
 * decides what to try and in which order, because this is most of the
 * loader and changes with every setting and map the BPF side grows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/skel_internal.h>
#include "offcpu/offcpu_rec.h"
#include "loader_internal.h"
#include "profile.h"
#include "profile.skel.h"
#include "runtimes.h"

/* The bucket count of a stack map of n entries, which bounds its ids. */
/* --unwind-memory, or what --unwind-table-size's rows take, or the default */
uint64_t loader__unwind_budget(const struct env *env)
{
	if (env->unwind_memory)
		return env->unwind_memory;
	if (env->unwind_table_size)
		return unwinder_budget_for_rows((uint64_t)env->unwind_table_size);
	return OPTS_UNWIND_MEMORY_DEFAULT;
}

static uint32_t stacks2_base(long n)
{
	uint32_t b = 1;

	while (b < (uint64_t)n)
		b <<= 1;
	return b;
}

/* The kernel's name of a map or program: name cut to what it keeps. */
static bool kernel_name_is(const char *kname, const char *name)
{
	return strncmp(kname, name, BPF_OBJ_NAME_LEN - 1) == 0 &&
	       strlen(kname) == (strlen(name) < BPF_OBJ_NAME_LEN - 1 ? strlen(name) : BPF_OBJ_NAME_LEN - 1);
}

/*
 * Load the configured object by a loader program, libbpf's "light
 * skeleton" made at run time: libbpf writes down what loading takes (the
 * maps as configured, the programs, their CO-RE relocations, the kernel
 * functions and attach points they name) into a BPF_PROG_TYPE_SYSCALL
 * program that does it in the kernel.  The kernel then applies CO-RE
 * with its own, already indexed BTF (Linux 5.17), where libbpf 1.1 reads
 * all 5.5 MiB of /sys/kernel/btf/vmlinux through 4 KiB reads, indexes it
 * and searches its ~126,000 types once per type and attach point: 20 ms
 * of the 55 ms prof-record -- true took, against ~2 ms this way.
 *
 * The maps' fds are handed to libbpf's maps (bpf_map__reuse_fd), so the
 * rest of the recorder uses the skeleton as before; the programs' fds are
 * kept in prog_fds, by index in the object.  Every fd is checked against
 * the name the kernel gives it.  0, or a negative errno: the caller then
 * loads a fresh object with libbpf.
 */
static int load_in_kernel(struct profile_bpf *obj, int *prog_fds, bool verbose)
{
	LIBBPF_OPTS(gen_loader_opts, gen);
	struct bpf_object *o = obj->obj;
	struct bpf_loader_ctx *ctx = NULL;
	struct bpf_map_desc *md;
	struct bpf_prog_desc *pd;
	struct bpf_program *prog;
	struct bpf_map *map;
	int nr_maps = 0, nr_loaded = 0, i, j, err;
	long page = sysconf(_SC_PAGESIZE);

	if (bpf_object__gen_loader(o, &gen))
		return -errno;
	err = bpf_object__load(o);
	if (err)
		return err;
	bpf_object__for_each_map(map, o)
		nr_maps++;
	bpf_object__for_each_program(prog, o)
		nr_loaded += bpf_program__autoload(prog);
	size_t sz = sizeof(*ctx) + nr_maps * sizeof(*md) + nr_loaded * sizeof(*pd);

	ctx = calloc(1, sz);
	if (!ctx)
		return -ENOMEM;
	ctx->sz = sz;
	struct bpf_load_and_run_opts run = {
		.ctx = ctx, .data = gen.data, .insns = gen.insns,
		.data_sz = gen.data_sz, .insns_sz = gen.insns_sz,
	};

	/* -v: the loader program's own verifier log (a log that does not
	 * fit fails the load with ENOSPC: room for the largest) */
	char *vlog = verbose ? calloc(1, 16 << 20) : NULL;

	if (vlog) {
		ctx->log_level = 1;
		ctx->log_size = 16 << 20;
		ctx->log_buf = (__u64)(unsigned long)vlog;
	}
	err = bpf_load_and_run(&run);
	if (err && vlog && *vlog)
		fprintf(stderr, "prof-record: the loader program's verifier log:\n%s\n", vlog);
	free(vlog);
	if (err) {
		/* the verifier's log of the program that failed comes from
		 * libbpf's own load, which follows */
		if (verbose)
			fprintf(stderr, "prof-record: the loader program failed: %s (%s); loading with libbpf\n",
				run.errstr ? run.errstr : "", strerror(-err));
		free(ctx);
		return err;
	}
	md = (struct bpf_map_desc *)(ctx + 1);
	pd = (struct bpf_prog_desc *)(md + nr_maps);
	i = 0;
	bpf_object__for_each_map(map, o) {
		struct bpf_map_info info = {0};
		__u32 len = sizeof(info);
		int fd = md[i++].map_fd;

		if (!err && (fd <= 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
			     !kernel_name_is(info.name, bpf_map__name(map)) || bpf_map__reuse_fd(map, fd)))
			err = -EINVAL;
		if (fd > 0)
			close(fd); /* reuse_fd keeps a duplicate */
	}
	i = j = 0;
	bpf_object__for_each_program(prog, o) {
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);
		int fd = bpf_program__autoload(prog) ? pd[i++].prog_fd : -1;

		prog_fds[j++] = fd > 0 ? fd : -1;
		if (bpf_program__autoload(prog) &&
		    (fd <= 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
		     !kernel_name_is(info.name, bpf_program__name(prog))))
			err = -EINVAL;
	}
	free(ctx);
	/* the global variables user space changes (--rotate's generation):
	 * libbpf's copy of .bss becomes the map's memory, as its own load
	 * does */
	if (!err && obj->bss) {
		size_t len = ((size_t)bpf_map__value_size(obj->maps.bss) + page - 1) / page * page;

		if (!(bpf_map__map_flags(obj->maps.bss) & BPF_F_MMAPABLE))
			err = -EINVAL;
		else if (mmap(obj->bss, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			      bpf_map__fd(obj->maps.bss), 0) == MAP_FAILED)
			err = -errno;
	}
	if (err) {
		if (verbose)
			fprintf(stderr, "prof-record: the loader program's maps and programs are not the object's (%s)\n",
				strerror(-err));
		for (i = 0; i < j; i++) {
			if (prog_fds[i] >= 0)
				close(prog_fds[i]);
			prog_fds[i] = -1;
		}
	}
	return err;
}

/* The object's programs, loaded or not: the length of prog_fds. */
int loader__nr_programs(struct bpf_object *o)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, o)
		n++;
	return n;
}

struct profile_bpf *loader__open_one(const struct env *env, unsigned optional, bool cfi, bool tail,
				     bool noprealloc, bool lock_tp, bool in_kernel, bool offcpu_lean,
				     int **prog_fds, unsigned *lazy_rt, int *err)
{
	struct profile_bpf *obj = offcpu_skel_open(offcpu_lean);
	struct bpf_program *prog;
	int j = 0;

	*prog_fds = NULL;
	if (!obj) {
		*err = -errno;
		return NULL;
	}
	*prog_fds = malloc(loader__nr_programs(obj->obj) * sizeof(**prog_fds));
	if (!*prog_fds) {
		*err = -ENOMEM;
		profile_bpf__destroy(obj);
		return NULL;
	}
	obj->rodata->user_stacks = !env->kernel_only;
	obj->rodata->kernel_stacks = !env->user_only;
	obj->rodata->include_idle = env->include_idle;
	obj->rodata->filter_pid = env->nr_pids > 0 || env->command;
	obj->rodata->filter_tid = env->nr_tids > 0;
	obj->rodata->filter_cgroup = env->cgroup != NULL;
	obj->rodata->per_thread = env->per_thread || env->nr_tids > 0;
	obj->rodata->follow_children = env->command != NULL;

	/* a recording of known length needs no more counts than samples
	 * (opts_samples_bound); nor walked stacks, below */
	long bound = opts_samples_bound(env);
	long counts = bound && bound < env->hash_storage_size ? bound : env->hash_storage_size;

	/* --slice: a row per (stack, slice), up to one per sample.  A
	 * recording of known length gets room for all of its samples, one of
	 * unknown length four times the default, unless the user sized the
	 * table (999 Hz on 2 CPUs for 30 s filled the default 40960 rows) */
	if (env->slice_ms && !env->hash_storage_given)
		counts = bound ? bound : env->hash_storage_size * 4;
	long ustacks = bound && bound < env->stack_storage_size ? bound : env->stack_storage_size;

	bpf_map__set_max_entries(obj->maps.counts, counts);
	bpf_map__set_max_entries(obj->maps.stacks, env->stack_storage_size);
	/* victims of bucket collisions in "stacks" get a second chance in a
	 * map a quarter its size; their ids start at the power of two that
	 * bounds the ids of "stacks" (its bucket count) */
	bpf_map__set_max_entries(obj->maps.stacks2,
				 env->stack_storage_size / 4 > 1 ? env->stack_storage_size / 4 : 1);
	obj->rodata->stacks2_base = (int32_t)stacks2_base(env->stack_storage_size);
	/* The process-image sets are not the counts table: shrinking
	 * --hash-storage-size (to bound the counts) must not also drop the
	 * notifications that keep the manifest complete. */
	long procs = env->hash_storage_size > 40960 ? env->hash_storage_size : 40960;
	struct sysinfo si;

	/* Where the sets grow and are emptied at exit (noprealloc below),
	 * they hold live processes only: four times the tasks alive now, at
	 * least 8192, is room enough for one recording, and its bucket array
	 * (16 bytes each, zeroed at start-up) a fifth of 40960's.  Not with
	 * --rotate, which may run for months while the host changes.  A set
	 * that fills counts its losses ("notifications dropped"). */
	if (noprealloc && !env->rotate && procs == 40960 && !sysinfo(&si) &&
	    (long)si.procs * 4 < procs)
		for (procs = 8192; procs < (long)si.procs * 4;)
			procs *= 2;
	bpf_map__set_max_entries(obj->maps.seen, procs);
	bpf_map__set_max_entries(obj->maps.tracked, procs);
	bpf_map__set_max_entries(obj->maps.exec_gen, procs);
	/* mapping generations: only where their hook loads */
	obj->rodata->track_gens = optional & OPT_PROG_GENS;
	/* tests: drop every Nth mapping event as if the ring buffer were
	 * full (tests/record/losses.sh's gaps) */
	if (getenv("BPROF_TEST_DROP_MAP_EVENTS"))
		obj->rodata->test_drop_map_events = (uint32_t)strtoul(getenv("BPROF_TEST_DROP_MAP_EVENTS"),
								      NULL, 10);
	bpf_map__set_max_entries(obj->maps.map_gens, optional & OPT_PROG_GENS ? procs : 1);
	/* One hook: at the mm lock where the kernel has its tracepoints
	 * (profile.bpf.c, "mapping changes at the lock"), else at every
	 * system call's exit (raw_syscalls: no tracefs needed, which a
	 * fresh host may not have mounted, nor CAP_BPF+CAP_PERFMON open).
	 * BPROF_GENS_HOOK=syscalls: the latter anyway (bench, tests). */
	const char *gh = getenv("BPROF_GENS_HOOK");
	bool gens_lean = (optional & OPT_PROG_GENS) && (optional & OPT_PROG_GENS_LEAN);
	bool lock_tp_used = lock_tp && !(gh && !strcmp(gh, "syscalls"));
	bool lock_hook = (optional & OPT_PROG_GENS) && lock_tp_used && !gens_lean;

	obj->rodata->gens_lean = !gens_lean ? 0 : lock_tp_used ? GENS_LEAN_LOCK : GENS_LEAN_SYSCALLS;
	bpf_program__set_autoload(obj->progs.handle_map_exec_raw, (optional & OPT_PROG_GENS) && !lock_hook && !gens_lean);
	bpf_program__set_autoload(obj->progs.handle_gen_lock, lock_hook);
	/* handle_gen_lock takes vm_unmapped_area too (profile.bpf.c,
	 * gen_arg_is_mm); handle_gen_area is the lean hooks' */
	bpf_program__set_autoload(obj->progs.handle_gen_area, gens_lean);
	bpf_program__set_autoload(obj->progs.handle_gen_start, lock_hook);
	/* the command's live descendants: a process set like the others */
	bpf_map__set_max_entries(obj->maps.pids, env->command ? (noprealloc ? procs : 65536) :
						 env->nr_pids ? env->nr_pids : 1);
	bpf_map__set_max_entries(obj->maps.tids, env->nr_tids ? env->nr_tids : 1);
	bpf_program__set_autoload(obj->progs.handle_mmap, optional & OPT_PROG_MMAP);
	bpf_program__set_autoload(obj->progs.handle_vmas, optional & OPT_PROG_VMAS);
	/* handle_vmas does handle_exit_sets' work too, when it loads */
	bpf_program__set_autoload(obj->progs.handle_exit_sets,
				  !(optional & OPT_PROG_VMAS) &&
					  (env->command != NULL || noprealloc || (optional & OPT_PROG_GENS)));
	/* The sampler: the unwinder's (bpf_loop); else frame pointers, with
	 * the code of generations and own stacks where they are in use;
	 * else tailwalk.bpf.c's (do_perf_event_lean), which loads on kernels
	 * that refuse the others' callbacks (BPF_PSEUDO_FUNC, 5.13) and
	 * global functions with pointer arguments (5.12) even where that
	 * code is never reached, and walks the tables there by tail calls
	 * (tail). */
	bool lean = tail || (!cfi && (gens_lean || (!(optional & OPT_PROG_GENS) && !noprealloc)));
	unsigned rt = 0;

	bpf_program__set_autoload(obj->progs.do_perf_event, !cfi && !lean);
	bpf_program__set_autoload(obj->progs.do_perf_event_lean, lean);
	bpf_program__set_autoload(obj->progs.do_perf_event_cfi, cfi && !tail);
	obj->rodata->tailwalk_cfi = tail;
	obj->rodata->fp_fallback = env->unwind != OPTS_UNWIND_CFI;
	/* Python frames ride on the unwinder's walks, the bpf_loop one's and
	 * the tail walk's (bpf/python/python_frame.h); V8's and HotSpot's on
	 * the bpf_loop walk only.  Of the runtimes the recording may meet
	 * (runtimes.h): the others' code is dropped by the verifier, not
	 * checked */
	*lazy_rt = 0;
	if (cfi) {
		char why[PATH_MAX];

		rt = runtimes_expected(env, why, sizeof(why));
		bool may = rt == RUNTIME_ALL && !env->all_runtimes && !tail;

		if (tail)
			rt &= RUNTIME_PYTHON;

		if (env->no_python)
			rt &= ~RUNTIME_PYTHON;
		if (env->no_v8)
			rt &= ~RUNTIME_V8;
		if (env->no_jvm)
			rt &= ~RUNTIME_JVM;
		/* Only may meet them (the whole system, a cgroup, a command
		 * that starts others): the walks are loaded when a process of
		 * one is first met (rt_lazy in profile.bpf.c), not verified at
		 * every start.  A recording that will meet one (its command
		 * is Python, -p of a JVM) or --runtimes loads them at once, as
		 * does the tail walk (its sampler has no sampler_rt call). */
		if (rt && may)
			*lazy_rt = rt;
		if (env->verbose)
			fprintf(stderr, "prof-record: frames of runtimes walked%s:%s%s%s%s (%s)\n",
				*lazy_rt ? " when first met" : "",
				rt & RUNTIME_PYTHON ? " Python" : "", rt & RUNTIME_V8 ? " V8" : "",
				rt & RUNTIME_JVM ? " HotSpot" : "", rt ? "" : " none", why);
	}
	obj->rodata->rt_lazy = *lazy_rt != 0;
	/* the walks' maps are made for the runtimes walked, now or later */
	obj->rodata->python_enabled = (rt & RUNTIME_PYTHON) && !env->no_python;
	/* V8 frames too (v8_walk.h, inline in the bpf_loop walk) */
	obj->rodata->v8_enabled = (rt & RUNTIME_V8) && !env->no_v8;
	if (!obj->rodata->v8_enabled) {
		bpf_map__set_max_entries(obj->maps.v8_seen, 1);
		bpf_map__set_max_entries(obj->maps.v8_procs, 1);
		bpf_map__set_max_entries(obj->maps.v8_codes, 1);
	} else if (noprealloc) {
		/* as py_seen below: an LRU map is preallocated whole (~4 MiB
		 * here), a hash map grows; when it fills, an SFI is announced
		 * again (prof-record keeps one entry) */
		bpf_map__set_type(obj->maps.v8_seen, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(obj->maps.v8_seen, BPF_F_NO_PREALLOC);
		/* the processes' descriptions too: 1,024 preallocated were
		 * 200 KiB allocated and zeroed at every start */
		bpf_map__set_map_flags(obj->maps.v8_procs, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(obj->maps.v8_codes, BPF_F_NO_PREALLOC);
	}
	/* so do HotSpot frames (bpf/jvm/jvm_walk.h) */
	obj->rodata->jvm_enabled = (rt & RUNTIME_JVM) && !env->no_jvm;
	if (!obj->rodata->jvm_enabled) {
		bpf_map__set_max_entries(obj->maps.jvm_seen, 1);
		bpf_map__set_max_entries(obj->maps.jvm_procs, 1);
	} else if (noprealloc) {
		/* as py_seen below: a map that grows, not 64 k preallocated */
		bpf_map__set_type(obj->maps.jvm_seen, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(obj->maps.jvm_seen, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(obj->maps.jvm_procs, BPF_F_NO_PREALLOC);
	}
	if (!obj->rodata->python_enabled) {
		/* nothing is created for a feature not in use */
		bpf_map__set_max_entries(obj->maps.py_seen, 1);
		bpf_map__set_max_entries(obj->maps.py_tstates, 1);
		bpf_map__set_max_entries(obj->maps.py_procs, 1);
	} else if (noprealloc) {
		/* LRU maps are preallocated whole: 7.6 MiB allocated and
		 * zeroed at every start-up, Python or not (a fifth of the
		 * start-up's kernel time).  Hash maps that grow instead; when
		 * one fills, a code object is announced again (prof-record
		 * keeps the first) and a thread's state is looked up again,
		 * where the LRU map evicted the oldest */
		bpf_map__set_type(obj->maps.py_seen, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(obj->maps.py_seen, BPF_F_NO_PREALLOC);
		bpf_map__set_type(obj->maps.py_tstates, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(obj->maps.py_tstates, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(obj->maps.py_procs, BPF_F_NO_PREALLOC);
	}
	if (*lazy_rt) {
		/* this sampler without the walks (loader_runtimes_tick()
		 * loads them) */
		obj->rodata->python_enabled = false;
		obj->rodata->v8_enabled = false;
		obj->rodata->jvm_enabled = false;
	}
	if (cfi) {
		struct unwinder_sizes us;

		/* what the budget may hold; the maps grow into it */
		unwinder_sizes(loader__unwind_budget(env), &us);
		bpf_map__set_max_entries(obj->maps.unwind_rows, us.row_maps);
		bpf_map__set_max_entries(obj->maps.unwind_pages, us.pages_cap);
		bpf_map__set_max_entries(obj->maps.unwind_rules, us.rules_cap);
		bpf_map__set_max_entries(obj->maps.unwind_objs, us.objs_cap);
		bpf_map__set_max_entries(obj->maps.ustacks, ustacks);
	}
	if (lean && !noprealloc) {
		/* Before 6.1 a perf_event program may use preallocated hash
		 * maps only, and the verifier checks every map a program
		 * names, used or not (frame pointers too): the page index
		 * (~70 bytes an entry, 2.3 MiB at the default budget) and the
		 * process tables, 8 KiB each, so 1024 of them (8 MiB) rather
		 * than 4096; a process past them is walked by frame pointer
		 * ("process tables failed" in -v) */
		bpf_map__set_map_flags(obj->maps.unwind_pages,
				       bpf_map__map_flags(obj->maps.unwind_pages) & ~BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(obj->maps.unwind_procs,
				       bpf_map__map_flags(obj->maps.unwind_procs) & ~BPF_F_NO_PREALLOC);
		bpf_map__set_max_entries(obj->maps.unwind_procs, 1024);
	}
	if (!cfi) {
		/* frame pointers only: the unwinder's maps stay empty */
		bpf_map__set_max_entries(obj->maps.unwind_procs, 1);
		bpf_map__set_max_entries(obj->maps.unwind_objs, 1);
		bpf_map__set_max_entries(obj->maps.unwind_pages, 1);
		bpf_map__set_max_entries(obj->maps.unwind_rows, 1);
		bpf_map__set_max_entries(obj->maps.unwind_rules, 1);
		bpf_map__set_max_entries(obj->maps.ustacks, 1);
		bpf_map__set_max_entries(obj->maps.remap_asked, 1);
	}

	if (noprealloc && !lean) {
		/* (not for tailwalk.bpf.c's sampler, which stores the
		 * kernel's walks in its stack maps: no own stacks) */
		/* The hash maps the samples fill; the LRU sets must be
		 * preallocated.  The kernel's stack maps always are: every
		 * stack then goes to "ustacks" (own_stacks in profile.bpf.c),
		 * which holds the kernel's walks beside the unwinder's. */
		struct bpf_map *grow[] = {
			obj->maps.counts, obj->maps.counts_b, obj->maps.ustacks, obj->maps.ustacks_b,
			obj->maps.seen, obj->maps.pids, obj->maps.tids,
		};

		for (size_t i = 0; i < sizeof(grow) / sizeof(grow[0]); i++)
			bpf_map__set_map_flags(grow[i], bpf_map__map_flags(grow[i]) | BPF_F_NO_PREALLOC);
		obj->rodata->own_stacks = true;
		/* the process sets grow too, emptied at exit (forget_exited) */
		bpf_map__set_type(obj->maps.tracked, BPF_MAP_TYPE_HASH);
		bpf_map__set_type(obj->maps.exec_gen, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(obj->maps.tracked, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(obj->maps.exec_gen, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(obj->maps.map_gens, BPF_F_NO_PREALLOC);
		obj->rodata->forget_exited = true;
		bpf_map__set_max_entries(obj->maps.stacks, 1);
		bpf_map__set_max_entries(obj->maps.stacks2, 1);
		/* room for N user and N kernel stacks */
		bpf_map__set_max_entries(obj->maps.ustacks,
					 ustacks * (env->kernel_only || env->user_only ? 1 : 2));
	}

	/* --off-cpu, --wall: their programs and map (offcpu/) */
	offcpu_configure(obj, env, cfi, counts);

	obj->rodata->rotating = env->rotate > 0;
	obj->rodata->slice_ns = (uint64_t)env->slice_ms * 1000000ULL;
	/* --rotate: the second set of per-interval maps, as large as the
	 * first; otherwise one entry each (nothing is preallocated for a
	 * feature not in use) */
	bpf_map__set_max_entries(obj->maps.counts_b,
				 env->rotate ? bpf_map__max_entries(obj->maps.counts) : 1);
	bpf_map__set_max_entries(obj->maps.stacks_b,
				 env->rotate ? bpf_map__max_entries(obj->maps.stacks) : 1);
	bpf_map__set_max_entries(obj->maps.stacks2_b,
				 env->rotate ? bpf_map__max_entries(obj->maps.stacks2) : 1);
	bpf_map__set_max_entries(obj->maps.ustacks_b,
				 env->rotate ? bpf_map__max_entries(obj->maps.ustacks) : 1);

	if (in_kernel) {
		*err = load_in_kernel(obj, *prog_fds, env->verbose);
	} else {
		/* -v where the kernel reports no verified_insns (before
		 * 5.16): the verifier's own count for the tail walk, from its
		 * log's statistics (BPF_LOG_STATS), which libbpf prints; and
		 * the lean generation hook's */
		if (env->verbose && tail)
			bpf_program__set_log_level(obj->progs.do_perf_event_lean, 4);
		if (env->verbose && gens_lean)
			bpf_program__set_log_level(obj->progs.handle_gen_area, 4);
		*err = profile_bpf__load(obj);
		/* the loader owns its programs' fds either way */
		bpf_object__for_each_program(prog, obj->obj)
			(*prog_fds)[j++] = *err || bpf_program__fd(prog) < 0 ? -1 :
					   fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
	}
	if (*err) {
		profile_bpf__destroy(obj);
		free(*prog_fds);
		*prog_fds = NULL;
		return NULL;
	}
	return obj;
}
