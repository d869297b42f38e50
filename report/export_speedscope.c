/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export_speedscope.c - prof-report --speedscope: speedscope's JSON file
 * format (https://www.speedscope.app/file-format-schema.json), one
 * "sampled" profile per process (recording, pid), frames shared; and
 * prof-report --missing-buildids.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* JSON strings: names come from hostile files, so control bytes are
 * escaped and invalid UTF-8 becomes U+FFFD; the output is always valid. */
void rep_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		if (c < 0x80) {
			if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c == '\n')
				fputs("\\n", f);
			else if (c == '\t')
				fputs("\\t", f);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
			p++;
			continue;
		}
		size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		uint32_t cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		bool valid = n > 0;
		for (size_t i = 1; valid && i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				valid = false;
			else
				cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (valid && ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
			      (n == 4 && (cp < 0x10000 || cp > 0x10ffff))))
			valid = false;
		if (valid) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fputs("\\ufffd", f);
			p++;
		}
	}
	fputc('"', f);
}

struct sframe {
	char *name;
	char *file;       /* a copy: Python frames' are the input's */
	uint32_t line;
};

struct sprofile {
	uint32_t pid;
	char comm[BPROF_COMM_LEN + 1];
	uint32_t *idx;      /* frame indices of all samples, root first */
	size_t nr_idx, cap_idx;
	size_t *starts;     /* sample i: idx[starts[i] .. starts[i+1]) */
	uint64_t *weights;
	size_t nr, cap;
	uint64_t total;
};

struct ss {
	const struct rep_config *cfg;
	size_t input;
	struct rep_map frame_ids, profile_ids;
	struct sframe *frames;
	size_t nr_frames, cap_frames;
	struct sprofile *profiles;
	size_t nr_profiles, cap_profiles;
	uint32_t *stack;
	size_t cap_stack;
};

static int frame_index(struct ss *s, const char *name, const char *file, uint32_t line, uint32_t *out)
{
	size_t ln = strlen(name), lf = file ? strlen(file) : 0;
	char *key = malloc(ln + lf + 2 + sizeof(line));
	uint64_t v = s->nr_frames;
	bool found;
	int err;

	if (!key)
		return -ENOMEM;
	memcpy(key, name, ln + 1);
	if (lf)
		memcpy(key + ln + 1, file, lf);
	key[ln + 1 + lf] = '\0';
	memcpy(key + ln + lf + 2, &line, sizeof(line));
	err = rep_map_get(&s->frame_ids, key, ln + lf + 2 + sizeof(line), &v, &found);
	free(key);
	if (err)
		return err;
	*out = (uint32_t)v;
	if (found)
		return 0;
	if (s->nr_frames == s->cap_frames) {
		size_t cap = s->cap_frames ? s->cap_frames * 2 : 256;
		struct sframe *f = realloc(s->frames, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		s->frames = f;
		s->cap_frames = cap;
	}
	char *n = strdup(name), *fc = file ? strdup(file) : NULL;
	if (!n || (file && !fc)) {
		free(n);
		free(fc);
		return -ENOMEM;
	}
	s->frames[s->nr_frames++] = (struct sframe){ .name = n, .file = fc, .line = line };
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : (path && *path ? path : "[unknown]");
}

static int push_stack(struct ss *s, size_t *n, uint32_t id)
{
	if (*n == s->cap_stack) {
		size_t cap = s->cap_stack ? s->cap_stack * 2 : 128;
		uint32_t *v = realloc(s->stack, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->stack = v;
		s->cap_stack = cap;
	}
	s->stack[(*n)++] = id;
	return 0;
}

static int add_named(struct ss *s, size_t *n, const char *name, const char *suffix,
		     const char *file, uint32_t line)
{
	char buf[4096];
	uint32_t id;
	int err;

	if (suffix && s->cfg->annotate) {
		snprintf(buf, sizeof(buf), "%s%s", name, suffix);
		name = buf;
	}
	err = frame_index(s, name, file, line, &id);
	return err ? err : push_stack(s, n, id);
}

static struct sprofile *profile_of(struct ss *s, const struct rep_input *in,
				   const struct bprof_count *c, int *err)
{
	uint64_t key[2] = { s->input, c->pid }; /* no padding to hash */
	uint64_t v = s->nr_profiles;
	bool found;

	*err = rep_map_get(&s->profile_ids, &key, sizeof(key), &v, &found);
	if (*err)
		return NULL;
	if (found)
		return &s->profiles[v];
	if (s->nr_profiles == s->cap_profiles) {
		size_t cap = s->cap_profiles ? s->cap_profiles * 2 : 16;
		struct sprofile *p = realloc(s->profiles, cap * sizeof(*p));
		if (!p) {
			*err = -ENOMEM;
			return NULL;
		}
		s->profiles = p;
		s->cap_profiles = cap;
	}
	struct sprofile *p = &s->profiles[s->nr_profiles++];
	memset(p, 0, sizeof(*p));
	p->pid = c->pid;
	rep_process_name(s->cfg, in, c, p->comm);
	return p;
}

static int on_row(void *arg, const struct rep_input *in, const struct bprof_count *c,
		  const struct rep_wframe *frames, size_t nr, size_t nr_kernel)
{
	struct ss *s = arg;
	size_t n = 0;
	int err = 0;

	(void)nr_kernel;
	/* leaf first into s->stack */
	for (size_t i = 0; i < nr && !err; i++) {
		const struct rep_wframe *f = &frames[i];
		const char *suffix = f->kind == REP_W_KERNEL ? "_[k]" : f->kind == REP_W_JIT ? "_[j]" : NULL;
		if (f->kind == REP_W_OFFCPU) {
			err = add_named(s, &n, rep_offcpu_frame_name((uint32_t)f->addr), NULL, NULL, 0);
		} else if (f->kind == REP_W_MISSED_USER || f->kind == REP_W_MISSED_KERNEL ||
		    f->kind == REP_W_MISSING_CALLER) {
			err = add_named(s, &n, rep_wframe_missed_name(f->kind), NULL, NULL, 0);
		} else if (f->res) {
			for (uint32_t j = 0; j < f->res->nr_frames && !err; j++) {
				const struct bsym_frame *b = &f->res->frames[j];
				/* no line: speedscope keys frames by name, file and line,
				 * and a function must stay one frame to be summed; a
				 * runtime's frame may keep it (rep_runtime.export_lines) */
				err = add_named(s, &n, b->name,
						suffix ? suffix : b->inlined ? "_[i]" : NULL, b->file,
						f->kind == REP_W_RUNTIME && f->rt->export_lines ? b->line : 0);
			}
		} else {
			char text[4200];
			const char *name = f->kind == REP_W_RUNTIME && f->rt->export_unnamed
						   ? f->rt->unnamed
						   : REP_UNKNOWN_FRAME;
			if (f->kind == REP_W_USER && f->object_index != BPROF_NO_OBJECT &&
			    f->object_index < in->rec->nr_objects) {
				rep_object_frame_name(text, sizeof(text),
						      in->rec->objects[f->object_index].path);
				name = text;
			}
			if (s->cfg->addresses) {
				if (f->kind == REP_W_USER && f->object_index != BPROF_NO_OBJECT &&
				    f->object_index < in->rec->nr_objects)
					snprintf(text, sizeof(text), "%.4000s+0x%llx",
						 base_name(in->rec->objects[f->object_index].path),
						 (unsigned long long)f->file_offset);
				else
					snprintf(text, sizeof(text), "0x%llx", (unsigned long long)f->addr);
				name = text;
			}
			err = add_named(s, &n, name, suffix, NULL, 0);
		}
	}
	/* --threads: the thread at the root of the process's profile */
	if (!err && s->cfg->threads) {
		char thread[BPROF_COMM_LEN + 32];
		rep_thread_frame_name(thread, sizeof(thread), c);
		err = add_named(s, &n, thread, NULL, NULL, 0);
	}
	if (err)
		return err;

	struct sprofile *p = profile_of(s, in, c, &err);
	if (!p)
		return err;
	if (p->nr + 1 >= p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		size_t *st = realloc(p->starts, (cap + 1) * sizeof(*st));
		if (!st)
			return -ENOMEM;
		p->starts = st;
		uint64_t *w = realloc(p->weights, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		p->weights = w;
		p->cap = cap;
	}
	if (p->nr_idx + n > p->cap_idx) {
		size_t cap = p->cap_idx ? p->cap_idx : 256;
		while (cap < p->nr_idx + n)
			cap *= 2;
		uint32_t *v = realloc(p->idx, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->idx = v;
		p->cap_idx = cap;
	}
	p->starts[p->nr] = p->nr_idx;
	for (size_t i = n; i > 0; i--) /* root first */
		p->idx[p->nr_idx++] = s->stack[i - 1];
	p->weights[p->nr++] = c->count;
	p->total = p->total + c->count < p->total ? UINT64_MAX : p->total + c->count;
	return 0;
}

static int write_json(FILE *f, struct ss *s, const char *name1, size_t nr_in)
{
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", f);
	fputs("\"exporter\":", f);
	rep_json_string(f, "prof-report");
	fputs(",\"name\":", f);
	rep_json_string(f, nr_in == 1 ? name1 : "merged recordings");
	/* open on the busiest process */
	size_t active = 0;
	for (size_t i = 1; i < s->nr_profiles; i++)
		if (s->profiles[i].total > s->profiles[active].total)
			active = i;
	fprintf(f, ",\"activeProfileIndex\":%zu,\n\"shared\":{\"frames\":[\n", active);
	for (size_t i = 0; i < s->nr_frames; i++) {
		const struct sframe *fr = &s->frames[i];
		fputs(i ? ",\n{\"name\":" : "{\"name\":", f);
		rep_json_string(f, fr->name);
		if (fr->file) {
			fputs(",\"file\":", f);
			rep_json_string(f, fr->file);
			if (fr->line)
				fprintf(f, ",\"line\":%u", fr->line);
		}
		fputc('}', f);
	}
	fputs("]},\n\"profiles\":[\n", f);
	for (size_t i = 0; i < s->nr_profiles; i++) {
		const struct sprofile *p = &s->profiles[i];
		char name[BPROF_COMM_LEN + 64];
		snprintf(name, sizeof(name), "%s (%u)", p->comm, p->pid);
		fputs(i ? ",\n{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", f);
		rep_json_string(f, name);
		fprintf(f, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[",
			(unsigned long long)p->total);
		for (size_t j = 0; j < p->nr; j++) {
			size_t b = p->starts[j], e = j + 1 < p->nr ? p->starts[j + 1] : p->nr_idx;
			fputs(j ? ",[" : "[", f);
			for (size_t k = b; k < e; k++)
				fprintf(f, k > b ? ",%u" : "%u", p->idx[k]);
			fputc(']', f);
		}
		fputs("],\n\"weights\":[", f);
		for (size_t j = 0; j < p->nr; j++)
			fprintf(f, j ? ",%llu" : "%llu", (unsigned long long)p->weights[j]);
		fputs("]}", f);
	}
	fputs("]}\n", f);
	fflush(f);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}

/* The export being built (report.h). */
struct rep_speedscope {
	struct ss s;
	struct bsym_ctx *sym;
	size_t nr_in;
	char *name1; /* the first input's name */
};

int rep_speedscope_create(struct rep_speedscope **out, const struct rep_config *cfg,
			  struct bsym_ctx *sym)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->s.cfg = cfg;
	(*out)->sym = sym;
	return 0;
}

int rep_speedscope_add(struct rep_speedscope *x, const struct rep_input *in, struct rep_stats *st)
{
	x->s.input = x->nr_in;
	if (x->nr_in++ == 0 && !(x->name1 = strdup(in->path ? in->path : "")))
		return -ENOMEM;
	return rep_walk(x->s.cfg, x->sym, in, true, on_row, &x->s, st);
}

int rep_speedscope_write(struct rep_speedscope *x, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = write_json(f, &x->s, x->name1, x->nr_in);
	if (f != stdout && fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

void rep_speedscope_destroy(struct rep_speedscope *x)
{
	if (!x)
		return;
	struct ss *s = &x->s;
	for (size_t i = 0; i < s->nr_frames; i++) {
		free(s->frames[i].name);
		free(s->frames[i].file);
	}
	free(s->frames);
	for (size_t i = 0; i < s->nr_profiles; i++) {
		free(s->profiles[i].idx);
		free(s->profiles[i].starts);
		free(s->profiles[i].weights);
	}
	free(s->profiles);
	free(s->stack);
	rep_map_free(&s->frame_ids);
	rep_map_free(&s->profile_ids);
	free(x->name1);
	free(x);
}

int rep_export_speedscope(const char *path, const struct rep_config *cfg, struct bsym_ctx *sym,
			  const struct rep_input *in, size_t nr_in, struct rep_stats *st)
{
	struct rep_speedscope *x = NULL;
	int err = rep_speedscope_create(&x, cfg, sym);

	for (size_t i = 0; i < nr_in && !err; i++)
		err = rep_speedscope_add(x, &in[i], st);
	if (!err)
		err = rep_speedscope_write(x, path);
	rep_speedscope_destroy(x);
	return err;
}

/* ---- --missing-buildids ------------------------------------------------------- */

/* An object with frames in the selected samples, copied from its
 * recording (which is closed before the list is printed). */
struct mb_obj {
	uint32_t flags, id; /* id: libsym's */
	uint8_t build_id[BPROF_BUILD_ID_MAX];
	size_t build_id_len;
	char *path;
};

struct rep_missing {
	const struct rep_config *cfg;
	struct bsym_ctx *sym;
	struct rep_map seen; /* (input, object index) */
	struct mb_obj *objs;
	size_t nr, cap;
	size_t input;
};

static int mb_row(void *arg, const struct rep_input *in, const struct bprof_count *c,
		  const struct rep_wframe *frames, size_t nr, size_t nr_kernel)
{
	struct rep_missing *m = arg;

	(void)c;
	for (size_t i = nr_kernel; i < nr; i++) {
		if (frames[i].object == BSYM_NO_OBJECT || frames[i].object_index == BPROF_NO_OBJECT)
			continue;
		uint64_t key[2] = { m->input, frames[i].object_index };
		uint64_t v = 0;
		bool found;
		int err = rep_map_get(&m->seen, &key, sizeof(key), &v, &found);
		if (err)
			return err;
		if (found)
			continue;
		if (m->nr == m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 32;
			void *o = realloc(m->objs, cap * sizeof(*m->objs));
			if (!o)
				return -ENOMEM;
			m->objs = o;
			m->cap = cap;
		}
		const struct bprof_object *o = &in->rec->objects[frames[i].object_index];
		struct mb_obj *d = &m->objs[m->nr];

		d->flags = o->flags;
		d->id = in->object_ids[frames[i].object_index];
		d->build_id_len = o->build_id_len <= BPROF_BUILD_ID_MAX ? o->build_id_len : 0;
		memcpy(d->build_id, o->build_id, d->build_id_len);
		if (o->build_id_len > BPROF_BUILD_ID_MAX)
			d->flags &= ~(uint32_t)BPROF_OBJ_HAS_BUILD_ID; /* nothing to fetch by */
		if (!(d->path = strdup(o->path && *o->path ? o->path : "[unknown]")))
			return -ENOMEM;
		m->nr++;
	}
	return 0;
}

/* A recorded path as one line of clean text: valid UTF-8 is kept (spaces
 * too: the path is the rest of the line), backslash, control bytes (C1
 * included) and invalid bytes become C escapes (\\, \n, \xff), which
 * `printf '%b'` undoes. */
static void put_path(FILE *f, const char *path)
{
	const unsigned char *p = (const unsigned char *)path;

	while (*p) {
		size_t n = rep_utf8_len(p);
		if (n && *p != '\\') {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else
			fprintf(f, "\\x%02x", *p);
		p++;
	}
}

int rep_missing_create(struct rep_missing **out, const struct rep_config *cfg,
		       struct bsym_ctx *sym)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->cfg = cfg;
	(*out)->sym = sym;
	return 0;
}

int rep_missing_add(struct rep_missing *m, const struct rep_input *in)
{
	int err = rep_walk(m->cfg, m->sym, in, false, mb_row, m, NULL);

	m->input++;
	return err;
}

int rep_missing_write(struct rep_missing *m, FILE *f)
{
	struct rep_map printed = {0};
	char hex[2 * BPROF_BUILD_ID_MAX + 1];
	int err = 0;

	for (size_t i = 0; i < m->nr && !err; i++) {
		const struct mb_obj *o = &m->objs[i];
		struct bsym_object_info oi = {0};
		uint64_t v = 0;
		bool found;

		if (!(o->flags & BPROF_OBJ_HAS_BUILD_ID) || !o->build_id_len)
			continue; /* nothing to fetch by */
		if (bsym_object_info(m->sym, o->id, &oi) != 0 || oi.status == BSYM_OK)
			continue;
		rep_hex(hex, o->build_id, o->build_id_len);
		err = rep_map_get(&printed, hex, strlen(hex), &v, &found);
		if (err || found)
			continue;
		fprintf(f, "%s ", hex);
		put_path(f, o->path);
		fputc('\n', f);
	}
	rep_map_free(&printed);
	fflush(f);
	if (!err && ferror(f))
		err = -(errno ? errno : EIO);
	return err;
}

void rep_missing_destroy(struct rep_missing *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++)
		free(m->objs[i].path);
	free(m->objs);
	rep_map_free(&m->seen);
	free(m);
}

int rep_print_missing_buildids(FILE *f, const struct rep_config *cfg, struct bsym_ctx *sym,
			       const struct rep_input *in, size_t nr_in)
{
	struct rep_missing *m = NULL;
	int err = rep_missing_create(&m, cfg, sym);

	for (size_t i = 0; i < nr_in && !err; i++)
		err = rep_missing_add(m, &in[i]);
	if (!err)
		err = rep_missing_write(m, f);
	rep_missing_destroy(m);
	return err;
}
