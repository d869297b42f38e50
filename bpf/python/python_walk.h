/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python_walk.h - one step of the CPython frame walk: from an interpreter
 * frame's address to the two stack words that name it (python.h) and its
 * previous frame.  Like unwind_step.h a pure function over a memory
 * reader, compiled into the BPF program (bpf/python/python.bpf.c), where memory is
 * bpf_probe_read_user, and into user-space tests, which replay memory
 * captured from a live interpreter and compare with its own traceback.
 * The includer provides, before including:
 *
 *   PY_ENV                       type of the opaque environment pointer
 *   PY_READ(env, dst, size, addr)  read user memory; 0 or < 0
 *   PY_STAT(env, stat)           count one enum python_stat event
 *
 * No loops: the caller steps frame by frame (the native walk's bpf_loop),
 * and the thread list one thread at a time.
 */
/* Two guards, as unwind_step.h: the types (struct python_walk is part of
 * the BPF walk's scratch, bpf/bprof.bpf.h) before the PY_* macros, the
 * step only after. */
#ifndef BPROF_PYTHON_WALK_TYPES_H
#define BPROF_PYTHON_WALK_TYPES_H

#include "python/python.h"

/* The walk's state across the native frames of one sample. */
struct python_walk {
	__u64 frame;   /* the next interpreter frame to name; 0: none left */
	__u8 started;  /* frame was read from the thread state */
	__u8 stopped;  /* ended for a counted reason: no more Python frames */
	__u8 pad[6];
	/* the frame a step names (python_frame's, not on the BPF stack:
	 * Linux 6.1 takes 512 bytes of it for the walk's whole call chain) */
	__u64 w[2];
	/* what a step reads at once (an interpreter frame, then a code
	 * object's header): a buffer, not the BPF stack */
	__u8 buf[PYTHON_CODE_READ];
};

enum python_step_result {
	PYTHON_STEP_FRAME = 0, /* *w0, *w1 name a frame; more may follow */
	PYTHON_STEP_LAST,      /* *w0, *w1 name the frame the evaluation
				* loop was entered with: its segment ends */
	PYTHON_STEP_END,       /* no frame: the segment ended (or none is
				* left); the native walk goes on */
	PYTHON_STEP_STOP,      /* no frame, and none from now on (counted) */
};
#endif /* BPROF_PYTHON_WALK_TYPES_H */

#if defined(PY_READ) && !defined(BPROF_PYTHON_WALK_H)
#define BPROF_PYTHON_WALK_H

/* A field of buf, read at a checked offset: the offsets come from a map,
 * and the verifier needs them bounded. */
static __always_inline __u64 python_u64(const __u8 *buf, __u32 off)
{
	if (off > PYTHON_CODE_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 python_u32(const __u8 *buf, __u32 off)
{
	if (off > PYTHON_CODE_READ - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

static __always_inline __u8 python_u8(const __u8 *buf, __u32 off)
{
	if (off > PYTHON_CODE_READ - 1)
		return 0;
	return buf[off];
}

static __always_inline int python_read_u64(PY_ENV env, __u64 addr, __u64 *out)
{
	*out = 0;
	if (!addr || addr >= (1ULL << 47))
		return -1;
	return PY_READ(env, out, sizeof(*out), addr) ? -1 : 0;
}

/* The interpreter frame a thread state runs (0 if none, < 0 unreadable). */
static __always_inline int python_current_frame(PY_ENV env, const struct python_proc *p,
						__u64 tstate, __u64 *frame)
{
	__u64 cf;

	if (p->off.ts_cframe != PYTHON_OFF_NONE) {
		if (python_read_u64(env, tstate + p->off.ts_cframe, &cf))
			return -1;
		return python_read_u64(env, cf + p->off.cframe_current, frame);
	}
	return python_read_u64(env, tstate + p->off.ts_current_frame, frame);
}

/* The first thread state of the interpreter's list (0: none). */
static __always_inline int python_first_thread(PY_ENV env, const struct python_proc *p,
					       __u64 *tstate)
{
	__u64 interp;

	if (python_read_u64(env, p->runtime + p->off.runtime_interp, &interp))
		return -1;
	return python_read_u64(env, interp + p->off.interp_threads, tstate);
}

/* Whether thread state tstate is thread tid's; *next: the one after it. */
static __always_inline int python_thread_is(PY_ENV env, const struct python_proc *p,
					    __u64 tstate, __u32 tid, __u64 *next)
{
	__u64 ntid = 0;

	if (python_read_u64(env, tstate + p->off.ts_native_tid, &ntid))
		return -1;
	if (next && python_read_u64(env, tstate + p->off.ts_next, next))
		*next = 0;
	return ntid == tid;
}

/*
 * Name w->frame and step to its previous frame.  The evaluation loop runs
 * frames from the one it was entered with (an entry frame in 3.11, one
 * above a C-stack shim frame from 3.12) to the innermost: the native walk
 * calls this at each _PyEval_EvalFrameDefault frame until the segment
 * ends.  Every read is checked; a frame whose code is not a code object
 * (PyCode_Type), an instruction outside its code or a frame that is its
 * own previous ends the walk with a counted reason: a wrong Python frame
 * is worse than none.
 */
static __always_inline int python_step(PY_ENV env, const struct python_proc *p,
				       struct python_walk *w, __u64 *w0, __u64 *w1)
{
	__u64 frame = w->frame, prev, code, instr, delta, size;
	__u32 firstlineno, guard;
	__u8 owner, is_entry;

	if (w->stopped || !frame)
		return PYTHON_STEP_END;
	if (frame >= (1ULL << 47) || PY_READ(env, w->buf, PYTHON_FRAME_READ, frame)) {
		PY_STAT(env, PYTHON_STAT_STOP_READ);
		goto stop;
	}
	prev = python_u64(w->buf, p->off.fr_previous);
	code = python_u64(w->buf, p->off.fr_code);
	instr = python_u64(w->buf, p->off.fr_instr);
	owner = python_u8(w->buf, p->off.fr_owner);
	is_entry = p->off.fr_is_entry != PYTHON_OFF_NONE ? python_u8(w->buf, p->off.fr_is_entry) : 0;
	if (prev == frame) {
		PY_STAT(env, PYTHON_STAT_STOP_LOOP);
		goto stop;
	}
	if (p->off.entry == PYTHON_ENTRY_CSTACK && owner == PYTHON_OWNED_BY_CSTACK) {
		/* the loop's shim: its segment is over */
		w->frame = prev;
		return PYTHON_STEP_END;
	}
	if (!code || code >= (1ULL << 47) || PY_READ(env, w->buf, PYTHON_CODE_READ, code)) {
		PY_STAT(env, PYTHON_STAT_STOP_READ);
		goto stop;
	}
	if (python_u64(w->buf, 8) != p->code_type) {
		PY_STAT(env, PYTHON_STAT_STOP_NOT_CODE);
		goto stop;
	}
	size = python_u64(w->buf, p->off.co_size);
	firstlineno = python_u32(w->buf, p->off.co_firstlineno);
	guard = python_guard(firstlineno, python_u64(w->buf, p->off.co_filename),
			     python_u64(w->buf, p->off.co_qualname),
			     python_u64(w->buf, p->off.co_linetable));
	/* prev_instr starts one code unit before the first (3.11, 3.12) */
	delta = instr - code;
	if (size >= (1ULL << 22) || delta + 2 < p->off.co_adaptive ||
	    delta >= p->off.co_adaptive + size * 2 || delta > PYTHON_OFFSET_MASK) {
		PY_STAT(env, PYTHON_STAT_STOP_BAD_INSTR);
		goto stop;
	}
	*w0 = PYTHON_TAG_CODE | code;
	*w1 = PYTHON_TAG_INSTR | (__u64)guard << PYTHON_GUARD_SHIFT | delta;
	w->frame = prev;
	PY_STAT(env, PYTHON_STAT_FRAMES);
	if (p->off.entry == PYTHON_ENTRY_IS_ENTRY && is_entry)
		return PYTHON_STEP_LAST;
	return PYTHON_STEP_FRAME;
stop:
	w->stopped = 1;
	w->frame = 0;
	return PYTHON_STEP_STOP;
}

/*
 * Copy cap bytes of the object at addr into dst; where they cross into a
 * page that cannot be read, the bytes up to the end of addr's page.  The
 * number copied, 0 if none.
 */
static __always_inline __u16 python_copy_obj(PY_ENV env, __u8 *dst, __u32 cap, __u64 addr)
{
	__u32 n;

	if (!addr || addr >= (1ULL << 47))
		return 0;
	if (!PY_READ(env, dst, cap, addr))
		return (__u16)cap;
	n = 4096 - (__u32)(addr & 4095);
	if (n == 0 || n >= cap)
		return 0;
	if (PY_READ(env, dst, n, addr))
		return 0;
	return (__u16)n;
}

/*
 * What names the code object whose header python_step() just read (hdr,
 * PYTHON_CODE_READ bytes): into e, with e's identity already set.  Called
 * once per code object (py_seen), so its reads cost nothing per sample.
 */
static __always_inline void python_copy_names(PY_ENV env, const struct python_proc *p,
					      const __u8 *hdr, struct python_code_event *e)
{
	__builtin_memcpy(e->hdr, hdr, PYTHON_CODE_READ);
	e->hdr_len = PYTHON_CODE_READ;
	e->qualname = python_u64(hdr, p->off.co_qualname);
	e->filename = python_u64(hdr, p->off.co_filename);
	e->linetable = python_u64(hdr, p->off.co_linetable);
	e->qualname_len = python_copy_obj(env, e->qualname_raw, PYTHON_COPY_NAME, e->qualname);
	e->filename_len = python_copy_obj(env, e->filename_raw, PYTHON_COPY_FILE, e->filename);
	e->linetable_len = python_copy_obj(env, e->linetable_raw, PYTHON_COPY_LINES, e->linetable);
}

#endif /* BPROF_PYTHON_WALK_H */
