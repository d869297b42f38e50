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

#include "offcpu/offcpu_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

/* The walk's scratch, apart from the sampler's: a cpu-clock sample (an
 * hrtimer interrupt) may run in the middle of rseq_update's walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
	__uint(max_entries, 1);
} offcpu_scratch SEC(".maps");

static __always_inline struct profile_ustack *offcpu_stack_buf(void)
{
	__u32 zero = 0;
	struct unwind_scratch *s = bpf_map_lookup_elem(&offcpu_scratch, &zero);

	return s ? &s->stack : NULL;
}

/* Store a stack already in st, as get_own_stack does (own ids, below
 * PROFILE_CFI_STACK_BASE); the id or < 0.  Its hash is stack_scan()'s
 * bpf_loop: as a loop of 247 steps, inline in each program that stores a
 * stack, it was 30,000 of --wall's verified instructions. */
static __always_inline long offcpu_store(struct profile_ustack *st, __u32 gen)
{
	return store_own_stack(st, gen);
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
		offcpu_switch_in(next, t, now, true);
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
		if (t->out_ns)
			offcpu_close_unseen(prev, t, now);
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

	if (offcpu_ended)
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, cur, 0, 0);
	if (!t)
		return 0;
	if (t->out_ns)
		offcpu_close_unseen(cur, t, offcpu_clock(cur));
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
	__u32 state;
	__u64 now;

	if (!task || offcpu_mode == 0 || !offcpu_thread_wanted(task))
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
	    BPF_CORE_READ(task, mm)) {
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
		offcpu_switch_in(task, t, offcpu_end_time(task, t), true);
	if (offcpu_end_phase == OFFCPU_END_COLLECT && t->pend_n && user_stacks && BPF_CORE_READ(task, mm) &&
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
