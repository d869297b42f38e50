/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recording.c - the in-memory model: lifetime, appenders, invariants,
 * lookups, error strings and the fallback hash.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

const uint8_t bprof_magic[BPROF_MAGIC_LEN] = { 0x89, 'B', 'P', 'R', 'O', 'F', '\r', '\n' };

static const struct {
	int code;
	const char *msg;
} errtab[] = {
	{ BPROF_OK, "success" },
	{ BPROF_E_IO, "input/output error" },
	{ BPROF_E_NOMEM, "out of memory" },
	{ BPROF_E_NOT_BPROF, "not a .bprof file" },
	{ BPROF_E_VERSION, "unsupported format version" },
	{ BPROF_E_ZSTD, "decompression failed" },
	{ BPROF_E_TRUNCATED, "truncated data" },
	{ BPROF_E_CORRUPT, "corrupt data" },
	{ BPROF_E_LIMIT, "reader limit exceeded" },
	{ BPROF_E_EXISTS, "file exists" },
	{ BPROF_E_INVAL, "invalid argument" },
};

const char *bprof_strerror(int code)
{
	for (size_t i = 0; i < sizeof(errtab) / sizeof(errtab[0]); i++)
		if (errtab[i].code == code)
			return errtab[i].msg;
	return "unknown error";
}

int bprof_set_error(struct bprof_error *err, int code, int sys_errno, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		err->code = code;
		err->sys_errno = sys_errno;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* ---- lifetime --------------------------------------------------------- */

int bprof_recording_create(struct bprof_recording **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : BPROF_E_NOMEM;
}

void bprof_recording_free(struct bprof_recording *rec)
{
	if (!rec)
		return;
	free(rec->meta.hostname);
	free(rec->meta.kernel_release);
	free(rec->meta.arch);
	free(rec->meta.recorder_version);
	free(rec->meta.options);
	free(rec->meta.event);
	free(rec->counts);
	if (rec->ips_block)
		free(rec->ips_block);
	else if (rec->stacks)
		for (uint64_t i = 0; i < rec->nr_stacks; i++)
			free(rec->stacks[i].ips);
	free(rec->stacks);
	if (rec->objects)
		for (uint64_t i = 0; i < rec->nr_objects; i++)
			free(rec->objects[i].path);
	free(rec->objects);
	if (rec->processes)
		for (uint64_t i = 0; i < rec->nr_processes; i++) {
			free(rec->processes[i].mappings);
			free(rec->processes[i].perf_map);
			free(rec->processes[i].history);
			free(rec->processes[i].gaps);
		}
	free(rec->processes);
	for (uint64_t i = 0; rec->images && i < rec->nr_images; i++)
		free(rec->images[i].data);
	free(rec->images);
	free(rec->unwind.misses);
	for (uint64_t i = 0; rec->python.codes && i < rec->python.nr_codes; i++) {
		free(rec->python.codes[i].qualname);
		free(rec->python.codes[i].filename);
		free(rec->python.codes[i].linetable);
	}
	free(rec->python.codes);
	free(rec->python.procs);
	for (uint64_t i = 0; rec->jvm.frames && i < rec->jvm.nr_frames; i++) {
		free(rec->jvm.frames[i].klass);
		free(rec->jvm.frames[i].method);
		free(rec->jvm.frames[i].signature);
		free(rec->jvm.frames[i].file);
		free(rec->jvm.frames[i].lines);
		free(rec->jvm.frames[i].scopes);
	}
	for (uint64_t i = 0; rec->jvm.procs && i < rec->jvm.nr_procs; i++)
		free(rec->jvm.procs[i].version);
	free(rec->jvm.frames);
	free(rec->jvm.procs);
	for (uint64_t i = 0; rec->jit.dumps && i < rec->jit.nr_dumps; i++)
		free(rec->jit.dumps[i].data);
	free(rec->jit.dumps);
	for (uint64_t i = 0; rec->v8.sfis && i < rec->v8.nr_sfis; i++) {
		free(rec->v8.sfis[i].name);
		free(rec->v8.sfis[i].script);
		bprof_v8_pos_free(rec->v8.sfis[i].pos, rec->v8.sfis[i].nr_pos);
	}
	free(rec->v8.sfis);
	free(rec->v8.procs);
	free(rec->kernel.release);
	if (rec->kernel.modules)
		for (uint32_t i = 0; i < rec->kernel.nr_modules; i++)
			free(rec->kernel.modules[i].name);
	free(rec->kernel.modules);
	if (rec->ksym_names)
		free(rec->ksym_names);
	else if (rec->kernel.ksyms)
		for (uint32_t i = 0; i < rec->kernel.nr_ksyms; i++)
			free(rec->kernel.ksyms[i].name);
	free(rec->kernel.ksyms);
	free(rec);
}

/* ---- appenders -------------------------------------------------------- */

/*
 * The recording has no capacity fields and callers may hang arrays of any
 * size on it, so the capacity is asked of the allocator itself
 * (malloc_usable_size, exact for every array that came from malloc); when
 * full, the array grows to the next power of two.  Amortized O(1) with any
 * allocator, including ASan's, whose realloc always moves.
 */
static int grow(void **arr, uint64_t nr, size_t elem)
{
	uint64_t cap = 16;
	void *p;

	if (nr + 1 > SIZE_MAX / elem)
		return BPROF_E_NOMEM;
	if (*arr && malloc_usable_size(*arr) >= (size_t)(nr + 1) * elem)
		return 0;
	while (cap < nr + 1)
		cap *= 2;
	if (cap > SIZE_MAX / elem)
		return BPROF_E_NOMEM;
	p = realloc(*arr, (size_t)cap * elem);
	if (!p)
		return BPROF_E_NOMEM;
	*arr = p;
	return 0;
}

int bprof_recording_add_count(struct bprof_recording *rec, const struct bprof_count *c)
{
	if (!rec || !c)
		return BPROF_E_INVAL;
	if (grow((void **)&rec->counts, rec->nr_counts, sizeof(*c)))
		return BPROF_E_NOMEM;
	rec->counts[rec->nr_counts++] = *c;
	return 0;
}

int bprof_recording_add_stack(struct bprof_recording *rec, const struct bprof_stack *s)
{
	/* a read recording's stacks share one block of ips (ips_block):
	 * a stack owning its own could not be freed */
	if (!rec || !s || rec->ips_block)
		return BPROF_E_INVAL;
	if (grow((void **)&rec->stacks, rec->nr_stacks, sizeof(*s)))
		return BPROF_E_NOMEM;
	rec->stacks[rec->nr_stacks++] = *s;
	return 0;
}

int bprof_recording_add_object(struct bprof_recording *rec, const struct bprof_object *o,
			       uint32_t *index_out)
{
	if (!rec || !o)
		return BPROF_E_INVAL;
	if (rec->nr_objects >= BPROF_NO_OBJECT)
		return BPROF_E_LIMIT;
	if (grow((void **)&rec->objects, rec->nr_objects, sizeof(*o)))
		return BPROF_E_NOMEM;
	if (index_out)
		*index_out = (uint32_t)rec->nr_objects;
	rec->objects[rec->nr_objects++] = *o;
	return 0;
}

int bprof_recording_add_process(struct bprof_recording *rec, const struct bprof_process *p)
{
	if (!rec || !p)
		return BPROF_E_INVAL;
	if (grow((void **)&rec->processes, rec->nr_processes, sizeof(*p)))
		return BPROF_E_NOMEM;
	rec->processes[rec->nr_processes++] = *p;
	return 0;
}

/* ---- invariants ------------------------------------------------------- */

static int cmp_stack(const void *a, const void *b)
{
	uint32_t x = ((const struct bprof_stack *)a)->id, y = ((const struct bprof_stack *)b)->id;

	return (x > y) - (x < y);
}

static int cmp_process(const void *a, const void *b)
{
	const struct bprof_process *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->exec_id > y->exec_id) - (x->exec_id < y->exec_id);
}

static int cmp_mapping(const void *a, const void *b)
{
	uint64_t x = ((const struct bprof_mapping *)a)->start;
	uint64_t y = ((const struct bprof_mapping *)b)->start;

	return (x > y) - (x < y);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct bprof_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static bool comm_ok(const char *comm)
{
	return memchr(comm, '\0', BPROF_COMM_LEN) != NULL;
}

static bool build_id_ok(uint32_t len, bool has_flag)
{
	return len <= BPROF_BUILD_ID_MAX && (len > 0) == has_flag;
}

/* What is wrong with the ACCESS data, or NULL. */
static const char *access_invalid(const struct bprof_access *a, bool strict_flags)
{
	if (a->present > 1)
		return "access.present is neither 0 nor 1";
	if (strict_flags && (a->flags & ~BPROF_ACCESS_FLAGS_ALL))
		return "access flags have undefined bits";
	if (!a->present) {
		/* data the writer would silently drop */
		if (a->flags || a->euid || a->capabilities)
			return "access flags, euid or capabilities set but access.present is 0";
		for (int i = 0; i < BPROF_ACC_NR_COUNTERS; i++)
			if (a->counters[i])
				return "access counters set but access.present is 0";
	}
	return NULL;
}

int bprof_validate_impl(struct bprof_recording *rec, struct bprof_error *err, int code,
			bool sort, bool strict_flags)
{
	const char *what = code == BPROF_E_INVAL ? "recording" : "file";
	const char *err_access;

	if (!rec)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "recording is NULL");
	if ((rec->nr_counts && !rec->counts) || (rec->nr_stacks && !rec->stacks) ||
	    (rec->nr_objects && !rec->objects) || (rec->nr_processes && !rec->processes) ||
	    (rec->kernel.nr_modules && !rec->kernel.modules) ||
	    (rec->kernel.nr_ksyms && !rec->kernel.ksyms))
		return bprof_set_error(err, code, 0, "%s: a table has entries but no array", what);
	if (strict_flags && (rec->meta.flags & ~BPROF_META_ALL_FLAGS))
		return bprof_set_error(err, code, 0, "%s: meta flags 0x%x has undefined bits", what,
				       rec->meta.flags);

	/* stacks: sorted by id, unique */
	if (sort && rec->nr_stacks > 1)
		qsort(rec->stacks, rec->nr_stacks, sizeof(*rec->stacks), cmp_stack);
	for (uint64_t i = 0; i < rec->nr_stacks; i++) {
		const struct bprof_stack *s = &rec->stacks[i];

		if (s->id > INT32_MAX)
			return bprof_set_error(err, code, 0, "%s: stack id %u exceeds INT32_MAX", what,
					       s->id);
		if (i > 0 && s->id <= rec->stacks[i - 1].id)
			return bprof_set_error(err, code, 0,
					       "%s: stack id %u is duplicated or out of order", what,
					       s->id);
		if (s->nr_ips > BPROF_MAX_STACK_DEPTH)
			return bprof_set_error(err, code, 0, "%s: stack %u has %u ips (max %u)", what,
					       s->id, s->nr_ips, BPROF_MAX_STACK_DEPTH);
		if (s->nr_ips && !s->ips)
			return bprof_set_error(err, code, 0, "%s: stack %u has no ips array", what,
					       s->id);
		if (s->flags && s->id < BPROF_STACK_ID_UNWOUND)
			return bprof_set_error(err, code, 0,
					       "%s: stack %u has unwinder flags but an id below 2^30",
					       what, s->id);
		if (strict_flags && (s->flags & ~BPROF_USTACK_FLAGS_ALL))
			return bprof_set_error(err, code, 0, "%s: stack %u: undefined flags 0x%x",
					       what, s->id, s->flags);
		if (s->flags && rec->unwind.mode == BPROF_UNWIND_UNKNOWN)
			return bprof_set_error(err, code, 0,
					       "%s: stack %u has unwinder flags but the unwind mode is not set",
					       what, s->id);
	}
	if (rec->nr_images && !rec->images)
		return bprof_set_error(err, code, 0, "%s: images without an array", what);
	for (uint64_t i = 0; i < rec->nr_images; i++) {
		const struct bprof_image *im = &rec->images[i];

		if (im->object_index >= rec->nr_objects ||
		    (i && im->object_index <= rec->images[i - 1].object_index))
			return bprof_set_error(err, code, 0,
					       "%s: image %llu: object %u missing, duplicated or out of order",
					       what, (unsigned long long)i, im->object_index);
		if (!im->len || im->len > BPROF_IMAGE_MAX || !im->data)
			return bprof_set_error(err, code, 0, "%s: image %llu: %llu bytes (1..%u)",
					       what, (unsigned long long)i, (unsigned long long)im->len,
					       BPROF_IMAGE_MAX);
	}
	if (strict_flags && rec->unwind.mode > BPROF_UNWIND_CFI)
		return bprof_set_error(err, code, 0, "%s: unwind mode %u is undefined", what,
				       rec->unwind.mode);
	if (strict_flags && (rec->unwind.flags & ~BPROF_UNWIND_WALKED))
		return bprof_set_error(err, code, 0, "%s: unwind flags 0x%x has undefined bits",
				       what, rec->unwind.flags);
	if (rec->unwind.flags && rec->unwind.mode == BPROF_UNWIND_UNKNOWN)
		return bprof_set_error(err, code, 0, "%s: unwind flags set but no unwind mode",
				       what);
	if (rec->unwind.nr_misses && (rec->unwind.mode == BPROF_UNWIND_UNKNOWN || !rec->unwind.misses))
		return bprof_set_error(err, code, 0, "%s: unwind misses without an unwind section",
				       what);
	for (uint32_t i = 0; i < rec->unwind.nr_misses; i++) {
		const struct bprof_unwind_miss *m = &rec->unwind.misses[i];

		if (m->object_index >= rec->nr_objects ||
		    (i && m->object_index <= rec->unwind.misses[i - 1].object_index))
			return bprof_set_error(err, code, 0,
					       "%s: unwind miss %u: object %u missing, duplicated or out of order",
					       what, i, m->object_index);
		if (!m->rows)
			return bprof_set_error(err, code, 0, "%s: unwind miss %u: 0 rows", what, i);
		if (strict_flags && (m->flags & ~BPROF_UNWIND_MISS_SAMPLED))
			return bprof_set_error(err, code, 0, "%s: unwind miss %u: flags 0x%x has undefined bits",
					       what, i, m->flags);
	}
	if ((err_access = access_invalid(&rec->access, strict_flags)))
		return bprof_set_error(err, code, 0, "%s: %s", what, err_access);
	if (rec->offcpu.mode > BPROF_OFFCPU_WALL)
		return bprof_set_error(err, code, 0, "%s: off-CPU mode %u", what, rec->offcpu.mode);
	if (rec->offcpu.mode && !rec->offcpu.period_ns)
		return bprof_set_error(err, code, 0, "%s: off-CPU period of 0 ns", what);

	/* counts: stack ids >= 0 must exist */
	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		const struct bprof_count *c = &rec->counts[i];

		if (!comm_ok(c->comm))
			return bprof_set_error(err, code, 0, "%s: count %llu: comm not NUL-terminated",
					       what, (unsigned long long)i);
		if (c->state > BPROF_STATE_MAX)
			return bprof_set_error(err, code, 0, "%s: count %llu: thread state %u is not one of 0..%d",
					       what, (unsigned long long)i, c->state, BPROF_STATE_MAX);
		if (c->state != BPROF_STATE_ON_CPU && rec->offcpu.mode == BPROF_OFFCPU_NONE)
			return bprof_set_error(err, code, 0, "%s: count %llu: an off-CPU row but no off-CPU mode",
					       what, (unsigned long long)i);
		if (c->state == BPROF_STATE_R && rec->offcpu.mode != BPROF_OFFCPU_WALL)
			return bprof_set_error(err, code, 0, "%s: count %llu: runnable time in a recording without --wall",
					       what, (unsigned long long)i);
		if (c->slice && !rec->slices.slice_ns)
			return bprof_set_error(err, code, 0, "%s: count %llu: time slice %u in a recording without slices",
					       what, (unsigned long long)i, c->slice);
		if (c->state == BPROF_STATE_ON_CPU && c->blocked_ns)
			return bprof_set_error(err, code, 0, "%s: count %llu: an on-CPU row with blocked time",
					       what, (unsigned long long)i);
		if (c->user_stack_id >= 0 && !bprof_recording_stack(rec, c->user_stack_id))
			return bprof_set_error(err, code, 0,
					       "%s: count %llu: user stack id %d does not exist", what,
					       (unsigned long long)i, c->user_stack_id);
		if (c->kernel_stack_id >= 0 && !bprof_recording_stack(rec, c->kernel_stack_id))
			return bprof_set_error(err, code, 0,
					       "%s: count %llu: kernel stack id %d does not exist",
					       what, (unsigned long long)i, c->kernel_stack_id);
	}

	/* objects */
	if (rec->nr_objects >= BPROF_NO_OBJECT)
		return bprof_set_error(err, BPROF_E_LIMIT, 0, "%s: too many objects", what);
	for (uint64_t i = 0; i < rec->nr_objects; i++) {
		const struct bprof_object *o = &rec->objects[i];

		if (!build_id_ok(o->build_id_len, o->flags & BPROF_OBJ_HAS_BUILD_ID))
			return bprof_set_error(
				err, code, 0,
				"%s: object %llu: build-id length %u does not match flags 0x%x (max %d)",
				what, (unsigned long long)i, o->build_id_len, o->flags,
				BPROF_BUILD_ID_MAX);
		if (strict_flags && (o->flags & ~BPROF_OBJ_ALL_FLAGS))
			return bprof_set_error(err, code, 0,
					       "%s: object %llu: flags 0x%x has undefined bits", what,
					       (unsigned long long)i, o->flags);
	}

	/* processes: sorted by (pid, exec_id), unique; mappings sorted, disjoint */
	if (sort && rec->nr_processes > 1)
		qsort(rec->processes, rec->nr_processes, sizeof(*rec->processes), cmp_process);
	for (uint64_t i = 0; i < rec->nr_processes; i++) {
		struct bprof_process *p = &rec->processes[i];

		if (i > 0 && cmp_process(&rec->processes[i - 1], p) >= 0)
			return bprof_set_error(
				err, code, 0, "%s: process pid %u exec_id %u duplicated or out of order",
				what, p->pid, p->exec_id);
		if (!comm_ok(p->comm))
			return bprof_set_error(err, code, 0, "%s: process %u: comm not NUL-terminated",
					       what, p->pid);
		if (p->nr_mappings && !p->mappings)
			return bprof_set_error(err, code, 0, "%s: process %u: no mappings array", what,
					       p->pid);
		if (p->perf_map_len && !p->perf_map)
			return bprof_set_error(err, code, 0, "%s: process %u: no perf map buffer", what,
					       p->pid);
		if (sort && p->nr_mappings > 1)
			qsort(p->mappings, p->nr_mappings, sizeof(*p->mappings), cmp_mapping);
		for (uint32_t j = 0; j < p->nr_mappings; j++) {
			const struct bprof_mapping *m = &p->mappings[j];

			if (m->start >= m->end)
				return bprof_set_error(
					err, code, 0,
					"%s: process %u mapping %u: start 0x%llx >= end 0x%llx", what,
					p->pid, j, (unsigned long long)m->start,
					(unsigned long long)m->end);
			if (j > 0 && m->start < p->mappings[j - 1].end)
				return bprof_set_error(
					err, code, 0,
					"%s: process %u mapping %u at 0x%llx overlaps or precedes the previous one",
					what, p->pid, j, (unsigned long long)m->start);
			if (m->object_index != BPROF_NO_OBJECT && m->object_index >= rec->nr_objects)
				return bprof_set_error(
					err, code, 0,
					"%s: process %u mapping %u: object index %u out of range (%llu objects)",
					what, p->pid, j, m->object_index,
					(unsigned long long)rec->nr_objects);
			if (strict_flags && (m->flags & ~BPROF_MAP_ALL_FLAGS))
				return bprof_set_error(
					err, code, 0, "%s: process %u mapping %u: flags 0x%x undefined",
					what, p->pid, j, m->flags);
		}
		/* generations (1.3): history entries as mappings, but in any
		 * order; gaps increasing from 1 */
		if (!p->has_gens && (p->nr_history || p->nr_gaps))
			return bprof_set_error(err, code, 0,
					       "%s: process %u: history or gaps without has_gens", what,
					       p->pid);
		if ((p->nr_history && !p->history) || (p->nr_gaps && !p->gaps))
			return bprof_set_error(err, code, 0, "%s: process %u: no history/gaps array",
					       what, p->pid);
		for (uint32_t j = 0; j < p->nr_history; j++) {
			const struct bprof_mapping *m = &p->history[j];

			if (m->start >= m->end ||
			    (m->object_index != BPROF_NO_OBJECT && m->object_index >= rec->nr_objects) ||
			    (strict_flags && (m->flags & ~BPROF_MAP_ALL_FLAGS)))
				return bprof_set_error(err, code, 0,
						       "%s: process %u history mapping %u is invalid", what,
						       p->pid, j);
		}
		for (uint32_t j = 0; j < p->nr_gaps; j++)
			if (!p->gaps[j] || (j && p->gaps[j] <= p->gaps[j - 1]))
				return bprof_set_error(err, code, 0,
						       "%s: process %u gap %u (%u) is 0 or not increasing",
						       what, p->pid, j, p->gaps[j]);
	}

	/* kernel */
	{
		struct bprof_kernel *k = &rec->kernel;

		if (k->build_id_len > BPROF_BUILD_ID_MAX)
			return bprof_set_error(err, code, 0, "%s: kernel build-id length %u > %d",
					       what, k->build_id_len, BPROF_BUILD_ID_MAX);
		if (strict_flags && (k->flags & ~BPROF_KERNEL_ALL_FLAGS))
			return bprof_set_error(err, code, 0,
					       "%s: kernel flags 0x%x has undefined bits", what,
					       k->flags);
		if (k->nr_modules > BPROF_MAX_MODULES || k->nr_ksyms > BPROF_MAX_KSYMS)
			return bprof_set_error(err, BPROF_E_LIMIT, 0,
					       "%s: %u modules / %u ksyms exceed the limits %u / %u",
					       what, k->nr_modules, k->nr_ksyms, BPROF_MAX_MODULES,
					       BPROF_MAX_KSYMS);
		for (uint32_t i = 0; i < k->nr_modules; i++) {
			const struct bprof_module *m = &k->modules[i];

			if (m->build_id_len > BPROF_BUILD_ID_MAX)
				return bprof_set_error(err, code, 0,
						       "%s: module %u build-id length %u > %d", what,
						       i, m->build_id_len, BPROF_BUILD_ID_MAX);
			if (m->base + m->size < m->base)
				return bprof_set_error(err, code, 0,
						       "%s: module %u: base + size overflows", what, i);
		}
		for (uint32_t i = 0; i < k->nr_ksyms; i++) {
			if (i > 0 && k->ksyms[i].addr < k->ksyms[i - 1].addr) {
				if (!sort)
					return bprof_set_error(err, code, 0,
							       "%s: ksym %u out of address order",
							       what, i);
				qsort(k->ksyms, k->nr_ksyms, sizeof(*k->ksyms), cmp_ksym);
				break;
			}
		}
		for (uint32_t i = 0; i < k->nr_ksyms; i++) {
			uint32_t mi = k->ksyms[i].module_index;

			if (mi != BPROF_NO_OBJECT && mi >= k->nr_modules)
				return bprof_set_error(
					err, code, 0, "%s: ksym %u: module index %u out of range (%u)",
					what, i, mi, k->nr_modules);
		}
	}
	return 0;
}

static int cmp_py_proc(const void *a, const void *b)
{
	const struct bprof_python_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exec_id < y->exec_id ? -1 : x->exec_id > y->exec_id;
}

int bprof_python_code_cmp(const void *a, const void *b)
{
	const struct bprof_python_code *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->exec_id != y->exec_id)
		return x->exec_id < y->exec_id ? -1 : 1;
	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->guard < y->guard ? -1 : x->guard > y->guard;
}

/* The PYTHON section (SPEC.md 6.15): sorted, unique, within the limits. */
static int validate_python(struct bprof_recording *rec, struct bprof_error *err)
{
	struct bprof_python *py = &rec->python;

	if (!py->present)
		return 0;
	if (py->nr_counters > 256)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "python: %u counters", py->nr_counters);
	if (py->nr_procs)
		qsort(py->procs, py->nr_procs, sizeof(*py->procs), cmp_py_proc);
	if (py->nr_codes)
		qsort(py->codes, py->nr_codes, sizeof(*py->codes), bprof_python_code_cmp);
	for (uint64_t i = 0; i < py->nr_procs; i++)
		if ((i && !cmp_py_proc(&py->procs[i], &py->procs[i - 1])) ||
		    py->procs[i].status > BPROF_PY_STATUS_MAX)
			return bprof_set_error(err, BPROF_E_INVAL, 0, "python process %llu (pid %u)",
					       (unsigned long long)i, py->procs[i].pid);
	for (uint64_t i = 0; i < py->nr_codes; i++) {
		const struct bprof_python_code *c = &py->codes[i];

		if ((i && !bprof_python_code_cmp(c, c - 1)) ||
		    (c->qualname && strlen(c->qualname) > BPROF_PY_NAME_MAX) ||
		    (c->filename && strlen(c->filename) > BPROF_PY_NAME_MAX) ||
		    c->linetable_len > BPROF_PY_LINETABLE_MAX || (c->linetable_len && !c->linetable))
			return bprof_set_error(err, BPROF_E_INVAL, 0, "python code %llu (pid %u)",
					       (unsigned long long)i, c->pid);
	}
	return 0;
}

void bprof_v8_pos_free(struct bprof_v8_pos *pos, uint32_t nr)
{
	for (uint32_t j = 0; pos && j < nr; j++) {
		for (uint32_t k = 0; pos[j].frames && k < pos[j].nr_frames; k++) {
			free(pos[j].frames[k].name);
			free(pos[j].frames[k].script);
		}
		free(pos[j].frames);
	}
	free(pos);
}

static int cmp_v8_proc(const void *a, const void *b)
{
	const struct bprof_v8_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exec_id < y->exec_id ? -1 : x->exec_id > y->exec_id;
}

int bprof_v8_sfi_cmp(const void *a, const void *b)
{
	const struct bprof_v8_sfi *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->exec_id != y->exec_id)
		return x->exec_id < y->exec_id ? -1 : 1;
	if (x->sfi != y->sfi)
		return x->sfi < y->sfi ? -1 : 1;
	return x->guard < y->guard ? -1 : x->guard > y->guard;
}

/* The V8 section (SPEC.md 6.17): sorted, unique, within the limits. */
static int validate_v8(struct bprof_recording *rec, struct bprof_error *err)
{
	struct bprof_v8 *v = &rec->v8;

	if (!v->present)
		return (v->nr_procs || v->nr_sfis) ? bprof_set_error(err, BPROF_E_INVAL, 0, "v8: entries without the section") : 0;
	if (v->nr_counters > 256)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "v8: %u counters", v->nr_counters);
	if (v->nr_procs)
		qsort(v->procs, v->nr_procs, sizeof(*v->procs), cmp_v8_proc);
	if (v->nr_sfis)
		qsort(v->sfis, v->nr_sfis, sizeof(*v->sfis), bprof_v8_sfi_cmp);
	for (uint64_t i = 0; i < v->nr_procs; i++)
		if ((i && !cmp_v8_proc(&v->procs[i], &v->procs[i - 1])) ||
		    v->procs[i].status > BPROF_V8_STATUS_MAX)
			return bprof_set_error(err, BPROF_E_INVAL, 0, "v8 process %llu (pid %u)",
					       (unsigned long long)i, v->procs[i].pid);
	for (uint64_t i = 0; i < v->nr_sfis; i++) {
		const struct bprof_v8_sfi *f = &v->sfis[i];

		bool bad = (i && !bprof_v8_sfi_cmp(f, f - 1)) || f->line < 0 ||
			   (f->name && strlen(f->name) > BPROF_V8_NAME_MAX) ||
			   (f->script && strlen(f->script) > BPROF_V8_NAME_MAX) ||
			   f->nr_pos > BPROF_V8_POS_MAX || (f->nr_pos && !f->pos);

		for (uint32_t j = 0; !bad && j < f->nr_pos; j++) {
			const struct bprof_v8_pos *r = &f->pos[j];

			bad = (j && r->code_offset <= r[-1].code_offset) || !r->nr_frames ||
			      r->nr_frames > BPROF_V8_INLINE_MAX || !r->frames;
			for (uint32_t k = 0; !bad && k < r->nr_frames; k++)
				bad = r->frames[k].line < 0 ||
				      (r->frames[k].name && strlen(r->frames[k].name) > BPROF_V8_NAME_MAX) ||
				      (r->frames[k].script &&
				       strlen(r->frames[k].script) > BPROF_V8_NAME_MAX);
		}
		if (bad)
			return bprof_set_error(err, BPROF_E_INVAL, 0, "v8 SFI %llu (pid %u)",
					       (unsigned long long)i, f->pid);
	}
	return 0;
}

static const char *const v8_counter_names[BPROF_V8_NR_COUNTERS] = {
	"sfis_announced", "sfis_named", "sfis_changed", "sfis_unreadable",
	"codes_asked", "codes_found", "codes_missed",
};

const char *bprof_v8_counter_name(unsigned i)
{
	return i < BPROF_V8_NR_COUNTERS ? v8_counter_names[i] : NULL;
}

const struct bprof_v8_sfi *bprof_v8_sfi_find(const struct bprof_recording *rec, uint32_t pid,
					     uint32_t exec_id, uint64_t sfi, uint32_t guard)
{
	const struct bprof_v8_sfi key = { .pid = pid, .exec_id = exec_id, .sfi = sfi, .guard = guard };
	size_t lo = 0, hi = rec->v8.nr_sfis;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = bprof_v8_sfi_cmp(&rec->v8.sfis[mid], &key);

		if (!cmp)
			return &rec->v8.sfis[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int validate_jit(const struct bprof_recording *rec, struct bprof_error *err)
{
	const struct bprof_jit *j = &rec->jit;

	if (!j->present && (j->nr_dumps || j->dumps))
		return bprof_set_error(err, BPROF_E_INVAL, 0, "jit: dumps without the section");
	for (uint64_t i = 0; i < j->nr_dumps; i++) {
		const struct bprof_jitdump *d = &j->dumps[i];

		if ((d->len && !d->data) ||
		    (i && ((uint64_t)d->pid << 32 | d->exec_id) <=
				  ((uint64_t)d[-1].pid << 32 | d[-1].exec_id)))
			return bprof_set_error(err, BPROF_E_INVAL, 0, "jitdump %llu (pid %u)",
					       (unsigned long long)i, d->pid);
	}
	return 0;
}

static int cmp_jvm_proc(const void *a, const void *b)
{
	const struct bprof_jvm_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exec_id < y->exec_id ? -1 : x->exec_id > y->exec_id;
}

int bprof_jvm_frame_cmp(const void *a, const void *b)
{
	const struct bprof_jvm_frame *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->exec_id != y->exec_id)
		return x->exec_id < y->exec_id ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->guard < y->guard ? -1 : x->guard > y->guard;
}

static bool jvm_str_ok(const char *s)
{
	return !s || strlen(s) <= BPROF_JVM_NAME_MAX;
}

/* The JVM section (SPEC.md 6.18): sorted, unique, within the limits. */
static int validate_jvm(struct bprof_recording *rec, struct bprof_error *err)
{
	struct bprof_jvm *j = &rec->jvm;

	if (!j->present)
		return 0;
	if (j->nr_counters > BPROF_JVM_MAX_COUNTERS)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "jvm: %u counters", j->nr_counters);
	if (j->nr_procs)
		qsort(j->procs, j->nr_procs, sizeof(*j->procs), cmp_jvm_proc);
	if (j->nr_frames)
		qsort(j->frames, j->nr_frames, sizeof(*j->frames), bprof_jvm_frame_cmp);
	for (uint64_t i = 0; i < j->nr_procs; i++)
		if ((i && !cmp_jvm_proc(&j->procs[i], &j->procs[i - 1])) ||
		    j->procs[i].status > BPROF_JVM_STATUS_MAX || !jvm_str_ok(j->procs[i].version))
			return bprof_set_error(err, BPROF_E_INVAL, 0, "jvm process %llu (pid %u)",
					       (unsigned long long)i, j->procs[i].pid);
	for (uint64_t i = 0; i < j->nr_frames; i++) {
		const struct bprof_jvm_frame *f = &j->frames[i];

		if ((i && !bprof_jvm_frame_cmp(f, f - 1)) || !f->kind ||
		    f->kind > BPROF_JVM_KIND_MAX || !jvm_str_ok(f->klass) || !jvm_str_ok(f->method) ||
		    !jvm_str_ok(f->signature) || !jvm_str_ok(f->file) ||
		    f->lines_len > BPROF_JVM_LINES_MAX || (f->lines_len && !f->lines) ||
		    f->scopes_len > BPROF_JVM_SCOPES_MAX || (f->scopes_len && !f->scopes))
			return bprof_set_error(err, BPROF_E_INVAL, 0, "jvm frame %llu (pid %u)",
					       (unsigned long long)i, f->pid);
	}
	return 0;
}

int bprof_recording_validate(struct bprof_recording *rec, struct bprof_error *err)
{
	int rc = rec ? validate_python(rec, err) : 0;

	if (!rc && rec)
		rc = validate_jit(rec, err);
	if (!rc && rec)
		rc = validate_v8(rec, err);
	if (!rc && rec)
		rc = validate_jvm(rec, err);

	return rc ? rc : bprof_validate_impl(rec, err, BPROF_E_INVAL, true, true);
}

static const char *const unwind_counter_names[BPROF_UNW_NR_COUNTERS] = {
	[BPROF_UNW_SAMPLES] = "samples",
	[BPROF_UNW_SAMPLES_COMPLETE] = "samples_complete",
	[BPROF_UNW_SAMPLES_TRUNCATED] = "samples_truncated",
	[BPROF_UNW_SAMPLES_NO_IMAGE_TABLE] = "samples_no_image_table",
	[BPROF_UNW_SAMPLES_TABLE_PENDING] = "samples_table_pending",
	[BPROF_UNW_FRAMES_TABLE] = "frames_table",
	[BPROF_UNW_FRAMES_FP] = "frames_fp",
	[BPROF_UNW_FALLBACK_NO_MAPPING] = "fallback_no_mapping",
	[BPROF_UNW_FALLBACK_NO_TABLE] = "fallback_no_table",
	[BPROF_UNW_FALLBACK_PENDING] = "fallback_pending",
	[BPROF_UNW_FALLBACK_NO_ROW] = "fallback_no_row",
	[BPROF_UNW_STOP_INVALID] = "stop_invalid",
	[BPROF_UNW_STOP_UNREADABLE] = "stop_unreadable",
	[BPROF_UNW_STOP_BAD_FRAME] = "stop_bad_frame",
	[BPROF_UNW_STOP_NEEDS_REGISTERS] = "stop_needs_registers",
	[BPROF_UNW_OBJECTS_LOADED] = "objects_loaded",
	[BPROF_UNW_OBJECTS_SHARED] = "objects_shared",
	[BPROF_UNW_OBJECTS_NO_TABLE] = "objects_no_table",
	[BPROF_UNW_OBJECTS_FAILED] = "objects_failed",
	[BPROF_UNW_TABLE_ROWS] = "table_rows",
	[BPROF_UNW_TABLE_RULES] = "table_rules",
	[BPROF_UNW_TABLE_PAGES] = "table_pages",
	[BPROF_UNW_IMAGES] = "images",
	[BPROF_UNW_IMAGE_FAILURES] = "image_failures",
	[BPROF_UNW_TABLE_BYTES] = "table_bytes",
	[BPROF_UNW_BUILD_NS] = "build_ns",
	[BPROF_UNW_LOAD_NS] = "load_ns",
	[BPROF_UNW_SAMPLES_TABLE_NO_ROOM] = "samples_table_no_room",
	[BPROF_UNW_FALLBACK_NO_ROOM] = "fallback_no_room",
	[BPROF_UNW_OBJECTS_EVICTED] = "objects_evicted",
	[BPROF_UNW_OBJECTS_RELOADED] = "objects_reloaded",
	[BPROF_UNW_TABLE_BYTES_PEAK] = "table_bytes_peak",
	[BPROF_UNW_MEMORY_BUDGET] = "memory_budget",
	[BPROF_UNW_SAMPLES_STALE_MAPPINGS] = "samples_stale_mappings",
};

const char *bprof_unwind_counter_name(unsigned i)
{
	return i < BPROF_UNW_NR_COUNTERS ? unwind_counter_names[i] : NULL;
}

static const char *const access_counter_names[BPROF_ACC_NR_COUNTERS] = {
	[BPROF_ACC_OBJECTS_BY_PATH] = "objects_by_path",
	[BPROF_ACC_OBJECTS_UNVERIFIED] = "objects_unverified",
	[BPROF_ACC_OBJECTS_DENIED] = "objects_denied",
	[BPROF_ACC_PROCESSES_DENIED] = "processes_denied",
};

const char *bprof_access_counter_name(unsigned i)
{
	return i < BPROF_ACC_NR_COUNTERS ? access_counter_names[i] : NULL;
}

const char *bprof_unwind_mode_name(uint32_t mode)
{
	switch (mode) {
	case BPROF_UNWIND_FP: return "fp";
	case BPROF_UNWIND_AUTO: return "auto";
	case BPROF_UNWIND_CFI: return "cfi";
	}
	return "unknown";
}

/* ---- lookups ---------------------------------------------------------- */

const struct bprof_stack *bprof_recording_stack(const struct bprof_recording *rec, int32_t id)
{
	uint64_t lo = 0, hi;

	if (!rec || id < 0)
		return NULL;
	hi = rec->nr_stacks;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint32_t mid_id = rec->stacks[mid].id;

		if (mid_id == (uint32_t)id)
			return &rec->stacks[mid];
		if (mid_id < (uint32_t)id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct bprof_process *bprof_recording_process(const struct bprof_recording *rec,
						     uint32_t pid, uint32_t exec_id)
{
	const struct bprof_process *best = NULL;
	uint64_t lo = 0, hi;

	if (!rec)
		return NULL;
	/* first snapshot with this pid */
	hi = rec->nr_processes;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (rec->processes[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint64_t i = lo; i < rec->nr_processes && rec->processes[i].pid == pid; i++) {
		const struct bprof_process *p = &rec->processes[i];

		if (p->exec_id == exec_id)
			return p;
		if (!best || p->snapshot_ns >= best->snapshot_ns)
			best = p;
	}
	return best;
}

/* ---- fallback hash ---------------------------------------------------- */

#define FNV64_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV64_PRIME UINT64_C(0x100000001b3)
#define FALLBACK_CHUNK 4096

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= FNV64_PRIME;
	}
	return h;
}

static int pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return BPROF_E_IO;
		if (r == 0) { /* the file shrank under us */
			errno = EIO;
			return BPROF_E_IO;
		}
		done += (size_t)r;
	}
	return 0;
}

int bprof_fallback_hash(int fd, uint64_t *out)
{
	uint8_t buf[FALLBACK_CHUNK], le[8];
	struct stat st;
	uint64_t size, n, h = FNV64_OFFSET;

	if (fstat(fd, &st) < 0)
		return BPROF_E_IO;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return BPROF_E_IO;
	}
	size = (uint64_t)st.st_size;
	n = size < FALLBACK_CHUNK ? size : FALLBACK_CHUNK;
	bprof_put64(le, size);
	h = fnv1a(h, le, sizeof(le));
	if (pread_full(fd, buf, (size_t)n, 0))
		return BPROF_E_IO;
	h = fnv1a(h, buf, (size_t)n);
	if (pread_full(fd, buf, (size_t)n, size - n))
		return BPROF_E_IO;
	h = fnv1a(h, buf, (size_t)n);
	*out = h;
	return 0;
}

/* The offset in its object of addr in mapping m. */
static uint64_t map_offset(const struct bprof_mapping *m, uint64_t addr)
{
	return m->file_offset + (addr - m->start);
}

static int same_meaning(const struct bprof_mapping *a, const struct bprof_mapping *b, uint64_t addr)
{
	/* memory without an object has no offset to disagree on: a recorder
	 * may give anonymous memory its page offset (mmap's vm_pgoff is the
	 * address for it) in one read and 0 in another */
	return a->object_index == b->object_index &&
	       (a->flags & BPROF_MAP_ANON) == (b->flags & BPROF_MAP_ANON) &&
	       (a->object_index == BPROF_NO_OBJECT || map_offset(a, addr) == map_offset(b, addr));
}

/* One candidate (SPEC.md 6.12): keep the greatest birth <= gen; two of
 * that birth that disagree make the address unknowable. */
static void consider(const struct bprof_mapping *m, uint64_t addr, uint32_t gen,
		     const struct bprof_mapping **best, int *clash)
{
	if (addr < m->start || addr >= m->end || m->birth > gen)
		return;
	if (!*best || m->birth > (*best)->birth) {
		*best = m;
		*clash = 0;
	} else if (m->birth == (*best)->birth && !same_meaning(m, *best, addr)) {
		*clash = 1;
	}
}

int bprof_process_mapping_at(const struct bprof_process *p, uint64_t addr, uint32_t gen,
			     const struct bprof_mapping **out)
{
	const struct bprof_mapping *best = NULL;
	size_t lo = 0, hi = p->nr_mappings;
	int clash = 0;

	*out = NULL;
	if (p->has_gens && gen == BPROF_GEN_UNKNOWN)
		return -1;
	/* PROCESSES' mappings are sorted and disjoint: at most one holds addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->mappings[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!p->has_gens) {
		if (lo && addr < p->mappings[lo - 1].end)
			*out = &p->mappings[lo - 1];
		return *out != NULL;
	}
	if (lo)
		consider(&p->mappings[lo - 1], addr, gen, &best, &clash);
	for (uint32_t i = 0; i < p->nr_history; i++)
		consider(&p->history[i], addr, gen, &best, &clash);
	if (!best)
		return 0;
	for (uint32_t i = 0; i < p->nr_gaps; i++)
		if (p->gaps[i] > best->birth && p->gaps[i] <= gen)
			return -1;
	if (clash)
		return -1;
	*out = best;
	return 1;
}

static const char *const python_counter_names[BPROF_PY_NR_COUNTERS] = {
	"samples", "frames", "no_thread_state", "thread_list_walks", "stop_unreadable",
	"stop_not_code", "stop_bad_instruction", "stop_loop", "stop_depth", "codes_announced",
	"codes_lost", "codes_copied", "codes_changed", "codes_unreadable", "codes_read_live", NULL,
};

const char *bprof_python_counter_name(unsigned i)
{
	return i < BPROF_PY_NR_COUNTERS ? python_counter_names[i] : NULL;
}

const struct bprof_python_code *bprof_python_code_find(const struct bprof_recording *rec,
						      uint32_t pid, uint32_t exec_id,
						      uint64_t code, uint32_t guard)
{
	const struct bprof_python_code key = { .pid = pid, .exec_id = exec_id, .code = code,
					       .guard = guard };
	size_t lo = 0, hi = rec->python.nr_codes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bprof_python_code *e = &rec->python.codes[mid];
		int cmp = bprof_python_code_cmp(e, &key);

		if (!cmp)
			return e;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const char *const jvm_counter_names[] = {
	"frames_interpreted", "frames_compiled", "stop_unreadable", "stop_no_blob",
	"stop_bad_frame", "stop_bad_bcp", "leaf_edge", "announced", "announce_lost",
	"named", "unnamed", "guard_mismatch",
};

const char *bprof_jvm_counter_name(unsigned i)
{
	return i < sizeof(jvm_counter_names) / sizeof(jvm_counter_names[0]) ? jvm_counter_names[i]
									     : NULL;
}

const struct bprof_jvm_frame *bprof_jvm_frame_find(const struct bprof_recording *rec,
						   uint32_t pid, uint32_t exec_id,
						   uint64_t id, uint32_t guard)
{
	const struct bprof_jvm_frame key = { .pid = pid, .exec_id = exec_id, .id = id,
					     .guard = guard };
	size_t lo = 0, hi = rec->jvm.nr_frames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = bprof_jvm_frame_cmp(&rec->jvm.frames[mid], &key);

		if (!cmp)
			return &rec->jvm.frames[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const char *const jit_counter_names[BPROF_JIT_NR_COUNTERS] = {
	"perf_map_bytes", "perf_map_dropped", "perf_map_capped", "perf_map_cap_image",
	"perf_map_cap_total", "perf_map_refused", "perf_map_reads", "perf_map_final",
	"perf_map_replaced", "jitdump_bytes", "jitdump_dropped", "jitdump_code_stripped",
	"jitdump_refused",
};

const char *bprof_jit_counter_name(unsigned i)
{
	return i < BPROF_JIT_NR_COUNTERS ? jit_counter_names[i] : NULL;
}

const struct bprof_jitdump *bprof_jitdump_find(const struct bprof_recording *rec, uint32_t pid,
					       uint32_t exec_id)
{
	uint64_t key = (uint64_t)pid << 32 | exec_id;
	size_t lo = 0, hi = rec->jit.nr_dumps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bprof_jitdump *d = &rec->jit.dumps[mid];
		uint64_t k = (uint64_t)d->pid << 32 | d->exec_id;

		if (k == key)
			return d;
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
