// SPDX-License-Identifier: Apache-2.0
/*
 * loader.c - the BPF object (loader.h): open, set its read-only data and map
 * sizes, load with the optional programs this kernel takes, attach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/skel_internal.h>
#include <limits.h>
#include "offcpu/offcpu_rec.h"
#include "kfeat.h"
#include "loader.h"
#include "profile.h"
#include "profile.skel.h"
#include "runtimes.h"
#include "btfids.h"
#include "btfids.skel.h"
#include "unwind/unwind.h"

/* The tracing programs loader_attach() may attach. */
#define LOADER_MAX_LINKS 16

struct loader {
	struct profile_bpf *skel;
	int *prog_fds;  /* by the program's index in the object; -1: not loaded */
	int nr_progs;
	int links[LOADER_MAX_LINKS];
	int nr_links;
	bool gens; /* a generation hook is attached: samples carry generations */
	bool gens_lock; /* it is the mm lock's (handle_gen_lock) */
	const char *gens_missing; /* why there are no generations */
	char gens_why[160];
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

static int libbpf_print_verbose(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The bucket count of a stack map of n entries, which bounds its ids. */
/* --unwind-memory, or what --unwind-table-size's rows take, or the default */
static uint64_t unwind_budget(const struct env *env)
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

/*
 * Whether an fexit program on func loads.  Kernels (or hypervisors,
 * lockdown) that refuse trampolines say so with EPERM only when a program
 * is loaded, and libbpf loads the programs of an object in order: the
 * failing fexit came after the unwinder's sampler, whose verification is
 * most of prof-record's start-up, so the whole object was loaded and
 * verified twice.  Two instructions tell the same, for a fraction of a
 * millisecond.  Only a refusal counts: any other error leaves the decision
 * to the real load.
 */
static bool fexit_refused(int id)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT,
		    .attach_btf_id = id > 0 ? (unsigned)id : 0);
	int fd;

	if (id <= 0)
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "bprof_probe", "GPL", insns, 2, &opts);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EPERM || errno == EACCES || errno == ENOTSUP || errno == 524 /* ENOTSUPP */;
}

/* What the optional programs need from the kernel's BTF. */
enum { FEAT_MMAP, FEAT_ITER_VMA, FEAT_LOCK_TP, FEAT_NR };
static const char *const feature_names[FEAT_NR] = { "vm_mmap_pgoff", "bpf_iter_task_vma_new",
						    "btf_trace_mmap_lock_released" };
static const __u32 feature_kinds[FEAT_NR] = { BTF_KIND_FUNC, BTF_KIND_FUNC, BTF_KIND_TYPEDEF };

/*
 * The BTF type id of each feature_names[] entry in the kernel (0: absent),
 * asked of the kernel by btfids.bpf.c.  Returns false where that program
 * cannot run (before Linux 5.14, or where syscall programs are refused):
 * the caller then reads the BTF itself.
 */
static bool kernel_btf_ids(int ids[FEAT_NR])
{
	struct btfids_bpf *f = btfids_bpf__open_and_load();
	struct btfids_args a = { .nr = FEAT_NR };
	/* a syscall program's context is copied back into ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &a, .ctx_size_in = sizeof(a));
	int err;

	if (!f)
		return false;
	for (int i = 0; i < FEAT_NR; i++) {
		snprintf(a.name[i], sizeof(a.name[i]), "%s", feature_names[i]);
		a.kind[i] = feature_kinds[i];
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(f->progs.find_btf_ids), &run);
	btfids_bpf__destroy(f);
	if (err || run.retval)
		return false;
	for (int i = 0; i < FEAT_NR; i++) {
		/* a name found in a module's BTF comes with an fd of that
		 * BTF, opened in this process: not ours to use here */
		if (a.id[i] > 0 && (a.id[i] >> 32) > 0)
			close((int)(a.id[i] >> 32));
		ids[i] = a.id[i] > 0 && (a.id[i] >> 32) == 0 ? (int)(a.id[i] & 0x7fffffff) : 0;
	}
	return true;
}

/* The same from the BTF read in user space: the slow way. */
static void vmlinux_btf_ids(int ids[FEAT_NR])
{
	struct btf *btf = btf__load_vmlinux_btf();

	for (int i = 0; i < FEAT_NR; i++) {
		int id = btf ? btf__find_by_name_kind(btf, feature_names[i], feature_kinds[i]) : -1;

		ids[i] = id > 0 ? id : 0;
	}
	btf__free(btf);
}

/*
 * What the loader asks the kernel before it loads anything: its features
 * (kfeat_probe), the optional hooks' BTF ids, whether fexit attaches.
 * This boot's answers are kept for the next starts (kfeat.h: ~2.5 ms of
 * each); BPROF_KFEAT_OFF applies after, to the answers either way.
 */
static void probe_kernel(const struct env *env, struct kfeat *kf, int ids[FEAT_NR], bool *fexit_ok)
{
	const char *path = kfeat_cache_path();
	struct kfeat_extra x = { 0 };
	int err;

	_Static_assert(FEAT_NR <= KFEAT_CACHE_IDS, "the cache keeps every feature's id");
	if (path && kfeat_cache_read(path, kf, &x)) {
		memcpy(ids, x.ids, FEAT_NR * sizeof(ids[0]));
		*fexit_ok = x.fexit_ok;
		if (env->verbose)
			fprintf(stderr, "prof-record: the kernel's features: this boot's answers, from %s\n", path);
	} else {
		kfeat_probe(kf);
		if (!kernel_btf_ids(ids))
			vmlinux_btf_ids(ids);
		*fexit_ok = ids[FEAT_MMAP] && !fexit_refused(ids[FEAT_MMAP]);
		memcpy(x.ids, ids, FEAT_NR * sizeof(ids[0]));
		x.fexit_ok = *fexit_ok;
		if (path && (err = kfeat_cache_write(path, kf, &x)) && env->verbose)
			fprintf(stderr, "prof-record: cannot keep the kernel's features in %s (%s)\n", path,
				strerror(-err));
	}
	kfeat_pretend(kf);
}

static int libbpf_print_none(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

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
static int nr_programs(struct bpf_object *o)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, o)
		n++;
	return n;
}

static struct profile_bpf *open_one(const struct env *env, unsigned optional, bool cfi, bool tail,
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
	*prog_fds = malloc(nr_programs(obj->obj) * sizeof(**prog_fds));
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
		unwinder_sizes(unwind_budget(env), &us);
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

/*
 * The maps that grow (own_stacks) take their elements from per-CPU caches
 * that the kernel fills after an interrupt, and at creation holds one
 * element of a stack's size per CPU.  A CPU's first sample can need two (a
 * new user and a new kernel stack): the second then failed with ENOMEM,
 * a stack lost at the start of one run in five.  Inserting and deleting
 * two elements from user space on each CPU (pinned there) makes each cache
 * refill to its usual level before sampling starts.  Best effort: a CPU
 * this process may not run on keeps its one element.
 */
static void warm_caches(struct profile_bpf *obj)
{
	/* keys no sample produces (stack ids are below 2^31, no pid is
	 * 2^32 - 1 or - 2; sampling has not started anyway) and any value */
	static const struct profile_ustack stack;
	static const struct profile_map_gen gen;
	static const uint64_t one = 1;
	uint32_t ids[2] = { UINT32_MAX, UINT32_MAX - 1 };
	struct profile_key keys[2] = { { .pid = UINT32_MAX }, { .pid = UINT32_MAX - 1 } };
	struct {
		struct bpf_map *map;
		const void *key[2], *value;
	} sets[] = {
		{ obj->maps.ustacks, { &ids[0], &ids[1] }, &stack },
		{ obj->maps.ustacks_b, { &ids[0], &ids[1] }, &stack },
		{ obj->maps.counts, { &keys[0], &keys[1] }, &one },
		{ obj->maps.counts_b, { &keys[0], &keys[1] }, &one },
		/* a failed insertion here sets map_gens_lost for the whole
		 * recording: every image's samples of unknown generation
		 * after it (a whole-system recording as nobody once named
		 * 73 % of a workload's frames, none of its stacks whole) */
		{ obj->maps.map_gens, { &ids[0], &ids[1] }, &gen },
	};
	int ncpus = libbpf_num_possible_cpus();
	cpu_set_t saved;

	if (ncpus <= 0 || sched_getaffinity(0, sizeof(saved), &saved))
		return;
	for (int cpu = 0; cpu < ncpus && cpu < CPU_SETSIZE; cpu++) {
		cpu_set_t one_cpu;

		CPU_ZERO(&one_cpu);
		CPU_SET(cpu, &one_cpu);
		if (sched_setaffinity(0, sizeof(one_cpu), &one_cpu))
			continue;
		for (size_t m = 0; m < sizeof(sets) / sizeof(sets[0]); m++) {
			int fd = bpf_map__fd(sets[m].map);

			if (bpf_map__max_entries(sets[m].map) < 2)
				continue; /* a set not in use (no --rotate) */
			for (int k = 0; k < 2; k++)
				bpf_map_update_elem(fd, sets[m].key[k], sets[m].value, BPF_NOEXIST);
			for (int k = 0; k < 2; k++)
				bpf_map_delete_elem(fd, sets[m].key[k]);
		}
	}
	sched_setaffinity(0, sizeof(saved), &saved);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* -v: each loaded program and the instructions the verifier processed
 * for it (bpf_prog_info.verified_insns, Linux 5.16+; "?" before), the
 * figure that must stay well under the 1M limit on every kernel of the
 * matrix (record/DESIGN.md, "Verifier headroom"). */
static void report_verified(struct profile_bpf *obj, const int *prog_fds)
{
	struct bpf_program *prog;
	int i = 0;

	bpf_object__for_each_program(prog, obj->obj) {
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);
		int fd = prog_fds[i++];

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.verified_insns)
			fprintf(stderr, "prof-record: program %s: verified instructions not reported by this kernel\n",
				bpf_program__name(prog));
		else
			fprintf(stderr, "prof-record: program %s: %u instructions verified\n",
				bpf_program__name(prog), info.verified_insns);
	}
}

/* The fd of program p of obj as loaded (prog_fds by index); -1: not loaded. */
static int prog_fd_in(struct profile_bpf *obj, const int *prog_fds, struct bpf_program *p)
{
	struct bpf_program *q;
	int i = 0;

	bpf_object__for_each_program(q, obj->obj) {
		if (q == p)
			return prog_fds[i];
		i++;
	}
	return -1;
}

/* What the unwinder's sampler and the mapping generations' hooks call. */
static const enum kfeat_id cfi_needs[] = { KFEAT_LOOP, KFEAT_TASK_PT_REGS, KFEAT_CURRENT_TASK_BTF };
static const enum kfeat_id gens_needs[] = { KFEAT_LOOP, KFEAT_FIND_VMA, KFEAT_CURRENT_TASK_BTF };

/* Load with as many optional programs as this kernel takes; libbpf stays
 * quiet about the attempts that fail unless -v.  *cfi: the table-walking
 * sampler was loaded (--unwind=auto falls back to frame pointers on a
 * kernel that cannot load it). */
struct loader *loader_open(const struct env *env, bool *cfi, int *err)
{
	struct profile_bpf *obj = NULL;
	struct loader *ld = calloc(1, sizeof(*ld));
	unsigned avail = OPT_PROG_GENS, tries[4];
	size_t nr_tries = 0;
	struct kfeat kf;
	bool noprealloc, tail = false, offcpu_lean, fexit_ok;
	int ids[FEAT_NR], *prog_fds = NULL, miss;
	/* BPROF_LOAD=libbpf: the path of kernels before 5.17, for tests */
	const char *how = getenv("BPROF_LOAD");
	bool in_kernel = !how || strcmp(how, "libbpf") != 0, by_loader = false;
	uint64_t t0 = mono_ns();

	if (!ld) {
		*err = -ENOMEM;
		return NULL;
	}
	char msg[256];

	if (!env->verbose)
		libbpf_set_print(libbpf_print_none);
	probe_kernel(env, &kf, ids, &fexit_ok);
	ld->kf = kf;
	noprealloc = kf.has[KFEAT_NOPREALLOC];
	/* a loader program this kernel cannot run is not written down and
	 * tried (5.10 refused it on every start) */
	if (in_kernel && !kf.has[KFEAT_SYSCALL_PROG]) {
		in_kernel = false;
		if (env->verbose)
			fprintf(stderr, "prof-record: this kernel lacks %s: the BPF object is loaded by libbpf\n",
				kfeat_describe(KFEAT_SYSCALL_PROG));
	}
	if (!offcpu_supported(env, &kf, msg, sizeof(msg))) {
		fprintf(stderr, "prof-record: %s\n", msg);
		free(ld);
		*err = -EOPNOTSUPP;
		return NULL;
	}
	/* --off-cpu, --wall where the kernel lacks what their programs use:
	 * the object with the older kernels' (offcpu/) */
	char lean_why[768];

	offcpu_lean = offcpu_lean_needed(env, &kf, lean_why, sizeof(lean_why));
	if (offcpu_lean)
		fprintf(stderr, "prof-record: %s\n", lean_why);
	*cfi = env->unwind != OPTS_UNWIND_FP;
	miss = kfeat_first_missing(&kf, cfi_needs, sizeof(cfi_needs) / sizeof(cfi_needs[0]));
	if (*cfi && miss >= 0) {
		/* the tables walked by tail calls (bpf/tailwalk/), with
		 * Python frames but not V8's or HotSpot's */
		tail = true;
		if (!env->no_v8)
			fprintf(stderr, "prof-record: this kernel lacks %s: V8 JavaScript frames are not recorded (native stacks are)\n",
				kfeat_describe(miss));
		if (!env->no_jvm)
			fprintf(stderr, "prof-record: this kernel lacks %s: Java frames are not recorded (native stacks are)\n",
				kfeat_describe(miss));
	}
	/* BPROF_TAILWALK=1: the walk of kernels without bpf_loop anyway
	 * (tests on the development kernel) */
	if (*cfi && getenv("BPROF_TAILWALK") && !strcmp(getenv("BPROF_TAILWALK"), "1"))
		tail = true;
	/* Where the hooks' helpers are missing, or the tail walk samples
	 * (it reads no change left for a sample to read), the lean hook
	 * reads each change itself (profile.bpf.c, "the lean mm lock
	 * hook"): at the mm lock's release where the mmap_lock tracepoints
	 * exist (5.11), else at the system calls' exits.
	 * BPROF_GENS_HOOK=syscalls keeps the bpf_find_vma syscall hook
	 * under the tail walk where it loads: it reads at once too. */
	const char *gh = getenv("BPROF_GENS_HOOK");

	miss = kfeat_first_missing(&kf, gens_needs, sizeof(gens_needs) / sizeof(gens_needs[0]));
	if (miss >= 0 || (tail && !(gh && !strcmp(gh, "syscalls"))))
		avail |= OPT_PROG_GENS_LEAN;
	if (fexit_ok)
		avail |= OPT_PROG_MMAP;
	if (ids[FEAT_ITER_VMA])
		avail |= OPT_PROG_VMAS;
	/* drop the riskiest first: fexit needs trampolines; each set once,
	 * the last with no optional program at all */
	tries[nr_tries++] = avail;
	if (avail & OPT_PROG_MMAP && avail != OPT_PROG_MMAP)
		tries[nr_tries++] = avail & ~OPT_PROG_MMAP;
	if (avail & OPT_PROG_VMAS && avail & OPT_PROG_GENS)
		tries[nr_tries++] = OPT_PROG_VMAS;
	if (avail)
		tries[nr_tries++] = 0;
	/* the tail walk's sampler without Python frames, where the verifier
	 * refused it with them (said, and kept in META) */
	struct env no_py = *env;
	const struct env *try_env = env;
	char rt_why[PATH_MAX];
	bool tail_py = tail && !env->no_python &&
		       (runtimes_expected(env, rt_why, sizeof(rt_why)) & RUNTIME_PYTHON);

	no_py.no_python = true;
	for (size_t i = 0; i < nr_tries && !obj; i++) {
		bool last = i + 1 == nr_tries;

		if (!env->verbose)
			libbpf_set_print(last && env->unwind != OPTS_UNWIND_AUTO ? libbpf_print_quiet : libbpf_print_none);
		/* by a loader program first; where that fails (before Linux
		 * 5.17, or a program the kernel refuses), libbpf says why */
		if (in_kernel)
			obj = open_one(try_env, tries[i], *cfi, tail, noprealloc, ids[FEAT_LOCK_TP] > 0, true,
				       offcpu_lean, &prog_fds, &ld->rt_lazy, err);
		by_loader = obj != NULL;
		if (!obj)
			obj = open_one(try_env, tries[i], *cfi, tail, noprealloc, ids[FEAT_LOCK_TP] > 0, false,
				       offcpu_lean, &prog_fds, &ld->rt_lazy, err);
		if (!obj && env->verbose)
			fprintf(stderr, "prof-record: loading with optional programs 0x%x%s failed: %s\n",
				tries[i], *cfi ? " and the unwinder" : "", strerror(-*err));
		if (!obj && last && tail_py && try_env == env && *err != -EPERM && *err != -ENOMEM) {
			fprintf(stderr, "prof-record: this kernel's verifier refused the tail-call walk with Python frames (-v shows its log): Python frames are not recorded (native stacks are)\n");
			ld->rt_failed |= RUNTIME_PYTHON;
			try_env = &no_py;
			i = (size_t)-1;
			continue;
		}
		if (!obj && last && *cfi && env->unwind == OPTS_UNWIND_AUTO) {
			/* it has what the unwinder needs (kfeat), yet refused
			 * it: the verifier's log says why */
			fprintf(stderr, "prof-record: this kernel's verifier refused the stack unwinder (-v shows its log): user stacks follow frame pointers only\n");
			*cfi = false;
			tail = false;
			i = (size_t)-1;
		}
	}
	libbpf_set_print(env->verbose ? libbpf_print_verbose : libbpf_print_quiet);
	if (!obj && *err == -EPERM && !kf.has[KFEAT_MEMCG] && geteuid() != 0) {
		struct rlimit rl = {0};

		getrlimit(RLIMIT_MEMLOCK, &rl);
		fprintf(stderr, "prof-record: this kernel lacks %s: its BPF maps count against the locked-memory limit (ulimit -l: %llu KiB), which this user may not raise: run as root, grant CAP_SYS_RESOURCE as well (setcap cap_bpf,cap_perfmon,cap_sys_resource+ep prof-record), or raise the limit\n",
			kfeat_describe(KFEAT_MEMCG), (unsigned long long)rl.rlim_cur / 1024);
		*err = -EOPNOTSUPP;
	}
	if (!obj) {
		free(ld);
		return NULL;
	}
	if (env->verbose) {
		fprintf(stderr, "prof-record: BPF object loaded by %s in %.1f ms\n",
			by_loader ? "a loader program (CO-RE in the kernel)" : "libbpf",
			(mono_ns() - t0) / 1e6);
		report_verified(obj, prog_fds);
	}
	if (obj->rodata->own_stacks)
		warm_caches(obj);
	if (tail) {
		/* the tail walk's next runs are this same program */
		__u32 zero = 0;
		int fd = prog_fd_in(obj, prog_fds, obj->progs.do_perf_event_lean);

		if (fd < 0 || bpf_map_update_elem(bpf_map__fd(obj->maps.tailwalk_self), &zero, &fd, BPF_ANY))
			fprintf(stderr, "prof-record: warning: cannot chain the unwinder's walk (%s): user stacks stop after %d frames\n",
				strerror(errno), UNWIND_TAIL_FRAMES);
	}
	int chain_err = offcpu_chain(obj, prog_fd_in(obj, prog_fds, obj->progs.handle_offcpu_resume),
				     prog_fd_in(obj, prog_fds, obj->progs.handle_offcpu_end));

	if (chain_err)
		fprintf(stderr, "prof-record: warning: cannot chain the off-CPU user-stack walk (%s): those stacks stop after %d frames\n",
			strerror(-chain_err), UNWIND_TAIL_FRAMES);
	ld->skel = obj;
	ld->prog_fds = prog_fds;
	ld->nr_progs = nr_programs(obj->obj);
	ld->verbose = env->verbose;
	ld->offcpu_lean = offcpu_lean;
	ld->t0 = t0;
	return ld;
}

/*
 * The walks of the runtimes rt (RUNTIME_*), loaded when first met
 * (rt_lazy, profile.bpf.c): a second instance of the object, every map
 * its first's (the rodata aside: those walks on, rt_lazy off), only its
 * unwinding sampler loaded, by libbpf, and put in sampler_rt, where the
 * first one's samples go from then on.  Only the runtimes met: the
 * sampler with Python's walk alone verifies ~11,000 instructions, with
 * all three ~28,700 (Linux 6.18); a runtime met later loads the sampler
 * again with the walks of both, which replaces the first in sampler_rt.
 */
static int load_runtimes(struct loader *ld, unsigned rt)
{
	/* the same object as the first (the off-CPU programs of older
	 * kernels are another), so that its maps are the same */
	struct profile_bpf *o = offcpu_skel_open(ld->offcpu_lean);
	struct bpf_map *m, *m1 = NULL;
	struct bpf_program *p;
	__u32 zero = 0;
	int err;

	if (!o)
		return -errno;
	/* tests: BPROF_TEST_RT_FAIL=v8 (or python, jvm) fails the load of
	 * a sampler with that runtime's walk, as a refusing kernel would
	 * (tests/record/programs.sh) */
	const char *tf = getenv("BPROF_TEST_RT_FAIL");

	if (tf && ((!strcmp(tf, "python") && (rt & RUNTIME_PYTHON)) || (!strcmp(tf, "v8") && (rt & RUNTIME_V8)) ||
		   (!strcmp(tf, "jvm") && (rt & RUNTIME_JVM)))) {
		profile_bpf__destroy(o);
		return -EINVAL;
	}
	memcpy(o->rodata, ld->skel->rodata, sizeof(*o->rodata));
	o->rodata->rt_lazy = false;
	o->rodata->python_enabled = rt & RUNTIME_PYTHON;
	o->rodata->v8_enabled = rt & RUNTIME_V8;
	o->rodata->jvm_enabled = rt & RUNTIME_JVM;
	bpf_object__for_each_program(p, o->obj)
		bpf_program__set_autoload(p, p == o->progs.do_perf_event_cfi);
	/* the maps in the same order in both instances */
	bpf_object__for_each_map(m, o->obj) {
		m1 = bpf_object__next_map(ld->skel->obj, m1);
		if (!m1 || strcmp(bpf_map__name(m), bpf_map__name(m1))) {
			profile_bpf__destroy(o);
			return -EINVAL;
		}
		if (m == o->maps.rodata)
			continue;
		err = bpf_map__reuse_fd(m, bpf_map__fd(m1));
		if (err) {
			profile_bpf__destroy(o);
			return err;
		}
	}
	err = bpf_object__load(o->obj);
	if (!err) {
		int fd = bpf_program__fd(o->progs.do_perf_event_cfi);

		if (bpf_map_update_elem(bpf_map__fd(ld->skel->maps.sampler_rt), &zero, &fd, BPF_ANY))
			err = -errno;
	}
	if (err) {
		/* an earlier instance, if any, stays in sampler_rt */
		profile_bpf__destroy(o);
		return err;
	}
	/* the slot holds the new program now: the old one goes once the
	 * samples running it are over (the kernel's RCU) */
	profile_bpf__destroy(ld->rt_skel);
	ld->rt_skel = o;
	ld->rt_loaded = rt;
	return 0;
}

/* The runtimes of mask, named ("Python V8"; jvm: HotSpot's name here). */
static const char *runtime_names(unsigned mask, const char *jvm, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", mask & RUNTIME_PYTHON ? "Python" : "",
		 (mask & RUNTIME_PYTHON) && (mask & ~RUNTIME_PYTHON) ? " " : "", mask & RUNTIME_V8 ? "V8" : "",
		 (mask & RUNTIME_V8) && (mask & RUNTIME_JVM) ? " " : "", mask & RUNTIME_JVM ? jvm : "");
	return buf;
}

/* Whether any process of a runtime of mask was registered for the walks:
 * the walks of the runtimes met so far are loaded, once each. */
void loader_runtimes_tick(struct loader *ld, unsigned met)
{
	char names[32];
	unsigned want;
	int err;

	if (!ld || !ld->rt_lazy)
		return;
	want = met & ld->rt_lazy & ~ld->rt_failed;
	if (!(want & ~ld->rt_loaded))
		return;
	want |= ld->rt_loaded;
	libbpf_set_print(ld->verbose ? libbpf_print_verbose : libbpf_print_none);
	err = load_runtimes(ld, want);
	libbpf_set_print(ld->verbose ? libbpf_print_verbose : libbpf_print_quiet);
	ld->rt_ms = (mono_ns() - ld->t0) / 1e6;
	if (err) {
		/* those met now are not walked; those loaded before still are */
		unsigned lost = want & ~ld->rt_loaded;

		ld->rt_failed |= lost;
		fprintf(stderr, "prof-record: warning: cannot load the walk of %s frames (%s; -v says why): they are not recorded\n",
			runtime_names(lost, "Java", names, sizeof(names)), strerror(-err));
		return;
	}
	if (ld->verbose) {
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);

		bpf_obj_get_info_by_fd(bpf_program__fd(ld->rt_skel->progs.do_perf_event_cfi), &info, &len);
		fprintf(stderr, "prof-record: a runtime met: its walks loaded (%s) %.1f ms after the start (program do_perf_event_cfi with them: %u instructions verified)\n",
			runtime_names(want, "HotSpot", names, sizeof(names)), ld->rt_ms, info.verified_insns);
	}
}

uint32_t loader_runtimes_lacking(const struct loader *ld)
{
	return (ld->rt_failed & RUNTIME_PYTHON ? BPROF_META_NO_PYTHON_WALK : 0) |
	       (ld->rt_failed & RUNTIME_V8 ? BPROF_META_NO_V8_WALK : 0) |
	       (ld->rt_failed & RUNTIME_JVM ? BPROF_META_NO_JVM_WALK : 0);
}

struct profile_bpf *loader_skeleton(const struct loader *ld)
{
	return ld->skel;
}

/* The fd of a loaded program of the skeleton; -1 if it was not loaded. */
static int prog_fd(const struct loader *ld, struct bpf_program *p)
{
	struct bpf_program *q;
	int i = 0;

	bpf_object__for_each_program(q, ld->skel->obj) {
		if (q == p)
			return i < ld->nr_progs ? ld->prog_fds[i] : -1;
		i++;
	}
	return -1;
}

int loader_prog_fd(const struct loader *ld, struct bpf_program *p)
{
	return prog_fd(ld, p);
}

bool loader_kernel_has(const struct loader *ld, enum kfeat_id id)
{
	return ld->kf.has[id];
}

uint64_t loader_prog_misses(const struct loader *ld, struct bpf_program *p)
{
	struct bpf_prog_info info = {0};
	__u32 len = sizeof(info);
	int fd = prog_fd(ld, p);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

void loader_report_runs(const struct loader *ld)
{
	struct bpf_program *prog;
	bool counted = false;
	int i = 0;

	bpf_object__for_each_program(prog, ld->skel->obj) {
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);
		int fd = ld->prog_fds[i++];

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		if (info.recursion_misses)
			fprintf(stderr, "prof-record: program %s: %llu runs skipped by the kernel\n",
				bpf_program__name(prog), (unsigned long long)info.recursion_misses);
		if (!info.run_cnt)
			continue;
		counted = true;
		fprintf(stderr, "prof-record: program %s: %llu runs, %.2f us each (%.1f ms in all)\n",
			bpf_program__name(prog), (unsigned long long)info.run_cnt,
			info.run_time_ns / 1e3 / info.run_cnt, info.run_time_ns / 1e6);
	}
	if (!counted)
		fprintf(stderr, "prof-record: the BPF programs' run times were not counted (sysctl kernel.bpf_stats_enabled=1 counts them)\n");
}

int loader_sampler_fd(const struct loader *ld)
{
	int fd = prog_fd(ld, ld->skel->progs.do_perf_event_cfi);

	if (fd < 0)
		fd = prog_fd(ld, ld->skel->progs.do_perf_event);
	return fd >= 0 ? fd : prog_fd(ld, ld->skel->progs.do_perf_event_lean);
}

/* Attach a loaded tracing program: tp_btf or fexit (tp NULL: the kernel
 * knows its attach point), or raw_tp (tp: the tracepoint's name); 0, or -1
 * with errno set. */
static int attach_tracing(struct loader *ld, struct bpf_program *p, const char *tp)
{
	int fd = prog_fd(ld, p), link;

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
		ld->gens_lock = ld->gens;
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
	} else if (ld->gens_missing) {
		fprintf(stderr, "prof-record: warning: %s: no mapping generations: a library unloaded and another loaded at its address may be named as the first\n",
			ld->gens_missing);
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

void loader_set_log(bool verbose)
{
	libbpf_set_print(verbose ? libbpf_print_verbose : libbpf_print_quiet);
}

void loader_destroy(struct loader *ld)
{
	if (!ld)
		return;
	for (int i = 0; i < ld->nr_links; i++)
		close(ld->links[i]);
	for (int i = 0; i < ld->nr_progs; i++)
		if (ld->prog_fds[i] >= 0)
			close(ld->prog_fds[i]);
	free(ld->prog_fds);
	profile_bpf__destroy(ld->rt_skel);
	profile_bpf__destroy(ld->skel);
	free(ld);
}

int loader_set_filters(struct profile_bpf *obj, const struct env *env, int cgroup_fd)
{
	for (int i = 0; i < env->nr_pids; i++) {
		uint32_t k = env->pids[i];
		uint8_t one = 1;

		bpf_map_update_elem(bpf_map__fd(obj->maps.pids), &k, &one, BPF_ANY);
	}
	for (int i = 0; i < env->nr_tids; i++) {
		uint32_t k = env->tids[i];
		uint8_t one = 1;

		bpf_map_update_elem(bpf_map__fd(obj->maps.tids), &k, &one, BPF_ANY);
	}
	if (cgroup_fd >= 0) {
		uint32_t zero = 0;

		if (bpf_map_update_elem(bpf_map__fd(obj->maps.cgroup_map), &zero, &cgroup_fd, BPF_ANY)) {
			fprintf(stderr, "prof-record: cannot use cgroup %s: %s; it must be a cgroup v2 directory\n",
				env->cgroup, strerror(errno));
			return -1;
		}
	}
	return 0;
}

void loader_follow(struct profile_bpf *obj, pid_t pid)
{
	uint8_t one = 1;
	uint32_t k = pid;

	bpf_map_update_elem(bpf_map__fd(obj->maps.pids), &k, &one, BPF_ANY);
	bpf_map_update_elem(bpf_map__fd(obj->maps.tracked), &k, &one, BPF_ANY);
}

void loader_python_fds(struct profile_bpf *obj, int *procs_fd, int *stats_fd)
{
	*procs_fd = bpf_map__fd(obj->maps.py_procs);
	*stats_fd = bpf_map__fd(obj->maps.py_stats);
}

int loader_v8_fd(struct profile_bpf *obj)
{
	return bpf_map__fd(obj->maps.v8_procs);
}

int loader_v8_codes_fd(struct profile_bpf *obj)
{
	return bpf_map__fd(obj->maps.v8_codes);
}

bool loader_walks_v8(const struct loader *ld)
{
	return ld->skel->rodata->v8_enabled || (ld->rt_lazy & RUNTIME_V8);
}

bool loader_walks_python(const struct loader *ld)
{
	return ld->skel->rodata->python_enabled || (ld->rt_lazy & RUNTIME_PYTHON);
}

bool loader_walks_by_tail_calls(const struct profile_bpf *obj)
{
	return obj->rodata->tailwalk_cfi;
}

void loader_jvm_fds(struct profile_bpf *obj, int *procs_fd, int *stats_fd)
{
	*procs_fd = bpf_map__fd(obj->maps.jvm_procs);
	*stats_fd = bpf_map__fd(obj->maps.jvm_stats);
}

bool loader_walks_jvm(const struct loader *ld)
{
	return ld->skel->rodata->jvm_enabled || (ld->rt_lazy & RUNTIME_JVM);
}

bool loader_runtime_maps(const struct loader *ld, unsigned rt, struct runtime_maps *m)
{
	struct profile_bpf *obj = ld->skel;

	*m = (struct runtime_maps){ .procs_fd = -1, .stats_fd = -1, .codes_fd = -1,
				    .nr_cpus = libbpf_num_possible_cpus() };
	switch (rt) {
	case RUNTIME_PYTHON:
		loader_python_fds(obj, &m->procs_fd, &m->stats_fd);
		return loader_walks_python(ld);
	case RUNTIME_V8:
		m->procs_fd = loader_v8_fd(obj);
		m->codes_fd = loader_v8_codes_fd(obj);
		return loader_walks_v8(ld);
	case RUNTIME_JVM:
		loader_jvm_fds(obj, &m->procs_fd, &m->stats_fd);
		return loader_walks_jvm(ld);
	}
	return false;
}

int loader_exec_gen_fd(const struct profile_bpf *obj)
{
	return bpf_map__fd(obj->maps.exec_gen);
}

int loader_map_gens_fd(const struct loader *ld)
{
	return ld->skel->rodata->track_gens ? bpf_map__fd(ld->skel->maps.map_gens) : -1;
}

void loader_unwinder_maps(const struct profile_bpf *obj, const struct env *env,
			  struct unwinder_maps *um)
{
	*um = (struct unwinder_maps){
		.budget = unwind_budget(env),
		.procs_fd = bpf_map__fd(obj->maps.unwind_procs),
		.objs_fd = bpf_map__fd(obj->maps.unwind_objs),
		.pages_fd = bpf_map__fd(obj->maps.unwind_pages),
		.rows_fd = bpf_map__fd(obj->maps.unwind_rows),
		.rules_fd = bpf_map__fd(obj->maps.unwind_rules),
		.objs_cap = bpf_map__max_entries(obj->maps.unwind_objs),
		.row_maps = bpf_map__max_entries(obj->maps.unwind_rows),
		.rules_cap = bpf_map__max_entries(obj->maps.unwind_rules),
		.pages_cap = bpf_map__max_entries(obj->maps.unwind_pages),
		.procs_cap = bpf_map__max_entries(obj->maps.unwind_procs),
		.no_fd_batch = obj->rodata->tailwalk_cfi,
	};
}
