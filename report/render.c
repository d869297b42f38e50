/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render.c - render the count rows walk.c produces as text, merge identical
 * stacks, and print them in bcc profile's multi-line, folded and diff forms.
 * What a stack is (selection, order, pseudo-frames, return addresses) is
 * walk.c's to decide; the words for frames without a name are decided here.
 *
 * Merging is done on the rendered text: bcc's profile keys by raw address
 * and so prints one symbolized stack many times; we key by what the user
 * sees.  libsym caches each (object, offset), and fold.c folds the rows
 * of all inputs that would print the same before any is rendered, so the
 * cost here grows with unique rows, not with files.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---- a growable string --------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_reserve(struct sbuf *b, size_t more)
{
	if (b->oom || b->len + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return;
	}
	b->s = s;
	b->cap = cap;
}

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char tmp[128];

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		sb_putn(b, tmp, n);
		return;
	}
	sb_reserve(b, n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

/* Append a name made safe for every output: folded lines split frames on
 * ';' and records on newlines, and the names come from hostile files, so
 * ';' becomes ':', control bytes and invalid UTF-8 become '?'. */
static void sb_put_sanitized(struct sbuf *b, const char *name)
{
	const unsigned char *p = (const unsigned char *)name, *run = p;

	/* copy runs of clean text at once: this is on every frame of every row
	 * (merging a fleet's recordings, the largest cost left once the symbols
	 * come from the cache), so printable ASCII is skipped without a call */
	while (*p) {
		if (*p >= 0x20 && *p < 0x7f && *p != ';') {
			p++;
			continue;
		}
		size_t n = rep_utf8_len(p);
		if (n && *p != ';') {
			p += n;
			continue;
		}
		sb_putn(b, (const char *)run, (size_t)(p - run));
		sb_putn(b, *p == ';' ? ":" : "?", 1);
		p++;
		run = p;
	}
	sb_putn(b, (const char *)run, (size_t)(p - run));
}

/* ---- the aggregate: rendered stack -> count -------------------------------- */

struct agg_entry {
	char *key;
	uint64_t count;
	uint64_t hash;
};

struct rep_agg {
	struct agg_entry *entries;
	size_t nr, cap;
	uint32_t *slots;  /* index+1 into entries, 0 empty */
	size_t nslots;    /* power of two */
	uint64_t total;
	uint32_t *unnamed; /* set of bsym object ids lacking symbols */
	size_t nr_unnamed, cap_unnamed;
	rep_agg_row_fn row_fn; /* rep_agg_set_row_hook */
	void *row_arg;
};

void rep_agg_set_row_hook(struct rep_agg *a, rep_agg_row_fn fn, void *arg)
{
	a->row_fn = fn;
	a->row_arg = arg;
}

size_t rep_agg_nr(const struct rep_agg *a)
{
	return a->nr;
}

const char *rep_agg_key(const struct rep_agg *a, size_t i, uint64_t *count)
{
	if (count)
		*count = a->entries[i].count;
	return a->entries[i].key;
}

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int rep_agg_create(struct rep_agg **out)
{
	struct rep_agg *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->nslots = 1024;
	a->slots = calloc(a->nslots, sizeof(*a->slots));
	if (!a->slots) {
		free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void rep_agg_destroy(struct rep_agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr; i++)
		free(a->entries[i].key);
	free(a->entries);
	free(a->slots);
	free(a->unnamed);
	free(a);
}

static int agg_grow(struct rep_agg *a)
{
	size_t n = a->nslots * 2;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++) {
		size_t j = a->entries[i].hash & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i + 1;
	}
	free(a->slots);
	a->slots = slots;
	a->nslots = n;
	return 0;
}

static int agg_add(struct rep_agg *a, const char *key, size_t len, uint64_t count, size_t *idx)
{
	uint64_t h = hash_str(key, len);
	size_t j = h & (a->nslots - 1);

	a->total = a->total + count < a->total ? UINT64_MAX : a->total + count;
	while (a->slots[j]) {
		struct agg_entry *e = &a->entries[a->slots[j] - 1];
		if (e->hash == h && strcmp(e->key, key) == 0) {
			/* saturate rather than wrap: counts come from hostile files */
			e->count = e->count + count < e->count ? UINT64_MAX : e->count + count;
			*idx = a->slots[j] - 1;
			return 0;
		}
		j = (j + 1) & (a->nslots - 1);
	}
	if (a->nr == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct agg_entry *e = realloc(a->entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		a->entries = e;
		a->cap = cap;
	}
	char *k = strndup(key, len);
	if (!k)
		return -ENOMEM;
	a->entries[a->nr] = (struct agg_entry){ .key = k, .count = count, .hash = h };
	*idx = a->nr;
	a->slots[j] = ++a->nr;
	if (a->nr * 2 > a->nslots)
		return agg_grow(a);
	return 0;
}

static void agg_note_unnamed(struct rep_agg *a, uint32_t id)
{
	for (size_t i = 0; i < a->nr_unnamed; i++)
		if (a->unnamed[i] == id)
			return;
	if (a->nr_unnamed == a->cap_unnamed) {
		size_t cap = a->cap_unnamed ? a->cap_unnamed * 2 : 16;
		uint32_t *u = realloc(a->unnamed, cap * sizeof(*u));
		if (!u)
			return; /* only a summary is lost */
		a->unnamed = u;
		a->cap_unnamed = cap;
	}
	a->unnamed[a->nr_unnamed++] = id;
}

size_t rep_agg_unnamed_objects(const struct rep_agg *agg, const uint32_t **ids)
{
	*ids = agg->unnamed;
	return agg->nr_unnamed;
}

/* ---- symbolizing one count row ---------------------------------------------- */

#define FR_KERNEL (1u << 0)
#define FR_INLINE (1u << 1)
#define FR_JIT    (1u << 2)

/* A rendered frame: text in the row's scratch buffer. */
struct frame {
	size_t off;
};

struct row {
	struct sbuf text;     /* frame texts, NUL-separated */
	struct frame *frames; /* leaf first */
	size_t nr, cap;
	bool oom;
};

/* mark: -a's annotation of a runtime's frame (rep_runtime.mark) that
 * is not inlined, or NULL. */
static void row_add(struct row *r, const char *name, unsigned flags, const char *mark,
		    const struct rep_config *cfg)
{
	if (r->nr == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct frame *f = realloc(r->frames, cap * sizeof(*f));
		if (!f) {
			r->oom = true;
			return;
		}
		r->frames = f;
		r->cap = cap;
	}
	size_t off = r->text.len;
	sb_put_sanitized(&r->text, name);
	if (cfg->annotate) {
		if (flags & FR_KERNEL)
			sb_puts(&r->text, "_[k]");
		else if (flags & FR_JIT)
			sb_puts(&r->text, "_[j]");
		else if (flags & FR_INLINE)
			sb_puts(&r->text, "_[i]");
		else if (mark)
			sb_puts(&r->text, mark);
	}
	sb_putn(&r->text, "", 1); /* keep the NUL as a separator */
	r->text.len++;
	r->frames[r->nr++] = (struct frame){ .off = off };
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : (path && *path ? path : REP_UNKNOWN_FRAME);
}

void rep_object_frame_name(char *buf, size_t len, const char *path)
{
	const char *b = base_name(path);

	if (b[0] == '[' && b[strlen(b) - 1] == ']') /* "[vdso]", "[unknown]" */
		snprintf(buf, len, "%s", b);
	else
		snprintf(buf, len, "[%s]", b);
}

static void add_result(struct row *r, const struct bsym_result *res, unsigned base_flags,
		       const struct rep_config *cfg, struct rep_stats *st)
{
	st->frames++;
	st->frames_named++;
	for (uint32_t i = 0; i < res->nr_frames; i++) {
		const struct bsym_frame *f = &res->frames[i];
		unsigned fl = base_flags;
		if (f->inlined)
			fl |= FR_INLINE;
		if (f->kind == BSYM_FRAME_JIT)
			fl |= FR_JIT;
		row_add(r, f->name, fl, NULL, cfg);
	}
}

/* A runtime's frame: "qualname (file.py:line)" (or as the runtime
 * writes it), one frame in every output (spaces and parentheses are not
 * separators in folded stacks); its inlined functions first. */
static void add_runtime(struct row *r, const struct rep_wframe *f, const struct rep_config *cfg,
			struct rep_stats *st)
{
	const struct rep_runtime *rt = f->rt;
	char text[REP_RUNTIME_TEXT_MAX];

	st->frames++;
	if (!f->res || !f->res->nr_frames) {
		if (cfg->addresses)
			snprintf(text, sizeof(text), "%s+0x%llx", rt->unnamed,
				 (unsigned long long)(f->addr & rt->addr_mask));
		row_add(r, cfg->addresses ? text : rt->unnamed, 0, rt->mark, cfg);
		return;
	}
	st->frames_named++;
	for (uint32_t i = 0; i < f->res->nr_frames; i++) {
		const struct bsym_frame *b = &f->res->frames[i];

		if (rt->frame_text)
			rt->frame_text(text, sizeof(text), b);
		else if (b->line)
			snprintf(text, sizeof(text), "%s (%s:%u)", b->name, b->file ? b->file : "?",
				 b->line);
		else
			snprintf(text, sizeof(text), "%s (%s)", b->name, b->file ? b->file : "?");
		row_add(r, text, b->inlined ? FR_INLINE : 0, rt->mark, cfg);
	}
}

/* A frame without a name: addr_text with --addresses, else plain_text
 * ("[liblzma.so.5]" where the object is known, "[unknown]" otherwise). */
static void add_unnamed(struct row *r, const char *addr_text, const char *plain_text,
			unsigned flags, const struct rep_config *cfg, struct rep_stats *st)
{
	st->frames++;
	row_add(r, cfg->addresses && addr_text ? addr_text : plain_text, flags, NULL, cfg);
}

static void add_unknown(struct row *r, const char *addr_text, unsigned flags,
			const struct rep_config *cfg, struct rep_stats *st)
{
	add_unnamed(r, addr_text, REP_UNKNOWN_FRAME, flags, cfg, st);
}

/* The text of a frame walk.c could not name (res NULL), as every text
 * output words it (REP_UNKNOWN_FRAME, rep_object_frame_name). */
static void add_unnamed_wframe(struct rep_agg *agg, struct row *r, const struct rep_config *cfg,
			       const struct rep_input *in, const struct rep_wframe *f,
			       struct rep_stats *st)
{
	char text[64 + 4096];

	if (f->kind == REP_W_KERNEL) {
		const struct bprof_kernel *k = &in->rec->kernel;
		snprintf(text, sizeof(text), "[kernel]+0x%llx", (unsigned long long)(f->addr - k->stext));
		for (uint32_t i = 0; i < k->nr_modules; i++) {
			const struct bprof_module *m = &k->modules[i];
			if (f->addr >= m->base && f->addr - m->base < m->size) {
				snprintf(text, sizeof(text), "[%.200s]+0x%llx", m->name,
					 (unsigned long long)(f->addr - m->base));
				break;
			}
		}
		add_unknown(r, text, FR_KERNEL, cfg, st);
		return;
	}
	if (!f->map) { /* in no mapping of its process */
		snprintf(text, sizeof(text), "0x%llx", (unsigned long long)f->addr);
		add_unknown(r, text, 0, cfg, st);
		return;
	}
	if (f->object == BSYM_NO_OBJECT && f->reason == BSYM_R_JIT_AMBIGUOUS) {
		/* entries of several names cover it: no choice (SPEC.md 6.16) */
		snprintf(text, sizeof(text), "[anon]+0x%llx", (unsigned long long)f->addr);
		st->frames_jit_ambiguous++;
		add_unnamed(r, text, REP_JIT_AMBIGUOUS_FRAME, FR_JIT, cfg, st);
		return;
	}
	if (f->object == BSYM_NO_OBJECT) { /* anonymous (JIT without a perf map entry) or unknown */
		bool anon = f->kind == REP_W_JIT;
		snprintf(text, sizeof(text), "[%s]+0x%llx", anon ? "anon" : "unknown",
			 (unsigned long long)f->addr);
		add_unknown(r, text, anon ? FR_JIT : 0, cfg, st);
		return;
	}
	agg_note_unnamed(agg, f->object);
	const char *path = f->object_index != BPROF_NO_OBJECT ? in->rec->objects[f->object_index].path
							      : NULL;
	/* the offset of the address itself, as the user would look it up */
	snprintf(text, sizeof(text), "%s+0x%llx", base_name(path), (unsigned long long)f->file_offset);
	char plain[4096 + 3];
	rep_object_frame_name(plain, sizeof(plain), path);
	add_unnamed(r, text, plain, 0, cfg, st);
}

/*
 * Render one row.  kernel frames [kb, ke) and user frames [ub, ue) of r are
 * leaf first; folded prints them root first, user before kernel.
 */
static void render(struct sbuf *out, const struct rep_config *cfg, const struct rep_input *in,
		   const struct bprof_count *c, const struct row *r, size_t kb, size_t ke,
		   size_t ub, size_t ue, bool kmiss, bool umiss, bool delim)
{
	bool show_user = !cfg->kernel_only, show_kernel = !cfg->user_only;
	char pbuf[BPROF_COMM_LEN + 1], thread[BPROF_COMM_LEN + 32];
	const char *comm = rep_process_name(cfg, in, c, pbuf);

	/* --threads: the thread is the frame under the process */
	if (cfg->threads)
		rep_thread_frame_name(thread, sizeof(thread), c);
	/* an off-CPU row's "[off-cpu:S]" is its first frame (walk.c): the
	 * leaf, printed with -U too */
	const char *off = NULL;

	if (c->state != BPROF_STATE_ON_CPU && ke > kb) {
		off = r->text.s + r->frames[kb].off;
		kb++;
	}
	if (cfg->mode == REP_FOLDED) {
		sb_put_sanitized(out, comm);
		if (cfg->threads) {
			sb_putn(out, ";", 1);
			sb_put_sanitized(out, thread);
		}
		if (show_user) {
			if (umiss)
				sb_puts(out, ";[Missed User Stack]");
			for (size_t i = ue; i > ub; i--) {
				sb_putn(out, ";", 1);
				sb_puts(out, r->text.s + r->frames[i - 1].off);
			}
		}
		if (show_kernel) {
			if (delim)
				sb_puts(out, ";-");
			if (kmiss)
				sb_puts(out, ";[Missed Kernel Stack]");
			for (size_t i = ke; i > kb; i--) {
				sb_putn(out, ";", 1);
				sb_puts(out, r->text.s + r->frames[i - 1].off);
			}
		}
		if (off) {
			sb_putn(out, ";", 1);
			sb_puts(out, off);
		}
		return;
	}
	if (off)
		sb_printf(out, "    %s\n", off);
	if (show_kernel) {
		if (kmiss)
			sb_puts(out, "    [Missed Kernel Stack]\n");
		for (size_t i = kb; i < ke; i++)
			sb_printf(out, "    %s\n", r->text.s + r->frames[i].off);
	}
	if (show_user) {
		if (delim)
			sb_puts(out, "    --\n");
		if (umiss)
			sb_puts(out, "    [Missed User Stack]\n");
		for (size_t i = ub; i < ue; i++)
			sb_printf(out, "    %s\n", r->text.s + r->frames[i].off);
	}
	if (cfg->threads) {
		sb_puts(out, "    ");
		sb_put_sanitized(out, thread);
		sb_puts(out, "\n");
	}
	sb_printf(out, "    %-16s ", "-");
	sb_put_sanitized(out, comm);
	sb_printf(out, " (%u)", c->pid);
}

/* What rep_agg_add_input's walk callback works with. */
struct agg_walk {
	struct rep_agg *agg;
	const struct rep_config *cfg;
	struct rep_stats *st;
	uint64_t rows;        /* count rows the walked row stands for (fold.c) */
	struct row r;
	struct sbuf line;
};

/* One count row from walk.c (which decides what a stack is: selection,
 * order, pseudo-frames, return addresses): its frames as text, the row
 * rendered and merged with identical ones. */
static int agg_row(void *arg, const struct rep_input *in, const struct bprof_count *c,
		   const struct rep_wframe *frames, size_t nr, size_t nr_kernel)
{
	struct agg_walk *w = arg;
	const struct rep_config *cfg = w->cfg;
	/* this row's counters, added once for each row it stands for */
	struct rep_stats row_st = {0}, *st = &row_st;
	struct row *r = &w->r;
	bool show_user = !cfg->kernel_only, show_kernel = !cfg->user_only;
	bool kmiss = false, umiss = false;

	r->nr = 0;
	r->text.len = 0;
	for (size_t i = 0; i < nr_kernel; i++) {
		const struct rep_wframe *f = &frames[i];
		if (f->kind == REP_W_MISSED_KERNEL)
			kmiss = true;
		else if (f->kind == REP_W_OFFCPU)
			row_add(r, rep_offcpu_frame_name((uint32_t)f->addr), FR_KERNEL, NULL, cfg);
		else if (f->res)
			add_result(r, f->res, FR_KERNEL, cfg, st);
		else
			add_unnamed_wframe(w->agg, r, cfg, in, f, st);
	}
	size_t ke = r->nr;
	for (size_t i = nr_kernel; i < nr; i++) {
		const struct rep_wframe *f = &frames[i];
		if (f->kind == REP_W_MISSED_USER)
			umiss = true;
		else if (f->kind == REP_W_MISSING_CALLER)
			add_unnamed(r, NULL, REP_MISSING_CALLER_FRAME, 0, cfg, st);
		else if (f->kind == REP_W_RUNTIME)
			add_runtime(r, f, cfg, st);
		else if (f->res)
			add_result(r, f->res, f->kind == REP_W_JIT ? FR_JIT : 0, cfg, st);
		else
			add_unnamed_wframe(w->agg, r, cfg, in, f, st);
	}
	size_t ue = r->nr;
	if (kmiss) {
		st->missed_kernel++;
		st->missed_enomem |= c->kernel_stack_id == -ENOMEM;
	}
	if (umiss) {
		st->missed_user++;
		st->missed_enomem |= c->user_stack_id == -ENOMEM;
	}
	bool delim = cfg->delimited && show_user && show_kernel && c->kernel_stack_id >= 0 &&
		     c->user_stack_id >= 0;

	w->line.len = 0;
	render(&w->line, cfg, in, c, r, 0, ke, ke, ue, kmiss, umiss, delim);
	if (r->oom || r->text.oom || w->line.oom)
		return -ENOMEM;
	struct rep_stats *total = w->st;
	total->samples = total->samples + c->count < total->samples ? UINT64_MAX
								     : total->samples + c->count;
	total->frames += st->frames * w->rows;
	total->frames_named += st->frames_named * w->rows;
	total->missed_kernel += st->missed_kernel * w->rows;
	total->missed_user += st->missed_user * w->rows;
	total->frames_jit_ambiguous += st->frames_jit_ambiguous * w->rows;
	total->missed_enomem |= st->missed_enomem;
	size_t idx;
	int err = agg_add(w->agg, w->line.s ? w->line.s : "", w->line.len, c->count, &idx);

	if (!err && w->agg->row_fn)
		err = w->agg->row_fn(w->agg->row_arg, in, c, idx);
	return err;
}

int rep_agg_add_input(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		      const struct rep_input *in, struct rep_stats *st)
{
	struct agg_walk w = { .agg = agg, .cfg = cfg, .st = st, .rows = 1 };
	/* the walk's own counters are not used: agg_row counts as it renders */
	int err = rep_walk(cfg, sym, in, true, agg_row, &w, NULL);

	free(w.r.frames);
	free(w.r.text.s);
	free(w.line.s);
	return err;
}

int rep_agg_add_inputs(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		       const struct rep_input *in, size_t nr_in, struct rep_stats *st)
{
	/* one file rarely repeats a row that would print the same (another
	 * pid, in folded output): keying its rows cost 15 % more than it saved.
	 * Unless it has time slices: a stack then repeats once per slice it
	 * was sampled in (SPEC.md 6.14), and is walked once when folded */
	if (nr_in == 1 && !in->rec->slices.slice_ns)
		return rep_agg_add_input(agg, cfg, sym, in, st);
	struct rep_fold *fold = NULL;
	int err = rep_fold_create(&fold);

	for (size_t i = 0; i < nr_in && !err; i++)
		err = rep_fold_add_input(fold, cfg, &in[i]);
	if (!err)
		err = rep_agg_add_fold(agg, cfg, sym, fold, nr_in == 1 ? in->path : "the recordings",
				       st);
	rep_fold_destroy(fold);
	return err;
}

int rep_agg_add_fold(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		     const struct rep_fold *fold, const char *name, struct rep_stats *st)
{
	struct agg_walk w = { .agg = agg, .cfg = cfg, .st = st };
	struct rep_wbuf b = {0};
	const struct rep_fold_row *rows;
	size_t n = rep_fold_rows(fold, &rows);
	int err = 0;

	/* first seen first: objects lacking symbols are noted in the order an
	 * unfolded walk notes them (the summary lists them so) */
	for (size_t i = 0; i < n && !err; i++) {
		if (cfg->progress && (i & 4095) == 0)
			cfg->progress(cfg->progress_arg, name, i, n);
		w.rows = rows[i].rows;
		err = rep_walk_row(&b, cfg, sym, rows[i].in, &rows[i].c, true, agg_row, &w, NULL);
	}
	if (cfg->progress)
		cfg->progress(cfg->progress_arg, name, n, n);
	rep_wbuf_free(&b);
	free(w.r.frames);
	free(w.r.text.s);
	free(w.line.s);
	return err;
}

/* ---- printing ------------------------------------------------------------------ */

static int cmp_count(const void *pa, const void *pb)
{
	const struct agg_entry *a = *(const struct agg_entry *const *)pa;
	const struct agg_entry *b = *(const struct agg_entry *const *)pb;
	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct agg_entry *a = *(const struct agg_entry *const *)pa;
	const struct agg_entry *b = *(const struct agg_entry *const *)pb;
	return strcmp(a->key, b->key);
}

static const struct agg_entry **sorted(const struct rep_agg *a, int (*cmp)(const void *, const void *))
{
	const struct agg_entry **v = malloc((a->nr ? a->nr : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < a->nr; i++)
		v[i] = &a->entries[i];
	qsort(v, a->nr, sizeof(*v), cmp);
	return v;
}

static int out_err(FILE *f) { return ferror(f) ? -(errno ? errno : EIO) : 0; }

/* Hottest last, as bcc's profile prints: the end of the output is what a
 * user sees in a terminal. */
int rep_print(FILE *f, const struct rep_agg *agg, const struct rep_config *cfg)
{
	const struct agg_entry **v = sorted(agg, cmp_count);

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < agg->nr && !ferror(f); i++) {
		if (cfg->mode == REP_FOLDED)
			fprintf(f, "%s %llu\n", v[i]->key, (unsigned long long)v[i]->count);
		else
			fprintf(f, "%s\n        %llu\n\n", v[i]->key, (unsigned long long)v[i]->count);
	}
	free(v);
	fflush(f);
	return out_err(f);
}

/* FlameGraph's difffolded format: "stack before after", 0 where absent.
 * Both sides sorted by key and merged. */
int rep_print_diff(FILE *f, const struct rep_agg *before, const struct rep_agg *after,
		   bool normalize)
{
	const struct agg_entry **a = sorted(before, cmp_key), **b = sorted(after, cmp_key);
	size_t i = 0, j = 0;
	/* -n: scale BEFORE so both sides have AFTER's total */
	double scale = normalize && before->total ? (double)after->total / (double)before->total : 1.0;
	int err = 0;

	if (!a || !b) {
		err = -ENOMEM;
		goto out;
	}
	while ((i < before->nr || j < after->nr) && !ferror(f)) {
		int c = i >= before->nr ? 1 : j >= after->nr ? -1 : strcmp(a[i]->key, b[j]->key);
		const char *key = c <= 0 ? a[i]->key : b[j]->key;
		uint64_t x = c <= 0 ? a[i]->count : 0, y = c >= 0 ? b[j]->count : 0;
		if (normalize && scale != 1.0) {
			double v = (double)x * scale + 0.5;
			x = v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
		}
		fprintf(f, "%s %llu %llu\n", key, (unsigned long long)x, (unsigned long long)y);
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	fflush(f);
	err = out_err(f);
out:
	free(a);
	free(b);
	return err;
}
