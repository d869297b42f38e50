// SPDX-License-Identifier: Apache-2.0
/*
 * elfobj.c - see elfobj.h.  Every byte is the file's: section bounds are
 * checked against the data libelf gives, never trusted.
 */
#define _GNU_SOURCE
#include <string.h>

#include "elfobj.h"

void elfobj_loads_read(Elf *elf, struct elfobj_loads *out)
{
	size_t nph;

	out->nr = 0;
	if (elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph && out->nr < ELFOBJ_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->l[out->nr++] = (struct elfobj_load){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
			.exec = ph.p_flags & PF_X,
		};
	}
}

bool elfobj_loads_bias(const struct elfobj_loads *ls, uint64_t start, uint64_t off, uint64_t *bias)
{
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < ls->nr; i++) {
			const struct elfobj_load *l = &ls->l[i];
			uint64_t first = l->offset & ~0xfffULL;

			if ((pass == 0) != l->exec)
				continue;
			if (off >= first && off < l->offset + l->filesz) {
				*bias = start - off + l->offset - l->vaddr;
				return true;
			}
		}
	return false;
}

bool elfobj_loads_offset(const struct elfobj_loads *ls, uint64_t vaddr, uint64_t *off)
{
	for (uint32_t i = 0; i < ls->nr; i++) {
		const struct elfobj_load *l = &ls->l[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return true;
		}
	}
	return false;
}

int elfobj_read_vaddr(Elf *elf, uint64_t vaddr, void *dst, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr >= sh.sh_size || sh.sh_size - (vaddr - sh.sh_addr) < len)
			continue;
		if (sh.sh_type == SHT_NOBITS) {
			memset(dst, 0, len);
			return 0;
		}
		if (sh.sh_type != SHT_PROGBITS)
			return -1;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return -1;
		memcpy(dst, (const char *)d->d_buf + (vaddr - sh.sh_addr), len);
		return 1;
	}
	return -1;
}

/* Whether string table section strndx holds needle. */
static bool strings_hold(Elf *elf, size_t strndx, const char *needle)
{
	Elf_Scn *scn = elf_getscn(elf, strndx);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	return d && d->d_buf && memmem(d->d_buf, d->d_size, needle, strlen(needle));
}

bool elfobj_symbols(Elf *elf, Elf64_Word type, const char *needle, elfobj_sym_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;
	bool read = false;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		if (needle && !strings_hold(elf, sh.sh_link, needle))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		read = true;
		for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name)
				fn(name, &s, ctx);
		}
	}
	return read;
}
