// SPDX-License-Identifier: Apache-2.0
/*
 * status.c - what prof-record tells the user on stderr (status.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "status.h"
#include "unwind/unwind.h"

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

void status_header(const struct env *env)
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

/* The end-of-run line (unless -q) and the warnings (always). */
void status_report(const struct env *env, const struct bprof_recording *rec,
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
		char off[64] = "";

		if (rec->offcpu.mode)
			snprintf(off, sizeof(off), " and %llu off-CPU",
				 (unsigned long long)tot->offcpu_samples);
		fprintf(stderr, "prof-record: %llu samples%s, %llu processes, %llu stacks, %llu lost; wrote %s (%s)\n",
			(unsigned long long)tot->samples, off, (unsigned long long)tot->processes,
			(unsigned long long)rec->nr_stacks, (unsigned long long)lost + rec->offcpu.lost,
			output, sizebuf);
		if (env->verbose)
			fprintf(stderr, "prof-record: %llu events, %llu snapshots, %llu failed, %llu objects opened, %llu from parent, %llu mappings at exit\n",
				(unsigned long long)events, (unsigned long long)mst->snapshots,
				(unsigned long long)mst->failed, (unsigned long long)mst->objects_opened,
				(unsigned long long)mst->from_parent, (unsigned long long)mst->from_exit);
		if (env->verbose && mst->map_events)
			fprintf(stderr, "prof-record: %llu executable mappings made while recording (%llu applied without a /proc read), %llu generations never seen\n",
				(unsigned long long)mst->map_events,
				(unsigned long long)mst->map_events_applied,
				(unsigned long long)mst->gen_gaps);
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

void status_unwinder(const struct unwinder *unw, struct profile_bpf *obj, int nr_cpus)
{
	struct unwinder_stats us;

	unwinder_stats(unw, &us);
	fprintf(stderr, "prof-record: unwind tables: %llu objects loaded (%llu shared by build-id), %llu without a table, %llu failed; %llu evicted, %llu loaded when wanted; %llu rows, %llu rules, %llu pages, %llu KiB in %llu row maps (peak %llu KiB, budget %llu KiB); built in %.1f ms, loaded in %.1f ms (+%.1f ms waiting for new row maps); %llu image tables (%llu failed, %llu KiB)\n",
		(unsigned long long)us.objects_loaded, (unsigned long long)us.objects_shared,
		(unsigned long long)us.objects_no_table, (unsigned long long)us.objects_failed,
		(unsigned long long)us.objects_evicted, (unsigned long long)us.objects_reloaded,
		(unsigned long long)us.rows, (unsigned long long)us.rules,
		(unsigned long long)us.pages, (unsigned long long)(us.bytes >> 10),
		(unsigned long long)us.row_maps, (unsigned long long)(us.peak_bytes >> 10),
		(unsigned long long)(us.budget >> 10),
		us.build_ns / 1e6, us.load_ns / 1e6, us.map_wait_ns / 1e6, (unsigned long long)us.images,
		(unsigned long long)us.image_failures, (unsigned long long)(us.image_bytes >> 10));
	uint64_t sum[UNWIND_STAT_MAX];
	dump_unwind_stats(obj, sum, nr_cpus);
	fprintf(stderr, "prof-record: unwinder:");
	for (int i = 0; i < UNWIND_STAT_MAX; i++)
		fprintf(stderr, " %llu", (unsigned long long)sum[i]);
	fprintf(stderr, "\n");
	fprintf(stderr, "prof-record: older tables: %llu user stacks walked with a mapping table of an earlier generation than their own, %llu frames in the range changed since stepped by frame pointer\n",
		(unsigned long long)sum[UNWIND_STAT_SAMPLES_OLDER_TABLE],
		(unsigned long long)sum[UNWIND_STAT_FP_CHANGED]);
}

static int cmp_miss_size(const void *a, const void *b)
{
	const struct unwinder_miss *x = a, *y = b;

	if (x->sampled != y->sampled)
		return x->sampled ? -1 : 1;
	return x->rows < y->rows ? 1 : x->rows > y->rows ? -1 : 0;
}

void status_unwind_misses(const struct unwinder *unw, const struct manifest *man)
{
	struct unwinder_miss *ms;
	struct unwinder_stats us;
	long n = unwinder_misses(unw, &ms), sampled = 0;

	if (n <= 0)
		return;
	unwinder_stats(unw, &us);
	qsort(ms, n, sizeof(*ms), cmp_miss_size);
	for (long i = 0; i < n; i++)
		sampled += ms[i].sampled;
	fprintf(stderr, "WARNING: the unwind tables of %ld object%s did not fit in --unwind-memory=%lluM",
		n, n == 1 ? "" : "s", (unsigned long long)(us.budget >> 20));
	if (sampled)
		fprintf(stderr, " (%ld sampled: their callers came from frame pointers, often wrong or missing)",
			sampled);
	else
		fprintf(stderr, " (none sampled)");
	fprintf(stderr, ":");
	for (long i = 0; i < n && i < 3; i++) {
		const struct bprof_object *o = manifest_object(man, ms[i].idx);
		const char *p = o && o->path ? o->path : "?", *b = strrchr(p, '/');

		fprintf(stderr, "%s %s (%llu rows)", i ? "," : "", b ? b + 1 : p,
			(unsigned long long)ms[i].rows);
	}
	fprintf(stderr, "%s; --unwind-memory=%lluM would have held them (prof-report --info lists them)\n",
		n > 3 ? ", ..." : "", (unsigned long long)(unwinder_budget_needed(unw) >> 20));
	free(ms);
}
