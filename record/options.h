/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.h - prof-record's command line: the argp table, its parsing and
 * the configuration (struct env) every other room of the recorder reads.
 * Usage errors are printed here, as argp does, and end in exit code 2.
 */
#ifndef BPROF_RECORD_OPTIONS_H
#define BPROF_RECORD_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>

#define OPTS_MAX_IDS 1024

/* --unwind-memory's default: 128 MiB (record/DESIGN.md, "The memory budget") */
#define OPTS_UNWIND_MEMORY_DEFAULT (128ULL << 20)
#define OPTS_UNWIND_MEMORY_MIN (4ULL << 20)
#define OPTS_UNWIND_MEMORY_MAX (64ULL << 30)

/* --slice's default (ms): FlameScope's 50 rows a second; 0 would make it
 * opt-in (record/DESIGN.md, "Time slices", says what it costs) */
#define OPTS_SLICE_DEFAULT_MS 20

/* --unwind */
enum { OPTS_UNWIND_AUTO = 0, OPTS_UNWIND_FP, OPTS_UNWIND_CFI };

struct env {
	pid_t pids[OPTS_MAX_IDS];
	int nr_pids;
	pid_t tids[OPTS_MAX_IDS];
	int nr_tids;
	bool per_thread;   /* --per-thread (implied by -L): a count per thread */
	bool user_only;
	bool kernel_only;
	bool include_idle;
	bool no_kallsyms;
	bool full_kallsyms;
	bool quiet;
	bool verbose;
	bool force;
	long freq;
	long period;
	bool cycles;       /* -e cycles: hardware event (falls back to cpu-clock) */
	int cpu;
	long stack_storage_size;
	long hash_storage_size;
	bool hash_storage_given; /* --hash-storage-size was given */
	int unwind;        /* OPTS_UNWIND_* */
	long unwind_table_size; /* --unwind-table-size rows; 0: not given */
	unsigned long long unwind_memory; /* --unwind-memory bytes; 0: the default
					   * (or what unwind_table_size takes) */
	const char *table_cache; /* --table-cache; NULL: the default directory */
	bool no_table_cache;
	const char *cgroup;
	const char *output;
	long duration;     /* seconds; 0: until a signal */
	long rotate;       /* --rotate seconds; 0: one file */
	long keep;         /* --keep: files kept in the --rotate directory; 0: all */
	unsigned long long max_disk; /* --max-disk bytes; 0: no bound */
	int off_cpu;       /* 0; 1 --off-cpu; 2 --wall (OFFCPU_MODE_*) */
	long slice_ms;     /* --slice: each count's time slice, ms; 0: none */
	bool no_python;    /* --no-python: no CPython frames */
	bool no_v8;        /* --no-v8: no V8 JavaScript frames */
	bool no_jvm;       /* --no-jvm: no HotSpot frames */
	bool all_runtimes; /* --runtimes: walk every runtime's frames (runtimes.h) */
	char **command;    /* after "--", NULL-terminated, or NULL (points into argv) */
};

/*
 * Fill *env with the defaults, then with argv.  0 on success; otherwise the
 * exit code for main (2: a usage error, already printed).  argp itself exits
 * for --help, --version and most usage errors.
 */
int opts_parse(struct env *env, int argc, char **argv);

/* The command line as one string for the recording's metadata, or NULL
 * (out of memory).  The caller frees it. */
char *opts_join_args(int argc, char **argv);

/* prof-HOST-YYYYmmdd-HHMMSS.bprof for a missing -o (without the suffix:
 * a directory, with --rotate), or NULL (out of memory).  The caller frees
 * it. */
char *opts_default_output(bool dir);

/*
 * How many samples one file can count at most, when the recording's length
 * is known (a DURATION or --rotate interval at -F HZ): Hz x (seconds + 2) x
 * CPUs, plus a quarter and 1024; 0 when nothing bounds it (a command, a
 * signal, -c).  The maps filled per sample need no more entries than that:
 * their bucket arrays are allocated and zeroed at start-up (1 MiB for the
 * default counts table), which 10 s at 99 Hz on 2 CPUs does not need.
 */
long opts_samples_bound(const struct env *env);

#endif
