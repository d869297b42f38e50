/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_walk.h - HotSpot frames inside the native walk (jvm.h for the stack
 * words).  Included by profile.bpf.c only: inline in its bpf_loop callback,
 * because the linked object holds the 32 programs libbpf 1.1's loader
 * program takes (record/DESIGN.md "Java frames"), so no global function or
 * callback of its own.  The tail walker (old kernels) has none of this.
 *
 * Where the pc of a frame is in the process's code cache, the frame is not
 * unwound with the tables (there are none for generated code, and C2 code
 * keeps no frame pointer) but with what the JVM knows of it:
 *
 * - the template interpreter: its frames keep rbp; the Method* and the
 *   bytecode pointer are in fixed slots below it (the interrupted frame's
 *   live bcp is in r13);
 * - any other blob: found through its heap's segment map (bounded hops
 *   back to the block's first segment, then the blob after the block
 *   header); with a frame size (nmethods, runtime stubs), the caller's
 *   frame is at sp + frame_size words, return address and saved rbp
 *   under it; without one (BufferBlobs: call stub, adapters), by rbp.
 *
 * Every frame is recorded as two words, never as its raw pc.
 */
#ifndef BPROF_JVM_WALK_H
#define BPROF_JVM_WALK_H

#include "bprof.bpf.h"
#include "unwind/unwind_walk.h"
#include "jvm/jvm.h"

/* The HotSpot walk's own setting and maps, defined here: the one source
 * that includes this header (profile.bpf.c) is the one that defines them. */
/* prof-record --no-jvm, or no JVM met: off */
const volatile bool jvm_enabled = false;

/* tgid -> the JVM of its image (struct jvm_proc), written by prof-record */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct jvm_proc);
	__uint(max_entries, 1024);
} jvm_procs SEC(".maps");

/* Java frame identities announced to prof-record */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct jvm_seen_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
} jvm_seen SEC(".maps");

#define jvm_count(idx) unwind_count(UNWIND_COUNT_JVM | (idx))

/* The walk of (pid, exec_id) begins: 1 when it runs a JVM whose frames
 * are walked (its description copied into the scratch, once per walk, so
 * that no frame looks it up again). */
static __always_inline int jvm_walk_begin(struct unwind_scratch *s, __u32 pid, __u32 exec_id)
{
	const struct jvm_proc *p;

	if (!jvm_enabled)
		return 0;
	p = bpf_map_lookup_elem(&jvm_procs, &pid);
	if (!p || p->exec_id != exec_id)
		return 0;
	__builtin_memcpy(&s->jvm_proc, p, sizeof(s->jvm_proc));
	return 1;
}

static __always_inline int jvm_read(void *dst, __u32 size, __u64 addr)
{
	if (!addr || addr >= (1ULL << 47))
		return -1;
	return bpf_probe_read_user(dst, size, (const void *)addr) ? -1 : 0;
}

static __always_inline bool jvm_in_cc(const struct jvm_proc *j, __u64 addr)
{
	return addr >= j->cc_lo && addr < j->cc_hi;
}

/* A plausible return address: in the code cache, or in a mapped object
 * when the frame may return to native code (only the call stub, the VM's
 * way into Java, does: compiled methods, runtime stubs and the interpreter
 * are called from code in the code cache). */
static __always_inline bool jvm_plausible_ra(struct unwind_scratch *s,
					     const struct unwind_proc *proc, __u64 ra,
					     bool to_native)
{
	if (jvm_in_cc(&s->jvm_proc, ra))
		return true;
	return to_native && proc && unwind_mapping_index(&s->opaque, proc, ra) >= 0;
}

/* Tell prof-record about an identity the first time it is met. */
static __always_inline void jvm_announce(struct unwind_scratch *s, __u64 w0, __u32 guard)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct jvm_seen_key k = {
		.pid = id >> 32,
		.exec_id = s->jvm_proc.exec_id,
		.id = w0 & ~JVM_TAG_MASK,
		.guard = guard,
	};
	struct jvm_frame_event *e;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&jvm_seen, &k))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		jvm_count(JVM_STAT_LOST); /* not marked: the next sample tries again */
		return;
	}
	bpf_map_update_elem(&jvm_seen, &k, &one, BPF_ANY);
	e->type = JVM_EVENT_FRAME;
	e->pid = k.pid;
	e->exec_id = k.exec_id;
	e->guard = guard;
	e->id = k.id;
	__builtin_memcpy(e->blob, s->jvm_buf, JVM_BLOB_READ);
	bpf_ringbuf_submit(e, 0);
	jvm_count(JVM_STAT_NEW);
}

static __always_inline __u64 jvm_u64(const __u8 *buf, __u32 off)
{
	if (off > JVM_BLOB_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __s32 jvm_s32(const __u8 *buf, __u32 off)
{
	if (off > JVM_BLOB_READ - 4)
		return 0;
	return *(const __s32 *)(buf + off);
}

enum {
	JVM_EDGE_NONE = 0, /* the frame is whole, or the instruction says nothing */
	JVM_EDGE_TOP,      /* the return address is on top of the stack */
	JVM_EDGE_UNDER,    /* ... under the saved rbp */
	JVM_EDGE_NO_RBP,   /* the frame is made, rbp not saved in it yet */
};

/*
 * Where an interrupted compiled frame stands in its prologue or epilogue,
 * by the instruction at its pc: C1's and C2's frames are made by [stack
 * bang;] push rbp; sub rsp, n (an 8-bit n, or a 32-bit one after the push)
 * or by sub rsp, imm32; mov [rsp + n], rbp, and unmade by add rsp, n;
 * pop rbp; [cmp rsp, [r15 + poll]; ja stub;] ret (x86-64, 11..21).
 * JVM_EDGE_NONE elsewhere, and for a frame that is not interrupted.
 */
static __always_inline int jvm_leaf_edge(struct unwind_scratch *s, __u64 pc, bool leaf)
{
	__u8 *ib = (__u8 *)&s->jvm_words[2]; /* the byte before pc, then pc's */

	if (!leaf || jvm_read(ib, 8, pc - 1))
		return JVM_EDGE_NONE;
	if (ib[1] == 0x55 || ib[1] == 0xc3 || (ib[1] == 0x89 && ib[2] == 0x84 && ib[3] == 0x24) ||
	    (ib[1] == 0x49 && ib[2] == 0x3b && ib[3] == 0xa7) || (ib[1] == 0x0f && ib[2] == 0x87))
		return JVM_EDGE_TOP; /* push rbp, ret, a stack bang, the return poll */
	if (ib[1] == 0x5d)
		return JVM_EDGE_UNDER; /* pop rbp */
	if (ib[1] == 0x48 && ib[3] == 0xec && (ib[2] == 0x83 || ib[2] == 0x81))
		/* sub rsp: after push rbp (always so with an 8-bit n) */
		return ib[2] == 0x83 || ib[0] == 0x55 ? JVM_EDGE_UNDER : JVM_EDGE_TOP;
	if (ib[1] == 0x48 && ib[2] == 0x89 && (ib[3] == 0x6c || ib[3] == 0xac) && ib[4] == 0x24)
		return JVM_EDGE_NO_RBP; /* mov [rsp + n], rbp */
	return JVM_EDGE_NONE;
}

/*
 * The frame at the walk's position n when its pc is in the code cache:
 * -1 when it is not (the native step runs), 0 when a Java frame was
 * recorded and the registers are its caller's, 1 when the walk ends
 * (s->result says how).
 */
static __always_inline int jvm_frame(struct unwind_scratch *s, const struct unwind_proc *proc,
				     __u32 n)
{
	const struct jvm_proc *j = &s->jvm_proc;
	__u64 pc = s->r.regs[UNWIND_REG_RA], sp = s->r.regs[UNWIND_REG_RSP];
	__u64 fp = s->r.regs[UNWIND_REG_RBP], w0, w1, ra = 0, nbp = 0, nsp, cfa, off;
	__u64 *ips, *wd = s->jvm_words;
	bool leaf = s->r.exact_pc;
	int edge;
	__u32 guard;
	__s32 fs;

	if (pc < j->cc_lo || pc >= j->cc_hi)
		return -1;
	if (n > PROFILE_MAX_USTACK_DEPTH - 2) {
		s->result = -1;
		return 1;
	}
	s->jvm_to_native = 0;
	if (pc >= j->interp_lo && pc < j->interp_hi) {
		__u64 method, bcp, cm = 0, code;
		__u16 code_size = 0;
		__u32 fm = j->off.fp_method & 15, fb = j->off.fp_bcp & 15, fs_ = j->off.fp_sender_sp & 15;

		/* wd[0..15]: the 16 words below fp, wd[16], wd[17]: saved rbp, ra */
		if (!s->r.bp_valid || fp < sp || (fp & 7) || jvm_read(wd, 18 * 8, fp - 128)) {
			jvm_count(JVM_STAT_STOP_READ);
			goto stop;
		}
		method = wd[(16 - fm) & 15];
		if (jvm_read(&cm, 8, method + j->off.method_const) ||
		    jvm_read(&code_size, 2, cm + j->off.cm_code_size)) {
			jvm_count(JVM_STAT_STOP_READ);
			goto stop;
		}
		code = cm + j->off.cm_size;
		/* the interrupted frame's bcp is live in r13; the slot has
		 * the one saved at its last call */
		bcp = leaf && s->r.all_regs ? s->r.regs[UNWIND_REG_R13] : 0;
		if (bcp < code || bcp >= code + code_size)
			bcp = wd[(16 - fb) & 15];
		/* a native method's frame: no bytecodes, and the
		 * interpreter's native entry saves a 0 bcp: bci 0 */
		if (!code_size && !wd[(16 - fb) & 15])
			bcp = code;
		else if (bcp < code || bcp >= code + code_size) {
			jvm_count(JVM_STAT_STOP_BAD_BCP);
			goto stop;
		}
		w0 = JVM_TAG_ID | (__u64)JVM_KIND_INTERP << JVM_KIND_SHIFT | method;
		guard = jvm_method_guard(cm);
		off = bcp - code;
		ra = wd[17];
		nbp = wd[16];
		/* the caller's sp before the callee extended it (for a
		 * compiled caller, the base of its frame size) */
		nsp = wd[(16 - fs_) & 15];
		if (nsp <= fp)
			nsp = fp + 16;
		jvm_count(JVM_STAT_FRAMES_INTERP);
	} else {
		const struct jvm_heap *h = 0;
		__u64 seg, blob, begin, end;
		__u8 b = JVM_SEGMAP_FREE;
		__u32 log2;
		int i;

		for (i = 0; i < JVM_MAX_HEAPS; i++)
			if (i < (int)j->nr_heaps && pc >= j->heaps[i].lo && pc < j->heaps[i].hi)
				h = &j->heaps[i];
		if (!h)
			goto no_blob;
		log2 = h->log2_seg & 31;
		seg = (pc - h->lo) >> log2;
		if (jvm_read(&b, 1, h->segmap + seg) || b == JVM_SEGMAP_FREE)
			goto no_blob;
		/* each byte: how many segments back to hop (0: the block's
		 * first segment) */
		for (i = 0; i < JVM_SEGMAP_HOPS && b; i++) {
			if (seg < b)
				goto no_blob;
			seg -= b;
			if (jvm_read(&b, 1, h->segmap + seg))
				goto no_blob;
		}
		if (b)
			goto no_blob; /* further back than the hops allowed */
		blob = h->lo + (seg << log2) + j->off.heap_block;
		if (jvm_read(s->jvm_buf, JVM_BLOB_READ, blob)) {
			jvm_count(JVM_STAT_STOP_READ);
			goto stop;
		}
		begin = jvm_u64(s->jvm_buf, j->off.blob_code_begin);
		end = jvm_u64(s->jvm_buf, j->off.blob_code_end);
		if (pc < begin || pc >= end)
			goto no_blob;
		fs = jvm_s32(s->jvm_buf, j->off.blob_frame_size);
		guard = (__u32)jvm_s32(s->jvm_buf, j->off.nm_compile_id);
		off = pc - begin;
		w0 = JVM_TAG_ID | (__u64)JVM_KIND_BLOB << JVM_KIND_SHIFT | blob;
		if (fs <= 0 && leaf && !jvm_read(wd, 8, sp) && wd[0] >= j->cc_lo &&
		    wd[0] < j->cc_hi) {
			/* interrupted in a stub without a frame size: the
			 * ones jumped into (itable and vtable stubs, the
			 * i2c adapter) have their caller's return address on
			 * top; one that built an rbp frame has the saved rbp
			 * there, seldom an address of JVM code */
			jvm_count(JVM_STAT_LEAF_EDGE);
			ra = wd[0];
			nbp = fp;
			nsp = sp + 8;
		} else if (fs <= 0) {
			/* no frame of its own (call stub, adapters): rbp */
			s->jvm_to_native = 1;
			if (!s->r.bp_valid || fp < sp || (fp & 7) || jvm_read(wd, 16, fp)) {
				jvm_count(JVM_STAT_STOP_BAD_FRAME);
				goto stop;
			}
			nbp = wd[0];
			ra = wd[1];
			nsp = fp + 16;
		} else {
			if (fs > 65536) {
				jvm_count(JVM_STAT_STOP_BAD_FRAME);
				goto stop;
			}
			cfa = sp + (__u64)fs * 8;
			nsp = cfa;
			edge = jvm_leaf_edge(s, pc, leaf);
			if (edge != JVM_EDGE_NONE)
				jvm_count(JVM_STAT_LEAF_EDGE);
			if (edge == JVM_EDGE_TOP) {
				/* nothing pushed yet, or all popped again */
				if (!jvm_read(wd, 8, sp))
					ra = wd[0];
				nbp = fp;
				nsp = sp + 8;
			} else if (edge == JVM_EDGE_UNDER) {
				/* rbp pushed, the frame not yet (or no
				 * longer) made */
				if (!jvm_read(wd, 16, sp)) {
					nbp = wd[0];
					ra = wd[1];
				}
				nsp = sp + 16;
			} else if ((!leaf || edge == JVM_EDGE_NO_RBP ||
				    (__s64)off >= jvm_s32(s->jvm_buf, j->off.blob_frame_complete)) &&
				   !jvm_read(wd, 16, cfa - 16)) {
				/* the whole frame (rbp not saved yet:
				 * the caller's still in the register).  An
				 * interrupted frame elsewhere in a prologue
				 * or epilogue gets no caller from a guess:
				 * its return address must be in the code
				 * cache or the walk stops */
				nbp = edge == JVM_EDGE_NO_RBP ? fp : wd[0];
				ra = wd[1];
			}
		}
		jvm_count(JVM_STAT_FRAMES_BLOB);
	}
	if (!jvm_plausible_ra(s, proc, ra, s->jvm_to_native) || nsp <= sp) {
		jvm_count(JVM_STAT_STOP_BAD_FRAME);
		goto stop;
	}
	w1 = JVM_TAG_POS | (__u64)guard << JVM_GUARD_SHIFT | (off & JVM_OFFSET_MASK);
	/* n again where the verifier sees it (as python_frame()) */
	barrier_var(n);
	if (n > PROFILE_MAX_USTACK_DEPTH - 2)
		return 1;
	ips = &s->stack.ips[n];
	ips[0] = w0;
	ips[1] = w1;
	s->stack.nr = n + 2;
	s->hash = (s->hash ^ w0) * 0x100000001b3ULL;
	s->hash = (s->hash ^ w1) * 0x100000001b3ULL;
	jvm_announce(s, w0, guard);
	/* the report trusts the caller of an interrupted frame that was
	 * not unwound by frame pointer only with this flag */
	if (s->nr_native++ == 0)
		s->stack.flags |= PROFILE_USTACK_LEAF_CFI;
	s->r.regs[UNWIND_REG_RA] = ra;
	s->r.regs[UNWIND_REG_RSP] = nsp;
	s->r.regs[UNWIND_REG_RBP] = nbp;
	s->r.bp_valid = 1;
	s->r.all_regs = 0;
	s->r.exact_pc = 0;
	s->r.used_table = 1;
	return 0;
no_blob:
	jvm_count(JVM_STAT_STOP_NO_BLOB);
stop:
	/* the frame kept as its raw pc (unnamed, never misnamed), the walk
	 * over */
	s->result = UNWIND_STOP;
	barrier_var(n);
	if (n < PROFILE_MAX_USTACK_DEPTH) {
		s->stack.ips[n] = pc;
		s->stack.nr = n + 1;
		s->hash = (s->hash ^ pc) * 0x100000001b3ULL;
	}
	return 1;
}

#endif /* BPROF_JVM_WALK_H */
