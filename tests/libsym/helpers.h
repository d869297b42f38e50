/* SPDX-License-Identifier: Apache-2.0 */
/* helpers.h - fixture paths, build-ids, nm and reference symbolizers for
 * the libsym tests.  Expected values come from the tools at test time. */
#ifndef LIBSYM_TEST_HELPERS_H
#define LIBSYM_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bsym.h"

struct fx_bid {
	uint8_t b[64];
	size_t n;
};

static inline const char *fx(const char *rel)
{
	static char bufs[8][PATH_MAX];
	static int k;
	char *p = bufs[k++ % 8];
	const char *bin = getenv("BPROF_TEST_BIN");
	snprintf(p, PATH_MAX, "%s/fixtures/%s", bin ? bin : ".", rel);
	return p;
}

static inline struct fx_bid fx_build_id(const char *path)
{
	struct fx_bid r = { .n = 0 };
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	cr_assert(fd >= 0, "open %s", path);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(e, &p);
	cr_assert(n > 0 && n <= 64, "no build-id in %s", path);
	memcpy(r.b, p, (size_t)n);
	r.n = (size_t)n;
	elf_end(e);
	close(fd);
	return r;
}

/* Address and size of a symbol, from nm. */
static inline uint64_t fx_sym(const char *file, const char *name, uint64_t *size)
{
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "nm -S '%s'", file);
	FILE *f = popen(cmd, "r");
	cr_assert(f);
	char line[4096];
	uint64_t addr = 0, sz = 0;
	bool found = false;
	while (fgets(line, sizeof(line), f)) {
		char a[64], s[64], t[3000], n[3000];
		int k = sscanf(line, "%63s %63s %2999s %2999s", a, s, t, n);
		if (k == 4 && !strcmp(n, name)) {
			addr = strtoull(a, NULL, 16);
			sz = strtoull(s, NULL, 16);
			found = true;
		} else if (k == 3 && !strcmp(t, name)) { /* no size */
			addr = strtoull(a, NULL, 16);
			sz = 0;
			found = true;
		}
	}
	pclose(f);
	cr_assert(found, "%s not in %s", name, file);
	if (size)
		*size = sz;
	return addr;
}

static inline uint64_t fx_vaddr_to_off(const char *file, uint64_t vaddr)
{
	int fd = open(file, O_RDONLY);
	cr_assert(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n;
	elf_getphdrnum(e, &n);
	uint64_t off = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(e);
	close(fd);
	cr_assert(off != UINT64_MAX);
	return off;
}

struct fx_frame {
	char name[1024];
	char file[256]; /* basename */
	unsigned line;
};
struct fx_addr {
	uint64_t addr;
	int n;
	struct fx_frame f[16];
};

static inline const char *fx_base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

/* Run "CMD ADDR..." (eu-addr2line -a -f -i -C or llvm-symbolizer in GNU
 * style with -a) and parse its answer per address. */
static inline void fx_tool(const char *cmdprefix, const uint64_t *addrs, int n, struct fx_addr *out)
{
	size_t cap = strlen(cmdprefix) + (size_t)n * 24 + 16;
	char *cmd = malloc(cap);
	size_t len = (size_t)sprintf(cmd, "%s", cmdprefix);
	for (int i = 0; i < n; i++)
		len += (size_t)sprintf(cmd + len, " 0x%" PRIx64, addrs[i]);
	FILE *f = popen(cmd, "r");
	cr_assert(f, "%s", cmd);
	char line[4096];
	int cur = -1;
	bool want_name = true;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0x", 2) && want_name) {
			cur++;
			cr_assert(cur < n);
			out[cur].addr = strtoull(line, NULL, 16);
			out[cur].n = 0;
			continue;
		}
		cr_assert(cur >= 0);
		struct fx_addr *a = &out[cur];
		if (want_name) {
			if (a->n < 16) {
				char *in = strstr(line, " inlined at ");
				if (in)
					*in = '\0';
				snprintf(a->f[a->n].name, sizeof(a->f[0].name), "%.1000s", line);
			}
			want_name = false;
		} else {
			if (a->n < 16) {
				char *c = strchr(line, ':');
				if (c)
					*c = '\0';
				snprintf(a->f[a->n].file, sizeof(a->f[0].file), "%.250s", fx_base(line));
				a->f[a->n].line = c ? (unsigned)strtoul(c + 1, NULL, 10) : 0;
				a->n++;
			}
			want_name = true;
		}
	}
	pclose(f);
	free(cmd);
	cr_assert_eq(cur, n - 1, "tool answered %d of %d addresses", cur + 1, n);
}

/* Compare bsym's frames for one address with the tool's. */
static inline int fx_compare(const struct bsym_result *r, const struct fx_addr *t)
{
	if (t->n == 0 || !strcmp(t->f[0].name, "??"))
		return 0; /* the tool knows nothing: nothing to compare */
	cr_assert_eq(r->reason, BSYM_OK, "0x%" PRIx64 ": tool names %s, bsym: %s", t->addr,
		     t->f[0].name, bsym_reason_str(r->reason));
	cr_assert_eq((int)r->nr_frames, t->n, "0x%" PRIx64 ": %u frames, tool %d (%s)", t->addr,
		     r->nr_frames, t->n, t->f[0].name);
	for (int i = 0; i < t->n; i++) {
		const struct bsym_frame *f = &r->frames[i];
		cr_assert_str_eq(f->name, t->f[i].name, "0x%" PRIx64 " frame %d", t->addr, i);
		if (t->f[i].line) {
			cr_assert_str_eq(fx_base(f->file), t->f[i].file, "0x%" PRIx64 " frame %d file",
					 t->addr, i);
			cr_assert_eq(f->line, t->f[i].line, "0x%" PRIx64 " frame %d (%s) line %u vs %u",
				     t->addr, i, f->name, f->line, t->f[i].line);
		}
		cr_assert_eq(f->inlined, i + 1 < t->n);
		cr_assert_eq(f->kind, BSYM_FRAME_USER);
	}
	return t->n;
}

#endif
