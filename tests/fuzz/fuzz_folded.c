/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the output writers fed hostile names.  The input
 * does not parse as a file: it supplies the names of a recording built in
 * memory with format/bprof.h's builders - comms, object paths, perf map
 * (JIT) names and garbage perf map lines, kernel module names and kallsyms
 * names - full of ';', newlines, NULs, control bytes, invalid UTF-8 and
 * long runs.  The recording is then reported (rep_input_adopt ->
 * rep_agg_add_input -> rep_print / rep_print_diff) and the output checked:
 *
 *  - every line is "<frames> <count>", with no control bytes and valid
 *    UTF-8 (fuzz_report_common.h);
 *  - one line per distinct stack: every count row i has a kernel leaf
 *    frame named "k<i>_<hostile>", so rows are distinct stacks by
 *    construction, and the last frame of each line must name exactly one
 *    row; the rows the input duplicates (same everything) must be merged
 *    into that row's line, whose count is then the sum;
 *  - the counts add up to the recording's samples.
 *
 * No file outside the process is opened (BSYM_NO_ORIGINAL_PATH, no build-ids).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bprof.h"
#include "report.h"
#include "fuzz_report_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rd {
	const uint8_t *p;
	size_t n;
	size_t budget; /* bytes of long (repeated) names left for this input */
};

static uint8_t u8(struct rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

/* A hostile string: length byte (bit 7: repeat it to a long name), bytes
 * taken as they are (a NUL ends the C string early, as in a real file). */
static char *hstr(struct rd *r, size_t maxlen)
{
	uint8_t l = u8(r);
	size_t len = l & 0x3f, rep = 1;
	char *s;

	if (l & 0x40)
		len = len * 64 + u8(r);
	if (l & 0x80)
		rep = 1 + (size_t)u8(r) * 16;
	if (len > r->n)
		len = r->n;
	if (len * rep > r->budget)
		rep = 1;
	if (len * rep > maxlen)
		rep = len ? maxlen / len : 1;
	if (!rep)
		rep = 1, len = maxlen < len ? maxlen : len;
	s = malloc(len * rep + 1);
	if (!s)
		abort();
	for (size_t i = 0; i < rep; i++)
		memcpy(s + i * len, r->p, len);
	s[len * rep] = '\0';
	if (rep > 1)
		r->budget -= len * rep;
	r->p += len;
	r->n -= len;
	return s;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort();
	return d;
}

static char *prefixed(const char *prefix, char *tail)
{
	size_t a = strlen(prefix), b = strlen(tail);
	char *s = malloc(a + b + 1);
	if (!s)
		abort();
	memcpy(s, prefix, a);
	memcpy(s + a, tail, b + 1);
	free(tail);
	return s;
}

#define KBASE   0xffffffff81000000ull
#define MODBASE 0xffffffffc0000000ull
#define OBJ0    0x400000ull
#define OBJ1    0x7f0000000000ull
#define JIT     0x7e0000000000ull
#define MAXROWS 24

struct expect {
	uint64_t count[MAXROWS];
	uint64_t total;
	size_t rows;
};

static void add(int ret)
{
	if (ret)
		abort();
}

/* Build the recording; NULL when the input is too short to matter. */
static struct bprof_recording *build(struct rd *r, struct expect *ex)
{
	struct bprof_recording *rec;
	size_t nrows = 1 + u8(r) % MAXROWS, nproc = 1 + u8(r) % 3, nstacks = 1 + u8(r) % 4;
	char cbuf[64];

	add(bprof_recording_create(&rec));
	rec->meta.hostname = hstr(r, 256);
	rec->meta.kernel_release = xstrdup("");
	rec->meta.arch = xstrdup("x86_64");
	rec->meta.recorder_version = xstrdup("fuzz");
	rec->meta.options = hstr(r, 256);
	rec->meta.event = xstrdup("cpu-clock");
	rec->meta.sample_freq = 49;
	rec->meta.ncpus = 2;
	rec->meta.flags = BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS;
	rec->kernel.release = xstrdup("");

	/* kernel: two modules with hostile names, one kallsyms name per row */
	rec->kernel.nr_modules = 2;
	rec->kernel.modules = calloc(2, sizeof(*rec->kernel.modules));
	if (!rec->kernel.modules)
		abort();
	for (int m = 0; m < 2; m++) {
		rec->kernel.modules[m].name = hstr(r, 4096);
		rec->kernel.modules[m].base = MODBASE + (uint64_t)m * 0x200000;
		rec->kernel.modules[m].size = 0x100000;
	}
	rec->kernel.nr_ksyms = (uint32_t)nrows;
	rec->kernel.ksyms = calloc(nrows, sizeof(*rec->kernel.ksyms));
	if (!rec->kernel.ksyms)
		abort();
	for (size_t i = 0; i < nrows; i++) {
		snprintf(cbuf, sizeof(cbuf), "k%zu_", i);
		rec->kernel.ksyms[i].addr = KBASE + i * 0x1000;
		rec->kernel.ksyms[i].name = prefixed(cbuf, hstr(r, 70000));
		rec->kernel.ksyms[i].module_index = BPROF_NO_OBJECT;
	}

	/* objects with hostile paths */
	for (int o = 0; o < 2; o++) {
		struct bprof_object obj = { 0 };
		uint32_t idx;
		obj.path = hstr(r, 8192);
		obj.flags = (u8(r) & 1) ? BPROF_OBJ_DELETED : 0;
		if (o == 1) { /* a build-id nothing provides: --missing-buildids lists it */
			obj.flags |= BPROF_OBJ_HAS_BUILD_ID;
			obj.build_id_len = 20;
			for (int b = 0; b < 20; b++)
				obj.build_id[b] = u8(r);
		}
		add(bprof_recording_add_object(rec, &obj, &idx));
	}

	/* processes: two file mappings and one JIT region with a perf map */
	for (size_t p = 0; p < nproc; p++) {
		struct bprof_process proc = { .pid = 100 + (uint32_t)p, .ns_pid = 100 + (uint32_t)p,
					      .exec_id = 1, .nr_mappings = 3 };
		char *c = hstr(r, 15);
		size_t plen = 0, pcap = 256;
		char *pm = malloc(pcap);
		size_t nent = u8(r) % 8;

		strncpy(proc.comm, c, BPROF_COMM_LEN - 1);
		free(c);
		proc.mappings = calloc(3, sizeof(*proc.mappings));
		if (!proc.mappings || !pm)
			abort();
		proc.mappings[0] = (struct bprof_mapping){ OBJ0, OBJ0 + 0x100000, 0, 0, BPROF_MAP_READ, 0 };
		proc.mappings[1] = (struct bprof_mapping){ JIT, JIT + 0x100000, 0, BPROF_NO_OBJECT,
							   BPROF_MAP_ANON | BPROF_MAP_READ, 0 };
		proc.mappings[2] = (struct bprof_mapping){ OBJ1, OBJ1 + 0x100000, 0x1000, 1, BPROF_MAP_READ, 0 };
		for (size_t e = 0; e <= nent; e++) {
			/* entry e covers JIT + e*0x100; the last one is raw garbage */
			char *name = hstr(r, 4096);
			size_t need = strlen(name) + 64;
			if (plen + need >= pcap) {
				pcap = (plen + need) * 2;
				pm = realloc(pm, pcap);
				if (!pm)
					abort();
			}
			if (e < nent)
				plen += (size_t)sprintf(pm + plen, "%llx 100 %s\n",
							(unsigned long long)(JIT + e * 0x100), name);
			else
				plen += (size_t)sprintf(pm + plen, "%s", name);
			free(name);
		}
		if (plen) {
			proc.perf_map = pm;
			proc.perf_map_len = plen;
		} else {
			free(pm);
		}
		add(bprof_recording_add_process(rec, &proc));
	}

	/* user stacks 0..nstacks-1 over the mappings; kernel stacks 1000+i */
	for (size_t s = 0; s < nstacks; s++) {
		struct bprof_stack st = { .id = (uint32_t)s, .nr_ips = 1 + u8(r) % 6 };
		st.ips = calloc(st.nr_ips, sizeof(uint64_t));
		if (!st.ips)
			abort();
		for (uint32_t i = 0; i < st.nr_ips; i++) {
			uint8_t b = u8(r), o = u8(r);
			static const uint64_t base[4] = { OBJ0, OBJ1, JIT, 0x1000 };
			/* JIT addresses fall in one of the first 8 perf map entries */
			st.ips[i] = base[b % 4] + (b % 4 == 2 ? (uint64_t)(o % 8) * 0x100 + (o >> 3)
							    : (uint64_t)o * 0x10) + 1;
		}
		add(bprof_recording_add_stack(rec, &st));
	}
	for (size_t i = 0; i < nrows; i++) {
		struct bprof_stack st = { .id = 1000 + (uint32_t)i, .nr_ips = 3 };
		st.ips = calloc(3, sizeof(uint64_t));
		if (!st.ips)
			abort();
		st.ips[0] = KBASE + i * 0x1000;              /* the row's own leaf */
		st.ips[1] = MODBASE + 0x10 + u8(r);          /* module 0, unnamed */
		st.ips[2] = MODBASE + 0x200000 + 0x20;       /* module 1, unnamed */
		add(bprof_recording_add_stack(rec, &st));
	}

	/* count rows: distinct by their kernel leaf; then exact duplicates */
	size_t ndup = u8(r) % (nrows + 1);
	struct bprof_count *rows = calloc(nrows, sizeof(*rows));
	if (!rows)
		abort();
	memset(ex, 0, sizeof(*ex));
	ex->rows = nrows;
	for (size_t i = 0; i < nrows; i++) {
		struct bprof_count *c = &rows[i];
		uint8_t us = u8(r);
		char *comm = hstr(r, 15);

		c->pid = 100 + (uint32_t)(i % nproc);
		c->exec_id = 1;
		c->user_stack_id = us < 200 ? (int32_t)(us % nstacks) : us < 230 ? -EFAULT : -ENOMEM;
		c->kernel_stack_id = 1000 + (int32_t)i;
		c->kernel_ip = KBASE + i * 0x1000;
		c->count = 1 + u8(r);
		strncpy(c->comm, comm, BPROF_COMM_LEN - 1);
		free(comm);
		add(bprof_recording_add_count(rec, c));
		ex->count[i] += c->count;
		ex->total += c->count;
	}
	for (size_t i = 0; i < ndup; i++) {
		add(bprof_recording_add_count(rec, &rows[i]));
		ex->count[i] += rows[i].count;
		ex->total += rows[i].count;
	}
	free(rows);
	return rec;
}

/* The row a folded line belongs to: its last frame is "k<i>_...". */
static __attribute__((unused)) void check_rows(const char *buf, size_t len, const struct expect *ex, const char *what)
{
	bool seen[MAXROWS] = { 0 };
	size_t lines = 0;

	for (size_t s = 0; s < len;) {
		const char *nl = memchr(buf + s, '\n', len - s);
		size_t e = (size_t)(nl - buf);
		size_t sp = e;
		while (sp > s && buf[sp - 1] != ' ')
			sp--;
		uint64_t count = strtoull(buf + sp, NULL, 10);
		size_t f = sp - 1;
		while (f > s && buf[f - 1] != ';')
			f--;
		char *end;
		if (buf[f] != 'k' || buf[f + 1] < '0' || buf[f + 1] > '9')
			fz_die(what, buf, len, f);
		unsigned long i = strtoul(buf + f + 1, &end, 10);
		if (*end != '_' || i >= ex->rows)
			fz_die("last frame names no row", buf, len, f);
		if (seen[i])
			fz_die("a row printed on two lines (stacks not merged)", buf, len, s);
		seen[i] = true;
		if (count != ex->count[i]) {
			fprintf(stderr, "row %lu: count %llu, expected %llu\n", i,
				(unsigned long long)count, (unsigned long long)ex->count[i]);
			fz_die("wrong count for a row (duplicates not merged?)", buf, len, s);
		}
		lines++;
		s = e + 1;
	}
	if (lines != ex->rows) {
		fprintf(stderr, "%zu lines for %zu distinct stacks\n", lines, ex->rows);
		fz_die("line count differs from distinct stacks", buf, len, 0);
	}
}

#ifndef FUZZ_FOLDED_LIB /* fuzz_exports.c reuses the builder above */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* long names: up to 20 KiB per input in all (still past PATH_MAX and
	 * every fixed buffer of the writers), to keep runs fast */
	struct rd r = { data, size, 20 << 10 };
	struct expect ex;
	struct bprof_error err;
	struct rep_input in;
	char errbuf[512];
	struct bprof_recording *rec = build(&r, &ex);

	if (bprof_recording_validate(rec, &err) != 0) {
		/* the builder above only makes valid recordings */
		fprintf(stderr, "validate: %s\n", err.message);
		abort();
	}
	struct bsym_ctx *sym = fz_sym(1);
	if (rep_input_adopt(&in, sym, rec, "fuzz.bprof", errbuf, sizeof(errbuf)) != 0) {
		fprintf(stderr, "adopt: %s\n", errbuf);
		abort();
	}
	const struct rep_config cfgs[] = {
		{ .mode = REP_FOLDED },
		{ .mode = REP_FOLDED, .annotate = true, .delimited = true },
		{ .mode = REP_FOLDED, .addresses = true },
		{ .mode = REP_FOLDED, .kernel_only = true, .annotate = true },
		{ .mode = REP_FOLDED, .user_only = true, .addresses = true },
		{ .mode = REP_MULTILINE, .annotate = true, .delimited = true, .addresses = true },
	};
	struct rep_agg *agg[6] = { 0 };
	struct fz_out o;

	for (size_t i = 0; i < 6; i++) {
		struct rep_stats st = { 0 };
		uint64_t sum = 0;

		if (rep_agg_create(&agg[i]) || rep_agg_add_input(agg[i], &cfgs[i], sym, &in, &st))
			abort();
		if (rep_print(fz_open(&o), agg[i], &cfgs[i]) != 0)
			abort();
		fz_close(&o);
		if (getenv("FUZZ_FOLDED_PRINT")) /* debugging: show what is checked */
			fwrite(o.buf, 1, o.len, stderr);
		if (cfgs[i].mode == REP_FOLDED) {
			fz_check_folded(o.buf, o.len, 1, &sum);
			if (sum != ex.total || st.samples != ex.total)
				fz_die("counts do not add up to the samples", o.buf, o.len, 0);
			if (!cfgs[i].user_only) /* -U drops the distinguishing leaf */
				check_rows(o.buf, o.len, &ex, "last frame is not a row's kernel leaf");
		} else {
			fz_check_text(o.buf, o.len);
		}
		free(o.buf);
	}
	if (rep_print_diff(fz_open(&o), agg[0], agg[1], 1) != 0)
		abort();
	fz_close(&o);
	fz_check_folded(o.buf, o.len, 2, NULL);
	free(o.buf);
	for (size_t i = 0; i < 6; i++)
		rep_agg_destroy(agg[i]);
	rep_input_close(&in);
	bsym_destroy(sym);
	return 0;
}
#endif
