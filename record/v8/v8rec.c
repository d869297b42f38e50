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
#include "v8rec_internal.h"
#include "runtimes.h"

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
	F("v8dbg_class_BytecodeArray__data__", bca_data, false),
	F("v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE", type_bca, false),
	F("v8dbg_type_ByteArray__BYTE_ARRAY_TYPE", type_byte_array, false),
	F("v8dbg_class_BytecodeArray__wrapper__", bca_wrapper, false),
	F("v8dbg_type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE", type_trusted_byte_array, false),
	F("v8dbg_class_JSFunction__raw_feedback_cell__", fn_feedback, false),
	F("v8dbg_class_JSFunction__prototype_or_initial_map__", fn_proto, false),
	F("v8dbg_class_Code__deoptimization_data__", code_deopt, false),
	F("v8dbg_class_Code__source_position_table__", code_spt, false),
	F("v8dbg_class_InstructionStream__instruction_start__", istream_start, false),
	F("v8dbg_type_Code__CODE_TYPE", type_code, false),
	F("v8dbg_DeoptimizationDataInlinedFunctionCountIndex", deopt_inlined_count, false),
	F("v8dbg_DeoptimizationDataSharedFunctionInfoIndex", deopt_sfi, false),
	F("v8dbg_DeoptimizationDataLiteralArrayIndex", deopt_literals, false),
	F("v8dbg_DeoptimizationDataInliningPositionsIndex", deopt_inlining, false),
	F("v8dbg_CodeKindFieldMask", codekind_mask, false),
	F("v8dbg_CodeKindFieldShift", codekind_shift, false),
	F("v8dbg_CodeKindBaseline", codekind_baseline, false),
	F("v8dbg_class_SharedFunctionInfo__length__", sfi_length, false),
	/* V8 9.4 spells JSFunction.code raw_code; node 20 exports neither */
	F("v8dbg_class_JSFunction__code__", fn_code, false),
	F("v8dbg_class_JSFunction__raw_code__", fn_raw_code, false),
	/* V8 < 11: the Code's header size (its instructions follow it) */
	F("v8dbg_class_Code__instruction_start__uintptr_t", code_header, false),
	/* V8 12: a field holding the entry point */
	F("v8dbg_class_Code__instruction_start__Address", code_entry, false),
	F("v8dbg_class_Code__instruction_size__", code_size, false),
	F("v8dbg_class_Code__flags__", code_flags, false),
	F("v8dbg_class_Code__instruction_stream__", code_istream, false),
	F("v8dbg_class_Code__wrapper__", code_wrapper, false),
#undef F
};

int v8rec_create(struct v8rec **out, int procs_fd, int codes_fd)
{
	struct v8rec *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->procs_fd = procs_fd;
	v->codes_fd = codes_fd;
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
		bprof_v8_pos_free(v->sfis[i].pos, v->sfis[i].nr_pos);
	}
	for (int i = 0; i < V8REC_NR_SOURCES; i++)
		free(v->sources[i].starts);
	free(v->sfis);
	free(v->objs);
	free(v->procs);
	free(v);
}

struct v8_syms {
	Elf *elf;
	struct v8obj *o;
	bool *found;
};

/* .dynsym: the v8dbg values, read from the file (a value in .bss is 0) */
static void v8_dbg_symbol(const char *name, const GElf_Sym *s, void *ctx)
{
	struct v8_syms *c = ctx;

	if (strncmp(name, "v8dbg_", 6))
		return;
	c->o->v8 = true;
	for (size_t k = 0; k < NR_V8SYMS; k++) {
		size_t pl = strlen(v8syms[k].prefix);
		int val;

		if (strncmp(name, v8syms[k].prefix, pl) ||
		    (name[pl] && v8syms[k].prefix[pl - 1] != '_') ||
		    elfobj_read_vaddr(c->elf, s->st_value, &val, sizeof(val)) < 0)
			continue;
		*(int *)((char *)&c->o->off + v8syms[k].off) = val;
		c->found[k] = true;
	}
}

/* .symtab: the extent of the embedded blob's Builtins_* code */
static void v8_blob_symbol(const char *name, const GElf_Sym *s, void *ctx)
{
	struct v8obj *o = ((struct v8_syms *)ctx)->o;

	if (strncmp(name, "Builtins_", 9) || GELF_ST_TYPE(s->st_info) != STT_FUNC)
		return;
	if (!o->blob_start || s->st_value < o->blob_start)
		o->blob_start = s->st_value;
	if (s->st_value + s->st_size > o->blob_end)
		o->blob_end = s->st_value + s->st_size;
}

/* The v8dbg values (.dynsym) and the blob's extent (.symtab's Builtins_*):
 * no v8dbg in .dynsym, not V8, and its .symtab not worth reading. */
static void find_symbols(Elf *elf, struct v8obj *o, bool *found)
{
	struct v8_syms c = { .elf = elf, .o = o, .found = found };

	elfobj_symbols(elf, SHT_DYNSYM, "v8dbg_", v8_dbg_symbol, &c);
	if (o->v8)
		elfobj_symbols(elf, SHT_SYMTAB, "Builtins_", v8_blob_symbol, &c);
}

/* Whether field off's symbol was found, under any of its spellings. */
static bool have(const bool *found, size_t off)
{
	for (size_t k = 0; k < NR_V8SYMS; k++)
		if (v8syms[k].off == off && found[k])
			return true;
	return false;
}
#define HAVE(f) have(found, offsetof(struct v8off, f))

/* Field off derived as val: from now on as good as exported. */
static void derive(struct v8off *o, bool *found, size_t off, int val)
{
	*(int *)((char *)o + off) = val;
	for (size_t k = 0; k < NR_V8SYMS; k++)
		if (v8syms[k].off == off) {
			found[k] = true;
			return;
		}
}
#define DERIVE(f, v) derive(o, found, offsetof(struct v8off, f), (v))

/*
 * What a node's symbols lack, derived from the neighbours they export in
 * the layout its V8 has (record/DESIGN.md "V8 frames" lists, per node,
 * where each offset comes from).  Each derived value is checked where it
 * is used (an interpreted frame's bytecode array is its SFI's function
 * data; a script's source is a string; a script is a Script): a wrong
 * derivation loses positions or lines, never names a frame wrong.
 */
static void derive_missing(struct v8off *o, bool *found)
{
	/* V8 9.4 (node 16) exports no interpreter frame slots: they are
	 * V8 10's (fp - 32, fp - 40), after the function and the argument
	 * count (StandardFrameConstants since V8 8.9).  Only where JSFunction's
	 * code is exported (as CodeT: V8 9.2 and later): V8 8.4 (node 14)
	 * has no argument count there, and walked so its frames came out
	 * named wrong: it stays refused */
	if (!HAVE(fn_code) && HAVE(fn_raw_code))
		DERIVE(fn_code, o->fn_raw_code);
	if (!HAVE(fp_bytecode_array) && !HAVE(fp_bytecode_offset) && HAVE(fp_function) &&
	    o->fp_function == -16 && HAVE(fn_code)) {
		DERIVE(fp_bytecode_array, -32);
		DERIVE(fp_bytecode_offset, -40);
	}
	/* V8 9.4 exports no start of a BytecodeArray's bytecodes: after
	 * FixedArrayBase (16), three tagged fields, three int32 and two int8
	 * (its torque class), 54, where V8 10 has two int16 (its exported 56);
	 * only for the V8 that spells JSFunction's code raw_code (9.x) */
	if (!HAVE(bca_data) && HAVE(fn_raw_code) && HAVE(type_bca))
		DERIVE(bca_data, 54);
	/* V8 9.4: Script's source is not exported; it is a Script's first
	 * field, before its name (16), in every V8 since */
	if (!HAVE(script_source) && HAVE(script_name) && o->script_name == 16)
		DERIVE(script_source, 8);
	/* V8 12.4 (node 22) exports neither the SFI's function data nor its
	 * script (now script_or_debug_info's successor): V8 11's layout, whose
	 * name (16) and length (40) it keeps, has them at 8 and 32 */
	if (!HAVE(sfi_function_data) && !HAVE(sfi_sodi) && HAVE(sfi_nos) && o->sfi_nos == 16 &&
	    HAVE(sfi_length) && o->sfi_length == 40) {
		DERIVE(sfi_function_data, 8);
		DERIVE(sfi_sodi, 32);
	}
}

/*
 * Where optimized code's fields are, per V8: exported, or derived from
 * the exported neighbours in the one layout each version has.  false:
 * not one of these layouts, inlined frames off.
 *   V8 9.4, 10.2 (node 16, 18): the Code holds its instructions after a
 *     header (the exported "instruction_start", its size): relocation
 *     info, deoptimization data (16), position table (24), data
 *     container, then instruction size (40), metadata size, flags (48).
 *   V8 11.3 (node 20): deoptimization data and position table exported;
 *     its InstructionStream, entry point, flags and instruction size
 *     follow the position table, 8 bytes apart.
 *   V8 12.4 (node 22): entry point, flags, size, wrapper and
 *     InstructionStream exported; deoptimization data and position table
 *     are the two words before the wrapper.
 */
static bool code_layout(struct v8off *o, const bool *found)
{
	int base;

	if (!HAVE(type_code))
		return false;
	if (!HAVE(fn_code)) {
		/* node 20: JSFunction.code between feedback cell and prototype */
		if (!HAVE(fn_feedback) || !HAVE(fn_proto) || o->fn_proto != o->fn_feedback + 16)
			return false;
		o->fn_code = o->fn_feedback + 8;
	}
	if (HAVE(code_header)) {
		if (!HAVE(code_size) || o->code_size != 40 || (HAVE(code_spt) && o->code_spt != 24) ||
		    (HAVE(code_flags) && o->code_flags != 48) || o->code_header < 64 ||
		    o->code_header > 256)
			return false;
		o->code_deopt = 16;
		o->code_spt = 24;
		o->code_flags = 48;
		o->code_entry = o->code_istream = 0;
	} else if (HAVE(code_wrapper)) {
		if (!HAVE(code_istream) || !HAVE(code_entry) || !HAVE(code_flags) || !HAVE(code_size) ||
		    !HAVE(istream_start) || o->code_istream != o->code_wrapper + 8 ||
		    o->code_entry != o->code_istream + 8 || o->code_wrapper < 24)
			return false;
		o->code_deopt = o->code_wrapper - 16;
		o->code_spt = o->code_wrapper - 8;
	} else {
		if (!HAVE(code_deopt) || !HAVE(code_spt) || !HAVE(istream_start) ||
		    o->code_deopt + 8 != o->code_spt || o->istream_start != 16)
			return false;
		o->code_istream = o->code_spt + 8;
		o->code_entry = o->code_spt + 16;
		o->code_flags = o->code_spt + 24;
		o->code_size = o->code_spt + 32;
	}
	/* CodeKind: V8 10-12 list BASELINE, MAGLEV, TURBOFAN in a row
	 * (exported: BASELINE); V8 9.4 exports no kind: its BASELINE 11,
	 * TURBOPROP 12, TURBOFAN 13, in the Code flags' bits 0-3 */
	if (!HAVE(codekind_mask)) {
		if (HAVE(codekind_baseline))
			return false;
		o->codekind_mask = 15;
		o->codekind_shift = 0;
	}
	base = HAVE(codekind_baseline) ? o->codekind_baseline : 11;
	o->kind_maglev = base + 1;
	o->kind_turbofan = base + 2;
	/* DeoptimizationData's indices: exported since V8 11, the same in
	 * every V8 since 6 (its SFI is checked against the frame's) */
	if (!HAVE(deopt_sfi) && !HAVE(deopt_inlined_count) && !HAVE(deopt_literals) &&
	    !HAVE(deopt_inlining)) {
		o->deopt_inlined_count = 1;
		o->deopt_sfi = 6;
	} else if ((HAVE(deopt_literals) && o->deopt_literals != DEOPT_LITERALS) ||
		   (HAVE(deopt_inlining) && o->deopt_inlining != DEOPT_INLINING)) {
		return false; /* V8 13 (node 24) moved them: not followed yet */
	}
	return o->code_deopt >= 8 && o->code_size + 4 <= V8_OBJ_READ &&
	       o->code_flags + 4 <= V8_OBJ_READ && o->code_entry + 8 <= V8_OBJ_READ &&
	       o->fn_code >= 8 && o->deopt_inlined_count == 1 && o->deopt_sfi == 6 &&
	       o->codekind_mask == 15 && o->codekind_shift >= 0 && o->codekind_shift < 28;
}

/* A BytecodeArray's source position table: after FixedArrayBase's map and
 * length, its constant pool and handler table (V8 9 to 11; not exported);
 * V8 12 (node 22) has it right after its exported wrapper, a
 * TrustedByteArray.  Used only where the exported start of its bytecodes
 * lies past it, and checked on every table read (bytecode_rows). */
static bool bytecode_layout(struct v8off *o, const bool *found)
{
	for (size_t k = 0; k < NR_V8SYMS; k++)
		if ((v8syms[k].off == offsetof(struct v8off, bca_data) ||
		     v8syms[k].off == offsetof(struct v8off, type_bca) ||
		     v8syms[k].off == offsetof(struct v8off, type_byte_array)) && !found[k])
			return false;
	o->bca_spt = HAVE(bca_wrapper) ? o->bca_wrapper + 8 : 32;
	if (!HAVE(type_trusted_byte_array))
		o->type_trusted_byte_array = o->type_byte_array;
	return o->bca_data >= o->bca_spt + 8 + 12 && o->bca_data < 128;
}

void v8rec_object(struct v8rec *v, uint32_t idx, Elf *elf)
{
	struct v8obj o = { 0 };
	bool found[NR_V8SYMS] = { false };

	if (!elf || idx >= (1u << 24))
		return;
	find_symbols(elf, &o, found);
	if (!o.v8)
		goto keep;
	derive_missing(&o.off, found);
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
	o.code_ok = code_layout(&o.off, found);
	o.bca_ok = bytecode_layout(&o.off, found);
	if (!o.off.si_first_vars)
		o.off.si_first_vars = 3;
	if (!o.off.si_ncontextlocals)
		o.off.si_ncontextlocals = 2;
	elfobj_loads_read(elf, &o.loads);
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

static struct v8proc *find_proc(struct v8rec *v, uint32_t pid, uint32_t exec_id)
{
	for (uint32_t i = 0; i < v->nr_procs; i++)
		if (v->procs[i].pid == pid && v->procs[i].exec_id == exec_id)
			return &v->procs[i];
	return NULL;
}

/*
 * A V8 that maps no copy of its blob (V8 < 11 without pointer
 * compression: node 16 and 18) has its code ranges where its anonymous
 * executable memory is: around each such mapping not in a range yet, a
 * range as large as a code range can be on either side, cut at the
 * neighbouring objects' mappings (a reservation overlaps no other
 * mapping).  Kept while the image lives: a code range never moves, and
 * with write-protected code memory its pages are at times not executable.
 */
static void anon_ranges(struct v8proc *p, const struct manifest_mapping *maps, uint32_t nr)
{
	for (uint32_t i = 0; i < nr && p->nr_anon < V8_CODE_RANGES; i++) {
		const struct manifest_mapping *m = &maps[i];
		uint64_t lo, hi;
		bool known = false;

		if (m->obj != BPROF_NO_OBJECT || m->end - m->start > V8REC_CODE_RANGE)
			continue;
		for (uint32_t k = 0; k < p->nr_anon; k++)
			known |= m->start >= p->anon_start[k] && m->end <= p->anon_end[k];
		if (known)
			continue;
		lo = m->end > V8REC_CODE_RANGE ? m->end - V8REC_CODE_RANGE : 0;
		hi = m->start + V8REC_CODE_RANGE;
		for (uint32_t j = 0; j < nr; j++) {
			if (maps[j].obj == BPROF_NO_OBJECT)
				continue;
			if (maps[j].end <= m->start && maps[j].end > lo)
				lo = maps[j].end;
			if (maps[j].start >= m->end && maps[j].start < hi)
				hi = maps[j].start;
		}
		p->anon_start[p->nr_anon] = lo;
		p->anon_end[p->nr_anon++] = hi;
	}
}

void v8rec_image(struct v8rec *v, uint32_t pid, uint32_t exec_id,
		 const struct manifest_mapping *maps, uint32_t nr)
{
	const struct v8obj *o = NULL;
	uint32_t obj = 0;
	uint64_t boff = 0, blen, text = 0, copies[V8_CODE_RANGES] = { 0 };
	uint32_t nr_copies = 0;
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
	    !elfobj_loads_offset(&o->loads, o->blob_start, &boff))
		return;
	blen = o->blob_end - o->blob_start;
	/* The blob where the object's text maps it (the lowest address: the
	 * object's own mappings come first, ET_EXEC or PIE) and V8's copies
	 * of it, one per isolate (a worker thread has its own): the same
	 * file bytes mapped again, each in its isolate's code range, near
	 * its JIT code (short builtin calls) */
	for (uint32_t i = 0; i < nr; i++) {
		const struct manifest_mapping *m = &maps[i];
		uint64_t at;

		if (m->obj != obj || boff < m->offset || boff - m->offset >= m->end - m->start)
			continue;
		at = m->start + (boff - m->offset);
		if (text && at > text) {
			if (nr_copies < V8_CODE_RANGES)
				copies[nr_copies++] = at;
			continue;
		}
		if (text && nr_copies < V8_CODE_RANGES)
			copies[nr_copies++] = text;
		text = at;
	}
	p->off = o->off;
	p->code_ok = o->code_ok;
	p->bca_ok = o->bca_ok;
	p->walk = (struct v8_proc){
		.fn_code = o->code_ok ? (__u16)o->off.fn_code : 0,
		.code_entry = o->code_ok ? (__u16)o->off.code_entry : 0,
		.code_header = o->code_ok ? (__u16)o->off.code_header : 0,
		.code_size = o->code_ok ? (__u16)o->off.code_size : 0,
		.type_code = o->code_ok ? (__u16)o->off.type_code : 0,
		.exec_id = exec_id,
		.blob_start = text,
		.blob_end = text ? text + blen : 0,

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
	memset(p->blob_copy, 0, sizeof(p->blob_copy));
	for (uint32_t k = 0; k < nr_copies; k++) {
		p->blob_copy[k] = copies[k];
		p->walk.code_start[k] = copies[k] > V8REC_CODE_RANGE ? copies[k] - V8REC_CODE_RANGE : 0;
		p->walk.code_end[k] = copies[k] + V8REC_CODE_RANGE;
	}
	if (!nr_copies) {
		anon_ranges(p, maps, nr);
		memcpy(p->walk.code_start, p->anon_start, sizeof(p->anon_start));
		memcpy(p->walk.code_end, p->anon_end, sizeof(p->anon_end));
	}
	if (!bpf_map_update_elem(v->procs_fd, &pid, &p->walk, BPF_ANY))
		p->live = v->met = true;
}

bool v8rec_met(const struct v8rec *v)
{
	return v && v->met;
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

static void retry_lines(struct v8rec *v);

void v8rec_sfi(struct v8rec *v, const struct v8_sfi_event *e)
{
	struct v8proc *p = find_proc(v, e->pid, e->exec_id);
	struct bprof_v8_sfi *out;
	char *name, *script;
	uint64_t fdata = 0, src = 0;
	int32_t line;
	int err;

	v->announced++;
	if (!p || p->status != BPROF_V8_WALKED)
		return;
	err = v8rec__read_sfi(v, p, e->sfi, e->guard, e->code, &name, &script, &line, &fdata, &src);
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
	/* its inlined frames: what the code runs at each pc offset (the
	 * guard covers the code; a frame of another code is another entry) */
	if (e->code && v8rec__read_positions(v, p, e->sfi, e->code, &out->pos, &out->nr_pos)) {
		name = out->name;
		script = out->script;
		goto fail;
	}
	/* or, for its interpreted frames, the lines its bytecodes run */
	if (!e->code && v8rec__bytecode_rows(v, p, fdata, src, out->name, out->script, &out->pos,
				      &out->nr_pos)) {
		name = out->name;
		script = out->script;
		goto fail;
	}
	v->nr_sfis++;
	v->named++;
	/* and, now and then, the lines not found before (retry_lines) */
	if (!(v->named % 64))
		retry_lines(v);
	return;
fail:
	free(name);
	free(script);
}

/* ---- code a frame runs that is not its function's (on-stack replacement) ---- */

#define V8REC_SCAN_CHUNK (16u << 10)  /* bytes read at once, looking back from a pc */
#define V8REC_SCAN_MAX (1u << 20)     /* how far back: larger code is not looked for */
#define V8REC_CODE_ALIGN 64           /* V8's kCodeAlignment on x64: where instructions start */

/*
 * The Code object (tagged) whose instructions hold pc, or 0.  JIT code is
 * an InstructionStream in V8's code space: its map, the Code object it
 * belongs to, then its instructions (at the exported instruction_start,
 * 16), which start 64-byte aligned.  So the scan looks back from pc, at
 * each aligned address, for the two words before it, and takes the first
 * whose Code object points back to that InstructionStream, has its entry
 * point there and the pc within its instructions: three checks no
 * instruction bytes pass by chance.  The first InstructionStream met
 * backwards is the nearest object: if its code does not hold pc, nothing
 * does.  Its map, one per process, then filters the candidates.
 */
static uint64_t code_at(struct v8proc *p, uint64_t pc)
{
	const struct v8off *o = &p->off;
	uint64_t buf[V8REC_SCAN_CHUNK / 8], hi = pc & ~(uint64_t)(V8REC_CODE_ALIGN - 1);
	const uint64_t top = hi;

	/* V8 11, 12 (node 20, 22): an InstructionStream's header of 16 or 32
	 * bytes, its map and Code first; V8 < 11 has none */
	if ((o->istream_start != 16 && o->istream_start != 32) || !o->code_istream ||
	    pc < V8REC_SCAN_MAX)
		return 0;
	while (top - hi < V8REC_SCAN_MAX) {
		/* [lo, hi): the two words before each candidate entry point
		 * in (lo, hi]; near the start of a mapping, its first page */
		uint64_t lo = hi - V8REC_SCAN_CHUNK;

		if (!v8rec__peek(p->pid, lo, buf, hi - lo)) {
			lo = (hi - 1) & ~4095ULL;
			if (!v8rec__peek(p->pid, lo, buf, hi - lo))
				return 0; /* nothing mapped further back */
		}
		for (uint64_t e = hi; e > lo; e -= V8REC_CODE_ALIGN) {
			uint64_t map = buf[(e - (uint64_t)o->istream_start - lo) / 8];
			uint64_t code = buf[(e - (uint64_t)o->istream_start + 8 - lo) / 8];
			uint64_t stream, entry;
			uint32_t size;

			if (!v8rec__heap_ptr(map) || !v8rec__heap_ptr(code) || (p->istream_map && map != p->istream_map))
				continue;
			if (!v8rec__field(p->pid, code, o->code_istream, &stream) ||
			    stream != e - (uint64_t)o->istream_start + 1 ||
			    !v8rec__field(p->pid, code, o->code_entry, &entry) || entry != e ||
			    v8rec__type_of(p->pid, o, code) != o->type_code ||
			    !v8rec__peek(p->pid, code - 1 + (uint64_t)o->code_size, &size, sizeof(size)))
				continue;
			p->istream_map = map;
			return pc - e < size ? code : 0;
		}
		hi = lo;
	}
	return 0;
}

void v8rec_code(struct v8rec *v, const struct v8_sfi_event *e)
{
	struct v8proc *p = find_proc(v, e->pid, e->exec_id);
	struct v8_code_key key = { .pid = e->pid, .exec_id = e->exec_id, .sfi = e->sfi };
	struct v8_codes codes = { { 0 } };
	uint64_t words[V8REC_MAX_DEOPT], code, blen = p ? p->walk.blob_end - p->walk.blob_start : 0;

	v->code_asked++;
	if (!p || p->status != BPROF_V8_WALKED || !p->live || !p->code_ok || v->codes_fd < 0)
		return;
	/* a builtin V8 copied into the code range: no code object there */
	for (int k = 0; k < V8_CODE_RANGES; k++)
		if (p->blob_copy[k] && e->pc - p->blob_copy[k] < blen) {
			v->code_missed++;
			return;
		}
	code = code_at(p, e->pc);
	/* optimized code of this function (its deoptimization data says so):
	 * baseline code, or another function's, is not given to the walk */
	if (!code || v8rec__optimized_code(p, code, e->sfi, words) < 0) {
		v->code_missed++;
		return;
	}
	/* the newest first; the walk checks each against the pc */
	if (!bpf_map_lookup_elem(v->codes_fd, &key, &codes) &&
	    (codes.code[0] == code || codes.code[1] == code))
		return;
	codes.code[1] = codes.code[0];
	codes.code[0] = code;
	if (!bpf_map_update_elem(v->codes_fd, &key, &codes, BPF_ANY))
		v->code_found++;
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
		if (f->nr_pos)
			continue; /* the guard covers its code: not known here */
		if (!v8rec__read_sfi(v, p, f->sfi, f->guard, 0, &name, &script, &line, NULL, NULL) && line > 0 &&
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
			bprof_v8_pos_free(v->sfis[i].pos, v->sfis[i].nr_pos);
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
	out->counters[4] = v->code_asked;
	out->counters[5] = v->code_found;
	out->counters[6] = v->code_missed;
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

		int err = 0;

		*d = v->sfis[i];
		d->pos = NULL;
		d->nr_pos = 0;
		d->name = strdup(v->sfis[i].name);
		d->script = strdup(v->sfis[i].script);
		out->nr_sfis = i + 1;
		if (!d->name || !d->script)
			return -ENOMEM;
		d->pos = v8rec__rows_dup(v->sfis[i].pos, v->sfis[i].nr_pos, &err);
		if (err)
			return err;
		d->nr_pos = v->sfis[i].nr_pos;
	}
	return 0;
}

/* ---- V8's row of the runtimes' table (runtimes.h) --------------------- */

static int v8_create(void **out, const struct runtime_maps *m)
{
	return v8rec_create((struct v8rec **)out, m->procs_fd, m->codes_fd);
}

static void v8_destroy(void *rt) { v8rec_destroy(rt); }
static void v8_object(void *rt, uint32_t idx, Elf *elf) { v8rec_object(rt, idx, elf); }
static void v8_image_gone(void *rt, uint32_t pid, uint32_t exec_id) { v8rec_image_gone(rt, pid, exec_id); }
static bool v8_met(const void *rt) { return v8rec_met(rt); }
static int v8_emit(void *rt, struct bprof_recording *rec) { return v8rec_emit(rt, rec); }

static void v8_image(void *rt, uint32_t pid, uint32_t exec_id, const struct manifest_mapping *maps,
		     uint32_t nr)
{
	v8rec_image(rt, pid, exec_id, maps, nr);
}

/* named now, while the process lives and before V8's heap moves it
 * (record/DESIGN.md "V8 frames") */
static bool v8_event(void *rt, const void *data, size_t size)
{
	const struct v8_sfi_event *e = data;

	if (e->type != V8_EVENT_SFI && e->type != V8_EVENT_CODE)
		return false;
	if (rt && size >= sizeof(*e)) {
		if (e->type == V8_EVENT_SFI)
			v8rec_sfi(rt, e);
		else
			v8rec_code(rt, e);
	}
	return true;
}

const struct runtime_ops v8rec_ops = {
	.mask = RUNTIME_V8,
	.create = v8_create, .destroy = v8_destroy,
	.object = v8_object, .image = v8_image, .image_gone = v8_image_gone, .met = v8_met,
	.event = v8_event, .emit = v8_emit,
};
