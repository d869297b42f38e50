// SPDX-License-Identifier: Apache-2.0
/*
 * tailwalk.bpf.c - the sampler of kernels without bpf_loop (before Linux
 * 5.17: Debian 11's 5.10, RHEL 9's 5.14, Ubuntu 22.04's 5.15).
 *
 * profile.bpf.c's samplers lean on what those kernels' verifiers refuse,
 * even in code a setting makes unreachable: bpf_loop and bpf_find_vma
 * callbacks (BPF_PSEUDO_FUNC, 5.13), global functions with pointer
 * arguments (5.12), bpf_get_current_task_btf (5.11), bpf_task_pt_regs
 * (5.15).  This one uses none of them.  It records the kernel's stack and
 * either the kernel's frame-pointer walk of the user stack, or, where
 * prof-record loaded unwind tables (tailwalk_cfi), the unwinder's walk
 * over them (unwind_step.h, the same step as profile.bpf.c's), a few
 * frames per run of the program: the walk's state is kept in a per-CPU
 * map between runs, and the program tail-calls itself for the next
 * frames, as the OpenTelemetry profiler's native unwinder does on 4.19+.
 * The kernel allows 33 tail calls: TAILWALK_FRAMES frames a run bound the
 * walk at 34 x TAILWALK_FRAMES (unwind.h), above the kernel's own 127.
 *
 * Python frames are named as in the bpf_loop walk, by the same step
 * inline (python/python_frame.h): a Python frame takes one of a run's
 * TAILWALK_FRAMES turns, and the thread's state, when not in the cache,
 * is looked for among the first PYTHON_LEAN_THREADS threads only.
 *
 * What it leaves out, which needs the helpers above: V8 and HotSpot
 * frames (prof-record says so when it loads it); and the tables' USED and
 * WANTED flags, which need an atomic or (5.12).  Mapping generations it
 * carries: the lean mm lock hook (profile.bpf.c) reads each change itself.
 */
/* The searches inline (unwind_step.h's default): a global function with
 * pointer arguments is refused before 5.12, and a static one would be two
 * more programs in the object, past the 32 that libbpf 1.1's loader
 * program holds (record/DESIGN.md, "The BPF side"). */
#define UNWIND_NO_ATOMIC_OR /* 5.12: no BPF_ATOMIC or before (unwind_env.h) */
#define UNWIND_NO_WINDOW    /* no stack window: verification (unwind_env.h) */
#define UNW_CHUNK_CACHE 0   /* likewise (unwind_step.h) */
#include "unwind/unwind_walk.h"
/* the thread list walked by a bounded loop, not bpf_loop's callback */
#define PYTHON_NO_BPF_LOOP
#include "python/python_frame.h"

#define TAILWALK_FRAMES UNWIND_TAIL_FRAMES
_Static_assert(34 * TAILWALK_FRAMES >= 127, "the walk reaches the kernel's depth in 33 tail calls");

/* x86-64's user code and stack segments, which tell a user frame */
#define TAILWALK_USER_CS 0x33
#define TAILWALK_USER_SS 0x2b

/* Set by prof-record: walk with the unwind tables (else frame pointers). */
const volatile bool tailwalk_cfi = false;

/* The walk between two runs of the program on this CPU (a perf_event
 * program does not nest on a CPU, so the state is the sample's alone). */
struct tailwalk_state {
	struct unwind_scratch s;
	struct profile_key key;
	__u32 walking; /* a walk is under way: the next run continues it */
	__u32 gen;     /* --rotate's set */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct tailwalk_state);
	__uint(max_entries, 1);
} tailwalk_states SEC(".maps");

/* This program itself, put in slot 0 by prof-record after load. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tailwalk_self SEC(".maps");


/* The sampled task's user registers: the context's in user mode, else
 * those saved at the top of its kernel stack (what bpf_task_pt_regs gives
 * from 5.15), checked to be a user frame's. */
static __always_inline int tw_user_regs(struct bpf_perf_event_data *ctx, struct task_struct *task,
					struct user_regs *pt)
{
	const struct user_regs *c = ctx_regs(ctx);
	void *stack;

	if ((long)c->ip >= 0) {
		user_regs_from_ctx(pt, ctx);
		return 0;
	}
	stack = BPF_CORE_READ(task, stack);

	if (!stack || bpf_probe_read_kernel(pt, sizeof(*pt),
					    stack + BPROF_THREAD_SIZE - sizeof(struct user_regs)))
		return -1;
	if (pt->cs != TAILWALK_USER_CS || pt->ss != TAILWALK_USER_SS || (long)pt->ip < 0)
		return -1;
	return 0;
}

/* The walk is over: its stack stored, the sample counted. */
static __always_inline void tw_finish(struct tailwalk_state *st)
{
	struct unwind_scratch *s = &st->s;
	struct profile_seen_key sk = { .pid = st->key.pid, .exec_id = st->key.exec_id };
	long err;

	st->walking = 0;
	err = unwind_walk_end(s);
	if (!err)
		err = st->gen ? store_ustack_in(&ustacks_b, &s->stack, s->hash, true)
			      : store_ustack_in(&ustacks, &s->stack, s->hash, true);
	st->key.user_stack_id = err;
	if (err < 0)
		stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
	if (st->gen)
		add_count(&counts_b, &st->key);
	else
		add_count(&counts, &st->key);
	/* the walk met code its mapping table does not know: ask user space
	 * to read the mappings again (ask_remap, without a trusted task) */
	if (s->events & UNWIND_EV_UNMAPPED)
		ask_remap((struct task_struct *)bpf_get_current_task(), &sk);
	announce_image((struct task_struct *)bpf_get_current_task(), st->key.pid, st->key.exec_id);
	if (rotating)
		rotate_seq_step(bpf_get_smp_processor_id()); /* even: done */
}

/*
 * A sample, or the next frames of the walk a previous run of this program
 * on this CPU began (then the same sample: a tail call keeps the context).
 * --rotate: the set is chosen when the walk begins and kept in the state,
 * and this CPU's rotate_seq stays odd from then until the sample is
 * counted, across the runs of the walk (no other sample runs on the CPU
 * meanwhile), so user space waits for it as for any sample.
 */
SEC("perf_event")
int do_perf_event_lean(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct tailwalk_state *st = bpf_map_lookup_elem(&tailwalk_states, &zero);
	struct profile_seen_key wk;
	const struct unwind_proc *proc;

	if (!st)
		return 0;
	if (!tailwalk_cfi || !st->walking) {
		__u64 id = bpf_get_current_pid_tgid();
		__u32 tgid = id >> 32, tid = (__u32)id;
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		__u32 gen;
		struct profile_key key = {};
		long err;

		if (!include_idle && tid == 0)
			return 0;
		if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
			return 0;
		if (filter_tid && !bpf_map_lookup_elem(&tids, &tid))
			return 0;
		if (filter_cgroup && !bpf_current_task_under_cgroup(&cgroup_map, 0))
			return 0;
		if (rotating)
			rotate_seq_step(bpf_get_smp_processor_id()); /* odd: in a sample */
		gen = rotating ? rotate_gen & 1 : 0;
		key.pid = tgid;
		key.tid = per_thread ? tid : 0;
		key.exec_id = BPF_CORE_READ(task, self_exec_id);
		/* the generation the lean mm lock hook began (profile.bpf.c,
		 * gen_lock_lean): it reads each change at once, so there is
		 * nothing left for a sample to read */
		key.map_gen = sample_gen(tgid, key.exec_id);
		key.slice = slice_now();
		bpf_get_current_comm(&key.comm, sizeof(key.comm));
		if (!kernel_stacks)
			key.kernel_stack_id = PROFILE_STACK_NONE;
		else if (!sample_in_kernel(ctx))
			key.kernel_stack_id = -EFAULT;
		else
			key_kernel_stack(&key, ctx, get_stackid(ctx, 0, gen));
		wk.pid = tgid;
		wk.exec_id = key.exec_id;
		proc = tailwalk_cfi && user_stacks && BPF_CORE_READ(task, mm) && !in_execve(task)
			       ? bpf_map_lookup_elem(&unwind_procs, &wk)
			       : NULL;
		/* a table read in another generation is not this sample's */
		if (proc && proc->gen != key.map_gen)
			proc = NULL;
		if (!proc || tw_user_regs(ctx, task, &st->s.pt)) {
			/* the kernel's frame-pointer walk: no table (yet),
			 * or --unwind=fp */
			if (!user_stacks) {
				key.user_stack_id = PROFILE_STACK_NONE;
			} else if (in_execve(task)) {
				key.user_stack_id = -EFAULT; /* see sample() */
			} else {
				if (tailwalk_cfi && BPF_CORE_READ(task, mm)) {
					unwind_count(UNWIND_STAT_SAMPLES);
					unwind_count(UNWIND_STAT_SAMPLES_FP_ONLY);
				}
				err = get_stackid(ctx, BPF_F_USER_STACK, gen);
				key.user_stack_id = err;
				if (err < 0)
					stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
			}
			if (gen)
				add_count(&counts_b, &key);
			else
				add_count(&counts, &key);
			announce_image(task, tgid, key.exec_id);
			if (rotating)
				rotate_seq_step(bpf_get_smp_processor_id()); /* even: done */
			return 0;
		}
		__builtin_memcpy(&st->key, &key, sizeof(key));
		st->gen = gen;
		st->walking = 1;
		unwind_walk_start(&st->s);
		/* Python frames (python/python_frame.h) as in the bpf_loop
		 * walk: the sampled thread is current */
		st->s.walk_rt = 0;
		if (python_walk_begin(&st->s, tgid, key.exec_id))
			st->s.walk_rt |= WALK_RT_PYTHON;
		unwind_count(UNWIND_STAT_SAMPLES);
	} else {
		wk.pid = st->key.pid;
		wk.exec_id = st->key.exec_id;
		proc = bpf_map_lookup_elem(&unwind_procs, &wk);
	}
	for (int i = 0; i < TAILWALK_FRAMES; i++) {
		/* a Python frame takes a native frame's turn: the run's
		 * instructions stay those of TAILWALK_FRAMES steps */
		if (python_enabled && (st->s.walk_rt & WALK_RT_PYTHON) &&
		    python_wants_frame(&st->s, st->s.stack.nr) && python_frame_at(&st->s, st->s.stack.nr))
			continue;
		if (unwind_walk_frame(&st->s, proc)) {
			tw_finish(st);
			return 0;
		}
	}
	bpf_tail_call(ctx, &tailwalk_self, 0);
	/* no tail call left (or the slot is empty): a truncated stack */
	st->s.result = -1;
	tw_finish(st);
	return 0;
}
