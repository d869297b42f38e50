/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvmrec.c - HotSpot found in sampled objects, its walk set up, its frames'
 * names copied (jvmrec.h).
 *
 * An object is a JVM when its .dynsym exports gHotSpotVMStructs (libjvm.so
 * does, for the serviceability agent).  The tables it points to, and the
 * variables saying their entries' layout, are filled in when the JVM
 * starts, so they are read from the process, not the file: once at its
 * first tick after the code cache exists (libjvm is mapped well before).
 * Every offset the walk and the naming use comes from these tables; the
 * few the tables lack (interpreter frame slots, a ConstMethod flag) are
 * written down per version below, and a version not listed is not walked:
 * its frames stay unnamed (--info says why), never misnamed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "elfobj.h"
#include "jvmrec.h"
#include "runtimes.h"

/* Ticks (100 ms apart at most) a JVM's code cache is waited for. */
#define JVMREC_MAX_TRIES 600
/* How long (ns) a JVM whose tables look incomplete or inconsistent is
 * read again before it is refused.  Its image is announced as soon as
 * ld.so maps libjvm: the tables are whole only once libjvm's relocations
 * and static constructors (vmStructs.cpp's, abstract_vm_version.cpp's: a
 * release string, the entries' strides) have run, and the code cache's
 * heaps are filled in while the VM starts.  A read in between (a busy
 * machine stretches these windows) is not a verdict on the JVM: one CI
 * run refused a Debian 17 JVM that way, "release unreadable". */
#define JVMREC_SETTLE_NS (3ULL * 1000000000ULL)
/* Entries of a table read before it is taken as corrupt. */
#define JVMREC_MAX_ENTRIES 20000
/* A PcDesc (pcDesc.hpp: pc_offset, scope_decode_offset, obj_decode_offset,
 * flags; 16 bytes in 11..21, and the table's size of PcDesc must say so). */
#define JVMREC_PCDESC_LEN 16

/* The exported variables, in this order (struct jvmobj.sym). */
static const char *const jvm_syms[] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMTypeEntryArrayStride",
};
#define JVM_NR_SYMS (sizeof(jvm_syms) / sizeof(jvm_syms[0]))
enum { S_STRUCTS, S_S_TYPE, S_S_FIELD, S_S_STATIC, S_S_OFFSET, S_S_ADDRESS, S_S_STRIDE,
       S_TYPES, S_T_NAME, S_T_SIZE, S_T_STRIDE };

struct jvmobj {
	bool jvm;
	uint64_t sym[JVM_NR_SYMS];
	struct elfobj_loads loads;
};

/* What naming reads, beyond the walk's offsets. */
struct jvm_names_off {
	uint32_t blob_name, nm_method, nm_comp_level;
	uint32_t nm_scopes_data, nm_scopes_pcs, nm_deps, nm_metadata;
	uint32_t cm_constants, cm_flags, cm_name_index, cm_sig_index, cm_size_words;
	uint32_t cp_holder, cp_source_file, cp_size;
	uint32_t klass_name, sym_length, sym_body;
	uint32_t linenumber_flag;
	bool source_in_klass; /* cp_source_file is the pool holder's (11..13) */
};

struct jvmproc {
	uint32_t pid, exec_id, status;
	bool ready, live, failed;
	bool told; /* its refusal given to jvmrec_next_refused() */
	uint32_t tries;
	uint64_t bad_since; /* CLOCK_MONOTONIC ns of the first refusing read, 0: none */
	char missing[96]; /* what the last refusing read lacked or found wrong */
	uint64_t bias;
	uint32_t obj;
	char *version;
	struct jvm_proc walk;
	struct jvm_names_off n;
};

struct jvmrec {
	int procs_fd, stats_fd, nr_cpus;
	bool met;             /* a process was put in jvm_procs */
	struct jvmobj *objs;
	uint32_t nr_objs;
	struct jvmproc *procs;
	uint32_t nr_procs, cap_procs;
	struct bprof_jvm_frame *frames;
	uint64_t nr_frames, cap_frames;
	/* frames by (pid, exec_id, id, guard): open addressing, index + 1 */
	uint64_t *index;
	uint64_t index_cap;
	uint64_t named, unnamed, guard_mismatch;
};

int jvmrec_create(struct jvmrec **out, int procs_fd, int stats_fd, int nr_cpus)
{
	struct jvmrec *j = calloc(1, sizeof(*j));

	*out = j;
	if (!j)
		return -ENOMEM;
	j->procs_fd = procs_fd;
	j->stats_fd = stats_fd;
	j->nr_cpus = nr_cpus;
	return 0;
}

static void free_frame(struct bprof_jvm_frame *f)
{
	free(f->klass);
	free(f->method);
	free(f->signature);
	free(f->file);
	free(f->lines);
	free(f->scopes);
}

void jvmrec_destroy(struct jvmrec *j)
{
	if (!j)
		return;
	for (uint64_t i = 0; i < j->nr_frames; i++)
		free_frame(&j->frames[i]);
	for (uint32_t i = 0; i < j->nr_procs; i++)
		free(j->procs[i].version);
	free(j->frames);
	free(j->index);
	free(j->procs);
	free(j->objs);
	free(j);
}

static void jvm_symbol(const char *name, const GElf_Sym *s, void *ctx)
{
	struct jvmobj *o = ctx;

	if (strncmp(name, "gHotSpotVM", 10))
		return;
	for (size_t k = 0; k < JVM_NR_SYMS; k++)
		if (!strcmp(name, jvm_syms[k]))
			o->sym[k] = s->st_value;
}

void jvmrec_object(struct jvmrec *j, uint32_t idx, Elf *elf)
{
	struct jvmobj o = { 0 };
	bool all = true;

	if (!elf || idx >= (1u << 24))
		return;
	elfobj_symbols(elf, SHT_DYNSYM, "gHotSpotVM", jvm_symbol, &o);
	for (size_t k = 0; k < JVM_NR_SYMS; k++)
		all = all && o.sym[k];
	if (!all)
		return; /* not a JVM: nothing kept */
	o.jvm = true;
	elfobj_loads_read(elf, &o.loads);
	if (idx >= j->nr_objs) {
		uint32_t n = idx + 64;
		struct jvmobj *v = realloc(j->objs, n * sizeof(*v));

		if (!v)
			return;
		memset(v + j->nr_objs, 0, (n - j->nr_objs) * sizeof(*v));
		j->objs = v;
		j->nr_objs = n;
	}
	j->objs[idx] = o;
}

static struct jvmproc *find_proc(struct jvmrec *j, uint32_t pid, uint32_t exec_id)
{
	for (uint32_t i = 0; i < j->nr_procs; i++)
		if (j->procs[i].pid == pid && j->procs[i].exec_id == exec_id)
			return &j->procs[i];
	return NULL;
}

void jvmrec_image(struct jvmrec *j, uint32_t pid, uint32_t exec_id,
		  const struct manifest_mapping *maps, uint32_t nr)
{
	struct jvmproc *p;
	uint64_t bias = 0;
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (maps[i].obj < j->nr_objs && j->objs[maps[i].obj].jvm &&
		    elfobj_loads_bias(&j->objs[maps[i].obj].loads, maps[i].start, maps[i].offset, &bias))
			break;
	if (i == nr)
		return;
	p = find_proc(j, pid, exec_id);
	if (p) {
		/* not set up yet: the image read when libjvm was first mapped
		 * may have caught ld.so between its mappings; this one is newer */
		if (!p->ready && !p->failed)
			p->bias = bias;
		return;
	}
	if (j->nr_procs == j->cap_procs) {
		uint32_t n = j->cap_procs ? j->cap_procs * 2 : 16;
		struct jvmproc *v = realloc(j->procs, n * sizeof(*v));

		if (!v)
			return;
		j->procs = v;
		j->cap_procs = n;
	}
	p = &j->procs[j->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exec_id = exec_id;
	p->bias = bias;
	p->obj = maps[i].obj;
	p->status = BPROF_JVM_NOT_READY;
	jvmrec_tick(j); /* the code cache may exist already (an attach) */
}

void jvmrec_image_gone(struct jvmrec *j, uint32_t pid, uint32_t exec_id)
{
	struct jvmproc *p = find_proc(j, pid, exec_id);

	if (p && p->live) {
		struct jvm_proc cur;

		if (!bpf_map_lookup_elem(j->procs_fd, &pid, &cur) && cur.exec_id == exec_id)
			bpf_map_delete_elem(j->procs_fd, &pid);
		p->live = false;
	}
	if (p)
		p->failed = true; /* no more tries */
}

/* ---- reading the process ------------------------------------------------ */

static bool peek(uint32_t pid, uint64_t addr, void *dst, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)addr, len };

	if (!addr || addr >= (1ULL << 47))
		return false;
	return process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

static bool peek64(uint32_t pid, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return peek(pid, addr, v, 8);
}

/* A NUL-terminated string of at most cap - 1 bytes at addr, read in
 * pieces that stop at a page end (the string may end just before one
 * that is not mapped). */
static bool peek_str(uint32_t pid, uint64_t addr, char *dst, size_t cap)
{
	size_t have = 0;

	while (have + 1 < cap) {
		size_t n = 4096 - ((addr + have) & 4095);

		if (n > cap - 1 - have)
			n = cap - 1 - have;
		if (!peek(pid, addr + have, dst + have, n))
			return false;
		if (memchr(dst + have, 0, n))
			return true;
		have += n;
	}
	dst[cap - 1] = 0;
	return false;
}

/* ---- the introspection tables -------------------------------------------- */

/* A field of gHotSpotVMStructs the walk or the naming needs; alt_type and
 * alt_field (when set) name it in the releases that call it otherwise. */
struct want {
	const char *type, *field;
	uint64_t *val; /* its offset, or for a static field its address */
	const char *alt_type, *alt_field;
	bool optional;  /* not an error when absent: *val stays as it was */
	bool *alt;      /* set when found by its alt_type and alt_field */
};

struct want_type {
	const char *type;
	uint64_t *size;
};

struct vmvals {
	uint64_t heaps, low_bound, high_bound, interp_code, vm_release;
	uint64_t ga_len, ga_data, ch_memory, ch_segmap, ch_log2, vs_low, vs_high;
	uint64_t sq_buffer, sq_limit;
	uint64_t cb_name, cb_frame_size, cb_frame_complete, cb_code_begin, cb_code_end;
	uint64_t nm_method, nm_compile_id, nm_comp_level;
	uint64_t nm_scopes_data, nm_scopes_pcs, nm_deps, nm_metadata;
	uint64_t m_const, cm_constants, cm_flags, cm_code_size, cm_name, cm_sig, cm_size_words;
	uint64_t cp_holder, cp_source, klass_name, sym_length, sym_body;
	uint64_t t_heap_block, t_const_method, t_cp, t_pcdesc;
	bool source_in_klass;
};

static int read_tables(const struct jvmproc *p, const struct jvmobj *o, struct vmvals *v,
		       char *missing, size_t cap)
{
	uint64_t s[JVM_NR_SYMS], at, stride;
	char tn[128], fn[128];
	const struct want want[] = {
		{ .type = "CodeCache", .field = "_heaps", .val = &v->heaps },
		{ .type = "CodeCache", .field = "_low_bound", .val = &v->low_bound },
		{ .type = "CodeCache", .field = "_high_bound", .val = &v->high_bound },
		{ .type = "AbstractInterpreter", .field = "_code", .val = &v->interp_code },
		{ .type = "Abstract_VM_Version", .field = "_s_vm_release", .val = &v->vm_release },
		/* 11..15: GenericGrowableArray */
		{ .type = "GrowableArrayBase", .field = "_len", .val = &v->ga_len,
		  .alt_type = "GenericGrowableArray", .alt_field = "_len" },
		{ .type = "GrowableArray<int>", .field = "_data", .val = &v->ga_data },
		{ .type = "CodeHeap", .field = "_memory", .val = &v->ch_memory },
		{ .type = "CodeHeap", .field = "_segmap", .val = &v->ch_segmap },
		{ .type = "CodeHeap", .field = "_log2_segment_size", .val = &v->ch_log2 },
		{ .type = "VirtualSpace", .field = "_low", .val = &v->vs_low },
		/* the reserved end, not _high (the committed end): a heap
		 * commits more as the JIT fills it, and its code past the
		 * first read's _high would be in no heap for the walk
		 * (javac: 24 % of its samples cut there) */
		{ .type = "VirtualSpace", .field = "_high_boundary", .val = &v->vs_high },
		{ .type = "StubQueue", .field = "_stub_buffer", .val = &v->sq_buffer },
		{ .type = "StubQueue", .field = "_buffer_limit", .val = &v->sq_limit },
		{ .type = "CodeBlob", .field = "_name", .val = &v->cb_name },
		{ .type = "CodeBlob", .field = "_frame_size", .val = &v->cb_frame_size },
		{ .type = "CodeBlob", .field = "_frame_complete_offset", .val = &v->cb_frame_complete },
		{ .type = "CodeBlob", .field = "_code_begin", .val = &v->cb_code_begin },
		{ .type = "CodeBlob", .field = "_code_end", .val = &v->cb_code_end },
		{ .type = "CompiledMethod", .field = "_method", .val = &v->nm_method },
		{ .type = "nmethod", .field = "_compile_id", .val = &v->nm_compile_id },
		{ .type = "nmethod", .field = "_comp_level", .val = &v->nm_comp_level,
		  .alt_type = "CompiledMethod", .alt_field = "_comp_level",
		  .optional = true },
		{ .type = "CompiledMethod", .field = "_scopes_data_begin", .val = &v->nm_scopes_data },
		{ .type = "nmethod", .field = "_scopes_pcs_offset", .val = &v->nm_scopes_pcs },
		{ .type = "nmethod", .field = "_dependencies_offset", .val = &v->nm_deps },
		{ .type = "nmethod", .field = "_metadata_offset", .val = &v->nm_metadata },
		{ .type = "Method", .field = "_constMethod", .val = &v->m_const },
		{ .type = "ConstMethod", .field = "_constants", .val = &v->cm_constants },
		/* 21: a ConstMethodFlags, its u4 inside */
		{ .type = "ConstMethod", .field = "_flags", .val = &v->cm_flags,
		  .alt_type = "ConstMethod", .alt_field = "_flags._flags" },
		{ .type = "ConstMethod", .field = "_code_size", .val = &v->cm_code_size },
		{ .type = "ConstMethod", .field = "_name_index", .val = &v->cm_name },
		{ .type = "ConstMethod", .field = "_signature_index", .val = &v->cm_sig },
		{ .type = "ConstMethod", .field = "_constMethod_size", .val = &v->cm_size_words },
		{ .type = "ConstantPool", .field = "_pool_holder", .val = &v->cp_holder },
		/* 11..13: the InstanceKlass's (the pool holder), 14 moved it */
		{ .type = "ConstantPool", .field = "_source_file_name_index", .val = &v->cp_source,
		  .alt_type = "InstanceKlass", .alt_field = "_source_file_name_index",
		  .alt = &v->source_in_klass },
		{ .type = "Klass", .field = "_name", .val = &v->klass_name },
		{ .type = "Symbol", .field = "_length", .val = &v->sym_length },
		{ .type = "Symbol", .field = "_body", .val = &v->sym_body },
	};
	const struct want_type types[] = {
		{ "HeapBlock", &v->t_heap_block },
		{ "ConstMethod", &v->t_const_method },
		{ "ConstantPool", &v->t_cp },
		{ "PcDesc", &v->t_pcdesc },
	};
	bool found[sizeof(want) / sizeof(want[0])] = { 0 };
	bool tfound[sizeof(types) / sizeof(types[0])] = { 0 };

	for (size_t k = 0; k < JVM_NR_SYMS; k++)
		if (!peek64(p->pid, o->sym[k] + p->bias, &s[k]))
			return -EIO;
	stride = s[S_S_STRIDE];
	if (!s[S_STRUCTS] || stride < 8 || stride > 256 || s[S_S_TYPE] > stride - 8 ||
	    s[S_S_FIELD] > stride - 8 || s[S_S_STATIC] > stride - 4 || s[S_S_OFFSET] > stride - 8 ||
	    s[S_S_ADDRESS] > stride - 8)
		return -EAGAIN; /* not filled in yet, or not a layout we read */
	at = s[S_STRUCTS];
	for (int i = 0; i < JVMREC_MAX_ENTRIES; i++, at += stride) {
		uint8_t e[256];
		uint64_t tp, fp, off, addr;
		int32_t is_static;

		if (!peek(p->pid, at, e, stride))
			return -EIO;
		memcpy(&tp, e + s[S_S_TYPE], 8);
		if (!tp)
			break; /* the table's end */
		memcpy(&fp, e + s[S_S_FIELD], 8);
		memcpy(&is_static, e + s[S_S_STATIC], 4);
		memcpy(&off, e + s[S_S_OFFSET], 8);
		memcpy(&addr, e + s[S_S_ADDRESS], 8);
		if (!peek_str(p->pid, tp, tn, sizeof(tn)) || !fp || !peek_str(p->pid, fp, fn, sizeof(fn)))
			continue;
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			bool alt;

			if (found[k])
				continue;
			alt = want[k].alt_type && !strcmp(tn, want[k].alt_type) &&
			      !strcmp(fn, want[k].alt_field);
			if (alt || (!strcmp(tn, want[k].type) && !strcmp(fn, want[k].field))) {
				*want[k].val = is_static ? addr : off;
				found[k] = true;
				if (want[k].alt)
					*want[k].alt = alt;
			}
		}
	}
	stride = s[S_T_STRIDE];
	if (!s[S_TYPES] || stride < 8 || stride > 256 || s[S_T_NAME] > stride - 8 ||
	    s[S_T_SIZE] > stride - 8)
		return -EAGAIN;
	at = s[S_TYPES];
	for (int i = 0; i < JVMREC_MAX_ENTRIES; i++, at += stride) {
		uint8_t e[256];
		uint64_t tp, size;

		if (!peek(p->pid, at, e, stride))
			return -EIO;
		memcpy(&tp, e + s[S_T_NAME], 8);
		if (!tp)
			break;
		memcpy(&size, e + s[S_T_SIZE], 8);
		if (!peek_str(p->pid, tp, tn, sizeof(tn)))
			continue;
		for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
			if (!tfound[k] && !strcmp(tn, types[k].type)) {
				*types[k].size = size;
				tfound[k] = true;
			}
	}
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (!found[k] && !want[k].optional) {
			snprintf(missing, cap, "no %s::%s", want[k].type, want[k].field);
			return -ENOENT;
		}
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
		if (!tfound[k]) {
			snprintf(missing, cap, "no type %s", types[k].type);
			return -ENOENT;
		}
	return 0;
}

/*
 * What the tables do not say, per release: the interpreter frame's slots
 * (frame_x86.hpp: method at fp - 3 words, bcp at fp - 8, sender sp at
 * fp - 1 since the mirror slot of JDK 9, up to 21) and ConstMethod's
 * "has a line number table" flag (constMethod.hpp: _has_linenumber_table
 * 0x0001 of the u2 ConstMethod::_flags in 11..20; 21 made _flags a
 * ConstMethodFlags, exported as "_flags._flags", a u4 whose bit 0 is
 * has_linenumber_table: the low u2 read serves both).  Tested: 11
 * (Debian 11's 11.0.24) and 17 (Debian 12's 17.0.x); 21's names are
 * those of jdk21u's vmStructs.cpp, not run here.  A release outside
 * [11, 21] is not walked: 25 (Temurin 25.0.3) has no
 * CodeBlob::_code_begin, _code_end or CompiledMethod, an 8-byte HeapBlock
 * and a 16-bit _frame_complete_offset, which the walk does not read.
 */
static int version_layout(const char *release, struct jvm_offsets *off, uint32_t *line_flag)
{
	int major = atoi(release);

	if (major < 11 || major > 21)
		return -ENOENT;
	off->fp_method = 3;
	off->fp_bcp = 8;
	off->fp_sender_sp = 1;
	*line_flag = 1;
	return 0;
}

static bool fits16(uint64_t v)
{
	return v < 0xffff;
}

/* Read the JVM's layouts and its code cache; 0 when the walk can start,
 * -EAGAIN when the JVM has not made its code cache yet, another error when
 * it will not (status set). */
static int setup_proc(struct jvmrec *j, struct jvmproc *p)
{
	const struct jvmobj *o = &j->objs[p->obj];
	struct vmvals v = { .nm_comp_level = JVM_BLOB_READ };
	struct jvm_proc *w = &p->walk;
	uint64_t heaps, arr, rel, sq, sq_lim = 0;
	char release[64];
	int32_t len = 0;
	int err;

	p->missing[0] = 0;
	err = read_tables(p, o, &v, p->missing, sizeof(p->missing));
	if (err == -EAGAIN || err == -EIO)
		return -EAGAIN;
	/* the release first: one outside the known ones is told as such,
	 * whatever fields its tables lack (25 has no CodeBlob::_code_begin) */
	if (v.vm_release &&
	    (!peek64(p->pid, v.vm_release, &rel) || !peek_str(p->pid, rel, release, sizeof(release)))) {
		if (!err)
			return -EAGAIN;
		v.vm_release = 0;
	}
	if (v.vm_release && !p->version)
		p->version = strdup(release);
	memset(w, 0, sizeof(*w));
	if (v.vm_release && version_layout(release, &w->off, &p->n.linenumber_flag)) {
		p->status = BPROF_JVM_UNKNOWN_VERSION;
		return -ENOENT;
	}
	if (err) {
		p->status = BPROF_JVM_NO_OFFSETS;
		return err;
	}
	/* the code cache: its heaps and bounds, the interpreter */
	if (!peek64(p->pid, v.heaps, &heaps) || !heaps ||
	    !peek(p->pid, heaps + v.ga_len, &len, 4) || len <= 0 ||
	    !peek64(p->pid, heaps + v.ga_data, &arr) || !arr ||
	    !peek64(p->pid, v.interp_code, &sq) || !sq)
		return -EAGAIN;
	if (len > JVM_MAX_HEAPS || !peek(p->pid, v.low_bound, &w->cc_lo, 8) ||
	    !peek(p->pid, v.high_bound, &w->cc_hi, 8) || w->cc_lo >= w->cc_hi) {
		snprintf(p->missing, sizeof(p->missing), "code cache of %d heaps, bounds unreadable or empty", len);
		p->status = BPROF_JVM_NO_OFFSETS;
		return -EINVAL;
	}
	if (!peek(p->pid, sq + v.sq_buffer, &w->interp_lo, 8) ||
	    !peek(p->pid, sq + v.sq_limit, &sq_lim, 4) || !w->interp_lo)
		return -EAGAIN;
	w->interp_hi = w->interp_lo + (uint32_t)sq_lim;
	for (int32_t i = 0; i < len; i++) {
		uint64_t h, lo, hi, seg;
		int32_t log2 = 0;

		if (!peek64(p->pid, arr + 8 * (uint64_t)i, &h) ||
		    !peek64(p->pid, h + v.ch_memory + v.vs_low, &lo) ||
		    !peek64(p->pid, h + v.ch_memory + v.vs_high, &hi) ||
		    !peek64(p->pid, h + v.ch_segmap + v.vs_low, &seg) ||
		    !peek(p->pid, h + v.ch_log2, &log2, 4))
			return -EAGAIN;
		if (log2 < 4 || log2 > 16 || lo >= hi || !seg) {
			snprintf(p->missing, sizeof(p->missing), "code heap %d unusable (segment 2^%d)", i, log2);
			p->status = BPROF_JVM_NO_OFFSETS;
			return -EINVAL;
		}
		w->heaps[i] = (struct jvm_heap){ .lo = lo, .hi = hi, .segmap = seg,
						 .log2_seg = (uint32_t)log2 };
	}
	w->nr_heaps = (uint32_t)len;
	w->exec_id = p->exec_id;
	w->off.heap_block = (uint16_t)v.t_heap_block;
	w->off.blob_frame_size = (uint16_t)v.cb_frame_size;
	w->off.blob_frame_complete = (uint16_t)v.cb_frame_complete;
	w->off.blob_code_begin = (uint16_t)v.cb_code_begin;
	w->off.blob_code_end = (uint16_t)v.cb_code_end;
	w->off.nm_compile_id = (uint16_t)v.nm_compile_id;
	w->off.method_const = (uint16_t)v.m_const;
	w->off.cm_code_size = (uint16_t)v.cm_code_size;
	w->off.cm_size = (uint16_t)v.t_const_method;
	/* the walk reads these within JVM_BLOB_READ bytes of a blob */
	if (v.cb_frame_size > JVM_BLOB_READ - 4 || v.cb_frame_complete > JVM_BLOB_READ - 4 ||
	    v.cb_code_begin > JVM_BLOB_READ - 8 || v.cb_code_end > JVM_BLOB_READ - 8 ||
	    v.nm_compile_id > JVM_BLOB_READ - 4 ||
	    v.nm_method > JVM_BLOB_READ - 8 || v.cb_name > JVM_BLOB_READ - 8 ||
	    v.nm_scopes_data > JVM_BLOB_READ - 8 || v.nm_scopes_pcs > JVM_BLOB_READ - 4 ||
	    v.nm_deps > JVM_BLOB_READ - 4 || v.nm_metadata > JVM_BLOB_READ - 4 ||
	    !fits16(v.t_heap_block) || !fits16(v.m_const) || !fits16(v.cm_code_size) ||
	    !fits16(v.t_const_method) || v.t_pcdesc != JVMREC_PCDESC_LEN) {
		snprintf(p->missing, sizeof(p->missing), "field offsets beyond what the walk reads");
		p->status = BPROF_JVM_NO_OFFSETS;
		return -EINVAL;
	}
	p->n = (struct jvm_names_off){
		.blob_name = (uint32_t)v.cb_name, .nm_method = (uint32_t)v.nm_method,
		.nm_comp_level = (uint32_t)v.nm_comp_level,
		.nm_scopes_data = (uint32_t)v.nm_scopes_data, .nm_scopes_pcs = (uint32_t)v.nm_scopes_pcs,
		.nm_deps = (uint32_t)v.nm_deps, .nm_metadata = (uint32_t)v.nm_metadata,
		.cm_constants = (uint32_t)v.cm_constants, .cm_flags = (uint32_t)v.cm_flags,
		.cm_name_index = (uint32_t)v.cm_name, .cm_sig_index = (uint32_t)v.cm_sig,
		.cm_size_words = (uint32_t)v.cm_size_words,
		.cp_holder = (uint32_t)v.cp_holder, .cp_source_file = (uint32_t)v.cp_source,
		.cp_size = (uint32_t)v.t_cp, .klass_name = (uint32_t)v.klass_name,
		.sym_length = (uint32_t)v.sym_length, .sym_body = (uint32_t)v.sym_body,
		.linenumber_flag = p->n.linenumber_flag, .source_in_klass = v.source_in_klass,
	};
	p->status = BPROF_JVM_WALKED;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void jvmrec_tick(struct jvmrec *j)
{
	for (uint32_t i = 0; j && i < j->nr_procs; i++) {
		struct jvmproc *p = &j->procs[i];
		int err;

		if (p->ready || p->failed)
			continue;
		err = setup_proc(j, p);
		if (err == -EAGAIN && ++p->tries < JVMREC_MAX_TRIES)
			continue;
		/* tables incomplete or inconsistent: read again until they
		 * have been so for JVMREC_SETTLE_NS (a release bprof does not
		 * know is told at once: its string is whole when read) */
		if (err && err != -EAGAIN && p->status == BPROF_JVM_NO_OFFSETS) {
			uint64_t now = mono_ns();

			if (!p->bad_since)
				p->bad_since = now;
			if (now - p->bad_since < JVMREC_SETTLE_NS && p->tries++ < JVMREC_MAX_TRIES) {
				p->status = BPROF_JVM_NOT_READY;
				continue;
			}
		}
		if (err) {
			p->failed = true;
			continue;
		}
		p->ready = true;
		if (!bpf_map_update_elem(j->procs_fd, &p->pid, &p->walk, BPF_ANY))
			p->live = j->met = true;
	}
}

bool jvmrec_met(const struct jvmrec *j)
{
	return j && j->met;
}

bool jvmrec_next_refused(struct jvmrec *j, uint32_t *pid, const char **version, uint32_t *status,
			 const char **why)
{
	for (uint32_t i = 0; j && i < j->nr_procs; i++) {
		struct jvmproc *p = &j->procs[i];

		if (p->told || !p->failed ||
		    (p->status != BPROF_JVM_UNKNOWN_VERSION && p->status != BPROF_JVM_NO_OFFSETS))
			continue;
		p->told = true;
		*pid = p->pid;
		*version = p->version;
		*status = p->status;
		*why = p->status == BPROF_JVM_NO_OFFSETS && p->missing[0] ? p->missing : NULL;
		return true;
	}
	return false;
}

/* ---- names -------------------------------------------------------------- */

/* A Symbol's bytes as a new string ('/' turned into '.' when dots). */
static char *read_symbol(const struct jvmproc *p, uint64_t sym, bool dots)
{
	uint16_t len = 0;
	char *s;

	if (!peek(p->pid, sym + p->n.sym_length, &len, 2) || !len || len > BPROF_JVM_NAME_MAX)
		return NULL;
	s = malloc((size_t)len + 1);
	if (!s)
		return NULL;
	if (!peek(p->pid, sym + p->n.sym_body, s, len) || memchr(s, 0, len)) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	for (uint16_t i = 0; dots && i < len; i++)
		if (s[i] == '/')
			s[i] = '.';
	return s;
}

/* The Symbol at index idx of a constant pool (entries follow its header,
 * a word each). */
static char *cp_symbol(const struct jvmproc *p, uint64_t cp, uint16_t idx, bool dots)
{
	uint64_t sym;

	if (!idx || !peek64(p->pid, cp + p->n.cp_size + 8ULL * idx, &sym) || !sym)
		return NULL;
	return read_symbol(p, sym & ~1ULL, dots);
}

/* Class, method, signature, file and line table of Method* method into
 * f; 0, or -1 when the method cannot be read (or its ConstMethod is not
 * the one guard was made from, when check). */
static int name_method(const struct jvmproc *p, uint64_t method, bool check, uint32_t guard,
		       struct bprof_jvm_frame *f, bool *mismatch)
{
	const struct jvm_offsets *o = &p->walk.off;
	uint64_t cm, cp, holder, kname;
	uint16_t flags = 0, code_size = 0, name_i = 0, sig_i = 0, src_i = 0;
	int32_t cm_words = 0;

	if (!peek64(p->pid, method + o->method_const, &cm) || !cm)
		return -1;
	if (check && jvm_method_guard(cm) != guard) {
		*mismatch = true;
		return -1;
	}
	if (!peek64(p->pid, cm + p->n.cm_constants, &cp) ||
	    !peek(p->pid, cm + p->n.cm_flags, &flags, 2) ||
	    !peek(p->pid, cm + o->cm_code_size, &code_size, 2) ||
	    !peek(p->pid, cm + p->n.cm_name_index, &name_i, 2) ||
	    !peek(p->pid, cm + p->n.cm_sig_index, &sig_i, 2) ||
	    !peek(p->pid, cm + p->n.cm_size_words, &cm_words, 4) ||
	    !peek64(p->pid, cp + p->n.cp_holder, &holder) ||
	    !peek(p->pid, (p->n.source_in_klass ? holder : cp) + p->n.cp_source_file, &src_i, 2) ||
	    !peek64(p->pid, holder + p->n.klass_name, &kname))
		return -1;
	f->klass = read_symbol(p, kname, true);
	f->method = cp_symbol(p, cp, name_i, false);
	f->signature = cp_symbol(p, cp, sig_i, false);
	f->file = cp_symbol(p, cp, src_i, false);
	if (!f->klass || !f->method)
		return -1;
	if (flags & p->n.linenumber_flag) {
		/* after the bytecodes, to the ConstMethod's end at most */
		uint64_t start = cm + o->cm_size + code_size, end = cm + 8ULL * (uint32_t)cm_words;
		uint32_t n = end > start ? (uint32_t)(end - start) : 0;

		if (n > BPROF_JVM_LINES_MAX)
			n = BPROF_JVM_LINES_MAX;
		if (n && (f->lines = malloc(n))) {
			if (peek(p->pid, start, f->lines, n)) {
				f->lines_len = n;
			} else {
				free(f->lines);
				f->lines = NULL;
			}
		}
	}
	return 0;
}

static void get_blob(const uint8_t *b, uint32_t off, void *dst, size_t len)
{
	if (off + len <= JVM_BLOB_READ)
		memcpy(dst, b + off, len);
	else
		memset(dst, 0, len);
}

/* ---- compiled frames' scopes -------------------------------------------- */

/* Bounds on what one nmethod's scopes may take. */
#define JVMREC_MAX_PCDESCS 16384
#define JVMREC_MAX_SCOPES_DATA (1u << 20)
#define JVMREC_MAX_METADATA 8192
#define JVMREC_MAX_DEPTH 32

/* UNSIGNED5, as the line number table (CompressedReadStream::read_int). */
static int u5(const uint8_t *b, uint32_t len, uint32_t *pos, uint32_t *out)
{
	uint64_t sum = 0;
	unsigned shift = 0;

	for (int i = 0; i < 5; i++) {
		uint32_t v;

		if (*pos >= len)
			return -1;
		v = b[(*pos)++];
		sum += (uint64_t)v << shift;
		if (v < 192 || i == 4) {
			*out = (uint32_t)sum;
			return 0;
		}
		shift += 6;
	}
	return -1;
}

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static int put(struct bytes *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		uint8_t *v;

		while (cap < b->len + n)
			cap *= 2;
		if (!(v = realloc(b->p, cap)))
			return -1;
		b->p = v;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

static uint64_t frame_hash(uint32_t pid, uint32_t exec_id, uint64_t id, uint32_t guard)
{
	uint64_t h = (uint64_t)pid << 32 ^ exec_id;

	h = (h ^ id) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ guard) * 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

/* The index of the frame named (pid, exec_id, id, guard), or -1. */
static int64_t find_frame(const struct jvmrec *j, uint32_t pid, uint32_t exec_id, uint64_t id,
			  uint32_t guard)
{
	if (!j->index_cap)
		return -1;
	for (uint64_t h = frame_hash(pid, exec_id, id, guard);; h++) {
		uint64_t v = j->index[h & (j->index_cap - 1)];
		const struct bprof_jvm_frame *f;

		if (!v)
			return -1;
		f = &j->frames[v - 1];
		if (f->pid == pid && f->exec_id == exec_id && f->id == id && f->guard == guard)
			return (int64_t)(v - 1);
	}
}

static void index_put(struct jvmrec *j, uint64_t i)
{
	const struct bprof_jvm_frame *f = &j->frames[i];

	for (uint64_t h = frame_hash(f->pid, f->exec_id, f->id, f->guard);; h++)
		if (!j->index[h & (j->index_cap - 1)]) {
			j->index[h & (j->index_cap - 1)] = i + 1;
			return;
		}
}

static int add_frame(struct jvmrec *j, const struct bprof_jvm_frame *f);

/* The guard of Method* method, and a named entry for it in j (as an
 * interpreted frame's) so that the report can name the scopes that refer
 * to it: 0, or -1 when it cannot be read. */
static int ensure_method(struct jvmrec *j, const struct jvmproc *p, uint64_t method,
			 uint32_t *guard)
{
	struct bprof_jvm_frame f = { 0 };
	uint64_t cm;
	bool mismatch = false;

	if (!peek64(p->pid, method + p->walk.off.method_const, &cm) || !cm)
		return -1;
	*guard = jvm_method_guard(cm);
	if (find_frame(j, p->pid, p->exec_id, (uint64_t)JVM_KIND_INTERP << JVM_KIND_SHIFT | method,
		       *guard) >= 0)
		return 0;
	f.pid = p->pid;
	f.exec_id = p->exec_id;
	f.id = (uint64_t)JVM_KIND_INTERP << JVM_KIND_SHIFT | method;
	f.guard = *guard;
	f.kind = BPROF_JVM_INTERPRETED;
	if (name_method(p, method, true, *guard, &f, &mismatch) || add_frame(j, &f)) {
		free_frame(&f);
		return -1;
	}
	return 0;
}

/*
 * The scopes of nmethod nm (its header as the walk read it: hdr): for each
 * PcDesc, the chain of (method, bci) its debug info records, innermost
 * first (ScopeDesc: sender offset, method index into the nmethod's
 * metadata, bci + 1, three more offsets; sender 0 ends the chain).  Into
 * f->scopes as SPEC.md 6.18 lays them out; nothing when they cannot be
 * read whole.
 */
static void read_scopes(struct jvmrec *j, const struct jvmproc *p, uint64_t nm,
			const uint8_t *hdr, uint64_t nm_method, uint32_t compile_id,
			struct bprof_jvm_frame *f)
{
	uint64_t data_begin = 0, *meta = NULL;
	int32_t pcs_off = 0, deps_off = 0, meta_off = 0;
	uint8_t *pcs = NULL, *data = NULL;
	uint32_t nr_pcs, data_len, nr_meta;
	struct bytes out = { 0 };

	get_blob(hdr, p->n.nm_scopes_data, &data_begin, 8);
	get_blob(hdr, p->n.nm_scopes_pcs, &pcs_off, 4);
	get_blob(hdr, p->n.nm_deps, &deps_off, 4);
	get_blob(hdr, p->n.nm_metadata, &meta_off, 4);
	if (pcs_off <= 0 || deps_off < pcs_off || meta_off <= 0 ||
	    data_begin < nm + (uint64_t)meta_off || data_begin > nm + (uint64_t)pcs_off)
		return;
	nr_pcs = (uint32_t)(deps_off - pcs_off) / JVMREC_PCDESC_LEN;
	data_len = (uint32_t)(nm + (uint64_t)pcs_off - data_begin);
	nr_meta = (uint32_t)((data_begin - nm - (uint64_t)meta_off) / 8);
	if (!nr_pcs || nr_pcs > JVMREC_MAX_PCDESCS || data_len > JVMREC_MAX_SCOPES_DATA ||
	    nr_meta > JVMREC_MAX_METADATA)
		return;
	pcs = malloc((size_t)nr_pcs * JVMREC_PCDESC_LEN);
	data = malloc(data_len ? data_len : 1);
	meta = malloc((nr_meta ? nr_meta : 1) * sizeof(*meta));
	if (!pcs || !data || !meta || !peek(p->pid, nm + (uint64_t)pcs_off, pcs, (size_t)nr_pcs * 16) ||
	    (data_len && !peek(p->pid, data_begin, data, data_len)) ||
	    (nr_meta && !peek(p->pid, nm + (uint64_t)meta_off, meta, nr_meta * 8ULL)))
		goto out;
	for (uint32_t i = 0; i < nr_pcs; i++) {
		int32_t pc_off, decode;
		uint32_t depth = 0, at_depth;
		uint8_t chain[JVMREC_MAX_DEPTH][16];

		memcpy(&pc_off, pcs + 16 * i, 4);
		memcpy(&decode, pcs + 16 * i + 4, 4);
		if (pc_off < 0 || pc_off > (int32_t)JVM_OFFSET_MASK)
			continue; /* the sentinels before and after the code */
		while (depth < JVMREC_MAX_DEPTH) {
			uint32_t pos = (uint32_t)decode, sender, mi, bci1, guard;
			uint64_t method;
			int32_t bci;

			if (decode == 0) {
				/* serialized_null: the method itself, no bci */
				method = nm_method;
				bci = -1;
				sender = 0;
			} else {
				if (decode < 0 || (uint32_t)decode >= data_len ||
				    u5(data, data_len, &pos, &sender) || u5(data, data_len, &pos, &mi) ||
				    u5(data, data_len, &pos, &bci1) || !mi || mi > nr_meta)
					goto out; /* not what this reader knows: none at all */
				method = meta[mi - 1];
				bci = (int32_t)bci1 - 1;
			}
			if (!method || ensure_method(j, p, method, &guard))
				goto out;
			memcpy(chain[depth], &method, 8);
			memcpy(chain[depth] + 8, &guard, 4);
			memcpy(chain[depth] + 12, &bci, 4);
			depth++;
			if (!sender)
				break;
			if (sender >= (uint32_t)decode && decode)
				goto out; /* a sender is written before its callees */
			decode = (int32_t)sender;
		}
		at_depth = depth;
		if (put(&out, &pc_off, 4) || put(&out, &at_depth, 4) || put(&out, chain, 16ULL * depth))
			goto out;
		if (out.len > BPROF_JVM_SCOPES_MAX)
			goto out;
	}
	/* still the nmethod the walk met, now that its scopes are read (it
	 * may have been freed and its memory given to another since) */
	{
		int32_t cid = 0;

		if (!peek(p->pid, nm + p->walk.off.nm_compile_id, &cid, 4) ||
		    (uint32_t)cid != compile_id)
			goto out;
	}
	f->scopes = out.p;
	f->scopes_len = (uint32_t)out.len;
	out.p = NULL;
out:
	free(out.p);
	free(pcs);
	free(data);
	free(meta);
}

/* Keep f (its strings now j's), unless j has it already (the walk's seen
 * map forgot it and announced it again): 0, or -1 (f is then the
 * caller's to free). */
static int add_frame(struct jvmrec *j, const struct bprof_jvm_frame *f)
{
	if (find_frame(j, f->pid, f->exec_id, f->id, f->guard) >= 0)
		return -1;
	if ((j->nr_frames + 1) * 2 > j->index_cap) {
		uint64_t cap = j->index_cap ? j->index_cap * 2 : 1024;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return -1;
		free(j->index);
		j->index = v;
		j->index_cap = cap;
		for (uint64_t i = 0; i < j->nr_frames; i++)
			index_put(j, i);
	}
	if (j->nr_frames == j->cap_frames) {
		uint64_t n = j->cap_frames ? j->cap_frames * 2 : 256;
		struct bprof_jvm_frame *v = realloc(j->frames, n * sizeof(*v));

		if (!v)
			return -1;
		j->frames = v;
		j->cap_frames = n;
	}
	j->frames[j->nr_frames] = *f;
	index_put(j, j->nr_frames++);
	j->named++;
	return 0;
}

void jvmrec_frame(struct jvmrec *j, const struct jvm_frame_event *e, size_t size)
{
	struct bprof_jvm_frame f = { 0 };
	struct jvmproc *p;
	uint64_t addr;
	uint32_t kind;
	bool mismatch = false;
	int ok = -1;

	if (size < sizeof(*e))
		return;
	p = find_proc(j, e->pid, e->exec_id);
	if (!p || !p->ready)
		return;
	addr = e->id & JVM_ADDR_MASK;
	kind = (uint32_t)(e->id >> JVM_KIND_SHIFT) & 0xff;
	f.pid = e->pid;
	f.exec_id = e->exec_id;
	f.id = e->id;
	f.guard = e->guard;
	if (kind == JVM_KIND_INTERP) {
		f.kind = BPROF_JVM_INTERPRETED;
		ok = name_method(p, addr, true, e->guard, &f, &mismatch);
	} else if (kind == JVM_KIND_BLOB) {
		uint64_t name_at = 0, method = 0;
		int32_t cid = 0, level = 0;
		char name[128];

		get_blob(e->blob, p->n.blob_name, &name_at, 8);
		if (name_at && peek_str(p->pid, name_at, name, sizeof(name))) {
			get_blob(e->blob, p->walk.off.nm_compile_id, &cid, 4);
			if (!strcmp(name, "nmethod") || !strcmp(name, "native nmethod")) {
				/* the blob the walk read is the nmethod it named */
				get_blob(e->blob, p->n.nm_method, &method, 8);
				get_blob(e->blob, p->n.nm_comp_level, &level, 4);
				f.kind = BPROF_JVM_COMPILED;
				f.level = level;
				if ((uint32_t)cid != e->guard)
					mismatch = true;
				else
					ok = name_method(p, method, false, 0, &f, &mismatch);
				/* its lines and inlined methods: the scopes */
				free(f.lines);
				f.lines = NULL;
				f.lines_len = 0;
				if (!ok)
					read_scopes(j, p, addr, e->blob, method, e->guard, &f);
			} else {
				f.kind = BPROF_JVM_STUB;
				f.method = strdup(name);
				ok = f.method ? 0 : -1;
			}
		}
	}
	if (mismatch)
		j->guard_mismatch++;
	if (ok || !f.kind) {
		free_frame(&f);
		j->unnamed++;
		return;
	}
	if (add_frame(j, &f))
		free_frame(&f);
}

/* ---- the section -------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int jvmrec_emit(struct jvmrec *j, struct bprof_recording *rec)
{
	struct bprof_jvm *out = &rec->jvm;
	uint64_t n = 0;

	if (!j || !j->nr_procs)
		return 0;
	out->present = 1;
	/* the BPF side's counters, summed over CPUs, then the recorder's */
	out->nr_counters = JVM_STAT_MAX + 3;
	for (uint32_t k = 0; k < JVM_STAT_MAX; k++) {
		uint64_t *v = calloc((size_t)j->nr_cpus, sizeof(*v));

		if (!v)
			return -ENOMEM;
		if (!bpf_map_lookup_elem(j->stats_fd, &k, v))
			for (int c = 0; c < j->nr_cpus; c++)
				out->counters[k] += v[c];
		free(v);
	}
	out->counters[JVM_STAT_MAX] = j->named;
	out->counters[JVM_STAT_MAX + 1] = j->unnamed;
	out->counters[JVM_STAT_MAX + 2] = j->guard_mismatch;
	out->procs = calloc(j->nr_procs, sizeof(*out->procs));
	if (!out->procs)
		return -ENOMEM;
	for (uint32_t i = 0; i < j->nr_procs; i++) {
		const struct jvmproc *p = &j->procs[i];

		out->procs[i] = (struct bprof_jvm_proc){ .pid = p->pid, .exec_id = p->exec_id,
							 .status = p->status,
							 .version = dup_or_null(p->version) };
		out->nr_procs = i + 1;
	}
	if (j->nr_frames && !(out->frames = calloc(j->nr_frames, sizeof(*out->frames))))
		return -ENOMEM;
	/* unique (add_frame), sorted by the writer */
	for (uint64_t i = 0; i < j->nr_frames; i++) {
		const struct bprof_jvm_frame *f = &j->frames[i];
		struct bprof_jvm_frame *g = &out->frames[n];

		*g = *f;
		g->klass = dup_or_null(f->klass);
		g->method = dup_or_null(f->method);
		g->signature = dup_or_null(f->signature);
		g->file = dup_or_null(f->file);
		g->lines = NULL;
		if (f->lines_len && (g->lines = malloc(f->lines_len)))
			memcpy(g->lines, f->lines, f->lines_len);
		else
			g->lines_len = 0;
		g->scopes = NULL;
		if (f->scopes_len && (g->scopes = malloc(f->scopes_len)))
			memcpy(g->scopes, f->scopes, f->scopes_len);
		else
			g->scopes_len = 0;
		out->nr_frames = ++n;
	}
	return 0;
}

/* ---- HotSpot's row of the runtimes' table (runtimes.h) ---------------- */

static int jvm_create(void **out, const struct runtime_maps *m)
{
	return jvmrec_create((struct jvmrec **)out, m->procs_fd, m->stats_fd, m->nr_cpus);
}

static void jvm_destroy(void *rt) { jvmrec_destroy(rt); }
static void jvm_object(void *rt, uint32_t idx, Elf *elf) { jvmrec_object(rt, idx, elf); }
static void jvm_image_gone(void *rt, uint32_t pid, uint32_t exec_id) { jvmrec_image_gone(rt, pid, exec_id); }
static bool jvm_met(const void *rt) { return jvmrec_met(rt); }
static int jvm_emit(void *rt, struct bprof_recording *rec) { return jvmrec_emit(rt, rec); }

static void jvm_image(void *rt, uint32_t pid, uint32_t exec_id, const struct manifest_mapping *maps,
		      uint32_t nr)
{
	jvmrec_image(rt, pid, exec_id, maps, nr);
}

/* named now, while the process lives */
static bool jvm_event(void *rt, const void *data, size_t size)
{
	const struct jvm_frame_event *e = data;

	if (e->type != JVM_EVENT_FRAME)
		return false;
	if (rt)
		jvmrec_frame(rt, e, size);
	return true;
}

/* JVMs whose code cache was not made yet looked at again; those met that
 * will not be walked said once each: a recording that lacks their Java
 * frames says so before it is read */
static void jvm_tick(void *rt)
{
	const char *version, *why;
	uint32_t pid, status;

	jvmrec_tick(rt);
	while (jvmrec_next_refused(rt, &pid, &version, &status, &why))
		fprintf(stderr, "prof-record: pid %u runs HotSpot %s, %s%s%s%s: its Java frames are not recorded (its native stack ends at generated code)\n",
			pid, version ? version : "(release unreadable)",
			status == BPROF_JVM_UNKNOWN_VERSION
				? "a release bprof does not walk (it walks 11 to 21)"
				: "whose introspection tables lack what the walk needs",
			why ? " (" : "", why ? why : "", why ? ")" : "");
}

const struct runtime_ops jvmrec_ops = {
	.mask = RUNTIME_JVM,
	.create = jvm_create, .destroy = jvm_destroy,
	.object = jvm_object, .image = jvm_image, .image_gone = jvm_image_gone, .met = jvm_met,
	.event = jvm_event, .tick = jvm_tick, .emit = jvm_emit,
};
