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
#include "offcpu/offcpu_rec.h"
#include "dump.h"
#include "profile.h"
#include "profile.skel.h"
#include "unwind/unwind.h"

#ifndef BPROF_VERSION
#define BPROF_VERSION "unknown"
#endif

/*
 * Map walks.  Element by element (bpf_map_get_next_key, then a lookup) is
 * two system calls an element; BPF_MAP_LOOKUP_BATCH (Linux 5.6, hash maps)
 * returns up to a batch of them in one.  At the end of a 10 s recording at
 * 999 Hz (~4,700 counts and as many stacks) the element-by-element reads
 * were ~10 % of the recorder's CPU on the benchmark's VM.  Where batches are
 * refused (older kernels, the kernel's stack-trace maps) the walk is
 * element by element, as before.
 */
typedef int (*elem_fn)(const void *key, const void *val, void *arg);

enum { BATCH_FIRST = 256 };

/* fn for every element of map fd, in batches; with del, each batch is
 * deleted as it is read (BPF_MAP_LOOKUP_AND_DELETE_BATCH).  0, fn's error,
 * -EOPNOTSUPP when the map takes no batches (nothing was read), or the
 * kernel's error. */
static int walk_batched(int fd, size_t ksz, size_t vsz, bool del, elem_fn fn, void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	/* the batch token: a bucket number for hash maps, a key for others */
	uint64_t in[8], out[8];
	uint32_t cap = BATCH_FIRST;
	unsigned char *keys = NULL, *vals = NULL;
	bool started = false;
	int err = 0;

	if (ksz > sizeof(in))
		return -EOPNOTSUPP;
	for (;;) {
		uint32_t count = cap;
		int e;

		if (!keys) {
			keys = malloc((size_t)cap * ksz);
			vals = malloc((size_t)cap * vsz);
			if (!keys || !vals) {
				err = -ENOMEM;
				break;
			}
		}
		e = del ? bpf_map_lookup_and_delete_batch(fd, started ? in : NULL, out, keys,
							 vals, &count, &opts) :
			  bpf_map_lookup_batch(fd, started ? in : NULL, out, keys, vals,
					       &count, &opts);
		if (e < 0)
			e = -errno; /* libbpf 0.x returned -1 */
		if (e == -ENOSPC && cap < (1u << 20)) {
			/* one bucket holds more elements than the batch */
			cap *= 4;
			free(keys);
			free(vals);
			keys = vals = NULL;
			continue;
		}
		if (e && e != -ENOENT) {
			if (!started && (e == -EINVAL || e == -EOPNOTSUPP || e == -ENOTSUP ||
					 e == -524 /* ENOTSUPP */))
				e = -EOPNOTSUPP;
			err = e;
			break;
		}
		for (uint32_t i = 0; i < count && !err; i++)
			err = fn(keys + (size_t)i * ksz, vals + (size_t)i * vsz, arg);
		if (err || e == -ENOENT)
			break;
		memcpy(in, out, sizeof(in));
		started = true;
	}
	free(keys);
	free(vals);
	return err;
}

/* fn for every element of map fd: in batches where the kernel takes them,
 * else key by key. */
static int walk_map(int fd, size_t ksz, size_t vsz, elem_fn fn, void *arg)
{
	unsigned char key[64], next[64], *val;
	bool have = false;
	int err = walk_batched(fd, ksz, vsz, false, fn, arg);

	if (err != -EOPNOTSUPP)
		return err;
	if (ksz > sizeof(key) || !(val = malloc(vsz)))
		return -ENOMEM;
	err = 0;
	while (!err && bpf_map_get_next_key(fd, have ? key : NULL, next) == 0) {
		memcpy(key, next, ksz);
		have = true;
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		err = fn(key, val, arg);
	}
	free(val);
	return err;
}

static int cmp_s32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/* dump_counts' state between the elements of its walks */
struct counts_walk {
	struct bprof_recording *rec;
	struct manifest *man;
	struct dump_totals *tot;
	int32_t *ids; /* every stack id the counts name, then sorted, unique */
	size_t nr_ids, cap_ids;
	uint32_t *pids;
	size_t nr_pids, cap_pids;
	/* the stacks of "ustacks" the counts name, by position in ids */
	struct profile_ustack **got;
};

static int grow_array(void **p, size_t *cap, size_t need, size_t first, size_t elem)
{
	size_t nc = *cap ? *cap : first;
	void *n;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	n = realloc(*p, nc * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = nc;
	return 0;
}

static int take_row(struct counts_walk *w, const struct profile_key *key, uint64_t val,
		    uint32_t state, uint64_t blocked_ns);

static int take_count(const void *k, const void *v, void *arg)
{
	uint64_t val;

	memcpy(&val, v, sizeof(val));
	return take_row(arg, k, val, BPROF_STATE_ON_CPU, 0);
}

/* A row of "offcpu_counts" (--off-cpu, --wall): the same key and stacks,
 * with the state and the blocked time (OFFCPU_STATE_* are the format's
 * BPROF_STATE_*). */
static int take_offcpu(const void *k, const void *v, void *arg)
{
	struct offcpu_key key;
	struct offcpu_val val;

	_Static_assert((int)OFFCPU_STATE_S == (int)BPROF_STATE_S && (int)OFFCPU_STATE_D == (int)BPROF_STATE_D &&
			       (int)OFFCPU_STATE_R == (int)BPROF_STATE_R && (int)OFFCPU_STATE_T == (int)BPROF_STATE_T,
		       "thread states differ");
	memcpy(&key, k, sizeof(key));
	memcpy(&val, v, sizeof(val));
	if (!key.state || key.state > BPROF_STATE_MAX || !val.samples)
		return 0;
	return take_row(arg, &key.k, val.samples, key.state, val.ns);
}

static int take_row(struct counts_walk *w, const struct profile_key *key, uint64_t val,
		    uint32_t state, uint64_t blocked_ns)
{
	struct bprof_count c = {0};

	c.state = state;
	c.blocked_ns = blocked_ns;
	c.pid = key->pid;
	c.tid = key->tid;
	c.exec_id = key->exec_id;
	c.user_stack_id = key->user_stack_id;
	c.kernel_stack_id = key->kernel_stack_id;
	c.kernel_ip = key->kernel_ip;
	c.map_gen = key->map_gen;
	c.slice = key->slice;
	c.count = val;
	memcpy(c.comm, key->comm, BPROF_COMM_LEN);
	c.comm[BPROF_COMM_LEN - 1] = 0;
	if (bprof_recording_add_count(w->rec, &c))
		return -ENOMEM;
	if (state == BPROF_STATE_ON_CPU)
		w->tot->samples += val;
	else
		w->tot->offcpu_samples += val;
	if (grow_array((void **)&w->ids, &w->cap_ids, w->nr_ids + 2, 4096, sizeof(*w->ids)) ||
	    grow_array((void **)&w->pids, &w->cap_pids, w->nr_pids + 1, 1024, sizeof(*w->pids)))
		return -ENOMEM;
	if (key->user_stack_id >= 0)
		w->ids[w->nr_ids++] = key->user_stack_id;
	if (key->kernel_stack_id >= 0)
		w->ids[w->nr_ids++] = key->kernel_stack_id;
	w->pids[w->nr_pids++] = key->pid;
	/* -K: no user stack, no mappings to keep */
	if (key->pid && key->user_stack_id != PROFILE_STACK_NONE &&
	    manifest_want(w->man, key->pid, key->exec_id, key->comm, key->user_stack_id >= 0,
			  key->map_gen))
		return -ENOMEM;
	return 0;
}

/* An element of "ustacks": kept when a count names it. */
static int take_ustack(const void *k, const void *v, void *arg)
{
	struct counts_walk *w = arg;
	const int32_t *at;
	int32_t id;

	memcpy(&id, k, sizeof(id));
	at = bsearch(&id, w->ids, w->nr_ids, sizeof(*w->ids), cmp_s32);
	if (!at || w->got[at - w->ids])
		return 0;
	struct profile_ustack *us = malloc(sizeof(*us));

	if (!us)
		return -ENOMEM;
	memcpy(us, v, sizeof(*us));
	w->got[at - w->ids] = us;
	return 0;
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
	struct counts_walk w = { .rec = rec, .man = man, .tot = tot };
	uint64_t ips[PROFILE_MAX_USTACK_DEPTH]; /* the kernel's stack maps: up to 127 */
	size_t nr_uniq = 0;
	int err = 0;

	if (!us)
		return -ENOMEM;
	err = walk_map(fd, sizeof(struct profile_key), sizeof(uint64_t), take_count, &w);
	if (err == -ENOMEM)
		goto out;
	/* off-CPU rows, of the same set */
	if (offcpu_enabled(obj) &&
	    walk_map(bpf_map__fd(gen ? obj->maps.offcpu_counts_b : obj->maps.offcpu_counts),
		     sizeof(struct offcpu_key), sizeof(struct offcpu_val), take_offcpu, &w) == -ENOMEM) {
		err = -ENOMEM;
		goto out;
	}
	err = 0; /* a map that cannot be read (not expected) has no counts */
	if (w.nr_pids)
		qsort(w.pids, w.nr_pids, sizeof(*w.pids), cmp_s32);
	for (size_t i = 0; i < w.nr_pids; i++)
		if (w.pids[i] && (i == 0 || w.pids[i] != w.pids[i - 1]))
			tot->processes++;
	if (w.nr_ids)
		qsort(w.ids, w.nr_ids, sizeof(*w.ids), cmp_s32);
	for (size_t i = 0; i < w.nr_ids; i++)
		if (i == 0 || w.ids[i] != w.ids[i - 1])
			w.ids[nr_uniq++] = w.ids[i];
	w.nr_ids = nr_uniq;
	/* the stacks in "ustacks", read in batches; one not found there (the
	 * kernel takes no batches, or its element went meanwhile) is looked
	 * up by id below */
	if (nr_uniq && (own || w.ids[nr_uniq - 1] >= PROFILE_KWALK_STACK_BASE)) {
		w.got = calloc(nr_uniq, sizeof(*w.got));
		if (!w.got)
			goto nomem;
		if (walk_batched(ufd, sizeof(int32_t), sizeof(struct profile_ustack), false,
				 take_ustack, &w) == -ENOMEM)
			goto nomem;
	}
	for (size_t i = 0; i < nr_uniq; i++) {
		struct bprof_stack s = {0};
		int32_t id = w.ids[i];
		uint32_t n = 0;

		memset(ips, 0, sizeof(ips));
		/* ids from the second-chance map are offset by base2; stacks
		 * walked by the unwinder have ids of their own, and so has
		 * every stack when the kernel's stack maps are not used, and
		 * every stack the off-CPU programs of older kernels took
		 * (PROFILE_KWALK_STACK_BASE) */
		int32_t local = id >= base2 ? id - base2 : id;
		int lerr = 0;
		uint32_t flags = 0;

		if (own || id >= PROFILE_KWALK_STACK_BASE) {
			const struct profile_ustack *u = w.got ? w.got[i] : NULL;

			if (!u) {
				lerr = bpf_map_lookup_elem(ufd, &id, us);
				u = us;
			}
			if (!lerr) {
				n = u->nr < PROFILE_MAX_USTACK_DEPTH ? u->nr : PROFILE_MAX_USTACK_DEPTH;
				memcpy(ips, u->ips, n * sizeof(*ips));
				flags = u->flags;
			}
		} else {
			lerr = bpf_map_lookup_elem(id >= base2 ? sfd2 : sfd, &local, ips);
			while (!lerr && n < PROFILE_MAX_STACK_DEPTH && ips[n])
				n++;
		}
		if (lerr) {
			/* Not expected (ids are never deleted), but a count must
			 * never point at a stack the file lacks: the writer would
			 * refuse the whole recording.  Mark those stacks lost. */
			for (uint64_t c = 0; c < rec->nr_counts; c++) {
				if (rec->counts[c].user_stack_id == id)
					rec->counts[c].user_stack_id = -ENOENT;
				if (rec->counts[c].kernel_stack_id == id)
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
		s.flags = id >= PROFILE_CFI_STACK_BASE ? flags & BPROF_USTACK_FLAGS_ALL : 0;
		s.id = id;
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
	if (w.got)
		for (size_t i = 0; i < nr_uniq; i++)
			free(w.got[i]);
	free(w.got);
	free(us);
	free(w.ids);
	free(w.pids);
	return err;
}

static int ignore_elem(const void *k, const void *v, void *arg)
{
	(void)k, (void)v, (void)arg;
	return 0;
}

/* Delete every key of map fd (quiet: nothing adds meanwhile): in batches
 * where the kernel takes them, else key by key, the next key found before
 * the current one goes, so deleting never restarts the walk. */
static int clear_map(int fd, size_t key_size, size_t value_size)
{
	unsigned char key[64], next[64];
	bool have = false;
	int err = walk_batched(fd, key_size, value_size, true, ignore_elem, NULL);

	if (err != -EOPNOTSUPP)
		return err;
	err = 0;
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
		gen ? obj->maps.offcpu_counts_b : obj->maps.offcpu_counts,
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int e = clear_map(bpf_map__fd(maps[i]), bpf_map__key_size(maps[i]),
				  bpf_map__value_size(maps[i]));

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
	dump_since(sum, base->losses, PROFILE_LOSS_MAX);
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
		[UNWIND_STAT_SAMPLES_NO_ROOM] = BPROF_UNW_SAMPLES_TABLE_NO_ROOM,
		[UNWIND_STAT_FP_NO_ROOM] = BPROF_UNW_FALLBACK_NO_ROOM,
		[UNWIND_STAT_SAMPLES_UNMAPPED] = BPROF_UNW_SAMPLES_STALE_MAPPINGS,
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
	dump_since(sum, base->unwind, UNWIND_STAT_MAX);
	/* (the older-table counters after SAMPLES_UNMAPPED are not in the
	 * file: prof-record -v says them) */
	for (int i = 0; i <= UNWIND_STAT_SAMPLES_UNMAPPED; i++)
		u->counters[from_bpf[i]] = sum[i];
	/* the three are exclusive: without an image table no object is found,
	 * and a walk that met a pending table is not counted as unmapped */
	rec->losses.user_stack_before_table = sum[UNWIND_STAT_SAMPLES_FP_ONLY] +
					      sum[UNWIND_STAT_SAMPLES_PENDING] +
					      sum[UNWIND_STAT_SAMPLES_UNMAPPED];

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
	u->counters[BPROF_UNW_OBJECTS_EVICTED] = us.objects_evicted;
	u->counters[BPROF_UNW_OBJECTS_RELOADED] = us.objects_reloaded;
	u->counters[BPROF_UNW_TABLE_BYTES_PEAK] = us.peak_bytes;
	u->counters[BPROF_UNW_MEMORY_BUDGET] = us.budget;
}

static int cmp_miss(const void *a, const void *b)
{
	const struct bprof_unwind_miss *x = a, *y = b;

	return x->object_index < y->object_index ? -1 : x->object_index > y->object_index;
}

int dump_unwind_misses(struct bprof_recording *rec, const struct unwinder *unw,
		       struct manifest *man)
{
	struct unwinder_miss *ms;
	long n = unwinder_misses(unw, &ms);
	int err = 0;

	if (n <= 0 || rec->unwind.mode == BPROF_UNWIND_UNKNOWN)
		return n < 0 ? (int)n : 0;
	rec->unwind.misses = calloc(n, sizeof(*rec->unwind.misses));
	if (!rec->unwind.misses) {
		free(ms);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		struct bprof_unwind_miss *m = &rec->unwind.misses[rec->unwind.nr_misses];

		err = manifest_emit_object(man, rec, ms[i].idx, &m->object_index);
		if (err == -ENOMEM)
			break;
		if (err) {
			err = 0; /* not an object the manifest has: cannot be named */
			continue;
		}
		m->flags = ms[i].sampled ? BPROF_UNWIND_MISS_SAMPLED : 0;
		m->rows = ms[i].rows;
		rec->unwind.nr_misses++;
	}
	free(ms);
	qsort(rec->unwind.misses, rec->unwind.nr_misses, sizeof(*rec->unwind.misses), cmp_miss);
	return err;
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
		      (env->per_thread || env->nr_tids ? BPROF_META_PER_THREAD : 0);
	if (!meta->hostname || !meta->kernel_release || !meta->arch || !meta->recorder_version ||
	    !meta->event)
		return -ENOMEM;
	return 0;
}
