/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Folding the rows of many recordings (report/fold.c) before they are
 * rendered: every text output of the folded set is byte for byte what the
 * rows of each recording, walked and rendered one by one, give (folded,
 * multi-line, -d, -a, --addresses, -U, -K), with the same summary
 * counters; rows of different processes at different load addresses fold;
 * rows that differ in one frame's build-id, in comm, or (where it is
 * printed) in pid do not.  The frames are real functions of this test
 * program, named by libsym through its build-id.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define KBASE 0xffffffff81000000ull
#define JIT   0x7e0000000000ull

__attribute__((noinline, used)) int fold_leaf(int x) { return x * 3 + 1; }
__attribute__((noinline, used)) int fold_mid(int x) { return fold_leaf(x) + 2; }
__attribute__((noinline, used)) int fold_root(int x) { return fold_mid(x) * 5; }

struct self {
	char path[4096];
	uint8_t build_id[BPROF_BUILD_ID_MAX];
	uint32_t build_id_len;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self *s = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    n->n_descsz <= BPROF_BUILD_ID_MAX) {
				memcpy(s->build_id, desc, n->n_descsz);
				s->build_id_len = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first entry is the program */
}

static void self_init(struct self *s)
{
	memset(s, 0, sizeof(*s));
	cr_assert(realpath("/proc/self/exe", s->path));
	dl_iterate_phdr(find_build_id, s);
	cr_assert_gt(s->build_id_len, 0, "the test program has no build-id");
}

/* The offset in this program's file of code address p. */
static uint64_t file_offset(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, off;
	char line[4608];

	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) == 3 &&
		    (uintptr_t)p >= start && (uintptr_t)p < end) {
			fclose(f);
			return (uintptr_t)p - start + off;
		}
	}
	cr_assert_fail("%p is in no mapping", p);
	return 0;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	cr_assert(d);
	return d;
}

/* What one recording holds: one process of comm at base, the program's
 * build-id (or another one, so that nothing names its frames). */
struct spec {
	uint32_t pid;
	uint64_t base;
	const char *comm;
	bool other_build_id;
	uint64_t counts[11];
	uint32_t tid;         /* 0: pid + 1 */
	const char *process;  /* the process's comm (PROCESSES); NULL: comm */
};

static void add_stack(struct bprof_recording *rec, uint32_t id, const uint64_t *ips, uint32_t n)
{
	struct bprof_stack s = { .id = id, .nr_ips = n };
	s.ips = calloc(n, sizeof(*s.ips));
	cr_assert(s.ips);
	memcpy(s.ips, ips, n * sizeof(*ips));
	cr_assert_eq(bprof_recording_add_stack(rec, &s), 0);
}

static void add_count(struct bprof_recording *rec, const struct spec *sp, int32_t user,
		      int32_t kernel, uint64_t kip, uint64_t count)
{
	struct bprof_count c = { .pid = sp->pid, .tid = sp->tid ? sp->tid : sp->pid + 1,
				 .exec_id = 1, .user_stack_id = user,
				 .kernel_stack_id = kernel, .kernel_ip = kip, .count = count };
	memcpy(c.comm, sp->comm, strlen(sp->comm));
	cr_assert_eq(bprof_recording_add_count(rec, &c), 0);
}

static struct bprof_recording *build(const struct self *self, const struct spec *sp)
{
	struct bprof_recording *rec;

	cr_assert_eq(bprof_recording_create(&rec), 0);
	rec->meta.hostname = xstrdup("h");
	rec->meta.kernel_release = xstrdup("");
	rec->meta.arch = xstrdup("x86_64");
	rec->meta.recorder_version = xstrdup("test");
	rec->meta.options = xstrdup("");
	rec->meta.event = xstrdup("cpu-clock");
	rec->meta.sample_freq = 99;
	rec->meta.duration_ns = 1000000000;
	rec->meta.ncpus = 1;
	rec->meta.flags = BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS | BPROF_META_PER_THREAD;
	rec->kernel.release = xstrdup("");
	/* one kernel: libsym gives recordings of it one id */
	rec->kernel.build_id_len = 20;
	memset(rec->kernel.build_id, 0x6b, 20);
	rec->kernel.stext = KBASE;
	rec->kernel.nr_ksyms = 2;
	rec->kernel.ksyms = calloc(2, sizeof(*rec->kernel.ksyms));
	cr_assert(rec->kernel.ksyms);
	rec->kernel.ksyms[0] = (struct bprof_ksym){ KBASE, xstrdup("k_leaf"), BPROF_NO_OBJECT };
	rec->kernel.ksyms[1] = (struct bprof_ksym){ KBASE + 0x1000, xstrdup("k_entry"), BPROF_NO_OBJECT };

	struct bprof_object obj = { .path = xstrdup(self->path), .flags = BPROF_OBJ_HAS_BUILD_ID,
				    .build_id_len = self->build_id_len };
	memcpy(obj.build_id, self->build_id, self->build_id_len);
	if (sp->other_build_id)
		obj.build_id[0] ^= 0xff;
	uint32_t idx;
	cr_assert_eq(bprof_recording_add_object(rec, &obj, &idx), 0);

	struct bprof_process proc = { .pid = sp->pid, .ns_pid = sp->pid, .exec_id = 1, .nr_mappings = 2 };
	const char *pcomm = sp->process ? sp->process : sp->comm;
	memcpy(proc.comm, pcomm, strlen(pcomm));
	proc.mappings = calloc(2, sizeof(*proc.mappings));
	cr_assert(proc.mappings);
	proc.mappings[0] = (struct bprof_mapping){ sp->base, sp->base + 0x10000000, 0, idx, 0, 0 };
	proc.mappings[1] = (struct bprof_mapping){ JIT, JIT + 0x100000, 0, BPROF_NO_OBJECT, BPROF_MAP_ANON, 0 };
	cr_assert_eq(bprof_recording_add_process(rec, &proc), 0);

	/* return addresses point after a call: +5 is inside each caller */
	uint64_t leaf = sp->base + file_offset((void *)fold_leaf) + 1;
	uint64_t mid = sp->base + file_offset((void *)fold_mid) + 5;
	uint64_t root = sp->base + file_offset((void *)fold_root) + 5;
	const uint64_t s1[] = { leaf, mid, root }, s2[] = { mid, root }, s3[] = { JIT + 0x40, root },
		       s4[] = { 0x1000, mid }, s5[] = { mid - 4, mid, root },
		       k1[] = { KBASE + 8, KBASE + 0x1008 };
	const int32_t unwound = BPROF_STACK_ID_UNWOUND | BPROF_STACK_ID_EXACT_CALLER;
	/* stack ids differ from recording to recording, as they do */
	int32_t b = (int32_t)sp->pid;
	add_stack(rec, b + 1, s1, 3);
	add_stack(rec, b + 2, s2, 2);
	add_stack(rec, b + 3, s3, 2);
	add_stack(rec, b + 4, s4, 2);
	add_stack(rec, b + 5, k1, 2);
	add_stack(rec, b + 6, s5, 3);
	/* s1 again, as the unwinder walked it: no "[missing caller]" */
	add_stack(rec, unwound | (b + 1), s1, 3);
	/* each row differs from another in one thing only */
	add_count(rec, sp, b + 1, BPROF_STACK_NONE, 0, sp->counts[0]);
	add_count(rec, sp, b + 6, BPROF_STACK_NONE, 0, sp->counts[1]);  /* the leaf */
	add_count(rec, sp, unwound | (b + 1), BPROF_STACK_NONE, 0, sp->counts[2]);
	add_count(rec, sp, b + 2, b + 5, 0, sp->counts[3]);
	add_count(rec, sp, b + 3, -EFAULT, KBASE + 0x1010, sp->counts[4]);
	add_count(rec, sp, b + 3, -EFAULT, 0, sp->counts[5]);          /* the interrupted ip */
	add_count(rec, sp, b + 4, BPROF_STACK_NONE, 0, sp->counts[6]);
	/* lost stacks: only -ENOMEM makes the summary advise a larger map */
	add_count(rec, sp, -EEXIST, -EEXIST, 0, sp->counts[7]);
	add_count(rec, sp, -ENOMEM, -ENOMEM, 0, sp->counts[8]);
	add_count(rec, sp, -EFAULT, b + 5, 0, sp->counts[9]);           /* no user stack, not lost */
	add_count(rec, sp, -ENOMEM, b + 5, 0, sp->counts[10]);
	struct bprof_error err;
	cr_assert_eq(bprof_recording_validate(rec, &err), 0, "%s", err.message);
	return rec;
}

static const struct spec specs[] = {
	{ 100, 0x555500000000ull, "app", false, { 3, 1, 20, 2, 1, 1, 1, 1, 1, 2, 4 }, 0, NULL },
	/* another process of the same build elsewhere in memory: folds */
	{ 200, 0x563400000000ull, "app", false, { 5, 2, 30, 7, 2, 1, 1, 1, 1, 3, 1 }, 0, NULL },
	/* the same frames, another build-id: nothing names them */
	{ 300, 0x555500000000ull, "app", true, { 11, 1, 1, 13, 1, 1, 1, 1, 1, 1, 1 }, 0, NULL },
	/* another comm */
	{ 100, 0x555500000000ull, "other", false, { 17, 1, 1, 19, 1, 1, 1, 1, 1, 1, 1 }, 0, NULL },
	/* the first once more (a copy of a file) */
	{ 100, 0x555500000000ull, "app", false, { 3, 1, 20, 2, 1, 1, 1, 1, 1, 2, 4 }, 0, NULL },
	/* the first's process, another thread of the same name: folds unless
	 * --threads (which prints the tid) */
	{ 100, 0x555500000000ull, "app", false, { 3, 1, 20, 2, 1, 1, 1, 1, 1, 2, 4 }, 102, NULL },
	/* a thread named otherwise than its process ("app") */
	{ 100, 0x555500000000ull, "worker", false, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 103, "app" },
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

struct fixture {
	struct self self;
	struct bsym_ctx *sym;
	struct rep_input in[NSPECS];
};

static void setup(struct fixture *f)
{
	struct bsym_opts so = { .sz = sizeof(so), .flags = BSYM_NO_DEBUGINFOD | BSYM_NO_SYSTEM_DEBUG };
	char errbuf[256];

	self_init(&f->self);
	cr_assert_eq(bsym_create(&f->sym, &so), 0);
	for (size_t i = 0; i < NSPECS; i++)
		cr_assert_eq(rep_input_adopt(&f->in[i], f->sym, build(&f->self, &specs[i]), "r.bprof",
					     errbuf, sizeof(errbuf)), 0, "%s", errbuf);
}

static void teardown(struct fixture *f)
{
	for (size_t i = 0; i < NSPECS; i++)
		rep_input_close(&f->in[i]);
	bsym_destroy(f->sym);
}

/* Everything a report prints of inputs [0, n): the text and the summary's
 * counters and objects, rows folded or each input walked in turn. */
static char *report(struct fixture *f, const struct rep_config *cfg, size_t n, bool fold)
{
	struct rep_agg *agg;
	struct rep_stats st = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	const uint32_t *ids;

	cr_assert(out);
	cr_assert_eq(rep_agg_create(&agg), 0);
	if (fold)
		cr_assert_eq(rep_agg_add_inputs(agg, cfg, f->sym, f->in, n, &st), 0);
	for (size_t i = 0; i < n && !fold; i++)
		cr_assert_eq(rep_agg_add_input(agg, cfg, f->sym, &f->in[i], &st), 0);
	cr_assert_eq(rep_print(out, agg, cfg), 0);
	fprintf(out, "== %llu samples, %llu frames, %llu named, missed %llu/%llu%s; unnamed:",
		(unsigned long long)st.samples, (unsigned long long)st.frames,
		(unsigned long long)st.frames_named, (unsigned long long)st.missed_user,
		(unsigned long long)st.missed_kernel, st.missed_enomem ? " (enomem)" : "");
	size_t nu = rep_agg_unnamed_objects(agg, &ids);
	for (size_t i = 0; i < nu; i++)
		fprintf(out, " %u", ids[i]);
	fclose(out);
	rep_agg_destroy(agg);
	return buf;
}

Test(fold, every_text_output_byte_identical)
{
	struct fixture f;
	struct rep_config cfgs[] = {
		{ .mode = REP_FOLDED },
		{ .mode = REP_MULTILINE },
		{ .mode = REP_FOLDED, .delimited = true },
		{ .mode = REP_MULTILINE, .delimited = true },
		{ .mode = REP_FOLDED, .annotate = true },
		{ .mode = REP_FOLDED, .addresses = true },
		{ .mode = REP_MULTILINE, .addresses = true },
		{ .mode = REP_FOLDED, .user_only = true },
		{ .mode = REP_FOLDED, .kernel_only = true },
		{ .mode = REP_MULTILINE, .kernel_only = true, .delimited = true },
		{ .mode = REP_FOLDED, .comm = "other" },
		{ .mode = REP_FOLDED, .threads = true },
		{ .mode = REP_MULTILINE, .threads = true },
		{ .mode = REP_FOLDED, .threads = true, .kernel_only = true },
	};

	setup(&f);
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		for (size_t n = 1; n <= NSPECS; n++) {
			char *a = report(&f, &cfgs[c], n, false), *b = report(&f, &cfgs[c], n, true);
			cr_assert_str_eq(b, a, "config %zu, %zu inputs: folded\n%s\nunfolded\n%s", c, n,
					 b, a);
			free(a);
			free(b);
		}
	}
	teardown(&f);
}

/* The unique rows of inputs [0, n) under cfg. */
static size_t unique_rows(struct fixture *f, const struct rep_config *cfg, size_t n)
{
	struct rep_fold *fold;
	const struct rep_fold_row *rows;

	cr_assert_eq(rep_fold_create(&fold), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(rep_fold_add_input(fold, cfg, &f->in[i]), 0);
	size_t nr = rep_fold_rows(fold, &rows);
	rep_fold_destroy(fold);
	return nr;
}

Test(fold, folds_equal_rows_only)
{
	struct fixture f;
	struct rep_config folded = { .mode = REP_FOLDED }, multi = { .mode = REP_MULTILINE };

	setup(&f);
	/* 11 rows a recording; all of the second fold into the first (pid
	 * and addresses differ, but folded output prints neither) */
	cr_assert_eq(unique_rows(&f, &folded, 1), 11);
	cr_assert_eq(unique_rows(&f, &folded, 2), 11);
	/* multi-line prints the pid: nothing folds */
	cr_assert_eq(unique_rows(&f, &multi, 2), 22);
	/* another build-id: its 7 rows with user frames in the object stay
	 * apart, the 4 without fold */
	cr_assert_eq(unique_rows(&f, &folded, 3), 18);
	/* another comm: 11 more; a copy of the first: none */
	cr_assert_eq(unique_rows(&f, &folded, 4), 29);
	cr_assert_eq(unique_rows(&f, &folded, 5), 29);

	/* and what that prints: the named stack sums recordings 0, 1 and 4,
	 * the other build-id's stays apart, unnamed (with its leaf
	 * elsewhere and unwound rows: without symbols they print the same) */
	char *out = report(&f, &folded, 3, true);
	/* (the leaf at its first byte had not pushed its frame pointer: the
	 * frame-pointer walk skipped a caller, and says so) */
	cr_assert(strstr(out, "app;fold_root;fold_mid;[missing caller];fold_leaf 8\n"), "%s", out);
	cr_assert(strstr(out, "app;fold_root;fold_mid;fold_leaf 50\n"), "%s", out);
	const char *base = strrchr(f.self.path, '/') + 1;
	char line[4200];
	snprintf(line, sizeof(line), "app;[%s];[%s];[%s] 13\n", base, base, base);
	cr_assert(strstr(out, line), "%s", out);
	free(out);
	teardown(&f);
}

Test(fold, threads_apart_under_their_process)
{
	struct fixture f;
	struct rep_config folded = { .mode = REP_FOLDED }, threads = { .mode = REP_FOLDED, .threads = true };

	setup(&f);
	/* recordings 0, 4 and 5: one process, threads 101 (twice) and 102 of
	 * one name: folded together without --threads, apart with */
	cr_assert_eq(unique_rows(&f, &folded, 6), 29);
	/* every recording's rows apart but the copy's (4): other tids */
	cr_assert_eq(unique_rows(&f, &threads, 6), 5 * 11);

	/* the process frame is the process's name, the thread's below it */
	struct fixture g = f;
	g.in[0] = f.in[6];
	char *out = report(&g, &threads, 1, false);
	cr_assert(strstr(out, "app;worker (tid 103);fold_root;fold_mid;fold_leaf 1\n"), "%s", out);
	cr_assert_null(strstr(out, "\nworker;"), "%s", out);
	free(out);
	out = report(&g, &folded, 1, false);
	cr_assert(strstr(out, "worker;fold_root;fold_mid;fold_leaf 1\n"), "%s", out);
	free(out);
	teardown(&f);
}

/* An unnamed frame of a runtime prints its first word with --addresses:
 * rows that differ only there stay apart.  (A Java frame's key once left
 * the word out, and such rows printed the first one's for all.) */
Test(fold, unnamed_runtime_frames_by_their_word)
{
	static const uint64_t tags[][2] = {
		{ BPROF_PY_TAG_CODE, BPROF_PY_TAG_INSTR },
		{ BPROF_V8_TAG_SFI, BPROF_V8_TAG_POS },
		{ BPROF_JVM_TAG_ID, BPROF_JVM_TAG_POS },
	};
	static const char *const unnamed[] = { "[python]", "[js]", "[java]" };
	struct rep_config cfg = { .mode = REP_FOLDED, .addresses = true };
	struct bprof_recording *rec;
	struct bprof_error err;
	struct fixture f;
	char errbuf[256], line[64];

	setup(&f);
	rec = build(&f.self, &specs[0]);
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < 2; k++) {
			const uint64_t ips[] = { tags[t][0] | 0x1000u << k, tags[t][1] };

			add_stack(rec, 1000 + 2 * t + k, ips, 2);
			add_count(rec, &specs[0], 1000 + 2 * t + k, BPROF_STACK_NONE, 0, 1);
		}
	cr_assert_eq(bprof_recording_validate(rec, &err), 0, "%s", err.message);
	rep_input_close(&f.in[0]);
	cr_assert_eq(rep_input_adopt(&f.in[0], f.sym, rec, "r.bprof", errbuf, sizeof(errbuf)), 0,
		     "%s", errbuf);
	char *a = report(&f, &cfg, 2, false), *b = report(&f, &cfg, 2, true);
	cr_assert_str_eq(b, a, "folded\n%s\nunfolded\n%s", b, a);
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < 2; k++) {
			snprintf(line, sizeof(line), "\napp;%s+0x%x 1\n", unnamed[t], 0x1000u << k);
			cr_assert(!strncmp(a, line + 1, strlen(line + 1)) || strstr(a, line),
				  "%s missing:\n%s", line + 1, a);
		}
	free(a);
	free(b);
	teardown(&f);
}
