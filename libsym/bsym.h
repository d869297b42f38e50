/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bsym.h - offline symbolization of addresses captured elsewhere.
 *
 * Two steps, kept apart (as blazesym does):
 *   normalize:  (a process's mappings, absolute address)
 *                 -> (object, file offset)                 bsym_normalize()
 *   symbolize:  (object identified by build-id, file offset)
 *                 -> frames (function, inlined callers, file:line)
 *               (kernel identity, kernel address) -> frames
 *               (JIT perf map, address) -> frame
 *
 * libsym knows nothing of the .bprof format: callers describe objects,
 * kernels and perf maps with the plain descriptors below.  Debuginfo is
 * found by build-id through elfutils (libdwfl standard callbacks, debug
 * directories, debuginfod) and an object whose build-id differs from the
 * one described is never used: a wrong name is worse than none.
 *
 * Conventions: 0 on success, negative errno on failure (-ENOMEM, -EINVAL,
 * -ENOENT for "not found" where documented).  An address that cannot be
 * named is not a failure: its result carries a reason.  Results are owned
 * by the context and stay valid until bsym_destroy().  The library never
 * prints; warnings go to the optional log callback.
 *
 * Thread safety: a context is not thread-safe; use one per thread.
 */
#ifndef BSYM_H
#define BSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bsym_ctx;

#define BSYM_NO_OBJECT UINT32_MAX

enum bsym_log_level { BSYM_LOG_WARN = 1, BSYM_LOG_INFO = 2, BSYM_LOG_DEBUG = 3 };
typedef void (*bsym_log_fn)(void *arg, enum bsym_log_level level, const char *msg);

/* bsym_opts.flags */
#define BSYM_NO_INLINE       (1u << 0) /* do not expand inlined frames: one frame, the
					     * outermost function, at the line where the
					     * inlined code was called from it */
#define BSYM_NO_DEMANGLE     (1u << 1) /* keep C++/Rust names mangled */
#define BSYM_NO_DEBUGINFOD   (1u << 2) /* ignore DEBUGINFOD_URLS */
#define BSYM_NO_SYSTEM_DEBUG (1u << 3) /* do not search /usr/lib/debug (tests) */
#define BSYM_NO_ORIGINAL_PATH (1u << 4) /* never open the recorded path under sysroot */

struct bsym_opts {
	size_t sz;                       /* sizeof(struct bsym_opts) */
	const char *const *debug_dirs;   /* searched first: DIR/.build-id/xx/rest.debug, and plain files */
	size_t nr_debug_dirs;
	const char *sysroot;             /* recorded paths are opened under it; NULL: "/" */
	const char *vmlinux;             /* explicit vmlinux (build-id still checked); NULL: search */
	unsigned flags;                  /* BSYM_* */
	bsym_log_fn log;
	void *log_arg;
	/* Persistent symbol cache (CACHE.md): answers for objects with a
	 * build-id are read from and saved (bsym_cache_save) under this
	 * directory, created if missing.  NULL: no cache. */
	const char *cache_dir;
	uint64_t cache_max_bytes;        /* size bound of cache_dir; 0: 256 MiB */
};

/* Create a context; opts may be NULL for defaults.  Strings in opts are
 * copied.  Each object (and kernel module, vmlinux) whose files were found
 * keeps up to two file descriptors open until bsym_destroy(): a caller
 * symbolizing hundreds of objects should raise RLIMIT_NOFILE; running out
 * is reported through the log callback. */
int bsym_create(struct bsym_ctx **out, const struct bsym_opts *opts);
void bsym_destroy(struct bsym_ctx *ctx);

/* ---- results ------------------------------------------------------------ */

/* Why an address has no name.  BSYM_OK when frames were found. */
enum bsym_reason {
	BSYM_OK = 0,
	BSYM_R_UNMAPPED,          /* address in no mapping of its process */
	BSYM_R_NO_DEBUGINFO,      /* no ELF file or debuginfo found for the build-id */
	BSYM_R_NO_SYMBOL,         /* the object was found but no symbol covers the address */
	BSYM_R_BUILD_ID_MISMATCH, /* a candidate file had another build-id; refused */
	BSYM_R_NO_BUILD_ID,       /* object recorded without build-id and not verifiable */
	BSYM_R_JIT,               /* anonymous executable memory and no perf map entry */
	BSYM_R_KERNEL_NO_SYMBOLS, /* no vmlinux/module debuginfo and no kallsyms */
	BSYM_R_INVALID,           /* bad object/kernel id or offset */
	BSYM_R_JIT_AMBIGUOUS,     /* JIT entries of different names cover the address
				   * (code freed and its address reused), and nothing
				   * says which one the sample was in */
};
const char *bsym_reason_str(enum bsym_reason r);

/* frame.kind */
enum bsym_frame_kind { BSYM_FRAME_USER = 0, BSYM_FRAME_KERNEL, BSYM_FRAME_JIT };

struct bsym_frame {
	const char *name;       /* demangled unless BSYM_NO_DEMANGLE; never NULL */
	const char *raw_name;   /* as in the symbol table/DWARF (mangled); never NULL */
	const char *file;       /* source file, or NULL */
	uint32_t line;          /* 0 when unknown */
	uint32_t column;
	uint64_t offset;        /* address - function start (0 for inlined frames) */
	bool inlined;           /* this frame was inlined into frames[i+1] */
	enum bsym_frame_kind kind;
};

/*
 * frames[0] is the innermost: the function whose code holds the address
 * (an inlined callee when there is one); frames[nr_frames-1] is the
 * function the symbol table names.  Like addr2line -i.  nr_frames is 0
 * exactly when reason != BSYM_OK.
 */
struct bsym_result {
	enum bsym_reason reason;
	uint32_t nr_frames;
	const struct bsym_frame *frames;
};

/* ---- user-space objects --------------------------------------------------- */

/* Optional verifier for objects recorded without a build-id: return true
 * when the open file fd (size st_size) is the recorded object. */
typedef bool (*bsym_verify_fn)(void *arg, int fd, const char *path);

struct bsym_object_desc {
	size_t sz;                 /* sizeof(struct bsym_object_desc) */
	const char *path;          /* path recorded on the target, may be NULL */
	const uint8_t *build_id;   /* NULL / 0 when the object had none */
	size_t build_id_len;
	bsym_verify_fn verify;     /* used only when build_id_len == 0 */
	void *verify_arg;
	/* The object's bytes, carried by the recording (the vdso: no file on
	 * any workstation holds them).  Used as its ELF when no file with its
	 * build-id is found, and only if the image carries that build-id.
	 * Copied; may be NULL. */
	const void *image;
	size_t image_len;
};

/* Register an object.  Objects with the same build-id share one id (and one
 * cache), whatever their path.  Lookup of debuginfo is lazy. */
int bsym_object_register(struct bsym_ctx *ctx, const struct bsym_object_desc *desc,
			 uint32_t *id_out);

/* Symbolize an offset in the object *file* (as in /proc/PID/maps).  Never
 * fails for an unnamed address: *out->reason says why.  Returns -EINVAL for
 * an unknown id, -ENOMEM.  Each (object, offset) is resolved once. */
int bsym_symbolize_offset(struct bsym_ctx *ctx, uint32_t object, uint64_t file_offset,
			  const struct bsym_result **out);

/*
 * Frame-pointer walks - the kernel's walk of user stacks - silently skip the
 * caller of a function that has not set up its frame pointer at the sampled
 * instruction: a leaf that gcc built without a frame (gcc 12 does so even
 * with -fno-omit-frame-pointer), a prologue or epilogue, or code built
 * without frame pointers (libc's syscall wrappers).  The walk then shows the
 * caller's caller as the caller, which is a lie.  Worse, code built without
 * frame pointers often saves rbp and uses it as a general register: a walk
 * through such a frame follows whatever rbp held, and every "caller" above
 * it is made up.  This answers, from the object's call frame information
 * (.eh_frame / .debug_frame), what the frame pointer is at file_offset.
 * Returns 0 and sets *out; -EINVAL for a bad id.
 */
enum bsym_fp_state {
	BSYM_FP_UNKNOWN = 0, /* no CFI for the address (or unsupported arch) */
	BSYM_FP_FRAME,       /* CFA from the frame pointer: the walk is whole */
	BSYM_FP_NO_FRAME,    /* CFA from the stack pointer, the frame pointer
			      * still the caller's: the walk skipped the caller */
	BSYM_FP_CLOBBERED,   /* CFA from the stack pointer and the frame
			      * pointer saved by this function, which may have
			      * put anything in it: callers found through it
			      * are not to be trusted */
};
int bsym_fp_state(struct bsym_ctx *ctx, uint32_t object, uint64_t file_offset,
		  enum bsym_fp_state *out);

/* What was found for an object, for --info and the end-of-report summary.
 * Forces the debuginfo lookup. Strings owned by ctx. */
struct bsym_object_info {
	enum bsym_reason status;    /* BSYM_OK: symbols available */
	const char *elf_path;       /* ELF file used (main or debug), or NULL */
	const char *debug_path;     /* separate debuginfo used, or NULL */
	bool has_dwarf;             /* line/inline information available */
	bool has_symtab;            /* .symtab (or MiniDebugInfo) available */
};
int bsym_object_info(struct bsym_ctx *ctx, uint32_t object, struct bsym_object_info *out);

/* ---- the persistent cache ------------------------------------------------ */

/*
 * Write the answers this context computed, for objects whose answers may be
 * kept (CACHE.md: objects with a build-id, DWARF that names no other file,
 * no transient failure), to opts.cache_dir, then evict least recently used
 * files beyond opts.cache_max_bytes.  Each file is written under a
 * temporary name and renamed, so concurrent reports never see half a file.
 * Returns 0 (also when there is no cache or nothing to write), or the
 * first negative errno (also given to the log callback as a warning): a
 * cache that cannot be written costs only speed.
 */
int bsym_cache_save(struct bsym_ctx *ctx);

/* Create dir and its parents (mode 0700 for what is created) and check
 * that it can be written: 0, or a negative errno.  For a caller choosing a
 * default cache directory before it creates the context. */
int bsym_cache_dir_ready(const char *dir);

/* Counters, for tests and benchmarks. */
struct bsym_cache_stats {
	uint64_t files_loaded;    /* cache files read and used */
	uint64_t files_damaged;   /* cache files refused (damaged) */
	uint64_t files_saved;     /* cache files written */
	uint64_t files_evicted;   /* removed by the size bound */
	uint64_t entries_loaded;  /* answers read from cache files */
	uint64_t objects_read;    /* objects whose DWARF/symbols were read (phase 2) */
};
void bsym_cache_get_stats(const struct bsym_ctx *ctx, struct bsym_cache_stats *out);

/* ---- normalization -------------------------------------------------------- */

struct bsym_mapping {
	uint64_t start, end;       /* [start, end) */
	uint64_t file_offset;
	uint32_t object;           /* from bsym_object_register, or BSYM_NO_OBJECT */
	uint32_t flags;            /* BSYM_MAP_* */
};
#define BSYM_MAP_ANON (1u << 0) /* anonymous executable memory: JIT */

/* Find the mapping (sorted by start, non-overlapping) holding addr.
 * Returns 0 and sets *object and *file_offset; -ENOENT when no mapping
 * holds it; BSYM_NO_OBJECT in *object for anonymous memory. */
int bsym_normalize(const struct bsym_mapping *maps, size_t nr_maps, uint64_t addr,
		   uint32_t *object, uint64_t *file_offset, uint32_t *map_flags);

/* ---- JIT perf maps ----------------------------------------------------------- */

/* Parse a /tmp/perf-PID.map text ("START SIZE name" per line, hex).  The
 * text is copied.  Malformed lines are skipped. */
int bsym_perfmap_register(struct bsym_ctx *ctx, const char *text, size_t len, uint32_t *id_out);
/* One BSYM_FRAME_JIT frame (offset from the entry's START) when every line
 * that covers addr has the same name (the newest such line's); reason
 * BSYM_R_JIT when none does, BSYM_R_JIT_AMBIGUOUS when lines of different
 * names do (a perf map has no time: format/SPEC.md 6.16).  Returns -EINVAL
 * for an unknown id, -ENOMEM. */
int bsym_symbolize_perfmap(struct bsym_ctx *ctx, uint32_t perfmap, uint64_t addr,
			   const struct bsym_result **out);

/* ---- JIT: jitdump ---------------------------------------------------------- */

/*
 * A jitdump (Linux perf's jitdump-specification.txt: jit-PID.dump, written
 * by node --perf-prof and perf's JVMTI agent): its code load, move and
 * debug-info records.  bytes are hostile input and copied; a record that
 * does not fit or make sense ends the parse or is skipped (jitdump.c says
 * which), what came before is kept.  0 and *id_out (a jitdump with no
 * usable record is still an id), -EINVAL (bytes not a little-endian
 * jitdump of version 1: *id_out is BSYM_NO_OBJECT), -ENOMEM.
 */
int bsym_jitdump_register(struct bsym_ctx *ctx, const void *bytes, size_t len, uint32_t *id_out);
/*
 * The code at addr for samples taken in [t0, t1) (the jitdump's clock,
 * CLOCK_MONOTONIC ns; t1 0: when is not known): one BSYM_FRAME_JIT frame,
 * with the source line of its debug info when there is one, when the loads
 * that cover addr say which code it was (format/SPEC.md 6.16, rule 1);
 * BSYM_R_JIT when no load before t1 covers it, BSYM_R_JIT_AMBIGUOUS when
 * loads of different names might have.  -EINVAL for an unknown id, -ENOMEM.
 */
int bsym_symbolize_jitdump(struct bsym_ctx *ctx, uint32_t id, uint64_t addr, uint64_t t0,
			   uint64_t t1, const struct bsym_result **out);
/* Loads (with moves) and debug lines the parse kept, for tests and --info. */
void bsym_jitdump_counts(const struct bsym_ctx *ctx, uint32_t id, size_t *loads, size_t *lines);

/* ---- kernel ----------------------------------------------------------------- */

struct bsym_kmodule {
	const char *name;
	uint64_t base, size;
	const uint8_t *build_id;
	size_t build_id_len;
};

struct bsym_ksym {
	uint64_t addr;
	const char *name;
	uint32_t module_index;     /* into modules, or BSYM_NO_OBJECT for vmlinux */
};

struct bsym_kernel_desc {
	size_t sz;                 /* sizeof(struct bsym_kernel_desc) */
	const char *release;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t stext;            /* runtime _stext (KASLR reference), 0 unknown */
	const struct bsym_kmodule *modules;
	size_t nr_modules;
	const struct bsym_ksym *ksyms; /* sorted by addr; may be NULL */
	size_t nr_ksyms;
	/* Also share a kernel that has answered lookups, when its table
	 * holds every entry of ksyms already (the newest such): for a
	 * caller that registered every recording's kernel before the first
	 * lookup and registers each again as it reads it. */
	bool reuse_answered;
};

/* Register a kernel; identical build-ids, stext and modules share an id
 * (unless the first has answered lookups already: see reuse_answered), and
 * their ksyms are merged: each recording keeps only the entries its
 * samples needed.  All data is copied. */
int bsym_kernel_register(struct bsym_ctx *ctx, const struct bsym_kernel_desc *desc,
			 uint32_t *id_out);
/* Frames for a kernel address (kind BSYM_FRAME_KERNEL).  Inside a module's
 * [base, base+size): that module's debuginfo found by its build-id (debug
 * dirs' .build-id trees, debuginfod), else kallsyms.  Elsewhere: a vmlinux
 * whose build-id matches (opts.vmlinux, DIR/.build-id/xx/rest.debug,
 * /usr/lib/debug/boot/vmlinux-RELEASE, /boot/vmlinux-RELEASE, debuginfod),
 * at bias = stext - link-time _stext, names and inlines from DWARF; else
 * kallsyms: the last symbol at or below addr, not past the next one, not
 * across a module boundary, at most 1 MiB away.  A kernel recorded without
 * a build-id never uses a vmlinux.  Returns -EINVAL for an unknown id,
 * -ENOMEM; reasons: BSYM_R_NO_SYMBOL, BSYM_R_KERNEL_NO_SYMBOLS. */
int bsym_symbolize_kernel(struct bsym_ctx *ctx, uint32_t kernel, uint64_t addr,
			  const struct bsym_result **out);

/* ---- CPython code objects ------------------------------------------------ */

/*
 * The line of the instruction at byte offset offset (from the first code
 * unit; negative before it) of a CPython 3.11+ code object whose first
 * line is firstlineno and whose location table (co_linetable) is
 * table[0..len): 0 with *line set (-1: an instruction CPython gives no
 * line either); -1 for a malformed table or an offset past its end.
 */
/*
 * The source line of bytecode index bci in a HotSpot line number table
 * (ConstMethod's compressed (bci, line) pairs, SPEC.md 6.18): 0 and *line,
 * or -1 when the table has no line for it or is malformed.
 */
int bsym_jvm_line(const uint8_t *lines, uint32_t len, uint32_t bci, uint32_t *line);

int bsym_python_line(const uint8_t *table, size_t len, int32_t firstlineno, int64_t offset,
		     int32_t *line);

#ifdef __cplusplus
}
#endif
#endif /* BSYM_H */
