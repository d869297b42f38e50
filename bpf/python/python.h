/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python.h - CPython frames in the user stack: the layouts shared by the
 * BPF walk (python/python.bpf.c, python_walk.h), prof-record (record/python/) and
 * the replay tests.  Fixed-width types only, like profile.h.
 *
 * A Python frame is two words of struct profile_ustack.ips, in the place
 * of the evaluation loop's native frame that ran it (leaf first, so a
 * Python frame comes before the _PyEval_EvalFrameDefault frame it ran in):
 *
 *   ips[i]   = PYTHON_TAG_CODE  | code object's address (< 2^56)
 *   ips[i+1] = PYTHON_TAG_INSTR | guard << 24 | instruction byte offset
 *
 * Neither tag is a canonical x86-64 address (user addresses are below
 * 2^47, kernel ones above 0xffff800000000000), so a reader that does not
 * know them sees two unmapped addresses, never a wrong name.  The byte
 * offset is the frame's instruction pointer minus the code object's
 * address (below 2^24); the guard is python_guard() of the code object's
 * first line and its filename, qualname and line table pointers: a code
 * object freed and another allocated at its address differs in at least
 * one of them, so two different functions never share a stack identity.
 * SPEC.md 6.15 says how readers name them.
 */
#ifndef BPROF_PYTHON_H
#define BPROF_PYTHON_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PYTHON_TAG_MASK  0xff00000000000000ULL
#define PYTHON_TAG_CODE  0xb100000000000000ULL
#define PYTHON_TAG_INSTR 0xb200000000000000ULL
#define PYTHON_ADDR_MASK 0x00ffffffffffffffULL
#define PYTHON_OFFSET_MASK 0xffffffULL
#define PYTHON_GUARD_SHIFT 24

/* No such field in this version. */
#define PYTHON_OFF_NONE 0xffff

/* How a version marks the frame the evaluation loop was entered with. */
enum python_entry {
	PYTHON_ENTRY_IS_ENTRY = 1, /* 3.11: the frame's is_entry byte */
	PYTHON_ENTRY_CSTACK = 2,   /* 3.12, 3.13: a shim frame whose owner is
				    * FRAME_OWNED_BY_CSTACK (3) below the
				    * loop's first frame */
};
#define PYTHON_OWNED_BY_CSTACK 3

/* Bytes of a code object the walk reads at once (its header up to the
 * line table pointer, the largest of the offsets below, 3.11..3.13). */
#define PYTHON_CODE_READ 160
/* Bytes of an interpreter frame the walk reads at once. */
#define PYTHON_FRAME_READ 72

/*
 * Offsets of the fields the walk reads, in bytes, PYTHON_OFF_NONE where a
 * version has no such field.  Per version tables (record/python/offsets.c)
 * for 3.11 and 3.12; 3.13's from its _Py_DebugOffsets.
 */
struct python_offsets {
	__u16 runtime_interp;   /* _PyRuntime: the interpreter whose threads
				 * are walked (interpreters.main; 3.13:
				 * interpreters.head) */
	__u16 interp_threads;   /* PyInterpreterState.threads.head */
	__u16 ts_next;          /* PyThreadState.next */
	__u16 ts_native_tid;    /* PyThreadState.native_thread_id */
	__u16 ts_cframe;        /* PyThreadState.cframe (3.11, 3.12) */
	__u16 cframe_current;   /* _PyCFrame.current_frame (3.11, 3.12) */
	__u16 ts_current_frame; /* PyThreadState.current_frame (3.13) */
	__u16 fr_previous;      /* _PyInterpreterFrame.previous */
	__u16 fr_code;          /* .f_code (3.13: .f_executable) */
	__u16 fr_instr;         /* .prev_instr (3.13: .instr_ptr) */
	__u16 fr_owner;         /* .owner */
	__u16 fr_is_entry;      /* .is_entry (3.11) */
	__u16 co_size;          /* PyVarObject.ob_size of a code object:
				 * its length in 2-byte code units */
	__u16 co_firstlineno;
	__u16 co_filename;
	__u16 co_qualname;
	__u16 co_linetable;
	__u16 co_adaptive;      /* co_code_adaptive: the first code unit */
	__u16 entry;            /* enum python_entry */
	__u16 pad;
};

/*
 * What the walk needs of one CPython process image, in the "py_procs" hash
 * by tgid (one interpreter per process: the one that exports _PyRuntime).
 * Written by prof-record when it finds the interpreter in the image's
 * mappings; exec_id says which image it is of.
 */
struct python_proc {
	__u32 exec_id;
	__u32 version;          /* PY_VERSION_HEX */
	__u64 runtime;          /* address of _PyRuntime */
	__u64 eval_start;       /* [eval_start, eval_end): _PyEval_EvalFrameDefault */
	__u64 eval_end;
	__u64 code_type;        /* address of PyCode_Type */
	struct python_offsets off;
};

/* tid -> its PyThreadState, a cache the walk checks at each use
 * (native_thread_id == tid) and refills by walking the thread list. */
struct python_tstate_key {
	__u32 tid;
	__u32 pid;
};

/* Per-CPU counters ("py_stats" array); SPEC.md 6.15 lists them. */
enum python_stat {
	PYTHON_STAT_SAMPLES = 0,    /* walks that met the evaluation loop */
	PYTHON_STAT_FRAMES,         /* Python frames recorded */
	PYTHON_STAT_NO_TSTATE,      /* the thread's PyThreadState not found */
	PYTHON_STAT_TSTATE_WALKS,   /* thread list walks (cache misses) */
	PYTHON_STAT_STOP_READ,      /* walk ended: unreadable memory */
	PYTHON_STAT_STOP_NOT_CODE,  /* walk ended: a frame's code is no code object */
	PYTHON_STAT_STOP_BAD_INSTR, /* walk ended: instruction outside its code */
	PYTHON_STAT_STOP_LOOP,      /* walk ended: a frame is its own previous */
	PYTHON_STAT_STOP_DEPTH,     /* walk ended: the stack's depth limit */
	PYTHON_STAT_CODES_NEW,      /* code objects announced to prof-record */
	PYTHON_STAT_CODES_LOST,     /* ... not announced: the ring buffer full */
	PYTHON_STAT_MAX,
};

/*
 * Ring buffer event: a code object the walk met first, with what names it
 * copied in the same walk (python_copy_names): the code object's header
 * (the bytes the guard was computed from) and the first bytes of its
 * qualname and filename (str objects) and line table (a bytes object),
 * each from the object's address on, header included.  Copied in BPF
 * because a process may exit before prof-record reads the ring buffer:
 * a script's last function would then have no name.  prof-record parses
 * the copies as it would the process's memory, and reads the process only
 * for what does not fit (a longer name or line table).
 */
#define PYTHON_EVENT_CODE 0x200u
#define PYTHON_COPY_NAME  256   /* a qualname: ~200 ASCII characters */
#define PYTHON_COPY_FILE  512   /* a file name: ~460 */
#define PYTHON_COPY_LINES 2048  /* a line table: ~2000 bytes (a function
				 * of ~200 lines) */
struct python_code_event {
	__u32 type;             /* PYTHON_EVENT_CODE */
	__u32 pid;
	__u32 exec_id;
	__u32 guard;
	__u64 code;             /* its address */
	__u64 qualname;         /* the objects' addresses, from hdr */
	__u64 filename;
	__u64 linetable;
	__u16 hdr_len;          /* bytes copied of each: 0 (not copied), */
	__u16 qualname_len;     /* the whole buffer, or up to the end of */
	__u16 filename_len;     /* the object's page when the next page */
	__u16 linetable_len;    /* could not be read */
	__u8 hdr[PYTHON_CODE_READ];
	__u8 qualname_raw[PYTHON_COPY_NAME];
	__u8 filename_raw[PYTHON_COPY_FILE];
	__u8 linetable_raw[PYTHON_COPY_LINES];
};

/* The key of "py_seen", the code objects already announced: by image
 * (exec_id), so that an exec that puts another code object with the same
 * guard at the same address still announces it. */
struct python_code_key {
	__u32 pid;
	__u32 guard;
	__u64 code;
	__u32 exec_id;
	__u32 pad;
};

/* The guard of a code object (see above): the same function in BPF, the
 * recorder and the tests. */
static inline __u32 python_guard(__u32 firstlineno, __u64 filename, __u64 qualname,
				 __u64 linetable)
{
	__u64 h = 0xcbf29ce484222325ULL;

	h = (h ^ firstlineno) * 0x100000001b3ULL;
	h = (h ^ filename) * 0x100000001b3ULL;
	h = (h ^ qualname) * 0x100000001b3ULL;
	h = (h ^ linetable) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return (__u32)h;
}

#endif /* BPROF_PYTHON_H */
