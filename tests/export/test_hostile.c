/* SPDX-License-Identifier: Apache-2.0 */
/* The exporters over a recording built in memory whose names are hostile
 * (kallsyms names, JIT perf map names, comms and paths with quotes, '<',
 * ';', control bytes and invalid UTF-8): the pprof file still unpacks with
 * valid UTF-8 strings and the right totals, the speedscope JSON and the SVG
 * stay valid UTF-8 without raw control bytes, and escaped names survive. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "report.h"
#include "profile.pb-c.h"

#define KBASE 0xffffffff81000000ull
#define OBJ0  0x400000ull
#define JIT   0x7e0000000000ull

static const char *const hostile[] = {
	"quote\"back\\slash",
	"semi;colon<tag>&amp",
	"ctl\x01\x1f\x7f\nnewline",
	"bad\xff\xc3(utf8\xed\xa0\x80",
	"ok \xc3\xa9\xe2\x82\xac",
};
#define NH (sizeof(hostile) / sizeof(hostile[0]))

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	cr_assert(d);
	return d;
}

static struct bprof_recording *build(uint64_t *total)
{
	struct bprof_recording *rec;
	char buf[256];

	cr_assert_eq(bprof_recording_create(&rec), 0);
	rec->meta.hostname = xstrdup("h");
	rec->meta.kernel_release = xstrdup("");
	rec->meta.arch = xstrdup("x86_64");
	rec->meta.recorder_version = xstrdup("test");
	rec->meta.options = xstrdup("");
	rec->meta.event = xstrdup("cpu-clock");
	rec->meta.sample_freq = 100;
	rec->meta.duration_ns = 1000000000;
	rec->meta.start_time_ns = 1700000000000000000ull;
	rec->meta.ncpus = 1;
	rec->meta.flags = BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS;
	rec->kernel.release = xstrdup("");
	rec->kernel.nr_ksyms = NH;
	rec->kernel.ksyms = calloc(NH, sizeof(*rec->kernel.ksyms));
	cr_assert(rec->kernel.ksyms);
	for (size_t i = 0; i < NH; i++) {
		rec->kernel.ksyms[i].addr = KBASE + i * 0x1000;
		rec->kernel.ksyms[i].name = xstrdup(hostile[i]);
		rec->kernel.ksyms[i].module_index = BPROF_NO_OBJECT;
	}
	struct bprof_object obj = { .path = xstrdup("/no/such/\xff\"obj<>;") };
	uint32_t idx;
	cr_assert_eq(bprof_recording_add_object(rec, &obj, &idx), 0);

	struct bprof_process proc = { .pid = 7, .ns_pid = 7, .exec_id = 1, .nr_mappings = 2 };
	memcpy(proc.comm, "c\"<\xff;\x01", 7);
	proc.mappings = calloc(2, sizeof(*proc.mappings));
	cr_assert(proc.mappings);
	proc.mappings[0] = (struct bprof_mapping){ OBJ0, OBJ0 + 0x100000, 0, 0, BPROF_MAP_READ, 0 };
	proc.mappings[1] = (struct bprof_mapping){ JIT, JIT + 0x100000, 0, BPROF_NO_OBJECT,
						   BPROF_MAP_ANON | BPROF_MAP_READ, 0 };
	char *pm = malloc(4096);
	size_t plen = 0;
	cr_assert(pm);
	for (size_t i = 0; i < NH; i++)
		plen += (size_t)sprintf(pm + plen, "%llx 100 jit_%s\n",
					(unsigned long long)(JIT + i * 0x100), hostile[i]);
	proc.perf_map = pm;
	proc.perf_map_len = plen;
	cr_assert_eq(bprof_recording_add_process(rec, &proc), 0);

	*total = 0;
	for (size_t i = 0; i < NH; i++) {
		struct bprof_stack us = { .id = (uint32_t)i, .nr_ips = 2 };
		struct bprof_stack ks = { .id = 100 + (uint32_t)i, .nr_ips = 1 };
		us.ips = calloc(2, sizeof(uint64_t));
		ks.ips = calloc(1, sizeof(uint64_t));
		cr_assert(us.ips && ks.ips);
		us.ips[0] = JIT + i * 0x100 + 0x10; /* leaf in a JIT entry */
		us.ips[1] = OBJ0 + 0x1234;          /* caller: object without debuginfo */
		ks.ips[0] = KBASE + i * 0x1000 + 8;
		cr_assert_eq(bprof_recording_add_stack(rec, &us), 0);
		cr_assert_eq(bprof_recording_add_stack(rec, &ks), 0);
		struct bprof_count c = { .pid = 7, .exec_id = 1, .user_stack_id = (int32_t)i,
					 .kernel_stack_id = 100 + (int32_t)i, .count = 1 + i };
		snprintf(buf, sizeof(buf), "%.15s", hostile[i]);
		memcpy(c.comm, buf, strlen(buf) < 15 ? strlen(buf) : 15);
		cr_assert_eq(bprof_recording_add_count(rec, &c), 0);
		*total += c.count;
	}
	/* a lost user stack */
	struct bprof_count lost = { .pid = 7, .exec_id = 1, .user_stack_id = -ENOMEM,
				    .kernel_stack_id = 100, .count = 5 };
	memcpy(lost.comm, "lost", 4);
	cr_assert_eq(bprof_recording_add_count(rec, &lost), 0);
	*total += 5;
	struct bprof_error err;
	cr_assert_eq(bprof_recording_validate(rec, &err), 0, "%s", err.message);
	return rec;
}

static bool valid_utf8(const unsigned char *p, size_t n, bool allow_newline)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!k || i + k > n)
			return false;
		if (k == 1 && (c < 0x20 || c == 0x7f) && !(allow_newline && c == '\n'))
			return false;
		uint32_t cp = k == 1 ? c : k == 2 ? c & 0x1f : k == 3 ? c & 0x0f : c & 0x07;
		for (size_t j = 1; j < k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + j] & 0x3f);
		}
		if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += k;
	}
	return true;
}

static bool valid_utf8_any(const char *s)
{
	/* proto strings: UTF-8, control bytes allowed */
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; p[i];) {
		unsigned char c = p[i];
		size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!k)
			return false;
		for (size_t j = 1; j < k; j++)
			if ((p[i + j] & 0xc0) != 0x80)
				return false;
		if (k == 3 && c == 0xed && p[i + 1] >= 0xa0)
			return false; /* surrogate */
		i += k;
	}
	return true;
}

struct fixture {
	struct bsym_ctx *sym;
	struct rep_input in;
	struct rep_config cfg;
	uint64_t total;
	char dir[64];
};

static void setup(struct fixture *f)
{
	static const char *const dirs[] = { "/nonexistent-bprof-test-debug" };
	struct bsym_opts so = {
		.sz = sizeof(so), .debug_dirs = dirs, .nr_debug_dirs = 1,
		.flags = BSYM_NO_DEBUGINFOD | BSYM_NO_SYSTEM_DEBUG | BSYM_NO_ORIGINAL_PATH,
	};
	char errbuf[256];

	memset(f, 0, sizeof(*f));
	f->cfg.mode = REP_FOLDED;
	cr_assert_eq(bsym_create(&f->sym, &so), 0);
	cr_assert_eq(rep_input_adopt(&f->in, f->sym, build(&f->total), "hostile.bprof", errbuf,
				     sizeof(errbuf)), 0, "%s", errbuf);
	strcpy(f->dir, "/tmp/bprof-export-test.XXXXXX");
	cr_assert(mkdtemp(f->dir));
}

static void teardown(struct fixture *f)
{
	char cmd[128];
	rep_input_close(&f->in);
	bsym_destroy(f->sym);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	cr_assert_eq(system(cmd), 0);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	cr_assert(fp, "%s", path);
	char *buf = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (*len + 65536 > cap) {
			cap = (*len + 65536) * 2;
			buf = realloc(buf, cap + 1);
			cr_assert(buf);
		}
		size_t n = fread(buf + *len, 1, 65536, fp);
		*len += n;
		if (n == 0)
			break;
	}
	fclose(fp);
	buf[*len] = '\0';
	return buf;
}

Test(hostile, pprof_unpacks_with_valid_strings_and_totals)
{
	struct fixture f;
	char path[128];
	setup(&f);
	snprintf(path, sizeof(path), "%s/p.pb.gz", f.dir);
	cr_assert_eq(rep_export_pprof(path, &f.cfg, f.sym, &f.in, 1, true, NULL), 0);

	gzFile gz = gzopen(path, "rb");
	cr_assert(gz);
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = malloc(cap);
	int n;
	while ((n = gzread(gz, buf + len, (unsigned)(cap - len))) > 0)
		len += (size_t)n;
	gzclose(gz);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	cr_assert(p, "profile.proto does not unpack");
	cr_assert_str_eq(p->string_table[0], "");
	for (size_t i = 0; i < p->n_string_table; i++)
		cr_assert(valid_utf8_any(p->string_table[i]), "string %zu not UTF-8", i);
	int64_t samples = 0, ns = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		samples += p->sample[i]->value[0];
		ns += p->sample[i]->value[1];
	}
	cr_assert_eq((uint64_t)samples, f.total);
	cr_assert_eq(ns, samples * 10000000); /* 100 Hz */
	cr_assert_eq(p->period, 10000000);
	/* the kallsyms and perf map names are there, repaired */
	bool kname = false, jname = false, missed = false;
	for (size_t i = 0; i < p->n_string_table; i++) {
		kname |= strcmp(p->string_table[i], "semi;colon<tag>&amp") == 0;
		jname |= strcmp(p->string_table[i], "jit_bad\xef\xbf\xbd\xef\xbf\xbd(utf8\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd") == 0;
		missed |= strcmp(p->string_table[i], "[Missed User Stack]") == 0;
	}
	cr_assert(kname && jname && missed);
	/* every location id and function id resolves */
	for (size_t i = 0; i < p->n_sample; i++)
		for (size_t j = 0; j < p->sample[i]->n_location_id; j++)
			cr_assert(p->sample[i]->location_id[j] >= 1 &&
				  p->sample[i]->location_id[j] <= p->n_location);
	for (size_t i = 0; i < p->n_location; i++) {
		cr_assert_eq(p->location[i]->id, i + 1);
		cr_assert(p->location[i]->mapping_id <= p->n_mapping);
		for (size_t j = 0; j < p->location[i]->n_line; j++)
			cr_assert(p->location[i]->line[j]->function_id >= 1 &&
				  p->location[i]->line[j]->function_id <= p->n_function);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	teardown(&f);
}

Test(hostile, pprof_no_symbolize_has_no_lines)
{
	struct fixture f;
	char path[128];
	setup(&f);
	snprintf(path, sizeof(path), "%s/raw.pb.gz", f.dir);
	cr_assert_eq(rep_export_pprof(path, &f.cfg, f.sym, &f.in, 1, false, NULL), 0);
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = malloc(cap);
	int n;
	while ((n = gzread(gz, buf + len, (unsigned)(cap - len))) > 0)
		len += (size_t)n;
	gzclose(gz);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	cr_assert(p);
	for (size_t i = 0; i < p->n_location; i++) {
		Perftools__Profiles__Location *l = p->location[i];
		/* only the pseudo-frame of a lost stack has a name */
		if (l->n_line)
			cr_assert_str_eq(p->string_table[p->function[l->line[0]->function_id - 1]->name],
					 "[Missed User Stack]");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	teardown(&f);
}

Test(hostile, speedscope_and_svg_stay_valid)
{
	struct fixture f;
	char path[128];
	size_t len;
	setup(&f);

	snprintf(path, sizeof(path), "%s/s.json", f.dir);
	cr_assert_eq(rep_export_speedscope(path, &f.cfg, f.sym, &f.in, 1, NULL), 0);
	char *j = slurp(path, &len);
	cr_assert(valid_utf8((unsigned char *)j, len, true), "speedscope JSON not clean UTF-8");
	cr_assert(strstr(j, "\"name\":\"quote\\\"back\\\\slash\""));
	cr_assert(strstr(j, "\"name\":\"ctl\\u0001\\u001f\\u007f\\nnewline\""));
	cr_assert(strstr(j, "jit_bad\\ufffd\\ufffd(utf8"));
	/* newlines only between records, never inside a string */
	for (char *nl = strchr(j, '\n'); nl; nl = strchr(nl + 1, '\n')) {
		size_t quotes = 0;
		for (char *q = j; q < nl; q++)
			if (*q == '"' && (q == j || q[-1] != '\\' || (q >= j + 2 && q[-2] == '\\')))
				quotes++;
		cr_assert_eq(quotes % 2, 0, "newline inside a JSON string");
	}
	free(j);

	/* the SVG path: folded text (render.c sanitizes) -> flame graph */
	char *folded = NULL, *out = NULL;
	size_t flen = 0, olen = 0;
	struct rep_agg *agg;
	struct rep_stats st = {0};
	struct rep_config cfg = f.cfg;
	cfg.annotate = true;
	FILE *m = open_memstream(&folded, &flen);
	cr_assert_eq(rep_agg_create(&agg), 0);
	cr_assert_eq(rep_agg_add_input(agg, &cfg, f.sym, &f.in, &st), 0);
	cr_assert_eq(rep_print(m, agg, &cfg), 0);
	fclose(m);
	rep_agg_destroy(agg);
	m = open_memstream(&out, &olen);
	struct rep_svg_opts o = { 0 };
	cr_assert_eq(rep_flamegraph_svg(m, folded, flen, &o), 0);
	fclose(m);
	cr_assert(valid_utf8((unsigned char *)out, olen, true), "SVG not clean UTF-8");
	cr_assert(strstr(out, "semi:colon&lt;tag&gt;&amp;amp"));
	char tot[64];
	snprintf(tot, sizeof(tot), "data-total=\"%llu\"", (unsigned long long)f.total);
	cr_assert(strstr(out, tot), "total %s", tot);
	free(folded);
	free(out);
	teardown(&f);
}
