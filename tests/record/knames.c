// SPDX-License-Identifier: Apache-2.0
/*
 * knames.c - record/knames (kernel addresses named in the kernel, by
 * bpf_snprintf's %pS) against a full read of /proc/kallsyms.
 *
 * The kallsyms snapshot of a recording must not depend on how it was
 * taken: for addresses spread over the kernel's text, the symbols kept by
 * kernel_collect_for() with the namer (two questions per address) and
 * without it (all of /proc/kallsyms read, then pruned) must be the same
 * addresses with the same names (or another name kallsyms gives that
 * address: aliases).  And %pS's answers are parsed strictly.
 * Needs root (a BPF syscall program); with CI=true a refusal fails.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel.h"
#include "knames.h"

Test(knames, parse)
{
	struct kernel_sym s;

	cr_assert(knames_parse("do_syscall_64+0x1a/0x80", 0xffffffff81001000ull, &s));
	cr_assert(s.found);
	cr_assert_str_eq(s.name, "do_syscall_64");
	cr_assert_eq(s.start, 0xffffffff81001000ull - 0x1a);
	cr_assert_eq(s.size, 0x80);
	cr_assert_str_eq(s.module, "");

	/* %#lx prints an offset of 0 as "0" */
	cr_assert(knames_parse("ext4_read+0/0x40 [ext4]", 0xffffffffc0001000ull, &s));
	cr_assert(s.found && s.start == 0xffffffffc0001000ull && s.size == 0x40);
	cr_assert_str_eq(s.module, "ext4");
	cr_assert_str_eq(s.name, "ext4_read");

	/* the name ends at the last '+' */
	cr_assert(knames_parse("a+b+0x1/0x2", 0x1001, &s));
	cr_assert_str_eq(s.name, "a+b");

	/* no symbol: the address itself */
	cr_assert(knames_parse("0xffffffffc0001234", 0xffffffffc0001234ull, &s));
	cr_assert_not(s.found);

	/* just past a BPF program (the kernel counts its end in it): no
	 * symbol, but an answer */
	s.found = true;
	cr_assert(knames_parse("bpf_prog_b927ae9f3e2a646e___loader.prog+0x2b03/0x2b03 [bpf]",
			       0xffffffffc002c46full, &s));
	cr_assert_not(s.found);
	cr_assert(knames_parse("name+0x2/0x2", 0x1000, &s));
	cr_assert_not(s.found);

	/* what is not one of those forms */
	static const char *bad[] = {
		"", "+0x1/0x2", "name", "name+0x1", "name+0x1/", "name+0x1/0x2 [", "name+0x1/0x2 [m",
		"name+0xg/0x2", "name+0x3/0x2", "name+0x1/0", "name+0x1/0x2x", "name+0x11111111111111111/0x2",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_not(knames_parse(bad[i], 0x1000, &s), "accepted \"%s\"", bad[i]);
	/* an offset beyond the address would start below 0 */
	cr_assert_not(knames_parse("x+0x2000/0x3000", 0x1000, &s));
}

struct ksym_line {
	uint64_t addr;
	char type;
	char name[128];
};

/* The text symbols of vmlinux, as /proc/kallsyms lists them (sorted). */
static struct ksym_line *read_text_syms(size_t *n)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	struct ksym_line *v = NULL;
	size_t cap = 0;
	char line[512];

	*n = 0;
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		struct ksym_line l = { 0 };

		if (strchr(line, '['))
			break; /* modules follow vmlinux */
		if (sscanf(line, "%lx %c %127s", &l.addr, &l.type, l.name) != 3)
			continue;
		if (l.type != 't' && l.type != 'T')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 65536;
			v = realloc(v, cap * sizeof(*v));
			cr_assert(v);
		}
		v[(*n)++] = l;
	}
	fclose(f);
	return v;
}

/* Whether kallsyms gives addr the name name (one of its aliases). */
static bool named(const struct ksym_line *v, size_t n, uint64_t addr, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].addr == addr && !strcmp(v[i].name, name))
			return true;
	return false;
}

static void kernel_free(struct bprof_kernel *k)
{
	free(k->release);
	for (uint32_t i = 0; i < k->nr_modules; i++)
		free(k->modules[i].name);
	free(k->modules);
	for (uint32_t i = 0; i < k->nr_ksyms; i++)
		free(k->ksyms[i].name);
	free(k->ksyms);
}

Test(knames, same_as_kallsyms)
{
	struct bprof_recording *rec = NULL;
	struct bprof_kernel a = { 0 }, b = { 0 };
	struct knames *kn = NULL;
	struct ksym_line *v;
	size_t n, picked = 0;
	bool hidden = false;
	int err;

	v = read_text_syms(&n);
	cr_assert_gt(n, 1000, "/proc/kallsyms lists %zu text symbols (hidden addresses?)", n);
	cr_assert_neq(v[0].addr, 0, "kernel addresses are hidden: run as root");
	err = knames_open(&kn);
	if (err && !getenv("CI"))
		cr_skip_test("cannot load the syscall program (%s): needs root and Linux 5.13", strerror(-err));
	cr_assert_eq(err, 0, "knames_open: %s", strerror(-err));
	cr_assert_eq(bprof_recording_create(&rec), 0);
	/* addresses inside symbols all over the text (not the last ones:
	 * what follows the text is data, which kallsyms does not name) */
	for (size_t i = 7; i + 100 < n; i += n / 400) {
		uint64_t span = v[i + 1].addr - v[i].addr;
		struct bprof_count c = { .pid = 1, .user_stack_id = -1, .kernel_stack_id = -1, .count = 1 };

		if (!span || v[i + 1].addr < v[i].addr)
			continue;
		c.kernel_ip = v[i].addr + (picked % 3 == 0 ? 0 : (picked % 3 == 1 ? span / 2 : span - 1));
		cr_assert_eq(bprof_recording_add_count(rec, &c), 0);
		picked++;
	}
	cr_assert_gt(picked, 300);

	struct kernel_namer namer = knames_namer(kn);

	cr_assert_eq(kernel_collect_for(&a, rec, true, false, NULL, &namer, &hidden), 0);
	cr_assert_not(hidden);
	cr_assert_eq(kernel_collect_for(&b, rec, true, false, NULL, NULL, &hidden), 0);
	cr_assert_not(hidden);
	cr_assert(a.flags & BPROF_KERNEL_KALLSYMS_PARTIAL);
	cr_assert_eq(a.stext, b.stext);
	cr_assert_eq(a.nr_ksyms, b.nr_ksyms, "named in the kernel: %u symbols; from /proc/kallsyms: %u",
		     a.nr_ksyms, b.nr_ksyms);
	for (uint32_t i = 0; i < a.nr_ksyms; i++) {
		cr_assert_eq(a.ksyms[i].addr, b.ksyms[i].addr, "symbol %u: 0x%lx (%s) vs 0x%lx (%s)", i,
			     a.ksyms[i].addr, a.ksyms[i].name, b.ksyms[i].addr, b.ksyms[i].name);
		cr_assert(!strcmp(a.ksyms[i].name, b.ksyms[i].name) ||
				  named(v, n, a.ksyms[i].addr, a.ksyms[i].name),
			  "symbol %u at 0x%lx: %s, kallsyms says %s", i, a.ksyms[i].addr, a.ksyms[i].name,
			  b.ksyms[i].name);
		cr_assert_eq(a.ksyms[i].module_index, b.ksyms[i].module_index);
	}
	bprof_recording_free(rec);
	kernel_free(&a);
	kernel_free(&b);
	knames_close(kn);
	free(v);
}
