// SPDX-License-Identifier: Apache-2.0
/*
 * profile.bpf.c - frequency-count stacks in the kernel on a timed event,
 * as bcc's profile does, and tell user space (rarely) which process images
 * it must snapshot so the recording can be symbolized elsewhere.
 *
 * Per sample: one hash lookup/update, two bpf_get_stackid() calls, one
 * lookup in the "seen" set.  The ring buffer never carries one event per
 * sample: one per process image (its first sample), one per exec of a
 * process already sampled, and, when a sampled image ends (exit, or exec
 * replacing it), its executable mappings, read from its mm by the kernel so
 * that short-lived processes are complete.  See record/DESIGN.md.
 *
 * This source is the sampling core and the native unwinder
 * (unwind_walk_regs); off-CPU time (offcpu/offcpu.bpf.c) and CPython
 * frames (python/python.bpf.c) are sources of their own, linked with this
 * one into a single object (bpf/CMakeLists.txt).  What they share is in
 * bprof.bpf.h: the maps and settings defined here that they use, the
 * walk's scratch, and the global functions each offers.
 */
#include "bprof.bpf.h"

/* Set by prof-record before load. */
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool include_idle = false;
const volatile bool filter_pid = false;     /* keep tgids in "pids" only */
const volatile bool filter_tid = false;     /* keep tids in "tids" only */
const volatile bool filter_cgroup = false;  /* keep tasks under cgroup_map[0] */
const volatile bool per_thread = false;     /* put the tid in the key */
const volatile bool follow_children = false; /* add forks of "pids" to "pids" */
/* --unwind=cfi: stop where there is no table instead of following the
 * frame pointer (auto) */
const volatile bool fp_fallback = true;
/* ids of "stacks2" are reported offset by this: a power of two at least the
 * bucket count of "stacks", so the two id ranges never meet */
const volatile __s32 stacks2_base = 16384;
/* Every stack goes to "ustacks" under an id of its own (below), none to the
 * kernel's stack maps, which prof-record then makes one entry each: the
 * stack maps are always preallocated (16 MiB at the default size, most of
 * the maps' creation cost), "ustacks" grows as stacks come (Linux 6.1+,
 * where perf_event programs may use such a map). */
const volatile bool own_stacks = false;

/* "tracked" and "exec_gen" are plain hash maps that grow, and a process's
 * entries go when it exits (handle_exit_sets), instead of LRU maps that
 * are preallocated whole (~7 MiB, half the maps' creation cost).  Set with
 * own_stacks (Linux 6.1+); a full set then counts a dropped notification
 * where an LRU set evicted the oldest process silently. */
const volatile bool forget_exited = false;

/*
 * --rotate: which of the two sets of per-interval maps (counts, stacks,
 * stacks2, ustacks and their "_b" twins) samples go to.  User space flips
 * it at an interval boundary, waits until no sample can still be running
 * with the old value, then reads and empties the old set: no sample is lost
 * or counted twice at a boundary.  Read once per sample.  Without --rotate
 * it stays 0 and the "_b" maps have one entry each.
 */
volatile __u32 rotate_gen = 0;
const volatile bool rotating = false;

/*
 * --slice: every count carries the time slice it fell in, so the counting
 * stays in the kernel and a file still keeps when each stack ran.  A slice
 * index in the key (rather than a swap of the two sets every slice) keeps
 * user space out of the sampling path: the maps are read as before, once
 * per file; the price is a row per (stack, slice) instead of per stack
 * (record/DESIGN.md, "Time slices").  slice_base_ns is CLOCK_MONOTONIC at
 * slice 0, set by user space before sampling starts.
 */
const volatile __u64 slice_ns = 0;
volatile __u64 slice_base_ns = 0;

/*
 * --rotate: how user space knows that no sample still uses the old set.
 * A sample makes its CPU's sequence odd before it reads rotate_gen and even
 * again when it is done (locked adds: full barriers, so the read cannot
 * pass the first).  After flipping rotate_gen, user space waits until each
 * CPU that was odd has moved on; a sample that starts later reads the new
 * value.  A fixed sleep would not do: a VM's virtual CPU can be held off
 * its host CPU for longer than any sleep one would pick.  One 64-byte line
 * per CPU, so CPUs never share a line.
 */
__u64 rotate_seq[PROFILE_MAX_CPUS * PROFILE_ROTATE_SEQ_STRIDE];

/* max_entries of counts, stacks, seen, tracked, exec_gen are set by
 * prof-record before load (bpf_map__set_max_entries). */
struct bprof_counts_map counts SEC(".maps"), counts_b SEC(".maps");
struct bprof_stacks_map stacks SEC(".maps"), stacks_b SEC(".maps");

/*
 * Second chance for collision victims.  Without BPF_F_REUSE_STACKID (which
 * makes old ids name new stacks) a stack whose bucket in "stacks" is held by
 * another gets -EEXIST on every sample, and the birthday bound makes that
 * common long before the map is full: ~3% of stacks at the default size,
 * and a hot victim loses all its samples.  Only victims reach this map, so
 * it is sparse and a second collision is rare.  Sized by prof-record.
 */
struct bprof_stacks2_map stacks2 SEC(".maps"), stacks2_b SEC(".maps");

/* The maps below of a struct bprof_*_map type are shared with the other
 * tracers (declared extern in bprof.bpf.h, which holds their definition's
 * body, so that the two cannot differ). */
struct bprof_losses_map losses SEC(".maps");
struct bprof_id_set_map pids SEC(".maps"), tids SEC(".maps");
struct bprof_cgroup_map cgroup_map SEC(".maps");

/* Process images already announced to user space. */
struct bprof_seen_map seen SEC(".maps");

/* tgids sampled at least once, and their descendants forked since: their
 * execs are announced so user space snapshots the new image at once. */
struct bprof_tracked_map tracked SEC(".maps");

/* tgid -> self_exec_id after its latest exec during the recording: lets user
 * space tell which image a /proc/PID/maps read belongs to. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 40960);
} exec_gen SEC(".maps");

/* tgid -> its image's mapping generation (profile.h): bumped by
 * handle_map_exec, read by every sample, deleted at exit.  Sized by
 * prof-record (as exec_gen). */
struct bprof_map_gens_map map_gens SEC(".maps");

/* Set by prof-record when handle_map_exec is attached: without it every
 * sample is of generation 0, as before. */
const volatile bool track_gens = false;
/* Kernels without bpf_loop (5.10-5.16) read the mm's VMA tree directly
 * (below, "the lean mm lock hook"): gens_lean says where (profile.h).
 * Each change is then read where it is made: samples read none. */
const volatile __u32 gens_lean = 0;
/* Tests only (BPROF_TEST_DROP_MAP_EVENTS=N): every Nth mapping event is
 * dropped as if the ring buffer were full, so that gaps can be tested. */
const volatile __u32 test_drop_map_events = 0;
/* Set once a generation could not be kept (map_gens full): from then on an
 * image without an entry may have changed unseen, and its samples say
 * PROFILE_GEN_UNKNOWN rather than 0. */
volatile __u32 map_gens_lost = 0;

/* to user space: image and mapping events, Python code objects (its
 * size and why: bprof.bpf.h) */
struct bprof_events_map events SEC(".maps");

/* ---- the user-stack unwinder (--unwind=auto|cfi); layout in unwind.h ---- */

/* (tgid, self_exec_id) -> executable mappings.  Written by prof-record
 * only; BPF never allocates, so no preallocation. */
struct bprof_unwind_procs_map unwind_procs SEC(".maps");

/* obj_id -> enum unwind_obj_state and its flags (unwind.h): a u64, for
 * the 64-bit atomic or that any BPF target has (32-bit atomics need
 * -mcpu=v3); an array spends 8 bytes an entry either way */
struct bprof_unwind_objs_map unwind_objs SEC(".maps");

/* Grows as tables are loaded (no preallocation); max_entries sized from
 * the budget by prof-record. */
struct bprof_unwind_pages_map unwind_pages SEC(".maps");

/* The rows of every loaded object, written by prof-record through mmap,
 * in chunks, in inner maps that prof-record creates as rows are loaded
 * (see unwind.h); max_entries of the outer array is the budget's count of
 * inner maps, set by prof-record. */
struct bprof_unwind_rows_map unwind_rows SEC(".maps");
struct bprof_unwind_rules_map unwind_rules SEC(".maps");

struct bprof_unwind_stats_map unwind_stats SEC(".maps");

/* Walked user stacks by id (PROFILE_CFI_STACK_BASE | 30 hash bits). */
struct bprof_ustacks_map ustacks SEC(".maps"), ustacks_b SEC(".maps");

/* A global function, verified once and not at each of the walk's many
 * counting sites (a tenth of the sampler's verification when inlined). */
/* The Python walk's statistics (python/python.bpf.c counts them here). */
struct bprof_py_stats_map py_stats SEC(".maps");
/* tgid -> the interpreter of its image (bprof.bpf.h) */
struct bprof_py_procs_map py_procs SEC(".maps");

/* The HotSpot walk's statistics (jvm_walk.h). */
struct bprof_jvm_stats_map jvm_stats SEC(".maps");

/* A walk set some object's WANTED flag: the sample tells user space. */
__u32 unwind_want_wake = 0;

#define UNW_SEARCH_FN __attribute__((noinline))
#ifdef BPROF_STAGE_TIMING
/* A measurement build's per-stage time of the walk (unwind.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_timing);
	__uint(max_entries, 1);
} unwind_timing SEC(".maps");

/* stage < 0: the walk ends (the time since the last mark is the last
 * stage's; nothing runs until the next walk's first mark) */
static __always_inline void unwind_mark(int stage)
{
	__u32 zero = 0;
	struct unwind_timing *t = bpf_map_lookup_elem(&unwind_timing, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!t)
		return;
	if (t->last && t->stage < UNWIND_STAGE_MAX)
		t->ns[t->stage] += now - t->last;
	if (stage < 0 || stage >= UNWIND_STAGE_MAX) {
		t->last = 0;
		return;
	}
	t->last = now;
	t->stage = stage;
	t->n[stage]++;
	if (stage == UNWIND_STAGE_LOOP)
		t->frames++;
}
#define UNW_MARK(env, stage) unwind_mark(stage)
#else
#define unwind_mark(stage) do { } while (0)
#endif
#include "unwind/unwind_walk.h"

/* prof-record --no-v8 (or no V8 met): off */
const volatile bool v8_enabled = false;
#define V8_WALK_STEP
#include "v8/v8_walk.h"

#include "jvm/jvm_walk.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
	__uint(max_entries, 1);
} unwind_scratch_map SEC(".maps");

/* The runtimes' flags are in the scratch (s->walk_rt, WALK_RT_*), not
 * here: on Linux 6.1 the walk's call chain may hold 512 bytes of BPF
 * stack in all, and this is on it. */
struct walk_ctx {
	struct unwind_scratch *s;
	const struct unwind_proc *proc;
};

static long walk_frame(__u32 i, void *data)
{
	struct walk_ctx *w = data;
	struct unwind_scratch *s = w->s;
	__u32 n = s->stack.nr;

	unwind_mark(UNWIND_STAGE_LOOP);
	/* each runtime's test first on its setting: read-only data, so that
	 * the verifier drops the code of a runtime the recording does not
	 * walk (--no-python, --no-jvm, --no-v8) instead of checking it */
	if (python_enabled && n < PROFILE_MAX_USTACK_DEPTH && (s->walk_rt & WALK_RT_PYTHON) &&
	    python_wants_frame(s, n) && python_frame(s, n))
		return 0;
	if (jvm_enabled && n < PROFILE_MAX_USTACK_DEPTH && (s->walk_rt & WALK_RT_JVM)) {
		int r = jvm_frame(s, w->proc, n);

		if (r >= 0)
			return r;
	}
	s->v8.w[0] = 0;
	s->v8.w[1] = 0;
	if (v8_enabled && (s->walk_rt & WALK_RT_V8) && v8_wants_frame(s, n))
		v8_frame(s, n, &s->v8.w[0], &s->v8.w[1]);
	return unwind_walk_frame_as(s, w->proc, s->v8.w[0], s->v8.w[1]);
}

/* stack_scan()'s loop, SAME_STACK_STEP words a step: a call of the
 * callback costs more than a word's work (a 45-frame stack took 0.3 us
 * more a sample one word a step).  b set: compare a with b; b NULL: hash
 * a (FNV-1a over its words). */
#define SAME_STACK_STEP 4
struct stack_scan_loop {
	const struct profile_ustack *a, *b;
	__u64 h;
	__u32 nr;
	int same;
};

static long stack_scan_step(__u32 i, void *data)
{
	struct stack_scan_loop *x = data;

	for (__u32 j = 0; j < SAME_STACK_STEP; j++) {
		__u64 k = (__u64)i * SAME_STACK_STEP + j;

		/* a 64-bit bound on the index, whatever width clang
		 * compares in */
		barrier_var(k);
		if (k >= x->nr || k >= PROFILE_MAX_USTACK_DEPTH)
			return 1;
		if (!x->b) {
			x->h = (x->h ^ x->a->ips[k]) * 0x100000001b3ULL;
		} else if (x->a->ips[k] != x->b->ips[k]) {
			x->same = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * Two stacks' comparison, and one stack's hash: with b, whether a and b
 * are the same (their flags aside); without, the FNV-1a hash of a's
 * addresses (not yet mixed: stack_hash_mix()).  A global function,
 * verified once per program and not at each of its inlined call sites,
 * and its loop a bpf_loop callback: as a loop of 127 steps the verifier
 * walked it step by step (2,731 instructions for the comparison in every
 * program that stores a stack, ~2,000 for the hash of an own stack).
 * One function for both: the object's functions are counted
 * (record/DESIGN.md, "The object's size limit").  Its arguments may be
 * NULL as far as the verifier knows.  Only programs of kernels with
 * bpf_loop have it (tailwalk and the lean off-CPU programs compare with
 * same_stack_inline()).
 */
__attribute__((noinline)) __u64 stack_scan(const struct profile_ustack *a,
					   const struct profile_ustack *b)
{
	struct stack_scan_loop x = { .a = a, .b = b, .h = 0xcbf29ce484222325ULL, .same = 1 };

	if (!a || a->nr > PROFILE_MAX_USTACK_DEPTH)
		return 0;
	if (b && a->nr != b->nr)
		return 0;
	x.nr = a->nr;
	bpf_loop((x.nr + SAME_STACK_STEP - 1) / SAME_STACK_STEP, stack_scan_step, &x, 0);
	return b ? x.same : x.h;
}

/*
 * own_stacks: the kernel's frame-pointer walk (bpf_get_stack, kernel or
 * user stack) stored like a walked stack, under an id below
 * PROFILE_CFI_STACK_BASE: ids there are the kernel's walks, whatever map
 * held them (SPEC 6.3).  Hashed over every address and compared in full
 * before an id is reused, as walked stacks are.  Runs after the user walk
 * has stored its stack, so it may use the same scratch buffer.  A global
 * function: verified once, not at each of its three callers.
 */
__attribute__((noinline)) long get_own_stack(struct bpf_perf_event_data *ctx, __u64 flags, __u32 gen)
{
	struct profile_ustack *st;
	struct unwind_scratch *s;
	__u32 zero = 0;
	long n;

	s = bpf_map_lookup_elem(&unwind_scratch_map, &zero);
	if (!s)
		return -ENOMEM;
	st = &s->stack;
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	if (n <= 0)
		return n ? n : -EFAULT;
	st->nr = (__u32)n / sizeof(st->ips[0]);
	st->flags = 0;
	return store_own_stack(st, gen);
}

static __always_inline long get_stack(struct bpf_perf_event_data *ctx, __u64 flags, __u32 gen)
{
	return own_stacks ? get_own_stack(ctx, flags, gen) : get_stackid(ctx, flags, gen);
}

/* Image -> when user space was last asked to re-read its mappings. */
struct bprof_remap_asked_map remap_asked SEC(".maps");



/* Walk the user stack of the interrupted task with the tables; proc is
 * its image's mapping table (NULL: none yet, frame pointers only). */
static __always_inline long walk_user_stack(struct bpf_perf_event_data *ctx,
					    struct task_struct *task, struct profile_seen_key *sk,
					    const struct unwind_proc *proc, __u32 gen,
					    __u64 changed_lo, __u64 changed_hi)
{
	struct unwind_scratch *s;
	const void *regs;
	__u32 zero = 0;

	if (!BPF_CORE_READ(task, mm))
		return -EFAULT; /* a kernel thread: no user stack */
	s = bpf_map_lookup_elem(&unwind_scratch_map, &zero);
	if (!s)
		return -ENOMEM;
	/* In user mode the sampled registers are the user's (read from the
	 * context with 8-byte loads, the only ones it allows); in the kernel
	 * they are at the top of the task's kernel stack. */
	if ((long)ctx_regs(ctx)->ip >= 0) {
		user_regs_from_ctx(&s->pt, ctx);
	} else {
		regs = (const void *)bpf_task_pt_regs(bpf_get_current_task_btf());
		if (!regs || bpf_probe_read_kernel(&s->pt, sizeof(s->pt), regs))
			return -EFAULT;
	}
	/* taken (and cleared) by unwind_walk_start */
	s->changed_lo = changed_lo;
	s->changed_hi = changed_hi;
	return walk_user_regs(s, task, sk, proc, gen);
}

/*
 * The walk from the user registers in s->pt (bprof.bpf.h): the sampler's,
 * and the off-CPU programs' (offcpu/offcpu.bpf.c), whose registers come
 * from the task's saved entry registers and whose scratch is their own.
 * Global: the verifier checks it once per program that calls it, apart
 * from the caller's states, and the off-CPU source calls it without
 * compiling it in.  Callers go through walk_user_regs() (bprof.bpf.h),
 * which does what needs the task (asking for a re-read of the mappings).
 */
__attribute__((noinline)) long unwind_walk_regs(struct unwind_scratch *s, __u32 pid, __u32 exec_id,
						const struct unwind_proc *proc, __u32 flags)
{
	struct walk_ctx w = {};
	bool cur, cur_proc;

	if (!s)
		return -ENOMEM;
	unwind_walk_start(s);
	if (!s->r.regs[UNWIND_REG_RA] || (long)s->r.regs[UNWIND_REG_RA] < 0)
		return -EFAULT;

	w.s = s;
	w.proc = proc;
	s->walk_rt = 0;
	/* (cur and cur_proc: fewer values live across the calls below, none
	 * spilled to the BPF stack, of which 6.1 gives the walk's call chain
	 * 512 bytes in all) */
	cur = flags & UNWIND_WALK_CURRENT;
	cur_proc = cur && proc;
	/* HotSpot frames: read from the walked task's memory, so current
	 * only */
	if (cur && jvm_walk_begin(s, pid, exec_id))
		s->walk_rt |= WALK_RT_JVM;
	/* Interpreter frames (python/python.bpf.c) where the process has a
	 * table (the interpreter was found in it) and the walked thread is
	 * current (walk_user_regs() says) */
	if (cur_proc && python_walk_begin(s, pid, exec_id))
		s->walk_rt |= WALK_RT_PYTHON;
	/* JavaScript frames (v8_walk.h): one lookup per walk; none of it
	 * without V8 met */
	if (cur_proc && v8_walk_begin(s, pid, exec_id))
		s->walk_rt |= WALK_RT_V8;
	unwind_count(UNWIND_STAT_SAMPLES);
	if (!w.proc)
		unwind_count(UNWIND_STAT_SAMPLES_FP_ONLY);
	bpf_loop(PROFILE_MAX_USTACK_DEPTH, walk_frame, &w, 0);
	unwind_mark(-1);
	if ((s->events & UNWIND_EV_NO_ROOM) && unwind_want_wake) {
		/* once per object that becomes wanted (two CPUs may both
		 * send it: harmless) */
		__u32 *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

		unwind_want_wake = 0;
		if (e) {
			*e = UNWIND_EVENT_WANTED;
			bpf_ringbuf_submit(e, 0);
		}
	}
	/* the caller asks for the mappings again (walk_user_regs()) */
	return unwind_walk_end(s);
}

/* What gens_read asks of gen_read_vma (a callback under the mm's read
 * lock): the change (tgid, gen) at addr, or maybe[slot] when gen is 0. */
struct gen_read_ctx {
	__u32 tgid, exec_id, gen, slot;
	__u64 addr;
	bool read; /* the callback ran */
};
static long gen_read_vma(struct task_struct *task, struct vm_area_struct *vma, void *data);

/*
 * Read one change's mapping (c), under the mm's read lock: bpf_find_vma
 * on current's mm with gen_read_vma; its error (-ENOENT: unmapped since,
 * -EBUSY: the mm was locked).  A global function, verified once: called
 * from gens_read_one (a bpf_loop callback the verifier checks until its
 * states converge) and for each maybe slot, the callback was checked 16
 * times in each program that reads generations, 2,646 instructions of
 * the sampler's and 2,646 of handle_gen_start's 3,315.  bpf_find_vma
 * wants its callback's data on the BPF stack: a copy of c.
 */
__attribute__((noinline)) long gen_read_at(struct gen_read_ctx *c)
{
	struct gen_read_ctx l;
	long err;

	if (!c)
		return -ENOENT;
	l = *c;
	l.read = false;
	err = bpf_find_vma(bpf_get_current_task_btf(), l.addr, gen_read_vma, &l, 0);
	c->read = l.read;
	return err;
}

/* map_pend: (tgid, gen) -> the range of a change the mm lock hook began
 * that generation with, until a sample reads it.  LRU: an entry of a
 * process that exited unread goes in time (a gap, of a gone process). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct profile_pend_key);
	__type(value, struct profile_gen_pend);
	__uint(max_entries, 8192);
} map_pend SEC(".maps");

/* Changes the mm lock hook left unread (handle_gen_lock): read each one's
 * mapping now, at the process's first sample since (the first moment a
 * frame can be in it), and send it with the generation the change began.
 * Only after a change, at most PROFILE_GEN_WINDOW lookups a sample.  A
 * lookup that finds the mm busy (its lock taken) stops here, to be tried
 * at the next sample; a change found unmapped since, or overlapped by a
 * later one, stays unsent: a gap (SPEC.md 6.12), whose frames are not
 * named, never named wrongly. */
/* gens_read's state across its bpf_loop steps. */
struct gens_read_loop {
	struct gen_read_ctx c;
	struct profile_map_gen *g;
	__u32 gen, read;
	bool busy; /* a lookup found the mm locked */
};

/* One change of the window: read its mapping, forget its range.  A
 * bpf_loop callback, not an unrolled loop: the verifier checks it and
 * gen_read_vma once, where the 32 unrolled steps cost 40,000 verified
 * instructions in each program that reads generations (the sampler and
 * handle_gen_start), most of every recording's start-up. */
static long gens_read_one(__u32 k, void *data)
{
	struct gens_read_loop *l = data;
	struct profile_pend_key pk = { .tgid = l->c.tgid };
	struct profile_gen_pend *p;
	struct profile_map_gen *g = l->g;
	long err;

	if (l->read == l->gen)
		return 1;
	pk.gen = l->read + 1;
	p = bpf_map_lookup_elem(&map_pend, &pk);
	if (p && !(p->flags & PROFILE_PEND_DEAD) && p->exec_id == l->c.exec_id) {
		l->c.gen = pk.gen;
		l->c.addr = p->start;
		err = gen_read_at(&l->c);
		if (err && err != -ENOENT) {
			l->busy = true; /* the next sample tries again */
			return 1;
		}
	}
	if (p)
		bpf_map_delete_elem(&map_pend, &pk);
	l->read++;
	/* not below another reader's (two CPUs may read at once) */
	if ((__s32)(l->read - g->read) > 0)
		g->read = l->read;
	return 0;
}

static __always_inline void gens_read(__u32 tgid, __u32 exec_id)
{
	struct profile_map_gen *g = bpf_map_lookup_elem(&map_gens, &tgid);
	struct gens_read_loop l = { .c = { .tgid = tgid, .exec_id = exec_id } };
	long err;

	if (!g || g->exec_id != exec_id || (g->read == g->gen && !g->nr_maybe))
		return;
	l.g = g;
	l.gen = g->gen;
	l.read = g->read;
	if (l.gen - l.read > PROFILE_GEN_WINDOW)
		l.read = l.gen - PROFILE_GEN_WINDOW; /* older ones are gone */
	bpf_loop(PROFILE_GEN_WINDOW, gens_read_one, &l, 0);
	if (l.busy)
		return;
	for (__u32 slot = 0; slot < 2; slot++) {
		if (slot >= g->nr_maybe || g->maybe[slot].flags & (PROFILE_PEND_DONE | PROFILE_PEND_DEAD))
			continue;
		l.c.gen = 0;
		l.c.slot = slot;
		l.c.addr = g->maybe[slot].start;
		err = gen_read_at(&l.c);
		if (err == -ENOENT && g->maybe[slot].start == l.c.addr)
			g->maybe[slot].flags |= PROFILE_PEND_DONE;
	}
}

/* Whether a sample of image (tgid, exec_id) in generation map_gen may use
 * its table of the older generation table_gen ("older tables"), and the
 * range changed since, [*lo, *hi), to step through by frame pointer. */
static __always_inline bool older_table(__u32 tgid, __u32 exec_id, __u32 table_gen, __u32 map_gen,
					__u64 *lo, __u64 *hi)
{
	struct profile_map_gen *g;
	__u32 seq, a_gen;

	if (map_gen == PROFILE_GEN_UNKNOWN || (__s32)(map_gen - table_gen) <= 0)
		return false;
	g = bpf_map_lookup_elem(&map_gens, &tgid);
	if (!g)
		return false;
	seq = *(volatile __u32 *)&g->hull_seq;
	barrier();
	a_gen = *(volatile __u32 *)&g->hull_a_gen;
	*lo = *(volatile __u64 *)&g->hull_a_lo;
	*hi = *(volatile __u64 *)&g->hull_a_hi;
	barrier();
	if ((seq & 1) || *(volatile __u32 *)&g->hull_seq != seq || g->exec_id != exec_id ||
	    *(volatile __u32 *)&g->hull_off || (__s32)(table_gen - a_gen) < 0) {
		*lo = *hi = 0;
		return false;
	}
	unwind_count(UNWIND_STAT_SAMPLES_OLDER_TABLE);
	return true;
}

/* One sample.  cfi: walk the user stack with the unwind tables instead of
 * asking the kernel to follow frame pointers.  (The sampler of kernels
 * without bpf_loop is tailwalk/tailwalk.bpf.c's.) */
/* The sample's key, per CPU (a perf_event program does not nest on a
 * CPU): 56 bytes off the sampler's BPF stack, which on Linux 6.1 shares
 * 512 bytes with the walk's call chain below it (the unwinder with the
 * runtimes' frames would not load there: "combined stack size"). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct profile_key);
	__uint(max_entries, 1);
} sample_keys SEC(".maps");

static __always_inline int sample(struct bpf_perf_event_data *ctx, bool cfi)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct task_struct *task;
	struct profile_key *kp;
	/* a constant 0 without --rotate: the verifier then skips the
	 * second set's code altogether */
	__u32 gen = rotating ? rotate_gen & 1 : 0;
	long err;

	if (!include_idle && tid == 0)
		return 0;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	if (filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	if (filter_cgroup && !bpf_current_task_under_cgroup(&cgroup_map, 0))
		return 0;
	kp = bpf_map_lookup_elem(&sample_keys, &zero);
	if (!kp)
		return 0;
	__builtin_memset(kp, 0, sizeof(*kp));
#define key (*kp)

	task = (struct task_struct *)bpf_get_current_task();
	key.pid = tgid;
	key.tid = per_thread ? tid : 0;
	key.exec_id = BPF_CORE_READ(task, self_exec_id);
	if (track_gens && !gens_lean)
		gens_read(tgid, key.exec_id);
	key.map_gen = sample_gen(tgid, key.exec_id);
	key.slice = slice_now();
	bpf_get_current_comm(&key.comm, sizeof(key.comm));

	if (user_stacks && in_execve(task)) {
		/* Inside execve the user registers are still the old image's
		 * while mm and self_exec_id may already be the new one's: no
		 * snapshot can symbolize that stack, so record none. */
		key.user_stack_id = -EFAULT;
	} else if (user_stacks && cfi) {
		struct profile_seen_key wk = { .pid = tgid, .exec_id = key.exec_id };
		/* one lookup for the test below and the walk */
		const struct unwind_proc *proc = bpf_map_lookup_elem(&unwind_procs, &wk);

		/* A table read in another generation may put an object where
		 * another one is now: used only with the range changed since
		 * excluded ("older tables"), or not until user space rewrites
		 * it (the event that began this generation asked it to). */
		__u64 clo = 0, chi = 0;

		if (proc && proc->gen != key.map_gen &&
		    !older_table(tgid, key.exec_id, proc->gen, key.map_gen, &clo, &chi))
			proc = NULL;
		if (fp_fallback && !proc) {
			/* No mapping table for this image yet (its first
			 * milliseconds): without it every step would follow
			 * the frame pointer, so let the kernel do that walk.
			 * Its stacks are the ones prof-report checks frame by
			 * frame against each object's CFI (a walk through a
			 * function that uses rbp as a general register ends
			 * there instead of naming made-up callers); a table
			 * walk's are not checked, they are the CFI. */
			if (BPF_CORE_READ(task, mm)) {
				unwind_count(UNWIND_STAT_SAMPLES);
				unwind_count(UNWIND_STAT_SAMPLES_FP_ONLY);
			}
			err = get_stack(ctx, BPF_F_USER_STACK, gen);
		} else {
			err = walk_user_stack(ctx, task, &wk, proc, gen, clo, chi);
		}
		key.user_stack_id = err;
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
	} else if (user_stacks) {
		err = get_stack(ctx, BPF_F_USER_STACK, gen);
		key.user_stack_id = err;
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
	} else {
		key.user_stack_id = PROFILE_STACK_NONE;
	}
	if (!kernel_stacks)
		key.kernel_stack_id = PROFILE_STACK_NONE;
	else if (!sample_in_kernel(ctx))
		key.kernel_stack_id = -EFAULT;
	else
		key_kernel_stack(&key, ctx, get_stack(ctx, 0, gen));

	if (gen)
		add_count(&counts_b, &key);
	else
		add_count(&counts, &key);

	announce_image(task, tgid, key.exec_id);
	return 0;
#undef key
}

/* sample() between the two steps of this CPU's rotate_seq (--rotate). */
static __always_inline int sample_seq(struct bpf_perf_event_data *ctx, bool cfi)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (!rotating)
		return sample(ctx, cfi);
	rotate_seq_step(cpu);
	sample(ctx, cfi);
	rotate_seq_step(cpu);
	return 0;
}

SEC("perf_event")
int do_perf_event(struct bpf_perf_event_data *ctx)
{
	return sample_seq(ctx, false);
}

/*
 * Runtimes walked when first met (record/DESIGN.md, "Start-up"): a
 * recording that may meet Python, V8 or HotSpot but has met none yet
 * (the whole system, say) loads this sampler without their walks, which
 * are most of its verification, with rt_lazy set.  When prof-record
 * first registers a process of one of them it loads the sampler again
 * with them, from a second instance of this object that shares every
 * map, and puts it in sampler_rt: from then on each sample goes there.
 * Until then the tail call finds the slot empty and falls through, and
 * the walks would have had nothing to do: they act only on processes
 * registered in py_procs, v8_procs or jvm_procs.
 */
const volatile bool rt_lazy = false;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sampler_rt SEC(".maps");

/* --unwind=auto|cfi: needs bpf_loop (Linux 5.17) and bpf_task_pt_regs
 * (5.15). */
SEC("perf_event")
int do_perf_event_cfi(struct bpf_perf_event_data *ctx)
{
	if (rt_lazy)
		bpf_tail_call(ctx, &sampler_rt, 0);
	return sample_seq(ctx, true);
}

/*
 * fork, exec and the sets' exit hook are raw tracepoints, not tp_btf: a
 * tp_btf program's attach point is a kernel type found by name, a linear
 * search of the kernel's ~126,000 types done twice per program (by the
 * loader program, then by the verifier), ~0.3 ms each, a tenth of
 * prof-record's start-up for the three.  They read the task with
 * BPF_CORE_READ instead, on events far rarer than samples.  The exit and
 * prepare_exec hooks stay tp_btf: the task_vma iterator wants the trusted
 * task only tp_btf gives.
 */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 t = 1;

	if (ptgid == ctgid)
		return 0; /* a new thread */
	if (follow_children && bpf_map_lookup_elem(&pids, &ptgid) &&
	    bpf_map_update_elem(&pids, &ctgid, &t, BPF_ANY))
		count_loss(PROFILE_LOSS_OTHER); /* a descendant that cannot be followed */
	if (bpf_map_lookup_elem(&tracked, &ptgid) &&
	    bpf_map_update_elem(&tracked, &ctgid, &t, BPF_ANY))
		count_loss(PROFILE_LOSS_EVENTS); /* tracked set full: its exec goes unannounced */
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), exec_id = BPF_CORE_READ(p, self_exec_id);

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	if (bpf_map_update_elem(&exec_gen, &tgid, &exec_id, BPF_ANY))
		count_loss(PROFILE_LOSS_EVENTS); /* exec_gen full */
	notify(PROFILE_EV_EXEC, p, tgid, exec_id);
	return 0;
}

/* A sampled process mapped a file executable (the dynamic loader bringing
 * in libc after exec, dlopen): user space re-reads its maps at once instead
 * of at the next periodic rescan, so short-lived processes keep their
 * libraries.  Optional: prof-record disables it where vm_mmap_pgoff cannot
 * be traced. */
SEC("fexit/vm_mmap_pgoff")
int BPF_PROG(handle_mmap, struct file *file, unsigned long addr, unsigned long len,
	     unsigned long prot, unsigned long flag, unsigned long pgoff, unsigned long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;

	if (!file || !(prot & 0x4 /* PROT_EXEC */) || ret >= (unsigned long)-4095)
		return 0;
	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	notify(PROFILE_EV_MMAP, task, tgid, BPF_CORE_READ(task, self_exec_id));
	return 0;
}

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

#define VM_READ 0x1
#define VM_WRITE 0x2
#define VM_EXEC 0x4

/* The last thread of its process is exiting.  Read from signal->live
 * (already decremented at the tracepoint) rather than the tracepoint's
 * group_dead argument, which older kernels lack. */
static __always_inline bool group_dead(struct task_struct *p)
{
	return BPF_CORE_READ(p, signal, live.counter) == 0;
}

/* Send every executable file mapping of task's mm (the image sk) to user
 * space: a snapshot that cannot come too late. */
static __always_inline void emit_vmas(struct task_struct *task, struct profile_seen_key *sk)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct profile_vma_event *e;
		unsigned long vmf = BPF_CORE_READ(vma, vm_flags);
		struct file *file = BPF_CORE_READ(vma, vm_file);
		struct inode *inode;

		if (!(vmf & VM_EXEC) || !file)
			continue;
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e) {
			count_loss(PROFILE_LOSS_EVENTS);
			break;
		}
		inode = BPF_CORE_READ(file, f_inode);
		e->type = PROFILE_EV_VMA;
		e->pid = sk->pid;
		e->exec_id = sk->exec_id;
		e->flags = vmf & (VM_READ | VM_WRITE);
		e->start = BPF_CORE_READ(vma, vm_start);
		e->end = BPF_CORE_READ(vma, vm_end);
		e->offset = BPF_CORE_READ(vma, vm_pgoff) << 12;
		e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		e->ino = BPF_CORE_READ(inode, i_ino);
		e->mtime_ns = inode_mtime_ns(inode);
		bpf_probe_read_kernel_str(e->name, sizeof(e->name),
					  BPF_CORE_READ(file, f_path.dentry, d_name.name));
		bpf_ringbuf_submit(e, 0);
	}
	bpf_iter_task_vma_destroy(&it);
	/* the image is gone: free its slot (a reused pid is a new image) */
	bpf_map_delete_elem(&seen, sk);
}

static __always_inline void exit_sets(__u32 tgid);

#define PF_EXITING 0x00000004

/*
 * The mappings of a sampled image that is going away, sent while they are
 * still there: a snapshot that cannot come too late for processes too
 * short-lived for user space to read /proc/PID/maps (libc mapped after the
 * first sample, say).  One raw tracepoint program, attached by name to two
 * tracepoints, both of which run in the task concerned:
 *
 * - sched_process_exit, when the last thread of the image exits (where the
 *   tracepoint runs before exit_mm(), recent kernels, 6.18 here, its mm is
 *   still attached; on older kernels the walk finds no mm and sends
 *   nothing); it also empties the sets (exit_sets), so one program, not
 *   two, patches that tracepoint;
 * - sched_prepare_exec (Linux 6.10+), before exec replaces the image (the
 *   old mm is still there: this runs before the point of no return):
 *   forked children that exec at once (shells, make) would otherwise lose
 *   the image their first samples were taken in.
 *
 * Raw, not tp_btf: a tp_btf program is tied to one attach point, found by
 * name in the kernel's BTF (a linear search of ~126,000 types, done by the
 * loader and again by the verifier), and two of them each resolved the
 * iterator's three kfuncs anew.  The task is current at both tracepoints,
 * and bpf_get_current_task_btf() gives the trusted pointer the task_vma
 * iterator wants.  Optional: needs those kfuncs (6.7+).
 */
SEC("raw_tp")
int handle_vmas(void *ctx)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct profile_seen_key sk = { .pid = p->tgid, .exec_id = p->self_exec_id };
	bool exiting = p->flags & PF_EXITING;

	if (exiting && !group_dead(p))
		return 0;
	if (bpf_map_lookup_elem(&seen, &sk))
		emit_vmas(p, &sk);
	if (exiting)
		exit_sets(sk.pid);
	return 0;
}

/* A process is gone: its entries leave the sets that would otherwise only
 * grow.  "pids" with -- COMMAND (long runs that fork a lot: a build);
 * "tracked" and "exec_gen" where they are not LRU maps (forget_exited). */
static __always_inline void exit_sets(__u32 tgid)
{
	if (track_gens)
		bpf_map_delete_elem(&map_gens, &tgid);
	if (follow_children)
		bpf_map_delete_elem(&pids, &tgid);
	if (forget_exited) {
		bpf_map_delete_elem(&tracked, &tgid);
		bpf_map_delete_elem(&exec_gen, &tgid);
	}
}

/* The same where handle_exit cannot load (no task_vma iterator). */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(handle_exit_sets, struct task_struct *p)
{
	if (group_dead(p))
		exit_sets(BPF_CORE_READ(p, tgid));
	return 0;
}

/* ---- mapping generations (profile.h) ---- */

#define PROT_EXEC 0x4
#define NR_MMAP 9
#define NR_MPROTECT 10
#define NR_MREMAP 25
#define NR_PKEY_MPROTECT 329

/* The event being built: on the stack, as bpf_find_vma's callback wants. */
struct vma_probe {
	struct profile_map_event e;
	__u64 want_end; /* the change ends here (mprotect's range) */
	bool exec;      /* the mapping is executable */
};

/* e's mapping fields from vma; its vm_flags. */
static __always_inline unsigned long fill_map_event(struct vm_area_struct *vma,
						    struct profile_map_event *e)
{
	unsigned long vmf = BPF_CORE_READ(vma, vm_flags);
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct inode *inode;

	e->flags = vmf & (VM_READ | VM_WRITE);
	e->start = BPF_CORE_READ(vma, vm_start);
	e->end = BPF_CORE_READ(vma, vm_end);
	e->offset = BPF_CORE_READ(vma, vm_pgoff) << 12;
	e->dev = e->ino = e->mtime_ns = 0;
	e->name[0] = 0;
	if (!file) {
		e->flags |= PROFILE_MAP_EV_ANON;
		return vmf;
	}
	inode = BPF_CORE_READ(file, f_inode);
	e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	e->ino = BPF_CORE_READ(inode, i_ino);
	e->mtime_ns = inode_mtime_ns(inode);
	bpf_probe_read_kernel_str(e->name, sizeof(e->name),
				  BPF_CORE_READ(file, f_path.dentry, d_name.name));
	return vmf;
}

static long read_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_probe *v = data;

	v->exec = fill_map_event(vma, &v->e) & VM_EXEC;
	return 0;
}

/* The VMA tree's shapes: an rbtree of vm_area_struct before 6.1, a maple
 * tree of them since; CO-RE tells which the kernel has, the other's code
 * is dead at load. */
struct vm_area_struct___rb {
	struct rb_node vm_rb;
} __attribute__((preserve_access_index));
struct mm_struct___rb {
	struct rb_root mm_rb;
} __attribute__((preserve_access_index));

/* rbtree height is at most 2 log2(n + 1): 32 for vm.max_map_count's
 * default 65,530 VMAs.  The descents below are unrolled: 5.10's verifier
 * took the loop's closing edge for a fall-through back-edge ("back-edge
 * from insn 343 to 344") and refused the program. */
#define GEN_RB_DEPTH 36
/* a maple tree of 65,530 VMAs is 5 levels deep at most (10 slots an
 * internal node, allocation ranges) */
#define GEN_MT_DEPTH 8
#define MAPLE_NODE_MASK 255UL
#define MAPLE_RANGE64_SLOTS 16
#define MAPLE_ARANGE64_SLOTS 10

/* The maple tree's nodes as the kernel lays them out (256 bytes, fixed
 * since the tree came in 6.1) and the rbtree's node, read without CO-RE:
 * see struct raw_tp_args. */
struct bprof_maple_meta {
	unsigned char end, gap;
};
struct bprof_maple_node {
	union {
		struct {
			void *parent;
			unsigned long pivot[MAPLE_RANGE64_SLOTS - 1];
			union {
				void *slot[MAPLE_RANGE64_SLOTS];
				struct {
					void *pad[MAPLE_RANGE64_SLOTS - 1];
					struct bprof_maple_meta meta;
				};
			};
		} mr64;
		struct {
			void *parent;
			unsigned long pivot[MAPLE_ARANGE64_SLOTS - 1];
			void *slot[MAPLE_ARANGE64_SLOTS];
			unsigned long gap[MAPLE_ARANGE64_SLOTS];
			struct bprof_maple_meta meta;
		} ma64;
	};
};
struct bprof_rb_node {
	unsigned long parent_color;
	struct bprof_rb_node *rb_right, *rb_left;
};

/* The maple tree's entry at addr (the kernel's mtree_range_walk): NULL
 * for a gap or a tree this does not know how to read. */
static __always_inline void *gen_maple_at(struct mm_struct *mm, __u64 addr)
{
	unsigned long root = (unsigned long)BPF_CORE_READ(mm, mm_mt.ma_root), max = ~0UL;
	unsigned long piv[MAPLE_RANGE64_SLOTS - 1], ipiv;

	#pragma unroll
	for (int level = 0; level < GEN_MT_DEPTH; level++) {
		struct bprof_maple_node *node = (void *)(root & ~MAPLE_NODE_MASK);
		__u32 type = (root >> 3) & 15, end, i;
		unsigned char meta_end;
		void **slots;

		/* the root is marked a node (MAPLE_ROOT_NODE, xa_is_node: a
		 * tree of one entry is no process's); every node lies above
		 * the reserved range */
		if ((!level && (root & 3) != 2) || root <= 4096)
			return NULL;
		__builtin_memset(piv, 0, sizeof(piv));
		if (type == maple_arange_64) {
			if (bpf_probe_read_kernel(piv, sizeof(node->ma64.pivot), &node->ma64.pivot) ||
			    bpf_probe_read_kernel(&meta_end, 1, &node->ma64.meta.end))
				return NULL;
			end = meta_end;
			slots = node->ma64.slot;
		} else if (type == maple_range_64 || type == maple_leaf_64) {
			if (bpf_probe_read_kernel(piv, sizeof(piv), &node->mr64.pivot))
				return NULL;
			/* the kernel's ma_data_end */
			if (!piv[MAPLE_RANGE64_SLOTS - 2]) {
				if (bpf_probe_read_kernel(&meta_end, 1, &node->mr64.meta.end))
					return NULL;
				end = meta_end;
			} else {
				end = piv[MAPLE_RANGE64_SLOTS - 2] == max ? MAPLE_RANGE64_SLOTS - 2
									  : MAPLE_RANGE64_SLOTS - 1;
			}
			slots = node->mr64.slot;
		} else {
			return NULL;
		}
		if (end >= MAPLE_RANGE64_SLOTS)
			return NULL;
		/* the first slot whose range reaches addr (the last: end);
		 * downwards, without a break, so that it unrolls */
		i = end;
		ipiv = 0;
		#pragma unroll
		for (int j = MAPLE_RANGE64_SLOTS - 2; j >= 0; j--) {
			if ((__u32)j < end && piv[j] >= addr) {
				i = j;
				ipiv = piv[j]; /* no stack read at a variable offset */
			}
		}
		if (i < end && ipiv)
			max = ipiv;
		if (bpf_probe_read_kernel(&root, sizeof(root), &slots[i & (MAPLE_RANGE64_SLOTS - 1)]))
			return NULL;
		if (type == maple_leaf_64)
			return (void *)root;
	}
	return NULL;
}

/* The VMA of mm that holds addr, read without taking mm's lock (the
 * lean hooks: gens_lean); NULL if none (or the tree was not read): a gap.
 * The bounds are checked; that it is still the mapping is the caller's to
 * know (the task holds the write lock, or gen_mm_seq). */
static __always_inline struct vm_area_struct *gen_vma_at(struct mm_struct *mm, __u64 addr)
{
	struct vm_area_struct *vma = NULL;

	if (bpf_core_field_exists(((struct mm_struct___rb *)0)->mm_rb)) {
		/* the kernel's find_vma before 6.1, down the rbtree */
		struct bprof_rb_node *n = (void *)BPF_CORE_READ((struct mm_struct___rb *)mm, mm_rb.rb_node);
		__u64 off = bpf_core_field_offset(struct vm_area_struct___rb, vm_rb);

		/* no break (a loop of unknown trip count does not unroll):
		 * the steps past the end test n only */
		#pragma unroll
		for (int i = 0; i < GEN_RB_DEPTH; i++) {
			struct vm_area_struct *v = (void *)n - off;

			if (!n)
				continue;
			if (BPF_CORE_READ(v, vm_end) <= addr) {
				n = BPF_PROBE_READ(n, rb_right);
			} else if (BPF_CORE_READ(v, vm_start) > addr) {
				n = BPF_PROBE_READ(n, rb_left);
			} else {
				vma = v;
				n = NULL;
			}
		}
	} else if (bpf_core_field_exists(mm->mm_mt)) {
		vma = gen_maple_at(mm, addr);
	}
	if (!vma || (unsigned long)vma & 3 || BPF_CORE_READ(vma, vm_start) > addr ||
	    BPF_CORE_READ(vma, vm_end) <= addr)
		return NULL;
	return vma;
}

struct mm_struct___vmacache {
	__u64 vmacache_seqnum;
} __attribute__((preserve_access_index));

/* What a read of mm's VMA tree without its lock (the lean syscall hook)
 * is checked against: 0 while a writer holds the lock, else a value that
 * changes when a VMA is unlinked (vmacache_seqnum before 6.1; after, the
 * lock word only, for tests: no kernel without bpf_loop has a maple
 * tree).  The same value before and after a read: no VMA it saw was
 * unlinked (freed) meanwhile; a change that only adds one may hide the
 * mapping (a gap) but not give another. */
static __always_inline __u64 gen_mm_seq(struct mm_struct *mm)
{
	if (BPF_CORE_READ(mm, mmap_lock.count.counter) & 1 /* RWSEM_WRITER_LOCKED */)
		return 0;
	if (bpf_core_field_exists(((struct mm_struct___vmacache *)0)->vmacache_seqnum))
		return BPF_CORE_READ((struct mm_struct___vmacache *)mm, vmacache_seqnum) << 1 | 1;
	return 1;
}

/* Add one to g's generation and read it back.  Not the value of the add
 * itself (that needs BPF atomics with fetch, -mcpu=v3 and Linux 5.12): two
 * threads mapping at once may both read the later number, and the earlier
 * one is then never sent, a gap, which makes the frames it may concern
 * unknown rather than wrong (SPEC.md 6.12). */
static __always_inline __u32 next_gen(struct profile_map_gen *g)
{
	__sync_fetch_and_add(&g->gen, 1);
	return *(volatile __u32 *)&g->gen;
}

/* Begin a new generation of image (tgid, exec_id): its number, or 0 when
 * it could not be kept (map_gens full: map_gens_lost is set instead).
 * hulled: the caller put the change's range in the hulls (hull_note);
 * otherwise the image's older tables are never used again (hull_off),
 * set before the generation that would need them begins. */
static __always_inline __u32 bump_gen(__u32 tgid, __u32 exec_id, bool hulled)
{
	struct profile_map_gen *g = bpf_map_lookup_elem(&map_gens, &tgid),
			       nv = { .exec_id = exec_id, .gen = 1, .hull_off = !hulled };
	long err;

	if (g && g->exec_id == exec_id) {
		if (!hulled)
			g->hull_off = 1;
		return next_gen(g);
	}
	/* first change of this image (an old image's entry is replaced) */
	err = bpf_map_update_elem(&map_gens, &tgid, &nv, g ? BPF_EXIST : BPF_NOEXIST);
	if (!err)
		return 1;
	g = bpf_map_lookup_elem(&map_gens, &tgid); /* another thread won */
	if (g && g->exec_id == exec_id) {
		if (!hulled)
			g->hull_off = 1;
		return next_gen(g);
	}
	map_gens_lost = 1;
	return 0;
}

/*
 * An executable mapping was made: mmap with PROT_EXEC, mprotect or
 * pkey_mprotect adding it, mremap of executable memory.  One tracepoint
 * program attached to the exit of those four system calls (their contexts
 * are the same), run after the mapping exists: a new generation begins,
 * and user space hears of the mapping with its generation, in order.  A
 * mapping that cannot be sent (ring buffer full, the mm busy) still begins
 * a generation: user space sees the number missing, a gap, and names no
 * frame the gap may have changed.  Why syscall tracepoints: this kernel
 * has no kprobes and refuses fentry; see DESIGN.md for their cost.
 */
static __always_inline int map_exec(long nr, long ret, bool lean)
{
	/* lean: a constant, so the other way's helpers and callback are not
	 * in the lean program at all (5.10's verifier refuses them even
	 * unreachable) */
	struct task_struct *task = lean ? (void *)bpf_get_current_task() : bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct profile_map_event *out;
	struct vma_probe v = {};
	struct pt_regs *regs;
	__u64 addr = ret, prot = PROT_EXEC;
	long found;
	__u32 exec_id;

	if (nr != NR_MMAP && nr != NR_MPROTECT && nr != NR_PKEY_MPROTECT && nr != NR_MREMAP)
		return 0;
	if (ret < 0)
		return 0; /* failed: nothing changed (user addresses are positive) */
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	if (lean) {
		void *stack = BPF_CORE_READ(task, stack);

		regs = stack ? stack + BPROF_THREAD_SIZE - sizeof(struct user_regs) : NULL;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
	}
	if (!regs)
		return 0;
	if (nr == NR_MMAP) {
		prot = BPF_CORE_READ(regs, dx);
	} else if (nr == NR_MPROTECT || nr == NR_PKEY_MPROTECT) {
		addr = BPF_CORE_READ(regs, di);
		prot = BPF_CORE_READ(regs, dx);
		v.want_end = addr + BPF_CORE_READ(regs, si);
	}
	if (!(prot & PROT_EXEC))
		return 0;
	if (lean) {
		/* unlocked: a VMA unlinked meanwhile, or a writer at either
		 * end, makes the read busy, as bpf_find_vma's trylock */
		struct mm_struct *mm = BPF_CORE_READ(task, mm);
		__u64 seq = gen_mm_seq(mm);
		struct vm_area_struct *vma = seq ? gen_vma_at(mm, addr) : NULL;

		found = !seq ? -EBUSY : !vma ? -ENOENT : 0;
		if (vma) {
			v.exec = fill_map_event(vma, &v.e) & VM_EXEC;
			if (gen_mm_seq(mm) != seq)
				found = -EBUSY;
		}
	} else {
		found = bpf_find_vma(task, addr, read_vma, &v, 0);
	}
	if (!found && !v.exec)
		return 0; /* mremap of memory that does not execute */
	exec_id = BPF_CORE_READ(task, self_exec_id);
	v.e.gen = bump_gen(tgid, exec_id, false); /* unlocked: two may run at once */
	if (!v.e.gen)
		return 0; /* its samples say PROFILE_GEN_UNKNOWN */
	if (found) {
		/* the mm was busy (trylock): the gap says what is unknown */
		count_loss(PROFILE_LOSS_EVENTS);
		return 0;
	}
	if (v.want_end > v.e.end)
		v.e.flags |= PROFILE_MAP_EV_PARTIAL;
	v.e.type = PROFILE_EV_MAP_EXEC;
	v.e.pid = tgid;
	v.e.exec_id = exec_id;
	out = test_drop_map_events && v.e.gen % test_drop_map_events == 0
		      ? NULL
		      : bpf_ringbuf_reserve(&events, sizeof(*out), 0);
	if (!out) {
		count_loss(PROFILE_LOSS_EVENTS);
		return 0;
	}
	__builtin_memcpy(out, &v.e, sizeof(*out));
	bpf_ringbuf_submit(out, 0);
	return 0;
}

/* On raw_syscalls' sys_exit, not the four system calls' own tracepoints:
 * those are attached through their ids in tracefs, which a fresh host
 * may not have mounted and CAP_BPF with CAP_PERFMON do not open.  It runs
 * at every system call's exit and returns at once for the others (bench
 * part 11b); kernels with the mmap_lock tracepoints use the hook below. */
SEC("raw_tp/sys_exit")
int handle_map_exec_raw(struct raw_tp_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];

	return map_exec(BPF_CORE_READ(regs, orig_ax), (long)ctx->args[1], false);
}

/* ---- mapping changes at the lock ----
 *
 * The syscall tracepoints above put every system call of the machine on
 * the kernel's slow path while they are attached (~100 ns each here:
 * docs/benchmark.md part 13b), the largest cost of a recording that
 * switches threads often.  Where the kernel has the mmap_lock tracepoints
 * (5.10+) the generation is begun instead where the change itself ends:
 * at the release of the mm's write lock, in the system call that took it
 * (its number and arguments are in the task's saved user registers), which
 * costs nothing to the system calls that do not map.  The mapping cannot
 * be read there (bpf_find_vma would take the lock the task still holds):
 * it is read at the process's next sample (gens_read), which is the
 * first moment a frame can be in it.  Why that is exact:
 *  - the change's generation is begun before the lock is released, so
 *    every sample after the change carries it or a later one;
 *  - the read holds the mm's read lock, so no change runs during it, and
 *    a later change to the same range marks the earlier one dead (never
 *    sent: a gap) before the read can see the later mapping;
 *  - mremap may or may not move executable memory: it begins no
 *    generation unless MREMAP_FIXED (which replaces what was there); its
 *    range is read at the next sample, and if it executes it is sent with
 *    the generation current at the read: a moved or grown range held
 *    nothing executable before, so no earlier sample has a frame in it.
 */

#define MAP_FIXED 0x10
#define MAP_FIXED_NOREPLACE 0x100000
#define MREMAP_FIXED 2

/* tid -> the address vm_unmapped_area chose for a mapping of the thread's
 * current hold of its mm's write lock (mmap without MAP_FIXED, a moving
 * mremap): taken, and deleted, at the lock's release. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4096);
} gen_area SEC(".maps");

/* gen_push's marking of the earlier unread changes a change overlaps. */
struct gen_dead_loop {
	__u64 start, end;
	__u32 tgid, next, read;
};

/* One earlier change (next - 1 - k): dead if it overlaps.  A bpf_loop
 * callback, as gens_read_one: the 32 steps inline were 4,200 of
 * handle_gen_lock's 5,800 verified instructions, checked at every
 * recording's start. */
static long gen_dead_one(__u32 k, void *data)
{
	struct gen_dead_loop *l = data;
	/* the key on this function's stack, as gens_read_one's */
	struct profile_pend_key pk = { .tgid = l->tgid, .gen = l->next - 1 - k };
	struct profile_gen_pend *p;

	if ((__s32)(pk.gen - l->read) <= 0)
		return 1;
	p = bpf_map_lookup_elem(&map_pend, &pk);
	if (p && p->start < l->end && l->start < p->end)
		p->flags |= PROFILE_PEND_DEAD;
	return 0;
}

/* ---- older tables ----
 *
 * A sample uses its image's mapping table when the table was read in the
 * sample's own generation, or in an older one when every change made
 * since lies in a known range: the walk then takes its rows for every
 * address outside that range, and steps by frame pointer inside it, as
 * at an address of no known mapping (a JIT's new code, a library mapped
 * since: the table has no rows for them anyway).  An address that the
 * changes did not touch means what it meant when the table was read, so
 * its rows are right; one that they touched may now be another object's,
 * so no row of the old table is used there (a library replaced at its
 * address is never unwound with its predecessor's rows).  Without this, a
 * JIT's stream of changes (javac: 15,000 a second) left its process with
 * no usable table at all (issue 46).
 *
 * The range is kept as a hull (one interval) of the changes since a
 * generation, in two copies that take turns: a spans the changes after
 * hull_a_gen, b those after the later hull_b_gen.  Once the image's table
 * is of hull_b_gen or later, a is no longer needed: b becomes a, and a
 * new b starts.  So a sample with a table of generation t >= hull_a_gen
 * excludes only the changes of the last two turns, whose length is how
 * far user space lags behind the changes.  A JIT's changes are mostly in
 * its code area, which the hull then covers; its libraries are elsewhere
 * and keep their rows.
 *
 * Only the mm lock hook keeps hulls: it runs with the write lock held,
 * one writer at a time, and hull_seq lets a sample see a writer in the
 * middle (it then uses no older table).  The hooks that run unlocked or
 * lean set hull_off instead, and their images use tables of their own
 * generation only, as before.
 */
static __always_inline void hull_grow(__u64 *lo, __u64 *hi, __u64 start, __u64 end)
{
	if (*lo >= *hi) {
		*lo = start;
		*hi = end;
		return;
	}
	if (start < *lo)
		*lo = start;
	if (end > *hi)
		*hi = end;
}

/* The change that is about to begin generation g->gen + 1 of image
 * (tgid, exec_id), g its entry (NULL: none yet): [start, end) put in both
 * hulls, or (unknown: its range was not kept) the hulls emptied from that
 * generation on, so that only a table of it or later serves.  The caller
 * holds the mm's write lock and begins the generation after this. */
static __always_inline void hull_note(struct profile_map_gen *g, __u32 tgid, __u32 exec_id,
				      __u64 start, __u64 end, bool unknown)
{
	struct profile_map_gen nv = { .exec_id = exec_id };
	struct profile_seen_key sk = { .pid = tgid, .exec_id = exec_id };
	const struct unwind_proc *proc;
	__u32 next;

	if (!g) {
		/* the image's first change: its entry, at generation 0 */
		if (bpf_map_update_elem(&map_gens, &tgid, &nv, BPF_ANY))
			return; /* bump_gen will fail too: PROFILE_GEN_UNKNOWN */
		g = bpf_map_lookup_elem(&map_gens, &tgid);
		if (!g || g->exec_id != exec_id)
			return;
	}
	if (g->hull_off)
		return;
	next = g->gen + 1;
	g->hull_seq++;
	barrier();
	if (unknown) {
		g->hull_a_gen = next;
		g->hull_b_gen = next;
		g->hull_a_lo = g->hull_a_hi = 0;
		g->hull_b_lo = g->hull_b_hi = 0;
	} else {
		proc = bpf_map_lookup_elem(&unwind_procs, &sk);
		if (proc && (__s32)(proc->gen - g->hull_b_gen) >= 0) {
			/* the table covers what a had more than b: turn */
			g->hull_a_gen = g->hull_b_gen;
			g->hull_a_lo = g->hull_b_lo;
			g->hull_a_hi = g->hull_b_hi;
			g->hull_b_gen = next - 1;
			g->hull_b_lo = g->hull_b_hi = 0;
		}
		hull_grow(&g->hull_a_lo, &g->hull_a_hi, start, end);
		hull_grow(&g->hull_b_lo, &g->hull_b_hi, start, end);
	}
	barrier();
	g->hull_seq++;
}

/* Keep range [start, end) of image (tgid, exec_id) for its next sample to
 * read, beginning its generation, or (maybe) in a maybe[] slot.  Runs
 * with the mm's write lock held. */
static __always_inline void gen_push(__u32 tgid, __u32 exec_id, __u64 start, __u64 end, bool maybe,
				     __u32 flags)
{
	struct profile_gen_pend v = { .start = start, .end = end, .exec_id = exec_id, .flags = flags };
	struct profile_map_gen *g, nv = { .exec_id = exec_id };
	struct profile_pend_key pk = { .tgid = tgid };
	__u32 next, n;

	g = bpf_map_lookup_elem(&map_gens, &tgid);
	if (g && g->exec_id != exec_id)
		g = NULL; /* an earlier image's: replaced below */
	/* the generation this change will begin (writers hold the write
	 * lock: one at a time) */
	next = g ? g->gen + 1 : 1;
	if (g) {
		/* Earlier unread changes this one overlaps can no longer be
		 * read as they were: left unsent (gaps).  Only the last
		 * PROFILE_GEN_WINDOW can be unread: the one falling out of
		 * the window goes now. */
		struct gen_dead_loop dl = { .start = start, .end = end, .tgid = tgid,
					    .next = next, .read = g->read };

		bpf_loop(PROFILE_GEN_WINDOW, gen_dead_one, &dl, 0);
		pk.gen = next - PROFILE_GEN_WINDOW - 1;
		bpf_map_delete_elem(&map_pend, &pk);
		for (__u32 slot = 0; slot < 2; slot++)
			if (slot < g->nr_maybe && g->maybe[slot].start < end && start < g->maybe[slot].end)
				g->maybe[slot].flags |= PROFILE_PEND_DEAD;
	}
	if (!maybe) {
		/* The range first, then the generation: a sample may run
		 * between the two (a hard interrupt in this program), and a
		 * reader takes a generation without its range for one lost. */
		pk.gen = next;
		if (bpf_map_update_elem(&map_pend, &pk, &v, BPF_ANY))
			count_loss(PROFILE_LOSS_EVENTS); /* a gap, as a lost event */
		/* and in the hulls, before the generation too */
		hull_note(g, tgid, exec_id, start, end, false);
		bump_gen(tgid, exec_id, true); /* 0 (map full): PROFILE_GEN_UNKNOWN */
		return;
	}
	if (!g) {
		/* a maybe first in its image: generation 0 */
		if (bpf_map_update_elem(&map_gens, &tgid, &nv, BPF_ANY))
			return;
		g = bpf_map_lookup_elem(&map_gens, &tgid);
		if (!g)
			return;
	}
	/* slots all read: free (no reader runs while the write lock is held) */
	if (g->nr_maybe && g->maybe[0].flags & (PROFILE_PEND_DONE | PROFILE_PEND_DEAD) &&
	    (g->nr_maybe < 2 || g->maybe[1].flags & (PROFILE_PEND_DONE | PROFILE_PEND_DEAD)))
		g->nr_maybe = 0;
	n = g->nr_maybe;
	if (n >= 2) {
		/* no room: a generation begins, unsent (a gap), so that no
		 * frame in what it may have moved is named; its range is
		 * not kept either, so only a table of it or later serves */
		hull_note(g, tgid, exec_id, 0, 0, true);
		bump_gen(tgid, exec_id, true);
		count_loss(PROFILE_LOSS_EVENTS);
		return;
	}
	g->maybe[n] = v;
	/* the slot before its count, for a sample in between */
	asm volatile("" ::: "memory");
	g->nr_maybe = n + 1;
}

/* The mmap_lock_start_locking tracepoint (mm, write): a thread of the
 * process is about to take its mm's lock (the loader's next mmap or
 * mprotect, a fault, munmap), which it does not hold yet.  Changes left
 * unread are read here first: this is task context, where every lookup
 * may take the lock (in a sample, a hard interrupt, only the first can:
 * the read lock is released later by irq_work), and it comes right after
 * each change of a loader mapping library after library. */
/*
 * Whether an mmap_lock tracepoint is of the write lock.  Until 6.9 its
 * arguments were (mm, memcg_path, write), since (mm, write): read as the
 * newer layout, an older kernel's memcg_path, a pointer never NULL, said
 * "write" for every read lock too, and the read lookups nested in
 * bpf_find_vma's own trylock then leaked a lock (handle_gen_start): a
 * process on Debian 12's 6.1 hung in D state at exit.  Which layout the
 * kernel has is told by its trace event's record, which has
 * __data_loc_memcg_path where the argument exists; CO-RE answers at load,
 * and the other layout's read is dead code (a raw tracepoint program that
 * read past the tracepoint's arguments could not be attached).
 */
struct trace_event_raw_mmap_lock___memcg {
	__u32 __data_loc_memcg_path;
} __attribute__((preserve_access_index));

/* shared: the program is attached to vm_unmapped_area too, which has two
 * arguments: a raw tracepoint program that loads a third word of its
 * context is refused there (EINVAL: its context is larger than the
 * tracepoint's), so the older layout's third argument is read as memory,
 * which the verifier does not count as context. */
static __always_inline bool mmap_lock_write(struct raw_tp_args *ctx, bool shared)
{
	__u64 w = 0;

	/* two loads at constant offsets: clang would otherwise load through
	 * ctx + an offset it computes, which the verifier refuses */
	if (bpf_core_field_exists(((struct trace_event_raw_mmap_lock___memcg *)0)->__data_loc_memcg_path)) {
		if (shared) {
			bpf_probe_read_kernel(&w, sizeof(w), (void *)ctx + 2 * sizeof(__u64));
		} else {
			w = ctx->args[2];
			barrier_var(w);
		}
	} else {
		w = ctx->args[1];
		barrier_var(w);
	}
	return w != 0;
}

SEC("raw_tp")
int handle_gen_start(struct raw_tp_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	/* The write lock only.  Never a read lock: the tracepoint also fires
	 * inside bpf_find_vma's own trylock, and a lookup nested there, in a
	 * sample's hard interrupt, would share the per-CPU irq_work that
	 * releases the outer lookup's lock: one release for two locks, and
	 * the process's next writer (its exit) waits forever.  A write lock
	 * is taken only in task context, where nothing is nested. */
	if (!mmap_lock_write(ctx, false))
		return 0;
	if ((__u64)BPF_CORE_READ(task, mm) != ctx->args[0])
		return 0;
	gens_read(task->tgid, task->self_exec_id);
	return 0;
}

/* A change of mapping that may have made memory executable: the range
 * [start, end) of the system call whose saved user registers are r. */
struct gen_change {
	__u64 start, end;
	__u32 flags; /* PROFILE_PEND_MMAP: the mapping must begin at start */
	bool maybe;  /* mremap without MREMAP_FIXED: begins no generation */
};

/* The change the system call whose saved user registers are at regs
 * made, with the mm's write lock held (mmap, mprotect, pkey_mprotect,
 * mremap with PROT_EXEC or of memory that may execute); area: where
 * vm_unmapped_area put it, if it chose (NULL: it did not).  false: no
 * such change. */
static __always_inline bool gen_change_of(const void *regs, const __u64 *area, struct gen_change *c)
{
	struct user_regs rr, *r = &rr;
	__u64 len, prot;
	long nr;

	if (!regs || bpf_probe_read_kernel(&rr, sizeof(rr), regs))
		return false;
	nr = r->orig_ax;

	c->maybe = false;
	c->flags = 0;
	if (nr == NR_MMAP) {
		prot = r->dx;
		c->start = r->di;
		/* without MAP_FIXED the hint, unless vm_unmapped_area chose */
		if (!(r->r10 & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && area)
			c->start = *area;
		len = r->si;
		c->flags = PROFILE_PEND_MMAP;
		if (r->r10 & (MAP_FIXED | MAP_FIXED_NOREPLACE))
			c->flags |= PROFILE_PEND_FIXED;
	} else if (nr == NR_MPROTECT || nr == NR_PKEY_MPROTECT) {
		prot = r->dx;
		c->start = r->di;
		len = r->si;
	} else if (nr == NR_MREMAP) {
		prot = PROT_EXEC; /* unknown until read */
		len = r->dx;
		if (r->r10 & MREMAP_FIXED) {
			c->start = r->r8;
		} else {
			c->start = area ? *area : r->di;
			c->maybe = true;
		}
	} else {
		return false;
	}
	if (!(prot & PROT_EXEC) || !len)
		return false;
	c->start &= ~4095ULL;
	c->end = c->start + len;
	return true;
}

/* Whether this mmap_lock_released is of a write lock of mm, the task's
 * own (not fork's child's, not exec's new one), in a process recorded;
 * *area: the address vm_unmapped_area chose in this hold of the lock
 * (handle_gen_area), taken; *have_area: it chose one. */
/*
 * One program serves vm_unmapped_area and mmap_lock_released (two
 * programs would each be verified at every start: handle_gen_area's load
 * was 1.4 ms of it), told apart by their first argument: an address
 * vm_unmapped_area chose (user space: the top bit clear, on x86-64 and
 * arm64 alike), or its error (-4095..-1), or else the mm whose lock was
 * released (a kernel address, never in the last page).  Not "the mm is
 * current's": a lock of another mm (exec's new one, another process's
 * read through /proc) must not be taken for an address.
 */
static __always_inline bool gen_arg_is_mm(__u64 a)
{
	return (a >> 63) && a < (__u64)-4095;
}

/* vm_unmapped_area: the address chosen for a mapping of this thread's
 * hold of its mm's write lock, for gen_lock_mine at the lock's release. */
static __always_inline int gen_area_note(struct raw_tp_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), addr = ctx->args[0];
	__u32 tid = id, tgid = id >> 32;

	if (addr >= (__u64)-4095)
		return 0; /* no room */
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	bpf_map_update_elem(&gen_area, &tid, &addr, BPF_ANY);
	return 0;
}

static __always_inline bool gen_lock_mine(struct raw_tp_args *ctx, __u64 mm, __u64 *area,
					  bool *have_area)
{
	__u64 id = bpf_get_current_pid_tgid(), *a;
	__u32 tid = id, tgid = id >> 32;

	if (!mmap_lock_write(ctx, true))
		return false; /* a read lock */
	a = bpf_map_lookup_elem(&gen_area, &tid);
	*have_area = a;
	if (a) {
		*area = *a;
		bpf_map_delete_elem(&gen_area, &tid);
	}
	if (mm != ctx->args[0])
		return false;
	return !filter_pid || bpf_map_lookup_elem(&pids, &tgid);
}

/* The mmap_lock_released tracepoint (mm, write), and vm_unmapped_area
 * (gen_arg_is_mm). */
SEC("raw_tp")
int handle_gen_lock(struct raw_tp_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct gen_change c;
	__u64 area = 0;
	bool have_area;

	if (!gen_arg_is_mm(ctx->args[0]))
		return gen_area_note(ctx);
	if (!gen_lock_mine(ctx, (__u64)BPF_CORE_READ(task, mm), &area, &have_area))
		return 0;
	if (gen_change_of((void *)bpf_task_pt_regs(task), have_area ? &area : NULL, &c))
		gen_push(task->tgid, task->self_exec_id, c.start, c.end, c.maybe, c.flags);
	return 0;
}

/* Send vma, the mapping of a change, as image (tgid, exec_id)'s
 * generation gen; want_end: where the change ended.  Not sent (ring
 * buffer full): a gap. */
static __always_inline void gen_send(struct vm_area_struct *vma, __u32 tgid, __u32 exec_id, __u32 gen,
				     __u64 want_end)
{
	struct profile_map_event *e;

	e = test_drop_map_events && gen % test_drop_map_events == 0
		    ? NULL
		    : bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_loss(PROFILE_LOSS_EVENTS); /* a gap */
		return;
	}
	fill_map_event(vma, e);
	e->type = PROFILE_EV_MAP_EXEC;
	e->pid = tgid;
	e->exec_id = exec_id;
	e->gen = gen;
	e->pad = 0;
	if (want_end > e->end)
		e->flags |= PROFILE_MAP_EV_PARTIAL;
	bpf_ringbuf_submit(e, 0);
}

/* gens_read's callback, under the mm's read lock: no change runs now, so
 * what the change left (not overlapped since: not dead) is what vma is. */
static long gen_read_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct gen_read_ctx *c = data;
	struct profile_map_gen *g = bpf_map_lookup_elem(&map_gens, &c->tgid);
	struct profile_pend_key pk = { .tgid = c->tgid, .gen = c->gen };
	struct profile_gen_pend *p;
	__u32 gen = c->gen;

	if (!g || g->exec_id != c->exec_id)
		return 0;
	if (gen) {
		p = bpf_map_lookup_elem(&map_pend, &pk);
	} else {
		if (c->slot >= 2 || c->slot >= g->nr_maybe)
			return 0;
		p = &g->maybe[c->slot];
		gen = g->gen; /* what it moved: sent with the generation now */
	}
	if (!p || p->start != c->addr || p->flags & (PROFILE_PEND_DEAD | PROFILE_PEND_DONE))
		return 0;
	p->flags |= PROFILE_PEND_DONE;
	c->read = true;
	/* not executable (any more, or a mremap of data), or a maybe before
	 * any generation (generation 0's mappings are the /proc reads'):
	 * nothing to send; a generation of its own is then a gap */
	if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC) || !gen)
		return 0;
	/* An mmap's mapping begins where it was made.  One that does not
	 * was not made there: the address was not the one the kernel chose
	 * (vm_unmapped_area's, then moved for alignment), or the mapping
	 * merged with its neighbour; unsent, a gap.  Unless the caller fixed
	 * the address: the mapping made is the one at start, merged with the
	 * one below it (HotSpot commits its code heaps chunk after chunk so,
	 * and each was a gap: 91 in a javac run, whose frames of every
	 * mapping then printed as [unknown]); sent whole, as an mprotect's
	 * merged mapping is. */
	if ((p->flags & (PROFILE_PEND_MMAP | PROFILE_PEND_FIXED)) == PROFILE_PEND_MMAP &&
	    BPF_CORE_READ(vma, vm_start) != p->start)
		return 0;
	gen_send(vma, c->tgid, c->exec_id, gen, p->end);
	return 0;
}

/* ---- the lean mm lock hook: kernels without bpf_loop (5.10-5.16) ----
 *
 * handle_gen_lock and handle_gen_start need what those kernels lack
 * (bpf_loop's callback in gen_push, bpf_find_vma's in gens_read,
 * bpf_task_pt_regs, bpf_get_current_task_btf), and their verifiers refuse
 * the callbacks even where a setting makes them unreachable.  Where the
 * recorder loads the tail walk's sampler it sets gens_lean instead, and
 * handle_gen_area, attached to mmap_lock_released as well as to
 * vm_unmapped_area, does the whole of a change at the lock's release:
 * the tracepoint fires before the write lock is released, so the task
 * holds it, no change can run, and the mm's VMA tree can be read directly
 * (no helper, no lock to take: what bpf_find_vma cannot do there).  The
 * generation is begun and the mapping sent at once, as the syscall hook
 * does after the fact: nothing waits in map_pend, the sampler reads
 * nothing, and no window of unread changes exists to overflow.  One
 * program for both tracepoints, not a second one: the object holds the 32
 * functions libbpf 1.1's loader program allows (DESIGN.md, "The object's
 * size limit").
 */
/* mmap_lock_released (mm, write), the lean way: the change read and sent
 * at once. */
static __always_inline int gen_lock_lean(struct raw_tp_args *ctx, struct task_struct *task)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, exec_id, gen;
	struct mm_struct *mm = (void *)ctx->args[0];
	struct vm_area_struct *vma;
	struct profile_map_gen *g;
	struct gen_change c;
	__u64 area = 0;
	bool have_area;
	void *stack;

	/* current's mm: another's lock only takes the area noted */
	if (!gen_lock_mine(ctx, (__u64)BPF_CORE_READ(task, mm), &area, &have_area))
		return 0;
	/* the saved user registers, where bpf_task_pt_regs (5.15) finds them */
	stack = BPF_CORE_READ(task, stack);
	if (!gen_change_of(stack ? stack + BPROF_THREAD_SIZE - sizeof(struct user_regs) : NULL,
			   have_area ? &area : NULL, &c))
		return 0;
	exec_id = BPF_CORE_READ(task, self_exec_id);
	vma = gen_vma_at(mm, c.start);
	if (c.maybe) {
		/* what it moved or grew into held nothing executable: sent
		 * with the generation now, none begun (as gen_read_vma) */
		g = bpf_map_lookup_elem(&map_gens, &tgid);
		if (vma && g && g->exec_id == exec_id && g->gen &&
		    BPF_CORE_READ(vma, vm_flags) & VM_EXEC)
			gen_send(vma, tgid, exec_id, g->gen, c.end);
		return 0;
	}
	/* before the lock's release: every later sample carries it */
	gen = bump_gen(tgid, exec_id, false); /* the lean sampler uses no hull */
	if (!gen)
		return 0; /* its samples say PROFILE_GEN_UNKNOWN */
	/* not executable, or (mmap) not made where it was asked: unsent,
	 * a gap (as gen_read_vma) */
	if (!vma || !(BPF_CORE_READ(vma, vm_flags) & VM_EXEC) ||
	    ((c.flags & (PROFILE_PEND_MMAP | PROFILE_PEND_FIXED)) == PROFILE_PEND_MMAP &&
	     BPF_CORE_READ(vma, vm_start) != c.start))
		return 0;
	gen_send(vma, tgid, exec_id, gen, c.end);
	return 0;
}

/* The lean hooks (gens_lean: kernels without bpf_loop, the tail walk):
 * mmap_lock_released and vm_unmapped_area (gen_arg_is_mm), or
 * raw_syscalls' sys_exit.  Loaded only there: the lean code is most of
 * the object's instructions, which cost a load even where none runs. */
SEC("raw_tp")
int handle_gen_area(struct raw_tp_args *ctx)
{
	if (gens_lean == GENS_LEAN_SYSCALLS) {
		/* attached to raw_syscalls' sys_exit instead */
		struct pt_regs *regs = (struct pt_regs *)ctx->args[0];

		return map_exec(BPF_CORE_READ(regs, orig_ax), (long)ctx->args[1], true);
	}
	if (gens_lean == GENS_LEAN_LOCK && gen_arg_is_mm(ctx->args[0]))
		return gen_lock_lean(ctx, (void *)bpf_get_current_task());
	return gen_area_note(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
