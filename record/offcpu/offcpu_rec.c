// SPDX-License-Identifier: Apache-2.0
/*
 * offcpu_rec.c - see offcpu_rec.h; the reasoning is in record/DESIGN.md, "Off-CPU
 * and wall-clock time".
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bprof.h"
#include "loader.h"
#include "offcpu/offcpu_rec.h"
#include "profile.skel.h"

bool offcpu_supported(const struct env *env, bool own_stacks, char *msg, size_t len)
{
	if (!env->off_cpu)
		return true;
	if (env->cycles) {
		snprintf(msg, len, "%s counts time in periods of the cpu-clock event; not with -e cycles",
			 env->off_cpu == OFFCPU_MODE_WALL ? "--wall" : "--off-cpu");
		return false;
	}
	if (!own_stacks) {
		/* the off-CPU stacks are stored like own_stacks' (ids of
		 * their own in "ustacks"), which needs Linux 6.1 */
		snprintf(msg, len, "%s needs Linux 6.1 or later (growing BPF hash maps in tracing programs)",
			 env->off_cpu == OFFCPU_MODE_WALL ? "--wall" : "--off-cpu");
		return false;
	}
	return true;
}

void offcpu_configure(struct profile_bpf *obj, const struct env *env, bool cfi, long counts)
{
	bool on = env->off_cpu != 0;

	bpf_program__set_autoload(obj->progs.handle_offcpu_switch, on);
	bpf_program__set_autoload(obj->progs.handle_offcpu_resume, on);
	bpf_program__set_autoload(obj->progs.handle_offcpu_exit, on);
	bpf_program__set_autoload(obj->progs.handle_offcpu_start, on);
	bpf_program__set_autoload(obj->progs.handle_offcpu_end, on);
	if (!on) {
		bpf_map__set_max_entries(obj->maps.offcpu_counts, 1);
		bpf_map__set_max_entries(obj->maps.offcpu_counts_b, 1);
		return;
	}
	obj->rodata->offcpu_mode = env->off_cpu == 2 ? OFFCPU_MODE_WALL : OFFCPU_MODE_BLOCKED;
	/* -F HZ: 1/F s; -c N: N ns of cpu-clock */
	obj->rodata->offcpu_period_ns = env->period ? (uint64_t)env->period
						    : 1000000000ull / (uint64_t)env->freq;
	if (!obj->rodata->offcpu_period_ns)
		obj->rodata->offcpu_period_ns = 1;
	obj->rodata->offcpu_cfi = cfi;
	/* a blocked stack is a row per state, as an on-CPU one per kernel ip */
	bpf_map__set_max_entries(obj->maps.offcpu_counts, counts > 0 ? counts : 1);
	/* --rotate: the second set, as counts_b */
	bpf_map__set_max_entries(obj->maps.offcpu_counts_b, env->rotate && counts > 0 ? counts : 1);
	bpf_map__set_map_flags(obj->maps.offcpu_counts,
			       bpf_map__map_flags(obj->maps.offcpu_counts) | BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(obj->maps.offcpu_counts_b,
			       bpf_map__map_flags(obj->maps.offcpu_counts_b) | BPF_F_NO_PREALLOC);
}

bool offcpu_enabled(const struct profile_bpf *obj)
{
	return obj->rodata->offcpu_mode != 0;
}

/* Run a task iterator to its end (what it prints: nothing). */
static int run_iter(int prog_fd)
{
	char buf[256];
	int link, fd, err = 0;
	ssize_t n;

	if (prog_fd < 0)
		return -ENOENT;
	/* the passes' time is this CPU's scheduler clock (offcpu_clock() in
	 * bpf/offcpu.bpf.h), updated by a pass through the scheduler:
	 * microseconds old, not up to a tick */
	sched_yield();
	link = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, NULL);
	if (link < 0)
		return -errno;
	fd = bpf_iter_create(link);
	if (fd < 0) {
		err = -errno;
		close(link);
		return err;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = -errno;
	close(fd);
	close(link);
	return err;
}

int offcpu_start(struct profile_bpf *obj, const struct loader *ld)
{
	if (!offcpu_enabled(obj))
		return 0;
	return run_iter(loader_prog_fd(ld, obj->progs.handle_offcpu_start));
}

int offcpu_end(struct profile_bpf *obj, const struct loader *ld, uint64_t *found, uint64_t *left)
{
	int end_fd = loader_prog_fd(ld, obj->progs.handle_offcpu_end), err;

	*found = *left = 0;
	if (!offcpu_enabled(obj))
		return 0;
	obj->bss->offcpu_ended = true;
	/* A switch, resume or exit program that read the flag before it was
	 * set may still be running on another CPU, and would then race with
	 * the pass for the threads' state.  Each runs inside an RCU read-side
	 * critical section (the kernel's __bpf_trace_run()), so one RCU grace
	 * period is the end of all of them, and any that starts after it sees
	 * the flag: membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu()
	 * for user space (record/DESIGN.md, "Blocks that span the start or
	 * the end").  It refuses on nohz_full kernels: there, a wait of 10 ms,
	 * a thousand times what the programs run, is the fallback. */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
		usleep(10000);
	err = run_iter(end_fd);
	if (err)
		return err;
	*found = obj->bss->offcpu_end_left;
	obj->bss->offcpu_end_left = 0;
	err = run_iter(end_fd);
	*left = obj->bss->offcpu_end_left;
	return err;
}

void offcpu_stats(const struct profile_bpf *obj, uint64_t *sum, int nr_cpus)
{
	int fd = bpf_map__fd(obj->maps.offcpu_stats);
	/* one element, OFFCPU_STAT_MAX counters per CPU */
	uint64_t *v = calloc((nr_cpus > 0 ? (size_t)nr_cpus : 1) * OFFCPU_STAT_MAX, sizeof(*v));
	uint32_t zero = 0;

	memset(sum, 0, OFFCPU_STAT_MAX * sizeof(*sum));
	if (!v)
		return;
	if (!bpf_map_lookup_elem(fd, &zero, v))
		for (int c = 0; c < nr_cpus; c++)
			for (int k = 0; k < OFFCPU_STAT_MAX; k++)
				sum[k] += v[(size_t)c * OFFCPU_STAT_MAX + k];
	free(v);
}

void offcpu_dump(const struct profile_bpf *obj, struct bprof_offcpu *out, int nr_cpus,
		 uint64_t *base)
{
	uint64_t sum[OFFCPU_STAT_MAX];

	memset(out, 0, sizeof(*out));
	if (!offcpu_enabled(obj))
		return;
	offcpu_stats(obj, sum, nr_cpus);
	for (int i = 0; i < OFFCPU_STAT_MAX; i++) {
		uint64_t s = sum[i];

		sum[i] = s >= base[i] ? s - base[i] : 0;
		base[i] = s;
	}
	out->mode = obj->rodata->offcpu_mode == OFFCPU_MODE_WALL ? BPROF_OFFCPU_WALL
								 : BPROF_OFFCPU_BLOCKED;
	out->period_ns = obj->rodata->offcpu_period_ns;
	out->blocks = sum[OFFCPU_STAT_BLOCKS];
	out->blocks_short = sum[OFFCPU_STAT_BLOCKS_SHORT];
	out->blocked_ns = sum[OFFCPU_STAT_BLOCKED_NS];
	out->walks = sum[OFFCPU_STAT_WALKS];
	out->no_user_stack = sum[OFFCPU_STAT_NO_USER_WALK];
	out->lost = sum[OFFCPU_STAT_LOST];
}
