// SPDX-License-Identifier: Apache-2.0
/*
 * bench_symaddr BINARY BUILD_ID_HEX OFFSETS [OUT]
 *
 * Symbolize every file offset listed in OFFSETS (hex, one per line) in
 * BINARY with libsym (bsym.h), inlined frames expanded and names demangled,
 * as prof-report does; optionally write "function;inlined..." per address
 * to OUT.  Reads the same address set the benchmark feeds addr2line,
 * llvm-symbolizer and eu-addr2line, so figures compare like for like (libsym's
 * own tests/libsym/bench_sym draws its own random .text addresses).
 * Prints: addresses, seconds inside libsym, named addresses, frames.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bsym.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s BINARY BUILD_ID_HEX OFFSETS [OUT]\n", argv[0]);
		return 2;
	}
	const char *bin = argv[1], *hex = argv[2];
	uint8_t bid[64];
	size_t blen = strlen(hex) / 2;

	if (blen == 0 || blen > sizeof(bid)) {
		fprintf(stderr, "bench_symaddr: bad build-id\n");
		return 2;
	}
	for (size_t i = 0; i < blen; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "bench_symaddr: bad build-id\n");
			return 2;
		}
		bid[i] = (uint8_t)v;
	}
	FILE *f = fopen(argv[3], "r");
	if (!f) {
		perror(argv[3]);
		return 1;
	}
	size_t n = 0, cap = 0;
	uint64_t *offs = NULL;
	char line[64];
	while (fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t v = strtoull(line, &end, 16);

		if (end == line)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			offs = realloc(offs, cap * sizeof(*offs));
			if (!offs) {
				perror("realloc");
				return 1;
			}
		}
		offs[n++] = v;
	}
	fclose(f);
	FILE *out = NULL;
	if (argc > 4 && !(out = fopen(argv[4], "w"))) {
		perror(argv[4]);
		return 1;
	}

	double t0 = now_s();
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	if (bsym_create(&ctx, &o)) {
		fprintf(stderr, "bench_symaddr: bsym_create failed\n");
		return 1;
	}
	struct bsym_object_desc d = { .sz = sizeof(d), .path = bin, .build_id = bid,
				      .build_id_len = blen };
	uint32_t id;
	if (bsym_object_register(ctx, &d, &id)) {
		fprintf(stderr, "bench_symaddr: cannot register %s\n", bin);
		return 1;
	}
	size_t named = 0, frames = 0;
	for (size_t i = 0; i < n; i++) {
		const struct bsym_result *r;

		if (bsym_symbolize_offset(ctx, id, offs[i], &r) == 0 && r->nr_frames) {
			named++;
			frames += r->nr_frames;
			if (out) {
				for (uint32_t j = 0; j < r->nr_frames; j++)
					fprintf(out, "%s%s", j ? ";" : "", r->frames[j].name);
				fputc('\n', out);
			}
		} else if (out) {
			fputs("??\n", out);
		}
	}
	double dt = now_s() - t0;
	bsym_destroy(ctx);
	if (out)
		fclose(out);
	printf("%zu %.6f %zu %zu\n", n, dt, named, frames);
	free(offs);
	return 0;
}
