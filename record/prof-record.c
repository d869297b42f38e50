// SPDX-License-Identifier: Apache-2.0
/*
 * prof-record - sample on-CPU stacks with BPF, count them in the kernel and
 * write the raw tables plus everything needed to symbolize them elsewhere
 * (mappings, build-ids, kernel identity) into one .bprof file.  Never
 * symbolizes on the target.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bprof.h"
#include "kernel.h"
#include "access.h"
#include "manifest.h"
#include "unwinder.h"
#include "profile.h"
#include "profile.skel.h"
#include "unwind.h"

#ifndef BPROF_VERSION
#define BPROF_VERSION "unknown"
#endif

#define MAX_IDS 1024
#define RESCAN_NS 1000000000ULL

struct env {
	pid_t pids[MAX_IDS];
	int nr_pids;
	pid_t tids[MAX_IDS];
	int nr_tids;
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
	int unwind;        /* UNWIND_ARG_* */
	long unwind_table_size; /* rows */
	const char *cgroup;
	const char *output;
	long duration;     /* seconds; 0: until a signal */
	char **command;    /* after "--", NULL-terminated, or NULL */
};

/* Signal state: the only mutable globals.  exiting counts SIGINT/SIGTERM;
 * a second one aborts unless the (atomic) write has already begun. */
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t writing;

static void sig_handler(int sig)
{
	exiting++;
	if (exiting >= 2 && !writing) {
		static const char msg[] = "prof-record: second signal: aborted, no file written\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing to do */
		}
		_exit(128 + sig);
	}
}

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
	"    prof-record -- make -j2      # profile a command and its children\n";

enum {
	OPT_STACK_STORAGE = 0x100,
	OPT_HASH_STORAGE,
	OPT_CGROUP,
	OPT_NO_KALLSYMS,
	OPT_FULL_KALLSYMS,
	OPT_FORCE,
	OPT_UNWIND,
	OPT_UNWIND_TABLE_SIZE,
};

/* --unwind */
enum { UNWIND_ARG_AUTO = 0, UNWIND_ARG_FP, UNWIND_ARG_CFI };
static const char *const unwind_arg_names[] = { "auto", "fp", "cfi" };

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Profile these processes only", 0 },
	{ "tid", 'L', "TID[,TID...]", 0, "Profile these threads only; counts are kept per thread", 0 },
	{ "user-stacks-only", 'U', NULL, 0, "Record user stacks only (no kernel stacks)", 0 },
	{ "kernel-stacks-only", 'K', NULL, 0, "Record kernel stacks only (no user stacks)", 0 },
	{ "frequency", 'F', "HZ", 0, "Sample frequency in Hertz (default 49)", 0 },
	{ "count", 'c', "COUNT", 0, "Sample period: one sample every COUNT events (ns of cpu-clock, or cycles)", 0 },
	{ "event", 'e', "EVENT", 0, "cpu-clock (default, as bcc's profile) or cycles (hardware; falls back to cpu-clock where there is no PMU)", 0 },
	{ "include-idle", 'I', NULL, 0, "Include CPU idle stacks (pid 0)", 0 },
	{ "cpu", 'C', "CPU", 0, "Sample this CPU only", 0 },
	{ "stack-storage-size", OPT_STACK_STORAGE, "N", 0, "Unique stack traces that can be stored (default 16384; a quarter more is kept for hash-collision victims)", 0 },
	{ "hash-storage-size", OPT_HASH_STORAGE, "N", 0, "Unique counted keys that can be stored (default 40960)", 0 },
	{ "unwind", OPT_UNWIND, "MODE", 0, "How user stacks are walked: auto (default: the .eh_frame unwind tables prof-record builds for each sampled object, frame pointers where there is none), cfi (tables only), fp (frame pointers only, as bcc's profile)", 0 },
	{ "unwind-table-size", OPT_UNWIND_TABLE_SIZE, "ROWS", 0, "Unwind table rows that can be loaded, 4 bytes each (default 1048576)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Profile tasks under this cgroup v2 directory only", 0 },
	{ "no-kallsyms", OPT_NO_KALLSYMS, NULL, 0, "Do not store a /proc/kallsyms snapshot", 0 },
	{ "full-kallsyms", OPT_FULL_KALLSYMS, NULL, 0, "Store all of /proc/kallsyms (~650 KiB), not only the symbols of sampled kernel addresses", 0 },
	{ "output", 'o', "FILE", 0, "Output file (default prof-HOST-YYYYmmdd-HHMMSS.bprof)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace an existing output file", 0 },
	{ "quiet", 'q', NULL, 0, "No start and status lines (warnings and errors still)", 0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf messages", 0 },
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

static int parse_id_list(const char *arg, pid_t *ids, int *nr)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		if (*nr >= MAX_IDS || parse_long(tok, 1, INT_MAX, &v)) {
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

static int libbpf_print_verbose(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- checks before recording ------------------------------------------ */

static bool has_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	/* CAP_PERFMON = 38, CAP_BPF = 39 (Linux 5.8) live in the second word */
	return (data[1].effective & (1u << (38 - 32))) && (data[1].effective & (1u << (39 - 32)));
}

/* The bucket count of a stack map of n entries, which bounds its ids. */
static uint32_t stacks2_base(long n)
{
	uint32_t b = 1;

	while (b < (uint64_t)n)
		b <<= 1;
	return b;
}

static int check_output(const char *path, bool force)
{
	char *dir = strdup(path), *slash, tmpl[PATH_MAX];
	struct stat st;
	int fd;

	if (!dir)
		return -ENOMEM;
	if (!force && lstat(path, &st) == 0) {
		fprintf(stderr, "prof-record: %s already exists; choose another -o FILE or pass --force to replace it\n", path);
		free(dir);
		return -EEXIST;
	}
	/* --force replaces a file, never a directory (rename would fail only
	 * after the whole recording) */
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "prof-record: %s is a directory; give a file name with -o\n", path);
		free(dir);
		return -EISDIR;
	}
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	snprintf(tmpl, sizeof(tmpl), "%s/.prof-record-check-XXXXXX", dir);
	fd = mkstemp(tmpl);
	if (fd < 0) {
		fprintf(stderr, "prof-record: cannot write in directory %s: %s; pick a writable -o FILE\n",
			dir, strerror(errno));
		free(dir);
		return -EACCES;
	}
	close(fd);
	unlink(tmpl);
	free(dir);
	return 0;
}

/* Every id names a live task; with -p, a process (not one of its threads). */
static int check_ids(const pid_t *ids, int nr, bool processes)
{
	for (int i = 0; i < nr; i++) {
		char path[64], line[256];
		long tgid = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", ids[i]);
		f = fopen(path, "re");
		if (!f) {
			fprintf(stderr, "prof-record: no such %s %d; check it with ps\n",
				processes ? "process" : "thread", ids[i]);
			return -ESRCH;
		}
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Tgid: %ld", &tgid) == 1)
				break;
		fclose(f);
		if (processes && tgid != ids[i]) {
			fprintf(stderr, "prof-record: %d is a thread of process %ld; use -p %ld, or -L %d for that thread alone\n",
				ids[i], tgid, tgid, ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* The counts hold host pids and the manifest reads /proc/PID of host pids:
 * both need the initial pid namespace (PROC_PID_INIT_INO). */
static bool in_init_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == 0xEFFFFFFCu;
}

/* Parse /sys/devices/system/cpu/online ("0-3,5"). */
static int online_cpus(bool **online, int *nr)
{
	char buf[4096], *s = buf, *end;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	bool *mask = NULL;
	int n = 0;

	*online = NULL;
	*nr = 0;
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	while (*s && *s != '\n') {
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0 || a > 65535)
			goto bad;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b > 65535)
				goto bad;
			s = end;
		}
		if (b + 1 > n) {
			bool *nm = realloc(mask, (b + 1) * sizeof(*mask));

			if (!nm)
				goto bad;
			memset(nm + n, 0, (b + 1 - n) * sizeof(*nm));
			mask = nm;
			n = b + 1;
		}
		for (long i = a; i <= b; i++)
			mask[i] = true;
		if (*s == ',')
			s++;
	}
	*online = mask;
	*nr = n;
	return 0;
bad:
	free(mask);
	return -EINVAL;
}

/* Whether the kernel's BTF has this function (for fexit, or a kfunc). */
static bool btf_has_func(const struct btf *btf, const char *func)
{
	return btf && btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) > 0;
}

/*
 * Whether an fexit program on func loads.  Kernels (or hypervisors,
 * lockdown) that refuse trampolines say so with EPERM only when a program
 * is loaded, and libbpf loads the programs of an object in order: the
 * failing fexit came after the unwinder's sampler, whose verification is
 * most of prof-record's start-up, so the whole object was loaded and
 * verified twice.  Two instructions tell the same, for a fraction of a
 * millisecond.  Only a refusal counts: any other error leaves the decision
 * to the real load.
 */
static bool fexit_refused(const struct btf *btf, const char *func)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int id = btf ? btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) : -1;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT,
		    .attach_btf_id = id > 0 ? (unsigned)id : 0);
	int fd;

	if (id <= 0)
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "bprof_probe", "GPL", insns, 2, &opts);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EPERM || errno == EACCES || errno == ENOTSUP || errno == 524 /* ENOTSUPP */;
}

static int libbpf_print_none(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

/* Optional programs: each makes the manifest more complete but needs what
 * not every kernel has (fexit trampolines; the task_vma iterator kfuncs). */
enum {
	OPT_PROG_MMAP = 1 << 0,  /* fexit/vm_mmap_pgoff */
	OPT_PROG_EXIT = 1 << 1,  /* tp_btf/sched_process_exit + bpf_iter_task_vma */
	OPT_PROG_PREXEC = 1 << 2, /* tp_btf/sched_prepare_exec + bpf_iter_task_vma */
};

static struct profile_bpf *open_one(const struct env *env, unsigned optional, bool cfi, int *err)
{
	struct profile_bpf *obj = profile_bpf__open();

	if (!obj) {
		*err = -errno;
		return NULL;
	}
	obj->rodata->user_stacks = !env->kernel_only;
	obj->rodata->kernel_stacks = !env->user_only;
	obj->rodata->include_idle = env->include_idle;
	obj->rodata->filter_pid = env->nr_pids > 0 || env->command;
	obj->rodata->filter_tid = env->nr_tids > 0;
	obj->rodata->filter_cgroup = env->cgroup != NULL;
	obj->rodata->per_thread = env->nr_tids > 0;
	obj->rodata->follow_children = env->command != NULL;

	bpf_map__set_max_entries(obj->maps.counts, env->hash_storage_size);
	bpf_map__set_max_entries(obj->maps.stacks, env->stack_storage_size);
	/* victims of bucket collisions in "stacks" get a second chance in a
	 * map a quarter its size; their ids start at the power of two that
	 * bounds the ids of "stacks" (its bucket count) */
	bpf_map__set_max_entries(obj->maps.stacks2,
				 env->stack_storage_size / 4 > 1 ? env->stack_storage_size / 4 : 1);
	obj->rodata->stacks2_base = (int32_t)stacks2_base(env->stack_storage_size);
	/* The process-image sets are not the counts table: shrinking
	 * --hash-storage-size (to bound the counts) must not also drop the
	 * notifications that keep the manifest complete. */
	long procs = env->hash_storage_size > 40960 ? env->hash_storage_size : 40960;
	bpf_map__set_max_entries(obj->maps.seen, procs);
	bpf_map__set_max_entries(obj->maps.tracked, procs);
	bpf_map__set_max_entries(obj->maps.exec_gen, procs);
	bpf_map__set_max_entries(obj->maps.pids, env->command ? 65536 : env->nr_pids ? env->nr_pids : 1);
	bpf_map__set_max_entries(obj->maps.tids, env->nr_tids ? env->nr_tids : 1);
	bpf_program__set_autoload(obj->progs.handle_mmap, optional & OPT_PROG_MMAP);
	bpf_program__set_autoload(obj->progs.handle_exit, optional & OPT_PROG_EXIT);
	bpf_program__set_autoload(obj->progs.handle_prepare_exec, optional & OPT_PROG_PREXEC);
	bpf_program__set_autoload(obj->progs.handle_exit_pids, env->command != NULL);
	bpf_program__set_autoload(obj->progs.do_perf_event, !cfi);
	bpf_program__set_autoload(obj->progs.do_perf_event_cfi, cfi);
	obj->rodata->fp_fallback = env->unwind != UNWIND_ARG_CFI;
	if (cfi) {
		bpf_map__set_max_entries(obj->maps.unwind_rows,
					 (env->unwind_table_size + UNWIND_ROWS_PER_CHUNK - 1) / UNWIND_ROWS_PER_CHUNK);
		bpf_map__set_max_entries(obj->maps.ustacks, env->stack_storage_size);
	} else {
		/* frame pointers only: the unwinder's maps stay empty */
		bpf_map__set_max_entries(obj->maps.unwind_procs, 1);
		bpf_map__set_max_entries(obj->maps.unwind_objs, 1);
		bpf_map__set_max_entries(obj->maps.unwind_pages, 1);
		bpf_map__set_max_entries(obj->maps.unwind_rows, 1);
		bpf_map__set_max_entries(obj->maps.unwind_rules, 1);
		bpf_map__set_max_entries(obj->maps.ustacks, 1);
		bpf_map__set_max_entries(obj->maps.remap_asked, 1);
	}

	*err = profile_bpf__load(obj);
	if (*err) {
		profile_bpf__destroy(obj);
		return NULL;
	}
	return obj;
}

/* Load with as many optional programs as this kernel takes; libbpf stays
 * quiet about the attempts that fail unless -v.  *cfi: the table-walking
 * sampler was loaded (--unwind=auto falls back to frame pointers on a
 * kernel that cannot load it). */
static struct profile_bpf *open_and_load(const struct env *env, bool *cfi, int *err)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct profile_bpf *obj = NULL;
	unsigned avail = 0, tries[4];

	if (btf_has_func(btf, "vm_mmap_pgoff") && !fexit_refused(btf, "vm_mmap_pgoff"))
		avail |= OPT_PROG_MMAP;
	if (btf_has_func(btf, "bpf_iter_task_vma_new")) {
		avail |= OPT_PROG_EXIT;
		if (btf && btf__find_by_name_kind(btf, "btf_trace_sched_prepare_exec", BTF_KIND_TYPEDEF) > 0)
			avail |= OPT_PROG_PREXEC;
	}
	btf__free(btf);
	/* drop the riskiest first: fexit needs trampolines */
	tries[0] = avail;
	tries[1] = avail & ~OPT_PROG_MMAP;
	tries[2] = avail & ~(OPT_PROG_MMAP | OPT_PROG_PREXEC);
	tries[3] = 0;
	*cfi = env->unwind != UNWIND_ARG_FP;
	for (size_t i = 0; i < 4 && !obj; i++) {
		if (i && tries[i] == tries[i - 1])
			continue;
		if (!env->verbose)
			libbpf_set_print(i == 3 && env->unwind != UNWIND_ARG_AUTO ? libbpf_print_quiet : libbpf_print_none);
		obj = open_one(env, tries[i], *cfi, err);
		if (!obj && env->verbose)
			fprintf(stderr, "prof-record: loading with optional programs 0x%x%s failed: %s\n",
				tries[i], *cfi ? " and the unwinder" : "", strerror(-*err));
		if (!obj && i == 3 && *cfi && env->unwind == UNWIND_ARG_AUTO) {
			/* the unwinder needs bpf_loop (5.17) and bpf_task_pt_regs */
			fprintf(stderr, "prof-record: this kernel cannot load the stack unwinder (needs Linux 5.17+): user stacks follow frame pointers only (-v says why)\n");
			*cfi = false;
			i = (size_t)-1;
		}
	}
	libbpf_set_print(env->verbose ? libbpf_print_verbose : libbpf_print_quiet);
	return obj;
}

/* ---- sampling ---------------------------------------------------------- */

/* -e cycles: is the hardware event there?  VMs often have no PMU. */
static bool hw_cycles_available(struct perf_event_attr *attr, int cpu)
{
	int fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* One perf event per online CPU (or the -C one), the BPF program attached
 * to each.  *event is the name of the event really used. */
static int open_perf_events(struct profile_bpf *obj, bool cfi, const struct env *env, int *fds,
			    struct bpf_link **links, int nr_cpus, int *opened, const char **event)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = env->period ? (uint64_t)env->period : (uint64_t)env->freq,
		.freq = env->period ? 0 : 1,
	};
	bool *online = NULL;
	int nr_online = 0;

	if (online_cpus(&online, &nr_online)) {
		fprintf(stderr, "prof-record: cannot read the online CPUs from /sys/devices/system/cpu/online\n");
		return -EINVAL;
	}
	*event = "cpu-clock";
	if (env->cycles) {
		int first = env->cpu;

		for (int c = 0; first < 0 && c < nr_online; c++)
			if (online[c])
				first = c;
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		if (hw_cycles_available(&attr, first < 0 ? 0 : first)) {
			*event = "cycles";
		} else {
			fprintf(stderr, "prof-record: the hardware cycles event is not available here (%s; no PMU, as in most VMs): sampling on cpu-clock instead%s\n",
				strerror(errno), env->period ? " (-c counts ns now)" : "");
			attr.type = PERF_TYPE_SOFTWARE;
			attr.config = PERF_COUNT_SW_CPU_CLOCK;
		}
	}
	*opened = 0;
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		if (env->cpu >= 0 && cpu != env->cpu)
			continue;
		if (cpu >= nr_online || !online[cpu])
			continue;
		fds[cpu] = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[cpu] < 0) {
			int e = errno;

			if (e == ENODEV)
				continue; /* went offline meanwhile */
			fprintf(stderr, "prof-record: perf_event_open(%s, cpu %d): %s; %s\n", *event, cpu,
				strerror(e),
				e == ENOENT || e == EOPNOTSUPP ?
					"this kernel lacks the event (CONFIG_PERF_EVENTS)" :
				e == EACCES || e == EPERM ?
					"run as root or grant CAP_PERFMON (and check kernel.perf_event_paranoid)" :
				e == EMFILE ? "raise the open files limit (ulimit -n)" :
					"cannot sample here");
			free(online);
			return -e;
		}
		links[cpu] = bpf_program__attach_perf_event(cfi ? obj->progs.do_perf_event_cfi :
								      obj->progs.do_perf_event, fds[cpu]);
		if (!links[cpu]) {
			int e = errno;

			fprintf(stderr, "prof-record: cannot attach the BPF program to cpu %d: %s\n", cpu,
				strerror(e));
			free(online);
			return -e;
		}
		(*opened)++;
	}
	free(online);
	if (!*opened) {
		fprintf(stderr, "prof-record: no CPU to sample%s\n",
			env->cpu >= 0 ? ": the -C CPU is not online" : "");
		return -ENODEV;
	}
	return 0;
}

struct poll_ctx {
	struct manifest *man;
	int err;
	uint64_t events;
};

static int handle_event(void *ctx, void *data, size_t size)
{
	struct poll_ctx *pc = ctx;
	const struct profile_event *e = data;
	int err;

	if (size < sizeof(__u32))
		return 0;
	pc->events++;
	if (e->type == PROFILE_EV_VMA) {
		const struct profile_vma_event *v = data;

		if (size < sizeof(*v))
			return 0;
		err = manifest_vma(pc->man, v->pid, v->exec_id, v->start, v->end, v->offset,
				   makedev(v->dev >> 20, v->dev & 0xfffff), v->ino, v->mtime_ns,
				   v->flags, v->name);
	} else if (e->type == PROFILE_EV_MMAP)
		err = manifest_mark(pc->man, e->pid, e->exec_id);
	else
		err = manifest_event(pc->man, e->pid, e->exec_id, e->ns_pid, e->ppid, e->parent_exec_id,
			     e->comm, true);
	if (err && !pc->err)
		pc->err = err;
	return 0;
}

/* Start COMMAND stopped on a pipe so its pid can go into the filter before
 * it runs a single instruction of its own. */
static pid_t spawn_command(char **argv, int *release_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "prof-record: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*release_fd = p[1];
	return pid;
}

/* ---- dumping the tables ------------------------------------------------- */

static int cmp_s32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

struct dump_totals {
	uint64_t samples;
	uint64_t processes;
};

static int dump_counts(struct profile_bpf *obj, struct bprof_recording *rec,
		       struct manifest *man, struct dump_totals *tot)
{
	int fd = bpf_map__fd(obj->maps.counts), sfd = bpf_map__fd(obj->maps.stacks);
	int sfd2 = bpf_map__fd(obj->maps.stacks2), ufd = bpf_map__fd(obj->maps.ustacks);
	struct profile_ustack *us = malloc(sizeof(*us));
	int32_t base2 = obj->rodata->stacks2_base;
	struct profile_key key, next, *prev = NULL;
	int32_t *ids = NULL;
	size_t nr_ids = 0, cap_ids = 0;
	uint32_t *pids = NULL;
	size_t nr_pids = 0, cap_pids = 0;
	uint64_t ips[PROFILE_MAX_STACK_DEPTH];
	int err = 0;

	if (!us)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct bprof_count c = {0};
		uint64_t val;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		c.pid = key.pid;
		c.tid = key.tid;
		c.exec_id = key.exec_id;
		c.user_stack_id = key.user_stack_id;
		c.kernel_stack_id = key.kernel_stack_id;
		c.kernel_ip = key.kernel_ip;
		c.count = val;
		memcpy(c.comm, key.comm, BPROF_COMM_LEN);
		c.comm[BPROF_COMM_LEN - 1] = 0;
		if (bprof_recording_add_count(rec, &c))
			goto nomem;
		tot->samples += val;
		if (nr_ids + 2 > cap_ids) {
			size_t nc = cap_ids ? cap_ids * 2 : 4096;
			void *n = realloc(ids, nc * sizeof(*ids));

			if (!n)
				goto nomem;
			ids = n;
			cap_ids = nc;
		}
		if (key.user_stack_id >= 0)
			ids[nr_ids++] = key.user_stack_id;
		if (key.kernel_stack_id >= 0)
			ids[nr_ids++] = key.kernel_stack_id;
		if (nr_pids == cap_pids) {
			size_t nc = cap_pids ? cap_pids * 2 : 1024;
			void *n = realloc(pids, nc * sizeof(*pids));

			if (!n)
				goto nomem;
			pids = n;
			cap_pids = nc;
		}
		pids[nr_pids++] = key.pid;
		/* -K: no user stack, no mappings to keep */
		if (key.pid && key.user_stack_id != PROFILE_STACK_NONE &&
		    manifest_want(man, key.pid, key.exec_id, key.comm,
					     key.user_stack_id >= 0))
			goto nomem;
	}
	if (nr_pids)
		qsort(pids, nr_pids, sizeof(*pids), cmp_s32);
	for (size_t i = 0; i < nr_pids; i++)
		if (pids[i] && (i == 0 || pids[i] != pids[i - 1]))
			tot->processes++;
	if (nr_ids)
		qsort(ids, nr_ids, sizeof(*ids), cmp_s32);
	for (size_t i = 0; i < nr_ids; i++) {
		struct bprof_stack s = {0};
		uint32_t n = 0;

		if (i && ids[i] == ids[i - 1])
			continue;
		memset(ips, 0, sizeof(ips));
		/* ids from the second-chance map are offset by base2; stacks
		 * walked by the unwinder have ids of their own */
		int32_t local = ids[i] >= base2 ? ids[i] - base2 : ids[i];
		int lerr;
		uint32_t flags = 0;

		if (ids[i] >= PROFILE_CFI_STACK_BASE) {
			lerr = bpf_map_lookup_elem(ufd, &ids[i], us);
			if (!lerr) {
				n = us->nr < PROFILE_MAX_STACK_DEPTH ? us->nr : PROFILE_MAX_STACK_DEPTH;
				memcpy(ips, us->ips, n * sizeof(*ips));
				flags = us->flags;
			}
		} else {
			lerr = bpf_map_lookup_elem(ids[i] >= base2 ? sfd2 : sfd, &local, ips);
			while (!lerr && n < PROFILE_MAX_STACK_DEPTH && ips[n])
				n++;
		}
		if (lerr) {
			/* Not expected (ids are never deleted), but a count must
			 * never point at a stack the file lacks: the writer would
			 * refuse the whole recording.  Mark those stacks lost. */
			for (uint64_t c = 0; c < rec->nr_counts; c++) {
				if (rec->counts[c].user_stack_id == ids[i])
					rec->counts[c].user_stack_id = -ENOENT;
				if (rec->counts[c].kernel_stack_id == ids[i])
					rec->counts[c].kernel_stack_id = -ENOENT;
			}
			rec->losses.other++;
			continue;
		}
		/* PROFILE_USTACK_* are the format's stack flags, bit for bit */
		_Static_assert(PROFILE_USTACK_LEAF_CFI == BPROF_USTACK_LEAF_EXACT &&
				       PROFILE_USTACK_COMPLETE == BPROF_USTACK_COMPLETE &&
				       PROFILE_USTACK_TRUNCATED == BPROF_USTACK_TRUNCATED &&
				       PROFILE_USTACK_FALLBACK == BPROF_USTACK_FALLBACK,
			       "stack flags differ");
		s.flags = ids[i] >= PROFILE_CFI_STACK_BASE ? flags & BPROF_USTACK_FLAGS_ALL : 0;
		s.id = ids[i];
		s.nr_ips = n;
		s.ips = malloc(n * sizeof(*s.ips) + 1);
		if (!s.ips)
			goto nomem;
		memcpy(s.ips, ips, n * sizeof(*s.ips));
		if (bprof_recording_add_stack(rec, &s)) {
			free(s.ips);
			goto nomem;
		}
	}
	goto out;
nomem:
	err = -ENOMEM;
out:
	free(us);
	free(ids);
	free(pids);
	return err;
}

static void dump_losses(struct profile_bpf *obj, struct bprof_losses *l, int nr_cpus)
{
	int fd = bpf_map__fd(obj->maps.losses);
	uint64_t sum[PROFILE_LOSS_MAX] = {0};
	uint64_t *vals = calloc(nr_cpus, sizeof(*vals));

	if (!vals)
		return;
	for (uint32_t i = 0; i < PROFILE_LOSS_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < nr_cpus; c++)
			sum[i] += vals[c];
	}
	free(vals);
	l->user_stack_enomem = sum[PROFILE_LOSS_USER_ENOMEM];
	l->user_stack_eexist = sum[PROFILE_LOSS_USER_EEXIST];
	l->kernel_stack_enomem = sum[PROFILE_LOSS_KERNEL_ENOMEM];
	l->kernel_stack_eexist = sum[PROFILE_LOSS_KERNEL_EEXIST];
	l->counts_full = sum[PROFILE_LOSS_COUNTS_FULL];
	l->events_lost = sum[PROFILE_LOSS_EVENTS];
	l->other = sum[PROFILE_LOSS_OTHER];
}

/* Sum the unwinder's per-CPU counters (enum unwind_stat). */
static void dump_unwind_stats(struct profile_bpf *obj, uint64_t *sum, int nr_cpus)
{
	int fd = bpf_map__fd(obj->maps.unwind_stats);
	uint64_t *vals = calloc(nr_cpus, sizeof(*vals));

	memset(sum, 0, UNWIND_STAT_MAX * sizeof(*sum));
	if (!vals)
		return;
	for (uint32_t i = 0; i < UNWIND_STAT_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < nr_cpus; c++)
			sum[i] += vals[c];
	}
	free(vals);
}

/*
 * The UNWIND section (SPEC.md 6.9): the mode asked for, whether the
 * unwinder really ran, its counters and the tables' statistics; and the
 * samples walked before their tables arrived, as a loss counter.
 */
static void fill_unwind(struct bprof_recording *rec, struct profile_bpf *obj,
			const struct env *env, bool cfi, const struct unwinder *unw, int nr_cpus)
{
	static const uint8_t from_bpf[UNWIND_STAT_MAX] = {
		[UNWIND_STAT_SAMPLES] = BPROF_UNW_SAMPLES,
		[UNWIND_STAT_SAMPLES_COMPLETE] = BPROF_UNW_SAMPLES_COMPLETE,
		[UNWIND_STAT_SAMPLES_TRUNCATED] = BPROF_UNW_SAMPLES_TRUNCATED,
		[UNWIND_STAT_SAMPLES_FP_ONLY] = BPROF_UNW_SAMPLES_NO_IMAGE_TABLE,
		[UNWIND_STAT_SAMPLES_PENDING] = BPROF_UNW_SAMPLES_TABLE_PENDING,
		[UNWIND_STAT_FRAMES_CFI] = BPROF_UNW_FRAMES_TABLE,
		[UNWIND_STAT_FRAMES_FP] = BPROF_UNW_FRAMES_FP,
		[UNWIND_STAT_FP_NO_MAPPING] = BPROF_UNW_FALLBACK_NO_MAPPING,
		[UNWIND_STAT_FP_NO_TABLE] = BPROF_UNW_FALLBACK_NO_TABLE,
		[UNWIND_STAT_FP_PENDING] = BPROF_UNW_FALLBACK_PENDING,
		[UNWIND_STAT_FP_NO_ROW] = BPROF_UNW_FALLBACK_NO_ROW,
		[UNWIND_STAT_STOP_INVALID] = BPROF_UNW_STOP_INVALID,
		[UNWIND_STAT_STOP_READ] = BPROF_UNW_STOP_UNREADABLE,
		[UNWIND_STAT_STOP_BAD_FRAME] = BPROF_UNW_STOP_BAD_FRAME,
		[UNWIND_STAT_STOP_NEEDS_REGS] = BPROF_UNW_STOP_NEEDS_REGISTERS,
	};
	struct bprof_unwind *u = &rec->unwind;
	uint64_t sum[UNWIND_STAT_MAX];

	u->mode = env->unwind == UNWIND_ARG_FP	? BPROF_UNWIND_FP :
		  env->unwind == UNWIND_ARG_CFI ? BPROF_UNWIND_CFI :
						  BPROF_UNWIND_AUTO;
	if (!cfi || !unw)
		return;
	u->flags = BPROF_UNWIND_WALKED;
	dump_unwind_stats(obj, sum, nr_cpus);
	for (int i = 0; i < UNWIND_STAT_MAX; i++)
		u->counters[from_bpf[i]] = sum[i];
	/* the two are exclusive: without an image table no object is found */
	rec->losses.user_stack_before_table = sum[UNWIND_STAT_SAMPLES_FP_ONLY] +
					      sum[UNWIND_STAT_SAMPLES_PENDING];

	struct unwinder_stats us;

	unwinder_stats(unw, &us);
	u->counters[BPROF_UNW_OBJECTS_LOADED] = us.objects_loaded;
	u->counters[BPROF_UNW_OBJECTS_SHARED] = us.objects_shared;
	u->counters[BPROF_UNW_OBJECTS_NO_TABLE] = us.objects_no_table;
	u->counters[BPROF_UNW_OBJECTS_FAILED] = us.objects_failed;
	u->counters[BPROF_UNW_TABLE_ROWS] = us.rows;
	u->counters[BPROF_UNW_TABLE_RULES] = us.rules;
	u->counters[BPROF_UNW_TABLE_PAGES] = us.pages;
	u->counters[BPROF_UNW_IMAGES] = us.images;
	u->counters[BPROF_UNW_IMAGE_FAILURES] = us.image_failures;
	u->counters[BPROF_UNW_TABLE_BYTES] = us.bytes;
	u->counters[BPROF_UNW_BUILD_NS] = us.build_ns;
	u->counters[BPROF_UNW_LOAD_NS] = us.load_ns;
}

static char *join_args(int argc, char **argv)
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

static char *default_output(void)
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
	snprintf(buf, sizeof(buf), "prof-%s-%04d%02d%02d-%02d%02d%02d.bprof", host,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return strdup(buf);
}

/* "PID [2040, 1316151]" as bcc prints it; "..." when it does not fit */
static void list_ids(char *buf, size_t len, const char *what, const pid_t *ids, int nr)
{
	size_t o = snprintf(buf, len, "%s [", what);

	for (int i = 0; i < nr && o < len; i++) {
		if (o + 16 >= len) {
			o += snprintf(buf + o, len - o, "...");
			break;
		}
		o += snprintf(buf + o, len - o, "%s%d", i ? ", " : "", ids[i]);
	}
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

static void print_header(const struct env *env)
{
	char who[256];
	const char *stack = env->user_only ? "user" : env->kernel_only ? "kernel" : "user + kernel";

	if (env->command)
		snprintf(who, sizeof(who), "command %s and its children", env->command[0]);
	else if (env->nr_pids == 1)
		snprintf(who, sizeof(who), "PID %d", env->pids[0]);
	else if (env->nr_pids > 1)
		list_ids(who, sizeof(who), "PID", env->pids, env->nr_pids);
	else if (env->nr_tids == 1)
		snprintf(who, sizeof(who), "TID %d", env->tids[0]);
	else if (env->nr_tids > 1)
		list_ids(who, sizeof(who), "TID", env->tids, env->nr_tids);
	else
		snprintf(who, sizeof(who), "all threads");
	if (env->period)
		fprintf(stderr, "Sampling every %ld events of %s by %s stack", env->period, who, stack);
	else
		fprintf(stderr, "Sampling at %ld Hertz of %s by %s stack", env->freq, who, stack);
	if (env->cpu >= 0)
		fprintf(stderr, " on CPU#%d", env->cpu);
	if (env->duration)
		fprintf(stderr, " for %ld secs.\n", env->duration);
	else if (env->command)
		fprintf(stderr, " until it exits.\n");
	else
		fprintf(stderr, "... Hit Ctrl-C to end.\n");
}

static void human_size(uint64_t n, char *buf, size_t len)
{
	if (n >= 10 << 20)
		snprintf(buf, len, "%.1f MiB", n / 1048576.0);
	else if (n >= 10 << 10)
		snprintf(buf, len, "%.1f KiB", n / 1024.0);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
}

/* The scheduler tracepoints (and optional hooks) that keep the manifest
 * complete.  Not profile_bpf__attach(): the perf_event program is attached
 * per CPU by open_perf_events(); the skeleton destroys these links. */
static int attach_tracers(struct profile_bpf *obj, const struct env *env)
{
	obj->links.handle_fork = bpf_program__attach(obj->progs.handle_fork);
	obj->links.handle_exec = obj->links.handle_fork ? bpf_program__attach(obj->progs.handle_exec) : NULL;
	if (!obj->links.handle_exec) {
		fprintf(stderr, "prof-record: cannot attach to sched_process_fork/exec: %s\n", strerror(errno));
		return -1;
	}
	if (env->command) {
		obj->links.handle_exit_pids = bpf_program__attach(obj->progs.handle_exit_pids);
		if (!obj->links.handle_exit_pids)
			fprintf(stderr, "prof-record: warning: cannot trace sched_process_exit (%s): a command forking over 65536 processes loses the later ones\n",
				strerror(errno));
	}
	if (bpf_program__autoload(obj->progs.handle_exit)) {
		obj->links.handle_exit = bpf_program__attach(obj->progs.handle_exit);
		if (!obj->links.handle_exit && env->verbose)
			fprintf(stderr, "prof-record: cannot trace sched_process_exit (%s)\n", strerror(errno));
	}
	if (bpf_program__autoload(obj->progs.handle_prepare_exec)) {
		obj->links.handle_prepare_exec = bpf_program__attach(obj->progs.handle_prepare_exec);
		if (!obj->links.handle_prepare_exec && env->verbose)
			fprintf(stderr, "prof-record: cannot trace sched_prepare_exec (%s)\n", strerror(errno));
	}
	if (bpf_program__autoload(obj->progs.handle_mmap)) {
		obj->links.handle_mmap = bpf_program__attach(obj->progs.handle_mmap);
		if (!obj->links.handle_mmap && env->verbose)
			fprintf(stderr, "prof-record: cannot trace vm_mmap_pgoff (%s): libraries mapped by short-lived processes may be missed\n",
				strerror(errno));
	}
	return 0;
}

/* Takes ownership of *options. */
static int fill_meta(struct bprof_meta *meta, const struct env *env, char **options,
		     const char *event, uint64_t start_real, uint64_t duration, int nr_sampled)
{
	struct utsname u;
	char host[256] = "";

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	meta->hostname = strdup(host);
	meta->kernel_release = strdup(u.release);
	meta->arch = strdup(u.machine);
	meta->recorder_version = strdup("prof-record " BPROF_VERSION);
	meta->options = *options;
	*options = NULL;
	meta->event = strdup(event);
	meta->start_time_ns = start_real;
	meta->duration_ns = duration;
	meta->sample_freq = env->period ? 0 : env->freq;
	meta->sample_period = env->period;
	meta->ncpus = nr_sampled;
	meta->flags = (env->kernel_only ? 0 : BPROF_META_USER_STACKS) |
		      (env->user_only ? 0 : BPROF_META_KERNEL_STACKS) |
		      (env->include_idle ? BPROF_META_INCLUDE_IDLE : 0) |
		      (env->nr_tids ? BPROF_META_PER_THREAD : 0);
	if (!meta->hostname || !meta->kernel_release || !meta->arch || !meta->recorder_version ||
	    !meta->event)
		return -ENOMEM;
	return 0;
}

/* ---- the unwinder's tables ------------------------------------------- */

static void obs_object(void *ctx, uint32_t idx, Elf *elf, const struct bprof_object *o)
{
	unwinder_object(ctx, idx, elf, o);
}

static void obs_image(void *ctx, uint32_t pid, uint32_t exec_id,
		      const struct manifest_mapping *maps, uint32_t nr)
{
	unwinder_image(ctx, pid, exec_id, maps, nr);
}

static void obs_image_gone(void *ctx, uint32_t pid, uint32_t exec_id)
{
	unwinder_image_gone(ctx, pid, exec_id);
}

/* Let the manifest feed the unwinder what it learns: objects and their
 * ELF as it opens them, images' mappings as they change. */
static int start_unwinder(struct profile_bpf *obj, struct manifest *man, struct unwinder **out)
{
	struct unwinder_maps um = {
		.procs_fd = bpf_map__fd(obj->maps.unwind_procs),
		.objs_fd = bpf_map__fd(obj->maps.unwind_objs),
		.pages_fd = bpf_map__fd(obj->maps.unwind_pages),
		.rows_fd = bpf_map__fd(obj->maps.unwind_rows),
		.rules_fd = bpf_map__fd(obj->maps.unwind_rules),
		.objs_cap = bpf_map__max_entries(obj->maps.unwind_objs),
		.row_chunks = bpf_map__max_entries(obj->maps.unwind_rows),
		.rules_cap = bpf_map__max_entries(obj->maps.unwind_rules),
		.pages_cap = bpf_map__max_entries(obj->maps.unwind_pages),
		.procs_cap = bpf_map__max_entries(obj->maps.unwind_procs),
	};
	int err = unwinder_create(out, &um);

	if (err) {
		fprintf(stderr, "prof-record: cannot map the unwind tables: %s\n", strerror(-err));
		return err;
	}
	struct manifest_observer obs = {
		.ctx = *out,
		.object = obs_object,
		.image = obs_image,
		.image_gone = obs_image_gone,
	};
	manifest_set_observer(man, &obs);
	return 0;
}

/* The end-of-run line (unless -q) and the warnings (always). */
static void print_status(const struct env *env, const struct bprof_recording *rec,
			 const struct dump_totals *tot, const struct manifest_stats *mst,
			 uint64_t events, const char *output)
{
	const struct bprof_losses *l = &rec->losses;
	uint64_t stack_lost = l->user_stack_enomem + l->user_stack_eexist +
			      l->kernel_stack_enomem + l->kernel_stack_eexist;
	char sizebuf[32];
	struct stat st;

	if (!env->quiet) {
		uint64_t lost = stack_lost + l->counts_full + l->events_lost + l->manifest_lost +
				l->other;

		human_size(stat(output, &st) == 0 ? (uint64_t)st.st_size : 0, sizebuf, sizeof(sizebuf));
		fprintf(stderr, "prof-record: %llu samples, %llu processes, %llu stacks, %llu lost; wrote %s (%s)\n",
			(unsigned long long)tot->samples, (unsigned long long)tot->processes,
			(unsigned long long)rec->nr_stacks, (unsigned long long)lost, output, sizebuf);
		if (env->verbose)
			fprintf(stderr, "prof-record: %llu events, %llu snapshots, %llu failed, %llu objects opened, %llu from parent, %llu mappings at exit\n",
				(unsigned long long)events, (unsigned long long)mst->snapshots,
				(unsigned long long)mst->failed, (unsigned long long)mst->objects_opened,
				(unsigned long long)mst->from_parent, (unsigned long long)mst->from_exit);
	}
	if (stack_lost)
		fprintf(stderr, "WARNING: %llu stack traces could not be recorded; consider --stack-storage-size %ld\n",
			(unsigned long long)stack_lost,
			env->stack_storage_size * 4 > (1L << 24) ? (1L << 24) : env->stack_storage_size * 4);
	if (l->counts_full)
		fprintf(stderr, "WARNING: %llu samples were dropped (counts table full); consider --hash-storage-size %ld\n",
			(unsigned long long)l->counts_full,
			env->hash_storage_size * 4 > (1L << 24) ? (1L << 24) : env->hash_storage_size * 4);
	if (l->manifest_lost || l->events_lost)
		fprintf(stderr, "WARNING: mappings of %llu process images could not be read (%llu notifications dropped); their user frames may stay unsymbolized\n",
			(unsigned long long)l->manifest_lost, (unsigned long long)l->events_lost);
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = argp_program_doc,
		.args_doc = "[DURATION | -- COMMAND [ARG...]]",
	};
	struct env env = {
		.freq = 0,
		.cpu = -1,
		.stack_storage_size = 16384,
		.hash_storage_size = 40960,
		.unwind_table_size = 1048576,
	};
	struct profile_bpf *obj = NULL;
	struct ring_buffer *rb = NULL;
	struct manifest *man = NULL;
	struct unwinder *unw = NULL;
	struct bprof_recording *rec = NULL;
	struct bpf_link **links = NULL;
	struct poll_ctx pc = {0};
	struct dump_totals tot = {0};
	struct manifest_stats mst;
	struct bprof_error berr = {0};
	struct bprof_write_opts wopts = { .sz = sizeof(wopts) };
	struct sigaction sa = { .sa_handler = sig_handler };
	char *output = NULL, *options = NULL;
	const char *event = "cpu-clock";
	int *fds = NULL, nr_cpus = 0, nr_sampled = 0, release_fd = -1, err = 0, argp_argc = argc;
	int cgroup_fd = -1, exit_code = 1, status = 0;
	struct bprof_access acc = {0};
	pid_t child = 0;
	bool child_done = false, hidden = false, cfi = false;
	uint64_t start_mono, start_real, stop_mono, last_rescan;

	/* "--" starts the command: argp must not see it or what follows. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			argp_argc = i;
			if (i + 1 >= argc) {
				fprintf(stderr, "prof-record: -- needs a COMMAND\n");
				return 2;
			}
			env.command = &argv[i + 1];
			break;
		}
	}
	err = argp_parse(&argp, argp_argc, argv, 0, NULL, &env);
	if (err)
		return 2;
	if (env.command && env.duration) {
		fprintf(stderr, "prof-record: give either DURATION or -- COMMAND, not both\n");
		return 2;
	}
	if (env.command && (env.nr_pids || env.nr_tids)) {
		fprintf(stderr, "prof-record: -- COMMAND selects the processes itself; drop -p/-L\n");
		return 2;
	}
	if (!env.freq && !env.period)
		env.freq = 49;
	options = join_args(argc, argv);
	output = env.output ? strdup(env.output) : default_output();
	if (!options || !output) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}

	/* Everything that can be checked is checked before recording. */
	if (!has_caps()) {
		fprintf(stderr, "prof-record: needs root, or CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep on a copy of prof-record); run it with sudo\n");
		goto cleanup;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "prof-record: this kernel has no BTF (/sys/kernel/btf/vmlinux): needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (5.8 or later)\n");
		goto cleanup;
	}
	if (check_output(output, env.force))
		goto cleanup;
	if (!in_init_pidns()) {
		fprintf(stderr, "prof-record: runs in a child pid namespace (a container?); run it in the host's (e.g. docker run --pid=host, or nsenter -t 1 -p)\n");
		goto cleanup;
	}
	if (check_ids(env.pids, env.nr_pids, true) || check_ids(env.tids, env.nr_tids, false))
		goto cleanup;
	/* What this recorder may read decides what the file can name: say
	 * before sampling what it will lack (access.h). */
	access_probe(&acc);
	if (access_check(&acc, env.pids, env.nr_pids,
			 !env.nr_pids && !env.nr_tids && !env.cgroup && !env.command,
			 !env.kernel_only, !env.user_only))
		goto cleanup;
	if (env.cgroup) {
		cgroup_fd = open(env.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgroup_fd < 0) {
			fprintf(stderr, "prof-record: cannot open cgroup %s: %s; give a cgroup v2 directory such as /sys/fs/cgroup/system.slice\n",
				env.cgroup, strerror(errno));
			goto cleanup;
		}
	}
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0) {
		fprintf(stderr, "prof-record: cannot count the possible CPUs\n");
		goto cleanup;
	}
	if (env.cpu >= nr_cpus) {
		fprintf(stderr, "prof-record: no CPU %d (this machine has %d)\n", env.cpu, nr_cpus);
		goto cleanup;
	}
	fds = malloc(nr_cpus * sizeof(*fds));
	links = calloc(nr_cpus, sizeof(*links));
	if (!fds || !links) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	for (int i = 0; i < nr_cpus; i++)
		fds[i] = -1;

	libbpf_set_print(env.verbose ? libbpf_print_verbose : libbpf_print_quiet);

	obj = open_and_load(&env, &cfi, &err);
	if (!obj) {
		fprintf(stderr, "prof-record: cannot load the BPF program: %s; needs Linux 5.8+ with BPF, BTF and CONFIG_BPF_EVENTS (run with -v for libbpf's log)\n",
			strerror(-err));
		goto cleanup;
	}
	for (int i = 0; i < env.nr_pids; i++) {
		uint32_t k = env.pids[i];
		uint8_t one = 1;

		bpf_map_update_elem(bpf_map__fd(obj->maps.pids), &k, &one, BPF_ANY);
	}
	for (int i = 0; i < env.nr_tids; i++) {
		uint32_t k = env.tids[i];
		uint8_t one = 1;

		bpf_map_update_elem(bpf_map__fd(obj->maps.tids), &k, &one, BPF_ANY);
	}
	if (cgroup_fd >= 0) {
		uint32_t zero = 0;

		if (bpf_map_update_elem(bpf_map__fd(obj->maps.cgroup_map), &zero, &cgroup_fd, BPF_ANY)) {
			fprintf(stderr, "prof-record: cannot use cgroup %s: %s; it must be a cgroup v2 directory\n",
				env.cgroup, strerror(errno));
			goto cleanup;
		}
	}

	start_mono = mono_ns();
	err = manifest_new(&man, bpf_map__fd(obj->maps.exec_gen), start_mono);
	if (!err)
		err = bprof_recording_create(&rec);
	if (err) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	if (cfi && start_unwinder(obj, man, &unw))
		goto cleanup;
	pc.man = man;
	rb = ring_buffer__new(bpf_map__fd(obj->maps.events), handle_event, &pc, NULL);
	if (!rb) {
		fprintf(stderr, "prof-record: cannot create the ring buffer: %s\n", strerror(errno));
		goto cleanup;
	}

	if (attach_tracers(obj, &env))
		goto cleanup;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (env.command) {
		uint8_t one = 1;
		uint32_t k;

		child = spawn_command(env.command, &release_fd);
		if (child < 0) {
			fprintf(stderr, "prof-record: cannot fork: %s\n", strerror(-child));
			child = 0;
			goto cleanup;
		}
		k = child;
		bpf_map_update_elem(bpf_map__fd(obj->maps.pids), &k, &one, BPF_ANY);
		bpf_map_update_elem(bpf_map__fd(obj->maps.tracked), &k, &one, BPF_ANY);
	}

	if (open_perf_events(obj, cfi, &env, fds, links, nr_cpus, &nr_sampled, &event))
		goto cleanup;

	if (!env.quiet)
		print_header(&env);
	start_mono = mono_ns();
	start_real = real_ns();
	last_rescan = start_mono;
	if (release_fd >= 0) {
		if (write(release_fd, "g", 1) != 1) {
			fprintf(stderr, "prof-record: cannot start %s\n", env.command[0]);
			goto cleanup;
		}
		close(release_fd);
		release_fd = -1;
	}

	/* The recording: events are rare (one per new process image). */
	while (!exiting) {
		uint64_t now;

		err = ring_buffer__poll(rb, 100);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "prof-record: ring buffer: %s\n", strerror(-err));
			goto cleanup;
		}
		if (pc.err || manifest_flush(man)) {
			fprintf(stderr, "prof-record: out of memory\n");
			goto cleanup;
		}
		now = mono_ns();
		if (now - last_rescan >= RESCAN_NS) {
			if (manifest_rescan(man)) {
				fprintf(stderr, "prof-record: out of memory\n");
				goto cleanup;
			}
			last_rescan = now;
		}
		if (env.duration && now - start_mono >= (uint64_t)env.duration * 1000000000ULL)
			break;
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child_done = true;
			break;
		}
	}
	if (child && exiting && !child_done)
		kill(child, SIGTERM); /* a signal to us ends the command too */

	/* Stop sampling, then drain what the kernel already queued. */
	for (int i = 0; i < nr_cpus; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	stop_mono = mono_ns();
	ring_buffer__consume(rb);
	if (pc.err || manifest_flush(man) || manifest_rescan(man)) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}

	if (dump_counts(obj, rec, man, &tot)) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	dump_losses(obj, &rec->losses, nr_cpus);
	if (!env.kernel_only)
		fill_unwind(rec, obj, &env, cfi, unw, nr_cpus);
	if (manifest_emit(man, rec, &rec->losses.manifest_lost) ||
	    kernel_collect(&rec->kernel, !env.no_kallsyms, &hidden) ||
	    (!env.full_kallsyms && kernel_prune_ksyms(&rec->kernel, rec))) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	/* access_check() said so before sampling unless it changed since */
	if (hidden && (acc.flags & BPROF_ACCESS_KALLSYMS))
		fprintf(stderr, "prof-record: kernel addresses are hidden (kernel.kptr_restrict); no kallsyms snapshot, kernel frames may stay unsymbolized\n");
	if (hidden)
		acc.flags &= ~BPROF_ACCESS_KALLSYMS;
	manifest_stats(man, &mst);
	acc.counters[BPROF_ACC_OBJECTS_BY_PATH] = mst.objects_by_path;
	acc.counters[BPROF_ACC_OBJECTS_UNVERIFIED] = mst.objects_unverified;
	acc.counters[BPROF_ACC_OBJECTS_DENIED] = mst.objects_denied;
	acc.counters[BPROF_ACC_PROCESSES_DENIED] = mst.procs_denied;
	rec->access = acc;

	if (fill_meta(&rec->meta, &env, &options, event, start_real, stop_mono - start_mono,
		      nr_sampled)) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}

	writing = 1;
	if (exiting >= 2) {
		fprintf(stderr, "prof-record: second signal: aborted, no file written\n");
		goto cleanup;
	}
	wopts.flags = env.force ? 0 : BPROF_WRITE_NO_CLOBBER;
	wopts.mode = 0600;
	struct stat before;
	bool existed = lstat(output, &before) == 0;
	err = bprof_write_file(rec, output, &wopts, &berr);
	if (err) {
		struct stat after;
		/* The last step, syncing the directory, can fail after the file
		 * took its name: then the file is there (but may not survive a
		 * crash), and "nothing written" would be a lie. */
		bool placed = lstat(output, &after) == 0 &&
			      (!existed || after.st_ino != before.st_ino || after.st_dev != before.st_dev);
		if (err == BPROF_E_IO && placed)
			fprintf(stderr, "prof-record: wrote %s, but syncing its directory failed: %s; the file may not survive a crash\n",
				output, strerror(berr.sys_errno));
		else if (err == BPROF_E_EXISTS)
			fprintf(stderr, "prof-record: %s appeared meanwhile; not replaced (use --force); nothing written\n", output);
		else if (err == BPROF_E_IO)
			fprintf(stderr, "prof-record: cannot write %s: %s%s; nothing written\n", output,
				strerror(berr.sys_errno),
				berr.sys_errno == ENOSPC || berr.sys_errno == EDQUOT ? " (disk full: free space or write elsewhere with -o)" : "");
		else
			fprintf(stderr, "prof-record: cannot write %s: %s: %s\n", output,
				bprof_strerror(err), berr.message);
		goto cleanup;
	}

	manifest_stats(man, &mst);
	print_status(&env, rec, &tot, &mst, pc.events, output);
	if (unw && env.verbose) {
		struct unwinder_stats us;

		unwinder_stats(unw, &us);
		fprintf(stderr, "prof-record: unwind tables: %llu objects loaded (%llu shared by build-id), %llu without a table, %llu failed; %llu rows, %llu rules, %llu pages, %llu KiB; built in %.1f ms, loaded in %.1f ms; %llu image tables (%llu failed)\n",
			(unsigned long long)us.objects_loaded, (unsigned long long)us.objects_shared,
			(unsigned long long)us.objects_no_table, (unsigned long long)us.objects_failed,
			(unsigned long long)us.rows, (unsigned long long)us.rules,
			(unsigned long long)us.pages, (unsigned long long)(us.bytes >> 10),
			us.build_ns / 1e6, us.load_ns / 1e6, (unsigned long long)us.images,
			(unsigned long long)us.image_failures);
		uint64_t sum[UNWIND_STAT_MAX];
		dump_unwind_stats(obj, sum, nr_cpus);
		fprintf(stderr, "prof-record: unwinder:");
		for (int i = 0; i < UNWIND_STAT_MAX; i++)
			fprintf(stderr, " %llu", (unsigned long long)sum[i]);
		fprintf(stderr, "\n");
	}
	exit_code = 0;
	if (access_report(&rec->access, rec)) {
		/* written (kernel stacks and counts may still help), but a
		 * privilege problem must not pass as success */
		fprintf(stderr, "prof-record: error: no sampled object could be identified with this recorder's privileges: the user stacks in %s cannot be symbolized (see the warnings above)\n",
			output);
		exit_code = 1;
	}
	if (child) {
		if (!child_done) {
			/* give the command a moment to act on the signal */
			for (int i = 0; i < 20 && !child_done; i++) {
				if (waitpid(child, &status, WNOHANG) == child)
					child_done = true;
				else
					usleep(50000);
			}
		}
		if (exit_code == 0 && child_done)
			exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		else if (exit_code == 0)
			exit_code = 130;
		child = 0;
	}

cleanup:
	if (release_fd >= 0)
		close(release_fd); /* the command never starts */
	if (child) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (links)
		for (int i = 0; i < nr_cpus; i++)
			bpf_link__destroy(links[i]);
	if (fds)
		for (int i = 0; i < nr_cpus; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	free(links);
	free(fds);
	ring_buffer__free(rb);
	manifest_free(man);
	unwinder_destroy(unw);
	bprof_recording_free(rec);
	profile_bpf__destroy(obj);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	free(output);
	free(options);
	return exit_code;
}
