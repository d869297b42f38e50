/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8rec_internal.h - what the V8 recorder's three files share: v8rec.c
 * (objects, processes, the events, the emit), v8heap.c (V8's heap objects
 * read from a process: strings, scripts, lines) and v8pos.c (the source
 * positions of bytecode and optimized code, inlined functions included).
 * v8rec.c calls the other two and v8pos.c calls v8heap.c; never back.
 */
#ifndef BPROF_V8REC_INTERNAL_H
#define BPROF_V8REC_INTERNAL_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "elfobj.h"
#include "v8rec.h"

#define V8REC_CODE_RANGE (512ULL << 20) /* V8's x64 code range without pointer compression */
#define V8REC_MAX_UNITS (4u << 20)      /* longest string (source) read, UTF-16 units */
#define V8REC_NR_SOURCES 16
#define DEOPT_LITERALS 2            /* DeoptimizationData's literal array, */
#define DEOPT_INLINING 7            /* inlining positions (V8 11: after the SFI, 6) */

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
	/* interpreted frames' lines (bytecode_rows) */
	int bca_data, type_bca, type_byte_array;
	int bca_wrapper, type_trusted_byte_array, bca_spt;
	/* optimized code (its inlined frames) */
	int fn_feedback, fn_proto, code_deopt, code_spt, istream_start, type_code;
	int deopt_inlined_count, deopt_sfi, codekind_mask, codekind_shift;
	int deopt_literals, deopt_inlining;
	int sfi_length;
	int fn_code, fn_raw_code, code_header, code_size, code_flags, code_entry, code_istream, code_wrapper;
	int codekind_baseline;
	/* what code_layout() makes of them: the Code's instructions at
	 * code_header (V8 < 11: inside the Code) or at the address in its
	 * code_entry field (V8 11+: in its InstructionStream) */
	int kind_maglev, kind_turbofan;
};

#define NR_V8SYMS (sizeof(v8syms) / sizeof(v8syms[0]))

struct v8obj {
	bool v8;
	bool code_ok;              /* optimized code's layout known (code_layout) */
	bool bca_ok;               /* bytecode arrays' (bytecode_layout) */
	uint32_t status;           /* enum bprof_v8_status */
	struct v8off off;
	uint64_t blob_start, blob_end; /* vaddrs of the Builtins_* code */
	struct elfobj_loads loads;
};

struct v8proc {
	uint32_t pid, exec_id, status;
	bool live, code_ok, bca_ok;
	struct v8off off;
	struct v8_proc walk;
	uint64_t blob_copy[V8_CODE_RANGES]; /* the builtins' copies, [0]: none */
	uint64_t istream_map;              /* InstructionStream's map, once met */
	/* code ranges found by their anonymous executable memory (anon_ranges) */
	uint64_t anon_start[V8_CODE_RANGES], anon_end[V8_CODE_RANGES];
	uint32_t nr_anon;
};

/* A script's line starts, by (pid, source string) */
struct v8source {
	uint32_t pid;
	uint64_t source;
	uint32_t *starts, nr;      /* UTF-16 offsets of each line's start */
	uint64_t used;
};

struct v8rec {
	int procs_fd, codes_fd;
	bool met;             /* a process was put in v8_procs */
	struct v8obj *objs;
	uint32_t nr_objs;
	struct v8proc *procs;
	uint32_t nr_procs, cap_procs;
	struct bprof_v8_sfi *sfis;
	uint64_t nr_sfis, cap_sfis;
	uint64_t announced, named, changed, unreadable;
	/* V8_EVENT_CODE: asked, found and given to the walk, not found */
	uint64_t code_asked, code_found, code_missed;
	struct v8source sources[V8REC_NR_SOURCES];
	uint64_t tick;
};

#define V8REC_MAX_DEOPT 64          /* deoptimization data words read */

bool v8rec__field(uint32_t pid, uint64_t obj, int off, uint64_t *out);
bool v8rec__heap_ptr(uint64_t t);
bool v8rec__peek(uint32_t pid, uint64_t addr, void *dst, size_t len);
int v8rec__read_sfi(struct v8rec *v, const struct v8proc *p, uint64_t sfi, uint32_t guard, uint64_t code, char **name, char **script, int32_t *line, uint64_t *fdata_out, uint64_t *src_out);
int v8rec__type_of(uint32_t pid, const struct v8off *o, uint64_t obj);
bool v8rec__code_entry(uint32_t pid, const struct v8off *o, uint64_t code, uint64_t *entry);
int32_t v8rec__line_of(struct v8rec *v, uint32_t pid, const struct v8off *o, uint64_t src, int64_t pos);
void v8rec__sfi_names(const struct v8proc *p, uint64_t nos, uint64_t sodi, char **name, char **script, uint64_t *src, int64_t *start);
int v8rec__bytecode_rows(struct v8rec *v, const struct v8proc *p, uint64_t bca, uint64_t src, const char *name, const char *script, struct bprof_v8_pos **out, uint32_t *nr_out);
int64_t v8rec__optimized_code(const struct v8proc *p, uint64_t code, uint64_t sfi, uint64_t words[V8REC_MAX_DEOPT]);
int v8rec__read_positions(struct v8rec *v, const struct v8proc *p, uint64_t sfi, uint64_t code, struct bprof_v8_pos **out, uint32_t *nr_out);
struct bprof_v8_pos *v8rec__rows_dup(const struct bprof_v8_pos *rows, uint32_t nr, int *err);

#endif
