/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_runtimes.c - parse and validate the sections that name runtimes'
 * frames, PYTHON, V8 and JVM (SPEC.md 6.15, 6.17, 6.18), and JIT's
 * (6.16).  The cursor and its rules are read_sections.c's.
 */
#include <stdlib.h>

#include "internal.h"

/* Bytes of a PYTHON code entry: a length checked against the limit and
 * what remains, copied NUL-terminated (bin: may hold NULs). */
static int get_py_bytes(struct bprof_cur *c, uint32_t n, uint32_t limit, bool bin, char **out,
			const char *what, uint64_t i)
{
	int rc;

	if (n > limit)
		return bprof_cerr(c, BPROF_E_LIMIT, "code %llu: %s of %u bytes (limit %u)",
				  (unsigned long long)i, what, n, limit);
	if ((rc = bprof_need(c, n, what)))
		return rc;
	if (!bin && memchr(c->b + c->pos, '\0', n))
		return bprof_cerr(c, BPROF_E_CORRUPT, "code %llu: %s contains a NUL byte",
				  (unsigned long long)i, what);
	if (!(*out = malloc((size_t)n + 1)))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "%s", what);
	memcpy(*out, c->b + c->pos, n);
	(*out)[n] = '\0';
	c->pos += n;
	return 0;
}

/* CPython frames' names (1.7, SPEC.md 6.15). */
int bprof_parse_python(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_python *py = &r->python;
	uint32_t nc, reserved;
	uint64_t n;
	int rc;

	if ((rc = bprof_need(c, 8, "header")))
		return rc;
	nc = bprof_g32(c);
	reserved = bprof_g32(c);
	if (nc > 256)
		return bprof_cerr(c, BPROF_E_LIMIT, "%u counters (limit 256)", nc);
	if (c->strict && reserved)
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	if ((rc = bprof_need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	py->present = 1;
	py->nr_counters = nc;
	for (uint32_t i = 0; i < nc; i++)
		py->counters[i] = bprof_g64(c);
	if ((rc = bprof_get_count(c, &n, BPROF_PY_PROC_LEN, "Python processes")))
		return rc;
	if (n && !(py->procs = calloc(n, sizeof(*py->procs))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "Python processes");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_python_proc *p = &py->procs[i];

		p->pid = bprof_g32(c);
		p->exec_id = bprof_g32(c);
		p->version = bprof_g32(c);
		p->status = bprof_g32(c);
		py->nr_procs = i + 1;
		if (c->strict && p->status > BPROF_PY_STATUS_MAX)
			return bprof_cerr(c, BPROF_E_CORRUPT, "process %llu: status %u",
					  (unsigned long long)i, p->status);
		if (i && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return bprof_cerr(c, BPROF_E_CORRUPT, "process %llu (pid %u) duplicated or out of order",
					  (unsigned long long)i, p->pid);
	}
	if ((rc = bprof_get_count(c, &n, BPROF_PY_CODE_FIXED_LEN, "code objects")))
		return rc;
	if (n && !(py->codes = calloc(n, sizeof(*py->codes))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "Python code objects");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_python_code *e = &py->codes[i];
		uint32_t ql, fl;
		char *lt = NULL;

		if ((rc = bprof_need(c, BPROF_PY_CODE_FIXED_LEN, "code entry")))
			return rc;
		py->nr_codes = i + 1;
		e->pid = bprof_g32(c);
		e->exec_id = bprof_g32(c);
		e->code = bprof_g64(c);
		e->guard = bprof_g32(c);
		e->firstlineno = (int32_t)bprof_g32(c);
		e->code_offset = bprof_g32(c);
		e->nr_units = bprof_g32(c);
		ql = bprof_g32(c);
		fl = bprof_g32(c);
		e->linetable_len = bprof_g32(c);
		reserved = bprof_g32(c);
		if (c->strict && reserved)
			return bprof_cerr(c, BPROF_E_CORRUPT, "code %llu: reserved field 0x%x",
					  (unsigned long long)i, reserved);
		if (i && bprof_python_code_cmp(e, e - 1) <= 0)
			return bprof_cerr(c, BPROF_E_CORRUPT, "code %llu duplicated or out of order",
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
int bprof_parse_v8(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_v8 *v = &r->v8;
	uint32_t nc, reserved;
	uint64_t n;
	int rc;

	if ((rc = bprof_need(c, 8, "header")))
		return rc;
	nc = bprof_g32(c);
	reserved = bprof_g32(c);
	if (nc > 256)
		return bprof_cerr(c, BPROF_E_LIMIT, "%u counters (limit 256)", nc);
	if (c->strict && reserved)
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	if ((rc = bprof_need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	v->present = 1;
	v->nr_counters = nc;
	for (uint32_t i = 0; i < nc; i++)
		v->counters[i] = bprof_g64(c);
	if ((rc = bprof_get_count(c, &n, BPROF_V8_PROC_LEN, "V8 processes")))
		return rc;
	if (n && !(v->procs = calloc(n, sizeof(*v->procs))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 processes");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_v8_proc *p = &v->procs[i];

		p->pid = bprof_g32(c);
		p->exec_id = bprof_g32(c);
		p->status = bprof_g32(c);
		reserved = bprof_g32(c);
		v->nr_procs = i + 1;
		if (c->strict && (p->status > BPROF_V8_STATUS_MAX || reserved))
			return bprof_cerr(c, BPROF_E_CORRUPT, "process %llu: status %u, reserved 0x%x",
					  (unsigned long long)i, p->status, reserved);
		if (i && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return bprof_cerr(c, BPROF_E_CORRUPT, "process %llu (pid %u) duplicated or out of order",
					  (unsigned long long)i, p->pid);
	}
	if ((rc = bprof_get_count(c, &n, BPROF_V8_SFI_FIXED_LEN, "SFIs")))
		return rc;
	if (n && !(v->sfis = calloc(n, sizeof(*v->sfis))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 SFIs");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_v8_sfi *e = &v->sfis[i];
		uint32_t nl, sl, np;

		if ((rc = bprof_need(c, BPROF_V8_SFI_FIXED_LEN, "SFI entry")))
			return rc;
		v->nr_sfis = i + 1;
		e->pid = bprof_g32(c);
		e->exec_id = bprof_g32(c);
		e->sfi = bprof_g64(c);
		e->guard = bprof_g32(c);
		e->line = (int32_t)bprof_g32(c);
		nl = bprof_g32(c);
		sl = bprof_g32(c);
		e->nr_pos = 0;
		np = bprof_g32(c);
		reserved = bprof_g32(c);
		if (c->strict && reserved)
			return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu: reserved field 0x%x",
					  (unsigned long long)i, reserved);
		if (np > BPROF_V8_POS_MAX)
			return bprof_cerr(c, BPROF_E_LIMIT, "SFI %llu: %u position rows (limit %u)",
					  (unsigned long long)i, np, BPROF_V8_POS_MAX);
		if (i && bprof_v8_sfi_cmp(e, e - 1) <= 0)
			return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu duplicated or out of order",
					  (unsigned long long)i);
		if (e->line < 0)
			return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu: line %d", (unsigned long long)i, e->line);
		if ((rc = get_py_bytes(c, nl, BPROF_V8_NAME_MAX, false, &e->name, "function name", i)) ||
		    (rc = get_py_bytes(c, sl, BPROF_V8_NAME_MAX, false, &e->script, "script name", i)))
			return rc;
		/* each row is at least 8 + 12 bytes: checked before allocating */
		if ((rc = bprof_need(c, (uint64_t)np * 20, "position rows")))
			return rc;
		if (np && !(e->pos = calloc(np, sizeof(*e->pos))))
			return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 position rows");
		for (uint32_t j = 0; j < np; j++) {
			struct bprof_v8_pos *r = &e->pos[j];
			uint32_t nf;

			if ((rc = bprof_need(c, 8, "position row")))
				return rc;
			e->nr_pos = j + 1;
			r->code_offset = bprof_g32(c);
			nf = bprof_g32(c);
			if (j && r->code_offset <= r[-1].code_offset)
				return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu: position row %u out of order",
						  (unsigned long long)i, j);
			if (!nf || nf > BPROF_V8_INLINE_MAX)
				return bprof_cerr(c, BPROF_E_LIMIT, "SFI %llu: position row %u of %u frames",
						  (unsigned long long)i, j, nf);
			if ((rc = bprof_need(c, (uint64_t)nf * 12, "position frames")))
				return rc;
			if (!(r->frames = calloc(nf, sizeof(*r->frames))))
				return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "V8 frames");
			for (uint32_t k = 0; k < nf; k++) {
				struct bprof_v8_frame *fr = &r->frames[k];
				uint32_t a, b;

				if ((rc = bprof_need(c, 12, "frame")))
					return rc;
				r->nr_frames = k + 1;
				fr->line = (int32_t)bprof_g32(c);
				a = bprof_g32(c);
				b = bprof_g32(c);
				if (fr->line < 0)
					return bprof_cerr(c, BPROF_E_CORRUPT, "SFI %llu: frame line %d",
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
int bprof_parse_jit(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_jit *j = &r->jit;
	uint32_t nc, reserved;
	uint64_t n, prev = 0;
	int rc;

	if ((rc = bprof_need(c, 16, "header")))
		return rc;
	j->mono_minus_real_ns = (int64_t)bprof_g64(c);
	nc = bprof_g32(c);
	reserved = bprof_g32(c);
	if (nc > BPROF_JIT_MAX_COUNTERS) {
		c->pos -= 8;
		return bprof_cerr(c, BPROF_E_LIMIT, "%u counters (limit %u)", nc, BPROF_JIT_MAX_COUNTERS);
	}
	if (c->strict && reserved) {
		c->pos -= 4;
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	}
	if ((rc = bprof_need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	for (uint32_t i = 0; i < nc; i++) {
		uint64_t v = bprof_g64(c);

		if (i < BPROF_JIT_NR_COUNTERS)
			j->counters[i] = v;
	}
	j->present = 1;
	if ((rc = bprof_get_count(c, &n, BPROF_JITDUMP_FIXED_LEN, "jitdumps")))
		return rc;
	if (n && !(j->dumps = calloc(n, sizeof(*j->dumps))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "jitdumps");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jitdump *d = &j->dumps[i];
		uint64_t at = c->pos, key;

		if ((rc = bprof_need(c, BPROF_JITDUMP_FIXED_LEN, "jitdump")))
			return rc;
		d->pid = bprof_g32(c);
		d->exec_id = bprof_g32(c);
		d->len = bprof_g64(c);
		j->nr_dumps = i + 1;
		key = (uint64_t)d->pid << 32 | d->exec_id;
		if (i && key <= prev) {
			c->pos = at;
			return bprof_cerr(c, BPROF_E_CORRUPT, "jitdump %llu: (pid %u, exec_id %u) not after the previous one",
					  (unsigned long long)i, d->pid, d->exec_id);
		}
		prev = key;
		if ((rc = bprof_need(c, d->len, "jitdump bytes")))
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
static int get_jvm_str(struct bprof_cur *c, uint32_t n, char **out, const char *what, uint64_t i)
{
	*out = NULL;
	if (!n)
		return 0;
	return get_py_bytes(c, n, BPROF_JVM_NAME_MAX, false, out, what, i);
}

/* HotSpot frames' names (1.9, SPEC.md 6.18). */
int bprof_parse_jvm(struct bprof_cur *c, struct bprof_recording *r)
{
	struct bprof_jvm *j = &r->jvm;
	uint32_t nc, reserved;
	uint64_t n;
	int rc;

	if ((rc = bprof_need(c, 8, "header")))
		return rc;
	nc = bprof_g32(c);
	reserved = bprof_g32(c);
	if (nc > BPROF_JVM_MAX_COUNTERS)
		return bprof_cerr(c, BPROF_E_LIMIT, "%u counters (limit %u)", nc, BPROF_JVM_MAX_COUNTERS);
	if (c->strict && reserved)
		return bprof_cerr(c, BPROF_E_CORRUPT, "reserved field is 0x%x", reserved);
	if ((rc = bprof_need(c, (uint64_t)nc * 8, "counters")))
		return rc;
	j->present = 1;
	j->nr_counters = nc;
	for (uint32_t i = 0; i < nc; i++)
		j->counters[i] = bprof_g64(c);
	if ((rc = bprof_get_count(c, &n, BPROF_JVM_PROC_FIXED_LEN, "JVM processes")))
		return rc;
	if (n && !(j->procs = calloc(n, sizeof(*j->procs))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "JVM processes");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jvm_proc *p = &j->procs[i];
		uint32_t vl;

		if ((rc = bprof_need(c, BPROF_JVM_PROC_FIXED_LEN, "process")))
			return rc;
		p->pid = bprof_g32(c);
		p->exec_id = bprof_g32(c);
		p->status = bprof_g32(c);
		vl = bprof_g32(c);
		j->nr_procs = i + 1;
		if (c->strict && p->status > BPROF_JVM_STATUS_MAX)
			return bprof_cerr(c, BPROF_E_CORRUPT, "process %llu: status %u",
					  (unsigned long long)i, p->status);
		if (i && (p->pid < p[-1].pid || (p->pid == p[-1].pid && p->exec_id <= p[-1].exec_id)))
			return bprof_cerr(c, BPROF_E_CORRUPT, "process %llu (pid %u) duplicated or out of order",
					  (unsigned long long)i, p->pid);
		if ((rc = get_jvm_str(c, vl, &p->version, "version", i)))
			return rc;
	}
	if ((rc = bprof_get_count(c, &n, BPROF_JVM_FRAME_FIXED_LEN, "JVM frames")))
		return rc;
	if (n && !(j->frames = calloc(n, sizeof(*j->frames))))
		return bprof_set_error(c->err, BPROF_E_NOMEM, 0, "JVM frames");
	for (uint64_t i = 0; i < n; i++) {
		struct bprof_jvm_frame *f = &j->frames[i];
		uint32_t kl, ml, sl, fl;
		char *lines = NULL;

		if ((rc = bprof_need(c, BPROF_JVM_FRAME_FIXED_LEN, "frame entry")))
			return rc;
		j->nr_frames = i + 1;
		f->pid = bprof_g32(c);
		f->exec_id = bprof_g32(c);
		f->id = bprof_g64(c);
		f->guard = bprof_g32(c);
		f->kind = bprof_g32(c);
		f->level = (int32_t)bprof_g32(c);
		kl = bprof_g32(c);
		ml = bprof_g32(c);
		sl = bprof_g32(c);
		fl = bprof_g32(c);
		f->lines_len = bprof_g32(c);
		f->scopes_len = bprof_g32(c);
		reserved = bprof_g32(c);
		if (c->strict && reserved)
			return bprof_cerr(c, BPROF_E_CORRUPT, "frame %llu: reserved field 0x%x",
					  (unsigned long long)i, reserved);
		if (c->strict && (f->kind == 0 || f->kind > BPROF_JVM_KIND_MAX))
			return bprof_cerr(c, BPROF_E_CORRUPT, "frame %llu: kind %u", (unsigned long long)i,
					  f->kind);
		if (i && bprof_jvm_frame_cmp(f, f - 1) <= 0)
			return bprof_cerr(c, BPROF_E_CORRUPT, "frame %llu duplicated or out of order",
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
