/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profile.h - types shared by profile.bpf.c and prof-record.
 *
 * Only fixed-width types, constants and one pure function of them
 * (profile_slice_of): this header is compiled both for the BPF target
 * (with vmlinux.h) and for the host (with linux/types.h).
 */
#ifndef BPROF_PROFILE_H
#define BPROF_PROFILE_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PROFILE_COMM_LEN 16
#define PROFILE_VMA_NAME_LEN 48 /* basenames in mapping events */
#define PROFILE_MAX_STACK_DEPTH 127 /* PERF_MAX_STACK_DEPTH: the kernel's
				     * stack maps and its frame-pointer walk */
/*
 * Words of a stack the unwinder walks (struct profile_ustack).  More than
 * the kernel's 127 because a Python frame takes two words: a web
 * framework's request is 60-100 Python frames deep.  247 is the most that
 * keeps a "ustacks" element in the 2 KiB class of the BPF allocator (72
 * bytes of element and allocator headers + 8 + 8 x 247 = 2048), where 127
 * words already were: deeper stacks cost no memory per stack.
 */
#define PROFILE_MAX_USTACK_DEPTH 247
/* user_stack_id / kernel_stack_id when the stack was not asked for (-U/-K);
 * same value as BPROF_STACK_NONE in format/bprof.h. */
#define PROFILE_STACK_NONE (-2147483647 - 1)

/* Key of the in-kernel counts hash; the value is a __u64 sample count. */
struct profile_key {
	__u32 pid;             /* host tgid */
	__u32 tid;             /* host tid with per-thread keys (-L), else 0 */
	__u32 exec_id;         /* task->self_exec_id */
	__s32 user_stack_id;   /* bpf_get_stackid() result or PROFILE_STACK_NONE */
	__s32 kernel_stack_id;
	__u32 map_gen;         /* the image's mapping generation (struct
				* profile_map_gen) at the sample, or
				* PROFILE_GEN_UNKNOWN; 0 without the hook */
	__u64 kernel_ip;       /* interrupted kernel ip, 0 in user mode */
	char comm[PROFILE_COMM_LEN];
	__u32 slice;           /* --slice: the time slice the sample fell in,
				* counted from slice_base_ns; 0 without */
	__u32 pad;
};

/*
 * A user stack walked by the unwinder (--unwind=auto|cfi), the value of the
 * "ustacks" hash.  Its id in the counts key is PROFILE_CFI_STACK_BASE, plus
 * PROFILE_CFI_STACK_EXACT when the leaf's caller came from a table, plus
 * 29 bits of a hash of the addresses; two different stacks never share an
 * id (the BPF side compares the addresses before reusing one), a collision
 * is retried once with other bits of the hash, then counted as lost.
 */
#define PROFILE_CFI_STACK_BASE 0x40000000
/* set when the interrupted frame was unwound with a table, so that its
 * caller is exact (else a frame pointer, which may skip it, gave it) */
#define PROFILE_CFI_STACK_EXACT 0x20000000
#define PROFILE_CFI_STACK_MASK 0x1fffffff
/* own_stacks (profile.bpf.c): a stack of the kernel's frame-pointer walk
 * stored in "ustacks" gets 29 bits of a hash of its addresses as its id,
 * below PROFILE_CFI_STACK_BASE like the ids of bpf_get_stackid() */
#define PROFILE_OWN_STACK_MASK 0x1fffffff
/* The off-CPU programs of kernels before 6.1 (offcpu/offcpu_lean.bpf.c)
 * store the kernel's walks (bpf_get_task_stack, a frame-pointer user
 * stack) in "ustacks" too, under this bit and 29 bits of the hash: below
 * PROFILE_CFI_STACK_BASE like every id of the kernel's walk, above both
 * own_stacks' ids and the stack maps' (whose ids are their index). */
#define PROFILE_KWALK_STACK_BASE 0x20000000
#define PROFILE_USTACK_LEAF_CFI  (1u << 0) /* the interrupted frame was unwound
					    * with a table: its caller is exact */
#define PROFILE_USTACK_COMPLETE  (1u << 1) /* reached the outermost frame */
#define PROFILE_USTACK_TRUNCATED (1u << 2) /* cut at PROFILE_MAX_USTACK_DEPTH */
#define PROFILE_USTACK_FALLBACK  (1u << 3) /* some frame came from a frame
					    * pointer instead of a table */
struct profile_ustack {
	__u32 nr;
	__u32 flags;           /* PROFILE_USTACK_*: not part of the identity */
	__u64 ips[PROFILE_MAX_USTACK_DEPTH];
};

/* CPUs --rotate can follow (its per-CPU sequence numbers, profile.bpf.c);
 * prof-record refuses --rotate on a machine with more. */
#define PROFILE_MAX_CPUS 1024
#define PROFILE_ROTATE_SEQ_STRIDE 8 /* u64s: a cache line per CPU */

/* Indexes of the per-CPU loss counters (the "losses" array map), and one
 * that is not a loss: samples counted, for --rotate's accounting. */
enum profile_loss {
	PROFILE_LOSS_USER_ENOMEM,
	PROFILE_LOSS_USER_EEXIST,
	PROFILE_LOSS_KERNEL_ENOMEM,
	PROFILE_LOSS_KERNEL_EEXIST,
	PROFILE_LOSS_COUNTS_FULL,
	PROFILE_LOSS_EVENTS,        /* ring buffer full: notification dropped */
	PROFILE_LOSS_OTHER,
	PROFILE_STAT_COUNTED,       /* a count was added (not a loss) */
	PROFILE_LOSS_MAX,
};

/* Notifications to user space through the ring buffer.  Never per sample:
 * one per (tgid, exec_id) on its first sample, one per exec and one per
 * executable file mmap (dlopen, the dynamic loader) of sampled processes. */
enum profile_event_type {
	PROFILE_EV_FIRST_SAMPLE = 1,
	PROFILE_EV_EXEC = 2,
	PROFILE_EV_MMAP = 3,   /* a sampled process mapped a file executable */
	PROFILE_EV_VMA = 4,    /* struct profile_vma_event: an executable file
				* mapping of a sampled image, sent as it exits */
	PROFILE_EV_MAP_EXEC = 5, /* struct profile_map_event: an executable
				  * mapping was made, a new generation began */
};

/*
 * Mapping generations.  A process image's generation counts the executable
 * mappings made in it since it began (mmap with PROT_EXEC, mprotect adding
 * it, mremap of executable memory): the same address can only change
 * meaning across a generation, so the generation goes in the counted key
 * and samples from before and after a replacement are never counted
 * together.  The "map_gens" hash, by tgid; exec_id says which image the
 * count is of (an exec starts again from 0, without a hook of its own).
 */
struct profile_map_gen {
	__u32 exec_id;
	__u32 gen;
	/* The mm lock hook (profile.bpf.c, "mapping changes at the lock")
	 * leaves each change's range in map_pend, by (tgid, gen), for the
	 * process's next sample to read: every generation up to "read" has
	 * been read.  Written with the mm's write lock held, read with its
	 * read lock held: the lock orders them. */
	__u32 read;
	__u32 nr_maybe;
	struct profile_gen_pend {
		__u64 start, end;
		__u32 exec_id; /* map_pend's: the image; maybe[]: unused */
		__u32 flags;   /* PROFILE_PEND_* */
	} maybe[2]; /* mremap without MREMAP_FIXED: a generation only if what
		     * it moved or grew executes (read with the rest) */
	/* Where the image changed since an older mapping table
	 * (profile.bpf.c, "older tables"): hull a spans every change made
	 * after generation hull_a_gen, hull b every change after hull_b_gen
	 * (hull_a_gen <= hull_b_gen); lo >= hi: none.  Written by the mm
	 * lock hook only (the write lock held: one writer at a time), read
	 * by samples: hull_seq is odd while the writer is in them.
	 * hull_off: a change was begun by a hook that keeps no hull (the
	 * system calls' exits, the lean hooks), for good: this image's
	 * samples use only a table of their own generation. */
	__u32 hull_seq;
	__u32 hull_a_gen, hull_b_gen;
	__u32 hull_off;
	__u64 hull_a_lo, hull_a_hi, hull_b_lo, hull_b_hi;
};
#define PROFILE_GEN_WINDOW 32 /* changes kept unread at most (older: gaps) */
#define PROFILE_PEND_DEAD 1   /* a later change overlapped it: never sent */
#define PROFILE_PEND_DONE 2   /* maybe[]: read */
#define PROFILE_PEND_MMAP 4   /* an mmap: its mapping begins at start */
#define PROFILE_PEND_FIXED 8  /* ... at an address the caller fixed
			       * (MAP_FIXED, MAP_FIXED_NOREPLACE): start is
			       * exact, the mapping may have merged with a
			       * neighbour below it */

/* gens_lean (profile.bpf.c): the hook of kernels without bpf_loop, which
 * reads the mm's VMA tree itself: handle_gen_area at the mm lock's release
 * (the mmap_lock tracepoints, 5.11+), or at the system calls' exits. */
#define GENS_LEAN_LOCK 1
#define GENS_LEAN_SYSCALLS 2
struct profile_pend_key {
	__u32 tgid;
	__u32 gen;
};
/* map_gen of samples whose generation could not be kept (the map full) */
#define PROFILE_GEN_UNKNOWN 0xffffffffu

/* profile_map_event.flags, beside VM_READ 0x1 and VM_WRITE 0x2 */
#define PROFILE_MAP_EV_ANON 0x100   /* no file behind it (JIT, memfd is a file) */
#define PROFILE_MAP_EV_PARTIAL 0x200 /* the change went past this mapping:
				      * what lies beyond is not described */

/* One executable mapping as it was made, with the generation it began. */
struct profile_map_event {
	__u32 type;            /* PROFILE_EV_MAP_EXEC */
	__u32 pid;
	__u32 exec_id;
	__u32 gen;             /* the generation this mapping began */
	__u32 flags;           /* VM_READ, VM_WRITE, PROFILE_MAP_EV_* */
	__u32 pad;
	__u64 start;
	__u64 end;
	__u64 offset;          /* vm_pgoff << PAGE_SHIFT */
	__u64 dev;             /* kernel dev_t */
	__u64 ino;
	__u64 mtime_ns;
	char name[PROFILE_VMA_NAME_LEN]; /* file's basename, maybe truncated */
};

struct profile_event {
	__u32 type;            /* enum profile_event_type */
	__u32 pid;             /* host tgid */
	__u32 ns_pid;          /* tgid in the task's own pid namespace */
	__u32 exec_id;         /* self_exec_id at the time of the event */
	__u32 ppid;            /* host tgid of the real parent */
	__u32 parent_exec_id;  /* parent's self_exec_id at fork: == exec_id
				* means the process never exec'd since fork */
	__u64 ktime_ns;        /* bpf_ktime_get_ns() */
	char comm[PROFILE_COMM_LEN];
};

/* One executable file-backed mapping of an exiting process image: a
 * snapshot that cannot come too late, for processes that die before user
 * space reads /proc/PID/maps. */
struct profile_vma_event {
	__u32 type;            /* PROFILE_EV_VMA */
	__u32 pid;
	__u32 exec_id;
	__u32 flags;           /* VM_READ 0x1, VM_WRITE 0x2 as in the kernel */
	__u64 start;
	__u64 end;
	__u64 offset;          /* vm_pgoff << PAGE_SHIFT */
	__u64 dev;             /* kernel dev_t (MAJOR << 20 | MINOR) */
	__u64 ino;
	__u64 mtime_ns;
	char name[PROFILE_VMA_NAME_LEN]; /* file's basename, maybe truncated */
};

/* Key of the "seen" set: first sample of a process image. */
struct profile_seen_key {
	__u32 pid;
	__u32 exec_id;
};

/*
 * --slice: the slice a sample taken at now (CLOCK_MONOTONIC ns) falls in,
 * counted from base, slice_ns long: slice k holds [base + k * slice_ns,
 * base + (k + 1) * slice_ns).  Before base: 0; past 2^32 - 1 slices: the
 * last.  Here rather than in the BPF program so that the test of exactly
 * that (tests/record/slice_of.c) runs the code the sampler runs.
 */
static inline __attribute__((always_inline)) __u32 profile_slice_of(__u64 now, __u64 base,
								    __u64 slice_ns)
{
	__u64 n;

	if (!slice_ns || now <= base)
		return 0;
	n = (now - base) / slice_ns;
	return n > 0xffffffffULL ? 0xffffffffU : (__u32)n;
}

#endif /* BPROF_PROFILE_H */
