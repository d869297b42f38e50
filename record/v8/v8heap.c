/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8heap.c - V8's heap objects read from a process (process_vm_readv):
 * tagged fields, instance types, strings (one-byte, two-byte, cons, thin,
 * sliced), scope infos, scripts and their lines, a SharedFunctionInfo's
 * name.  Every read may fail or return another object than expected: the
 * callers check the guard (v8rec.c).
 */
#include "v8rec_internal.h"

/* ---- the process's objects -------------------------------------------- */

bool v8rec__peek(uint32_t pid, uint64_t addr, void *dst, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)addr, len };

	if (!addr || addr >= (1ULL << 47))
		return false;
	return process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

bool v8rec__heap_ptr(uint64_t t)
{
	return (t & 3) == 1 && t > 4096 && t < (1ULL << 47);
}

/* A tagged field of the object at tagged address obj. */
bool v8rec__field(uint32_t pid, uint64_t obj, int off, uint64_t *out)
{
	return off >= 0 && v8rec__peek(pid, obj - 1 + (uint64_t)off, out, sizeof(*out));
}

/* The instance type of the object at tagged address obj, or -1. */
int v8rec__type_of(uint32_t pid, const struct v8off *o, uint64_t obj)
{
	uint64_t map;
	uint16_t t;

	if (!v8rec__heap_ptr(obj) || !v8rec__field(pid, obj, 0, &map) || !v8rec__heap_ptr(map) ||
	    !v8rec__peek(pid, map - 1 + (uint64_t)o->map_instance_type, &t, sizeof(t)))
		return -1;
	return t;
}

/* The entry point of Code object code: after its header (V8 < 11), or
 * the address its entry field holds. */
bool v8rec__code_entry(uint32_t pid, const struct v8off *o, uint64_t code, uint64_t *entry)
{
	if (o->code_header) {
		*entry = code - 1 + (uint64_t)o->code_header;
		return true;
	}
	return v8rec__field(pid, code, o->code_entry, entry);
}

/* UTF-16 units [from, from + n) of string s into dst: sequential, cons,
 * sliced and thin strings (external ones are not in V8's heap: false). */
static bool units(uint32_t pid, const struct v8off *o, uint64_t s, uint32_t from, uint32_t n,
		  uint16_t *dst, int depth)
{
	int t = v8rec__type_of(pid, o, s);
	int32_t len;
	uint64_t a, b, sl;

	if (t < 0 || t >= o->first_nonstring || depth > 32 ||
	    !v8rec__peek(pid, s - 1 + (uint64_t)o->str_length, &len, sizeof(len)) || len < 0 ||
	    from > (uint32_t)len || n > (uint32_t)len - from)
		return false;
	if (!n)
		return true;
	switch (t & 7) {
	case 0: { /* sequential */
		bool one = (t & 8) == (o->onebyte_tag ? o->onebyte_tag : 8);
		uint64_t at = s - 1 + (uint64_t)o->seq_chars;

		if (one) {
			uint8_t *tmp = malloc(n);
			bool ok = tmp && v8rec__peek(pid, at + from, tmp, n);

			for (uint32_t i = 0; ok && i < n; i++)
				dst[i] = tmp[i];
			free(tmp);
			return ok;
		}
		return v8rec__peek(pid, at + 2ULL * from, dst, 2ULL * n);
	}
	default:
		break;
	}
	if ((t & 7) == o->tag_cons && v8rec__field(pid, s, o->cons_first, &a) &&
	    v8rec__field(pid, s, o->cons_second, &b)) {
		int32_t fl;
		uint32_t k;

		if (!v8rec__heap_ptr(a) || !v8rec__peek(pid, a - 1 + (uint64_t)o->str_length, &fl, sizeof(fl)) || fl < 0)
			return false;
		k = from < (uint32_t)fl ? (uint32_t)fl - from : 0;
		if (k > n)
			k = n;
		return (!k || units(pid, o, a, from, k, dst, depth + 1)) &&
		       (k == n || units(pid, o, b, from + k - (uint32_t)fl, n - k, dst + k, depth + 1));
	}
	if ((t & 7) == o->tag_thin && o->thin_actual && v8rec__field(pid, s, o->thin_actual, &a))
		return units(pid, o, a, from, n, dst, depth + 1);
	if ((t & 7) == o->tag_sliced && o->sliced_parent && v8rec__field(pid, s, o->sliced_parent, &a) &&
	    v8rec__field(pid, s, o->sliced_offset, &sl) && !(sl & 1))
		return units(pid, o, a, from + (uint32_t)(sl >> 32), n, dst, depth + 1);
	return false;
}

/* String s as UTF-8 (at most max units), or NULL. */
static char *utf8(uint32_t pid, const struct v8off *o, uint64_t s, uint32_t max)
{
	int32_t len;
	uint16_t *u;
	char *out, *q;

	if (!v8rec__heap_ptr(s) || !v8rec__peek(pid, s - 1 + (uint64_t)o->str_length, &len, sizeof(len)) ||
	    len < 0 || (uint32_t)len > max)
		return NULL;
	u = malloc(2ULL * len + 2);
	out = malloc(3ULL * len + 1);
	if (!u || !out || !units(pid, o, s, 0, (uint32_t)len, u, 0)) {
		free(u);
		free(out);
		return NULL;
	}
	q = out;
	for (int32_t i = 0; i < len; i++) {
		uint32_t c = u[i];

		if (!c || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd; /* never a NUL or invalid UTF-8 in the file */
		if (c < 0x80) {
			*q++ = (char)c;
		} else if (c < 0x800) {
			*q++ = (char)(0xc0 | c >> 6);
			*q++ = (char)(0x80 | (c & 0x3f));
		} else {
			*q++ = (char)(0xe0 | c >> 12);
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*q = 0;
	free(u);
	return out;
}

/*
 * A compiled function's ScopeInfo: its name and start position.  V8 keeps
 * the function's name in the ScopeInfo's variable part, after the context
 * locals (two words each), followed by its start and end positions as two
 * Smis; which optional slots come between changed across versions, so the
 * first string after the locals is taken as the name and the first pair
 * of Smis with start < end after it as the positions (as the OpenTelemetry
 * profiler does for V8 < 12.8).
 */
static void scope_info(uint32_t pid, const struct v8off *o, uint64_t si, char **name, int64_t *start)
{
	/* up to 74 context locals: V8 keeps 75 or more names in a hash
	 * table instead (one slot), a layout not followed here */
	enum { MAX_LOCALS = 74, AFTER = 16 };
	uint64_t w[3 + 2 * MAX_LOCALS + AFTER], prev = 1, nl;
	int64_t nlocals;
	uint32_t i, first, n;

	*start = -1;
	if (o->si_ncontextlocals < 0 || o->si_ncontextlocals > 2 || o->si_first_vars < 0 ||
	    o->si_first_vars > 3 || !v8rec__peek(pid, si - 1 + 8 + 8ULL * o->si_ncontextlocals, &nl, 8) ||
	    (nl & 1))
		return;
	nlocals = (int64_t)nl >> 32;
	if (nlocals < 0 || nlocals > MAX_LOCALS)
		return;
	first = (uint32_t)(o->si_first_vars + 2 * nlocals);
	n = first + AFTER;
	if (!v8rec__peek(pid, si - 1 + 8, w, 8ULL * n))
		return;
	for (i = first; i < n; i++) {
		if (!*name && v8rec__heap_ptr(w[i])) {
			int t = v8rec__type_of(pid, o, w[i]);

			if (t >= 0 && t < o->first_nonstring)
				*name = utf8(pid, o, w[i], BPROF_V8_NAME_MAX / 3);
		}
		if (*name && !(w[i] & 1) && !(prev & 1) && i &&
		    (int64_t)prev >> 32 < (int64_t)w[i] >> 32 && (int64_t)prev >= 0) {
			*start = (int64_t)prev >> 32;
			return;
		}
		prev = w[i];
	}
}

/* The line (1-based) of UTF-16 position pos in source string src, from a
 * cache of its line starts; 0 if unknown. */
int32_t v8rec__line_of(struct v8rec *v, uint32_t pid, const struct v8off *o, uint64_t src,
		       int64_t pos)
{
	struct v8source *c = NULL, *old = &v->sources[0];
	int32_t len;
	uint16_t *u;
	uint32_t lo, hi;

	if (pos < 0 || !v8rec__heap_ptr(src))
		return 0;
	for (int i = 0; i < V8REC_NR_SOURCES; i++) {
		if (v->sources[i].starts && v->sources[i].pid == pid && v->sources[i].source == src)
			c = &v->sources[i];
		if (v->sources[i].used < old->used)
			old = &v->sources[i];
	}
	if (!c) {
		if (!v8rec__peek(pid, src - 1 + (uint64_t)o->str_length, &len, sizeof(len)) || len < 0 ||
		    (uint32_t)len > V8REC_MAX_UNITS)
			return 0;
		u = malloc(2ULL * len + 2);
		if (!u || !units(pid, o, src, 0, (uint32_t)len, u, 0)) {
			free(u);
			return 0;
		}
		c = old;
		free(c->starts);
		c->nr = 1;
		for (int32_t i = 0; i < len; i++)
			c->nr += u[i] == '\n';
		c->starts = malloc(c->nr * sizeof(*c->starts));
		if (!c->starts) {
			free(u);
			return 0;
		}
		c->starts[0] = 0;
		c->nr = 1;
		for (int32_t i = 0; i < len; i++)
			if (u[i] == '\n')
				c->starts[c->nr++] = (uint32_t)i + 1;
		free(u);
		c->pid = pid;
		c->source = src;
	}
	c->used = ++v->tick;
	lo = 0;
	hi = c->nr;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->starts[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return (int32_t)lo + 1;
}

/* What names an SFI from its two words: its function's name (a string,
 * or the ScopeInfo's), its script's name, the script's source and the
 * function's start position in it (-1: unknown). */
void v8rec__sfi_names(const struct v8proc *p, uint64_t nos, uint64_t sodi, char **name,
		      char **script, uint64_t *src, int64_t *start)
{
	uint32_t pid = p->pid;
	uint64_t sname;
	int t;

	*name = *script = NULL;
	*src = 0;
	*start = -1;
	t = v8rec__type_of(pid, &p->off, nos);
	if (t >= 0 && t < p->off.first_nonstring)
		*name = utf8(pid, &p->off, nos, BPROF_V8_NAME_MAX / 3);
	else if (t >= 0 && t == p->off.type_scope_info && p->off.type_scope_info)
		scope_info(pid, &p->off, nos, name, start);
	if (p->off.type_script && v8rec__type_of(pid, &p->off, sodi) == p->off.type_script) {
		/* a name V8 is moving (a young string, scavenged: its map word
		 * a forwarding address for a moment) is read again: the script
		 * of a whole run's hottest function was left unknown so */
		for (int tries = 0; tries < 4; tries++) {
			if (tries)
				usleep(250);
			if (!v8rec__field(pid, sodi, p->off.script_name, &sname))
				break;
			*script = utf8(pid, &p->off, sname, BPROF_V8_NAME_MAX / 3);
			if (*script || !v8rec__heap_ptr(sname) || v8rec__type_of(pid, &p->off, sname) >= 0)
				break; /* named, or no string (an eval's script) */
		}
		if (!p->off.script_source || !v8rec__field(pid, sodi, p->off.script_source, src))
			*src = 0;
	}
}

/*
 * Read SFI sfi of process p (tagged) as the walk saw it (guard; code: the
 * optimized code the guard covers, 0 if none): its function's name, its
 * script's name, the line it starts on (0: unknown).  0; -ENOENT when it
 * cannot be read; -ESTALE when its guard differs (it moved or changed
 * since the sample: never named from what is there now).
 */
int v8rec__read_sfi(struct v8rec *v, const struct v8proc *p, uint64_t sfi, uint32_t guard,
		    uint64_t code, char **name, char **script, int32_t *line, uint64_t *fdata_out,
		    uint64_t *src_out)
{
	uint64_t fdata, nos, sodi, src, entry = 0;
	uint32_t pid = p->pid;
	int64_t start;

	*name = *script = NULL;
	*line = 0;
	if (v8rec__type_of(pid, &p->off, sfi) != p->off.type_sfi ||
	    !v8rec__field(pid, sfi, p->off.sfi_function_data, &fdata) ||
	    !v8rec__field(pid, sfi, p->off.sfi_nos, &nos) || !v8rec__field(pid, sfi, p->off.sfi_sodi, &sodi) ||
	    (code && (!p->code_ok || !v8rec__code_entry(pid, &p->off, code, &entry))))
		return -ENOENT;
	/* optimized code: the guard covers the code object and its entry
	 * point (bpf/v8/v8.h): another code here since is not named */
	if (v8_guard(nos, sodi, code ? fdata ^ code ^ entry : fdata) != guard)
		return -ESTALE;
	v8rec__sfi_names(p, nos, sodi, name, script, &src, &start);
	/* A source string V8 is moving (a young one, scavenged) reads as
	 * garbage for a moment: the script's source is read again, a few
	 * times, before the line is left unknown (whole runs lost their
	 * lines to it, every function being met in the first milliseconds) */
	for (int tries = 0; src && start >= 0 && tries < 4; tries++) {
		*line = v8rec__line_of(v, pid, &p->off, src, start);
		if (*line)
			break;
		usleep(250);
		if (!v8rec__field(pid, sodi, p->off.script_source, &src))
			break;
	}
	if (fdata_out)
		*fdata_out = fdata;
	if (src_out)
		*src_out = *line ? src : 0; /* a source that gave the line */
	return 0;
}
