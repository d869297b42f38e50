// SPDX-License-Identifier: Apache-2.0
/*
 * record/elfobj.c: the symbols, bytes and segments the runtimes' recorders
 * read, on this test's own executable (whose globals it knows), on
 * Debian's python3.11 and libc, and on bytes that are no ELF file.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfobj.h"

/* what the test looks for in its own file: one in .data, one in .bss */
int elfobj_test_data = 0x12345678;
int elfobj_test_bss;

static Elf *open_elf(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(*fd >= 0, "%s: %m", path);
	Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);

	cr_assert(elf, "%s: %s", path, elf_errmsg(-1));
	return elf;
}

struct found {
	const char *want;
	uint64_t value;
	size_t calls;
};

static void find(const char *name, const GElf_Sym *s, void *ctx)
{
	struct found *f = ctx;

	f->calls++;
	if (f->want && !strcmp(name, f->want))
		f->value = s->st_value;
}

Test(elfobj, own_globals_read_from_the_file)
{
	int fd;
	Elf *elf = open_elf("/proc/self/exe", &fd);
	struct found d = { .want = "elfobj_test_data" }, b = { .want = "elfobj_test_bss" };
	int v = -1;

	cr_assert(elfobj_symbols(elf, SHT_SYMTAB, "elfobj_test_", find, &d));
	elfobj_symbols(elf, SHT_SYMTAB, "elfobj_test_", find, &b);
	cr_assert_neq(d.value, 0);
	cr_assert_neq(b.value, 0);
	cr_assert_eq(elfobj_read_vaddr(elf, d.value, &v, sizeof(v)), 1);
	cr_assert_eq(v, 0x12345678);
	v = -1;
	cr_assert_eq(elfobj_read_vaddr(elf, b.value, &v, sizeof(v)), 0, ".bss reads as zeros");
	cr_assert_eq(v, 0);
	cr_assert_eq(elfobj_read_vaddr(elf, 0x10, &v, sizeof(v)), -1, "no section there");
	elf_end(elf);
	close(fd);
}

/* The bias of this executable's code mapping, from /proc/self/maps, is
 * where its symbols are in memory. */
Test(elfobj, own_code_mapping_bias)
{
	int fd;
	Elf *elf = open_elf("/proc/self/exe", &fd);
	struct elfobj_loads ls;
	struct found f = { .want = "elfobj_test_data" };
	char line[512];
	uint64_t bias = 0, off;
	bool got = false;
	FILE *maps = fopen("/proc/self/maps", "r");

	elfobj_loads_read(elf, &ls);
	cr_assert_geq(ls.nr, 2);
	cr_assert(maps);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end, offset;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &offset) == 4 &&
		    perms[2] == 'x' && strstr(line, "elfobj")) {
			got = elfobj_loads_bias(&ls, start, offset, &bias);
			break;
		}
	}
	fclose(maps);
	cr_assert(got, "no executable mapping of the test found");
	elfobj_symbols(elf, SHT_SYMTAB, "elfobj_test_", find, &f);
	cr_assert_eq(f.value + bias, (uint64_t)(uintptr_t)&elfobj_test_data);
	cr_assert(elfobj_loads_offset(&ls, f.value, &off));
	cr_assert(!elfobj_loads_offset(&ls, 1ULL << 60, &off));
	elf_end(elf);
	close(fd);
}

/* A string table without the name: not one symbol read. */
Test(elfobj, a_needle_not_in_the_strings_reads_nothing)
{
	int fd;
	Elf *elf = open_elf("/usr/lib/x86_64-linux-gnu/libc.so.6", &fd);
	struct found f = { 0 };

	cr_assert(!elfobj_symbols(elf, SHT_DYNSYM, "_PyEval_EvalFrameDefault", find, &f));
	cr_assert_eq(f.calls, 0);
	cr_assert(elfobj_symbols(elf, SHT_DYNSYM, NULL, find, &f));
	cr_assert_gt(f.calls, 1000, "libc's dynamic symbols (%zu)", f.calls);
	elf_end(elf);
	close(fd);
}

Test(elfobj, debian_python_exports_its_eval_loop)
{
	int fd;
	Elf *elf = open_elf("/usr/bin/python3.11", &fd);
	struct found f = { .want = "_PyEval_EvalFrameDefault" };

	cr_assert(elfobj_symbols(elf, SHT_DYNSYM, "_PyEval_EvalFrameDefault", find, &f));
	cr_assert_neq(f.value, 0);
	elf_end(elf);
	close(fd);
}

/* Bytes that are not an ELF file: nothing found, nothing read. */
Test(elfobj, not_an_elf_file)
{
	char junk[4096];
	struct elfobj_loads ls;
	struct found f = { 0 };
	int v;

	memset(junk, 0x7f, sizeof(junk));
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory(junk, sizeof(junk));

	cr_assert(elf);
	elfobj_loads_read(elf, &ls);
	cr_assert_eq(ls.nr, 0);
	cr_assert(!elfobj_symbols(elf, SHT_DYNSYM, NULL, find, &f));
	cr_assert_eq(elfobj_read_vaddr(elf, 0, &v, sizeof(v)), -1);
	elf_end(elf);
}
