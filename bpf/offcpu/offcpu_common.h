/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offcpu_common.h - what the two variants of the off-CPU programs share:
 * offcpu.bpf.c (task storage, bpf_loop, bpf_task_pt_regs: Linux 6.1+) and
 * offcpu_lean.bpf.c (a preallocated hash map by tid, tail calls: kernels
 * without them, from 5.10).  The settings and counters user space reads,
 * the counting rule (SPEC.md 6.13: the carry, the period) and the stores
 * of a counted block are here, so that both variants count alike.  The
 * variants are linked into two objects of the same layout (bpf/CMakeLists.txt
 * checks it), so the globals below are defined here once, in this order.
 *
 * Each includer defines, after including this header, where a stack is
 * taken (offcpu_stack_buf: per-CPU memory) and how it is stored
 * (offcpu_store: an id below PROFILE_CFI_STACK_BASE in ustacks or
 * ustacks_b, or < 0), both declared here.
 */
#ifndef BPROF_OFFCPU_COMMON_H
#define BPROF_OFFCPU_COMMON_H

#include "bprof.bpf.h"
#include "offcpu/offcpu.h"
#define TASK_RUNNING 0x0
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD_STATE 0x80
#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000
#define ENOENT 2
#define ESRCH 3

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


/* The end pass (handle_offcpu_end): the thread states a pass found, and
 * its phase (OFFCPU_END_*, set by prof-record). */
__u64 offcpu_end_left = 0;
__u32 offcpu_end_phase = OFFCPU_END_FINAL;
/* The walk phase's thread, for kernels whose task iterator cannot be
 * given one (before 6.1: offcpu_lean.bpf.c's pass then visits every
 * thread and walks this one only; offcpu.bpf.c's link names it). */
__u32 offcpu_end_tid = 0;

static __always_inline struct profile_ustack *offcpu_stack_buf(void);
static __always_inline long offcpu_store(struct profile_ustack *st, __u32 gen);

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

/* Whether thread p passes the filters every pass shares: not idle, not a
 * kernel thread unless asked for, -p and --tid.  --cgroup's test is each
 * caller's own (current's helper, or the kfuncs of the start pass). */
static __always_inline bool offcpu_thread_wanted(struct task_struct *p)
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
	return true;
}

/* Whether the thread being switched out (current) is one we record. */
static __always_inline bool offcpu_wanted(struct task_struct *p)
{
	return offcpu_thread_wanted(p) &&
	       !(filter_cgroup && !bpf_current_task_under_cgroup(&cgroup_map, 0));
}

/* next is switched in after a tracked block: its samples, if any.  seen:
 * this is the switch-in (its stacks are the block's); else the block ended
 * at now unseen (offcpu_close_unseen) and its samples have no stacks. */
static __always_inline void offcpu_switch_in(struct task_struct *next, struct offcpu_task *t,
					     __u64 now, bool seen)
{
	__u64 d = now - t->out_ns, acc, n = 0;
	struct offcpu_counters *c = offcpu_counters();
	struct profile_ustack *st;
	__u32 seq, gen;
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
	if (!seen) {
		/* the stacks it is in now are not the block's */
		if (user_stacks)
			t->pend.k.user_stack_id = -ESRCH;
		if (kernel_stacks)
			t->pend.k.kernel_stack_id = -ESRCH;
		t->pend_n = n;
		t->pend_ns = d;
		__sync_fetch_and_add(&offcpu_pending, n);
		seq = offcpu_seq_begin(&gen);
		offcpu_count(t, gen);
		offcpu_seq_end(seq);
		return;
	}
	if (kernel_stacks) {
		st = offcpu_stack_buf();
		err = -ENOMEM;
		if (st) {
			err = bpf_get_task_stack(next, st->ips, sizeof(st->ips), 0);
			if (err > 0) {
				st->nr = (__u32)err / sizeof(st->ips[0]);
				st->flags = 0;
				err = offcpu_store(st, t->kgen);
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
	if (!user_stacks || !BPF_CORE_READ(next, rseq) || (next->flags & PF_EXITING))
		offcpu_flush(t);
}

/*
 * Thread p, tracked as blocked since t->out_ns, is running (it is being
 * switched out again, or it exits) at now, and no program run saw it
 * switched in.  That is not expected: every switch passes sched_switch.
 * But a block was seen lost so (issue 50: a thread's whole pthread_join,
 * 1 recording in ~60 with the lean programs), and a block left open would
 * be counted from out_ns to its next switch-in, its running time too, or
 * not at all if it exits.  The scheduler's own record of when p was last
 * switched in (sched_info.last_arrival, the rq clock as ours: the end
 * pass uses it too) ends the block where it ended; its samples are
 * counted without stacks (-ESRCH: the stacks p is in now are not the
 * block's), and OFFCPU_STAT_UNSEEN says how often.  Without that field,
 * or with an arrival not inside the block, the block is dropped, counted
 * in the stat all the same.
 */
static __always_inline void offcpu_close_unseen(struct task_struct *p, struct offcpu_task *t,
						__u64 now)
{
	__u64 arrived = 0;

	offcpu_stat(OFFCPU_STAT_UNSEEN, 1);
	if (bpf_core_field_exists(p->se.cfs_rq) && bpf_core_field_exists(p->sched_info.last_arrival))
		arrived = BPF_CORE_READ(p, sched_info.last_arrival);
	if (arrived > t->out_ns && arrived <= now)
		offcpu_switch_in(p, t, arrived, false);
	t->out_ns = 0;
}

#endif /* BPROF_OFFCPU_COMMON_H */
