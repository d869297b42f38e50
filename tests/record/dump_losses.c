/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-CPU counters read at dump (record/dump.c: dump_losses,
 * dump_unwind_stats) are the exact sum over every possible CPU, less what
 * earlier files carried (issue 50: a loop that dropped one CPU passed the
 * e2e tests, which only ask for "above zero").  The skeleton's "losses"
 * and "unwind_stats" maps are replaced, before any load, by per-CPU arrays
 * of the same shape made here (bpf_map__reuse_fd), in which every CPU holds
 * a value of its own; nothing is loaded into the kernel.  Needs root (a
 * BPF map); with CI=true a refusal fails.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dump.h"
#include "offcpu/offcpu_rec.h"
#include "profile.skel.h"

/* dump.c's other functions, which these tests do not call. */
bool offcpu_enabled(const struct profile_bpf *obj)
{
	(void)obj;
	return false;
}
int manifest_want(struct manifest *m, uint32_t pid, uint32_t exec_id, const char *comm,
		  bool need, uint32_t map_gen)
{
	(void)m, (void)pid, (void)exec_id, (void)comm, (void)need, (void)map_gen;
	return -ENOSYS;
}
int manifest_emit_object(struct manifest *m, struct bprof_recording *rec, uint32_t idx,
			 uint32_t *out)
{
	(void)m, (void)rec, (void)idx, (void)out;
	return -ENOSYS;
}
void unwinder_stats(const struct unwinder *u, struct unwinder_stats *st)
{
	(void)u;
	memset(st, 0, sizeof(*st));
}
long unwinder_misses(const struct unwinder *u, struct unwinder_miss **out)
{
	(void)u;
	*out = NULL;
	return 0;
}

/* CPU c's value of counter i: distinct for every (i, c), none zero, so
 * that a CPU left out or counted twice changes every sum. */
static uint64_t value(uint32_t i, int c, uint64_t round)
{
	return round * 1000000 + (uint64_t)(i + 1) * 1000 + (uint64_t)c * 7 + 1;
}

static uint64_t expected(uint32_t i, int ncpus, uint64_t round)
{
	uint64_t s = 0;

	for (int c = 0; c < ncpus; c++)
		s += value(i, c, round);
	return s;
}

struct fixture {
	struct profile_bpf *obj;
	int losses, unwind, ncpus;
};

/* A per-CPU array of n u64 counters: its fd. */
static int percpu_array(const char *name, uint32_t n)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, name, sizeof(uint32_t), sizeof(uint64_t),
				n, NULL);

	if (fd < 0) {
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			cr_assert_fail("cannot create a BPF map (%s): needs root", strerror(errno));
		cr_skip_test("cannot create a BPF map (%s): needs root", strerror(errno));
	}
	return fd;
}

/* Round r's values into every counter of fd. */
static void fill(int fd, uint32_t n, int ncpus, uint64_t round)
{
	uint64_t *v = calloc((size_t)ncpus, sizeof(*v));

	cr_assert_not_null(v);
	for (uint32_t i = 0; i < n; i++) {
		for (int c = 0; c < ncpus; c++)
			v[c] = value(i, c, round);
		cr_assert_eq(bpf_map_update_elem(fd, &i, v, BPF_ANY), 0, "%s", strerror(errno));
	}
	free(v);
}

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->ncpus = libbpf_num_possible_cpus();
	cr_assert_gt(f->ncpus, 0);
	f->obj = profile_bpf__open();
	cr_assert_not_null(f->obj, "profile_bpf__open: %s", strerror(errno));
	f->losses = percpu_array("losses", PROFILE_LOSS_MAX);
	f->unwind = percpu_array("unwind_stats", UNWIND_STAT_MAX);
	cr_assert_eq(bpf_map__max_entries(f->obj->maps.losses), PROFILE_LOSS_MAX);
	cr_assert_eq(bpf_map__reuse_fd(f->obj->maps.losses, f->losses), 0);
	cr_assert_eq(bpf_map__reuse_fd(f->obj->maps.unwind_stats, f->unwind), 0);
}

static void teardown(struct fixture *f)
{
	profile_bpf__destroy(f->obj);
	close(f->losses);
	close(f->unwind);
}

Test(dump, losses_are_the_sum_over_every_cpu)
{
	struct fixture f;
	struct dump_base base = {0};
	struct bprof_losses l;

	setup(&f);
	cr_log_info("%d possible CPUs", f.ncpus);
	fill(f.losses, PROFILE_LOSS_MAX, f.ncpus, 1);
	memset(&l, 0xff, sizeof(l));
	dump_losses(f.obj, &l, f.ncpus, &base);
	cr_expect_eq(l.user_stack_enomem, expected(PROFILE_LOSS_USER_ENOMEM, f.ncpus, 1));
	cr_expect_eq(l.user_stack_eexist, expected(PROFILE_LOSS_USER_EEXIST, f.ncpus, 1));
	cr_expect_eq(l.kernel_stack_enomem, expected(PROFILE_LOSS_KERNEL_ENOMEM, f.ncpus, 1));
	cr_expect_eq(l.kernel_stack_eexist, expected(PROFILE_LOSS_KERNEL_EEXIST, f.ncpus, 1));
	cr_expect_eq(l.counts_full, expected(PROFILE_LOSS_COUNTS_FULL, f.ncpus, 1));
	cr_expect_eq(l.events_lost, expected(PROFILE_LOSS_EVENTS, f.ncpus, 1));
	cr_expect_eq(l.other, expected(PROFILE_LOSS_OTHER, f.ncpus, 1));

	/* the next file (--rotate) carries what was counted since */
	fill(f.losses, PROFILE_LOSS_MAX, f.ncpus, 3);
	dump_losses(f.obj, &l, f.ncpus, &base);
	cr_expect_eq(l.user_stack_enomem, expected(PROFILE_LOSS_USER_ENOMEM, f.ncpus, 3) -
						  expected(PROFILE_LOSS_USER_ENOMEM, f.ncpus, 1));
	cr_expect_eq(l.other,
		     expected(PROFILE_LOSS_OTHER, f.ncpus, 3) - expected(PROFILE_LOSS_OTHER, f.ncpus, 1));
	teardown(&f);
}

Test(dump, unwind_counters_are_the_sum_over_every_cpu)
{
	struct fixture f;
	uint64_t sum[UNWIND_STAT_MAX];

	setup(&f);
	fill(f.unwind, UNWIND_STAT_MAX, f.ncpus, 2);
	dump_unwind_stats(f.obj, sum, f.ncpus);
	for (uint32_t i = 0; i < UNWIND_STAT_MAX; i++)
		cr_expect_eq(sum[i], expected(i, f.ncpus, 2), "counter %u: %llu", i,
			     (unsigned long long)sum[i]);
	teardown(&f);
}
