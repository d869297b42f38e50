/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info.c - prof-report --info: what a recording holds and, for each object,
 * whether debuginfo was found and where: the list a user needs in order to
 * fetch what is missing.  For a recorder that ran without root (format
 * 1.2's ACCESS section): what it could not read and which capability
 * would have let it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

static void print_time(FILE *f, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char buf[64];

	if (gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		fprintf(f, "%s", buf);
	else
		fprintf(f, "%llu ns", (unsigned long long)ns);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *str_or(const char *s, const char *dflt) { return s && *s ? s : dflt; }

/* How the user stacks were unwound (format 1.1's UNWIND section). */
static void print_unwind(FILE *f, const struct bprof_recording *rec)
{
	const struct bprof_unwind *u = &rec->unwind;
	const uint64_t *c = u->counters;

	if (!(rec->meta.flags & BPROF_META_USER_STACKS))
		return;
	switch (u->mode) {
	case BPROF_UNWIND_UNKNOWN:
		fprintf(f, "unwinding:      not recorded (a recorder before format 1.1): frame pointers only\n");
		return;
	case BPROF_UNWIND_FP:
		fprintf(f, "unwinding:      fp: frame pointers only (--unwind=fp); callers of code built without them are missing\n");
		return;
	case BPROF_UNWIND_AUTO:
	case BPROF_UNWIND_CFI:
		break;
	default:
		fprintf(f, "unwinding:      mode %u (unknown to this prof-report)\n", u->mode);
		return;
	}
	if (!(u->flags & BPROF_UNWIND_WALKED)) {
		fprintf(f, "unwinding:      %s, but the recording kernel could not run the unwinder: frame pointers only\n",
			bprof_unwind_mode_name(u->mode));
		return;
	}
	fprintf(f, "unwinding:      %s: .eh_frame unwind tables%s\n", bprof_unwind_mode_name(u->mode),
		u->mode == BPROF_UNWIND_AUTO ? ", frame pointers where there is none" : "");
	fprintf(f, "  user stacks walked:              %llu\n", (unsigned long long)c[BPROF_UNW_SAMPLES]);
	fprintf(f, "  reached the start frames:        %llu (%.1f %%)\n",
		(unsigned long long)c[BPROF_UNW_SAMPLES_COMPLETE],
		pct(c[BPROF_UNW_SAMPLES_COMPLETE], c[BPROF_UNW_SAMPLES]));
	fprintf(f, "  cut at the depth limit:          %llu\n",
		(unsigned long long)c[BPROF_UNW_SAMPLES_TRUNCATED]);
	fprintf(f, "  before their tables arrived:     %llu (%llu with no process table yet, %llu meeting an object's table not loaded yet, %llu a library the process table did not have yet)\n",
		(unsigned long long)(c[BPROF_UNW_SAMPLES_NO_IMAGE_TABLE] +
				     c[BPROF_UNW_SAMPLES_TABLE_PENDING] +
				     c[BPROF_UNW_SAMPLES_STALE_MAPPINGS]),
		(unsigned long long)c[BPROF_UNW_SAMPLES_NO_IMAGE_TABLE],
		(unsigned long long)c[BPROF_UNW_SAMPLES_TABLE_PENDING],
		(unsigned long long)c[BPROF_UNW_SAMPLES_STALE_MAPPINGS]);
	if (c[BPROF_UNW_SAMPLES_TABLE_NO_ROOM] || c[BPROF_UNW_FALLBACK_NO_ROOM])
		fprintf(f, "  meeting a table that did not fit: %llu (%llu frame-pointer fallbacks)\n",
			(unsigned long long)c[BPROF_UNW_SAMPLES_TABLE_NO_ROOM],
			(unsigned long long)c[BPROF_UNW_FALLBACK_NO_ROOM]);
	fprintf(f, "  frames from tables, by fp:       %llu, %llu\n",
		(unsigned long long)c[BPROF_UNW_FRAMES_TABLE], (unsigned long long)c[BPROF_UNW_FRAMES_FP]);
	fprintf(f, "  frame-pointer fallbacks:         %llu no known mapping, %llu no table, %llu table pending, %llu no FDE\n",
		(unsigned long long)c[BPROF_UNW_FALLBACK_NO_MAPPING],
		(unsigned long long)c[BPROF_UNW_FALLBACK_NO_TABLE],
		(unsigned long long)c[BPROF_UNW_FALLBACK_PENDING],
		(unsigned long long)c[BPROF_UNW_FALLBACK_NO_ROW]);
	fprintf(f, "  walks stopped early:             %llu unfollowable rule, %llu unreadable memory, %llu bad frame, %llu register needed\n",
		(unsigned long long)c[BPROF_UNW_STOP_INVALID],
		(unsigned long long)c[BPROF_UNW_STOP_UNREADABLE],
		(unsigned long long)c[BPROF_UNW_STOP_BAD_FRAME],
		(unsigned long long)c[BPROF_UNW_STOP_NEEDS_REGISTERS]);
	fprintf(f, "  tables:                          %llu objects (%llu shared by build-id), %llu without a table, %llu did not fit\n",
		(unsigned long long)c[BPROF_UNW_OBJECTS_LOADED],
		(unsigned long long)c[BPROF_UNW_OBJECTS_SHARED],
		(unsigned long long)c[BPROF_UNW_OBJECTS_NO_TABLE],
		(unsigned long long)c[BPROF_UNW_OBJECTS_FAILED]);
	fprintf(f, "  table rows, rules, pages:        %llu (%.1f KiB), %llu, %llu; built in %.1f ms, loaded in %.1f ms\n",
		(unsigned long long)c[BPROF_UNW_TABLE_ROWS], (double)c[BPROF_UNW_TABLE_ROWS] * 4 / 1024,
		(unsigned long long)c[BPROF_UNW_TABLE_RULES], (unsigned long long)c[BPROF_UNW_TABLE_PAGES],
		(double)c[BPROF_UNW_BUILD_NS] / 1e6, (double)c[BPROF_UNW_LOAD_NS] / 1e6);
	fprintf(f, "  kernel memory for the tables:    %.1f MiB", (double)c[BPROF_UNW_TABLE_BYTES] / (1024.0 * 1024.0));
	if (c[BPROF_UNW_MEMORY_BUDGET])
		fprintf(f, " (peak %.1f MiB; budget --unwind-memory=%lluM)",
			(double)c[BPROF_UNW_TABLE_BYTES_PEAK] / (1024.0 * 1024.0),
			(unsigned long long)(c[BPROF_UNW_MEMORY_BUDGET] >> 20));
	fprintf(f, "; %llu process mapping tables (%llu failed)\n",
		(unsigned long long)c[BPROF_UNW_IMAGES], (unsigned long long)c[BPROF_UNW_IMAGE_FAILURES]);
	if (c[BPROF_UNW_OBJECTS_EVICTED] || c[BPROF_UNW_OBJECTS_RELOADED])
		fprintf(f, "  budget spent:                    %llu idle tables evicted, %llu tables loaded when a walk needed them\n",
			(unsigned long long)c[BPROF_UNW_OBJECTS_EVICTED],
			(unsigned long long)c[BPROF_UNW_OBJECTS_RELOADED]);
	if (!u->nr_misses)
		return;
	uint64_t rows = 0;

	fprintf(f, "  tables that did not fit:         %u (their frames followed frame pointers)\n",
		u->nr_misses);
	for (uint32_t i = 0; i < u->nr_misses; i++) {
		const struct bprof_unwind_miss *m = &u->misses[i];
		rows += m->rows;
		fputs("    ", f);
		/* a recorded path: escaped */
		rep_fputs_clean(f, str_or(rec->objects[m->object_index].path, "?"));
		fprintf(f, ": %llu rows (%.1f MiB), %s\n",
			(unsigned long long)m->rows, (double)m->rows * 4 / (1024.0 * 1024.0),
			m->flags & BPROF_UNWIND_MISS_SAMPLED ? "sampled" : "mapped only, never sampled");
	}
	/* the memory at the end, the missing rows and a little for placing
	 * them (whole pages in 1 MiB maps): what would have held them */
	if (c[BPROF_UNW_MEMORY_BUDGET])
		fprintf(f, "  to hold them:                    --unwind-memory=%lluM or more\n",
			(unsigned long long)((c[BPROF_UNW_TABLE_BYTES] + rows * 4 + rows / 8 +
					      (2ull << 20) - 1) >> 20));
}

/* Capability numbers (linux/capability.h) that --info has reason to
 * name, in the order a reader looks for them: what prof-record needs
 * first, then what would have let it read more. */
#define CAP_DAC_OVERRIDE 1
#define CAP_DAC_READ_SEARCH 2
#define CAP_SYS_PTRACE 19
#define CAP_SYS_ADMIN 21
#define CAP_SYSLOG 34
#define CAP_PERFMON 38
#define CAP_BPF 39
#define CAP_CHECKPOINT_RESTORE 40
static const struct {
	unsigned nr;
	const char *name;
} cap_names[] = {
	{ CAP_BPF, "CAP_BPF" },
	{ CAP_PERFMON, "CAP_PERFMON" },
	{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
	{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH" },
	{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
	{ CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE" },
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	{ CAP_SYSLOG, "CAP_SYSLOG" },
	{ 0, "CAP_CHOWN" },
};

static bool has_cap(const struct bprof_access *a, unsigned nr)
{
	return (a->capabilities >> nr) & 1;
}

/* "CAP_BPF CAP_PERFMON (and capabilities 5 12)": the names of those
 * above, then the numbers of any other bit set. */
static void print_caps(FILE *f, uint64_t caps)
{
	uint64_t named = 0;
	const char *sep = "";

	if (!caps) {
		fputs("no capabilities", f);
		return;
	}
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
		named |= UINT64_C(1) << cap_names[i].nr;
		if ((caps >> cap_names[i].nr) & 1) {
			fprintf(f, "%s%s", sep, cap_names[i].name);
			sep = " ";
		}
	}
	if (!(caps & ~named))
		return;
	fprintf(f, "%s", *sep ? " (and capabilities" : "capabilities");
	for (unsigned n = 0; n < 64; n++)
		if ((caps & ~named) >> n & 1)
			fprintf(f, " %u", n);
	if (*sep)
		fputc(')', f);
}

#define ACCESS_LINE(f, label) fprintf(f, "  %-36s", label)

/* What the recorder was allowed to read (format 1.2's ACCESS section):
 * what the recording lacks because of it, and which capability would
 * have given it.  Only what applies; nothing for files without it. */
static void print_access(FILE *f, const struct bprof_recording *rec)
{
	const struct bprof_access *a = &rec->access;
	const uint64_t *c = a->counters;
	bool root = a->flags & BPROF_ACCESS_ROOT;

	if (!a->present)
		return;
	if (root) {
		fputs("access:         recorded as root\n", f);
	} else {
		fprintf(f, "access:         recorded as uid %u with ", a->euid);
		print_caps(f, a->capabilities);
		fputs(" (not root)\n", f);
	}

	if (!(a->flags & BPROF_ACCESS_OTHER_USERS)) {
		ACCESS_LINE(f, "mappings of other users' processes:");
		if (c[BPROF_ACC_PROCESSES_DENIED])
			fprintf(f, "not readable (%llu %s without mappings)",
				(unsigned long long)c[BPROF_ACC_PROCESSES_DENIED],
				c[BPROF_ACC_PROCESSES_DENIED] == 1 ? "process" : "processes");
		else
			fputs("not readable (no sampled process needed it)", f);
		if (root)
			fputs("; refused to root (a security module, or /proc mounted with hidepid?)\n", f);
		else if (has_cap(a, CAP_SYS_PTRACE))
			fputs("; refused despite CAP_SYS_PTRACE (a security module, or /proc mounted with hidepid?)\n", f);
		else
			fputs(": CAP_SYS_PTRACE would read them\n", f);
	} else if (c[BPROF_ACC_PROCESSES_DENIED]) {
		ACCESS_LINE(f, "mappings of other users' processes:");
		fprintf(f, "readable, but %llu %s refused their mappings\n",
			(unsigned long long)c[BPROF_ACC_PROCESSES_DENIED],
			c[BPROF_ACC_PROCESSES_DENIED] == 1 ? "process" : "processes");
	}

	if (!(a->flags & BPROF_ACCESS_ANY_FILE)) {
		ACCESS_LINE(f, "files the user may not read:");
		if (c[BPROF_ACC_OBJECTS_DENIED])
			fprintf(f, "not readable (%llu %s)",
				(unsigned long long)c[BPROF_ACC_OBJECTS_DENIED],
				c[BPROF_ACC_OBJECTS_DENIED] == 1 ? "object" : "objects");
		else
			fputs("not readable (no mapped object needed it)", f);
		if (root)
			fputs("; refused to root (a security module?)\n", f);
		else if (has_cap(a, CAP_DAC_READ_SEARCH) || has_cap(a, CAP_DAC_OVERRIDE))
			fputs("; refused despite CAP_DAC_READ_SEARCH or CAP_DAC_OVERRIDE (a security module?)\n", f);
		else
			fputs(": CAP_DAC_READ_SEARCH would read them\n", f);
	} else if (c[BPROF_ACC_OBJECTS_DENIED]) {
		ACCESS_LINE(f, "files the user may not read:");
		fprintf(f, "readable, but %llu %s could not be opened\n",
			(unsigned long long)c[BPROF_ACC_OBJECTS_DENIED],
			c[BPROF_ACC_OBJECTS_DENIED] == 1 ? "object" : "objects");
	}

	if (!(a->flags & BPROF_ACCESS_MAP_FILES)) {
		ACCESS_LINE(f, "/proc/PID/map_files:");
		fprintf(f, "closed: %llu %s identified by path (device and inode checked), ",
			(unsigned long long)c[BPROF_ACC_OBJECTS_BY_PATH],
			c[BPROF_ACC_OBJECTS_BY_PATH] == 1 ? "object" : "objects");
		if (!c[BPROF_ACC_OBJECTS_UNVERIFIED])
			fputs("none unverified\n", f);
		else if (root || has_cap(a, CAP_CHECKPOINT_RESTORE) || has_cap(a, CAP_SYS_ADMIN))
			fprintf(f, "%llu could not be verified (deleted or replaced since mapped)\n",
				(unsigned long long)c[BPROF_ACC_OBJECTS_UNVERIFIED]);
		else
			fprintf(f, "%llu could not be verified (deleted or replaced since mapped): CAP_CHECKPOINT_RESTORE would identify them\n",
				(unsigned long long)c[BPROF_ACC_OBJECTS_UNVERIFIED]);
	} else if (c[BPROF_ACC_OBJECTS_UNVERIFIED]) {
		ACCESS_LINE(f, "/proc/PID/map_files:");
		fprintf(f, "open, but %llu %s could not be verified\n",
			(unsigned long long)c[BPROF_ACC_OBJECTS_UNVERIFIED],
			c[BPROF_ACC_OBJECTS_UNVERIFIED] == 1 ? "object" : "objects");
	}

	if (!(a->flags & BPROF_ACCESS_KALLSYMS)) {
		ACCESS_LINE(f, "kernel addresses:");
		if (root || has_cap(a, CAP_SYSLOG))
			fputs("hidden (kernel.kptr_restrict=2 hides them from everyone): kernel frames need vmlinux debuginfo\n", f);
		else
			fputs("hidden: kernel frames need vmlinux debuginfo; CAP_SYSLOG would record kallsyms\n", f);
	}
}

/* "label" + a recorded (hostile) string, escaped, + "\n" */
static void line(FILE *f, const char *label, const char *s)
{
	fputs(label, f);
	rep_fputs_clean(f, str_or(s, "?"));
	fputc('\n', f);
}

/* Mapping generations (SPEC.md 6.12): how many processes changed their
 * executable mappings while recorded, and the user frames whose mapping at
 * their sample's generation cannot be known (printed without a name). */
/* --off-cpu / --wall recordings: on- and off-CPU time per process, in
 * seconds (samples x period), and the recorder's off-CPU counters. */
struct proc_time {
	uint32_t pid, tid;
	char comm[BPROF_COMM_LEN];
	uint64_t on, off[BPROF_STATE_MAX + 1];
	uint64_t n; /* the row's samples: the comm of the largest is shown */
};

static int cmp_proc_time(const void *a, const void *b)
{
	const struct proc_time *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* by process, then thread (-L recordings) and thread name: the rows of
 * one thread of a process are adjacent */
static int cmp_thread_time(const void *a, const void *b)
{
	const struct proc_time *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return strncmp(x->comm, y->comm, BPROF_COMM_LEN);
}

/* w: the on-CPU column's width (13, less what a long id took) */
static void print_time_row(FILE *f, const struct proc_time *t, double p, int w)
{
	fprintf(f, "%*.3f %8.3f %8.3f %8.3f %8.3f  ", w > 6 ? w : 6, t->on * p, t->off[BPROF_STATE_S] * p,
		t->off[BPROF_STATE_D] * p, t->off[BPROF_STATE_R] * p, t->off[BPROF_STATE_T] * p);
	rep_fputs_clean(f, t->comm);
	fputc('\n', f);
}

/* A wall-clock profile's question is which threads wait, and for what:
 * each thread's time (by name: rows carry the thread's comm; by tid too in
 * an -L recording), in the order of the processes. */
static void print_thread_times(FILE *f, struct proc_time *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_thread_time);
	fprintf(f, "  per thread (s):     on-CPU        S        D        R        T  thread\n");
	for (size_t i = 0; i < n;) {
		struct proc_time t = v[i];
		size_t j = i + 1;

		for (; j < n && !cmp_thread_time(&v[j], &t); j++) {
			t.on += v[j].on;
			for (int s = 1; s <= BPROF_STATE_MAX; s++)
				t.off[s] += v[j].off[s];
		}
		char id[24];
		int len = t.tid ? snprintf(id, sizeof(id), "%u/%u", t.pid, t.tid)
				: snprintf(id, sizeof(id), "%u", t.pid);

		fprintf(f, "  %8s ", id);
		print_time_row(f, &t, p, len > 8 ? 13 - (len - 8) : 13);
		i = j;
	}
}

static void print_offcpu(FILE *f, const struct bprof_recording *rec)
{
	const struct bprof_offcpu *o = &rec->offcpu;
	struct proc_time *v;
	size_t n = 0;
	double p = (double)o->period_ns / 1e9;
	uint64_t on = 0, off = 0;

	if (!o->mode)
		return;
	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		if (rec->counts[i].state == BPROF_STATE_ON_CPU)
			on += rec->counts[i].count;
		else
			off += rec->counts[i].count;
	}
	fprintf(f, "off-CPU:        %s: a sample per %.3f ms of blocked time (%s)\n",
		o->mode == BPROF_OFFCPU_WALL ? "--wall" : "--off-cpu", (double)o->period_ns / 1e6,
		o->mode == BPROF_OFFCPU_WALL ? "states S, D, T and R" : "states S, D and T");
	fprintf(f, "  on-CPU, off-CPU samples:         %llu (%.3f s), %llu (%.3f s)\n",
		(unsigned long long)on, on * p, (unsigned long long)off, off * p);
	fprintf(f, "  blocks ended:                    %llu (%.3f s), %llu too short to cross a period (blocks under way at the end included)\n",
		(unsigned long long)o->blocks, (double)o->blocked_ns / 1e9,
		(unsigned long long)o->blocks_short);
	fprintf(f, "  user stacks walked:              %llu; %llu sampled blocks without one (no rseq, blocked again before resuming, exited, or still blocked at the end and its stack not copied)\n",
		(unsigned long long)o->walks, (unsigned long long)o->no_user_stack);
	fprintf(f, "  off-CPU samples lost:            %llu\n", (unsigned long long)o->lost);
	v = calloc(rec->nr_counts ? rec->nr_counts : 1, sizeof(*v));
	if (!v)
		return;
	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		v[n].pid = rec->counts[i].pid;
		v[n].tid = rec->counts[i].tid;
		memcpy(v[n].comm, rec->counts[i].comm, BPROF_COMM_LEN);
		v[n].n = rec->counts[i].count;
		if (rec->counts[i].state == BPROF_STATE_ON_CPU)
			v[n].on = rec->counts[i].count;
		else if (rec->counts[i].state <= BPROF_STATE_MAX)
			v[n].off[rec->counts[i].state] = rec->counts[i].count;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_proc_time);
	fprintf(f, "  per process (s):    on-CPU        S        D        R        T  comm\n");
	for (size_t i = 0; i < n;) {
		struct proc_time t = v[i];
		size_t j = i + 1;

		for (; j < n && v[j].pid == t.pid; j++) {
			if (v[j].n > t.n) {
				t.n = v[j].n;
				memcpy(t.comm, v[j].comm, BPROF_COMM_LEN);
			}
			t.on += v[j].on;
			for (int s = 1; s <= BPROF_STATE_MAX; s++)
				t.off[s] += v[j].off[s];
		}
		fprintf(f, "  %8u ", t.pid);
		print_time_row(f, &t, p, 13);
		i = j;
	}
	print_thread_times(f, v, n, p);
	free(v);
}

/* What the recording kernel could not give (META flags, format 1.8). */
static void print_lacks(FILE *f, const struct bprof_recording *rec)
{
	if (rec->meta.flags & BPROF_META_NO_GENERATIONS)
		fprintf(f, "not recorded:   mapping generations (the recording kernel could not track them): a library unloaded and another loaded at its address may carry the first one's names\n");
	if (rec->meta.flags & BPROF_META_NO_PYTHON_WALK)
		fprintf(f, "not recorded:   Python frames (the recording kernel could not walk them): Python processes show the interpreter's native frames\n");
	if (rec->meta.flags & BPROF_META_NO_V8_WALK)
		fprintf(f, "not recorded:   V8 JavaScript frames (the recording kernel could not walk them): Node.js processes show V8's native frames\n");
	if (rec->meta.flags & BPROF_META_NO_JVM_WALK)
		fprintf(f, "not recorded:   Java frames (the recording kernel could not walk them): JVMs show HotSpot's native frames\n");
}

static void print_generations(FILE *f, const struct bprof_recording *rec)
{
	uint64_t procs = 0, history = 0, gaps = 0, frames = 0, samples = 0;

	for (uint64_t i = 0; i < rec->nr_processes; i++) {
		const struct bprof_process *p = &rec->processes[i];

		if (!p->has_gens)
			continue;
		procs++;
		history += p->nr_history;
		gaps += p->nr_gaps;
	}
	if (!procs)
		return;
	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		const struct bprof_count *c = &rec->counts[i];
		const struct bprof_process *p = bprof_recording_process(rec, c->pid, c->exec_id);
		const struct bprof_stack *st = c->user_stack_id >= 0
						       ? bprof_recording_stack(rec, c->user_stack_id)
						       : NULL;
		bool any = false;

		if (!p || !p->has_gens || !st)
			continue;
		for (uint32_t j = 0; j < st->nr_ips; j++) {
			const struct bprof_mapping *m;

			if (bprof_process_mapping_at(p, rep_lookup_addr(st->ips[j], j), c->map_gen, &m) < 0) {
				frames++;
				any = true;
			}
		}
		if (any)
			samples = samples + c->count < samples ? UINT64_MAX : samples + c->count;
	}
	fprintf(f, "mappings:       %llu processes changed their executable mappings while recorded (%llu earlier mappings kept, %llu generations never seen)\n",
		(unsigned long long)procs, (unsigned long long)history, (unsigned long long)gaps);
	fprintf(f, "  frames of unknowable mapping:    %llu in %llu samples (printed as " REP_UNKNOWN_FRAME ")\n",
		(unsigned long long)frames, (unsigned long long)samples);
}

/* JIT code (SPEC.md 6.16): what the recorder kept of perf maps and
 * jitdumps, whether a cap cut them, and how the JIT frames came out. */
static void print_jit(FILE *f, struct bsym_ctx *sym, const struct rep_input *in)
{
	const struct bprof_recording *rec = in->rec;
	const struct bprof_jit *j = &rec->jit;
	uint64_t maps = 0, map_bytes = 0, frames = 0, named = 0, ambiguous = 0, samples_amb = 0;

	for (uint64_t i = 0; i < rec->nr_processes; i++)
		if (rec->processes[i].perf_map_len) {
			maps++;
			map_bytes += rec->processes[i].perf_map_len;
		}
	if (!j->present && !maps)
		return;
	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		const struct bprof_count *c = &rec->counts[i];
		const struct rep_process_map *pm = rep_input_process(in, c->pid, c->exec_id);
		const struct bprof_stack *st = c->user_stack_id >= 0
						       ? bprof_recording_stack(rec, c->user_stack_id)
						       : NULL;
		uint64_t win[2];
		bool any = false;

		if (!pm || !st)
			continue;
		rep_row_window(in, c, win);
		for (uint32_t k = 0; k < st->nr_ips; k++) {
			struct rep_wframe w;

			if (rep_runtime_at(st->ips, k, st->nr_ips) >= 0) {
				k++;
				continue;
			}
			rep_wframe_user(&w, sym, pm, st->ips[k], k, c->map_gen, win, true);
			if (w.kind != REP_W_JIT)
				continue;
			frames++;
			named += w.res != NULL;
			if (w.reason == BSYM_R_JIT_AMBIGUOUS) {
				ambiguous++;
				any = true;
			}
		}
		if (any)
			samples_amb = samples_amb + c->count < samples_amb ? UINT64_MAX : samples_amb + c->count;
	}
	fprintf(f, "jit code:       %llu perf maps (%llu bytes), %llu jitdumps\n", (unsigned long long)maps,
		(unsigned long long)map_bytes, (unsigned long long)j->nr_dumps);
	fprintf(f, "  JIT frames:                      %llu, %llu named, %llu printed as " REP_JIT_AMBIGUOUS_FRAME
		" in %llu samples (entries of different names cover them)\n",
		(unsigned long long)frames, (unsigned long long)named, (unsigned long long)ambiguous,
		(unsigned long long)samples_amb);
	if (!j->present)
		return;
	if (j->counters[BPROF_JIT_PERF_MAP_DROPPED] || j->counters[BPROF_JIT_DUMP_DROPPED])
		fprintf(f, "  CAP REACHED: %llu perf map bytes of %llu images and %llu jitdump bytes not kept "
			"(caps: %llu bytes per image, %llu in all): later JIT code of those images is unnamed\n",
			(unsigned long long)j->counters[BPROF_JIT_PERF_MAP_DROPPED],
			(unsigned long long)j->counters[BPROF_JIT_PERF_MAP_CAPPED],
			(unsigned long long)j->counters[BPROF_JIT_DUMP_DROPPED],
			(unsigned long long)j->counters[BPROF_JIT_PERF_MAP_CAP_IMAGE],
			(unsigned long long)j->counters[BPROF_JIT_PERF_MAP_CAP_TOTAL]);
	for (unsigned i = 0; i < BPROF_JIT_NR_COUNTERS; i++)
		fprintf(f, "  %-31s %llu\n", bprof_jit_counter_name(i), (unsigned long long)j->counters[i]);
}

int rep_print_info(FILE *f, struct bsym_ctx *sym, const struct rep_input *in)
{
	const struct bprof_recording *rec = in->rec;
	const struct bprof_meta *m = &rec->meta;
	const struct bprof_losses *l = &rec->losses;
	const struct bprof_kernel *k = &rec->kernel;
	char hex[2 * BPROF_BUILD_ID_MAX + 1];
	uint64_t samples = 0;

	for (uint64_t i = 0; i < rec->nr_counts; i++)
		samples = samples + rec->counts[i].count < samples ? UINT64_MAX
								   : samples + rec->counts[i].count;

	line(f, "file:           ", in->path);
	line(f, "host:           ", m->hostname);
	line(f, "kernel:         ", m->kernel_release);
	line(f, "arch:           ", m->arch);
	line(f, "recorder:       ", m->recorder_version);
	line(f, "command line:   ", m->options);
	fprintf(f, "start:          ");
	print_time(f, m->start_time_ns);
	fprintf(f, "\nduration:       %.3f s\n", (double)m->duration_ns / 1e9);
	fputs("sampling:       ", f);
	rep_fputs_clean(f, str_or(m->event, "?"));
	if (m->sample_freq)
		fprintf(f, " at %llu Hz on %u CPUs\n", (unsigned long long)m->sample_freq, m->ncpus);
	else
		fprintf(f, " every %llu events on %u CPUs\n", (unsigned long long)m->sample_period,
			m->ncpus);
	fprintf(f, "stacks:         %s%s%s%s\n",
		(m->flags & BPROF_META_USER_STACKS) ? "user " : "",
		(m->flags & BPROF_META_KERNEL_STACKS) ? "kernel " : "",
		(m->flags & BPROF_META_INCLUDE_IDLE) ? "(idle included) " : "(idle excluded) ",
		(m->flags & BPROF_META_PER_THREAD) ? "per thread" : "");
	fprintf(f, "samples:        %llu in %llu rows; %llu stacks; %llu processes; %llu objects\n",
		(unsigned long long)samples, (unsigned long long)rec->nr_counts,
		(unsigned long long)rec->nr_stacks, (unsigned long long)rec->nr_processes,
		(unsigned long long)rec->nr_objects);

	fprintf(f, "losses:\n");
	fprintf(f, "  user stacks, stack map full:     %llu\n", (unsigned long long)l->user_stack_enomem);
	fprintf(f, "  user stacks, hash collision:     %llu\n", (unsigned long long)l->user_stack_eexist);
	fprintf(f, "  kernel stacks, stack map full:   %llu\n", (unsigned long long)l->kernel_stack_enomem);
	fprintf(f, "  kernel stacks, hash collision:   %llu\n", (unsigned long long)l->kernel_stack_eexist);
	fprintf(f, "  samples, counts map full:        %llu\n", (unsigned long long)l->counts_full);
	fprintf(f, "  processes without mappings:      %llu\n", (unsigned long long)l->manifest_lost);
	fprintf(f, "  notifications dropped:           %llu\n", (unsigned long long)l->events_lost);
	fprintf(f, "  other:                           %llu\n", (unsigned long long)l->other);
	fprintf(f, "  user stacks before their tables: %llu (walked by frame pointer: may lack callers)\n",
		(unsigned long long)l->user_stack_before_table);
	print_offcpu(f, rec);
	rep_runtimes_info(f, rec);
	print_unwind(f, rec);
	print_access(f, rec);
	print_generations(f, rec);
	print_lacks(f, rec);
	print_jit(f, sym, in);

	rep_hex(hex, k->build_id, k->build_id_len);
	fputs("kernel image:   ", f);
	rep_fputs_clean(f, str_or(k->release, "?"));
	fprintf(f, " build-id %s, _stext at 0x%llx, %u modules\n", k->build_id_len ? hex : "-",
		(unsigned long long)k->stext, k->nr_modules);
	if (k->flags & BPROF_KERNEL_KALLSYMS_HIDDEN)
		fprintf(f, "kallsyms:       hidden on the host (kptr_restrict): kernel frames need vmlinux debuginfo\n");
	else if (k->nr_ksyms && (k->flags & BPROF_KERNEL_KALLSYMS_PARTIAL))
		fprintf(f, "kallsyms:       %u text symbols recorded (those of sampled kernel addresses)\n",
			k->nr_ksyms);
	else if (k->nr_ksyms)
		fprintf(f, "kallsyms:       %u text symbols recorded\n", k->nr_ksyms);
	else
		fprintf(f, "kallsyms:       not recorded\n");

	fprintf(f, "objects:\n");
	for (uint64_t i = 0; i < rec->nr_objects; i++) {
		const struct bprof_object *o = &rec->objects[i];
		struct bsym_object_info oi;
		int err = bsym_object_info(sym, in->object_ids[i], &oi);

		if (o->flags & BPROF_OBJ_HAS_BUILD_ID) {
			rep_hex(hex, o->build_id, o->build_id_len);
		} else {
			snprintf(hex, sizeof(hex), "(no build-id; fallback %016llx)",
				 (unsigned long long)o->fallback_hash);
		}
		fprintf(f, "  %s ", hex);
		rep_fputs_clean(f, str_or(o->path, "?"));
		fputs((o->flags & BPROF_OBJ_DELETED) ? " (deleted on host)\n" : "\n", f);
		if (err)
			fprintf(f, "      error: %s\n", strerror(-err));
		else if (oi.status == BSYM_OK) {
			fputs("      symbols: ", f);
			rep_fputs_clean(f, str_or(oi.elf_path, "?"));
			if (oi.debug_path) {
				fputs(", debuginfo ", f);
				rep_fputs_clean(f, oi.debug_path);
			}
			fputs(oi.has_dwarf ? "\n" : " (no DWARF: function names only)\n", f);
		}
		else
			fprintf(f, "      MISSING: %s\n", bsym_reason_str(oi.status));
	}
	fflush(f);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}
