/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the report fuzz targets: run prof-report's writers into memory
 * and check what every output must satisfy whatever the input:
 *  - valid UTF-8 (no overlongs, surrogates or code points above U+10FFFF);
 *  - no control bytes (< 0x20, 0x7f) except the newlines that end records;
 *  - folded: every line is "<frames> <count>" (diff: "<frames> <n> <n>").
 * A violation aborts (libFuzzer reports it as a crash with the input).
 */
#ifndef FUZZ_REPORT_COMMON_H
#define FUZZ_REPORT_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void fz_die(const char *what, const char *buf, size_t len, size_t at)
{
	size_t from = at > 80 ? at - 80 : 0, to = at + 80 < len ? at + 80 : len;

	fprintf(stderr, "INVARIANT VIOLATED: %s at byte %zu of %zu; context:\n", what, at, len);
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c >= 0x20 && c < 0x7f)
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fputc('\n', stderr);
	abort();
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t fz_utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	if (len == 4 && (cp < 0x10000 || cp > 0x10ffff))
		return 0;
	return len;
}

/* Text checks common to all outputs. */
static __attribute__((unused)) void fz_check_text(const char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)buf;

	for (size_t i = 0; i < len;) {
		if (p[i] == '\n') {
			i++;
			continue;
		}
		if (p[i] < 0x20 || p[i] == 0x7f)
			fz_die("control byte in output", buf, len, i);
		size_t n = fz_utf8_len(p + i, len - i);
		if (!n)
			fz_die("invalid UTF-8 in output", buf, len, i);
		i += n;
	}
}

/* Folded (numbers = 1) or diff (numbers = 2) lines; returns the number of
 * lines and, when sum is given, adds the last number of each line to it. */
static __attribute__((unused)) size_t fz_check_folded(const char *buf, size_t len, int numbers, uint64_t *sum)
{
	size_t lines = 0;

	fz_check_text(buf, len);
	if (len && buf[len - 1] != '\n')
		fz_die("folded output does not end with a newline", buf, len, len - 1);
	for (size_t s = 0; s < len;) {
		const char *nl = memchr(buf + s, '\n', len - s);
		size_t e = (size_t)(nl - buf), q = e;
		uint64_t last = 0;

		for (int k = 0; k < numbers; k++) {
			size_t d = q;
			uint64_t v = 0, mul = 1;
			while (d > s && buf[d - 1] >= '0' && buf[d - 1] <= '9') {
				v += (uint64_t)(buf[d - 1] - '0') * mul;
				mul *= 10;
				d--;
			}
			if (d == q || d == s || buf[d - 1] != ' ')
				fz_die("folded line does not end with ' <count>'", buf, len, s);
			if (k == 0)
				last = v;
			q = d - 1;
		}
		/* An empty frames part (empty comm, no frames) is tolerated here:
		 * it only comes from files with an empty comm. */
		if (sum)
			*sum += last;
		lines++;
		s = e + 1;
	}
	return lines;
}

/* Run fn(f, arg) into a memory stream; returns the malloc'ed text. */
struct fz_out {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *fz_open(struct fz_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	if (!o->f)
		abort();
	return o->f;
}

static void fz_close(struct fz_out *o)
{
	if (fclose(o->f) != 0)
		abort();
	o->f = NULL;
}

/* A symbolization context that looks at nothing outside the process
 * except the recorded paths (sysroot "/"), unless no_files. */
static struct bsym_ctx *fz_sym(int no_files)
{
	static const char *const dirs[] = { "/nonexistent-bprof-fuzz-debug" };
	struct bsym_opts so = {
		.sz = sizeof(so),
		.debug_dirs = dirs,
		.nr_debug_dirs = 1,
		.flags = BSYM_NO_DEBUGINFOD | BSYM_NO_SYSTEM_DEBUG |
			 (no_files ? BSYM_NO_ORIGINAL_PATH : 0),
	};
	struct bsym_ctx *sym = NULL;

	if (bsym_create(&sym, &so) != 0)
		abort();
	return sym;
}

#endif
