/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.c - prof-report's options: the argp table and its --help text,
 * their parsing and checks (usage errors exit 2), and directory arguments
 * expanded to the .bprof files in them.
 */
#define _GNU_SOURCE /* asprintf */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "options.h"

#ifndef BPROF_VERSION
#define BPROF_VERSION "unknown"
#endif

enum {
	OPT_COMM = 1000,
	OPT_MIN_SHARE,
	OPT_ON_CPU,
	OPT_OFF_CPU,
	OPT_DEBUG_DIR,
	OPT_SYSROOT,
	OPT_VMLINUX,
	OPT_ADDRESSES,
	OPT_PYTHON_NATIVE,
	OPT_NO_INLINE,
	OPT_NO_DEMANGLE,
	OPT_NO_DEBUGINFOD,
	OPT_DIFF,
	OPT_INFO,
	OPT_PPROF,
	OPT_SPEEDSCOPE,
	OPT_SVG,
	OPT_NO_SYMBOLIZE,
	OPT_MISSING_BUILDIDS,
	OPT_CACHE_DIR,
	OPT_NO_CACHE,
	OPT_BEFORE,
	OPT_THREADS,
	OPT_INVERTED,
	OPT_MIN_WIDTH,
	OPT_FROM,
	OPT_TO,
	OPT_HEATMAP,
	OPT_FOLLOW,
};


const char *argp_program_version = "prof-report " BPROF_VERSION;
/* argp re-wraps each paragraph to 79 columns: prose is written as one
 * string per paragraph, and every line of the tables below fits. */
static const char doc[] =
	"Symbolize .bprof recordings (from prof-record) offline and print their stacks.\n"
	"\n"
	"Debuginfo is found by build-id: in each --debug-dir (a build-id tree,\n"
	"DIR/.build-id/xx/rest.debug, or plain files), /usr/lib/debug, the recorded\n"
	"path under --sysroot when its build-id still matches, .gnu_debuglink,\n"
	"MiniDebugInfo, and debuginfod when DEBUGINFOD_URLS is set.  An object whose\n"
	"build-id differs from the recording is never used: its frames print as\n"
	"[OBJECT] (or object+0xoffset with --addresses).\n"
	"\v"
	"USAGE FORMS:\n"
	"  prof-report [OPTION...] FILE...       report (several files are merged)\n"
	"  prof-report [OPTION...] DIR           the .bprof files in DIR, merged\n"
	"                                        (prof-record --rotate's directory)\n"
	"  prof-report --diff [-n] BEFORE AFTER  lines for difffolded flame graphs\n"
	"  prof-report --before B [--before B..] A..  the same for sets, each merged\n"
	"  prof-report --info FILE...            metadata, losses, unwinding, debuginfo\n"
	"  prof-report --pprof OUT FILE...       pprof profile.proto (go tool pprof)\n"
	"  prof-report --speedscope OUT FILE...  speedscope JSON, one profile a process\n"
	"  prof-report [--diff] --svg OUT FILE.. interactive (differential) flame graph\n"
	"  prof-report --missing-buildids FILE.. BUILDID PATH lines lacking debuginfo\n"
	"\n"
	"EXAMPLES:\n"
	"  prof-report web1.bprof          # bcc profile's multi-line stacks\n"
	"  prof-report -f -a web1.bprof | flamegraph.pl > web1.svg\n"
	"  prof-report -f -d --debug-dir ./debug web1.bprof    # a build-id debug tree\n"
	"  prof-report --diff -n before.bprof after.bprof | flamegraph.pl > diff.svg\n"
	"  prof-report -n --before v1-a.bprof --before v1-b.bprof v2-*.bprof  # sets\n"
	"  prof-report -f -p 185 --comm nginx web*.bprof    # filter, merge many hosts\n"
	"  prof-report --info web1.bprof  # which debuginfo is missing\n"
	"  prof-report --pprof web.pb.gz web*.bprof && go tool pprof -top web.pb.gz\n"
	"  prof-report --pprof raw.pb.gz --no-symbolize web1.bprof  # a backend names\n"
	"  prof-report --svg web1.svg web1.bprof    # open in a browser, click to zoom\n"
	"  prof-report --svg icicle.svg --inverted --min-width=2 web1.bprof\n"
	"  prof-report -f --threads web1.bprof  # prof-record --per-thread's\n"
	"\n"
	"Exit status: 0 success, 1 a file cannot be read or output failed, 2 usage.";

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Output:", 1 },
	{ "folded", 'f', NULL, 0, "Folded stacks, one line per stack (for flame graphs)", 1 },
	{ "delimited", 'd', NULL, 0, "Insert a delimiter between kernel and user stacks", 1 },
	{ "annotations", 'a', NULL, 0, "Annotate frames: _[k] kernel, _[i] inlined, _[j] JIT, _[py] Python, _[js] JavaScript", 1 },
	{ "user-stacks-only", 'U', NULL, 0, "Show user stacks only", 1 },
	{ "kernel-stacks-only", 'K', NULL, 0, "Show kernel stacks only", 1 },
	{ "addresses", OPT_ADDRESSES, NULL, 0, "Print unnamed frames as object+0xoffset, not [object]", 1 },
	{ "threads", OPT_THREADS, NULL, 0, "A frame for the thread (name and tid) under the process, in every output (needs prof-record --per-thread)", 1 },
	{ "python-native", OPT_PYTHON_NATIVE, NULL, 0, "Keep the _PyEval_EvalFrameDefault frames that Python frames stand for (hidden by default)", 1 },
	{ "output", 'o', "FILE", 0, "Write the report to FILE instead of standard output", 1 },
	{ "quiet", 'q', NULL, 0, "No summary or warnings on standard error", 1 },
	{ "diff", OPT_DIFF, NULL, 0, "Compare two recordings: \"stack before after\" lines", 1 },
	{ "before", OPT_BEFORE, "FILE", 0,
	  "--diff with sets: FILE is one of BEFORE's (repeatable); all FILE... are AFTER", 1 },
	{ "normalize", 'n', NULL, 0, "With --diff, scale BEFORE's counts to AFTER's total", 1 },
	{ "info", OPT_INFO, NULL, 0, "Describe recordings and their objects' debuginfo", 1 },
	{ NULL, 0, NULL, 0, "Exports (any number at once; the text report is then not printed):", 4 },
	{ "pprof", OPT_PPROF, "FILE", 0, "Write a gzipped pprof profile.proto (\"-\": stdout)", 4 },
	{ "no-symbolize", OPT_NO_SYMBOLIZE, NULL, 0, "With --pprof, raw addresses with build-ids, no names", 4 },
	{ "speedscope", OPT_SPEEDSCOPE, "FILE", 0, "Write speedscope JSON, one profile per process", 4 },
	{ "svg", OPT_SVG, "FILE", 0, "Write an interactive flame graph (differential with --diff)", 4 },
	{ "inverted", OPT_INVERTED, NULL, 0, "With --svg, an icicle graph: roots at the top (flamegraph.pl --inverted)", 4 },
	{ "min-width", OPT_MIN_WIDTH, "PX", 0,
	  "With --svg, leave out frames narrower than PX pixels, or PX% of the samples (default 0.1; counted in the title)", 4 },
	{ "heatmap", OPT_HEATMAP, "FILE", 0, "Write an HTML page: samples over time (a column a second, a row a slice), the flame graph of any range of it", 4 },
	{ "follow", OPT_FOLLOW, NULL, 0, "With one prof-record --rotate DIR: rewrite the output (text to -o FILE, or the exports) as new files arrive, until interrupted", 4 },
	{ "missing-buildids", OPT_MISSING_BUILDIDS, NULL, 0,
	  "Print \"BUILDID PATH\" for objects with frames but no debuginfo", 4 },
	{ NULL, 0, NULL, 0, "Selection:", 2 },
	{ "pid", 'p', "PID[,PID...]", 0, "Only these processes", 2 },
	{ "comm", OPT_COMM, "NAME", 0, "Only processes whose comm is NAME", 2 },
	{ "min-share", OPT_MIN_SHARE, "PCT", 0, "Leave out threads (process and comm) with less than PCT % of the samples", 2 },
	{ "on-cpu", OPT_ON_CPU, NULL, 0, "Only on-CPU samples (of a prof-record --off-cpu or --wall recording)", 2 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0, "Only off-CPU samples (blocked and, with --wall, runnable time)", 2 },
	{ "from", OPT_FROM, "TIME", 0, "Only samples from TIME: seconds from the start of the first recording (of each --diff side), or a wall-clock time (HH:MM[:SS], YYYY-MM-DDTHH:MM:SS, Z for UTC; @EPOCH)", 2 },
	{ "to", OPT_TO, "TIME", 0, "Only samples before TIME (as --from)", 2 },
	{ NULL, 0, NULL, 0, "Symbolization:", 3 },
	{ "debug-dir", OPT_DEBUG_DIR, "DIR", 0, "Search DIR for debuginfo first (repeatable)", 3 },
	{ "sysroot", OPT_SYSROOT, "DIR", 0, "Look for recorded paths under DIR (default /)", 3 },
	{ "vmlinux", OPT_VMLINUX, "PATH", 0, "Kernel image with symbols (build-id checked)", 3 },
	{ "no-inline", OPT_NO_INLINE, NULL, 0, "Do not show inlined functions as frames", 3 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0, "Keep C++/Rust names mangled", 3 },
	{ "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, 0, "Do not ask debuginfod even if DEBUGINFOD_URLS is set", 3 },
	{ "cache-dir", OPT_CACHE_DIR, "DIR", 0,
	  "Symbol cache (default $XDG_CACHE_HOME/bprof, ~/.cache/bprof)", 3 },
	{ "no-cache", OPT_NO_CACHE, NULL, 0, "Neither read nor write the symbol cache", 3 },
	{ 0 },
};

static int parse_pids(struct rep_args *a, char *arg, struct argp_state *state)
{
	char *save = NULL;

	for (char *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		errno = 0;
		long v = strtol(tok, &end, 10);
		if (errno || *end || end == tok || v < 0 || v > INT_MAX)
			argp_error(state, "invalid PID '%s'", tok);
		uint32_t *p = realloc(a->cfg.pids, (a->cfg.nr_pids + 1) * sizeof(*p));
		if (!p)
			argp_failure(state, 1, ENOMEM, "parsing -p");
		a->cfg.pids = p;
		a->cfg.pids[a->cfg.nr_pids++] = (uint32_t)v;
	}
	if (!a->cfg.nr_pids)
		argp_error(state, "-p needs at least one PID");
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct rep_args *a = state->input;

	switch (key) {
	case 'f': a->cfg.mode = REP_FOLDED; break;
	case 'd': a->cfg.delimited = true; break;
	case 'a': a->cfg.annotate = true; break;
	case 'U': a->cfg.user_only = true; break;
	case 'K': a->cfg.kernel_only = true; break;
	case 'q': a->cfg.quiet = true; break;
	case 'o': a->output = arg; break;
	case 'n': a->normalize = true; break;
	case 'p': return parse_pids(a, arg, state);
	case OPT_ON_CPU:
	case OPT_OFF_CPU: {
		int sel = key == OPT_ON_CPU ? REP_SEL_ON_CPU : REP_SEL_OFF_CPU;
		if (a->cfg.cpu_sel && a->cfg.cpu_sel != sel)
			argp_error(state, "--on-cpu and --off-cpu select opposite rows: give one");
		a->cfg.cpu_sel = sel;
		break;
	}
	case OPT_MIN_SHARE: {
		char *end;

		errno = 0;
		a->min_share = strtod(arg, &end);
		if (errno || end == arg || *end || !(a->min_share > 0 && a->min_share <= 100))
			argp_error(state, "--min-share PCT must be a number above 0 and at most 100");
		break;
	}
	case OPT_COMM:
		if (!*arg || strlen(arg) >= BPROF_COMM_LEN)
			argp_error(state, "--comm NAME must have 1 to %d characters", BPROF_COMM_LEN - 1);
		a->cfg.comm = arg;
		break;
	case OPT_DEBUG_DIR: {
		const char **d = realloc(a->debug_dirs, (a->nr_debug_dirs + 1) * sizeof(*d));
		if (!d)
			argp_failure(state, 1, ENOMEM, "parsing --debug-dir");
		a->debug_dirs = d;
		a->debug_dirs[a->nr_debug_dirs++] = arg;
		break;
	}
	case OPT_SYSROOT: a->sysroot = arg; break;
	case OPT_VMLINUX: a->vmlinux = arg; break;
	case OPT_ADDRESSES: a->cfg.addresses = true; break;
	case OPT_THREADS: a->cfg.threads = true; break;
	case OPT_PYTHON_NATIVE: a->cfg.python_native = true; break;
	case OPT_NO_INLINE: a->sym_flags |= BSYM_NO_INLINE; break;
	case OPT_NO_DEMANGLE: a->sym_flags |= BSYM_NO_DEMANGLE; break;
	case OPT_NO_DEBUGINFOD: a->sym_flags |= BSYM_NO_DEBUGINFOD; break;
	case OPT_DIFF: a->diff = true; break;
	case OPT_INFO: a->info = true; break;
	case OPT_PPROF: a->pprof = arg; break;
	case OPT_SPEEDSCOPE: a->speedscope = arg; break;
	case OPT_SVG: a->svg = arg; break;
	case OPT_INVERTED: a->svg_opts.inverted = true; break;
	case OPT_MIN_WIDTH: {
		char *end;
		errno = 0;
		double v = strtod(arg, &end);
		bool pct = *end == '%';
		if (pct)
			end++;
		/* "inf" and "nan" are numbers to strtod, not widths */
		if (errno || end == arg || *end || !(v >= 0 && v <= (pct ? 100 : 100000)) ||
		    !strchr("0123456789.", arg[0]))
			argp_error(state, "--min-width '%s': a width in pixels (0 to 100000) or a percentage (0%% to 100%%)", arg);
		a->svg_opts.min_width = v;
		a->svg_opts.min_width_pct = pct;
		a->min_width_set = true;
		break;
	}
	case OPT_HEATMAP: a->heatmap = arg; break;
	case OPT_FOLLOW: a->follow = true; break;
	case OPT_NO_SYMBOLIZE: a->no_symbolize = true; break;
	case OPT_MISSING_BUILDIDS: a->missing_buildids = true; break;
	case OPT_CACHE_DIR:
		if (!*arg)
			argp_error(state, "--cache-dir needs a directory");
		a->cache_dir = arg;
		break;
	case OPT_NO_CACHE: a->no_cache = true; break;
	case OPT_FROM:
	case OPT_TO: {
		struct rep_time_point *p = key == OPT_FROM ? &a->time.from : &a->time.to;

		if (rep_time_parse(arg, p))
			argp_error(state, "invalid %s '%s': seconds from the start (12, 1.5, 2m), a wall-clock time (16:20:05, 2026-11-26T16:20:05, Z for UTC) or @EPOCH",
				   key == OPT_FROM ? "--from" : "--to", arg);
		if (key == OPT_FROM)
			a->time.has_from = true;
		else
			a->time.has_to = true;
		a->time.active = true;
		break;
	}
	case OPT_BEFORE:
	case ARGP_KEY_ARG: {
		char ***list = key == OPT_BEFORE ? &a->before : &a->files;
		size_t *nr = key == OPT_BEFORE ? &a->nr_before : &a->nr_files;
		char **f = realloc(*list, (*nr + 1) * sizeof(*f));
		if (!f)
			argp_failure(state, 1, ENOMEM, "parsing arguments");
		*list = f;
		f[(*nr)++] = arg;
		break;
	}
	case ARGP_KEY_END:
		if (a->nr_before && a->nr_files == 0)
			argp_error(state, "--before needs the AFTER files too");
		if (a->nr_files == 0)
			argp_error(state, "no input file: give one or more .bprof files");
		if (a->diff && !a->nr_before && a->nr_files != 2)
			argp_error(state, "--diff takes exactly two files or directories: BEFORE AFTER (or sets: --before)");
		if (a->nr_before) { /* BEFORE's files first: the rest is AFTER */
			char **f = realloc(a->before, (a->nr_before + a->nr_files) * sizeof(*f));
			if (!f)
				argp_failure(state, 1, ENOMEM, "parsing arguments");
			memcpy(f + a->nr_before, a->files, a->nr_files * sizeof(*f));
			free(a->files);
			a->files = f;
			a->nr_files += a->nr_before;
			a->before = NULL;
			a->diff = true;
		} else if (a->diff) {
			a->nr_before = 1;
		}
		if (a->cfg.user_only && a->cfg.kernel_only)
			argp_error(state, "-U and -K exclude each other");
		if (a->diff && a->info)
			argp_error(state, "--diff and --info exclude each other");
		if (a->normalize && !a->diff)
			argp_error(state, "-n only applies to --diff");
		if (a->diff && (a->pprof || a->speedscope || a->missing_buildids || a->heatmap))
			argp_error(state, "--diff only combines with --svg among the exports (the heatmap page has its own differential view)");
		if (a->info && a->heatmap)
			argp_error(state, "--info does not combine with exports");
		if (a->follow && (a->nr_files != 1 || a->info || a->diff))
			argp_error(state, "--follow takes one directory (prof-record --rotate's), without --diff or --info");
		if (a->info && (a->pprof || a->speedscope || a->svg || a->missing_buildids))
			argp_error(state, "--info does not combine with exports");
		if ((a->svg_opts.inverted || a->min_width_set) && !a->svg && !a->heatmap)
			argp_error(state, "--inverted and --min-width only apply to --svg and --heatmap");
		if (a->no_symbolize && !a->pprof)
			argp_error(state, "--no-symbolize only applies to --pprof");
		if (a->no_cache && a->cache_dir)
			argp_error(state, "--cache-dir and --no-cache exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int list_append(char ***list, size_t *nr, size_t *cap, char *s)
{
	if (*nr == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		char **n = realloc(*list, nc * sizeof(*n));

		if (!n)
			return ENOMEM;
		*list = n;
		*cap = nc;
	}
	(*list)[(*nr)++] = s;
	return 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

int rep_opts_list_dir(const char *dir, char ***list, size_t *nr, size_t *cap)
{
	size_t first = *nr;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;
		char *path;

		if (de->d_name[0] == '.' || len < 7 || strcmp(de->d_name + len - 6, ".bprof"))
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
			closedir(d);
			return ENOMEM;
		}
		if (stat(path, &st) || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		if (list_append(list, nr, cap, path)) {
			free(path);
			closedir(d);
			return ENOMEM;
		}
	}
	closedir(d);
	qsort(*list + first, *nr - first, sizeof(**list), cmp_str);
	return 0;
}

/* A directory argument stands for the .bprof files in it: prof-record
 * --rotate writes one per interval. */
int rep_opts_expand_dirs(struct rep_args *a)
{
	char **files = NULL;
	size_t nr = 0, cap = 0, nr_before = 0;
	int e;

	for (size_t i = 0; i < a->nr_files; i++) {
		struct stat st;
		size_t before = nr;

		if (stat(a->files[i], &st) || !S_ISDIR(st.st_mode)) {
			/* a file, or an error rep_input_open() will name */
			char *copy = strdup(a->files[i]);

			if (!copy || list_append(&files, &nr, &cap, copy)) {
				free(copy);
				e = ENOMEM;
				goto fail_e;
			}
		} else if ((e = rep_opts_list_dir(a->files[i], &files, &nr, &cap))) {
			fprintf(stderr, "prof-report: %s: %s\n", a->files[i], strerror(e));
			goto fail;
		} else if (nr == before) {
			fprintf(stderr, "prof-report: %s: no .bprof files in this directory\n",
				a->files[i]);
			goto fail;
		}
		/* --diff: BEFORE's arguments come first; so do their files */
		if (i < a->nr_before)
			nr_before = nr;
	}
	free(a->files);
	a->files = files;
	a->nr_files = nr;
	a->nr_before = nr_before;
	a->files_owned = true;
	return 0;
fail_e:
	fprintf(stderr, "prof-report: %s\n", strerror(e));
fail:
	for (size_t i = 0; i < nr; i++)
		free(files[i]);
	free(files);
	return 1;
}

int rep_opts_parse(struct rep_args *a, int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "FILE...", doc, NULL, NULL, NULL };

	argp_err_exit_status = EXIT_USAGE;
	return argp_parse(&argp, argc, argv, 0, NULL, a) ? EXIT_USAGE : 0;
}
