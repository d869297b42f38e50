/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jitdump.c - JIT code named from a jitdump (Linux perf's
 * tools/perf/Documentation/jitdump-specification.txt; written by
 * node --perf-prof and perf's JVMTI agent), with the time of each load.
 *
 * The bytes are the JIT's own and then the recorder's copy: hostile.  Every
 * length is checked against what remains before it is used, names must end
 * in a NUL within their record, and fields are read with little-endian
 * loads, never through a struct laid over the buffer.  A record whose
 * total_size does not fit ends the parse (nothing after it can be framed);
 * a record that fits but makes no sense is skipped.
 *
 * Truth under reuse (format/SPEC.md 6.16, rule 1): a load names an address
 * only for samples after it, and when loads of different names cover an
 * address within the samples' time window, the answer is ambiguous.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bsym_internal.h"

#define JD_MAGIC 0x4A695444u
#define JD_HEADER_MIN 40
#define JD_REC_HDR 16
#define JD_FLAG_ARCH_TIMESTAMP 1u
#define JD_CODE_LOAD 0
#define JD_CODE_MOVE 1
#define JD_CODE_DEBUG_INFO 2
/* loads looked at below an address (as perfmap.c's SCAN_BACK) */
#define SCAN_BACK 4096

struct jd_load {
	uint64_t start, end, ts;
	const char *name;
	uint32_t seq;        /* record order: ties in time, ARCH_TIMESTAMP */
	uint32_t line0, nr_lines; /* its debug lines in lines[] */
	uint64_t line_base;  /* the code_addr its lines are relative to (moves) */
};

struct jd_line {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

struct jd_cached { /* one answer for (addr, t0, t1) */
	uint64_t t0, t1;
	const struct bsym_result *res;
	struct jd_cached *next;     /* same addr */
	struct jd_cached *all_next; /* every node, to free */
};

struct bsym_jitdump {
	uint8_t *data;
	size_t len;
	bool arch_ts;
	struct jd_load *l;
	size_t n, cap;
	struct jd_line *lines;
	size_t nr_lines, cap_lines;
	uint64_t max_len;
	struct bsym_map cache; /* addr -> struct jd_cached chain */
	struct jd_cached *all; /* every node, to free */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

void bsym_jitdump_free(struct bsym_jitdump *j)
{
	if (!j)
		return;
	while (j->all) {
		struct jd_cached *n = j->all->all_next;
		free(j->all);
		j->all = n;
	}
	bsym_map_free(&j->cache);
	free(j->data);
	free(j->l);
	free(j->lines);
	free(j);
}

static int add_load(struct bsym_jitdump *j, const struct jd_load *ld)
{
	if (j->n == j->cap) {
		size_t nc = j->cap ? j->cap * 2 : 64;
		struct jd_load *n = realloc(j->l, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		j->l = n;
		j->cap = nc;
	}
	j->l[j->n++] = *ld;
	if (ld->end - ld->start > j->max_len)
		j->max_len = ld->end - ld->start;
	return 0;
}

static int add_line(struct bsym_jitdump *j, uint64_t addr, uint32_t line, const char *file)
{
	if (j->nr_lines == j->cap_lines) {
		size_t nc = j->cap_lines ? j->cap_lines * 2 : 256;
		struct jd_line *n;
		if (nc > UINT32_MAX)
			return -ENOMEM;
		n = realloc(j->lines, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		j->lines = n;
		j->cap_lines = nc;
	}
	j->lines[j->nr_lines++] = (struct jd_line){ addr, line, file };
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct jd_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_load(const void *a, const void *b)
{
	const struct jd_load *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A NUL-terminated string at p within [p, end): its length, or -1. */
static ssize_t cstr(const uint8_t *p, const uint8_t *end)
{
	const uint8_t *z = memchr(p, 0, (size_t)(end - p));
	return z ? z - p : -1;
}

/* JIT_CODE_DEBUG_INFO: code_addr, nr_entry, entries {addr, line, discrim,
 * name}.  Kept as the pending lines of the next load of code_addr. */
static int parse_debug(struct bsym_jitdump *j, const uint8_t *p, const uint8_t *end,
		       uint64_t *pend_addr, uint32_t *pend0, uint32_t *pend_n)
{
	size_t first = j->nr_lines;
	const char *prev_file = NULL;
	uint64_t code_addr, nr;
	int err;

	if (end - p < 16)
		return 0;
	code_addr = le64(p);
	nr = le64(p + 8);
	p += 16;
	/* each entry is at least 18 bytes: a count beyond that is a lie */
	if (nr > (uint64_t)(end - p) / 18)
		return 0;
	for (uint64_t i = 0; i < nr; i++) {
		ssize_t sl;
		const char *file;

		if (end - p < 16 || (sl = cstr(p + 16, end)) < 0) {
			j->nr_lines = first; /* the record is skipped whole */
			return 0;
		}
		file = (const char *)p + 16;
		/* "\xff\0": the previous entry's file (the specification's
		 * shorthand) */
		if (sl == 1 && (uint8_t)file[0] == 0xff)
			file = prev_file;
		if (file && (err = add_line(j, le64(p), le32(p + 8), file)))
			return err;
		prev_file = file;
		p += 16 + (size_t)sl + 1;
	}
	*pend_addr = code_addr;
	*pend0 = (uint32_t)first;
	*pend_n = (uint32_t)(j->nr_lines - first);
	return 0;
}

static int parse(struct bsym_jitdump *j)
{
	const uint8_t *b = j->data, *end = j->data + j->len, *p;
	uint64_t pend_addr = 0;
	uint32_t pend0 = 0, pend_n = 0, seq = 0, hsize;
	bool pending = false;
	int err;

	if (j->len < JD_HEADER_MIN || le32(b) != JD_MAGIC || le32(b + 4) != 1)
		return -EINVAL;
	hsize = le32(b + 8);
	if (hsize < JD_HEADER_MIN || hsize > j->len)
		return -EINVAL;
	j->arch_ts = le64(b + 32) & JD_FLAG_ARCH_TIMESTAMP;
	for (p = b + hsize; end - p >= JD_REC_HDR;) {
		uint32_t id = le32(p), size = le32(p + 4);
		uint64_t ts = le64(p + 8);
		const uint8_t *r, *rend;

		if (size < JD_REC_HDR || size > (uint64_t)(end - p))
			break; /* cannot be framed: nothing after it can */
		r = p + JD_REC_HDR;
		rend = p + size;
		p = rend;
		if (id == JD_CODE_LOAD && rend - r >= 40) {
			/* pid, tid, vma, code_addr, code_size, code_index, name */
			uint64_t addr = le64(r + 16), size64 = le64(r + 24);
			ssize_t nl = cstr(r + 40, rend);
			struct jd_load ld = { .start = addr, .end = addr + size64, .ts = ts,
					      .name = (const char *)r + 40, .seq = seq++,
					      .line_base = addr };

			if (nl < 0 || !size64 || addr + size64 < addr)
				continue;
			if (pending && pend_addr == addr) {
				ld.line0 = pend0;
				ld.nr_lines = pend_n;
			}
			pending = false;
			if ((err = add_load(j, &ld)))
				return err;
		} else if (id == JD_CODE_MOVE && rend - r >= 48) {
			/* pid, tid, vma, old_code_addr, new_code_addr, code_size */
			uint64_t old = le64(r + 16), nw = le64(r + 24), size64 = le64(r + 32);
			const struct jd_load *src = NULL;

			if (!size64 || nw + size64 < nw)
				continue;
			/* the newest load at old (before the sort: record order) */
			for (size_t i = j->n; i > 0; i--)
				if (j->l[i - 1].start == old) {
					src = &j->l[i - 1];
					break;
				}
			if (!src)
				continue;
			struct jd_load ld = *src;
			ld.start = nw;
			ld.end = nw + size64;
			ld.ts = ts;
			ld.seq = seq++;
			/* the lines keep their addresses in the code as first loaded */
			if ((err = add_load(j, &ld)))
				return err;
		} else if (id == JD_CODE_DEBUG_INFO) {
			if ((err = parse_debug(j, r, rend, &pend_addr, &pend0, &pend_n)))
				return err;
			pending = true;
		}
		/* close, unwinding info, unknown ids: nothing to name with */
	}
	for (size_t i = 0; i < j->n; i++)
		if (j->l[i].nr_lines)
			qsort(j->lines + j->l[i].line0, j->l[i].nr_lines, sizeof(*j->lines), cmp_line);
	if (j->n)
		qsort(j->l, j->n, sizeof(*j->l), cmp_load);
	return 0;
}

int bsym_jitdump_register(struct bsym_ctx *ctx, const void *bytes, size_t len, uint32_t *id_out)
{
	struct bsym_jitdump *j;
	int err;

	if (!ctx || (!bytes && len) || !id_out)
		return -EINVAL;
	*id_out = BSYM_NO_OBJECT;
	if (ctx->nr_jitdumps >= BSYM_NO_OBJECT - 1)
		return -ENOMEM;
	j = calloc(1, sizeof(*j));
	if (!j || !(j->data = malloc(len ? len : 1))) {
		free(j);
		return -ENOMEM;
	}
	if (len)
		memcpy(j->data, bytes, len);
	j->len = len;
	if ((err = parse(j))) {
		bsym_jitdump_free(j);
		return err;
	}
	if (ctx->nr_jitdumps == ctx->cap_jitdumps) {
		size_t nc = ctx->cap_jitdumps ? ctx->cap_jitdumps * 2 : 4;
		struct bsym_jitdump **n = realloc(ctx->jitdumps, nc * sizeof(*n));
		if (!n) {
			bsym_jitdump_free(j);
			return -ENOMEM;
		}
		ctx->jitdumps = n;
		ctx->cap_jitdumps = nc;
	}
	*id_out = (uint32_t)ctx->nr_jitdumps;
	ctx->jitdumps[ctx->nr_jitdumps++] = j;
	return 0;
}

void bsym_jitdump_counts(const struct bsym_ctx *ctx, uint32_t id, size_t *loads, size_t *lines)
{
	*loads = *lines = 0;
	if (ctx && id < ctx->nr_jitdumps) {
		*loads = ctx->jitdumps[id]->n;
		*lines = ctx->jitdumps[id]->nr_lines;
	}
}

/* later in time, or in the file on equal (or incomparable) times */
static bool newer(const struct jd_load *a, const struct jd_load *b, bool by_time)
{
	if (by_time && a->ts != b->ts)
		return a->ts > b->ts;
	return a->seq > b->seq;
}

/* SPEC.md 6.16 rule 1: the load that names addr for [t0, t1), NULL with
 * *ambiguous when loads of other names may have held it. */
static const struct jd_load *decide(const struct bsym_jitdump *j, uint64_t addr, uint64_t t0,
				    uint64_t t1, bool *ambiguous)
{
	bool timed = t1 && !j->arch_ts;
	const struct jd_load *n = NULL, *b = NULL;
	size_t lo = 0, hi = j->n, i, k;

	*ambiguous = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->l[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* n: the newest candidate loaded before t1; b: the newest at or before t0 */
	for (i = lo, k = 0; i > 0 && k < SCAN_BACK; i--, k++) {
		const struct jd_load *e = &j->l[i - 1];
		if (addr - e->start >= j->max_len)
			break;
		if (addr >= e->end || (timed && e->ts >= t1))
			continue;
		if (!n || newer(e, n, timed))
			n = e;
		if (timed && e->ts <= t0 && (!b || newer(e, b, true)))
			b = e;
	}
	bool cut = i > 0 && k == SCAN_BACK && addr - j->l[i - 1].start < j->max_len;
	if (!n)
		return NULL;
	if (timed && n->ts <= t0 && !cut)
		return n;
	/* every candidate that may have held addr in the window has n's name */
	for (i = lo, k = 0; i > 0 && k < SCAN_BACK; i--, k++) {
		const struct jd_load *e = &j->l[i - 1];
		if (addr - e->start >= j->max_len)
			break;
		if (addr >= e->end || (timed && e->ts >= t1))
			continue;
		if (timed && b && e != b && !newer(e, b, true))
			continue; /* replaced by b before the window */
		if (strcmp(e->name, n->name)) {
			*ambiguous = true;
			return NULL;
		}
	}
	if (cut) {
		*ambiguous = true;
		return NULL;
	}
	return n;
}

int bsym_symbolize_jitdump(struct bsym_ctx *ctx, uint32_t id, uint64_t addr, uint64_t t0,
			   uint64_t t1, const struct bsym_result **out)
{
	struct bsym_jitdump *j;
	struct jd_cached *c, *head;
	const struct jd_load *ld;
	const struct bsym_result *r;
	bool amb;

	if (!ctx || !out)
		return -EINVAL;
	*out = NULL;
	if (id >= ctx->nr_jitdumps)
		return -EINVAL;
	j = ctx->jitdumps[id];
	head = bsym_map_get(&j->cache, addr);
	for (c = head; c; c = c->next)
		if (c->t0 == t0 && c->t1 == t1) {
			*out = c->res;
			return 0;
		}
	ld = decide(j, addr, t0, t1, &amb);
	if (!ld) {
		r = bsym_result_reason(amb ? BSYM_R_JIT_AMBIGUOUS : BSYM_R_JIT);
	} else {
		struct bsym_result *nr = bsym_result_new(ctx, 1);
		if (!nr)
			return -ENOMEM;
		struct bsym_frame *f = (struct bsym_frame *)nr->frames;
		f->raw_name = ld->name;
		f->name = bsym_display_name(ctx, ld->name);
		f->offset = addr - ld->start;
		f->kind = BSYM_FRAME_JIT;
		/* the nearest line at or below addr, in the load's own code */
		uint64_t rel = addr - ld->start + ld->line_base;
		const struct jd_line *ln = ld->nr_lines ? j->lines + ld->line0 : NULL;
		size_t lo = 0, hi = ld->nr_lines;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (ln[mid].addr <= rel)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo) {
			f->file = ln[lo - 1].file;
			f->line = ln[lo - 1].line;
		}
		r = nr;
	}
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct jd_cached){ t0, t1, r, head, j->all };
	if (bsym_map_put(&j->cache, addr, c)) {
		free(c);
		return -ENOMEM;
	}
	j->all = c;
	*out = r;
	return 0;
}
