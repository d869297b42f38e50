/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read.c - parse and validate a .bprof file (SPEC.md).
 *
 * Every byte is hostile.  Fields are read with little-endian load helpers
 * from a cursor that knows how many bytes remain in the current section;
 * every count is checked against those bytes (count * smallest entry)
 * before anything is allocated, so memory stays proportional to the
 * decompressed size, which is itself capped.  Errors name the section and
 * the offset in the decompressed content where parsing stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "internal.h"

#define ZSTD_FRAME_MAGIC 0xFD2FB528u
#define ZSTD_FHD_CHECKSUM (1u << 2)

struct cur {
	const uint8_t *b;   /* section payload */
	uint64_t len, pos;
	uint64_t base;      /* content offset of b[0] */
	const char *sect;   /* section name for messages */
	bool strict;        /* file minor <= ours: undefined bits/bytes are errors */
	unsigned minor;     /* the file's minor version */
	struct bprof_error *err;
};

__attribute__((format(printf, 3, 4))) static int cerr(struct cur *c, int code, const char *fmt,
						       ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bprof_set_error(c->err, code, 0, "%s section at offset %llu: %s", c->sect,
			       (unsigned long long)(c->base + c->pos), msg);
}

static uint64_t rem(const struct cur *c)
{
	return c->len - c->pos;
}

static int need(struct cur *c, uint64_t n, const char *what)
{
	if (rem(c) < n)
		return cerr(c, BPROF_E_TRUNCATED, "%s needs %llu bytes but %llu remain", what,
			    (unsigned long long)n, (unsigned long long)rem(c));
	return 0;
}

static uint32_t g32(struct cur *c)
{
	uint32_t v = bprof_le32(c->b + c->pos);

	c->pos += 4;
	return v;
}

static uint64_t g64(struct cur *c)
{
	uint64_t v = bprof_le64(c->b + c->pos);

	c->pos += 8;
	return v;
}

/* A table's entry count: refused unless count * min_entry bytes remain. */
static int get_count(struct cur *c, uint64_t *out, uint64_t min_entry, const char *what)
{
	uint64_t n;
	int rc = need(c, 8, "entry count");

	if (rc)
		return rc;
	n = g64(c);
	if (n > rem(c) / min_entry)
		return cerr(c, BPROF_E_TRUNCATED,
			    "claims %llu %s of at least %llu bytes but %llu bytes remain",
			    (unsigned long long)n, what, (unsigned long long)min_entry,
			    (unsigned long long)rem(c));
	*out = n;
	return 0;
}

/* Length-prefixed string, NUL-free; returned NUL-terminated and malloc'ed. */
static int get_str(struct cur *c, char **out, const char *what)
{
	uint32_t n;
	int rc = need(c, 4, what);

	if (rc)
		return rc;
	n = g32(c);
	if (n > rem(c))
		return cerr(c, BPROF_E_TRUNCATED, "%s claims %u bytes but %llu remain", what, n,
			    (unsigned long long)rem(c));
	if (memchr(c->b + c->pos, '\0', n))
		return cerr(c, BPROF_E_CORRUPT, "%s contains a NUL byte", what);
	*out = malloc((size_t)n + 1);
	if (!*out)
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "%s", what);
	memcpy(*out, c->b + c->pos, n);
	(*out)[n] = '\0';
	c->pos += n;
	return 0;
}

static int get_build_id(struct cur *c, uint32_t len, uint8_t *dst, const char *what)
{
	int rc;

	if (len > BPROF_BUILD_ID_MAX)
		return cerr(c, BPROF_E_CORRUPT, "%s build-id length %u exceeds %d", what, len,
			    BPROF_BUILD_ID_MAX);
	rc = need(c, len, "build-id");
	if (rc)
		return rc;
	memcpy(dst, c->b + c->pos, len);
	c->pos += len;
	return 0;
}

/* comm: 16 bytes holding a NUL; in strict mode the bytes after it are zero. */
static int get_comm(struct cur *c, char *dst, const char *what)
{
	const uint8_t *p = c->b + c->pos;
	const uint8_t *nul = memchr(p, '\0', BPROF_COMM_LEN);

	if (!nul)
		return cerr(c, BPROF_E_CORRUPT, "%s comm is not NUL-terminated", what);
	if (c->strict)
		for (const uint8_t *q = nul; q < p + BPROF_COMM_LEN; q++)
			if (*q)
				return cerr(c, BPROF_E_CORRUPT, "%s comm padding is not zero", what);
	memcpy(dst, p, BPROF_COMM_LEN);
	c->pos += BPROF_COMM_LEN;
	return 0;
}

static int get_uleb(struct cur *c, uint64_t *out, const char *what)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		uint8_t byte;

		if (rem(c) < 1)
			return cerr(c, BPROF_E_TRUNCATED, "%s: varint runs past the section", what);
		byte = c->b[c->pos];
		if (shift == 63 && (byte & 0x7e))
			return cerr(c, BPROF_E_CORRUPT, "%s: varint overflows 64 bits", what);
		c->pos++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return cerr(c, BPROF_E_CORRUPT, "%s: varint longer than 10 bytes", what);
}

/* ---- sections ---------------------------------------------------------- */

static int parse_meta(struct cur *c, struct bprof_recording *r)
{
	struct bprof_meta *m = &r->meta;
	int rc = need(c, 40, "fixed fields");

	if (rc)
		return rc;
	m->start_time_ns = g64(c);
	m->duration_ns = g64(c);
	m->sample_freq = g64(c);
	m->sample_period = g64(c);
	m->ncpus = g32(c);
	m->flags = g32(c);
	if (c->strict && (m->flags & ~BPROF_META_ALL_FLAGS)) {
		c->pos -= 4;
		return cerr(c, BPROF_E_CORRUPT, "flags 0x%x has undefined bits", m->flags);
	}
	if ((rc = get_str(c, &m->hostname, "hostname")) ||
	    (rc = get_str(c, &m->kernel_release, "kernel_release")) ||
	    (rc = get_str(c, &m->arch, "arch")) ||
	    (rc = get_str(c, &m->recorder_version, "recorder_version")) ||
	    (rc = get_str(c, &m->event, "event")) || (rc = get_str(c, &m->options, "options")))
		return rc;
	return 0;
}

static int parse_losses(struct cur *c, struct bprof_recording *r)
{
	struct bprof_losses *l = &r->losses;
	int rc = need(c, BPROF_LOSSES_V10_LEN, "loss counters");

	if (rc)
		return rc;
	l->user_stack_enomem = g64(c);
	l->user_stack_eexist = g64(c);
	l->kernel_stack_enomem = g64(c);
	l->kernel_stack_eexist = g64(c);
	l->counts_full = g64(c);
	l->manifest_lost = g64(c);
	l->events_lost = g64(c);
	l->other = g64(c);
	/* 1.1 appended a ninth counter; a 64-byte payload (1.0) is whole */
	if (rem(c)) {
		if ((rc = need(c, 8, "loss counter user_stack_before_table")))
			return rc;
		l->user_stack_before_table = g64(c);
	}
	return 0;
}

static int parse_stacks(struct cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = get_count(c, &n, BPROF_STACK_FIXED_LEN, "stacks");

	if (rc)
		return rc;
	if (n && !(r->stacks = calloc(n, sizeof(*r->stacks))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "stacks table");
	r->nr_stacks = n;
	/* Every stack's ips go into one block, sized by a first pass over the
	 * headers: one allocation per file instead of one per stack (a report
	 * merging many files spent a fifth of its time in malloc and free).
	 * The pass only sums; the loop below checks every header as before. */
	uint64_t total = 0;
	for (uint64_t i = 0, at = c->pos; i < n && c->len - at >= BPROF_STACK_FIXED_LEN; i++) {
		uint32_t nr = bprof_le32(c->b + at + 4);

		at += BPROF_STACK_FIXED_LEN;
		if (nr > BPROF_MAX_STACK_DEPTH || (uint64_t)nr * 8 > c->len - at)
			break;
		at += (uint64_t)nr * 8;
		total += nr;
	}
	if (total && !(r->ips_block = malloc(total * 8)))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "stack ips");
	uint64_t used = 0; /* ips handed out of the block */
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_stack *s = &r->stacks[i];

		if ((rc = need(c, BPROF_STACK_FIXED_LEN, "stack header")))
			return rc;
		s->id = g32(c);
		s->nr_ips = g32(c);
		if (s->id > INT32_MAX)
			return cerr(c, BPROF_E_CORRUPT, "stack %llu: id %u exceeds INT32_MAX",
				    (unsigned long long)i, s->id);
		if (i > 0 && s->id <= r->stacks[i - 1].id)
			return cerr(c, BPROF_E_CORRUPT,
				    "stack %llu: id %u is duplicated or out of order (previous %u)",
				    (unsigned long long)i, s->id, r->stacks[i - 1].id);
		if ((uint64_t)s->nr_ips * 8 > rem(c) || s->nr_ips > BPROF_MAX_STACK_DEPTH) {
			uint32_t nr = s->nr_ips;

			s->nr_ips = 0;
			if (nr > BPROF_MAX_STACK_DEPTH && (uint64_t)nr * 8 <= rem(c))
				return cerr(c, BPROF_E_LIMIT, "stack %u has %u ips (limit %u)",
					    s->id, nr, BPROF_MAX_STACK_DEPTH);
			return cerr(c, BPROF_E_TRUNCATED, "stack %u claims %u ips but %llu bytes remain",
				    s->id, nr, (unsigned long long)rem(c));
		}
		if (s->nr_ips) {
			if (total - used < s->nr_ips) /* the first pass saw these bytes */
				return cerr(c, BPROF_E_CORRUPT, "stack %u: ips beyond the table", s->id);
			s->ips = r->ips_block + used;
			used += s->nr_ips;
			for (uint32_t j = 0; j < s->nr_ips; j++)
				s->ips[j] = g64(c);
		}
	}
	return 0;
}

static int parse_counts(struct cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = get_count(c, &n, BPROF_COUNT_ENTRY_LEN, "counts");

	if (rc)
		return rc;
	if (n && !(r->counts = calloc(n, sizeof(*r->counts))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "counts table");
	r->nr_counts = n;
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_count *e = &r->counts[i];
		uint64_t at = c->pos;
		uint32_t reserved;

		e->pid = g32(c);
		e->tid = g32(c);
		e->exec_id = g32(c);
		e->user_stack_id = (int32_t)g32(c);
		e->kernel_stack_id = (int32_t)g32(c);
		reserved = g32(c); /* map_gen from 1.3 */
		e->kernel_ip = g64(c);
		e->count = g64(c);
		if ((rc = get_comm(c, e->comm, "count")))
			return rc;
		if (c->minor >= 3)
			e->map_gen = reserved;
		else if (c->strict && reserved) {
			c->pos = at + 20;
			return cerr(c, BPROF_E_CORRUPT, "count %llu: reserved field is 0x%x",
				    (unsigned long long)i, reserved);
		}
		if (e->user_stack_id >= 0 && !bprof_recording_stack(r, e->user_stack_id)) {
			c->pos = at + 12;
			return cerr(c, BPROF_E_CORRUPT, "count %llu: user stack id %d does not exist",
				    (unsigned long long)i, e->user_stack_id);
		}
		if (e->kernel_stack_id >= 0 && !bprof_recording_stack(r, e->kernel_stack_id)) {
			c->pos = at + 16;
			return cerr(c, BPROF_E_CORRUPT,
				    "count %llu: kernel stack id %d does not exist",
				    (unsigned long long)i, e->kernel_stack_id);
		}
	}
	return 0;
}

/* OFFCPU (1.5, SPEC.md 6.13): rows appended to the counts, with their
 * state and blocked time. */
static int parse_offcpu(struct cur *c, struct bprof_recording *r)
{
	uint64_t n, base = r->nr_counts;
	struct bprof_count *v;
	uint32_t reserved;
	int rc;

	if (c->len - c->pos < BPROF_OFFCPU_FIXED_LEN - 8)
		return cerr(c, BPROF_E_TRUNCATED, "%llu bytes, the header takes %d",
			    (unsigned long long)(c->len - c->pos), BPROF_OFFCPU_FIXED_LEN - 8);
	r->offcpu.mode = g32(c);
	reserved = g32(c);
	r->offcpu.period_ns = g64(c);
	r->offcpu.blocks = g64(c);
	r->offcpu.blocks_short = g64(c);
	r->offcpu.blocked_ns = g64(c);
	r->offcpu.walks = g64(c);
	r->offcpu.no_user_stack = g64(c);
	r->offcpu.lost = g64(c);
	if (r->offcpu.mode == BPROF_OFFCPU_NONE ||
	    (c->strict && r->offcpu.mode > BPROF_OFFCPU_WALL)) {
		c->pos = 0;
		return cerr(c, BPROF_E_CORRUPT, "mode %u", r->offcpu.mode);
	}
	if (r->offcpu.mode > BPROF_OFFCPU_WALL)
		r->offcpu.mode = BPROF_OFFCPU_WALL; /* a newer mode: at least as much */
	if (c->strict && reserved) {
		c->pos = 4;
		return cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	}
	if (!r->offcpu.period_ns) {
		c->pos = 8;
		return cerr(c, BPROF_E_CORRUPT, "period of 0 ns");
	}
	if ((rc = get_count(c, &n, BPROF_OFFCPU_ENTRY_LEN, "off-CPU counts")))
		return rc;
	if (!n)
		return 0;
	v = realloc(r->counts, (base + n) * sizeof(*r->counts));
	if (!v)
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "off-CPU counts table");
	r->counts = v;
	memset(v + base, 0, n * sizeof(*v));
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_count *e = &v[base + i];
		uint64_t at = c->pos;

		r->nr_counts = base + i + 1;
		e->pid = g32(c);
		e->tid = g32(c);
		e->exec_id = g32(c);
		e->user_stack_id = (int32_t)g32(c);
		e->kernel_stack_id = (int32_t)g32(c);
		e->map_gen = g32(c);
		e->kernel_ip = g64(c);
		e->count = g64(c);
		if ((rc = get_comm(c, e->comm, "off-CPU count")))
			return rc;
		e->state = g32(c);
		reserved = g32(c);
		e->blocked_ns = g64(c);
		if (e->state == BPROF_STATE_ON_CPU || (c->strict && e->state > BPROF_STATE_MAX)) {
			c->pos = at + 56;
			return cerr(c, BPROF_E_CORRUPT, "off-CPU count %llu: thread state %u",
				    (unsigned long long)i, e->state);
		}
		if (e->state > BPROF_STATE_MAX)
			e->state = BPROF_STATE_T; /* a newer state: "other" */
		if (c->strict && reserved) {
			c->pos = at + 60;
			return cerr(c, BPROF_E_CORRUPT, "off-CPU count %llu: reserved field is 0x%x",
				    (unsigned long long)i, reserved);
		}
		if (e->user_stack_id >= 0 && !bprof_recording_stack(r, e->user_stack_id)) {
			c->pos = at + 12;
			return cerr(c, BPROF_E_CORRUPT, "off-CPU count %llu: user stack id %d does not exist",
				    (unsigned long long)i, e->user_stack_id);
		}
		if (e->kernel_stack_id >= 0 && !bprof_recording_stack(r, e->kernel_stack_id)) {
			c->pos = at + 16;
			return cerr(c, BPROF_E_CORRUPT,
				    "off-CPU count %llu: kernel stack id %d does not exist",
				    (unsigned long long)i, e->kernel_stack_id);
		}
	}
	return 0;
}

static int parse_objects(struct cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = get_count(c, &n, BPROF_OBJECT_MIN_LEN, "objects");

	if (rc)
		return rc;
	if (n >= BPROF_NO_OBJECT)
		return cerr(c, BPROF_E_LIMIT, "%llu objects", (unsigned long long)n);
	if (n && !(r->objects = calloc(n, sizeof(*r->objects))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "objects table");
	r->nr_objects = n;
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_object *o = &r->objects[i];

		if ((rc = need(c, BPROF_OBJECT_FIXED_LEN, "object")))
			return rc;
		o->flags = g32(c);
		o->build_id_len = g32(c);
		o->size = g64(c);
		o->mtime_ns = g64(c);
		o->dev = g64(c);
		o->inode = g64(c);
		o->fallback_hash = g64(c);
		if (c->strict && (o->flags & ~BPROF_OBJ_ALL_FLAGS))
			return cerr(c, BPROF_E_CORRUPT, "object %llu: flags 0x%x has undefined bits",
				    (unsigned long long)i, o->flags);
		if ((rc = get_build_id(c, o->build_id_len, o->build_id, "object")))
			return rc;
		if ((o->build_id_len > 0) != !!(o->flags & BPROF_OBJ_HAS_BUILD_ID))
			return cerr(c, BPROF_E_CORRUPT,
				    "object %llu: build-id length %u contradicts flags 0x%x",
				    (unsigned long long)i, o->build_id_len, o->flags);
		if ((rc = get_str(c, &o->path, "object path")))
			return rc;
	}
	return 0;
}

static int parse_mappings(struct cur *c, struct bprof_recording *r, struct bprof_process *p)
{
	int rc;

	if ((uint64_t)p->nr_mappings * BPROF_MAPPING_LEN > rem(c)) {
		uint32_t nr = p->nr_mappings;

		p->nr_mappings = 0;
		return cerr(c, BPROF_E_TRUNCATED, "process %u claims %u mappings but %llu bytes remain",
			    p->pid, nr, (unsigned long long)rem(c));
	}
	if (!p->nr_mappings)
		return 0;
	p->mappings = calloc(p->nr_mappings, sizeof(*p->mappings));
	if (!p->mappings)
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "mappings");
	for (uint32_t j = 0; j < p->nr_mappings; j++) {
		struct bprof_mapping *m = &p->mappings[j];

		if ((rc = need(c, BPROF_MAPPING_LEN, "mapping")))
			return rc;
		m->start = g64(c);
		m->end = g64(c);
		m->file_offset = g64(c);
		m->object_index = g32(c);
		m->flags = g32(c);
		c->pos -= BPROF_MAPPING_LEN; /* report errors at the entry */
		if (m->start >= m->end)
			return cerr(c, BPROF_E_CORRUPT,
				    "process %u mapping %u: start 0x%llx >= end 0x%llx", p->pid, j,
				    (unsigned long long)m->start, (unsigned long long)m->end);
		if (j > 0 && m->start < p->mappings[j - 1].end)
			return cerr(c, BPROF_E_CORRUPT,
				    "process %u mapping %u: start 0x%llx overlaps or precedes the previous mapping (end 0x%llx)",
				    p->pid, j, (unsigned long long)m->start,
				    (unsigned long long)p->mappings[j - 1].end);
		if (m->object_index != BPROF_NO_OBJECT && m->object_index >= r->nr_objects)
			return cerr(c, BPROF_E_CORRUPT,
				    "process %u mapping %u: object index %u but %llu objects",
				    p->pid, j, m->object_index, (unsigned long long)r->nr_objects);
		if (c->strict && (m->flags & ~BPROF_MAP_ALL_FLAGS))
			return cerr(c, BPROF_E_CORRUPT,
				    "process %u mapping %u: flags 0x%x has undefined bits", p->pid, j,
				    m->flags);
		c->pos += BPROF_MAPPING_LEN;
	}
	return 0;
}

static int parse_processes(struct cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = get_count(c, &n, BPROF_PROCESS_FIXED_LEN, "processes");

	if (rc)
		return rc;
	if (n && !(r->processes = calloc(n, sizeof(*r->processes))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "processes table");
	r->nr_processes = n;
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_process *p = &r->processes[i];
		uint64_t pm_len;

		if ((rc = need(c, BPROF_PROCESS_FIXED_LEN, "process")))
			return rc;
		p->pid = g32(c);
		p->ns_pid = g32(c);
		p->exec_id = g32(c);
		p->nr_mappings = g32(c);
		p->snapshot_ns = g64(c);
		if ((rc = get_comm(c, p->comm, "process")))
			return rc;
		pm_len = g64(c);
		if (i > 0 && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return cerr(c, BPROF_E_CORRUPT,
				    "process %llu: (pid %u, exec_id %u) duplicated or out of order",
				    (unsigned long long)i, p->pid, p->exec_id);
		if ((rc = parse_mappings(c, r, p)))
			return rc;
		if (pm_len > rem(c))
			return cerr(c, BPROF_E_TRUNCATED,
				    "process %u perf map claims %llu bytes but %llu remain", p->pid,
				    (unsigned long long)pm_len, (unsigned long long)rem(c));
		if (pm_len) {
			p->perf_map = malloc((size_t)pm_len + 1);
			if (!p->perf_map)
				return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "perf map");
			memcpy(p->perf_map, c->b + c->pos, (size_t)pm_len);
			p->perf_map[pm_len] = '\0';
			p->perf_map_len = pm_len;
			c->pos += pm_len;
		}
	}
	return 0;
}

static int parse_kernel(struct cur *c, struct bprof_recording *r)
{
	struct bprof_kernel *k = &r->kernel;
	uint64_t n;
	int rc = need(c, 16, "fixed fields");

	if (rc)
		return rc;
	k->flags = g32(c);
	k->build_id_len = g32(c);
	k->stext = g64(c);
	if (c->strict && (k->flags & ~BPROF_KERNEL_ALL_FLAGS))
		return cerr(c, BPROF_E_CORRUPT, "flags 0x%x has undefined bits", k->flags);
	if ((rc = get_build_id(c, k->build_id_len, k->build_id, "kernel")))
		return rc;
	if ((rc = get_str(c, &k->release, "release")))
		return rc;
	if ((rc = get_count(c, &n, BPROF_MODULE_MIN_LEN, "modules")))
		return rc;
	if (n > BPROF_MAX_MODULES)
		return cerr(c, BPROF_E_LIMIT, "%llu modules (limit %u)", (unsigned long long)n,
			    BPROF_MAX_MODULES);
	if (n && !(k->modules = calloc(n, sizeof(*k->modules))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "modules table");
	k->nr_modules = (uint32_t)n;
	for (uint32_t i = 0; i < k->nr_modules; i++) {
		struct bprof_module *m = &k->modules[i];

		if ((rc = need(c, 20, "module")))
			return rc;
		m->base = g64(c);
		m->size = g64(c);
		m->build_id_len = g32(c);
		if (m->base + m->size < m->base)
			return cerr(c, BPROF_E_CORRUPT, "module %u: base + size overflows", i);
		if ((rc = get_build_id(c, m->build_id_len, m->build_id, "module")))
			return rc;
		if ((rc = get_str(c, &m->name, "module name")))
			return rc;
	}
	return 0;
}

static int parse_ksyms(struct cur *c, struct bprof_recording *r)
{
	struct bprof_kernel *k = &r->kernel;
	uint64_t n, addr = 0, v;
	int rc = get_count(c, &n, BPROF_KSYM_MIN_LEN, "ksyms");

	if (rc)
		return rc;
	if (n > BPROF_MAX_KSYMS)
		return cerr(c, BPROF_E_LIMIT, "%llu ksyms (limit %u)", (unsigned long long)n,
			    BPROF_MAX_KSYMS);
	if (n && !(k->ksyms = calloc(n, sizeof(*k->ksyms))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "ksyms table");
	k->nr_ksyms = (uint32_t)n;
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		if ((rc = get_uleb(c, &v, "ksym address delta")))
			return rc;
		if (addr + v < addr)
			return cerr(c, BPROF_E_CORRUPT, "ksym %u: address overflows", i);
		addr += v;
		k->ksyms[i].addr = addr;
	}
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		if ((rc = get_uleb(c, &v, "ksym module")))
			return rc;
		if (v > k->nr_modules)
			return cerr(c, BPROF_E_CORRUPT, "ksym %u: module %llu but %u modules", i,
				    (unsigned long long)v, k->nr_modules);
		k->ksyms[i].module_index = v ? (uint32_t)(v - 1) : BPROF_NO_OBJECT;
	}
	/* The names lie back to back, each NUL-terminated: they are copied
	 * in one block (ksym_names), one allocation instead of one per name
	 * (a report merging many files spent most of its malloc time here). */
	const uint8_t *first = c->b + c->pos;
	size_t span = 0;

	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		const uint8_t *nul = memchr(first + span, '\0', (size_t)rem(c) - span);

		if (!nul) {
			c->pos += span;
			return cerr(c, BPROF_E_TRUNCATED, "ksym %u: name not terminated", i);
		}
		span = (size_t)(nul - first) + 1;
	}
	if (span && !(r->ksym_names = malloc(span)))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "ksym names");
	if (span)
		memcpy(r->ksym_names, first, span);
	size_t at = 0;
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		k->ksyms[i].name = r->ksym_names + at;
		at += strlen(k->ksyms[i].name) + 1;
	}
	c->pos += span;
	return 0;
}

static int parse_unwind(struct cur *c, struct bprof_recording *r)
{
	struct bprof_unwind *u = &r->unwind;
	uint64_t n, si = 0;
	int rc = need(c, BPROF_UNWIND_FIXED_LEN, "unwind header");

	if (rc)
		return rc;
	u->mode = g32(c);
	u->flags = g32(c);
	n = g64(c);
	if (c->strict && (u->mode < BPROF_UNWIND_FP || u->mode > BPROF_UNWIND_CFI))
		return cerr(c, BPROF_E_CORRUPT, "unwind mode %u is not 1 (fp), 2 (auto) or 3 (cfi)",
			    u->mode);
	if (c->strict && (u->flags & ~BPROF_UNWIND_WALKED))
		return cerr(c, BPROF_E_CORRUPT, "reserved unwind flags 0x%x", u->flags);
	if (n > BPROF_UNWIND_MAX_COUNTERS)
		return cerr(c, BPROF_E_LIMIT, "%llu unwind counters (limit %u)",
			    (unsigned long long)n, BPROF_UNWIND_MAX_COUNTERS);
	if ((rc = need(c, n * 8, "unwind counters")))
		return rc;
	/* later versions append counters: keep the ones we know */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = g64(c);

		if (i < BPROF_UNW_NR_COUNTERS)
			u->counters[i] = v;
	}
	if ((rc = get_count(c, &n, BPROF_STACK_FLAGS_ENTRY_LEN, "stack flags")))
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t id = g32(c), flags = g32(c);

		if (c->strict && (flags & ~BPROF_USTACK_FLAGS_ALL))
			return cerr(c, BPROF_E_CORRUPT, "stack %u: reserved stack flags 0x%x", id,
				    flags);
		if (id < BPROF_STACK_ID_UNWOUND)
			return cerr(c, BPROF_E_CORRUPT,
				    "stack flags for stack %u, which the unwinder did not walk (id < 2^30)",
				    id);
		/* entries and stacks are both sorted by id: one merge pass */
		while (si < r->nr_stacks && r->stacks[si].id < id)
			si++;
		if (si == r->nr_stacks || r->stacks[si].id != id)
			return cerr(c, BPROF_E_CORRUPT,
				    "stack flags entry %llu: stack %u is not in the stacks section, or entries are out of order",
				    (unsigned long long)i, id);
		r->stacks[si++].flags = flags;
	}
	/* 1.4: the objects whose tables did not fit; earlier files end here */
	if (c->minor < 4)
		return 0;
	if ((rc = get_count(c, &n, BPROF_UNWIND_MISS_ENTRY_LEN, "unwind misses")))
		return rc;
	if (n > r->nr_objects)
		return cerr(c, BPROF_E_CORRUPT, "%llu unwind misses but %llu objects",
			    (unsigned long long)n, (unsigned long long)r->nr_objects);
	u->misses = calloc(n ? n : 1, sizeof(*u->misses));
	if (!u->misses)
		return cerr(c, BPROF_E_NOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_unwind_miss *m = &u->misses[i];

		m->object_index = g32(c);
		m->flags = g32(c);
		m->rows = g64(c);
		if (m->object_index >= r->nr_objects || (i && m->object_index <= m[-1].object_index))
			return cerr(c, BPROF_E_CORRUPT,
				    "unwind miss %llu: object %u missing, duplicated or out of order",
				    (unsigned long long)i, m->object_index);
		if (c->strict && (m->flags & ~BPROF_UNWIND_MISS_SAMPLED))
			return cerr(c, BPROF_E_CORRUPT, "unwind miss %llu: reserved flags 0x%x",
				    (unsigned long long)i, m->flags);
		if (!m->rows)
			return cerr(c, BPROF_E_CORRUPT, "unwind miss %llu: 0 rows",
				    (unsigned long long)i);
		u->nr_misses = (uint32_t)i + 1;
	}
	return 0;
}

static int parse_images(struct cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = get_count(c, &n, BPROF_IMAGE_FIXED_LEN, "images");

	if (rc)
		return rc;
	if (n && !(r->images = calloc(n, sizeof(*r->images))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "images table");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_image *im = &r->images[i];
		uint32_t obj, reserved;
		uint64_t len;

		if ((rc = need(c, BPROF_IMAGE_FIXED_LEN, "image header")))
			return rc;
		obj = g32(c);
		reserved = g32(c);
		len = g64(c);
		if (obj >= r->nr_objects)
			return cerr(c, BPROF_E_CORRUPT, "image %llu: object %u but %llu objects",
				    (unsigned long long)i, obj, (unsigned long long)r->nr_objects);
		if (i && obj <= r->images[i - 1].object_index)
			return cerr(c, BPROF_E_CORRUPT,
				    "image %llu: object %u is duplicated or out of order",
				    (unsigned long long)i, obj);
		if (c->strict && reserved)
			return cerr(c, BPROF_E_CORRUPT, "image %llu: reserved field 0x%x",
				    (unsigned long long)i, reserved);
		if (!len)
			return cerr(c, BPROF_E_CORRUPT, "image %llu is empty", (unsigned long long)i);
		if (len > BPROF_IMAGE_MAX)
			return cerr(c, BPROF_E_LIMIT, "image %llu: %llu bytes (limit %u)",
				    (unsigned long long)i, (unsigned long long)len, BPROF_IMAGE_MAX);
		if ((rc = need(c, len, "image bytes")))
			return rc;
		if (!(im->data = malloc(len)))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "image");
		memcpy(im->data, c->b + c->pos, len);
		c->pos += len;
		im->object_index = obj;
		im->len = len;
		r->nr_images = i + 1;
	}
	return 0;
}

/* What the recorder was allowed to read (1.2). */
static int parse_access(struct cur *c, struct bprof_recording *r)
{
	struct bprof_access *a = &r->access;
	uint64_t n;
	int rc = need(c, BPROF_ACCESS_FIXED_LEN, "access header");

	if (rc)
		return rc;
	a->euid = g32(c);
	a->flags = g32(c);
	a->capabilities = g64(c); /* every bit may be a capability of a later kernel */
	n = g64(c);
	if (c->strict && (a->flags & ~BPROF_ACCESS_FLAGS_ALL)) {
		c->pos -= 20;
		return cerr(c, BPROF_E_CORRUPT, "reserved access flags 0x%x", a->flags);
	}
	if (n > BPROF_ACCESS_MAX_COUNTERS) {
		c->pos -= 8;
		return cerr(c, BPROF_E_LIMIT, "%llu access counters (limit %u)",
			    (unsigned long long)n, BPROF_ACCESS_MAX_COUNTERS);
	}
	if ((rc = need(c, n * 8, "access counters")))
		return rc;
	/* later versions append counters: keep the ones we know */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = g64(c);

		if (i < BPROF_ACC_NR_COUNTERS)
			a->counters[i] = v;
	}
	a->present = 1;
	return 0;
}

/* Mapping generations (1.3): entries for some processes, by index. */
static int parse_generations(struct cur *c, struct bprof_recording *r)
{
	uint64_t n, prev = 0;
	int rc = get_count(c, &n, BPROF_GENS_FIXED_LEN, "generation entries");

	if (rc)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t idx, nb, nh, ng;
		uint64_t reserved, at = c->pos;
		struct bprof_process *p;

		if ((rc = need(c, BPROF_GENS_FIXED_LEN, "generation entry")))
			return rc;
		idx = g32(c);
		nb = g32(c);
		nh = g32(c);
		ng = g32(c);
		reserved = g64(c);
		if (idx >= r->nr_processes || (i && idx <= prev)) {
			c->pos = at;
			return cerr(c, BPROF_E_CORRUPT,
				    "generation entry %llu: process index %u out of range or order",
				    (unsigned long long)i, idx);
		}
		prev = idx;
		p = &r->processes[idx];
		if (nb != p->nr_mappings) {
			c->pos = at + 4;
			return cerr(c, BPROF_E_CORRUPT,
				    "generation entry %llu: %u births for %u mappings",
				    (unsigned long long)i, nb, p->nr_mappings);
		}
		if (c->strict && reserved) {
			c->pos = at + 16;
			return cerr(c, BPROF_E_CORRUPT, "generation entry %llu: reserved field nonzero",
				    (unsigned long long)i);
		}
		if ((rc = need(c, (uint64_t)nb * 4 + (uint64_t)nh * BPROF_HISTORY_LEN +
					  (uint64_t)ng * 4, "generation entry's tables")))
			return rc;
		for (uint32_t j = 0; j < nb; j++)
			p->mappings[j].birth = g32(c);
		if (nh && !(p->history = calloc(nh, sizeof(*p->history))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "history");
		if (ng && !(p->gaps = calloc(ng, sizeof(*p->gaps))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "gaps");
		p->has_gens = 1;
		for (uint32_t j = 0; j < nh; j++) {
			struct bprof_mapping *m = &p->history[j];
			uint32_t res;

			m->start = g64(c);
			m->end = g64(c);
			m->file_offset = g64(c);
			m->object_index = g32(c);
			m->flags = g32(c);
			m->birth = g32(c);
			res = g32(c);
			p->nr_history = j + 1;
			c->pos -= BPROF_HISTORY_LEN; /* report errors at the entry */
			if (m->start >= m->end ||
			    (m->object_index != BPROF_NO_OBJECT && m->object_index >= r->nr_objects))
				return cerr(c, BPROF_E_CORRUPT,
					    "process %u history mapping %u: empty range or object index %u out of range",
					    p->pid, j, m->object_index);
			if (c->strict && ((m->flags & ~BPROF_MAP_ALL_FLAGS) || res))
				return cerr(c, BPROF_E_CORRUPT,
					    "process %u history mapping %u: undefined flags 0x%x or reserved field",
					    p->pid, j, m->flags);
			c->pos += BPROF_HISTORY_LEN;
		}
		for (uint32_t j = 0; j < ng; j++) {
			p->gaps[j] = g32(c);
			p->nr_gaps = j + 1;
			if (!p->gaps[j] || (j && p->gaps[j] <= p->gaps[j - 1])) {
				c->pos -= 4;
				return cerr(c, BPROF_E_CORRUPT,
					    "process %u gap %u: generation %u is 0 or not increasing",
					    p->pid, j, p->gaps[j]);
			}
		}
	}
	return 0;
}

/* SLICES (1.6, SPEC.md 6.14): the time slice of every row read so far,
 * COUNTS' then OFFCPU's (the order the reader appended them in). */
static int parse_slices(struct cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc;

	if (c->len - c->pos < BPROF_SLICES_FIXED_LEN - 8)
		return cerr(c, BPROF_E_TRUNCATED, "%llu bytes, the header takes %d",
			    (unsigned long long)(c->len - c->pos), BPROF_SLICES_FIXED_LEN - 8);
	r->slices.slice_ns = g64(c);
	r->slices.origin_ns = g64(c);
	if (!r->slices.slice_ns) {
		c->pos = 0;
		return cerr(c, BPROF_E_CORRUPT, "slices of 0 ns");
	}
	if ((rc = get_count(c, &n, 4, "slices")))
		return rc;
	if (n != r->nr_counts) {
		c->pos -= 8;
		return cerr(c, BPROF_E_CORRUPT, "%llu slices for %llu count rows",
			    (unsigned long long)n, (unsigned long long)r->nr_counts);
	}
	for (uint64_t i = 0; i < n; i++)
		r->counts[i].slice = g32(c);
	return 0;
}

/* Bytes of a PYTHON code entry: a length checked against the limit and
 * what remains, copied NUL-terminated (bin: may hold NULs). */
static int get_py_bytes(struct cur *c, uint32_t n, uint32_t limit, bool bin, char **out,
			const char *what, uint64_t i)
{
	int rc;

	if (n > limit)
		return cerr(c, BPROF_E_LIMIT, "code %llu: %s of %u bytes (limit %u)",
			    (unsigned long long)i, what, n, limit);
	if ((rc = need(c, n, what)))
		return rc;
	if (!bin && memchr(c->b + c->pos, '\0', n))
		return cerr(c, BPROF_E_CORRUPT, "code %llu: %s contains a NUL byte",
			    (unsigned long long)i, what);
	if (!(*out = malloc((size_t)n + 1)))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "%s", what);
	memcpy(*out, c->b + c->pos, n);
	(*out)[n] = '\0';
	c->pos += n;
	return 0;
}

/* CPython frames' names (1.7, SPEC.md 6.15). */
static int parse_python(struct cur *c, struct bprof_recording *r)
{
	struct bprof_python *py = &r->python;
	uint32_t nc, reserved;
	uint64_t n;
	int rc;

	if ((rc = need(c, 8, "header")))
		return rc;
	nc = g32(c);
	reserved = g32(c);
	if (nc > 256)
		return cerr(c, BPROF_E_LIMIT, "%u counters (limit 256)", nc);
	if (c->strict && reserved)
		return cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	if ((rc = need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	py->present = 1;
	py->nr_counters = nc;
	for (uint32_t i = 0; i < nc; i++)
		py->counters[i] = g64(c);
	if ((rc = get_count(c, &n, BPROF_PY_PROC_LEN, "Python processes")))
		return rc;
	if (n && !(py->procs = calloc(n, sizeof(*py->procs))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "Python processes");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_python_proc *p = &py->procs[i];

		p->pid = g32(c);
		p->exec_id = g32(c);
		p->version = g32(c);
		p->status = g32(c);
		py->nr_procs = i + 1;
		if (c->strict && p->status > BPROF_PY_STATUS_MAX)
			return cerr(c, BPROF_E_CORRUPT, "process %llu: status %u",
				    (unsigned long long)i, p->status);
		if (i && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return cerr(c, BPROF_E_CORRUPT, "process %llu (pid %u) duplicated or out of order",
				    (unsigned long long)i, p->pid);
	}
	if ((rc = get_count(c, &n, BPROF_PY_CODE_FIXED_LEN, "code objects")))
		return rc;
	if (n && !(py->codes = calloc(n, sizeof(*py->codes))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "Python code objects");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_python_code *e = &py->codes[i];
		uint32_t ql, fl;
		char *lt = NULL;

		if ((rc = need(c, BPROF_PY_CODE_FIXED_LEN, "code entry")))
			return rc;
		py->nr_codes = i + 1;
		e->pid = g32(c);
		e->exec_id = g32(c);
		e->code = g64(c);
		e->guard = g32(c);
		e->firstlineno = (int32_t)g32(c);
		e->code_offset = g32(c);
		e->nr_units = g32(c);
		ql = g32(c);
		fl = g32(c);
		e->linetable_len = g32(c);
		reserved = g32(c);
		if (c->strict && reserved)
			return cerr(c, BPROF_E_CORRUPT, "code %llu: reserved field 0x%x",
				    (unsigned long long)i, reserved);
		if (i && bprof_python_code_cmp(e, e - 1) <= 0)
			return cerr(c, BPROF_E_CORRUPT, "code %llu duplicated or out of order",
				    (unsigned long long)i);
		if ((rc = get_py_bytes(c, ql, BPROF_PY_NAME_MAX, false, &e->qualname, "qualname", i)) ||
		    (rc = get_py_bytes(c, fl, BPROF_PY_NAME_MAX, false, &e->filename, "filename", i)) ||
		    (rc = get_py_bytes(c, e->linetable_len, BPROF_PY_LINETABLE_MAX, true, &lt,
				       "line table", i)))
			return rc;
		e->linetable = (uint8_t *)lt;
	}
	return 0;
}

/* V8 frames' names (1.9, SPEC.md 6.17). */
static int parse_v8(struct cur *c, struct bprof_recording *r)
{
	struct bprof_v8 *v = &r->v8;
	uint32_t nc, reserved;
	uint64_t n;
	int rc;

	if ((rc = need(c, 8, "header")))
		return rc;
	nc = g32(c);
	reserved = g32(c);
	if (nc > 256)
		return cerr(c, BPROF_E_LIMIT, "%u counters (limit 256)", nc);
	if (c->strict && reserved)
		return cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	if ((rc = need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	v->present = 1;
	v->nr_counters = nc;
	for (uint32_t i = 0; i < nc; i++)
		v->counters[i] = g64(c);
	if ((rc = get_count(c, &n, BPROF_V8_PROC_LEN, "V8 processes")))
		return rc;
	if (n && !(v->procs = calloc(n, sizeof(*v->procs))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 processes");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_v8_proc *p = &v->procs[i];

		p->pid = g32(c);
		p->exec_id = g32(c);
		p->status = g32(c);
		reserved = g32(c);
		v->nr_procs = i + 1;
		if (c->strict && (p->status > BPROF_V8_STATUS_MAX || reserved))
			return cerr(c, BPROF_E_CORRUPT, "process %llu: status %u, reserved 0x%x",
				    (unsigned long long)i, p->status, reserved);
		if (i && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return cerr(c, BPROF_E_CORRUPT, "process %llu (pid %u) duplicated or out of order",
				    (unsigned long long)i, p->pid);
	}
	if ((rc = get_count(c, &n, BPROF_V8_SFI_FIXED_LEN, "SFIs")))
		return rc;
	if (n && !(v->sfis = calloc(n, sizeof(*v->sfis))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 SFIs");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_v8_sfi *e = &v->sfis[i];
		uint32_t nl, sl, np;

		if ((rc = need(c, BPROF_V8_SFI_FIXED_LEN, "SFI entry")))
			return rc;
		v->nr_sfis = i + 1;
		e->pid = g32(c);
		e->exec_id = g32(c);
		e->sfi = g64(c);
		e->guard = g32(c);
		e->line = (int32_t)g32(c);
		nl = g32(c);
		sl = g32(c);
		e->nr_pos = 0;
		np = g32(c);
		reserved = g32(c);
		if (c->strict && reserved)
			return cerr(c, BPROF_E_CORRUPT, "SFI %llu: reserved field 0x%x",
				    (unsigned long long)i, reserved);
		if (np > BPROF_V8_POS_MAX)
			return cerr(c, BPROF_E_LIMIT, "SFI %llu: %u position rows (limit %u)",
				    (unsigned long long)i, np, BPROF_V8_POS_MAX);
		if (i && bprof_v8_sfi_cmp(e, e - 1) <= 0)
			return cerr(c, BPROF_E_CORRUPT, "SFI %llu duplicated or out of order",
				    (unsigned long long)i);
		if (e->line < 0)
			return cerr(c, BPROF_E_CORRUPT, "SFI %llu: line %d", (unsigned long long)i, e->line);
		if ((rc = get_py_bytes(c, nl, BPROF_V8_NAME_MAX, false, &e->name, "function name", i)) ||
		    (rc = get_py_bytes(c, sl, BPROF_V8_NAME_MAX, false, &e->script, "script name", i)))
			return rc;
		/* each row is at least 8 + 12 bytes: checked before allocating */
		if ((rc = need(c, (uint64_t)np * 20, "position rows")))
			return rc;
		if (np && !(e->pos = calloc(np, sizeof(*e->pos))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 position rows");
		for (uint32_t j = 0; j < np; j++) {
			struct bprof_v8_pos *r = &e->pos[j];
			uint32_t nf;

			if ((rc = need(c, 8, "position row")))
				return rc;
			e->nr_pos = j + 1;
			r->code_offset = g32(c);
			nf = g32(c);
			if (j && r->code_offset <= r[-1].code_offset)
				return cerr(c, BPROF_E_CORRUPT, "SFI %llu: position row %u out of order",
					    (unsigned long long)i, j);
			if (!nf || nf > BPROF_V8_INLINE_MAX)
				return cerr(c, BPROF_E_LIMIT, "SFI %llu: position row %u of %u frames",
					    (unsigned long long)i, j, nf);
			if ((rc = need(c, (uint64_t)nf * 12, "position frames")))
				return rc;
			if (!(r->frames = calloc(nf, sizeof(*r->frames))))
				return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 frames");
			for (uint32_t k = 0; k < nf; k++) {
				struct bprof_v8_frame *fr = &r->frames[k];
				uint32_t a, b;

				if ((rc = need(c, 12, "frame")))
					return rc;
				r->nr_frames = k + 1;
				fr->line = (int32_t)g32(c);
				a = g32(c);
				b = g32(c);
				if (fr->line < 0)
					return cerr(c, BPROF_E_CORRUPT, "SFI %llu: frame line %d",
						    (unsigned long long)i, fr->line);
				if ((rc = get_py_bytes(c, a, BPROF_V8_NAME_MAX, false, &fr->name,
						       "inlined function name", i)) ||
				    (rc = get_py_bytes(c, b, BPROF_V8_NAME_MAX, false, &fr->script,
						       "inlined script name", i)))
					return rc;
			}
		}
	}
	return 0;
}

/* JIT (1.8): the clocks' offset, counters, jitdumps as opaque bytes
 * (libsym parses them: they are the process's own words). */
static int parse_jit(struct cur *c, struct bprof_recording *r)
{
	struct bprof_jit *j = &r->jit;
	uint32_t nc, reserved;
	uint64_t n, prev = 0;
	int rc;

	if ((rc = need(c, 16, "header")))
		return rc;
	j->mono_minus_real_ns = (int64_t)g64(c);
	nc = g32(c);
	reserved = g32(c);
	if (nc > BPROF_JIT_MAX_COUNTERS) {
		c->pos -= 8;
		return cerr(c, BPROF_E_LIMIT, "%u counters (limit %u)", nc, BPROF_JIT_MAX_COUNTERS);
	}
	if (c->strict && reserved) {
		c->pos -= 4;
		return cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	}
	if ((rc = need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	for (uint32_t i = 0; i < nc; i++) {
		uint64_t v = g64(c);

		if (i < BPROF_JIT_NR_COUNTERS)
			j->counters[i] = v;
	}
	j->present = 1;
	if ((rc = get_count(c, &n, BPROF_JITDUMP_FIXED_LEN, "jitdumps")))
		return rc;
	if (n && !(j->dumps = calloc(n, sizeof(*j->dumps))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "jitdumps");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jitdump *d = &j->dumps[i];
		uint64_t at = c->pos, key;

		if ((rc = need(c, BPROF_JITDUMP_FIXED_LEN, "jitdump")))
			return rc;
		d->pid = g32(c);
		d->exec_id = g32(c);
		d->len = g64(c);
		j->nr_dumps = i + 1;
		key = (uint64_t)d->pid << 32 | d->exec_id;
		if (i && key <= prev) {
			c->pos = at;
			return cerr(c, BPROF_E_CORRUPT, "jitdump %llu: (pid %u, exec_id %u) not after the previous one",
				    (unsigned long long)i, d->pid, d->exec_id);
		}
		prev = key;
		if ((rc = need(c, d->len, "jitdump bytes")))
			return rc;
		if (!(d->data = malloc(d->len ? (size_t)d->len : 1)))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "jitdump");
		memcpy(d->data, c->b + c->pos, (size_t)d->len);
		c->pos += d->len;
	}
	return 0;
}

/* A JVM string: checked against the limit and what remains, NUL-free,
 * copied NUL-terminated; n 0: NULL. */
static int get_jvm_str(struct cur *c, uint32_t n, char **out, const char *what, uint64_t i)
{
	*out = NULL;
	if (!n)
		return 0;
	return get_py_bytes(c, n, BPROF_JVM_NAME_MAX, false, out, what, i);
}

/* HotSpot frames' names (1.9, SPEC.md 6.18). */
static int parse_jvm(struct cur *c, struct bprof_recording *r)
{
	struct bprof_jvm *j = &r->jvm;
	uint32_t nc, reserved;
	uint64_t n;
	int rc;

	if ((rc = need(c, 8, "header")))
		return rc;
	nc = g32(c);
	reserved = g32(c);
	if (nc > BPROF_JVM_MAX_COUNTERS)
		return cerr(c, BPROF_E_LIMIT, "%u counters (limit %u)", nc, BPROF_JVM_MAX_COUNTERS);
	if (c->strict && reserved)
		return cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	if ((rc = need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	j->present = 1;
	j->nr_counters = nc;
	for (uint32_t i = 0; i < nc; i++)
		j->counters[i] = g64(c);
	if ((rc = get_count(c, &n, BPROF_JVM_PROC_FIXED_LEN, "JVM processes")))
		return rc;
	if (n && !(j->procs = calloc(n, sizeof(*j->procs))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "JVM processes");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jvm_proc *p = &j->procs[i];
		uint32_t vl;

		if ((rc = need(c, BPROF_JVM_PROC_FIXED_LEN, "process")))
			return rc;
		p->pid = g32(c);
		p->exec_id = g32(c);
		p->status = g32(c);
		vl = g32(c);
		j->nr_procs = i + 1;
		if (c->strict && p->status > BPROF_JVM_STATUS_MAX)
			return cerr(c, BPROF_E_CORRUPT, "process %llu: status %u",
				    (unsigned long long)i, p->status);
		if (i && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return cerr(c, BPROF_E_CORRUPT, "process %llu (pid %u) duplicated or out of order",
				    (unsigned long long)i, p->pid);
		if ((rc = get_jvm_str(c, vl, &p->version, "version", i)))
			return rc;
	}
	if ((rc = get_count(c, &n, BPROF_JVM_FRAME_FIXED_LEN, "JVM frames")))
		return rc;
	if (n && !(j->frames = calloc(n, sizeof(*j->frames))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "JVM frames");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jvm_frame *f = &j->frames[i];
		uint32_t kl, ml, sl, fl;
		char *lines = NULL;

		if ((rc = need(c, BPROF_JVM_FRAME_FIXED_LEN, "frame entry")))
			return rc;
		j->nr_frames = i + 1;
		f->pid = g32(c);
		f->exec_id = g32(c);
		f->id = g64(c);
		f->guard = g32(c);
		f->kind = g32(c);
		f->level = (int32_t)g32(c);
		kl = g32(c);
		ml = g32(c);
		sl = g32(c);
		fl = g32(c);
		f->lines_len = g32(c);
		f->scopes_len = g32(c);
		reserved = g32(c);
		if (c->strict && reserved)
			return cerr(c, BPROF_E_CORRUPT, "frame %llu: reserved field 0x%x",
				    (unsigned long long)i, reserved);
		if (c->strict && (f->kind == 0 || f->kind > BPROF_JVM_KIND_MAX))
			return cerr(c, BPROF_E_CORRUPT, "frame %llu: kind %u", (unsigned long long)i,
				    f->kind);
		if (i && bprof_jvm_frame_cmp(f, f - 1) <= 0)
			return cerr(c, BPROF_E_CORRUPT, "frame %llu duplicated or out of order",
				    (unsigned long long)i);
		if ((rc = get_jvm_str(c, kl, &f->klass, "class", i)) ||
		    (rc = get_jvm_str(c, ml, &f->method, "method", i)) ||
		    (rc = get_jvm_str(c, sl, &f->signature, "signature", i)) ||
		    (rc = get_jvm_str(c, fl, &f->file, "file", i)))
			return rc;
		if (f->lines_len) {
			if ((rc = get_py_bytes(c, f->lines_len, BPROF_JVM_LINES_MAX, true, &lines,
					       "line table", i)))
				return rc;
			f->lines = (uint8_t *)lines;
		}
		if (f->scopes_len) {
			char *sc = NULL;

			if ((rc = get_py_bytes(c, f->scopes_len, BPROF_JVM_SCOPES_MAX, true, &sc,
					       "scopes", i)))
				return rc;
			f->scopes = (uint8_t *)sc;
		}
	}
	return 0;
}

static const struct {
	const char *name;
	int (*parse)(struct cur *, struct bprof_recording *);
} sections[] = {
	[BPROF_SECT_META] = { "meta", parse_meta },
	[BPROF_SECT_LOSSES] = { "losses", parse_losses },
	[BPROF_SECT_STACKS] = { "stacks", parse_stacks },
	[BPROF_SECT_COUNTS] = { "counts", parse_counts },
	[BPROF_SECT_OBJECTS] = { "objects", parse_objects },
	[BPROF_SECT_PROCESSES] = { "processes", parse_processes },
	[BPROF_SECT_KERNEL] = { "kernel", parse_kernel },
	[BPROF_SECT_KSYMS] = { "ksyms", parse_ksyms },
	[BPROF_SECT_UNWIND] = { "unwind", parse_unwind },
	[BPROF_SECT_IMAGES] = { "images", parse_images },
	[BPROF_SECT_ACCESS] = { "access", parse_access },
	[BPROF_SECT_GENERATIONS] = { "generations", parse_generations },
	[BPROF_SECT_OFFCPU] = { "off-cpu", parse_offcpu },
	[BPROF_SECT_SLICES] = { "slices", parse_slices },
	[BPROF_SECT_PYTHON] = { "python", parse_python },
	[BPROF_SECT_JVM] = { "jvm", parse_jvm },
	[BPROF_SECT_JIT] = { "jit", parse_jit },
	[BPROF_SECT_V8] = { "v8", parse_v8 },
};

static const char *sect_label(uint32_t type, char *buf, size_t len)
{
	if (type >= 1 && type <= BPROF_SECT_LAST_KNOWN && sections[type].parse)
		snprintf(buf, len, "%s section", sections[type].name);
	else
		snprintf(buf, len, "section of type %u", type);
	return buf;
}

static int parse_content(struct bprof_recording *r, const uint8_t *b, uint64_t len, bool strict,
			 unsigned minor, struct bprof_error *err)
{
	uint64_t pos = 0;
	uint32_t last = 0;
	int rc;

	while (pos < len) {
		uint32_t type, flags;
		uint64_t slen;
		char label[48];

		if (len - pos < BPROF_SECTION_HEADER_LEN)
			return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
					       "section header at offset %llu: 16 bytes needed, %llu remain",
					       (unsigned long long)pos,
					       (unsigned long long)(len - pos));
		type = bprof_le32(b + pos);
		flags = bprof_le32(b + pos + 4);
		slen = bprof_le64(b + pos + 8);
		if (type == 0)
			return bprof_set_error(err, BPROF_E_CORRUPT, 0,
					       "section at offset %llu: type 0 is reserved",
					       (unsigned long long)pos);
		if (strict && flags)
			return bprof_set_error(err, BPROF_E_CORRUPT, 0,
					       "%s at offset %llu: flags 0x%x must be zero",
					       sect_label(type, label, sizeof(label)),
					       (unsigned long long)pos, flags);
		if (slen > len - pos - BPROF_SECTION_HEADER_LEN)
			return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
					       "%s at offset %llu: length %llu but %llu bytes remain",
					       sect_label(type, label, sizeof(label)),
					       (unsigned long long)pos, (unsigned long long)slen,
					       (unsigned long long)(len - pos - BPROF_SECTION_HEADER_LEN));
		if (type <= BPROF_SECT_LAST_KNOWN && sections[type].parse) {
			struct cur c = {
				.b = b + pos + BPROF_SECTION_HEADER_LEN,
				.len = slen,
				.base = pos + BPROF_SECTION_HEADER_LEN,
				.sect = sections[type].name,
				.strict = strict,
				.minor = minor,
				.err = err,
			};

			if (type <= last)
				return bprof_set_error(err, BPROF_E_CORRUPT, 0,
						       "%s section at offset %llu: duplicated or out of order",
						       c.sect, (unsigned long long)pos);
			/* required sections come one after the other; optional
			 * ones (UNWIND, IMAGES, ACCESS) may each be absent */
			if (last < BPROF_SECT_LAST_REQUIRED ? type != last + 1
							    : type <= BPROF_SECT_LAST_REQUIRED)
				return bprof_set_error(err, BPROF_E_CORRUPT, 0,
						       "%s section missing before offset %llu",
						       sections[last + 1].name, (unsigned long long)pos);
			last = type;
			if ((rc = sections[type].parse(&c, r)))
				return rc;
			if (strict && c.pos != c.len)
				return cerr(&c, BPROF_E_CORRUPT, "%llu unexpected bytes after the data",
					    (unsigned long long)(c.len - c.pos));
		}
		/* Unknown types are skipped by their length: newer minor versions. */
		pos += BPROF_SECTION_HEADER_LEN + slen;
	}
	if (last < BPROF_SECT_LAST_REQUIRED)
		return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
				       "content ends at offset %llu without the %s section",
				       (unsigned long long)len, sections[last + 1].name);
	return 0;
}

/* ---- frame -------------------------------------------------------------- */

static int zstd_error(size_t ret, uint64_t in_pos, struct bprof_error *err)
{
	ZSTD_ErrorCode ec = ZSTD_getErrorCode(ret);

	if (ec == ZSTD_error_frameParameter_windowTooLarge)
		return bprof_set_error(err, BPROF_E_LIMIT, 0,
				       "zstd frame at file offset %d: window larger than the reader allows",
				       BPROF_FILE_HEADER_LEN);
	if (ec == ZSTD_error_memory_allocation)
		return bprof_set_error(err, BPROF_E_NOMEM, 0, "zstd: %s", ZSTD_getErrorName(ret));
	return bprof_set_error(err, BPROF_E_ZSTD, 0, "zstd frame, near file offset %llu: %s",
			       (unsigned long long)in_pos + BPROF_FILE_HEADER_LEN,
			       ZSTD_getErrorName(ret));
}

struct bprof_reader {
	ZSTD_DCtx *d;
	uint8_t *file, *content;       /* kept between files */
	size_t file_cap, content_cap;
};

/* Decompress exactly one frame of exactly content_size bytes into
 * rd->content (grown as needed; the reader keeps it).  The output grows
 * with what the frame really produces, never with what it claims. */
static int decompress(struct bprof_reader *rd, const uint8_t *src, size_t len,
		      uint64_t content_size, unsigned window_log, struct bprof_error *err)
{
	ZSTD_DCtx *d = rd->d;
	ZSTD_inBuffer in = { src, len, 0 };
	uint8_t *buf = rd->content;
	size_t cap = rd->content_cap, produced = 0, ret;
	int rc = 0;

	if (len < 5)
		return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
				       "zstd frame at file offset %d: %zu bytes, frame header needs more",
				       BPROF_FILE_HEADER_LEN, len);
	if (bprof_le32(src) != ZSTD_FRAME_MAGIC)
		return bprof_set_error(err, BPROF_E_ZSTD, 0,
				       "file offset %d: not a zstd frame (magic 0x%08x)",
				       BPROF_FILE_HEADER_LEN, bprof_le32(src));
	if (!(src[4] & ZSTD_FHD_CHECKSUM))
		return bprof_set_error(err, BPROF_E_ZSTD, 0,
				       "zstd frame at file offset %d has no content checksum",
				       BPROF_FILE_HEADER_LEN);
	if (content_size > SIZE_MAX - 1)
		return bprof_set_error(err, BPROF_E_LIMIT, 0, "content too large for memory");

	/* the context is kept between files: back to defaults, then our cap */
	ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
	ret = ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, (int)window_log);
	if (ZSTD_isError(ret)) {
		rc = bprof_set_error(err, BPROF_E_INVAL, 0, "window log %u: %s", window_log,
				     ZSTD_getErrorName(ret));
		goto out;
	}
	/* One byte of slack detects a frame longer than announced.  The
	 * first buffer is what the header announces, up to 1 MiB or 16 times
	 * the compressed bytes, whichever is more: bounded by what the file
	 * really holds, never by its claims, and large enough that a typical
	 * recording (4-6 times smaller compressed) needs no realloc, whose
	 * copy of megabytes was a third of merging 100 recordings. */
	size_t first = len < SIZE_MAX / 16 && len * 16 > (1u << 20) ? len * 16 : 1u << 20;
	first = content_size + 1 < first ? (size_t)content_size + 1 : first;
	if (cap < first) { /* a buffer the reader already has is used as it is */
		free(buf);
		rd->content = NULL;
		rd->content_cap = 0;
		buf = malloc(first);
		if (!buf) {
			rc = bprof_set_error(err, BPROF_E_NOMEM, 0, "content buffer");
			goto out;
		}
		cap = first;
	}
	for (;;) {
		ZSTD_outBuffer o = { buf, cap, produced };

		ret = ZSTD_decompressStream(d, &o, &in);
		produced = o.pos;
		if (ZSTD_isError(ret)) {
			rc = zstd_error(ret, in.pos, err);
			goto out;
		}
		if (produced > content_size) {
			rc = bprof_set_error(err, BPROF_E_CORRUPT, 0,
					     "zstd frame holds more than the %llu bytes the header announces",
					     (unsigned long long)content_size);
			goto out;
		}
		if (ret == 0)
			break;
		if (produced == cap) {
			size_t ncap = cap * 2 > content_size + 1 ? (size_t)content_size + 1 : cap * 2;
			uint8_t *nb = realloc(buf, ncap);

			if (!nb) {
				rc = bprof_set_error(err, BPROF_E_NOMEM, 0, "content buffer");
				goto out;
			}
			buf = nb;
			cap = ncap;
		} else if (in.pos == in.size) {
			rc = bprof_set_error(err, BPROF_E_TRUNCATED, 0,
					     "zstd frame ends early at file offset %zu (content %zu of %llu bytes)",
					     len + BPROF_FILE_HEADER_LEN, produced,
					     (unsigned long long)content_size);
			goto out;
		}
	}
	if (in.pos != in.size) {
		rc = bprof_set_error(err, BPROF_E_CORRUPT, 0,
				     "trailing data after the zstd frame at file offset %zu (%zu bytes)",
				     in.pos + BPROF_FILE_HEADER_LEN, in.size - in.pos);
		goto out;
	}
	if (produced != content_size) {
		rc = bprof_set_error(err, BPROF_E_CORRUPT, 0,
				     "content is %zu bytes but the header announces %llu", produced,
				     (unsigned long long)content_size);
		goto out;
	}
out:
	rd->content = buf;
	rd->content_cap = buf ? cap : 0;
	return rc;
}

static int read_limits(const struct bprof_read_opts *opts, uint64_t *max_dec, unsigned *wlog,
		       struct bprof_error *err)
{
	*max_dec = BPROF_DEFAULT_MAX_DECOMPRESSED;
	*wlog = BPROF_DEFAULT_WINDOW_LOG;
	if (!opts)
		return 0;
	/* A zero sz means the caller forgot it: refuse rather than silently
	 * drop the limits it asked for. */
	if (opts->sz < sizeof(struct bprof_read_opts))
		return bprof_set_error(err, BPROF_E_INVAL, 0,
				       "bprof_read_opts.sz is %zu, must be sizeof(struct bprof_read_opts)",
				       opts->sz);
	if (opts->max_decompressed)
		*max_dec = opts->max_decompressed;
	if (opts->max_window_log)
		*wlog = opts->max_window_log;
	if (*wlog < 10 || *wlog > 31)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "max_window_log %u out of range 10..31",
				       *wlog);
	return 0;
}

static int read_buffer(struct bprof_reader *rd, struct bprof_recording **out, const void *buf,
		       size_t len, const struct bprof_read_opts *opts, struct bprof_error *err)
{
	const uint8_t *b = buf;
	struct bprof_recording *r = NULL;
	uint64_t max_dec, content_size;
	unsigned wlog, major, minor;
	uint32_t flags;
	uint8_t *content = NULL;
	bool strict;
	int rc;

	if (!out)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "out is NULL");
	*out = NULL;
	if (!buf && len)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "buffer is NULL");
	if ((rc = read_limits(opts, &max_dec, &wlog, err)))
		return rc;

	if (len == 0)
		return bprof_set_error(err, BPROF_E_NOT_BPROF, 0, "empty file");
	if (memcmp(b, bprof_magic, len < BPROF_MAGIC_LEN ? len : BPROF_MAGIC_LEN))
		return bprof_set_error(err, BPROF_E_NOT_BPROF, 0,
				       "file offset 0: bad magic number, not a .bprof file");
	if (len < BPROF_FILE_HEADER_LEN)
		return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
				       "file header: %d bytes needed, %zu present",
				       BPROF_FILE_HEADER_LEN, len);
	major = bprof_le16(b + 8);
	minor = bprof_le16(b + 10);
	flags = bprof_le32(b + 12);
	content_size = bprof_le64(b + 16);
	if (major != BPROF_FORMAT_MAJOR)
		return bprof_set_error(err, BPROF_E_VERSION, 0,
				       "file format version %u.%u is not supported by this reader (format %d.%d)",
				       major, minor, BPROF_FORMAT_MAJOR, BPROF_FORMAT_MINOR);
	strict = minor <= BPROF_FORMAT_MINOR;
	if (strict && flags)
		return bprof_set_error(err, BPROF_E_CORRUPT, 0,
				       "file header at offset 12: flags 0x%x must be zero", flags);
	if (content_size > max_dec)
		return bprof_set_error(err, BPROF_E_LIMIT, 0,
				       "file header at offset 16: content size %llu exceeds the limit %llu",
				       (unsigned long long)content_size, (unsigned long long)max_dec);

	rc = decompress(rd, b + BPROF_FILE_HEADER_LEN, len - BPROF_FILE_HEADER_LEN, content_size,
			wlog, err);
	if (rc)
		return rc;
	content = rd->content;
	rc = bprof_recording_create(&r);
	if (rc)
		return bprof_set_error(err, rc, 0, "recording");
	rc = parse_content(r, content, content_size, strict, minor, err);
	if (!rc)
		rc = bprof_validate_impl(r, err, BPROF_E_CORRUPT, false, strict);
	if (rc) {
		bprof_recording_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int bprof_reader_create(struct bprof_reader **out)
{
	struct bprof_reader *rd = calloc(1, sizeof(*rd));

	*out = NULL;
	if (!rd || !(rd->d = ZSTD_createDCtx())) {
		free(rd);
		return BPROF_E_NOMEM;
	}
	*out = rd;
	return 0;
}

void bprof_reader_destroy(struct bprof_reader *rd)
{
	if (!rd)
		return;
	ZSTD_freeDCtx(rd->d);
	free(rd->file);
	free(rd->content);
	free(rd);
}

/* The reader of a single read (bprof_read_buffer, bprof_read_file). */
static int reader_for_one(struct bprof_reader **rd, struct bprof_recording **out,
			  struct bprof_error *err)
{
	int rc = bprof_reader_create(rd);

	if (rc) {
		if (out)
			*out = NULL;
		return bprof_set_error(err, rc, 0, "zstd context");
	}
	return 0;
}

int bprof_read_buffer(struct bprof_recording **out, const void *buf, size_t len,
		      const struct bprof_read_opts *opts, struct bprof_error *err)
{
	struct bprof_reader *rd;
	int rc = reader_for_one(&rd, out, err);

	if (rc)
		return rc;
	rc = read_buffer(rd, out, buf, len, opts, err);
	bprof_reader_destroy(rd);
	return rc;
}

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int bprof_reader_read_file(struct bprof_reader *rd, struct bprof_recording **out,
			   const char *path, const struct bprof_read_opts *opts,
			   struct bprof_error *err)
{
	if (!rd) {
		if (out)
			*out = NULL;
		return bprof_set_error(err, BPROF_E_INVAL, 0, "reader is NULL");
	}
	uint64_t max_dec;
	unsigned wlog;
	struct stat st;
	uint8_t *buf = NULL;
	size_t size, done = 0;
	int fd, rc;

	if (!out)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "out is NULL");
	*out = NULL;
	if (!path)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "path is NULL");
	if ((rc = read_limits(opts, &max_dec, &wlog, err)))
		return rc;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return bprof_set_error(err, BPROF_E_IO, errno, "open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = bprof_set_error(err, BPROF_E_IO, errno, "fstat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = bprof_set_error(err, BPROF_E_INVAL, 0, "is %s, not a regular file",
				     file_kind(st.st_mode));
		goto out;
	}
	/* zstd expands incompressible data by a few bytes per 128 KiB block. */
	if ((uint64_t)st.st_size > max_dec + max_dec / 64 + 4096 || (uint64_t)st.st_size >= SIZE_MAX) {
		rc = bprof_set_error(err, BPROF_E_LIMIT, 0,
				     "file is %lld bytes, more than a %llu-byte content can need",
				     (long long)st.st_size, (unsigned long long)max_dec);
		goto out;
	}
	size = (size_t)st.st_size;
	if (rd->file_cap < (size ? size : 1)) {
		free(rd->file);
		rd->file_cap = 0;
		if (!(rd->file = malloc(size ? size : 1))) {
			rc = bprof_set_error(err, BPROF_E_NOMEM, 0, "file buffer of %zu bytes", size);
			goto out;
		}
		rd->file_cap = size ? size : 1;
	}
	buf = rd->file;
	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = bprof_set_error(err, BPROF_E_IO, errno, "read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break; /* shrank while reading: parse what is there */
		done += (size_t)n;
	}
	rc = read_buffer(rd, out, buf, done, opts, err);
out:
	close(fd);
	return rc;
}

int bprof_read_file(struct bprof_recording **out, const char *path,
		    const struct bprof_read_opts *opts, struct bprof_error *err)
{
	struct bprof_reader *rd;
	int rc = reader_for_one(&rd, out, err);

	if (rc)
		return rc;
	rc = bprof_reader_read_file(rd, out, path, opts, err);
	bprof_reader_destroy(rd);
	return rc;
}
