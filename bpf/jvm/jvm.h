/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm.h - HotSpot (OpenJDK) frames in the user stack: the layouts shared by
 * the BPF walk (jvm_walk.h, inside profile.bpf.c's native walk),
 * prof-record (record/jvm/) and the tests.  Fixed-width types only.
 *
 * A Java frame is two words of struct profile_ustack.ips in the place of
 * the native pc of the frame (compiled code and the interpreter live in
 * anonymous memory: the pc alone names nothing):
 *
 *   ips[i]   = JVM_TAG_ID  | kind << 48 | address (< 2^47)
 *   ips[i+1] = JVM_TAG_POS | guard << 24 | offset
 *
 *   kind JVM_KIND_INTERP: address is the Method*, offset the bytecode
 *     index (bci), guard the low 32 bits of the Method's ConstMethod* xor
 *     its high ones (a Method freed with its class and another allocated at
 *     its address has another ConstMethod with all but certainty);
 *   kind JVM_KIND_BLOB: address is the CodeBlob* (an nmethod or a stub),
 *     offset the frame's pc minus the blob's code_begin (a return address
 *     but for the interrupted frame), guard the 32-bit word at the
 *     nmethod's _compile_id offset: an nmethod freed (recompiled,
 *     deoptimized, unloaded) and another put at its address has another
 *     compile id, so two methods never share a stack identity.
 *
 * Neither tag is a canonical x86-64 address, so a reader that does not
 * know them sees two unmapped addresses, never a wrong name.  SPEC.md
 * 6.18 says how readers name them.
 */
#ifndef BPROF_JVM_H
#define BPROF_JVM_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define JVM_TAG_MASK  0xff00000000000000ULL
#define JVM_TAG_ID    0xb500000000000000ULL
#define JVM_TAG_POS   0xb600000000000000ULL
#define JVM_KIND_SHIFT 48
#define JVM_ADDR_MASK 0x0000ffffffffffffULL
#define JVM_OFFSET_MASK 0xffffffULL
#define JVM_GUARD_SHIFT 24

#define JVM_KIND_INTERP 1
#define JVM_KIND_BLOB   2

/* Code heaps of the segmented code cache (non-nmethods, profiled,
 * non-profiled; one when it is not segmented). */
#define JVM_MAX_HEAPS 3
/* Bytes of a code blob the walk reads at once: its header up to the
 * nmethod's _compile_id and _comp_level (304 and 308 in OpenJDK 17, 324
 * and 328 in 11). */
#define JVM_BLOB_READ 336
/* Hops back through a code heap's segment map before the walk gives up
 * on finding the start of a blob.  The map holds runs 0, 1, ..., 253,
 * 1, ..., 253, ...: a pc in the k-th run (from 0) of its blob is k + 1
 * hops from its start, so 4 hops find any blob up to 4 x 253 segments
 * (~126 KiB with the 128-byte segments of a JVM with both compilers), which
 * compiled methods seldom exceed.  Each hop is ~450 instructions of the
 * verifier's (record_programs' budget): not more. */
#define JVM_SEGMAP_HOPS 4
#define JVM_SEGMAP_FREE 0xff

/* One code heap: [lo, hi) its committed code, segmap the first byte of
 * its segment map, a segment 1 << log2_seg bytes. */
struct jvm_heap {
	__u64 lo, hi, segmap;
	__u32 log2_seg;
	__u32 pad;
};

/* Offsets, in bytes, of the fields the walk reads; from the JVM's own
 * gHotSpotVMStructs/gHotSpotVMTypes (record/jvm/). */
struct jvm_offsets {
	__u16 heap_block;        /* sizeof(HeapBlock): a blob follows its header */
	__u16 blob_frame_size;   /* CodeBlob::_frame_size (int, in words) */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset (int) */
	__u16 blob_code_begin;   /* CodeBlob::_code_begin */
	__u16 blob_code_end;     /* CodeBlob::_code_end */
	__u16 nm_compile_id;     /* nmethod::_compile_id (int) */
	__u16 method_const;      /* Method::_constMethod */
	__u16 cm_code_size;      /* ConstMethod::_code_size (u2) */
	__u16 cm_size;           /* sizeof(ConstMethod): the bytecodes follow */
	/* interpreter frame slots, words below the frame pointer
	 * (frame_x86.hpp: 3, 8 and 1 in 11..21) */
	__u16 fp_method;
	__u16 fp_bcp;
	__u16 fp_sender_sp;
};

/*
 * What the walk needs of one JVM process image, in the "jvm_procs" hash
 * by tgid.  Written by prof-record once the JVM has made its code cache
 * (it reads the JVM's introspection tables from the process);
 * exec_id says which image it is of.
 */
struct jvm_proc {
	__u32 exec_id;
	__u32 nr_heaps;
	__u64 cc_lo, cc_hi;          /* the code cache: every heap within */
	__u64 interp_lo, interp_hi;  /* the template interpreter's code */
	struct jvm_heap heaps[JVM_MAX_HEAPS];
	struct jvm_offsets off;
};

/* Per-CPU counters ("jvm_stats" array); SPEC.md 6.18 lists them. */
enum jvm_stat {
	JVM_STAT_FRAMES_INTERP = 0, /* interpreted frames recorded */
	JVM_STAT_FRAMES_BLOB,       /* compiled frames and stubs recorded */
	JVM_STAT_STOP_READ,         /* walk ended: unreadable memory */
	JVM_STAT_STOP_NO_BLOB,      /* walk ended: pc in no blob (free, or
				     * beyond JVM_SEGMAP_HOPS) */
	JVM_STAT_STOP_BAD_FRAME,    /* walk ended: an implausible frame */
	JVM_STAT_STOP_BAD_BCP,      /* walk ended: a bcp outside its method */
	JVM_STAT_LEAF_EDGE,         /* an interrupted frame in a prologue, an
				     * epilogue or a frameless stub, unwound
				     * from its stack top */
	JVM_STAT_NEW,               /* identities announced to prof-record */
	JVM_STAT_LOST,              /* ... not announced: ring buffer full */
	JVM_STAT_MAX,
};

/* Ring buffer event: an identity the walk met first.  For a blob, its
 * header as the walk read it (the process may be gone when prof-record
 * reads the event: the blob's kind and method come from this copy); for
 * an interpreted method, whatever the buffer held (not read). */
#define JVM_EVENT_FRAME 0x3b5u
struct jvm_frame_event {
	__u32 type;              /* JVM_EVENT_FRAME */
	__u32 pid;
	__u32 exec_id;
	__u32 guard;
	__u64 id;                /* the first word without its tag */
	__u8 blob[JVM_BLOB_READ];
};

/* The key of "jvm_seen": identities already announced. */
struct jvm_seen_key {
	__u32 pid;
	__u32 exec_id;
	__u64 id;
	__u32 guard;
	__u32 pad;
};

/* The guard of an interpreted frame (above). */
static inline __u32 jvm_method_guard(__u64 const_method)
{
	return (__u32)const_method ^ (__u32)(const_method >> 32);
}

#endif /* BPROF_JVM_H */
