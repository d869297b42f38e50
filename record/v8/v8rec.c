/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8rec.c - V8 found in sampled objects, its walk set up, its functions
 * named (v8rec.h).
 *
 * An object embeds V8 when its .dynsym has the v8dbg_* postmortem symbols
 * (node exports ~530): each is an int whose value is a layout fact (a
 * frame slot's offset from fp, a field's offset in a class, an instance
 * type's number), read from the file, so nothing about the layout is read
 * from a process.  Where the interpreter's code is comes from .symtab's
 * Builtins_* symbols (the embedded blob) and from the image's mappings:
 * V8 maps a second copy of the blob inside its code range (short builtin
 * calls), and JIT code is within 512 MiB of it.  An object with the
 * symbols but without one the walk needs is listed with its status and
 * keeps native stacks.
 *
 * Names are read from the process (process_vm_readv) when the walk
 * announces an SFI, with the guard recomputed from what is read: an SFI
 * that moved (V8's heap compacts) or was replaced since the sample is not
 * named rather than named wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "v8rec.h"

#define V8REC_MAX_LOADS 8
#define V8REC_CODE_RANGE (512ULL << 20) /* V8's x64 code range without pointer compression */
#define V8REC_MAX_UNITS (4u << 20)      /* longest string (source) read, UTF-16 units */
#define V8REC_NR_SOURCES 16

/* The layout facts the walk and the naming need (v8dbg_* values). */
struct v8off {
	int fp_function, fp_bytecode_array, fp_bytecode_offset;
	int map_instance_type, fn_shared;
	int sfi_function_data, sfi_nos, sfi_sodi;
	int type_sfi, type_scope_info, type_script, first_nonstring;
	int script_name, script_source;
	int str_length, seq_chars, cons_first, cons_second, thin_actual, sliced_parent, sliced_offset;
	int si_first_vars, si_ncontextlocals;
	int tag_cons, tag_sliced, tag_thin, tag_external, onebyte_tag;
	int tagged_size;
};

/* One v8dbg symbol: its name's prefix (newer V8 spell the field's type
 * differently after the last "__"), where its value goes, whether the
 * walk cannot do without it. */
static const struct {
	const char *prefix;
	size_t off;
	bool required;
} v8syms[] = {
#define F(p, f, r) { p, offsetof(struct v8off, f), r }
	F("v8dbg_off_fp_function", fp_function, true),
	F("v8dbg_off_fp_bytecode_array", fp_bytecode_array, true),
	F("v8dbg_off_fp_bytecode_offset", fp_bytecode_offset, true),
	F("v8dbg_class_Map__instance_type__", map_instance_type, true),
	F("v8dbg_class_JSFunction__shared__", fn_shared, true),
	F("v8dbg_class_SharedFunctionInfo__function_data__", sfi_function_data, true),
	F("v8dbg_class_SharedFunctionInfo__name_or_scope_info__", sfi_nos, true),
	F("v8dbg_class_SharedFunctionInfo__script_or_debug_info__", sfi_sodi, true),
	F("v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", type_sfi, true),
	F("v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", type_scope_info, false),
	F("v8dbg_type_Script__SCRIPT_TYPE", type_script, false),
	F("v8dbg_FirstNonstringType", first_nonstring, true),
	F("v8dbg_class_Script__name__", script_name, false),
	F("v8dbg_class_Script__source__", script_source, false),
	F("v8dbg_class_String__length__", str_length, true),
	F("v8dbg_class_SeqOneByteString__chars__", seq_chars, true),
	F("v8dbg_class_ConsString__first__", cons_first, false),
	F("v8dbg_class_ConsString__second__", cons_second, false),
	F("v8dbg_class_ThinString__actual__", thin_actual, false),
	F("v8dbg_class_SlicedString__parent__", sliced_parent, false),
	F("v8dbg_class_SlicedString__offset__", sliced_offset, false),
	F("v8dbg_scopeinfo_idx_first_vars", si_first_vars, false),
	F("v8dbg_scopeinfo_idx_ncontextlocals", si_ncontextlocals, false),
	F("v8dbg_ConsStringTag", tag_cons, false),
	F("v8dbg_SlicedStringTag", tag_sliced, false),
	F("v8dbg_ThinStringTag", tag_thin, false),
	F("v8dbg_ExternalStringTag", tag_external, false),
	F("v8dbg_OneByteStringTag", onebyte_tag, false),
	F("v8dbg_TaggedSize", tagged_size, false),
#undef F
};
#define NR_V8SYMS (sizeof(v8syms) / sizeof(v8syms[0]))

struct v8obj {
	bool v8;
	uint32_t status;           /* enum bprof_v8_status */
	struct v8off off;
	uint64_t blob_start, blob_end; /* vaddrs of the Builtins_* code */
	uint32_t nr_loads;
	struct { uint64_t offset, vaddr, filesz; bool exec; } loads[V8REC_MAX_LOADS];
};

struct v8proc {
	uint32_t pid, exec_id, status;
	bool live;
	struct v8off off;
	struct v8_proc walk;
};

/* A script's line starts, by (pid, source string) */
struct v8source {
	uint32_t pid;
	uint64_t source;
	uint32_t *starts, nr;      /* UTF-16 offsets of each line's start */
	uint64_t used;
};

struct v8rec {
	int procs_fd;
	struct v8obj *objs;
	uint32_t nr_objs;
	struct v8proc *procs;
	uint32_t nr_procs, cap_procs;
	struct bprof_v8_sfi *sfis;
	uint64_t nr_sfis, cap_sfis;
	uint64_t announced, named, changed, unreadable;
	struct v8source sources[V8REC_NR_SOURCES];
	uint64_t tick;
};

int v8rec_create(struct v8rec **out, int procs_fd)
{
	struct v8rec *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->procs_fd = procs_fd;
	*out = v;
	return 0;
}

void v8rec_destroy(struct v8rec *v)
{
	if (!v)
		return;
	for (uint64_t i = 0; i < v->nr_sfis; i++) {
		free(v->sfis[i].name);
		free(v->sfis[i].script);
	}
	for (int i = 0; i < V8REC_NR_SOURCES; i++)
		free(v->sources[i].starts);
	free(v->sfis);
	free(v->objs);
	free(v->procs);
	free(v);
}

/* The int at vaddr in the file; a symbol in .bss is 0. */
static bool read_int(Elf *elf, uint64_t vaddr, int *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr >= sh.sh_size || sh.sh_size - (vaddr - sh.sh_addr) < 4)
			continue;
		if (sh.sh_type == SHT_NOBITS) {
			*out = 0;
			return true;
		}
		if (sh.sh_type != SHT_PROGBITS)
			return false;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return false;
		memcpy(out, (const char *)d->d_buf + (vaddr - sh.sh_addr), 4);
		return true;
	}
	return false;
}

/* The v8dbg values (.dynsym) and the blob's extent (.symtab's Builtins_*). */
static void find_symbols(Elf *elf, struct v8obj *o, bool *found)
{
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t n;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			if (!d)
				continue;
			n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym s;
				const char *name;

				if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
					continue;
				name = elf_strptr(elf, sh.sh_link, s.st_name);
				if (!name)
					continue;
				if (pass && !strncmp(name, "Builtins_", 9) &&
				    GELF_ST_TYPE(s.st_info) == STT_FUNC) {
					if (!o->blob_start || s.st_value < o->blob_start)
						o->blob_start = s.st_value;
					if (s.st_value + s.st_size > o->blob_end)
						o->blob_end = s.st_value + s.st_size;
					continue;
				}
				if (pass || strncmp(name, "v8dbg_", 6))
					continue;
				o->v8 = true;
				for (size_t k = 0; k < NR_V8SYMS; k++) {
					size_t pl = strlen(v8syms[k].prefix);
					int val;

					if (strncmp(name, v8syms[k].prefix, pl) ||
					    (name[pl] && v8syms[k].prefix[pl - 1] != '_') ||
					    !read_int(elf, s.st_value, &val))
						continue;
					*(int *)((char *)&o->off + v8syms[k].off) = val;
					found[k] = true;
				}
			}
		}
		if (!o->v8)
			return; /* no v8dbg in .dynsym: not V8, .symtab not worth reading */
	}
}

void v8rec_object(struct v8rec *v, uint32_t idx, Elf *elf)
{
	struct v8obj o = { 0 };
	bool found[NR_V8SYMS] = { false };
	size_t nph;

	if (!elf || idx >= (1u << 24))
		return;
	find_symbols(elf, &o, found);
	if (!o.v8)
		goto keep;
	o.status = BPROF_V8_WALKED;
	for (size_t k = 0; k < NR_V8SYMS; k++)
		if (v8syms[k].required && !found[k])
			o.status = BPROF_V8_NO_OFFSETS;
	/* the walk reads [fp - V8_FRAME_READ, fp) and V8_OBJ_READ of an SFI */
	if (o.off.fp_function >= 0 || o.off.fp_function < -V8_FRAME_READ ||
	    o.off.fp_bytecode_array >= 0 || o.off.fp_bytecode_array < -V8_FRAME_READ ||
	    o.off.fp_bytecode_offset >= 0 || o.off.fp_bytecode_offset < -V8_FRAME_READ ||
	    o.off.sfi_nos > V8_OBJ_READ - 8 || o.off.sfi_sodi > V8_OBJ_READ - 8 ||
	    o.off.sfi_function_data > V8_OBJ_READ - 8 || o.off.sfi_nos < 8 || o.off.sfi_sodi < 8)
		o.status = BPROF_V8_NO_OFFSETS;
	/* a build with pointer compression keeps 4-byte tagged fields: the
	 * walk reads 8-byte ones */
	if (o.off.tagged_size && o.off.tagged_size != 8)
		o.status = BPROF_V8_NO_OFFSETS;
	if (!o.off.tag_cons)
		o.off.tag_cons = 1;
	if (!o.off.si_first_vars)
		o.off.si_first_vars = 3;
	if (!o.off.si_ncontextlocals)
		o.off.si_ncontextlocals = 2;
	if (!elf_getphdrnum(elf, &nph))
		for (size_t i = 0; i < nph && o.nr_loads < V8REC_MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			o.loads[o.nr_loads].offset = ph.p_offset;
			o.loads[o.nr_loads].vaddr = ph.p_vaddr;
			o.loads[o.nr_loads].filesz = ph.p_filesz;
			o.loads[o.nr_loads].exec = ph.p_flags & PF_X;
			o.nr_loads++;
		}
keep:
	if (idx >= v->nr_objs) {
		uint32_t n = idx + 64;
		struct v8obj *a = realloc(v->objs, n * sizeof(*a));

		if (!a)
			return; /* no V8 frames for it: not worth failing for */
		memset(a + v->nr_objs, 0, (n - v->nr_objs) * sizeof(*a));
		v->objs = a;
		v->nr_objs = n;
	}
	v->objs[idx] = o;
}

/* The file offset of vaddr (a PT_LOAD's), or false. */
static bool file_offset(const struct v8obj *o, uint64_t vaddr, uint64_t *off)
{
	for (uint32_t i = 0; i < o->nr_loads; i++)
		if (vaddr >= o->loads[i].vaddr && vaddr < o->loads[i].vaddr + o->loads[i].filesz) {
			*off = vaddr - o->loads[i].vaddr + o->loads[i].offset;
			return true;
		}
	return false;
}

static struct v8proc *find_proc(struct v8rec *v, uint32_t pid, uint32_t exec_id)
{
	for (uint32_t i = 0; i < v->nr_procs; i++)
		if (v->procs[i].pid == pid && v->procs[i].exec_id == exec_id)
			return &v->procs[i];
	return NULL;
}

void v8rec_image(struct v8rec *v, uint32_t pid, uint32_t exec_id,
		 const struct manifest_mapping *maps, uint32_t nr)
{
	const struct v8obj *o = NULL;
	uint32_t obj = 0;
	uint64_t boff = 0, blen, text = 0, copy = 0;
	struct v8proc *p;

	for (uint32_t i = 0; i < nr && !o; i++)
		if (maps[i].obj < v->nr_objs && v->objs[maps[i].obj].v8) {
			obj = maps[i].obj;
			o = &v->objs[obj];
		}
	if (!o)
		return;
	p = find_proc(v, pid, exec_id);
	if (!p) {
		if (v->nr_procs == v->cap_procs) {
			uint32_t n = v->cap_procs ? v->cap_procs * 2 : 16;
			struct v8proc *a = realloc(v->procs, n * sizeof(*a));

			if (!a)
				return;
			v->procs = a;
			v->cap_procs = n;
		}
		p = &v->procs[v->nr_procs++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		p->exec_id = exec_id;
	}
	p->status = o->status;
	if (o->status != BPROF_V8_WALKED || !o->blob_start ||
	    !file_offset(o, o->blob_start, &boff))
		return;
	blen = o->blob_end - o->blob_start;
	/* The blob where the object's text maps it (the lowest address: the
	 * object's own mappings come first, ET_EXEC or PIE) and V8's copy
	 * of it: the same file bytes mapped again, in its code range, near
	 * the JIT code (short builtin calls) */
	for (uint32_t i = 0; i < nr; i++) {
		const struct manifest_mapping *m = &maps[i];
		uint64_t at;

		if (m->obj != obj || boff < m->offset || boff - m->offset >= m->end - m->start)
			continue;
		at = m->start + (boff - m->offset);
		if (!text || at < text) {
			if (text)
				copy = text;
			text = at;
		} else {
			copy = at;
		}
	}
	p->off = o->off;
	p->walk = (struct v8_proc){
		.exec_id = exec_id,
		.blob_start = text,
		.blob_end = text ? text + blen : 0,
		.code_start = copy > V8REC_CODE_RANGE ? copy - V8REC_CODE_RANGE : 0,
		.code_end = copy ? copy + V8REC_CODE_RANGE : 0,
		.fp_function = (__u16)(V8_FRAME_READ + o->off.fp_function),
		.fp_bytecode_array = (__u16)(V8_FRAME_READ + o->off.fp_bytecode_array),
		.fp_bytecode_offset = (__u16)(V8_FRAME_READ + o->off.fp_bytecode_offset),
		.map_instance_type = (__u16)o->off.map_instance_type,
		.fn_shared = (__u16)o->off.fn_shared,
		.sfi_function_data = (__u16)o->off.sfi_function_data,
		.sfi_name_or_scope_info = (__u16)o->off.sfi_nos,
		.sfi_script_or_debug_info = (__u16)o->off.sfi_sodi,
		.type_sfi = (__u16)o->off.type_sfi,
	};
	if (!bpf_map_update_elem(v->procs_fd, &pid, &p->walk, BPF_ANY))
		p->live = true;
}

void v8rec_image_gone(struct v8rec *v, uint32_t pid, uint32_t exec_id)
{
	struct v8proc *p = find_proc(v, pid, exec_id);

	if (p && p->live) {
		struct v8_proc cur;

		if (!bpf_map_lookup_elem(v->procs_fd, &pid, &cur) && cur.exec_id == exec_id)
			bpf_map_delete_elem(v->procs_fd, &pid);
		p->live = false;
	}
}

int v8rec_walk_info(const struct v8rec *v, uint32_t pid, uint32_t exec_id, struct v8_proc *out)
{
	for (uint32_t i = 0; i < v->nr_procs; i++)
		if (v->procs[i].pid == pid && v->procs[i].exec_id == exec_id &&
		    v->procs[i].status == BPROF_V8_WALKED && v->procs[i].walk.exec_id == exec_id) {
			*out = v->procs[i].walk;
			return 0;
		}
	return -ENOENT;
}

uint32_t v8rec_nr_processes(const struct v8rec *v)
{
	return v ? v->nr_procs : 0;
}

/* ---- the process's objects -------------------------------------------- */

static bool peek(uint32_t pid, uint64_t addr, void *dst, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)addr, len };

	if (!addr || addr >= (1ULL << 47))
		return false;
	return process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

static bool heap_ptr(uint64_t t)
{
	return (t & 3) == 1 && t > 4096 && t < (1ULL << 47);
}

/* A tagged field of the object at tagged address obj. */
static bool field(uint32_t pid, uint64_t obj, int off, uint64_t *out)
{
	return off >= 0 && peek(pid, obj - 1 + (uint64_t)off, out, sizeof(*out));
}

/* The instance type of the object at tagged address obj, or -1. */
static int type_of(uint32_t pid, const struct v8off *o, uint64_t obj)
{
	uint64_t map;
	uint16_t t;

	if (!heap_ptr(obj) || !field(pid, obj, 0, &map) || !heap_ptr(map) ||
	    !peek(pid, map - 1 + (uint64_t)o->map_instance_type, &t, sizeof(t)))
		return -1;
	return t;
}

/* UTF-16 units [from, from + n) of string s into dst: sequential, cons,
 * sliced and thin strings (external ones are not in V8's heap: false). */
static bool units(uint32_t pid, const struct v8off *o, uint64_t s, uint32_t from, uint32_t n,
		  uint16_t *dst, int depth)
{
	int t = type_of(pid, o, s);
	int32_t len;
	uint64_t a, b, sl;

	if (t < 0 || t >= o->first_nonstring || depth > 32 ||
	    !peek(pid, s - 1 + (uint64_t)o->str_length, &len, sizeof(len)) || len < 0 ||
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
			bool ok = tmp && peek(pid, at + from, tmp, n);

			for (uint32_t i = 0; ok && i < n; i++)
				dst[i] = tmp[i];
			free(tmp);
			return ok;
		}
		return peek(pid, at + 2ULL * from, dst, 2ULL * n);
	}
	default:
		break;
	}
	if ((t & 7) == o->tag_cons && field(pid, s, o->cons_first, &a) &&
	    field(pid, s, o->cons_second, &b)) {
		int32_t fl;
		uint32_t k;

		if (!heap_ptr(a) || !peek(pid, a - 1 + (uint64_t)o->str_length, &fl, sizeof(fl)) || fl < 0)
			return false;
		k = from < (uint32_t)fl ? (uint32_t)fl - from : 0;
		if (k > n)
			k = n;
		return (!k || units(pid, o, a, from, k, dst, depth + 1)) &&
		       (k == n || units(pid, o, b, from + k - (uint32_t)fl, n - k, dst + k, depth + 1));
	}
	if ((t & 7) == o->tag_thin && o->thin_actual && field(pid, s, o->thin_actual, &a))
		return units(pid, o, a, from, n, dst, depth + 1);
	if ((t & 7) == o->tag_sliced && o->sliced_parent && field(pid, s, o->sliced_parent, &a) &&
	    field(pid, s, o->sliced_offset, &sl) && !(sl & 1))
		return units(pid, o, a, from + (uint32_t)(sl >> 32), n, dst, depth + 1);
	return false;
}

/* String s as UTF-8 (at most max units), or NULL. */
static char *utf8(uint32_t pid, const struct v8off *o, uint64_t s, uint32_t max)
{
	int32_t len;
	uint16_t *u;
	char *out, *q;

	if (!heap_ptr(s) || !peek(pid, s - 1 + (uint64_t)o->str_length, &len, sizeof(len)) ||
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
	uint64_t w[24], prev = 1;
	int64_t nlocals;
	uint32_t i;

	*start = -1;
	if (!peek(pid, si - 1 + 8, w, sizeof(w)) || (w[o->si_ncontextlocals & 15] & 1))
		return;
	nlocals = (int64_t)w[o->si_ncontextlocals & 15] >> 32;
	if (nlocals < 0 || nlocals > 8)
		return; /* many locals: the names are past the words read */
	for (i = (uint32_t)(o->si_first_vars + 2 * nlocals); i < 24; i++) {
		if (!*name && heap_ptr(w[i])) {
			int t = type_of(pid, o, w[i]);

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
static int32_t line_of(struct v8rec *v, uint32_t pid, const struct v8off *o, uint64_t src,
		       int64_t pos)
{
	struct v8source *c = NULL, *old = &v->sources[0];
	int32_t len;
	uint16_t *u;
	uint32_t lo, hi;

	if (pos < 0 || !heap_ptr(src))
		return 0;
	for (int i = 0; i < V8REC_NR_SOURCES; i++) {
		if (v->sources[i].starts && v->sources[i].pid == pid && v->sources[i].source == src)
			c = &v->sources[i];
		if (v->sources[i].used < old->used)
			old = &v->sources[i];
	}
	if (!c) {
		if (!peek(pid, src - 1 + (uint64_t)o->str_length, &len, sizeof(len)) || len < 0 ||
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

/*
 * Read SFI sfi of process p (tagged) as the walk saw it (guard): its
 * function's name, its script's name, the line it starts on (0: unknown).
 * 0; -ENOENT when it cannot be read; -ESTALE when its guard differs (it
 * moved or changed since the sample: never named from what is there now).
 */
static int read_sfi(struct v8rec *v, const struct v8proc *p, uint64_t sfi, uint32_t guard,
		    char **name, char **script, int32_t *line)
{
	uint64_t fdata, nos, sodi, src = 0, sname;
	uint32_t pid = p->pid;
	int64_t start = -1;
	int t;

	*name = *script = NULL;
	*line = 0;
	if (type_of(pid, &p->off, sfi) != p->off.type_sfi ||
	    !field(pid, sfi, p->off.sfi_function_data, &fdata) ||
	    !field(pid, sfi, p->off.sfi_nos, &nos) || !field(pid, sfi, p->off.sfi_sodi, &sodi))
		return -ENOENT;
	if (v8_guard(nos, sodi, fdata) != guard)
		return -ESTALE;
	t = type_of(pid, &p->off, nos);
	if (t >= 0 && t < p->off.first_nonstring)
		*name = utf8(pid, &p->off, nos, BPROF_V8_NAME_MAX / 3);
	else if (t >= 0 && t == p->off.type_scope_info && p->off.type_scope_info)
		scope_info(pid, &p->off, nos, name, &start);
	if (p->off.type_script && type_of(pid, &p->off, sodi) == p->off.type_script) {
		if (field(pid, sodi, p->off.script_name, &sname))
			*script = utf8(pid, &p->off, sname, BPROF_V8_NAME_MAX / 3);
		if (p->off.script_source && field(pid, sodi, p->off.script_source, &src))
			*line = line_of(v, pid, &p->off, src, start);
	}
	return 0;
}

void v8rec_sfi(struct v8rec *v, const struct v8_sfi_event *e)
{
	struct v8proc *p = find_proc(v, e->pid, e->exec_id);
	struct bprof_v8_sfi *out;
	char *name, *script;
	int32_t line;
	int err;

	v->announced++;
	if (!p || p->status != BPROF_V8_WALKED)
		return;
	err = read_sfi(v, p, e->sfi, e->guard, &name, &script, &line);
	if (err) {
		/* moved or replaced since the sample: not named */
		*(err == -ESTALE ? &v->changed : &v->unreadable) += 1;
		return;
	}
	if (v->nr_sfis == v->cap_sfis) {
		uint64_t n = v->cap_sfis ? v->cap_sfis * 2 : 256;
		struct bprof_v8_sfi *a = realloc(v->sfis, n * sizeof(*a));

		if (!a)
			goto fail;
		v->sfis = a;
		v->cap_sfis = n;
	}
	out = &v->sfis[v->nr_sfis];
	*out = (struct bprof_v8_sfi){
		.pid = e->pid, .exec_id = e->exec_id, .sfi = e->sfi, .guard = e->guard,
		.line = line,
		.name = name ? name : strdup(""),
		.script = script ? script : strdup(""),
	};
	if (!out->name || !out->script) {
		name = out->name;
		script = out->script;
		goto fail;
	}
	v->nr_sfis++;
	v->named++;
	return;
fail:
	free(name);
	free(script);
}

/*
 * A line not found when an SFI was named (its script's source read while
 * V8 moved it, seen as 1 SFI in ~100 here) is looked for again while the
 * process lives, from the SFI as it is now if its guard still matches.
 */
static void retry_lines(struct v8rec *v)
{
	for (uint64_t i = 0; i < v->nr_sfis; i++) {
		struct bprof_v8_sfi *f = &v->sfis[i];
		const struct v8proc *p = find_proc(v, f->pid, f->exec_id);
		char *name, *script;
		int32_t line;

		if (f->line || !p || !p->live || !f->script[0])
			continue;
		if (!read_sfi(v, p, f->sfi, f->guard, &name, &script, &line) && line > 0 &&
		    name && script && !strcmp(name, f->name) && !strcmp(script, f->script))
			f->line = line;
		free(name);
		free(script);
	}
}

static void dedup_sfis(struct v8rec *v)
{
	uint64_t k = 0;

	if (!v->nr_sfis)
		return;
	qsort(v->sfis, v->nr_sfis, sizeof(*v->sfis), bprof_v8_sfi_cmp);
	for (uint64_t i = 0; i < v->nr_sfis; i++) {
		if (k && !bprof_v8_sfi_cmp(&v->sfis[k - 1], &v->sfis[i])) {
			free(v->sfis[i].name);
			free(v->sfis[i].script);
			continue;
		}
		v->sfis[k++] = v->sfis[i];
	}
	v->nr_sfis = k;
}

int v8rec_emit(struct v8rec *v, struct bprof_recording *rec)
{
	struct bprof_v8 *out = &rec->v8;

	if (!v || (!v->nr_procs && !v->nr_sfis))
		return 0;
	out->present = 1;
	out->nr_counters = BPROF_V8_NR_COUNTERS;
	out->counters[0] = v->announced;
	out->counters[1] = v->named;
	out->counters[2] = v->changed;
	out->counters[3] = v->unreadable;
	if (v->nr_procs && !(out->procs = calloc(v->nr_procs, sizeof(*out->procs))))
		return -ENOMEM;
	for (uint32_t i = 0; i < v->nr_procs; i++) {
		const struct v8proc *p = &v->procs[i];
		bool dup = false;

		for (uint64_t j = 0; j < out->nr_procs; j++)
			dup |= out->procs[j].pid == p->pid && out->procs[j].exec_id == p->exec_id;
		if (!dup)
			out->procs[out->nr_procs++] = (struct bprof_v8_proc){
				.pid = p->pid, .exec_id = p->exec_id, .status = p->status,
			};
	}
	retry_lines(v);
	dedup_sfis(v);
	if (v->nr_sfis && !(out->sfis = calloc(v->nr_sfis, sizeof(*out->sfis))))
		return -ENOMEM;
	for (uint64_t i = 0; i < v->nr_sfis; i++) {
		struct bprof_v8_sfi *d = &out->sfis[i];

		*d = v->sfis[i];
		d->name = strdup(v->sfis[i].name);
		d->script = strdup(v->sfis[i].script);
		out->nr_sfis = i + 1;
		if (!d->name || !d->script)
			return -ENOMEM;
	}
	return 0;
}
