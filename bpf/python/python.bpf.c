// SPDX-License-Identifier: Apache-2.0
/*
 * python.bpf.c - CPython frames in the unwinder's walk (python.h for the
 * stack words): the maps, and the global python_frame() the bpf_loop walk
 * calls (profile.bpf.c), which knows nothing else of Python.  The thread
 * state, the announcement of new code objects and the step (python_walk.h,
 * the pure function shared with the replay tests) are python_frame.h's,
 * inline, which the tail walk of kernels without bpf_loop includes too
 * (tailwalk/tailwalk.bpf.c).  Compiled on its own and linked with the
 * other tracers (bprof.bpf.h).
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
#include "python/python.h"
#include "python_frame.h"

/* prof-record --no-python, or no interpreter met: off */
const volatile bool python_enabled = false;

/* py_procs, tgid -> the interpreter of its image, is defined in
 * profile.bpf.c beside py_stats: python_walk_begin() (bprof.bpf.h) is
 * inline in the native walk there */

/* the thread states' cache and the code objects announced
 * (python_frame.h, which the tail walk includes too) */
struct bprof_py_tstates_map py_tstates SEC(".maps");
struct bprof_py_seen_map py_seen SEC(".maps");

/*
 * Python frames before a _PyEval_EvalFrameDefault frame, at the native
 * walk's frame n (bprof.bpf.h): 1 when this step of the walk put a Python
 * frame in the stack, 0 when the native step is to run.  Global: verified
 * once on its own, not inside each state of the native walk's loop.
 */
__attribute__((noinline)) int python_frame(struct unwind_scratch *s, __u32 n)
{
	return python_frame_at(s, n);
}
