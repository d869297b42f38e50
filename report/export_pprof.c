/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export_pprof.c - prof-report --pprof: the recordings as pprof's
 * profile.proto (report/proto/profile.proto), gzip-compressed, as read by
 * `go tool pprof` and continuous-profiling backends.
 *
 *   mapping   one per recorded process mapping that has frames (start,
 *             limit, file offset, recorded path, hex build-id), plus one
 *             "[kernel.kallsyms]" mapping per recording with the kernel's
 *             build-id
 *   location  one per (mapping, address looked up): return addresses are
 *             stored minus one, as render.c looks them up, so a backend that
 *             symbolizes later finds the call's line; one Line per frame,
 *             innermost (inlined) first, none when unnamed or with
 *             --no-symbolize (has_functions false: the consumer symbolizes)
 *   function  demangled name, raw (mangled) system_name, source file
 *   sample    leaf first; values [samples/count, cpu/nanoseconds] where one
 *             sample is 1e9/freq ns; labels comm (string), pid and tid.
 *             With off-CPU time (prof-record --off-cpu, --wall) a third
 *             value, off-cpu/nanoseconds (samples x the off-CPU period),
 *             0 in on-CPU samples as cpu is 0 in off-CPU ones, and a
 *             label state (S, D, R, T); the leaf is "[off-cpu:S]" too
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "report.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* a growable array of pointers */
struct pvec {
	void **v;
	size_t nr, cap;
};

static int pv_push(struct pvec *p, void *x)
{
	if (!x)
		return -ENOMEM;
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		void **v = realloc(p->v, cap * sizeof(*v));
		if (!v) {
			free(x);
			return -ENOMEM;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->nr++] = x;
	return 0;
}

struct pp {
	const struct rep_config *cfg;
	bool symbolize;
	size_t input;          /* index of the input being walked */
	int64_t period;        /* ns (or events) per sample of this input */
	bool offcpu;           /* a third value: off-CPU time */
	int64_t offperiod;     /* ns per off-CPU sample of this input */
	struct rep_map strings, mappings, locations, functions, samples;
	struct rep_map named;  /* --threads' process and thread frames -> location id */
	struct pvec strtab, mapv, locv, funcv, samplev;
	uint64_t *ids;         /* scratch: location ids of one sample */
	size_t ids_cap;
	bool *is_main;         /* by mapping id - 1: a process's main binary */
	size_t is_main_cap;
	struct bsym_ctx *sym;
};

static int str_id_raw(struct pp *p, const char *s, int64_t *out);

/* proto3 strings must be UTF-8 (generated decoders reject the message
 * otherwise) and names come from hostile files: invalid sequences and
 * control characters become U+FFFD.  NULL when s is already clean. */
static char *utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t bad = 0, len = 0;
	char *out = NULL, *o = NULL;

	for (int pass = 0; pass < 2; pass++) {
		p = (const unsigned char *)s;
		while (*p) {
			/* rep_utf8_len also refuses control characters: they go too */
			size_t n = rep_utf8_len(p);
			bool valid = n > 0;
			if (!valid)
				n = 1;
			if (pass == 0) {
				bad += !valid;
				len += valid ? n : 3;
			} else if (valid) {
				memcpy(o, p, n);
				o += n;
			} else {
				memcpy(o, "\xef\xbf\xbd", 3);
				o += 3;
			}
			p += n;
		}
		if (pass == 0) {
			if (!bad)
				return NULL;
			out = o = malloc(len + 1);
			if (!out)
				return NULL;
		}
	}
	*o = '\0';
	return out;
}

static int str_id(struct pp *p, const char *s, int64_t *out)
{
	char *clean = utf8_clean(s);
	int err;

	if (clean)
		s = clean;
	err = str_id_raw(p, s, out);
	free(clean);
	return err;
}

static int str_id_raw(struct pp *p, const char *s, int64_t *out)
{
	uint64_t v = p->strtab.nr;
	bool found;
	size_t len = strlen(s);
	int err = rep_map_get(&p->strings, s, len, &v, &found);

	if (err)
		return err;
	if (!found) {
		char *c = strdup(s);
		if (!c || pv_push(&p->strtab, c))
			return -ENOMEM;
	}
	*out = (int64_t)v;
	return 0;
}

static Mapping *new_mapping(struct pp *p, const void *key, size_t klen, bool *created, int *err)
{
	uint64_t v = p->mapv.nr;
	bool found;

	*created = false;
	*err = rep_map_get(&p->mappings, key, klen, &v, &found);
	if (*err)
		return NULL;
	if (found)
		return p->mapv.v[v];
	Mapping *m = malloc(sizeof(*m));
	if (m)
		*m = (Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	*err = pv_push(&p->mapv, m);
	if (*err)
		return NULL;
	m->id = p->mapv.nr;
	if (p->mapv.nr > p->is_main_cap) {
		size_t cap = p->mapv.cap;
		bool *b = realloc(p->is_main, cap * sizeof(*b));

		if (!b) {
			*err = -ENOMEM;
			return NULL;
		}
		p->is_main = b;
		p->is_main_cap = cap;
	}
	p->is_main[m->id - 1] = false;
	*created = true;
	return m;
}

/*
 * Is map its process's main binary?  pprof takes the first mapping for the
 * main binary, so these go first.  The recording does not mark the
 * executable; it is the lowest file-backed mapping of the process (a PIE
 * at 0x55..., a fixed executable at 0x400000, below the libraries, ld.so
 * and the vDSO).
 */
static bool is_main_mapping(const struct bprof_recording *rec, const struct bprof_mapping *map)
{
	for (uint64_t i = 0; i < rec->nr_processes; i++) {
		const struct bprof_process *pr = &rec->processes[i];

		if (!pr->nr_mappings || map < pr->mappings || map >= pr->mappings + pr->nr_mappings)
			continue;
		for (uint32_t k = 0; k < pr->nr_mappings; k++) {
			const struct bprof_mapping *m = &pr->mappings[k];

			if (m->object_index != BPROF_NO_OBJECT &&
			    !(m->flags & (BPROF_MAP_ANON | BPROF_MAP_VDSO)))
				return m == map;
		}
		return false;
	}
	return false;
}

static int set_build_id(struct pp *p, Mapping *m, const uint8_t *id, size_t len)
{
	char hex[2 * BPROF_BUILD_ID_MAX + 1];

	if (!len || len > BPROF_BUILD_ID_MAX)
		return 0;
	rep_hex(hex, id, len);
	return str_id(p, hex, &m->build_id);
}

static Mapping *kernel_mapping(struct pp *p, const struct rep_input *in, int *err)
{
	/* keys are arrays: no padding bytes to hash */
	uint64_t key[2] = { 'K', p->input };
	bool created;
	Mapping *m = new_mapping(p, &key, sizeof(key), &created, err);

	if (!m || !created)
		return m;
	const struct bprof_kernel *k = &in->rec->kernel;
	m->memory_start = k->stext;
	m->memory_limit = UINT64_MAX;
	*err = str_id(p, "[kernel.kallsyms]", &m->filename);
	if (!*err)
		*err = set_build_id(p, m, k->build_id, k->build_id_len);
	return *err ? NULL : m;
}

static Mapping *user_mapping(struct pp *p, const struct rep_input *in, const struct rep_wframe *f,
			     int *err)
{
	uint64_t key[3] = { 'U', p->input, (uintptr_t)f->map };
	bool created;
	Mapping *m = new_mapping(p, &key, sizeof(key), &created, err);

	if (!m || !created)
		return m;
	m->memory_start = f->map->start;
	m->memory_limit = f->map->end;
	m->file_offset = f->map->file_offset;
	p->is_main[m->id - 1] = is_main_mapping(in->rec, f->map);
	if (f->object_index != BPROF_NO_OBJECT && f->object_index < in->rec->nr_objects) {
		const struct bprof_object *o = &in->rec->objects[f->object_index];
		*err = str_id(p, o->path ? o->path : "", &m->filename);
		if (!*err && (o->flags & BPROF_OBJ_HAS_BUILD_ID))
			*err = set_build_id(p, m, o->build_id, o->build_id_len);
	} else {
		*err = str_id(p, (f->map->flags & BPROF_MAP_ANON) ? "[anon]" : "[unknown]",
			      &m->filename);
	}
	return *err ? NULL : m;
}

static int function_id(struct pp *p, const char *name, const char *raw, const char *file,
		       uint64_t *out)
{
	size_t ln = strlen(name), lr = strlen(raw), lf = file ? strlen(file) : 0;
	char *key = malloc(ln + lr + lf + 3);
	uint64_t v = p->funcv.nr + 1;
	bool found;
	int err;

	if (!key)
		return -ENOMEM;
	memcpy(key, name, ln + 1);
	memcpy(key + ln + 1, raw, lr + 1);
	if (lf)
		memcpy(key + ln + lr + 2, file, lf);
	key[ln + lr + 2 + lf] = '\0';
	err = rep_map_get(&p->functions, key, ln + lr + lf + 3, &v, &found);
	free(key);
	if (err)
		return err;
	*out = v;
	if (found)
		return 0;
	Function *fn = malloc(sizeof(*fn));
	if (!fn)
		return -ENOMEM;
	*fn = (Function)PERFTOOLS__PROFILES__FUNCTION__INIT;
	fn->id = v;
	err = str_id(p, name, &fn->name);
	if (!err)
		err = str_id(p, raw, &fn->system_name);
	if (!err && file)
		err = str_id(p, file, &fn->filename);
	if (err) {
		free(fn);
		return err;
	}
	return pv_push(&p->funcv, fn);
}

static int add_line(Location *l, uint64_t function, int64_t line, int64_t column)
{
	Line **v = realloc(l->line, (l->n_line + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->line = v;
	Line *ln = malloc(sizeof(*ln));
	if (!ln)
		return -ENOMEM;
	*ln = (Line)PERFTOOLS__PROFILES__LINE__INIT;
	ln->function_id = function;
	ln->line = line;
	ln->column = column;
	l->line[l->n_line++] = ln;
	return 0;
}

/* The location key names in map (locations of frames, or --threads' named
 * ones): its id in *out; a new one, pushed with no lines yet, is returned for
 * the caller to fill.  NULL when it was there already (*err 0) or on error. */
static Location *new_location(struct pp *p, struct rep_map *map, const void *key, size_t klen,
			      uint64_t *out, int *err)
{
	uint64_t v = p->locv.nr + 1;
	bool found;
	Location *l;

	*err = rep_map_get(map, key, klen, &v, &found);
	if (*err)
		return NULL;
	*out = v;
	if (found)
		return NULL;
	l = malloc(sizeof(*l));
	if (l) {
		*l = (Location)PERFTOOLS__PROFILES__LOCATION__INIT;
		l->id = v;
	}
	*err = pv_push(&p->locv, l);
	return *err ? NULL : l;
}

/* l's one line: a function called name, of no file and no line (the
 * pseudo-frames: off-CPU states, missed frames, --threads' names). */
static int add_named_line(struct pp *p, Location *l, const char *name)
{
	uint64_t fid;
	int err = function_id(p, name, name, NULL, &fid);

	return err ? err : add_line(l, fid, 0, 0);
}

static int location_id(struct pp *p, const struct rep_input *in, const struct rep_wframe *f,
		       uint64_t *out)
{
	Mapping *m = NULL;
	int err = 0;

	if (f->kind == REP_W_KERNEL)
		m = kernel_mapping(p, in, &err);
	else if ((f->kind == REP_W_USER || f->kind == REP_W_JIT) && f->map)
		m = user_mapping(p, in, f, &err);
	if (err)
		return err;

	/* an off-CPU pseudo-frame is one location per state (addr), a
	 * runtime's frame one per name (lookup numbers those of rt) */
	uint64_t key[5] = { (uint64_t)f->kind, (uint64_t)(uintptr_t)f->rt, m ? 0 : p->input,
			    m ? m->id : 0, f->kind == REP_W_OFFCPU ? f->addr : f->lookup };
	Location *l = new_location(p, &p->locations, &key, sizeof(key), out, &err);

	if (!l)
		return err;
	l->mapping_id = m ? m->id : 0;
	l->address = f->lookup;
	if (f->kind == REP_W_MISSED_USER || f->kind == REP_W_MISSED_KERNEL ||
	    f->kind == REP_W_MISSING_CALLER || f->kind == REP_W_OFFCPU)
		return add_named_line(p, l, f->kind == REP_W_OFFCPU
						    ? rep_offcpu_frame_name((uint32_t)f->addr)
						    : rep_wframe_missed_name(f->kind));
	if (!f->res && f->kind == REP_W_RUNTIME && f->rt->export_unnamed)
		return add_named_line(p, l, f->rt->unnamed);
	if (!f->res)
		return 0;
	for (uint32_t i = 0; i < f->res->nr_frames && !err; i++) {
		const struct bsym_frame *bf = &f->res->frames[i];
		uint64_t fid;
		err = function_id(p, bf->name, bf->raw_name, bf->file, &fid);
		if (!err)
			err = add_line(l, fid, bf->line, bf->column);
	}
	if (m && !err) {
		m->has_functions = true;
		m->has_filenames |= f->res->nr_frames && f->res->frames[0].file;
		m->has_line_numbers |= f->res->nr_frames && f->res->frames[0].line;
		m->has_inline_frames |= f->res->nr_frames > 1;
	}
	return err;
}

/* A location of no mapping whose one line is a function named name: the
 * process and thread frames of --threads.  kind keeps the two apart (a
 * thread could be named like a process). */
static int named_location(struct pp *p, char kind, const char *name, uint64_t *out)
{
	size_t n = strlen(name);
	char key[BPROF_COMM_LEN + 64];
	Location *l;
	int err;

	if (n + 1 > sizeof(key))
		n = sizeof(key) - 1;
	key[0] = kind;
	memcpy(key + 1, name, n);
	l = new_location(p, &p->named, key, n + 1, out, &err);
	return l ? add_named_line(p, l, name) : err;
}

static int add_label(Sample *s, int64_t key, int64_t str, int64_t num)
{
	Label **v = realloc(s->label, (s->n_label + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->label = v;
	Label *l = malloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	*l = (Label)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = key;
	l->str = str;
	l->num = num;
	s->label[s->n_label++] = l;
	return 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int on_row(void *arg, const struct rep_input *in, const struct bprof_count *c,
		  const struct rep_wframe *frames, size_t nr, size_t nr_kernel)
{
	struct pp *p = arg;
	int err;

	(void)nr_kernel;
	/* key: pid, tid, comm, then the location ids (with --threads, the
	 * thread's and the process's last: the root) */
	size_t need = 4 + nr + (p->cfg->threads ? 2 : 0);
	if (need > p->ids_cap) {
		uint64_t *ids = realloc(p->ids, need * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		p->ids = ids;
		p->ids_cap = need;
	}
	p->ids[0] = ((uint64_t)c->pid << 32) | c->tid;
	memcpy(&p->ids[1], c->comm, BPROF_COMM_LEN);
	p->ids[1 + BPROF_COMM_LEN / 8] = (uint64_t)p->period;
	for (size_t i = 0; i < nr; i++) {
		err = location_id(p, in, &frames[i], &p->ids[4 + i]);
		if (err)
			return err;
	}
	if (p->cfg->threads) {
		char pbuf[BPROF_COMM_LEN + 1], thread[BPROF_COMM_LEN + 32];
		rep_thread_frame_name(thread, sizeof(thread), c);
		err = named_location(p, 'T', thread, &p->ids[4 + nr]);
		if (!err)
			err = named_location(p, 'P', rep_process_name(p->cfg, in, c, pbuf),
					     &p->ids[4 + nr + 1]);
		if (err)
			return err;
		nr += 2;
	}
	uint64_t v = p->samplev.nr;
	bool found;
	err = rep_map_get(&p->samples, p->ids, need * sizeof(*p->ids), &v, &found);
	if (err)
		return err;
	/* pprof values are int64; counts from a hostile file saturate there
	 * rather than wrap (or overflow, which is undefined) */
	int64_t count = c->count > INT64_MAX ? INT64_MAX : (int64_t)c->count;
	bool off = c->state != BPROF_STATE_ON_CPU;
	int64_t ns = off ? 0 : sat_mul(count, p->period);
	int64_t offns = off ? sat_mul(count, p->offperiod) : 0;
	size_t nv = p->offcpu ? 3 : 2;
	if (found) {
		Sample *s = p->samplev.v[v];
		s->value[0] = sat_add(s->value[0], count);
		s->value[1] = sat_add(s->value[1], ns);
		if (p->offcpu)
			s->value[2] = sat_add(s->value[2], offns);
		return 0;
	}

	Sample *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
	s->location_id = malloc((nr ? nr : 1) * sizeof(*s->location_id));
	s->value = malloc(nv * sizeof(*s->value));
	if (!s->location_id || !s->value) {
		free(s->location_id);
		free(s->value);
		free(s);
		return -ENOMEM;
	}
	memcpy(s->location_id, &p->ids[4], nr * sizeof(*s->location_id));
	s->n_location_id = nr;
	s->n_value = nv;
	s->value[0] = count;
	s->value[1] = ns;
	if (p->offcpu)
		s->value[2] = offns;
	err = pv_push(&p->samplev, s);
	if (err)
		return err;

	char comm[BPROF_COMM_LEN + 1];
	int64_t kcomm, kpid, ktid, scomm;
	memcpy(comm, c->comm, BPROF_COMM_LEN);
	comm[BPROF_COMM_LEN] = '\0';
	if ((err = str_id(p, "comm", &kcomm)) || (err = str_id(p, comm, &scomm)) ||
	    (err = str_id(p, "pid", &kpid)) || (err = str_id(p, "tid", &ktid)))
		return err;
	err = add_label(s, kcomm, scomm, 0);
	if (!err && off) {
		char st[2] = { "?SDRT"[c->state <= 4 ? c->state : 0], 0 };
		int64_t kst, sst;
		if ((err = str_id(p, "state", &kst)) || (err = str_id(p, st, &sst)))
			return err;
		err = add_label(s, kst, sst, 0);
	}
	if (!err)
		err = add_label(s, kpid, 0, c->pid);
	if (!err && c->tid)
		err = add_label(s, ktid, 0, c->tid);
	return err;
}

static ValueType *value_type(struct pp *p, const char *type, const char *unit)
{
	ValueType *v = malloc(sizeof(*v));

	if (!v)
		return NULL;
	*v = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	if (str_id(p, type, &v->type) || str_id(p, unit, &v->unit)) {
		free(v);
		return NULL;
	}
	return v;
}

static int write_gz(const char *path, const uint8_t *buf, size_t len)
{
	gzFile gz;
	int fd = -1;

	if (strcmp(path, "-") == 0) {
		fd = dup(STDOUT_FILENO);
		if (fd < 0)
			return -errno;
		gz = gzdopen(fd, "wb");
	} else {
		gz = gzopen(path, "wb");
	}
	if (!gz) {
		int e = errno ? errno : ENOMEM;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	size_t done = 0;
	while (done < len) {
		unsigned chunk = len - done > (1u << 30) ? (1u << 30) : (unsigned)(len - done);
		int n = gzwrite(gz, buf + done, chunk);
		if (n <= 0) {
			gzclose(gz);
			return -EIO;
		}
		done += (size_t)n;
	}
	return gzclose(gz) == Z_OK ? 0 : -EIO;
}

static void free_all(struct pp *p)
{
	for (size_t i = 0; i < p->strtab.nr; i++)
		free(p->strtab.v[i]);
	for (size_t i = 0; i < p->mapv.nr; i++)
		free(p->mapv.v[i]);
	for (size_t i = 0; i < p->locv.nr; i++) {
		Location *l = p->locv.v[i];
		for (size_t j = 0; j < l->n_line; j++)
			free(l->line[j]);
		free(l->line);
		free(l);
	}
	for (size_t i = 0; i < p->funcv.nr; i++)
		free(p->funcv.v[i]);
	for (size_t i = 0; i < p->samplev.nr; i++) {
		Sample *s = p->samplev.v[i];
		for (size_t j = 0; j < s->n_label; j++)
			free(s->label[j]);
		free(s->label);
		free(s->location_id);
		free(s->value);
		free(s);
	}
	free(p->strtab.v);
	free(p->mapv.v);
	free(p->is_main);
	free(p->locv.v);
	free(p->funcv.v);
	free(p->samplev.v);
	free(p->ids);
	rep_map_free(&p->strings);
	rep_map_free(&p->mappings);
	rep_map_free(&p->locations);
	rep_map_free(&p->functions);
	rep_map_free(&p->samples);
	rep_map_free(&p->named);
}

static int kernel_mappings_last(struct pp *p)
{
	int64_t kname;
	uint64_t *newid = malloc((p->mapv.nr ? p->mapv.nr : 1) * sizeof(*newid));
	void **v = malloc((p->mapv.nr ? p->mapv.nr : 1) * sizeof(*v));
	size_t k = 0;
	int err = str_id(p, "[kernel.kallsyms]", &kname);

	if (!newid || !v || err) {
		free(newid);
		free(v);
		return err ? err : -ENOMEM;
	}
	/* processes' main binaries, other user mappings, the kernel */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < p->mapv.nr; i++) {
			Mapping *m = p->mapv.v[i];
			int want = m->filename == kname ? 2 : p->is_main[i] ? 0 : 1;

			if (want != pass)
				continue;
			newid[i] = ++k;
			v[k - 1] = m;
		}
	}
	for (size_t i = 0; i < p->mapv.nr; i++)
		((Mapping *)v[i])->id = i + 1;
	for (size_t i = 0; i < p->locv.nr; i++) {
		Location *l = p->locv.v[i];
		if (l->mapping_id)
			l->mapping_id = newid[l->mapping_id - 1];
	}
	free(p->mapv.v);
	p->mapv.v = v;
	p->mapv.cap = p->mapv.nr ? p->mapv.nr : 1;
	free(newid);
	return 0;
}

/* The export being built: the inputs walked so far (report.h). */
struct rep_pprof {
	struct pp p;
	Profile prof;
	ValueType *types[3], *period_type;
	bool by_freq;
	size_t nr_in;
	uint64_t start, end;
};

void rep_pprof_destroy(struct rep_pprof *x)
{
	if (!x)
		return;
	free(x->types[0]);
	free(x->types[1]);
	free(x->types[2]);
	free(x->period_type);
	free_all(&x->p);
	free(x);
}

int rep_pprof_create(struct rep_pprof **out, const struct rep_config *cfg, struct bsym_ctx *sym,
		     bool symbolize, bool by_freq, bool offcpu)
{
	struct rep_pprof *x = calloc(1, sizeof(*x));
	int64_t dummy;
	int err;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->p = (struct pp){ .cfg = cfg, .symbolize = symbolize, .sym = sym, .offcpu = offcpu };
	x->prof = (Profile)PERFTOOLS__PROFILES__PROFILE__INIT;
	x->by_freq = by_freq;
	x->start = UINT64_MAX;
	err = str_id(&x->p, "", &dummy); /* string_table[0] */
	if (err)
		goto fail;
	/* cpu/nanoseconds when sampling by frequency, else events/count */
	x->types[0] = value_type(&x->p, "samples", "count");
	x->types[1] = by_freq ? value_type(&x->p, "cpu", "nanoseconds")
			      : value_type(&x->p, "events", "count");
	x->period_type = by_freq ? value_type(&x->p, "cpu", "nanoseconds")
				 : value_type(&x->p, "events", "count");
	if (!x->types[0] || !x->types[1] || !x->period_type ||
	    (offcpu && !(x->types[2] = value_type(&x->p, "off-cpu", "nanoseconds")))) {
		err = -ENOMEM;
		goto fail;
	}
	*out = x;
	return 0;
fail:
	rep_pprof_destroy(x);
	return err;
}

int rep_pprof_add(struct rep_pprof *x, const struct rep_input *in, struct rep_stats *st)
{
	const struct bprof_meta *m = &in->rec->meta;
	struct pp *p = &x->p;

	p->input = x->nr_in;
	if (x->by_freq)
		p->period = m->sample_freq ? (int64_t)(1000000000ull / m->sample_freq) : 0;
	else
		p->period = m->sample_period > INT64_MAX ? INT64_MAX : (int64_t)m->sample_period;
	if (x->nr_in == 0)
		x->prof.period = p->period;
	x->nr_in++;
	p->offperiod = (int64_t)(in->rec->offcpu.period_ns > INT64_MAX ? INT64_MAX
								  : in->rec->offcpu.period_ns);
	if (m->start_time_ns && m->start_time_ns < x->start)
		x->start = m->start_time_ns;
	if (m->start_time_ns + m->duration_ns > x->end)
		x->end = m->start_time_ns + m->duration_ns;
	return rep_walk(p->cfg, p->sym, in, p->symbolize, on_row, p, st);
}

int rep_pprof_write(struct rep_pprof *x, const char *path)
{
	struct pp *p = &x->p;
	Profile *prof = &x->prof;
	uint8_t *buf = NULL;
	int err;

	/* pprof takes the first mapping for the main binary: user ones first */
	err = kernel_mappings_last(p);
	if (err)
		return err;
	prof->n_sample_type = p->offcpu ? 3 : 2;
	prof->sample_type = x->types;
	prof->period_type = x->period_type;
	prof->n_sample = p->samplev.nr;
	prof->sample = (Sample **)p->samplev.v;
	prof->n_mapping = p->mapv.nr;
	prof->mapping = (Mapping **)p->mapv.v;
	prof->n_location = p->locv.nr;
	prof->location = (Location **)p->locv.v;
	prof->n_function = p->funcv.nr;
	prof->function = (Function **)p->funcv.v;
	prof->n_string_table = p->strtab.nr;
	prof->string_table = (char **)p->strtab.v;
	if (x->start != UINT64_MAX) {
		prof->time_nanos = (int64_t)x->start;
		prof->duration_nanos = x->end > x->start ? (int64_t)(x->end - x->start) : 0;
	}

	size_t len = perftools__profiles__profile__get_packed_size(prof);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	perftools__profiles__profile__pack(prof, buf);
	err = write_gz(path, buf, len);
	free(buf);
	return err;
}

bool rep_pprof_by_freq(const struct bprof_recording *first)
{
	return !first || first->meta.sample_freq || !first->meta.sample_period;
}

int rep_export_pprof(const char *path, const struct rep_config *cfg, struct bsym_ctx *sym,
		     const struct rep_input *in, size_t nr_in, bool symbolize, struct rep_stats *st)
{
	struct rep_pprof *x = NULL;
	bool offcpu = false;
	int err;

	for (size_t i = 0; i < nr_in; i++)
		offcpu |= in[i].rec->offcpu.mode != BPROF_OFFCPU_NONE;
	err = rep_pprof_create(&x, cfg, sym, symbolize, rep_pprof_by_freq(nr_in ? in[0].rec : NULL),
			       offcpu);
	for (size_t i = 0; i < nr_in && !err; i++)
		err = rep_pprof_add(x, &in[i], st);
	if (!err)
		err = rep_pprof_write(x, path);
	rep_pprof_destroy(x);
	return err;
}
