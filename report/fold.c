/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fold.c - the count rows of many recordings folded by what they will
 * print, before any of them is walked or rendered.
 *
 * A fleet's recordings of one build hold the same stacks over and over.
 * Once libsym answers each (build-id, address) from its caches, the cost
 * left is walking and rendering every row of every file: 100 copies of a
 * recording took 69 times as long as one.  So equal rows are folded
 * first, and each unique row is walked and rendered once, with the sum of
 * the counts and the number of rows it stands for (for the summary).
 *
 * Truthful: a row's key holds everything walk.c and render.c read to
 * print it - comm; the pid in the outputs that print it; with --threads
 * the process's name and the tid; the lost-stack
 * codes and the unwinder's flag; every kernel address with the kernel's
 * identity (libsym's kernel, _stext, the module table); every user frame
 * as (libsym object, the object's recorded path, file offsets) or, where
 * no object maps it, its raw address (and the process's perf map for JIT
 * code); a runtime's frame (runtime.h) as the frames its name prints.
 * Rows with equal keys print the same text; rows that could print
 * differently are never folded.  Keys are compared byte for byte.  The
 * text outputs still merge equal text after rendering, as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct rep_fold {
	struct rep_fold_row *rows; /* in the order rows are first seen */
	size_t nr, cap;
	struct rep_map row_ids;    /* row key -> index into rows */
	struct rep_map ids;        /* stack, path and kernel keys -> id (from 1) */
	uint32_t next_id;
	size_t last_new;           /* rows the last input added */
};

/* A row's key; every byte set (padding-free), so equal rows compare equal. */
struct row_key {
	char comm[BPROF_COMM_LEN];
	char process[BPROF_COMM_LEN]; /* --threads: the process's name */
	uint32_t pid;          /* multi-line prints it; 0 otherwise */
	uint32_t tid;          /* --threads prints it; 0 otherwise */
	int32_t kernel_code;   /* kernel_stack_id when < 0: which loss */
	int32_t user_code;
	uint32_t unwound;      /* decides the "[missing caller]" frame */
	uint32_t kernel;       /* id of the kernel frames' key, 0 for none */
	uint32_t user;
	uint32_t state;        /* on-CPU, or the off-CPU state: never merged */
};

/* One user frame of a stack key: where it is (place) and the file offset
 * there, or the raw address where no object maps it. */
struct user_key {
	uint32_t place;   /* id of (kind, libsym object, recorded path, perf map) */
	uint32_t delta;   /* address - lookup address: 1 for return addresses */
	uint64_t value;
};

/* What one input's rows share, found once per input. */
struct in_state {
	uint32_t kernel;       /* id of the kernel's identity */
	uint32_t *places;      /* rec->objects[i] -> id of (object, its path) */
	uint32_t unmapped, no_object;
	uint64_t *buf;         /* key scratch */
	size_t cap;
};

/* The id of key (tag prefixed, so keys of different kinds never meet). */
static int intern(struct rep_fold *f, const void *key, size_t len, uint32_t *id)
{
	uint64_t v = f->next_id + 1;
	bool found;
	int err = rep_map_get(&f->ids, key, len, &v, &found);

	if (err)
		return err;
	if (!found)
		f->next_id++;
	*id = (uint32_t)v;
	return 0;
}

/* Room for n more bytes after used bytes of s->buf. */
static int reserve(struct in_state *s, size_t used, size_t n)
{
	size_t need = (used + n + 7) / 8;

	if (need <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 512;
	while (cap < need)
		cap *= 2;
	uint64_t *b = realloc(s->buf, cap * sizeof(*b));
	if (!b)
		return -ENOMEM;
	s->buf = b;
	s->cap = cap;
	return 0;
}

static int put(struct in_state *s, size_t *used, const void *p, size_t n)
{
	int err = reserve(s, *used, n);

	if (err)
		return err;
	memcpy((char *)s->buf + *used, p, n);
	*used += n;
	return 0;
}

/* The kernel's identity: libsym's kernel (build-id, _stext) names the
 * frames; _stext and the module table word the unnamed ones. */
static int kernel_identity(struct rep_fold *f, struct in_state *s, const struct rep_input *in)
{
	const struct bprof_kernel *k = &in->rec->kernel;
	size_t used = 0;
	int err = put(s, &used, "K", 1);

	if (!err)
		err = put(s, &used, &in->kernel, sizeof(in->kernel));
	if (!err)
		err = put(s, &used, &k->stext, sizeof(k->stext));
	for (uint32_t i = 0; i < k->nr_modules && !err; i++) {
		const struct bprof_module *m = &k->modules[i];
		err = put(s, &used, &m->base, sizeof(m->base));
		if (!err)
			err = put(s, &used, &m->size, sizeof(m->size));
		if (!err)
			err = put(s, &used, m->name ? m->name : "", m->name ? strlen(m->name) + 1 : 1);
	}
	return err ? err : intern(f, s->buf, used, &s->kernel);
}

/* The id of a place frames can be in: a tag and what names frames there
 * (a libsym id, and for objects the recorded path).  Uses s->buf only
 * with a path: user_key calls it mid-key without one. */
static int place(struct rep_fold *f, struct in_state *s, char tag, uint32_t id, const char *path,
		 uint32_t *out)
{
	char key[1 + sizeof(id)] = { tag };
	size_t used = 0;
	int err;

	memcpy(key + 1, &id, sizeof(id));
	if (!path)
		return intern(f, key, sizeof(key), out);
	err = put(s, &used, key, sizeof(key));
	if (!err)
		err = put(s, &used, path, strlen(path) + 1);
	return err ? err : intern(f, s->buf, used, out);
}

static int in_state_init(struct rep_fold *f, struct in_state *s, const struct rep_input *in)
{
	const struct bprof_recording *rec = in->rec;
	int err;

	memset(s, 0, sizeof(*s));
	s->places = calloc(rec->nr_objects ? rec->nr_objects : 1, sizeof(*s->places));
	if (!s->places)
		return -ENOMEM;
	/* libsym names a frame in an object by build-id; an unnamed one is
	 * worded with the path this recording gives the object */
	for (uint64_t i = 0; i < rec->nr_objects; i++) {
		err = place(f, s, 'O', in->object_ids[i], rec->objects[i].path ? rec->objects[i].path : "",
			    &s->places[i]);
		if (err)
			return err;
	}
	err = place(f, s, 'U', 0, NULL, &s->unmapped);
	if (!err)
		err = place(f, s, 'N', 0, NULL, &s->no_object);
	return err ? err : kernel_identity(f, s, in);
}

static void in_state_free(struct in_state *s)
{
	free(s->places);
	free(s->buf);
}

/* walk.c's kernel frames of row c: the interrupted ip first unless the
 * stack starts with it, then the stack. */
static int kernel_key(struct rep_fold *f, struct in_state *s, const struct rep_input *in,
		      const struct bprof_count *c, uint32_t *id)
{
	const struct bprof_stack *st =
		c->kernel_stack_id >= 0 ? bprof_recording_stack(in->rec, c->kernel_stack_id) : NULL;
	size_t used = 0;
	int err = put(s, &used, "k\0\0\0", 4);

	if (!err)
		err = put(s, &used, &s->kernel, sizeof(s->kernel));
	if (!err && c->kernel_ip && (!st || st->nr_ips == 0 || st->ips[0] != c->kernel_ip))
		err = put(s, &used, &c->kernel_ip, sizeof(c->kernel_ip));
	if (!err && st)
		err = put(s, &used, st->ips, st->nr_ips * sizeof(*st->ips));
	return err ? err : intern(f, s->buf, used, id);
}

static int user_frame_key(struct rep_fold *f, struct in_state *s, const struct rep_process_map *pm,
			  const struct rep_wframe *w, const uint64_t win[2], struct user_key *k)
{
	k->delta = (uint32_t)(w->addr - w->lookup);
	k->value = w->addr;
	if (!w->map) {
		k->place = s->unmapped;
	} else if (w->object != BSYM_NO_OBJECT) {
		/* not the address: other processes map the object elsewhere */
		k->place = s->places[w->object_index];
		k->value = w->file_offset;
	} else if (w->kind != REP_W_JIT) {
		k->place = s->no_object;
	} else if (pm->jitdump == BSYM_NO_OBJECT) {
		return place(f, s, 'A', pm->perfmap, NULL, &k->place);
	} else {
		/* a jitdump names by time too (SPEC.md 6.16): rows of other
		 * windows may print other names */
		char key[1 + 2 * sizeof(uint32_t) + 2 * sizeof(uint64_t)] = { 'J' };
		memcpy(key + 1, &pm->perfmap, sizeof(uint32_t));
		memcpy(key + 5, &pm->jitdump, sizeof(uint32_t));
		memcpy(key + 9, win, 2 * sizeof(uint64_t));
		return intern(f, key, sizeof(key), &k->place);
	}
	return 0;
}

/* A runtime's frame's key: every frame its name prints (inlined ones
 * too), or (unnamed) its first word, as --addresses prints it; its code's
 * address means nothing in another process. */
static int runtime_key(struct rep_fold *f, const struct rep_input *in, const struct bprof_count *c,
		       int rt, const uint64_t *w, bool leaf, struct user_key *k)
{
	char tag[2] = { 'r', (char)rt };
	const struct bsym_result *r;
	size_t n = sizeof(tag), used = sizeof(tag);
	uint64_t id;
	char *buf;
	int err;

	memset(k, 0, sizeof(*k));
	r = rep_runtime_name(in, rt, c->pid, c->exec_id, w[0], w[1], leaf, &id);
	if (!r) {
		k->value = w[0];
		return intern(f, tag, sizeof(tag), &k->place);
	}
	for (uint32_t i = 0; i < r->nr_frames; i++)
		n += 2 + sizeof(uint32_t) + strlen(r->frames[i].name) + 1 +
		     (r->frames[i].file ? strlen(r->frames[i].file) + 1 : 0);
	buf = malloc(n);
	if (!buf)
		return -ENOMEM;
	buf[0] = 'R';
	buf[1] = tag[1];
	for (uint32_t i = 0; i < r->nr_frames; i++) {
		const struct bsym_frame *fr = &r->frames[i];

		buf[used++] = (char)(fr->inlined | (fr->file ? 2 : 0));
		memcpy(buf + used, &fr->line, sizeof(fr->line));
		used += sizeof(fr->line);
		memcpy(buf + used, fr->name, strlen(fr->name) + 1);
		used += strlen(fr->name) + 1;
		if (fr->file) {
			memcpy(buf + used, fr->file, strlen(fr->file) + 1);
			used += strlen(fr->file) + 1;
		}
	}
	err = intern(f, buf, used, &k->place);
	free(buf);
	return err;
}

/* The user frames of row c, as rep_wframe_user makes them. */
static int user_key(struct rep_fold *f, struct in_state *s, const struct rep_input *in,
		    const struct bprof_count *c, uint32_t *id)
{
	const struct rep_process_map *pm = rep_input_process(in, c->pid, c->exec_id);
	const struct bprof_stack *st = bprof_recording_stack(in->rec, c->user_stack_id);
	size_t n = st ? st->nr_ips : 0, used = 4 + n * sizeof(struct user_key);
	int err = reserve(s, 0, used);
	uint64_t win[2];

	rep_row_window(in, c, win);
	if (err)
		return err;
	memcpy(s->buf, "u\0\0\0", 4);
	for (size_t i = 0; i < n && !err; i++) {
		struct rep_wframe w;
		struct user_key k;
		int rt = rep_runtime_at(st->ips, i, n);

		if (rt >= 0) {
			struct user_key k2 = { 0 };
			err = runtime_key(f, in, c, rt, &st->ips[i], i == 0, &k);
			memcpy((char *)s->buf + 4 + i * sizeof(k), &k, sizeof(k));
			memcpy((char *)s->buf + 4 + (i + 1) * sizeof(k2), &k2, sizeof(k2));
			i++;
			continue;
		}
		rep_wframe_user(&w, NULL, pm, st->ips[i], i, c->map_gen, NULL, false);
		err = user_frame_key(f, s, pm, &w, win, &k);
		memcpy((char *)s->buf + 4 + i * sizeof(k), &k, sizeof(k));
	}
	return err ? err : intern(f, s->buf, used, id);
}

static int fold_row(struct rep_fold *f, struct in_state *s, const struct rep_config *cfg,
		    const struct rep_input *in, const struct bprof_count *c)
{
	bool show_user = !cfg->kernel_only, show_kernel = !cfg->user_only;
	struct row_key k;
	int err = 0;

	memset(&k, 0, sizeof(k));
	memcpy(k.comm, c->comm, strnlen(c->comm, BPROF_COMM_LEN));
	k.state = c->state;
	if (cfg->mode == REP_MULTILINE)
		k.pid = c->pid;
	if (cfg->threads) {
		char pbuf[BPROF_COMM_LEN + 1];
		const char *pname = rep_process_name(cfg, in, c, pbuf);
		memcpy(k.process, pname, strnlen(pname, BPROF_COMM_LEN));
		k.tid = c->tid;
	}
	if (show_kernel) {
		k.kernel_code = c->kernel_stack_id < 0 ? c->kernel_stack_id : 0;
		if (!rep_stack_missed(c->kernel_stack_id))
			err = kernel_key(f, s, in, c, &k.kernel);
	}
	if (show_user && !err) {
		k.user_code = c->user_stack_id < 0 ? c->user_stack_id : 0;
		k.unwound = c->user_stack_id >= 0 && bprof_stack_unwound(c->user_stack_id);
		if (c->user_stack_id >= 0)
			err = user_key(f, s, in, c, &k.user);
	}
	if (err)
		return err;

	uint64_t v = f->nr;
	bool found;
	err = rep_map_get(&f->row_ids, &k, sizeof(k), &v, &found);
	if (err)
		return err;
	if (found) {
		struct rep_fold_row *r = &f->rows[v];
		/* saturate rather than wrap: counts come from hostile files */
		r->c.count = r->c.count + c->count < r->c.count ? UINT64_MAX : r->c.count + c->count;
		r->rows++;
		return 0;
	}
	if (f->nr == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 1024;
		struct rep_fold_row *rows = realloc(f->rows, cap * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		f->rows = rows;
		f->cap = cap;
	}
	f->rows[f->nr++] = (struct rep_fold_row){ .in = in, .c = *c, .rows = 1 };
	return 0;
}

int rep_fold_create(struct rep_fold **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void rep_fold_destroy(struct rep_fold *f)
{
	if (!f)
		return;
	free(f->rows);
	rep_map_free(&f->row_ids);
	rep_map_free(&f->ids);
	free(f);
}

int rep_fold_add_input(struct rep_fold *f, const struct rep_config *cfg, const struct rep_input *in)
{
	const struct bprof_recording *rec = in->rec;
	struct in_state s;
	size_t before = f->nr;
	int err = in_state_init(f, &s, in);

	for (uint64_t n = 0; n < rec->nr_counts && !err; n++)
		if (rep_row_selected(cfg, &rec->counts[n]))
			err = fold_row(f, &s, cfg, in, &rec->counts[n]);
	in_state_free(&s);
	f->last_new = f->nr - before;
	return err;
}

size_t rep_fold_last_new(const struct rep_fold *f)
{
	return f->last_new;
}

size_t rep_fold_rows(const struct rep_fold *f, const struct rep_fold_row **rows)
{
	*rows = f->rows;
	return f->nr;
}
