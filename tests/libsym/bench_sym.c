/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sym - symbolize N random .text addresses of a binary with libsym
 * and report microseconds per address; with --tools, run addr2line,
 * llvm-symbolizer-14 and eu-addr2line on the same addresses.
 *
 *   bench_sym BINARY [N] [--tools [--no-eu]] [--seed S]
 *
 * Built, not run by ctest.  Times include opening the file and building
 * the indexes (as prof-report pays them).
 */
#define _GNU_SOURCE
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bsym.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double cpu_children(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double cpu_self(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time is what we compare: the machine may be shared, wall time is
 * printed for reference. */
static double run_tool(const char *what, const char *cmd, size_t n)
{
	double t0 = now(), c0 = cpu_children();
	int rc = system(cmd);
	double dt = now() - t0, ct = cpu_children() - c0;
	if (rc != 0) {
		fprintf(stderr, "%s: exit status %d\n", what, rc);
		return -1;
	}
	printf("%-16s %10.2f us/address CPU  (cpu %.3f s, wall %.3f s)\n", what,
	       ct * 1e6 / (double)n, ct, dt);
	return ct;
}

int main(int argc, char **argv)
{
	const char *bin = NULL;
	size_t n = 1000;
	bool tools = false, eu = true;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tools"))
			tools = true;
		else if (!strcmp(argv[i], "--no-eu"))
			eu = false;
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0) | 1;
		else if (!bin)
			bin = argv[i];
		else
			n = strtoul(argv[i], NULL, 0);
	}
	if (!bin || n == 0) {
		fprintf(stderr, "usage: bench_sym BINARY [N] [--tools] [--seed S]\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	int fd = open(bin, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!e) {
		fprintf(stderr, "%s: not an ELF file\n", bin);
		return 1;
	}
	const void *bidp = NULL;
	ssize_t bidn = dwelf_elf_gnu_build_id(e, &bidp);
	uint8_t bid[64];
	if (bidn <= 0 || bidn > 64) {
		fprintf(stderr, "%s: no build-id\n", bin);
		return 1;
	}
	memcpy(bid, bidp, (size_t)bidn);
	size_t shstr;
	elf_getshdrstrndx(e, &shstr);
	uint64_t tlo = 0, tsz = 0, toff = 0;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		const char *nm = elf_strptr(e, shstr, sh.sh_name);
		if (nm && !strcmp(nm, ".text")) {
			tlo = sh.sh_addr;
			tsz = sh.sh_size;
			toff = sh.sh_offset;
		}
	}
	elf_end(e);
	close(fd);
	if (!tsz) {
		fprintf(stderr, "%s: no .text\n", bin);
		return 1;
	}
	uint64_t *addr = malloc(n * sizeof(*addr));
	for (size_t i = 0; i < n; i++)
		addr[i] = tlo + rnd(&seed) % tsz;

	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	if (bsym_create(&ctx, &o))
		return 1;
	struct bsym_object_desc d = { .sz = sizeof(d), .path = bin, .build_id = bid,
				      .build_id_len = (size_t)bidn };
	uint32_t id;
	bsym_object_register(ctx, &d, &id);
	double t0 = now(), c0 = cpu_self();
	size_t named = 0, frames = 0;
	for (size_t i = 0; i < n; i++) {
		const struct bsym_result *r;
		if (bsym_symbolize_offset(ctx, id, addr[i] - tlo + toff, &r) == 0 && r->nr_frames) {
			named++;
			frames += r->nr_frames;
		}
	}
	double dt = now() - t0, ct = cpu_self() - c0;
	printf("%s: %zu addresses in .text (%#" PRIx64 " bytes)\n", bin, n, tsz);
	printf("%-16s %10.2f us/address CPU  (cpu %.3f s, wall %.3f s; %zu named, %.2f frames/address)\n",
	       "bsym", ct * 1e6 / (double)n, ct, dt, named,
	       named ? (double)frames / (double)named : 0.0);
	bsym_destroy(ctx);

	if (tools) {
		char tmp[] = "/tmp/bench_sym-XXXXXX";
		int tfd = mkstemp(tmp);
		FILE *f = fdopen(tfd, "w");
		for (size_t i = 0; i < n; i++)
			fprintf(f, "0x%" PRIx64 "\n", addr[i]);
		fclose(f);
		char *cmd;
		if (asprintf(&cmd, "addr2line -f -i -C -e '%s' < %s > /dev/null", bin, tmp) > 0) {
			run_tool("addr2line", cmd, n);
			free(cmd);
		}
		if (asprintf(&cmd, "llvm-symbolizer-14 -f -i -C --obj='%s' < %s > /dev/null", bin,
			     tmp) > 0) {
			run_tool("llvm-symbolizer", cmd, n);
			free(cmd);
		}
		if (eu && asprintf(&cmd, "eu-addr2line -f -i -C -e '%s' < %s > /dev/null", bin, tmp) > 0) {
			run_tool("eu-addr2line", cmd, n);
			free(cmd);
		}
		unlink(tmp);
	}
	free(addr);
	return 0;
}
