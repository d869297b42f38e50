/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bprof.bpf.h - what the BPF tracers share: the sampling core
 * (profile.bpf.c, with the native unwinder), off-CPU time
 * (offcpu/offcpu.bpf.c) and CPython frames (python/python.bpf.c) are
 * compiled apart and linked into one object (`bpftool gen object`,
 * bpf/CMakeLists.txt), which one skeleton loads.  See record/DESIGN.md,
 * "The BPF side: one source per tracer".
 *
 * Here: the settings and maps more than one of them uses, each defined in
 * exactly one source (the owner named beside it) and declared extern here,
 * which libbpf's static linker resolves; the walk's scratch, which every
 * tracer's part of a walk writes; the entry points one tracer offers
 * another, global BPF functions that the verifier checks on their own; and
 * the small helpers they all use, inline (a call per sample is measurable,
 * and they are a few instructions each).
 *
 * A tracer's own maps and settings stay in its folder (unwind/, python/,
 * v8/, jvm/, offcpu/, tailwalk/); its interface with user space is the
 * plain .h there (unwind/unwind.h, python/python.h, v8/v8.h, jvm/jvm.h,
 * offcpu/offcpu.h; the sampler's is profile.h beside this one), which
 * record/ and the tests include too.  Every header compiles on its own
 * (check_headers.sh, run by the build).
 */
#ifndef BPROF_BPF_H
#define BPROF_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"
#include "unwind/unwind.h"
#include "unwind/unwind_step.h" /* struct unwind_regs only (no UNW_* macros yet) */
#include "python/python_walk.h" /* struct python_walk only (no PY_* macros yet) */
#include "v8/v8_walk.h"     /* struct v8_walk only (no V8_WALK_STEP) */
#include "jvm/jvm.h"

#define EEXIST 17
#define ENOMEM 12
#define EFAULT 14
#ifndef ENOENT
#define ENOENT 2
#endif
#define EBUSY 16

#ifndef BPF_F_USER_STACK
#define BPF_F_USER_STACK (1ULL << 8)
#endif

/* ---- settings (set by prof-record before load; profile.bpf.c) ---- */

extern const volatile bool user_stacks;
extern const volatile bool kernel_stacks;
extern const volatile bool filter_pid;
extern const volatile bool filter_tid;
extern const volatile bool filter_cgroup;
extern const volatile bool per_thread;
extern const volatile bool fp_fallback;
extern const volatile bool rotating;
extern volatile __u32 rotate_gen;
extern __u64 rotate_seq[PROFILE_MAX_CPUS * PROFILE_ROTATE_SEQ_STRIDE];
extern const volatile __u64 slice_ns;
extern volatile __u64 slice_base_ns;
extern const volatile bool track_gens;
extern volatile __u32 map_gens_lost;
extern const volatile bool include_idle;
extern const volatile __s32 stacks2_base;
extern __u32 unwind_want_wake;

/* ---- shared maps (defined in profile.bpf.c; comments there) ---- */

struct bprof_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct profile_key);
	__type(value, __u64);
	__uint(max_entries, 40960);
};
extern struct bprof_counts_map counts SEC(".maps"), counts_b SEC(".maps");

struct bprof_stacks_map {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
};
extern struct bprof_stacks_map stacks SEC(".maps"), stacks_b SEC(".maps");

struct bprof_stacks2_map {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 4096);
};
extern struct bprof_stacks2_map stacks2 SEC(".maps"), stacks2_b SEC(".maps");

struct bprof_unwind_objs_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_MMAPABLE);
};
extern struct bprof_unwind_objs_map unwind_objs SEC(".maps");

struct bprof_unwind_pages_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_page_key);
	__type(value, struct unwind_page);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};
extern struct bprof_unwind_pages_map unwind_pages SEC(".maps");

struct unwind_rows_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct unwind_row_chunk));
	__uint(max_entries, UNWIND_CHUNKS_PER_MAP);
	__uint(map_flags, BPF_F_MMAPABLE);
};
struct bprof_unwind_rows_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, 1);
	__array(values, struct unwind_rows_inner);
};
extern struct bprof_unwind_rows_map unwind_rows SEC(".maps");

struct bprof_unwind_rules_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_rule);
	__uint(max_entries, UNWIND_MAX_RULES);
	__uint(map_flags, BPF_F_MMAPABLE);
};
extern struct bprof_unwind_rules_map unwind_rules SEC(".maps");

struct bprof_losses_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PROFILE_LOSS_MAX);
};
extern struct bprof_losses_map losses SEC(".maps");

struct bprof_id_set_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1024);
};
extern struct bprof_id_set_map pids SEC(".maps"), tids SEC(".maps");

struct bprof_cgroup_map {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
};
extern struct bprof_cgroup_map cgroup_map SEC(".maps");

struct bprof_seen_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct profile_seen_key);
	__type(value, __u8);
	__uint(max_entries, 40960);
};
extern struct bprof_seen_map seen SEC(".maps");

struct bprof_tracked_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 40960);
};
extern struct bprof_tracked_map tracked SEC(".maps");

struct bprof_map_gens_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct profile_map_gen);
	__uint(max_entries, 40960);
};
extern struct bprof_map_gens_map map_gens SEC(".maps");

struct bprof_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* bursts of exits: ~100 B per mapping; a Python program's first
	 * samples: ~3 KiB per code object (python.h) */
	__uint(max_entries, 2 * 1024 * 1024);
};
extern struct bprof_events_map events SEC(".maps");

struct bprof_unwind_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct profile_seen_key);
	__type(value, struct unwind_proc);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};
extern struct bprof_unwind_procs_map unwind_procs SEC(".maps");

struct bprof_ustacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct profile_ustack);
	__uint(max_entries, 16384);
};
extern struct bprof_ustacks_map ustacks SEC(".maps"), ustacks_b SEC(".maps");

struct bprof_remap_asked_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct profile_seen_key);
	__type(value, __u64);
	__uint(max_entries, 4096);
};
extern struct bprof_remap_asked_map remap_asked SEC(".maps");

/* V8 frames (v8/v8.bpf.c defines them, v8_walk.h uses them inline in the
 * native walk): tgid -> struct v8_proc; the SFIs already announced; the
 * code objects prof-record found for frames that do not run their
 * function's code. */
struct bprof_v8_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct v8_proc);
	__uint(max_entries, 1024);
};
extern struct bprof_v8_procs_map v8_procs SEC(".maps");

struct bprof_v8_seen_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct v8_sfi_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
};
extern struct bprof_v8_seen_map v8_seen SEC(".maps");

struct bprof_v8_codes_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct v8_code_key);
	__type(value, struct v8_codes);
	__uint(max_entries, 4096);
};
extern struct bprof_v8_codes_map v8_codes SEC(".maps");

/* A raw tracepoint's context, UAPI's struct bpf_raw_tracepoint_args, read
 * without CO-RE.  The kernel's loader looks each type a relocation names
 * up in a 31-slot cache of candidates (by jhash of the name); a name
 * whose slot another name takes is searched for again among all of
 * vmlinux's ~126,000 types, ~2.5 ms a time, at every start.  This one
 * shared signal_struct's slot, maple_tree's too; maple_node and rb_node
 * shared dentry's (their layouts are the kernel's ABI or fixed by
 * design: profile.bpf.c reads them as local types). */
struct raw_tp_args {
	__u64 args[12];
};

/* ---- the walk's scratch ---- */

/*
 * x86-64's struct pt_regs, the layout of the perf_event context's registers
 * (bpf_user_pt_regs_t) and of the user registers at the top of a task's
 * kernel stack, which the ptrace ABI fixes.  Read through this type, not
 * the kernel's: each kernel type a program reads with CO-RE costs libbpf a
 * pass over the kernel's ~126,000 BTF types at every start (~1 ms here),
 * and these two types cannot differ between kernels.
 */
struct user_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

_Static_assert(sizeof(struct user_regs) == sizeof(struct pt_regs) &&
	       __builtin_offsetof(struct user_regs, ip) == __builtin_offsetof(struct pt_regs, ip) &&
	       __builtin_offsetof(struct user_regs, sp) == __builtin_offsetof(struct pt_regs, sp),
	       "struct user_regs is not x86-64's struct pt_regs");

/* x86-64: the kernel stack of a task is THREAD_SIZE (16 KiB without
 * KASAN) with the user registers at its top, where bpf_task_pt_regs
 * (5.15) finds them; what kernels without it read instead. */
#define BPROF_THREAD_SIZE 16384

/* The sampled registers: the perf_event context starts with them (struct
 * bpf_perf_event_data, a UAPI type); the kernel allows 8-byte reads. */
static __always_inline const struct user_regs *ctx_regs(const struct bpf_perf_event_data *ctx)
{
	return (const struct user_regs *)(const void *)ctx;
}

/* A user-mode sample's registers from its context.  Each copy is fenced
 * (barrier()): left to itself clang loads a dozen registers ahead and
 * spills them to the stack, 64 bytes of spilled scalars that the verifier
 * then copies with every state it keeps of the sampler (its verification
 * ~15 % longer). */
static __always_inline void user_regs_from_ctx(struct user_regs *pt, const struct bpf_perf_event_data *ctx)
{
	const struct user_regs *c = ctx_regs(ctx);

	pt->ax = c->ax; barrier();
	pt->dx = c->dx; barrier();
	pt->cx = c->cx; barrier();
	pt->bx = c->bx; barrier();
	pt->si = c->si; barrier();
	pt->di = c->di; barrier();
	pt->bp = c->bp; barrier();
	pt->sp = c->sp; barrier();
	pt->r8 = c->r8; barrier();
	pt->r9 = c->r9; barrier();
	pt->r10 = c->r10; barrier();
	pt->r11 = c->r11; barrier();
	pt->r12 = c->r12; barrier();
	pt->r13 = c->r13; barrier();
	pt->r14 = c->r14; barrier();
	pt->r15 = c->r15; barrier();
	pt->ip = c->ip; barrier();
}

enum {
	PY_MODE_NATIVE = 0, /* native frames: watch for the evaluation loop */
	PY_MODE_EMIT,       /* naming the Python frames of one loop frame */
	PY_MODE_DONE,       /* the loop frame whose Python frames were named
			     * comes next: unwind it natively */
};

/* The walk's working state: too big for the 512-byte BPF stack.  One per
 * CPU for the sampler, another for the off-CPU programs (a cpu-clock
 * sample may interrupt them). */
struct unwind_scratch {
	struct user_regs pt;
	struct unwind_regs r;
	/* The range the image changed in since its table was read (the
	 * sampler's "older tables", profile.bpf.c), for the next walk:
	 * unwind_walk_start moves it into r and clears it here, so that a
	 * walk whose caller sets none has none. */
	__u64 changed_lo, changed_hi;
	struct profile_ustack stack;
	__u32 opaque; /* UNW_OPAQUE's word */
	/* The runtimes whose frames this walk looks for (WALK_RT_*, set at
	 * its start by unwind_walk_regs) */
	__u32 walk_rt;
	/* Frames the walk unwound by table and by frame pointer: counted in
	 * the per-CPU statistics once, at the walk's end (unwind_env.h) */
	__u32 frames_cfi;
	__u32 frames_fp;
	/* The window of user stack last read (unwind_env.h): whether win
	 * holds the UNWIND_WIN bytes at win_base, in this walk */
	__u32 win_ok;
	__u64 win_base;
	__u8 win[UNWIND_WIN];
	/* The walk's results, here rather than on the stack: what is read
	 * back from this memory is unknown to the verifier, so the state at
	 * each step of the loop is the same and it verifies walk_frame
	 * twice, not once per combination of events and of the hash being a
	 * constant or not (six times, half of the sampler's verification). */
	__u64 hash;
	__u32 events; /* UNWIND_EV_* */
	int result;
	/* native frames recorded so far: the interrupted frame is the first
	 * (not always ips[0]: Python frames come before a leaf that is in
	 * the evaluation loop) */
	__u32 nr_native;
	/* Python frames (python/python.bpf.c): the walk's state and mode,
	 * and a copy of the process's interpreter description, made once
	 * per walk by python_walk_begin() (the map value cannot be handed
	 * from one global function to another across the walk) */
	__u32 py_mode;   /* PY_MODE_* */
	__u32 py_exec_id;
	struct python_walk py;
	struct python_proc py_proc;
	/* V8 frames (v8_walk.h): the process's description, copied once per
	 * walk, and the buffer its reads go to */
	struct v8_walk v8;
	/* HotSpot frames (jvm_walk.h): a copy of the process's JVM
	 * description made once per walk, the blob header a frame read, the
	 * words below an interpreter frame's fp */
	struct jvm_proc jvm_proc;
	__u8 jvm_buf[JVM_BLOB_READ];
	__u64 jvm_words[18];
	/* the frame may return to native code (jvm_frame(): a value read
	 * back from here is one state for the verifier, not two) */
	__u32 jvm_to_native;
	__u32 jvm_pad;
};

#define WALK_RT_PYTHON (1u << 0)
#define WALK_RT_V8     (1u << 1)
#define WALK_RT_JVM    (1u << 2)

/* ---- what one tracer offers another: global functions ---- */

/* walk_user_regs()'s flags */
#define UNWIND_WALK_SET_B   (1u << 0) /* --rotate: store in the "_b" set */
#define UNWIND_WALK_CURRENT (1u << 1) /* the walked task is current */

/*
 * The native unwinder (profile.bpf.c): walk the user stack from the
 * registers in s->pt of the image (pid, exec_id), with its mapping table
 * proc (NULL: frame pointers only), into s->stack, its hash into s->hash;
 * 0, or < 0.  s->events says what the walk met.  The caller stores the
 * stack (walk_user_regs()): a map update whose value is a global
 * function's pointer argument (PTR_TO_MEM) is refused before Linux 6.3
 * ("R3 type=mem expected=fp, ..., map_value"), the caller's own pointer
 * to its scratch is a map value everywhere.  Global, so that the verifier
 * checks the walk once per program, whoever calls it, and so that the
 * off-CPU programs reuse it without compiling it into their own source.
 * Its arguments are scalars and sized pointers (a task pointer would need
 * the __arg_trusted tag of Linux 6.8+), which is why walk_user_regs()
 * below, not the walk, answers for the task.
 */
long unwind_walk_regs(struct unwind_scratch *s, __u32 pid, __u32 exec_id,
		      const struct unwind_proc *proc, __u32 flags);

/*
 * CPython frames (python/python.bpf.c), called by the native walk.
 * python_walk_begin(): whether (pid, exec_id) runs an interpreter the walk
 * should name frames of (1; s->py and s->py_proc set up) or not (0).
 * python_frame(): at the walk's frame n, 1 when it put a Python frame in
 * s->stack (the native step is skipped), 0 when the native step is to run;
 * the tail walk, which may call no global function with pointer
 * arguments, has its body inline (python_frame_at, python/python_frame.h).
 */
/* python/python.bpf.c's setting (prof-record: Python frames walked), read
 * by the native walk too, so that the verifier drops what it calls of
 * Python where it is off */
extern const volatile bool python_enabled;

/* tgid -> the interpreter of its image (defined in profile.bpf.c) */
struct bprof_py_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct python_proc);
	__uint(max_entries, 1024);
};
extern struct bprof_py_procs_map py_procs SEC(".maps");

/*
 * The walk of (pid, exec_id) begins: whether it runs an interpreter whose
 * frames are to be named, and if so its description, copied into the
 * scratch for the walk's python_frame() calls (~200 bytes once per walk of
 * a Python process, where looking it up again at each frame would be a
 * hash lookup per native frame).  Inline, not a global function: the
 * object holds the 32 functions libbpf 1.1's loader program takes (its
 * clean-up closes a descriptor for each function of the object, loaded
 * or not), and this one is a lookup and a copy, once per walk.
 */
static __always_inline int python_walk_begin(struct unwind_scratch *s, __u32 pid, __u32 exec_id)
{
	const struct python_proc *p;

	if (!python_enabled || !s)
		return 0;
	p = bpf_map_lookup_elem(&py_procs, &pid);
	if (!p || p->exec_id != exec_id)
		return 0; /* none, or another image's interpreter */
	__builtin_memcpy(&s->py_proc, p, sizeof(s->py_proc));
	s->py_exec_id = exec_id;
	s->py_mode = PY_MODE_NATIVE;
	s->py.started = 0;
	s->py.stopped = 0;
	s->py.frame = 0;
	return 1;
}
int python_frame(struct unwind_scratch *s, __u32 n);

/*
 * Whether python_frame() has anything to do at the walk's frame n: while
 * it is naming an evaluation loop's frames (py_mode), or where the pc is
 * in the loop and the walk has not stopped.  The same test python_frame()
 * starts with, inline here so that the native walk calls it only at those
 * frames: a call at every native frame of a Python process made its
 * samples ~7 % slower (record/DESIGN.md, "The BPF side").
 */
static __always_inline bool python_wants_frame(const struct unwind_scratch *s, __u32 n)
{
	__u64 pc;

	if (s->py_mode != PY_MODE_NATIVE)
		return true;
	if (s->py.stopped)
		return false;
	pc = s->r.regs[UNWIND_REG_RA];
	if (n && !s->r.exact_pc)
		pc--; /* a return address: the call is before it */
	return pc >= s->py_proc.eval_start && pc < s->py_proc.eval_end;
}

/* The per-CPU statistics of the unwinder, the Python walk and the
 * HotSpot walk (defined in profile.bpf.c). */
struct bprof_unwind_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, UNWIND_STAT_MAX);
};
extern struct bprof_unwind_stats_map unwind_stats SEC(".maps");
struct bprof_py_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PYTHON_STAT_MAX);
};
extern struct bprof_py_stats_map py_stats SEC(".maps");
struct bprof_jvm_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, JVM_STAT_MAX);
};
extern struct bprof_jvm_stats_map jvm_stats SEC(".maps");

/* Add n to one of the unwinder's per-CPU statistics, or with
 * UNWIND_COUNT_PYTHON the Python walk's, UNWIND_COUNT_JVM the HotSpot
 * walk's.  Inline, not the global function it was: idx is a constant
 * at nearly every call, so one lookup is left, and the object's 32
 * functions (record/DESIGN.md, "The object's size limit") have room for
 * same_stack()'s callback. */
#define UNWIND_COUNT_PYTHON (1u << 31)
#define UNWIND_COUNT_JVM (1u << 30) /* jvm_stats (jvm_walk.h) */
static __always_inline void unwind_add(__u32 idx, __u32 n)
{
	__u32 k = idx & ~(UNWIND_COUNT_PYTHON | UNWIND_COUNT_JVM);
	__u64 *v = idx & UNWIND_COUNT_PYTHON ? bpf_map_lookup_elem(&py_stats, &k)
		 : idx & UNWIND_COUNT_JVM    ? bpf_map_lookup_elem(&jvm_stats, &k)
					      : bpf_map_lookup_elem(&unwind_stats, &k);

	if (v)
		*v += n; /* per-CPU */
}
#define unwind_count(idx) unwind_add((idx), 1)

/* Whether two stacks are the same (b set), or a's hash (profile.bpf.c). */
__u64 stack_scan(const struct profile_ustack *a, const struct profile_ustack *b);
#define same_stack(a, b) (stack_scan((a), (b)) != 0)

/* ---- small helpers every tracer uses ---- */

static __always_inline void count_loss(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&losses, &idx);

	if (v)
		*v += 1; /* per-CPU: no atomics needed */
}

static __always_inline void stack_loss(long err, __u32 enomem_idx)
{
	if (err == -ENOMEM)
		count_loss(enomem_idx);
	else if (err == -EEXIST)
		count_loss(enomem_idx + 1);
	/* -EFAULT: no such stack (kernel thread, user-mode sample): not a loss */
}

static __always_inline __u32 slice_now(void)
{
	if (!slice_ns)
		return 0;
	return profile_slice_of(bpf_ktime_get_ns(), slice_base_ns, slice_ns);
}

/* The kernel's walk (bpf_get_stackid) into the stack maps of set gen.
 * Each map of a set is named in a call of its own: a register that may
 * hold either of two map pointers would make the verifier walk the rest of
 * the program once per map. */
static __always_inline long get_stackid(struct bpf_perf_event_data *ctx, __u64 flags, __u32 gen)
{
	long id = gen ? bpf_get_stackid(ctx, &stacks_b, flags) : bpf_get_stackid(ctx, &stacks, flags);

	if (id == -EEXIST) {
		long id2 = gen ? bpf_get_stackid(ctx, &stacks2_b, flags) :
				 bpf_get_stackid(ctx, &stacks2, flags);
		if (id2 >= 0)
			return id2 + stacks2_base;
	}
	return id; /* a second failure is reported as the first */
}

/* Count one sample in counts_map (one of the two sets).  Every sample
 * that reaches this point is either counted (PROFILE_STAT_COUNTED, the sum
 * over all files of a --rotate recording must equal it) or lost. */
static __always_inline void add_count(void *counts_map, struct profile_key *key)
{
	__u64 one = 1, *val = bpf_map_lookup_elem(counts_map, key);
	long err = 0;

	if (val) {
		__sync_fetch_and_add(val, 1);
	} else {
		err = bpf_map_update_elem(counts_map, key, &one, BPF_NOEXIST);
		if (err == -EEXIST) {
			/* another CPU added it meanwhile */
			val = bpf_map_lookup_elem(counts_map, key);
			if (val) {
				__sync_fetch_and_add(val, 1);
				err = 0;
			}
		}
	}
	count_loss(err ? PROFILE_LOSS_COUNTS_FULL : PROFILE_STAT_COUNTED);
}

/* One step of this CPU's rotate_seq (--rotate: odd while a sample runs).
 * The element's address is computed at each step from the CPU number:
 * a pointer with a variable offset kept across the sample (a spill) lost
 * its bounds on 6.1's verifier, which then refused the sampler. */
_Static_assert((PROFILE_MAX_CPUS & (PROFILE_MAX_CPUS - 1)) == 0, "rotate_seq_step masks by it");

static __always_inline void rotate_seq_step(__u32 cpu)
{
	__u64 i = cpu;

	if (i >= PROFILE_MAX_CPUS)
		return;
	/* a mask the verifier bounds the index by, whatever width the
	 * compare above was made in (clang drops a mask it can prove
	 * redundant: barrier_var hides what it knows) */
	barrier_var(i);
	i &= PROFILE_MAX_CPUS - 1;
	__sync_fetch_and_add(&rotate_seq[i * PROFILE_ROTATE_SEQ_STRIDE], 1);
}

/* A sample's kernel stack in its key: the id the kernel's walk gave (or
 * why none) and the interrupted kernel ip, which the walk may miss.
 * Called in kernel mode only (sample_in_kernel): a user-mode sample has
 * no kernel stack, which is what the walk would answer (-EFAULT), and is
 * spared the call. */
static __always_inline bool sample_in_kernel(const struct bpf_perf_event_data *ctx)
{
	return (long)ctx_regs(ctx)->ip < 0;
}

static __always_inline void key_kernel_stack(struct profile_key *key,
					     const struct bpf_perf_event_data *ctx, long id)
{
	key->kernel_stack_id = id;
	if (id < 0)
		stack_loss(id, PROFILE_LOSS_KERNEL_ENOMEM);
	key->kernel_ip = ctx_regs(ctx)->ip;
}

/* The mapping generation of image (tgid, exec_id) now. */
static __always_inline __u32 sample_gen(__u32 tgid, __u32 exec_id)
{
	struct profile_map_gen *g;

	if (!track_gens)
		return 0;
	g = bpf_map_lookup_elem(&map_gens, &tgid);
	if (g && g->exec_id == exec_id)
		return *(volatile __u32 *)&g->gen;
	return map_gens_lost ? PROFILE_GEN_UNKNOWN : 0;
}

/*
 * An inode's modification time, as user space's stat() gives it (the
 * manifest matches objects by (dev, inode, mtime)).  Its field moved
 * twice: a struct timespec64 i_mtime until 6.5, __i_mtime in 6.6, and
 * i_mtime_sec/i_mtime_nsec from 6.7.  0 where none is found.
 */
struct inode___timespec {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));
struct inode___6_6 {
	struct timespec64 __i_mtime;
} __attribute__((preserve_access_index));

static __always_inline __u64 inode_mtime_ns(struct inode *inode)
{
	if (bpf_core_field_exists(inode->i_mtime_sec))
		return BPF_CORE_READ(inode, i_mtime_sec) * 1000000000ULL + BPF_CORE_READ(inode, i_mtime_nsec);
	if (bpf_core_field_exists(((struct inode___6_6 *)inode)->__i_mtime)) {
		struct inode___6_6 *i = (void *)inode;

		return BPF_CORE_READ(i, __i_mtime.tv_sec) * 1000000000ULL + BPF_CORE_READ(i, __i_mtime.tv_nsec);
	}
	if (bpf_core_field_exists(((struct inode___timespec *)inode)->i_mtime)) {
		struct inode___timespec *i = (void *)inode;

		return BPF_CORE_READ(i, i_mtime.tv_sec) * 1000000000ULL + BPF_CORE_READ(i, i_mtime.tv_nsec);
	}
	return 0;
}

static __always_inline bool in_execve(struct task_struct *task)
{
	if (bpf_core_field_exists(task->in_execve))
		return BPF_CORE_READ_BITFIELD_PROBED(task, in_execve);
	return false;
}

/* tgid of task in its own (innermost) pid namespace. */
static __always_inline __u32 task_ns_tgid(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};
	void *base;

	if (!pid || level > 32)
		return 0;
	base = (void *)pid + bpf_core_field_offset(struct pid, numbers);
	if (bpf_probe_read_kernel(&up, sizeof(up), base + level * bpf_core_type_size(struct upid)))
		return 0;
	return up.nr;
}

static __always_inline void notify(__u32 type, struct task_struct *task, __u32 tgid,
				   __u32 exec_id)
{
	struct profile_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_loss(PROFILE_LOSS_EVENTS);
		return;
	}
	e->type = type;
	e->pid = tgid;
	e->ns_pid = task_ns_tgid(task);
	e->exec_id = exec_id;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->parent_exec_id = BPF_CORE_READ(task, parent_exec_id);
	e->ktime_ns = bpf_ktime_get_ns();
	/* the process's name is its group leader's (what ps and
	 * /proc/PID/comm show), not that of whichever thread was sampled
	 * first: a worker's name would otherwise name the whole process;
	 * else task's own (not current's: the off-CPU end walk announces
	 * a blocked thread's image from prof-record's context) */
	if (BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm) < 0)
		BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

/* First sample of this process image (task is current): ask user space
 * for a snapshot of its mappings while it still runs.  Kernel threads have
 * none, and without user stacks (-K) there is nothing to map. */
static __always_inline void announce_image(struct task_struct *task, __u32 tgid, __u32 exec_id)
{
	struct profile_seen_key sk = { .pid = tgid, .exec_id = exec_id };
	__u8 t = 1;
	long err;

	if (!user_stacks || !tgid || !BPF_CORE_READ(task, mm))
		return;
	/* lookup first: the common case, and lock-free */
	if (bpf_map_lookup_elem(&seen, &sk))
		return;
	err = bpf_map_update_elem(&seen, &sk, &t, BPF_NOEXIST);
	if (!err) {
		if (bpf_map_update_elem(&tracked, &tgid, &t, BPF_ANY))
			count_loss(PROFILE_LOSS_EVENTS); /* tracked set full */
		notify(PROFILE_EV_FIRST_SAMPLE, task, tgid, exec_id);
	} else if (err != -EEXIST) {
		count_loss(PROFILE_LOSS_EVENTS); /* seen set full */
	}
}

#define REMAP_INTERVAL_NS 50000000ULL

/* The walk met code its mapping table does not know (libc mapped after
 * exec, dlopen): ask user space to re-read the image's mappings, at most
 * every REMAP_INTERVAL_NS.  This is what makes tables arrive in time where
 * the mmap hook cannot be attached. */
static __always_inline void ask_remap(struct task_struct *task, struct profile_seen_key *sk)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&remap_asked, sk);

	if (last && now - *last < REMAP_INTERVAL_NS)
		return;
	bpf_map_update_elem(&remap_asked, sk, &now, BPF_ANY);
	notify(PROFILE_EV_MMAP, task, sk->pid, sk->exec_id);
}

/* The end of a stack's hash: FNV-1a over its addresses, then a mixer so
 * that both halves of the 64 bits are good ids. */
static __always_inline __u64 stack_hash_mix(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* Store st under the first of two candidate ids that is free or already
 * holds the same stack, in ustacks_map (one of the two sets); the id, or
 * < 0 on loss (-ENOMEM: the map is full; -EEXIST: both ids hold other
 * stacks). */
/* same_stack() inline: for kernels that take no pointer arguments to
 * global functions (before 5.12), in a program of its own whose loop
 * the verifier walks once (tailwalk/tailwalk.bpf.c). */
static __always_inline int same_stack_inline(const struct profile_ustack *a,
					     const struct profile_ustack *b)
{
	if (a->nr != b->nr)
		return 0;
	for (int i = 0; i < PROFILE_MAX_USTACK_DEPTH; i++) {
		if (i >= (int)a->nr)
			break;
		if (a->ips[i] != b->ips[i])
			return 0;
	}
	return 1;
}

/* inline_cmp: compare with same_stack_inline(), not the global
 * same_stack() (a constant: the other is then not in the program). */
static __always_inline long store_stack_at(void *ustacks_map, struct profile_ustack *st,
					   __u32 ids[2], bool inline_cmp)
{
	for (int t = 0; t < 2; t++) {
		struct profile_ustack *old = bpf_map_lookup_elem(ustacks_map, &ids[t]);
		long err;

		if (!old) {
			err = bpf_map_update_elem(ustacks_map, &ids[t], st, BPF_NOEXIST);
			if (!err)
				return ids[t];
			/* a full hash map says -E2BIG (no element left,
			 * preallocated or not), a failed allocation -ENOMEM:
			 * both are the stack map full of bpf_get_stackid()
			 * (SPEC 6.4), and counted so */
			if (err != -EEXIST)
				return -ENOMEM;
			old = bpf_map_lookup_elem(ustacks_map, &ids[t]); /* another CPU won */
			if (!old)
				return -ENOMEM;
		}
		if (inline_cmp ? same_stack_inline(old, st) : same_stack(old, st))
			return ids[t];
	}
	return -EEXIST;
}


/* Store an own stack (the kernel's walk, or the off-CPU programs' copy)
 * under one of its two ids below PROFILE_CFI_STACK_BASE (SPEC 6.3),
 * hashed over every address; the id, or < 0 on loss. */
static __always_inline long store_own_stack(struct profile_ustack *st, __u32 gen)
{
	__u64 h = stack_hash_mix(stack_scan(st, NULL));
	__u32 ids[2] = {
		(__u32)h & PROFILE_OWN_STACK_MASK,
		(__u32)(h >> 32) & PROFILE_OWN_STACK_MASK,
	};

	return gen ? store_stack_at(&ustacks_b, st, ids, false) : store_stack_at(&ustacks, st, ids, false);
}

/* Store the walked stack under an id no other stack has in ustacks_map
 * (one of the two sets); < 0 on loss. */
static __always_inline long store_ustack_in(void *ustacks_map, struct profile_ustack *st, __u64 h,
					    bool inline_cmp)
{
	__u32 base = PROFILE_CFI_STACK_BASE |
		     (st->flags & PROFILE_USTACK_LEAF_CFI ? PROFILE_CFI_STACK_EXACT : 0);
	__u32 ids[2] = {
		base | (__u32)(h & PROFILE_CFI_STACK_MASK),
		base | (__u32)((h >> 32) & PROFILE_CFI_STACK_MASK),
	};

	return store_stack_at(ustacks_map, st, ids, inline_cmp);
}

/*
 * The walk from the user registers in s->pt of task (the sampler's:
 * current; the off-CPU programs': current at resume, a blocked thread at
 * the end pass, from prof-record's context), then what only the caller
 * can do with the task, and the store of the stack; its id, or < 0.
 * gen: --rotate's set.
 */
static __always_inline long walk_user_regs(struct unwind_scratch *s, struct task_struct *task,
					   struct profile_seen_key *sk,
					   const struct unwind_proc *proc, __u32 gen)
{
	__u32 flags = gen ? UNWIND_WALK_SET_B : 0;
	long ret;

	/* Python frames only where the walked task is current:
	 * python_tstate() finds the thread's state by current's tid, and
	 * reads memory that is only the walked thread's stack there */
	if ((unsigned long)task == bpf_get_current_task())
		flags |= UNWIND_WALK_CURRENT;
	ret = unwind_walk_regs(s, sk->pid, sk->exec_id, proc, flags);
	if (s->events & UNWIND_EV_UNMAPPED)
		ask_remap(task, sk);
	if (ret < 0)
		return ret;
	return gen ? store_ustack_in(&ustacks_b, &s->stack, s->hash, false) :
		     store_ustack_in(&ustacks, &s->stack, s->hash, false);
}

#endif /* BPROF_BPF_H */
