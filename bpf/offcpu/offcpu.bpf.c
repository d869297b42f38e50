// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu.bpf.c - off-CPU and wall-clock time (prof-record --off-cpu,
 * --wall): the scheduler's programs.  Compiled on its own and linked with
 * the sampler (bprof.bpf.h): it uses the sampler's settings, sets and
 * stack maps, and walks user stacks with the native unwinder's global
 * unwind_walk_regs() (through walk_user_regs()); nothing there uses what
 * is here.  Everything off-CPU is here and in offcpu.h.
 *
 * The rule (SPEC.md 6.13): each thread carries its blocked time forward
 * (a remainder below one period P = 1/F s, drawn uniformly at random when
 * the thread is first seen); a switch-in after a block of d ns adds
 * floor((carry + d) / P) samples to the stack the thread blocked in and
 * keeps the rest.  So a block pays only a map update unless it crosses a
 * period, the stacks are walked at most F times per second per thread,
 * and each block's expected samples are d / P exactly: unbiased.
 *
 * Where the stacks come from.  At sched_switch the thread switched in
 * (next) is not current: its user memory cannot be read from there
 * (bpf_probe_read_user reads current's mm; bpf_copy_from_user_task is for
 * sleepable programs only).  So:
 * - the kernel stack it blocked in is taken at switch-in, from next's saved
 *   kernel stack (bpf_get_task_stack), only when a period was crossed;
 * - the user stack is walked when the thread returns to user space, in its
 *   own context: rseq:rseq_update fires there for every thread that
 *   registered rseq (glibc 2.35+ does for every thread) after it was
 *   switched out.  The user registers are its saved entry registers
 *   (bpf_task_pt_regs), checked to be user mode; a syscall leaves them as
 *   they were when it blocked, so the walk sees the stack that blocked.
 *   A thread without rseq, or one that blocks again before it resumes, has
 *   its samples counted without a user stack (counted in
 *   OFFCPU_STAT_NO_USER_WALK), never dropped.
 * Per-thread state is task local storage: it follows the task across CPUs,
 * dies with it (no entry to leak, no reused pid to confuse).
 */

#include "bprof.bpf.h"
#include "offcpu.h"

#define TASK_RUNNING 0x0
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD_STATE 0x80
#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000
#define ENOENT 2

/* 0: off; OFFCPU_MODE_* */
const volatile __u32 offcpu_mode = 0;
/* the recording's period in ns (1/F) */
const volatile __u64 offcpu_period_ns = 10101010;
/* count kernel threads' blocked time too (default: not) */
const volatile bool offcpu_kthreads = false;
/* --cgroup: the cgroup's id, for the start pass (0: none or unknown) */
const volatile __u64 offcpu_cgroup_id = 0;
/* the unwinder's tables are loaded (--unwind=auto|cfi) */
const volatile bool offcpu_cfi = false;
/* set by prof-record before the end pass (handle_offcpu_end): from then on
 * the switch and resume programs leave the threads' state to that pass */
volatile bool offcpu_ended = false;
/* The samples of sampled blocks waiting for their user stack (pend_n),
 * all threads together: a hint that lets the resume program, which runs
 * at every return to user space after a switch, return at once without a
 * task-storage lookup when it is 0 (nearly always: blocks are sampled at
 * most F times per second per thread and wait microseconds).  Exact:
 * every path that ends a wait takes its samples back, but for a thread
 * that exits during the end pass (the exit program is stopped then): what
 * is left at the end is those samples, counted lost (record/offcpu/). */
__u64 offcpu_pending = 0;

/*
 * The clock.  Every time here is the scheduler's clock of the CPU, rq->clock,
 * which __schedule() updates just before trace_sched_switch: three loads,
 * where bpf_ktime_get_ns() reads the TSC again (~100 ns per call on this
 * VM, 40 % of the switch program: record/DESIGN.md, "Cost").  sched_clock
 * is the TSC scaled, consistent across CPUs where the TSC is stable; where
 * it is not, a block that seems to end before it began is not counted (the
 * (__s64)d < 0 test).  The rq is reached from a task running on this CPU
 * (p->se.cfs_rq->rq: set for every task whatever its class), not from the
 * per-CPU runqueues symbol, which the verifier resolves through kallsyms,
 * and kallsyms lists no per-CPU variables without CONFIG_KALLSYMS_ALL (as
 * here).  The passes over all threads read the clock through prof-record,
 * current there (it yields first, so that the clock is fresh).  A kernel
 * without those fields (no CONFIG_FAIR_GROUP_SCHED) uses
 * bpf_ktime_get_ns() everywhere: never two clocks in one recording.  0
 * (not expected): the block is not counted rather than misdated.
 */
static __always_inline __u64 offcpu_clock(struct task_struct *on_this_cpu)
{
	if (bpf_core_field_exists(on_this_cpu->se.cfs_rq) &&
	    bpf_core_field_exists(on_this_cpu->se.cfs_rq->rq))
		return on_this_cpu->se.cfs_rq->rq->clock;
	return bpf_ktime_get_ns();
}

/* What a thread carries between its switches. */
struct offcpu_task {
	__u64 out_ns;    /* when it was switched out in a tracked state; 0: not */
	__u64 carry_ns;  /* blocked time not yet a sample, < period */
	/* a sampled block waiting for its user stack (pend_n != 0) */
	__u64 pend_n;
	__u64 pend_ns;
	struct offcpu_key pend;
	__u32 state;     /* enum offcpu_state at out_ns */
	__u32 kgen;      /* --rotate: the set pend's kernel stack went to */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

/* Sized by prof-record (1 entry when off; the "_b" twin is --rotate's
 * second set, as counts_b). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
	__uint(max_entries, 1);
} offcpu_counts SEC(".maps"), offcpu_counts_b SEC(".maps");

/* One element: a switch's counters are one lookup, not three. */
struct offcpu_counters {
	__u64 v[OFFCPU_STAT_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_counters);
	__uint(max_entries, 1);
} offcpu_stats SEC(".maps");

/* The walk's scratch, apart from the sampler's: a cpu-clock sample (an
 * hrtimer interrupt) may run in the middle of rseq_update's walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
	__uint(max_entries, 1);
} offcpu_scratch SEC(".maps");

static __always_inline struct offcpu_counters *offcpu_counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&offcpu_stats, &zero);
}

static __always_inline void offcpu_stat(__u32 idx, __u64 n)
{
	struct offcpu_counters *c = offcpu_counters();

	if (c && idx < OFFCPU_STAT_MAX)
		c->v[idx] += n; /* per-CPU */
}

static __always_inline void offcpu_add_in(void *map, struct offcpu_key *key, __u64 n, __u64 ns)
{
	struct offcpu_val nv = { n, ns }, *v = bpf_map_lookup_elem(map, key);
	long err = 0;

	if (!v) {
		err = bpf_map_update_elem(map, key, &nv, BPF_NOEXIST);
		if (err == -EEXIST)
			v = bpf_map_lookup_elem(map, key);
	}
	if (v) {
		__sync_fetch_and_add(&v->samples, n);
		__sync_fetch_and_add(&v->ns, ns);
		err = 0;
	}
	if (err) {
		offcpu_stat(OFFCPU_STAT_LOST, n);
		count_loss(PROFILE_LOSS_COUNTS_FULL);
	} else {
		offcpu_stat(OFFCPU_STAT_SAMPLES, n);
	}
}

/*
 * --rotate: a count and the user stack it names go to the set of the
 * current interval, between the two steps of this CPU's rotate_seq as in
 * sample_seq(), so that user space empties no set they may still be going
 * to.  offcpu_seq_begin() makes the sequence odd and says the set (0
 * without --rotate); offcpu_seq_end() makes it even again.
 */
static __always_inline __u32 offcpu_seq_begin(__u32 *gen)
{
	__u32 cpu = bpf_get_smp_processor_id();

	*gen = 0;
	if (!rotating)
		return (__u32)-1;
	rotate_seq_step(cpu);
	*gen = rotate_gen & 1;
	return cpu;
}

/* (the CPU, not a pointer into rotate_seq: a pointer kept across the
 * count lost its bounds on 6.1's verifier; rotate_seq_step) */
static __always_inline void offcpu_seq_end(__u32 cpu)
{
	if (cpu != (__u32)-1)
		rotate_seq_step(cpu);
}

/* Count the pending block in set gen.  Its kernel stack was stored at
 * switch-in, in the set of that moment: when the interval changed in
 * between (microseconds, once per --rotate interval), that set is written
 * without this row and the stack is counted lost rather than named in a
 * file that lacks it. */
static __always_inline void offcpu_count(struct offcpu_task *t, __u32 gen)
{
	if (gen != t->kgen && t->pend.k.kernel_stack_id >= 0) {
		t->pend.k.kernel_stack_id = -ENOENT;
		count_loss(PROFILE_LOSS_OTHER);
	}
	/* --slice: the slice the block ended in, when its samples are counted */
	t->pend.k.slice = slice_now();
	if (gen)
		offcpu_add_in(&offcpu_counts_b, &t->pend, t->pend_n, t->pend_ns);
	else
		offcpu_add_in(&offcpu_counts, &t->pend, t->pend_n, t->pend_ns);
	__sync_fetch_and_add(&offcpu_pending, -t->pend_n);
	t->pend_n = 0;
}

/* The state a thread was switched out in; 0: not one we count. */
static __always_inline __u32 offcpu_state_of(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == TASK_RUNNING)
		return offcpu_mode == OFFCPU_MODE_WALL ? OFFCPU_STATE_R : 0;
	if (prev_state & TASK_DEAD_STATE)
		return 0;
	if (prev_state & TASK_INTERRUPTIBLE)
		return OFFCPU_STATE_S;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return OFFCPU_STATE_D;
	return OFFCPU_STATE_T;
}

/* offcpu_store()'s hash, one address a step. */
struct offcpu_hash {
	const struct profile_ustack *st;
	__u64 h;
};

static long offcpu_hash_step(__u32 i, void *data)
{
	struct offcpu_hash *x = data;
	__u64 k = i;

	/* a 64-bit bound on the index, whatever width clang compares in */
	barrier_var(k);
	if (k >= PROFILE_MAX_USTACK_DEPTH || k >= x->st->nr)
		return 1;
	x->h = (x->h ^ x->st->ips[k]) * 0x100000001b3ULL;
	return 0;
}

/* Store a stack already in st (own ids, below PROFILE_CFI_STACK_BASE, as
 * get_own_stack does); the id or < 0.  The hash is a bpf_loop callback:
 * as a loop of 247 steps, inline in each program that stores a stack, it
 * was 30,000 of --wall's verified instructions (handle_offcpu_switch
 * 35,253 -> 11,292 with a 4-step loop). */
static __always_inline long offcpu_store(struct profile_ustack *st, __u32 gen)
{
	struct offcpu_hash x = { .st = st, .h = 0xcbf29ce484222325ULL };
	__u64 h;
	__u32 ids[2];

	bpf_loop(PROFILE_MAX_USTACK_DEPTH, offcpu_hash_step, &x, 0);
	h = stack_hash_mix(x.h);
	ids[0] = (__u32)h & PROFILE_OWN_STACK_MASK;
	ids[1] = (__u32)(h >> 32) & PROFILE_OWN_STACK_MASK;
	return gen ? store_stack_at(&ustacks_b, st, ids, false) : store_stack_at(&ustacks, st, ids, false);
}

/* Count a pending sampled block without its user stack. */
static __always_inline void offcpu_flush(struct offcpu_task *t)
{
	__u32 seq, gen;

	if (!t->pend_n)
		return;
	if (user_stacks) {
		t->pend.k.user_stack_id = -ENOENT;
		offcpu_stat(OFFCPU_STAT_NO_USER_WALK, 1);
	}
	seq = offcpu_seq_begin(&gen);
	offcpu_count(t, gen);
	offcpu_seq_end(seq);
}

/* The unwind tables to walk the pending block's user stack with: NULL
 * without tables (--unwind=fp, or none yet) or when the process's mappings
 * changed since the block was counted (they would unwind another image). */
static __always_inline const struct unwind_proc *offcpu_proc(const struct offcpu_task *t,
							     const struct profile_seen_key *wk)
{
	const struct unwind_proc *proc = NULL;

	if (offcpu_cfi)
		proc = bpf_map_lookup_elem(&unwind_procs, wk);
	if (proc && proc->gen != t->pend.k.map_gen)
		proc = NULL;
	return proc;
}

/* Count the pending block with its user stack (an id, or why there is
 * none) and leave the sequence offcpu_seq_begin() entered. */
static __always_inline void offcpu_count_walked(struct offcpu_task *t, long user_stack_id,
						__u32 gen, __u32 seq)
{
	t->pend.k.user_stack_id = user_stack_id;
	offcpu_stat(OFFCPU_STAT_WALKS, 1);
	offcpu_count(t, gen);
	offcpu_seq_end(seq);
}

/* Whether the thread being switched out (current) is one we record. */
static __always_inline bool offcpu_wanted(struct task_struct *p)
{
	__u32 tgid = p->tgid, tid = p->pid;

	if (!tid)
		return false; /* idle */
	if (!offcpu_kthreads && (p->flags & PF_KTHREAD))
		return false;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return false;
	if (filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return false;
	if (filter_cgroup && !bpf_current_task_under_cgroup(&cgroup_map, 0))
		return false;
	return true;
}

/* next is switched in after a tracked block: its samples, if any. */
static __always_inline void offcpu_switch_in(struct task_struct *next, struct offcpu_task *t,
					     __u64 now)
{
	__u64 d = now - t->out_ns, acc, n = 0;
	struct offcpu_counters *c = offcpu_counters();
	struct unwind_scratch *s;
	__u32 zero = 0;
	long err;

	t->out_ns = 0;
	if ((__s64)d < 0)
		return; /* not expected: the clock is monotonic */
	acc = t->carry_ns + d;
	/* most blocks cross no period: no division for them */
	if (acc >= offcpu_period_ns)
		n = acc / offcpu_period_ns;
	t->carry_ns = acc - n * offcpu_period_ns;
	if (c) {
		c->v[OFFCPU_STAT_BLOCKS]++;
		c->v[OFFCPU_STAT_BLOCKED_NS] += d;
		c->v[OFFCPU_STAT_BLOCKS_SHORT] += !n;
	}
	if (!n)
		return;
	/* still waiting for its walk (blocked again before it resumed) */
	offcpu_flush(t);
	__builtin_memset(&t->pend, 0, sizeof(t->pend));
	t->pend.state = t->state;
	t->pend.k.pid = next->tgid;
	t->pend.k.tid = per_thread ? next->pid : 0;
	t->pend.k.exec_id = next->self_exec_id;
	t->pend.k.map_gen = sample_gen(t->pend.k.pid, t->pend.k.exec_id);
	__builtin_memcpy(t->pend.k.comm, next->comm, sizeof(t->pend.k.comm));
	t->pend.k.user_stack_id = user_stacks ? -ENOENT : PROFILE_STACK_NONE;
	t->pend.k.kernel_stack_id = PROFILE_STACK_NONE;
	t->kgen = rotating ? rotate_gen & 1 : 0;
	if (kernel_stacks) {
		s = bpf_map_lookup_elem(&offcpu_scratch, &zero);
		err = -ENOMEM;
		if (s) {
			err = bpf_get_task_stack(next, s->stack.ips, sizeof(s->stack.ips), 0);
			if (err > 0) {
				s->stack.nr = (__u32)err / sizeof(s->stack.ips[0]);
				s->stack.flags = 0;
				err = offcpu_store(&s->stack, t->kgen);
			} else if (!err) {
				err = -EFAULT;
			}
		}
		t->pend.k.kernel_stack_id = err;
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_KERNEL_ENOMEM);
	}
	t->pend_n = n;
	t->pend_ns = d;
	__sync_fetch_and_add(&offcpu_pending, n);
	/* -K: nothing to walk; no rseq: it will not say when it resumes, its
	 * user stack is lost; exiting (it blocked in do_exit() after the exit
	 * tracepoint, closing files say): it will never resume */
	if (!user_stacks || !next->rseq || (next->flags & PF_EXITING))
		offcpu_flush(t);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct offcpu_task *t;
	__u64 now = offcpu_clock(prev);
	__u32 state = offcpu_state_of(preempt, prev_state);

	if (offcpu_ended)
		return 0;
	/* switched in: a tracked block ends (the idle task and, unless
	 * asked, kernel threads never have one: no lookup for them) */
	t = NULL;
	if (next->pid && (offcpu_kthreads || !(next->flags & PF_KTHREAD)))
		t = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);
	if (t && t->out_ns)
		offcpu_switch_in(next, t, now);
	/* switched out in a state we count: one map update */
	if (state && offcpu_wanted(prev)) {
		t = bpf_task_storage_get(&offcpu_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!t) {
			offcpu_stat(OFFCPU_STAT_LOST, 1);
			return 0;
		}
		if (!t->out_ns && !t->carry_ns && !t->pend_n && !t->state)
			/* first seen: where its first period ends is random,
			 * so that its first block is not favoured */
			t->carry_ns = bpf_get_prandom_u32() % offcpu_period_ns;
		t->out_ns = now;
		t->state = state;
	}
	return 0;
}

/* The thread returns to user space after it was switched out (it is
 * current): walk its user stack for the block that is pending. */
SEC("tp_btf/rseq_update")
int BPF_PROG(handle_offcpu_resume, struct task_struct *task)
{
	struct task_struct *cur;
	struct offcpu_task *t;
	struct unwind_scratch *s;
	const void *regs;
	__u32 zero = 0, gen;
	__u32 seq;
	long err = -EFAULT;

	if (!offcpu_pending || offcpu_ended)
		return 0; /* nearly always: one load */
	cur = bpf_get_current_task_btf();
	t = bpf_task_storage_get(&offcpu_tasks, cur, 0, 0);
	if (!t || !t->pend_n)
		return 0;
	s = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!s || cur->self_exec_id != t->pend.k.exec_id) {
		offcpu_flush(t); /* it exec'd: not that image's stack */
		return 0;
	}
	seq = offcpu_seq_begin(&gen);
	regs = (const void *)bpf_task_pt_regs(cur);
	if (regs && !bpf_probe_read_kernel(&s->pt, sizeof(s->pt), regs) && (s->pt.cs & 3) == 3 &&
	    cur->mm && !in_execve(cur)) {
		struct profile_seen_key wk = { .pid = t->pend.k.pid, .exec_id = t->pend.k.exec_id };
		const struct unwind_proc *proc = offcpu_proc(t, &wk);

		if (offcpu_cfi && (proc || !fp_fallback)) {
			err = walk_user_regs(s, cur, &wk, proc, gen);
		} else {
			/* frame pointers: the kernel's walk of current's user
			 * stack, stored under an id of our own */
			err = bpf_get_stack(ctx, s->stack.ips, sizeof(s->stack.ips), BPF_F_USER_STACK);
			if (err > 0) {
				s->stack.nr = (__u32)err / sizeof(s->stack.ips[0]);
				s->stack.flags = 0;
				err = offcpu_store(&s->stack, gen);
			} else if (!err) {
				err = -EFAULT;
			}
		}
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
		announce_image(cur, wk.pid, wk.exec_id);
	}
	offcpu_count_walked(t, err, gen, seq);
	return 0;
}

/* A thread exits: a sampled block still waiting for its return to user
 * space (a thread killed while it blocked never returns there: the signal
 * is handled before the resume work) is counted now, without a user stack
 * (its mm is gone by this tracepoint), rather than freed with the task's
 * storage and lost. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_offcpu_exit, struct task_struct *p)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct offcpu_task *t;

	if (!offcpu_pending || offcpu_ended)
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, cur, 0, 0);
	if (t)
		offcpu_flush(t);
	return 0;
}

/*
 * Blocks that span the recording's start or end (prof-record runs these
 * two task iterators once each: record/offcpu/offcpu_rec.c).
 *
 * At the start, a thread already blocked has no switch-out record: the
 * start pass gives each thread that is off its CPU in a counted state the
 * pass's time as its switch-out time, so that its block counts from the
 * recording's start.  A thread that switched out since the switch program
 * was attached has its own time already and is left alone.
 *
 * The race: the thread may wake and be switched in between the pass
 * reading its state and storing the time; its switch-in then saw nothing
 * to count and the stored time would stay, to be counted at its next
 * switch-in as a block it did not have.  So the pass reads the state again
 * after storing: on_cpu is set after trace_sched_switch (in
 * prepare_task()), so a thread now on its CPU had its switch-in handled,
 * and the time, if still there, is taken back (compare-and-swap: unless
 * that switch-in counted it, which is right too: it was blocked from the
 * start).  A thread woken but not yet on a CPU keeps it: its switch-in
 * will count it.  --cgroup: the switch program tests current's cgroup
 * (bpf_current_task_under_cgroup), and the iterator's current is
 * prof-record, so this pass tests the task's with the kfunc
 * bpf_task_under_cgroup (Linux 6.5; before it, threads blocked at the
 * start count from their first switch-out).
 */
extern struct cgroup *bpf_cgroup_from_id(__u64 cgid) __ksym __weak;
extern long bpf_task_under_cgroup(struct task_struct *task, struct cgroup *ancestor) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;

/* --cgroup: whether task is in the cgroup or below it, as the switch
 * program's bpf_current_task_under_cgroup() says of current. */
static __always_inline bool offcpu_task_in_cgroup(struct task_struct *task)
{
	struct cgroup *cg;
	bool in;

	if (!offcpu_cgroup_id)
		return false;
	cg = bpf_cgroup_from_id(offcpu_cgroup_id);
	if (!cg)
		return false;
	in = bpf_task_under_cgroup(task, cg);
	bpf_cgroup_release(cg);
	return in;
}

/* The start pass over every thread; cg: with --cgroup's test (a copy of
 * its own, handle_offcpu_start_cg, loaded only where the kernel has the
 * kfuncs: prof-record checks its BTF). */
static __always_inline int offcpu_start_pass(struct bpf_iter__task *ctx, bool cg)
{
	struct task_struct *task = ctx->task;
	struct offcpu_task *t;
	__u32 tgid, tid, state;
	__u64 now;

	if (!task || offcpu_mode == 0)
		return 0;
	tgid = task->tgid;
	tid = task->pid;
	if (!tid)
		return 0;
	if (!offcpu_kthreads && (task->flags & PF_KTHREAD))
		return 0;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	if (filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	if (task->on_cpu || task->exit_state)
		return 0;
	if (filter_cgroup && (!cg || !offcpu_task_in_cgroup(task)))
		return 0;
	state = offcpu_state_of(false, task->__state);
	if (!state)
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		offcpu_stat(OFFCPU_STAT_LOST, 1);
		return 0;
	}
	if (t->out_ns)
		return 0; /* switched out since the attach: its own time */
	if (!t->carry_ns && !t->pend_n && !t->state)
		t->carry_ns = bpf_get_prandom_u32() % offcpu_period_ns;
	now = offcpu_clock(bpf_get_current_task_btf());
	t->state = state;
	t->out_ns = now;
	if (task->on_cpu) /* woke meanwhile and its switch-in is handled */
		__sync_val_compare_and_swap(&t->out_ns, now, 0);
	return 0;
}

SEC("iter/task")
int handle_offcpu_start(struct bpf_iter__task *ctx)
{
	return offcpu_start_pass(ctx, false);
}

SEC("iter/task")
int handle_offcpu_start_cg(struct bpf_iter__task *ctx)
{
	return offcpu_start_pass(ctx, true);
}

/*
 * At the end, a thread still blocked is never switched in while we
 * record.  The end pass (run after offcpu_ended stopped the other
 * programs) counts each such block up to the pass's time as a switch-in
 * would, its kernel stack from the task's saved stack (bpf_get_task_stack:
 * the thread is not current), then deletes the thread's state: nothing is
 * left in offcpu_tasks.  Its phases (offcpu_end_phase, set by prof-record,
 * record/offcpu/offcpu_rec.c):
 * - COLLECT, over every thread: count each block under way; a thread whose
 *   block gave samples keeps its state and is named (offcpu_end_rec: its
 *   saved user sp) for the walk, and its image announced (a process that
 *   only slept while recorded has no unwind tables yet: prof-record reads
 *   the announcements and loads them before the walk); any other is
 *   counted and deleted.
 * - WALK, over one named thread at a time (a link for that tid): its user
 *   stack, which cannot be read from here (the thread is not current, and
 *   an iterator may not sleep for bpf_copy_from_user_task), but which
 *   prof-record has just copied from the thread to the same addresses of
 *   its own memory (it is current here): so bpf_probe_read_user in the
 *   unwinder's walk, from the thread's saved entry registers, reads the
 *   thread's stack as it was, and the walk is the sampler's own.  Then the
 *   state is deleted.
 * - FINAL, over every thread: what is left (no copy could be made, more
 *   threads than prof-record names) is counted without a user stack
 *   (no_user_stack), as are sampled blocks still waiting for their thread
 *   to return to user space; and deleted.
 * offcpu_end_left counts the states a pass found; a pass after FINAL must
 * find none.
 */
__u64 offcpu_end_left = 0;

/*
 * Where the end pass ends a block: now, unless the thread was switched in
 * since its block began (it woke after offcpu_ended stopped the switch
 * program, in the grace period before the pass): then its block ended at
 * that switch-in, which the scheduler keeps as sched_info.last_arrival,
 * read from the same clock (rq_clock) as offcpu_clock(); counting to now
 * would add the time it has run since.  Where that clock or field is not
 * there (no CONFIG_FAIR_GROUP_SCHED, no CONFIG_SCHED_INFO), now.
 */
static __always_inline __u64 offcpu_end_time(struct task_struct *task, struct offcpu_task *t)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u64 now = offcpu_clock(cur), arrived;

	if (bpf_core_field_exists(cur->se.cfs_rq) && bpf_core_field_exists(cur->se.cfs_rq->rq) &&
	    bpf_core_field_exists(task->sched_info.last_arrival)) {
		arrived = task->sched_info.last_arrival;
		if (arrived > t->out_ns && arrived < now)
			now = arrived;
	}
	return now;
}
__u32 offcpu_end_phase = OFFCPU_END_FINAL;

/* The walk phase: task's user stack, from prof-record's copy. */
static __always_inline void offcpu_end_walk(struct task_struct *task, struct offcpu_task *t)
{
	struct unwind_scratch *s;
	const void *regs;
	__u32 zero = 0, gen;
	__u32 seq;
	long err = -EFAULT;

	if (!t->pend_n)
		return;
	s = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!s || task->self_exec_id != t->pend.k.exec_id) {
		offcpu_flush(t);
		return;
	}
	seq = offcpu_seq_begin(&gen);
	regs = (const void *)bpf_task_pt_regs(task);
	if (regs && !bpf_probe_read_kernel(&s->pt, sizeof(s->pt), regs) && (s->pt.cs & 3) == 3 &&
	    task->mm) {
		struct profile_seen_key wk = { .pid = t->pend.k.pid, .exec_id = t->pend.k.exec_id };

		/* without tables: the unwinder's frame-pointer walk */
		err = walk_user_regs(s, task, &wk, offcpu_proc(t, &wk), gen);
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
		announce_image(task, wk.pid, wk.exec_id);
	}
	offcpu_count_walked(t, err, gen, seq);
}

SEC("iter/task")
int handle_offcpu_end(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_task *t;
	struct pt_regs *regs;

	if (!task || offcpu_mode == 0)
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, task, 0, 0);
	if (!t)
		return 0;
	if (offcpu_end_phase == OFFCPU_END_WALK) {
		offcpu_end_walk(task, t);
		bpf_task_storage_delete(&offcpu_tasks, task);
		return 0;
	}
	__sync_fetch_and_add(&offcpu_end_left, 1);
	if (t->out_ns)
		offcpu_switch_in(task, t, offcpu_end_time(task, t));
	if (offcpu_end_phase == OFFCPU_END_COLLECT && t->pend_n && user_stacks && task->mm &&
	    task->self_exec_id == t->pend.k.exec_id) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (regs && (BPF_CORE_READ(regs, cs) & 3) == 3) {
			struct offcpu_end_rec rec = {
				.pid = task->tgid, .tid = task->pid, .sp = BPF_CORE_READ(regs, sp),
			};

			/* a process never sampled nor walked while recorded
			 * has no unwind tables yet: prof-record loads them
			 * before the walk phase */
			announce_image(task, rec.pid, t->pend.k.exec_id);
			bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
			return 0; /* kept for the walk phase */
		}
	}
	offcpu_flush(t);
	bpf_task_storage_delete(&offcpu_tasks, task);
	return 0;
}
