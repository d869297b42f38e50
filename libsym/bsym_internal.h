/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bsym_internal.h - what the libsym translation units share.  Not installed,
 * not part of the API.
 */
#ifndef BSYM_INTERNAL_H
#define BSYM_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdarg.h>

#include "bsym.h"
#include "gopclntab.h"

#define BSYM_MAX_BUILD_ID 64
#define BSYM_MAX_INLINE_DEPTH 64

/* ---- arena: results and strings live until bsym_destroy ---------------- */

struct bsym_arena_chunk;
struct bsym_arena {
	struct bsym_arena_chunk *head;
};
void *bsym_arena_alloc(struct bsym_arena *a, size_t sz);
char *bsym_arena_strdup(struct bsym_arena *a, const char *s);
void bsym_arena_free(struct bsym_arena *a);

/* ---- u64 -> pointer hash map (open addressing) -------------------------- */

struct bsym_map_slot {
	uint64_t key;
	void *val; /* NULL: empty */
};
struct bsym_map {
	struct bsym_map_slot *slots;
	size_t cap, len;
};
void *bsym_map_get(const struct bsym_map *m, uint64_t key);
int bsym_map_put(struct bsym_map *m, uint64_t key, void *val);
void bsym_map_free(struct bsym_map *m);
uint64_t bsym_hash_bytes(const void *p, size_t n, uint64_t seed);

/* ---- DWARF index: CU table built once, each CU indexed on first use ----- */

struct bsym_dwidx;

/* One level of an address's function chain, outermost first. */
struct bsym_dwframe {
	const char *raw;       /* linkage name or name (libdw-owned), or NULL */
	const char **demangled; /* per-entry slot caching the demangled name */
	uint64_t entry;         /* function start (DWARF address) */
	const char *call_file; /* for inlined entries: where the call was */
	uint32_t call_line, call_column;
};
struct bsym_dwlookup {
	unsigned nr;             /* 0: no function found */
	uint64_t root_lo;        /* start of the outermost function's range holding addr */
	struct bsym_dwframe chain[BSYM_MAX_INLINE_DEPTH];
	const char *file;        /* line-table row for the address */
	uint32_t line, column;
};

/* Returns NULL on allocation failure; an index over corrupt DWARF is
 * simply (partly) empty. */
struct bsym_dwidx *bsym_dwidx_new(Dwarf *dw);
void bsym_dwidx_free(struct bsym_dwidx *idx);
/* Fill *out for DWARF address addr.  Returns 0 (out->nr may be 0 and
 * out->file NULL: nothing known), -ENOMEM. */
int bsym_dwidx_lookup(struct bsym_dwidx *idx, uint64_t addr, struct bsym_dwlookup *out);
/* The DWARF has split (-gsplit-dwarf) units: names depend on .dwo files. */
bool bsym_dwidx_has_split_units(const struct bsym_dwidx *idx);

/* ---- objects ------------------------------------------------------------- */

struct bsym_seg {
	uint64_t offset, filesz, vaddr;
};

/* Section mask bits of a file (CACHE.md): what it can answer. */
#define BSYM_SM_IMAGE       (1u << 0)
#define BSYM_SM_DEBUG_ONLY  (1u << 1)
#define BSYM_SM_SYMTAB      (1u << 2)
#define BSYM_SM_DYNSYM      (1u << 3)
#define BSYM_SM_DWARF       (1u << 4)
#define BSYM_SM_MINIDEBUG   (1u << 5)
#define BSYM_SM_LINE        (1u << 6)
#define BSYM_SM_EH_FRAME    (1u << 7)
#define BSYM_SM_DEBUG_FRAME (1u << 8)
#define BSYM_SM_PRESENT     (1u << 31) /* in other_mask: some other file was found */

struct bsym_located;
void bsym_located_free(struct bsym_located *l);

struct bsym_obj {
	struct bsym_ctx *ctx;
	uint8_t build_id[BSYM_MAX_BUILD_ID];
	size_t build_id_len;
	uint64_t bid_hash;
	char *path;
	bsym_verify_fn verify;
	void *verify_arg;
	void *image;       /* the recorded bytes (vdso), or NULL */
	size_t image_len;

	/* Phase 1 (bsym_obj_locate): files found, section headers read. */
	bool located;
	bool found_files;         /* at least one file: main_mask is meaningful */
	uint32_t main_mask, debug_mask; /* BSYM_SM_* of the files to be used */
	uint32_t other_mask;      /* OR of the other files found (| BSYM_SM_PRESENT) */
	bool external_dwarf;      /* dwz common file or split units: never cached */
	bool transient_failure;   /* out of memory/descriptors, libdw refusal: never cached */
	char *cand_debug_path;    /* what debug_path will be if DWARF opens */
	struct bsym_located *located_files; /* until phase 2 */

	/* Phase 2 (bsym_obj_load): DWARF and symbol tables read. */
	bool loaded;
	enum bsym_reason status;
	char *elf_path, *debug_path;
	bool has_dwarf, has_symtab;
	Dwfl_Callbacks cb;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int pending_debug_fd;
	char *pending_debug_path;
	Dwarf_Addr dwbias;
	struct bsym_dwidx *idx;
	struct bsym_seg *segs;
	size_t nr_segs;

	struct bsym_map cache; /* file offset -> const struct bsym_result * */
	struct bsym_map fpcache; /* file offset -> (void *)(enum bsym_fp_state + 1) */

	/* The persistent cache (cache.c, CACHE.md) */
	bool cache_tried;         /* bsym_cache_attach ran */
	uint8_t *cache_key;       /* NULL: this object is not cached */
	size_t cache_key_len;
	bool cache_dirty;         /* answers computed here that the file lacks */
	bool cache_info;          /* status/has_* below came from the file */
	enum bsym_reason cached_status;
	bool cached_has_dwarf, cached_has_symtab;
	struct bsym_symtab *symtab; /* built on first symbol-table lookup */
	bool go_checked, is_go;     /* a Go object (bsym.c, is_go_object) */
	struct gopcln *go;          /* names from Go's pclntab: no DWARF, no .symtab */
};

struct bsym_ctx;
void bsym_obj_release(struct bsym_obj *o);

/* A module's symbol table sorted by address, built once: elfutils 0.188's
 * dwfl_module_addrinfo scans the whole table on every call, which made
 * objects with big symbol tables and no DWARF (compilers, libLLVM) cost
 * seconds.  bsym_symtab_lookup: the name of the function holding addr (and
 * the offset into it), or NULL. */
struct bsym_symtab;
const char *bsym_symtab_lookup(struct bsym_symtab **tab, Dwfl_Module *mod, GElf_Addr addr,
			       GElf_Off *off);
void bsym_symtab_free(struct bsym_symtab *tab);
/* Phase 1: find the files, read no DWARF (sets located, status for
 * objects nothing was found for).  Phase 2: read them (calls phase 1 if
 * needed; sets loaded). */
void bsym_obj_locate(struct bsym_ctx *ctx, struct bsym_obj *o);
void bsym_obj_load(struct bsym_ctx *ctx, struct bsym_obj *o);

/* Open path and verify its build-id against (bid, len).  Returns an fd and
 * sets *elf (caller ends it), or -1; *mismatch is set when the file exists,
 * is ELF, and carries another build-id. */
int bsym_open_elf_checked(struct bsym_ctx *ctx, const char *path, const uint8_t *bid, size_t len,
			  Elf **elf, bool *mismatch);
bool bsym_elf_build_id_eq(Elf *elf, const uint8_t *bid, size_t len);

/* ---- the context ------------------------------------------------------- */

struct bsym_dirscan; /* plain files found in a debug dir, by build-id */
struct bsym_kernel;
struct bsym_perfmap;
struct bsym_jitdump;

struct bsym_ctx {
	char **debug_dirs; /* opts dirs, then /usr/lib/debug unless disabled */
	size_t nr_debug_dirs;
	size_t nr_user_dirs;
	char *sysroot;
	char *vmlinux;
	unsigned flags;
	bsym_log_fn log;
	void *log_arg;
	bool warned_nofile;
	char *cache_dir;   /* NULL: no persistent cache */
	uint64_t cache_max_bytes;
	struct bsym_cache_stats cache_stats;
	unsigned cache_seq; /* temporary file names */
	char *debuginfo_path; /* for libdwfl's build-id helpers (dwz alt files) */

	struct bsym_obj **objs;
	size_t nr_objs, cap_objs;
	struct bsym_kernel **kernels;
	size_t nr_kernels, cap_kernels;
	struct bsym_perfmap **perfmaps;
	size_t nr_perfmaps, cap_perfmaps;
	struct bsym_jitdump **jitdumps;
	size_t nr_jitdumps, cap_jitdumps;

	struct bsym_dirscan **scans; /* one per user debug dir, lazily */
	struct bsym_arena arena;
	struct bsym_map demangled; /* hash(raw) -> struct demangle_entry chain */

	/* debuginfod, dlopened on first need */
	bool dinfod_tried;
	bool dinfod_dead; /* timed out or unreachable once: not asked again */
	void *dinfod_so;
	void *dinfod_client;
	void *dinfod_begin, *dinfod_end, *dinfod_find_debuginfo, *dinfod_find_executable;
};

void bsym_log(struct bsym_ctx *ctx, enum bsym_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* C++ shim over __cxa_demangle; malloc'd or NULL. */
char *bsym_cxx_demangle(const char *mangled);

/* debug dir helpers (find.c) */
int bsym_debuginfod_find(struct bsym_ctx *ctx, const uint8_t *bid, size_t len, bool executable,
			 char **path_out);
void bsym_dirscans_free(struct bsym_ctx *ctx);
uint32_t bsym_crc32_fd(int fd, bool *ok);

/* results and their frames (frames.c) */
const struct bsym_result *bsym_result_reason(enum bsym_reason r);
struct bsym_result *bsym_result_new(struct bsym_ctx *ctx, unsigned nr_frames);
/* Name for display: demangled (cached in ctx) unless BSYM_NO_DEMANGLE. */
const char *bsym_display_name(struct bsym_ctx *ctx, const char *raw);
/* symtab: the module's sorted table cache, or NULL to ask libdwfl */
int bsym_frames_from_dwarf(struct bsym_ctx *ctx, struct bsym_dwidx *idx, struct bsym_symtab **symtab,
			   Dwfl_Module *mod, uint64_t dwaddr, uint64_t modaddr,
			   enum bsym_frame_kind kind, const struct bsym_result **out);
int bsym_frames_from_go(struct bsym_ctx *ctx, const struct gopcln *go, uint64_t vaddr,
			const struct bsym_result **out);

/* ---- the persistent cache (cache.c; format in CACHE.md) ---------------- */

#define BSYM_CACHE_MAX_KEY 4096
#define BSYM_CACHE_MAX_STRINGS (256u << 20)

/* What a valid cache file holds, handed to the parser's caller. */
struct bsym_cache_sink {
	void *arg;
	/* the object's status and info bits (called once, before entries) */
	int (*info)(void *arg, enum bsym_reason status, bool has_dwarf, bool has_symtab);
	/* the string table (NUL-terminated strings, len bytes, last byte NUL):
	 * returns the copy that frames will point into, NULL for -ENOMEM */
	const char *(*strings)(void *arg, const char *strings, size_t len);
	/* one entry: fp is 0 (not known) or 1 + enum bsym_fp_state; res NULL
	 * when the entry holds no symbolization answer.  res and its frames
	 * are the parser's (copy them); names point into strings' copy. */
	int (*entry)(void *arg, uint64_t offset, unsigned fp, const struct bsym_result *res);
};

/* Validate buf (the whole file) against key, then report its contents to
 * sink - nothing is reported from a file that fails any check.  Returns 0,
 * -EINVAL with *why set to a static description of the first defect,
 * -ESTALE when the key differs, -ENOMEM, or a sink's error. */
int bsym_cache_parse(const uint8_t *buf, size_t len, const uint8_t *key, size_t key_len,
		     const struct bsym_cache_sink *sink, const char **why);

/* After bsym_obj_locate: build the object's key and load its file, if
 * any.  Never fails: a missing or damaged file only means no answers. */
void bsym_cache_attach(struct bsym_ctx *ctx, struct bsym_obj *o);
/* The object's answers may be written (a key, nothing transient). */
bool bsym_cache_writable(const struct bsym_ctx *ctx, const struct bsym_obj *o);

/* kernel.c, perfmap.c */
void bsym_kernel_free(struct bsym_kernel *k);
void bsym_perfmap_free(struct bsym_perfmap *p);
void bsym_jitdump_free(struct bsym_jitdump *j);

#endif /* BSYM_INTERNAL_H */
