// SPDX-License-Identifier: Apache-2.0
/*
 * loader.c - the BPF object (loader.h): opened with the optional programs
 * this kernel takes (what it offers: loader_probe.c; each object
 * configured and loaded: loader_config.c), the runtimes' walks loaded
 * when first met, the accessors, the filters, the end.  Attaching is
 * loader_attach.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include "offcpu/offcpu_rec.h"
#include "kfeat.h"
#include "loader_internal.h"
#include "profile.h"
#include "profile.skel.h"
#include "runtimes.h"
#include "unwind/unwind.h"

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

static int libbpf_print_none(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
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
	loader__probe_kernel(env, &kf, ids, &fexit_ok);
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
			obj = loader__open_one(try_env, tries[i], *cfi, tail, noprealloc, ids[FEAT_LOCK_TP] > 0, true,
					       offcpu_lean, &prog_fds, &ld->rt_lazy, err);
		by_loader = obj != NULL;
		if (!obj)
			obj = loader__open_one(try_env, tries[i], *cfi, tail, noprealloc, ids[FEAT_LOCK_TP] > 0, false,
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
	ld->nr_progs = loader__nr_programs(obj->obj);
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
int loader__prog_fd(const struct loader *ld, struct bpf_program *p)
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
	return loader__prog_fd(ld, p);
}

bool loader_kernel_has(const struct loader *ld, enum kfeat_id id)
{
	return ld->kf.has[id];
}

uint64_t loader_prog_misses(const struct loader *ld, struct bpf_program *p)
{
	struct bpf_prog_info info = {0};
	__u32 len = sizeof(info);
	int fd = loader__prog_fd(ld, p);

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
	int fd = loader__prog_fd(ld, ld->skel->progs.do_perf_event_cfi);

	if (fd < 0)
		fd = loader__prog_fd(ld, ld->skel->progs.do_perf_event);
	return fd >= 0 ? fd : loader__prog_fd(ld, ld->skel->progs.do_perf_event_lean);
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
		.budget = loader__unwind_budget(env),
		.procs_fd = bpf_map__fd(obj->maps.unwind_procs),
		.objs_fd = bpf_map__fd(obj->maps.unwind_objs),
		.pages_fd = bpf_map__fd(obj->maps.unwind_pages),
		.rows_fd = bpf_map__fd(obj->maps.unwind_rows),
		.rules_fd = bpf_map__fd(obj->maps.unwind_rules),
		.objs_cap = bpf_map__max_entries(obj->maps.unwind_objs),
		.row_maps = bpf_map__max_entries(obj->maps.unwind_rows),
		.rules_cap = bpf_map__max_entries(obj->maps.unwind_rules),
		.pages_cap = bpf_map__max_entries(obj->maps.unwind_pages),
		.no_fd_batch = obj->rodata->tailwalk_cfi,
	};
}
