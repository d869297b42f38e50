/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_runtimes.c - parse and validate the sections that name runtimes'
 * frames, PYTHON, V8 and JVM (SPEC.md 6.15, 6.17, 6.18), and JIT's
 * (6.16).  The cursor and its rules are read_sections.c's.
 *
 * The runtimes' sections have one shape: counters, then a table of the
 * processes that run the runtime, then a table of what names its frames.
 * An entry is a fixed part (pid, exec_id, fields, the lengths of what
 * follows), then the bytes those lengths announce.  One reader reads them
 * all from the tables below, which mirror SPEC.md's: the fields kept, the
 * checks in the order they are made, the bytes.  A runtime is a row: its
 * two tables and an RT_SECTION line here, its name in read_sections.c's
 * table of sections.
 */
#include <stdlib.h>

#include "internal.h"

/* Bytes after an entry's fixed part: a length checked against the limit
 * and what remains, copied NUL-terminated (bin: may hold NULs).  "code"
 * whatever the runtime: 1.7's reader said so, and messages stay. */
static int get_bytes(struct bprof_cur *c, uint32_t n, uint32_t limit, bool bin, char **out,
		     const char *what, uint64_t i)
{
	int rc;

	if (n > limit)
		return bprof_cerr(c, BPROF_E_LIMIT, "code %llu: %s of %u bytes (limit %u)",
				  (unsigned long long)i, what, n, limit);
	if ((rc = bprof_need(c, n, what)))
		return rc;
	if (!bin && memchr(c->b + c->pos, '\0', n))
		return bprof_cerr(c, BPROF_E_CORRUPT, "code %llu: %s contains a NUL byte",
				  (unsigned long long)i, what);
	if (!(*out = malloc((size_t)n + 1)))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "%s", what);
	memcpy(*out, c->b + c->pos, n);
	(*out)[n] = '\0';
	c->pos += n;
	return 0;
}

/* V8's position rows (SPEC.md 6.17), after an SFI entry's names: a table
 * of tables, read by hand. */
static int read_v8_rows(struct bprof_cur *c, void *entry, const uint8_t *fixed, uint64_t i)
{
	struct bprof_v8_sfi *e = entry;
	uint32_t np = bprof_le32(fixed + 32); /* checked against BPROF_V8_POS_MAX */
	int rc;

	/* each row is at least 8 + 12 bytes: checked before allocating */
	if ((rc = bprof_need(c, (uint64_t)np * 20, "position rows")))
		return rc;
	if (np && !(e->pos = calloc(np, sizeof(*e->pos))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 position rows");
	for (uint32_t j = 0; j < np; j++) {
		struct bprof_v8_pos *row = &e->pos[j];
		uint32_t nf;

		if ((rc = bprof_need(c, 8, "position row")))
			return rc;
		e->nr_pos = j + 1;
		row->code_offset = bprof_g32(c);
		nf = bprof_g32(c);
		if (j && row->code_offset <= row[-1].code_offset)
			return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu: position row %u out of order",
					  (unsigned long long)i, j);
		if (!nf || nf > BPROF_V8_INLINE_MAX)
			return bprof_cerr(c, BPROF_E_LIMIT, "SFI %llu: position row %u of %u frames",
					  (unsigned long long)i, j, nf);
		if ((rc = bprof_need(c, (uint64_t)nf * 12, "position frames")))
			return rc;
		if (!(row->frames = calloc(nf, sizeof(*row->frames))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 frames");
		for (uint32_t k = 0; k < nf; k++) {
			struct bprof_v8_frame *fr = &row->frames[k];
			uint32_t a, b;

			if ((rc = bprof_need(c, 12, "frame")))
				return rc;
			row->nr_frames = k + 1;
			fr->line = (int32_t)bprof_g32(c);
			a = bprof_g32(c);
			b = bprof_g32(c);
			if (fr->line < 0)
				return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu: frame line %d",
						  (unsigned long long)i, fr->line);
			if ((rc = get_bytes(c, a, BPROF_V8_NAME_MAX, false, &fr->name,
					    "inlined function name", i)) ||
			    (rc = get_bytes(c, b, BPROF_V8_NAME_MAX, false, &fr->script,
					    "inlined script name", i)))
				return rc;
		}
	}
	return 0;
}

/* ---- the tables' vocabulary -------------------------------------------- */

/* offsetof(type, m), refused at compile time unless m is n bytes wide: the
 * reader stores through these offsets, and a member of another width
 * would be written past. */
#define RT_AT(type, m, n)                                                               \
	(offsetof(type, m) + 0 * sizeof(struct {                                        \
		 _Static_assert(sizeof(((type *)0)->m) == (n), #m " is not " #n " bytes"); \
		 int x;                                                                  \
	 }))

/* Offsets ("at") are those of SPEC.md's tables, in an entry's fixed part;
 * E, defined above each table, is its entries' type. */
struct rt_field {
	uint8_t at, size; /* a u32 or i32 (4), a u64 (8) */
	uint16_t off;
};
#define RT_U32(at, m) { (at), 4, RT_AT(E, m, 4) }
#define RT_U64(at, m) { (at), 8, RT_AT(E, m, 8) }

/* A check of the u32 at `at`; the messages are those of the parsers
 * before the tables, "<noun> <index>: ...". */
enum rt_kind {
	RTK_END,
	RTK_ORDER,    /* not after the previous entry (by cmp, else by pid, exec_id) */
	RTK_RESERVED, /* nonzero, in a known file */
	RTK_ENUM,     /* outside lo..hi, or the u32 at at2 (if any) nonzero, in a known file */
	RTK_LIMIT,    /* above hi */
	RTK_LINE,     /* negative as an i32 */
};
struct rt_check {
	uint8_t kind, at, at2;
	uint32_t lo, hi;
	const char *name;
};
#define RT_ORDER { .kind = RTK_ORDER }
#define RT_RESERVED(a) { .kind = RTK_RESERVED, .at = (a) }
#define RT_ENUM(a, l, h, n) { .kind = RTK_ENUM, .at = (a), .lo = (l), .hi = (h), .name = (n) }
#define RT_LIMIT(a, h, n) { .kind = RTK_LIMIT, .at = (a), .hi = (h), .name = (n) }
#define RT_LINE(a, n) { .kind = RTK_LINE, .at = (a), .name = (n) }

/* The bytes after the fixed part, in the order of their lengths. */
#define RT_BIN 1u  /* may hold NUL bytes (a line table); else text without NUL */
#define RT_NULL 2u /* 0 bytes leave the pointer NULL ("not known"); else "" */
struct rt_bytes {
	uint8_t at, flags; /* at: of the u32 length */
	uint16_t off;
	uint32_t limit;
	const char *what;
};
#define RT_BYTES(at, m, limit, flags, what) \
	{ (at), (flags), RT_AT(E, m, sizeof(void *)), (limit), (what) }

#define RT_END_OF(a) ((a) + sizeof(a) / sizeof((a)[0]))

struct rt_table {
	const char *what;  /* "claims 9 <what> of at least 48 bytes" */
	const char *entry; /* "<entry> needs 48 bytes" */
	const char *noun;  /* "<noun> 3: reserved field 0x1" */
	const char *nomem; /* the table, when it cannot be allocated */
	uint8_t fixed;     /* bytes of the fixed part: at most 255 */
	size_t size, array, count; /* an entry's; its pointer and count in the recording */
	int (*cmp)(const void *, const void *); /* the order; NULL: (pid, exec_id) */
	struct rt_field fields[10]; /* up to the first of size 0 */
	struct rt_check checks[5];  /* up to the first RTK_END */
	struct rt_bytes bytes[6];   /* up to the first without what */
	/* what follows the bytes (V8's position rows) */
	int (*tail)(struct bprof_cur *c, void *entry, const uint8_t *fixed, uint64_t i);
};
#define RT_REC(m, n) RT_AT(struct bprof_recording, m, n)
#define RT_ARRAY(rt, arr, nr) \
	.size = sizeof(E), .array = RT_REC(rt.arr, sizeof(void *)), .count = RT_REC(rt.nr, 8)
/* a runtime's processes, named alike in every runtime's messages */
#define RT_PROCS(rt, name, len)                                                      \
	.what = name " processes", .entry = "process", .noun = "process",             \
	.nomem = name " processes", .fixed = (len), RT_ARRAY(rt, procs, nr_procs)

/* ---- the tables ---------------------------------------------------------- */

#define E struct bprof_python_proc
static const struct rt_table py_procs = {
	RT_PROCS(python, "Python", BPROF_PY_PROC_LEN),
	.fields = { RT_U32(0, pid), RT_U32(4, exec_id), RT_U32(8, version), RT_U32(12, status) },
	.checks = { RT_ENUM(12, 0, BPROF_PY_STATUS_MAX, "status"), RT_ORDER },
};
#undef E
#define E struct bprof_python_code
static const struct rt_table py_codes = {
	.what = "code objects", .entry = "code entry", .noun = "code",
	.nomem = "Python code objects", .fixed = BPROF_PY_CODE_FIXED_LEN,
	RT_ARRAY(python, codes, nr_codes), .cmp = bprof_python_code_cmp,
	.fields = { RT_U32(0, pid), RT_U32(4, exec_id), RT_U64(8, code), RT_U32(16, guard),
		    RT_U32(20, firstlineno), RT_U32(24, code_offset), RT_U32(28, nr_units),
		    RT_U32(40, linetable_len) },
	.checks = { RT_RESERVED(44), RT_ORDER },
	.bytes = { RT_BYTES(32, qualname, BPROF_PY_NAME_MAX, 0, "qualname"),
		   RT_BYTES(36, filename, BPROF_PY_NAME_MAX, 0, "filename"),
		   RT_BYTES(40, linetable, BPROF_PY_LINETABLE_MAX, RT_BIN, "line table") },
};
#undef E
#define E struct bprof_v8_proc
static const struct rt_table v8_procs = {
	RT_PROCS(v8, "V8", BPROF_V8_PROC_LEN),
	.fields = { RT_U32(0, pid), RT_U32(4, exec_id), RT_U32(8, status) },
	/* the status and the reserved field: one check, one message */
	.checks = { { .kind = RTK_ENUM, .at = 8, .at2 = 12, .hi = BPROF_V8_STATUS_MAX,
		      .name = "status" },
		    RT_ORDER },
};
#undef E
#define E struct bprof_v8_sfi
static const struct rt_table v8_sfis = {
	.what = "SFIs", .entry = "SFI entry", .noun = "SFI", .nomem = "V8 SFIs",
	.fixed = BPROF_V8_SFI_FIXED_LEN, RT_ARRAY(v8, sfis, nr_sfis), .cmp = bprof_v8_sfi_cmp,
	.fields = { RT_U32(0, pid), RT_U32(4, exec_id), RT_U64(8, sfi), RT_U32(16, guard),
		    RT_U32(20, line) },
	.checks = { RT_RESERVED(36), RT_LIMIT(32, BPROF_V8_POS_MAX, "position rows"), RT_ORDER,
		    RT_LINE(20, "line") },
	.bytes = { RT_BYTES(24, name, BPROF_V8_NAME_MAX, 0, "function name"),
		   RT_BYTES(28, script, BPROF_V8_NAME_MAX, 0, "script name") },
	.tail = read_v8_rows, /* nr_pos (at 32) counts the rows it has read */
};
#undef E
#define E struct bprof_jvm_proc
static const struct rt_table jvm_procs = {
	RT_PROCS(jvm, "JVM", BPROF_JVM_PROC_FIXED_LEN),
	.fields = { RT_U32(0, pid), RT_U32(4, exec_id), RT_U32(8, status) },
	.checks = { RT_ENUM(8, 0, BPROF_JVM_STATUS_MAX, "status"), RT_ORDER },
	.bytes = { RT_BYTES(12, version, BPROF_JVM_NAME_MAX, RT_NULL, "version") },
};
#undef E
#define E struct bprof_jvm_frame
static const struct rt_table jvm_frames = {
	.what = "JVM frames", .entry = "frame entry", .noun = "frame", .nomem = "JVM frames",
	.fixed = BPROF_JVM_FRAME_FIXED_LEN, RT_ARRAY(jvm, frames, nr_frames),
	.cmp = bprof_jvm_frame_cmp,
	.fields = { RT_U32(0, pid), RT_U32(4, exec_id), RT_U64(8, id), RT_U32(16, guard),
		    RT_U32(20, kind), RT_U32(24, level), RT_U32(44, lines_len),
		    RT_U32(48, scopes_len) },
	.checks = { RT_RESERVED(52), RT_ENUM(20, 1, BPROF_JVM_KIND_MAX, "kind"), RT_ORDER },
	.bytes = { RT_BYTES(28, klass, BPROF_JVM_NAME_MAX, RT_NULL, "class"),
		   RT_BYTES(32, method, BPROF_JVM_NAME_MAX, RT_NULL, "method"),
		   RT_BYTES(36, signature, BPROF_JVM_NAME_MAX, RT_NULL, "signature"),
		   RT_BYTES(40, file, BPROF_JVM_NAME_MAX, RT_NULL, "file"),
		   RT_BYTES(44, lines, BPROF_JVM_LINES_MAX, RT_BIN | RT_NULL, "line table"),
		   RT_BYTES(48, scopes, BPROF_JVM_SCOPES_MAX, RT_BIN | RT_NULL, "scopes") },
};
#undef E

/* A runtime's section: its counters (at most as many as its array holds,
 * SPEC.md's 256), its processes, what names its frames. */
static const struct rt_section {
	uint32_t type;
	size_t present, nr_counters, counters, max_counters;
	const struct rt_table *tables[2];
} runtimes[] = {
#define RT_SECTION(type, rt, procs, names)                                              \
	{ (type), RT_REC(rt.present, 4), RT_REC(rt.nr_counters, 4),                     \
	  offsetof(struct bprof_recording, rt.counters),                                \
	  sizeof(((struct bprof_recording *)0)->rt.counters) / sizeof(uint64_t),        \
	  { (procs), (names) } }
	RT_SECTION(BPROF_SECT_PYTHON, python, &py_procs, &py_codes), /* 1.7, SPEC.md 6.15 */
	RT_SECTION(BPROF_SECT_V8, v8, &v8_procs, &v8_sfis),          /* 1.9, SPEC.md 6.17 */
	RT_SECTION(BPROF_SECT_JVM, jvm, &jvm_procs, &jvm_frames),    /* 1.9, SPEC.md 6.18 */
#undef RT_SECTION
};

/* ---- the reader ---------------------------------------------------------- */

/* Stores through the tables' offsets: by memcpy, since the member may be
 * an int32_t stored from a u32, or a struct's pointer from a char one. */
static void put(void *base, size_t off, const void *v, size_t n)
{
	memcpy((char *)base + off, v, n);
}

/* The order of a table without cmp: every entry begins with pid, exec_id. */
static uint64_t entry_key(const uint8_t *w)
{
	return (uint64_t)bprof_le32(w) << 32 | bprof_le32(w + 4);
}

/* Entry i's checks, in its table's order: a file with two defects is
 * refused for the one each parser met first before the tables. */
static int check_entry(struct bprof_cur *c, const struct rt_table *t, const char *e,
		       const uint8_t *w, uint64_t i, uint64_t prev_key)
{
	const char *no = t->noun;
	unsigned long long ii = (unsigned long long)i;

	for (const struct rt_check *k = t->checks; k < RT_END_OF(t->checks) && k->kind; k++) {
		uint32_t v = bprof_le32(w + k->at), v2 = k->at2 ? bprof_le32(w + k->at2) : 0;

		if (k->kind == RTK_ORDER && i && t->cmp && t->cmp(e, e - t->size) <= 0)
			return bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu duplicated or out of order",
					  no, ii);
		if (k->kind == RTK_ORDER && i && !t->cmp && entry_key(w) <= prev_key)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "%s %llu (pid %u) duplicated or out of order", no, ii,
					  bprof_le32(w));
		if (k->kind == RTK_RESERVED && c->strict && v)
			return bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu: reserved field 0x%x", no, ii,
					  v);
		if (k->kind == RTK_ENUM && c->strict && (v < k->lo || v > k->hi || v2))
			return k->at2 ? bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu: %s %u, reserved 0x%x",
						   no, ii, k->name, v, v2)
				      : bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu: %s %u", no, ii,
						   k->name, v);
		if (k->kind == RTK_LIMIT && v > k->hi)
			return bprof_cerr(c, BPROF_E_LIMIT, "%s %llu: %u %s (limit %u)", no, ii, v,
					  k->name, k->hi);
		if (k->kind == RTK_LINE && (int32_t)v < 0)
			return bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu: %s %d", no, ii, k->name,
					  (int32_t)v);
	}
	return 0;
}

static int read_table(struct bprof_cur *c, struct bprof_recording *r, const struct rt_table *t)
{
	uint64_t n, prev_key = 0;
	char *arr = NULL;
	int rc = bprof_get_count(c, &n, t->fixed, t->what);

	if (rc)
		return rc;
	if (n && !(arr = calloc(n, t->size))) /* n * t->fixed bytes remain */
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "%s", t->nomem);
	put(r, t->array, &arr, sizeof(arr));
	for (uint64_t i = 0; i < n; i++) {
		char *e = arr + i * t->size;
		/* The fixed part, copied: no offset of a table (a uint8_t)
		 * reaches past w, and none reads a byte of the file that
		 * bprof_need() has not checked; past t->fixed, w is 0. */
		uint8_t w[UINT8_MAX + 8] = { 0 };
		uint64_t nr = i + 1;

		if ((rc = bprof_need(c, t->fixed, t->entry)))
			return rc;
		put(r, t->count, &nr, 8); /* counted now: freed on any error */
		memcpy(w, c->b + c->pos, t->fixed);
		c->pos += t->fixed;
		for (const struct rt_field *f = t->fields; f < RT_END_OF(t->fields) && f->size;
		     f++) {
			uint64_t v64 = bprof_le64(w + f->at);
			uint32_t v32 = bprof_le32(w + f->at);

			put(e, f->off, f->size == 8 ? (const void *)&v64 : &v32, f->size);
		}
		if ((rc = check_entry(c, t, e, w, i, prev_key)))
			return rc;
		prev_key = entry_key(w);
		for (const struct rt_bytes *b = t->bytes; b < RT_END_OF(t->bytes) && b->what; b++) {
			uint32_t len = bprof_le32(w + b->at);
			char *s = NULL;

			if (!len && (b->flags & RT_NULL))
				continue;
			if ((rc = get_bytes(c, len, b->limit, b->flags & RT_BIN, &s, b->what, i)))
				return rc;
			put(e, b->off, &s, sizeof(s));
		}
		if (t->tail && (rc = t->tail(c, e, w, i)))
			return rc;
	}
	return 0;
}

int bprof_parse_runtime(struct bprof_cur *c, struct bprof_recording *r)
{
	const struct rt_section *s = NULL;
	uint32_t nc, reserved, one = 1;
	int rc;

	for (const struct rt_section *k = runtimes; k < RT_END_OF(runtimes); k++)
		if (k->type == c->type)
			s = k;
	if (!s) /* the section table names this reader for a section without a row */
		return bprof_cerr(c, BPROF_E_INVAL, "no runtime reader for this section");
	if ((rc = bprof_need(c, 8, "header")))
		return rc;
	nc = bprof_g32(c);
	reserved = bprof_g32(c);
	if (nc > s->max_counters)
		return bprof_cerr(c, BPROF_E_LIMIT, "%u counters (limit %zu)", nc, s->max_counters);
	if (c->strict && reserved)
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	put(r, s->present, &one, 4);
	put(r, s->nr_counters, &nc, 4);
	if ((rc = bprof_get_counters(c, (uint64_t *)((char *)r + s->counters), nc, nc, "counters")))
		return rc;
	for (size_t k = 0; k < 2; k++)
		if ((rc = read_table(c, r, s->tables[k])))
			return rc;
	return 0;
}

/* JIT (1.8): the clocks' offset, counters, jitdumps as opaque bytes
 * (libsym parses them: they are the process's own words). */
int bprof_parse_jit(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_jit *j = &r->jit;
	uint32_t nc, reserved;
	uint64_t n, prev = 0;
	int rc;

	if ((rc = bprof_need(c, 16, "header")))
		return rc;
	j->mono_minus_real_ns = (int64_t)bprof_g64(c);
	nc = bprof_g32(c);
	reserved = bprof_g32(c);
	if (nc > BPROF_JIT_MAX_COUNTERS) {
		c->pos -= 8;
		return bprof_cerr(c, BPROF_E_LIMIT, "%u counters (limit %u)", nc, BPROF_JIT_MAX_COUNTERS);
	}
	if (c->strict && reserved) {
		c->pos -= 4;
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	}
	if ((rc = bprof_get_counters(c, j->counters, BPROF_JIT_NR_COUNTERS, nc, "counters")))
		return rc;
	j->present = 1;
	if ((rc = bprof_get_count(c, &n, BPROF_JITDUMP_FIXED_LEN, "jitdumps")))
		return rc;
	if (n && !(j->dumps = calloc(n, sizeof(*j->dumps))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "jitdumps");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jitdump *d = &j->dumps[i];
		uint64_t at = c->pos, key;

		if ((rc = bprof_need(c, BPROF_JITDUMP_FIXED_LEN, "jitdump")))
			return rc;
		d->pid = bprof_g32(c);
		d->exec_id = bprof_g32(c);
		d->len = bprof_g64(c);
		j->nr_dumps = i + 1;
		key = (uint64_t)d->pid << 32 | d->exec_id;
		if (i && key <= prev) {
			c->pos = at;
			return bprof_cerr(c, BPROF_E_CORRUPT, "jitdump %llu: (pid %u, exec_id %u) not after the previous one",
					  (unsigned long long)i, d->pid, d->exec_id);
		}
		prev = key;
		if ((rc = bprof_need(c, d->len, "jitdump bytes")))
			return rc;
		if (!(d->data = malloc(d->len ? (size_t)d->len : 1)))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "jitdump");
		memcpy(d->data, c->b + c->pos, (size_t)d->len);
		c->pos += d->len;
	}
	return 0;
}
