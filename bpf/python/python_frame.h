/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python_frame.h - the Python frames of one native walk's step, in BPF:
 * the thread state, the announcement of new code objects and the step
 * that puts a frame in the stack (python_frame_at).  Inline, for the two
 * walks that drive it: python.bpf.c's global python_frame(), which the
 * bpf_loop walk calls (profile.bpf.c), and tailwalk/tailwalk.bpf.c's runs
 * chained by tail calls, on kernels without bpf_loop, whose verifiers
 * refuse a global function with pointer arguments (5.12) and any callback
 * (5.13).  The includer defines PYTHON_NO_BPF_LOOP for the latter: the
 * thread list is then walked by a bounded loop of PYTHON_LEAN_THREADS.
 */
#ifndef BPROF_PYTHON_FRAME_H
#define BPROF_PYTHON_FRAME_H

#include "bprof.bpf.h"
#include "python/python.h"

/* (tid, tgid) -> the thread's PyThreadState address, a cache (defined in
 * python.bpf.c) */
struct bprof_py_tstates_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct python_tstate_key);
	__type(value, __u64);
	__uint(max_entries, 16384);
};
extern struct bprof_py_tstates_map py_tstates SEC(".maps");

/* code objects announced to prof-record (defined in python.bpf.c) */
struct bprof_py_seen_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct python_code_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
};
extern struct bprof_py_seen_map py_seen SEC(".maps");

/* The Python walk's statistics (py_stats, defined in profile.bpf.c beside
 * the function that counts them): counted by the unwinder's counting
 * function (one function fewer in the object, which is at the 32 libbpf
 * 1.1's loader program holds). */
#define python_count(idx) unwind_count(UNWIND_COUNT_PYTHON | (idx))

#define PY_ENV void *
#define PY_READ(env, dst, size, addr) bpf_probe_read_user((dst), (size), (const void *)(addr))
#define PY_STAT(env, stat) python_count(stat)
#include "python/python_walk.h"

/* Threads a list walk looks at before giving up (a thread list longer
 * than this: its later threads get no Python frames, counted as
 * PYTHON_STAT_NO_TSTATE).  Without bpf_loop the verifier walks each of
 * them in every program run's frames: a few, and the cache by tid does
 * the rest (a thread is looked for on its first sample only). */
#define PYTHON_MAX_THREADS 256
#define PYTHON_LEAN_THREADS 8

struct python_find {
	const struct python_proc *p;
	__u64 ts;
	__u32 tid;
	int found;
};

/* One thread of the list: 1 when the walk is over (found, or the list
 * ended or could not be read), 0 to go on.  A bpf_loop callback, or a
 * loop's body without it. */
static __always_inline long python_find_step(__u32 i, void *data)
{
	struct python_find *f = data;
	__u64 next = 0;
	int r;

	if (!f->ts)
		return 1;
	r = python_thread_is(0, f->p, f->ts, f->tid, &next);
	if (r < 0)
		return 1;
	if (r) {
		f->found = 1;
		return 1;
	}
	if (next == f->ts)
		return 1;
	f->ts = next;
	return 0;
}

/* The current thread's PyThreadState, or 0. */
static __always_inline __u64 python_tstate(const struct python_proc *p)
{
	__u64 id = bpf_get_current_pid_tgid(), *cached;
	struct python_tstate_key k = { .tid = (__u32)id, .pid = id >> 32 };
	struct python_find f = { .p = p, .tid = (__u32)id };

	cached = bpf_map_lookup_elem(&py_tstates, &k);
	if (cached && python_thread_is(0, p, *cached, k.tid, 0) == 1)
		return *cached;
	python_count(PYTHON_STAT_TSTATE_WALKS);
	if (python_first_thread(0, p, &f.ts))
		return 0;
#ifdef PYTHON_NO_BPF_LOOP
	for (__u32 i = 0; i < PYTHON_LEAN_THREADS; i++)
		if (python_find_step(i, &f))
			break;
#else
	bpf_loop(PYTHON_MAX_THREADS, python_find_step, &f, 0);
#endif
	if (!f.found)
		return 0;
	bpf_map_update_elem(&py_tstates, &k, &f.ts, BPF_ANY);
	return f.ts;
}

/* Tell prof-record about a code object the first time it is met, with
 * what names it copied now (python.h: the process may be gone by the time
 * prof-record reads the event). */
static __always_inline void python_announce(const struct python_proc *p, const __u8 *hdr,
					    __u32 pid, __u32 exec_id, __u64 w0, __u64 w1)
{
	struct python_code_key k = {
		.pid = pid,
		.exec_id = exec_id,
		.guard = (__u32)(w1 >> PYTHON_GUARD_SHIFT),
		.code = w0 & PYTHON_ADDR_MASK,
	};
	struct python_code_event *e;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&py_seen, &k))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* not marked seen: the next sample tries again */
		python_count(PYTHON_STAT_CODES_LOST);
		return;
	}
	bpf_map_update_elem(&py_seen, &k, &one, BPF_ANY);
	e->type = PYTHON_EVENT_CODE;
	e->pid = pid;
	e->exec_id = exec_id;
	e->guard = k.guard;
	e->code = k.code;
	python_copy_names(0, p, hdr, e);
	bpf_ringbuf_submit(e, 0);
	python_count(PYTHON_STAT_CODES_NEW);
}

/*
 * Python frames before a _PyEval_EvalFrameDefault frame, at the native
 * walk's frame n (bprof.bpf.h): 1 when this step of the walk put a Python
 * frame in the stack, 0 when the native step is to run.
 */
static __always_inline int python_frame_at(struct unwind_scratch *s, __u32 n)
{
	const struct python_proc *p;
	__u64 pc, w0, w1, *ips;
	int r;

	/* n may come from memory, unknown to the verifier (the walk never
	 * passes one past the depth limit) */
	if (!s || n >= PROFILE_MAX_USTACK_DEPTH)
		return 0;
	p = &s->py_proc;
	if (s->py_mode == PY_MODE_DONE) {
		s->py_mode = PY_MODE_NATIVE;
		return 0;
	}
	if (s->py_mode == PY_MODE_NATIVE) {
		if (s->py.stopped)
			return 0;
		pc = s->r.regs[UNWIND_REG_RA];
		if (n && !s->r.exact_pc)
			pc--; /* a return address: the call is before it */
		if (pc < p->eval_start || pc >= p->eval_end)
			return 0;
		if (!s->py.started) {
			__u64 ts;

			s->py.started = 1;
			python_count(PYTHON_STAT_SAMPLES);
			ts = python_tstate(p);
			if (!ts) {
				python_count(PYTHON_STAT_NO_TSTATE);
				s->py.stopped = 1;
				return 0;
			}
			if (python_current_frame(0, p, ts, &s->py.frame) < 0) {
				python_count(PYTHON_STAT_STOP_READ);
				s->py.stopped = 1;
				return 0;
			}
		}
		s->py_mode = PY_MODE_EMIT;
	}
	if (n + 2 > PROFILE_MAX_USTACK_DEPTH) {
		python_count(PYTHON_STAT_STOP_DEPTH);
		s->py.stopped = 1;
		s->py_mode = PY_MODE_NATIVE;
		return 0;
	}
	s->py.w[0] = 0;
	s->py.w[1] = 0;
	r = python_step(0, p, &s->py, &s->py.w[0], &s->py.w[1]);
	if (r == PYTHON_STEP_END || r == PYTHON_STEP_STOP) {
		s->py_mode = PY_MODE_NATIVE;
		return 0;
	}
	w0 = s->py.w[0];
	w1 = s->py.w[1];
	/* again, where the verifier sees it: the compiler keeps n in a
	 * register with unknown upper bits and zero-extends n and n + 1
	 * apart, so both stores go through one bounded pointer */
	barrier_var(n);
	if (n > PROFILE_MAX_USTACK_DEPTH - 2)
		return 0;
	ips = &s->stack.ips[n];
	ips[0] = w0;
	ips[1] = w1;
	s->stack.nr = n + 2;
	s->hash = (s->hash ^ w0) * 0x100000001b3ULL;
	s->hash = (s->hash ^ w1) * 0x100000001b3ULL;
	python_announce(p, s->py.buf, (__u32)(bpf_get_current_pid_tgid() >> 32), s->py_exec_id, w0,
			w1);
	if (r == PYTHON_STEP_LAST)
		s->py_mode = PY_MODE_DONE;
	return 1;
}

#endif /* BPROF_PYTHON_FRAME_H */
