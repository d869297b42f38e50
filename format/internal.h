/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h - shared by the format module's sources; not installed.
 * Byte layout constants mirror format/SPEC.md; keep the two in step.
 */
#ifndef BPROF_INTERNAL_H
#define BPROF_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bprof.h"

/* File header (SPEC.md "File header"). */
#define BPROF_MAGIC_LEN 8
extern const uint8_t bprof_magic[BPROF_MAGIC_LEN];
#define BPROF_FILE_HEADER_LEN 24

/* Section header: u32 type, u32 flags, u64 length. */
#define BPROF_SECTION_HEADER_LEN 16

enum bprof_section_type {
	BPROF_SECT_META = 1,
	BPROF_SECT_LOSSES = 2,
	BPROF_SECT_STACKS = 3,
	BPROF_SECT_COUNTS = 4,
	BPROF_SECT_OBJECTS = 5,
	BPROF_SECT_PROCESSES = 6,
	BPROF_SECT_KERNEL = 7,
	BPROF_SECT_KSYMS = 8,
	BPROF_SECT_LAST_REQUIRED = BPROF_SECT_KSYMS,
	BPROF_SECT_UNWIND = 9, /* optional (1.1) */
	BPROF_SECT_IMAGES = 10, /* optional (1.1) */
	BPROF_SECT_ACCESS = 11, /* optional (1.2) */
	BPROF_SECT_GENERATIONS = 12, /* optional (1.3) */
	BPROF_SECT_OFFCPU = 13, /* optional (1.5) */
	BPROF_SECT_PYTHON = 14, /* optional (1.7) */
	BPROF_SECT_SLICES = 15, /* optional (1.6) */
	BPROF_SECT_JIT = 16, /* optional (1.8) */
	BPROF_SECT_V8 = 17, /* optional (1.9) */
	BPROF_SECT_JVM = 18, /* optional (1.9) */
	BPROF_SECT_LAST_KNOWN = BPROF_SECT_JVM,
};

/* Fixed sizes of table entries (the part before variable data). */
#define BPROF_COUNT_ENTRY_LEN 56
#define BPROF_V8_PROC_LEN 16      /* pid, exec_id, status, reserved */
#define BPROF_V8_SFI_FIXED_LEN 40 /* pid .. nr_pos, reserved */
#define BPROF_OFFCPU_ENTRY_LEN 72 /* a count entry, state, reserved, blocked_ns */
#define BPROF_OFFCPU_FIXED_LEN 72 /* mode, reserved, period, 6 counters, nr_counts */
#define BPROF_SLICES_FIXED_LEN 24 /* slice_ns, origin_ns, nr_rows */
#define BPROF_STACK_FIXED_LEN 8      /* u32 id, u32 nr_ips */
#define BPROF_OBJECT_FIXED_LEN 48    /* flags .. fallback_hash, build_id_len */
#define BPROF_OBJECT_MIN_LEN (BPROF_OBJECT_FIXED_LEN + 4)
#define BPROF_PROCESS_FIXED_LEN 48
#define BPROF_MAPPING_LEN 32
#define BPROF_MODULE_MIN_LEN (8 + 8 + 4 + 4) /* base, size, bid len, name len */
#define BPROF_KSYM_MIN_LEN 3         /* 1-byte delta, 1-byte module, NUL */
#define BPROF_LOSSES_LEN 72          /* 1.1; 1.0 wrote 64 */
#define BPROF_LOSSES_V10_LEN 64
#define BPROF_UNWIND_FIXED_LEN 16    /* mode, flags, nr_counters */
#define BPROF_STACK_FLAGS_ENTRY_LEN 8
#define BPROF_UNWIND_MISS_ENTRY_LEN 16 /* 1.3: object_index, flags, rows */
#define BPROF_IMAGE_FIXED_LEN 16     /* object_index, reserved, len */
#define BPROF_ACCESS_FIXED_LEN 24    /* euid, flags, capabilities, nr_counters */
#define BPROF_GENS_FIXED_LEN 24      /* process_index, nr_births, nr_history, nr_gaps, reserved */
#define BPROF_HISTORY_LEN 40         /* a mapping entry, birth, reserved */
#define BPROF_PY_PROC_LEN 16         /* pid, exec_id, version, status */
#define BPROF_JITDUMP_FIXED_LEN 16   /* pid, exec_id, len */
#define BPROF_PY_CODE_FIXED_LEN 48   /* pid .. reserved, before the bytes */
#define BPROF_JVM_PROC_FIXED_LEN 16  /* pid, exec_id, status, version length */
#define BPROF_JVM_FRAME_FIXED_LEN 56 /* pid .. reserved, before the bytes */

/* Reader limits beyond the byte budget (SPEC.md "Limits"). */
#define BPROF_DEFAULT_MAX_DECOMPRESSED (UINT64_C(1) << 30)
#define BPROF_DEFAULT_WINDOW_LOG 27
#define BPROF_MAX_STACK_DEPTH 65535u
#define BPROF_MAX_MODULES 65536u
#define BPROF_MAX_KSYMS (1u << 22) /* ~20x a large kallsyms; bounds memory */

#define BPROF_META_ALL_FLAGS \
	(BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS | BPROF_META_INCLUDE_IDLE | \
	 BPROF_META_PER_THREAD | BPROF_META_NO_GENERATIONS | BPROF_META_NO_PYTHON_WALK | \
	 BPROF_META_NO_V8_WALK | BPROF_META_NO_JVM_WALK)
#define BPROF_OBJ_ALL_FLAGS \
	(BPROF_OBJ_HAS_BUILD_ID | BPROF_OBJ_FALLBACK_ID | BPROF_OBJ_DELETED | BPROF_OBJ_VDSO | \
	 BPROF_OBJ_UNREADABLE)
#define BPROF_MAP_ALL_FLAGS (BPROF_MAP_ANON | BPROF_MAP_VDSO | BPROF_MAP_READ | BPROF_MAP_WRITE)
#define BPROF_KERNEL_ALL_FLAGS (BPROF_KERNEL_KALLSYMS_HIDDEN | BPROF_KERNEL_KALLSYMS_PARTIAL)

/* ---- little-endian helpers: never cast a struct over a buffer ---------- */

static inline uint16_t bprof_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t bprof_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t bprof_le64(const uint8_t *p)
{
	return (uint64_t)bprof_le32(p) | (uint64_t)bprof_le32(p + 4) << 32;
}

static inline void bprof_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void bprof_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void bprof_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Fill err (if any) and return code.  Formats like printf. */
int bprof_set_error(struct bprof_error *err, int code, int sys_errno, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Validation shared by bprof_recording_validate() (code BPROF_E_INVAL, may
 * sort) and the reader's final pass (code BPROF_E_CORRUPT, strict_flags
 * false for files of a newer minor version). */
int bprof_validate_impl(struct bprof_recording *rec, struct bprof_error *err, int code,
			bool sort, bool strict_flags);

/* Length of a possibly NULL string; NULL reads as "". */
static inline size_t bprof_strlen0(const char *s)
{
	return s ? strlen(s) : 0;
}

/* ---- the reader's cursor (read_sections.c, read_runtimes.c) ----------- */

/* One section's payload as it is parsed.  Counts and lengths are checked
 * against what remains before anything is read or allocated, and errors
 * name the section and the content offset where parsing stopped. */
struct bprof_cur {
	const uint8_t *b;   /* section payload */
	uint64_t len, pos;
	uint64_t base;      /* content offset of b[0] */
	const char *sect;   /* section name for messages */
	uint32_t type;      /* enum bprof_section_type */
	bool strict;        /* file minor <= ours: undefined bits/bytes are errors */
	unsigned minor;     /* the file's minor version */
	struct bprof_error *err;
};

/* Fill c->err with "<section> section at offset <pos>: <message>" and
 * return code. */
int bprof_cerr(struct bprof_cur *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline uint64_t bprof_rem(const struct bprof_cur *c)
{
	return c->len - c->pos;
}

/* 0 if n bytes remain, else BPROF_E_TRUNCATED naming what needed them. */
int bprof_need(struct bprof_cur *c, uint64_t n, const char *what);

/* Unchecked loads: the caller has made sure of the bytes (bprof_need). */
static inline uint32_t bprof_g32(struct bprof_cur *c)
{
	uint32_t v = bprof_le32(c->b + c->pos);

	c->pos += 4;
	return v;
}

static inline uint64_t bprof_g64(struct bprof_cur *c)
{
	uint64_t v = bprof_le64(c->b + c->pos);

	c->pos += 8;
	return v;
}

/* A table's entry count: refused unless count * min_entry bytes remain,
 * so that nothing is allocated for entries the section cannot hold. */
int bprof_get_count(struct bprof_cur *c, uint64_t *out, uint64_t min_entry, const char *what);

/* n counters (n * 8 must not overflow), of which the first `known` are
 * kept in dst: later versions append counters. */
int bprof_get_counters(struct bprof_cur *c, uint64_t *dst, uint64_t known, uint64_t n,
		       const char *what);

/* Parse the decompressed content (SPEC.md 5, 6) into r (read_sections.c). */
int bprof_parse_content(struct bprof_recording *r, const uint8_t *b, uint64_t len, bool strict,
			unsigned minor, struct bprof_error *err);

/* The sections that name runtimes' frames, PYTHON, V8 and JVM (c->type
 * says which), and JIT compilers' (read_runtimes.c). */
int bprof_parse_runtime(struct bprof_cur *c, struct bprof_recording *r);
int bprof_parse_jit(struct bprof_cur *c, struct bprof_recording *r);

#endif /* BPROF_INTERNAL_H */
