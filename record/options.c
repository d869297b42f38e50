// SPDX-License-Identifier: Apache-2.0
/*
 * options.c - prof-record's command line (options.h): the argp table, strict
 * number parsing and the checks between options.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "options.h"

#ifndef BPROF_VERSION
#define BPROF_VERSION "unknown"
#endif

const char *argp_program_version = "prof-record " BPROF_VERSION;
static const char argp_program_doc[] =
	"Record on-CPU stack samples for offline analysis with prof-report.\n"
	"\n"
	"Stacks are sampled on the cpu-clock software event on every CPU and\n"
	"frequency-counted in the kernel, as bcc's profile does.  At the end the raw\n"
	"counts, the stack tables, the executable mappings and build-ids of every\n"
	"sampled process and the kernel's identity are written to one .bprof file.\n"
	"Nothing is symbolized here.\n"
	"\n"
	"USAGE: prof-record [OPTIONS] [DURATION | -- COMMAND [ARG...]]\n"
	"\n"
	"Without DURATION, records until SIGINT (Ctrl-C) or SIGTERM; a second signal\n"
	"aborts without writing.  With -- COMMAND, runs COMMAND, profiles it and\n"
	"every process it forks until it exits, and exits with its status.\n"
	"The output file is never overwritten unless --force is given; it is\n"
	"written atomically with mode 0600.\n"
	"\n"
	"With --rotate=SECONDS, prof-record records continuously: every SECONDS it\n"
	"writes one complete .bprof file into the -o directory and goes on, without\n"
	"losing a sample between two files.  prof-report reads the directory.\n"
	"\n"
	"EXAMPLES:\n"
	"    prof-record                  # all threads at 49 Hertz until Ctrl-C\n"
	"    prof-record 10               # for 10 seconds\n"
	"    prof-record -F 99 -o x.bprof 5   # 99 Hertz, 5 s, into x.bprof\n"
	"    prof-record -c 1000000       # one sample every million cpu-clock ns\n"
	"    prof-record -e cycles 10     # on CPU cycles where there is a PMU\n"
	"    prof-record -p 185           # only process 185\n"
	"    prof-record -p 185,186 -U    # two processes, user stacks only\n"
	"    prof-record -L 185           # only thread 185 (per-thread counts)\n"
	"    prof-record -K -C 1 5        # kernel stacks on CPU 1 for 5 s\n"
	"    prof-record --cgroup /sys/fs/cgroup/system.slice 10\n"
	"    prof-record -- make -j2      # profile a command and its children\n"
	"    prof-record --rotate=60 --keep=1440 -o /var/lib/bprof  # a file a minute\n";

enum {
	OPT_STACK_STORAGE = 0x100,
	OPT_HASH_STORAGE,
	OPT_CGROUP,
	OPT_NO_KALLSYMS,
	OPT_FULL_KALLSYMS,
	OPT_FORCE,
	OPT_UNWIND,
	OPT_UNWIND_TABLE_SIZE,
	OPT_UNWIND_MEMORY,
	OPT_ROTATE,
	OPT_KEEP,
	OPT_MAX_DISK,
	OPT_TABLE_CACHE,
	OPT_NO_TABLE_CACHE,
	OPT_OFF_CPU,
	OPT_WALL,
	OPT_PER_THREAD,
	OPT_SLICE,
	OPT_NO_PYTHON,
	OPT_NO_V8,
	OPT_NO_JVM,
	OPT_RUNTIMES,
};

/* --unwind, indexed by OPTS_UNWIND_* */
static const char *const unwind_arg_names[] = { "auto", "fp", "cfi" };

static const struct argp_option argp_options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Profile these processes only", 0 },
	{ "tid", 'L', "TID[,TID...]", 0, "Profile these threads only; counts are kept per thread", 0 },
	{ "per-thread", OPT_PER_THREAD, NULL, 0, "Keep counts per thread (thread id and the thread's name at the sample) for every process, for prof-report --threads", 0 },
	{ "user-stacks-only", 'U', NULL, 0, "Record user stacks only (no kernel stacks)", 0 },
	{ "kernel-stacks-only", 'K', NULL, 0, "Record kernel stacks only (no user stacks)", 0 },
	{ "frequency", 'F', "HZ", 0, "Sample frequency in Hertz (default 49)", 0 },
	{ "count", 'c', "COUNT", 0, "Sample period: one sample every COUNT events (ns of cpu-clock, or cycles)", 0 },
	{ "event", 'e', "EVENT", 0, "cpu-clock (default, as bcc's profile) or cycles (hardware; falls back to cpu-clock where there is no PMU)", 0 },
	{ "include-idle", 'I', NULL, 0, "Include CPU idle stacks (pid 0)", 0 },
	{ "cpu", 'C', "CPU", 0, "Sample this CPU only", 0 },
	{ "stack-storage-size", OPT_STACK_STORAGE, "N", 0, "Unique stack traces that can be stored (default 16384; see prof-record(8))", 0 },
	{ "hash-storage-size", OPT_HASH_STORAGE, "N", 0, "Unique counted keys that can be stored (default 40960)", 0 },
	{ "unwind", OPT_UNWIND, "MODE", 0, "How user stacks are walked: auto (default: the .eh_frame unwind tables prof-record builds for each sampled object, frame pointers where there is none), cfi (tables only), fp (frame pointers only, as bcc's profile)", 0 },
	{ "unwind-memory", OPT_UNWIND_MEMORY, "SIZE", 0, "Kernel memory the unwind tables may take (suffix K, M or G; default 128M, at least 4M): taken as tables are loaded, not before; when it is spent, sampled objects' tables replace unsampled ones, and what did not fit is counted and said", 0 },
	{ "unwind-table-size", OPT_UNWIND_TABLE_SIZE, "ROWS", 0, "Older form of --unwind-memory: the memory ROWS rows of 4 bytes take", 0 },
	{ "table-cache", OPT_TABLE_CACHE, "DIR", 0, "Keep the unwind tables built from .eh_frame in DIR, by build-id, for the next recordings (default /var/cache/bprof/unwind; trimmed to 256 MiB)", 0 },
	{ "no-table-cache", OPT_NO_TABLE_CACHE, NULL, 0, "Build every unwind table, read and write no cache", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Profile tasks under this cgroup v2 directory only", 0 },
	{ "no-kallsyms", OPT_NO_KALLSYMS, NULL, 0, "Do not store a /proc/kallsyms snapshot", 0 },
	{ "full-kallsyms", OPT_FULL_KALLSYMS, NULL, 0, "Store all of /proc/kallsyms (~650 KiB), not only the symbols of sampled kernel addresses", 0 },
	{ "output", 'o', "FILE", 0, "Output file (default prof-HOST-YYYYmmdd-HHMMSS.bprof)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace an existing output file", 0 },
	{ "rotate", OPT_ROTATE, "SECONDS", 0, "Record continuously: one file every SECONDS into the -o directory (default name prof-HOST-YYYYmmdd-HHMMSS), until DURATION, the command's exit or a signal", 0 },
	{ "keep", OPT_KEEP, "N", 0, "With --rotate: keep the newest N files this run wrote, remove older ones (default: keep all)", 0 },
	{ "max-disk", OPT_MAX_DISK, "SIZE", 0, "With --rotate: remove this run's oldest files while its files take more than SIZE bytes (suffix K, M or G; the newest file is always kept)", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0, "Also record the time threads spend blocked (states S, D), in samples of the same period, with their stacks (see prof-record(8))", 0 },
	{ "wall", OPT_WALL, NULL, 0, "As --off-cpu, and the time runnable threads wait for a CPU (state R): each thread's samples add up to its wall time", 0 },
	{ "slice", OPT_SLICE, "MS", 0, "Keep the time slice of MS milliseconds each count fell in, for prof-report --from/--to and --heatmap (MS divides 1000; default 20; 0: no slices)", 0 },
	{ "no-v8", OPT_NO_V8, NULL, 0, "Do not walk V8's JavaScript frames: Node.js processes get native stacks only (by default, with --unwind=auto|cfi, JavaScript frames of a V8 that exports its v8dbg_ symbols are recorded in place of the code that ran them)", 0 },
	{ "runtimes", OPT_RUNTIMES, NULL, 0, "Walk Python, JavaScript (V8) and Java (HotSpot) frames in every process recorded.  By default a recording walks the runtimes it may meet: all of them system-wide, in a cgroup, or when the command is a script or a program that starts others (a shell, env, timeout, make...); only those its program is (or -p's processes are or map) otherwise, which spares the verifier's check of the others at start-up (~20 ms).  Where it only may meet them, their walks are loaded when a process of one is first found", 0 },
	{ "no-jvm", OPT_NO_JVM, NULL, 0, "Do not walk HotSpot's frames: Java processes get native stacks only, which end at the first frame of generated code (by default, with --unwind=auto|cfi, interpreted and compiled Java frames of OpenJDK 11 to 21 are walked and named)", 0 },
	{ "no-python", OPT_NO_PYTHON, NULL, 0, "Do not walk CPython's frames: Python processes get native stacks only (by default, with --unwind=auto|cfi, the frames of CPython 3.11 to 3.13 are recorded in place of the interpreter's evaluation loop)", 0 },
	{ "quiet", 'q', NULL, 0, "No start and status lines (warnings and errors still)", 0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf messages and the recorder's statistics at the end", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* N, NK, NM or NG (binary multiples), at least 1 byte. */
static int parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'K': mult = 1ULL << 10; break;
		case 'M': mult = 1ULL << 20; break;
		case 'G': mult = 1ULL << 30; break;
		default: return -EINVAL;
		}
		if (end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB") && strcmp(end + 1, "b"))
			return -EINVAL;
	}
	if (!v || v > ULLONG_MAX / mult)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

static int parse_id_list(const char *arg, pid_t *ids, int *nr)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		if (*nr >= OPTS_MAX_IDS || parse_long(tok, 1, INT_MAX, &v)) {
			err = -EINVAL;
			break;
		}
		ids[(*nr)++] = v;
	}
	if (!*nr)
		err = -EINVAL;
	free(copy);
	return err;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct env *env = state->input;
	long v = 0; /* argp_usage() exits, but clang cannot tell */

	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'p':
		if (env->nr_tids || parse_id_list(arg, env->pids, &env->nr_pids)) {
			fprintf(stderr, "prof-record: invalid -p '%s' (comma separated pids; not with -L)\n", arg);
			argp_usage(state);
		}
		break;
	case 'L':
		if (env->nr_pids || parse_id_list(arg, env->tids, &env->nr_tids)) {
			fprintf(stderr, "prof-record: invalid -L '%s' (comma separated tids; not with -p)\n", arg);
			argp_usage(state);
		}
		break;
	case 'U':
		if (env->kernel_only) {
			fprintf(stderr, "prof-record: -U and -K are mutually exclusive\n");
			argp_usage(state);
		}
		env->user_only = true;
		break;
	case 'K':
		if (env->user_only) {
			fprintf(stderr, "prof-record: -U and -K are mutually exclusive\n");
			argp_usage(state);
		}
		env->kernel_only = true;
		break;
	case 'F':
		if (env->period || parse_long(arg, 1, 100000, &v)) {
			fprintf(stderr, "prof-record: invalid -F '%s' (1..100000 Hz; not with -c)\n", arg);
			argp_usage(state);
		}
		env->freq = v;
		break;
	case 'c':
		if (env->freq || parse_long(arg, 1, LONG_MAX, &v)) {
			fprintf(stderr, "prof-record: invalid -c '%s' (positive count; not with -F)\n", arg);
			argp_usage(state);
		}
		env->period = v;
		break;
	case 'e':
		if (!strcmp(arg, "cycles") || !strcmp(arg, "cpu-cycles")) {
			env->cycles = true;
		} else if (strcmp(arg, "cpu-clock")) {
			fprintf(stderr, "prof-record: invalid -e '%s' (cpu-clock or cycles)\n", arg);
			argp_usage(state);
		}
		break;
	case 'I':
		env->include_idle = true;
		break;
	case 'C':
		if (parse_long(arg, 0, 65535, &v)) {
			fprintf(stderr, "prof-record: invalid -C '%s'\n", arg);
			argp_usage(state);
		}
		env->cpu = v;
		break;
	case OPT_STACK_STORAGE:
		if (parse_long(arg, 1, 1L << 24, &v)) {
			fprintf(stderr, "prof-record: invalid --stack-storage-size '%s' (1..%ld)\n", arg, 1L << 24);
			argp_usage(state);
		}
		env->stack_storage_size = v;
		break;
	case OPT_HASH_STORAGE:
		if (parse_long(arg, 1, 1L << 24, &v)) {
			fprintf(stderr, "prof-record: invalid --hash-storage-size '%s' (1..%ld)\n", arg, 1L << 24);
			argp_usage(state);
		}
		env->hash_storage_size = v;
		env->hash_storage_given = true;
		break;
	case OPT_TABLE_CACHE:
		if (!*arg) {
			fprintf(stderr, "prof-record: --table-cache needs a directory\n");
			argp_usage(state);
		}
		env->table_cache = arg;
		env->no_table_cache = false;
		break;
	case OPT_NO_TABLE_CACHE:
		env->no_table_cache = true;
		break;
	case OPT_UNWIND:
		for (v = 0; v < 3 && strcmp(arg, unwind_arg_names[v]); v++)
			;
		if (v == 3) {
			fprintf(stderr, "prof-record: invalid --unwind '%s' (auto, cfi or fp)\n", arg);
			argp_usage(state);
		}
		env->unwind = v;
		break;
	case OPT_UNWIND_TABLE_SIZE:
		if (parse_long(arg, 1, 1L << 28, &v)) {
			fprintf(stderr, "prof-record: invalid --unwind-table-size '%s' (1..%ld)\n", arg, 1L << 28);
			argp_usage(state);
		}
		env->unwind_table_size = v;
		break;
	case OPT_UNWIND_MEMORY:
		if (parse_size(arg, &env->unwind_memory) ||
		    env->unwind_memory < OPTS_UNWIND_MEMORY_MIN ||
		    env->unwind_memory > OPTS_UNWIND_MEMORY_MAX) {
			fprintf(stderr, "prof-record: invalid --unwind-memory '%s' (4M..64G)\n", arg);
			argp_usage(state);
		}
		break;
	case OPT_CGROUP:
		env->cgroup = arg;
		break;
	case OPT_FULL_KALLSYMS:
		env->full_kallsyms = true;
		break;
	case OPT_NO_KALLSYMS:
		env->no_kallsyms = true;
		break;
	case OPT_FORCE:
		env->force = true;
		break;
	case 'o':
		if (!*arg) {
			fprintf(stderr, "prof-record: empty -o\n");
			argp_usage(state);
		}
		env->output = arg;
		break;
	case OPT_ROTATE:
		if (parse_long(arg, 1, 7 * 86400, &env->rotate)) {
			fprintf(stderr, "prof-record: invalid --rotate '%s' (seconds, 1 to 604800)\n", arg);
			argp_usage(state);
		}
		break;
	case OPT_SLICE:
		if (parse_long(arg, 0, 1000, &env->slice_ms) || (env->slice_ms && 1000 % env->slice_ms)) {
			fprintf(stderr, "prof-record: invalid --slice '%s' (milliseconds that divide 1000, such as 10, 20, 50 or 100; 0: no slices)\n", arg);
			argp_usage(state);
		}
		break;
	case OPT_KEEP:
		if (parse_long(arg, 1, INT_MAX, &env->keep)) {
			fprintf(stderr, "prof-record: invalid --keep '%s' (a number of files, at least 1)\n", arg);
			argp_usage(state);
		}
		break;
	case OPT_MAX_DISK:
		if (parse_size(arg, &env->max_disk)) {
			fprintf(stderr, "prof-record: invalid --max-disk '%s' (bytes, or a number with K, M or G)\n", arg);
			argp_usage(state);
		}
		break;
	case OPT_NO_V8:
		env->no_v8 = true;
		break;
	case OPT_NO_JVM:
		env->no_jvm = true;
		break;
	case OPT_RUNTIMES:
		env->all_runtimes = true;
		break;
	case OPT_NO_PYTHON:
		env->no_python = true;
		break;
	case OPT_OFF_CPU:
		if (env->off_cpu < 1)
			env->off_cpu = 1;
		break;
	case OPT_WALL:
		env->off_cpu = 2;
		break;
	case OPT_PER_THREAD:
		env->per_thread = true;
		break;
	case 'q':
		env->quiet = true;
		break;
	case 'v':
		env->verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num > 0 || env->command ||
		    parse_long(arg, 1, INT_MAX, &env->duration)) {
			fprintf(stderr, "prof-record: invalid duration '%s' (seconds; not with -- COMMAND)\n", arg);
			argp_usage(state);
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int opts_parse(struct env *env, int argc, char **argv)
{
	static const struct argp argp = {
		.options = argp_options,
		.parser = parse_arg,
		.doc = argp_program_doc,
		.args_doc = "[DURATION | -- COMMAND [ARG...]]",
	};
	int argp_argc = argc;

	*env = (struct env){
		.freq = 0,
		.cpu = -1,
		.stack_storage_size = 16384,
		.hash_storage_size = 40960,
		.slice_ms = OPTS_SLICE_DEFAULT_MS,
	};
	/* "--" starts the command: argp must not see it or what follows. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			argp_argc = i;
			if (i + 1 >= argc) {
				fprintf(stderr, "prof-record: -- needs a COMMAND\n");
				return 2;
			}
			env->command = &argv[i + 1];
			break;
		}
	}
	/* a usage error is exit status 2 (prof-record(8)), argp's own too */
	argp_err_exit_status = 2;
	if (argp_parse(&argp, argp_argc, argv, 0, NULL, env))
		return 2;
	if (env->command && env->duration) {
		fprintf(stderr, "prof-record: give either DURATION or -- COMMAND, not both\n");
		return 2;
	}
	if (env->command && (env->nr_pids || env->nr_tids)) {
		fprintf(stderr, "prof-record: -- COMMAND selects the processes itself; drop -p/-L\n");
		return 2;
	}
	if ((env->keep || env->max_disk) && !env->rotate) {
		fprintf(stderr, "prof-record: --keep and --max-disk bound the files of --rotate; add --rotate=SECONDS\n");
		return 2;
	}
	if (env->rotate && env->duration && env->duration < env->rotate)
		fprintf(stderr, "prof-record: warning: DURATION %ld s is shorter than --rotate=%ld: one file\n",
			env->duration, env->rotate);
	if (!env->freq && !env->period)
		env->freq = 49;
	return 0;
}

char *opts_join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

char *opts_default_output(bool dir)
{
	char host[256] = "localhost", buf[512];
	time_t now = time(NULL);
	struct tm tm;

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	localtime_r(&now, &tm);
	snprintf(buf, sizeof(buf), "prof-%s-%04d%02d%02d-%02d%02d%02d%s", host,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 dir ? "" : ".bprof");
	return strdup(buf);
}

long opts_samples_bound(const struct env *env)
{
	long seconds = env->rotate ? env->rotate : env->command ? 0 : env->duration;
	long cpus = env->cpu >= 0 ? 1 : sysconf(_SC_NPROCESSORS_CONF);
	long bound;

	if (!seconds || env->period || env->freq <= 0 || cpus <= 0)
		return 0;
	/* two seconds for a late stop or a late rotation, then a quarter */
	if (__builtin_mul_overflow(env->freq, seconds + 2, &bound) ||
	    __builtin_mul_overflow(bound, cpus, &bound) || bound > (1L << 40))
		return 0;
	return bound + bound / 4 + 1024;
}
