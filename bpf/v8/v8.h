/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8.h - V8 (Node.js) JavaScript frames in the user stack: the layouts
 * shared by the BPF walk (v8_walk.h, v8/v8.bpf.c), prof-record
 * (record/v8/) and the tests.  Fixed-width types only, like python.h.
 *
 * A JavaScript frame is two words of struct profile_ustack.ips, in the
 * place of the native pc of the frame that ran it (JIT code, or the
 * interpreter's builtins for an interpreted frame):
 *
 *   ips[i]   = V8_TAG_SFI | the SharedFunctionInfo's tagged address
 *   ips[i+1] = V8_TAG_POS | guard << 24 | kind << 22 | position
 *
 * Neither tag is a canonical x86-64 address, so a reader that does not
 * know them sees two unmapped addresses, never a wrong name.  The guard is
 * v8_guard() of the SFI's name_or_scope_info, script_or_debug_info and
 * function_data words (for optimized code, function_data XOR the Code
 * object's address XOR its entry point): V8's heap compacts, so another SFI may later sit
 * at this address; it differs in at least one of those (a ScopeInfo or
 * bytecode array is one function's own), so one stack word never names
 * two functions.  kind: V8_POS_NONE (no position: optimized or baseline
 * code, a builtin), V8_POS_BYTECODE (position: the interpreted frame's
 * bytecode offset).  SPEC.md 6.17 says how readers name them.
 */
#ifndef BPROF_V8_H
#define BPROF_V8_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define V8_TAG_MASK  0xff00000000000000ULL
#define V8_TAG_SFI   0xb300000000000000ULL
#define V8_TAG_POS   0xb400000000000000ULL
#define V8_ADDR_MASK 0x00ffffffffffffffULL
#define V8_POS_MASK  0x3fffffULL
#define V8_KIND_SHIFT 22
#define V8_GUARD_SHIFT 24

enum v8_pos_kind {
	V8_POS_NONE = 0,
	V8_POS_BYTECODE = 1,
	V8_POS_CODE = 2,  /* position: the pc's offset in the function's
			   * optimized code, whose address the guard
			   * covers (its inlined frames, SPEC.md 6.17) */
};

/* Code ranges the walk looks in: the main thread's isolate and three
 * worker threads' (later workers' frames stay native, their pcs unnamed) */
#define V8_CODE_RANGES 4

/*
 * What the walk needs of one V8 process image, in the "v8_procs" hash by
 * tgid.  Written by prof-record from the v8dbg_* symbols of the binary
 * that embeds V8 (node) and the image's mappings; exec_id says which
 * image it is of.  Frame slot offsets are from the frame pointer (signed),
 * object field offsets from the object's untagged address.
 */
struct v8_proc {
	__u32 exec_id;
	__u32 pad;
	/* where JavaScript frames' pcs are: V8's embedded builtins (the
	 * interpreter's trampoline and bytecode handlers, in node's text and
	 * in the copy V8 maps near its code) and its code ranges (JIT code:
	 * one per isolate, a worker thread's its own; [0, 0) unused) */
	__u64 blob_start, blob_end;
	__u64 code_start[V8_CODE_RANGES], code_end[V8_CODE_RANGES];
	/* frame slots, as byte offsets into [fp - V8_FRAME_READ, fp) (an
	 * unsigned index the verifier bounds; V8 gives them from fp) */
	__u16 fp_function;        /* v8dbg_off_fp_function (-16) */
	__u16 fp_bytecode_array;  /* v8dbg_off_fp_bytecode_array (-32) */
	__u16 fp_bytecode_offset; /* v8dbg_off_fp_bytecode_offset (-40) */
	__u16 map_instance_type;  /* v8dbg_class_Map__instance_type__uint16_t */
	__u16 fn_shared;          /* v8dbg_class_JSFunction__shared__SharedFunctionInfo */
	__u16 sfi_function_data;  /* v8dbg_class_SharedFunctionInfo__function_data__Object */
	__u16 sfi_name_or_scope_info;
	__u16 sfi_script_or_debug_info;
	__u16 type_sfi;           /* v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE */
	/* optimized code (0: not looked at): JSFunction.code, and in the
	 * Code object its entry point and instruction size, which node's
	 * v8dbg symbols do not give (record/DESIGN.md "V8 frames") */
	__u16 fn_code;
	__u16 code_entry;
	__u16 code_size;
	__u16 type_code;          /* v8dbg_type_Code__CODE_TYPE */
	__u16 code_header;        /* V8 < 11: the instructions follow the Code's
				   * header (this size), code_entry unused */
	__u16 pad2;
};

/* Bytes of a frame the walk reads at once: [fp - V8_FRAME_READ, fp). */
#define V8_FRAME_READ 64
/* Bytes of an object (the SFI, a Code object's header) read at once. */
#define V8_OBJ_READ 64

/* Ring buffer event: an SFI the walk met first; prof-record reads what
 * names it from the process (record/DESIGN.md "V8 frames" says why not
 * in BPF).  V8_EVENT_CODE, the same layout: a frame of sfi running JIT
 * code the walk cannot place (not the function's code: on-stack
 * replacement, or code the function has since left); prof-record looks
 * for the code object around pc and tells the walk (v8_codes). */
#define V8_EVENT_SFI 0x300u
#define V8_EVENT_CODE 0x301u
struct v8_sfi_event {
	__u32 type;  /* V8_EVENT_SFI, V8_EVENT_CODE */
	__u32 pid;
	__u32 exec_id;
	__u32 guard;
	__u64 sfi;   /* tagged address */
	__u64 code;  /* the optimized code the frame ran (V8_POS_CODE), 0 */
	__u64 pc;    /* V8_EVENT_CODE: the frame's pc */
};

/* "v8_codes": per (process image, SFI), the optimized code objects other
 * than its JSFunction's that its frames were seen to run (on-stack
 * replacement), found by prof-record; the walk checks each as it checks
 * the function's own (its map, entry point and size around the pc). */
#define V8_OSR_CODES 2
struct v8_code_key {
	__u32 pid;
	__u32 exec_id;
	__u64 sfi;
};
struct v8_codes {
	__u64 code[V8_OSR_CODES]; /* tagged addresses, 0: none */
};

/* The key of "v8_seen", the SFIs already announced. */
struct v8_sfi_key {
	__u32 pid;
	__u32 guard;
	__u64 sfi;
	__u32 exec_id;
	__u32 pad;
};

/* The guard of an SFI (see above): the same function in BPF, the recorder
 * and the tests. */
static inline __u32 v8_guard(__u64 name_or_scope_info, __u64 script_or_debug_info,
			     __u64 function_data)
{
	__u64 h = 0xcbf29ce484222325ULL;

	h = (h ^ name_or_scope_info) * 0x100000001b3ULL;
	h = (h ^ script_or_debug_info) * 0x100000001b3ULL;
	h = (h ^ function_data) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return (__u32)h;
}

#endif /* BPROF_V8_H */
