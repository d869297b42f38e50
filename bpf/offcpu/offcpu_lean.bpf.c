// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_lean.bpf.c - off-CPU and wall-clock time on kernels that lack
 * what offcpu.bpf.c uses (Debian 11's 5.10, RHEL 9's 5.14, Ubuntu 22.04's
 * 5.15): task storage and bpf_get_current_task_btf (5.11),
 * bpf_task_pt_regs (5.15), bpf_loop (5.17), hash maps that a program may
 * grow anywhere (6.1).  Same programs, same names, same rule
 * (offcpu_common.h: SPEC.md 6.13's carry and period), linked into an
 * object of its own with the same layout (profile_lean.bpf.o), which
 * prof-record loads in place of profile.bpf.o (record/offcpu/): the
 * object's 32 programs are what libbpf 1.1's loader program holds.
 *
 * What differs, and why:
 * - a thread's state is an entry of a preallocated hash map keyed by its
 *   tid, deleted when the thread exits (sched_process_exit) and by the end
 *   pass; preallocated because these programs run under the scheduler's
 *   locks, where an allocation before 6.1 may wake kswapd and so take a
 *   runqueue lock again.  A thread switched out when the map is full is
 *   counted lost (OFFCPU_STAT_LOST), not tracked;
 * - the thread switched out is in the state prev->__state (or ->state
 *   before 5.14) says at the tracepoint: sched_switch passes that state
 *   only since 5.18;
 * - a user stack is walked at the return to user space as there, from the
 *   user registers at the top of the thread's kernel stack (as the tail
 *   walk's, tailwalk/tailwalk.bpf.c) with the unwind tables, a few frames
 *   a run chained by tail calls of the program to itself; without tables,
 *   the kernel's frame-pointer walk;
 * - stacks are stored by a hash computed inline (no bpf_loop), kernel and
 *   frame-pointer ones under ids from PROFILE_KWALK_STACK_BASE: the kernel's
 *   stack maps (bpf_get_stackid) cannot hold a stack read by
 *   bpf_get_task_stack, and where the recording keeps no own stacks (before
 *   6.1) ids below that are the stack maps';
 * - the start pass takes a thread's time back with a plain store, not a
 *   compare-and-swap (5.12);
 * - the end pass's walk of a blocked thread's copied stack is the same
 *   chain of tail calls (the iterator's own), over every thread but for
 *   the one prof-record names (offcpu_end_tid): task iterators take no
 *   thread before 6.1.
 */
/* as tailwalk.bpf.c: no atomic or (5.12), no stack window, no chunk cache */
#define UNWIND_NO_ATOMIC_OR
#define UNWIND_NO_WINDOW
#define UNW_CHUNK_CACHE 0
#include "unwind/unwind_walk.h"
#include "offcpu/offcpu_common.h"

/* x86-64: the user registers at the top of a task's kernel stack, and the
 * segments that tell a user frame (as tailwalk.bpf.c) */
#define OFFCPU_THREAD_SIZE 16384
#define OFFCPU_USER_CS 0x33
#define OFFCPU_USER_SS 0x2b

/* Sized by prof-record (offcpu_configure). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct offcpu_task);
	__uint(max_entries, 1);
} offcpu_tasks SEC(".maps");

/* A user-stack walk between the runs of the resume program on this CPU
 * (it runs with preemption off: no other thread's walk comes between). */
struct offcpu_lean_walk {
	struct unwind_scratch s;
	struct profile_seen_key wk;
	__u32 tid;     /* the walked thread */
	__u32 walking; /* a walk is under way: the next run continues it */
	__u32 gen;     /* --rotate's set */
	__u32 seq;     /* offcpu_seq_begin()'s CPU, for offcpu_seq_end() */
	__u32 cfi;     /* the walk has the process's tables (else frame
			* pointers, the unwinder's; the end pass only) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_lean_walk);
	__uint(max_entries, 1);
} offcpu_scratch SEC(".maps");

/* handle_offcpu_resume itself, put in slot 0 by prof-record after load. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} offcpu_lean_resume_self SEC(".maps");

/* The end pass's walk, apart from the resume program's: an iterator may be
 * preempted, and the resume program may run on its CPU meanwhile. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_lean_walk);
	__uint(max_entries, 1);
} offcpu_lean_end_walk SEC(".maps");

/* handle_offcpu_end itself, put in slot 0 by prof-record after load. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} offcpu_lean_end_self SEC(".maps");

static __always_inline struct offcpu_lean_walk *offcpu_walk_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&offcpu_scratch, &zero);
}

static __always_inline struct profile_ustack *offcpu_stack_buf(void)
{
	struct offcpu_lean_walk *w = offcpu_walk_state();

	return w ? &w->s.stack : NULL;
}

/* Whether two stacks of the kernel's walk are the same: as
 * same_stack_inline(), to their 127 words (PROFILE_MAX_STACK_DEPTH) rather
 * than a walked stack's 247, which the verifier walks step by step in
 * every program that stores a stack. */
static __always_inline bool offcpu_same_kstack(const struct profile_ustack *a,
					       const struct profile_ustack *b)
{
	if (a->nr != b->nr)
		return false;
	for (int i = 0; i < PROFILE_MAX_STACK_DEPTH; i++) {
		if (i >= (int)a->nr)
			break;
		if (a->ips[i] != b->ips[i])
			return false;
	}
	return true;
}

/* Store st under the first of two candidate ids that is free or already
 * holds it (store_stack_at()'s rule); the id, or < 0 on loss. */
static __always_inline long offcpu_store_at(void *map, struct profile_ustack *st, __u32 ids[2])
{
	for (int t = 0; t < 2; t++) {
		struct profile_ustack *old = bpf_map_lookup_elem(map, &ids[t]);
		long err;

		if (!old) {
			err = bpf_map_update_elem(map, &ids[t], st, BPF_NOEXIST);
			if (!err)
				return ids[t];
			if (err != -EEXIST)
				return -ENOMEM; /* full: as store_stack_at() */
			old = bpf_map_lookup_elem(map, &ids[t]);
			if (!old)
				return -ENOMEM;
		}
		if (offcpu_same_kstack(old, st))
			return ids[t];
	}
	return -EEXIST;
}

/* FNV-1a over the addresses as an inline loop: bpf_loop is 5.17.  The
 * stacks stored here are the kernel's walks (127 words at most). */
static __always_inline long offcpu_store(struct profile_ustack *st, __u32 gen)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 ids[2];

	if (st->nr > PROFILE_MAX_STACK_DEPTH)
		st->nr = PROFILE_MAX_STACK_DEPTH;
	for (int i = 0; i < PROFILE_MAX_STACK_DEPTH; i++) {
		if (i >= (int)st->nr)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
	}
	h = stack_hash_mix(h);
	ids[0] = PROFILE_KWALK_STACK_BASE | ((__u32)h & PROFILE_OWN_STACK_MASK);
	ids[1] = PROFILE_KWALK_STACK_BASE | ((__u32)(h >> 32) & PROFILE_OWN_STACK_MASK);
	return gen ? offcpu_store_at(&ustacks_b, st, ids) : offcpu_store_at(&ustacks, st, ids);
}

/* The thread's state, created when asked (zeroed); NULL when it has none,
 * or none could be made (the map is full). */
static __always_inline struct offcpu_task *offcpu_task_of(__u32 tid, bool create)
{
	struct offcpu_task *t = bpf_map_lookup_elem(&offcpu_tasks, &tid), zero;

	if (t || !create)
		return t;
	__builtin_memset(&zero, 0, sizeof(zero));
	bpf_map_update_elem(&offcpu_tasks, &tid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&offcpu_tasks, &tid);
}

/* The state a task is in: task_struct's __state, "state" before 5.14. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int offcpu_task_state(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return (unsigned int)BPF_CORE_READ((struct task_struct___pre514 *)p, state);
}

/* The clock of offcpu_clock() through current, which the passes only
 * have as bpf_get_current_task() (no BTF pointer before 5.11). */
static __always_inline __u64 offcpu_clock_current(void)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();

	if (bpf_core_field_exists(cur->se.cfs_rq) && bpf_core_field_exists(cur->se.cfs_rq->rq))
		return BPF_CORE_READ(cur, se.cfs_rq, rq, clock);
	return bpf_ktime_get_ns();
}

/* A task's user registers, saved at the top of its kernel stack (what
 * bpf_task_pt_regs gives from 5.15); 0, or -1 when they are not a user
 * frame's. */
static __always_inline int offcpu_user_regs(struct task_struct *task, struct user_regs *pt)
{
	void *stack = BPF_CORE_READ(task, stack);

	if (!stack || bpf_probe_read_kernel(pt, sizeof(*pt),
					    stack + OFFCPU_THREAD_SIZE - sizeof(struct user_regs)))
		return -1;
	if (pt->cs != OFFCPU_USER_CS || pt->ss != OFFCPU_USER_SS || (long)pt->ip < 0)
		return -1;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct offcpu_task *t;
	__u64 now;
	__u32 state;

	if (offcpu_ended)
		return 0;
	now = offcpu_clock(prev);
	t = NULL;
	if (next->pid && (offcpu_kthreads || !(next->flags & PF_KTHREAD)))
		t = offcpu_task_of(next->pid, false);
	if (t && t->out_ns)
		offcpu_switch_in(next, t, now, true);
	state = offcpu_state_of(preempt, offcpu_task_state(prev));
	if (state && offcpu_wanted(prev)) {
		t = offcpu_task_of(prev->pid, true);
		if (!t) {
			offcpu_stat(OFFCPU_STAT_LOST, 1); /* the map is full */
			return 0;
		}
		if (!t->out_ns && !t->carry_ns && !t->pend_n && !t->state)
			t->carry_ns = bpf_get_prandom_u32() % offcpu_period_ns;
		if (t->out_ns)
			offcpu_close_unseen(prev, t, now);
		t->out_ns = now;
		t->state = state;
	}
	return 0;
}

/* A walk of thread tid's stack begins in w, its registers in w->s.pt;
 * runs of the program go on with it until it is done. */
static __always_inline void offcpu_walk_begin(struct offcpu_lean_walk *w, __u32 tid, __u32 gen,
					      __u32 seq)
{
	w->tid = tid;
	w->gen = gen;
	w->seq = seq;
	w->walking = 1;
	unwind_walk_start(&w->s);
	unwind_count(UNWIND_STAT_SAMPLES);
}

/* The walk of w is over: its stack stored, the pending block counted. */
static __always_inline void offcpu_walk_done(struct offcpu_lean_walk *w, struct task_struct *cur)
{
	struct offcpu_task *t;
	long err;

	w->walking = 0;
	err = unwind_walk_end(&w->s);
	if (!err)
		err = w->gen ? store_ustack_in(&ustacks_b, &w->s.stack, w->s.hash, true)
			     : store_ustack_in(&ustacks, &w->s.stack, w->s.hash, true);
	if (err < 0)
		stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
	if (w->s.events & UNWIND_EV_UNMAPPED)
		ask_remap(cur, &w->wk);
	announce_image(cur, w->wk.pid, w->wk.exec_id);
	t = offcpu_task_of(w->tid, false);
	if (t && t->pend_n)
		offcpu_count_walked(t, err, w->gen, w->seq);
	else
		offcpu_seq_end(w->seq);
}

/* The thread returns to user space (it is current, task): walk its user
 * stack for the pending block, or go on with the walk a previous run of
 * this program began (a tail call keeps the context). */
SEC("tp_btf/rseq_update")
int BPF_PROG(handle_offcpu_resume, struct task_struct *task)
{
	struct offcpu_lean_walk *w;
	struct offcpu_task *t;
	const struct unwind_proc *proc = NULL;
	__u32 tid, gen, seq;
	long err = -EFAULT;

	if (!offcpu_pending)
		return 0; /* nearly always: one load */
	w = offcpu_walk_state();
	if (!w)
		return 0;
	tid = task->pid;
	if (!w->walking || w->tid != tid) {
		w->walking = 0;
		if (offcpu_ended)
			return 0;
		t = offcpu_task_of(tid, false);
		if (!t || !t->pend_n)
			return 0;
		if (task->self_exec_id != t->pend.k.exec_id) {
			offcpu_flush(t); /* it exec'd: not that image's stack */
			return 0;
		}
		seq = offcpu_seq_begin(&gen);
		if (offcpu_user_regs(task, &w->s.pt) || !task->mm || in_execve(task)) {
			offcpu_count_walked(t, err, gen, seq);
			return 0;
		}
		w->wk.pid = t->pend.k.pid;
		w->wk.exec_id = t->pend.k.exec_id;
		proc = offcpu_proc(t, &w->wk);
		if (!proc) {
			/* no tables (--unwind=fp, or none yet): the kernel's
			 * frame-pointer walk of current's user stack */
			err = bpf_get_stack(ctx, w->s.stack.ips, PROFILE_MAX_STACK_DEPTH * sizeof(__u64),
					    BPF_F_USER_STACK);
			if (err > 0) {
				w->s.stack.nr = (__u32)err / sizeof(w->s.stack.ips[0]);
				w->s.stack.flags = 0;
				err = offcpu_store(&w->s.stack, gen);
			} else if (!err) {
				err = -EFAULT;
			}
			if (err < 0)
				stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
			announce_image(task, w->wk.pid, w->wk.exec_id);
			offcpu_count_walked(t, err, gen, seq);
			return 0;
		}
		offcpu_walk_begin(w, tid, gen, seq);
	} else {
		proc = bpf_map_lookup_elem(&unwind_procs, &w->wk);
	}
	for (int i = 0; i < UNWIND_TAIL_FRAMES; i++) {
		if (unwind_walk_frame(&w->s, proc)) {
			offcpu_walk_done(w, task);
			return 0;
		}
	}
	bpf_tail_call(ctx, &offcpu_lean_resume_self, 0);
	/* no tail call left (or the slot is empty): a truncated stack */
	w->s.result = -1;
	offcpu_walk_done(w, task);
	return 0;
}

/* A thread exits: its pending block counted (as offcpu.bpf.c's), and its
 * entry deleted, which task storage did by itself. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_offcpu_exit, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct offcpu_task *t;

	if (offcpu_ended)
		return 0;
	t = offcpu_task_of(tid, false);
	if (!t)
		return 0;
	if (t->out_ns)
		offcpu_close_unseen(p, t, offcpu_clock(p));
	offcpu_flush(t);
	bpf_map_delete_elem(&offcpu_tasks, &tid);
	return 0;
}

/* The start pass (offcpu.bpf.c's, which says why), without --cgroup's
 * kfuncs and with the time taken back by a plain store: should the
 * thread, between the pass's two reads, have been switched in, counted,
 * and switched out again, its new switch-out time is lost with it and that
 * one block not counted - never counted twice. */
static __always_inline int offcpu_start_pass(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_task *t;
	__u32 tid, state;
	__u64 now;

	if (!task || offcpu_mode == 0 || !offcpu_thread_wanted(task))
		return 0;
	tid = task->pid;
	if (task->on_cpu || task->exit_state || filter_cgroup)
		return 0;
	state = offcpu_state_of(false, offcpu_task_state(task));
	if (!state)
		return 0;
	t = offcpu_task_of(tid, true);
	if (!t) {
		offcpu_stat(OFFCPU_STAT_LOST, 1);
		return 0;
	}
	if (t->out_ns)
		return 0;
	if (!t->carry_ns && !t->pend_n && !t->state)
		t->carry_ns = bpf_get_prandom_u32() % offcpu_period_ns;
	now = offcpu_clock_current();
	t->state = state;
	t->out_ns = now;
	if (task->on_cpu && t->out_ns == now)
		t->out_ns = 0;
	return 0;
}

SEC("iter/task")
int handle_offcpu_start(struct bpf_iter__task *ctx)
{
	return offcpu_start_pass(ctx);
}

/* (a name the object's layout needs; --cgroup's threads count from their
 * first switch-out here) */
SEC("iter/task")
int handle_offcpu_start_cg(struct bpf_iter__task *ctx)
{
	return offcpu_start_pass(ctx);
}

/* The end pass's walk phase (offcpu.bpf.c's offcpu_end_walk()): task's
 * user stack from prof-record's copy at the same addresses, by the tail
 * walk's steps from its saved registers, the next frames in the next run
 * of this program (a tail call keeps the context: the same task); then
 * its state deleted.  A pass over every thread (no task iterator takes a
 * thread before 6.1): only offcpu_end_tid's. */
static __always_inline int offcpu_end_walk(struct bpf_iter__task *ctx, struct task_struct *task,
					   __u32 tid)
{
	__u32 zero = 0, gen, seq;
	struct offcpu_lean_walk *w = bpf_map_lookup_elem(&offcpu_lean_end_walk, &zero);
	const struct unwind_proc *proc = NULL;
	struct offcpu_task *t;

	if (!w || tid != offcpu_end_tid)
		return 0;
	if (!w->walking || w->tid != tid) {
		w->walking = 0;
		t = offcpu_task_of(tid, false);
		if (!t)
			return 0;
		if (!t->pend_n || task->self_exec_id != t->pend.k.exec_id) {
			offcpu_flush(t);
			bpf_map_delete_elem(&offcpu_tasks, &tid);
			return 0;
		}
		seq = offcpu_seq_begin(&gen);
		if (offcpu_user_regs(task, &w->s.pt) || !task->mm) {
			offcpu_count_walked(t, -EFAULT, gen, seq);
			bpf_map_delete_elem(&offcpu_tasks, &tid);
			return 0;
		}
		w->wk.pid = t->pend.k.pid;
		w->wk.exec_id = t->pend.k.exec_id;
		proc = offcpu_proc(t, &w->wk);
		w->cfi = proc != NULL;
		offcpu_walk_begin(w, tid, gen, seq);
	} else if (w->cfi) {
		proc = bpf_map_lookup_elem(&unwind_procs, &w->wk);
	}
	for (int i = 0; i < UNWIND_TAIL_FRAMES; i++) {
		if (unwind_walk_frame(&w->s, proc)) {
			offcpu_walk_done(w, task);
			bpf_map_delete_elem(&offcpu_tasks, &tid);
			return 0;
		}
	}
	bpf_tail_call(ctx, &offcpu_lean_end_self, 0);
	w->s.result = -1;
	offcpu_walk_done(w, task);
	bpf_map_delete_elem(&offcpu_tasks, &tid);
	return 0;
}

/* The end pass: offcpu.bpf.c's three phases (which it says why), the
 * block's end as its offcpu_end_time(). */
SEC("iter/task")
int handle_offcpu_end(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_lean_walk *w;
	struct offcpu_task *t;
	__u64 now, arrived;
	__u32 tid, zero = 0;

	if (!task || offcpu_mode == 0)
		return 0;
	tid = task->pid;
	if (offcpu_end_phase == OFFCPU_END_WALK)
		return offcpu_end_walk(ctx, task, tid);
	t = offcpu_task_of(tid, false);
	if (!t)
		return 0;
	__sync_fetch_and_add(&offcpu_end_left, 1);
	if (t->out_ns) {
		now = offcpu_clock_current();
		if (bpf_core_field_exists(task->se.cfs_rq) && bpf_core_field_exists(task->sched_info.last_arrival)) {
			arrived = task->sched_info.last_arrival;
			if (arrived > t->out_ns && arrived < now)
				now = arrived;
		}
		offcpu_switch_in(task, t, now, true);
	}
	w = bpf_map_lookup_elem(&offcpu_lean_end_walk, &zero);
	if (offcpu_end_phase == OFFCPU_END_COLLECT && w && t->pend_n && user_stacks && task->mm &&
	    task->self_exec_id == t->pend.k.exec_id && !offcpu_user_regs(task, &w->s.pt)) {
		struct offcpu_end_rec rec = { .pid = task->tgid, .tid = tid, .sp = w->s.pt.sp };

		/* its tables, before the walk phase (offcpu.bpf.c) */
		announce_image(task, rec.pid, t->pend.k.exec_id);
		bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
		return 0; /* kept for the walk phase */
	}
	offcpu_flush(t);
	bpf_map_delete_elem(&offcpu_tasks, &tid);
	return 0;
}
