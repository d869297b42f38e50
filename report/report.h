/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h - internals of prof-report, shared by its files.
 *
 * Data flow: bprof_read_file() -> rep_input (adapter.c: recorded objects,
 * kernel and mappings handed to libsym) -> rep_fold (fold.c: the rows of
 * all inputs that would print the same, summed) -> rep_walk (walk.c: each
 * row as symbolized frames) -> rep_agg (render.c: rows rendered as text and
 * merged with identical ones) or the exporters (which walk every row) ->
 * the output writers (render.c, info.c, export_*.c).  The runtimes whose
 * frames the recorder walks are rows of one table (runtime.h).  Only
 * main.c and options.c talk to the user.
 */
#ifndef BPROF_REPORT_H
#define BPROF_REPORT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bprof.h"
#include "bsym.h"
#include "runtime.h"

enum rep_mode { REP_MULTILINE, REP_FOLDED };

/* Which rows: all, on-CPU only (--on-cpu), off-CPU only (--off-cpu). */
enum { REP_SEL_ALL = 0, REP_SEL_ON_CPU, REP_SEL_OFF_CPU };

struct rep_config {
	enum rep_mode mode;
	bool delimited;     /* -d */
	bool annotate;      /* -a */
	bool user_only;     /* -U */
	bool kernel_only;   /* -K */
	bool addresses;     /* --addresses */
	bool quiet;         /* -q */
	bool python_native; /* --python-native: keep the evaluation loop's
			     * frames that Python frames stand for */
	uint32_t *pids;     /* -p filter, NULL = all */
	size_t nr_pids;
	const char *comm;   /* --comm filter */
	int cpu_sel;        /* REP_SEL_*: --on-cpu, --off-cpu */
	bool threads;       /* --threads: a thread frame under the process */
	/* --min-share: the threads left out (rep_share_select), NULL: none */
	const struct rep_share *share;
	/* called now and then while rows are symbolized (NULL: never) */
	void (*progress)(void *arg, const char *file, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* One recording made ready for symbolization. */
struct rep_process_map {
	const struct bprof_process *proc;
	struct bsym_mapping *maps;  /* same order as proc->mappings */
	struct bsym_mapping *hmaps; /* same order as proc->history (generations) */
	uint32_t perfmap;           /* bsym perf map id or BSYM_NO_OBJECT */
	uint32_t jitdump;           /* bsym jitdump id or BSYM_NO_OBJECT */
};

struct rep_input {
	const char *path;
	struct bprof_recording *rec;
	uint32_t *object_ids;        /* rec->objects[i] -> bsym object id */
	struct rep_process_map *procs; /* parallel to rec->processes */
	uint32_t kernel;             /* bsym kernel id, BSYM_NO_OBJECT if none */
	struct bsym_ksym *ksyms;     /* kept for bsym_kernel_register's copy */
	/* each runtime's frames named so far, parallel to rep_runtimes, NULL
	 * where the recording has none (runtime.c) */
	struct rep_names **runtimes;
};

int rep_input_open(struct rep_input *in, struct bsym_ctx *sym, const char *path,
		   char *errbuf, size_t errlen);
/* Take ownership of an already-read recording (freed by rep_input_close,
 * also on failure). */
int rep_input_adopt(struct rep_input *in, struct bsym_ctx *sym, struct bprof_recording *rec,
		    const char *name, char *errbuf, size_t errlen);
void rep_input_close(struct rep_input *in);
/*
 * Register rec's kernel with sym as rep_input_adopt would, and nothing
 * else.  A report that reads its files one at a time does this for every
 * file first: a kernel's table of symbols then holds every file's entries
 * before the first lookup, as when every file was opened before the first
 * walk, and each file adopted later shares that one kernel.
 */
int rep_kernel_preregister(struct bsym_ctx *sym, struct bprof_recording *rec);
/* While on, rep_input_adopt lets a kernel share one that has answered
 * lookups when its symbols are all there (bsym reuse_answered): turned on
 * for the second pass over files whose kernels were preregistered. */
void rep_adapter_kernels_prescanned(bool on);
/* Frees what registered inputs left to libsym (after bsym_destroy). */
void rep_adapter_cleanup(void);
const struct rep_process_map *rep_input_process(const struct rep_input *in, uint32_t pid,
						uint32_t exec_id);

/* Aggregated, symbolized stacks: rendered text -> count. */
struct rep_agg;

struct rep_stats {
	uint64_t samples;
	uint64_t frames;
	uint64_t frames_named;
	uint64_t missed_user, missed_kernel; /* rows whose stack was lost */
	uint64_t frames_jit_ambiguous; /* JIT frames entries of several names cover (SPEC.md 6.16) */
	bool missed_enomem;
};

int rep_agg_create(struct rep_agg **out);
void rep_agg_destroy(struct rep_agg *agg);
/* Symbolize and add every (filtered) count row of in. */
int rep_agg_add_input(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		      const struct rep_input *in, struct rep_stats *stats);
/* The same for a set of inputs (all of prof-report FILE..., one side of
 * --diff): the rows of two or more are folded (fold.c) and each unique row
 * is walked and rendered once.  Output and counters equal
 * rep_agg_add_input's on each input in turn. */
int rep_agg_add_inputs(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		       const struct rep_input *in, size_t nr_in, struct rep_stats *st);
/* The same for inputs already folded into fold (name: for the progress
 * line); the inputs its rows came from must still be open. */
struct rep_fold;
int rep_agg_add_fold(struct rep_agg *agg, const struct rep_config *cfg, struct bsym_ctx *sym,
		     const struct rep_fold *fold, const char *name, struct rep_stats *st);
/* Called for each row added (the heatmap keeps when it was sampled):
 * entry is the index of the rendered stack it went to (rep_agg_key).  A
 * non-zero return stops the walk.  Rows folded from several (fold.c)
 * reach it as one: the heatmap adds its inputs one by one. */
typedef int (*rep_agg_row_fn)(void *arg, const struct rep_input *in, const struct bprof_count *c,
			      size_t entry);
void rep_agg_set_row_hook(struct rep_agg *agg, rep_agg_row_fn fn, void *arg);
/* The rendered stacks, in the order first added; *count (may be NULL)
 * their samples. */
size_t rep_agg_nr(const struct rep_agg *agg);
const char *rep_agg_key(const struct rep_agg *agg, size_t i, uint64_t *count);
/* Objects (bsym ids) that had frames but no symbols; owned by agg. */
size_t rep_agg_unnamed_objects(const struct rep_agg *agg, const uint32_t **ids);

/* Writers: return 0, or -errno on an output error (EPIPE included). */
int rep_print(FILE *f, const struct rep_agg *agg, const struct rep_config *cfg);
int rep_print_diff(FILE *f, const struct rep_agg *before, const struct rep_agg *after,
		   bool normalize);
int rep_print_info(FILE *f, struct bsym_ctx *sym, const struct rep_input *in);

/* Row rules of the walker (walk.c), which every output consumes. */

/* A stack lost in the kernel (map full, collision); -EFAULT is "no such
 * stack" (a kernel thread's user stack) and BPROF_STACK_NONE "not asked". */
static inline bool rep_stack_missed(int32_t id)
{
	return id < 0 && id != -EFAULT && id != BPROF_STACK_NONE;
}

static inline bool rep_pid_selected(const struct rep_config *cfg, uint32_t pid)
{
	if (!cfg->pids)
		return true;
	for (size_t i = 0; i < cfg->nr_pids; i++)
		if (cfg->pids[i] == pid)
			return true;
	return false;
}

/* Return addresses point after the call; look up the call instruction
 * instead, or the caller's line and inline context can be wrong. */
static inline uint64_t rep_lookup_addr(uint64_t addr, size_t depth)
{
	return depth > 0 && addr ? addr - 1 : addr;
}

/* Text helpers (text.c).  rep_utf8_len: length of the printable UTF-8
 * character at p, 0 for a control character (C0, DEL, C1) or invalid UTF-8.
 * rep_fputs_clean: print s with such bytes and '\\' escaped as \\xHH. */
size_t rep_utf8_len(const unsigned char *p);
void rep_fputs_clean(FILE *f, const char *s);

void rep_hex(char *out, const uint8_t *bytes, size_t len); /* out: 2*len+1 */

/* ---- structured walk (walk.c), for the exporters ------------------------- */

enum rep_wkind {
	REP_W_USER,
	REP_W_KERNEL,
	REP_W_JIT,            /* anonymous executable memory */
	REP_W_MISSED_USER,    /* pseudo-frame: the user stack was lost */
	REP_W_MISSED_KERNEL,  /* pseudo-frame: the kernel stack was lost */
	REP_W_MISSING_CALLER, /* pseudo-frame: the FP walk skipped a caller */
	REP_W_OFFCPU,         /* pseudo-frame, the leaf of an off-CPU row:
			       * "[off-cpu:S]"; addr holds the state */
	REP_W_RUNTIME,        /* a frame of runtime rt (runtime.h): addr holds
			       * its first word, lookup an id of its name
			       * in the input (0: unnamed), res its name */
};

/* One address of a count row. */
struct rep_wframe {
	enum rep_wkind kind;
	uint64_t addr;                   /* as recorded */
	uint64_t lookup;                 /* addr, or addr-1 for return addresses */
	const struct bsym_result *res;   /* non-NULL only when named */
	enum bsym_reason reason;         /* why not named */
	uint32_t object;                 /* bsym object id, or BSYM_NO_OBJECT */
	uint32_t object_index;           /* into rec->objects, or BPROF_NO_OBJECT */
	const struct bprof_mapping *map; /* user/JIT frames: the recorded mapping */
	uint64_t file_offset;            /* of addr in the object (with map) */
	const struct rep_runtime *rt;    /* REP_W_RUNTIME: whose frame */
};

/* Called for each selected count row; frames leaf first: the nr_kernel
 * kernel frames (or a missed-kernel pseudo-frame), then user frames (then a
 * missed-user pseudo-frame).  A non-zero return stops the walk. */
typedef int (*rep_walk_fn)(void *arg, const struct rep_input *in, const struct bprof_count *c,
			   const struct rep_wframe *frames, size_t nr, size_t nr_kernel);
/* Walk the selected count rows (rep_agg_add_input is built on it);
 * symbolize=false leaves every res NULL (raw addresses).  st may be NULL.
 * Calls cfg->progress as it goes. */
int rep_walk(const struct rep_config *cfg, struct bsym_ctx *sym, const struct rep_input *in,
	     bool symbolize, rep_walk_fn fn, void *arg, struct rep_stats *st);
/* Whether -p, --comm, --on-cpu/--off-cpu and --min-share select count
 * row c (share.c). */
bool rep_row_selected(const struct rep_config *cfg, const struct bprof_count *c);

/* --min-share=PCT (share.c): a first pass over files (cfg's other filters
 * applied, and time's range when it is active: files from second_set on,
 * when not 0, are --diff's AFTER; cfg->share must be NULL) finds the threads, the rows of one
 * process and comm, whose samples are below pct % of all; *out says
 * which (rep_share_dropped), for cfg->share.  0, or -errno with a message
 * in err. */
struct rep_share;
struct rep_timesel;
int rep_share_select(struct rep_share **out, const struct rep_config *cfg, char *const *files,
		     size_t nr_files, double pct, struct rep_timesel *time, size_t second_set,
		     char *err, size_t errlen);
bool rep_share_dropped(const struct rep_share *s, const struct bprof_count *c);
/* Threads seen and left out, and their samples. */
void rep_share_counts(const struct rep_share *s, size_t *threads, size_t *dropped,
		      uint64_t *samples, uint64_t *dropped_samples);
void rep_share_free(struct rep_share *s);
/* The frames of one row, reused from row to row (zero-initialize; free
 * with rep_wbuf_free). */
struct rep_wbuf {
	struct rep_wframe *v;
	size_t nr, cap;
};
void rep_wbuf_free(struct rep_wbuf *b);
/* rep_walk's work on one count row c of in, selected or not (the caller
 * filters): build its frames in b and call fn on them. */
int rep_walk_row(struct rep_wbuf *b, const struct rep_config *cfg, struct bsym_ctx *sym,
		 const struct rep_input *in, const struct bprof_count *c, bool symbolize,
		 rep_walk_fn fn, void *arg, struct rep_stats *st);
/* One user frame as rep_walk makes it (addr at depth in the stack, pm may
 * be NULL, gen the row's mapping generation, win the row's time window in
 * the jitdump's clock, rep_row_window(), or NULL); fold.c keys rows by
 * these. */
void rep_wframe_user(struct rep_wframe *f, struct bsym_ctx *sym, const struct rep_process_map *pm,
		     uint64_t addr, size_t depth, uint32_t gen, const uint64_t win[2],
		     bool symbolize);
/* When row c's samples were taken, as CLOCK_MONOTONIC ns [win[0], win[1])
 * (SPEC.md 6.16): its slice, else the file's span.  win[1] 0: not known
 * (no JIT section to relate the clocks). */
void rep_row_window(const struct rep_input *in, const struct bprof_count *c, uint64_t win[2]);
#define REP_JIT_AMBIGUOUS_FRAME "[jit-ambiguous]"
/*
 * The process frame, the root of every output's stacks: the row's comm (the
 * name of the thread sampled, as bcc's profile prints it); with --threads,
 * the process's name (PROCESSES' comm, its group leader's, or the row's
 * where the process has no snapshot), the thread getting a frame of its own
 * below it, rep_thread_frame_name().  buf: BPROF_COMM_LEN + 1 bytes.
 */
const char *rep_process_name(const struct rep_config *cfg, const struct rep_input *in,
			     const struct bprof_count *c, char *buf);
/* "NAME (tid TID)": the thread's name when the row was sampled (a thread
 * that renamed itself has rows under each name, with one tid). */
void rep_thread_frame_name(char *buf, size_t len, const struct bprof_count *c);
/* Whether in's rows carry thread ids (META flag, prof-record --per-thread
 * or -L): --threads refuses a recording without them. */
bool rep_input_per_thread(const struct rep_input *in);
/* Name of a pseudo-frame (REP_W_MISSED_*, REP_W_MISSING_CALLER). */
const char *rep_wframe_missed_name(enum rep_wkind kind);
/* "[off-cpu:S]" and the like: the leaf frame of an off-CPU row (state,
 * BPROF_STATE_*), which every output prints so that a line says on its
 * own what it counts. */
const char *rep_offcpu_frame_name(uint32_t state);

/*
 * The words every output uses for frames without a name: a frame in a known
 * object that has no symbol there is "[OBJECT BASENAME]" (as perf prints
 * it), "[unknown]" only where even the object is unknown, and a caller a
 * frame-pointer walk skipped is "[missing caller]".  --addresses prints
 * object+0xoffset instead of the first two.
 */
#define REP_UNKNOWN_FRAME "[unknown]"
#define REP_MISSING_CALLER_FRAME "[missing caller]"
/* "[liblzma.so.5.4.1]" for path; "[vdso]" stays as it is. */
void rep_object_frame_name(char *buf, size_t len, const char *path);

/* A byte-string -> uint64 map (keys copied; map.c). */
struct rep_map_slot {
	char *key;
	size_t len;
	uint64_t hash, value;
};
struct rep_map {
	struct rep_map_slot *slots;
	size_t nslots, nr;
};
/* Look key up: found -> *value is the stored value; absent -> key inserted
 * with *value.  -ENOMEM. */
int rep_map_get(struct rep_map *m, const void *key, size_t len, uint64_t *value, bool *found);
/* The same, but *value points at the stored value (0 for a key just
 * inserted), valid until the map next changes.  -ENOMEM. */
int rep_map_ref(struct rep_map *m, const void *key, size_t len, uint64_t **value, bool *found);
void rep_map_free(struct rep_map *m);

/* ---- folding the rows of many inputs (fold.c) ------------------------------ */

/* A unique row: the first count row seen with its key, count the sum of
 * all rows with that key, rows how many they were. */
struct rep_fold_row {
	const struct rep_input *in;
	struct bprof_count c;
	uint64_t rows;
};
struct rep_fold;
int rep_fold_create(struct rep_fold **out);
void rep_fold_destroy(struct rep_fold *f);
/* Fold the rows cfg selects (-p, --comm) of in, which must outlive f.
 * Rows fold only when everything cfg's output prints of them is equal
 * (fold.c says what that is); -ENOMEM. */
int rep_fold_add_input(struct rep_fold *f, const struct rep_config *cfg, const struct rep_input *in);
/* How many unique rows the last rep_fold_add_input() added.  An input that
 * added none is not referenced by f: its caller may close it at once. */
size_t rep_fold_last_new(const struct rep_fold *f);
/* The unique rows so far, first seen first; owned by f. */
size_t rep_fold_rows(const struct rep_fold *f, const struct rep_fold_row **rows);

/* ---- reading files ahead (readahead.c) ------------------------------------- */

/* paths[0..n) read in order on a thread of their own, at most a few
 * recordings ahead of the caller; paths must outlive ra. */
struct rep_readahead;
int rep_readahead_create(struct rep_readahead **out, char *const *paths, size_t n); /* -ENOMEM */
/* The next file's recording (the caller owns it), or its reading error
 * with errbuf set as bprof_read_file would word it; -ENOENT after the last.
 * After an error no later file is read. */
int rep_readahead_next(struct rep_readahead *ra, struct bprof_recording **rec, char *errbuf,
		       size_t errlen);
void rep_readahead_destroy(struct rep_readahead *ra);

/* ---- time ranges (timesel.c): --from, --to ------------------------------------ */

/* A point in time as given: seconds from the start of the set's first
 * recording, CLOCK_REALTIME ns, or a time of the day that recording
 * started (local or UTC). */
enum { REP_TIME_REL, REP_TIME_ABS, REP_TIME_DAY_LOCAL, REP_TIME_DAY_UTC };
struct rep_time_point {
	int kind;
	int64_t ns;
};
/* "12", "1.5s", "2m"; "@1795709951.5"; "2026-11-26T16:20:00[.5][Z]";
 * "16:20[:05][.5][Z]".  0 or -EINVAL. */
int rep_time_parse(const char *s, struct rep_time_point *p);

struct rep_timesel {
	bool active, has_from, has_to;
	struct rep_time_point from, to;
	/* resolved against the first recording of the set being read */
	bool base_set;
	uint64_t base, lo, hi;
};
/* The next recording applied starts a set (--diff's AFTER): relative
 * times count from its start. */
void rep_timesel_new_set(struct rep_timesel *t);
/* Drop the rows of rec outside the range (SPEC.md 6.14: a row is in when
 * its slice starts in [from, to)) and narrow META's span to it.  A
 * recording without slices is kept whole or dropped whole: *whole says it
 * was kept though only part of it is in the range.  t NULL or inactive:
 * nothing. */
int rep_timesel_apply(struct rep_timesel *t, struct bprof_recording *rec, bool *whole);

/* ---- exporters (export_*.c, flamegraph_svg.c) ------------------------------ */

/* Each writes path ("-": standard output) from the inputs; 0 or -errno. */
int rep_export_pprof(const char *path, const struct rep_config *cfg, struct bsym_ctx *sym,
		     const struct rep_input *in, size_t nr_in, bool symbolize, struct rep_stats *st);
int rep_export_speedscope(const char *path, const struct rep_config *cfg, struct bsym_ctx *sym,
			  const struct rep_input *in, size_t nr_in, struct rep_stats *st);
/* Objects with frames in the selected samples whose debuginfo is missing:
 * "BUILDID PATH" lines. */
int rep_print_missing_buildids(FILE *f, const struct rep_config *cfg, struct bsym_ctx *sym,
			       const struct rep_input *in, size_t nr_in);

/*
 * The same exports fed one input at a time: create, add each input in
 * order (it may be closed as soon as add returns: nothing of it is kept
 * but copies), then write; destroy in any case.  Memory is what the
 * output holds (its stacks, frames, strings), not the inputs'.  The
 * functions above are these over an array.  pprof's sample types depend
 * on the whole set: by_freq (rep_pprof_by_freq of the first recording)
 * and offcpu (any recording with off-CPU rows).
 */
struct rep_pprof;
bool rep_pprof_by_freq(const struct bprof_recording *first);
int rep_pprof_create(struct rep_pprof **out, const struct rep_config *cfg, struct bsym_ctx *sym,
		     bool symbolize, bool by_freq, bool offcpu);
int rep_pprof_add(struct rep_pprof *x, const struct rep_input *in, struct rep_stats *st);
int rep_pprof_write(struct rep_pprof *x, const char *path);
void rep_pprof_destroy(struct rep_pprof *x);
struct rep_speedscope;
int rep_speedscope_create(struct rep_speedscope **out, const struct rep_config *cfg,
			  struct bsym_ctx *sym);
int rep_speedscope_add(struct rep_speedscope *x, const struct rep_input *in, struct rep_stats *st);
int rep_speedscope_write(struct rep_speedscope *x, const char *path);
void rep_speedscope_destroy(struct rep_speedscope *x);
struct rep_missing;
int rep_missing_create(struct rep_missing **out, const struct rep_config *cfg, struct bsym_ctx *sym);
int rep_missing_add(struct rep_missing *m, const struct rep_input *in);
int rep_missing_write(struct rep_missing *m, FILE *f);
void rep_missing_destroy(struct rep_missing *m);

/* prof-report --heatmap: one self-contained HTML page (report/heatmap.html)
 * of the inputs' samples over time and the flame graph of any range;
 * rep_heatmap_html's follow_ms > 0 makes the page reload itself that often
 * (--follow).  0 or -errno. */
struct rep_heatmap_opts {
	const char *title;
	unsigned follow_ms;
	/* the page's flame graph, as --svg's (rep_svg_opts): an icicle;
	 * frames narrower than min_width pixels (percent of the range's
	 * samples with min_width_pct) left out, < 0: the default 0.1 px */
	bool inverted;
	double min_width;
	bool min_width_pct;
};
int rep_heatmap_html(const char *path, const struct rep_config *cfg, struct bsym_ctx *sym,
		     const struct rep_input *in, size_t nr_in, const struct rep_heatmap_opts *o,
		     struct rep_stats *st);
/* The same one input at a time (as rep_pprof_create and the rest); write
 * once. */
struct rep_heatmap;
int rep_heatmap_create(struct rep_heatmap **out, const struct rep_config *cfg,
		       struct bsym_ctx *sym);
int rep_heatmap_add(struct rep_heatmap *x, const struct rep_input *in, struct rep_stats *st);
int rep_heatmap_write(struct rep_heatmap *x, const char *path, const struct rep_heatmap_opts *o);
void rep_heatmap_destroy(struct rep_heatmap *x);

/* JSON string (with quotes), invalid UTF-8 and control bytes escaped. */
void rep_json_string(FILE *f, const char *s);

/* Flame graphs from folded text ("a;b;c N" lines, or "a;b;c BEFORE AFTER"
 * with diff).  Frames annotated _[k]/_[i]/_[j] get their own hues. */
struct rep_svg_opts {
	const char *title;
	unsigned width;       /* 0: 1200 */
	bool diff;
	bool inverted;        /* --inverted: an icicle graph, the roots at the top */
	/* --min-width: frames narrower than this many pixels (or, with
	 * min_width_pct, this percent of all samples) are not drawn, and
	 * counted in the title; 0: flamegraph.pl's 0.1 px */
	double min_width;
	bool min_width_pct;
	bool threads;         /* --threads: depth 2 holds thread frames (drawn grey) */
};
int rep_flamegraph_svg(FILE *out, const char *folded, size_t len, const struct rep_svg_opts *o);

#endif
