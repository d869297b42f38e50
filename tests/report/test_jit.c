/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JIT frames through prof-report's path (adapter, walk, fold, render):
 * truth under reuse (format/SPEC.md 6.16).  One process, one anonymous
 * executable mapping, a perf map and a jitdump, rows in 10 ms slices:
 *   - jitdump: "old" loaded at 5 ms and "new" at 25 ms over the same
 *     address: slice 1 is old, slice 2 (new loaded within it) ambiguous,
 *     slice 3 new;
 *   - perf map: two names over one address are [jit-ambiguous], one name
 *     twice is that name; what the jitdump does not cover falls back to it.
 * Folded (two copies of the recording) and walked one by one print the same.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define JIT 0x7e0000000000ull
#define ORIGIN 1700000000000000000ull /* CLOCK_REALTIME of slice 0 */
#define MONO_MINUS_REAL (-1699999000000000000ll)
#define MS 1000000ull

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	cr_assert(d);
	return d;
}

struct jd {
	uint8_t b[1024];
	size_t n;
};

static void put(struct jd *j, const void *p, size_t n)
{
	cr_assert_leq(j->n + n, sizeof(j->b));
	memcpy(j->b + j->n, p, n);
	j->n += n;
}
static void p32(struct jd *j, uint32_t v) { put(j, &v, 4); }
static void p64(struct jd *j, uint64_t v) { put(j, &v, 8); }

static void load(struct jd *j, uint64_t mono, uint64_t addr, uint64_t size, const char *name)
{
	size_t nl = strlen(name) + 1;
	p32(j, 0);
	p32(j, (uint32_t)(16 + 40 + nl));
	p64(j, mono);
	p32(j, 1);
	p32(j, 1);
	p64(j, addr);
	p64(j, addr);
	p64(j, size);
	p64(j, 1);
	put(j, name, nl);
}

static void add_row(struct bprof_recording *rec, int32_t stack, uint32_t slice, uint64_t count)
{
	struct bprof_count c = { .pid = 42, .exec_id = 1, .user_stack_id = stack,
				 .kernel_stack_id = BPROF_STACK_NONE, .count = count, .slice = slice };
	memcpy(c.comm, "node", 4);
	cr_assert_eq(bprof_recording_add_count(rec, &c), 0);
}

static struct bprof_recording *build(void)
{
	struct bprof_recording *rec;
	static const char map[] = "7e0000008000 100 JS:*first a.js:1\n"
				  "7e0000008000 80 JS:*second a.js:9\n"
				  "7e0000009000 100 JS:*same a.js:2\n"
				  "7e0000009000 100 JS:*same a.js:2\n"
				  "7e0000000000 100 JS:*map_only a.js:3\n";
	struct jd j = { .n = 0 };

	cr_assert_eq(bprof_recording_create(&rec), 0);
	rec->meta.hostname = xstrdup("h");
	rec->meta.kernel_release = xstrdup("");
	rec->meta.arch = xstrdup("x86_64");
	rec->meta.recorder_version = xstrdup("test");
	rec->meta.options = xstrdup("");
	rec->meta.event = xstrdup("cpu-clock");
	rec->meta.sample_freq = 99;
	rec->meta.start_time_ns = ORIGIN;
	rec->meta.duration_ns = 40 * MS;
	rec->meta.ncpus = 1;
	rec->meta.flags = BPROF_META_USER_STACKS;
	rec->kernel.release = xstrdup("");

	struct bprof_process proc = { .pid = 42, .ns_pid = 42, .exec_id = 1, .nr_mappings = 1 };
	memcpy(proc.comm, "node", 4);
	proc.mappings = calloc(1, sizeof(*proc.mappings));
	cr_assert(proc.mappings);
	proc.mappings[0] = (struct bprof_mapping){ JIT, JIT + 0x100000, 0, BPROF_NO_OBJECT,
						   BPROF_MAP_ANON | BPROF_MAP_READ, 0 };
	proc.perf_map = malloc(sizeof(map));
	cr_assert(proc.perf_map);
	memcpy(proc.perf_map, map, sizeof(map) - 1);
	proc.perf_map_len = sizeof(map) - 1;
	cr_assert_eq(bprof_recording_add_process(rec, &proc), 0);

	/* the jitdump: header, then old at 5 ms and new at 25 ms at JIT+0x4000 */
	uint64_t mono0 = (uint64_t)((int64_t)ORIGIN + MONO_MINUS_REAL);
	p32(&j, 0x4A695444);
	p32(&j, 1);
	p32(&j, 40);
	p32(&j, 62);
	p32(&j, 0);
	p32(&j, 42);
	p64(&j, 0);
	p64(&j, 0);
	load(&j, mono0 + 5 * MS, JIT + 0x4000, 0x100, "JS:*old a.js:5");
	load(&j, mono0 + 25 * MS, JIT + 0x4000, 0x100, "JS:*new a.js:6");
	rec->jit.present = 1;
	rec->jit.mono_minus_real_ns = MONO_MINUS_REAL;
	rec->jit.nr_dumps = 1;
	rec->jit.dumps = calloc(1, sizeof(*rec->jit.dumps));
	cr_assert(rec->jit.dumps);
	rec->jit.dumps[0] = (struct bprof_jitdump){ .pid = 42, .exec_id = 1, .len = j.n };
	rec->jit.dumps[0].data = malloc(j.n);
	cr_assert(rec->jit.dumps[0].data);
	memcpy(rec->jit.dumps[0].data, j.b, j.n);

	rec->slices.slice_ns = 10 * MS;
	rec->slices.origin_ns = ORIGIN;
	const uint64_t stacks[][1] = { { JIT + 0x4010 }, { JIT + 0x8010 }, { JIT + 0x9010 },
				       { JIT + 0x10 }, { JIT + 0x8090 } };
	for (int i = 0; i < 5; i++) {
		struct bprof_stack s = { .id = (uint32_t)i + 1, .nr_ips = 1 };
		s.ips = calloc(1, sizeof(*s.ips));
		cr_assert(s.ips);
		s.ips[0] = stacks[i][0]; /* a leaf: looked up as it is */
		cr_assert_eq(bprof_recording_add_stack(rec, &s), 0);
	}
	const int32_t ex = 0;
	add_row(rec, ex | 1, 1, 3);  /* old */
	add_row(rec, ex | 1, 2, 5);  /* new loaded within: ambiguous */
	add_row(rec, ex | 1, 3, 7);  /* new */
	add_row(rec, ex | 2, 1, 11); /* perf map: first and second */
	add_row(rec, ex | 3, 1, 13); /* perf map: same twice */
	add_row(rec, ex | 4, 1, 17); /* perf map only */
	add_row(rec, ex | 5, 1, 19); /* past second's end: first only */
	struct bprof_error err;
	cr_assert_eq(bprof_recording_validate(rec, &err), 0, "%s", err.message);
	return rec;
}

static char *report(struct bsym_ctx *sym, struct rep_input *in, size_t n, bool fold,
		    struct rep_stats *st)
{
	struct rep_config cfg = { .mode = REP_FOLDED, .annotate = true };
	struct rep_agg *agg;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert(out);
	memset(st, 0, sizeof(*st));
	cr_assert_eq(rep_agg_create(&agg), 0);
	if (fold)
		cr_assert_eq(rep_agg_add_inputs(agg, &cfg, sym, in, n, st), 0);
	for (size_t i = 0; i < n && !fold; i++)
		cr_assert_eq(rep_agg_add_input(agg, &cfg, sym, &in[i], st), 0);
	cr_assert_eq(rep_print(out, agg, &cfg), 0);
	fclose(out);
	rep_agg_destroy(agg);
	return buf;
}

Test(jit, names_by_time_and_never_chooses)
{
	struct bsym_opts so = { .sz = sizeof(so), .flags = BSYM_NO_DEBUGINFOD | BSYM_NO_SYSTEM_DEBUG };
	struct bsym_ctx *sym;
	struct rep_input in[2];
	struct rep_stats st1, st2;
	char errbuf[256];

	cr_assert_eq(bsym_create(&sym, &so), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(rep_input_adopt(&in[i], sym, build(), "j.bprof", errbuf, sizeof(errbuf)), 0,
			     "%s", errbuf);
	char *one = report(sym, in, 1, false, &st1);
	const char *want[] = {
		"node;JS:*old a.js:5_[j] 3\n",
		"node;[jit-ambiguous]_[j] 16\n", /* the reuse slice (5) and the map's two names (11) */
		"node;JS:*new a.js:6_[j] 7\n",
		"node;JS:*same a.js:2_[j] 13\n",
		"node;JS:*map_only a.js:3_[j] 17\n",
		"node;JS:*first a.js:1_[j] 19\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(strstr(one, want[i]), "missing \"%s\" in\n%s", want[i], one);
	cr_assert_eq(st1.frames_jit_ambiguous, 2);
	free(one);
	/* two copies, walked in turn and folded: the same text and counters */
	char *a = report(sym, in, 2, false, &st1), *b = report(sym, in, 2, true, &st2);
	cr_assert_str_eq(a, b);
	cr_assert_eq(st1.frames_jit_ambiguous, st2.frames_jit_ambiguous);
	cr_assert_eq(st1.frames_named, st2.frames_named);
	free(a);
	free(b);
	for (int i = 0; i < 2; i++)
		rep_input_close(&in[i]);
	bsym_destroy(sym);
}
