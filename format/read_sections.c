/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_sections.c - parse and validate a .bprof file's content (SPEC.md 5,
 * 6): the walk over its sections and the sections every recording has
 * (the runtimes' and JIT's are read_runtimes.c's).
 *
 * Every byte is hostile.  Fields are read with little-endian load helpers
 * from a cursor that knows how many bytes remain in the current section;
 * every count is checked against those bytes (count * smallest entry)
 * before anything is allocated, so memory stays proportional to the
 * decompressed size, which is itself capped.  Errors name the section and
 * the offset in the decompressed content where parsing stopped.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Length-prefixed string, NUL-free; returned NUL-terminated and malloc'ed. */
static int get_str(struct bprof_cur *c, char **out, const char *what)
{
	uint32_t n;
	int rc = bprof_need(c, 4, what);

	if (rc)
		return rc;
	n = bprof_g32(c);
	if (n > bprof_rem(c))
		return bprof_cerr(c, BPROF_E_TRUNCATED, "%s claims %u bytes but %llu remain", what, n,
				  (unsigned long long)bprof_rem(c));
	if (memchr(c->b + c->pos, '\0', n))
		return bprof_cerr(c, BPROF_E_CORRUPT, "%s contains a NUL byte", what);
	*out = malloc((size_t)n + 1);
	if (!*out)
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "%s", what);
	memcpy(*out, c->b + c->pos, n);
	(*out)[n] = '\0';
	c->pos += n;
	return 0;
}

static int get_build_id(struct bprof_cur *c, uint32_t len, uint8_t *dst, const char *what)
{
	int rc;

	if (len > BPROF_BUILD_ID_MAX)
		return bprof_cerr(c, BPROF_E_CORRUPT, "%s build-id length %u exceeds %d", what, len,
				  BPROF_BUILD_ID_MAX);
	rc = bprof_need(c, len, "build-id");
	if (rc)
		return rc;
	memcpy(dst, c->b + c->pos, len);
	c->pos += len;
	return 0;
}

/* comm: 16 bytes holding a NUL; in strict mode the bytes after it are zero. */
static int get_comm(struct bprof_cur *c, char *dst, const char *what)
{
	const uint8_t *p = c->b + c->pos;
	const uint8_t *nul = memchr(p, '\0', BPROF_COMM_LEN);

	if (!nul)
		return bprof_cerr(c, BPROF_E_CORRUPT, "%s comm is not NUL-terminated", what);
	if (c->strict)
		for (const uint8_t *q = nul; q < p + BPROF_COMM_LEN; q++)
			if (*q)
				return bprof_cerr(c, BPROF_E_CORRUPT, "%s comm padding is not zero", what);
	memcpy(dst, p, BPROF_COMM_LEN);
	c->pos += BPROF_COMM_LEN;
	return 0;
}

static int get_uleb(struct bprof_cur *c, uint64_t *out, const char *what)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		uint8_t byte;

		if (bprof_rem(c) < 1)
			return bprof_cerr(c, BPROF_E_TRUNCATED, "%s: varint runs past the section", what);
		byte = c->b[c->pos];
		if (shift == 63 && (byte & 0x7e))
			return bprof_cerr(c, BPROF_E_CORRUPT, "%s: varint overflows 64 bits", what);
		c->pos++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return bprof_cerr(c, BPROF_E_CORRUPT, "%s: varint longer than 10 bytes", what);
}

/* ---- sections ---------------------------------------------------------- */

static int parse_meta(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_meta *m = &r->meta;
	int rc = bprof_need(c, 40, "fixed fields");

	if (rc)
		return rc;
	m->start_time_ns = bprof_g64(c);
	m->duration_ns = bprof_g64(c);
	m->sample_freq = bprof_g64(c);
	m->sample_period = bprof_g64(c);
	m->ncpus = bprof_g32(c);
	m->flags = bprof_g32(c);
	if (c->strict && (m->flags & ~BPROF_META_ALL_FLAGS)) {
		c->pos -= 4;
		return bprof_cerr(c, BPROF_E_CORRUPT, "flags 0x%x has undefined bits", m->flags);
	}
	if ((rc = get_str(c, &m->hostname, "hostname")) ||
	    (rc = get_str(c, &m->kernel_release, "kernel_release")) ||
	    (rc = get_str(c, &m->arch, "arch")) ||
	    (rc = get_str(c, &m->recorder_version, "recorder_version")) ||
	    (rc = get_str(c, &m->event, "event")) || (rc = get_str(c, &m->options, "options")))
		return rc;
	return 0;
}

static int parse_losses(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_losses *l = &r->losses;
	int rc = bprof_need(c, BPROF_LOSSES_V10_LEN, "loss counters");

	if (rc)
		return rc;
	l->user_stack_enomem = bprof_g64(c);
	l->user_stack_eexist = bprof_g64(c);
	l->kernel_stack_enomem = bprof_g64(c);
	l->kernel_stack_eexist = bprof_g64(c);
	l->counts_full = bprof_g64(c);
	l->manifest_lost = bprof_g64(c);
	l->events_lost = bprof_g64(c);
	l->other = bprof_g64(c);
	/* 1.1 appended a ninth counter; a 64-byte payload (1.0) is whole */
	if (bprof_rem(c)) {
		if ((rc = bprof_need(c, 8, "loss counter user_stack_before_table")))
			return rc;
		l->user_stack_before_table = bprof_g64(c);
	}
	return 0;
}

static int parse_stacks(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = bprof_get_count(c, &n, BPROF_STACK_FIXED_LEN, "stacks");

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

		if ((rc = bprof_need(c, BPROF_STACK_FIXED_LEN, "stack header")))
			return rc;
		s->id = bprof_g32(c);
		s->nr_ips = bprof_g32(c);
		if (s->id > INT32_MAX)
			return bprof_cerr(c, BPROF_E_CORRUPT, "stack %llu: id %u exceeds INT32_MAX",
					  (unsigned long long)i, s->id);
		if (i > 0 && s->id <= r->stacks[i - 1].id)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "stack %llu: id %u is duplicated or out of order (previous %u)",
					  (unsigned long long)i, s->id, r->stacks[i - 1].id);
		if ((uint64_t)s->nr_ips * 8 > bprof_rem(c) || s->nr_ips > BPROF_MAX_STACK_DEPTH) {
			uint32_t nr = s->nr_ips;

			s->nr_ips = 0;
			if (nr > BPROF_MAX_STACK_DEPTH && (uint64_t)nr * 8 <= bprof_rem(c))
				return bprof_cerr(c, BPROF_E_LIMIT, "stack %u has %u ips (limit %u)",
						  s->id, nr, BPROF_MAX_STACK_DEPTH);
			return bprof_cerr(c, BPROF_E_TRUNCATED, "stack %u claims %u ips but %llu bytes remain",
					  s->id, nr, (unsigned long long)bprof_rem(c));
		}
		if (s->nr_ips) {
			if (total - used < s->nr_ips) /* the first pass saw these bytes */
				return bprof_cerr(c, BPROF_E_CORRUPT, "stack %u: ips beyond the table", s->id);
			s->ips = r->ips_block + used;
			used += s->nr_ips;
			for (uint32_t j = 0; j < s->nr_ips; j++)
				s->ips[j] = bprof_g64(c);
		}
	}
	return 0;
}

/* The 56 bytes a row of COUNTS or OFFCPU begins with (SPEC.md 6.4, 6.13);
 * the u32 at 20, map_gen (reserved before 1.3), is the caller's. */
static int get_count_row(struct bprof_cur *c, struct bprof_count *e, uint32_t *gen,
			 const char *what)
{
	e->pid = bprof_g32(c);
	e->tid = bprof_g32(c);
	e->exec_id = bprof_g32(c);
	e->user_stack_id = (int32_t)bprof_g32(c);
	e->kernel_stack_id = (int32_t)bprof_g32(c);
	*gen = bprof_g32(c);
	e->kernel_ip = bprof_g64(c);
	e->count = bprof_g64(c);
	return get_comm(c, e->comm, what);
}

/* A row's stacks are in STACKS; a row's last check (at: its offset). */
static int check_count_stacks(struct bprof_cur *c, const struct bprof_recording *r,
			      const struct bprof_count *e, uint64_t at, uint64_t i, const char *what)
{
	if (e->user_stack_id >= 0 && !bprof_recording_stack(r, e->user_stack_id)) {
		c->pos = at + 12;
		return bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu: user stack id %d does not exist",
				  what, (unsigned long long)i, e->user_stack_id);
	}
	if (e->kernel_stack_id >= 0 && !bprof_recording_stack(r, e->kernel_stack_id)) {
		c->pos = at + 16;
		return bprof_cerr(c, BPROF_E_CORRUPT, "%s %llu: kernel stack id %d does not exist",
				  what, (unsigned long long)i, e->kernel_stack_id);
	}
	return 0;
}

static int parse_counts(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = bprof_get_count(c, &n, BPROF_COUNT_ENTRY_LEN, "counts");

	if (rc)
		return rc;
	if (n && !(r->counts = calloc(n, sizeof(*r->counts))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "counts table");
	r->nr_counts = n;
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_count *e = &r->counts[i];
		uint64_t at = c->pos;
		uint32_t reserved;

		if ((rc = get_count_row(c, e, &reserved, "count")))
			return rc;
		if (c->minor >= 3)
			e->map_gen = reserved;
		else if (c->strict && reserved) {
			c->pos = at + 20;
			return bprof_cerr(c, BPROF_E_CORRUPT, "count %llu: reserved field is 0x%x",
					  (unsigned long long)i, reserved);
		}
		if ((rc = check_count_stacks(c, r, e, at, i, "count")))
			return rc;
	}
	return 0;
}

/* OFFCPU (1.5, SPEC.md 6.13): rows appended to the counts, with their
 * state and blocked time. */
static int parse_offcpu(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n, base = r->nr_counts;
	struct bprof_count *v;
	uint32_t reserved;
	int rc;

	if (c->len - c->pos < BPROF_OFFCPU_FIXED_LEN - 8)
		return bprof_cerr(c, BPROF_E_TRUNCATED, "%llu bytes, the header takes %d",
				  (unsigned long long)(c->len - c->pos),
				  BPROF_OFFCPU_FIXED_LEN - 8);
	r->offcpu.mode = bprof_g32(c);
	reserved = bprof_g32(c);
	r->offcpu.period_ns = bprof_g64(c);
	r->offcpu.blocks = bprof_g64(c);
	r->offcpu.blocks_short = bprof_g64(c);
	r->offcpu.blocked_ns = bprof_g64(c);
	r->offcpu.walks = bprof_g64(c);
	r->offcpu.no_user_stack = bprof_g64(c);
	r->offcpu.lost = bprof_g64(c);
	if (r->offcpu.mode == BPROF_OFFCPU_NONE ||
	    (c->strict && r->offcpu.mode > BPROF_OFFCPU_WALL)) {
		c->pos = 0;
		return bprof_cerr(c, BPROF_E_CORRUPT, "mode %u", r->offcpu.mode);
	}
	if (r->offcpu.mode > BPROF_OFFCPU_WALL)
		r->offcpu.mode = BPROF_OFFCPU_WALL; /* a newer mode: at least as much */
	if (c->strict && reserved) {
		c->pos = 4;
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	}
	if (!r->offcpu.period_ns) {
		c->pos = 8;
		return bprof_cerr(c, BPROF_E_CORRUPT, "period of 0 ns");
	}
	if ((rc = bprof_get_count(c, &n, BPROF_OFFCPU_ENTRY_LEN, "off-CPU counts")))
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
		if ((rc = get_count_row(c, e, &e->map_gen, "off-CPU count")))
			return rc;
		e->state = bprof_g32(c);
		reserved = bprof_g32(c);
		e->blocked_ns = bprof_g64(c);
		if (e->state == BPROF_STATE_ON_CPU || (c->strict && e->state > BPROF_STATE_MAX)) {
			c->pos = at + 56;
			return bprof_cerr(c, BPROF_E_CORRUPT, "off-CPU count %llu: thread state %u",
					  (unsigned long long)i, e->state);
		}
		if (e->state > BPROF_STATE_MAX)
			e->state = BPROF_STATE_T; /* a newer state: "other" */
		if (c->strict && reserved) {
			c->pos = at + 60;
			return bprof_cerr(c, BPROF_E_CORRUPT, "off-CPU count %llu: reserved field is 0x%x",
					  (unsigned long long)i, reserved);
		}
		if ((rc = check_count_stacks(c, r, e, at, i, "off-CPU count")))
			return rc;
	}
	return 0;
}

static int parse_objects(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = bprof_get_count(c, &n, BPROF_OBJECT_MIN_LEN, "objects");

	if (rc)
		return rc;
	if (n >= BPROF_NO_OBJECT)
		return bprof_cerr(c, BPROF_E_LIMIT, "%llu objects", (unsigned long long)n);
	if (n && !(r->objects = calloc(n, sizeof(*r->objects))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "objects table");
	r->nr_objects = n;
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_object *o = &r->objects[i];

		if ((rc = bprof_need(c, BPROF_OBJECT_FIXED_LEN, "object")))
			return rc;
		o->flags = bprof_g32(c);
		o->build_id_len = bprof_g32(c);
		o->size = bprof_g64(c);
		o->mtime_ns = bprof_g64(c);
		o->dev = bprof_g64(c);
		o->inode = bprof_g64(c);
		o->fallback_hash = bprof_g64(c);
		if (c->strict && (o->flags & ~BPROF_OBJ_ALL_FLAGS))
			return bprof_cerr(c, BPROF_E_CORRUPT, "object %llu: flags 0x%x has undefined bits",
					  (unsigned long long)i, o->flags);
		if ((rc = get_build_id(c, o->build_id_len, o->build_id, "object")))
			return rc;
		if ((o->build_id_len > 0) != !!(o->flags & BPROF_OBJ_HAS_BUILD_ID))
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "object %llu: build-id length %u contradicts flags 0x%x",
					  (unsigned long long)i, o->build_id_len, o->flags);
		if ((rc = get_str(c, &o->path, "object path")))
			return rc;
	}
	return 0;
}

static int parse_mappings(struct bprof_cur *c, struct bprof_recording *r, struct bprof_process *p)
{
	int rc;

	if ((uint64_t)p->nr_mappings * BPROF_MAPPING_LEN > bprof_rem(c)) {
		uint32_t nr = p->nr_mappings;

		p->nr_mappings = 0;
		return bprof_cerr(c, BPROF_E_TRUNCATED, "process %u claims %u mappings but %llu bytes remain",
				  p->pid, nr, (unsigned long long)bprof_rem(c));
	}
	if (!p->nr_mappings)
		return 0;
	p->mappings = calloc(p->nr_mappings, sizeof(*p->mappings));
	if (!p->mappings)
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "mappings");
	for (uint32_t j = 0; j < p->nr_mappings; j++) {
		struct bprof_mapping *m = &p->mappings[j];

		if ((rc = bprof_need(c, BPROF_MAPPING_LEN, "mapping")))
			return rc;
		m->start = bprof_g64(c);
		m->end = bprof_g64(c);
		m->file_offset = bprof_g64(c);
		m->object_index = bprof_g32(c);
		m->flags = bprof_g32(c);
		c->pos -= BPROF_MAPPING_LEN; /* report errors at the entry */
		if (m->start >= m->end)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "process %u mapping %u: start 0x%llx >= end 0x%llx", p->pid, j,
					  (unsigned long long)m->start, (unsigned long long)m->end);
		if (j > 0 && m->start < p->mappings[j - 1].end)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "process %u mapping %u: start 0x%llx overlaps or precedes the previous mapping (end 0x%llx)",
					  p->pid, j, (unsigned long long)m->start,
					  (unsigned long long)p->mappings[j - 1].end);
		if (m->object_index != BPROF_NO_OBJECT && m->object_index >= r->nr_objects)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "process %u mapping %u: object index %u but %llu objects",
					  p->pid, j, m->object_index,
					  (unsigned long long)r->nr_objects);
		if (c->strict && (m->flags & ~BPROF_MAP_ALL_FLAGS))
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "process %u mapping %u: flags 0x%x has undefined bits", p->pid, j,
					  m->flags);
		c->pos += BPROF_MAPPING_LEN;
	}
	return 0;
}

static int parse_processes(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = bprof_get_count(c, &n, BPROF_PROCESS_FIXED_LEN, "processes");

	if (rc)
		return rc;
	if (n && !(r->processes = calloc(n, sizeof(*r->processes))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "processes table");
	r->nr_processes = n;
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_process *p = &r->processes[i];
		uint64_t pm_len;

		if ((rc = bprof_need(c, BPROF_PROCESS_FIXED_LEN, "process")))
			return rc;
		p->pid = bprof_g32(c);
		p->ns_pid = bprof_g32(c);
		p->exec_id = bprof_g32(c);
		p->nr_mappings = bprof_g32(c);
		p->snapshot_ns = bprof_g64(c);
		if ((rc = get_comm(c, p->comm, "process")))
			return rc;
		pm_len = bprof_g64(c);
		if (i > 0 && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "process %llu: (pid %u, exec_id %u) duplicated or out of order",
					  (unsigned long long)i, p->pid, p->exec_id);
		if ((rc = parse_mappings(c, r, p)))
			return rc;
		if (pm_len > bprof_rem(c))
			return bprof_cerr(c, BPROF_E_TRUNCATED,
					  "process %u perf map claims %llu bytes but %llu remain", p->pid,
					  (unsigned long long)pm_len,
					  (unsigned long long)bprof_rem(c));
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

static int parse_kernel(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_kernel *k = &r->kernel;
	uint64_t n;
	int rc = bprof_need(c, 16, "fixed fields");

	if (rc)
		return rc;
	k->flags = bprof_g32(c);
	k->build_id_len = bprof_g32(c);
	k->stext = bprof_g64(c);
	if (c->strict && (k->flags & ~BPROF_KERNEL_ALL_FLAGS))
		return bprof_cerr(c, BPROF_E_CORRUPT, "flags 0x%x has undefined bits", k->flags);
	if ((rc = get_build_id(c, k->build_id_len, k->build_id, "kernel")))
		return rc;
	if ((rc = get_str(c, &k->release, "release")))
		return rc;
	if ((rc = bprof_get_count(c, &n, BPROF_MODULE_MIN_LEN, "modules")))
		return rc;
	if (n > BPROF_MAX_MODULES)
		return bprof_cerr(c, BPROF_E_LIMIT, "%llu modules (limit %u)", (unsigned long long)n,
				  BPROF_MAX_MODULES);
	if (n && !(k->modules = calloc(n, sizeof(*k->modules))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "modules table");
	k->nr_modules = (uint32_t)n;
	for (uint32_t i = 0; i < k->nr_modules; i++) {
		struct bprof_module *m = &k->modules[i];

		if ((rc = bprof_need(c, 20, "module")))
			return rc;
		m->base = bprof_g64(c);
		m->size = bprof_g64(c);
		m->build_id_len = bprof_g32(c);
		if (m->base + m->size < m->base)
			return bprof_cerr(c, BPROF_E_CORRUPT, "module %u: base + size overflows", i);
		if ((rc = get_build_id(c, m->build_id_len, m->build_id, "module")))
			return rc;
		if ((rc = get_str(c, &m->name, "module name")))
			return rc;
	}
	return 0;
}

static int parse_ksyms(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_kernel *k = &r->kernel;
	uint64_t n, addr = 0, v;
	int rc = bprof_get_count(c, &n, BPROF_KSYM_MIN_LEN, "ksyms");

	if (rc)
		return rc;
	if (n > BPROF_MAX_KSYMS)
		return bprof_cerr(c, BPROF_E_LIMIT, "%llu ksyms (limit %u)", (unsigned long long)n,
				  BPROF_MAX_KSYMS);
	if (n && !(k->ksyms = calloc(n, sizeof(*k->ksyms))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "ksyms table");
	k->nr_ksyms = (uint32_t)n;
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		if ((rc = get_uleb(c, &v, "ksym address delta")))
			return rc;
		if (addr + v < addr)
			return bprof_cerr(c, BPROF_E_CORRUPT, "ksym %u: address overflows", i);
		addr += v;
		k->ksyms[i].addr = addr;
	}
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		if ((rc = get_uleb(c, &v, "ksym module")))
			return rc;
		if (v > k->nr_modules)
			return bprof_cerr(c, BPROF_E_CORRUPT, "ksym %u: module %llu but %u modules", i,
					  (unsigned long long)v, k->nr_modules);
		k->ksyms[i].module_index = v ? (uint32_t)(v - 1) : BPROF_NO_OBJECT;
	}
	/* The names lie back to back, each NUL-terminated: they are copied
	 * in one block (ksym_names), one allocation instead of one per name
	 * (a report merging many files spent most of its malloc time here). */
	const uint8_t *first = c->b + c->pos;
	size_t span = 0;

	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		const uint8_t *nul = memchr(first + span, '\0', (size_t)bprof_rem(c) - span);

		if (!nul) {
			c->pos += span;
			return bprof_cerr(c, BPROF_E_TRUNCATED, "ksym %u: name not terminated", i);
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

static int parse_unwind(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_unwind *u = &r->unwind;
	uint64_t n, si = 0;
	int rc = bprof_need(c, BPROF_UNWIND_FIXED_LEN, "unwind header");

	if (rc)
		return rc;
	u->mode = bprof_g32(c);
	u->flags = bprof_g32(c);
	n = bprof_g64(c);
	if (c->strict && (u->mode < BPROF_UNWIND_FP || u->mode > BPROF_UNWIND_CFI))
		return bprof_cerr(c, BPROF_E_CORRUPT, "unwind mode %u is not 1 (fp), 2 (auto) or 3 (cfi)",
				  u->mode);
	if (c->strict && (u->flags & ~BPROF_UNWIND_WALKED))
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved unwind flags 0x%x", u->flags);
	if (n > BPROF_UNWIND_MAX_COUNTERS)
		return bprof_cerr(c, BPROF_E_LIMIT, "%llu unwind counters (limit %u)",
				  (unsigned long long)n, BPROF_UNWIND_MAX_COUNTERS);
	if ((rc = bprof_get_counters(c, u->counters, BPROF_UNW_NR_COUNTERS, n, "unwind counters")))
		return rc;
	if ((rc = bprof_get_count(c, &n, BPROF_STACK_FLAGS_ENTRY_LEN, "stack flags")))
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t id = bprof_g32(c), flags = bprof_g32(c);

		if (c->strict && (flags & ~BPROF_USTACK_FLAGS_ALL))
			return bprof_cerr(c, BPROF_E_CORRUPT, "stack %u: reserved stack flags 0x%x", id,
					  flags);
		if (id < BPROF_STACK_ID_UNWOUND)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "stack flags for stack %u, which the unwinder did not walk (id < 2^30)",
					  id);
		/* entries and stacks are both sorted by id: one merge pass */
		while (si < r->nr_stacks && r->stacks[si].id < id)
			si++;
		if (si == r->nr_stacks || r->stacks[si].id != id)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "stack flags entry %llu: stack %u is not in the stacks section, or entries are out of order",
					  (unsigned long long)i, id);
		r->stacks[si++].flags = flags;
	}
	/* 1.4: the objects whose tables did not fit; earlier files end here */
	if (c->minor < 4)
		return 0;
	if ((rc = bprof_get_count(c, &n, BPROF_UNWIND_MISS_ENTRY_LEN, "unwind misses")))
		return rc;
	if (n > r->nr_objects)
		return bprof_cerr(c, BPROF_E_CORRUPT, "%llu unwind misses but %llu objects",
				  (unsigned long long)n, (unsigned long long)r->nr_objects);
	u->misses = calloc(n ? n : 1, sizeof(*u->misses));
	if (!u->misses)
		return bprof_cerr(c, BPROF_E_NOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_unwind_miss *m = &u->misses[i];

		m->object_index = bprof_g32(c);
		m->flags = bprof_g32(c);
		m->rows = bprof_g64(c);
		if (m->object_index >= r->nr_objects || (i && m->object_index <= m[-1].object_index))
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "unwind miss %llu: object %u missing, duplicated or out of order",
					  (unsigned long long)i, m->object_index);
		if (c->strict && (m->flags & ~BPROF_UNWIND_MISS_SAMPLED))
			return bprof_cerr(c, BPROF_E_CORRUPT, "unwind miss %llu: reserved flags 0x%x",
					  (unsigned long long)i, m->flags);
		if (!m->rows)
			return bprof_cerr(c, BPROF_E_CORRUPT, "unwind miss %llu: 0 rows",
					  (unsigned long long)i);
		u->nr_misses = (uint32_t)i + 1;
	}
	return 0;
}

static int parse_images(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc = bprof_get_count(c, &n, BPROF_IMAGE_FIXED_LEN, "images");

	if (rc)
		return rc;
	if (n && !(r->images = calloc(n, sizeof(*r->images))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "images table");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_image *im = &r->images[i];
		uint32_t obj, reserved;
		uint64_t len;

		if ((rc = bprof_need(c, BPROF_IMAGE_FIXED_LEN, "image header")))
			return rc;
		obj = bprof_g32(c);
		reserved = bprof_g32(c);
		len = bprof_g64(c);
		if (obj >= r->nr_objects)
			return bprof_cerr(c, BPROF_E_CORRUPT, "image %llu: object %u but %llu objects",
					  (unsigned long long)i, obj,
					  (unsigned long long)r->nr_objects);
		if (i && obj <= r->images[i - 1].object_index)
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "image %llu: object %u is duplicated or out of order",
					  (unsigned long long)i, obj);
		if (c->strict && reserved)
			return bprof_cerr(c, BPROF_E_CORRUPT, "image %llu: reserved field 0x%x",
					  (unsigned long long)i, reserved);
		if (!len)
			return bprof_cerr(c, BPROF_E_CORRUPT, "image %llu is empty", (unsigned long long)i);
		if (len > BPROF_IMAGE_MAX)
			return bprof_cerr(c, BPROF_E_LIMIT, "image %llu: %llu bytes (limit %u)",
					  (unsigned long long)i, (unsigned long long)len,
					  BPROF_IMAGE_MAX);
		if ((rc = bprof_need(c, len, "image bytes")))
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
static int parse_access(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_access *a = &r->access;
	uint64_t n;
	int rc = bprof_need(c, BPROF_ACCESS_FIXED_LEN, "access header");

	if (rc)
		return rc;
	a->euid = bprof_g32(c);
	a->flags = bprof_g32(c);
	a->capabilities = bprof_g64(c); /* every bit may be a capability of a later kernel */
	n = bprof_g64(c);
	if (c->strict && (a->flags & ~BPROF_ACCESS_FLAGS_ALL)) {
		c->pos -= 20;
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved access flags 0x%x", a->flags);
	}
	if (n > BPROF_ACCESS_MAX_COUNTERS) {
		c->pos -= 8;
		return bprof_cerr(c, BPROF_E_LIMIT, "%llu access counters (limit %u)",
				  (unsigned long long)n, BPROF_ACCESS_MAX_COUNTERS);
	}
	if ((rc = bprof_get_counters(c, a->counters, BPROF_ACC_NR_COUNTERS, n, "access counters")))
		return rc;
	a->present = 1;
	return 0;
}

/* Mapping generations (1.3): entries for some processes, by index. */
static int parse_generations(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n, prev = 0;
	int rc = bprof_get_count(c, &n, BPROF_GENS_FIXED_LEN, "generation entries");

	if (rc)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t idx, nb, nh, ng;
		uint64_t reserved, at = c->pos;
		struct bprof_process *p;

		if ((rc = bprof_need(c, BPROF_GENS_FIXED_LEN, "generation entry")))
			return rc;
		idx = bprof_g32(c);
		nb = bprof_g32(c);
		nh = bprof_g32(c);
		ng = bprof_g32(c);
		reserved = bprof_g64(c);
		if (idx >= r->nr_processes || (i && idx <= prev)) {
			c->pos = at;
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "generation entry %llu: process index %u out of range or order",
					  (unsigned long long)i, idx);
		}
		prev = idx;
		p = &r->processes[idx];
		if (nb != p->nr_mappings) {
			c->pos = at + 4;
			return bprof_cerr(c, BPROF_E_CORRUPT,
					  "generation entry %llu: %u births for %u mappings",
					  (unsigned long long)i, nb, p->nr_mappings);
		}
		if (c->strict && reserved) {
			c->pos = at + 16;
			return bprof_cerr(c, BPROF_E_CORRUPT, "generation entry %llu: reserved field nonzero",
					  (unsigned long long)i);
		}
		if ((rc = bprof_need(c, (uint64_t)nb * 4 + (uint64_t)nh * BPROF_HISTORY_LEN +
					  (uint64_t)ng * 4, "generation entry's tables")))
			return rc;
		for (uint32_t j = 0; j < nb; j++)
			p->mappings[j].birth = bprof_g32(c);
		if (nh && !(p->history = calloc(nh, sizeof(*p->history))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "history");
		if (ng && !(p->gaps = calloc(ng, sizeof(*p->gaps))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "gaps");
		p->has_gens = 1;
		for (uint32_t j = 0; j < nh; j++) {
			struct bprof_mapping *m = &p->history[j];
			uint32_t res;

			m->start = bprof_g64(c);
			m->end = bprof_g64(c);
			m->file_offset = bprof_g64(c);
			m->object_index = bprof_g32(c);
			m->flags = bprof_g32(c);
			m->birth = bprof_g32(c);
			res = bprof_g32(c);
			p->nr_history = j + 1;
			c->pos -= BPROF_HISTORY_LEN; /* report errors at the entry */
			if (m->start >= m->end ||
			    (m->object_index != BPROF_NO_OBJECT && m->object_index >= r->nr_objects))
				return bprof_cerr(c, BPROF_E_CORRUPT,
						  "process %u history mapping %u: empty range or object index %u out of range",
						  p->pid, j, m->object_index);
			if (c->strict && ((m->flags & ~BPROF_MAP_ALL_FLAGS) || res))
				return bprof_cerr(c, BPROF_E_CORRUPT,
						  "process %u history mapping %u: undefined flags 0x%x or reserved field",
						  p->pid, j, m->flags);
			c->pos += BPROF_HISTORY_LEN;
		}
		for (uint32_t j = 0; j < ng; j++) {
			p->gaps[j] = bprof_g32(c);
			p->nr_gaps = j + 1;
			if (!p->gaps[j] || (j && p->gaps[j] <= p->gaps[j - 1])) {
				c->pos -= 4;
				return bprof_cerr(c, BPROF_E_CORRUPT,
						  "process %u gap %u: generation %u is 0 or not increasing",
						  p->pid, j, p->gaps[j]);
			}
		}
	}
	return 0;
}

/* SLICES (1.6, SPEC.md 6.14): the time slice of every row read so far,
 * COUNTS' then OFFCPU's (the order the reader appended them in). */
static int parse_slices(struct bprof_cur *c, struct bprof_recording *r)
{
	uint64_t n;
	int rc;

	if (c->len - c->pos < BPROF_SLICES_FIXED_LEN - 8)
		return bprof_cerr(c, BPROF_E_TRUNCATED, "%llu bytes, the header takes %d",
				  (unsigned long long)(c->len - c->pos),
				  BPROF_SLICES_FIXED_LEN - 8);
	r->slices.slice_ns = bprof_g64(c);
	r->slices.origin_ns = bprof_g64(c);
	if (!r->slices.slice_ns) {
		c->pos = 0;
		return bprof_cerr(c, BPROF_E_CORRUPT, "slices of 0 ns");
	}
	if ((rc = bprof_get_count(c, &n, 4, "slices")))
		return rc;
	if (n != r->nr_counts) {
		c->pos -= 8;
		return bprof_cerr(c, BPROF_E_CORRUPT, "%llu slices for %llu count rows",
				  (unsigned long long)n, (unsigned long long)r->nr_counts);
	}
	for (uint64_t i = 0; i < n; i++)
		r->counts[i].slice = bprof_g32(c);
	return 0;
}

static const struct {
	const char *name;
	int (*parse)(struct bprof_cur *, struct bprof_recording *);
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
	[BPROF_SECT_PYTHON] = { "python", bprof_parse_runtime },
	[BPROF_SECT_JVM] = { "jvm", bprof_parse_runtime },
	[BPROF_SECT_JIT] = { "jit", bprof_parse_jit },
	[BPROF_SECT_V8] = { "v8", bprof_parse_runtime },
};

static const char *sect_label(uint32_t type, char *buf, size_t len)
{
	if (type >= 1 && type <= BPROF_SECT_LAST_KNOWN && sections[type].parse)
		snprintf(buf, len, "%s section", sections[type].name);
	else
		snprintf(buf, len, "section of type %u", type);
	return buf;
}

int bprof_parse_content(struct bprof_recording *r, const uint8_t *b, uint64_t len, bool strict,
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
			struct bprof_cur c = {
				.b = b + pos + BPROF_SECTION_HEADER_LEN,
				.len = slen,
				.base = pos + BPROF_SECTION_HEADER_LEN,
				.sect = sections[type].name,
				.type = type,
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
				return bprof_cerr(&c, BPROF_E_CORRUPT, "%llu unexpected bytes after the data",
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
