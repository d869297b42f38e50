// SPDX-License-Identifier: Apache-2.0
/*
 * dump.c - the BPF maps into the recording (dump.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dump.h"
#include "profile.h"
#include "profile.skel.h"
#include "unwind.h"

#ifndef BPROF_VERSION
#define BPROF_VERSION "unknown"
#endif

static int cmp_s32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

int dump_counts(struct profile_bpf *obj, unsigned gen, struct bprof_recording *rec,
		struct manifest *man, struct dump_totals *tot)
{
	int fd = bpf_map__fd(gen ? obj->maps.counts_b : obj->maps.counts);
	int sfd = bpf_map__fd(gen ? obj->maps.stacks_b : obj->maps.stacks);
	int sfd2 = bpf_map__fd(gen ? obj->maps.stacks2_b : obj->maps.stacks2);
	int ufd = bpf_map__fd(gen ? obj->maps.ustacks_b : obj->maps.ustacks);
	struct profile_ustack *us = malloc(sizeof(*us));
	int32_t base2 = obj->rodata->stacks2_base;
	bool own = obj->rodata->own_stacks;
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
		 * walked by the unwinder have ids of their own, and so has
		 * every stack when the kernel's stack maps are not used */
		int32_t local = ids[i] >= base2 ? ids[i] - base2 : ids[i];
		int lerr;
		uint32_t flags = 0;

		if (own || ids[i] >= PROFILE_CFI_STACK_BASE) {
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

/* Delete every key of map fd (quiet: nothing adds meanwhile).  The next
 * key is found before the current one goes, so deleting never restarts the
 * walk. */
static int clear_map(int fd, size_t key_size)
{
	unsigned char key[64], next[64];
	bool have = false;
	int err = 0;

	if (key_size > sizeof(key))
		return -EINVAL;
	while (bpf_map_get_next_key(fd, have ? key : NULL, next) == 0) {
		if (have && bpf_map_delete_elem(fd, key) && errno != ENOENT && !err)
			err = -errno;
		memcpy(key, next, key_size);
		have = true;
	}
	if (have && bpf_map_delete_elem(fd, key) && errno != ENOENT && !err)
		err = -errno;
	return err;
}

int dump_clear(struct profile_bpf *obj, unsigned gen)
{
	struct bpf_map *maps[] = {
		gen ? obj->maps.counts_b : obj->maps.counts,
		gen ? obj->maps.stacks_b : obj->maps.stacks,
		gen ? obj->maps.stacks2_b : obj->maps.stacks2,
		gen ? obj->maps.ustacks_b : obj->maps.ustacks,
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int e = clear_map(bpf_map__fd(maps[i]), bpf_map__key_size(maps[i]));

		if (e && !err)
			err = e;
	}
	return err;
}

void dump_losses(struct profile_bpf *obj, struct bprof_losses *l, int nr_cpus,
		 struct dump_base *base)
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
	for (uint32_t i = 0; i < PROFILE_LOSS_MAX; i++) {
		uint64_t s = sum[i];

		sum[i] = s >= base->losses[i] ? s - base->losses[i] : 0;
		base->losses[i] = s;
	}
	l->user_stack_enomem = sum[PROFILE_LOSS_USER_ENOMEM];
	l->user_stack_eexist = sum[PROFILE_LOSS_USER_EEXIST];
	l->kernel_stack_enomem = sum[PROFILE_LOSS_KERNEL_ENOMEM];
	l->kernel_stack_eexist = sum[PROFILE_LOSS_KERNEL_EEXIST];
	l->counts_full = sum[PROFILE_LOSS_COUNTS_FULL];
	l->events_lost = sum[PROFILE_LOSS_EVENTS];
	l->other = sum[PROFILE_LOSS_OTHER];
}

/* Sum the unwinder's per-CPU counters (enum unwind_stat). */
void dump_unwind_stats(struct profile_bpf *obj, uint64_t *sum, int nr_cpus)
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
void dump_unwind(struct bprof_recording *rec, struct profile_bpf *obj,
		 const struct env *env, bool cfi, const struct unwinder *unw, int nr_cpus,
		 struct dump_base *base)
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

	u->mode = env->unwind == OPTS_UNWIND_FP	? BPROF_UNWIND_FP :
		  env->unwind == OPTS_UNWIND_CFI ? BPROF_UNWIND_CFI :
						  BPROF_UNWIND_AUTO;
	if (!cfi || !unw)
		return;
	u->flags = BPROF_UNWIND_WALKED;
	dump_unwind_stats(obj, sum, nr_cpus);
	for (int i = 0; i < UNWIND_STAT_MAX; i++) {
		uint64_t s = sum[i];

		sum[i] = s >= base->unwind[i] ? s - base->unwind[i] : 0;
		base->unwind[i] = s;
	}
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

int dump_meta(struct bprof_meta *meta, const struct env *env, char **options,
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
