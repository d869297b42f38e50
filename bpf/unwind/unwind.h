/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind.h - the layout of the user-stack unwind tables, shared by the BPF
 * unwinder (profile.bpf.c, unwind_step.h), the table builder that turns an
 * object's .eh_frame into rows (record/unwind/ehtab.h) and the loader in
 * prof-record.  x86-64 only.
 *
 * Only fixed-width types and constants: compiled for the BPF target (with
 * vmlinux.h) and for the host (with linux/types.h).
 *
 * The model.  At every address of an object, the call frame information
 * (CFI) says how to find the canonical frame address (CFA: the value of rsp
 * just before the call instruction that entered this frame), where the
 * return address is, and where the caller's rbp was saved.  On x86-64 with
 * the System V ABI the return address is always at CFA - 8 except in a few
 * hand-written places (UNWIND_RA_REG, UNWIND_CFA_SIGNAL), and only rsp, rbp
 * and rip need to be tracked from one frame to the next; every other
 * register rule is irrelevant to finding the callers.
 *
 * Storage, per object (an ELF file, identified by build-id), in three
 * levels so that a lookup is one hash lookup and one bounded binary search,
 * and a row costs 4 bytes:
 *
 *   rules  a system-wide array of distinct unwind rules (struct unwind_rule);
 *          a whole Debian host needs a few thousand, 65536 fit a u16 index.
 *   pages  (object id, vaddr >> 16) -> a run of rows in the rows array.
 *   rows   u32 each: the low 16 bits of the vaddr at which a rule starts to
 *          apply, and the 16-bit index of that rule.  Sorted by address
 *          within a page.  The first row of every page starts at offset 0
 *          (the rule in force where the page begins, UNWIND_CFA_NONE in a
 *          gap), so a lookup never has to look at the previous page.
 *
 * A page absent from the pages map means: no FDE covers any byte of that
 * 64 KiB of the object.
 */
#ifndef BPROF_UNWIND_H
#define BPROF_UNWIND_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define UNWIND_PAGE_SHIFT 16
#define UNWIND_PAGE_MASK ((1u << UNWIND_PAGE_SHIFT) - 1)
#define UNWIND_MAX_RULES 65536     /* u16 rule index */
/* Frames a run of the tail-call walk (bpf/tailwalk/) unwinds before it
 * tail-calls itself for the next: kernels without bpf_loop.  The kernel
 * allows 33 tail calls, so such a walk stops after 34 x 4 = 136 frames
 * (counted as truncated), past the 127 of the kernel's own walk; each
 * frame more a run costs ~14,000 verified instructions (Linux 6.18). */
#define UNWIND_TAIL_FRAMES 4
/* Bytes of user stack the BPF walk reads at once (unwind_env.h): an
 * aligned block, which lies within one page, so that it can be read
 * whenever the word the walk wants can. */
#define UNWIND_WIN 512
#define UNWIND_ROW(lo, rule) (((__u32)(rule) << 16) | ((lo) & 0xffffu))
#define UNWIND_ROW_LO(row) ((row) & 0xffffu)
#define UNWIND_ROW_RULE(row) ((row) >> 16)
/*
 * The rows array is stored in chunks of 1024 rows (one 4 KiB map value
 * each): an array map rounds every value up to 8 bytes, so a map of single
 * u32 rows would spend 8 bytes per row.  The chunks are in inner array maps
 * of UNWIND_CHUNKS_PER_MAP chunks (1 MiB, 262,144 rows), created by user
 * space only as rows are loaded and reached through an array of maps:
 * row i is rows[i / UNWIND_ROWS_PER_MAP][(i / 1024) % 256].r[i % 1024].  So
 * the kernel memory of the rows follows the tables loaded (rounded up to
 * one inner map), not a ceiling fixed before the recording, and the outer
 * array (one pointer per possible inner map) is what the budget sizes.
 * User space sees each inner map as a flat u32 array through mmap.
 */
#define UNWIND_ROWS_PER_CHUNK 1024
#define UNWIND_CHUNKS_PER_MAP 256
#define UNWIND_ROWS_PER_MAP (UNWIND_ROWS_PER_CHUNK * UNWIND_CHUNKS_PER_MAP)
struct unwind_row_chunk {
	__u32 r[UNWIND_ROWS_PER_CHUNK];
};

/* Rows in one page: at most one per byte. Bounds the binary search. */
#define UNWIND_PAGE_MAX_ROWS 65536
#define UNWIND_ROW_SEARCH_STEPS 17

/* How to compute the CFA. */
enum unwind_cfa_kind {
	UNWIND_CFA_NONE = 0,  /* no FDE covers this address (a gap) */
	UNWIND_CFA_RSP,       /* CFA = rsp + cfa_off */
	UNWIND_CFA_RBP,       /* CFA = rbp + cfa_off */
	UNWIND_CFA_DEREF_RSP, /* CFA = *(u64 *)(rsp + cfa_off) + aux
			       * (gcc's expression around stack realignment) */
	UNWIND_CFA_DEREF_RBP, /* CFA = *(u64 *)(rbp + cfa_off) + aux */
	UNWIND_CFA_PLT,       /* the linker's PLT expression:
			       * CFA = rsp + cfa_off + ((rip & 15) >= aux ? 8 : 0),
			       * aux is 11 (.plt) or 10 (the other variant) */
	UNWIND_CFA_REG,       /* CFA = reg[aux] + cfa_off, aux a DWARF register
			       * number; only where all registers are known (the
			       * interrupted frame): hand-written assembly */
	UNWIND_CFA_SIGNAL,    /* a sigreturn trampoline (__restore_rt, the CIE's
			       * 'S' augmentation): the interrupted context's
			       * registers are in the ucontext at rsp */
	UNWIND_CFA_END,       /* outermost frame (return address undefined:
			       * _start, clone, clone3): the stack is complete */
	UNWIND_CFA_INVALID,   /* covered by an FDE, but the rules here cannot be
			       * expressed: cannot unwind here */
	UNWIND_CFA_GO_STACK,  /* Go's runtime.asmcgocall, at its call of C on
			       * the system stack: the goroutine's stack pointer
			       * is g->stack.hi - depth, with depth at rsp +
			       * cfa_off and g at rsp + aux (stack.hi is g's word
			       * 1); CFA = that + 8.  The CFA is on another stack:
			       * not above rsp */
	UNWIND_CFA_KIND_MAX,
};

/* Where the caller's rbp is. */
enum unwind_rbp_kind {
	UNWIND_RBP_SAME = 0,  /* unchanged (not saved, or already restored) */
	UNWIND_RBP_CFA,       /* saved at CFA + rbp_off */
	UNWIND_RBP_UNDEFINED, /* not recoverable: rules that need it fail */
};

/* Where the return address is. */
enum unwind_ra_kind {
	UNWIND_RA_CFA = 0,    /* at CFA - 8: every normal frame */
	UNWIND_RA_REG,        /* in register aux (a DWARF register number):
			       * __vfork after popping it into rdi; only where
			       * all registers are known (the interrupted frame) */
};

/* DWARF register numbers of x86-64 (System V psABI, figure 3.36). */
enum unwind_dwarf_reg {
	UNWIND_REG_RAX = 0, UNWIND_REG_RDX, UNWIND_REG_RCX, UNWIND_REG_RBX,
	UNWIND_REG_RSI, UNWIND_REG_RDI, UNWIND_REG_RBP, UNWIND_REG_RSP,
	UNWIND_REG_R8, UNWIND_REG_R9, UNWIND_REG_R10, UNWIND_REG_R11,
	UNWIND_REG_R12, UNWIND_REG_R13, UNWIND_REG_R14, UNWIND_REG_R15,
	UNWIND_REG_RA, /* 16: the return address column */
	UNWIND_NR_REGS,
};

/*
 * One distinct rule: 12 bytes, compared and hashed bytewise (keep the
 * padding explicit and zero).  Builders MUST produce the canonical form:
 * fields a kind does not use are 0, so equal rules are equal bytes.
 */
struct unwind_rule {
	__s32 cfa_off;
	__s32 rbp_off;   /* UNWIND_RBP_CFA only */
	__u8 cfa_kind;   /* enum unwind_cfa_kind */
	__u8 rbp_kind;   /* enum unwind_rbp_kind */
	__u8 ra_kind;    /* enum unwind_ra_kind */
	__s8 aux;        /* see the kinds: DEREF offset, PLT threshold, register */
};

/* Rule index 0 is reserved: the all-zero rule, UNWIND_CFA_NONE. */
#define UNWIND_RULE_NONE 0

struct unwind_page_key {
	__u32 obj_id;    /* prof-record's id of the object, 1.. */
	__u32 page;      /* ELF vaddr >> UNWIND_PAGE_SHIFT */
};

struct unwind_page {
	__u32 first_row; /* index into the rows array */
	__u32 nr_rows;   /* 1 .. UNWIND_PAGE_MAX_ROWS */
};

/*
 * State of an object's table (the "unwind_objs" array of u64, by obj_id):
 * the low byte is the state, the bits above are flags the BPF walker sets, each
 * only when it is not set yet (one atomic or per object, not per sample).
 */
enum unwind_obj_state {
	UNWIND_OBJ_PENDING = 0, /* mapped, table not loaded yet */
	UNWIND_OBJ_LOADED,      /* its pages and rows are in the maps */
	UNWIND_OBJ_NO_TABLE,    /* no usable .eh_frame, or it could not be read */
	UNWIND_OBJ_NO_ROOM,     /* it has a table, but the memory budget was
				 * spent: a walk that meets it sets WANTED */
};
/* The ring buffer event (a bare __u32 type, beside profile.h's) that wakes
 * prof-record when a walk first wants a table that did not fit, so that
 * it is loaded at once rather than at the next 100 ms poll. */
#define UNWIND_EVENT_WANTED 0x100u
#define UNWIND_OBJ_STATE_MASK 0xffu
#define UNWIND_OBJ_USED   (1u << 8) /* LOADED: a walk used the table */
#define UNWIND_OBJ_WANTED (1u << 9) /* NO_ROOM: a walk needed the table */

/*
 * The executable mappings of one process image, sorted by start, not
 * overlapping, keyed by struct profile_seen_key (tgid, self_exec_id) so that
 * an exec never makes the old image's mappings apply to the new one.
 */
#define UNWIND_MAX_MAPPINGS 256
#define UNWIND_MAPPING_SEARCH_STEPS 9

struct unwind_mapping {
	__u64 start;     /* [start, end) in the process's address space */
	__u64 end;
	__u64 bias;      /* ELF vaddr = address - bias */
	__u32 obj_id;    /* 0: no object (anonymous or JIT memory) */
	__u32 flags;     /* reserved, 0 */
};

struct unwind_proc {
	__u32 nr;        /* mappings used, <= UNWIND_MAX_MAPPINGS */
	__u32 gen;       /* the image's mapping generation (profile.h) these
			  * mappings were read in: once the image is in
			  * another, an address may mean something else, and
			  * the table is not used until it is rewritten */
	struct unwind_mapping m[UNWIND_MAX_MAPPINGS];
};

/* Unwinding modes (--unwind). */
enum unwind_mode {
	UNWIND_MODE_FP = 0,  /* the kernel's frame-pointer walk (bpf_get_stackid) */
	UNWIND_MODE_CFI,     /* the tables, frame pointers where there is none */
};

/*
 * Per-CPU counters of the unwinder ("unwind_stats" array).  SAMPLES_* count
 * samples (each at most once per kind), FRAMES_* count frames.
 */
enum unwind_stat {
	UNWIND_STAT_SAMPLES = 0,       /* user stacks walked by the unwinder */
	UNWIND_STAT_SAMPLES_COMPLETE,  /* ... that reached the outermost frame */
	UNWIND_STAT_SAMPLES_TRUNCATED, /* ... that were cut at the depth limit */
	UNWIND_STAT_SAMPLES_FP_ONLY,   /* ... with no mapping table for the process
					* yet: walked by frame pointers only */
	UNWIND_STAT_SAMPLES_PENDING,   /* ... that met an object whose table had
					* not arrived (fell back to frame pointers) */
	UNWIND_STAT_FRAMES_CFI,        /* frames unwound with a table row */
	UNWIND_STAT_FRAMES_FP,         /* frames unwound by frame pointer */
	UNWIND_STAT_FP_NO_MAPPING,     /* fallbacks: pc in no known mapping */
	UNWIND_STAT_FP_NO_TABLE,       /* fallbacks: object without a table */
	UNWIND_STAT_FP_PENDING,        /* fallbacks: table not loaded yet */
	UNWIND_STAT_FP_NO_ROW,         /* fallbacks: address in no FDE */
	UNWIND_STAT_STOP_INVALID,      /* walk ended: an UNWIND_CFA_INVALID row */
	UNWIND_STAT_STOP_READ,         /* walk ended: user memory unreadable */
	UNWIND_STAT_STOP_BAD_FRAME,    /* walk ended: the stack did not grow up,
					* or a zero return address outside an
					* outermost frame */
	UNWIND_STAT_STOP_NEEDS_REGS,   /* walk ended: a register rule beyond the
					* interrupted frame */
	UNWIND_STAT_SAMPLES_NO_ROOM,   /* samples that met an object whose table
					* did not fit in the budget (yet) */
	UNWIND_STAT_FP_NO_ROOM,        /* fallbacks: table did not fit (yet) */
	UNWIND_STAT_SAMPLES_UNMAPPED,  /* samples whose walk met a trustworthy pc in
					* no known mapping (the image's mapping
					* table did not have that object yet), and
					* no pending table (counted above) */
	UNWIND_STAT_SAMPLES_OLDER_TABLE, /* samples that used a mapping table of
					  * an earlier generation, the range
					  * changed since excluded */
	UNWIND_STAT_FP_CHANGED,        /* fallbacks: address in that range */
	UNWIND_STAT_MAX,
};

/*
 * A measurement build's stages of one walked frame (-DBPROF_BPF_STAGE_TIMING
 * in cmake: the map "unwind_timing", struct unwind_timing per CPU, which
 * tools/bench/stage-timing reads).  Each stage runs from its mark to the
 * next one; a mark is a bpf_ktime_get_ns() call, whose own cost lands in
 * the stage it starts, so the shares are estimates and the build is never
 * the one measured for the total.
 */
enum unwind_stage {
	UNWIND_STAGE_LOOP = 0,   /* bpf_loop's call of the frame, runtime checks */
	UNWIND_STAGE_MAPPING,    /* the pc's mapping: binary search of the process's */
	UNWIND_STAGE_OBJECT,     /* the object's table state (and its flag) */
	UNWIND_STAGE_PAGE_ROWS,  /* the page (a hash lookup) */
	UNWIND_STAGE_READ,       /* the rule applied: user memory read */
	UNWIND_STAGE_COUNT,      /* the frame counted (per-CPU stats) */
	UNWIND_STAGE_RECORD,     /* the pc recorded, the hash, the flags */
	UNWIND_STAGE_ROWS,       /* the row search in the page (array lookups) */
	UNWIND_STAGE_MAX,
};
struct unwind_timing {
	__u64 last;                     /* the last mark's time, 0 outside a walk */
	__u32 stage;                    /* the stage that mark started */
	__u32 pad;
	__u64 ns[UNWIND_STAGE_MAX];     /* time in each stage */
	__u64 n[UNWIND_STAGE_MAX];      /* times each was entered */
	__u64 frames;                   /* frames walked */
};

#endif /* BPROF_UNWIND_H */
