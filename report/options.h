/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.h - prof-report's command line: the argp table, its parsing and
 * the arguments (struct rep_args) main.c runs on.  Usage errors are printed
 * here, as argp does, and end in exit code 2.
 */
#ifndef BPROF_REPORT_OPTIONS_H
#define BPROF_REPORT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

enum { EXIT_USAGE = 2 };

struct rep_args {
	struct rep_config cfg;
	const char **debug_dirs;
	size_t nr_debug_dirs;
	const char *sysroot;
	const char *vmlinux;
	const char *output;
	unsigned sym_flags;
	bool diff, normalize, info;
	const char *pprof, *speedscope, *svg; /* exports (export_*.c, flamegraph_svg.c) */
	struct rep_svg_opts svg_opts;         /* --inverted, --min-width */
	bool min_width_set;
	bool no_symbolize, missing_buildids;
	const char *cache_dir; /* --cache-dir */
	bool no_cache;
	double min_share;      /* --min-share, percent; 0: off */
	char **files;          /* with --diff: BEFORE's first */
	size_t nr_files;
	char **before;         /* --before, then moved to the front of files */
	size_t nr_before;
	bool files_owned;      /* rep_opts_expand_dirs() made the paths in files */
	struct rep_timesel time; /* --from, --to */
	bool said_whole;       /* a file without slices was taken whole */
	const char *heatmap;   /* --heatmap FILE.html */
	bool follow;           /* --follow DIR */
	unsigned follow_ms;    /* how often --follow looks (and the page reloads) */
};

/* Parse argv into *a, which holds the defaults.  0, or EXIT_USAGE (the
 * error printed); argp itself exits for --help, --version and most usage
 * errors. */
int rep_opts_parse(struct rep_args *a, int argc, char **argv);

/* The .bprof files of directory dir (not hidden: prof-record's temporary
 * files are), sorted by name, appended to *list (*nr of them, room for
 * *cap; each path malloc'd).  0, or an errno. */
int rep_opts_list_dir(const char *dir, char ***list, size_t *nr, size_t *cap);

/* Each directory argument replaced by the .bprof files in it (in name
 * order, which is time order for prof-record --rotate's names); with
 * --diff, each becomes that side's set.  0, or 1 after printing. */
int rep_opts_expand_dirs(struct rep_args *a);

#endif
