/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python.bpf.h - CPython frames in the unwinder's walk (python.h for the
 * stack words): the maps, the thread state, the announcement of new code
 * objects, and the step (python_walk.h, the pure function shared with the
 * replay tests).  Included by profile.bpf.c before the walk's scratch,
 * which holds a struct python_walk; python_frame() there, beside
 * walk_frame() whose state it shares, is the only Python code outside
 * these headers.
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

#include "python.h"

/* prof-record --no-python, or no interpreter met: off */
const volatile bool python_enabled = false;

/* tgid -> the interpreter of its image (struct python_proc) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct python_proc);
	__uint(max_entries, 1024);
} py_procs SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PYTHON_STAT_MAX);
} py_stats SEC(".maps");

__attribute__((noinline)) int python_count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&py_stats, &idx);

	if (v)
		*v += 1; /* per-CPU */
	return 0;
}

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
