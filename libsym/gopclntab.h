/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gopclntab.h - Go's own function table (.gopclntab, the runtime's
 * pcHeader and what follows it), read offline: function names, files,
 * lines and inlined calls of Go binaries built without symbols or DWARF
 * (go build -ldflags="-s -w"), which no C library reads.
 *
 * Layouts of Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19 (0xfffffff0) and
 * 1.20+ (0xfffffff1), as Go's src/runtime/symtab.go and
 * src/debug/gosym/pclntab.go describe them; little-endian, 8-byte pointers
 * (x86-64, arm64).  Every byte is hostile: each offset and length is
 * checked against the bytes that hold it, every loop is bounded by the
 * bytes it consumes or a fixed depth, and a malformed entry is "not
 * found", never a read past the table.
 *
 * No dependency on the rest of libsym (the recorder uses it too: which
 * functions are Go's thread roots).  Nothing here prints.
 */
#ifndef BPROF_GOPCLNTAB_H
#define BPROF_GOPCLNTAB_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gopcln_error {
	char message[160];
};

/* Memory of the program image at link-time addresses: where the inline
 * trees (1.18+: at gofunc + offset; 1.16-1.17: behind pointers) are.
 * read copies len bytes at vaddr into dst: 0, or < 0 when not there. */
struct gopcln_mem {
	int (*read)(void *arg, uint64_t vaddr, void *dst, size_t len);
	void *arg;
};

struct gopcln_opts {
	uint64_t text_start;   /* 1.18+: base of entry offsets; 0: the header's */
	uint64_t gofunc;       /* 1.18+: address of go:func.*; 0: unknown (no inline trees) */
	struct gopcln_mem mem; /* read NULL: no inline trees */
};

struct gopcln;

/*
 * Parse the header of the table in data[0..len) (loaded at vaddr); the
 * bytes must outlive the handle (names point into them).  0, or a negative
 * errno with err->message set: -EINVAL not a table this reads (bad magic,
 * header fields out of range), -ENOMEM.  opts may be NULL.
 */
int gopcln_open(struct gopcln **out, const uint8_t *data, size_t len, uint64_t vaddr,
		const struct gopcln_opts *opts, struct gopcln_error *err);
void gopcln_close(struct gopcln *t);
/* 116, 118 or 120: the first Go version of the table's layout. */
unsigned gopcln_version(const struct gopcln *t);
size_t gopcln_nr_funcs(const struct gopcln *t);

/* funcFlag_TOPFRAME: the function is at the top of its stack (Go 1.17+) */
#define GOPCLN_FLAG_TOPFRAME 0x1
/* funcFlag_SPWRITE: it writes SP other than by adding to it (Go 1.17+):
 * a stack switch, its pcsp table does not describe the caller's frame */
#define GOPCLN_FLAG_SPWRITE 0x2

struct gopcln_func {
	uint64_t entry, end;   /* [entry, end) */
	const char *name;      /* NUL-terminated, in the table; NULL if malformed */
	uint8_t func_id, flag;
};
/* Function i (0 <= i < gopcln_nr_funcs).  0, -ERANGE, -EINVAL malformed. */
int gopcln_func(const struct gopcln *t, size_t i, struct gopcln_func *f);
/* A thread's outermost function, where Go's own traceback stops: TOPFRAME,
 * or by name where the flag is not recorded (Go 1.16): runtime.goexit,
 * runtime.mstart, runtime.rt0_go. */
bool gopcln_func_is_root(const struct gopcln_func *f);

struct gopcln_frame {
	const char *name;      /* NULL: unreadable name */
	const char *file;      /* NULL: not known */
	uint32_t line;         /* 0: not known */
	uint64_t entry;        /* of the function whose code holds pc (the outermost) */
	bool inlined;          /* inlined into frames[i + 1] */
};
/*
 * The frames at pc, innermost first: inlined callees (from the inline
 * tree, where opts gave its whereabouts) then the function holding pc.
 * 0 with *nr frames (0: pc in no function, or its entry is malformed);
 * at most max frames are written, the outermost always among them.
 */
int gopcln_lookup(const struct gopcln *t, uint64_t pc, struct gopcln_frame *frames, unsigned max,
		  unsigned *nr);

/* The stack pointer's offset from its value at the function's entry at pc
 * (Go's pcsp table: the CFA is sp + delta + the return address).  0,
 * -ENOENT pc in no function, -EINVAL malformed. */
int gopcln_sp_delta(const struct gopcln *t, uint64_t pc, int32_t *delta);

/* The pcsp table of function i, range by range: fn(arg, start, end,
 * delta) for each [start, end) where the offset is delta, in order, until
 * fn returns non-zero (returned); the padding after the function's code is
 * in no range.  0, -ERANGE, -EINVAL malformed (the ranges before the
 * defect were reported). */
int gopcln_pcsp_ranges(const struct gopcln *t, size_t i,
		       int (*fn)(void *arg, uint64_t start, uint64_t end, int32_t delta), void *arg);

/* Bytes of the image at vaddr through the table's memory reader (the
 * code, for gopcln_elf_open's tables): 0, or -1 when not there. */
int gopcln_read(const struct gopcln *t, uint64_t vaddr, void *dst, size_t len);

/*
 * The table of a Go ELF object: the .gopclntab section, else the
 * runtime.pclntab symbol, else a valid header found by its magic in a
 * data section (PIE and externally linked binaries put it in
 * .data.rel.ro).  The text base and go:func.* are found too (by symbol,
 * else through runtime.firstmoduledata, R_*_RELATIVE relocations applied),
 * so that inlined calls are named.  elf must outlive the handle.  0,
 * -ENOENT (no Go table), or as gopcln_open.
 */
int gopcln_elf_open(struct gopcln **out, Elf *elf, struct gopcln_error *err);

#endif
