/* SPDX-License-Identifier: Apache-2.0 */
/*
 * write.c - serialize a recording (SPEC.md) and put it on disk atomically.
 *
 * The content is produced twice: a counting pass that only measures each
 * section (the file header and every section header carry lengths, so
 * lengths must be known before the first byte), then the real pass that
 * streams through ZSTD_compressStream2() straight into the file.  Measuring
 * costs a walk over the tables but no memory; streaming means a recording
 * of several hundred MB never exists twice (raw + compressed) in memory,
 * which matters on the production host where prof-record runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"

#define STAGE_LEN (128 * 1024)
#define MAX_LEVEL 19 /* levels above use windows readers may refuse (SPEC.md "Limits") */

struct sink {
	bool counting;      /* only add up lengths */
	uint64_t total;     /* content bytes produced so far */
	int code;           /* first error, sticky */
	int sys_errno;
	char what[96];

	uint8_t *stage;     /* uncompressed staging buffer */
	size_t staged;
	ZSTD_CCtx *cctx;
	uint8_t *zout;
	size_t zout_cap;

	int fd;             /* output: fd >= 0, or the memory buffer */
	uint8_t *mem;
	size_t mem_len, mem_cap;
};

static void sink_fail(struct sink *s, int code, int sys_errno, const char *what)
{
	if (s->code)
		return;
	s->code = code;
	s->sys_errno = sys_errno;
	snprintf(s->what, sizeof(s->what), "%s", what);
}

/* Raw output: the file header and compressed bytes. */
static void emit(struct sink *s, const void *p, size_t n)
{
	if (s->code || n == 0)
		return;
	if (s->fd >= 0) {
		const uint8_t *b = p;

		while (n > 0) {
			ssize_t w = write(s->fd, b, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				sink_fail(s, BPROF_E_IO, errno, "write");
				return;
			}
			b += w;
			n -= (size_t)w;
		}
		return;
	}
	if (s->mem_len + n > s->mem_cap) {
		size_t cap = s->mem_cap ? s->mem_cap : 4096;
		uint8_t *m;

		while (cap < s->mem_len + n)
			cap *= 2;
		m = realloc(s->mem, cap);
		if (!m) {
			sink_fail(s, BPROF_E_NOMEM, 0, "output buffer");
			return;
		}
		s->mem = m;
		s->mem_cap = cap;
	}
	memcpy(s->mem + s->mem_len, p, n);
	s->mem_len += n;
}

static void compress_staged(struct sink *s, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { s->stage, s->staged, 0 };
	size_t rem;

	if (s->code)
		return;
	do {
		ZSTD_outBuffer out = { s->zout, s->zout_cap, 0 };

		rem = ZSTD_compressStream2(s->cctx, &out, &in, mode);
		if (ZSTD_isError(rem)) {
			sink_fail(s, BPROF_E_ZSTD, 0, ZSTD_getErrorName(rem));
			return;
		}
		emit(s, s->zout, out.pos);
		if (s->code)
			return;
	} while (mode == ZSTD_e_end ? rem != 0 : in.pos < in.size);
	s->staged = 0;
}

/* Content output: goes through zstd (or is only counted). */
static void put(struct sink *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	s->total += n;
	if (s->counting || s->code)
		return;
	while (n > 0) {
		size_t k = STAGE_LEN - s->staged;

		if (k > n)
			k = n;
		memcpy(s->stage + s->staged, b, k);
		s->staged += k;
		b += k;
		n -= k;
		if (s->staged == STAGE_LEN) {
			compress_staged(s, ZSTD_e_continue);
			if (s->code)
				return; /* the rest is counted, not written */
		}
	}
}

static void put32(struct sink *s, uint32_t v)
{
	uint8_t b[4];

	bprof_put32(b, v);
	put(s, b, 4);
}

static void put64(struct sink *s, uint64_t v)
{
	uint8_t b[8];

	bprof_put64(b, v);
	put(s, b, 8);
}

static void put_uleb(struct sink *s, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	put(s, b, n);
}

/* String: u32 length, then the bytes (no NUL).  NULL is written as "". */
static void put_str(struct sink *s, const char *str)
{
	size_t n = bprof_strlen0(str);

	if (n > UINT32_MAX) {
		sink_fail(s, BPROF_E_INVAL, 0, "string longer than 4 GiB");
		return;
	}
	put32(s, (uint32_t)n);
	put(s, str, n);
}

/* comm: 16 bytes, the name up to its NUL, zero-filled after it. */
static void put_comm(struct sink *s, const char *comm)
{
	uint8_t b[BPROF_COMM_LEN] = { 0 };
	size_t n = strnlen(comm, BPROF_COMM_LEN - 1);

	memcpy(b, comm, n);
	put(s, b, sizeof(b));
}

/* ---- sections ---------------------------------------------------------- */

static void sect_meta(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_meta *m = &r->meta;

	put64(s, m->start_time_ns);
	put64(s, m->duration_ns);
	put64(s, m->sample_freq);
	put64(s, m->sample_period);
	put32(s, m->ncpus);
	put32(s, m->flags);
	put_str(s, m->hostname);
	put_str(s, m->kernel_release);
	put_str(s, m->arch);
	put_str(s, m->recorder_version);
	put_str(s, m->event);
	put_str(s, m->options);
}

static void sect_losses(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_losses *l = &r->losses;

	put64(s, l->user_stack_enomem);
	put64(s, l->user_stack_eexist);
	put64(s, l->kernel_stack_enomem);
	put64(s, l->kernel_stack_eexist);
	put64(s, l->counts_full);
	put64(s, l->manifest_lost);
	put64(s, l->events_lost);
	put64(s, l->other);
	put64(s, l->user_stack_before_table);
}

static void sect_stacks(struct sink *s, const struct bprof_recording *r)
{
	put64(s, r->nr_stacks);
	for (uint64_t i = 0; i < r->nr_stacks; i++) {
		const struct bprof_stack *st = &r->stacks[i];

		put32(s, st->id);
		put32(s, st->nr_ips);
		if (s->counting) {
			s->total += (uint64_t)st->nr_ips * 8;
			continue;
		}
		for (uint32_t j = 0; j < st->nr_ips; j++)
			put64(s, st->ips[j]);
	}
}

static uint64_t nr_offcpu(const struct bprof_recording *r)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < r->nr_counts; i++)
		n += r->counts[i].state != BPROF_STATE_ON_CPU;
	return n;
}

/* COUNTS has the on-CPU rows, OFFCPU (1.5) the others: a reader of 1.4
 * skips OFFCPU and never takes blocked time for CPU time. */
static void put_counts(struct sink *s, const struct bprof_recording *r, bool off)
{
	uint64_t n = nr_offcpu(r), len = off ? BPROF_OFFCPU_ENTRY_LEN : BPROF_COUNT_ENTRY_LEN;

	if (!off)
		n = r->nr_counts - n;
	if (off) {
		put32(s, r->offcpu.mode);
		put32(s, 0);
		put64(s, r->offcpu.period_ns);
		put64(s, r->offcpu.blocks);
		put64(s, r->offcpu.blocks_short);
		put64(s, r->offcpu.blocked_ns);
		put64(s, r->offcpu.walks);
		put64(s, r->offcpu.no_user_stack);
		put64(s, r->offcpu.lost);
	}
	put64(s, n);
	if (s->counting) {
		s->total += n * len;
		return;
	}
	for (uint64_t i = 0; i < r->nr_counts; i++) {
		const struct bprof_count *c = &r->counts[i];
		uint8_t b[BPROF_OFFCPU_ENTRY_LEN] = { 0 };

		if ((c->state != BPROF_STATE_ON_CPU) != off)
			continue;

		bprof_put32(b + 0, c->pid);
		bprof_put32(b + 4, c->tid);
		bprof_put32(b + 8, c->exec_id);
		bprof_put32(b + 12, (uint32_t)c->user_stack_id);
		bprof_put32(b + 16, (uint32_t)c->kernel_stack_id);
		bprof_put32(b + 20, c->map_gen);
		bprof_put64(b + 24, c->kernel_ip);
		bprof_put64(b + 32, c->count);
		memcpy(b + 40, c->comm, strnlen(c->comm, BPROF_COMM_LEN - 1));
		bprof_put32(b + 56, c->state);
		bprof_put64(b + 64, c->blocked_ns);
		put(s, b, len);
	}
}

static void sect_counts(struct sink *s, const struct bprof_recording *r)
{
	put_counts(s, r, false);
}

static void sect_offcpu(struct sink *s, const struct bprof_recording *r)
{
	put_counts(s, r, true);
}

/* SLICES (1.6, SPEC.md 6.14): one u32 per row, in the order the rows are
 * written: COUNTS' (on-CPU) rows, then OFFCPU's. */
static void sect_slices(struct sink *s, const struct bprof_recording *r)
{
	put64(s, r->slices.slice_ns);
	put64(s, r->slices.origin_ns);
	put64(s, r->nr_counts);
	if (s->counting) {
		s->total += r->nr_counts * 4;
		return;
	}
	for (int off = 0; off < 2; off++)
		for (uint64_t i = 0; i < r->nr_counts; i++)
			if ((r->counts[i].state != BPROF_STATE_ON_CPU) == off)
				put32(s, r->counts[i].slice);
}

static void sect_objects(struct sink *s, const struct bprof_recording *r)
{
	put64(s, r->nr_objects);
	for (uint64_t i = 0; i < r->nr_objects; i++) {
		const struct bprof_object *o = &r->objects[i];

		put32(s, o->flags);
		put32(s, o->build_id_len);
		put64(s, o->size);
		put64(s, o->mtime_ns);
		put64(s, o->dev);
		put64(s, o->inode);
		put64(s, o->fallback_hash);
		put(s, o->build_id, o->build_id_len);
		put_str(s, o->path);
	}
}

static void sect_processes(struct sink *s, const struct bprof_recording *r)
{
	put64(s, r->nr_processes);
	for (uint64_t i = 0; i < r->nr_processes; i++) {
		const struct bprof_process *p = &r->processes[i];
		uint64_t pm_len = p->perf_map ? p->perf_map_len : 0;

		put32(s, p->pid);
		put32(s, p->ns_pid);
		put32(s, p->exec_id);
		put32(s, p->nr_mappings);
		put64(s, p->snapshot_ns);
		put_comm(s, p->comm);
		put64(s, pm_len);
		for (uint32_t j = 0; j < p->nr_mappings; j++) {
			const struct bprof_mapping *m = &p->mappings[j];

			put64(s, m->start);
			put64(s, m->end);
			put64(s, m->file_offset);
			put32(s, m->object_index);
			put32(s, m->flags);
		}
		put(s, p->perf_map, (size_t)pm_len);
	}
}

static void sect_kernel(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_kernel *k = &r->kernel;

	put32(s, k->flags);
	put32(s, k->build_id_len);
	put64(s, k->stext);
	put(s, k->build_id, k->build_id_len);
	put_str(s, k->release);
	put64(s, k->nr_modules);
	for (uint32_t i = 0; i < k->nr_modules; i++) {
		const struct bprof_module *m = &k->modules[i];

		put64(s, m->base);
		put64(s, m->size);
		put32(s, m->build_id_len);
		put(s, m->build_id, m->build_id_len);
		put_str(s, m->name);
	}
}

/* Columnar: address deltas, then module indexes, then names; each column
 * compresses far better alone than interleaved. */
static void sect_ksyms(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_kernel *k = &r->kernel;
	uint64_t prev = 0;

	put64(s, k->nr_ksyms);
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		put_uleb(s, k->ksyms[i].addr - prev);
		prev = k->ksyms[i].addr;
	}
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		uint32_t mi = k->ksyms[i].module_index;

		put_uleb(s, mi == BPROF_NO_OBJECT ? 0 : (uint64_t)mi + 1);
	}
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		const char *n = k->ksyms[i].name ? k->ksyms[i].name : "";

		put(s, n, strlen(n) + 1);
	}
}

/* Only written when the recording says how user stacks were unwound. */
static void sect_unwind(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_unwind *u = &r->unwind;
	uint64_t n = 0;

	put32(s, u->mode);
	put32(s, u->flags);
	put64(s, BPROF_UNW_NR_COUNTERS);
	for (int i = 0; i < BPROF_UNW_NR_COUNTERS; i++)
		put64(s, u->counters[i]);
	for (uint64_t i = 0; i < r->nr_stacks; i++)
		n += r->stacks[i].flags != 0;
	put64(s, n);
	for (uint64_t i = 0; i < r->nr_stacks; i++) {
		if (!r->stacks[i].flags)
			continue;
		put32(s, r->stacks[i].id);
		put32(s, r->stacks[i].flags);
	}
	/* 1.4 */
	put64(s, u->nr_misses);
	for (uint32_t i = 0; i < u->nr_misses; i++) {
		put32(s, u->misses[i].object_index);
		put32(s, u->misses[i].flags);
		put64(s, u->misses[i].rows);
	}
}

static void sect_images(struct sink *s, const struct bprof_recording *r)
{
	put64(s, r->nr_images);
	for (uint64_t i = 0; i < r->nr_images; i++) {
		put32(s, r->images[i].object_index);
		put32(s, 0);
		put64(s, r->images[i].len);
		put(s, r->images[i].data, r->images[i].len);
	}
}

/* Only written when the recorder said what it was allowed to read. */
static void sect_access(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_access *a = &r->access;

	put32(s, a->euid);
	put32(s, a->flags);
	put64(s, a->capabilities);
	put64(s, BPROF_ACC_NR_COUNTERS);
	for (int i = 0; i < BPROF_ACC_NR_COUNTERS; i++)
		put64(s, a->counters[i]);
}

static void put_mapping(struct sink *s, const struct bprof_mapping *m)
{
	put64(s, m->start);
	put64(s, m->end);
	put64(s, m->file_offset);
	put32(s, m->object_index);
	put32(s, m->flags);
}

/* Only the processes whose mappings changed while recorded (has_gens). */
static void sect_generations(struct sink *s, const struct bprof_recording *r)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < r->nr_processes; i++)
		n += r->processes[i].has_gens != 0;
	put64(s, n);
	for (uint64_t i = 0; i < r->nr_processes; i++) {
		const struct bprof_process *p = &r->processes[i];

		if (!p->has_gens)
			continue;
		put32(s, (uint32_t)i);
		put32(s, p->nr_mappings);
		put32(s, p->nr_history);
		put32(s, p->nr_gaps);
		put64(s, 0);
		for (uint32_t j = 0; j < p->nr_mappings; j++)
			put32(s, p->mappings[j].birth);
		for (uint32_t j = 0; j < p->nr_history; j++) {
			put_mapping(s, &p->history[j]);
			put32(s, p->history[j].birth);
			put32(s, 0);
		}
		for (uint32_t j = 0; j < p->nr_gaps; j++)
			put32(s, p->gaps[j]);
	}
}

/* PYTHON (1.7, SPEC.md 6.15) */
static void sect_python(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_python *py = &r->python;

	put32(s, py->nr_counters);
	put32(s, 0);
	for (uint32_t i = 0; i < py->nr_counters; i++)
		put64(s, py->counters[i]);
	put64(s, py->nr_procs);
	for (uint64_t i = 0; i < py->nr_procs; i++) {
		put32(s, py->procs[i].pid);
		put32(s, py->procs[i].exec_id);
		put32(s, py->procs[i].version);
		put32(s, py->procs[i].status);
	}
	put64(s, py->nr_codes);
	for (uint64_t i = 0; i < py->nr_codes; i++) {
		const struct bprof_python_code *c = &py->codes[i];
		uint32_t ql = c->qualname ? (uint32_t)strlen(c->qualname) : 0;
		uint32_t fl = c->filename ? (uint32_t)strlen(c->filename) : 0;

		put32(s, c->pid);
		put32(s, c->exec_id);
		put64(s, c->code);
		put32(s, c->guard);
		put32(s, (uint32_t)c->firstlineno);
		put32(s, c->code_offset);
		put32(s, c->nr_units);
		put32(s, ql);
		put32(s, fl);
		put32(s, c->linetable_len);
		put32(s, 0);
		put(s, c->qualname, ql);
		put(s, c->filename, fl);
		put(s, c->linetable, c->linetable_len);
	}
}

/* JIT (1.8, SPEC.md 6.16) */
static void sect_jit(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_jit *j = &r->jit;

	put64(s, (uint64_t)j->mono_minus_real_ns);
	put32(s, BPROF_JIT_NR_COUNTERS);
	put32(s, 0);
	for (int i = 0; i < BPROF_JIT_NR_COUNTERS; i++)
		put64(s, j->counters[i]);
	put64(s, j->nr_dumps);
	for (uint64_t i = 0; i < j->nr_dumps; i++) {
		put32(s, j->dumps[i].pid);
		put32(s, j->dumps[i].exec_id);
		put64(s, j->dumps[i].len);
		put(s, j->dumps[i].data, (size_t)j->dumps[i].len);
	}
}

/* V8 (1.9, SPEC.md 6.17) */
static void sect_v8(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_v8 *v = &r->v8;

	put32(s, v->nr_counters);
	put32(s, 0);
	for (uint32_t i = 0; i < v->nr_counters; i++)
		put64(s, v->counters[i]);
	put64(s, v->nr_procs);
	for (uint64_t i = 0; i < v->nr_procs; i++) {
		put32(s, v->procs[i].pid);
		put32(s, v->procs[i].exec_id);
		put32(s, v->procs[i].status);
		put32(s, 0);
	}
	put64(s, v->nr_sfis);
	for (uint64_t i = 0; i < v->nr_sfis; i++) {
		const struct bprof_v8_sfi *f = &v->sfis[i];
		uint32_t nl = f->name ? (uint32_t)strlen(f->name) : 0;
		uint32_t sl = f->script ? (uint32_t)strlen(f->script) : 0;

		put32(s, f->pid);
		put32(s, f->exec_id);
		put64(s, f->sfi);
		put32(s, f->guard);
		put32(s, (uint32_t)f->line);
		put32(s, nl);
		put32(s, sl);
		put32(s, f->nr_pos);
		put32(s, 0);
		put(s, f->name, nl);
		put(s, f->script, sl);
		for (uint32_t j = 0; j < f->nr_pos; j++) {
			const struct bprof_v8_pos *r = &f->pos[j];

			put32(s, r->code_offset);
			put32(s, r->nr_frames);
			for (uint32_t k = 0; k < r->nr_frames; k++) {
				const struct bprof_v8_frame *fr = &r->frames[k];
				uint32_t a = fr->name ? (uint32_t)strlen(fr->name) : 0;
				uint32_t b = fr->script ? (uint32_t)strlen(fr->script) : 0;

				put32(s, (uint32_t)fr->line);
				put32(s, a);
				put32(s, b);
				put(s, fr->name, a);
				put(s, fr->script, b);
			}
		}
	}
}

/* JVM (1.9, SPEC.md 6.18) */
static uint32_t slen(const char *x)
{
	return x ? (uint32_t)strlen(x) : 0;
}

static void sect_jvm(struct sink *s, const struct bprof_recording *r)
{
	const struct bprof_jvm *j = &r->jvm;

	put32(s, j->nr_counters);
	put32(s, 0);
	for (uint32_t i = 0; i < j->nr_counters; i++)
		put64(s, j->counters[i]);
	put64(s, j->nr_procs);
	for (uint64_t i = 0; i < j->nr_procs; i++) {
		const struct bprof_jvm_proc *p = &j->procs[i];

		put32(s, p->pid);
		put32(s, p->exec_id);
		put32(s, p->status);
		put32(s, slen(p->version));
		put(s, p->version, slen(p->version));
	}
	put64(s, j->nr_frames);
	for (uint64_t i = 0; i < j->nr_frames; i++) {
		const struct bprof_jvm_frame *f = &j->frames[i];

		put32(s, f->pid);
		put32(s, f->exec_id);
		put64(s, f->id);
		put32(s, f->guard);
		put32(s, f->kind);
		put32(s, (uint32_t)f->level);
		put32(s, slen(f->klass));
		put32(s, slen(f->method));
		put32(s, slen(f->signature));
		put32(s, slen(f->file));
		put32(s, f->lines_len);
		put32(s, f->scopes_len);
		put32(s, 0);
		put(s, f->klass, slen(f->klass));
		put(s, f->method, slen(f->method));
		put(s, f->signature, slen(f->signature));
		put(s, f->file, slen(f->file));
		put(s, f->lines, f->lines_len);
		put(s, f->scopes, f->scopes_len);
	}
}

static void (*const sections[])(struct sink *, const struct bprof_recording *) = {
	[BPROF_SECT_META] = sect_meta,         [BPROF_SECT_LOSSES] = sect_losses,
	[BPROF_SECT_STACKS] = sect_stacks,     [BPROF_SECT_COUNTS] = sect_counts,
	[BPROF_SECT_OBJECTS] = sect_objects,   [BPROF_SECT_PROCESSES] = sect_processes,
	[BPROF_SECT_KERNEL] = sect_kernel,     [BPROF_SECT_KSYMS] = sect_ksyms,
	[BPROF_SECT_UNWIND] = sect_unwind,     [BPROF_SECT_IMAGES] = sect_images,
	[BPROF_SECT_ACCESS] = sect_access,     [BPROF_SECT_GENERATIONS] = sect_generations,
	[BPROF_SECT_OFFCPU] = sect_offcpu,     [BPROF_SECT_PYTHON] = sect_python,
	[BPROF_SECT_SLICES] = sect_slices,     [BPROF_SECT_JIT] = sect_jit,
	[BPROF_SECT_V8] = sect_v8,
	[BPROF_SECT_JVM] = sect_jvm,
};

static bool section_written(const struct bprof_recording *rec, int t)
{
	if (!sections[t])
		return false; /* a type reserved for another version */
	if (t == BPROF_SECT_UNWIND)
		return rec->unwind.mode != BPROF_UNWIND_UNKNOWN;
	if (t == BPROF_SECT_IMAGES)
		return rec->nr_images != 0;
	if (t == BPROF_SECT_ACCESS)
		return rec->access.present != 0;
	if (t == BPROF_SECT_OFFCPU)
		return rec->offcpu.mode != BPROF_OFFCPU_NONE;
	if (t == BPROF_SECT_SLICES)
		return rec->slices.slice_ns != 0;
	if (t == BPROF_SECT_PYTHON)
		return rec->python.present != 0;
	if (t == BPROF_SECT_JIT)
		return rec->jit.present != 0;
	if (t == BPROF_SECT_V8)
		return rec->v8.present != 0;
	if (t == BPROF_SECT_JVM)
		return rec->jvm.present != 0;
	if (t == BPROF_SECT_GENERATIONS) {
		for (uint64_t i = 0; i < rec->nr_processes; i++)
			if (rec->processes[i].has_gens)
				return true;
		return false;
	}
	return true;
}

/* ---- driver ------------------------------------------------------------ */

static int serialize(struct bprof_recording *rec, struct sink *s,
		     const struct bprof_write_opts *opts, struct bprof_error *err)
{
	uint64_t lens[BPROF_SECT_LAST_KNOWN + 1] = { 0 }, content = 0;
	uint8_t hdr[BPROF_FILE_HEADER_LEN] = { 0 };
	int level = 3, rc;

	if (opts && opts->sz < sizeof(struct bprof_write_opts))
		return bprof_set_error(err, BPROF_E_INVAL, 0,
				       "bprof_write_opts.sz is %zu, must be sizeof(struct bprof_write_opts)",
				       opts->sz);
	if (opts && opts->zstd_level)
		level = opts->zstd_level;
	if (level > MAX_LEVEL)
		level = MAX_LEVEL;

	rc = bprof_recording_validate(rec, err);
	if (rc)
		return rc;

	for (int t = 1; t <= BPROF_SECT_LAST_KNOWN; t++) {
		struct sink c = { .counting = true, .fd = -1 };

		if (!section_written(rec, t))
			continue;
		sections[t](&c, rec);
		if (c.code)
			return bprof_set_error(err, c.code, 0, "section %d: %s", t, c.what);
		lens[t] = c.total;
		content += BPROF_SECTION_HEADER_LEN + lens[t];
	}

	s->stage = malloc(STAGE_LEN);
	s->zout_cap = ZSTD_CStreamOutSize();
	s->zout = malloc(s->zout_cap);
	s->cctx = ZSTD_createCCtx();
	if (!s->stage || !s->zout || !s->cctx)
		return bprof_set_error(err, BPROF_E_NOMEM, 0, "allocating the compressor");
	if (ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(s->cctx, content)))
		return bprof_set_error(err, BPROF_E_INVAL, 0, "zstd rejected level %d", level);

	memcpy(hdr, bprof_magic, BPROF_MAGIC_LEN);
	bprof_put16(hdr + 8, BPROF_FORMAT_MAJOR);
	/* the oldest minor that has every section written (SPEC.md 7) */
	bprof_put16(hdr + 10, rec->meta.flags & (BPROF_META_NO_V8_WALK | BPROF_META_NO_JVM_WALK)
				      ? BPROF_FORMAT_MINOR :
			      rec->v8.present || rec->jvm.present ? BPROF_FORMAT_MINOR_NO_RT_LACKS :
			      rec->jit.present ||
				      (rec->meta.flags & (BPROF_META_NO_GENERATIONS | BPROF_META_NO_PYTHON_WALK))
				      ? BPROF_FORMAT_MINOR_NO_V8 :
			      rec->python.present    ? BPROF_FORMAT_MINOR_NO_JIT :
			      rec->slices.slice_ns ? BPROF_FORMAT_MINOR_NO_PYTHON :
			      rec->offcpu.mode     ? BPROF_FORMAT_MINOR_NO_SLICES :
						     BPROF_FORMAT_MINOR_NO_OFFCPU);
	bprof_put32(hdr + 12, 0); /* flags */
	bprof_put64(hdr + 16, content);
	emit(s, hdr, sizeof(hdr));

	for (int t = 1; t <= BPROF_SECT_LAST_KNOWN; t++) {
		if (!section_written(rec, t))
			continue;
		put32(s, (uint32_t)t);
		put32(s, 0); /* section flags */
		put64(s, lens[t]);
		sections[t](s, rec);
	}
	compress_staged(s, ZSTD_e_end);
	if (!s->code && s->total != content)
		sink_fail(s, BPROF_E_INVAL, 0, "recording changed while being written");
	if (s->code)
		return bprof_set_error(err, s->code, s->sys_errno, "writing content: %s%s%s",
				       s->what, s->sys_errno ? ": " : "",
				       s->sys_errno ? strerror(s->sys_errno) : "");
	return 0;
}

static void sink_release(struct sink *s)
{
	free(s->stage);
	free(s->zout);
	ZSTD_freeCCtx(s->cctx);
}

int bprof_write_buffer(struct bprof_recording *rec, void **out, size_t *out_len,
		       const struct bprof_write_opts *opts, struct bprof_error *err)
{
	struct sink s = { .fd = -1 };
	int rc;

	if (!out || !out_len)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "out is NULL");
	*out = NULL;
	*out_len = 0;
	rc = serialize(rec, &s, opts, err);
	sink_release(&s);
	if (rc) {
		free(s.mem);
		return rc;
	}
	*out = s.mem;
	*out_len = s.mem_len;
	return 0;
}

/* ---- atomic file replacement -------------------------------------------- */

static int io_error(struct bprof_error *err, int e, const char *op, const char *path)
{
	return bprof_set_error(err, BPROF_E_IO, e, "%s %s: %s", op, path, strerror(e));
}

/* Create dir/.base.XXXXXXXXXXXXXXXX.tmp with O_EXCL so nothing planted there
 * (a symlink, a file) is ever opened; mode passes through the umask. */
static int create_temp(const char *dir, const char *base, unsigned mode, char **tmp_out,
		       int *fd_out, struct bprof_error *err)
{
	size_t len = strlen(dir) + strlen(base) + 32;
	char *tmp = malloc(len);

	/* keep the temporary name within NAME_MAX whatever the final name */
	if (strlen(base) > 200)
		base = "bprof";

	if (!tmp)
		return bprof_set_error(err, BPROF_E_NOMEM, 0, "temporary file name");
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t rnd;
		int fd;

		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			rnd = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() ^
			      (uint64_t)attempt << 48;
		}
		snprintf(tmp, len, "%s/.%s.%016llx.tmp", dir, base, (unsigned long long)rnd);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd >= 0) {
			*tmp_out = tmp;
			*fd_out = fd;
			return 0;
		}
		if (errno != EEXIST) {
			int e = errno;
			int rc = io_error(err, e, "creating temporary file in", dir);

			free(tmp);
			return rc;
		}
	}
	free(tmp);
	return bprof_set_error(err, BPROF_E_IO, EEXIST, "no free temporary file name in %s", dir);
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -1;
	if (fsync(fd) < 0 && errno != EINVAL) /* some filesystems cannot sync dirs */
		rc = -1;
	if (close(fd) < 0 && !rc)
		rc = -1;
	return rc;
}

int bprof_write_file(struct bprof_recording *rec, const char *path,
		     const struct bprof_write_opts *opts, struct bprof_error *err)
{
	struct sink s = { .fd = -1 };
	unsigned flags = 0, mode = 0600;
	char *dir = NULL, *tmp = NULL;
	const char *base, *slash;
	int rc, fd = -1;

	if (!path || !*path)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "empty output path");
	if (opts && opts->sz < sizeof(struct bprof_write_opts))
		return bprof_set_error(err, BPROF_E_INVAL, 0,
				       "bprof_write_opts.sz is %zu, must be sizeof(struct bprof_write_opts)",
				       opts->sz);
	if (opts)
		flags = opts->flags;
	if (opts && opts->mode)
		mode = opts->mode & 0777;
	if (flags & ~BPROF_WRITE_NO_CLOBBER)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "unknown write flags 0x%x", flags);

	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return bprof_set_error(err, BPROF_E_INVAL, 0, "%s: not a file name", path);
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return bprof_set_error(err, BPROF_E_NOMEM, 0, "directory name");

	rc = create_temp(dir, base, mode, &tmp, &fd, err);
	if (rc)
		goto out;

	s.fd = fd;
	rc = serialize(rec, &s, opts, err);
	if (rc)
		goto out;
	if (fsync(fd) < 0) {
		rc = io_error(err, errno, "fsync", tmp);
		goto out;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0) {
		rc = io_error(err, errno, "close", tmp);
		goto out;
	}
	if (flags & BPROF_WRITE_NO_CLOBBER) {
		/* link() never replaces: the only atomic "create if absent" for a
		 * file whose content is already complete. */
		if (link(tmp, path) < 0) {
			int e = errno;

			if (e == EEXIST)
				rc = bprof_set_error(err, BPROF_E_EXISTS, e, "%s: file exists", path);
			else
				rc = io_error(err, e, "link to", path);
			goto out;
		}
		unlink(tmp); /* path holds the data now; a leftover name is harmless */
	} else if (rename(tmp, path) < 0) {
		rc = io_error(err, errno, "rename to", path);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if (fsync_dir(dir) < 0)
		rc = io_error(err, errno, "fsync directory", dir);
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	sink_release(&s);
	free(dir);
	return rc;
}
