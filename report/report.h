/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h - internals of prof-report, shared by its files.
 *
 * Data flow: bprof_read_file() -> rep_input (adapter.c: recorded objects,
 * kernel and mappings handed to libsym) -> rep_agg (render.c: every count
 * row symbolized, rendered as text and merged with identical ones) -> the
 * output writers (render.c, info.c).  Only main.c talks to the user.
 */
#ifndef BPROF_REPORT_H
#define BPROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bprof.h"
#include "bsym.h"

enum rep_mode { REP_MULTILINE, REP_FOLDED };

struct rep_config {
	enum rep_mode mode;
	bool delimited;     /* -d */
	bool annotate;      /* -a */
	bool user_only;     /* -U */
	bool kernel_only;   /* -K */
	bool addresses;     /* --addresses */
	bool quiet;         /* -q */
	uint32_t *pids;     /* -p filter, NULL = all */
	size_t nr_pids;
	const char *comm;   /* --comm filter */
};

/* One recording made ready for symbolization. */
struct rep_process_map {
	const struct bprof_process *proc;
	struct bsym_mapping *maps;  /* same order as proc->mappings */
	uint32_t perfmap;           /* bsym perf map id or BSYM_NO_OBJECT */
};

struct rep_input {
	const char *path;
	struct bprof_recording *rec;
	uint32_t *object_ids;        /* rec->objects[i] -> bsym object id */
	struct rep_process_map *procs; /* parallel to rec->processes */
	uint32_t kernel;             /* bsym kernel id, BSYM_NO_OBJECT if none */
	struct bsym_ksym *ksyms;     /* kept for bsym_kernel_register's copy */
};

int rep_input_open(struct rep_input *in, struct bsym_ctx *sym, const char *path,
		   char *errbuf, size_t errlen);
/* Take ownership of an already-read recording (freed by rep_input_close,
 * also on failure). */
int rep_input_adopt(struct rep_input *in, struct bsym_ctx *sym, struct bprof_recording *rec,
		    const char *name, char *errbuf, size_t errlen);
void rep_input_close(struct rep_input *in);
const struct rep_process_map *rep_input_process(const struct rep_input *in, uint32_t pid,
						uint32_t exec_id);

/* Aggregated, symbolized stacks: rendered text -> count. */
struct rep_agg;

struct rep_stats {
	uint64_t samples;
	uint64_t frames;
	uint64_t frames_named;
	uint64_t missed_user, missed_kernel; /* rows whose stack was lost */
	bool missed_enomem;
};

int rep_agg_create(struct rep_agg **out);
void rep_agg_destroy(struct rep_agg *agg);
/* Symbolize and add every (filtered) count row of in. */
int rep_agg_add_input(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		      const struct rep_input *in, struct rep_stats *stats);
/* Objects (bsym ids) that had frames but no symbols; owned by agg. */
size_t rep_agg_unnamed_objects(const struct rep_agg *agg, const uint32_t **ids);

/* Writers: return 0, or -errno on an output error (EPIPE included). */
int rep_print(FILE *f, const struct rep_agg *agg, const struct rep_config *cfg);
int rep_print_diff(FILE *f, const struct rep_agg *before, const struct rep_agg *after,
		   bool normalize);
int rep_print_info(FILE *f, struct bsym_ctx *sym, const struct rep_input *in);

/* Text helpers */
void rep_hex(char *out, const uint8_t *bytes, size_t len); /* out: 2*len+1 */

#endif
