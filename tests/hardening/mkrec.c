/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mkrec - write small hostile-but-valid .bprof files for the hardening
 * tests (format/bprof.h builders; the writer validates them).
 *
 *   mkrec empty-comm OUT          a row with an empty comm and no frames at all
 *   mkrec huge-counts OUT         two stacks whose counts add past 2^64
 *   mkrec nosym OUT ELF BUILDID   a user frame in ELF (recorded with its real
 *                                 build-id) at file offset 0, where no symbol is;
 *                                 BUILDID "none": recorded without build-id
 *                                 (fallback hash 0, size 0), as an unreadable file
 *   mkrec control-comm OUT        comms and a path made of control bytes only
 *   mkrec many OUT N              N distinct unmapped user stacks (8 frames):
 *                                 a large output with --addresses
 *   mkrec jit-split OUT A B       main->func_a A times and main->func_b B times,
 *                                 named by a recorded perf map (JIT code): a
 *                                 recording whose shares are exact, for diffs
 *   mkrec access-user OUT         an ACCESS section (format 1.2) of a recorder
 *                                 run as uid 65534 with CAP_BPF+CAP_PERFMON
 *                                 only: map_files closed, other users'
 *                                 processes and unreadable files refused,
 *                                 kallsyms hidden; counters 40, 2, 3, 12
 *   mkrec access-root OUT         an ACCESS section of a root recorder that
 *                                 could read everything
 *   mkrec access-caps OUT         uid 1000 with CAP_SYS_PTRACE, CAP_SYSLOG,
 *                                 CAP_BPF, CAP_PERFMON and capability 12, still
 *                                 refused other users' processes (2)
 *   mkrec deep OUT                pairs of stacks equal but for one end:
 *                                 user stacks of 65, 128, 247 (the
 *                                 recorder's limit) and 1000 frames named by
 *                                 a perf map, kernel stacks of 127 (the
 *                                 kernel's) named by ksyms; counts 3, 5, 7...
 *                                 in the order of deep()'s table
 *                                 (tests/report/deep_stacks.sh)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bprof.h"

static void die(const char *what, int err, const struct bprof_error *e)
{
	fprintf(stderr, "mkrec: %s: %s %s\n", what, bprof_strerror(err), e ? e->message : "");
	exit(1);
}

static char *dup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		exit(1);
	return d;
}

static struct bprof_recording *base(void)
{
	struct bprof_recording *r;
	int err = bprof_recording_create(&r);
	if (err)
		die("create", err, NULL);
	r->meta.hostname = dup("mkrec");
	r->meta.kernel_release = dup("6.1.0");
	r->meta.arch = dup("x86_64");
	r->meta.recorder_version = dup("mkrec");
	r->meta.options = dup("");
	r->meta.event = dup("cpu-clock");
	r->meta.sample_freq = 49;
	r->meta.ncpus = 1;
	r->meta.flags = BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS;
	r->kernel.release = dup("6.1.0");
	return r;
}

static void add_count(struct bprof_recording *r, uint32_t pid, const char *comm, int32_t us,
		      int32_t ks, uint64_t kip, uint64_t count)
{
	struct bprof_count c = { .pid = pid, .exec_id = 1, .user_stack_id = us,
				 .kernel_stack_id = ks, .kernel_ip = kip, .count = count };
	strncpy(c.comm, comm, BPROF_COMM_LEN - 1);
	int err = bprof_recording_add_count(r, &c);
	if (err)
		die("add_count", err, NULL);
}

static void add_stack(struct bprof_recording *r, uint32_t id, uint64_t ip)
{
	struct bprof_stack s = { .id = id, .nr_ips = 1, .ips = malloc(sizeof(uint64_t)) };
	if (!s.ips)
		exit(1);
	s.ips[0] = ip;
	int err = bprof_recording_add_stack(r, &s);
	if (err)
		die("add_stack", err, NULL);
}

static void add_proc(struct bprof_recording *r, uint32_t pid, const char *comm, uint32_t obj,
		     uint64_t start, uint64_t end)
{
	struct bprof_process p = { .pid = pid, .ns_pid = pid, .exec_id = 1, .nr_mappings = 1 };
	strncpy(p.comm, comm, BPROF_COMM_LEN - 1);
	p.mappings = calloc(1, sizeof(*p.mappings));
	if (!p.mappings)
		exit(1);
	p.mappings[0] = (struct bprof_mapping){ start, end, 0, obj, BPROF_MAP_READ, 0 };
	int err = bprof_recording_add_process(r, &p);
	if (err)
		die("add_process", err, NULL);
}

/* The deep recording: frame i of a user stack is "u<i>" (i < 1024), its
 * root "root_a"/"root_b" or its leaf "leaf_a"/"leaf_b" where a pair
 * differs there; the kernel's the same with "k<i>", "kroot_a"...  Frames
 * hold return addresses (+0x10).  Pairs differ at the root, the end of
 * the stack a key or hash cut at some depth loses, and at the leaf, the
 * end of the text a cut in the rendered folded line loses. */
#define DEEP_JIT   0x7f2000000000ull
#define DEEP_KBASE 0xffffffff81000000ull
#define DEEP_NAMES 1024

/* Frame name index of the pair's variant k (0: a, 1: b) at its root or leaf. */
enum { DEEP_ROOT = DEEP_NAMES, DEEP_LEAF = DEEP_NAMES + 2 };

static void deep_stack(struct bprof_recording *r, uint32_t id, uint32_t n, uint64_t base,
		       uint32_t root, uint32_t leaf)
{
	struct bprof_stack s = { .id = id, .nr_ips = n, .ips = calloc(n, sizeof(uint64_t)) };

	if (!s.ips)
		exit(1);
	for (uint32_t i = 0; i < n; i++)
		s.ips[i] = base + 0x100 * (uint64_t)(i == 0 ? leaf : i == n - 1 ? root : i) + 0x10;
	int err = bprof_recording_add_stack(r, &s);
	if (err)
		die("add_stack", err, NULL);
}

static void deep(struct bprof_recording *r)
{
	/* pairs: user depth, kernel depth (0: none), where they differ */
	static const struct {
		uint32_t user, kernel;
		char where; /* 'r' user root, 'l' user leaf, 'R' kernel root, 'L' kernel leaf */
	} pairs[] = {
		{ 65, 0, 'r' },  { 128, 0, 'r' }, { 247, 0, 'r' }, { 1000, 0, 'r' },
		{ 247, 0, 'l' }, { 1000, 0, 'l' }, { 0, 127, 'R' }, { 0, 127, 'L' },
		{ 247, 127, 'r' }, { 247, 127, 'L' },
	};
	struct bprof_process p = { .pid = 21, .ns_pid = 21, .exec_id = 1, .nr_mappings = 1 };
	static const char *const ends[] = { "root_a", "root_b", "leaf_a", "leaf_b" };
	size_t cap = (DEEP_NAMES + 4) * 32, len = 0;
	char *map = malloc(cap);
	uint64_t count = 3;
	int err;

	if (!map)
		exit(1);
	for (uint32_t i = 0; i < DEEP_NAMES + 4; i++) {
		unsigned long long at = DEEP_JIT + 0x100 * (uint64_t)i;

		if (i < DEEP_NAMES)
			len += (size_t)snprintf(map + len, cap - len, "%llx 100 u%u\n", at, i);
		else
			len += (size_t)snprintf(map + len, cap - len, "%llx 100 %s\n", at,
						ends[i - DEEP_NAMES]);
	}
	strcpy(p.comm, "deep");
	p.perf_map = map;
	p.perf_map_len = len;
	p.mappings = calloc(1, sizeof(*p.mappings));
	if (!p.mappings)
		exit(1);
	p.mappings[0] = (struct bprof_mapping){ DEEP_JIT, DEEP_JIT + 0x100000, 0, BPROF_NO_OBJECT,
						BPROF_MAP_ANON | BPROF_MAP_READ, 0 };
	if ((err = bprof_recording_add_process(r, &p)))
		die("add_process", err, NULL);

	r->kernel.stext = DEEP_KBASE;
	r->kernel.nr_ksyms = DEEP_NAMES + 4;
	r->kernel.ksyms = calloc(r->kernel.nr_ksyms, sizeof(*r->kernel.ksyms));
	if (!r->kernel.ksyms)
		exit(1);
	for (uint32_t i = 0; i < r->kernel.nr_ksyms; i++) {
		char name[32];

		if (i < DEEP_NAMES)
			snprintf(name, sizeof(name), "k%u", i);
		else
			snprintf(name, sizeof(name), "k%s", ends[i - DEEP_NAMES]);
		r->kernel.ksyms[i] = (struct bprof_ksym){ DEEP_KBASE + 0x100 * (uint64_t)i, dup(name),
							  BPROF_NO_OBJECT };
	}

	for (uint32_t d = 0; d < sizeof(pairs) / sizeof(pairs[0]); d++)
		for (uint32_t k = 0; k < 2; k++) {
			int32_t us = BPROF_STACK_NONE, ks = BPROF_STACK_NONE;
			char w = pairs[d].where;

			if (pairs[d].user) {
				us = (int32_t)(1 + 2 * d + k);
				deep_stack(r, (uint32_t)us, pairs[d].user, DEEP_JIT,
					   DEEP_ROOT + (w == 'r' ? k : 0), w == 'l' ? DEEP_LEAF + k : 0);
			}
			if (pairs[d].kernel) {
				ks = (int32_t)(100 + 2 * d + k);
				deep_stack(r, (uint32_t)ks, pairs[d].kernel, DEEP_KBASE,
					   DEEP_ROOT + (w == 'R' ? k : 0), w == 'L' ? DEEP_LEAF + k : 0);
			}
			add_count(r, 21, "deep", us, ks, 0, count);
			count += 2;
		}
}

static int hexbyte(const char *s)
{
	unsigned v;
	return sscanf(s, "%2x", &v) == 1 ? (int)v : -1;
}

int main(int argc, char **argv)
{
	struct bprof_recording *r;
	struct bprof_error e;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: mkrec empty-comm|huge-counts|control-comm|access-user|access-root|access-caps OUT | mkrec many OUT N | mkrec nosym OUT ELF BUILDID | mkrec jit-split OUT A B | mkrec deep OUT\n");
		return 2;
	}
	r = base();
	if (!strcmp(argv[1], "empty-comm")) {
		/* no user stack (-EFAULT), no kernel stack, no kernel ip */
		add_count(r, 7, "", -EFAULT, -EFAULT, 0, 5);
		add_count(r, 8, "named", -EFAULT, -EFAULT, 0, 3);
	} else if (!strcmp(argv[1], "huge-counts")) {
		add_stack(r, 1, 0x1000);
		add_stack(r, 2, 0x2000);
		add_count(r, 7, "big", 1, BPROF_STACK_NONE, 0, 1ull << 63);
		add_count(r, 7, "big", 2, BPROF_STACK_NONE, 0, 1ull << 63);
	} else if (!strcmp(argv[1], "control-comm")) {
		struct bprof_object o = { .path = dup("/\x1b[2J\x1b]0;pwned\x07/lib.so") };
		uint32_t idx;
		if ((err = bprof_recording_add_object(r, &o, &idx)))
			die("add_object", err, NULL);
		add_proc(r, 9, "\x1b[31m\r\b", idx, 0x400000, 0x500000);
		add_stack(r, 1, 0x400100);
		add_count(r, 9, "\x1b[31m\r\b", 1, -EFAULT, 0, 4);
		add_count(r, 10, "\x01\x02\x03", -EFAULT, -EFAULT, 0, 2);
	} else if (!strcmp(argv[1], "many") && argc == 4) {
		long n = strtol(argv[3], NULL, 10);
		for (long i = 0; i < n; i++) {
			struct bprof_stack st = { .id = (uint32_t)i, .nr_ips = 8,
						  .ips = calloc(8, sizeof(uint64_t)) };
			if (!st.ips)
				exit(1);
			for (int j = 0; j < 8; j++)
				st.ips[j] = 0x100000 + (uint64_t)i * 0x100 + (uint64_t)j;
			if ((err = bprof_recording_add_stack(r, &st)))
				die("add_stack", err, NULL);
			add_count(r, 12, "many", (int32_t)i, BPROF_STACK_NONE, 0, 1 + (uint64_t)i % 7);
		}
	} else if (!strcmp(argv[1], "jit-split") && argc == 5) {
		static const char map[] = "7f1000000000 100 main\n7f1000000100 100 func_a\n"
					  "7f1000000200 100 func_b\n";
		struct bprof_process p = { .pid = 13, .ns_pid = 13, .exec_id = 1, .nr_mappings = 1 };
		struct bprof_stack st[2] = {
			{ .id = 1, .nr_ips = 2, .ips = calloc(2, sizeof(uint64_t)) },
			{ .id = 2, .nr_ips = 2, .ips = calloc(2, sizeof(uint64_t)) },
		};

		strcpy(p.comm, "split");
		p.mappings = calloc(1, sizeof(*p.mappings));
		p.perf_map = dup(map);
		p.perf_map_len = sizeof(map) - 1;
		if (!p.mappings || !st[0].ips || !st[1].ips)
			exit(1);
		p.mappings[0] = (struct bprof_mapping){ 0x7f1000000000ull, 0x7f1000010000ull, 0,
							BPROF_NO_OBJECT, BPROF_MAP_ANON | BPROF_MAP_READ, 0 };
		if ((err = bprof_recording_add_process(r, &p)))
			die("add_process", err, NULL);
		for (int i = 0; i < 2; i++) {
			st[i].ips[0] = 0x7f1000000110ull + 0x100 * (uint64_t)i; /* func_a, func_b */
			st[i].ips[1] = 0x7f1000000020ull;                      /* return into main */
			if ((err = bprof_recording_add_stack(r, &st[i])))
				die("add_stack", err, NULL);
			add_count(r, 13, "split", st[i].id, BPROF_STACK_NONE, 0,
				  strtoull(argv[3 + i], NULL, 10));
		}
	} else if (!strncmp(argv[1], "access-", 7)) {
		add_count(r, 7, "acc", -EFAULT, -EFAULT, 0, 5);
		r->access.present = 1;
		if (!strcmp(argv[1], "access-user")) {
			r->access.euid = 65534;
			r->access.capabilities = 1ull << 38 | 1ull << 39; /* PERFMON, BPF */
			r->access.counters[BPROF_ACC_OBJECTS_BY_PATH] = 40;
			r->access.counters[BPROF_ACC_OBJECTS_UNVERIFIED] = 2;
			r->access.counters[BPROF_ACC_OBJECTS_DENIED] = 3;
			r->access.counters[BPROF_ACC_PROCESSES_DENIED] = 12;
		} else if (!strcmp(argv[1], "access-root")) {
			r->access.flags = BPROF_ACCESS_FLAGS_ALL;
			r->access.capabilities = (1ull << 41) - 1; /* CAP_CHOWN .. CAP_CHECKPOINT_RESTORE */
		} else if (!strcmp(argv[1], "access-caps")) {
			r->access.euid = 1000;
			r->access.flags = BPROF_ACCESS_MAP_FILES | BPROF_ACCESS_ANY_FILE |
					  BPROF_ACCESS_KALLSYMS;
			r->access.capabilities = 1ull << 12 | 1ull << 19 | 1ull << 34 | 1ull << 38 |
						 1ull << 39;
			r->access.counters[BPROF_ACC_PROCESSES_DENIED] = 2;
		} else {
			return 2;
		}
	} else if (!strcmp(argv[1], "deep")) {
		deep(r);
	} else if (!strcmp(argv[1], "nosym") && argc == 5) {
		struct bprof_object o = { .path = dup(argv[3]), .flags = BPROF_OBJ_HAS_BUILD_ID };
		uint32_t idx;
		size_t n = strlen(argv[4]) / 2;
		if (!strcmp(argv[4], "none")) {
			o.flags = BPROF_OBJ_FALLBACK_ID;
			n = 0;
		} else if (n == 0 || n > BPROF_BUILD_ID_MAX) {
			return 2;
		}
		for (size_t i = 0; i < n; i++)
			o.build_id[i] = (uint8_t)hexbyte(argv[4] + 2 * i);
		o.build_id_len = (uint32_t)n;
		if ((err = bprof_recording_add_object(r, &o, &idx)))
			die("add_object", err, NULL);
		/* the mapping maps file offset 0 at 0x400000: the ELF header */
		add_proc(r, 11, "nosym", idx, 0x400000, 0x401000);
		add_stack(r, 1, 0x400000);
		add_count(r, 11, "nosym", 1, BPROF_STACK_NONE, 0, 6);
	} else {
		return 2;
	}
	struct bprof_write_opts wo = { .sz = sizeof(wo), .mode = 0644 };
	err = bprof_write_file(r, argv[2], &wo, &e);
	if (err)
		die("write", err, &e);
	bprof_recording_free(r);
	return 0;
}
