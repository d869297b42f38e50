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
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"

#define EEXIST 17
#define ENOMEM 12
#define EFAULT 14

#ifndef BPF_F_USER_STACK
#define BPF_F_USER_STACK (1ULL << 8)
#endif

/* Set by prof-record before load. */
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool include_idle = false;
const volatile bool filter_pid = false;     /* keep tgids in "pids" only */
const volatile bool filter_tid = false;     /* keep tids in "tids" only */
const volatile bool filter_cgroup = false;  /* keep tasks under cgroup_map[0] */
const volatile bool per_thread = false;     /* put the tid in the key */
const volatile bool follow_children = false; /* add forks of "pids" to "pids" */
/* ids of "stacks2" are reported offset by this: a power of two at least the
 * bucket count of "stacks", so the two id ranges never meet */
const volatile __s32 stacks2_base = 16384;

/* max_entries of counts, stacks, seen, tracked, exec_gen are set by
 * prof-record before load (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct profile_key);
	__type(value, __u64);
	__uint(max_entries, 40960);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
} stacks SEC(".maps");

/*
 * Second chance for collision victims.  Without BPF_F_REUSE_STACKID (which
 * makes old ids name new stacks) a stack whose bucket in "stacks" is held by
 * another gets -EEXIST on every sample, and the birthday bound makes that
 * common long before the map is full: ~3% of stacks at the default size,
 * and a hot victim loses all its samples.  Only victims reach this map, so
 * it is sparse and a second collision is rare.  Sized by prof-record.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 4096);
} stacks2 SEC(".maps");

static __always_inline long get_stack(struct bpf_perf_event_data *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);

	if (id == -EEXIST) {
		long id2 = bpf_get_stackid(ctx, &stacks2, flags);
		if (id2 >= 0)
			return id2 + stacks2_base;
	}
	return id; /* a second failure is reported as the first */
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PROFILE_LOSS_MAX);
} losses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1024);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1024);
} tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} cgroup_map SEC(".maps");

/* Process images already announced to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct profile_seen_key);
	__type(value, __u8);
	__uint(max_entries, 40960);
} seen SEC(".maps");

/* tgids sampled at least once, and their descendants forked since: their
 * execs are announced so user space snapshots the new image at once. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 40960);
} tracked SEC(".maps");

/* tgid -> self_exec_id after its latest exec during the recording: lets user
 * space tell which image a /proc/PID/maps read belongs to. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 40960);
} exec_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024); /* bursts of exits: ~100 B per mapping */
} events SEC(".maps");

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
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

SEC("perf_event")
int do_perf_event(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct profile_key key = {};
	__u64 one = 1, *val;
	long err;

	if (!include_idle && tid == 0)
		return 0;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	if (filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	if (filter_cgroup && !bpf_current_task_under_cgroup(&cgroup_map, 0))
		return 0;

	task = (struct task_struct *)bpf_get_current_task();
	key.pid = tgid;
	key.tid = per_thread ? tid : 0;
	key.exec_id = BPF_CORE_READ(task, self_exec_id);
	bpf_get_current_comm(&key.comm, sizeof(key.comm));

	if (user_stacks && in_execve(task)) {
		/* Inside execve the user registers are still the old image's
		 * while mm and self_exec_id may already be the new one's: no
		 * snapshot can symbolize that stack, so record none. */
		key.user_stack_id = -EFAULT;
	} else if (user_stacks) {
		err = get_stack(ctx, BPF_F_USER_STACK);
		key.user_stack_id = err;
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_USER_ENOMEM);
	} else {
		key.user_stack_id = PROFILE_STACK_NONE;
	}
	if (kernel_stacks) {
		err = get_stack(ctx, 0);
		key.kernel_stack_id = err;
		if (err < 0)
			stack_loss(err, PROFILE_LOSS_KERNEL_ENOMEM);
		/* The kernel stack walk may miss the interrupted function;
		 * keep its ip (kernel half of a 64-bit address space). */
		if ((long)PT_REGS_IP(&ctx->regs) < 0)
			key.kernel_ip = PT_REGS_IP(&ctx->regs);
	} else {
		key.kernel_stack_id = PROFILE_STACK_NONE;
	}

	val = bpf_map_lookup_elem(&counts, &key);
	if (val) {
		__sync_fetch_and_add(val, 1);
	} else {
		err = bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
		if (err == -EEXIST) {
			val = bpf_map_lookup_elem(&counts, &key);
			if (val)
				__sync_fetch_and_add(val, 1);
		} else if (err) {
			count_loss(PROFILE_LOSS_COUNTS_FULL);
		}
	}

	/* First sample of this process image: ask user space for a snapshot
	 * of its mappings while it still runs.  Kernel threads have none, and
	 * without user stacks (-K) there is nothing to map. */
	if (user_stacks && tgid && BPF_CORE_READ(task, mm)) {
		struct profile_seen_key sk = { .pid = tgid, .exec_id = key.exec_id };
		__u8 t = 1;

		/* lookup first: the common case, and lock-free */
		if (!bpf_map_lookup_elem(&seen, &sk)) {
			err = bpf_map_update_elem(&seen, &sk, &t, BPF_NOEXIST);
			if (!err) {
				bpf_map_update_elem(&tracked, &tgid, &t, BPF_ANY);
				notify(PROFILE_EV_FIRST_SAMPLE, task, tgid, key.exec_id);
			} else if (err != -EEXIST) {
				count_loss(PROFILE_LOSS_EVENTS); /* seen set full */
			}
		}
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 t = 1;

	if (ptgid == ctgid)
		return 0; /* a new thread */
	if (follow_children && bpf_map_lookup_elem(&pids, &ptgid) &&
	    bpf_map_update_elem(&pids, &ctgid, &t, BPF_ANY))
		count_loss(PROFILE_LOSS_OTHER); /* a descendant that cannot be followed */
	if (bpf_map_lookup_elem(&tracked, &ptgid))
		bpf_map_update_elem(&tracked, &ctgid, &t, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, exec_id = p->self_exec_id;

	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	bpf_map_update_elem(&exec_gen, &tgid, &exec_id, BPF_ANY);
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
		e->mtime_ns = 0;
		if (bpf_core_field_exists(inode->i_mtime_sec))
			e->mtime_ns = BPF_CORE_READ(inode, i_mtime_sec) * 1000000000ULL +
				      BPF_CORE_READ(inode, i_mtime_nsec);
		bpf_probe_read_kernel_str(e->name, sizeof(e->name),
					  BPF_CORE_READ(file, f_path.dentry, d_name.name));
		bpf_ringbuf_submit(e, 0);
	}
	bpf_iter_task_vma_destroy(&it);
	/* the image is gone: free its slot (a reused pid is a new image) */
	bpf_map_delete_elem(&seen, sk);
}

/* The last thread of a sampled image exits: where the tracepoint runs
 * before exit_mm() (recent kernels, 6.18 here) its mm is still attached and
 * its mappings are sent now; on older kernels the walk finds no mm and
 * sends nothing.  This completes the snapshot of processes too short-lived
 * for user space to read /proc/PID/maps (libc mapped after the first
 * sample, say).  Optional: needs the task_vma iterator kfuncs (6.7+). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	struct profile_seen_key sk = { .pid = p->tgid, .exec_id = p->self_exec_id };

	if (group_dead(p) && bpf_map_lookup_elem(&seen, &sk))
		emit_vmas(p, &sk);
	return 0;
}

/* A sampled image is about to be replaced by exec (the old mm is still
 * there: this runs before the point of no return): same as at exit.  Forked
 * children that exec at once (shells, make) would otherwise lose the image
 * their first samples were taken in.  Optional: Linux 6.10+. */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(handle_prepare_exec, struct task_struct *p, struct linux_binprm *bprm)
{
	struct profile_seen_key sk = { .pid = p->tgid, .exec_id = p->self_exec_id };

	if (bpf_map_lookup_elem(&seen, &sk))
		emit_vmas(p, &sk);
	return 0;
}

/* -- COMMAND: a followed process is gone; keep "pids" small for long runs
 * that fork a lot (a build). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit_pids, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (group_dead(p))
		bpf_map_delete_elem(&pids, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
