/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8_walk.h - V8 JavaScript frames in the native walk (v8.h for the stack
 * words): the walk's V8 state (a type, part of the scratch), and, where
 * the includer defines V8_WALK_STEP (profile.bpf.c only), the inline
 * test and step the native walk runs at each frame of a V8 process.
 *
 * Inline, not global functions: the linked object already holds the 32
 * programs and subprograms libbpf 1.1's loader program takes.  The
 * per-walk cost for a process without V8 is one hash lookup
 * (v8_walk_begin); per native frame of a V8 process, two range tests
 * (v8_wants_frame); per JavaScript frame, four user reads and one LRU
 * lookup (v8_frame).
 */
#ifndef BPROF_V8_WALK_TYPES_H
#define BPROF_V8_WALK_TYPES_H

/* BPF only (the V8 tracer and the core's walk) */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "v8/v8.h"

struct v8_walk {
	struct v8_proc proc; /* a copy: one lookup per walk, not per frame */
	__u32 pid, exec_id;
	/* the frame's two words (v8_frame), here rather than on the BPF
	 * stack: Linux 6.1 refuses the walk's call chain past 512 bytes of
	 * stack in all */
	__u64 w[2];
	/* what a user read or a step returns, here too: on the stack they
	 * took the walk's chain past 6.1's 512 bytes (544; the maps' keys
	 * must stay on the stack, 6.1 takes no other memory for one) */
	__u64 rd;        /* a word read from the process */
	__u64 code;      /* v8_code_offset: the code XOR its entry point, */
	__u64 code_addr; /* the code's address, */
	__u64 ask;       /* nonzero: a V8_EVENT_CODE to send */
	__u8 buf[V8_FRAME_READ > V8_OBJ_READ ? V8_FRAME_READ : V8_OBJ_READ];
};
#endif /* BPROF_V8_WALK_TYPES_H */

#if defined(V8_WALK_STEP) && !defined(BPROF_V8_WALK_H)
#define BPROF_V8_WALK_H

/* Whether (pid, exec_id) runs a V8 the walk names frames of: then its
 * description is copied into the scratch. */
static __always_inline bool v8_walk_begin(struct unwind_scratch *s, __u32 pid, __u32 exec_id)
{
	const struct v8_proc *p;

	if (!v8_enabled)
		return false;
	p = bpf_map_lookup_elem(&v8_procs, &pid);
	if (!p || p->exec_id != exec_id)
		return false;
	__builtin_memcpy(&s->v8.proc, p, sizeof(s->v8.proc));
	s->v8.pid = pid;
	s->v8.exec_id = exec_id;
	return true;
}

/* Whether the frame's pc is where V8 runs JavaScript: its builtins (the
 * interpreter) or its code range (JIT code).  Only there is the frame's
 * content looked at. */
static __always_inline bool v8_wants_frame(const struct unwind_scratch *s, __u32 n)
{
	__u64 pc = s->r.regs[UNWIND_REG_RA];

	if (n && !s->r.exact_pc)
		pc--; /* a return address: the call is before it */
	return (pc >= s->v8.proc.blob_start && pc < s->v8.proc.blob_end) ||
	       (pc >= s->v8.proc.code_start[0] && pc < s->v8.proc.code_end[0]) ||
	       (pc >= s->v8.proc.code_start[1] && pc < s->v8.proc.code_end[1]) ||
	       (pc >= s->v8.proc.code_start[2] && pc < s->v8.proc.code_end[2]) ||
	       (pc >= s->v8.proc.code_start[3] && pc < s->v8.proc.code_end[3]);
}

/* A frame slot at byte i of buf = [fp - V8_FRAME_READ, fp) */
static __always_inline __u64 v8_slot(const __u8 *buf, __u32 i)
{
	if (i > V8_FRAME_READ - 8)
		return 0;
	return *(const __u64 *)(buf + i);
}

static __always_inline __u64 v8_field(const __u8 *buf, __u32 off)
{
	if (off > V8_OBJ_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

/* A tagged heap pointer in user space (V8's HeapObjectTag: low bits 01;
 * node builds V8 without pointer compression: full 64-bit words). */
static __always_inline bool v8_heap_ptr(__u64 v)
{
	return (v & 3) == 1 && v > 4096 && v < (1ULL << 47);
}

/*
 * The frame at the walk's registers as a JavaScript frame: 1 and its two
 * stack words when its function slot holds a JSFunction whose shared
 * function info is one (by its map's instance type), 0 otherwise (a
 * typed frame: entry, exit, stub; or not V8's).  Every read is checked;
 * an SFI met for the first time is announced to prof-record, which reads
 * its names while the process lives.
 */
static __always_inline __u32 v8_field32(const __u8 *buf, __u32 off)
{
	if (off > V8_OBJ_READ - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

/*
 * The pc's offset in code object c (tagged), or -1: c is no Code object,
 * or its instructions do not hold pc.  *code: c XOR its entry point, which
 * the frame's guard then covers (another code object later at this
 * address, the old space compacting, has other instructions).
 */
static __always_inline long v8_code_at(struct unwind_scratch *s, __u64 c, __u64 pc)
{
	const struct v8_proc *p = &s->v8.proc;
	__u64 map, entry, hdr, sel;
	__u32 size;

	if (!v8_heap_ptr(c) || bpf_probe_read_user(s->v8.buf, V8_OBJ_READ, (const void *)(c - 1)))
		return -1;
	map = v8_field(s->v8.buf, 0);
	/* V8 < 11: after the Code's header; else the address its field holds
	 * (selected without a branch: the verifier walks this three times) */
	hdr = p->code_header;
	sel = (hdr + 0xffff) >> 16;
	entry = v8_field(s->v8.buf, p->code_entry) * (1 - sel) + (c - 1 + hdr) * sel;
	size = v8_field32(s->v8.buf, p->code_size);
	s->v8.rd = 0;
	if (pc < entry || pc - entry >= size || size > V8_POS_MASK || !v8_heap_ptr(map) ||
	    bpf_probe_read_user(&s->v8.rd, sizeof(__u16), (const void *)(map - 1 + p->map_instance_type)) ||
	    (__u16)s->v8.rd != p->type_code)
		return -1;
	s->v8.code = c ^ entry;
	return (long)(pc - entry);
}

/*
 * The pc's offset in the optimized code the frame runs, or -1.  First the
 * function's code (JSFunction.code); then the codes prof-record found
 * for frames of this SFI that ran another (v8_codes: on-stack
 * replacement, a function's code replaced while a frame of the old one
 * is live): then s->v8.code and code_addr say which.  s->v8.ask: nonzero
 * when the pc is in JIT code none of them holds (a V8_EVENT_CODE, once per
 * value).  ck: room for v8_codes' key, on the caller's stack.
 */
static __always_inline long v8_code_offset(struct unwind_scratch *s, __u64 fn, __u64 sfi, __u64 pc,
					   struct v8_code_key *ck)
{
	const struct v8_proc *p = &s->v8.proc;
	const struct v8_codes *cs;
	__u64 c, c1 = 0;
	long co;

	if (!p->fn_code ||
	    bpf_probe_read_user(&s->v8.rd, sizeof(s->v8.rd), (const void *)(fn - 1 + p->fn_code)))
		return -1;
	c = s->v8.rd;
	if ((co = v8_code_at(s, c, pc)) >= 0)
		goto found;
	ck->pid = s->v8.pid;
	ck->exec_id = s->v8.exec_id;
	ck->sfi = sfi;
	cs = bpf_map_lookup_elem(&v8_codes, ck);
	c = cs ? cs->code[0] : 0;
	c1 = cs ? cs->code[1] : 0;
	if (c && (co = v8_code_at(s, c, pc)) >= 0)
		goto found;
	c = c1;
	if (c && (co = v8_code_at(s, c, pc)) >= 0)
		goto found;
	/* not the builtins' text (a builtin called without a frame of its
	 * own): the recorder looks there for nothing.  The value asked
	 * changes with the codes known, so a code replaced is asked for
	 * again. */
	if (pc < p->blob_start || pc >= p->blob_end)
		s->v8.ask = ((pc >> 12) ^ (cs ? cs->code[0] : 0) ^ (c1 << 1)) | 1;
	return -1;
found:
	s->v8.code_addr = c;
	return co;
}

/* Tell prof-record of key k's first sight (V8_EVENT_SFI), or of a frame
 * in code it should look for (V8_EVENT_CODE), once per key. */
static __always_inline void v8_announce(const struct v8_sfi_key *k, __u32 type, __u32 guard,
					__u64 code, __u64 pc)
{
	static const __u8 one = 1; /* .rodata: no stack slot for it */
	struct v8_sfi_event *e;

	if (bpf_map_lookup_elem(&v8_seen, k))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return; /* not marked seen: the next sample asks again */
	bpf_map_update_elem(&v8_seen, k, &one, BPF_ANY);
	e->type = type;
	e->pid = k->pid;
	e->exec_id = k->exec_id;
	e->guard = guard;
	e->sfi = k->sfi;
	e->code = code;
	e->pc = pc;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int v8_frame(struct unwind_scratch *s, __u32 n, __u64 *w0, __u64 *w1)
{
	const struct v8_proc *p = &s->v8.proc;
	__u64 fp = s->r.regs[UNWIND_REG_RBP], fn, bca, off, sfi, map, fdata, nos, sodi;
	__u64 pc = s->r.regs[UNWIND_REG_RA];
	__u32 guard;
	long co;
	__u64 kind = V8_POS_NONE, pos = 0;
	/* one key on the stack for both maps, used one after the other */
	union {
		struct v8_sfi_key seen;
		struct v8_code_key code;
	} key = {};
	struct v8_sfi_key *k = &key.seen;

	if (n && !s->r.exact_pc)
		pc--; /* a return address: the call is before it */
	if (!s->r.bp_valid || fp < 4096 + V8_FRAME_READ || fp >= (1ULL << 47) ||
	    bpf_probe_read_user(s->v8.buf, V8_FRAME_READ, (const void *)(fp - V8_FRAME_READ)))
		return 0;
	fn = v8_slot(s->v8.buf, p->fp_function);
	bca = v8_slot(s->v8.buf, p->fp_bytecode_array);
	off = v8_slot(s->v8.buf, p->fp_bytecode_offset);
	if (!v8_heap_ptr(fn) ||
	    bpf_probe_read_user(&s->v8.rd, sizeof(s->v8.rd), (const void *)(fn - 1 + p->fn_shared)))
		return 0;
	sfi = s->v8.rd;
	if (!v8_heap_ptr(sfi) ||
	    bpf_probe_read_user(s->v8.buf, V8_OBJ_READ, (const void *)(sfi - 1)))
		return 0;
	map = v8_field(s->v8.buf, 0);
	fdata = v8_field(s->v8.buf, p->sfi_function_data);
	nos = v8_field(s->v8.buf, p->sfi_name_or_scope_info);
	sodi = v8_field(s->v8.buf, p->sfi_script_or_debug_info);
	s->v8.rd = 0;
	if (!v8_heap_ptr(map) ||
	    bpf_probe_read_user(&s->v8.rd, sizeof(__u16), (const void *)(map - 1 + p->map_instance_type)) ||
	    (__u16)s->v8.rd != p->type_sfi)
		return 0;
	s->v8.code = 0;
	s->v8.code_addr = 0;
	s->v8.ask = 0;
	/* An interpreted frame holds its function's own bytecode array and,
	 * as a Smi (value in the upper half), the offset being run. */
	if (bca == fdata && v8_heap_ptr(bca) && !(off & 0xffffffffULL) && (off >> 32) <= V8_POS_MASK) {
		kind = V8_POS_BYTECODE;
		pos = off >> 32;
	} else if ((co = v8_code_offset(s, fn, sfi, pc, &key.code)) >= 0) {
		/* its optimized code: the guard covers it, so that one
		 * stack word never stands for two codes' inlined frames */
		kind = V8_POS_CODE;
		pos = (__u64)co;
		fdata ^= s->v8.code;
	}
	k->guard = v8_guard(nos, sodi, fdata);
	*w0 = V8_TAG_SFI | sfi;
	*w1 = V8_TAG_POS | (__u64)k->guard << V8_GUARD_SHIFT | kind << V8_KIND_SHIFT | pos;
	k->pid = s->v8.pid;
	k->exec_id = s->v8.exec_id;
	k->sfi = sfi;
	k->pad = 0;
	v8_announce(k, V8_EVENT_SFI, k->guard, s->v8.code_addr, 0);
	if (s->v8.ask) {
		/* a key of its own: the frame's guard mixed with what is asked */
		guard = k->guard;
		k->guard ^= (__u32)(s->v8.ask ^ s->v8.ask >> 32) | 1;
		v8_announce(k, V8_EVENT_CODE, guard, 0, pc);
	}
	return 1;
}

#endif /* BPROF_V8_WALK_H */
