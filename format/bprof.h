/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bprof.h - the .bprof recording file: in-memory model, writer and reader.
 *
 * A recording is a plain data structure (struct bprof_recording) whose
 * tables are arrays.  prof-record fills one and writes it with
 * bprof_write_file(); prof-report reads one with bprof_read_file() and walks
 * the arrays.  The byte layout on disk is specified in format/SPEC.md; this
 * header is the only public interface of the format module.
 *
 * Conventions (see ../shared/STYLE.md):
 *  - functions return 0 on success and a negative enum bprof_errcode on
 *    failure; when an error struct is passed it receives the code, a message
 *    naming the section and byte offset where reading failed, and errno (for
 *    I/O errors).
 *  - output parameters first; on failure *out is NULL.
 *  - everything reached from a recording returned by the reader is owned by
 *    the recording and released by bprof_recording_free().
 *  - the module never prints and never exits.
 */
#ifndef BPROF_H
#define BPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the on-disk format this library writes.  A reader accepts any
 * file with the same major version (minor versions only add sections or
 * append fields, which older readers skip) and refuses other majors. */
#define BPROF_FORMAT_MAJOR 1
#define BPROF_FORMAT_MINOR 10
/* The minor a file without time slices is written as (1.5, or 1.4 without
 * off-CPU rows either): such a file is what readers of those versions read
 * strictly (SPEC.md 7). */
#define BPROF_FORMAT_MINOR_NO_SLICES 5
#define BPROF_FORMAT_MINOR_NO_OFFCPU 4
/* ... and a file with time slices but no PYTHON section: 1.6. */
#define BPROF_FORMAT_MINOR_NO_PYTHON 6
/* ... and a file with a PYTHON section but no JIT section: 1.7. */
#define BPROF_FORMAT_MINOR_NO_JIT 7
/* ... and a file with neither a V8 nor a JVM section (1.9's): 1.8. */
#define BPROF_FORMAT_MINOR_NO_V8 8
#define BPROF_FORMAT_MINOR_NO_JVM BPROF_FORMAT_MINOR_NO_V8
/* ... and a file whose META has neither flag 6 nor 7 (1.10's): 1.9. */
#define BPROF_FORMAT_MINOR_NO_RT_LACKS 9

#define BPROF_COMM_LEN 16        /* as TASK_COMM_LEN; always NUL-terminated */
#define BPROF_BUILD_ID_MAX 64    /* longest build-id accepted (bytes) */
#define BPROF_NO_OBJECT UINT32_MAX /* mapping without a backing object */

/* ---- errors --------------------------------------------------------- */

enum bprof_errcode {
	BPROF_OK = 0,
	BPROF_E_IO = -1,          /* open/read/write/fsync/rename failed; see errno */
	BPROF_E_NOMEM = -2,       /* allocation failed */
	BPROF_E_NOT_BPROF = -3,   /* bad magic: not a .bprof file */
	BPROF_E_VERSION = -4,     /* incompatible major format version */
	BPROF_E_ZSTD = -5,        /* decompression failed (corrupt frame, checksum) */
	BPROF_E_TRUNCATED = -6,   /* data ends before a structure does */
	BPROF_E_CORRUPT = -7,     /* a value is out of range or inconsistent */
	BPROF_E_LIMIT = -8,       /* the file asks for more than the reader allows */
	BPROF_E_EXISTS = -9,      /* output exists and BPROF_WRITE_NO_CLOBBER given */
	BPROF_E_INVAL = -10,      /* invalid argument or recording passed by the caller */
};

struct bprof_error {
	int code;           /* enum bprof_errcode */
	int sys_errno;      /* errno for BPROF_E_IO, else 0 */
	char message[256];  /* human-readable, names section and offset */
};

/* Static string for an error code ("truncated data", ...). Never NULL. */
const char *bprof_strerror(int code);

/* ---- the recording ---------------------------------------------------- */

/* Flags in bprof_meta.flags: what the recorder was asked to capture. */
#define BPROF_META_USER_STACKS   (1u << 0)
#define BPROF_META_KERNEL_STACKS (1u << 1)
#define BPROF_META_INCLUDE_IDLE  (1u << 2)
#define BPROF_META_PER_THREAD    (1u << 3) /* counts carry a tid */
/* (1.8) what the recording kernel could not give: mapping generations were
 * not tracked (a library replaced at one address may carry the first's
 * names); Python frames were not walked though asked for */
#define BPROF_META_NO_GENERATIONS (1u << 4)
#define BPROF_META_NO_PYTHON_WALK (1u << 5)
/* (1.10) V8 JavaScript and HotSpot Java frames were not walked though not
 * turned off (the recording kernel lacked what the walks need) */
#define BPROF_META_NO_V8_WALK  (1u << 6)
#define BPROF_META_NO_JVM_WALK (1u << 7)

struct bprof_meta {
	char *hostname;
	char *kernel_release;   /* uname -r */
	char *arch;             /* uname -m */
	char *recorder_version; /* "prof-record 0.1.0" */
	char *options;          /* the command line as given */
	char *event;            /* "cpu-clock", "cpu-cycles", ... */
	uint64_t start_time_ns; /* CLOCK_REALTIME, ns since the epoch */
	uint64_t duration_ns;
	uint64_t sample_freq;   /* Hz; 0 when sample_period is used */
	uint64_t sample_period; /* events per sample; 0 when sample_freq is used */
	uint32_t ncpus;         /* CPUs sampled */
	uint32_t flags;         /* BPROF_META_* */
};

/*
 * One row of the in-kernel counts table.  Stack ids are what
 * bpf_get_stackid() returned: >= 0 indexes bprof_recording.stacks by id;
 * negative is -errno: -EFAULT means "no such stack" (a kernel thread has no
 * user stack, user code has no kernel stack), -ENOMEM / -EEXIST mean the
 * stack was lost (map full / hash collision).  BPROF_STACK_NONE (-1 is not
 * returned by the kernel) marks a stack that was not asked for (-U/-K).
 */
#define BPROF_STACK_NONE INT32_MIN
struct bprof_count {
	uint32_t pid;             /* host tgid */
	uint32_t tid;             /* host tid; 0 unless BPROF_META_PER_THREAD */
	uint32_t exec_id;         /* task->self_exec_id: which process snapshot */
	int32_t user_stack_id;
	int32_t kernel_stack_id;
	/* the image's mapping generation at the sample (1.3, SPEC.md 6.4):
	 * frames resolve against the mappings live in it (bprof_process's
	 * births and history); BPROF_GEN_UNKNOWN: the recorder could not tell */
	uint32_t map_gen;
	uint64_t kernel_ip;       /* interrupted kernel ip, 0 when in user mode */
	uint64_t count;
	char comm[BPROF_COMM_LEN];
	/* (1.5, SPEC.md 6.13) BPROF_STATE_ON_CPU for an on-CPU row (the
	 * COUNTS section); else the state the thread was off the CPU in (an
	 * OFFCPU row): count is then samples of blocked time and blocked_ns
	 * the blocked time of the blocks that produced them */
	uint32_t state;
	uint64_t blocked_ns;
	/* (1.6, SPEC.md 6.14) the time slice the row's samples fell in,
	 * counted from bprof_recording.slices.origin_ns; 0 without slices */
	uint32_t slice;
};

/* The SLICES section (1.6, SPEC.md 6.14): when each row's samples were
 * taken.  slice_ns 0: the recording has no slices (every row's time is
 * the whole recording). */
struct bprof_slices {
	uint64_t slice_ns;  /* length of a slice, > 0 */
	uint64_t origin_ns; /* CLOCK_REALTIME at the start of slice 0, ns since
			     * the epoch; the same in every file of a --rotate run */
};

/* The OFFCPU section's header (1.5, SPEC.md 6.13): how off-CPU time was
 * recorded and the recorder's counters.  Its rows are the counts whose
 * state is not BPROF_STATE_ON_CPU. */
enum { BPROF_OFFCPU_NONE = 0, BPROF_OFFCPU_BLOCKED = 1, BPROF_OFFCPU_WALL = 2 };
struct bprof_offcpu {
	uint32_t mode;          /* BPROF_OFFCPU_*: --off-cpu (S, D, T) or --wall (and R) */
	uint64_t period_ns;     /* one sample of blocked time, > 0 */
	uint64_t blocks;        /* blocks seen to their end */
	uint64_t blocks_short;  /* of those, too short to cross a period */
	uint64_t blocked_ns;    /* the time of all those blocks */
	uint64_t walks;         /* user stacks walked (one per sampled block) */
	uint64_t no_user_stack; /* sampled blocks counted without a user stack */
	uint64_t lost;          /* samples lost (a map full) */
};

enum bprof_thread_state {
	BPROF_STATE_ON_CPU = 0,
	BPROF_STATE_S = 1,  /* sleeping (interruptible) */
	BPROF_STATE_D = 2,  /* uninterruptible (disk, some locks) */
	BPROF_STATE_R = 3,  /* runnable, waiting for a CPU (prof-record --wall) */
	BPROF_STATE_T = 4,  /* stopped, traced, frozen or other */
	BPROF_STATE_MAX = BPROF_STATE_T,
};

/*
 * Stack ids from 2^30 up name user stacks that prof-record's own unwinder
 * walked with .eh_frame tables (--unwind=auto|cfi); with bit 29 set too,
 * the leaf's caller came from a table and is exact, so nothing a
 * frame-pointer walk may skip needs to be guessed.  Other ids: the leaf's
 * caller came from a frame pointer (the kernel's walk below 2^30, the
 * unwinder's fallback above).  SPEC.md 6.3.
 */
#define BPROF_STACK_ID_UNWOUND 0x40000000
#define BPROF_STACK_ID_EXACT_CALLER 0x20000000
static inline int bprof_stack_unwound(int32_t id)
{
	return id >= BPROF_STACK_ID_UNWOUND && (id & BPROF_STACK_ID_EXACT_CALLER);
}

/* Flags of a stack the unwinder walked (bprof_stack.flags, SPEC.md 6.9). */
#define BPROF_USTACK_LEAF_EXACT (1u << 0) /* the leaf's caller came from a table */
#define BPROF_USTACK_COMPLETE   (1u << 1) /* reached the outermost frame */
#define BPROF_USTACK_TRUNCATED  (1u << 2) /* cut at the depth limit */
#define BPROF_USTACK_FALLBACK   (1u << 3) /* some frame came from a frame pointer */
#define BPROF_USTACK_FLAGS_ALL  0xfu

/* A stack trace: ips[0] is the leaf. */
struct bprof_stack {
	uint32_t id;
	uint32_t nr_ips;
	uint64_t *ips;
	uint32_t flags;   /* BPROF_USTACK_*; only on ids >= BPROF_STACK_ID_UNWOUND */
};

/* Why samples or stacks were lost.  All counters are cumulative over the
 * recording; none of them is an estimate. */
struct bprof_losses {
	uint64_t user_stack_enomem;   /* stack map full */
	uint64_t user_stack_eexist;   /* stack hash collision */
	uint64_t kernel_stack_enomem;
	uint64_t kernel_stack_eexist;
	uint64_t counts_full;         /* counts map full: sample dropped */
	uint64_t manifest_lost;       /* processes whose mappings could not be read */
	uint64_t events_lost;         /* notifications to user space dropped */
	uint64_t other;
	/* user stacks walked (wholly or partly) by frame pointer because the
	 * unwind table they needed was not loaded yet (format 1.1) */
	uint64_t user_stack_before_table;
};

/* Object flags (bprof_object.flags). */
#define BPROF_OBJ_HAS_BUILD_ID (1u << 0) /* build_id[] is the ELF NT_GNU_BUILD_ID */
#define BPROF_OBJ_FALLBACK_ID  (1u << 1) /* no build-id; fallback_hash identifies it */
#define BPROF_OBJ_DELETED      (1u << 2) /* mapped file was deleted on disk */
#define BPROF_OBJ_VDSO         (1u << 3) /* the kernel's [vdso] */
#define BPROF_OBJ_UNREADABLE   (1u << 4) /* could not be opened at record time */

/* A file-backed object mapped executable by some sampled process. */
struct bprof_object {
	char *path;                  /* path as seen by the process */
	uint8_t build_id[BPROF_BUILD_ID_MAX];
	uint32_t build_id_len;       /* 0 when none */
	uint32_t flags;              /* BPROF_OBJ_* */
	uint64_t size;               /* st_size */
	uint64_t mtime_ns;
	uint64_t dev;
	uint64_t inode;
	uint64_t fallback_hash;      /* with BPROF_OBJ_FALLBACK_ID: hash of size, head and tail */
};

/* Mapping flags (bprof_mapping.flags). */
#define BPROF_MAP_ANON  (1u << 0) /* anonymous executable memory (JIT) */
#define BPROF_MAP_VDSO  (1u << 1)
#define BPROF_MAP_READ  (1u << 2)
#define BPROF_MAP_WRITE (1u << 3)

struct bprof_mapping {
	uint64_t start;        /* first address */
	uint64_t end;          /* one past the last address; start < end */
	uint64_t file_offset;  /* offset in the object of start */
	uint32_t object_index; /* into bprof_recording.objects, or BPROF_NO_OBJECT */
	uint32_t flags;        /* BPROF_MAP_* */
	uint32_t birth;        /* mapping generation it appeared in (1.3, SPEC.md
				* 6.12); meaningful with bprof_process.has_gens */
};

#define BPROF_GEN_UNKNOWN UINT32_MAX

/* A snapshot of one process's executable mappings.  A process that execs
 * gets one snapshot per exec_id. */
struct bprof_process {
	uint32_t pid;          /* host tgid */
	uint32_t ns_pid;       /* tgid in the process's own pid namespace */
	uint32_t exec_id;      /* matches bprof_count.exec_id */
	uint32_t nr_mappings;
	uint64_t snapshot_ns;  /* when captured, ns after meta.start_time_ns */
	char comm[BPROF_COMM_LEN];
	struct bprof_mapping *mappings; /* sorted by start, non-overlapping */
	char *perf_map;        /* contents of /tmp/perf-PID.map, or NULL */
	uint64_t perf_map_len;
	/* Mapping generations (1.3, the GENERATIONS section, SPEC.md 6.12):
	 * has_gens says the births of mappings[] mean something and history
	 * (mappings the process had earlier, any order, may overlap) and gaps
	 * (generations never seen, increasing, >= 1) complete them. */
	uint32_t has_gens;
	uint32_t nr_history;
	struct bprof_mapping *history;
	uint32_t nr_gaps;
	uint32_t *gaps;
};

/*
 * The mapping of p live at address addr in generation gen (SPEC.md 6.12):
 * 1 and *out when one is known, 0 when addr was in no known mapping, -1
 * when it cannot be known (a gap, an unknown generation, candidates of the
 * same birth that disagree).  Without has_gens, p's mappings alone.
 */
int bprof_process_mapping_at(const struct bprof_process *p, uint64_t addr, uint32_t gen,
			     const struct bprof_mapping **out);

struct bprof_module {
	char *name;
	uint64_t base;
	uint64_t size;
	uint8_t build_id[BPROF_BUILD_ID_MAX];
	uint32_t build_id_len;
};

/* One kallsyms line (text symbols only). */
struct bprof_ksym {
	uint64_t addr;
	char *name;
	uint32_t module_index;  /* into bprof_kernel.modules, or BPROF_NO_OBJECT for vmlinux */
};

/* Kernel section flags. */
#define BPROF_KERNEL_KALLSYMS_HIDDEN (1u << 0) /* kptr_restrict hid addresses */
/* ksyms holds only the symbols that contain a sampled kernel address, each
 * with its successor (so a lookup is bounded exactly as with the full table) */
#define BPROF_KERNEL_KALLSYMS_PARTIAL (1u << 1)

struct bprof_kernel {
	char *release;
	uint8_t build_id[BPROF_BUILD_ID_MAX];
	uint32_t build_id_len;
	uint32_t flags;          /* BPROF_KERNEL_* */
	uint64_t stext;          /* runtime address of _stext: KASLR reference; 0 unknown */
	uint32_t nr_modules;
	uint32_t nr_ksyms;       /* 0 when no snapshot (--no-kallsyms) */
	struct bprof_module *modules;
	struct bprof_ksym *ksyms; /* sorted by addr */
};

/*
 * How user stacks were unwound (the UNWIND section, SPEC.md 6.9; format
 * 1.1).  mode 0: the file does not say (format 1.0, or a writer that
 * unwound nothing), and every user stack came from frame pointers.
 */
enum bprof_unwind_mode {
	BPROF_UNWIND_UNKNOWN = 0,
	BPROF_UNWIND_FP = 1,   /* the kernel's frame-pointer walk */
	BPROF_UNWIND_AUTO = 2, /* .eh_frame tables where present, frame pointers elsewhere */
	BPROF_UNWIND_CFI = 3,  /* as auto, but never fall back to the kernel's walk */
};
#define BPROF_UNWIND_WALKED (1u << 0) /* the recorder's unwinder walked user stacks */

/* Counter indexes (SPEC.md 6.9); files may carry more or fewer. */
enum bprof_unwind_counter {
	BPROF_UNW_SAMPLES,
	BPROF_UNW_SAMPLES_COMPLETE,
	BPROF_UNW_SAMPLES_TRUNCATED,
	BPROF_UNW_SAMPLES_NO_IMAGE_TABLE,
	BPROF_UNW_SAMPLES_TABLE_PENDING,
	BPROF_UNW_FRAMES_TABLE,
	BPROF_UNW_FRAMES_FP,
	BPROF_UNW_FALLBACK_NO_MAPPING,
	BPROF_UNW_FALLBACK_NO_TABLE,
	BPROF_UNW_FALLBACK_PENDING,
	BPROF_UNW_FALLBACK_NO_ROW,
	BPROF_UNW_STOP_INVALID,
	BPROF_UNW_STOP_UNREADABLE,
	BPROF_UNW_STOP_BAD_FRAME,
	BPROF_UNW_STOP_NEEDS_REGISTERS,
	BPROF_UNW_OBJECTS_LOADED,
	BPROF_UNW_OBJECTS_SHARED,
	BPROF_UNW_OBJECTS_NO_TABLE,
	BPROF_UNW_OBJECTS_FAILED,
	BPROF_UNW_TABLE_ROWS,
	BPROF_UNW_TABLE_RULES,
	BPROF_UNW_TABLE_PAGES,
	BPROF_UNW_IMAGES,
	BPROF_UNW_IMAGE_FAILURES,
	BPROF_UNW_TABLE_BYTES,
	BPROF_UNW_BUILD_NS,
	BPROF_UNW_LOAD_NS,
	BPROF_UNW_SAMPLES_TABLE_NO_ROOM, /* 1.4 */
	BPROF_UNW_FALLBACK_NO_ROOM,
	BPROF_UNW_OBJECTS_EVICTED,
	BPROF_UNW_OBJECTS_RELOADED,
	BPROF_UNW_TABLE_BYTES_PEAK,
	BPROF_UNW_MEMORY_BUDGET,
	BPROF_UNW_SAMPLES_STALE_MAPPINGS,
	BPROF_UNW_NR_COUNTERS,
};
#define BPROF_UNWIND_MAX_COUNTERS 256 /* readers accept up to this many */

/*
 * An object whose unwind table was built but not loaded at the end of the
 * recording, for lack of room in the recorder's memory budget (format
 * 1.4): its user frames were walked by frame pointer.
 */
#define BPROF_UNWIND_MISS_SAMPLED (1u << 0) /* a walk met it (its stacks lost callers) */
struct bprof_unwind_miss {
	uint32_t object_index; /* into objects[] */
	uint32_t flags;        /* BPROF_UNWIND_MISS_* */
	uint64_t rows;         /* the rows its table needed */
};

struct bprof_unwind {
	uint32_t mode;  /* enum bprof_unwind_mode; 0: no UNWIND section */
	uint32_t flags; /* BPROF_UNWIND_WALKED */
	uint64_t counters[BPROF_UNW_NR_COUNTERS];
	uint32_t nr_misses; /* format 1.4; sorted by object_index */
	struct bprof_unwind_miss *misses;
};

/* "samples_complete", ...: SPEC.md's name of counter i; NULL past the end. */
const char *bprof_unwind_counter_name(unsigned i);
/* "fp", "auto", "cfi"; "unknown" for anything else. */
const char *bprof_unwind_mode_name(uint32_t mode);

/*
 * What the recorder was allowed to read (the ACCESS section, SPEC.md 6.11;
 * format 1.2).  A recorder running with capabilities instead of root may
 * be unable to identify some objects or processes; this says which, so
 * that the report can say what the recording lacks and which capability
 * would have given it.  present 0: the file does not say (older files).
 */
#define BPROF_ACCESS_ROOT        (1u << 0) /* effective uid 0 */
#define BPROF_ACCESS_MAP_FILES   (1u << 1) /* /proc/PID/map_files could be opened
					    * (CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN) */
#define BPROF_ACCESS_OTHER_USERS (1u << 2) /* other users' processes could be read (CAP_SYS_PTRACE) */
#define BPROF_ACCESS_ANY_FILE    (1u << 3) /* files the user may not read could be (CAP_DAC_READ_SEARCH) */
#define BPROF_ACCESS_KALLSYMS    (1u << 4) /* /proc/kallsyms showed kernel addresses (CAP_SYSLOG) */
#define BPROF_ACCESS_FLAGS_ALL   0x1fu      /* other bits are reserved */

/* Counter indexes (SPEC.md 6.11); files may carry more or fewer. */
enum bprof_access_counter {
	BPROF_ACC_OBJECTS_BY_PATH,    /* identified through /proc/PID/root/PATH, dev+inode checked */
	BPROF_ACC_OBJECTS_UNVERIFIED, /* PATH held another file or none (deleted, replaced) */
	BPROF_ACC_OBJECTS_DENIED,     /* the recorder was not allowed to open the file */
	BPROF_ACC_PROCESSES_DENIED,   /* processes whose mappings it was not allowed to read */
	BPROF_ACC_NR_COUNTERS,
};
#define BPROF_ACCESS_MAX_COUNTERS 256 /* readers accept up to this many */

struct bprof_access {
	uint32_t present;      /* 1: the recording has an ACCESS section (the writer
				* writes one only then); 0: the rest must be 0 */
	uint32_t flags;        /* BPROF_ACCESS_* */
	uint32_t euid;         /* the recorder's effective uid */
	uint64_t capabilities; /* its effective capability set: bit n is capability n */
	uint64_t counters[BPROF_ACC_NR_COUNTERS];
};

/* "objects_by_path", ...: SPEC.md's name of counter i; NULL past the end. */
const char *bprof_access_counter_name(unsigned i);

/* The bytes of an object no workstation can find by build-id (the vDSO),
 * carried in the recording (SPEC.md 6.10; format 1.1). */
#define BPROF_IMAGE_MAX (1u << 20)
struct bprof_image {
	uint32_t object_index; /* into objects; images sorted by it, one per object */
	uint64_t len;          /* 1 .. BPROF_IMAGE_MAX */
	uint8_t *data;
};

/*
 * CPython frames (1.7, SPEC.md 6.15).  A Python frame is two stack words
 * (BPROF_PY_TAG_CODE | code object address, BPROF_PY_TAG_INSTR | guard << 24
 * | instruction byte offset); the PYTHON section carries what names it:
 * per code object met, copied while the process lived, its qualified name,
 * file name, first line and line table.
 */
#define BPROF_PY_TAG_MASK  0xff00000000000000ULL
#define BPROF_PY_TAG_CODE  0xb100000000000000ULL
#define BPROF_PY_TAG_INSTR 0xb200000000000000ULL
#define BPROF_PY_ADDR_MASK 0x00ffffffffffffffULL
#define BPROF_PY_OFFSET_MASK 0xffffffULL
#define BPROF_PY_GUARD_SHIFT 24
#define BPROF_PY_NAME_MAX 4096        /* qualname, filename bytes */
#define BPROF_PY_LINETABLE_MAX (1u << 20)
#define BPROF_PY_NR_COUNTERS 16       /* counters this library knows */

/* Why a process's Python frames were (not) walked. */
enum bprof_python_status {
	BPROF_PY_WALKED = 0,        /* a supported CPython: frames walked */
	BPROF_PY_UNKNOWN_VERSION,   /* a version without offsets (native stacks only) */
	BPROF_PY_FREE_THREADED,     /* a free-threaded build (not supported) */
	BPROF_PY_NO_OFFSETS,        /* the offsets could not be read or are implausible */
	BPROF_PY_STATUS_MAX = BPROF_PY_NO_OFFSETS,
};

struct bprof_python_proc {
	uint32_t pid, exec_id;
	uint32_t version;           /* PY_VERSION_HEX, 0 if unknown */
	uint32_t status;            /* enum bprof_python_status */
};

struct bprof_python_code {
	uint32_t pid, exec_id;
	uint64_t code;              /* the code object's address */
	uint32_t guard;             /* as in its frames' second word */
	int32_t firstlineno;
	uint32_t code_offset;       /* bytes from the object to its first code unit */
	uint32_t nr_units;          /* its code's length in 2-byte units */
	char *qualname;             /* UTF-8, NUL-free */
	char *filename;
	uint8_t *linetable;         /* co_linetable (3.11+ location table) */
	uint32_t linetable_len;
};

struct bprof_python {
	uint32_t present;           /* the section is written / was read */
	uint32_t nr_counters;       /* <= 256 */
	uint64_t counters[256];     /* SPEC.md 6.14's table */
	uint64_t nr_procs, nr_codes;
	struct bprof_python_proc *procs; /* sorted by (pid, exec_id), unique */
	struct bprof_python_code *codes; /* sorted by (pid, exec_id, code, guard), unique */
};

/* "samples", "frames", ...: SPEC.md 6.14's name of counter i; NULL past
 * the end. */
const char *bprof_python_counter_name(unsigned i);
/* The order of struct bprof_python.codes (pid, exec_id, code, guard): <0, 0
 * or >0 as for qsort(3), whose comparator it is (a and b point to struct
 * bprof_python_code). The recorder sorts its copies with it before writing. */
int bprof_python_code_cmp(const void *a, const void *b);
/* The code a frame names (binary search); NULL if the recording has none. */
struct bprof_recording;
const struct bprof_python_code *bprof_python_code_find(const struct bprof_recording *rec,
						      uint32_t pid, uint32_t exec_id,
						      uint64_t code, uint32_t guard);

/*
 * What the recorder kept of JIT compilers' own symbol files (the JIT
 * section, SPEC.md 6.16; format 1.8): its counters (how much of the perf
 * maps in PROCESSES and of the jitdumps below it kept, dropped to its
 * caps, or refused), how CLOCK_MONOTONIC (jitdump records' clock) maps
 * to CLOCK_REALTIME (META's), and each process image's jitdump.
 */
enum bprof_jit_counter {
	BPROF_JIT_PERF_MAP_BYTES,     /* perf map bytes the recorder kept, all images */
	BPROF_JIT_PERF_MAP_DROPPED,   /* perf map bytes not kept: a cap was reached */
	BPROF_JIT_PERF_MAP_CAPPED,    /* images whose perf map reached a cap */
	BPROF_JIT_PERF_MAP_CAP_IMAGE, /* the cap per image, bytes (a setting) */
	BPROF_JIT_PERF_MAP_CAP_TOTAL, /* the cap over all images, bytes (a setting) */
	BPROF_JIT_PERF_MAP_REFUSED,   /* perf map files not taken: older than their
				       * process, another owner, not a regular file */
	BPROF_JIT_PERF_MAP_READS,     /* reads that found new lines */
	BPROF_JIT_PERF_MAP_FINAL,     /* reads when an image ended (exit, exec) */
	BPROF_JIT_PERF_MAP_REPLACED,  /* files found replaced or truncated (appended, not swapped) */
	BPROF_JIT_DUMP_BYTES,         /* jitdump bytes kept (code bytes stripped) */
	BPROF_JIT_DUMP_DROPPED,       /* jitdump record bytes not kept: a cap */
	BPROF_JIT_DUMP_CODE_STRIPPED, /* code bytes of JIT_CODE_LOAD records not kept */
	BPROF_JIT_DUMP_REFUSED,       /* jitdump files not taken: bad header, not regular */
	BPROF_JIT_NR_COUNTERS,
};
#define BPROF_JIT_MAX_COUNTERS 256 /* readers accept up to this many */

struct bprof_jitdump {
	uint32_t pid, exec_id; /* the process image (as PROCESSES) */
	uint64_t len;
	uint8_t *data;         /* jitdump bytes: header and records (SPEC.md 6.16) */
};

struct bprof_jit {
	uint32_t present;       /* the section is written / was read */
	int64_t mono_minus_real_ns; /* CLOCK_MONOTONIC - CLOCK_REALTIME when written:
				     * a jitdump time t is t - this since the epoch */
	uint64_t counters[BPROF_JIT_NR_COUNTERS];
	uint64_t nr_dumps;
	struct bprof_jitdump *dumps; /* sorted by (pid, exec_id), unique */
};

/* "perf_map_bytes", ...: SPEC.md 6.16's name of counter i; NULL past the end. */
const char *bprof_jit_counter_name(unsigned i);
/* The jitdump of (pid, exec_id); NULL if the recording has none. */
struct bprof_recording;
const struct bprof_jitdump *bprof_jitdump_find(const struct bprof_recording *rec, uint32_t pid,
					       uint32_t exec_id);

/*
 * V8 (Node.js) JavaScript frames (1.9, SPEC.md 6.17).  A frame is two stack
 * words (BPROF_V8_TAG_SFI | the SharedFunctionInfo's tagged address,
 * BPROF_V8_TAG_POS | guard << 24 | kind << 22 | position); the V8 section
 * carries what names it: per SFI met, read while the process lived, its
 * function name, script name and the line it starts on.
 */
#define BPROF_V8_TAG_MASK 0xff00000000000000ULL
#define BPROF_V8_TAG_SFI  0xb300000000000000ULL
#define BPROF_V8_TAG_POS  0xb400000000000000ULL
#define BPROF_V8_ADDR_MASK 0x00ffffffffffffffULL
#define BPROF_V8_GUARD_SHIFT 24
#define BPROF_V8_NAME_MAX 4096      /* function and script name bytes */
#define BPROF_V8_NR_COUNTERS 7      /* counters this library knows */
#define BPROF_V8_POS_MAX 65536      /* position rows per SFI entry */
#define BPROF_V8_INLINE_MAX 64      /* frames per position row */
#define BPROF_V8_KIND_SHIFT 22
#define BPROF_V8_POS_MASK 0x3fffffULL
#define BPROF_V8_KIND_BYTECODE 1    /* 2nd word's kind: an interpreted frame's bytecode offset */
#define BPROF_V8_KIND_CODE 2        /* 2nd word's kind: an optimized code's pc offset */

/* Why a process's JavaScript frames were (not) walked. */
enum bprof_v8_status {
	BPROF_V8_WALKED = 0,        /* offsets read from its v8dbg_ symbols: walked */
	BPROF_V8_NO_OFFSETS,        /* a V8 whose v8dbg_ symbols lack one the walk needs */
	BPROF_V8_STATUS_MAX = BPROF_V8_NO_OFFSETS,
};

struct bprof_v8_proc {
	uint32_t pid, exec_id;
	uint32_t status;            /* enum bprof_v8_status */
};

/* One frame of a position row: a function at a line. */
struct bprof_v8_frame {
	int32_t line;               /* 0: unknown */
	char *name;                 /* UTF-8, NUL-free; "" anonymous */
	char *script;               /* UTF-8, NUL-free; "" unknown */
};

/* What optimized code runs from code_offset on (to the next row's): its
 * function and the functions inlined into it, outermost first. */
struct bprof_v8_pos {
	uint32_t code_offset;
	uint32_t nr_frames;         /* 1 .. BPROF_V8_INLINE_MAX */
	struct bprof_v8_frame *frames;
};

struct bprof_v8_sfi {
	uint32_t pid, exec_id;
	uint64_t sfi;               /* the SFI's tagged address, as in the 1st word */
	uint32_t guard;             /* as in its frames' 2nd word */
	int32_t line;               /* the line the function starts on; 0: unknown */
	char *name;                 /* UTF-8, NUL-free; "" for an anonymous function */
	char *script;               /* UTF-8, NUL-free; "" when unknown */
	uint32_t nr_pos;            /* rows of its optimized code (kind 2 frames), */
	struct bprof_v8_pos *pos;   /* sorted by code_offset, unique; 0: none */
};

struct bprof_v8 {
	uint32_t present;           /* the section is written / was read */
	uint32_t nr_counters;       /* <= 256 */
	uint64_t counters[256];     /* SPEC.md 6.17's table */
	uint64_t nr_procs, nr_sfis;
	struct bprof_v8_proc *procs; /* sorted by (pid, exec_id), unique */
	struct bprof_v8_sfi *sfis;  /* sorted by (pid, exec_id, sfi, guard), unique */
};

/* Free an SFI entry's position rows (pos may be NULL). */
void bprof_v8_pos_free(struct bprof_v8_pos *pos, uint32_t nr);
/* "sfis_announced", ...: SPEC.md 6.17's name of counter i; NULL past the end. */
const char *bprof_v8_counter_name(unsigned i);
/* The order of struct bprof_v8.sfis, a qsort(3) comparator. */
int bprof_v8_sfi_cmp(const void *a, const void *b);
/* The SFI a frame names (binary search); NULL if the recording has none. */
struct bprof_recording;
const struct bprof_v8_sfi *bprof_v8_sfi_find(const struct bprof_recording *rec, uint32_t pid,
					     uint32_t exec_id, uint64_t sfi, uint32_t guard);

/*
 * HotSpot frames (1.9, SPEC.md 6.18).  A Java frame is two stack words
 * (BPROF_JVM_TAG_ID | kind << 48 | address, BPROF_JVM_TAG_POS | guard << 24
 * | offset); the JVM section carries what names it, copied while the
 * process lived: per identity met, its class, method, signature, source
 * file and the method's line number table (HotSpot's compressed stream).
 */
#define BPROF_JVM_TAG_MASK 0xff00000000000000ULL
#define BPROF_JVM_TAG_ID   0xb500000000000000ULL
#define BPROF_JVM_TAG_POS  0xb600000000000000ULL
#define BPROF_JVM_ID_MASK  0x00ffffffffffffffULL /* kind << 48 | address */
#define BPROF_JVM_KIND_SHIFT 48
#define BPROF_JVM_OFFSET_MASK 0xffffffULL
#define BPROF_JVM_GUARD_SHIFT 24
#define BPROF_JVM_NAME_MAX 4096
#define BPROF_JVM_LINES_MAX (1u << 16)
#define BPROF_JVM_SCOPES_MAX (1u << 22)
#define BPROF_JVM_MAX_COUNTERS 256

/* Why a process's Java frames were (not) walked. */
enum bprof_jvm_status {
	BPROF_JVM_WALKED = 0,        /* frames walked */
	BPROF_JVM_UNKNOWN_VERSION,   /* a HotSpot whose layout bprof does not know */
	BPROF_JVM_NO_OFFSETS,        /* its introspection tables unreadable or implausible */
	BPROF_JVM_NOT_READY,         /* its code cache was not made before it ended */
	BPROF_JVM_STATUS_MAX = BPROF_JVM_NOT_READY,
};

/* What a frame identity is. */
enum bprof_jvm_kind {
	BPROF_JVM_INTERPRETED = 1,   /* a Method run by the interpreter */
	BPROF_JVM_COMPILED = 2,      /* an nmethod (C1, C2 or a native wrapper) */
	BPROF_JVM_STUB = 3,          /* another code blob: a stub, an adapter */
	BPROF_JVM_KIND_MAX = BPROF_JVM_STUB,
};

struct bprof_jvm_proc {
	uint32_t pid, exec_id;
	uint32_t status;             /* enum bprof_jvm_status */
	char *version;               /* the JVM's release string, NULL if unknown */
};

struct bprof_jvm_frame {
	uint32_t pid, exec_id;
	uint64_t id;                 /* the first stack word without its tag */
	uint32_t guard;              /* as in the second word */
	uint32_t kind;               /* enum bprof_jvm_kind */
	int32_t level;               /* compiled: the tier (1..4), else 0 */
	char *klass;                 /* "java.lang.String"; NULL for a stub */
	char *method;                /* "charAt", or a stub's name */
	char *signature;             /* "(I)C", NULL if not known */
	char *file;                  /* "String.java", NULL if not known */
	uint8_t *lines;              /* interpreted: the line number table */
	uint32_t lines_len;
	uint32_t scopes_len;
	uint8_t *scopes;             /* compiled: (pc offset, inlining chain) records */
};

struct bprof_jvm {
	uint32_t present;
	uint32_t nr_counters;        /* <= BPROF_JVM_MAX_COUNTERS */
	uint64_t counters[BPROF_JVM_MAX_COUNTERS];
	uint64_t nr_procs, nr_frames;
	struct bprof_jvm_proc *procs;   /* sorted by (pid, exec_id), unique */
	struct bprof_jvm_frame *frames; /* sorted by (pid, exec_id, id, guard), unique */
};

/* SPEC.md 6.18's name of counter i; NULL past the end. */
const char *bprof_jvm_counter_name(unsigned i);
/* The order of struct bprof_jvm.frames, a qsort(3) comparator. */
int bprof_jvm_frame_cmp(const void *a, const void *b);
/* The identity a frame's words name (binary search); NULL if none. */
const struct bprof_jvm_frame *bprof_jvm_frame_find(const struct bprof_recording *rec,
						   uint32_t pid, uint32_t exec_id,
						   uint64_t id, uint32_t guard);

struct bprof_recording {
	struct bprof_meta meta;
	struct bprof_losses losses;
	struct bprof_kernel kernel;
	struct bprof_unwind unwind;
	struct bprof_access access;
	uint64_t nr_counts, nr_stacks, nr_objects, nr_processes;
	struct bprof_count *counts;
	struct bprof_stack *stacks;       /* sorted by id, ids unique */
	struct bprof_object *objects;
	struct bprof_process *processes;  /* sorted by (pid, exec_id) */
	uint64_t nr_images;
	struct bprof_image *images;       /* sorted by object_index */
	/* Set by the reader: every stack's ips live in this one block, freed
	 * whole.  NULL for a recording built in memory, whose stacks own
	 * their ips. */
	uint64_t *ips_block;
	/* Set by the reader: every kernel symbol's name lives in this one
	 * block, freed whole; NULL when each name was malloc'ed on its own. */
	char *ksym_names;
	/* (1.5) what was recorded off the CPU; mode 0: nothing */
	struct bprof_offcpu offcpu;
	/* (1.6) the counts' time slices; slice_ns 0: none */
	struct bprof_slices slices;
	/* (1.7) CPython frames' names; present 0: none */
	struct bprof_python python;
	/* (1.8) JIT symbol files: counters, jitdumps; present 0: none */
	struct bprof_jit jit;
	struct bprof_v8 v8;         /* 1.9 */
	/* (1.9) HotSpot frames' names; present 0: none */
	struct bprof_jvm jvm;
};

/* ---- building ---------------------------------------------------------- */

/* An empty recording (all zero) to be filled by the caller.  Every string
 * and array hung on it must be malloc'ed: bprof_recording_free() frees them. */
int bprof_recording_create(struct bprof_recording **out);
void bprof_recording_free(struct bprof_recording *rec);

/* Convenience appenders that grow the arrays (amortized).  They copy their
 * argument shallowly: pointers inside become owned by the recording.
 * Arrays the caller hung on the recording itself may be grown too, so they
 * must come from malloc (the capacity is taken from malloc_usable_size()).
 * Return 0, BPROF_E_NOMEM, BPROF_E_INVAL (NULL argument) or, for more than
 * 2^32 - 2 objects, BPROF_E_LIMIT.  add_stack refuses (BPROF_E_INVAL) a
 * recording read from a file (its stacks share ips_block). */
int bprof_recording_add_count(struct bprof_recording *rec, const struct bprof_count *c);
int bprof_recording_add_stack(struct bprof_recording *rec, const struct bprof_stack *s);
int bprof_recording_add_object(struct bprof_recording *rec, const struct bprof_object *o,
			       uint32_t *index_out);
int bprof_recording_add_process(struct bprof_recording *rec, const struct bprof_process *p);

/* Sort stacks by id and processes by (pid, exec_id) and check every
 * invariant the reader checks; the writer calls it too.  Also sorts each
 * process's mappings by start and, if they are not in order, the ksyms by
 * address.  Returns 0 or BPROF_E_INVAL (BPROF_E_LIMIT for a table larger
 * than the format allows) with err naming the offending entry. */
int bprof_recording_validate(struct bprof_recording *rec, struct bprof_error *err);

/* Lookups over a validated recording (binary search).  NULL when absent. */
const struct bprof_stack *bprof_recording_stack(const struct bprof_recording *rec, int32_t id);
/* Snapshot of pid with exec_id; if none has that exec_id, the latest
 * snapshot of pid; NULL if the pid has none. */
const struct bprof_process *bprof_recording_process(const struct bprof_recording *rec,
						     uint32_t pid, uint32_t exec_id);

/*
 * Fallback identity of an object that has no build-id (SPEC.md, "Fallback
 * hash"): FNV-1a 64 over the file size (u64 LE), its first 4096 bytes and
 * its last 4096 bytes.  Reads fd with pread; returns 0 or BPROF_E_IO.
 * Shared by the recorder (which computes it) and the report (which checks a
 * candidate file against it).
 */
int bprof_fallback_hash(int fd, uint64_t *out);

/* ---- writing ----------------------------------------------------------- */

#define BPROF_WRITE_NO_CLOBBER (1u << 0) /* fail with BPROF_E_EXISTS if path exists */

struct bprof_write_opts {
	size_t sz;         /* sizeof(struct bprof_write_opts), for growth;
			    * a smaller value (0: forgotten) is BPROF_E_INVAL */
	unsigned flags;    /* BPROF_WRITE_* */
	int zstd_level;    /* 0: default (3); above 19 is taken as 19 */
	unsigned mode;     /* file mode; 0: 0600 */
};

/*
 * Write rec to path atomically: a temporary file in the same directory is
 * written, fsync'ed and then renamed (or, with NO_CLOBBER, linked) into
 * place, so a crash, signal or full disk never leaves a truncated file at
 * path nor destroys one that was there.  A symlink at path is replaced, not
 * followed.  opts may be NULL.  Validates rec first (may sort its arrays).
 * Returns 0; BPROF_E_INVAL for an invalid recording or options;
 * BPROF_E_EXISTS with NO_CLOBBER; BPROF_E_IO with err->sys_errno (ENOSPC,
 * EACCES, EROFS, ...) when the system refuses - then no temporary file is
 * left and a file that was at path is untouched.  The one exception: if
 * only the final fsync of the directory fails, the new file is already in
 * place and BPROF_E_IO says its durability is not assured.
 */
int bprof_write_file(struct bprof_recording *rec, const char *path,
		     const struct bprof_write_opts *opts, struct bprof_error *err);

/* Serialize into a malloc'ed buffer (for tests and fuzz seeds). */
int bprof_write_buffer(struct bprof_recording *rec, void **out, size_t *out_len,
		       const struct bprof_write_opts *opts, struct bprof_error *err);

/* ---- reading ----------------------------------------------------------- */

struct bprof_read_opts {
	size_t sz;                /* sizeof(struct bprof_read_opts); smaller: BPROF_E_INVAL */
	uint64_t max_decompressed; /* cap on decompressed bytes; 0: 1 GiB */
	unsigned max_window_log;   /* zstd window cap; 0: 27 (128 MiB) */
};

/*
 * Read and validate a whole file.  Refuses anything that is not a regular
 * file (BPROF_E_INVAL, without blocking on a FIFO).  opts may be NULL.
 * Returns 0 or one of the codes SPEC.md section 9 lists; err->message
 * names the section and offset (it does not repeat the path).
 * In a recording returned by the reader, every string is non-NULL ("" when
 * the file had none), perf_map is NULL when perf_map_len is 0 and is
 * otherwise followed by a NUL byte that perf_map_len does not count, and
 * all tables are sorted as validate would sort them.
 */
int bprof_read_file(struct bprof_recording **out, const char *path,
		    const struct bprof_read_opts *opts, struct bprof_error *err);
int bprof_read_buffer(struct bprof_recording **out, const void *buf, size_t len,
		      const struct bprof_read_opts *opts, struct bprof_error *err);

/*
 * A reader for many files in a row: it keeps the zstd context and the
 * file and content buffers from one file to the next (creating a zstd
 * context and faulting in fresh buffers was a tenth of merging 1,000
 * small recordings).  What it returns is the same as bprof_read_file's
 * and owns nothing of the reader.  One reader per thread.
 */
struct bprof_reader;
int bprof_reader_create(struct bprof_reader **out);
void bprof_reader_destroy(struct bprof_reader *rd);
int bprof_reader_read_file(struct bprof_reader *rd, struct bprof_recording **out,
			   const char *path, const struct bprof_read_opts *opts,
			   struct bprof_error *err);

#ifdef __cplusplus
}
#endif
#endif /* BPROF_H */
