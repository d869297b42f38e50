// SPDX-License-Identifier: Apache-2.0
/*
 * python.bpf.c - CPython frames in the unwinder's walk (python.h for the
 * stack words): the maps, the thread state, the announcement of new code
 * objects, and the step (python_walk.h, the pure function shared with the
 * replay tests).  Compiled on its own and linked with the other tracers
 * (bprof.bpf.h); the native walk (profile.bpf.c) calls the two global
 * functions at the end of this file, and knows nothing else of Python.
 *
 * When the native walk reaches a _PyEval_EvalFrameDefault frame of a
 * process prof-record found an interpreter in (the "py_procs" hash), the
 * thread's interpreter frames of that invocation are put in its place,
 * two words each, then the native walk goes on with the eval frame itself
 * (prof-report hides it by default).  The thread's PyThreadState comes
 * from a cache by tid, checked at each use against the thread state's
 * native_thread_id and refilled by walking the interpreter's thread list:
 * see record/DESIGN.md "Python frames" for why not the GIL holder or TLS.
 */

#include "bprof.bpf.h"
#include "python.h"

/* prof-record --no-python, or no interpreter met: off */
const volatile bool python_enabled = false;

/* py_procs, tgid -> the interpreter of its image, is defined in
 * profile.bpf.c beside py_stats: python_walk_begin() (bprof.bpf.h) is
 * inline in the native walk there */

/* (tid, tgid) -> the thread's PyThreadState address, a cache */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct python_tstate_key);
	__type(value, __u64);
	__uint(max_entries, 16384);
} py_tstates SEC(".maps");

/* code objects announced to prof-record */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct python_code_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
} py_seen SEC(".maps");

/* The Python walk's statistics (py_stats, defined in profile.bpf.c beside
 * the function that counts them): counted by the unwinder's counting function (one function fewer in the
 * object, which is at the 32 libbpf 1.1's loader program holds). */
#define python_count(idx) unwind_count(UNWIND_COUNT_PYTHON | (idx))

#define PY_ENV void *
#define PY_READ(env, dst, size, addr) bpf_probe_read_user((dst), (size), (const void *)(addr))
#define PY_STAT(env, stat) python_count(stat)
#include "python_walk.h"

/* Threads a list walk looks at before giving up (a thread list longer
 * than this: its later threads get no Python frames, counted). */
#define PYTHON_MAX_THREADS 256

struct python_find {
	const struct python_proc *p;
	__u64 ts;
	__u32 tid;
	int found;
};

static long python_find_step(__u32 i, void *data)
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
	bpf_loop(PYTHON_MAX_THREADS, python_find_step, &f, 0);
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
 * frame in the stack, 0 when the native step is to run.  Global: verified
 * once on its own, not inside each state of the native walk's loop.
 */
__attribute__((noinline)) int python_frame(struct unwind_scratch *s, __u32 n)
{
	const struct python_proc *p;
	__u64 pc, w0, w1, *ips;
	int r;

	/* n is an argument now, unknown to the verifier (the walk never
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
