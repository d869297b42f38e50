// SPDX-License-Identifier: Apache-2.0
/*
 * bench_synth OUT BINARY BUILD_ID_HEX OFFSETS NSTACKS DEPTH [SEED]
 *
 * Write a synthetic .bprof recording with NSTACKS unique user stacks of
 * DEPTH frames, every frame an address inside a real function of BINARY
 * (OFFSETS: one file offset per line, hex, as the benchmark draws them from
 * nm), so that prof-report really symbolizes them.  One process maps the
 * whole of BINARY at a fixed base; BINARY's build-id is recorded so the
 * report finds it at its path.  Built on the public format API (bprof.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "bprof.h"

#define BASE UINT64_C(0x555555554000)
#define PID 4242

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int die(const char *what, int code)
{
	fprintf(stderr, "bench_synth: %s: %s\n", what, bprof_strerror(code));
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int stats(int argc, char **argv)
{
	uint64_t nstacks = 0, samples = 0, n = 0, cap = 0;
	uint64_t *ips = NULL;

	for (int i = 0; i < argc; i++) {
		struct bprof_recording *rec;
		struct bprof_error err;

		if (bprof_read_file(&rec, argv[i], NULL, &err)) {
			fprintf(stderr, "bench_synth: %s: %s\n", argv[i], err.message);
			return 1;
		}
		nstacks += rec->nr_stacks;
		for (uint64_t c = 0; c < rec->nr_counts; c++)
			samples += rec->counts[c].count;
		for (uint64_t s = 0; s < rec->nr_stacks; s++) {
			const struct bprof_stack *st = &rec->stacks[s];

			if (n + st->nr_ips > cap) {
				cap = (n + st->nr_ips) * 2;
				ips = realloc(ips, cap * sizeof(*ips));
				if (!ips) {
					perror("realloc");
					return 1;
				}
			}
			memcpy(ips + n, st->ips, st->nr_ips * sizeof(*ips));
			n += st->nr_ips;
		}
		bprof_recording_free(rec);
	}
	uint64_t uniq = 0;
	if (n) {
		qsort(ips, n, sizeof(*ips), cmp_u64);
		uniq = 1;
		for (uint64_t i = 1; i < n; i++)
			uniq += ips[i] != ips[i - 1];
	}
	printf("%d %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", argc, nstacks, uniq, samples);
	free(ips);
	return 0;
}

static int sizes(const char *path)
{
	struct bprof_recording *rec;
	struct bprof_error err;
	void *buf;
	size_t with, without;

	if (bprof_read_file(&rec, path, NULL, &err)) {
		fprintf(stderr, "bench_synth: %s: %s\n", path, err.message);
		return 1;
	}
	if (bprof_write_buffer(rec, &buf, &with, NULL, &err))
		goto fail;
	free(buf);
	uint32_t n = rec->kernel.nr_ksyms;
	rec->kernel.nr_ksyms = 0; /* hide them from the writer, then restore for free() */
	int rc = bprof_write_buffer(rec, &buf, &without, NULL, &err);
	rec->kernel.nr_ksyms = n;
	if (rc)
		goto fail;
	free(buf);
	printf("%zu %u %zu\n", with, n, without);
	bprof_recording_free(rec);
	return 0;
fail:
	fprintf(stderr, "bench_synth: %s: %s\n", path, err.message);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--sizes"))
		return sizes(argv[2]);
	if (argc > 2 && !strcmp(argv[1], "--stats"))
		return stats(argc - 2, argv + 2);
	if (argc < 7) {
		fprintf(stderr,
			"usage: %s OUT BINARY BUILD_ID_HEX OFFSETS NSTACKS DEPTH [SEED]\n",
			argv[0]);
		return 2;
	}
	const char *out = argv[1], *bin = argv[2], *bidhex = argv[3], *offs_path = argv[4];
	unsigned long nstacks = strtoul(argv[5], NULL, 10);
	unsigned long depth = strtoul(argv[6], NULL, 10);
	uint64_t seed = argc > 7 ? strtoull(argv[7], NULL, 0) | 1 : UINT64_C(0x9e3779b97f4a7c15);
	struct stat st;

	if (nstacks == 0 || nstacks > INT32_MAX || depth == 0 || depth > 127) {
		fprintf(stderr, "bench_synth: NSTACKS must be >= 1, DEPTH 1..127\n");
		return 2;
	}
	if (stat(bin, &st) < 0) {
		perror(bin);
		return 1;
	}

	/* the pool of file offsets */
	FILE *f = fopen(offs_path, "r");
	if (!f) {
		perror(offs_path);
		return 1;
	}
	size_t npool = 0, cap = 0;
	uint64_t *pool = NULL;
	char line[64];
	while (fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t v = strtoull(line, &end, 16);

		if (end == line)
			continue;
		if (npool == cap) {
			cap = cap ? cap * 2 : 4096;
			pool = realloc(pool, cap * sizeof(*pool));
			if (!pool) {
				perror("realloc");
				return 1;
			}
		}
		pool[npool++] = v;
	}
	fclose(f);
	if (npool == 0) {
		fprintf(stderr, "bench_synth: %s: no offsets\n", offs_path);
		return 1;
	}

	struct bprof_recording *rec;
	int rc = bprof_recording_create(&rec);
	if (rc)
		return die("create", rc);

	struct utsname u;
	uname(&u);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	rec->meta.hostname = strdup("bench-synth");
	rec->meta.kernel_release = strdup(u.release);
	rec->meta.arch = strdup(u.machine);
	rec->meta.recorder_version = strdup("bench_synth");
	rec->meta.options = strdup("synthetic");
	rec->meta.event = strdup("cpu-clock");
	rec->meta.start_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	rec->meta.duration_ns = UINT64_C(30000000000);
	rec->meta.sample_freq = 99;
	rec->meta.ncpus = 2;
	rec->meta.flags = BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS;
	rec->kernel.release = strdup(u.release);

	/* the object, with its build-id */
	struct bprof_object o = { 0 };
	size_t blen = strlen(bidhex) / 2;
	if (blen == 0 || blen > BPROF_BUILD_ID_MAX) {
		fprintf(stderr, "bench_synth: bad build-id '%s'\n", bidhex);
		return 2;
	}
	for (size_t i = 0; i < blen; i++) {
		int hi = hexval(bidhex[2 * i]), lo = hexval(bidhex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			fprintf(stderr, "bench_synth: bad build-id '%s'\n", bidhex);
			return 2;
		}
		o.build_id[i] = (uint8_t)(hi << 4 | lo);
	}
	o.path = strdup(bin);
	o.build_id_len = (uint32_t)blen;
	o.flags = BPROF_OBJ_HAS_BUILD_ID;
	o.size = (uint64_t)st.st_size;
	o.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	o.dev = st.st_dev;
	o.inode = st.st_ino;
	uint32_t oi;
	if ((rc = bprof_recording_add_object(rec, &o, &oi)))
		return die("add_object", rc);

	/* one process mapping the whole file at BASE */
	struct bprof_process p = { 0 };
	p.pid = PID;
	p.ns_pid = PID;
	p.exec_id = 1;
	p.nr_mappings = 1;
	snprintf(p.comm, sizeof(p.comm), "synth");
	p.mappings = calloc(1, sizeof(*p.mappings));
	if (!p.mappings)
		return die("calloc", BPROF_E_NOMEM);
	p.mappings[0].start = BASE;
	p.mappings[0].end = BASE + (((uint64_t)st.st_size + 4095) & ~UINT64_C(4095));
	p.mappings[0].file_offset = 0;
	p.mappings[0].object_index = oi;
	p.mappings[0].flags = BPROF_MAP_READ;
	if ((rc = bprof_recording_add_process(rec, &p)))
		return die("add_process", rc);

	/* NSTACKS unique stacks of DEPTH random pool addresses, one count each */
	uint64_t total = 0;
	for (unsigned long i = 0; i < nstacks; i++) {
		struct bprof_stack s = { .id = (uint32_t)i, .nr_ips = (uint32_t)depth };

		s.ips = malloc(depth * sizeof(*s.ips));
		if (!s.ips)
			return die("malloc", BPROF_E_NOMEM);
		for (unsigned long d = 0; d < depth; d++)
			s.ips[d] = BASE + pool[rnd(&seed) % npool];
		if ((rc = bprof_recording_add_stack(rec, &s)))
			return die("add_stack", rc);

		struct bprof_count c = { .pid = PID, .exec_id = 1, .user_stack_id = (int32_t)i,
					 .kernel_stack_id = -EFAULT,
					 .count = 1 + rnd(&seed) % 50 };
		snprintf(c.comm, sizeof(c.comm), "synth");
		total += c.count;
		if ((rc = bprof_recording_add_count(rec, &c)))
			return die("add_count", rc);
	}

	struct bprof_error err;
	if ((rc = bprof_write_file(rec, out, NULL, &err))) {
		fprintf(stderr, "bench_synth: %s: %s\n", out, err.message);
		return 1;
	}
	printf("%s: %lu stacks x %lu frames from a pool of %zu addresses, %" PRIu64
	       " samples\n",
	       out, nstacks, depth, npool, total);
	bprof_recording_free(rec);
	free(pool);
	return 0;
}
