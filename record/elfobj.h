/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elfobj.h - what the runtimes' recorders (python/, v8/, jvm/) read of an
 * object the manifest opened: its PT_LOAD segments (file offset <-> vaddr,
 * the load bias of a mapping), bytes at a vaddr, and the symbols whose
 * names they look for.  The symbol scan is the costly part: most objects
 * hold no runtime, and a string table without the name a runtime must
 * have rules the object out before any symbol is read (libLLVM's 30,000
 * dynamic symbols took three scans of 1.4-6.1 ms each, at every process
 * image that maps it).
 */
#ifndef BPROF_RECORD_ELFOBJ_H
#define BPROF_RECORD_ELFOBJ_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELFOBJ_MAX_LOADS 16

struct elfobj_loads {
	uint32_t nr;
	struct elfobj_load {
		uint64_t offset, vaddr, filesz;
		bool exec;
	} l[ELFOBJ_MAX_LOADS];
};

/* elf's PT_LOAD segments (the first ELFOBJ_MAX_LOADS). */
void elfobj_loads_read(Elf *elf, struct elfobj_loads *out);

/*
 * The load bias (address - vaddr) of a mapping at start of file offset
 * off: the executable segment holding off first, else any.  lld (and
 * BOLT) may start the code segment in the page where the read-only one
 * ends, at another vaddr - offset: the first page of the code's mapping is
 * then in both segments' file ranges, and the read-only one's bias would
 * be off by a page (seen: rustc's libLLVM and librustc_driver, every table
 * lookup a page away, 6 % of rustc's stacks complete).
 */
bool elfobj_loads_bias(const struct elfobj_loads *ls, uint64_t start, uint64_t off, uint64_t *bias);

/* The file offset of vaddr, within a segment's file bytes. */
bool elfobj_loads_offset(const struct elfobj_loads *ls, uint64_t vaddr, uint64_t *off);

/* The len bytes at vaddr, from the allocated section that holds them: 1
 * when read, 0 when they are in .bss (dst zeroed), -1 when no section
 * holds them or they cannot be read. */
int elfobj_read_vaddr(Elf *elf, uint64_t vaddr, void *dst, size_t len);

/* Called for each defined symbol (a section, a non-zero value). */
typedef void (*elfobj_sym_fn)(const char *name, const GElf_Sym *sym, void *ctx);

/*
 * The defined symbols of elf's sections of type (SHT_DYNSYM, SHT_SYMTAB)
 * whose string table holds needle somewhere (NULL: every one), given to
 * fn.  A name that begins with needle is in its table: with none there,
 * the symbols are not read.  false when no such section was read.
 */
bool elfobj_symbols(Elf *elf, Elf64_Word type, const char *needle, elfobj_sym_fn fn, void *ctx);

#endif
