// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_rec.c - see offcpu_rec.h; the reasoning is in record/DESIGN.md, "Off-CPU
 * and wall-clock time".
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bprof.h"
#include "dump.h"
#include "kfeat.h"
#include "offcpu/offcpu_rec.h"
#include "profile.skel.h"
#include "profile_lean.skel.h"
#include "unwind/unwind.h"

/* What offcpu.bpf.c's programs use that older kernels lack: the thread
 * states (task storage), the blocked thread's user registers
 * (bpf_task_pt_regs), the stacks' hash (bpf_loop), the stacks stored like
 * own_stacks' (ids of their own in "ustacks", a hash map that grows); any
 * one missing, offcpu_lean.bpf.c's programs load instead. */
static const enum kfeat_id offcpu_needs[] = { KFEAT_TASK_STORAGE, KFEAT_CURRENT_TASK_BTF,
					      KFEAT_TASK_PT_REGS, KFEAT_LOOP, KFEAT_NOPREALLOC };
#define OFFCPU_NR_NEEDS (sizeof(offcpu_needs) / sizeof(offcpu_needs[0]))

/* The lean variant's thread states: a preallocated hash map by tid (about
 * 170 bytes an entry); a thread switched out while it is full is counted
 * lost.  Entries are deleted when threads exit, so this bounds the threads
 * that live at once and block, not those of the whole recording. */
#define OFFCPU_LEAN_THREADS 32768
/* ... and, with frame pointers only (no unwinder's stacks to share the
 * map with), the room for its stacks in "ustacks" (2 KiB each,
 * preallocated before 6.1): the distinct blocked stacks of a recording */
#define OFFCPU_LEAN_STACKS 4096

bool offcpu_supported(const struct env *env, const struct kfeat *kf, char *msg, size_t len)
{
	const char *opt = env->off_cpu == OFFCPU_MODE_WALL ? "--wall" : "--off-cpu";

	(void)kf;
	if (!env->off_cpu)
		return true;
	if (env->cycles) {
		snprintf(msg, len, "%s counts time in periods of the cpu-clock event; not with -e cycles", opt);
		return false;
	}
	return true;
}

bool offcpu_lean_needed(const struct env *env, const struct kfeat *kf, char *msg, size_t len)
{
	const char *opt = env->off_cpu == OFFCPU_MODE_WALL ? "--wall" : "--off-cpu";
	const char *force = getenv("BPROF_OFFCPU_LEAN");
	size_t at = 0;
	int n = 0;

	if (!env->off_cpu)
		return false;
	for (size_t i = 0; i < OFFCPU_NR_NEEDS; i++) {
		if (kf->has[offcpu_needs[i]])
			continue;
		if (at < len)
			at += (size_t)snprintf(msg + at, len - at, "%s%s", n++ ? ", " : "this kernel lacks ",
					       kfeat_describe(offcpu_needs[i]));
	}
	/* BPROF_OFFCPU_LEAN=1: the older kernels' programs anyway (tests on
	 * the development kernel, as BPROF_TAILWALK) */
	if (!n && !(force && !strcmp(force, "1")))
		return false;
	if (!n && len)
		at = (size_t)snprintf(msg, len, "BPROF_OFFCPU_LEAN=1");
	if (at < len)
		at += (size_t)snprintf(msg + at, len - at, ": %s records with the programs for older kernels", opt);
	/* their walks are the tail walk's: 4 frames a run, 33 tail calls
	 * (frame pointers: the kernel's walk, as the other variant's) */
	if (env->unwind != OPTS_UNWIND_FP && at < len)
		at += (size_t)snprintf(msg + at, len - at,
				       ": off-CPU user stacks stop at %d frames and hold no Python frames",
				       34 * UNWIND_TAIL_FRAMES);
	/* their start pass has no kfuncs to test a thread's cgroup */
	if (env->cgroup && at < len)
		snprintf(msg + at, len - at, "; --cgroup's threads blocked at the start count from their first switch-out");
	return true;
}

/* Whether obj is profile_lean.bpf.o: its tail-call slot is its own. */
static struct bpf_map *lean_self(const struct profile_bpf *obj)
{
	return bpf_object__find_map_by_name(obj->obj, "offcpu_lean_resume_self");
}

struct profile_bpf *offcpu_skel_open(bool lean)
{
	struct profile_bpf *obj;
	int err;

	if (!lean)
		return profile_bpf__open();
	/* profile_bpf__open() with the lean object's bytes: the same maps,
	 * programs and settings by name and layout (bpf/CMakeLists.txt checks
	 * it at build time), so the rest of the recorder uses it as the
	 * skeleton it knows */
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	err = profile_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)profile_lean_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		profile_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

int offcpu_chain(struct profile_bpf *obj, int resume_fd, int end_fd)
{
	struct bpf_map *self = lean_self(obj),
		       *end_self = bpf_object__find_map_by_name(obj->obj, "offcpu_lean_end_self");
	__u32 zero = 0;

	if (!self || !offcpu_enabled(obj))
		return 0;
	if (resume_fd < 0 || end_fd < 0 || !end_self)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(self), &zero, &resume_fd, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(end_self), &zero, &end_fd, BPF_ANY))
		return -errno;
	return 0;
}

/* Whether the running kernel has the kfuncs of --cgroup's start pass. */
static bool cgroup_kfuncs(void)
{
	static int has = -1;
	struct btf *vm;

	if (has < 0) {
		vm = btf__load_vmlinux_btf();
		has = vm && btf__find_by_name_kind(vm, "bpf_task_under_cgroup", BTF_KIND_FUNC) > 0 &&
		      btf__find_by_name_kind(vm, "bpf_cgroup_from_id", BTF_KIND_FUNC) > 0;
		btf__free(vm);
	}
	return has;
}

void offcpu_configure(struct profile_bpf *obj, const struct env *env, bool cfi, long counts)
{
	bool on = env->off_cpu != 0, lean = lean_self(obj) != NULL;

	/* A task storage map cannot be created before Linux 5.11: unless in
	 * use, a hash map of one entry that no loaded program names stands
	 * in for it (not autocreate: libbpf 1.1's loader program cannot
	 * skip a map); the lean variant's is a hash map already */
	if (!on || lean) {
		bpf_map__set_type(obj->maps.offcpu_tasks, BPF_MAP_TYPE_HASH);
		bpf_map__set_max_entries(obj->maps.offcpu_tasks, 1);
	}

	bpf_program__set_autoload(obj->progs.handle_offcpu_switch, on);
	bpf_program__set_autoload(obj->progs.handle_offcpu_resume, on);
	bpf_program__set_autoload(obj->progs.handle_offcpu_exit, on);
	/* --cgroup's start pass needs the kfuncs bpf_cgroup_from_id and
	 * bpf_task_under_cgroup (Linux 6.5); without them, the pass without
	 * --cgroup's test (which then seeds no thread) */
	bpf_program__set_autoload(obj->progs.handle_offcpu_start, on && !(env->cgroup && cgroup_kfuncs()));
	bpf_program__set_autoload(obj->progs.handle_offcpu_start_cg, on && env->cgroup && cgroup_kfuncs());
	bpf_program__set_autoload(obj->progs.handle_offcpu_end, on);
	if (!on) {
		bpf_map__set_max_entries(obj->maps.offcpu_counts, 1);
		bpf_map__set_max_entries(obj->maps.offcpu_counts_b, 1);
		return;
	}
	obj->rodata->offcpu_mode = env->off_cpu == 2 ? OFFCPU_MODE_WALL : OFFCPU_MODE_BLOCKED;
	/* -F HZ: 1/F s; -c N: N ns of cpu-clock */
	obj->rodata->offcpu_period_ns = env->period ? (uint64_t)env->period
						    : 1000000000ull / (uint64_t)env->freq;
	if (!obj->rodata->offcpu_period_ns)
		obj->rodata->offcpu_period_ns = 1;
	obj->rodata->offcpu_cfi = cfi;
	/* --cgroup: its id, for the start pass's kfunc (the cgroup v2 id is
	 * the directory's inode number); unknown: that pass leaves the
	 * cgroup's threads to their first switch-out */
	if (env->cgroup) {
		struct stat st;

		if (!stat(env->cgroup, &st))
			obj->rodata->offcpu_cgroup_id = (uint64_t)st.st_ino;
	}
	/* a blocked stack is a row per state, as an on-CPU one per kernel ip */
	bpf_map__set_max_entries(obj->maps.offcpu_counts, counts > 0 ? counts : 1);
	/* --rotate: the second set, as counts_b */
	bpf_map__set_max_entries(obj->maps.offcpu_counts_b, env->rotate && counts > 0 ? counts : 1);
	if (lean) {
		bpf_map__set_max_entries(obj->maps.offcpu_tasks, OFFCPU_LEAN_THREADS);
		/* kernel stacks and frame-pointer user stacks go to "ustacks"
		 * (PROFILE_KWALK_STACK_BASE), which frame pointers alone
		 * leave at one entry */
		if (bpf_map__max_entries(obj->maps.ustacks) < OFFCPU_LEAN_STACKS)
			bpf_map__set_max_entries(obj->maps.ustacks, OFFCPU_LEAN_STACKS);
		/* These programs run under the scheduler's locks: before 6.1
		 * (no own_stacks then) an element allocated there may wake
		 * kswapd and take a runqueue lock again, so the counts are
		 * preallocated, as everything else they update. */
		if (!obj->rodata->own_stacks)
			return;
	}
	bpf_map__set_map_flags(obj->maps.offcpu_counts,
			       bpf_map__map_flags(obj->maps.offcpu_counts) | BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(obj->maps.offcpu_counts_b,
			       bpf_map__map_flags(obj->maps.offcpu_counts_b) | BPF_F_NO_PREALLOC);
}

bool offcpu_enabled(const struct profile_bpf *obj)
{
	return obj->rodata->offcpu_mode != 0;
}

/* Run a task iterator to its end, over thread tid only when tid > 0; what
 * it writes goes to *out (grown with realloc, *len bytes) when out is not
 * NULL, else nowhere. */
static int run_iter(int prog_fd, int tid, char **out, size_t *len)
{
	union bpf_iter_link_info linfo;
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	size_t cap = out ? *len : 0;
	char buf[4096];
	int link, fd, err = 0;
	ssize_t n;

	if (prog_fd < 0)
		return -ENOENT;
	if (tid > 0) {
		memset(&linfo, 0, sizeof(linfo));
		linfo.task.tid = tid;
		opts.iter_info = &linfo;
		opts.iter_info_len = sizeof(linfo);
	}
	/* the passes' time is this CPU's scheduler clock (offcpu_clock() in
	 * bpf/offcpu/offcpu.bpf.c), updated by a pass through the scheduler:
	 * microseconds old, not up to a tick */
	sched_yield();
	link = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, tid > 0 ? &opts : NULL);
	if (link < 0)
		return -errno;
	fd = bpf_iter_create(link);
	if (fd < 0) {
		err = -errno;
		close(link);
		return err;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (!out)
			continue;
		if (*len + (size_t)n > cap) {
			char *p = realloc(*out, cap = (*len + (size_t)n) * 2);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			*out = p;
		}
		memcpy(*out + *len, buf, (size_t)n);
		*len += (size_t)n;
	}
	if (n < 0 && !err)
		err = -errno;
	close(fd);
	close(link);
	return err;
}

struct bpf_program *offcpu_start_prog(struct profile_bpf *obj)
{
	/* --cgroup's, where the kernel has its kfuncs (offcpu_configure) */
	return bpf_program__autoload(obj->progs.handle_offcpu_start) ? obj->progs.handle_offcpu_start
								    : obj->progs.handle_offcpu_start_cg;
}

struct bpf_program *offcpu_end_prog(struct profile_bpf *obj)
{
	return obj->progs.handle_offcpu_end;
}

struct bpf_program *offcpu_switch_prog(struct profile_bpf *obj)
{
	return obj->progs.handle_offcpu_switch;
}

uint64_t offcpu_unseen(const struct profile_bpf *obj, int nr_cpus)
{
	uint64_t sum[OFFCPU_STAT_MAX];

	if (!offcpu_enabled(obj))
		return 0;
	offcpu_stats(obj, sum, nr_cpus);
	return sum[OFFCPU_STAT_UNSEEN];
}

int offcpu_start(struct profile_bpf *obj, int start_fd)
{
	if (!offcpu_enabled(obj))
		return 0;
	return run_iter(start_fd, 0, NULL, NULL);
}

/* How much of a blocked thread's stack is copied, from its sp up: the
 * frames of a blocked call chain take a few KiB; the walk stops at
 * PROFILE_MAX_USTACK_DEPTH words anyway. */
#define OFFCPU_STACK_COPY (1u << 20)

/*
 * A copy of thread tid's stack from sp to the end of its mapping (at most
 * OFFCPU_STACK_COPY), at the same addresses in our memory, for the end
 * pass's walk (bpf/offcpu/offcpu.bpf.c: bpf_probe_read_user reads the memory of
 * the task running the iterator: us).  MAP_FIXED_NOREPLACE: where that
 * range is ours already (independent address layouts: rare), no copy and
 * the thread's block keeps no user stack.  The length mapped, 0: none.
 */
static size_t map_stack_copy(const struct offcpu_end_rec *r, void **at)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t start, end, lo, hi = 0;
	char path[64], line[512];
	struct iovec l, rv;
	FILE *f;
	void *m;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/maps", r->pid, r->tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 && start <= r->sp &&
		    r->sp < end) {
			hi = end;
			break;
		}
	fclose(f);
	lo = r->sp & ~(uint64_t)(page - 1);
	if (!hi || hi <= lo)
		return 0;
	if (hi - lo > OFFCPU_STACK_COPY)
		hi = lo + OFFCPU_STACK_COPY;
	m = mmap((void *)(uintptr_t)lo, hi - lo, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	if (m != (void *)(uintptr_t)lo) { /* a kernel before 4.17 took it as a hint */
		munmap(m, hi - lo);
		return 0;
	}
	l = (struct iovec){ m, hi - lo };
	rv = (struct iovec){ (void *)(uintptr_t)lo, hi - lo };
	if (process_vm_readv((pid_t)r->pid, &l, 1, &rv, 1, 0) <= 0) {
		munmap(m, hi - lo);
		return 0;
	}
	*at = m;
	return hi - lo;
}

int offcpu_end(struct profile_bpf *obj, int end_fd, void (*before_walk)(void *), void *ctx,
	       uint64_t *found, uint64_t *left, uint64_t *walked)
{
	int err;
	char *recs = NULL;
	size_t len = 0;

	*found = *left = *walked = 0;
	if (!offcpu_enabled(obj))
		return 0;
	obj->bss->offcpu_ended = true;
	/* A switch, resume or exit program that read the flag before it was
	 * set may still be running on another CPU, and would then race with
	 * the pass for the threads' state.  Each runs inside an RCU read-side
	 * critical section (the kernel's __bpf_trace_run()), so one RCU grace
	 * period is the end of all of them, and any that starts after it sees
	 * the flag: membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu()
	 * for user space (record/DESIGN.md, "Blocks that span the start or
	 * the end").  It refuses on nohz_full kernels: there, a wait of 10 ms,
	 * a thousand times what the programs run, is the fallback. */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
		usleep(10000);
	/* count every block under way; the sampled ones of threads with a
	 * user stack are named for the walk */
	obj->bss->offcpu_end_phase = OFFCPU_END_COLLECT;
	err = run_iter(end_fd, 0, &recs, &len);
	*found = obj->bss->offcpu_end_left;
	/* the images it announced get their mappings and unwind tables */
	if (before_walk && len)
		before_walk(ctx);
	/* each named thread's stack, copied to the same addresses here, then
	 * walked by the pass over that thread alone */
	obj->bss->offcpu_end_phase = OFFCPU_END_WALK;
	for (size_t i = 0; !err && i + sizeof(struct offcpu_end_rec) <= len;
	     i += sizeof(struct offcpu_end_rec)) {
		struct offcpu_end_rec r;
		void *at = NULL;
		size_t n;

		memcpy(&r, recs + i, sizeof(r));
		n = map_stack_copy(&r, &at);
		if (!n)
			continue; /* the final pass counts it without a user stack */
		/* the lean programs' pass visits every thread: this one walks */
		obj->bss->offcpu_end_tid = r.tid;
		if (!run_iter(end_fd, (int)r.tid, NULL, NULL))
			(*walked)++;
		munmap(at, n);
	}
	free(recs);
	if (err)
		return err;
	/* what is left, without user stacks; then a pass that must find none */
	obj->bss->offcpu_end_phase = OFFCPU_END_FINAL;
	err = run_iter(end_fd, 0, NULL, NULL);
	if (err)
		return err;
	obj->bss->offcpu_end_left = 0;
	err = run_iter(end_fd, 0, NULL, NULL);
	*left = obj->bss->offcpu_end_left;
	return err;
}

void offcpu_stats(const struct profile_bpf *obj, uint64_t *sum, int nr_cpus)
{
	int fd = bpf_map__fd(obj->maps.offcpu_stats);
	/* one element, OFFCPU_STAT_MAX counters per CPU */
	uint64_t *v = calloc((nr_cpus > 0 ? (size_t)nr_cpus : 1) * OFFCPU_STAT_MAX, sizeof(*v));
	uint32_t zero = 0;

	memset(sum, 0, OFFCPU_STAT_MAX * sizeof(*sum));
	if (!v)
		return;
	if (!bpf_map_lookup_elem(fd, &zero, v))
		for (int c = 0; c < nr_cpus; c++)
			for (int k = 0; k < OFFCPU_STAT_MAX; k++)
				sum[k] += v[(size_t)c * OFFCPU_STAT_MAX + k];
	free(v);
}

void offcpu_dump(const struct profile_bpf *obj, struct bprof_offcpu *out, int nr_cpus,
		 uint64_t *base)
{
	uint64_t sum[OFFCPU_STAT_MAX];

	memset(out, 0, sizeof(*out));
	if (!offcpu_enabled(obj))
		return;
	offcpu_stats(obj, sum, nr_cpus);
	dump_since(sum, base, OFFCPU_STAT_MAX);
	out->mode = obj->rodata->offcpu_mode == OFFCPU_MODE_WALL ? BPROF_OFFCPU_WALL
								 : BPROF_OFFCPU_BLOCKED;
	out->period_ns = obj->rodata->offcpu_period_ns;
	out->blocks = sum[OFFCPU_STAT_BLOCKS];
	out->blocks_short = sum[OFFCPU_STAT_BLOCKS_SHORT];
	out->blocked_ns = sum[OFFCPU_STAT_BLOCKED_NS];
	out->walks = sum[OFFCPU_STAT_WALKS];
	out->no_user_stack = sum[OFFCPU_STAT_NO_USER_WALK];
	out->lost = sum[OFFCPU_STAT_LOST];
	/* after the end pass: the samples of threads that exited during it,
	 * their sampled blocks still waiting (bpf/offcpu/offcpu.bpf.c,
	 * offcpu_pending); before it, blocks wait for microseconds */
	if (obj->bss->offcpu_ended)
		out->lost += obj->bss->offcpu_pending;
}
