/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyrec.c - CPython found in sampled objects, its walk set up, its code
 * objects' names copied (pyrec.h).
 *
 * An object is an interpreter when its symbol table (.dynsym: Debian's
 * python3.11 is stripped but exports them; libpython3.X.so likewise) has
 * _PyRuntime and _PyEval_EvalFrameDefault.  Its version is the value of
 * Py_Version (3.11+), read from the file; the offsets come from pyoff.c's
 * tables (3.11, 3.12) or, for 3.13, from the _Py_DebugOffsets that
 * _PyRuntime's initialized data starts with, also read from the file.  So
 * nothing is read from a process to know how to walk it: the process is
 * only read for the code objects its frames name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "elfobj.h"
#include "pyoff.h"
#include "pyrec.h"
#include "runtimes.h"

/* What an object is, as far as Python goes. */
struct pyobj {
	bool seen, python;
	uint32_t status;      /* enum bprof_python_status */
	uint32_t version;
	uint64_t runtime, eval, eval_size, code_type, unicode_type, bytes_type; /* vaddrs */
	struct pyoff off;
	struct elfobj_loads loads;
};

/* A process image with an interpreter. */
struct pyproc {
	uint32_t pid, exec_id, version, status;
	bool live;            /* in py_procs */
	struct python_proc walk;
	uint64_t unicode_type, bytes_type; /* addresses in the process */
	struct pyoff off;
};

struct pyrec {
	int procs_fd, stats_fd, nr_cpus;
	bool met;             /* a process was put in py_procs */
	struct pyobj *objs;
	uint32_t nr_objs;
	struct pyproc *procs;
	uint32_t nr_procs, cap_procs;
	struct bprof_python_code *codes;
	uint64_t nr_codes, cap_codes;
	uint64_t copied, changed, unreadable;
	uint64_t read_live; /* codes copied in part from the process */
};

int pyrec_create(struct pyrec **out, int procs_fd, int stats_fd, int nr_cpus)
{
	struct pyrec *py = calloc(1, sizeof(*py));

	*out = NULL;
	if (!py)
		return -ENOMEM;
	py->procs_fd = procs_fd;
	py->stats_fd = stats_fd;
	py->nr_cpus = nr_cpus;
	*out = py;
	return 0;
}

static void free_code(struct bprof_python_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
}

void pyrec_destroy(struct pyrec *py)
{
	if (!py)
		return;
	for (uint64_t i = 0; i < py->nr_codes; i++)
		free_code(&py->codes[i]);
	free(py->codes);
	free(py->objs);
	free(py->procs);
	free(py);
}

struct py_syms {
	struct pyobj *o;
	uint64_t *version_at;
};

static void py_symbol(const char *name, const GElf_Sym *s, void *ctx)
{
	struct py_syms *c = ctx;

	if (name[0] != '_' && name[0] != 'P')
		return;
	if (!strcmp(name, "_PyRuntime"))
		c->o->runtime = s->st_value;
	else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
		c->o->eval = s->st_value;
		c->o->eval_size = s->st_size;
	} else if (!strcmp(name, "Py_Version"))
		*c->version_at = s->st_value;
	else if (!strcmp(name, "PyCode_Type"))
		c->o->code_type = s->st_value;
	else if (!strcmp(name, "PyUnicode_Type"))
		c->o->unicode_type = s->st_value;
	else if (!strcmp(name, "PyBytes_Type"))
		c->o->bytes_type = s->st_value;
}

/* An interpreter has _PyEval_EvalFrameDefault: in .dynsym (libpython, and
 * python binaries that export their symbols), else in .symtab. */
static void find_symbols(Elf *elf, struct pyobj *o, uint64_t *version_at)
{
	struct py_syms c = { .o = o, .version_at = version_at };

	elfobj_symbols(elf, SHT_DYNSYM, "_PyEval_EvalFrameDefault", py_symbol, &c);
	if (!o->runtime || !o->eval)
		elfobj_symbols(elf, SHT_SYMTAB, "_PyEval_EvalFrameDefault", py_symbol, &c);
}

void pyrec_object(struct pyrec *py, uint32_t idx, Elf *elf)
{
	struct pyobj o = { .seen = true }, *slot;
	uint64_t version_at = 0;

	if (!elf || idx >= (1u << 24))
		return;
	find_symbols(elf, &o, &version_at);
	if (!o.runtime || !o.eval || !o.eval_size)
		goto keep; /* not an interpreter */
	o.python = true;
	if (version_at) {
		uint8_t v[4];

		if (elfobj_read_vaddr(elf, version_at, v, sizeof(v)) == 1)
			o.version = v[0] | v[1] << 8 | v[2] << 16 | (uint32_t)v[3] << 24;
	}
	o.status = BPROF_PY_UNKNOWN_VERSION;
	if (!o.version)
		goto keep;
	if (!pyoff_table(o.version, &o.off)) {
		o.status = BPROF_PY_WALKED;
	} else {
		uint8_t dbg[PYOFF_DEBUG_LEN];
		const char *why;
		int err = -ENOENT;

		if (elfobj_read_vaddr(elf, o.runtime, dbg, sizeof(dbg)) == 1)
			err = pyoff_debug(dbg, sizeof(dbg), o.version, &o.off, &why);
		else if (PYOFF_MINOR(o.version) == 0x030d)
			err = -EINVAL;
		o.status = !err ? BPROF_PY_WALKED : err == -ENOTSUP ? BPROF_PY_FREE_THREADED
			 : err == -ENOENT ? BPROF_PY_UNKNOWN_VERSION : BPROF_PY_NO_OFFSETS;
	}
	if (o.status == BPROF_PY_WALKED && (!o.code_type || !o.unicode_type || !o.bytes_type))
		o.status = BPROF_PY_NO_OFFSETS;
	elfobj_loads_read(elf, &o.loads);
keep:
	if (idx >= py->nr_objs) {
		uint32_t n = idx + 64;
		struct pyobj *v = realloc(py->objs, n * sizeof(*v));

		if (!v)
			return; /* no Python frames for it: not worth failing for */
		memset(v + py->nr_objs, 0, (n - py->nr_objs) * sizeof(*v));
		py->objs = v;
		py->nr_objs = n;
	}
	slot = &py->objs[idx];
	*slot = o;
}

static struct pyproc *find_proc(struct pyrec *py, uint32_t pid, uint32_t exec_id)
{
	for (uint32_t i = 0; i < py->nr_procs; i++)
		if (py->procs[i].pid == pid && py->procs[i].exec_id == exec_id)
			return &py->procs[i];
	return NULL;
}

void pyrec_image(struct pyrec *py, uint32_t pid, uint32_t exec_id,
		 const struct manifest_mapping *maps, uint32_t nr)
{
	const struct pyobj *o = NULL;
	struct pyproc *p;
	uint64_t bias = 0;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		if (maps[i].obj >= py->nr_objs || !py->objs[maps[i].obj].python)
			continue;
		o = &py->objs[maps[i].obj];
		break;
	}
	if (!o || (o->status == BPROF_PY_WALKED && !elfobj_loads_bias(&o->loads, maps[i].start, maps[i].offset, &bias)))
		return;
	p = find_proc(py, pid, exec_id);
	if (!p) {
		if (py->nr_procs == py->cap_procs) {
			uint32_t n = py->cap_procs ? py->cap_procs * 2 : 16;
			struct pyproc *v = realloc(py->procs, n * sizeof(*v));

			if (!v)
				return;
			py->procs = v;
			py->cap_procs = n;
		}
		p = &py->procs[py->nr_procs++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		p->exec_id = exec_id;
	}
	p->version = o->version;
	p->status = o->status;
	if (o->status != BPROF_PY_WALKED)
		return;
	p->off = o->off;
	p->walk = (struct python_proc){
		.exec_id = exec_id,
		.version = o->version,
		.runtime = o->runtime + bias,
		.eval_start = o->eval + bias,
		.eval_end = o->eval + o->eval_size + bias,
		.code_type = o->code_type + bias,
		.off = o->off.walk,
	};
	p->unicode_type = o->unicode_type + bias;
	p->bytes_type = o->bytes_type + bias;
	if (!bpf_map_update_elem(py->procs_fd, &pid, &p->walk, BPF_ANY))
		p->live = py->met = true;
}

bool pyrec_met(const struct pyrec *py)
{
	return py && py->met;
}

void pyrec_image_gone(struct pyrec *py, uint32_t pid, uint32_t exec_id)
{
	struct pyproc *p = find_proc(py, pid, exec_id);

	if (p && p->live) {
		struct python_proc cur;

		/* only if the map still holds this image's (an exec may have
		 * put the next one's there already) */
		if (!bpf_map_lookup_elem(py->procs_fd, &pid, &cur) && cur.exec_id == exec_id)
			bpf_map_delete_elem(py->procs_fd, &pid);
		p->live = false;
	}
}

int pyrec_walk_info(const struct pyrec *py, uint32_t pid, uint32_t exec_id,
		    struct python_proc *out)
{
	for (uint32_t i = 0; i < py->nr_procs; i++)
		if (py->procs[i].pid == pid && py->procs[i].exec_id == exec_id &&
		    py->procs[i].status == BPROF_PY_WALKED) {
			*out = py->procs[i].walk;
			return 0;
		}
	return -ENOENT;
}

/* Where a code object's names are read from: the copies the BPF walk
 * made when it first met the code object (python.h), then, for what they
 * do not hold, the process itself while it lives. */
struct pysrc {
	const struct python_code_event *e; /* NULL: no copies */
	uint32_t pid;
	bool from_process; /* set by a read the copies did not hold */
};

static bool in_copy(uint64_t at, uint32_t have, const uint8_t *raw, uint64_t addr, void *dst,
		    size_t len)
{
	if (!at || addr < at || addr - at > have || len > have - (addr - at))
		return false;
	memcpy(dst, raw + (addr - at), len);
	return true;
}

static bool peek(struct pysrc *src, uint64_t addr, void *dst, size_t len)
{
	const struct python_code_event *e = src->e;
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)addr, len };

	if (!addr || addr >= (1ULL << 47))
		return false;
	if (e && (in_copy(e->code, e->hdr_len, e->hdr, addr, dst, len) ||
		  in_copy(e->qualname, e->qualname_len, e->qualname_raw, addr, dst, len) ||
		  in_copy(e->filename, e->filename_len, e->filename_raw, addr, dst, len) ||
		  in_copy(e->linetable, e->linetable_len, e->linetable_raw, addr, dst, len)))
		return true;
	src->from_process = true;
	return process_vm_readv((pid_t)src->pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

static uint64_t get64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* A str object as UTF-8 (compact strings only: every name of a code
 * object is one), or NULL. */
static char *read_str(const struct pyproc *p, struct pysrc *src, uint64_t addr)
{
	uint8_t h[128];
	uint64_t len;
	uint32_t state, kind, off;
	/* no more than the fields read: a short string at the end of a page
	 * the BPF copy stopped at is still whole in it */
	size_t hlen = p->off.uni_length + 8u > p->off.uni_state + 4u ? p->off.uni_length + 8u
								  : p->off.uni_state + 4u;
	uint8_t *raw;
	char *out, *q;

	if (hlen < 16)
		hlen = 16;
	if (hlen > sizeof(h) || !peek(src, addr, h, hlen) || get64(h, 8) != p->unicode_type)
		return NULL;
	len = get64(h, p->off.uni_length);
	memcpy(&state, h + p->off.uni_state, sizeof(state));
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || len > BPROF_PY_NAME_MAX / 4 || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	off = (state >> 6) & 1 ? p->off.uni_ascii_data : p->off.uni_compact_data;
	raw = malloc(len * kind + 1);
	out = malloc(len * 4 + 1);
	if (!raw || !out || (len && !peek(src, addr + off, raw, len * kind))) {
		free(raw);
		free(out);
		return NULL;
	}
	q = out;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? (uint32_t)raw[2 * i] | raw[2 * i + 1] << 8
				: (uint32_t)raw[4 * i] | raw[4 * i + 1] << 8 | raw[4 * i + 2] << 16 |
				  (uint32_t)raw[4 * i + 3] << 24;

		if (!c || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd; /* never a NUL or invalid UTF-8 in the file */
		if (c < 0x80) {
			*q++ = (char)c;
		} else if (c < 0x800) {
			*q++ = (char)(0xc0 | c >> 6);
			*q++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*q++ = (char)(0xe0 | c >> 12);
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		} else {
			*q++ = (char)(0xf0 | c >> 18);
			*q++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*q = 0;
	free(raw);
	return out;
}

static uint8_t *read_bytes(const struct pyproc *p, struct pysrc *src, uint64_t addr,
			   uint32_t *len_out)
{
	uint8_t h[64], *out;
	uint64_t len;
	size_t hlen = p->off.bytes_size + 8u < 16 ? 16 : p->off.bytes_size + 8u;

	if (hlen > sizeof(h) || !peek(src, addr, h, hlen) || get64(h, 8) != p->bytes_type)
		return NULL;
	len = get64(h, p->off.bytes_size);
	if (len > BPROF_PY_LINETABLE_MAX)
		return NULL;
	out = malloc(len + 1);
	if (!out || (len && !peek(src, addr + p->off.bytes_sval, out, len))) {
		free(out);
		return NULL;
	}
	*len_out = (uint32_t)len;
	return out;
}

void pyrec_code(struct pyrec *py, const struct python_code_event *e, size_t size)
{
	const struct python_offsets *w;
	struct bprof_python_code c = { 0 };
	struct pyproc *p = find_proc(py, e->pid, e->exec_id);
	struct pysrc src = { .e = size >= sizeof(*e) ? e : NULL, .pid = e->pid };
	uint8_t h[PYTHON_CODE_READ];
	uint32_t firstlineno;

	if (!p || p->status != BPROF_PY_WALKED)
		return;
	w = &p->off.walk;
	if (!peek(&src, e->code, h, sizeof(h)) || get64(h, 8) != p->walk.code_type) {
		py->unreadable++;
		return;
	}
	memcpy(&firstlineno, h + w->co_firstlineno, sizeof(firstlineno));
	/* the object the walk met, or another one since at its address: its
	 * names would then name the wrong frames, so none */
	if (python_guard(firstlineno, get64(h, w->co_filename), get64(h, w->co_qualname),
			 get64(h, w->co_linetable)) != e->guard) {
		py->changed++;
		return;
	}
	c.pid = e->pid;
	c.exec_id = e->exec_id;
	c.code = e->code;
	c.guard = e->guard;
	c.firstlineno = (int32_t)firstlineno;
	c.code_offset = w->co_adaptive;
	c.nr_units = (uint32_t)get64(h, w->co_size);
	c.qualname = read_str(p, &src, get64(h, w->co_qualname));
	c.filename = read_str(p, &src, get64(h, w->co_filename));
	c.linetable = read_bytes(p, &src, get64(h, w->co_linetable), &c.linetable_len);
	if (!c.qualname || !c.filename || !c.linetable) {
		free_code(&c);
		py->unreadable++;
		return;
	}
	if (py->nr_codes == py->cap_codes) {
		uint64_t n = py->cap_codes ? py->cap_codes * 2 : 256;
		struct bprof_python_code *v = realloc(py->codes, n * sizeof(*v));

		if (!v) {
			free_code(&c);
			py->unreadable++;
			return;
		}
		py->codes = v;
		py->cap_codes = n;
	}
	py->codes[py->nr_codes++] = c;
	py->copied++;
	py->read_live += src.from_process;
}

/* Sort the copies and drop the ones copied twice (the BPF side's set of
 * announced codes is an LRU: a code it forgot is announced again). */
static void dedup_codes(struct pyrec *py)
{
	uint64_t n = 0;

	if (!py->nr_codes)
		return;
	qsort(py->codes, py->nr_codes, sizeof(*py->codes), bprof_python_code_cmp);
	for (uint64_t i = 0; i < py->nr_codes; i++) {
		if (n && !bprof_python_code_cmp(&py->codes[n - 1], &py->codes[i])) {
			free_code(&py->codes[i]);
			continue;
		}
		py->codes[n++] = py->codes[i];
	}
	py->nr_codes = n;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int pyrec_emit(struct pyrec *py, struct bprof_recording *rec)
{
	struct bprof_python *out = &rec->python;
	uint32_t nc = BPROF_PY_NR_COUNTERS;

	if (!py || (!py->nr_procs && !py->nr_codes))
		return 0;
	out->present = 1;
	out->nr_counters = nc;
	/* the BPF counters, summed over CPUs, then the recorder's */
	for (uint32_t k = 0; k < PYTHON_STAT_MAX; k++) {
		uint64_t *v = calloc(py->nr_cpus, sizeof(*v));

		if (!v)
			return -ENOMEM;
		if (!bpf_map_lookup_elem(py->stats_fd, &k, v))
			for (int c = 0; c < py->nr_cpus; c++)
				out->counters[k] += v[c];
		free(v);
	}
	out->counters[PYTHON_STAT_MAX] = py->copied;
	out->counters[PYTHON_STAT_MAX + 1] = py->changed;
	out->counters[PYTHON_STAT_MAX + 2] = py->unreadable;
	out->counters[PYTHON_STAT_MAX + 3] = py->read_live;
	if (py->nr_procs && !(out->procs = calloc(py->nr_procs, sizeof(*out->procs))))
		return -ENOMEM;
	for (uint32_t i = 0; i < py->nr_procs; i++) {
		const struct pyproc *p = &py->procs[i];
		bool dup = false;

		for (uint64_t j = 0; j < out->nr_procs; j++)
			dup |= out->procs[j].pid == p->pid && out->procs[j].exec_id == p->exec_id;
		if (dup)
			continue;
		out->procs[out->nr_procs++] = (struct bprof_python_proc){
			.pid = p->pid, .exec_id = p->exec_id, .version = p->version, .status = p->status,
		};
	}
	dedup_codes(py);
	if (py->nr_codes && !(out->codes = calloc(py->nr_codes, sizeof(*out->codes))))
		return -ENOMEM;
	for (uint64_t i = 0; i < py->nr_codes; i++) {
		const struct bprof_python_code *s = &py->codes[i];
		struct bprof_python_code *d = &out->codes[i];

		*d = *s;
		d->qualname = dup_or_null(s->qualname);
		d->filename = dup_or_null(s->filename);
		d->linetable = malloc(s->linetable_len + 1);
		out->nr_codes = i + 1;
		if (!d->qualname || !d->filename || !d->linetable)
			return -ENOMEM;
		memcpy(d->linetable, s->linetable, s->linetable_len);
	}
	return 0;
}

/* ---- Python's row of the runtimes' table (runtimes.h) ----------------- */

static int py_create(void **out, const struct runtime_maps *m)
{
	return pyrec_create((struct pyrec **)out, m->procs_fd, m->stats_fd, m->nr_cpus);
}

static void py_destroy(void *rt) { pyrec_destroy(rt); }
static void py_object(void *rt, uint32_t idx, Elf *elf) { pyrec_object(rt, idx, elf); }
static void py_image_gone(void *rt, uint32_t pid, uint32_t exec_id) { pyrec_image_gone(rt, pid, exec_id); }
static bool py_met(const void *rt) { return pyrec_met(rt); }
static int py_emit(void *rt, struct bprof_recording *rec) { return pyrec_emit(rt, rec); }

static void py_image(void *rt, uint32_t pid, uint32_t exec_id, const struct manifest_mapping *maps,
		     uint32_t nr)
{
	pyrec_image(rt, pid, exec_id, maps, nr);
}

/* named now from the copies the walk made (the process may be gone) */
static bool py_event(void *rt, const void *data, size_t size)
{
	const struct python_code_event *e = data;

	if (e->type != PYTHON_EVENT_CODE)
		return false;
	if (rt && size >= sizeof(*e))
		pyrec_code(rt, e, size);
	return true;
}

const struct runtime_ops pyrec_ops = {
	.mask = RUNTIME_PYTHON,
	.create = py_create, .destroy = py_destroy,
	.object = py_object, .image = py_image, .image_gone = py_image_gone, .met = py_met,
	.event = py_event, .emit = py_emit,
};
