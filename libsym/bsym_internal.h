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

/* ---- objects ------------------------------------------------------------- */

struct bsym_seg {
	uint64_t offset, filesz, vaddr;
};

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
	struct bsym_symtab *symtab; /* built on first symbol-table lookup */
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
	char *debuginfo_path; /* for libdwfl's build-id helpers (dwz alt files) */

	struct bsym_obj **objs;
	size_t nr_objs, cap_objs;
	struct bsym_kernel **kernels;
	size_t nr_kernels, cap_kernels;
	struct bsym_perfmap **perfmaps;
	size_t nr_perfmaps, cap_perfmaps;

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

/* Name for display: demangled (cached in ctx) unless BSYM_NO_DEMANGLE. */
const char *bsym_display_name(struct bsym_ctx *ctx, const char *raw);
/* C++ shim over __cxa_demangle; malloc'd or NULL. */
char *bsym_cxx_demangle(const char *mangled);

/* debug dir helpers (find.c) */
int bsym_debuginfod_find(struct bsym_ctx *ctx, const uint8_t *bid, size_t len, bool executable,
			 char **path_out);
int bsym_find_in_dirscan(struct bsym_ctx *ctx, size_t dir, const uint8_t *bid, size_t len,
			 char ***paths, size_t *nr);
void bsym_dirscans_free(struct bsym_ctx *ctx);
uint32_t bsym_crc32_fd(int fd, bool *ok);

/* results (bsym.c) */
const struct bsym_result *bsym_result_reason(enum bsym_reason r);
struct bsym_result *bsym_result_new(struct bsym_ctx *ctx, unsigned nr_frames);
/* symtab: the module's sorted table cache, or NULL to ask libdwfl */
int bsym_frames_from_dwarf(struct bsym_ctx *ctx, struct bsym_dwidx *idx, struct bsym_symtab **symtab,
			   Dwfl_Module *mod,
			   uint64_t dwaddr, uint64_t modaddr, enum bsym_frame_kind kind,
			   const struct bsym_result **out);

/* kernel.c, perfmap.c */
void bsym_kernel_free(struct bsym_kernel *k);
void bsym_perfmap_free(struct bsym_perfmap *p);

#endif /* BSYM_INTERNAL_H */
